/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fibl, an example client of fibd's batch lookup service
 *
 *   fibl [-s SOCKET] ADDR...          answers as `fibctl lookup` prints them
 *   fibl [-s SOCKET] -                addresses from stdin, 256 a request
 *   fibl [-s SOCKET] --bench SECONDS [-6] [FILE]
 *                                     lookups/s from this one client, batches
 *                                     of 256 addresses: random, or cycling
 *                                     through the addresses in FILE
 *
 * Everything it needs is in lookup_proto.h (header-only; installed as
 * <fib/lookup_proto.h>, daemon/lookup_proto.h in the tree): connect,
 * build a batch, lookup_client_query, walk the results and next hops.
 */
#include "config.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/lookup_proto.h"

static const char *
fibl_type(unsigned t)
{
	static const char *names[] = { "-", "unicast", "local", "broadcast", "anycast",
				       "multicast", "blackhole", "unreachable", "prohibit",
				       "throw" };

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

static void
fibl_print(int family, const uint8_t *addr, const struct lookup_result *r,
	   const struct lookup_nh *nh)
{
	char a[INET6_ADDRSTRLEN], p[INET6_ADDRSTRLEN], g[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	inet_ntop(family, addr, a, sizeof(a));
	if (r->type == 0) {
		printf("%s -\n", a);
		return;
	}
	inet_ntop(family, r->prefix, p, sizeof(p));
	printf("%s %s/%u %s", a, p, r->plen, fibl_type(r->type));
	for (unsigned k = 0; k < r->nh_count; k++) {
		const struct lookup_nh *n = &nh[r->nh_first + k];

		if (r->nh_count > 1)
			printf(" nexthop");
		if (n->gw_family) {
			inet_ntop(n->gw_family, n->gw, g, sizeof(g));
			printf(" via %s", g);
		}
		if (n->ifindex) {
			if (if_indextoname(n->ifindex, dev))
				printf(" dev %s", dev);
			else
				printf(" dev if%u", n->ifindex);
		}
		if (r->nh_count > 1)
			printf(" weight %u", n->weight);
	}
	putchar('\n');
}

/* Query a batch of one family and print it. */
static int
fibl_batch(int fd, int family, uint8_t (*addrs)[16], unsigned n, void *buf)
{
	uint8_t packed[LOOKUP_BATCH_MAX * 16];
	size_t alen = family == AF_INET6 ? 16 : 4;
	const struct lookup_resp *resp;
	const struct lookup_result *res = NULL;
	const struct lookup_nh *nh = NULL;
	int rc;

	if (!n)
		return 0;
	for (unsigned i = 0; i < n; i++)
		memcpy(packed + i * alen, addrs[i], alen);
	rc = lookup_client_query(fd, family, 0, packed, n, buf, &resp, &res, &nh);
	if (rc < 0) {
		fprintf(stderr, "fibl: lookup: %s\n", strerror(-rc));
		return rc;
	}
	for (unsigned i = 0; i < n; i++)
		fibl_print(family, addrs[i], &res[i], nh);
	return 0;
}

static double
fibl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
fibl_bench(int fd, double seconds, int family, const char *file, void *buf)
{
	size_t alen = family == AF_INET6 ? 16 : 4, n = 0, cap = 1 << 16, off = 0;
	uint8_t *addrs = malloc(cap * alen);
	const struct lookup_resp *resp;
	const struct lookup_result *res;
	const struct lookup_nh *nh;
	uint64_t lookups = 0, matched = 0, x = 88172645463325252ull;
	double t0, t;

	if (!addrs)
		return 1;
	if (file) {
		char line[128];
		FILE *f = fopen(file, "r");

		if (!f) {
			perror(file);
			return 1;
		}
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, " /\t\r\n")] = 0;
			if (n == cap) {
				cap *= 2;
				addrs = realloc(addrs, cap * alen);
			}
			if (inet_pton(family, line, addrs + n * alen) == 1)
				n++;
		}
		fclose(f);
	} else {
		for (n = 0; n < cap; n++)
			for (size_t b = 0; b < alen; b++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				addrs[n * alen + b] = (uint8_t)x;
			}
	}
	if (n < LOOKUP_BATCH_MAX) {
		fprintf(stderr, "fibl: need at least %d addresses\n", LOOKUP_BATCH_MAX);
		return 1;
	}
	t0 = fibl_now();
	do {
		for (int k = 0; k < 64; k++) {
			int rc;

			if (off + LOOKUP_BATCH_MAX > n)
				off = 0;
			rc = lookup_client_query(fd, family, 0, addrs + off * alen, LOOKUP_BATCH_MAX,
						 buf, &resp, &res, &nh);
			if (rc < 0) {
				fprintf(stderr, "fibl: lookup: %s\n", strerror(-rc));
				return 1;
			}
			for (unsigned i = 0; i < LOOKUP_BATCH_MAX; i++)
				matched += res[i].type != 0;
			off += LOOKUP_BATCH_MAX;
			lookups += LOOKUP_BATCH_MAX;
		}
		t = fibl_now() - t0;
	} while (t < seconds);
	printf("{\"lookups\": %llu, \"seconds\": %.3f, \"mlps\": %.3f, \"batch\": %d, "
	       "\"matched\": %llu}\n",
	       (unsigned long long)lookups, t, (double)lookups / t * 1e-6, LOOKUP_BATCH_MAX,
	       (unsigned long long)matched);
	free(addrs);
	return 0;
}

int
main(int argc, char **argv)
{
	static uint64_t buf[LOOKUP_RESP_MAX / 8 + 1];
	static uint8_t a4[LOOKUP_BATCH_MAX][16], a6[LOOKUP_BATCH_MAX][16];
	const char *path = NULL;
	unsigned n4 = 0, n6 = 0;
	int fd, i = 1, family = AF_INET, rc = 0;
	char line[128];

	if (i + 1 < argc && !strcmp(argv[i], "-s")) {
		path = argv[i + 1];
		i += 2;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: fibl [-s SOCKET] ADDR... | - | --bench SECONDS [-6] [FILE]\n");
		return 2;
	}
	fd = lookup_client_connect(path);
	if (fd < 0) {
		fprintf(stderr, "fibl: %s: %s\n", path ? path : LOOKUP_SOCKET, strerror(-fd));
		return 2;
	}
	if (!strcmp(argv[i], "--bench")) {
		double secs = i + 1 < argc ? atof(argv[i + 1]) : 1.0;

		i += 2;
		if (i < argc && !strcmp(argv[i], "-6")) {
			family = AF_INET6;
			i++;
		}
		return fibl_bench(fd, secs, family, i < argc ? argv[i] : NULL, buf);
	}
	int from_stdin = !strcmp(argv[i], "-");

	for (;;) {
		const char *s;
		uint8_t tmp[16];

		if (!from_stdin) {
			if (i >= argc)
				break;
			s = argv[i++];
		} else if (fgets(line, sizeof(line), stdin)) {
			line[strcspn(line, " \t\r\n")] = 0;
			if (!line[0])
				continue;
			s = line;
		} else {
			break;
		}
		if (inet_pton(AF_INET6, s, tmp) == 1) {
			memcpy(a6[n6++], tmp, 16);
		} else if (inet_pton(AF_INET, s, tmp) == 1) {
			memcpy(a4[n4++], tmp, 4);
		} else {
			fprintf(stderr, "fibl: bad address: %s\n", s);
			rc = 1;
		}
		if (n4 == LOOKUP_BATCH_MAX || n6 == LOOKUP_BATCH_MAX) {
			if (fibl_batch(fd, AF_INET, a4, n4, buf) || fibl_batch(fd, AF_INET6, a6, n6, buf))
				return 1;
			n4 = n6 = 0;
		}
	}
	if (fibl_batch(fd, AF_INET, a4, n4, buf) || fibl_batch(fd, AF_INET6, a6, n6, buf))
		return 1;
	close(fd);
	return rc;
}
