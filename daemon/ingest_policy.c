/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ingest, rules, links and addresses into libfib's policy
 *
 * What the kernel reads besides routes to answer a flow (fib/policy.h;
 * doc/decisions.md, section 2): policy rules (RTNLGRP_IPV4_RULE,
 * RTNLGRP_IPV6_RULE), links (RTNLGRP_LINK) and interface addresses
 * (RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR). daemon/nl_policy.c parses
 * each message whole; this file applies it to the FIB's staging copy
 * with fib_rule_add/del, fib_link_set/del and fib_ifaddr_add/del, and
 * publishes the staging copy (fib_policy_publish) once per event slice
 * and once per dump, never per message, so readers see a policy the
 * kernel had, not a rule at a time of a batch.
 *
 * Dumps: links, addresses and the rules of each mirrored family are
 * dumped before next-hop objects and routes (daemon/ingest_dump.c) and
 * collected here. When the last of them is done, the collection replaces
 * what the FIB holds in one step (ingest_policy_dump_apply): links and
 * addresses the dump no longer has are deleted, the dumped ones set; the
 * rules of each family are flushed and added again in the dump's order
 * (the kernel's); then one publish. A kind whose dump failed keeps what
 * the FIB had, and a dump interrupted by a change (NLM_F_DUMP_INTR) asks
 * for another resync. So the first dump has its rules in the FIB before
 * fibd is ready, and a resync after ENOBUFS re-reads them as it re-reads
 * routes.
 *
 * Only the FIB's writer calls these: the main loop, which is the writer
 * while dumping the policy kinds (the loader thread starts after the
 * IPv4 routes) and whenever it reads events (never while paused).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>

#include "daemon/ingest_priv.h"

/* Growing arrays of the dump's policy objects. */
static int
ingest_grow(void **arr, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	p = realloc(*arr, c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

void
ingest_policy_free(struct ingest *ing)
{
	free(ing->pol.rules);
	free(ing->pol.links);
	free(ing->pol.addrs);
	memset(&ing->pol, 0, sizeof(ing->pol));
}

void
ingest_policy_dump_begin(struct ingest *ing)
{
	ing->pol.nrules = ing->pol.nlinks = ing->pol.naddrs = 0;
	ing->pol.done = 0;
	ing->pol.intr = 0;
	ing->pol.nomem = 0;
}

void
ingest_policy_step_done(struct ingest *ing, unsigned kind, int err)
{
	if (err == 0)
		ing->pol.done |= kind;
}

void
ingest_policy_publish(struct ingest *ing)
{
	int ret;

	if (!ing->pol.dirty)
		return;
	ing->pol.dirty = 0;
	ret = fib_policy_publish(ing->fib);
	if (ret < 0) {
		ing->st.policy_errors++;
		log_warnx_rl(&ing->rl_fib, "fib_policy_publish: %s: resync", strerror(-ret));
		ingest_resync(ing);
		return;
	}
	ing->st.policy_publishes++;
}

/* A FIB policy call's result, counted in st. */
static void
ingest_policy_count(struct ingest *ing, int ret, uint64_t *applied, const char *what)
{
	if (ret == 0) {
		(*applied)++;
		ing->pol.dirty = 1;
	} else if (ret == -EEXIST || ret == -ENOENT) {
		ing->st.policy_stale++; /* an old event replayed after a dump */
	} else {
		ing->st.policy_errors++;
		log_warnx_rl(&ing->rl_fib, "%s: %s", what, strerror(-ret));
	}
}

/* Events. */

void
ingest_rule_msg(struct ingest *ing, const struct nlmsghdr *nlh, int from_dump)
{
	struct nl_rule nr;
	enum nl_err err;
	int ret = nl_rule_parse(nlh, &nr, &err);

	if (ret < 0) {
		ing->st.parse_errors[err]++;
		ing->st.rules_rejected++;
		log_warnx_rl(&ing->rl_parse, "bad rule message (type %u, %u bytes): %s",
			     nlh->nlmsg_type, nlh->nlmsg_len, nl_err_name(err));
		return;
	}
	if (nr.unknown_attrs) {
		ing->st.unknown_attrs += nr.unknown_attrs;
		log_warnx_rl(&ing->rl_parse,
			     "rule %u with %u selector(s) fibd cannot hold, last type %u: ignored",
			     nr.r.priority, nr.unknown_attrs, nr.unknown_type);
	}
	if (ret == NL_SKIP || !ingest_family_wanted(ing, nr.r.family)) {
		ing->st.skipped++;
		return;
	}
	if (from_dump) {
		if (ingest_grow((void **)&ing->pol.rules, &ing->pol.caprules, ing->pol.nrules,
				sizeof(nr.r)) < 0) {
			ing->pol.nomem = 1;
			return;
		}
		ing->pol.rules[ing->pol.nrules++] = nr.r;
		return;
	}
	if (nlh->nlmsg_type == RTM_DELRULE)
		ret = fib_rule_del(ing->fib, &nr.r);
	else
		ret = fib_rule_add(ing->fib, &nr.r);
	ingest_policy_count(ing, ret, &ing->st.rules_applied, "fib_rule");
}

void
ingest_addr_msg(struct ingest *ing, const struct nlmsghdr *nlh, int from_dump)
{
	struct nl_ifaddr na;
	enum nl_err err;
	int ret = nl_ifaddr_parse(nlh, &na, &err);

	if (ret < 0) {
		ing->st.parse_errors[err]++;
		ing->st.addrs_rejected++;
		log_warnx_rl(&ing->rl_parse, "bad address message (type %u, %u bytes): %s",
			     nlh->nlmsg_type, nlh->nlmsg_len, nl_err_name(err));
		return;
	}
	if (!ingest_family_wanted(ing, na.a.family)) {
		ing->st.skipped++;
		return;
	}
	if (from_dump) {
		if (ingest_grow((void **)&ing->pol.addrs, &ing->pol.capaddrs, ing->pol.naddrs,
				sizeof(na.a)) < 0) {
			ing->pol.nomem = 1;
			return;
		}
		ing->pol.addrs[ing->pol.naddrs++] = na.a;
		return;
	}
	if (nlh->nlmsg_type == RTM_DELADDR)
		ret = fib_ifaddr_del(ing->fib, &na.a);
	else
		ret = fib_ifaddr_add(ing->fib, &na.a);
	ingest_policy_count(ing, ret, &ing->st.addrs_applied, "fib_ifaddr");
}

void
ingest_policy_link(struct ingest *ing, const struct nl_link *nk, int from_dump)
{
	int ret;

	if (from_dump) {
		if (ingest_grow((void **)&ing->pol.links, &ing->pol.caplinks, ing->pol.nlinks,
				sizeof(nk->l)) < 0) {
			ing->pol.nomem = 1;
			return;
		}
		ing->pol.links[ing->pol.nlinks++] = nk->l;
		return;
	}
	if (nk->msg_type == RTM_DELLINK)
		ret = fib_link_del(ing->fib, nk->l.ifindex);
	else
		ret = fib_link_set(ing->fib, &nk->l);
	ingest_policy_count(ing, ret, &ing->st.links_applied, "fib_link");
}

/* Dumps. */

static int
ingest_ifaddr_same(const struct fib_ifaddr *a, const struct fib_ifaddr *b)
{
	return a->family == b->family && a->ifindex == b->ifindex && a->plen == b->plen &&
	       !memcmp(a->addr.b, b->addr.b, a->family == AF_INET ? 4 : 16);
}

/*
 * Links: delete those of the published policy the dump does not have,
 * then set every dumped one; forget the names of vanished links too.
 */
static void
ingest_policy_links(struct ingest *ing)
{
	size_t n = fib_links_get(ing->fib, NULL, 0), m;
	struct fib_link *old = n ? calloc(n, sizeof(*old)) : NULL;

	if (n && !old) {
		ing->pol.nomem = 1;
		return;
	}
	m = n ? fib_links_get(ing->fib, old, n) : 0;
	for (size_t i = 0; i < m && i < n; i++) {
		size_t k;

		for (k = 0; k < ing->pol.nlinks; k++)
			if (ing->pol.links[k].ifindex == old[i].ifindex)
				break;
		if (k == ing->pol.nlinks)
			ingest_policy_count(ing, fib_link_del(ing->fib, old[i].ifindex),
					    &ing->st.links_applied, "fib_link_del");
	}
	free(old);
	for (size_t k = 0; k < ing->pol.nlinks; k++)
		ingest_policy_count(ing, fib_link_set(ing->fib, &ing->pol.links[k]),
				    &ing->st.links_applied, "fib_link_set");
	for (size_t i = 0; i < ing->nlinks; i++) {
		size_t k;

		if (!ing->links[i].known)
			continue;
		for (k = 0; k < ing->pol.nlinks; k++)
			if (ing->pol.links[k].ifindex == i)
				break;
		if (k == ing->pol.nlinks)
			ing->links[i].known = 0;
	}
}

/* Addresses: the same, by (family, ifindex, address, prefix length). */
static void
ingest_policy_addrs(struct ingest *ing)
{
	size_t n = fib_ifaddrs_get(ing->fib, NULL, 0), m;
	struct fib_ifaddr *old = n ? calloc(n, sizeof(*old)) : NULL;

	if (n && !old) {
		ing->pol.nomem = 1;
		return;
	}
	m = n ? fib_ifaddrs_get(ing->fib, old, n) : 0;
	for (size_t i = 0; i < m && i < n; i++) {
		size_t k;

		if (!ingest_family_wanted(ing, old[i].family))
			continue;
		for (k = 0; k < ing->pol.naddrs; k++)
			if (ingest_ifaddr_same(&ing->pol.addrs[k], &old[i]))
				break;
		if (k == ing->pol.naddrs) /* -ENOENT: a deleted link took it */
			ingest_policy_count(ing, fib_ifaddr_del(ing->fib, &old[i]),
					    &ing->st.addrs_applied, "fib_ifaddr_del");
	}
	free(old);
	for (size_t k = 0; k < ing->pol.naddrs; k++)
		ingest_policy_count(ing, fib_ifaddr_add(ing->fib, &ing->pol.addrs[k]),
				    &ing->st.addrs_applied, "fib_ifaddr_add");
}

/* Rules of one family: flushed, then the dump's in the kernel's order. */
static void
ingest_policy_rules(struct ingest *ing, int family)
{
	fib_rule_flush(ing->fib, family);
	ing->pol.dirty = 1;
	for (size_t k = 0; k < ing->pol.nrules; k++)
		if (ing->pol.rules[k].family == family)
			ingest_policy_count(ing, fib_rule_add(ing->fib, &ing->pol.rules[k]),
					    &ing->st.rules_applied, "fib_rule_add");
}

void
ingest_policy_dump_apply(struct ingest *ing)
{
	if (!ingest_fib_writable(ing)) {
		/* a dump restarted (dump socket error) while the loader loads
		 * the first one's IPv4: not the writer now; dump again later */
		log_info("policy dump: the FIB is lent to another thread: resync");
		ing->resync_pending = 1;
		return;
	}
	if (ing->pol.nomem) {
		log_warnx("policy dump: out of memory: the FIB keeps its rules, links and "
			  "addresses; resync");
		ing->resync_pending = 1;
		return;
	}
	if (ing->pol.intr) {
		log_info("policy dump interrupted by a change: another resync");
		ing->resync_pending = 1;
	}
	if (ing->pol.done & INGEST_POL_LINK)
		ingest_policy_links(ing);
	if (ing->pol.done & INGEST_POL_ADDR)
		ingest_policy_addrs(ing);
	if ((ing->pol.done & INGEST_POL_RULE4) && ingest_family_wanted(ing, AF_INET))
		ingest_policy_rules(ing, AF_INET);
	if ((ing->pol.done & INGEST_POL_RULE6) && ingest_family_wanted(ing, AF_INET6))
		ingest_policy_rules(ing, AF_INET6);
	log_debug("policy dump: %zu links, %zu addresses, %zu rules", ing->pol.nlinks,
		  ing->pol.naddrs, ing->pol.nrules);
	ing->pol.dirty = 1; /* a dump publishes once even when nothing changed */
	ingest_policy_publish(ing);
}
