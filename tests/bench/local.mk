# SPDX-License-Identifier: BSD-2-Clause
# Benchmarks, run by hand (tests/bench/README.md); make check only runs the
# fibbench smoke test below. The netlink ingest benchmark, `make bench-nl`,
# runs the daemon in a namespace and is in tests/integration/local.mk.

# fibbench: the lookup benchmark (routes file, trace, JSON); with libdpdk
# (HAVE_DPDK) it also builds DPDK rte_fib from the same routes and times it
# side by side; --cache times the flow cache (cache/libflow.la) against the
# plain FIB.
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

# Writer-side benchmark: reclamation modes, worst operation, bulk load, free.
noinst_PROGRAMS += tests/bench/reclaimbench
tests_bench_reclaimbench_SOURCES = tests/bench/reclaimbench.c
tests_bench_reclaimbench_CFLAGS = $(AM_CFLAGS) -O2
tests_bench_reclaimbench_LDADD = fib/libfib.la tests/util/libtestutil.la -lpthread

# Expiry scan and lookup-latency benchmark of the flow cache.
noinst_PROGRAMS += tests/bench/gcbench
tests_bench_gcbench_SOURCES = tests/bench/gcbench.c
tests_bench_gcbench_CFLAGS = $(AM_CFLAGS) -O2
tests_bench_gcbench_LDADD = tests/util/libtestutil.la cache/libflow.la fib/libfib.la $(URCU_LIBS) -lpthread -lm

# fib_resolve_rcu against fib_lookup4_rcu: default rules, 1, 16, 256 rules.
noinst_PROGRAMS += tests/bench/resolvebench
tests_bench_resolvebench_SOURCES = tests/bench/resolvebench.c
tests_bench_resolvebench_CFLAGS = $(AM_CFLAGS) -O2
tests_bench_resolvebench_LDADD = tests/util/libtestutil.la fib/libfib.la $(URCU_LIBS) -lpthread

# The batch lookup socket in a namespace with a full table (root; by
# hand): fibl --bench one and two clients, p99 under route churn.
EXTRA_DIST += tests/bench/lookup_bench.sh tests/bench/lookup_churn.py
