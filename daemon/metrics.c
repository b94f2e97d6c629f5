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

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>
#include <systemd/sd-daemon.h>

#include "fib/fib.h"
#include "fib/rcu.h"
#include "cache/flow.h"
#include "conf/conf.h"
#include "daemon/ctl.h"
#include "daemon/fibd.h"
#include "daemon/ingest.h"
#include "daemon/log.h"
#include "daemon/lookup.h"

static void
fibd_metric(struct evbuffer *out, const char *name, const char *type, const char *help)
{
	evbuffer_add_printf(out, "# HELP fibd_%s %s\n# TYPE fibd_%s %s\n", name, help, name, type);
}

void
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
	evbuffer_add_printf(out, "fibd_netlink_resyncs_total %llu\n",
			    (unsigned long long)st.resyncs);
	if (d->cache) {
		struct flow_stats cs;

		flow_cache_stats(d->cache, &cs);
#define C(name, type, help, v)                                                                     \
	do {                                                                                       \
		fibd_metric(out, "cache_" name, type, help);                                       \
		evbuffer_add_printf(out, "fibd_cache_" name " %llu\n", (unsigned long long)(v));   \
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
		fibd_metric(
		    out, "malloc_free_bytes", "gauge",
		    "malloc: free bytes held in the arenas (malloc_trim gives pages back).");
		evbuffer_add_printf(out, "fibd_malloc_free_bytes %zu\n", mi.fordblks);
	}
	fibd_metric(out, "settles_total", "counter",
		    "Quiet periods after churn checked for compaction (and malloc trimmed).");
	evbuffer_add_printf(out, "fibd_settles_total %llu\n", (unsigned long long)d->comp.settles);
	fibd_metric(out, "compaction_pending", "gauge",
		    "1 while a compaction runs, or its second pass or reference is due.");
	evbuffer_add_printf(out, "fibd_compaction_pending %d\n",
			    d->comp.cw.running || d->comp.pass || d->comp.built_pending);
	fibd_metric(out, "compaction_running", "gauge",
		    "1 while the compaction thread rebuilds the FIB (netlink changes wait).");
	evbuffer_add_printf(out, "fibd_compaction_running %d\n", d->comp.cw.running);
	fibd_metric(out, "compactions_total", "counter", "FIB rebuilds by fib_compact (passes).");
	evbuffer_add_printf(out, "fibd_compactions_total %llu\n",
			    (unsigned long long)d->comp.compactions);
	fibd_metric(out, "compaction_failures_total", "counter",
		    "fib_compact errors (FIB unchanged).");
	evbuffer_add_printf(out, "fibd_compaction_failures_total %llu\n",
			    (unsigned long long)d->comp.failures);
	fibd_metric(out, "compaction_seconds_last", "gauge",
		    "The compaction thread's time for the last pass.");
	evbuffer_add_printf(out, "fibd_compaction_seconds_last %.6f\n", d->comp.last);
	fibd_metric(out, "compaction_seconds_max", "gauge", "Longest compaction pass.");
	evbuffer_add_printf(out, "fibd_compaction_seconds_max %.6f\n", d->comp.max);
	fibd_metric(out, "compaction_loop_stall_seconds_last", "gauge",
		    "Longest event-loop stall during the last compaction (1 ms probe).");
	evbuffer_add_printf(out, "fibd_compaction_loop_stall_seconds_last %.6f\n",
			    d->health.stall_last);
	fibd_metric(out, "compaction_loop_stall_seconds_max", "gauge",
		    "Longest event-loop stall during any compaction.");
	evbuffer_add_printf(out, "fibd_compaction_loop_stall_seconds_max %.6f\n",
			    d->health.stall_max);
	fibd_metric(out, "malloc_trims_total", "counter", "malloc_trim calls.");
	evbuffer_add_printf(out, "fibd_malloc_trims_total %llu\n",
			    (unsigned long long)d->comp.trims);
	{
		struct ctl_stats cs;

		ctl_stats(d->ctl, &cs);
		fibd_metric(out, "control_clients", "gauge", "Connected control clients.");
		evbuffer_add_printf(out, "fibd_control_clients %u\n", cs.clients);
		fibd_metric(
		    out, "control_refused_total", "counter",
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
			evbuffer_add_printf(out,
					    "fibd_accept_errors_total{socket=\"lookup\"} %llu\n",
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
 * accept() on the metrics listener failed (EMFILE, ENFILE, ...): pause it
 * for a second (a scraper waits in the backlog) instead of libevent's
 * retry loop; health.c's 1 s tick logs the episode and ends it after a
 * quiet tick.
 */
static void
fibd_http_accept_error(struct evconnlistener *lis, void *arg)
{
	struct fibd_metrics *m = fibd_metrics_self;

	(void)arg;
	evconnlistener_disable(lis);
	if (!m || m->lis != lis)
		return;
	m->errors++;
	m->err = EVUTIL_SOCKET_ERROR();
	if (!m->starved) {
		m->starved = 1;
		m->episodes++;
	}
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
	fibd_metrics_self = &d->metrics;
	evconnlistener_set_error_cb(lis, fibd_http_accept_error);
	evhttp_set_cb(http, "/metrics", fibd_http_metrics, d);
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET);
	log_info("metrics: http://%s/metrics", address);
	return http;
}

/* Listen on address ("127.0.0.1:9342", "[::1]:9342"). Returns 0 or -1
 * (logged). Context: main loop. */
int
fibd_metrics_listen(struct fibd *d, const char *address)
{
	d->metrics.http = fibd_http_new(d, address);
	return d->metrics.http ? 0 : -1;
}

/* Context: main loop, at start. */
void
fibd_metrics_open(struct fibd *d)
{
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
