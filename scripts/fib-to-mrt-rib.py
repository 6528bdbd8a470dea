#!/usr/bin/env python3
"""Writes an ipfib text FIB (`prefix/len next_hop_id` per line, gzip or plain, both families) as
an MRT TABLE_DUMP_V2 RIB (RFC 6396 §4.3) that `gobgp mrt inject` reads: a PEER_INDEX_TABLE with
one peer, then one record per prefix with ORIGIN IGP and AS_PATH [64512 + id % 1000]: an IPv4
prefix as a RIB_IPV4_UNICAST record with NEXT_HOP 10.(id >> 16).(id >> 8 & 255).(id & 255), an
IPv6 one as a RIB_IPV6_UNICAST record with an MP_REACH_NLRI whose next hop is 2001:db8:ffff::id
(written whole, AFI, SAFI and NLRI included, as RouteViews' RIBs write it). The FIB's prefixes
and next-hop classes, synthetic attributes. For scripts/bmp-bench.sh (a full table through
GoBGP).

Usage: fib-to-mrt-rib.py FIB OUT.mrt"""

import gzip
import ipaddress
import struct
import sys


def record(kind, subtype, body):
    return struct.pack(">IHHI", 0, kind, subtype, len(body)) + body


def attr(flags, code, value):
    return bytes([flags, code, len(value)]) + value


def main(src, out):
    opener = gzip.open if src.endswith(".gz") else open
    peer_table = struct.pack(">4sH", bytes([10, 0, 0, 1]), 0)  # collector id, no view name
    peer_table += struct.pack(">H", 1)
    peer_table += bytes([0x02]) + bytes([10, 0, 0, 2]) + bytes([192, 0, 2, 1])  # AS4, IPv4
    peer_table += struct.pack(">I", 64512)
    seq = 0
    with opener(src, "rt") as f, open(out, "wb") as w:
        w.write(record(13, 1, peer_table))
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            prefix, nh = line.split()
            net = ipaddress.ip_network(prefix)
            nh = int(nh)
            plen = net.prefixlen
            nlri = bytes([plen]) + net.network_address.packed[: (plen + 7) // 8]
            attrs = attr(0x40, 1, b"\x00")
            attrs += attr(0x40, 2, bytes([2, 1]) + struct.pack(">I", 64512 + nh % 1000))
            if net.version == 4:
                attrs += attr(0x40, 3, bytes([10, (nh >> 16) & 255, (nh >> 8) & 255, nh & 255]))
                subtype = 2
            else:
                hop = ipaddress.IPv6Address("2001:db8:ffff::") + (nh & 0xFFFFFFFF)
                attrs += attr(0x80, 14, struct.pack(">HBB", 2, 1, 16) + hop.packed + b"\x00" + nlri)
                subtype = 4
            body = struct.pack(">I", seq) + nlri + struct.pack(">H", 1)
            body += struct.pack(">HIH", 0, 0, len(attrs)) + attrs
            w.write(record(13, subtype, body))
            seq += 1
    print(f"{seq} prefixes written to {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
