/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fibd, the routing daemon's main
 *
 * fibd [-c FILE] [-n] [-v] [overrides]: read the YAML config (conf/),
 * create the FIB with its thresholds, mirror the kernel's tables into it
 * (daemon/ingest), serve the control socket (daemon/ctl) and talk to
 * systemd (sd_notify), all on one libevent loop on the main thread, which
 * is the FIB's only writer once the first load is done, except while a
 * compaction runs on its own thread.
 *
 *   start --conf--> fib_new, ingest_start, ctl_new --loop-->
 *     first dump in the FIB: READY=1, STATUS=
 *     SIGHUP / "reload": RELOADING=1, parse the whole file; errors: keep
 *       the old conf and log every error; else apply each section that
 *       conf_diff() reports (fib_set_params, log level, ingest_reconfigure,
 *       control socket); READY=1
 *     SIGUSR1: statistics to the log; SIGTERM / SIGINT: STOPPING=1, leave
 *       the loop, free everything
 *     timer: WATCHDOG=1 every WatchdogSec/2, only from the running loop
 *
 * Signals reach the loop as libevent signal events (STYLE.md item 5).
 *
 * Command-line overrides (-f, -t, -b, -B, -s) win over the file, also
 * after a reload; they exist for tests and for one-off runs.
 *
 * Test-only query path: --dump FILE writes every route (fib_walk) and
 * --lookup IN OUT answers the addresses listed in IN, once ready and
 * again on each SIGUSR1; SIGUSR1 first applies every event already
 * queued, so a test that changed the kernel and then signals sees the FIB
 * that follows from its changes. Files are written to FILE.tmp and
 * renamed. --once exits after the first write. --compact-delay MS makes
 * the compaction thread sleep MS ms before each pass, so that a test can
 * act while a compaction runs.
 *
 * Threads and who may call what:
 *   main thread: the libevent loop (netlink ingest, control socket,
 *     metrics, signals, timers) and the FIB's writer, except while it
 *     has lent the FIB to one of the two threads below.
 *   loader thread (daemon/ingest.c): fib_load of the first dump; the
 *     writer until ready.
 *   compaction thread (fibd_compact_start .. fibd_compact_done): one
 *     pass of a compaction (fibd_compactor_run: the decision, fib_compact,
 *     the frees); the writer meanwhile. The main thread pauses the
 *     ingest first (ingest_pause: events wait in the netlink socket),
 *     then only reads: fib_count, fib_generation, lookups and fib_walk
 *     under fib_read_lock; fib_stats gives way to the figures taken last
 *     (fibd_fib_stats); fib_set_params and a new flow cache from a
 *     reload wait (params_pending, cache_pending), `compact` is refused
 *     (503), SIGTERM joins the thread before freeing. The thread signals
 *     its end through an eventfd; the main thread joins it, reads its
 *     results, applies what waited and resumes the ingest.
 *   lookup threads (daemon/lookup.c) and the flow cache's expiry worker
 *     (cache/): RCU readers of the FIB, never writers.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <linux/rtnetlink.h>
#include <systemd/sd-daemon.h>

#include "fib/fib.h"
#include "fib/rcu.h"
#include "cache/flow.h"
#include "conf/conf.h"
#include "daemon/ctl.h"
#include "daemon/ingest.h"
#include "daemon/log.h"
#include "daemon/lookup.h"

#ifndef FIBD_CONF
#define FIBD_CONF "/etc/fibd/fibd.yaml"
#endif

struct fibd_opts {
	const char *conf_path;
	int conf_given;
	int check;
	int verbose;
	/* overrides of the file */
	unsigned families;
	int tables_set;
	struct ingest_conf tables; /* only tables/ntables used */
	unsigned rcvbuf, budget_us;
	const char *ctl_path;
	/* test-only */
	const char *dump_file;
	const char *lookup_in, *lookup_out;
	int once;
	unsigned compact_delay_ms; /* the compaction thread sleeps first */
};

/*
 * The compaction thread (fibd_compact_start): the FIB's only writer from
 * its start until the main thread joins it in fibd_compact_done. The
 * main thread sets the inputs before pthread_create and reads the
 * results after pthread_join, nothing in between.
 */
struct fibd_compactor {
	pthread_t thread;
	int running;        /* the thread is the writer: ingest paused */
	int efd;            /* eventfd: the thread is done */
	struct event *done;
	/* in */
	struct fib *fib;
	struct flow_cache *cache; /* pass 2: its stale entries dropped */
	unsigned delay_ms;  /* test-only: --compact-delay */
	int pass;           /* 1 (decides, unless forced), 2 */
	int force;          /* fibctl compact: no decision, pass 2 at once */
	unsigned margin;    /* fib.compact_margin, % */
	uint64_t built_bytes;
	size_t built_routes;
	/* out */
	int needed;         /* pass 1: past the margin, so compacted */
	int err;            /* of fib_compact */
	size_t routes;
	uint64_t before, expected; /* pass 1: bytes held, expected */
	struct fib_stats stats;    /* after the pass (pass 2: old trie freed) */
	double seconds;     /* the thread's time, without --compact-delay */
};

struct fibd {
	struct fibd_opts opts;
	struct conf *conf;
	struct event_base *base;
	struct fib *fib;
	struct ingest *ing;
	struct ctl *ctl;
	struct lookup *lookup; /* NULL: lookup.threads is 0 */
	struct flow_cache *cache; /* NULL: cache.enabled is false */
	uint64_t secret[2];       /* the cache's hash key, kept across rebuilds */
	uint64_t cache_rebuilds;
	struct evhttp *http;   /* NULL: metrics.enabled is false */
	struct ctl *ctl_old;   /* replaced by a reload, freed by ctl_gc */
	struct event *ctl_gc;
	struct event *sig_term, *sig_int, *sig_usr1, *sig_hup;
	struct event *watchdog, *status;
	struct event *probe; /* 1 ms tick until ready: the loop's longest stall */
	struct event *settle; /* 1 s tick once ready: compaction policy (fibd_settle) */
	uint64_t settle_gen;  /* FIB generation at the last tick */
	double busy_at;       /* last tick that saw churn or a busy ingest */
	int churned;          /* routes changed since the last settle */
	int built_pending;    /* measure built_* at the next quiet tick */
	int compact_pass;     /* 1: the second pass is due at the next quiet tick */
	uint64_t compact_gen; /* generation after the last pass: both wait for no churn */
	uint64_t built_bytes; /* fib bytes right after the last bulk build */
	size_t built_routes;  /* and its routes */
	uint64_t settles, compactions, compact_failures, trims;
	double compact_last, compact_max, trim_last;
	struct fibd_compactor cw;
	int cache_pending;     /* a reload's cache section waits for cw */
	/* the last fib_stats (fibd_fib_stats): show trie and the metrics
	 * answer from it while the compaction thread is the writer */
	struct fib_stats stats;
	int stats_valid;
	double probe_last, probe_max;
	/* the 1 ms probe also runs during a compaction (fibd_probe_watch):
	 * the loop's longest stall from its start to its end */
	int probe_watch;
	double stall_cur, stall_last, stall_max;
	double t_start;
	int ready;
	int params_pending; /* fib params changed while the loader was the writer */
	int writing;
	uint64_t reloads, reload_failures;
	char status_line[128];
	struct log_rl rl_watchdog;
	struct event *starve;  /* 1 s tick: out-of-descriptors episodes logged */
	struct fibd_starve {
		uint64_t episodes, refused, errors; /* at the last tick / log */
		int starved;
	} starve_ctl, starve_lookup, starve_http;
	/* The metrics listener (evhttp's): paused 1 s after a failed accept. */
	struct evconnlistener *http_lis;
	struct event *http_resume;
	uint64_t http_errors, http_episodes, http_errors_tick;
	int http_errno, http_starved;
};

static double
fibd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
fibd_usage(void)
{
	fprintf(stderr,
		"usage: fibd [-nv] [-c FILE] [-s SOCKET] [-f 4|6|46] [-t TABLE[,TABLE...]|all]\n"
		"            [-b RCVBUF] [-B BUDGET_MS] [--dump FILE] [--lookup IN OUT] [--once]\n"
		"            [--compact-delay MS]\n"
		"  -c FILE  config file (default %s)\n"
		"  -n       check the config and exit 0 or 1; with -v print the effective config\n"
		"  -v       debug logging\n",
		FIBD_CONF);
	exit(2);
}

static unsigned long
fibd_num(const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max)
		fatalx("bad number: %s", s);
	return v;
}

static void
fibd_parse_tables(struct ingest_conf *c, char *arg)
{
	char *tok, *save = NULL;

	c->ntables = 0;
	if (!strcmp(arg, "all"))
		return;
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (c->ntables == INGEST_TABLES_MAX)
			fatalx("at most %d tables", INGEST_TABLES_MAX);
		if (!strcmp(tok, "main"))
			c->tables[c->ntables++] = RT_TABLE_MAIN;
		else if (!strcmp(tok, "local"))
			c->tables[c->ntables++] = RT_TABLE_LOCAL;
		else
			c->tables[c->ntables++] = (uint32_t)fibd_num(tok, UINT32_MAX);
	}
}

static void
fibd_parse_args(struct fibd_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dump", required_argument, NULL, 'D' },
		{ "lookup", required_argument, NULL, 'L' },
		{ "once", no_argument, NULL, 'O' },
		{ "compact-delay", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(o, 0, sizeof(*o));
	o->conf_path = FIBD_CONF;
	while ((ch = getopt_long(argc, argv, "c:nvs:f:t:b:B:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			o->conf_path = optarg;
			o->conf_given = 1;
			break;
		case 'n':
			o->check = 1;
			break;
		case 'v':
			o->verbose++;
			break;
		case 's':
			o->ctl_path = optarg;
			break;
		case 'f':
			o->families = 0;
			if (strchr(optarg, '4'))
				o->families |= INGEST_V4;
			if (strchr(optarg, '6'))
				o->families |= INGEST_V6;
			if (!o->families)
				fibd_usage();
			break;
		case 't':
			fibd_parse_tables(&o->tables, optarg);
			o->tables_set = 1;
			break;
		case 'b':
			o->rcvbuf = (unsigned)fibd_num(optarg, 1u << 30);
			break;
		case 'B':
			o->budget_us = (unsigned)fibd_num(optarg, 10000) * 1000;
			break;
		case 'D':
			o->dump_file = optarg;
			break;
		case 'L':
			if (optind >= argc)
				fibd_usage();
			o->lookup_in = optarg;
			o->lookup_out = argv[optind++];
			break;
		case 'O':
			o->once = 1;
			break;
		case 'K':
			o->compact_delay_ms = (unsigned)fibd_num(optarg, 600000);
			break;
		default:
			fibd_usage();
		}
	}
	if (optind != argc)
		fibd_usage();
}

/* Config. */

/*
 * Read the config file. Without -c a missing default file means the
 * built-in defaults (a fresh install runs); with -c it is an error.
 * Errors are logged one a line as file:line:column: message.
 */
static struct conf *
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

static void
fibd_ingest_conf(const struct fibd_opts *o, const struct conf *c, struct ingest_conf *ic)
{
	ingest_conf_default(ic);
	ic->families = 0;
	if (c->netlink.families & CONF_FAMILY_IPV4)
		ic->families |= INGEST_V4;
	if (c->netlink.families & CONF_FAMILY_IPV6)
		ic->families |= INGEST_V6;
	ic->ntables = 0;
	if (!c->netlink.all_tables) {
		for (size_t i = 0; i < c->netlink.ntables && i < INGEST_TABLES_MAX; i++)
			ic->tables[ic->ntables++] = c->netlink.tables[i];
	}
	ic->rcvbuf = c->netlink.rcvbuf > (1u << 30) ? 1u << 30 : (unsigned)c->netlink.rcvbuf;
	ic->budget_us = (unsigned)c->netlink.slice_budget_us;
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

static void
fibd_fib_params(const struct conf *c, struct fib_params *p)
{
	fib_params_default(p);
	p->inflate_threshold = c->fib.inflate_threshold;
	p->halve_threshold = c->fib.halve_threshold;
	p->inflate_threshold_root = c->fib.inflate_threshold_root;
	p->halve_threshold_root = c->fib.halve_threshold_root;
	p->sync_pages = c->fib.sync_pages;
	p->reclaim_mode = c->fib.reclaim == CONF_RECLAIM_SYNC ? FIB_RECLAIM_SYNC
							      : FIB_RECLAIM_CALL_RCU;
}

/* Apply c's fib parameters to the FIB; when (NULL: quietly) says in the
 * log why now. Context: main thread, the FIB's writer. */
static void
fibd_fib_params_apply(struct fibd *d, const struct conf *c, const char *when)
{
	struct fib_params p;
	int err;

	fibd_fib_params(c, &p);
	if ((err = fib_set_params(d->fib, &p)) < 0)
		log_warnx("fib parameters: %s", strerror(-err));
	else if (when)
		log_info("fib parameters of the reload applied %s", when);
	d->params_pending = 0;
}

/* conf durations are microseconds, flow_config's nanoseconds. */
static void
fibd_flow_config(const struct fibd *d, const struct conf *c, struct flow_config *f)
{
	flow_config_default(f);
	f->enabled = c->cache.enabled;
	f->buckets = c->cache.buckets;
	f->max_entries = c->cache.max_entries;
	f->gc_interval = c->cache.gc_interval_us * 1000;
	f->gc_timeout = c->cache.gc_timeout_us * 1000;
	f->gc_min_interval = c->cache.gc_min_interval_us * 1000;
	f->gc_elasticity = c->cache.gc_elasticity;
	f->scan_budget = c->cache.scan_budget_us * 1000;
	f->yield_check = c->cache.yield_every;
	f->chain_cap = c->cache.chain_cap;
	f->secret[0] = d->secret[0];
	f->secret[1] = d->secret[1];
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
	fibd_flow_config(d, c, &f);
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

/*
 * Publish fc (release store: readers see it built), wait a grace period
 * (the lookup threads are RCU readers, they may still hold the old
 * pointer), then stop and free the old cache. Context: main thread,
 * outside read sections.
 */
static void
fibd_cache_swap(struct fibd *d, struct flow_cache *fc)
{
	struct flow_cache *old = d->cache;
	double t0;

	if (d->lookup)
		lookup_set_cache(d->lookup, fc);
	d->cache = fc;
	if (!old)
		return;
	urcu_memb_synchronize_rcu();
	FIB_TSAN_GRACE_END();
	t0 = fibd_now();
	flow_cache_stop(old);
	log_debug("flow cache: old worker stopped in %.3f ms", (fibd_now() - t0) * 1e3);
	flow_cache_free(old);
}

static const char *
fibd_ctl_path(const struct fibd *d, const struct conf *c)
{
	return d->opts.ctl_path ? d->opts.ctl_path : c->control.socket;
}

/* conf log levels are syslog priorities; -v means debug whatever the file says. */
static void
fibd_log_level(const struct fibd *d, const struct conf *c)
{
	int debug = d->opts.verbose || c->log.level >= CONF_LOG_DEBUG;

	log_set_verbose(debug);
	log_set_level(debug ? CONF_LOG_DEBUG : (int)c->log.level);
}

/* Output shared by the control socket and the test-only files. */

static void
fibd_print_nh(struct fibd *d, struct evbuffer *out, const struct fib_info *info,
	      int multipath_words)
{
	char buf[INET6_ADDRSTRLEN];

	for (unsigned i = 0; i < info->nh_count; i++) {
		const struct fib_nh *nh = &info->nh[i];
		const char *name = ingest_ifname(d->ing, nh->ifindex);

		evbuffer_add_printf(out, multipath_words ? " nexthop" : " nh");
		if (nh->gw_family) {
			inet_ntop(nh->gw_family, nh->gw.b, buf, sizeof(buf));
			evbuffer_add_printf(out, " via %s", buf);
		}
		if (nh->ifindex) {
			if (name)
				evbuffer_add_printf(out, " dev %s", name);
			else
				evbuffer_add_printf(out, " dev if%u", nh->ifindex);
		}
		evbuffer_add_printf(out, multipath_words ? " weight %u" : " w %u", nh->weight);
	}
}

struct fibd_walk {
	struct fibd *d;
	struct evbuffer *out;
	int filter;
	uint8_t plen;
	union fib_addr prefix;
	uint64_t n;
};

static int
fibd_prefix_covers(const union fib_addr *p, unsigned plen, const union fib_addr *a)
{
	unsigned bytes = plen / 8, bits = plen % 8;

	if (memcmp(p->b, a->b, bytes))
		return 0;
	if (bits && ((p->b[bytes] ^ a->b[bytes]) & (0xff00 >> bits) & 0xff))
		return 0;
	return 1;
}

/* One route as `show routes` and --dump print it, built in one buffer:
 * the control socket formats a full table with it on the main loop. */
static int
fibd_route_line(const struct fib_match *m, void *arg)
{
	struct fibd_walk *w = arg;
	char line[2048], buf[INET6_ADDRSTRLEN];
	size_t n;

	if (w->filter && (m->plen < w->plen || !fibd_prefix_covers(&w->prefix, w->plen, &m->prefix)))
		return 0;
	inet_ntop(m->family, m->prefix.b, buf, sizeof(buf));
	n = (size_t)snprintf(line, sizeof(line), "%s %s/%u", fib_type_name(m->type), buf, m->plen);
	if (m->table != RT_TABLE_MAIN)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " table %u", m->table);
	if (m->tos)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " tos %u", m->tos);
	n += (size_t)snprintf(line + n, sizeof(line) - n, " metric %u", m->info->priority);
	if (m->info->nh_id)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " nhid %u", m->info->nh_id);
	for (unsigned i = 0; i < m->info->nh_count && n < sizeof(line) - 128; i++) {
		const struct fib_nh *nh = &m->info->nh[i];
		const char *name = ingest_ifname(w->d->ing, nh->ifindex);

		memcpy(line + n, " nh", 3);
		n += 3;
		if (nh->gw_family) {
			inet_ntop(nh->gw_family, nh->gw.b, buf, sizeof(buf));
			n += (size_t)snprintf(line + n, sizeof(line) - n, " via %s", buf);
		}
		if (nh->ifindex && name)
			n += (size_t)snprintf(line + n, sizeof(line) - n, " dev %s", name);
		else if (nh->ifindex)
			n += (size_t)snprintf(line + n, sizeof(line) - n, " dev if%u", nh->ifindex);
		n += (size_t)snprintf(line + n, sizeof(line) - n, " w %u", nh->weight);
	}
	if (n > sizeof(line) - 1)
		n = sizeof(line) - 1;
	line[n++] = '\n';
	evbuffer_add(w->out, line, n);
	w->n++;
	return 0;
}

static uint32_t
fibd_lookup_table(const struct fibd *d)
{
	struct ingest_conf ic;

	fibd_ingest_conf(&d->opts, d->conf, &ic);
	return ic.ntables ? ic.tables[0] : RT_TABLE_MAIN;
}

/* One answer as `fibctl lookup` prints it (DESIGN.md). */
static void
fibd_lookup_line(struct fibd *d, struct evbuffer *out, const struct ctl_addr *a,
		 const struct ctl_addr *src, uint8_t tos, uint32_t iif)
{
	struct fib_result res;
	struct fib_match m;
	struct flow_key k;
	char abuf[INET6_ADDRSTRLEN], buf[INET6_ADDRSTRLEN];
	uint32_t table = fibd_lookup_table(d), dst4, src4 = 0;

	inet_ntop(a->family, a->a.b, abuf, sizeof(abuf));
	if (d->cache) {
		if (a->family == AF_INET) {
			memcpy(&dst4, a->a.b, 4);
			if (src && src->family == AF_INET)
				memcpy(&src4, src->a.b, 4);
			flow_key_set4(&k, table, ntohl(dst4), ntohl(src4), tos, iif);
		} else {
			flow_key_set6(&k, table, a->a.b,
				      src && src->family == AF_INET6 ? src->a.b : NULL, tos, iif);
		}
	}
	fib_read_lock();
	if (d->cache)
		flow_lookup_rcu(d->cache, d->fib, &k, &res);
	else
		res = fib_lookup_rcu(d->fib, a->family, a->a.b, table, tos);
	if (fib_result_get(&res, &m) != 0) {
		fib_read_unlock();
		evbuffer_add_printf(out, "%s -\n", abuf);
		return;
	}
	inet_ntop(m.family, m.prefix.b, buf, sizeof(buf));
	evbuffer_add_printf(out, "%s %s/%u %s", abuf, buf, m.plen, fib_type_name(m.type));
	if (m.info->nh_count == 1) {
		const struct fib_nh *nh = &m.info->nh[0];
		const char *name = ingest_ifname(d->ing, nh->ifindex);

		if (nh->gw_family) {
			inet_ntop(nh->gw_family, nh->gw.b, buf, sizeof(buf));
			evbuffer_add_printf(out, " via %s", buf);
		}
		if (nh->ifindex && name)
			evbuffer_add_printf(out, " dev %s", name);
		else if (nh->ifindex)
			evbuffer_add_printf(out, " dev if%u", nh->ifindex);
	} else if (m.info->nh_count > 1) {
		fibd_print_nh(d, out, m.info, 1);
	}
	fib_read_unlock();
	evbuffer_add(out, "\n", 1);
}

/* Write buf to path through path.tmp and a rename. */
static int
fibd_write_file(const char *path, struct evbuffer *buf)
{
	char tmp[4096];
	FILE *f;
	size_t len = evbuffer_get_length(buf);

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		log_warn("%s", tmp);
		return -1;
	}
	if (len && fwrite(evbuffer_pullup(buf, -1), 1, len, f) != len) {
		fclose(f);
		log_warn("%s", tmp);
		return -1;
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		log_warn("%s", path);
		return -1;
	}
	return 0;
}

static int
fibd_write_dump(struct fibd *d, const char *path)
{
	struct fibd_walk w = { .d = d };
	int rc;

	w.out = evbuffer_new();
	if (!w.out)
		return -1;
	fib_walk(d->fib, AF_INET, fibd_route_line, &w);
	fib_walk(d->fib, AF_INET6, fibd_route_line, &w);
	rc = fibd_write_file(path, w.out);
	evbuffer_free(w.out);
	return rc;
}

static int
fibd_write_lookups(struct fibd *d, const char *in, const char *path)
{
	char line[256];
	struct evbuffer *out;
	struct ctl_addr a;
	FILE *fi;
	int rc;

	fi = fopen(in, "r");
	if (!fi) {
		log_warn("%s", in);
		return -1;
	}
	out = evbuffer_new();
	if (!out) {
		fclose(fi);
		return -1;
	}
	while (fgets(line, sizeof(line), fi)) {
		line[strcspn(line, " \t\r\n")] = 0;
		if (!line[0])
			continue;
		memset(&a, 0, sizeof(a));
		a.family = strchr(line, ':') ? AF_INET6 : AF_INET;
		if (inet_pton(a.family, line, a.a.b) != 1)
			evbuffer_add_printf(out, "%s error\n", line);
		else
			fibd_lookup_line(d, out, &a, NULL, 0, 0);
	}
	fclose(fi);
	rc = fibd_write_file(path, out);
	evbuffer_free(out);
	return rc;
}
static void
fibd_log_stats(struct fibd *d)
{
	struct ingest_stats st;
	char errs[512];
	size_t n = 0;

	ingest_stats(d->ing, &st);
	errs[0] = 0;
	for (unsigned i = 0; i < NL_ERR_COUNT; i++)
		if (st.parse_errors[i] && n < sizeof(errs))
			n += (size_t)snprintf(errs + n, sizeof(errs) - n, " %s=%llu", nl_err_name(i),
					      (unsigned long long)st.parse_errors[i]);
	log_info("stats: msgs=%llu loaded=%llu added=%llu deleted=%llu exists=%llu missing=%llu "
		 "fib_errors=%llu skipped=%llu unknown_attrs=%llu drops=%llu resyncs=%llu "
		 "dump_intr=%llu slices=%llu nh_objects=%llu parse_errors:%s",
		 (unsigned long long)st.msgs, (unsigned long long)st.routes_loaded,
		 (unsigned long long)st.routes_added, (unsigned long long)st.routes_deleted,
		 (unsigned long long)st.add_exists, (unsigned long long)st.del_missing,
		 (unsigned long long)st.fib_errors, (unsigned long long)st.skipped,
		 (unsigned long long)st.unknown_attrs, (unsigned long long)st.drops,
		 (unsigned long long)st.resyncs, (unsigned long long)st.dump_intr,
		 (unsigned long long)st.slices, (unsigned long long)st.nh_objects,
		 errs[0] ? errs : " none");
	if (d->cache) {
		struct flow_stats fs;

		flow_cache_stats(d->cache, &fs);
		log_info("cache: entries=%llu lookups=%llu hits=%llu misses=%llu inserts=%llu "
			 "evict_chain=%llu evict_size=%llu expired_idle=%llu expired_stale=%llu "
			 "gc_runs=%llu gc_ms_max=%.3f bytes=%llu",
			 (unsigned long long)fs.entries, (unsigned long long)fs.lookups,
			 (unsigned long long)fs.hits, (unsigned long long)fs.misses,
			 (unsigned long long)fs.inserts, (unsigned long long)fs.evict_chain,
			 (unsigned long long)fs.evict_size, (unsigned long long)fs.expired_idle,
			 (unsigned long long)fs.expired_stale, (unsigned long long)fs.gc_runs,
			 (double)fs.gc_ns_max * 1e-6, (unsigned long long)fs.bytes);
	}
}


/* systemd. */

static void
fibd_status(struct fibd *d)
{
	char line[128];

	if (d->ready)
		snprintf(line, sizeof(line), "%zu IPv4 / %zu IPv6 routes",
			 fib_count(d->fib, AF_INET), fib_count(d->fib, AF_INET6));
	else
		snprintf(line, sizeof(line), "loading: %zu IPv4 / %zu IPv6 routes so far",
			 fib_count(d->fib, AF_INET), fib_count(d->fib, AF_INET6));
	if (strcmp(line, d->status_line)) {
		strcpy(d->status_line, line);
		sd_notifyf(0, "STATUS=%s", line);
	}
}

/*
 * One socket's accept trouble since the last tick, as at most one line:
 * an episode out of file descriptors starts (warning), ends (with the
 * clients refused meanwhile) or came and went within the second; other
 * accept errors are counted. ctl.c and lookup.c (whose threads must not
 * log) refuse or pause on their own; this only reports.
 */
static void
fibd_starve_log(const char *what, struct fibd_starve *s, int starved, uint64_t episodes,
		uint64_t refused, uint64_t errors, int err)
{
	uint64_t began;

	if (episodes < s->episodes || refused < s->refused || errors < s->errors)
		memset(s, 0, sizeof(*s)); /* a new socket after a reload */
	began = episodes - s->episodes;
	if (starved && (!s->starved || began)) {
		log_warnx("%s: out of file descriptors (accept: %s): not accepting new clients "
			  "until some are freed; connected clients are served",
			  what, strerror(err));
	} else if (!starved && s->starved) {
		log_info("%s: accepting clients again; %llu refused while out of file descriptors",
			 what, (unsigned long long)(refused - s->refused));
		s->refused = refused;
	} else if (!starved && began) {
		log_warnx("%s: out of file descriptors for a moment (accept: %s, %llu times); "
			  "%llu clients refused",
			  what, strerror(err), (unsigned long long)began,
			  (unsigned long long)(refused - s->refused));
		s->refused = refused;
	} else if (errors - s->errors > began && err != EMFILE && err != ENFILE) {
		log_warnx("%s: accept failed %llu times: %s", what,
			  (unsigned long long)(errors - s->errors), strerror(err));
	}
	s->starved = starved;
	s->episodes = episodes;
	s->errors = errors;
}

static void
fibd_starve_tick(evutil_socket_t fd, short what, void *arg)
{
	struct fibd *d = arg;
	struct ctl_stats cs;

	if (d->ctl) {
		ctl_stats(d->ctl, &cs);
		fibd_starve_log("control socket", &d->starve_ctl, cs.starved, cs.fd_episodes,
				cs.refused_fds, cs.accept_errors, cs.accept_errno);
	}
	if (d->lookup) {
		struct lookup_stats ls;

		lookup_stats(d->lookup, &ls);
		fibd_starve_log("lookup socket", &d->starve_lookup, ls.starved, ls.fd_episodes,
				ls.refused_fds, ls.accept_errors, ls.accept_errno);
	}
	if (d->http_lis) {
		/* Not paused (or paused before this tick existed): listen. A
		 * whole tick without a new failure ends an episode. */
		if (!evtimer_pending(d->http_resume, NULL)) {
			evconnlistener_enable(d->http_lis);
			if (d->http_errors == d->http_errors_tick)
				d->http_starved = 0;
		}
		d->http_errors_tick = d->http_errors;
		fibd_starve_log("metrics socket", &d->starve_http, d->http_starved,
				d->http_episodes, 0, d->http_errors, d->http_errno);
	}
}

/*
 * Every control and lookup client is a descriptor: raise the soft limit
 * (1024 under systemd) to what full sockets need, within the hard limit
 * (524288 under systemd), as systemd advises programs that do not use
 * select(). A lower hard limit is only logged: running out is handled
 * (ctl.c, lookup.c refuse and log), not fatal.
 */
static void
fibd_nofile(const struct conf *c)
{
	rlim_t want = CTL_CLIENTS_MAX + (rlim_t)c->lookup.threads * LOOKUP_THREAD_CLIENTS + 256;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : want;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		log_warn("setrlimit(RLIMIT_NOFILE, %llu)", (unsigned long long)rl.rlim_cur);
	else if (rl.rlim_cur < want)
		log_warnx("file descriptors: at most %llu (hard limit), full control and lookup "
			  "sockets need %llu: clients may be refused (LimitNOFILE=)",
			  (unsigned long long)rl.rlim_cur, (unsigned long long)want);
}

static void
fibd_status_tick(evutil_socket_t fd, short what, void *arg)
{
	fibd_status(arg);
}

/*
 * Only the running loop pets the watchdog, and only while every lookup
 * thread shows life: a stuck loop or a stuck thread gets fibd restarted.
 */
static void
fibd_watchdog(evutil_socket_t fd, short what, void *arg)
{
	struct fibd *d = arg;

	if (d->lookup && !lookup_alive(d->lookup, 5)) {
		log_warnx_rl(&d->rl_watchdog, "watchdog: a lookup thread is stuck, not notifying");
		return;
	}
	/* The worker runs from ready on and wakes at least every 0.5 s. */
	if (d->cache && d->ready && !flow_cache_alive(d->cache, 5000000000ull)) {
		log_warnx_rl(&d->rl_watchdog, "watchdog: the flow cache worker is stuck, "
			     "not notifying");
		return;
	}
	sd_notify(0, "WATCHDOG=1");
}

/* Reload. */

static void fibd_exec(const struct ctl_cmd *cmd, struct evbuffer *out, struct ctl_reply *r,
		      void *arg);
static int fibd_settle(struct fibd *d, int force, char *msg, size_t len);

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

static struct evhttp *fibd_http_new(struct fibd *d, const char *address);
static void fibd_http_free(struct fibd *d);

static void
fibd_ctl_gc(evutil_socket_t fd, short what, void *arg)
{
	struct fibd *d = arg;

	ctl_free(d->ctl_old);
	d->ctl_old = NULL;
}

/*
 * The cache section changed: the gc tunables change in place; a new size,
 * chain cap or enabled flag means a new cache, built and started here,
 * then swapped in (fibd_cache_swap). If the new one cannot be built the
 * old one stays.
 */
static void
fibd_cache_apply(struct fibd *d, const struct conf *n)
{
	struct flow_config f;
	struct flow_cache *fc;
	int err;

	if (!n->cache.enabled) {
		if (d->cache)
			log_info("flow cache disabled");
		fibd_cache_swap(d, NULL);
		return;
	}
	fibd_flow_config(d, n, &f);
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
	fc = fibd_cache_new(d, n);
	if (!fc) {
		log_warnx("flow cache: keeping the old cache");
		return;
	}
	fibd_cache_swap(d, fc);
	d->cache_rebuilds++;
	log_info("flow cache: rebuilt with %u buckets, %u entries at most", n->cache.buckets,
		 n->cache.max_entries);
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
		} else if (d->cw.running) {
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
	if ((changed & CONF_CONTROL) && o) {
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
				event_add(d->ctl_gc, &(struct timeval){ 0, 200000 });
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
		fibd_http_free(d);
		d->http = n->metrics.enabled ? fibd_http_new(d, n->metrics.address) : NULL;
	}
	if ((changed & CONF_CACHE) && o) {
		if (d->cw.running) {
			/* the compaction thread drops the stale entries of
			 * the cache it was given: swap it after */
			d->cache_pending = 1;
			log_info("flow cache: applied once the running compaction is done");
		} else {
			fibd_cache_apply(d, n);
		}
	}
}

/* Parse the whole file again; on errors keep the old conf. Error lines
 * also go to errs when not NULL. Returns 0 or -1. */
static int
fibd_reload(struct fibd *d, struct evbuffer *errs)
{
	struct conf_errors ce;
	struct conf *n = NULL, *o;
	char buf[512];
	unsigned changed;
	int rc;

	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
		   (unsigned long long)(fibd_now() * 1e6));
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
		d->status_line[0] = 0;
		return -1;
	}
	conf_errors_free(&ce);
	o = d->conf;
	changed = conf_diff(o, n);
	d->conf = n;
	fibd_apply(d, o, n);
	conf_free(o);
	d->reloads++;
	buf[0] = 0;
	for (unsigned bit = 1; bit & CONF_ALL; bit <<= 1)
		if (changed & bit) {
			strcat(buf, " ");
			strcat(buf, conf_section_name(bit));
		}
	log_info("reloaded %s: %s%s", d->opts.conf_path, changed ? "changed" : "no change", buf);
	sd_notify(0, "READY=1");
	d->status_line[0] = 0;
	fibd_status(d);
	return 0;
}

/* Control commands. */

static void
fibd_show_summary(struct fibd *d, struct evbuffer *out)
{
	struct ingest_stats st;
	struct ctl_stats cs;

	ingest_stats(d->ing, &st);
	ctl_stats(d->ctl, &cs);
	evbuffer_add_printf(out, "ready %s\n", d->ready ? "true" : "false");
	evbuffer_add_printf(out, "ingest_seconds %.3f\n", d->ready ? st.ingest_seconds : 0.0);
	evbuffer_add_printf(out, "routes_v4 %zu\n", fib_count(d->fib, AF_INET));
	evbuffer_add_printf(out, "routes_v6 %zu\n", fib_count(d->fib, AF_INET6));
	evbuffer_add_printf(out, "generation %llu\n", (unsigned long long)fib_generation(d->fib));
	evbuffer_add_printf(out, "uptime_seconds %.0f\n", fibd_now() - d->t_start);
	evbuffer_add_printf(out, "config %s\n", d->opts.conf_path);
	evbuffer_add_printf(out, "reloads %llu\n", (unsigned long long)d->reloads);
	evbuffer_add_printf(out, "reload_failures %llu\n", (unsigned long long)d->reload_failures);
	evbuffer_add_printf(out, "netlink_messages %llu\n", (unsigned long long)st.msgs);
	evbuffer_add_printf(out, "netlink_drops %llu\n", (unsigned long long)st.drops);
	evbuffer_add_printf(out, "netlink_resyncs %llu\n", (unsigned long long)st.resyncs);
	evbuffer_add_printf(out, "compacting %s\n", d->cw.running ? "true" : "false");
	evbuffer_add_printf(out, "control_clients %u\n", cs.clients);
	evbuffer_add_printf(out, "control_refused %llu\n", (unsigned long long)cs.refused);
	evbuffer_add_printf(out, "control_refused_fds %llu\n", (unsigned long long)cs.refused_fds);
	evbuffer_add_printf(out, "control_idle_closed %llu\n", (unsigned long long)cs.idle_closed);
	if (d->lookup) {
		struct lookup_stats ls;

		lookup_stats(d->lookup, &ls);
		evbuffer_add_printf(out, "lookup_requests %llu\n", (unsigned long long)ls.requests);
		evbuffer_add_printf(out, "lookup_addresses %llu\n", (unsigned long long)ls.addresses);
		evbuffer_add_printf(out, "lookup_refused_fds %llu\n",
				    (unsigned long long)ls.refused_fds);
		evbuffer_add_printf(out, "lookup_idle_closed %llu\n",
				    (unsigned long long)ls.idle_closed);
	}
	if (d->cache) {
		struct flow_stats fs;

		flow_cache_stats(d->cache, &fs);
		evbuffer_add_printf(out, "cache enabled\n");
		evbuffer_add_printf(out, "cache_entries %llu\n", (unsigned long long)fs.entries);
	} else {
		evbuffer_add_printf(out, "cache disabled\n");
	}
}

/* flow_cache_stats as "key value" lines (fibctl makes a table or JSON). */
static void
fibd_show_cache(struct fibd *d, struct evbuffer *out)
{
	struct flow_stats st;
	const struct conf_cache *c = &d->conf->cache;

	if (!d->cache) {
		evbuffer_add_printf(out, "enabled false\n");
		return;
	}
	flow_cache_stats(d->cache, &st);
#define P(name, v) evbuffer_add_printf(out, "%s %llu\n", name, (unsigned long long)(v))
	evbuffer_add_printf(out, "enabled true\n");
	P("buckets", c->buckets);
	P("max_entries", c->max_entries);
	P("entries", st.entries);
	P("lookups", st.lookups);
	P("hits", st.hits);
	P("misses", st.misses);
	P("stale_hits", st.stale_hits);
	P("inserts", st.inserts);
	P("admit_deferred", st.admit_deferred);
	P("insert_full", st.insert_full);
	P("insert_odd", st.insert_odd);
	P("evict_chain", st.evict_chain);
	P("evict_size", st.evict_size);
	P("expired_idle", st.expired_idle);
	P("expired_stale", st.expired_stale);
	P("flushed", st.flushed);
	P("gc_runs", st.gc_runs);
	P("gc_pressure_runs", st.gc_pressure_runs);
	P("buckets_scanned", st.buckets_scanned);
	evbuffer_add_printf(out, "gc_ms_last %.3f\n", (double)st.gc_ns_last * 1e-6);
	evbuffer_add_printf(out, "gc_ms_max %.3f\n", (double)st.gc_ns_max * 1e-6);
	P("yields", st.yields);
	P("bypass", st.bypass);
	P("bypassed", st.bypassed);
	P("chain_max", flow_cache_chain_max(d->cache));
	P("rebuilds", d->cache_rebuilds);
	P("bytes", st.bytes);
#undef P
}

/*
 * fib_stats, or while the compaction thread is the writer the last
 * figures taken (before its pass, or after the previous one). Context:
 * main thread.
 */
static void
fibd_fib_stats(struct fibd *d, struct fib_stats *st)
{
	if (!d->cw.running) {
		fib_stats(d->fib, &d->stats);
		d->stats_valid = 1;
	}
	*st = d->stats;
}

static void
fibd_show_trie(struct fibd *d, struct evbuffer *out, int family)
{
	struct fib_stats st;

	fibd_fib_stats(d, &st);
	for (int f = 0; f < 2; f++) {
		const struct fib_trie_stats *t = f ? &st.v6 : &st.v4;
		const char *k = f ? "v6" : "v4";

		if (family && family != (f ? AF_INET6 : AF_INET))
			continue;
		evbuffer_add_printf(out, "%s.routes %zu\n", k, fib_count(d->fib, f ? AF_INET6 : AF_INET));
		evbuffer_add_printf(out, "%s.depth_avg %.2f\n", k,
				    t->leaves ? (double)t->depth_total / (double)t->leaves : 0.0);
		evbuffer_add_printf(out, "%s.depth_max %u\n", k, t->depth_max);
		evbuffer_add_printf(out, "%s.leaves %llu\n", k, (unsigned long long)t->leaves);
		evbuffer_add_printf(out, "%s.prefixes %llu\n", k, (unsigned long long)t->prefixes);
		evbuffer_add_printf(out, "%s.nodes %llu\n", k, (unsigned long long)t->nodes);
		for (unsigned b = 1; b <= FIB_STATS_MAX_BITS; b++)
			if (t->nodes_by_bits[b])
				evbuffer_add_printf(out, "%s.nodes_bits_%u %llu\n", k, b,
						    (unsigned long long)t->nodes_by_bits[b]);
		evbuffer_add_printf(out, "%s.pointers %llu\n", k, (unsigned long long)t->pointers);
		evbuffer_add_printf(out, "%s.null_pointers %llu\n", k,
				    (unsigned long long)t->null_pointers);
		evbuffer_add_printf(out, "%s.bytes %llu\n", k, (unsigned long long)t->bytes);
		evbuffer_add_printf(out, "%s.resizes %llu\n", k, (unsigned long long)t->resizes);
		evbuffer_add_printf(out, "%s.inflates %llu\n", k, (unsigned long long)t->inflates);
		evbuffer_add_printf(out, "%s.halves %llu\n", k, (unsigned long long)t->halves);
	}
	if (!family) {
		evbuffer_add_printf(out, "fib.bytes %llu\n", (unsigned long long)st.bytes);
		evbuffer_add_printf(out, "fib.infos %llu\n", (unsigned long long)st.infos);
		evbuffer_add_printf(out, "reclaim.batches %llu\n",
				    (unsigned long long)st.reclaim.batches);
		evbuffer_add_printf(out, "reclaim.bytes_pending %llu\n",
				    (unsigned long long)st.reclaim.bytes_pending);
		evbuffer_add_printf(out, "reclaim.grace_periods %llu\n",
				    (unsigned long long)st.reclaim.grace_periods);
		evbuffer_add_printf(out, "reclaim.gp_ms_max %.3f\n",
				    (double)st.reclaim.gp_ns_max * 1e-6);
	}
}

static void
fibd_metric(struct evbuffer *out, const char *name, const char *type, const char *help)
{
	evbuffer_add_printf(out, "# HELP fibd_%s %s\n# TYPE fibd_%s %s\n", name, help, name, type);
}

static void
fibd_metrics(struct fibd *d, struct evbuffer *out)
{
	struct ingest_stats st;
	struct fib_stats fs;

	ingest_stats(d->ing, &st);
	fibd_metric(out, "ready", "gauge", "1 once the first full dump is in the FIB.");
	evbuffer_add_printf(out, "fibd_ready %d\n", d->ready);
	fibd_metric(out, "ingest_seconds", "gauge", "First dump request to ready.");
	evbuffer_add_printf(out, "fibd_ingest_seconds %.6f\n", d->ready ? st.ingest_seconds : 0.0);
	fibd_metric(out, "routes", "gauge", "Routes in the FIB.");
	evbuffer_add_printf(out, "fibd_routes{family=\"ipv4\"} %zu\n", fib_count(d->fib, AF_INET));
	evbuffer_add_printf(out, "fibd_routes{family=\"ipv6\"} %zu\n", fib_count(d->fib, AF_INET6));
	fibd_metric(out, "netlink_messages_total", "counter", "Netlink messages read.");
	evbuffer_add_printf(out, "fibd_netlink_messages_total %llu\n", (unsigned long long)st.msgs);
	fibd_metric(out, "netlink_drops_total", "counter", "ENOBUFS on the event socket.");
	evbuffer_add_printf(out, "fibd_netlink_drops_total %llu\n", (unsigned long long)st.drops);
	fibd_metric(out, "netlink_resyncs_total", "counter", "Completed resynchronisations.");
	evbuffer_add_printf(out, "fibd_netlink_resyncs_total %llu\n", (unsigned long long)st.resyncs);
	if (d->cache) {
		struct flow_stats cs;

		flow_cache_stats(d->cache, &cs);
#define C(name, type, help, v)                                                         \
	do {                                                                           \
		fibd_metric(out, "cache_" name, type, help);                           \
		evbuffer_add_printf(out, "fibd_cache_" name " %llu\n",                 \
				    (unsigned long long)(v));                          \
	} while (0)
		C("entries", "gauge", "Flow cache entries.", cs.entries);
		C("bytes", "gauge", "Flow cache memory, bytes.", cs.bytes);
		C("lookups_total", "counter", "Flow cache lookups.", cs.lookups);
		C("hits_total", "counter", "Flow cache hits.", cs.hits);
		C("misses_total", "counter", "Flow cache misses.", cs.misses);
		C("inserts_total", "counter", "Flow cache inserts.", cs.inserts);
		C("insert_odd_total", "counter",
		  "Misses not inserted: odd FIB generation (a change in progress).", cs.insert_odd);
		C("evictions_chain_total", "counter", "Evicted: chain full.", cs.evict_chain);
		C("evictions_size_total", "counter", "Evicted by pressure GC.", cs.evict_size);
		C("expired_idle_total", "counter", "Expired: idle.", cs.expired_idle);
		C("expired_stale_total", "counter", "Expired: older FIB generation.",
		  cs.expired_stale);
		C("gc_runs_total", "counter", "Periodic expiry runs.", cs.gc_runs);
		C("gc_buckets_scanned_total", "counter", "Buckets scanned by expiry.",
		  cs.buckets_scanned);
		C("gc_yields_total", "counter", "Expiry yields.", cs.yields);
#undef C
		fibd_metric(out, "cache_gc_seconds_last", "gauge", "Last expiry run, seconds.");
		evbuffer_add_printf(out, "fibd_cache_gc_seconds_last %.9f\n",
				    (double)cs.gc_ns_last * 1e-9);
		fibd_metric(out, "cache_gc_seconds_max", "gauge", "Longest expiry run, seconds.");
		evbuffer_add_printf(out, "fibd_cache_gc_seconds_max %.9f\n",
				    (double)cs.gc_ns_max * 1e-9);
	}
	{
		struct mallinfo2 mi = mallinfo2();

		fibd_metric(out, "malloc_in_use_bytes", "gauge",
			    "malloc: bytes in use, all arenas and mmapped blocks.");
		evbuffer_add_printf(out, "fibd_malloc_in_use_bytes %zu\n", mi.uordblks + mi.hblkhd);
		fibd_metric(out, "malloc_free_bytes", "gauge",
			    "malloc: free bytes held in the arenas (malloc_trim gives pages back).");
		evbuffer_add_printf(out, "fibd_malloc_free_bytes %zu\n", mi.fordblks);
	}
	fibd_metric(out, "settles_total", "counter",
		    "Quiet periods after churn checked for compaction (and malloc trimmed).");
	evbuffer_add_printf(out, "fibd_settles_total %llu\n", (unsigned long long)d->settles);
	fibd_metric(out, "compaction_pending", "gauge",
		    "1 while a compaction runs, or its second pass or reference is due.");
	evbuffer_add_printf(out, "fibd_compaction_pending %d\n",
			    d->cw.running || d->compact_pass || d->built_pending);
	fibd_metric(out, "compaction_running", "gauge",
		    "1 while the compaction thread rebuilds the FIB (netlink changes wait).");
	evbuffer_add_printf(out, "fibd_compaction_running %d\n", d->cw.running);
	fibd_metric(out, "compactions_total", "counter", "FIB rebuilds by fib_compact (passes).");
	evbuffer_add_printf(out, "fibd_compactions_total %llu\n", (unsigned long long)d->compactions);
	fibd_metric(out, "compaction_failures_total", "counter", "fib_compact errors (FIB unchanged).");
	evbuffer_add_printf(out, "fibd_compaction_failures_total %llu\n",
			    (unsigned long long)d->compact_failures);
	fibd_metric(out, "compaction_seconds_last", "gauge",
		    "The compaction thread's time for the last pass.");
	evbuffer_add_printf(out, "fibd_compaction_seconds_last %.6f\n", d->compact_last);
	fibd_metric(out, "compaction_seconds_max", "gauge", "Longest compaction pass.");
	evbuffer_add_printf(out, "fibd_compaction_seconds_max %.6f\n", d->compact_max);
	fibd_metric(out, "compaction_loop_stall_seconds_last", "gauge",
		    "Longest event-loop stall during the last compaction (1 ms probe).");
	evbuffer_add_printf(out, "fibd_compaction_loop_stall_seconds_last %.6f\n", d->stall_last);
	fibd_metric(out, "compaction_loop_stall_seconds_max", "gauge",
		    "Longest event-loop stall during any compaction.");
	evbuffer_add_printf(out, "fibd_compaction_loop_stall_seconds_max %.6f\n", d->stall_max);
	fibd_metric(out, "malloc_trims_total", "counter", "malloc_trim calls.");
	evbuffer_add_printf(out, "fibd_malloc_trims_total %llu\n", (unsigned long long)d->trims);
	{
		struct ctl_stats cs;

		ctl_stats(d->ctl, &cs);
		fibd_metric(out, "control_clients", "gauge", "Connected control clients.");
		evbuffer_add_printf(out, "fibd_control_clients %u\n", cs.clients);
		fibd_metric(out, "control_refused_total", "counter",
			    "Control clients refused: too many clients, or fibd out of file descriptors.");
		evbuffer_add_printf(out, "fibd_control_refused_total{reason=\"clients\"} %llu\n",
				    (unsigned long long)cs.refused);
		evbuffer_add_printf(out, "fibd_control_refused_total{reason=\"fds\"} %llu\n",
				    (unsigned long long)cs.refused_fds);
		fibd_metric(out, "control_idle_closed_total", "counter",
			    "Control clients disconnected by control.idle_timeout.");
		evbuffer_add_printf(out, "fibd_control_idle_closed_total %llu\n",
				    (unsigned long long)cs.idle_closed);
		fibd_metric(out, "accept_errors_total", "counter",
			    "Failed accept() calls (out of file descriptors, mostly).");
		evbuffer_add_printf(out, "fibd_accept_errors_total{socket=\"control\"} %llu\n",
				    (unsigned long long)cs.accept_errors);
		if (d->lookup) {
			struct lookup_stats ls;

			lookup_stats(d->lookup, &ls);
			evbuffer_add_printf(out, "fibd_accept_errors_total{socket=\"lookup\"} %llu\n",
					    (unsigned long long)ls.accept_errors);
			fibd_metric(out, "lookup_refused_total", "counter",
				    "Lookup clients refused: fibd out of file descriptors.");
			evbuffer_add_printf(out, "fibd_lookup_refused_total{reason=\"fds\"} %llu\n",
					    (unsigned long long)ls.refused_fds);
			fibd_metric(out, "lookup_idle_closed_total", "counter",
				    "Lookup clients disconnected by lookup.idle_timeout.");
			evbuffer_add_printf(out, "fibd_lookup_idle_closed_total %llu\n",
					    (unsigned long long)ls.idle_closed);
		}
	}
	fibd_metric(out, "reloads_total", "counter", "Successful config reloads.");
	evbuffer_add_printf(out, "fibd_reloads_total %llu\n", (unsigned long long)d->reloads);
	fibd_metric(out, "reload_failures_total", "counter", "Refused config reloads.");
	evbuffer_add_printf(out, "fibd_reload_failures_total %llu\n",
			    (unsigned long long)d->reload_failures);
	if (!d->ready)
		return; /* fib_stats is for the writer: the loader thread has it */
	fibd_fib_stats(d, &fs);
	fibd_metric(out, "trie_depth_max", "gauge", "Deepest leaf of the trie.");
	evbuffer_add_printf(out, "fibd_trie_depth_max{family=\"ipv4\"} %u\n", fs.v4.depth_max);
	evbuffer_add_printf(out, "fibd_trie_depth_max{family=\"ipv6\"} %u\n", fs.v6.depth_max);
	fibd_metric(out, "trie_bytes", "gauge", "Trie nodes and leaves, bytes.");
	evbuffer_add_printf(out, "fibd_trie_bytes{family=\"ipv4\"} %llu\n",
			    (unsigned long long)fs.v4.bytes);
	evbuffer_add_printf(out, "fibd_trie_bytes{family=\"ipv6\"} %llu\n",
			    (unsigned long long)fs.v6.bytes);
	fibd_metric(out, "fib_bytes", "gauge", "Everything the FIB holds, bytes.");
	evbuffer_add_printf(out, "fibd_fib_bytes %llu\n", (unsigned long long)fs.bytes);
	fibd_metric(out, "grace_periods_total", "counter", "RCU grace periods waited for.");
	evbuffer_add_printf(out, "fibd_grace_periods_total %llu\n",
			    (unsigned long long)fs.reclaim.grace_periods);
	fibd_metric(out, "grace_period_seconds_max", "gauge", "Longest grace period.");
	evbuffer_add_printf(out, "fibd_grace_period_seconds_max %.9f\n",
			    (double)fs.reclaim.gp_ns_max * 1e-9);
}

static void
fibd_exec(const struct ctl_cmd *cmd, struct evbuffer *out, struct ctl_reply *r, void *arg)
{
	struct fibd *d = arg;
	struct fibd_walk w = { .d = d, .out = out };
	unsigned iif;
	char *s;

	switch (cmd->op) {
	case CTL_SHOW_SUMMARY:
		fibd_show_summary(d, out);
		break;
	case CTL_SHOW_TRIE:
		if (!d->ready)
			goto not_ready;
		fibd_show_trie(d, out, cmd->family);
		break;
	case CTL_SHOW_ROUTES:
		if (!d->ready)
			goto not_ready;
		w.filter = cmd->has_prefix;
		w.plen = cmd->plen;
		w.prefix = cmd->prefix;
		/* a reader's walk: the compaction thread may be the writer */
		fib_read_lock();
		if (!cmd->family || cmd->family == AF_INET)
			fib_walk(d->fib, AF_INET, fibd_route_line, &w);
		if (!cmd->family || cmd->family == AF_INET6)
			fib_walk(d->fib, AF_INET6, fibd_route_line, &w);
		fib_read_unlock();
		snprintf(r->msg, sizeof(r->msg), "%llu routes", (unsigned long long)w.n);
		break;
	case CTL_SHOW_CONFIG:
		if (conf_format(d->conf, &s) < 0) {
			r->code = 500;
			snprintf(r->msg, sizeof(r->msg), "out of memory");
			break;
		}
		evbuffer_add(out, s, strlen(s));
		free(s);
		break;
	case CTL_LOOKUP:
		if (!d->ready)
			goto not_ready;
		iif = 0;
		if (cmd->iif[0]) {
			iif = if_nametoindex(cmd->iif);
			if (!iif)
				iif = ingest_ifindex(d->ing, cmd->iif);
			if (!iif) {
				r->code = 400;
				snprintf(r->msg, sizeof(r->msg), "no such interface: %s", cmd->iif);
				break;
			}
		}
		for (unsigned i = 0; cmd->has_src && i < cmd->naddr; i++)
			if (cmd->addr[i].family != cmd->src.family) {
				r->code = 400;
				snprintf(r->msg, sizeof(r->msg),
					 "from: source and destination families differ");
				return;
			}
		for (unsigned i = 0; i < cmd->naddr; i++)
			fibd_lookup_line(d, out, &cmd->addr[i], cmd->has_src ? &cmd->src : NULL,
					 cmd->tos, iif);
		break;
	case CTL_SHOW_CACHE:
		fibd_show_cache(d, out);
		break;
	case CTL_FLUSH_CACHE:
		if (!d->cache) {
			r->code = 503;
			snprintf(r->msg, sizeof(r->msg), "not available: the flow cache is disabled");
			break;
		}
		flow_cache_flush(d->cache);
		snprintf(r->msg, sizeof(r->msg), "flushed");
		break;
	case CTL_RELOAD:
		if (fibd_reload(d, out) < 0) {
			r->code = 500;
			snprintf(r->msg, sizeof(r->msg), "reload failed, old configuration kept");
		} else {
			snprintf(r->msg, sizeof(r->msg), "reloaded");
		}
		break;
	case CTL_METRICS:
		fibd_metrics(d, out);
		break;
	case CTL_COMPACT:
		if (!d->ready)
			goto not_ready;
		if (d->cw.running) {
			r->code = 503;
			snprintf(r->msg, sizeof(r->msg), "compaction running, try again");
			break;
		}
		if (!ingest_idle(d->ing)) {
			r->code = 503;
			snprintf(r->msg, sizeof(r->msg), "busy: a dump or resync is running");
			break;
		}
		if (fibd_settle(d, 1, r->msg, sizeof(r->msg)) < 0)
			r->code = 500;
		break;
	case CTL_HELP:
		evbuffer_add_printf(out, "show summary\nshow trie [4|6]\nshow cache\n"
					 "show routes [PREFIX]\nshow config\n"
					 "lookup ADDR... [from SRC] [tos T] [iif DEV]\n"
					 "flush cache\ncompact\nreload\nmetrics\nhelp\n");
		break;
	}
	return;
not_ready:
	r->code = 503;
	snprintf(r->msg, sizeof(r->msg), "not ready: the first dump is still loading");
}

/* Metrics over HTTP (evhttp): GET /metrics, Prometheus text format. */

static void
fibd_http_metrics(struct evhttp_request *req, void *arg)
{
	struct fibd *d = arg;
	struct evbuffer *out = evbuffer_new();

	if (!out) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
		evbuffer_free(out);
		evhttp_send_error(req, HTTP_BADMETHOD, NULL);
		return;
	}
	fibd_metrics(d, out);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "text/plain; version=0.0.4");
	evhttp_send_reply(req, HTTP_OK, "OK", out);
	evbuffer_free(out);
}

/* "127.0.0.1:9342" or "[::1]:9342" -> evhttp listening there, or NULL. */
/* event_base_foreach_event callback: the fibd behind the starve tick. */
static int
fibd_http_owner(const struct event_base *base, const struct event *ev, void *arg)
{
	(void)base;
	if (event_get_callback(ev) != fibd_starve_tick)
		return 0;
	*(struct fibd **)arg = event_get_callback_arg(ev);
	return 1;
}

/*
 * accept() on the metrics listener failed (EMFILE, ENFILE, ...): pause it
 * for a second (a scraper waits in the backlog) instead of libevent's
 * retry loop; fibd_starve_tick logs the episode and ends it after a quiet
 * tick. evhttp owns the listener, so the callback's argument is the
 * evhttp: the fibd is found through its always-pending starve tick.
 */
static void
fibd_http_accept_error(struct evconnlistener *lis, void *arg)
{
	struct fibd *d = NULL;

	(void)arg;
	evconnlistener_disable(lis);
	event_base_foreach_event(evconnlistener_get_base(lis), fibd_http_owner, &d);
	if (!d || d->http_lis != lis)
		return;
	d->http_errors++;
	d->http_errno = EVUTIL_SOCKET_ERROR();
	if (!d->http_starved) {
		d->http_starved = 1;
		d->http_episodes++;
	}
	event_add(d->http_resume, &(struct timeval){ 1, 0 });
}

static void
fibd_http_resume(evutil_socket_t fd, short what, void *arg)
{
	struct fibd *d = arg;

	if (d->http_lis)
		evconnlistener_enable(d->http_lis);
}

static void
fibd_http_free(struct fibd *d)
{
	if (d->http)
		evhttp_free(d->http);
	d->http = NULL;
	d->http_lis = NULL;
	if (d->http_resume)
		evtimer_del(d->http_resume);
}

static struct evhttp *
fibd_http_new(struct fibd *d, const char *address)
{
	struct evhttp_bound_socket *bound;
	char host[CONF_ADDR_MAX];
	const char *colon = strrchr(address, ':');
	unsigned long port;
	struct evhttp *http;
	char *end;

	if (!colon) {
		log_warnx("metrics address %s: no port", address);
		return NULL;
	}
	port = strtoul(colon + 1, &end, 10);
	if (*end || port == 0 || port > 65535) {
		log_warnx("metrics address %s: bad port", address);
		return NULL;
	}
	if (address[0] == '[')
		snprintf(host, sizeof(host), "%.*s", (int)(colon - address - 2), address + 1);
	else
		snprintf(host, sizeof(host), "%.*s", (int)(colon - address), address);
	http = evhttp_new(d->base);
	if (!http)
		return NULL;
	bound = evhttp_bind_socket_with_handle(http, host, (uint16_t)port);
	if (!bound) {
		log_warn("metrics: cannot listen on %s", address);
		evhttp_free(http);
		return NULL;
	}
	/* Without an error callback libevent retries a failed accept at once
	 * and logs each failure: tens of thousands a second without file
	 * descriptors. */
	d->http_lis = evhttp_bound_socket_get_listener(bound);
	evconnlistener_set_error_cb(d->http_lis, fibd_http_accept_error);
	evhttp_set_cb(http, "/metrics", fibd_http_metrics, d);
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET);
	log_info("metrics: http://%s/metrics", address);
	return http;
}

/* Events. */

static void fibd_trim(struct fibd *d);

static void
fibd_write_outputs(struct ingest *ing, void *arg)
{
	struct fibd *d = arg;

	d->writing = 0;
	if (d->opts.dump_file)
		fibd_write_dump(d, d->opts.dump_file);
	if (d->opts.lookup_in)
		fibd_write_lookups(d, d->opts.lookup_in, d->opts.lookup_out);
	fibd_log_stats(d);
	/* a full table's dump is tens of MB of evbuffer, freed now */
	fibd_trim(d);
	log_info("outputs written: %zu v4 / %zu v6 routes", fib_count(d->fib, AF_INET),
		 fib_count(d->fib, AF_INET6));
	if (d->opts.once)
		event_base_loopbreak(d->base);
}

static void
fibd_probe(evutil_socket_t fd, short what, void *arg)
{
	struct fibd *d = arg;
	double now = fibd_now(), gap = now - d->probe_last;

	if (d->probe_watch) {
		if (gap > d->stall_cur)
			d->stall_cur = gap;
	} else if (gap > d->probe_max) {
		d->probe_max = gap;
	}
	d->probe_last = now;
}

/* Run the 1 ms probe from t0 (the start of the main thread's own part)
 * until fibd_probe_unwatch: the loop's longest stall during a
 * compaction. Context: main thread, once ready. */
static void
fibd_probe_watch(struct fibd *d, double t0)
{
	if (d->probe_watch)
		return;
	d->probe_watch = 1;
	d->stall_cur = 0;
	d->probe_last = t0;
	event_add(d->probe, &(struct timeval){ 0, 1000 });
}

static void
fibd_probe_unwatch(struct fibd *d)
{
	if (!d->probe_watch)
		return;
	fibd_probe(-1, 0, d); /* up to now: the main thread's last steps */
	event_del(d->probe);
	d->probe_watch = 0;
	d->stall_last = d->stall_cur;
	if (d->stall_cur > d->stall_max)
		d->stall_max = d->stall_cur;
}

/*
 * Compaction policy. Route-by-route churn leaves the FIB larger than a
 * bulk build of the same routes: trie nodes resized within a per-update
 * budget, pool chunks with holes. Once the table has been quiet for
 * fib.compact_quiet after churn (1 s ticks with fewer than 100 route
 * changes each, since a live BGP feed is never fully quiet, and no dump
 * or resync running), fibd_settle compares the bytes
 * the FIB holds with those of the last bulk build scaled to today's
 * routes; past fib.compact_margin percent (and FIBD_COMPACT_MIN bytes)
 * it rebuilds both families with fib_compact. A rebuild takes about as
 * long as fib_load of the same routes (0.8-1.4 s for the 1.2M routes of
 * a tier-1 table on a loaded machine), so it runs on the compaction
 * thread (fibd_compact_start), the FIB's writer meanwhile, as the first
 * dump's fib_load runs on ingest's loader thread: the ingest is paused
 * (kernel changes wait in the netlink socket and are applied after, in
 * order), the control socket and the metrics keep answering, lookups
 * go on (RCU). The pass's time is logged and counted
 * (fibd_compaction_seconds_*), and so is the loop's longest stall
 * meanwhile (fibd_compaction_loop_stall_seconds_*: what the main thread
 * still does itself, the decision's fib_reclaim_barrier and fib_stats,
 * the flush of stale cache entries, malloc_trim). It stays rare: only
 * after churn that grew the FIB by the margin, at most once per quiet
 * period, in two passes a second apart (see fibd_settle). Every settle
 * then gives malloc's free pages back (malloc_trim): flow cache entries
 * and netlink buffers churn through malloc, whose arenas keep their peak.
 */
/* generation steps in a 1 s tick that still count as quiet: 100 route
 * changes (each moves the generation twice) */
#define FIBD_QUIET_CHANGES 200
#define FIBD_COMPACT_MIN (1u << 20) /* bytes over the expected size, at least */
#define FIBD_BUILT_MIN_ROUTES 1000  /* smaller tables are all fixed costs */

/* Remember what a bulk build holds per route: bytes of routes routes,
 * measured once its old trie was freed. A small table is mostly fixed
 * costs: its bytes per route would make a later full table look
 * compact, so the reference of the larger table stays until one of
 * comparable size replaces it. Context: main thread. */
static void
fibd_built_set(struct fibd *d, uint64_t bytes, size_t routes)
{
	d->built_pending = 0;
	if (routes < FIBD_BUILT_MIN_ROUTES || routes < d->built_routes / 2)
		return;
	d->built_bytes = bytes;
	d->built_routes = routes;
	log_debug("fib: %.1f MB for %zu routes after a bulk build", (double)bytes / 1e6, routes);
}

/* The first load's reference. Context: main thread, the FIB's writer. */
static void
fibd_built_measure(struct fibd *d)
{
	struct fib_stats st;

	fib_reclaim_barrier(d->fib);
	fibd_fib_stats(d, &st);
	fibd_built_set(d, st.bytes, fib_count(d->fib, AF_INET) + fib_count(d->fib, AF_INET6));
}

static void
fibd_trim(struct fibd *d)
{
	double t0 = fibd_now();

	malloc_trim(0);
	d->trims++;
	d->trim_last = fibd_now() - t0;
}

/*
 * One job of the compaction thread. Pending frees first: the bytes are
 * then the FIB's own, and the rebuild allocates with no free in between
 * (fib/pool.c then puts it in fresh and sparse chunks). Pass 1 (unless
 * forced) compares the bytes held with the last bulk build's scaled to
 * today's routes and stops there below fib.compact_margin percent (and
 * FIBD_COMPACT_MIN bytes). Then the rebuild of both families, the old
 * tries handed to call_rcu at once. After pass 2 every flow cache entry
 * is stale (the generation moved): they are dropped now rather than one
 * by one as lookups and the expiry worker meet them, and the thread
 * waits for the old tries' and the entries' grace period (rcu_barrier),
 * so that the trim that follows gives their malloc pages back, the
 * entries cached afterwards are packed in few pages, and the figures
 * taken last are those of a bulk build. Context: the FIB's writer: the
 * compaction thread (or the main thread when none could be created),
 * registered, outside read sections.
 */
static void
fibd_compactor_run(struct fibd_compactor *c)
{
	double t0;

	if (c->delay_ms)
		nanosleep(&(struct timespec){ c->delay_ms / 1000,
					      (long)(c->delay_ms % 1000) * 1000000 }, NULL);
	t0 = fibd_now();
	fib_reclaim_barrier(c->fib);
	c->needed = 1;
	c->err = 0;
	c->routes = fib_count(c->fib, AF_INET) + fib_count(c->fib, AF_INET6);
	if (c->pass == 1) {
		fib_stats(c->fib, &c->stats);
		c->before = c->stats.bytes;
		c->expected = 0;
		if (c->built_routes)
			c->expected = (uint64_t)((double)c->built_bytes * (double)c->routes /
						 (double)c->built_routes);
		c->needed = c->force ||
			    (c->before >= c->expected + FIBD_COMPACT_MIN &&
			     c->before * 100 > c->expected * (100 + (uint64_t)c->margin));
	}
	if (c->needed) {
		c->err = fib_compact(c->fib, AF_UNSPEC);
		fib_reclaim_flush(c->fib);
		if (c->pass == 2 && c->err == 0) {
			if (c->cache)
				flow_cache_flush(c->cache);
			fib_reclaim_barrier(c->fib); /* rcu_barrier: the cache's batches too */
		}
		fib_stats(c->fib, &c->stats);
	}
	c->seconds = fibd_now() - t0;
}

static void *
fibd_compactor_main(void *arg)
{
	struct fibd_compactor *c = arg;
	uint64_t one = 1;

	fib_thread_online();
	fibd_compactor_run(c);
	fib_thread_offline();
	if (write(c->efd, &one, sizeof(one)) < 0) {
		/* the eventfd cannot overflow with one write per pass */
	}
	return NULL;
}

static void fibd_compact_done(evutil_socket_t fd, short what, void *arg);

/*
 * Lend the FIB to the compaction thread for one pass: pause the ingest
 * (already paused between the two passes of a forced compaction), start
 * the 1 ms probe of the loop's stalls from t0, start the thread;
 * fibd_compact_done takes the FIB back. Returns 0 or -EBUSY (the ingest
 * is not idle). Context: main thread, the FIB's writer, no compaction
 * running.
 */
static int
fibd_compact_start(struct fibd *d, int pass, int force, double t0)
{
	struct fibd_compactor *c = &d->cw;
	int err;

	if (!ingest_paused(d->ing) && ingest_pause(d->ing) < 0)
		return -EBUSY;
	if (!d->stats_valid) {
		struct fib_stats st;

		fibd_fib_stats(d, &st); /* figures for the thread's time */
	}
	fibd_probe_watch(d, t0);
	c->pass = pass;
	c->force = force;
	c->cache = d->cache;
	c->margin = d->conf->fib.compact_margin;
	c->built_bytes = d->built_bytes;
	c->built_routes = d->built_routes;
	c->running = 1;
	err = pthread_create(&c->thread, NULL, fibd_compactor_main, c);
	if (err) {
		log_warnx("compaction thread: %s: compacting on the main thread", strerror(err));
		fibd_compactor_run(c);
		fibd_compact_done(-1, 0, d);
	}
	return 0;
}

/* The compaction is over (done, failed, not needed, or its second pass
 * left for the next quiet tick): apply what a reload left for later,
 * trim, stop watching the loop, apply kernel changes again. Context:
 * main thread, the FIB's writer. */
static void
fibd_compact_end(struct fibd *d)
{
	if (d->cache_pending) {
		d->cache_pending = 0;
		fibd_cache_apply(d, d->conf);
	}
	fibd_trim(d);
	fibd_probe_unwatch(d);
	ingest_resume(d->ing);
}

/*
 * The compaction thread is done (eventfd; fd -1: it ran on the main
 * thread): join it, count, apply fib parameters a reload left pending,
 * then start the second pass (forced) or finish. Context: main thread.
 */
static void
fibd_compact_done(evutil_socket_t fd, short what, void *arg)
{
	struct fibd *d = arg;
	struct fibd_compactor *c = &d->cw;
	uint64_t v;

	if (fd >= 0) {
		if (read(fd, &v, sizeof(v)) < 0)
			return;
		pthread_join(c->thread, NULL);
	}
	c->running = 0;
	d->stats = c->stats; /* the writer's figures: the FIB as the thread left it */
	d->settle_gen = d->compact_gen = fib_generation(d->fib);
	if (d->params_pending)
		fibd_fib_params_apply(d, d->conf, "now that the compaction thread is done");
	if (!c->needed) {
		fibd_compact_end(d);
		log_debug("fib: %.1f MB held for %zu routes, %.1f MB expected: no compaction "
			  "(%.0f ms on the compaction thread)", c->before / 1e6, c->routes,
			  c->expected / 1e6, c->seconds * 1e3);
		return;
	}
	if (c->err < 0) {
		d->compact_failures++;
		d->compact_pass = 0;
		fibd_compact_end(d);
		log_warnx("fib compaction: %s (pass %d)", strerror(-c->err), c->pass);
		return;
	}
	d->compactions++;
	d->compact_last = c->seconds;
	if (c->seconds > d->compact_max)
		d->compact_max = c->seconds;
	if (c->pass == 1) {
		log_info("fib compacted: %zu routes, %.1f MB held, %.1f MB expected from the last "
			 "bulk build; %.0f ms on the compaction thread%s", c->routes,
			 c->before / 1e6, c->expected / 1e6, c->seconds * 1e3,
			 c->force ? ", second pass now" : "");
		if (c->force && fibd_compact_start(d, 2, 1, d->probe_last) == 0)
			return;
		d->compact_pass = 1;
		fibd_compact_end(d);
		log_info("fib compaction: event loop stalled at most %.1f ms; second pass due",
			 d->stall_last * 1e3);
		return;
	}
	d->compact_pass = 0;
	/* the thread measured the bulk build after freeing the old trie:
	 * the reference, kept if nothing changes until the next quiet tick */
	d->built_pending = 1;
	fibd_compact_end(d);
	log_info("fib compacted, second pass: %.0f ms on the compaction thread (old trie and "
		 "stale cache entries freed), %.1f MB held; event loop stalled at most %.1f ms",
		 c->seconds * 1e3, c->stats.bytes / 1e6, d->stall_last * 1e3);
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
 * line for the operator. Context: main thread, the FIB's writer, ingest
 * idle, no compaction running.
 */
static int
fibd_settle(struct fibd *d, int force, char *msg, size_t len)
{
	size_t routes = fib_count(d->fib, AF_INET) + fib_count(d->fib, AF_INET6);
	int err;

	d->settles++;
	err = fibd_compact_start(d, 1, force, fibd_now());
	if (err < 0) {
		fibd_trim(d);
		if (msg)
			snprintf(msg, len, "failed: %s", strerror(-err));
		return err;
	}
	if (msg)
		snprintf(msg, len, "compaction started: %zu routes, two passes on the compaction "
			 "thread (show summary: compacting; the log has the result)", routes);
	return 0;
}

static void
fibd_settle_tick(evutil_socket_t fd, short what, void *arg)
{
	struct fibd *d = arg;
	uint64_t gen = fib_generation(d->fib), quiet_us = d->conf->fib.compact_quiet_us;
	double now = fibd_now();

	if (d->cw.running)
		return; /* fibd_compact_done takes it from there */
	if (gen - d->settle_gen >= FIBD_QUIET_CHANGES || !ingest_idle(d->ing) || d->writing)
		d->busy_at = now;
	if (gen != d->settle_gen)
		d->churned = 1;
	d->settle_gen = gen;
	if (now - d->busy_at < 1.0)
		return;
	if ((d->compact_pass || d->built_pending) && gen != d->compact_gen) {
		/* churn since: the policy looks again after the next quiet
		 * period, the reference stays the last clean build's */
		d->compact_pass = 0;
		d->built_pending = 0;
	}
	if (d->compact_pass == 1) {
		if (fibd_compact_start(d, 2, 0, now) < 0)
			d->compact_pass = 0;
		return;
	}
	if (d->built_pending) {
		fibd_built_set(d, d->cw.stats.bytes, d->cw.routes);
		fibd_trim(d);
		return;
	}
	if (!d->churned || quiet_us == 0 || now - d->busy_at < (double)quiet_us * 1e-6)
		return;
	d->churned = 0;
	fibd_settle(d, 0, NULL, 0);
}

static void
fibd_ready(struct ingest *ing, void *arg)
{
	struct fibd *d = arg;
	struct ingest_stats st;

	fibd_probe(-1, 0, d);
	event_del(d->probe);
	d->ready = 1;
	if (d->params_pending)
		fibd_fib_params_apply(d, d->conf, "now that the first load is done");
	ingest_stats(ing, &st);
	log_info("ready: %zu v4 / %zu v6 routes in %.3f seconds", fib_count(d->fib, AF_INET),
		 fib_count(d->fib, AF_INET6), st.ingest_seconds);
	log_info("ingest: dump and parse %.3f s, then %.3f s to finish loading; longest "
		 "event-loop stall %.1f ms", st.dump_seconds, st.ingest_seconds - st.dump_seconds,
		 d->probe_max * 1e3);
	fibd_status(d);
	/* The first dump went to fib_load: the reference for compactions.
	 * Its temporary buffers are freed: give them back. */
	fibd_built_measure(d);
	fibd_trim(d);
	d->settle_gen = d->compact_gen = fib_generation(d->fib);
	d->busy_at = fibd_now();
	if (event_add(d->settle, &(struct timeval){ 1, 0 }) < 0)
		log_warnx("settle timer: compactions off");
	if (d->cache) {
		int err = flow_cache_start(d->cache, d->fib);

		if (err < 0) /* the watchdog will notice */
			log_warnx("flow cache worker: %s", strerror(-err));
	}
	if (d->lookup)
		lookup_set_ready(d->lookup, 1);
	sd_notify(0, "READY=1");
	if (d->opts.dump_file || d->opts.lookup_in || d->opts.once) {
		d->writing = 1;
		ingest_sync(ing, fibd_write_outputs, d);
	}
}

static void
fibd_signal(evutil_socket_t sig, short what, void *arg)
{
	struct fibd *d = arg;

	switch (sig) {
	case SIGUSR1:
		if (d->opts.dump_file || d->opts.lookup_in) {
			if (!d->writing) {
				d->writing = 1;
				ingest_sync(d->ing, fibd_write_outputs, d);
			}
		} else {
			fibd_log_stats(d);
		}
		return;
	case SIGHUP:
		log_info("SIGHUP: reloading %s", d->opts.conf_path);
		fibd_reload(d, NULL);
		return;
	}
	log_info("signal %d: exiting", (int)sig);
	sd_notify(0, "STOPPING=1");
	event_base_loopbreak(d->base);
}

static struct event *
fibd_signal_new(struct fibd *d, int sig)
{
	struct event *ev = evsignal_new(d->base, sig, fibd_signal, d);

	if (!ev || evsignal_add(ev, NULL) < 0)
		fatalx("signal event %d", sig);
	return ev;
}

int
main(int argc, char **argv)
{
	struct fibd d;
	struct fib_params p;
	struct ingest_conf ic;
	uint64_t wd_usec = 0;
	double t_stop;
	sigset_t early;

	memset(&d, 0, sizeof(d));
	fibd_parse_args(&d.opts, argc, argv);
	log_init("fibd", d.opts.verbose);
	if (d.opts.check) {
		struct conf_errors errs;
		int rc;

		memset(&errs, 0, sizeof(errs));
		rc = conf_parse_file(d.opts.conf_path, &d.conf, &errs);
		if (rc < 0) {
			conf_errors_print(&errs, stderr);
			if (errs.count == 0)
				fprintf(stderr, "%s: %s\n", d.opts.conf_path, strerror(-rc));
			conf_errors_free(&errs);
			return 1;
		}
		conf_errors_free(&errs);
		if (d.opts.verbose && conf_print(d.conf, stdout) < 0)
			return 1;
		conf_free(d.conf);
		return 0;
	}
	/* Signals that arrive before their events exist wait, blocked. */
	sigemptyset(&early);
	sigaddset(&early, SIGTERM);
	sigaddset(&early, SIGINT);
	sigaddset(&early, SIGHUP);
	sigaddset(&early, SIGUSR1);
	sigprocmask(SIG_BLOCK, &early, NULL);
	d.conf = fibd_conf_read(&d.opts, 0);
	if (!d.conf)
		fatalx("%s: configuration errors, not starting", d.opts.conf_path);
	fibd_log_level(&d, d.conf);
	fibd_nofile(d.conf);
	signal(SIGPIPE, SIG_IGN);
	/* Large transient buffers (a dump's route set, fib_load's and
	 * fib_compact's sort arrays, a full `show routes`) get their own
	 * mappings and go back when freed: glibc's dynamic threshold would
	 * otherwise move them into the heap after the first such free, where
	 * they stay resident until a malloc_trim. */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	d.t_start = fibd_now();

	d.base = event_base_new();
	if (!d.base)
		fatalx("event_base_new failed");
	fib_thread_online();
	if (getrandom(d.secret, sizeof(d.secret), 0) != sizeof(d.secret))
		fatal("getrandom");
	fibd_fib_params(d.conf, &p);
	d.fib = fib_new(&p);
	if (!d.fib)
		fatal("fib_new");
	fibd_ingest_conf(&d.opts, d.conf, &ic);
	d.ing = ingest_new(d.base, d.fib, &ic);
	if (!d.ing)
		fatal("netlink");
	d.ctl = fibd_ctl_new(&d, d.conf);
	if (!d.ctl)
		fatalx("cannot open the control socket");
	d.http_resume = evtimer_new(d.base, fibd_http_resume, &d);
	if (!d.http_resume)
		fatalx("metrics timer");
	if (d.conf->metrics.enabled) {
		d.http = fibd_http_new(&d, d.conf->metrics.address);
		if (!d.http)
			fatalx("metrics: cannot serve %s", d.conf->metrics.address);
	}
	if (d.conf->lookup.threads) {
		d.lookup = lookup_new(d.fib, d.conf->lookup.socket, d.conf->control.mode,
				      d.conf->control.group, d.conf->lookup.threads,
				      fibd_lookup_table(&d));
		if (!d.lookup)
			fatal("lookup socket %s", d.conf->lookup.socket);
		lookup_set_idle_timeout(d.lookup,
					(unsigned)(d.conf->lookup.idle_timeout_us / 1000));
	}
	if (d.conf->cache.enabled) {
		d.cache = fibd_cache_new(&d, d.conf);
		if (!d.cache)
			fatalx("cannot create the flow cache");
		if (d.lookup)
			lookup_set_cache(d.lookup, d.cache);
	}
	d.ctl_gc = evtimer_new(d.base, fibd_ctl_gc, &d);
	if (!d.ctl_gc)
		fatalx("timer");
	d.sig_term = fibd_signal_new(&d, SIGTERM);
	d.sig_int = fibd_signal_new(&d, SIGINT);
	d.sig_usr1 = fibd_signal_new(&d, SIGUSR1);
	d.sig_hup = fibd_signal_new(&d, SIGHUP);
	sigprocmask(SIG_UNBLOCK, &early, NULL);
	d.probe = event_new(d.base, -1, EV_PERSIST, fibd_probe, &d);
	if (!d.probe || event_add(d.probe, &(struct timeval){ 0, 1000 }) < 0)
		fatalx("probe timer");
	d.probe_last = fibd_now();
	d.settle = event_new(d.base, -1, EV_PERSIST, fibd_settle_tick, &d);
	if (!d.settle)
		fatalx("settle timer");
	d.cw.fib = d.fib;
	d.cw.delay_ms = d.opts.compact_delay_ms;
	d.cw.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d.cw.efd < 0)
		fatal("eventfd");
	d.cw.done = event_new(d.base, d.cw.efd, EV_READ | EV_PERSIST, fibd_compact_done, &d);
	if (!d.cw.done || event_add(d.cw.done, NULL) < 0)
		fatalx("compaction event");
	d.status = event_new(d.base, -1, EV_PERSIST, fibd_status_tick, &d);
	if (!d.status || event_add(d.status, &(struct timeval){ 5, 0 }) < 0)
		fatalx("status timer");
	d.starve = event_new(d.base, -1, EV_PERSIST, fibd_starve_tick, &d);
	if (!d.starve || event_add(d.starve, &(struct timeval){ 1, 0 }) < 0)
		fatalx("starve timer");
	if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec > 0) {
		struct timeval tv = { (time_t)(wd_usec / 2 / 1000000),
				      (suseconds_t)(wd_usec / 2 % 1000000) };

		d.watchdog = event_new(d.base, -1, EV_PERSIST, fibd_watchdog, &d);
		if (!d.watchdog || event_add(d.watchdog, &tv) < 0)
			fatalx("watchdog timer");
		log_info("watchdog: every %.3f s", (double)wd_usec / 2e6);
	}
	if (ingest_start(d.ing, fibd_ready, &d) < 0)
		fatal("ingest_start");
	fibd_status(&d);

	event_base_dispatch(d.base);

	t_stop = fibd_now();
	if (d.cw.running) {
		/* fib_compact cannot be interrupted: wait for the pass (about
		 * a second for a full table), then free as usual */
		pthread_join(d.cw.thread, NULL);
		d.cw.running = 0;
		log_info("compaction thread joined in %.3f s", fibd_now() - t_stop);
	}
	event_free(d.cw.done);
	close(d.cw.efd);
	fibd_log_stats(&d);
	ctl_free(d.ctl);
	ctl_free(d.ctl_old);
	event_free(d.ctl_gc);
	lookup_free(d.lookup);
	if (d.cache) {
		double t0 = fibd_now();

		flow_cache_stop(d.cache);
		log_info("flow cache worker stopped in %.3f ms", (fibd_now() - t0) * 1e3);
		flow_cache_free(d.cache);
	}
	fibd_http_free(&d);
	event_free(d.http_resume);
	event_free(d.sig_term);
	event_free(d.sig_int);
	event_free(d.sig_usr1);
	event_free(d.sig_hup);
	event_free(d.probe);
	event_free(d.settle);
	event_free(d.status);
	event_free(d.starve);
	if (d.watchdog)
		event_free(d.watchdog);
	ingest_free(d.ing);
	fib_free(d.fib);
	fib_thread_offline();
	event_base_free(d.base);
	conf_free(d.conf);
	log_info("stopped: cleanup took %.3f s", fibd_now() - t_stop);
	return 0;
}
