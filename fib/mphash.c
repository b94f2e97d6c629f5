/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: placeholder multipath hash
 *
 * A simple mix of the flow's L3 fields (and L4 ports under policy 1), so
 * that paths spread and a flow always takes the same one. To be replaced
 * by the kernel's flow hash (fib_multipath_hash: flow dissector keys,
 * jhash with the seed) keeping the signature of fib/mphash.h.
 */
#include "config.h"

#include <string.h>

#include "fib/mphash.h"

static uint64_t
mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

uint32_t
fib_mphash(const struct fib_mp_hash *h, const struct fib_flow *fl, const union fib_addr *saddr)
{
	uint64_t w[4], x = h->seed;
	unsigned policy = fl->family == AF_INET ? h->policy4 : h->policy6;

	memcpy(w, fl->dst.b, 16);
	memcpy(w + 2, saddr->b, 16);
	for (int i = 0; i < 4; i++)
		x = mix(x, w[i]);
	x = mix(x, fl->ipproto);
	if (policy == 1)
		x = mix(x, (uint64_t)fl->sport << 16 | fl->dport);
	return (uint32_t)(x >> 33); /* 31 bits */
}
