/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: tablegen, deterministic BGP-like routing tables
 *
 * Makes a full-table look-alike for tests and benchmarks from a seed, with
 * the shape of a real tier-1 view (measured with fibgen -S -r): the length
 * mix, prefixes clustered in occupied blocks (IPv4 /16s across the ~220
 * usable /8s, IPv6 /32s in the RIR /12s of 2000::/3), nesting inside
 * shorter prefixes, runs of sibling /24s (/48s), no special-purpose space,
 * and skewed next hops (one carries most routes; a covered prefix mostly
 * keeps its parent's). The same seed and sizes give the same table on
 * every machine (see rng.h).
 *
 *   region (/8, /12) --> block (/16, /32) --> top-level prefixes
 *                                               `-> nested more-specifics
 *   lengths < block length are placed over the regions separately
 *
 * The result is sorted by address then length, canonical, without
 * duplicates, exactly n routes. IPv4 tables up to about 1.5M routes
 * (denser /16s past 1.1M); beyond that the usable /16s run out (-ENOSPC).
 */
#ifndef TESTS_UTIL_TABLEGEN_H
#define TESTS_UTIL_TABLEGEN_H

#include <stddef.h>
#include <stdint.h>

#include "tests/util/routes.h"

struct tablegen_params {
	int family;         /* AF_INET or AF_INET6 */
	size_t n;           /* routes */
	uint64_t seed;
	unsigned nexthops;  /* distinct next hops, 0: every route has `-` */
	double major_share; /* share of the busiest next hop among top-level routes */
};

/* Defaults: 1,000,000 IPv4 or 200,000 IPv6 routes, seed 1, 24 next hops,
 * major share 0.7. Context: any. */
void tablegen_params_default(struct tablegen_params *p, int family);

/*
 * Generate the table into out (initialised, empty). Returns 0, -EINVAL,
 * -ENOMEM or -ENOSPC (more routes than the generator's space allows).
 * About 4 s for a million IPv4 routes.
 * Context: any; no I/O.
 */
int tablegen_make(const struct tablegen_params *p, struct routes *out);

/* Shape of a sorted table, to compare generated and real ones. */
struct tablegen_stats {
	size_t n;
	size_t by_len[129];
	size_t depth[5];      /* 0, 1, 2, 3, 4 or more shorter prefixes around */
	size_t blocks;        /* occupied /16s (IPv6: /32s) */
	size_t block_max;     /* most prefixes in one block */
	size_t regions;       /* occupied /8s (IPv6: /12s) */
	size_t sib_len;       /* 24 or 48 */
	size_t sib_total;     /* prefixes of length sib_len */
	size_t sib_paired;    /* ... whose sibling is present */
	size_t nh_major;      /* routes with the most common next hop */
	size_t covered_same;  /* covered prefixes with their parent's next hop */
	size_t unsorted;      /* out-of-order or duplicate neighbours */
};

/* Measure rt (sorted as a routes file). Returns 0 or -ENOMEM. */
int tablegen_stats(const struct routes *rt, struct tablegen_stats *st);

#endif
