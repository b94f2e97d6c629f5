# SPDX-License-Identifier: BSD-2-Clause
# Test utilities (routes files, traces, the table generator), fibgen and
# their unit tests. Benchmarks are in tests/bench/local.mk.
noinst_LTLIBRARIES += tests/util/libtestutil.la
tests_util_libtestutil_la_SOURCES = \
	tests/util/routes.c \
	tests/util/trace.c \
	tests/util/tablegen.c
noinst_HEADERS += \
	tests/util/rng.h \
	tests/util/routes.h \
	tests/util/trace.h \
	tests/util/tablegen.h
tests_util_libtestutil_la_CPPFLAGS = $(AM_CPPFLAGS) $(ZLIB_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_util_libtestutil_la_CFLAGS = $(AM_CFLAGS) -O2
tests_util_libtestutil_la_LIBADD = $(ZLIB_LIBS) -lm

noinst_PROGRAMS += tests/fibgen
tests_fibgen_SOURCES = tests/fibgen.c
tests_fibgen_LDADD = tests/util/libtestutil.la

check_PROGRAMS += \
	tests/util/routes_test \
	tests/util/tablegen_test
TESTS += \
	tests/util/routes_test \
	tests/util/tablegen_test
tests_util_routes_test_SOURCES = tests/util/routes_test.c
tests_util_routes_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(ZLIB_CFLAGS)
tests_util_routes_test_LDADD = tests/util/libtestutil.la $(CHECK_LIBS) $(ZLIB_LIBS)
tests_util_tablegen_test_SOURCES = tests/util/tablegen_test.c
tests_util_tablegen_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_util_tablegen_test_LDADD = tests/util/libtestutil.la $(CHECK_LIBS)

# make check-valgrind: unit tests under valgrind memcheck, VALGRIND_JOBS at
# a time (tests/valgrind.sh: any memcheck error or definite leak fails a
# test; Check without fork; FIBD_TEST_SHORT=1, fewer iterations). Not part
# of make check; a stage of ./quickstart test. Left out: the fault tests
# (they count their own allocations and leaks, and fib_fault_test takes
# over a minute natively), the *_tsan and *_asan builds.
VALGRIND = valgrind
VALGRIND_JOBS = 2
VALGRIND_TESTS = \
	tests/unit/fib_test \
	tests/unit/fib_rcu_test \
	tests/unit/flow_test \
	tests/unit/conf_test \
	tests/unit/ctl_test \
	tests/unit/lookup_test \
	tests/util/routes_test \
	tests/util/tablegen_test
dist_noinst_SCRIPTS += tests/valgrind.sh
CLEANFILES += $(VALGRIND_TESTS:=.vg.log) $(VALGRIND_TESTS:=.vg.res)

check-valgrind: $(VALGRIND_TESTS)
	@LIBTOOL="$(LIBTOOL)" VALGRIND="$(VALGRIND)" \
		$(SHELL) $(srcdir)/tests/valgrind.sh $(VALGRIND_JOBS) $(VALGRIND_TESTS)

.PHONY: check-valgrind
