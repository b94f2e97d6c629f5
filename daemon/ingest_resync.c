/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ingest, the resync
 *
 * After ENOBUFS or a silent kernel change, the daemon dumps again
 * (daemon/ingest_dump.c) and merges the dump into the FIB here.
 * Mark-and-sweep: fib_walk copies what the FIB holds into a second set,
 * and ingest_sweep (daemon/ingest_sweep.c, no I/O) merges it with the
 * dump by key. Keys only in the FIB are deleted, keys only in the dump
 * are added, keys in both with different attributes are replaced in
 * place (FIB_ADD_REPLACE), so a reader never finds a prefix missing that
 * the kernel kept. The walk and the sorts are single steps; the merge
 * runs in slices of budget_us, its decisions applied here.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <event2/event.h>

#include "daemon/handoff.h"
#include "daemon/ingest_priv.h"

static int
ingest_walk_cb(const struct fib_match *m, void *arg)
{
	struct ingest *ing = arg;
	struct fib_route r;

	if (!ingest_table_wanted(ing, m->table))
		return 0;
	memset(&r, 0, sizeof(r));
	r.family = m->family;
	r.plen = m->plen;
	r.type = m->type;
	r.tos = m->tos;
	r.table = m->table;
	r.dst = m->prefix;
	r.priority = m->info->priority;
	r.protocol = m->info->protocol;
	r.scope = m->info->scope;
	r.prefsrc_set = m->info->prefsrc_set;
	r.prefsrc = m->info->prefsrc;
	r.nh_count = m->info->nh_count;
	r.encap_type = m->info->encap_type;
	r.nh_id = m->info->nh_id;
	r.nh = m->info->nh;
	r.res_buckets = m->info->res_buckets;
	r.res_map = fib_info_res_map(m->info);
	return ingest_set_add(&ing->cur, &r) < 0 ? -ENOMEM : 0;
}

/* The merge's decisions, applied to the FIB. */
static void
ingest_merge_apply(void *arg, enum ingest_sweep_op op, const struct fib_route *r)
{
	struct ingest *ing = arg;

	if (op == INGEST_SWEEP_DEL)
		ingest_fib_del(ing, r);
	else
		ingest_fib_add(ing, r, op == INGEST_SWEEP_REPLACE ? FIB_ADD_REPLACE : FIB_ADD_APPEND);
}

/*
 * The merge's preparation: the dump's paths fixed, the FIB's routes
 * copied (paths included) under a read lock, both sorted. 290 ms for a
 * 344K-route table, so it runs on the merge thread: nothing writes the
 * FIB's routes meanwhile (the ingest is in APPLY, events wait), and the
 * copies need nothing of the FIB once made. Context: the merge thread,
 * or the main loop without one.
 */
void
ingest_merge_prep(void *arg)
{
	struct ingest *ing = arg;

	ing->mp.walk_err = 0;
	ing->mp.sort_err = 0;
	ingest_set_fix(&ing->set);
	ingest_set_reset(&ing->cur);
	for (int f = 0; f < 2; f++) {
		int family = f ? AF_INET6 : AF_INET;
		int err = 0;

		if (!ingest_family_wanted(ing, family))
			continue;
		fib_read_lock();
		err = fib_walk(ing->fib, family, ingest_walk_cb, ing);
		fib_read_unlock();
		if (err < 0)
			ing->mp.walk_err = 1;
	}
	ingest_set_fix(&ing->cur);
	if (ingest_sweep_init(&ing->sweep, ing->set.r, ing->set.n, ing->cur.r, ing->cur.n,
			      ingest_merge_apply, ing) < 0)
		ing->mp.sort_err = 1;
}

/* The preparation is done: merge in slices. Context: main loop. */
void
ingest_merge_prepped(void *arg)
{
	struct ingest *ing = arg;

	ing->mp.running = 0;
	if (ing->mp.walk_err) {
		log_warnx("resync: out of memory walking the FIB");
		ing->resync_pending = 1;
	}
	if (ing->mp.sort_err) {
		log_warnx("resync: out of memory sorting");
		ing->resync_pending = 1; /* nothing to merge; retry */
	}
	ingest_apply_slice(ing);
}

void
ingest_merge_begin(struct ingest *ing)
{
	ing->mp.running = 1;
	if (handoff_run(ing->mp.ho) < 0)
		handoff_run_here(ing->mp.ho);
}

void
ingest_apply_slice(struct ingest *ing)
{
	double deadline = ingest_deadline(ing);
	unsigned n = 0;

	while (!ingest_sweep_done(&ing->sweep)) {
		ingest_sweep_step(&ing->sweep);
		if (++n % 64 == 0 && ingest_now() >= deadline) {
			ing->st.slices++;
			event_active(ing->work, 0, 0);
			return;
		}
	}
	ingest_sweep_fini(&ing->sweep);
	ingest_set_free(&ing->set);
	ingest_set_free(&ing->cur);
	ing->st.resyncs++;
	ing->st.last_resync_seconds =
		ingest_now() - ((double)ing->t0.tv_sec + ing->t0.tv_nsec * 1e-9);
	log_info("resync done in %.3f s: %zu v4 / %zu v6 routes", ing->st.last_resync_seconds,
		 fib_count(ing->fib, AF_INET), fib_count(ing->fib, AF_INET6));
	ingest_go_idle(ing);
}

