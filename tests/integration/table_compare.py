#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Compare the kernel's whole table set with fibd's.

usage: table_compare.py NETNS FIBCTL SOCKET [MAXDIFF]

The kernel: `ip -d -j route show table all`, IPv4 and IPv6. fibd:
`fibctl show routes` (every table it mirrors, one route a line:
`TYPE PREFIX/LEN [table T] [tos T] metric M [nhid N] [nh [via GW]
[dev IF] w W]...`). Each route becomes a key (family, type, prefix,
table, tos, metric) and its paths (gateway, dev); both sides must hold
the same keys, each with the same paths (as a multiset: the kernel and
fibd both keep the kernel's order, but only the set is the route). A
route whose paths the kernel does not list (`nhid N` alone,
net.ipv4.nexthop_compat_mode=0) compares its nhid instead.

Left out on the kernel's side, as fibd does not mirror them
(daemon/nl.c, nl_route_kind): multicast and anycast routes, and cloned
ones. Prints each difference (at most MAXDIFF, default 20) and a
summary; exits 1 on any difference.
"""
import collections
import ipaddress
import json
import subprocess
import sys

TABLES = {"local": 255, "main": 254, "default": 253, "unspec": 0}
SKIP_TYPES = {"multicast", "anycast"}


def table_num(t):
    if t is None:
        return 254  # ip route omits main
    if isinstance(t, int):
        return t
    return TABLES[t] if t in TABLES else int(t)


def norm_prefix(dst, family):
    if dst == "default":
        return "0.0.0.0/0" if family == 4 else "::/0"
    return str(ipaddress.ip_network(dst if "/" in dst else dst + ("/32" if family == 4 else "/128"),
                                    strict=True))


def norm_gw(gw):
    return str(ipaddress.ip_address(gw)) if gw else None


def kernel_routes(ns):
    out = collections.defaultdict(list)
    for family in (4, 6):
        txt = subprocess.run(["ip", "-n", ns, "-%d" % family, "-d", "-j", "route", "show", "table",
                              "all"], check=True, capture_output=True, text=True).stdout
        for r in json.loads(txt or "[]"):
            typ = r.get("type", "unicast")
            if typ in SKIP_TYPES or "cloned" in r.get("flags", []):
                continue
            tos = r.get("tos", r.get("dsfield", "0"))
            tos = int(tos, 16) if isinstance(tos, str) and tos.startswith("0x") else int(tos or 0)
            key = (family, typ, norm_prefix(r["dst"], family), table_num(r.get("table")), tos,
                   int(r.get("metric", 0)))
            if "nexthops" in r:
                paths = [(norm_gw(n.get("gateway")), n.get("dev")) for n in r["nexthops"]]
            elif r.get("gateway") or r.get("dev"):
                paths = [(norm_gw(r.get("gateway")), r.get("dev"))]
            elif "nhid" in r:
                paths = ["nhid %s" % r["nhid"]]
            else:
                paths = []
            out[key].append(sorted(paths, key=str))
    return out


def fibd_routes(fibctl, sock):
    txt = subprocess.run([fibctl, "-s", sock, "show", "routes"], check=True, capture_output=True,
                         text=True).stdout
    out = collections.defaultdict(list)
    for line in txt.splitlines():
        w = line.split()
        if not w or "/" not in w[1]:
            continue
        typ, pfx = w[0], w[1]
        family = 6 if ":" in pfx else 4
        table, tos, metric, nhid, paths, cur = 254, 0, 0, None, [], None
        i = 2
        while i < len(w):
            k = w[i]
            if k == "table":
                table = int(w[i + 1]); i += 2
            elif k == "tos":
                tos = int(w[i + 1]); i += 2
            elif k == "metric":
                metric = int(w[i + 1]); i += 2
            elif k == "nhid":
                nhid = w[i + 1]; i += 2
            elif k == "nh":
                cur = [None, None]; paths.append(cur); i += 1
            elif k == "via":
                cur[0] = norm_gw(w[i + 1]); i += 2
            elif k == "dev":
                cur[1] = w[i + 1]; i += 2
            elif k == "w":
                i += 2
            else:
                raise SystemExit("fibctl show routes: unknown word %r in %r" % (k, line))
        key = (family, typ, norm_prefix(pfx, family), table, tos, metric)
        p = [tuple(x) for x in paths]
        out[key].append((sorted(p, key=str), nhid))
    return out


def main():
    ns, fibctl, sock = sys.argv[1:4]
    maxdiff = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    k, f = kernel_routes(ns), fibd_routes(fibctl, sock)
    diffs = []
    for key in sorted(set(k) | set(f), key=str):
        kr, fr = k.get(key, []), f.get(key, [])
        if len(kr) != len(fr):
            diffs.append("%s: kernel %d route(s) %s, fibd %d %s" % (key, len(kr), kr, len(fr),
                                                                   [p for p, _ in fr]))
            continue
        for kp, (fp, nhid) in zip(sorted(kr, key=str), sorted(fr, key=lambda x: str(x[0]))):
            if kp and isinstance(kp[0], str):  # the kernel gave only the nhid
                if kp != ["nhid %s" % nhid]:
                    diffs.append("%s: kernel %s, fibd nhid %s" % (key, kp, nhid))
            elif kp != fp:
                diffs.append("%s: kernel paths %s, fibd %s" % (key, kp, fp))
    for d in diffs[:maxdiff]:
        print("DIFF", d)
    n = sum(len(v) for v in k.values())
    print("%d kernel routes (every table, both families), %d in fibd, %d difference(s)"
          % (n, sum(len(v) for v in f.values()), len(diffs)))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
