# SPDX-License-Identifier: BSD-2-Clause
# libFuzzer targets (tests/fuzz/README.md): the config parser, the netlink
# route parser, the control protocol parser and the lookup service's
# request handling. They need clang, so they stay out of the default build
# and of make check; each rule builds its target in tests/fuzz here and
# runs it from its seed corpus. tests/soak/fuzz-long.sh runs them for long.
FUZZ_SECONDS = 60
FUZZ_CLANG = clang
EXTRA_DIST += tests/fuzz/README.md

# The config parser: `make conf-fuzz` builds it, `make conf-fuzz-run` runs
# it for CONF_FUZZ_SECONDS from the seeds in tests/fuzz/conf_corpus.
CLANG = clang
CONF_FUZZ_SECONDS = 60
CONF_FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined
EXTRA_DIST += tests/fuzz/conf_fuzz.c tests/fuzz/conf_corpus
CLEANFILES += tests/fuzz/conf_fuzz

tests/fuzz/conf_fuzz: $(top_srcdir)/tests/fuzz/conf_fuzz.c $(top_srcdir)/conf/conf.c $(top_srcdir)/conf/conf.h
	$(AM_V_at)$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(CLANG) $(CONF_FUZZ_FLAGS) -I$(top_srcdir) -I$(top_builddir) \
		-D_GNU_SOURCE $(YAML_CFLAGS) -o $@ \
		$(top_srcdir)/tests/fuzz/conf_fuzz.c $(top_srcdir)/conf/conf.c $(YAML_LIBS)

conf-fuzz: tests/fuzz/conf_fuzz

conf-fuzz-run: tests/fuzz/conf_fuzz
	$(MKDIR_P) tests/fuzz/conf_corpus.new
	tests/fuzz/conf_fuzz -max_total_time=$(CONF_FUZZ_SECONDS) \
		tests/fuzz/conf_corpus.new $(top_srcdir)/tests/fuzz/conf_corpus

# The route-message parser (nl_route_parse) and the next-hop table: `make
# fuzz-nl` builds and runs it for FUZZ_SECONDS (tests/fuzz/run-nl-fuzz.sh);
# the seeds are real kernel messages (tests/fuzz/make-nl-seeds.sh).
EXTRA_DIST += \
	tests/fuzz/nl_fuzz.c \
	tests/fuzz/nl_seeds.c \
	tests/fuzz/nl_corpus \
	tests/fuzz/make-nl-seeds.sh \
	tests/fuzz/run-nl-fuzz.sh

fuzz-nl:
	srcdir=$(srcdir) BUILDDIR=$(abs_top_builddir) bash $(srcdir)/tests/fuzz/run-nl-fuzz.sh

# The rule, address and link parsers (daemon/nl_policy.c): `make
# fuzz-nl-policy` (tests/fuzz/run-nl-policy-fuzz.sh); seeds are real
# kernel messages (tests/fuzz/make-nl-policy-seeds.sh).
EXTRA_DIST += \
	tests/fuzz/nl_policy_fuzz.c \
	tests/fuzz/nl_policy_corpus \
	tests/fuzz/make-nl-policy-seeds.sh \
	tests/fuzz/run-nl-policy-fuzz.sh

fuzz-nl-policy:
	srcdir=$(srcdir) BUILDDIR=$(abs_top_builddir) bash $(srcdir)/tests/fuzz/run-nl-policy-fuzz.sh

# The control protocol parser (ctl_parse) and the lookup service's request
# handling (lookup_answer): `make fuzz-ctl` and `make fuzz-lookup` build
# and run one for FUZZ_SECONDS from its seeds; they exit non-zero on a
# finding (crash, leak, failed check, timeout), leaving the input as
# tests/fuzz/{ctl,lookup}-fuzz-crash-* here.
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_RUN_FLAGS = -print_final_stats=1 -timeout=10 -error_exitcode=1 -timeout_exitcode=1
FUZZ_FIB_SRC = $(fib_libfib_la_SOURCES:%=$(top_srcdir)/%)
# lookup.c may answer through the flow cache: link it (left NULL here).
FUZZ_FLOW_SRC = $(cache_libflow_la_SOURCES:%=$(top_srcdir)/%)
EXTRA_DIST += tests/fuzz/ctl_fuzz.c tests/fuzz/lookup_fuzz.c \
	tests/fuzz/ctl_corpus tests/fuzz/lookup_corpus
CLEANFILES += tests/fuzz/ctl_fuzz tests/fuzz/lookup_fuzz

tests/fuzz/ctl_fuzz: $(top_srcdir)/tests/fuzz/ctl_fuzz.c $(top_srcdir)/daemon/ctl.c \
		$(top_srcdir)/daemon/ctl.h $(top_srcdir)/daemon/listen.c $(FUZZ_FIB_SRC)
	$(AM_V_at)$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_CLANG) $(FUZZ_FLAGS) -I$(top_srcdir) -I$(top_builddir) \
		-D_GNU_SOURCE $(LIBEVENT_CFLAGS) $(URCU_CFLAGS) -o $@ \
		$(top_srcdir)/tests/fuzz/ctl_fuzz.c $(top_srcdir)/daemon/ctl.c \
		$(top_srcdir)/daemon/listen.c $(FUZZ_FIB_SRC) $(LIBEVENT_LIBS) $(URCU_LIBS) -lpthread

tests/fuzz/lookup_fuzz: $(top_srcdir)/tests/fuzz/lookup_fuzz.c $(top_srcdir)/daemon/lookup.c \
		$(top_srcdir)/daemon/lookup.h $(top_srcdir)/daemon/lookup_proto.h \
		$(top_srcdir)/daemon/listen.c $(FUZZ_FIB_SRC) $(FUZZ_FLOW_SRC)
	$(AM_V_at)$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_CLANG) $(FUZZ_FLAGS) -I$(top_srcdir) -I$(top_builddir) \
		-D_GNU_SOURCE $(URCU_CFLAGS) -o $@ \
		$(top_srcdir)/tests/fuzz/lookup_fuzz.c $(top_srcdir)/daemon/listen.c $(FUZZ_FIB_SRC) \
		$(FUZZ_FLOW_SRC) $(URCU_LIBS) -lpthread

fuzz-ctl: tests/fuzz/ctl_fuzz
	$(MKDIR_P) tests/fuzz/ctl_corpus.new
	tests/fuzz/ctl_fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=4096 $(FUZZ_RUN_FLAGS) \
		-artifact_prefix=tests/fuzz/ctl-fuzz- \
		tests/fuzz/ctl_corpus.new $(top_srcdir)/tests/fuzz/ctl_corpus

fuzz-lookup: tests/fuzz/lookup_fuzz
	$(MKDIR_P) tests/fuzz/lookup_corpus.new
	tests/fuzz/lookup_fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=15500 $(FUZZ_RUN_FLAGS) \
		-artifact_prefix=tests/fuzz/lookup-fuzz- \
		tests/fuzz/lookup_corpus.new $(top_srcdir)/tests/fuzz/lookup_corpus

.PHONY: conf-fuzz conf-fuzz-run fuzz-nl fuzz-nl-policy fuzz-ctl fuzz-lookup
