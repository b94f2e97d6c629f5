/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the decision cache in front of libfib's resolution
 *
 * Caches whole decisions of fib_resolve_rcu (fib/policy.h): the flow,
 * masked to the fields the current policy reads, maps to the 32-bit id of
 * an interned, immutable decision record (doc/decisions.md, sections 4
 * and 5). A hit reads the set's line, the way's key line, the record and
 * the destination's region generation: no FIB memory.
 *
 *  - Table: 2^n sets of 4 ways (one 64-byte line of tags, record ids,
 *    generations and last use; one 64-byte key line per way), no chains,
 *    no allocation per entry, constant work per probe, the least recently
 *    used way replaced. Sets are chosen by SipHash-1-3 keyed with the
 *    caller's per-process secret: a collision flood only churns one set.
 *  - Key: family, flags, tos, iif, oif, destination and source always;
 *    mark (under the rules' masks), uid, ports, protocol and flow label
 *    only when a published rule or the multipath hash reads them. The
 *    mask is recomputed when the policy generation moves, which also
 *    stales every entry.
 *  - Invalidation: an entry stores region generation + policy generation
 *    (both only grow, so their sum moves on any change) read BEFORE
 *    resolving; a hit needs it equal to the current sum. A route change
 *    stales only the flows under the regions its prefix covers
 *    (fib/regions.h); a policy change stales everything.
 *  - Bypass and admission: with the default policy the resolution is one
 *    compiled-table lookup and the cache is skipped. Otherwise 1 lookup
 *    in 1024 is timed (hit, probe that missed, resolution, insert) and the
 *    hit rate measured; a miss is admitted 1 in N (N doubling while few
 *    hits come back), and when the cache costs more than it saves most
 *    flows skip it (1 in 16 keeps measuring).
 *  - Records: interned by content, counted by the ways that refer to
 *    them; the last reference gone, a record is unlinked and its id freed
 *    after an RCU grace period (batched call_rcu), so a reader holding an
 *    id it read in its read section always finds the same record.
 *
 * The older key/fib_result API (struct flow_key, flow_lookup*_rcu) is
 * kept for the daemon until it moves to flow_resolve_rcu: its entries
 * live in the same table and also compare the FIB's global generation.
 *
 * An expiry worker (flow_cache_start) scans goal = elapsed * sets /
 * gc_timeout sets every gc_interval from a persistent rover (so the table
 * is covered once per gc_timeout), dropping stale and idle entries, with
 * a "someone is waiting" test every set and a time-budget test every
 * yield_check sets (kernel: need_resched() before cond_resched()).
 *
 * No I/O, no globals, no logging. Errors: 0 or -errno; NULL and errno.
 */
#ifndef CACHE_FLOW_H
#define CACHE_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fib/fib.h"
#include "fib/policy.h"

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
	FLOW_ADMIT_DOORKEEPER = 1, /* measured: 1 miss in N, N from the hit rate (default;
				    * the name is the older doorkeeper's) */
};

/* Clock: monotonic nanoseconds. Injected by tests; NULL for
 * CLOCK_MONOTONIC_COARSE. */
typedef uint64_t (*flow_clock_fn)(void *arg);

/* Every tunable; conf/ fills it. Times in nanoseconds. */
struct flow_config {
	bool enabled;                 /* true */
	uint32_t buckets;             /* 131072 sets of 4 ways; rounded up to a power of two */
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
	uint32_t chain_cap;           /* 16: checked (> 0) and kept for conf; sets have
				       * 4 ways, the least recently used goes */
	uint32_t admit;               /* enum flow_admit */
	uint32_t doorkeeper_bits_log; /* 21: checked (6..32), kept for conf; unused */
	uint32_t reclaim_bytes;       /* 512 KiB of records retired per call_rcu batch */
	uint32_t bypass_below;        /* 30: 0 never bypasses; else 15 flows in 16
				       * skip the cache while it costs more than it
				       * saves (measured), or while the hit rate (%)
				       * is under it with no hit cheaper than the
				       * resolution; left at +10 points */
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
	uint64_t bytes;           /* sets, keys, records, locks */
	struct fib_reclaim_stats reclaim; /* of records */
	/* the decision cache */
	uint64_t bypass_default;  /* resolutions sent straight to the FIB: default policy */
	uint64_t evict_lru;       /* a full set's least recently used way replaced
				   * (also counted in evict_chain) */
	uint64_t invalid_route;   /* hits refused: a route under the flow changed */
	uint64_t invalid_policy;  /* hits refused: the policy changed */
	uint64_t insert_norec;    /* misses not inserted: no free record */
	uint64_t records;         /* live decision records */
	uint64_t records_pending; /* retired, waiting for their grace period */
	uint64_t admit_n;         /* a miss is admitted 1 in admit_n */
	uint64_t hit_ns, resolve_ns, probe_miss_ns, insert_ns; /* measured means */
	uint64_t samples;         /* timed lookups */
	uint64_t mask_updates;    /* key masks recomputed */
	uint32_t mask4, mask6;    /* FLOW_MASK_* of the current key masks */
};

/* The optional key fields (flow_stats.mask4/mask6). */
#define FLOW_MASK_MARK 0x01
#define FLOW_MASK_UID 0x02
#define FLOW_MASK_SPORT 0x04
#define FLOW_MASK_DPORT 0x08
#define FLOW_MASK_PROTO 0x10
#define FLOW_MASK_FLOWLABEL 0x20

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

/*
 * Resolve fl as fib_resolve_rcu would (same return: 0 or -d->error),
 * through the cache: a hit copies the cached record's decision. With the
 * cache disabled or bypassed, fib_resolve_rcu itself. d->info is valid
 * until fib_read_unlock(). Context: reader.
 */
int flow_resolve_rcu(struct flow_cache *fc, const struct fib *fib, const struct fib_flow *fl,
		     struct fib_decision *d);
/*
 * n flows at once: the sets of all are hashed and prefetched before any
 * is probed, the misses resolved one by one. Returns the number of hits.
 * Context: reader.
 */
size_t flow_resolve_batch_rcu(struct flow_cache *fc, const struct fib *fib,
			      const struct fib_flow *fl, struct fib_decision *d, size_t n);

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

/* Most ways used in a set now (at most 4), and the set of a legacy key
 * (for tests and fibctl). Context: any, registered. */
unsigned flow_cache_chain_max(struct flow_cache *fc);
uint32_t flow_cache_bucket(const struct flow_cache *fc, const struct flow_key *key);
/* The set of a flow under the current key mask. Context: reader. */
uint32_t flow_cache_set(struct flow_cache *fc, const struct fib *fib, const struct fib_flow *fl);

/* One cached entry, as flow_cache_walk shows it. */
struct flow_entry_info {
	bool legacy;          /* a flow_key entry: key and res; else flow and d */
	struct flow_key key;
	struct fib_result res;
	struct fib_flow flow; /* the masked key as a flow */
	struct fib_decision d;
	uint32_t bucket;      /* set */
	uint32_t way;
	uint32_t record;      /* record id */
	uint64_t gen;         /* region + policy (+ FIB for legacy) generation, 32 bits */
	uint64_t last_use;    /* ms */
};

/*
 * Call cb for every entry, set by set, way by way,
 * with the set's lock held (cb must not call into the cache); a
 * non-zero return stops the walk and is returned. Context: any,
 * registered, outside a read section.
 */
int flow_cache_walk(struct flow_cache *fc, int (*cb)(const struct flow_entry_info *e, void *arg),
		    void *arg);

/*
 * Verify the invariants: every way in the set and with the tag its key
 * hashes to, no key twice in a set, every way's record live and its
 * reference count equal to the ways that name it, every live record in
 * the intern table once, the entry count equal to the ways used, the
 * records accounted (live + pending + free = allocated). Returns 0 or
 * -EUCLEAN and a message in buf. Context: any, registered, outside a
 * read section, with no concurrent insert or removal. For tests.
 */
int flow_cache_check(struct flow_cache *fc, char *buf, size_t len);

/*
 * Test hook, only in builds configured with --enable-fault-injection:
 * make the nth next allocation of this cache fail (reclamation batches,
 * the worker thread; 1 = the next one; 0 disables). Entries and records
 * are never allocated one by one; a failed batch keeps collecting until
 * the next retire (batch_nomem), a failed worker start returns -EAGAIN.
 * Context: any.
 */
void flow_cache_fail_after(struct flow_cache *fc, long n);

#ifdef __cplusplus
}
#endif
#endif
