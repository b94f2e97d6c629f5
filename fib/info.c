/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: interned route attributes (see info.h)
 *
 *   bucket[] -> info_node -> info_node      (chained, writer only)
 *                 refcnt, hash, struct fib_info (what readers see)
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fib/info.h"
#include "fib/rcu.h"
#include "fib/pool.h"
#include "fib/reclaim.h"

struct info_node {
	struct info_node *next;
	uint32_t refcnt;
	uint32_t hash;
	uint32_t handle; /* of info: what aliases hold */
	/* must be last: flexible nh[]; 8-aligned, so that a handle names it */
	_Alignas(8) struct fib_info info;
};
_Static_assert(offsetof(struct info_node, info) % 8 == 0, "a handle names the set");

struct info_table {
	struct pool *pool;
	struct reclaim *rc;
	struct info_node **bucket;
	size_t nbuckets;
	struct info_node *last; /* routes come in runs of one next hop */
	uint64_t count;
	uint64_t bytes;
};

#define INFO_BUCKETS_MIN 64

/* A set's bytes: the node, its paths, then a resilient group's bucket map. */
static size_t
info_size(unsigned nh_count, unsigned res_buckets)
{
	return sizeof(struct info_node) + nh_count * sizeof(struct fib_nh) + res_buckets;
}

static uint32_t
info_hash_bytes(uint32_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 16777619u; /* FNV-1a: the table is writer-only */
	return h;
}

/* Canonical form of r's shared attributes, so equal routes compare equal. */
static void
info_fill(struct fib_info *fi, const struct fib_route *r)
{
	memset(fi, 0, sizeof(*fi) + r->nh_count * sizeof(struct fib_nh));
	fi->priority = r->priority;
	fi->protocol = r->protocol;
	fi->scope = r->scope;
	fi->prefsrc_set = r->prefsrc_set ? 1 : 0;
	fi->nh_count = r->nh_count;
	fi->encap_type = r->encap_type;
	fi->nh_id = r->nh_id;
	fi->res_buckets = r->res_buckets;
	if (fi->prefsrc_set)
		fi->prefsrc = r->prefsrc;
	for (unsigned i = 0; i < r->nh_count; i++) {
		struct fib_nh *d = &fi->nh[i];
		const struct fib_nh *s = &r->nh[i];
		d->gw_family = s->gw_family;
		if (s->gw_family == AF_INET)
			memcpy(d->gw.b, s->gw.b, 4);
		else if (s->gw_family == AF_INET6)
			memcpy(d->gw.b, s->gw.b, 16);
		d->flags = s->flags;
		d->weight = s->weight ? s->weight : 1;
		d->ifindex = s->ifindex;
	}
}

struct info_table *
info_table_new(struct pool *pool, struct reclaim *rc)
{
	struct info_table *it = calloc(1, sizeof(*it));

	if (!it)
		return NULL;
	it->bucket = calloc(INFO_BUCKETS_MIN, sizeof(*it->bucket));
	if (!it->bucket) {
		free(it);
		return NULL;
	}
	it->nbuckets = INFO_BUCKETS_MIN;
	it->pool = pool;
	it->rc = rc;
	return it;
}

void
info_table_free(struct info_table *it)
{
	if (!it)
		return;
	free(it->bucket);
	free(it);
}

static void
info_grow(struct info_table *it)
{
	size_t nb = it->nbuckets * 2;
	struct info_node **b = calloc(nb, sizeof(*b));

	if (!b)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < it->nbuckets; i++)
		for (struct info_node *n = it->bucket[i], *next; n; n = next) {
			next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
		}
	free(it->bucket);
	it->bucket = b;
	it->nbuckets = nb;
}

/* Is n the set of key (sz bytes) and r's bucket map? */
static int
info_equal(const struct info_node *n, const struct fib_info *key, size_t sz,
	   const struct fib_route *r)
{
	return n->info.nh_count == key->nh_count && memcmp(&n->info, key, sz) == 0 &&
	       (!r->res_buckets || memcmp(fib_info_res_map(&n->info), r->res_map, r->res_buckets) == 0);
}

uint32_t
info_get(struct info_table *it, const struct fib_route *r)
{
	size_t sz = sizeof(struct fib_info) + r->nh_count * sizeof(struct fib_nh);
	unsigned nres = r->res_map ? r->res_buckets : 0;
	union {
		struct fib_info fi;
		char buf[sizeof(struct fib_info) + 255 * sizeof(struct fib_nh)];
	} key;
	uint32_t h;
	struct info_node *n;

	/* the bucket map is hashed and compared from r, not copied into key:
	 * up to 65535 bytes, too many for the stack */
	info_fill(&key.fi, r);
	key.fi.res_buckets = (uint16_t)nres;
	n = it->last;
	if (n && info_equal(n, &key.fi, sz, r)) {
		n->refcnt++;
		return n->handle;
	}
	h = info_hash_bytes(2166136261u, &key.fi, sz);
	if (nres)
		h = info_hash_bytes(h, r->res_map, nres);
	for (n = it->bucket[h & (it->nbuckets - 1)]; n; n = n->next)
		if (n->hash == h && info_equal(n, &key.fi, sz, r)) {
			n->refcnt++;
			it->last = n;
			return n->handle;
		}
	n = pool_alloc(it->pool, info_size(r->nh_count, nres));
	if (!n)
		return 0;
	/* the handle of the node plus the set's offset in it, in 8-byte units */
	n->handle = pool_handle(it->pool, n, info_size(r->nh_count, nres));
	if (!n->handle) {
		pool_free(it->pool, n, info_size(r->nh_count, nres));
		return 0;
	}
	n->handle += (uint32_t)(offsetof(struct info_node, info) / 8);
	memcpy(&n->info, &key.fi, sz);
	if (nres)
		memcpy((uint8_t *)&n->info.nh[r->nh_count], r->res_map, nres);
	n->refcnt = 1;
	n->hash = h;
	n->next = it->bucket[h & (it->nbuckets - 1)];
	it->bucket[h & (it->nbuckets - 1)] = n;
	it->count++;
	it->bytes += info_size(r->nh_count, nres);
	it->last = n;
	if (it->count > it->nbuckets)
		info_grow(it);
	return n->handle;
}

static struct info_node *
info_node_of(const struct info_table *it, uint32_t h)
{
	struct fib_info *fi = pool_handle_ptr(pool_handle_table(it->pool), h);

	return caa_container_of(fi, struct info_node, info);
}

void
info_hold(struct info_table *it, uint32_t h)
{
	info_node_of(it, h)->refcnt++;
}

void
info_put(struct info_table *it, uint32_t h)
{
	struct info_node *n = info_node_of(it, h);
	const struct fib_info *fi = &n->info;
	struct info_node **pp;

	if (--n->refcnt)
		return;
	if (it->last == n)
		it->last = NULL;
	for (pp = &it->bucket[n->hash & (it->nbuckets - 1)]; *pp; pp = &(*pp)->next)
		if (*pp == n) {
			*pp = n->next;
			break;
		}
	it->count--;
	it->bytes -= info_size(fi->nh_count, fi->res_buckets);
	reclaim_retire(it->rc, n, info_size(fi->nh_count, fi->res_buckets));
}

int
info_match(const struct fib_info *fi, const struct fib_route *r)
{
	if (r->priority && fi->priority != r->priority)
		return 0;
	if (r->protocol && fi->protocol != r->protocol)
		return 0;
	if (r->scope && r->scope != 255 && fi->scope != r->scope)
		return 0;
	if (r->nh_id && fi->nh_id != r->nh_id)
		return 0;
	if (r->nh_count && !r->nh_id) {
		if (fi->nh_count != r->nh_count)
			return 0;
		for (unsigned i = 0; i < r->nh_count; i++) {
			const struct fib_nh *a = &fi->nh[i], *b = &r->nh[i];
			size_t alen = a->gw_family == AF_INET6 ? 16 : a->gw_family == AF_INET ? 4 : 0;
			if (b->ifindex && a->ifindex != b->ifindex)
				return 0;
			if (b->gw_family && (a->gw_family != b->gw_family ||
					     memcmp(a->gw.b, b->gw.b, alen) != 0))
				return 0;
		}
	}
	return 1;
}

uint64_t
info_count(const struct info_table *it)
{
	return it->count;
}

uint64_t
info_bytes(const struct info_table *it)
{
	return it->bytes;
}
