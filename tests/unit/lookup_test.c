/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: tests of the batch lookup service (daemon/lookup, lookup_proto.h)
 *
 * A real FIB (fib_add of a few routes, a multipath one included), the
 * service on a temporary SOCK_SEQPACKET socket with two threads, and the
 * header-only client: answers equal fib_lookup_rcu for random addresses,
 * next hops of a multipath route, malformed requests answered with a
 * status (bad magic, count 0 or 257, length not matching count, bad
 * family) with the connection kept, the ready flag, several clients;
 * with a flow cache (lookup_set_cache): the same answers, hits counted, a
 * route change seen through cached entries, caches swapped and freed
 * (after a grace period) under a querying client.
 *
 * Version 2 (flows in, record ids out): every answer equals
 * fib_resolve_rcu of the same flow (IPv4 and IPv6), a record comes once per epoch, v1 and
 * v2 mixed on one connection, malformed requests (counts, truncation,
 * versions, family, each bad flow field) answered with a status on a
 * connection that keeps serving, a route change starts a new epoch, more
 * distinct decisions than LOOKUP2_IDS_MAX grow the table then start a
 * new epoch, and under concurrent route changes a client never gets an
 * id it has no record for (lookup2_query checks each one).
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fib/fib.h"
#include "fib/policy.h"
#include "fib/rcu.h"
#include "cache/flow.h"
#include "daemon/lookup.h"
#include "daemon/lookup_proto.h"
#include "tests/unit/ck_run.h"

static struct fib *fib;
static struct lookup *svc;
static char path[108];
static uint64_t buf[LOOKUP_RESP_MAX / 8 + 1];

static void
add4(const char *pfx, const char *gw, unsigned ifindex, unsigned nnh)
{
	struct fib_route r;
	struct fib_nh nh[4];
	uint8_t fam;

	memset(&r, 0, sizeof(r));
	memset(nh, 0, sizeof(nh));
	ck_assert_int_eq(fib_prefix_parse(pfx, &r.dst, &r.plen, &fam), 0);
	r.family = fam;
	r.type = FIB_UNICAST;
	r.table = 254;
	for (unsigned i = 0; i < nnh; i++) {
		nh[i].gw_family = AF_INET;
		inet_pton(AF_INET, gw, nh[i].gw.b);
		nh[i].gw.b[3] += (uint8_t)i;
		nh[i].ifindex = ifindex;
		nh[i].weight = (uint16_t)(i + 1);
	}
	r.nh = nh;
	r.nh_count = (uint8_t)nnh;
	ck_assert_int_eq(fib_add(fib, &r, 0), 0);
}

static void
setup(void)
{
	fib_thread_online();
	fib = fib_new(NULL);
	ck_assert_ptr_nonnull(fib);
	add4("0.0.0.0/1", "10.0.0.1", 2, 1);
	add4("10.0.0.0/8", "10.0.0.2", 3, 1);
	add4("10.1.0.0/16", "10.0.0.3", 4, 1);
	add4("10.1.2.0/24", "10.0.0.10", 5, 3);
	add4("192.0.2.0/24", "10.0.0.4", 6, 1);
	snprintf(path, sizeof(path), "/tmp/lookup_test.%d.sock", (int)getpid());
	svc = lookup_new(fib, path, 0600, "", 2, 254);
	ck_assert_msg(svc != NULL, "lookup_new: %s", strerror(errno));
}

static void
teardown(void)
{
	lookup_free(svc);
	fib_free(fib);
	fib_thread_offline();
}

START_TEST(test_answers)
{
	int fd = lookup_client_connect(path);
	const struct lookup_resp *resp;
	const struct lookup_result *res;
	const struct lookup_nh *nh;
	uint32_t addrs[LOOKUP_BATCH_MAX];
	uint64_t x = 12345;

	ck_assert_int_ge(fd, 0);
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < LOOKUP_BATCH_MAX; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* half of them near the more specific routes */
			addrs[i] = htonl(i & 1 ? (uint32_t)x : (0x0a010200u | ((uint32_t)x & 0x3ffff)));
		}
		ck_assert_int_eq(lookup_client_query(fd, AF_INET, 0, addrs, LOOKUP_BATCH_MAX, buf,
						     &resp, &res, &nh), 0);
		ck_assert_uint_eq(resp->count, LOOKUP_BATCH_MAX);
		for (int i = 0; i < LOOKUP_BATCH_MAX; i++) {
			struct fib_result fr;
			struct fib_match m;
			int found;

			fib_read_lock();
			fr = fib_lookup_rcu(fib, AF_INET, &addrs[i], 254, 0);
			found = fib_result_get(&fr, &m) == 0;
			if (!found) {
				ck_assert_uint_eq(res[i].type, 0);
			} else {
				ck_assert_uint_eq(res[i].type, m.type);
				ck_assert_uint_eq(res[i].plen, m.plen);
				ck_assert_int_eq(memcmp(res[i].prefix, m.prefix.b, 4), 0);
				ck_assert_uint_eq(res[i].nh_count, m.info->nh_count);
				for (unsigned k = 0; k < m.info->nh_count; k++) {
					const struct lookup_nh *n = &nh[res[i].nh_first + k];

					ck_assert_uint_eq(n->ifindex, m.info->nh[k].ifindex);
					ck_assert_uint_eq(n->weight, m.info->nh[k].weight);
					ck_assert_int_eq(memcmp(n->gw, m.info->nh[k].gw.b, 4), 0);
				}
			}
			fib_read_unlock();
		}
	}
	close(fd);
}
END_TEST

START_TEST(test_multipath)
{
	int fd = lookup_client_connect(path);
	const struct lookup_resp *resp;
	const struct lookup_result *res;
	const struct lookup_nh *nh;
	uint32_t a[2];

	inet_pton(AF_INET, "10.1.2.3", &a[0]);
	inet_pton(AF_INET, "200.1.1.1", &a[1]);
	ck_assert_int_eq(lookup_client_query(fd, AF_INET, 0, a, 2, buf, &resp, &res, &nh), 0);
	ck_assert_uint_eq(res[0].plen, 24);
	ck_assert_uint_eq(res[0].nh_count, 3);
	ck_assert_uint_eq(resp->nh_total, 3);
	ck_assert_uint_eq(nh[res[0].nh_first + 2].weight, 3);
	ck_assert_uint_eq(nh[res[0].nh_first + 2].gw[3], 12);
	ck_assert_uint_eq(res[1].type, 0);
	ck_assert_uint_eq(resp->flags & LOOKUP_F_READY, 0);
	lookup_set_ready(svc, 1);
	ck_assert_int_eq(lookup_client_query(fd, AF_INET, 0, a, 1, buf, &resp, &res, &nh), 0);
	ck_assert_uint_eq(resp->flags & LOOKUP_F_READY, LOOKUP_F_READY);
	close(fd);
}
END_TEST

/* Send a raw request, return the answer's status (or -1). */
static int
raw(int fd, const void *req, size_t len)
{
	struct lookup_resp r;

	ck_assert_int_eq(send(fd, req, len, 0), (ssize_t)len);
	ck_assert_int_ge(recv(fd, &r, sizeof(r), 0), (ssize_t)sizeof(r));
	ck_assert_uint_eq(r.magic, LOOKUP_MAGIC);
	return r.status;
}

START_TEST(test_malformed)
{
	int fd = lookup_client_connect(path);
	struct {
		struct lookup_req h;
		uint32_t a[LOOKUP_BATCH_MAX + 1];
	} q;
	const struct lookup_resp *resp;
	const struct lookup_result *res;
	const struct lookup_nh *nh;

	memset(&q, 0, sizeof(q));
	q.h.magic = LOOKUP_MAGIC;
	q.h.version = LOOKUP_VERSION;
	q.h.family = AF_INET;
	q.h.count = 1;
	ck_assert_int_eq(raw(fd, &q, sizeof(q.h) + 4), 0);
	q.h.magic = 0x12345678;
	ck_assert_int_eq(raw(fd, &q, sizeof(q.h) + 4), EPROTONOSUPPORT);
	q.h.magic = LOOKUP_MAGIC;
	q.h.version = 3;
	ck_assert_int_eq(raw(fd, &q, sizeof(q.h) + 4), EPROTONOSUPPORT);
	q.h.version = LOOKUP_VERSION;
	q.h.count = 0;
	ck_assert_int_eq(raw(fd, &q, sizeof(q.h)), EINVAL);
	q.h.count = LOOKUP_BATCH_MAX + 1;
	ck_assert_int_eq(raw(fd, &q, sizeof(q)), EINVAL);
	q.h.count = 2;
	ck_assert_int_eq(raw(fd, &q, sizeof(q.h) + 4), EINVAL);
	q.h.count = 1;
	q.h.family = 99;
	ck_assert_int_eq(raw(fd, &q, sizeof(q.h) + 4), EAFNOSUPPORT);
	ck_assert_int_eq(raw(fd, &q, 3), EPROTONOSUPPORT);
	/* The connection still serves. */
	ck_assert_int_eq(lookup_client_query(fd, AF_INET, 0, q.a, 1, buf, &resp, &res, &nh), 0);
	ck_assert_int_eq(lookup_client_query(fd, AF_INET, 0, q.a, 0, buf, &resp, &res, &nh),
			 -EINVAL);
	close(fd);
}
END_TEST

START_TEST(test_many_clients)
{
	enum { N = 40 };
	int fd[N];
	const struct lookup_resp *resp;
	const struct lookup_result *res;
	const struct lookup_nh *nh;
	struct lookup_stats st;
	uint32_t a;

	inet_pton(AF_INET, "192.0.2.9", &a);
	for (int i = 0; i < N; i++) {
		fd[i] = lookup_client_connect(path);
		ck_assert_int_ge(fd[i], 0);
	}
	for (int i = N - 1; i >= 0; i--) {
		ck_assert_int_eq(lookup_client_query(fd[i], AF_INET, 0, &a, 1, buf, &resp, &res, &nh),
				 0);
		ck_assert_uint_eq(res[0].plen, 24);
		close(fd[i]);
	}
	lookup_stats(svc, &st);
	ck_assert_uint_eq(st.requests, N);
	ck_assert_uint_eq(st.clients, N);
	/* A second service on the live socket is refused. */
	ck_assert_ptr_null(lookup_new(fib, path, 0600, "", 1, 254));
	ck_assert_int_eq(errno, EADDRINUSE);
}
END_TEST

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1 once fibd closed fd (EOF or reset), 0 while it is connected. */
static int
closed_by_peer(int fd)
{
	char b[64];
	ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/*
 * lookup_set_idle_timeout: a silent client goes after about the timeout
 * (bounds generous: the threads check once a second), one sending a
 * request every 200 ms stays; 0 turns it off.
 */
START_TEST(test_idle)
{
	const struct lookup_resp *resp;
	const struct lookup_result *res;
	const struct lookup_nh *nh;
	struct lookup_stats st;
	int silent, active;
	double t0, gone = -1;
	uint32_t a;

	inet_pton(AF_INET, "192.0.2.9", &a);
	lookup_set_idle_timeout(svc, 1000);
	silent = lookup_client_connect(path);
	active = lookup_client_connect(path);
	ck_assert_int_ge(silent, 0);
	ck_assert_int_ge(active, 0);
	t0 = mono();
	while (mono() - t0 < 5 && gone < 0) {
		ck_assert_int_eq(lookup_client_query(active, AF_INET, 0, &a, 1, buf, &resp, &res,
						     &nh), 0);
		if (closed_by_peer(silent))
			gone = mono() - t0;
		usleep(200000);
	}
	ck_assert_msg(gone >= 0.5, "the silent client: dropped after %.2f s (-1: never)", gone);
	ck_assert_int_eq(closed_by_peer(active), 0);
	lookup_stats(svc, &st);
	ck_assert_uint_eq(st.idle_closed, 1);
	close(silent);

	lookup_set_idle_timeout(svc, 0);
	silent = lookup_client_connect(path);
	ck_assert_int_ge(silent, 0);
	usleep(1500000);
	ck_assert_int_eq(closed_by_peer(silent), 0);
	ck_assert_int_eq(lookup_client_query(silent, AF_INET, 0, &a, 1, buf, &resp, &res, &nh), 0);
	lookup_stats(svc, &st);
	ck_assert_uint_eq(st.idle_closed, 1);
	close(silent);
	close(active);
}
END_TEST

/* A client thread queries while this thread (the writer) changes routes. */
static void *
query_loop(void *arg)
{
	static uint64_t b[LOOKUP_RESP_MAX / 8 + 1];
	const struct lookup_resp *resp;
	const struct lookup_result *res;
	const struct lookup_nh *nh;
	uint32_t addrs[LOOKUP_BATCH_MAX];
	int fd = lookup_client_connect(path);
	long bad = 0;

	if (fd < 0)
		return (void *)1L;
	for (int i = 0; i < LOOKUP_BATCH_MAX; i++)
		addrs[i] = htonl(0x0b000000u + (uint32_t)i * 4099u);
	for (int k = 0; k < 500; k++)
		if (lookup_client_query(fd, AF_INET, 0, addrs, LOOKUP_BATCH_MAX, b, &resp, &res,
					&nh) < 0)
			bad++;
	close(fd);
	return (void *)bad;
}

START_TEST(test_concurrent_updates)
{
	pthread_t t;
	void *bad;
	char pfx[32];

	ck_assert_int_eq(pthread_create(&t, NULL, query_loop, NULL), 0);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 300; i++) {
			struct fib_route r;
			uint8_t fam;

			snprintf(pfx, sizeof(pfx), "11.%d.%d.0/24", i / 256, i % 256);
			if (round % 2 == 0) {
				add4(pfx, "10.0.0.7", 7, 1 + i % 2);
			} else {
				memset(&r, 0, sizeof(r));
				ck_assert_int_eq(fib_prefix_parse(pfx, &r.dst, &r.plen, &fam), 0);
				r.family = fam;
				r.table = 254;
				ck_assert_int_eq(fib_del(fib, &r), 0);
			}
		}
	pthread_join(t, &bad);
	ck_assert_ptr_null(bad);
}
END_TEST

static struct flow_cache *
cache_new(uint32_t buckets)
{
	struct flow_config c;
	struct flow_cache *fc;

	flow_config_default(&c);
	c.secret[0] = 1;
	c.secret[1] = 2;
	c.buckets = buckets;
	c.admit = FLOW_ADMIT_ALL;
	c.bypass_below = 0;
	fc = flow_cache_new(&c);
	ck_assert_ptr_nonnull(fc);
	ck_assert_int_eq(flow_cache_start(fc, fib), 0);
	return fc;
}

/* Every answer of one query of addrs (network order) equals the FIB's. */
static void
check_query(int fd, const uint32_t *addrs, unsigned n)
{
	const struct lookup_resp *resp;
	const struct lookup_result *res;
	const struct lookup_nh *nh = NULL;

	ck_assert_int_eq(lookup_client_query(fd, AF_INET, 0, addrs, n, buf, &resp, &res, &nh), 0);
	ck_assert_uint_eq(resp->count, n);
	for (unsigned i = 0; i < n; i++) {
		struct fib_result fr;
		struct fib_match m;

		fib_read_lock();
		fr = fib_lookup_rcu(fib, AF_INET, &addrs[i], 254, 0);
		if (fib_result_get(&fr, &m) != 0) {
			ck_assert_uint_eq(res[i].type, 0);
		} else {
			ck_assert_uint_eq(res[i].plen, m.plen);
			ck_assert_uint_eq(res[i].nh_count, m.info->nh_count);
			ck_assert_int_eq(memcmp(nh[res[i].nh_first].gw, m.info->nh[0].gw.b, 4), 0);
		}
		fib_read_unlock();
	}
}

static void
cache_drop(struct flow_cache *fc)
{
	lookup_set_cache(svc, NULL);
	urcu_memb_synchronize_rcu();
	FIB_TSAN_GRACE_END();
	flow_cache_stop(fc);
	flow_cache_free(fc);
}

START_TEST(test_cache)
{
	struct flow_cache *fc = cache_new(1024);
	struct flow_stats st;
	uint32_t addrs[LOOKUP_BATCH_MAX];
	int fd = lookup_client_connect(path);

	ck_assert_int_ge(fd, 0);
	lookup_set_cache(svc, fc);
	for (int i = 0; i < LOOKUP_BATCH_MAX; i++)
		addrs[i] = htonl(0x0a010200u + (uint32_t)(i % 64) * 4); /* 64 flows */
	for (int round = 0; round < 3; round++)
		check_query(fd, addrs, LOOKUP_BATCH_MAX);
	/* version 1 is one table's longest match: straight to the FIB,
	 * the cache steps aside (doc/decisions.md, section 4) unless the
	 * client asks for it */
	flow_cache_stats(fc, &st);
	ck_assert_uint_eq(st.lookups, 0);
	for (int round = 0; round < 3; round++) {
		const struct lookup_resp *resp;
		const struct lookup_result *res;
		const struct lookup_nh *nh;

		ck_assert_int_eq(lookup_client_send(fd, AF_INET, 0, LOOKUP_Q_CACHE, addrs,
						    LOOKUP_BATCH_MAX, 1), 0);
		ck_assert_int_eq(lookup_client_recv(fd, LOOKUP_BATCH_MAX, buf, &resp, &res, &nh),
				 0);
		ck_assert_uint_eq(res[0].plen, 24);
	}
	flow_cache_stats(fc, &st);
	ck_assert_uint_eq(st.lookups, 3 * LOOKUP_BATCH_MAX);
	ck_assert_uint_ge(st.hits, 3 * LOOKUP_BATCH_MAX - 64);
	/* a more specific route: cached answers must not survive it */
	add4("10.1.2.0/25", "10.0.0.20", 8, 1);
	check_query(fd, addrs, LOOKUP_BATCH_MAX);
	close(fd);
	cache_drop(fc);
}
END_TEST

static int swap_stop;

static void *
swap_query_loop(void *arg)
{
	uint32_t addrs[LOOKUP_BATCH_MAX];
	const struct lookup_resp *resp = NULL;
	const struct lookup_result *res = NULL;
	const struct lookup_nh *nh;
	uint64_t *b = malloc(sizeof(buf));
	static struct lookup_flow fl[LOOKUP_BATCH_MAX];
	struct lookup2_map m;
	uint32_t ids[LOOKUP_BATCH_MAX];
	uint8_t errs[LOOKUP_BATCH_MAX];
	long bad = 0;
	int fd = lookup_client_connect(path);

	if (fd < 0 || !b)
		return (void *)1;
	for (int i = 0; i < LOOKUP_BATCH_MAX; i++)
		addrs[i] = htonl(0x0a010200u + (uint32_t)(i % 100));
	/* both versions read the cache (version 1 when asked to) */
	for (int i = 0; i < LOOKUP_BATCH_MAX; i++) {
		memset(&fl[i], 0, sizeof(fl[i]));
		memcpy(fl[i].dst, &addrs[i], 4);
		fl[i].ipproto = 6;
		fl[i].sport = (uint16_t)i;
	}
	if (lookup2_map_init(&m) < 0)
		return (void *)1;
	while (!__atomic_load_n(&swap_stop, __ATOMIC_RELAXED)) {
		if (lookup_client_send(fd, AF_INET, 0, LOOKUP_Q_CACHE, addrs, LOOKUP_BATCH_MAX,
				       0) < 0 ||
		    lookup_client_recv(fd, LOOKUP_BATCH_MAX, b, &resp, &res, &nh) < 0 ||
		    resp->count != LOOKUP_BATCH_MAX)
			bad++;
		else
			for (int i = 0; i < LOOKUP_BATCH_MAX; i++)
				if (res[i].plen != 24)
					bad++;
		if (lookup2_query(fd, AF_INET, fl, LOOKUP_BATCH_MAX, ids, errs, &m) < 0)
			bad++;
		else
			for (int i = 0; i < LOOKUP_BATCH_MAX; i++)
				if (lookup2_record(&m, ids[i])->rec.plen != 24)
					bad++;
	}
	lookup2_map_free(&m);
	close(fd);
	free(b);
	return (void *)bad;
}

START_TEST(test_cache_swap)
{
	struct flow_cache *fc = cache_new(256), *old;
	pthread_t t;
	void *bad;

	lookup_set_cache(svc, fc);
	__atomic_store_n(&swap_stop, 0, __ATOMIC_RELAXED);
	ck_assert_int_eq(pthread_create(&t, NULL, swap_query_loop, NULL), 0);
	for (int i = 0; i < 20; i++) {
		struct timespec ts = { 0, 2000000 };

		nanosleep(&ts, NULL);
		old = fc;
		fc = i % 5 == 4 ? NULL : cache_new(256u << (i % 4));
		lookup_set_cache(svc, fc); /* as fibd_cache_swap */
		if (old) {
			urcu_memb_synchronize_rcu();
			FIB_TSAN_GRACE_END();
			flow_cache_stop(old);
			flow_cache_free(old);
		}
	}
	__atomic_store_n(&swap_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, &bad);
	ck_assert_ptr_null(bad);
	if (fc)
		cache_drop(fc);
}
END_TEST

/* Version 2. */

/* A flow to dst (host order) with ports; the rest zero. */
static void
flow4(struct lookup_flow *f, uint32_t dst, uint16_t sport, uint16_t dport)
{
	uint32_t a = htonl(dst);

	memset(f, 0, sizeof(*f));
	memcpy(f->dst, &a, 4);
	f->sport = sport;
	f->dport = dport;
	f->ipproto = 6;
}

/* The record of flow f (of family) equals fib_resolve_rcu's decision now. */
static void
check_decision_fam(int family, const struct lookup_flow *f, const struct lookup2_entry *e,
		   uint8_t err)
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
	ck_assert_uint_eq(rec->error, d.error);
	ck_assert_uint_eq(err, d.error);
	ck_assert_uint_eq(rec->type, d.type);
	ck_assert_uint_eq(rec->family, family);
	ck_assert_uint_eq(rec->flags & ~LOOKUP_D_CUT, d.flags & (FIB_D_RULE | FIB_D_SRC | FIB_D_ROUTE));
	if (d.flags & FIB_D_RULE)
		ck_assert_uint_eq(rec->rule, d.rule);
	if (d.flags & FIB_D_SRC)
		ck_assert_int_eq(memcmp(rec->src, d.src.b, 16), 0);
	if ((d.flags & FIB_D_ROUTE) && d.info) {
		const struct fib_nh *nh = &d.info->nh[d.path];

		ck_assert_uint_eq(rec->plen, d.plen);
		ck_assert_uint_eq(rec->table, d.table);
		ck_assert_int_eq(memcmp(rec->prefix, d.prefix.b, 16), 0);
		ck_assert_uint_eq(rec->npaths, d.info->nh_count);
		if (d.info->nh_count) {
			ck_assert_uint_eq(rec->path, d.path);
			ck_assert_uint_eq(rec->ifindex, nh->ifindex);
			ck_assert_uint_eq(rec->gw_family, nh->gw_family);
			ck_assert_int_eq(memcmp(rec->gateway, nh->gw.b, 16), 0);
		}
		for (unsigned k = 0; k < lookup_rec_paths(rec); k++) {
			ck_assert_uint_eq(e->nh[k].ifindex, d.info->nh[k].ifindex);
			ck_assert_uint_eq(e->nh[k].weight, d.info->nh[k].weight);
			ck_assert_int_eq(memcmp(e->nh[k].gw, d.info->nh[k].gw.b, 16), 0);
		}
	}
	fib_read_unlock();
}

static void
check_decision(const struct lookup_flow *f, const struct lookup2_entry *e, uint8_t err)
{
	check_decision_fam(AF_INET, f, e, err);
}

/* Query flows, check every answer; returns the records received. */
static uint32_t
check_query2(int fd, struct lookup2_map *m, const struct lookup_flow *fl, unsigned n)
{
	uint32_t ids[LOOKUP_BATCH_MAX], before = m->records;
	uint8_t errs[LOOKUP_BATCH_MAX];

	ck_assert_int_eq(lookup2_query(fd, AF_INET, fl, n, ids, errs, m), 0);
	for (unsigned i = 0; i < n; i++) {
		const struct lookup2_entry *e = lookup2_record(m, ids[i]);

		ck_assert_ptr_nonnull(e);
		ck_assert_uint_le(ids[i], LOOKUP2_IDS_MAX);
		check_decision(&fl[i], e, errs[i]);
	}
	return m->records - before;
}

START_TEST(test_v2_answers)
{
	struct lookup_flow fl[LOOKUP_BATCH_MAX];
	struct lookup2_map m;
	uint64_t x = 777;
	uint32_t first, again;
	int fd = lookup_client_connect(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lookup2_map_init(&m), 0);
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < LOOKUP_BATCH_MAX; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			flow4(&fl[i], i & 1 ? (uint32_t)x : 0x0a010200u | ((uint32_t)x & 0x3ffff),
			      (uint16_t)(x >> 32), (uint16_t)(x >> 48));
			if (i % 7 == 0) {
				/* a source, a mark, a uid: carried through */
				fl[i].flags = LOOKUP_FLOW_SRC | LOOKUP_FLOW_UID;
				fl[i].src[0] = 10;
				fl[i].src[3] = (uint8_t)(i % 3);
				fl[i].uid = 1000;
				fl[i].mark = 7;
			}
		}
		check_query2(fd, &m, fl, LOOKUP_BATCH_MAX);
	}
	/* The same batch twice on a quiet FIB: the second carries no record. */
	first = check_query2(fd, &m, fl, LOOKUP_BATCH_MAX);
	again = check_query2(fd, &m, fl, LOOKUP_BATCH_MAX);
	ck_assert_uint_eq(again, 0);
	(void)first;
	ck_assert_uint_eq(m.resets, 0);
	/* A record per distinct decision: 20 batches over 5 routes (and the
	 * paths, sources, misses) come nowhere near one per flow. */
	ck_assert_uint_lt(m.records, 20 * LOOKUP_BATCH_MAX / 4);
	lookup2_map_free(&m);
	close(fd);
}
END_TEST

/* Add an IPv6 route to pfx in main with npaths (1..3) paths via fe80::1.. */
static void
add_route6(const char *pfx, unsigned npaths)
{
	struct fib_route r;
	struct fib_nh nh[3];
	uint8_t fam;

	memset(&r, 0, sizeof(r));
	memset(nh, 0, sizeof(nh));
	ck_assert_int_eq(fib_prefix_parse(pfx, &r.dst, &r.plen, &fam), 0);
	r.family = fam;
	r.type = FIB_UNICAST;
	r.table = 254;
	r.priority = 1024;
	for (unsigned k = 0; k < npaths; k++) {
		nh[k].gw_family = AF_INET6;
		inet_pton(AF_INET6, "fe80::1", nh[k].gw.b);
		nh[k].gw.b[15] += (uint8_t)k;
		nh[k].ifindex = 2 + k;
		nh[k].weight = 1;
	}
	r.nh = nh;
	r.nh_count = (uint8_t)npaths;
	ck_assert_int_eq(fib_add(fib, &r, 0), 0);
}

/* IPv6 flows (flow labels, a 3-path route, a miss) against fib_resolve_rcu. */
START_TEST(test_v2_ipv6)
{
	static const char *pfx[] = { "2001:db8::/32", "2001:db8:1::/48", "2001:db8:1:2::/64" };
	struct lookup_flow fl[LOOKUP_BATCH_MAX];
	uint32_t ids[LOOKUP_BATCH_MAX];
	uint8_t errs[LOOKUP_BATCH_MAX];
	struct lookup2_map m;
	uint64_t x = 99;
	int fd;

	for (unsigned p = 0; p < 3; p++)
		add_route6(pfx[p], p + 1);
	fd = lookup_client_connect(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lookup2_map_init(&m), 0);
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < LOOKUP_BATCH_MAX; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			memset(&fl[i], 0, sizeof(fl[i]));
			inet_pton(AF_INET6, i % 4 == 3 ? "3fff::1" : "2001:db8:1:2::", fl[i].dst);
			fl[i].dst[5] = (uint8_t)(i % 4 == 0 ? 9 : 1); /* 2001:db8::/32 only */
			fl[i].dst[15] = (uint8_t)x;
			fl[i].ipproto = 17;
			fl[i].sport = (uint16_t)(x >> 8);
			fl[i].dport = 4789;
			fl[i].flowlabel = (uint32_t)(x >> 24) & 0xfffff;
		}
		ck_assert_int_eq(lookup2_query(fd, AF_INET6, fl, LOOKUP_BATCH_MAX, ids, errs, &m), 0);
		for (int i = 0; i < LOOKUP_BATCH_MAX; i++)
			check_decision_fam(AF_INET6, &fl[i], lookup2_record(&m, ids[i]), errs[i]);
	}
	lookup2_map_free(&m);
	close(fd);
}
END_TEST

/* v1 and v2 requests on one connection, each answered in its version. */
START_TEST(test_v2_mixed)
{
	const struct lookup_resp *resp;
	const struct lookup_result *res;
	const struct lookup_nh *nh;
	struct lookup_flow fl[2];
	struct lookup2_map m;
	struct lookup_stats st;
	uint32_t a[2], ids[2];
	uint8_t errs[2];
	int fd = lookup_client_connect(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lookup2_map_init(&m), 0);
	inet_pton(AF_INET, "10.1.2.3", &a[0]);
	inet_pton(AF_INET, "200.1.1.1", &a[1]);
	flow4(&fl[0], 0x0a010203u, 1, 2);
	flow4(&fl[1], 0xc8010101u, 1, 2);
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(lookup_client_query(fd, AF_INET, 0, a, 2, buf, &resp, &res, &nh), 0);
		ck_assert_uint_eq(resp->version, LOOKUP_VERSION);
		ck_assert_uint_eq(res[0].plen, 24);
		ck_assert_uint_eq(res[1].type, 0);
		ck_assert_int_eq(lookup2_query(fd, AF_INET, fl, 2, ids, errs, &m), 0);
		ck_assert_uint_eq(lookup2_record(&m, ids[0])->rec.plen, 24);
		ck_assert_uint_eq(lookup2_record(&m, ids[0])->rec.npaths, 3);
		ck_assert_uint_eq(lookup_rec_paths(&lookup2_record(&m, ids[0])->rec), 3);
		check_decision(&fl[1], lookup2_record(&m, ids[1]), errs[1]);
	}
	ck_assert_uint_eq(m.records, 2);
	lookup_stats(svc, &st);
	ck_assert_uint_eq(st.requests, 6);
	ck_assert_uint_eq(st.addresses, 6);
	ck_assert_uint_eq(st.flows, 6);
	ck_assert_uint_eq(st.records, 2);
	ck_assert_uint_eq(st.epochs, 1);
	ck_assert_uint_eq(st.decisions[FIB_UNICAST] + st.decisions[0], 6);
	lookup2_map_free(&m);
	close(fd);
}
END_TEST

/* Send a raw v2 request of count flows (len bytes of it), return the
 * answer's status. */
static int
raw2(int fd, struct lookup_req2 *h, size_t len)
{
	struct lookup_resp2 r;

	ck_assert_int_eq(send(fd, h, len, 0), (ssize_t)len);
	ck_assert_int_ge(recv(fd, &r, sizeof(r), 0), (ssize_t)sizeof(r));
	ck_assert_uint_eq(r.magic, LOOKUP_MAGIC);
	ck_assert_uint_eq(r.version, LOOKUP_VERSION2);
	if (r.status)
		ck_assert_uint_eq(r.count, 0);
	return r.status;
}

/*
 * LOOKUP2_Q_DST: bare destinations, each answered as the flow of the
 * same address with every other field zero (fib_resolve_rcu), in both
 * families and with and without LOOKUP2_Q_PLEN; a request whose size is
 * not count addresses is EINVAL and the connection lives on.
 */
START_TEST(test_v2_dst)
{
	struct {
		struct lookup_req2 h;
		uint8_t a[LOOKUP_BATCH_MAX * sizeof(struct lookup_flow)];
	} q;
	static uint8_t addrs[LOOKUP_BATCH_MAX][16];
	struct lookup_flow fl;
	uint32_t ids[LOOKUP_BATCH_MAX];
	uint8_t errs[LOOKUP_BATCH_MAX];
	struct lookup2_map m;
	uint64_t x = 4242;
	int fd;

	add_route6("2001:db8:7::/48", 2);
	fd = lookup_client_connect(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lookup2_map_init(&m), 0);
	for (int round = 0; round < 8; round++) {
		int family = round & 1 ? AF_INET6 : AF_INET;
		unsigned flags = round & 2 ? LOOKUP2_Q_PLEN : 0;

		for (int i = 0; i < LOOKUP_BATCH_MAX; i++) {
			uint32_t a;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			memset(addrs[i], 0, 16);
			if (family == AF_INET) {
				a = htonl(i & 1 ? (uint32_t)x : 0x0a010200u | ((uint32_t)x & 0x3ffff));
				memcpy(addrs[i], &a, 4);
			} else {
				inet_pton(AF_INET6, i % 4 == 3 ? "3fff::1" : "2001:db8:7::", addrs[i]);
				memcpy(addrs[i] + 8, &x, 8);
			}
		}
		/* packed: 4 or 16 bytes each */
		if (family == AF_INET)
			for (int i = 0; i < LOOKUP_BATCH_MAX; i++)
				memcpy(&q.a[4 * i], addrs[i], 4);
		else
			memcpy(q.a, addrs, sizeof(addrs));
		ck_assert_int_eq(lookup2_send_dst(fd, family, flags, q.a, LOOKUP_BATCH_MAX, 7), 0);
		/* spinning or sleeping, the wait ends with an answer to read */
		ck_assert_int_eq(lookup_client_wait(fd, round & 4 ? 200 : 0), 0);
		ck_assert_int_eq(lookup2_recv(fd, LOOKUP_BATCH_MAX, ids, errs, &m), 0);
		for (int i = 0; i < LOOKUP_BATCH_MAX; i++) {
			const struct lookup2_entry *e = lookup2_record(&m, ids[i]);
			struct fib_flow f;
			struct fib_decision d;

			ck_assert_ptr_nonnull(e);
			memset(&fl, 0, sizeof(fl));
			memcpy(fl.dst, addrs[i], 16);
			if (!flags) {
				check_decision_fam(family, &fl, e, errs[i]);
				continue;
			}
			/* without the prefix: the type, the error and the length */
			memset(&f, 0, sizeof(f));
			f.family = (uint8_t)family;
			memcpy(f.dst.b, addrs[i], 16);
			fib_read_lock();
			fib_resolve_rcu(fib, &f, &d);
			fib_read_unlock();
			ck_assert_uint_eq(e->rec.type, d.type);
			ck_assert_uint_eq(errs[i], d.error);
			ck_assert_uint_eq(e->rec.plen, 0);
			ck_assert_uint_eq(m.plen[i], (d.flags & FIB_D_ROUTE) ? d.plen : 0);
		}
	}
	/* sizes: count addresses of the family, nothing more or less */
	memset(&q, 0, sizeof(q));
	q.h.magic = LOOKUP_MAGIC;
	q.h.version = LOOKUP_VERSION2;
	q.h.family = AF_INET;
	q.h.flags = LOOKUP2_Q_DST;
	q.h.count = 2;
	q.a[0] = 10;
	ck_assert_int_eq(raw2(fd, &q.h, sizeof(q.h) + 4), EINVAL);
	ck_assert_int_eq(raw2(fd, &q.h, sizeof(q.h) + 9), EINVAL);
	ck_assert_int_eq(raw2(fd, &q.h, sizeof(q.h) + 2 * sizeof(struct lookup_flow)), EINVAL);
	q.h.family = AF_INET6;
	ck_assert_int_eq(raw2(fd, &q.h, sizeof(q.h) + 8), EINVAL);
	ck_assert_int_eq(raw2(fd, &q.h, sizeof(q.h) + 31), EINVAL);
	q.h.flags = LOOKUP2_Q_DST | 0x40;
	ck_assert_int_eq(raw2(fd, &q.h, sizeof(q.h) + 32), EINVAL);
	ck_assert_int_eq(lookup2_send_dst(fd, AF_INET, 0, q.a, 0, 0), -EINVAL);
	ck_assert_int_eq(lookup2_send_dst(fd, 99, 0, q.a, 1, 0), -EINVAL);
	/* and the connection still answers (the map saw every answer) */
	ck_assert_int_eq(lookup2_send_dst(fd, AF_INET, 0, addrs[0], 1, 8), 0);
	ck_assert_int_eq(lookup2_recv(fd, 1, ids, errs, &m), 0);
	lookup2_map_free(&m);
	close(fd);
}
END_TEST

START_TEST(test_v2_malformed)
{
	struct {
		struct lookup_req2 h;
		struct lookup_flow f[LOOKUP_BATCH_MAX + 1];
	} q;
	struct lookup_flow good;
	struct lookup2_map m;
	struct lookup_stats st;
	uint32_t ids[1] = { 0 };
	uint8_t errs[1] = { 0 };
	size_t one = sizeof(q.h) + sizeof(q.f[0]);
	int fd = lookup_client_connect(path), fd2 = lookup_client_connect(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(fd2, 0);
	ck_assert_int_eq(lookup2_map_init(&m), 0);
	memset(&q, 0, sizeof(q));
	q.h.magic = LOOKUP_MAGIC;
	q.h.version = LOOKUP_VERSION2;
	q.h.family = AF_INET;
	q.h.count = 1;
	flow4(&good, 0x0a010203u, 1, 2);
	q.f[0] = good;
	/* Valid raw requests on another connection: the records they carry
	 * would be missing from m, which must see every answer of fd. */
	ck_assert_int_eq(raw2(fd2, &q.h, one), 0);
	/* header: counts, truncation, family, flags, pad, short */
	q.h.count = 0;
	ck_assert_int_eq(raw2(fd, &q.h, sizeof(q.h)), EINVAL);
	q.h.count = LOOKUP_BATCH_MAX + 1;
	ck_assert_int_eq(raw2(fd, &q.h, sizeof(q)), EINVAL);
	q.h.count = 2;
	ck_assert_int_eq(raw2(fd, &q.h, one), EINVAL);            /* truncated batch */
	ck_assert_int_eq(raw2(fd, &q.h, one + 2 * sizeof(good)), EINVAL); /* trailing bytes */
	q.h.count = 1;
	ck_assert_int_eq(raw2(fd, &q.h, one - 1), EINVAL);
	ck_assert_int_eq(raw2(fd, &q.h, 10), EINVAL);
	q.h.family = 99;
	ck_assert_int_eq(raw2(fd, &q.h, one), EAFNOSUPPORT);
	q.h.family = AF_INET;
	q.h.flags = 0x80; /* unknown */
	ck_assert_int_eq(raw2(fd, &q.h, one), EINVAL);
	q.h.flags = LOOKUP2_Q_PLEN | 0x04;
	ck_assert_int_eq(raw2(fd, &q.h, one), EINVAL);
	q.h.flags = 0;
	q.h.pad = 1;
	ck_assert_int_eq(raw2(fd, &q.h, one), EINVAL);
	q.h.pad = 0;
	q.h.version = 3;
	ck_assert_int_eq(raw2(fd, &q.h, one), EPROTONOSUPPORT);
	q.h.version = LOOKUP_VERSION2;
	/* each bad flow field, in the second flow of two */
	q.h.count = 2;
	for (int k = 0; k < 11; k++) {
		struct lookup_flow *f = &q.f[1];

		q.f[0] = good;
		*f = good;
		switch (k) {
		case 0: f->flags = 0x40; break;                       /* unknown flag */
		case 1: f->pad = 1; break;
		case 2: f->iif = 3; break;                            /* iif without its flag */
		case 3: f->flags = LOOKUP_FLOW_IIF; break;            /* the flag without iif */
		case 4: f->oif = 3; break;
		case 5: f->uid = 5; break;
		case 6: f->src[0] = 10; break;                        /* src without its flag */
		case 7: f->flags = LOOKUP_FLOW_DSCP; f->tos = 64; break;
		case 8: f->flowlabel = 1; break;                      /* IPv4 has none */
		case 9: f->dst[4] = 1; break;                         /* beyond an IPv4 address */
		case 10: f->flags = LOOKUP_FLOW_SRC; f->src[15] = 1; break;
		}
		ck_assert_msg(raw2(fd, &q.h, sizeof(q.h) + 2 * sizeof(good)) == EINVAL, "bad flow %d", k);
	}
	/* IPv6: a 20-bit flow label is fine, 21 bits are not */
	q.h.family = AF_INET6;
	memset(&q.f[1], 0, sizeof(q.f[1]));
	q.f[0] = q.f[1];
	q.f[0].dst[0] = 0x20;
	q.f[1].flowlabel = 0xfffff;
	ck_assert_int_eq(raw2(fd2, &q.h, sizeof(q.h) + 2 * sizeof(good)), 0);
	q.f[1].flowlabel = 0x100000;
	ck_assert_int_eq(raw2(fd, &q.h, sizeof(q.h) + 2 * sizeof(good)), EINVAL);
	/* the connection still serves, v2 and v1 */
	ck_assert_int_eq(lookup2_query(fd, AF_INET, &good, 1, ids, errs, &m), 0);
	check_decision(&good, lookup2_record(&m, ids[0]), errs[0]);
	ck_assert_int_eq(lookup2_query(fd, AF_INET, &good, 0, ids, errs, &m), -EINVAL);
	q.f[0] = good;
	q.f[0].pad = 9;
	ck_assert_int_eq(lookup2_query(fd, AF_INET, q.f, 1, ids, errs, &m), -EINVAL);
	ck_assert_int_eq(lookup2_query(fd, AF_INET, &good, 1, ids, errs, &m), 0);
	ids[0] = htonl(0x0a010203u);
	check_query(fd, ids, 1);
	lookup_stats(svc, &st);
	ck_assert_uint_ge(st.errors, 20);
	lookup2_map_free(&m);
	close(fd);
	close(fd2);
}
END_TEST

/*
 * Pipelining: LOOKUP_INFLIGHT_MAX requests of both versions sent before
 * any answer is read are all answered, in order, each with its id.
 */
START_TEST(test_pipeline)
{
	int fd = lookup_client_connect(path);
	const struct lookup_resp *resp;
	const struct lookup_result *res;
	const struct lookup_nh *nh;
	struct lookup_flow fl[2];
	struct lookup2_map m;
	uint32_t a[2], ids[2];
	uint8_t errs[2];

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lookup2_map_init(&m), 0);
	inet_pton(AF_INET, "10.1.2.3", &a[0]);
	inet_pton(AF_INET, "192.0.2.1", &a[1]);
	flow4(&fl[0], 0x0a010203u, 1, 2);
	flow4(&fl[1], 0xc0000201u, 1, 2);
	for (int round = 0; round < 3; round++) {
		for (uint32_t k = 0; k < LOOKUP_INFLIGHT_MAX; k++)
			if (k % 2)
				ck_assert_int_eq(lookup2_send(fd, AF_INET, k % 4 == 1 ? LOOKUP2_Q_PLEN : 0,
							      fl, 2, 100 + k), 0);
			else
				ck_assert_int_eq(lookup_client_send(fd, AF_INET, 0, 0, a, 2, 100 + k), 0);
		for (uint32_t k = 0; k < LOOKUP_INFLIGHT_MAX; k++) {
			if (k % 2) {
				const struct lookup_resp2 *r2 = (const struct lookup_resp2 *)m.buf;

				ck_assert_int_eq(lookup2_recv(fd, 2, ids, errs, &m), 0);
				ck_assert_uint_eq(r2->id, 100 + k);
				ck_assert_uint_eq(lookup2_record(&m, ids[0])->rec.npaths, 3);
				if (k % 4 == 1) {
					ck_assert(r2->flags & LOOKUP_F_PLEN);
					ck_assert_uint_eq(m.plen[0], 24);
					ck_assert_uint_eq(m.plen[1], 24);
					ck_assert_uint_eq(lookup2_record(&m, ids[0])->rec.plen, 0);
				} else {
					ck_assert(!(r2->flags & LOOKUP_F_PLEN));
					ck_assert_uint_eq(lookup2_record(&m, ids[0])->rec.plen, 24);
					check_decision(&fl[1], lookup2_record(&m, ids[1]), errs[1]);
				}
			} else {
				ck_assert_int_eq(lookup_client_recv(fd, 2, buf, &resp, &res, &nh), 0);
				ck_assert_uint_eq(resp->id, 100 + k);
				ck_assert_uint_eq(res[0].plen, 24);
				ck_assert_uint_eq(res[0].nh_count, 3);
				ck_assert_uint_eq(res[1].plen, 24);
			}
		}
	}
	lookup2_map_free(&m);
	close(fd);
}
END_TEST

/*
 * LOOKUP2_Q_PLEN: routes with the same paths share one record (no
 * prefix in it), each result has its prefix length; a version 1 answer
 * gives the results of one attribute set the same next hops, once.
 */
START_TEST(test_shared)
{
	int fd = lookup_client_connect(path);
	const struct lookup_resp *resp;
	const struct lookup_result *res;
	const struct lookup_nh *nh;
	struct lookup_flow fl[4];
	struct lookup2_map m;
	uint32_t a[4], ids[4];
	uint8_t errs[4];
	static const char *dst[4] = { "192.0.2.1", "198.51.100.7", "198.51.100.130", "10.1.2.3" };

	ck_assert_int_ge(fd, 0);
	add4("198.51.100.0/25", "10.0.0.4", 6, 1); /* 192.0.2.0/24's paths */
	add4("198.51.100.128/26", "10.0.0.4", 6, 1);
	ck_assert_int_eq(lookup2_map_init(&m), 0);
	for (int i = 0; i < 4; i++) {
		inet_pton(AF_INET, dst[i], &a[i]);
		flow4(&fl[i], ntohl(a[i]), 7, 8);
	}
	ck_assert_int_eq(lookup2_send(fd, AF_INET, LOOKUP2_Q_PLEN, fl, 4, 1), 0);
	ck_assert_int_eq(lookup2_recv(fd, 4, ids, errs, &m), 0);
	ck_assert_uint_eq(ids[0], ids[1]);
	ck_assert_uint_eq(ids[0], ids[2]);
	ck_assert_uint_ne(ids[0], ids[3]);
	ck_assert_uint_eq(m.records, 2);
	ck_assert_uint_eq(m.plen[0], 24);
	ck_assert_uint_eq(m.plen[1], 25);
	ck_assert_uint_eq(m.plen[2], 26);
	ck_assert_uint_eq(m.plen[3], 24);
	ck_assert_uint_eq(lookup2_record(&m, ids[0])->rec.ifindex, 6);
	for (int i = 0; i < 16; i++)
		ck_assert_uint_eq(lookup2_record(&m, ids[0])->rec.prefix[i], 0);

	ck_assert_int_eq(lookup_client_query(fd, AF_INET, 0, a, 4, buf, &resp, &res, &nh), 0);
	ck_assert_uint_eq(resp->nh_total, 1 + 3);
	ck_assert_uint_eq(res[0].nh_first, res[1].nh_first);
	ck_assert_uint_eq(res[0].nh_first, res[2].nh_first);
	ck_assert_uint_eq(res[0].nh_count, 1);
	ck_assert_uint_eq(res[1].plen, 25);
	ck_assert_uint_eq(res[2].plen, 26);
	ck_assert_uint_eq(nh[res[1].nh_first].ifindex, 6);
	ck_assert_uint_eq(res[3].nh_count, 3);
	for (unsigned k = 0; k < 3; k++)
		ck_assert_uint_eq(nh[res[3].nh_first + k].weight, k + 1);
	lookup2_map_free(&m);
	close(fd);
}
END_TEST

/*
 * A client that sends and never reads fills its socket with answers and
 * is dropped; meanwhile the thread's other client (one thread here: the
 * same thread) is answered at once, every time.
 */
START_TEST(test_slow_client)
{
	char p1[108];
	struct lookup *one;
	struct lookup_stats st;
	uint32_t addrs[LOOKUP_BATCH_MAX], a;
	const struct lookup_resp *resp;
	const struct lookup_result *res;
	const struct lookup_nh *nh;
	int slow, good, sent = 0;
	double worst = 0;

	snprintf(p1, sizeof(p1), "/tmp/lookup_test1.%d.sock", (int)getpid());
	one = lookup_new(fib, p1, 0600, "", 1, 254);
	ck_assert_ptr_nonnull(one);
	slow = lookup_client_connect(p1);
	good = lookup_client_connect(p1);
	ck_assert_int_ge(slow, 0);
	ck_assert_int_ge(good, 0);
	ck_assert_int_eq(fcntl(slow, F_SETFL, O_NONBLOCK), 0);
	for (int i = 0; i < LOOKUP_BATCH_MAX; i++)
		addrs[i] = htonl(0x0a010200u + (uint32_t)i); /* the multipath route */
	inet_pton(AF_INET, "192.0.2.9", &a);
	for (int k = 0; k < 400; k++) {
		struct timespec t0, t1;
		double dt;

		int rc = lookup_client_send(slow, AF_INET, 0, 0, addrs, LOOKUP_BATCH_MAX, (uint32_t)k);

		if (rc == 0)
			sent++;
		else if (rc != -EAGAIN)
			break; /* dropped: EPIPE */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ck_assert_int_eq(lookup_client_query(good, AF_INET, 0, &a, 1, buf, &resp, &res, &nh),
				 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ck_assert_uint_eq(res[0].plen, 24);
		dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
		if (dt > worst)
			worst = dt;
	}
	lookup_stats(one, &st);
	ck_assert_msg(st.dropped >= 1, "the client that never reads was not dropped (%d sent)",
		      sent);
	ck_assert_msg(worst < 1.0, "the other client waited %.3f s", worst);
	close(slow);
	close(good);
	lookup_free(one);
}
END_TEST

START_TEST(test_v2_epoch)
{
	struct lookup_flow fl[64];
	struct lookup2_map m;
	uint32_t ids[64], e1, id_before;
	uint8_t errs[64];
	int fd = lookup_client_connect(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lookup2_map_init(&m), 0);
	for (unsigned i = 0; i < 64; i++)
		flow4(&fl[i], 0x0a010200u + i * 2, (uint16_t)i, 80);
	ck_assert_uint_gt(check_query2(fd, &m, fl, 64), 0);
	e1 = m.epoch;
	ck_assert_uint_eq(check_query2(fd, &m, fl, 64), 0);
	ck_assert_uint_eq(m.epoch, e1);
	ck_assert_int_eq(lookup2_query(fd, AF_INET, fl, 64, ids, errs, &m), 0);
	id_before = ids[0];
	/* a more specific route: a new epoch, every record again, answers
	 * that follow the FIB */
	add4("10.1.2.0/26", "10.0.0.30", 9, 1);
	ck_assert_uint_gt(check_query2(fd, &m, fl, 64), 0);
	ck_assert_uint_ne(m.epoch, e1);
	ck_assert_uint_eq(m.resets, 1);
	ck_assert_int_eq(lookup2_query(fd, AF_INET, fl, 64, ids, errs, &m), 0);
	ck_assert_uint_eq(lookup2_record(&m, ids[0])->rec.plen, 26);
	ck_assert_uint_eq(lookup2_record(&m, ids[63])->rec.plen, 24);
	(void)id_before;
	/* a policy change (a rule that changes no answer): a new epoch too */
	{
		struct fib_rule r;
		uint32_t e2 = m.epoch;
		uint64_t pgen = fib_policy_generation(fib);

		fib_rule_init(&r, AF_INET);
		r.action = FIB_RULE_TO_TBL;
		r.table = 254;
		r.priority = 100;
		ck_assert_int_eq(fib_rule_add(fib, &r), 0);
		ck_assert_int_eq(fib_policy_publish(fib), 0);
		ck_assert_uint_ne(fib_policy_generation(fib), pgen);
		ck_assert_uint_gt(check_query2(fd, &m, fl, 64), 0);
		ck_assert_uint_ne(m.epoch, e2);
		ck_assert_uint_eq(m.resets, 2);
		ck_assert_uint_eq(check_query2(fd, &m, fl, 64), 0);
	}
	lookup2_map_free(&m);
	close(fd);
}
END_TEST

/* More distinct decisions than LOOKUP2_IDS_MAX: the table doubles up to
 * it, then a new epoch; answers stay right across both. */
START_TEST(test_v2_overflow)
{
	enum { ROUTES = LOOKUP2_IDS_MAX + 2048 };
	static struct lookup_flow fl[LOOKUP_BATCH_MAX];
	struct lookup2_map m;
	struct lookup_stats st;
	int fd;

	for (unsigned i = 0; i < ROUTES; i++) {
		char pfx[32];

		snprintf(pfx, sizeof(pfx), "100.%u.%u.0/24", i / 256, i % 256);
		add4(pfx, "10.0.0.40", 10, 1);
	}
	fd = lookup_client_connect(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lookup2_map_init(&m), 0);
	for (unsigned b = 0; b < ROUTES / LOOKUP_BATCH_MAX; b++) {
		for (unsigned i = 0; i < LOOKUP_BATCH_MAX; i++)
			flow4(&fl[i], 0x64000001u + ((b * LOOKUP_BATCH_MAX + i) << 8), 1, 2);
		ck_assert_uint_eq(check_query2(fd, &m, fl, LOOKUP_BATCH_MAX), LOOKUP_BATCH_MAX);
	}
	ck_assert_uint_eq(m.resets, 1);
	ck_assert_uint_eq(m.records, ROUTES / LOOKUP_BATCH_MAX * LOOKUP_BATCH_MAX);
	lookup_stats(svc, &st);
	ck_assert_uint_eq(st.epochs, 2);
	lookup2_map_free(&m);
	close(fd);
}
END_TEST

/* A v2 client while the writer changes routes: every answer adds up and
 * names only ids it has records for (lookup2_query returns -EPROTO
 * otherwise). */
static void *
query2_loop(void *arg)
{
	struct lookup_flow fl[LOOKUP_BATCH_MAX];
	uint32_t ids[LOOKUP_BATCH_MAX];
	uint8_t errs[LOOKUP_BATCH_MAX];
	struct lookup2_map m;
	int fd = lookup_client_connect(path);
	long bad = 0;

	(void)arg;
	if (fd < 0 || lookup2_map_init(&m) < 0)
		return (void *)1L;
	for (int i = 0; i < LOOKUP_BATCH_MAX; i++)
		flow4(&fl[i], 0x0b000000u + (uint32_t)i * 4099u, (uint16_t)i, 53);
	for (int k = 0; k < 500; k++) {
		if (lookup2_query(fd, AF_INET, fl, LOOKUP_BATCH_MAX, ids, errs, &m) < 0)
			bad++;
		else
			for (int i = 0; i < LOOKUP_BATCH_MAX; i++)
				if (lookup2_record(&m, ids[i])->rec.error != errs[i])
					bad++;
	}
	lookup2_map_free(&m);
	close(fd);
	return (void *)bad;
}

START_TEST(test_v2_concurrent_updates)
{
	pthread_t t;
	void *bad;
	char pfx[32];

	ck_assert_int_eq(pthread_create(&t, NULL, query2_loop, NULL), 0);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 300; i++) {
			struct fib_route r;
			uint8_t fam;

			snprintf(pfx, sizeof(pfx), "11.%d.%d.0/24", i / 256, i % 256);
			if (round % 2 == 0) {
				add4(pfx, "10.0.0.7", 7, 1 + i % 2);
			} else {
				memset(&r, 0, sizeof(r));
				ck_assert_int_eq(fib_prefix_parse(pfx, &r.dst, &r.plen, &fam), 0);
				r.family = fam;
				r.table = 254;
				ck_assert_int_eq(fib_del(fib, &r), 0);
			}
		}
	pthread_join(t, &bad);
	ck_assert_ptr_null(bad);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("lookup");
	TCase *tc = tcase_create("service");

	tcase_set_timeout(tc, 120); /* TSAN builds on a loaded machine */
	signal(SIGPIPE, SIG_IGN);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_answers);
	tcase_add_test(tc, test_multipath);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_many_clients);
	tcase_add_test(tc, test_idle);
	tcase_add_test(tc, test_concurrent_updates);
	tcase_add_test(tc, test_cache);
	tcase_add_test(tc, test_cache_swap);
	tcase_add_test(tc, test_v2_answers);
	tcase_add_test(tc, test_v2_ipv6);
	tcase_add_test(tc, test_v2_dst);
	tcase_add_test(tc, test_v2_mixed);
	tcase_add_test(tc, test_v2_malformed);
	tcase_add_test(tc, test_pipeline);
	tcase_add_test(tc, test_shared);
	tcase_add_test(tc, test_slow_client);
	tcase_add_test(tc, test_v2_epoch);
	tcase_add_test(tc, test_v2_overflow);
	tcase_add_test(tc, test_v2_concurrent_updates);
	suite_add_tcase(s, tc);
	return ck_run(s, CK_FORK_GETENV);
}
