/* SPDX-License-Identifier: BSD-2-Clause */
/* DOC: naive longest-prefix match (see lpm_model.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tests/unit/lpm_model.h"

void
lpm_init(struct lpm_model *m)
{
	memset(m, 0, sizeof(*m));
}

void
lpm_fini(struct lpm_model *m)
{
	free(m->r);
	memset(m, 0, sizeof(*m));
}

static bool
lpm_same_key(const struct lpm_route *a, const struct lpm_route *b)
{
	return a->family == b->family && a->plen == b->plen && a->table == b->table &&
	       a->tos == b->tos && a->prio == b->prio && memcmp(a->dst.b, b->dst.b, 16) == 0;
}

long
lpm_find(const struct lpm_model *m, const struct lpm_route *k)
{
	for (size_t i = 0; i < m->n; i++)
		if (lpm_same_key(&m->r[i], k))
			return (long)i;
	return -1;
}

void
lpm_add(struct lpm_model *m, const struct lpm_route *r)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 256;
		m->r = realloc(m->r, m->cap * sizeof(*m->r));
		if (!m->r)
			abort();
	}
	m->r[m->n++] = *r;
}

void
lpm_del(struct lpm_model *m, size_t i)
{
	m->r[i] = m->r[--m->n];
}

bool
lpm_covers(const struct lpm_route *r, int family, const uint8_t *addr)
{
	unsigned full = r->plen / 8, rest = r->plen % 8;

	if (r->family != family)
		return false;
	if (memcmp(r->dst.b, addr, full) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));
		if ((r->dst.b[full] & mask) != (addr[full] & mask))
			return false;
	}
	return true;
}

const struct lpm_route *
lpm_lookup(const struct lpm_model *m, int family, const uint8_t *addr, uint32_t table, uint8_t tos)
{
	const struct lpm_route *best = NULL;

	for (size_t i = 0; i < m->n; i++) {
		const struct lpm_route *r = &m->r[i];
		if (r->table != table || (r->tos && r->tos != tos) || !lpm_covers(r, family, addr))
			continue;
		if (!best || r->plen > best->plen ||
		    (r->plen == best->plen &&
		     (r->tos > best->tos || (r->tos == best->tos && r->prio < best->prio))))
			best = r;
	}
	return best;
}

void
lpm_to_fib(const struct lpm_route *r, struct fib_route *fr, struct fib_nh *nh)
{
	memset(fr, 0, sizeof(*fr));
	memset(nh, 0, sizeof(*nh));
	fr->family = r->family;
	fr->plen = r->plen;
	fr->dst = r->dst;
	fr->type = r->type;
	fr->tos = r->tos;
	fr->table = r->table;
	fr->priority = r->prio;
	fr->protocol = 186;
	if (r->type == FIB_UNICAST) {
		nh->ifindex = 1 + (r->prio % 3);
		nh->weight = 1;
		fr->nh = nh;
		fr->nh_count = 1;
	}
}

bool
lpm_same(const struct lpm_route *r, const struct fib_match *fm)
{
	return fm->family == r->family && fm->plen == r->plen && fm->table == r->table &&
	       fm->tos == r->tos && fm->type == r->type && fm->info->priority == r->prio &&
	       memcmp(fm->prefix.b, r->dst.b, 16) == 0;
}

uint64_t
lpm_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static void
lpm_mask(union fib_addr *a, unsigned plen, unsigned bytes)
{
	for (unsigned i = 0; i < 16; i++) {
		unsigned bit = i * 8;
		if (i >= bytes || bit >= plen)
			a->b[i] = 0;
		else if (plen - bit < 8)
			a->b[i] &= (uint8_t)(0xff << (8 - (plen - bit)));
	}
}

void
lpm_random_route(uint64_t *s, int family, struct lpm_route *r)
{
	unsigned bytes = family == AF_INET ? 4 : 16, maxlen = bytes * 8;
	uint64_t x = lpm_rand(s);
	unsigned plen;

	memset(r, 0, sizeof(*r));
	r->family = (uint8_t)family;
	/* A few clusters so that prefixes nest and nodes fill up. */
	for (unsigned i = 0; i < bytes; i++)
		r->dst.b[i] = (uint8_t)lpm_rand(s);
	r->dst.b[0] = (uint8_t)(x & 3) * 64 + 1;
	if (family == AF_INET6) {
		r->dst.b[0] = 0x20;
		r->dst.b[1] = (uint8_t)(x & 3);
	}
	switch ((x >> 8) % 10) {
	case 0:
		plen = (unsigned)(lpm_rand(s) % (maxlen + 1)); /* anything, /0 and host too */
		break;
	case 1:
		plen = maxlen;
		break;
	default:
		plen = family == AF_INET ? 8 + (unsigned)(lpm_rand(s) % 17)
					 : 16 + (unsigned)(lpm_rand(s) % 33);
	}
	lpm_mask(&r->dst, plen, bytes);
	r->plen = (uint8_t)plen;
	r->table = (x >> 16) % 8 == 0 ? 100 : 254;
	r->tos = (x >> 20) % 16 == 0 ? 0x10 : 0;
	r->prio = (x >> 24) % 4 == 0 ? (uint32_t)((x >> 28) % 3) * 10 : 0;
	{
		static const uint8_t types[] = { FIB_UNICAST, FIB_UNICAST, FIB_UNICAST, FIB_BLACKHOLE,
						 FIB_UNREACHABLE, FIB_PROHIBIT, FIB_LOCAL, FIB_THROW };
		r->type = types[(x >> 32) % 8];
	}
}

void
lpm_random_addr(uint64_t *s, const struct lpm_model *m, int family, uint8_t *addr)
{
	unsigned bytes = family == AF_INET ? 4 : 16;
	uint64_t x = lpm_rand(s);

	for (unsigned i = 0; i < bytes; i++)
		addr[i] = (uint8_t)lpm_rand(s);
	if (m->n && x % 4 != 0) {
		/* inside a random route: keep its bits, randomise the rest */
		const struct lpm_route *r = &m->r[(x >> 8) % m->n];
		unsigned full = r->plen / 8, rest = r->plen % 8;
		memcpy(addr, r->dst.b, full);
		if (rest) {
			uint8_t mask = (uint8_t)(0xff << (8 - rest));
			addr[full] = (uint8_t)((r->dst.b[full] & mask) | (addr[full] & ~mask));
		}
		/* sometimes flip one bit just below the prefix */
		if ((x >> 16) % 3 == 0 && r->plen < bytes * 8)
			addr[r->plen / 8] ^= (uint8_t)(0x80 >> (r->plen % 8));
	}
}
