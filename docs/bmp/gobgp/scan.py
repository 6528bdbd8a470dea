import struct, sys, collections
d = open(sys.argv[1],'rb').read(); i = 0; c = collections.Counter(); flags = collections.Counter(); eor = []; n=0
ann = wd = mpr = mpu = 0; sizes=collections.Counter()
while i + 6 <= len(d):
    ver, ln, ty = struct.unpack('!BIB', d[i:i+6]); m = d[i:i+ln]
    if len(m) < ln: c['TRUNC'] += 1; break
    c[ty] += 1; n += 1
    if ty == 0:
        flags[(m[6], m[7])] += 1
        bgp = m[48:]; blen = struct.unpack('!H', bgp[16:18])[0]; body = bgp[19:blen]
        wl = struct.unpack('!H', body[0:2])[0]; al = struct.unpack('!H', body[2+wl:4+wl])[0]
        attrs = body[4+wl:4+wl+al]; nl = len(body)-4-wl-al
        j=0; codes=[]
        while j < len(attrs):
            f, t = attrs[j], attrs[j+1]
            L = struct.unpack('!H', attrs[j+2:j+4])[0] if f & 0x10 else attrs[j+2]
            codes.append(t); j += (4 if f & 0x10 else 3) + L
        if wl==0 and nl==0 and (codes==[] or codes==[15]): eor.append((n, codes))
        if wl: wd += 1
        if nl: ann += 1
        if 14 in codes: mpr += 1
        if 15 in codes and codes != [15]: mpu += 1
        if codes==[15] and not eor or (codes==[15] and eor[-1][0]!=n): mpu+=1
    i += ln
print('msgs', n, 'bytes', len(d), 'by type', dict(c)); print('RM (peer_type,flags)', dict(flags))
print('RM with v4 NLRI', ann, 'with v4 withdrawn', wd, 'with MP_REACH', mpr, 'MP_UNREACH', mpu); print('EoR at msg#', eor[:10], len(eor))
