# SPDX-License-Identifier: BSD-2-Clause
# Example client of the batch lookup service (daemon/lookup_proto.h), and
# its benchmark mode. Built, not installed.
noinst_PROGRAMS += examples/fibl
examples_fibl_SOURCES = examples/fibl.c
examples_fibl_LDADD = -lpthread
