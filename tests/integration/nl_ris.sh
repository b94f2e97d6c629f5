#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: a real full table: RIS rrc06 IPv4 (323,487 routes, 24 next hops)
# and LINX IPv6 (20,440 routes) loaded with `ip -batch`, ingested by
# fibd, compared with `ip route show` and with `ip route get` for
# SAMPLES (100,000) sampled addresses; then the LINX IPv4 update hour
# (18,141 adds, 5,305 withdraws) is replayed into the kernel while a
# fresh fibd does its first dump, and everything is compared again.
# Without the real tables beside the tree, the project generator supplies
# tables of the same sizes.
set -u
. "$(dirname "$0")/lib.sh"
nl_require
SAMPLES=${SAMPLES:-100000}
nl_ns nlris
ip -n "$NS" addr add 10.0.0.1/24 dev v0
ip -n "$NS" -6 addr add 2001:db8::1/64 dev v0 nodad

v4=$(nl_routes_file ris-rrc06-20100701-v4 4 300000)
v6=$(nl_routes_file linx-20141225-p69-v6 6 20000)
t0=$(date +%s.%N)
{ nl_batch_routes "$v4" v0 10.0.0.2 2001:db8::2; nl_batch_routes "$v6" v0 10.0.0.2 2001:db8::2; } |
	ip -n "$NS" -batch - || nl_fail "loading routes"
echo "loaded $(wc -l <"$v4") v4 + $(wc -l <"$v6") v6 routes in $(echo "$(date +%s.%N) - $t0" | bc) s"

{ nl_sample "$v4" $((SAMPLES * 9 / 10)) 11; nl_sample "$v6" $((SAMPLES / 10)) 12; } >"$TMP/addrs"

nl_fibd_start "$TMP/fibd1.log" --once --dump "$TMP/dump" --lookup "$TMP/addrs" "$TMP/lookup"
wait "$FIBD_PID" || nl_fail "fibd: $(cat "$TMP/fibd1.log")"
grep '^fibd: ready' "$TMP/fibd1.log"
nl_compare_dump 254 "$TMP/dump" full
nl_compare_get "$TMP/addrs" "$TMP/lookup" full-get

# Replay the update trace while a new fibd starts and dumps.
upd=$DATA/linx-20141217-p52-updates-v4.txt.gz
if [ -r "$upd" ]; then
	zcat "$upd" | awk '$2 == "a" { print "route replace " $3 " via " $4 " dev v0 onlink" }
		$2 == "w" { print "route del " $3 }' >"$TMP/updates"
else
	# generator fallback: withdraw every 7th route, re-add every 5th elsewhere
	awk 'NR % 7 == 0 { print "route del " $1 } NR % 5 == 0 { print "route replace " $1 " via 10.0.0.3 dev v0 onlink" }' "$v4" >"$TMP/updates"
fi
rm -f "$TMP/dump" "$TMP/lookup"
nl_fibd_start "$TMP/fibd2.log" --dump "$TMP/dump" --lookup "$TMP/addrs" "$TMP/lookup"
ip -n "$NS" -force -batch "$TMP/updates" 2>/dev/null
nl_wait_file "$TMP/lookup" 120
nl_fibd_sync "$TMP/dump" "$TMP/lookup"
grep -E '^fibd: (ready|stats)' "$TMP/fibd2.log" | tail -2
nl_compare_dump 254 "$TMP/dump" replay
nl_compare_get "$TMP/addrs" "$TMP/lookup" replay-get
nl_fibd_stop
echo "PASS"
