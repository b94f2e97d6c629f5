/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: interned route attributes (the kernel's fib_info)
 *
 * Priority, protocol, scope, preferred source and the next-hop set of a
 * route live in a struct fib_info shared by every route with the same
 * values: a full BGP table has a few dozen distinct sets, so a route holds
 * a reference, not a copy. Sets are found through a writer-only hash table
 * and reference counted; the last put unlinks the set and retires it to
 * the reclamation queue (readers may still hold it).
 */
#ifndef FIB_INFO_H
#define FIB_INFO_H

#include "fib/fib.h"

struct pool;
struct reclaim;
struct info_table;

struct info_table *info_table_new(struct pool *pool, struct reclaim *rc);
/* Context: writer; every set must have been put. */
void info_table_free(struct info_table *it);
/* Find or create the set for r's attributes, with one more reference.
 * Context: writer. NULL on allocation failure. */
struct fib_info *info_get(struct info_table *it, const struct fib_route *r);
void info_hold(struct fib_info *fi);
/* Drop a reference; the last one retires the set. Context: writer. */
void info_put(struct info_table *it, struct fib_info *fi);
/* Does fi match the optional fields of a delete request? */
int info_match(const struct fib_info *fi, const struct fib_route *r);
uint64_t info_count(const struct info_table *it);
uint64_t info_bytes(const struct info_table *it);

#endif
