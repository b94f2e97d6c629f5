# SPDX-License-Identifier: BSD-2-Clause
# fibctl, the control client of fibd: apart from the daemon, as birdc and
# bgpctl are; installed in $(bindir). Its man page is systemd/fibctl.8.
bin_PROGRAMS += client/fibctl
client_fibctl_SOURCES = client/fibctl.c
client_fibctl_CPPFLAGS = $(AM_CPPFLAGS) -DFIBCTL_SOCKET='"/run/fibd/fibd.sock"'
