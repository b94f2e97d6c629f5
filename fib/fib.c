/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: struct fib, the public face of libfib
 *
 * Validates what callers hand in (family, prefix length, host bits, type,
 * next hops), dispatches to the IPv4 or IPv6 trie, bumps the generation
 * on every change, and gathers stats. No I/O, no globals, no logging.
 *
 *   struct fib
 *     ctx: pool (nodes, leaves, attribute sets), reclaim queue, info table,
 *          params
 *     trie4, trie6
 *     generation (read by flow caches on any thread)
 *     policy: rules, links, addresses, hash settings (fib/policy.c), the
 *             local-table filter of the resolution's fast path
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fib/fib.h"
#include "fib/fib_priv.h"
#include "fib/info.h"
#include "fib/policy_priv.h"
#include "fib/pool.h"
#include "fib/rcu.h"
#include "fib/reclaim.h"
#include "fib/trie.h"

void
fib_params_default(struct fib_params *p)
{
	p->inflate_threshold = 50;
	p->halve_threshold = 25;
	p->inflate_threshold_root = 30;
	p->halve_threshold_root = 15;
	p->sync_pages = 128;
	p->reclaim_mode = FIB_RECLAIM_CALL_RCU;
	p->accel_table = 254; /* RT_TABLE_MAIN */
	p->accel_table6 = 254;
	p->accel_min_routes = 100000;
	p->accel_defer = 0;
}

static int
fib_params_valid(const struct fib_params *p)
{
	if (p->inflate_threshold < 1 || p->inflate_threshold > 100 ||
	    p->inflate_threshold_root < 1 || p->inflate_threshold_root > 100)
		return 0;
	if (p->halve_threshold < 1 || p->halve_threshold >= p->inflate_threshold)
		return 0;
	if (p->halve_threshold_root < 1 || p->halve_threshold_root >= p->inflate_threshold_root)
		return 0;
	if (p->sync_pages < 1 || p->sync_pages > (1u << 20))
		return 0;
	return p->reclaim_mode == FIB_RECLAIM_CALL_RCU || p->reclaim_mode == FIB_RECLAIM_SYNC;
}

struct fib *
fib_new(const struct fib_params *p)
{
	struct fib *fib = calloc(1, sizeof(*fib));

	if (!fib)
		return NULL;
	if (p) {
		if (!fib_params_valid(p)) {
			free(fib);
			errno = EINVAL;
			return NULL;
		}
		fib->ctx.params = *p;
	} else {
		fib_params_default(&fib->ctx.params);
	}
	fib->ctx.pool = pool_new();
	if (fib->ctx.pool)
		fib->ctx.ht = pool_handle_table(fib->ctx.pool);
	if (fib->ctx.pool)
		fib->ctx.rc = reclaim_new(fib->ctx.pool, fib->ctx.params.sync_pages,
					  fib->ctx.params.reclaim_mode);
	if (fib->ctx.rc)
		fib->ctx.it = info_table_new(fib->ctx.pool, fib->ctx.rc);
	if (fib->ctx.it) {
		fib->t4 = trie4_new(&fib->ctx);
		fib->t6 = trie6_new(&fib->ctx);
	}
	if (!fib->t4 || !fib->t6 || policy_init(fib)) {
		fib_free(fib);
		errno = ENOMEM;
		return NULL;
	}
	trie4_accel_retune(fib->t4, true, false);
	trie6_accel_retune(fib->t6, true, false);
	return fib;
}

void
fib_free(struct fib *fib)
{
	if (!fib)
		return;
	if (fib->ctx.pool)
		policy_fini(fib);
	trie4_free(fib->t4);
	trie6_free(fib->t6);
	info_table_free(fib->ctx.it);
	/* The pool goes whole (superblocks, not nodes), once the batches
	 * still in call_rcu's hands have freed into it: no waiting here. */
	if (fib->ctx.rc)
		reclaim_free(fib->ctx.rc);
	else
		pool_free_all(fib->ctx.pool);
	free(fib);
}

static void fib_begin(struct fib *fib);
static void fib_end(struct fib *fib);

int
fib_set_params(struct fib *fib, const struct fib_params *p)
{
	if (!fib_params_valid(p))
		return -EINVAL;
	uint32_t accel = fib->ctx.params.accel_table, accel6 = fib->ctx.params.accel_table6;
	bool min = p->accel_min_routes != fib->ctx.params.accel_min_routes;
	bool four = p->accel_table != accel || min, six = p->accel_table6 != accel6 || min;

	fib->ctx.params = *p;
	reclaim_set(fib->ctx.rc, p->sync_pages, p->reclaim_mode);
	if (four || six) {
		/* what stays is kept; new builds wait for fib_accel_sync
		 * with accel_defer (an error here is that table left to the
		 * trie, as documented: the parameters apply) */
		fib_begin(fib);
		if (four)
			(void)trie4_accel_retune(fib->t4, true, p->accel_defer);
		if (six)
			(void)trie6_accel_retune(fib->t6, true, p->accel_defer);
		fib_end(fib);
	}
	if (!p->accel_defer && fib_accel_pending(fib))
		(void)fib_accel_sync(fib);
	return 0;
}

bool
fib_accel_pending(const struct fib *fib)
{
	return trie4_accel_pending(fib->t4) || trie6_accel_pending(fib->t6);
}

int
fib_accel_sync(struct fib *fib)
{
	int err = 0, e;

	if (!fib_accel_pending(fib))
		return 0;
	fib_begin(fib);
	if (trie4_accel_pending(fib->t4) && (e = trie4_accel_retune(fib->t4, false, false)))
		err = e;
	if (trie6_accel_pending(fib->t6) && (e = trie6_accel_retune(fib->t6, false, false)))
		err = e;
	fib_end(fib);
	return err;
}

void
fib_get_params(const struct fib *fib, struct fib_params *p)
{
	*p = fib->ctx.params;
}

static int
fib_route_valid(const struct fib_route *r)
{
	unsigned maxlen, abytes;

	if (r->family == AF_INET) {
		maxlen = 32;
		abytes = 4;
	} else if (r->family == AF_INET6) {
		maxlen = 128;
		abytes = 16;
	} else {
		return 0;
	}
	if (r->plen > maxlen)
		return 0;
	/* canonical prefix: no host bits, nothing past the address */
	{
		uint64_t w[2];
		memcpy(w, r->dst.b, 16);
		w[0] = be64toh(w[0]);
		w[1] = be64toh(w[1]);
		if (abytes == 4) {
			if (w[1] || (w[0] & 0xffffffffu))
				return 0;
			w[0] >>= 32;
			if (r->plen < 32 && (w[0] & (0xffffffffu >> r->plen)))
				return 0;
		} else if (r->plen <= 64) {
			if (w[1] || (r->plen < 64 && (w[0] & (~0ull >> r->plen))))
				return 0;
		} else if (r->plen < 128 && (w[1] & (~0ull >> (r->plen - 64)))) {
			return 0;
		}
	}
	switch (r->type) {
	case FIB_UNICAST:
	case FIB_LOCAL:
	case FIB_BROADCAST:
	case FIB_BLACKHOLE:
	case FIB_UNREACHABLE:
	case FIB_PROHIBIT:
	case FIB_THROW:
		break;
	default:
		return 0;
	}
	if (r->nh_count && !r->nh)
		return 0;
	for (unsigned i = 0; i < r->nh_count; i++) {
		const struct fib_nh *nh = &r->nh[i];
		if (nh->gw_family && nh->gw_family != AF_INET && nh->gw_family != AF_INET6)
			return 0;
		if (nh->weight > 256)
			return 0;
	}
	if (r->res_buckets) { /* a bucket map needs its paths, each bucket one of them */
		if (!r->res_map || r->nh_count < 1)
			return 0;
		for (unsigned i = 0; i < r->res_buckets; i++)
			if (r->res_map[i] >= r->nh_count)
				return 0;
	}
	return 1;
}

/*
 * Flow caches hold results (leaf and alias pointers) tagged with the
 * generation they were looked up in, and trust them while it is current.
 * So the generation moves BEFORE a change can retire anything (a reader
 * that still sees the old one is inside a read section the grace period
 * waits for) and again after it (results cached during the change are
 * dropped too).
 */
static void
fib_begin(struct fib *fib)
{
	uatomic_inc(&fib->generation);
	reclaim_hold(fib->ctx.rc);
}

/* Only after the second move may this change's retired memory start its
 * grace period: a reader that cached a result under the odd generation
 * would trust it until then. */
static void
fib_end(struct fib *fib)
{
	uatomic_inc(&fib->generation);
	reclaim_release(fib->ctx.rc);
}

int
fib_add(struct fib *fib, const struct fib_route *r, unsigned flags)
{
	int err, replaced = 0;

	if (!fib_route_valid(r) || (flags & ~(FIB_ADD_REPLACE | FIB_ADD_APPEND | FIB_ADD_EXCL)))
		return -EINVAL;
	/* The local-table filter learns the route before readers can find
	 * it; a replace leaves the count as it was, a failure undoes. */
	if (r->table == POLICY_TABLE_LOCAL || r->table == POLICY_TABLE_DEFAULT) {
		struct fib_match m;

		localf_note_add(fib, r);
		if ((flags & FIB_ADD_REPLACE) && fib_find_rcu(fib, r, 0, &m) == 0)
			replaced = 1;
	}
	fib_begin(fib);
	err = r->family == AF_INET ? trie4_add(fib->t4, r, flags) : trie6_add(fib->t6, r, flags);
	regions_bump(&fib->ctx.regions, r->family, &r->dst, r->plen);
	fib_end(fib);
	if ((r->table == POLICY_TABLE_LOCAL || r->table == POLICY_TABLE_DEFAULT) &&
	    (err || replaced))
		localf_note_del(fib, r);
	return err;
}

int
fib_del(struct fib *fib, const struct fib_route *r)
{
	int err;

	if (r->family != AF_INET && r->family != AF_INET6)
		return -EINVAL;
	if (r->plen > (r->family == AF_INET ? 32 : 128))
		return -EINVAL;
	fib_begin(fib);
	err = r->family == AF_INET ? trie4_del(fib->t4, r) : trie6_del(fib->t6, r);
	regions_bump(&fib->ctx.regions, r->family, &r->dst, r->plen);
	fib_end(fib);
	if (!err)
		localf_note_del(fib, r);
	return err;
}

void
fib_trim(struct fib *fib)
{
	pool_trim(fib->ctx.pool);
}

int
fib_compact(struct fib *fib, int family)
{
	size_t routes4 = 0, routes6 = 0;
	void *tree4 = NULL, *tree6 = NULL;
	int err = 0;

	if (family != AF_UNSPEC && family != AF_INET && family != AF_INET6)
		return -EINVAL;
	if (family != AF_INET6)
		err = trie4_load_prepare(fib->t4, NULL, 0, &tree4, &routes4);
	if (!err && family != AF_INET)
		err = trie6_load_prepare(fib->t6, NULL, 0, &tree6, &routes6);
	if (err) {
		if (tree4)
			trie4_load_discard(fib->t4, tree4);
		return err;
	}
	fib_begin(fib);
	if (tree4)
		trie4_load_publish(fib->t4, tree4, routes4);
	if (tree6)
		trie6_load_publish(fib->t6, tree6, routes6);
	regions_bump_all(&fib->ctx.regions, family);
	fib_end(fib);
	return 0;
}

int
fib_load(struct fib *fib, const struct fib_route *r, size_t n)
{
	size_t n4 = 0, n6 = 0, routes4 = 0, routes6 = 0;
	struct fib_route *v4 = NULL, *v6 = NULL;
	const struct fib_route *r4 = r, *r6 = r;
	void *tree4 = NULL, *tree6 = NULL;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		if (!fib_route_valid(&r[i]))
			return -EINVAL;
		if (r[i].family == AF_INET)
			n4++;
		else
			n6++;
	}
	if (n4 && n6) {
		v4 = malloc(n4 * sizeof(*v4));
		v6 = malloc(n6 * sizeof(*v6));
		if (!v4 || !v6) {
			free(v4);
			free(v6);
			return -ENOMEM;
		}
		n4 = n6 = 0;
		for (size_t i = 0; i < n; i++) {
			if (r[i].family == AF_INET)
				v4[n4++] = r[i];
			else
				v6[n6++] = r[i];
		}
		r4 = v4;
		r6 = v6;
	}
	/* Both families are built before either is published: all or
	 * nothing. The local-table filter learns the routes first. */
	for (size_t i = 0; i < n; i++)
		localf_note_add(fib, &r[i]);
	if (n4)
		err = trie4_load_prepare(fib->t4, r4, n4, &tree4, &routes4);
	if (!err && n6)
		err = trie6_load_prepare(fib->t6, r6, n6, &tree6, &routes6);
	if (err) {
		if (tree4)
			trie4_load_discard(fib->t4, tree4);
		for (size_t i = 0; i < n; i++)
			localf_note_del(fib, &r[i]);
	} else {
		fib_begin(fib);
		if (n4)
			trie4_load_publish(fib->t4, tree4, routes4);
		if (n6)
			trie6_load_publish(fib->t6, tree6, routes6);
		regions_bump_all(&fib->ctx.regions, n4 && n6 ? AF_UNSPEC : n4 ? AF_INET : AF_INET6);
		fib_end(fib);
	}
	free(v4);
	free(v6);
	return err;
}

void
fib_flush(struct fib *fib, int family)
{
	fib_begin(fib);
	if (family == AF_INET || family == AF_UNSPEC)
		trie4_flush(fib->t4);
	if (family == AF_INET6 || family == AF_UNSPEC)
		trie6_flush(fib->t6);
	regions_bump_all(&fib->ctx.regions, family);
	fib_end(fib);
	localf_reset(fib, family);
}

size_t
fib_count(const struct fib *fib, int family)
{
	size_t n = 0;

	if (family == AF_INET || family == AF_UNSPEC)
		n += trie4_count(fib->t4);
	if (family == AF_INET6 || family == AF_UNSPEC)
		n += trie6_count(fib->t6);
	return n;
}

uint64_t
fib_generation(const struct fib *fib)
{
	return uatomic_read(&fib->generation);
}

void
fib_thread_online(void)
{
	urcu_memb_register_thread();
}

void
fib_thread_offline(void)
{
	urcu_memb_unregister_thread();
}

void
fib_read_lock(void)
{
	urcu_memb_read_lock();
}

void
fib_read_unlock(void)
{
	FIB_TSAN_READ_END();
	urcu_memb_read_unlock();
}

struct fib_result
fib_lookup_rcu(const struct fib *fib, int family, const void *addr, uint32_t table, uint8_t tos)
{
	struct fib_result none = { NULL, NULL };

	if (family == AF_INET) {
		uint32_t a;
		memcpy(&a, addr, 4);
		return trie4_lookup(fib->t4, ntohl(a), table, tos);
	}
	if (family == AF_INET6)
		return trie6_lookup(fib->t6, trie6_key_from(addr), table, tos);
	return none;
}

/* fib_lookup4_rcu: in trie4.c, with the lookup inlined. */

void
fib_lookup4_batch_rcu(const struct fib *fib, uint32_t table, const uint32_t *addr,
		      struct fib_result *res, size_t n)
{
	trie4_lookup_batch(fib->t4, addr, table, res, n);
}

void
fib_lookup6_batch_rcu(const struct fib *fib, uint32_t table, const uint8_t (*addr)[16],
		      struct fib_result *res, size_t n)
{
	enum { CHUNK = 64 };
	trie6_key keys[CHUNK];

	for (size_t base = 0; base < n; base += CHUNK) {
		size_t k = n - base < CHUNK ? n - base : CHUNK;
		for (size_t i = 0; i < k; i++)
			keys[i] = trie6_key_from(addr[base + i]);
		trie6_lookup_batch(fib->t6, keys, table, res + base, k);
	}
}

void
fib_lookup4_ref_batch_rcu(const struct fib *fib, uint32_t table, const uint32_t *addr,
			  uint32_t *ref, size_t n)
{
	trie4_lookup_ref_batch(fib->t4, addr, table, ref, n);
}

void
fib_lookup6_ref_batch_rcu(const struct fib *fib, uint32_t table, const uint8_t (*addr)[16],
			  uint32_t *ref, size_t n)
{
	enum { CHUNK = 64 };
	trie6_key keys[CHUNK];

	for (size_t base = 0; base < n; base += CHUNK) {
		size_t k = n - base < CHUNK ? n - base : CHUNK;
		for (size_t i = 0; i < k; i++)
			keys[i] = trie6_key_from(addr[base + i]);
		trie6_lookup_ref_batch(fib->t6, keys, table, ref + base, k);
	}
}

int
fib_ref_get_rcu(const struct fib *fib, int family, uint32_t ref, struct fib_result *res)
{
	if (family == AF_INET)
		return trie4_ref_get(fib->t4, ref, res);
	if (family == AF_INET6)
		return trie6_ref_get(fib->t6, ref, res);
	res->leaf = NULL;
	res->alias = NULL;
	return -EINVAL;
}

int
fib_result_get(const struct fib_result *res, struct fib_match *m)
{
	const struct fib_alias *fa = res->alias;

	if (!fa)
		return -ENOENT;
	m->family = fa->family;
	m->plen = (uint8_t)((fa->family == AF_INET ? 32 : 128) - fa->slen);
	m->type = fa->type;
	m->tos = fa->tos;
	m->table = fa->table;
	/* no FIB here: the leaf's superblock names the handle table */
	m->info = fa_info(pool_table_of(fa), fa);
	if (fa->family == AF_INET)
		trie4_leaf_key(res->leaf, &m->prefix);
	else
		trie6_leaf_key(res->leaf, &m->prefix);
	return 0;
}

int
fib_find_rcu(const struct fib *fib, const struct fib_route *key, unsigned nth,
	     struct fib_match *m)
{
	struct fib_result res;

	if (key->family == AF_INET && key->plen <= 32)
		res = trie4_find(fib->t4, ntohl(key->dst.v4.s_addr), 32u - key->plen, key->table,
				 key->tos, key->priority, nth);
	else if (key->family == AF_INET6 && key->plen <= 128)
		res = trie6_find(fib->t6, trie6_key_from(key->dst.b), 128u - key->plen, key->table,
				 key->tos, key->priority, nth);
	else
		return -EINVAL;
	return fib_result_get(&res, m);
}

int
fib_walk(const struct fib *fib, int family, fib_walk_cb cb, void *arg)
{
	int ret = 0;

	if (family == AF_INET || family == AF_UNSPEC)
		ret = trie4_walk(fib->t4, cb, arg);
	if (!ret && (family == AF_INET6 || family == AF_UNSPEC))
		ret = trie6_walk(fib->t6, cb, arg);
	return ret;
}

int
fib_walk_from(const struct fib *fib, int family, struct fib_walk_pos *pos, fib_walk_cb cb,
	      void *arg)
{
	unsigned skip = pos->skip;
	int ret;

	if (family == AF_INET) {
		uint32_t k = ntohl(pos->key.v4.s_addr);

		ret = trie4_walk_from(fib->t4, &k, &skip, cb, arg);
		if (ret)
			pos->key.v4.s_addr = htonl(k);
	} else if (family == AF_INET6) {
		trie6_key k = trie6_key_from(pos->key.b);

		ret = trie6_walk_from(fib->t6, &k, &skip, cb, arg);
		for (int i = 15; ret && i >= 0; i--) {
			pos->key.b[i] = (uint8_t)k;
			k >>= 8;
		}
	} else {
		return -EINVAL;
	}
	pos->skip = skip;
	pos->done = !ret;
	return ret;
}

void
fib_stats(const struct fib *fib, struct fib_stats *st)
{
	memset(st, 0, sizeof(*st));
	trie4_stats(fib->t4, &st->v4);
	trie6_stats(fib->t6, &st->v6);
	reclaim_stats(fib->ctx.rc, &st->reclaim);
	st->infos = info_count(fib->ctx.it);
	st->info_bytes = info_bytes(fib->ctx.it);
	/* Everything held: pool chunks (nodes, leaves, sets, free slots) and
	 * the fixed structures. */
	st->bytes = pool_reserved(fib->ctx.pool) + sizeof(*fib);
	st->generation = fib_generation(fib);
}

uint64_t
fib_bytes(const struct fib *fib)
{
	return pool_reserved(fib->ctx.pool) + sizeof(*fib);
}

void
fib_reclaim_flush(struct fib *fib)
{
	reclaim_flush(fib->ctx.rc);
}

void
fib_reclaim_barrier(struct fib *fib)
{
	reclaim_barrier(fib->ctx.rc);
}

int
fib_check(const struct fib *fib, char *buf, size_t len)
{
	int err = trie4_check(fib->t4, buf, len);

	if (!err)
		err = trie6_check(fib->t6, buf, len);
	return err;
}

#ifdef FIB_FAULT_INJECTION
void
fib_fail_after(struct fib *fib, long n)
{
	pool_fail_after(fib->ctx.pool, n);
}
#endif

int
fib_prefix_parse(const char *s, union fib_addr *a, uint8_t *plen, uint8_t *family)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long len;
	char *end;
	int fam;

	if (alen == 0 || alen >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, alen);
	buf[alen] = 0;
	memset(a, 0, sizeof(*a));
	fam = strchr(buf, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(fam, buf, a->b) != 1)
		return -EINVAL;
	if (slash) {
		if (!slash[1])
			return -EINVAL;
		len = strtoul(slash + 1, &end, 10);
		if (*end || len > (fam == AF_INET ? 32u : 128u))
			return -EINVAL;
	} else {
		len = fam == AF_INET ? 32 : 128;
	}
	*plen = (uint8_t)len;
	*family = (uint8_t)fam;
	return 0;
}

const char *
fib_type_name(unsigned type)
{
	switch (type) {
	case FIB_UNICAST:
		return "unicast";
	case FIB_LOCAL:
		return "local";
	case FIB_BROADCAST:
		return "broadcast";
	case FIB_BLACKHOLE:
		return "blackhole";
	case FIB_UNREACHABLE:
		return "unreachable";
	case FIB_PROHIBIT:
		return "prohibit";
	case FIB_THROW:
		return "throw";
	default:
		return "unknown";
	}
}
