/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: peer, DPDK rte_fib side by side (see peer.h)
 *
 * Set up as the stand-alone DPDK reference benchmarks were, so that its
 * figures can be checked against theirs: EAL without PCI (--in-memory on
 * hugetlbfs, or --no-huge, as peer_huge says; --no-pci -m 2048
 * --no-shconf --no-telemetry), DIR-24-8 with 4-byte next hops and 65536
 * tbl8 groups, rte_fib6 TRIE with 4-byte next hops and 2^20 tbl8 groups,
 * bulk lookups 64 addresses at a time, one timed pass per call, so that
 * fibbench can alternate them with its own. DPDK tables are built route by
 * route: rte_fib has no bulk load.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <rte_eal.h>
#include <rte_fib.h>
#include <rte_fib6.h>

#include "tests/bench/peer.h"

static double
peer_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/*
 * The pages rte_fib gets: 2 MiB huge pages when libfib's tables get them
 * too (transparent huge pages not "never": libfib advises
 * MADV_HUGEPAGE) and the machine has hugetlbfs mounted with 1024 pages
 * (2 GiB) free, as DPDK is normally run; else ordinary 4 KiB pages for
 * both (fibbench then turns libfib's off: PR_SET_THP_DISABLE), so that
 * the ratio compares the structures, not the page sizes. FIBBENCH_HUGE=0
 * forces ordinary pages.
 */
int
peer_huge(void)
{
	const char *e = getenv("FIBBENCH_HUGE");
	char l[512];
	long freep = 0;
	int mounted = 0, thp = 0;
	FILE *f;

	if (e && !strcmp(e, "0"))
		return 0;
	if ((f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r"))) {
		thp = fgets(l, sizeof(l), f) && !strstr(l, "[never]");
		fclose(f);
	}
	if ((f = fopen("/proc/mounts", "r"))) {
		while (fgets(l, sizeof(l), f))
			mounted |= strstr(l, " hugetlbfs ") != NULL;
		fclose(f);
	}
	if ((f = fopen("/proc/meminfo", "r"))) {
		while (fgets(l, sizeof(l), f))
			sscanf(l, "HugePages_Free: %ld", &freep);
		fclose(f);
	}
	return thp && mounted && freep >= 1024;
}

static const char *peer_pages = "4K";

static int
peer_eal(char *err, size_t errlen)
{
	static int done;
	int huge = peer_huge();
	char *argv[] = { "fibbench", huge ? "--in-memory" : "--no-huge", "--no-pci", "-m", "2048",
			 "--no-shconf", "--no-telemetry", "--log-level=lib.eal:error", NULL };

	if (done)
		return 0;
	if (rte_eal_init(8, argv) < 0) {
		snprintf(err, errlen, "rte_eal_init failed");
		return -EIO;
	}
	peer_pages = huge ? "2M" : "4K";
	done = 1;
	return 0;
}

struct peer {
	int family;
	struct rte_fib *f4;
	struct rte_fib6 *f6;
	uint64_t *out; /* next hops of the last pass: route line numbers */
	size_t n;
};

static int
peer_build4(struct peer *p, const struct routes *rt, struct peer_result *res, char *err,
	    size_t errlen)
{
	struct rte_fib_conf fc = {
		.type = RTE_FIB_DIR24_8,
		.default_nh = 0,
		.max_routes = (int)rt->n + 16,
		.dir24_8 = { .nh_sz = RTE_FIB_DIR24_8_4B, .num_tbl8 = 1 << 16 },
	};

	res->name = "rte_fib_dir24_8_bulk64";
	p->f4 = rte_fib_create("fibbench", 0, &fc);
	if (!p->f4) {
		snprintf(err, errlen, "rte_fib_create failed");
		return -ENOMEM;
	}
	for (size_t i = 0; i < rt->n; i++)
		if (rte_fib_add(p->f4, ntohl(rt->r[i].dst.v4.s_addr), rt->r[i].plen, rt->line[i]) <
		    0) {
			snprintf(err, errlen, "rte_fib_add failed on line %u", rt->line[i]);
			return -ENOSPC;
		}
	return 0;
}

static int
peer_build6(struct peer *p, const struct routes *rt, struct peer_result *res, char *err,
	    size_t errlen)
{
	struct rte_fib6_conf fc = {
		.type = RTE_FIB6_TRIE,
		.default_nh = 0,
		.max_routes = (int)rt->n + 16,
		.trie = { .nh_sz = RTE_FIB6_TRIE_4B, .num_tbl8 = 1 << 20 },
	};

	res->name = "rte_fib6_trie_bulk64";
	p->f6 = rte_fib6_create("fibbench6", 0, &fc);
	if (!p->f6) {
		snprintf(err, errlen, "rte_fib6_create failed");
		return -ENOMEM;
	}
	for (size_t i = 0; i < rt->n; i++)
		if (rte_fib6_add(p->f6, rt->r[i].dst.b, rt->r[i].plen, rt->line[i]) < 0) {
			snprintf(err, errlen, "rte_fib6_add failed on line %u", rt->line[i]);
			return -ENOSPC;
		}
	return 0;
}

void
peer_free(struct peer *p)
{
	if (!p)
		return;
	if (p->f4)
		rte_fib_free(p->f4);
	if (p->f6)
		rte_fib6_free(p->f6);
	free(p->out);
	free(p);
}

int
peer_new(const struct routes *rt, size_t n, struct peer **out, struct peer_result *res,
	 char *err, size_t errlen)
{
	struct peer *p;
	double t0;
	int ret;

	memset(res, 0, sizeof(*res));
	*out = NULL;
	if ((ret = peer_eal(err, errlen)) < 0)
		return ret;
	res->pages = peer_pages;
	p = calloc(1, sizeof(*p));
	if (p)
		p->out = malloc((n ? n : 1) * sizeof(*p->out));
	if (!p || !p->out) {
		free(p);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->family = rt->family;
	p->n = n;
	t0 = peer_now();
	ret = rt->family == AF_INET ? peer_build4(p, rt, res, err, errlen)
				    : peer_build6(p, rt, res, err, errlen);
	res->build_s = peer_now() - t0;
	if (ret < 0) {
		peer_free(p);
		return ret;
	}
	res->best_s = 1e30;
	*out = p;
	return 0;
}

double
peer_pass(struct peer *p, const struct trace *t, struct peer_result *res)
{
	double t0 = peer_now(), d;

	for (size_t i = 0; i < t->n; i += 64) {
		size_t k = t->n - i < 64 ? t->n - i : 64;

		/* rte_fib takes a non-const array it does not write */
		if (p->family == AF_INET)
			rte_fib_lookup_bulk(p->f4, (uint32_t *)&t->a4[i], &p->out[i], (int)k);
		else
			rte_fib6_lookup_bulk(p->f6, &t->a6[i], &p->out[i], (int)k);
	}
	d = peer_now() - t0;
	if (d < res->best_s)
		res->best_s = d;
	res->checksum = 0;
	for (size_t i = 0; i < t->n; i++)
		res->checksum += p->out[i];
	return d;
}
