#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# DOC: the man pages format without a single groff warning
#
# fibd(8), fibctl(8) and fibd.yaml(5) through `groff -ww -man -z` (every
# warning on, no output) and `man -l` when man is there. Exits 77 without
# groff.
set -u

if ! command -v groff >/dev/null 2>&1; then
	echo "SKIP: no groff"
	exit 77
fi
src=${srcdir:-.}/systemd
fail=0
for page in fibd.8 fibctl.8 fibd.yaml.5; do
	out=$(groff -ww -man -z "$src/$page" 2>&1)
	if [ -n "$out" ]; then
		echo "FAIL: $page: groff warnings:"
		echo "$out"
		fail=1
		continue
	fi
	if command -v man >/dev/null 2>&1; then
		out=$(MANWIDTH=80 man -l "$src/$page" 2>&1 >/dev/null)
		if [ -n "$out" ]; then
			echo "FAIL: $page: man -l says:"
			echo "$out"
			fail=1
			continue
		fi
	fi
	echo "ok: $page"
done
exit $fail
