#!/usr/bin/env python3
"""Helpers of scripts/bmp-gobgp-tests.sh and scripts/bmp-frr-try.sh: polls of `ipfib follow`'s
lookup socket and log, and the comparison of its saved table with GoBGP's Adj-RIB-In (or FRR's
`received-routes`). Every wait has a deadline and polls
every 10 ms."""

import ipaddress
import json
import socket
import sys
import time


def ask(path, addr):
    """One lookup through the socket (`--socket-format hop`): the next-hop address or `-`."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(path)
        s.sendall(addr.encode() + b"\n")
        s.shutdown(socket.SHUT_WR)
        out = b""
        while not out.endswith(b"\n"):
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
    return out.decode().strip()


def matches(answer, expect):
    """`expect` is an answer, or `!ANSWER` for any other answer (`!-`: some route)."""
    return answer != expect[1:] if expect.startswith("!") else answer == expect


def wait_answer(path, addr, expect, budget, t0=None):
    t0 = float(t0) if t0 else time.time()
    while True:
        answer = ask(path, addr)
        elapsed = time.time() - t0
        if matches(answer, expect):
            print(f"  {addr} -> {answer} after {elapsed * 1000:.0f} ms")
            return 0
        if elapsed > float(budget):
            print(f"  {addr} -> {answer}, expected {expect}, after {elapsed:.2f} s")
            return 1
        time.sleep(0.01)


def wait_log(path, needle, budget):
    end = time.time() + float(budget)
    while time.time() < end:
        try:
            if needle in open(path).read():
                return 0
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    return 1


def hold(path, addr, log, lines_before, keep, gone_by):
    """Waits for a new `session ended` line in follow's log; from then the route must answer
    for `keep` s and be gone (`-`) before `gone_by` s. The line is seen up to a few hundred ms
    after the session ended on a loaded machine, so the lower bound allows 0.5 s."""
    end = time.time() + 30
    while time.time() < end:
        if open(log).read().count("session ended") > int(lines_before):
            break
        time.sleep(0.01)
    else:
        print("  B's BMP session did not end within 30 s")
        return 1
    t0 = time.time()
    while True:
        answer = ask(path, addr)
        t = time.time() - t0
        if answer == "-":
            ok = float(keep) - 0.5 <= t <= float(gone_by)
            print(f"  held routes gone {t:.2f} s after B's session ended")
            return 0 if ok else 1
        if t > float(gone_by):
            print(f"  held routes still there {t:.2f} s after B's session ended")
            return 1
        time.sleep(0.01)


def adj_in(path):
    """prefix -> next-hop address from `gobgp -j neighbor ADDR adj-in`, or from FRR's
    `show bgp ipv4|ipv6 unicast neighbors ADDR received-routes json` (`nextHop`, or
    `nextHopGlobal` for IPv6)."""
    data = json.load(open(path)) or {}
    out = {}
    if "receivedRoutes" in data or "bgpLocalRouterId" in data:
        for prefix, r in data.get("receivedRoutes", {}).items():
            nh = r.get("nextHop") or r.get("nextHopGlobal")
            out[ipaddress.ip_network(prefix)] = ipaddress.ip_address(nh) if nh else None
        return out
    for prefix, paths in data.items():
        for p in paths:
            nh = None
            for a in p.get("attrs", []):
                if a.get("type") in (3, 14) and "nexthop" in a:
                    nh = a["nexthop"]
            out[ipaddress.ip_network(prefix)] = ipaddress.ip_address(nh) if nh else None
    return out


def compare(fib_txt, hops_file, adj4, adj6):
    hops = {}
    for line in open(hops_file):
        n, addr = line.split()
        hops[int(n)] = ipaddress.ip_address(addr)
    fib = {}
    for line in open(fib_txt):
        if not line.strip() or line.startswith("#"):
            continue
        prefix, nh = line.split()
        fib[ipaddress.ip_network(prefix)] = hops.get(int(nh))
    want = adj_in(adj4)
    want.update(adj_in(adj6))
    v4 = sum(1 for p in want if p.version == 4)
    if fib == want and want:
        print(f"  {len(fib)} routes ({v4} IPv4, {len(fib) - v4} IPv6) equal, next hops included")
        return 0
    missing = [p for p in want if p not in fib][:3]
    extra = [p for p in fib if p not in want][:3]
    differ = [p for p in want if p in fib and fib[p] != want[p]][:3]
    print(f"  follow {len(fib)} routes, adj-in {len(want)}; missing {missing} extra {extra} "
          f"differ {[(p, fib[p], want[p]) for p in differ]}")
    return 1


def first_prefix_address(fib_txt, version):
    """An address only a most specific route of the saved table covers: the last address of
    the longest IPv4 (or IPv6) prefix."""
    best = None
    for line in open(fib_txt):
        if not line.strip() or line.startswith("#"):
            continue
        p = ipaddress.ip_network(line.split()[0])
        if p.version == int(version) and (best is None or p.prefixlen > best.prefixlen):
            best = p
    print(best[-1])
    return 0


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "ask":
        print(ask(*args))
        return 0
    return {
        "wait-answer": wait_answer,
        "wait-log": wait_log,
        "hold": hold,
        "compare": compare,
        "first-prefix-address": first_prefix_address,
    }[cmd](*args)


if __name__ == "__main__":
    sys.exit(main())
