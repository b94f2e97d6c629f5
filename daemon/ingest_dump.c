/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ingest, dumps
 *
 * A dump asks for links, addresses, the rules of each mirrored family,
 * next-hop objects, then the routes of each mirrored family, one request at a time on the dump socket, and reads
 * the replies in slices of budget_us. Links, addresses and rules are
 * collected and applied to the FIB's policy in one step once their last
 * dump is done (daemon/ingest_policy.c), before the routes' dumps, while
 * the main loop is still the only writer. Routes go into the dump set; when
 * the last step is done the set is applied: by the loader thread the
 * first time (daemon/ingest_load.c, IPv4 already loading while IPv6 is
 * dumped), by a merge in slices afterwards (daemon/ingest_resync.c).
 *
 * The dump set is two growing arrays, routes and paths; a route's nh
 * field holds an index into the path array until the set is complete
 * (realloc would move the paths), then becomes a pointer.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <sys/socket.h>
#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/fib_rules.h>
#undef FIB_RULE_INVERT /* fib/policy.h's, same value */
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "daemon/handoff.h"
#include "daemon/ingest_priv.h"

/* Sets. */

void
ingest_set_reset(struct ingest_set *s)
{
	s->n = 0;
	s->nnh = 0;
	s->nmap = 0;
}

void
ingest_set_free(struct ingest_set *s)
{
	free(s->r);
	free(s->nh);
	free(s->map);
	memset(s, 0, sizeof(*s));
}

/*
 * The first size of a set's arrays: a full table's routes (about 1.1M
 * with IPv6) without a doubling. Above malloc's mmap threshold the
 * arrays are mappings whose pages are touched only as routes arrive, so
 * a small table costs no more memory; a doubling would instead copy and
 * fault in tens of MB in one slice of the loop (36-45 ms measured for
 * the RIS table's 323,000 routes).
 */
#define INGEST_SET_FIRST (2u << 20)

/* Append a route; r->nh is copied into the path pool. */
int
ingest_set_add(struct ingest_set *s, const struct fib_route *r)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : INGEST_SET_FIRST;
		struct fib_route *nr = realloc(s->r, cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		s->r = nr;
		s->cap = cap;
	}
	if (r->res_buckets && s->nmap + r->res_buckets > s->capmap) {
		size_t cap = s->capmap ? s->capmap * 2 : 4096;
		uint8_t *nm;

		while (cap < s->nmap + r->res_buckets)
			cap *= 2;
		nm = realloc(s->map, cap);
		if (!nm)
			return -ENOMEM;
		s->map = nm;
		s->capmap = cap;
	}
	if (s->nnh + r->nh_count > s->capnh) {
		size_t cap = s->capnh ? s->capnh * 2 : INGEST_SET_FIRST;
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
	s->r[s->n].res_map = (const uint8_t *)(uintptr_t)s->nmap;
	if (r->res_buckets)
		memcpy(&s->map[s->nmap], r->res_map, r->res_buckets);
	s->nmap += r->res_buckets;
	s->n++;
	return 0;
}

/* Turn path indexes into pointers; the set is read-only afterwards. */
void
ingest_set_fix(struct ingest_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		s->r[i].nh = s->r[i].nh_count ? &s->nh[(uintptr_t)s->r[i].nh] : NULL;
		s->r[i].res_map = s->r[i].res_buckets ? &s->map[(uintptr_t)s->r[i].res_map] : NULL;
	}
}

static void
ingest_apply(struct ingest *ing)
{
	if (ing->first)
		ing->st.dump_seconds =
			ingest_now() - ((double)ing->t0.tv_sec + ing->t0.tv_nsec * 1e-9);
	ing->phase = PH_APPLY;
	event_del(ing->dump_read);
	if (ing->set_nomem) { /* applied as it is, then dumped again */
		ing->set_nomem = 0;
		ing->resync_pending = 1;
	}
	if (ing->first) { /* the loader fixes the set's paths */
		if (!ing->load.running) {
			if (ing->set.n)
				ingest_load_start(ing);
			else
				ingest_load_finish(ing);
		}
		return;
	}
	ingest_merge_begin(ing); /* then ingest_apply_slice */
}

/* Dumps. */

/*
 * Read the route dump just requested on the reader thread (see
 * ingest_priv.h); without a thread the loop goes on reading it.
 */
static void
ingest_reader_start(struct ingest *ing)
{
	int err;

	event_del(ing->dump_read);
	ing->rd.snap = ing->st;
	ing->rd.done = 0;
	ing->rd.err = 0;
	ing->rd.sock_err = 0;
	ing->rd.running = 1;
	if ((err = handoff_run(ing->rd.ho)) < 0) {
		ing->rd.running = 0;
		log_warnx_rl(&ing->rl_sock, "dump reader thread: %s: reading on the main loop",
			     strerror(-err));
		event_add(ing->dump_read, NULL);
	}
}

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
	case ST_ADDR: {
		struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));

		nlh->nlmsg_type = RTM_GETADDR;
		ifa->ifa_family = AF_UNSPEC;
		break;
	}
	case ST_RULE4:
	case ST_RULE6: {
		struct fib_rule_hdr *frh = mnl_nlmsg_put_extra_header(nlh, sizeof(*frh));

		nlh->nlmsg_type = RTM_GETRULE;
		frh->family = ing->step == ST_RULE4 ? AF_INET : AF_INET6;
		break;
	}
	case ST_NH: {
		struct nhmsg *nhm = mnl_nlmsg_put_extra_header(nlh, sizeof(*nhm));

		nlh->nlmsg_type = RTM_GETNEXTHOP;
		nhm->nh_family = AF_UNSPEC;
		break;
	}
	case ST_NHB: {
		struct nhmsg *nhm = mnl_nlmsg_put_extra_header(nlh, sizeof(*nhm));

		nlh->nlmsg_type = RTM_GETNEXTHOPBUCKET;
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
	if (ing->step == ST_V4 || ing->step == ST_V6)
		ingest_reader_start(ing);
	return 0;
}

/* The buckets' re-dump ended: a moved bucket asks for a resync. */
static void
ingest_nhb_done(struct ingest *ing)
{
	event_del(ing->dump_read);
	ing->nhb_only = 0;
	if (ing->nhb_changed) {
		ing->st.nh_bucket_changes++;
		log_debug("resilient group buckets moved: resync");
		ing->resync_pending = 1;
	}
	ingest_go_idle(ing);
}

void
ingest_nhb_dump(struct ingest *ing)
{
	ing->phase = PH_DUMP;
	event_del(ing->ev_read);
	ing->step = ST_NHB;
	ing->nhb_only = 1;
	ing->nhb_changed = 0;
	ing->st.nh_bucket_dumps++;
	event_add(ing->dump_read, NULL);
	if (ingest_send_dump(ing) < 0) {
		log_warn("bucket dump request");
		ingest_nhb_done(ing);
	}
}

/* Move to the next dump step that applies, or to APPLY. */
static void
ingest_next_step(struct ingest *ing)
{
	enum ingest_step from = ing->step;

	if (ing->nhb_only) {
		ingest_nhb_done(ing);
		return;
	}
	if (ing->first && ing->step == ST_V4 && (ing->conf.families & INGEST_V6) &&
	    ing->set.n)
		ingest_load_start(ing);
	for (;;) {
		ing->step++;
		if (ing->step == ST_V4 && !(ing->conf.families & INGEST_V4))
			continue;
		if (ing->step == ST_V6 && !(ing->conf.families & INGEST_V6))
			continue;
		if (ing->step == ST_RULE4 && !(ing->conf.families & INGEST_V4))
			continue;
		if (ing->step == ST_RULE6 && !(ing->conf.families & INGEST_V6))
			continue;
		break;
	}
	if (from < ST_NH && ing->step >= ST_NH)
		ingest_policy_dump_apply(ing); /* before any route, and before the loader */
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

void
ingest_start_dump(struct ingest *ing)
{
	if (ing->rd.running) { /* its end starts the next step */
		ing->resync_pending = 1;
		return;
	}
	ing->phase = PH_DUMP;
	event_del(ing->ev_read);
	if (!ing->first)
		ingest_ev_discard(ing);
	clock_gettime(CLOCK_MONOTONIC, &ing->t0);
	ing->nhb_only = 0;
	ingest_set_reset(&ing->set);
	nl_nhtab_clear(ing->nht);
	ingest_policy_dump_begin(ing);
	ing->step = ST_LINK;
	event_add(ing->dump_read, NULL);
	if (ingest_send_dump(ing) < 0) {
		log_warn("dump request");
		ingest_next_step(ing);
	}
}

/* NLMSG_ERROR or NLMSG_DONE carrying an error for the running dump. */
static const unsigned ingest_step_pol[ST_DONE] = {
	[ST_LINK] = INGEST_POL_LINK,
	[ST_ADDR] = INGEST_POL_ADDR,
	[ST_RULE4] = INGEST_POL_RULE4,
	[ST_RULE6] = INGEST_POL_RULE6,
};

static void
ingest_dump_error(struct ingest *ing, int err)
{
	if (ing->step < ST_DONE && ingest_step_pol[ing->step])
		ingest_policy_step_done(ing, ingest_step_pol[ing->step], err);
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
	/* kernels before 5.3 have no next-hop objects, before 5.13 no buckets */
	if (ing->step != ST_NH && ing->step != ST_NHB)
		log_warnx("dump step %d: %s", ing->step, strerror(err));
	ingest_next_step(ing);
}

/*
 * The messages of one recv: 1 when the dump's end came (*err: 0 or its
 * error, positive), else 0. Context: the main loop, or the reader thread
 * while it runs.
 */
static int
ingest_dump_msgs(struct ingest *ing, int len, int *err)
{
	const struct nlmsghdr *nlh;

	for (nlh = (const struct nlmsghdr *)ing->buf; nl_msg_ok(nlh, len);
	     nlh = mnl_nlmsg_next(nlh, &len)) {
		if (nlh->nlmsg_seq != ing->seq || nlh->nlmsg_pid != ing->dump_portid)
			continue;
		if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
			ing->st.dump_intr++;
			if (ing->step < ST_NH)
				ing->pol.intr = 1;
		}
		if (nlh->nlmsg_type == NLMSG_DONE) {
			*err = 0;
			if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int))
				*err = -*(const int *)mnl_nlmsg_get_payload(nlh);
			return 1;
		}
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			*err = nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(*e) ? -e->error : EPROTO;
			return 1;
		}
		ingest_msg(ing, nlh, 1);
	}
	return 0;
}

void
ingest_dump_read(evutil_socket_t fd, short what, void *arg)
{
	struct ingest *ing = arg;
	double deadline = ingest_deadline(ing);

	while (ing->phase == PH_DUMP && !ing->rd.running) {
		ssize_t n = recv(fd, ing->buf, INGEST_BUF, MSG_DONTWAIT);
		int err;

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
		if (ingest_dump_msgs(ing, (int)n, &err))
			ingest_dump_error(ing, err); /* the next step: maybe the reader's */
		if (ing->phase == PH_DUMP && ingest_now() >= deadline) {
			ing->st.slices++;
			return; /* still readable: the loop calls again */
		}
	}
}

/*
 * The reader thread's job: the route dump requested last, to its end.
 * The socket is non-blocking: poll waits at most 100 ms, so that
 * ingest_free's rd.stop is seen. Context: the reader thread.
 */
void
ingest_reader(void *arg)
{
	struct ingest *ing = arg;
	struct pollfd p = { mnl_socket_get_fd(ing->dump_nl), POLLIN, 0 };

	while (!__atomic_load_n(&ing->rd.stop, __ATOMIC_ACQUIRE)) {
		ssize_t n = recv(p.fd, ing->buf, INGEST_BUF, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				(void)poll(&p, 1, 100);
				continue;
			}
			ing->rd.sock_err = errno;
			return;
		}
		ing->st.bytes += (uint64_t)n;
		if (ingest_dump_msgs(ing, (int)n, &ing->rd.err)) {
			ing->rd.done = 1;
			return;
		}
	}
}

/* The reader is joined: on with the dump's next step. Context: main loop. */
void
ingest_reader_done(void *arg)
{
	struct ingest *ing = arg;

	ing->rd.running = 0;
	if (ing->rd.sock_err) {
		log_warnx_rl(&ing->rl_sock, "dump socket: %s: restarting the dump",
			     strerror(ing->rd.sock_err));
		ingest_start_dump(ing);
	} else if (ing->rd.done) {
		ingest_dump_error(ing, ing->rd.err);
	}
}
