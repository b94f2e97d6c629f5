# SPDX-License-Identifier: BSD-2-Clause
# Unit tests (Check): tests/unit/<module>_test.c link the module's real
# objects; the tests of the test utilities are tests/util/*_test.c. Also
# the ThreadSanitizer and AddressSanitizer builds of some of them, and
# `make check-valgrind`. Fault injection is in tests/fault/local.mk.
# Every Check program ends with ck_run() (tests/unit/ck_run.h): one fork
# mode, output and exit status for all.
noinst_HEADERS += tests/unit/ck_run.h tests/unit/ck_rcu.h
EXTRA_DIST += tests/unit/tsan.supp

# fib: randomized differential tests against a naive longest-prefix
# match, and readers racing a writer (also built with -fsanitize=thread).
check_PROGRAMS += tests/unit/fib_test tests/unit/fib_rcu_test
TESTS += tests/unit/fib_test tests/unit/fib_rcu_test
tests_unit_fib_test_SOURCES = tests/unit/fib_test.c tests/unit/lpm_model.c tests/unit/lpm_model.h
tests_unit_fib_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_fib_test_LDADD = fib/libfib.la $(CHECK_LIBS) $(URCU_LIBS)
tests_unit_fib_rcu_test_SOURCES = tests/unit/fib_rcu_test.c tests/unit/lpm_model.c tests/unit/lpm_model.h
tests_unit_fib_rcu_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_fib_rcu_test_LDADD = fib/libfib.la $(CHECK_LIBS) $(URCU_LIBS) -lpthread
# The IPv6 differential runs again with libfib's sources built without
# the AVX-512 lookups (FIB_NO_AVX512): the fallback that a CPU without
# AVX-512BW takes, forced.
check_PROGRAMS += tests/unit/fib_novec_test
TESTS += tests/unit/fib_novec_test
tests_unit_fib_novec_test_SOURCES = tests/unit/fib_test.c tests/unit/lpm_model.c $(fib_libfib_la_SOURCES)
tests_unit_fib_novec_test_CPPFLAGS = $(AM_CPPFLAGS) -DFIB_NO_AVX512
tests_unit_fib_novec_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -O2
tests_unit_fib_novec_test_LDADD = $(URCU_LIBS) $(CHECK_LIBS) -lpthread
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

# cache: the tests see fib_generation through a wrapper of theirs
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

# conf: unit and golden tests: tests/conf/valid/*.yaml -> *.out (effective
# config), tests/conf/invalid/*.yaml -> *.err (file:line:column messages).
# tests/conf/fibd_check.sh runs the same golden files through `fibd -n
# [-v] -c` (tests/integration/daemon_conf.sh).
check_PROGRAMS += tests/unit/conf_test
TESTS += tests/unit/conf_test
tests_unit_conf_test_SOURCES = tests/unit/conf_test.c
tests_unit_conf_test_CPPFLAGS = $(AM_CPPFLAGS) \
	-DCONF_TESTDIR='"$(abs_top_srcdir)/tests/conf"' \
	-DCONF_EXAMPLE='"$(abs_top_srcdir)/systemd/fibd.yaml"' \
	-DCONF_MANPAGE='"$(abs_top_srcdir)/systemd/fibd.yaml.5"'
tests_unit_conf_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_conf_test_LDADD = conf/libconf.la $(CHECK_LIBS)
EXTRA_DIST += tests/conf

# daemon, control protocol: the line parser and the server over a real
# socket.
check_PROGRAMS += tests/unit/ctl_test
TESTS += tests/unit/ctl_test
tests_unit_ctl_test_SOURCES = tests/unit/ctl_test.c
tests_unit_ctl_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_ctl_test_LDADD = daemon/libingest.la cache/libflow.la fib/libfib.la $(LIBEVENT_LIBS) \
	$(CHECK_LIBS) $(URCU_LIBS)

# daemon, the batch lookup service over a real socket and a real FIB.
check_PROGRAMS += tests/unit/lookup_test
TESTS += tests/unit/lookup_test
tests_unit_lookup_test_SOURCES = tests/unit/lookup_test.c
tests_unit_lookup_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_lookup_test_LDADD = daemon/libingest.la cache/libflow.la fib/libfib.la $(CHECK_LIBS) \
	$(URCU_LIBS) -lpthread

# The same under ThreadSanitizer: lookup threads reading while the test
# thread adds routes (FIB built with TSAN too, as fib_rcu_tsan).
if TSAN_TESTS
check_PROGRAMS += tests/unit/lookup_tsan_test
TESTS += tests/unit/lookup_tsan_test
tests_unit_lookup_tsan_test_SOURCES = tests/unit/lookup_test.c daemon/lookup.c daemon/listen.c cache/flow.c \
	$(fib_libfib_la_SOURCES)
tests_unit_lookup_tsan_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -fsanitize=thread -O1 -g
tests_unit_lookup_tsan_test_LDFLAGS = -fsanitize=thread
tests_unit_lookup_tsan_test_LDADD = $(URCU_LIBS) $(CHECK_LIBS) -lpthread
endif

# The test utilities (tests/local.mk): routes files, traces, the table
# generator.
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
# over a minute natively), the *_tsan and *_asan builds, and flow_test
# (its admission test reads the cache's measured costs, which valgrind
# distorts; flow_asan_test checks its memory).
VALGRIND = valgrind
VALGRIND_JOBS = 2
VALGRIND_TESTS = \
	tests/unit/fib_test \
	tests/unit/fib_rcu_test \
	tests/unit/conf_test \
	tests/unit/ctl_test \
	tests/unit/lookup_test \
	tests/unit/mphash_test \
	tests/unit/resolve_test \
	tests/util/routes_test \
	tests/util/tablegen_test
dist_noinst_SCRIPTS += tests/valgrind.sh
CLEANFILES += $(VALGRIND_TESTS:=.vg.log) $(VALGRIND_TESTS:=.vg.res)

check-valgrind: $(VALGRIND_TESTS)
	@LIBTOOL="$(LIBTOOL)" VALGRIND="$(VALGRIND)" \
		$(SHELL) $(srcdir)/tests/valgrind.sh $(VALGRIND_JOBS) $(VALGRIND_TESTS)

.PHONY: check-valgrind

# The UNIX listener set-up and the spare descriptor, on real sockets.
check_PROGRAMS += tests/unit/listen_test
TESTS += tests/unit/listen_test
tests_unit_listen_test_SOURCES = tests/unit/listen_test.c
tests_unit_listen_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_listen_test_LDADD = daemon/libingest.la $(CHECK_LIBS)

# The compaction decision against a table and a model.
check_PROGRAMS += tests/unit/compact_test
TESTS += tests/unit/compact_test
tests_unit_compact_test_SOURCES = tests/unit/compact_test.c daemon/compact.c
tests_unit_compact_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_compact_test_LDADD = $(CHECK_LIBS)

# One source of defaults: conf's, mapped by daemon/settings, equal the
# modules' own.
check_PROGRAMS += tests/unit/defaults_test
TESTS += tests/unit/defaults_test
tests_unit_defaults_test_SOURCES = tests/unit/defaults_test.c
tests_unit_defaults_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_defaults_test_LDADD = daemon/libingest.la conf/libconf.la cache/libflow.la \
	fib/libfib.la $(LIBMNL_LIBS) $(LIBEVENT_LIBS) $(CHECK_LIBS) $(URCU_LIBS) -lpthread

# The resync merge against a naive model, random route sets.
check_PROGRAMS += tests/unit/sweep_test
TESTS += tests/unit/sweep_test
tests_unit_sweep_test_SOURCES = tests/unit/sweep_test.c daemon/ingest_sweep.c
tests_unit_sweep_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_sweep_test_LDADD = fib/libfib.la $(CHECK_LIBS) $(URCU_LIBS)

# The netlink parser on the fuzz seed corpus against golden files in
# tests/nl (NL_TEST_REGEN=1 rewrites them; see the test's DOC comment).
check_PROGRAMS += tests/unit/nl_test
TESTS += tests/unit/nl_test
tests_unit_nl_test_SOURCES = tests/unit/nl_test.c
tests_unit_nl_test_CPPFLAGS = $(AM_CPPFLAGS) \
	-DNL_CORPUS='"$(abs_top_srcdir)/tests/fuzz/nl_corpus"' \
	-DNL_POLICY_CORPUS='"$(abs_top_srcdir)/tests/fuzz/nl_policy_corpus"' \
	-DNL_GOLDEN='"$(abs_top_srcdir)/tests/nl"'
tests_unit_nl_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBMNL_CFLAGS)
tests_unit_nl_test_LDADD = daemon/libingest.la fib/libfib.la $(LIBMNL_LIBS) $(CHECK_LIBS)
EXTRA_DIST += tests/nl
CLEANFILES += nl_test-*.out

# The sysctl reader over a fake /proc/sys/net, and its watch on a FIB.
check_PROGRAMS += tests/unit/sysctl_test
TESTS += tests/unit/sysctl_test
tests_unit_sysctl_test_SOURCES = tests/unit/sysctl_test.c
tests_unit_sysctl_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_sysctl_test_LDADD = daemon/libingest.la fib/libfib.la $(LIBEVENT_LIBS) $(CHECK_LIBS) \
	$(URCU_LIBS) -lpthread

# The loop-lateness histogram against a sorted array.
check_PROGRAMS += tests/unit/lag_test
TESTS += tests/unit/lag_test
tests_unit_lag_test_SOURCES = tests/unit/lag_test.c daemon/lag.c
tests_unit_lag_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_lag_test_LDADD = $(CHECK_LIBS) -lm

# The kernel's multipath hash: golden vectors captured from Linux
# (tests/integration/mphash_kernel.sh checks the kernel itself as root).
# The test includes fib/mphash.c for its static SipHash; fib_mphash is
# not exported by libfib.
check_PROGRAMS += tests/unit/mphash_test
TESTS += tests/unit/mphash_test
tests_unit_mphash_test_SOURCES = tests/unit/mphash_test.c
tests_unit_mphash_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_mphash_test_LDADD = $(CHECK_LIBS)

# The decision counters (daemon/decisions.c): slots, batches, threads.
check_PROGRAMS += tests/unit/decisions_test
TESTS += tests/unit/decisions_test
tests_unit_decisions_test_SOURCES = tests/unit/decisions_test.c daemon/decisions.c
tests_unit_decisions_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_decisions_test_LDADD = $(CHECK_LIBS) -lpthread

# Policy and resolution against a naive model of the kernel's rule walk
# (random rule sets, routes and flows), multipath, sources; the test links
# fib/mphash.c itself (libfib keeps fib_mphash hidden). Again under
# AddressSanitizer + UBSan with libfib's sources and the fault hooks.
check_PROGRAMS += tests/unit/resolve_test
TESTS += tests/unit/resolve_test
tests_unit_resolve_test_SOURCES = tests/unit/resolve_test.c fib/mphash.c
tests_unit_resolve_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_resolve_test_LDADD = fib/libfib.la $(CHECK_LIBS) $(URCU_LIBS) -lpthread
check_PROGRAMS += tests/unit/resolve_asan_test
TESTS += tests/unit/resolve_asan_test
tests_unit_resolve_asan_test_SOURCES = tests/unit/resolve_test.c $(fib_libfib_la_SOURCES)
tests_unit_resolve_asan_test_CPPFLAGS = $(AM_CPPFLAGS) -DFIB_FAULT_INJECTION
tests_unit_resolve_asan_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1 -g
tests_unit_resolve_asan_test_LDFLAGS = -XCClinker -fsanitize=address,undefined
tests_unit_resolve_asan_test_LDADD = $(URCU_LIBS) $(CHECK_LIBS) -lpthread
