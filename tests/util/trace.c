/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: trace, lookup trace generators and files (see trace.h)
 *
 * Trace files are raw arrays; IPv4 words are converted from little-endian
 * on big-endian hosts so one file serves every machine. Zipf ranks are
 * drawn by binary search in the cumulative table of 1/k, built once per
 * trace (8 bytes a flow).
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/util/rng.h"
#include "tests/util/trace.h"

void
trace_free(struct trace *t)
{
	free(t->a4);
	free(t->a6);
	memset(t, 0, sizeof(*t));
}

static int
trace_alloc(struct trace *t, int family, size_t n)
{
	memset(t, 0, sizeof(*t));
	t->family = family;
	t->n = n;
	if (family == AF_INET)
		t->a4 = malloc((n ? n : 1) * sizeof(*t->a4));
	else
		t->a6 = malloc((n ? n : 1) * sizeof(*t->a6));
	if (!t->a4 && !t->a6)
		return -ENOMEM;
	return 0;
}

int
trace_uniform(struct trace *t, int family, size_t n, uint64_t seed)
{
	struct rng r;
	int err;

	if ((err = trace_alloc(t, family, n)) < 0)
		return err;
	rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++) {
		if (family == AF_INET) {
			t->a4[i] = (uint32_t)(rng_next(&r) >> 32);
		} else {
			uint64_t x = rng_next(&r), y = rng_next(&r);

			memcpy(t->a6[i], &x, 8);
			memcpy(t->a6[i] + 8, &y, 8);
		}
	}
	return 0;
}

/* One random address inside route k of rt, into a4 or a6. */
static void
trace_inside(const struct routes *rt, size_t k, struct rng *r, uint32_t *a4, uint8_t *a6)
{
	const struct fib_route *rr = &rt->r[k];

	if (rt->family == AF_INET) {
		uint32_t base = ntohl(rr->dst.v4.s_addr);
		uint32_t host = rr->plen == 32 ? 0 : (uint32_t)(rng_next(r) >> 32) >> rr->plen;

		*a4 = base | host;
	} else {
		memcpy(a6, rr->dst.b, 16);
		for (unsigned byte = rr->plen / 8; byte < 16; byte++) {
			uint8_t rnd = (uint8_t)(rng_next(r) >> 56);

			if (byte == rr->plen / 8)
				rnd &= 0xff >> (rr->plen % 8);
			a6[byte] |= rnd;
		}
	}
}

int
trace_routed(struct trace *t, const struct routes *rt, size_t n, uint64_t seed)
{
	struct rng r;
	int err;

	if (!rt->n)
		return -EINVAL;
	if ((err = trace_alloc(t, rt->family, n)) < 0)
		return err;
	rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++)
		trace_inside(rt, rng_below(&r, rt->n), &r, t->a4 ? &t->a4[i] : NULL,
			     t->a6 ? t->a6[i] : NULL);
	return 0;
}

int
trace_zipf(struct trace *t, const struct routes *rt, size_t n, size_t flows, uint64_t seed)
{
	struct trace fl;
	double *cdf, sum = 0;
	struct rng r;
	int err;

	if (!flows)
		return -EINVAL;
	if ((err = trace_routed(&fl, rt, flows, seed ^ 0x5a17)) < 0)
		return err;
	cdf = malloc(flows * sizeof(*cdf));
	if (!cdf || (err = trace_alloc(t, rt->family, n)) < 0) {
		free(cdf);
		trace_free(&fl);
		return err < 0 ? err : -ENOMEM;
	}
	for (size_t k = 0; k < flows; k++) {
		sum += 1.0 / (double)(k + 1);
		cdf[k] = sum;
	}
	rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++) {
		double u = rng_double(&r) * sum;
		size_t lo = 0, hi = flows - 1;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (cdf[mid] > u)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (t->a4)
			t->a4[i] = fl.a4[lo];
		else
			memcpy(t->a6[i], fl.a6[lo], 16);
	}
	free(cdf);
	trace_free(&fl);
	return 0;
}

int
trace_read(struct trace *t, int family, const char *path)
{
	size_t each = family == AF_INET ? 4 : 16, n;
	struct stat st;
	FILE *f;
	int err;

	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) < 0 || st.st_size % each) {
		fclose(f);
		return -EINVAL;
	}
	n = st.st_size / each;
	if ((err = trace_alloc(t, family, n)) < 0) {
		fclose(f);
		return err;
	}
	if (fread(t->a4 ? (void *)t->a4 : (void *)t->a6, each, n, f) != n) {
		fclose(f);
		trace_free(t);
		return -EIO;
	}
	fclose(f);
	if (t->a4)
		for (size_t i = 0; i < n; i++)
			t->a4[i] = le32toh(t->a4[i]);
	return 0;
}

int
trace_write(const struct trace *t, const char *path)
{
	FILE *f = fopen(path, "wb");
	int err = 0;

	if (!f)
		return -errno;
	for (size_t i = 0; i < t->n && !err; i++) {
		if (t->a4) {
			uint32_t le = htole32(t->a4[i]);

			err = fwrite(&le, 4, 1, f) != 1;
		} else {
			err = fwrite(t->a6[i], 16, 1, f) != 1;
		}
	}
	if (fclose(f) || err)
		return -EIO;
	return 0;
}
