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
