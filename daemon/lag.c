/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: lag.c, the loop-lateness histogram
 *
 * See lag.h for the bucket layout and what the samples are.
 */
#include "config.h"

#include "daemon/lag.h"

static unsigned
lag_bucket(uint64_t us)
{
	unsigned e;

	if (us < LAG_SUB)
		return (unsigned)us;
	e = 63u - (unsigned)__builtin_clzll(us);
	if (e - 3 >= LAG_BUCKETS / LAG_SUB)
		return LAG_BUCKETS - 1;
	return LAG_SUB * (e - 3) + (unsigned)((us >> (e - 4)) & (LAG_SUB - 1));
}

/* The largest value bucket i holds. */
static uint64_t
lag_bucket_high(unsigned i)
{
	unsigned e, s;

	if (i < LAG_SUB)
		return i;
	e = i / LAG_SUB + 3;
	s = i % LAG_SUB;
	return ((uint64_t)(LAG_SUB + s + 1) << (e - 4)) - 1;
}

void
lag_hist_add(struct lag_hist *h, uint64_t us)
{
	h->b[lag_bucket(us)]++;
	h->count++;
	h->sum_us += us;
	if (us > h->max_us)
		h->max_us = us;
}

uint64_t
lag_hist_quantile(const struct lag_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	if (q > 1)
		q = 1;
	rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++; /* ceil, without libm */
	if (rank < 1)
		rank = 1;
	for (unsigned i = 0; i < LAG_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			/* the last bucket also holds everything past its end */
			uint64_t v = i == LAG_BUCKETS - 1 ? h->max_us : lag_bucket_high(i);

			return v < h->max_us ? v : h->max_us;
		}
	}
	return h->max_us;
}

const char *
lag_phase_name(enum lag_phase p)
{
	static const char *const names[LAG_PHASES] = {
		[LAG_LOAD] = "load",
		[LAG_STEADY] = "steady",
		[LAG_RESYNC] = "resync",
		[LAG_COMPACT] = "compaction",
		[LAG_RELOAD] = "reload",
	};

	return (unsigned)p < LAG_PHASES ? names[p] : "?";
}
