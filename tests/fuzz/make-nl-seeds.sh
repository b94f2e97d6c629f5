#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: regenerate tests/fuzz/nl_corpus from real kernel messages: a
# namespace with the route kinds fibd parses (multipath, reject types,
# RTA_VIA, onlink, next-hop objects and groups, IPv6 multipath, metrics,
# prefsrc), dumped by nl_seeds; then a second namespace with resilient
# groups of both families (res-*: their objects, buckets and routes).
# Run as root from the build directory.
# tests/unit/nl_test compares the parser's answers on this corpus with
# tests/nl: after regenerating, run it with NL_TEST_REGEN=1 and review
# the diff of tests/nl.
set -eu
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${1:-$srcdir/tests/fuzz/nl_corpus}
ns=nlseeds-$$
ns2=nlseeds-res-$$
tmp=$(mktemp -d)
trap 'ip netns del $ns 2>/dev/null; ip netns del $ns2 2>/dev/null; rm -rf "$tmp"' EXIT
cc -O1 -I"$srcdir" -o "$tmp/nl_seeds" "$srcdir/tests/fuzz/nl_seeds.c" -lmnl
ip netns add $ns
ip netns exec $ns sysctl -qw net.ipv6.conf.default.addr_gen_mode=1
ip -n $ns link set lo up
ip -n $ns link add v0 type veth peer name v1
ip -n $ns link set v0 up
ip -n $ns link set v1 up
ip -n $ns addr add 10.0.0.1/24 dev v0
ip -n $ns -6 addr add 2001:db8::1/64 dev v0 nodad
ip -n $ns -batch - <<'B'
route add default via 10.0.0.254 proto bgp metric 20
route add 1.2.3.0/24 via 10.0.0.2 src 10.0.0.1 mtu 1400
route add 1.2.4.0/24 nexthop via 10.0.0.2 weight 1 nexthop via 10.0.0.3 weight 3
route add blackhole 1.2.5.0/24
route add unreachable 1.2.6.0/24 metric 5
route add prohibit 1.2.7.0/24
route add throw 1.2.11.0/24
route add 9.0.0.0/8 via inet6 2001:db8::5 dev v0
route add 7.7.0.0/16 via 192.0.2.1 dev v0 onlink
route add 1.2.12.0/24 tos 0x10 via 10.0.0.2
nexthop add id 1 via 10.0.0.7 dev v0
nexthop add id 2 via 10.0.0.8 dev v0
nexthop add id 3 blackhole
nexthop add id 4 via 2001:db8::7 dev v0
nexthop add id 10 group 1/2,3
route add 1.2.8.0/24 nhid 10
route add 1.2.9.0/24 nhid 1
route add 1.2.13.0/24 nhid 3
B
ip -n $ns -6 route add 2001:db8:1::/48 via 2001:db8::2 proto bgp pref high
ip -n $ns -6 route add 2001:db8:2::/48 nexthop via 2001:db8::2 weight 2 nexthop via 2001:db8::3
ip -n $ns -6 route add blackhole 2001:db8:5::/48
ip -n $ns -6 route add 2001:db8:8::/48 nhid 4
mkdir -p "$out"
rm -f "$out"/msg-* "$out"/all
ip netns exec $ns "$tmp/nl_seeds" "$out"

# Resilient groups: idle_timer 0 so nothing migrates while dumping.
ip netns add $ns2
ip netns exec $ns2 sysctl -qw net.ipv6.conf.default.addr_gen_mode=1
ip -n $ns2 link set lo up
ip -n $ns2 link add v0 type veth peer name v1
ip -n $ns2 link set v0 up
ip -n $ns2 link set v1 up
ip -n $ns2 addr add 10.0.0.1/24 dev v0
ip -n $ns2 -6 addr add 2001:db8::1/64 dev v0 nodad
ip -n $ns2 -batch - <<'B'
nexthop add id 1 via 10.0.0.2 dev v0
nexthop add id 2 via 10.0.0.3 dev v0
nexthop add id 3 via 2001:db8::2 dev v0
nexthop add id 4 via 2001:db8::3 dev v0
nexthop add id 10 group 1/2,3 type resilient buckets 8 idle_timer 0
nexthop add id 11 group 3/4 type resilient buckets 4 idle_timer 0
route add 1.2.20.0/24 nhid 10
B
ip -n $ns2 -6 route add 2001:db8:20::/48 nhid 11
rm -f "$out"/res-*
ip netns exec $ns2 "$tmp/nl_seeds" "$out" res
