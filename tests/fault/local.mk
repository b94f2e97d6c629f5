# SPDX-License-Identifier: BSD-2-Clause
# Fault injection: libfib with its kth allocation failing, for every k, in
# every update (tests/fault/fib_fault_test.c). The test compiles its own
# copy of fib/ with FIB_FAULT_INJECTION, so it runs in every `make check`,
# not only in --enable-fault-injection builds. pool_alloc and pool_free
# are wrapped at link time to count allocations and live bytes (leaks),
# malloc/calloc/realloc to fail the heap allocations too.
check_PROGRAMS += tests/fault/fib_fault_test
TESTS += tests/fault/fib_fault_test
tests_fault_fib_fault_test_SOURCES = \
	tests/fault/fib_fault_test.c \
	tests/fault/malloc_wrap.h \
	tests/unit/lpm_model.c \
	tests/unit/lpm_model.h \
	$(fib_libfib_la_SOURCES)
# Its copy of fib/ keeps the previous IPv4 compiled table
# (FIB_ACCEL4_POPTRIE): the run-bitmap table (fib/accel4_impl.h) absorbs
# each failed segment, and every absorbed failure here replays the whole
# history, each update rebuilding its /18s: the add test alone ran for
# over 20 minutes. The run-bitmap table's failure paths have a bounded
# test of their own, next.
tests_fault_fib_fault_test_CPPFLAGS = $(AM_CPPFLAGS) -DFIB_FAULT_INJECTION -DFIB_ACCEL4_POPTRIE
tests_fault_fib_fault_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -O2
tests_fault_fib_fault_test_LDFLAGS = -Wl,--wrap=pool_alloc -Wl,--wrap=pool_free \
	-Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
tests_fault_fib_fault_test_LDADD = $(URCU_LIBS) $(CHECK_LIBS) -lpthread

# The run-bitmap IPv4 table (fib/accel4_impl.h) under allocation failure
# on a small table (tests/fault/accel4_fault_test.c): every allocation of
# a load, of /18 rebuilds and of deep nodes failed in turn, each answer
# compared with the naive longest match. Its own copy of fib/ with the
# hook and the default IPv4 table.
check_PROGRAMS += tests/fault/accel4_fault_test
TESTS += tests/fault/accel4_fault_test
tests_fault_accel4_fault_test_SOURCES = \
	tests/fault/accel4_fault_test.c \
	tests/fault/malloc_wrap.h \
	tests/unit/lpm_model.c \
	tests/unit/lpm_model.h \
	$(fib_libfib_la_SOURCES)
tests_fault_accel4_fault_test_CPPFLAGS = $(AM_CPPFLAGS) -DFIB_FAULT_INJECTION
tests_fault_accel4_fault_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -O2
tests_fault_accel4_fault_test_LDFLAGS = -Wl,--wrap=pool_alloc \
	-Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
tests_fault_accel4_fault_test_LDADD = $(URCU_LIBS) $(CHECK_LIBS) -lpthread

# The flow cache the same way (tests/fault/flow_fault_test.c): cache/flow.c
# with the hook (flow_config.fail_after, flow_cache_fail_after), included
# by the test with its heap calls counted; each allocation site failed in
# turn.
check_PROGRAMS += tests/fault/flow_fault_test
TESTS += tests/fault/flow_fault_test
tests_fault_flow_fault_test_SOURCES = tests/fault/flow_fault_test.c
tests_fault_flow_fault_test_CPPFLAGS = $(AM_CPPFLAGS) -DFIB_FAULT_INJECTION
tests_fault_flow_fault_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -O2
tests_fault_flow_fault_test_LDADD = fib/libfib.la $(CHECK_LIBS) $(URCU_LIBS) -lpthread
