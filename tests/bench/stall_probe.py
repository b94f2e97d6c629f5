#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""DOC: control-socket clients for tests/bench/stall.sh.

probe SOCK SECONDS [UNTIL_READY [STARTED]]
    Every 2 ms: connect, send "show summary", time the first byte of the
    answer (connect included), read the answer whole. Prints one line:
    "probe n N p50 X p99 Y max Z ms" (first-byte latency). With
    UNTIL_READY=1 it stops early once an answer says "ready true" (the
    first load is over), after at least one "ready false" answer.
    A connect that fails (socket not there yet) is retried, not timed.
    STARTED: a file created once the probe runs (python starts slowly on
    a loaded machine: fibd is started after it, so the load is seen).

slow SOCK SECONDS [BYTES] [PAUSE_MS]
    A slow reader of "show routes": a 4 KiB receive buffer, BYTES
    (4096) read every PAUSE_MS (10) ms, for SECONDS or until the final
    line. Prints "slow bytes B lines L done 0|1 seconds S".
"""
import socket
import sys
import time


def probe(path, seconds, until_ready, started=None):
    if started:
        open(started, "w").close()
    lat = []
    seen_loading = False
    end = time.monotonic() + seconds
    nxt = time.monotonic()
    while time.monotonic() < end:
        nxt += 0.002
        s = socket.socket(socket.AF_UNIX)
        t0 = time.monotonic()
        try:
            s.connect(path)
        except OSError:
            s.close()
            time.sleep(0.002)
            nxt = time.monotonic()
            continue
        s.sendall(b"show summary\n")
        buf = s.recv(65536)
        t1 = time.monotonic()
        if not buf:
            s.close()
            continue
        lat.append(t1 - t0)
        while b"\n200 " not in buf and not buf.startswith(b"200 ") and not buf.startswith(b"5"):
            more = s.recv(65536)
            if not more:
                break
            buf += more
        s.close()
        if b"200-ready false" in buf:
            seen_loading = True
        if until_ready and seen_loading and b"200-ready true" in buf:
            break
        d = nxt - time.monotonic()
        if d > 0:
            time.sleep(d)
        else:
            nxt = time.monotonic()
    lat.sort()
    n = len(lat)
    if not n:
        print("probe n 0")
        return
    q = lambda p: lat[min(n - 1, int(n * p))] * 1e3
    print("probe n %d p50 %.2f p99 %.2f max %.2f ms loading_seen %d"
          % (n, q(0.5), q(0.99), lat[-1] * 1e3, int(seen_loading)))


def slow(path, seconds, nbytes, pause_ms):
    s = socket.socket(socket.AF_UNIX)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(path)
    s.sendall(b"show routes\n")
    t0 = time.monotonic()
    total = lines = 0
    done = 0
    tail = b""
    while time.monotonic() - t0 < seconds:
        b = s.recv(nbytes)
        if not b:
            break
        total += len(b)
        lines += b.count(b"\n")
        tail = (tail + b)[-200:]
        if b"\n200 " in tail and tail.endswith(b"\n"):
            done = 1
            break
        time.sleep(pause_ms / 1e3)
    print("slow bytes %d lines %d done %d seconds %.2f"
          % (total, lines, done, time.monotonic() - t0))
    s.close()


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "probe":
        probe(a[1], float(a[2]), len(a) > 3 and a[3] == "1", a[4] if len(a) > 4 else None)
    elif a[0] == "slow":
        slow(a[1], float(a[2]), int(a[3]) if len(a) > 3 else 4096,
             float(a[4]) if len(a) > 4 else 10)
    else:
        sys.exit("usage: stall_probe.py probe|slow SOCK SECONDS ...")
