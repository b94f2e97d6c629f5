/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: reclaimbench, the writer's side of libfib under load
 *
 * Loads a full table one route at a time, deletes it again, while reader
 * threads look up without pause, once per reclamation mode (call_rcu,
 * synchronous grace period) and sync_pages value; reports the time, the
 * writer's worst single operation (a stall the event loop would feel),
 * batches and grace periods. Then compares fib_load (off-line build, one
 * publish) with one insert at a time, and times fib_free of a full FIB.
 *
 *   reclaimbench [--routes FILE | --gen N] [--readers T] [--sync-pages P]
 *   reclaimbench --churn N [--routes FILE | --gen N] [--readers T]
 *
 * --churn N loads the table with fib_load, then deletes and re-adds N
 * routes drawn at random, with the compiled table off and then on (for
 * the table's family), and prints the percentiles of one operation's
 * time: what an update from BIRD or FRR costs the event loop on a full
 * table. CHURN_SLOW=SECONDS in the environment prints each del + add
 * slower than that, with its prefix length.
 *
 *   reclaimbench --vrf N [--defer] [--routes FILE | --gen N] [--readers T]
 *
 * --vrf N loads the table with fib_load into main, then adds N of its
 * routes to table 100 one at a time (a VRF learning a full table), which
 * gets a compiled table of its own when it reaches accel_min_routes
 * (default), and deletes them again; prints the percentiles of one
 * operation, and the add that crossed the threshold and built the VRF's
 * compiled table: the longest stall a VRF's table costs the event loop.
 * --defer sets params accel_defer, as fibd does: the adds build nothing,
 * and fib_accel_sync (fibd's compaction thread) is timed apart.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "fib/fib.h"
#include "tests/util/routes.h"
#include "tests/util/tablegen.h"

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct reader {
	pthread_t th;
	struct fib *fib;
	const struct routes *rt;
	int *stop;
	unsigned long n;
};

static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	uint64_t x = (uint64_t)(uintptr_t)r | 1;

	fib_thread_online();
	while (!__atomic_load_n(r->stop, __ATOMIC_RELAXED)) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		const struct fib_route *rr = &r->rt->r[x % r->rt->n];
		fib_read_lock();
		(void)fib_lookup_rcu(r->fib, rr->family, rr->dst.b, 254, 0);
		fib_read_unlock();
		r->n++;
	}
	fib_thread_offline();
	return NULL;
}

static void
run_mode(const struct routes *rt, unsigned mode, unsigned sync_pages, int nreaders)
{
	struct fib_params p;
	struct fib *fib;
	struct reader rd[8];
	int stop = 0;
	double t0, t_add, t_del, worst_add = 0, worst_del = 0, t_free;
	struct fib_stats st;
	unsigned long lookups = 0;

	fib_params_default(&p);
	p.reclaim_mode = mode;
	p.sync_pages = sync_pages;
	fib = fib_new(&p);
	for (int i = 0; i < nreaders; i++) {
		rd[i] = (struct reader){ .fib = fib, .rt = rt, .stop = &stop };
		pthread_create(&rd[i].th, NULL, reader_main, &rd[i]);
	}
	t0 = now();
	for (size_t i = 0; i < rt->n; i++) {
		double a = now(), d;
		fib_add(fib, &rt->r[i], 0);
		d = now() - a;
		if (d > worst_add)
			worst_add = d;
	}
	t_add = now() - t0;
	t0 = now();
	for (size_t i = 0; i < rt->n; i++) {
		double a = now(), d;
		fib_del(fib, &rt->r[i]);
		d = now() - a;
		if (d > worst_del)
			worst_del = d;
	}
	t_del = now() - t0;
	fib_reclaim_barrier(fib);
	fib_stats(fib, &st);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nreaders; i++) {
		pthread_join(rd[i].th, NULL);
		lookups += rd[i].n;
	}
	t0 = now();
	fib_free(fib);
	t_free = now() - t0;
	printf("%-8s sync_pages %-5u add %6.3f s (worst op %6.3f ms)  del %6.3f s (worst op %6.3f ms)  "
	       "batches %-5lu grace periods %-5lu gp min/avg/max %.3f/%.3f/%.3f ms  "
	       "retired %lu MB  reader lookups %lu  free %.3f ms\n",
	       mode == FIB_RECLAIM_SYNC ? "sync" : "call_rcu", sync_pages, t_add, worst_add * 1e3,
	       t_del, worst_del * 1e3, (unsigned long)st.reclaim.batches,
	       (unsigned long)st.reclaim.grace_periods, st.reclaim.gp_ns_min / 1e6,
	       st.reclaim.grace_periods ? st.reclaim.gp_ns_total / 1e6 / st.reclaim.grace_periods : 0,
	       st.reclaim.gp_ns_max / 1e6, (unsigned long)(st.reclaim.bytes_retired >> 20), lookups,
	       t_free * 1e3);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
run_churn(const struct routes *rt, size_t n, int nreaders)
{
	double *op = malloc(2 * n * sizeof(*op));
	const char *env = getenv("CHURN_SLOW");
	double slow = env ? atof(env) : 0;

	if (!op || !rt->n) {
		fprintf(stderr, "reclaimbench: out of memory or no routes\n");
		free(op);
		return;
	}
	for (int on = 0; on < 2; on++) {
		struct fib_params p;
		struct fib *fib;
		struct reader rd[8];
		int stop = 0;
		uint64_t x = 88172645463325252ull;
		double t0 = now(), tot;

		fib_params_default(&p);
		p.accel_table = on ? 254 : 0;
		p.accel_table6 = on ? 254 : 0;
		if (!on)
			p.accel_min_routes = 0; /* else main gets one by its size */
		fib = fib_new(&p);
		if (!fib || fib_load(fib, rt->r, rt->n)) {
			fprintf(stderr, "reclaimbench: fib_load failed\n");
			break;
		}
		for (int i = 0; i < nreaders; i++) {
			rd[i] = (struct reader){ .fib = fib, .rt = rt, .stop = &stop };
			pthread_create(&rd[i].th, NULL, reader_main, &rd[i]);
		}
		t0 = now();
		for (size_t i = 0; i < n; i++) {
			const struct fib_route *r;
			double a;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			r = &rt->r[x % rt->n];
			a = now();
			fib_del(fib, r);
			op[2 * i] = now() - a;
			a = now();
			fib_add(fib, r, 0);
			op[2 * i + 1] = now() - a;
			if (slow > 0 && op[2 * i] + op[2 * i + 1] > slow)
				fprintf(stderr, "slow: /%u del %.3f ms add %.3f ms (compiled table %s)\n",
					r->plen, op[2 * i] * 1e3, op[2 * i + 1] * 1e3, on ? "on" : "off");
		}
		tot = now() - t0;
		{
			struct fib_stats st;
			fib_stats(fib, &st);
			printf("  retired %lu MB in %lu batches, %lu grace periods waited (max %.3f ms), "
			       "compiled table %.1f MB\n",
			       (unsigned long)(st.reclaim.bytes_retired >> 20),
			       (unsigned long)st.reclaim.batches, (unsigned long)st.reclaim.grace_periods,
			       st.reclaim.gp_ns_max / 1e6,
			       (double)(st.v4.accel_bytes + st.v6.accel_bytes) / 1e6);
		}
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < nreaders; i++)
			pthread_join(rd[i].th, NULL);
		qsort(op, 2 * n, sizeof(*op), cmp_double);
		printf("churn, compiled table %-3s %zu del+add in %.3f s: one op p50 %.1f us, p99 %.1f us, "
		       "p99.9 %.1f us, max %.3f ms\n",
		       on ? "on" : "off", n, tot, op[n] * 1e6, op[(size_t)(2 * n * 0.99)] * 1e6,
		       op[(size_t)(2 * n * 0.999)] * 1e6, op[2 * n - 1] * 1e3);
		fib_free(fib);
	}
	free(op);
}

static void
run_vrf(const struct routes *rt, size_t n, int nreaders, int defer)
{
	double *op = malloc(2 * n * sizeof(*op)), cross = 0, t0, tot, sync = 0;
	size_t slow = 0;
	struct fib_params p;
	struct fib *fib;
	struct reader rd[8];
	struct fib_stats st;
	int stop = 0;
	unsigned peak = 0;

	fib_params_default(&p);
	p.accel_defer = (uint8_t)defer;
	fib = fib_new(&p);
	if (!op || !fib || fib_load(fib, rt->r, rt->n)) {
		fprintf(stderr, "reclaimbench: out of memory or fib_load failed\n");
		free(op);
		return;
	}
	if (n > rt->n)
		n = rt->n;
	for (int i = 0; i < nreaders; i++) {
		rd[i] = (struct reader){ .fib = fib, .rt = rt, .stop = &stop };
		pthread_create(&rd[i].th, NULL, reader_main, &rd[i]);
	}
	t0 = now();
	for (size_t i = 0; i < 2 * n; i++) {
		struct fib_route r = rt->r[i < n ? i : 2 * n - 1 - i];
		double a;

		r.table = 100;
		a = now();
		if (i < n)
			fib_add(fib, &r, 0);
		else
			fib_del(fib, &r);
		op[i] = now() - a;
		if (op[i] > op[slow])
			slow = i;
		if (i + 1 == p.accel_min_routes)
			cross = op[i];
		if (defer && fib_accel_pending(fib)) {
			a = now();
			fib_accel_sync(fib);
			sync += now() - a;
		}
		if (i + 1 == n) {
			fib_stats(fib, &st);
			peak = st.v4.accel_tables + st.v6.accel_tables;
		}
	}
	tot = now() - t0;
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nreaders; i++)
		pthread_join(rd[i].th, NULL);
	fib_stats(fib, &st);
	printf("vrf: the slowest op: the %s that left table 100 with %zu routes\n",
	       slow < n ? "add" : "delete", slow < n ? slow + 1 : 2 * n - 1 - slow);
	qsort(op, 2 * n, sizeof(*op), cmp_double);
	printf("vrf: %zu adds and deletes in table 100 in %.3f s: one op p50 %.1f us, p99 %.1f us, "
	       "max %.3f ms; the add that reached accel_min_routes %u (its compiled table built) "
	       "%.3f ms; compiled tables at the peak %u, at the end %u\n",
	       n, tot, op[n] * 1e6, op[(size_t)(2 * n * 0.99)] * 1e6, op[2 * n - 1] * 1e3,
	       p.accel_min_routes, cross * 1e3, peak, st.v4.accel_tables + st.v6.accel_tables);
	if (defer)
		printf("vrf: deferred: fib_accel_sync (fibd's compaction thread) %.3f ms\n",
		       sync * 1e3);
	fib_free(fib);
	free(op);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "routes", required_argument, NULL, 'r' },
		{ "gen", required_argument, NULL, 'g' },
		{ "readers", required_argument, NULL, 't' },
		{ "sync-pages", required_argument, NULL, 's' },
		{ "churn", required_argument, NULL, 'c' },
		{ "vrf", required_argument, NULL, 'v' },
		{ "defer", no_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	const char *file = NULL;
	size_t gen = 0, churn = 0, vrf = 0;
	int nreaders = 1, c, defer = 0;
	unsigned sp = 0;
	struct routes rt;
	char err[256];
	struct fib *fib;
	double t0, t_load, t_one, t_free;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			file = optarg;
			break;
		case 'g':
			gen = strtoul(optarg, NULL, 10);
			break;
		case 't':
			nreaders = atoi(optarg);
			break;
		case 's':
			sp = (unsigned)atoi(optarg);
			break;
		case 'c':
			churn = strtoul(optarg, NULL, 10);
			break;
		case 'v':
			vrf = strtoul(optarg, NULL, 10);
			break;
		case 'd':
			defer = 1;
			break;
		default:
			fprintf(stderr, "usage: reclaimbench [--routes FILE | --gen N] [--readers T] "
					"[--sync-pages P] [--churn N | --vrf N [--defer]]\n");
			return 2;
		}
	}
	if (nreaders < 0 || nreaders > 8)
		nreaders = 1;
	routes_init(&rt);
	if (file) {
		if (routes_read(&rt, file, err, sizeof(err))) {
			fprintf(stderr, "reclaimbench: %s\n", err);
			return 1;
		}
	} else {
		struct tablegen_params tp;
		tablegen_params_default(&tp, AF_INET);
		tp.n = gen ? gen : 1000000;
		if (tablegen_make(&tp, &rt)) {
			fprintf(stderr, "reclaimbench: generator failed\n");
			return 1;
		}
	}
	printf("routes %zu, %d reader thread(s)\n", rt.n, nreaders);
	fib_thread_online();
	if (vrf) {
		run_vrf(&rt, vrf, nreaders, defer);
		routes_free(&rt);
		fib_thread_offline();
		return 0;
	}
	if (churn) {
		run_churn(&rt, churn, nreaders);
		routes_free(&rt);
		fib_thread_offline();
		return 0;
	}
	/* one insert at a time against the off-line build */
	fib = fib_new(NULL);
	t0 = now();
	for (size_t i = 0; i < rt.n; i++)
		fib_add(fib, &rt.r[i], 0);
	t_one = now() - t0;
	fib_free(fib);
	fib = fib_new(NULL);
	t0 = now();
	if (fib_load(fib, rt.r, rt.n))
		fprintf(stderr, "reclaimbench: fib_load failed\n");
	t_load = now() - t0;
	t0 = now();
	fib_free(fib);
	t_free = now() - t0;
	printf("build: fib_add one by one %.3f s, fib_load %.3f s (%.1fx); fib_free of the full FIB %.3f ms\n",
	       t_one, t_load, t_one / t_load, t_free * 1e3);
	if (sp) {
		run_mode(&rt, FIB_RECLAIM_CALL_RCU, sp, nreaders);
		run_mode(&rt, FIB_RECLAIM_SYNC, sp, nreaders);
	} else {
		static const unsigned pages[] = { 1, 128 };
		for (unsigned i = 0; i < 2; i++) {
			run_mode(&rt, FIB_RECLAIM_CALL_RCU, pages[i], nreaders);
			run_mode(&rt, FIB_RECLAIM_SYNC, pages[i], nreaders);
		}
	}
	routes_free(&rt);
	fib_thread_offline();
	return 0;
}
