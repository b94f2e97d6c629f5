#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# DOC: route churn at a steady rate, for the lookup socket benchmark
#
#   lookup_churn.py ROUTESFILE RATE SECONDS | ip -n NS -batch -
#
# Writes `route replace PREFIX via GW dev v0 onlink` lines for prefixes of
# ROUTESFILE (PREFIX/LEN NEXTHOP lines), RATE a second for SECONDS, the
# gateway alternating between 10.0.0.2 and 10.0.0.3 so that every line is
# a real change. Lines go out in slices of 10 ms, each flushed, paced
# against the clock (a late slice is made up by the next ones), so
# `ip -batch` applies them as they come. Prints the count sent on stderr.
import random
import sys
import time


def main():
    routes, rate, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    with open(routes) as f:
        prefixes = [line.split()[0] for line in f if line.strip() and "/" in line]
    rnd = random.Random(1)
    t0 = time.monotonic()
    sent = 0
    while True:
        now = time.monotonic() - t0
        if now >= seconds:
            break
        due = int(now * rate)
        out = []
        while sent < due:
            p = prefixes[rnd.randrange(len(prefixes))]
            gw = "10.0.0.2" if sent % 2 else "10.0.0.3"
            out.append("route replace %s via %s dev v0 onlink\n" % (p, gw))
            sent += 1
        if out:
            sys.stdout.write("".join(out))
            sys.stdout.flush()
        time.sleep(0.01)
    print("churn: %d changes in %.1f s" % (sent, time.monotonic() - t0), file=sys.stderr)


main()
