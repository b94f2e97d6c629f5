#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# fibbench_smoke: fibbench itself is right (not a benchmark: tiny sizes).
# On generated IPv4 and IPv6 tables, single and batch lookups (one and two
# threads) must give the checksum of a naive longest-prefix match, and the
# JSON must carry the keys of the DESIGN.md contract.
set -e
B=./tests/bench/fibbench
[ -x "$B" ] || { echo "fibbench not built"; exit 99; }
$B --gen 20000 --routed 100000 --single-and-batch --runs 1 --verify >/dev/null
$B --gen 20000 --uniform 100000 --batch 16 --threads 2 --runs 1 --verify >/dev/null
$B --gen 5000 --gen6 --routed 50000 --single-and-batch --runs 1 --verify >/dev/null
out=$($B --gen 5000 --routed 10000 --runs 1 --json)
for k in routes build_s lookups mlps ns_per_lookup checksum bytes bytes_per_route \
	depth_avg depth_max; do
	echo "$out" | grep -q "\"$k\": " || { echo "JSON lacks $k"; exit 1; }
done
# the flow-cache options are reserved: they must refuse, not pretend
if $B --gen 100 --zipf 10 2>/dev/null; then echo "--zipf accepted"; exit 1; fi
echo "fibbench smoke: ok"
