# SPDX-License-Identifier: BSD-2-Clause
# conf: YAML (libyaml) -> struct conf, a convenience library shared by the
# daemon, fibctl and the tests.
noinst_LTLIBRARIES += conf/libconf.la
conf_libconf_la_SOURCES = \
	conf/conf.c
noinst_HEADERS += \
	conf/conf.h
conf_libconf_la_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS)
conf_libconf_la_LIBADD = $(YAML_LIBS)

# The commented example config and its man page.
fibdconfdir = $(sysconfdir)/fibd
dist_fibdconf_DATA = systemd/fibd.yaml
dist_man5_MANS = systemd/fibd.yaml.5

# Unit and golden tests: tests/conf/valid/*.yaml -> *.out (effective
# config), tests/conf/invalid/*.yaml -> *.err (file:line:column messages).
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
# tests/conf/fibd_check.sh FIBD runs the same golden files through
# `fibd -n [-v] -c` (exit status and messages); add it to TESTS once fibd
# reads its config through conf/.

# libFuzzer target for the parser; needs clang, so it stays out of the
# default build: `make conf-fuzz` builds it, `make conf-fuzz-run` runs it
# for CONF_FUZZ_SECONDS from the seeds in tests/fuzz/conf_corpus.
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

.PHONY: conf-fuzz conf-fuzz-run
