/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: interned route attributes (the kernel's fib_info)
 *
 * Priority, protocol, scope, preferred source and the next-hop set of a
 * route live in a struct fib_info shared by every route with the same
 * values: a full BGP table has a few dozen distinct sets, so a route holds
 * a reference, not a copy. Sets are found through a writer-only hash table
 * and reference counted; the last put unlinks the set and retires it to
 * the reclamation queue (readers may still hold it). A set is named by
 * its 32-bit pool handle (fib/pool.h), which a route's alias holds: a
 * pointer would make an IPv6 leaf 40 bytes instead of 32.
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
/* Find or create the set for r's attributes, with one more reference;
 * its handle (never 0). Context: writer. 0 on allocation failure, or
 * when the set's memory got no handle (a pool beyond 4 GiB). */
uint32_t info_get(struct info_table *it, const struct fib_route *r);
/* One more reference to the set of handle h. Context: writer. */
void info_hold(struct info_table *it, uint32_t h);
/* Drop a reference; the last one retires the set. Context: writer. */
void info_put(struct info_table *it, uint32_t h);
/* Does fi match the optional fields of a delete request? */
int info_match(const struct fib_info *fi, const struct fib_route *r);
uint64_t info_count(const struct info_table *it);
uint64_t info_bytes(const struct info_table *it);

#endif
