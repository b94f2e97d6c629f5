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
daemon_libingest_la_LIBADD = $(LIBMNL_LIBS) $(LIBEVENT_LIBS)

sbin_PROGRAMS += daemon/fibd
daemon_fibd_SOURCES = daemon/fibd.c
daemon_fibd_CFLAGS = $(AM_CFLAGS) -O2 $(LIBMNL_CFLAGS) $(LIBEVENT_CFLAGS)
daemon_fibd_LDADD = daemon/libingest.la fib/libfib.la $(LIBMNL_LIBS) $(LIBEVENT_LIBS)
