/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: tests of the compaction decision (daemon/compact)
 *
 * compact_decide against a table of hand-checked cases (each edge of the
 * minimum and of the margin, no reference yet, forced), then against a
 * naive model in exact integer arithmetic on random inputs of realistic
 * size: compact exactly when the FIB holds at least COMPACT_MIN_BYTES and
 * more than margin percent over a bulk build's bytes per route. Then
 * compact_quiet_step through scenarios of 1 s ticks: churn then quiet,
 * heavy churn and busy ticks that restart the quiet period, the second
 * pass and the reference after one quiet second, both dropped by churn,
 * and compact_quiet 0.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "daemon/compact.h"
#include "tests/unit/ck_run.h"

#define MB (1ull << 20)

static const struct {
	struct compact_input in;
	int compact;
	enum compact_why why;
} cases[] = {
    /* 100 MB built for 1M routes; the same routes now */
    {{100 * MB, 1000000, 100 * MB, 1000000, 20, 0}, 0, COMPACT_UNDER_MIN},
    {{120 * MB, 1000000, 100 * MB, 1000000, 20, 0}, 0, COMPACT_UNDER_MARGIN},
    {{120 * MB + 1, 1000000, 100 * MB, 1000000, 20, 0}, 1, COMPACT_OVER_MARGIN},
    {{150 * MB, 1000000, 100 * MB, 1000000, 20, 0}, 1, COMPACT_OVER_MARGIN},
    /* twice the routes: twice the bytes expected */
    {{230 * MB, 2000000, 100 * MB, 1000000, 20, 0}, 0, COMPACT_UNDER_MARGIN},
    {{250 * MB, 2000000, 100 * MB, 1000000, 20, 0}, 1, COMPACT_OVER_MARGIN},
    /* margin 0: any growth past the minimum */
    {{101 * MB, 1000000, 100 * MB, 1000000, 0, 0}, 1, COMPACT_OVER_MARGIN},
    {{101 * MB - 1, 1000000, 100 * MB, 1000000, 0, 0}, 0, COMPACT_UNDER_MIN},
    /* a small table: past the margin but under the minimum */
    {{900 * 1024, 1000, 300 * 1024, 1000, 20, 0}, 0, COMPACT_UNDER_MIN},
    /* no bulk build measured: anything past the minimum */
    {{MB - 1, 5000, 0, 0, 20, 0}, 0, COMPACT_UNDER_MIN},
    {{MB, 5000, 0, 0, 20, 0}, 1, COMPACT_OVER_MARGIN},
    /* forced: always, whatever the sizes */
    {{0, 0, 100 * MB, 1000000, 20, 1}, 1, COMPACT_FORCED},
    {{100 * MB, 1000000, 100 * MB, 1000000, 20, 1}, 1, COMPACT_FORCED},
};

START_TEST(test_table)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct compact_decision d;

		compact_decide(&cases[i].in, &d);
		ck_assert_msg(d.compact == cases[i].compact && d.why == cases[i].why,
			      "case %zu: compact %d (%s), expected %d (%s)", i, d.compact,
			      compact_why_name(d.why), cases[i].compact,
			      compact_why_name(cases[i].why));
	}
}
END_TEST

/* The rule in exact arithmetic: expected rounded down as the double
 * product is (exact below 2^53), then the two comparisons. */
static int
model(const struct compact_input *in)
{
	unsigned __int128 expected = 0;

	if (in->force)
		return 1;
	if (in->built_routes)
		expected = (unsigned __int128)in->built_bytes * in->routes / in->built_routes;
	return in->bytes >= expected + COMPACT_MIN_BYTES &&
	       (unsigned __int128)in->bytes * 100 > expected * (100 + in->margin);
}

static uint64_t
rnd(uint64_t max)
{
	uint64_t r = ((uint64_t)random() << 31) ^ (uint64_t)random();

	return max ? r % max : 0;
}

START_TEST(test_model)
{
	srandom(12);
	for (int i = 0; i < 200000; i++) {
		struct compact_input in = {
		    .built_routes = (size_t)rnd(4) ? (size_t)rnd(2000000) : 0,
		    .routes = (size_t)rnd(2000000),
		    .margin = (unsigned)rnd(200),
		    .force = rnd(50) == 0,
		};
		struct compact_decision d;
		uint64_t per_route = 64 + rnd(200);

		in.built_bytes = in.built_routes * per_route;
		/* around the expected size, where the edges are */
		in.bytes = in.routes * per_route * (50 + rnd(150)) / 100 + rnd(4 * MB);
		compact_decide(&in, &d);
		/* the double product may round the expected bytes by one */
		if (d.compact != model(&in)) {
			struct compact_input up = in, down = in;

			up.bytes++;
			down.bytes = in.bytes ? in.bytes - 1 : 0;
			ck_assert_msg(
			    model(&up) != model(&down),
			    "bytes %llu routes %zu built %llu/%zu margin %u: %d, model %d",
			    (unsigned long long)in.bytes, in.routes,
			    (unsigned long long)in.built_bytes, in.built_routes, in.margin,
			    d.compact, model(&in));
		}
		ck_assert_int_eq(d.compact,
				 d.why == COMPACT_FORCED || d.why == COMPACT_OVER_MARGIN);
	}
}
END_TEST

#define W      COMPACT_WAIT
#define P      COMPACT_PASS2
#define R      COMPACT_REFERENCE
#define SETTLE COMPACT_SETTLE

struct tick {
	double now;
	uint64_t gen;
	int busy;
	enum compact_step step;
};

static const struct scenario {
	const char *name;
	struct compact_quiet q; /* at the start (gen 100 at t=0) */
	uint64_t quiet_us;
	struct tick t[16];
} scenarios[] = {
    {"no churn, no settle",
     {100, 100, 0, 0, 0, 0},
     10000000,
     {{1, 100, 0, W}, {5, 100, 0, W}, {20, 100, 0, W}}},
    {"churn, then 10 s quiet",
     {100, 100, 0, 0, 0, 0},
     10000000,
     {{1, 100, 0, W},
      {2, 110, 0, W},
      {9, 110, 0, W},
      {10, 110, 0, SETTLE},
      {11, 110, 0, W},
      {30, 110, 0, W}}},
    {"heavy churn restarts the period",
     {100, 100, 0, 0, 0, 0},
     10000000,
     {{1, 100, 0, W}, {3, 300, 0, W}, {4, 300, 0, W}, {12, 300, 0, W}, {13, 300, 0, SETTLE}}},
    {"a busy tick restarts the period",
     {100, 100, 0, 0, 0, 0},
     10000000,
     {{2, 110, 0, W}, {5, 110, 1, W}, {14, 110, 0, W}, {15, 110, 0, SETTLE}}},
    {"second pass after a quiet second",
     {100, 100, 0, 0, 1, 0},
     10000000,
     {{0.5, 100, 0, W}, {1, 100, 0, P}, {2, 100, 0, P}}},
    {"second pass dropped by churn, then a settle",
     {100, 100, 0, 0, 1, 0},
     10000000,
     {{1, 104, 0, W}, {9, 104, 0, W}, {10, 104, 0, SETTLE}, {11, 104, 0, W}}},
    {"reference after a quiet second",
     {100, 100, 0, 0, 0, 1},
     10000000,
     {{0.5, 100, 1, W}, {1.2, 100, 0, W}, {1.5, 100, 0, R}}},
    {"reference dropped by churn",
     {100, 100, 0, 0, 0, 1},
     10000000,
     {{1, 102, 0, W}, {10, 102, 0, SETTLE}}},
    {"compact_quiet 0: never settles",
     {100, 100, 0, 0, 0, 0},
     0,
     {{1, 150, 0, W}, {100, 150, 0, W}, {1000, 150, 0, W}}},
};

START_TEST(test_quiet)
{
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		const struct scenario *sc = &scenarios[i];
		struct compact_quiet q = sc->q;

		for (size_t k = 0; k < 16 && sc->t[k].now > 0; k++) {
			const struct tick *t = &sc->t[k];
			enum compact_step step =
			    compact_quiet_step(&q, t->gen, t->busy, t->now, sc->quiet_us);

			ck_assert_msg(step == t->step, "%s: tick at %.1f s: step %d, expected %d",
				      sc->name, t->now, step, t->step);
		}
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("compact");
	TCase *tc = tcase_create("decide");

	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_model);
	tcase_add_test(tc, test_quiet);
	suite_add_tcase(s, tc);
	return ck_run(s, CK_FORK_GETENV);
}
