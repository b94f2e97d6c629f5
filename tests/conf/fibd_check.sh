#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The config golden files through the daemon itself: `fibd -n -v -c
# valid/X.yaml` must exit 0 and print valid/X.out; `fibd -n -c
# invalid/X.yaml` must exit 1 and print every line of invalid/X.err on
# stderr (log prefixes around a line are allowed).
#
# usage: fibd_check.sh FIBD [TESTDIR]   (TESTDIR defaults to this script's)
set -u
fibd=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=${2:-$(dirname "$0")}
cd "$dir" || exit 99
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0

for y in valid/*.yaml; do
	n=$((n + 1))
	if ! "$fibd" -n -v -c "$y" >"$tmp/out" 2>"$tmp/err"; then
		echo "FAIL $y: exit $?"; cat "$tmp/err"; fail=1; continue
	fi
	if ! cmp -s "$tmp/out" "${y%.yaml}.out"; then
		echo "FAIL $y: effective config differs"
		diff -u "${y%.yaml}.out" "$tmp/out"; fail=1
	fi
done
for y in invalid/*.yaml; do
	n=$((n + 1))
	"$fibd" -n -c "$y" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 1 ]; then
		echo "FAIL $y: exit $rc, expected 1"; fail=1; continue
	fi
	while IFS= read -r line; do
		if ! grep -qF -- "$line" "$tmp/err"; then
			echo "FAIL $y: missing on stderr: $line"; fail=1
		fi
	done <"${y%.yaml}.err"
done
echo "$n files checked"
exit $fail
