# SPDX-License-Identifier: BSD-2-Clause
# Soak test and the fuzz targets of the control protocol and lookup service.

# libFuzzer targets of the control protocol parser (ctl_parse) and of the
# lookup service's request handling (lookup_answer), built with clang
# outside the default build like conf-fuzz. `make fuzz-ctl` and `make
# fuzz-lookup` build and run one for FUZZ_SECONDS (60) from its seeds;
# they exit non-zero on a finding (crash, leak, failed check, timeout),
# leaving the input as tests/fuzz/{ctl,lookup}-fuzz-crash-* here.
FUZZ_SECONDS = 60
FUZZ_CLANG = clang
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_RUN_FLAGS = -print_final_stats=1 -timeout=10 -error_exitcode=1 -timeout_exitcode=1
FUZZ_FIB_SRC = $(fib_libfib_la_SOURCES:%=$(top_srcdir)/%)
# lookup.c may answer through the flow cache: link it (left NULL here).
FUZZ_FLOW_SRC = $(cache_libflow_la_SOURCES:%=$(top_srcdir)/%)
EXTRA_DIST += tests/fuzz/ctl_fuzz.c tests/fuzz/lookup_fuzz.c \
	tests/fuzz/ctl_corpus tests/fuzz/lookup_corpus tests/fuzz/README.md
CLEANFILES += tests/fuzz/ctl_fuzz tests/fuzz/lookup_fuzz

tests/fuzz/ctl_fuzz: $(top_srcdir)/tests/fuzz/ctl_fuzz.c $(top_srcdir)/daemon/ctl.c \
		$(top_srcdir)/daemon/ctl.h $(FUZZ_FIB_SRC)
	$(AM_V_at)$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_CLANG) $(FUZZ_FLAGS) -I$(top_srcdir) -I$(top_builddir) \
		-D_GNU_SOURCE $(LIBEVENT_CFLAGS) $(URCU_CFLAGS) -o $@ \
		$(top_srcdir)/tests/fuzz/ctl_fuzz.c $(top_srcdir)/daemon/ctl.c \
		$(FUZZ_FIB_SRC) $(LIBEVENT_LIBS) $(URCU_LIBS) -lpthread

tests/fuzz/lookup_fuzz: $(top_srcdir)/tests/fuzz/lookup_fuzz.c $(top_srcdir)/daemon/lookup.c \
		$(top_srcdir)/daemon/lookup.h $(top_srcdir)/daemon/lookup_proto.h \
		$(FUZZ_FIB_SRC) $(FUZZ_FLOW_SRC)
	$(AM_V_at)$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_CLANG) $(FUZZ_FLAGS) -I$(top_srcdir) -I$(top_builddir) \
		-D_GNU_SOURCE $(URCU_CFLAGS) -o $@ \
		$(top_srcdir)/tests/fuzz/lookup_fuzz.c $(FUZZ_FIB_SRC) $(FUZZ_FLOW_SRC) $(URCU_LIBS) -lpthread

fuzz-ctl: tests/fuzz/ctl_fuzz
	$(MKDIR_P) tests/fuzz/ctl_corpus.new
	tests/fuzz/ctl_fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=4096 $(FUZZ_RUN_FLAGS) \
		-artifact_prefix=tests/fuzz/ctl-fuzz- \
		tests/fuzz/ctl_corpus.new $(top_srcdir)/tests/fuzz/ctl_corpus

fuzz-lookup: tests/fuzz/lookup_fuzz
	$(MKDIR_P) tests/fuzz/lookup_corpus.new
	tests/fuzz/lookup_fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=4200 $(FUZZ_RUN_FLAGS) \
		-artifact_prefix=tests/fuzz/lookup-fuzz- \
		tests/fuzz/lookup_corpus.new $(top_srcdir)/tests/fuzz/lookup_corpus

.PHONY: fuzz-ctl fuzz-lookup

# The full-table churn soak (root, network namespace; see the DOC comment
# of tests/soak/soak.sh): `make soak` (tier1, CYCLES=10, tens of minutes)
# and `make soak-short` (RIS rrc06, 2 cycles; a stage of ./quickstart test,
# 2-5 minutes).
# Parameters by environment (CYCLES, READERS, SAMPLES, LINX, ...). The
# script exits 77 when it cannot run (not root, no netns); the make
# rules then say SKIP and succeed. Not part of make check.
EXTRA_PROGRAMS = tests/soak/soak_reader
tests_soak_soak_reader_SOURCES = tests/soak/soak_reader.c
CLEANFILES += tests/soak/soak_reader
EXTRA_DIST += tests/soak/soak.sh tests/soak/fuzz-long.sh tests/soak/README.md

SOAK_RUN = srcdir=$(srcdir) FIBD=./daemon/fibd FIBCTL=./client/fibctl \
	SOAK_READER=./tests/soak/soak_reader bash $(srcdir)/tests/soak/soak.sh; \
	rc=$$?; if [ $$rc = 77 ]; then echo "SKIP: soak"; exit 0; fi; exit $$rc

soak: daemon/fibd client/fibctl tests/soak/soak_reader
	@$(SOAK_RUN)

soak-short: daemon/fibd client/fibctl tests/soak/soak_reader
	@SOAK_SHORT=1 $(SOAK_RUN)

.PHONY: soak soak-short
