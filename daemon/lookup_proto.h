/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: lookup_proto, the batch lookup protocol of fibd and its client API
 *
 * Local programs ask fibd for routes over a SOCK_SEQPACKET UNIX socket
 * (conf: lookup.socket, default /run/fibd/lookup.sock, same mode and group
 * as the control socket). Each message is one request or one answer; a
 * connection carries any number of request/answer pairs, answered in
 * order. All fields are in host byte order (the socket is local), except
 * addresses, which are in network order as on the wire of the network.
 *
 *   request  = struct lookup_req  + count addresses (4 or 16 bytes each)
 *   answer   = struct lookup_resp + count struct lookup_result
 *                                 + nh_total struct lookup_nh
 *
 *   lookup_result[i].nh_first .. +nh_count index the lookup_nh array
 *
 * count is 1..LOOKUP_BATCH_MAX (256). A result with type 0 is "no match".
 * Next hops of every result follow the results; a route has at most
 * LOOKUP_NH_MAX paths in an answer (more are cut, LOOKUP_R_NH_CUT set).
 * Results of routes with the same paths share their next hops (the same
 * nh_first and nh_count): an answer carries each set once, so that a
 * full table's answer is its results and a few next hops.
 * status is 0 or a positive errno (EINVAL: malformed request,
 * EPROTONOSUPPORT: wrong magic or version, EAFNOSUPPORT: bad family).
 * LOOKUP_F_READY in flags says the first full dump is in the FIB; before
 * that answers come from a partial FIB.
 *
 * Served by the daemon's lookup threads (RCU readers): one request costs
 * a batched lookup (fib_lookup4_batch_rcu; through the flow cache with
 * LOOKUP_Q_CACHE) and one send; the requests waiting on a connection
 * are read by one recvmmsg.
 *
 * Pipelining: a client may send up to LOOKUP_INFLIGHT_MAX requests of
 * either version before it reads their answers, which come in order,
 * each with its request's id (lookup_client_send / lookup_client_recv,
 * lookup2_send / lookup2_recv). The server answers every request waiting
 * on a connection when it wakes (at most 16 a turn, then its other
 * clients), so one wakeup serves many; a client whose unread answers
 * fill its socket is disconnected.
 *
 * Version 2: flows in, decisions by reference out (doc/decisions.md,
 * section 6). The version field sits at the same offset in both headers,
 * and both answers share their first 16 bytes (magic, version, family,
 * status, id, count, flags), so one socket serves both, request by
 * request.
 *
 *   request  = struct lookup_req2 + count struct lookup_flow (60 bytes)
 *              (with LOOKUP2_Q_DST: + count addresses, 4 or 16 bytes)
 *   answer   = struct lookup_resp2
 *              + count uint32_t record ids
 *              + count uint8_t errors (0 or the kernel's errno), padded to 4
 *              + nrec records: struct lookup_rec, then its paths
 *                (lookup_rec_paths(rec) struct lookup_nh)
 *
 * A flow is what `ip route get` takes, laid out as struct fib_flow of
 * fib/policy.h: the addresses are 16 bytes whatever the family (IPv4 in
 * the first 4, the rest zero), ports and flow label in host order,
 * iif/oif as ifindex. A field whose LOOKUP_FLOW_* flag is clear must be
 * 0 (iif and oif: non-zero when it is set), and so must the pad and an
 * IPv4 flow's flow label: anything else makes the whole request EINVAL
 * (a bad family: EAFNOSUPPORT; an unknown version: EPROTONOSUPPORT, in
 * an answer whose version is the newest the server speaks). A record is a decision: the kernel's error or route
 * type, the table and rule that decided, the matched prefix, the source
 * address, the chosen path and the route's paths. errors[i] repeats the
 * error of record ids[i], for clients that only ask "routable?".
 *
 * Records and epochs: record ids are local to a connection. The server
 * numbers the distinct decisions it answers on a connection 1, 2, 3, ...
 * and sends each record once, in the first answer that uses it; later
 * answers carry only the id. An answer's ids all name records of its
 * epoch, sent in it or in an earlier answer of the same epoch. A new
 * epoch starts, and the numbering with it, whenever the FIB or policy
 * generation moved since the last request (a record names a route's
 * interned attributes, which a change may free and reuse), or when the
 * connection has LOOKUP2_IDS_MAX records: a client that sees a new epoch
 * drops every record it holds. With LOOKUP2_Q_PLEN records leave the
 * prefix out, so a full table's answers use a few records (its path
 * sets) and a result costs 4 bytes of id, 1 of error, 1 of prefix
 * length. Ids never exceed LOOKUP2_IDS_MAX, so a
 * client keeps its records in an array indexed by id. The records of a
 * connection are only known to a map that read every version 2 answer
 * on it: one map per connection, and no answer read past it.
 *
 * The client API below is header-only (static inline): connect, query,
 * close; for version 2 lookup2_map_init, lookup2_query, lookup2_record
 * and lookup2_map_free (the map holds the records and the receive
 * buffer). Pipelining clients send and receive apart (lookup_client_send
 * and _recv, lookup2_send or lookup2_send_dst and lookup2_recv) and may
 * wait for an answer spinning briefly (lookup_client_wait). Context:
 * any; one connection per thread, one map per connection.
 *
 * It lives beside the code that serves it (daemon/lookup.c) and installs
 * as $(includedir)/fib/lookup_proto.h: clients #include <fib/lookup_proto.h>.
 */
#ifndef DAEMON_LOOKUP_PROTO_H
#define DAEMON_LOOKUP_PROTO_H

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define LOOKUP_MAGIC 0x4c424946u /* "FIBL" */
#define LOOKUP_VERSION 1
#define LOOKUP_VERSION2 2
#define LOOKUP_BATCH_MAX 256
#define LOOKUP_NH_MAX 16
#define LOOKUP_SOCKET "/run/fibd/lookup.sock"
/* Requests a client may have sent without reading their answers: the
 * server answers all that wait, in order, and drops a client whose
 * socket is full of answers it did not read. */
#define LOOKUP_INFLIGHT_MAX 8

#define LOOKUP_F_READY 0x1  /* answer flags */
#define LOOKUP_F_PLEN 0x2   /* version 2: count prefix lengths follow the errors */
#define LOOKUP_R_NH_CUT 0x1 /* result flags: more paths than LOOKUP_NH_MAX */

/*
 * lookup_req.flags. LOOKUP_Q_CACHE: through fibd's flow cache (when it
 * has one) rather than straight to the FIB's batch lookup, which is
 * faster for any mix of addresses on a table the FIB compiles; a client
 * asking the same few addresses again and again may gain from it.
 */
#define LOOKUP_Q_CACHE 0x01

struct lookup_req {
	uint32_t magic;   /* LOOKUP_MAGIC */
	uint16_t version; /* LOOKUP_VERSION */
	uint8_t family;   /* AF_INET or AF_INET6 */
	uint8_t flags;    /* LOOKUP_Q_*, else 0 */
	uint32_t table;   /* 0: the daemon's first listed table (main with all) */
	uint32_t id;      /* echoed in the answer */
	uint16_t count;   /* 1..LOOKUP_BATCH_MAX */
	uint16_t pad;
};

struct lookup_resp {
	uint32_t magic;
	uint16_t version;
	uint8_t family;
	uint8_t status;   /* 0 or a positive errno */
	uint32_t id;
	uint16_t count;   /* results */
	uint16_t flags;   /* LOOKUP_F_* */
	uint32_t nh_total;
	uint32_t pad;
	uint64_t generation; /* fib_generation() when answered */
};

struct lookup_result {
	uint8_t type;     /* enum fib_type; 0: no match */
	uint8_t plen;
	uint8_t nh_count;
	uint8_t flags;    /* LOOKUP_R_* */
	uint32_t nh_first;
	uint32_t table;
	uint32_t priority;
	uint8_t prefix[16]; /* network order; IPv4 in the first 4 bytes */
};

struct lookup_nh {
	uint32_t ifindex;
	uint8_t gw_family; /* 0: no gateway */
	uint8_t flags;
	uint16_t weight;
	uint8_t gw[16];
};

#define LOOKUP_REQ_MAX (sizeof(struct lookup_req) + LOOKUP_BATCH_MAX * 16)
#define LOOKUP_RESP_MAX                                                             \
	(sizeof(struct lookup_resp) + LOOKUP_BATCH_MAX * sizeof(struct lookup_result) + \
	 LOOKUP_BATCH_MAX * LOOKUP_NH_MAX * sizeof(struct lookup_nh))

/* Connect to the lookup socket (NULL: LOOKUP_SOCKET). Returns an fd or
 * -errno. Context: any. */
static inline int
lookup_client_connect(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (!path)
		path = LOOKUP_SOCKET;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/*
 * Wait until an answer can be read on fd: checking without sleeping for
 * up to spin_us microseconds, then sleeping in poll. A client that keeps
 * requests in flight and spins a little is awake when its answer comes,
 * so the lookup thread's send wakes nobody (waking a sleeping client on
 * the other CPU was the largest single cost of a lookup thread); the
 * price is the client's CPU while it spins. 0: sleep at once. Returns 0
 * or -errno. Context: any.
 */
static inline int
lookup_client_wait(int fd, unsigned spin_us)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	struct timespec t0, now;
	int rc;

	if (spin_us) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			rc = poll(&pf, 1, 0);
			if (rc != 0)
				return rc < 0 ? -errno : 0;
			clock_gettime(CLOCK_MONOTONIC, &now);
		} while ((now.tv_sec - t0.tv_sec) * 1000000 + (now.tv_nsec - t0.tv_nsec) / 1000 <
			 (long)spin_us);
	}
	do
		rc = poll(&pf, 1, -1);
	while (rc < 0 && errno == EINTR);
	return rc < 0 ? -errno : 0;
}

/* Send one request: its header and body in one message. 0 or -errno. */
static inline int
lookup_send_parts(int fd, const void *hdr, size_t hlen, const void *body, size_t blen)
{
	struct iovec iov[2] = { { (void *)hdr, hlen }, { (void *)body, blen } };
	struct msghdr mh;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = 2;
	return sendmsg(fd, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/*
 * Send one version 1 request: n (1..256) addresses of one family (4 or
 * 16 bytes each, packed, network order) in table (0: default), flags
 * LOOKUP_Q_* (0: straight to the FIB), id echoed in the answer. At most LOOKUP_INFLIGHT_MAX in flight. 0 or -errno.
 */
static inline int
lookup_client_send(int fd, int family, uint32_t table, unsigned flags, const void *addrs,
		   unsigned n, uint32_t id)
{
	struct lookup_req req;

	if (n == 0 || n > LOOKUP_BATCH_MAX)
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.magic = LOOKUP_MAGIC;
	req.version = LOOKUP_VERSION;
	req.family = (uint8_t)family;
	req.flags = (uint8_t)flags;
	req.table = table;
	req.id = id;
	req.count = (uint16_t)n;
	return lookup_send_parts(fd, &req, sizeof(req), addrs, n * (family == AF_INET6 ? 16 : 4));
}

/*
 * Read the next version 1 answer, to a request of n addresses, into buf
 * (LOOKUP_RESP_MAX bytes, aligned for uint64_t); *resp, *res and *nh
 * point into it. Returns 0, -errno for a socket error, -EPROTO, or
 * -status of the daemon.
 */
static inline int
lookup_client_recv(int fd, unsigned n, void *buf, const struct lookup_resp **resp,
		   const struct lookup_result **res, const struct lookup_nh **nh)
{
	const struct lookup_resp *r = (const struct lookup_resp *)buf;
	ssize_t got = recv(fd, buf, LOOKUP_RESP_MAX, 0);

	if (got < 0)
		return -errno;
	if ((size_t)got < sizeof(*r) || r->magic != LOOKUP_MAGIC)
		return -EPROTO;
	if (r->status)
		return -(int)r->status;
	if ((size_t)got != sizeof(*r) + r->count * sizeof(struct lookup_result) +
				   r->nh_total * sizeof(struct lookup_nh) || r->count != n)
		return -EPROTO;
	*resp = r;
	*res = (const struct lookup_result *)(r + 1);
	*nh = (const struct lookup_nh *)(*res + r->count);
	return 0;
}

/*
 * One batch: lookup_client_send, then lookup_client_recv. Results of
 * routes that share their paths may share their next hops (the same
 * nh_first and nh_count).
 */
static inline int
lookup_client_query(int fd, int family, uint32_t table, const void *addrs, unsigned n,
		    void *buf, const struct lookup_resp **resp,
		    const struct lookup_result **res, const struct lookup_nh **nh)
{
	int rc = lookup_client_send(fd, family, table, 0, addrs, n, 0);

	return rc < 0 ? rc : lookup_client_recv(fd, n, buf, resp, res, nh);
}

/* Version 2. */

#define LOOKUP2_IDS_MAX 8192 /* records a connection holds in one epoch */

/* lookup_flow.flags: which optional fields are given (as FIB_FLOW_*). */
#define LOOKUP_FLOW_SRC 0x01      /* src: `from` */
#define LOOKUP_FLOW_IIF 0x02      /* iif: an input (forwarded) flow */
#define LOOKUP_FLOW_OIF 0x04
#define LOOKUP_FLOW_UID 0x08
#define LOOKUP_FLOW_FIBMATCH 0x10 /* the matched route only (`fibmatch`) */
#define LOOKUP_FLOW_DSCP 0x20     /* tos holds a DSCP (`dscp`), not a TOS */
#define LOOKUP_FLOW_ALL 0x3f

/* lookup_rec.flags (as FIB_D_*), and LOOKUP_D_CUT. */
#define LOOKUP_D_RULE 0x01  /* rule holds the deciding rule's priority */
#define LOOKUP_D_SRC 0x02   /* src holds the preferred source */
#define LOOKUP_D_ROUTE 0x04 /* a route matched: prefix, plen, table, paths */
#define LOOKUP_D_CUT 0x80   /* more than LOOKUP_NH_MAX paths: the list is cut */

/*
 * lookup_req2.flags. LOOKUP2_Q_PLEN: records leave out the matched
 * prefix (plen and prefix 0), so that the routes of one set of paths
 * share one record (a full table has a few hundred thousand prefixes but
 * a few hundred path sets: without it nearly every answer carries new
 * records); the answer carries each result's prefix length instead
 * (LOOKUP_F_PLEN, lookup2_map.plen): the prefix is the destination cut
 * to it.
 */
#define LOOKUP2_Q_PLEN 0x01
/*
 * LOOKUP2_Q_DST: the request carries count bare destinations (4 or 16
 * bytes each, network order, packed) instead of struct lookup_flow:
 * each is the flow of `ip route get ADDR`, every other field zero. A
 * sixteenth of the request's bytes for the common question, and nothing
 * for the server to check but the size (lookup2_send_dst).
 */
#define LOOKUP2_Q_DST 0x02

struct lookup_req2 {
	uint32_t magic;   /* LOOKUP_MAGIC */
	uint16_t version; /* LOOKUP_VERSION2 */
	uint8_t family;   /* AF_INET or AF_INET6: every flow's */
	uint8_t flags;    /* LOOKUP2_Q_*, else 0 */
	uint16_t count;   /* 1..LOOKUP_BATCH_MAX flows follow */
	uint16_t pad;     /* 0 */
	uint32_t id;      /* echoed in the answer */
};

/* The layout of libfib's struct fib_flow, the family's byte a pad. */
struct lookup_flow {
	uint8_t pad;      /* 0 */
	uint8_t tos;      /* the kernel's tos byte, or a DSCP with LOOKUP_FLOW_DSCP */
	uint8_t ipproto;  /* 0 any */
	uint8_t flags;    /* LOOKUP_FLOW_* */
	uint32_t iif, oif; /* ifindex; with LOOKUP_FLOW_IIF / _OIF, else 0 */
	uint32_t mark;
	uint32_t uid;     /* with LOOKUP_FLOW_UID, else 0 */
	uint16_t sport, dport; /* host order */
	uint32_t flowlabel;    /* IPv6, host order, 20 bits; IPv4: 0 */
	uint8_t dst[16];  /* network order; IPv4 in the first 4 bytes */
	uint8_t src[16];  /* with LOOKUP_FLOW_SRC, else zero */
};

/* The same first 16 bytes as struct lookup_resp. */
struct lookup_resp2 {
	uint32_t magic;
	uint16_t version; /* LOOKUP_VERSION2; an EPROTONOSUPPORT answer: the newest the server speaks */
	uint8_t family;
	uint8_t status;   /* 0 or a positive errno */
	uint32_t id;
	uint16_t count;   /* ids (and errors) */
	uint16_t flags;   /* LOOKUP_F_* */
	uint32_t epoch;   /* of the ids and records; a new one: drop every record */
	uint32_t nrec;    /* records in this answer */
	uint64_t generation; /* fib_generation() when answered */
};

/* One decision; lookup_rec_paths(rec) struct lookup_nh follow it. */
struct lookup_rec {
	uint32_t id;      /* 1..LOOKUP2_IDS_MAX */
	uint8_t family;
	uint8_t type;     /* enum fib_type of the matched route (RTN_*); 0 none */
	uint8_t error;    /* 0, ENETUNREACH, EHOSTUNREACH, EACCES, EINVAL */
	uint8_t plen;     /* of prefix */
	uint8_t flags;    /* LOOKUP_D_* */
	uint8_t path;     /* index of the chosen path among the route's */
	uint8_t npaths;   /* the route's paths */
	uint8_t tos;      /* of the matched route */
	uint8_t gw_family; /* of gateway; 0: none */
	uint8_t pad[3];
	uint32_t table;   /* with LOOKUP_D_ROUTE */
	uint32_t rule;    /* priority of the deciding rule, with LOOKUP_D_RULE */
	uint32_t ifindex; /* the chosen path's device; 0 none */
	uint8_t prefix[16], src[16], gateway[16]; /* network order */
};

/* Paths that follow rec: a multipath route's (at most LOOKUP_NH_MAX), 0
 * for one path or none (gateway and ifindex say it all). */
static inline unsigned
lookup_rec_paths(const struct lookup_rec *rec)
{
	if (rec->npaths < 2)
		return 0;
	return rec->npaths > LOOKUP_NH_MAX ? LOOKUP_NH_MAX : rec->npaths;
}

#define LOOKUP2_REQ_MAX (sizeof(struct lookup_req2) + LOOKUP_BATCH_MAX * sizeof(struct lookup_flow))
#define LOOKUP2_RESP_MAX                                                     \
	(sizeof(struct lookup_resp2) + LOOKUP_BATCH_MAX * (4 + 1 + 1) +        \
	 LOOKUP_BATCH_MAX * (sizeof(struct lookup_rec) + LOOKUP_NH_MAX * sizeof(struct lookup_nh)))

/* A record as the client keeps it: the decision and its paths. */
struct lookup2_entry {
	struct lookup_rec rec; /* rec.id 0: no record for this id */
	struct lookup_nh nh[LOOKUP_NH_MAX];
};

/* The client's records of one connection, indexed by id, and its buffer. */
struct lookup2_map {
	uint32_t epoch;   /* 0: none yet */
	uint32_t cap;     /* entries in e[] (ids 0..cap-1) */
	struct lookup2_entry *e;
	uint64_t *buf;    /* LOOKUP2_RESP_MAX bytes */
	uint32_t resets;  /* epochs seen change (records dropped) */
	uint32_t records; /* records received, total */
	uint8_t plen[LOOKUP_BATCH_MAX]; /* of the last answer, with LOOKUP_F_PLEN */
};

/* Context: owner (of m). lookup2_map_init returns 0 or -ENOMEM. */
static inline int
lookup2_map_init(struct lookup2_map *m)
{
	memset(m, 0, sizeof(*m));
	m->buf = (uint64_t *)malloc(LOOKUP2_RESP_MAX);
	return m->buf ? 0 : -ENOMEM;
}

static inline void
lookup2_map_free(struct lookup2_map *m)
{
	free(m->e);
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

/* The record of id, NULL when the map has none. Context: owner (of m). */
static inline const struct lookup2_entry *
lookup2_record(const struct lookup2_map *m, uint32_t id)
{
	if (id == 0 || id >= m->cap || m->e[id].rec.id != id)
		return NULL;
	return &m->e[id];
}

/* Store the records of an answer (nrec of them in p..end); -EPROTO if
 * they do not fit in it exactly, -ENOMEM. */
static inline int
lookup2_map_store(struct lookup2_map *m, const uint8_t *p, const uint8_t *end, uint32_t nrec)
{
	for (uint32_t k = 0; k < nrec; k++) {
		struct lookup_rec rec;
		unsigned np;

		if ((size_t)(end - p) < sizeof(rec))
			return -EPROTO;
		memcpy(&rec, p, sizeof(rec));
		p += sizeof(rec);
		np = lookup_rec_paths(&rec);
		if (rec.id == 0 || rec.id > LOOKUP2_IDS_MAX ||
		    (size_t)(end - p) < np * sizeof(struct lookup_nh))
			return -EPROTO;
		if (rec.id >= m->cap) {
			uint32_t cap = m->cap ? m->cap : 64;
			struct lookup2_entry *e;

			while (cap <= rec.id)
				cap *= 2;
			e = (struct lookup2_entry *)realloc(m->e, cap * sizeof(*e));
			if (!e)
				return -ENOMEM;
			memset(e + m->cap, 0, (cap - m->cap) * sizeof(*e));
			m->e = e;
			m->cap = cap;
		}
		m->e[rec.id].rec = rec;
		memcpy(m->e[rec.id].nh, p, np * sizeof(struct lookup_nh));
		p += np * sizeof(struct lookup_nh);
		m->records++;
	}
	return p == end ? 0 : -EPROTO;
}

/*
 * Read the answer in m->buf (got bytes) to a batch of n flows: drop the
 * records on a new epoch, store the new ones, copy ids and errors. 0,
 * -EPROTO for an answer that does not add up or names an id without
 * record, -ENOMEM, or -status of the daemon.
 */
static inline int
lookup2_parse(struct lookup2_map *m, size_t got, unsigned n, uint32_t *ids, uint8_t *errs)
{
	const struct lookup_resp2 *r = (const struct lookup_resp2 *)m->buf;
	const uint8_t *p = (const uint8_t *)m->buf;
	size_t head = sizeof(*r) + n * 4 + ((n + 3) & ~3u);
	int rc;

	if (got < sizeof(*r) || r->magic != LOOKUP_MAGIC)
		return -EPROTO;
	if (r->flags & LOOKUP_F_PLEN)
		head += (n + 3) & ~3u;
	if (r->status)
		return -(int)r->status;
	if (r->version != LOOKUP_VERSION2 || r->count != n || got < head || r->epoch == 0 ||
	    r->nrec > n)
		return -EPROTO;
	if (r->epoch != m->epoch) {
		for (uint32_t i = 0; i < m->cap; i++)
			m->e[i].rec.id = 0;
		if (m->epoch)
			m->resets++;
		m->epoch = r->epoch;
	}
	if ((rc = lookup2_map_store(m, p + head, p + got, r->nrec)) < 0)
		return rc;
	memcpy(ids, p + sizeof(*r), n * 4);
	memcpy(errs, p + sizeof(*r) + n * 4, n);
	if (r->flags & LOOKUP_F_PLEN)
		memcpy(m->plen, p + sizeof(*r) + n * 4 + ((n + 3) & ~3u), n);
	for (unsigned i = 0; i < n; i++)
		if (!lookup2_record(m, ids[i]))
			return -EPROTO;
	return 0;
}

/* A version 2 request header. */
static inline void
lookup2_req_fill(struct lookup_req2 *req, int family, unsigned flags, unsigned n, uint32_t id)
{
	memset(req, 0, sizeof(*req));
	req->magic = LOOKUP_MAGIC;
	req->version = LOOKUP_VERSION2;
	req->family = (uint8_t)family;
	req->flags = (uint8_t)flags;
	req->count = (uint16_t)n;
	req->id = id;
}

/*
 * Send one version 2 request: n (1..256) flows of family, flags
 * LOOKUP2_Q_* (0: records with their prefix), id echoed in the answer.
 * Several may be in flight (sent before their answers are read, which
 * come in order): at most LOOKUP_INFLIGHT_MAX. 0 or -errno.
 */
static inline int
lookup2_send(int fd, int family, unsigned flags, const struct lookup_flow *flows, unsigned n,
	     uint32_t id)
{
	struct lookup_req2 req;

	if (n == 0 || n > LOOKUP_BATCH_MAX)
		return -EINVAL;
	lookup2_req_fill(&req, family, flags, n, id);
	return lookup_send_parts(fd, &req, sizeof(req), flows, n * sizeof(*flows));
}

/*
 * Send a version 2 request of n bare destinations (LOOKUP2_Q_DST; 4 or
 * 16 bytes each as family, network order, packed), flags other
 * LOOKUP2_Q_* (0: records with their prefix); read its answer with
 * lookup2_recv. Returns 0 or -errno.
 */
static inline int
lookup2_send_dst(int fd, int family, unsigned flags, const void *addrs, unsigned n, uint32_t id)
{
	struct lookup_req2 req;

	if (n == 0 || n > LOOKUP_BATCH_MAX || (family != AF_INET && family != AF_INET6))
		return -EINVAL;
	lookup2_req_fill(&req, family, flags | LOOKUP2_Q_DST, n, id);
	return lookup_send_parts(fd, &req, sizeof(req), addrs, n * (family == AF_INET6 ? 16 : 4));
}

/*
 * Read the next version 2 answer, to a request of n flows: as
 * lookup2_query's return. The answer's id is
 * ((struct lookup_resp2 *)m->buf)->id.
 */
static inline int
lookup2_recv(int fd, unsigned n, uint32_t *ids, uint8_t *errs, struct lookup2_map *m)
{
	ssize_t got = recv(fd, m->buf, LOOKUP2_RESP_MAX, 0);

	if (got < 0)
		return -errno;
	return lookup2_parse(m, (size_t)got, n, ids, errs);
}

/*
 * One version 2 batch: n (1..256) flows of family. On return ids[i] is
 * the record id of flow i's decision (lookup2_record(m, ids[i]) its
 * record, always there) and errs[i] its error (0 or the kernel's errno).
 * Returns 0, -errno for a socket error, -EPROTO for an answer that does
 * not add up (or names an id without record), or -status of the daemon
 * (a malformed request: -EINVAL; the connection stays usable).
 */
static inline int
lookup2_query(int fd, int family, const struct lookup_flow *flows, unsigned n, uint32_t *ids,
	      uint8_t *errs, struct lookup2_map *m)
{
	int rc = lookup2_send(fd, family, 0, flows, n, 0);

	return rc < 0 ? rc : lookup2_recv(fd, n, ids, errs, m);
}

#endif
