#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# DOC: the unit tests under valgrind memcheck (make check-valgrind)
#
# Usage: valgrind.sh JOBS TEST...   (from the build directory)
#
# Runs each test program through libtool (the real binary, not its
# wrapper script) under memcheck, JOBS at a time, with:
#   --error-exitcode=1: any memcheck error fails the test,
#   --leak-check=full --errors-for-leak-kinds=definite: a definite leak
#     fails it; possible leaks (liburcu's and glibc's thread stacks and
#     TLS, still referenced through interior pointers) do not,
#   --fair-sched=yes: the threads of the race tests (readers against the
#     writer, the expiry worker against lookups) take turns instead of one
#     spinning while another waits for the lock,
#   VALGRIND_FLAGS: anything more (a --suppressions file, --track-origins).
# No suppressions are needed today: liburcu, libevent, libyaml and Check
# report nothing but possible leaks (call_rcu's thread, never joined).
# CK_FORK=no runs the Check tests in one process, so leaks are counted
# once, at exit, and no test's timeout (meant for native speed) fires;
# FIBD_TEST_SHORT=1 makes the long tests take fewer iterations (see their
# DOC comments). Each test's output goes to TEST.vg.log (printed when it
# fails), its result to TEST.vg.res. Exits 0 if all passed, 1 otherwise.
set -u

: "${LIBTOOL:=./libtool}"
: "${VALGRIND:=valgrind}"
jobs=${1:?usage: valgrind.sh JOBS TEST...}
shift

if ! command -v "$VALGRIND" >/dev/null 2>&1; then
	echo "valgrind.sh: $VALGRIND not found (apt-get install valgrind)" >&2
	exit 1
fi

CK_FORK=no
FIBD_TEST_SHORT=1
export CK_FORK FIBD_TEST_SHORT

# one test: PASS/FAIL line with its time; the log kept
run_one() {
	t=$1
	log=$t.vg.log
	t0=$(date +%s)
	# (unquoted: LIBTOOL is "SHELL ./libtool", VALGRIND_FLAGS a list)
	# shellcheck disable=SC2086
	$LIBTOOL --mode=execute "$VALGRIND" -q --error-exitcode=1 \
		--leak-check=full --errors-for-leak-kinds=definite \
		--show-leak-kinds=definite --fair-sched=yes \
		${VALGRIND_FLAGS:-} "$t" >"$log" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	if [ "$rc" = 0 ]; then
		echo PASS >"$t.vg.res"
		echo "PASS: $t (valgrind, $dt s)"
	else
		echo FAIL >"$t.vg.res"
		echo "FAIL: $t (valgrind, exit $rc, $dt s)"
		sed 's/^/  | /' "$log"
		return 1
	fi
}

if [ "${VALGRIND_SH_ONE:-}" = 1 ]; then
	run_one "$1"
	exit $?
fi

# JOBS at a time, each line as its test finishes; TEST.vg.res holds
# its PASS or FAIL for the count
for t in "$@"; do rm -f "$t.vg.res"; done
printf '%s\n' "$@" | VALGRIND_SH_ONE=1 xargs -P "$jobs" -n 1 sh "$0" "$jobs"
rc=$?
n=0 p=0
for t in "$@"; do
	n=$((n + 1))
	[ "$(cat "$t.vg.res" 2>/dev/null)" = PASS ] && p=$((p + 1))
done
echo "valgrind: $p of $n tests passed"
[ "$rc" = 0 ] && [ "$p" = "$n" ]
