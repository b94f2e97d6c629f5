#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: netlink ingest benchmark (not in make check; `make bench-nl`).
#
# 1. Keep-up: fibd starts on an empty namespace with the default 64 MiB
#    event buffer, then `ip -batch` adds the full tier1 table (901,899
#    IPv4 + 160,147 IPv6 routes, `dev dummy0`). When ip exits, fibd is
#    asked to apply what is queued (SIGUSR1); reported: the delay from
#    ip's exit to a complete FIB, drops (ENOBUFS) and fibd's peak RSS.
# 2. Full dump: in the same namespace, RUNS times: a raw libmnl dump
#    (NLDUMP_SRC, a program that only counts routes) of v4 and of v6, then `fibd --once` (first dump
#    request to ready, fib_load included). Reported: each time and the
#    ratio fibd / (raw v4 + raw v6); the target is <= 1.3.
# Needs root, the real tier-1 tables beside the tree (else fibgen: N
# routes) and the raw dump program's source (else skipped).
set -u
. "$(dirname "$0")/lib.sh"
nl_require
RUNS=${RUNS:-3}
nl_ns nlbench
ip -n "$NS" link add dummy0 type veth peer name dummy0p
ip -n "$NS" link set dummy0 up
ip -n "$NS" link set dummy0p up

v4=$(nl_routes_file gaissmai-tier1-v4 4 900000)
v6=$(nl_routes_file gaissmai-tier1-v6 6 160000)
n4=$(wc -l <"$v4")
n6=$(wc -l <"$v6")
{ nl_batch_routes "$v4" dummy0; nl_batch_routes "$v6" dummy0; } >"$TMP/batch"
echo 192.0.2.1 >"$TMP/one"

nldump_src=${NLDUMP_SRC:-$srcdir/../shared/bench/nldump.c}
[ -r "$nldump_src" ] || nl_skip "no $nldump_src"
cc -O2 -o "$TMP/nldump" "$nldump_src" -lmnl || nl_fail "building nldump"

echo "== keep-up: ip -batch adds $n4 + $n6 routes while fibd runs (default buffer)"
nl_fibd_start "$TMP/keep.log" --lookup "$TMP/one" "$TMP/keep.out"
nl_wait_file "$TMP/keep.out"
rm -f "$TMP/keep.out"
t0=$(date +%s.%N)
ip -n "$NS" -batch "$TMP/batch" || nl_fail "ip -batch"
t1=$(date +%s.%N)
kill -USR1 "$FIBD_PID"
nl_wait_file "$TMP/keep.out" 120
t2=$(date +%s.%N)
rss=$(awk '/VmHWM/ { print $2 / 1024 " MiB" }' /proc/"$FIBD_PID"/status)
nl_fibd_stop
line=$(grep 'outputs written' "$TMP/keep.log" | tail -1)
stats=$(grep '^fibd: stats' "$TMP/keep.log" | tail -1)
echo "ip -batch: $(echo "$t1 - $t0" | bc) s; fibd complete $(echo "$t2 - $t1" | bc) s after ip exited; peak RSS $rss"
echo "$line"
echo "$stats"
case "$line" in *"$n4 v4 / $n6 v6"*) ;; *) nl_fail "keep-up: fibd does not hold $n4 v4 / $n6 v6 routes";; esac
case "$stats" in *" drops=0 "*) ;; *) nl_fail "keep-up: ENOBUFS at the default buffer";; esac

echo "== full dump, $RUNS runs: raw dump (nldump.c) vs fibd first dump to ready"
for i in $(seq "$RUNS"); do
	r4=$(ip netns exec "$NS" "$TMP/nldump" 4 | sed 's/.*seconds=//')
	r6=$(ip netns exec "$NS" "$TMP/nldump" 6 | sed 's/.*seconds=//')
	ip netns exec "$NS" "$FIBD" --once >"$TMP/once.log" 2>&1 || nl_fail "fibd --once"
	f=$(sed -n 's/^fibd: ready: .* in \([0-9.]*\) seconds/\1/p' "$TMP/once.log")
	grep -E '^fibd: (ready|ingest:)' "$TMP/once.log"
	echo "run $i: raw v4 $r4 s + v6 $r6 s = $(echo "$r4 + $r6" | bc) s; fibd $f s; ratio $(echo "scale=2; $f / ($r4 + $r6)" | bc)"
done
echo "PASS"
