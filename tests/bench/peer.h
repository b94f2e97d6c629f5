/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: peer, DPDK rte_fib run side by side with libfib in fibbench
 *
 * Builds DPDK's rte_fib (DIR-24-8, IPv4) or rte_fib6 (TRIE, IPv6) from the
 * same routes fibbench loads, the next hop of the route on line i being i,
 * and times its 64-address bulk lookups on the same trace, as a
 * stand-alone DPDK benchmark would, on 2 MiB huge pages when libfib's
 * tables can have them too and the machine has 2 GiB of them free
 * (FIBBENCH_HUGE=0: 4 KiB pages). Compiled only when configure found
 * libdpdk (HAVE_DPDK).
 */
#ifndef TESTS_BENCH_PEER_H
#define TESTS_BENCH_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "tests/util/routes.h"
#include "tests/util/trace.h"

struct peer_result {
	const char *name; /* "rte_fib_dir24_8_bulk64" or "rte_fib6_trie_bulk64" */
	double build_s;   /* create + add every route */
	double best_s;    /* best of the timed runs */
	uint64_t checksum; /* sum of line numbers of the matches */
	const char *pages; /* "2M" (hugetlbfs) or "4K" */
};

/*
 * 1 when both get 2 MiB pages (hugetlbfs for rte_fib, transparent huge
 * pages for libfib), 0 when both get 4 KiB pages: the caller then turns
 * libfib's huge pages off before it builds (PR_SET_THP_DISABLE).
 */
int peer_huge(void);

/*
 * Initialise DPDK's EAL (once per process), build, time runs passes of
 * bulk lookups over t and checksum them. Returns 0 or -errno with a
 * message in err. Context: owner (the benchmark's main thread).
 */
int peer_run(const struct routes *rt, const struct trace *t, int runs, struct peer_result *res,
	     char *err, size_t errlen);

#endif
