#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# fibbench_smoke: fibbench itself is right (not a benchmark: tiny sizes).
# On generated IPv4 and IPv6 tables, single, batch and route-reference batch
# lookups (one and two threads) must give the checksum of a naive
# longest-prefix match, and the JSON must carry the keys of the
# doc/architecture.md contract; through the flow
# cache (--cache, Zipf and all-miss traces) the answers must be the FIB's.
set -e
B=./tests/bench/fibbench
[ -x "$B" ] || { echo "fibbench not built"; exit 99; }
$B --gen 20000 --routed 100000 --single-and-batch --runs 1 --verify >/dev/null
$B --gen 20000 --uniform 100000 --batch 16 --threads 2 --runs 1 --verify >/dev/null
# --warm: the untimed passes before the timed ones leave the answers alone
$B --gen 20000 --routed 100000 --single-and-batch --batch 16 --runs 2 --warm --verify >/dev/null
$B --gen 5000 --gen6 --routed 50000 --single-and-batch --runs 1 --verify >/dev/null
out=$($B --gen 5000 --routed 10000 --runs 1 --json)
for k in routes build_s lookups warm mlps ns_per_lookup checksum bytes bytes_per_route \
	depth_avg depth_max; do
	echo "$out" | grep -q "\"$k\": " || { echo "JSON lacks $k"; exit 1; }
done
# A batch mode also times the route-reference batch (the headline figures):
# both in the modes, their checksums equal (fibbench exits 3 otherwise)
out=$($B --gen 5000 --routed 10000 --batch 16 --runs 1 --json --verify)
for m in fib_lookup_batch fib_lookup_ref_batch; do
	echo "$out" | grep -q "\"name\": \"$m\"" || { echo "JSON modes lack $m"; exit 1; }
done
echo "$out" | grep -q "\"verify_checksum\": $(echo "$out" | sed -n 's/^  "checksum": \([0-9]*\),$/\1/p')\$" ||
	{ echo "route-reference checksum differs from the naive LPM's"; exit 1; }
# The flow cache: every mode runs uncached and cached on the same trace and
# fibbench exits 3 unless both checksums (and the naive LPM's) agree.
$B --gen 5000 --zipf 500 --lookups 50000 --cache --single-and-batch --runs 2 --verify >/dev/null
$B --gen 5000 --routed 50000 --all-miss --cache --batch 16 --threads 2 --runs 2 --verify >/dev/null
$B --gen 2000 --gen6 --zipf 300 --lookups 20000 --cache --single-and-batch --runs 2 \
	--verify >/dev/null
$B --gen 2000 --gen6 --routed 20000 --all-miss --cache --runs 2 --verify >/dev/null
# Without rules the default policy resolves in one lookup: the cache stays out
out=$($B --gen 5000 --zipf 200 --lookups 20000 --cache --runs 2 --json)
val() { echo "$out" | sed -n "s/^  \"$1\": \([0-9]*\),\{0,1\}\$/\1/p"; }
[ "$(val bypass_default)" -eq 40000 ] || { echo "default policy: $(val bypass_default) bypassed"; exit 1; }
# With rules (--rules: generated policy, tables, multipath routes) it caches
$B --gen 5000 --zipf 500 --lookups 50000 --cache --rules 8 --single-and-batch --runs 2 >/dev/null
$B --gen 5000 --routed 50000 --all-miss --cache --rules 8 --batch 16 --threads 2 --runs 2 >/dev/null
$B --gen 2000 --gen6 --zipf 300 --lookups 20000 --cache --rules 4 --runs 2 >/dev/null
out=$($B --gen 5000 --zipf 200 --lookups 20000 --cache --rules 4 --runs 2 --json)
for k in hits misses evictions ratio_cached_uncached uncached_checksum; do
	echo "$out" | grep -q "\"$k\": " || { echo "cache JSON lacks $k"; exit 1; }
done
[ -n "$(val checksum)" ] && [ "$(val checksum)" = "$(val uncached_checksum)" ] ||
	{ echo "cached checksum $(val checksum) != uncached $(val uncached_checksum)"; exit 1; }
# 200 flows, 2 cached passes of 20000: nearly all hits, every lookup counted
[ $(($(val hits) + $(val misses))) -eq 40000 ] || { echo "hits + misses != lookups"; exit 1; }
[ "$(val hits)" -gt 39000 ] || { echo "zipf over 200 flows: only $(val hits) hits"; exit 1; }
# Every selector kind of --rules decides some flows of the trace
out=$($B --gen 5000 --zipf 5000 --lookups 50000 --cache --rules 5 --runs 1 --json)
iif=$(echo "$out" | sed -n 's/.*"rule_hits": {.*"iif": \([0-9]*\)}.*/\1/p')
[ -n "$iif" ] && [ "$iif" -gt 0 ] || { echo "no flow decided by an iif rule: '$iif'"; exit 1; }
for k in src fwmark tos dport; do
	echo "$out" | grep -q "\"$k\": [1-9]" || { echo "no flow decided by a $k rule"; exit 1; }
done
# --churn: updates land while the cached passes run; afterwards cached and
# uncached decisions agree (fibbench exits 3 otherwise)
out=$($B --gen 5000 --zipf 500 --lookups 50000 --cache --rules 8 --churn 20000 --runs 2 --json)
echo "$out" | grep -q '"churn": {"rate": 20000, "updates": [1-9][0-9]*, "update_errors": 0, "checksums_agree": true' ||
	{ echo "churn JSON: $(echo "$out" | grep churn)"; exit 1; }
if $B --gen 100 --zipf 10 --churn 10 2>/dev/null; then
	echo "--churn without --cache accepted"; exit 1
fi
if $B --gen 100 --routed 10 --all-miss 2>/dev/null; then
	echo "--all-miss without --cache accepted"; exit 1
fi
if $B --gen 100 --zipf 10 --all-miss --cache 2>/dev/null; then
	echo "--zipf with --all-miss accepted"; exit 1
fi
echo "fibbench smoke: ok"
