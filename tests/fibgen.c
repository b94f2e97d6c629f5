/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fibgen, write a deterministic BGP-like routing table
 *
 *   fibgen [-6] [-n ROUTES] [-s SEED] [-H NEXTHOPS] [-o FILE] [-S]
 *   fibgen -S -r FILE
 *
 * Writes the routes file of doc/architecture.md (`PREFIX/LEN NEXTHOP`, sorted,
 * canonical, no duplicates) made by tests/util/tablegen.c: 1,000,000 IPv4
 * routes by default, 200,000 IPv6 with -6. -S prints the table's shape
 * (length mix, nesting, clustering, siblings, next hops) to stderr; with
 * -r it measures an existing file instead, to compare with real tables.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tests/util/routes.h"
#include "tests/util/tablegen.h"

static void
fibgen_usage(void)
{
	fprintf(stderr, "usage: fibgen [-6] [-n ROUTES] [-s SEED] [-H NEXTHOPS] [-o FILE] [-S]\n"
			"       fibgen -S -r FILE\n");
	exit(2);
}

static void
fibgen_print_stats(const struct routes *rt)
{
	struct tablegen_stats st;
	double n;

	if (tablegen_stats(rt, &st) < 0) {
		fprintf(stderr, "fibgen: out of memory\n");
		return;
	}
	n = st.n ? (double)st.n : 1;
	fprintf(stderr, "routes %zu, unsorted or duplicate %zu\nlengths:", st.n, st.unsorted);
	for (unsigned l = 0; l <= 128; l++)
		if (st.by_len[l] && st.by_len[l] * 1000 >= st.n)
			fprintf(stderr, " /%u %.1f%%", l, 100.0 * st.by_len[l] / n);
	fprintf(stderr, "\nnested %.1f%%, depth 0/1/2/3/4+ = %.1f/%.1f/%.1f/%.1f/%.1f%%\n",
		100.0 * (st.n - st.depth[0]) / n, 100.0 * st.depth[0] / n, 100.0 * st.depth[1] / n,
		100.0 * st.depth[2] / n, 100.0 * st.depth[3] / n, 100.0 * st.depth[4] / n);
	fprintf(stderr, "blocks (/%u) %zu, mean %.1f, max %zu; regions (/%u) %zu\n",
		rt->family == AF_INET ? 16 : 32, st.blocks,
		st.blocks ? (double)(st.n - st.by_len[0]) / st.blocks : 0.0, st.block_max,
		rt->family == AF_INET ? 8 : 12, st.regions);
	fprintf(stderr, "/%zu with sibling %.1f%%; busiest next hop %.1f%%; covered with parent's "
			"next hop %.1f%%\n",
		st.sib_len, st.sib_total ? 100.0 * st.sib_paired / st.sib_total : 0.0,
		100.0 * st.nh_major / n,
		st.n > st.depth[0] ? 100.0 * st.covered_same / (st.n - st.depth[0]) : 0.0);
}

int
main(int argc, char **argv)
{
	struct tablegen_params p;
	const char *out = NULL, *in = NULL;
	int c, family = AF_INET, stats = 0, err;
	long long n = -1, nh = -1;
	unsigned long long seed = 1;
	struct routes rt;
	char msg[512];
	FILE *f = stdout;

	while ((c = getopt(argc, argv, "6n:s:H:o:Sr:h")) != -1) {
		switch (c) {
		case '6':
			family = AF_INET6;
			break;
		case 'n':
			n = strtoll(optarg, NULL, 0);
			if (n < 0)
				fibgen_usage();
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'H':
			nh = strtoll(optarg, NULL, 0);
			if (nh < 0 || nh > 65534)
				fibgen_usage();
			break;
		case 'o':
			out = optarg;
			break;
		case 'S':
			stats = 1;
			break;
		case 'r':
			in = optarg;
			break;
		default:
			fibgen_usage();
		}
	}
	if (optind != argc)
		fibgen_usage();
	routes_init(&rt);
	if (in) {
		if ((err = routes_read(&rt, in, msg, sizeof(msg))) < 0) {
			fprintf(stderr, "fibgen: %s\n", msg);
			return 1;
		}
		fibgen_print_stats(&rt);
		routes_free(&rt);
		return 0;
	}
	tablegen_params_default(&p, family);
	if (n >= 0)
		p.n = (size_t)n;
	if (nh >= 0)
		p.nexthops = (unsigned)nh;
	p.seed = seed;
	if ((err = tablegen_make(&p, &rt)) < 0) {
		fprintf(stderr, "fibgen: %s\n", strerror(-err));
		return 1;
	}
	if (out && !(f = fopen(out, "w"))) {
		fprintf(stderr, "fibgen: %s: %s\n", out, strerror(errno));
		return 1;
	}
	if (routes_write(&rt, f) < 0 || (out && fclose(f))) {
		fprintf(stderr, "fibgen: write error\n");
		return 1;
	}
	if (stats)
		fibgen_print_stats(&rt);
	routes_free(&rt);
	return 0;
}
