#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: event loss. fibd runs with a tiny event-socket receive buffer
# (-b 4096) while `ip -batch` churns 60,000 changes (replace, delete,
# add) over a 50,000-route table, the first half with fibd stopped
# (SIGSTOP) so that the overrun is certain: the kernel drops notifications
# (ENOBUFS), fibd must count them, resynchronise (dump + mark-and-sweep)
# and end with exactly the kernel's table. Runs in a few seconds.
set -u
. "$(dirname "$0")/lib.sh"
nl_require
N=${N:-50000}
nl_ns nlenobufs
ip -n "$NS" addr add 10.0.0.1/24 dev v0

src=$(nl_routes_file ris-rrc06-20100701-v4 4 $((N * 2)))
head -n $((N * 2)) "$src" >"$TMP/all"
awk 'NR % 2 == 1' "$TMP/all" >"$TMP/base"
nl_batch_routes "$TMP/base" v0 10.0.0.2 | ip -n "$NS" -batch - || nl_fail "loading routes"
[ "$(ip -n "$NS" route show | wc -l)" -gt "$N" ] || nl_fail "routes not loaded"

nl_fibd_start "$TMP/fibd.log" -b 4096 --dump "$TMP/dump"
nl_wait_file "$TMP/dump"
awk 'NR % 2 == 1 && NR % 6 == 1 { print "route replace " $1 " via 10.0.0." (NR % 200 + 3) " dev v0 onlink" }
	NR % 2 == 1 && NR % 6 == 3 { print "route del " $1 }
	NR % 2 == 0 { print "route add " $1 " via 10.0.0.77 dev v0 onlink" }' "$TMP/all" |
	head -n 60000 >"$TMP/churn"
# The first half while fibd is stopped, so the buffer surely overruns;
# the second half while fibd resyncs after it sees ENOBUFS.
head -n 30000 "$TMP/churn" >"$TMP/churn1"
tail -n +30001 "$TMP/churn" >"$TMP/churn2"
kill -STOP "$FIBD_PID"
ip -n "$NS" -force -batch "$TMP/churn1" 2>/dev/null
kill -CONT "$FIBD_PID"
ip -n "$NS" -force -batch "$TMP/churn2" 2>/dev/null
nl_fibd_sync "$TMP/dump"
grep '^fibd: stats' "$TMP/fibd.log" | tail -1
nl_compare_dump 254 "$TMP/dump" after-enobufs
grep -q 'drops=[1-9]' "$TMP/fibd.log" || nl_fail "no ENOBUFS seen: the test did not overrun the buffer"
grep -q 'resyncs=[1-9]' "$TMP/fibd.log" || nl_fail "ENOBUFS without a resync"
nl_fibd_stop
echo "PASS"
