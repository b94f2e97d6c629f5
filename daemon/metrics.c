/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: metrics.c, Prometheus metrics over HTTP
 *
 * GET /metrics in the Prometheus text format, also the `metrics` control
 * command. The HTTP listener is an evconnlistener of fibd's own, given to
 * evhttp (evhttp_bind_listener), so that its accept errors reach fibd:
 * out of descriptors, it pauses for a second (a scraper waits in the
 * backlog) instead of libevent's retry loop, and health.c logs the
 * episode.
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "cache/flow.h"
#include "daemon/fibd.h"
#include "daemon/lookup.h"

/* What the metrics read, taken once per scrape. */
struct fibd_snap {
	int ready, pending, running;
	double ingest_seconds;
	size_t routes_v4, routes_v6, malloc_in_use, malloc_free;
	size_t rules_v4, rules_v6;
	struct decisions dec;
	struct ingest_stats ing;
	struct flow_stats cache;
	double gc_last, gc_max;
	struct { /* the loop's compaction counters (not cw: the thread's) */
		uint64_t settles, compactions, failures, trims;
		uint64_t accel_builds, accel_failures;
		double last, max, accel_last;
	} comp;
	double stall_last, stall_max;
	struct ctl_stats ctl;
	struct lookup_stats lookup;
	uint64_t reloads, reload_failures;
	struct fib_stats fib;
	double gp_max;
	/* per phase (lag.h): p50, p99, max of the loop's lateness, and ticks */
	double lag[LAG_PHASES][3];
	double busy[LAG_PHASES][2];
	uint64_t lag_ticks[LAG_PHASES];
};

enum fibd_value { V_INT, V_UNS, V_U64, V_SIZE, V_F6, V_F9 };

#define N_CACHE  0x1 /* only with a flow cache */
#define N_LOOKUP 0x2 /* only with lookup threads */
#define N_READY  0x4 /* only once ready: fib_stats is the loader's before */

/*
 * One sample a row, in the order printed. A row with help is a metric's
 * first sample (its HELP and TYPE lines first); a row without is another
 * sample of the metric above, with other labels.
 */
static const struct fibd_metric {
	const char *name, *type, *help;
	const char *labels; /* NULL: none */
	unsigned need;      /* N_*: skipped without */
	enum fibd_value kind;
	size_t off;         /* in struct fibd_snap */
} fibd_metric_table[] = {
#define S(f) offsetof(struct fibd_snap, f)
#define G "gauge"
#define C "counter"
	{ "ready", G, "1 once the first full dump is in the FIB.", NULL, 0, V_INT, S(ready) },
	{ "ingest_seconds", G, "First dump request to ready.", NULL, 0, V_F6, S(ingest_seconds) },
	{ "routes", G, "Routes in the FIB.", "family=\"ipv4\"", 0, V_SIZE, S(routes_v4) },
	{ "routes", G, NULL, "family=\"ipv6\"", 0, V_SIZE, S(routes_v6) },
	{ "rules", G, "Policy rules in the FIB (ip rule).", "family=\"ipv4\"", 0, V_SIZE,
	  S(rules_v4) },
	{ "rules", G, NULL, "family=\"ipv6\"", 0, V_SIZE, S(rules_v6) },
#define DEC_T(slot, name) \
	{ "decisions_total", C, NULL, "type=\"" name "\"", 0, V_U64, S(dec.type[slot]) }
#define DEC_E(slot, name) \
	{ "decision_errors_total", C, NULL, "error=\"" name "\"", 0, V_U64, S(dec.error[slot]) }
	{ "decisions_total", C,
	  "Answers to flows (fibctl lookup, lookup socket) by route type (none: no route).",
	  "type=\"none\"", 0, V_U64, S(dec.type[DECISIONS_NONE]) },
	DEC_T(DECISIONS_UNICAST, "unicast"),
	DEC_T(DECISIONS_LOCAL, "local"),
	DEC_T(DECISIONS_BROADCAST, "broadcast"),
	DEC_T(DECISIONS_BLACKHOLE, "blackhole"),
	DEC_T(DECISIONS_UNREACHABLE, "unreachable"),
	DEC_T(DECISIONS_PROHIBIT, "prohibit"),
	DEC_T(DECISIONS_THROW, "throw"),
	DEC_T(DECISIONS_OTHER_TYPE, "other"),
	{ "decision_errors_total", C, "Answers to flows that are the kernel's errors.",
	  "error=\"ENETUNREACH\"", 0, V_U64, S(dec.error[DECISIONS_ENETUNREACH]) },
	DEC_E(DECISIONS_EHOSTUNREACH, "EHOSTUNREACH"),
	DEC_E(DECISIONS_EACCES, "EACCES"),
	DEC_E(DECISIONS_EINVAL, "EINVAL"),
	DEC_E(DECISIONS_OTHER_ERROR, "other"),
#undef DEC_E
#undef DEC_T
	{ "netlink_messages_total", C, "Netlink messages read.", NULL, 0, V_U64, S(ing.msgs) },
	{ "netlink_drops_total", C, "ENOBUFS on the event socket.", NULL, 0, V_U64, S(ing.drops) },
	{ "netlink_resyncs_total", C, "Completed resynchronisations.", NULL, 0, V_U64,
	  S(ing.resyncs) },
	{ "netlink_policy_applied_total", C,
	  "Rule, address and link changes applied to the FIB's policy, dumps included.",
	  "kind=\"rule\"", 0, V_U64, S(ing.rules_applied) },
	{ "netlink_policy_applied_total", C, NULL, "kind=\"addr\"", 0, V_U64,
	  S(ing.addrs_applied) },
	{ "netlink_policy_applied_total", C, NULL, "kind=\"link\"", 0, V_U64,
	  S(ing.links_applied) },
	{ "netlink_policy_rejected_total", C,
	  "Rule, address and link messages rejected as malformed.", "kind=\"rule\"", 0, V_U64,
	  S(ing.rules_rejected) },
	{ "netlink_policy_rejected_total", C, NULL, "kind=\"addr\"", 0, V_U64,
	  S(ing.addrs_rejected) },
	{ "netlink_policy_rejected_total", C, NULL, "kind=\"link\"", 0, V_U64,
	  S(ing.links_rejected) },
	{ "netlink_policy_publishes_total", C, "fib_policy_publish calls (one per slice or dump).",
	  NULL, 0, V_U64, S(ing.policy_publishes) },
	{ "cache_entries", G, "Flow cache entries.", NULL, N_CACHE, V_U64, S(cache.entries) },
	{ "cache_bytes", G, "Flow cache memory, bytes.", NULL, N_CACHE, V_U64, S(cache.bytes) },
	{ "cache_lookups_total", C, "Flow cache lookups.", NULL, N_CACHE, V_U64,
	  S(cache.lookups) },
	{ "cache_hits_total", C, "Flow cache hits.", NULL, N_CACHE, V_U64, S(cache.hits) },
	{ "cache_misses_total", C, "Flow cache misses.", NULL, N_CACHE, V_U64, S(cache.misses) },
	{ "cache_inserts_total", C, "Flow cache inserts.", NULL, N_CACHE, V_U64,
	  S(cache.inserts) },
	{ "cache_insert_odd_total", C,
	  "Misses not inserted: odd FIB generation (a change in progress).", NULL, N_CACHE, V_U64,
	  S(cache.insert_odd) },
	{ "cache_evictions_chain_total", C, "Evicted: chain full.", NULL, N_CACHE, V_U64,
	  S(cache.evict_chain) },
	{ "cache_evictions_size_total", C, "Evicted by pressure GC.", NULL, N_CACHE, V_U64,
	  S(cache.evict_size) },
	{ "cache_expired_idle_total", C, "Expired: idle.", NULL, N_CACHE, V_U64,
	  S(cache.expired_idle) },
	{ "cache_expired_stale_total", C, "Expired: older FIB generation.", NULL, N_CACHE, V_U64,
	  S(cache.expired_stale) },
	{ "cache_gc_runs_total", C, "Periodic expiry runs.", NULL, N_CACHE, V_U64,
	  S(cache.gc_runs) },
	{ "cache_gc_buckets_scanned_total", C, "Buckets scanned by expiry.", NULL, N_CACHE, V_U64,
	  S(cache.buckets_scanned) },
	{ "cache_bypass_default_total", C,
	  "Resolutions sent straight to the FIB: default policy, no cache.", NULL, N_CACHE, V_U64,
	  S(cache.bypass_default) },
	{ "cache_evictions_lru_total", C, "Evicted: a full set's least recently used way.", NULL,
	  N_CACHE, V_U64, S(cache.evict_lru) },
	{ "cache_invalid_route_total", C, "Hits refused: a route under the flow changed.", NULL,
	  N_CACHE, V_U64, S(cache.invalid_route) },
	{ "cache_invalid_policy_total", C, "Hits refused: the policy changed.", NULL, N_CACHE,
	  V_U64, S(cache.invalid_policy) },
	{ "cache_records", G, "Live decision records.", NULL, N_CACHE, V_U64, S(cache.records) },
	{ "cache_hit_nanoseconds", G, "Measured mean cost of a hit (sampled).", NULL, N_CACHE,
	  V_U64, S(cache.hit_ns) },
	{ "cache_resolve_nanoseconds", G, "Measured mean cost of an uncached resolution (sampled).",
	  NULL, N_CACHE, V_U64, S(cache.resolve_ns) },
	{ "cache_gc_yields_total", C, "Expiry yields.", NULL, N_CACHE, V_U64, S(cache.yields) },
	{ "cache_gc_seconds_last", G, "Last expiry run, seconds.", NULL, N_CACHE, V_F9,
	  S(gc_last) },
	{ "cache_gc_seconds_max", G, "Longest expiry run, seconds.", NULL, N_CACHE, V_F9,
	  S(gc_max) },
	{ "malloc_in_use_bytes", G, "malloc: bytes in use, all arenas and mmapped blocks.", NULL,
	  0, V_SIZE, S(malloc_in_use) },
	{ "malloc_free_bytes", G,
	  "malloc: free bytes held in the arenas (malloc_trim gives pages back).", NULL, 0, V_SIZE,
	  S(malloc_free) },
	{ "settles_total", C,
	  "Quiet periods after churn checked for compaction (and malloc trimmed).", NULL, 0, V_U64,
	  S(comp.settles) },
	{ "compaction_pending", G,
	  "1 while a compaction runs, or its second pass or reference is due.", NULL, 0, V_INT,
	  S(pending) },
	{ "compaction_running", G,
	  "1 while the compaction thread rebuilds the FIB (netlink changes wait).", NULL, 0, V_INT,
	  S(running) },
	{ "compactions_total", C, "FIB rebuilds by fib_compact (passes).", NULL, 0, V_U64,
	  S(comp.compactions) },
	{ "compaction_failures_total", C, "fib_compact errors (FIB unchanged).", NULL, 0, V_U64,
	  S(comp.failures) },
	{ "compaction_seconds_last", G, "The compaction thread's time for the last pass.", NULL, 0,
	  V_F6, S(comp.last) },
	{ "compaction_seconds_max", G, "Longest compaction pass.", NULL, 0, V_F6, S(comp.max) },
	{ "compaction_loop_stall_seconds_last", G,
	  "Longest event-loop stall during the last compaction (1 ms probe).", NULL, 0, V_F6,
	  S(stall_last) },
	{ "compaction_loop_stall_seconds_max", G, "Longest event-loop stall during any compaction.",
	  NULL, 0, V_F6, S(stall_max) },
	{ "compiled_table_builds_total", C,
	  "Jobs of the compaction thread that built due compiled tables (a table crossed "
	  "fib.accel_min_routes, or new fib parameters).",
	  NULL, 0, V_U64, S(comp.accel_builds) },
	{ "compiled_table_build_failures_total", C,
	  "Such jobs that ran out of memory (the trie answers those tables).", NULL, 0, V_U64,
	  S(comp.accel_failures) },
	{ "compiled_table_build_seconds_last", G, "The compaction thread's time for the last such job.",
	  NULL, 0, V_F6, S(comp.accel_last) },
	{ "malloc_trims_total", C, "malloc_trim calls.", NULL, 0, V_U64, S(comp.trims) },
	{ "control_clients", G, "Connected control clients.", NULL, 0, V_UNS, S(ctl.clients) },
	{ "control_refused_total", C,
	  "Control clients refused: too many clients, or fibd out of file descriptors.",
	  "reason=\"clients\"", 0, V_U64, S(ctl.refused) },
	{ "control_refused_total", C, NULL, "reason=\"fds\"", 0, V_U64, S(ctl.refused_fds) },
	{ "control_idle_closed_total", C, "Control clients disconnected by control.idle_timeout.",
	  NULL, 0, V_U64, S(ctl.idle_closed) },
	{ "accept_errors_total", C, "Failed accept() calls (out of file descriptors, mostly).",
	  "socket=\"control\"", 0, V_U64, S(ctl.accept_errors) },
	{ "accept_errors_total", C, NULL, "socket=\"lookup\"", N_LOOKUP, V_U64,
	  S(lookup.accept_errors) },
	{ "lookup_refused_total", C, "Lookup clients refused: fibd out of file descriptors.",
	  "reason=\"fds\"", N_LOOKUP, V_U64, S(lookup.refused_fds) },
	{ "lookup_idle_closed_total", C, "Lookup clients disconnected by lookup.idle_timeout.", NULL,
	  N_LOOKUP, V_U64, S(lookup.idle_closed) },
	{ "reloads_total", C, "Successful config reloads.", NULL, 0, V_U64, S(reloads) },
	{ "reload_failures_total", C, "Refused config reloads.", NULL, 0, V_U64,
	  S(reload_failures) },
	{ "trie_depth_max", G, "Deepest leaf of the trie.", "family=\"ipv4\"", N_READY, V_UNS,
	  S(fib.v4.depth_max) },
	{ "trie_depth_max", G, NULL, "family=\"ipv6\"", N_READY, V_UNS, S(fib.v6.depth_max) },
	{ "trie_bytes", G, "Trie nodes and leaves, bytes.", "family=\"ipv4\"", N_READY, V_U64,
	  S(fib.v4.bytes) },
	{ "trie_bytes", G, NULL, "family=\"ipv6\"", N_READY, V_U64, S(fib.v6.bytes) },
	{ "compiled_tables", G, "Routing tables with a compiled lookup table.",
	  "family=\"ipv4\"", N_READY, V_UNS, S(fib.v4.accel_tables) },
	{ "compiled_tables", G, NULL, "family=\"ipv6\"", N_READY, V_UNS, S(fib.v6.accel_tables) },
	{ "fib_bytes", G, "Everything the FIB holds, bytes.", NULL, N_READY, V_U64, S(fib.bytes) },
	{ "grace_periods_total", C, "RCU grace periods waited for.", NULL, N_READY, V_U64,
	  S(fib.reclaim.grace_periods) },
	{ "grace_period_seconds_max", G, "Longest grace period.", NULL, N_READY, V_F9, S(gp_max) },
#define LAG_Q(p, name, q, i)                                                                \
	{ "loop_lag_seconds", G, NULL, "phase=\"" name "\",quantile=\"" q "\"", 0, V_F6,    \
	  S(lag[p][i]) }
#define LAG_QS(p, name) LAG_Q(p, name, "0.5", 0), LAG_Q(p, name, "0.99", 1), LAG_Q(p, name, "1", 2)
#define LAG_TICKS(p, name) \
	{ "loop_lag_ticks_total", C, NULL, "phase=\"" name "\"", 0, V_U64, S(lag_ticks[p]) }
	{ "loop_lag_seconds", G,
	  "Lateness of the event loop's 1 ms tick by phase: quantiles (1: the maximum).",
	  "phase=\"load\",quantile=\"0.5\"", 0, V_F6, S(lag[LAG_LOAD][0]) },
	LAG_Q(LAG_LOAD, "load", "0.99", 1),
	LAG_Q(LAG_LOAD, "load", "1", 2),
	LAG_QS(LAG_STEADY, "steady"),
	LAG_QS(LAG_RESYNC, "resync"),
	LAG_QS(LAG_COMPACT, "compaction"),
	LAG_QS(LAG_RELOAD, "reload"),
	{ "loop_lag_ticks_total", C, "Ticks of the event loop's 1 ms probe by phase.",
	  "phase=\"load\"", 0, V_U64, S(lag_ticks[LAG_LOAD]) },
	LAG_TICKS(LAG_STEADY, "steady"),
	LAG_TICKS(LAG_RESYNC, "resync"),
	LAG_TICKS(LAG_COMPACT, "compaction"),
	LAG_TICKS(LAG_RELOAD, "reload"),
#define BUSY_Q(p, name, q, i)                                                                \
	{ "loop_busy_seconds", G, NULL, "phase=\"" name "\",quantile=\"" q "\"", 0, V_F6,    \
	  S(busy[p][i]) }
#define BUSY_QS(p, name) BUSY_Q(p, name, "0.99", 0), BUSY_Q(p, name, "1", 1)
	{ "loop_busy_seconds", G,
	  "The main thread's CPU time between two 1 ms ticks by phase: quantiles (1: the maximum).",
	  "phase=\"load\",quantile=\"0.99\"", 0, V_F6, S(busy[LAG_LOAD][0]) },
	BUSY_Q(LAG_LOAD, "load", "1", 1),
	BUSY_QS(LAG_STEADY, "steady"),
	BUSY_QS(LAG_RESYNC, "resync"),
	BUSY_QS(LAG_COMPACT, "compaction"),
	BUSY_QS(LAG_RELOAD, "reload"),
#undef BUSY_QS
#undef BUSY_Q
#undef LAG_TICKS
#undef LAG_QS
#undef LAG_Q
#undef C
#undef G
#undef S
};

/* Everything the table reads, at once. Context: main loop. */
static unsigned
fibd_snap_take(struct fibd *d, struct fibd_snap *s)
{
	struct mallinfo2 mi = mallinfo2();
	unsigned have = 0;

	memset(s, 0, sizeof(*s));
	ingest_stats(d->ing, &s->ing);
	s->ready = d->ready;
	s->ingest_seconds = d->ready ? s->ing.ingest_seconds : 0.0;
	s->routes_v4 = fib_count(d->fib, AF_INET);
	s->routes_v6 = fib_count(d->fib, AF_INET6);
	s->rules_v4 = fibd_rules_count(d, AF_INET);
	s->rules_v6 = fibd_rules_count(d, AF_INET6);
	decisions_read(&d->decisions, &s->dec);
	if (d->cache) {
		flow_cache_stats(d->cache, &s->cache);
		s->gc_last = (double)s->cache.gc_ns_last * 1e-9;
		s->gc_max = (double)s->cache.gc_ns_max * 1e-9;
		have |= N_CACHE;
	}
	s->malloc_in_use = mi.uordblks + mi.hblkhd;
	s->malloc_free = mi.fordblks;
	s->comp.settles = d->comp.settles;
	s->comp.compactions = d->comp.compactions;
	s->comp.failures = d->comp.failures;
	s->comp.trims = d->comp.trims;
	s->comp.last = d->comp.last;
	s->comp.max = d->comp.max;
	s->comp.accel_builds = d->comp.accel_builds;
	s->comp.accel_failures = d->comp.accel_failures;
	s->comp.accel_last = d->comp.accel_last;
	s->running = d->comp.cw.running;
	s->pending = d->comp.cw.running || d->comp.q.pass || d->comp.q.built_pending;
	s->stall_last = d->health.stall_last;
	s->stall_max = d->health.stall_max;
	ctl_stats(d->ctl, &s->ctl);
	if (d->lookup) {
		lookup_stats(d->lookup, &s->lookup);
		have |= N_LOOKUP;
	}
	s->reloads = d->reloads;
	s->reload_failures = d->reload_failures;
	for (unsigned p = 0; p < LAG_PHASES; p++) {
		const struct lag_hist *h = &d->health.lag[p];

		s->lag[p][0] = lag_hist_quantile(h, 0.5) * 1e-6;
		s->lag[p][1] = lag_hist_quantile(h, 0.99) * 1e-6;
		s->lag[p][2] = h->max_us * 1e-6;
		s->lag_ticks[p] = h->count;
		s->busy[p][0] = lag_hist_quantile(&d->health.busy[p], 0.99) * 1e-6;
		s->busy[p][1] = d->health.busy[p].max_us * 1e-6;
	}
	if (d->ready) {
		fibd_fib_stats(d, &s->fib);
		/* the total is O(1): exact now, unless another thread writes */
		if (!d->comp.cw.running && !d->comp.stats_running)
			s->fib.bytes = fib_bytes(d->fib);
		s->gp_max = (double)s->fib.reclaim.gp_ns_max * 1e-9;
		have |= N_READY;
	}
	return have;
}

static void
fibd_metric_value(struct evbuffer *out, const struct fibd_snap *s, const struct fibd_metric *m)
{
	const void *p = (const char *)s + m->off;

	switch (m->kind) {
	case V_INT:
		evbuffer_add_printf(out, "%d\n", *(const int *)p);
		break;
	case V_UNS:
		evbuffer_add_printf(out, "%u\n", *(const unsigned *)p);
		break;
	case V_U64:
		evbuffer_add_printf(out, "%llu\n", (unsigned long long)*(const uint64_t *)p);
		break;
	case V_SIZE:
		evbuffer_add_printf(out, "%zu\n", *(const size_t *)p);
		break;
	case V_F6:
		evbuffer_add_printf(out, "%.6f\n", *(const double *)p);
		break;
	case V_F9:
		evbuffer_add_printf(out, "%.9f\n", *(const double *)p);
		break;
	}
}

void
fibd_metrics(struct fibd *d, struct evbuffer *out)
{
	struct fibd_snap s;
	unsigned have = fibd_snap_take(d, &s);

	for (size_t i = 0; i < sizeof(fibd_metric_table) / sizeof(fibd_metric_table[0]); i++) {
		const struct fibd_metric *m = &fibd_metric_table[i];

		if ((m->need & have) != m->need)
			continue;
		if (m->help)
			evbuffer_add_printf(out, "# HELP fibd_%s %s\n# TYPE fibd_%s %s\n", m->name,
					    m->help, m->name, m->type);
		if (m->labels)
			evbuffer_add_printf(out, "fibd_%s{%s} ", m->name, m->labels);
		else
			evbuffer_add_printf(out, "fibd_%s ", m->name);
		fibd_metric_value(out, &s, m);
	}
}

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

/*
 * evhttp_bind_listener makes the evhttp the listener's callback argument,
 * and libevent has no other way back from it: the one fibd of the
 * process whose metrics listener is open, for fibd_http_accept_error.
 */
static struct fibd_metrics *fibd_metrics_self;

/*
 * accept() on the metrics listener failed (EMFILE, ENFILE, ...): refuse
 * the waiting scrapers through the spare descriptor (listen.h: each is
 * told 503 and closed, as the control socket's clients are), else pause
 * the listener for a second instead of libevent's retry loop; health.c's
 * 1 s tick logs the episode and ends it after a quiet tick.
 */
static void
fibd_http_accept_error(struct evconnlistener *lis, void *arg)
{
	struct fibd_metrics *m = fibd_metrics_self;
	int err = EVUTIL_SOCKET_ERROR();

	(void)arg;
	if (!m || m->lis != lis) {
		evconnlistener_disable(lis);
		return;
	}
	m->errors++;
	m->err = err;
	if (!m->starved) {
		m->starved = 1;
		m->episodes++;
	}
	if ((err == EMFILE || err == ENFILE) &&
	    listen_spare_refuse(&m->spare, evconnlistener_get_fd(lis), 64,
				"HTTP/1.0 503 Service Unavailable\r\n"
				"Content-Length: 0\r\n\r\n",
				&m->refused))
		return;
	evconnlistener_disable(lis);
	event_add(m->resume, &(struct timeval){1, 0});
}

static void
fibd_http_resume(evutil_socket_t fd, short what, void *arg)
{
	struct fibd *d = arg;

	if (d->metrics.lis)
		evconnlistener_enable(d->metrics.lis);
}

void
fibd_metrics_unlisten(struct fibd *d)
{
	if (d->metrics.http)
		evhttp_free(d->metrics.http);
	d->metrics.http = NULL;
	d->metrics.lis = NULL;
	listen_spare_close(&d->metrics.spare);
	if (d->metrics.resume)
		evtimer_del(d->metrics.resume);
}

/* "127.0.0.1:9342" or "[::1]:9342" (conf/ checked it) -> evhttp on a
 * listener of fibd's own, or NULL. */
static struct evhttp *
fibd_http_new(struct fibd *d, const char *address)
{
	struct sockaddr_storage ss;
	int sslen = (int)sizeof(ss);
	struct evconnlistener *lis;
	struct evhttp *http;

	if (evutil_parse_sockaddr_port(address, (struct sockaddr *)&ss, &sslen) < 0) {
		log_warnx("metrics address %s: expected ADDRESS:PORT", address);
		return NULL;
	}
	http = evhttp_new(d->base);
	if (!http)
		return NULL;
	/* evhttp_bind_socket's options and backlog */
	lis = evconnlistener_new_bind(
	    d->base, NULL, NULL, LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_CLOSE_ON_FREE,
	    128, (struct sockaddr *)&ss, sslen);
	if (!lis && errno == EAFNOSUPPORT) {
		/* The unit's default RestrictAddressFamilies= refuses
		 * AF_INET and AF_INET6: metrics are an explicit step. */
		log_warnx("metrics: cannot listen on %s: address family refused; under "
			  "systemd, add the drop-in fibd-metrics.conf (fibd(8), METRICS)",
			  address);
		evhttp_free(http);
		return NULL;
	}
	if (!lis || !evhttp_bind_listener(http, lis)) {
		log_warn("metrics: cannot listen on %s", address);
		if (lis)
			evconnlistener_free(lis);
		evhttp_free(http);
		return NULL;
	}
	/* Without an error callback libevent retries a failed accept at once
	 * and logs each failure: tens of thousands a second without file
	 * descriptors. */
	d->metrics.lis = lis;
	if (d->metrics.spare.fd < 0 && listen_spare_open(&d->metrics.spare) < 0)
		log_warn("metrics: no spare descriptor"); /* then it pauses instead */
	fibd_metrics_self = &d->metrics;
	evconnlistener_set_error_cb(lis, fibd_http_accept_error);
	evhttp_set_cb(http, "/metrics", fibd_http_metrics, d);
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET);
	log_info("metrics: http://%s/metrics", address);
	return http;
}

/* Listen on address ("127.0.0.1:9342", "[::1]:9342"). Returns 0 or -1
 * (logged). On a reload a failure leaves fibd running without metrics;
 * at start fibd_metrics_open makes it fatal. Context: main loop. */
int
fibd_metrics_listen(struct fibd *d, const char *address)
{
	d->metrics.http = fibd_http_new(d, address);
	return d->metrics.http ? 0 : -1;
}

/* At start, metrics enabled but not served is fatal: the operator asked
 * for them and sees the failed start (a reload keeps the daemon and
 * only logs). Context: main loop, at start. */
void
fibd_metrics_open(struct fibd *d)
{
	d->metrics.spare.fd = -1;
	d->metrics.resume = evtimer_new(d->base, fibd_http_resume, d);
	if (!d->metrics.resume)
		fatalx("metrics timer");
	if (d->conf->metrics.enabled && fibd_metrics_listen(d, d->conf->metrics.address) < 0)
		fatalx("metrics: cannot serve %s", d->conf->metrics.address);
}

/* Context: main loop, after it ran. */
void
fibd_metrics_close(struct fibd *d)
{
	fibd_metrics_unlisten(d);
	event_free(d->metrics.resume);
}

/* The 1 s tick of health.c: a listener not paused (or paused before this
 * tick existed) listens again, and a whole tick without a new failure
 * ends an episode. Returns 1 with a listener (its figures to log), else
 * 0. Context: main loop. */
int
fibd_metrics_tick(struct fibd *d)
{
	struct fibd_metrics *m = &d->metrics;

	if (!m->lis)
		return 0;
	if (!evtimer_pending(m->resume, NULL)) {
		evconnlistener_enable(m->lis);
		if (m->errors == m->errors_tick) {
			m->starved = 0;
			listen_spare_refill(&m->spare);
		}
	}
	m->errors_tick = m->errors;
	return 1;
}
