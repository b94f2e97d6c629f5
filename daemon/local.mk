# SPDX-License-Identifier: BSD-2-Clause
# fibd: netlink ingest (nl, ingest), logging, main.
noinst_LTLIBRARIES += daemon/libingest.la
daemon_libingest_la_SOURCES = \
	daemon/log.c \
	daemon/nl.c \
	daemon/ingest.c
noinst_HEADERS += \
	daemon/log.h \
	daemon/nl.h \
	daemon/ingest.h
daemon_libingest_la_CFLAGS = $(AM_CFLAGS) -O2 $(LIBMNL_CFLAGS) $(LIBEVENT_CFLAGS)
daemon_libingest_la_LIBADD = $(LIBMNL_LIBS) $(LIBEVENT_LIBS) -lpthread

sbin_PROGRAMS += daemon/fibd
daemon_fibd_SOURCES = daemon/fibd.c
daemon_fibd_CFLAGS = $(AM_CFLAGS) -O2 $(LIBMNL_CFLAGS) $(LIBEVENT_CFLAGS)
daemon_fibd_LDADD = daemon/libingest.la fib/libfib.la $(LIBMNL_LIBS) $(LIBEVENT_LIBS)

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
	tests/integration/nl_reset.sh
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
check-integration: daemon/fibd
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
