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
 * status is 0 or a positive errno (EINVAL: malformed request,
 * EPROTONOSUPPORT: wrong magic or version, EAFNOSUPPORT: bad family).
 * LOOKUP_F_READY in flags says the first full dump is in the FIB; before
 * that answers come from a partial FIB.
 *
 * Served by the daemon's lookup threads (RCU readers): one request costs
 * one recv, a batched trie lookup (fib_lookup4_batch_rcu) and one send.
 *
 * The client API below is header-only (static inline): connect, query,
 * close. Context: any; one connection per thread.
 *
 * It lives beside the code that serves it (daemon/lookup.c) and installs
 * as $(includedir)/fib/lookup_proto.h: clients #include <fib/lookup_proto.h>.
 */
#ifndef DAEMON_LOOKUP_PROTO_H
#define DAEMON_LOOKUP_PROTO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define LOOKUP_MAGIC 0x4c424946u /* "FIBL" */
#define LOOKUP_VERSION 1
#define LOOKUP_BATCH_MAX 256
#define LOOKUP_NH_MAX 16
#define LOOKUP_SOCKET "/run/fibd/lookup.sock"

#define LOOKUP_F_READY 0x1  /* answer flags */
#define LOOKUP_R_NH_CUT 0x1 /* result flags: more paths than LOOKUP_NH_MAX */

struct lookup_req {
	uint32_t magic;   /* LOOKUP_MAGIC */
	uint16_t version; /* LOOKUP_VERSION */
	uint8_t family;   /* AF_INET or AF_INET6 */
	uint8_t flags;    /* 0 */
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
 * One batch: n (1..256) addresses of one family (4 or 16 bytes each, packed,
 * network order) in table (0: default). buf (LOOKUP_RESP_MAX bytes, aligned
 * for uint64_t) receives the answer; *resp, *res and *nh point into it.
 * Returns 0, -errno for a socket error, or -status of the daemon.
 */
static inline int
lookup_client_query(int fd, int family, uint32_t table, const void *addrs, unsigned n,
		    void *buf, const struct lookup_resp **resp,
		    const struct lookup_result **res, const struct lookup_nh **nh)
{
	struct lookup_req req;
	struct iovec iov[2];
	struct msghdr mh;
	size_t alen = family == AF_INET6 ? 16 : 4;
	const struct lookup_resp *r = (const struct lookup_resp *)buf;
	ssize_t got;

	if (n == 0 || n > LOOKUP_BATCH_MAX)
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.magic = LOOKUP_MAGIC;
	req.version = LOOKUP_VERSION;
	req.family = (uint8_t)family;
	req.table = table;
	req.count = (uint16_t)n;
	iov[0].iov_base = &req;
	iov[0].iov_len = sizeof(req);
	iov[1].iov_base = (void *)addrs;
	iov[1].iov_len = n * alen;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = 2;
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
		return -errno;
	got = recv(fd, buf, LOOKUP_RESP_MAX, 0);
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

#endif
