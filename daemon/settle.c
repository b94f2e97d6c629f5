/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: settle.c, the compaction timer and its thread
 *
 * Route-by-route churn leaves the FIB larger than a bulk build of the
 * same routes: trie nodes resized within a per-update budget, pool
 * chunks with holes. Once the table has been quiet for fib.compact_quiet
 * after churn (1 s ticks with fewer than 100 route changes each, since a
 * live BGP feed is never fully quiet, and no dump or resync running;
 * compact_quiet_step, daemon/compact.h),
 * fibd_settle compares the bytes the FIB holds with those of the last
 * bulk build scaled to today's routes (compact_decide,
 * daemon/compact.h); past fib.compact_margin percent (and
 * COMPACT_MIN_BYTES) it rebuilds both families with fib_compact. A
 * rebuild takes about as long as fib_load of the same routes (0.8-1.4 s
 * for the 1.2M routes of a tier-1 table on a loaded machine), so it runs
 * on the compaction thread (fibd_compact_start), the FIB's writer
 * meanwhile, as the first dump's fib_load runs on ingest's loader
 * thread: the ingest is paused (kernel changes wait in the netlink
 * socket and are applied after, in order), the control socket and the
 * metrics keep answering, lookups go on (RCU). The pass's time is logged
 * and counted (fibd_compaction_seconds_*), and so is the loop's longest
 * stall meanwhile (fibd_compaction_loop_stall_seconds_*: what the main
 * thread still does itself, the decision's fib_reclaim_barrier and
 * fib_stats, the flush of stale cache entries, malloc_trim). It stays
 * rare: only after churn that grew the FIB by the margin, at most once
 * per quiet period, in two passes a second apart (see fibd_settle).
 * Every settle then gives malloc's free pages back (malloc_trim): flow
 * cache entries and netlink buffers churn through malloc, whose arenas
 * keep their peak. The thread is lent the FIB through daemon/handoff.c,
 * as ingest's loader.
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <event2/event.h>

#include "cache/flow.h"
#include "daemon/compact.h"
#include "daemon/fibd.h"

#define FIBD_BUILT_MIN_ROUTES 1000 /* smaller tables are all fixed costs */

/* Remember what a bulk build holds per route: bytes of routes routes,
 * measured once its old trie was freed. A small table is mostly fixed
 * costs: its bytes per route would make a later full table look
 * compact, so the reference of the larger table stays until one of
 * comparable size replaces it. Context: main loop. */
static void
fibd_built_set(struct fibd *d, uint64_t bytes, size_t routes)
{
	d->comp.q.built_pending = 0;
	if (routes < FIBD_BUILT_MIN_ROUTES || routes < d->comp.built_routes / 2)
		return;
	d->comp.built_bytes = bytes;
	d->comp.built_routes = routes;
	log_debug("fib: %.1f MB for %zu routes after a bulk build", (double)bytes / 1e6, routes);
}

/* The first load's reference: measured by the loader thread after its
 * last fib_load (daemon/ingest_load.c), else (no route in the last
 * family) here. Context: main loop, the FIB's writer. */
static void
fibd_built_measure(struct fibd *d)
{
	struct ingest_stats is;
	struct fib_stats st;

	ingest_stats(d->ing, &is);
	if (ingest_load_stats(d->ing, &st)) {
		/* the loader's figures: the first show trie, metrics and
		 * compaction need no walk on the loop */
		d->comp.stats = st;
		d->comp.stats_valid = 1;
		d->comp.stats_at = fibd_now();
	} else if (is.load_bytes) {
		st.bytes = is.load_bytes;
	} else {
		fib_reclaim_barrier(d->fib);
		fibd_fib_stats(d, &st);
	}
	fibd_built_set(d, st.bytes, fib_count(d->fib, AF_INET) + fib_count(d->fib, AF_INET6));
}

/* Context: the trim thread; d->comp.trim_secs is its only output. */
static void
fibd_trim_work(void *arg)
{
	struct fibd *d = arg;
	double t0 = fibd_now();

	fib_trim(d->fib); /* the free chunks kept for route-by-route churn */
	malloc_trim(0);
	d->comp.trim_secs = fibd_now() - t0;
}

/* Context: main loop, the trim thread joined. */
static void
fibd_trim_done(void *arg)
{
	struct fibd *d = arg;

	d->comp.trims++;
	d->comp.trim_last = d->comp.trim_secs;
}

/* Give free heap pages, and the FIB's free chunks beyond 512 KiB, back,
 * on the trim thread (here without one). Context: main loop. */
void
fibd_trim(struct fibd *d)
{
	if (handoff_running(d->comp.trim_ho))
		return;
	if (handoff_run(d->comp.trim_ho) < 0)
		handoff_run_here(d->comp.trim_ho);
}

/*
 * One job of the compaction thread. Pending frees first, then the free
 * chunks the pool keeps for route-by-route churn given back (fib_trim,
 * up to 4 MiB): the bytes are then the FIB's own, measured as the last
 * bulk build's were, and the rebuild allocates with no free in between
 * (fib/pool.c then puts it in fresh and sparse chunks). Pass 1 (unless
 * forced) compares the bytes held with the last bulk build's scaled to
 * today's routes and stops there below fib.compact_margin percent (and
 * COMPACT_MIN_BYTES). Then the rebuild of both families, the old
 * tries handed to call_rcu at once. After pass 2 every flow cache entry
 * is stale (the generation moved): they are dropped now rather than one
 * by one as lookups and the expiry worker meet them, and the thread
 * waits for the old tries' and the entries' grace period (rcu_barrier),
 * so that the trim that follows gives their malloc pages back, the
 * entries cached afterwards are packed in few pages, and the figures
 * taken last are those of a bulk build. A job of c->accel only builds
 * the compiled tables that are due (fib_accel_sync, fibd_accel_start).
 * Context: writer (the compaction
 * thread, or the main loop when no thread could be created),
 * registered, outside read sections.
 */
static void
fibd_compactor_run(struct fibd_compactor *c)
{
	double t0;

	if (c->accel) {
		t0 = fibd_now();
		c->err = fib_accel_sync(c->fib);
		c->seconds = fibd_now() - t0;
		return;
	}
	if (c->delay_ms)
		nanosleep(
		    &(struct timespec){c->delay_ms / 1000, (long)(c->delay_ms % 1000) * 1000000},
		    NULL);
	t0 = fibd_now();
	fib_reclaim_barrier(c->fib);
	fib_trim(c->fib);
	c->needed = 1;
	c->err = 0;
	c->routes = fib_count(c->fib, AF_INET) + fib_count(c->fib, AF_INET6);
	if (c->pass == 1) {
		struct compact_input in;
		struct compact_decision dec;

		fib_stats(c->fib, &c->stats);
		c->before = c->stats.bytes;
		in = (struct compact_input){.bytes = c->before,
					    .routes = c->routes,
					    .built_bytes = c->built_bytes,
					    .built_routes = c->built_routes,
					    .margin = c->margin,
					    .force = c->force};
		compact_decide(&in, &dec);
		c->expected = dec.expected;
		c->needed = dec.compact;
		c->why = compact_why_name(dec.why);
	}
	if (c->needed) {
		c->err = fib_compact(c->fib, AF_UNSPEC);
		fib_reclaim_flush(c->fib);
		if (c->pass == 2 && c->err == 0) {
			if (c->cache)
				flow_cache_flush(c->cache);
			fib_reclaim_barrier(c->fib); /* rcu_barrier: the cache's batches too */
			fib_trim(c->fib);
		}
		fib_stats(c->fib, &c->stats);
	}
	c->seconds = fibd_now() - t0;
}

/* The handoff's job. Context: writer (the compaction thread). */
static void
fibd_compactor_work(void *arg)
{
	struct fibd *d = arg;

	fibd_compactor_run(&d->comp.cw);
}

/*
 * Lend the FIB to the compaction thread for one pass: pause the ingest
 * (already paused between the two passes of a forced compaction), start
 * the 1 ms probe of the loop's stalls from t0, start the thread;
 * fibd_compact_done takes the FIB back. Returns 0 or -EBUSY (the ingest
 * is not idle). Context: main loop, the FIB's writer, no compaction
 * running.
 */
static int
fibd_compact_start(struct fibd *d, int pass, int force, double t0)
{
	struct fibd_compactor *c = &d->comp.cw;
	int err;

	fibd_stats_join(d); /* a stats thread holds the FIB for a few ms */
	if (!ingest_paused(d->ing) && ingest_pause(d->ing) < 0)
		return -EBUSY;
	if (!d->comp.stats_valid) {
		struct fib_stats st;

		fibd_fib_stats(d, &st); /* figures for the thread's time */
	}
	fibd_probe_watch(d, t0);
	c->accel = 0;
	c->pass = pass;
	c->force = force;
	c->cache = d->cache;
	c->margin = d->conf->fib.compact_margin;
	c->built_bytes = d->comp.built_bytes;
	c->built_routes = d->comp.built_routes;
	c->running = 1;
	err = handoff_run(c->ho);
	if (err < 0) {
		log_warnx("compaction thread: %s: compacting on the main thread", strerror(-err));
		handoff_run_here(c->ho);
	}
	return 0;
}

/* The compaction is over (done, failed, not needed, or its second pass
 * left for the next quiet tick): apply what a reload left for later,
 * trim, stop watching the loop, apply kernel changes again. Context:
 * main loop, the FIB's writer. */
static void
fibd_compact_end(struct fibd *d)
{
	if (d->comp.cache_pending) {
		d->comp.cache_pending = 0;
		fibd_cache_apply(d, d->conf);
	}
	fibd_trim(d);
	fibd_probe_unwatch(d);
	ingest_resume(d->ing);
}

/*
 * Compiled tables are due (params accel_defer, set by settings_fib): a
 * table crossed fib.accel_min_routes, or a reload changed the main
 * table or the threshold. Building one takes about as long as a bulk
 * load's (20 ms for a full IPv4 table), so it runs as a job of the
 * compaction thread, the ingest paused meanwhile as for a compaction;
 * the trie answers those tables until then. Context: main loop, the
 * FIB's writer, ingest idle, no compaction running.
 */
static void
fibd_accel_start(struct fibd *d)
{
	struct fibd_compactor *c = &d->comp.cw;
	int err;

	fibd_stats_join(d);
	if (!ingest_paused(d->ing) && ingest_pause(d->ing) < 0)
		return; /* the next tick tries again */
	fibd_probe_watch(d, fibd_now());
	c->accel = 1;
	c->running = 1;
	err = handoff_run(c->ho);
	if (err < 0) {
		log_warnx("compaction thread: %s: compiled tables built on the main thread",
			  strerror(-err));
		handoff_run_here(c->ho);
	}
}

/* Context: main loop, the compaction thread joined. */
static void
fibd_accel_done(struct fibd *d)
{
	struct fibd_compactor *c = &d->comp.cw;

	d->comp.accel_builds++;
	d->comp.accel_last = c->seconds;
	d->comp.stats_at = 0; /* show trie: the new tables at the next refresh */
	if (c->err < 0) {
		d->comp.accel_failures++;
		log_warnx("fib: compiled tables: %s (the trie answers those tables)",
			  strerror(-c->err));
	} else {
		log_info("fib: compiled tables built on the compaction thread in %.1f ms",
			 c->seconds * 1e3);
	}
	if (d->params_pending)
		fibd_fib_params_apply(d, d->conf, "now that the compaction thread is done");
	fibd_compact_end(d);
}

/*
 * The compaction thread is done (eventfd; fd -1: it ran on the main
 * thread): join it, count, apply fib parameters a reload left pending,
 * then start the second pass (forced) or finish. Context: main loop.
 */
static void
fibd_compact_done(void *arg)
{
	struct fibd *d = arg;
	struct fibd_compactor *c = &d->comp.cw;

	c->running = 0;
	if (c->accel) {
		fibd_accel_done(d);
		return;
	}
	d->comp.stats = c->stats; /* the writer's figures: the FIB as the thread left it */
	d->comp.stats_at = fibd_now();
	d->comp.q.settle_gen = d->comp.q.gen = fib_generation(d->fib);
	if (d->params_pending)
		fibd_fib_params_apply(d, d->conf, "now that the compaction thread is done");
	if (!c->needed) {
		fibd_compact_end(d);
		log_debug("fib: %.1f MB held for %zu routes, %.1f MB expected: no compaction, %s "
			  "(%.0f ms on the compaction thread)",
			  c->before / 1e6, c->routes, c->expected / 1e6, c->why, c->seconds * 1e3);
		return;
	}
	if (c->err < 0) {
		d->comp.failures++;
		d->comp.q.pass = 0;
		fibd_compact_end(d);
		log_warnx("fib compaction: %s (pass %d)", strerror(-c->err), c->pass);
		return;
	}
	d->comp.compactions++;
	d->comp.last = c->seconds;
	if (c->seconds > d->comp.max)
		d->comp.max = c->seconds;
	if (c->pass == 1) {
		log_info("fib compacted: %zu routes, %.1f MB held, %.1f MB expected from the last "
			 "bulk build; %.0f ms on the compaction thread%s",
			 c->routes, c->before / 1e6, c->expected / 1e6, c->seconds * 1e3,
			 c->force ? ", second pass now" : "");
		if (c->force && fibd_compact_start(d, 2, 1, d->health.probe_last) == 0)
			return;
		d->comp.q.pass = 1;
		fibd_compact_end(d);
		log_info("fib compaction: event loop stalled at most %.1f ms; second pass due",
			 d->health.stall_last * 1e3);
		return;
	}
	d->comp.q.pass = 0;
	/* the thread measured the bulk build after freeing the old trie:
	 * the reference, kept if nothing changes until the next quiet tick */
	d->comp.q.built_pending = 1;
	fibd_compact_end(d);
	log_info("fib compacted, second pass: %.0f ms on the compaction thread (old trie and "
		 "stale cache entries freed), %.1f MB held; event loop stalled at most %.1f ms",
		 c->seconds * 1e3, c->stats.bytes / 1e6, d->health.stall_last * 1e3);
}

/*
 * Compact the FIB if it holds more than the margin over a fresh build
 * (or always, with force), then trim malloc. Two passes: the first
 * rebuild partly fills holes in chunks of the old trie, which keep those
 * chunks once the old trie is gone; the second, after the first's old
 * trie is freed, moves everything into dense chunks (fib/pool.c). The
 * second pass runs at the next quiet tick (force: as soon as the first
 * is done), so the loop answers in between. The decision and both
 * passes run on the compaction thread (fibd_compactor_run): this starts
 * the first. Returns 0 (started) or -errno. msg (may be NULL) gets one
 * line for the operator. Context: main loop, the FIB's writer, ingest
 * idle, no compaction running.
 */
int
fibd_settle(struct fibd *d, int force, char *msg, size_t len)
{
	size_t routes = fib_count(d->fib, AF_INET) + fib_count(d->fib, AF_INET6);
	int err;

	d->comp.settles++;
	if (!force) {
		/* The quiet tick's check on the loop, without pausing the
		 * ingest: fib_bytes counts frees still pending, so it is never
		 * below what the thread's decision would measure after its
		 * barrier, and compact_decide only compacts more with more
		 * bytes. Only a table that may need it goes to the thread (its
		 * fib_reclaim_barrier and fib_stats took 20-50 ms with the
		 * ingest paused, every quiet period). */
		struct compact_input in = {.bytes = fib_bytes(d->fib),
					   .routes = routes,
					   .built_bytes = d->comp.built_bytes,
					   .built_routes = d->comp.built_routes,
					   .margin = d->conf->fib.compact_margin};
		struct compact_decision dec;

		compact_decide(&in, &dec);
		if (!dec.compact) {
			d->comp.q.settle_gen = d->comp.q.gen = fib_generation(d->fib);
			fibd_trim(d);
			log_debug("fib: %.1f MB held at most for %zu routes, %.1f MB expected: no "
				  "compaction, %s (checked on the loop)",
				  in.bytes / 1e6, routes, dec.expected / 1e6,
				  compact_why_name(dec.why));
			return 0;
		}
	}
	err = fibd_compact_start(d, 1, force, fibd_now());
	if (err < 0) {
		fibd_trim(d);
		if (msg)
			snprintf(msg, len, "failed: %s", strerror(-err));
		return err;
	}
	if (msg)
		snprintf(msg, len,
			 "compaction started: %zu routes, two passes on the compaction "
			 "thread (show summary: compacting; the log has the result)",
			 routes);
	return 0;
}

static void
fibd_settle_tick(evutil_socket_t fd, short what, void *arg)
{
	struct fibd *d = arg;
	uint64_t gen = fib_generation(d->fib), quiet_us = d->conf->fib.compact_quiet_us;
	double now = fibd_now();

	if (d->comp.cw.running)
		return; /* fibd_compact_done takes it from there */
	if (fib_accel_pending(d->fib) && ingest_idle(d->ing) && !d->writing) {
		fibd_accel_start(d);
		return;
	}
	switch (compact_quiet_step(&d->comp.q, gen, !ingest_idle(d->ing) || d->writing, now,
				   quiet_us)) {
	case COMPACT_WAIT:
		break;
	case COMPACT_PASS2:
		if (fibd_compact_start(d, 2, 0, now) < 0)
			d->comp.q.pass = 0;
		break;
	case COMPACT_REFERENCE:
		fibd_built_set(d, d->comp.cw.stats.bytes, d->comp.cw.routes);
		fibd_trim(d);
		break;
	case COMPACT_SETTLE:
		fibd_settle(d, 0, NULL, 0);
		break;
	}
}

/* The compaction thread's eventfd and the settle tick (armed at ready).
 * Context: main loop, at start. */
void
fibd_compact_open(struct fibd *d)
{
	struct fibd_compactor *c = &d->comp.cw;

	d->comp.settle = event_new(d->base, -1, EV_PERSIST, fibd_settle_tick, d);
	if (!d->comp.settle)
		fatalx("settle timer");
	c->fib = d->fib;
	c->delay_ms = d->opts.compact_delay_ms;
	c->ho = handoff_new(d->base, fibd_compactor_work, fibd_compact_done, d);
	if (!c->ho)
		fatal("compaction hand-off");
	fibd_stats_open(d);
	d->comp.trim_ho = handoff_new(d->base, fibd_trim_work, fibd_trim_done, d);
	if (!d->comp.trim_ho)
		fatal("trim hand-off");
}

/*
 * The first dump went to fib_load: the reference for compactions. Its
 * temporary buffers are freed: give them back. Then the settle tick
 * starts. Context: main loop, the FIB's writer.
 */
void
fibd_compact_ready(struct fibd *d)
{
	fibd_built_measure(d);
	fibd_trim(d);
	d->comp.q.settle_gen = d->comp.q.gen = fib_generation(d->fib);
	d->comp.q.busy_at = fibd_now();
	if (event_add(d->comp.settle, &(struct timeval){1, 0}) < 0)
		log_warnx("settle timer: compactions off");
}

/* fib_compact cannot be interrupted: wait for a running pass (about a
 * second for a full table), then free as usual. Context: main loop,
 * after it ran. */
void
fibd_compact_close(struct fibd *d)
{
	struct fibd_compactor *c = &d->comp.cw;
	double t0 = fibd_now();

	if (handoff_join(c->ho)) {
		c->running = 0;
		log_info("compaction thread joined in %.3f s", fibd_now() - t0);
	}
	handoff_free(c->ho);
	handoff_free(d->comp.trim_ho);
	fibd_stats_close(d);
	event_free(d->comp.settle);
}
