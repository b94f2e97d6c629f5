/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: lag_test, the loop-lateness histogram against a sorted array
 *
 * Random samples (uniform, heavy-tailed, and runs of one value) go to a
 * struct lag_hist and to an array; every quantile the histogram reports
 * must lie between the array's exact quantile and that value plus 1/16
 * (the bucket width), and never above the largest sample.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/lag.h"
#include "tests/unit/ck_run.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t
model_quantile(const uint64_t *v, size_t n, double q)
{
	uint64_t rank = (uint64_t)ceil(q * (double)n);

	if (rank < 1)
		rank = 1;
	return v[rank - 1];
}

static uint64_t
draw(unsigned kind, unsigned *seed)
{
	switch (kind) {
	case 0:
		return (uint64_t)rand_r(seed) % 2000;            /* within a few ms */
	case 1:
		return (uint64_t)1 << (rand_r(seed) % 34);        /* every power, past the top */
	case 2:
		return (uint64_t)rand_r(seed) * (uint64_t)rand_r(seed) % 100000000;
	default:
		return 1234;                                      /* one value */
	}
}

START_TEST(test_model)
{
	static const double qs[] = {0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0};
	unsigned seed = 1 + (unsigned)_i;

	for (unsigned kind = 0; kind < 4; kind++) {
		size_t n = 1 + (size_t)rand_r(&seed) % 5000;
		uint64_t *v = calloc(n, sizeof(*v));
		struct lag_hist h;

		ck_assert_ptr_nonnull(v);
		memset(&h, 0, sizeof(h));
		for (size_t i = 0; i < n; i++) {
			v[i] = draw(kind, &seed);
			lag_hist_add(&h, v[i]);
		}
		qsort(v, n, sizeof(*v), cmp_u64);
		ck_assert_uint_eq(h.count, n);
		ck_assert_uint_eq(h.max_us, v[n - 1]);
		for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
			uint64_t want = model_quantile(v, n, qs[k]);
			uint64_t got = lag_hist_quantile(&h, qs[k]);
			/* past the top bucket only the max is exact */
			uint64_t slack = want >= ((uint64_t)1 << 33) ? v[n - 1] : want / 16 + 1;

			ck_assert_msg(got >= want && got <= want + slack && got <= v[n - 1],
				      "kind %u n %zu q %g: got %llu, exact %llu", kind, n, qs[k],
				      (unsigned long long)got, (unsigned long long)want);
		}
		free(v);
	}
}
END_TEST

START_TEST(test_edges)
{
	struct lag_hist h;

	memset(&h, 0, sizeof(h));
	ck_assert_uint_eq(lag_hist_quantile(&h, 0.5), 0);
	for (uint64_t us = 0; us < 70; us++)
		lag_hist_add(&h, us);
	/* below 16 us every value has a bucket of its own */
	ck_assert_uint_eq(lag_hist_quantile(&h, 1.0 / 70), 0);
	ck_assert_uint_eq(lag_hist_quantile(&h, 10.0 / 70), 9);
	ck_assert_uint_eq(lag_hist_quantile(&h, 1.0), 69);
	ck_assert_uint_eq(h.sum_us, 69 * 70 / 2);
	ck_assert_str_eq(lag_phase_name(LAG_LOAD), "load");
	ck_assert_str_eq(lag_phase_name(LAG_COMPACT), "compaction");
	ck_assert_str_eq(lag_phase_name(LAG_PHASES), "?");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("lag");
	TCase *tc = tcase_create("hist");

	tcase_add_loop_test(tc, test_model, 0, 50);
	tcase_add_test(tc, test_edges);
	suite_add_tcase(s, tc);
	return ck_run(s, CK_FORK_GETENV);
}
