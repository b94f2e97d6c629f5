/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the netlink parser (daemon/nl.c) against golden files
 *
 * Each file of the fuzz seed corpus (tests/fuzz/nl_corpus: real kernel
 * messages written by tests/fuzz/make-nl-seeds.sh) goes through the real
 * parser as a receive buffer would, with a fresh next-hop table per file,
 * as tests/fuzz/nl_fuzz.c feeds it: next-hop messages to nl_nhtab_msg,
 * route messages to nl_route_parse. What came out is printed, one block a
 * message:
 *
 *   RTM_NEWROUTE flags 0x600: ok
 *     route inet 1.2.4.0/24 table 254 type unicast protocol boot(3) ...
 *     nh via inet 10.0.0.2 dev 2 weight 1
 *
 * or the rejection reason (nl_err_name), and compared with
 * tests/nl/<file>.out. A corpus file without a golden file fails.
 *
 * Regenerate after a deliberate parser or corpus change, then review the
 * diff (git diff tests/nl) as any code change:
 *
 *   NL_TEST_REGEN=1 tests/unit/nl_test      (from the build directory)
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "daemon/nl.h"

#ifndef NL_CORPUS
#define NL_CORPUS "tests/fuzz/nl_corpus"
#endif
#ifndef NL_GOLDEN
#define NL_GOLDEN "tests/nl"
#endif

#define NL_TEST_FILES 256

static const struct {
	unsigned proto;
	const char *name;
} nl_test_protos[] = {
	{ RTPROT_REDIRECT, "redirect" }, { RTPROT_KERNEL, "kernel" }, { RTPROT_BOOT, "boot" },
	{ RTPROT_STATIC, "static" },     { RTPROT_RA, "ra" },         { RTPROT_DHCP, "dhcp" },
	{ 186, "bgp" },                  { 187, "isis" },             { 188, "ospf" },
};

static const char *
nl_test_msg_name(unsigned type)
{
	switch (type) {
	case RTM_NEWROUTE:
		return "RTM_NEWROUTE";
	case RTM_DELROUTE:
		return "RTM_DELROUTE";
	case RTM_NEWNEXTHOP:
		return "RTM_NEWNEXTHOP";
	case RTM_DELNEXTHOP:
		return "RTM_DELNEXTHOP";
	default:
		return NULL;
	}
}

static const char *
nl_test_proto_name(unsigned proto)
{
	for (size_t i = 0; i < sizeof(nl_test_protos) / sizeof(nl_test_protos[0]); i++)
		if (nl_test_protos[i].proto == proto)
			return nl_test_protos[i].name;
	return "?";
}

static const char *
nl_test_addr(int family, const union fib_addr *a, char *buf, size_t len)
{
	if (!inet_ntop(family, a->b, buf, (socklen_t)len))
		snprintf(buf, len, "family-%d", family);
	return buf;
}

static const char *
nl_test_family(int family)
{
	return family == AF_INET ? "inet" : family == AF_INET6 ? "inet6" : "?";
}

static void
nl_test_print_route(FILE *f, const struct nl_route *nr)
{
	const struct fib_route *r = &nr->r;
	char a[INET6_ADDRSTRLEN];

	fprintf(f, "  route %s %s/%u table %u type %s(%u) protocol %s(%u) scope %u",
		nl_test_family(r->family), nl_test_addr(r->family, &r->dst, a, sizeof(a)),
		r->plen, r->table, fib_type_name(r->type), r->type,
		nl_test_proto_name(r->protocol), r->protocol, r->scope);
	fprintf(f, " priority %u tos 0x%x\n", r->priority, r->tos);
	if (r->prefsrc_set)
		fprintf(f, "  prefsrc %s\n", nl_test_addr(r->family, &r->prefsrc, a, sizeof(a)));
	if (r->nh_id)
		fprintf(f, "  nh_id %u%s\n", r->nh_id,
			nr->nh_resolved ? " (paths from the next-hop table)" : "");
	if (r->encap_type)
		fprintf(f, "  encap_type %u\n", r->encap_type);
	if (nr->unknown_attrs)
		fprintf(f, "  unknown attributes %u (last type %u)\n", nr->unknown_attrs,
			nr->unknown_type);
	for (unsigned i = 0; i < r->nh_count; i++) {
		const struct fib_nh *nh = &r->nh[i];

		fprintf(f, "  nh");
		if (nh->gw_family)
			fprintf(f, " via %s %s", nl_test_family(nh->gw_family),
				nl_test_addr(nh->gw_family, &nh->gw, a, sizeof(a)));
		fprintf(f, " dev %u weight %u%s\n", nh->ifindex, nh->weight,
			nh->flags & FIB_NH_ONLINK ? " onlink" : "");
	}
}

static void
nl_test_one(FILE *f, struct nl_nhtab *t, const struct nlmsghdr *nlh)
{
	static struct nl_route nr;
	enum nl_err err = NL_ERR_COUNT;
	int changed = 0, ret;

	if (nl_test_msg_name(nlh->nlmsg_type))
		fprintf(f, "%s", nl_test_msg_name(nlh->nlmsg_type));
	else
		fprintf(f, "type %u", nlh->nlmsg_type);
	fprintf(f, " flags 0x%x len %u: ", nlh->nlmsg_flags, nlh->nlmsg_len);
	switch (nlh->nlmsg_type) {
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		ret = nl_nhtab_msg(t, nlh, &changed, &err);
		if (ret == -EINVAL)
			fprintf(f, "rejected: %s\n", nl_err_name(err));
		else if (ret == NL_SKIP)
			fprintf(f, "skip\n");
		else
			fprintf(f, "%s, %zu object(s)%s\n", ret == 0 ? "ok" : strerror(-ret),
				nl_nhtab_count(t), changed ? ", changed" : "");
		break;
	default:
		ret = nl_route_parse(nlh, t, &nr, &err);
		if (ret == -EINVAL) {
			fprintf(f, "rejected: %s\n", nl_err_name(err));
			break;
		}
		fprintf(f, "%s\n", ret == NL_SKIP ? "skip (not for the FIB)" : "ok");
		nl_test_print_route(f, &nr);
		break;
	}
}

/* A corpus file as nl_fuzz.c feeds it: a stream of messages. */
static char *
nl_test_file(const char *name, size_t *outlen)
{
	char path[4096], *out = NULL;
	struct nl_nhtab *t = nl_nhtab_new();
	const struct nlmsghdr *nlh;
	uint32_t *buf;
	FILE *in, *f;
	long size;
	int len;

	snprintf(path, sizeof(path), "%s/%s", NL_CORPUS, name);
	in = fopen(path, "rb");
	ck_assert_msg(in != NULL, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fseek(in, 0, SEEK_END), 0);
	size = ftell(in);
	rewind(in);
	ck_assert_int_ge(size, 0);
	buf = calloc(1, ((size_t)size + 3) & ~(size_t)3); /* aligned, as a receive buffer */
	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(fread(buf, 1, (size_t)size, in), (size_t)size);
	fclose(in);
	f = open_memstream(&out, outlen);
	ck_assert_ptr_nonnull(f);
	fprintf(f, "# %s: %ld bytes\n", name, size);
	len = (int)size;
	for (nlh = (const struct nlmsghdr *)buf; nl_msg_ok(nlh, len);
	     nlh = mnl_nlmsg_next(nlh, &len))
		nl_test_one(f, t, nlh);
	if (len > 0)
		fprintf(f, "%d trailing byte(s)\n", len);
	fclose(f);
	nl_nhtab_free(t);
	free(buf);
	return out;
}

static int
nl_test_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t
nl_test_list(char **names)
{
	DIR *d = opendir(NL_CORPUS);
	struct dirent *e;
	size_t n = 0;

	ck_assert_msg(d != NULL, "%s: %s", NL_CORPUS, strerror(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		ck_assert_uint_lt(n, NL_TEST_FILES);
		names[n] = strdup(e->d_name);
		ck_assert_ptr_nonnull(names[n]);
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), nl_test_name_cmp);
	return n;
}

START_TEST(test_golden)
{
	char *names[NL_TEST_FILES];
	size_t n = nl_test_list(names);
	int regen = getenv("NL_TEST_REGEN") != NULL;
	unsigned bad = 0;

	ck_assert_uint_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		char path[4096], *want = NULL;
		size_t len, wlen = 0;
		char *got = nl_test_file(names[i], &len);
		FILE *g;

		snprintf(path, sizeof(path), "%s/%s.out", NL_GOLDEN, names[i]);
		if (regen) {
			g = fopen(path, "w");
			ck_assert_msg(g != NULL, "%s: %s", path, strerror(errno));
			ck_assert_uint_eq(fwrite(got, 1, len, g), len);
			ck_assert_int_eq(fclose(g), 0);
			free(got);
			free(names[i]);
			continue;
		}
		g = fopen(path, "r");
		if (g) {
			FILE *w = open_memstream(&want, &wlen);
			int c;

			ck_assert_ptr_nonnull(w);
			while ((c = fgetc(g)) != EOF)
				fputc(c, w);
			fclose(w);
			fclose(g);
		}
		if (!want || wlen != len || memcmp(want, got, len)) {
			/* the output next to the build, for a diff */
			char actual[4096];
			FILE *a;

			snprintf(actual, sizeof(actual), "nl_test-%s.out", names[i]);
			a = fopen(actual, "w");
			if (a) {
				fwrite(got, 1, len, a);
				fclose(a);
			}
			fprintf(stderr, "%s: %s; got %s\n", path, want ? "differs" : "missing",
				actual);
			bad++;
		}
		free(want);
		free(got);
		free(names[i]);
	}
	ck_assert_msg(bad == 0, "%u corpus file(s) differ from their golden output", bad);
}
END_TEST

static Suite *
nl_suite(void)
{
	Suite *s = suite_create("nl");
	TCase *tc = tcase_create("golden");

	tcase_add_test(tc, test_golden);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(nl_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
