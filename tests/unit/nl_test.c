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
 * corpus messages with one thing broken each (nl_test_muts), some fed
 * after other corpus files (a bucket message needs its group). The res-*
 * files are resilient groups: objects, RTM_NEWNEXTHOPBUCKET (to
 * nl_nhtab_bucket_msg) and routes whose bucket map is printed.
 *
 * The policy corpus (tests/fuzz/nl_policy_corpus, written by
 * tests/fuzz/make-nl-policy-seeds.sh: links, addresses and rules of both
 * families) goes through nl_link_parse, nl_ifaddr_parse and
 * nl_rule_parse the same way, against tests/nl/policy/<file>.out; its
 * rejections (and a VRF link built by hand, for kernels without VRFs)
 * are in tests/nl/policy/mutations.out.
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
#include <linux/fib_rules.h>
#undef FIB_RULE_INVERT /* fib/policy.h's, same value */
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "daemon/nl.h"
#include "tests/unit/ck_run.h"

#ifndef NL_CORPUS
#define NL_CORPUS "tests/fuzz/nl_corpus"
#endif
#ifndef NL_GOLDEN
#define NL_GOLDEN "tests/nl"
#endif
#ifndef NL_POLICY_CORPUS
#define NL_POLICY_CORPUS "tests/fuzz/nl_policy_corpus"
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
	case RTM_NEWNEXTHOPBUCKET:
		return "RTM_NEWNEXTHOPBUCKET";
	case RTM_DELNEXTHOP:
		return "RTM_DELNEXTHOP";
	case RTM_NEWRULE:
		return "RTM_NEWRULE";
	case RTM_DELRULE:
		return "RTM_DELRULE";
	case RTM_NEWADDR:
		return "RTM_NEWADDR";
	case RTM_DELADDR:
		return "RTM_DELADDR";
	case RTM_NEWLINK:
		return "RTM_NEWLINK";
	case RTM_DELLINK:
		return "RTM_DELLINK";
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
	if (nr->res_incomplete)
		fprintf(f, "  res buckets not all known: no map\n");
	if (r->res_buckets) {
		fprintf(f, "  res_map %u:", r->res_buckets);
		for (unsigned i = 0; i < r->res_buckets; i++)
			fprintf(f, " %u", r->res_map[i]);
		fprintf(f, "\n");
	}
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
nl_test_print_rule(FILE *f, const struct nl_rule *nr)
{
	const struct fib_rule *r = &nr->r;
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

	fprintf(f, "  rule %s priority %u action %u table %u goto %u flags 0x%x tos 0x%x\n",
		nl_test_family(r->family), r->priority, r->action, r->table, r->goto_prio,
		r->flags, r->tos);
	fprintf(f, "  from %s/%u to %s/%u iif \"%s\" oif \"%s\" mark 0x%x/0x%x\n",
		nl_test_addr(r->family, &r->src, a, sizeof(a)), r->src_len,
		nl_test_addr(r->family, &r->dst, b, sizeof(b)), r->dst_len, r->iifname,
		r->oifname, r->mark, r->mark_mask);
	fprintf(f,
		"  suppress_prefixlen %d suppress_ifgroup %d uid %u-%u ipproto %u sport %u-%u "
		"dport %u-%u l3mdev %u protocol %u\n",
		r->suppress_prefixlen, r->suppress_ifgroup, r->uid_lo, r->uid_hi, r->ipproto,
		r->sport_lo, r->sport_hi, r->dport_lo, r->dport_hi, r->l3mdev, r->protocol);
	if (nr->unknown_attrs)
		fprintf(f, "  unknown attributes %u (last type %u)\n", nr->unknown_attrs,
			nr->unknown_type);
}

static void
nl_test_print_ifaddr(FILE *f, const struct nl_ifaddr *na)
{
	const struct fib_ifaddr *x = &na->a;
	char a[INET6_ADDRSTRLEN];

	fprintf(f, "  ifaddr %s %s/%u dev %u scope %u flags 0x%x label \"%s\"\n",
		nl_test_family(x->family), nl_test_addr(x->family, &x->addr, a, sizeof(a)),
		x->plen, x->ifindex, x->scope, x->flags, na->label);
}

static void
nl_test_print_link(FILE *f, const struct nl_link *nl)
{
	const struct fib_link *l = &nl->l;

	fprintf(f, "  link %u \"%s\" flags 0x%x master %u group %u vrf_table %u kind \"%s\"\n",
		l->ifindex, l->name, l->flags, l->master, l->group, l->vrf_table, nl->kind);
}

/* A rule, address or link message. */
static void
nl_test_policy_one(FILE *f, const struct nlmsghdr *nlh)
{
	static struct nl_rule nr;
	static struct nl_ifaddr na;
	static struct nl_link nk;
	enum nl_err err = NL_ERR_COUNT;
	int ret;

	switch (nlh->nlmsg_type) {
	case RTM_NEWRULE:
	case RTM_DELRULE:
		ret = nl_rule_parse(nlh, &nr, &err);
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		ret = nl_ifaddr_parse(nlh, &na, &err);
		break;
	default:
		ret = nl_link_parse(nlh, &nk, &err);
		break;
	}
	if (ret == -EINVAL) {
		ck_assert_uint_lt(err, NL_ERR_COUNT);
		fprintf(f, "rejected: %s\n", nl_err_name(err));
		return;
	}
	fprintf(f, "%s\n", ret == NL_SKIP ? "skip" : "ok");
	if (ret == NL_SKIP)
		return;
	if (nlh->nlmsg_type == RTM_NEWRULE || nlh->nlmsg_type == RTM_DELRULE)
		nl_test_print_rule(f, &nr);
	else if (nlh->nlmsg_type == RTM_NEWADDR || nlh->nlmsg_type == RTM_DELADDR)
		nl_test_print_ifaddr(f, &na);
	else
		nl_test_print_link(f, &nk);
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
	case RTM_NEWRULE:
	case RTM_DELRULE:
	case RTM_NEWADDR:
	case RTM_DELADDR:
	case RTM_NEWLINK:
	case RTM_DELLINK:
		nl_test_policy_one(f, nlh);
		break;
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
	case RTM_NEWNEXTHOPBUCKET:
		ret = nl_nhtab_bucket_msg(t, nlh, &changed, &err);
		if (ret == -EINVAL)
			fprintf(f, "rejected: %s\n", nl_err_name(err));
		else
			fprintf(f, "%s%s\n", ret == 0 ? "ok" : "skip", changed ? ", changed" : "");
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
nl_test_file(const char *dir, const char *name, size_t *outlen)
{
	char path[4096], *out = NULL;
	struct nl_nhtab *t = nl_nhtab_new();
	const struct nlmsghdr *nlh;
	uint32_t *buf;
	FILE *in, *f;
	long size;
	int len;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
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
nl_test_list(const char *dir, char **names)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	ck_assert_msg(d != NULL, "%s: %s", dir, strerror(errno));
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

/* An attribute of a message whose fixed header is hdrlen bytes. */
static struct nlattr *
nl_test_pattr(struct nlmsghdr *nlh, size_t hdrlen, unsigned type)
{
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, hdrlen)
		if (mnl_attr_get_type(a) == type)
			return a;
	ck_abort_msg("attribute %u not in the message", type);
	return NULL;
}

/* Resilient groups (the res-* files): a bucket message's nested bucket
 * attribute, a group's NHA_RES_GROUP attribute. */
static struct nlattr *
nl_test_nested(struct nlmsghdr *nlh, unsigned outer, unsigned inner)
{
	struct nlattr *o = nl_test_pattr(nlh, sizeof(struct nhmsg), outer), *a;

	mnl_attr_for_each_nested(a, o)
		if (mnl_attr_get_type(a) == inner)
			return a;
	ck_abort_msg("attribute %u not in %u", inner, outer);
	return NULL;
}

static void
nl_test_mut_nhb_index(struct nlmsghdr *nlh)
{
	*(uint16_t *)mnl_attr_get_payload(nl_test_nested(nlh, NHA_RES_BUCKET,
							 NHA_RES_BUCKET_INDEX)) = 8;
}

static void
nl_test_mut_nhb_member(struct nlmsghdr *nlh)
{
	*(uint32_t *)mnl_attr_get_payload(nl_test_nested(nlh, NHA_RES_BUCKET,
							 NHA_RES_BUCKET_NH_ID)) = 99;
}

static void
nl_test_mut_nhb_moved(struct nlmsghdr *nlh)
{
	uint32_t *id = mnl_attr_get_payload(nl_test_nested(nlh, NHA_RES_BUCKET,
							   NHA_RES_BUCKET_NH_ID));

	*id = *id == 1 ? 2 : 1; /* group 10's other member */
}

static void
nl_test_mut_nhb_group(struct nlmsghdr *nlh)
{
	*(uint32_t *)mnl_attr_get_payload(nl_test_pattr(nlh, sizeof(struct nhmsg), NHA_ID)) = 77;
}

static void
nl_test_mut_nhb_noindex(struct nlmsghdr *nlh)
{
	nl_test_nested(nlh, NHA_RES_BUCKET, NHA_RES_BUCKET_INDEX)->nla_type = 0; /* padding */
}

static void
nl_test_mut_nhb_nh_len(struct nlmsghdr *nlh)
{
	nl_test_nested(nlh, NHA_RES_BUCKET, NHA_RES_BUCKET_NH_ID)->nla_len = NLA_HDRLEN + 2;
}

static void
nl_test_mut_nhb_nest_len(struct nlmsghdr *nlh)
{
	nl_test_pattr(nlh, sizeof(struct nhmsg), NHA_RES_BUCKET)->nla_len += 4; /* past the message */
}

static void
nl_test_mut_res_type(struct nlmsghdr *nlh)
{
	*(uint16_t *)mnl_attr_get_payload(nl_test_pattr(nlh, sizeof(struct nhmsg),
							NHA_GROUP_TYPE)) = 2;
}

static void
nl_test_mut_res_buckets0(struct nlmsghdr *nlh)
{
	*(uint16_t *)mnl_attr_get_payload(nl_test_nested(nlh, NHA_RES_GROUP,
							 NHA_RES_GROUP_BUCKETS)) = 0;
}

static void
nl_test_mut_res_nogroup(struct nlmsghdr *nlh)
{
	nl_test_pattr(nlh, sizeof(struct nhmsg), NHA_RES_GROUP)->nla_type = 250;
}

static void
nl_test_mut_res_buckets_len(struct nlmsghdr *nlh)
{
	nl_test_nested(nlh, NHA_RES_GROUP, NHA_RES_GROUP_BUCKETS)->nla_len = NLA_HDRLEN + 1;
}

static void
nl_test_mut_none(struct nlmsghdr *nlh)
{
	(void)nlh;
}

/* The route through group 10 without the kernel's expansion
 * (nexthop_compat_mode 0): the paths and the map from the table. */
static void
nl_test_mut_res_route(struct nlmsghdr *nlh)
{
	nl_test_attr(nlh, RTA_MULTIPATH)->nla_type = RTA_UNSPEC;
}

#define FRH(nlh) ((struct fib_rule_hdr *)mnl_nlmsg_get_payload(nlh))
#define IFA(nlh) ((struct ifaddrmsg *)mnl_nlmsg_get_payload(nlh))
#define IFI(nlh) ((struct ifinfomsg *)mnl_nlmsg_get_payload(nlh))
#define RULE_ATTR(nlh, t) nl_test_pattr(nlh, sizeof(struct fib_rule_hdr), t)
#define ADDR_ATTR(nlh, t) nl_test_pattr(nlh, sizeof(struct ifaddrmsg), t)
#define LINK_ATTR(nlh, t) nl_test_pattr(nlh, sizeof(struct ifinfomsg), t)

/* The last byte of a string attribute's payload (its NUL) made a letter. */
static void
nl_test_unterminate(struct nlattr *a)
{
	((char *)mnl_attr_get_payload(a))[mnl_attr_get_payload_len(a) - 1] = 'x';
}

static void
nl_test_mut_rule_family(struct nlmsghdr *nlh)
{
	FRH(nlh)->family = AF_UNIX;
}

static void
nl_test_mut_rule_ipmr(struct nlmsghdr *nlh)
{
	FRH(nlh)->family = RTNL_FAMILY_IPMR;
}

static void
nl_test_mut_rule_plen(struct nlmsghdr *nlh)
{
	FRH(nlh)->src_len = 33;
}

static void
nl_test_mut_rule_action(struct nlmsghdr *nlh)
{
	FRH(nlh)->action = 4; /* FR_ACT_RES3 */
}

static void
nl_test_mut_rule_dst_len(struct nlmsghdr *nlh)
{
	FRH(nlh)->dst_len = 24; /* without FRA_DST */
}

static void
nl_test_mut_rule_prio_len(struct nlmsghdr *nlh)
{
	RULE_ATTR(nlh, FRA_PRIORITY)->nla_len = NLA_HDRLEN + 2;
}

static void
nl_test_mut_rule_goto(struct nlmsghdr *nlh)
{
	RULE_ATTR(nlh, FRA_GOTO)->nla_type = 250;
}

static void
nl_test_mut_rule_iifname(struct nlmsghdr *nlh)
{
	nl_test_unterminate(RULE_ATTR(nlh, FRA_IIFNAME));
}

static void
nl_test_mut_rule_uid(struct nlmsghdr *nlh)
{
	struct fib_rule_uid_range *u = mnl_attr_get_payload(RULE_ATTR(nlh, FRA_UID_RANGE));

	u->start = u->end + 1;
}

static void
nl_test_mut_rule_sport(struct nlmsghdr *nlh)
{
	struct fib_rule_port_range *pr = mnl_attr_get_payload(RULE_ATTR(nlh, FRA_SPORT_RANGE));

	pr->start = (uint16_t)(pr->end + 1);
}

static void
nl_test_mut_rule_dport_mask(struct nlmsghdr *nlh)
{
	*(uint16_t *)mnl_attr_get_payload(RULE_ATTR(nlh, 29 /* FRA_DPORT_MASK */)) = 0xff;
}

static void
nl_test_mut_rule_dscp(struct nlmsghdr *nlh)
{
	mnl_attr_put_u8(nlh, 25 /* FRA_DSCP */, 10);
}

static void
nl_test_mut_rule_dscp_bad(struct nlmsghdr *nlh)
{
	mnl_attr_put_u8(nlh, 25 /* FRA_DSCP */, 64);
}

static void
nl_test_mut_rule_unknown(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, 250, 1);
}

static void
nl_test_mut_rule_del(struct nlmsghdr *nlh)
{
	nlh->nlmsg_type = RTM_DELRULE;
}

static void
nl_test_mut_addr_plen(struct nlmsghdr *nlh)
{
	IFA(nlh)->ifa_prefixlen = 33;
}

static void
nl_test_mut_addr_local_len(struct nlmsghdr *nlh)
{
	ADDR_ATTR(nlh, IFA_LOCAL)->nla_len = NLA_HDRLEN + 2;
}

static void
nl_test_mut_addr_index(struct nlmsghdr *nlh)
{
	IFA(nlh)->ifa_index = 0;
}

static void
nl_test_mut_addr_none(struct nlmsghdr *nlh)
{
	ADDR_ATTR(nlh, IFA_LOCAL)->nla_type = IFA_UNSPEC;
	ADDR_ATTR(nlh, IFA_ADDRESS)->nla_type = IFA_UNSPEC;
}

static void
nl_test_mut_addr_label(struct nlmsghdr *nlh)
{
	nl_test_unterminate(ADDR_ATTR(nlh, IFA_LABEL));
}

static void
nl_test_mut_addr_del(struct nlmsghdr *nlh)
{
	nlh->nlmsg_type = RTM_DELADDR;
}

static void
nl_test_mut_link_index(struct nlmsghdr *nlh)
{
	IFI(nlh)->ifi_index = 0;
}

static void
nl_test_mut_link_bridge(struct nlmsghdr *nlh)
{
	IFI(nlh)->ifi_family = AF_BRIDGE;
}

static void
nl_test_mut_link_noname(struct nlmsghdr *nlh)
{
	LINK_ATTR(nlh, IFLA_IFNAME)->nla_type = IFLA_UNSPEC;
}

static void
nl_test_mut_link_name(struct nlmsghdr *nlh)
{
	nl_test_unterminate(LINK_ATTR(nlh, IFLA_IFNAME));
}

static void
nl_test_mut_link_group(struct nlmsghdr *nlh)
{
	LINK_ATTR(nlh, IFLA_GROUP)->nla_len = NLA_HDRLEN + 2;
}

static void
nl_test_mut_link_info(struct nlmsghdr *nlh)
{
	struct nlattr *kind = mnl_attr_get_payload(LINK_ATTR(nlh, IFLA_LINKINFO));

	kind->nla_len = 0xfff0; /* past IFLA_LINKINFO */
}

/* Into the middle of a link's attributes (its last one may be empty). */
static void
nl_test_mut_trunc100(struct nlmsghdr *nlh)
{
	nlh->nlmsg_len -= 100;
}

static void
nl_test_mut_link_del(struct nlmsghdr *nlh)
{
	nlh->nlmsg_type = RTM_DELLINK;
}

/* A VRF and a member, built by hand: the kernel may lack VRFs. */
static void
nl_test_vrf(struct nlmsghdr *nlh, int member)
{
	struct ifinfomsg *ifi;
	struct nlattr *li, *data;

	nlh = mnl_nlmsg_put_header(nlh);
	nlh->nlmsg_type = RTM_NEWLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = member ? 11 : 10;
	ifi->ifi_flags = 0x10443; /* up, lower_up, running, noarp, broadcast */
	mnl_attr_put_strz(nlh, IFLA_IFNAME, member ? "eth1" : "blue");
	if (member)
		mnl_attr_put_u32(nlh, IFLA_MASTER, 10);
	li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	if (member) {
		mnl_attr_put_strz(nlh, IFLA_INFO_SLAVE_KIND, "vrf");
	} else {
		mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "vrf");
		data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
		mnl_attr_put_u32(nlh, IFLA_VRF_TABLE, 100);
		mnl_attr_nest_end(nlh, data);
	}
	mnl_attr_nest_end(nlh, li);
}

static void
nl_test_mut_vrf(struct nlmsghdr *nlh)
{
	nl_test_vrf(nlh, 0);
}

static void
nl_test_mut_vrf_member(struct nlmsghdr *nlh)
{
	nl_test_vrf(nlh, 1);
}

static void
nl_test_mut_vrf_table_len(struct nlmsghdr *nlh)
{
	struct nlattr *li, *a;

	nl_test_vrf(nlh, 0);
	li = LINK_ATTR(nlh, IFLA_LINKINFO);
	mnl_attr_for_each_nested(a, li) {
		if (mnl_attr_get_type(a) == IFLA_INFO_DATA) {
			struct nlattr *t = mnl_attr_get_payload(a);

			t->nla_len = NLA_HDRLEN + 2;
		}
	}
}

struct nl_test_mut {
	const char *name;
	const char *file; /* a corpus file holding one message */
	void (*mut)(struct nlmsghdr *nlh);
	const char *pre; /* corpus files fed to the next-hop table first, or NULL */
};

static const struct nl_test_mut nl_test_muts[] = {
	{ "family AF_UNIX", "msg-006", nl_test_mut_family, NULL },
	{ "prefix length 33", "msg-006", nl_test_mut_plen, NULL },
	{ "host bits beyond the prefix length", "msg-006", nl_test_mut_hostbits, NULL },
	{ "RTM_F_CLONED", "msg-006", nl_test_mut_cloned, NULL },
	{ "nlmsg_len cut by 2", "msg-006", nl_test_mut_pad, NULL },
	{ "nlmsg_len cut by 4", "msg-006", nl_test_mut_trunc, NULL },
	{ "nlmsg_len shorter than the rtmsg", "msg-006", nl_test_mut_short_header, NULL },
	{ "RTA_TABLE of 2 bytes", "msg-006", nl_test_mut_table_len, NULL },
	{ "RTA_TABLE renumbered 250", "msg-006", nl_test_mut_unknown, NULL },
	{ "RTA_MULTIPATH rtnh_len 0xffff", "msg-007", nl_test_mut_multipath, NULL },
	{ "RTA_VIA family inet with an IPv6 address", "msg-017", nl_test_mut_via, NULL },
	{ "RTA_NH_ID 1 alone, empty next-hop table", "msg-012", nl_test_mut_nh_id, NULL },
	{ "as RTM_DELROUTE", "msg-026", nl_test_mut_del, NULL },
	/* resilient groups: res-006 is a bucket of group 10 (members 1, 2),
	 * res-004 group 10, res-018 the route through it */
	{ "bucket: index 8 of 8 buckets", "res-006", nl_test_mut_nhb_index, "res-all" },
	{ "bucket: member 99, not in the group", "res-006", nl_test_mut_nhb_member, "res-all" },
	{ "bucket: moved to the other member", "res-006", nl_test_mut_nhb_moved, "res-all" },
	{ "bucket: group 77, unknown", "res-006", nl_test_mut_nhb_group, "res-all" },
	{ "bucket: without NHA_RES_BUCKET_INDEX", "res-006", nl_test_mut_nhb_noindex, "res-all" },
	{ "bucket: NHA_RES_BUCKET_NH_ID of 2 bytes", "res-006", nl_test_mut_nhb_nh_len, "res-all" },
	{ "bucket: NHA_RES_BUCKET runs past the message", "res-006", nl_test_mut_nhb_nest_len,
	  "res-all" },
	{ "bucket: of a group not in the table", "res-006", nl_test_mut_nhb_moved, NULL },
	{ "group: NHA_GROUP_TYPE 2", "res-004", nl_test_mut_res_type, NULL },
	{ "group: resilient with 0 buckets", "res-004", nl_test_mut_res_buckets0, NULL },
	{ "group: resilient without NHA_RES_GROUP", "res-004", nl_test_mut_res_nogroup, NULL },
	{ "group: NHA_RES_GROUP_BUCKETS of 1 byte", "res-004", nl_test_mut_res_buckets_len, NULL },
	{ "route: paths and map from the table", "res-018", nl_test_mut_res_route, "res-all" },
	{ "route: buckets not dumped yet", "res-018", nl_test_mut_res_route,
	  "res-000 res-001 res-004" },
	{ "route: as sent, buckets not dumped yet", "res-018", nl_test_mut_none,
	  "res-000 res-001 res-004" },
};

/* On tests/fuzz/nl_policy_corpus (tests/fuzz/make-nl-policy-seeds.sh). */
static const struct nl_test_mut nl_test_pmuts[] = {
	{ "rule: family AF_UNIX", "msg-012", nl_test_mut_rule_family, NULL },
	{ "rule: family RTNL_FAMILY_IPMR", "msg-012", nl_test_mut_rule_ipmr, NULL },
	{ "rule: src_len 33", "msg-012", nl_test_mut_rule_plen, NULL },
	{ "rule: action 4 (FR_ACT_RES3)", "msg-012", nl_test_mut_rule_action, NULL },
	{ "rule: dst_len 24 without FRA_DST", "msg-013", nl_test_mut_rule_dst_len, NULL },
	{ "rule: FRA_PRIORITY of 2 bytes", "msg-012", nl_test_mut_rule_prio_len, NULL },
	{ "rule: nlmsg_len cut by 4", "msg-012", nl_test_mut_trunc, NULL },
	{ "rule: nlmsg_len cut by 2", "msg-012", nl_test_mut_pad, NULL },
	{ "rule: goto without FRA_GOTO", "msg-015", nl_test_mut_rule_goto, NULL },
	{ "rule: FRA_IIFNAME without its NUL", "msg-014", nl_test_mut_rule_iifname, NULL },
	{ "rule: uid range reversed", "msg-017", nl_test_mut_rule_uid, NULL },
	{ "rule: sport range reversed", "msg-016", nl_test_mut_rule_sport, NULL },
	{ "rule: FRA_DPORT_MASK 0xff (partial)", "msg-016", nl_test_mut_rule_dport_mask, NULL },
	{ "rule: FRA_DSCP 10 appended", "msg-018", nl_test_mut_rule_dscp, NULL },
	{ "rule: FRA_DSCP 64", "msg-018", nl_test_mut_rule_dscp_bad, NULL },
	{ "rule: attribute 250 appended", "msg-018", nl_test_mut_rule_unknown, NULL },
	{ "rule: as RTM_DELRULE", "msg-027", nl_test_mut_rule_del, NULL },
	{ "addr: prefix length 33", "msg-005", nl_test_mut_addr_plen, NULL },
	{ "addr: IFA_LOCAL of 2 bytes", "msg-005", nl_test_mut_addr_local_len, NULL },
	{ "addr: ifa_index 0", "msg-005", nl_test_mut_addr_index, NULL },
	{ "addr: neither IFA_LOCAL nor IFA_ADDRESS", "msg-005", nl_test_mut_addr_none, NULL },
	{ "addr: IFA_LABEL without its NUL", "msg-005", nl_test_mut_addr_label, NULL },
	{ "addr: nlmsg_len cut by 4", "msg-005", nl_test_mut_trunc, NULL },
	{ "addr: as RTM_DELADDR", "msg-010", nl_test_mut_addr_del, NULL },
	{ "link: ifi_index 0", "msg-001", nl_test_mut_link_index, NULL },
	{ "link: family AF_BRIDGE", "msg-001", nl_test_mut_link_bridge, NULL },
	{ "link: no IFLA_IFNAME", "msg-001", nl_test_mut_link_noname, NULL },
	{ "link: IFLA_IFNAME without its NUL", "msg-001", nl_test_mut_link_name, NULL },
	{ "link: IFLA_GROUP of 2 bytes", "msg-001", nl_test_mut_link_group, NULL },
	{ "link: IFLA_LINKINFO's kind runs past it", "msg-001", nl_test_mut_link_info, NULL },
	{ "link: nlmsg_len cut by 100", "msg-001", nl_test_mut_trunc100, NULL },
	{ "link: as RTM_DELLINK", "msg-001", nl_test_mut_link_del, NULL },
	{ "link: a VRF, table 100 (by hand)", "msg-001", nl_test_mut_vrf, NULL },
	{ "link: a VRF member (by hand)", "msg-001", nl_test_mut_vrf_member, NULL },
	{ "link: a VRF with IFLA_VRF_TABLE of 2 bytes", "msg-001", nl_test_mut_vrf_table_len, NULL },
};

/* Feed the corpus files named in pre (space-separated) to t, silently. */
static void
nl_test_pre(const char *dir, const char *pre, struct nl_nhtab *t)
{
	char names[256], *save = NULL;

	if (!pre)
		return;
	snprintf(names, sizeof(names), "%s", pre);
	for (char *name = strtok_r(names, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
		char path[4096];
		static uint32_t buf[4096];
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		FILE *in;
		int len;

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		in = fopen(path, "rb");
		ck_assert_msg(in != NULL, "%s: %s", path, strerror(errno));
		len = (int)fread(buf, 1, sizeof(buf), in);
		fclose(in);
		for (; nl_msg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			enum nl_err err;
			int changed;

			if (nlh->nlmsg_type == RTM_NEWNEXTHOP)
				nl_nhtab_msg(t, nlh, &changed, &err);
			else if (nlh->nlmsg_type == RTM_NEWNEXTHOPBUCKET)
				nl_nhtab_bucket_msg(t, nlh, &changed, &err);
		}
	}
}

static char *
nl_test_mutations(const char *dir, const struct nl_test_mut *muts, size_t nmuts, size_t *outlen)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, outlen);

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < nmuts; i++) {
		char path[4096];
		uint32_t buf[1024];
		struct nl_nhtab *t = nl_nhtab_new();
		FILE *in;
		size_t n;

		snprintf(path, sizeof(path), "%s/%s", dir, muts[i].file);
		in = fopen(path, "rb");
		ck_assert_msg(in != NULL, "%s: %s", path, strerror(errno));
		memset(buf, 0, sizeof(buf));
		n = fread(buf, 1, sizeof(buf), in);
		fclose(in);
		ck_assert_ptr_nonnull(t);
		ck_assert_msg(nl_msg_ok((struct nlmsghdr *)buf, (int)n) &&
				      ((struct nlmsghdr *)buf)->nlmsg_len == n,
			      "%s: not one message", path);
		muts[i].mut((struct nlmsghdr *)buf);
		nl_test_pre(dir, muts[i].pre, t);
		fprintf(f, "# %s: %s\n", muts[i].file, muts[i].name);
		nl_test_one(f, t, (struct nlmsghdr *)buf);
		nl_nhtab_free(t);
	}
	fclose(f);
	return out;
}

/*
 * Every file of corpus against golden/<file>.out, and the mutations
 * against golden/mutations.out.
 */
static void
nl_test_golden(const char *corpus, const char *golden, const struct nl_test_mut *muts,
	       size_t nmuts)
{
	char *names[NL_TEST_FILES];
	size_t n = nl_test_list(corpus, names);
	int regen = getenv("NL_TEST_REGEN") != NULL;
	unsigned bad = 0;

	ck_assert_uint_gt(n, 0);
	names[n++] = strdup("mutations"); /* not a corpus file: nl_test_mutations */
	for (size_t i = 0; i < n; i++) {
		char path[4096], *want = NULL;
		size_t len, wlen = 0;
		char *got = i == n - 1 ? nl_test_mutations(corpus, muts, nmuts, &len)
				       : nl_test_file(corpus, names[i], &len);
		FILE *g;

		snprintf(path, sizeof(path), "%s/%s.out", golden, names[i]);
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

			snprintf(actual, sizeof(actual), "nl_test-%s%s.out",
				 muts == nl_test_pmuts ? "policy-" : "", names[i]);
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

START_TEST(test_golden)
{
	nl_test_golden(NL_CORPUS, NL_GOLDEN, nl_test_muts,
		       sizeof(nl_test_muts) / sizeof(nl_test_muts[0]));
}
END_TEST

START_TEST(test_golden_policy)
{
	nl_test_golden(NL_POLICY_CORPUS, NL_GOLDEN "/policy", nl_test_pmuts,
		       sizeof(nl_test_pmuts) / sizeof(nl_test_pmuts[0]));
}
END_TEST

static Suite *
nl_suite(void)
{
	Suite *s = suite_create("nl");
	TCase *tc = tcase_create("golden");

	tcase_add_test(tc, test_golden);
	tcase_add_test(tc, test_golden_policy);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(nl_suite(), CK_FORK_GETENV);
}
