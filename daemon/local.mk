# SPDX-License-Identifier: BSD-2-Clause
# fibd: netlink ingest (nl, ingest), control socket (ctl), logging, main;
# fibctl, the control client.
noinst_LTLIBRARIES += daemon/libingest.la
daemon_libingest_la_SOURCES = \
	daemon/log.c \
	daemon/nl.c \
	daemon/ingest.c \
	daemon/ingest_sweep.c \
	daemon/ctl.c \
	daemon/lookup.c
noinst_HEADERS += \
	daemon/log.h \
	daemon/nl.h \
	daemon/ingest.h \
	daemon/ingest_sweep.h \
	daemon/ctl.h \
	daemon/lookup.h
daemon_libingest_la_CFLAGS = $(AM_CFLAGS) -O2 $(LIBMNL_CFLAGS) $(LIBEVENT_CFLAGS)
daemon_libingest_la_LIBADD = $(LIBMNL_LIBS) $(LIBEVENT_LIBS) -lpthread

sbin_PROGRAMS += daemon/fibd
daemon_fibd_SOURCES = daemon/fibd.c
daemon_fibd_CPPFLAGS = $(AM_CPPFLAGS) -DFIBD_CONF='"$(sysconfdir)/fibd/fibd.yaml"'
daemon_fibd_CFLAGS = $(AM_CFLAGS) -O2 $(LIBMNL_CFLAGS) $(LIBEVENT_CFLAGS) $(SYSTEMD_CFLAGS)
daemon_fibd_LDADD = daemon/libingest.la conf/libconf.la cache/libflow.la fib/libfib.la \
	$(LIBMNL_LIBS) $(LIBEVENT_LIBS) $(SYSTEMD_LIBS) $(URCU_LIBS)

bin_PROGRAMS += daemon/fibctl
daemon_fibctl_SOURCES = daemon/fibctl.c
daemon_fibctl_CPPFLAGS = $(AM_CPPFLAGS) -DFIBCTL_SOCKET='"/run/fibd/fibd.sock"'

# Example client of the batch lookup service, and its benchmark mode.
noinst_PROGRAMS += examples/fibl
examples_fibl_SOURCES = examples/fibl.c

# Control protocol: the line parser and the server over a real socket.
check_PROGRAMS += tests/unit/ctl_test
TESTS += tests/unit/ctl_test
tests_unit_ctl_test_SOURCES = tests/unit/ctl_test.c
tests_unit_ctl_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_ctl_test_LDADD = daemon/libingest.la cache/libflow.la fib/libfib.la $(LIBEVENT_LIBS) \
	$(CHECK_LIBS) $(URCU_LIBS)

# The batch lookup service over a real socket and a real FIB.
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
tests_unit_lookup_tsan_test_SOURCES = tests/unit/lookup_test.c daemon/lookup.c cache/flow.c \
	$(fib_libfib_la_SOURCES)
tests_unit_lookup_tsan_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -fsanitize=thread -O1 -g
tests_unit_lookup_tsan_test_LDFLAGS = -fsanitize=thread
tests_unit_lookup_tsan_test_LDADD = $(URCU_LIBS) $(CHECK_LIBS) -lpthread
endif

# The config golden files through `fibd -n`, fibctl's output golden files
# (tests/ctl), and the whole daemon in a namespace (root; else skipped).
TESTS += \
	tests/integration/daemon_conf.sh \
	tests/integration/daemon_fibctl.sh \
	tests/integration/daemon_basic.sh \
	tests/integration/daemon_cache.sh
dist_noinst_SCRIPTS += \
	tests/integration/daemon_conf.sh \
	tests/integration/daemon_fibctl.sh \
	tests/integration/daemon_basic.sh \
	tests/integration/daemon_cache.sh
EXTRA_DIST += tests/ctl daemon/README.md

# Netlink integration tests (network namespaces, real kernel; skipped
# unless root). The fast ones run in `make check`; all of them, the full
# RIS/LINX table included, in `make check-integration`.
TESTS += \
	tests/integration/nl_basic.sh \
	tests/integration/nl_enobufs.sh
NL_INTEGRATION_TESTS = \
	tests/integration/nl_basic.sh \
	tests/integration/nl_enobufs.sh \
	tests/integration/nl_ris.sh \
	tests/integration/nl_reset.sh \
	tests/integration/daemon_basic.sh \
	tests/integration/daemon_cache.sh
EXTRA_DIST += \
	tests/integration/lib.sh \
	tests/integration/nl_ris.sh \
	tests/integration/nl_reset.sh \
	tests/integration/nlbench.sh \
	tests/integration/README.md \
	tests/fuzz/nl_fuzz.c \
	tests/fuzz/nl_seeds.c \
	tests/fuzz/nl_corpus \
	tests/fuzz/make-nl-seeds.sh \
	tests/fuzz/run-nl-fuzz.sh
dist_noinst_SCRIPTS += \
	tests/integration/nl_basic.sh \
	tests/integration/nl_enobufs.sh

.PHONY: check-integration fuzz-nl bench-nl
check-integration: daemon/fibd daemon/fibctl
	@fail=0; for t in $(NL_INTEGRATION_TESTS); do \
		echo "== $$t"; srcdir=$(srcdir) bash $(srcdir)/$$t; rc=$$?; \
		if [ $$rc = 77 ]; then echo "SKIP $$t"; elif [ $$rc != 0 ]; then fail=1; fi; \
	done; exit $$fail

# libFuzzer run of the route-message parser, FUZZ_SECONDS (60) long.
fuzz-nl:
	srcdir=$(srcdir) BUILDDIR=$(abs_top_builddir) bash $(srcdir)/tests/fuzz/run-nl-fuzz.sh

# Full-table ingest benchmark (tier1, about 1M routes; minutes, root).
bench-nl: daemon/fibd
	srcdir=$(srcdir) bash $(srcdir)/tests/integration/nlbench.sh

# New unit tests from h2 (to move to tests/unit/local.mk)

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
	-DNL_GOLDEN='"$(abs_top_srcdir)/tests/nl"'
tests_unit_nl_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBMNL_CFLAGS)
tests_unit_nl_test_LDADD = daemon/libingest.la fib/libfib.la $(LIBMNL_LIBS) $(CHECK_LIBS)
EXTRA_DIST += tests/nl
CLEANFILES += nl_test-*.out
