#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: failed allocations in a running fibd. fault_preload.c (LD_PRELOAD)
# fails one in FAULT_ONE_IN of the allocations fibd's own code makes
# (the daemon and libfib: malloc, calloc, realloc, anonymous mmap) for a
# window of time:
#   1. during the first load of 20,000 routes;
#   2. after ready, while `ip -batch` churns 10,000 changes and clients
#      ask the control socket.
# fibd must live through both, answer, and end with exactly the kernel's
# table (a failed allocation in the ingest path asks for a resync, never
# leaves a wrong FIB). The failures must have happened: the preload's
# count is checked. Not under ASAN (its allocator would be bypassed).
set -u
. "$(dirname "$0")/lib.sh"
nl_require
command -v cc >/dev/null || nl_skip "no C compiler for the preload"
real=$(dirname "$FIBD")/.libs/$(basename "$FIBD")
[ -x "$real" ] || real=$FIBD
if ldd "$real" 2>/dev/null | grep -q 'libasan\|libtsan'; then
	nl_skip "sanitizer build: the preload would replace its allocator"
fi
cc -shared -fPIC -O1 -o "$TMP/fault.so" "$srcdir/tests/integration/fault_preload.c" -ldl ||
	nl_fail "building fault_preload.so"
: "${FIBCTL:=./client/fibctl}"
ctl() { "$FIBCTL" -s "$FIBD_SOCK" "$@"; }

nl_ns nlfault
ip -n "$NS" addr add 10.0.0.1/24 dev v0
src=$(nl_routes_file ris-rrc06-20100701-v4 4 40000)
head -n 40000 "$src" >"$TMP/all"
awk 'NR % 2 == 1' "$TMP/all" >"$TMP/base"
nl_batch_routes "$TMP/base" v0 10.0.0.2 | ip -n "$NS" -batch - || nl_fail "loading routes"

# start fibd with faults from A s for F s, one allocation in N failing
fault_start() {
	FAULT_ARM_BYTES=${ARM:-} FAULT_AFTER_S=$1 FAULT_FOR_S=$2 FAULT_ONE_IN=$3 LD_PRELOAD="$TMP/fault.so" \
		nl_fibd_start "$TMP/fibd.log" --dump "$TMP/dump"
}
# the count the preload printed at exit
fault_count() { sed -n 's/^fault_preload: \([0-9]*\) of .*/\1/p' "$TMP/fibd.log" | tail -1; }
alive() { kill -0 "$FIBD_PID" 2>/dev/null || nl_fail "fibd died $1: $(tail -20 "$TMP/fibd.log")"; }

# 1. The first load. The window ends before the comparison: whatever
# failed must have been redone by a resync.
ARM=33554432 fault_start 0 1.5 4 # from the dump set's allocation on
nl_wait_file "$TMP/dump" 120
sleep 2
alive "after faults in the first load"
nl_fibd_sync "$TMP/dump"
nl_compare_dump 254 "$TMP/dump" first-load
nl_fibd_stop
n=$(fault_count)
[ "${n:-0}" -gt 0 ] || nl_fail "no allocation failed during the first load: $(grep fault_preload "$TMP/fibd.log")"
echo "ok: first load: $n allocations failed, $(grep -c 'resync' "$TMP/fibd.log") resync lines, FIB equal to the kernel's"

# 2. Churn and clients while allocations fail.
awk 'NR % 2 == 1 && NR % 6 == 1 { print "route replace " $1 " via 10.0.0." (NR % 200 + 3) " dev v0 onlink" }
	NR % 2 == 1 && NR % 6 == 3 { print "route del " $1 }
	NR % 2 == 0 { print "route add " $1 " via 10.0.0.77 dev v0 onlink" }' "$TMP/all" |
	head -n 10000 >"$TMP/churn"
rm -f "$TMP/dump"
fault_start 4 5 30
nl_wait_file "$TMP/dump" 120
sleep 3 # the window opens at 4 s
ip -n "$NS" -force -batch "$TMP/churn" 2>/dev/null &
bp=$!
answered=0
for i in $(seq 40); do
	ctl show summary >/dev/null 2>&1 && answered=$((answered + 1))
	ctl lookup 10.0.0.9 >/dev/null 2>&1
	sleep 0.1
done
wait $bp
sleep 4 # past the window, and time for a pending resync
alive "after faults during churn"
[ "$answered" -gt 0 ] || nl_fail "no control answer while allocations failed"
nl_fibd_sync "$TMP/dump"
nl_compare_dump 254 "$TMP/dump" churn
ctl show summary | grep -q '^ready *true' || nl_fail "not ready after the faults"
nl_fibd_stop
n=$(fault_count)
[ "${n:-0}" -gt 0 ] || nl_fail "no allocation failed during the churn: $(grep fault_preload "$TMP/fibd.log")"
echo "ok: churn: $n allocations failed, $answered of 40 summaries answered, $(grep -c 'resync' "$TMP/fibd.log") resync lines, FIB equal to the kernel's"
echo "PASS"
