# SPDX-License-Identifier: BSD-2-Clause
# Test utilities (routes files, traces, the table generator) and fibgen.
# Each kind of test has its own local.mk: tests/unit (Check, and
# check-valgrind), tests/fault, tests/integration, tests/bench, tests/fuzz,
# tests/soak.
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
