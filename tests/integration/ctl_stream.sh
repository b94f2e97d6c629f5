#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: a streamed `show routes` and a slow reader (root, network namespace).
#
# STREAM_ROUTES (60,000) generated IPv4 routes in a namespace, fibd ready.
# Client A asks `show routes` and `show summary` pipelined on one
# connection with a 4 KiB receive buffer, reads the first line and stops
# reading. While A is stalled:
#   - client B's `show summary` is answered (first byte within
#     STREAM_FIRST_BYTE_MS, 2000 by default: a loaded machine), complete;
#   - fibd's RSS grows by less than a third of the answer's size (the
#     whole answer under ASAN, whose quarantine keeps frees resident): the
#     answer is produced as A reads, not held whole for it (the earlier
#     one-go answer held all of it, about 4 MB here);
#   - `show routes PREFIX` from client C is answered whole.
# Then A reads on: every route, `200 N routes` with N = routes_v4 +
# routes_v6, then its pipelined `show summary` answer, in order. A
# client that goes away in the middle of the stream is dropped cleanly
# and fibd keeps answering.
set -u
. "$(dirname "$0")/lib.sh"
FIBCTL=${FIBCTL:-./client/fibctl}
N=${STREAM_ROUTES:-60000}
nl_require
[ -x "$FIBCTL" ] || nl_fail "fibctl not built at $FIBCTL"
command -v python3 >/dev/null || nl_skip "no python3"
nl_ns stream
ip -n "$NS" addr add 10.0.0.1/24 dev v0
"$FIBGEN" -n "$N" -s 5 -o "$TMP/gen4.txt" || nl_fail "fibgen"
nl_batch_routes "$TMP/gen4.txt" v0 10.0.0.2 "" | ip -n "$NS" -force -batch - 2>/dev/null
nl_fibd_start "$TMP/fibd.log"
for i in $(seq $((600 * NL_SLOW))); do
	"$FIBCTL" -s "$FIBD_SOCK" show summary 2>/dev/null | grep -q '^ready *true' && break
	kill -0 "$FIBD_PID" 2>/dev/null || nl_fail "fibd died: $(cat "$TMP/fibd.log")"
	sleep 0.1
done
"$FIBCTL" -s "$FIBD_SOCK" show summary >"$TMP/summary"
total=$(awk '$1 == "routes_v4" || $1 == "routes_v6" { n += $2 } END { print n }' "$TMP/summary")
[ "$total" -gt $((N / 2)) ] || nl_fail "fibd holds $total routes: $(cat "$TMP/summary")"
echo "fibd ready with $total routes"

# Under ASAN its quarantine keeps freed memory resident and its shadow
# grows with it: the bound is then the whole answer (fibd must still not
# build it), else a third of it.
real=$(dirname "$FIBD")/.libs/$(basename "$FIBD")
[ -x "$real" ] || real=$FIBD
share=3
ldd "$real" 2>/dev/null | grep -q libasan && share=1
python3 - "$FIBD_SOCK" "$FIBD_PID" "$total" "${STREAM_FIRST_BYTE_MS:-2000}" "$share" <<'EOF' || nl_fail "slow reader"
import socket, sys, time
path, pid, total, limit_ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
share = int(sys.argv[5])

def rss():
    for l in open("/proc/%s/status" % pid):
        if l.startswith("VmRSS:"):
            return int(l.split()[1]) * 1024

def conn(small=False):
    s = socket.socket(socket.AF_UNIX)
    if small:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(path)
    return s

def answer(s, first=None):
    """Read one answer: (data lines, final line, first-byte seconds)."""
    f = s.makefile("rb")
    t0 = time.monotonic()
    lines, t1 = [], None
    while True:
        l = f.readline()
        if t1 is None:
            t1 = time.monotonic() - t0
        if not l:
            raise SystemExit("FAIL: connection closed mid-answer")
        if l[3:4] == b" ":
            return lines, l.decode().strip(), t1
        lines.append(l)

def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)

base = rss()
a = conn(small=True)
a.sendall(b"show routes\nshow summary\n")
fa = a.makefile("rb")
first = fa.readline()
if not first.startswith(b"200-"):
    fail("first line of show routes: %r" % first)
time.sleep(0.5)                 # A stalls; fibd must not build the rest
grown = rss() - base
answer_bytes = total * 60       # about 60 bytes a line here
print("rss grew %d KiB while A is stalled (answer ~%d KiB)" % (grown // 1024, answer_bytes // 1024))
if grown > answer_bytes // share:
    fail("fibd holds the answer for a stalled reader: RSS +%d KiB" % (grown // 1024))

b = conn()
t0 = time.monotonic()
b.sendall(b"show summary\n")
lines, final, fb = answer(b)
print("B: first byte after %.1f ms, %d lines, %s" % (fb * 1e3, len(lines), final))
if final != "200 ok" or not any(l.startswith(b"200-ready true") for l in lines):
    fail("B's show summary: %s" % final)
if fb * 1e3 > limit_ms:
    fail("B waited %.0f ms for a first byte behind a stalled reader" % (fb * 1e3))

c = conn()
c.sendall(b"show routes 10.0.0.0/24\n")
lines, final, _ = answer(c)
if final != "200 %d routes" % len(lines) or not lines:
    fail("C's show routes PREFIX: %s with %d lines" % (final, len(lines)))

# A reads on: every route, then its pipelined request's answer.
n = 1
while True:
    l = fa.readline()
    if not l:
        fail("A: closed after %d lines" % n)
    if l[3:4] == b" ":
        break
    n += 1
if l.decode().strip() != "200 %d routes" % total or n != total:
    fail("A: %d lines, final %r, expected %d routes" % (n, l, total))
lines = []
while True:
    l = fa.readline()
    if l[3:4] == b" ":
        break
    lines.append(l)
if l.strip() != b"200 ok" or not any(x.startswith(b"200-routes_v4 ") for x in lines):
    fail("A's pipelined show summary after the routes: %r" % l)
print("A: %d routes, then its show summary" % n)

# A client that leaves mid-stream: dropped, fibd answers on.
d = conn(small=True)
d.sendall(b"show routes\n")
d.recv(100)
d.close()
time.sleep(0.2)
e = conn()
e.sendall(b"show summary\n")
lines, final, _ = answer(e)
if final != "200 ok":
    fail("after a client left mid-stream: %s" % final)
EOF
kill -0 "$FIBD_PID" || nl_fail "fibd died"
nl_fibd_stop
echo "PASS"
