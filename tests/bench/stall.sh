#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: stall benchmark: how long the event loop and the control socket
# keep a client waiting (not in make check; run from the build tree as
# root: `bash ../tests/bench/stall.sh`).
#
# A full table goes into a network namespace with `ip -batch`: TABLE=ris
# (default: RIS rrc06 IPv4, 323,487 routes, and LINX IPv6, 20,440),
# TABLE=tier1 (901,899 IPv4 + 160,147 IPv6), from the real tables beside
# the tree, else the project generator (tests/fibgen) at those sizes.
# Then three scenarios, each with a fresh fibd (so each phase histogram
# holds that scenario only):
#
#   load    fibd starts while a client connects every 2 ms and times the
#           first byte of `show summary` (tests/bench/stall_probe.py
#           probe), until the answer says ready;
#   routes  once ready: a slow reader of `show routes` (4 KiB receive
#           buffer, 4 KiB every 10 ms, SLOW seconds) while the 2 ms probe
#           runs; then a full `fibctl show routes` read at full speed;
#   reload  RELOADS reloads that rebuild the flow cache (cache.buckets
#           alternates), 0.3 s apart, while the 2 ms probe runs;
#   churn   CHURN_RATE (1,000) route replacements a second for CHURN_S
#           (10) seconds through `ip -batch` (tests/bench/lookup_churn.py),
#           probe running;
#   compact COMPACTS (3) `fibctl compact` runs, each to its end, probe
#           running.
#
# Reported per scenario: the probe's first-byte p50/p99/max, and the
# loop lag p50/p99/max of the scenario's phase from `fibctl show summary`
# (health.c's 1 ms probe, lag.c; the steady phase for routes), with the
# main thread's CPU time between two ticks ("busy" p99/max): a lag well
# above busy is time the loop waited for a CPU, not fibd's work. Figures
# on a shared machine are noisy: run it twice and quote both.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/integration/lib.sh"
nl_require
: "${FIBCTL:=./client/fibctl}"
PROBE="python3 $srcdir/tests/bench/stall_probe.py"
TABLE=${TABLE:-ris}
SLOW=${SLOW:-5}
RELOADS=${RELOADS:-6}
SCENARIOS=${SCENARIOS:-"load routes reload churn compact"} # a subset runs only those
CHURN_RATE=${CHURN_RATE:-1000}
CHURN_S=${CHURN_S:-10}
COMPACTS=${COMPACTS:-3}
STALL_NICE=${STALL_NICE:-0} # e.g. -10: fibd ahead of the other load of a shared machine
want() { case " $SCENARIOS " in *" $1 "*) return 0;; esac; return 1; }
command -v python3 >/dev/null || nl_skip "no python3"

routes_files() {
	case $TABLE in
	tier1)
		v4=$(nl_routes_file gaissmai-tier1-v4 4 900000)
		v6=$(nl_routes_file gaissmai-tier1-v6 6 160000) ;;
	*)
		v4=$(nl_routes_file ris-rrc06-20100701-v4 4 323000)
		v6=$(nl_routes_file linx-20141225-p69-v6 6 20000) ;;
	esac
}
routes_files

# STALL_NS=NAME keeps the loaded namespace NAME across runs (loading
# the table takes a minute or more); delete it with `ip netns del NAME`.
if [ -n "${STALL_NS:-}" ] && ip netns list | grep -qw "$STALL_NS"; then
	NS=$STALL_NS
else
	if [ -n "${STALL_NS:-}" ]; then
		ip netns add "$STALL_NS" || nl_fail "ip netns add $STALL_NS"
		NS=$STALL_NS
		ip -n "$NS" link set lo up
		ip netns exec "$NS" sysctl -qw net.ipv6.conf.default.addr_gen_mode=1
		ip -n "$NS" link add v0 type veth peer name v1
		ip -n "$NS" link set v0 up
		ip -n "$NS" link set v1 up
	else
		nl_ns stall
	fi
	ip -n "$NS" addr add 10.0.0.1/24 dev v0
	ip -n "$NS" -6 addr add 2001:db8::1/64 dev v0 nodad
	t0=$(date +%s.%N)
	{ nl_batch_routes "$v4" v0 10.0.0.2 2001:db8::2; nl_batch_routes "$v6" v0 10.0.0.2 2001:db8::2; } |
		ip -n "$NS" -force -batch - 2>/dev/null
	echo "table $TABLE loaded in $(echo "$(date +%s.%N) - $t0" | bc) s"
fi
echo "namespace $NS: $(ip -n "$NS" route show | wc -l) v4 + $(ip -n "$NS" -6 route show | wc -l) v6 routes in the kernel"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), fibd nice $STALL_NICE"

conf() { # conf BUCKETS
	printf 'control:\n  socket: %s\nlookup:\n  socket: %s\ncache:\n  buckets: %s\n' \
		"$FIBD_SOCK" "$TMP/lookup.sock" "$1" >"$TMP/fibd.yaml"
}

# lag PHASE: "lag PHASE ticks N p50 X p99 Y max Z ms" from show summary.
lag() {
	"$FIBCTL" -s "$FIBD_SOCK" show summary | awk -v p="$1" '
		$1 == "loop_lag_" p "_ticks" { t = $2 } $1 == "loop_lag_" p "_p50_ms" { a = $2 }
		$1 == "loop_lag_" p "_p99_ms" { b = $2 } $1 == "loop_lag_" p "_max_ms" { c = $2 }
		$1 == "loop_busy_" p "_p99_ms" { d = $2 } $1 == "loop_busy_" p "_max_ms" { e = $2 }
		END { printf "lag %s ticks %s p50 %s p99 %s max %s ms, busy p99 %s max %s ms\n", p, t, a, b, c, d, e }'
}

# start fibd (reniced by STALL_NICE at once: its threads inherit it)
start() {
	nl_fibd_start "$TMP/fibd.log"
	[ "$STALL_NICE" = 0 ] || renice -n "$STALL_NICE" -p "$FIBD_PID" >/dev/null
}

wait_ready() {
	local i
	for i in $(seq 600); do
		"$FIBCTL" -s "$FIBD_SOCK" show summary 2>/dev/null | grep -q '^ready *true' && return 0
		kill -0 "$FIBD_PID" 2>/dev/null || nl_fail "fibd died: $(cat "$TMP/fibd.log")"
		sleep 0.1
	done
	nl_fail "fibd not ready"
}

conf 131072
if want load; then
echo "== load: first dump of the table, probe every 2 ms until ready"
rm -f "$FIBD_SOCK"
rm -f "$TMP/probe.started"
$PROBE probe "$FIBD_SOCK" 120 1 "$TMP/probe.started" >"$TMP/probe" &
pp=$!
while [ ! -e "$TMP/probe.started" ]; do sleep 0.05; done
start
wait $pp
wait_ready
sed 's/^/load /' "$TMP/probe"
lag load
grep -E '^fibd: (ready|ingest)' "$TMP/fibd.log"
nl_fibd_stop
fi

if want routes; then
echo "== routes: a slow reader of show routes for $SLOW s, probe every 2 ms"
start
wait_ready
sleep 1
$PROBE probe "$FIBD_SOCK" "$SLOW" >"$TMP/probe" &
pp=$!
$PROBE slow "$FIBD_SOCK" "$SLOW" 4096 10 | sed 's/^/routes /'
wait $pp
sed 's/^/routes /' "$TMP/probe"
echo "routes rss $(awk '/VmRSS|VmHWM/ { printf "%s %d MiB ", $1, $2 / 1024 }' /proc/"$FIBD_PID"/status)"
$PROBE probe "$FIBD_SOCK" 30 >"$TMP/probe" &
pp=$!
t0=$(date +%s.%N)
n=$("$FIBCTL" -s "$FIBD_SOCK" show routes | wc -l)
echo "routes fast: $n lines in $(echo "$(date +%s.%N) - $t0" | bc) s"
kill $pp; wait $pp 2>/dev/null
lag steady
nl_fibd_stop
fi

if want reload; then
echo "== reload: $RELOADS cache rebuilds, probe every 2 ms"
conf 131072
start
wait_ready
$PROBE probe "$FIBD_SOCK" $((RELOADS / 2 + 2)) >"$TMP/probe" &
pp=$!
for i in $(seq "$RELOADS"); do
	if [ $((i % 2)) = 1 ]; then conf 65536; else conf 131072; fi
	"$FIBCTL" -s "$FIBD_SOCK" reload >/dev/null || nl_fail "reload"
	sleep 0.3
done
wait $pp
sed 's/^/reload /' "$TMP/probe"
lag reload
lag steady
nl_fibd_stop
fi

if want churn; then
echo "== churn: $CHURN_RATE route replacements a second for $CHURN_S s, probe every 2 ms"
start
wait_ready
$PROBE probe "$FIBD_SOCK" "$CHURN_S" >"$TMP/probe" &
pp=$!
python3 "$srcdir/tests/bench/lookup_churn.py" "$v4" "$CHURN_RATE" "$CHURN_S" |
	ip -n "$NS" -batch - 2>/dev/null
wait $pp
sed 's/^/churn /' "$TMP/probe"
"$FIBCTL" -s "$FIBD_SOCK" show summary | grep -E '^netlink_(messages|resyncs) ' | tr '\n' ' ' | sed 's/^/churn /; s/$/\n/'
lag steady
lag resync
nl_fibd_stop
fi

if want compact; then
echo "== compact: $COMPACTS compactions, probe every 2 ms"
start
wait_ready
$PROBE probe "$FIBD_SOCK" $((COMPACTS * 3 + 1)) >"$TMP/probe" &
pp=$!
for i in $(seq "$COMPACTS"); do
	"$FIBCTL" -s "$FIBD_SOCK" compact >/dev/null || nl_fail "compact"
	sleep 0.2
	for j in $(seq 100); do
		"$FIBCTL" -s "$FIBD_SOCK" show summary | grep -q '^compacting false' && break
		sleep 0.1
	done
	sleep 0.5
done
wait $pp
sed 's/^/compact /' "$TMP/probe"
grep -E 'fib compacted' "$TMP/fibd.log" | tail -2
lag compaction
nl_fibd_stop
fi
