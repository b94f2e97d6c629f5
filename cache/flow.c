/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: flow cache: keyed hash, RCU chains, doorkeeper admission, expiry
 *
 * Layout:
 *
 *   buckets[]  (2^n heads, 8 bytes each)       stripes[] (locks + counters)
 *   +------+                                    bucket b uses stripe
 *   |  *---+--> entry -> entry -> NULL           b & stripe_mask
 *   | NULL |     (newest first, <= chain_cap)
 *   |  *---+--> entry -> NULL                 doorkeeper: 2^k bits, one per
 *   +------+                                    keyed-hash value; reset at
 *                                               1/16 fill
 *
 * An entry is immutable once published except last_use (relaxed, written
 * at most once per touch granule). Readers walk a chain with acquire
 * loads and no lock; writers (insert, expiry, flush) hold the bucket's
 * stripe lock and unlink with release stores, leaving the unlinked
 * entry's next pointer intact for readers still on it. Unlinked entries
 * collect in a batch freed by call_rcu once it holds reclaim_bytes.
 *
 * Generation rule: a miss reads fib_generation() before fib_lookup_rcu()
 * and tags the new entry with it, so an entry never claims a generation
 * newer than the trie it was computed from. libfib's generation is odd
 * while a change is in progress (fib_begin .. fib_end bump it twice) and
 * even between changes. So:
 *
 *   - no entry is inserted at an odd generation (flow_insert refuses it,
 *     insert_odd): what a reader finds during a change may be what the
 *     change is retiring, and only the second bump makes it stale;
 *   - a hit requires entry gen == fib_generation() and that generation
 *     even: an entry recorded at an odd generation is never returned,
 *     even if one got in (defence in depth; flow_cache_check reports it).
 *
 * libfib also holds a change's reclamation batches until the second bump
 * (fib/fib.c, fib_end): any one of the three prevents a hit on freed
 * memory, and the crash the soak test found (tests/soak/README.md) needed
 * all three missing. For an entry of an even generation G: the next
 * change moves the generation past G before it retires anything, so a
 * reader that still sees G is inside a read section that the grace period
 * of that memory waits for.
 *
 * Hash: SipHash-1-3 (Aumasson, Bernstein 2012) with the caller's 128-bit
 * secret, over the packed key (3 words for IPv4, 6 for IPv6). Low bits pick
 * the bucket, high bits the doorkeeper bit and the 32-bit tag compared
 * before the key.
 *
 * Expiry: net/ipv4/route.c rt_check_expire (periodic share of the table
 * from a rover, timeout halved per entry kept in a chain) and
 * rt_garbage_collect (pressure: halve the timeout until the goal is met).
 * The scanner reads each chain lock-free inside an RCU read section and
 * takes the stripe lock only for a bucket that has something to remove;
 * it leaves the read section whenever it yields, so a grace period waits
 * at most one scan budget (2 ms) for it, as a softirq's budget.
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
#include "cache/flow.h"

#define FLOW_STRIPES_MAX 1024
#define FLOW_TOUCH_NS 1000000000ull /* last_use granule: at most 1 s */
/* Time-budget checks come every yield_check non-empty buckets, or every
 * yield_check * FLOW_WORK_LOCKED empty ones: a clock read costs 20-50 ns
 * on a VM, an empty bucket 0.3-1 ns, a non-empty one about 100. */
#define FLOW_WORK_LOCKED 256
/* Empty buckets skipped between two tests of the "someone is waiting"
 * flag (a non-empty bucket is always followed by one): leaving the skip
 * loop costs a mispredicted branch, 512 empty heads take 150-500 ns. */
#define FLOW_SKIP_RUN 512
#define NS_PER_S 1000000000ull

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FLOW_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define FLOW_TSAN 1
#endif
/*
 * TSAN cannot see urcu grace periods or the call_rcu queue: lock-free
 * readers release the cache after their last entry access, the writer
 * releases a batch before call_rcu, and the callback acquires both
 * before freeing.
 */
#ifdef FLOW_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define FLOW_TSAN_RELEASE(p) __tsan_release(p)
#define FLOW_TSAN_ACQUIRE(p) __tsan_acquire(p)
#else
#define FLOW_TSAN_RELEASE(p) ((void)(p))
#define FLOW_TSAN_ACQUIRE(p) ((void)(p))
#endif

struct flow_entry {
	struct flow_entry *next; /* RCU chain */
	uint32_t tag;
	uint32_t pad_;
	struct flow_key key;     /* 48: the first line ends here */
	uint64_t gen;
	uint64_t last_use; /* relaxed */
	struct fib_result res;
	struct flow_entry *retire_next;
};
#define FLOW_ENTRY_SIZE 128
_Static_assert(sizeof(struct flow_entry) <= FLOW_ENTRY_SIZE, "flow_entry fits 128 bytes");

/* Lock and counters of a share of the buckets, one cache line or more. */
struct flow_stripe {
	pthread_mutex_t lock;
	/* lookup path, no lock: relaxed and lossy under concurrency */
	uint64_t hits, misses, stale_hits, admit_deferred, insert_full, insert_odd,
		bypass_samples;
	/* under lock */
	uint64_t inserts, evict_chain, stale_removed;
} __attribute__((aligned(64)));

struct flow_batch {
	struct rcu_head rcu;
	struct flow_cache *fc;
	struct flow_entry *list;
	uint64_t bytes;
	uint64_t queued_ns;
};

/* Read-mostly fields first; fields written on the lookup path each get
 * their own cache line so that hits on other threads do not miss. */
struct flow_cache {
	struct flow_config cfg;
	uint32_t mask;
	uint32_t stripe_mask;
	struct flow_entry **buckets;
	struct flow_stripe *stripes;
	uint64_t *door;
	uint64_t door_mask; /* bits - 1 */
	uint64_t door_limit;
	uint64_t thresh, target;
	uint64_t touch_ns;

	/* read on every lookup, written rarely */
	uint64_t tick_now __attribute__((aligned(64))); /* the clock, refreshed by the worker */
	int ticking;         /* atomic: tick_now is live */
	int bypass;          /* relaxed: hit rate low, most flows skip the cache */
	int want_cpu;        /* atomic */
	int stopping;        /* atomic */

	uint64_t entries __attribute__((aligned(64))); /* atomic, every insert */
	int pressure;        /* atomic */
	uint64_t insert_nomem; /* atomic, rare */
	long fail_after;     /* atomic: test hook (FIB_FAULT_INJECTION) */
	uint64_t door_fill __attribute__((aligned(64))); /* relaxed, sampled */
	uint64_t door_resets;
	pthread_mutex_t door_lock;
	pthread_mutex_t adapt_lock;
	uint64_t adapt_hits, adapt_misses; /* sums at the last evaluation */
	uint64_t bypass_entered;

	/* scanners, under gc_lock; counters read relaxed by flow_cache_stats */
	pthread_mutex_t gc_lock;
	uint32_t rover, prover;
	uint64_t last_expire;
	uint64_t goal_frac;
	uint64_t gc_runs, gc_pressure_runs, buckets_scanned, gc_ns_last, gc_ns_max, yields;
	uint64_t expired_idle, expired_stale, evict_size, flushed;

	/* reclamation */
	pthread_mutex_t rc_lock;
	struct flow_batch *batch;
	struct fib_reclaim_stats rc;
	uint64_t batch_nomem;

	/* worker */
	pthread_mutex_t wk_lock;
	pthread_cond_t wk_cond;
	pthread_t wk_thread;
	bool wk_running;
	bool wk_stop;
	const struct fib *wk_fib;
	uint64_t wk_beat; /* atomic: flow_mono_ns() of the worker's last wakeup */
};

/* Types above; helpers, hash, lookup, insert, reclamation, expiry, worker,
 * introspection below. */

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

/* Lossy increment: no lock prefix on the lookup path. */
static inline void
inc(uint64_t *p)
{
	st(p, ld(p) + 1);
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

static inline uint64_t
flow_now(const struct flow_cache *fc)
{
	return fc->cfg.clock(fc->cfg.clock_arg);
}

/*
 * The lookup path's clock: while the worker runs it refreshes tick_now
 * every touch granule, so a hit reads one shared, rarely written word
 * instead of calling clock_gettime (50 ns on a VM's TSC, 14 ns coarse).
 */
static inline uint64_t
flow_now_fast(struct flow_cache *fc)
{
	if (__atomic_load_n(&fc->ticking, __ATOMIC_RELAXED))
		return ld(&fc->tick_now);
	return flow_now(fc);
}

/*
 * Fault injection (builds configured with --enable-fault-injection, and
 * tests/fault/flow_fault_test): true when the allocation about to be made
 * is the one *left counts down to. Every allocation site of this file
 * asks first, so a test can fail each in turn.
 */
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

static inline uint64_t
flow_hash(const struct flow_cache *fc, const struct flow_key *k)
{
	uint64_t m[6];
	uint32_t d, s;

	if (k->family == AF_INET) {
		memcpy(&d, k->dst.b, 4);
		memcpy(&s, k->src.b, 4);
		m[0] = (uint64_t)d | (uint64_t)s << 32;
		m[1] = (uint64_t)k->table | (uint64_t)k->iif << 32;
		m[2] = (uint64_t)k->tos | (uint64_t)k->family << 8;
		return flow_siphash13(fc->cfg.secret, m, 3);
	}
	memcpy(m, k->dst.b, 16);
	memcpy(m + 2, k->src.b, 16);
	m[4] = (uint64_t)k->table | (uint64_t)k->iif << 32;
	m[5] = (uint64_t)k->tos | (uint64_t)k->family << 8;
	return flow_siphash13(fc->cfg.secret, m, 6);
}

static inline bool
flow_key_eq(const struct flow_key *a, const struct flow_key *b)
{
	const uint64_t *x = (const uint64_t *)(const void *)a;
	const uint64_t *y = (const uint64_t *)(const void *)b;

	_Static_assert(sizeof(struct flow_key) == 48, "flow_key is 6 words");
	return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3]) |
		(x[4] ^ y[4]) | (x[5] ^ y[5])) == 0;
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
	return (uint32_t)flow_hash(fc, key) & fc->mask;
}

/*
 * Bucket heads: 2 MiB aligned and advised into transparent huge pages
 * when that large (THP is often "madvise" only): a scan or a lookup then
 * misses the TLB once per 256K heads instead of once per 512.
 */
#define FLOW_HUGE (2u << 20)

static void *
flow_alloc_table(size_t bytes)
{
	void *p;

	if (bytes < FLOW_HUGE)
		return malloc(bytes);
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
	uint64_t nb, ns, i;
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
	fc->buckets = flow_fault(&left) ? NULL : flow_alloc_table(nb * sizeof(*fc->buckets));
	if (flow_fault(&left) ||
	    posix_memalign((void **)&fc->stripes, 64, ns * sizeof(*fc->stripes)))
		fc->stripes = NULL;
	fc->door_mask = (1ull << c->doorkeeper_bits_log) - 1;
	fc->door = flow_fault(&left) ? NULL : malloc((fc->door_mask + 1) / 8);
	fc->batch = flow_fault(&left) ? NULL : calloc(1, sizeof(*fc->batch));
	if (!fc->buckets || !fc->stripes || !fc->door || !fc->batch) {
		free(fc->buckets);
		free(fc->stripes);
		free(fc->door);
		free(fc->batch);
		free(fc);
		errno = ENOMEM;
		return NULL;
	}
	/* Written, not calloc'ed: the pages are faulted in now rather than
	 * on a lookup thread's first insert into each 4 KiB of heads (and an
	 * untouched table would be read from the shared zero page). */
	memset(fc->buckets, 0, nb * sizeof(*fc->buckets));
	memset(fc->door, 0, (fc->door_mask + 1) / 8);
	memset(fc->stripes, 0, ns * sizeof(*fc->stripes));
	for (i = 0; i < ns; i++)
		pthread_mutex_init(&fc->stripes[i].lock, NULL);
	fc->door_limit = (fc->door_mask + 1) / 16;
	pthread_mutex_init(&fc->door_lock, NULL);
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
	fc->touch_ns = c->gc_timeout / 16 < FLOW_TOUCH_NS ? c->gc_timeout / 16 : FLOW_TOUCH_NS;
	fc->rc.gp_ns_min = UINT64_MAX;
	fc->last_expire = flow_now(fc);
	fc->fail_after = left; /* the count goes on with the cache's own */
	return fc;
}

/*
 * Reclamation: entries unlinked under a stripe lock are chained through
 * retire_next into the current batch; a full batch goes to call_rcu.
 */
static void
flow_batch_free_rcu(struct rcu_head *head)
{
	struct flow_batch *b = caa_container_of(head, struct flow_batch, rcu);
	struct flow_cache *fc;
	struct flow_entry *e, *n;
	uint64_t gp;


	FLOW_TSAN_ACQUIRE(b);
	fc = b->fc;
	FLOW_TSAN_ACQUIRE(fc);
	gp = flow_mono_ns() - b->queued_ns;
	for (e = b->list; e; e = n) {
		n = e->retire_next;
		free(e);
	}
	pthread_mutex_lock(&fc->rc_lock);
	fc->rc.bytes_freed += b->bytes;
	fc->rc.bytes_pending -= b->bytes;
	fc->rc.grace_periods++;
	if (gp < fc->rc.gp_ns_min)
		fc->rc.gp_ns_min = gp;
	if (gp > fc->rc.gp_ns_max)
		fc->rc.gp_ns_max = gp;
	fc->rc.gp_ns_total += gp;
	pthread_mutex_unlock(&fc->rc_lock);
	free(b);
	FLOW_TSAN_RELEASE(fc); /* for flow_cache_free after rcu_barrier */
}

/* Hand the current batch to call_rcu if it is not empty (and, unless
 * force, full). Called with rc_lock held. */
static void
flow_batch_push(struct flow_cache *fc, bool force)
{
	struct flow_batch *b = fc->batch, *nb;

	if (!b->list || (!force && b->bytes < fc->cfg.reclaim_bytes))
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
	urcu_memb_call_rcu(&b->rcu, flow_batch_free_rcu);
}

static void
flow_retire(struct flow_cache *fc, struct flow_entry *list, unsigned n)
{
	struct flow_entry *tail;
	uint64_t bytes = (uint64_t)n * FLOW_ENTRY_SIZE;

	if (!list)
		return;
	for (tail = list; tail->retire_next; tail = tail->retire_next)
		;
	__atomic_sub_fetch(&fc->entries, n, __ATOMIC_RELAXED);
	pthread_mutex_lock(&fc->rc_lock);
	tail->retire_next = fc->batch->list;
	fc->batch->list = list;
	fc->batch->bytes += bytes;
	fc->rc.bytes_retired += bytes;
	fc->rc.bytes_pending += bytes;
	flow_batch_push(fc, false);
	pthread_mutex_unlock(&fc->rc_lock);
}

static inline struct flow_entry *
flow_deref(struct flow_entry **p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void
flow_publish(struct flow_entry **p, struct flow_entry *e)
{
	__atomic_store_n(p, e, __ATOMIC_RELEASE);
}

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
 * Set a doorkeeper bit; every 64th set (by hash) adds 64 to the fill
 * estimate, and past the limit one thread clears the filter. The bit is
 * set with a relaxed load and store, not a locked OR: a locked
 * instruction on every miss stops the CPU from overlapping consecutive
 * lookups (measured: all-miss 3x slower), and a bit lost to a racing
 * store only delays one flow's admission.
 */
static void
flow_door_set(struct flow_cache *fc, uint64_t *w, uint64_t m, uint64_t h)
{
	uint64_t i;

	st(w, ld(w) | m);
	if ((h >> 58) != 0)
		return;
	if (__atomic_add_fetch(&fc->door_fill, 64, __ATOMIC_RELAXED) < fc->door_limit)
		return;
	if (pthread_mutex_trylock(&fc->door_lock))
		return;
	if (ld(&fc->door_fill) >= fc->door_limit) {
		for (i = 0; i <= fc->door_mask / 64; i++)
			st(&fc->door[i], 0);
		st(&fc->door_fill, 0);
		inc(&fc->door_resets);
	}
	pthread_mutex_unlock(&fc->door_lock);
}

static void
flow_insert(struct flow_cache *fc, struct flow_stripe *s, uint32_t b, uint32_t tag,
	    const struct flow_key *key, uint64_t gen, const struct fib_result *res)
{
	struct flow_entry *e, *x, **pp, **oldest = NULL, *dead = NULL;
	unsigned count = 0, ndead = 0;

	/* A change is in progress: its answer may hold what it is retiring. */
	if (__builtin_expect(gen & 1, 0)) {
		inc(&s->insert_odd);
		return;
	}
	if (__atomic_load_n(&fc->entries, __ATOMIC_RELAXED) >= fc->cfg.max_entries) {
		inc(&s->insert_full);
		flow_pressure_request(fc);
		return;
	}
	/* 128-byte aligned: two whole cache lines, the chain link, tag and
	 * key in the first */
	e = flow_fault(&fc->fail_after) ? NULL : aligned_alloc(64, FLOW_ENTRY_SIZE);
	if (!e) {
		__atomic_add_fetch(&fc->insert_nomem, 1, __ATOMIC_RELAXED);
		return; /* the FIB's answer stands, uncached */
	}
	e->tag = tag;
	e->pad_ = 0;
	e->gen = gen;
	e->last_use = flow_now_fast(fc);
	e->res = *res;
	e->key = *key;
	e->retire_next = NULL;

	pthread_mutex_lock(&s->lock);
	pp = &fc->buckets[b];
	while ((x = *pp) != NULL) {
		if (x->tag == tag && flow_key_eq(&x->key, key) && x->gen >= gen) {
			/* another thread inserted it meanwhile */
			pthread_mutex_unlock(&s->lock);
			free(e);
			return;
		}
		if (x->gen < gen) {
			/* stale (or the old copy of this key): unlink */
			flow_publish(pp, x->next);
			x->retire_next = dead;
			dead = x;
			ndead++;
			s->stale_removed++;
			continue;
		}
		if (!oldest || ld(&x->last_use) <= ld(&(*oldest)->last_use))
			oldest = pp;
		count++;
		pp = &x->next;
	}
	if (count >= fc->cfg.chain_cap && oldest) {
		x = *oldest;
		flow_publish(oldest, x->next);
		x->retire_next = dead;
		dead = x;
		ndead++;
		s->evict_chain++;
	}
	e->next = fc->buckets[b];
	flow_publish(&fc->buckets[b], e);
	s->inserts++;
	pthread_mutex_unlock(&s->lock);

	if (__atomic_add_fetch(&fc->entries, 1, __ATOMIC_RELAXED) > fc->thresh)
		flow_pressure_request(fc);
	flow_retire(fc, dead, ndead);
}

/*
 * Bypass: 1 flow in FLOW_BYPASS_SAMPLE keeps using the cache while the
 * others go straight to the FIB. Picked by a cheap multiplicative hash of
 * the addresses: no SipHash and no cache line touched for the others.
 */
#define FLOW_BYPASS_SAMPLE 16

static inline bool
flow_sampled_w(uint64_t d0, uint64_t d1, uint64_t s0, uint64_t s1, uint32_t iif)
{
	return (((d0 ^ d1 * 0x9e3779b97f4a7c15ull ^ s0 ^ s1 * 0xc2b2ae3d27d4eb4full ^ iif) *
		 0x9e3779b97f4a7c15ull) >> 60) == 0;
}

static inline bool
flow_sampled(const struct flow_key *k)
{
	uint64_t w[4];

	memcpy(w, k->dst.b, 16);
	memcpy(w + 2, k->src.b, 16);
	return flow_sampled_w(w[0], w[1], w[2], w[3], k->iif);
}

/*
 * Evaluate the hit rate since the last evaluation (at least 1024
 * lookups, sampled ones while bypassing) and switch bypass with 10 points
 * of hysteresis. Called every 16 misses of a stripe, and every 256 hits
 * of one while bypassing (so that a rising rate is seen).
 */
static void
flow_adapt(struct flow_cache *fc)
{
	uint64_t h = 0, m = 0, dh, dm, rate;
	uint32_t i;
	int on;

	if (pthread_mutex_trylock(&fc->adapt_lock))
		return;
	for (i = 0; i <= fc->stripe_mask; i++) {
		h += ld(&fc->stripes[i].hits);
		m += ld(&fc->stripes[i].misses);
	}
	dh = h - fc->adapt_hits;
	dm = m - fc->adapt_misses;
	if (dh + dm >= 1024) {
		fc->adapt_hits = h;
		fc->adapt_misses = m;
		rate = dh * 100 / (dh + dm);
		on = __atomic_load_n(&fc->bypass, __ATOMIC_RELAXED);
		if (!on && rate < fc->cfg.bypass_below) {
			__atomic_store_n(&fc->bypass, 1, __ATOMIC_RELAXED);
			st(&fc->bypass_entered, ld(&fc->bypass_entered) + 1);
		} else if (on && rate >= fc->cfg.bypass_below + 10) {
			__atomic_store_n(&fc->bypass, 0, __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_unlock(&fc->adapt_lock);
}

/* One lookup's state between the phases of flow_lookup_rcu and of the
 * batch version. */
struct flow_probe {
	uint64_t h;
	uint64_t *w, m; /* doorkeeper word and bit; w NULL: no doorkeeper */
	uint32_t b, tag;
	int state;
};

enum { FLOW_P_FIB, FLOW_P_PROBE, FLOW_P_HIT, FLOW_P_MISS };

static inline void
flow_probe_hash(struct flow_cache *fc, const struct flow_key *key, struct flow_probe *p)
{
	uint64_t bit;

	p->h = flow_hash(fc, key);
	p->b = (uint32_t)p->h & fc->mask;
	p->tag = (uint32_t)(p->h >> 32);
	p->w = NULL;
	p->m = 0;
	if (fc->cfg.admit == FLOW_ADMIT_DOORKEEPER) {
		bit = (p->h >> 20) & fc->door_mask;
		p->w = &fc->door[bit >> 6];
		p->m = 1ull << (bit & 63);
	}
}

/* Chain walk; 1 and *res on a hit. */
static inline int
flow_probe_walk(struct flow_cache *fc, const struct flow_key *key, uint64_t gen, int bypass,
		struct flow_probe *p, struct fib_result *res)
{
	struct flow_stripe *s = &fc->stripes[p->b & fc->stripe_mask];
	struct flow_entry *e;
	uint64_t now, n;

	/* The doorkeeper is consulted only after a chain miss (in
	 * flow_probe_miss): on a hit its line would be one more cache miss
	 * (19% of the walk with a Zipf trace), and traffic that misses a lot
	 * is bypassed before it gets here. */
	for (e = flow_deref(&fc->buckets[p->b]); e; e = flow_deref(&e->next)) {
		if (e->tag != p->tag || !flow_key_eq(&e->key, key))
			continue;
		/* never an odd generation, even one equal to the current */
		if (e->gen != gen || __builtin_expect(e->gen & 1, 0)) {
			inc(&s->stale_hits);
			break;
		}
		now = flow_now_fast(fc);
		if (now - ld(&e->last_use) >= fc->touch_ns && now > ld(&e->last_use))
			st(&e->last_use, now);
		*res = e->res;
		n = ld(&s->hits) + 1;
		st(&s->hits, n);
		FLOW_TSAN_RELEASE(fc);
		if (__builtin_expect(bypass, 0)) {
			inc(&s->bypass_samples);
			if ((n & 255) == 0)
				flow_adapt(fc);
		}
		return 1;
	}
	FLOW_TSAN_RELEASE(fc);
	return 0;
}

/* After the FIB answered a probed miss: count, then admit or defer. */
static inline void
flow_probe_miss(struct flow_cache *fc, const struct flow_key *key, uint64_t gen, int bypass,
		struct flow_probe *p, const struct fib_result *res)
{
	struct flow_stripe *s = &fc->stripes[p->b & fc->stripe_mask];
	uint64_t n = ld(&s->misses) + 1;

	st(&s->misses, n);
	if (bypass)
		inc(&s->bypass_samples);
	if ((n & 15) == 0 && fc->cfg.bypass_below)
		flow_adapt(fc);
	if (p->w && !(ld(p->w) & p->m)) {
		flow_door_set(fc, p->w, p->m, p->h);
		inc(&s->admit_deferred);
		return;
	}
	flow_insert(fc, s, p->b, p->tag, key, gen, res);
}

int
flow_lookup_rcu(struct flow_cache *fc, const struct fib *fib, const struct flow_key *key,
		struct fib_result *res)
{
	struct flow_probe p;
	uint64_t gen;
	int bypass;

	if (!fc->cfg.enabled) {
		*res = flow_fib_lookup(fib, key);
		return 0;
	}
	bypass = __atomic_load_n(&fc->bypass, __ATOMIC_RELAXED);
	if (__builtin_expect(bypass, 0) && !flow_sampled(key)) {
		*res = flow_fib_lookup(fib, key);
		return 0;
	}
	flow_probe_hash(fc, key, &p);
	gen = fib_generation(fib);
	if (flow_probe_walk(fc, key, gen, bypass, &p, res))
		return 1;
	*res = flow_fib_lookup(fib, key);
	flow_probe_miss(fc, key, gen, bypass, &p, res);
	return 0;
}

int
flow_lookup4_rcu(struct flow_cache *fc, const struct fib *fib, uint32_t table, uint32_t dst,
		 uint32_t src, uint32_t iif, struct fib_result *res)
{
	struct flow_key k;

	/* bypassed flows never build the key (same sample as flow_sampled) */
	if (!fc->cfg.enabled ||
	    (__builtin_expect(__atomic_load_n(&fc->bypass, __ATOMIC_RELAXED), 0) &&
	     !flow_sampled_w(htonl(dst), 0, htonl(src), 0, iif))) {
		*res = fib_lookup4_rcu(fib, table, dst);
		return 0;
	}
	flow_key_set4(&k, table, dst, src, 0, iif);
	return flow_lookup_rcu(fc, fib, &k, res);
}

/*
 * Batches of FLOW_BATCH: hash all and prefetch the bucket heads, load the
 * heads and prefetch the first entries, walk, then send every miss and
 * bypassed key of the chunk to the FIB at once (fib_lookup4_batch_rcu for
 * IPv4 tos 0 keys of one table, fib_lookup6_batch_rcu for IPv6 ones), so
 * that independent memory accesses overlap instead of one lookup's misses
 * following another's.
 */
#define FLOW_BATCH 64

size_t
flow_lookup_batch_rcu(struct flow_cache *fc, const struct fib *fib, const struct flow_key *keys,
		      struct fib_result *res, size_t n)
{
	struct flow_probe p[FLOW_BATCH];
	uint32_t addr[FLOW_BATCH], a, table = 0;
	struct fib_result r4[FLOW_BATCH];
	uint8_t addr6[FLOW_BATCH][16];
	uint32_t table6 = 0;
	uint8_t idx[FLOW_BATCH], idx6[FLOW_BATCH];
	size_t done, k, i, j, nb, nb6, hits = 0;
	uint64_t gen = 0;
	int bypass = 0;

	for (done = 0; done < n; done += k) {
		const struct flow_key *kk = keys + done;
		struct fib_result *rr = res + done;

		k = n - done < FLOW_BATCH ? n - done : FLOW_BATCH;
		if (fc->cfg.enabled) {
			bypass = __atomic_load_n(&fc->bypass, __ATOMIC_RELAXED);
			gen = fib_generation(fib);
		}
		for (i = 0; i < k; i++) {
			if (!fc->cfg.enabled || (bypass && !flow_sampled(&kk[i]))) {
				p[i].state = FLOW_P_FIB;
				continue;
			}
			flow_probe_hash(fc, &kk[i], &p[i]);
			p[i].state = FLOW_P_PROBE;
			__builtin_prefetch(&fc->buckets[p[i].b]);
		}
		for (i = 0; i < k; i++) {
			struct flow_entry *e;

			if (p[i].state != FLOW_P_PROBE)
				continue;
			e = flow_deref(&fc->buckets[p[i].b]);
			if (e) {
				__builtin_prefetch(e);
				__builtin_prefetch((const char *)e + 64);
			}
		}
		for (i = 0; i < k; i++) {
			if (p[i].state != FLOW_P_PROBE)
				continue;
			if (flow_probe_walk(fc, &kk[i], gen, bypass, &p[i], &rr[i])) {
				p[i].state = FLOW_P_HIT;
				hits++;
			} else {
				p[i].state = FLOW_P_MISS;
			}
		}
		for (i = 0, nb = 0, nb6 = 0; i < k; i++) {
			if (p[i].state == FLOW_P_HIT)
				continue;
			if (kk[i].family == AF_INET && kk[i].tos == 0 &&
			    (nb == 0 || kk[i].table == table)) {
				table = kk[i].table;
				memcpy(&a, kk[i].dst.b, 4);
				addr[nb] = ntohl(a);
				idx[nb++] = (uint8_t)i;
			} else if (kk[i].family == AF_INET6 && kk[i].tos == 0 &&
				   (nb6 == 0 || kk[i].table == table6)) {
				table6 = kk[i].table;
				memcpy(addr6[nb6], kk[i].dst.b, 16);
				idx6[nb6++] = (uint8_t)i;
			} else {
				rr[i] = flow_fib_lookup(fib, &kk[i]);
			}
		}
		if (nb) {
			fib_lookup4_batch_rcu(fib, table, addr, r4, nb);
			for (j = 0; j < nb; j++)
				rr[idx[j]] = r4[j];
		}
		if (nb6) {
			fib_lookup6_batch_rcu(fib, table6, (const uint8_t (*)[16])addr6, r4, nb6);
			for (j = 0; j < nb6; j++)
				rr[idx6[j]] = r4[j];
		}
		for (i = 0; i < k; i++)
			if (p[i].state == FLOW_P_MISS)
				flow_probe_miss(fc, &kk[i], gen, bypass, &p[i], &rr[i]);
	}
	return hits;
}

/* Expiry. */
enum { SCAN_EXPIRE, SCAN_PRESSURE, SCAN_FORCE };

struct flow_scan {
	uint64_t gen;
	bool gen_valid;
	uint64_t now;
	uint64_t tmo;
	int mode;
	uint64_t idle, stale; /* removed */
	uint64_t scanned;
	uint64_t kept_age_max; /* oldest entry kept in this sweep */
};

/* Out of line: inlined, it takes the registers of the empty-bucket loop. */
static __attribute__((noinline)) void
flow_scan_bucket(struct flow_cache *fc, uint32_t b, struct flow_scan *sc)
{
	struct flow_stripe *s = &fc->stripes[b & fc->stripe_mask];
	struct flow_entry *x, **pp, *dead = NULL;
	uint64_t tmo = sc->tmo, age, lu, kept = 0;
	unsigned ndead = 0;

	/* Look first, under the scan's read section and without the lock:
	 * most buckets of a periodic pass have nothing to remove. */
	for (x = flow_deref(&fc->buckets[b]); x; x = flow_deref(&x->next)) {
		lu = ld(&x->last_use);
		age = sc->now > lu ? sc->now - lu : 0;
		if ((sc->gen_valid && x->gen < sc->gen) || sc->mode == SCAN_FORCE || age > tmo)
			break;
		tmo >>= 1;
		if (age > kept)
			kept = age;
	}
	FLOW_TSAN_RELEASE(fc);
	if (!x) {
		if (kept > sc->kept_age_max)
			sc->kept_age_max = kept;
		return;
	}
	tmo = sc->tmo;
	pthread_mutex_lock(&s->lock);
	pp = &fc->buckets[b];
	while ((x = *pp) != NULL) {
		lu = ld(&x->last_use);
		age = sc->now > lu ? sc->now - lu : 0;
		if (sc->gen_valid && x->gen < sc->gen) {
			sc->stale++;
		} else if (sc->mode == SCAN_FORCE || age > tmo) {
			sc->idle++;
		} else {
			tmo >>= 1; /* long chains age faster */
			if (age > sc->kept_age_max)
				sc->kept_age_max = age;
			pp = &x->next;
			continue;
		}
		flow_publish(pp, x->next);
		x->retire_next = dead;
		dead = x;
		ndead++;
	}
	pthread_mutex_unlock(&s->lock);
	flow_retire(fc, dead, ndead);
}

/* Give the CPU away: sched_yield(), or sleep yield_sleep on the worker's
 * condition variable so that flow_cache_stop() cuts the sleep short. */
static void
flow_yield(struct flow_cache *fc)
{
	struct timespec ts;
	uint64_t deadline;

	__atomic_store_n(&fc->want_cpu, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fc->wk_beat, flow_mono_ns(), __ATOMIC_RELAXED); /* a long pass lives */
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

/* How many of the lim buckets from r are empty before a non-empty one. */
static inline uint64_t
flow_skip_empty(struct flow_entry **bk, uint32_t mask, uint32_t r, uint64_t lim)
{
	uint64_t j = 0;

	while (j < lim && !__atomic_load_n(&bk[(r + j) & mask], __ATOMIC_RELAXED))
		j++;
	return j;
}

/*
 * Scan up to n buckets from *rover, stopping early once removed >= stop_at
 * (0: never) or the cache is being stopped. Returns removed entries.
 */
static uint64_t
flow_scan_run(struct flow_cache *fc, uint32_t *rover, uint64_t n, struct flow_scan *sc,
	      uint64_t stop_at)
{
	/* locals: the relaxed atomic loads below would otherwise make the
	 * compiler reload fc's fields on every bucket */
	struct flow_entry **const bk = fc->buckets;
	const uint32_t mask = fc->mask;
	int *const want = &fc->want_cpu;
	uint32_t r = *rover;
	const int64_t check = (int64_t)fc->cfg.yield_check * FLOW_WORK_LOCKED;
	int64_t left = check;
	int64_t cost;
	uint64_t i, j, lim, t0 = check ? flow_mono_ns() : 0, base = sc->idle + sc->stale;

	urcu_memb_read_lock();
	for (i = 0; i < n;) {
		/* Empty heads: with checks, skip to the end of the current
		 * run of FLOW_SKIP_RUN heads, then
		 * test the flag; without, skip to the next non-empty one. */
		lim = n - i;
		if (check && lim > FLOW_SKIP_RUN - (r & (FLOW_SKIP_RUN - 1)))
			lim = FLOW_SKIP_RUN - (r & (FLOW_SKIP_RUN - 1));
		j = flow_skip_empty(bk, mask, r, lim);
		i += j;
		r = (r + j) & mask;
		if (j == lim) {
			if (!check || i >= n)
				continue;
			cost = (int64_t)j;
		} else {
			flow_scan_bucket(fc, r, sc);
			i++;
			r = (r + 1) & mask;
			if (stop_at && sc->idle + sc->stale - base >= stop_at)
				break;
			if (!check)
				continue;
			cost = FLOW_WORK_LOCKED;
		}
		if (!__atomic_load_n(want, __ATOMIC_RELAXED) && (left -= cost) > 0)
			continue;
		/* a check point: someone waiting, or budget time to look */
		if (!__atomic_load_n(want, __ATOMIC_RELAXED) &&
		    flow_mono_ns() - t0 < fc->cfg.scan_budget) {
			left = check;
			continue;
		}
		if (__atomic_load_n(&fc->stopping, __ATOMIC_RELAXED))
			break;
		/* leave the read section while yielding: no grace period
		 * waits for a scanner that is not running */
		urcu_memb_read_unlock();
		flow_yield(fc);
		urcu_memb_read_lock();
		if (__atomic_load_n(&fc->stopping, __ATOMIC_RELAXED))
			break;
		t0 = flow_mono_ns();
		left = check;
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
flow_expire_locked(struct flow_cache *fc, const struct fib *fib, uint64_t now, uint64_t n,
		   uint64_t t0, struct flow_scan *sc)
{
	sc->gen_valid = fib != NULL;
	sc->gen = fib ? fib_generation(fib) : 0;
	sc->now = now;
	sc->tmo = fc->cfg.gc_timeout;
	sc->mode = SCAN_EXPIRE;
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
	sc.gen_valid = fib != NULL;
	sc.gen = fib ? fib_generation(fib) : 0;
	sc.now = now;
	sc.tmo = fc->cfg.gc_timeout;
	sc.mode = SCAN_PRESSURE;
	/* rt_garbage_collect: sweep with the timeout, halve it until the
	 * goal is met; at zero everything may go. Halvings that could not
	 * remove anything (below the oldest age kept) are skipped. */
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
	struct flow_entry *x, *dead;
	unsigned ndead;
	uint32_t b;

	for (b = 0; b <= fc->mask; b++) {
		struct flow_stripe *s = &fc->stripes[b & fc->stripe_mask];

		if (!__atomic_load_n(&fc->buckets[b], __ATOMIC_RELAXED))
			continue;
		pthread_mutex_lock(&s->lock);
		dead = NULL;
		ndead = 0;
		for (x = fc->buckets[b]; x; x = x->next) {
			x->retire_next = dead;
			dead = x;
			ndead++;
		}
		flow_publish(&fc->buckets[b], NULL);
		pthread_mutex_unlock(&s->lock);
		__atomic_add_fetch(&fc->flushed, ndead, __ATOMIC_RELAXED);
		flow_retire(fc, dead, ndead);
	}
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
		if (wait > fc->touch_ns / 2)
			wait = fc->touch_ns / 2;
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
	struct flow_entry *x, *n;
	uint32_t b, i;

	if (!fc)
		return;
	flow_cache_stop(fc);
	for (b = 0; b <= fc->mask; b++)
		for (x = fc->buckets[b]; x; x = n) {
			n = x->next;
			free(x);
		}
	pthread_mutex_lock(&fc->rc_lock);
	flow_batch_push(fc, true);
	pthread_mutex_unlock(&fc->rc_lock);
	urcu_memb_barrier();
	FLOW_TSAN_ACQUIRE(fc);
	for (x = fc->batch->list; x; x = n) { /* a push that failed to allocate */
		n = x->retire_next;
		free(x);
	}
	free(fc->batch);
	for (i = 0; i <= fc->stripe_mask; i++)
		pthread_mutex_destroy(&fc->stripes[i].lock);
	pthread_mutex_destroy(&fc->door_lock);
	pthread_mutex_destroy(&fc->adapt_lock);
	pthread_mutex_destroy(&fc->gc_lock);
	pthread_mutex_destroy(&fc->rc_lock);
	pthread_mutex_destroy(&fc->wk_lock);
	pthread_cond_destroy(&fc->wk_cond);
	free(fc->buckets);
	free(fc->stripes);
	free(fc->door);
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
		st_->stale_hits += ld(&s->stale_hits);
		st_->admit_deferred += ld(&s->admit_deferred);
		st_->insert_full += ld(&s->insert_full);
		st_->insert_odd += ld(&s->insert_odd);
		st_->bypassed += ld(&s->bypass_samples) * (FLOW_BYPASS_SAMPLE - 1);
		pthread_mutex_lock(&s->lock);
		st_->inserts += s->inserts;
		st_->evict_chain += s->evict_chain;
		st_->expired_stale += s->stale_removed;
		pthread_mutex_unlock(&s->lock);
	}
	st_->lookups = st_->hits + st_->misses + st_->bypassed;
	st_->evict_size = ld(&fc->evict_size);
	st_->expired_idle = ld(&fc->expired_idle);
	st_->expired_stale += ld(&fc->expired_stale);
	st_->flushed = ld(&fc->flushed);
	st_->insert_nomem = __atomic_load_n(&fc->insert_nomem, __ATOMIC_RELAXED);
	st_->entries = __atomic_load_n(&fc->entries, __ATOMIC_RELAXED);
	st_->gc_runs = ld(&fc->gc_runs);
	st_->gc_pressure_runs = ld(&fc->gc_pressure_runs);
	st_->buckets_scanned = ld(&fc->buckets_scanned);
	st_->gc_ns_last = ld(&fc->gc_ns_last);
	st_->gc_ns_max = ld(&fc->gc_ns_max);
	st_->yields = ld(&fc->yields);
	st_->doorkeeper_resets = ld(&fc->door_resets);
	st_->bypass = (uint64_t)__atomic_load_n(&fc->bypass, __ATOMIC_RELAXED);
	st_->bypass_entered = ld(&fc->bypass_entered);
	pthread_mutex_lock(&fc->rc_lock);
	st_->reclaim = fc->rc;
	st_->batch_nomem = fc->batch_nomem;
	pthread_mutex_unlock(&fc->rc_lock);
	if (st_->reclaim.gp_ns_min == UINT64_MAX)
		st_->reclaim.gp_ns_min = 0;
	st_->bytes = sizeof(*fc) + ((uint64_t)fc->mask + 1) * sizeof(*fc->buckets) +
		     ((uint64_t)fc->stripe_mask + 1) * sizeof(*fc->stripes) +
		     (fc->door_mask + 1) / 8 + st_->entries * FLOW_ENTRY_SIZE +
		     st_->reclaim.bytes_pending;
}

unsigned
flow_cache_chain_max(struct flow_cache *fc)
{
	struct flow_entry *x;
	unsigned n, max = 0;
	uint32_t b;

	for (b = 0; b <= fc->mask; b++) {
		struct flow_stripe *s = &fc->stripes[b & fc->stripe_mask];

		if (!__atomic_load_n(&fc->buckets[b], __ATOMIC_RELAXED))
			continue;
		pthread_mutex_lock(&s->lock);
		for (n = 0, x = fc->buckets[b]; x; x = x->next)
			n++;
		pthread_mutex_unlock(&s->lock);
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
	struct flow_entry *x;
	uint32_t b;
	int rc = 0;

	for (b = 0; b <= fc->mask && !rc; b++) {
		struct flow_stripe *s = &fc->stripes[b & fc->stripe_mask];

		if (!__atomic_load_n(&fc->buckets[b], __ATOMIC_RELAXED))
			continue;
		pthread_mutex_lock(&s->lock);
		for (x = fc->buckets[b]; x && !rc; x = x->next) {
			info.key = x->key;
			info.bucket = b;
			info.gen = x->gen;
			info.last_use = ld(&x->last_use);
			info.res = x->res;
			rc = cb(&info, arg);
		}
		pthread_mutex_unlock(&s->lock);
	}
	return rc;
}

int
flow_cache_check(struct flow_cache *fc, char *buf, size_t len)
{
	struct flow_entry *x, *y;
	uint64_t h, linked = 0, entries, pending = 0;
	unsigned n;
	uint32_t b;
	int err = 0;

#define FLOW_BAD(...)                                    \
	do {                                             \
		if (buf && len)                          \
			snprintf(buf, len, __VA_ARGS__); \
		err = -EUCLEAN;                          \
	} while (0)
	for (b = 0; b <= fc->mask && !err; b++) {
		struct flow_stripe *s = &fc->stripes[b & fc->stripe_mask];

		pthread_mutex_lock(&s->lock);
		for (n = 0, x = fc->buckets[b]; x && !err; x = x->next, n++) {
			h = flow_hash(fc, &x->key);
			if (((uint32_t)h & fc->mask) != b)
				FLOW_BAD("bucket %u: entry of bucket %u", b, (uint32_t)h & fc->mask);
			else if (x->tag != (uint32_t)(h >> 32))
				FLOW_BAD("bucket %u: entry %u: tag %#x, key hashes to %#x", b, n,
					 x->tag, (uint32_t)(h >> 32));
			else if (x->gen & 1)
				FLOW_BAD("bucket %u: entry %u: odd generation %llu", b, n,
					 (unsigned long long)x->gen);
			else if (n >= fc->cfg.chain_cap)
				FLOW_BAD("bucket %u: chain longer than chain_cap %u", b,
					 fc->cfg.chain_cap);
			for (y = x->next; y && !err; y = y->next)
				if (flow_key_eq(&x->key, &y->key))
					FLOW_BAD("bucket %u: a key twice", b);
		}
		linked += n;
		pthread_mutex_unlock(&s->lock);
	}
	entries = __atomic_load_n(&fc->entries, __ATOMIC_RELAXED);
	if (!err && linked != entries)
		FLOW_BAD("%llu entries linked, count says %llu", (unsigned long long)linked,
			 (unsigned long long)entries);
	pthread_mutex_lock(&fc->rc_lock);
	for (x = fc->batch->list; x; x = x->retire_next)
		pending += FLOW_ENTRY_SIZE;
	if (!err && pending != fc->batch->bytes)
		FLOW_BAD("open batch holds %llu bytes, counts %llu", (unsigned long long)pending,
			 (unsigned long long)fc->batch->bytes);
	if (!err && fc->rc.bytes_pending < pending)
		FLOW_BAD("bytes_pending %llu below the open batch's %llu",
			 (unsigned long long)fc->rc.bytes_pending, (unsigned long long)pending);
	pthread_mutex_unlock(&fc->rc_lock);
#undef FLOW_BAD
	return err;
}
