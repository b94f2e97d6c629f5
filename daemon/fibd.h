/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fibd's own state, and who runs what
 *
 * One struct fibd per daemon, made of one part per job; each file of the
 * daemon keeps its part and reaches the others through the functions
 * below:
 *
 *   fibd.c      arguments, opening and closing, readiness, signals, main
 *   reload.c    reading the config, reload by section (settings.c maps
 *               it onto the modules' own settings)
 *   cmds.c      control commands (a table), every `show`, the test files
 *   metrics.c   Prometheus metrics (a table) and their HTTP listener
 *   health.c    sd_notify status, watchdog, descriptor limit and
 *               out-of-descriptor episodes, the loop-stall probe
 *   settle.c    the compaction timer and its thread; compact.c the
 *               policy's decision, a pure function
 *
 * Threads (doc/style.md, item 5), and the Context: of the functions they run:
 *
 *   main thread         "main loop": every function declared here unless
 *                       its comment says otherwise; the FIB's writer,
 *                       except while it has lent the FIB to a thread below
 *   loader thread       "writer" until ready: fib_load of the first dump
 *                       (daemon/ingest_load.c, through daemon/handoff.c)
 *   compaction thread   "writer" for one pass (settle.c, through
 *                       daemon/handoff.c); meanwhile the main loop pauses
 *                       the ingest and only reads the FIB
 *   lookup threads,     "reader": RCU readers of the FIB, never writers
 *   cache expiry worker
 */
#ifndef FIBD_FIBD_H
#define FIBD_FIBD_H

#include <stddef.h>
#include <stdint.h>
#include <event2/event.h>
#include <event2/buffer.h>

#include "fib/fib.h"
#include "cache/flow.h"
#include "conf/conf.h"
#include "daemon/compact.h"
#include "daemon/ctl.h"
#include "daemon/decisions.h"
#include "daemon/handoff.h"
#include "daemon/ingest.h"
#include "daemon/lag.h"
#include "daemon/listen.h"
#include "daemon/log.h"

struct flow_cache;
struct lookup;
struct evhttp;
struct evconnlistener;

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
 * One pass of a compaction, run by the compaction thread (settle.c).
 * The main loop sets the inputs before lending the FIB and reads the
 * results once it has it back, nothing in between.
 */
struct fibd_compactor {
	struct handoff *ho; /* the compaction thread */
	int running; /* the thread is the writer: ingest paused */
	/* in */
	struct fib *fib;
	int accel;		  /* this job builds pending compiled tables only */
	struct flow_cache *cache; /* pass 2: its stale entries dropped */
	unsigned delay_ms;	  /* test-only: --compact-delay */
	int pass;		  /* 1 (decides, unless forced), 2 */
	int force;		  /* fibctl compact: no decision, pass 2 at once */
	unsigned margin;	  /* fib.compact_margin, % */
	uint64_t built_bytes;
	size_t built_routes;
	/* out */
	int needed;	 /* pass 1: past the margin, so compacted */
	const char *why; /* pass 1: the decision's reason */
	int err;	 /* of fib_compact */
	size_t routes;
	uint64_t before, expected; /* pass 1: bytes held, expected */
	struct fib_stats stats;	   /* after the pass (pass 2: old trie freed) */
	double seconds;		   /* the thread's time, without --compact-delay */
};

/* The compaction policy's state (settle.c). */
struct fibd_compaction {
	struct event *settle; /* 1 s tick once ready: fibd_settle_tick */
	struct compact_quiet q; /* the quiet-period state (compact.h) */
	uint64_t built_bytes; /* fib bytes right after the last bulk build */
	size_t built_routes;  /* and its routes */
	uint64_t settles, compactions, failures, trims;
	uint64_t accel_builds, accel_failures; /* fib_accel_sync jobs */
	double last, max, trim_last, accel_last;
	/* malloc_trim walks every arena: ms on a full table's heap, so it
	 * runs on a thread (settle.c); one at a time, a request meanwhile
	 * is dropped (the running one gives back the same pages) */
	struct handoff *trim_ho;
	double trim_secs; /* the thread's result */
	struct fibd_compactor cw;
	int cache_pending; /* a reload's cache section waits for cw */
	/* the last fib_stats (fibd_fib_stats): show trie and the metrics
	 * answer from it while the compaction thread is the writer */
	struct fib_stats stats;
	int stats_valid;
	/* fib_stats walks both tries (15 ms for 344K routes, on a loaded
	 * machine): a stats thread takes them with the FIB lent to it (the
	 * ingest paused, as for a compaction) when the figures are older
	 * than FIBD_STATS_AGE; the answers meanwhile are the last ones */
	struct handoff *stats_ho;
	struct fib_stats stats_new; /* the thread's result */
	double stats_at;
	int stats_running;
};

/* One socket's out-of-descriptors episodes, as last logged (health.c). */
struct fibd_starve {
	uint64_t episodes, refused, errors;
	int starved;
};

/* systemd, limits and the loop's stalls (health.c). */
struct fibd_health {
	struct event *watchdog, *status;
	/* 1 ms tick, always: the loop's lateness by phase (lag.h), the
	 * longest stall of the first load and of each compaction */
	struct event *probe;
	double probe_last, probe_max;
	struct lag_hist lag[LAG_PHASES];
	/* the main thread's CPU time between two ticks, by phase: what
	 * fibd's own work held the loop, apart from waiting for a CPU */
	struct lag_hist busy[LAG_PHASES];
	double cpu_last;
	int lag_reload; /* the next tick's lateness is a reload's */
	/* the 1 ms probe also runs during a compaction (fibd_probe_watch):
	 * the loop's longest stall from its start to its end */
	int probe_watch;
	double stall_cur, stall_last, stall_max;
	char status_line[128];
	struct log_rl rl_watchdog;
	struct event *starve; /* 1 s tick: out-of-descriptors episodes logged */
	struct fibd_starve starve_ctl, starve_lookup, starve_http;
};

/* The metrics listener (metrics.c): paused 1 s after a failed accept. */
struct fibd_metrics {
	struct evhttp *http; /* NULL: metrics.enabled is false */
	struct evconnlistener *lis;
	struct listen_spare spare; /* given up to refuse scrapers (listen.h) */
	struct event *resume;
	uint64_t errors, episodes, errors_tick, refused;
	int err, starved;
};

struct fibd {
	struct fibd_opts opts;
	struct conf *conf;
	struct event_base *base;
	struct fib *fib;
	struct ingest *ing;
	struct sysctl_watch *sysctl; /* daemon/sysctl.c: multipath hash, forwarding */
	struct ctl *ctl;
	struct lookup *lookup;	  /* NULL: lookup.threads is 0 */
	struct flow_cache *cache; /* NULL: cache.enabled is false */
	uint64_t secret[2];	  /* the cache's hash key, kept across rebuilds */
	uint64_t cache_rebuilds;
	unsigned cache_reapers; /* threads freeing replaced caches (reload.c), atomic */
	/* A reload's new cache is built on a thread (its tables are tens of
	 * MB to clear) and swapped in on the loop (reload.c) */
	struct fibd_cache_build {
		struct handoff *ho;
		struct flow_config cfg; /* work's input */
		struct flow_cache *fc;	/* work's output, NULL: failed */
		int err;		/* errno of a failed build */
		int again;		/* a reload changed the cache meanwhile */
		unsigned buckets, entries; /* as the conf said, for the log */
	} cb;
	struct ctl *ctl_old; /* replaced by a reload, freed by ctl_gc */
	struct event *ctl_gc;
	struct event *sig_term, *sig_int, *sig_usr1, *sig_hup;
	double t_start;
	int ready;
	int params_pending; /* fib params changed while the loader was the writer */
	int writing;
	uint64_t reloads, reload_failures;
	struct fibd_compaction comp;
	struct fibd_health health;
	struct fibd_metrics metrics;
	/* answers by type and error: fibctl lookup, the lookup socket
	 * (decisions_count, Context: any) */
	struct decisions decisions;
};

/* fibd.c */

/* Monotonic seconds. Context: any. */
double fibd_now(void);

/* reload.c */

/* Read the config file (-c, or the default: missing means defaults);
 * errors are logged. Returns the conf or NULL. Context: main loop. */
struct conf *fibd_conf_read(const struct fibd_opts *o, int quiet_default);
/* settings_ingest, then the command-line overrides. Context: any. */
void fibd_ingest_conf(const struct fibd_opts *o, const struct conf *c, struct ingest_conf *ic);
/* Apply c's fib parameters. Context: main loop, the FIB's writer. */
void fibd_fib_params_apply(struct fibd *d, const struct conf *c, const char *when);
/* Log level from c and -v. Context: main loop. */
void fibd_log_level(const struct fibd *d, const struct conf *c);
/* The table lookups ask (the first ingested). Context: any. */
uint32_t fibd_lookup_table(const struct fibd *d);
/* Open the control socket, the lookup service and the flow cache of
 * d->conf, or die. Context: main loop, at start. */
void fibd_modules_open(struct fibd *d);
/* A new cache per c's section, built on a thread and swapped in on the
 * loop a moment later, or the old kept. Context: main loop. */
void fibd_cache_apply(struct fibd *d, const struct conf *n);
/* Wait for a replaced cache's free, if one runs. Context: main loop, at
 * exit, before the FIB is freed. */
void fibd_cache_reap_wait(struct fibd *d);
/* Join a running cache build and free its cache. Context: main loop, at exit. */
void fibd_cache_build_close(struct fibd *d);
/* Parse the file again and apply what changed; errors also go to errs
 * (may be NULL). Returns 0 or -1. Context: main loop. */
int fibd_reload(struct fibd *d, struct evbuffer *errs);

/* cmds.c */

/* The control socket's handler (ctl_exec_cb). Context: main loop. */
void fibd_exec(const struct ctl_cmd *cmd, struct evbuffer *out, struct ctl_reply *r, void *arg);
/* Test-only files (--dump, --lookup). Return 0 or -1. Context: main loop. */
int fibd_write_dump(struct fibd *d, const char *path);
int fibd_write_lookups(struct fibd *d, const char *in, const char *path);
/* Policy rules of a family in the FIB (fib_rules_get). Context: main loop. */
size_t fibd_rules_count(struct fibd *d, int family);
/* Counters to the log (SIGUSR1, exit). Context: main loop. */
void fibd_log_stats(struct fibd *d);
/* The last fib_stats figures (at most FIBD_STATS_AGE old, else a stats
 * thread is started to take new ones), or those of the compaction
 * thread. Context: main loop, after ready. */
void fibd_fib_stats(struct fibd *d, struct fib_stats *st);
/* Wait for a running stats thread and take its figures. Context: main
 * loop (before another writer takes the FIB). */
void fibd_stats_join(struct fibd *d);
void fibd_stats_open(struct fibd *d);
void fibd_stats_close(struct fibd *d);

/* metrics.c */

/* The Prometheus text. Context: main loop. */
void fibd_metrics(struct fibd *d, struct evbuffer *out);
/* The metrics listener per d->conf (fatal if it cannot listen at start),
 * and after a reload. Context: main loop. */
void fibd_metrics_open(struct fibd *d);
int fibd_metrics_listen(struct fibd *d, const char *address);
void fibd_metrics_unlisten(struct fibd *d);
void fibd_metrics_close(struct fibd *d);
/* Each second: resume a paused listener, end a quiet episode. Returns 1
 * with a listener. Context: main loop. */
int fibd_metrics_tick(struct fibd *d);

/* health.c */

/* Raise RLIMIT_NOFILE to what c's sockets need. Context: main loop, at start. */
void fibd_nofile(const struct conf *c);
/* Timers: status, out-of-descriptors, watchdog, the stall probe.
 * Context: main loop. */
void fibd_health_open(struct fibd *d);
void fibd_health_close(struct fibd *d);
/* STATUS= for systemd when it changed. Context: main loop. */
void fibd_status(struct fibd *d);
/* The 1 ms probe, always on: its lateness by phase (lag.h); its longest
 * gap until ready (fibd_probe_stop) and from t0 during a compaction
 * (watch, unwatch). Context: main loop. */
void fibd_probe(evutil_socket_t fd, short what, void *arg);
void fibd_probe_watch(struct fibd *d, double t0);
void fibd_probe_unwatch(struct fibd *d);
void fibd_probe_stop(struct fibd *d);
/* The next tick's lateness is a reload's. Context: main loop. */
void fibd_lag_reload(struct fibd *d);

/* settle.c */

/* The compaction thread's hand-off and the settle timer. Context: main loop. */
void fibd_compact_open(struct fibd *d);
/* Join a running pass, free. Context: main loop, after the loop. */
void fibd_compact_close(struct fibd *d);
/* Ready: the first load's reference, and the settle timer. Context:
 * main loop, the FIB's writer. */
void fibd_compact_ready(struct fibd *d);
/* malloc_trim, counted. Context: any, one caller at a time (main loop). */
void fibd_trim(struct fibd *d);
/* Start a compaction (force: whatever the policy says). Context: main
 * loop, the FIB's writer, ingest idle, no compaction running. */
int fibd_settle(struct fibd *d, int force, char *msg, size_t len);

#endif
