/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: nl implementation
 *
 * Attributes are walked once with mnl_attr_for_each and checked by hand:
 * a fixed-size attribute must have exactly its size, an address the size
 * of the route's family (RTA_VIA carries its own family), and the walk
 * must end exactly at the end of the message. Attributes the kernel sends
 * but the FIB does not need (metrics, cacheinfo, pref, expires, ...) are
 * skipped silently; attribute types this file does not know are counted
 * in nl_route.unknown_attrs and skipped, as a newer kernel may add some.
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

/* Attributes known and deliberately ignored. */
static int
nl_rta_ignored(unsigned type)
{
	switch (type) {
	case RTA_UNSPEC:
	case RTA_SRC:
	case RTA_IIF:
	case RTA_METRICS:
	case RTA_PROTOINFO:
	case RTA_FLOW:
	case RTA_CACHEINFO:
	case RTA_SESSION:
	case RTA_MP_ALGO:
	case RTA_MARK:
	case RTA_MFC_STATS:
	case RTA_NEWDST:
	case RTA_PREF:
	case RTA_ENCAP:
	case RTA_EXPIRES:
	case RTA_PAD:
	case RTA_UID:
	case RTA_TTL_PROPAGATE:
	case RTA_IP_PROTO:
	case RTA_SPORT:
	case RTA_DPORT:
		return 1;
	}
	return 0;
}

static int
nl_via(const struct nlattr *a, struct fib_nh *nh)
{
	const struct rtvia *v = mnl_attr_get_payload(a);
	unsigned len = mnl_attr_get_payload_len(a);
	unsigned alen;

	if (len < sizeof(*v))
		return -1;
	alen = nl_alen(v->rtvia_family);
	if (!alen || len != sizeof(*v) + alen)
		return -1;
	memcpy(nh->gw.b, v->rtvia_addr, alen);
	nh->gw_family = (uint8_t)v->rtvia_family;
	return 0;
}

static int
nl_multipath(const struct nlattr *mp, int family, struct nl_route *out, enum nl_err *err)
{
	const char *p = mnl_attr_get_payload(mp);
	int left = (int)mnl_attr_get_payload_len(mp);
	unsigned alen = nl_alen(family);
	unsigned n = 0;

	while (left > 0) {
		const struct rtnexthop *rtnh = (const struct rtnexthop *)p;
		const struct nlattr *a;
		struct fib_nh *nh;
		int alen_left;

		if (left < (int)sizeof(*rtnh) || rtnh->rtnh_len < sizeof(*rtnh) ||
		    rtnh->rtnh_len > left)
			goto bad;
		if (n == NL_NH_MAX) {
			*err = NL_ERR_NH_MAX;
			return -EINVAL;
		}
		nh = &out->nh[n++];
		memset(nh, 0, sizeof(*nh));
		nh->weight = (uint16_t)(rtnh->rtnh_hops + 1);
		nh->ifindex = (uint32_t)rtnh->rtnh_ifindex;
		nh->flags = (rtnh->rtnh_flags & RTNH_F_ONLINK) ? FIB_NH_ONLINK : 0;
		a = (const struct nlattr *)(p + RTNH_ALIGN(sizeof(*rtnh)));
		alen_left = (int)rtnh->rtnh_len - (int)RTNH_ALIGN(sizeof(*rtnh));
		while (alen_left >= (int)sizeof(struct nlattr)) {
			if (a->nla_len < sizeof(struct nlattr) || a->nla_len > alen_left)
				goto bad;
			switch (mnl_attr_get_type(a)) {
			case RTA_GATEWAY:
				if (mnl_attr_get_payload_len(a) != alen)
					goto bad;
				memcpy(nh->gw.b, mnl_attr_get_payload(a), alen);
				nh->gw_family = (uint8_t)family;
				break;
			case RTA_VIA:
				if (nl_via(a, nh) < 0) {
					*err = NL_ERR_VIA;
					return -EINVAL;
				}
				break;
			case RTA_ENCAP_TYPE:
			case RTA_ENCAP:
			case RTA_FLOW:
			case RTA_NEWDST:
				break;
			default:
				out->unknown_attrs++;
				out->unknown_type = (uint16_t)mnl_attr_get_type(a);
				break;
			}
			alen_left -= (int)MNL_ALIGN(a->nla_len);
			a = (const struct nlattr *)((const char *)a + MNL_ALIGN(a->nla_len));
		}
		if (alen_left > 0)
			goto bad;
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

int
nl_route_parse(const struct nlmsghdr *nlh, const struct nl_nhtab *nht, struct nl_route *out,
	       enum nl_err *err)
{
	const struct rtmsg *rtm;
	const struct nlattr *a = NULL, *mp = NULL;
	const char *p, *end;
	struct fib_route *r = &out->r;
	struct fib_nh *nh0 = &out->nh[0];
	unsigned alen, has_nh0 = 0;
	int blackhole = 0;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*rtm)) {
		*err = NL_ERR_TRUNC;
		return -EINVAL;
	}
	rtm = mnl_nlmsg_get_payload(nlh);
	memset(r, 0, sizeof(*r));
	memset(nh0, 0, sizeof(*nh0));
	out->msg_type = nlh->nlmsg_type;
	out->msg_flags = nlh->nlmsg_flags;
	out->unknown_attrs = 0;
	out->nh_resolved = 0;

	alen = nl_alen(rtm->rtm_family);
	if (!alen) {
		*err = NL_ERR_FAMILY;
		return -EINVAL;
	}
	if (rtm->rtm_dst_len > alen * 8) {
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

	/* The hot loop of a full-table dump: libmnl's accessors inlined. */
	p = (const char *)nlh + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*rtm));
	end = (const char *)nlh + NLMSG_ALIGN(nlh->nlmsg_len);
	for (; end - p >= NLA_HDRLEN; p += NLA_ALIGN(a->nla_len)) {
		unsigned type, plen;

		a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > end - p)
			break;
		type = a->nla_type & NLA_TYPE_MASK;
		plen = a->nla_len - NLA_HDRLEN;

		switch (type) {
		case RTA_DST:
			if (plen != alen)
				goto bad_attr;
			memcpy(r->dst.b, NLA_DATA(a), alen);
			break;
		case RTA_TABLE:
			if (plen != 4)
				goto bad_attr;
			r->table = nl_attr_u32(a);
			break;
		case RTA_PRIORITY:
			if (plen != 4)
				goto bad_attr;
			r->priority = nl_attr_u32(a);
			break;
		case RTA_GATEWAY:
			if (plen != alen)
				goto bad_attr;
			memcpy(nh0->gw.b, NLA_DATA(a), alen);
			nh0->gw_family = r->family;
			has_nh0 = 1;
			break;
		case RTA_VIA:
			if (nl_via(a, nh0) < 0) {
				*err = NL_ERR_VIA;
				return -EINVAL;
			}
			has_nh0 = 1;
			break;
		case RTA_OIF:
			if (plen != 4)
				goto bad_attr;
			nh0->ifindex = nl_attr_u32(a);
			has_nh0 = 1;
			break;
		case RTA_PREFSRC:
			if (plen != alen)
				goto bad_attr;
			memcpy(r->prefsrc.b, NLA_DATA(a), alen);
			r->prefsrc_set = 1;
			break;
		case RTA_MULTIPATH:
			mp = a;
			break;
		case RTA_NH_ID:
			if (plen != 4)
				goto bad_attr;
			r->nh_id = nl_attr_u32(a);
			break;
		case RTA_ENCAP_TYPE:
			if (plen != 2)
				goto bad_attr;
			r->encap_type = nl_attr_u16(a);
			break;
		default:
			if (!nl_rta_ignored(type)) {
				out->unknown_attrs++;
				out->unknown_type = (uint16_t)type;
			}
			break;
		}
	}
	if (p != end) {
		*err = NL_ERR_TRUNC;
		return -EINVAL;
	}
	/* The key must be canonical: host bits beyond plen set is malformed. */
	for (unsigned i = 0; i < alen; i++) {
		unsigned bits = i * 8 >= r->plen ? 0 : r->plen - i * 8;
		uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff00 >> bits);
		if (r->dst.b[i] & ~mask) {
			*err = NL_ERR_PLEN;
			return -EINVAL;
		}
	}

	if (mp) {
		if (nl_multipath(mp, r->family, out, err) < 0)
			return -EINVAL;
	} else if (has_nh0) {
		nh0->weight = 1;
		if (rtm->rtm_flags & RTNH_F_ONLINK)
			nh0->flags |= FIB_NH_ONLINK;
		r->nh_count = 1;
	} else if (r->nh_id) {
		int n;

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
	}

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
		break;
	default: /* anycast, multicast, nat, xresolve: not forwarding entries */
		return NL_SKIP;
	}
	return NL_OK;
bad_attr:
	*err = NL_ERR_ATTR;
	return -EINVAL;
}

/* Next-hop objects. */

#define NL_NHTAB_BUCKETS 1024

struct nl_nhobj {
	struct nl_nhobj *next;
	uint32_t id;
	uint8_t blackhole;
	uint16_t ngrp; /* 0: single path in nh */
	struct fib_nh nh;
	struct nl_nhgrp {
		uint32_t id;
		uint16_t weight;
	} *grp;
};

struct nl_nhtab {
	struct nl_nhobj *bucket[NL_NHTAB_BUCKETS];
	size_t count;
};

struct nl_nhtab *
nl_nhtab_new(void)
{
	return calloc(1, sizeof(struct nl_nhtab));
}

static void
nl_nhobj_free(struct nl_nhobj *o)
{
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

static struct nl_nhobj **
nl_nhtab_slot(const struct nl_nhtab *t, uint32_t id)
{
	struct nl_nhobj *const *pp = &t->bucket[(id * 2654435761u) >> 22 & (NL_NHTAB_BUCKETS - 1)];

	while (*pp && (*pp)->id != id)
		pp = &(*pp)->next;
	return (struct nl_nhobj **)pp;
}

int
nl_nhtab_msg(struct nl_nhtab *t, const struct nlmsghdr *nlh, int *changed, enum nl_err *err)
{
	const struct nhmsg *nhm;
	const struct nlattr *a;
	struct nl_nhobj *o, **pp;
	uint32_t id = 0;
	const struct nexthop_grp *grp = NULL;
	unsigned ngrp = 0, alen;
	int fdb = 0;

	*changed = 0;
	if (nlh->nlmsg_type != RTM_NEWNEXTHOP && nlh->nlmsg_type != RTM_DELNEXTHOP)
		return NL_SKIP;
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*nhm))
		goto bad;
	nhm = mnl_nlmsg_get_payload(nlh);
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	alen = nl_alen(nhm->nh_family);
	o->nh.weight = 1;
	o->nh.flags = (nhm->nh_flags & RTNH_F_ONLINK) ? FIB_NH_ONLINK : 0;
	mnl_attr_for_each(a, nlh, sizeof(*nhm)) {
		unsigned plen = mnl_attr_get_payload_len(a);

		switch (mnl_attr_get_type(a)) {
		case NHA_ID:
			if (plen != 4)
				goto bad_free;
			id = mnl_attr_get_u32(a);
			break;
		case NHA_GROUP:
			if (plen == 0 || plen % sizeof(*grp))
				goto bad_free;
			grp = mnl_attr_get_payload(a);
			ngrp = plen / sizeof(*grp);
			break;
		case NHA_BLACKHOLE:
			o->blackhole = 1;
			break;
		case NHA_OIF:
			if (plen != 4)
				goto bad_free;
			o->nh.ifindex = mnl_attr_get_u32(a);
			break;
		case NHA_GATEWAY:
			if (!alen || plen != alen)
				goto bad_free;
			memcpy(o->nh.gw.b, mnl_attr_get_payload(a), alen);
			o->nh.gw_family = nhm->nh_family;
			break;
		case NHA_FDB:
			fdb = 1;
			break;
		default:
			break;
		}
	}
	if ((const char *)mnl_nlmsg_get_payload_tail(nlh) != (const char *)a || id == 0)
		goto bad_free;
	pp = nl_nhtab_slot(t, id);
	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		nl_nhobj_free(o);
		if (*pp) {
			o = *pp;
			*pp = o->next;
			nl_nhobj_free(o);
			t->count--;
			*changed = 1;
		}
		return 0;
	}
	if (fdb) { /* bridge FDB next hops never carry routes */
		nl_nhobj_free(o);
		return NL_SKIP;
	}
	o->id = id;
	if (ngrp) {
		o->grp = calloc(ngrp, sizeof(*o->grp));
		if (!o->grp) {
			nl_nhobj_free(o);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < ngrp; i++) {
			o->grp[i].id = grp[i].id;
			/* resvd1 is weight_high on kernels with 16-bit weights */
			unsigned w = ((unsigned)grp[i].resvd1 << 8 | grp[i].weight) + 1;

			o->grp[i].weight = (uint16_t)(w > 65535 ? 65535 : w);
		}
		o->ngrp = (uint16_t)ngrp;
	}
	if (*pp) {
		o->next = (*pp)->next;
		nl_nhobj_free(*pp);
		*changed = 1;
	} else {
		o->next = NULL;
		t->count++;
	}
	*pp = o;
	return 0;
bad_free:
	nl_nhobj_free(o);
bad:
	*err = NL_ERR_NHMSG;
	return -EINVAL;
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
