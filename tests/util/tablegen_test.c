/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: tablegen_test, the table generator keeps its promises
 *
 * Generates small tables of both families and checks the exact count,
 * sorted order without duplicates, canonical prefixes, the address space
 * rules, determinism for a seed, the next-hop addresses (10.0.0.2 up,
 * 2001:db8::2 up: never the .1 the namespace tests give themselves), and
 * the shape (length mix, nesting, siblings, next-hop skew) within generous
 * bounds of the tier-1 figures.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/routes.h"
#include "tests/util/tablegen.h"
#include "tests/unit/ck_run.h"

static void
make(struct routes *rt, int family, size_t n, uint64_t seed)
{
	struct tablegen_params p;

	tablegen_params_default(&p, family);
	p.n = n;
	p.seed = seed;
	routes_init(rt);
	ck_assert_int_eq(tablegen_make(&p, rt), 0);
}

static double
pct(size_t part, size_t n)
{
	return 100.0 * (double)part / (double)n;
}

START_TEST(test_v4_shape)
{
	struct tablegen_stats st;
	struct routes rt;
	size_t n = 50000, nested;

	make(&rt, AF_INET, n, 7);
	ck_assert_uint_eq(rt.n, n);
	ck_assert_int_eq(rt.family, AF_INET);
	ck_assert_int_eq(tablegen_stats(&rt, &st), 0);
	ck_assert_uint_eq(st.unsorted, 0);
	for (size_t i = 0; i < rt.n; i++) {
		uint32_t a = ntohl(rt.r[i].dst.v4.s_addr);
		unsigned o = a >> 24;

		ck_assert_uint_eq(rt.line[i], i + 1);
		ck_assert(o != 0 && o != 10 && o != 127 && o < 224);
		ck_assert(!(o == 192 && (a >> 16 & 0xff) == 168));
		ck_assert(!(o == 172 && (a >> 20 & 0xf) == 1));
		ck_assert(!(o == 100 && (a >> 22 & 0x3) == 1));
		ck_assert(rt.r[i].plen >= 8);
	}
	ck_assert_uint_eq(st.by_len[0], 0);
	ck_assert(pct(st.by_len[24], n) > 50 && pct(st.by_len[24], n) < 70);
	ck_assert(pct(st.by_len[22], n) > 8 && pct(st.by_len[22], n) < 16);
	ck_assert(pct(st.by_len[23], n) > 7 && pct(st.by_len[23], n) < 15);
	nested = n - st.depth[0];
	ck_assert(pct(nested, n) > 35 && pct(nested, n) < 65);
	ck_assert(pct(st.sib_paired, st.sib_total) > 60 && pct(st.sib_paired, st.sib_total) < 90);
	ck_assert(pct(st.nh_major, n) > 55 && pct(st.nh_major, n) < 90);
	ck_assert(pct(st.covered_same, nested) > 75);
	ck_assert(st.regions > 150 && st.regions <= 221);
	routes_free(&rt);
}
END_TEST

START_TEST(test_v6_shape)
{
	struct tablegen_stats st;
	struct routes rt;
	size_t n = 20000;

	make(&rt, AF_INET6, n, 3);
	ck_assert_uint_eq(rt.n, n);
	ck_assert_int_eq(tablegen_stats(&rt, &st), 0);
	ck_assert_uint_eq(st.unsorted, 0);
	for (size_t i = 0; i < rt.n; i++)
		ck_assert_uint_eq(rt.r[i].dst.b[0] & 0xe0, 0x20);
	ck_assert(pct(st.by_len[48], n) > 37 && pct(st.by_len[48], n) < 57);
	ck_assert(pct(st.by_len[32], n) > 9 && pct(st.by_len[32], n) < 19);
	ck_assert(pct(n - st.depth[0], n) > 35 && pct(n - st.depth[0], n) < 75);
	routes_free(&rt);
}
END_TEST

START_TEST(test_deterministic)
{
	struct routes a, b, c;
	int differ = 0;

	make(&a, AF_INET, 3000, 42);
	make(&b, AF_INET, 3000, 42);
	make(&c, AF_INET, 3000, 43);
	ck_assert_uint_eq(a.n, b.n);
	for (size_t i = 0; i < a.n; i++) {
		ck_assert_int_eq(routes_cmp(&a.r[i], &b.r[i]), 0);
		ck_assert_mem_eq(a.nh[i].gw.b, b.nh[i].gw.b, 4);
		differ |= routes_cmp(&a.r[i], &c.r[i]) != 0;
	}
	ck_assert(differ);
	routes_free(&a);
	routes_free(&b);
	routes_free(&c);
}
END_TEST

START_TEST(test_nexthop_addresses)
{
	static const uint8_t db8[14] = { 0x20, 0x01, 0x0d, 0xb8 };
	struct routes rt;
	uint32_t lo = UINT32_MAX, hi = 0;
	unsigned lo6 = 0xffff;

	make(&rt, AF_INET, 20000, 5);
	for (size_t i = 0; i < rt.n; i++) {
		uint32_t gw;

		ck_assert_uint_eq(rt.r[i].nh_count, 1);
		gw = ntohl(rt.nh[i].gw.v4.s_addr);
		lo = gw < lo ? gw : lo;
		hi = gw > hi ? gw : hi;
	}
	/* the default 24 next hops: 10.0.0.2 .. 10.0.0.25, all used */
	ck_assert_uint_eq(lo, 0x0a000002u);
	ck_assert_uint_eq(hi, 0x0a000019u);
	routes_free(&rt);

	make(&rt, AF_INET6, 5000, 5);
	for (size_t i = 0; i < rt.n; i++) {
		const uint8_t *b = rt.nh[i].gw.b;

		ck_assert_uint_eq(rt.r[i].nh_count, 1);
		ck_assert_mem_eq(b, db8, 14);
		lo6 = (unsigned)(b[14] << 8 | b[15]) < lo6 ? (unsigned)(b[14] << 8 | b[15]) : lo6;
	}
	ck_assert_uint_eq(lo6, 2);
	routes_free(&rt);
}
END_TEST

START_TEST(test_small_and_empty)
{
	struct routes rt;

	make(&rt, AF_INET, 0, 1);
	ck_assert_uint_eq(rt.n, 0);
	routes_free(&rt);
	make(&rt, AF_INET6, 1, 1);
	ck_assert_uint_eq(rt.n, 1);
	routes_free(&rt);
	make(&rt, AF_INET, 5, 9);
	ck_assert_uint_eq(rt.n, 5);
	routes_free(&rt);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("tablegen");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_v4_shape);
	tcase_add_test(tc, test_v6_shape);
	tcase_add_test(tc, test_deterministic);
	tcase_add_test(tc, test_nexthop_addresses);
	tcase_add_test(tc, test_small_and_empty);
	suite_add_tcase(s, tc);
	return ck_run(s, CK_FORK_GETENV);
}
