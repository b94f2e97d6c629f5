/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: routes_test, routes files and traces of the test utilities
 *
 * Reads plain and gzip routes files into struct fib_route arrays (line
 * numbers kept, `-` next hops, both families), rejects malformed lines
 * with their line number, maps prefixes back to lines, and checks that
 * routed traces land inside their prefixes and survive a file round trip.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/util/routes.h"
#include "tests/util/trace.h"
#include "tests/unit/ck_run.h"

static int
cmp16(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

static char tmpl[] = "/tmp/routes_test.XXXXXX";

static const char *
write_file(const char *text, int gz)
{
	static char path[64];
	int fd;

	strcpy(path, tmpl);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	if (gz) {
		gzFile f = gzopen(path, "wb");

		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(gzputs(f, text), (int)strlen(text));
		gzclose(f);
	} else {
		FILE *f = fopen(path, "w");

		fputs(text, f);
		fclose(f);
	}
	return path;
}

static const char good4[] = "10.0.0.0/8 192.0.2.1\n"
			    "\n"
			    "10.1.0.0/16 -\n"
			    "# comment\n"
			    "10.1.2.0/24 192.0.2.2\r\n"
			    "0.0.0.0/0 -\n";

static void
check_good4(const char *path)
{
	struct routes rt;
	char err[256] = "";

	routes_init(&rt);
	ck_assert_int_eq(routes_read(&rt, path, err, sizeof(err)), 0);
	ck_assert_uint_eq(rt.n, 4);
	ck_assert_int_eq(rt.family, AF_INET);
	ck_assert_uint_eq(rt.line[0], 1);
	ck_assert_uint_eq(rt.line[1], 3);
	ck_assert_uint_eq(rt.line[2], 5);
	ck_assert_uint_eq(rt.line[3], 6);
	ck_assert_uint_eq(rt.r[0].plen, 8);
	ck_assert_uint_eq(ntohl(rt.r[0].dst.v4.s_addr), 0x0a000000);
	ck_assert_uint_eq(rt.r[0].nh_count, 1);
	ck_assert_uint_eq(rt.r[0].nh[0].gw_family, AF_INET);
	ck_assert_uint_eq(ntohl(rt.r[0].nh[0].gw.v4.s_addr), 0xc0000201);
	ck_assert_uint_eq(rt.r[1].nh_count, 0);
	ck_assert_ptr_null(rt.r[1].nh);
	ck_assert_uint_eq(rt.r[2].type, FIB_UNICAST);
	ck_assert_uint_eq(rt.r[2].table, 254);
	ck_assert_uint_eq(rt.r[2].protocol, 186);
	ck_assert_uint_eq(rt.r[3].plen, 0);
	routes_free(&rt);
	unlink(path);
}

START_TEST(test_read_plain_and_gzip)
{
	check_good4(write_file(good4, 0));
	check_good4(write_file(good4, 1));
}
END_TEST

START_TEST(test_malformed)
{
	static const char *bad[] = {
		"10.0.0.0/8 -\n10.0.0.0 -\n",           /* no length */
		"10.0.0.0/8 -\n10.0.0.0/33 -\n",        /* length too long */
		"10.0.0.0/8 -\n10.0.0.1/8 -\n",         /* host bits */
		"10.0.0.0/8 -\n10.0.0.256/24 -\n",      /* bad address */
		"10.0.0.0/8 -\n10.0.0.0/8 nope\n",      /* bad next hop */
		"10.0.0.0/8 -\n2001:db8::/32 -\n",      /* other family */
		"10.0.0.0/8 -\n10.0.0.0/8 - extra\n",   /* too many fields */
		"10.0.0.0/8 -\n10.0.0.0/x -\n",         /* bad length */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *path = write_file(bad[i], i & 1);
		struct routes rt;
		char err[512] = "", want[128];

		routes_init(&rt);
		ck_assert_int_eq(routes_read(&rt, path, err, sizeof(err)), -EINVAL);
		snprintf(want, sizeof(want), "%s:2: ", path);
		ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "case %zu: %s", i, err);
		routes_free(&rt);
		unlink(path);
	}
}
END_TEST

START_TEST(test_missing_file)
{
	struct routes rt;
	char err[256];

	routes_init(&rt);
	ck_assert_int_eq(routes_read(&rt, "/nonexistent/routes", err, sizeof(err)), -ENOENT);
	routes_free(&rt);
}
END_TEST

START_TEST(test_v6_and_index)
{
	const char *path = write_file("2001:db8::/32 fe80::1\n2001:db8:1::/48 -\n::/0 -\n", 0);
	struct routes_index ix;
	union fib_addr a;
	struct routes rt;
	char err[256], buf[64];

	routes_init(&rt);
	ck_assert_int_eq(routes_read(&rt, path, err, sizeof(err)), 0);
	unlink(path);
	ck_assert_int_eq(rt.family, AF_INET6);
	ck_assert_uint_eq(rt.n, 3);
	ck_assert_uint_eq(rt.r[0].nh[0].gw_family, AF_INET6);
	ck_assert_str_eq(routes_prefix_str(&rt, 1, buf, sizeof(buf)), "2001:db8:1::/48");
	ck_assert_int_eq(routes_index_build(&ix, &rt), 0);
	memset(&a, 0, sizeof(a));
	inet_pton(AF_INET6, "2001:db8:1::", a.b);
	ck_assert_int_eq(routes_index_find(&ix, &a, 48), 1);
	ck_assert_int_eq(routes_index_find(&ix, &a, 47), -1);
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(routes_index_find(&ix, &a, 0), 2);
	routes_index_free(&ix);
	routes_free(&rt);
}
END_TEST

START_TEST(test_traces)
{
	const char *path = write_file("10.0.0.0/8 -\n192.0.2.0/24 -\n198.51.100.7/32 -\n", 0);
	struct trace t, u;
	struct routes rt;
	char err[256];
	size_t hits[3] = { 0 };

	routes_init(&rt);
	ck_assert_int_eq(routes_read(&rt, path, err, sizeof(err)), 0);
	ck_assert_int_eq(trace_routed(&t, &rt, 3000, 5), 0);
	for (size_t i = 0; i < t.n; i++) {
		uint32_t a = t.a4[i];

		if (a >> 24 == 10)
			hits[0]++;
		else if (a >> 8 == 0xc00002)
			hits[1]++;
		else if (a == 0xc6336407)
			hits[2]++;
		else
			ck_abort_msg("address %08x outside every prefix", a);
	}
	ck_assert(hits[0] > 800 && hits[1] > 800 && hits[2] > 800);
	ck_assert_int_eq(trace_write(&t, path), 0);
	ck_assert_int_eq(trace_read(&u, AF_INET, path), 0);
	ck_assert_uint_eq(u.n, t.n);
	ck_assert_mem_eq(u.a4, t.a4, t.n * 4);
	trace_free(&u);
	trace_free(&t);
	ck_assert_int_eq(trace_uniform(&t, AF_INET, 1000, 1), 0);
	ck_assert_int_eq(trace_uniform(&u, AF_INET, 1000, 1), 0);
	ck_assert_mem_eq(u.a4, t.a4, 4000);
	trace_free(&u);
	trace_free(&t);
	routes_free(&rt);
	unlink(path);
}
END_TEST

START_TEST(test_zipf_skew)
{
	const char *path = write_file("2001:db8::/32 -\n", 0);
	struct routes rt;
	struct trace t;
	char err[256];
	size_t best = 0;

	routes_init(&rt);
	ck_assert_int_eq(routes_read(&rt, path, err, sizeof(err)), 0);
	unlink(path);
	ck_assert_int_eq(trace_zipf(&t, &rt, 20000, 1000, 3), 0);
	/* count the most frequent address by sorting copies */
	{
		uint8_t(*c)[16] = malloc(t.n * 16);
		size_t run = 1;

		memcpy(c, t.a6, t.n * 16);
		qsort(c, t.n, 16, cmp16);
		for (size_t i = 1; i <= t.n; i++) {
			if (i < t.n && !memcmp(c[i], c[i - 1], 16)) {
				run++;
				continue;
			}
			if (run > best)
				best = run;
			run = 1;
		}
		free(c);
	}
	ck_assert_msg(best > 20000 * 0.10 && best < 20000 * 0.17, "top flow %zu", best);
	trace_free(&t);
	routes_free(&rt);
}
END_TEST

START_TEST(test_shared_dir)
{
	char buf[4096];
	const char *path = write_file("x", 0);
	const char *slash = strrchr(path, '/');
	char dir[64];
	struct trace t;

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	setenv("FIBD_SHARED", dir, 1);
	ck_assert_str_eq(routes_shared_dir(buf, sizeof(buf)), dir);
	ck_assert_ptr_nonnull(routes_shared_file(slash + 1, buf, sizeof(buf)));
	ck_assert_str_eq(buf, path);
	ck_assert_ptr_null(routes_shared_file("no-such-table.txt.gz", buf, sizeof(buf)));
	/* a 1-byte file is no trace of 4- or 16-byte addresses */
	ck_assert_int_eq(trace_read(&t, AF_INET, path), -EINVAL);
	ck_assert_int_eq(trace_read(&t, AF_INET6, "/nonexistent/trace"), -ENOENT);
	setenv("FIBD_SHARED", "/nonexistent/shared", 1);
	ck_assert_ptr_null(routes_shared_dir(buf, sizeof(buf)));
	unsetenv("FIBD_SHARED");
	unlink(path);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("routes");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_read_plain_and_gzip);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_v6_and_index);
	tcase_add_test(tc, test_traces);
	tcase_add_test(tc, test_zipf_skew);
	tcase_add_test(tc, test_shared_dir);
	suite_add_tcase(s, tc);
	return ck_run(s, CK_FORK_GETENV);
}
