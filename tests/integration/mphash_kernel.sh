#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: fib_mphash picks the path the kernel picks (fib/mphash.h)
#
# In a namespace: a veth pair, a 4-path IPv4 ECMP route with weights
# 1,2,5,3 and a 4-path IPv6 one with weights 3,1,4,2, the hash seed pinned
# (net.ipv4.fib_multipath_hash_seed, also read by IPv6). For each hash
# policy (0, 1, 2, 3 with two field sets) and two seeds, random flows go
# through one `ip -o -force -batch` process per family and policy: output
# flows without `from` (the hashed source is the unspecified address),
# output flows from the next hops' source address and from other sources
# (IPv4: lo's 192.0.2.1-16; no next hop has them as nh_saddr, so Linux's
# source preference in fib_select_multipath does not apply), input flows
# (`iif v1`, a random source); TCP, UDP, ICMP and no protocol, random
# ports (ICMP with ports too: IPv6 hashes them, IPv4 does not). Then
# IPv6 flows with random flow labels through mphash_rtget, since `ip
# route get` of iproute2 < 6.14 sends none (policies 0, 1, 3). Each answer's
# gateway gives the kernel's path; tests/integration/mphash_tool gives
# fib_mphash's hash and the path of the same upper bounds (fib_rebalance).
# Every flow must agree. Forwarding is on (input flows, and IPv6 then
# skips the neighbour-reachability check that could move a flow).
#
# Root and `ip netns` needed, else skipped (exit 77). MPHASH_FLOWS (500)
# flows per family, policy and seed. MPHASH_GOLDEN=FILE appends the first
# 8 flows of each run to FILE as "FAMILY POLICY FIELDS SEED SRC DST PROTO
# SPORT DPORT KERNEL_PATH HASH [FLOWLABEL]" lines (hex flow label): the
# golden vectors of tests/unit/mphash_test.c come from there.
set -eu

: "${MPHASH_TOOL:=./tests/integration/mphash_tool}"
: "${MPHASH_RTGET:=./tests/integration/mphash_rtget}"
FLOWS=${MPHASH_FLOWS:-500}
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
command -v ip >/dev/null || { echo "SKIP: no ip(8)"; exit 77; }
[ -x "$MPHASH_TOOL" ] && [ -x "$MPHASH_RTGET" ] ||
	{ echo "FAIL: $MPHASH_TOOL or $MPHASH_RTGET not built"; exit 1; }
NS=fibhash-$$
ip netns add "$NS" 2>/dev/null || { echo "SKIP: ip netns unavailable"; exit 77; }
TMP=$(mktemp -d /tmp/fibhash.XXXXXX)
cleanup() {
	ip netns del "$NS" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ipn() { ip -n "$NS" "$@"; }
sysn() { ip netns exec "$NS" sysctl -qw "$@"; }
sysn net.ipv4.fib_multipath_hash_seed=1 2>/dev/null ||
	{ echo "SKIP: no net.ipv4.fib_multipath_hash_seed (kernel < 6.11)"; exit 77; }

sysn net.ipv6.conf.default.addr_gen_mode=1
sysn net.ipv4.ip_forward=1
sysn net.ipv6.conf.all.forwarding=1
sysn net.ipv4.conf.all.rp_filter=0
sysn net.ipv4.conf.default.rp_filter=0
ipn link set lo up
ipn link add v0 type veth peer name v1
ipn link set v0 up
ipn link set v1 up
ipn addr add 10.0.0.1/24 dev v0
ipn addr add 10.9.0.1/24 dev v1
ipn -6 addr add 2001:db8::1/64 dev v0 nodad
ipn -6 addr add 2001:db8:9::1/64 dev v1 nodad
# other local sources (IPv4 output flows need a local `from`)
for i in $(seq 1 16); do ipn addr add 192.0.2.$i/32 dev lo; done
W4=1,2,5,3
W6=3,1,4,2
ipn route add 198.18.0.0/15 \
	nexthop via 10.0.0.11 weight 1 nexthop via 10.0.0.12 weight 2 \
	nexthop via 10.0.0.13 weight 5 nexthop via 10.0.0.14 weight 3
ipn -6 route add 2001:db8:100::/48 \
	nexthop via 2001:db8::11 weight 3 nexthop via 2001:db8::12 weight 1 \
	nexthop via 2001:db8::13 weight 4 nexthop via 2001:db8::14 weight 2

# The kernel's order of the paths (IPv6 may list them otherwise than
# given) and their weights, from `ip route show`: "GW WEIGHT" lines.
paths() {
	ipn "$1" route show "$2" | awk '$1 == "nexthop" {
		for (i = 2; i < NF; i++) { if ($i == "via") g = $(i + 1); if ($i == "weight") w = $(i + 1) }
		print g, w }'
}
paths -4 198.18.0.0/15 >"$TMP/p4"
paths -6 2001:db8:100::/48 >"$TMP/p6"
[ "$(wc -l <"$TMP/p4")" = 4 ] && [ "$(wc -l <"$TMP/p6")" = 4 ] ||
	{ echo "FAIL: routes not installed as 4 paths"; cat "$TMP/p4" "$TMP/p6"; exit 1; }
W4=$(awk '{ printf "%s%s", (NR > 1 ? "," : ""), $2 }' "$TMP/p4")
W6=$(awk '{ printf "%s%s", (NR > 1 ? "," : ""), $2 }' "$TMP/p6")

# flows FAMILY N SEED: "KIND SRC DST PROTO SPORT DPORT" lines; KIND out
# (no from), outsrc (from the next hops' source), outlo (from another
# source: IPv4 one of lo's, IPv6 any), in (iif v1).
flows() {
	awk -v fam="$1" -v n="$2" -v seed="$3" 'BEGIN {
		srand(seed)
		split("out outsrc outlo in", kinds, " ")
		if (fam == 4) split("0 6 17 1", protos, " "); else split("0 6 17 58", protos, " ")
		for (i = 0; i < n; i++) {
			kind = kinds[int(rand() * 4) + 1]
			proto = protos[int(rand() * 4) + 1]
			sp = int(rand() * 65535) + 1; dp = int(rand() * 65535) + 1
			if (rand() < 0.1) { sp = 0; dp = 0 }
			if (fam == 4) {
				dst = sprintf("198.%d.%d.%d", 18 + int(rand() * 2), int(rand() * 256), int(rand() * 254) + 1)
				src = kind == "in" ? sprintf("100.%d.%d.%d", 64 + int(rand() * 64), int(rand() * 256), int(rand() * 254) + 1) : "10.0.0.1"
				if (kind == "outlo") src = sprintf("192.0.2.%d", int(rand() * 16) + 1)
			} else {
				dst = sprintf("2001:db8:100:%x:%x::%x", int(rand() * 65536), int(rand() * 65536), int(rand() * 65535) + 1)
				src = kind == "out" || kind == "outsrc" ? "2001:db8::1" : sprintf("2001:db8:ff:%x::%x", int(rand() * 65536), int(rand() * 65535) + 1)
			}
			if (kind == "out") src = "-"
			print kind, src, dst, proto, sp, dp
		}
	}'
}

# flows6fl N SEED IIF: IPv6 "SRC DST PROTO SPORT DPORT FLOWLABEL IIF"
# lines, random flow labels (one in ten 0), for mphash_rtget.
flows6fl() {
	awk -v n="$1" -v seed="$2" -v iif="$3" 'BEGIN {
		srand(seed)
		split("0 6 17 58", protos, " ")
		for (i = 0; i < n; i++) {
			k = int(rand() * 3)
			proto = protos[int(rand() * 4) + 1]
			sp = int(rand() * 65535) + 1; dp = int(rand() * 65535) + 1
			label = rand() < 0.1 ? 0 : int(rand() * 1048576)
			dst = sprintf("2001:db8:100:%x:%x::%x", int(rand() * 65536), int(rand() * 65536), int(rand() * 65535) + 1)
			src = k == 0 ? "-" : sprintf("2001:db8:ff:%x::%x", int(rand() * 65536), int(rand() * 65535) + 1)
			printf "%s %s %d %d %d %x %d\n", src, dst, proto, sp, dp, label, k == 2 ? iif : 0
		}
	}'
}

# check FAMILY POLICY FIELDS SEED: the kernel's paths against the tool's.
TOTAL=0
check() {
	local fam=$1 pol=$2 fields=$3 seed=$4 w gw
	sysn net.ipv4.fib_multipath_hash_seed="$seed"
	sysn net.ipv4.fib_multipath_hash_policy="$pol"
	sysn net.ipv6.fib_multipath_hash_policy="$pol"
	sysn net.ipv4.fib_multipath_hash_fields="$fields"
	sysn net.ipv6.fib_multipath_hash_fields="$fields"
	if [ "$fam" = 4 ]; then w=$W4; else w=$W6; fi
	flows "$fam" "$FLOWS" "$((seed + pol * 7 + fields))" >"$TMP/flows"
	awk '{
		c = "route get " $3
		if ($1 == "in") c = c " from " $2 " iif v1"
		if ($1 == "outsrc" || $1 == "outlo") c = c " from " $2
		if ($4 != 0) c = c " ipproto " $4
		if ($5 != 0) c = c " sport " $5 " dport " $6
		print c }' "$TMP/flows" >"$TMP/batch"
	ip -n "$NS" -"$fam" -o -force -batch "$TMP/batch" >"$TMP/kout" 2>"$TMP/kerr" || true
	# the kernel's path: the index of the answer's gateway in the route
	awk 'NR == FNR { idx[$1] = NR - 1; next }
		{ g = "?"; for (i = 1; i < NF; i++) if ($i == "via") g = $(i + 1)
		  print ((g in idx) ? idx[g] : "?") }' "$TMP/p$fam" "$TMP/kout" >"$TMP/kpath"
	cut -d' ' -f2- "$TMP/flows" | "$MPHASH_TOOL" -"$fam" "$pol" "$fields" "$seed" "$w" \
		>"$TMP/tool"
	cut -d' ' -f1 "$TMP/tool" >"$TMP/tpath"
	if [ "$(wc -l <"$TMP/kpath")" != "$FLOWS" ]; then
		echo "FAIL: IPv$fam policy $pol: $(wc -l <"$TMP/kpath") kernel answers for $FLOWS flows"
		head -5 "$TMP/kerr"
		exit 1
	fi
	if ! cmp -s "$TMP/kpath" "$TMP/tpath"; then
		echo "FAIL: IPv$fam policy $pol fields $fields seed $seed:" \
			"$(paste -d' ' "$TMP/kpath" "$TMP/tpath" | awk '$1 != $2' | wc -l) of $FLOWS differ"
		paste -d' ' "$TMP/kpath" "$TMP/tpath" "$TMP/flows" | awk '$1 != $2' | head -10
		exit 1
	fi
	# every path taken at least once: the flows did exercise the bounds
	[ "$(sort -u "$TMP/kpath" | wc -l)" = 4 ] ||
		{ echo "FAIL: IPv$fam policy $pol: not every path taken"; exit 1; }
	if [ -n "${MPHASH_GOLDEN:-}" ]; then
		paste -d' ' "$TMP/flows" "$TMP/kpath" "$TMP/tool" | head -8 |
			awk -v f="$fam" -v p="$pol" -v x="$fields" -v s="$seed" \
				'{ print f, p, x, s, $2, $3, $4, $5, $6, $7, $9 }' >>"$MPHASH_GOLDEN"
	fi
	TOTAL=$((TOTAL + FLOWS))
	echo "ok IPv$fam policy $pol fields $fields seed $seed: $FLOWS flows agree"
}

# check6fl POLICY FIELDS SEED: IPv6 flows with flow labels, asked with
# mphash_rtget (RTA_FLOWLABEL); skipped when the kernel rejects it.
FLOWLABEL=yes
check6fl() {
	local pol=$1 fields=$2 seed=$3 rc=0
	[ "$FLOWLABEL" = yes ] || return 0
	sysn net.ipv4.fib_multipath_hash_seed="$seed"
	sysn net.ipv6.fib_multipath_hash_policy="$pol"
	sysn net.ipv6.fib_multipath_hash_fields="$fields"
	flows6fl "$FLOWS" "$((seed + pol * 11 + fields))" "$IIF6" >"$TMP/flows"
	ip netns exec "$NS" "$MPHASH_RTGET" <"$TMP/flows" >"$TMP/kout" || rc=$?
	if [ "$rc" = 3 ]; then
		echo "note: no RTA_FLOWLABEL in route requests (Linux < 6.15): flow labels not checked"
		FLOWLABEL=no
		return 0
	fi
	[ "$rc" = 0 ] || { echo "FAIL: mphash_rtget exit $rc"; exit 1; }
	awk 'NR == FNR { idx[$1] = NR - 1; next } { print (($1 in idx) ? idx[$1] : "?") }' \
		"$TMP/p6" "$TMP/kout" >"$TMP/kpath"
	cut -d' ' -f1-6 "$TMP/flows" | "$MPHASH_TOOL" -6 "$pol" "$fields" "$seed" "$W6" \
		>"$TMP/tool"
	cut -d' ' -f1 "$TMP/tool" >"$TMP/tpath"
	if ! cmp -s "$TMP/kpath" "$TMP/tpath"; then
		echo "FAIL: IPv6 flow labels, policy $pol fields $fields seed $seed:" \
			"$(paste -d' ' "$TMP/kpath" "$TMP/tpath" | awk '$1 != $2' | wc -l) of $FLOWS differ"
		paste -d' ' "$TMP/kpath" "$TMP/tpath" "$TMP/flows" | awk '$1 != $2' | head -10
		exit 1
	fi
	[ "$(sort -u "$TMP/kpath" | wc -l)" = 4 ] ||
		{ echo "FAIL: IPv6 flow labels, policy $pol: not every path taken"; exit 1; }
	if [ -n "${MPHASH_GOLDEN:-}" ]; then
		paste -d' ' "$TMP/flows" "$TMP/kpath" "$TMP/tool" | head -8 |
			awk -v p="$pol" -v x="$fields" -v s="$seed" \
				'{ print 6, p, x, s, $1, $2, $3, $4, $5, $8, $10, $6 }' >>"$MPHASH_GOLDEN"
	fi
	TOTAL=$((TOTAL + FLOWS))
	echo "ok IPv6 with flow labels, policy $pol fields $fields seed $seed: $FLOWS flows agree"
}
IIF6=$(ip -n "$NS" -o link show v1 | cut -d: -f1)

for seed in 1 3735928559; do
	for fam in 4 6; do
		check "$fam" 0 7 "$seed"
		check "$fam" 1 7 "$seed"
		check "$fam" 2 7 "$seed"
		check "$fam" 3 0x37 "$seed"  # src ip, dst ip, src port, dst port, proto
		check "$fam" 3 0x22 "$seed"  # dst ip, dst port
	done
	check6fl 0 7 "$seed"
	check6fl 1 7 "$seed"
	check6fl 3 0x0b "$seed" # src ip, dst ip, flow label
	check6fl 3 0x3f "$seed" # every outer field
done
echo "PASS: $TOTAL flows agree with the kernel"
