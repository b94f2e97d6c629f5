#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# DOC: build fibd's Debian packages from a copy of the source tree
#
#   deb_build.sh SRCDIR OUTDIR
#
# Copies the tree (the files git knows, committed or not, when SRCDIR is
# a git work tree; else everything but build directories), so the source
# tree stays clean, runs `dpkg-buildpackage -us -uc -b` there and leaves
# fibd_*.deb, libfib0_*.deb and libfib-dev_*.deb (and the .changes) in
# OUTDIR, then runs lintian on them when it is installed: any error or
# warning not overridden in debian/*.lintian-overrides fails. The build
# log is OUTDIR/build.log, lintian's OUTDIR/lintian.log.
#
# Exits 77 when the tree has no debian/ (a release tarball) or the
# packaging tools are missing, 1 when the build or lintian fails.
set -u

src=${1:?usage: deb_build.sh SRCDIR OUTDIR}
out=${2:?usage: deb_build.sh SRCDIR OUTDIR}
if [ ! -f "$src/debian/control" ]; then
	echo "SKIP: $src has no debian/ (release tarballs leave it out)"
	exit 77
fi
for t in dpkg-buildpackage dh dh_autoreconf; do
	if ! command -v $t >/dev/null 2>&1; then
		echo "SKIP: $t missing (apt-get install debhelper dpkg-dev)"
		exit 77
	fi
done
mkdir -p "$out" || exit 99
work=$(mktemp -d) || exit 99
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/fibd"

if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z -c -o --exclude-standard) |
		(cd "$src" && tar --null -T - -cf -) | tar -xf - -C "$work/fibd" || exit 99
else
	tar -C "$src" --exclude='./build*' --exclude=./.git -cf - . |
		tar -xf - -C "$work/fibd" || exit 99
fi

jobs=${DEB_JOBS:-2}
t0=$(date +%s)
if ! (cd "$work/fibd" &&
	DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}" \
		dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1; then
	echo "FAIL: dpkg-buildpackage; the end of $out/build.log:"
	tail -n 40 "$out/build.log"
	exit 1
fi
echo "ok: dpkg-buildpackage -us -uc -b ($(($(date +%s) - t0)) s)"
cp "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/ || exit 99
for p in fibd libfib0 libfib-dev; do
	if ls "$out/${p}"_*.deb >/dev/null 2>&1; then
		echo "ok: $(basename "$(ls "$out/${p}"_*.deb)")"
	else
		echo "FAIL: no ${p} package"
		exit 1
	fi
done

if command -v lintian >/dev/null 2>&1; then
	# lintian refuses nothing as root but says so; keep its log quiet.
	if lintian --fail-on error,warning -I --pedantic "$out"/fibd_*.changes \
		>"$out/lintian.log" 2>&1; then
		echo "ok: lintian: no error, no warning ($(grep -c '^[IPX]:' "$out/lintian.log") info/pedantic tags)"
		sed -n 's/^[IPX]: /  lintian: &/p' "$out/lintian.log"
	else
		echo "FAIL: lintian:"
		cat "$out/lintian.log"
		exit 1
	fi
else
	echo "note: lintian not installed; packages not checked"
fi
exit 0
