#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: the long fuzz runs recorded in tests/fuzz/README.md
#
# Runs the built fuzz targets (tests/fuzz/{ctl,lookup,nl,conf}_fuzz in the
# build directory: `make tests/fuzz/ctl_fuzz tests/fuzz/lookup_fuzz
# tests/fuzz/conf_fuzz`, nl_fuzz as run-nl-fuzz.sh builds it) one after
# the other, each for RUNS executions (10000000) or until its share of the
# time left before DEADLINE (a `date -d` string; none: no limit) is used
# up, from a fresh copy of its seed corpus. One line a target goes to
# stdout: executions, seconds, execs/s, corpus size, findings (any
# sanitizer report, crash, leak or timeout). Logs stay in OUT
# (fuzz-long.out). Exit status 1 if any target had a finding.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${BUILDDIR:-$(pwd)}
runs=${RUNS:-10000000}
targets=${TARGETS:-ctl nl conf lookup}
out=${OUT:-$builddir/fuzz-long.out}
deadline=${DEADLINE:+$(date -d "$DEADLINE" +%s)}
mkdir -p "$out"
fail=0
left=$(echo $targets | wc -w)
for t in $targets; do
	bin=$builddir/tests/fuzz/${t}_fuzz
	[ -x "$bin" ] || { echo "$t: not built ($bin)"; fail=1; left=$((left - 1)); continue; }
	cap=0
	if [ -n "$deadline" ]; then
		cap=$(( (deadline - $(date +%s)) / left ))
		[ "$cap" -gt 0 ] || cap=1
	fi
	rm -rf "$out/$t.corpus"
	mkdir -p "$out/$t.corpus"
	cp "$srcdir/tests/fuzz/${t}_corpus/"* "$out/$t.corpus/"
	start=$(date +%s)
	"$bin" -runs="$runs" -max_total_time="$cap" -max_len=4200 -timeout=10 \
		-print_final_stats=1 -error_exitcode=1 -timeout_exitcode=1 \
		-artifact_prefix="$out/$t-" "$out/$t.corpus" >"$out/$t.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log")
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$t.log")
	reports=$(grep -c 'runtime error\|ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|ERROR: libFuzzer\|deadly signal' "$out/$t.log")
	[ "$rc" = 0 ] && [ "$reports" = 0 ] || fail=1
	echo "$t: rc=$rc execs=${execs:-?} seconds=$secs execs/s=${eps:-?} corpus=$(ls "$out/$t.corpus" | wc -l) findings=$reports"
	left=$((left - 1))
done
exit $fail
