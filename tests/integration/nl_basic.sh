#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: fibd mirrors what iproute2 installs: multipath with weights,
# blackhole/unreachable/prohibit, IPv4 via an IPv6 gateway (RTA_VIA),
# next-hop objects and groups, routes in another table (ignored with
# -t main, mirrored by default: every table), IPv4 append/prepend/delete, IPv6
# append and per-path delete, next-hop replace and delete, link down:
# first from the dump, then from events; each time the FIB must equal the
# kernel's tables and answer `ip route get` as the kernel does.
set -u
. "$(dirname "$0")/lib.sh"
nl_require
nl_ns nlbasic

ipn() { ip -n "$NS" "$@" || nl_fail "ip $*"; }
ipn addr add 10.0.0.1/24 dev v0
ipn -6 addr add 2001:db8::1/64 dev v0 nodad
ipn link add v2 type veth peer name v3
ipn link set v2 up
ipn link set v3 up
ipn addr add 10.2.0.1/24 dev v2
ipn route add default via 10.0.0.254
ipn route add 1.2.3.0/24 via 10.0.0.2 metric 10
ipn route add 1.2.3.0/24 via 10.0.0.3 metric 20
ipn route append 1.2.3.0/24 via 10.0.0.4 metric 20
ipn route add 1.2.4.0/24 nexthop via 10.0.0.2 weight 1 nexthop via 10.0.0.3 weight 3
ipn route add blackhole 1.2.5.0/24
ipn route add unreachable 1.2.6.0/24 metric 5
ipn route add prohibit 1.2.7.0/24
ipn route add 9.0.0.0/8 via inet6 2001:db8::5 dev v0
ipn route add 7.7.0.0/16 via 192.0.2.1 dev v0 onlink
ipn nexthop add id 1 via 10.0.0.7 dev v0
ipn nexthop add id 2 via 10.0.0.8 dev v0
ipn nexthop add id 3 via 10.0.0.9 dev v0
ipn nexthop add id 10 group 1/2,3
ipn route add 1.2.8.0/24 nhid 10
ipn route add 1.2.9.0/24 nhid 3
ipn route add 1.2.10.0/24 via 10.2.0.2
ipn route add 1.2.9.0/24 via 10.0.0.2 table 100
ipn route add 5.0.0.0/8 via 10.0.0.2 table 100
ipn -6 route add 2001:db8:1::/48 via 2001:db8::2
ipn -6 route add 2001:db8:2::/48 nexthop via 2001:db8::2 weight 2 nexthop via 2001:db8::3
ipn -6 route add blackhole 2001:db8:5::/48
ipn -6 route add unreachable 2001:db8:6::/48
ipn -6 route add 2001:db8:9::/48 via 2001:db8::9 table 100

cat >"$TMP/prefixes" <<'PFX'
1.2.3.0/24
1.2.4.0/24
1.2.5.0/24
1.2.6.0/24
1.2.7.0/24
1.2.8.0/24
1.2.9.0/24
1.2.10.0/24
1.2.14.0/24
1.2.15.0/24
9.0.0.0/8
7.7.0.0/16
10.0.0.128/26
64.0.0.0/3
2001:db8:1::/48
2001:db8:2::/48
2001:db8:5::/48
2001:db8:6::/48
2001:db8:7::/48
PFX
nl_sample "$TMP/prefixes" 2000 7 >"$TMP/addrs"

# A list of tables restricts: another table is ignored with -t main.
nl_fibd_start "$TMP/once.log" -t main --once --dump "$TMP/once.dump"
wait "$FIBD_PID" || nl_fail "fibd --once failed: $(cat "$TMP/once.log")"
grep -q ' table ' "$TMP/once.dump" && nl_fail "table 100 mirrored with -t main"
grep -q '^fibd: ready: ' "$TMP/once.log" || nl_fail "no ready line"
NS_DUMP_ONLY=1
nl_compare_dump 254 "$TMP/once.dump" once

# By default every table, from the dump: main, 100 and local among them.
nl_fibd_start "$TMP/fibd.log" --dump "$TMP/dump" --lookup "$TMP/addrs" "$TMP/lookup"
nl_wait_file "$TMP/lookup"
nl_compare_dump 254 "$TMP/dump" dump-main
nl_compare_dump 100 "$TMP/dump" dump-t100
grep -q ' table 255 ' "$TMP/dump" || nl_fail "the local table is not mirrored by default"
nl_compare_get "$TMP/addrs" "$TMP/lookup" dump-get

# Events.
ipn -6 route append 2001:db8:1::/48 via 2001:db8::3
ipn -6 route append 2001:db8:1::/48 via 2001:db8::4
ipn -6 route del 2001:db8:1::/48 via 2001:db8::2
ipn -6 route add 2001:db8:7::/48 nexthop via 2001:db8::2 nexthop via 2001:db8::3 nexthop via 2001:db8::4
ipn -6 route del 2001:db8:7::/48 via 2001:db8::3
ipn -6 route replace 2001:db8:2::/48 via 2001:db8::4
ipn route add 1.1.1.0/24 via 10.0.0.2
ipn route append 1.1.1.0/24 via 10.0.0.3
ipn route prepend 1.1.1.0/24 via 10.0.0.4
ipn route del 1.1.1.0/24 via 10.0.0.2
ipn route replace 1.2.4.0/24 nexthop via 10.0.0.4 weight 2 nexthop via 10.0.0.5
ipn route del 1.2.3.0/24 metric 10
ipn route add 64.0.0.0/3 via 10.0.0.6
ipn route replace blackhole 1.2.6.0/24 metric 5
ipn route add 5.5.0.0/16 via 10.0.0.3 table 100
nl_fibd_sync "$TMP/dump" "$TMP/lookup"
nl_compare_dump 254 "$TMP/dump" events-main
nl_compare_dump 100 "$TMP/dump" events-t100
nl_compare_get "$TMP/addrs" "$TMP/lookup" events-get

# Silent kernel changes: next-hop replace and delete, link down.
ipn nexthop replace id 2 via 10.0.0.11 dev v0
ipn nexthop del id 3
ipn link set v2 down
nl_fibd_sync "$TMP/dump" "$TMP/lookup"
nl_compare_dump 254 "$TMP/dump" silent-main
nl_compare_get "$TMP/addrs" "$TMP/lookup" silent-get
grep -q 'resyncs=[1-9]' "$TMP/fibd.log" || nl_fail "no resync counted"

# Next-hop objects without compat mode: route messages carry only
# RTA_NH_ID, fibd expands it from its next-hop table. `ip route show`
# then prints no paths, so only `ip route get` is compared.
ip netns exec "$NS" sysctl -qw net.ipv4.nexthop_compat_mode=0 || nl_fail "compat mode"
ipn nexthop add id 20 via 10.0.0.21 dev v0
ipn nexthop add id 21 via 10.0.0.22 dev v0
ipn nexthop add id 22 group 20,2/21,4
ipn route add 1.2.14.0/24 nhid 22
ipn route add 1.2.15.0/24 nhid 20
nl_fibd_sync "$TMP/dump" "$TMP/lookup"
grep -q '^unicast 1.2.14.0/24 metric 0 nhid 22 nh via 10.0.0.21 dev v0 w 2 nh via 10.0.0.22 dev v0 w 4$' "$TMP/dump" ||
	nl_fail "group 22 not expanded: $(grep 1.2.14.0 "$TMP/dump")"
nl_compare_get "$TMP/addrs" "$TMP/lookup" nocompat-get
nl_fibd_stop
grep -q 'parse_errors: none' "$TMP/fibd.log" || nl_fail "parse errors: $(grep stats "$TMP/fibd.log" | tail -1)"
echo "PASS"
