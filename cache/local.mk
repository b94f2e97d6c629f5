# SPDX-License-Identifier: BSD-2-Clause
# Flow cache and its expiry worker: a convenience library used by the
# daemon, fibbench and the tests, on top of fib/libfib.la.
noinst_LTLIBRARIES += cache/libflow.la
cache_libflow_la_SOURCES = \
	cache/flow.c
noinst_HEADERS += \
	cache/flow.h
EXTRA_DIST += cache/README.md
cache_libflow_la_CFLAGS = $(AM_CFLAGS) -O3
cache_libflow_la_LIBADD = $(URCU_LIBS) -lpthread

# The tests see fib_generation through a wrapper of theirs
# (test_generation_odd: a FIB change in progress without a racing writer).
FLOW_TEST_WRAP = -Wl,--wrap=fib_generation
check_PROGRAMS += tests/unit/flow_test
TESTS += tests/unit/flow_test
tests_unit_flow_test_SOURCES = tests/unit/flow_test.c
tests_unit_flow_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_flow_test_LDFLAGS = $(FLOW_TEST_WRAP)
tests_unit_flow_test_LDADD = cache/libflow.la fib/libfib.la $(CHECK_LIBS) $(URCU_LIBS) -lpthread

# The same tests with the cache compiled under ThreadSanitizer (libfib and
# liburcu stay uninstrumented; see the suppressions in flow_test.c).
if TSAN_TESTS
check_PROGRAMS += tests/unit/flow_tsan_test
TESTS += tests/unit/flow_tsan_test
endif
tests_unit_flow_tsan_test_SOURCES = \
	tests/unit/flow_test.c \
	cache/flow.c
tests_unit_flow_tsan_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -fsanitize=thread -O1 -g
tests_unit_flow_tsan_test_LDFLAGS = -XCClinker -fsanitize=thread $(FLOW_TEST_WRAP)
tests_unit_flow_tsan_test_LDADD = fib/libfib.la $(CHECK_LIBS) $(URCU_LIBS) -lpthread

# And under AddressSanitizer + UBSan (leaks included).
check_PROGRAMS += tests/unit/flow_asan_test
TESTS += tests/unit/flow_asan_test
tests_unit_flow_asan_test_SOURCES = \
	tests/unit/flow_test.c \
	cache/flow.c
tests_unit_flow_asan_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	-fsanitize=address,undefined -fno-omit-frame-pointer -O1 -g
tests_unit_flow_asan_test_LDFLAGS = -XCClinker -fsanitize=address,undefined $(FLOW_TEST_WRAP)
tests_unit_flow_asan_test_LDADD = fib/libfib.la $(CHECK_LIBS) $(URCU_LIBS) -lpthread

# Expiry scan and lookup-latency benchmark: not part of make check.
noinst_PROGRAMS += tests/bench/gcbench
tests_bench_gcbench_SOURCES = tests/bench/gcbench.c
tests_bench_gcbench_CFLAGS = $(AM_CFLAGS) -O2
tests_bench_gcbench_LDADD = tests/util/libtestutil.la cache/libflow.la fib/libfib.la $(URCU_LIBS) -lpthread -lm
