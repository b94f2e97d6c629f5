/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fibbench, libfib build and lookup benchmark (DESIGN.md contract)
 *
 *   fibbench --routes FILE [--trace FILE | --uniform N | --routed N]
 *            [--seed S] [--batch K] [--threads T] [--runs R] [--json]
 *            [--single-and-batch] [--dpdk] [--verify] [--save-trace FILE]
 *   fibbench --gen N [--gen6] ...     (a fibgen table made in memory)
 *   fibbench [--gen6] ...             (../shared/data tier-1 table, or a
 *                                      generated full table without it)
 *
 * Loads the routes file into a new FIB with fib_load (timed: build_s),
 * then times lookups of the trace in table 254, best of R runs (3):
 * --batch K > 1 calls fib_lookup{4,6}_batch_rcu K addresses at a time,
 * K = 1 (the default) the single-address calls. Each thread holds the read
 * lock over 64 addresses (or one batch) at a time, as a datapath would.
 * All results are kept; after the timed runs the checksum (sum of the
 * 1-based line numbers of the matched routes, 0 for no match) is computed
 * by mapping each matched prefix back to its line through a hash of the
 * routes file, so any two correct LPM implementations agree on it. With
 * --threads T the trace is split into T slices looked up in parallel and
 * the rate is lookups over the wall time of the slowest.
 *
 * `bytes` is fib_stats().bytes; rss_delta, the growth of the resident set
 * over fib_new + fib_load (after reclamation), is an outside check of it.
 * --save-trace FILE writes the trace used (for ../shared/bench/peer_lpm).
 *
 * --verify recomputes the checksum with a naive longest-prefix match
 * (one hash probe per prefix length) and fails when they differ.
 *
 * --dpdk (when built with libdpdk) then builds DPDK rte_fib from the same
 * routes and times its bulk-64 lookups on the same trace (see peer.c),
 * reporting both sets of figures and their ratios. --cache, --zipf and
 * --all-miss belong to the flow cache and are not supported yet (exit 2).
 *
 * Exit status: 0, 1 on errors, 2 on usage, 3 when the checksums of libfib
 * and rte_fib (or of single and batch) disagree.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "fib/fib.h"
#include "tests/util/routes.h"
#include "tests/util/tablegen.h"
#include "tests/util/trace.h"
#ifdef HAVE_DPDK
#include "tests/bench/peer.h"
#endif

#define BENCH_CHUNK 64

struct bench_opts {
	const char *routes, *trace, *save_trace;
	size_t uniform, routed, gen;
	int gen6;
	uint64_t seed;
	size_t batch;
	int threads, runs, json, both, dpdk, verify;
};

struct bench_run {
	double best_s;
	uint64_t checksum;
	size_t matched, unmapped;
};

struct bench_thread {
	pthread_t tid;
	const struct fib *fib;
	const struct trace *t;
	struct fib_result *res;
	size_t lo, hi, batch;
	pthread_barrier_t *start;
	double t0, t1;
};

static double
bench_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Resident set size, an outside view of what fib_load kept. */
static long long
bench_rss(void)
{
	long long pages = -1, rss = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lld %lld", &pages, &rss) != 2)
			rss = -1;
		fclose(f);
	}
	return rss < 0 ? -1 : rss * 4096;
}

static void
bench_usage(void)
{
	fprintf(stderr,
		"usage: fibbench --routes FILE [--trace FILE | --uniform N | --routed N]\n"
		"                [--seed S] [--batch K] [--threads T] [--runs R] [--json]\n"
		"                [--single-and-batch] [--dpdk] [--verify] [--save-trace FILE]\n"
		"       fibbench --gen N [--gen6] ...\n"
		"       fibbench [--gen6] ...   (shared tier-1 table, else a generated one)\n");
	exit(2);
}

/* Look up t[lo, hi) into res[lo, hi). Context: reader thread, online. */
static void
bench_lookup(const struct fib *fib, const struct trace *t, struct fib_result *res, size_t lo,
	     size_t hi, size_t batch)
{
	size_t step = batch > 1 ? batch : BENCH_CHUNK;

	for (size_t i = lo; i < hi; i += step) {
		size_t k = hi - i < step ? hi - i : step;

		fib_read_lock();
		if (batch > 1) {
			if (t->a4)
				fib_lookup4_batch_rcu(fib, ROUTES_TABLE, &t->a4[i], &res[i], k);
			else
				fib_lookup6_batch_rcu(fib, ROUTES_TABLE,
						      (const uint8_t(*)[16])&t->a6[i], &res[i], k);
		} else if (t->a4) {
			for (size_t j = i; j < i + k; j++)
				res[j] = fib_lookup4_rcu(fib, ROUTES_TABLE, t->a4[j]);
		} else {
			for (size_t j = i; j < i + k; j++)
				res[j] = fib_lookup_rcu(fib, AF_INET6, t->a6[j], ROUTES_TABLE, 0);
		}
		fib_read_unlock();
	}
}

static void *
bench_thread_main(void *arg)
{
	struct bench_thread *th = arg;

	fib_thread_online();
	pthread_barrier_wait(th->start);
	th->t0 = bench_now();
	bench_lookup(th->fib, th->t, th->res, th->lo, th->hi, th->batch);
	th->t1 = bench_now();
	fib_thread_offline();
	return NULL;
}

/* One timed pass over the trace; returns the wall time. */
static double
bench_pass(const struct fib *fib, const struct trace *t, struct fib_result *res, size_t batch,
	   int threads)
{
	struct bench_thread th[threads];
	pthread_barrier_t start;
	double t0 = 1e30, t1 = 0;

	if (threads == 1) {
		t0 = bench_now();
		bench_lookup(fib, t, res, 0, t->n, batch);
		return bench_now() - t0;
	}
	pthread_barrier_init(&start, NULL, threads);
	for (int i = 0; i < threads; i++) {
		th[i].fib = fib;
		th[i].t = t;
		th[i].res = res;
		th[i].lo = t->n * i / threads;
		th[i].hi = t->n * (i + 1) / threads;
		th[i].batch = batch;
		th[i].start = &start;
		if (pthread_create(&th[i].tid, NULL, bench_thread_main, &th[i])) {
			fprintf(stderr, "fibbench: pthread_create failed\n");
			exit(1);
		}
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i].tid, NULL);
		if (th[i].t0 < t0)
			t0 = th[i].t0;
		if (th[i].t1 > t1)
			t1 = th[i].t1;
	}
	pthread_barrier_destroy(&start);
	return t1 - t0;
}

/* Checksum of the results: line numbers of the matched routes. */
static void
bench_checksum(const struct routes_index *ix, const struct routes *rt,
	       const struct fib_result *res, size_t n, struct bench_run *run)
{
	const struct fib_alias *last = NULL;
	uint32_t last_line = 0;

	run->checksum = 0;
	run->matched = 0;
	run->unmapped = 0;
	fib_read_lock();
	for (size_t i = 0; i < n; i++) {
		struct fib_match m;
		long k;

		if (!res[i].alias)
			continue;
		run->matched++;
		/* neighbouring lookups often hit the same route */
		if (res[i].alias == last) {
			run->checksum += last_line;
			continue;
		}
		if (fib_result_get(&res[i], &m) < 0) {
			run->unmapped++;
			continue;
		}
		k = routes_index_find(ix, &m.prefix, m.plen);
		if (k < 0) {
			run->unmapped++;
			continue;
		}
		last = res[i].alias;
		last_line = rt->line[k];
		run->checksum += last_line;
	}
	fib_read_unlock();
}

/*
 * The reference checksum: a naive longest-prefix match that probes the
 * routes hash once per prefix length present, longest first. Slow (tens
 * of probes a lookup): for small traces and tests.
 */
static uint64_t
bench_verify(const struct routes_index *ix, const struct routes *rt, const struct trace *t)
{
	unsigned alen = rt->family == AF_INET ? 4 : 16, nl = 0;
	uint8_t present[129] = { 0 }, lens[129];
	uint64_t sum = 0;

	for (size_t i = 0; i < rt->n; i++)
		present[rt->r[i].plen] = 1;
	for (int l = (int)alen * 8; l >= 0; l--)
		if (present[l])
			lens[nl++] = (uint8_t)l;
	for (size_t i = 0; i < t->n; i++) {
		union fib_addr a;

		memset(&a, 0, sizeof(a));
		if (t->a4) {
			uint32_t be = htonl(t->a4[i]);

			memcpy(a.b, &be, 4);
		} else {
			memcpy(a.b, t->a6[i], 16);
		}
		for (unsigned j = 0; j < nl; j++) {
			unsigned l = lens[j];
			union fib_addr m = a;
			long k;

			for (unsigned b = 0; b < alen; b++) {
				int keep = (int)l - 8 * (int)b;

				if (keep <= 0)
					m.b[b] = 0;
				else if (keep < 8)
					m.b[b] &= (uint8_t)(0xff << (8 - keep));
			}
			k = routes_index_find(ix, &m, l);
			if (k >= 0) {
				sum += rt->line[k];
				break;
			}
		}
	}
	return sum;
}

static int
bench_time(const struct fib *fib, const struct routes_index *ix, const struct routes *rt,
	   const struct trace *t, size_t batch, const struct bench_opts *o, struct bench_run *run)
{
	struct fib_result *res = malloc((t->n ? t->n : 1) * sizeof(*res));

	if (!res)
		return -ENOMEM;
	/* touch the result array once so page faults stay out of the runs */
	memset(res, 0, (t->n ? t->n : 1) * sizeof(*res));
	run->best_s = 1e30;
	for (int r = 0; r < o->runs; r++) {
		double d = bench_pass(fib, t, res, batch, o->threads);

		if (d < run->best_s)
			run->best_s = d;
	}
	bench_checksum(ix, rt, res, t->n, run);
	free(res);
	return 0;
}

static void
bench_parse(int argc, char **argv, struct bench_opts *o)
{
	enum { O_ROUTES = 256, O_TRACE, O_UNIFORM, O_ROUTED, O_SEED, O_BATCH, O_THREADS, O_RUNS,
	       O_JSON, O_BOTH, O_DPDK, O_GEN, O_GEN6, O_CACHE, O_ZIPF, O_ALLMISS, O_VERIFY,
	       O_SAVE };
	static const struct option lo[] = {
		{ "routes", required_argument, NULL, O_ROUTES },
		{ "trace", required_argument, NULL, O_TRACE },
		{ "uniform", required_argument, NULL, O_UNIFORM },
		{ "routed", required_argument, NULL, O_ROUTED },
		{ "seed", required_argument, NULL, O_SEED },
		{ "batch", required_argument, NULL, O_BATCH },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "runs", required_argument, NULL, O_RUNS },
		{ "json", no_argument, NULL, O_JSON },
		{ "single-and-batch", no_argument, NULL, O_BOTH },
		{ "dpdk", no_argument, NULL, O_DPDK },
		{ "gen", required_argument, NULL, O_GEN },
		{ "gen6", no_argument, NULL, O_GEN6 },
		{ "cache", no_argument, NULL, O_CACHE },
		{ "zipf", required_argument, NULL, O_ZIPF },
		{ "all-miss", no_argument, NULL, O_ALLMISS },
		{ "verify", no_argument, NULL, O_VERIFY },
		{ "save-trace", required_argument, NULL, O_SAVE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, traces = 0;

	memset(o, 0, sizeof(*o));
	o->seed = 11;
	o->batch = 1;
	o->threads = 1;
	o->runs = 3;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		char *end = NULL;
		unsigned long long v = 0;

		if (optarg && c != O_ROUTES && c != O_TRACE && c != O_SAVE) {
			errno = 0;
			v = strtoull(optarg, &end, 0);
			if (errno || *end || end == optarg)
				bench_usage();
		}
		switch (c) {
		case O_ROUTES:
			o->routes = optarg;
			break;
		case O_TRACE:
			o->trace = optarg;
			traces++;
			break;
		case O_UNIFORM:
			o->uniform = v;
			traces++;
			break;
		case O_ROUTED:
			o->routed = v;
			traces++;
			break;
		case O_SEED:
			o->seed = v;
			break;
		case O_BATCH:
			if (v < 1 || v > 1 << 20)
				bench_usage();
			o->batch = v;
			break;
		case O_THREADS:
			if (v < 1 || v > 256)
				bench_usage();
			o->threads = (int)v;
			break;
		case O_RUNS:
			if (v < 1 || v > 1000)
				bench_usage();
			o->runs = (int)v;
			break;
		case O_JSON:
			o->json = 1;
			break;
		case O_BOTH:
			o->both = 1;
			break;
		case O_DPDK:
#ifndef HAVE_DPDK
			fprintf(stderr, "fibbench: built without DPDK (configure --with-dpdk)\n");
			exit(2);
#endif
			o->dpdk = 1;
			break;
		case O_GEN:
			o->gen = v;
			break;
		case O_GEN6:
			o->gen6 = 1;
			break;
		case O_VERIFY:
			o->verify = 1;
			break;
		case O_SAVE:
			o->save_trace = optarg;
			break;
		case O_CACHE:
		case O_ZIPF:
		case O_ALLMISS:
			fprintf(stderr, "fibbench: --cache, --zipf and --all-miss: not yet supported\n");
			exit(2);
		default:
			bench_usage();
		}
	}
	if (optind != argc || traces > 1 || (o->routes && (o->gen || o->gen6)))
		bench_usage();
	if (!traces)
		o->routed = 4000000;
}

static void
bench_print_run(const struct bench_opts *o, const char *name, size_t batch, size_t n,
		const struct bench_run *run, int last)
{
	double mlps = n / run->best_s / 1e6, ns = run->best_s / (n ? n : 1) * 1e9;

	if (o->json)
		printf("    {\"name\": \"%s\", \"batch\": %zu, \"mlps\": %.2f, \"ns_per_lookup\": %.2f, "
		       "\"checksum\": %" PRIu64 ", \"matched\": %zu}%s\n",
		       name, batch, mlps, ns, run->checksum, run->matched, last ? "" : ",");
	else
		printf("%-22s batch %-5zu %8.2f Mlookups/s %7.2f ns  checksum %" PRIu64
		       "  matched %zu\n",
		       name, batch, mlps, ns, run->checksum, run->matched);
}

int
main(int argc, char **argv)
{
	struct bench_run runs[2];
	size_t batches[2];
	int nruns = 0, ret = 0;
	struct routes_index ix;
	struct bench_opts o;
	struct fib_stats st;
	const struct fib_trie_stats *ts;
	struct routes rt;
	struct trace t;
	struct fib *fib;
	char err[512], shared[4096];
	double t0, build_s, read_s;
	size_t fib_routes;
	long long rss0, rss_delta;

	bench_parse(argc, argv, &o);
	routes_init(&rt);
	if (!o.routes && !o.gen) {
		/* the real tier-1 table when ../shared/data has it, else a generated one */
		o.routes = routes_shared_file(o.gen6 ? "gaissmai-tier1-v6.txt.gz"
						     : "gaissmai-tier1-v4.txt.gz",
					      shared, sizeof(shared));
		if (!o.routes)
			o.gen = o.gen6 ? 200000 : 1000000;
	}
	t0 = bench_now();
	if (o.gen) {
		struct tablegen_params p;

		tablegen_params_default(&p, o.gen6 ? AF_INET6 : AF_INET);
		p.n = o.gen;
		p.seed = o.seed;
		if ((ret = tablegen_make(&p, &rt)) < 0) {
			fprintf(stderr, "fibbench: generator: %s\n", strerror(-ret));
			return 1;
		}
	} else if (routes_read(&rt, o.routes, err, sizeof(err)) < 0) {
		fprintf(stderr, "fibbench: %s\n", err);
		return 1;
	}
	read_s = bench_now() - t0;
	if (!o.json)
		printf("table: %s\n", o.gen ? "generated (tests/util/tablegen.c)" : o.routes);
	if (!rt.n) {
		fprintf(stderr, "fibbench: no routes\n");
		return 1;
	}
	if (o.trace)
		ret = trace_read(&t, rt.family, o.trace);
	else if (o.uniform)
		ret = trace_uniform(&t, rt.family, o.uniform, o.seed);
	else
		ret = trace_routed(&t, &rt, o.routed, o.seed);
	if (ret < 0) {
		fprintf(stderr, "fibbench: trace: %s\n", strerror(-ret));
		return 1;
	}
	if (o.save_trace && (ret = trace_write(&t, o.save_trace)) < 0) {
		fprintf(stderr, "fibbench: %s: %s\n", o.save_trace, strerror(-ret));
		return 1;
	}
	if (routes_index_build(&ix, &rt) < 0) {
		fprintf(stderr, "fibbench: out of memory\n");
		return 1;
	}

	fib_thread_online();
	rss0 = bench_rss();
	t0 = bench_now();
	fib = fib_new(NULL);
	if (!fib) {
		fprintf(stderr, "fibbench: fib_new: %s\n", strerror(errno));
		return 1;
	}
	ret = fib_load(fib, rt.r, rt.n);
	build_s = bench_now() - t0;
	if (ret < 0) {
		fprintf(stderr, "fibbench: fib_load: %s\n", strerror(-ret));
		return 1;
	}
	fib_reclaim_flush(fib);
	fib_reclaim_barrier(fib);
	rss_delta = bench_rss() - rss0;
	fib_routes = fib_count(fib, rt.family);
	fib_stats(fib, &st);
	ts = rt.family == AF_INET ? &st.v4 : &st.v6;

	if (o.both || o.batch == 1)
		batches[nruns++] = 1;
	if (o.batch > 1)
		batches[nruns++] = o.batch;
	else if (o.both)
		batches[nruns++] = BENCH_CHUNK;
	for (int i = 0; i < nruns; i++) {
		if (bench_time(fib, &ix, &rt, &t, batches[i], &o, &runs[i]) < 0) {
			fprintf(stderr, "fibbench: out of memory\n");
			return 1;
		}
		if (runs[i].unmapped) {
			fprintf(stderr, "fibbench: %zu results name no route of the file\n",
				runs[i].unmapped);
			ret = 3;
		}
	}
	if (nruns == 2 && runs[0].checksum != runs[1].checksum) {
		fprintf(stderr, "fibbench: single and batch lookups disagree\n");
		ret = 3;
	}
	uint64_t ref = o.verify ? bench_verify(&ix, &rt, &t) : 0;

	if (o.verify && ref != runs[nruns - 1].checksum) {
		fprintf(stderr, "fibbench: checksum %" PRIu64 " differs from the naive LPM's %" PRIu64 "\n",
			runs[nruns - 1].checksum, ref);
		ret = 3;
	}
	/* the headline figures are those of the last (batch) mode */
	const struct bench_run *main_run = &runs[nruns - 1];
	double mlps = t.n / main_run->best_s / 1e6;

	if (o.json) {
		printf("{\n  \"routes\": %zu,\n  \"fib_routes\": %zu,\n  \"family\": \"%s\",\n"
		       "  \"read_s\": %.3f,\n  \"build_s\": %.3f,\n  \"lookups\": %zu,\n"
		       "  \"batch\": %zu,\n  \"threads\": %d,\n  \"runs\": %d,\n"
		       "  \"mlps\": %.2f,\n  \"ns_per_lookup\": %.2f,\n  \"checksum\": %" PRIu64 ",\n"
		       "  \"matched\": %zu,\n  \"bytes\": %" PRIu64 ",\n  \"bytes_per_route\": %.1f,\n"
		       "  \"trie_bytes\": %" PRIu64 ",\n  \"info_bytes\": %" PRIu64 ",\n"
		       "  \"depth_avg\": %.2f,\n  \"depth_max\": %u,\n  \"leaves\": %" PRIu64 ",\n"
		       "  \"nodes\": %" PRIu64 ",\n  \"rss_delta\": %lld,\n",
		       rt.n, fib_routes, rt.family == AF_INET ? "ipv4" : "ipv6", read_s, build_s, t.n,
		       batches[nruns - 1], o.threads, o.runs, mlps, main_run->best_s / t.n * 1e9,
		       main_run->checksum, main_run->matched, st.bytes,
		       (double)st.bytes / (double)rt.n, ts->bytes, st.info_bytes,
		       ts->leaves ? (double)ts->depth_total / (double)ts->leaves : 0.0, ts->depth_max,
		       ts->leaves, ts->nodes, rss_delta);
		/* trie shape, as /proc/net/fib_triestat */
		printf("  \"pointers\": %" PRIu64 ",\n  \"null_pointers\": %" PRIu64
		       ",\n  \"nodes_by_bits\": {",
		       ts->pointers, ts->null_pointers);
		for (unsigned b = 0, first = 1; b <= FIB_STATS_MAX_BITS; b++)
			if (ts->nodes_by_bits[b]) {
				printf("%s\"%u\": %" PRIu64, first ? "" : ", ", b, ts->nodes_by_bits[b]);
				first = 0;
			}
		printf("},\n  \"modes\": [\n");
	} else {
		printf("routes %zu (%s, in FIB %zu), read %.3f s, build %.3f s, %" PRIu64
		       " bytes = %.1f bytes/route (RSS grew %.1f), depth avg %.2f max %u\n"
		       "lookups %zu, threads %d, best of %d\n",
		       rt.n, rt.family == AF_INET ? "IPv4" : "IPv6", fib_routes, read_s, build_s,
		       st.bytes, (double)st.bytes / (double)rt.n, (double)rss_delta / (double)rt.n,
		       ts->leaves ? (double)ts->depth_total / (double)ts->leaves : 0.0, ts->depth_max,
		       t.n, o.threads, o.runs);
	}
	for (int i = 0; i < nruns; i++)
		bench_print_run(&o, batches[i] > 1 ? "fib_lookup_batch" : "fib_lookup_single",
				batches[i], t.n, &runs[i], i == nruns - 1);
	if (o.json)
		printf("  ]");
	if (o.verify)
		printf(o.json ? ",\n  \"verify_checksum\": %" PRIu64 : "naive LPM checksum %" PRIu64 "\n",
		       ref);
#ifdef HAVE_DPDK
	if (o.dpdk) {
		struct peer_result pr;

		if (peer_run(&rt, &t, o.runs, &pr, err, sizeof(err)) < 0) {
			fprintf(stderr, "fibbench: dpdk: %s\n", err);
			ret = 1;
		} else {
			double pm = t.n / pr.best_s / 1e6;
			int agree = pr.checksum == main_run->checksum;

			if (o.json) {
				printf(",\n  \"dpdk\": {\"name\": \"%s\", \"build_s\": %.3f, "
				       "\"mlps\": %.2f, \"ns_per_lookup\": %.2f, \"checksum\": %" PRIu64
				       ", \"checksum_agrees\": %s},\n  \"ratio_mlps\": {",
				       pr.name, pr.build_s, pm, pr.best_s / t.n * 1e9, pr.checksum,
				       agree ? "true" : "false");
				for (int i = 0; i < nruns; i++)
					printf("%s\"batch_%zu\": %.3f", i ? ", " : "", batches[i],
					       t.n / runs[i].best_s / 1e6 / pm);
				printf("},\n  \"ratio_build\": %.3f", build_s / pr.build_s);
			} else {
				printf("%-22s bulk  64    %8.2f Mlookups/s %7.2f ns  checksum %" PRIu64
				       "  build %.3f s%s\n",
				       pr.name, pm, pr.best_s / t.n * 1e9, pr.checksum, pr.build_s,
				       agree ? "" : "  CHECKSUM DIFFERS");
				for (int i = 0; i < nruns; i++)
					printf("ratio libfib batch %zu / rte_fib: %.2f\n", batches[i],
					       t.n / runs[i].best_s / 1e6 / pm);
				printf("ratio build libfib / rte_fib: %.2f\n", build_s / pr.build_s);
			}
			if (!agree) {
				fprintf(stderr, "fibbench: checksum differs from rte_fib\n");
				ret = 3;
			}
		}
	}
#endif
	if (o.json)
		printf("\n}\n");
	fib_free(fib);
	fib_thread_offline();
	routes_index_free(&ix);
	trace_free(&t);
	routes_free(&rt);
	return ret;
}
