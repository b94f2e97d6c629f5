/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the flow cache under allocation failure
 *
 * Every allocation site of cache/flow.c is made to fail in turn through
 * the hook of --enable-fault-injection builds (flow_config.fail_after for
 * flow_cache_new, flow_cache_fail_after for a live cache; this test
 * compiles its own copy of cache/flow.c with it). For each operation the
 * test first counts the heap allocations of a clean run, then runs
 * it again with allocation k = 1, 2, ... failing, on a fresh cache set up
 * the same way each time, next to a reference cache that runs it
 * cleanly (cache/flow.c is compiled into this file with its heap calls
 * counted). Each failure must show, and the failure must be reached for
 * every k up to the clean count and for none after it:
 *
 *   site                         what the caller sees
 *   flow_cache_new (7 sites)     NULL, errno ENOMEM, nothing allocated
 *                                (the cache, sets, keys, records, intern
 *                                heads, stripes, the first batch)
 *   entries and records          none: preallocated in the tables
 *   reclamation batch            (lookups of flow keys and decisions,
 *                                single and batch, expiry, pressure GC,
 *                                flush) the removal done as in the
 *                                clean run, the
 *                                entries kept in the open batch and freed
 *                                by a later push or at flow_cache_free,
 *                                batch_nomem
 *   worker (flow_cache_start)    -EAGAIN, not running, a later start works
 *
 * After every attempt: lookups answer as the FIB does, flow_cache_check
 * finds the cache consistent, the cache still caches (a lookup of a new
 * flow is inserted and then hits), and freeing it returns every heap
 * object it ever held (live object count back to where it was: no leak
 * on any failure path, batches that failed to be pushed included).
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "fib/fib.h"
#include "cache/flow.h"
#include "tests/unit/ck_rcu.h"
#include "tests/unit/ck_run.h"

#ifndef FIB_FAULT_INJECTION
#error "build with -DFIB_FAULT_INJECTION (tests/fault/local.mk does)"
#endif

/* ------------------------------------------------ counting allocations */

/*
 * cache/flow.c is included below with its heap calls renamed to these
 * counters (Check, linked statically, allocates too: a link-time wrap
 * would count its objects as well). The call_rcu thread frees too.
 */
static long live;              /* objects of flow.c alive */
static unsigned long allocs;   /* allocation calls of flow.c */

static void *
counted(void *p)
{
	__atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
	if (p)
		__atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
	return p;
}

static __attribute__((unused)) void *
t_malloc(size_t size)
{
	return counted(malloc(size));
}

static void *
t_calloc(size_t n, size_t size)
{
	return counted(calloc(n, size));
}

static int
t_posix_memalign(void **p, size_t align, size_t size)
{
	int rc = posix_memalign(p, align, size);

	counted(rc ? NULL : *p);
	return rc;
}

static __attribute__((unused)) void *
t_aligned_alloc(size_t align, size_t size)
{
	return counted(aligned_alloc(align, size));
}

static void
t_free(void *p)
{
	if (p)
		__atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
	free(p);
}

#define malloc t_malloc
#define calloc t_calloc
#define posix_memalign t_posix_memalign
#define aligned_alloc t_aligned_alloc
#define free t_free
#include "cache/flow.c"
#undef malloc
#undef calloc
#undef posix_memalign
#undef aligned_alloc
#undef free

static long
live_now(void)
{
	return __atomic_load_n(&live, __ATOMIC_RELAXED);
}

/* ----------------------------------------------------------- the FIB */

static struct fib *fib;

static void
route(const char *pfx, unsigned ifindex, bool del)
{
	struct fib_route r;
	struct fib_nh nh;
	uint8_t fam;

	memset(&r, 0, sizeof(r));
	memset(&nh, 0, sizeof(nh));
	ck_assert_int_eq(fib_prefix_parse(pfx, &r.dst, &r.plen, &fam), 0);
	r.family = fam;
	r.table = 254;
	if (del) {
		ck_assert_int_eq(fib_del(fib, &r), 0);
		return;
	}
	r.type = FIB_UNICAST;
	r.nh_count = 1;
	r.nh = &nh;
	nh.weight = 1;
	nh.ifindex = ifindex;
	ck_assert_int_eq(fib_add(fib, &r, FIB_ADD_REPLACE), 0);
}

/* A new FIB generation: every cached entry goes stale. */
static void
fib_bump(void)
{
	route("203.0.113.0/24", 9, false);
	route("203.0.113.0/24", 9, true);
}

/* The thread stays registered (main): a failed test leaves by longjmp. */
static void
fib_setup(void)
{
	fib_free(fib);
	fib = fib_new(NULL);
	ck_assert_ptr_nonnull(fib);
	route("10.0.0.0/8", 2, false);
	route("10.1.0.0/16", 3, false);
	route("10.1.2.0/24", 4, false);
	route("0.0.0.0/0", 5, false);
	route("2001:db8::/32", 6, false);
	route("2001:db8:1::/48", 7, false);
	{
		/* a rule no flow matches: the policy is not the default one,
		 * so flow_resolve_rcu goes through the cache */
		struct fib_rule r;

		for (int fam = AF_INET; fam; fam = fam == AF_INET ? AF_INET6 : 0) {
			fib_rule_init(&r, fam);
			r.priority = 100;
			r.table = 100;
			r.mark = 7;
			r.mark_mask = 0xff;
			ck_assert_int_eq(fib_rule_add(fib, &r), 0);
		}
		ck_assert_int_eq(fib_policy_publish(fib), 0);
	}
}

static void
fib_teardown(void)
{
	fib_free(fib);
	fib = NULL;
}

/* ------------------------------------------------------------- flows */

/* Flow i: IPv4 for even i, IPv6 for odd ones, spread over the routes. */
static void
flow(struct flow_key *k, unsigned i)
{
	if (i % 2 == 0) {
		flow_key_set4(k, 254, 0x0a000000u | (i % 3 ? 0x00010200u : 0) | (i * 2654435761u & 0xffff),
			      0xc0000200u | (i & 0xff), 0, 1);
	} else {
		uint8_t d[16] = { 0x20, 0x01, 0x0d, 0xb8 }, s[16] = { 0xfe, 0x80 };

		d[5] = (uint8_t)(i % 3 == 0);
		d[14] = (uint8_t)(i >> 8);
		d[15] = (uint8_t)i;
		s[15] = (uint8_t)(i * 7);
		flow_key_set6(k, 254, d, s, 0, 1);
	}
}

static bool
same_result(const struct fib_result *a, const struct fib_result *b)
{
	struct fib_match x, y;
	int ea = fib_result_get(a, &x), eb = fib_result_get(b, &y);

	if (ea || eb)
		return ea == eb;
	return x.plen == y.plen && x.family == y.family && x.info == y.info &&
	       !memcmp(x.prefix.b, y.prefix.b, 16);
}

/* Look flows [from, from + n) up, one by one (batch: all at once), and
 * check every answer against the FIB. */
static void
lookups(struct flow_cache *fc, unsigned from, unsigned n, bool batch)
{
	struct flow_key k[96];
	struct fib_result r[96], want;
	unsigned i;

	ck_assert_uint_le(n, 96);
	for (i = 0; i < n; i++)
		flow(&k[i], from + i);
	fib_read_lock();
	if (batch) {
		flow_lookup_batch_rcu(fc, fib, k, r, n);
	} else {
		for (i = 0; i < n; i++)
			flow_lookup_rcu(fc, fib, &k[i], &r[i]);
	}
	for (i = 0; i < n; i++) {
		want = fib_lookup_rcu(fib, k[i].family, k[i].dst.b, 254, 0);
		ck_assert_msg(same_result(&r[i], &want), "flow %u: not the FIB's answer", from + i);
	}
	fib_read_unlock();
}

/* The same flows as decisions (flow_resolve_rcu, the policy has a rule
 * so that the cache does not step aside), checked against
 * fib_resolve_rcu. */
static void
resolves(struct flow_cache *fc, unsigned from, unsigned n, bool batch)
{
	struct fib_flow f[96];
	struct fib_decision d[96], want;
	struct flow_key k;
	unsigned i;

	ck_assert_uint_le(n, 96);
	memset(f, 0, sizeof(f));
	memset(d, 0, sizeof(d));
	for (i = 0; i < n; i++) {
		flow(&k, from + i);
		f[i].family = k.family;
		f[i].flags = FIB_FLOW_SRC;
		f[i].dst = k.dst;
		f[i].src = k.src;
	}
	fib_read_lock();
	if (batch) {
		flow_resolve_batch_rcu(fc, fib, f, d, n);
	} else {
		for (i = 0; i < n; i++)
			flow_resolve_rcu(fc, fib, &f[i], &d[i]);
	}
	for (i = 0; i < n; i++) {
		memset(&want, 0, sizeof(want));
		fib_resolve_rcu(fib, &f[i], &want);
		ck_assert_msg(memcmp(&d[i], &want, sizeof(want)) == 0,
			      "flow %u: not the FIB's decision", from + i);
	}
	fib_read_unlock();
}

/* ---------------------------------------------------------- snapshots */

struct text {
	char *s;
	size_t len, cap;
};

static int
snap_cb(const struct flow_entry_info *e, void *arg)
{
	struct text *t = arg;
	char d[INET6_ADDRSTRLEN], s[INET6_ADDRSTRLEN], line[256];
	struct fib_match m;
	int n;

	if (e->legacy) {
		inet_ntop(e->key.family, e->key.dst.b, d, sizeof(d));
		inet_ntop(e->key.family, e->key.src.b, s, sizeof(s));
		if (fib_result_get(&e->res, &m))
			m.plen = 255;
	} else { /* a decision */
		inet_ntop(e->flow.family, e->flow.dst.b, d, sizeof(d));
		inet_ntop(e->flow.family, e->flow.src.b, s, sizeof(s));
		m.plen = (e->d.flags & FIB_D_ROUTE) ? e->d.plen : 255;
	}
	/* the generation relative to the FIB's: two caches filled side by
	 * side compare equal */
	n = snprintf(line, sizeof(line), "b%u %s %s gen-%llu used %llu plen %u\n", e->bucket, d, s,
		     (unsigned long long)(fib_generation(fib) - e->gen),
		     (unsigned long long)e->last_use, m.plen);
	if (t->len + (size_t)n + 1 > t->cap) {
		t->cap = (t->len + (size_t)n + 1) * 2;
		t->s = realloc(t->s, t->cap);
		ck_assert_ptr_nonnull(t->s);
	}
	memcpy(t->s + t->len, line, (size_t)n + 1);
	t->len += (size_t)n;
	return 0;
}

/* Every entry as text, in bucket and chain order. Caller frees. */
static char *
snapshot(struct flow_cache *fc)
{
	struct text t = { calloc(1, 1), 0, 1 }; /* never NULL */

	ck_assert_ptr_nonnull(t.s);
	ck_assert_int_eq(flow_cache_walk(fc, snap_cb, &t), 0);
	return t.s;
}

static void
consistent(struct flow_cache *fc, const char *what, long k)
{
	char msg[256] = "";

	ck_assert_msg(flow_cache_check(fc, msg, sizeof(msg)) == 0, "%s, allocation %ld failing: %s",
		      what, k, msg);
}

static void
same_snapshot(struct flow_cache *a, struct flow_cache *b, const char *what, long k,
	      const char *state)
{
	char *x = snapshot(a), *y = snapshot(b);

	ck_assert_msg(strcmp(x, y) == 0, "%s, allocation %ld failing: cache differs from the %s state:\n"
		      "got:\n%.600s\nwant:\n%.600s", what, k, state, x, y);
	free(x);
	free(y);
}

/* ------------------------------------------------------------ caches */

static uint64_t clock_now;

static uint64_t
fake_now(void *arg)
{
	return *(uint64_t *)arg;
}

static void
cfg_small(struct flow_config *c)
{
	flow_config_default(c);
	c->secret[0] = 0x0706050403020100ull;
	c->secret[1] = 0x0f0e0d0c0b0a0908ull;
	c->buckets = 16; /* chains fill up: inserts evict */
	c->chain_cap = 4;
	c->max_entries = 1024;
	c->admit = FLOW_ADMIT_ALL;
	c->bypass_below = 0;
	c->reclaim_bytes = 128; /* every retire pushes a batch */
	c->gc_timeout = 300ull * 1000000000ull;
	c->clock = fake_now;
	c->clock_arg = &clock_now;
}

/* A cache holding flows 0..39 (40 inserted, some evicted from full
 * chains), last used at 1 s steps; with stale, FIB generation moved on
 * since. */
static void
fill(struct flow_cache *fc)
{
	for (unsigned i = 0; i < 40; i += 8) {
		clock_now = (i + 1) * 1000000000ull;
		lookups(fc, i, 8, false);
	}
}

/* After a failure the cache must still cache: a new flow goes in and
 * hits. */
static void
still_caches(struct flow_cache *fc, const char *what, long k)
{
	struct flow_key key;
	struct fib_result r;
	int hit;

	flow(&key, 4000 + (unsigned)k * 2);
	fib_read_lock();
	hit = flow_lookup_rcu(fc, fib, &key, &r);
	ck_assert_int_eq(hit, 0);
	hit = flow_lookup_rcu(fc, fib, &key, &r);
	fib_read_unlock();
	ck_assert_msg(hit == 1, "%s, allocation %ld failing: a new flow is not cached after", what, k);
	consistent(fc, what, k);
}

/* ----------------------------------------------- live-cache operations */

enum op {
	OP_MISS,        /* single lookups of new flows (full chains: evictions) */
	OP_STALE,       /* single lookups of stale flows (unlink + insert) */
	OP_BATCH,       /* a batch of 64: hits and new flows, both families */
	OP_EXPIRE,      /* a periodic pass removing idle entries (batches) */
	OP_GC,          /* pressure GC */
	OP_FLUSH,       /* flush: one retire per bucket */
	OP_RESOLVE,     /* decisions of new flows (flow_resolve_rcu): records
			 * interned, evicted ways' records retired */
	OP_RESOLVE_BATCH, /* the same through flow_resolve_batch_rcu */
	OP_NOP,
};

static const char *const op_name[] = { "lookup miss", "lookup stale", "batch lookup",
				       "expire",      "pressure gc",  "flush",
				       "resolve",     "resolve batch" };

static bool
stale_setup(enum op op)
{
	return op == OP_STALE;
}

static void
op_run(struct flow_cache *fc, enum op op)
{
	clock_now = 100ull * 1000000000ull;
	switch (op) {
	case OP_MISS:
		lookups(fc, 40, 6, false);
		break;
	case OP_STALE:
		lookups(fc, 32, 6, false);
		break;
	case OP_BATCH:
		lookups(fc, 10, 64, true);
		break;
	case OP_EXPIRE:
		/* idle > 300 s for the first entries only */
		clock_now = 318ull * 1000000000ull;
		flow_cache_scan(fc, fib, clock_now, 16);
		break;
	case OP_GC:
		flow_cache_gc(fc, fib, clock_now);
		break;
	case OP_FLUSH:
		flow_cache_flush(fc);
		break;
	case OP_RESOLVE:
		resolves(fc, 100, 96, false);
		break;
	case OP_RESOLVE_BATCH:
		resolves(fc, 200, 64, true);
		break;
	case OP_NOP:
		break;
	}
}

/* Fresh caches: the one under test and the reference, filled side by
 * side. */
static void
pair_new(struct flow_cache **t, struct flow_cache **ref, enum op op)
{
	struct flow_config c;

	cfg_small(&c);
	if (op == OP_GC)
		c.max_entries = 36; /* threshold 32: the fill is above it */
	*t = flow_cache_new(&c);
	*ref = flow_cache_new(&c);
	ck_assert(*t && *ref);
	fill(*t);
	fill(*ref);
	if (stale_setup(op))
		fib_bump();
}

struct counts {
	uint64_t nomem, insert_nomem, batch_nomem, inserts, removed, pending;
};

static struct counts
counts_of(struct flow_cache *fc)
{
	struct flow_stats fs;

	flow_cache_stats(fc, &fs);
	return (struct counts){ fs.insert_nomem + fs.batch_nomem, fs.insert_nomem, fs.batch_nomem,
				fs.inserts,
				fs.expired_idle + fs.expired_stale + fs.evict_size +
					fs.evict_chain + fs.flushed,
				fs.reclaim.bytes_pending };
}

START_TEST(test_live_ops)
{
	enum op op = (enum op)_i;
	const char *what = op_name[op];
	struct flow_cache *fc, *ref;
	unsigned long clean;
	long base, k, failed = 0, insert_fail = 0, batch_fail = 0;

	fib_setup();
	base = live_now();

	/* the clean run: how many allocations the operation makes */
	pair_new(&fc, &ref, op);
	allocs = 0;
	op_run(ref, op);
	clean = allocs;
	flow_cache_free(fc);
	flow_cache_free(ref);
	ck_assert_int_eq(live_now(), base);
	if (clean == 0) {
		/* entries and records are inline in preallocated tables: only
		 * a full reclamation batch allocates */
		printf("%-13s no allocation (entries and records preallocated)\n", what);
		fib_teardown();
		return;
	}

	for (k = 1; k <= (long)clean + 1; k++) {
		struct counts b, a, r;
		char *before;

		pair_new(&fc, &ref, op);
		before = snapshot(fc);
		b = counts_of(fc);
		op_run(ref, op);
		flow_cache_fail_after(fc, k);
		op_run(fc, op);
		flow_cache_fail_after(fc, 0);
		a = counts_of(fc);
		r = counts_of(ref);
		consistent(fc, what, k);

		if (k > (long)clean) {
			/* past the last allocation: nothing failed */
			ck_assert_msg(a.nomem == b.nomem, "%s: allocation %ld of %lu failed", what, k,
				      clean);
			same_snapshot(fc, ref, what, k, "clean run's");
		} else {
			ck_assert_msg(a.nomem == b.nomem + 1,
				      "%s, allocation %ld of %lu failing: %llu failures seen", what,
				      k, clean, (unsigned long long)(a.nomem - b.nomem));
			failed++;
			if (a.insert_nomem > b.insert_nomem) {
				/* that flow is not cached (test_insert_unchanged: and
				 * the cache is as it was), the others are */
				ck_assert_uint_eq(a.inserts, r.inserts - 1);
				insert_fail++;
			} else {
				/* a batch: the removal done all the same, its
				 * freeing deferred */
				same_snapshot(fc, ref, what, k, "clean run's");
				ck_assert_uint_eq(a.removed, r.removed);
				ck_assert_uint_gt(a.pending, 0);
				batch_fail++;
			}
		}
		free(before);
		still_caches(fc, what, k);
		flow_cache_free(fc);
		flow_cache_free(ref);
		if (stale_setup(op))
			fib_bump(); /* next pair starts from a fresh generation */
		ck_assert_msg(live_now() == base, "%s, allocation %ld failing: %ld objects leaked",
			      what, k, live_now() - base);
	}
	ck_assert_int_eq(failed, (long)clean);
	printf("%-13s %2lu allocations (%ld entries, %ld batches), each failed in turn: "
	       "no leak, consistent, still caching\n", what, clean, insert_fail, batch_fail);
	fib_teardown();
}
END_TEST

/* Inserts allocate nothing (entries and records are preallocated), so the
 * older test that a failed insert leaves the cache unchanged has no case. */

/* flow_cache_new with each of its allocations failing, for a small table
 * (malloc) and a large one (2 MiB aligned, posix_memalign). */
START_TEST(test_new)
{
	struct flow_config c;
	struct flow_cache *fc;
	unsigned long clean;
	long base, k;

	fib_setup();
	cfg_small(&c);
	if (_i)
		c.buckets = 1u << 16; /* sets 4 MiB: 2 MiB aligned */
	base = live_now();
	allocs = 0;
	fc = flow_cache_new(&c);
	clean = allocs;
	ck_assert_ptr_nonnull(fc);
	flow_cache_free(fc);
	ck_assert_int_eq(live_now(), base);
	ck_assert_uint_eq(clean, 7); /* fc, sets, keys, records, intern heads, stripes, batch */
	for (k = 1; k <= (long)clean; k++) {
		c.fail_after = k;
		errno = 0;
		fc = flow_cache_new(&c);
		ck_assert_msg(fc == NULL && errno == ENOMEM,
			      "flow_cache_new, allocation %ld failing: %p, errno %d", k, (void *)fc,
			      errno);
		ck_assert_msg(live_now() == base, "flow_cache_new, allocation %ld failing: %ld leaked",
			      k, live_now() - base);
	}
	/* past the last: it works, and the count goes on in the cache (the
	 * first reclamation batch fails; inserts allocate nothing) */
	c.fail_after = (long)clean + 1;
	fc = flow_cache_new(&c);
	ck_assert_ptr_nonnull(fc);
	lookups(fc, 0, 1, false);
	{
		struct flow_stats fs;

		flow_cache_stats(fc, &fs);
		ck_assert_uint_eq(fs.entries, 1);
		flow_cache_flush(fc);
		flow_cache_stats(fc, &fs);
		ck_assert_uint_eq(fs.batch_nomem, 1);
		ck_assert_uint_eq(fs.entries, 0);
	}
	still_caches(fc, "flow_cache_new", k);
	flow_cache_free(fc);
	ck_assert_int_eq(live_now(), base);
	printf("flow_cache_new (%s): %lu allocations, each failed in turn: NULL, ENOMEM, no leak\n",
	       _i ? "4 MiB table" : "small table", clean);
	fib_teardown();
}
END_TEST

/* The worker thread cannot be created: -EAGAIN, nothing running, the
 * cache usable, and a later start works. */
START_TEST(test_start)
{
	struct flow_config c;
	struct flow_cache *fc;

	fib_setup();
	cfg_small(&c);
	c.clock = NULL;
	fc = flow_cache_new(&c);
	ck_assert_ptr_nonnull(fc);
	fill(fc);
	flow_cache_fail_after(fc, 1);
	ck_assert_int_eq(flow_cache_start(fc, fib), -EAGAIN);
	ck_assert_int_eq(flow_cache_alive(fc, 1000000000ull), 0);
	consistent(fc, "flow_cache_start", 1);
	lookups(fc, 0, 40, false);
	flow_cache_stop(fc); /* not running: a no-op */
	ck_assert_int_eq(flow_cache_start(fc, fib), 0);
	ck_assert_int_eq(flow_cache_alive(fc, 5000000000ull), 1);
	lookups(fc, 0, 40, true);
	flow_cache_stop(fc);
	consistent(fc, "flow_cache_start", 1);
	flow_cache_free(fc);
	fib_teardown();
}
END_TEST

static Suite *
fault_suite(void)
{
	Suite *s = suite_create("flow_fault");
	TCase *tc = tcase_create("alloc");

	ck_rcu_fixture(tc);
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_new, 0, 2);
	tcase_add_loop_test(tc, test_live_ops, OP_MISS, OP_NOP);
	tcase_add_test(tc, test_start);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int ret;

	fib_thread_online();
	ret = ck_run(fault_suite(), CK_NOFORK);
	fib_free(fib);
	fib_thread_offline();
	return ret;
}
