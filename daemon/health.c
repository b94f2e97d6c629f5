/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: health.c, systemd and the daemon's own health
 *
 * sd_notify's STATUS= line, the watchdog (petted by the running loop
 * only while every lookup thread and the cache's expiry worker show life),
 * the descriptor limit, the log of out-of-descriptor episodes of the
 * three listeners, and the 1 ms probe that measures the loop's lateness
 * by phase (lag.h: first load, steady, resync, compaction, reload) and
 * its longest stall during the first load and each compaction.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "cache/flow.h"
#include "daemon/fibd.h"
#include "daemon/lookup.h"

void
fibd_status(struct fibd *d)
{
	char line[128];

	if (d->ready)
		snprintf(line, sizeof(line), "%zu IPv4 / %zu IPv6 routes",
			 fib_count(d->fib, AF_INET), fib_count(d->fib, AF_INET6));
	else
		snprintf(line, sizeof(line), "loading: %zu IPv4 / %zu IPv6 routes so far",
			 fib_count(d->fib, AF_INET), fib_count(d->fib, AF_INET6));
	if (strcmp(line, d->health.status_line)) {
		strcpy(d->health.status_line, line);
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
		fibd_starve_log("control socket", &d->health.starve_ctl, cs.starved, cs.fd_episodes,
				cs.refused_fds, cs.accept_errors, cs.accept_errno);
	}
	if (d->lookup) {
		struct lookup_stats ls;

		lookup_stats(d->lookup, &ls);
		fibd_starve_log("lookup socket", &d->health.starve_lookup, ls.starved,
				ls.fd_episodes, ls.refused_fds, ls.accept_errors, ls.accept_errno);
	}
	if (fibd_metrics_tick(d))
		fibd_starve_log("metrics socket", &d->health.starve_http, d->metrics.starved,
				d->metrics.episodes, d->metrics.refused, d->metrics.errors,
				d->metrics.err);
}

/*
 * Every control and lookup client is a descriptor: raise the soft limit
 * (1024 under systemd) to what full sockets need, within the hard limit
 * (524288 under systemd), as systemd advises programs that do not use
 * select(). A lower hard limit is only logged: running out is handled
 * (ctl.c, lookup.c refuse and log), not fatal.
 */
void
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
		log_warnx_rl(&d->health.rl_watchdog,
			     "watchdog: a lookup thread is stuck, not notifying");
		return;
	}
	/* The worker runs from ready on and wakes at least every 0.5 s. */
	if (d->cache && d->ready && !flow_cache_alive(d->cache, 5000000000ull)) {
		log_warnx_rl(&d->health.rl_watchdog, "watchdog: the flow cache worker is stuck, "
						     "not notifying");
		return;
	}
	sd_notify(0, "WATCHDOG=1");
}

/* The phase the loop is in for the lag histograms. */
static enum lag_phase
fibd_lag_phase(struct fibd *d)
{
	if (!d->ready)
		return LAG_LOAD;
	if (d->comp.cw.running)
		return LAG_COMPACT;
	if (d->health.lag_reload)
		return LAG_RELOAD;
	if (!ingest_idle(d->ing))
		return LAG_RESYNC;
	return LAG_STEADY;
}

/* The main thread's CPU time, s (a system call: once a tick). */
static double
fibd_thread_cpu(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The gap since the last tick: the longest of the first load
 * (probe_max) or of the running compaction (stall_cur); with record,
 * its lateness past the 1 ms period goes to the phase's histogram. */
static void
fibd_probe_gap(struct fibd *d, int record)
{
	struct fibd_health *h = &d->health;
	double now = fibd_now(), gap = now - h->probe_last;

	if (h->probe_watch) {
		if (gap > h->stall_cur)
			h->stall_cur = gap;
	} else if (!d->ready && gap > h->probe_max) {
		h->probe_max = gap;
	}
	if (record) {
		double late = gap - 1e-3, cpu = fibd_thread_cpu(), busy = cpu - h->cpu_last;
		enum lag_phase p = fibd_lag_phase(d);

		lag_hist_add(&h->lag[p], late > 0 ? (uint64_t)(late * 1e6) : 0);
		lag_hist_add(&h->busy[p], busy > 0 ? (uint64_t)(busy * 1e6) : 0);
		h->cpu_last = cpu;
		h->lag_reload = 0;
	}
	h->probe_last = now;
}

void
fibd_probe(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	fibd_probe_gap(arg, 1);
}

/* Watch the probe's gaps from t0 (the start of the main thread's own
 * part) until fibd_probe_unwatch: the loop's longest stall during a
 * compaction. Context: main loop, once ready. */
void
fibd_probe_watch(struct fibd *d, double t0)
{
	if (d->health.probe_watch)
		return;
	d->health.probe_watch = 1;
	d->health.stall_cur = 0;
	if (t0 < d->health.probe_last)
		d->health.stall_cur = d->health.probe_last - t0;
}

void
fibd_probe_unwatch(struct fibd *d)
{
	if (!d->health.probe_watch)
		return;
	fibd_probe_gap(d, 0); /* up to now: the main thread's last steps */
	d->health.probe_watch = 0;
	d->health.stall_last = d->health.stall_cur;
	if (d->health.stall_cur > d->health.stall_max)
		d->health.stall_max = d->health.stall_cur;
}

/* At ready: the first load's longest stall up to now. The probe goes on.
 * Context: main loop. */
void
fibd_probe_stop(struct fibd *d)
{
	fibd_probe_gap(d, 0);
}

/* A reload runs now: the next tick's lateness is its. Context: main loop. */
void
fibd_lag_reload(struct fibd *d)
{
	d->health.lag_reload = 1;
}

static struct event *
fibd_health_timer(struct fibd *d, event_callback_fn cb, time_t sec, long usec, const char *what)
{
	struct event *ev = event_new(d->base, -1, EV_PERSIST, cb, d);

	if (!ev || event_add(ev, &(struct timeval){sec, usec}) < 0)
		fatalx("%s timer", what);
	return ev;
}

/* The probe (1 ms, always), STATUS= every 5 s, the out-of-descriptors
 * log every second, and the watchdog at half systemd's WatchdogSec.
 * Context: main loop, at start. */
void
fibd_health_open(struct fibd *d)
{
	struct fibd_health *h = &d->health;
	uint64_t wd_usec = 0;

	h->probe = fibd_health_timer(d, fibd_probe, 0, 1000, "probe");
	h->probe_last = fibd_now();
	h->cpu_last = fibd_thread_cpu();
	h->status = fibd_health_timer(d, fibd_status_tick, 5, 0, "status");
	h->starve = fibd_health_timer(d, fibd_starve_tick, 1, 0, "starve");
	if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec > 0) {
		h->watchdog = fibd_health_timer(d, fibd_watchdog, (time_t)(wd_usec / 2 / 1000000),
						(long)(wd_usec / 2 % 1000000), "watchdog");
		log_info("watchdog: every %.3f s", (double)wd_usec / 2e6);
	}
}

/* Context: main loop, after it ran. */
void
fibd_health_close(struct fibd *d)
{
	struct fibd_health *h = &d->health;

	event_free(h->probe);
	event_free(h->status);
	event_free(h->starve);
	if (h->watchdog)
		event_free(h->watchdog);
}
