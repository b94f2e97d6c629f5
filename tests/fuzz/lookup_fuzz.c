// SPDX-License-Identifier: BSD-2-Clause
/*
 * DOC: libFuzzer target for the batch lookup service
 *
 * Each input is one datagram as a lookup thread would recv() it (cut at
 * the size of the thread's request buffer, as SOCK_SEQPACKET cuts it) and
 * goes to lookup_answer(), the function that validates a request and
 * builds its answer. lookup_answer is static in daemon/lookup.c, so this
 * file includes lookup.c itself: no socket, no thread, one call an input
 * (a socketpair to a lookup_new() instance costs two context switches an
 * input for the same code).
 *
 * The FIB is small and known (routes[] below, IPv4 and IPv6, two tables,
 * a 20-path route to reach LOOKUP_R_NH_CUT, blackhole and unreachable
 * routes), so every answer is checked against a naive longest-prefix
 * match over routes[]:
 *
 *   - status is the one the request deserves (EPROTONOSUPPORT, then
 *     EAFNOSUPPORT, then EINVAL for a bad count or length), an error
 *     answer is a bare struct lookup_resp with magic and version set;
 *   - an answer's length is resp + count results + nh_total next hops,
 *     at most LOOKUP_RESP_MAX; id and family are echoed;
 *   - each result is the model's route (type, plen, prefix, table,
 *     priority, paths up to LOOKUP_NH_MAX with the cut flag), its next
 *     hops are a contiguous range in order inside nh_total.
 *
 * Version 2 requests go to the same lookup_answer with one connection
 * state kept across inputs (as one long connection), and the answer is
 * read by the client's own lookup2_parse into one map:
 *
 *   - status as a separate model of the checks says (header, size, each
 *     flow's fields), the same bare header for errors;
 *   - lookup2_parse accepts every good answer: sizes add up, each id has
 *     its record (sent now or earlier in the epoch), ids at most
 *     LOOKUP2_IDS_MAX, at most one record per flow;
 *   - each flow's record equals fib_resolve_rcu of it (error, type,
 *     table, rule, prefix, source, chosen path, the paths up to
 *     LOOKUP_NH_MAX with LOOKUP_D_CUT).
 *
 * Built by `make fuzz-lookup` (clang only, tests/fuzz/local.mk) and run
 * for FUZZ_SECONDS from the seeds in tests/fuzz/lookup_corpus.
 */
#include "daemon/lookup.c"

#include <stdio.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TABLE_MAIN 254
#define TABLE_OTHER 100

struct model_route {
	int family;
	const char *prefix;
	uint8_t plen;
	uint8_t type;
	uint32_t table;
	uint32_t priority;
	unsigned nnh;
	union fib_addr dst; /* filled at start */
};

static struct model_route routes[] = {
	{ AF_INET, "0.0.0.0", 0, FIB_UNICAST, TABLE_MAIN, 0, 1 },
	{ AF_INET, "10.0.0.0", 8, FIB_UNICAST, TABLE_MAIN, 10, 2 },
	{ AF_INET, "10.1.0.0", 16, FIB_UNICAST, TABLE_MAIN, 20, 20 },
	{ AF_INET, "10.1.2.0", 24, FIB_BLACKHOLE, TABLE_MAIN, 0, 0 },
	{ AF_INET, "192.0.2.0", 24, FIB_UNICAST, TABLE_MAIN, 0, 1 },
	{ AF_INET, "192.0.2.128", 25, FIB_UNICAST, TABLE_MAIN, 0, 3 },
	{ AF_INET, "192.0.2.255", 32, FIB_UNICAST, TABLE_MAIN, 0, 1 },
	{ AF_INET, "198.51.100.0", 24, FIB_UNREACHABLE, TABLE_MAIN, 0, 0 },
	{ AF_INET, "10.0.0.0", 8, FIB_UNICAST, TABLE_OTHER, 5, 1 },
	{ AF_INET, "203.0.113.7", 32, FIB_UNICAST, TABLE_OTHER, 0, 1 },
	{ AF_INET6, "2001:db8::", 32, FIB_UNICAST, TABLE_MAIN, 1024, 1 },
	{ AF_INET6, "2001:db8:1::", 48, FIB_UNICAST, TABLE_MAIN, 1024, 17 },
	{ AF_INET6, "2001:db8:1:2::", 64, FIB_BLACKHOLE, TABLE_MAIN, 0, 0 },
	{ AF_INET6, "fe80::", 10, FIB_UNICAST, TABLE_MAIN, 256, 1 },
	{ AF_INET6, "::", 0, FIB_UNICAST, TABLE_OTHER, 0, 2 },
};
#define NROUTES (sizeof(routes) / sizeof(routes[0]))

static struct fib *fib;
static struct lookup lk;
static struct lookup_thread th;
static struct lookup_conn *conn; /* the version 2 state of the one connection */
static struct lookup2_map map;   /* its client's records */

/* The gateway of path k of route i: distinct per route and path. */
static void
model_nh(unsigned i, unsigned k, struct fib_nh *nh)
{
	memset(nh, 0, sizeof(*nh));
	nh->ifindex = 1 + i;
	nh->weight = (uint16_t)(1 + k);
	nh->gw_family = (uint8_t)routes[i].family;
	if (routes[i].family == AF_INET) {
		nh->gw.b[0] = 172;
		nh->gw.b[1] = 16;
		nh->gw.b[2] = (uint8_t)i;
		nh->gw.b[3] = (uint8_t)(k + 1);
	} else {
		nh->gw.b[0] = 0xfe;
		nh->gw.b[1] = 0x80;
		nh->gw.b[14] = (uint8_t)i;
		nh->gw.b[15] = (uint8_t)(k + 1);
	}
}

static int
covers(const union fib_addr *pfx, unsigned plen, const uint8_t *a)
{
	unsigned full = plen / 8, rest = plen % 8;

	if (memcmp(pfx->b, a, full) != 0)
		return 0;
	return rest == 0 || ((pfx->b[full] ^ a[full]) & (0xff00 >> rest) & 0xff) == 0;
}

/* Index of the longest match in routes[], -1 for none. */
static int
model_lookup(int family, uint32_t table, const uint8_t *a)
{
	int best = -1;

	for (unsigned i = 0; i < NROUTES; i++)
		if (routes[i].family == family && routes[i].table == table &&
		    covers(&routes[i].dst, routes[i].plen, a) &&
		    (best < 0 || routes[i].plen > routes[best].plen))
			best = (int)i;
	return best;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fib = fib_new(NULL);
	if (!fib)
		abort();
	for (unsigned i = 0; i < NROUTES; i++) {
		struct model_route *m = &routes[i];
		struct fib_nh nh[32];
		struct fib_route r;

		if (inet_pton(m->family, m->prefix, m->dst.b) != 1)
			abort();
		memset(&r, 0, sizeof(r));
		r.family = (uint8_t)m->family;
		r.plen = m->plen;
		r.type = m->type;
		r.table = m->table;
		r.priority = m->priority;
		r.protocol = 4; /* RTPROT_STATIC */
		r.dst = m->dst;
		for (unsigned k = 0; k < m->nnh; k++)
			model_nh(i, k, &nh[k]);
		r.nh = nh;
		r.nh_count = (uint8_t)m->nnh;
		if (fib_add(fib, &r, 0) != 0) {
			fprintf(stderr, "fib_add %s/%u failed\n", m->prefix, m->plen);
			abort();
		}
	}
	fib_thread_online();
	lk.fib = fib;
	lk.table = TABLE_MAIN;
	lk.ready = 1;
	lk.lfd = lk.efd = -1;
	th.l = &lk;
	if (lookup2_map_init(&map) < 0)
		abort();
	return 0;
}

/* The model of a version 2 request's checks: its status. */
static int
model2_status(const struct lookup_req2 *q, size_t len)
{
	const struct lookup_flow *w = (const struct lookup_flow *)(q + 1);
	static const uint8_t zero[16];

	if (len < sizeof(*q))
		return EINVAL;
	if (q->family != AF_INET && q->family != AF_INET6)
		return EAFNOSUPPORT;
	if (q->count < 1 || q->count > LOOKUP_BATCH_MAX ||
	    (q->flags & ~(LOOKUP2_Q_PLEN | LOOKUP2_Q_DST)) || q->pad)
		return EINVAL;
	if (q->flags & LOOKUP2_Q_DST) /* bare destinations: only the size */
		return len == sizeof(*q) + q->count * (q->family == AF_INET ? 4u : 16u) ? 0 : EINVAL;
	if (len != sizeof(*q) + q->count * sizeof(*w))
		return EINVAL;
	for (unsigned i = 0; i < q->count; i++) {
		const struct lookup_flow *f = &w[i];
		int v4 = q->family == AF_INET;

		if (f->flags > 0x3f || f->pad || f->flowlabel >= (1u << 20) || (v4 && f->flowlabel))
			return EINVAL;
		if (((f->flags & LOOKUP_FLOW_IIF) != 0) != (f->iif != 0) ||
		    ((f->flags & LOOKUP_FLOW_OIF) != 0) != (f->oif != 0))
			return EINVAL;
		if (!(f->flags & LOOKUP_FLOW_UID) && f->uid)
			return EINVAL;
		if (!(f->flags & LOOKUP_FLOW_SRC) && memcmp(f->src, zero, 16))
			return EINVAL;
		if ((f->flags & LOOKUP_FLOW_DSCP) && f->tos >= 64)
			return EINVAL;
		if (v4 && (memcmp(f->dst + 4, zero, 12) || memcmp(f->src + 4, zero, 12)))
			return EINVAL;
	}
	return 0;
}

/* Flow i's record against fib_resolve_rcu; plen: its prefix length
 * given beside the record (LOOKUP2_Q_PLEN), -1: the record has it. */
static void
check_rec(int family, const struct lookup_flow *f, const struct lookup2_entry *e, uint8_t err,
	  int plen)
{
	const struct lookup_rec *rec = &e->rec;
	struct fib_flow fl;
	struct fib_decision d;

	memset(&fl, 0, sizeof(fl));
	fl.family = (uint8_t)family;
	fl.tos = f->tos;
	fl.ipproto = f->ipproto;
	fl.flags = f->flags;
	fl.iif = f->iif;
	fl.oif = f->oif;
	fl.mark = f->mark;
	fl.uid = f->uid;
	fl.sport = f->sport;
	fl.dport = f->dport;
	fl.flowlabel = f->flowlabel;
	memcpy(fl.dst.b, f->dst, 16);
	memcpy(fl.src.b, f->src, 16);
	fib_read_lock();
	fib_resolve_rcu(fib, &fl, &d);
	if (rec->error != d.error || err != d.error || rec->type != d.type ||
	    rec->family != family ||
	    (rec->flags & ~LOOKUP_D_CUT) != (d.flags & (FIB_D_RULE | FIB_D_SRC | FIB_D_ROUTE)))
		abort();
	if ((d.flags & FIB_D_RULE) && rec->rule != d.rule)
		abort();
	if ((d.flags & FIB_D_SRC) && memcmp(rec->src, d.src.b, 16))
		abort();
	if ((d.flags & FIB_D_ROUTE) && d.info) {
		unsigned np = d.info->nh_count;

		static const uint8_t none[16];

		/* LOOKUP2_Q_PLEN: no prefix in the record, its length per result */
		if ((plen >= 0 ? rec->plen != 0 || memcmp(rec->prefix, none, 16) || plen != d.plen
			       : rec->plen != d.plen || memcmp(rec->prefix, d.prefix.b, 16)) ||
		    rec->table != d.table || rec->npaths != np ||
		    ((rec->flags & LOOKUP_D_CUT) != 0) != (np > LOOKUP_NH_MAX))
			abort();
		if (np && (rec->path != d.path || rec->ifindex != d.info->nh[d.path].ifindex ||
			   memcmp(rec->gateway, d.info->nh[d.path].gw.b, 16)))
			abort();
		for (unsigned k = 0; k < lookup_rec_paths(rec); k++)
			if (e->nh[k].ifindex != d.info->nh[k].ifindex ||
			    e->nh[k].weight != d.info->nh[k].weight ||
			    memcmp(e->nh[k].gw, d.info->nh[k].gw.b, 16))
				abort();
	}
	fib_read_unlock();
}

/* A version 2 request and its answer (out bytes in th.resp_buf). */
static void
check_v2(size_t len, size_t out)
{
	const struct lookup_req2 *q = (const struct lookup_req2 *)th.req_buf[0];
	const struct lookup_resp2 *r = (const struct lookup_resp2 *)th.resp_buf;
	const struct lookup_flow *w = (const struct lookup_flow *)(q + 1);
	struct lookup_flow dst;
	uint32_t ids[LOOKUP_BATCH_MAX];
	uint8_t errs[LOOKUP_BATCH_MAX];
	int status = model2_status(q, len);

	if (r->magic != LOOKUP_MAGIC || r->version != LOOKUP_VERSION2 || r->status != status)
		abort();
	if (status) {
		if (out != sizeof(*r) || r->count || r->nrec)
			abort();
		return;
	}
	if (out > LOOKUP2_RESP_MAX || r->id != q->id || r->family != q->family ||
	    r->flags != (LOOKUP_F_READY | ((q->flags & LOOKUP2_Q_PLEN) ? LOOKUP_F_PLEN : 0)))
		abort();
	memcpy(map.buf, th.resp_buf, out);
	if (lookup2_parse(&map, out, q->count, ids, errs) != 0)
		abort();
	for (unsigned i = 0; i < q->count; i++) {
		const struct lookup_flow *f = &w[i];

		if (ids[i] > LOOKUP2_IDS_MAX)
			abort();
		if (q->flags & LOOKUP2_Q_DST) {
			/* the flow of `ip route get ADDR`: all else zero */
			size_t alen = q->family == AF_INET ? 4 : 16;

			memset(&dst, 0, sizeof(dst));
			memcpy(dst.dst, (const uint8_t *)(q + 1) + i * alen, alen);
			f = &dst;
		}
		check_rec(q->family, f, lookup2_record(&map, ids[i]), errs[i],
			  (q->flags & LOOKUP2_Q_PLEN) ? map.plen[i] : -1);
	}
}

static void
check_result(const struct lookup_req *q, unsigned i, const uint8_t *a,
	     const struct lookup_result *o, const struct lookup_nh *nh, uint32_t nh_total,
	     uint32_t *nh_next)
{
	uint32_t table = q->table ? q->table : TABLE_MAIN;
	int best = model_lookup(q->family, table, a);
	const struct model_route *m;
	unsigned want;

	(void)i;
	if (best < 0) {
		static const struct lookup_result zero;

		if (memcmp(o, &zero, sizeof(zero)) != 0)
			abort();
		return;
	}
	m = &routes[best];
	want = m->nnh > LOOKUP_NH_MAX ? LOOKUP_NH_MAX : m->nnh;
	if (o->type != m->type || o->plen != m->plen || o->table != m->table ||
	    o->priority != m->priority || memcmp(o->prefix, m->dst.b, 16) != 0 ||
	    !covers((const union fib_addr *)o->prefix, o->plen, a))
		abort();
	if (o->nh_count != want || o->flags != (m->nnh > LOOKUP_NH_MAX ? LOOKUP_R_NH_CUT : 0))
		abort();
	/* a route's next hops come new, right after the last ones, or
	 * shared with an earlier result of the same paths */
	if ((o->nh_first != *nh_next && o->nh_first + o->nh_count > *nh_next) ||
	    (uint64_t)o->nh_first + o->nh_count > nh_total)
		abort();
	for (unsigned k = 0; k < o->nh_count; k++) {
		const struct lookup_nh *d = &nh[o->nh_first + k];
		struct fib_nh s;

		model_nh((unsigned)best, k, &s);
		if (d->ifindex != s.ifindex || d->gw_family != s.gw_family ||
		    d->weight != s.weight || memcmp(d->gw, s.gw.b, 16) != 0)
			abort();
	}
	if (o->nh_first == *nh_next)
		*nh_next += o->nh_count;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct lookup_req *q = (const struct lookup_req *)th.req_buf[0];
	const struct lookup_resp *r = (const struct lookup_resp *)th.resp_buf;
	const struct lookup_result *res = (const struct lookup_result *)(r + 1);
	const struct lookup_nh *nh;
	const uint8_t *addr = (const uint8_t *)(q + 1);
	size_t len = size < sizeof(th.req_buf[0]) ? size : sizeof(th.req_buf[0]);
	size_t out, alen;
	uint32_t nh_next = 0;
	int status;

	/* recv() leaves the rest of the buffer as the last request had it:
	 * keep that, the answer must not depend on it. */
	memcpy(th.req_buf[0], data, len);
	th.req = th.req_buf[0]; /* as lookup_serve sets it for each request */
	out = lookup_answer(&th, &conn, len);

	if (out < sizeof(*r) || out > LOOKUP_RESP_BUF)
		abort();
	if (len < 6 || q->magic != LOOKUP_MAGIC ||
	    (q->version != LOOKUP_VERSION && q->version != LOOKUP_VERSION2)) {
		/* the newest version this server speaks, in a bare header */
		if (r->magic != LOOKUP_MAGIC || r->version != LOOKUP_VERSION2 ||
		    r->status != EPROTONOSUPPORT || out != sizeof(*r) || r->count)
			abort();
		return 0;
	}
	if (q->version == LOOKUP_VERSION2) {
		check_v2(len, out);
		return 0;
	}
	if (out > LOOKUP_RESP_MAX || r->magic != LOOKUP_MAGIC || r->version != LOOKUP_VERSION)
		abort();
	if (len < sizeof(*q))
		status = EPROTONOSUPPORT;
	else if (q->family != AF_INET && q->family != AF_INET6)
		status = EAFNOSUPPORT;
	else if (q->count == 0 || q->count > LOOKUP_BATCH_MAX || (q->flags & ~LOOKUP_Q_CACHE) ||
		 len != sizeof(*q) + q->count * (q->family == AF_INET ? 4u : 16u))
		status = EINVAL;
	else
		status = 0;
	if (r->status != status)
		abort();
	if (status) {
		if (out != sizeof(*r) || r->count || r->nh_total)
			abort();
		if (status != EPROTONOSUPPORT && (r->id != q->id || r->family != q->family))
			abort();
		return 0;
	}
	if (r->id != q->id || r->family != q->family || r->count != q->count ||
	    r->flags != LOOKUP_F_READY)
		abort();
	if (out != sizeof(*r) + r->count * sizeof(*res) + r->nh_total * sizeof(struct lookup_nh))
		abort();
	nh = (const struct lookup_nh *)(res + r->count);
	alen = q->family == AF_INET ? 4 : 16;
	for (unsigned i = 0; i < r->count; i++) {
		uint8_t a[16] = { 0 };

		memcpy(a, addr + i * alen, alen);
		check_result(q, i, a, &res[i], nh, r->nh_total, &nh_next);
	}
	if (nh_next != r->nh_total)
		abort();
	return 0;
}
