/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the resolution: the kernel's answer to a flow, as a pure function
 *
 * fib_resolve_rcu(fib, flow) walks what the kernel walks for `ip route
 * get` (doc/decisions.md, section 3):
 *
 *   Step 0  the flow as the kernel sees it: iif of an output flow is the
 *           loopback, oif/iif enslaved to a VRF give the flow's l3mdev
 *           (l3mdev_update_flow), tos masked as fib_dscp_masked_match
 *   Step 1  fast path: default rules, no oif, legacy tos 0, dst not in the
 *           local table's filter: one lookup of main (compiled table)
 *   Step 2  the rules (net/core/fib_rules.c fib_rules_lookup): iif, oif,
 *           mark, l3mdev, uid, then the family's selectors
 *           (fib4_rule_match, fib6_rule_match), inverted by `not`; goto,
 *           nop, the error actions; `lookup`: the table (fib_table_lookup:
 *           route type errors, throw and misses go on, an alias whose
 *           paths are all dead or filtered by oif is passed over), then
 *           suppress_prefixlength / suppress_ifgroup (fib4_rule_suppress)
 *   Step 3  the path (fib_select_path, fib_select_multipath): the 31-bit
 *           flow hash (fib/mphash.h) against fib_rebalance's upper bounds,
 *           dead and ignored link-down paths skipped; an IPv4 output
 *           flow with `from` scores paths whose nh_saddr is that address
 *           (legacy routes); IPv4 with oif keeps the matched path; IPv6
 *           hashes from the first sibling, and keeps rt6_select's match
 *           only where a strict oif refuses the hashed one
 *           (fib6_select_path)
 *   Step 4  the source: route prefsrc, else inet_select_addr (IPv4) or
 *           the RFC 6724 rules of ipv6_dev_get_saddr that need no
 *           neighbour state (IPv6); input flows have none
 *
 * Errors are the kernel's: rule unreachable ENETUNREACH, prohibit EACCES,
 * blackhole EINVAL; route unreachable EHOSTUNREACH (both families: the
 * kernel's fib_props and fib6_prop), prohibit EACCES, blackhole EINVAL;
 * nothing matched ENETUNREACH (__fib_lookup's -ESRCH, IPv6's null entry).
 * An output flow with an oif whose lookup fails is sent on-link out of
 * that device (ip_route_output_key_hash_rcu), IPv4 only.
 *
 * No I/O, no allocation, no lock: Context: reader.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "fib/fib.h"
#include "fib/fib_priv.h"
#include "fib/mphash.h"
#include "fib/policy.h"
#include "fib/policy_priv.h"
#include "fib/rcu.h"
#include "fib/trie.h"

#define RT_TABLE_MAIN 254u
#define RT_SCOPE_UNIVERSE 0
#define RT_SCOPE_LINK 253
#define RT_SCOPE_HOST 254
#define IFA_F_SECONDARY 0x01
#define IFA_F_DEPRECATED 0x20
#define IFA_F_TENTATIVE 0x40
#define IFA_F_OPTIMISTIC 0x04

typedef unsigned __int128 u128;

/* What one resolution knows about its flow. */
struct rctx {
	const struct fib *fib;
	const struct fib_policy *p;
	const struct fib_flow *fl;
	unsigned bits;
	u128 key;           /* dst as a trie key */
	u128 skey;          /* src as a trie key (0 without `from`) */
	uint32_t iif, oif;  /* the kernel's flowi_iif / flowi_oif */
	uint32_t l3mdev;    /* flowi_l3mdev: the VRF device, 0 none */
	uint32_t l3table;   /* its table */
	uint32_t uid;
	uint8_t ds;         /* DS field (tos byte) */
	uint8_t rtos;       /* tos routes are matched with */
	uint32_t nh_oif;    /* the device paths must go through, 0 any */
	uint8_t skip_nh_oif;
	uint8_t input;
};

/* A table's answer. */
struct tres {
	const struct fib_alias *fa;
	const struct fib_leaf *leaf;
	int nh; /* first usable path */
};

static u128
key_of(const union fib_addr *a, int family)
{
	u128 k = 0;

	if (family == AF_INET)
		return ntohl(a->v4.s_addr);
	for (int i = 0; i < 16; i++)
		k = (k << 8) | a->b[i];
	return k;
}

static int
prefix_match(u128 a, u128 b, unsigned plen, unsigned bits)
{
	if (plen == 0)
		return 1;
	return ((a ^ b) >> (bits - plen)) == 0;
}

/* ------------------------------------------------------------ Step 0 */

/* l3mdev_master_ifindex: the device itself if it is a VRF, its master if
 * enslaved to one, else 0. */
static uint32_t
l3_master(const struct fib_policy *p, uint32_t ifindex, uint32_t *table)
{
	const struct fib_link *l = policy_link(p, ifindex);

	if (!l)
		return 0;
	if (l->vrf_table) {
		*table = l->vrf_table;
		return l->ifindex;
	}
	if (l->master) {
		const struct fib_link *m = policy_link(p, l->master);
		if (m && m->vrf_table) {
			*table = m->vrf_table;
			return m->ifindex;
		}
	}
	return 0;
}

static int
rctx_init(struct rctx *c, const struct fib *fib, const struct fib_policy *p,
	  const struct fib_flow *fl)
{
	c->fib = fib;
	c->p = p;
	c->fl = fl;
	c->bits = fl->family == AF_INET ? 32 : 128;
	c->key = key_of(&fl->dst, fl->family);
	c->skey = (fl->flags & FIB_FLOW_SRC) ? key_of(&fl->src, fl->family) : 0;
	c->input = (fl->flags & FIB_FLOW_IIF) != 0;
	c->iif = c->input ? fl->iif : POLICY_LOOPBACK;
	c->oif = (fl->flags & FIB_FLOW_OIF) ? fl->oif : 0;
	/* `ip route get` without uid: root for output, INVALID_UID for input */
	c->uid = (fl->flags & FIB_FLOW_UID) ? fl->uid : c->input ? UINT32_MAX : 0;
	c->ds = (fl->flags & FIB_FLOW_DSCP) ? (uint8_t)(fl->tos << 2) : fl->tos;
	c->rtos = fl->family == AF_INET ? c->ds & 0x1c : 0;
	c->l3mdev = c->l3table = 0;
	c->nh_oif = c->oif;
	c->skip_nh_oif = 0;
	if (fl->family == AF_INET6) {
		/* RT6_LOOKUP_F_IFACE: strict for multicast, link-local and
		 * loopback destinations (rt6_need_strict), input flows then
		 * through iif (ip6_route_input_lookup); an output flow with a
		 * source takes oif as a preference only (rt6_score_route,
		 * ip6_route_output_flags): no filter */
		int strict = fl->dst.b[0] == 0xff || (fl->dst.b[0] == 0xfe && (fl->dst.b[1] & 0xc0) == 0x80) ||
			     c->key == 1;

		if (c->input)
			c->nh_oif = strict ? c->iif : 0;
		else if ((fl->flags & FIB_FLOW_SRC) && !strict)
			c->skip_nh_oif = 1;
	}
	if (c->oif) {
		c->l3mdev = l3_master(p, c->oif, &c->l3table);
		/* a lookup from the VRF device itself takes any path */
		if (c->l3mdev == c->oif)
			c->skip_nh_oif = 1;
	} else if (c->input && c->iif > POLICY_LOOPBACK) {
		c->l3mdev = l3_master(p, c->iif, &c->l3table);
	}
	return 0;
}

/* ------------------------------------------------------------ Step 2 */

static int
port_match(uint16_t lo, uint16_t hi, uint16_t port)
{
	if (!lo && !hi)
		return 1;
	return port >= lo && port <= (hi ? hi : lo);
}

/* fib4_rule_match / fib6_rule_match */
static int
rule_match_family(const struct rctx *c, const struct fib_rule *r)
{
	const struct fib_flow *fl = c->fl;

	if (r->src_len) {
		/* IPv6 without a source does not match a `from` rule */
		if (fl->family == AF_INET6 && !(fl->flags & FIB_FLOW_SRC))
			return 0;
		if (!prefix_match(c->skey, key_of(&r->src, fl->family), r->src_len, c->bits))
			return 0;
	}
	if (r->dst_len && !prefix_match(c->key, key_of(&r->dst, fl->family), r->dst_len, c->bits))
		return 0;
	if (r->flags & FIB_RULE_DSCP) {
		if (r->tos != c->ds >> 2)
			return 0;
	} else if (fl->family == AF_INET) {
		if ((r->tos & 0xfc) && (r->tos & 0xfc) != (c->ds & 0x1c))
			return 0;
	} else if (r->tos && r->tos != (c->ds & 0xfc)) {
		return 0;
	}
	if (r->ipproto && r->ipproto != fl->ipproto)
		return 0;
	if (!port_match(r->sport_lo, r->sport_hi, fl->sport))
		return 0;
	if (!port_match(r->dport_lo, r->dport_hi, fl->dport))
		return 0;
	return 1;
}

/* fib_rule_match */
static int
rule_match(const struct rctx *c, const struct policy_rule *pr)
{
	const struct fib_rule *r = &pr->r;
	int ret = 0;

	if (pr->iif && pr->iif != c->iif)
		goto out;
	if (pr->oif && pr->oif != c->oif)
		goto out;
	if ((r->mark ^ c->fl->mark) & r->mark_mask)
		goto out;
	if (r->l3mdev && !c->l3mdev)
		goto out;
	if (r->uid_lo <= r->uid_hi && (c->uid < r->uid_lo || c->uid > r->uid_hi))
		goto out;
	ret = rule_match_family(c, r);
out:
	return (r->flags & FIB_RULE_INVERT) ? !ret : ret;
}

/* A path the kernel would use: not dead (link down), not link-down when
 * ignored, and through oif when the flow names one (fib_lookup_good_nhc).
 * IPv4 host-scope routes (local) never die with their link
 * (fib_sync_down_dev marks them dead only when the device goes away). */
static int
path_usable(const struct rctx *c, const struct fib_info *fi, const struct fib_nh *nh,
	    int oif_filter)
{
	if (!c->p->all_up && !(c->fl->family == AF_INET && fi->scope == RT_SCOPE_HOST)) {
		const struct fib_link *l = policy_link(c->p, nh->ifindex);
		if (l) {
			uint8_t ign = c->fl->family == AF_INET ? c->p->hash.ignore_linkdown4
							       : c->p->hash.ignore_linkdown6;
			if (!(l->flags & IFF_UP))
				return 0;
			if (ign && !(l->flags & IFF_LOWER_UP))
				return 0;
		}
	}
	if (oif_filter && c->nh_oif && !c->skip_nh_oif && nh->ifindex != c->nh_oif)
		return 0;
	return 1;
}

static int
route_error(unsigned type)
{
	switch (type) {
	case FIB_BLACKHOLE:
		return -EINVAL;
	case FIB_UNREACHABLE:
		return -EHOSTUNREACH;
	case FIB_PROHIBIT:
		return -EACCES;
	case FIB_THROW:
		return -EAGAIN;
	default:
		return 0;
	}
}

static struct fib_result
t_lookup(const struct rctx *c, uint32_t table)
{
	if (c->fl->family == AF_INET)
		return trie4_lookup(c->fib->t4, (uint32_t)c->key, table, c->rtos);
	return trie6_lookup(c->fib->t6, c->key, table, 0);
}

static struct fib_result
t_find_nth(const struct rctx *c, unsigned plen, uint32_t table, unsigned nth)
{
	u128 k = plen ? (c->key >> (c->bits - plen)) << (c->bits - plen) : 0;

	if (c->fl->family == AF_INET)
		return trie4_find_nth(c->fib->t4, (uint32_t)k, 32 - plen, table, c->rtos, nth);
	return trie6_find_nth(c->fib->t6, k, 128 - plen, table, 0, nth);
}

static int
first_usable(const struct rctx *c, const struct fib_info *fi)
{
	if (!fi->nh_count)
		return 0;
	for (int i = 0; i < fi->nh_count; i++)
		if (path_usable(c, fi, &fi->nh[i], 1))
			return i;
	return -1;
}

/*
 * fib_table_lookup: 0 with t filled, -EAGAIN for a miss or a throw, or
 * the route type's error (t filled).
 */
static int
table_lookup(const struct rctx *c, uint32_t table, struct tres *t)
{
	struct fib_result r;
	unsigned plen, nth = 0;

	/* the local table's filter spares the trie walk of most misses */
	if (table == POLICY_TABLE_LOCAL &&
	    !localf_maybe(&c->fib->localf[policy_fidx(c->fl->family)], c->fl->family, c->key))
		return -EAGAIN;
	r = t_lookup(c, table);

	if (!r.alias)
		return -EAGAIN;
	plen = c->bits - r.alias->slen;
	for (;;) {
		if (r.alias) {
			int err = route_error(r.alias->type), nh;

			t->fa = r.alias;
			t->leaf = r.leaf;
			t->nh = 0;
			/* IPv6 error routes go through the loopback: a
			 * strict oif other than lo passes them over
			 * (rt6_score_route); IPv4 returns them first */
			if (err && c->fl->family == AF_INET6 && c->nh_oif && !c->skip_nh_oif &&
			    c->nh_oif != POLICY_LOOPBACK) {
				nth++;
				r = t_find_nth(c, plen, table, nth);
				continue;
			}
			if (err)
				return err;
			nh = first_usable(c, fa_info(c->fib->ctx.ht, r.alias));
			if (nh >= 0) {
				t->nh = nh;
				return 0;
			}
			nth++;
		} else {
			if (plen == 0)
				return -EAGAIN;
			plen--;
			nth = 0;
		}
		r = t_find_nth(c, plen, table, nth);
	}
}

/* fib4_rule_suppress / fib6_rule_suppress */
static int
rule_suppress(const struct rctx *c, const struct fib_rule *r, const struct tres *t)
{
	unsigned plen = c->bits - t->fa->slen;
	const struct fib_info *fi = fa_info(c->fib->ctx.ht, t->fa);

	if ((int32_t)plen <= r->suppress_prefixlen)
		return 1;
	if (r->suppress_ifgroup != -1 && fi->nh_count) {
		const struct fib_link *l = policy_link(c->p, fi->nh[0].ifindex);
		if (l && (int32_t)l->group == r->suppress_ifgroup)
			return 1;
	}
	return 0;
}

static void
decision_route(const struct rctx *c, const struct tres *t, struct fib_decision *d)
{
	const struct fib_alias *fa = t->fa;

	d->type = fa->type;
	d->plen = (uint8_t)(c->bits - fa->slen);
	d->tos = fa->tos;
	d->table = fa->table;
	/* IPv4 without custom rules: the local table is merged into main
	 * (fib/policy_priv.h, custom_rules) */
	if (c->fl->family == AF_INET && d->table == POLICY_TABLE_LOCAL && !c->p->custom_rules)
		d->table = RT_TABLE_MAIN;
	d->info = fa_info(c->fib->ctx.ht, fa);
	d->npaths = d->info->nh_count;
	d->path = (uint8_t)t->nh;
	d->flags |= FIB_D_ROUTE;
	if (c->fl->family == AF_INET)
		trie4_leaf_key(t->leaf, &d->prefix);
	else
		trie6_leaf_key(t->leaf, &d->prefix);
}

/* fib_rules_lookup: 0 or a negative errno; d gets the rule and route. */
static int
rules_walk(const struct rctx *c, struct fib_decision *d, struct tres *t)
{
	const struct fib_policy *p = c->p;
	uint32_t i = 0;

	while (i < p->nrules) {
		const struct policy_rule *pr = &p->rules[i];
		const struct fib_rule *r = &pr->r;
		uint32_t table;
		int err;

		if (!rule_match(c, pr)) {
			i++;
			continue;
		}
		switch (r->action) {
		case FIB_RULE_GOTO:
			/* the target is evaluated itself: jump, do not step */
			if (pr->jump == POLICY_NOJUMP)
				i++;
			else
				i = pr->jump;
			continue;
		case FIB_RULE_NOP:
			i++;
			continue;
		case FIB_RULE_UNREACHABLE:
			err = -ENETUNREACH;
			break;
		case FIB_RULE_PROHIBIT:
			err = -EACCES;
			break;
		case FIB_RULE_BLACKHOLE:
			err = -EINVAL;
			break;
		default:
			table = r->l3mdev ? c->l3table : r->table;
			err = table_lookup(c, table, t);
			if (err == -EAGAIN || (!err && rule_suppress(c, r, t))) {
				i++;
				continue;
			}
			decision_route(c, t, d);
			break;
		}
		d->rule = r->priority;
		d->flags |= FIB_D_RULE;
		return err;
	}
	return -ENETUNREACH;
}

/* ------------------------------------------------------------ Step 3 */

/* fib_rebalance's upper bound of path i, -1 when the path is skipped */
static int64_t
upper_bound(const struct rctx *c, const struct fib_info *fi, int i, uint64_t *w, uint64_t total)
{
	unsigned weight;

	if (!path_usable(c, fi, &fi->nh[i], 0))
		return -1;
	weight = fi->nh[i].weight ? fi->nh[i].weight : 1;
	*w += weight;
	/* DIV_ROUND_CLOSEST_ULL(w << 31, total) - 1: the last is 2^31 - 1 */
	return (int64_t)(((*w << 31) + total / 2) / total) - 1;
}

static uint32_t nh_saddr4(const struct rctx *c, const struct fib_info *fi, int path);

/*
 * A resilient group (nexthop_select_path_res, both families): the bucket
 * hash % buckets holds the path, whatever its state; the kernel keeps
 * dead paths out of the buckets itself (the map is its bucket table, as
 * dumped). The hash is the one the kernel hands nexthop_select_path:
 * the flow's source with `from` or for input flows, 0 otherwise.
 */
static int
select_res(const struct rctx *c, const struct fib_info *fi)
{
	union fib_addr zero;
	uint32_t hash;

	memset(&zero, 0, sizeof(zero));
	hash = fib_mphash(&c->p->hash, c->fl,
			  (c->fl->flags & FIB_FLOW_SRC) ? &c->fl->src : &zero);
	return fib_info_res_map(fi)[hash % fi->res_buckets];
}

/*
 * fib_select_multipath (Linux 6.18): each live path scores 1 when the hash
 * reaches its upper bound, plus 2 when its nh_saddr (inet_select_addr of
 * its device and gateway, prefsrc not considered) is the flow's source or
 * the flow has none; the first of the highest score wins. Only IPv4
 * output flows with `from` hand the kernel a source (fib/mphash.h):
 * input flows, IPv6 and next-hop groups (nexthop_path_fib_result) take
 * the plain rule. The hashed saddr is the
 * flow's source with `from` or for input flows, 0 otherwise.
 */
static int
select_multipath(const struct rctx *c, const struct fib_info *fi, int cur)
{
	uint64_t total = 0, w = 0;
	union fib_addr zero;
	uint32_t hash, saddr = 0;
	int sel = cur, best = -1;

	if (fi->res_buckets)
		return select_res(c, fi);
	for (int i = 0; i < fi->nh_count; i++)
		if (path_usable(c, fi, &fi->nh[i], 0))
			total += fi->nh[i].weight ? fi->nh[i].weight : 1;
	if (!total)
		return cur;
	memset(&zero, 0, sizeof(zero));
	hash = fib_mphash(&c->p->hash, c->fl,
			  (c->fl->flags & FIB_FLOW_SRC) ? &c->fl->src : &zero);
	/* next-hop objects (nhid) go to nexthop_select_path: no score */
	if (c->fl->family == AF_INET && !c->input && (c->fl->flags & FIB_FLOW_SRC) && !fi->nh_id)
		saddr = c->fl->src.v4.s_addr;
	for (int i = 0; i < fi->nh_count; i++) {
		int64_t ub = upper_bound(c, fi, i, &w, total);
		int score = 0;

		if (ub < 0)
			continue;
		if ((int64_t)hash <= ub)
			score += 1;
		if (!saddr || nh_saddr4(c, fi, i) == saddr)
			score += 2;
		if (score > best) {
			best = score;
			sel = i;
		}
		if (score == 3)
			break;
	}
	return sel;
}

/* ------------------------------------------------------------ Step 4 */

static uint32_t
inet_mask(unsigned plen)
{
	return plen ? 0xffffffffu << (32 - plen) : 0;
}

/* in_dev_select_addr plus inet_select_addr's gateway preference */
static int
dev_select_addr4(const struct fib_policy *p, uint32_t ifindex, uint32_t dst, int scope,
		 uint32_t *out)
{
	size_t n;
	const struct fib_ifaddr *a = policy_addrs(p, ifindex, &n);
	uint32_t first = 0;
	int have = 0;

	for (size_t i = 0; i < n; i++) {
		int ascope = a[i].scope < RT_SCOPE_HOST ? a[i].scope : RT_SCOPE_HOST;
		uint32_t local = ntohl(a[i].addr.v4.s_addr);

		if (a[i].flags & IFA_F_SECONDARY)
			continue;
		if (ascope > scope)
			continue;
		if (!dst || ((local ^ dst) & inet_mask(a[i].plen)) == 0) {
			*out = local;
			return 1;
		}
		if (!have) {
			first = local;
			have = 1;
		}
	}
	if (have)
		*out = first;
	return have;
}

uint32_t
policy_dev_only_addr4(const struct fib_policy *p, uint32_t ifindex, int scope)
{
	size_t n, fit = 0;
	const struct fib_ifaddr *a = policy_addrs(p, ifindex, &n);
	uint32_t addr = 0;

	/* the same filter as dev_select_addr4: with one address through it,
	 * the gateway's subnet test cannot change the pick */
	for (size_t i = 0; i < n; i++) {
		int ascope = a[i].scope < RT_SCOPE_HOST ? a[i].scope : RT_SCOPE_HOST;

		if ((a[i].flags & IFA_F_SECONDARY) || ascope > scope)
			continue;
		addr = ntohl(a[i].addr.v4.s_addr);
		fit++;
	}
	return fit == 1 ? addr : 0;
}

/* inet_select_addr: the device, then its VRF, then every device of the
 * same VRF in ifindex order. */
static uint32_t
inet_select_addr(const struct fib_policy *p, uint32_t ifindex, uint32_t dst, int scope)
{
	uint32_t addr, table = 0, master;

	if (dev_select_addr4(p, ifindex, dst, scope, &addr))
		return addr;
	master = l3_master(p, ifindex, &table);
	if (master && master != ifindex && dev_select_addr4(p, master, 0, scope, &addr))
		return addr;
	if (!master && (scope == RT_SCOPE_UNIVERSE || scope >= RT_SCOPE_LINK))
		return p->fallback4[scope == RT_SCOPE_UNIVERSE ? 0 : scope == RT_SCOPE_LINK ? 1 : 2];
	return policy_select_fallback4(p, master, scope);
}

uint32_t
policy_select_fallback4(const struct fib_policy *p, uint32_t master, int scope)
{
	uint32_t addr;

	for (uint32_t i = 0; i < p->naddrs; i++) {
		uint32_t dev = p->addrs[i].ifindex, t2 = 0;

		if (i && p->addrs[i - 1].ifindex == dev)
			continue; /* one pass per device */
		if (l3_master(p, dev, &t2) != master)
			continue;
		if (dev_select_addr4(p, dev, 0, scope, &addr))
			return addr;
	}
	return 0;
}

/* select_source4 past the snapshot's per-device answer */
static __attribute__((noinline)) int
select_source4_slow(const struct fib_policy *p, const struct fib_info *fi, int path,
		    union fib_addr *src)
{
	const struct fib_nh *nh = &fi->nh[path];
	uint32_t gw = 0, a;

	if (nh->gw_family == AF_INET)
		gw = ntohl(nh->gw.v4.s_addr);
	a = inet_select_addr(p, nh->ifindex, gw, fi->scope);
	if (!a)
		return 0;
	memset(src, 0, sizeof(*src));
	src->v4.s_addr = htonl(a);
	return 1;
}

/* fib_result_prefsrc of path `path` (the kernel's nh_saddr) */
static inline int
select_source4(const struct fib_policy *p, const struct fib_info *fi, int path,
	       union fib_addr *src)
{
	const struct fib_nh *nh;
	uint32_t a;

	if (fi->prefsrc_set) {
		*src = fi->prefsrc;
		return 1;
	}
	if (!fi->nh_count)
		return 0;
	nh = &fi->nh[path];
	if (nh->ifindex < p->nsrc4 && (fi->scope == RT_SCOPE_UNIVERSE || fi->scope == RT_SCOPE_LINK) &&
	    (a = p->src4[nh->ifindex][fi->scope == RT_SCOPE_LINK]) != 0) {
		memset(src, 0, sizeof(*src));
		src->v4.s_addr = a;
		return 1;
	}
	return select_source4_slow(p, fi, path, src);
}

/* the kernel's nh_saddr of path `path` (fib_info_update_nhc_saddr): the
 * address inet_select_addr picks for its device and gateway, network
 * order, 0 none */
static uint32_t
nh_saddr4(const struct rctx *c, const struct fib_info *fi, int path)
{
	const struct fib_nh *nh = &fi->nh[path];
	uint32_t gw = nh->gw_family == AF_INET ? ntohl(nh->gw.v4.s_addr) : 0;

	return htonl(inet_select_addr(c->p, nh->ifindex, gw, fi->scope));
}

/* IPv6 address scope as ipv6_addr_scope: 1 node (loopback), 2 link,
 * 5 site, 0xe global; multicast carries its own. */
static int
scope6(const union fib_addr *a)
{
	static const uint8_t loop[16] = { [15] = 1 };

	if (a->b[0] == 0xff)
		return a->b[1] & 0x0f;
	if (memcmp(a->b, loop, 16) == 0)
		return 1;
	if (a->b[0] == 0xfe && (a->b[1] & 0xc0) == 0x80)
		return 2;
	if (a->b[0] == 0xfe && (a->b[1] & 0xc0) == 0xc0)
		return 5;
	return 0xe;
}

/* RFC 6724 default policy table label (the kernel's ip6addrlbl_init_table) */
static int
label6(const union fib_addr *a)
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t loop[16] = { [15] = 1 };

	if (memcmp(a->b, loop, 16) == 0)
		return 0;
	if (memcmp(a->b, v4map, 12) == 0)
		return 4;
	if (a->b[0] == 0x20 && a->b[1] == 0x02)
		return 2;
	if (a->b[0] == 0x20 && a->b[1] == 0x01 && a->b[2] == 0 && a->b[3] == 0)
		return 5;
	if ((a->b[0] & 0xfe) == 0xfc)
		return 13;
	if (a->b[0] == 0xfe && (a->b[1] & 0xc0) == 0xc0)
		return 11;
	if (a->b[0] == 0x3f && a->b[1] == 0xfe)
		return 12;
	{
		static const uint8_t zero12[12];
		if (memcmp(a->b, zero12, 12) == 0)
			return 3; /* ::/96 */
	}
	return 1;
}

static int
common_prefix6(const union fib_addr *a, const union fib_addr *b)
{
	int n = 0;

	for (int i = 0; i < 16; i++) {
		uint8_t x = a->b[i] ^ b->b[i];
		if (x)
			return n + __builtin_clz((unsigned)x) - 24;
		n += 8;
	}
	return 128;
}

/*
 * ipv6_dev_get_saddr without neighbour state: candidates on the output
 * device's VRF domain, not tentative; better means, in order, the same
 * address (rule 1), the smallest scope that still reaches dst (rule 2),
 * not deprecated (rule 3), on the output device (rule 5), the same label
 * (rule 6), the longest common prefix (rule 8). Ties keep the first.
 */
static int
select_source6(const struct rctx *c, uint32_t oif, union fib_addr *src)
{
	const struct fib_policy *p = c->p;
	const union fib_addr *dst = &c->fl->dst;
	int dscope = scope6(dst), dlabel = label6(dst);
	uint32_t t = 0, master = l3_master(p, oif, &t);
	int best = -1, bs[6] = { 0 };

	for (uint32_t i = 0; i < p->naddrs; i++) {
		const struct fib_ifaddr *a = &p->addrs[i];
		uint32_t t2 = 0;
		int s[6], as;

		if (a->flags & IFA_F_TENTATIVE && !(a->flags & IFA_F_OPTIMISTIC))
			continue;
		if (l3_master(p, a->ifindex, &t2) != master)
			continue;
		as = scope6(&a->addr);
		/* link-local and narrower destinations: only the output device */
		if (dscope <= 2 && a->ifindex != oif)
			continue;
		s[0] = memcmp(a->addr.b, dst->b, 16) == 0;
		s[1] = as >= dscope ? 256 - as : as - 256; /* smallest sufficient scope */
		s[2] = !(a->flags & IFA_F_DEPRECATED);
		s[3] = a->ifindex == oif;
		s[4] = label6(&a->addr) == dlabel;
		s[5] = common_prefix6(&a->addr, dst);
		if (best >= 0) {
			int k;
			for (k = 0; k < 6 && s[k] == bs[k]; k++)
				;
			if (k == 6 || s[k] < bs[k])
				continue;
		}
		best = (int)i;
		memcpy(bs, s, sizeof(bs));
	}
	if (best < 0)
		return 0;
	*src = p->addrs[best].addr;
	return 1;
}

static void
decision_source(const struct rctx *c, struct fib_decision *d)
{
	const struct fib_info *fi = d->info;

	if (c->input || (c->fl->flags & FIB_FLOW_FIBMATCH))
		return;
	/* IPv4 keeps a given source; IPv6 prints the preferred source of
	 * the route even with `from` (rt6_fill_node: ip6_route_get_saddr) */
	if ((c->fl->flags & FIB_FLOW_SRC) && c->fl->family == AF_INET) {
		d->src = c->fl->src;
		d->flags |= FIB_D_SRC;
		return;
	}
	if (!fi)
		return;
	if (d->type == FIB_LOCAL && c->fl->family == AF_INET) {
		/* a local destination is its own source */
		d->src = fi->prefsrc_set ? fi->prefsrc : c->fl->dst;
		d->flags |= FIB_D_SRC;
		return;
	}
	if (c->fl->family == AF_INET) {
		if (select_source4(c->p, fi, d->path, &d->src))
			d->flags |= FIB_D_SRC;
		return;
	}
	if (fi->prefsrc_set) {
		d->src = fi->prefsrc;
		d->flags |= FIB_D_SRC;
	} else if (d->type == FIB_LOCAL) {
		d->src = c->fl->dst;
		d->flags |= FIB_D_SRC;
	} else if (select_source6(c, fi->nh_count ? fi->nh[fi->nh_id ? 0 : d->path].ifindex : 0,
				  &d->src)) {
		/* a next-hop object's source comes from its first path's device
		 * whichever path the hash chose (ip6_route_get_saddr:
		 * fib6_info_nh_dev, nexthop_fib6_nh takes the group's first) */
		d->flags |= FIB_D_SRC;
	}
}

/* ------------------------------------------------------ the resolution */

static void
decision_init(struct fib_decision *d, const struct fib_flow *fl)
{
	memset(d, 0, sizeof(*d));
	d->family = fl->family;
}

/* IPv4 fib_select_path: with oif set, the path that matched, no hash */
static int
multipath_wanted(const struct rctx *c)
{
	return c->fl->family == AF_INET6 || c->input || !c->oif;
}

/*
 * IPv6: rt6_select then fib6_select_path (ip6_pol_route, have_oif_match
 * false). rt6_select takes the first live sibling through oif
 * (rt6_score_route scores it higher), else the first live one; then, as
 * Linux 6.15 and later do ("ipv6: Start path selection from the first
 * nexthop"), the hash picks by threshold from the first sibling, in
 * order: the first whose upper bound the hash reaches, unless a strict
 * lookup refuses its device (rt6_score_route < 0), which keeps
 * rt6_select's match. An oif without strictness (an output flow with a
 * source) is thus no preference at all: checked against Linux 6.18.
 */
static int
select_multipath6(const struct rctx *c, const struct fib_info *fi, int cur)
{
	uint32_t dev = c->input ? 0 : c->oif, hash;
	uint64_t total = 0, w = 0;
	int32_t ub[256];
	union fib_addr zero;
	int m = -1;

	if (fi->res_buckets) /* fib6_select_path hands next-hop objects over at once */
		return select_res(c, fi);
	for (int i = 0; i < fi->nh_count; i++)
		if (path_usable(c, fi, &fi->nh[i], 0))
			total += fi->nh[i].weight ? fi->nh[i].weight : 1;
	if (!total)
		return cur;
	for (int i = 0; i < fi->nh_count; i++) {
		ub[i] = (int32_t)upper_bound(c, fi, i, &w, total);
		if (ub[i] < 0 || !path_usable(c, fi, &fi->nh[i], 1))
			continue;
		if (m < 0 || (dev && fi->nh[i].ifindex == dev && fi->nh[m].ifindex != dev))
			m = i;
	}
	if (m < 0)
		return cur;
	memset(&zero, 0, sizeof(zero));
	hash = fib_mphash(&c->p->hash, c->fl,
			  (c->fl->flags & FIB_FLOW_SRC) ? &c->fl->src : &zero);
	for (int i = 0; i < fi->nh_count; i++) {
		if (ub[i] < 0 || hash > (uint32_t)ub[i])
			continue;
		if (!path_usable(c, fi, &fi->nh[i], 1))
			break;
		return i;
	}
	return m;
}

/* Step 3 and 4 for a decided route, and the input/oif special cases. */
static int
resolve_finish(const struct rctx *c, int err, struct fib_decision *d)
{
	const struct fib_flow *fl = c->fl;

	if (err && c->oif && !c->input && fl->family == AF_INET && !c->l3mdev) {
		/* ip_route_output_key_hash_rcu: "routing tables are wrong,
		 * assume the destination is on link" */
		uint32_t a;

		memset(d, 0, sizeof(*d));
		d->family = fl->family;
		d->type = FIB_UNICAST;
		d->table = RT_TABLE_MAIN;
		if (fl->flags & FIB_FLOW_SRC) {
			d->src = fl->src;
			d->flags |= FIB_D_SRC;
		} else if ((a = inet_select_addr(c->p, c->oif, 0, RT_SCOPE_LINK)) != 0) {
			d->src.v4.s_addr = htonl(a);
			d->flags |= FIB_D_SRC;
		}
		return 0;
	}
	if (c->input && !(fl->family == AF_INET ? c->p->hash.forwarding4 : c->p->hash.forwarding6) &&
	    (err || d->type != FIB_LOCAL)) {
		/* ip_route_input_slow: a host does not forward */
		err = -EHOSTUNREACH;
	}
	if (err) {
		d->error = (uint8_t)-err;
		return err;
	}
	if (d->info && d->npaths > 1 && d->type == FIB_UNICAST && !(fl->flags & FIB_FLOW_FIBMATCH) &&
	    multipath_wanted(c))
		d->path = (uint8_t)(fl->family == AF_INET6 ? select_multipath6(c, d->info, d->path)
							   : select_multipath(c, d->info, d->path));
	decision_source(c, d);
	return 0;
}

/* ip_route_output_key_hash_rcu's checks of a given IPv4 source: not
 * multicast, limited broadcast or 0.0.0.0/8 (EINVAL), and an address of
 * this host (__ip_dev_find, else ENETUNREACH) when the FIB knows the
 * host's addresses. IPv6 checks nothing. */
static int
source_check4(const struct rctx *c)
{
	uint32_t s = ntohl(c->fl->src.v4.s_addr);

	if ((s >> 28) == 0xe || s == 0xffffffffu || (s >> 24) == 0)
		return -EINVAL;
	/* a FIB told no addresses (a bare libfib user, the unit tests)
	 * cannot check: as a FIB without links checks no oif */
	if (!c->p->naddrs)
		return 0;
	for (uint32_t i = 0; i < c->p->naddrs; i++)
		if (c->p->addrs[i].addr.v4.s_addr == c->fl->src.v4.s_addr)
			return 0;
	return -ENETUNREACH;
}

/* ip_route_input_slow's martians, before any lookup (EINVAL):
 * multicast, limited broadcast, 0.0.0.0/8 or loopback sources, and
 * 0.0.0.0/8 or loopback destinations (route_localnet is not modelled:
 * fibd reads no per-device sysctls). A limited broadcast destination and
 * rp_filter are not reproduced either. */
static int
martian_input4(const struct rctx *c)
{
	uint32_t s = ntohl(c->fl->src.v4.s_addr), d = (uint32_t)c->key;

	if ((s >> 28) == 0xe || s == 0xffffffffu)
		return -EINVAL;
	if ((s >> 24) == 0 || (s >> 24) == 127)
		return -EINVAL;
	if ((d >> 24) == 0 || (d >> 24) == 127)
		return -EINVAL;
	return 0;
}

static __attribute__((noinline)) int
resolve_one(const struct fib *fib, const struct fib_policy *p, const struct fib_flow *fl,
	    struct fib_decision *d)
{
	struct rctx c;
	struct tres t;
	int err;

	decision_init(d, fl);
	rctx_init(&c, fib, p, fl);
	if (fl->family == AF_INET && !c.input && (fl->flags & FIB_FLOW_SRC) &&
	    (err = source_check4(&c)) != 0) {
		d->error = (uint8_t)-err;
		return err;
	}
	if (fl->family == AF_INET && c.input && (err = martian_input4(&c)) != 0) {
		d->error = (uint8_t)-err;
		return err;
	}
	if (c.oif && p->nlinks) {
		const struct fib_link *l = policy_link(p, c.oif);
		if (!l || !(l->flags & IFF_UP)) {
			d->error = l ? ENETUNREACH : ENODEV;
			return -d->error;
		}
	}
	err = rules_walk(&c, d, &t);
	return resolve_finish(&c, err, d);
}

/*
 * Step 1: the default rules, no oif, legacy tos 0, dst not in the local
 * table: the answer is main's. 1 when d is the answer, 0 to walk. The
 * cases other than resolve_fast's common one.
 */
static __attribute__((noinline)) int
resolve_fast_rest(const struct fib *fib, const struct fib_policy *p, const struct fib_flow *fl,
		  struct fib_result res, struct fib_decision *d)
{
	const struct fib_alias *fa = res.alias;
	const struct fib_info *fi;
	struct rctx c;

	if (!fa) {
		/* main missed: with the default table empty too, the rules
		 * have nothing left (IPv6 has no default rule) */
		if (fl->family == AF_INET &&
		    __atomic_load_n(&fib->localf[0].ndefault, __ATOMIC_ACQUIRE))
			return 0;
		decision_init(d, fl);
		d->error = ENETUNREACH;
		return 1;
	}
	if (fa->type != FIB_UNICAST)
		return 0;
	fi = fa_info(fib->ctx.ht, fa);
	if (!p->all_up && fi->nh_count)
		return 0;
	decision_init(d, fl);
	if (fl->family == AF_INET && (fl->flags & FIB_FLOW_SRC) && p->naddrs) {
		int err;

		rctx_init(&c, fib, p, fl);
		if ((err = source_check4(&c)) != 0) {
			d->error = (uint8_t)-err;
			return 1;
		}
	}
	d->rule = 32766;
	d->flags = FIB_D_RULE;
	d->type = FIB_UNICAST;
	d->plen = (uint8_t)((fl->family == AF_INET ? 32 : 128) - fa->slen);
	d->tos = fa->tos;
	d->table = fa->table;
	d->info = fi;
	d->npaths = fi->nh_count;
	d->flags |= FIB_D_ROUTE;
	if (fl->family == AF_INET)
		trie4_leaf_key(res.leaf, &d->prefix);
	else
		trie6_leaf_key(res.leaf, &d->prefix);
	rctx_init(&c, fib, p, fl);
	resolve_finish(&c, 0, d);
	return 1;
}

/*
 * The common answer inline: an IPv4 output flow without a source, a
 * unicast route of at most one live path; then only the source is left,
 * and the snapshot has it per device (select_source4).
 */
static inline int
resolve_fast(const struct fib *fib, const struct fib_policy *p, const struct fib_flow *fl,
	     struct fib_result res, struct fib_decision *d)
{
	const struct fib_alias *fa = res.alias;
	const struct fib_info *fi;

	if (!fa || fa->type != FIB_UNICAST || fl->family != AF_INET || (fl->flags & FIB_FLOW_SRC))
		return resolve_fast_rest(fib, p, fl, res, d);
	fi = fa_info(fib->ctx.ht, fa);
	if (fi->nh_count > 1 || (!p->all_up && fi->nh_count))
		return resolve_fast_rest(fib, p, fl, res, d);
	decision_init(d, fl);
	d->rule = 32766;
	d->flags = FIB_D_RULE | FIB_D_ROUTE;
	d->type = FIB_UNICAST;
	d->plen = (uint8_t)(32 - fa->slen);
	d->tos = fa->tos;
	d->table = fa->table;
	d->info = fi;
	d->npaths = fi->nh_count;
	trie4_leaf_key(res.leaf, &d->prefix);
	if (select_source4(p, fi, 0, &d->src))
		d->flags |= FIB_D_SRC;
	return 1;
}

static inline int
fast_eligible(const struct fib *fib, const struct fib_policy *p, const struct fib_flow *fl,
	      u128 *key)
{
	int fi = policy_fidx(fl->family);

	if (!p->is_default || (fl->flags & (FIB_FLOW_OIF | FIB_FLOW_FIBMATCH)))
		return 0;
	if (fl->family == AF_INET && (((fl->flags & FIB_FLOW_DSCP) ? fl->tos << 2 : fl->tos) & 0x1c))
		return 0;
	if (fl->flags & FIB_FLOW_IIF)
		return 0; /* input flows: forwarding and iif checks */
	*key = key_of(&fl->dst, fl->family);
	return !localf_maybe(&fib->localf[fi], fl->family, *key);
}

int
fib_resolve_rcu(const struct fib *fib, const struct fib_flow *fl, struct fib_decision *d)
{
	const struct fib_policy *p;
	u128 key;

	if (fl->family != AF_INET && fl->family != AF_INET6) {
		memset(d, 0, sizeof(*d));
		d->family = fl->family;
		d->error = EINVAL;
		return -EINVAL;
	}
	p = rcu_dereference(fib->policy[policy_fidx(fl->family)]);
	if (fast_eligible(fib, p, fl, &key)) {
		struct fib_result res = fl->family == AF_INET
						? trie4_lookup(fib->t4, (uint32_t)key, RT_TABLE_MAIN, 0)
						: trie6_lookup(fib->t6, key, RT_TABLE_MAIN, 0);
		if (resolve_fast(fib, p, fl, res, d))
			return -d->error;
	}
	return resolve_one(fib, p, fl, d);
}

void
fib_resolve_batch_rcu(const struct fib *fib, const struct fib_flow *fl, struct fib_decision *d,
		      size_t n)
{
	enum { CHUNK = 64 };
	const struct fib_policy *p[2] = { rcu_dereference(fib->policy[0]),
					  rcu_dereference(fib->policy[1]) };
	struct fib_result res4[CHUNK], res6[CHUNK];
	uint32_t k4[CHUNK];
	trie6_key k6[CHUNK];
	int slot[CHUNK];

	for (size_t base = 0; base < n; base += CHUNK) {
		size_t m = n - base < CHUNK ? n - base : CHUNK;
		int n4 = 0, n6 = 0;

		/* the fast-path flows of each family go through the batch
		 * lookups of main; the others are resolved one by one */
		for (size_t i = 0; i < m; i++) {
			const struct fib_flow *f = &fl[base + i];
			u128 key;

			slot[i] = -1;
			if (f->family != AF_INET && f->family != AF_INET6)
				continue;
			if (!fast_eligible(fib, p[policy_fidx(f->family)], f, &key))
				continue;
			if (f->family == AF_INET) {
				slot[i] = n4;
				k4[n4++] = (uint32_t)key;
			} else {
				slot[i] = n6;
				k6[n6++] = key;
			}
		}
		if (n4)
			trie4_lookup_batch(fib->t4, k4, RT_TABLE_MAIN, res4, (size_t)n4);
		if (n6)
			trie6_lookup_batch(fib->t6, k6, RT_TABLE_MAIN, res6, (size_t)n6);
		/* the answers read the matched routes: fetch them for the whole
		 * chunk first (alias and leaf, then the attribute set behind
		 * each alias) instead of one miss per flow */
		for (int i = 0; i < n4; i++) {
			__builtin_prefetch(res4[i].alias);
			__builtin_prefetch(res4[i].leaf);
		}
		for (int i = 0; i < n6; i++) {
			__builtin_prefetch(res6[i].alias);
			__builtin_prefetch(res6[i].leaf);
		}
		for (int i = 0; i < n4; i++)
			if (res4[i].alias)
				__builtin_prefetch(fa_info(fib->ctx.ht, res4[i].alias));
		for (int i = 0; i < n6; i++)
			if (res6[i].alias)
				__builtin_prefetch(fa_info(fib->ctx.ht, res6[i].alias));
		for (size_t i = 0; i < m; i++) {
			const struct fib_flow *f = &fl[base + i];

			if (slot[i] >= 0 &&
			    resolve_fast(fib, p[policy_fidx(f->family)], f,
					 f->family == AF_INET ? res4[slot[i]] : res6[slot[i]],
					 &d[base + i]))
				continue;
			fib_resolve_rcu(fib, f, &d[base + i]);
		}
	}
}
