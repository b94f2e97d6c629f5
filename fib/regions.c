/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: route region generations (see fib/regions.h)
 *
 * The counters live inside struct fib_ctx (fib/fib_priv.h).
 */
#include "config.h"

#include <sys/socket.h>

#include "fib/rcu.h"
#include "fib/fib_priv.h"
#include "fib/policy_priv.h"
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

uint64_t
fib_policy_gen_rcu(const struct fib *fib, int family)
{
	const struct fib_policy *p = rcu_dereference(fib->policy[policy_fidx(family)]);

	return p->gen;
}

uint64_t
fib_policy_keymask_rcu(const struct fib *fib, int family, struct fib_keymask *m)
{
	const struct fib_policy *p = rcu_dereference(fib->policy[policy_fidx(family)]);
	unsigned hp = family == AF_INET ? p->hash.policy4 : p->hash.policy6;

	/* fib/mphash.c mixes the protocol always and the ports under policy
	 * 1; the kernel's L3 hash of IPv6 reads the flow label; custom
	 * fields (policy 3) may read anything */
	m->fields = FIB_KEY_PROTO;
	m->mark_mask = 0;
	if (hp == 1 || hp == 3)
		m->fields |= FIB_KEY_SPORT | FIB_KEY_DPORT;
	if (family == AF_INET6 && hp != 1)
		m->fields |= FIB_KEY_FLOWLABEL;
	for (uint32_t i = 0; i < p->nrules; i++) {
		const struct fib_rule *r = &p->rules[i].r;

		if (r->mark_mask) {
			m->fields |= FIB_KEY_MARK;
			m->mark_mask |= r->mark_mask;
		}
		if (r->uid_lo <= r->uid_hi)
			m->fields |= FIB_KEY_UID;
		if (r->sport_hi)
			m->fields |= FIB_KEY_SPORT;
		if (r->dport_hi)
			m->fields |= FIB_KEY_DPORT;
	}
	return p->gen;
}
