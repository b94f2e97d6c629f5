# SPDX-License-Identifier: BSD-2-Clause
# fibbench: the lookup benchmark of DESIGN.md; with libdpdk (HAVE_DPDK) it
# also builds DPDK rte_fib from the same routes and times it side by side;
# --cache times the flow cache (cache/libflow.la) against the plain FIB.
# Benchmarks are run by hand (tests/bench/README.md); make check only runs
# the smoke test below.
noinst_PROGRAMS += tests/bench/fibbench
tests_bench_fibbench_SOURCES = tests/bench/fibbench.c tests/bench/peer.h
tests_bench_fibbench_CFLAGS = $(AM_CFLAGS) -O2
tests_bench_fibbench_LDADD = tests/util/libtestutil.la cache/libflow.la fib/libfib.la $(URCU_LIBS) -lpthread -lm
if HAVE_DPDK
tests_bench_fibbench_SOURCES += tests/bench/peer.c
tests_bench_fibbench_CFLAGS += $(DPDK_CFLAGS)
tests_bench_fibbench_LDADD += $(DPDK_LIBS)
endif
EXTRA_DIST += tests/bench/README.md

# A seconds-long correctness check of fibbench (not a benchmark).
TESTS += tests/bench/fibbench_smoke.sh
EXTRA_DIST += tests/bench/fibbench_smoke.sh
