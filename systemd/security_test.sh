#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# DOC: checks of the built unit systemd/fibd.service
#
# 1. `systemd-analyze security --offline=true` rates its exposure at most
#    FIBD_MAX_EXPOSURE (2.0);
# 2. `systemd-analyze verify` reports nothing about the unit's own syntax
#    (unknown keys, unparsable values, deprecated settings). Complaints
#    about the environment are ignored: binaries not installed, no
#    sysinit.target outside a booted system, missing man pages.
#
# Run from the top build directory (as `make check` does); exits 77 when
# systemd-analyze is missing or too old for --offline.
set -u

unit=${FIBD_UNIT:-systemd/fibd.service}
max=${FIBD_MAX_EXPOSURE:-2.0}

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "SKIP: no systemd-analyze"
	exit 77
fi
if ! systemd-analyze security --help 2>&1 | grep -q -- '--offline'; then
	echo "SKIP: systemd-analyze security lacks --offline (systemd < 250)"
	exit 77
fi
if [ ! -f "$unit" ]; then
	echo "FAIL: $unit not built"
	exit 99
fi

fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
# systemd-analyze names the unit after the file: keep fibd.service.
cp "$unit" "$tmp/fibd.service"

systemd-analyze security --offline=true --no-pager "$tmp/fibd.service" >"$tmp/security" 2>&1
level=$(sed -n 's/.*Overall exposure level for fibd.service: *\([0-9.]*\).*/\1/p' "$tmp/security")
if [ -z "$level" ]; then
	echo "FAIL: no exposure level in the output of systemd-analyze security:"
	cat "$tmp/security"
	exit 1
fi
if awk -v l="$level" -v m="$max" 'BEGIN { exit !(l + 0 <= m + 0) }'; then
	echo "ok: exposure $level <= $max"
else
	echo "FAIL: exposure $level > $max; the findings:"
	grep '✗' "$tmp/security"
	fail=1
fi

systemd-analyze verify --man=no "$tmp/fibd.service" >"$tmp/verify" 2>&1
# File:line messages are about the unit's text; so are these phrases.
if grep -E 'fibd\.service:[0-9]+:|Unknown|Failed to parse|Invalid|ignoring|deprecated|obsolete' \
	"$tmp/verify" >"$tmp/bad"; then
	echo "FAIL: systemd-analyze verify complains about the unit:"
	cat "$tmp/bad"
	fail=1
else
	echo "ok: systemd-analyze verify has nothing against the unit's syntax"
	sed 's/^/  (ignored) /' "$tmp/verify"
fi
exit $fail
