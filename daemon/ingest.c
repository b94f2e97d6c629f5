/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ingest implementation: setup and control
 *
 * The two sockets and their events, the public API of daemon/ingest.h,
 * pause/resume around a thread that borrows the FIB, and the work event
 * that resumes a slice cut by its budget. The jobs live in files of their
 * own (daemon/ingest_priv.h lists them): the event path
 * (daemon/ingest_event.c), dumps (daemon/ingest_dump.c), the first load
 * (daemon/ingest_load.c) and the resync (daemon/ingest_resync.c).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/socket.h>
#include <net/if.h>
#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "daemon/handoff.h"
#include "daemon/ingest_priv.h"

#ifndef NETLINK_GET_STRICT_CHK
#define NETLINK_GET_STRICT_CHK 12
#endif
#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

void
ingest_conf_default(struct ingest_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->families = INGEST_V4 | INGEST_V6;
	c->ntables = 0; /* every table: policy rules may look any of them up */
	c->rcvbuf = 64u << 20;
	c->budget_us = 2000;
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

void
ingest_nhb_arm(struct ingest *ing, unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	struct timeval left;

	if (!nl_nhtab_res_count(ing->nht))
		return;
	if (event_pending(ing->nhb_timer, EV_TIMEOUT, &left)) {
		struct timeval now;

		event_base_gettimeofday_cached(ing->base, &now);
		evutil_timersub(&left, &now, &left);
		if (evutil_timercmp(&left, &tv, <=))
			return;
	}
	event_add(ing->nhb_timer, &tv);
}

/* The buckets' timer: re-dump them when the loop is idle, else a bit later. */
static void
ingest_nhb_timer(evutil_socket_t fd, short what, void *arg)
{
	struct ingest *ing = arg;

	(void)fd;
	(void)what;
	if (!nl_nhtab_res_count(ing->nht))
		return; /* armed again when a resilient group comes */
	if (ing->phase != PH_IDLE || ing->paused || ing->load.running || ing->resync_pending) {
		ingest_nhb_arm(ing, 1000);
		return;
	}
	ingest_nhb_dump(ing);
}

void
ingest_go_idle(struct ingest *ing)
{
	ing->phase = PH_IDLE;
	ingest_nhb_arm(ing, INGEST_NHB_SECONDS * 1000);
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
ingest_work(evutil_socket_t fd, short what, void *arg)
{
	struct ingest *ing = arg;

	if (ing->paused)
		return;
	if (ing->phase == PH_APPLY && !ing->mp.running && !ing->load.running)
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
	static const unsigned groups[] = { RTNLGRP_IPV4_ROUTE,  RTNLGRP_IPV6_ROUTE,
					   RTNLGRP_LINK,        RTNLGRP_NEXTHOP,
					   RTNLGRP_IPV4_RULE,   RTNLGRP_IPV6_RULE,
					   RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR };
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
	ing->nhb_timer = evtimer_new(base, ingest_nhb_timer, ing);
	ing->load.ho = handoff_new(base, ingest_loader, ingest_load_done, ing);
	ing->rd.ho = handoff_new(base, ingest_reader, ingest_reader_done, ing);
	ing->mp.ho = handoff_new(base, ingest_merge_prep, ingest_merge_prepped, ing);
	if (!ing->ev_read || !ing->dump_read || !ing->work || !ing->nhb_timer || !ing->load.ho ||
	    !ing->rd.ho || !ing->mp.ho)
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
	*st = ing->rd.running ? ing->rd.snap : ing->st;
	st->nh_objects = nl_nhtab_count(ing->nht);
}

int
ingest_idle(const struct ingest *ing)
{
	return ing->phase == PH_IDLE && !ing->load.running && !ing->resync_pending;
}

int
ingest_load_stats(const struct ingest *ing, struct fib_stats *st)
{
	if (!ing->load.bytes)
		return 0;
	*st = ing->load.stats;
	return 1;
}

int
ingest_paused(const struct ingest *ing)
{
	return ing->paused;
}

int
ingest_fib_writable(const struct ingest *ing)
{
	return !ing->paused && !ing->load.running;
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
	__atomic_store_n(&ing->rd.stop, 1, __ATOMIC_RELEASE);
	handoff_free(ing->rd.ho); /* joins: the thread polls every 100 ms */
	handoff_free(ing->load.ho);
	handoff_free(ing->mp.ho);
	ingest_set_free(&ing->load.set);
	if (ing->ev_read)
		event_free(ing->ev_read);
	if (ing->dump_read)
		event_free(ing->dump_read);
	if (ing->work)
		event_free(ing->work);
	if (ing->nhb_timer)
		event_free(ing->nhb_timer);
	if (ing->ev_nl)
		mnl_socket_close(ing->ev_nl);
	if (ing->dump_nl)
		mnl_socket_close(ing->dump_nl);
	nl_nhtab_free(ing->nht);
	ingest_sweep_fini(&ing->sweep);
	ingest_set_free(&ing->set);
	ingest_set_free(&ing->cur);
	ingest_policy_free(ing);
	free(ing->links);
	free(ing->buf);
	free(ing);
}
