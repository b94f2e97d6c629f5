#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# DOC: rules, addresses, links and sysctls reach fibd's policy. In a
# namespace with rules of several kinds in both families (from/to, not,
# tos, fwmark/mask, iif/oif, goto, nop, ipproto and port ranges,
# uidrange, suppress_prefixlength, suppress_ifgroup, l3mdev, blackhole,
# unreachable, prohibit), addresses (primary, secondary, peer, IPv6) and
# links (veth pairs, a bridge and its port, a group), fibd starts with
# the default config and, once ready, its published policy has as many
# rules of each family, links and addresses as the kernel shows (`show
# summary`: policy_rules_v4, policy_rules_v6, policy_links,
# policy_addrs), with nothing rejected. Then the same after events (rules
# added and deleted, an address added and deleted, a veth pair added and
# deleted), after a resync (a link taken down), and the sysctls: a
# changed net.ipv4.fib_multipath_hash_policy is applied by `fibctl
# reload`. fibd's rules themselves are compared by someone else's
# harness (`ip route get`); this test keeps to counts and counters.
# Exits 77 when not root.
: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/integration/lib.sh"
FIBCTL=${FIBCTL:-./client/fibctl}

nl_require
[ -x "$FIBCTL" ] || nl_fail "fibctl not built at $FIBCTL"
nl_ns fibing-pol
n() { ip -n "$NS" "$@"; }
n link set v0 group 7
n link add v2 type veth peer name v3
n link set v2 up
n link set v3 up
if n link add br0 type bridge 2>/dev/null; then
	n link set br0 up
	n link set v3 master br0
fi
n addr add 10.0.0.1/24 dev v0
n addr add 10.0.0.9/24 dev v0
n addr add 10.9.0.1 peer 10.9.0.2/32 dev v0
n addr add 10.1.0.1/24 dev v1
n -6 addr add 2001:db8::1/64 dev v0 nodad
n -6 addr add 2001:db8:1::1/64 dev v1 nodad
n route add default via 10.0.0.254
n route add 192.0.2.0/24 via 10.0.0.2 table 100
n -batch - <<'B' || nl_fail "ip rule"
rule add pref 100 from 10.0.0.0/24 to 192.0.2.0/24 table 100
rule add pref 110 not from 10.2.0.0/16 tos 0x10 lookup 200
rule add pref 120 fwmark 0x10/0xff iif v0 oif v1 table 300 protocol 186
rule add pref 130 goto 200
rule add pref 140 ipproto tcp sport 1000-2000 dport 443 prohibit
rule add pref 150 uidrange 1000-2000 unreachable
rule add pref 160 table main suppress_prefixlength 0
rule add pref 170 table main suppress_ifgroup 7
rule add pref 180 l3mdev
rule add pref 190 blackhole
rule add pref 200 nop
rule add pref 210 fwmark 5 table 5
B
n -6 rule add pref 100 from 2001:db8::/64 to 2001:db8:1::/48 table 100
n -6 rule add pref 110 iif v0 ipproto udp dport 53 table 200
n -6 rule add pref 120 not to 2001:db8:2::/48 unreachable

sock=$TMP/fibd.sock
ctl() { "$FIBCTL" -s "$sock" "$@"; }
cat >"$TMP/conf.yaml" <<EOT
control:
  socket: $sock
lookup:
  threads: 0
EOT
nl_fibd_start "$TMP/fibd.log" -c "$TMP/conf.yaml"

summary() { ctl show summary 2>/dev/null | awk -v k="$1" '$1 == k { print $2 }'; }
kernel_counts() {
	echo "$(n -4 rule show | wc -l) $(n -6 rule show | wc -l) $(n -o link show | wc -l) $(n -o addr show | wc -l)"
}
# rules v4, v6, links, addresses, then rejected rules, addresses, links
fibd_counts() {
	ctl show summary 2>/dev/null | awk '{ v[$1] = $2 }
	END { print v["policy_rules_v4"], v["policy_rules_v6"], v["policy_links"], v["policy_addrs"],
		v["netlink_rules_rejected"], v["netlink_addrs_rejected"], v["netlink_links_rejected"] }'
}
# same TAG: wait (5 s) until fibd's counts equal the kernel's
same() {
	local i k f
	for i in $(seq $((50 * NL_SLOW))); do
		k="$(kernel_counts) 0 0 0"
		f=$(fibd_counts)
		[ "$k" = "$f" ] && break
		sleep 0.1
	done
	[ "$k" = "$f" ] ||
		nl_fail "$1: rules v4 v6, links, addresses, rejected rules, addresses, links: kernel $k; fibd $f"
	echo "ok: $1: rules v4 v6, links, addresses: ${f% 0 0 0}"
}

i=0
while [ "$(summary ready)" != true ]; do
	i=$((i + 1))
	[ $i -le $((300 * NL_SLOW)) ] || nl_fail "not ready after 30 s: $(cat "$TMP/fibd.log")"
	kill -0 "$FIBD_PID" 2>/dev/null || nl_fail "fibd died: $(cat "$TMP/fibd.log")"
	sleep 0.1
done
# Ready means the first dump's policy is published: no waiting here.
k="$(kernel_counts) 0 0 0"
f=$(fibd_counts)
[ "$k" = "$f" ] || nl_fail "at ready: kernel $k, fibd $f"
same "first dump"
[ "$(summary netlink_rules_applied)" -ge 19 ] || nl_fail "rules applied: $(summary netlink_rules_applied)"

# Events.
n rule add pref 300 to 198.51.100.0/24 table 100
n rule add pref 310 iif v2 fwmark 7 blackhole
n -6 rule add pref 300 from 2001:db8:9::/48 prohibit
n rule del pref 110
same "rules added and deleted"
n addr add 10.2.0.1/24 dev v2
n -6 addr add 2001:db8:2::1/64 dev v2 nodad
n addr del 10.0.0.9/24 dev v0
same "addresses added and deleted"
n link add v4 type veth peer name v5
same "veth pair added"
n link del v4
same "veth pair deleted"

# A resync: a link going down flushes routes silently, fibd dumps again,
# rules, links and addresses included.
r0=$(summary netlink_resyncs)
n link set v2 down
for i in $(seq $((50 * NL_SLOW))); do
	[ "$(summary netlink_resyncs)" -gt "$r0" ] && break
	sleep 0.1
done
[ "$(summary netlink_resyncs)" -gt "$r0" ] || nl_fail "no resync after a link went down"
same "after a resync"

# Sysctls have no events: `fibctl reload` re-reads them.
ip netns exec "$NS" sysctl -qw net.ipv4.fib_multipath_hash_policy=1
ip netns exec "$NS" sysctl -qw net.ipv6.fib_multipath_hash_policy=1
if ip netns exec "$NS" sysctl -qw net.ipv4.fib_multipath_hash_seed=1234 2>/dev/null; then
	seed=pinned
else
	seed=random # older kernels have no seed
fi
ctl reload >/dev/null || nl_fail "reload"
grep -q "sysctls: multipath hash policy 1/1 fields 0x[0-9a-f]*/0x[0-9a-f]* seed $seed" "$TMP/fibd.log" ||
	nl_fail "sysctls not applied on reload: $(grep sysctls "$TMP/fibd.log")"
echo "ok: sysctls applied on reload (seed $seed)"

nl_fibd_stop
grep '^fibd: stats' "$TMP/fibd.log" | tail -1
grep -q 'stats: .* rules=[1-9][0-9]*/0 addrs=[1-9][0-9]*/0 links=[1-9][0-9]*/0 ' "$TMP/fibd.log" ||
	nl_fail "stats line: $(grep 'stats:' "$TMP/fibd.log" | tail -1)"
echo "PASS"
