/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ingest internals, shared by the files of the ingest module
 *
 * Not installed and not for other modules: struct ingest and the steps
 * one ingest file calls in another. The files, by job:
 *
 *   daemon/ingest.c         setup, public API, pause/resume, the work event
 *   daemon/ingest_event.c   messages (route, link, next-hop object) and the
 *                           event socket read in slices of budget_us
 *   daemon/ingest_policy.c  rules, links and addresses into the FIB's
 *                           policy (fib/policy.h), published once a slice
 *   daemon/ingest_dump.c    the dump sets, the dump requests and their
 *                           replies, then APPLY
 *   daemon/ingest_load.c    the first dump: fib_load on the loader thread
 *                           (daemon/handoff.c), then ready
 *   daemon/ingest_resync.c  a later dump: walk the FIB and apply
 *                           daemon/ingest_sweep.c's merge in slices
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
 * Context: main loop, for every function declared here but
 * ingest_loader (Context: writer, the loader thread) and ingest_reader
 * (the reader thread). While the loader runs, the IPv6 dump goes into the
 * dump set and nothing else is written.
 *
 * Route dumps (ST_V4, ST_V6) are read and parsed by the reader thread
 * (daemon/handoff.c, not a FIB writer): the kernel's dump work in recv,
 * the parse and the page faults of a growing dump set cost 3-46 ms a
 * call on a loaded machine, more than a loop slice. While it runs it
 * owns the dump socket, ing->buf, ing->scratch, the dump set, the parse
 * rate limiters and ing->st (ingest_stats answers rd.snap, taken at its
 * start); the loop writes none of them and reads only nht, as the
 * reader does. It ends at the dump's end (or a socket error, or
 * rd.stop), and ingest_reader_done goes on with the next step on the
 * loop. Without a thread the loop reads the dump in slices as before.
 */
#ifndef DAEMON_INGEST_PRIV_H
#define DAEMON_INGEST_PRIV_H

#include <net/if.h>
#include <sys/socket.h>
#include <time.h>
#include <event2/event.h>

#include "fib/fib.h"
#include "fib/policy.h"
#include "daemon/ingest.h"
#include "daemon/ingest_sweep.h"
#include "daemon/log.h"

#define INGEST_BUF (64 * 1024)

enum ingest_phase { PH_IDLE, PH_DUMP, PH_APPLY };
enum ingest_step { ST_LINK, ST_ADDR, ST_RULE4, ST_RULE6, ST_NH, ST_NHB, ST_V4, ST_V6, ST_DONE };

/*
 * Resilient groups' buckets (ST_NHB) are kernel state the kernel migrates
 * on its own, on the group's idle and unbalanced timers. Linux 6.18
 * notifies each migrated bucket (RTM_NEWNEXTHOPBUCKET on RTNLGRP_NEXTHOP:
 * a resync follows, daemon/ingest_event.c), but nothing promises that of
 * every kernel, and a lost notification would leave a stale map for good.
 * So while a resilient group exists their dump is also repeated every
 * INGEST_NHB_SECONDS: the dump socket asks
 * RTM_GETNEXTHOPBUCKET alone, and a bucket found moved asks for a resync,
 * which gives the routes through the group their new map. A group added
 * or changed by an event, or a route through a group whose buckets are
 * not known, asks for a resync at once (daemon/ingest_event.c).
 */
#define INGEST_NHB_SECONDS 10

/* ingest_policy.done: the policy kinds whose dump ended without error */
#define INGEST_POL_LINK 0x1
#define INGEST_POL_ADDR 0x2
#define INGEST_POL_RULE4 0x4
#define INGEST_POL_RULE6 0x8

/* A dump's policy objects, applied in one step (daemon/ingest_policy.c). */
struct ingest_policy {
	struct fib_rule *rules;
	size_t nrules, caprules;
	struct fib_link *links;
	size_t nlinks, caplinks;
	struct fib_ifaddr *addrs;
	size_t naddrs, capaddrs;
	unsigned done; /* INGEST_POL_* */
	int intr;      /* a policy dump flagged NLM_F_DUMP_INTR */
	int nomem;     /* the collection is incomplete */
	int dirty;     /* staging changed since the last fib_policy_publish */
};

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
	uint8_t *map; /* the routes' bucket maps (res_map), as nh */
	size_t nmap, capmap;
};

struct ingest {
	struct event_base *base;
	struct fib *fib;
	struct ingest_conf conf;
	struct mnl_socket *ev_nl, *dump_nl;
	unsigned dump_portid;
	uint32_t seq;
	struct event *ev_read, *dump_read, *work;
	struct event *nhb_timer; /* the buckets' re-dump (INGEST_NHB_SECONDS) */
	int nhb_only;            /* the running dump is that re-dump */
	int nhb_changed;         /* and it found a bucket moved */
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
	int set_nomem;      /* a route of this dump missed the set: resync after */
	struct ingest_policy pol;
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
		int last;         /* the last load of the first dump: measure after it */
		uint64_t bytes;   /* fib_stats' bytes after the last load (0: none) */
		struct fib_stats stats; /* and the whole of it */
	} load;
	struct {              /* a route dump read off the main loop */
		struct handoff *ho; /* the reader thread */
		int running;
		int stop;         /* atomic: ingest_free asks the thread to end */
		int done, err;    /* the dump's end was read, its error */
		int sock_err;     /* the socket failed: errno */
		struct ingest_stats snap; /* ingest_stats' answer meanwhile */
	} rd;
	struct {              /* a resync's merge prepared off the main loop */
		struct handoff *ho; /* the merge thread */
		int running;
		int walk_err, sort_err;
	} mp;
	struct nl_route scratch;
};

static inline double
ingest_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double
ingest_deadline(const struct ingest *ing)
{
	return ingest_now() + ing->conf.budget_us * 1e-6;
}

static inline int
ingest_table_wanted(const struct ingest *ing, uint32_t table)
{
	if (!ing->conf.ntables)
		return 1;
	for (unsigned i = 0; i < ing->conf.ntables; i++)
		if (ing->conf.tables[i] == table)
			return 1;
	return 0;
}

static inline int
ingest_family_wanted(const struct ingest *ing, int family)
{
	return (family == AF_INET && (ing->conf.families & INGEST_V4)) ||
	       (family == AF_INET6 && (ing->conf.families & INGEST_V6));
}

/* ingest.c: back to IDLE, or straight into a pending resync. */
void ingest_go_idle(struct ingest *ing);

/* ingest_event.c: the FIB's changes, counted in st. Context: writer. */
void ingest_fib_add(struct ingest *ing, const struct fib_route *r, unsigned flags);
void ingest_fib_del(struct ingest *ing, const struct fib_route *r);
/* One route, link or next-hop message, from a dump or an event. */
void ingest_msg(struct ingest *ing, const struct nlmsghdr *nlh, int from_dump);
/* The event socket's callback: events in slices of budget_us. */
void ingest_ev_read(evutil_socket_t fd, short what, void *arg);

/* ingest_policy.c: rule, address and link messages; the policy dump
 * collected, then applied in one step; one publish per slice or dump. */
void ingest_rule_msg(struct ingest *ing, const struct nlmsghdr *nlh, int from_dump);
void ingest_addr_msg(struct ingest *ing, const struct nlmsghdr *nlh, int from_dump);
void ingest_policy_link(struct ingest *ing, const struct nl_link *nk, int from_dump);
void ingest_policy_dump_begin(struct ingest *ing);
void ingest_policy_step_done(struct ingest *ing, unsigned kind, int err);
void ingest_policy_dump_apply(struct ingest *ing);
void ingest_policy_publish(struct ingest *ing);
void ingest_policy_free(struct ingest *ing);

/* ingest_dump.c: the dump sets. */
void ingest_set_reset(struct ingest_set *s);
void ingest_set_free(struct ingest_set *s);
int ingest_set_add(struct ingest_set *s, const struct fib_route *r);
void ingest_set_fix(struct ingest_set *s);
/* A dump from the first step; the dump socket's callback. */
void ingest_start_dump(struct ingest *ing);
/* The buckets' re-dump alone, from IDLE; back to IDLE when done. */
void ingest_nhb_dump(struct ingest *ing);
/* ingest.c: arm the buckets' timer (in ms) while resilient groups exist;
 * an earlier expiry already pending is kept. */
void ingest_nhb_arm(struct ingest *ing, unsigned ms);
void ingest_dump_read(evutil_socket_t fd, short what, void *arg);

/* ingest_load.c: the first dump into the FIB on the loader thread. */
void ingest_load_start(struct ingest *ing);
void ingest_load_finish(struct ingest *ing);
void ingest_loader(void *arg);    /* Context: writer (the loader thread). */
void ingest_load_done(void *arg); /* the loader joined */
void ingest_reader(void *arg);      /* Context: the reader thread. */
void ingest_reader_done(void *arg); /* the reader joined */
void ingest_merge_prep(void *arg);     /* Context: the merge thread. */
void ingest_merge_prepped(void *arg);  /* the merge thread joined */

/* ingest_resync.c: a later dump merged into the FIB in slices. */
void ingest_merge_begin(struct ingest *ing);
void ingest_apply_slice(struct ingest *ing);

#endif /* DAEMON_INGEST_PRIV_H */
