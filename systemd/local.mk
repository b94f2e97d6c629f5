# SPDX-License-Identifier: BSD-2-Clause
# systemd integration: the unit (fibd.service.in, paths substituted here),
# the sysusers.d entry, the metrics drop-in (an example, in docdir), the
# man pages fibd(8) and fibctl(8), and the tests
# that check the unit's hardening and what `make install` installs.
# (The example config and fibd.yaml(5) are installed by conf/local.mk.)
systemdsystemunit_DATA = systemd/fibd.service
sysusersdir = $(prefix)/lib/sysusers.d
sysusers_DATA = systemd/sysusers.d/fibd.conf
# The drop-in that lets the unit open the metrics listener's socket.
systemdexampledir = $(docdir)/examples
dist_systemdexample_DATA = systemd/fibd-metrics.conf
dist_man8_MANS = \
	systemd/fibd.8 \
	systemd/fibctl.8
EXTRA_DIST += \
	systemd/fibd.service.in \
	systemd/fibd.sysusers
CLEANFILES += \
	systemd/fibd.service \
	systemd/sysusers.d/fibd.conf

systemd/fibd.service: $(top_srcdir)/systemd/fibd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	sed -e 's|@sbindir[@]|$(sbindir)|g' \
	    -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	    $(top_srcdir)/systemd/fibd.service.in > $@.tmp && mv $@.tmp $@

# sysusers.d wants NAME.conf; keep the source name telling.
systemd/sysusers.d/fibd.conf: $(top_srcdir)/systemd/fibd.sysusers
	$(AM_V_GEN)$(MKDIR_P) systemd/sysusers.d && cp $(top_srcdir)/systemd/fibd.sysusers $@

# security_test.sh: exposure of the unit <= 2.0 and `systemd-analyze
# verify` clean (skipped without systemd-analyze --offline);
# install_test.sh: `make install DESTDIR=...` installs the expected files;
# man_test.sh: the man pages format without a groff warning.
TESTS += \
	systemd/security_test.sh \
	systemd/install_test.sh \
	systemd/man_test.sh
dist_noinst_SCRIPTS += \
	systemd/security_test.sh \
	systemd/install_test.sh \
	systemd/man_test.sh
