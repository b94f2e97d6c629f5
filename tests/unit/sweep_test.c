/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the resync merge (daemon/ingest_sweep.c) against a naive model
 *
 * As BIRD's rt-fib_test checks random sets: a random old FIB, a random new
 * dump (a mutation of the old one, or unrelated), the merge's decisions
 * applied both to a model FIB (a flat array that replaces, appends and
 * deletes as fib_add and fib_del do) and to a real libfib, then both must
 * hold exactly the dump: the same routes per key, in dump order. The
 * model's delete is fib_del's, wildcards included (fib/info.c
 * info_match: weight, flags and prefsrc ignored, a gateway or a priority
 * left zero matching any), because a delete that takes another route of
 * the key than the one named is how a merge goes wrong; after each
 * decision the real FIB's routes of the touched key must equal the
 * model's. While the decisions apply, a key present in both the old FIB
 * and the dump must never be missing from either (readers never see a
 * prefix vanish that the kernel kept), and an unchanged set must cost no
 * decision at all.
 *
 * Keys and attributes come from small sets, so keys collide often and
 * several routes share one key (IPv4 appends, IPv6 routes per device).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/ingest_sweep.h"
#include "fib/fib.h"
#include "tests/unit/ck_run.h"

#define MAX_ROUTES 256
#define MAX_NH 3

/* A route with its own paths; r.nh points into nh once placed. */
struct mroute {
	struct fib_route r;
	struct fib_nh nh[MAX_NH];
};

struct mset {
	struct mroute m[MAX_ROUTES];
	size_t n;
};

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static unsigned
rndn(uint64_t *s, unsigned n)
{
	return (unsigned)(rnd(s) >> 33) % n;
}

static void
mset_fix(struct mset *s)
{
	for (size_t i = 0; i < s->n; i++)
		s->m[i].r.nh = s->m[i].r.nh_count ? s->m[i].nh : NULL;
}

/* A contiguous fib_route array (paths still in s) for the merge. */
static struct fib_route *
mset_routes(struct mset *s)
{
	struct fib_route *r = calloc(s->n ? s->n : 1, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	mset_fix(s);
	for (size_t i = 0; i < s->n; i++)
		r[i] = s->m[i].r;
	return r;
}

static void
random_key(uint64_t *s, struct fib_route *r)
{
	static const char *const p4[] = { "10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/24",
					  "0.0.0.0/0" };
	static const char *const p6[] = { "2001:db8::/32", "2001:db8:1::/48", "::/0",
					  "2001:db8::1/128" };
	const char *p = rndn(s, 2) ? p4[rndn(s, 4)] : p6[rndn(s, 4)];

	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(fib_prefix_parse(p, &r->dst, &r->plen, &r->family), 0);
	r->table = rndn(s, 3) ? 254 : 100;
	r->tos = r->family == AF_INET && !rndn(s, 4) ? 8 : 0;
	r->priority = rndn(s, 3) ? 0 : 1024;
}

static void
random_attrs(uint64_t *s, struct mroute *m)
{
	struct fib_route *r = &m->r;

	r->type = rndn(s, 5) ? FIB_UNICAST : FIB_BLACKHOLE;
	r->protocol = rndn(s, 2) ? 186 : 3;
	r->scope = 0;
	r->nh_count = r->type == FIB_UNICAST ? (uint8_t)(1 + rndn(s, MAX_NH)) : 0;
	r->prefsrc_set = !rndn(s, 6);
	memset(&r->prefsrc, 0, sizeof(r->prefsrc));
	if (r->prefsrc_set) {
		r->prefsrc.b[0] = r->family == AF_INET ? 192 : 0x20;
		r->prefsrc.b[3] = 1;
	}
	memset(m->nh, 0, sizeof(m->nh));
	for (unsigned i = 0; i < r->nh_count; i++) {
		struct fib_nh *nh = &m->nh[i];

		nh->gw_family = rndn(s, 4) ? r->family : 0;
		if (nh->gw_family == AF_INET) {
			nh->gw.b[0] = 192;
			nh->gw.b[3] = (uint8_t)(1 + rndn(s, 3));
		} else if (nh->gw_family == AF_INET6) {
			nh->gw.b[0] = 0xfe;
			nh->gw.b[1] = 0x80;
			nh->gw.b[15] = (uint8_t)(1 + rndn(s, 3));
		}
		nh->ifindex = 1 + rndn(s, 2);
		nh->weight = (uint16_t)(1 + rndn(s, 2));
	}
	r->nh = r->nh_count ? m->nh : NULL;
}

/* The kernel keeps no two identical routes under one key. */
static int
mset_has(struct mset *s, const struct fib_route *r)
{
	mset_fix(s);
	for (size_t i = 0; i < s->n; i++)
		if (!ingest_sweep_key_cmp(&s->m[i].r, r) && ingest_sweep_route_equal(&s->m[i].r, r))
			return 1;
	return 0;
}

static void
mset_push(struct mset *s, const struct mroute *m)
{
	ck_assert_uint_lt(s->n, MAX_ROUTES);
	s->m[s->n] = *m;
	s->m[s->n].r.nh = m->r.nh_count ? s->m[s->n].nh : NULL;
	s->n++;
}

static void
mset_add_random(uint64_t *s, struct mset *set, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct mroute m;

		random_key(s, &m.r);
		random_attrs(s, &m);
		if (!mset_has(set, &m.r))
			mset_push(set, &m);
	}
}

/* The model FIB, changed as fib_add and fib_del change routes of a key,
 * and the real FIB the same decisions go to. */
struct model {
	struct mset fib;
	struct fib *real;
	const struct mset *old, *dump;
	unsigned ops;
};

static int
model_key_present(const struct mset *s, const struct fib_route *k)
{
	for (size_t i = 0; i < s->n; i++)
		if (!ingest_sweep_key_cmp(&s->m[i].r, k))
			return 1;
	return 0;
}

static void
model_insert(struct mset *s, size_t at, const struct fib_route *r)
{
	ck_assert_uint_lt(s->n, MAX_ROUTES);
	memmove(&s->m[at + 1], &s->m[at], (s->n - at) * sizeof(s->m[0]));
	s->n++;
	s->m[at].r = *r;
	memset(s->m[at].nh, 0, sizeof(s->m[at].nh));
	if (r->nh_count)
		memcpy(s->m[at].nh, r->nh, r->nh_count * sizeof(*r->nh));
	mset_fix(s);
}

/* Does the FIB's route a answer fib_del(r)? As fib/info.c info_match. */
static int
model_del_match(const struct fib_route *a, const struct fib_route *r)
{
	if (a->family != r->family || a->plen != r->plen || a->table != r->table ||
	    a->tos != r->tos || memcmp(a->dst.b, r->dst.b, a->family == AF_INET ? 4 : 16))
		return 0;
	if ((r->type && a->type != r->type) || (r->priority && a->priority != r->priority) ||
	    (r->protocol && a->protocol != r->protocol) ||
	    (r->scope && r->scope != 255 && a->scope != r->scope) ||
	    (r->nh_id && a->nh_id != r->nh_id))
		return 0;
	if (!r->nh_count || r->nh_id)
		return 1;
	if (a->nh_count != r->nh_count)
		return 0;
	for (unsigned i = 0; i < r->nh_count; i++) {
		const struct fib_nh *x = &a->nh[i], *y = &r->nh[i];

		if (y->ifindex && x->ifindex != y->ifindex)
			return 0;
		if (y->gw_family && (x->gw_family != y->gw_family ||
				     memcmp(x->gw.b, y->gw.b, x->gw_family == AF_INET ? 4 : 16)))
			return 0;
	}
	return 1;
}

/* The route fib_del(r) removes: the first match in a leaf's order, where
 * lower priorities come first and routes of one key keep theirs. */
static size_t
model_del_find(const struct mset *s, const struct fib_route *r)
{
	size_t i, at = s->n;

	for (i = 0; i < s->n; i++)
		if (model_del_match(&s->m[i].r, r) &&
		    (at == s->n || s->m[i].r.priority < s->m[at].r.priority))
			at = i;
	return at;
}

static void
route_of_match(const struct fib_match *fm, struct mroute *m)
{
	memset(m, 0, sizeof(*m));
	m->r.family = fm->family;
	m->r.plen = fm->plen;
	m->r.type = fm->type;
	m->r.tos = fm->tos;
	m->r.table = fm->table;
	m->r.dst = fm->prefix;
	m->r.priority = fm->info->priority;
	m->r.protocol = fm->info->protocol;
	m->r.scope = fm->info->scope;
	m->r.prefsrc_set = fm->info->prefsrc_set;
	m->r.prefsrc = fm->info->prefsrc;
	m->r.nh_count = fm->info->nh_count;
	m->r.encap_type = fm->info->encap_type;
	m->r.nh_id = fm->info->nh_id;
	ck_assert_uint_le(m->r.nh_count, MAX_NH);
	memcpy(m->nh, fm->info->nh, m->r.nh_count * sizeof(m->nh[0]));
	m->r.nh = m->r.nh_count ? m->nh : NULL;
}

/* The real FIB's routes of k's key, in order, are the model's. */
static void
real_check_key(const struct model *md, const struct fib_route *k)
{
	const struct mset *s = &md->fib;
	struct fib_match fm;
	struct mroute m;
	unsigned nth = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (ingest_sweep_key_cmp(&s->m[i].r, k))
			continue;
		if (fib_find_rcu(md->real, k, nth, &fm))
			ck_abort_msg("real FIB: route %u of a key missing", nth);
		route_of_match(&fm, &m);
		if (!ingest_sweep_route_equal(&s->m[i].r, &m.r))
			ck_abort_msg("real FIB: route %u of a key differs from the model", nth);
		nth++;
	}
	if (fib_find_rcu(md->real, k, nth, &fm) != -ENOENT)
		ck_abort_msg("real FIB: more routes of a key than the model");
}

static void
model_cb(void *arg, enum ingest_sweep_op op, const struct fib_route *r)
{
	struct model *md = arg;
	struct mset *s = &md->fib;
	struct fib_route touched = *r;
	size_t i, last = s->n;
	struct fib_match fm;
	int err;

	md->ops++;
	mset_fix(s);
	if (op == INGEST_SWEEP_DEL)
		err = fib_del(md->real, r);
	else
		err = fib_add(md->real, r,
			      op == INGEST_SWEEP_REPLACE ? FIB_ADD_REPLACE : FIB_ADD_APPEND);
	ck_assert_msg(!err, "real FIB: decision %d failed: %d", (int)op, err);
	switch (op) {
	case INGEST_SWEEP_REPLACE:
		for (i = 0; i < s->n && ingest_sweep_key_cmp(&s->m[i].r, r); i++)
			;
		ck_assert_msg(i < s->n, "replace of a key the FIB does not hold");
		memmove(&s->m[i], &s->m[i + 1], (s->n - i - 1) * sizeof(s->m[0]));
		s->n--;
		model_insert(s, i, r);
		break;
	case INGEST_SWEEP_APPEND:
		for (i = 0; i < s->n; i++)
			if (!ingest_sweep_key_cmp(&s->m[i].r, r))
				last = i + 1;
		ck_assert_msg(!mset_has(s, r), "append of a route the FIB holds (EEXIST)");
		model_insert(s, last, r);
		break;
	case INGEST_SWEEP_DEL:
		i = model_del_find(s, r);
		ck_assert_msg(i < s->n, "delete of a route the FIB does not hold");
		touched = s->m[i].r; /* a wildcard may take another key's route */
		memmove(&s->m[i], &s->m[i + 1], (s->n - i - 1) * sizeof(s->m[0]));
		s->n--;
		mset_fix(s);
		break;
	}
	real_check_key(md, &touched);
	/* no key the kernel kept goes missing, even for a moment (ck_abort
	 * only on failure: each passing ck_assert is a write to check) */
	for (i = 0; i < md->dump->n; i++) {
		if (!model_key_present(md->old, &md->dump->m[i].r))
			continue;
		if (!model_key_present(s, &md->dump->m[i].r))
			ck_abort_msg("a kept key went missing during the merge");
		if (fib_find_rcu(md->real, &md->dump->m[i].r, 0, &fm))
			ck_abort_msg("a kept key went missing from the real FIB");
	}
}

/* Same routes per key, in the same order: what a lookup can tell apart. */
static void
check_same(const struct mset *a, const struct mset *b)
{
	ck_assert_uint_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		size_t j, ka = 0, kb = 0;

		for (j = 0; j < i; j++)
			ka += !ingest_sweep_key_cmp(&a->m[j].r, &a->m[i].r);
		/* the ka-th route of this key in b */
		for (j = 0; j < b->n; j++)
			if (!ingest_sweep_key_cmp(&b->m[j].r, &a->m[i].r) && kb++ == ka)
				break;
		ck_assert_msg(j < b->n, "route %zu: missing from the FIB", i);
		ck_assert_msg(ingest_sweep_route_equal(&a->m[i].r, &b->m[j].r),
			      "route %zu: differs at position %zu of its key", i, ka);
	}
}

/*
 * One real FIB per test (a fixture), emptied after each merge. Without
 * the compiled lookup table: what deletes match is the trie's, and
 * rebuilding the table's blocks under 0.0.0.0/0 and 10.0.0.0/8 at every
 * decision would cost ten times the merges (fib_test covers the table).
 */
static struct fib *real_fib;

static void
real_setup(void)
{
	struct fib_params p;

	fib_params_default(&p);
	p.accel_table = 0;
	p.accel_table6 = 0;
	real_fib = fib_new(&p);
	ck_assert_ptr_nonnull(real_fib);
}

static void
real_teardown(void)
{
	fib_free(real_fib);
	real_fib = NULL;
}

static int
real_walk_cb(const struct fib_match *fm, void *arg)
{
	struct mroute m;

	route_of_match(fm, &m);
	mset_push(arg, &m);
	return 0;
}

/* Merge old with dump through the model and a real FIB; returns the
 * decisions made. */
static unsigned
run_merge(struct mset *old, struct mset *dump)
{
	static struct model md;
	static struct mset walked;
	struct ingest_sweep sw;
	struct fib_route *ro, *rd;
	unsigned steps = 0;

	memset(&md, 0, sizeof(md));
	mset_fix(old);
	mset_fix(dump);
	md.fib = *old;
	mset_fix(&md.fib);
	md.old = old;
	md.dump = dump;
	md.real = real_fib;
	ck_assert_uint_eq(fib_count(md.real, AF_INET) + fib_count(md.real, AF_INET6), 0);
	for (size_t i = 0; i < old->n; i++)
		ck_assert_int_eq(fib_add(md.real, &old->m[i].r, FIB_ADD_APPEND), 0);
	ro = mset_routes(old);
	rd = mset_routes(dump);
	ck_assert_int_eq(ingest_sweep_init(&sw, rd, dump->n, ro, old->n, model_cb, &md), 0);
	while (!ingest_sweep_done(&sw)) {
		ingest_sweep_step(&sw);
		ck_assert_uint_le(++steps, old->n + dump->n); /* one key a step */
	}
	ingest_sweep_step(&sw); /* a step past the end does nothing */
	ingest_sweep_fini(&sw);
	check_same(dump, &md.fib);
	check_same(&md.fib, dump);
	memset(&walked, 0, sizeof(walked));
	ck_assert_int_eq(fib_walk(md.real, AF_INET, real_walk_cb, &walked), 0);
	ck_assert_int_eq(fib_walk(md.real, AF_INET6, real_walk_cb, &walked), 0);
	mset_fix(&walked);
	check_same(dump, &walked);
	check_same(&walked, dump);
	/* empty it for the next round: each delete takes a route of its key
	 * at or before the one named, so dump order removes them all */
	for (size_t i = 0; i < dump->n; i++)
		ck_assert_int_eq(fib_del(md.real, &dump->m[i].r), 0);
	ck_assert_uint_eq(fib_count(md.real, AF_INET) + fib_count(md.real, AF_INET6), 0);
	free(ro);
	free(rd);
	return md.ops;
}

START_TEST(test_random)
{
	static struct mset old, dump;
	uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(_i + 1);

	for (unsigned round = 0; round < 200; round++) {
		memset(&old, 0, sizeof(old));
		memset(&dump, 0, sizeof(dump));
		mset_add_random(&s, &old, rndn(&s, 60));
		if (rndn(&s, 4)) {
			/* a mutation: keep, drop or change each route, add some */
			for (size_t i = 0; i < old.n; i++) {
				struct mroute m = old.m[i];
				unsigned c = rndn(&s, 10);

				if (c < 2)
					continue;
				if (c < 4)
					random_attrs(&s, &m);
				m.r.nh = m.r.nh_count ? m.nh : NULL;
				if (!mset_has(&dump, &m.r))
					mset_push(&dump, &m);
			}
			mset_add_random(&s, &dump, rndn(&s, 10));
			/* sometimes the dump lists routes of a key in another order */
			if (dump.n > 1 && !rndn(&s, 4)) {
				size_t a = rndn(&s, (unsigned)dump.n);
				size_t b = rndn(&s, (unsigned)dump.n);
				struct mroute t = dump.m[a];

				dump.m[a] = dump.m[b];
				dump.m[b] = t;
			}
		} else {
			mset_add_random(&s, &dump, rndn(&s, 60));
		}
		run_merge(&old, &dump);
	}
}
END_TEST

/* The same set, in any order of keys, costs nothing. */
START_TEST(test_unchanged)
{
	static struct mset old, dump;
	uint64_t s = 12345 + (uint64_t)_i;

	for (unsigned round = 0; round < 100; round++) {
		memset(&old, 0, sizeof(old));
		mset_add_random(&s, &old, rndn(&s, 80));
		/* reversed: keys in another order, but routes of one key in
		 * the same relative order (stable per key) */
		memset(&dump, 0, sizeof(dump));
		for (size_t i = old.n; i-- > 0;) {
			size_t k, first = i;

			for (k = 0; k < old.n; k++)
				if (!ingest_sweep_key_cmp(&old.m[k].r, &old.m[i].r)) {
					first = k;
					break;
				}
			if (first != i)
				continue; /* pushed with the first route of its key */
			for (k = i; k < old.n; k++)
				if (!ingest_sweep_key_cmp(&old.m[k].r, &old.m[i].r))
					mset_push(&dump, &old.m[k]);
		}
		ck_assert_uint_eq(run_merge(&old, &dump), 0);
	}
}
END_TEST

/* One changed route, one new key, one gone key: one decision each. */
START_TEST(test_minimal)
{
	static struct mset old, dump;
	uint64_t s = 777;
	struct mroute m;

	memset(&old, 0, sizeof(old));
	memset(&dump, 0, sizeof(dump));
	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(fib_prefix_parse("10.0.0.0/8", &m.r.dst, &m.r.plen, &m.r.family), 0);
	m.r.table = 254;
	random_attrs(&s, &m);
	m.r.protocol = 3;
	mset_push(&old, &m);
	m.r.protocol = 186; /* changed attributes: one replace */
	mset_push(&dump, &m);
	m.r.table = 100; /* gone: one delete */
	mset_push(&old, &m);
	m.r.table = 101; /* new: one append */
	mset_push(&dump, &m);
	ck_assert_uint_eq(run_merge(&old, &dump), 3);
	/* two routes of one key swapped: the order is what lookups see */
	memset(&old, 0, sizeof(old));
	memset(&dump, 0, sizeof(dump));
	m.r.table = 254;
	m.r.protocol = 3;
	mset_push(&old, &m);
	m.r.protocol = 186;
	mset_push(&old, &m);
	mset_push(&dump, &old.m[1]);
	mset_push(&dump, &old.m[0]);
	ck_assert_uint_eq(run_merge(&old, &dump), 3); /* replace, del, append */
	/* both empty */
	memset(&old, 0, sizeof(old));
	memset(&dump, 0, sizeof(dump));
	ck_assert_uint_eq(run_merge(&old, &dump), 0);
}
END_TEST

/* One route of 10.0.0.0/8 in table 254: a blackhole, or unicast
 * over dev 1, via 192.0.0.<gw_last> if gw_last is not 0. */
static void
example_route(struct mroute *m, int blackhole, uint8_t gw_last, uint16_t weight, int prefsrc)
{
	memset(m, 0, sizeof(*m));
	ck_assert_int_eq(fib_prefix_parse("10.0.0.0/8", &m->r.dst, &m->r.plen, &m->r.family), 0);
	m->r.table = 254;
	m->r.protocol = 186;
	m->r.type = blackhole ? FIB_BLACKHOLE : FIB_UNICAST;
	if (prefsrc) {
		m->r.prefsrc_set = 1;
		m->r.prefsrc.b[0] = 192;
		m->r.prefsrc.b[3] = 1;
	}
	if (!blackhole) {
		m->r.nh_count = 1;
		m->nh[0].ifindex = 1;
		m->nh[0].weight = weight;
		if (gw_last) {
			m->nh[0].gw_family = AF_INET;
			m->nh[0].gw.b[0] = 192;
			m->nh[0].gw.b[3] = gw_last;
		}
	}
	m->r.nh = m->r.nh_count ? m->nh : NULL;
}

/*
 * fib_del ignores weight, flags and prefsrc, and the gateway of a delete
 * that names none: deleting the FIB's second route of a key must not take
 * the dump's route that just replaced the first. FIB [A blackhole, B via
 * G dev 1 weight 1], dump [C via G dev 1 weight 2]: replace A with C,
 * then delete B, removes C and leaves B. Two decisions (a delete and a
 * replace) whatever the order.
 */
START_TEST(test_wildcard_delete)
{
	static struct mset old, dump;
	static const struct {
		uint8_t b_gw, c_gw;
		uint16_t b_weight, c_weight;
		int b_prefsrc, c_prefsrc;
	} cases[] = {
	    {1, 1, 1, 2, 0, 0}, /* weight only */
	    {0, 1, 1, 1, 0, 0}, /* B without a gateway matches C's */
	    {1, 1, 1, 1, 0, 1}, /* prefsrc only */
	};
	struct mroute m;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&old, 0, sizeof(old));
		memset(&dump, 0, sizeof(dump));
		example_route(&m, 1, 0, 0, 0); /* A */
		mset_push(&old, &m);
		example_route(&m, 0, cases[i].b_gw, cases[i].b_weight, cases[i].b_prefsrc);
		mset_push(&old, &m); /* B */
		example_route(&m, 0, cases[i].c_gw, cases[i].c_weight, cases[i].c_prefsrc);
		mset_push(&dump, &m); /* C */
		ck_assert_uint_eq(run_merge(&old, &dump), 2);
	}
}
END_TEST

static Suite *
sweep_suite(void)
{
	Suite *s = suite_create("ingest_sweep");
	TCase *tc = tcase_create("merge");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, real_setup, real_teardown);
	tcase_add_loop_test(tc, test_random, 0, 8);
	tcase_add_loop_test(tc, test_unchanged, 0, 2);
	tcase_add_test(tc, test_minimal);
	tcase_add_test(tc, test_wildcard_delete);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(sweep_suite(), CK_FORK_GETENV);
}
