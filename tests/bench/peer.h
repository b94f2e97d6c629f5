/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: peer, DPDK rte_fib run side by side with libfib in fibbench
 *
 * Builds DPDK's rte_fib (DIR-24-8, IPv4) or rte_fib6 (TRIE, IPv6) from the
 * same routes fibbench loads, the next hop of the route on line i being i,
 * and times its 64-address bulk lookups on the same trace, as a
 * stand-alone DPDK benchmark would, pass by pass, on 2 MiB huge pages when libfib's
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

struct peer;

/*
 * Initialise DPDK's EAL (once per process) and build the table of rt for
 * traces of n addresses: *p, res's name, pages and build_s (best_s
 * reset). Returns 0 or -errno with a message in err. Context: owner (the
 * benchmark's main thread), as for the calls below.
 */
int peer_new(const struct routes *rt, size_t n, struct peer **p, struct peer_result *res,
	     char *err, size_t errlen);
/* One timed pass of bulk lookups over t: its seconds; res's best_s and
 * checksum (of this pass) updated. So that fibbench can alternate it
 * with libfib's passes and take the ratio pass by pass. */
double peer_pass(struct peer *p, const struct trace *t, struct peer_result *res);
void peer_free(struct peer *p);

#endif
