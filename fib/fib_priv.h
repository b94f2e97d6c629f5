/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: libfib internals shared by fib.c and the two trie instances
 *
 * A struct fib_alias is one route of a prefix: the kernel's fib_alias.
 * Aliases live inside their leaf, sorted as the kernel sorts them (suffix
 * length ascending, table descending, tos descending, priority ascending),
 * so the first alias that matches a lookup is the answer.
 */
#ifndef FIB_FIB_PRIV_H
#define FIB_FIB_PRIV_H

#include "fib/fib.h"
#include "fib/pool.h"
#include "fib/regions.h"

struct pool;
struct reclaim;
struct info_table;

struct fib_alias {
	uint8_t slen; /* key bits - prefix length */
	uint8_t tos;
	uint8_t type;
	uint8_t family;
	uint32_t table;
	uint32_t info; /* the attribute set's pool handle (fib/info.h) */
};
/* 12 bytes, 4-aligned: an IPv6 leaf of one route (20-byte header) is 32
 * bytes, not 40 with a pointer. */
_Static_assert(sizeof(struct fib_alias) == 12, "fib_alias packs in 12 bytes");

/* The attribute set of fa, through the pool's handle table ht.
 * Context: any (reader for an alias it read under RCU). */
static inline const struct fib_info *
fa_info(const uintptr_t *ht, const struct fib_alias *fa)
{
	return (const struct fib_info *)pool_handle_ptr(ht, fa->info);
}

/* What both tries share: memory, reclamation, attribute sets, tunables. */
struct fib_ctx {
	struct pool *pool;
	const uintptr_t *ht; /* the pool's handle table: what aliases' info names */
	struct reclaim *rc;
	struct info_table *it;
	struct fib_params params;
	struct fib_regions regions; /* route region generations (fib/regions.h) */
};

/*
 * The FIB itself: defined here so that the policy and the resolution
 * (fib/policy.c, fib/resolve.c) reach the tries without an exported call.
 */
struct trie4;
struct trie6;
struct fib_policy;
struct policy_stage;

/* A small per-family filter of the local table's prefixes (fib/policy.c):
 * "dst cannot be in the local table" in two bit tests for the fast path. */
#define LOCALF_BITS 4096u
#define LOCALF_GRAIN4 24
#define LOCALF_GRAIN6 64
struct localf {
	uint64_t bits[LOCALF_BITS / 64]; /* hash of the /24 (IPv4) or /64 (IPv6) */
	/* prefixes shorter than that, by the values of the address's top 8
	 * bits they cover (127.0.0.0/8, ff00::/8): every address under a set
	 * bit takes the full walk */
	uint64_t top[4];
	uint32_t ndefault; /* routes in table 253 (default), at least */
};

struct fib {
	struct fib_ctx ctx;
	struct trie4 *t4;
	struct trie6 *t6;
	uint64_t generation;
	struct fib_policy *policy[2];    /* RCU: [0] IPv4, [1] IPv6 */
	struct policy_stage *ps;         /* the writer's staging copy */
	uint64_t policy_gen;
	uint8_t policy_default[2];       /* read without the lock: fib_policy_is_default */
	struct localf localf[2];
};

#endif
