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
 * tests/nl/<file>.out. A corpus file without a golden file fails. The
 * corpus parses whole, so tests/nl/mutations.out holds the rejections:
 * corpus messages with one thing broken each (nl_test_muts).
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
#include "tests/unit/ck_run.h"

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
		ck_assert_uint_lt(n, NL_TEST_FILES - 1);
		names[n] = strdup(e->d_name);
		ck_assert_ptr_nonnull(names[n]);
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), nl_test_name_cmp);
	return n;
}

/*
 * Rejections. The corpus holds only messages the kernel sent, which all
 * parse; each mutation below breaks one thing in one of them, and the
 * golden file (tests/nl/mutations.out) says what the parser makes of it.
 */
static struct nlattr *
nl_test_attr(struct nlmsghdr *nlh, unsigned type)
{
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct rtmsg))
		if (mnl_attr_get_type(a) == type)
			return a;
	ck_abort_msg("attribute %u not in the message", type);
	return NULL;
}

static void
nl_test_mut_family(struct nlmsghdr *nlh)
{
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_family = AF_UNIX;
}

static void
nl_test_mut_plen(struct nlmsghdr *nlh)
{
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_dst_len = 33;
}

static void
nl_test_mut_hostbits(struct nlmsghdr *nlh)
{
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_dst_len = 8; /* 1.2.3.0/8 */
}

static void
nl_test_mut_cloned(struct nlmsghdr *nlh)
{
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_flags |= RTM_F_CLONED;
}

/* Inside the alignment padding: the walk ends at NLMSG_ALIGN(nlmsg_len),
 * as libmnl's does, so the last attribute still fits. */
static void
nl_test_mut_pad(struct nlmsghdr *nlh)
{
	nlh->nlmsg_len -= 2;
}

static void
nl_test_mut_trunc(struct nlmsghdr *nlh)
{
	nlh->nlmsg_len -= 4; /* the last attribute runs past the message */
}

static void
nl_test_mut_short_header(struct nlmsghdr *nlh)
{
	nlh->nlmsg_len = NLMSG_HDRLEN + 4; /* half an rtmsg */
}

static void
nl_test_mut_table_len(struct nlmsghdr *nlh)
{
	nl_test_attr(nlh, RTA_TABLE)->nla_len = NLA_HDRLEN + 2;
}

static void
nl_test_mut_unknown(struct nlmsghdr *nlh)
{
	nl_test_attr(nlh, RTA_TABLE)->nla_type = 250; /* a newer kernel's */
}

static void
nl_test_mut_multipath(struct nlmsghdr *nlh)
{
	struct rtnexthop *rtnh = mnl_attr_get_payload(nl_test_attr(nlh, RTA_MULTIPATH));

	rtnh->rtnh_len = 0xffff;
}

static void
nl_test_mut_via(struct nlmsghdr *nlh)
{
	struct rtvia *v = mnl_attr_get_payload(nl_test_attr(nlh, RTA_VIA));

	v->rtvia_family = AF_INET; /* 16 address bytes for a 4-byte family */
}

static void
nl_test_mut_nh_id(struct nlmsghdr *nlh)
{
	/* only the object id left: the paths must come from the table */
	nl_test_attr(nlh, RTA_GATEWAY)->nla_type = RTA_UNSPEC;
	nl_test_attr(nlh, RTA_OIF)->nla_type = RTA_UNSPEC;
}

static void
nl_test_mut_del(struct nlmsghdr *nlh)
{
	nlh->nlmsg_type = RTM_DELROUTE;
}

static const struct {
	const char *name;
	const char *file; /* a corpus file holding one route message */
	void (*mut)(struct nlmsghdr *nlh);
} nl_test_muts[] = {
	{ "family AF_UNIX", "msg-006", nl_test_mut_family },
	{ "prefix length 33", "msg-006", nl_test_mut_plen },
	{ "host bits beyond the prefix length", "msg-006", nl_test_mut_hostbits },
	{ "RTM_F_CLONED", "msg-006", nl_test_mut_cloned },
	{ "nlmsg_len cut by 2", "msg-006", nl_test_mut_pad },
	{ "nlmsg_len cut by 4", "msg-006", nl_test_mut_trunc },
	{ "nlmsg_len shorter than the rtmsg", "msg-006", nl_test_mut_short_header },
	{ "RTA_TABLE of 2 bytes", "msg-006", nl_test_mut_table_len },
	{ "RTA_TABLE renumbered 250", "msg-006", nl_test_mut_unknown },
	{ "RTA_MULTIPATH rtnh_len 0xffff", "msg-007", nl_test_mut_multipath },
	{ "RTA_VIA family inet with an IPv6 address", "msg-017", nl_test_mut_via },
	{ "RTA_NH_ID 1 alone, empty next-hop table", "msg-012", nl_test_mut_nh_id },
	{ "as RTM_DELROUTE", "msg-026", nl_test_mut_del },
};

static char *
nl_test_mutations(size_t *outlen)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, outlen);

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < sizeof(nl_test_muts) / sizeof(nl_test_muts[0]); i++) {
		char path[4096];
		uint32_t buf[1024];
		struct nl_nhtab *t = nl_nhtab_new();
		FILE *in;
		size_t n;

		snprintf(path, sizeof(path), "%s/%s", NL_CORPUS, nl_test_muts[i].file);
		in = fopen(path, "rb");
		ck_assert_msg(in != NULL, "%s: %s", path, strerror(errno));
		memset(buf, 0, sizeof(buf));
		n = fread(buf, 1, sizeof(buf), in);
		fclose(in);
		ck_assert_ptr_nonnull(t);
		ck_assert_msg(nl_msg_ok((struct nlmsghdr *)buf, (int)n) &&
				      ((struct nlmsghdr *)buf)->nlmsg_len == n,
			      "%s: not one message", path);
		nl_test_muts[i].mut((struct nlmsghdr *)buf);
		fprintf(f, "# %s: %s\n", nl_test_muts[i].file, nl_test_muts[i].name);
		nl_test_one(f, t, (struct nlmsghdr *)buf);
		nl_nhtab_free(t);
	}
	fclose(f);
	return out;
}

START_TEST(test_golden)
{
	char *names[NL_TEST_FILES];
	size_t n = nl_test_list(names);
	int regen = getenv("NL_TEST_REGEN") != NULL;
	unsigned bad = 0;

	ck_assert_uint_gt(n, 0);
	names[n++] = strdup("mutations"); /* not a corpus file: nl_test_mutations */
	for (size_t i = 0; i < n; i++) {
		char path[4096], *want = NULL;
		size_t len, wlen = 0;
		char *got = i == n - 1 ? nl_test_mutations(&len) : nl_test_file(names[i], &len);
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
	return ck_run(nl_suite(), CK_FORK_GETENV);
}
