#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# DOC: fibd keeps serving while clients misbehave and its namespace goes
# (robustness). fibd runs in a namespace holding a generated
# table, with the control socket and the batch lookup service; while each
# bad client below does its worst, other clients must get correct answers
# within a few seconds, and fibd must neither die nor spin:
#   control socket
#   - clients that connect and stall mid-line (and one that finishes its
#     line much later and gets its answer: request/answer pairing kept);
#   - a client that sends `show routes` again and again and never reads
#     (the output back-pressure bounds fibd's memory);
#   - binary garbage, NUL bytes, CR LF, empty lines: 400 answers;
#   - idle clients (control.idle_timeout, a few seconds here): silent,
#     partial-line and one-byte-a-second clients are dropped, an active
#     one is kept; a reload applies a new timeout to connected clients;
#   - fd exhaustion: a fibd limited to 64 descriptors (ulimit -n) and 100
#     stalled clients: the ones it cannot accept are told 503 (a spare
#     descriptor), connected ones are served, fibd neither busy-loops on
#     the listener nor floods its log (a start and an end line), counts
#     the refusals (show summary), and serves again once they leave; a
#     metrics (HTTP) client is told 503 meanwhile and the next is served;
#   lookup service (SOCK_SEQPACKET)
#   - garbage datagrams (short, wrong magic or version, bad family, bad
#     count, random bytes): error answers, counted, connection usable;
#   - a client that sends requests and never reads its answers: dropped;
#   - idle connected clients;
#   - lookup.idle_timeout (a few seconds here): a silent client and one
#     that stopped after a request are dropped, one sending a request
#     every 0.25 s is kept, the drops are counted (show summary, metrics);
#     a reload applies a new timeout to connected clients;
#   namespace
#   - `ip netns del` under the running fibd (the name goes, the namespace
#     lives on in fibd): it keeps serving; then the interfaces in it are
#     deleted (through /proc/PID/ns/net) and fibd follows the kernel
#     (routes gone, resync) and still serves; SIGTERM exits cleanly.
# Needs python3 for the raw sockets (else skipped). Exits 77 when not root.
: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/integration/lib.sh"
FIBCTL=${FIBCTL:-./client/fibctl}
N=${DAEMON_ROUTES:-3000}

nl_require
[ -x "$FIBCTL" ] || nl_fail "fibctl not built at $FIBCTL"
command -v python3 >/dev/null || nl_skip "no python3"
nl_ns robust
ip -n "$NS" addr add 10.0.0.1/24 dev v0
ip -n "$NS" addr add 2001:db8:ffff::1/64 dev v0 nodad
routes4=$(nl_routes_file gen4 4 "$N")
head -n "$N" "$routes4" >"$TMP/r4"
nl_batch_routes "$TMP/r4" v0 10.0.0.2 "" | ip -n "$NS" -force -batch - 2>/dev/null
n4=$(ip -n "$NS" -o -4 route show table all | wc -l) # every table, as fibd
echo "namespace: $n4 IPv4 routes"

sock=$TMP/ctl/fibd.sock
lsock=$TMP/ctl/lookup.sock
ctl() { timeout $((10 * NL_SLOW)) "$FIBCTL" -s "$sock" "$@"; }
# Idle control clients are dropped after IDLE seconds here (60 by default),
# idle lookup clients after LIDLE (300 by default; not IDLE: the reload
# below edits each by its value).
IDLE=$((3 * NL_SLOW))
LIDLE=$((2 * NL_SLOW))
cat >"$TMP/conf.yaml" <<EOT
control:
  socket: $sock
  idle_timeout: ${IDLE}s
lookup:
  threads: 2
  socket: $lsock
  idle_timeout: ${LIDLE}s
log:
  level: info
EOT

wait_ready() {
	local i=0
	while ! ctl --json show summary 2>/dev/null | grep -q '"ready": true'; do
		i=$((i + 1))
		[ $i -le $((300 * NL_SLOW)) ] || nl_fail "not ready: $(cat "$TMP/fibd.log")"
		kill -0 "$FIBD_PID" 2>/dev/null || nl_fail "fibd died: $(cat "$TMP/fibd.log")"
		sleep 0.1
	done
}

# The python side: raw control and lookup clients. Run as
# `robust.py SOCK LSOCK CASE`; prints "ok: ..." lines, exits non-zero on a
# failure.
cat >"$TMP/robust.py" <<'EOT'
import os, random, socket, struct, subprocess, sys, time

sock, lsock, case = sys.argv[1], sys.argv[2], sys.argv[3]
slow = int(os.environ.get("NL_SLOW", "1"))
fibd_pid = int(os.environ["FIBD_PID"])
LIMIT = 5.0 * slow   # an answer within this, while the bad clients work

def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)

def lookup5(line):
    """fibctl lookup's answer for 10.0.0.5 (src only with addresses mirrored)."""
    return line.startswith("200-10.0.0.5 10.0.0.0/24 unicast dev v0 ") and \
        line.endswith(" table 254 rule 32766\n")

def conn(path=sock, kind=socket.SOCK_STREAM, timeout=LIMIT):
    s = socket.socket(socket.AF_UNIX, kind)
    s.settimeout(timeout)
    s.connect(path)
    return s

def answer(f):
    out = []
    while True:
        l = f.readline()
        if not l:
            raise EOFError("closed")
        out.append(l)
        if l[3:4] == " ":
            return out

def ctl_ok(what):
    """A well-behaved control client, timed."""
    t0 = time.time()
    try:
        s = conn()
        f = s.makefile("r")
        s.sendall(b"show summary\nlookup 10.0.0.5\n")
        a = answer(f)
        b = answer(f)
        s.close()
    except (OSError, EOFError) as e:
        fail("%s: a good control client got no answer: %r" % (what, e))
    dt = time.time() - t0
    if a[-1] != "200 ok\n" or "200-ready true\n" not in a:
        fail("%s: show summary: %r" % (what, a))
    if len(b) != 2 or not lookup5(b[0]) or b[1] != "200 ok\n":
        fail("%s: lookup: %r" % (what, b))
    return dt

MAGIC = 0x4c424946
def lreq(addrs, rid=1, magic=MAGIC, version=1, family=socket.AF_INET, count=None):
    body = b"".join(socket.inet_pton(family if family in (socket.AF_INET, socket.AF_INET6)
                                     else socket.AF_INET, a) for a in addrs)
    return struct.pack("=IHBBIIHH", magic, version, family, 0, 0, rid,
                       len(addrs) if count is None else count, 0) + body

def lresp(m):
    if len(m) < 32:
        fail("lookup answer of %d bytes" % len(m))
    magic, ver, fam, status, rid, count, flags, nh_total, _pad, gen = \
        struct.unpack_from("=IHBBIHHIIQ", m)
    res = []
    for i in range(count):
        typ, plen, nhc, rfl, nhf, table, prio, pfx = struct.unpack_from("=BBBBIII16s", m, 32 + 32 * i)
        res.append((typ, plen, socket.inet_ntop(fam, pfx[:4] if fam == socket.AF_INET else pfx)))
    return status, rid, res

def lookup_ok(what):
    """A well-behaved lookup client, timed."""
    t0 = time.time()
    try:
        s = conn(lsock, socket.SOCK_SEQPACKET)
        s.send(lreq(["10.0.0.5", "10.0.0.77"], rid=42))
        status, rid, res = lresp(s.recv(65536))
        s.close()
    except OSError as e:
        fail("%s: a good lookup client got no answer: %r" % (what, e))
    if status != 0 or rid != 42 or res[0][:2] != (1, 24) or res[0][2] != "10.0.0.0":
        fail("%s: lookup answer %r %r %r" % (what, status, rid, res))
    return time.time() - t0

def poll_dropped(clients, dropped, t0, kind, drip=None):
    # one look at each idle client not yet dropped: EOF or an error is
    # the drop (its time noted), anything it receives fails; drip first
    # gets its byte
    for name, s in clients.items():
        if name in dropped:
            continue
        try:
            if s is drip:
                s.sendall(b"x")
            s.setblocking(False)
            got = s.recv(65536)
            if got != b"":
                fail("the %s %s: %r" % (name, kind, got))
            dropped[name] = time.time() - t0
        except BlockingIOError:
            pass
        except OSError:
            dropped[name] = time.time() - t0

def check_dropped(clients, dropped, t0, idle, kind):
    # every idle client dropped, none before the timeout
    for name in clients:
        if name not in dropped:
            fail("the %s %s not dropped after %.1f s" % (name, kind, time.time() - t0))
        if dropped[name] < idle - 0.5:
            fail("the %s %s dropped after %.1f s, before the timeout" % (name, kind, dropped[name]))

def cpu_ticks():
    with open("/proc/%d/stat" % fibd_pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return int(v[11]) + int(v[12])  # utime + stime

def good_clients(what, n=5):
    worst = 0
    for i in range(n):
        worst = max(worst, ctl_ok(what), lookup_ok(what))
    print("ok: %s: %d good control and lookup clients served, slowest %.3f s" % (what, n, worst))

if case == "ctl":
    # 1. stalled mid-line: 50 of them, held open
    stalled = []
    for i in range(50):
        s = conn()
        s.sendall(b"show summ")
        stalled.append(s)
    good_clients("50 control clients stalled mid-line")
    # one of them finishes its line much later: answered, in order
    s = stalled[0]
    f = s.makefile("r")
    s.sendall(b"ary\nlookup 10.0.0.5\n")
    a = answer(f)
    b = answer(f)
    if a[-1] != "200 ok\n" or not lookup5(b[0]):
        fail("a stalled line finished late: %r %r" % (a, b))
    print("ok: a line finished after a stall is answered, in order")
    for s in stalled:
        s.close()

    # 2. never reads: show routes, again and again (MB of answers)
    hog = conn()
    hog.setblocking(False)
    sent = 0
    t_end = time.time() + 2
    while time.time() < t_end:
        try:
            sent += hog.send(b"show routes\n" * 64)
        except BlockingIOError:
            time.sleep(0.05)
        except OSError:
            break  # dropped by the idle timeout (it reads nothing): fine
    good_clients("a client that never reads (%d bytes of requests queued)" % sent)
    rss = int(open("/proc/%d/status" % fibd_pid).read().split("VmRSS:")[1].split()[0])
    print("ok: fibd RSS %d KiB with the reader stalled" % rss)
    hog.close()

    # 3. garbage
    s = conn()
    f = s.makefile("rb")
    rnd = random.Random(6)
    junk = [b"\x00\x01\x02\xff\xfe", b"show\x00summary", b"\r", b"lookup \xc3\x28",
            b"lookup 10.0.0.1 " * 60, b"\x1b[2J", b" ", b"show routes 10.0.0.0/33",
            bytes(rnd.randrange(1, 256) for _ in range(500)).replace(b"\n", b"")]
    for j in junk:
        s.sendall(j + b"\n")
    codes = []
    for j in junk:
        while True:
            l = f.readline()
            if not l:
                fail("garbage: connection closed")
            if l[3:4] == b" ":
                codes.append(int(l[:3]))
                break
    if any(c < 400 for c in codes[:2]) or len(codes) != len(junk):
        fail("garbage answers: %r" % codes)
    s.sendall(b"show summary\n")
    a = []
    while True:
        l = f.readline()
        a.append(l)
        if l[3:4] == b" ":
            break
    if a[-1] != b"200 ok\n":
        fail("after garbage: %r" % a)
    s.close()
    print("ok: garbage lines answered %s, the same connection serves after" % codes)
    good_clients("after garbage")

elif case == "lookup":
    # 1. garbage datagrams on one connection: each gets an error answer
    s = conn(lsock, socket.SOCK_SEQPACKET)
    rnd = random.Random(7)
    bad = [b"x", b"\x00" * 8, lreq(["10.0.0.5"])[:-1],
           lreq(["10.0.0.5"], magic=0xdeadbeef), lreq(["10.0.0.5"], version=9),
           lreq(["10.0.0.5"], family=99), lreq(["10.0.0.5"], count=0),
           lreq(["10.0.0.5"], count=300), lreq(["10.0.0.5", "10.0.0.6"], count=1),
           bytes(rnd.randrange(256) for _ in range(100))]
    errors = 0
    for m in bad:
        s.send(m)
        try:
            r = s.recv(65536)
        except OSError as e:
            fail("garbage datagram %r: no answer (%r)" % (m[:16], e))
        if len(r) >= 8 and struct.unpack_from("=IHBB", r)[3] != 0:
            errors += 1
    s.send(lreq(["10.0.0.5"], rid=9))
    status, rid, res = lresp(s.recv(65536))
    if status != 0 or rid != 9 or res[0][:2] != (1, 24):
        fail("after garbage: %r %r %r" % (status, rid, res))
    s.close()
    if errors != len(bad):
        fail("%d of %d garbage datagrams answered with an error status" % (errors, len(bad)))
    print("ok: %d garbage datagrams: error answers, the connection serves after" % len(bad))
    good_clients("after lookup garbage")

    # 2. idle connected clients, and one that never reads its answers
    idle = [conn(lsock, socket.SOCK_SEQPACKET) for i in range(100)]
    hog = conn(lsock, socket.SOCK_SEQPACKET)
    hog.setblocking(False)
    req = lreq(["10.0.0.%d" % i for i in range(1, 200)])
    sent = 0
    t_end = time.time() + 2
    while time.time() < t_end:
        try:
            hog.send(req)
            sent += 1
        except BlockingIOError:
            time.sleep(0.01)
        except OSError:
            break  # dropped by fibd: fine
    good_clients("100 idle lookup clients and one that never reads (%d requests)" % sent)
    for s in idle:
        s.close()
    hog.close()

elif case == "fds":
    # fibd runs with 64 descriptors: 100 stalled clients exhaust them
    stalled = []
    for i in range(100):
        try:
            stalled.append(conn(timeout=1))
        except OSError:
            break
    def cpu_over(secs):
        t0, c0 = time.time(), cpu_ticks()
        time.sleep(secs)
        return round(100 * (cpu_ticks() - c0) / os.sysconf("SC_CLK_TCK") / (time.time() - t0))
    # short windows: a fibd that spins takes CPU from the tests that make
    # check runs beside this one
    cpu = cpu_over(1)
    # then a lookup client too: the lookup threads cannot accept it
    lc = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    lc.setblocking(False)
    try:
        lc.connect(lsock)
    except (BlockingIOError, OSError):
        pass
    cpu2 = cpu_over(1)
    # and a metrics (HTTP) client: refused through the metrics listener's
    # spare descriptor, as the control clients are (told 503, closed)
    mc = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    mc.settimeout(LIMIT)
    mc.connect(("127.0.0.1", 9342))
    cpu3 = cpu_over(1)
    try:
        early = mc.recv(200)
    except OSError as e:
        early = repr(e).encode()
    if not early.startswith(b"HTTP/1.0 503"):
        fail("a metrics client while fibd is out of descriptors: %r" % early)
    mc.close()
    # the clients accepted into the spare descriptor's slot got an answer
    # and were closed, not left hanging in the backlog
    refused = 0
    for s in stalled[-20:]:
        try:
            s.settimeout(0.2)
            if s.recv(100) == b"503 out of file descriptors\n":
                refused += 1
        except OSError:
            pass
    if refused == 0:
        fail("no control client was told 503 out of file descriptors")
    # the lookup client: refused (EOF) or, if a descriptor was free for
    # a moment (the control socket's spare is closed and opened again),
    # served; never left hanging
    lc.settimeout(LIMIT)
    try:
        lc.send(lreq(["10.0.0.5"], rid=5))
        got = lc.recv(65536)
        lookup_fate = "served" if got else "refused"
        if got and lresp(got)[:2] != (0, 5):
            fail("a lookup client while fibd is out of descriptors: %r" % got)
    except (ConnectionResetError, BrokenPipeError):
        lookup_fate = "refused"
    except OSError as e:
        fail("a lookup client while fibd is out of descriptors: %r" % e)
    # a client connected before the exhaustion is still served
    s = stalled[0]
    s.settimeout(LIMIT)
    f = s.makefile("r")
    try:
        s.sendall(b"lookup 10.0.0.5\n")
        a = answer(f)
    except (OSError, EOFError) as e:
        fail("a connected control client while out of descriptors: %r" % e)
    if len(a) != 2 or not lookup5(a[0]) or a[1] != "200 ok\n":
        fail("a connected control client while out of descriptors: %r" % a)
    with open(os.environ["CPU_FILE"], "w") as f:
        f.write("%d %d %d\n" % (cpu, cpu2, cpu3))
    print("ok: %d control clients (the last ones told 503 out of file descriptors: %d of 20), "
          "a lookup client %s, a connected client served; fibd CPU meanwhile %d %%, "
          "%d %% with the lookup client" % (len(stalled), refused, lookup_fate, cpu, cpu2))
    lc.close()
    for s in stalled:
        s.close()
    time.sleep(0.5)
    good_clients("after the descriptors came back")
    # a metrics client is served once descriptors are back
    mc = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    mc.settimeout(LIMIT)
    try:
        mc.connect(("127.0.0.1", 9342))
        mc.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        body = b""
        while True:
            b = mc.recv(65536)
            if not b:
                break
            body += b
    except OSError as e:
        fail("the metrics client after the exhaustion: %r" % e)
    m = [l for l in body.decode().split("\n") if l.startswith('fibd_control_refused_total{reason="fds"}')]
    if not body.startswith(b"HTTP/1.0 200") or not m or int(m[0].split()[1]) == 0:
        fail("the metrics client after the exhaustion: %r" % (m or body[:200]))
    mc.close()
    print("ok: a metrics client was told 503 while out of descriptors, the next is served: %s; fibd CPU meanwhile %d %%" % (m[0], cpu3))

elif case == "idle":
    # control.idle_timeout is IDLE seconds: clients that complete no line
    # are dropped, one that sends a line a second is not
    idle = float(sys.argv[4])
    silent = conn()
    partial = conn()
    partial.sendall(b"show summ")
    drip = conn()            # a byte a second, never a newline
    active = conn()
    fa = active.makefile("r")
    t0 = time.time()
    clients = {"silent": silent, "partial line": partial, "a byte a second": drip}
    dropped = {}
    while time.time() - t0 < idle + 1.5 * slow and len(dropped) < len(clients):
        poll_dropped(clients, dropped, t0, "client", drip)
        active.sendall(b"lookup 10.0.0.5\n")
        if answer(fa)[-1] != "200 ok\n":
            fail("the active client's answer")
        time.sleep(0.25)
    check_dropped(clients, dropped, t0, idle, "client")
    active.sendall(b"show summary\n")
    a = answer(fa)
    closed = [l for l in a if l.startswith("200-control_idle_closed ")]
    if not closed or int(closed[0].split()[1]) < 3:
        fail("control_idle_closed: %r" % closed)
    print("ok: idle timeout %.0f s: silent, partial-line and one-byte-a-second clients dropped "
          "after %s s, an active client kept (%.1f s), %s"
          % (idle, "/".join("%.1f" % dropped[n] for n in clients), time.time() - t0,
             closed[0].strip()[4:]))
    active.close()
    good_clients("after the idle clients were dropped")

elif case == "lookup_idle":
    # lookup.idle_timeout is LIDLE seconds: a client that sends nothing
    # and one that stops after a request are dropped, one that sends a
    # request every 0.25 s is not (the threads check once a second: a
    # drop comes up to a second after the timeout)
    idle = float(sys.argv[4])
    silent = conn(lsock, socket.SOCK_SEQPACKET)
    stopped = conn(lsock, socket.SOCK_SEQPACKET)
    stopped.send(lreq(["10.0.0.5"], rid=3))
    if lresp(stopped.recv(65536))[:2] != (0, 3):
        fail("the lookup client that stops: its answer")
    active = conn(lsock, socket.SOCK_SEQPACKET)
    t0 = time.time()
    clients = {"silent": silent, "stopped after a request": stopped}
    dropped = {}
    rid = 100
    while time.time() - t0 < idle + 3 * slow and len(dropped) < len(clients):
        poll_dropped(clients, dropped, t0, "lookup client")
        rid += 1
        try:
            active.send(lreq(["10.0.0.5"], rid=rid))
            status, r, res = lresp(active.recv(65536))
        except OSError as e:
            fail("the active lookup client: %r after %.1f s" % (e, time.time() - t0))
        if status != 0 or r != rid:
            fail("the active lookup client's answer: %r %r" % (status, r))
        time.sleep(0.25)
    check_dropped(clients, dropped, t0, idle, "lookup client")
    kept = time.time() - t0
    s = conn()
    f = s.makefile("r")
    s.sendall(b"show summary\nmetrics\n")
    a, m = answer(f), answer(f)
    s.close()
    closed = [l for l in a if l.startswith("200-lookup_idle_closed ")]
    if not closed or int(closed[0].split()[1]) < 2:
        fail("lookup_idle_closed: %r" % closed)
    mc = [l for l in m if l.startswith("200-fibd_lookup_idle_closed_total ")]
    if not mc or int(mc[0].split()[1]) < 2:
        fail("fibd_lookup_idle_closed_total: %r" % mc)
    print("ok: lookup idle timeout %.0f s: silent and stopped clients dropped after %s s, "
          "an active client kept (%.1f s, %d requests), %s"
          % (idle, "/".join("%.1f" % dropped[n] for n in clients), kept, rid - 100,
             closed[0].strip()[4:]))
    active.close()
    good_clients("after the idle lookup clients were dropped")

elif case == "idle_reload":
    # connected before a reload that sets IDLE seconds (control and
    # lookup): dropped after about IDLE, not after the old timeout
    idle, reload_done = float(sys.argv[4]), sys.argv[5]
    s = conn()
    s.settimeout(LIMIT)
    ls = conn(lsock, socket.SOCK_SEQPACKET)
    ls.settimeout(LIMIT)
    open(reload_done + ".connected", "w").close()
    while not os.path.exists(reload_done):
        time.sleep(0.05)
    t0 = time.time()
    # control: a timer; lookup: checked once a second
    for what, c, slack in (("control", s, 1.0), ("lookup", ls, 2.0)):
        try:
            got = c.recv(100)
        except ConnectionResetError:
            got = b""
        except OSError as e:
            fail("a silent %s client after a reload to %.0f s: %r" % (what, idle, e))
        dt = time.time() - t0
        if got != b"" or dt > idle + slack * slow:
            fail("a silent %s client after a reload to %.0f s: %r after %.1f s"
                 % (what, idle, got, dt))
        print("ok: reload: idle timeout %.0f s applied to a connected %s client "
              "(dropped %.1f s after)" % (idle, what, dt))

elif case == "good":
    good_clients(sys.argv[4] if len(sys.argv) > 4 else "good clients")
EOT
robust() { FIBD_PID=$FIBD_PID NL_SLOW=$NL_SLOW python3 "$TMP/robust.py" "$sock" "$lsock" "$@"; }

nl_fibd_start "$TMP/fibd.log" -c "$TMP/conf.yaml"
wait_ready
echo "ok: ready"
# fibd raised its soft descriptor limit for full sockets (1024 + 2 x 256 + 256)
read -r soft hard <<EOT
$(sed -n 's/^Max open files *\([0-9a-z]*\) *\([0-9a-z]*\).*/\1 \2/p' "/proc/$FIBD_PID/limits")
EOT
if [ "$hard" = unlimited ] || [ "$hard" -ge 1792 ]; then
	[ "$soft" = unlimited ] || [ "$soft" -ge 1792 ] || nl_fail "descriptor limit: soft $soft, hard $hard"
else
	[ "$soft" = "$hard" ] || nl_fail "descriptor limit: soft $soft, hard $hard"
fi
echo "ok: descriptor limit $soft (hard $hard)"
robust ctl || nl_fail "control clients"
robust idle "$IDLE" || nl_fail "idle control clients"
robust lookup || nl_fail "lookup clients"
robust lookup_idle "$LIDLE" || nl_fail "idle lookup clients"
# A reload changes the idle timeout of connected clients too.
rm -f "$TMP/reloaded" "$TMP/reloaded.connected"
robust idle_reload 1 "$TMP/reloaded" &
rpid=$!
for i in $(seq 100); do [ -e "$TMP/reloaded.connected" ] && break; sleep 0.05; done
sed -i "s/idle_timeout: ${IDLE}s/idle_timeout: 1s/; s/idle_timeout: ${LIDLE}s/idle_timeout: 1s/" "$TMP/conf.yaml"
ctl reload >/dev/null || nl_fail "reload to idle_timeout 1s"
touch "$TMP/reloaded"
wait $rpid || nl_fail "idle timeout after a reload"
[ "$(ctl show config | grep -c '^  idle_timeout: 1s$')" = 2 ] || nl_fail "show config after the reload"
grep -q 'restart fibd' "$TMP/fibd.log" && nl_fail "a reload of lookup.idle_timeout asks for a restart"
kill -0 "$FIBD_PID" || nl_fail "fibd died: $(cat "$TMP/fibd.log")"
ctl show summary >/dev/null || nl_fail "show summary"

# The namespace goes: its name first (fibd keeps it alive), then its
# interfaces.
ip netns del "$NS"
NSS=$(echo "$NSS" | sed "s/ $NS\b//")
sleep 0.5
robust good "namespace name deleted" || nl_fail "after ip netns del"
nsenter --net="/proc/$FIBD_PID/ns/net" ip link del v0 || nl_fail "link del in the namespace"
left=$(nsenter --net="/proc/$FIBD_PID/ns/net" ip -o -4 route show table all | wc -l)
for i in $(seq $((100 * NL_SLOW))); do
	got=$(ctl --json show summary | sed -n 's/.*"routes_v4": \([0-9]*\).*/\1/p')
	[ "$got" = "$left" ] && break
	sleep 0.1
done
[ "$got" = "$left" ] || nl_fail "after the interfaces went: fibd has $got IPv4 routes, the kernel $left"
ans=$(ctl lookup 10.0.0.5) || nl_fail "lookup after the interfaces went"
case "$ans" in "10.0.0.5 - "*|"10.0.0.5 -") ;; *) nl_fail "10.0.0.5 still routed: $ans" ;; esac
echo "ok: namespace deleted, then its interfaces: fibd follows ($got IPv4 routes) and serves"
nl_fibd_stop
grep -q 'signal 15: exiting' "$TMP/fibd.log" || nl_fail "no clean exit: $(tail -5 "$TMP/fibd.log")"

# Descriptors exhausted: a fibd with 64 of them. Clients that cannot be
# accepted are refused through a spare descriptor (control: "503 out of
# file descriptors"; lookup: closed), connected clients are served, fibd
# neither spins nor floods its log (one line when it starts, one when it
# ends, per socket), and it serves again once descriptors come back.
nl_ns robustfd
ip -n "$NS" addr add 10.0.0.1/24 dev v0
rm -f "$sock" "$lsock"
# the default idle timeout (60 s): stalled clients stay for this part;
# metrics on the namespace's loopback
sed -i "/idle_timeout:/d" "$TMP/conf.yaml"
printf 'metrics:\n  enabled: true\n  address: "127.0.0.1:9342"\n' >>"$TMP/conf.yaml"
# the hard limit too (fibd raises its soft limit up to the hard one),
# set in a wrapper: this shell could not raise its own back
printf '#!/bin/sh\nulimit -n 64 || exit 1\nexec "%s" "$@"\n' "$FIBD" >"$TMP/fibd64"
chmod +x "$TMP/fibd64"
FIBD=$TMP/fibd64 nl_fibd_start "$TMP/fibd-fd.log" -c "$TMP/conf.yaml"
wait_ready
# (in the namespace: the metrics client connects to its loopback)
CPU_FILE=$TMP/fd.cpu FIBD_PID=$FIBD_PID NL_SLOW=$NL_SLOW ip netns exec "$NS" \
	python3 "$TMP/robust.py" "$sock" "$lsock" fds || nl_fail "fd exhaustion: $(tail -5 "$TMP/fibd-fd.log")"
# the end of an episode is logged by a 1 s tick
for i in $(seq $((30 * NL_SLOW))); do
	grep -q 'control socket: accepting clients again' "$TMP/fibd-fd.log" && break
	sleep 0.1
done
summary=$(ctl show summary) || nl_fail "show summary after fd exhaustion"
nl_fibd_stop
grep -q 'signal 15: exiting' "$TMP/fibd-fd.log" || nl_fail "no clean exit: $(tail -5 "$TMP/fibd-fd.log")"
lines=$(grep -c 'accept' "$TMP/fibd-fd.log")
read -r cpu cpu2 cpu3 <"$TMP/fd.cpu"
refused=$(echo "$summary" | sed -n 's/^control_refused_fds *//p')
lrefused=$(echo "$summary" | sed -n 's/^lookup_refused_fds *//p')
msg="$lines log lines about accept, $cpu % CPU, $cpu2 % with a lookup client waiting, $cpu3 % with a metrics client waiting, refused: $refused control, $lrefused lookup"
[ "$lines" -le 8 ] || nl_fail "fd exhaustion: the log floods: $msg: $(grep accept "$TMP/fibd-fd.log" | sort | uniq -c | sort -rn | head -5)"
[ "$cpu" -le 20 ] && [ "$cpu2" -le 20 ] && [ "$cpu3" -le 20 ] || nl_fail "fd exhaustion: fibd spins: $msg"
[ "${refused:-0}" -gt 0 ] || nl_fail "fd exhaustion: refusals not counted: $msg"
grep -q 'control socket: out of file descriptors' "$TMP/fibd-fd.log" &&
	grep -q 'control socket: accepting clients again' "$TMP/fibd-fd.log" ||
	nl_fail "fd exhaustion: start or end not logged: $(grep -E 'accept|file descriptors' "$TMP/fibd-fd.log")"
echo "ok: fd exhaustion: $msg; serving again"
echo "PASS"
