#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: a BGP session reset. With the RIS table (323,487 routes) in the
# kernel and fibd ready, `ip -batch` withdraws every route and adds them
# all back with another next hop, as a daemon does after a session reset.
# fibd must follow at the default buffer without ENOBUFS, end equal to
# the kernel, and its peak RSS must stay bounded (reported; the limit is
# MAX_RSS_MB, 400 by default).
set -u
. "$(dirname "$0")/lib.sh"
nl_require
MAX_RSS_MB=${MAX_RSS_MB:-400}
nl_ns nlreset
ip -n "$NS" addr add 10.0.0.1/24 dev v0

v4=$(nl_routes_file ris-rrc06-20100701-v4 4 300000)
nl_batch_routes "$v4" v0 10.0.0.2 | ip -n "$NS" -batch - || nl_fail "loading routes"
nl_fibd_start "$TMP/fibd.log" --dump "$TMP/dump"
nl_wait_file "$TMP/dump" 120
rss0=$(awk '/VmRSS/ { print int($2 / 1024) }' /proc/"$FIBD_PID"/status)
{
	awk '{ print "route del " $1 }' "$v4"
	awk '{ print "route add " $1 " via 10.0.0.9 dev v0 onlink" }' "$v4"
} >"$TMP/reset"
t0=$(date +%s.%N)
ip -n "$NS" -batch "$TMP/reset" || nl_fail "session reset batch"
t1=$(date +%s.%N)
nl_fibd_sync "$TMP/dump"
t2=$(date +%s.%N)
hwm=$(awk '/VmHWM/ { print int($2 / 1024) }' /proc/"$FIBD_PID"/status)
stats=$(grep '^fibd: stats' "$TMP/fibd.log" | tail -1)
echo "reset of $(wc -l <"$v4") routes: ip -batch $(echo "$t1 - $t0" | bc) s; fibd in sync $(echo "$t2 - $t1" | bc) s later (dump file written included)"
echo "fibd RSS after ready ${rss0} MiB, peak ${hwm} MiB"
echo "$stats"
nl_compare_dump 254 "$TMP/dump" reset
case "$stats" in *" drops=0 "*) ;; *) nl_fail "ENOBUFS during the reset";; esac
[ "$hwm" -le "$MAX_RSS_MB" ] || nl_fail "peak RSS ${hwm} MiB > ${MAX_RSS_MB} MiB"
nl_fibd_stop
echo "PASS"
