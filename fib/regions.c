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

/* One writer: a load and a release store, not a locked read-modify-write
 * (on x86 a release store is a plain store; a /0 moves 65,536 counters). */
static inline void
regions_inc(uint32_t *g)
{
	__atomic_store_n(g, __atomic_load_n(g, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

void
regions_bump(struct fib_regions *rg, int family, const union fib_addr *dst, unsigned plen)
{
	unsigned f = family == AF_INET6;
	uint32_t *g = rg->coarse[f], first, n, i;
	/* the coarse index is bits [skip, skip + 16) of the address (IPv6:
	 * mixed with the 16 above, which a prefix longer than skip fixes);
	 * the fine one a hash of the first fine bits */
	unsigned skip = f ? 16 : 0, fine = f ? 48 : 24;

	if (plen <= skip) {
		regions_bump_all(rg, family);
		return;
	}
	if (plen >= fine) {
		regions_inc(&rg->fine[f][fib_region_fine_of(family, dst->b)]);
		return;
	}
	if (plen >= skip + FIB_REGION_BITS) {
		regions_inc(&g[fib_region_of(family, dst->b)]);
		return;
	}
	n = 1u << (skip + FIB_REGION_BITS - plen);
	first = fib_region_of(family, dst->b) & ~(n - 1);
	for (i = 0; i < n; i++)
		regions_inc(&g[first + i]);
}

/* Every destination's generation holds a coarse counter: bumping them
 * all stales every region. */
void
regions_bump_all(struct fib_regions *rg, int family)
{
	unsigned f, i;

	for (f = 0; f < 2; f++) {
		if (family != AF_UNSPEC && (family == AF_INET6) != f)
			continue;
		for (i = 0; i < FIB_REGIONS; i++)
			regions_inc(&rg->coarse[f][i]);
	}
}

uint32_t
fib_region_gen_rcu(const struct fib *fib, int family, const void *dst)
{
	const struct fib_regions *rg = &fib->ctx.regions;
	unsigned f = family == AF_INET6;

	return __atomic_load_n(&rg->coarse[f][fib_region_of(family, dst)], __ATOMIC_ACQUIRE) +
	       __atomic_load_n(&rg->fine[f][fib_region_fine_of(family, dst)], __ATOMIC_ACQUIRE);
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
