# SPDX-License-Identifier: BSD-2-Clause
# Flow cache and its expiry worker: a convenience library used by the
# daemon, fibbench and the tests, on top of fib/libfib.la (its tests are
# in tests/unit/local.mk and tests/fault/local.mk).
noinst_LTLIBRARIES += cache/libflow.la
cache_libflow_la_SOURCES = \
	cache/flow.c
noinst_HEADERS += \
	cache/flow.h
EXTRA_DIST += cache/README.md
cache_libflow_la_CFLAGS = $(AM_CFLAGS) -O3
cache_libflow_la_LIBADD = $(URCU_LIBS) -lpthread
