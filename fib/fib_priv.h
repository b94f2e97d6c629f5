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
	struct fib_info *fi;
};

/* What both tries share: memory, reclamation, attribute sets, tunables. */
struct fib_ctx {
	struct pool *pool;
	struct reclaim *rc;
	struct info_table *it;
	struct fib_params params;
	struct fib_regions regions; /* route region generations (fib/regions.h) */
};

#endif
