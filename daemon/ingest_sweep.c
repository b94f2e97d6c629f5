/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ingest_sweep implementation
 *
 * The mark-and-sweep of a resync without the marks: two sorted index
 * arrays merged as sorted lists are. One step looks at the smaller key of
 * the two heads, counts the routes of that key on each side (na in the
 * dump, nb in the FIB) and decides from those runs alone (see the table
 * in ingest_sweep.h). Equal runs compare route by route in order, because
 * the kernel answers with the first route of a key: a reordering is a
 * change.
 *
 * A key whose runs differ goes in this order: delete the FIB's routes
 * 2..nb, then replace the one left with the dump's first, then append
 * the dump's others. fib_del forces it: it matches as the kernel does
 * (fib/info.c info_match), ignoring weight, flags and prefsrc, taking a
 * gateway, priority, scope or protocol left zero as any, and removes the
 * first route in the leaf that matches. A delete may so take an earlier
 * route of the key than the one it names, but never a later one (the
 * named one is still in: each earlier delete took a route at or before
 * its own) and never another key's (lower priorities come first in a
 * leaf, so a priority left zero meets its own key first). Run before any
 * new route is in, the nb-1 deletes leave exactly one old route of the
 * key, whichever it is; the replace (exact key, no wildcards) swaps it
 * for the dump's first, and the appends cannot collide, the dump holding
 * no route twice. The key is never empty on the way; a key only in the
 * FIB goes the same way, one delete per route. Replacing first, as this
 * merge once did, let a delete take the route just put in: FIB
 * [A blackhole, B via G dev 1 weight 1], dump [C via G dev 1 weight 2]:
 * replace A with C gives [C, B], deleting B (weight ignored) removes C,
 * and the FIB kept B while the kernel had C.
 *
 * No I/O, no netlink, no FIB: the decisions go to the caller's callback.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/ingest_sweep.h"

int
ingest_sweep_key_cmp(const struct fib_route *a, const struct fib_route *b)
{
	int c;

	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	if (a->table != b->table)
		return a->table < b->table ? -1 : 1;
	c = memcmp(a->dst.b, b->dst.b, a->family == AF_INET ? 4 : 16);
	if (c)
		return c;
	if (a->plen != b->plen)
		return a->plen < b->plen ? -1 : 1;
	if (a->tos != b->tos)
		return a->tos < b->tos ? -1 : 1;
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	return 0;
}

int
ingest_sweep_route_equal(const struct fib_route *a, const struct fib_route *b)
{
	unsigned alen = a->family == AF_INET ? 4 : 16;

	if (a->type != b->type || a->protocol != b->protocol || a->scope != b->scope ||
	    a->prefsrc_set != b->prefsrc_set || a->nh_count != b->nh_count ||
	    a->encap_type != b->encap_type || a->nh_id != b->nh_id)
		return 0;
	if (a->prefsrc_set && memcmp(a->prefsrc.b, b->prefsrc.b, alen))
		return 0;
	if (a->res_buckets != b->res_buckets ||
	    (a->res_buckets && memcmp(a->res_map, b->res_map, a->res_buckets)))
		return 0; /* a resilient group's buckets moved */
	for (unsigned i = 0; i < a->nh_count; i++) {
		const struct fib_nh *x = &a->nh[i], *y = &b->nh[i];

		if (x->gw_family != y->gw_family || x->flags != y->flags ||
		    x->weight != y->weight || x->ifindex != y->ifindex ||
		    (x->gw_family && memcmp(x->gw.b, y->gw.b, x->gw_family == AF_INET ? 4 : 16)))
			return 0;
	}
	return 1;
}

/* Key, then position: routes of one key keep their input order. */
static int
ingest_sweep_idx_cmp(const void *pa, const void *pb, void *arg)
{
	const struct fib_route *r = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = ingest_sweep_key_cmp(&r[a], &r[b]);

	if (c)
		return c;
	return a < b ? -1 : a > b;
}

static uint32_t *
ingest_sweep_sort(const struct fib_route *r, size_t n)
{
	uint32_t *idx = malloc((n ? n : 1) * sizeof(*idx));

	if (!idx)
		return NULL;
	for (size_t i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, n, sizeof(*idx), ingest_sweep_idx_cmp, (void *)r);
	return idx;
}

int
ingest_sweep_init(struct ingest_sweep *sw, const struct fib_route *dump, size_t ndump,
		  const struct fib_route *cur, size_t ncur, ingest_sweep_cb cb, void *arg)
{
	memset(sw, 0, sizeof(*sw));
	sw->cb = cb;
	sw->arg = arg;
	sw->idump = ingest_sweep_sort(dump, ndump);
	sw->icur = ingest_sweep_sort(cur, ncur);
	if (!sw->idump || !sw->icur) {
		ingest_sweep_fini(sw);
		sw->cb = cb;
		sw->arg = arg;
		return -ENOMEM;
	}
	sw->dump = dump;
	sw->ndump = ndump;
	sw->cur = cur;
	sw->ncur = ncur;
	return 0;
}

int
ingest_sweep_done(const struct ingest_sweep *sw)
{
	return sw->di >= sw->ndump && sw->ci >= sw->ncur;
}

void
ingest_sweep_step(struct ingest_sweep *sw)
{
	const struct fib_route *a = sw->di < sw->ndump ? &sw->dump[sw->idump[sw->di]] : NULL;
	const struct fib_route *b = sw->ci < sw->ncur ? &sw->cur[sw->icur[sw->ci]] : NULL;
	size_t na = 0, nb = 0, k;
	int cmp;

	if (!a && !b)
		return;
	if (a && b)
		cmp = ingest_sweep_key_cmp(a, b);
	else
		cmp = a ? -1 : 1;
	if (cmp <= 0)
		while (sw->di + na < sw->ndump &&
		       !ingest_sweep_key_cmp(a, &sw->dump[sw->idump[sw->di + na]]))
			na++;
	if (cmp >= 0)
		while (sw->ci + nb < sw->ncur &&
		       !ingest_sweep_key_cmp(b, &sw->cur[sw->icur[sw->ci + nb]]))
			nb++;
#define SR(i) (&sw->dump[sw->idump[sw->di + (i)]])
#define CR(i) (&sw->cur[sw->icur[sw->ci + (i)]])
	if (na == nb) {
		for (k = 0; k < na && ingest_sweep_route_equal(SR(k), CR(k)); k++)
			;
		if (k == na)
			goto out;
	}
	if (na && nb) {
		/* deletes first: a wildcard delete must find only old routes */
		for (k = 1; k < nb; k++)
			sw->cb(sw->arg, INGEST_SWEEP_DEL, CR(k));
		sw->cb(sw->arg, INGEST_SWEEP_REPLACE, SR(0));
		for (k = 1; k < na; k++)
			sw->cb(sw->arg, INGEST_SWEEP_APPEND, SR(k));
	} else if (na) {
		for (k = 0; k < na; k++)
			sw->cb(sw->arg, INGEST_SWEEP_APPEND, SR(k));
	} else {
		for (k = 0; k < nb; k++)
			sw->cb(sw->arg, INGEST_SWEEP_DEL, CR(k));
	}
#undef SR
#undef CR
out:
	sw->di += na;
	sw->ci += nb;
}

void
ingest_sweep_fini(struct ingest_sweep *sw)
{
	free(sw->idump);
	free(sw->icur);
	memset(sw, 0, sizeof(*sw));
}
