/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the naive model libfib is tested against
 *
 * A flat array of routes; a lookup scans all of them and keeps the
 * longest match, then the kernel's tie-breaks (higher tos, then lower
 * priority). Slow and obviously right.
 */
#ifndef TESTS_LPM_MODEL_H
#define TESTS_LPM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fib/fib.h"

struct lpm_route {
	union fib_addr dst;
	uint8_t family, plen, tos, type;
	uint32_t table, prio;
};

struct lpm_model {
	struct lpm_route *r;
	size_t n, cap;
};

void lpm_init(struct lpm_model *m);
void lpm_fini(struct lpm_model *m);
/* Index of the route with this exact key, or -1. */
long lpm_find(const struct lpm_model *m, const struct lpm_route *k);
void lpm_add(struct lpm_model *m, const struct lpm_route *r);
void lpm_del(struct lpm_model *m, size_t i);
bool lpm_covers(const struct lpm_route *r, int family, const uint8_t *addr);
const struct lpm_route *lpm_lookup(const struct lpm_model *m, int family, const uint8_t *addr,
				   uint32_t table, uint8_t tos);
/* Fill a struct fib_route (one next hop through ifindex 1) from r. */
void lpm_to_fib(const struct lpm_route *r, struct fib_route *fr, struct fib_nh *nh);
/* Does a FIB match describe model route r? */
bool lpm_same(const struct lpm_route *r, const struct fib_match *fm);
/* xorshift64*: deterministic per seed. */
uint64_t lpm_rand(uint64_t *s);
/* Random canonical prefix, clustered so that prefixes nest. */
void lpm_random_route(uint64_t *s, int family, struct lpm_route *r);
/* Random address near the model's prefixes (or anywhere). */
void lpm_random_addr(uint64_t *s, const struct lpm_model *m, int family, uint8_t *addr);

#endif
