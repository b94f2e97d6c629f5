/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: flow cache in front of libfib
 *
 * A bounded hash of recent lookups, keyed by (destination, source, tos,
 * input interface, table, family), after the Linux IPv4 route cache
 * (net/ipv4/route.c before 3.6) minus the flaws that had it removed:
 *
 *  - hash flooding: buckets are chosen by SipHash-1-3 keyed with a secret
 *    the caller draws once per process (getrandom), and chains are capped;
 *  - unbounded growth: max_entries is a hard limit, pressure GC keeps the
 *    count below it;
 *  - pure overhead at low hit rates: a doorkeeper bitmap admits a flow only
 *    on its second sighting (it is tested after a chain miss, so hits do
 *    not pay for its cache line);
 *    when the measured hit rate falls under bypass_below, 15 flows in 16
 *    skip the cache entirely (the 16th keeps measuring).
 *
 * Readers (lookup threads) never lock: chains are RCU lists. Inserts and
 * removals take one of a striped array of locks, never a global one.
 * Entries carry the FIB generation of their lookup; an older generation is
 * a miss and the entry is replaced lazily. The generation is odd while a
 * FIB change is in progress: a miss then is not inserted (insert_odd), and
 * a hit needs an entry whose generation is the current one and even, so
 * nothing looked up in the middle of a change is ever answered from the
 * cache. Removed entries are freed in
 * batches after an RCU grace period, as libfib frees trie nodes.
 *
 * An expiry worker (flow_cache_start) scans goal = elapsed * buckets /
 * gc_timeout buckets every gc_interval from a persistent rover (so the
 * table is covered once per gc_timeout), dropping stale and idle entries,
 * with a "someone is waiting" test every bucket and a time-budget test
 * every yield_check buckets (kernel: need_resched() before cond_resched()).
 *
 * No I/O, no globals, no logging. Errors: 0 or -errno; NULL and errno.
 */
#ifndef CACHE_FLOW_H
#define CACHE_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fib/fib.h"

#ifdef __cplusplus
extern "C" {
#endif

struct flow_cache;

/*
 * A flow key. Build it with flow_key_set4/flow_key_set6 (or zero it first):
 * padding and unused address bytes take part in the comparison.
 */
struct flow_key {
	union fib_addr dst; /* network order; IPv4 in the first 4 bytes */
	union fib_addr src;
	uint32_t table;
	uint32_t iif;
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t tos;
	uint8_t pad_[6];
};

/* Admission policies. */
enum flow_admit {
	FLOW_ADMIT_ALL = 0,        /* insert every miss */
	FLOW_ADMIT_DOORKEEPER = 1, /* insert on the second sighting (default) */
};

/* Clock: monotonic nanoseconds. Injected by tests; NULL for
 * CLOCK_MONOTONIC_COARSE. */
typedef uint64_t (*flow_clock_fn)(void *arg);

/* Every tunable; conf/ fills it. Times in nanoseconds. */
struct flow_config {
	bool enabled;                 /* true */
	uint32_t buckets;             /* 131072; rounded up to a power of two */
	uint32_t max_entries;         /* 524288: hard limit */
	uint64_t gc_interval;         /* 60 s; first run jittered in [1/2, 1] */
	uint64_t gc_timeout;          /* 300 s: idle entries older go */
	uint64_t gc_min_interval;     /* 0.5 s between pressure GCs */
	uint32_t gc_elasticity;       /* 8: pressure GC target entries per bucket */
	uint64_t scan_budget;         /* 2 ms of scanning between yields */
	uint32_t yield_check;         /* 64: non-empty buckets (or 256x as many
				       * empty ones) between time-budget checks;
				       * 0: no yield checks at all */
	uint64_t yield_sleep;         /* 0: sched_yield(); else nanosleep this long */
	uint32_t chain_cap;           /* 16: the oldest entry of a full chain goes */
	uint32_t admit;               /* enum flow_admit */
	uint32_t doorkeeper_bits_log; /* 21: 2^21 bits (256 KiB) */
	uint32_t reclaim_bytes;       /* 512 KiB retired per call_rcu batch */
	uint32_t bypass_below;        /* 30: hit rate (%) under which 15 flows in
				       * 16 skip the cache; left at +10; 0: never */
	uint64_t secret[2];           /* hash key: random per process */
	flow_clock_fn clock;          /* NULL: CLOCK_MONOTONIC_COARSE */
	void *clock_arg;
	long fail_after;              /* test hook, honoured only in builds
				       * configured with --enable-fault-injection:
				       * the nth allocation from flow_cache_new on
				       * fails (1: the first); 0: none */
};

struct flow_stats {
	uint64_t lookups, hits, misses;
	uint64_t stale_hits;      /* found with an old (or odd) generation: a miss */
	uint64_t inserts;
	uint64_t admit_deferred;  /* misses not inserted: first sighting */
	uint64_t insert_full;     /* misses not inserted: at max_entries */
	uint64_t insert_nomem;    /* misses not inserted: allocation failed */
	uint64_t insert_odd;      /* misses not inserted: odd FIB generation (a
				   * change in progress) */
	uint64_t evict_chain;     /* evicted: chain at chain_cap */
	uint64_t evict_size;      /* evicted by pressure GC */
	uint64_t expired_idle;    /* removed: idle > timeout */
	uint64_t expired_stale;   /* removed: older FIB generation */
	uint64_t flushed;
	uint64_t entries;         /* now */
	uint64_t gc_runs;         /* periodic expiry runs */
	uint64_t gc_pressure_runs;
	uint64_t buckets_scanned;
	uint64_t gc_ns_last, gc_ns_max; /* wall time of one run, yields included */
	uint64_t yields;
	uint64_t doorkeeper_resets;
	uint64_t bypassed;        /* lookups sent straight to the FIB (estimated:
				   * 15 x the sampled ones) */
	uint64_t bypass;          /* 1 while bypassing */
	uint64_t bypass_entered;
	uint64_t batch_nomem;     /* retired entries kept in the open batch, not
				   * handed to call_rcu: allocation failed */
	uint64_t bytes;           /* buckets, locks, doorkeeper, entries, pending */
	struct fib_reclaim_stats reclaim;
};

/* Fill c with the defaults (secret zero: the caller must set it).
 * Context: any. */
void flow_config_default(struct flow_config *c);

/*
 * Create a cache. Returns NULL with errno EINVAL (buckets 0 or > 2^30,
 * gc_timeout 0, chain_cap 0, ...) or ENOMEM. Context: any, with the
 * calling thread registered (fib_thread_online) before any other call.
 */
struct flow_cache *flow_cache_new(const struct flow_config *c);
/*
 * Stop the worker, free every entry, wait for pending batches
 * (rcu_barrier). Context: any, registered, outside a read section,
 * with no reader using this cache any more.
 */
void flow_cache_free(struct flow_cache *fc);

/* Fill *k; addresses in host order (the trace format). Context: any. */
void flow_key_set4(struct flow_key *k, uint32_t table, uint32_t dst, uint32_t src,
		   uint8_t tos, uint32_t iif);
/* Fill *k; addresses 16 bytes in network order (src may be NULL).
 * Context: any. */
void flow_key_set6(struct flow_key *k, uint32_t table, const uint8_t *dst,
		   const uint8_t *src, uint8_t tos, uint32_t iif);

/*
 * Look key up; on a miss (or a stale generation) ask fib_lookup_rcu and
 * maybe insert the answer. A hit needs an entry of the current FIB
 * generation, which must be even; at an odd generation (a change in
 * progress) nothing is inserted. *res is valid until fib_read_unlock(). Returns
 * 1 for a hit, 0 for a FIB lookup. With the cache disabled, a plain FIB
 * lookup. Call with fib_read_lock held, on a registered thread.
 */
int flow_lookup_rcu(struct flow_cache *fc, const struct fib *fib, const struct flow_key *key,
		    struct fib_result *res);

/*
 * IPv4, tos 0, addresses in host order: the same as flow_key_set4 plus
 * flow_lookup_rcu, except that a bypassed flow goes to fib_lookup4_rcu
 * without building a key. Call with fib_read_lock held, on a registered
 * thread.
 */
int flow_lookup4_rcu(struct flow_cache *fc, const struct fib *fib, uint32_t table, uint32_t dst,
		     uint32_t src, uint32_t iif, struct fib_result *res);

/*
 * The same for n keys at once: the memory accesses of independent
 * lookups overlap (prefetched bucket heads and entries, and the misses of
 * every 64 keys resolved by one fib_lookup4_batch_rcu and one
 * fib_lookup6_batch_rcu). res[i] answers
 * keys[i]. Returns the number of hits. Call with fib_read_lock held, on a
 * registered thread.
 */
size_t flow_lookup_batch_rcu(struct flow_cache *fc, const struct fib *fib,
			     const struct flow_key *keys, struct fib_result *res, size_t n);

/*
 * One periodic expiry pass at time now (the injected clock's time): scan
 * goal = (now - last pass) * buckets / gc_timeout buckets from the rover.
 * fib gives the current generation (NULL: stale entries are not judged).
 * Returns the number of entries removed. Context: any, registered,
 * outside a read section; serialised with the worker by an internal lock.
 */
long flow_cache_expire(struct flow_cache *fc, const struct fib *fib, uint64_t now);
/*
 * The same pass over exactly n buckets from the rover, without touching
 * the pass clock (for benchmarks and an operator's "expire now").
 * Context: any, registered, outside a read section (as flow_cache_expire).
 */
long flow_cache_scan(struct flow_cache *fc, const struct fib *fib, uint64_t now, uint64_t n);
/*
 * Pressure GC: if entries exceed the threshold (max_entries - 1/8),
 * remove entries, halving the idle timeout until the count is at most
 * min(gc_elasticity * buckets, 3/4 max_entries). Not rate-limited here
 * (the worker applies gc_min_interval). Returns entries removed.
 * Context: any, registered, outside a read section (as flow_cache_expire).
 */
long flow_cache_gc(struct flow_cache *fc, const struct fib *fib, uint64_t now);
/* Drop every entry. Context: any, registered, outside a read section. */
void flow_cache_flush(struct flow_cache *fc);

/*
 * Start the expiry worker thread; fib is read (generation only) by it.
 * Returns 0, -EALREADY or -errno from pthread_create. Context: owner.
 */
int flow_cache_start(struct flow_cache *fc, const struct fib *fib);
/* Stop and join the worker; returns within a few ms. Context: owner. */
void flow_cache_stop(struct flow_cache *fc);
/*
 * 1 if the worker runs and woke up (or yielded in a pass) within max_age
 * ns of now; it wakes at least every 0.5 s (gc_timeout / 32 if smaller)
 * while idle: the watchdog's sign of life. Context: owner.
 */
int flow_cache_alive(const struct flow_cache *fc, uint64_t max_age);
/*
 * Ask a running scan to yield at its next bucket (writer, main thread or
 * a lookup thread waiting for CPU). Context: any; async-signal-safe.
 */
void flow_cache_want_cpu(struct flow_cache *fc);

/*
 * Apply a new configuration (conf/ reloads): gc_interval, gc_timeout,
 * gc_min_interval, gc_elasticity, scan_budget, yield_check and yield_sleep
 * change in place (the worker's next pass is scheduled with them after
 * the current wait; the touch granule keeps its first value). Returns 0, -EINVAL (gc_interval or
 * gc_timeout 0) or -EOPNOTSUPP if any other field differs: build a new
 * cache and swap. Context: owner.
 */
int flow_cache_reconfigure(struct flow_cache *fc, const struct flow_config *c);

/* Counters; approximate while lookups run on several threads. Context: any. */
void flow_cache_stats(struct flow_cache *fc, struct flow_stats *st);

/* Longest chain now, and the bucket index of a key (for tests and
 * fibctl). Context: any, registered. */
unsigned flow_cache_chain_max(struct flow_cache *fc);
uint32_t flow_cache_bucket(const struct flow_cache *fc, const struct flow_key *key);

/* One cached entry, as flow_cache_walk shows it. */
struct flow_entry_info {
	struct flow_key key;
	uint32_t bucket;
	uint64_t gen;
	uint64_t last_use;
	struct fib_result res;
};

/*
 * Call cb for every entry, bucket by bucket, newest first in a chain,
 * with the bucket's lock held (cb must not call into the cache); a
 * non-zero return stops the walk and is returned. Context: any,
 * registered, outside a read section.
 */
int flow_cache_walk(struct flow_cache *fc, int (*cb)(const struct flow_entry_info *e, void *arg),
		    void *arg);

/*
 * Verify the invariants: every entry in the bucket and with the tag its
 * key hashes to, no key twice in a chain, chains at most chain_cap long,
 * no entry of an odd generation,
 * the entry count equal to the entries linked, the open reclamation batch
 * equal to its byte count. Returns 0 or -EUCLEAN and a message in buf.
 * Context: any, registered, outside a read section (as flow_cache_walk), with no concurrent insert or removal. For
 * tests.
 */
int flow_cache_check(struct flow_cache *fc, char *buf, size_t len);

/*
 * Test hook, only in builds configured with --enable-fault-injection:
 * make the nth next allocation of this cache fail (entries, reclamation
 * batches, the worker thread; 1 = the next one; 0 disables). A failed
 * entry is not inserted (insert_nomem), a failed batch keeps collecting
 * until the next retire (batch_nomem), a failed worker start returns
 * -EAGAIN. Context: any.
 */
void flow_cache_fail_after(struct flow_cache *fc, long n);

#ifdef __cplusplus
}
#endif
#endif
