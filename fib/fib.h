/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: libfib, the forwarding table of fibd
 *
 * A struct fib holds one level-compressed trie per address family (after
 * Linux net/ipv4/fib_trie.c), the routes of every mirrored table, the
 * interned next-hop sets they share, and the reclamation queue that frees
 * retired memory in batches after an RCU grace period.
 *
 * Threads: exactly one writer (the caller of fib_add, fib_del, fib_load,
 * fib_set_params, fib_reclaim_flush) at a time; any number of readers that
 * call the *_rcu lookups between fib_read_lock() and fib_read_unlock(),
 * after fib_thread_online() on that thread. Readers never lock and never
 * wait; a lookup racing an update returns the old or the new answer.
 *
 * Results point into the FIB and stay valid until fib_read_unlock().
 *
 * Errors: functions return 0 or -errno (-EINVAL, -EEXIST, -ENOENT,
 * -ENOMEM); constructors return NULL with errno set.
 */
#ifndef FIB_FIB_H
#define FIB_FIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fib;

/* Route types, numbered as the kernel's RTN_* so netlink maps one to one. */
enum fib_type {
	FIB_UNICAST = 1,
	FIB_LOCAL = 2,
	FIB_BROADCAST = 3,
	FIB_BLACKHOLE = 6,
	FIB_UNREACHABLE = 7,
	FIB_PROHIBIT = 8,
	FIB_THROW = 9,
};

/* An address of either family; IPv4 in the first 4 bytes, network order. */
union fib_addr {
	uint8_t b[16];
	struct in_addr v4;
	struct in6_addr v6;
};

#define FIB_NH_ONLINK 0x01 /* RTNH_F_ONLINK */

/* One path of a route. gw_family is 0 without a gateway. */
struct fib_nh {
	union fib_addr gw;
	uint8_t gw_family;
	uint8_t flags;
	uint16_t weight; /* 1..256, as rtnh_hops + 1 */
	uint32_t ifindex;
};

/*
 * A route as the caller describes it (input of fib_add and fib_del). The
 * FIB keeps its own copy: type, tos and table per prefix, the rest
 * (priority, protocol, scope, prefsrc, next hops) in an interned,
 * reference-counted set shared by every route with the same values.
 */
struct fib_route {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t plen;
	uint8_t type; /* enum fib_type */
	uint8_t tos;
	uint8_t protocol; /* RTPROT_* */
	uint8_t scope;    /* RT_SCOPE_* */
	uint8_t prefsrc_set;
	uint8_t nh_count; /* 0 for routes without next hops */
	uint16_t encap_type; /* RTA_ENCAP_TYPE, kept not expanded */
	uint32_t table;
	uint32_t priority;
	uint32_t nh_id; /* RTA_NH_ID, 0 if none */
	union fib_addr dst;
	union fib_addr prefsrc;
	const struct fib_nh *nh;
	/* A resilient next-hop group (`ip nexthop add ... type resilient`):
	 * res_buckets entries of res_map, each the index in nh[] of the path
	 * the kernel's bucket holds; the kernel picks bucket hash % res_buckets
	 * (nexthop_select_path_res). 0 and NULL otherwise. The FIB copies it. */
	uint16_t res_buckets;
	const uint8_t *res_map;
};

/* fib_add flags, after NLM_F_REPLACE / NLM_F_APPEND / NLM_F_EXCL. */
#define FIB_ADD_REPLACE 0x1 /* replace the first route of equal table, tos and priority */
#define FIB_ADD_APPEND 0x2  /* add after the routes of equal table, tos and priority */
#define FIB_ADD_EXCL 0x4    /* fail with -EEXIST if such a route exists */

/* fib_del: fields left zero (type, protocol, scope, priority, nh_count)
 * match anything, as the kernel matches deletes. */

/* Interned attributes of a route: what the kernel calls fib_info. */
struct fib_info {
	uint32_t priority;
	uint8_t protocol;
	uint8_t scope;
	uint8_t prefsrc_set;
	uint8_t nh_count;
	uint16_t encap_type;
	uint16_t res_buckets; /* resilient group: entries of the bucket map, else 0 */
	uint32_t nh_id;
	union fib_addr prefsrc;
	struct fib_nh nh[]; /* nh_count entries, then the bucket map (fib_info_res_map) */
};

/* The bucket -> path map of a resilient group's set (res_buckets bytes,
 * each an index into nh[]), NULL without one. Part of the set's identity:
 * two routes with the same paths but different buckets have two sets.
 * Context: any (reader for a set the FIB holds). */
static inline const uint8_t *
fib_info_res_map(const struct fib_info *fi)
{
	return fi->res_buckets ? (const uint8_t *)&fi->nh[fi->nh_count] : (const uint8_t *)0;
}

/*
 * A lookup result: opaque handles into the FIB, NULL alias when nothing
 * matched. Valid until fib_read_unlock().
 */
struct fib_leaf;
struct fib_alias;
struct fib_result {
	const struct fib_leaf *leaf;
	const struct fib_alias *alias;
};

/* Everything about a matched route, filled by fib_result_get. */
struct fib_match {
	uint8_t family;
	uint8_t plen;
	uint8_t type;
	uint8_t tos;
	uint32_t table;
	union fib_addr prefix;
	const struct fib_info *info; /* valid until fib_read_unlock() */
};

/* Compiled tables per family: accel_table and up to 7 others. */
#define FIB_ACCEL_TABLES 8

/* Tunables; defaults from Linux fib_trie. */
enum fib_reclaim_mode {
	FIB_RECLAIM_CALL_RCU = 0, /* hand each batch to call_rcu: the writer never waits */
	FIB_RECLAIM_SYNC = 1,     /* the writer waits one grace period per batch */
};

struct fib_params {
	unsigned inflate_threshold;      /* 50 (%) */
	unsigned halve_threshold;        /* 25 */
	unsigned inflate_threshold_root; /* 30 */
	unsigned halve_threshold_root;   /* 15 */
	unsigned sync_pages;             /* 128: retired bytes per batch, in 4 KiB pages */
	unsigned reclaim_mode;           /* enum fib_reclaim_mode */
	/* The table compiled for fast tos-0 lookups of that table (the full
	 * BGP table), per family; 0: none (the trie answers everything,
	 * unless accel_min_routes gives a large table one by its size).
	 * It is built with the table's first route (none while the table
	 * is empty). Defaults: 254 (main) for both. It costs memory (about
	 * 8 bytes per IPv4 route, 20 per IPv6 route on the tier-1 tables)
	 * and writer time (a change rebuilds the blocks on its path: a few
	 * us at the median). */
	uint32_t accel_table;
	uint32_t accel_table6;
	/* Any other table (a VRF holding a full table) gets a compiled table
	 * of its own once it holds this many routes of one family, up to
	 * FIB_ACCEL_TABLES - 1 such tables per family, and loses it below half
	 * of it. 0: only accel_table. Default 100000. The build runs in the
	 * writer's call that crosses the threshold (about as long as a bulk
	 * load's compiled table: 20 ms for a full IPv4 table), unless
	 * accel_defer. */
	uint32_t accel_min_routes;
	/* 1: fib_add and fib_set_params never build a compiled table (a table
	 * crossing accel_min_routes, the first route of accel_table, a new
	 * accel_table or threshold): the
	 * trie answers that table until the writer calls fib_accel_sync,
	 * which a daemon runs off its event loop. Retiring one is never
	 * deferred. fib_load and fib_compact build theirs at once either
	 * way. Default 0. */
	uint8_t accel_defer;
};

/* Fill p with the defaults. Context: any. */
void fib_params_default(struct fib_params *p);

/* Create an empty FIB; p may be NULL for defaults. Context: any, once. */
struct fib *fib_new(const struct fib_params *p);
/*
 * Free the FIB. Context: writer, with no reader inside a read section
 * on this FIB any more. Never waits for a grace period: the node pools go
 * whole (no per-node walk) now, or when the last batch still waiting for
 * its grace period has been freed.
 */
void fib_free(struct fib *fib);

/* Change tunables on a live FIB; they apply to later resizes and batches.
 * Context: writer. Returns -EINVAL for out-of-range values (thresholds
 * 1..100, halve < inflate, sync_pages >= 1). */
int fib_set_params(struct fib *fib, const struct fib_params *p);
void fib_get_params(const struct fib *fib, struct fib_params *p);

/*
 * params accel_defer: are compiled tables waiting to be built? Then
 * fib_accel_sync builds them (about 20 ms per full IPv4 table, 25 ms per
 * IPv6 one) and publishes each as it is done; the trie answers their
 * tables meanwhile. Returns 0, or -ENOMEM if one could not be built (that
 * table stays with the trie, not tried again until new parameters or a
 * bulk build). Context: writer.
 */
bool fib_accel_pending(const struct fib *fib);
int fib_accel_sync(struct fib *fib);

/* Context: writer. Returns 0, -EINVAL, -EEXIST (FIB_ADD_EXCL, or an
 * identical route without flags) or -ENOMEM; on error nothing changed. */
int fib_add(struct fib *fib, const struct fib_route *r, unsigned flags);
/* Context: writer. Returns 0, -EINVAL or -ENOENT. */
int fib_del(struct fib *fib, const struct fib_route *r);
/*
 * Add many routes at once: sorts them, builds the whole trie of each
 * family off-line (the routes it had plus these) and publishes it with one
 * pointer store; the old one is retired. Routes of equal prefix, table,
 * tos and priority are kept in input order after those already there, as
 * appends; identical routes once. All or nothing: on error the FIB is
 * unchanged. Needs memory for both tries while it runs.
 * Context: writer. Returns 0, -EINVAL or -ENOMEM.
 */
int fib_load(struct fib *fib, const struct fib_route *r, size_t n);
/*
 * Rebuild the trie of one family (AF_UNSPEC: both) off-line from the
 * routes it holds, as fib_load builds, and publish it with one store; the
 * old trie is retired. Route-by-route churn leaves a trie larger than the
 * bulk-built one (resizes are budgeted per update); this brings it back.
 * Costs about what fib_load of the same routes costs, and memory for both
 * tries while it runs. Context: writer. Returns 0, or -ENOMEM with the
 * FIB unchanged.
 */
int fib_compact(struct fib *fib, int family);
/* Remove every route of one family (AF_UNSPEC: both). Context: writer. */
void fib_flush(struct fib *fib, int family);
/*
 * Give back to the system the free memory the FIB keeps ready for its
 * writer: while routes change one by one it keeps up to 4 MiB of freed
 * chunks backed (giving them back and faulting them in again cost the
 * writer more than the change itself); this returns all but 256 KiB,
 * for when the table is quiet. Context: any.
 */
void fib_trim(struct fib *fib);

/* Number of routes per family. Context: any. */
size_t fib_count(const struct fib *fib, int family);
/* Bumped by every change; flow caches compare it. Context: any. */
uint64_t fib_generation(const struct fib *fib);

/* Reader registration and read-side sections (liburcu, see fib/rcu.h). */
void fib_thread_online(void);
void fib_thread_offline(void);
void fib_read_lock(void);
void fib_read_unlock(void);

/*
 * Longest-prefix match in one table. addr in network order; tos 0 matches
 * only routes with tos 0, a route with tos 0 matches any tos (as the
 * kernel). Call with fib_read_lock held.
 */
struct fib_result fib_lookup_rcu(const struct fib *fib, int family, const void *addr,
				 uint32_t table, uint8_t tos);
/* IPv4 fast path: addr in host order, tos 0. Call with fib_read_lock held. */
struct fib_result fib_lookup4_rcu(const struct fib *fib, uint32_t table, uint32_t addr);
/*
 * Batch lookups: n addresses in, n results out, memory accesses of
 * independent lookups overlapped. IPv4 addresses in host order; IPv6 as 16
 * bytes in network order. Call with fib_read_lock held.
 */
void fib_lookup4_batch_rcu(const struct fib *fib, uint32_t table, const uint32_t *addr,
			   struct fib_result *res, size_t n);
void fib_lookup6_batch_rcu(const struct fib *fib, uint32_t table, const uint8_t (*addr)[16],
			   struct fib_result *res, size_t n);

/*
 * Batch lookups by route reference: as fib_lookup4_batch_rcu and
 * fib_lookup6_batch_rcu, but each answer is a 32-bit reference to the
 * matched route (FIB_REF_NONE: no route). Where the compiled table
 * answers (params accel_table, tos 0) the reference is the word it
 * holds, so the lookup reads neither the leaf nor the route: two memory
 * reads for an IPv4 prefix up to /24. A reference is valid in the read
 * section it was made in, until fib_read_unlock(); it names a route of
 * the FIB of that section (a later section may reuse its value for
 * another route). fib_ref_get_rcu turns it into the route in O(1).
 * FIB_REF_UNNAMED: the route has no reference (only when the FIB's pools
 * pass 4 GiB); ask fib_lookup4_rcu or fib_lookup_rcu for that address.
 * Call with fib_read_lock held.
 */
#define FIB_REF_NONE 0u
#define FIB_REF_UNNAMED UINT32_MAX
void fib_lookup4_ref_batch_rcu(const struct fib *fib, uint32_t table, const uint32_t *addr,
			       uint32_t *ref, size_t n);
void fib_lookup6_ref_batch_rcu(const struct fib *fib, uint32_t table,
			       const uint8_t (*addr)[16], uint32_t *ref, size_t n);
/* One IPv4 lookup by route reference (addr in host order, tos 0): what
 * fib_lookup4_ref_batch_rcu gives for one address, with nothing after
 * the compiled table's reads when it answers. Call with fib_read_lock
 * held. */
uint32_t fib_lookup4_ref_rcu(const struct fib *fib, uint32_t table, uint32_t addr);
/*
 * The route a reference of family's lookups names, as the result the
 * lookup of the same address would have given (fib_result_get describes
 * it). Returns 0, -ENOENT for FIB_REF_NONE or FIB_REF_UNNAMED (res then
 * holds no match), -EINVAL for another family. ref must come from this
 * FIB's ref lookups of that family in the same read section.
 * Context: reader.
 */
int fib_ref_get_rcu(const struct fib *fib, int family, uint32_t ref, struct fib_result *res);

/* Describe a result; returns 0, or -ENOENT for no match. Call with
 * fib_read_lock held. */
int fib_result_get(const struct fib_result *res, struct fib_match *m);

/*
 * Exact match: the nth route (0: the first, the one lookups answer with)
 * whose family, dst, plen, table, tos and priority are key's; the other
 * fields of key are ignored. Routes of one such key (appends) come in
 * the order lookups try them. Returns 0 with m filled (its info holds the
 * next hops), -ENOENT if the key has no nth route, -EINVAL for a bad
 * family or prefix length.
 * Context: reader (the writer may call it without the lock: nothing it
 * reads changes under it).
 */
int fib_find_rcu(const struct fib *fib, const struct fib_route *key, unsigned nth,
		 struct fib_match *m);

/*
 * Walk every route of a family in key order. cb returns 0 to go on,
 * anything else stops the walk and is returned. Context: writer (or a
 * reader holding fib_read_lock, which may see a mix of old and new).
 */
typedef int (*fib_walk_cb)(const struct fib_match *m, void *arg);
int fib_walk(const struct fib *fib, int family, fib_walk_cb cb, void *arg);

/*
 * A walk in steps, as the kernel resumes a route dump: where the next step
 * starts (key: a leaf's network address; skip: routes of that leaf already
 * visited). Zero it to start; done is set once the family is walked.
 */
struct fib_walk_pos {
	union fib_addr key;
	uint32_t skip;
	int done;
};
/*
 * Walk the routes of one family (AF_INET or AF_INET6) from pos in key
 * order until cb returns non-zero (the route it was given counts as
 * visited; pos then says where to go on) or the end (pos->done). Returns
 * cb's value, 0 at the end, -EINVAL for another family. Between steps the
 * FIB may change: a route added or removed before pos is not seen, as
 * with a netlink dump. Context: reader (or the writer).
 */
int fib_walk_from(const struct fib *fib, int family, struct fib_walk_pos *pos, fib_walk_cb cb,
		  void *arg);

/* Introspection, like /proc/net/fib_triestat plus reclamation. */
#define FIB_STATS_MAX_BITS 32
struct fib_trie_stats {
	uint64_t leaves;
	uint64_t prefixes; /* aliases: routes */
	uint64_t nodes;    /* internal nodes */
	uint64_t nodes_by_bits[FIB_STATS_MAX_BITS + 1];
	uint64_t pointers;
	uint64_t null_pointers;
	uint64_t depth_total; /* sum over leaves, for the average */
	uint32_t depth_max;
	uint64_t bytes; /* nodes + leaves + compiled table, as allocated from the pools */
	uint64_t resizes, inflates, halves, collapses;
	/* the compiled lookup tables: params accel_table (0: none) and the
	 * others' (accel_min_routes); the counts below add them all up */
	uint32_t accel_table;
	uint32_t accel_tables; /* how many: accel_table_ids[0 .. accel_tables) */
	uint32_t accel_table_ids[FIB_ACCEL_TABLES];
	/* IPv6: blocks, dirs and multi-level blocks (nodes), intervals
	 * (answers); IPv4: segments, deep nodes, runs */
	uint64_t accel_bytes, accel_blocks, accel_nodes, accel_answers;
	uint64_t accel_asks; /* parts the trie answers for now: IPv4 /18s;
			      * IPv6 /16s and /32s */
};
struct fib_reclaim_stats {
	uint64_t batches;
	uint64_t bytes_retired;
	uint64_t bytes_freed;
	uint64_t bytes_pending;
	uint64_t grace_periods;
	uint64_t gp_ns_min, gp_ns_max, gp_ns_total;
};
struct fib_stats {
	struct fib_trie_stats v4, v6;
	struct fib_reclaim_stats reclaim;
	uint64_t infos;      /* interned attribute sets */
	uint64_t info_bytes;
	uint64_t bytes;      /* everything the FIB holds */
	uint64_t generation;
};
/* Context: writer (walks the tries). */
void fib_stats(const struct fib *fib, struct fib_stats *st);
/*
 * fib_stats' bytes without the walk: what the pools hold, memory retired
 * and not freed yet included (so never less than fib_stats gives after
 * fib_reclaim_barrier). O(1). Context: writer.
 */
uint64_t fib_bytes(const struct fib *fib);

/* Force the pending reclamation batch out now. Context: writer. */
void fib_reclaim_flush(struct fib *fib);
/* Wait until every batch handed to call_rcu has been freed (rcu_barrier).
 * Context: writer, outside any read section. */
void fib_reclaim_barrier(struct fib *fib);

/* Verify the trie invariants (child counts, empty/full counters, key
 * prefixes, slen, leaf order). Returns 0 or -EUCLEAN and a message in buf.
 * Context: writer. For tests. */
int fib_check(const struct fib *fib, char *buf, size_t len);

/*
 * Test hook, only in builds configured with --enable-fault-injection: make
 * the nth next allocation of this FIB's pools fail (1 = the next one;
 * 0 disables). Context: writer.
 */
void fib_fail_after(struct fib *fib, long n);

/* Helpers: "10.0.0.0/8" <-> struct fib_route dst/plen/family. */
int fib_prefix_parse(const char *s, union fib_addr *a, uint8_t *plen, uint8_t *family);
const char *fib_type_name(unsigned type);

#ifdef __cplusplus
}
#endif
#endif
