# Summarise a raw BMP byte stream: per (peer type, peer flags) the RMs, v4/v6 announce/withdraw prefix counts, EoRs.
import struct, sys, collections
d = open(sys.argv[1], 'rb').read(); i = 0; types = collections.Counter(); per = collections.defaultdict(collections.Counter)
def nlri_count(b):
    n = j = 0
    while j < len(b): j += 1 + (b[j] + 7) // 8; n += 1
    return n
while i + 6 <= len(d):
    v, ln, ty = struct.unpack('!BIB', d[i:i+6]); m = d[i:i+ln]; i += ln; types[ty] += 1
    if ty != 0: continue
    k = (m[6], hex(m[7])); c = per[k]; c['rm'] += 1
    body = m[48+19:]; wl = struct.unpack('!H', body[:2])[0]; al = struct.unpack('!H', body[2+wl:4+wl])[0]
    attrs = body[4+wl:4+wl+al]; nl = body[4+wl+al:]
    c['v4_withdrawn'] += nlri_count(body[2:2+wl]); c['v4_announced'] += nlri_count(nl)
    j = 0; only_unreach_empty = None; codes = []
    while j < len(attrs):
        f, t = attrs[j], attrs[j+1]; h = 4 if f & 0x10 else 3
        L = struct.unpack('!H', attrs[j+2:j+4])[0] if f & 0x10 else attrs[j+2]; v_ = attrs[j+h:j+h+L]; codes.append(t)
        if t == 14:  # MP_REACH: afi(2) safi(1) nhlen(1) nh reserved(1) nlri
            nhl = v_[3]; c['mp_reach_prefixes'] += nlri_count(v_[5+nhl:])
        if t == 15: c['mp_unreach_prefixes'] += nlri_count(v_[3:]); only_unreach_empty = (len(v_) == 3)
        j += h + L
    if wl == 0 and not nl and (codes == [] or (codes == [15] and only_unreach_empty)): c['end_of_rib'] += 1
print('message types', dict(types))
for k, c in sorted(per.items()): print('peer_type,flags', k, dict(c))
