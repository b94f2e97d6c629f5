/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: nl_policy, rtnetlink rules, addresses and links to libfib's policy
 *
 * The edge for what fib/policy.h holds besides routes (doc/style.md,
 * item 4; doc/decisions.md, section 2): RTM_NEWRULE/RTM_DELRULE into a
 * struct fib_rule, RTM_NEWADDR/RTM_DELADDR into a struct fib_ifaddr,
 * RTM_NEWLINK/RTM_DELLINK into a struct fib_link. Each message is checked
 * whole before anything is filled for the caller: a malformed one is
 * rejected with a reason (enum nl_err), never half converted.
 *
 * Attributes are collected as the kernel's nla_parse does (tb[type], the
 * last one of a type wins), each checked against a policy table with the
 * reason a failure is rejected for: nl_fra_policy (rules, after
 * net/core/fib_rules.c's fib_rule_policy), nl_ifa_policy (addresses,
 * after net/ipv4/devinet.c's ifa_ipv4_policy), nl_ifla_policy (links)
 * and the nested IFLA_LINKINFO / IFLA_INFO_DATA of a VRF. The walk must
 * end exactly at the end of the message (or of the nested attribute).
 *
 * Then the checks the kernel makes when it creates a rule
 * (fib_nl2rule, validate_rulemsg): a known action, an address beside a
 * non-zero prefix length, FRA_GOTO exactly with the goto action, an
 * ordered uid or port range. Messages the kernel sends always pass them;
 * they guard the FIB against a corrupted or foreign message.
 *
 * Rule attributes of a type this parser does not know (a newer kernel's
 * selector) and those struct fib_rule cannot hold (FRA_TUN_ID, the flow
 * label, a partial port or DSCP mask) are counted in unknown_attrs and skipped,
 * as for routes: the rule then matches more flows than the kernel's.
 * Address and link messages carry many attributes fibd does not need
 * (statistics, queues, ...): those are skipped without being counted.
 *
 * No I/O, no logging, no globals (daemon/nl.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/fib_rules.h>
#undef FIB_RULE_INVERT /* fib/policy.h defines it again, with the same value */
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "daemon/nl.h"

/*
 * Rule attributes newer than the oldest linux/fib_rules.h fibd builds
 * with (Linux 6.1): enum values, so their presence cannot be tested with
 * #ifdef. FRA_DSCP since 6.12, flow label since 6.14, the masks since
 * 6.15 (a 6.18 kernel sends FRA_DPORT_MASK 0xffff for `dport 443`).
 */
#define NL_FRA_DSCP 25
#define NL_FRA_FLOWLABEL 26
#define NL_FRA_FLOWLABEL_MASK 27
#define NL_FRA_SPORT_MASK 28
#define NL_FRA_DPORT_MASK 29
#define NL_FRA_DSCP_MASK 30
#define NL_FRA_MAX NL_FRA_DSCP_MASK
/* The highest link attribute read here (IFLA_GROUP > IFLA_LINKINFO). */
#define NL_IFLA_MAX IFLA_GROUP

#define NLA_PAYLOAD(a) ((const void *)((const char *)(a) + NLA_HDRLEN))
#define NLA_PLEN(a) ((unsigned)((a)->nla_len - NLA_HDRLEN))

enum nl_ptype {
	NL_P_UNKNOWN = 0, /* not known here: counted (rules only), skipped */
	NL_P_IGNORE,      /* known, not needed: any length, skipped */
	NL_P_COUNT,       /* known, not representable: counted as unknown, skipped */
	NL_P_U8,          /* exactly 1 byte */
	NL_P_U16,         /* exactly 2 bytes */
	NL_P_U32,         /* exactly 4 bytes */
	NL_P_ADDR,        /* exactly the family's address size */
	NL_P_IFNAME,      /* a NUL-terminated name of at most IF_NAMESIZE - 1 bytes */
	NL_P_STRING,      /* NUL-terminated (trailing padding allowed) */
	NL_P_FIXED,       /* exactly size bytes */
	NL_P_NESTED,      /* attributes inside; checked by its own step */
};

struct nl_ppol {
	uint8_t type; /* enum nl_ptype */
	uint8_t err;  /* enum nl_err: the reason when the check fails */
	uint8_t size; /* NL_P_FIXED */
};

#define P_IGNORE { NL_P_IGNORE, 0, 0 }

/* Rule attributes (RTM_NEWRULE, RTM_DELRULE). */
static const struct nl_ppol nl_fra_policy[NL_FRA_MAX + 1] = {
	[FRA_UNSPEC] = P_IGNORE,
	[FRA_DST] = { NL_P_ADDR, NL_ERR_ATTR, 0 },
	[FRA_SRC] = { NL_P_ADDR, NL_ERR_ATTR, 0 },
	[FRA_IIFNAME] = { NL_P_IFNAME, NL_ERR_IFNAME, 0 },
	[FRA_GOTO] = { NL_P_U32, NL_ERR_ATTR, 0 },
	[FRA_PRIORITY] = { NL_P_U32, NL_ERR_ATTR, 0 },
	[FRA_FWMARK] = { NL_P_U32, NL_ERR_ATTR, 0 },
	[FRA_FLOW] = P_IGNORE, /* IPv4 realms: classification, not routing */
	[FRA_TUN_ID] = { NL_P_COUNT, 0, 0 },
	[FRA_SUPPRESS_IFGROUP] = { NL_P_U32, NL_ERR_ATTR, 0 },
	[FRA_SUPPRESS_PREFIXLEN] = { NL_P_U32, NL_ERR_ATTR, 0 },
	[FRA_TABLE] = { NL_P_U32, NL_ERR_ATTR, 0 },
	[FRA_FWMASK] = { NL_P_U32, NL_ERR_ATTR, 0 },
	[FRA_OIFNAME] = { NL_P_IFNAME, NL_ERR_IFNAME, 0 },
	[FRA_PAD] = P_IGNORE,
	[FRA_L3MDEV] = { NL_P_U8, NL_ERR_ATTR, 0 },
	[FRA_UID_RANGE] = { NL_P_FIXED, NL_ERR_ATTR, sizeof(struct fib_rule_uid_range) },
	[FRA_PROTOCOL] = { NL_P_U8, NL_ERR_ATTR, 0 },
	[FRA_IP_PROTO] = { NL_P_U8, NL_ERR_ATTR, 0 },
	[FRA_SPORT_RANGE] = { NL_P_FIXED, NL_ERR_ATTR, sizeof(struct fib_rule_port_range) },
	[FRA_DPORT_RANGE] = { NL_P_FIXED, NL_ERR_ATTR, sizeof(struct fib_rule_port_range) },
	[NL_FRA_DSCP] = { NL_P_U8, NL_ERR_ATTR, 0 },
	[NL_FRA_FLOWLABEL] = { NL_P_COUNT, 0, 0 },
	[NL_FRA_FLOWLABEL_MASK] = { NL_P_COUNT, 0, 0 },
	/* a full mask says what the range says; others: nl_rule_masks */
	[NL_FRA_SPORT_MASK] = { NL_P_U16, NL_ERR_ATTR, 0 },
	[NL_FRA_DPORT_MASK] = { NL_P_U16, NL_ERR_ATTR, 0 },
	[NL_FRA_DSCP_MASK] = { NL_P_U8, NL_ERR_ATTR, 0 },
};

/* Address attributes (RTM_NEWADDR, RTM_DELADDR). */
static const struct nl_ppol nl_ifa_policy[IFA_PROTO + 1] = {
	[IFA_UNSPEC] = P_IGNORE,
	[IFA_ADDRESS] = { NL_P_ADDR, NL_ERR_ATTR, 0 },
	[IFA_LOCAL] = { NL_P_ADDR, NL_ERR_ATTR, 0 },
	[IFA_LABEL] = { NL_P_IFNAME, NL_ERR_IFNAME, 0 },
	[IFA_BROADCAST] = P_IGNORE,
	[IFA_ANYCAST] = P_IGNORE,
	[IFA_CACHEINFO] = P_IGNORE,
	[IFA_MULTICAST] = P_IGNORE,
	[IFA_FLAGS] = { NL_P_U32, NL_ERR_ATTR, 0 },
	[IFA_RT_PRIORITY] = P_IGNORE,
	[IFA_TARGET_NETNSID] = P_IGNORE,
	[IFA_PROTO] = P_IGNORE,
};

/* Link attributes (RTM_NEWLINK, RTM_DELLINK): only those fibd reads. */
static const struct nl_ppol nl_ifla_policy[NL_IFLA_MAX + 1] = {
	[IFLA_IFNAME] = { NL_P_IFNAME, NL_ERR_IFNAME, 0 },
	[IFLA_MASTER] = { NL_P_U32, NL_ERR_ATTR, 0 },
	[IFLA_GROUP] = { NL_P_U32, NL_ERR_ATTR, 0 },
	[IFLA_LINKINFO] = { NL_P_NESTED, NL_ERR_LINK, 0 },
};

/* IFLA_LINKINFO's attributes, and a VRF's IFLA_INFO_DATA. */
static const struct nl_ppol nl_linkinfo_policy[IFLA_INFO_DATA + 1] = {
	[IFLA_INFO_KIND] = { NL_P_STRING, NL_ERR_LINK, 0 },
	[IFLA_INFO_DATA] = { NL_P_NESTED, NL_ERR_LINK, 0 },
};
static const struct nl_ppol nl_vrf_policy[IFLA_VRF_TABLE + 1] = {
	[IFLA_VRF_TABLE] = { NL_P_U32, NL_ERR_LINK, 0 },
};

static unsigned
nl_pol_alen(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

static uint32_t
nl_pol_u32(const struct nlattr *a)
{
	uint32_t v;

	memcpy(&v, NLA_PAYLOAD(a), sizeof(v));
	return v;
}

static uint8_t
nl_pol_u8(const struct nlattr *a)
{
	return *(const uint8_t *)NLA_PAYLOAD(a);
}

/* Does a satisfy pol? alen: the family's address size (0: none). */
static int
nl_pol_valid(const struct nl_ppol *pol, const struct nlattr *a, unsigned alen)
{
	const char *s = NLA_PAYLOAD(a);
	unsigned plen = NLA_PLEN(a);
	size_t n;

	switch (pol->type) {
	case NL_P_U8:
		return plen == 1;
	case NL_P_U16:
		return plen == 2;
	case NL_P_U32:
		return plen == 4;
	case NL_P_ADDR:
		return alen && plen == alen;
	case NL_P_FIXED:
		return plen == pol->size;
	case NL_P_IFNAME:
		n = strnlen(s, plen);
		return n < plen && n > 0 && n < IF_NAMESIZE;
	case NL_P_STRING:
		return strnlen(s, plen) < plen;
	default:
		return 1;
	}
}

/* What an attribute walk found. */
struct nl_tb {
	const struct nlattr **tb; /* tb[type], NULL when absent */
	size_t ntb;
	uint32_t unknown; /* NL_P_UNKNOWN (when counted) and NL_P_COUNT */
	uint16_t unknown_type;
};

/*
 * Walk the attributes in [p, end) against pol (npol entries): each known
 * one is checked and stored in t->tb; unknown ones are counted when
 * count_unknown is set. The walk must end exactly at end.
 */
static int
nl_pol_walk(const char *p, const char *end, const struct nl_ppol *pol, size_t npol,
	    unsigned alen, int count_unknown, struct nl_tb *t, enum nl_err *err)
{
	const struct nlattr *a;

	for (; end - p >= NLA_HDRLEN; p += NLA_ALIGN(a->nla_len)) {
		const struct nl_ppol *pp;
		unsigned type;

		a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > end - p) {
			*err = NL_ERR_TRUNC;
			return -EINVAL;
		}
		type = a->nla_type & NLA_TYPE_MASK;
		pp = type < npol ? &pol[type] : NULL;
		if (!pp || pp->type == NL_P_UNKNOWN || pp->type == NL_P_COUNT) {
			if (pp || count_unknown) {
				t->unknown++;
				t->unknown_type = (uint16_t)type;
			}
			continue;
		}
		if (!nl_pol_valid(pp, a, alen)) {
			*err = (enum nl_err)pp->err;
			return -EINVAL;
		}
		if (type < t->ntb)
			t->tb[type] = a;
	}
	/* Bytes left that cannot hold an attribute header: a cut message
	 * (padding after the last attribute lies inside NLA_ALIGN). */
	if (p != end) {
		*err = NL_ERR_TRUNC;
		return -EINVAL;
	}
	return 0;
}

/* The attributes of a message after its fixed header of hdrlen bytes. */
static int
nl_pol_msg(const struct nlmsghdr *nlh, size_t hdrlen, const struct nl_ppol *pol, size_t npol,
	   unsigned alen, int count_unknown, struct nl_tb *t, enum nl_err *err)
{
	const char *p = (const char *)nlh + NLMSG_HDRLEN + NLMSG_ALIGN(hdrlen);
	const char *end = (const char *)nlh + NLMSG_ALIGN(nlh->nlmsg_len);

	if (p > end) { /* a header that fits but whose alignment does not */
		*err = NL_ERR_TRUNC;
		return -EINVAL;
	}
	return nl_pol_walk(p, end, pol, npol, alen, count_unknown, t, err);
}

/* Rules. */

static int
nl_rule_action_ok(unsigned action)
{
	switch (action) {
	case FIB_RULE_TO_TBL:
	case FIB_RULE_GOTO:
	case FIB_RULE_NOP:
	case FIB_RULE_BLACKHOLE:
	case FIB_RULE_UNREACHABLE:
	case FIB_RULE_PROHIBIT:
		return 1;
	default:
		return 0;
	}
}

/* The kernel's checks of a rule (fib_nl2rule, validate_rulemsg). */
static int
nl_rule_check(const struct fib_rule_hdr *frh, const struct nlattr *const *tb, enum nl_err *err)
{
	*err = NL_ERR_RULE;
	if (!nl_rule_action_ok(frh->action))
		return -EINVAL;
	if ((frh->src_len && !tb[FRA_SRC]) || (frh->dst_len && !tb[FRA_DST]))
		return -EINVAL;
	if (!tb[FRA_GOTO] != (frh->action != FR_ACT_GOTO))
		return -EINVAL;
	if (tb[FRA_UID_RANGE]) {
		struct fib_rule_uid_range u;

		memcpy(&u, NLA_PAYLOAD(tb[FRA_UID_RANGE]), sizeof(u));
		if (u.start > u.end)
			return -EINVAL;
	}
	for (unsigned t = FRA_SPORT_RANGE; t <= FRA_DPORT_RANGE; t++) {
		struct fib_rule_port_range pr;

		if (!tb[t])
			continue;
		memcpy(&pr, NLA_PAYLOAD(tb[t]), sizeof(pr));
		if (pr.start > pr.end || pr.end == 0)
			return -EINVAL;
	}
	if (tb[NL_FRA_DSCP] && nl_pol_u8(tb[NL_FRA_DSCP]) > 63)
		return -EINVAL;
	return 0;
}

/*
 * Port and DSCP masks: a full mask (a single port, all six DSCP bits) is
 * what struct fib_rule holds already; a partial one it cannot hold, so
 * it is counted with the unknown attributes.
 */
static void
nl_rule_masks(const struct nlattr *const *tb, struct nl_tb *t)
{
	static const struct {
		unsigned type, full;
	} m[] = { { NL_FRA_SPORT_MASK, 0xffff }, { NL_FRA_DPORT_MASK, 0xffff },
		  { NL_FRA_DSCP_MASK, 0x3f } };

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		const struct nlattr *a = tb[m[i].type];
		unsigned v;

		if (!a)
			continue;
		if (m[i].type == NL_FRA_DSCP_MASK) {
			v = nl_pol_u8(a);
		} else {
			uint16_t v16;

			memcpy(&v16, NLA_PAYLOAD(a), sizeof(v16));
			v = v16;
		}
		if (v != m[i].full) {
			t->unknown++;
			t->unknown_type = (uint16_t)m[i].type;
		}
	}
}

/* A checked rule message into r: the kernel's defaults for what is absent. */
static void
nl_rule_fill(const struct fib_rule_hdr *frh, const struct nlattr *const *tb, unsigned alen,
	     struct fib_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->family = frh->family;
	r->action = frh->action;
	r->src_len = frh->src_len;
	r->dst_len = frh->dst_len;
	r->tos = frh->tos;
	r->table = frh->table;
	r->flags = frh->flags & FIB_RULE_INVERT;
	r->suppress_prefixlen = -1;
	r->suppress_ifgroup = -1;
	r->uid_lo = 1; /* lo > hi: any uid */
	if (tb[FRA_SRC])
		memcpy(r->src.b, NLA_PAYLOAD(tb[FRA_SRC]), alen);
	if (tb[FRA_DST])
		memcpy(r->dst.b, NLA_PAYLOAD(tb[FRA_DST]), alen);
	if (tb[FRA_IIFNAME])
		strcpy(r->iifname, NLA_PAYLOAD(tb[FRA_IIFNAME]));
	if (tb[FRA_OIFNAME])
		strcpy(r->oifname, NLA_PAYLOAD(tb[FRA_OIFNAME]));
	if (tb[FRA_PRIORITY])
		r->priority = nl_pol_u32(tb[FRA_PRIORITY]);
	if (tb[FRA_TABLE])
		r->table = nl_pol_u32(tb[FRA_TABLE]);
	if (tb[FRA_GOTO])
		r->goto_prio = nl_pol_u32(tb[FRA_GOTO]);
	if (tb[FRA_FWMARK]) {
		r->mark = nl_pol_u32(tb[FRA_FWMARK]);
		if (r->mark) /* the kernel's default mask for a mark without one */
			r->mark_mask = 0xffffffff;
	}
	if (tb[FRA_FWMASK])
		r->mark_mask = nl_pol_u32(tb[FRA_FWMASK]);
	if (tb[FRA_SUPPRESS_PREFIXLEN])
		r->suppress_prefixlen = (int32_t)nl_pol_u32(tb[FRA_SUPPRESS_PREFIXLEN]);
	if (tb[FRA_SUPPRESS_IFGROUP])
		r->suppress_ifgroup = (int32_t)nl_pol_u32(tb[FRA_SUPPRESS_IFGROUP]);
	if (tb[FRA_L3MDEV])
		r->l3mdev = nl_pol_u8(tb[FRA_L3MDEV]) ? 1 : 0;
	if (tb[FRA_PROTOCOL])
		r->protocol = nl_pol_u8(tb[FRA_PROTOCOL]);
	if (tb[FRA_IP_PROTO])
		r->ipproto = nl_pol_u8(tb[FRA_IP_PROTO]);
	if (tb[FRA_UID_RANGE]) {
		struct fib_rule_uid_range u;

		memcpy(&u, NLA_PAYLOAD(tb[FRA_UID_RANGE]), sizeof(u));
		r->uid_lo = u.start;
		r->uid_hi = u.end;
	}
	if (tb[FRA_SPORT_RANGE]) {
		struct fib_rule_port_range pr;

		memcpy(&pr, NLA_PAYLOAD(tb[FRA_SPORT_RANGE]), sizeof(pr));
		r->sport_lo = pr.start;
		r->sport_hi = pr.end;
	}
	if (tb[FRA_DPORT_RANGE]) {
		struct fib_rule_port_range pr;

		memcpy(&pr, NLA_PAYLOAD(tb[FRA_DPORT_RANGE]), sizeof(pr));
		r->dport_lo = pr.start;
		r->dport_hi = pr.end;
	}
	if (tb[NL_FRA_DSCP]) {
		r->tos = nl_pol_u8(tb[NL_FRA_DSCP]);
		r->flags |= FIB_RULE_DSCP;
	}
}

int
nl_rule_parse(const struct nlmsghdr *nlh, struct nl_rule *out, enum nl_err *err)
{
	const struct nlattr *tb[NL_FRA_MAX + 1] = { 0 };
	struct nl_tb t = { tb, NL_FRA_MAX + 1, 0, 0 };
	const struct fib_rule_hdr *frh;
	unsigned alen;

	out->msg_type = nlh->nlmsg_type;
	out->unknown_attrs = 0;
	out->unknown_type = 0;
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*frh)) {
		*err = NL_ERR_TRUNC;
		return -EINVAL;
	}
	frh = (const struct fib_rule_hdr *)((const char *)nlh + NLMSG_HDRLEN);
	if (frh->family == RTNL_FAMILY_IPMR || frh->family == RTNL_FAMILY_IP6MR)
		return NL_SKIP; /* multicast routing rules */
	alen = nl_pol_alen(frh->family);
	if (!alen) {
		*err = NL_ERR_FAMILY;
		return -EINVAL;
	}
	if (frh->src_len > alen * 8 || frh->dst_len > alen * 8) {
		*err = NL_ERR_PLEN;
		return -EINVAL;
	}
	if (nl_pol_msg(nlh, sizeof(*frh), nl_fra_policy, NL_FRA_MAX + 1, alen, 1, &t, err) < 0 ||
	    nl_rule_check(frh, tb, err) < 0)
		return -EINVAL;
	nl_rule_masks(tb, &t);
	out->unknown_attrs = t.unknown;
	out->unknown_type = t.unknown_type;
	nl_rule_fill(frh, tb, alen, &out->r);
	return NL_OK;
}

/* Addresses. */

int
nl_ifaddr_parse(const struct nlmsghdr *nlh, struct nl_ifaddr *out, enum nl_err *err)
{
	const struct nlattr *tb[IFA_PROTO + 1] = { 0 };
	struct nl_tb t = { tb, IFA_PROTO + 1, 0, 0 };
	const struct ifaddrmsg *ifa;
	const struct nlattr *addr;
	struct fib_ifaddr *a = &out->a;
	unsigned alen;

	out->msg_type = nlh->nlmsg_type;
	out->label[0] = 0;
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*ifa)) {
		*err = NL_ERR_TRUNC;
		return -EINVAL;
	}
	ifa = (const struct ifaddrmsg *)((const char *)nlh + NLMSG_HDRLEN);
	alen = nl_pol_alen(ifa->ifa_family);
	if (!alen) {
		*err = NL_ERR_FAMILY;
		return -EINVAL;
	}
	if (ifa->ifa_prefixlen > alen * 8) {
		*err = NL_ERR_PLEN;
		return -EINVAL;
	}
	if (nl_pol_msg(nlh, sizeof(*ifa), nl_ifa_policy, IFA_PROTO + 1, alen, 0, &t, err) < 0)
		return -EINVAL;
	/* IFA_LOCAL is the local address; IFA_ADDRESS is the peer on a
	 * point-to-point link and the local address when alone (IPv6). */
	addr = tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
	if (!addr || ifa->ifa_index == 0) {
		*err = NL_ERR_IFADDR;
		return -EINVAL;
	}
	memset(a, 0, sizeof(*a));
	a->family = ifa->ifa_family;
	a->plen = ifa->ifa_prefixlen;
	a->scope = ifa->ifa_scope;
	a->ifindex = ifa->ifa_index;
	a->flags = tb[IFA_FLAGS] ? nl_pol_u32(tb[IFA_FLAGS]) : ifa->ifa_flags;
	memcpy(a->addr.b, NLA_PAYLOAD(addr), alen);
	if (tb[IFA_LABEL])
		strcpy(out->label, NLA_PAYLOAD(tb[IFA_LABEL]));
	return NL_OK;
}

/* Links. */

/* IFLA_LINKINFO: the kind and, for a VRF, its table. */
static int
nl_link_info(const struct nlattr *li, struct nl_link *out, enum nl_err *err)
{
	const struct nlattr *tb[IFLA_INFO_DATA + 1] = { 0 };
	const struct nlattr *vtb[IFLA_VRF_TABLE + 1] = { 0 };
	struct nl_tb t = { tb, IFLA_INFO_DATA + 1, 0, 0 };
	struct nl_tb vt = { vtb, IFLA_VRF_TABLE + 1, 0, 0 };
	const char *p = NLA_PAYLOAD(li);

	if (nl_pol_walk(p, p + NLA_ALIGN(NLA_PLEN(li)), nl_linkinfo_policy, IFLA_INFO_DATA + 1, 0,
			0, &t, err) < 0) {
		*err = NL_ERR_LINK;
		return -EINVAL;
	}
	if (tb[IFLA_INFO_KIND]) {
		const char *kind = NLA_PAYLOAD(tb[IFLA_INFO_KIND]);

		strncpy(out->kind, kind, sizeof(out->kind) - 1);
		out->kind[sizeof(out->kind) - 1] = 0;
	}
	if (!tb[IFLA_INFO_DATA] || strcmp(out->kind, "vrf"))
		return 0;
	p = NLA_PAYLOAD(tb[IFLA_INFO_DATA]);
	if (nl_pol_walk(p, p + NLA_ALIGN(NLA_PLEN(tb[IFLA_INFO_DATA])), nl_vrf_policy,
			IFLA_VRF_TABLE + 1, 0, 0, &vt, err) < 0) {
		*err = NL_ERR_LINK;
		return -EINVAL;
	}
	if (vtb[IFLA_VRF_TABLE])
		out->l.vrf_table = nl_pol_u32(vtb[IFLA_VRF_TABLE]);
	return 0;
}

int
nl_link_parse(const struct nlmsghdr *nlh, struct nl_link *out, enum nl_err *err)
{
	const struct nlattr *tb[NL_IFLA_MAX + 1] = { 0 };
	struct nl_tb t = { tb, NL_IFLA_MAX + 1, 0, 0 };
	const struct ifinfomsg *ifi;
	struct fib_link *l = &out->l;

	out->msg_type = nlh->nlmsg_type;
	memset(l, 0, sizeof(*l));
	out->kind[0] = 0;
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*ifi)) {
		*err = NL_ERR_TRUNC;
		return -EINVAL;
	}
	ifi = (const struct ifinfomsg *)((const char *)nlh + NLMSG_HDRLEN);
	if (ifi->ifi_family != AF_UNSPEC)
		return NL_SKIP; /* bridge port or IPv6 device notifications */
	if (ifi->ifi_index <= 0) {
		*err = NL_ERR_LINK;
		return -EINVAL;
	}
	if (nl_pol_msg(nlh, sizeof(*ifi), nl_ifla_policy, NL_IFLA_MAX + 1, 0, 0, &t, err) < 0)
		return -EINVAL;
	if (!tb[IFLA_IFNAME]) { /* the kernel names every link it reports */
		*err = NL_ERR_LINK;
		return -EINVAL;
	}
	if (tb[IFLA_LINKINFO] && nl_link_info(tb[IFLA_LINKINFO], out, err) < 0)
		return -EINVAL;
	l->ifindex = (uint32_t)ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	strcpy(l->name, NLA_PAYLOAD(tb[IFLA_IFNAME]));
	if (tb[IFLA_MASTER])
		l->master = nl_pol_u32(tb[IFLA_MASTER]);
	if (tb[IFLA_GROUP])
		l->group = nl_pol_u32(tb[IFLA_GROUP]);
	return NL_OK;
}
