/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: reload.c, the config mapped onto the modules
 *
 * Reading the YAML (conf/) and mapping it onto the modules' own
 * settings: fib_params (fib/), flow_config (cache/), ingest_conf
 * (daemon/ingest), the control socket's path, the log level. A reload
 * (SIGHUP, `reload`) parses the whole file into a new conf; on errors the
 * old one stays and every error is logged as file:line:column; else the
 * sections that conf_diff() reports are applied one at a time
 * (fibd_apply), each by the module that owns it. The FIB's parameters and
 * a new flow cache wait while another thread is the FIB's writer (the
 * loader, a compaction pass). Command-line overrides (-f, -t, -b, -B, -s)
 * win over the file, also after a reload.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <grp.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <linux/rtnetlink.h>
#include <systemd/sd-daemon.h>

#include "fib/rcu.h"
#include "cache/flow.h"
#include "daemon/fibd.h"
#include "daemon/lookup.h"
#include "daemon/settings.h"
#include "daemon/sysctl.h"

/*
 * Read the config file. Without -c a missing default file means the
 * built-in defaults (a fresh install runs); with -c it is an error.
 * Errors are logged one a line as file:line:column: message.
 */
struct conf *
fibd_conf_read(const struct fibd_opts *o, int quiet_default)
{
	struct conf_errors errs;
	struct conf *c = NULL;
	char buf[512];
	int rc;

	memset(&errs, 0, sizeof(errs));
	rc = conf_parse_file(o->conf_path, &c, &errs);
	if (rc == -ENOENT && !o->conf_given && !o->check) {
		if (!quiet_default)
			log_info("%s: no such file, using the defaults", o->conf_path);
		conf_errors_free(&errs);
		return conf_new();
	}
	if (rc < 0) {
		for (size_t i = 0; i < errs.count; i++) {
			conf_error_format(&errs, i, buf, sizeof(buf));
			log_warnx("%s", buf);
		}
		if (errs.count == 0)
			log_warnx("%s: %s", o->conf_path, strerror(-rc));
		conf_errors_free(&errs);
		return NULL;
	}
	conf_errors_free(&errs);
	return c;
}

void
fibd_ingest_conf(const struct fibd_opts *o, const struct conf *c, struct ingest_conf *ic)
{
	settings_ingest(c, ic);
	if (o->families)
		ic->families = o->families;
	if (o->tables_set) {
		ic->ntables = o->tables.ntables;
		memcpy(ic->tables, o->tables.tables, sizeof(ic->tables));
	}
	if (o->rcvbuf)
		ic->rcvbuf = o->rcvbuf;
	if (o->budget_us)
		ic->budget_us = o->budget_us;
}

/* Apply c's fib parameters to the FIB; when (NULL: quietly) says in the
 * log why now. Context: main loop, the FIB's writer. */
void
fibd_fib_params_apply(struct fibd *d, const struct conf *c, const char *when)
{
	struct fib_params p;
	int err;

	settings_fib(c, &p);
	if ((err = fib_set_params(d->fib, &p)) < 0)
		log_warnx("fib parameters: %s", strerror(-err));
	else if (when)
		log_info("fib parameters of the reload applied %s", when);
	d->params_pending = 0;
}

/* A new cache for c (NULL: disabled or failed), its worker started if
 * the FIB is loaded. */
static struct flow_cache *
fibd_cache_new(struct fibd *d, const struct conf *c)
{
	struct flow_config f;
	struct flow_cache *fc;
	int err;

	if (!c->cache.enabled)
		return NULL;
	settings_flow(c, d->secret, &f);
	fc = flow_cache_new(&f);
	if (!fc) {
		log_warn("flow cache (%u buckets, %u entries)", c->cache.buckets,
			 c->cache.max_entries);
		return NULL;
	}
	if (d->ready && (err = flow_cache_start(fc, d->fib)) < 0) {
		log_warnx("flow cache worker: %s", strerror(-err));
		flow_cache_free(fc);
		return NULL;
	}
	return fc;
}

/* A replaced cache and the count of reapers at work. */
struct fibd_reap {
	struct flow_cache *old;
	unsigned *reapers;
};

/*
 * A reaper thread: wait a grace period (the lookup threads are RCU
 * readers, they may still hold the old pointer), then stop the old
 * cache's worker and free it (flow_cache_free waits for its records'
 * grace period too: rcu_barrier). On the main loop these waits stalled
 * every reload that rebuilt the cache by 26-330 ms (tests/bench/stall.sh).
 * One detached thread per replaced cache, so that a reload never waits
 * for the reaper of the one before. Context: any (a thread of its own).
 */
static void *
fibd_cache_reap_main(void *arg)
{
	struct fibd_reap *r = arg;

	fib_thread_online(); /* flow_cache_free hands records to call_rcu */
	urcu_memb_synchronize_rcu();
	FIB_TSAN_GRACE_END();
	flow_cache_free(r->old); /* stops the worker first */
	fib_thread_offline();
	__atomic_sub_fetch(r->reapers, 1, __ATOMIC_RELEASE);
	free(r);
	return NULL;
}

void
fibd_cache_reap_wait(struct fibd *d)
{
	while (__atomic_load_n(&d->cache_reapers, __ATOMIC_ACQUIRE))
		nanosleep(&(struct timespec){0, 1000000}, NULL);
}

/*
 * Free fc, which no reader may reach any more once a grace period has
 * passed, on a reaper thread; without a thread, here. Context: main
 * loop, outside read sections.
 */
static void
fibd_cache_reap(struct fibd *d, struct flow_cache *fc)
{
	struct fibd_reap *r;
	pthread_attr_t at;
	pthread_t t;

	r = malloc(sizeof(*r));
	if (r) {
		r->old = fc;
		r->reapers = &d->cache_reapers;
		__atomic_add_fetch(&d->cache_reapers, 1, __ATOMIC_RELAXED);
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, fibd_cache_reap_main, r) == 0) {
			pthread_attr_destroy(&at);
			return;
		}
		pthread_attr_destroy(&at);
		__atomic_sub_fetch(&d->cache_reapers, 1, __ATOMIC_RELAXED);
		free(r);
	}
	log_warnx("flow cache reaper: no thread, freeing the old cache on the main thread");
	urcu_memb_synchronize_rcu();
	FIB_TSAN_GRACE_END();
	flow_cache_free(fc);
}

/*
 * Publish fc (release store: readers see it built), then hand the old
 * cache to a reaper. Context: main loop, outside read sections.
 */
static void
fibd_cache_swap(struct fibd *d, struct flow_cache *fc)
{
	struct flow_cache *old = d->cache;

	if (d->lookup)
		lookup_set_cache(d->lookup, fc);
	d->cache = fc;
	if (old)
		fibd_cache_reap(d, old);
}

/* A built cache in: started if the FIB is loaded (else at ready),
 * swapped, counted. Context: main loop, no compaction running. */
static void
fibd_cache_install(struct fibd *d, struct flow_cache *fc)
{
	fibd_cache_swap(d, fc);
	d->cache_rebuilds++;
	log_info("flow cache: rebuilt with %u buckets, %u entries at most", d->cb.buckets,
		 d->cb.entries);
}

/* The cache builder's work: the new cache's tables allocated and
 * cleared (148 ms for the default size when it ran on the loop).
 * Context: the builder thread; only d->cb is its. */
static void
fibd_cache_build(void *arg)
{
	struct fibd *d = arg;

	errno = 0;
	d->cb.fc = flow_cache_new(&d->cb.cfg);
	d->cb.err = d->cb.fc ? 0 : (errno ? errno : ENOMEM);
}

/*
 * The new cache is built: start its worker if the FIB is loaded and
 * swap it in, unless the compaction thread holds the cache (then it
 * waits for fibd_compact_end). A reload that changed the cache while
 * it was built is applied now. Context: main loop.
 */
static void
fibd_cache_built(void *arg)
{
	struct fibd *d = arg;
	struct flow_cache *fc = d->cb.fc;
	int err;

	d->cb.fc = NULL;
	if (!fc) {
		log_warnx("flow cache (%u buckets, %u entries): %s: keeping the old cache",
			  d->cb.buckets, d->cb.entries, strerror(d->cb.err));
	} else if (d->ready && (err = flow_cache_start(fc, d->fib)) < 0) {
		log_warnx("flow cache worker: %s: keeping the old cache", strerror(-err));
		fibd_cache_reap(d, fc);
	} else if (d->comp.cw.running) {
		d->cb.fc = fc; /* kept for fibd_cache_apply after the compaction */
		d->comp.cache_pending = 1;
	} else {
		fibd_cache_install(d, fc);
	}
	if (d->cb.again && !d->comp.cache_pending) {
		d->cb.again = 0;
		fibd_cache_apply(d, d->conf);
	}
}

/* Stop a running build and free what it built. Context: main loop, at
 * exit, before fibd_cache_reap_wait. */
void
fibd_cache_build_close(struct fibd *d)
{
	handoff_free(d->cb.ho); /* joins */
	d->cb.ho = NULL;
	if (d->cb.fc)
		fibd_cache_reap(d, d->cb.fc);
	d->cb.fc = NULL;
}

static const char *
fibd_ctl_path(const struct fibd *d, const struct conf *c)
{
	return d->opts.ctl_path ? d->opts.ctl_path : c->control.socket;
}

/* conf log levels are syslog priorities; -v means debug whatever the file says. */
void
fibd_log_level(const struct fibd *d, const struct conf *c)
{
	int debug = d->opts.verbose || c->log.level >= CONF_LOG_DEBUG;

	log_set_verbose(debug);
	log_set_level(debug ? CONF_LOG_DEBUG : (int)c->log.level);
}

uint32_t
fibd_lookup_table(const struct fibd *d)
{
	struct ingest_conf ic;

	fibd_ingest_conf(&d->opts, d->conf, &ic);
	return ic.ntables ? ic.tables[0] : RT_TABLE_MAIN;
}

static struct ctl *
fibd_ctl_new(struct fibd *d, const struct conf *c)
{
	const char *path = fibd_ctl_path(d, c);
	struct ctl *ctl = ctl_new(d->base, path, c->control.mode, c->control.group, fibd_exec, d);

	if (!ctl)
		log_warn("control socket %s", path);
	else
		ctl_set_idle_timeout(ctl, (unsigned)(c->control.idle_timeout_us / 1000));
	return ctl;
}

static void
fibd_ctl_gc(evutil_socket_t fd, short what, void *arg)
{
	struct fibd *d = arg;

	ctl_free(d->ctl_old);
	d->ctl_old = NULL;
}

/*
 * The cache section changed: the gc tunables change in place; a new size,
 * chain cap or enabled flag means a new cache, built on the builder
 * thread, then started and swapped in on the loop (fibd_cache_built). If
 * the new one cannot be built the old one stays. Context: main loop.
 */
void
fibd_cache_apply(struct fibd *d, const struct conf *n)
{
	struct flow_config f;
	int err;

	if (d->cb.fc) {
		/* built during a compaction: in now, then n applied to it */
		struct flow_cache *fc = d->cb.fc;

		d->cb.fc = NULL;
		fibd_cache_install(d, fc);
	}
	if (handoff_running(d->cb.ho)) {
		d->cb.again = 1; /* fibd_cache_built applies d->conf again */
		return;
	}
	d->cb.again = 0;
	if (!n->cache.enabled) {
		if (d->cache)
			log_info("flow cache disabled");
		fibd_cache_swap(d, NULL);
		return;
	}
	settings_flow(n, d->secret, &f);
	if (d->cache) {
		err = flow_cache_reconfigure(d->cache, &f);
		if (err == 0) {
			log_info("flow cache: gc settings applied");
			return;
		}
		if (err != -EOPNOTSUPP) {
			log_warnx("flow cache: settings refused: %s", strerror(-err));
			return;
		}
	}
	d->cb.cfg = f;
	d->cb.buckets = n->cache.buckets;
	d->cb.entries = n->cache.max_entries;
	if (handoff_run(d->cb.ho) < 0) {
		log_warnx("flow cache builder: no thread, building on the main thread");
		handoff_run_here(d->cb.ho);
	}
}

/* The control section changed: a new socket, or the same one changed in
 * place. Context: main loop. */
static void
fibd_apply_control(struct fibd *d, const struct conf *o, const struct conf *n)
{
	const char *path = fibd_ctl_path(d, n);

	if (strcmp(fibd_ctl_path(d, o), path)) {
		/*
		 * A new path: listen there now; the old socket and its
		 * clients go a moment later, so an answer to a "reload"
		 * that came through it (this may be its callback) is
		 * flushed first.
		 */
		struct ctl *ctl = fibd_ctl_new(d, n);

		if (ctl) {
			if (d->ctl_old)
				ctl_free(d->ctl_old);
			d->ctl_old = d->ctl;
			d->ctl = ctl;
			event_add(d->ctl_gc, &(struct timeval){0, 200000});
		}
	} else {
		/* Same path: mode, group and idle timeout change in
		 * place, clients stay (and start a new idle period). */
		ctl_set_idle_timeout(d->ctl, (unsigned)(n->control.idle_timeout_us / 1000));
		if (n->control.group[0]) {
			struct group *gr = getgrnam(n->control.group);

			if (!gr || chown(path, (uid_t)-1, gr->gr_gid) < 0)
				log_warnx("control socket %s: cannot set group %s", path,
					  n->control.group);
		}
		if (chmod(path, n->control.mode) < 0)
			log_warn("chmod %s", path);
	}
}

/* Apply the sections of n that differ from o (o NULL: all of them). */
static void
fibd_apply(struct fibd *d, const struct conf *o, const struct conf *n)
{
	unsigned changed = o ? conf_diff(o, n) : CONF_ALL;
	struct ingest_conf ic;

	if (changed & CONF_LOG)
		fibd_log_level(d, n);
	if ((changed & CONF_FIB) && o) {
		if (!d->ready) {
			d->params_pending = 1; /* the loader thread is the writer */
		} else if (d->comp.stats_running) {
			d->params_pending = 1; /* the stats thread is, for a few ms */
		} else if (d->comp.cw.running) {
			d->params_pending = 1; /* the compaction thread is */
			log_info("fib parameters: applied once the running compaction is done");
		} else {
			fibd_fib_params_apply(d, n, NULL);
		}
	}
	if ((changed & CONF_NETLINK) && o && d->ing) {
		fibd_ingest_conf(&d->opts, n, &ic);
		if (ingest_reconfigure(d->ing, &ic))
			log_warnx("netlink families or tables changed: restart fibd to apply");
	}
	if ((changed & CONF_CONTROL) && o)
		fibd_apply_control(d, o, n);
	if (changed & CONF_LOOKUP) {
		/* The idle timeout applies at once (connected clients start
		 * a new period); threads and socket belong to lookup_new. */
		if (o && (o->lookup.threads != n->lookup.threads ||
			  strcmp(o->lookup.socket, n->lookup.socket)))
			log_warnx("lookup threads or socket changed: restart fibd to apply");
		if (o && d->lookup && o->lookup.idle_timeout_us != n->lookup.idle_timeout_us)
			lookup_set_idle_timeout(d->lookup,
						(unsigned)(n->lookup.idle_timeout_us / 1000));
	}
	if ((changed & CONF_METRICS) && o) {
		/* A listener that cannot be had is logged, not fatal: the
		 * daemon runs on without metrics. */
		fibd_metrics_unlisten(d);
		if (n->metrics.enabled)
			fibd_metrics_listen(d, n->metrics.address);
	}
	if ((changed & CONF_CACHE) && o) {
		if (d->comp.cw.running) {
			/* the compaction thread drops the stale entries of
			 * the cache it was given: swap it after */
			d->comp.cache_pending = 1;
			log_info("flow cache: applied once the running compaction is done");
		} else {
			fibd_cache_apply(d, n);
		}
	}
}

/* Parse the whole file again; on errors keep the old conf. Error lines
 * also go to errs when not NULL. Returns 0 or -1. */
int
fibd_reload(struct fibd *d, struct evbuffer *errs)
{
	struct conf_errors ce;
	struct conf *n = NULL, *o;
	char buf[512];
	unsigned changed;
	int rc;

	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu", (unsigned long long)(fibd_now() * 1e6));
	fibd_lag_reload(d);
	memset(&ce, 0, sizeof(ce));
	rc = conf_parse_file(d->opts.conf_path, &n, &ce);
	if (rc == -ENOENT && !d->opts.conf_given) {
		n = conf_new();
		rc = n ? 0 : -ENOMEM;
	}
	if (rc < 0) {
		d->reload_failures++;
		for (size_t i = 0; i < ce.count; i++) {
			conf_error_format(&ce, i, buf, sizeof(buf));
			log_warnx("reload: %s", buf);
			if (errs)
				evbuffer_add_printf(errs, "%s\n", buf);
		}
		if (ce.count == 0) {
			log_warnx("reload: %s: %s", d->opts.conf_path, strerror(-rc));
			if (errs)
				evbuffer_add_printf(errs, "%s: %s\n", d->opts.conf_path,
						    strerror(-rc));
		}
		log_warnx("reload failed: keeping the old configuration");
		conf_errors_free(&ce);
		sd_notify(0, "READY=1\nSTATUS=reload failed, old configuration kept");
		d->health.status_line[0] = 0;
		return -1;
	}
	conf_errors_free(&ce);
	o = d->conf;
	changed = conf_diff(o, n);
	d->conf = n;
	fibd_apply(d, o, n);
	conf_free(o);
	if (d->sysctl) /* sysctls have no events: a reload re-reads them */
		sysctl_watch_check(d->sysctl);
	d->reloads++;
	buf[0] = 0;
	for (unsigned bit = 1; bit & CONF_ALL; bit <<= 1)
		if (changed & bit) {
			strcat(buf, " ");
			strcat(buf, conf_section_name(bit));
		}
	log_info("reloaded %s: %s%s", d->opts.conf_path, changed ? "changed" : "no change", buf);
	sd_notify(0, "READY=1");
	d->health.status_line[0] = 0;
	fibd_status(d);
	return 0;
}

/* Open the control socket, the lookup service and the flow cache of
 * d->conf; fatal on failure. Context: main loop, at start. */
void
fibd_modules_open(struct fibd *d)
{
	const struct conf *c = d->conf;

	d->ctl = fibd_ctl_new(d, c);
	if (!d->ctl)
		fatalx("cannot open the control socket");
	if (c->lookup.threads) {
		d->lookup = lookup_new(d->fib, c->lookup.socket, c->control.mode, c->control.group,
				       c->lookup.threads, fibd_lookup_table(d));
		if (!d->lookup)
			fatal("lookup socket %s", c->lookup.socket);
		lookup_set_idle_timeout(d->lookup, (unsigned)(c->lookup.idle_timeout_us / 1000));
	}
	if (c->cache.enabled) {
		d->cache = fibd_cache_new(d, c);
		if (!d->cache)
			fatalx("cannot create the flow cache");
		if (d->lookup)
			lookup_set_cache(d->lookup, d->cache);
	}
	d->ctl_gc = evtimer_new(d->base, fibd_ctl_gc, d);
	if (!d->ctl_gc)
		fatalx("timer");
	d->cb.ho = handoff_new(d->base, fibd_cache_build, fibd_cache_built, d);
	if (!d->cb.ho)
		fatal("flow cache builder hand-off");
}
