/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: decision cache: 4-way sets, interned records, region generations
 *
 * Layout:
 *
 *   sets[]  (2^n, one 64-byte line each)        keys[] (4 lines per set)
 *   +-----------------------------------+       +---------------------+
 *   | tag[4] pol[4] rec[4] gen[4] used[4]|  w -> | masked flow (60 B)  |
 *   +-----------------------------------+       | seq (even: stable)  |
 *        | rec id                                +---------------------+
 *        v
 *   recs[] (64 B each: struct fib_decision, refs, next)  <- iheads[] (intern
 *   hash, chains through next, striped locks); free ids after a grace period
 *
 * Readers never lock. A way is written under its set's stripe lock with
 * the way's seq made odd first and even after (a seqlock); a reader that
 * matched the tag reads seq, compares the key, reads record id and
 * generation, and accepts them only if seq was even and unchanged.
 * Every field is read and written with relaxed atomics, the seq with
 * acquire and release.
 *
 * Generation rule: an entry stores region generation + policy generation
 * (+ the FIB generation for flow_key entries), all read before the
 * resolution; each only grows, so the sum moves on any change, and a hit
 * needs the sum equal to the current one. The policy generation is read
 * from the published snapshot (fib_policy_gen_rcu), so a resolution after
 * it sees that snapshot or one with another generation. The regions are
 * bumped after the change and before fib_end releases its retired memory
 * (fib/regions.h): a reader that still sees the old sum is inside a read
 * section the grace period of that memory waits for, so the record's
 * info pointer is still there.
 *
 * Records: a decision is interned (one record per distinct decision),
 * counted by the ways naming it; the last way gone, it is unlinked
 * (refs CAS 0 -> dead, under its intern stripe lock) and its id joins a
 * batch handed to call_rcu; the callback puts the ids on the free list.
 * rec_put is only called inside a read section, so a dead record cannot
 * be reused under a thread still deciding about it.
 *
 * Hash: SipHash-1-3 (Aumasson, Bernstein 2012) with the caller's 128-bit
 * secret over the packed key; low bits pick the set, the top 16 the tag.
 *
 * Expiry: net/ipv4/route.c rt_check_expire (periodic share of the table
 * from a rover, timeout halved per entry kept in a set) and
 * rt_garbage_collect (pressure: halve the timeout until the goal is met).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "fib/rcu.h"
#include "fib/regions.h"
#include "cache/flow.h"

#define FLOW_WAYS 4
/* Locks and counters of a share of the sets. Few: the sampling and the
 * evaluation count per stripe, and must come round often. */
#define FLOW_STRIPES_MAX 64
#define FLOW_ISTRIPES 256
#define FLOW_SAMPLE 1024     /* 1 lookup in FLOW_SAMPLE is timed */
#define FLOW_ADAPT 1024      /* lookups of a stripe between evaluations */
#define FLOW_BYPASS_SAMPLE 16
#define FLOW_ADMIT_SHIFT_MAX 10
#define FLOW_K_LEGACY 0x80   /* key flags: a flow_key entry */
#define FLOW_REC_RESULT 0x80 /* record flags: holds a fib_result */
#define FLOW_REC_DEAD 0x80000000u
#define NS_PER_S 1000000000ull

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FLOW_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define FLOW_TSAN 1
#endif
/* TSAN cannot see grace periods: readers release the cache after their
 * last record access, the call_rcu callback acquires it before reusing. */
#ifdef FLOW_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define FLOW_TSAN_RELEASE(p) __tsan_release(p)
#define FLOW_TSAN_ACQUIRE(p) __tsan_acquire(p)
#else
#define FLOW_TSAN_RELEASE(p) ((void)(p))
#define FLOW_TSAN_ACQUIRE(p) ((void)(p))
#endif

struct flow_set {
	union {
		uint16_t tag[FLOW_WAYS]; /* 0: empty */
		uint64_t tags;
	};
	uint16_t pol[FLOW_WAYS];  /* policy generation, low bits: why a hit was refused */
	uint32_t rec[FLOW_WAYS];
	uint32_t gen[FLOW_WAYS];
	uint32_t used[FLOW_WAYS]; /* ms */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct flow_set) == 64, "a set is one line");

/* The masked flow; compared as words 0..6 and u[14]; u[15] is the seq. */
union flow_fkey {
	struct {
		union fib_addr dst, src;
		uint32_t iif, oif, mark, uid;
		uint16_t sport, dport;
		uint32_t aux; /* flow label, or a flow_key's table */
		uint8_t family, tos, proto, flags;
		uint32_t seq;
	} k;
	uint64_t w[8];
	uint32_t u[16];
} __attribute__((aligned(64)));
_Static_assert(sizeof(union flow_fkey) == 64, "a key is one line");

struct flow_rec {
	struct fib_decision d;
	uint32_t refs; /* ways naming it; FLOW_REC_DEAD once unlinked */
	uint32_t next; /* intern chain, then retire batch, then free list */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct flow_rec) == 64, "a record is one line");

struct flow_stripe {
	pthread_mutex_t lock;
	/* lookup path, no lock: relaxed and lossy */
	uint64_t lookups, hits, misses, invalid_route, invalid_policy, admit_skipped,
		bypass_default, bypass_samples, insert_odd;
	uint64_t hit_t, hit_n, res_t, res_n, pm_t, pm_n, ins_t, ins_n;
	/* under lock */
	uint64_t inserts, evict_lru, insert_full, insert_norec;
} __attribute__((aligned(64)));

struct flow_batch {
	struct rcu_head rcu;
	struct flow_cache *fc;
	uint32_t head, count;
	uint64_t queued_ns;
};

struct flow_mask {
	uint64_t pgen1; /* policy generation + 1; 0: being written */
	uint32_t fields, mark_mask;
} __attribute__((aligned(64)));

struct flow_cache {
	struct flow_config cfg;
	uint32_t mask;
	uint32_t stripe_mask;
	struct flow_set *sets;
	union flow_fkey *keys;
	struct flow_stripe *stripes;
	struct flow_rec *recs;
	uint32_t nrecs;
	uint32_t *iheads;
	uint32_t imask;
	pthread_mutex_t ilock[FLOW_ISTRIPES];
	uint64_t thresh, target;
	uint32_t touch_ms;
	uint64_t tsc0, ns0;

	/* read on every lookup, written rarely */
	uint64_t tick_now __attribute__((aligned(64)));
	int ticking;
	int bypass;
	int admit_shift;
	int want_cpu;
	int stopping;
	struct flow_mask masks[2];
	pthread_mutex_t mask_lock;
	uint64_t mask_updates;

	uint64_t entries __attribute__((aligned(64))); /* atomic */
	int pressure;
	long fail_after;
	uint64_t live_recs;   /* atomic */

	pthread_mutex_t free_lock;
	uint32_t free_head, fresh;

	pthread_mutex_t adapt_lock;
	uint64_t a_hits, a_misses, a_ht, a_hn, a_rt, a_rn, a_pt, a_pn, a_it, a_in;
	uint64_t c_hit, c_res, c_pm, c_ins; /* ticks, smoothed */
	uint64_t bypass_entered;
	uint64_t samples;

	pthread_mutex_t gc_lock;
	uint32_t rover, prover;
	uint64_t last_expire;
	uint64_t goal_frac;
	uint64_t gc_runs, gc_pressure_runs, buckets_scanned, gc_ns_last, gc_ns_max, yields;
	uint64_t expired_idle, expired_stale, evict_size, flushed;

	pthread_mutex_t rc_lock;
	struct flow_batch *batch;
	struct fib_reclaim_stats rc;
	uint64_t pending_recs;
	uint64_t batch_nomem;
	uint32_t batch_recs;

	pthread_mutex_t wk_lock;
	pthread_cond_t wk_cond;
	pthread_t wk_thread;
	bool wk_running;
	bool wk_stop;
	const struct fib *wk_fib;
	uint64_t wk_beat;
};

static inline uint64_t
ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void
st(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline void
inc(uint64_t *p)
{
	st(p, ld(p) + 1);
}

static inline uint32_t
ld32(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void
st32(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static uint64_t
flow_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static uint64_t
flow_coarse_ns(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* The sampling clock: the TSC where there is one (converted to ns with
 * the ratio since flow_cache_new), else the monotonic clock. */
static inline uint64_t
flow_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return flow_mono_ns();
#endif
}

static inline uint64_t
flow_now(const struct flow_cache *fc)
{
	return fc->cfg.clock(fc->cfg.clock_arg);
}

static inline uint64_t
flow_now_fast(struct flow_cache *fc)
{
	if (__atomic_load_n(&fc->ticking, __ATOMIC_RELAXED))
		return ld(&fc->tick_now);
	return flow_now(fc);
}

static inline uint32_t
flow_ms(uint64_t ns)
{
	return (uint32_t)(ns / 1000000u);
}

#ifdef FIB_FAULT_INJECTION
static bool
flow_fault(long *left)
{
	long n = __atomic_load_n(left, __ATOMIC_RELAXED);

	while (n > 0)
		if (__atomic_compare_exchange_n(left, &n, n - 1, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return n == 1;
	return false;
}

void
flow_cache_fail_after(struct flow_cache *fc, long n)
{
	__atomic_store_n(&fc->fail_after, n, __ATOMIC_RELAXED);
}
#else
#define flow_fault(left) ((void)(left), false)
#endif

void
flow_config_default(struct flow_config *c)
{
	memset(c, 0, sizeof(*c));
	c->enabled = true;
	c->buckets = 1u << 17;
	c->max_entries = 1u << 19;
	c->gc_interval = 60 * NS_PER_S;
	c->gc_timeout = 300 * NS_PER_S;
	c->gc_min_interval = NS_PER_S / 2;
	c->gc_elasticity = 8;
	c->scan_budget = 2000000;
	c->yield_check = 64;
	c->yield_sleep = 0;
	c->chain_cap = 16;
	c->admit = FLOW_ADMIT_DOORKEEPER;
	c->doorkeeper_bits_log = 21;
	c->reclaim_bytes = 512 * 1024;
	c->bypass_below = 30;
}

/* SipHash-1-3 over n little-endian 64-bit words. */
#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                     \
	do {                                                                         \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);            \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                               \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                               \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);            \
	} while (0)

static inline uint64_t
flow_siphash13(const uint64_t k[2], const uint64_t *m, unsigned n)
{
	uint64_t v0 = 0x736f6d6570736575ull ^ k[0];
	uint64_t v1 = 0x646f72616e646f6dull ^ k[1];
	uint64_t v2 = 0x6c7967656e657261ull ^ k[0];
	uint64_t v3 = 0x7465646279746573ull ^ k[1];
	uint64_t b = (uint64_t)(n * 8) << 56;
	unsigned i;

	for (i = 0; i < n; i++) {
		v3 ^= m[i];
		SIPROUND;
		v0 ^= m[i];
	}
	v3 ^= b;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* IPv4 keys hash 5 words (the addresses packed into one), IPv6 keys 8. */
static inline uint64_t
flow_hash(const struct flow_cache *fc, const union flow_fkey *k)
{
	uint64_t m[8];

	if (k->k.family == AF_INET) {
		m[0] = (uint64_t)k->u[0] | (uint64_t)k->u[4] << 32;
		m[1] = k->w[4];
		m[2] = k->w[5];
		m[3] = k->w[6];
		m[4] = k->u[14];
		return flow_siphash13(fc->cfg.secret, m, 5);
	}
	memcpy(m, k->w, 56);
	m[7] = k->u[14];
	return flow_siphash13(fc->cfg.secret, m, 8);
}

static inline uint16_t
flow_tag(uint64_t h)
{
	uint16_t t = (uint16_t)(h >> 48);

	return t ? t : 1;
}

/* Compare a stored key (relaxed loads) with a built one. */
static inline bool
flow_fkey_eq(const union flow_fkey *s, const union flow_fkey *k)
{
	uint64_t x = 0;
	unsigned i;

	for (i = 0; i < 7; i++)
		x |= __atomic_load_n(&s->w[i], __ATOMIC_RELAXED) ^ k->w[i];
	return x == 0 && ld32(&s->u[14]) == k->u[14];
}

/* Masks: the optional key fields per family, recomputed when the policy
 * generation moves. 1 and *m on success, 0: resolve without the cache. */
static bool
flow_mask_get(struct flow_cache *fc, const struct fib *fib, int fam, uint64_t pgen,
	      struct fib_keymask *m)
{
	struct flow_mask *mk = &fc->masks[fam == AF_INET6];
	struct fib_keymask nm;
	uint64_t p = __atomic_load_n(&mk->pgen1, __ATOMIC_ACQUIRE), g;

	if (__builtin_expect(p != pgen + 1, 0)) {
		if (pthread_mutex_trylock(&fc->mask_lock))
			return false;
		g = fib_policy_keymask_rcu(fib, fam, &nm);
		if (g == pgen) {
			__atomic_store_n(&mk->pgen1, 0, __ATOMIC_RELAXED);
			__atomic_thread_fence(__ATOMIC_RELEASE);
			st32(&mk->fields, nm.fields);
			st32(&mk->mark_mask, nm.mark_mask);
			__atomic_store_n(&mk->pgen1, pgen + 1, __ATOMIC_RELEASE);
			inc(&fc->mask_updates);
		}
		pthread_mutex_unlock(&fc->mask_lock);
		if (g != pgen)
			return false;
		p = pgen + 1;
	}
	m->fields = ld32(&mk->fields);
	m->mark_mask = ld32(&mk->mark_mask);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&mk->pgen1, __ATOMIC_RELAXED) == p;
}

static inline void
flow_fkey_build(union flow_fkey *k, const struct fib_flow *fl, const struct fib_keymask *m)
{
	unsigned alen = fl->family == AF_INET ? 4 : 16;

	memset(k, 0, sizeof(*k));
	memcpy(k->k.dst.b, fl->dst.b, alen);
	memcpy(k->k.src.b, fl->src.b, alen);
	k->k.iif = fl->iif;
	k->k.oif = fl->oif;
	k->k.mark = fl->mark & m->mark_mask;
	if (m->fields & FIB_KEY_UID)
		k->k.uid = fl->uid;
	if (m->fields & FIB_KEY_SPORT)
		k->k.sport = fl->sport;
	if (m->fields & FIB_KEY_DPORT)
		k->k.dport = fl->dport;
	if (m->fields & FIB_KEY_PROTO)
		k->k.proto = fl->ipproto;
	if (m->fields & FIB_KEY_FLOWLABEL)
		k->k.aux = fl->flowlabel;
	k->k.family = fl->family;
	k->k.tos = fl->tos;
	k->k.flags = fl->flags & 0x7f;
}

static void
flow_legacy_build(union flow_fkey *k, const struct flow_key *key)
{
	memset(k, 0, sizeof(*k));
	k->k.dst = key->dst;
	k->k.src = key->src;
	k->k.iif = key->iif;
	k->k.aux = key->table;
	k->k.family = key->family;
	k->k.tos = key->tos;
	k->k.flags = FLOW_K_LEGACY;
}

void
flow_key_set4(struct flow_key *k, uint32_t table, uint32_t dst, uint32_t src, uint8_t tos,
	      uint32_t iif)
{
	uint32_t d = htonl(dst), s = htonl(src);

	memset(k, 0, sizeof(*k));
	memcpy(k->dst.b, &d, 4);
	memcpy(k->src.b, &s, 4);
	k->table = table;
	k->iif = iif;
	k->family = AF_INET;
	k->tos = tos;
}

void
flow_key_set6(struct flow_key *k, uint32_t table, const uint8_t *dst, const uint8_t *src,
	      uint8_t tos, uint32_t iif)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->dst.b, dst, 16);
	if (src)
		memcpy(k->src.b, src, 16);
	k->table = table;
	k->iif = iif;
	k->family = AF_INET6;
	k->tos = tos;
}

uint32_t
flow_cache_bucket(const struct flow_cache *fc, const struct flow_key *key)
{
	union flow_fkey k;

	flow_legacy_build(&k, key);
	return (uint32_t)flow_hash(fc, &k) & fc->mask;
}

uint32_t
flow_cache_set(struct flow_cache *fc, const struct fib *fib, const struct fib_flow *fl)
{
	struct fib_keymask m = { ~0u, ~0u };
	union flow_fkey k;

	if (fl->family == AF_INET || fl->family == AF_INET6)
		(void)flow_mask_get(fc, fib, fl->family, fib_policy_gen_rcu(fib, fl->family), &m);
	flow_fkey_build(&k, fl, &m);
	return (uint32_t)flow_hash(fc, &k) & fc->mask;
}

#define FLOW_HUGE (2u << 20)

static void *
flow_alloc_table(size_t bytes)
{
	void *p;

	if (bytes < FLOW_HUGE)
		return posix_memalign(&p, 64, bytes) ? NULL : p;
	bytes = (bytes + FLOW_HUGE - 1) & ~(size_t)(FLOW_HUGE - 1);
	if (posix_memalign(&p, FLOW_HUGE, bytes))
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: failure is fine */
#endif
	return p;
}

static uint64_t
flow_pow2(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

struct flow_cache *
flow_cache_new(const struct flow_config *c)
{
	struct flow_cache *fc;
	uint64_t nb, ns, nr, ni, i;
	long left = c ? c->fail_after : 0;

	if (!c || c->buckets == 0 || c->buckets > (1u << 30) || c->max_entries == 0 ||
	    c->gc_timeout == 0 || c->gc_interval == 0 || c->chain_cap == 0 ||
	    c->doorkeeper_bits_log < 6 || c->doorkeeper_bits_log > 32 ||
	    c->admit > FLOW_ADMIT_DOORKEEPER || c->bypass_below > 90) {
		errno = EINVAL;
		return NULL;
	}
	fc = flow_fault(&left) ? NULL : calloc(1, sizeof(*fc));
	if (!fc) {
		errno = ENOMEM;
		return NULL;
	}
	fc->cfg = *c;
	if (!fc->cfg.clock) {
		fc->cfg.clock = flow_coarse_ns;
		fc->cfg.clock_arg = NULL;
	}
	if (fc->cfg.reclaim_bytes == 0)
		fc->cfg.reclaim_bytes = 4096;
	nb = flow_pow2(c->buckets);
	fc->cfg.buckets = (uint32_t)nb;
	fc->mask = (uint32_t)(nb - 1);
	ns = nb < FLOW_STRIPES_MAX ? nb : FLOW_STRIPES_MAX;
	fc->stripe_mask = (uint32_t)(ns - 1);
	/* live records <= ways in use <= max_entries; the rest wait for
	 * their grace period */
	nr = c->max_entries < nb * FLOW_WAYS ? c->max_entries : nb * FLOW_WAYS;
	nr += nr / 4 + 64;
	if (nr > 0x7fffff00u)
		nr = 0x7fffff00u;
	fc->nrecs = (uint32_t)nr;
	ni = flow_pow2(nr / 2 + 1);
	fc->imask = (uint32_t)(ni - 1);
	fc->batch_recs = fc->cfg.reclaim_bytes / sizeof(struct flow_rec);
	if (fc->batch_recs == 0)
		fc->batch_recs = 1;
	if (fc->batch_recs > nr / 8 + 1)
		fc->batch_recs = (uint32_t)(nr / 8 + 1);
	fc->sets = flow_fault(&left) ? NULL : flow_alloc_table(nb * sizeof(*fc->sets));
	fc->keys = flow_fault(&left) ? NULL : flow_alloc_table(nb * FLOW_WAYS * sizeof(*fc->keys));
	fc->recs = flow_fault(&left) ? NULL : flow_alloc_table((nr + 1) * sizeof(*fc->recs));
	fc->iheads = flow_fault(&left) ? NULL : calloc(ni, sizeof(*fc->iheads));
	if (flow_fault(&left) ||
	    posix_memalign((void **)&fc->stripes, 64, ns * sizeof(*fc->stripes)))
		fc->stripes = NULL;
	fc->batch = flow_fault(&left) ? NULL : calloc(1, sizeof(*fc->batch));
	if (!fc->sets || !fc->keys || !fc->recs || !fc->iheads || !fc->stripes || !fc->batch) {
		free(fc->sets);
		free(fc->keys);
		free(fc->recs);
		free(fc->iheads);
		free(fc->stripes);
		free(fc->batch);
		free(fc);
		errno = ENOMEM;
		return NULL;
	}
	/* written now, not on a lookup thread's first insert; records are
	 * touched only when first used (fresh ids count up) */
	memset(fc->sets, 0, nb * sizeof(*fc->sets));
	memset(fc->keys, 0, nb * FLOW_WAYS * sizeof(*fc->keys));
	memset(fc->stripes, 0, ns * sizeof(*fc->stripes));
	for (i = 0; i < ns; i++)
		pthread_mutex_init(&fc->stripes[i].lock, NULL);
	for (i = 0; i < FLOW_ISTRIPES; i++)
		pthread_mutex_init(&fc->ilock[i], NULL);
	fc->fresh = 1;
	pthread_mutex_init(&fc->mask_lock, NULL);
	pthread_mutex_init(&fc->free_lock, NULL);
	pthread_mutex_init(&fc->adapt_lock, NULL);
	pthread_mutex_init(&fc->gc_lock, NULL);
	pthread_mutex_init(&fc->rc_lock, NULL);
	pthread_mutex_init(&fc->wk_lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&fc->wk_cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	fc->thresh = c->max_entries - c->max_entries / 8;
	fc->target = (uint64_t)c->max_entries * 3 / 4;
	if ((uint64_t)c->gc_elasticity * nb < fc->target)
		fc->target = (uint64_t)c->gc_elasticity * nb;
	fc->touch_ms = (uint32_t)(c->gc_timeout / 16 / 1000000u);
	if (fc->touch_ms > 1000)
		fc->touch_ms = 1000;
	fc->rc.gp_ns_min = UINT64_MAX;
	fc->last_expire = flow_now(fc);
	fc->tsc0 = flow_ticks();
	fc->ns0 = flow_mono_ns();
	fc->fail_after = left;
	return fc;
}

/* Records. */
static inline uint64_t
flow_rec_hash(const struct flow_cache *fc, const struct fib_decision *d)
{
	uint64_t m[7];

	memcpy(m, d, sizeof(m));
	return flow_siphash13(fc->cfg.secret, m, 7);
}

static void
flow_batch_free_rcu(struct rcu_head *head)
{
	struct flow_batch *b = caa_container_of(head, struct flow_batch, rcu);
	struct flow_cache *fc;
	uint32_t id, n;
	uint64_t gp;

	FLOW_TSAN_ACQUIRE(b);
	fc = b->fc;
	FLOW_TSAN_ACQUIRE(fc);
	gp = flow_mono_ns() - b->queued_ns;
	/* order: rc_lock, then free_lock: flow_cache_check sees the ids
	 * either pending or free */
	pthread_mutex_lock(&fc->rc_lock);
	pthread_mutex_lock(&fc->free_lock);
	for (id = b->head; id; id = n) {
		n = fc->recs[id].next;
		fc->recs[id].next = fc->free_head;
		fc->free_head = id;
	}
	pthread_mutex_unlock(&fc->free_lock);
	fc->rc.bytes_freed += (uint64_t)b->count * sizeof(struct flow_rec);
	fc->rc.bytes_pending -= (uint64_t)b->count * sizeof(struct flow_rec);
	fc->pending_recs -= b->count;
	fc->rc.grace_periods++;
	if (gp < fc->rc.gp_ns_min)
		fc->rc.gp_ns_min = gp;
	if (gp > fc->rc.gp_ns_max)
		fc->rc.gp_ns_max = gp;
	fc->rc.gp_ns_total += gp;
	pthread_mutex_unlock(&fc->rc_lock);
	free(b);
	FLOW_TSAN_RELEASE(fc);
}

/* Hand the open batch to call_rcu if not empty (and, unless force,
 * full). Called with rc_lock held. */
static void
flow_batch_push(struct flow_cache *fc, bool force)
{
	struct flow_batch *b = fc->batch, *nb;

	if (!b->head || (!force && b->count < fc->batch_recs))
		return;
	nb = flow_fault(&fc->fail_after) ? NULL : calloc(1, sizeof(*nb));
	if (!nb) {
		fc->batch_nomem++;
		return; /* keep collecting; retry on the next retire */
	}
	fc->batch = nb;
	fc->rc.batches++;
	b->fc = fc;
	b->queued_ns = flow_mono_ns();
	FLOW_TSAN_RELEASE(b);
	FLOW_TSAN_RELEASE(fc);
	urcu_memb_call_rcu(&b->rcu, flow_batch_free_rcu);
}

static uint32_t
flow_rec_alloc(struct flow_cache *fc)
{
	uint32_t id = 0;

	pthread_mutex_lock(&fc->free_lock);
	if (fc->free_head) {
		id = fc->free_head;
		fc->free_head = fc->recs[id].next;
	} else if (fc->fresh <= fc->nrecs) {
		id = fc->fresh++;
	}
	pthread_mutex_unlock(&fc->free_lock);
	if (!id) { /* give the open batch its grace period */
		pthread_mutex_lock(&fc->rc_lock);
		flow_batch_push(fc, true);
		pthread_mutex_unlock(&fc->rc_lock);
	}
	return id;
}

/* The id of a record equal to d, with one more reference; 0: none free. */
static uint32_t
flow_intern(struct flow_cache *fc, const struct fib_decision *d)
{
	uint64_t h = flow_rec_hash(fc, d);
	uint32_t i = (uint32_t)h & fc->imask, id;
	pthread_mutex_t *lk = &fc->ilock[i & (FLOW_ISTRIPES - 1)];
	struct flow_rec *r;

	/* one chain, one lock: the stripe is the chain's low bits */
	pthread_mutex_lock(lk);
	for (id = fc->iheads[i]; id; id = fc->recs[id].next) {
		r = &fc->recs[id];
		if (memcmp(&r->d, d, sizeof(*d)) == 0) {
			__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
			pthread_mutex_unlock(lk);
			return id;
		}
	}
	id = flow_rec_alloc(fc);
	if (id) {
		r = &fc->recs[id];
		r->d = *d;
		__atomic_store_n(&r->refs, 1, __ATOMIC_RELAXED);
		r->next = fc->iheads[i];
		fc->iheads[i] = id;
		__atomic_add_fetch(&fc->live_recs, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(lk);
	return id;
}

/* Drop a reference; the last one retires the record. Context: inside a
 * read section (so the id cannot be reused under this thread). */
static void
flow_rec_put(struct flow_cache *fc, uint32_t id)
{
	struct flow_rec *r = &fc->recs[id];
	uint32_t zero = 0, *pp;
	uint64_t h;
	pthread_mutex_t *lk;

	if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	h = flow_rec_hash(fc, &r->d);
	lk = &fc->ilock[(uint32_t)h & fc->imask & (FLOW_ISTRIPES - 1)];
	pthread_mutex_lock(lk);
	if (!__atomic_compare_exchange_n(&r->refs, &zero, FLOW_REC_DEAD, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED)) {
		pthread_mutex_unlock(lk); /* interned again meanwhile, or retired */
		return;
	}
	for (pp = &fc->iheads[(uint32_t)h & fc->imask]; *pp != id; pp = &fc->recs[*pp].next)
		;
	*pp = r->next;
	pthread_mutex_unlock(lk);
	__atomic_sub_fetch(&fc->live_recs, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&fc->rc_lock);
	r->next = fc->batch->head;
	fc->batch->head = id;
	fc->batch->count++;
	fc->pending_recs++;
	fc->rc.bytes_retired += sizeof(*r);
	fc->rc.bytes_pending += sizeof(*r);
	flow_batch_push(fc, false);
	pthread_mutex_unlock(&fc->rc_lock);
}

/* Ways. Written under the set's stripe lock, seq odd while written. */
static void
flow_way_write(struct flow_cache *fc, uint32_t b, unsigned w, const union flow_fkey *k,
	       uint16_t tag, uint16_t pol, uint32_t rec, uint32_t gen, uint32_t used)
{
	struct flow_set *s = &fc->sets[b];
	union flow_fkey *fk = &fc->keys[(size_t)b * FLOW_WAYS + w];
	uint32_t seq = fk->u[15];
	unsigned i;

	st32(&fk->u[15], seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (k) {
		for (i = 0; i < 7; i++)
			__atomic_store_n(&fk->w[i], k->w[i], __ATOMIC_RELAXED);
		st32(&fk->u[14], k->u[14]);
	}
	__atomic_store_n(&s->tag[w], tag, __ATOMIC_RELAXED);
	__atomic_store_n(&s->pol[w], pol, __ATOMIC_RELAXED);
	st32(&s->rec[w], rec);
	st32(&s->gen[w], gen);
	st32(&s->used[w], used);
	__atomic_store_n(&fk->u[15], seq + 2, __ATOMIC_RELEASE);
}

/* Remove way w of set b (stripe lock held); returns its record id. */
static uint32_t
flow_way_clear(struct flow_cache *fc, uint32_t b, unsigned w)
{
	uint32_t rec = fc->sets[b].rec[w];

	flow_way_write(fc, b, w, NULL, 0, 0, 0, 0, 0);
	__atomic_sub_fetch(&fc->entries, 1, __ATOMIC_RELAXED);
	return rec;
}

/* The probe: the way holding k, its record and generation; -1 if none. */
struct flow_hit {
	uint32_t rec, gen;
	uint16_t pol;
	int way;
};

static inline void
flow_probe(struct flow_cache *fc, uint32_t b, uint16_t tag, const union flow_fkey *k,
	   struct flow_hit *h)
{
	struct flow_set *s = &fc->sets[b];
	unsigned w;

	h->way = -1;
	for (w = 0; w < FLOW_WAYS; w++) {
		const union flow_fkey *fk;
		uint32_t seq;

		if (__atomic_load_n(&s->tag[w], __ATOMIC_RELAXED) != tag)
			continue;
		fk = &fc->keys[(size_t)b * FLOW_WAYS + w];
		seq = __atomic_load_n(&fk->u[15], __ATOMIC_ACQUIRE);
		if ((seq & 1) || !flow_fkey_eq(fk, k))
			continue;
		h->rec = ld32(&s->rec[w]);
		h->gen = ld32(&s->gen[w]);
		h->pol = __atomic_load_n(&s->pol[w], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (ld32(&fk->u[15]) != seq || !h->rec)
			continue;
		h->way = (int)w;
		return;
	}
}

static void
flow_pressure_request(struct flow_cache *fc)
{
	if (__atomic_exchange_n(&fc->pressure, 1, __ATOMIC_ACQ_REL))
		return;
	pthread_mutex_lock(&fc->wk_lock);
	pthread_cond_signal(&fc->wk_cond);
	pthread_mutex_unlock(&fc->wk_lock);
}

/*
 * Insert k -> d at generation gen (the caller read it before resolving):
 * the way already holding k, else an empty way (below max_entries), else
 * the least recently used one. Context: reader.
 */
static void
flow_insert(struct flow_cache *fc, struct flow_stripe *s, uint32_t b, uint16_t tag,
	    const union flow_fkey *k, uint32_t gen, uint16_t pol, const struct fib_decision *d)
{
	struct flow_set *set = &fc->sets[b];
	uint32_t id, old = 0, now = flow_ms(flow_now_fast(fc)), age, oldest = 0;
	int w, empty = -1, same = -1, lru = -1;

	id = flow_intern(fc, d);
	if (!id) {
		inc(&s->insert_norec);
		return;
	}
	pthread_mutex_lock(&s->lock);
	for (w = 0; w < FLOW_WAYS; w++) {
		if (!set->tag[w]) {
			if (empty < 0)
				empty = w;
			continue;
		}
		if (set->tag[w] == tag &&
		    flow_fkey_eq(&fc->keys[(size_t)b * FLOW_WAYS + w], k)) {
			same = w;
			break;
		}
		age = now - set->used[w];
		if (lru < 0 || age >= oldest) {
			oldest = age;
			lru = w;
		}
	}
	if (same >= 0) {
		w = same;
		old = set->rec[w];
	} else if (empty >= 0 &&
		   __atomic_add_fetch(&fc->entries, 1, __ATOMIC_RELAXED) <= fc->cfg.max_entries) {
		w = empty;
	} else {
		if (empty >= 0) {
			__atomic_sub_fetch(&fc->entries, 1, __ATOMIC_RELAXED);
			s->insert_full++;
			flow_pressure_request(fc);
		}
		if (lru < 0) { /* at max_entries and this set empty: not cached */
			pthread_mutex_unlock(&s->lock);
			flow_rec_put(fc, id);
			return;
		}
		w = lru;
		old = set->rec[w];
		s->evict_lru++;
	}
	flow_way_write(fc, b, (unsigned)w, k, tag, pol, id, gen, now);
	s->inserts++;
	pthread_mutex_unlock(&s->lock);
	if (old)
		flow_rec_put(fc, old);
	if (__atomic_load_n(&fc->entries, __ATOMIC_RELAXED) > fc->thresh)
		flow_pressure_request(fc);
}

/* Bypass sample: a cheap multiplicative hash of the addresses, so that
 * bypassed flows touch no line of the cache. */
static inline bool
flow_sampled_w(uint64_t d0, uint64_t d1, uint64_t s0, uint64_t s1, uint32_t iif)
{
	return (((d0 ^ d1 * 0x9e3779b97f4a7c15ull ^ s0 ^ s1 * 0xc2b2ae3d27d4eb4full ^ iif) *
		 0x9e3779b97f4a7c15ull) >> 60) == 0;
}

static inline bool
flow_sampled(const union fib_addr *dst, const union fib_addr *src, uint32_t iif)
{
	uint64_t w[4];

	memcpy(w, dst->b, 16);
	memcpy(w + 2, src->b, 16);
	return flow_sampled_w(w[0], w[1], w[2], w[3], iif);
}

/* A moving mean of the window means; a window may raise it at most 2x,
 * so one preempted or page-faulting sample cannot flip a decision. */
static inline uint64_t
flow_smooth(uint64_t c, uint64_t t, uint64_t n)
{
	uint64_t w;

	if (!n)
		return c;
	w = t / n;
	if (c && w > 2 * c)
		w = 2 * c;
	return c ? (c * 3 + w) / 4 : w;
}

/*
 * Evaluate the window since the last evaluation (at least 1024 probed
 * lookups): the hit rate r and the smoothed costs (ticks) of a hit, a
 * probe that missed, a resolution and an insert. Admission: 1 miss in N,
 * N doubled while r < 5 %, halved while r > 25 %. Bypass (bypass_below
 * set): on when the misses cost more than the hits save by over 10 % of
 * a resolution, or r under bypass_below with hits no cheaper than the
 * resolution; off again with a margin.
 */
static void
flow_adapt(struct flow_cache *fc)
{
	uint64_t h = 0, m = 0, ht = 0, hn = 0, rt = 0, rn = 0, pt = 0, pn = 0, it = 0, in = 0;
	uint64_t dh, dm, rate, save, lose, res;
	uint32_t i;
	int on, shift;

	if (pthread_mutex_trylock(&fc->adapt_lock))
		return;
	for (i = 0; i <= fc->stripe_mask; i++) {
		struct flow_stripe *s = &fc->stripes[i];

		h += ld(&s->hits);
		m += ld(&s->misses);
		ht += ld(&s->hit_t);
		hn += ld(&s->hit_n);
		rt += ld(&s->res_t);
		rn += ld(&s->res_n);
		pt += ld(&s->pm_t);
		pn += ld(&s->pm_n);
		it += ld(&s->ins_t);
		in += ld(&s->ins_n);
	}
	dh = h - fc->a_hits;
	dm = m - fc->a_misses;
	if (dh + dm < 1024) {
		pthread_mutex_unlock(&fc->adapt_lock);
		return;
	}
	fc->c_hit = flow_smooth(fc->c_hit, ht - fc->a_ht, hn - fc->a_hn);
	fc->c_res = flow_smooth(fc->c_res, rt - fc->a_rt, rn - fc->a_rn);
	fc->c_pm = flow_smooth(fc->c_pm, pt - fc->a_pt, pn - fc->a_pn);
	fc->c_ins = flow_smooth(fc->c_ins, it - fc->a_it, in - fc->a_in);
	fc->a_hits = h, fc->a_misses = m, fc->a_ht = ht, fc->a_hn = hn, fc->a_rt = rt;
	fc->a_rn = rn, fc->a_pt = pt, fc->a_pn = pn, fc->a_it = it, fc->a_in = in;
	rate = dh * 100 / (dh + dm);
	shift = __atomic_load_n(&fc->admit_shift, __ATOMIC_RELAXED);
	if (fc->cfg.admit == FLOW_ADMIT_DOORKEEPER) {
		if (rate < 5 && shift < FLOW_ADMIT_SHIFT_MAX)
			shift++;
		else if (rate > 25 && shift > 0)
			shift--;
		__atomic_store_n(&fc->admit_shift, shift, __ATOMIC_RELAXED);
	}
	if (fc->cfg.bypass_below && fc->c_res) {
		res = fc->c_res;
		save = rate * (res > fc->c_hit ? res - fc->c_hit : 0);
		lose = (100 - rate) * (fc->c_pm + (fc->c_ins >> shift));
		on = __atomic_load_n(&fc->bypass, __ATOMIC_RELAXED);
		if (!on && (lose > save + 10 * res ||
			    (rate < fc->cfg.bypass_below && fc->c_hit >= res))) {
			__atomic_store_n(&fc->bypass, 1, __ATOMIC_RELAXED);
			st(&fc->bypass_entered, ld(&fc->bypass_entered) + 1);
		} else if (on && save > lose + 5 * res && rate >= fc->cfg.bypass_below + 10) {
			__atomic_store_n(&fc->bypass, 0, __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_unlock(&fc->adapt_lock);
}

static inline bool
flow_admit(struct flow_cache *fc, uint64_t misses)
{
	int shift = __atomic_load_n(&fc->admit_shift, __ATOMIC_RELAXED);

	return (misses & ((1ull << shift) - 1)) == 0;
}

/* Count a lookup; true when this one is timed. */
static inline bool
flow_count(struct flow_cache *fc, struct flow_stripe *s)
{
	uint64_t n = ld(&s->lookups) + 1;

	st(&s->lookups, n);
	if (__builtin_expect((n & (FLOW_ADAPT - 1)) == 0, 0))
		flow_adapt(fc);
	return (n & (FLOW_SAMPLE - 1)) == 0;
}

/* A refused hit: why. */
static inline void
flow_refused(struct flow_stripe *s, const struct flow_hit *h, uint16_t pol)
{
	if (h->pol != pol)
		inc(&s->invalid_policy);
	else
		inc(&s->invalid_route);
}

static inline int
flow_ret(const struct fib_decision *d)
{
	return d->error ? -(int)d->error : 0;
}

static inline void
flow_touch(struct flow_cache *fc, uint32_t b, int w)
{
	uint32_t now = flow_ms(flow_now_fast(fc)), *u = &fc->sets[b].used[w];

	if (now - ld32(u) >= fc->touch_ms)
		st32(u, now);
}

/* A flow between its hashing and its probe (flow_resolve_batch_rcu
 * prefetches the sets of a chunk in between). */
struct flow_pre {
	union flow_fkey k;
	uint64_t pgen;
	uint32_t b, gen;
	uint16_t tag;
	bool cached; /* false: resolve without the cache */
};

/* Step 1: bypasses, generations (before anything is resolved), key, hash. */
static inline void
flow_prepare(struct flow_cache *fc, const struct fib *fib, const struct fib_flow *fl,
	     struct flow_pre *p)
{
	struct fib_keymask m;
	uint64_t h;
	int fam = fl->family;

	p->cached = false;
	if (!fc->cfg.enabled || (fam != AF_INET && fam != AF_INET6))
		return;
	if (fib_policy_is_default(fib, fam)) {
		/* one compiled-table lookup: about what a hit costs */
		inc(&fc->stripes[fl->dst.b[3] & fc->stripe_mask].bypass_default);
		return;
	}
	if (__builtin_expect(__atomic_load_n(&fc->bypass, __ATOMIC_RELAXED), 0) &&
	    !flow_sampled(&fl->dst, &fl->src, fl->iif)) {
		inc(&fc->stripes[fl->dst.b[3] & fc->stripe_mask].bypass_samples);
		return;
	}
	p->pgen = fib_policy_gen_rcu(fib, fam);
	if (!flow_mask_get(fc, fib, fam, p->pgen, &m))
		return;
	p->gen = fib_region_gen_rcu(fib, fam, fl->dst.b) + (uint32_t)p->pgen;
	flow_fkey_build(&p->k, fl, &m);
	h = flow_hash(fc, &p->k);
	p->b = (uint32_t)h & fc->mask;
	p->tag = flow_tag(h);
	p->cached = true;
}

/* Step 2: probe; a hit copies the record; a miss resolves and maybe
 * inserts. 1 for a hit. */
static int
flow_finish(struct flow_cache *fc, const struct fib *fib, const struct fib_flow *fl,
	    struct fib_decision *d, struct flow_pre *p, int *rc)
{
	struct flow_stripe *s;
	struct flow_hit hit;
	uint64_t t0 = 0, t1, n;
	bool timed;

	memset(d, 0, sizeof(*d));
	if (!p->cached) {
		*rc = fib_resolve_rcu(fib, fl, d);
		return 0;
	}
	s = &fc->stripes[p->b & fc->stripe_mask];
	timed = flow_count(fc, s);
	if (__builtin_expect(timed, 0))
		t0 = flow_ticks();
	flow_probe(fc, p->b, p->tag, &p->k, &hit);
	if (hit.way >= 0) {
		if (hit.gen == p->gen) {
			*d = fc->recs[hit.rec].d;
			FLOW_TSAN_RELEASE(fc);
			flow_touch(fc, p->b, hit.way);
			inc(&s->hits);
			if (__builtin_expect(timed, 0)) {
				st(&s->hit_t, ld(&s->hit_t) + flow_ticks() - t0);
				inc(&s->hit_n);
			}
			*rc = flow_ret(d);
			return 1;
		}
		flow_refused(s, &hit, (uint16_t)p->pgen);
	}
	FLOW_TSAN_RELEASE(fc);
	if (__builtin_expect(timed, 0)) {
		t1 = flow_ticks();
		st(&s->pm_t, ld(&s->pm_t) + t1 - t0);
		inc(&s->pm_n);
		t0 = t1;
	}
	*rc = fib_resolve_rcu(fib, fl, d);
	if (__builtin_expect(timed, 0)) {
		t1 = flow_ticks();
		st(&s->res_t, ld(&s->res_t) + t1 - t0);
		inc(&s->res_n);
		t0 = t1;
	}
	n = ld(&s->misses) + 1;
	st(&s->misses, n);
	if (fc->cfg.admit == FLOW_ADMIT_ALL || hit.way >= 0 || flow_admit(fc, n)) {
		flow_insert(fc, s, p->b, p->tag, &p->k, p->gen, (uint16_t)p->pgen, d);
		if (__builtin_expect(timed, 0)) {
			st(&s->ins_t, ld(&s->ins_t) + flow_ticks() - t0);
			inc(&s->ins_n);
		}
	} else {
		inc(&s->admit_skipped);
	}
	return 0;
}

int
flow_resolve_rcu(struct flow_cache *fc, const struct fib *fib, const struct fib_flow *fl,
		 struct fib_decision *d)
{
	struct flow_pre p;
	int rc;

	if (!fc)
		return fib_resolve_rcu(fib, fl, d);
	/* the bypass first and alone: it must cost next to nothing */
	if (fib_policy_is_default(fib, fl->family) && fc->cfg.enabled) {
		inc(&fc->stripes[fl->dst.b[3] & fc->stripe_mask].bypass_default);
		return fib_resolve_rcu(fib, fl, d);
	}
	flow_prepare(fc, fib, fl, &p);
	flow_finish(fc, fib, fl, d, &p, &rc);
	return rc;
}

/*
 * Chunks of FLOW_RBATCH: every flow hashed and its set line and first key
 * line prefetched before any is probed, so that the misses of independent
 * probes overlap; then probed (and resolved) one by one.
 */
#define FLOW_RBATCH 16

size_t
flow_resolve_batch_rcu(struct flow_cache *fc, const struct fib *fib, const struct fib_flow *fl,
		       struct fib_decision *d, size_t n)
{
	struct flow_pre p[FLOW_RBATCH];
	size_t done, i, k, hits = 0;
	int rc, def4, def6;

	if (!fc) {
		fib_resolve_batch_rcu(fib, fl, d, n);
		return 0;
	}
	def4 = fib_policy_is_default(fib, AF_INET);
	def6 = fib_policy_is_default(fib, AF_INET6);
	for (done = 0; done < n; done += k) {
		/* a run of flows under the default policy (or the cache
		 * disabled): the FIB's batch resolution over the whole run, so
		 * its lookups overlap as in a plain batch; no cache */
		for (k = 0; done + k < n; k++) {
			int fam = fl[done + k].family;

			if (fc->cfg.enabled && !(fam == AF_INET ? def4 : fam == AF_INET6 && def6))
				break;
		}
		if (k) {
			fib_resolve_batch_rcu(fib, &fl[done], &d[done], k);
			if (fc->cfg.enabled) {
				struct flow_stripe *s = &fc->stripes[fl[done].dst.b[3] & fc->stripe_mask];

				st(&s->bypass_default, ld(&s->bypass_default) + k);
			}
			continue;
		}
		k = n - done < FLOW_RBATCH ? n - done : FLOW_RBATCH;
		for (i = 0; i < k; i++) {
			flow_prepare(fc, fib, &fl[done + i], &p[i]);
			if (p[i].cached) {
				__builtin_prefetch(&fc->sets[p[i].b]);
				__builtin_prefetch(&fc->keys[(size_t)p[i].b * FLOW_WAYS]);
			}
		}
		for (i = 0; i < k; i++)
			hits += (size_t)flow_finish(fc, fib, &fl[done + i], &d[done + i], &p[i], &rc);
	}
	return hits;
}

/* The older API: flow_key -> fib_result, in the same table. */
static inline struct fib_result
flow_fib_lookup(const struct fib *fib, const struct flow_key *k)
{
	uint32_t a;

	if (k->family == AF_INET && k->tos == 0) {
		memcpy(&a, k->dst.b, 4);
		return fib_lookup4_rcu(fib, k->table, ntohl(a));
	}
	return fib_lookup_rcu(fib, k->family, k->dst.b, k->table, k->tos);
}

int
flow_lookup_rcu(struct flow_cache *fc, const struct fib *fib, const struct flow_key *key,
		struct fib_result *res)
{
	struct fib_decision d;
	struct flow_stripe *s;
	struct flow_hit hit;
	union flow_fkey k;
	uint64_t h, fgen, pgen, n;
	uint32_t b, gen;
	uint16_t tag;

	if (!fc->cfg.enabled || (key->family != AF_INET && key->family != AF_INET6)) {
		*res = flow_fib_lookup(fib, key);
		return 0;
	}
	if (__builtin_expect(__atomic_load_n(&fc->bypass, __ATOMIC_RELAXED), 0) &&
	    !flow_sampled(&key->dst, &key->src, key->iif)) {
		inc(&fc->stripes[key->dst.b[3] & fc->stripe_mask].bypass_samples);
		*res = flow_fib_lookup(fib, key);
		return 0;
	}
	fgen = fib_generation(fib);
	pgen = fib_policy_gen_rcu(fib, key->family);
	gen = fib_region_gen_rcu(fib, key->family, key->dst.b) + (uint32_t)pgen + (uint32_t)fgen;
	flow_legacy_build(&k, key);
	h = flow_hash(fc, &k);
	b = (uint32_t)h & fc->mask;
	tag = flow_tag(h);
	s = &fc->stripes[b & fc->stripe_mask];
	flow_count(fc, s);
	flow_probe(fc, b, tag, &k, &hit);
	if (hit.way >= 0) {
		/* never at an odd FIB generation: a change is in progress */
		if (hit.gen == gen && !(fgen & 1)) {
			memcpy(res, fc->recs[hit.rec].d.prefix.b, sizeof(*res));
			FLOW_TSAN_RELEASE(fc);
			flow_touch(fc, b, hit.way);
			inc(&s->hits);
			return 1;
		}
		flow_refused(s, &hit, (uint16_t)pgen);
	}
	FLOW_TSAN_RELEASE(fc);
	*res = flow_fib_lookup(fib, key);
	n = ld(&s->misses) + 1;
	st(&s->misses, n);
	if (fgen & 1) {
		inc(&s->insert_odd);
		return 0;
	}
	if (fc->cfg.admit != FLOW_ADMIT_ALL && hit.way < 0 && !flow_admit(fc, n)) {
		inc(&s->admit_skipped);
		return 0;
	}
	memset(&d, 0, sizeof(d));
	d.family = key->family;
	d.flags = FLOW_REC_RESULT;
	memcpy(d.prefix.b, res, sizeof(*res));
	flow_insert(fc, s, b, tag, &k, gen, (uint16_t)pgen, &d);
	return 0;
}

int
flow_lookup4_rcu(struct flow_cache *fc, const struct fib *fib, uint32_t table, uint32_t dst,
		 uint32_t src, uint32_t iif, struct fib_result *res)
{
	struct flow_key k;

	if (!fc->cfg.enabled ||
	    (__builtin_expect(__atomic_load_n(&fc->bypass, __ATOMIC_RELAXED), 0) &&
	     !flow_sampled_w(htonl(dst), 0, htonl(src), 0, iif))) {
		*res = fib_lookup4_rcu(fib, table, dst);
		return 0;
	}
	flow_key_set4(&k, table, dst, src, 0, iif);
	return flow_lookup_rcu(fc, fib, &k, res);
}

size_t
flow_lookup_batch_rcu(struct flow_cache *fc, const struct fib *fib, const struct flow_key *keys,
		      struct fib_result *res, size_t n)
{
	size_t i, hits = 0;

	for (i = 0; i < n; i++)
		hits += (size_t)flow_lookup_rcu(fc, fib, &keys[i], &res[i]);
	return hits;
}

/* Expiry. */
enum { SCAN_EXPIRE, SCAN_PRESSURE, SCAN_FORCE };

struct flow_scan {
	const struct fib *fib; /* NULL: staleness not judged */
	uint64_t fgen;
	uint32_t now; /* ms */
	uint64_t tmo; /* ms */
	int mode;
	uint64_t idle, stale;
	uint64_t scanned;
	uint64_t kept_age_max;
};

static bool
flow_way_stale(const struct flow_scan *sc, const union flow_fkey *fk, uint32_t gen)
{
	int fam = fk->k.family;
	uint32_t g;

	if (!sc->fib)
		return false;
	g = fib_region_gen_rcu(sc->fib, fam, fk->k.dst.b) +
	    (uint32_t)fib_policy_gen_rcu(sc->fib, fam);
	if (fk->k.flags & FLOW_K_LEGACY)
		g += (uint32_t)sc->fgen;
	return g != gen;
}

/* One set, under its stripe lock and inside a read section. */
static void
flow_scan_set(struct flow_cache *fc, uint32_t b, struct flow_scan *sc)
{
	struct flow_stripe *s = &fc->stripes[b & fc->stripe_mask];
	struct flow_set *set = &fc->sets[b];
	uint32_t dead[FLOW_WAYS], ages[FLOW_WAYS], age;
	uint64_t tmo = sc->tmo;
	unsigned w, i, j, nd = 0, order[FLOW_WAYS], n = 0;

	pthread_mutex_lock(&s->lock);
	/* youngest first, as the kernel's chains (newest at the head): the
	 * timeout halves for each entry kept before an older one */
	for (w = 0; w < FLOW_WAYS; w++) {
		if (!set->tag[w])
			continue;
		age = sc->now - ld32(&set->used[w]);
		if ((int32_t)age < 0)
			age = 0;
		for (i = n; i > 0 && ages[i - 1] > age; i--) {
			ages[i] = ages[i - 1];
			order[i] = order[i - 1];
		}
		ages[i] = age;
		order[i] = w;
		n++;
	}
	for (j = 0; j < n; j++) {
		w = order[j];
		age = ages[j];
		if (flow_way_stale(sc, &fc->keys[(size_t)b * FLOW_WAYS + w], set->gen[w])) {
			sc->stale++;
		} else if (sc->mode == SCAN_FORCE || age > tmo) {
			sc->idle++;
		} else {
			tmo >>= 1; /* full sets age faster */
			if (age > sc->kept_age_max)
				sc->kept_age_max = age;
			continue;
		}
		dead[nd++] = flow_way_clear(fc, b, w);
	}
	pthread_mutex_unlock(&s->lock);
	for (w = 0; w < nd; w++)
		flow_rec_put(fc, dead[w]);
}

static void
flow_yield(struct flow_cache *fc)
{
	struct timespec ts;
	uint64_t deadline;

	__atomic_store_n(&fc->want_cpu, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fc->wk_beat, flow_mono_ns(), __ATOMIC_RELAXED);
	st(&fc->yields, ld(&fc->yields) + 1);
	if (!fc->cfg.yield_sleep) {
		sched_yield();
		return;
	}
	deadline = flow_mono_ns() + fc->cfg.yield_sleep;
	ts.tv_sec = (time_t)(deadline / NS_PER_S);
	ts.tv_nsec = (long)(deadline % NS_PER_S);
	pthread_mutex_lock(&fc->wk_lock);
	while (!fc->wk_stop && flow_mono_ns() < deadline)
		if (pthread_cond_timedwait(&fc->wk_cond, &fc->wk_lock, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&fc->wk_lock);
}

/*
 * Scan up to n sets from *rover, stopping early once removed >= stop_at
 * (0: never) or the cache is being stopped. Empty sets (one 8-byte load
 * of the tags) count 1/64 of a used one towards the yield check.
 */
static uint64_t
flow_scan_run(struct flow_cache *fc, uint32_t *rover, uint64_t n, struct flow_scan *sc,
	      uint64_t stop_at)
{
	struct flow_set *const sets = fc->sets;
	const uint32_t mask = fc->mask;
	int *const want = &fc->want_cpu;
	uint32_t r = *rover;
	const int64_t check = (int64_t)fc->cfg.yield_check * 64;
	int64_t left = check;
	uint64_t i, t0 = check ? flow_mono_ns() : 0, base = sc->idle + sc->stale;

	urcu_memb_read_lock();
	for (i = 0; i < n; i++, r = (r + 1) & mask) {
		if (!__atomic_load_n(&sets[r].tags, __ATOMIC_RELAXED)) {
			left -= 1;
		} else {
			flow_scan_set(fc, r, sc);
			left -= 64;
			if (stop_at && sc->idle + sc->stale - base >= stop_at) {
				i++;
				r = (r + 1) & mask;
				break;
			}
		}
		if (!check)
			continue;
		if ((left > 0 || (i & 63)) && !__atomic_load_n(want, __ATOMIC_RELAXED))
			continue;
		if (left > 0 && !__atomic_load_n(want, __ATOMIC_RELAXED))
			continue;
		left = check;
		if (!__atomic_load_n(want, __ATOMIC_RELAXED) &&
		    flow_mono_ns() - t0 < fc->cfg.scan_budget)
			continue;
		if (__atomic_load_n(&fc->stopping, __ATOMIC_RELAXED)) {
			i++;
			r = (r + 1) & mask;
			break;
		}
		urcu_memb_read_unlock();
		flow_yield(fc);
		urcu_memb_read_lock();
		if (__atomic_load_n(&fc->stopping, __ATOMIC_RELAXED)) {
			i++;
			r = (r + 1) & mask;
			break;
		}
		t0 = flow_mono_ns();
	}
	urcu_memb_read_unlock();
	*rover = r;
	sc->scanned += i;
	return sc->idle + sc->stale - base;
}

static void
flow_gc_account(struct flow_cache *fc, uint64_t t0, const struct flow_scan *sc)
{
	uint64_t dt = flow_mono_ns() - t0;

	st(&fc->gc_ns_last, dt);
	if (dt > ld(&fc->gc_ns_max))
		st(&fc->gc_ns_max, dt);
	st(&fc->buckets_scanned, ld(&fc->buckets_scanned) + sc->scanned);
	st(&fc->expired_stale, ld(&fc->expired_stale) + sc->stale);
}

static void
flow_scan_init(struct flow_cache *fc, const struct fib *fib, uint64_t now, struct flow_scan *sc,
	       int mode)
{
	sc->fib = fib;
	sc->fgen = fib ? fib_generation(fib) : 0;
	sc->now = flow_ms(now);
	sc->tmo = fc->cfg.gc_timeout / 1000000u;
	sc->mode = mode;
}

static void
flow_expire_locked(struct flow_cache *fc, const struct fib *fib, uint64_t now, uint64_t n,
		   uint64_t t0, struct flow_scan *sc)
{
	flow_scan_init(fc, fib, now, sc, SCAN_EXPIRE);
	flow_scan_run(fc, &fc->rover, n, sc, 0);
	st(&fc->gc_runs, ld(&fc->gc_runs) + 1);
	st(&fc->expired_idle, ld(&fc->expired_idle) + sc->idle);
	flow_gc_account(fc, t0, sc);
}

long
flow_cache_expire(struct flow_cache *fc, const struct fib *fib, uint64_t now)
{
	struct flow_scan sc = {0};
	unsigned __int128 num;
	uint64_t elapsed, goal, nb = (uint64_t)fc->mask + 1, t0 = flow_mono_ns();

	pthread_mutex_lock(&fc->gc_lock);
	elapsed = now > fc->last_expire ? now - fc->last_expire : 0;
	fc->last_expire = now;
	num = (unsigned __int128)elapsed * nb + fc->goal_frac;
	goal = (uint64_t)(num / fc->cfg.gc_timeout);
	fc->goal_frac = (uint64_t)(num % fc->cfg.gc_timeout);
	if (goal >= nb) {
		goal = nb;
		fc->goal_frac = 0;
	}
	flow_expire_locked(fc, fib, now, goal, t0, &sc);
	pthread_mutex_unlock(&fc->gc_lock);
	return (long)(sc.idle + sc.stale);
}

long
flow_cache_scan(struct flow_cache *fc, const struct fib *fib, uint64_t now, uint64_t n)
{
	struct flow_scan sc = {0};
	uint64_t t0 = flow_mono_ns();

	pthread_mutex_lock(&fc->gc_lock);
	flow_expire_locked(fc, fib, now, n, t0, &sc);
	pthread_mutex_unlock(&fc->gc_lock);
	return (long)(sc.idle + sc.stale);
}

long
flow_cache_gc(struct flow_cache *fc, const struct fib *fib, uint64_t now)
{
	struct flow_scan sc = {0};
	uint64_t n, goal, removed = 0, nb = (uint64_t)fc->mask + 1, t0 = flow_mono_ns();

	pthread_mutex_lock(&fc->gc_lock);
	n = __atomic_load_n(&fc->entries, __ATOMIC_RELAXED);
	if (n <= fc->thresh) {
		pthread_mutex_unlock(&fc->gc_lock);
		return 0;
	}
	goal = n - fc->target;
	flow_scan_init(fc, fib, now, &sc, SCAN_PRESSURE);
	for (;;) {
		sc.kept_age_max = 0;
		removed += flow_scan_run(fc, &fc->prover, nb, &sc, goal - removed);
		if (removed >= goal || __atomic_load_n(&fc->stopping, __ATOMIC_RELAXED))
			break;
		if (sc.mode == SCAN_FORCE)
			break;
		sc.tmo >>= 1;
		if (sc.tmo > sc.kept_age_max / 2)
			sc.tmo = sc.kept_age_max / 2;
		if (sc.tmo == 0)
			sc.mode = SCAN_FORCE;
	}
	st(&fc->gc_pressure_runs, ld(&fc->gc_pressure_runs) + 1);
	st(&fc->evict_size, ld(&fc->evict_size) + sc.idle);
	flow_gc_account(fc, t0, &sc);
	pthread_mutex_unlock(&fc->gc_lock);
	return (long)removed;
}

void
flow_cache_flush(struct flow_cache *fc)
{
	uint32_t b, dead[FLOW_WAYS];
	unsigned w, nd;

	urcu_memb_read_lock();
	for (b = 0; b <= fc->mask; b++) {
		struct flow_stripe *s = &fc->stripes[b & fc->stripe_mask];

		if (!__atomic_load_n(&fc->sets[b].tags, __ATOMIC_RELAXED))
			continue;
		pthread_mutex_lock(&s->lock);
		for (w = 0, nd = 0; w < FLOW_WAYS; w++)
			if (fc->sets[b].tag[w])
				dead[nd++] = flow_way_clear(fc, b, w);
		pthread_mutex_unlock(&s->lock);
		__atomic_add_fetch(&fc->flushed, nd, __ATOMIC_RELAXED);
		for (w = 0; w < nd; w++)
			flow_rec_put(fc, dead[w]);
	}
	urcu_memb_read_unlock();
	pthread_mutex_lock(&fc->rc_lock);
	flow_batch_push(fc, true);
	pthread_mutex_unlock(&fc->rc_lock);
}
/* Worker. */
static void *
flow_worker(void *arg)
{
	struct flow_cache *fc = arg;
	uint64_t now, next, last_pressure, half, wait, deadline;
	struct timespec ts;

	fib_thread_online();
	pthread_mutex_lock(&fc->wk_lock); /* the gc_* tunables live under it */
	now = flow_now(fc);
	half = fc->cfg.gc_interval / 2;
	/* first run jittered in [interval/2, interval] */
	next = now + half + (fc->cfg.secret[0] ^ fc->cfg.secret[1]) % (half + 1);
	last_pressure = now - fc->cfg.gc_min_interval;
	while (!fc->wk_stop) {
		__atomic_store_n(&fc->wk_beat, flow_mono_ns(), __ATOMIC_RELAXED);
		now = flow_now(fc);
		st(&fc->tick_now, now);
		if (__atomic_load_n(&fc->pressure, __ATOMIC_ACQUIRE) &&
		    now - last_pressure >= fc->cfg.gc_min_interval) {
			__atomic_store_n(&fc->pressure, 0, __ATOMIC_RELEASE);
			pthread_mutex_unlock(&fc->wk_lock);
			flow_cache_gc(fc, fc->wk_fib, now);
			pthread_mutex_lock(&fc->wk_lock);
			last_pressure = now;
			continue;
		}
		if (now >= next) {
			pthread_mutex_unlock(&fc->wk_lock);
			flow_cache_expire(fc, fc->wk_fib, now);
			pthread_mutex_lock(&fc->wk_lock);
			next = now + fc->cfg.gc_interval;
			continue;
		}
		wait = next - now;
		if (wait > (fc->touch_ms + 1ull) * 500000u)
			wait = (fc->touch_ms + 1ull) * 500000u;
		if (__atomic_load_n(&fc->pressure, __ATOMIC_ACQUIRE) &&
		    last_pressure + fc->cfg.gc_min_interval - now < wait)
			wait = last_pressure + fc->cfg.gc_min_interval - now;
		deadline = flow_mono_ns() + wait;
		ts.tv_sec = (time_t)(deadline / NS_PER_S);
		ts.tv_nsec = (long)(deadline % NS_PER_S);
		pthread_cond_timedwait(&fc->wk_cond, &fc->wk_lock, &ts);
	}
	pthread_mutex_unlock(&fc->wk_lock);
	fib_thread_offline();
	return NULL;
}

int
flow_cache_start(struct flow_cache *fc, const struct fib *fib)
{
	int rc;

	if (fc->wk_running)
		return -EALREADY;
	fc->wk_fib = fib;
	fc->wk_stop = false;
	__atomic_store_n(&fc->stopping, 0, __ATOMIC_RELAXED);
	st(&fc->tick_now, flow_now(fc));
	__atomic_store_n(&fc->wk_beat, flow_mono_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&fc->ticking, 1, __ATOMIC_RELAXED);
	rc = flow_fault(&fc->fail_after) ? EAGAIN
					 : pthread_create(&fc->wk_thread, NULL, flow_worker, fc);
	if (rc) {
		__atomic_store_n(&fc->ticking, 0, __ATOMIC_RELAXED);
		return -rc;
	}
	fc->wk_running = true;
	return 0;
}

void
flow_cache_stop(struct flow_cache *fc)
{
	if (!fc->wk_running)
		return;
	__atomic_store_n(&fc->stopping, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&fc->want_cpu, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&fc->wk_lock);
	fc->wk_stop = true;
	pthread_cond_signal(&fc->wk_cond);
	pthread_mutex_unlock(&fc->wk_lock);
	pthread_join(fc->wk_thread, NULL);
	fc->wk_running = false;
	__atomic_store_n(&fc->ticking, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fc->stopping, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fc->want_cpu, 0, __ATOMIC_RELAXED);
}

int
flow_cache_alive(const struct flow_cache *fc, uint64_t max_age)
{
	uint64_t beat = __atomic_load_n(&fc->wk_beat, __ATOMIC_RELAXED);
	uint64_t now = flow_mono_ns();

	if (!fc->wk_running)
		return 0;
	return now < beat || now - beat <= max_age;
}

void
flow_cache_want_cpu(struct flow_cache *fc)
{
	__atomic_store_n(&fc->want_cpu, 1, __ATOMIC_RELAXED);
}
void
flow_cache_free(struct flow_cache *fc)
{
	uint32_t i;

	if (!fc)
		return;
	flow_cache_stop(fc);
	pthread_mutex_lock(&fc->rc_lock);
	flow_batch_push(fc, true);
	pthread_mutex_unlock(&fc->rc_lock);
	urcu_memb_barrier();
	FLOW_TSAN_ACQUIRE(fc);
	free(fc->batch);
	for (i = 0; i <= fc->stripe_mask; i++)
		pthread_mutex_destroy(&fc->stripes[i].lock);
	for (i = 0; i < FLOW_ISTRIPES; i++)
		pthread_mutex_destroy(&fc->ilock[i]);
	pthread_mutex_destroy(&fc->mask_lock);
	pthread_mutex_destroy(&fc->free_lock);
	pthread_mutex_destroy(&fc->adapt_lock);
	pthread_mutex_destroy(&fc->gc_lock);
	pthread_mutex_destroy(&fc->rc_lock);
	pthread_mutex_destroy(&fc->wk_lock);
	pthread_cond_destroy(&fc->wk_cond);
	free(fc->sets);
	free(fc->keys);
	free(fc->recs);
	free(fc->iheads);
	free(fc->stripes);
	free(fc);
}

/*
 * Live tunables: the expiry timing and the yield checks change in place;
 * the rest sizes or keys the table and needs a new cache.
 */
int
flow_cache_reconfigure(struct flow_cache *fc, const struct flow_config *c)
{
	const struct flow_config *o = &fc->cfg;
	flow_clock_fn clock = c->clock ? c->clock : flow_coarse_ns;

	if (c->gc_interval == 0 || c->gc_timeout == 0)
		return -EINVAL;
	if (c->enabled != o->enabled || flow_pow2(c->buckets) != (uint64_t)fc->mask + 1 ||
	    c->max_entries != o->max_entries || c->chain_cap != o->chain_cap ||
	    c->admit != o->admit || c->doorkeeper_bits_log != o->doorkeeper_bits_log ||
	    c->bypass_below != o->bypass_below || c->secret[0] != o->secret[0] ||
	    c->secret[1] != o->secret[1] || clock != o->clock ||
	    (c->clock && c->clock_arg != o->clock_arg) ||
	    (c->reclaim_bytes ? c->reclaim_bytes : 4096) != o->reclaim_bytes)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&fc->gc_lock); /* order: gc_lock, then wk_lock */
	pthread_mutex_lock(&fc->wk_lock);
	fc->cfg.gc_interval = c->gc_interval;
	fc->cfg.gc_timeout = c->gc_timeout;
	fc->cfg.gc_min_interval = c->gc_min_interval;
	fc->cfg.gc_elasticity = c->gc_elasticity;
	fc->cfg.scan_budget = c->scan_budget;
	fc->cfg.yield_check = c->yield_check;
	fc->cfg.yield_sleep = c->yield_sleep;
	fc->target = (uint64_t)c->max_entries * 3 / 4;
	if ((uint64_t)c->gc_elasticity * (fc->mask + 1ull) < fc->target)
		fc->target = (uint64_t)c->gc_elasticity * (fc->mask + 1ull);
	pthread_cond_signal(&fc->wk_cond);
	pthread_mutex_unlock(&fc->wk_lock);
	pthread_mutex_unlock(&fc->gc_lock);
	return 0;
}

static uint64_t
flow_tick_ns(const struct flow_cache *fc, uint64_t ticks)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t dt = flow_ticks() - fc->tsc0, dn = flow_mono_ns() - fc->ns0;

	return dt ? (uint64_t)((double)ticks * (double)dn / (double)dt) : 0;
#else
	(void)fc;
	return ticks;
#endif
}

/* Introspection. */
void
flow_cache_stats(struct flow_cache *fc, struct flow_stats *st_)
{
	uint32_t i;

	memset(st_, 0, sizeof(*st_));
	for (i = 0; i <= fc->stripe_mask; i++) {
		struct flow_stripe *s = &fc->stripes[i];

		st_->hits += ld(&s->hits);
		st_->misses += ld(&s->misses);
		st_->invalid_route += ld(&s->invalid_route);
		st_->invalid_policy += ld(&s->invalid_policy);
		st_->admit_deferred += ld(&s->admit_skipped);
		st_->insert_odd += ld(&s->insert_odd);
		st_->bypass_default += ld(&s->bypass_default);
		st_->bypassed += ld(&s->bypass_samples);
		st_->insert_norec += ld(&s->insert_norec);
		st_->samples += ld(&s->hit_n) + ld(&s->res_n);
		pthread_mutex_lock(&s->lock);
		st_->inserts += s->inserts;
		st_->evict_lru += s->evict_lru;
		st_->insert_full += s->insert_full;
		pthread_mutex_unlock(&s->lock);
	}
	st_->stale_hits = st_->invalid_route + st_->invalid_policy;
	st_->evict_chain = st_->evict_lru;
	st_->bypassed += st_->bypass_default;
	st_->lookups = st_->hits + st_->misses + st_->bypassed;
	st_->evict_size = ld(&fc->evict_size);
	st_->expired_idle = ld(&fc->expired_idle);
	st_->expired_stale = ld(&fc->expired_stale);
	st_->flushed = ld(&fc->flushed);
	st_->entries = __atomic_load_n(&fc->entries, __ATOMIC_RELAXED);
	st_->gc_runs = ld(&fc->gc_runs);
	st_->gc_pressure_runs = ld(&fc->gc_pressure_runs);
	st_->buckets_scanned = ld(&fc->buckets_scanned);
	st_->gc_ns_last = ld(&fc->gc_ns_last);
	st_->gc_ns_max = ld(&fc->gc_ns_max);
	st_->yields = ld(&fc->yields);
	st_->bypass = (uint64_t)__atomic_load_n(&fc->bypass, __ATOMIC_RELAXED);
	st_->bypass_entered = ld(&fc->bypass_entered);
	st_->records = __atomic_load_n(&fc->live_recs, __ATOMIC_RELAXED);
	st_->admit_n = 1ull << __atomic_load_n(&fc->admit_shift, __ATOMIC_RELAXED);
	st_->mask_updates = ld(&fc->mask_updates);
	st_->mask4 = ld32(&fc->masks[0].fields);
	st_->mask6 = ld32(&fc->masks[1].fields);
	pthread_mutex_lock(&fc->adapt_lock);
	st_->hit_ns = flow_tick_ns(fc, fc->c_hit);
	st_->resolve_ns = flow_tick_ns(fc, fc->c_res);
	st_->probe_miss_ns = flow_tick_ns(fc, fc->c_pm);
	st_->insert_ns = flow_tick_ns(fc, fc->c_ins);
	pthread_mutex_unlock(&fc->adapt_lock);
	pthread_mutex_lock(&fc->rc_lock);
	st_->reclaim = fc->rc;
	st_->batch_nomem = fc->batch_nomem;
	st_->records_pending = fc->pending_recs;
	pthread_mutex_unlock(&fc->rc_lock);
	if (st_->reclaim.gp_ns_min == UINT64_MAX)
		st_->reclaim.gp_ns_min = 0;
	st_->bytes = sizeof(*fc) + ((uint64_t)fc->mask + 1) * (64 + FLOW_WAYS * 64) +
		     ((uint64_t)fc->stripe_mask + 1) * sizeof(*fc->stripes) +
		     ((uint64_t)fc->imask + 1) * 4 + (uint64_t)fc->fresh * sizeof(struct flow_rec);
}

unsigned
flow_cache_chain_max(struct flow_cache *fc)
{
	unsigned n, max = 0, w;
	uint32_t b;

	for (b = 0; b <= fc->mask && max < FLOW_WAYS; b++) {
		for (n = 0, w = 0; w < FLOW_WAYS; w++)
			n += __atomic_load_n(&fc->sets[b].tag[w], __ATOMIC_RELAXED) != 0;
		if (n > max)
			max = n;
	}
	return max;
}

int
flow_cache_walk(struct flow_cache *fc, int (*cb)(const struct flow_entry_info *e, void *arg),
		void *arg)
{
	struct flow_entry_info info;
	uint32_t b;
	unsigned w;
	int rc = 0;

	for (b = 0; b <= fc->mask && !rc; b++) {
		struct flow_stripe *s = &fc->stripes[b & fc->stripe_mask];
		struct flow_set *set = &fc->sets[b];

		if (!__atomic_load_n(&set->tags, __ATOMIC_RELAXED))
			continue;
		pthread_mutex_lock(&s->lock);
		for (w = 0; w < FLOW_WAYS && !rc; w++) {
			const union flow_fkey *k = &fc->keys[(size_t)b * FLOW_WAYS + w];
			const struct flow_rec *r = &fc->recs[set->rec[w]];

			if (!set->tag[w])
				continue;
			memset(&info, 0, sizeof(info));
			info.legacy = (k->k.flags & FLOW_K_LEGACY) != 0;
			if (info.legacy) {
				info.key.dst = k->k.dst;
				info.key.src = k->k.src;
				info.key.iif = k->k.iif;
				info.key.table = k->k.aux;
				info.key.family = k->k.family;
				info.key.tos = k->k.tos;
				memcpy(&info.res, r->d.prefix.b, sizeof(info.res));
			} else {
				info.flow.family = k->k.family;
				info.flow.tos = k->k.tos;
				info.flow.ipproto = k->k.proto;
				info.flow.flags = k->k.flags;
				info.flow.iif = k->k.iif;
				info.flow.oif = k->k.oif;
				info.flow.mark = k->k.mark;
				info.flow.uid = k->k.uid;
				info.flow.sport = k->k.sport;
				info.flow.dport = k->k.dport;
				info.flow.flowlabel = k->k.aux;
				info.flow.dst = k->k.dst;
				info.flow.src = k->k.src;
				info.d = r->d;
			}
			info.bucket = b;
			info.way = w;
			info.record = set->rec[w];
			info.gen = set->gen[w];
			info.last_use = set->used[w];
			rc = cb(&info, arg);
		}
		pthread_mutex_unlock(&s->lock);
	}
	return rc;
}

int
flow_cache_check(struct flow_cache *fc, char *buf, size_t len)
{
	uint32_t *refs, b, id, nfree = 0, nchain = 0;
	uint64_t used = 0, nlive = 0, h;
	unsigned w, v;
	int err = 0;

#define FLOW_BAD(...)                                    \
	do {                                             \
		if (buf && len)                          \
			snprintf(buf, len, __VA_ARGS__); \
		err = -EUCLEAN;                          \
	} while (0)
	refs = calloc((size_t)fc->nrecs + 1, sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	for (b = 0; b <= fc->mask && !err; b++) {
		struct flow_stripe *s = &fc->stripes[b & fc->stripe_mask];
		struct flow_set *set = &fc->sets[b];

		pthread_mutex_lock(&s->lock);
		for (w = 0; w < FLOW_WAYS && !err; w++) {
			const union flow_fkey *k = &fc->keys[(size_t)b * FLOW_WAYS + w];

			if (k->u[15] & 1)
				FLOW_BAD("set %u way %u: seq odd", b, w);
			if (!set->tag[w])
				continue;
			used++;
			h = flow_hash(fc, k);
			if (((uint32_t)h & fc->mask) != b)
				FLOW_BAD("set %u: way %u of set %u", b, w, (uint32_t)h & fc->mask);
			else if (set->tag[w] != flow_tag(h))
				FLOW_BAD("set %u way %u: tag %#x, key hashes to %#x", b, w,
					 set->tag[w], flow_tag(h));
			else if (!set->rec[w] || set->rec[w] >= fc->fresh)
				FLOW_BAD("set %u way %u: record %u", b, w, set->rec[w]);
			else
				refs[set->rec[w]]++;
			for (v = w + 1; v < FLOW_WAYS && !err; v++)
				if (set->tag[v] &&
				    flow_fkey_eq(&fc->keys[(size_t)b * FLOW_WAYS + v], k))
					FLOW_BAD("set %u: a key twice", b);
		}
		pthread_mutex_unlock(&s->lock);
	}
	for (id = 1; id < fc->fresh && !err; id++) {
		uint32_t r = __atomic_load_n(&fc->recs[id].refs, __ATOMIC_RELAXED);

		if (r != FLOW_REC_DEAD && r != refs[id])
			FLOW_BAD("record %u: %u references, %u ways", id, r, refs[id]);
		else if (r == FLOW_REC_DEAD && refs[id])
			FLOW_BAD("record %u: dead with %u ways", id, refs[id]);
		if (r != FLOW_REC_DEAD && r)
			nlive++;
	}
	for (b = 0; b <= fc->imask && !err; b++)
		for (id = fc->iheads[b]; id && !err; id = fc->recs[id].next) {
			nchain++;
			if (fc->recs[id].refs == FLOW_REC_DEAD)
				FLOW_BAD("record %u: dead in an intern chain", id);
		}
	pthread_mutex_lock(&fc->rc_lock);
	pthread_mutex_lock(&fc->free_lock);
	for (id = fc->free_head; id; id = fc->recs[id].next)
		nfree++;
	pthread_mutex_unlock(&fc->free_lock);
	free(refs);
	if (!err && used != __atomic_load_n(&fc->entries, __ATOMIC_RELAXED))
		FLOW_BAD("%llu ways used, count says %llu", (unsigned long long)used,
			 (unsigned long long)fc->entries);
	if (!err && nlive != __atomic_load_n(&fc->live_recs, __ATOMIC_RELAXED))
		FLOW_BAD("%llu live records, count says %llu", (unsigned long long)nlive,
			 (unsigned long long)fc->live_recs);
	if (!err && nchain != nlive)
		FLOW_BAD("%u records interned, %llu live", nchain, (unsigned long long)nlive);
	if (!err && nlive + fc->pending_recs + nfree != fc->fresh - 1u)
		FLOW_BAD("records: %llu live + %llu pending + %u free != %u",
			 (unsigned long long)nlive, (unsigned long long)fc->pending_recs, nfree,
			 fc->fresh - 1);
	pthread_mutex_unlock(&fc->rc_lock);
#undef FLOW_BAD
	return err;
}
