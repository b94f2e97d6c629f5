# SPDX-License-Identifier: BSD-2-Clause
# fibd: netlink ingest (nl, ingest), control socket (ctl), batch lookup
# socket (lookup), logging, main. fibctl is in client/local.mk; the tests
# are in tests/unit, tests/integration and tests/fuzz.
noinst_LTLIBRARIES += daemon/libingest.la
daemon_libingest_la_SOURCES = \
	daemon/log.c \
	daemon/nl.c \
	daemon/nl_policy.c \
	daemon/ingest.c \
	daemon/ingest_event.c \
	daemon/ingest_policy.c \
	daemon/ingest_dump.c \
	daemon/ingest_load.c \
	daemon/ingest_resync.c \
	daemon/ingest_sweep.c \
	daemon/sysctl.c \
	daemon/ctl.c \
	daemon/lookup.c \
	daemon/listen.c \
	daemon/handoff.c \
	daemon/compact.c \
	daemon/settings.c \
	daemon/lag.c \
	daemon/decisions.c
# The batch lookup protocol and its header-only client API, installed as
# <fib/lookup_proto.h> for programs that query fibd's lookup socket.
fibinclude_HEADERS += daemon/lookup_proto.h
noinst_HEADERS += \
	daemon/log.h \
	daemon/nl.h \
	daemon/ingest.h \
	daemon/ingest_priv.h \
	daemon/ingest_sweep.h \
	daemon/sysctl.h \
	daemon/ctl.h \
	daemon/lookup.h \
	daemon/fibd.h \
	daemon/listen.h \
	daemon/handoff.h \
	daemon/compact.h \
	daemon/settings.h \
	daemon/lag.h \
	daemon/decisions.h
daemon_libingest_la_CFLAGS = $(AM_CFLAGS) -O2 $(LIBMNL_CFLAGS) $(LIBEVENT_CFLAGS)
daemon_libingest_la_LIBADD = $(LIBMNL_LIBS) $(LIBEVENT_LIBS) -lpthread

sbin_PROGRAMS += daemon/fibd
daemon_fibd_SOURCES = \
	daemon/fibd.c \
	daemon/reload.c \
	daemon/cmds.c \
	daemon/metrics.c \
	daemon/health.c \
	daemon/settle.c
daemon_fibd_CPPFLAGS = $(AM_CPPFLAGS) -DFIBD_CONF='"$(sysconfdir)/fibd/fibd.yaml"'
daemon_fibd_CFLAGS = $(AM_CFLAGS) -O2 $(LIBMNL_CFLAGS) $(LIBEVENT_CFLAGS) $(SYSTEMD_CFLAGS)
daemon_fibd_LDADD = daemon/libingest.la conf/libconf.la cache/libflow.la fib/libfib.la \
	$(LIBMNL_LIBS) $(LIBEVENT_LIBS) $(SYSTEMD_LIBS) $(URCU_LIBS)
EXTRA_DIST += daemon/README.md
