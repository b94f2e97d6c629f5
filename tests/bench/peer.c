/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: peer, DPDK rte_fib side by side (see peer.h)
 *
 * Set up as the stand-alone DPDK reference benchmarks were, so that its
 * figures can be checked against theirs: EAL without hugepages or PCI
 * (--no-huge --no-pci -m 2048 --no-shconf --no-telemetry), DIR-24-8 with
 * 4-byte next hops and 65536 tbl8 groups, rte_fib6 TRIE with 4-byte next
 * hops and 2^20 tbl8 groups, bulk lookups 64 addresses at a time, best of
 * the runs. DPDK tables are built route by route: rte_fib has no bulk load.
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

static int
peer_run4(const struct routes *rt, const struct trace *t, int runs, struct peer_result *res,
	  uint64_t *out, char *err, size_t errlen)
{
	struct rte_fib_conf fc = {
		.type = RTE_FIB_DIR24_8,
		.default_nh = 0,
		.max_routes = (int)rt->n + 16,
		.dir24_8 = { .nh_sz = RTE_FIB_DIR24_8_4B, .num_tbl8 = 1 << 16 },
	};
	struct rte_fib *fib;
	double t0;

	res->name = "rte_fib_dir24_8_bulk64";
	t0 = peer_now();
	fib = rte_fib_create("fibbench", 0, &fc);
	if (!fib) {
		snprintf(err, errlen, "rte_fib_create failed");
		return -ENOMEM;
	}
	for (size_t i = 0; i < rt->n; i++) {
		if (rte_fib_add(fib, ntohl(rt->r[i].dst.v4.s_addr), rt->r[i].plen, rt->line[i]) < 0) {
			snprintf(err, errlen, "rte_fib_add failed on line %u", rt->line[i]);
			rte_fib_free(fib);
			return -ENOSPC;
		}
	}
	res->build_s = peer_now() - t0;
	res->best_s = 1e30;
	for (int r = 0; r < runs; r++) {
		double d;

		t0 = peer_now();
		for (size_t i = 0; i < t->n; i += 64) {
			size_t k = t->n - i < 64 ? t->n - i : 64;

			/* rte_fib takes a non-const array it does not write */
			rte_fib_lookup_bulk(fib, (uint32_t *)&t->a4[i], &out[i], (int)k);
		}
		d = peer_now() - t0;
		if (d < res->best_s)
			res->best_s = d;
	}
	rte_fib_free(fib);
	return 0;
}

static int
peer_run6(const struct routes *rt, const struct trace *t, int runs, struct peer_result *res,
	  uint64_t *out, char *err, size_t errlen)
{
	struct rte_fib6_conf fc = {
		.type = RTE_FIB6_TRIE,
		.default_nh = 0,
		.max_routes = (int)rt->n + 16,
		.trie = { .nh_sz = RTE_FIB6_TRIE_4B, .num_tbl8 = 1 << 20 },
	};
	struct rte_fib6 *fib;
	double t0;

	res->name = "rte_fib6_trie_bulk64";
	t0 = peer_now();
	fib = rte_fib6_create("fibbench6", 0, &fc);
	if (!fib) {
		snprintf(err, errlen, "rte_fib6_create failed");
		return -ENOMEM;
	}
	for (size_t i = 0; i < rt->n; i++) {
		if (rte_fib6_add(fib, rt->r[i].dst.b, rt->r[i].plen, rt->line[i]) < 0) {
			snprintf(err, errlen, "rte_fib6_add failed on line %u", rt->line[i]);
			rte_fib6_free(fib);
			return -ENOSPC;
		}
	}
	res->build_s = peer_now() - t0;
	res->best_s = 1e30;
	for (int r = 0; r < runs; r++) {
		double d;

		t0 = peer_now();
		for (size_t i = 0; i < t->n; i += 64) {
			size_t k = t->n - i < 64 ? t->n - i : 64;

			rte_fib6_lookup_bulk(fib, &t->a6[i], &out[i], (int)k);
		}
		d = peer_now() - t0;
		if (d < res->best_s)
			res->best_s = d;
	}
	rte_fib6_free(fib);
	return 0;
}

int
peer_run(const struct routes *rt, const struct trace *t, int runs, struct peer_result *res,
	 char *err, size_t errlen)
{
	uint64_t *out;
	int ret;

	memset(res, 0, sizeof(*res));
	if ((ret = peer_eal(err, errlen)) < 0)
		return ret;
	res->pages = peer_pages;
	out = malloc((t->n ? t->n : 1) * sizeof(*out));
	if (!out) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (rt->family == AF_INET)
		ret = peer_run4(rt, t, runs, res, out, err, errlen);
	else
		ret = peer_run6(rt, t, runs, res, out, err, errlen);
	for (size_t i = 0; !ret && i < t->n; i++)
		res->checksum += out[i];
	free(out);
	return ret;
}
