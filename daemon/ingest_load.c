/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ingest, the first load
 *
 * The first dump goes into the FIB with one fib_load per family, on the
 * loader thread that daemon/handoff.c runs: it is the FIB's only writer
 * until it hands back, the main loop meanwhile dumps IPv6 (while IPv4
 * loads) and serves its other events, and events wait in the event
 * socket. When the loader is joined, fibd is ready and the queued events
 * are applied.
 *
 * Whatever the end of the load costs stays on the loader thread too, so
 * that the loop never stalls for it: freeing the dump set (tens of MB),
 * and after the last load the reference size of a bulk-built FIB for
 * compactions (daemon/settle.c), which needs the old trie's grace period
 * (fib_reclaim_barrier) and a walk of both tries (fib_stats).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "daemon/handoff.h"
#include "daemon/ingest_priv.h"

static void
ingest_ready(struct ingest *ing)
{
	ing->first = 0;
	ing->st.ready = 1;
	ing->st.ingest_seconds = ingest_now() - ((double)ing->t0.tv_sec + ing->t0.tv_nsec * 1e-9);
	if (ing->ready_cb)
		ing->ready_cb(ing, ing->ready_arg);
}

/*
 * First dump: one fib_load per family (the FIB publishes each once). It
 * runs on a loader thread, which is the FIB's only writer meanwhile: the
 * main thread dumps IPv6 while IPv4 loads, and its loop keeps serving
 * other events instead of stalling for the whole build. Events wait in
 * the socket until both loads are done.
 */
static int
ingest_load_set(struct ingest *ing, struct ingest_set *s)
{
	size_t i = 0;
	int err = 0;

	while (i < s->n) {
		size_t j = i;
		int ret;

		while (j < s->n && s->r[j].family == s->r[i].family)
			j++;
		/* Several routes of one key (IPv4 appends, IPv6 routes on
		 * different devices) stay in dump order: fib_load keeps them
		 * as appends. */
		ret = fib_load(ing->fib, &s->r[i], j - i);
		if (ret < 0)
			err = ret;
		else
			ing->load.loaded += j - i; /* not st: the main thread reads it */
		i = j;
	}
	return err;
}

/* The loader thread's job. Context: writer (the loader thread). */
void
ingest_loader(void *arg)
{
	struct ingest *ing = arg;

	ingest_set_fix(&ing->load.set); /* 5 ms a million routes: not on the loop */
	ing->load.err = ingest_load_set(ing, &ing->load.set);
	ingest_set_free(&ing->load.set); /* a full table's dump set is ~90 MB */
	if (ing->load.last && ing->load.err == 0) {
		struct fib_stats st;

		fib_reclaim_barrier(ing->fib);
		fib_stats(ing->fib, &st);
		ing->load.bytes = st.bytes;
		ing->load.stats = st;
	}
}

/* Hand the collected routes to the loader, which fixes their paths. */
void
ingest_load_start(struct ingest *ing)
{
	ing->load.set = ing->set;
	memset(&ing->set, 0, sizeof(ing->set));
	ing->load.last = ing->phase == PH_APPLY; /* the dump is over */
	ing->load.running = 1;
	if (handoff_run(ing->load.ho) < 0)
		handoff_run_here(ing->load.ho);
}

void
ingest_load_finish(struct ingest *ing)
{
	ingest_ready(ing);
	ingest_go_idle(ing);
}

/* The loader is done (joined). Context: main loop. */
void
ingest_load_done(void *arg)
{
	struct ingest *ing = arg;

	ing->load.running = 0;
	ing->st.routes_loaded += ing->load.loaded;
	ing->load.loaded = 0;
	ing->st.load_bytes = ing->load.bytes;
	ingest_set_free(&ing->load.set); /* freed by the thread; here if it failed to start */
	if (ing->load.err < 0) {
		log_warnx("fib_load: %s: resync", strerror(-ing->load.err));
		ing->resync_pending = 1;
		ing->load.err = 0;
	}
	if (ing->phase != PH_APPLY)
		return; /* still dumping: the rest loads when that is done */
	if (ing->set.n)
		ingest_load_start(ing);
	else
		ingest_load_finish(ing);
}

