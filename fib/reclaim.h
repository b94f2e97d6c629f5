/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: batched reclamation of retired FIB memory
 *
 * The writer retires every node, leaf and attribute set it unlinks. A
 * retired object may still be read by a lookup that started before the
 * unlink, so it is only queued, with its bytes counted. When the queue
 * holds sync_pages pages (the kernel's sync_pages, later fib_sync_mem),
 * the whole batch is freed after ONE grace period:
 *
 *   retire -> [batch: ptr,size ptr,size ...]  bytes >= sync_pages * 4096
 *                 |
 *                 +-- FIB_RECLAIM_CALL_RCU: call_rcu(batch); the writer goes
 *                 |   on, liburcu's worker frees it after the grace period
 *                 +-- FIB_RECLAIM_SYNC: synchronize_rcu() in the writer,
 *                     then free
 *
 * Never a grace period per object: that made full-table loads many times
 * slower in the kernel. Grace-period latency is measured (min/avg/max) in
 * both modes: for call_rcu, from hand-off to the callback.
 */
#ifndef FIB_RECLAIM_H
#define FIB_RECLAIM_H

#include <stddef.h>
#include <stdint.h>

#include "fib/fib.h"

struct pool;
struct reclaim;

struct reclaim *reclaim_new(struct pool *pool, unsigned sync_pages, unsigned mode);
/* Hand off the last batch and drop the owner's reference: the pool and
 * rc are freed now, or by the callback of the last batch in flight. Never
 * waits. Context: writer. */
void reclaim_free(struct reclaim *rc);
void reclaim_set(struct reclaim *rc, unsigned sync_pages, unsigned mode);
/* Queue obj (of the size given to pool_alloc) for freeing after a grace
 * period. Context: writer. Never fails: if the queue cannot grow, the
 * writer waits for a grace period and frees at once. */
void reclaim_retire(struct reclaim *rc, void *obj, size_t size);
/*
 * Between hold and release (nested), full batches wait: none is handed off
 * before the change that retired into it has moved the FIB generation
 * again (see fib.c). If the queue cannot grow while held, the object is
 * leaked rather than freed early. Context: writer.
 */
void reclaim_hold(struct reclaim *rc);
void reclaim_release(struct reclaim *rc);
/* Hand the current batch off now, whatever its size. Context: writer. */
void reclaim_flush(struct reclaim *rc);
/* Wait until every handed-off batch is freed. Context: writer. */
void reclaim_barrier(struct reclaim *rc);
void reclaim_stats(const struct reclaim *rc, struct fib_reclaim_stats *st);

#endif
