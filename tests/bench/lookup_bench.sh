#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# DOC: the batch lookup socket's benchmark (root, a network namespace)
#
#   srcdir=.. bash ../tests/bench/lookup_bench.sh      (from a build directory)
#
# Loads a full table into a new namespace with `ip -batch` (RIS rrc06
# IPv4, 323,487 routes, from ../shared/data; else tests/fibgen's 300,000),
# starts fibd there with the default config (sockets moved to $TMP), and
# runs examples/fibl --bench on 100,000 addresses sampled inside the
# table's routes:
#   1. one client, versions 1 and 2, 1 and 4 requests in flight, then 4
#      with a client that spins up to 50 us for its answers and asks
#      version 2 with bare destinations (--spin 50 --dst);
#   2. two clients (two lookup threads, the default), 4 in flight;
#   3. one client, 1 in flight, idle and then while lookup_churn.py
#      replaces CHURN_RATE (1,000) routes a second: p99 while churning
#      over p99 idle.
# Every fibl line is printed (JSON), then a summary. SECONDS (5) per run.
# BENCH_NS names a namespace that already holds the table (kept: the
# load takes about a minute here); FIBD, FIBL override the binaries.
set -u
: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/integration/lib.sh"
FIBL=${FIBL:-./examples/fibl}
SECS=${SECONDS_PER_RUN:-5}
RATE=${CHURN_RATE:-1000}

nl_require
[ -x "$FIBL" ] || nl_fail "fibl not built at $FIBL"
routes=$(nl_routes_file ris-rrc06-20100701-v4 4 300000)
if [ -n "${BENCH_NS:-}" ]; then
	NS=$BENCH_NS
else
	nl_ns lbench
	ip -n "$NS" addr add 10.0.0.1/24 dev v0
	t0=$(date +%s)
	nl_batch_routes "$routes" v0 10.0.0.2 "" | ip -n "$NS" -force -batch - 2>/dev/null
	echo "loaded $(ip -n "$NS" -4 route show | wc -l) routes in $(($(date +%s) - t0)) s"
fi
nl_sample "$routes" 100000 5 >"$TMP/addrs"

nl_fibd_start "$TMP/fibd.log"
for i in $(seq 300); do
	grep -q '^fibd: ready' "$TMP/fibd.log" && break
	kill -0 "$FIBD_PID" 2>/dev/null || nl_fail "fibd died: $(cat "$TMP/fibd.log")"
	sleep 0.1
done
grep '^fibd: ready' "$TMP/fibd.log" || nl_fail "fibd not ready"
bench() { ip netns exec "$NS" "$FIBL" -s "$TMP/lookup.sock" --bench "$SECS" "$@" "$TMP/addrs"; }
field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p"; }

echo "== one client"
for k in 1 4; do bench --inflight "$k" | tee -a "$TMP/one"; done
# the fastest client: waits spinning up to 50 us (lookup_client_wait),
# version 2 with bare destinations (LOOKUP2_Q_DST)
bench --inflight 4 --spin 50 --dst | tee -a "$TMP/one"
echo "== two clients, two lookup threads"
bench --inflight 4 --clients 2 | tee "$TMP/two"
echo "== churn: idle, then $RATE route replacements a second"
bench --v2 | tee "$TMP/idle"
"$srcdir/tests/bench/lookup_churn.py" "$routes" "$RATE" $((SECS + 2)) |
	ip -n "$NS" -force -batch - 2>/dev/null &
churn=$!
sleep 1
bench --v2 | tee "$TMP/churn"
wait "$churn"
gen=$(${FIBCTL:-./client/fibctl} -s "$TMP/fibd.sock" show summary 2>/dev/null | awk '$1 == "generation" { print $2 }')
nl_fibd_stop

best1=$(grep '"version": 1' "$TMP/one" | field mlps | sort -n | tail -1)
best2=$(grep '"version": 2' "$TMP/one" | field mlps | sort -n | tail -1)
two1=$(grep '"version": 1' "$TMP/two" | field mlps)
two2=$(grep '"version": 2' "$TMP/two" | field mlps)
one1=$(grep '"version": 1, "clients": 1, "inflight": 4, "spin_us": 0' "$TMP/one" | field mlps)
one2=$(grep '"version": 2, "clients": 1, "inflight": 4, "spin_us": 0' "$TMP/one" | field mlps)
p99i=$(field p99_us <"$TMP/idle")
p99c=$(field p99_us <"$TMP/churn")
echo "summary: one client best v1 $best1, v2 $best2 Mlookups/s;" \
	"two clients / one (4 in flight): v1 $(echo "scale=2; $two1 / $one1" | bc)," \
	"v2 $(echo "scale=2; $two2 / $one2" | bc);" \
	"v2 p99 churning / idle: $p99c / $p99i us = $(echo "scale=2; $p99c / $p99i" | bc)" \
	"(FIB generation at the end: $gen)"
