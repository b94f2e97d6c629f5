#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# DOC: fibctl output golden files (tests/ctl). For each NAME.args,
# `fibctl --response NAME.resp ARGS` (stdin from NAME.stdin if present)
# formats the recorded daemon answers; stdout must equal NAME.out, stderr
# NAME.err and the exit status NAME.rc (0 when absent). The answers are
# real daemon output, recorded from `fibd` (see daemon/README.md);
# daemon_basic.sh checks the live path. REGEN=1 rewrites the expected files.
: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
FIBCTL=${FIBCTL:-./client/fibctl}
FIBCTL=$(cd "$(dirname "$FIBCTL")" && pwd)/$(basename "$FIBCTL")
cd "$srcdir/tests/ctl" || exit 99
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
for a in *.args; do
	t=${a%.args}
	n=$((n + 1))
	in=/dev/null
	[ -e "$t.stdin" ] && in=$t.stdin
	# shellcheck disable=SC2046
	"$FIBCTL" --response "$t.resp" $(cat "$a") <"$in" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ -n "${REGEN:-}" ]; then
		cp "$tmp/out" "$t.out"; cp "$tmp/err" "$t.err"; echo "$rc" >"$t.rc"
		continue
	fi
	exp_rc=0
	[ -e "$t.rc" ] && exp_rc=$(cat "$t.rc")
	[ "$rc" = "$exp_rc" ] || { echo "FAIL $t: exit $rc, expected $exp_rc"; fail=1; }
	cmp -s "$tmp/out" "$t.out" || { echo "FAIL $t: stdout"; diff -u "$t.out" "$tmp/out"; fail=1; }
	cmp -s "$tmp/err" "$t.err" || { echo "FAIL $t: stderr"; diff -u "$t.err" "$tmp/err"; fail=1; }
done
echo "$n fibctl golden cases checked"
exit $fail
