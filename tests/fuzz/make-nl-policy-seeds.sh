#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: regenerate tests/fuzz/nl_policy_corpus from real kernel messages:
# a namespace with links (veth, a bridge and its port, a group; this
# kernel may lack VRFs: nl_test builds a VRF message by hand), addresses
# (primary, secondary, point-to-point peer, IPv6) and rules of every kind
# daemon/nl_policy.c parses (both families), dumped by `nl_seeds DIR
# policy`. Run as root from the build directory. tests/unit/nl_test
# compares the parser's answers on this corpus with tests/nl/policy:
# after regenerating, run it with NL_TEST_REGEN=1 and review the diff.
set -eu
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${1:-$srcdir/tests/fuzz/nl_policy_corpus}
ns=fibing-seeds-$$
tmp=$(mktemp -d)
trap 'ip netns del $ns 2>/dev/null; rm -rf "$tmp"' EXIT
cc -O1 -I"$srcdir" -o "$tmp/nl_seeds" "$srcdir/tests/fuzz/nl_seeds.c" -lmnl
ip netns add $ns
ip netns exec $ns sysctl -qw net.ipv6.conf.default.addr_gen_mode=1
ip -n $ns link set lo up
ip -n $ns link add v0 type veth peer name v1
ip -n $ns link set v0 up group 7
ip -n $ns link set v1 up
ip -n $ns link add br0 type bridge
ip -n $ns link set br0 up
ip -n $ns link set v1 master br0
ip -n $ns addr add 10.0.0.1/24 dev v0
ip -n $ns addr add 10.0.0.9/24 dev v0
ip -n $ns addr add 10.9.0.1 peer 10.9.0.2/32 dev v0
ip -n $ns addr add 10.1.0.1/24 dev v1
ip -n $ns -6 addr add 2001:db8::1/64 dev v0 nodad
ip -n $ns -batch - <<'B'
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
ip -n $ns -6 rule add pref 100 from 2001:db8::/64 to 2001:db8:1::/48 table 100
ip -n $ns -6 rule add pref 110 iif v0 ipproto udp dport 53 table 200
ip -n $ns -6 rule add pref 120 not to 2001:db8:2::/48 unreachable
mkdir -p "$out"
rm -f "$out"/msg-* "$out"/all
ip netns exec $ns "$tmp/nl_seeds" "$out" policy
