# SPDX-License-Identifier: BSD-2-Clause
# libfib: installed shared library; the same objects serve daemon, tools and tests.
lib_LTLIBRARIES += fib/libfib.la
fib_libfib_la_SOURCES = \
	fib/fib.c \
	fib/trie4.c \
	fib/trie6.c \
	fib/info.c \
	fib/pool.c \
	fib/reclaim.c
noinst_HEADERS += \
	fib/rcu.h \
	fib/trie.h \
	fib/trie_impl.h \
	fib/accel_impl.h \
	fib/info.h \
	fib/pool.h \
	fib/reclaim.h \
	fib/fib_priv.h
# Installed as <fib/fib.h>; daemon/local.mk adds <fib/lookup_proto.h>.
fibinclude_HEADERS += fib/fib.h
fib_libfib_la_CFLAGS = $(AM_CFLAGS) -O3
fib_libfib_la_LIBADD = $(URCU_LIBS) -lpthread
fib_libfib_la_LDFLAGS = -version-info 0:0:0 -export-symbols-regex '^(fib|flow)_'
pkgconfig_DATA += fib/libfib.pc

# Unit tests: randomized differential tests against a naive longest-prefix
# match, and readers racing a writer (also built with -fsanitize=thread).
check_PROGRAMS += tests/unit/fib_test tests/unit/fib_rcu_test
TESTS += tests/unit/fib_test tests/unit/fib_rcu_test
tests_unit_fib_test_SOURCES = tests/unit/fib_test.c tests/unit/lpm_model.c tests/unit/lpm_model.h
tests_unit_fib_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_fib_test_LDADD = fib/libfib.la $(CHECK_LIBS)
tests_unit_fib_rcu_test_SOURCES = tests/unit/fib_rcu_test.c tests/unit/lpm_model.c tests/unit/lpm_model.h
tests_unit_fib_rcu_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_fib_rcu_test_LDADD = fib/libfib.la $(CHECK_LIBS) -lpthread
# The pool's handles, against pool.c itself (libfib exports fib_ only).
check_PROGRAMS += tests/unit/pool_test
TESTS += tests/unit/pool_test
tests_unit_pool_test_SOURCES = tests/unit/pool_test.c fib/pool.c
tests_unit_pool_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_pool_test_LDADD = $(CHECK_LIBS) -lpthread

# The race test again, sources compiled with ThreadSanitizer.
if TSAN_TESTS
check_PROGRAMS += tests/unit/fib_rcu_tsan
TESTS += tests/unit/fib_rcu_tsan
endif
tests_unit_fib_rcu_tsan_SOURCES = tests/unit/fib_rcu_test.c tests/unit/lpm_model.c $(fib_libfib_la_SOURCES)
tests_unit_fib_rcu_tsan_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -fsanitize=thread -O1 -g
tests_unit_fib_rcu_tsan_LDFLAGS = -fsanitize=thread
tests_unit_fib_rcu_tsan_LDADD = $(URCU_LIBS) $(CHECK_LIBS) -lpthread
EXTRA_DIST += tests/unit/tsan.supp

# Writer-side benchmark: reclamation modes, worst operation, bulk load, free.
noinst_PROGRAMS += tests/bench/reclaimbench
tests_bench_reclaimbench_SOURCES = tests/bench/reclaimbench.c
tests_bench_reclaimbench_CFLAGS = $(AM_CFLAGS) -O2
tests_bench_reclaimbench_LDADD = fib/libfib.la tests/util/libtestutil.la -lpthread
