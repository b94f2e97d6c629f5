/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: tests of the sysctl reader and watch (daemon/sysctl)
 *
 * sysctl_read over a fake /proc/sys/net in a temporary directory: the
 * defaults kept for absent files (an old kernel without the seed, IPv6
 * disabled), decimal as the kernel prints and 0x as a hand-made file
 * may say, a seed of 0 (random) and a pinned one, garbage ignored. Then
 * the watch on a real FIB: it applies at creation and publishes again
 * only when a file changed (no ingest is given: the test thread is the
 * FIB's writer, so the watch never waits for it).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <event2/event.h>

#include "fib/fib.h"
#include "fib/policy.h"
#include "daemon/sysctl.h"
#include "tests/unit/ck_run.h"

static char root[256];

static void
put(const char *path, const char *text)
{
	char p[512], dir[512], *slash;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, path);
	snprintf(dir, sizeof(dir), "%s", p);
	for (slash = strchr(dir + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void
setup(void)
{
	snprintf(root, sizeof(root), "/tmp/sysctl_test.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
}

static void
teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_absent)
{
	struct fib_mp_hash h, d;

	fib_mp_hash_default(&d);
	h = d;
	ck_assert_int_eq(sysctl_read(root, &h), 0);
	ck_assert(sysctl_mp_hash_equal(&h, &d));
	ck_assert_uint_eq(h.seed_set, 0);
}
END_TEST

START_TEST(test_values)
{
	struct fib_mp_hash h;

	put("ipv4/fib_multipath_hash_policy", "1\n");
	put("ipv4/fib_multipath_hash_fields", "55\n");
	put("ipv4/fib_multipath_hash_seed", "1234\n");
	put("ipv6/fib_multipath_hash_policy", "3\n");
	put("ipv6/fib_multipath_hash_fields", "0x37\n");
	put("ipv4/conf/all/forwarding", "1\n");
	put("ipv6/conf/all/forwarding", "0\n");
	put("ipv4/conf/all/ignore_routes_with_linkdown", "1\n");
	put("ipv6/conf/all/ignore_routes_with_linkdown", "1\n");
	fib_mp_hash_default(&h);
	ck_assert_int_eq(sysctl_read(root, &h), 9);
	ck_assert_uint_eq(h.policy4, 1);
	ck_assert_uint_eq(h.fields4, 55);
	ck_assert_uint_eq(h.seed, 1234);
	ck_assert_uint_eq(h.seed_set, 1);
	ck_assert_uint_eq(h.policy6, 3);
	ck_assert_uint_eq(h.fields6, 0x37);
	ck_assert_uint_eq(h.forwarding4, 1);
	ck_assert_uint_eq(h.forwarding6, 0);
	ck_assert_uint_eq(h.ignore_linkdown4, 1);
	ck_assert_uint_eq(h.ignore_linkdown6, 1);

	put("ipv4/fib_multipath_hash_seed", "0\n"); /* not pinned */
	put("ipv4/fib_multipath_hash_policy", "banana\n");
	put("ipv6/fib_multipath_hash_policy", "4294967296\n");
	fib_mp_hash_default(&h);
	ck_assert_int_eq(sysctl_read(root, &h), 7);
	ck_assert_uint_eq(h.seed_set, 0);
	ck_assert_uint_eq(h.seed, 0);
	{
		struct fib_mp_hash d;

		fib_mp_hash_default(&d);
		ck_assert_uint_eq(h.policy4, d.policy4); /* garbage: the default kept */
		ck_assert_uint_eq(h.policy6, d.policy6);
	}
}
END_TEST

START_TEST(test_watch)
{
	struct event_base *base = event_base_new();
	struct fib *fib;
	struct sysctl_watch *w;
	struct fib_mp_hash h;
	uint64_t g;

	ck_assert_ptr_nonnull(base);
	fib_thread_online();
	fib = fib_new(NULL);
	ck_assert_ptr_nonnull(fib);
	put("ipv4/fib_multipath_hash_policy", "1\n");
	w = sysctl_watch_new(base, fib, NULL, root, 30);
	ck_assert_ptr_nonnull(w);
	sysctl_watch_get(w, &h);
	ck_assert_uint_eq(h.policy4, 1);
	g = fib_policy_generation(fib);
	ck_assert_int_eq(sysctl_watch_check(w), 0); /* nothing changed */
	ck_assert_uint_eq(fib_policy_generation(fib), g);
	put("ipv4/fib_multipath_hash_policy", "2\n");
	ck_assert_int_eq(sysctl_watch_check(w), 1);
	ck_assert_uint_gt(fib_policy_generation(fib), g);
	sysctl_watch_get(w, &h);
	ck_assert_uint_eq(h.policy4, 2);
	sysctl_watch_free(w);
	fib_free(fib);
	fib_thread_offline();
	event_base_free(base);
}
END_TEST

static Suite *
sysctl_suite(void)
{
	Suite *s = suite_create("sysctl");
	TCase *tc = tcase_create("read");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_absent);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_watch);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(sysctl_suite(), CK_FORK_GETENV);
}
