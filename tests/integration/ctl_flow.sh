#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# DOC: `fibctl lookup` with `ip route get`'s arguments and `fibctl show
# rules`, live, in a network namespace (fibctl-flow-PID) holding a few
# `ip rule add` rules, table 100, a multipath route, a blackhole and a
# prohibit route. fibd mirrors main, local and 100, then:
#   - each keyword (from, iif, oif, mark, tos, dscp, ipproto, sport,
#     dport, uid, fibmatch) is accepted and answered with one line of the
#     contract's grammar (doc/architecture.md, "fibctl lookup"); the plain
#     answer carries table and rule; a blackhole is EINVAL, no route
#     ENETUNREACH;
#   - bad arguments get 400 and a message naming them (bad value, missing
#     value, duplicated keyword, unknown interface), and the same daemon
#     keeps answering; `lookup -` takes flows a line, a bad line fails
#     alone and the lines after it are answered, in order;
#   - --json: every key of the contract in every object (python3);
#   - show rules: when fibd mirrors the kernel's rules (the ingest of
#     RTM_NEWRULE), its text equals `ip rule show` of both families and its
#     JSON `ip -j rule show` (family added), and then the flows a rule
#     selects (mark, tos, ipproto + dport, uid, a prohibit rule) are
#     answered as `ip route get` answers them (table, via, dev, error);
#     else it holds the kernel's default rules, printed as `ip` does;
#   - show summary and the metrics count the rules and the decisions.
# Exits 77 when not root.
: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/integration/lib.sh"
FIBCTL=${FIBCTL:-./client/fibctl}

nl_require
[ -x "$FIBCTL" ] || nl_fail "fibctl not built at $FIBCTL"
nl_ns fibctl-flow
ipn() { ip -n "$NS" "$@"; }
ipn addr add 10.0.0.1/24 dev v0
ipn addr add 2001:db8:ffff::1/64 dev v0 nodad
ipn route add 192.0.2.0/24 via 10.0.0.2
ipn route add 198.51.100.0/24 nexthop via 10.0.0.2 weight 1 nexthop via 10.0.0.3 weight 2
ipn route add blackhole 203.0.113.0/24
ipn route add prohibit 203.0.114.0/24
ipn route add 2001:db8:1::/48 via 2001:db8:ffff::2
ipn route add 192.0.2.0/24 via 10.0.0.5 table 100
ipn route add 10.99.0.0/16 via 10.0.0.4 table 100
ipn rule add fwmark 7 lookup 100 prio 100
ipn rule add tos 0x10 lookup 100 prio 110
ipn rule add ipproto tcp dport 443 lookup 100 prio 120
ipn rule add uidrange 1000-1000 lookup 100 prio 130
ipn rule add to 192.0.2.128/25 prohibit prio 140
ipn -6 rule add from 2001:db8:5::/48 lookup 100 prio 100

sock=$TMP/fibd.sock
ctl() { "$FIBCTL" -s "$sock" "$@"; }
cat >"$TMP/conf.yaml" <<EOT
netlink:
  tables: [main, local, 100]
control:
  socket: $sock
lookup:
  threads: 0
EOT
nl_fibd_start "$TMP/fibd.log" -c "$TMP/conf.yaml"
i=0
while ! ctl --json show summary 2>/dev/null | grep -q '"ready": true'; do
	i=$((i + 1))
	[ $i -le $((300 * NL_SLOW)) ] || nl_fail "not ready after 30 s: $(cat "$TMP/fibd.log")"
	kill -0 "$FIBD_PID" 2>/dev/null || nl_fail "fibd died: $(cat "$TMP/fibd.log")"
	sleep 0.1
done
# kv KEY: a value of show summary
kv() { ctl show summary | awk -v k="$1" '$1 == k { print $2 }'; }
d0=$(kv decisions)

# The contract's line: ADDR (PREFIX/LEN TYPE [via] [dev] [nexthop ...]... | -)
# [src S] [table T] [rule P] [path I] [error E]
GRAMMAR='^[0-9a-f.:]+ ([0-9a-f.:]+/[0-9]+ [a-z]+( via [^ ]+)?( dev [^ ]+)?( nexthop( via [^ ]+)?( dev [^ ]+)? weight [0-9]+)*|-)( src [^ ]+)?( table [0-9]+)?( rule [0-9]+)?( path [0-9]+)?( error E[A-Z]+)?$'
# one ARGS...: exactly one answer line, of the grammar, for ADDR (the first)
one() {
	ctl lookup "$@" >"$TMP/one" 2>"$TMP/one.err" || nl_fail "lookup $*: $(cat "$TMP/one.err")"
	[ "$(wc -l <"$TMP/one")" = 1 ] || nl_fail "lookup $*: $(cat "$TMP/one")"
	grep -Eq "$GRAMMAR" "$TMP/one" || nl_fail "lookup $*: not the contract's grammar: $(cat "$TMP/one")"
	grep -q "^$1 " "$TMP/one" || nl_fail "lookup $*: answers another address: $(cat "$TMP/one")"
	cat "$TMP/one"
}

# Plain lookups: today's fields, then table and rule.
one 192.0.2.1 | grep -Eq '^192.0.2.1 192.0.2.0/24 unicast via 10.0.0.2 dev v0( src 10.0.0.1)? table 254 rule 32766$' ||
	nl_fail "plain: $(cat "$TMP/one")"
one 198.51.100.7 | grep -Eq '^198.51.100.7 198.51.100.0/24 unicast nexthop via 10.0.0.2 dev v0 weight 1 nexthop via 10.0.0.3 dev v0 weight 2( src 10.0.0.1)? table 254 rule 32766 path [01]$' ||
	nl_fail "multipath: $(cat "$TMP/one")"
one 203.0.113.1 | grep -q '^203.0.113.1 203.0.113.0/24 blackhole table 254 rule 32766 error EINVAL$' ||
	nl_fail "blackhole: $(cat "$TMP/one")"
one 8.8.8.8 | grep -Eq '^8.8.8.8 -( rule [0-9]+)? error ENETUNREACH$' || nl_fail "no route: $(cat "$TMP/one")"
one 10.0.0.1 | grep -Eq '^10.0.0.1 10.0.0.1/32 local dev [^ ]+( src 10.0.0.1)? table 255 rule 0$' ||
	nl_fail "local: $(cat "$TMP/one")"
one 2001:db8:1::1 | grep -Eq '^2001:db8:1::1 2001:db8:1::/48 unicast via 2001:db8:ffff::2 dev v0( src [^ ]+)? table 254 rule 32766$' ||
	nl_fail "IPv6: $(cat "$TMP/one")"
echo "ok: plain lookups: table, rule, path, error"

# Each keyword is accepted and answered.
for kw in "from 10.0.0.1" "iif v1" "from 10.0.0.9 iif v1" "oif v0" "mark 7" "mark 0x7" "tos 0x10" \
	"dscp 4" "ipproto tcp" "ipproto udp" "ipproto icmp" "ipproto 47" "sport 1000" "dport 443" \
	"uid 1000" "fibmatch" \
	"from 10.0.0.1 oif v0 mark 7 tos 16 ipproto tcp sport 1 dport 443 uid 0 fibmatch"; do
	# shellcheck disable=SC2086
	one 192.0.2.1 $kw >/dev/null
done
one 2001:db8:1::1 from 2001:db8:ffff::1 oif v0 ipproto ipv6-icmp >/dev/null
# several addresses share the keywords
ctl lookup 192.0.2.1 192.0.2.2 2001:db8:1::1 mark 7 >"$TMP/multi" || nl_fail "several addresses"
[ "$(grep -Ec "$GRAMMAR" "$TMP/multi")" = 3 ] || nl_fail "several addresses: $(cat "$TMP/multi")"
echo "ok: every keyword accepted"

# Bad arguments: 400, a message naming them, exit 1; the daemon goes on.
bad() { # bad MESSAGE ARGS...
	local msg=$1
	shift
	ctl lookup "$@" >/dev/null 2>"$TMP/bad" && nl_fail "lookup $* accepted"
	grep -qF "fibctl: 400 $msg" "$TMP/bad" || nl_fail "lookup $*: $(cat "$TMP/bad"), expected: $msg"
}
bad 'bad mark: x' 192.0.2.1 mark x
bad 'bad mark: 4294967296' 192.0.2.1 mark 4294967296
bad 'mark needs a value' 192.0.2.1 mark
bad 'duplicated keyword: mark' 192.0.2.1 mark 1 mark 2
bad 'duplicated keyword: fibmatch' 192.0.2.1 fibmatch fibmatch
bad 'tos and dscp: give one of them' 192.0.2.1 tos 16 dscp 4
bad 'bad dscp: 64' 192.0.2.1 dscp 64
bad 'bad ipproto: foo' 192.0.2.1 ipproto foo
bad 'bad sport: 65536' 192.0.2.1 sport 65536
bad 'bad dport: x' 192.0.2.1 dport x
bad 'bad uid: -1' 192.0.2.1 uid -1
bad 'iif: no such interface: nosuchdev' 192.0.2.1 iif nosuchdev
bad 'oif: no such interface: nosuchdev' 192.0.2.1 oif nosuchdev
bad 'bad oif: averyveryverylongname' 192.0.2.1 oif averyveryverylongname
bad 'bad address: 300.1.1.1' 300.1.1.1
bad 'from: source and destination families differ' 192.0.2.1 from 2001:db8::1
kill -0 "$FIBD_PID" || nl_fail "fibd died"
one 192.0.2.1 >/dev/null
echo "ok: bad arguments named, daemon serving"

# lookup -: one flow a line; a bad line fails alone, in order.
cat >"$TMP/flows" <<EOT
192.0.2.1
192.0.2.2 mark x
192.0.2.3 mark 7 ipproto tcp dport 443
203.0.113.5
300.1.1.1
2001:db8:1::1 oif v0
192.0.2.4
EOT
ctl lookup - <"$TMP/flows" >"$TMP/flows.out" 2>"$TMP/flows.err" && nl_fail "lookup - with a bad line exited 0"
grep -q 'fibctl: 400 bad mark: x' "$TMP/flows.err" || nl_fail "lookup -: $(cat "$TMP/flows.err")"
grep -q 'fibctl: 400 bad address: 300.1.1.1' "$TMP/flows.err" || nl_fail "lookup -: $(cat "$TMP/flows.err")"
[ "$(awk '{ print $1 }' "$TMP/flows.out" | tr '\n' ' ')" = "192.0.2.1 192.0.2.3 203.0.113.5 2001:db8:1::1 192.0.2.4 " ] ||
	nl_fail "lookup -: $(cat "$TMP/flows.out")"
[ "$(grep -Ec "$GRAMMAR" "$TMP/flows.out")" = 5 ] || nl_fail "lookup -: grammar: $(cat "$TMP/flows.out")"
# command-line keywords apply to every line
printf '192.0.2.1\n192.0.2.2 ipproto udp\n' | ctl lookup - dport 53 >"$TMP/flows2" || nl_fail "lookup - dport 53"
[ "$(wc -l <"$TMP/flows2")" = 2 ] || nl_fail "lookup - dport 53: $(cat "$TMP/flows2")"
echo "ok: lookup - (flows a line, a bad line alone)"

# --json: every key of the contract in every object.
if command -v python3 >/dev/null; then
	ctl --json lookup 192.0.2.1 198.51.100.7 203.0.113.1 8.8.8.8 2001:db8:1::1 mark 7 >"$TMP/json" ||
		nl_fail "--json lookup"
	python3 - "$TMP/json" <<'EOT' || nl_fail "--json lookup: $(cat "$TMP/json")"
import json, sys
a = json.load(open(sys.argv[1]))
assert len(a) == 5, a
keys = {"dst", "prefix", "type", "table", "rule", "gateway", "dev", "src", "paths", "error"}
for o in a:
    assert keys <= set(o), (sorted(keys - set(o)), o)
    for p in o["paths"]:
        assert {"gateway", "dev", "weight"} <= set(p), p
byd = {o["dst"]: o for o in a}
assert byd["203.0.113.1"]["error"] == "EINVAL", byd["203.0.113.1"]
assert byd["8.8.8.8"]["error"] == "ENETUNREACH" and byd["8.8.8.8"]["prefix"] is None
assert len(byd["198.51.100.7"]["paths"]) == 2
assert isinstance(byd["2001:db8:1::1"]["table"], int)
print("ok: --json lookup: every key in", len(a), "objects")
EOT
	printf '192.0.2.1\n192.0.2.2 ipproto udp\n' | ctl --json lookup - >"$TMP/json2" || nl_fail "--json lookup -"
	python3 -c 'import json, sys; assert len(json.load(open(sys.argv[1]))) == 2' "$TMP/json2" ||
		nl_fail "--json lookup -: $(cat "$TMP/json2")"
else
	echo "skip: --json checks (no python3)"
fi

# show rules: the kernel's when fibd mirrors them, else the defaults.
ctl show rules >"$TMP/rules" || nl_fail "show rules"
{ ipn -4 rule show; ipn -6 rule show; } >"$TMP/rules.kernel"
printf '0:\tfrom all lookup local\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n0:\tfrom all lookup local\n32766:\tfrom all lookup main\n' >"$TMP/rules.default"
[ "$(ctl show rules 4 | wc -l)" -ge 1 ] && [ "$(ctl show rules 6 | wc -l)" -ge 1 ] || nl_fail "show rules 4/6"
cat "$TMP/rules" | cmp -s - <(ctl show rules 4; ctl show rules 6) || nl_fail "show rules != show rules 4 + 6"
ctl show rules 5 2>"$TMP/err" && nl_fail "show rules 5 accepted"
grep -q 'usage: show rules \[4|6\]' "$TMP/err" || nl_fail "show rules 5: $(cat "$TMP/err")"
mirrored=0
if cmp -s "$TMP/rules" "$TMP/rules.kernel"; then
	mirrored=1
	echo "ok: show rules equals ip rule show ($(wc -l <"$TMP/rules") rules, both families)"
elif cmp -s "$TMP/rules" "$TMP/rules.default"; then
	echo "note: fibd holds the default rules only (rules not mirrored by this build's ingest); printed as ip does"
else
	diff "$TMP/rules.kernel" "$TMP/rules"
	nl_fail "show rules: neither the kernel's rules nor the defaults"
fi
if command -v python3 >/dev/null; then
	ctl --json show rules >"$TMP/rules.json" || nl_fail "--json show rules"
	ipn -j -4 rule show >"$TMP/ip4.json"
	ipn -j -6 rule show >"$TMP/ip6.json"
	python3 - "$TMP/rules.json" "$TMP/ip4.json" "$TMP/ip6.json" $mirrored "$(wc -l <"$TMP/rules")" <<'EOT' ||
import json, sys
ours = json.load(open(sys.argv[1]))
assert len(ours) == int(sys.argv[5]), ours
assert all("priority" in o and o["family"] in ("inet", "inet6") for o in ours), ours
if sys.argv[4] == "1":
    kern = [dict(o, family="inet") for o in json.load(open(sys.argv[2]))] + \
           [dict(o, family="inet6") for o in json.load(open(sys.argv[3]))]
    assert ours == kern, (ours, kern)
print("ok: --json show rules:", len(ours), "objects" + (", equal to ip -j rule show" if sys.argv[4] == "1" else ""))
EOT
		nl_fail "--json show rules: $(cat "$TMP/rules.json")"
fi

# With the rules mirrored, the flows they select answer as the kernel does.
# kernel ARGS...: "table via dev error" of `ip route get` (- when absent)
kernel() {
	ipn -o route get "$@" 2>&1 | awk '
	/^RTNETLINK answers: / {
		sub(/^RTNETLINK answers: /, "")
		e = $0
		if (e == "Network is unreachable") e = "ENETUNREACH"
		if (e == "No route to host") e = "EHOSTUNREACH"
		if (e == "Permission denied") e = "EACCES"
		if (e == "Invalid argument") e = "EINVAL"
		print "- - - " e; exit
	}
	{
		t = "254"; v = "-"; d = "-"
		for (i = 1; i < NF; i++) {
			if ($i == "table") { t = $(i + 1); if (t == "main") t = "254"; if (t == "local") t = "255" }
			if ($i == "via") v = $(i + 1)
			if ($i == "dev") d = $(i + 1)
		}
		print t, v, d, "-"; exit
	}'
}
# ours ARGS...: the same four from fibctl lookup (a chosen path's via/dev)
ours() {
	ctl lookup "$@" | awk '{
		t = "-"; v = "-"; d = "-"; e = "-"; p = -1; n = 0
		for (i = 2; i <= NF; i++) {
			if ($i == "nexthop") { n++; continue }
			if ($i == "via") { if (n) pv[n - 1] = $(i + 1); else v = $(i + 1) }
			if ($i == "dev") { if (n) pd[n - 1] = $(i + 1); else d = $(i + 1) }
			if ($i == "table") t = $(i + 1)
			if ($i == "path") p = $(i + 1)
			if ($i == "error") e = $(i + 1)
		}
		if (n && p >= 0) { v = pv[p]; d = pd[p] }
		if (e != "-") { t = "-"; v = "-"; d = "-" }
		print t, v, d, e
	}'
}
if [ $mirrored = 1 ]; then
	for f in "192.0.2.1" "192.0.2.1 mark 7" "192.0.2.1 tos 0x10" "192.0.2.1 ipproto tcp dport 443" \
		"192.0.2.1 ipproto tcp dport 80" "192.0.2.1 uid 1000" "192.0.2.200" "10.99.1.1" \
		"10.99.1.1 mark 7" "203.0.114.1" "203.0.113.1" "8.8.8.8"; do
		# shellcheck disable=SC2086
		k=$(kernel $f) o=$(ours $f)
		[ "$k" = "$o" ] || nl_fail "lookup $f: fibd '$o', kernel '$k' (table via dev error)"
	done
	echo "ok: flows selected by rules answered as ip route get"
else
	echo "note: rule-selected flows not compared with the kernel (rules not mirrored)"
fi

# Counted: rules per family, decisions by type and error.
n4=$(ctl show rules 4 | wc -l) n6=$(ctl show rules 6 | wc -l)
[ "$(kv rules_v4)" = "$n4" ] && [ "$(kv rules_v6)" = "$n6" ] || nl_fail "summary rules: $(ctl show summary | grep rules)"
[ "$(kv decisions)" -ge $((d0 + 30)) ] || nl_fail "decisions not counted: $d0 -> $(kv decisions)"
[ "$(kv decision_errors)" -ge 2 ] || nl_fail "decision_errors: $(kv decision_errors)"
ctl metrics >"$TMP/metrics" || nl_fail "metrics"
grep -q "^fibd_rules{family=\"ipv4\"} $n4\$" "$TMP/metrics" || nl_fail "metrics: fibd_rules: $(grep rules "$TMP/metrics")"
grep -q "^fibd_rules{family=\"ipv6\"} $n6\$" "$TMP/metrics" || nl_fail "metrics: fibd_rules ipv6"
grep -q '^fibd_decisions_total{type="unicast"} [1-9]' "$TMP/metrics" || nl_fail "metrics: decisions unicast"
grep -q '^fibd_decisions_total{type="blackhole"} [1-9]' "$TMP/metrics" || nl_fail "metrics: decisions blackhole"
grep -q '^fibd_decision_errors_total{error="EINVAL"} [1-9]' "$TMP/metrics" || nl_fail "metrics: EINVAL"
grep -q '^fibd_decision_errors_total{error="ENETUNREACH"} [1-9]' "$TMP/metrics" || nl_fail "metrics: ENETUNREACH"
echo "ok: counted: $n4 + $n6 rules, $(kv decisions) decisions, $(kv decision_errors) errors"
kill -0 "$FIBD_PID" || nl_fail "fibd died"
echo "ok: ctl_flow"
exit 0
