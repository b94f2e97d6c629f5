/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fibd, the routing daemon's main
 *
 * fibd [-c FILE] [-n] [-v] [overrides]: read the YAML config (conf/),
 * create the FIB with its thresholds, mirror the kernel's tables into it
 * (daemon/ingest), serve the control socket (daemon/ctl) and talk to
 * systemd (sd_notify), all on one libevent loop on the main thread, which
 * is the FIB's only writer once the first load is done, except while a
 * compaction runs on its own thread. This file only starts and stops
 * things; daemon/fibd.h says which file does each job and which thread
 * runs what.
 *
 *   start --conf--> fib_new, ingest_start, ctl_new --loop-->
 *     first dump in the FIB: READY=1, STATUS=
 *     SIGHUP / "reload": RELOADING=1, parse the whole file; errors: keep
 *       the old conf and log every error; else apply each section that
 *       conf_diff() reports (reload.c); READY=1
 *     SIGUSR1: statistics to the log; SIGTERM / SIGINT: STOPPING=1, leave
 *       the loop, free everything
 *     timer: WATCHDOG=1 every WatchdogSec/2, only from the running loop
 *
 * Signals reach the loop as libevent signal events (doc/style.md, item 5).
 *
 * Test-only query path: --dump FILE writes every route (fib_walk) and
 * --lookup IN OUT answers the addresses listed in IN, once ready and
 * again on each SIGUSR1; SIGUSR1 first applies every event already
 * queued, so a test that changed the kernel and then signals sees the FIB
 * that follows from its changes. Files are written to FILE.tmp and
 * renamed. --once exits after the first write. --compact-delay MS makes
 * the compaction thread sleep MS ms before each pass, so that a test can
 * act while a compaction runs.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <event2/event.h>
#include <linux/rtnetlink.h>
#include <systemd/sd-daemon.h>

#include "cache/flow.h"
#include "daemon/fibd.h"
#include "daemon/lookup.h"
#include "daemon/settings.h"
#include "daemon/sysctl.h"

#ifndef FIBD_CONF
#define FIBD_CONF "/etc/fibd/fibd.yaml"
#endif

double
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
	    {"dump", required_argument, NULL, 'D'}, {"lookup", required_argument, NULL, 'L'},
	    {"once", no_argument, NULL, 'O'},	    {"compact-delay", required_argument, NULL, 'K'},
	    {"help", no_argument, NULL, 'h'},	    {NULL, 0, NULL, 0},
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
fibd_ready(struct ingest *ing, void *arg)
{
	struct fibd *d = arg;
	struct ingest_stats st;

	fibd_probe_stop(d);
	d->ready = 1;
	if (d->params_pending)
		fibd_fib_params_apply(d, d->conf, "now that the first load is done");
	ingest_stats(ing, &st);
	log_info("ready: %zu v4 / %zu v6 routes in %.3f seconds", fib_count(d->fib, AF_INET),
		 fib_count(d->fib, AF_INET6), st.ingest_seconds);
	log_info("ingest: dump and parse %.3f s, then %.3f s to finish loading; longest "
		 "event-loop stall %.1f ms",
		 st.dump_seconds, st.ingest_seconds - st.dump_seconds, d->health.probe_max * 1e3);
	fibd_status(d);
	fibd_compact_ready(d);
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

/* -n: check the file (and print it with -v); the exit status. */
static int
fibd_check(struct fibd *d)
{
	struct conf_errors errs;
	int rc;

	memset(&errs, 0, sizeof(errs));
	rc = conf_parse_file(d->opts.conf_path, &d->conf, &errs);
	if (rc < 0) {
		conf_errors_print(&errs, stderr);
		if (errs.count == 0)
			fprintf(stderr, "%s: %s\n", d->opts.conf_path, strerror(-rc));
		conf_errors_free(&errs);
		return 1;
	}
	conf_errors_free(&errs);
	if (d->opts.verbose && conf_print(d->conf, stdout) < 0)
		return 1;
	conf_free(d->conf);
	return 0;
}

/*
 * Everything up to the loop: config, FIB, ingest, sockets, cache,
 * signals, timers; fatal on failure. Signals that arrive before their
 * events exist wait, blocked. Context: main loop, before it runs.
 */
static void
fibd_open(struct fibd *d)
{
	struct fib_params p;
	struct ingest_conf ic;
	sigset_t early;

	sigemptyset(&early);
	sigaddset(&early, SIGTERM);
	sigaddset(&early, SIGINT);
	sigaddset(&early, SIGHUP);
	sigaddset(&early, SIGUSR1);
	sigprocmask(SIG_BLOCK, &early, NULL);
	d->conf = fibd_conf_read(&d->opts, 0);
	if (!d->conf)
		fatalx("%s: configuration errors, not starting", d->opts.conf_path);
	fibd_log_level(d, d->conf);
	fibd_nofile(d->conf);
	signal(SIGPIPE, SIG_IGN);
	/* Large transient buffers (a dump's route set, fib_load's and
	 * fib_compact's sort arrays, a full `show routes`) get their own
	 * mappings and go back when freed: glibc's dynamic threshold would
	 * otherwise move them into the heap after the first such free, where
	 * they stay resident until a malloc_trim. */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	d->t_start = fibd_now();
	/*
	 * Precise timers (a timerfd under epoll): with epoll_wait's own
	 * millisecond timeout the 1 ms probe ticked every 4 ms on an idle
	 * loop, so the loop-lag figures showed 3 ms of lateness that was
	 * the timer's, not the loop's.
	 */
	{
		struct event_config *ec = event_config_new();

		if (!ec || event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER) < 0)
			fatalx("event_config failed");
		d->base = event_base_new_with_config(ec);
		event_config_free(ec);
	}
	if (!d->base)
		fatalx("event_base_new failed");
	fib_thread_online();
	if (getrandom(d->secret, sizeof(d->secret), 0) != sizeof(d->secret))
		fatal("getrandom");
	settings_fib(d->conf, &p);
	d->fib = fib_new(&p);
	if (!d->fib)
		fatal("fib_new");
	fibd_ingest_conf(&d->opts, d->conf, &ic);
	d->ing = ingest_new(d->base, d->fib, &ic);
	if (!d->ing)
		fatal("netlink");
	d->sysctl = sysctl_watch_new(d->base, d->fib, d->ing, NULL, SYSCTL_INTERVAL_S);
	if (!d->sysctl)
		fatalx("sysctl timer");
	fibd_modules_open(d);
	fibd_metrics_open(d);
	d->sig_term = fibd_signal_new(d, SIGTERM);
	d->sig_int = fibd_signal_new(d, SIGINT);
	d->sig_usr1 = fibd_signal_new(d, SIGUSR1);
	d->sig_hup = fibd_signal_new(d, SIGHUP);
	sigprocmask(SIG_UNBLOCK, &early, NULL);
	fibd_health_open(d);
	fibd_compact_open(d);
	if (ingest_start(d->ing, fibd_ready, d) < 0)
		fatal("ingest_start");
	fibd_status(d);
}

/* After the loop: a running compaction pass joined, everything freed in
 * the reverse order. Context: main loop, after it ran. */
static void
fibd_close(struct fibd *d)
{
	double t_stop = fibd_now();

	fibd_compact_close(d);
	fibd_log_stats(d);
	ctl_free(d->ctl);
	ctl_free(d->ctl_old);
	event_free(d->ctl_gc);
	lookup_free(d->lookup);
	fibd_cache_build_close(d);
	fibd_cache_reap_wait(d);
	if (d->cache) {
		double t0 = fibd_now();

		flow_cache_stop(d->cache);
		log_info("flow cache worker stopped in %.3f ms", (fibd_now() - t0) * 1e3);
		flow_cache_free(d->cache);
	}
	fibd_metrics_close(d);
	event_free(d->sig_term);
	event_free(d->sig_int);
	event_free(d->sig_usr1);
	event_free(d->sig_hup);
	fibd_health_close(d);
	sysctl_watch_free(d->sysctl);
	ingest_free(d->ing);
	fib_free(d->fib);
	fib_thread_offline();
	event_base_free(d->base);
	conf_free(d->conf);
	log_info("stopped: cleanup took %.3f s", fibd_now() - t_stop);
}

int
main(int argc, char **argv)
{
	struct fibd d;

	memset(&d, 0, sizeof(d));
	fibd_parse_args(&d.opts, argc, argv);
	log_init("fibd", d.opts.verbose);
	if (d.opts.check)
		return fibd_check(&d);
	fibd_open(&d);
	event_base_dispatch(d.base);
	fibd_close(&d);
	return 0;
}
