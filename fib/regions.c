/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: route region generations (see fib/regions.h)
 *
 * The counters live inside struct fib_ctx (fib/fib_priv.h).
 */
#include "config.h"

#include <sys/socket.h>

#include "fib/fib_priv.h"
#include "fib/regions.h"

static inline uint32_t *
regions_of(struct fib_regions *rg, int family)
{
	return rg->gen[family == AF_INET6];
}

void
regions_bump(struct fib_regions *rg, int family, const union fib_addr *dst, unsigned plen)
{
	uint32_t *g = regions_of(rg, family), first, n, i;

	if (plen >= FIB_REGION_BITS) {
		__atomic_add_fetch(&g[fib_region_of(dst->b)], 1, __ATOMIC_RELEASE);
		return;
	}
	n = 1u << (FIB_REGION_BITS - plen);
	first = fib_region_of(dst->b) & ~(n - 1);
	for (i = 0; i < n; i++)
		__atomic_add_fetch(&g[first + i], 1, __ATOMIC_RELEASE);
}

void
regions_bump_all(struct fib_regions *rg, int family)
{
	unsigned f, i;

	for (f = 0; f < 2; f++) {
		if (family != AF_UNSPEC && (family == AF_INET6) != f)
			continue;
		for (i = 0; i < FIB_REGIONS; i++)
			__atomic_add_fetch(&rg->gen[f][i], 1, __ATOMIC_RELEASE);
	}
}

uint32_t
fib_region_gen_rcu(const struct fib *fib, int family, const void *dst)
{
	return __atomic_load_n(&fib->ctx.regions.gen[family == AF_INET6][fib_region_of(dst)],
			       __ATOMIC_ACQUIRE);
}
