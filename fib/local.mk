# SPDX-License-Identifier: BSD-2-Clause
# libfib: installed shared library; the same objects serve daemon, tools and
# tests (its tests are in tests/unit/local.mk and tests/fault/local.mk).
lib_LTLIBRARIES += fib/libfib.la
fib_libfib_la_SOURCES = \
	fib/fib.c \
	fib/trie4.c \
	fib/trie6.c \
	fib/info.c \
	fib/pool.c \
	fib/reclaim.c \
	fib/policy.c \
	fib/resolve.c \
	fib/mphash.c \
	fib/regions.c
noinst_HEADERS += \
	fib/rcu.h \
	fib/trie.h \
	fib/trie_impl.h \
	fib/trie_types.h \
	fib/accel6_impl.h \
	fib/accel_impl.h \
	fib/accel4_impl.h \
	fib/accel_build.h \
	fib/accel_common.h \
	fib/accel_set.h \
	fib/info.h \
	fib/pool.h \
	fib/reclaim.h \
	fib/regions.h \
	fib/fib_priv.h \
	fib/policy_priv.h \
	fib/mphash.h
# Installed as <fib/fib.h>; daemon/local.mk adds <fib/lookup_proto.h>.
fibinclude_HEADERS += fib/fib.h fib/policy.h
fib_libfib_la_CFLAGS = $(AM_CFLAGS) -O3
fib_libfib_la_LIBADD = $(URCU_LIBS) -lpthread
fib_libfib_la_LDFLAGS = -version-info 0:0:0 -Wl,--version-script=$(srcdir)/fib/libfib.map
fib_libfib_la_DEPENDENCIES = $(srcdir)/fib/libfib.map
EXTRA_DIST += fib/libfib.map
pkgconfig_DATA += fib/libfib.pc
