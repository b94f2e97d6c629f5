/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the policy: rules, links, addresses, hash settings; staged, then
 * published as one immutable snapshot per family
 *
 * The writer's edits go to a private staging copy (plain arrays, kept in
 * the order the snapshot wants: rules by priority, links by ifindex).
 * fib_policy_publish() compiles each family's snapshot into one block of
 * pool memory (fib/policy_priv.h), stores its pointer once with
 * rcu_assign_pointer and retires the old block through the FIB's batched
 * reclamation (fib/reclaim.h), as the trie retires its nodes. A reader
 * loads the pointer once per resolution; what it sees never changes.
 *
 * Compiling resolves what the kernel resolves when a rule is added or a
 * device appears: a rule's iif/oif names to ifindexes (a name without a
 * device matches nothing, as the kernel's detached rules; `lo` is the
 * loopback even before its link is known), a goto's target to the first
 * rule of that priority (net/core/fib_rules.c keeps the same ctarget).
 *
 * Also here: the local-table filter of the resolution's fast path, kept
 * by fib.c's route calls. Per family, a 4096-bit set of hashed /24s (IPv4)
 * or /64s (IPv6) of the local table's prefixes, plus a few slots for
 * shorter ones (127.0.0.0/8); counts live in the staging copy, so a delete
 * clears a bit only when its last route is gone. Readers test bits that
 * the writer sets before the route is in the trie and clears after it is
 * out: a lookup racing a change sees the old or the new answer.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fib/fib.h"
#include "fib/fib_priv.h"
#include "fib/policy.h"
#include "fib/policy_priv.h"
#include "fib/pool.h"
#include "fib/rcu.h"
#include "fib/reclaim.h"

struct policy_stage {
	struct fib_rule *rules[2];
	size_t nrules[2], caprules[2];
	struct fib_link *links;
	size_t nlinks, caplinks;
	struct fib_ifaddr *addrs;
	size_t naddrs, capaddrs;
	struct fib_mp_hash hash;
	int dirty;
	/* IPv4 rules other than the defaults were published once: the
	 * kernel's fib_has_custom_rules, never reset */
	uint8_t custom4;
	/* the local-table filter's counts (writer only) */
	uint32_t lcount[2][LOCALF_BITS];
	uint32_t tcount[2][256];
};

/* ------------------------------------------------------------ helpers */

static int
grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *p;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static unsigned
addr_bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

static int
rule_equal(const struct fib_rule *a, const struct fib_rule *b, int with_protocol)
{
	return a->family == b->family && a->action == b->action && a->src_len == b->src_len &&
	       a->dst_len == b->dst_len && a->tos == b->tos && a->ipproto == b->ipproto &&
	       a->l3mdev == b->l3mdev && a->flags == b->flags && a->priority == b->priority &&
	       a->table == b->table && a->goto_prio == b->goto_prio && a->mark == b->mark &&
	       a->mark_mask == b->mark_mask && a->suppress_prefixlen == b->suppress_prefixlen &&
	       a->suppress_ifgroup == b->suppress_ifgroup && a->uid_lo == b->uid_lo &&
	       a->uid_hi == b->uid_hi && a->sport_lo == b->sport_lo && a->sport_hi == b->sport_hi &&
	       a->dport_lo == b->dport_lo && a->dport_hi == b->dport_hi &&
	       (!with_protocol || a->protocol == b->protocol) &&
	       strncmp(a->iifname, b->iifname, IF_NAMESIZE) == 0 &&
	       strncmp(a->oifname, b->oifname, IF_NAMESIZE) == 0 &&
	       memcmp(&a->src, &b->src, sizeof(a->src)) == 0 &&
	       memcmp(&a->dst, &b->dst, sizeof(a->dst)) == 0;
}

void
fib_rule_init(struct fib_rule *r, int family)
{
	memset(r, 0, sizeof(*r));
	r->family = (uint8_t)family;
	r->action = FIB_RULE_TO_TBL;
	r->table = 254; /* RT_TABLE_MAIN */
	r->suppress_prefixlen = -1;
	r->suppress_ifgroup = -1;
	r->uid_lo = 1;
	r->uid_hi = 0;
}

/* The kernel's checks in fib_nl2rule and fib4/fib6_rule_configure. */
static int
rule_valid(const struct fib_rule *r)
{
	unsigned bits;

	if (r->family != AF_INET && r->family != AF_INET6)
		return 0;
	bits = addr_bits(r->family);
	if (r->src_len > bits || r->dst_len > bits)
		return 0;
	switch (r->action) {
	case FIB_RULE_TO_TBL:
		if (r->l3mdev ? r->table != 0 : r->table == 0)
			return 0;
		break;
	case FIB_RULE_GOTO:
		if (r->goto_prio <= r->priority)
			return 0;
		/* fall through */
	case FIB_RULE_NOP:
	case FIB_RULE_BLACKHOLE:
	case FIB_RULE_UNREACHABLE:
	case FIB_RULE_PROHIBIT:
		if (r->l3mdev)
			return 0;
		break;
	default:
		return 0;
	}
	if (r->flags & ~(uint32_t)(FIB_RULE_INVERT | FIB_RULE_DSCP))
		return 0;
	if (r->flags & FIB_RULE_DSCP) {
		if (r->tos > 63)
			return 0;
	} else if (r->family == AF_INET && (r->tos & ~0x1e)) {
		return 0; /* IPTOS_TOS_MASK */
	}
	if (r->suppress_prefixlen < -1 || r->suppress_prefixlen > (int32_t)bits)
		return 0;
	if ((r->sport_hi && r->sport_lo > r->sport_hi) || (r->dport_hi && r->dport_lo > r->dport_hi))
		return 0;
	if (memchr(r->iifname, 0, IF_NAMESIZE) == NULL || memchr(r->oifname, 0, IF_NAMESIZE) == NULL)
		return 0;
	return 1;
}

/* ------------------------------------------------------------- rules */

int
fib_rule_add(struct fib *fib, const struct fib_rule *r)
{
	struct policy_stage *ps = fib->ps;
	int f;
	size_t at, n;

	if (!rule_valid(r))
		return -EINVAL;
	f = policy_fidx(r->family);
	n = ps->nrules[f];
	for (size_t i = 0; i < n; i++)
		if (rule_equal(&ps->rules[f][i], r, 1))
			return -EEXIST;
	if (grow((void **)&ps->rules[f], &ps->caprules[f], n, sizeof(*r)))
		return -ENOMEM;
	for (at = 0; at < n && ps->rules[f][at].priority <= r->priority; at++)
		;
	memmove(&ps->rules[f][at + 1], &ps->rules[f][at], (n - at) * sizeof(*r));
	ps->rules[f][at] = *r;
	ps->nrules[f]++;
	ps->dirty = 1;
	return 0;
}

int
fib_rule_del(struct fib *fib, const struct fib_rule *r)
{
	struct policy_stage *ps = fib->ps;
	int f;

	if (r->family != AF_INET && r->family != AF_INET6)
		return -EINVAL;
	f = policy_fidx(r->family);
	for (size_t i = 0; i < ps->nrules[f]; i++) {
		if (!rule_equal(&ps->rules[f][i], r, 1))
			continue;
		memmove(&ps->rules[f][i], &ps->rules[f][i + 1],
			(ps->nrules[f] - i - 1) * sizeof(*r));
		ps->nrules[f]--;
		ps->dirty = 1;
		return 0;
	}
	return -ENOENT;
}

void
fib_rule_flush(struct fib *fib, int family)
{
	struct policy_stage *ps = fib->ps;

	if (family == AF_INET || family == AF_UNSPEC)
		ps->nrules[0] = 0;
	if (family == AF_INET6 || family == AF_UNSPEC)
		ps->nrules[1] = 0;
	ps->dirty = 1;
}

/* ------------------------------------------------- links and addresses */

int
fib_link_set(struct fib *fib, const struct fib_link *l)
{
	struct policy_stage *ps = fib->ps;
	size_t at;

	if (!l->ifindex || l->ifindex == POLICY_NOIF || !memchr(l->name, 0, IF_NAMESIZE))
		return -EINVAL;
	for (at = 0; at < ps->nlinks && ps->links[at].ifindex < l->ifindex; at++)
		;
	if (at < ps->nlinks && ps->links[at].ifindex == l->ifindex) {
		ps->links[at] = *l;
		ps->dirty = 1;
		return 0;
	}
	if (grow((void **)&ps->links, &ps->caplinks, ps->nlinks, sizeof(*l)))
		return -ENOMEM;
	memmove(&ps->links[at + 1], &ps->links[at], (ps->nlinks - at) * sizeof(*l));
	ps->links[at] = *l;
	ps->nlinks++;
	ps->dirty = 1;
	return 0;
}

int
fib_link_del(struct fib *fib, uint32_t ifindex)
{
	struct policy_stage *ps = fib->ps;
	size_t i, k;

	for (i = 0; i < ps->nlinks && ps->links[i].ifindex != ifindex; i++)
		;
	if (i == ps->nlinks)
		return -ENOENT;
	memmove(&ps->links[i], &ps->links[i + 1], (ps->nlinks - i - 1) * sizeof(ps->links[0]));
	ps->nlinks--;
	for (i = k = 0; i < ps->naddrs; i++)
		if (ps->addrs[i].ifindex != ifindex)
			ps->addrs[k++] = ps->addrs[i];
	ps->naddrs = k;
	ps->dirty = 1;
	return 0;
}

static int
ifaddr_same(const struct fib_ifaddr *a, const struct fib_ifaddr *b)
{
	return a->family == b->family && a->ifindex == b->ifindex && a->plen == b->plen &&
	       memcmp(a->addr.b, b->addr.b, a->family == AF_INET ? 4 : 16) == 0;
}

int
fib_ifaddr_add(struct fib *fib, const struct fib_ifaddr *a)
{
	struct policy_stage *ps = fib->ps;

	if ((a->family != AF_INET && a->family != AF_INET6) || a->plen > addr_bits(a->family) ||
	    !a->ifindex)
		return -EINVAL;
	for (size_t i = 0; i < ps->naddrs; i++) {
		if (ifaddr_same(&ps->addrs[i], a)) {
			ps->addrs[i] = *a;
			ps->dirty = 1;
			return 0;
		}
	}
	if (grow((void **)&ps->addrs, &ps->capaddrs, ps->naddrs, sizeof(*a)))
		return -ENOMEM;
	ps->addrs[ps->naddrs++] = *a;
	ps->dirty = 1;
	return 0;
}

int
fib_ifaddr_del(struct fib *fib, const struct fib_ifaddr *a)
{
	struct policy_stage *ps = fib->ps;

	for (size_t i = 0; i < ps->naddrs; i++) {
		if (!ifaddr_same(&ps->addrs[i], a))
			continue;
		memmove(&ps->addrs[i], &ps->addrs[i + 1], (ps->naddrs - i - 1) * sizeof(*a));
		ps->naddrs--;
		ps->dirty = 1;
		return 0;
	}
	return -ENOENT;
}

void
fib_mp_hash_default(struct fib_mp_hash *h)
{
	memset(h, 0, sizeof(*h));
	/* FIB_MULTIPATH_HASH_FIELD_DEFAULT_MASK: src ip, dst ip, ip proto */
	h->fields4 = h->fields6 = 0x0007;
}

int
fib_mp_hash_set(struct fib *fib, const struct fib_mp_hash *h)
{
	if (h->policy4 > 3 || h->policy6 > 3)
		return -EINVAL;
	fib->ps->hash = *h;
	fib->ps->dirty = 1;
	return 0;
}

/* ------------------------------------------------------- the snapshot */

static const uint32_t default_prio4[] = { 0, 32766, 32767 };
static const uint32_t default_table4[] = { 255, 254, 253 };

static int
rules_are_default(const struct fib_rule *r, size_t n, int family)
{
	size_t want = family == AF_INET ? 3 : 2;
	struct fib_rule d;

	if (n != want)
		return 0;
	for (size_t i = 0; i < n; i++) {
		fib_rule_init(&d, family);
		d.priority = default_prio4[i];
		d.table = default_table4[i];
		if (!rule_equal(&r[i], &d, 0))
			return 0;
	}
	return 1;
}

static uint32_t
link_by_name(const struct policy_stage *ps, const char *name)
{
	if (!name[0])
		return 0;
	for (size_t i = 0; i < ps->nlinks; i++)
		if (strncmp(ps->links[i].name, name, IF_NAMESIZE) == 0)
			return ps->links[i].ifindex;
	if (strcmp(name, "lo") == 0)
		return POLICY_LOOPBACK;
	return POLICY_NOIF;
}

/* The kernel's order of an interface's addresses (devinet.c
 * inet_insert_ifa): primaries by scope, host first, in the order added;
 * then the secondaries. IPv6: the order added. */
static int
addr_rank(const struct fib_ifaddr *a)
{
	if (a->family != AF_INET)
		return 0;
	if (a->flags & 0x01) /* IFA_F_SECONDARY */
		return 256;
	return 255 - a->scope;
}

static struct fib_policy *
policy_build(struct fib *fib, int family)
{
	struct policy_stage *ps = fib->ps;
	int f = policy_fidx(family);
	size_t nr = ps->nrules[f], nl = ps->nlinks, na = 0, size, off, nsrc = 0;
	struct fib_policy *p;
	uint32_t (*src4)[2];
	struct policy_rule *rules;
	struct fib_link *links;
	struct fib_ifaddr *addrs;

	for (size_t i = 0; i < ps->naddrs; i++) {
		const struct fib_ifaddr *a = &ps->addrs[i];

		na += a->family == family;
		if (family == AF_INET && a->family == family && a->ifindex < POLICY_SRC4_MAX &&
		    a->ifindex >= nsrc)
			nsrc = a->ifindex + 1;
	}
	off = (sizeof(*p) + 15) & ~(size_t)15;
	size = off + nr * sizeof(*rules) + nl * sizeof(*links) + na * sizeof(*addrs) +
	       nsrc * sizeof(*src4);
	p = pool_alloc(fib->ctx.pool, size);
	if (!p)
		return NULL;
	memset(p, 0, size);
	rules = (struct policy_rule *)((char *)p + off);
	links = (struct fib_link *)(rules + nr);
	addrs = (struct fib_ifaddr *)(links + nl);
	src4 = (uint32_t(*)[2])(addrs + na);
	p->size = size;
	p->family = (uint8_t)family;
	p->nrules = (uint32_t)nr;
	p->nlinks = (uint32_t)nl;
	p->naddrs = (uint32_t)na;
	p->hash = ps->hash;
	p->rules = rules;
	p->links = links;
	p->addrs = addrs;
	p->is_default = (uint8_t)rules_are_default(ps->rules[f], nr, family);
	if (family == AF_INET && !p->is_default)
		ps->custom4 = 1;
	p->custom_rules = family == AF_INET ? ps->custom4 : 1;
	for (size_t i = 0; i < nr; i++) {
		const struct fib_rule *r = &ps->rules[f][i];

		rules[i].r = *r;
		rules[i].iif = link_by_name(ps, r->iifname);
		rules[i].oif = link_by_name(ps, r->oifname);
		rules[i].jump = POLICY_NOJUMP;
		if (r->action == FIB_RULE_GOTO)
			for (size_t j = i + 1; j < nr; j++)
				if (ps->rules[f][j].priority == r->goto_prio) {
					rules[i].jump = (uint32_t)j;
					break;
				}
	}
	if (nl)
		memcpy(links, ps->links, nl * sizeof(*links));
	p->all_up = 1;
	for (size_t i = 0; i < nl; i++)
		if ((links[i].flags & (IFF_UP | IFF_LOWER_UP)) != (IFF_UP | IFF_LOWER_UP))
			p->all_up = 0;
	/* stable insertion sort by (ifindex, rank): few addresses */
	na = 0;
	for (size_t i = 0; i < ps->naddrs; i++) {
		const struct fib_ifaddr *a = &ps->addrs[i];
		size_t at = na;

		if (a->family != family)
			continue;
		while (at > 0 && (addrs[at - 1].ifindex > a->ifindex ||
				  (addrs[at - 1].ifindex == a->ifindex &&
				   addr_rank(&addrs[at - 1]) > addr_rank(a)))) {
			addrs[at] = addrs[at - 1];
			at--;
		}
		addrs[at] = *a;
		na++;
	}
	if (family == AF_INET) {
		p->fallback4[0] = policy_select_fallback4(p, 0, 0);
		p->fallback4[1] = policy_select_fallback4(p, 0, 253);
		p->fallback4[2] = policy_select_fallback4(p, 0, 254);
		for (uint32_t i = 0; i < nsrc; i++) {
			src4[i][0] = htonl(policy_dev_only_addr4(p, i, 0));
			src4[i][1] = htonl(policy_dev_only_addr4(p, i, 253));
		}
		p->nsrc4 = (uint32_t)nsrc;
		p->src4 = (const uint32_t(*)[2])src4;
	}
	return p;
}

int
fib_policy_publish(struct fib *fib)
{
	struct fib_policy *np[2], *old[2];

	if (!fib->ps->dirty)
		return 0;
	np[0] = policy_build(fib, AF_INET);
	np[1] = np[0] ? policy_build(fib, AF_INET6) : NULL;
	if (!np[1]) {
		if (np[0])
			pool_free(fib->ctx.pool, np[0], np[0]->size);
		return -ENOMEM;
	}
	reclaim_hold(fib->ctx.rc);
	fib->policy_gen++;
	for (int f = 0; f < 2; f++) {
		np[f]->gen = fib->policy_gen;
		old[f] = fib->policy[f];
		rcu_assign_pointer(fib->policy[f], np[f]);
		uatomic_set(&fib->policy_default[f], np[f]->is_default);
		if (old[f])
			reclaim_retire(fib->ctx.rc, old[f], old[f]->size);
	}
	reclaim_release(fib->ctx.rc);
	fib->ps->dirty = 0;
	return 0;
}

uint64_t
fib_policy_generation(const struct fib *fib)
{
	return uatomic_read(&fib->policy_gen);
}

int
fib_policy_is_default(const struct fib *fib, int family)
{
	if (family != AF_INET && family != AF_INET6)
		return 0;
	return uatomic_read(&fib->policy_default[policy_fidx(family)]);
}

size_t
fib_rules_get(const struct fib *fib, int family, struct fib_rule *out, size_t max)
{
	const struct fib_policy *p;

	if (family != AF_INET && family != AF_INET6)
		return 0;
	p = rcu_dereference(fib->policy[policy_fidx(family)]);
	for (size_t i = 0; i < p->nrules && i < max; i++)
		out[i] = p->rules[i].r;
	return p->nrules;
}

size_t
fib_links_get(const struct fib *fib, struct fib_link *out, size_t max)
{
	const struct fib_policy *p = rcu_dereference(fib->policy[0]);

	for (size_t i = 0; i < p->nlinks && i < max; i++)
		out[i] = p->links[i];
	return p->nlinks;
}

size_t
fib_ifaddrs_get(const struct fib *fib, struct fib_ifaddr *out, size_t max)
{
	const struct fib_policy *p4 = rcu_dereference(fib->policy[0]);
	const struct fib_policy *p6 = rcu_dereference(fib->policy[1]);
	size_t n = 0;

	for (size_t i = 0; i < p4->naddrs; i++, n++)
		if (n < max)
			out[n] = p4->addrs[i];
	for (size_t i = 0; i < p6->naddrs; i++, n++)
		if (n < max)
			out[n] = p6->addrs[i];
	return n;
}

const struct fib_link *
policy_link(const struct fib_policy *p, uint32_t ifindex)
{
	size_t lo = 0, hi = p->nlinks;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->links[mid].ifindex == ifindex)
			return &p->links[mid];
		if (p->links[mid].ifindex < ifindex)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct fib_ifaddr *
policy_addrs(const struct fib_policy *p, uint32_t ifindex, size_t *n)
{
	size_t lo = 0, hi = p->naddrs, end;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->addrs[mid].ifindex < ifindex)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < p->naddrs && p->addrs[end].ifindex == ifindex; end++)
		;
	*n = end - lo;
	return &p->addrs[lo];
}

const char *
fib_errno_name(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return NULL;
	case ENETUNREACH:
		return "ENETUNREACH";
	case EHOSTUNREACH:
		return "EHOSTUNREACH";
	case EACCES:
		return "EACCES";
	case EINVAL:
		return "EINVAL";
	default:
		return "EUNKNOWN";
	}
}

/* ------------------------------------------------- the local filter */

static unsigned __int128
route_key(const struct fib_route *r)
{
	unsigned __int128 k = 0;

	if (r->family == AF_INET)
		return ntohl(r->dst.v4.s_addr);
	for (int i = 0; i < 16; i++)
		k = (k << 8) | r->dst.b[i];
	return k;
}

static int
localf_top_span(int family, unsigned __int128 key, unsigned plen, unsigned *first)
{
	*first = (unsigned)(key >> (addr_bits(family) - 8));
	if (plen >= 8)
		return 1;
	*first &= ~((1u << (8 - plen)) - 1) & 0xff;
	return 1 << (8 - plen);
}

static void
localf_change(struct fib *fib, const struct fib_route *r, int delta)
{
	int fi = policy_fidx(r->family);
	struct localf *f = &fib->localf[fi];
	struct policy_stage *ps = fib->ps;
	unsigned grain = r->family == AF_INET ? LOCALF_GRAIN4 : LOCALF_GRAIN6;
	unsigned __int128 key = route_key(r);
	unsigned first, span;

	if (r->table == POLICY_TABLE_DEFAULT) {
		/* the fast path's "main missed and default is empty" */
		uint32_t n = f->ndefault;
		if (delta > 0 || n)
			__atomic_store_n(&f->ndefault, delta > 0 ? n + 1 : n - 1, __ATOMIC_RELEASE);
		return;
	}
	if (r->table != POLICY_TABLE_LOCAL)
		return;
	if (r->plen >= grain) {
		unsigned h = localf_hash(r->family, key);
		uint64_t bit = 1ull << (h % 64);

		if (delta > 0 && ps->lcount[fi][h]++ == 0)
			__atomic_fetch_or(&f->bits[h / 64], bit, __ATOMIC_RELEASE);
		else if (delta < 0 && ps->lcount[fi][h] && --ps->lcount[fi][h] == 0)
			__atomic_fetch_and(&f->bits[h / 64], ~bit, __ATOMIC_RELEASE);
		return;
	}
	/* shorter: every top-8-bit value the prefix covers */
	span = (unsigned)localf_top_span(r->family, key, r->plen, &first);
	for (unsigned v = first; v < first + span; v++) {
		uint64_t bit = 1ull << (v % 64);

		if (delta > 0 && ps->tcount[fi][v]++ == 0)
			__atomic_fetch_or(&f->top[v / 64], bit, __ATOMIC_RELEASE);
		else if (delta < 0 && ps->tcount[fi][v] && --ps->tcount[fi][v] == 0)
			__atomic_fetch_and(&f->top[v / 64], ~bit, __ATOMIC_RELEASE);
	}
}

void
localf_note_add(struct fib *fib, const struct fib_route *r)
{
	localf_change(fib, r, 1);
}

void
localf_note_del(struct fib *fib, const struct fib_route *r)
{
	localf_change(fib, r, -1);
}

void
localf_reset(struct fib *fib, int family)
{
	for (int fi = 0; fi < 2; fi++) {
		struct localf *f = &fib->localf[fi];

		if (family != AF_UNSPEC && policy_fidx(family) != fi)
			continue;
		for (unsigned i = 0; i < LOCALF_BITS / 64; i++)
			__atomic_store_n(&f->bits[i], 0, __ATOMIC_RELEASE);
		for (unsigned i = 0; i < 4; i++)
			__atomic_store_n(&f->top[i], 0, __ATOMIC_RELEASE);
		__atomic_store_n(&f->ndefault, 0, __ATOMIC_RELEASE);
		memset(fib->ps->lcount[fi], 0, sizeof(fib->ps->lcount[fi]));
		memset(fib->ps->tcount[fi], 0, sizeof(fib->ps->tcount[fi]));
	}
}

/* ------------------------------------------------------ life cycle */

int
policy_init(struct fib *fib)
{
	struct fib_rule r;
	int err = 0;

	fib->ps = calloc(1, sizeof(*fib->ps));
	if (!fib->ps)
		return -ENOMEM;
	localf_reset(fib, AF_UNSPEC);
	fib_mp_hash_default(&fib->ps->hash);
	for (int i = 0; i < 3 && !err; i++) {
		fib_rule_init(&r, AF_INET);
		r.priority = default_prio4[i];
		r.table = default_table4[i];
		r.protocol = 2; /* RTPROT_KERNEL */
		err = fib_rule_add(fib, &r);
		if (!err && i < 2) {
			r.family = AF_INET6;
			err = fib_rule_add(fib, &r);
		}
	}
	fib->ps->dirty = 1;
	return err ? err : fib_policy_publish(fib);
}

void
policy_fini(struct fib *fib)
{
	struct policy_stage *ps = fib->ps;

	/* No reader is left (fib_free's contract): the live snapshots go
	 * back to the pool now, the retired ones with their batch. */
	for (int f = 0; f < 2; f++) {
		if (fib->policy[f])
			pool_free(fib->ctx.pool, fib->policy[f], fib->policy[f]->size);
		fib->policy[f] = NULL;
	}
	if (!ps)
		return;
	free(ps->rules[0]);
	free(ps->rules[1]);
	free(ps->links);
	free(ps->addrs);
	free(ps);
	fib->ps = NULL;
}
