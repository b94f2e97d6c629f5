/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ingest implementation
 *
 * State: phase IDLE (events flow), DUMP (one dump request at a time on
 * the dump socket; the event socket's event is removed so its messages
 * wait, in order, in the kernel buffer) or APPLY (the collected dump goes
 * into the FIB: fib_load the first time, mark-and-sweep afterwards).
 *
 * The dump set is two growing arrays, routes and paths; a route's nh
 * field holds an index into the path array until the set is complete
 * (realloc would move the paths), then becomes a pointer.
 *
 * Mark-and-sweep after a resync: fib_walk copies what the FIB holds into
 * a second set, and ingest_sweep (daemon/ingest_sweep.c, no I/O) merges
 * it with the dump by key. Keys only in the FIB are deleted, keys only in
 * the dump are added, keys in both with different attributes are
 * replaced in place (FIB_ADD_REPLACE), so a reader never finds a prefix
 * missing that the kernel kept. The walk and the sorts are single steps;
 * the merge runs in slices, its decisions applied here.
 *
 * Silent kernel changes: taking a link down or deleting it flushes routes
 * through it, and deleting or replacing a next-hop object changes routes
 * that use it, without RTM_DELROUTE. Both trigger a resync.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <net/if.h>
#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "fib/fib.h"
#include "daemon/handoff.h"
#include "daemon/ingest.h"
#include "daemon/ingest_sweep.h"
#include "daemon/log.h"

#ifndef NETLINK_GET_STRICT_CHK
#define NETLINK_GET_STRICT_CHK 12
#endif
#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define INGEST_BUF (64 * 1024)

enum ingest_phase { PH_IDLE, PH_DUMP, PH_APPLY };
enum ingest_step { ST_LINK, ST_NH, ST_V4, ST_V6, ST_DONE };

struct ingest_link {
	char name[IF_NAMESIZE];
	unsigned flags;
	uint8_t known;
};

struct ingest_set {
	struct fib_route *r;
	size_t n, cap;
	struct fib_nh *nh;
	size_t nnh, capnh;
};

struct ingest {
	struct event_base *base;
	struct fib *fib;
	struct ingest_conf conf;
	struct mnl_socket *ev_nl, *dump_nl;
	unsigned dump_portid;
	uint32_t seq;
	struct event *ev_read, *dump_read, *work;
	struct nl_nhtab *nht;
	struct ingest_link *links;
	size_t nlinks;
	struct ingest_stats st;
	char *buf;
	enum ingest_phase phase;
	enum ingest_step step;
	int first;          /* the first dump: fib_load, then ready */
	int resync_pending; /* another resync once this one is done */
	int paused;         /* ingest_pause: another thread writes the FIB */
	int strict;
	int filtered;       /* current route dump carries a table filter */
	struct ingest_set set, cur;
	struct ingest_sweep sweep;
	struct timespec t0;
	ingest_cb ready_cb, sync_cb;
	void *ready_arg, *sync_arg;
	struct log_rl rl_parse, rl_fib, rl_sock;
	struct {              /* first dump: fib_load off the main thread */
		struct handoff *ho; /* the loader thread */
		int running;
		struct ingest_set set;
		int err;
		uint64_t loaded;  /* routes the thread loaded: counted after the join */
	} load;
	struct nl_route scratch;
};

void
ingest_conf_default(struct ingest_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->families = INGEST_V4 | INGEST_V6;
	c->tables[0] = RT_TABLE_MAIN;
	c->ntables = 1;
	c->rcvbuf = 64u << 20;
	c->budget_us = 2000;
}

static double
ingest_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double
ingest_deadline(const struct ingest *ing)
{
	return ingest_now() + ing->conf.budget_us * 1e-6;
}

static int
ingest_table_wanted(const struct ingest *ing, uint32_t table)
{
	if (!ing->conf.ntables)
		return 1;
	for (unsigned i = 0; i < ing->conf.ntables; i++)
		if (ing->conf.tables[i] == table)
			return 1;
	return 0;
}

static int
ingest_family_wanted(const struct ingest *ing, int family)
{
	return (family == AF_INET && (ing->conf.families & INGEST_V4)) ||
	       (family == AF_INET6 && (ing->conf.families & INGEST_V6));
}

const char *
ingest_ifname(const struct ingest *ing, uint32_t ifindex)
{
	if (ifindex < ing->nlinks && ing->links[ifindex].known)
		return ing->links[ifindex].name;
	return NULL;
}

uint32_t
ingest_ifindex(const struct ingest *ing, const char *name)
{
	for (size_t i = 0; i < ing->nlinks; i++)
		if (ing->links[i].known && !strcmp(ing->links[i].name, name))
			return (uint32_t)i;
	return 0;
}

/* Sets. */

static void
ingest_set_reset(struct ingest_set *s)
{
	s->n = 0;
	s->nnh = 0;
}

static void
ingest_set_free(struct ingest_set *s)
{
	free(s->r);
	free(s->nh);
	memset(s, 0, sizeof(*s));
}

/* Append a route; r->nh is copied into the path pool. */
static int
ingest_set_add(struct ingest_set *s, const struct fib_route *r)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		struct fib_route *nr = realloc(s->r, cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		s->r = nr;
		s->cap = cap;
	}
	if (s->nnh + r->nh_count > s->capnh) {
		size_t cap = s->capnh ? s->capnh * 2 : 4096;
		struct fib_nh *nn;

		while (cap < s->nnh + r->nh_count)
			cap *= 2;
		nn = realloc(s->nh, cap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		s->nh = nn;
		s->capnh = cap;
	}
	s->r[s->n] = *r;
	s->r[s->n].nh = (const struct fib_nh *)(uintptr_t)s->nnh;
	if (r->nh_count)
		memcpy(&s->nh[s->nnh], r->nh, r->nh_count * sizeof(*r->nh));
	s->nnh += r->nh_count;
	s->n++;
	return 0;
}

/* Turn path indexes into pointers; the set is read-only afterwards. */
static void
ingest_set_fix(struct ingest_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		s->r[i].nh = s->r[i].nh_count ? &s->nh[(uintptr_t)s->r[i].nh] : NULL;
}

static int
ingest_nh_same_path(const struct fib_nh *a, const struct fib_nh *b)
{
	return a->gw_family == b->gw_family &&
	       (!a->gw_family || !memcmp(a->gw.b, b->gw.b, a->gw_family == AF_INET ? 4 : 16)) &&
	       (!a->ifindex || !b->ifindex || a->ifindex == b->ifindex);
}

/* FIB operations with counting. */

static void
ingest_fib_add(struct ingest *ing, const struct fib_route *r, unsigned flags)
{
	int ret = fib_add(ing->fib, r, flags);

	if (ret == 0)
		ing->st.routes_added++;
	else if (ret == -EEXIST)
		ing->st.add_exists++;
	else {
		ing->st.fib_errors++;
		log_warnx_rl(&ing->rl_fib, "fib_add: %s", strerror(-ret));
	}
}

static void
ingest_fib_del(struct ingest *ing, const struct fib_route *r)
{
	int ret = fib_del(ing->fib, r);

	if (ret == 0)
		ing->st.routes_deleted++;
	else if (ret == -ENOENT)
		ing->st.del_missing++;
	else {
		ing->st.fib_errors++;
		log_warnx_rl(&ing->rl_fib, "fib_del: %s", strerror(-ret));
	}
}

/* Messages. */

static void ingest_start_dump(struct ingest *ing);

static void
ingest_link_msg(struct ingest *ing, const struct nlmsghdr *nlh, int from_dump)
{
	const struct ifinfomsg *ifi;
	const struct nlattr *a;
	struct ingest_link *l;
	unsigned idx, was_up;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*ifi))
		return;
	ifi = mnl_nlmsg_get_payload(nlh);
	if (ifi->ifi_index <= 0 || ifi->ifi_index > (1 << 20))
		return;
	idx = (unsigned)ifi->ifi_index;
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
	mnl_attr_for_each(a, nlh, sizeof(*ifi)) {
		if (mnl_attr_get_type(a) == IFLA_IFNAME &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0) {
			strncpy(l->name, mnl_attr_get_str(a), sizeof(l->name) - 1);
			l->name[sizeof(l->name) - 1] = 0;
		}
	}
	l->known = 1;
	l->flags = ifi->ifi_flags;
	if (!from_dump && was_up && !(ifi->ifi_flags & IFF_UP)) {
		log_debug("link %s down: resync", l->name);
		ingest_resync(ing);
	}
}

static void
ingest_nh_msg(struct ingest *ing, const struct nlmsghdr *nlh, int from_dump)
{
	enum nl_err err;
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
	}
	ing->st.nh_objects = nl_nhtab_count(ing->nht);
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
	if (ret == NL_SKIP || !ingest_family_wanted(ing, nr->r.family) ||
	    !ingest_table_wanted(ing, nr->r.table)) {
		ing->st.skipped++;
		return;
	}
	if (from_dump) {
		if (ingest_set_add(&ing->set, &nr->r) < 0) {
			log_warnx_rl(&ing->rl_fib, "dump set: out of memory");
			ing->st.fib_errors++;
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

static void
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
	default:
		break;
	}
}

/* Phases. */

static void ingest_ev_read(evutil_socket_t fd, short what, void *arg);

static void
ingest_go_idle(struct ingest *ing)
{
	ing->phase = PH_IDLE;
	if (ing->paused)
		return; /* ingest_resume goes on from here */
	if (ing->resync_pending) {
		ing->resync_pending = 0;
		ingest_start_dump(ing);
		return;
	}
	event_add(ing->ev_read, NULL);
	if (ing->sync_cb)
		event_active(ing->work, 0, 0);
}

static void
ingest_ready(struct ingest *ing)
{
	ing->first = 0;
	ing->st.ready = 1;
	ing->st.ingest_seconds = ingest_now() - ((double)ing->t0.tv_sec + ing->t0.tv_nsec * 1e-9);
	if (ing->ready_cb)
		ing->ready_cb(ing, ing->ready_arg);
}

/*
 * First dump: one fib_load per family (the FIB publishes each once). It
 * runs on a loader thread, which is the FIB's only writer meanwhile: the
 * main thread dumps IPv6 while IPv4 loads, and its loop keeps serving
 * other events instead of stalling for the whole build. Events wait in
 * the socket until both loads are done.
 */
static int
ingest_load_set(struct ingest *ing, struct ingest_set *s)
{
	size_t i = 0;
	int err = 0;

	while (i < s->n) {
		size_t j = i;
		int ret;

		while (j < s->n && s->r[j].family == s->r[i].family)
			j++;
		/* Several routes of one key (IPv4 appends, IPv6 routes on
		 * different devices) stay in dump order: fib_load keeps them
		 * as appends. */
		ret = fib_load(ing->fib, &s->r[i], j - i);
		if (ret < 0)
			err = ret;
		else
			ing->load.loaded += j - i; /* not st: the main thread reads it */
		i = j;
	}
	return err;
}

/* The loader thread's job. Context: writer (the loader thread). */
static void
ingest_loader(void *arg)
{
	struct ingest *ing = arg;

	ing->load.err = ingest_load_set(ing, &ing->load.set);
}

/* Hand the collected routes (paths fixed) to the loader. */
static void
ingest_load_start(struct ingest *ing)
{
	ing->load.set = ing->set;
	memset(&ing->set, 0, sizeof(ing->set));
	ing->load.running = 1;
	if (handoff_run(ing->load.ho) < 0)
		handoff_run_here(ing->load.ho);
}

static void
ingest_load_finish(struct ingest *ing)
{
	ingest_ready(ing);
	ingest_go_idle(ing);
}

/* The loader is done (joined). Context: main loop. */
static void
ingest_load_done(void *arg)
{
	struct ingest *ing = arg;

	ing->load.running = 0;
	ing->st.routes_loaded += ing->load.loaded;
	ing->load.loaded = 0;
	ingest_set_free(&ing->load.set); /* a full table's dump set is ~90 MB */
	if (ing->load.err < 0) {
		log_warnx("fib_load: %s: resync", strerror(-ing->load.err));
		ing->resync_pending = 1;
		ing->load.err = 0;
	}
	if (ing->phase != PH_APPLY)
		return; /* still dumping: the rest loads when that is done */
	if (ing->set.n)
		ingest_load_start(ing);
	else
		ingest_load_finish(ing);
}

static int
ingest_walk_cb(const struct fib_match *m, void *arg)
{
	struct ingest *ing = arg;
	struct fib_route r;

	if (!ingest_table_wanted(ing, m->table))
		return 0;
	memset(&r, 0, sizeof(r));
	r.family = m->family;
	r.plen = m->plen;
	r.type = m->type;
	r.tos = m->tos;
	r.table = m->table;
	r.dst = m->prefix;
	r.priority = m->info->priority;
	r.protocol = m->info->protocol;
	r.scope = m->info->scope;
	r.prefsrc_set = m->info->prefsrc_set;
	r.prefsrc = m->info->prefsrc;
	r.nh_count = m->info->nh_count;
	r.encap_type = m->info->encap_type;
	r.nh_id = m->info->nh_id;
	r.nh = m->info->nh;
	return ingest_set_add(&ing->cur, &r) < 0 ? -ENOMEM : 0;
}

/* The merge's decisions, applied to the FIB. */
static void
ingest_merge_apply(void *arg, enum ingest_sweep_op op, const struct fib_route *r)
{
	struct ingest *ing = arg;

	if (op == INGEST_SWEEP_DEL)
		ingest_fib_del(ing, r);
	else
		ingest_fib_add(ing, r, op == INGEST_SWEEP_REPLACE ? FIB_ADD_REPLACE : FIB_ADD_APPEND);
}

static void
ingest_merge_begin(struct ingest *ing)
{
	ingest_set_reset(&ing->cur);
	for (int f = 0; f < 2; f++) {
		int family = f ? AF_INET6 : AF_INET;

		if (ingest_family_wanted(ing, family) &&
		    fib_walk(ing->fib, family, ingest_walk_cb, ing) < 0) {
			log_warnx("resync: out of memory walking the FIB");
			ing->resync_pending = 1;
		}
	}
	ingest_set_fix(&ing->cur);
	if (ingest_sweep_init(&ing->sweep, ing->set.r, ing->set.n, ing->cur.r, ing->cur.n,
			      ingest_merge_apply, ing) < 0) {
		log_warnx("resync: out of memory sorting");
		ing->resync_pending = 1; /* nothing to merge; retry */
	}
}

static void
ingest_apply_slice(struct ingest *ing)
{
	double deadline = ingest_deadline(ing);
	unsigned n = 0;

	while (!ingest_sweep_done(&ing->sweep)) {
		ingest_sweep_step(&ing->sweep);
		if (++n % 64 == 0 && ingest_now() >= deadline) {
			ing->st.slices++;
			event_active(ing->work, 0, 0);
			return;
		}
	}
	ingest_sweep_fini(&ing->sweep);
	ingest_set_free(&ing->set);
	ingest_set_free(&ing->cur);
	ing->st.resyncs++;
	ing->st.last_resync_seconds =
		ingest_now() - ((double)ing->t0.tv_sec + ing->t0.tv_nsec * 1e-9);
	log_info("resync done in %.3f s: %zu v4 / %zu v6 routes", ing->st.last_resync_seconds,
		 fib_count(ing->fib, AF_INET), fib_count(ing->fib, AF_INET6));
	ingest_go_idle(ing);
}

static void
ingest_apply(struct ingest *ing)
{
	if (ing->first)
		ing->st.dump_seconds =
			ingest_now() - ((double)ing->t0.tv_sec + ing->t0.tv_nsec * 1e-9);
	ing->phase = PH_APPLY;
	event_del(ing->dump_read);
	ingest_set_fix(&ing->set);
	if (ing->first) {
		if (!ing->load.running) {
			if (ing->set.n)
				ingest_load_start(ing);
			else
				ingest_load_finish(ing);
		}
		return;
	}
	ingest_merge_begin(ing);
	ingest_apply_slice(ing);
}

/* Dumps. */

static int
ingest_send_dump(struct ingest *ing)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++ing->seq;
	ing->filtered = 0;
	switch (ing->step) {
	case ST_LINK: {
		struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

		nlh->nlmsg_type = RTM_GETLINK;
		ifi->ifi_family = AF_UNSPEC;
		break;
	}
	case ST_NH: {
		struct nhmsg *nhm = mnl_nlmsg_put_extra_header(nlh, sizeof(*nhm));

		nlh->nlmsg_type = RTM_GETNEXTHOP;
		nhm->nh_family = AF_UNSPEC;
		break;
	}
	case ST_V4:
	case ST_V6: {
		struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));

		nlh->nlmsg_type = RTM_GETROUTE;
		rtm->rtm_family = ing->step == ST_V4 ? AF_INET : AF_INET6;
		if (ing->strict && ing->conf.ntables == 1) {
			mnl_attr_put_u32(nlh, RTA_TABLE, ing->conf.tables[0]);
			ing->filtered = 1;
		}
		break;
	}
	default:
		return -EINVAL;
	}
	if (mnl_socket_sendto(ing->dump_nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	return 0;
}

/* Move to the next dump step that applies, or to APPLY. */
static void
ingest_next_step(struct ingest *ing)
{
	if (ing->first && ing->step == ST_V4 && (ing->conf.families & INGEST_V6) &&
	    ing->set.n) {
		ingest_set_fix(&ing->set);
		ingest_load_start(ing);
	}
	for (;;) {
		ing->step++;
		if (ing->step == ST_V4 && !(ing->conf.families & INGEST_V4))
			continue;
		if (ing->step == ST_V6 && !(ing->conf.families & INGEST_V6))
			continue;
		break;
	}
	if (ing->step >= ST_DONE) {
		ingest_apply(ing);
		return;
	}
	if (ingest_send_dump(ing) < 0) {
		log_warn("dump request");
		ingest_apply(ing); /* what we have; the next resync retries */
		ing->resync_pending = 1;
	}
}

/*
 * Before a resync dump, empty the event socket: what is queued predates
 * the dump, which will show its effect. This matters beyond saving work:
 * the kernel reports ENOBUFS only once per congestion, and clears the
 * congestion when the queue runs empty; without this, events lost while
 * the resync runs would go unreported.
 */
static void
ingest_ev_discard(struct ingest *ing)
{
	int fd = mnl_socket_get_fd(ing->ev_nl);
	uint64_t left = 2ull * ing->conf.rcvbuf + (1u << 20); /* bounded under a flood */

	while (left) {
		ssize_t n = recv(fd, ing->buf, INGEST_BUF, MSG_DONTWAIT);

		if (n < 0 && errno != EINTR && errno != ENOBUFS)
			break;
		left = n > 0 && (uint64_t)n < left ? left - (uint64_t)n : n > 0 ? 0 : left;
	}
}

static void
ingest_start_dump(struct ingest *ing)
{
	ing->phase = PH_DUMP;
	event_del(ing->ev_read);
	if (!ing->first)
		ingest_ev_discard(ing);
	clock_gettime(CLOCK_MONOTONIC, &ing->t0);
	ingest_set_reset(&ing->set);
	nl_nhtab_clear(ing->nht);
	ing->step = ST_LINK;
	event_add(ing->dump_read, NULL);
	if (ingest_send_dump(ing) < 0) {
		log_warn("dump request");
		ingest_next_step(ing);
	}
}

/* NLMSG_ERROR or NLMSG_DONE carrying an error for the running dump. */
static void
ingest_dump_error(struct ingest *ing, int err)
{
	if (err == 0) {
		ingest_next_step(ing);
		return;
	}
	if (ing->filtered) {
		log_info("kernel refused a filtered route dump (%s): dumping unfiltered",
			 strerror(err));
		ing->strict = 0;
		ing->st.strict = 0;
		if (ingest_send_dump(ing) == 0)
			return;
	}
	if (ing->step != ST_NH) /* kernels before 5.3 have no next-hop objects */
		log_warnx("dump step %d: %s", ing->step, strerror(err));
	ingest_next_step(ing);
}

static void
ingest_dump_read(evutil_socket_t fd, short what, void *arg)
{
	struct ingest *ing = arg;
	double deadline = ingest_deadline(ing);

	while (ing->phase == PH_DUMP) {
		ssize_t n = recv(fd, ing->buf, INGEST_BUF, MSG_DONTWAIT);
		const struct nlmsghdr *nlh;
		int len;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN) {
				log_warnx_rl(&ing->rl_sock, "dump socket: %s: restarting the dump",
					     strerror(errno));
				ingest_start_dump(ing);
			}
			return;
		}
		ing->st.bytes += (uint64_t)n;
		len = (int)n;
		for (nlh = (const struct nlmsghdr *)ing->buf; nl_msg_ok(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_seq != ing->seq || nlh->nlmsg_pid != ing->dump_portid)
				continue;
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				ing->st.dump_intr++;
			if (nlh->nlmsg_type == NLMSG_DONE) {
				int err = 0;

				if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int))
					err = -*(const int *)mnl_nlmsg_get_payload(nlh);
				ingest_dump_error(ing, err);
				break;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

				ingest_dump_error(ing, nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(*e) ?
							       -e->error : EPROTO);
				break;
			}
			ingest_msg(ing, nlh, 1);
		}
		if (ing->phase == PH_DUMP && ingest_now() >= deadline) {
			ing->st.slices++;
			return; /* still readable: the loop calls again */
		}
	}
}

/* Events. */

static void
ingest_ev_read(evutil_socket_t fd, short what, void *arg)
{
	struct ingest *ing = arg;
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

static void
ingest_work(evutil_socket_t fd, short what, void *arg)
{
	struct ingest *ing = arg;

	if (ing->paused)
		return;
	if (ing->phase == PH_APPLY)
		ingest_apply_slice(ing);
	else if (ing->phase == PH_IDLE)
		ingest_ev_read(mnl_socket_get_fd(ing->ev_nl), EV_READ, ing);
}

void
ingest_resync(struct ingest *ing)
{
	if (ing->phase != PH_IDLE || ing->paused) {
		ing->resync_pending = 1;
		return;
	}
	ingest_start_dump(ing);
}

void
ingest_sync(struct ingest *ing, ingest_cb cb, void *arg)
{
	ing->sync_cb = cb;
	ing->sync_arg = arg;
	if (ing->phase == PH_IDLE && !ing->paused)
		event_active(ing->work, 0, 0);
}

/*
 * While paused nothing is read from the event socket: route, link and
 * next-hop messages wait there in order (a flood that fills the buffer
 * costs an ENOBUFS and a resync after ingest_resume, as at any time);
 * a resync asked for meanwhile starts on resume; a sync callback runs
 * once the waiting events are applied after it.
 */
int
ingest_pause(struct ingest *ing)
{
	if (!ingest_idle(ing) || ing->paused)
		return -EBUSY;
	ing->paused = 1;
	event_del(ing->ev_read);
	event_del(ing->work);
	return 0;
}

void
ingest_resume(struct ingest *ing)
{
	if (!ing->paused)
		return;
	ing->paused = 0;
	ingest_go_idle(ing);
	/* what arrived meanwhile is read at once (level-triggered), the
	 * sync callback through the work event */
}

/* Setup. */

static int
ingest_rcvbuf(int fd, unsigned size)
{
	int v = (int)size;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) == 0)
		return 0;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) == 0) {
		log_info("SO_RCVBUFFORCE refused: receive buffer limited by net.core.rmem_max");
		return 0;
	}
	return -errno;
}

struct ingest *
ingest_new(struct event_base *base, struct fib *fib, const struct ingest_conf *c)
{
	struct ingest *ing = calloc(1, sizeof(*ing));
	static const unsigned groups[] = { RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_LINK,
					   RTNLGRP_NEXTHOP };
	int one = 1, err;

	if (!ing)
		return NULL;
	ing->base = base;
	ing->fib = fib;
	ing->conf = *c;
	if (!ing->conf.budget_us)
		ing->conf.budget_us = 2000;
	ing->first = 1;
	ing->buf = malloc(INGEST_BUF);
	ing->nht = nl_nhtab_new();
	ing->ev_nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	ing->dump_nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!ing->buf || !ing->nht || !ing->ev_nl || !ing->dump_nl)
		goto fail;
	if (mnl_socket_bind(ing->ev_nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_bind(ing->dump_nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto fail;
	ing->dump_portid = mnl_socket_get_portid(ing->dump_nl);
	if ((err = ingest_rcvbuf(mnl_socket_get_fd(ing->ev_nl), ing->conf.rcvbuf)) < 0) {
		errno = -err;
		goto fail;
	}
	ingest_rcvbuf(mnl_socket_get_fd(ing->dump_nl), 4u << 20);
	ing->strict = mnl_socket_setsockopt(ing->dump_nl, NETLINK_GET_STRICT_CHK, &one,
					    sizeof(one)) == 0;
	ing->st.strict = ing->strict;
	/* Subscribe now, before any dump, so no change falls in between. */
	for (unsigned i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		unsigned g = groups[i];

		if (mnl_socket_setsockopt(ing->ev_nl, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) < 0 &&
		    g != RTNLGRP_NEXTHOP)
			goto fail;
	}
	ing->ev_read = event_new(base, mnl_socket_get_fd(ing->ev_nl), EV_READ | EV_PERSIST,
				 ingest_ev_read, ing);
	ing->dump_read = event_new(base, mnl_socket_get_fd(ing->dump_nl), EV_READ | EV_PERSIST,
				   ingest_dump_read, ing);
	ing->work = event_new(base, -1, 0, ingest_work, ing);
	ing->load.ho = handoff_new(base, ingest_loader, ingest_load_done, ing);
	if (!ing->ev_read || !ing->dump_read || !ing->work || !ing->load.ho)
		goto fail;
	ing->rl_parse.burst = 5;
	ing->rl_fib.burst = 5;
	ing->rl_sock.burst = 2;
	return ing;
fail:
	err = errno;
	ingest_free(ing);
	errno = err;
	return NULL;
}

int
ingest_start(struct ingest *ing, ingest_cb ready_cb, void *arg)
{
	ing->ready_cb = ready_cb;
	ing->ready_arg = arg;
	ingest_start_dump(ing);
	return 0;
}

void
ingest_stats(const struct ingest *ing, struct ingest_stats *st)
{
	*st = ing->st;
	st->nh_objects = nl_nhtab_count(ing->nht);
}

int
ingest_idle(const struct ingest *ing)
{
	return ing->phase == PH_IDLE && !ing->load.running && !ing->resync_pending;
}

int
ingest_paused(const struct ingest *ing)
{
	return ing->paused;
}

int
ingest_reconfigure(struct ingest *ing, const struct ingest_conf *c)
{
	int restart = c->families != ing->conf.families || c->ntables != ing->conf.ntables ||
		      memcmp(c->tables, ing->conf.tables, c->ntables * sizeof(c->tables[0]));

	ing->conf.budget_us = c->budget_us;
	if (c->rcvbuf != ing->conf.rcvbuf) {
		ing->conf.rcvbuf = c->rcvbuf;
		ingest_rcvbuf(mnl_socket_get_fd(ing->ev_nl), c->rcvbuf);
	}
	return restart;
}

void
ingest_free(struct ingest *ing)
{
	if (!ing)
		return;
	handoff_free(ing->load.ho);
	ingest_set_free(&ing->load.set);
	if (ing->ev_read)
		event_free(ing->ev_read);
	if (ing->dump_read)
		event_free(ing->dump_read);
	if (ing->work)
		event_free(ing->work);
	if (ing->ev_nl)
		mnl_socket_close(ing->ev_nl);
	if (ing->dump_nl)
		mnl_socket_close(ing->dump_nl);
	nl_nhtab_free(ing->nht);
	ingest_sweep_fini(&ing->sweep);
	ingest_set_free(&ing->set);
	ingest_set_free(&ing->cur);
	free(ing->links);
	free(ing->buf);
	free(ing);
}
