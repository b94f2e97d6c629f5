#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# DOC: build the rule, address and link parser fuzz target with clang (libFuzzer + ASan +
# UBSan) and run it for FUZZ_SECONDS (default 60) over a copy of the seed
# corpus. Exit status is libFuzzer's: non-zero on a crash, a leak or a
# failed assertion. Run from the build directory (config.h) or set
# BUILDDIR; `make fuzz-nl-policy` does both.
set -eu
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${BUILDDIR:-$(pwd)}
secs=${FUZZ_SECONDS:-60}
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null || { echo "SKIP: no clang"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-D_GNU_SOURCE -I"$builddir" -I"$srcdir" \
	-o "$work/nl_policy_fuzz" "$srcdir/tests/fuzz/nl_policy_fuzz.c" "$srcdir/daemon/nl_policy.c" "$srcdir/daemon/nl.c" -lmnl
mkdir "$work/corpus"
cp "$srcdir"/tests/fuzz/nl_policy_corpus/* "$work/corpus/"
"$work/nl_policy_fuzz" -max_total_time="$secs" -max_len=4096 -print_final_stats=1 -timeout=10 \
	-error_exitcode=1 -timeout_exitcode=1 \
	-artifact_prefix="${ARTIFACTS:-$builddir/}nl-policy-fuzz-" "$work/corpus" 2>&1 | tail -15
exit "${PIPESTATUS[0]}"
