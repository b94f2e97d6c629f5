/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: libfib against a naive longest-prefix match
 *
 * Random inserts, replaces and deletes in both families, with the trie
 * invariant checker after every step and single and batch lookups compared
 * with lpm_model every few steps; many seeds, default and extreme resize
 * thresholds, bulk load, and the corner cases (/0, host routes, tos,
 * tables, priorities, bad input).
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fib/fib.h"
#include "tests/unit/lpm_model.h"
#include "tests/unit/ck_rcu.h"
#include "tests/unit/ck_run.h"

static const char *last_op = "";

/*
 * FIBD_TEST_SHORT set (make check-valgrind, 30-50 times slower than a
 * native run): fewer seeds and operations, and the invariant checker
 * after every 16th step instead of every step (it walks the whole compiled
 * table, 2 MiB of IPv4 direct pointers, each time). Every test and
 * parameter set still runs: both families, compiled table on and off, all
 * thresholds, all four reclaim variants.
 */
static bool test_short;

static unsigned
test_scaled(unsigned n)
{
	return test_short ? (n + 3) / 4 : n;
}

static bool
test_check_now(unsigned step)
{
	return !test_short || step % 16 == 0;
}

static void
check_trie(const struct fib *fib)
{
	char msg[256] = "";
	int err = fib_check(fib, msg, sizeof(msg));

	ck_assert_msg(err == 0, "trie invariant after %s: %s", last_op, msg);
}

static void
lookup_one(const struct fib *fib, const struct lpm_model *m, int family, const uint8_t *addr,
	   uint32_t table, uint8_t tos)
{
	const struct lpm_route *want = lpm_lookup(m, family, addr, table, tos);
	struct fib_result res;
	struct fib_match fm;
	char buf[64];

	fib_read_lock();
	res = fib_lookup_rcu(fib, family, addr, table, tos);
	inet_ntop(family, addr, buf, sizeof(buf));
	if (!want) {
		ck_assert_msg(res.alias == NULL, "%s: FIB matched, model has no route", buf);
	} else {
		ck_assert_msg(fib_result_get(&res, &fm) == 0, "%s: FIB has no match, model /%u", buf,
			      want->plen);
		ck_assert_msg(lpm_same(want, &fm), "%s: FIB /%u prio %u, model /%u prio %u", buf,
			      fm.plen, fm.info->priority, want->plen, want->prio);
	}
	fib_read_unlock();
}

/* The ref batch of table for the B addresses: every reference names the
 * route the fib_result batch answered (no route: FIB_REF_NONE), and the
 * IPv4 single ref call gives the batch's reference. Call with
 * fib_read_lock held. */
static void
compare_refs(const struct fib *fib, int family, uint32_t table, const uint32_t *a4,
	     const uint8_t (*a6)[16], unsigned n)
{
	struct fib_result res[64], got;
	uint32_t ref[64];

	ck_assert_uint_le(n, 64);
	if (family == AF_INET) {
		fib_lookup4_batch_rcu(fib, table, a4, res, n);
		fib_lookup4_ref_batch_rcu(fib, table, a4, ref, n);
	} else {
		fib_lookup6_batch_rcu(fib, table, a6, res, n);
		fib_lookup6_ref_batch_rcu(fib, table, a6, ref, n);
	}
	for (unsigned i = 0; i < n; i++) {
		int err = fib_ref_get_rcu(fib, family, ref[i], &got);

		ck_assert_uint_ne(ref[i], FIB_REF_UNNAMED);
		ck_assert_int_eq(err, res[i].alias ? 0 : -ENOENT);
		ck_assert_int_eq(ref[i] == FIB_REF_NONE, res[i].alias == NULL);
		ck_assert_msg(got.alias == res[i].alias && got.leaf == res[i].leaf,
			      "ref %#x (table %u): another route than the batch's", ref[i], table);
		if (family == AF_INET)
			ck_assert_msg(fib_lookup4_ref_rcu(fib, table, a4[i]) == ref[i],
				      "single ref %#x, batch %#x (table %u)",
				      fib_lookup4_ref_rcu(fib, table, a4[i]), ref[i], table);
	}
}

/* Compare n random lookups, single and batched, in tables 254 and 100
 * tos 0, and with another tos (single only); the ref batch in 254 and
 * 100 against the batch. */
static void
compare(const struct fib *fib, const struct lpm_model *m, int family, uint64_t *seed, unsigned n)
{
	enum { B = 37 }; /* odd batch size: exercises partial groups */
	uint32_t a4[B];
	uint8_t a6[B][16];
	struct fib_result res[B];

	for (unsigned done = 0; done < n; done += B) {
		for (unsigned i = 0; i < B; i++) {
			uint8_t addr[16] = { 0 };
			lpm_random_addr(seed, m, family, addr);
			if (family == AF_INET) {
				uint32_t be;
				memcpy(&be, addr, 4);
				a4[i] = ntohl(be);
			} else {
				memcpy(a6[i], addr, 16);
			}
			lookup_one(fib, m, family, addr, 254, 0);
			if (i % 4 == 0) {
				lookup_one(fib, m, family, addr, 100, 0);
				lookup_one(fib, m, family, addr, 254, 0x10);
			}
		}
		fib_read_lock();
		compare_refs(fib, family, 254, a4, (const uint8_t(*)[16])a6, B);
		compare_refs(fib, family, 100, a4, (const uint8_t(*)[16])a6, B);
		for (unsigned i = 0; i < 2 * B; i++) {
			uint32_t table = i < B ? 254 : 100;
			uint8_t addr[16] = { 0 };
			const struct lpm_route *want;
			struct fib_match fm;

			if (i % B == 0) {
				if (family == AF_INET)
					fib_lookup4_batch_rcu(fib, table, a4, res, B);
				else
					fib_lookup6_batch_rcu(fib, table, (const uint8_t(*)[16])a6, res,
							      B);
			}
			if (family == AF_INET) {
				uint32_t be = htonl(a4[i % B]);
				memcpy(addr, &be, 4);
			} else {
				memcpy(addr, a6[i % B], 16);
			}
			want = lpm_lookup(m, family, addr, table, 0);
			if (!want) {
				ck_assert_msg(res[i % B].alias == NULL,
					      "batch (table %u): match where model has none", table);
			} else {
				ck_assert_msg(fib_result_get(&res[i % B], &fm) == 0,
					      "batch (table %u): no match, model /%u", table, want->plen);
				ck_assert_msg(lpm_same(want, &fm), "batch (table %u): /%u, model /%u",
					      table, fm.plen, want->plen);
			}
		}
		fib_read_unlock();
	}
}

/* fib_find_rcu of key k, against lpm_find: the route or -ENOENT. */
static void
compare_find_one(const struct fib *fib, const struct lpm_model *m, const struct lpm_route *k)
{
	struct fib_route fr;
	struct fib_nh nh;
	struct fib_match fm;
	long at = lpm_find(m, k);
	int err;

	lpm_to_fib(k, &fr, &nh);
	fr.type = 0; /* not part of the key: must not matter */
	fr.nh_count = 0;
	fr.protocol = 0;
	fib_read_lock();
	err = fib_find_rcu(fib, &fr, 0, &fm);
	if (at < 0) {
		ck_assert_int_eq(err, -ENOENT);
	} else {
		const struct lpm_route *r = &m->r[at];

		ck_assert_int_eq(err, 0);
		ck_assert_msg(lpm_same(r, &fm), "fib_find_rcu: another route");
		ck_assert_uint_eq(fm.info->nh_count, r->type == FIB_UNICAST ? 1 : 0);
		if (r->type == FIB_UNICAST)
			ck_assert_uint_eq(fm.info->nh[0].ifindex, 1 + (r->prio % 3));
		/* the model keeps one route per key */
		ck_assert_int_eq(fib_find_rcu(fib, &fr, 1, &fm), -ENOENT);
	}
	fib_read_unlock();
}

/*
 * Every model route found by its exact key; each of table, tos, priority
 * and prefix length changed finds what the model holds under that key,
 * usually nothing; random keys likewise.
 */
static void
compare_find(const struct fib *fib, const struct lpm_model *m, int family, uint64_t *seed,
	     unsigned n)
{
	for (size_t i = 0; i < m->n; i++) {
		struct lpm_route k = m->r[i];

		compare_find_one(fib, m, &k);
		k.table = k.table == 254 ? 100 : 254;
		compare_find_one(fib, m, &k);
		k = m->r[i];
		k.tos = k.tos ? 0 : 0x10;
		compare_find_one(fib, m, &k);
		k = m->r[i];
		k.prio++;
		compare_find_one(fib, m, &k);
		k = m->r[i];
		if (k.plen < (family == AF_INET ? 32 : 128)) {
			k.plen++;
			compare_find_one(fib, m, &k);
		}
	}
	for (unsigned i = 0; i < n; i++) {
		struct lpm_route k;

		lpm_random_route(seed, family, &k);
		compare_find_one(fib, m, &k);
	}
}

static void
model_apply_add(struct fib *fib, struct lpm_model *m, const struct lpm_route *r, unsigned flags)
{
	struct fib_route fr;
	struct fib_nh nh;
	long at = lpm_find(m, r);
	int err;

	lpm_to_fib(r, &fr, &nh);
	last_op = at >= 0 ? "add over an existing key" : "add";
	err = fib_add(fib, &fr, flags);
	if (at >= 0 && !(flags & FIB_ADD_REPLACE)) {
		/* same key exists: identical route -> EEXIST; with EXCL always */
		if ((flags & FIB_ADD_EXCL) || m->r[at].type == r->type) {
			ck_assert_int_eq(err, -EEXIST);
			return;
		}
		/* A different route of the same key would be prepended; the model
		 * keeps one route per key, so take it back out. */
		ck_assert_int_eq(err, 0);
		ck_assert_int_eq(fib_del(fib, &fr), 0);
		return;
	}
	ck_assert_int_eq(err, 0);
	if (at >= 0)
		m->r[at] = *r;
	else
		lpm_add(m, r);
}

static void
model_apply_del(struct fib *fib, struct lpm_model *m, size_t i)
{
	struct fib_route fr;
	struct fib_nh nh;

	lpm_to_fib(&m->r[i], &fr, &nh);
	last_op = "del";
	ck_assert_int_eq(fib_del(fib, &fr), 0);
	/* priority 0 in a delete matches any priority, as in the kernel */
	if (fr.priority)
		ck_assert_int_eq(fib_del(fib, &fr), -ENOENT);
	lpm_del(m, i);
}

/*
 * Dense IPv4 runs: every route inside 10.64.0.0/14, /14 to /32, so that
 * the /18s of 10.64.0.0/17 hold many routes, /24s hold longer ones and
 * keys carry several lengths: the compiled table's changes that repaint
 * a few /24s of a segment (and move its other deep nodes to the copy)
 * are checked against a fresh build after each one.
 */
static bool dense4;

static void
dense_route(uint64_t *s, struct lpm_route *r)
{
	uint64_t x = lpm_rand(s);
	unsigned plen = 14 + (unsigned)(x % 19);
	uint32_t a = 0x0a400000u | (uint32_t)(lpm_rand(s) & (x % 8 ? 0x7fff : 0x3ffff));

	a &= ~(uint32_t)0 << (32 - plen);
	for (unsigned i = 0; i < 4; i++)
		r->dst.b[i] = (uint8_t)(a >> (24 - 8 * i));
	r->plen = (uint8_t)plen;
}

/*
 * Dense IPv6 runs: most routes inside 2001:db8::/30, /26 to /80, with
 * few distinct bits below the /32 so that they nest: the compiled
 * table's /32s hold blocks of one line, two lines and two levels, and
 * more intervals than a block takes (the trie answers), and /64s with
 * longer routes inside; the others as random_run draws them.
 */
static bool dense6;
static uint64_t dense6_two, dense6_asks; /* most multi-level blocks, asks seen */

static void
dense6_route(uint64_t *s, struct lpm_route *r)
{
	uint64_t x = lpm_rand(s);
	unsigned plen = 26 + (unsigned)(x % 55);

	if ((x >> 8) % 8 == 0)
		return;
	r->dst.b[0] = 0x20;
	r->dst.b[1] = 0x01;
	r->dst.b[2] = 0x0d;
	r->dst.b[3] = (uint8_t)(0xb8 | (lpm_rand(s) & ((x >> 12) % 4 ? 1 : 3)));
	for (unsigned i = 4; i < 16; i++)
		r->dst.b[i] = (uint8_t)(lpm_rand(s) & (i < 6 ? 0x1f : 0x11));
	for (unsigned i = 0; i < 16; i++)
		if (8 * i >= plen)
			r->dst.b[i] = 0;
		else if (8 * i + 8 > plen)
			r->dst.b[i] &= (uint8_t)(0xff00u >> (plen - 8 * i));
	r->plen = (uint8_t)plen;
}

static void
random_run(int family, uint64_t seed, unsigned ops, const struct fib_params *p)
{
	struct fib_params dp;
	struct fib *fib;
	struct lpm_model m;
	uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;

	if (!p) {
		/* Seeds by seed % 4: 0, table 254 compiled; 1, none (the trie
		 * answers everything); 2, 254 and table 100 above 24 routes
		 * (it gains and loses its compiled table as the run grows and
		 * shrinks); 3, no main table: 254 and 100 by their size. */
		fib_params_default(&dp);
		dp.accel_table = dp.accel_table6 = seed % 4 == 0 || seed % 4 == 2 ? 254 : 0;
		dp.accel_min_routes = seed % 4 >= 2 ? 24 : 0;
		p = &dp;
	}
	fib = fib_new(p);

	ck_assert_ptr_nonnull(fib);
	lpm_init(&m);
	for (unsigned op = 0; op < ops; op++) {
		uint64_t x = lpm_rand(&s);
		unsigned what = (unsigned)(x % 100);
		struct lpm_route r;

		/* grow first, then churn, then mostly delete */
		unsigned add_share = op < ops / 2 ? 75 : op < ops * 3 / 4 ? 50 : 20;
		if (what < add_share || m.n == 0) {
			lpm_random_route(&s, family, &r);
			if (dense4 && family == AF_INET)
				dense_route(&s, &r);
			if (dense6 && family == AF_INET6)
				dense6_route(&s, &r);
			model_apply_add(fib, &m, &r, (x >> 8) % 8 == 0 ? FIB_ADD_EXCL : 0);
		} else if (what < add_share + 10) {
			/* replace an existing route with another type */
			r = m.r[(x >> 8) % m.n];
			r.type = r.type == FIB_UNICAST ? FIB_BLACKHOLE : FIB_UNICAST;
			model_apply_add(fib, &m, &r, FIB_ADD_REPLACE);
		} else {
			model_apply_del(fib, &m, (x >> 8) % m.n);
		}
		if (test_check_now(op))
			check_trie(fib);
		ck_assert_uint_eq(fib_count(fib, family), m.n);
		if (op % 16 == 15)
			compare(fib, &m, family, &s, 74);
		if (dense6 && op % 16 == 15) {
			struct fib_stats st;

			fib_stats(fib, &st);
			if (st.v6.accel_nodes > dense6_two)
				dense6_two = st.v6.accel_nodes;
			if (st.v6.accel_asks > dense6_asks)
				dense6_asks = st.v6.accel_asks;
		}
		if (op % 64 == 63)
			compare_find(fib, &m, family, &s, 16);
	}
	compare(fib, &m, family, &s, 740);
	compare_find(fib, &m, family, &s, 160);
	/* delete everything: the trie must end empty */
	while (m.n) {
		model_apply_del(fib, &m, m.n - 1);
		if (m.n % 7 == 0)
			check_trie(fib);
	}
	check_trie(fib);
	ck_assert_uint_eq(fib_count(fib, AF_UNSPEC), 0);
	lpm_fini(&m);
	fib_free(fib);
}

START_TEST(test_random4)
{
	random_run(AF_INET, (uint64_t)_i + 1, 1500, NULL);
}
END_TEST

START_TEST(test_dense4)
{
	dense4 = true;
	random_run(AF_INET, (uint64_t)_i + 201, test_scaled(2000), NULL);
	dense4 = false;
}
END_TEST

/*
 * One /32 with thousands of /48s and /56s, as the largest /32s of a full
 * table hold: its block grows to two, three and four levels (up to 16^4
 * intervals) and shrinks back; lookups inside it against the model, and
 * the table against a fresh build, at each size.
 */
START_TEST(test_big32)
{
	struct fib_params p;
	struct fib *fib;
	struct lpm_model m;
	uint64_t s = 77 + (uint64_t)_i;
	unsigned sizes[] = { 20, 300, 3000, 6000 }, at = 0;
	uint64_t levels = 0;

	fib_params_default(&p);
	fib = fib_new(&p);
	ck_assert_ptr_nonnull(fib);
	lpm_init(&m);
	for (unsigned k = 0; k < 4; k++) {
		for (; at < sizes[k]; at++) {
			struct lpm_route r;
			unsigned v = _i ? at * 7919 % 65536 : at;

			memset(&r, 0, sizeof(r));
			r.family = AF_INET6;
			r.dst.b[0] = 0x20;
			r.dst.b[1] = 0x01;
			r.dst.b[2] = 0x0d;
			r.dst.b[3] = 0xb8;
			r.dst.b[4] = (uint8_t)(v >> 8);
			r.dst.b[5] = (uint8_t)v;
			r.plen = 48;
			if (at % 5 == 4) {
				r.dst.b[6] = 0x12;
				r.plen = 56;
			}
			r.table = 254;
			r.type = at % 3 ? FIB_UNICAST : FIB_BLACKHOLE;
			model_apply_add(fib, &m, &r, 0);
		}
		check_trie(fib);
		compare(fib, &m, AF_INET6, &s, 2000);
		{
			struct fib_stats st;

			fib_stats(fib, &st);
			levels += st.v6.accel_nodes;
			ck_assert_uint_eq(st.v6.accel_asks, 0);
			if (k == 3) /* four levels */
				ck_assert_uint_gt(st.v6.accel_answers, 4096);
		}
	}
	ck_assert_uint_gt(levels, 0);
	while (m.n) {
		model_apply_del(fib, &m, (size_t)(lpm_rand(&s) % m.n));
		if (m.n % 1000 == 0) {
			check_trie(fib);
			compare(fib, &m, AF_INET6, &s, 500);
		}
	}
	check_trie(fib);
	lpm_fini(&m);
	fib_free(fib);
}
END_TEST

START_TEST(test_dense6)
{
	dense6 = true;
	dense6_two = dense6_asks = 0;
	random_run(AF_INET6, (uint64_t)_i + 301, test_scaled(2000), NULL);
	dense6 = false;
	/* (seed 301 has no compiled table) */
	if (_i != 0)
		ck_assert_msg(dense6_two > 0,
			      "dense routes made %llu two-level blocks, %llu asks",
			      (unsigned long long)dense6_two, (unsigned long long)dense6_asks);
}
END_TEST

START_TEST(test_random6)
{
	random_run(AF_INET6, (uint64_t)_i + 101, 1500, NULL);
}
END_TEST

/* Thresholds at their extremes: nodes inflate eagerly or barely at all. */
START_TEST(test_thresholds)
{
	static const unsigned t[][4] = {
		{ 50, 25, 10, 5 }, { 50, 25, 90, 80 }, { 10, 5, 10, 5 },
		{ 100, 99, 100, 99 }, { 2, 1, 2, 1 },
	};
	struct fib_params p;

	fib_params_default(&p);
	p.inflate_threshold = t[_i][0];
	p.halve_threshold = t[_i][1];
	p.inflate_threshold_root = t[_i][2];
	p.halve_threshold_root = t[_i][3];
	p.sync_pages = _i % 2 ? 1 : 128;
	p.reclaim_mode = _i % 2 ? FIB_RECLAIM_SYNC : FIB_RECLAIM_CALL_RCU;
	random_run(AF_INET, 1000 + (uint64_t)_i, test_scaled(1200), &p);
	random_run(AF_INET6, 2000 + (uint64_t)_i, test_scaled(800), &p);
}
END_TEST

/* Bulk load equals one insert at a time; then churn on the loaded trie. */
/* fib_walk_from in steps of 1..k routes visits what one fib_walk does, in
 * the same order, and ends done. */
struct walk_rec {
	struct fib_match *m;
	size_t n, cap;
	unsigned stop_after, left; /* steps: stop after this many routes */
};

static int
walk_collect(const struct fib_match *m, void *arg)
{
	struct walk_rec *w = arg;

	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 1024;
		w->m = realloc(w->m, w->cap * sizeof(*w->m));
		ck_assert_ptr_nonnull(w->m);
	}
	w->m[w->n++] = *m;
	return w->stop_after && --w->left == 0;
}

static void
check_walk_steps(const struct fib *fib, int family, uint64_t *s)
{
	struct walk_rec all = {0}, step = {0};
	struct fib_walk_pos pos;
	unsigned steps = 0;

	ck_assert_int_eq(fib_walk(fib, family, walk_collect, &all), 0);
	memset(&pos, 0, sizeof(pos));
	while (!pos.done) {
		step.stop_after = 1 + (unsigned)(lpm_rand(s) % 40);
		step.left = step.stop_after;
		fib_read_lock();
		fib_walk_from(fib, family, &pos, walk_collect, &step);
		fib_read_unlock();
		ck_assert_uint_le(++steps, all.n + 1);
	}
	ck_assert_uint_eq(step.n, all.n);
	for (size_t i = 0; i < all.n; i++) {
		ck_assert_uint_eq(step.m[i].plen, all.m[i].plen);
		ck_assert_uint_eq(step.m[i].table, all.m[i].table);
		ck_assert_ptr_eq(step.m[i].info, all.m[i].info);
		ck_assert_int_eq(memcmp(&step.m[i].prefix, &all.m[i].prefix, sizeof(all.m[i].prefix)), 0);
	}
	ck_assert_int_eq(fib_walk_from(fib, 99, &pos, walk_collect, &step), -EINVAL);
	free(all.m);
	free(step.m);
}

/* Up to n distinct random routes of family into m and fr (next hops in
 * nh); how many. */
static size_t
random_routes(int family, uint64_t *s, struct lpm_model *m, struct fib_route *fr,
	      struct fib_nh *nh, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct lpm_route r;
		lpm_random_route(s, family, &r);
		if (lpm_find(m, &r) >= 0)
			continue;
		lpm_add(m, &r);
		lpm_to_fib(&r, &fr[k], &nh[k]);
		fr[k].nh = fr[k].nh_count ? &nh[k] : NULL;
		k++;
	}
	return k;
}

static void
load_run(int family, uint64_t seed, size_t n)
{
	struct fib *fib = fib_new(NULL);
	struct lpm_model m;
	struct fib_route *fr = calloc(n, sizeof(*fr));
	struct fib_nh *nh = calloc(n, sizeof(*nh));
	uint64_t s = seed;
	size_t k;

	lpm_init(&m);
	k = random_routes(family, &s, &m, fr, nh, n);
	ck_assert_int_eq(fib_load(fib, fr, k), 0);
	check_trie(fib);
	ck_assert_uint_eq(fib_count(fib, family), m.n);
	compare(fib, &m, family, &s, 2000);
	for (unsigned op = 0; op < 300; op++) {
		struct lpm_route r;
		if (op % 2) {
			lpm_random_route(&s, family, &r);
			model_apply_add(fib, &m, &r, 0);
		} else {
			model_apply_del(fib, &m, lpm_rand(&s) % m.n);
		}
		if (test_check_now(op))
			check_trie(fib);
	}
	compare(fib, &m, family, &s, 1000);
	/* compaction rebuilds the same routes: same answers, no more bytes
	 * than the churned trie, the other family untouched */
	{
		struct fib_stats before, after;
		uint64_t gen = fib_generation(fib);
		fib_stats(fib, &before);
		ck_assert_int_eq(fib_compact(fib, family), 0);
		ck_assert_int_eq(fib_compact(fib, family == AF_INET ? AF_INET6 : AF_INET), 0);
		ck_assert_int_eq(fib_compact(fib, 99), -EINVAL);
		fib_stats(fib, &after);
		check_trie(fib);
		ck_assert_uint_gt(fib_generation(fib), gen);
		ck_assert_uint_eq(fib_count(fib, family), m.n);
		const struct fib_trie_stats *b = family == AF_INET ? &before.v4 : &before.v6;
		const struct fib_trie_stats *a = family == AF_INET ? &after.v4 : &after.v6;
		ck_assert_uint_eq(a->prefixes, b->prefixes);
		ck_assert_uint_eq(a->leaves, b->leaves);
		ck_assert_uint_le(a->bytes, b->bytes);
		compare(fib, &m, family, &s, 1000);
	}
	check_walk_steps(fib, family, &s);
	/* loading into a non-empty family adds one by one, skipping dups */
	ck_assert_int_eq(fib_load(fib, fr, k), 0);
	check_trie(fib);
	free(fr);
	free(nh);
	lpm_fini(&m);
	fib_free(fib);
}

/*
 * The shape a bulk load builds, against a model of the rule: each node,
 * from the root down, as wide as the kernel's should_inflate lets it
 * grow over its sorted leaves (children counted one width at a time, as
 * the kernel does; the load counts every width in one pass for nodes of
 * many leaves). Compared by fib_stats' nodes per width.
 */
typedef unsigned __int128 shape_key;

static int
shape_fls(shape_key k)
{
	uint64_t hi = (uint64_t)(k >> 64);

	return hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll((uint64_t)k);
}

static void
shape_model(const shape_key *k, size_t lo, size_t hi, bool root, const struct fib_params *p,
	    uint64_t *by_bits)
{
	unsigned top, pos, bits = 1;
	unsigned inflate = root ? p->inflate_threshold_root : p->inflate_threshold;

	if (hi - lo == 1)
		return;
	top = (unsigned)shape_fls(k[lo] ^ k[hi - 1]);
	for (;;) {
		unsigned long nonempty = 0, full = 0, used;

		pos = top + 1 - bits;
		if (pos == 0 || bits >= 24)
			break;
		for (size_t i = lo; i < hi;) {
			shape_key g = k[i] >> pos;
			size_t j = i + 1;

			while (j < hi && (k[j] >> pos) == g)
				j++;
			nonempty++;
			if (j - i > 1 && shape_fls(k[i] ^ k[j - 1]) == (int)pos - 1)
				full++;
			i = j;
		}
		used = nonempty + full;
		if (!(used > 1 && 50 * used >= (unsigned long)inflate << bits))
			break;
		bits++;
	}
	pos = top + 1 - bits;
	by_bits[bits]++;
	for (size_t i = lo; i < hi;) {
		shape_key g = k[i] >> pos;
		size_t j = i + 1;

		while (j < hi && (k[j] >> pos) == g)
			j++;
		shape_model(k, i, j, false, p, by_bits);
		i = j;
	}
}

static int
shape_cmp(const void *a, const void *b)
{
	shape_key x = *(const shape_key *)a, y = *(const shape_key *)b;

	return x < y ? -1 : x > y;
}

START_TEST(test_load_shape)
{
	int family = _i % 2 ? AF_INET6 : AF_INET;
	size_t n = 20000, k, u = 0;
	struct fib_params p;
	struct fib *fib;
	struct fib_route *fr = calloc(n, sizeof(*fr));
	struct fib_nh *nh = calloc(n, sizeof(*nh));
	shape_key *keys = calloc(n, sizeof(*keys));
	uint64_t by_bits[FIB_STATS_MAX_BITS + 1] = { 0 };
	struct fib_stats st;
	const struct fib_trie_stats *ts;
	struct lpm_model m;
	uint64_t s = 91 + (uint64_t)_i;

	fib_params_default(&p);
	if (_i >= 2) { /* eager thresholds: wider nodes, more of them counted at once */
		p.inflate_threshold = 10;
		p.halve_threshold = 5;
		p.inflate_threshold_root = 5;
		p.halve_threshold_root = 2;
	}
	fib = fib_new(&p);
	ck_assert_ptr_nonnull(fib);
	lpm_init(&m);
	k = random_routes(family, &s, &m, fr, nh, n);
	for (size_t i = 0; i < k; i++) {
		unsigned bytes = family == AF_INET ? 4 : 16;
		shape_key key = 0;

		for (unsigned b = 0; b < bytes; b++)
			key = key << 8 | fr[i].dst.b[b];
		if (fr[i].plen == 0)
			key = 0;
		else if (fr[i].plen < bytes * 8)
			key &= ~(((shape_key)1 << (bytes * 8 - fr[i].plen)) - 1);
		keys[i] = key;
	}
	ck_assert_int_eq(fib_load(fib, fr, k), 0);
	qsort(keys, k, sizeof(*keys), shape_cmp);
	for (size_t i = 0; i < k; i++)
		if (!u || keys[u - 1] != keys[i])
			keys[u++] = keys[i];
	ck_assert_uint_ge(u, 1000);
	shape_model(keys, 0, u, true, &p, by_bits);
	fib_stats(fib, &st);
	ts = family == AF_INET ? &st.v4 : &st.v6;
	ck_assert_uint_eq(ts->leaves, u);
	for (unsigned b = 0; b <= FIB_STATS_MAX_BITS; b++)
		ck_assert_msg(ts->nodes_by_bits[b] == by_bits[b],
			      "nodes of %u bits: %llu loaded, %llu by the rule", b,
			      (unsigned long long)ts->nodes_by_bits[b], (unsigned long long)by_bits[b]);
	lpm_fini(&m);
	fib_free(fib);
	free(keys);
	free(fr);
	free(nh);
}
END_TEST

START_TEST(test_load)
{
	load_run(AF_INET, 77 + (uint64_t)_i, 3000);
	load_run(AF_INET6, 78 + (uint64_t)_i, 3000);
}
END_TEST

static struct fib_route
mkroute(const char *pfx, uint32_t table, uint32_t prio, uint8_t type)
{
	struct fib_route r;

	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(fib_prefix_parse(pfx, &r.dst, &r.plen, &r.family), 0);
	r.table = table;
	r.priority = prio;
	r.type = type;
	return r;
}

static int
lookup_plen(struct fib *fib, const char *addr, uint32_t table, uint8_t tos, uint32_t *prio)
{
	union fib_addr a;
	uint8_t plen, fam;
	struct fib_result res;
	struct fib_match fm;
	int ret = -1;

	ck_assert_int_eq(fib_prefix_parse(addr, &a, &plen, &fam), 0);
	fib_read_lock();
	res = fib_lookup_rcu(fib, fam, a.b, table, tos);
	if (fib_result_get(&res, &fm) == 0) {
		ret = fm.plen;
		if (prio)
			*prio = fm.info->priority;
	}
	fib_read_unlock();
	return ret;
}

/*
 * Route references of aliases far down their leaf (index 7 and more: the
 * reference names the alias, pool_handle_obj finds the leaf): one key
 * with every prefix length in table 254, and other tables' routes ahead
 * of them, compiled table on and off (_i).
 */
START_TEST(test_ref_deep_alias)
{
	static const char *const pfx[2] = { "10.0.0.0", "2001:db8::" };
	static const unsigned bits[2] = { 32, 128 };
	struct fib_params p;
	struct fib *fib;

	fib_params_default(&p);
	if (_i) {
		p.accel_table = 0;
		p.accel_table6 = 0;
	}
	fib = fib_new(&p);
	ck_assert_ptr_nonnull(fib);
	for (unsigned f = 0; f < 2; f++) {
		for (unsigned plen = f ? 32 : 8; plen <= bits[f]; plen += f ? 4 : 1) {
			char buf[64];
			struct fib_route r;

			snprintf(buf, sizeof(buf), "%s/%u", pfx[f], plen);
			r = mkroute(buf, 254, 0, FIB_UNICAST);
			ck_assert_int_eq(fib_add(fib, &r, 0), 0);
			r = mkroute(buf, 255, 0, FIB_LOCAL);
			if (plen % 3 == 0)
				ck_assert_int_eq(fib_add(fib, &r, 0), 0);
		}
	}
	/* addresses that leave the key at each bit: every alias answers */
	for (unsigned f = 0; f < 2; f++) {
		int family = f ? AF_INET6 : AF_INET;
		uint32_t a4[64];
		uint8_t a6[64][16];
		union fib_addr base;
		uint8_t plen, fam;
		unsigned n = 0;

		ck_assert_int_eq(fib_prefix_parse(pfx[f], &base, &plen, &fam), 0);
		for (unsigned b = f ? 64 : 0; b < bits[f] && n < 64; b++, n++) {
			union fib_addr a = base;

			a.b[b / 8] ^= (uint8_t)(0x80 >> (b % 8));
			memcpy(a6[n], a.b, 16);
			a4[n] = ntohl(a.v4.s_addr);
		}
		fib_read_lock();
		for (unsigned tb = 0; tb < 2; tb++)
			compare_refs(fib, family, tb ? 255 : 254, a4, (const uint8_t(*)[16])a6, n);
		/* the far aliases took the escape (low bits 7 in fib/trie_impl.h's
		 * encoding), or this test tests less than it says */
		{
			uint32_t ref[64];
			unsigned esc = 0;

			if (family == AF_INET)
				fib_lookup4_ref_batch_rcu(fib, 254, a4, ref, n);
			else
				fib_lookup6_ref_batch_rcu(fib, 254, (const uint8_t(*)[16])a6, ref,
							  n);
			for (unsigned i = 0; i < n; i++)
				esc += (ref[i] & 7) == 7;
			ck_assert_uint_gt(esc, 4);
		}
		fib_read_unlock();
	}
	/* a bad family */
	{
		struct fib_result r;

		fib_read_lock();
		ck_assert_int_eq(fib_ref_get_rcu(fib, AF_UNSPEC, 8, &r), -EINVAL);
		ck_assert_ptr_null(r.alias);
		fib_read_unlock();
	}
	fib_free(fib);
}
END_TEST

START_TEST(test_corner)
{
	struct fib *fib = fib_new(NULL);
	struct fib_route r;
	struct fib_nh nh[2];
	uint32_t prio = 0;

	/* empty FIB */
	ck_assert_int_eq(lookup_plen(fib, "1.2.3.4", 254, 0, NULL), -1);
	/* default route and host route, both families */
	r = mkroute("0.0.0.0/0", 254, 0, FIB_UNICAST);
	ck_assert_int_eq(fib_add(fib, &r, 0), 0);
	ck_assert_int_eq(fib_add(fib, &r, 0), -EEXIST);
	ck_assert_int_eq(lookup_plen(fib, "1.2.3.4", 254, 0, NULL), 0);
	r = mkroute("1.2.3.4/32", 254, 0, FIB_UNICAST);
	ck_assert_int_eq(fib_add(fib, &r, 0), 0);
	ck_assert_int_eq(lookup_plen(fib, "1.2.3.4", 254, 0, NULL), 32);
	ck_assert_int_eq(lookup_plen(fib, "1.2.3.5", 254, 0, NULL), 0);
	r = mkroute("::/0", 254, 0, FIB_UNREACHABLE);
	ck_assert_int_eq(fib_add(fib, &r, 0), 0);
	r = mkroute("2001:db8::1/128", 254, 0, FIB_UNICAST);
	ck_assert_int_eq(fib_add(fib, &r, 0), 0);
	ck_assert_int_eq(lookup_plen(fib, "2001:db8::1", 254, 0, NULL), 128);
	ck_assert_int_eq(lookup_plen(fib, "2001:db8::2", 254, 0, NULL), 0);
	/* priorities: lowest wins; deleting it uncovers the next */
	r = mkroute("10.0.0.0/8", 254, 20, FIB_UNICAST);
	ck_assert_int_eq(fib_add(fib, &r, 0), 0);
	r = mkroute("10.0.0.0/8", 254, 10, FIB_BLACKHOLE);
	ck_assert_int_eq(fib_add(fib, &r, 0), 0);
	ck_assert_int_eq(lookup_plen(fib, "10.9.9.9", 254, 0, &prio), 8);
	ck_assert_uint_eq(prio, 10);
	r = mkroute("10.0.0.0/8", 254, 10, 0);
	ck_assert_int_eq(fib_del(fib, &r), 0);
	ck_assert_int_eq(lookup_plen(fib, "10.9.9.9", 254, 0, &prio), 8);
	ck_assert_uint_eq(prio, 20);
	/* tables are separate; tos routes match only their tos */
	r = mkroute("10.1.0.0/16", 100, 0, FIB_UNICAST);
	ck_assert_int_eq(fib_add(fib, &r, 0), 0);
	ck_assert_int_eq(lookup_plen(fib, "10.1.1.1", 254, 0, NULL), 8);
	ck_assert_int_eq(lookup_plen(fib, "10.1.1.1", 100, 0, NULL), 16);
	r = mkroute("10.2.0.0/16", 254, 0, FIB_UNICAST);
	r.tos = 0x10;
	ck_assert_int_eq(fib_add(fib, &r, 0), 0);
	ck_assert_int_eq(lookup_plen(fib, "10.2.1.1", 254, 0, NULL), 8);
	ck_assert_int_eq(lookup_plen(fib, "10.2.1.1", 254, 0x10, NULL), 16);
	/* replace keeps one route; append adds one after */
	r = mkroute("10.3.0.0/16", 254, 5, FIB_UNICAST);
	ck_assert_int_eq(fib_add(fib, &r, FIB_ADD_REPLACE), 0);
	r.type = FIB_PROHIBIT;
	ck_assert_int_eq(fib_add(fib, &r, FIB_ADD_EXCL), -EEXIST);
	ck_assert_int_eq(fib_add(fib, &r, FIB_ADD_REPLACE), 0);
	ck_assert_uint_eq(fib_count(fib, AF_INET), 6);
	r.type = FIB_UNICAST;
	ck_assert_int_eq(fib_add(fib, &r, FIB_ADD_APPEND), 0);
	ck_assert_uint_eq(fib_count(fib, AF_INET), 7);
	/* multipath next hops, interned: two routes share one set */
	memset(nh, 0, sizeof(nh));
	nh[0].gw_family = AF_INET;
	inet_pton(AF_INET, "192.0.2.1", &nh[0].gw.v4);
	nh[0].ifindex = 2;
	nh[0].weight = 1;
	nh[1] = nh[0];
	inet_pton(AF_INET, "192.0.2.2", &nh[1].gw.v4);
	nh[1].weight = 3;
	r = mkroute("198.51.100.0/24", 254, 0, FIB_UNICAST);
	r.nh = nh;
	r.nh_count = 2;
	ck_assert_int_eq(fib_add(fib, &r, 0), 0);
	r = mkroute("203.0.113.0/24", 254, 0, FIB_UNICAST);
	r.nh = nh;
	r.nh_count = 2;
	ck_assert_int_eq(fib_add(fib, &r, 0), 0);
	{
		struct fib_stats st;
		union fib_addr a;
		uint8_t plen, fam;
		struct fib_result res;
		struct fib_match fm;
		fib_stats(fib, &st);
		ck_assert_uint_eq(st.v4.prefixes, 9);
		fib_prefix_parse("203.0.113.9", &a, &plen, &fam);
		fib_read_lock();
		res = fib_lookup_rcu(fib, AF_INET, a.b, 254, 0);
		ck_assert_int_eq(fib_result_get(&res, &fm), 0);
		ck_assert_uint_eq(fm.info->nh_count, 2);
		ck_assert_uint_eq(fm.info->nh[1].weight, 3);
		fib_read_unlock();
	}
	/* deletes with a wrong next hop do not match */
	r = mkroute("203.0.113.0/24", 254, 0, 0);
	nh[0].ifindex = 9;
	r.nh = nh;
	r.nh_count = 1;
	ck_assert_int_eq(fib_del(fib, &r), -ENOENT);
	r.nh_count = 0;
	ck_assert_int_eq(fib_del(fib, &r), 0);
	/* bad input: host bits, lengths, families, types, flags */
	r = mkroute("10.0.0.1/32", 254, 0, FIB_UNICAST);
	r.plen = 8;
	ck_assert_int_eq(fib_add(fib, &r, 0), -EINVAL);
	r.plen = 33;
	ck_assert_int_eq(fib_add(fib, &r, 0), -EINVAL);
	r.plen = 32;
	r.type = 42;
	ck_assert_int_eq(fib_add(fib, &r, 0), -EINVAL);
	r.type = FIB_UNICAST;
	r.family = 99;
	ck_assert_int_eq(fib_add(fib, &r, 0), -EINVAL);
	ck_assert_int_eq(fib_del(fib, &r), -EINVAL);
	r.family = AF_INET;
	ck_assert_int_eq(fib_add(fib, &r, 0x80), -EINVAL);
	r.nh_count = 1;
	r.nh = NULL;
	ck_assert_int_eq(fib_add(fib, &r, 0), -EINVAL);
	ck_assert_uint_eq(fib_count(fib, AF_INET), 8);
	check_trie(fib);
	fib_flush(fib, AF_INET);
	ck_assert_uint_eq(fib_count(fib, AF_INET), 0);
	ck_assert_uint_eq(fib_count(fib, AF_INET6), 2);
	check_trie(fib);
	fib_free(fib);
}
END_TEST

/* fib_load keeps routes of one key in input order, identical ones once. */
/* Routes of one key in the order lookups try them; bad keys. */
START_TEST(test_find)
{
	struct fib *fib = fib_new(NULL);
	struct fib_route a = mkroute("2001:db8::/32", 254, 1024, FIB_UNICAST);
	struct fib_route b = a, k = a;
	struct fib_nh na = { .ifindex = 1, .weight = 1 };
	struct fib_nh nb[2] = { { .ifindex = 2, .weight = 1 }, { .ifindex = 3, .weight = 2 } };
	struct fib_match fm;

	ck_assert_ptr_nonnull(fib);
	a.nh = &na;
	a.nh_count = 1;
	b.nh = nb;
	b.nh_count = 2;
	ck_assert_int_eq(fib_add(fib, &a, 0), 0);
	ck_assert_int_eq(fib_add(fib, &b, FIB_ADD_APPEND), 0);
	fib_read_lock();
	ck_assert_int_eq(fib_find_rcu(fib, &k, 0, &fm), 0);
	ck_assert_uint_eq(fm.info->nh_count, 1);
	ck_assert_uint_eq(fm.info->nh[0].ifindex, 1);
	ck_assert_int_eq(fib_find_rcu(fib, &k, 1, &fm), 0);
	ck_assert_uint_eq(fm.info->nh_count, 2);
	ck_assert_uint_eq(fm.info->nh[1].ifindex, 3);
	ck_assert_uint_eq(fm.info->nh[1].weight, 2);
	ck_assert_uint_eq(fm.plen, 32);
	ck_assert_uint_eq(fm.table, 254);
	ck_assert_int_eq(fib_find_rcu(fib, &k, 2, &fm), -ENOENT);
	k.priority = 0; /* exact: no wildcard, unlike fib_del */
	ck_assert_int_eq(fib_find_rcu(fib, &k, 0, &fm), -ENOENT);
	k = mkroute("2001:db8::/48", 254, 1024, 0); /* a longer prefix, same leaf key */
	ck_assert_int_eq(fib_find_rcu(fib, &k, 0, &fm), -ENOENT);
	k = mkroute("2001:db8::/31", 254, 1024, 0);
	ck_assert_int_eq(fib_find_rcu(fib, &k, 0, &fm), -ENOENT);
	k = mkroute("10.0.0.0/8", 254, 1024, 0); /* other family, empty trie */
	ck_assert_int_eq(fib_find_rcu(fib, &k, 0, &fm), -ENOENT);
	k.plen = 33;
	ck_assert_int_eq(fib_find_rcu(fib, &k, 0, &fm), -EINVAL);
	k.family = AF_UNIX;
	ck_assert_int_eq(fib_find_rcu(fib, &k, 0, &fm), -EINVAL);
	fib_read_unlock();
	fib_free(fib);
}
END_TEST

START_TEST(test_load_dups)
{
	struct fib *fib = fib_new(NULL);
	struct fib_route r[4];
	struct fib_nh nh[4];
	struct fib_result res;
	struct fib_match fm;
	union fib_addr a;
	uint8_t plen, fam;

	memset(nh, 0, sizeof(nh));
	for (int i = 0; i < 4; i++) {
		r[i] = mkroute(i == 3 ? "10.1.0.0/16" : "10.0.0.0/8", 254, 0, FIB_UNICAST);
		nh[i].ifindex = (uint32_t)(i == 2 ? 1 : i + 1); /* r[2] repeats r[0] */
		nh[i].weight = 1;
		r[i].nh = &nh[i];
		r[i].nh_count = 1;
	}
	ck_assert_int_eq(fib_load(fib, r, 4), 0);
	ck_assert_uint_eq(fib_count(fib, AF_INET), 3);
	check_trie(fib);
	fib_prefix_parse("10.9.9.9", &a, &plen, &fam);
	fib_read_lock();
	res = fib_lookup_rcu(fib, AF_INET, a.b, 254, 0);
	ck_assert_int_eq(fib_result_get(&res, &fm), 0);
	ck_assert_uint_eq(fm.info->nh[0].ifindex, 1); /* the first in input order */
	fib_read_unlock();
	ck_assert_int_eq(fib_del(fib, &r[0]), 0);
	fib_read_lock();
	res = fib_lookup_rcu(fib, AF_INET, a.b, 254, 0);
	ck_assert_int_eq(fib_result_get(&res, &fm), 0);
	ck_assert_uint_eq(fm.info->nh[0].ifindex, 2);
	fib_read_unlock();
	check_trie(fib);
	fib_free(fib);
}
END_TEST

START_TEST(test_params)
{
	struct fib_params p;
	struct fib *fib;

	fib_params_default(&p);
	ck_assert_uint_eq(p.inflate_threshold, 50);
	ck_assert_uint_eq(p.halve_threshold, 25);
	ck_assert_uint_eq(p.inflate_threshold_root, 30);
	ck_assert_uint_eq(p.halve_threshold_root, 15);
	ck_assert_uint_eq(p.sync_pages, 128);
	fib = fib_new(&p);
	p.halve_threshold = 60; /* above inflate */
	ck_assert_int_eq(fib_set_params(fib, &p), -EINVAL);
	p.halve_threshold = 25;
	p.sync_pages = 0;
	ck_assert_int_eq(fib_set_params(fib, &p), -EINVAL);
	p.sync_pages = 1;
	p.inflate_threshold_root = 90;
	p.halve_threshold_root = 10;
	ck_assert_int_eq(fib_set_params(fib, &p), 0);
	{
		struct fib_params q;
		fib_get_params(fib, &q);
		ck_assert_uint_eq(q.inflate_threshold_root, 90);
	}
	fib_free(fib);
	p.inflate_threshold = 0;
	errno = 0;
	ck_assert_ptr_null(fib_new(&p));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* Routes of table in the model. */
static size_t
model_count(const struct lpm_model *m, uint32_t table)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		n += m->r[i].table == table;
	return n;
}

/* Add random tos-0 routes of table until the model holds n of them. */
static void
grow_table(struct fib *fib, struct lpm_model *m, uint64_t *s, int family, uint32_t table,
	   size_t n)
{
	while (model_count(m, table) < n) {
		struct lpm_route r;

		lpm_random_route(s, family, &r);
		r.table = table;
		r.tos = 0;
		model_apply_add(fib, m, &r, 0);
	}
}

/* Delete routes of table until the model holds n of them. */
static void
shrink_table(struct fib *fib, struct lpm_model *m, uint32_t table, size_t n)
{
	for (size_t i = m->n; i-- > 0 && model_count(m, table) > n;)
		if (m->r[i].table == table)
			model_apply_del(fib, m, i);
}

/* The compiled tables of family: their number, and whether table has one. */
static unsigned
accel_tables(const struct fib *fib, int family, uint32_t table, bool *has)
{
	struct fib_stats st;
	const struct fib_trie_stats *t = family == AF_INET ? &st.v4 : &st.v6;

	fib_stats(fib, &st);
	*has = false;
	for (unsigned i = 0; i < t->accel_tables; i++)
		*has |= t->accel_table_ids[i] == table;
	return t->accel_tables;
}

/*
 * Tables other than main get a compiled table of their own once they
 * hold accel_min_routes routes, and lose it below half of that; a
 * rebuild keeps the largest when more qualify than there are slots. The
 * answers of every table stay the model's throughout.
 */
START_TEST(test_accel_tables)
{
	int family = _i ? AF_INET6 : AF_INET;
	struct fib_params p;
	struct fib *fib;
	struct lpm_model m;
	uint64_t s = 77 + (uint64_t)_i;
	bool has;

	fib_params_default(&p);
	ck_assert_uint_eq(p.accel_min_routes, 100000);
	p.accel_min_routes = 40;
	fib = fib_new(&p);
	ck_assert_ptr_nonnull(fib);
	/* none while the main table is empty */
	ck_assert_uint_eq(accel_tables(fib, family, 254, &has), 0);
	lpm_init(&m);
	grow_table(fib, &m, &s, family, 254, 200);
	ck_assert(accel_tables(fib, family, 254, &has) == 1 && has);
	grow_table(fib, &m, &s, family, 100, 39);
	ck_assert_uint_eq(accel_tables(fib, family, 100, &has), 1);
	ck_assert(!has);
	grow_table(fib, &m, &s, family, 100, 40);
	ck_assert_uint_eq(accel_tables(fib, family, 100, &has), 2);
	ck_assert(has);
	check_trie(fib);
	compare(fib, &m, family, &s, 740);

	/* below half: retired; at 20, kept */
	shrink_table(fib, &m, 100, 20);
	ck_assert_uint_eq(accel_tables(fib, family, 100, &has), 2);
	compare(fib, &m, family, &s, 370);
	shrink_table(fib, &m, 100, 19);
	ck_assert_uint_eq(accel_tables(fib, family, 100, &has), 1);
	check_trie(fib);
	compare(fib, &m, family, &s, 370);

	/* a compaction counts the tables again; so do new parameters */
	grow_table(fib, &m, &s, family, 100, 45);
	ck_assert_int_eq(fib_compact(fib, family), 0);
	ck_assert_uint_eq(accel_tables(fib, family, 100, &has), 2);
	compare(fib, &m, family, &s, 370);
	p.accel_min_routes = 0;
	ck_assert_int_eq(fib_set_params(fib, &p), 0);
	ck_assert_uint_eq(accel_tables(fib, family, 100, &has), 1);
	p.accel_min_routes = 40;
	ck_assert_int_eq(fib_set_params(fib, &p), 0);
	ck_assert_uint_eq(accel_tables(fib, family, 100, &has), 2);
	check_trie(fib);

	/* eight more tables of 41..48 routes: the slots fill in order (100
	 * and 1..6), then a compaction keeps the largest (2..8) */
	shrink_table(fib, &m, 100, 40);
	for (uint32_t tb = 1; tb <= 8; tb++)
		grow_table(fib, &m, &s, family, tb, 40 + tb);
	ck_assert_uint_eq(accel_tables(fib, family, 6, &has), FIB_ACCEL_TABLES);
	ck_assert(has);
	ck_assert(accel_tables(fib, family, 100, &has) && has);
	ck_assert(accel_tables(fib, family, 7, &has) && !has);
	check_trie(fib);
	ck_assert_int_eq(fib_compact(fib, family), 0);
	for (uint32_t tb = 1; tb <= 8; tb++) {
		accel_tables(fib, family, tb, &has);
		ck_assert_msg(has == (tb >= 2), "table %u", tb);
	}
	ck_assert(accel_tables(fib, family, 100, &has) && !has);
	check_trie(fib);
	compare(fib, &m, family, &s, 370);
	for (unsigned i = 0; i < 400; i++) {
		uint8_t addr[16] = { 0 };

		lpm_random_addr(&s, &m, family, addr);
		lookup_one(fib, &m, family, addr, 1 + i % 8, 0);
	}

	/* a flush forgets the counts: the tables come back route by route,
	 * the main table's with its first route */
	fib_flush(fib, family);
	lpm_fini(&m);
	lpm_init(&m);
	ck_assert_uint_eq(accel_tables(fib, family, 100, &has), 0);
	grow_table(fib, &m, &s, family, 100, 40);
	ck_assert(accel_tables(fib, family, 100, &has) == 1 && has);
	compare(fib, &m, family, &s, 370);
	grow_table(fib, &m, &s, family, 254, 1);
	ck_assert(accel_tables(fib, family, 100, &has) == 2 && has);

	/* accel_table 0 is "none", not table 0 */
	p.accel_table = p.accel_table6 = 0;
	ck_assert_int_eq(fib_set_params(fib, &p), 0);
	grow_table(fib, &m, &s, family, 0, 3);
	ck_assert(accel_tables(fib, family, 0, &has) == 1 && !has);
	compare(fib, &m, family, &s, 370);
	check_trie(fib);
	compare(fib, &m, family, &s, 370);
	lpm_fini(&m);
	fib_free(fib);
}
END_TEST

/*
 * params accel_defer: fib_add and fib_set_params leave the builds to
 * fib_accel_sync (the trie answers meanwhile, right), retire at once,
 * and new parameters keep the tables that stay: one that becomes the
 * main table moves to [0] without a build.
 */
START_TEST(test_accel_defer)
{
	int family = _i ? AF_INET6 : AF_INET;
	struct fib_params p;
	struct fib *fib;
	struct lpm_model m;
	uint64_t s = 91 + (uint64_t)_i;
	bool has;

	fib_params_default(&p);
	p.accel_min_routes = 40;
	p.accel_defer = 1;
	fib = fib_new(&p);
	ck_assert_ptr_nonnull(fib);
	lpm_init(&m);
	/* the main table's comes with its first route, deferred too */
	grow_table(fib, &m, &s, family, 254, 200);
	ck_assert(fib_accel_pending(fib));
	ck_assert_uint_eq(accel_tables(fib, family, 254, &has), 0);
	compare(fib, &m, family, &s, 370);
	ck_assert_int_eq(fib_accel_sync(fib), 0);
	ck_assert(!fib_accel_pending(fib));
	ck_assert(accel_tables(fib, family, 254, &has) == 1 && has);
	grow_table(fib, &m, &s, family, 100, 40);
	ck_assert(fib_accel_pending(fib));
	ck_assert(accel_tables(fib, family, 100, &has) == 1 && !has);
	check_trie(fib);
	compare(fib, &m, family, &s, 370);
	ck_assert_int_eq(fib_accel_sync(fib), 0);
	ck_assert(!fib_accel_pending(fib));
	ck_assert(accel_tables(fib, family, 100, &has) == 2 && has);
	check_trie(fib);
	compare(fib, &m, family, &s, 370);

	/* below half: retired in the fib_del, nothing to build */
	shrink_table(fib, &m, 100, 19);
	ck_assert(!fib_accel_pending(fib));
	ck_assert(accel_tables(fib, family, 100, &has) == 1 && !has);

	/* a new main table: the old [0] retired now; the new one, and 254
	 * (200 routes, no longer main), pending */
	p.accel_table = p.accel_table6 = 100;
	ck_assert_int_eq(fib_set_params(fib, &p), 0);
	ck_assert(fib_accel_pending(fib));
	ck_assert_uint_eq(accel_tables(fib, family, 100, &has), 0);
	check_trie(fib);
	compare(fib, &m, family, &s, 370);
	ck_assert_int_eq(fib_accel_sync(fib), 0);
	ck_assert(accel_tables(fib, family, 100, &has) == 2 && has);
	check_trie(fib);

	/* main again, threshold 10: 254's extra moves to [0], 100 (19
	 * routes) gets an extra after the sync */
	p.accel_table = p.accel_table6 = 254;
	p.accel_min_routes = 10;
	ck_assert_int_eq(fib_set_params(fib, &p), 0);
	ck_assert(fib_accel_pending(fib));
	ck_assert(accel_tables(fib, family, 254, &has) == 1 && has);
	compare(fib, &m, family, &s, 370);
	ck_assert_int_eq(fib_accel_sync(fib), 0);
	ck_assert(accel_tables(fib, family, 100, &has) == 2 && has);
	ck_assert(accel_tables(fib, family, 254, &has) == 2 && has);
	check_trie(fib);
	compare(fib, &m, family, &s, 370);

	/* 100 becomes main: its extra table moves to [0], no build for it;
	 * 254's extra is pending */
	p.accel_table = p.accel_table6 = 100;
	ck_assert_int_eq(fib_set_params(fib, &p), 0);
	ck_assert(fib_accel_pending(fib));
	ck_assert(accel_tables(fib, family, 100, &has) == 1 && has);
	check_trie(fib);
	compare(fib, &m, family, &s, 370);
	ck_assert_int_eq(fib_accel_sync(fib), 0);
	ck_assert(accel_tables(fib, family, 254, &has) == 2 && has);
	check_trie(fib);

	/* pending when defer is turned off: built by fib_set_params */
	grow_table(fib, &m, &s, family, 7, 10);
	ck_assert(fib_accel_pending(fib));
	p.accel_defer = 0;
	ck_assert_int_eq(fib_set_params(fib, &p), 0);
	ck_assert(!fib_accel_pending(fib));
	ck_assert(accel_tables(fib, family, 7, &has) == 3 && has);
	check_trie(fib);
	compare(fib, &m, family, &s, 370);
	for (unsigned i = 0; i < 300; i++) {
		uint8_t addr[16] = { 0 };
		static const uint32_t tabs[] = { 7, 100, 254 };

		lpm_random_addr(&s, &m, family, addr);
		lookup_one(fib, &m, family, addr, tabs[i % 3], 0);
	}
	lpm_fini(&m);
	fib_free(fib);
}
END_TEST

/* Routes counted in 300 tables (the counts' hash grown and rebuilt after
 * the sorts of new parameters and a compaction): the tables that cross
 * the threshold get their compiled table. */
START_TEST(test_accel_many_tables)
{
	struct fib_params p;
	struct fib *fib;
	struct lpm_model m;
	uint64_t s = 123;
	bool has;

	fib_params_default(&p);
	p.accel_min_routes = 20;
	fib = fib_new(&p);
	ck_assert_ptr_nonnull(fib);
	lpm_init(&m);
	for (uint32_t tb = 1; tb <= 300; tb++)
		grow_table(fib, &m, &s, AF_INET, tb, 5);
	ck_assert_uint_eq(accel_tables(fib, AF_INET, 150, &has), 1);
	grow_table(fib, &m, &s, AF_INET, 150, 20);
	ck_assert(accel_tables(fib, AF_INET, 150, &has) == 2 && has);
	p.accel_min_routes = 19;
	ck_assert_int_eq(fib_set_params(fib, &p), 0);
	ck_assert(accel_tables(fib, AF_INET, 150, &has) == 2 && has);
	grow_table(fib, &m, &s, AF_INET, 299, 18);
	ck_assert(accel_tables(fib, AF_INET, 299, &has) == 2 && !has);
	grow_table(fib, &m, &s, AF_INET, 299, 19);
	ck_assert(accel_tables(fib, AF_INET, 299, &has) == 3 && has);
	ck_assert_int_eq(fib_compact(fib, AF_INET), 0);
	grow_table(fib, &m, &s, AF_INET, 7, 19);
	ck_assert(accel_tables(fib, AF_INET, 7, &has) == 4 && has);
	shrink_table(fib, &m, 150, 8);
	ck_assert(accel_tables(fib, AF_INET, 150, &has) == 3 && !has);
	check_trie(fib);
	compare(fib, &m, AF_INET, &s, 370);
	lpm_fini(&m);
	fib_free(fib);
}
END_TEST

/* A unicast route of table 254 (tos, if not 0, makes aliases before it). */
static void
pfx_route(struct lpm_route *r, int family, const char *pfx, unsigned plen, uint8_t tos)
{
	memset(r, 0, sizeof(*r));
	r->family = (uint8_t)family;
	ck_assert_int_eq(inet_pton(family, pfx, r->dst.b), 1);
	r->plen = (uint8_t)plen;
	r->table = 254;
	r->tos = tos;
	r->type = FIB_UNICAST;
}

static void
v6_route(struct lpm_route *r, const char *pfx, unsigned plen, uint8_t tos)
{
	pfx_route(r, AF_INET6, pfx, plen, tos);
}

static uint64_t
accel4_blocks(const struct fib *fib)
{
	struct fib_stats st;

	fib_stats(fib, &st);
	return st.v4.accel_blocks;
}

/*
 * The /18s that answer one route everywhere share one segment, counting
 * its sharers (fib/accel4_impl.h, a_one): a /14's 16 /18s, split by a
 * /24 in one of them and joined again when it goes, a /18 of its own at
 * the start, a neighbour /14 of another answer, then all withdrawn; the
 * checker (segments against a fresh build, sharers counted) and the
 * model after every step.
 */
START_TEST(test_accel_share)
{
	static const struct {
		const char *pfx;
		unsigned plen;
		int add;
	} steps[] = {
		{ "10.0.0.0", 14, 1 },  { "10.1.2.0", 24, 1 }, { "10.0.0.0", 18, 1 },
		{ "10.1.2.0", 24, 0 },  { "10.4.0.0", 14, 1 }, { "10.2.0.0", 15, 1 },
		{ "10.0.0.0", 14, 0 },  { "10.2.0.0", 15, 0 }, { "10.0.0.0", 18, 0 },
		{ "10.4.0.0", 14, 0 },
	};
	struct fib *fib = fib_new(NULL);
	struct lpm_model m;
	uint64_t seed = 3;

	ck_assert_ptr_nonnull(fib);
	lpm_init(&m);
	for (unsigned i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct lpm_route r;

		pfx_route(&r, AF_INET, steps[i].pfx, steps[i].plen, 0);
		if (steps[i].add) {
			model_apply_add(fib, &m, &r, 0);
		} else {
			long at = lpm_find(&m, &r);

			ck_assert_int_ge(at, 0);
			model_apply_del(fib, &m, (size_t)at);
		}
		check_trie(fib);
		compare(fib, &m, AF_INET, &seed, 64);
		/* the /14 alone: its 16 /18s in one segment */
		if (i == 0)
			ck_assert_uint_eq(accel4_blocks(fib), 1);
	}
	ck_assert_uint_eq(accel4_blocks(fib), 0);
	lpm_fini(&m);
	fib_free(fib);
}
END_TEST

/*
 * A second-level node whose words are all "ask the trie" (its own /24
 * and the /20 over it both have a fifth alias or later, which the
 * compiled table does not name) still holds a route: when the sub-block
 * below it goes, the node must stay, as a fresh build keeps it
 * (fib_check compares), although its words are one run.
 */
START_TEST(test_accel_ask_node)
{
	static const char *const pfx[] = { "2001:1000::", "2001:1100::" };
	static const unsigned plen[] = { 20, 24 };
	struct fib *fib = fib_new(NULL);
	struct lpm_model m;
	struct lpm_route r;

	ck_assert_ptr_nonnull(fib);
	lpm_init(&m);
	for (unsigned i = 0; i < 2; i++)
		for (uint8_t tos = 0; tos <= 16; tos += 4) {
			v6_route(&r, pfx[i], plen[i], tos);
			model_apply_add(fib, &m, &r, 0);
		}
	/* a second node in the /16's block, so that the block stays */
	v6_route(&r, "2001:8000::", 24, 0);
	model_apply_add(fib, &m, &r, 0);
	check_trie(fib);
	v6_route(&r, "2001:1100:10::", 48, 0);
	model_apply_add(fib, &m, &r, 0);
	check_trie(fib);
	model_apply_del(fib, &m, m.n - 1);
	check_trie(fib);
	v6_route(&r, "2001:1100:10::", 48, 0);
	model_apply_add(fib, &m, &r, 0);
	check_trie(fib);
	lpm_fini(&m);
	fib_free(fib);
}
END_TEST

/* Retired memory is freed in batches, after grace periods, and all of it. */
START_TEST(test_reclaim)
{
	struct fib_params p;
	struct fib *fib;
	struct lpm_model m;
	uint64_t s = 5;
	struct fib_stats st;
	const int n = (int)test_scaled(4000);

	fib_params_default(&p);
	p.sync_pages = 4;
	p.reclaim_mode = _i % 2 ? FIB_RECLAIM_SYNC : FIB_RECLAIM_CALL_RCU;
	/* runs 0, 1: the trie's objects alone; 2, 3: with the compiled
	 * table, whose blocks are retired and rebuilt on every change */
	if (_i < 2)
		p.accel_table = 0;
	fib = fib_new(&p);
	lpm_init(&m);
	for (int i = 0; i < n; i++) {
		struct lpm_route r;
		lpm_random_route(&s, AF_INET, &r);
		model_apply_add(fib, &m, &r, 0);
	}
	while (m.n)
		model_apply_del(fib, &m, m.n - 1);
	fib_reclaim_barrier(fib);
	fib_stats(fib, &st);
	ck_assert_uint_gt(st.reclaim.batches, 1);
	ck_assert_uint_gt(st.reclaim.bytes_retired, (uint64_t)n * 24);
	ck_assert_uint_eq(st.reclaim.bytes_freed, st.reclaim.bytes_retired);
	ck_assert_uint_eq(st.reclaim.bytes_pending, 0);
	ck_assert_uint_eq(st.reclaim.grace_periods, st.reclaim.batches);
	/* far fewer grace periods than retired objects, and every batch
	 * but the last holds sync_pages pages */
	if (_i < 2)
		ck_assert_uint_lt(st.reclaim.grace_periods, (uint64_t)n / 10);
	ck_assert_uint_ge(st.reclaim.bytes_retired / 4096 / 4 + 1, st.reclaim.batches);
	ck_assert_uint_le(st.reclaim.gp_ns_min, st.reclaim.gp_ns_max);
	ck_assert_uint_eq(st.infos, 0);
	lpm_fini(&m);
	fib_free(fib);
}
END_TEST

/* The widest node of family's trie, in bits. */
static unsigned
widest_node(const struct fib *fib, int family)
{
	struct fib_stats st;
	const struct fib_trie_stats *ts;
	unsigned w = 0;

	fib_stats(fib, &st);
	ts = family == AF_INET ? &st.v4 : &st.v6;
	for (unsigned b = 0; b <= FIB_STATS_MAX_BITS; b++)
		if (ts->nodes_by_bits[b])
			w = b;
	return w;
}

/*
 * The routes of test_wide_nodes, under one node of 2^16 slots (the top 16
 * bits in IPv4, bits 16-31 under 2001::/16 in IPv6): slot s holds one
 * route (/16, /32) if s is even, else the two halves (/17s, /33s), whose
 * node of one bit is a full child. n: 3 x 2^15 routes.
 */
static size_t
wide_routes(int family, struct lpm_route *r)
{
	size_t n = 0;

	for (unsigned s = 0; s < 1u << 16; s++)
		for (unsigned h = 0; h < 1u + (s & 1); h++, n++) {
			unsigned o = family == AF_INET ? 0 : 2;

			memset(&r[n], 0, sizeof(r[n]));
			r[n].family = (uint8_t)family;
			r[n].table = 254;
			r[n].type = FIB_UNICAST;
			r[n].plen = (uint8_t)(8 * o + 16 + (s & 1));
			r[n].dst.b[0] = 0x20;
			r[n].dst.b[1] = 0x01;
			r[n].dst.b[o] = (uint8_t)(s >> 8);
			r[n].dst.b[o + 1] = (uint8_t)s;
			r[n].dst.b[o + 2] = (uint8_t)(h << 7);
		}
	return n;
}

/*
 * Nodes wider than 15 bits keep their child counts after their children,
 * narrower ones in 16 bits of their header (fib/trie_types.h): the routes
 * of wide_routes added one by one, so that their node inflates past 15
 * bits, then deleted in a scattered order until it halves back below,
 * with the invariant checker (which recounts every node's empty and full
 * children) and lookups checked on the way. _i: the family.
 */
START_TEST(test_wide_nodes)
{
	int family = _i ? AF_INET6 : AF_INET;
	/* valgrind: the checker three times (widest, halfway back, end) */
	const unsigned step = test_short ? 49152 : 4096;
	struct lpm_route *rt = calloc(3u << 15, sizeof(*rt));
	struct fib *fib = fib_new(NULL);
	uint8_t *gone = calloc(3u << 15, 1);
	uint64_t seed = 17 + (uint64_t)_i;
	size_t n, left;
	struct lpm_model m;

	ck_assert_ptr_nonnull(fib);
	ck_assert_ptr_nonnull(gone);
	ck_assert_ptr_nonnull(rt);
	n = left = wide_routes(family, rt);
	lpm_init(&m);
	last_op = "wide: add";
	for (size_t i = 0; i < n; i++) {
		struct fib_route fr;
		struct fib_nh nh;

		lpm_add(&m, &rt[i]);
		lpm_to_fib(&rt[i], &fr, &nh);
		ck_assert_int_eq(fib_add(fib, &fr, 0), 0);
		if ((i + 1) % step == 0) {
			check_trie(fib);
			compare(fib, &m, family, &seed, 16);
		}
	}
	ck_assert_uint_gt(widest_node(fib, family), 15);
	/* 40505 is prime to n = 2^15 x 3: k -> 40505 k mod n visits each once */
	last_op = "wide: del";
	for (size_t k = 0; k < n - 64; k++) {
		size_t i = (40505 * k) % n;
		struct fib_route fr;
		struct fib_nh nh;

		lpm_to_fib(&rt[i], &fr, &nh);
		ck_assert_int_eq(fib_del(fib, &fr), 0);
		gone[i] = 1;
		left--;
		if ((k + 1) % step != 0 && k + 1 != n - 64)
			continue;
		check_trie(fib);
		fib_read_lock();
		for (unsigned j = 0; j < 256; j++) {
			size_t x = (size_t)(lpm_rand(&seed) % n);
			union fib_addr a = rt[x].dst;
			struct fib_result res;
			struct fib_match fm;

			/* no route covers another: x's own, or none */
			a.b[family == AF_INET ? 3 : 15] = 1;
			res = fib_lookup_rcu(fib, family, a.b, 254, 0);
			ck_assert_msg((fib_result_get(&res, &fm) == 0) == !gone[x],
				      "route %zu (%s) after %zu deletes", x,
				      gone[x] ? "deleted" : "kept", k + 1);
			if (!gone[x])
				ck_assert_uint_eq(fm.plen, rt[x].plen);
		}
		fib_read_unlock();
	}
	ck_assert_uint_eq(fib_count(fib, family), left);
	ck_assert_uint_le(widest_node(fib, family), 15);
	lpm_fini(&m);
	free(gone);
	free(rt);
	fib_free(fib);
}
END_TEST

static Suite *
fib_suite(void)
{
	Suite *s = suite_create("fib");
	TCase *tc = tcase_create("trie");

	ck_rcu_fixture(tc);
#ifdef FIB_NO_AVX512
	/* fib_novec_test: the IPv6 table's lookups without AVX-512, as a
	 * CPU without it runs them */
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_random6, 0, 4);
	tcase_add_loop_test(tc, test_dense6, 0, 4);
	tcase_add_loop_test(tc, test_big32, 0, 2);
	suite_add_tcase(s, tc);
	return s;
#endif
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_corner);
	tcase_add_loop_test(tc, test_ref_deep_alias, 0, 2);
	tcase_add_test(tc, test_params);
	tcase_add_loop_test(tc, test_accel_tables, 0, 2);
	tcase_add_loop_test(tc, test_accel_defer, 0, 2);
	tcase_add_test(tc, test_accel_many_tables);
	tcase_add_test(tc, test_load_dups);
	tcase_add_loop_test(tc, test_load_shape, 0, 4);
	tcase_add_test(tc, test_find);
	/* short: seeds 1-2 and 101-102 (compiled table on and off) */
	tcase_add_loop_test(tc, test_random4, 0, test_short ? 2 : 12);
	tcase_add_loop_test(tc, test_random6, 0, test_short ? 2 : 12);
	tcase_add_loop_test(tc, test_thresholds, 0, 5);
	tcase_add_loop_test(tc, test_load, 0, test_short ? 1 : 3);
	tcase_add_loop_test(tc, test_reclaim, 0, 4);
	suite_add_tcase(s, tc);
	/* the compiled table's corner cases, alone (CK_RUN_CASE=accel) */
	tc = tcase_create("accel");
	ck_rcu_fixture(tc);
	tcase_add_test(tc, test_accel_ask_node);
	tcase_add_test(tc, test_accel_share);
	tcase_add_loop_test(tc, test_dense4, 0, 4);
	tcase_add_loop_test(tc, test_dense6, 0, 4);
	tcase_add_loop_test(tc, test_big32, 0, 2);
	suite_add_tcase(s, tc);
	/* nodes past 16-bit child counts (CK_RUN_CASE=wide) */
	tc = tcase_create("wide");
	ck_rcu_fixture(tc);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_wide_nodes, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int ret;

	test_short = ck_short();
	fib_thread_online();
	ret = ck_run(fib_suite(), CK_NOFORK);
	fib_thread_offline();
	return ret;
}
