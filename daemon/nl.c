/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: nl implementation
 *
 * Attributes are walked once and each is checked against a policy table
 * (nl_rta_policy for a route, nl_rtnh_policy for a path of RTA_MULTIPATH,
 * nl_nha_policy for a next-hop object), as the kernel's rtm_ipv4_policy
 * and BIRD's nl_want_attrs: a fixed-size attribute must have exactly its
 * size, an address the size of the message's family (RTA_VIA carries its
 * own family), and each entry names the reason (enum nl_err) a message
 * that fails is rejected for. The walk must end exactly at the end of the
 * message. Attributes the kernel sends but the FIB does not need
 * (metrics, cacheinfo, pref, expires, ...) are skipped silently;
 * attribute types absent from a route's tables are counted in
 * nl_route.unknown_attrs and skipped, as a newer kernel may add some.
 *
 * A route message is parsed in named steps (nl_route_parse): the header,
 * the attributes, the canonical key, the paths (multipath, single, or a
 * next-hop object), and whether it is a forwarding entry at all.
 *
 * Weights: rtnh_hops and nexthop_grp.weight both hold weight - 1, so a
 * fib_nh weight is the field plus one (1..256).
 *
 * The next-hop table is a chained hash of object id. A group stores its
 * member ids and is expanded at parse time, so a route always carries its
 * paths in the form the FIB stores.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "daemon/nl.h"

static const char *const nl_err_names[NL_ERR_COUNT] = {
	[NL_ERR_TRUNC] = "trunc",
	[NL_ERR_FAMILY] = "family",
	[NL_ERR_PLEN] = "plen",
	[NL_ERR_ATTR] = "attr",
	[NL_ERR_MULTIPATH] = "multipath",
	[NL_ERR_NH_MAX] = "nh_max",
	[NL_ERR_VIA] = "via",
	[NL_ERR_NH_ID] = "nh_id",
	[NL_ERR_NHMSG] = "nhmsg",
	[NL_ERR_RULE] = "rule",
	[NL_ERR_IFNAME] = "ifname",
	[NL_ERR_IFADDR] = "ifaddr",
	[NL_ERR_LINK] = "link",
	[NL_ERR_NHBUCKET] = "nhbucket",
};

const char *
nl_err_name(unsigned err)
{
	return err < NL_ERR_COUNT ? nl_err_names[err] : "?";
}

#define NLA_DATA(a) ((const void *)((const char *)(a) + NLA_HDRLEN))

static inline uint32_t
nl_attr_u32(const struct nlattr *a)
{
	uint32_t v;

	memcpy(&v, NLA_DATA(a), sizeof(v));
	return v;
}

static inline uint16_t
nl_attr_u16(const struct nlattr *a)
{
	uint16_t v;

	memcpy(&v, NLA_DATA(a), sizeof(v));
	return v;
}

static unsigned
nl_alen(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

/*
 * The policy tables: what each attribute must look like, and the reason
 * (enum nl_err, named by nl_err_name) a message is rejected for when it
 * does not, as the kernel's rtm_ipv4_policy and BIRD's nl_want_attrs.
 * Types absent from a table are NL_A_UNKNOWN.
 */
enum nl_atype {
	NL_A_UNKNOWN = 0, /* not known here: a route counts it, then skips it */
	NL_A_IGNORE,      /* known, not needed by the FIB: any length, skipped */
	NL_A_U16,         /* exactly 2 bytes */
	NL_A_U32,         /* exactly 4 bytes */
	NL_A_U64,         /* exactly 8 bytes */
	NL_A_ADDR,        /* exactly the message family's address size */
	NL_A_VIA,         /* struct rtvia, sized by its own family */
	NL_A_NESTED,      /* checked by its own step (RTA_MULTIPATH) */
	NL_A_GROUP,       /* a non-empty array of struct nexthop_grp */
};

struct nl_policy {
	uint8_t type; /* enum nl_atype */
	uint8_t err;  /* enum nl_err: the reason when the check fails */
};

#define NL_IGNORE { NL_A_IGNORE, 0 }

/* Route attributes (RTM_NEWROUTE, RTM_DELROUTE). */
static const struct nl_policy nl_rta_policy[] = {
	[RTA_UNSPEC] = NL_IGNORE,
	[RTA_DST] = { NL_A_ADDR, NL_ERR_ATTR },
	[RTA_SRC] = NL_IGNORE,
	[RTA_IIF] = NL_IGNORE,
	[RTA_OIF] = { NL_A_U32, NL_ERR_ATTR },
	[RTA_GATEWAY] = { NL_A_ADDR, NL_ERR_ATTR },
	[RTA_PRIORITY] = { NL_A_U32, NL_ERR_ATTR },
	[RTA_PREFSRC] = { NL_A_ADDR, NL_ERR_ATTR },
	[RTA_METRICS] = NL_IGNORE,
	[RTA_MULTIPATH] = { NL_A_NESTED, NL_ERR_MULTIPATH },
	[RTA_PROTOINFO] = NL_IGNORE,
	[RTA_FLOW] = NL_IGNORE,
	[RTA_CACHEINFO] = NL_IGNORE,
	[RTA_SESSION] = NL_IGNORE,
	[RTA_MP_ALGO] = NL_IGNORE,
	[RTA_TABLE] = { NL_A_U32, NL_ERR_ATTR },
	[RTA_MARK] = NL_IGNORE,
	[RTA_MFC_STATS] = NL_IGNORE,
	[RTA_VIA] = { NL_A_VIA, NL_ERR_VIA },
	[RTA_NEWDST] = NL_IGNORE,
	[RTA_PREF] = NL_IGNORE,
	[RTA_ENCAP_TYPE] = { NL_A_U16, NL_ERR_ATTR },
	[RTA_ENCAP] = NL_IGNORE,
	[RTA_EXPIRES] = NL_IGNORE,
	[RTA_PAD] = NL_IGNORE,
	[RTA_UID] = NL_IGNORE,
	[RTA_TTL_PROPAGATE] = NL_IGNORE,
	[RTA_IP_PROTO] = NL_IGNORE,
	[RTA_SPORT] = NL_IGNORE,
	[RTA_DPORT] = NL_IGNORE,
	[RTA_NH_ID] = { NL_A_U32, NL_ERR_ATTR },
};

/* Attributes of one path inside RTA_MULTIPATH (after its struct rtnexthop). */
static const struct nl_policy nl_rtnh_policy[] = {
	[RTA_GATEWAY] = { NL_A_ADDR, NL_ERR_MULTIPATH },
	[RTA_VIA] = { NL_A_VIA, NL_ERR_VIA },
	[RTA_ENCAP_TYPE] = NL_IGNORE,
	[RTA_ENCAP] = NL_IGNORE,
	[RTA_FLOW] = NL_IGNORE,
	[RTA_NEWDST] = NL_IGNORE,
};

/* Next-hop object attributes (RTM_NEWNEXTHOP, RTM_DELNEXTHOP); types not
 * listed are skipped without being counted. */
static const struct nl_policy nl_nha_policy[] = {
	[NHA_ID] = { NL_A_U32, NL_ERR_NHMSG },
	[NHA_GROUP] = { NL_A_GROUP, NL_ERR_NHMSG },
	[NHA_GROUP_TYPE] = { NL_A_U16, NL_ERR_NHMSG },
	[NHA_BLACKHOLE] = NL_IGNORE,
	[NHA_OIF] = { NL_A_U32, NL_ERR_NHMSG },
	[NHA_GATEWAY] = { NL_A_ADDR, NL_ERR_NHMSG },
	[NHA_FDB] = NL_IGNORE,
	[NHA_RES_GROUP] = { NL_A_NESTED, NL_ERR_NHMSG },
};

/* Inside NHA_RES_GROUP: the resilient group's parameters (type 0 is the
 * 64-bit padding). */
static const struct nl_policy nl_nha_res_group_policy[] = {
	[NHA_RES_GROUP_PAD] = NL_IGNORE,
	[NHA_RES_GROUP_BUCKETS] = { NL_A_U16, NL_ERR_NHMSG },
	[NHA_RES_GROUP_IDLE_TIMER] = { NL_A_U32, NL_ERR_NHMSG },
	[NHA_RES_GROUP_UNBALANCED_TIMER] = { NL_A_U32, NL_ERR_NHMSG },
	[NHA_RES_GROUP_UNBALANCED_TIME] = { NL_A_U64, NL_ERR_NHMSG },
};

/* A bucket message (RTM_NEWNEXTHOPBUCKET): the group's id and one bucket. */
static const struct nl_policy nl_nhb_policy[] = {
	[NHA_ID] = { NL_A_U32, NL_ERR_NHBUCKET },
	[NHA_RES_BUCKET] = { NL_A_NESTED, NL_ERR_NHBUCKET },
};

/* Inside NHA_RES_BUCKET. */
static const struct nl_policy nl_nha_res_bucket_policy[] = {
	[NHA_RES_BUCKET_PAD] = NL_IGNORE,
	[NHA_RES_BUCKET_INDEX] = { NL_A_U16, NL_ERR_NHBUCKET },
	[NHA_RES_BUCKET_IDLE_TIME] = { NL_A_U64, NL_ERR_NHBUCKET },
	[NHA_RES_BUCKET_NH_ID] = { NL_A_U32, NL_ERR_NHBUCKET },
};

#define NL_POLICY(tab, type)                                                               \
	((type) < sizeof(tab) / sizeof((tab)[0]) ? &(tab)[type] : &nl_policy_unknown)

static const struct nl_policy nl_policy_unknown = { NL_A_UNKNOWN, 0 };

/* The address length of a well-formed RTA_VIA, 0 if it is malformed. */
static unsigned
nl_via_alen(const struct nlattr *a)
{
	const struct rtvia *v = mnl_attr_get_payload(a);
	unsigned len = mnl_attr_get_payload_len(a);
	unsigned alen;

	if (len < sizeof(*v))
		return 0;
	alen = nl_alen(v->rtvia_family);
	return alen && len == sizeof(*v) + alen ? alen : 0;
}

/* A well-formed RTA_VIA (nl_via_alen) as nh's gateway. */
static void
nl_via_copy(const struct nlattr *a, struct fib_nh *nh)
{
	const struct rtvia *v = mnl_attr_get_payload(a);

	memcpy(nh->gw.b, v->rtvia_addr, nl_via_alen(a));
	nh->gw_family = (uint8_t)v->rtvia_family;
}

/* Does a (inside its message) satisfy pol? alen: the family's address size. */
static int
nl_attr_valid(const struct nl_policy *pol, const struct nlattr *a, unsigned alen)
{
	unsigned plen = a->nla_len - NLA_HDRLEN;

	switch (pol->type) {
	case NL_A_U16:
		return plen == 2;
	case NL_A_U32:
		return plen == 4;
	case NL_A_U64:
		return plen == 8;
	case NL_A_ADDR:
		return alen && plen == alen;
	case NL_A_VIA:
		return nl_via_alen(a) != 0;
	case NL_A_GROUP:
		return plen && plen % sizeof(struct nexthop_grp) == 0;
	default:
		return 1;
	}
}

/* One path of RTA_MULTIPATH into nh; rtnh lies inside the attribute. */
static int
nl_rtnh_parse(const struct rtnexthop *rtnh, int family, struct fib_nh *nh, struct nl_route *out,
	      enum nl_err *err)
{
	const struct nlattr *a = (const struct nlattr *)((const char *)rtnh +
							 RTNH_ALIGN(sizeof(*rtnh)));
	int left = (int)rtnh->rtnh_len - (int)RTNH_ALIGN(sizeof(*rtnh));
	unsigned alen = nl_alen(family);

	memset(nh, 0, sizeof(*nh));
	nh->weight = (uint16_t)(rtnh->rtnh_hops + 1);
	nh->ifindex = (uint32_t)rtnh->rtnh_ifindex;
	nh->flags = (rtnh->rtnh_flags & RTNH_F_ONLINK) ? FIB_NH_ONLINK : 0;
	for (; left >= (int)sizeof(struct nlattr);
	     left -= (int)MNL_ALIGN(a->nla_len),
	     a = (const struct nlattr *)((const char *)a + MNL_ALIGN(a->nla_len))) {
		unsigned type = mnl_attr_get_type(a);
		const struct nl_policy *pol = NL_POLICY(nl_rtnh_policy, type);

		if (a->nla_len < sizeof(struct nlattr) || a->nla_len > left) {
			*err = NL_ERR_MULTIPATH;
			return -EINVAL;
		}
		if (pol->type == NL_A_UNKNOWN) {
			out->unknown_attrs++;
			out->unknown_type = (uint16_t)type;
			continue;
		}
		if (!nl_attr_valid(pol, a, alen)) {
			*err = (enum nl_err)pol->err;
			return -EINVAL;
		}
		if (type == RTA_GATEWAY) {
			memcpy(nh->gw.b, mnl_attr_get_payload(a), alen);
			nh->gw_family = (uint8_t)family;
		} else if (type == RTA_VIA) {
			nl_via_copy(a, nh);
		}
	}
	if (left > 0) {
		*err = NL_ERR_MULTIPATH;
		return -EINVAL;
	}
	return 0;
}

/* RTA_MULTIPATH: a list of struct rtnexthop, each with its attributes. */
static int
nl_multipath(const struct nlattr *mp, int family, struct nl_route *out, enum nl_err *err)
{
	const char *p = mnl_attr_get_payload(mp);
	int left = (int)mnl_attr_get_payload_len(mp);
	unsigned n = 0;

	while (left > 0) {
		const struct rtnexthop *rtnh = (const struct rtnexthop *)p;

		if (left < (int)sizeof(*rtnh) || rtnh->rtnh_len < sizeof(*rtnh) ||
		    rtnh->rtnh_len > left)
			goto bad;
		if (n == NL_NH_MAX) {
			*err = NL_ERR_NH_MAX;
			return -EINVAL;
		}
		if (nl_rtnh_parse(rtnh, family, &out->nh[n++], out, err) < 0)
			return -EINVAL;
		left -= (int)RTNH_ALIGN(rtnh->rtnh_len);
		p += RTNH_ALIGN(rtnh->rtnh_len);
	}
	if (n == 0)
		goto bad;
	out->r.nh_count = (uint8_t)(n == 256 ? 255 : n);
	if (n > 255) {
		*err = NL_ERR_NH_MAX;
		return -EINVAL;
	}
	return 0;
bad:
	*err = NL_ERR_MULTIPATH;
	return -EINVAL;
}

/* What the attribute walk of a route found besides the route's fields. */
struct nl_rta {
	unsigned alen;               /* the family's address size */
	const struct nlattr *mp;     /* RTA_MULTIPATH */
	int has_nh0;                 /* a single path: RTA_GATEWAY, RTA_VIA or RTA_OIF */
};

/* Step 1: the struct rtmsg: size, family, prefix length; the route's fields. */
static int
nl_route_header(const struct nlmsghdr *nlh, struct nl_route *out, struct nl_rta *st,
		enum nl_err *err)
{
	const struct rtmsg *rtm;
	struct fib_route *r = &out->r;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*rtm)) {
		*err = NL_ERR_TRUNC;
		return -EINVAL;
	}
	rtm = mnl_nlmsg_get_payload(nlh);
	memset(r, 0, sizeof(*r));
	memset(&out->nh[0], 0, sizeof(out->nh[0]));
	out->msg_type = nlh->nlmsg_type;
	out->msg_flags = nlh->nlmsg_flags;
	out->unknown_attrs = 0;
	out->nh_resolved = 0;
	out->res_incomplete = 0;

	st->alen = nl_alen(rtm->rtm_family);
	if (!st->alen) {
		*err = NL_ERR_FAMILY;
		return -EINVAL;
	}
	if (rtm->rtm_dst_len > st->alen * 8) {
		*err = NL_ERR_PLEN;
		return -EINVAL;
	}
	r->family = rtm->rtm_family;
	r->plen = rtm->rtm_dst_len;
	r->type = rtm->rtm_type;
	r->tos = rtm->rtm_tos;
	r->protocol = rtm->rtm_protocol;
	r->scope = rtm->rtm_scope;
	r->table = rtm->rtm_table;
	r->nh = out->nh;
	return 0;
}

/* A route attribute that passed nl_rta_policy, into the route. */
static void
nl_rta_store(struct nl_route *out, unsigned type, const struct nlattr *a, struct nl_rta *st)
{
	struct fib_route *r = &out->r;
	struct fib_nh *nh0 = &out->nh[0];

	switch (type) {
	case RTA_DST:
		memcpy(r->dst.b, NLA_DATA(a), st->alen);
		break;
	case RTA_TABLE:
		r->table = nl_attr_u32(a);
		break;
	case RTA_PRIORITY:
		r->priority = nl_attr_u32(a);
		break;
	case RTA_GATEWAY:
		memcpy(nh0->gw.b, NLA_DATA(a), st->alen);
		nh0->gw_family = r->family;
		st->has_nh0 = 1;
		break;
	case RTA_VIA:
		nl_via_copy(a, nh0);
		st->has_nh0 = 1;
		break;
	case RTA_OIF:
		nh0->ifindex = nl_attr_u32(a);
		st->has_nh0 = 1;
		break;
	case RTA_PREFSRC:
		memcpy(r->prefsrc.b, NLA_DATA(a), st->alen);
		r->prefsrc_set = 1;
		break;
	case RTA_MULTIPATH:
		st->mp = a;
		break;
	case RTA_NH_ID:
		r->nh_id = nl_attr_u32(a);
		break;
	case RTA_ENCAP_TYPE:
		r->encap_type = nl_attr_u16(a);
		break;
	default:
		break;
	}
}

/*
 * Step 2: the attributes, each checked against nl_rta_policy; the walk
 * must end exactly at the end of the message. The hot loop of a
 * full-table dump: libmnl's accessors inlined.
 */
static int
nl_route_attrs(const struct nlmsghdr *nlh, struct nl_route *out, struct nl_rta *st,
	       enum nl_err *err)
{
	const char *p = (const char *)nlh + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct rtmsg));
	const char *end = (const char *)nlh + NLMSG_ALIGN(nlh->nlmsg_len);
	const struct nlattr *a = NULL;

	for (; end - p >= NLA_HDRLEN; p += NLA_ALIGN(a->nla_len)) {
		const struct nl_policy *pol;
		unsigned type;

		a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > end - p)
			break;
		type = a->nla_type & NLA_TYPE_MASK;
		pol = NL_POLICY(nl_rta_policy, type);
		if (pol->type == NL_A_UNKNOWN) {
			out->unknown_attrs++;
			out->unknown_type = (uint16_t)type;
			continue;
		}
		if (!nl_attr_valid(pol, a, st->alen)) {
			*err = (enum nl_err)pol->err;
			return -EINVAL;
		}
		nl_rta_store(out, type, a, st);
	}
	if (p != end) {
		*err = NL_ERR_TRUNC;
		return -EINVAL;
	}
	return 0;
}

/* Step 3: the key must be canonical: host bits beyond plen set is malformed. */
static int
nl_route_canonical(const struct fib_route *r, unsigned alen, enum nl_err *err)
{
	for (unsigned i = 0; i < alen; i++) {
		unsigned bits = i * 8 >= r->plen ? 0 : r->plen - i * 8;
		uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff00 >> bits);

		if (r->dst.b[i] & ~mask) {
			*err = NL_ERR_PLEN;
			return -EINVAL;
		}
	}
	return 0;
}

static unsigned nl_nhtab_res(const struct nl_nhtab *t, uint32_t id, const struct fib_nh *nh,
			     unsigned n, const uint8_t **map, int *incomplete);

/* RTA_NH_ID without paths beside it: expand the object from the table. */
static int
nl_route_nh_id(struct nl_route *out, const struct nl_nhtab *nht, enum nl_err *err)
{
	struct fib_route *r = &out->r;
	int blackhole = 0, n;

	if (!nht) {
		*err = NL_ERR_NH_ID;
		return -EINVAL;
	}
	n = nl_nhtab_resolve(nht, r->nh_id, out->nh, NL_NH_MAX, &blackhole);
	if (n == -E2BIG) {
		*err = NL_ERR_NH_MAX;
		return -EINVAL;
	}
	if (n < 0 || n > 255) {
		*err = n < 0 ? NL_ERR_NH_ID : NL_ERR_NH_MAX;
		return -EINVAL;
	}
	r->nh_count = (uint8_t)n;
	out->nh_resolved = 1;
	if (blackhole && r->type == RTN_UNICAST)
		r->type = FIB_BLACKHOLE;
	return 0;
}

/* Step 4: the paths: multipath, a single path, or a next-hop object. */
static int
nl_route_paths(struct nl_route *out, const struct rtmsg *rtm, const struct nl_nhtab *nht,
	       const struct nl_rta *st, enum nl_err *err)
{
	struct fib_nh *nh0 = &out->nh[0];

	if (st->mp)
		return nl_multipath(st->mp, out->r.family, out, err);
	if (out->r.nh_id && nht && nl_nhtab_res_count(nht) && !st->has_nh0) {
		/* paths from the table: a resilient group's come with its map */
		int incomplete, ret = nl_route_nh_id(out, nht, err);

		if (ret == 0 && out->r.nh_count)
			out->r.res_buckets = (uint16_t)nl_nhtab_res(nht, out->r.nh_id, out->nh,
								   out->r.nh_count, &out->r.res_map,
								   &incomplete);
		out->res_incomplete = ret == 0 && out->r.nh_count && incomplete;
		return ret;
	}
	if (st->has_nh0) {
		nh0->weight = 1;
		if (rtm->rtm_flags & RTNH_F_ONLINK)
			nh0->flags |= FIB_NH_ONLINK;
		out->r.nh_count = 1;
		return 0;
	}
	if (out->r.nh_id)
		return nl_route_nh_id(out, nht, err);
	return 0;
}

/* Step 5: a forwarding entry for the FIB, or NL_SKIP. */
static int
nl_route_kind(const struct rtmsg *rtm, const struct fib_route *r)
{
	if (rtm->rtm_flags & RTM_F_CLONED)
		return NL_SKIP;
	switch (r->type) {
	case RTN_UNICAST:
	case RTN_LOCAL:
	case RTN_BROADCAST:
	case RTN_BLACKHOLE:
	case RTN_UNREACHABLE:
	case RTN_PROHIBIT:
	case RTN_THROW:
		return NL_OK;
	default: /* anycast, multicast, nat, xresolve: not forwarding entries */
		return NL_SKIP;
	}
}

int
nl_route_parse(const struct nlmsghdr *nlh, const struct nl_nhtab *nht, struct nl_route *out,
	       enum nl_err *err)
{
	struct nl_rta st = { 0 };
	const struct rtmsg *rtm;

	if (nl_route_header(nlh, out, &st, err) < 0)
		return -EINVAL;
	rtm = mnl_nlmsg_get_payload(nlh);
	if (nl_route_attrs(nlh, out, &st, err) < 0 ||
	    nl_route_canonical(&out->r, st.alen, err) < 0 ||
	    nl_route_paths(out, rtm, nht, &st, err) < 0)
		return -EINVAL;
	if (st.mp && out->r.nh_id && nht && nl_nhtab_res_count(nht)) {
		/* nexthop_compat_mode: the group's paths expanded by the kernel */
		int incomplete;

		out->r.res_buckets = (uint16_t)nl_nhtab_res(nht, out->r.nh_id, out->nh,
							    out->r.nh_count, &out->r.res_map,
							    &incomplete);
		out->res_incomplete = (uint8_t)incomplete;
	}
	return nl_route_kind(rtm, &out->r);
}

/* Next-hop objects. */

#define NL_NHTAB_BUCKETS 1024

#define NL_BUCKET_UNKNOWN 0xff /* a resilient bucket the kernel has not told yet */

struct nl_nhobj {
	struct nl_nhobj *next;
	uint32_t id;
	uint8_t blackhole;
	uint8_t resilient; /* NEXTHOP_GRP_TYPE_RES */
	uint16_t ngrp; /* 0: single path in nh */
	uint16_t nbuckets; /* resilient: NHA_RES_GROUP_BUCKETS */
	uint16_t bknown;   /* resilient: buckets whose member is known */
	uint8_t *bmap;     /* resilient: per bucket, its member's index in grp[] */
	struct fib_nh nh;
	struct nl_nhgrp {
		uint32_t id;
		uint16_t weight;
	} *grp;
};

struct nl_nhtab {
	struct nl_nhobj *bucket[NL_NHTAB_BUCKETS];
	size_t count;
	size_t nres; /* resilient groups */
};

struct nl_nhtab *
nl_nhtab_new(void)
{
	return calloc(1, sizeof(struct nl_nhtab));
}

static void
nl_nhobj_free(struct nl_nhobj *o)
{
	free(o->bmap);
	free(o->grp);
	free(o);
}

void
nl_nhtab_clear(struct nl_nhtab *t)
{
	for (unsigned i = 0; i < NL_NHTAB_BUCKETS; i++) {
		struct nl_nhobj *o = t->bucket[i], *next;

		for (; o; o = next) {
			next = o->next;
			nl_nhobj_free(o);
		}
		t->bucket[i] = NULL;
	}
	t->count = 0;
	t->nres = 0;
}

void
nl_nhtab_free(struct nl_nhtab *t)
{
	if (!t)
		return;
	nl_nhtab_clear(t);
	free(t);
}

size_t
nl_nhtab_count(const struct nl_nhtab *t)
{
	return t->count;
}

size_t
nl_nhtab_res_count(const struct nl_nhtab *t)
{
	return t->nres;
}

static struct nl_nhobj **
nl_nhtab_slot(const struct nl_nhtab *t, uint32_t id)
{
	struct nl_nhobj *const *pp = &t->bucket[(id * 2654435761u) >> 22 & (NL_NHTAB_BUCKETS - 1)];

	while (*pp && (*pp)->id != id)
		pp = &(*pp)->next;
	return (struct nl_nhobj **)pp;
}

/* What a next-hop object message carries besides the object's path. */
struct nl_nha {
	uint32_t id;
	const struct nexthop_grp *grp;
	unsigned ngrp;
	int fdb;
	int has_type;       /* NHA_GROUP_TYPE given */
	uint16_t type;      /* NEXTHOP_GRP_TYPE_* */
	uint16_t nbuckets;  /* NHA_RES_GROUP_BUCKETS, 0 without */
};

/*
 * The attributes nested in a (well-formed, inside its message) attribute,
 * each checked against pol (npol entries; other types skipped), the walk
 * ending exactly at its end. cb gets each known one. -1 if malformed.
 */
static int
nl_nested_walk(const struct nlattr *nest, const struct nl_policy *pol, size_t npol,
	       void (*cb)(void *arg, unsigned type, const struct nlattr *a), void *arg)
{
	const char *p = mnl_attr_get_payload(nest);
	const char *end = (const char *)nest + nest->nla_len;

	while (end - p >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;
		unsigned type = a->nla_type & NLA_TYPE_MASK;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > end - p)
			return -1;
		if (type < npol && pol[type].type != NL_A_UNKNOWN) {
			if (!nl_attr_valid(&pol[type], a, 0))
				return -1;
			cb(arg, type, a);
		}
		p += NLA_ALIGN(a->nla_len);
	}
	/* the last attribute's padding may run past the nest */
	return p == end || p == (const char *)nest + NLA_ALIGN(nest->nla_len) ? 0 : -1;
}

static void
nl_res_group_attr(void *arg, unsigned type, const struct nlattr *a)
{
	struct nl_nha *x = arg;

	if (type == NHA_RES_GROUP_BUCKETS)
		x->nbuckets = nl_attr_u16(a);
}

/*
 * The attributes of a next-hop object message, each checked against
 * nl_nha_policy, into o and x; the walk must end exactly at the end of
 * the message, and the object must have an id.
 */
static int
nl_nhobj_attrs(const struct nlmsghdr *nlh, const struct nhmsg *nhm, struct nl_nhobj *o,
	       struct nl_nha *x)
{
	unsigned alen = nl_alen(nhm->nh_family);
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(*nhm)) {
		unsigned type = mnl_attr_get_type(a);

		if (!nl_attr_valid(NL_POLICY(nl_nha_policy, type), a, alen))
			return -1;
		switch (type) {
		case NHA_ID:
			x->id = mnl_attr_get_u32(a);
			break;
		case NHA_GROUP:
			x->grp = mnl_attr_get_payload(a);
			x->ngrp = mnl_attr_get_payload_len(a) / sizeof(*x->grp);
			break;
		case NHA_GROUP_TYPE:
			x->has_type = 1;
			x->type = mnl_attr_get_u16(a);
			break;
		case NHA_RES_GROUP:
			if (nl_nested_walk(a, nl_nha_res_group_policy,
					   sizeof(nl_nha_res_group_policy) /
						   sizeof(nl_nha_res_group_policy[0]),
					   nl_res_group_attr, x) < 0)
				return -1;
			break;
		case NHA_BLACKHOLE:
			o->blackhole = 1;
			break;
		case NHA_OIF:
			o->nh.ifindex = mnl_attr_get_u32(a);
			break;
		case NHA_GATEWAY:
			memcpy(o->nh.gw.b, mnl_attr_get_payload(a), alen);
			o->nh.gw_family = nhm->nh_family;
			break;
		case NHA_FDB:
			x->fdb = 1;
			break;
		default:
			break;
		}
	}
	if ((const char *)mnl_nlmsg_get_payload_tail(nlh) != (const char *)a || x->id == 0)
		return -1;
	/* a group type needs a group: hash-threshold, or resilient with its
	 * bucket count (the kernel's nh_check_attr_group) */
	if (x->has_type && (!x->ngrp || x->type > NEXTHOP_GRP_TYPE_RES))
		return -1;
	if (x->has_type && x->type == NEXTHOP_GRP_TYPE_RES && !x->nbuckets)
		return -1;
	return 0;
}

/* A group's members and weights into o. */
static int
nl_nhobj_group(struct nl_nhobj *o, const struct nexthop_grp *grp, unsigned ngrp)
{
	o->grp = calloc(ngrp, sizeof(*o->grp));
	if (!o->grp)
		return -ENOMEM;
	for (unsigned i = 0; i < ngrp; i++) {
		o->grp[i].id = grp[i].id;
		/* The byte after weight is weight_high on kernels with 16-bit
		 * weights; older headers call it resvd1, newer weight_high, so
		 * it is read by offset to build against both. */
		const uint8_t *b = (const uint8_t *)&grp[i];
		unsigned hi = b[offsetof(struct nexthop_grp, weight) + 1];
		unsigned w = (hi << 8 | grp[i].weight) + 1;

		o->grp[i].weight = (uint16_t)(w > 65535 ? 65535 : w);
	}
	o->ngrp = (uint16_t)ngrp;
	return 0;
}

/* Delete object id; 1 if it was there. */
static int
nl_nhtab_del(struct nl_nhtab *t, uint32_t id)
{
	struct nl_nhobj **pp = nl_nhtab_slot(t, id), *o = *pp;

	if (!o)
		return 0;
	*pp = o->next;
	t->nres -= o->resilient;
	nl_nhobj_free(o);
	t->count--;
	return 1;
}

/* Insert o, replacing the object of its id; 1 if it replaced one. */
static int
nl_nhtab_put(struct nl_nhtab *t, struct nl_nhobj *o)
{
	struct nl_nhobj **pp = nl_nhtab_slot(t, o->id);
	int replaced = *pp != NULL;

	t->nres += o->resilient;
	if (replaced) {
		o->next = (*pp)->next;
		t->nres -= (*pp)->resilient;
		nl_nhobj_free(*pp);
	} else {
		o->next = NULL;
		t->count++;
	}
	*pp = o;
	return replaced;
}

int
nl_nhtab_msg(struct nl_nhtab *t, const struct nlmsghdr *nlh, int *changed, enum nl_err *err)
{
	const struct nhmsg *nhm;
	struct nl_nha x = { 0 };
	struct nl_nhobj *o;

	*changed = 0;
	if (nlh->nlmsg_type != RTM_NEWNEXTHOP && nlh->nlmsg_type != RTM_DELNEXTHOP)
		return NL_SKIP;
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*nhm)) {
		*err = NL_ERR_NHMSG;
		return -EINVAL;
	}
	nhm = mnl_nlmsg_get_payload(nlh);
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->nh.weight = 1;
	o->nh.flags = (nhm->nh_flags & RTNH_F_ONLINK) ? FIB_NH_ONLINK : 0;
	if (nl_nhobj_attrs(nlh, nhm, o, &x) < 0) {
		nl_nhobj_free(o);
		*err = NL_ERR_NHMSG;
		return -EINVAL;
	}
	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		nl_nhobj_free(o);
		*changed = nl_nhtab_del(t, x.id);
		return 0;
	}
	if (x.fdb) { /* bridge FDB next hops never carry routes */
		nl_nhobj_free(o);
		return NL_SKIP;
	}
	o->id = x.id;
	if (x.ngrp && nl_nhobj_group(o, x.grp, x.ngrp) < 0) {
		nl_nhobj_free(o);
		return -ENOMEM;
	}
	if (x.has_type && x.type == NEXTHOP_GRP_TYPE_RES) {
		if (x.ngrp >= NL_BUCKET_UNKNOWN) { /* a member index must fit a map byte */
			nl_nhobj_free(o);
			*err = NL_ERR_NH_MAX;
			return -EINVAL;
		}
		o->bmap = malloc(x.nbuckets);
		if (!o->bmap) {
			nl_nhobj_free(o);
			return -ENOMEM;
		}
		memset(o->bmap, NL_BUCKET_UNKNOWN, x.nbuckets);
		o->resilient = 1;
		o->nbuckets = x.nbuckets;
	}
	*changed = nl_nhtab_put(t, o);
	return 0;
}

/* What a bucket message carries. */
struct nl_nhb {
	uint16_t index;
	uint32_t nh_id;
	unsigned seen; /* 1: index, 2: nh_id */
};

static void
nl_res_bucket_attr(void *arg, unsigned type, const struct nlattr *a)
{
	struct nl_nhb *b = arg;

	if (type == NHA_RES_BUCKET_INDEX) {
		b->index = nl_attr_u16(a);
		b->seen |= 1;
	} else if (type == NHA_RES_BUCKET_NH_ID) {
		b->nh_id = nl_attr_u32(a);
		b->seen |= 2;
	}
}

/* The attributes of a bucket message: the group's id and one whole bucket. */
static int
nl_nhb_attrs(const struct nlmsghdr *nlh, uint32_t *id, struct nl_nhb *b)
{
	const struct nlattr *a;
	int buckets = 0;

	mnl_attr_for_each(a, nlh, sizeof(struct nhmsg)) {
		unsigned type = mnl_attr_get_type(a);
		const struct nl_policy *pol = NL_POLICY(nl_nhb_policy, type);

		if (!nl_attr_valid(pol, a, 0))
			return -1;
		if (type == NHA_ID) {
			*id = mnl_attr_get_u32(a);
		} else if (type == NHA_RES_BUCKET) {
			if (buckets++ ||
			    nl_nested_walk(a, nl_nha_res_bucket_policy,
					   sizeof(nl_nha_res_bucket_policy) /
						   sizeof(nl_nha_res_bucket_policy[0]),
					   nl_res_bucket_attr, b) < 0)
				return -1;
		}
	}
	if ((const char *)mnl_nlmsg_get_payload_tail(nlh) != (const char *)a || *id == 0 ||
	    b->seen != 3)
		return -1;
	return 0;
}

int
nl_nhtab_bucket_msg(struct nl_nhtab *t, const struct nlmsghdr *nlh, int *changed,
		    enum nl_err *err)
{
	struct nl_nhb b = { 0 };
	struct nl_nhobj *o;
	uint32_t id = 0;
	unsigned m;

	*changed = 0;
	if (nlh->nlmsg_type != RTM_NEWNEXTHOPBUCKET)
		return NL_SKIP;
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(struct nhmsg) || nl_nhb_attrs(nlh, &id, &b) < 0)
		goto bad;
	o = *nl_nhtab_slot(t, id);
	if (!o || !o->resilient || b.index >= o->nbuckets)
		goto bad;
	for (m = 0; m < o->ngrp && o->grp[m].id != b.nh_id; m++)
		;
	if (m == o->ngrp)
		goto bad;
	if (o->bmap[b.index] != m) {
		if (o->bmap[b.index] == NL_BUCKET_UNKNOWN)
			o->bknown++;
		o->bmap[b.index] = (uint8_t)m;
		*changed = 1;
	}
	return 0;
bad:
	*err = NL_ERR_NHBUCKET;
	return -EINVAL;
}

/*
 * The bucket map of group id for a route of n paths: the group's when it
 * is resilient, every bucket is known and the paths are its members in
 * order (expanded from the table, or as the kernel sent them under
 * nexthop_compat_mode, which expands a group in the same order).
 * Returns the number of buckets, 0 without a map (*incomplete set for a
 * resilient group whose buckets are not all known yet).
 */
static unsigned
nl_nhtab_res(const struct nl_nhtab *t, uint32_t id, const struct fib_nh *nh, unsigned n,
	     const uint8_t **map, int *incomplete)
{
	const struct nl_nhobj *o = *nl_nhtab_slot(t, id);

	*incomplete = 0;
	if (!o || !o->resilient)
		return 0;
	if (o->bknown != o->nbuckets) {
		*incomplete = 1;
		return 0;
	}
	if (o->ngrp != n)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		const struct nl_nhobj *mb = *nl_nhtab_slot(t, o->grp[i].id);

		if (!mb || mb->ngrp || mb->blackhole || mb->nh.ifindex != nh[i].ifindex)
			return 0;
	}
	*map = o->bmap;
	return o->nbuckets;
}

int
nl_nhtab_resolve(const struct nl_nhtab *t, uint32_t id, struct fib_nh *nh, unsigned max,
		 int *blackhole)
{
	const struct nl_nhobj *o = *nl_nhtab_slot(t, id);
	unsigned n = 0;

	*blackhole = 0;
	if (!o)
		return -ENOENT;
	if (o->blackhole) {
		*blackhole = 1;
		return 0;
	}
	if (!o->ngrp) {
		if (max < 1)
			return -E2BIG;
		nh[0] = o->nh;
		return 1;
	}
	for (unsigned i = 0; i < o->ngrp; i++) {
		const struct nl_nhobj *m = *nl_nhtab_slot(t, o->grp[i].id);

		if (!m || m->ngrp) /* groups hold single paths only */
			return -ENOENT;
		if (m->blackhole)
			continue;
		if (n == max)
			return -E2BIG;
		nh[n] = m->nh;
		nh[n].weight = o->grp[i].weight;
		n++;
	}
	if (n == 0)
		*blackhole = 1;
	return (int)n;
}
