# SPDX-License-Identifier: BSD-2-Clause
# conf: YAML (libyaml) -> struct conf, a convenience library shared by the
# daemon, fibctl and the tests (its tests and golden files are in
# tests/unit/local.mk, its fuzz target in tests/fuzz/local.mk).
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
