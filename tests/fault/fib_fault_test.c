/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: libfib under allocation failure
 *
 * Every update of libfib is run again and again with its kth pool
 * allocation failing, k = 1, 2, 3, ... until it runs without reaching the
 * failure (fib_fail_after, the hook of --enable-fault-injection builds;
 * this test compiles its own copy of fib/ with it); then the same with the
 * kth heap allocation (malloc, calloc, realloc, wrapped at link time)
 * failing. After each attempt:
 *
 *   - a failed call returned -ENOMEM, and the failure was reached;
 *   - after a failure the FIB is what it was before (fib_walk text equal,
 *     the generation may move: it moves around every call), after a success what a FIB that never saw a
 *     failure holds: a failed optional allocation (a resize, the root
 *     fallbacks) may be absorbed, a needed one may not;
 *   - a failed call leaks no pool object: live pool bytes (counted by
 *     wrapping pool_alloc and pool_free) minus those retired and pending
 *     are where they were;
 *   - fib_check finds the trie consistent;
 *   - single and batch lookups of addresses in and around the routes
 *     answer as the reference FIB does.
 *
 * The references are two FIBs that get every operation without failures:
 * one already after it, one still before. Allocations are counted by
 * wrapping pool_alloc at link time (-Wl,--wrap=pool_alloc), so "the
 * failure was reached" is known, not guessed. After the last attempt of a
 * kind the FIB under test is rebuilt (the history replayed) to the before
 * state, so every attempt starts from the same trie shape.
 *
 * Operations: fib_add of a new key, of another route to an existing key,
 * FIB_ADD_REPLACE, FIB_ADD_APPEND, fib_del (last route of a key and one of
 * several), fib_load into an empty family, of both families at once, and
 * into a non-empty FIB, and a churn of adds and deletes on a trie of
 * thousands of routes, so that inflates, halves and root rebuilds happen.
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

/* ------------------------------------------------ counting allocations */

struct pool;
void *__real_pool_alloc(struct pool *p, size_t size);
void *__wrap_pool_alloc(struct pool *p, size_t size);
void __real_pool_free(struct pool *p, void *obj, size_t size);
void __wrap_pool_free(struct pool *p, void *obj, size_t size);

static unsigned long pool_allocs;
/* Bytes of pool objects alive in all FIBs: a failed call that leaves it
 * higher (after reclamation) leaked. Freed by the call_rcu thread too. */
static long pool_live;

void *
__wrap_pool_alloc(struct pool *p, size_t size)
{
	void *obj = __real_pool_alloc(p, size);

	pool_allocs++;
	if (obj)
		__atomic_add_fetch(&pool_live, (long)size, __ATOMIC_RELAXED);
	return obj;
}

void
__wrap_pool_free(struct pool *p, void *obj, size_t size)
{
	if (obj)
		__atomic_sub_fetch(&pool_live, (long)size, __ATOMIC_RELAXED);
	__real_pool_free(p, obj, size);
}

/*
 * Pool bytes in use by the trie and attribute sets: alive minus retired
 * and not yet freed. With synchronous reclamation nothing is freed behind
 * the writer's back, so a call that changed nothing leaves it where it
 * was. (Settling with grace periods instead costs milliseconds a call.)
 */
static long
pool_used(const struct fib *fib)
{
	struct fib_stats st;

	fib_stats(fib, &st);
	return __atomic_load_n(&pool_live, __ATOMIC_RELAXED) - (long)st.reclaim.bytes_pending;
}

/*
 * The heap allocations of fib/ (work arrays of resizes and bulk loads, the
 * root fallback build, hash table growth, reclamation batches) do not go
 * through the pool hook: while armed, the kth malloc, calloc or realloc
 * called from the objects of this program fails.
 */
#include "tests/fault/malloc_wrap.h" /* malloc_armed, malloc_calls, malloc_fail_at */

/* ------------------------------------------------------- FIB snapshots */

struct text {
	char *s;
	size_t len, cap;
};

static void
text_add(struct text *t, const char *s)
{
	size_t n = strlen(s);

	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		t->s = realloc(t->s, t->cap);
		ck_assert_ptr_nonnull(t->s);
	}
	memcpy(t->s + t->len, s, n + 1);
	t->len += n;
}

static void
match_text(const struct fib_match *m, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	const struct fib_info *fi = m->info;
	int o;

	inet_ntop(m->family, m->prefix.b, a, sizeof(a));
	o = snprintf(buf, len, "%s/%u %s tos %u table %u prio %u proto %u scope %u nh_id %u",
		     a, m->plen, fib_type_name(m->type), m->tos, m->table, fi->priority,
		     fi->protocol, fi->scope, fi->nh_id);
	for (unsigned i = 0; i < fi->nh_count && o > 0 && (size_t)o < len; i++)
		o += snprintf(buf + o, len - (size_t)o, " [if %u w %u f %u gw%u]", fi->nh[i].ifindex,
			      fi->nh[i].weight, fi->nh[i].flags, fi->nh[i].gw_family);
}

static int
walk_cb(const struct fib_match *m, void *arg)
{
	char buf[512];

	match_text(m, buf, sizeof(buf) - 1);
	strcat(buf, "\n");
	text_add(arg, buf);
	return 0;
}

/* Every route in key order, both families, as text. Caller frees. */
static char *
fib_text(const struct fib *fib)
{
	struct text t = { NULL, 0, 0 };

	text_add(&t, "");
	ck_assert_int_eq(fib_walk(fib, AF_UNSPEC, walk_cb, &t), 0);
	return t.s;
}

/* ---------------------------------------------------------- operations */

enum op_kind { OP_ADD, OP_DEL, OP_LOAD };

struct op {
	enum op_kind kind;
	unsigned flags; /* OP_ADD */
	const struct fib_route *r;
	size_t n; /* OP_LOAD */
};

static int
op_run(struct fib *fib, const struct op *op)
{
	switch (op->kind) {
	case OP_ADD:
		return fib_add(fib, op->r, op->flags);
	case OP_DEL:
		return fib_del(fib, op->r);
	case OP_LOAD:
		return fib_load(fib, op->r, op->n);
	}
	return -EINVAL;
}

/* ------------------------------------------------------------- checks */

struct ctx {
	const char *what; /* operation, for messages */
	unsigned long k;  /* failing allocation */
	struct fib *fib, *before, *after;
	struct lpm_model addrs; /* every route ever used: where to look */
	uint64_t seed;
	/* results */
	unsigned long attempts, failed, absorbed, rebuilds, max_allocs, max_heap;
	struct fib_params params;
	struct op *hist; /* every operation so far, to rebuild the FIB */
	size_t nhist, histcap;
};

static void
same_text(const struct ctx *c, const struct fib *want, const char *state)
{
	char *a = fib_text(c->fib), *b = fib_text(want);

	if (strcmp(a, b) != 0) {
		/* first differing line, for the message */
		const char *p = a, *q = b;
		while (*p && *p == *q)
			p++, q++;
		while (p > a && p[-1] != '\n')
			p--, q--;
		ck_abort_msg("%s, allocation %lu failing: FIB differs from the %s state at\n"
			     "  got:  %.120s\n  want: %.120s",
			     c->what, c->k, state, p, q);
	}
	free(a);
	free(b);
}

static void
result_text(const struct fib_result *res, char *buf, size_t len)
{
	struct fib_match m;

	if (fib_result_get(res, &m) != 0)
		snprintf(buf, len, "-");
	else
		match_text(&m, buf, len);
}

static void
same_lookups(struct ctx *c, const struct fib *want, unsigned n)
{
	enum { B = 29 };

	for (int fam = AF_INET; fam; fam = fam == AF_INET ? AF_INET6 : 0) {
		uint8_t addr[B][16];
		uint32_t a4[B];
		struct fib_result r1[B], r2[B];
		char x[512], y[512], as[INET6_ADDRSTRLEN];

		for (unsigned done = 0; done < n; done += B) {
			for (unsigned i = 0; i < B; i++) {
				uint32_t be;
				memset(addr[i], 0, 16);
				lpm_random_addr(&c->seed, &c->addrs, fam, addr[i]);
				memcpy(&be, addr[i], 4);
				a4[i] = ntohl(be);
			}
			fib_read_lock();
			for (unsigned i = 0; i < B; i++) {
				static const uint32_t tables[] = { 254, 100 };
				for (unsigned t = 0; t < 2; t++) {
					struct fib_result g = fib_lookup_rcu(c->fib, fam, addr[i], tables[t], 0);
					struct fib_result w = fib_lookup_rcu(want, fam, addr[i], tables[t], 0);
					result_text(&g, x, sizeof(x));
					result_text(&w, y, sizeof(y));
					inet_ntop(fam, addr[i], as, sizeof(as));
					ck_assert_msg(strcmp(x, y) == 0,
						      "%s, allocation %lu failing: lookup %s table %u\n"
						      "  got:  %s\n  want: %s",
						      c->what, c->k, as, tables[t], x, y);
				}
			}
			if (fam == AF_INET) {
				fib_lookup4_batch_rcu(c->fib, 254, a4, r1, B);
				fib_lookup4_batch_rcu(want, 254, a4, r2, B);
			} else {
				fib_lookup6_batch_rcu(c->fib, 254, (const uint8_t(*)[16])addr, r1, B);
				fib_lookup6_batch_rcu(want, 254, (const uint8_t(*)[16])addr, r2, B);
			}
			for (unsigned i = 0; i < B; i++) {
				result_text(&r1[i], x, sizeof(x));
				result_text(&r2[i], y, sizeof(y));
				inet_ntop(fam, addr[i], as, sizeof(as));
				ck_assert_msg(strcmp(x, y) == 0,
					      "%s, allocation %lu failing: batch lookup %s\n"
					      "  got:  %s\n  want: %s",
					      c->what, c->k, as, x, y);
			}
			fib_read_unlock();
		}
	}
}

static void
consistent(const struct ctx *c)
{
	char msg[256] = "";

	ck_assert_msg(fib_check(c->fib, msg, sizeof(msg)) == 0,
		      "%s, allocation %lu failing: fib_check: %s", c->what, c->k, msg);
}

/* Replay the history on a new FIB under test: the before state again,
 * after an attempt changed it. */
static void
ctx_rebuild(struct ctx *c)
{
	fib_free(c->fib);
	c->fib = fib_new(&c->params);
	ck_assert_ptr_nonnull(c->fib);
	for (size_t i = 0; i < c->nhist; i++)
		op_run(c->fib, &c->hist[i]);
	c->rebuilds++;
}

static void
ctx_record(struct ctx *c, const struct op *op)
{
	if (c->nhist == c->histcap) {
		c->histcap = c->histcap ? 2 * c->histcap : 256;
		c->hist = realloc(c->hist, c->histcap * sizeof(*c->hist));
		ck_assert_ptr_nonnull(c->hist);
	}
	c->hist[c->nhist++] = *op;
}

/* Apply op to all three FIBs, without failures; returns its result. */
static int
ctx_apply(struct ctx *c, const struct op *op)
{
	int e = op_run(c->fib, op);

	ck_assert_int_eq(op_run(c->before, op), e);
	ck_assert_int_eq(op_run(c->after, op), e);
	ctx_record(c, op);
	return e;
}

/*
 * Run op with allocation k = 1, 2, ... failing until it gets through
 * without reaching the failure. A failure must leave the FIB as it was; a
 * success after a failed (optional) allocation must give the same routes
 * as a clean run, and the FIB is then rebuilt to the before state so that
 * the later allocations get their turn too. The reference FIBs get op
 * once, cleanly. Returns the result of the clean run (which may be a
 * refusal such as -EEXIST or -ENOENT).
 */
/* Run op on the FIB under test with allocation k of one kind failing;
 * returns its result, *hit whether the failure was reached. */
static int
attempt(struct ctx *c, const struct op *op, int heap, int *hit, unsigned long *count)
{
	int err;

	pool_allocs = 0;
	malloc_calls = 0;
	if (heap) {
		malloc_fail_at = c->k;
		malloc_armed = 1;
	} else {
		fib_fail_after(c->fib, (long)c->k);
	}
	err = op_run(c->fib, op);
	malloc_armed = 0;
	fib_fail_after(c->fib, 0);
	*count = heap ? malloc_calls : pool_allocs;
	*hit = *count >= c->k;
	return err;
}

static int
fault_op(struct ctx *c, const char *what, const struct op *op, unsigned lookups)
{
	char *before = fib_text(c->fib), *after;
	unsigned long heap_n;
	int want;

	/* the clean run, counting heap allocations (none fails: k = 0) */
	malloc_calls = 0;
	malloc_fail_at = 0;
	malloc_armed = 1;
	want = op_run(c->after, op);
	malloc_armed = 0;
	heap_n = malloc_calls;
	after = fib_text(c->after);

	c->what = what;
	/* pool allocations (fib_fail_after), then heap ones if there are any */
	for (int heap = 0; heap < (heap_n ? 2 : 1); heap++) {
		if (heap)
			ctx_rebuild(c); /* the pool pass ended in the after state */
		for (c->k = 1;; c->k++) {
			unsigned long count;
			long used = pool_used(c->fib);
			int hit, err = attempt(c, op, heap, &hit, &count);
			char *now;

			c->attempts++;
			consistent(c);
			now = fib_text(c->fib);
			if (err == -ENOMEM) {
				ck_assert_msg(hit, "%s: -ENOMEM with %s allocation %lu of %lu failing",
					      what, heap ? "heap" : "pool", c->k, count);
				c->failed++;
				if (strcmp(now, before) != 0)
					same_text(c, c->before, heap ? "previous (heap failure)" : "previous");
				ck_assert_msg(c->params.reclaim_mode != FIB_RECLAIM_SYNC ||
						      pool_used(c->fib) == used,
					      "%s, %s allocation %lu failing: the failed call leaked %ld "
					      "bytes of pool objects",
					      what, heap ? "heap" : "pool", c->k, pool_used(c->fib) - used);
				free(now);
				same_lookups(c, c->before, lookups);
				continue;
			}
			ck_assert_msg(err == want,
				      "%s, %s allocation %lu failing: returned %d, clean run %d", what,
				      heap ? "heap" : "pool", c->k, err, want);
			if (strcmp(now, after) != 0)
				same_text(c, c->after, heap ? "expected (heap failure)" : "expected");
			free(now);
			same_lookups(c, c->after, lookups);
			if (!hit) {
				unsigned long *max = heap ? &c->max_heap : &c->max_allocs;
				if (count > *max)
					*max = count;
				break;
			}
			c->absorbed++;
			ctx_rebuild(c);
		}
	}
	ck_assert_int_eq(op_run(c->before, op), want);
	ctx_record(c, op);
	free(before);
	free(after);
	return want;
}

/* ------------------------------------------------------------- fixtures */

static void
ctx_init(struct ctx *c, uint64_t seed)
{
	memset(c, 0, sizeof(*c));
	/* Synchronous reclamation: freeing a FIB (each rebuild does) then
	 * needs no rcu_barrier, which waits for the call_rcu thread. */
	fib_params_default(&c->params);
	c->params.reclaim_mode = getenv("FIB_FAULT_CALL_RCU") ? FIB_RECLAIM_CALL_RCU
							      : FIB_RECLAIM_SYNC;
	/* add and del with odd seeds: both families compiled for table 254
	 * (accel_impl.h) and for table 100 (by its size, about 1 route in
	 * 8), whose blocks and scratch are allocations too, and whose
	 * failures must not show; the rest: the trie alone (the history
	 * replays of the long cases would take minutes). */
	c->params.accel_table = c->params.accel_table6 =
		seed % 2 && seed >= 0x1000 && seed < 0x4000 ? 254 : 0;
	c->params.accel_min_routes = c->params.accel_table ? 8 : 0;
	c->fib = fib_new(&c->params);
	c->before = fib_new(&c->params);
	c->after = fib_new(&c->params);
	ck_assert(c->fib && c->before && c->after);
	lpm_init(&c->addrs);
	c->seed = seed;
}

static void
ctx_fini(struct ctx *c, const char *name)
{
	printf("%-20s %5lu attempts, %5lu -ENOMEM, %4lu absorbed; an operation makes up to "
	       "%3lu pool and %2lu heap allocations\n",
	       name, c->attempts, c->failed, c->absorbed, c->max_allocs, c->max_heap);
	fib_free(c->fib);
	fib_free(c->before);
	fib_free(c->after);
	free(c->hist);
	lpm_fini(&c->addrs);
}

/* Routes: lpm random ones with a next hop set chosen by salt. */
struct rset {
	struct lpm_route *lr;
	struct fib_route *fr;
	struct fib_nh *nh;
	size_t n;
};

static void
rset_make(struct rset *s, uint64_t *seed, int family, size_t n, struct lpm_model *addrs)
{
	s->n = n;
	s->lr = calloc(n, sizeof(*s->lr));
	s->fr = calloc(n, sizeof(*s->fr));
	s->nh = calloc(n, sizeof(*s->nh));
	ck_assert(s->lr && s->fr && s->nh);
	for (size_t i = 0; i < n; i++) {
		lpm_random_route(seed, family ? family : (i % 3 ? AF_INET : AF_INET6), &s->lr[i]);
		lpm_to_fib(&s->lr[i], &s->fr[i], &s->nh[i]);
		lpm_add(addrs, &s->lr[i]);
	}
}

static void
rset_free(struct rset *s)
{
	free(s->lr);
	free(s->fr);
	free(s->nh);
}

/* Build the same FIB three times, without failures. */
static void
ctx_load(struct ctx *c, const struct rset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		int e = ctx_apply(c, &(struct op){ OP_ADD, 0, &s->fr[i], 1 });
		ck_assert(e == 0 || e == -EEXIST);
	}
}

/* A route to an existing key with other attributes. */
static void
variant(const struct fib_route *r, struct fib_route *v, struct fib_nh *nh, uint32_t prio,
	unsigned ifindex)
{
	*v = *r;
	memset(nh, 0, sizeof(*nh));
	nh->ifindex = ifindex;
	nh->weight = 1;
	v->type = FIB_UNICAST;
	v->nh = nh;
	v->nh_count = 1;
	v->priority = prio;
}

/* ---------------------------------------------------------------- tests */

/* fib_add of new keys, in both families, on a trie of a few hundred. */
START_TEST(test_add_new)
{
	struct ctx c;
	struct rset base, add;
	char what[64];

	ctx_init(&c, 0x1000 + (uint64_t)_i);
	rset_make(&base, &c.seed, 0, 300, &c.addrs);
	rset_make(&add, &c.seed, 0, 120, &c.addrs);
	ctx_load(&c, &base);
	for (size_t i = 0; i < add.n; i++) {
		snprintf(what, sizeof(what), "fib_add new #%zu", i);
		fault_op(&c, what, &(struct op){ OP_ADD, 0, &add.fr[i], 1 }, 60);
	}
	ctx_fini(&c, "add new key");
	rset_free(&base);
	rset_free(&add);
}
END_TEST

/* fib_add to existing keys: plain (another priority), REPLACE and APPEND,
 * with new next hops so that new attribute sets are interned too. */
START_TEST(test_add_existing)
{
	static const struct {
		unsigned flags;
		const char *name;
	} modes[] = {
		{ 0, "fib_add existing key" },
		{ FIB_ADD_REPLACE, "fib_add REPLACE" },
		{ FIB_ADD_APPEND, "fib_add APPEND" },
		{ FIB_ADD_EXCL, "fib_add EXCL" },
	};
	struct ctx c;
	struct rset base;
	char what[64];

	enum { NV = 160 };
	struct fib_route *v = calloc(NV, sizeof(*v));
	struct fib_nh *nh = calloc(NV, sizeof(*nh));

	ck_assert(v && nh);
	ctx_init(&c, 0x2000 + (uint64_t)_i);
	rset_make(&base, &c.seed, 0, 400, &c.addrs);
	ctx_load(&c, &base);
	for (size_t i = 0; i < NV; i++) {
		const struct fib_route *r = &base.fr[(i * 7) % base.n];
		unsigned m = (unsigned)(i % 4);

		/* APPEND and REPLACE act on equal table, tos and priority */
		variant(r, &v[i], &nh[i], m == 0 ? r->priority + 1000 + (uint32_t)i : r->priority,
			(unsigned)(50 + i));
		snprintf(what, sizeof(what), "%s #%zu", modes[m].name, i);
		fault_op(&c, what, &(struct op){ OP_ADD, modes[m].flags, &v[i], 1 }, 40);
	}
	ctx_fini(&c, "add to existing key");
	rset_free(&base);
	free(v);
	free(nh);
}
END_TEST

/* fib_del: the only route of a key (leaf goes, nodes halve and collapse)
 * and one of several (a smaller leaf is allocated). */
START_TEST(test_del)
{
	struct ctx c;
	struct rset base;
	char what[64];

	struct fib_route *v = calloc(200, sizeof(*v));
	struct fib_nh *nh = calloc(200, sizeof(*nh));

	ck_assert(v && nh);
	ctx_init(&c, 0x3000 + (uint64_t)_i);
	rset_make(&base, &c.seed, 0, 400, &c.addrs);
	ctx_load(&c, &base);
	/* give some keys a second and third route */
	for (size_t i = 0; i < base.n; i += 5) {
		for (uint32_t p = 1; p <= 2; p++) {
			size_t j = 2 * (i / 5) + p - 1;
			variant(&base.fr[i], &v[j], &nh[j], base.fr[i].priority + 100 * p, 7);
			int e = ctx_apply(&c, &(struct op){ OP_ADD, FIB_ADD_APPEND, &v[j], 1 });
			ck_assert(e == 0 || e == -EEXIST); /* a key twice in base */
		}
	}
	for (size_t i = 0; i < base.n; i++) {
		snprintf(what, sizeof(what), "fib_del #%zu", i);
		fault_op(&c, what, &(struct op){ OP_DEL, 0, &base.fr[i], 1 }, 30);
	}
	ctx_fini(&c, "del");
	rset_free(&base);
	free(v);
	free(nh);
}
END_TEST

/* fib_load of one family into an empty FIB: every allocation of the
 * off-line build fails in turn. */
START_TEST(test_load_one_family)
{
	struct ctx c;
	struct rset s;
	int fam = _i ? AF_INET6 : AF_INET;

	ctx_init(&c, 0x4000 + (uint64_t)_i);
	rset_make(&s, &c.seed, fam, 250, &c.addrs);
	fault_op(&c, fam == AF_INET ? "fib_load IPv4" : "fib_load IPv6",
		 &(struct op){ OP_LOAD, 0, s.fr, s.n }, 60);
	ctx_fini(&c, fam == AF_INET ? "load IPv4" : "load IPv6");
	rset_free(&s);
}
END_TEST

/* fib_load of both families at once: IPv4 is built first, so an IPv6
 * failure must not leave the IPv4 routes behind. */
START_TEST(test_load_both_families)
{
	struct ctx c;
	struct rset s;

	ctx_init(&c, 0x5000);
	rset_make(&s, &c.seed, 0, 200, &c.addrs);
	fault_op(&c, "fib_load IPv4+IPv6", &(struct op){ OP_LOAD, 0, s.fr, s.n }, 60);
	ctx_fini(&c, "load both families");
	rset_free(&s);
}
END_TEST

/* fib_load into a family that has routes falls back to fib_add one by
 * one: a failure half-way must not leave half of the routes behind. */
START_TEST(test_load_nonempty)
{
	struct ctx c;
	struct rset base, s;

	ctx_init(&c, 0x6000);
	rset_make(&base, &c.seed, AF_INET, 50, &c.addrs);
	rset_make(&s, &c.seed, AF_INET, 60, &c.addrs);
	ctx_load(&c, &base);
	fault_op(&c, "fib_load into non-empty", &(struct op){ OP_LOAD, 0, s.fr, s.n }, 60);
	ctx_fini(&c, "load into non-empty");
	rset_free(&base);
	rset_free(&s);
}
END_TEST

/* Churn on a big trie: adds and deletes of random routes on a few thousand,
 * enough for inflates, halves and root changes under failure. */
START_TEST(test_churn)
{
	struct ctx c;
	struct rset base, more;
	char what[64];
	int fam = _i ? AF_INET6 : AF_INET;
	size_t nbase = fam == AF_INET ? 4000 : 2000;
	struct fib_stats st0, st1;

	ctx_init(&c, 0x7000 + (uint64_t)_i);
	rset_make(&base, &c.seed, fam, nbase, &c.addrs);
	rset_make(&more, &c.seed, fam, 200, &c.addrs);
	ck_assert_int_eq(ctx_apply(&c, &(struct op){ OP_LOAD, 0, base.fr, base.n }), 0);
	fib_stats(c.after, &st0);
	for (size_t i = 0; i < more.n; i++) {
		snprintf(what, sizeof(what), "churn add #%zu", i);
		fault_op(&c, what, &(struct op){ OP_ADD, 0, &more.fr[i], 1 }, 12);
		/* and delete an old one */
		snprintf(what, sizeof(what), "churn del #%zu", i);
		fault_op(&c, what, &(struct op){ OP_DEL, 0, &base.fr[(i * 13) % base.n], 1 }, 12);
	}
	/* delete most of the table, so that nodes halve and collapse */
	for (size_t i = 0; i < base.n; i++) {
		if (i % 8 == 0)
			continue;
		if (i % 16 == 1) {
			snprintf(what, sizeof(what), "churn mass del #%zu", i);
			fault_op(&c, what, &(struct op){ OP_DEL, 0, &base.fr[i], 1 }, 6);
		} else {
			ctx_apply(&c, &(struct op){ OP_DEL, 0, &base.fr[i], 1 });
		}
	}
	fib_stats(c.after, &st1);
	{
		const struct fib_trie_stats *a = fam == AF_INET ? &st0.v4 : &st0.v6;
		const struct fib_trie_stats *b = fam == AF_INET ? &st1.v4 : &st1.v6;
		printf("churn %s: %lu inflates, %lu halves, %lu collapses during the run\n",
		       fam == AF_INET ? "IPv4" : "IPv6", (unsigned long)(b->inflates - a->inflates),
		       (unsigned long)(b->halves - a->halves),
		       (unsigned long)(b->collapses - a->collapses));
		ck_assert_msg(b->inflates > a->inflates &&
				      b->halves + b->collapses > a->halves + a->collapses,
			      "the churn did not resize the trie");
	}
	same_lookups(&c, c.after, 2000);
	ctx_fini(&c, fam == AF_INET ? "churn IPv4" : "churn IPv6");
	rset_free(&base);
	rset_free(&more);
}
END_TEST

static Suite *
fault_suite(void)
{
	Suite *s = suite_create("fib_fault");
	TCase *tc = tcase_create("alloc");

	ck_rcu_fixture(tc);
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, test_add_new, 0, 2);
	tcase_add_loop_test(tc, test_add_existing, 0, 2);
	tcase_add_loop_test(tc, test_del, 0, 2);
	tcase_add_loop_test(tc, test_load_one_family, 0, 2);
	tcase_add_test(tc, test_load_both_families);
	tcase_add_test(tc, test_load_nonempty);
	tcase_add_loop_test(tc, test_churn, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int ret;

	fib_thread_online();
	ret = ck_run(fault_suite(), CK_NOFORK);
	fib_thread_offline();
	return ret;
}
