/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: batched reclamation (see reclaim.h)
 *
 * A batch is an array of (pointer, size) pairs plus an rcu_head. The
 * writer fills the current batch; the call_rcu worker (or the writer
 * itself in sync mode) frees a full one. Counters touched by both threads
 * are updated with atomics.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "fib/pool.h"
#include "fib/rcu.h"
#include "fib/reclaim.h"

#define RECLAIM_PAGE 4096u

#ifdef __SANITIZE_THREAD__
char fib_tsan_grace; /* annotation only: see rcu.h */
#endif

struct reclaim_item {
	void *obj;
	size_t size;
};

struct reclaim_batch {
	struct rcu_head head;
	struct reclaim *rc;
	struct reclaim_batch *next; /* full batches waiting for reclaim_release */
	uint64_t t_handoff;
	uint64_t bytes;
	size_t n, cap;
	struct reclaim_item item[];
};

struct reclaim {
	struct pool *pool;
	unsigned sync_pages;
	unsigned mode;
	struct reclaim_batch *cur;
	unsigned hold; /* writer only: reclaim_hold depth */
	struct reclaim_batch *held, **held_tail; /* full batches held back, in order */
	/* the owner's reference plus one per batch handed to call_rcu: the
	 * last to drop it frees the pool, so freeing a FIB never waits */
	long refs;
	/* shared with the call_rcu worker: atomics */
	uint64_t batches, bytes_retired, bytes_freed, gp, gp_min, gp_max, gp_total;
};

static uint64_t
reclaim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct reclaim *
reclaim_new(struct pool *pool, unsigned sync_pages, unsigned mode)
{
	struct reclaim *rc = calloc(1, sizeof(*rc));

	if (!rc)
		return NULL;
	rc->pool = pool;
	rc->sync_pages = sync_pages;
	rc->mode = mode;
	rc->gp_min = UINT64_MAX;
	rc->refs = 1;
	return rc;
}

void
reclaim_set(struct reclaim *rc, unsigned sync_pages, unsigned mode)
{
	rc->sync_pages = sync_pages;
	rc->mode = mode;
}

static void
reclaim_note_gp(struct reclaim *rc, uint64_t ns)
{
	uint64_t old;

	uatomic_inc(&rc->gp);
	uatomic_add(&rc->gp_total, ns);
	old = uatomic_read(&rc->gp_min);
	while (ns < old && uatomic_cmpxchg(&rc->gp_min, old, ns) != old)
		old = uatomic_read(&rc->gp_min);
	old = uatomic_read(&rc->gp_max);
	while (ns > old && uatomic_cmpxchg(&rc->gp_max, old, ns) != old)
		old = uatomic_read(&rc->gp_max);
}

static void
reclaim_batch_free(struct reclaim_batch *b)
{
	struct reclaim *rc = b->rc;

	FIB_TSAN_GRACE_END();
	for (size_t i = 0; i < b->n; i++)
		pool_free(rc->pool, b->item[i].obj, b->item[i].size);
	uatomic_add(&rc->bytes_freed, b->bytes);
	free(b);
}

static void
reclaim_unref(struct reclaim *rc)
{
	if (uatomic_sub_return(&rc->refs, 1) == 0) {
		FIB_TSAN_PICKUP(rc);
		pool_free_all(rc->pool);
		free(rc);
	} else {
		FIB_TSAN_HANDOFF(rc);
	}
}

static void
reclaim_batch_cb(struct rcu_head *head)
{
	struct reclaim_batch *b = caa_container_of(head, struct reclaim_batch, head);
	struct reclaim *rc;

	FIB_TSAN_PICKUP(b);
	rc = b->rc;
	reclaim_note_gp(rc, reclaim_now_ns() - b->t_handoff);
	reclaim_batch_free(b);
	reclaim_unref(rc);
}

void
reclaim_flush(struct reclaim *rc)
{
	struct reclaim_batch *b = rc->cur;

	if (!b || b->n == 0)
		return;
	rc->cur = NULL;
	uatomic_inc(&rc->batches);
	b->t_handoff = reclaim_now_ns();
	if (rc->mode == FIB_RECLAIM_SYNC) {
		urcu_memb_synchronize_rcu();
		reclaim_note_gp(rc, reclaim_now_ns() - b->t_handoff);
		reclaim_batch_free(b);
	} else {
		uatomic_inc(&rc->refs);
		FIB_TSAN_HANDOFF(b);
		urcu_memb_call_rcu(&b->head, reclaim_batch_cb);
	}
}

void
reclaim_retire(struct reclaim *rc, void *obj, size_t size)
{
	struct reclaim_batch *b = rc->cur;

	if (!obj)
		return;
	if (!b || b->n == b->cap) {
		size_t cap = b ? b->cap * 2 : 256;
		struct reclaim_batch *nb = realloc(b, sizeof(*nb) + cap * sizeof(nb->item[0]));
		if (!nb) {
			if (rc->hold) {
				/* Freeing now could beat the generation move
				 * that hides cached results: leak instead. */
				uatomic_add(&rc->bytes_retired, size);
				return;
			}
			/* Cannot queue: pay one grace period now rather than leak. */
			urcu_memb_synchronize_rcu();
			FIB_TSAN_GRACE_END();
			pool_free(rc->pool, obj, size);
			uatomic_add(&rc->bytes_retired, size);
			uatomic_add(&rc->bytes_freed, size);
			return;
		}
		if (!b) {
			nb->rc = rc;
			nb->n = 0;
			nb->bytes = 0;
		}
		nb->cap = cap;
		rc->cur = b = nb;
	}
	b->item[b->n].obj = obj;
	b->item[b->n].size = size;
	b->n++;
	b->bytes += size;
	uatomic_add(&rc->bytes_retired, size);
	if (b->bytes < (uint64_t)rc->sync_pages * RECLAIM_PAGE)
		return;
	if (!rc->hold) {
		reclaim_flush(rc);
		return;
	}
	/* full while held: queue it whole, start another */
	b->next = NULL;
	if (!rc->held)
		rc->held_tail = &rc->held;
	*rc->held_tail = b;
	rc->held_tail = &b->next;
	rc->cur = NULL;
}

void
reclaim_hold(struct reclaim *rc)
{
	rc->hold++;
}

void
reclaim_release(struct reclaim *rc)
{
	struct reclaim_batch *cur;

	if (--rc->hold)
		return;
	/* the held batches go as they would have, one grace period each */
	cur = rc->cur;
	while (rc->held) {
		rc->cur = rc->held;
		rc->held = rc->held->next;
		reclaim_flush(rc);
	}
	rc->cur = cur;
	if (cur && cur->bytes >= (uint64_t)rc->sync_pages * RECLAIM_PAGE)
		reclaim_flush(rc);
}

void
reclaim_barrier(struct reclaim *rc)
{
	reclaim_flush(rc);
	urcu_memb_barrier();
}

void
reclaim_free(struct reclaim *rc)
{
	if (!rc)
		return;
	reclaim_flush(rc);
	reclaim_unref(rc);
}

void
reclaim_stats(const struct reclaim *rc, struct fib_reclaim_stats *st)
{
	struct reclaim *m = (struct reclaim *)rc;

	st->batches = uatomic_read(&m->batches);
	st->bytes_retired = uatomic_read(&m->bytes_retired);
	st->bytes_freed = uatomic_read(&m->bytes_freed);
	st->bytes_pending = st->bytes_retired - st->bytes_freed;
	st->grace_periods = uatomic_read(&m->gp);
	st->gp_ns_total = uatomic_read(&m->gp_total);
	st->gp_ns_max = uatomic_read(&m->gp_max);
	st->gp_ns_min = st->grace_periods ? uatomic_read(&m->gp_min) : 0;
}
