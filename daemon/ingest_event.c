/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ingest, the event path
 *
 * Route, link and next-hop object messages, from a dump or from the
 * event socket (rules and addresses: daemon/ingest_policy.c), and the event socket read in slices of budget_us (2 ms by
 * default, netlink.slice_budget): each slice applies fib_add / fib_del
 * and, when the budget runs out, leaves the socket readable (or the work
 * event active) so the loop serves its other events first.
 *
 * Silent kernel changes: taking a link down or deleting it flushes routes
 * through it, and deleting or replacing a next-hop object changes routes
 * that use it, without RTM_DELROUTE. Both trigger a resync
 * (daemon/ingest_resync.c). An ENOBUFS on the event socket does too, and
 * so does a resilient group's bucket moved by the kernel's timers
 * (notified, or found by the buckets' periodic re-dump:
 * daemon/ingest_priv.h, INGEST_NHB_SECONDS).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <net/if.h>
#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "daemon/ingest_priv.h"

static int
ingest_nh_same_path(const struct fib_nh *a, const struct fib_nh *b)
{
	return a->gw_family == b->gw_family &&
	       (!a->gw_family || !memcmp(a->gw.b, b->gw.b, a->gw_family == AF_INET ? 4 : 16)) &&
	       (!a->ifindex || !b->ifindex || a->ifindex == b->ifindex);
}

/* FIB operations with counting. */

void
ingest_fib_add(struct ingest *ing, const struct fib_route *r, unsigned flags)
{
	int ret = fib_add(ing->fib, r, flags);

	if (ret == 0)
		ing->st.routes_added++;
	else if (ret == -EEXIST)
		ing->st.add_exists++;
	else {
		ing->st.fib_errors++;
		log_warnx_rl(&ing->rl_fib, "fib_add: %s%s", strerror(-ret),
			     ret == -ENOMEM ? ": resync" : "");
		if (ret == -ENOMEM) /* the route is missing: a dump brings it back */
			ingest_resync(ing);
	}
}

void
ingest_fib_del(struct ingest *ing, const struct fib_route *r)
{
	int ret = fib_del(ing->fib, r);

	if (ret == 0)
		ing->st.routes_deleted++;
	else if (ret == -ENOENT)
		ing->st.del_missing++;
	else {
		ing->st.fib_errors++;
		log_warnx_rl(&ing->rl_fib, "fib_del: %s%s", strerror(-ret),
			     ret == -ENOMEM ? ": resync" : "");
		if (ret == -ENOMEM)
			ingest_resync(ing);
	}
}

/*
 * Links: the name table (ingest_ifname), the FIB's links
 * (daemon/ingest_policy.c), and a resync when a link goes down or away:
 * the kernel flushes the routes through it without telling.
 */
static void
ingest_link_msg(struct ingest *ing, const struct nlmsghdr *nlh, int from_dump)
{
	struct nl_link nk;
	struct ingest_link *l;
	enum nl_err err;
	unsigned idx, was_up;
	int ret = nl_link_parse(nlh, &nk, &err);

	if (ret < 0) {
		ing->st.parse_errors[err]++;
		ing->st.links_rejected++;
		log_warnx_rl(&ing->rl_parse, "bad link message (type %u, %u bytes): %s",
			     nlh->nlmsg_type, nlh->nlmsg_len, nl_err_name(err));
		return;
	}
	if (ret == NL_SKIP)
		return;
	idx = nk.l.ifindex;
	if (idx > (1u << 20)) { /* the name table is indexed by ifindex */
		ing->st.links_rejected++;
		log_warnx_rl(&ing->rl_parse, "link %u: ifindex too large for fibd", idx);
		return;
	}
	if (idx >= ing->nlinks) {
		size_t n = ing->nlinks ? ing->nlinks : 64;
		struct ingest_link *nl;

		while (n <= idx)
			n *= 2;
		nl = realloc(ing->links, n * sizeof(*nl));
		if (!nl)
			return;
		memset(nl + ing->nlinks, 0, (n - ing->nlinks) * sizeof(*nl));
		ing->links = nl;
		ing->nlinks = n;
	}
	ingest_policy_link(ing, &nk, from_dump);
	l = &ing->links[idx];
	was_up = l->known && (l->flags & IFF_UP);
	if (nlh->nlmsg_type == RTM_DELLINK) {
		l->known = 0;
		if (!from_dump) {
			log_debug("link %u deleted: resync", idx);
			ingest_resync(ing);
		}
		return;
	}
	memcpy(l->name, nk.l.name, sizeof(l->name));
	l->known = 1;
	l->flags = nk.l.flags;
	if (!from_dump && was_up && !(nk.l.flags & IFF_UP)) {
		log_debug("link %s down: resync", l->name);
		ingest_resync(ing);
	}
}

static void
ingest_nh_msg(struct ingest *ing, const struct nlmsghdr *nlh, int from_dump)
{
	enum nl_err err;
	size_t nres = nl_nhtab_res_count(ing->nht);
	int changed, ret = nl_nhtab_msg(ing->nht, nlh, &changed, &err);

	if (ret == -EINVAL) {
		ing->st.parse_errors[err]++;
		log_warnx_rl(&ing->rl_parse, "bad nexthop message: %s", nl_err_name(err));
	} else if (ret == -ENOMEM) {
		log_warnx_rl(&ing->rl_parse, "nexthop table: out of memory: resync");
		ingest_resync(ing);
	} else if (ret == 0 && changed && !from_dump) {
		log_debug("nexthop object changed: resync");
		ingest_resync(ing);
	} else if (ret == 0 && !from_dump && nl_nhtab_res_count(ing->nht) > nres) {
		/* a new resilient group: its buckets come with a dump */
		log_debug("resilient nexthop group added: resync");
		ingest_resync(ing);
	}
	ing->st.nh_objects = nl_nhtab_count(ing->nht);
}

/*
 * One bucket of a resilient group: from a dump, or an event (Linux 6.18
 * notifies each bucket its idle or unbalanced timer migrates on
 * RTNLGRP_NEXTHOP; the periodic re-dump stays for a notification lost or
 * not sent). A bucket moved by an event changes the map of the routes
 * through its group: a resync gives them the new one; the rest of the
 * burst finds the dump started and is part of what it reads.
 */
static void
ingest_nhb_msg(struct ingest *ing, const struct nlmsghdr *nlh, int from_dump)
{
	enum nl_err err;
	int changed, ret = nl_nhtab_bucket_msg(ing->nht, nlh, &changed, &err);

	if (ret == -EINVAL) {
		ing->st.parse_errors[err]++;
		log_warnx_rl(&ing->rl_parse, "bad nexthop bucket message (%u bytes): %s",
			     nlh->nlmsg_len, nl_err_name(err));
	} else if (ret == 0 && changed && ing->nhb_only) {
		ing->nhb_changed = 1;
	} else if (ret == 0 && changed && !from_dump && ing->phase == PH_IDLE) {
		log_debug("resilient group bucket moved: resync");
		ingest_resync(ing);
	}
}

/*
 * The paths of the IPv6 multipath route under r's key (the first route of
 * the key with more than one path), copied out of the FIB; 0 if the key
 * has none.
 */
static unsigned
ingest_mp6_paths(struct ingest *ing, const struct fib_route *r, struct fib_nh *nh)
{
	struct fib_match m;
	unsigned n = 0;

	fib_read_lock();
	for (unsigned i = 0; fib_find_rcu(ing->fib, r, i, &m) == 0; i++) {
		if (m.info->nh_count >= 2) {
			n = m.info->nh_count;
			memcpy(nh, m.info->nh, n * sizeof(*nh));
			break;
		}
	}
	fib_read_unlock();
	return n;
}

/*
 * Deletes as the kernel sent them, except an IPv6 path deleted from a
 * multipath route: the route stays with the other paths. The kernel
 * notifies an IPv6 multipath route whole when it is added or a path is
 * appended, but deleting one path (`ip -6 route del P via G`) is notified
 * as that path alone: the remaining paths come from the FIB.
 */
static void
ingest_route_del(struct ingest *ing, const struct fib_route *r)
{
	struct fib_nh have[255], left[255];
	struct fib_route nr;
	unsigned nhave = 0, n = 0;

	if (r->family == AF_INET6)
		nhave = ingest_mp6_paths(ing, r, have);
	if (!nhave || r->nh_count >= nhave) {
		ingest_fib_del(ing, r);
		return;
	}
	for (unsigned i = 0; i < nhave; i++) {
		unsigned k;

		for (k = 0; k < r->nh_count; k++)
			if (ingest_nh_same_path(&have[i], &r->nh[k]))
				break;
		if (k == r->nh_count)
			left[n++] = have[i];
	}
	if (n == nhave) { /* none of its paths: not this route */
		ing->st.del_missing++;
		return;
	}
	nr = *r;
	nr.nh = left;
	nr.nh_count = (uint8_t)n;
	if (n == 0) {
		ingest_fib_del(ing, r);
		return;
	}
	ingest_fib_add(ing, &nr, FIB_ADD_REPLACE);
}

static void
ingest_route_msg(struct ingest *ing, const struct nlmsghdr *nlh, int from_dump)
{
	struct nl_route *nr = &ing->scratch;
	enum nl_err err;
	unsigned flags = 0;
	int ret;

	ret = nl_route_parse(nlh, ing->nht, nr, &err);
	if (ret < 0) {
		ing->st.parse_errors[err]++;
		log_warnx_rl(&ing->rl_parse, "bad route message (type %u, %u bytes): %s",
			     nlh->nlmsg_type, nlh->nlmsg_len, nl_err_name(err));
		return;
	}
	if (nr->unknown_attrs) {
		ing->st.unknown_attrs += nr->unknown_attrs;
		log_warnx_rl(&ing->rl_parse, "route message with %u unknown attribute(s), type %u: ignored",
			     nr->unknown_attrs, nr->unknown_type);
	}
	if (nr->res_incomplete && !from_dump) {
		log_debug("route through a resilient group of unknown buckets: resync");
		ingest_resync(ing); /* its map comes with the buckets */
	}
	if (ret == NL_SKIP || !ingest_family_wanted(ing, nr->r.family) ||
	    !ingest_table_wanted(ing, nr->r.table)) {
		ing->st.skipped++;
		return;
	}
	if (from_dump) {
		if (ingest_set_add(&ing->set, &nr->r) < 0) {
			log_warnx_rl(&ing->rl_fib, "dump set: out of memory: resync");
			ing->st.fib_errors++;
			ing->set_nomem = 1; /* read on the loop at the dump's end */
		}
		return;
	}
	if (log_get_verbose())
		log_debug("event %s family %u plen %u table %u nh %u flags 0x%x",
			  nlh->nlmsg_type == RTM_NEWROUTE ? "new" : "del", nr->r.family,
			  nr->r.plen, nr->r.table, nr->r.nh_count, nlh->nlmsg_flags);
	if (nlh->nlmsg_type == RTM_DELROUTE) {
		ingest_route_del(ing, &nr->r);
		return;
	}
	/*
	 * The kernel's notification flags: NLM_F_REPLACE when it replaced
	 * the first route of equal (tos, priority), NLM_F_APPEND when it
	 * added after them, NLM_F_EXCL for a route that is alone under its
	 * key, none for one inserted in front. IPv6 multipath additions
	 * are notified as the whole route, so they replace.
	 */
	if (nr->r.family == AF_INET6 && (nlh->nlmsg_flags & NLM_F_APPEND) && nr->r.nh_count > 1) {
		/* An appended IPv6 path is notified first, then its siblings
		 * from the head: rotate into the kernel's (and dump's) order. */
		struct fib_nh first = nr->nh[0];

		memmove(&nr->nh[0], &nr->nh[1], (nr->r.nh_count - 1u) * sizeof(nr->nh[0]));
		nr->nh[nr->r.nh_count - 1] = first;
	}
	if (nlh->nlmsg_flags & NLM_F_REPLACE)
		flags = FIB_ADD_REPLACE;
	else if (nr->r.family == AF_INET6 &&
		 (nr->r.nh_count > 1 || (nlh->nlmsg_flags & NLM_F_APPEND)))
		flags = FIB_ADD_REPLACE;
	else if (nlh->nlmsg_flags & NLM_F_APPEND)
		flags = FIB_ADD_APPEND;
	else if (nlh->nlmsg_flags & NLM_F_EXCL)
		flags = FIB_ADD_EXCL;
	ingest_fib_add(ing, &nr->r, flags);
}

void
ingest_msg(struct ingest *ing, const struct nlmsghdr *nlh, int from_dump)
{
	ing->st.msgs++;
	switch (nlh->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		ingest_route_msg(ing, nlh, from_dump);
		break;
	case RTM_NEWLINK:
	case RTM_DELLINK:
		ingest_link_msg(ing, nlh, from_dump);
		break;
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		ingest_nh_msg(ing, nlh, from_dump);
		break;
	case RTM_NEWNEXTHOPBUCKET:
		ingest_nhb_msg(ing, nlh, from_dump);
		break;
	case RTM_NEWRULE:
	case RTM_DELRULE:
		ingest_rule_msg(ing, nlh, from_dump);
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		ingest_addr_msg(ing, nlh, from_dump);
		break;
	default:
		break;
	}
}

/* Events. */

/* One slice of the event socket; ingest_ev_read publishes after it. */
static void
ingest_ev_slice(evutil_socket_t fd, struct ingest *ing)
{
	double deadline = ingest_deadline(ing);

	while (ing->phase == PH_IDLE && !ing->paused) {
		ssize_t n = recv(fd, ing->buf, INGEST_BUF, MSG_DONTWAIT);
		const struct nlmsghdr *nlh;
		int len;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				ing->st.drops++;
				log_warnx_rl(&ing->rl_sock, "event socket overrun (ENOBUFS): resync");
				ingest_resync(ing);
				return;
			}
			if (errno != EAGAIN)
				log_warnx_rl(&ing->rl_sock, "event socket: %s", strerror(errno));
			if (ing->sync_cb) {
				ingest_cb cb = ing->sync_cb;

				ing->sync_cb = NULL;
				cb(ing, ing->sync_arg);
			}
			return;
		}
		ing->st.bytes += (uint64_t)n;
		len = (int)n;
		for (nlh = (const struct nlmsghdr *)ing->buf; nl_msg_ok(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len))
			ingest_msg(ing, nlh, 0);
		if (ingest_now() >= deadline) {
			ing->st.slices++;
			if (ing->sync_cb)
				event_active(ing->work, 0, 0);
			return;
		}
	}
}

/* The policy changes of a slice are published once, at its end. */
void
ingest_ev_read(evutil_socket_t fd, short what, void *arg)
{
	struct ingest *ing = arg;

	(void)what;
	ingest_ev_slice(fd, ing);
	ingest_policy_publish(ing);
}
