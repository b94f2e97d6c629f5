/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: gcbench, flow cache expiry and admission benchmark
 *
 * Three measurements, all on the real cache/flow.c and libfib:
 *
 *  scan      full expiry passes over a table of --buckets buckets (4M),
 *            empty and populated with --entries entries, with the yield
 *            checks (want_cpu every bucket, clock every 64) and without;
 *            ns per bucket, min and median of --runs passes, runs of the
 *            two variants interleaved so drift hits both alike.
 *  latency   one lookup thread timing single cached lookups (hits over
 *            the populated keys) while idle, then while another thread
 *            runs back-to-back full scans: p50, p99, p99.9, max.
 *  admission with --routes FILE (IPv4), in thread CPU time: uncached
 *            fib_lookup4_rcu against
 *            flow_lookup_rcu on a Zipf(1.0) trace of --flows flows and an
 *            all-miss trace (every lookup a new source), doorkeeper
 *            admission and admit-all side by side.
 *
 * Not part of make check. Usage: gcbench [--routes FILE] [--buckets N]
 * [--entries N] [--runs R] [--seconds S] [--flows F] [--lookups N]
 * [--only scan|latency|admission] [--trace zipf|all-miss]
 * [--admit all|doorkeeper] [--batch K (<= 256)] [--json]
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "fib/fib.h"
#include "cache/flow.h"
#include "tests/util/rng.h"
#include "tests/util/routes.h"

#define T0 (1000ull * 1000000000ull) /* fake clock: entries never age */

struct opts {
	const char *routes;
	uint32_t buckets, entries, runs, flows;
	double seconds;
	uint64_t lookups;
	const char *only;
	int trace; /* -1 both, 0 zipf, 1 all-miss */
	int admit; /* -1 both, 0 all, 1 doorkeeper */
	uint32_t batch; /* admission: 0 single lookups, else chunks */
	int json;
};

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of this thread: on a shared machine, time-slicing with other
 * users' processes does not count against either side of a comparison. */
static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Cycle counter for per-lookup latency (clock_gettime costs 50 ns on
 * some VMs); converted to ns with a calibration over the whole run. */
static inline uint64_t
ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return mono_ns();
#endif
}

static uint64_t
fixed_clock(void *arg)
{
	return *(const uint64_t *)arg;
}

static uint64_t fake_t = T0; /* read by the caches' clock callback */

static void
cfg_bench(struct flow_config *c, const struct opts *o, uint32_t yield_check, uint64_t budget)
{
	flow_config_default(c);
	c->secret[0] = 0x243f6a8885a308d3ull;
	c->secret[1] = 0x13198a2e03707344ull;
	c->buckets = o->buckets;
	c->max_entries = o->entries * 2 + 1024;
	c->admit = FLOW_ADMIT_ALL;
	c->bypass_below = 0; /* populate() is all misses */
	c->chain_cap = 64;
	c->yield_check = yield_check;
	c->scan_budget = budget;
	c->clock = fixed_clock;
	c->clock_arg = &fake_t;
}

static void
populate(struct flow_cache *fc, const struct fib *fib, uint32_t n, uint64_t seed)
{
	struct rng r;
	struct flow_key k;
	struct fib_result res;
	uint32_t i;

	rng_seed(&r, seed);
	fib_read_lock();
	for (i = 0; i < n; i++) {
		uint64_t x = rng_next(&r);

		flow_key_set4(&k, 254, (uint32_t)x, (uint32_t)(x >> 32), 0, 1);
		flow_lookup_rcu(fc, fib, &k, &res);
		if ((i & 1023) == 1023) {
			fib_read_unlock();
			fib_read_lock();
		}
	}
	fib_read_unlock();
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Scan figures. Variants: no checks (yield_check 0); checks that never
 * fire (budget unlimited): the price of the tests alone; the default
 * (2 ms budget), which also pays for the yields it makes.
 */
#define NV 3
static void
bench_scan(const struct opts *o, const struct fib *fib)
{
	struct flow_config c;
	struct flow_cache *fc[NV];
	struct flow_stats st;
	uint64_t *ns[NV], yields[NV];
	const char *pop_name[2] = {"empty", "populated"};
	const char *vname[NV] = {"nochecks", "checks", "checks_yield"};
	double med[NV], min[NV], b = (double)o->buckets;
	uint32_t pop, v, i;

	for (v = 0; v < NV; v++)
		ns[v] = calloc(o->runs, sizeof(uint64_t));
	for (pop = 0; pop < 2; pop++) {
		for (v = 0; v < NV; v++) {
			cfg_bench(&c, o, v == 0 ? 0 : 64, v == 1 ? UINT64_MAX : 2000000);
			fc[v] = flow_cache_new(&c);
			if (!fc[v]) {
				perror("flow_cache_new");
				exit(1);
			}
			if (pop)
				populate(fc[v], fib, o->entries, 42);
			flow_cache_scan(fc[v], fib, T0, (uint64_t)o->buckets); /* warm */
		}
		for (i = 0; i < o->runs; i++)
			for (v = 0; v < NV; v++) {
				uint32_t w = (v + i) % NV; /* rotate the order */

				flow_cache_scan(fc[w], fib, T0, (uint64_t)o->buckets);
				flow_cache_stats(fc[w], &st);
				ns[w][i] = st.gc_ns_last;
			}
		for (v = 0; v < NV; v++) {
			flow_cache_stats(fc[v], &st);
			yields[v] = st.yields;
			qsort(ns[v], o->runs, sizeof(uint64_t), cmp_u64);
			min[v] = ns[v][0] / b;
			med[v] = ns[v][o->runs / 2] / b;
		}
		for (v = 0; v < NV; v++) {
			if (o->json)
				printf("{\"bench\":\"scan\",\"table\":\"%s\",\"variant\":\"%s\","
				       "\"buckets\":%u,\"entries\":%llu,\"runs\":%u,"
				       "\"ns_per_bucket_min\":%.3f,\"ns_per_bucket_median\":%.3f,"
				       "\"vs_nochecks_pct_min\":%.1f,\"yields\":%llu}\n",
				       pop_name[pop], vname[v], o->buckets,
				       (unsigned long long)st.entries, o->runs, min[v], med[v],
				       100.0 * (min[v] - min[0]) / min[0],
				       (unsigned long long)yields[v]);
			else
				printf("scan %-9s %-12s buckets %u entries %llu: ns/bucket min %.3f "
				       "median %.3f (%+.1f%% vs nochecks, min), yields %llu\n",
				       pop_name[pop], vname[v], o->buckets,
				       (unsigned long long)st.entries, min[v], med[v],
				       100.0 * (min[v] - min[0]) / min[0],
				       (unsigned long long)yields[v]);
		}
		for (v = 0; v < NV; v++)
			flow_cache_free(fc[v]);
	}
	for (v = 0; v < NV; v++)
		free(ns[v]);
}

/* Latency figures. */
static void
lat_keys(uint32_t n, uint64_t seed, uint64_t *keys)
{
	struct rng r;
	uint32_t i;

	rng_seed(&r, seed);
	for (i = 0; i < n; i++)
		keys[i] = rng_next(&r);
}

struct lat {
	struct flow_cache *fc;
	const struct fib *fib;
	const uint64_t *keys;
	uint32_t nkeys;
	uint64_t *samples;
	size_t n, cap;
	double seconds;
	uint64_t hits;
	double ns_per_tick;
};

static void *
lat_lookups(void *arg)
{
	struct lat *l = arg;
	struct rng pick;
	struct flow_key k;
	struct fib_result res;
	uint64_t end, t, x, n0, k0;

	fib_thread_online();
	rng_seed(&pick, 7);
	l->n = 0;
	n0 = mono_ns();
	k0 = ticks();
	end = n0 + (uint64_t)(l->seconds * 1e9);
	while (l->n < l->cap) {
		x = l->keys[rng_below(&pick, l->nkeys)];
		flow_key_set4(&k, 254, (uint32_t)x, (uint32_t)(x >> 32), 0, 1);
		t = ticks();
		fib_read_lock();
		l->hits += (unsigned)flow_lookup_rcu(l->fc, l->fib, &k, &res);
		fib_read_unlock();
		l->samples[l->n++] = ticks() - t;
		if ((l->n & 1023) == 0 && mono_ns() > end)
			break;
	}
	l->ns_per_tick = (double)(mono_ns() - n0) / (double)(ticks() - k0);
	fib_thread_offline();
	return NULL;
}

struct scanner {
	struct flow_cache *fc;
	const struct fib *fib;
	uint32_t buckets;
	int stop;
	uint64_t passes;
};

static void *
scanner_run(void *arg)
{
	struct scanner *s = arg;

	fib_thread_online();
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		flow_cache_scan(s->fc, s->fib, T0, s->buckets);
		s->passes++;
	}
	fib_thread_offline();
	return NULL;
}

static void
pctl(uint64_t *v, size_t n, double *p50, double *p99, double *p999, double *max)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	*p50 = (double)v[n / 2];
	*p99 = (double)v[(size_t)(n * 0.99)];
	*p999 = (double)v[(size_t)(n * 0.999)];
	*max = (double)v[n - 1];
}

static void
bench_latency(const struct opts *o, const struct fib *fib)
{
	struct flow_config c;
	struct flow_cache *fc;
	struct flow_stats st;
	struct lat l;
	struct scanner sc;
	pthread_t lt, stt;
	uint64_t *keys;
	double r[2][4];
	int phase, i;

	cfg_bench(&c, o, 64, 2000000);
	fc = flow_cache_new(&c);
	keys = malloc(sizeof(*keys) * o->entries);
	lat_keys(o->entries, 42, keys);
	populate(fc, fib, o->entries, 42);
	memset(&l, 0, sizeof(l));
	l.fc = fc;
	l.fib = fib;
	l.keys = keys;
	l.nkeys = o->entries;
	l.cap = 50u * 1000 * 1000;
	l.samples = malloc(sizeof(uint64_t) * l.cap);
	l.seconds = o->seconds;
	for (phase = 0; phase < 2; phase++) {
		memset(&sc, 0, sizeof(sc));
		sc.fc = fc;
		sc.fib = fib;
		sc.buckets = o->buckets;
		if (phase)
			pthread_create(&stt, NULL, scanner_run, &sc);
		pthread_create(&lt, NULL, lat_lookups, &l);
		pthread_join(lt, NULL);
		if (phase) {
			__atomic_store_n(&sc.stop, 1, __ATOMIC_RELEASE);
			pthread_join(stt, NULL);
		}
		pctl(l.samples, l.n, &r[phase][0], &r[phase][1], &r[phase][2], &r[phase][3]);
		for (i = 0; i < 4; i++)
			r[phase][i] *= l.ns_per_tick;
		if (o->json)
			printf("{\"bench\":\"latency\",\"phase\":\"%s\",\"lookups\":%zu,"
			       "\"p50_ns\":%.0f,\"p99_ns\":%.0f,\"p999_ns\":%.0f,\"max_ns\":%.0f,"
			       "\"scan_passes\":%llu}\n",
			       phase ? "scan" : "idle", l.n, r[phase][0], r[phase][1],
			       r[phase][2], r[phase][3], (unsigned long long)sc.passes);
		else
			printf("latency %-4s lookups %zu: p50 %.0f ns p99 %.0f ns p99.9 %.0f ns "
			       "max %.0f ns (full scans during: %llu)\n",
			       phase ? "scan" : "idle", l.n, r[phase][0], r[phase][1],
			       r[phase][2], r[phase][3], (unsigned long long)sc.passes);
	}
	flow_cache_stats(fc, &st);
	if (!o->json)
		printf("latency p99.9 scan/idle = %.2f (hits %llu of %llu lookups)\n",
		       r[1][2] / r[0][2], (unsigned long long)st.hits,
		       (unsigned long long)st.lookups);
	free(l.samples);
	free(keys);
	flow_cache_free(fc);
}

/* Admission figures. */
static uint32_t *
zipf_trace(uint32_t flows, uint64_t n, uint64_t seed)
{
	double *cdf = malloc(sizeof(double) * flows), s = 0;
	uint32_t *t = malloc(sizeof(uint32_t) * n), i;
	struct rng r;
	uint64_t j;

	for (i = 0; i < flows; i++)
		s += 1.0 / (i + 1);
	for (i = 0, cdf[0] = 0; i < flows; i++)
		cdf[i] = (i ? cdf[i - 1] : 0) + 1.0 / (i + 1) / s;
	rng_seed(&r, seed);
	for (j = 0; j < n; j++) {
		double u = rng_double(&r);
		uint32_t lo = 0, hi = flows - 1;

		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;

			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		t[j] = lo;
	}
	free(cdf);
	return t;
}

/* Single lookups (batch 0) or chunks of batch addresses. */
static double
run_uncached(const struct fib *fib, const uint32_t *dst, uint64_t n, uint32_t batch,
	     uintptr_t *sum)
{
	struct fib_result res[256];
	uint64_t t = cpu_ns(), i, j;
	uintptr_t s = 0;

	fib_read_lock();
	for (i = 0; i < n; i += batch ? batch : 1) {
		if (batch) {
			uint64_t k = n - i < batch ? n - i : batch;

			fib_lookup4_batch_rcu(fib, 254, dst + i, res, k);
			for (j = 0; j < k; j++)
				s += (uintptr_t)res[j].alias;
		} else {
			res[0] = fib_lookup4_rcu(fib, 254, dst[i]);
			s += (uintptr_t)res[0].alias;
		}
		if ((i & 1023) < (batch ? batch : 1)) {
			fib_read_unlock();
			fib_read_lock();
		}
	}
	fib_read_unlock();
	*sum = s;
	return (double)(cpu_ns() - t) / (double)n;
}

static double
run_cached(struct flow_cache *fc, const struct fib *fib, const uint32_t *dst, const uint32_t *src,
	   uint64_t n, uint32_t batch, uintptr_t *sum)
{
	struct flow_key k[256];
	struct fib_result res[256];
	uint64_t t = cpu_ns(), i, j;
	uintptr_t s = 0;

	fib_read_lock();
	for (i = 0; i < n; i += batch ? batch : 1) {
		if (batch) {
			uint64_t m = n - i < batch ? n - i : batch;

			for (j = 0; j < m; j++)
				flow_key_set4(&k[j], 254, dst[i + j], src[i + j], 0, 1);
			flow_lookup_batch_rcu(fc, fib, k, res, m);
			for (j = 0; j < m; j++)
				s += (uintptr_t)res[j].alias;
		} else {
			flow_lookup4_rcu(fc, fib, 254, dst[i], src[i], 1, &res[0]);
			s += (uintptr_t)res[0].alias;
		}
		if ((i & 1023) < (batch ? batch : 1)) {
			fib_read_unlock();
			fib_read_lock();
		}
	}
	fib_read_unlock();
	*sum = s;
	return (double)(cpu_ns() - t) / (double)n;
}

static void
bench_admission(const struct opts *o, struct fib *fib, const struct routes *rt)
{
	uint64_t n = o->lookups, i;
	uint32_t *dst = malloc(sizeof(uint32_t) * n), *src = malloc(sizeof(uint32_t) * n);
	uint32_t *fd = malloc(sizeof(uint32_t) * o->flows), *fs = malloc(sizeof(uint32_t) * o->flows);
	uint32_t *z;
	struct rng r;
	int trace, admit;
	const char *tname[2] = {"zipf", "all-miss"};
	const char *aname[2] = {"all", "doorkeeper"};

	rng_seed(&r, 1);
	/* flows: destinations inside routed prefixes, random sources */
	for (i = 0; i < o->flows; i++) {
		const struct fib_route *rr = &rt->r[rng_below(&r, rt->n)];
		uint32_t a, host = rr->plen >= 32 ? 0 : (uint32_t)(rng_next(&r) >> (32 + rr->plen));

		memcpy(&a, rr->dst.b, 4);
		fd[i] = ntohl(a) | host;
		fs[i] = (uint32_t)rng_next(&r);
	}
	for (trace = 0; trace < 2; trace++) {
		if (o->trace >= 0 && o->trace != trace)
			continue;
		uintptr_t s0, s1;
		double base, c[2];
		struct flow_stats st[2];

		if (trace == 0) {
			z = zipf_trace(o->flows, n, 3);
			for (i = 0; i < n; i++) {
				dst[i] = fd[z[i]];
				src[i] = fs[z[i]];
			}
			free(z);
		} else {
			for (i = 0; i < n; i++) {
				const struct fib_route *rr = &rt->r[rng_below(&r, rt->n)];
				uint32_t a, host = rr->plen >= 32 ? 0 :
					(uint32_t)(rng_next(&r) >> (32 + rr->plen));

				memcpy(&a, rr->dst.b, 4);
				dst[i] = ntohl(a) | host;
				src[i] = (uint32_t)rng_next(&r);
			}
		}
		/*
		 * Rounds of uncached, admit-all, doorkeeper over the same trace,
		 * interleaved so load changes on a shared machine hit all three;
		 * min per variant. All-miss rounds get fresh sources.
		 */
		{
			struct flow_config cfg;
			struct flow_cache *fc[2];
			uint32_t round;
			double t;

			flow_config_default(&cfg);
			cfg.secret[0] = 0x243f6a8885a308d3ull;
			cfg.secret[1] = 0x13198a2e03707344ull;
			for (admit = 0; admit < 2; admit++) {
				cfg.admit = admit ? FLOW_ADMIT_DOORKEEPER : FLOW_ADMIT_ALL;
				fc[admit] = flow_cache_new(&cfg);
			}
			base = c[0] = c[1] = 1e18;
			for (round = 0; round < o->runs; round++) {
				if (trace == 1 && round)
					for (i = 0; i < n; i++)
						src[i] = (uint32_t)rng_next(&r);
				t = run_uncached(fib, dst, n, o->batch, &s0);
				base = t < base ? t : base;
				for (admit = 0; admit < 2; admit++) {
					if (o->admit >= 0 && o->admit != admit)
						continue;
					/* only the cache being timed has a worker */
					flow_cache_start(fc[admit], fib);
					t = run_cached(fc[admit], fib, dst, src, n, o->batch, &s1);
					flow_cache_stop(fc[admit]);
					c[admit] = t < c[admit] ? t : c[admit];
					if (s1 != s0)
						fprintf(stderr, "gcbench: checksum mismatch (%s, admit %s)\n",
							tname[trace], aname[admit]);
				}
			}
			for (admit = 0; admit < 2; admit++) {
				flow_cache_stats(fc[admit], &st[admit]);
				flow_cache_free(fc[admit]);
			}
		}
		for (admit = 0; admit < 2; admit++) {
			if (o->admit >= 0 && o->admit != admit)
				continue;
			if (o->json)
				printf("{\"bench\":\"admission\",\"trace\":\"%s\",\"batch\":%u,\"admit\":\"%s\","
				       "\"lookups\":%llu,\"ns_uncached\":%.1f,\"ns_cached\":%.1f,"
				       "\"ratio\":%.3f,\"hits\":%llu,\"misses\":%llu,\"inserts\":%llu,"
				       "\"evictions\":%llu,\"bypassed\":%llu}\n",
				       tname[trace], o->batch, aname[admit], (unsigned long long)n, base,
				       c[admit], base / c[admit],
				       (unsigned long long)st[admit].hits,
				       (unsigned long long)st[admit].misses,
				       (unsigned long long)st[admit].inserts,
				       (unsigned long long)(st[admit].evict_chain + st[admit].evict_size),
				       (unsigned long long)st[admit].bypassed);
			else
				printf("admission %-8s batch %u admit %-10s: uncached %.1f ns, cached %.1f ns, "
				       "speed ratio %.2f; hits %llu misses %llu inserts %llu "
				       "evictions %llu full %llu bypassed %llu\n",
				       tname[trace], o->batch, aname[admit], base, c[admit],
				       base / c[admit], (unsigned long long)st[admit].hits,
				       (unsigned long long)st[admit].misses,
				       (unsigned long long)st[admit].inserts,
				       (unsigned long long)(st[admit].evict_chain + st[admit].evict_size),
				       (unsigned long long)st[admit].insert_full,
				       (unsigned long long)st[admit].bypassed);
		}
	}
	free(dst);
	free(src);
	free(fd);
	free(fs);
}

static void
usage(void)
{
	fprintf(stderr, "usage: gcbench [--routes FILE] [--buckets N] [--entries N] [--runs R]\n"
			"               [--seconds S] [--flows F] [--lookups N]\n"
			"               [--only scan|latency|admission] [--trace zipf|all-miss]\n"
			"               [--admit all|doorkeeper] [--batch K] [--json]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"routes", required_argument, NULL, 'r'},
		{"buckets", required_argument, NULL, 'b'},
		{"entries", required_argument, NULL, 'e'},
		{"runs", required_argument, NULL, 'n'},
		{"seconds", required_argument, NULL, 's'},
		{"flows", required_argument, NULL, 'f'},
		{"lookups", required_argument, NULL, 'l'},
		{"only", required_argument, NULL, 'o'},
		{"trace", required_argument, NULL, 't'},
		{"admit", required_argument, NULL, 'a'},
		{"batch", required_argument, NULL, 'k'},
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	struct opts o = {NULL, 1u << 22, 1u << 20, 7, 100000, 1.0, 10000000, NULL, -1, -1, 0, 0};
	struct routes rt;
	struct fib *fib;
	char err[256];
	int ch;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'r': o.routes = optarg; break;
		case 'b': o.buckets = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'e': o.entries = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'n': o.runs = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's': o.seconds = strtod(optarg, NULL); break;
		case 'f': o.flows = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'l': o.lookups = strtoull(optarg, NULL, 0); break;
		case 'o': o.only = optarg; break;
		case 'k': o.batch = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'a': o.admit = !strcmp(optarg, "all") ? 0 : 1; break;
		case 't': o.trace = !strcmp(optarg, "zipf") ? 0 : 1; break;
		case 'j': o.json = 1; break;
		default: usage();
		}
	}
	if (o.runs == 0 || o.buckets == 0 || o.entries == 0 || o.flows == 0 || o.batch > 256)
		usage();
	fib_thread_online();
	fib = fib_new(NULL);
	routes_init(&rt);
	if (o.routes) {
		if (routes_read(&rt, o.routes, err, sizeof(err)) || rt.family != AF_INET) {
			fprintf(stderr, "gcbench: %s\n", rt.family != AF_INET ? "IPv4 routes only" : err);
			return 1;
		}
		if (fib_load(fib, rt.r, rt.n)) {
			fprintf(stderr, "gcbench: fib_load failed\n");
			return 1;
		}
	} else {
		struct fib_route r;
		uint8_t fam;

		memset(&r, 0, sizeof(r));
		fib_prefix_parse("0.0.0.0/0", &r.dst, &r.plen, &fam);
		r.family = fam;
		r.type = FIB_UNICAST;
		r.table = 254;
		fib_add(fib, &r, 0);
	}
	if (!o.only || !strcmp(o.only, "scan"))
		bench_scan(&o, fib);
	if (!o.only || !strcmp(o.only, "latency"))
		bench_latency(&o, fib);
	if (o.routes && (!o.only || !strcmp(o.only, "admission")))
		bench_admission(&o, fib, &rt);
	routes_free(&rt);
	fib_free(fib);
	fib_thread_offline();
	return 0;
}
