/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fibbench, libfib build and lookup benchmark (doc/architecture.md contract)
 *
 *   fibbench --routes FILE [--trace FILE | --uniform N | --routed N | --zipf FLOWS]
 *            [--lookups N] [--cache] [--all-miss] [--rules N] [--churn U]
 *            [--seed S] [--batch K] [--threads T] [--runs R] [--json]
 *            [--single-and-batch] [--dpdk] [--warm] [--verify] [--save-trace FILE]
 *            [--accel TABLE]   (the compiled table: its table, 0 off;
 *                               default: fib_params_default)
 *   fibbench --gen N [--gen6] ...     (a fibgen table made in memory)
 *   fibbench [--gen6] ...             (a real tier-1 table when one is
 *                                      present beside the tree, else a
 *                                      generated full table)
 *
 * Loads the routes file into a new FIB with fib_load (timed: build_s),
 * then times lookups of the trace in table 254, best of R runs (3):
 * --batch K > 1 calls fib_lookup{4,6}_batch_rcu K addresses at a time,
 * and in alternate passes of the same run fib_lookup{4,6}_ref_batch_rcu
 * (route references; the headline figures are this call's), K = 1 (the
 * default) the single-address calls. Each thread holds the read
 * lock over 64 addresses (or one batch) at a time, as a datapath would.
 * All results are kept; after the timed runs the checksum (sum of the
 * 1-based line numbers of the matched routes, 0 for no match) is computed
 * by mapping each matched prefix back to its line through a hash of the
 * routes file, so any two correct LPM implementations agree on it. With
 * --threads T the trace is split into T slices looked up in parallel and
 * the rate is lookups over the wall time of the slowest.
 *
 * `bytes` is fib_stats().bytes after the load's reclamation and a
 * fib_trim, the state fibd settles to after a load (its trim thread);
 * rss_delta, the growth of the resident set over fib_new + fib_load, is
 * an outside check of it.
 * --save-trace FILE writes the trace used (for an outside LPM benchmark).
 *
 * --verify recomputes the checksum with a naive longest-prefix match
 * (one hash probe per prefix length) and fails when they differ.
 *
 * --dpdk (when built with libdpdk) also builds DPDK rte_fib from the same
 * routes (after libfib's load, one pass not counted) and times its
 * bulk-64 lookups on the same trace, one pass right after each of
 * libfib's timed passes of the plain FIB (the first of each mode aside:
 * it faults the result arrays in), and reports both sets of figures,
 * the ratio of the bests and the median of the ratios pass by pass: on
 * a machine whose speed drifts by half within seconds, the pairs are
 * what compares the two structures.
 *
 * --warm precedes every timed pass (libfib's and rte_fib's alike) with
 * an untimed one of the same call over the same trace, so that each is
 * timed with its own table in cache, as in steady use. Without it, a
 * pass follows another mode's (16 bytes of results per lookup) or
 * rte_fib's (a 64 MiB table), which evict a table of a few MiB; rte_fib's
 * table misses the cache either way.
 *
 * Flow cache (cache/flow.h). With --cache every mode resolves flows
 * (struct fib_flow: the trace's destination, a source, and mark, tos and
 * dport hashed from the destination): uncached by fib_resolve_rcu /
 * fib_resolve_batch_rcu, cached by flow_resolve_rcu /
 * flow_resolve_batch_rcu (flows built outside the timing). --rules N
 * installs a generated policy first: N rules on source prefix, fwmark,
 * tos, dport and iif by turns, each "lookup 1000 + k", table 1000 + k
 * holding every (2N)th route of the file (a quarter of them with two
 * paths), 2N links for the iif rules and forwarding on; the flows' fields
 * are spread over the rules' values (half of the flows forwarded from one
 * of the links), and `rule_hits` counts the decisions each kind of rule
 * made (a flow whose rule's table lacks its destination goes on to main).
 * --churn U adds a phase after the timed modes: per mode, R cached
 * passes without updates, then R with a writer thread applying U route
 * updates a second (replace, delete, re-add of the file's routes; see
 * struct churn), and reports both hit rates and their ratio (`churn` in
 * the JSON); afterwards a pass without and one through the cache must
 * agree. Without
 * rules the policy is the default one and the cache stays out of the way
 * (bypass_default). The checksum maps each decision's prefix to its line
 * (--verify only without rules); tables, paths and errors are summed apart
 * and must agree too. A flow is (destination, source); --zipf FLOWS
 * makes a trace of --lookups N (4M) draws from FLOWS distinct flows with a
 * Zipf(1.0) law (trace_zipf's routed destinations, each with a source
 * fixed by a seeded hash of the destination); --all-miss gives every
 * lookup a new random source, drawn again before every cached pass, so
 * that no flow is ever seen twice (destinations from the trace chosen,
 * routed by default). Other traces get the hashed source: one flow per
 * destination. With --cache each mode is timed twice in alternate passes
 * over the same trace, the plain FIB lookup (fib_lookup_*) and the lookup
 * through the cache (flow_lookup_*: flow_lookup4_rcu, flow_lookup_rcu or,
 * with --batch K, flow_lookup_batch_rcu K keys at a time, key building
 * included), so load changes of a shared machine hit both; the cache and
 * its expiry worker live over all passes (warm between the runs, the
 * steady state of a daemon). Both result arrays are checksummed after the
 * runs and must agree (a cached answer is the FIB's route). The headline
 * figures are the cached ones; the JSON adds the cache counters over all
 * cached passes (hits, misses = lookups - hits, bypassed lookups included,
 * evictions = chain + pressure) and ratio_cached_uncached, the cached
 * lookup rate over the uncached one (> 1: the cache is faster), by wall
 * time and (_cpu) by the threads' CPU time, which a loaded machine's lost
 * time slices do not inflate (it still counts cache interference).
 *
 * Exit status: 0, 1 on errors, 2 on usage, 3 when the checksums of libfib
 * and rte_fib (or of single and batch, of batch and route references, or
 * of cached and uncached) disagree.
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
#include <sys/prctl.h>

#include "cache/flow.h"
#include "fib/fib.h"
#include "fib/policy.h"
#include "tests/util/rng.h"
#include "tests/util/routes.h"
#include "tests/util/tablegen.h"
#include "tests/util/trace.h"
#ifdef HAVE_DPDK
#include "tests/bench/peer.h"
#endif

#define BENCH_CHUNK 64
/* --rules: rule k has priority BENCH_PRIO0 + k and selector kind
 * k % BENCH_KINDS (source, fwmark, tos, dport, iif); the links of the iif
 * rules are ifindex BENCH_IIF0 + i */
#define BENCH_PRIO0 100
#define BENCH_KINDS 5
#define BENCH_IIF0 100
#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000 /* linux/if.h, which clashes with net/if.h */
#endif

struct bench_opts {
	const char *routes, *trace, *save_trace;
	size_t uniform, routed, gen, zipf, lookups;
	int gen6;
	uint64_t seed;
	size_t batch;
	int threads, runs, json, both, dpdk, verify, cache, all_miss, warm;
	unsigned rules; /* --rules N: a generated policy of N rules */
	unsigned churn; /* --churn U: route updates per second in a churn phase */
	long long accel; /* --accel: the compiled table's table, -1 the default */
};

/* Flow sources, parallel to the trace (the cache's flows are dst, src). */
struct bench_src {
	uint32_t *s4;      /* AF_INET, host order */
	uint8_t (*s6)[16]; /* AF_INET6 */
	struct rng r;      /* --all-miss: fresh sources for every pass */
};

/* What one pass looks up: fc NULL for the plain FIB. With flows (--cache)
 * a pass resolves them (fib_resolve*_rcu, or flow_resolve*_rcu with fc)
 * into dec; else it looks the trace up into res. */
struct bench_job {
	const struct fib *fib;
	struct flow_cache *fc;
	const struct trace *t;
	const struct bench_src *src;
	struct fib_result *res;
	size_t batch;
	const struct fib_flow *flows;
	struct fib_decision *dec;
	uint32_t *ref; /* the route-reference batch (batch > 1) into ref, not res */
};

#define BENCH_PAIRS 64
struct bench_run {
	double best_s;
	double best_cpu_s; /* thread CPU time of a pass (all threads), best of the runs */
	/* --dpdk: each pass's rate over that of the rte_fib pass right after
	 * it (bench_pair), so that a ratio holds while the machine's speed
	 * drifts between the two */
	double pair[BENCH_PAIRS];
	int npair;
	uint64_t checksum;
	uint64_t dsum; /* decisions: tables, paths and errors, summed */
	size_t matched, unmapped;
	size_t kind_hits[BENCH_KINDS]; /* --rules: decisions by the kind of rule */
};

/* rte_fib, built once, for passes alternated with libfib's (--dpdk). */
struct peer;
struct bench_peer {
	struct peer *peer;
	int warm; /* --warm: an untimed pass before each timed one */
#ifdef HAVE_DPDK
	struct peer_result res;
#endif
};

/* After a pass of d seconds into run: one rte_fib pass over t, and the
 * ratio of the two rates. */
static void
bench_pair(struct bench_peer *bp, const struct trace *t, struct bench_run *run, double d)
{
#ifdef HAVE_DPDK
	if (bp && run->npair < BENCH_PAIRS) {
		if (bp->warm) {
			struct peer_result keep = bp->res;

			peer_pass(bp->peer, t, &bp->res);
			bp->res = keep;
		}
		run->pair[run->npair++] = peer_pass(bp->peer, t, &bp->res) / d;
	}
#else
	(void)bp;
	(void)t;
	(void)run;
	(void)d;
#endif
}

static int
bench_dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median, min and max of run's paired ratios (sorts them). */
static double
bench_pair_median(struct bench_run *run, double *lo, double *hi)
{
	int n = run->npair;

	qsort(run->pair, (size_t)n, sizeof(run->pair[0]), bench_dbl_cmp);
	*lo = n ? run->pair[0] : 0;
	*hi = n ? run->pair[n - 1] : 0;
	return n ? (n % 2 ? run->pair[n / 2] : (run->pair[n / 2 - 1] + run->pair[n / 2]) / 2) : 0;
}

struct bench_thread {
	pthread_t tid;
	const struct bench_job *job;
	struct flow_key *keys;
	size_t lo, hi;
	pthread_barrier_t *start;
	double t0, t1, cpu;
};

static double
bench_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* CPU time of the calling thread: blind to time slices lost on a loaded machine. */
static double
bench_cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
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

/* Bytes of this process in transparent huge pages (the FIB's pools ask
 * for them); -1 unknown. */
static long long
bench_anon_huge(void)
{
	long long kib = -1;
	char l[256];
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (f) {
		while (fgets(l, sizeof(l), f))
			if (sscanf(l, "AnonHugePages: %lld kB", &kib) == 1)
				break;
		fclose(f);
	}
	return kib < 0 ? -1 : kib * 1024;
}

static void
bench_usage(void)
{
	fprintf(stderr,
		"usage: fibbench --routes FILE [--trace FILE | --uniform N | --routed N |\n"
		"                --zipf FLOWS] [--lookups N] [--cache] [--all-miss]\n"
		"                [--accel TABLE] [--rules N] [--churn UPDATES_PER_S]\n"
		"                [--seed S] [--batch K] [--threads T] [--runs R] [--json]\n"
		"                [--single-and-batch] [--dpdk] [--warm] [--verify]\n"
		"                [--save-trace FILE]\n"
		"       fibbench --gen N [--gen6] ...\n"
		"       fibbench [--gen6] ...   (shared tier-1 table, else a generated one)\n");
	exit(2);
}

/* Does a mode time the route-reference call too: the plain FIB's batches,
 * and its IPv4 single calls (fib_lookup4_ref_rcu)? */
static bool
bench_has_ref(const struct flow_cache *fc, size_t batch, const struct trace *t)
{
	return !fc && (batch > 1 || t->a4);
}

/* Look up t[lo, hi) in the FIB into res[lo, hi), or by route reference
 * into ref[lo, hi) (ref not NULL; single calls for IPv4 with batch 1).
 * Context: reader. */
static void
bench_lookup_fib(const struct fib *fib, const struct trace *t, struct fib_result *res,
		 uint32_t *ref, size_t lo, size_t hi, size_t batch)
{
	size_t step = batch > 1 ? batch : BENCH_CHUNK;

	for (size_t i = lo; i < hi; i += step) {
		size_t k = hi - i < step ? hi - i : step;

		fib_read_lock();
		if (ref && batch == 1 && t->a4) {
			for (size_t j = i; j < i + k; j++)
				ref[j] = fib_lookup4_ref_rcu(fib, ROUTES_TABLE, t->a4[j]);
		} else if (ref) {
			if (t->a4)
				fib_lookup4_ref_batch_rcu(fib, ROUTES_TABLE, &t->a4[i], &ref[i], k);
			else
				fib_lookup6_ref_batch_rcu(fib, ROUTES_TABLE,
							  (const uint8_t(*)[16])&t->a6[i], &ref[i],
							  k);
		} else if (batch > 1) {
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

/*
 * The same through the flow cache; keys holds batch keys (batch > 1). The
 * keys are built inside the timed loop, as a datapath builds them from
 * packets. Context: reader.
 */
static void
bench_lookup_cache(struct flow_cache *fc, const struct fib *fib, const struct trace *t,
		   const struct bench_src *src, struct fib_result *res, size_t lo, size_t hi,
		   size_t batch, struct flow_key *keys)
{
	size_t step = batch > 1 ? batch : BENCH_CHUNK;

	for (size_t i = lo; i < hi; i += step) {
		size_t k = hi - i < step ? hi - i : step;

		fib_read_lock();
		if (batch > 1) {
			for (size_t j = 0; j < k; j++)
				if (t->a4)
					flow_key_set4(&keys[j], ROUTES_TABLE, t->a4[i + j],
						      src->s4[i + j], 0, 0);
				else
					flow_key_set6(&keys[j], ROUTES_TABLE, t->a6[i + j],
						      src->s6[i + j], 0, 0);
			flow_lookup_batch_rcu(fc, fib, keys, &res[i], k);
		} else if (t->a4) {
			for (size_t j = i; j < i + k; j++)
				flow_lookup4_rcu(fc, fib, ROUTES_TABLE, t->a4[j], src->s4[j], 0,
						 &res[j]);
		} else {
			for (size_t j = i; j < i + k; j++) {
				struct flow_key key;

				flow_key_set6(&key, ROUTES_TABLE, t->a6[j], src->s6[j], 0, 0);
				flow_lookup_rcu(fc, fib, &key, &res[j]);
			}
		}
		fib_read_unlock();
	}
}

/* Resolve flows [lo, hi): through the cache with fc, else fib_resolve*. */
static void
bench_resolve(const struct bench_job *j, size_t lo, size_t hi)
{
	size_t step = j->batch > 1 ? j->batch : BENCH_CHUNK;

	for (size_t i = lo; i < hi; i += step) {
		size_t k = hi - i < step ? hi - i : step;

		fib_read_lock();
		if (j->batch > 1) {
			if (j->fc)
				flow_resolve_batch_rcu(j->fc, j->fib, &j->flows[i], &j->dec[i], k);
			else
				fib_resolve_batch_rcu(j->fib, &j->flows[i], &j->dec[i], k);
		} else if (j->fc) {
			for (size_t x = i; x < i + k; x++)
				flow_resolve_rcu(j->fc, j->fib, &j->flows[x], &j->dec[x]);
		} else {
			for (size_t x = i; x < i + k; x++)
				fib_resolve_rcu(j->fib, &j->flows[x], &j->dec[x]);
		}
		fib_read_unlock();
	}
}

static void
bench_lookup(const struct bench_job *j, size_t lo, size_t hi, struct flow_key *keys)
{
	if (j->flows)
		bench_resolve(j, lo, hi);
	else if (j->fc)
		bench_lookup_cache(j->fc, j->fib, j->t, j->src, j->res, lo, hi, j->batch, keys);
	else
		bench_lookup_fib(j->fib, j->t, j->res, j->ref, lo, hi, j->batch);
}

static void *
bench_thread_main(void *arg)
{
	struct bench_thread *th = arg;

	fib_thread_online();
	pthread_barrier_wait(th->start);
	th->cpu = bench_cpu();
	th->t0 = bench_now();
	bench_lookup(th->job, th->lo, th->hi, th->keys);
	th->t1 = bench_now();
	th->cpu = bench_cpu() - th->cpu;
	fib_thread_offline();
	return NULL;
}

/* One timed pass over the trace; returns the wall time, *cpu the CPU time. */
static double
bench_pass(const struct bench_job *job, int threads, double *cpu)
{
	struct bench_thread th[threads];
	pthread_barrier_t start;
	double t0 = 1e30, t1 = 0;
	size_t nkeys = job->fc && job->batch > 1 ? job->batch : 1;

	for (int i = 0; i < threads; i++) {
		th[i].keys = malloc(nkeys * sizeof(*th[i].keys));
		if (!th[i].keys) {
			fprintf(stderr, "fibbench: out of memory\n");
			exit(1);
		}
		memset(th[i].keys, 0, nkeys * sizeof(*th[i].keys));
	}
	*cpu = 0;
	if (threads == 1) {
		*cpu = bench_cpu();
		t0 = bench_now();
		bench_lookup(job, 0, job->t->n, th[0].keys);
		t1 = bench_now();
		*cpu = bench_cpu() - *cpu;
		free(th[0].keys);
		return t1 - t0;
	}
	pthread_barrier_init(&start, NULL, threads);
	for (int i = 0; i < threads; i++) {
		th[i].job = job;
		th[i].lo = job->t->n * i / threads;
		th[i].hi = job->t->n * (i + 1) / threads;
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
		*cpu += th[i].cpu;
		free(th[i].keys);
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

/* The same from decisions: the matched route's line (its prefix in the
 * file: --rules tables hold copies of the file's routes), and dsum. */
static void
bench_checksum_dec(const struct routes_index *ix, const struct routes *rt,
		   const struct fib_decision *d, size_t n, struct bench_run *run)
{
	run->checksum = 0;
	run->dsum = 0;
	run->matched = 0;
	run->unmapped = 0;
	memset(run->kind_hits, 0, sizeof(run->kind_hits));
	for (size_t i = 0; i < n; i++) {
		long k;

		run->dsum += d[i].table * 31u + d[i].path * 7u + d[i].error;
		if ((d[i].flags & FIB_D_RULE) && d[i].rule >= BENCH_PRIO0 &&
		    d[i].rule < BENCH_PRIO0 + 4096)
			run->kind_hits[(d[i].rule - BENCH_PRIO0) % BENCH_KINDS]++;
		if (!(d[i].flags & FIB_D_ROUTE))
			continue;
		run->matched++;
		k = routes_index_find(ix, &d[i].prefix, d[i].plen);
		if (k < 0) {
			run->unmapped++;
			continue;
		}
		run->checksum += rt->line[k];
	}
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

/* A source fixed by the destination: a seeded hash (one flow per destination). */
static uint64_t
bench_src_mix(uint64_t seed, uint64_t x)
{
	uint64_t z = seed ^ x;

	return rng_splitmix64(&z);
}

/*
 * Sources for the trace: hashed from the destinations, or left for
 * bench_src_draw (--all-miss). Returns 0 or -ENOMEM.
 */
static int
bench_src_init(struct bench_src *src, const struct trace *t, uint64_t seed, int all_miss)
{
	size_t n = t->n ? t->n : 1;

	memset(src, 0, sizeof(*src));
	rng_seed(&src->r, seed ^ 0xa11b155ULL);
	if (t->a4)
		src->s4 = calloc(n, sizeof(*src->s4));
	else
		src->s6 = calloc(n, sizeof(*src->s6));
	if (!src->s4 && !src->s6)
		return -ENOMEM;
	if (all_miss)
		return 0;
	for (size_t i = 0; i < t->n; i++) {
		if (t->a4) {
			src->s4[i] = (uint32_t)bench_src_mix(seed, t->a4[i]);
		} else {
			uint64_t x, y;

			memcpy(&x, t->a6[i], 8);
			memcpy(&y, t->a6[i] + 8, 8);
			x = bench_src_mix(seed, x);
			y = bench_src_mix(x, y);
			memcpy(src->s6[i], &x, 8);
			memcpy(src->s6[i] + 8, &y, 8);
		}
	}
	return 0;
}

/* --all-miss: a new random source for every lookup (before every pass). */
static void
bench_src_draw(struct bench_src *src, const struct trace *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->a4) {
			src->s4[i] = (uint32_t)(rng_next(&src->r) >> 32);
		} else {
			uint64_t x = rng_next(&src->r), y = rng_next(&src->r);

			memcpy(src->s6[i], &x, 8);
			memcpy(src->s6[i] + 8, &y, 8);
		}
	}
}

static void
bench_src_free(struct bench_src *src)
{
	free(src->s4);
	free(src->s6);
	memset(src, 0, sizeof(*src));
}

static struct fib_result *
bench_results(size_t n)
{
	struct fib_result *res = malloc((n ? n : 1) * sizeof(*res));

	/* touch the result array once so page faults stay out of the runs */
	if (res)
		memset(res, 0, (n ? n : 1) * sizeof(*res));
	return res;
}

/*
 * The same from route references: each resolved by fib_ref_get_rcu to the
 * route it names, then checksummed as results are. A reference is valid
 * in the read section that made it; these outlive theirs, which is sound
 * here only because nothing writes the FIB between the timed passes and
 * this (no route retired, so every reference still names its route).
 */
static int
bench_checksum_ref(const struct fib *fib, int family, const struct routes_index *ix,
		   const struct routes *rt, const uint32_t *ref, size_t n, struct bench_run *run)
{
	struct fib_result *res = bench_results(n);

	if (!res)
		return -ENOMEM;
	fib_read_lock();
	for (size_t i = 0; i < n; i++)
		(void)fib_ref_get_rcu(fib, family, ref[i], &res[i]);
	fib_read_unlock();
	bench_checksum(ix, rt, res, n, run);
	free(res);
	return 0;
}

/*
 * --cache: the flows of the trace. The destination and source are the
 * trace's; mark, tos and dport are a hash of the destination (so a flow
 * keeps them), spread so that about half of the flows match one of the
 * --rules rules.
 */
static void
bench_flows_fill(struct fib_flow *fl, const struct trace *t, const struct bench_src *src,
		 const struct bench_opts *o)
{
	unsigned n2 = o->rules ? 2 * o->rules : 1;

	for (size_t i = 0; i < t->n; i++) {
		struct fib_flow *f = &fl[i];
		uint64_t h;

		memset(f, 0, sizeof(*f));
		f->family = (uint8_t)t->family;
		if (t->a4) {
			uint32_t d = htonl(t->a4[i]), a = htonl(src->s4[i]);

			memcpy(f->dst.b, &d, 4);
			memcpy(f->src.b, &a, 4);
			h = t->a4[i] * 0x9e3779b97f4a7c15ull;
		} else {
			memcpy(f->dst.b, t->a6[i], 16);
			memcpy(f->src.b, src->s6[i], 16);
			memcpy(&h, t->a6[i] + 8, 8);
			h = (h ^ t->a6[i][3]) * 0x9e3779b97f4a7c15ull;
		}
		f->flags = FIB_FLOW_SRC;
		f->ipproto = 6;
		f->sport = (uint16_t)(32768 + (h >> 48) % 16384);
		if (o->rules) {
			f->mark = (uint32_t)((h >> 20) % n2);
			f->tos = (uint8_t)(((h >> 28) % 8) << 2);
			f->dport = (uint16_t)(1000 + (h >> 36) % n2);
			/* half of the flows are forwarded, from one of the
			 * 2N links bench_policy names (the iif rules') */
			if ((h >> 12) & 1) {
				f->flags |= FIB_FLOW_IIF;
				f->iif = BENCH_IIF0 + (uint32_t)((h >> 4) % n2);
			}
		} else {
			f->dport = 443;
		}
	}
}

/*
 * --rules N: N rules in priority order, each one selector (source prefix,
 * fwmark, tos, dport range, iif, by turns: BENCH_KINDS) and "lookup 1000 +
 * k"; table 1000 + k holds every (2N)th route of the file from the kth,
 * every fourth of them with two paths. 2N links (ifindex BENCH_IIF0 + i,
 * named fbI, up) give the iif rules their devices, and forwarding is on so
 * that forwarded flows are routed. Returns 0 or -errno.
 */
static int
bench_policy(struct fib *fib, const struct routes *rt, unsigned n)
{
	size_t per = rt->n / (2 * n) + 1, m = 0;
	struct fib_route *r = calloc(per * n, sizeof(*r));
	struct fib_nh *nh = calloc(per * n * 2, sizeof(*nh));
	struct fib_mp_hash hs;
	int err = 0;

	if (!r || !nh) {
		free(r);
		free(nh);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < 2 * n && !err; i++) {
		struct fib_link l;

		memset(&l, 0, sizeof(l));
		l.ifindex = BENCH_IIF0 + i;
		l.flags = IFF_UP | IFF_LOWER_UP;
		snprintf(l.name, sizeof(l.name), "fb%u", i);
		err = fib_link_set(fib, &l);
	}
	fib_mp_hash_default(&hs);
	hs.forwarding4 = hs.forwarding6 = 1;
	if (!err)
		err = fib_mp_hash_set(fib, &hs);
	for (unsigned k = 0; k < n && !err; k++) {
		struct fib_rule ru;

		fib_rule_init(&ru, rt->family);
		ru.priority = BENCH_PRIO0 + k;
		ru.table = 1000 + k;
		switch (k % BENCH_KINDS) {
		case 0: /* one sixteenth of the sources */
			ru.src_len = 4;
			ru.src.b[0] = (uint8_t)((k / BENCH_KINDS % 16) << 4);
			break;
		case 1:
			ru.mark = k;
			ru.mark_mask = 0xffffffffu;
			break;
		case 2:
			ru.tos = (uint8_t)((k / BENCH_KINDS % 7 + 1) << 2);
			break;
		case 3:
			ru.dport_lo = ru.dport_hi = (uint16_t)(1000 + k);
			break;
		default: /* forwarded flows from link fbK */
			snprintf(ru.iifname, sizeof(ru.iifname), "fb%u", k);
			break;
		}
		err = fib_rule_add(fib, &ru);
		for (size_t i = k; i < rt->n && !err; i += 2 * (size_t)n) {
			r[m] = rt->r[i];
			r[m].table = 1000 + k;
			if (r[m].nh_count == 1 && m % 4 == 0) {
				nh[2 * m] = r[m].nh[0];
				nh[2 * m + 1] = r[m].nh[0];
				nh[2 * m + 1].ifindex += 1;
				r[m].nh = &nh[2 * m];
				r[m].nh_count = 2;
			}
			m++;
		}
	}
	if (!err)
		err = fib_policy_publish(fib);
	if (!err)
		err = fib_load(fib, r, m);
	free(r);
	free(nh);
	return err;
}

/* The text line of a mode's ratio to rte_fib (pm: rte_fib's best Mlps):
 * best of each side, then the median of the passes paired. */
static void
bench_print_ratio(const char *what, size_t batch, struct bench_run *run, size_t n, double pm)
{
	double lo, hi, med;

	printf("ratio libfib %sbatch %zu / rte_fib: %.2f", what, batch, n / run->best_s / 1e6 / pm);
	if (run->npair) {
		med = bench_pair_median(run, &lo, &hi);
		printf(", paired %.2f (%.2f-%.2f, %d pairs)", med, lo, hi, run->npair);
	}
	printf("\n");
}

/*
 * Best of o->runs passes of one mode into run; with fc, each pass of the
 * FIB is followed by one through the cache (into crun), on separate
 * result arrays, checksummed after all passes. With rrun (batch > 1, no
 * cache), each pass is followed by one of the route-reference batch, into
 * rrun, its references resolved to routes for the checksum.
 */
static int
bench_time(const struct fib *fib, struct flow_cache *fc, const struct routes_index *ix,
	   const struct routes *rt, const struct trace *t, struct bench_src *src, size_t batch,
	   const struct bench_opts *o, struct bench_run *run, struct bench_run *crun,
	   struct bench_run *rrun, struct fib_flow *flows, struct bench_peer *bp)
{
	struct fib_result *res = bench_results(t->n), *cres = fc ? bench_results(t->n) : NULL;
	struct fib_decision *dec = NULL, *cdec = NULL;
	uint32_t *ref = rrun ? calloc(t->n ? t->n : 1, sizeof(*ref)) : NULL;
	struct bench_job job = { fib, NULL, t, src, res, batch, NULL, NULL, NULL };
	struct bench_job cjob = { fib, fc, t, src, cres, batch, NULL, NULL, NULL };
	struct bench_job rjob = { fib, NULL, t, src, NULL, batch, NULL, NULL, ref };

	if (flows) {
		dec = calloc(t->n ? t->n : 1, sizeof(*dec));
		cdec = calloc(t->n ? t->n : 1, sizeof(*cdec));
		job.flows = cjob.flows = flows;
		job.dec = dec;
		cjob.dec = cdec;
	}
	if (!res || (fc && !cres) || (flows && (!dec || !cdec)) || (rrun && !ref)) {
		free(ref);
		free(res);
		free(cres);
		free(dec);
		free(cdec);
		return -ENOMEM;
	}
	run->best_s = crun->best_s = run->best_cpu_s = crun->best_cpu_s = 1e30;
	run->npair = crun->npair = 0;
	if (rrun) {
		rrun->best_s = rrun->best_cpu_s = 1e30;
		rrun->npair = 0;
	}
	for (int r = 0; r < o->runs; r++) {
		double cpu, d;

		/* --all-miss: new sources every round, the same for both passes
		 * (the uncached pass does not touch the cache) */
		if (o->all_miss) {
			bench_src_draw(src, t);
			if (flows)
				bench_flows_fill(flows, t, src, o);
		}
		if (o->warm)
			bench_pass(&job, o->threads, &cpu);
		d = bench_pass(&job, o->threads, &cpu);

		if (d < run->best_s)
			run->best_s = d;
		if (cpu < run->best_cpu_s)
			run->best_cpu_s = cpu;
		/* (the first pass faults the result arrays in: not paired) */
		if (!fc && (r || o->runs == 1))
			bench_pair(bp, t, run, d);
		if (rrun) {
			if (o->warm)
				bench_pass(&rjob, o->threads, &cpu);
			d = bench_pass(&rjob, o->threads, &cpu);
			if (r || o->runs == 1)
				bench_pair(bp, t, rrun, d);
			if (d < rrun->best_s)
				rrun->best_s = d;
			if (cpu < rrun->best_cpu_s)
				rrun->best_cpu_s = cpu;
		}
		if (!fc)
			continue;
		if (o->warm)
			bench_pass(&cjob, o->threads, &cpu);
		d = bench_pass(&cjob, o->threads, &cpu);
		if (d < crun->best_s)
			crun->best_s = d;
		if (cpu < crun->best_cpu_s)
			crun->best_cpu_s = cpu;
	}
	if (flows) {
		bench_checksum_dec(ix, rt, dec, t->n, run);
		bench_checksum_dec(ix, rt, cdec, t->n, crun);
	} else {
		bench_checksum(ix, rt, res, t->n, run);
		if (fc)
			bench_checksum(ix, rt, cres, t->n, crun);
		if (rrun && bench_checksum_ref(fib, t->family, ix, rt, ref, t->n, rrun) < 0) {
			free(ref);
			free(res);
			free(cres);
			return -ENOMEM;
		}
	}
	free(ref);
	free(res);
	free(cres);
	free(dec);
	free(cdec);
	return 0;
}

/*
 * --churn U: a writer thread applies U route updates a second to the
 * file's routes (table 254), spread uniformly over the table: each update
 * takes a random route one step along replace (another next hop,
 * FIB_ADD_REPLACE) -> delete -> re-add (the file's route), as a BGP feed
 * changes, withdraws and announces prefixes. It is the FIB's one writer
 * while it runs and writes as the daemon's event path does (fib_add and
 * fib_del on the writer thread, retired memory freed through the FIB's
 * call_rcu batches after a grace period, no flush per update), in slices
 * every millisecond holding the updates due by then. Paused, it sleeps
 * and keeps no debt.
 */
struct churn {
	struct fib *fib;
	const struct routes *rt;
	unsigned rate;
	uint8_t *state;  /* per route: 0 as in the file, 1 replaced, 2 deleted */
	int active, stop; /* atomics */
	uint64_t updates, errors; /* atomics */
	struct rng r;
	pthread_t tid;
};

/* One update of a random route. Context: writer. */
static void
churn_one(struct churn *c)
{
	size_t i = (size_t)rng_below(&c->r, c->rt->n);
	struct fib_route r = c->rt->r[i];
	struct fib_nh nh;
	int err;

	switch (c->state[i]) {
	case 0: /* a new next hop */
		memset(&nh, 0, sizeof(nh));
		nh.gw_family = r.family;
		if (r.family == AF_INET) {
			nh.gw.b[0] = 192, nh.gw.b[2] = 2;
		} else {
			nh.gw.b[0] = 0x20, nh.gw.b[1] = 0x01, nh.gw.b[2] = 0x0d, nh.gw.b[3] = 0xb8;
		}
		nh.gw.b[r.family == AF_INET ? 3 : 15] = (uint8_t)(1 + rng_below(&c->r, 250));
		nh.weight = 1;
		nh.ifindex = 2;
		r.nh = &nh;
		r.nh_count = 1;
		err = fib_add(c->fib, &r, FIB_ADD_REPLACE);
		break;
	case 1: /* withdrawn: match the prefix whatever its next hops */
		r.type = 0;
		r.nh_count = 0;
		r.nh = NULL;
		err = fib_del(c->fib, &r);
		break;
	default: /* announced again, as in the file */
		err = fib_add(c->fib, &r, FIB_ADD_REPLACE);
		break;
	}
	if (err)
		__atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
	c->state[i] = (uint8_t)((c->state[i] + 1) % 3);
	__atomic_add_fetch(&c->updates, 1, __ATOMIC_RELAXED);
}

static void *
churn_main(void *arg)
{
	struct churn *c = arg;
	struct timespec ms = { 0, 1000000 };
	uint64_t done = 0;
	double t0 = 0;
	int was = 0;

	fib_thread_online();
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		if (!__atomic_load_n(&c->active, __ATOMIC_ACQUIRE)) {
			was = 0;
		} else {
			double now = bench_now();

			if (!was) {
				t0 = now;
				done = 0;
				was = 1;
			}
			while (done < (uint64_t)((now - t0) * c->rate)) {
				churn_one(c);
				done++;
			}
		}
		nanosleep(&ms, NULL);
	}
	fib_reclaim_flush(c->fib);
	fib_thread_offline();
	return NULL;
}

static int
churn_start(struct churn *c, struct fib *fib, const struct routes *rt, unsigned rate,
	    uint64_t seed)
{
	memset(c, 0, sizeof(*c));
	c->fib = fib;
	c->rt = rt;
	c->rate = rate;
	rng_seed(&c->r, seed ^ 0xc4a2ULL);
	c->state = calloc(rt->n, 1);
	if (!c->state)
		return -ENOMEM;
	if (pthread_create(&c->tid, NULL, churn_main, c)) {
		free(c->state);
		c->state = NULL;
		return -EAGAIN;
	}
	return 0;
}

/* Stop and join the writer: the calling thread is the FIB's writer again. */
static void
churn_stop(struct churn *c)
{
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
	pthread_join(c->tid, NULL);
	free(c->state);
	c->state = NULL;
}

/* The churn phase of one mode: hit rates and times of cached passes
 * without updates (static) and with the writer running. */
struct churn_run {
	size_t batch, n;
	double hit_static, hit_churn; /* hits / lookups over the counted passes */
	double best_static_s, best_churn_s;
	uint64_t updates;             /* during the counted churn passes */
	double updates_per_s;
	uint64_t invalid_route;       /* refused hits during the counted churn passes */
};

static double
churn_pass(const struct bench_job *job, struct flow_cache *fc, int threads, uint64_t *hits,
	   uint64_t *inval)
{
	struct flow_stats s0, s1;
	double cpu, d;

	flow_cache_stats(fc, &s0);
	d = bench_pass(job, threads, &cpu);
	flow_cache_stats(fc, &s1);
	*hits += s1.hits - s0.hits;
	*inval += s1.invalid_route - s0.invalid_route;
	return d;
}

/*
 * R cached passes without updates, then the writer on: one warm-up pass
 * (the cache reaches the steady state of this update rate), R counted
 * passes, the writer paused again. The static passes follow the modes'
 * timed runs and one uncounted pass (which refreshes what an earlier
 * mode's churn left stale), so both start from a warm cache.
 */
static int
bench_churn_mode(struct fib *fib, struct flow_cache *fc, const struct trace *t,
		 struct bench_src *src, size_t batch, const struct bench_opts *o,
		 struct fib_flow *flows, struct churn *ch, struct churn_run *cr)
{
	struct fib_decision *dec = calloc(t->n ? t->n : 1, sizeof(*dec));
	struct bench_job job = { fib, fc, t, src, NULL, batch, flows, dec, NULL };
	uint64_t hits = 0, inval = 0, u0;
	double d, w0;

	if (!dec)
		return -ENOMEM;
	memset(cr, 0, sizeof(*cr));
	cr->batch = batch;
	cr->n = t->n;
	cr->best_static_s = cr->best_churn_s = 1e30;
	/* a previous mode's churn left stale entries: refresh them first */
	(void)churn_pass(&job, fc, o->threads, &hits, &inval);
	hits = inval = 0;
	for (int r = 0; r < o->runs; r++) {
		d = churn_pass(&job, fc, o->threads, &hits, &inval);
		if (d < cr->best_static_s)
			cr->best_static_s = d;
	}
	cr->hit_static = (double)hits / ((double)t->n * o->runs);
	__atomic_store_n(&ch->active, 1, __ATOMIC_RELEASE);
	(void)churn_pass(&job, fc, o->threads, &hits, &inval);
	hits = inval = 0;
	u0 = __atomic_load_n(&ch->updates, __ATOMIC_RELAXED);
	w0 = bench_now();
	for (int r = 0; r < o->runs; r++) {
		d = churn_pass(&job, fc, o->threads, &hits, &inval);
		if (d < cr->best_churn_s)
			cr->best_churn_s = d;
	}
	cr->updates = __atomic_load_n(&ch->updates, __ATOMIC_RELAXED) - u0;
	cr->updates_per_s = (double)cr->updates / (bench_now() - w0);
	__atomic_store_n(&ch->active, 0, __ATOMIC_RELEASE);
	cr->hit_churn = (double)hits / ((double)t->n * o->runs);
	cr->invalid_route = inval;
	free(dec);
	return 0;
}

/*
 * After the churn: the FIB as the writer left it, one pass without the
 * cache and one through it; their decisions must agree (no decision
 * cached before an update is returned after it). 1 if they do.
 */
static int
bench_churn_verify(struct fib *fib, struct flow_cache *fc, const struct routes_index *ix,
		   const struct routes *rt, const struct trace *t, struct bench_src *src,
		   const struct bench_opts *o, struct fib_flow *flows)
{
	struct fib_decision *dec = calloc(t->n ? t->n : 1, sizeof(*dec));
	struct fib_decision *cdec = calloc(t->n ? t->n : 1, sizeof(*cdec));
	struct bench_job job = { fib, NULL, t, src, NULL, 1, flows, dec, NULL };
	struct bench_job cjob = { fib, fc, t, src, NULL, 1, flows, cdec, NULL };
	struct bench_run u, c;
	double cpu;
	int ok;

	if (!dec || !cdec) {
		free(dec);
		free(cdec);
		return 0;
	}
	(void)bench_pass(&job, o->threads, &cpu);
	(void)bench_pass(&cjob, o->threads, &cpu);
	bench_checksum_dec(ix, rt, dec, t->n, &u);
	bench_checksum_dec(ix, rt, cdec, t->n, &c);
	ok = u.checksum == c.checksum && u.dsum == c.dsum && !u.unmapped && !c.unmapped;
	free(dec);
	free(cdec);
	return ok;
}

static void
bench_print_churn(const struct bench_opts *o, const struct churn *ch, const struct churn_run *cr,
		  int nruns, int agree)
{
	double worst = 1e30;

	for (int i = 0; i < nruns; i++) {
		double q = cr[i].hit_static > 0 ? cr[i].hit_churn / cr[i].hit_static : 0;

		if (q < worst)
			worst = q;
	}
	if (o->json) {
		printf(",\n  \"churn\": {\"rate\": %u, \"updates\": %" PRIu64
		       ", \"update_errors\": %" PRIu64 ", \"checksums_agree\": %s, "
		       "\"hit_rate_ratio_churn_static\": %.3f, \"by_batch\": {",
		       o->churn, __atomic_load_n(&ch->updates, __ATOMIC_RELAXED),
		       __atomic_load_n(&ch->errors, __ATOMIC_RELAXED), agree ? "true" : "false",
		       worst);
		for (int i = 0; i < nruns; i++)
			printf("%s\"batch_%zu\": {\"hit_rate_static\": %.4f, "
			       "\"hit_rate_churn\": %.4f, \"hit_rate_ratio\": %.3f, "
			       "\"updates\": %" PRIu64 ", \"updates_per_s\": %.1f, "
			       "\"invalid_route\": %" PRIu64 ", \"mlps_static\": %.2f, "
			       "\"mlps_churn\": %.2f}",
			       i ? ", " : "", cr[i].batch, cr[i].hit_static, cr[i].hit_churn,
			       cr[i].hit_static > 0 ? cr[i].hit_churn / cr[i].hit_static : 0,
			       cr[i].updates, cr[i].updates_per_s, cr[i].invalid_route,
			       cr[i].n / cr[i].best_static_s / 1e6,
			       cr[i].n / cr[i].best_churn_s / 1e6);
		printf("}}");
		return;
	}
	for (int i = 0; i < nruns; i++)
		printf("churn %u updates/s, batch %zu: hit rate %.2f %% static, %.2f %% with %.0f "
		       "updates/s (%" PRIu64 " updates, %" PRIu64 " refused hits): ratio %.3f; "
		       "%.2f / %.2f Mlookups/s\n",
		       o->churn, cr[i].batch, 100 * cr[i].hit_static, 100 * cr[i].hit_churn,
		       cr[i].updates_per_s, cr[i].updates, cr[i].invalid_route,
		       cr[i].hit_static > 0 ? cr[i].hit_churn / cr[i].hit_static : 0,
		       cr[i].n / cr[i].best_static_s / 1e6, cr[i].n / cr[i].best_churn_s / 1e6);
	printf("churn: %" PRIu64 " updates (%" PRIu64 " failed), cached and uncached decisions "
	       "after it %s\n",
	       __atomic_load_n(&ch->updates, __ATOMIC_RELAXED),
	       __atomic_load_n(&ch->errors, __ATOMIC_RELAXED), agree ? "agree" : "DIFFER");
}

static void
bench_parse(int argc, char **argv, struct bench_opts *o)
{
	enum { O_ROUTES = 256, O_TRACE, O_UNIFORM, O_ROUTED, O_SEED, O_BATCH, O_THREADS, O_RUNS,
	       O_JSON, O_BOTH, O_DPDK, O_GEN, O_GEN6, O_CACHE, O_ZIPF, O_ALLMISS, O_VERIFY,
	       O_SAVE, O_LOOKUPS, O_ACCEL, O_RULES, O_CHURN, O_WARM };
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
		{ "warm", no_argument, NULL, O_WARM },
		{ "gen", required_argument, NULL, O_GEN },
		{ "gen6", no_argument, NULL, O_GEN6 },
		{ "cache", no_argument, NULL, O_CACHE },
		{ "zipf", required_argument, NULL, O_ZIPF },
		{ "all-miss", no_argument, NULL, O_ALLMISS },
		{ "lookups", required_argument, NULL, O_LOOKUPS },
		{ "accel", required_argument, NULL, O_ACCEL },
		{ "rules", required_argument, NULL, O_RULES },
		{ "churn", required_argument, NULL, O_CHURN },
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
	o->accel = -1;
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
		case O_WARM:
			o->warm = 1;
			break;
		case O_SAVE:
			o->save_trace = optarg;
			break;
		case O_CACHE:
			o->cache = 1;
			break;
		case O_ZIPF:
			if (v < 1 || v > UINT32_MAX)
				bench_usage();
			o->zipf = v;
			traces++;
			break;
		case O_ALLMISS:
			o->all_miss = 1;
			break;
		case O_ACCEL:
			if (v > UINT32_MAX)
				bench_usage();
			o->accel = (long long)v;
			break;
		case O_LOOKUPS:
			if (v < 1)
				bench_usage();
			o->lookups = v;
			break;
		case O_RULES:
			if (v > 4096)
				bench_usage();
			o->rules = (unsigned)v;
			break;
		case O_CHURN:
			if (v < 1 || v > 1000000)
				bench_usage();
			o->churn = (unsigned)v;
			break;
		default:
			bench_usage();
		}
	}
	if (optind != argc || traces > 1 || (o->routes && (o->gen || o->gen6)))
		bench_usage();
	/* --lookups sizes --zipf and the default trace; all-miss has no flows */
	if ((o->lookups && (o->trace || o->uniform || o->routed)) || (o->all_miss && o->zipf))
		bench_usage();
	if (o->all_miss && !o->cache) {
		fprintf(stderr, "fibbench: --all-miss needs --cache\n");
		exit(2);
	}
	if (o->churn && (!o->cache || o->all_miss)) {
		fprintf(stderr, "fibbench: --churn needs --cache and a trace whose flows repeat\n");
		exit(2);
	}
	if (!o->lookups)
		o->lookups = 4000000;
	if (!traces)
		o->routed = o->lookups;
}

static void
bench_print_run(const struct bench_opts *o, const char *name, size_t batch, size_t n,
		const struct bench_run *run, int last)
{
	double mlps = n / run->best_s / 1e6, ns = run->best_s / (n ? n : 1) * 1e9;
	double cpu_ns = run->best_cpu_s / (n ? n : 1) * 1e9;

	if (o->json)
		printf("    {\"name\": \"%s\", \"batch\": %zu, \"mlps\": %.2f, \"ns_per_lookup\": %.2f, "
		       "\"cpu_ns_per_lookup\": %.2f, \"checksum\": %" PRIu64
		       ", \"matched\": %zu}%s\n",
		       name, batch, mlps, ns, cpu_ns, run->checksum, run->matched, last ? "" : ",");
	else
		printf("%-22s batch %-5zu %8.2f Mlookups/s %7.2f ns (CPU %7.2f)  checksum %" PRIu64
		       "  matched %zu\n",
		       name, batch, mlps, ns, cpu_ns, run->checksum, run->matched);
}

/* The cache's counters and the cached/uncached speed ratio of each mode. */
static void
bench_print_cache(const struct bench_opts *o, const struct flow_stats *fst, const size_t *batches,
		  const struct bench_run *runs, const struct bench_run *cruns, int nruns, size_t n)
{
	const char *kind = o->all_miss ? "all-miss" : o->zipf ? "zipf" : o->trace ? "file"
			 : o->uniform ? "uniform" : "routed";
	const struct bench_run *u = &runs[nruns - 1], *c = &cruns[nruns - 1];
	uint64_t misses = fst->lookups - fst->hits, evictions = fst->evict_chain + fst->evict_size;
	double hit_pct = fst->lookups ? 100.0 * (double)fst->hits / (double)fst->lookups : 0;

	if (o->json) {
		printf(",\n  \"cache\": true,\n  \"trace_kind\": \"%s\",\n  \"flows\": %zu,\n"
		       "  \"hits\": %" PRIu64 ",\n  \"misses\": %" PRIu64 ",\n"
		       "  \"evictions\": %" PRIu64 ",\n  \"cache_lookups\": %" PRIu64 ",\n"
		       "  \"hit_rate\": %.2f,\n  \"bypassed\": %" PRIu64 ",\n"
		       "  \"inserts\": %" PRIu64 ",\n  \"cache_entries\": %" PRIu64 ",\n"
		       "  \"cache_bytes\": %" PRIu64 ",\n"
		       "  \"uncached_mlps\": %.2f,\n  \"uncached_ns_per_lookup\": %.2f,\n"
		       "  \"uncached_checksum\": %" PRIu64 ",\n  \"ratio_cached_uncached\": %.3f,\n"
		       "  \"ratio_cached_uncached_cpu\": %.3f,\n"
		       "  \"ratio_cached_uncached_by_batch\": {",
		       kind, o->zipf, fst->hits, misses, evictions, fst->lookups, hit_pct,
		       fst->bypassed, fst->inserts, fst->entries, fst->bytes,
		       n / u->best_s / 1e6, u->best_s / (n ? n : 1) * 1e9, u->checksum,
		       u->best_s / c->best_s, u->best_cpu_s / c->best_cpu_s);
		for (int i = 0; i < nruns; i++)
			printf("%s\"batch_%zu\": %.3f", i ? ", " : "", batches[i],
			       runs[i].best_s / cruns[i].best_s);
		printf("},\n  \"ratio_cached_uncached_cpu_by_batch\": {");
		for (int i = 0; i < nruns; i++)
			printf("%s\"batch_%zu\": %.3f", i ? ", " : "", batches[i],
			       runs[i].best_cpu_s / cruns[i].best_cpu_s);
		printf("},\n  \"rule_hits\": {\"src\": %zu, \"fwmark\": %zu, \"tos\": %zu, "
		       "\"dport\": %zu, \"iif\": %zu",
		       u->kind_hits[0], u->kind_hits[1], u->kind_hits[2], u->kind_hits[3],
		       u->kind_hits[4]);
		printf("},\n  \"rules\": %u,\n  \"bypass_default\": %" PRIu64
		       ",\n  \"bypass_entered\": %" PRIu64 ",\n  \"admit_n\": %" PRIu64
		       ",\n  \"records\": %" PRIu64 ",\n  \"invalid_route\": %" PRIu64
		       ",\n  \"invalid_policy\": %" PRIu64 ",\n  \"hit_ns\": %" PRIu64
		       ",\n  \"resolve_ns\": %" PRIu64 ",\n  \"probe_miss_ns\": %" PRIu64
		       ",\n  \"insert_ns\": %" PRIu64,
		       o->rules, fst->bypass_default, fst->bypass_entered, fst->admit_n,
		       fst->records, fst->invalid_route, fst->invalid_policy, fst->hit_ns,
		       fst->resolve_ns, fst->probe_miss_ns, fst->insert_ns);
		return;
	}
	printf("flow cache, %s trace", kind);
	if (o->zipf)
		printf(" of %zu flows", o->zipf);
	printf(", %u rules: hits %" PRIu64 " misses %" PRIu64 " (%.1f %% hits; bypassed %" PRIu64
	       ", default policy %" PRIu64 ") inserts %" PRIu64 " evictions %" PRIu64 ", %" PRIu64
	       " entries, %" PRIu64 " records, %" PRIu64 " bytes, admit 1/%" PRIu64 "\n"
	       "measured: hit %" PRIu64 " ns, resolve %" PRIu64 " ns, probe miss %" PRIu64
	       " ns, insert %" PRIu64 " ns\n",
	       o->rules, fst->hits, misses, hit_pct, fst->bypassed, fst->bypass_default,
	       fst->inserts, evictions, fst->entries, fst->records, fst->bytes, fst->admit_n,
	       fst->hit_ns, fst->resolve_ns, fst->probe_miss_ns, fst->insert_ns);
	if (o->rules)
		printf("decisions by rule selector: src %zu, fwmark %zu, tos %zu, dport %zu, "
		       "iif %zu (of %zu)\n",
		       u->kind_hits[0], u->kind_hits[1], u->kind_hits[2], u->kind_hits[3],
		       u->kind_hits[4], n);
	for (int i = 0; i < nruns; i++)
		printf("ratio cached/uncached batch %zu: %.2f, CPU time %.2f  (checksums %s)\n",
		       batches[i], runs[i].best_s / cruns[i].best_s,
		       runs[i].best_cpu_s / cruns[i].best_cpu_s,
		       runs[i].checksum == cruns[i].checksum ? "agree" : "DIFFER");
}

int
main(int argc, char **argv)
{
	struct bench_run runs[2], cruns[2], rruns[2];
	struct churn churn;
	struct churn_run churn_runs[2];
	int churn_agree = 0;
	struct flow_cache *fc = NULL;
	struct fib_flow *flows = NULL;
	struct flow_stats fst;
	struct bench_src src;
	size_t batches[2];
	int nruns = 0, ret = 0;
	struct routes_index ix;
	struct bench_opts o;
	struct bench_peer bpeer = { 0 };
	struct fib_stats st;
	const struct fib_trie_stats *ts;
	struct routes rt;
	struct trace t;
	struct fib *fib;
	char err[512], shared[4096];
	double t0, build_s, read_s;
	size_t fib_routes;
	long long rss0, rss_delta, huge_bytes;

	bench_parse(argc, argv, &o);
	bpeer.warm = o.warm;
	routes_init(&rt);
	if (!o.routes && !o.gen) {
		/* a real tier-1 table when one is present beside the tree, else a generated one */
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
	else if (o.zipf)
		ret = trace_zipf(&t, &rt, o.lookups, o.zipf, o.seed);
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
	/* sources only for the cache: a 16M IPv6 trace would need 256 MB of them */
	memset(&src, 0, sizeof(src));
	if (routes_index_build(&ix, &rt) < 0 ||
	    (o.cache && bench_src_init(&src, &t, o.seed, o.all_miss) < 0)) {
		fprintf(stderr, "fibbench: out of memory\n");
		return 1;
	}

#ifdef HAVE_DPDK
	/* like with like: when rte_fib gets 4 KiB pages, so does libfib */
	if (o.dpdk && !peer_huge() && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) < 0)
		fprintf(stderr, "fibbench: PR_SET_THP_DISABLE: %s\n", strerror(errno));
#endif
	fib_thread_online();
	rss0 = bench_rss();
	t0 = bench_now();
	{
		struct fib_params fp;

		fib_params_default(&fp);
		if (o.accel >= 0) {
			fp.accel_table = (uint32_t)o.accel;
			fp.accel_table6 = (uint32_t)o.accel;
			/* that table's only: with 0, main would get one by its
			 * size (accel_min_routes) */
			fp.accel_min_routes = 0;
		}
		fib = fib_new(&fp);
	}
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
	fib_trim(fib);
	rss_delta = bench_rss() - rss0;
	huge_bytes = bench_anon_huge();
	fib_routes = fib_count(fib, rt.family);
	fib_stats(fib, &st);
	ts = rt.family == AF_INET ? &st.v4 : &st.v6;

	if (o.rules && (ret = bench_policy(fib, &rt, o.rules)) < 0) {
		fprintf(stderr, "fibbench: --rules: %s\n", strerror(-ret));
		return 1;
	}
	if (o.cache) {
		flows = malloc((t.n ? t.n : 1) * sizeof(*flows));
		if (!flows) {
			fprintf(stderr, "fibbench: out of memory\n");
			return 1;
		}
		bench_flows_fill(flows, &t, &src, &o);
	}
	if (o.cache) {
		struct flow_config fcfg;
		uint64_t x = o.seed ^ 0xcac4e5ec7e7ULL;
		int e;

		flow_config_default(&fcfg);
		/* reproducible runs: the hash secret comes from the seed */
		fcfg.secret[0] = rng_splitmix64(&x);
		fcfg.secret[1] = rng_splitmix64(&x);
		fc = flow_cache_new(&fcfg);
		if (!fc) {
			fprintf(stderr, "fibbench: flow_cache_new: %s\n", strerror(errno));
			return 1;
		}
		if ((e = flow_cache_start(fc, fib)) < 0) {
			fprintf(stderr, "fibbench: flow_cache_start: %s\n", strerror(-e));
			return 1;
		}
	}
	if (o.both || o.batch == 1)
		batches[nruns++] = 1;
	if (o.batch > 1)
		batches[nruns++] = o.batch;
	else if (o.both)
		batches[nruns++] = BENCH_CHUNK;
#ifdef HAVE_DPDK
	/* rte_fib built now, so that its passes alternate with libfib's */
	if (o.dpdk && peer_new(&rt, t.n, &bpeer.peer, &bpeer.res, err, sizeof(err)) < 0) {
		fprintf(stderr, "fibbench: dpdk: %s\n", err);
		return 1;
	}
	/* one pass not counted: the first faults its table in */
	if (bpeer.peer) {
		peer_pass(bpeer.peer, &t, &bpeer.res);
		bpeer.res.best_s = 1e30;
	}
#endif
	for (int i = 0; i < nruns; i++) {
		/* the plain FIB's modes time the route-reference calls beside
		 * the fib_result ones (single: IPv4's) */
		if (bench_time(fib, fc, &ix, &rt, &t, &src, batches[i], &o, &runs[i], &cruns[i],
			       bench_has_ref(fc, batches[i], &t) ? &rruns[i] : NULL, flows,
			       bpeer.peer ? &bpeer : NULL) < 0) {
			fprintf(stderr, "fibbench: out of memory\n");
			return 1;
		}
		if (runs[i].unmapped || (fc && cruns[i].unmapped)) {
			fprintf(stderr, "fibbench: %zu results name no route of the file\n",
				runs[i].unmapped + (fc ? cruns[i].unmapped : 0));
			ret = 3;
		}
		if (bench_has_ref(fc, batches[i], &t) && (rruns[i].unmapped ||
							  rruns[i].checksum != runs[i].checksum)) {
			fprintf(stderr, "fibbench: batch %zu: checksum by route reference %" PRIu64
				" differs from the batch's %" PRIu64 "\n",
				batches[i], rruns[i].checksum, runs[i].checksum);
			ret = 3;
		}
		if (fc && cruns[i].dsum != runs[i].dsum) {
			fprintf(stderr, "fibbench: batch %zu: decisions through the cache differ "
				"from the FIB's (tables, paths, errors)\n", batches[i]);
			ret = 3;
		}
		if (fc && cruns[i].checksum != runs[i].checksum) {
			fprintf(stderr, "fibbench: batch %zu: checksum through the cache %" PRIu64
				" differs from the FIB's %" PRIu64 "\n",
				batches[i], cruns[i].checksum, runs[i].checksum);
			ret = 3;
		}
	}
	if (fc) {
		/* the static figures are taken before the churn phase */
		flow_cache_stats(fc, &fst);
	}
	if (fc && o.churn) {
		int e = churn_start(&churn, fib, &rt, o.churn, o.seed);

		for (int i = 0; i < nruns && e == 0; i++)
			e = bench_churn_mode(fib, fc, &t, &src, batches[i], &o, flows, &churn,
					     &churn_runs[i]);
		if (e == 0 || churn.state)
			churn_stop(&churn);
		if (e < 0) {
			fprintf(stderr, "fibbench: --churn: %s\n", strerror(-e));
			return 1;
		}
		churn_agree = bench_churn_verify(fib, fc, &ix, &rt, &t, &src, &o, flows);
		if (!churn_agree) {
			fprintf(stderr, "fibbench: after the churn, decisions through the cache "
				"differ from the FIB's\n");
			ret = 3;
		}
	}
	if (fc)
		flow_cache_stop(fc);
	if (nruns == 2 && runs[0].checksum != runs[1].checksum) {
		fprintf(stderr, "fibbench: single and batch lookups disagree\n");
		ret = 3;
	}
	/* the headline figures are those of the last (batch) mode: cached with
	 * --cache, else the route-reference batch (the single call with --batch 1) */
	int main_ref = !fc && batches[nruns - 1] > 1;
	const struct bench_run *main_run = fc ? &cruns[nruns - 1]
		: main_ref ? &rruns[nruns - 1] : &runs[nruns - 1];
	double mlps = t.n / main_run->best_s / 1e6;
	uint64_t ref = o.verify ? bench_verify(&ix, &rt, &t) : 0;

	/* with rules, decisions come from other tables than the naive LPM's */
	if (o.verify && !o.rules && ref != main_run->checksum) {
		fprintf(stderr, "fibbench: checksum %" PRIu64 " differs from the naive LPM's %" PRIu64 "\n",
			main_run->checksum, ref);
		ret = 3;
	}

	if (o.json) {
		printf("{\n  \"routes\": %zu,\n  \"fib_routes\": %zu,\n  \"family\": \"%s\",\n"
		       "  \"read_s\": %.3f,\n  \"build_s\": %.3f,\n  \"lookups\": %zu,\n"
		       "  \"batch\": %zu,\n  \"threads\": %d,\n  \"runs\": %d,\n  \"warm\": %s,\n"
		       "  \"mlps\": %.2f,\n  \"ns_per_lookup\": %.2f,\n  \"checksum\": %" PRIu64 ",\n"
		       "  \"matched\": %zu,\n  \"bytes\": %" PRIu64 ",\n  \"bytes_per_route\": %.1f,\n"
		       "  \"trie_bytes\": %" PRIu64 ",\n  \"info_bytes\": %" PRIu64 ",\n"
		       "  \"depth_avg\": %.2f,\n  \"depth_max\": %u,\n  \"leaves\": %" PRIu64 ",\n"
		       "  \"nodes\": %" PRIu64 ",\n  \"rss_delta\": %lld,\n",
		       rt.n, fib_routes, rt.family == AF_INET ? "ipv4" : "ipv6", read_s, build_s, t.n,
		       batches[nruns - 1], o.threads, o.runs, o.warm ? "true" : "false", mlps, main_run->best_s / t.n * 1e9,
		       main_run->checksum, main_run->matched, st.bytes,
		       (double)st.bytes / (double)rt.n, ts->bytes, st.info_bytes,
		       ts->leaves ? (double)ts->depth_total / (double)ts->leaves : 0.0, ts->depth_max,
		       ts->leaves, ts->nodes, rss_delta);
		/* trie shape, as /proc/net/fib_triestat */
		printf("  \"accel\": {\"table\": %u, \"bytes\": %" PRIu64 ", \"bytes_per_route\": %.1f, \"blocks\": %" PRIu64 ", \"nodes\": %" PRIu64 ", \"answers\": %" PRIu64 ", \"asks\": %" PRIu64 "},\n",
		       ts->accel_table, ts->accel_bytes, (double)ts->accel_bytes / (double)rt.n, ts->accel_blocks,
		       ts->accel_nodes, ts->accel_answers, ts->accel_asks);
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
		       " bytes = %.1f bytes/route (RSS grew %.1f; compiled table %.1f), depth avg %.2f max %u\n"
		       "lookups %zu, threads %d, best of %d%s\n",
		       rt.n, rt.family == AF_INET ? "IPv4" : "IPv6", fib_routes, read_s, build_s,
		       st.bytes, (double)st.bytes / (double)rt.n, (double)rss_delta / (double)rt.n,
		       (double)ts->accel_bytes / (double)rt.n,
		       ts->leaves ? (double)ts->depth_total / (double)ts->leaves : 0.0, ts->depth_max,
		       t.n, o.threads, o.runs, o.warm ? ", each pass after an untimed one (--warm)" : "");
	}
	for (int i = 0; i < nruns; i++) {
		bool hr = bench_has_ref(fc, batches[i], &t);

		bench_print_run(&o, batches[i] > 1 ? "fib_lookup_batch" : "fib_lookup_single",
				batches[i], t.n, &runs[i], !fc && !hr && i == nruns - 1);
		if (hr)
			bench_print_run(&o,
					batches[i] > 1 ? "fib_lookup_ref_batch" : "fib_lookup_ref_single",
					batches[i], t.n, &rruns[i], i == nruns - 1);
		if (fc)
			bench_print_run(&o,
					batches[i] > 1 ? "flow_lookup_batch" : "flow_lookup_single",
					batches[i], t.n, &cruns[i], i == nruns - 1);
	}
	if (o.json)
		printf("  ]");
	if (fc)
		bench_print_cache(&o, &fst, batches, runs, cruns, nruns, t.n);
	if (fc && o.churn)
		bench_print_churn(&o, &churn, churn_runs, nruns, churn_agree);
	if (o.verify)
		printf(o.json ? ",\n  \"verify_checksum\": %" PRIu64 : "naive LPM checksum %" PRIu64 "\n",
		       ref);
#ifdef HAVE_DPDK
	if (o.dpdk) {
		struct peer_result pr;

		/* with --cache no pass was paired: rte_fib's own runs */
		for (int r = 0; bpeer.res.best_s == 1e30 && r < o.runs; r++)
			peer_pass(bpeer.peer, &t, &bpeer.res);
		pr = bpeer.res;
		peer_free(bpeer.peer);
		{
			double pm = t.n / pr.best_s / 1e6;
			int agree = pr.checksum == main_run->checksum;

			if (o.json) {
				printf(",\n  \"dpdk\": {\"name\": \"%s\", \"pages\": \"%s\", "
				       "\"build_s\": %.3f, \"mlps\": %.2f, \"ns_per_lookup\": %.2f, "
				       "\"checksum\": %" PRIu64 ", \"checksum_agrees\": %s},\n"
				       "  \"libfib_huge_bytes\": %lld,\n  \"ratio_mlps\": {",
				       pr.name, pr.pages, pr.build_s, pm, pr.best_s / t.n * 1e9,
				       pr.checksum, agree ? "true" : "false", huge_bytes);
				for (int i = 0; i < nruns; i++)
					printf("%s\"batch_%zu\": %.3f", i ? ", " : "", batches[i],
					       t.n / runs[i].best_s / 1e6 / pm);
				for (int i = 0; i < nruns; i++)
					if (bench_has_ref(fc, batches[i], &t))
						printf(", \"ref_batch_%zu\": %.3f", batches[i],
						       t.n / rruns[i].best_s / 1e6 / pm);
				printf("},\n  \"ratio_paired\": {");
				for (int i = 0, first = 1; i < nruns; i++)
					for (int k = 0; k < 2; k++) {
						struct bench_run *br = k ? &rruns[i] : &runs[i];
						double lo, hi, med;

						if ((k && !bench_has_ref(fc, batches[i], &t)) ||
						    !br->npair)
							continue;
						med = bench_pair_median(br, &lo, &hi);
						printf("%s\"%sbatch_%zu\": {\"median\": %.3f, \"min\": %.3f, "
						       "\"max\": %.3f, \"pairs\": %d}",
						       first ? "" : ", ", k ? "ref_" : "", batches[i], med,
						       lo, hi, br->npair);
						first = 0;
					}
				printf("},\n  \"ratio_build\": %.3f", build_s / pr.build_s);
			} else {
				printf("%-22s bulk  64    %8.2f Mlookups/s %7.2f ns  checksum %" PRIu64
				       "  build %.3f s%s\n",
				       pr.name, pm, pr.best_s / t.n * 1e9, pr.checksum, pr.build_s,
				       agree ? "" : "  CHECKSUM DIFFERS");
				printf("pages: rte_fib %s, libfib %.1f MiB in transparent huge pages\n",
				       pr.pages, (double)huge_bytes / (1 << 20));
				for (int i = 0; i < nruns; i++)
					bench_print_ratio("", batches[i], &runs[i], t.n, pm);
				for (int i = 0; i < nruns; i++)
					if (bench_has_ref(fc, batches[i], &t))
						bench_print_ratio("ref ", batches[i], &rruns[i], t.n,
								  pm);
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
	if (fc)
		flow_cache_free(fc);
	free(flows);
	bench_src_free(&src);
	fib_free(fib);
	fib_thread_offline();
	routes_index_free(&ix);
	trace_free(&t);
	routes_free(&rt);
	return ret;
}
