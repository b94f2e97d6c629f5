/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: lookup implementation
 *
 * Each thread owns its pollfd array, its request and answer buffers and
 * its counters (written by it alone, read relaxed by lookup_stats), so the
 * threads share nothing but the read-only FIB and the listening socket.
 * Version 1 batches use fib_lookup4_batch_rcu / fib_lookup6_batch_rcu
 * (independent lookups overlap their memory accesses), or
 * flow_lookup_batch_rcu when the client asks for the flow cache
 * (LOOKUP_Q_CACHE) and fibd has one; the whole answer is built inside
 * one read-side section, since results point into the FIB only until
 * fib_read_unlock(). The routes' leaves and aliases are prefetched for
 * the whole batch before any result is written (on a full table they
 * miss the caches), and next hops go out once per attribute set and
 * answer (a small direct-mapped table of the sets already written).
 *
 * A wakeup answers every request waiting on a readable connection, up to
 * LOOKUP_DRAIN, all read by one recvmmsg and answered by one send each: a
 * pipelining client (lookup_proto.h) gets several batches answered for
 * one poll and one read.
 *
 * Out of file descriptors (EMFILE, ENFILE), accept() fails while the
 * listener stays readable: every thread would wake and fail at once, in a
 * loop. As in ctl.c, a spare descriptor (/dev/null, one for all threads,
 * under starve_lock) is closed, the waiting clients are accepted into its
 * slot and closed at once (they see EOF, not a hang), and it is opened
 * again. When that cannot empty the backlog the thread stops polling the
 * listener for 100 ms, doubling to 1 s. The next successful accept of
 * any thread ends the episode. The threads never log: lookup_stats says
 * whether the socket is starved, with counters, and fibd logs the start
 * and the end of an episode (fibd_starve_tick).
 *
 * Idle clients (conf lookup.idle_timeout): each client slot has the
 * CLOCK_MONOTONIC ms of its last request (or of its accept). The thread
 * drops the clients idle for idle_ms when a poll returns at or after its
 * next deadline (the oldest client's, at most a second away, so the 1 s
 * poll of the watchdog is all it needs: no timer, no extra thread), then
 * counts them in idle_closed. lookup_set_idle_timeout publishes a new
 * value with a bumped idle_gen; a thread that sees a new idle_gen gives
 * every client of its own a new period, as ctl.c does on a reload.
 *
 * Version 2 (lookup_proto.h): lookup_answer dispatches on the version.
 * A batch of flows is checked whole, then resolved with one
 * flow_resolve_batch_rcu (fib_resolve_batch_rcu without a cache) in one
 * read-side section. With LOOKUP2_Q_PLEN the interning key leaves the
 * prefix out (zero), so the routes of one path set share a record.
 * Records are interned per connection, not per thread or daemon: a connection lives on one
 * thread, so its table (struct lookup_conn, made at its first version 2
 * request, freed with it) needs no lock and no atomics, and ids stay
 * small and dense, which lets the client keep an array. The key is the
 * decision with the route's interned attributes (struct fib_info) by
 * pointer: that pointer names the same paths only while the FIB
 * generation has not moved (a change may free an info and a later one
 * reuse its memory), so a moved FIB or policy generation, or an odd one
 * (a change under way), starts a new epoch before the batch. The table
 * starts at LOOKUP2_IDS_MIN records and doubles up to LOOKUP2_IDS_MAX
 * (then a new epoch too); slots are stamped with their epoch, so a new
 * epoch costs nothing. Per batch: no syscall but the recv and the send,
 * no clock read, no lock; counters are added once a batch.
 *
 *   struct lookup_conn: keys[id - 1]  <- slots[hash & mask] {id, epoch}
 *                       epoch, count, cap, fib_gen, policy_gen
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fib/fib.h"
#include "fib/policy.h"
#include "cache/flow.h"
#include "daemon/listen.h"
#include "daemon/lookup.h"
#include "daemon/lookup_proto.h"

#define LOOKUP_PAUSE_MIN_MS 100 /* listener pause when out of descriptors */
#define LOOKUP_PAUSE_MAX_MS 1000
#define LOOKUP_REFUSE_BATCH 64  /* clients refused through the spare a call */
#define LOOKUP2_IDS_MIN 256     /* a connection's first record table */
#define LOOKUP_DRAIN 16         /* requests of one client answered a wakeup */

#define LOOKUP_MAX(a, b) ((a) > (b) ? (a) : (b))
#define LOOKUP_REQ_BUF LOOKUP_MAX(LOOKUP_REQ_MAX, LOOKUP2_REQ_MAX)
#define LOOKUP_RESP_BUF LOOKUP_MAX(LOOKUP_RESP_MAX, LOOKUP2_RESP_MAX)

/* The wire's flow and decision flags are libfib's. */
_Static_assert(LOOKUP_FLOW_SRC == FIB_FLOW_SRC && LOOKUP_FLOW_IIF == FIB_FLOW_IIF &&
		       LOOKUP_FLOW_OIF == FIB_FLOW_OIF && LOOKUP_FLOW_UID == FIB_FLOW_UID &&
		       LOOKUP_FLOW_FIBMATCH == FIB_FLOW_FIBMATCH &&
		       LOOKUP_FLOW_DSCP == FIB_FLOW_DSCP,
	       "lookup_proto.h flow flags");
_Static_assert(LOOKUP_D_RULE == FIB_D_RULE && LOOKUP_D_SRC == FIB_D_SRC &&
		       LOOKUP_D_ROUTE == FIB_D_ROUTE && !(LOOKUP_D_CUT & (FIB_D_RULE | FIB_D_SRC | FIB_D_ROUTE)),
	       "lookup_proto.h decision flags");
#define LOOKUP_SAME(f) (offsetof(struct lookup_flow, f) == offsetof(struct fib_flow, f))
_Static_assert(sizeof(struct lookup_flow) == sizeof(struct fib_flow) && LOOKUP_SAME(tos) &&
		       LOOKUP_SAME(ipproto) && LOOKUP_SAME(flags) && LOOKUP_SAME(iif) &&
		       LOOKUP_SAME(oif) && LOOKUP_SAME(mark) && LOOKUP_SAME(uid) &&
		       LOOKUP_SAME(sport) && LOOKUP_SAME(dport) && LOOKUP_SAME(flowlabel) &&
		       LOOKUP_SAME(dst) && LOOKUP_SAME(src) && offsetof(struct fib_flow, family) == 0,
	       "struct lookup_flow is struct fib_flow on the wire");
_Static_assert(sizeof(struct lookup_flow) == 60 && sizeof(struct lookup_rec) == 76 &&
		       sizeof(struct lookup_resp2) == sizeof(struct lookup_resp) &&
		       sizeof(struct lookup_req2) == 16,
	       "lookup_proto.h sizes");

/*
 * The interning key of a decision: what a record says, with the route's
 * interned attributes (struct fib_info: the paths) by pointer, unused
 * fields zero, so that equal decisions have equal keys. Built in words
 * (lookup_key_make), not byte by byte: the hash and the compare then read
 * what was just written without a store-forwarding stall.
 *
 *   w[0] info   w[1] family type error plen path npaths flags tos (a byte each)
 *   w[2] table | rule << 32   w[3..4] prefix   w[5..6] src
 */
struct lookup_key {
	uint64_t w[7];
	uint32_t hash;
	uint32_t pad;
};

/* A slot of a connection's open-addressing index: live in its epoch only. */
struct lookup_slot {
	uint32_t id;
	uint32_t epoch;
};

/*
 * Version 2 state of one connection (lookup_proto.h, "Records and
 * epochs"): keys[id - 1] for ids 1..count of the current epoch, and an
 * index of 2 x cap slots (linear probing, load at most 1/2). A new epoch
 * only bumps epoch and clears count: the slots stamped with an older
 * epoch read as empty, nothing is cleared.
 */
struct lookup_conn {
	uint64_t fib_gen, policy_gen; /* when the epoch's records were made */
	uint32_t epoch;
	uint32_t count;
	uint32_t cap; /* LOOKUP2_IDS_MIN .. LOOKUP2_IDS_MAX, a power of 2 */
	struct lookup_key *keys;
	struct lookup_slot *slots;
};

/* A version 1 answer's next hops of one attribute set (direct mapped). */
#define LOOKUP_NHC 64
struct lookup_nhc {
	const struct fib_info *info;
	uint32_t first;
	uint8_t count, flags;
};

struct lookup_thread {
	struct lookup *l;
	pthread_t tid;
	int started;
	struct pollfd pfd[2 + LOOKUP_THREAD_CLIENTS]; /* listen, efd, clients */
	int64_t last[LOOKUP_THREAD_CLIENTS]; /* ms of pfd[2 + i]'s last request */
	struct lookup_conn *conn[LOOKUP_THREAD_CLIENTS]; /* pfd[2 + i]'s; NULL until v2 */
	unsigned nclients;
	uint64_t req_buf[LOOKUP_DRAIN][LOOKUP_REQ_BUF / 8 + 1]; /* one recvmmsg's */
	const void *req; /* the request being answered: one of req_buf */
	uint64_t resp_buf[LOOKUP_RESP_BUF / 8 + 1];
	uint32_t a4[LOOKUP_BATCH_MAX];
	struct fib_result res[LOOKUP_BATCH_MAX];
	struct flow_key keys[LOOKUP_BATCH_MAX];
	struct fib_flow fl[LOOKUP_BATCH_MAX];
	struct fib_decision dec[LOOKUP_BATCH_MAX];
	struct lookup_nhc nhc[LOOKUP_NHC];
	struct lookup_stats st;
	int64_t beat; /* CLOCK_MONOTONIC seconds of the last poll return */
	int64_t pause_until; /* ms: the listener is not polled before; 0 none */
	unsigned pause_ms;   /* the next pause */
	unsigned idle_ms;    /* this thread's copy of l->idle_ms; 0: off */
	unsigned idle_gen;   /* of l->idle_gen when idle_ms was copied */
	int64_t idle_next;   /* ms: the next idle check; 0 at once */
};

struct lookup {
	struct fib *fib;
	int lfd, efd;
	uint32_t table;
	int ready;
	struct flow_cache *cache; /* published by lookup_set_cache; NULL: none */
	unsigned idle_ms;  /* lookup_set_idle_timeout: __atomic, before idle_gen */
	int64_t idle_set;  /* ms when idle_ms was set: __atomic, as idle_ms */
	unsigned idle_gen; /* bumped (release) after each new idle_ms */
	unsigned nthreads;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct lookup_thread *t;
	int starved; /* out of descriptors: __atomic reads, written locked */
	pthread_mutex_t starve_lock; /* the fields below */
	struct listen_spare spare; /* given up to refuse clients */
	int accept_errno;
	uint64_t refused_fds, accept_errors, fd_episodes;
};

/*
 * Build the answer to one version 1 request; returns its length. The
 * lookup hot path: one function with named steps (doc/style.md, item 17).
 */
static size_t
lookup_answer1(struct lookup_thread *t, size_t len)
{
	const struct lookup_req *q = (const struct lookup_req *)t->req;
	struct lookup_resp *r = (struct lookup_resp *)t->resp_buf;
	struct lookup_result *res = (struct lookup_result *)(r + 1);
	struct lookup_nh *nh;
	const uint8_t *addr = (const uint8_t *)(q + 1);
	size_t alen;
	uint32_t table, nh_total = 0;
	struct flow_cache *fc;
	unsigned n;

	/* Step 1: check the request header and size (magic and version:
	 * lookup_answer). */
	memset(r, 0, sizeof(*r));
	r->magic = LOOKUP_MAGIC;
	r->version = LOOKUP_VERSION;
	if (len < sizeof(*q)) {
		r->status = EPROTONOSUPPORT;
		return sizeof(*r);
	}
	r->id = q->id;
	r->family = q->family;
	if (q->family != AF_INET && q->family != AF_INET6) {
		r->status = EAFNOSUPPORT;
		return sizeof(*r);
	}
	alen = q->family == AF_INET ? 4 : 16;
	n = q->count;
	if (n == 0 || n > LOOKUP_BATCH_MAX || (q->flags & ~LOOKUP_Q_CACHE) ||
	    len != sizeof(*q) + n * alen) {
		r->status = EINVAL;
		return sizeof(*r);
	}
	/* Step 2: the batch of lookups, straight to the FIB: a version 1
	 * lookup is one table's longest match, the fast path that the
	 * decision cache steps aside for (doc/decisions.md, section 4);
	 * through the flow cache only when the client asks (LOOKUP_Q_CACHE). */
	table = q->table ? q->table : t->l->table;
	nh = (struct lookup_nh *)(res + n);
	if (q->family == AF_INET)
		for (unsigned i = 0; i < n; i++) {
			uint32_t a;

			memcpy(&a, addr + 4 * i, 4);
			t->a4[i] = ntohl(a);
		}
	fib_read_lock();
	/* Paired with the release store of lookup_set_cache: the cache is
	 * fully built before we see it, and not freed before we unlock. */
	fc = (q->flags & LOOKUP_Q_CACHE) ? __atomic_load_n(&t->l->cache, __ATOMIC_ACQUIRE) : NULL;
	if (fc) {
		for (unsigned i = 0; i < n; i++)
			if (q->family == AF_INET)
				flow_key_set4(&t->keys[i], table, t->a4[i], 0, 0, 0);
			else
				flow_key_set6(&t->keys[i], table, addr + 16 * i, NULL, 0, 0);
		flow_lookup_batch_rcu(fc, t->l->fib, t->keys, t->res, n);
	} else if (q->family == AF_INET) {
		fib_lookup4_batch_rcu(t->l->fib, table, t->a4, t->res, n);
	} else {
		fib_lookup6_batch_rcu(t->l->fib, table, (const uint8_t (*)[16])addr, t->res, n);
	}
	/* Step 3: the results. The routes' memory first, all at once (a
	 * full table's leaves and aliases miss the caches; fetched one
	 * result after the other they would not overlap). */
	for (unsigned i = 0; i < n; i++) {
		__builtin_prefetch(t->res[i].alias);
		__builtin_prefetch(t->res[i].leaf);
	}
	memset(t->nhc, 0, sizeof(t->nhc));
	for (unsigned i = 0; i < n; i++) {
		struct fib_match m;
		struct lookup_result *o = &res[i];
		struct lookup_nhc *c;

		memset(o, 0, sizeof(*o));
		if (fib_result_get(&t->res[i], &m) != 0)
			continue;
		o->type = m.type;
		o->plen = m.plen;
		o->table = m.table;
		o->priority = m.info->priority;
		memcpy(o->prefix, m.prefix.b, 16);
		/* Step 4: the next hops, once per answer for each route
		 * attribute set: results of the same set share their range
		 * (a table has few sets: its peers). */
		c = &t->nhc[((uintptr_t)m.info >> 6) % LOOKUP_NHC];
		if (c->info != m.info) {
			c->info = m.info;
			c->first = nh_total;
			c->count = 0;
			c->flags = 0;
			for (unsigned k = 0; k < m.info->nh_count; k++) {
				const struct fib_nh *s = &m.info->nh[k];
				struct lookup_nh *d = &nh[nh_total];

				if (k == LOOKUP_NH_MAX) {
					c->flags = LOOKUP_R_NH_CUT;
					break;
				}
				d->ifindex = s->ifindex;
				d->gw_family = s->gw_family;
				d->flags = s->flags;
				d->weight = s->weight;
				memcpy(d->gw, s->gw.b, 16);
				nh_total++;
				c->count++;
			}
		}
		o->nh_first = c->first;
		o->nh_count = c->count;
		o->flags = c->flags;
	}
	r->generation = fib_generation(t->l->fib);
	fib_read_unlock();
	r->count = (uint16_t)n;
	r->nh_total = nh_total;
	r->flags = __atomic_load_n(&t->l->ready, __ATOMIC_RELAXED) ? LOOKUP_F_READY : 0;
	__atomic_store_n(&t->st.addresses, t->st.addresses + n, __ATOMIC_RELAXED);
	return sizeof(*r) + n * sizeof(*res) + nh_total * sizeof(*nh);
}

/* The OR of bytes from..15 (from 0 or 4) of a 16-byte address: two
 * loads, where memcmp against zeros was a call per field. */
static inline uint64_t
lookup_addr_bits(const uint8_t *a, unsigned from)
{
	uint64_t lo, hi;
	uint32_t mid;

	memcpy(&hi, a + 8, 8);
	if (from == 0) {
		memcpy(&lo, a, 8);
		return lo | hi;
	}
	memcpy(&mid, a + 4, 4);
	return mid | hi;
}

/* Check one flow of family and convert it; 0 or -EINVAL. */
static int
lookup_flow_get(const struct lookup_flow *w, int family, struct fib_flow *fl)
{
	unsigned f = w->flags;

	if ((f & ~LOOKUP_FLOW_ALL) || w->pad || (!(f & LOOKUP_FLOW_IIF) != !w->iif) ||
	    (!(f & LOOKUP_FLOW_OIF) != !w->oif) || (!(f & LOOKUP_FLOW_UID) && w->uid) ||
	    (!(f & LOOKUP_FLOW_SRC) && lookup_addr_bits(w->src, 0)) ||
	    ((f & LOOKUP_FLOW_DSCP) && w->tos > 63) || w->flowlabel > 0xfffff)
		return -EINVAL;
	if (family == AF_INET &&
	    (w->flowlabel || lookup_addr_bits(w->dst, 4) || lookup_addr_bits(w->src, 4)))
		return -EINVAL;
	memcpy(fl, w, sizeof(*w)); /* the same layout: see the asserts above */
	fl->family = (uint8_t)family;
	return 0;
}

/* A connection's first version 2 request: its state. NULL: no memory. */
static struct lookup_conn *
lookup_conn_new(void)
{
	struct lookup_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cap = LOOKUP2_IDS_MIN;
	c->keys = malloc(c->cap * sizeof(*c->keys));
	c->slots = calloc(2 * c->cap, sizeof(*c->slots));
	if (!c->keys || !c->slots) {
		free(c->keys);
		free(c->slots);
		free(c);
		return NULL;
	}
	return c;
}

static void
lookup_conn_free(struct lookup_conn *c)
{
	if (!c)
		return;
	free(c->keys);
	free(c->slots);
	free(c);
}

/* A new epoch: no record sent, ids from 1 again. */
static void
lookup_conn_reset(struct lookup_conn *c)
{
	c->count = 0;
	if (++c->epoch == 0) {
		/* After 2^32 epochs a slot's stamp could look current again. */
		memset(c->slots, 0, 2 * c->cap * sizeof(*c->slots));
		c->epoch = 1;
	}
}

/*
 * Room for n more records: grow (double) while below LOOKUP2_IDS_MAX,
 * else start a new epoch. The index is rebuilt from keys[], which keeps
 * the ids. A failed allocation also starts a new epoch.
 */
static void
lookup_conn_room(struct lookup_conn *c, unsigned n)
{
	uint32_t cap = c->cap * 2, mask = 2 * cap - 1;
	struct lookup_key *keys;
	struct lookup_slot *slots;

	if (c->count + n <= c->cap)
		return;
	if (cap > LOOKUP2_IDS_MAX || !(slots = calloc(2 * cap, sizeof(*slots)))) {
		lookup_conn_reset(c);
		return;
	}
	keys = realloc(c->keys, cap * sizeof(*keys));
	if (!keys) {
		free(slots);
		lookup_conn_reset(c);
		return;
	}
	for (uint32_t id = 1; id <= c->count; id++) {
		uint32_t h = keys[id - 1].hash & mask;

		while (slots[h].epoch == c->epoch)
			h = (h + 1) & mask;
		slots[h].id = id;
		slots[h].epoch = c->epoch;
	}
	free(c->slots);
	c->keys = keys;
	c->slots = slots;
	c->cap = cap;
}

/*
 * The key of decision d. The hash: independent multiplies of the words
 * (they overlap in the pipeline, a chain would not), then one finalizing
 * mix. Not keyed: a client can only collide its own decisions, on its
 * own connection.
 */
static inline void
lookup_key_make(struct lookup_key *k, const struct fib_decision *d, int prefix)
{
	static const uint64_t m[7] = { 0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full,
				       0x165667b19e3779f9ull, 0xd6e8feb86659fd93ull,
				       0xff51afd7ed558ccdull, 0xc4ceb9fe1a85ec53ull,
				       0x27d4eb2f165667c5ull };
	const struct fib_info *fi = (d->flags & FIB_D_ROUTE) ? d->info : NULL;
	uint64_t np = fi ? fi->nh_count : 0, h;
	uint64_t path = fi && d->path < np ? d->path : 0;
	uint64_t w0, w1, w2, w3 = 0, w4 = 0, w5 = 0, w6 = 0;

	/* Words in registers, each written once: a key assembled in a
	 * stack array by 16-byte copies and read back by other widths
	 * stalled on store forwarding (a third of this thread's answer). */
	w0 = (uintptr_t)fi;
	w1 = d->family | (uint64_t)d->type << 8 | (uint64_t)d->error << 16 |
	     (uint64_t)(fi && prefix ? d->plen : 0) << 24 | path << 32 | np << 40 |
	     (uint64_t)(d->flags & (FIB_D_RULE | FIB_D_SRC | FIB_D_ROUTE)) << 48 |
	     (uint64_t)(fi ? d->tos : 0) << 56;
	w2 = (fi ? d->table : 0) | (uint64_t)(d->flags & FIB_D_RULE ? d->rule : 0) << 32;
	if (fi && prefix) {
		memcpy(&w3, d->prefix.b, 8);
		memcpy(&w4, d->prefix.b + 8, 8);
	}
	if (d->flags & FIB_D_SRC) {
		memcpy(&w5, d->src.b, 8);
		memcpy(&w6, d->src.b + 8, 8);
	}
	k->w[0] = w0;
	k->w[1] = w1;
	k->w[2] = w2;
	k->w[3] = w3;
	k->w[4] = w4;
	k->w[5] = w5;
	k->w[6] = w6;
#define LOOKUP_MIX(x, i) (((x) ^ ((x) >> 29)) * m[i])
	h = LOOKUP_MIX(w0, 0) + LOOKUP_MIX(w1, 1) + LOOKUP_MIX(w2, 2) + LOOKUP_MIX(w3, 3) +
	    LOOKUP_MIX(w4, 4) + LOOKUP_MIX(w5, 5) + LOOKUP_MIX(w6, 6);
#undef LOOKUP_MIX
	h ^= h >> 32;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 29;
	k->hash = (uint32_t)h;
	k->pad = 0;
}

static inline int
lookup_key_eq(const struct lookup_key *a, const struct lookup_key *b)
{
	return a->hash == b->hash && a->w[0] == b->w[0] && a->w[1] == b->w[1] &&
	       a->w[2] == b->w[2] && a->w[3] == b->w[3] && a->w[4] == b->w[4] &&
	       a->w[5] == b->w[5] && a->w[6] == b->w[6];
}

/* Fill rec (and the paths after it) from key k as id; returns its length. */
static size_t
lookup_rec_fill(struct lookup_rec *rec, const struct lookup_key *k, uint32_t id)
{
	struct lookup_nh *nh = (struct lookup_nh *)(rec + 1);
	const struct fib_info *fi = (const struct fib_info *)(uintptr_t)k->w[0];
	uint64_t w1 = k->w[1];
	unsigned np;

	memset(rec, 0, sizeof(*rec));
	rec->id = id;
	rec->family = (uint8_t)w1;
	rec->type = (uint8_t)(w1 >> 8);
	rec->error = (uint8_t)(w1 >> 16);
	rec->plen = (uint8_t)(w1 >> 24);
	rec->path = (uint8_t)(w1 >> 32);
	rec->npaths = (uint8_t)(w1 >> 40);
	rec->flags = (uint8_t)(w1 >> 48);
	rec->tos = (uint8_t)(w1 >> 56);
	rec->table = (uint32_t)k->w[2];
	rec->rule = (uint32_t)(k->w[2] >> 32);
	memcpy(rec->prefix, &k->w[3], 16);
	memcpy(rec->src, &k->w[5], 16);
	if (fi && rec->path < fi->nh_count) {
		const struct fib_nh *s = &fi->nh[rec->path];

		rec->ifindex = s->ifindex;
		rec->gw_family = s->gw_family;
		memcpy(rec->gateway, s->gw.b, 16);
	}
	if (rec->npaths > LOOKUP_NH_MAX)
		rec->flags |= LOOKUP_D_CUT;
	np = lookup_rec_paths(rec);
	for (unsigned j = 0; j < np; j++) {
		const struct fib_nh *s = &fi->nh[j];

		nh[j].ifindex = s->ifindex;
		nh[j].gw_family = s->gw_family;
		nh[j].flags = s->flags;
		nh[j].weight = s->weight;
		memcpy(nh[j].gw, s->gw.b, 16);
	}
	return sizeof(*rec) + np * sizeof(*nh);
}

/*
 * Build the answer to one version 2 request for the connection *cp
 * (created here on its first request); returns its length. The hot path
 * of version 2: no allocation but a connection's first request and the
 * rare doubling of its record table, one read-side section, one
 * fib_resolve_batch_rcu.
 */
static size_t
lookup_answer2(struct lookup_thread *t, struct lookup_conn **cp, size_t len)
{
	const struct lookup_req2 *q = (const struct lookup_req2 *)t->req;
	const struct lookup_flow *w = (const struct lookup_flow *)(q + 1);
	struct lookup_resp2 *r = (struct lookup_resp2 *)t->resp_buf;
	uint32_t *ids = (uint32_t *)(r + 1);
	uint8_t *errs, *plens = NULL, *out;
	uint64_t types[LOOKUP_TYPES] = { 0 }, errors = 0, fresh = 0;
	int prefix;
	struct lookup_conn *c;
	struct flow_cache *fc;
	uint64_t fgen, pgen;
	uint32_t epoch0;
	unsigned n, mask, alen;

	/* Step 1: check the header, the size and every flow. */
	memset(r, 0, sizeof(*r));
	r->magic = LOOKUP_MAGIC;
	r->version = LOOKUP_VERSION2;
	if (len < sizeof(*q)) {
		r->status = EINVAL;
		return sizeof(*r);
	}
	r->id = q->id;
	r->family = q->family;
	if (q->family != AF_INET && q->family != AF_INET6) {
		r->status = EAFNOSUPPORT;
		return sizeof(*r);
	}
	n = q->count;
	alen = q->family == AF_INET ? 4 : 16;
	if (n == 0 || n > LOOKUP_BATCH_MAX || (q->flags & ~(LOOKUP2_Q_PLEN | LOOKUP2_Q_DST)) ||
	    q->pad || len != sizeof(*q) + n * ((q->flags & LOOKUP2_Q_DST) ? alen : sizeof(*w))) {
		r->status = EINVAL;
		return sizeof(*r);
	}
	if (q->flags & LOOKUP2_Q_DST) {
		/* bare destinations: `ip route get ADDR`'s flows, nothing to
		 * check but the size */
		const uint8_t *a = (const uint8_t *)(q + 1);

		for (unsigned i = 0; i < n; i++) {
			memset(&t->fl[i], 0, sizeof(t->fl[i]));
			t->fl[i].family = q->family;
			memcpy(t->fl[i].dst.b, a + i * alen, alen);
		}
	} else {
		for (unsigned i = 0; i < n; i++)
			if (lookup_flow_get(&w[i], q->family, &t->fl[i]) < 0) {
				r->status = EINVAL;
				return sizeof(*r);
			}
	}
	if (!*cp && !(*cp = lookup_conn_new())) {
		r->status = ENOMEM;
		return sizeof(*r);
	}
	c = *cp;
	epoch0 = c->epoch;
	lookup_conn_room(c, n);
	errs = (uint8_t *)(ids + n);
	out = errs + ((n + 3) & ~3u);
	memset(errs + n, 0, (size_t)(out - errs) - n);
	/* LOOKUP2_Q_PLEN: records without the prefix (a table's routes
	 * then share a few records: their paths), its length per result. */
	prefix = !(q->flags & LOOKUP2_Q_PLEN);
	if (!prefix) {
		plens = out;
		out = plens + ((n + 3) & ~3u);
		memset(plens + n, 0, (size_t)(out - plens) - n);
	}

	/* Step 2: a new epoch if the FIB or the policy changed since the
	 * records were made (or a change is under way: the generation is
	 * odd), then the batch. */
	fib_read_lock();
	fgen = fib_generation(t->l->fib);
	pgen = fib_policy_generation(t->l->fib);
	if (c->epoch == 0 || fgen != c->fib_gen || pgen != c->policy_gen || (fgen & 1)) {
		if (c->epoch == 0 || c->count)
			lookup_conn_reset(c);
		c->fib_gen = fgen;
		c->policy_gen = pgen;
	}
	fc = __atomic_load_n(&t->l->cache, __ATOMIC_ACQUIRE);
	if (fc)
		flow_resolve_batch_rcu(fc, t->l->fib, t->fl, t->dec, n);
	else
		fib_resolve_batch_rcu(t->l->fib, t->fl, t->dec, n);

	/* Step 3: each decision to its id, the new ones to records. */
	mask = 2 * c->cap - 1;
	for (unsigned i = 0; i < n; i++) {
		const struct fib_decision *d = &t->dec[i];
		struct lookup_key k;
		struct lookup_slot *sl;
		unsigned h;

		lookup_key_make(&k, d, prefix);
		types[d->type < LOOKUP_TYPES ? d->type : 0]++;
		errors += d->error != 0;
		errs[i] = d->error;
		if (plens)
			plens[i] = (d->flags & FIB_D_ROUTE) ? d->plen : 0;
		for (h = k.hash & mask;; h = (h + 1) & mask) {
			sl = &c->slots[h];
			if (sl->epoch != c->epoch || lookup_key_eq(&c->keys[sl->id - 1], &k))
				break;
		}
		if (sl->epoch != c->epoch) {
			/* New in this epoch: lookup_conn_room left room. */
			sl->id = ++c->count;
			sl->epoch = c->epoch;
			c->keys[sl->id - 1] = k;
			out += lookup_rec_fill((struct lookup_rec *)out, &k, sl->id);
			fresh++;
		}
		ids[i] = sl->id;
	}
	r->generation = fgen;
	fib_read_unlock();
	r->count = (uint16_t)n;
	r->epoch = c->epoch;
	r->nrec = (uint32_t)fresh;
	r->flags = __atomic_load_n(&t->l->ready, __ATOMIC_RELAXED) ? LOOKUP_F_READY : 0;
	if (plens)
		r->flags |= LOOKUP_F_PLEN;

	/* Step 4: the counters, once a batch (this thread writes them alone). */
	for (unsigned k = 0; k < LOOKUP_TYPES; k++)
		if (types[k])
			__atomic_store_n(&t->st.decisions[k], t->st.decisions[k] + types[k],
					 __ATOMIC_RELAXED);
	__atomic_store_n(&t->st.flows, t->st.flows + n, __ATOMIC_RELAXED);
	__atomic_store_n(&t->st.decision_errors, t->st.decision_errors + errors, __ATOMIC_RELAXED);
	__atomic_store_n(&t->st.records, t->st.records + fresh, __ATOMIC_RELAXED);
	if (c->epoch != epoch0)
		__atomic_store_n(&t->st.epochs, t->st.epochs + 1, __ATOMIC_RELAXED);
	return (size_t)(out - (uint8_t *)r);
}

/*
 * Answer one request of either version; returns the answer's length.
 * *cp is the connection's version 2 state.
 */
static size_t
lookup_answer(struct lookup_thread *t, struct lookup_conn **cp, size_t len)
{
	const struct lookup_req *q = (const struct lookup_req *)t->req;
	struct lookup_resp *r = (struct lookup_resp *)t->resp_buf;

	if (len >= 6 && q->magic == LOOKUP_MAGIC && q->version == LOOKUP_VERSION)
		return lookup_answer1(t, len);
	if (len >= 6 && q->magic == LOOKUP_MAGIC && q->version == LOOKUP_VERSION2)
		return lookup_answer2(t, cp, len);
	memset(r, 0, sizeof(*r));
	r->magic = LOOKUP_MAGIC;
	r->version = LOOKUP_VERSION2; /* the newest this server speaks */
	r->status = EPROTONOSUPPORT;
	return sizeof(*r);
}

static int64_t
lookup_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec;
}

static int64_t
lookup_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* An accept succeeded: end an out-of-descriptors episode. */
static void
lookup_fed(struct lookup_thread *t)
{
	struct lookup *l = t->l;

	t->pause_ms = LOOKUP_PAUSE_MIN_MS;
	if (!__atomic_load_n(&l->starved, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&l->starve_lock);
	__atomic_store_n(&l->starved, 0, __ATOMIC_RELAXED);
	listen_spare_refill(&l->spare);
	pthread_mutex_unlock(&l->starve_lock);
}

/*
 * accept() failed with err. EMFILE/ENFILE: refuse the waiting clients
 * through the spare descriptor; if the backlog could not be emptied that
 * way (or on another error), stop polling the listener for a while.
 */
static void
lookup_accept_error(struct lookup_thread *t, int err)
{
	struct lookup *l = t->l;
	int drained = 0;

	if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR || err == ECONNABORTED)
		return; /* another thread took it, or the client left */
	pthread_mutex_lock(&l->starve_lock);
	l->accept_errors++;
	l->accept_errno = err;
	if (err == EMFILE || err == ENFILE) {
		if (!l->starved) {
			__atomic_store_n(&l->starved, 1, __ATOMIC_RELAXED);
			l->fd_episodes++;
		}
		drained = listen_spare_refuse(&l->spare, l->lfd, LOOKUP_REFUSE_BATCH, NULL,
					      &l->refused_fds);
	}
	pthread_mutex_unlock(&l->starve_lock);
	if (drained)
		return;
	if (t->pause_ms < LOOKUP_PAUSE_MIN_MS)
		t->pause_ms = LOOKUP_PAUSE_MIN_MS;
	t->pause_until = lookup_now_ms() + t->pause_ms;
	t->pause_ms = t->pause_ms * 2 > LOOKUP_PAUSE_MAX_MS ? LOOKUP_PAUSE_MAX_MS : t->pause_ms * 2;
}

static void
lookup_drop(struct lookup_thread *t, unsigned i)
{
	close(t->pfd[i].fd);
	lookup_conn_free(t->conn[i - 2]);
	t->pfd[i] = t->pfd[2 + t->nclients - 1];
	t->last[i - 2] = t->last[t->nclients - 1];
	t->conn[i - 2] = t->conn[t->nclients - 1];
	t->conn[t->nclients - 1] = NULL;
	t->nclients--;
}

/*
 * Take a new idle timeout (every client starts a new period), drop the
 * clients idle for idle_ms and set the next check: the oldest client's
 * deadline, at most a second away. Returns ms until then (-1: none).
 */
static int
lookup_idle_check(struct lookup_thread *t, int64_t now)
{
	struct lookup *l = t->l;
	unsigned gen = __atomic_load_n(&l->idle_gen, __ATOMIC_ACQUIRE);
	int64_t next;

	if (gen != t->idle_gen) {
		/* The new period starts when the value was set, not when this
		 * thread's poll (up to a second later) came back. */
		int64_t set = __atomic_load_n(&l->idle_set, __ATOMIC_RELAXED);

		t->idle_gen = gen;
		t->idle_ms = __atomic_load_n(&l->idle_ms, __ATOMIC_RELAXED);
		for (unsigned k = 0; k < t->nclients; k++)
			if (t->last[k] < set)
				t->last[k] = set;
		t->idle_next = 0;
	}
	if (!t->idle_ms)
		return -1;
	if (now < t->idle_next)
		return (int)(t->idle_next - now);
	next = now + 1000;
	for (unsigned k = 0; k < t->nclients; k++) {
		int64_t due = t->last[k] + t->idle_ms;

		if (due <= now) {
			lookup_drop(t, 2 + k--);
			__atomic_fetch_add(&t->st.idle_closed, 1, __ATOMIC_RELAXED);
		} else if (due < next) {
			next = due;
		}
	}
	t->idle_next = next;
	return (int)(next - now);
}

/* A new client in the next free slot (the caller checked there is one). */
static void
lookup_accept(struct lookup_thread *t, int64_t now)
{
	int fd = listen_accept(t->l->lfd);

	if (fd < 0) {
		lookup_accept_error(t, errno);
		return;
	}
	lookup_fed(t);
	t->pfd[2 + t->nclients].fd = fd;
	t->pfd[2 + t->nclients].events = POLLIN;
	t->pfd[2 + t->nclients].revents = 0;
	t->last[t->nclients] = now;
	t->nclients++;
	__atomic_fetch_add(&t->st.clients, 1, __ATOMIC_RELAXED);
}

/*
 * Answer what client pfd[i] sent: every request waiting in its socket,
 * up to LOOKUP_DRAIN a wakeup (a pipelining client gets them all
 * answered for one poll; the bound keeps the thread's other clients
 * served). -1: drop the client (closed, an error, or its socket is full:
 * it sent requests without reading their answers, and the thread will
 * not wait for it).
 */
static int
lookup_serve(struct lookup_thread *t, unsigned i, int64_t now)
{
	int fd = t->pfd[i].fd;
	unsigned reqs = 0;
	int rc = 0;

	struct mmsghdr mm[LOOKUP_DRAIN];
	struct iovec iov[LOOKUP_DRAIN];
	int got;

	/* Every waiting request in one call (up to LOOKUP_DRAIN): a recv
	 * each, and one more to learn the socket was empty, cost a system
	 * call each, the largest part of a lookup thread's time. The
	 * answers still leave one by one, each as soon as it is built. */
	memset(mm, 0, sizeof(mm));
	for (unsigned k = 0; k < LOOKUP_DRAIN; k++) {
		iov[k].iov_base = t->req_buf[k];
		iov[k].iov_len = sizeof(t->req_buf[k]);
		mm[k].msg_hdr.msg_iov = &iov[k];
		mm[k].msg_hdr.msg_iovlen = 1;
	}
	got = recvmmsg(fd, mm, LOOKUP_DRAIN, MSG_DONTWAIT, NULL);
	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (got <= 0)
		return -1; /* end of file (as a recv of 0) or an error */
	for (int k = 0; k < got; k++) {
		ssize_t len = (ssize_t)mm[k].msg_len, out;

		if (len <= 0) {
			rc = -1;
			break;
		}
		t->req = t->req_buf[k];
		out = (ssize_t)lookup_answer(t, &t->conn[i - 2], (size_t)len);
		reqs++;
		/* counted before the answer leaves: a client that has it sees
		 * it counted (this thread writes its counters alone) */
		__atomic_store_n(&t->st.requests, t->st.requests + 1, __ATOMIC_RELAXED);
		if (((struct lookup_resp *)t->resp_buf)->status)
			__atomic_store_n(&t->st.errors, t->st.errors + 1, __ATOMIC_RELAXED);
		if (send(fd, t->resp_buf, (size_t)out, MSG_DONTWAIT | MSG_NOSIGNAL) != out) {
			if (errno == EAGAIN)
				__atomic_store_n(&t->st.dropped, t->st.dropped + 1,
						 __ATOMIC_RELAXED);
			rc = -1;
			break;
		}
	}
	if (reqs)
		t->last[i - 2] = now; /* a request: alive */
	return rc;
}

static void *
lookup_thread_main(void *arg)
{
	struct lookup_thread *t = arg;
	/* one clock read per poll return: the accepts, the requests and the
	 * next round's checks take their times from it */
	int64_t now = lookup_now_ms();

	fib_thread_online();
	for (;;) {
		int n, timeout = 1000, idle;
		int listen;

		/* Before the poll: dropping idle clients frees slots. */
		idle = lookup_idle_check(t, now);
		if (idle >= 0 && idle < timeout)
			timeout = idle;
		listen = t->nclients < LOOKUP_THREAD_CLIENTS;

		/* Paused after an accept error: a shorter poll ends the pause. */
		if (t->pause_until) {
			int64_t left = t->pause_until - now;

			if (left > 0) {
				listen = 0;
				timeout = left < timeout ? (int)left : timeout;
			} else {
				t->pause_until = 0;
			}
		}
		/* Full: leave new clients to the other threads. */
		t->pfd[0].events = listen ? POLLIN : 0;
		/* Wake at least once a second: the watchdog's sign of life. */
		n = poll(t->pfd, 2 + t->nclients, timeout);
		now = lookup_now_ms();
		__atomic_store_n(&t->beat, now / 1000, __ATOMIC_RELAXED);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || t->pfd[1].revents)
			break;
		if ((t->pfd[0].revents & POLLIN) && listen)
			lookup_accept(t, now);
		for (unsigned i = 2; i < 2 + t->nclients; i++)
			if (t->pfd[i].revents && lookup_serve(t, i, now) < 0)
				lookup_drop(t, i--);
	}
	fib_thread_offline();
	return NULL;
}

struct lookup *
lookup_new(struct fib *fib, const char *path, unsigned mode, const char *group,
	   unsigned threads, uint32_t table)
{
	struct lookup *l;
	int err;

	if (threads == 0 || threads > LOOKUP_THREADS_MAX) {
		errno = EINVAL;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->fib = fib;
	l->table = table;
	l->lfd = -1;
	l->efd = -1;
	pthread_mutex_init(&l->starve_lock, NULL);
	l->spare.fd = -1;
	if ((err = listen_spare_open(&l->spare)) < 0)
		goto fail;
	l->efd = eventfd(0, EFD_CLOEXEC);
	if (l->efd < 0) {
		err = -errno;
		goto fail;
	}
	l->lfd = listen_unix(path, SOCK_SEQPACKET, mode, group, 0);
	if (l->lfd < 0) {
		err = l->lfd;
		goto fail;
	}
	strcpy(l->path, path);
	l->t = calloc(threads, sizeof(*l->t));
	if (!l->t) {
		err = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < threads; i++) {
		struct lookup_thread *t = &l->t[i];

		t->l = l;
		t->beat = lookup_now();
		t->pfd[0].fd = l->lfd;
		t->pfd[0].events = POLLIN;
		t->pfd[1].fd = l->efd;
		t->pfd[1].events = POLLIN;
		if ((err = -pthread_create(&t->tid, NULL, lookup_thread_main, t)) < 0)
			goto fail;
		t->started = 1;
		l->nthreads++;
	}
	return l;
fail:
	lookup_free(l);
	errno = -err;
	return NULL;
}

void
lookup_free(struct lookup *l)
{
	uint64_t one = 1;

	if (!l)
		return;
	if (l->efd >= 0 && write(l->efd, &one, sizeof(one)) < 0) {
		/* an eventfd write fails only on overflow: the threads wake anyway */
	}
	for (unsigned i = 0; i < l->nthreads; i++)
		if (l->t[i].started) {
			pthread_join(l->t[i].tid, NULL);
			for (unsigned k = 0; k < l->t[i].nclients; k++) {
				close(l->t[i].pfd[2 + k].fd);
				lookup_conn_free(l->t[i].conn[k]);
			}
		}
	free(l->t);
	listen_unix_close(l->lfd, l->path);
	if (l->efd >= 0)
		close(l->efd);
	listen_spare_close(&l->spare);
	pthread_mutex_destroy(&l->starve_lock);
	free(l);
}

void
lookup_set_ready(struct lookup *l, int ready)
{
	__atomic_store_n(&l->ready, ready, __ATOMIC_RELAXED);
}

void
lookup_set_cache(struct lookup *l, struct flow_cache *fc)
{
	__atomic_store_n(&l->cache, fc, __ATOMIC_RELEASE);
}

void
lookup_set_idle_timeout(struct lookup *l, unsigned ms)
{
	if (__atomic_load_n(&l->idle_ms, __ATOMIC_RELAXED) == ms)
		return;
	__atomic_store_n(&l->idle_ms, ms, __ATOMIC_RELAXED);
	__atomic_store_n(&l->idle_set, lookup_now_ms(), __ATOMIC_RELAXED);
	/* Paired with the acquire load of lookup_idle_check: a thread that
	 * sees the new generation sees the new value. */
	__atomic_fetch_add(&l->idle_gen, 1, __ATOMIC_RELEASE);
}

void
lookup_stats(const struct lookup *l, struct lookup_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned i = 0; i < l->nthreads; i++) {
		const struct lookup_stats *s = &l->t[i].st;

		st->requests += __atomic_load_n(&s->requests, __ATOMIC_RELAXED);
		st->addresses += __atomic_load_n(&s->addresses, __ATOMIC_RELAXED);
		st->errors += __atomic_load_n(&s->errors, __ATOMIC_RELAXED);
		st->clients += __atomic_load_n(&s->clients, __ATOMIC_RELAXED);
		st->dropped += __atomic_load_n(&s->dropped, __ATOMIC_RELAXED);
		st->idle_closed += __atomic_load_n(&s->idle_closed, __ATOMIC_RELAXED);
		st->flows += __atomic_load_n(&s->flows, __ATOMIC_RELAXED);
		st->decision_errors += __atomic_load_n(&s->decision_errors, __ATOMIC_RELAXED);
		st->records += __atomic_load_n(&s->records, __ATOMIC_RELAXED);
		st->epochs += __atomic_load_n(&s->epochs, __ATOMIC_RELAXED);
		for (unsigned k = 0; k < LOOKUP_TYPES; k++)
			st->decisions[k] += __atomic_load_n(&s->decisions[k], __ATOMIC_RELAXED);
	}
	pthread_mutex_lock((pthread_mutex_t *)&l->starve_lock);
	st->refused_fds = l->refused_fds;
	st->accept_errors = l->accept_errors;
	st->fd_episodes = l->fd_episodes;
	st->accept_errno = l->accept_errno;
	st->starved = l->starved;
	pthread_mutex_unlock((pthread_mutex_t *)&l->starve_lock);
}

int
lookup_alive(const struct lookup *l, unsigned max_age)
{
	int64_t now = lookup_now();

	for (unsigned i = 0; i < l->nthreads; i++)
		if (now - __atomic_load_n(&l->t[i].beat, __ATOMIC_RELAXED) > (int64_t)max_age)
			return 0;
	return 1;
}
