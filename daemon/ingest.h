/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ingest, mirroring the kernel's routing tables into the FIB
 *
 * Two rtnetlink sockets. The event socket joins RTNLGRP_IPV4_ROUTE,
 * RTNLGRP_IPV6_ROUTE, RTNLGRP_LINK, RTNLGRP_NEXTHOP, the rule groups
 * (RTNLGRP_IPV4_RULE, RTNLGRP_IPV6_RULE) and the address groups
 * (RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR) before anything is dumped,
 * so every change after the dump started is queued in its receive
 * buffer (SO_RCVBUFFORCE, default 64 MiB). The dump socket then dumps
 * links, addresses, the rules of each mirrored family (applied to the
 * FIB's policy and published once, daemon/ingest_policy.c), next-hop
 * objects and the routes of each mirrored family (with
 * NETLINK_GET_STRICT_CHK and an RTA_TABLE filter when one table is
 * mirrored and the kernel accepts it).
 *
 *   idle ──ENOBUFS / link down / nexthop changed──┐
 *    ^                                             v
 *    |      dump: links -> addrs -> rules -> nexthops -> v4 -> v6
 *    |                                             |
 *    |  first dump: fib_load per family    resync: walk the FIB once,
 *    |  on a loader thread (IPv4 builds    sort both, merge in slices:
 *    |  while IPv6 is dumped)              del absent, replace changed,
 *    |                                     add new (readers never see
 *    |                                     an empty FIB)
 *    └──────── then the queued events, in order ──┘
 *
 * Replaying events that are older than the dump converges: each event
 * states what the route is (add/replace/delete), so applying an old one
 * and then the newer ones ends in the newest state.
 *
 * All work runs on the main thread in slices of at most budget_us; a
 * slice that runs out re-arms itself (socket still readable, or
 * event_active on a deferred event) so the loop serves other events. The
 * one exception is the first load: fib_load is a single call, so it runs
 * on a loader thread that is the FIB's only writer until it hands back
 * (through an eventfd) and the main thread applies the queued events.
 * The daemon lends the FIB to a thread of its own the same way
 * (fib_compact): ingest_pause stops applying, events wait in the socket,
 * ingest_resume applies them.
 *
 * The fields of struct ingest_conf are those of struct conf_netlink
 * (conf/conf.h): families bits, tables (none: all), rcvbuf, budget.
 */
#ifndef DAEMON_INGEST_H
#define DAEMON_INGEST_H

#include <stdint.h>

#include "daemon/nl.h"

struct event_base;
struct fib;
struct ingest;

#define INGEST_V4 0x1
#define INGEST_V6 0x2
#define INGEST_TABLES_MAX 16

/* What to mirror; a later config module fills this from YAML. */
struct ingest_conf {
	unsigned families;                 /* INGEST_V4 | INGEST_V6 */
	uint32_t tables[INGEST_TABLES_MAX];
	unsigned ntables;                  /* 0 (the default): every table */
	unsigned rcvbuf;                   /* event socket, bytes: 64 MiB */
	unsigned budget_us;                /* per slice: 2000 (conf: netlink.slice_budget_us) */
};

struct ingest_stats {
	uint64_t msgs;            /* netlink messages read, both sockets */
	uint64_t bytes;
	uint64_t routes_added;    /* fib_add that succeeded */
	uint64_t routes_deleted;  /* fib_del that succeeded */
	uint64_t routes_loaded;   /* by fib_load after the first dump */
	uint64_t add_exists;      /* fib_add -EEXIST (old events replayed) */
	uint64_t del_missing;     /* fib_del -ENOENT */
	uint64_t fib_errors;      /* other fib_add / fib_del failures */
	uint64_t skipped;         /* cloned, other table or family, multicast */
	uint64_t parse_errors[NL_ERR_COUNT];
	uint64_t unknown_attrs;
	uint64_t drops;           /* ENOBUFS on the event socket */
	uint64_t resyncs;         /* completed */
	uint64_t dump_intr;       /* dumps flagged NLM_F_DUMP_INTR */
	uint64_t slices;          /* slices that ran out of budget */
	uint64_t nh_objects;
	uint64_t nh_bucket_dumps;   /* re-dumps of the resilient groups' buckets (timer) */
	uint64_t nh_bucket_changes; /* of them, those that found a bucket moved: a resync */
	uint64_t rules_applied;   /* fib_rule_add/del that succeeded, dumps included */
	uint64_t rules_rejected;  /* rule messages the parser rejected (also parse_errors) */
	uint64_t addrs_applied;   /* fib_ifaddr_add/del that succeeded */
	uint64_t addrs_rejected;
	uint64_t links_applied;   /* fib_link_set/del that succeeded */
	uint64_t links_rejected;
	uint64_t policy_stale;    /* -EEXIST / -ENOENT: old events replayed after a dump */
	uint64_t policy_errors;   /* other policy failures, fib_policy_publish's included */
	uint64_t policy_publishes; /* fib_policy_publish calls: one per slice or dump */
	int ready;
	int strict;               /* kernel-side table filter in use */
	double ingest_seconds;    /* first dump request to ready */
	double dump_seconds;      /* of which dumping and parsing */
	double last_resync_seconds;
	uint64_t load_bytes;      /* the FIB's bytes right after the first load, measured
				   * on the loader thread (0: not measured) */
};

typedef void (*ingest_cb)(struct ingest *ing, void *arg);

/* Fill defaults. Context: any. */
void ingest_conf_default(struct ingest_conf *c);

/*
 * Open and configure both sockets (nothing read yet). Returns NULL with
 * errno set. Context: main loop; fib's writer from now on is this
 * thread.
 */
struct ingest *ingest_new(struct event_base *base, struct fib *fib, const struct ingest_conf *c);
/* Context: main loop, outside the loop's callbacks of this ingest. */
void ingest_free(struct ingest *ing);

/* Subscribe, then start the first dump; ready_cb runs once it is in the
 * FIB. Returns 0 or -errno. Context: main loop. */
int ingest_start(struct ingest *ing, ingest_cb ready_cb, void *arg);

/*
 * Call cb once every event queued in the socket at the time of this call
 * is applied and no dump or resync is running (for tests and for a later
 * "fibctl sync"). Context: main loop.
 */
void ingest_sync(struct ingest *ing, ingest_cb cb, void *arg);

/* Force a resync, as after ENOBUFS. Context: main loop. */
void ingest_resync(struct ingest *ing);

/*
 * Apply the settings that can change live: the slice budget and the event
 * socket's receive buffer. Returns 1 when families or tables differ (they
 * are kept: a restart applies them), else 0. Context: main loop.
 */
int ingest_reconfigure(struct ingest *ing, const struct ingest_conf *c);

/* Context: main loop. */
void ingest_stats(const struct ingest *ing, struct ingest_stats *st);
/* 1 when no dump, resync or load is running (the main thread may then
 * rebuild the FIB between two events), else 0. Context: main loop. */
int ingest_idle(const struct ingest *ing);

/*
 * Stop applying kernel changes so that another thread may be the FIB's
 * writer: the event socket is not read (its messages wait there, in
 * order), a resync asked for meanwhile waits, an ingest_sync callback
 * waits too. Only when idle (ingest_idle): returns 0, or -EBUSY (a dump,
 * resync or load runs, or already paused). Context: main loop.
 */
int ingest_pause(struct ingest *ing);
/* Apply what waited, from the oldest event on (and start a resync asked
 * for meanwhile). Context: main loop, once the other writer is done. */
void ingest_resume(struct ingest *ing);
/* 1 between ingest_pause and ingest_resume. Context: main loop. */
int ingest_paused(const struct ingest *ing);
/* The FIB's fib_stats as the loader thread took them after the first
 * load: 1, or 0 when it took none. Context: main loop, after ready. */
int ingest_load_stats(const struct ingest *ing, struct fib_stats *st);

/* 1 when the main loop is the FIB's writer now: no loader thread runs and
 * ingest is not paused for another writer. Context: main loop. */
int ingest_fib_writable(const struct ingest *ing);

/* Interface name from RTNLGRP_LINK, or NULL. Context: main loop. */
const char *ingest_ifname(const struct ingest *ing, uint32_t ifindex);
/* The reverse: an ifindex from RTNLGRP_LINK, or 0. Context: main loop. */
uint32_t ingest_ifindex(const struct ingest *ing, const char *name);

#endif
