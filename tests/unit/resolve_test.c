/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fib_resolve_rcu against a naive model of the kernel's rule walk
 *
 * The model below is written plainly from the kernel's functions, not
 * from fib/resolve.c: rules in a list walked as net/core/fib_rules.c
 * fib_rules_lookup (fib_rule_match, then fib4_rule_match or
 * fib6_rule_match, `not`; goto, nop, the error actions; suppress), every
 * table searched by scanning all routes for the longest covering prefix
 * in the kernel's alias order (fib_table_lookup: route type errors,
 * throw, dead paths, oif), the multipath choice from fib_rebalance's
 * bounds (fib_select_multipath), and the source (fib_result_prefsrc,
 * inet_select_addr). Random rule sets with every selector and action,
 * random routes in several tables, random flows, compared field by field.
 *
 * Then the fixed cases: the fast path against the rule walk, multipath
 * weights over 100,000 flows, dead paths, one flow one path, source
 * selection (IPv4 and IPv6), publish and retire, allocation failure.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fib/fib.h"
#include "fib/mphash.h"
#include "fib/policy.h"
#include "tests/unit/ck_run.h"
#include "tests/util/rng.h"

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000
#endif

typedef unsigned __int128 u128;

/* Check's ck_assert writes its location down a pipe at every call: in
 * the loops of hundreds of thousands of checks, only a failure talks. */
#define REQUIRE(cond, ...)                                                                     \
	do {                                                                                   \
		if (!(cond))                                                                   \
			ck_abort_msg(__VA_ARGS__);                                             \
	} while (0)
#define REQUIRE_EQ(x, y) REQUIRE((x) == (y), "%s == %s: %lld != %lld", #x, #y, (long long)(x), (long long)(y))

/* ------------------------------------------------------------ the model */

#define M_ROUTES 256
#define M_RULES 32
#define M_LINKS 8
#define M_ADDRS 16

struct m_route {
	struct fib_route r;
	struct fib_nh nh[4];
};

struct model {
	int family;
	struct m_route rt[M_ROUTES];
	int nrt;
	struct fib_rule rules[M_RULES]; /* in walk order */
	int nrules;
	struct fib_link links[M_LINKS];
	int nlinks;
	struct fib_ifaddr addrs[M_ADDRS];
	int naddrs;
	struct fib_mp_hash hash;
};

struct m_answer {
	int error;
	int type, plen, table, rule, path, has_rule, has_route, has_src;
	union fib_addr prefix, src;
};

static u128
m_key(const union fib_addr *a, int family)
{
	u128 k = 0;

	if (family == AF_INET)
		return ntohl(a->v4.s_addr);
	for (int i = 0; i < 16; i++)
		k = k << 8 | a->b[i];
	return k;
}

static bool
m_in_prefix(const union fib_addr *a, const union fib_addr *p, int plen, int family)
{
	int bits = family == AF_INET ? 32 : 128;

	if (plen == 0)
		return true;
	return (m_key(a, family) >> (bits - plen)) == (m_key(p, family) >> (bits - plen));
}

static const struct fib_link *
m_link(const struct model *m, uint32_t ifindex)
{
	for (int i = 0; i < m->nlinks; i++)
		if (m->links[i].ifindex == ifindex)
			return &m->links[i];
	return NULL;
}

static uint32_t
m_ifindex(const struct model *m, const char *name)
{
	for (int i = 0; i < m->nlinks; i++)
		if (strcmp(m->links[i].name, name) == 0)
			return m->links[i].ifindex;
	return strcmp(name, "lo") == 0 ? 1 : 0xffffffffu;
}

/* l3mdev_master_ifindex and the VRF's table */
static uint32_t
m_vrf(const struct model *m, uint32_t ifindex, uint32_t *table)
{
	const struct fib_link *l = m_link(m, ifindex);

	if (l && l->vrf_table) {
		*table = l->vrf_table;
		return ifindex;
	}
	if (l && l->master) {
		const struct fib_link *ml = m_link(m, l->master);
		if (ml && ml->vrf_table) {
			*table = ml->vrf_table;
			return ml->ifindex;
		}
	}
	return 0;
}

struct m_flow {
	const struct fib_flow *fl;
	uint32_t iif, oif, l3mdev, l3table, uid;
	int ds;
	bool input, skip_oif;
	uint32_t nh_oif; /* paths must go through it (IPv6: iif when strict) */
};

static bool
m_path_alive(const struct model *m, const struct fib_nh *nh)
{
	const struct fib_link *l = m_link(m, nh->ifindex);
	int ign = m->family == AF_INET ? m->hash.ignore_linkdown4 : m->hash.ignore_linkdown6;

	if (!l)
		return true;
	if (!(l->flags & IFF_UP))
		return false;
	return !(ign && !(l->flags & IFF_LOWER_UP));
}

static int
m_route_error(int type)
{
	if (type == FIB_BLACKHOLE)
		return -EINVAL;
	if (type == FIB_UNREACHABLE)
		return -EHOSTUNREACH;
	if (type == FIB_PROHIBIT)
		return -EACCES;
	if (type == FIB_THROW)
		return -EAGAIN;
	return 0;
}

/* before(a, b): a comes first among routes of one prefix (kernel order) */
static bool
m_before(const struct fib_route *a, const struct fib_route *b)
{
	if (a->tos != b->tos)
		return a->tos > b->tos;
	return a->priority < b->priority;
}

/* fib_table_lookup by scanning every route */
static int
m_table(const struct model *m, const struct m_flow *f, uint32_t table, const struct m_route **out,
	int *nh_out)
{
	int bits = m->family == AF_INET ? 32 : 128;
	int rtos = m->family == AF_INET ? (f->ds & 0x1c) : 0;

	for (int plen = bits; plen >= 0; plen--) {
		bool used[M_ROUTES] = { false };

		for (;;) {
			const struct m_route *best = NULL;
			int bi = -1;

			for (int i = 0; i < m->nrt; i++) {
				const struct fib_route *r = &m->rt[i].r;
				if (used[i] || r->table != table || r->plen != plen)
					continue;
				if (!m_in_prefix(&f->fl->dst, &r->dst, plen, m->family))
					continue;
				if (r->tos && r->tos != rtos)
					continue;
				if (!best || m_before(r, &best->r)) {
					best = &m->rt[i];
					bi = i;
				}
			}
			if (!best)
				break;
			used[bi] = true;
			*out = best;
			*nh_out = 0;
			/* IPv6 error routes are through lo: a strict oif skips them */
			if (m_route_error(best->r.type) && m->family == AF_INET6 && f->nh_oif &&
			    !f->skip_oif && f->nh_oif != 1)
				continue;
			if (m_route_error(best->r.type))
				return m_route_error(best->r.type);
			if (best->r.nh_count == 0)
				return 0;
			for (int k = 0; k < best->r.nh_count; k++) {
				const struct fib_nh *nh = &best->nh[k];
				if (!m_path_alive(m, nh) && !(m->family == AF_INET && best->r.scope == 254))
					continue;
				if (f->nh_oif && !f->skip_oif && nh->ifindex != f->nh_oif)
					continue;
				*nh_out = k;
				return 0;
			}
		}
	}
	return -EAGAIN;
}

static bool
m_rule_matches(const struct model *m, const struct m_flow *f, const struct fib_rule *r)
{
	const struct fib_flow *fl = f->fl;
	bool ok = true;

	if (r->iifname[0] && m_ifindex(m, r->iifname) != f->iif)
		ok = false;
	else if (r->oifname[0] && m_ifindex(m, r->oifname) != f->oif)
		ok = false;
	else if ((r->mark ^ fl->mark) & r->mark_mask)
		ok = false;
	else if (r->l3mdev && !f->l3mdev)
		ok = false;
	else if (r->uid_lo <= r->uid_hi && (f->uid < r->uid_lo || f->uid > r->uid_hi))
		ok = false;
	else if (r->src_len && m->family == AF_INET6 && !(fl->flags & FIB_FLOW_SRC))
		ok = false;
	else if (r->src_len && !m_in_prefix(&fl->src, &r->src, r->src_len, m->family))
		ok = false;
	else if (r->dst_len && !m_in_prefix(&fl->dst, &r->dst, r->dst_len, m->family))
		ok = false;
	else if ((r->flags & FIB_RULE_DSCP) && r->tos != (f->ds >> 2))
		ok = false;
	else if (!(r->flags & FIB_RULE_DSCP) && m->family == AF_INET && (r->tos & 0xfc) &&
		 (r->tos & 0xfc) != (f->ds & 0x1c))
		ok = false;
	else if (!(r->flags & FIB_RULE_DSCP) && m->family == AF_INET6 && r->tos &&
		 r->tos != (f->ds & 0xfc))
		ok = false;
	else if (r->ipproto && r->ipproto != fl->ipproto)
		ok = false;
	else if ((r->sport_lo || r->sport_hi) &&
		 (fl->sport < r->sport_lo || fl->sport > (r->sport_hi ? r->sport_hi : r->sport_lo)))
		ok = false;
	else if ((r->dport_lo || r->dport_hi) &&
		 (fl->dport < r->dport_lo || fl->dport > (r->dport_hi ? r->dport_hi : r->dport_lo)))
		ok = false;
	if (r->flags & FIB_RULE_INVERT)
		ok = !ok;
	return ok;
}

/* inet_select_addr */
static uint32_t
m_dev_addr4(const struct model *m, uint32_t ifindex, uint32_t dst, int scope)
{
	uint32_t first = 0;

	/* primaries by scope (host first), in the order added */
	for (int sc = 255; sc >= 0; sc--) {
		for (int i = 0; i < m->naddrs; i++) {
			const struct fib_ifaddr *a = &m->addrs[i];
			uint32_t local = ntohl(a->addr.v4.s_addr);
			uint32_t mask = a->plen ? 0xffffffffu << (32 - a->plen) : 0;
			int as = a->scope < 254 ? a->scope : 254;

			if (a->family != AF_INET || a->ifindex != ifindex || a->scope != sc)
				continue;
			if (a->flags & 0x01)
				continue;
			if (as > scope)
				continue;
			if (!dst || ((local ^ dst) & mask) == 0)
				return local;
			if (!first)
				first = local;
		}
	}
	return first;
}

static uint32_t
m_select_addr4(const struct model *m, uint32_t ifindex, uint32_t gw, int scope)
{
	uint32_t a = m_dev_addr4(m, ifindex, gw, scope), t = 0, master;

	if (a)
		return a;
	master = m_vrf(m, ifindex, &t);
	if (master && master != ifindex && (a = m_dev_addr4(m, master, 0, scope)))
		return a;
	for (uint32_t dev = 1; dev < 64; dev++) {
		uint32_t t2 = 0;
		if (m_vrf(m, dev, &t2) != master)
			continue;
		if ((a = m_dev_addr4(m, dev, 0, scope)))
			return a;
	}
	return 0;
}

static uint32_t
m_path_src4(const struct model *m, const struct m_route *rt, int k)
{
	if (rt->r.prefsrc_set)
		return ntohl(rt->r.prefsrc.v4.s_addr);
	return m_select_addr4(m, rt->nh[k].ifindex,
			      rt->nh[k].gw_family == AF_INET ? ntohl(rt->nh[k].gw.v4.s_addr) : 0,
			      rt->r.scope);
}

/* fib_select_multipath (Linux 6.18): score 1 for the hash within the bound,
 * 2 for the path's own source (inet_select_addr, no prefsrc) being the
 * flow's (IPv4 output flows with from, legacy routes only); the first of
 * the highest score */
static int
m_multipath(const struct model *m, const struct m_flow *f, const struct m_route *rt, int cur)
{
	const struct fib_flow *fl = f->fl;
	union fib_addr zero;
	long long total = 0, w = 0;
	uint32_t h;
	int sel = cur, best = -1;
	bool want_src = m->family == AF_INET && !f->input && (fl->flags & FIB_FLOW_SRC) &&
			!rt->r.nh_id;

	for (int k = 0; k < rt->r.nh_count; k++)
		if (m_path_alive(m, &rt->nh[k]))
			total += rt->nh[k].weight ? rt->nh[k].weight : 1;
	if (!total)
		return cur;
	memset(&zero, 0, sizeof(zero));
	h = fib_mphash(&m->hash, fl, (fl->flags & FIB_FLOW_SRC) ? &fl->src : &zero);
	for (int k = 0; k < rt->r.nh_count; k++) {
		long long bound;
		int score = 0;

		if (!m_path_alive(m, &rt->nh[k]))
			continue;
		w += rt->nh[k].weight ? rt->nh[k].weight : 1;
		bound = ((w << 31) + total / 2) / total - 1;
		if ((long long)h <= bound)
			score++;
		if (!want_src ||
		    m_select_addr4(m, rt->nh[k].ifindex,
				   rt->nh[k].gw_family == AF_INET ? ntohl(rt->nh[k].gw.v4.s_addr) : 0,
				   rt->r.scope) == ntohl(fl->src.v4.s_addr))
			score += 2;
		if (score > best) {
			best = score;
			sel = k;
		}
	}
	return sel;
}

/* IPv6: rt6_select's match (first live path through oif for an output
 * flow, else the first live one); then the first path, from the first,
 * whose bound holds the hash, unless a strict lookup rejects its device,
 * which keeps the match (fib6_select_path, Linux 6.15 and later) */
static int
m_multipath6(const struct model *m, const struct m_flow *f, const struct m_route *rt, int cur)
{
	const struct fib_flow *fl = f->fl;
	uint32_t dev = f->input ? 0 : f->oif, h;
	long long total = 0, w = 0, bound[256];
	union fib_addr zero;
	int sel = -1;

	for (int k = 0; k < rt->r.nh_count; k++)
		if (m_path_alive(m, &rt->nh[k]))
			total += rt->nh[k].weight ? rt->nh[k].weight : 1;
	if (!total)
		return cur;
	for (int k = 0; k < rt->r.nh_count; k++) {
		bool ok;

		bound[k] = -1;
		if (!m_path_alive(m, &rt->nh[k]))
			continue;
		w += rt->nh[k].weight ? rt->nh[k].weight : 1;
		bound[k] = ((w << 31) + total / 2) / total - 1;
		ok = !f->nh_oif || f->skip_oif || rt->nh[k].ifindex == f->nh_oif;
		if (!ok)
			continue;
		if (sel < 0 || (dev && rt->nh[k].ifindex == dev && rt->nh[sel].ifindex != dev))
			sel = k;
	}
	if (sel < 0)
		return cur;
	memset(&zero, 0, sizeof(zero));
	h = fib_mphash(&m->hash, fl, (fl->flags & FIB_FLOW_SRC) ? &fl->src : &zero);
	for (int k = 0; k < rt->r.nh_count; k++) {
		if (bound[k] < 0 || (long long)h > bound[k])
			continue;
		if (f->nh_oif && !f->skip_oif && rt->nh[k].ifindex != f->nh_oif)
			break;
		return k;
	}
	return sel;
}

static bool
m_rules_default(const struct model *m)
{
	static const uint32_t prio[3] = { 0, 32766, 32767 }, table[3] = { 255, 254, 253 };

	if (m->nrules != 3)
		return false;
	for (int i = 0; i < 3; i++) {
		struct fib_rule d;

		fib_rule_init(&d, AF_INET);
		d.priority = prio[i];
		d.table = table[i];
		d.protocol = m->rules[i].protocol;
		if (memcmp(&d, &m->rules[i], sizeof(d)))
			return false;
	}
	return true;
}

static void
m_resolve(const struct model *m, const struct fib_flow *fl, struct m_answer *a)
{
	struct m_flow f = { .fl = fl };
	const struct m_route *rt = NULL;
	int err = -ENETUNREACH, nh = 0, i = 0, fwd;

	memset(a, 0, sizeof(*a));
	f.input = fl->flags & FIB_FLOW_IIF;
	f.iif = f.input ? fl->iif : 1;
	f.oif = fl->flags & FIB_FLOW_OIF ? fl->oif : 0;
	f.uid = fl->flags & FIB_FLOW_UID ? fl->uid : f.input ? 0xffffffffu : 0;
	f.ds = fl->flags & FIB_FLOW_DSCP ? fl->tos << 2 : fl->tos;
	if (m->family == AF_INET && !f.input && (fl->flags & FIB_FLOW_SRC)) {
		uint32_t sa = ntohl(fl->src.v4.s_addr);
		bool local = false;
		int n4 = 0;
		if ((sa >> 28) == 0xe || sa == 0xffffffffu || (sa >> 24) == 0) {
			a->error = EINVAL;
			return;
		}
		for (int k = 0; k < m->naddrs; k++) {
			if (m->addrs[k].family != AF_INET)
				continue;
			n4++;
			if (m->addrs[k].addr.v4.s_addr == fl->src.v4.s_addr)
				local = true;
		}
		/* a source of this host's (checked when addresses are known) */
		if (n4 && !local) {
			a->error = ENETUNREACH;
			return;
		}
	}
	if (f.oif) {
		f.l3mdev = m_vrf(m, f.oif, &f.l3table);
		f.skip_oif = f.l3mdev == f.oif;
		const struct fib_link *l = m_link(m, f.oif);
		if (!l || !(l->flags & IFF_UP)) {
			a->error = l ? ENETUNREACH : ENODEV;
			return;
		}
	} else if (f.input && f.iif > 1) {
		f.l3mdev = m_vrf(m, f.iif, &f.l3table);
	}
	f.nh_oif = f.oif;
	if (m->family == AF_INET6) {
		/* rt6_need_strict: multicast, link-local, loopback */
		static const uint8_t loop[16] = { [15] = 1 };
		bool strict = fl->dst.b[0] == 0xff ||
			      (fl->dst.b[0] == 0xfe && (fl->dst.b[1] & 0xc0) == 0x80) ||
			      !memcmp(fl->dst.b, loop, 16);
		if (f.input)
			f.nh_oif = strict ? f.iif : 0;
		else if ((fl->flags & FIB_FLOW_SRC) && !strict)
			f.skip_oif = true;
	}
	if (m->family == AF_INET && f.input) {
		uint32_t sa = ntohl(fl->src.v4.s_addr), da = ntohl(fl->dst.v4.s_addr);
		/* ip_route_input_slow's martians */
		if ((sa >> 28) == 0xe || sa == 0xffffffffu || (sa >> 24) == 0 || (sa >> 24) == 127 ||
		    (da >> 24) == 0 || (da >> 24) == 127) {
			a->error = EINVAL;
			return;
		}
	}
	while (i < m->nrules) {
		const struct fib_rule *r = &m->rules[i];
		if (!m_rule_matches(m, &f, r)) {
			i++;
			continue;
		}
		if (r->action == FIB_RULE_GOTO) {
			int j;
			for (j = i + 1; j < m->nrules && m->rules[j].priority != r->goto_prio; j++)
				;
			i = j < m->nrules ? j : i + 1;
			continue;
		}
		if (r->action == FIB_RULE_NOP) {
			i++;
			continue;
		}
		a->has_rule = 1;
		a->rule = (int)r->priority;
		if (r->action == FIB_RULE_UNREACHABLE) {
			err = -ENETUNREACH;
			break;
		}
		if (r->action == FIB_RULE_PROHIBIT) {
			err = -EACCES;
			break;
		}
		if (r->action == FIB_RULE_BLACKHOLE) {
			err = -EINVAL;
			break;
		}
		err = m_table(m, &f, r->l3mdev ? f.l3table : r->table, &rt, &nh);
		if (err == 0) {
			bool sup = rt->r.plen <= r->suppress_prefixlen;
			if (r->suppress_ifgroup != -1 && rt->r.nh_count) {
				const struct fib_link *l = m_link(m, rt->nh[0].ifindex);
				if (l && (int)l->group == r->suppress_ifgroup)
					sup = true;
			}
			if (sup)
				err = -EAGAIN;
		}
		if (err == -EAGAIN) {
			a->has_rule = 0;
			rt = NULL;
			err = -ENETUNREACH;
			i++;
			continue;
		}
		break;
	}
	if (err && f.oif && !f.input && m->family == AF_INET && !f.l3mdev) {
		memset(a, 0, sizeof(*a));
		a->type = FIB_UNICAST;
		if (fl->flags & FIB_FLOW_SRC) {
			a->src = fl->src;
			a->has_src = 1;
		} else {
			uint32_t s = m_select_addr4(m, f.oif, 0, 253);
			if (s) {
				a->src.v4.s_addr = htonl(s);
				a->has_src = 1;
			}
		}
		return;
	}
	if (rt) {
		a->has_route = 1;
		a->type = rt->r.type;
		a->plen = rt->r.plen;
		a->table = (int)rt->r.table;
		/* only the default rules: local is merged into main
		 * (fib_has_custom_rules; the model's world never had others) */
		if (m->family == AF_INET && a->table == 255 && m_rules_default(m))
			a->table = 254;
		a->prefix = rt->r.dst;
		a->path = nh;
	}
	fwd = m->family == AF_INET ? m->hash.forwarding4 : m->hash.forwarding6;
	if (f.input && !fwd && (err || a->type != FIB_LOCAL))
		err = -EHOSTUNREACH;
	if (err) {
		a->error = -err;
		return;
	}
	if (rt->r.type == FIB_UNICAST && rt->r.nh_count > 1 && m->family == AF_INET6)
		a->path = m_multipath6(m, &f, rt, nh);
	else if (rt->r.type == FIB_UNICAST && rt->r.nh_count > 1 && (f.input || !f.oif))
		a->path = m_multipath(m, &f, rt, nh);
	if (f.input)
		return;
	if (fl->flags & FIB_FLOW_SRC) {
		a->src = fl->src;
		a->has_src = 1;
	} else if (m->family == AF_INET) {
		uint32_t s;
		if (rt->r.type == FIB_LOCAL)
			s = rt->r.prefsrc_set ? ntohl(rt->r.prefsrc.v4.s_addr) : ntohl(fl->dst.v4.s_addr);
		else if (rt->r.nh_count || rt->r.prefsrc_set)
			s = m_path_src4(m, rt, a->path);
		else
			s = 0;
		if (s) {
			a->src.v4.s_addr = htonl(s);
			a->has_src = 1;
		}
	}
}

/* ----------------------------------------------------- random worlds */

static const char *const lnames[] = { "", "lo", "eth0", "eth1", "eth2", "blue", "eth3" };

static void
world_links(struct fib *fib, struct model *m, struct rng *g)
{
	static const struct {
		uint32_t master, group, vrf;
	} l[] = { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 }, { 0, 1, 0 }, { 0, 0, 100 },
		  { 5, 2, 0 } };
	static const struct {
		uint32_t ifindex;
		const char *a;
		int plen, scope, flags;
	} ad[] = {
		{ 1, "127.0.0.1", 8, 254, 0 },   { 2, "10.0.0.1", 24, 0, 0 },
		{ 2, "10.0.0.2", 24, 0, 1 },     { 3, "10.1.0.1", 16, 0, 0 },
		{ 3, "192.168.1.1", 24, 253, 0 }, { 4, "10.2.0.1", 24, 0, 0 },
		{ 6, "10.9.0.1", 24, 0, 0 },     { 5, "10.8.0.1", 32, 0, 0 },
	};

	m->nlinks = 0;
	for (uint32_t i = 1; i <= 6; i++) {
		struct fib_link k = { .ifindex = i, .flags = IFF_UP | IFF_LOWER_UP };
		k.master = l[i].master;
		k.group = l[i].group;
		k.vrf_table = l[i].vrf;
		snprintf(k.name, sizeof(k.name), "%s", lnames[i]);
		if (i == 4) {
			unsigned r = (unsigned)rng_below(g, 3);
			k.flags = r == 0 ? 0 : r == 1 ? IFF_UP : IFF_UP | IFF_LOWER_UP;
		}
		ck_assert_int_eq(fib_link_set(fib, &k), 0);
		m->links[m->nlinks++] = k;
	}
	m->naddrs = 0;
	if (m->family != AF_INET)
		return;
	for (size_t i = 0; i < sizeof(ad) / sizeof(ad[0]); i++) {
		struct fib_ifaddr a = { .family = AF_INET };
		a.ifindex = ad[i].ifindex;
		a.plen = (uint8_t)ad[i].plen;
		a.scope = (uint8_t)ad[i].scope;
		a.flags = (uint32_t)ad[i].flags;
		inet_pton(AF_INET, ad[i].a, &a.addr.v4);
		ck_assert_int_eq(fib_ifaddr_add(fib, &a), 0);
		m->addrs[m->naddrs++] = a;
	}
}

/* an address near the interesting places */
static void
rand_addr(struct rng *g, int family, union fib_addr *a)
{
	static const char *const base4[] = { "10.0.0.0", "10.1.0.0", "10.2.0.0", "10.9.0.0",
					     "192.168.1.0", "8.8.8.0", "127.0.0.0", "172.16.0.0" };
	static const char *const base6[] = { "2001:db8::", "2001:db8:1::", "fe80::", "2001:db8:ff::",
					     "::1", "fd00::" };

	memset(a, 0, sizeof(*a));
	if (family == AF_INET) {
		uint32_t x;
		if (rng_below(g, 8) == 0) {
			a->v4.s_addr = (uint32_t)rng_next(g);
			return;
		}
		inet_pton(AF_INET, base4[rng_below(g, 8)], &a->v4);
		x = ntohl(a->v4.s_addr) | (uint32_t)(rng_below(g, 4) == 0 ? rng_below(g, 1u << 20)
									  : rng_below(g, 256));
		a->v4.s_addr = htonl(x);
		return;
	}
	inet_pton(AF_INET6, base6[rng_below(g, 6)], a->b);
	if (a->b[15] != 1)
		for (int i = 12; i < 16; i++)
			a->b[i] = (uint8_t)rng_below(g, rng_below(g, 2) ? 4 : 256);
}

static void
mask_addr(union fib_addr *a, int plen, int family)
{
	int bits = family == AF_INET ? 32 : 128;

	for (int i = 0; i < bits / 8; i++) {
		int keep = plen - i * 8;
		if (keep <= 0)
			a->b[i] = 0;
		else if (keep < 8)
			a->b[i] &= (uint8_t)(0xff << (8 - keep));
	}
}

static const uint32_t tables[] = { 10, 20, 100, 253, 254, 255 };

static void
world_routes(struct fib *fib, struct model *m, struct rng *g, int n)
{
	int bits = m->family == AF_INET ? 32 : 128;
	static const uint32_t devs[] = { 2, 3, 4, 6 };

	m->nrt = 0;
	for (int i = 0; i < n && m->nrt < M_ROUTES; i++) {
		struct m_route *mr = &m->rt[m->nrt];
		struct fib_route *r = &mr->r;
		unsigned t = (unsigned)rng_below(g, 20);

		memset(mr, 0, sizeof(*mr));
		r->family = (uint8_t)m->family;
		rand_addr(g, m->family, &r->dst);
		r->plen = (uint8_t)(rng_below(g, 3) == 0 ? rng_below(g, bits + 1)
							 : (bits / 4) * (1 + rng_below(g, 4)));
		mask_addr(&r->dst, r->plen, m->family);
		r->table = tables[rng_below(g, 6)];
		r->type = t < 12 ? FIB_UNICAST : t < 14 ? FIB_LOCAL : t < 16 ? FIB_THROW
			  : t < 17 ? FIB_UNREACHABLE : t < 18 ? FIB_PROHIBIT : t < 19 ? FIB_BLACKHOLE : FIB_UNICAST;
		r->tos = m->family == AF_INET && rng_below(g, 6) == 0 ? (uint8_t)(4 << rng_below(g, 3)) : 0;
		r->priority = (uint32_t)rng_below(g, 3);
		r->protocol = 4;
		if (r->type == FIB_UNICAST || r->type == FIB_LOCAL) {
			r->nh_count = r->type == FIB_LOCAL ? 1 : (uint8_t)(1 + rng_below(g, 3));
			for (int k = 0; k < r->nh_count; k++) {
				mr->nh[k].ifindex = devs[rng_below(g, 4)];
				mr->nh[k].weight = (uint16_t)(1 + rng_below(g, 4));
				if (m->family == AF_INET && rng_below(g, 2)) {
					mr->nh[k].gw_family = AF_INET;
					rand_addr(g, AF_INET, &mr->nh[k].gw);
				}
			}
			r->scope = mr->nh[0].gw_family ? 0 : 253;
			if (r->type == FIB_LOCAL)
				r->scope = 254;
			if (m->family == AF_INET && rng_below(g, 5) == 0) {
				r->prefsrc_set = 1;
				inet_pton(AF_INET, "10.0.0.1", &r->prefsrc.v4);
			}
		}
		r->nh = mr->nh;
		if (fib_add(fib, r, FIB_ADD_EXCL) == 0)
			m->nrt++;
	}
	for (int i = 0; i < m->nrt; i++)
		m->rt[i].r.nh = m->rt[i].nh;
}

static void
world_rules(struct fib *fib, struct model *m, struct rng *g, int n)
{
	int bits = m->family == AF_INET ? 32 : 128;
	struct fib_rule all[M_RULES];
	size_t got;

	if (rng_below(g, 4) == 0)
		fib_rule_flush(fib, m->family);
	for (int i = 0; i < n; i++) {
		struct fib_rule r;
		unsigned a = (unsigned)rng_below(g, 20);

		fib_rule_init(&r, m->family);
		r.priority = (uint32_t)(100 * (1 + rng_below(g, 20)));
		if (a < 9) {
			r.action = FIB_RULE_TO_TBL;
			r.table = tables[rng_below(g, 6)];
		} else if (a < 11) {
			r.action = FIB_RULE_TO_TBL;
			r.table = 0;
			r.l3mdev = 1;
		} else if (a < 14) {
			r.action = FIB_RULE_GOTO;
			r.goto_prio = r.priority + (uint32_t)(100 * (1 + rng_below(g, 5))) +
				      (rng_below(g, 5) == 0 ? 7 : 0);
		} else if (a < 16) {
			r.action = FIB_RULE_NOP;
		} else {
			static const uint8_t errs[] = { FIB_RULE_BLACKHOLE, FIB_RULE_UNREACHABLE,
							FIB_RULE_PROHIBIT };
			r.action = errs[rng_below(g, 3)];
		}
		if (rng_below(g, 5) == 0) {
			rand_addr(g, m->family, &r.src);
			r.src_len = (uint8_t)rng_below(g, bits + 1);
		}
		if (rng_below(g, 4) == 0) {
			rand_addr(g, m->family, &r.dst);
			r.dst_len = (uint8_t)(bits / 4 * rng_below(g, 5));
		}
		if (rng_below(g, 8) == 0) {
			if (rng_below(g, 2)) {
				r.flags |= FIB_RULE_DSCP;
				r.tos = (uint8_t)(rng_below(g, 2) ? 0 : 4);
			} else {
				r.tos = m->family == AF_INET ? (uint8_t)(4 << rng_below(g, 3)) : 0x10;
			}
		}
		if (rng_below(g, 8) == 0)
			r.ipproto = rng_below(g, 2) ? 6 : 17;
		if (rng_below(g, 8) == 0) {
			r.sport_lo = (uint16_t)(1000 + rng_below(g, 3));
			r.sport_hi = rng_below(g, 2) ? (uint16_t)(r.sport_lo + rng_below(g, 3)) : 0;
		}
		if (rng_below(g, 8) == 0) {
			r.dport_lo = (uint16_t)(53 + rng_below(g, 2));
			r.dport_hi = rng_below(g, 2) ? 80 : 0;
		}
		if (rng_below(g, 6) == 0) {
			r.mark = (uint32_t)rng_below(g, 4);
			r.mark_mask = rng_below(g, 2) ? 0xffffffffu : 1;
		}
		if (rng_below(g, 8) == 0) {
			r.uid_lo = (uint32_t)rng_below(g, 3);
			r.uid_hi = r.uid_lo + (uint32_t)rng_below(g, 2);
		}
		if (rng_below(g, 6) == 0) {
			static const char *const nm[] = { "lo", "eth0", "eth3", "blue", "nosuch" };
			snprintf(r.iifname, sizeof(r.iifname), "%s", nm[rng_below(g, 5)]);
		}
		if (rng_below(g, 8) == 0) {
			static const char *const nm[] = { "eth0", "eth1", "blue", "nosuch" };
			snprintf(r.oifname, sizeof(r.oifname), "%s", nm[rng_below(g, 4)]);
		}
		if (rng_below(g, 10) == 0)
			r.flags |= FIB_RULE_INVERT;
		if (r.action == FIB_RULE_TO_TBL && rng_below(g, 5) == 0)
			r.suppress_prefixlen = (int32_t)(bits / 4 * rng_below(g, 4));
		if (r.action == FIB_RULE_TO_TBL && rng_below(g, 6) == 0)
			r.suppress_ifgroup = (int32_t)(1 + rng_below(g, 2));
		ck_assert_int_ne(fib_rule_add(fib, &r), -EINVAL);
	}
	ck_assert_int_eq(fib_policy_publish(fib), 0);
	/* the model keeps the published order, checked against its own sort
	 * by priority (stable) below */
	fib_read_lock();
	got = fib_rules_get(fib, m->family, all, M_RULES);
	fib_read_unlock();
	ck_assert_uint_le(got, M_RULES);
	for (size_t i = 1; i < got; i++)
		ck_assert_uint_le(all[i - 1].priority, all[i].priority);
	memcpy(m->rules, all, got * sizeof(all[0]));
	m->nrules = (int)got;
}

static void
rand_flow(struct rng *g, const struct model *m, struct fib_flow *fl)
{
	static const uint8_t toss[] = { 0, 0, 0, 0x04, 0x08, 0x10, 0x1c, 0xb8 };

	memset(fl, 0, sizeof(*fl));
	fl->family = (uint8_t)m->family;
	rand_addr(g, m->family, &fl->dst);
	if (rng_below(g, 5) < 2) {
		fl->flags |= FIB_FLOW_SRC;
		if (m->naddrs && rng_below(g, 2))
			fl->src = m->addrs[rng_below(g, (uint64_t)m->naddrs)].addr;
		else
			rand_addr(g, m->family, &fl->src);
	}
	if (rng_below(g, 5) == 0) {
		fl->flags |= FIB_FLOW_IIF;
		fl->iif = (uint32_t)(2 + rng_below(g, 5));
	} else if (rng_below(g, 6) == 0) {
		fl->flags |= FIB_FLOW_OIF;
		fl->oif = (uint32_t)(2 + rng_below(g, 6)); /* 7: unknown */
	}
	if (rng_below(g, 3) == 0) {
		fl->flags |= FIB_FLOW_UID;
		fl->uid = (uint32_t)rng_below(g, 4);
	}
	fl->mark = (uint32_t)rng_below(g, 4);
	fl->tos = toss[rng_below(g, 8)];
	if (rng_below(g, 10) == 0) {
		fl->flags |= FIB_FLOW_DSCP;
		fl->tos >>= 2;
	}
	fl->ipproto = (uint8_t)(rng_below(g, 3) == 0 ? 0 : rng_below(g, 2) ? 6 : 17);
	fl->sport = (uint16_t)(999 + rng_below(g, 5));
	fl->dport = (uint16_t)(52 + rng_below(g, 30));
}

static void
compare(const struct fib_flow *fl, const struct m_answer *a, const struct fib_decision *d,
	uint64_t seed, int k)
{
	char dst[64];

	inet_ntop(fl->family, fl->dst.b, dst, sizeof(dst));
#define CMP(x, y, what)                                                                        \
	REQUIRE((x) == (y), "seed %llu flow %d dst %s flags %#x iif %u oif %u: %s %d != model %d", \
		      (unsigned long long)seed, k, dst, fl->flags, fl->iif, fl->oif, what, (int)(x), \
		      (int)(y))
	CMP(d->error, a->error, "error");
	CMP(!!(d->flags & FIB_D_ROUTE), a->has_route, "has route");
	if (a->has_route) {
		CMP(d->type, a->type, "type");
		CMP(d->plen, a->plen, "plen");
		CMP(d->table, (uint32_t)a->table, "table");
		CMP(memcmp(d->prefix.b, a->prefix.b, 16), 0, "prefix");
	} else if (!d->error) {
		CMP(d->type, a->type, "type");
	}
	CMP(!!(d->flags & FIB_D_RULE), a->has_rule, "has rule");
	if (a->has_rule)
		CMP(d->rule, (uint32_t)a->rule, "rule");
	if (!d->error) {
		CMP(d->path, a->path, "path");
		if (fl->family != AF_INET)
			return; /* IPv6 sources: test_source6 */
		CMP(!!(d->flags & FIB_D_SRC), a->has_src, "has src");
		if (a->has_src)
			CMP(memcmp(d->src.b, a->src.b, 16), 0, "src");
	}
#undef CMP
}

/* What the random worlds reached: each must be seen, or the model test
 * proves little. */
enum { SEEN_OK, SEEN_NETUNREACH, SEEN_HOSTUNREACH, SEEN_ACCES, SEEN_INVAL, SEEN_NODEV,
       SEEN_RULE_OTHER, SEEN_VRF, SEEN_PATH1, SEEN_SRC, SEEN_LOCAL, SEEN_ONLINK, SEEN_MAX };
static unsigned seen[SEEN_MAX];

static void
seen_note(const struct fib_decision *d)
{
	switch (d->error) {
	case 0: seen[SEEN_OK]++; break;
	case ENETUNREACH: seen[SEEN_NETUNREACH]++; break;
	case EHOSTUNREACH: seen[SEEN_HOSTUNREACH]++; break;
	case EACCES: seen[SEEN_ACCES]++; break;
	case EINVAL: seen[SEEN_INVAL]++; break;
	case ENODEV: seen[SEEN_NODEV]++; break;
	}
	if ((d->flags & FIB_D_RULE) && d->rule != 0 && d->rule < 32766)
		seen[SEEN_RULE_OTHER]++;
	if (d->table == 100)
		seen[SEEN_VRF]++;
	if (!d->error && d->path > 0)
		seen[SEEN_PATH1]++;
	if (d->flags & FIB_D_SRC)
		seen[SEEN_SRC]++;
	if (!d->error && d->type == FIB_LOCAL)
		seen[SEEN_LOCAL]++;
	if (!d->error && !(d->flags & FIB_D_ROUTE))
		seen[SEEN_ONLINK]++;
}

static void
seen_check(void)
{
	for (int i = 0; i < SEEN_MAX; i++)
		ck_assert_msg(seen[i] > 0, "outcome %d never reached", i);
}

static void
run_world(uint64_t seed, int family, int nflows)
{
	struct rng g;
	struct model *m = calloc(1, sizeof(*m));
	struct fib *fib = fib_new(NULL);

	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(fib);
	rng_seed(&g, seed);
	m->family = family;
	fib_mp_hash_default(&m->hash);
	m->hash.forwarding4 = m->hash.forwarding6 = (uint8_t)rng_below(&g, 2);
	m->hash.ignore_linkdown4 = m->hash.ignore_linkdown6 = (uint8_t)rng_below(&g, 2);
	m->hash.policy4 = m->hash.policy6 = (uint8_t)rng_below(&g, 2);
	REQUIRE_EQ(fib_mp_hash_set(fib, &m->hash), 0);
	world_links(fib, m, &g);
	world_routes(fib, m, &g, 40 + (int)rng_below(&g, 120));
	world_rules(fib, m, &g, (int)rng_below(&g, 14));
	fib_read_lock();
	for (int k = 0; k < nflows; k++) {
		struct fib_flow fl;
		struct fib_decision d;
		struct m_answer a;
		int ret;

		rand_flow(&g, m, &fl);
		m_resolve(m, &fl, &a);
		ret = fib_resolve_rcu(fib, &fl, &d);
		REQUIRE_EQ(ret, -(int)d.error);
		compare(&fl, &a, &d, seed, k);
		seen_note(&d);
	}
	fib_read_unlock();
	fib_free(fib);
	free(m);
}

START_TEST(test_model_random4)
{
	unsigned seeds = ck_short() ? 20 : 200;

	for (unsigned s = 0; s < seeds; s++)
		run_world(1000 + s, AF_INET, 300);
	seen_check();
}
END_TEST

START_TEST(test_model_random6)
{
	unsigned seeds = ck_short() ? 10 : 100;

	for (unsigned s = 0; s < seeds; s++)
		run_world(5000 + s, AF_INET6, 300);
}
END_TEST

/* ------------------------------------------------------- fixed cases */

static struct fib_route
route4(const char *pfx, uint32_t table, uint8_t type, struct fib_nh *nh, uint8_t n)
{
	struct fib_route r;
	uint8_t family;

	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(fib_prefix_parse(pfx, &r.dst, &r.plen, &family), 0);
	r.family = family;
	r.table = table;
	r.type = type;
	r.nh = nh;
	r.nh_count = n;
	r.scope = n && nh[0].gw_family ? 0 : 253;
	return r;
}

static struct fib_nh
nh4(const char *gw, uint32_t ifindex, uint16_t weight)
{
	struct fib_nh nh;

	memset(&nh, 0, sizeof(nh));
	nh.ifindex = ifindex;
	nh.weight = weight;
	if (gw) {
		nh.gw_family = strchr(gw, ':') ? AF_INET6 : AF_INET;
		inet_pton(nh.gw_family, gw, nh.gw.b);
	}
	return nh;
}

static struct fib_flow
flow(const char *dst)
{
	struct fib_flow fl;

	memset(&fl, 0, sizeof(fl));
	fl.family = strchr(dst, ':') ? AF_INET6 : AF_INET;
	inet_pton(fl.family, dst, fl.dst.b);
	return fl;
}

static void
add_link(struct fib *fib, uint32_t ifindex, const char *name, uint32_t flags)
{
	struct fib_link l = { .ifindex = ifindex, .flags = flags };

	snprintf(l.name, sizeof(l.name), "%s", name);
	ck_assert_int_eq(fib_link_set(fib, &l), 0);
}

static void
add_addr(struct fib *fib, uint32_t ifindex, const char *addr, int plen, int scope, uint32_t flags)
{
	struct fib_ifaddr a = { .plen = (uint8_t)plen, .scope = (uint8_t)scope, .flags = flags };

	a.family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	a.ifindex = ifindex;
	inet_pton(a.family, addr, a.addr.b);
	ck_assert_int_eq(fib_ifaddr_add(fib, &a), 0);
}

static const char *
src_str(const struct fib_decision *d, char *buf)
{
	if (!(d->flags & FIB_D_SRC))
		return "-";
	return inet_ntop(d->family, d->src.b, buf, INET6_ADDRSTRLEN);
}

/* The fast path answers what the rule walk answers: the same FIB with
 * a no-op rule added (not the default any more) as the reference. */
START_TEST(test_fast_equals_walk)
{
	struct fib *a = fib_new(NULL), *b = fib_new(NULL);
	struct rng g;
	struct fib_rule nop;
	struct model m = { .family = AF_INET };

	rng_seed(&g, 7);
	for (int f = 0; f < 2; f++) {
		struct fib *fib = f ? b : a;
		struct rng g2;
		rng_seed(&g2, 99);
		world_links(fib, &m, &g2);
		world_routes(fib, &m, &g2, 200);
		REQUIRE_EQ(fib_policy_publish(fib), 0);
	}
	ck_assert(fib_policy_is_default(a, AF_INET));
	fib_rule_init(&nop, AF_INET);
	nop.action = FIB_RULE_NOP;
	nop.priority = 40000;
	REQUIRE_EQ(fib_rule_add(b, &nop), 0);
	REQUIRE_EQ(fib_policy_publish(b), 0);
	ck_assert(!fib_policy_is_default(b, AF_INET));
	fib_read_lock();
	for (int k = 0; k < 20000; k++) {
		struct fib_flow fl[4];
		struct fib_decision da, db, batch[4];

		for (int i = 0; i < 4; i++) {
			rand_flow(&g, &m, &fl[i]);
			fl[i].flags &= (uint8_t) ~(FIB_FLOW_IIF | FIB_FLOW_OIF);
			if (i & 1)
				fl[i].tos = 0;
		}
		fib_resolve_batch_rcu(a, fl, batch, 4);
		for (int i = 0; i < 4; i++) {
			fib_resolve_rcu(a, &fl[i], &da);
			fib_resolve_rcu(b, &fl[i], &db);
			REQUIRE_EQ(da.error, db.error);
			REQUIRE_EQ(da.type, db.type);
			REQUIRE_EQ(da.plen, db.plen);
			/* a has only the default rules: its local table is
			 * merged into main, b's is not (fib_has_custom_rules) */
			REQUIRE_EQ(da.table, db.table == 255 ? 254u : db.table);
			REQUIRE_EQ(da.path, db.path);
			REQUIRE_EQ(da.flags, db.flags);
			REQUIRE_EQ(da.rule, db.rule);
			REQUIRE_EQ(memcmp(da.src.b, db.src.b, 16), 0);
			REQUIRE_EQ(memcmp(&da, &batch[i], sizeof(da)), 0);
		}
	}
	fib_read_unlock();
	fib_free(a);
	fib_free(b);
}
END_TEST

START_TEST(test_multipath_weights)
{
	struct fib *fib = fib_new(NULL);
	struct fib_nh nh[4] = { nh4("10.0.0.10", 2, 1), nh4("10.0.0.11", 2, 2), nh4("10.0.0.12", 3, 3),
				nh4("10.0.0.13", 3, 4) };
	struct fib_route r = route4("0.0.0.0/0", 254, FIB_UNICAST, nh, 4);
	unsigned count[4] = { 0 }, n = 100000;
	struct rng g;

	REQUIRE_EQ(fib_add(fib, &r, 0), 0);
	rng_seed(&g, 3);
	fib_read_lock();
	for (unsigned i = 0; i < n; i++) {
		struct fib_flow fl = flow("1.2.3.4");
		struct fib_decision d, d2;

		fl.dst.v4.s_addr = (uint32_t)rng_next(&g);
		fl.src.v4.s_addr = (uint32_t)rng_next(&g);
		REQUIRE_EQ(fib_resolve_rcu(fib, &fl, &d), 0);
		REQUIRE(d.path < 4, "path %u", d.path);
		REQUIRE_EQ(d.npaths, 4);
		count[d.path]++;
		REQUIRE_EQ(fib_resolve_rcu(fib, &fl, &d2), 0);
		REQUIRE_EQ(d.path, d2.path); /* one flow, one path */
	}
	fib_read_unlock();
	for (int k = 0; k < 4; k++) {
		double want = n * (k + 1) / 10.0;
		ck_assert_msg(count[k] > want * 0.95 && count[k] < want * 1.05,
			      "path %d: %u of %u, want %.0f", k, count[k], n, want);
	}
	fib_free(fib);
}
END_TEST

START_TEST(test_multipath_dead)
{
	struct fib *fib = fib_new(NULL);
	struct fib_nh nh[3] = { nh4("10.0.0.10", 2, 1), nh4("10.1.0.11", 3, 1), nh4("10.0.0.12", 2, 1) };
	struct fib_route r = route4("0.0.0.0/0", 254, FIB_UNICAST, nh, 3);
	struct fib_mp_hash h;
	unsigned count[3] = { 0 };
	struct rng g;

	REQUIRE_EQ(fib_add(fib, &r, 0), 0);
	add_link(fib, 2, "eth0", IFF_UP | IFF_LOWER_UP);
	add_link(fib, 3, "eth1", IFF_UP); /* no carrier */
	fib_mp_hash_default(&h);
	h.ignore_linkdown4 = 1;
	REQUIRE_EQ(fib_mp_hash_set(fib, &h), 0);
	REQUIRE_EQ(fib_policy_publish(fib), 0);
	rng_seed(&g, 4);
	fib_read_lock();
	for (unsigned i = 0; i < 20000; i++) {
		struct fib_flow fl = flow("1.2.3.4");
		struct fib_decision d;

		fl.dst.v4.s_addr = (uint32_t)rng_next(&g);
		REQUIRE_EQ(fib_resolve_rcu(fib, &fl, &d), 0);
		count[d.path]++;
	}
	fib_read_unlock();
	REQUIRE_EQ(count[1], 0);
	ck_assert_uint_gt(count[0], 9000);
	ck_assert_uint_gt(count[2], 9000);
	/* every path down: the route is passed over, nothing else matches */
	add_link(fib, 2, "eth0", 0);
	add_link(fib, 3, "eth1", 0);
	REQUIRE_EQ(fib_policy_publish(fib), 0);
	fib_read_lock();
	{
		struct fib_flow fl = flow("1.2.3.4");
		struct fib_decision d;
		REQUIRE_EQ(fib_resolve_rcu(fib, &fl, &d), -ENETUNREACH);
	}
	fib_read_unlock();
	fib_free(fib);
}
END_TEST

/*
 * A resilient group (nexthop_select_path_res): the path is the one the
 * bucket hash % buckets holds, in both families, dead or not; two routes
 * with the same paths and different buckets keep their own maps; a map
 * naming no path is refused; a replace brings the new map.
 */
static void
res_check(struct fib *fib, const struct fib_mp_hash *h, int family, const uint8_t *map,
	  unsigned nb, struct rng *g, unsigned *count)
{
	union fib_addr zero;

	memset(&zero, 0, sizeof(zero));
	fib_read_lock();
	for (unsigned i = 0; i < 20000; i++) {
		struct fib_flow fl = flow(family == AF_INET ? "1.2.3.4" : "2001:db8::1");
		struct fib_decision d;
		uint32_t hash;

		for (unsigned k = 0; k < (family == AF_INET ? 4u : 16u); k += 4) {
			uint32_t v = (uint32_t)rng_next(g);
			memcpy(&fl.src.b[k], &v, 4);
			v = (uint32_t)rng_next(g);
			memcpy(&fl.dst.b[k], &v, 4);
		}
		if (family == AF_INET6)
			fl.dst.b[0] = 0x20; /* inside 2000::/3 */
		else
			fl.src.b[0] = 10; /* not a martian source */
		if (rng_below(g, 2))
			fl.flags |= FIB_FLOW_SRC;
		fl.ipproto = 6;
		fl.sport = (uint16_t)rng_next(g);
		fl.dport = (uint16_t)rng_next(g);
		REQUIRE_EQ(fib_resolve_rcu(fib, &fl, &d), 0);
		hash = fib_mphash(h, &fl, (fl.flags & FIB_FLOW_SRC) ? &fl.src : &zero);
		REQUIRE(d.path == map[hash % nb], "flow %u: path %u, bucket %u holds %u", i, d.path,
			hash % nb, map[hash % nb]);
		count[d.path]++;
	}
	fib_read_unlock();
}

START_TEST(test_resilient)
{
	struct fib *fib = fib_new(NULL);
	struct fib_nh nh[3] = { nh4("10.0.0.10", 2, 1), nh4("10.0.0.11", 3, 1), nh4("10.0.0.12", 2, 1) };
	struct fib_nh nh6[2] = { nh4("fe80::1", 2, 1), nh4("fe80::2", 3, 1) };
	uint8_t map[13] = { 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 1 }, map2[13], map6[7] = { 1, 0, 1, 1, 0, 1, 1 };
	struct fib_route r = route4("0.0.0.0/0", 254, FIB_UNICAST, nh, 3);
	struct fib_route r2 = route4("10.9.0.0/16", 254, FIB_UNICAST, nh, 3);
	struct fib_route r6 = route4("::/0", 254, FIB_UNICAST, nh6, 2);
	struct fib_mp_hash h;
	unsigned count[3] = { 0 };
	struct rng g;

	fib_mp_hash_default(&h);
	h.policy4 = h.policy6 = 1;
	h.seed_set = 1;
	h.seed = 12345;
	REQUIRE_EQ(fib_mp_hash_set(fib, &h), 0);
	add_link(fib, 2, "eth0", IFF_UP | IFF_LOWER_UP);
	add_link(fib, 3, "eth1", 0); /* down: the kernel's buckets still hand it out */
	REQUIRE_EQ(fib_policy_publish(fib), 0);
	r.nh_id = r2.nh_id = r6.nh_id = 7;
	r.res_buckets = 13;
	r.res_map = map;
	for (int i = 0; i < 13; i++)
		map2[i] = (uint8_t)(i % 3);
	r2.res_buckets = 13;
	r2.res_map = map2;
	r6.res_buckets = 7;
	r6.res_map = map6;
	REQUIRE_EQ(fib_add(fib, &r, 0), 0);
	REQUIRE_EQ(fib_add(fib, &r2, 0), 0);
	REQUIRE_EQ(fib_add(fib, &r6, 0), 0);
	rng_seed(&g, 13);
	res_check(fib, &h, AF_INET, map, 13, &g, count);
	/* the map, not the weights: bucket 0..10 hold path 2 */
	ck_assert_uint_gt(count[2], count[0] + count[1]);
	ck_assert_uint_gt(count[1], 0); /* eth1 down, still chosen */
	{
		struct fib_flow fl = flow("10.9.1.1");
		struct fib_decision d;
		union fib_addr zero;
		uint32_t hash;

		memset(&zero, 0, sizeof(zero));
		fib_read_lock();
		REQUIRE_EQ(fib_resolve_rcu(fib, &fl, &d), 0);
		hash = fib_mphash(&h, &fl, &zero);
		REQUIRE_EQ(d.path, map2[hash % 13]);
		REQUIRE(d.info->res_buckets == 13 && !memcmp(fib_info_res_map(d.info), map2, 13),
			"10.9/16 keeps its own map");
		fib_read_unlock();
	}
	memset(count, 0, sizeof(count));
	res_check(fib, &h, AF_INET6, map6, 7, &g, count);
	ck_assert_uint_gt(count[0], 0);
	ck_assert_uint_gt(count[1], count[0]);
	/* a bucket naming no path is refused, the route unchanged */
	map2[5] = 3;
	REQUIRE_EQ(fib_add(fib, &r2, FIB_ADD_REPLACE), -EINVAL);
	/* a replace with moved buckets: the new map */
	for (int i = 0; i < 13; i++)
		map2[i] = 0;
	r.res_map = map2;
	REQUIRE_EQ(fib_add(fib, &r, FIB_ADD_REPLACE), 0);
	memset(count, 0, sizeof(count));
	res_check(fib, &h, AF_INET, map2, 13, &g, count);
	REQUIRE_EQ(count[0], 20000);
	fib_free(fib);
}
END_TEST

START_TEST(test_errors)
{
	struct fib *fib = fib_new(NULL);
	static const struct {
		const char *pfx;
		uint8_t type;
		int err4, err6;
	} t[] = {
		{ "10.1.0.0/16", FIB_UNREACHABLE, EHOSTUNREACH, 0 },
		{ "10.2.0.0/16", FIB_PROHIBIT, EACCES, 0 },
		{ "10.3.0.0/16", FIB_BLACKHOLE, EINVAL, 0 },
		{ "2001:db8:1::/48", FIB_UNREACHABLE, 0, EHOSTUNREACH },
		{ "2001:db8:2::/48", FIB_PROHIBIT, 0, EACCES },
		{ "2001:db8:3::/48", FIB_BLACKHOLE, 0, EINVAL },
	};
	static const char *const dst[] = { "10.1.2.3", "10.2.2.3", "10.3.2.3",
					   "2001:db8:1::1", "2001:db8:2::1", "2001:db8:3::1" };
	struct fib_rule rr;

	for (size_t i = 0; i < 6; i++) {
		struct fib_route r = route4(t[i].pfx, 254, t[i].type, NULL, 0);
		ck_assert_int_eq(fib_add(fib, &r, 0), 0);
	}
	fib_read_lock();
	for (size_t i = 0; i < 6; i++) {
		struct fib_flow fl = flow(dst[i]);
		struct fib_decision d;
		int want = i < 3 ? t[i].err4 : t[i].err6;

		ck_assert_int_eq(fib_resolve_rcu(fib, &fl, &d), -want);
		ck_assert_int_eq(d.type, t[i].type);
		ck_assert_str_eq(fib_errno_name(d.error), fib_errno_name(want));
	}
	{
		struct fib_flow fl = flow("9.9.9.9");
		struct fib_decision d;
		ck_assert_int_eq(fib_resolve_rcu(fib, &fl, &d), -ENETUNREACH);
		fl = flow("2001:db8:9::1");
		ck_assert_int_eq(fib_resolve_rcu(fib, &fl, &d), -ENETUNREACH);
	}
	fib_read_unlock();
	/* rule actions */
	fib_rule_init(&rr, AF_INET6);
	rr.priority = 10;
	rr.action = FIB_RULE_UNREACHABLE;
	ck_assert_int_eq(fib_rule_add(fib, &rr), 0);
	ck_assert_int_eq(fib_rule_add(fib, &rr), -EEXIST);
	ck_assert_int_eq(fib_policy_publish(fib), 0);
	fib_read_lock();
	{
		struct fib_flow fl = flow("2001:db8:1::1");
		struct fib_decision d;
		ck_assert_int_eq(fib_resolve_rcu(fib, &fl, &d), -ENETUNREACH);
		ck_assert_uint_eq(d.rule, 10);
		ck_assert(d.flags & FIB_D_RULE);
	}
	fib_read_unlock();
	ck_assert_int_eq(fib_rule_del(fib, &rr), 0);
	ck_assert_int_eq(fib_rule_del(fib, &rr), -ENOENT);
	/* invalid rules */
	fib_rule_init(&rr, AF_INET);
	rr.action = FIB_RULE_GOTO;
	rr.priority = 10;
	rr.goto_prio = 10;
	ck_assert_int_eq(fib_rule_add(fib, &rr), -EINVAL);
	rr.action = 42;
	ck_assert_int_eq(fib_rule_add(fib, &rr), -EINVAL);
	fib_free(fib);
}
END_TEST

START_TEST(test_source4)
{
	struct fib *fib = fib_new(NULL);
	struct fib_nh a = nh4("10.1.0.254", 2, 1), b = nh4(NULL, 3, 1), c = nh4("10.5.0.1", 4, 1);
	struct fib_route r1 = route4("8.0.0.0/8", 254, FIB_UNICAST, &a, 1);
	struct fib_route r2 = route4("9.0.0.0/8", 254, FIB_UNICAST, &b, 1);
	struct fib_route r3 = route4("11.0.0.0/8", 254, FIB_UNICAST, &a, 1);
	struct fib_route r4 = route4("12.0.0.0/8", 254, FIB_UNICAST, &c, 1);
	struct fib_route l = route4("10.0.0.1/32", 255, FIB_LOCAL, &a, 1);
	char buf[INET6_ADDRSTRLEN];
	static const struct {
		const char *dst;
		int flags;
		const char *src;
	} t[] = {
		{ "8.8.8.8", 0, "10.1.0.1" },   /* same subnet as the gateway, not the first */
		{ "9.9.9.9", 0, "192.168.0.1" }, /* scope link route: link-scope address ok */
		{ "11.1.1.1", 0, "1.1.1.1" },   /* prefsrc */
		{ "12.1.1.1", 0, "10.0.0.5" },  /* no address on the device: another device */
		{ "10.0.0.1", 0, "10.0.0.1" },  /* local: itself */
		{ "8.8.8.8", FIB_FLOW_IIF, "-" }, /* input: no source */
		{ "8.8.8.8", FIB_FLOW_SRC, "10.2.0.1" }, /* from (an address of ours): kept */
	};

	add_link(fib, 1, "lo", IFF_UP | IFF_LOWER_UP);
	add_link(fib, 2, "eth0", IFF_UP | IFF_LOWER_UP);
	add_link(fib, 3, "eth1", IFF_UP | IFF_LOWER_UP);
	add_link(fib, 4, "eth2", IFF_UP | IFF_LOWER_UP);
	add_addr(fib, 1, "127.0.0.1", 8, 254, 0);
	add_addr(fib, 1, "10.0.0.5", 32, 0, 0);
	add_addr(fib, 2, "10.2.0.1", 24, 0, 0);
	add_addr(fib, 2, "10.1.0.9", 16, 0, 0x01); /* secondary: never */
	add_addr(fib, 2, "10.1.0.1", 16, 0, 0);
	add_addr(fib, 3, "192.168.0.1", 24, 253, 0);
	r3.prefsrc_set = 1;
	inet_pton(AF_INET, "1.1.1.1", &r3.prefsrc.v4);
	ck_assert_int_eq(fib_add(fib, &r1, 0), 0);
	ck_assert_int_eq(fib_add(fib, &r2, 0), 0);
	ck_assert_int_eq(fib_add(fib, &r3, 0), 0);
	ck_assert_int_eq(fib_add(fib, &r4, 0), 0);
	l.scope = 254;
	ck_assert_int_eq(fib_add(fib, &l, 0), 0);
	ck_assert_int_eq(fib_policy_publish(fib), 0);
	fib_read_lock();
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct fib_flow fl = flow(t[i].dst);
		struct fib_decision d;

		fl.flags = (uint8_t)t[i].flags;
		fl.iif = 2;
		inet_pton(AF_INET, t[i].flags & FIB_FLOW_SRC ? t[i].src : "7.7.7.7", &fl.src.v4);
		ck_assert_int_eq(fib_resolve_rcu(fib, &fl, &d), t[i].flags & FIB_FLOW_IIF ? -EHOSTUNREACH : 0);
		if (t[i].flags & FIB_FLOW_IIF)
			continue;
		ck_assert_msg(strcmp(src_str(&d, buf), t[i].src) == 0, "%s: src %s, want %s", t[i].dst,
			      src_str(&d, buf), t[i].src);
	}
	fib_read_unlock();
	/* forwarding on: the input flow is answered, without a source */
	{
		struct fib_mp_hash h;
		struct fib_flow fl = flow("8.8.8.8");
		struct fib_decision d;

		fib_mp_hash_default(&h);
		h.forwarding4 = 1;
		ck_assert_int_eq(fib_mp_hash_set(fib, &h), 0);
		ck_assert_int_eq(fib_policy_publish(fib), 0);
		fl.flags = FIB_FLOW_IIF | FIB_FLOW_SRC;
		fl.iif = 3;
		inet_pton(AF_INET, "7.7.7.7", &fl.src.v4);
		fib_read_lock();
		ck_assert_int_eq(fib_resolve_rcu(fib, &fl, &d), 0);
		ck_assert(!(d.flags & FIB_D_SRC));
		fib_read_unlock();
	}
	fib_free(fib);
}
END_TEST

START_TEST(test_source6)
{
	struct fib *fib = fib_new(NULL);
	struct fib_nh a = nh4("fe80::1", 2, 1);
	struct fib_route r1 = route4("::/0", 254, FIB_UNICAST, &a, 1);
	struct fib_route r2 = route4("fe80::/64", 254, FIB_UNICAST, &a, 1);
	char buf[INET6_ADDRSTRLEN];
	static const struct {
		const char *dst, *src;
	} t[] = {
		{ "2001:db8:5::1", "2001:db8:5::9" }, /* longest common prefix */
		{ "2001:db9::1", "2001:db8::1" },     /* global over link-local and deprecated */
		{ "fe80::77", "fe80::2" },            /* link-local destination */
		{ "fd00::5", "fd00::9" },             /* label: ULA to ULA */
	};

	add_link(fib, 2, "eth0", IFF_UP | IFF_LOWER_UP);
	add_link(fib, 3, "eth1", IFF_UP | IFF_LOWER_UP);
	add_addr(fib, 2, "fe80::2", 64, 253, 0);
	add_addr(fib, 2, "2001:db8::1", 64, 0, 0);
	add_addr(fib, 2, "2001:db8:7::1", 64, 0, 0x20); /* deprecated */
	add_addr(fib, 2, "2001:db8:5::9", 64, 0, 0);
	add_addr(fib, 3, "2001:db8:5::8", 64, 0, 0); /* longer match, other device */
	add_addr(fib, 2, "fd00::9", 64, 0, 0);
	add_addr(fib, 2, "2001:db8:6::1", 64, 0, 0x40); /* tentative */
	ck_assert_int_eq(fib_add(fib, &r1, 0), 0);
	ck_assert_int_eq(fib_add(fib, &r2, 0), 0);
	ck_assert_int_eq(fib_policy_publish(fib), 0);
	fib_read_lock();
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct fib_flow fl = flow(t[i].dst);
		struct fib_decision d;

		ck_assert_int_eq(fib_resolve_rcu(fib, &fl, &d), 0);
		ck_assert_msg(strcmp(src_str(&d, buf), t[i].src) == 0, "%s: src %s, want %s", t[i].dst,
			      src_str(&d, buf), t[i].src);
	}
	fib_read_unlock();
	fib_free(fib);
}
END_TEST

/* Publish many snapshots while reading: the old ones are retired through
 * the batched reclamation and freed; rules read back as added. */
START_TEST(test_publish_retire)
{
	struct fib *fib = fib_new(NULL);
	struct fib_rule r, out[8];
	struct fib_stats st;
	uint64_t gen = fib_policy_generation(fib);

	for (int i = 0; i < 2000; i++) {
		fib_rule_init(&r, AF_INET);
		r.priority = 1000;
		r.table = (uint32_t)(1 + i);
		ck_assert_int_eq(fib_rule_add(fib, &r), 0);
		ck_assert_int_eq(fib_policy_publish(fib), 0);
		fib_read_lock();
		ck_assert_uint_eq(fib_rules_get(fib, AF_INET, out, 8), 4);
		ck_assert_uint_eq(out[1].table, (uint32_t)(1 + i));
		fib_read_unlock();
		ck_assert_int_eq(fib_rule_del(fib, &r), 0);
	}
	ck_assert_int_eq(fib_policy_publish(fib), 0);
	ck_assert_int_eq(fib_policy_publish(fib), 0); /* nothing changed */
	ck_assert_uint_eq(fib_policy_generation(fib), gen + 2001);
	ck_assert(fib_policy_is_default(fib, AF_INET));
	ck_assert(fib_policy_is_default(fib, AF_INET6));
	fib_reclaim_flush(fib);
	fib_reclaim_barrier(fib);
	fib_stats(fib, &st);
	ck_assert_uint_gt(st.reclaim.bytes_retired, 0);
	ck_assert_uint_eq(st.reclaim.bytes_pending, 0);
#ifdef FIB_FAULT_INJECTION
	fib_rule_init(&r, AF_INET6);
	r.priority = 5;
	ck_assert_int_eq(fib_rule_add(fib, &r), 0);
	fib_fail_after(fib, 1);
	ck_assert_int_eq(fib_policy_publish(fib), -ENOMEM);
	ck_assert(fib_policy_is_default(fib, AF_INET6)); /* the old snapshot stays */
	fib_fail_after(fib, 2);
	ck_assert_int_eq(fib_policy_publish(fib), -ENOMEM);
	fib_fail_after(fib, 0);
	ck_assert_int_eq(fib_policy_publish(fib), 0);
	ck_assert(!fib_policy_is_default(fib, AF_INET6));
#endif
	fib_free(fib);
}
END_TEST

/* The local-table filter: routes of table 255 that come and go. */
START_TEST(test_local_filter)
{
	struct fib *fib = fib_new(NULL);
	struct fib_nh a = nh4(NULL, 2, 1);
	struct fib_route def = route4("0.0.0.0/0", 254, FIB_UNICAST, &a, 1);
	struct fib_route loc = route4("10.0.0.1/32", 255, FIB_LOCAL, &a, 1);
	struct fib_route lo8 = route4("127.0.0.0/8", 255, FIB_LOCAL, &a, 1);
	/* shorter than /8: the filter marks every top octet it covers */
	struct fib_route lo6 = route4("124.0.0.0/6", 255, FIB_LOCAL, &a, 1);
	struct fib_flow f1 = flow("10.0.0.1"), f2 = flow("127.1.2.3"), f3 = flow("125.9.9.9");
	struct fib_decision d;

	ck_assert_int_eq(fib_add(fib, &def, 0), 0);
	for (int round = 0; round < 3; round++) {
		ck_assert_int_eq(fib_add(fib, &loc, 0), 0);
		ck_assert_int_eq(fib_add(fib, &loc, FIB_ADD_REPLACE), 0);
		ck_assert_int_eq(fib_add(fib, &lo8, 0), 0);
		ck_assert_int_eq(fib_add(fib, &lo8, 0), -EEXIST);
		ck_assert_int_eq(fib_add(fib, &lo6, 0), 0);
		fib_read_lock();
		fib_resolve_rcu(fib, &f1, &d);
		ck_assert_int_eq(d.type, FIB_LOCAL);
		ck_assert_uint_eq(d.rule, 0);
		fib_resolve_rcu(fib, &f2, &d);
		ck_assert_int_eq(d.type, FIB_LOCAL);
		fib_resolve_rcu(fib, &f3, &d);
		ck_assert_int_eq(d.type, FIB_LOCAL);
		fib_read_unlock();
		ck_assert_int_eq(fib_del(fib, &loc), 0);
		ck_assert_int_eq(fib_del(fib, &lo8), 0);
		fib_read_lock();
		fib_resolve_rcu(fib, &f1, &d);
		ck_assert_int_eq(d.type, FIB_UNICAST);
		ck_assert_uint_eq(d.rule, 32766);
		fib_resolve_rcu(fib, &f2, &d);
		ck_assert_int_eq(d.type, FIB_LOCAL); /* 124.0.0.0/6 still covers it */
		fib_read_unlock();
		ck_assert_int_eq(fib_del(fib, &lo6), 0);
		fib_read_lock();
		fib_resolve_rcu(fib, &f2, &d);
		ck_assert_int_eq(d.type, FIB_UNICAST);
		fib_resolve_rcu(fib, &f3, &d);
		ck_assert_int_eq(d.type, FIB_UNICAST);
		fib_read_unlock();
	}
	fib_free(fib);
}
END_TEST

static Suite *
resolve_suite(void)
{
	Suite *s = suite_create("resolve");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_model_random4);
	tcase_add_test(tc, test_model_random6);
	tcase_add_test(tc, test_fast_equals_walk);
	tcase_add_test(tc, test_multipath_weights);
	tcase_add_test(tc, test_multipath_dead);
	tcase_add_test(tc, test_resilient);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_source4);
	tcase_add_test(tc, test_source6);
	tcase_add_test(tc, test_publish_retire);
	tcase_add_test(tc, test_local_filter);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	fib_thread_online();
	return ck_run(resolve_suite(), CK_FORK_GETENV);
}
