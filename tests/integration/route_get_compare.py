#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Ask the kernel (`ip -j route get`) and fibd (`fibctl --json lookup -`)
the same flows and compare the answers field by field.

usage: route_get_compare.py NETNS FIBCTL SOCKET FLOWS [MAXDIFF]

FLOWS holds one flow a line in `ip route get` syntax ("ADDR [from A]
[iif D] [mark N] ..."). For every flow the kernel is asked twice: the
answer (type, table, gateway, dev, source, or the error) and `fibmatch`
(the matched prefix). Compared: error, type, table, prefix, gateway, dev,
src. Kernel conventions normalised here, each stated where it is done.
Prints each difference (at most MAXDIFF, default 20) and a summary; exits
1 on any difference.
"""
import json
import subprocess
import sys

ERRS = {
    "Network is unreachable": "ENETUNREACH",
    "No route to host": "EHOSTUNREACH",
    "Permission denied": "EACCES",
    "Invalid argument": "EINVAL",
}
TABLES = {"local": 255, "main": 254, "default": 253, "unspec": 0}


def table_num(t):
    if t is None:
        return 254  # ip route get omits main
    if isinstance(t, int):
        return t
    return TABLES.get(t, None) if t in TABLES else int(t)


def norm_prefix(p, family):
    if p is None:
        return None
    if p == "default":
        return "0.0.0.0/0" if family == 4 else "::/0"
    if "/" not in p:
        return p + ("/32" if family == 4 else "/128")
    return p


def kernel(ns, flow, fibmatch=False):
    cmd = ["ip", "-n", ns, "-j", "route", "get"]
    if fibmatch:
        cmd.append("fibmatch")
    cmd += flow.split()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        msg = p.stderr.strip()
        for text, name in ERRS.items():
            if text in msg:
                return {"error": name}
        return {"error": "?" + msg}
    return json.loads(p.stdout)[0]


def kernel_answer(ns, flow):
    words = flow.split()
    fam = 6 if ":" in words[0] else 4
    a = kernel(ns, flow)
    if a.get("error"):
        return {"error": a["error"]}
    m = kernel(ns, flow, fibmatch=True)
    src = a.get("prefsrc")
    # The kernel prints prefsrc only when it chose it; a `from` of an
    # output flow is the source as given.
    if src is None and "from" in words and "iif" not in words:
        src = words[words.index("from") + 1]
    if "iif" in words:
        src = None  # input flows: the answer has no source of its own
    return {
        "error": None,
        "type": a.get("type", "unicast"),
        "table": table_num(a.get("table")),
        "prefix": norm_prefix(m.get("dst"), fam) if not m.get("error") else None,
        "gateway": a.get("gateway"),
        # local routes answer through the loopback device, as fibd's
        # decision does (dev of the route's path otherwise)
        "dev": a.get("dev"),
        "src": src,
    }


def fibd_answers(fibctl, sock, flows):
    p = subprocess.run([fibctl, "-s", sock, "--json", "lookup", "-"], input="\n".join(flows) + "\n",
                       capture_output=True, text=True)
    out = p.stdout.strip()
    if not out:
        sys.exit("fibctl gave no output: rc %d: %s" % (p.returncode, p.stderr.strip()))
    if out.startswith("["):
        ans = json.loads(out)
    else:
        ans = [json.loads(l) for l in out.splitlines() if l.strip()]
    if len(ans) != len(flows):
        sys.exit("fibctl answered %d of %d flows: %s" % (len(ans), len(flows), p.stderr.strip()))
    return ans


def fibd_norm(a, flow):
    fam = 6 if ":" in flow.split()[0] else 4
    if a.get("error"):
        return {"error": a["error"]}
    return {
        "error": None,
        "type": a.get("type"),
        "table": table_num(a.get("table")),
        "prefix": norm_prefix(a.get("prefix"), fam),
        "gateway": a.get("gateway"),
        "dev": a.get("dev"),
        "src": a.get("src"),
    }


def main():
    ns, fibctl, sock, path = sys.argv[1:5]
    maxdiff = int(sys.argv[5]) if len(sys.argv) > 5 else 20
    flows = [l.strip() for l in open(path) if l.strip() and not l.startswith("#")]
    fib = fibd_answers(fibctl, sock, flows)
    diffs = 0
    errors = {}
    for flow, fa in zip(flows, fib):
        k = kernel_answer(ns, flow)
        f = fibd_norm(fa, flow)
        errors[k["error"]] = errors.get(k["error"], 0) + 1
        if k != f:
            diffs += 1
            if diffs <= maxdiff:
                keys = [x for x in k if k.get(x) != f.get(x)]
                print("DIFF %s: %s" % (flow, ", ".join("%s kernel=%r fibd=%r" % (x, k.get(x), f.get(x))
                                                      for x in keys)))
    summary = ", ".join("%s %d" % (e or "ok", n) for e, n in sorted(errors.items(), key=lambda x: str(x[0])))
    print("compared %d flows (%s): %d differ" % (len(flows), summary, diffs))
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
