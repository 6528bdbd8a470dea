import socket, struct, sys, time, json
out = open(sys.argv[1], 'wb'); log = open(sys.argv[2], 'w')
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', 11019)); s.listen(4)
names = {0:'RM',1:'Stats',2:'PeerDown',3:'PeerUp',4:'Init',5:'Term',6:'Mirror'}
while True:
    c, a = s.accept(); t0 = time.time()
    print(f"{t0:.3f} accept {a}", file=log, flush=True)
    buf = b''; counts = {}; first_rm = None; last_rm = None; total = 0
    while True:
        d = c.recv(1 << 16)
        if not d: break
        out.write(d); out.flush(); buf += d; total += len(d)
        while len(buf) >= 6:
            ver, ln, ty = struct.unpack('!BIB', buf[:6])
            if len(buf) < ln: break
            m = buf[:ln]; buf = buf[ln:]
            n = names.get(ty, str(ty)); counts[n] = counts.get(n, 0) + 1
            now = time.time()
            if ty == 0:
                first_rm = first_rm or now; last_rm = now
                bgp = m[48:]  # 6 common + 42 per-peer
                blen = struct.unpack('!H', bgp[16:18])[0]
                body = bgp[19:blen]
                wl = struct.unpack('!H', body[0:2])[0]; al = struct.unpack('!H', body[2+wl:4+wl])[0]
                nlri = len(body) - 4 - wl - al
                if wl == 0 and nlri == 0 and (al == 0 or (al <= 6 and body[4+1] == 15)):
                    print(f"{now:.3f} EoR flags={m[7]:#x} attrlen={al} rm#={counts['RM']}", file=log, flush=True)
            else:
                print(f"{now:.3f} {n} len={ln} peer_flags={m[7]:#x}" if ty in (0,1,2,3) else f"{now:.3f} {n} len={ln}", file=log, flush=True)
    print(f"{time.time():.3f} closed counts={json.dumps(counts)} bytes={total} first_rm={first_rm} last_rm={last_rm}", file=log, flush=True)
    c.close()
