#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# DOC: `make install DESTDIR=...` installs what a package needs
#
# Runs `make install` from the top build directory into a fresh DESTDIR
# and checks the file list: fibd and fibctl, libfib with its header and
# pkg-config file, the systemd unit (paths substituted), the sysusers.d
# entry, the example config and the man pages fibd(8), fibctl(8) and
# fibd.yaml(5); that no test or benchmark program is installed; and that
# a program builds against the installed libfib and <fib/lookup_proto.h>
# through pkg-config.
# fibctl is required once the build makes it (client/local.mk).
set -u

MAKE=${MAKE:-make}
unset MAKEFLAGS MFLAGS
if [ ! -f Makefile ]; then
	echo "FAIL: run from the top build directory"
	exit 99
fi
dest=$(mktemp -d) || exit 99
trap 'rm -rf "$dest"' EXIT INT TERM

# The configured directories, as make expands them.
cat >"$dest/vars.mk" <<'MK'
print-install-dirs:
	@echo "prefix='$(prefix)' bindir='$(bindir)' sbindir='$(sbindir)' libdir='$(libdir)'"
	@echo "includedir='$(includedir)' sysconfdir='$(sysconfdir)' mandir='$(mandir)'"
	@echo "unitdir='$(systemdsystemunitdir)' sysusersdir='$(sysusersdir)'"
	@echo "exampledir='$(systemdexampledir)'"
	@echo "pkgconfigdir='$(pkgconfigdir)' programs='$(bin_PROGRAMS) $(sbin_PROGRAMS)'"
MK
vars=$($MAKE -s --no-print-directory -f Makefile -f "$dest/vars.mk" print-install-dirs) || exit 99
eval "$vars"
rm -f "$dest/vars.mk"

if ! $MAKE -s install DESTDIR="$dest/root" >"$dest/install.log" 2>&1; then
	echo "FAIL: make install"
	cat "$dest/install.log"
	exit 1
fi
root=$dest/root
fail=0

want() {
	if [ -e "$root$1" ]; then
		echo "ok: $1"
	else
		echo "FAIL: missing $1"
		fail=1
	fi
}

want "$sbindir/fibd"
case " $programs " in
*fibctl*) want "$bindir/fibctl" ;;
*) echo "note: fibctl is not built yet (client/local.mk); not checked" ;;
esac
want "$includedir/fib/fib.h"
want "$includedir/fib/policy.h"
want "$includedir/fib/lookup_proto.h"
want "$pkgconfigdir/libfib.pc"
if ls "$root$libdir"/libfib.so.* >/dev/null 2>&1; then
	echo "ok: $libdir/libfib.so.*"
else
	echo "FAIL: missing $libdir/libfib.so.*"
	fail=1
fi
want "$unitdir/fibd.service"
want "$sysusersdir/fibd.conf"
want "$sysconfdir/fibd/fibd.yaml"
want "$mandir/man8/fibd.8"
want "$mandir/man8/fibctl.8"
want "$mandir/man5/fibd.yaml.5"
want "$exampledir/fibd-metrics.conf"

# The unit must point at the installed paths, nothing left unsubstituted.
unit=$root$unitdir/fibd.service
if [ -f "$unit" ]; then
	if grep -n '@[a-z_]*@' "$unit"; then
		echo "FAIL: unsubstituted variables in fibd.service"
		fail=1
	fi
	for l in "ExecStart=$sbindir/fibd -c $sysconfdir/fibd/fibd.yaml" \
		"ExecStartPre=$sbindir/fibd -n -c $sysconfdir/fibd/fibd.yaml"; do
		if grep -qxF "$l" "$unit"; then
			echo "ok: $l"
		else
			echo "FAIL: fibd.service lacks '$l'"
			fail=1
		fi
	done
fi

# Only the programs meant for users: no tests, benchmarks or tools.
for d in "$bindir" "$sbindir"; do
	[ -d "$root$d" ] || continue
	for f in "$root$d"/*; do
		case $(basename "$f") in
		fibd | fibctl) ;;
		*) echo "FAIL: unexpected program $d/$(basename "$f")"; fail=1 ;;
		esac
	done
done

# A program builds and runs against the installed library.
CC=${CC:-cc}
if command -v "$CC" >/dev/null 2>&1 && command -v pkg-config >/dev/null 2>&1; then
	cat >"$dest/use.c" <<'C'
#include <fib/fib.h>
#include <fib/lookup_proto.h>
#include <stdio.h>
int main(void)
{
	struct fib *fib = fib_new(NULL);
	if (!fib || sizeof(struct lookup_req) != 20)
		return 1;
	printf("routes %zu\n", fib_count(fib, AF_INET));
	fib_free(fib);
	return 0;
}
C
	flags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_PATH=$root$pkgconfigdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
		pkg-config --cflags --libs libfib 2>"$dest/pc.err")
	if [ $? -ne 0 ]; then
		echo "FAIL: pkg-config libfib"
		cat "$dest/pc.err"
		fail=1
	elif $CC -o "$dest/use" "$dest/use.c" $flags 2>"$dest/cc.err" &&
		LD_LIBRARY_PATH=$root$libdir "$dest/use" >/dev/null; then
		echo "ok: a program builds and runs against the installed libfib ($flags)"
	else
		echo "FAIL: building against the installed libfib ($flags)"
		cat "$dest/cc.err"
		fail=1
	fi
fi

echo "installed:"
(cd "$root" && find . ! -type d | sort | sed 's/^\./  /')
exit $fail
