/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: resolvebench, fib_resolve_rcu against fib_lookup4_rcu
 *
 *   resolvebench [ROUTES [LOOKUPS [MAXRULES]]]
 *
 * Builds a generated IPv4 table (tests/util/tablegen.h, default 500,000
 * routes) in main, the kernel's local table of a host (its address, the
 * broadcasts, 127.0.0.0/8), links with one address each, the next hops
 * spread over them, then times, best of
 * three, random destinations through: fib_lookup4_rcu on main, then
 * the same with fib_result_get reading the route as any answer must (the
 * baseline the fast path should stay within 1.1 times of), fib_resolve_rcu and
 * fib_resolve_batch_rcu with the default rules, then with 1, 16 and 256
 * rules ahead of main that the flows do not match (fwmark rules: the walk
 * reads them all). Prints one line per mode: ns per lookup and the ratio
 * to fib_lookup4_rcu. MAXRULES stops after the modes with at most that
 * many rules (0: the default rules only, for callgrind). Run by hand; not
 * part of make check.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fib/fib.h"
#include "fib/policy.h"
#include "tests/util/rng.h"
#include "tests/util/routes.h"
#include "tests/util/tablegen.h"

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000
#endif

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile uint64_t sink;

/* lookups of a[i], or with fl of the destinations of the flows (the
 * lookup as a caller holding flows makes it: the same struct fib_flow
 * array the resolution reads); describe: read the route as an answer
 * must */
static double
time_lookup(const struct fib *fib, const uint32_t *a, const struct fib_flow *fl, size_t n,
	    int describe)
{
	double best = 1e9;

	for (int run = 0; run < 3; run++) {
		uint64_t s = 0;
		double t0 = now();
		fib_read_lock();
		for (size_t i = 0; i < n; i++) {
			struct fib_result r =
				fib_lookup4_rcu(fib, 254, fl ? ntohl(fl[i].dst.v4.s_addr) : a[i]);
			struct fib_match m;
			if (!describe)
				s += (uintptr_t)r.alias;
			else if (fib_result_get(&r, &m) == 0)
				s += m.plen + m.info->nh_count;
		}
		fib_read_unlock();
		sink += s;
		if (now() - t0 < best)
			best = now() - t0;
	}
	return best * 1e9 / n;
}

static double
time_resolve(const struct fib *fib, const struct fib_flow *fl, size_t n, int batch)
{
	enum { B = 64 };
	struct fib_decision d[B];
	double best = 1e9;

	for (int run = 0; run < 3; run++) {
		uint64_t s = 0;
		double t0 = now();
		fib_read_lock();
		if (batch) {
			for (size_t i = 0; i + B <= n; i += B) {
				fib_resolve_batch_rcu(fib, fl + i, d, B);
				s += d[0].plen + d[B - 1].path;
			}
		} else {
			for (size_t i = 0; i < n; i++) {
				fib_resolve_rcu(fib, &fl[i], d);
				s += d[0].plen + d[0].path;
			}
		}
		fib_read_unlock();
		sink += s;
		if (now() - t0 < best)
			best = now() - t0;
	}
	return best * 1e9 / n;
}

static void
local_route(struct fib *fib, const char *pfx, uint8_t type)
{
	struct fib_nh nh = { .ifindex = 2, .weight = 1 };
	struct fib_route r = { .table = 255, .type = type, .scope = 254, .nh_count = 1, .nh = &nh };

	fib_prefix_parse(pfx, &r.dst, &r.plen, &r.family);
	fib_add(fib, &r, 0);
}

int
main(int argc, char **argv)
{
	size_t nroutes = argc > 1 ? strtoul(argv[1], NULL, 10) : 500000;
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000000;
	unsigned maxrules = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 256;
	struct tablegen_params tp;
	struct routes rt;
	struct fib *fib = fib_new(NULL);
	uint32_t *a = malloc(n * sizeof(*a));
	struct fib_flow *fl = calloc(n, sizeof(*fl));
	struct rng g;
	double base, t;
	unsigned added = 0;

	if (!fib || !a || !fl)
		return 1;
	tablegen_params_default(&tp, AF_INET);
	tp.n = nroutes;
	routes_init(&rt);
	if (tablegen_make(&tp, &rt)) {
		fprintf(stderr, "resolvebench: cannot build the table\n");
		return 1;
	}
	/* as in a kernel table, every next hop leaves through a device:
	 * eth2..eth32, each with one address (below) */
	for (size_t i = 0; i < rt.n; i++)
		if (rt.r[i].nh_count)
			rt.nh[i].ifindex = 2 + ntohl(rt.nh[i].gw.v4.s_addr) % 31;
	if (fib_load(fib, rt.r, rt.n)) {
		fprintf(stderr, "resolvebench: cannot build the table\n");
		return 1;
	}
	for (uint32_t i = 1; i <= 32; i++) {
		struct fib_link l = { .ifindex = i, .flags = IFF_UP | IFF_LOWER_UP };
		struct fib_ifaddr ad = { .family = AF_INET, .plen = 24, .ifindex = i };
		snprintf(l.name, sizeof(l.name), i == 1 ? "lo" : "eth%u", i);
		fib_link_set(fib, &l);
		ad.addr.v4.s_addr = htonl(0x0a000001u + (i << 8));
		fib_ifaddr_add(fib, &ad);
	}
	fib_policy_publish(fib);
	local_route(fib, "10.0.2.1/32", FIB_LOCAL);
	local_route(fib, "10.0.2.255/32", FIB_BROADCAST);
	local_route(fib, "127.0.0.0/8", FIB_LOCAL);
	local_route(fib, "127.0.0.1/32", FIB_LOCAL);
	rng_seed(&g, 1);
	for (size_t i = 0; i < n; i++) {
		a[i] = (uint32_t)rng_next(&g);
		fl[i].family = AF_INET;
		fl[i].dst.v4.s_addr = htonl(a[i]);
	}
	fib_thread_online();
	{
		size_t miss = 0, srcs = 0;
		struct fib_decision d;
		fib_read_lock();
		for (size_t i = 0; i < n; i++) {
			fib_resolve_rcu(fib, &fl[i], &d);
			miss += d.error != 0;
			srcs += (d.flags & FIB_D_SRC) != 0;
		}
		fib_read_unlock();
		printf("flows %zu, unrouted %zu, with a source %zu\n", n, miss, srcs);
	}
	/* the lookup alone never reads the route; an answer must (type,
	 * prefix, next hops): the second line is the fair baseline */
	printf("%-28s %7.1f ns\n", "fib_lookup4_rcu main", time_lookup(fib, a, NULL, n, 0));
	base = time_lookup(fib, a, NULL, n, 1);
	printf("%-28s %7.1f ns  1.00\n", "lookup4 + fib_result_get", base);
	t = time_lookup(fib, NULL, fl, n, 1);
	printf("%-28s %7.1f ns  %.2f\n", "the same, dst from flows", t, t / base);
	for (int k = 0; k < 5; k++) {
		static const unsigned want[] = { 0, 0, 1, 16, 256 };
		char name[64];

		if (want[k] > maxrules)
			break;
		while (added < want[k]) {
			struct fib_rule r;
			fib_rule_init(&r, AF_INET);
			r.priority = 1000 + added;
			r.mark = 1;
			r.mark_mask = 0xff;
			r.table = 100;
			fib_rule_add(fib, &r);
			added++;
		}
		fib_policy_publish(fib);
		snprintf(name, sizeof(name), "resolve%s rules %s%u", k == 1 ? "_batch" : "",
			 want[k] ? "+" : "default", want[k]);
		t = time_resolve(fib, fl, n, k == 1);
		printf("%-28s %7.1f ns  %.2f\n", name, t, t / base);
	}
	fib_thread_offline();
	fib_free(fib);
	routes_free(&rt);
	free(a);
	free(fl);
	return 0;
}
