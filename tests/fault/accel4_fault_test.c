/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the run-bitmap IPv4 table under allocation failure, bounded
 *
 * tests/fault/fib_fault_test.c builds its copy of fib/ with the older
 * IPv4 table (FIB_ACCEL4_POPTRIE): replaying its long histories after
 * every absorbed failure of the run-bitmap table (fib/accel4_impl.h)
 * took over 20 minutes. This test gives the run-bitmap table's failure
 * paths a test of their own on a small table, in seconds: its own copy
 * of fib/ with FIB_FAULT_INJECTION and the default IPv4 table.
 *
 * Each operation runs on a fresh FIB (the small table loaded without
 * failures) with its kth pool allocation failing (fib_fail_after), k = 1,
 * 2, ... until it runs without reaching the failure; then the same with
 * the kth heap allocation (malloc, calloc, realloc, wrapped at link time:
 * the table's key-range collection). Allocations are counted by wrapping
 * pool_alloc, so "the failure was reached" is known. The operations reach
 * every allocation site of accel4_impl.h:
 *
 *   - fib_load into an empty FIB: the whole build (struct accel, the
 *     dir, the shared segments, every segment and deep node);
 *   - fib_add and fib_del of prefixes of /18 or shorter: the rebuild of
 *     the /18s they cover, one to 64 of them; of /19 to /24: the copy of
 *     their segment with the /24s they cover painted again;
 *   - fib_add and fib_del of prefixes longer than /24: deep nodes.
 *
 * After each attempt a failed call returned -ENOMEM and the FIB holds
 * the routes of before, a successful one those of after (a failure of
 * the table is absorbed: its /18 is left to the trie, or the whole table
 * when the build at load fails), fib_check finds trie and table
 * consistent, and every probe address (both ends of every prefix and
 * just outside them, 16 addresses of each /24 holding longer prefixes,
 * random ones near the routes) gets the naive longest match (computed
 * once per model: the attempts only look up) from
 * fib_lookup4_rcu, fib_lookup4_batch_rcu and fib_lookup4_ref_batch_rcu.
 * Each operation must have had failures absorbed by the table (a /18 or
 * the whole table left to the trie) and answered right, or the test has
 * missed the sites it is for.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fib/fib.h"
#include "tests/unit/lpm_model.h"
#include "tests/unit/ck_rcu.h"
#include "tests/unit/ck_run.h"

#ifndef FIB_FAULT_INJECTION
#error "build with -DFIB_FAULT_INJECTION (tests/fault/local.mk does)"
#endif
#ifdef FIB_ACCEL4_POPTRIE
#error "this test is for the run-bitmap IPv4 table (fib/accel4_impl.h)"
#endif

/* ------------------------------------------------ counting allocations */

struct pool;
void *__real_pool_alloc(struct pool *p, size_t size);
void *__wrap_pool_alloc(struct pool *p, size_t size);

static unsigned long pool_allocs;

void *
__wrap_pool_alloc(struct pool *p, size_t size)
{
	pool_allocs++;
	return __real_pool_alloc(p, size);
}

#include "tests/fault/malloc_wrap.h" /* malloc_armed, malloc_calls, malloc_fail_at */

/* ------------------------------------------------------- the table */

struct tbl {
	struct lpm_model m; /* table 254 and the others */
	struct fib_route *r;
	struct fib_nh *nh;
	size_t n;
};

static void
tbl_add(struct lpm_model *m, const char *pfx, uint32_t table, uint8_t tos)
{
	struct lpm_route r;

	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(fib_prefix_parse(pfx, &r.dst, &r.plen, &r.family), 0);
	r.table = table;
	r.tos = tos;
	r.type = FIB_UNICAST;
	r.prio = 0;
	if (lpm_find(m, &r) < 0)
		lpm_add(m, &r);
}

/*
 * A few hundred routes in 10/8, 172.16/12 and 192.168/16: short prefixes
 * over many /18s, /24s, longer prefixes in some of them (deep nodes), a
 * key whose table-254 route is its 5th alias (past what an answer word
 * names: the trie answers), and no default route (every /18 would need a
 * segment, 2^18 allocations to fail one by one).
 */
static void
tbl_make(struct tbl *t, uint64_t seed)
{
	static const char *const fixed[] = {
		"10.0.0.0/12",     "10.1.0.0/16",     "10.1.64.0/18",   "10.1.65.0/24",
		"10.1.65.128/25",  "10.1.65.200/30",  "10.1.65.7/32",   "10.1.66.0/23",
		"10.2.0.0/17",     "10.2.128.0/24",   "10.2.128.64/26", "172.16.0.0/12",
		"172.17.1.0/24",   "172.17.1.16/28",  "192.168.0.0/16", "192.168.3.0/24",
		"192.168.3.99/32", "10.9.0.0/16",
	};
	struct lpm_model *m = &t->m;

	lpm_init(m);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		tbl_add(m, fixed[i], 254, 0);
	/* other tables and tos ahead of 254 in the kernel's order */
	tbl_add(m, "10.1.65.0/24", 255, 0);
	tbl_add(m, "10.1.65.0/24", 100, 0);
	tbl_add(m, "10.1.65.0/24", 254, 0x10);
	for (uint32_t tb = 300; tb < 700; tb += 100)
		tbl_add(m, "10.9.0.0/16", tb, 0);
	for (unsigned i = 0; i < 150; i++) {
		static const uint8_t top[3][2] = { { 10, 0 }, { 172, 16 }, { 192, 168 } };
		unsigned w = (unsigned)(lpm_rand(&seed) % 3);
		unsigned plen = 16 + (unsigned)(lpm_rand(&seed) % 17);
		uint32_t a = (uint32_t)top[w][0] << 24 | (uint32_t)top[w][1] << 16;
		char buf[32];

		/* clustered: a few /16s, and in 10.1 a few /18s */
		a |= (uint32_t)(lpm_rand(&seed) % 4) << 16;
		a |= (uint32_t)(lpm_rand(&seed) & 0xffff);
		if (w == 0)
			a = (a & ~0x00ff0000u) | 0x00010000u |
			    (uint32_t)(lpm_rand(&seed) % 3) << 16;
		a &= plen == 32 ? ~0u : ~(~0u >> plen);
		snprintf(buf, sizeof(buf), "%u.%u.%u.%u/%u", a >> 24, (a >> 16) & 255,
			 (a >> 8) & 255, a & 255, plen);
		tbl_add(m, buf, 254, 0);
	}
	t->n = m->n;
	t->r = calloc(t->n, sizeof(*t->r));
	t->nh = calloc(t->n, sizeof(*t->nh));
	ck_assert_ptr_nonnull(t->r);
	ck_assert_ptr_nonnull(t->nh);
	for (size_t i = 0; i < t->n; i++) {
		lpm_to_fib(&m->r[i], &t->r[i], &t->nh[i]);
		t->r[i].nh = &t->nh[i];
	}
}

static void
tbl_free(struct tbl *t)
{
	lpm_fini(&t->m);
	free(t->r);
	free(t->nh);
}

/* ------------------------------------------------------- the checks */

static uint32_t
be_addr(const struct lpm_route *r)
{
	uint32_t be;

	memcpy(&be, r->dst.b, 4);
	return ntohl(be);
}

/* The probe addresses of model m (host order) into *out; returns n. */
static size_t
probes(const struct lpm_model *m, uint32_t **out)
{
	size_t cap = 64 * m->n + 4096, n = 0;
	uint32_t *a = malloc(cap * sizeof(*a));
	uint64_t seed = 99;

	ck_assert_ptr_nonnull(a);
	for (size_t i = 0; i < m->n; i++) {
		const struct lpm_route *r = &m->r[i];
		uint32_t lo = be_addr(r), hi = lo | (uint32_t)(0xffffffffull >> r->plen);

		if (n + 4 + 256 > cap)
			break;
		a[n++] = lo;
		a[n++] = hi;
		a[n++] = lo - 1;
		a[n++] = hi + 1;
		if (r->plen > 24)
			for (unsigned x = 0; x < 256; x += 16)
				a[n++] = (lo & ~255u) | x | (i & 15);
	}
	for (unsigned i = 0; i < 512 && n < cap; i++) {
		uint8_t b[16] = { 0 };
		uint32_t be;

		lpm_random_addr(&seed, m, AF_INET, b);
		memcpy(&be, b, 4);
		a[n++] = ntohl(be);
	}
	*out = a;
	return n;
}

/* The probes of a model and their naive answers. */
struct expect {
	uint32_t *a;
	const struct lpm_route **want;
	size_t n;
};

static void
expect_make(struct expect *e, const struct lpm_model *m)
{
	e->n = probes(m, &e->a);
	e->want = calloc(e->n, sizeof(*e->want));
	ck_assert_ptr_nonnull(e->want);
	for (size_t i = 0; i < e->n; i++) {
		uint32_t be = htonl(e->a[i]);

		e->want[i] = lpm_lookup(m, AF_INET, (const uint8_t *)&be, 254, 0);
	}
}

static void
expect_free(struct expect *e)
{
	free(e->a);
	free(e->want);
}

/* (Check asserts only on failure: in one process every ck_assert writes
 * its place to the runner's pipe, most of the time of this test.) */
static void
same_answer(const struct lpm_route *want, uint32_t addr, const struct fib_result *res,
	    const char *how, const char *what)
{
	uint32_t be = htonl(addr);
	struct fib_match fm;
	char buf[INET_ADDRSTRLEN];

	if (!want ? res->alias == NULL
		  : fib_result_get(res, &fm) == 0 && lpm_same(want, &fm))
		return;
	inet_ntop(AF_INET, &be, buf, sizeof(buf));
	if (!want)
		ck_abort_msg("%s: %s %s: a route, the model has none", what, how, buf);
	if (!res->alias)
		ck_abort_msg("%s: %s %s: no route, model /%u", what, how, buf, want->plen);
	ck_abort_msg("%s: %s %s: /%u, model /%u", what, how, buf, fm.plen, want->plen);
}

/* Every probe answered by all three lookups as the naive match. */
static void
same_lookups(const struct fib *fib, const struct expect *e, const char *what)
{
	char msg[256] = "";

	if (fib_check(fib, msg, sizeof(msg)) != 0)
		ck_abort_msg("%s: %s", what, msg);
	for (size_t i = 0; i < e->n; i += 64) {
		size_t k = e->n - i < 64 ? e->n - i : 64;
		struct fib_result res[64], one;
		uint32_t ref[64];

		fib_read_lock();
		fib_lookup4_batch_rcu(fib, 254, &e->a[i], res, k);
		fib_lookup4_ref_batch_rcu(fib, 254, &e->a[i], ref, k);
		for (size_t j = 0; j < k; j++) {
			one = fib_lookup4_rcu(fib, 254, e->a[i + j]);
			same_answer(e->want[i + j], e->a[i + j], &one, "single", what);
			same_answer(e->want[i + j], e->a[i + j], &res[j], "batch", what);
			(void)fib_ref_get_rcu(fib, AF_INET, ref[j], &one);
			same_answer(e->want[i + j], e->a[i + j], &one, "ref", what);
		}
		fib_read_unlock();
	}
}

/* ------------------------------------------------------- the attempts */

enum op_kind { OP_LOAD, OP_ADD, OP_DEL };

struct op {
	enum op_kind kind;
	const char *pfx; /* OP_ADD, OP_DEL: a table-254 route */
};

static struct fib *
fib_fresh(void)
{
	struct fib_params p;
	struct fib *fib;

	fib_params_default(&p);
	p.reclaim_mode = FIB_RECLAIM_SYNC;
	fib = fib_new(&p);
	ck_assert_ptr_nonnull(fib);
	return fib;
}

static int
op_run(struct fib *fib, const struct tbl *t, const struct op *op, const struct lpm_route *lr)
{
	struct fib_route fr;
	struct fib_nh nh;

	if (op->kind == OP_LOAD)
		return fib_load(fib, t->r, t->n);
	lpm_to_fib(lr, &fr, &nh);
	return op->kind == OP_ADD ? fib_add(fib, &fr, 0) : fib_del(fib, &fr);
}

/*
 * Every failure of one kind (heap or pool) during op, each on a fresh FIB
 * holding t (empty for OP_LOAD). Returns the attempts whose failure the
 * compiled table absorbed (the call succeeded with a /18 or the whole
 * table left to the trie).
 */
static unsigned
fault_op(const struct tbl *t, const struct op *op, int heap)
{
	struct lpm_model before, after;
	struct expect eb, ea;
	struct lpm_route lr;
	unsigned absorbed = 0, nomem = 0;
	unsigned long k;
	char what[96];

	/* the models before and after */
	lpm_init(&before);
	if (op->kind != OP_LOAD)
		for (size_t i = 0; i < t->m.n; i++)
			lpm_add(&before, &t->m.r[i]);
	lpm_init(&after);
	for (size_t i = 0; i < t->m.n; i++)
		lpm_add(&after, &t->m.r[i]);
	memset(&lr, 0, sizeof(lr));
	if (op->kind != OP_LOAD) {
		long at;

		ck_assert_int_eq(fib_prefix_parse(op->pfx, &lr.dst, &lr.plen, &lr.family), 0);
		lr.table = 254;
		lr.type = FIB_UNICAST;
		at = lpm_find(&after, &lr);
		if (op->kind == OP_ADD) {
			ck_assert_int_lt(at, 0);
			lpm_add(&after, &lr);
		} else {
			ck_assert_int_ge(at, 0);
			lpm_del(&after, (size_t)at);
		}
	}
	expect_make(&eb, &before);
	expect_make(&ea, &after);
	for (k = 1;; k++) {
		struct fib *fib = fib_fresh();
		struct fib_stats st;
		unsigned long count;
		int err;

		if (op->kind != OP_LOAD && fib_load(fib, t->r, t->n) != 0)
			ck_abort_msg("load of the table failed");
		pool_allocs = 0;
		malloc_calls = 0;
		if (heap) {
			malloc_fail_at = k;
			malloc_armed = 1;
		} else {
			fib_fail_after(fib, (long)k);
		}
		err = op_run(fib, t, op, &lr);
		malloc_armed = 0;
		fib_fail_after(fib, 0);
		count = heap ? malloc_calls : pool_allocs;
		snprintf(what, sizeof(what), "%s %s, %s allocation %lu failing",
			 op->kind == OP_LOAD ? "load" : op->kind == OP_ADD ? "add" : "del",
			 op->pfx ? op->pfx : "", heap ? "heap" : "pool", k);
		if (count < k) {
			/* not reached: the op ran whole */
			if (err != 0)
				ck_abort_msg("%s: %d without a failure", what, err);
			same_lookups(fib, &ea, what);
			fib_free(fib);
			break;
		}
		if (err != 0 && err != -ENOMEM)
			ck_abort_msg("%s: returned %d", what, err);
		same_lookups(fib, err ? &eb : &ea, what);
		fib_stats(fib, &st);
		if (!err && (st.v4.accel_asks || !st.v4.accel_bytes))
			absorbed++;
		nomem += err != 0;
		fib_free(fib);
	}
	printf("%-4s %-16s %s: %4lu allocations failed, %4u -ENOMEM, %4u absorbed by the table\n",
	       op->kind == OP_LOAD ? "load" : op->kind == OP_ADD ? "add" : "del",
	       op->pfx ? op->pfx : "", heap ? "heap" : "pool", k - 1, nomem, absorbed);
	expect_free(&eb);
	expect_free(&ea);
	lpm_fini(&before);
	lpm_fini(&after);
	return absorbed;
}

static void
fault_both(const struct op *op)
{
	struct tbl t;
	unsigned absorbed;

	tbl_make(&t, 7);
	absorbed = fault_op(&t, op, 0) + fault_op(&t, op, 1);
	ck_assert_msg(absorbed > 0, "%s %s: no failure reached the compiled table",
		      op->kind == OP_LOAD ? "load" : op->kind == OP_ADD ? "add" : "del",
		      op->pfx ? op->pfx : "");
	tbl_free(&t);
}

/* The whole build at load: the table's own structures and every segment. */
START_TEST(test_load)
{
	static const struct op op = { OP_LOAD, NULL };

	fault_both(&op);
}
END_TEST

/* Per-change rebuilds of /24 or shorter: one /18, four, and 64. */
static const struct op change_ops[] = {
	{ OP_ADD, "10.1.70.0/24" }, { OP_ADD, "10.5.0.0/16" },  { OP_DEL, "10.1.64.0/18" },
	{ OP_DEL, "10.0.0.0/12" },   { OP_ADD, "172.17.0.0/18" },
};

START_TEST(test_change)
{
	fault_both(&change_ops[_i]);
}
END_TEST

/* Longer than /24: a new deep node, one rebuilt, one dropped. */
static const struct op deep_ops[] = {
	{ OP_ADD, "10.1.65.64/27" },
	{ OP_ADD, "10.2.200.8/29" },
	{ OP_DEL, "10.1.65.128/25" },
	{ OP_DEL, "172.17.1.16/28" },
};

START_TEST(test_deep)
{
	fault_both(&deep_ops[_i]);
}
END_TEST

static Suite *
accel4_fault_suite(void)
{
	Suite *s = suite_create("accel4_fault");
	TCase *tc = tcase_create("accel4");

	ck_rcu_fixture(tc);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_load);
	tcase_add_loop_test(tc, test_change, 0, (int)(sizeof(change_ops) / sizeof(change_ops[0])));
	tcase_add_loop_test(tc, test_deep, 0, (int)(sizeof(deep_ops) / sizeof(deep_ops[0])));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int ret;

	fib_thread_online();
	ret = ck_run(accel4_fault_suite(), CK_NOFORK);
	fib_thread_offline();
	return ret;
}
