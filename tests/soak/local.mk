# SPDX-License-Identifier: BSD-2-Clause
# The full-table churn soak (root, network namespace; see the DOC comment
# of tests/soak/soak.sh): `make soak` (tier1, CYCLES=10, tens of minutes)
# and `make soak-short` (RIS rrc06, 2 cycles; a stage of ./quickstart test,
# 2-5 minutes).
# Parameters by environment (CYCLES, READERS, SAMPLES, LINX, ...). The
# script exits 77 when it cannot run (not root, no netns); the make
# rules then say SKIP and succeed. Not part of make check.
# tests/soak/fuzz-long.sh runs the fuzz targets of tests/fuzz/local.mk for
# long.
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
