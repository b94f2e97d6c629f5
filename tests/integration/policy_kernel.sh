#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: fibd answers flows as the kernel does: rules, tables, multipath, source
#
# Scenarios after the kernel's own selftests (fib_rule_tests.sh,
# fib_tests.sh, fib_nexthops.sh), in one namespace with three veth links:
#   1 defaults: local and broadcast routes, main, legacy ECMP with weights
#   2 every selector: from, to, iif (incl. `iif lo` for output flows), oif,
#     fwmark/mask, tos, dscp, ipproto, sport and dport ranges, uidrange, not
#   3 every action: lookup, goto, nop, blackhole, unreachable, prohibit;
#     throw, unreachable, prohibit and blackhole routes;
#     suppress_prefixlength and suppress_ifgroup
#   4 nexthop objects: a single path, an mpath group with weights
#   4r resilient groups, both families: the path is the kernel's bucket
#     (hash % buckets); buckets moved by a group replace and by the
#     kernel's idle timer (a bucket notification, and fibd's periodic
#     bucket re-dump in case one is missed)
#   5 a link going down under a multipath route
#   6 rules added and removed while flows are asked, then compared
#   7 IPv6: rules, tables, ECMP
#   8 VRF (skipped when the kernel has no vrf devices)
# After each: random flows asked of fibd (`fibctl --json lookup -`) and of
# `ip route get` (route_get_compare.py), equal field by field;
# `fibctl show rules` against `ip rule show`; and the whole table set,
# `ip route show table all` of both families against `fibctl show
# routes` (table_compare.py: prefix, table, type, tos, metric, gateways
# and devices); then, the decision cache flushed, the same flows twice
# more of fibd, the second pass answered from the cache where it took
# them, equal to the first (at least one scenario must hit the cache). The multipath hash seed is
# pinned (net.ipv4.fib_multipath_hash_seed), so the kernel's path is
# reproducible and must be fibd's.
set -u
. "$(dirname "$0")/lib.sh"
: "${FIBCTL:=./client/fibctl}"
FLOWS=${FLOWS:-300}
nl_require
command -v python3 >/dev/null || nl_skip "no python3"
[ -x "$FIBCTL" ] || nl_fail "fibctl not built at $FIBCTL"
CMP="python3 $srcdir/tests/integration/route_get_compare.py"
TCMP="python3 $srcdir/tests/integration/table_compare.py"

nl_ns pol
ipn() { ip -n "$NS" "$@"; }
sx() { ip netns exec "$NS" sysctl -qw "$@"; }

for i in 1 2 3; do
	ipn link add d$i type veth peer name p$i
	ipn link set d$i up
	ipn link set p$i up
	ipn addr add 10.1.$i.1/24 dev d$i
	ipn addr add 2001:db8:$i::1/64 dev d$i nodad
done
ipn link set d3 group 5
sx net.ipv4.ip_forward=1
sx net.ipv6.conf.all.forwarding=1
sx net.ipv4.conf.all.rp_filter=0
sx net.ipv4.conf.default.rp_filter=0
for d in d1 d2 d3; do sx net.ipv4.conf.$d.rp_filter=0; done
sx net.ipv4.fib_multipath_hash_seed=4242 || nl_skip "kernel without fib_multipath_hash_seed: the multipath choice cannot be pinned"

ipn route add default via 10.1.1.254
ipn route add 198.51.100.0/24 via 10.1.2.254
ipn route add 203.0.113.0/24 nexthop via 10.1.1.254 weight 1 nexthop via 10.1.2.254 weight 3 \
	nexthop via 10.1.3.254 weight 2
ipn route add 192.0.2.0/24 dev d3 src 10.1.3.1
ipn -6 route add default via 2001:db8:1::fe
ipn -6 route add 2001:db8:100::/48 nexthop via 2001:db8:1::fe nexthop via 2001:db8:2::fe weight 2

# accel_min_routes 2: the rules' tables get compiled tables of their own
# as they fill, so the answers compared below come from them too.
echo "fib:
  accel_min_routes: 2
control:
  socket: $FIBD_SOCK
lookup:
  socket: $TMP/lookup.sock" >"$TMP/fibd.yaml"
nl_fibd_start "$TMP/fibd.log" --dump "$TMP/dump"
nl_wait_file "$TMP/dump"

# gen_flows N SEED: random flows over the addresses, marks, devices and
# ports the scenarios use, in `ip route get` syntax.
gen_flows() {
	python3 - "$1" "$2" <<'EOT'
import random, sys
n, seed = int(sys.argv[1]), int(sys.argv[2])
r = random.Random(seed)
v4 = ["8.8.8.8", "198.51.100.%d", "203.0.113.%d", "192.0.2.%d", "10.1.%d.1" % 2, "10.1.1.%d",
      "10.1.3.255", "10.1.2.%d", "172.16.%d.1", "127.0.0.1", "100.64.0.%d"]
v6 = ["2001:db8:100::%x", "2001:db8:1::1", "2001:db8:2::%x", "2001:4860::%x", "2001:db8:300::%x",
      "fe80::%x", "::1"]
srcs4 = ["10.9.0.%d", "10.1.1.1", "10.1.3.1", "172.31.0.%d"]
srcs6 = ["2001:db8:9::%x", "2001:db8:1::1"]
for _ in range(n):
    six = r.random() < 0.3
    a = r.choice(v6 if six else v4)
    if "%" in a:
        a = a % r.randrange(1, 255)
    w = [a]
    inp = r.random() < 0.2
    if inp:
        w += ["from", (r.choice(srcs6[:1]) if six else r.choice(["10.9.0.%d", "172.31.0.%d"])) % r.randrange(1, 255)]
        w += ["iif", r.choice(["d1", "d2", "d3"])]
    elif r.random() < 0.3:
        s = r.choice(srcs6 if six else srcs4)
        w += ["from", s % r.randrange(1, 255) if "%" in s else s]
    if not inp and r.random() < 0.15:
        w += ["oif", r.choice(["d1", "d2", "d3"])]
    if r.random() < 0.5:
        w += ["mark", "0x%x" % r.choice([7, 0x17, 0x42, 0x100, 0x200, 0x300, 0x400, 0x500, 0x600, 0x700, 0x800, 0x900])]
    if not six and r.random() < 0.15:
        w += ["tos", "0x%x" % r.choice([0x10, 0x08, 0x04])]
    if r.random() < 0.4:
        w += ["ipproto", r.choice(["tcp", "udp"]), "sport", str(r.choice([53, 1500, 3000, 40000])),
              "dport", str(r.choice([53, 80, 443, 8080]))]
    if not inp and r.random() < 0.15:
        w += ["uid", str(r.choice([0, 1000, 1500, 2500]))]
    print(" ".join(w))
EOT
}

step=0
compare() {
	local tag=$1 seed=$2
	step=$((step + 1))
	nl_fibd_sync "$TMP/dump"
	gen_flows "$FLOWS" "$seed" >"$TMP/flows.$tag"
	$CMP "$NS" "$FIBCTL" "$FIBD_SOCK" "$TMP/flows.$tag" || nl_fail "$tag: fibd's answers differ from ip route get"
	# the decision cache: emptied, the same flows twice more: the first
	# pass resolved (and cached), the second answered from the cache
	# where it took them; both read the same
	"$FIBCTL" -s "$FIBD_SOCK" flush cache >/dev/null || nl_fail "$tag: flush cache failed"
	h0=$(cache_hits)
	for pass in 2 3; do
		"$FIBCTL" -s "$FIBD_SOCK" --json lookup - <"$TMP/flows.$tag" >"$TMP/answers.$tag.$pass" 2>&1 ||
			nl_fail "$tag: fibctl lookup - failed on pass $pass"
	done
	cmp -s "$TMP/answers.$tag.2" "$TMP/answers.$tag.3" ||
		{ diff "$TMP/answers.$tag.2" "$TMP/answers.$tag.3" | head; nl_fail "$tag: cached answers differ from uncached ones"; }
	hits=$(($(cache_hits) - h0))
	cache_hits_total=$((cache_hits_total + hits))
	# ip rule show vs fibctl show rules, both families
	{ ipn -4 rule show; ipn -6 rule show; } | sed 's/[[:space:]]*$//' >"$TMP/rules.kernel"
	"$FIBCTL" -s "$FIBD_SOCK" show rules | sed 's/[[:space:]]*$//' >"$TMP/rules.fibd"
	diff "$TMP/rules.kernel" "$TMP/rules.fibd" >"$TMP/rules.diff" ||
		{ cat "$TMP/rules.diff"; nl_fail "$tag: fibctl show rules differs from ip rule show"; }
	$TCMP "$NS" "$FIBCTL" "$FIBD_SOCK" >"$TMP/tables.$tag" ||
		{ cat "$TMP/tables.$tag"; nl_fail "$tag: fibctl show routes differs from ip route show table all"; }
	echo "ok: $tag: $FLOWS flows equal to ip route get, $(wc -l <"$TMP/rules.fibd") rules equal, $(tail -1 "$TMP/tables.$tag"), asked again: the same, $hits from the decision cache"
}

# the decision cache's hits so far
cache_hits() { "$FIBCTL" -s "$FIBD_SOCK" show cache | awk '$1 == "hits" { print $2 }'; }
cache_hits_total=0

# res_flows N SEED: flows into the resilient groups' prefixes, spread over
# sources and ports so that every bucket is asked.
res_flows() {
	python3 - "$1" "$2" <<'EOT'
import random, sys
n, seed = int(sys.argv[1]), int(sys.argv[2])
r = random.Random(seed)
for _ in range(n):
    six = r.random() < 0.4
    a = "2001:db8:400::%x" % r.randrange(1, 65535) if six else "100.64.1.%d" % r.randrange(1, 255)
    w = [a]
    if r.random() < 0.5:
        w += ["from", "2001:db8:9::%x" % r.randrange(1, 65535) if six else "10.1.1.1"]
    if r.random() < 0.5:
        w += ["ipproto", r.choice(["tcp", "udp"]), "sport", str(r.randrange(1, 65535)),
              "dport", str(r.randrange(1, 65535))]
    print(" ".join(w))
EOT
}

# compare_res TAG SEED: compare, then res_flows against ip route get.
compare_res() {
	compare "$1" "$2"
	res_flows "$FLOWS" "$2" >"$TMP/flows.res.$1"
	$CMP "$NS" "$FIBCTL" "$FIBD_SOCK" "$TMP/flows.res.$1" ||
		nl_fail "$1: fibd's resilient paths differ from ip route get"
	echo "ok: $1: $FLOWS flows into resilient groups equal to ip route get"
}

# buckets ID: the group's bucket -> nexthop id table, one line
buckets() {
	ipn -j nexthop bucket show id "$1" |
		python3 -c 'import json,sys; print(" ".join("%d:%d" % (b["bucket"]["index"], b["bucket"]["nhid"]) for b in sorted(json.load(sys.stdin), key=lambda b: b["bucket"]["index"])))'
}

compare defaults 1

# 2: every selector, each into its own table
ipn route add 198.51.100.0/24 via 10.1.3.254 table 100
ipn route add default via 10.1.2.254 table 100
ipn route add 198.51.100.0/24 dev d3 src 10.1.3.1 table 102
ipn route add 203.0.113.0/24 via 10.1.1.254 table 102
ipn -6 route add 2001:db8:100::/48 via 2001:db8:3::fe table 100
ipn rule add pref 100 from 10.9.0.0/24 lookup 100
ipn rule add pref 101 to 203.0.113.128/25 lookup 102
ipn rule add pref 102 iif d1 lookup 100
ipn rule add pref 103 iif lo fwmark 0x17 lookup 102
ipn rule add pref 104 oif d3 lookup 102
ipn rule add pref 105 fwmark 0x42/0xff lookup 100
ipn rule add pref 106 tos 0x10 lookup 102
ipn rule add pref 107 ipproto udp dport 53 lookup 102
ipn rule add pref 108 sport 1000-2000 lookup 100
ipn rule add pref 109 uidrange 1000-1999 lookup 102
ipn rule add pref 110 not from 10.0.0.0/8 fwmark 0x700 lookup 100
ipn rule add pref 111 ipproto tcp dport 8000-8100 lookup 100
ipn rule add pref 112 dscp 2 lookup 100 2>/dev/null || echo "note: ip(8) without dscp rules"
ipn -6 rule add pref 100 from 2001:db8:9::/48 lookup 100
ipn -6 rule add pref 101 fwmark 0x42 lookup 100
compare selectors 2

# 3: every action, route types, suppression
ipn route add unreachable 198.51.100.0/26 table 101
ipn route add prohibit 198.51.100.64/26 table 101
ipn route add blackhole 198.51.100.128/26 table 101
ipn route add throw 198.51.100.192/26 table 101
ipn route add 198.51.100.192/26 via 10.1.3.254 table 103
ipn route add default via 10.1.3.254 table 103
ipn rule add pref 200 fwmark 0x100 goto 300
ipn rule add pref 201 fwmark 0x100 unreachable
ipn rule add pref 202 fwmark 0x200 prohibit
ipn rule add pref 203 fwmark 0x300 blackhole
ipn rule add pref 204 fwmark 0x400 unreachable
ipn rule add pref 205 fwmark 0x500 nop
ipn rule add pref 206 fwmark 0x500 lookup 101
ipn rule add pref 207 fwmark 0x500 lookup 103
ipn rule add pref 210 fwmark 0x600 lookup main suppress_prefixlength 0
ipn rule add pref 211 fwmark 0x600 lookup 103
ipn rule add pref 212 fwmark 0x800 lookup main suppress_ifgroup 5
ipn rule add pref 213 fwmark 0x800 lookup 100
ipn rule add pref 300 fwmark 0x100 lookup 101
ipn rule add pref 301 fwmark 0x100 lookup 103
ipn -6 rule add pref 200 fwmark 0x200 prohibit
ipn -6 rule add pref 201 fwmark 0x600 lookup main suppress_prefixlength 0
ipn -6 route add unreachable 2001:db8:300::/48 table 101
ipn -6 rule add pref 202 fwmark 0x500 lookup 101
compare actions 3
# the tables that crossed the threshold route by route are built on the
# compaction thread at the next 1 s tick; show trie's figures are up to
# 1 s old
has_compiled() {
	compiled=$("$FIBCTL" -s "$FIBD_SOCK" show trie 4 | grep '^v4.compiled_table_ids')
	for tb in 254 100 101 102 103; do
		echo "$compiled" | grep -qE "[ ,]$tb(,|\$)" || return 1
	done
}
for i in $(seq $((100 * NL_SLOW))); do
	has_compiled && break
	sleep 0.1
done
has_compiled || nl_fail "a table has no compiled table: $compiled"
grep -q 'compiled tables built on the compaction thread' "$TMP/fibd.log" ||
	nl_fail "no compiled table built on the compaction thread: $(tail -5 "$TMP/fibd.log")"
echo "$compiled"
compare compiled 3
# a reload to accel_min_routes 0 retires the extra tables at once; back
# to 2, the compaction thread builds them again
sed -i 's/accel_min_routes: 2/accel_min_routes: 0/' "$TMP/fibd.yaml"
kill -HUP "$FIBD_PID"
for i in $(seq $((100 * NL_SLOW))); do
	compiled=$("$FIBCTL" -s "$FIBD_SOCK" show trie 4 | grep '^v4.compiled_table_ids')
	[ "$(echo $compiled | awk '{print $2}')" = 254 ] && break
	sleep 0.1
done
[ "$(echo $compiled | awk '{print $2}')" = 254 ] || nl_fail "reload to 0: $compiled"
sed -i 's/accel_min_routes: 0/accel_min_routes: 2/' "$TMP/fibd.yaml"
kill -HUP "$FIBD_PID"
for i in $(seq $((100 * NL_SLOW))); do
	has_compiled && break
	sleep 0.1
done
has_compiled || nl_fail "reload to 2: a table has no compiled table: $compiled"
echo "ok: reloads: accel_min_routes 0, then 2: $compiled"

# 4: nexthop objects
ipn nexthop add id 1 via 10.1.1.254 dev d1
ipn nexthop add id 2 via 10.1.2.254 dev d2
ipn nexthop add id 3 via 10.1.3.254 dev d3
ipn nexthop add id 10 group 1/2,3/3,2
ipn route add 100.64.0.0/24 nhid 10
ipn route add 172.16.0.0/16 nhid 2
compare nexthops 4

# 4r: resilient groups. idle_timer 0: every bucket is idle, so a replace
# migrates at once (the RTM_NEWNEXTHOP makes fibd resync and re-dump the
# buckets).
if ipn nexthop add id 20 group 1/2,2/3 type resilient buckets 32 idle_timer 0 2>/dev/null; then
	ipn nexthop add id 21 via 2001:db8:1::fe dev d1
	ipn nexthop add id 22 via 2001:db8:2::fe dev d2
	ipn nexthop add id 23 group 21/22 type resilient buckets 16 idle_timer 0
	ipn route add 100.64.1.0/24 nhid 20
	ipn -6 route add 2001:db8:400::/48 nhid 23
	compare_res resilient 41
	ipn nexthop replace id 20 group 1,3/2/3 type resilient buckets 32 idle_timer 0
	ipn nexthop replace id 23 group 21,3/22 type resilient buckets 16 idle_timer 0
	compare_res resilient-replaced 42
	# idle_timer 6: the buckets ip route get has just used stay put after
	# the replace, then move once idle, after the replace's event: fibd
	# follows the kernel's bucket notifications (Linux 6.18) and re-dumps
	# the buckets every 10 s in case one is missed.
	for i in $(seq 1 254); do echo "route get 100.64.1.$i"; done >"$TMP/flows.busy"
	ipn nexthop replace id 20 group 1/2/3 type resilient buckets 32 idle_timer 0 # balanced at once
	ipn nexthop replace id 20 group 1/2/3 type resilient buckets 32 idle_timer 6
	ipn -batch "$TMP/flows.busy" >"$TMP/busy.out" 2>&1 || { tail -3 "$TMP/busy.out"; echo "note: route get batch failed"; }
	ipn nexthop replace id 20 group 1,5/2/3 type resilient buckets 32 idle_timer 6
	before=$(buckets 20)
	t0=$(date +%s)
	nl_fibd_sync "$TMP/dump" # the replace's resync, before the idle timer
	synced=$(($(date +%s) - t0))
	for i in $(seq 1 30); do
		ipn -j nexthop show id 20 | python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)[0]["resilient_args"].get("unbalanced_time", 0) == 0)' || break
		sleep 1
	done
	after=$(buckets 20)
	moved=$(python3 -c 'import sys; a, b = sys.argv[1].split(), sys.argv[2].split(); print(sum(x != y for x, y in zip(a, b)))' "$before" "$after")
	sleep 12 # fibd re-dumps the buckets every 10 s (daemon/ingest_priv.h)
	compare_res resilient-idle 44
	nhb=$(grep -o 'nh_bucket_dumps=[0-9]*/[0-9]*' "$TMP/fibd.log" | tail -1)
	echo "buckets after the replace: $before"
	echo "buckets once balanced:     $after"
	echo "note: $moved of 32 buckets moved by the idle timer after the replace; resync took ${synced} s; fibd $nhb (bucket re-dumps / re-dumps that found a bucket moved)"
	[ "$moved" -gt 0 ] ||
		echo "note: the kernel balanced the group at the replace: no later move to follow this run"
else
	echo "skip: resilient group scenario: this kernel has no resilient nexthop groups"
fi

# 5: a link goes down under the multipath routes
ipn link set p2 down
ipn link set d2 down
compare linkdown 5
ipn link set d2 up
ipn link set p2 up
ipn route replace 198.51.100.0/24 via 10.1.2.254
compare linkup 6

# 6: rules added and removed while flows are asked
gen_flows 200 7 >"$TMP/flows.churn"
(
	for i in $(seq 1 50); do
		ipn rule add pref 150 fwmark 0x900 lookup 100
		ipn rule add pref 151 from 10.9.0.0/16 to 198.51.100.0/24 lookup 102
		ipn rule del pref 150
		ipn rule del pref 151
	done
) &
churn=$!
for i in 1 2 3 4 5; do
	"$FIBCTL" -s "$FIBD_SOCK" --json lookup - <"$TMP/flows.churn" >/dev/null || nl_fail "lookup during rule churn"
done
wait $churn
ipn rule add pref 150 fwmark 0x900 lookup 100
compare churn 8

# 8: VRF
if ipn link add vrf-blue type vrf table 1000 2>/dev/null; then
	ipn link set vrf-blue up
	ipn link set d3 master vrf-blue
	ipn route add 198.51.100.0/24 via 10.1.3.254 vrf vrf-blue
	compare vrf 9
else
	echo "skip: VRF scenario: this kernel has no vrf devices (ip link add type vrf fails)"
fi

[ "$cache_hits_total" -gt 0 ] ||
	nl_fail "no flow was ever answered from the decision cache: cached and uncached answers were not compared"
nl_fibd_stop
echo "PASS: policy_kernel ($step comparisons, $cache_hits_total answers from the decision cache)"
