/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fibl, an example client of fibd's batch lookup service
 *
 *   fibl [-s SOCKET] [--cache] ADDR... answers as `fibctl lookup` prints them
 *   fibl [-s SOCKET] [--cache] -      addresses from stdin, 256 a request
 *                                     (--cache: through fibd's flow cache,
 *                                     LOOKUP_Q_CACHE)
 *   fibl [-s SOCKET] --flows [--plen] FILE|-
 *                                     version 2: one flow a line, as
 *                                     `ip route get` takes it (--plen:
 *                                     records without their prefix,
 *                                     LOOKUP2_Q_PLEN; the same output):
 *       DST [from SRC] [iif DEV] [oif DEV] [mark N] [uid N] [tos N | dscp N]
 *           [ipproto N|tcp|udp|icmp] [sport N] [dport N] [flowlabel N] [fibmatch]
 *                                     one decision a line, in input order:
 *       DST PREFIX/LEN TYPE [via GW] [dev IF] [src SRC] table T [rule R] [error E]
 *       DST error E                   (no route: E is ENETUNREACH, ...)
 *   fibl [-s SOCKET] --flows random N [-6]
 *                                     the same for N random flows
 *   fibl [-s SOCKET] --bench SECONDS [-6] [--v1 | --v2] [--prefix] [--dst]
 *        [--inflight K] [--clients N] [--spin US] [FILE]
 *                                     lookups/s, batches of 256 addresses:
 *                                     random, or cycling through the
 *                                     addresses in FILE; version 1, then
 *                                     version 2 (flows to the same
 *                                     addresses, random ports, TCP; records
 *                                     without their prefix, LOOKUP2_Q_PLEN,
 *                                     unless --prefix; with --dst bare
 *                                     destinations, LOOKUP2_Q_DST), each a
 *                                     JSON line
 *                                     with p50/p99 per batch (us, from its
 *                                     send to its answer); K requests in
 *                                     flight per client (1..8, default 1),
 *                                     N clients (threads, a connection
 *                                     each; default 1); each waits for an
 *                                     answer spinning up to US
 *                                     microseconds before it sleeps
 *                                     (lookup_client_wait; default 0)
 *
 * Everything it needs is in lookup_proto.h (header-only; installed as
 * <fib/lookup_proto.h>, daemon/lookup_proto.h in the tree): connect,
 * build a batch, lookup_client_query, walk the results and next hops;
 * for version 2 lookup2_query and lookup2_record on a struct lookup2_map.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "daemon/lookup_proto.h"

static const char *
fibl_type(unsigned t)
{
	static const char *names[] = { "-", "unicast", "local", "broadcast", "anycast",
				       "multicast", "blackhole", "unreachable", "prohibit",
				       "throw" };

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

static void
fibl_print(int family, const uint8_t *addr, const struct lookup_result *r,
	   const struct lookup_nh *nh)
{
	char a[INET6_ADDRSTRLEN], p[INET6_ADDRSTRLEN], g[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];

	inet_ntop(family, addr, a, sizeof(a));
	if (r->type == 0) {
		printf("%s -\n", a);
		return;
	}
	inet_ntop(family, r->prefix, p, sizeof(p));
	printf("%s %s/%u %s", a, p, r->plen, fibl_type(r->type));
	for (unsigned k = 0; k < r->nh_count; k++) {
		const struct lookup_nh *n = &nh[r->nh_first + k];

		if (r->nh_count > 1)
			printf(" nexthop");
		if (n->gw_family) {
			inet_ntop(n->gw_family, n->gw, g, sizeof(g));
			printf(" via %s", g);
		}
		if (n->ifindex) {
			if (if_indextoname(n->ifindex, dev))
				printf(" dev %s", dev);
			else
				printf(" dev if%u", n->ifindex);
		}
		if (r->nh_count > 1)
			printf(" weight %u", n->weight);
	}
	putchar('\n');
}

static unsigned fibl_qflags;  /* --cache: LOOKUP_Q_CACHE */
static unsigned fibl_q2flags; /* --flows --plen: LOOKUP2_Q_PLEN */

/* Query a batch of one family and print it. */
static int
fibl_batch(int fd, int family, uint8_t (*addrs)[16], unsigned n, void *buf)
{
	uint8_t packed[LOOKUP_BATCH_MAX * 16];
	size_t alen = family == AF_INET6 ? 16 : 4;
	const struct lookup_resp *resp;
	const struct lookup_result *res = NULL;
	const struct lookup_nh *nh = NULL;
	int rc;

	if (!n)
		return 0;
	for (unsigned i = 0; i < n; i++)
		memcpy(packed + i * alen, addrs[i], alen);
	rc = lookup_client_send(fd, family, 0, fibl_qflags, packed, n, 0);
	if (rc == 0)
		rc = lookup_client_recv(fd, n, buf, &resp, &res, &nh);
	if (rc < 0) {
		fprintf(stderr, "fibl: lookup: %s\n", strerror(-rc));
		return rc;
	}
	for (unsigned i = 0; i < n; i++)
		fibl_print(family, addrs[i], &res[i], nh);
	return 0;
}

static double
fibl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *
fibl_errname(unsigned e)
{
	switch (e) {
	case ENETUNREACH:
		return "ENETUNREACH";
	case EHOSTUNREACH:
		return "EHOSTUNREACH";
	case EACCES:
		return "EACCES";
	case EINVAL:
		return "EINVAL";
	default:
		return "E?";
	}
}

/* One decision line (the format of the DOC comment). */
static void
fibl_print2(int family, const struct lookup_flow *f, const struct lookup2_entry *e, int plen)
{
	const struct lookup_rec *r = &e->rec;
	char a[INET6_ADDRSTRLEN], p[INET6_ADDRSTRLEN], g[INET6_ADDRSTRLEN], dev[IF_NAMESIZE];
	uint8_t pfx[16];

	inet_ntop(family, f->dst, a, sizeof(a));
	if (!(r->flags & LOOKUP_D_ROUTE)) {
		printf("%s error %s\n", a, fibl_errname(r->error));
		return;
	}
	if (plen >= 0) {
		/* LOOKUP2_Q_PLEN: the prefix is the destination cut to plen */
		memset(pfx, 0, sizeof(pfx));
		memcpy(pfx, f->dst, (size_t)plen / 8);
		if (plen % 8)
			pfx[plen / 8] = (uint8_t)(f->dst[plen / 8] & (0xff00 >> (plen % 8)));
	} else {
		memcpy(pfx, r->prefix, 16);
		plen = r->plen;
	}
	inet_ntop(family, pfx, p, sizeof(p));
	printf("%s %s/%d %s", a, p, plen, fibl_type(r->type));
	if (r->gw_family) {
		inet_ntop(r->gw_family, r->gateway, g, sizeof(g));
		printf(" via %s", g);
	}
	if (r->ifindex) {
		if (if_indextoname(r->ifindex, dev))
			printf(" dev %s", dev);
		else
			printf(" dev if%u", r->ifindex);
	}
	if (r->flags & LOOKUP_D_SRC) {
		inet_ntop(family, r->src, p, sizeof(p));
		printf(" src %s", p);
	}
	printf(" table %u", r->table);
	if (r->flags & LOOKUP_D_RULE)
		printf(" rule %u", r->rule);
	if (r->error)
		printf(" error %s", fibl_errname(r->error));
	if (r->npaths > 1)
		printf(" path %u/%u", r->path + 1, r->npaths);
	putchar('\n');
}

/* A device name or an ifindex. 0: unknown. */
static uint32_t
fibl_dev(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s && !*end)
		return (uint32_t)v;
	return if_nametoindex(s);
}

/* Parse one flow line into f; returns its family, or 0 (and says why). */
static int
fibl_flow_parse(char *line, struct lookup_flow *f)
{
	char *tok[32], *save = NULL;
	int n = 0, family;

	for (char *t = strtok_r(line, " \t\r\n", &save); t && n < 32;
	     t = strtok_r(NULL, " \t\r\n", &save))
		tok[n++] = t;
	memset(f, 0, sizeof(*f));
	if (n == 0)
		return 0;
	if (inet_pton(AF_INET, tok[0], f->dst) == 1)
		family = AF_INET;
	else if (inet_pton(AF_INET6, tok[0], f->dst) == 1)
		family = AF_INET6;
	else
		goto bad;
	for (int i = 1; i < n; i++) {
		const char *k = tok[i], *v = i + 1 < n ? tok[i + 1] : NULL;
		unsigned long x = v ? strtoul(v, NULL, 0) : 0;

		if (!strcmp(k, "fibmatch")) {
			f->flags |= LOOKUP_FLOW_FIBMATCH;
			continue;
		}
		if (!v)
			goto bad;
		i++;
		if (!strcmp(k, "from")) {
			if (inet_pton(family, v, f->src) != 1)
				goto bad;
			f->flags |= LOOKUP_FLOW_SRC;
		} else if (!strcmp(k, "iif")) {
			if (!(f->iif = fibl_dev(v)))
				goto bad;
			f->flags |= LOOKUP_FLOW_IIF;
		} else if (!strcmp(k, "oif")) {
			if (!(f->oif = fibl_dev(v)))
				goto bad;
			f->flags |= LOOKUP_FLOW_OIF;
		} else if (!strcmp(k, "mark")) {
			f->mark = (uint32_t)x;
		} else if (!strcmp(k, "uid")) {
			f->uid = (uint32_t)x;
			f->flags |= LOOKUP_FLOW_UID;
		} else if (!strcmp(k, "tos")) {
			f->tos = (uint8_t)x;
		} else if (!strcmp(k, "dscp")) {
			f->tos = (uint8_t)x;
			f->flags |= LOOKUP_FLOW_DSCP;
		} else if (!strcmp(k, "ipproto")) {
			struct protoent *pe = getprotobyname(v);

			f->ipproto = pe ? (uint8_t)pe->p_proto : (uint8_t)x;
		} else if (!strcmp(k, "sport")) {
			f->sport = (uint16_t)x;
		} else if (!strcmp(k, "dport")) {
			f->dport = (uint16_t)x;
		} else if (!strcmp(k, "flowlabel")) {
			f->flowlabel = (uint32_t)x;
		} else {
			goto bad;
		}
	}
	return family;
bad:
	fprintf(stderr, "fibl: bad flow: %s\n", tok[0]);
	return 0;
}

/* n random flows of family into f (xorshift state *x). */
static void
fibl_flows_random(struct lookup_flow *f, size_t n, int family, uint64_t *x)
{
	size_t alen = family == AF_INET6 ? 16 : 4;

	for (size_t i = 0; i < n; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		for (size_t b = 0; b < alen; b++) {
			*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
			f[i].dst[b] = (uint8_t)*x;
		}
		f[i].ipproto = 6;
		f[i].sport = (uint16_t)(*x >> 16);
		f[i].dport = (uint16_t)(*x >> 32);
	}
}

/* Ask a batch of one family and print it in order. */
static int
fibl_flush2(int fd, int family, const struct lookup_flow *f, unsigned n, struct lookup2_map *m)
{
	uint32_t ids[LOOKUP_BATCH_MAX];
	uint8_t errs[LOOKUP_BATCH_MAX];
	int rc;

	if (!n)
		return 0;
	rc = lookup2_send(fd, family, fibl_q2flags, f, n, 0);
	if (rc == 0)
		rc = lookup2_recv(fd, n, ids, errs, m);
	if (rc < 0) {
		fprintf(stderr, "fibl: lookup: %s\n", strerror(-rc));
		return rc;
	}
	for (unsigned i = 0; i < n; i++)
		fibl_print2(family, &f[i], lookup2_record(m, ids[i]),
			    (fibl_q2flags & LOOKUP2_Q_PLEN) ? m->plen[i] : -1);
	return 0;
}

/* --flows FILE|- or --flows random N: decisions in input order (a batch
 * ends where the family changes). */
static int
fibl_flows(int fd, const char *src, unsigned long nrand, int family)
{
	static struct lookup_flow f[LOOKUP_BATCH_MAX];
	struct lookup2_map m;
	unsigned n = 0;
	int cur = 0, rc = 0;
	char line[512];
	FILE *in = NULL;
	uint64_t x = 88172645463325252ull;

	if (lookup2_map_init(&m) < 0)
		return 1;
	if (!strcmp(src, "random")) {
		while (nrand) {
			unsigned k = nrand > LOOKUP_BATCH_MAX ? LOOKUP_BATCH_MAX : (unsigned)nrand;

			fibl_flows_random(f, k, family, &x);
			if (fibl_flush2(fd, family, f, k, &m) < 0)
				return 1;
			nrand -= k;
		}
		lookup2_map_free(&m);
		return 0;
	}
	in = !strcmp(src, "-") ? stdin : fopen(src, "r");
	if (!in) {
		perror(src);
		return 1;
	}
	while (fgets(line, sizeof(line), in)) {
		struct lookup_flow fl;
		int fam;

		if (line[strspn(line, " \t")] == '#' || !line[strspn(line, " \t\r\n")])
			continue;
		if (!(fam = fibl_flow_parse(line, &fl))) {
			rc = 1;
			continue;
		}
		if (n && (fam != cur || n == LOOKUP_BATCH_MAX)) {
			if (fibl_flush2(fd, cur, f, n, &m) < 0)
				return 1;
			n = 0;
		}
		cur = fam;
		f[n++] = fl;
	}
	if (fibl_flush2(fd, cur, f, n, &m) < 0)
		return 1;
	if (in != stdin)
		fclose(in);
	lookup2_map_free(&m);
	return rc;
}

static int
fibl_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Read the addresses to cycle through (FILE, or random ones). */
static uint8_t *
fibl_bench_addrs(int family, const char *file, size_t *np)
{
	size_t alen = family == AF_INET6 ? 16 : 4, n = 0, cap = 1 << 16;
	uint8_t *addrs = malloc(cap * alen);
	uint64_t x = 88172645463325252ull;

	if (!addrs)
		return NULL;
	if (file) {
		char line[128];
		FILE *f = fopen(file, "r");

		if (!f) {
			perror(file);
			free(addrs);
			return NULL;
		}
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, " /\t\r\n")] = 0;
			if (n == cap) {
				uint8_t *a = realloc(addrs, 2 * cap * alen);

				if (!a)
					break;
				addrs = a;
				cap *= 2;
			}
			if (inet_pton(family, line, addrs + n * alen) == 1)
				n++;
		}
		fclose(f);
	} else {
		for (n = 0; n < cap; n++)
			for (size_t b = 0; b < alen; b++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				addrs[n * alen + b] = (uint8_t)x;
			}
	}
	*np = n;
	return addrs;
}

/* The benchmark's options (--bench). */
struct fibl_opts {
	double seconds;
	int family, versions, inflight, clients;
	unsigned flags;   /* version 2 request flags: LOOKUP2_Q_PLEN, _DST */
	unsigned spin_us; /* lookup_client_wait's */
};

/* What one benchmark client does, and what it measured. */
struct fibl_bench {
	const char *path;
	struct fibl_opts o;
	int version;
	const uint8_t *addrs;
	const struct lookup_flow *flows;
	size_t n, first; /* cycle through addrs from first */
	double *lat;     /* round trip of each batch (s) */
	size_t nlat, maxlat;
	uint64_t lookups, matched;
	double t;
	uint32_t records, epochs;
	int rc;
};

/*
 * One client: batches of 256 cycling through the addresses, inflight
 * requests sent before their answers are read (each answer read is
 * followed by the next request); the round trip of each batch, from its
 * send to its answer (one clock read per batch).
 */
static void *
fibl_bench_client(void *arg)
{
	struct fibl_bench *b = arg;
	size_t alen = b->o.family == AF_INET6 ? 16 : 4, off = b->first % b->n;
	static _Thread_local uint64_t buf[LOOKUP_RESP_MAX / 8 + 1];
	double sent[LOOKUP_INFLIGHT_MAX], t0, now;
	struct lookup2_map m;
	uint32_t ids[LOOKUP_BATCH_MAX];
	uint8_t errs[LOOKUP_BATCH_MAX];
	unsigned head = 0, out = 0;
	int fd, rc = 0, stop = 0;

	b->rc = 1;
	fd = lookup_client_connect(b->path);
	if (fd < 0) {
		fprintf(stderr, "fibl: %s: %s\n", b->path ? b->path : LOOKUP_SOCKET, strerror(-fd));
		return NULL;
	}
	if (b->version == 2 && lookup2_map_init(&m) < 0)
		return NULL;
	t0 = fibl_now();
	for (;;) {
		const struct lookup_resp *resp;
		const struct lookup_result *res;
		const struct lookup_nh *nh;

		/* Fill the pipe, then one answer for one request. */
		while (!stop && out < (unsigned)b->o.inflight) {
			if (off + LOOKUP_BATCH_MAX > b->n)
				off = 0;
			if (b->version == 1)
				rc = lookup_client_send(fd, b->o.family, 0, 0, b->addrs + off * alen,
							LOOKUP_BATCH_MAX, (uint32_t)off);
			else if (b->o.flags & LOOKUP2_Q_DST)
				rc = lookup2_send_dst(fd, b->o.family, b->o.flags,
						      b->addrs + off * alen, LOOKUP_BATCH_MAX,
						      (uint32_t)off);
			else
				rc = lookup2_send(fd, b->o.family, b->o.flags, b->flows + off,
						  LOOKUP_BATCH_MAX, (uint32_t)off);
			if (rc < 0)
				goto fail;
			sent[(head + out) % LOOKUP_INFLIGHT_MAX] = fibl_now();
			out++;
			off += LOOKUP_BATCH_MAX;
		}
		if (!out)
			break;
		rc = lookup_client_wait(fd, b->o.spin_us);
		if (rc < 0)
			goto fail;
		if (b->version == 1)
			rc = lookup_client_recv(fd, LOOKUP_BATCH_MAX, buf, &resp, &res, &nh);
		else
			rc = lookup2_recv(fd, LOOKUP_BATCH_MAX, ids, errs, &m);
		if (rc < 0)
			goto fail;
		now = fibl_now();
		for (unsigned i = 0; i < LOOKUP_BATCH_MAX; i++)
			b->matched += b->version == 1 ? res[i].type != 0 : errs[i] == 0;
		b->lookups += LOOKUP_BATCH_MAX;
		if (b->nlat < b->maxlat)
			b->lat[b->nlat++] = now - sent[head];
		head = (head + 1) % LOOKUP_INFLIGHT_MAX;
		out--;
		if (!stop && now - t0 >= b->o.seconds) {
			stop = 1;
			b->t = now - t0;
		}
	}
	if (b->version == 2) {
		b->records = m.records;
		b->epochs = m.resets + 1;
		lookup2_map_free(&m);
	}
	close(fd);
	b->rc = 0;
	return NULL;
fail:
	fprintf(stderr, "fibl: lookup: %s\n", strerror(-rc));
	close(fd);
	return NULL;
}

/*
 * SECONDS of batches of one version from nclients clients (threads, one
 * connection each, each starting at its own place in addrs); one JSON
 * line: the rate of all, the p50/p99 round trip of a batch over all.
 */
static int
fibl_bench_run(const char *path, int version, const struct fibl_opts *o, const uint8_t *addrs,
	       size_t n)
{
	size_t alen = o->family == AF_INET6 ? 16 : 4, maxlat = 1 << 20, nlat = 0;
	int nclients = o->clients;
	struct fibl_bench b[64];
	pthread_t tid[64];
	struct lookup_flow *flows = NULL;
	uint64_t lookups = 0, matched = 0, records = 0, epochs = 0, x = 2463534242ull;
	double t = 0, *lat;
	int rc = 0;

	if (version == 2 && !(o->flags & LOOKUP2_Q_DST)) {
		/* the flows are built before the clock starts, as the v1 batches */
		flows = calloc(n, sizeof(*flows));
		if (!flows)
			return 1;
		for (size_t i = 0; i < n; i++) {
			memcpy(flows[i].dst, addrs + i * alen, alen);
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			flows[i].ipproto = 6;
			flows[i].sport = (uint16_t)x;
			flows[i].dport = (uint16_t)(x >> 16);
		}
	}
	for (int c = 0; c < nclients; c++) {
		memset(&b[c], 0, sizeof(b[c]));
		b[c].path = path;
		b[c].version = version;
		b[c].o = *o;
		b[c].addrs = addrs;
		b[c].flows = flows;
		b[c].n = n;
		b[c].first = n / (size_t)nclients * (size_t)c;
		b[c].maxlat = maxlat;
		b[c].lat = malloc(maxlat * sizeof(double));
		if (!b[c].lat || pthread_create(&tid[c], NULL, fibl_bench_client, &b[c]))
			return 1;
	}
	lat = malloc((size_t)nclients * maxlat * sizeof(double));
	for (int c = 0; c < nclients; c++) {
		pthread_join(tid[c], NULL);
		rc |= b[c].rc;
		lookups += b[c].lookups;
		matched += b[c].matched;
		records += b[c].records;
		epochs += b[c].epochs;
		/* the clients ran side by side: the rate is the sum of theirs */
		if (b[c].t > 0)
			t += b[c].lookups / b[c].t;
		if (lat)
			memcpy(lat + nlat, b[c].lat, b[c].nlat * sizeof(double));
		nlat += b[c].nlat;
		free(b[c].lat);
	}
	if (rc || !lat || !nlat) {
		free(lat);
		free(flows);
		return 1;
	}
	qsort(lat, nlat, sizeof(*lat), fibl_cmp_double);
	printf("{\"version\": %d, \"clients\": %d, \"inflight\": %d, \"spin_us\": %u, "
	       "\"lookups\": %llu, \"seconds\": %.3f, \"mlps\": %.3f, \"batch\": %d, "
	       "\"matched\": %llu, \"p50_us\": %.1f, \"p99_us\": %.1f",
	       version, nclients, o->inflight, o->spin_us, (unsigned long long)lookups, o->seconds,
	       t * 1e-6,
	       LOOKUP_BATCH_MAX, (unsigned long long)matched, lat[nlat / 2] * 1e6,
	       lat[nlat * 99 / 100] * 1e6);
	if (version == 2)
		printf(", \"plen\": %s, \"dst\": %s, \"records\": %llu, \"epochs\": %llu",
		       o->flags & LOOKUP2_Q_PLEN ? "true" : "false",
		       o->flags & LOOKUP2_Q_DST ? "true" : "false", (unsigned long long)records,
		       (unsigned long long)epochs);
	printf("}\n");
	fflush(stdout);
	free(lat);
	free(flows);
	return 0;
}

static int
fibl_bench(const char *path, const struct fibl_opts *o, const char *file)
{
	size_t n;
	uint8_t *addrs = fibl_bench_addrs(o->family, file, &n);
	int rc = 0;

	if (!addrs)
		return 1;
	if (n < LOOKUP_BATCH_MAX) {
		fprintf(stderr, "fibl: need at least %d addresses\n", LOOKUP_BATCH_MAX);
		return 1;
	}
	for (int v = 1; v <= 2 && !rc; v++)
		if (o->versions & v)
			rc = fibl_bench_run(path, v, o, addrs, n);
	free(addrs);
	return rc;
}

int
main(int argc, char **argv)
{
	static uint64_t buf[LOOKUP_RESP_MAX / 8 + 1];
	static uint8_t a4[LOOKUP_BATCH_MAX][16], a6[LOOKUP_BATCH_MAX][16];
	const char *path = NULL;
	unsigned n4 = 0, n6 = 0;
	int fd, i = 1, family = AF_INET, rc = 0;
	char line[128];

	if (i + 1 < argc && !strcmp(argv[i], "-s")) {
		path = argv[i + 1];
		i += 2;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: fibl [-s SOCKET] [--cache] ADDR... | -\n"
				"       | --flows [--plen] FILE|-|random N [-6]\n"
				"       | --bench SECONDS [-6] [--v1|--v2] [--prefix] [--dst]\n"
				"         [--inflight K] [--clients N] [--spin US] [FILE]\n");
		return 2;
	}
	fd = lookup_client_connect(path);
	if (fd < 0) {
		fprintf(stderr, "fibl: %s: %s\n", path ? path : LOOKUP_SOCKET, strerror(-fd));
		return 2;
	}
	if (!strcmp(argv[i], "--bench")) {
		struct fibl_opts o = { .seconds = i + 1 < argc ? atof(argv[i + 1]) : 1.0,
				       .family = AF_INET,
				       .versions = 3,
				       .inflight = 1,
				       .clients = 1,
				       .flags = LOOKUP2_Q_PLEN };
		long spin = 0;

		close(fd); /* each client connects on its own */
		for (i += 2; i < argc && argv[i][0] == '-' && argv[i][1]; i++)
			if (!strcmp(argv[i], "-6"))
				o.family = AF_INET6;
			else if (!strcmp(argv[i], "--v1"))
				o.versions = 1;
			else if (!strcmp(argv[i], "--v2"))
				o.versions = 2;
			else if (!strcmp(argv[i], "--prefix"))
				o.flags &= ~LOOKUP2_Q_PLEN;
			else if (!strcmp(argv[i], "--dst"))
				o.flags |= LOOKUP2_Q_DST;
			else if (!strcmp(argv[i], "--inflight") && i + 1 < argc)
				o.inflight = atoi(argv[++i]);
			else if (!strcmp(argv[i], "--clients") && i + 1 < argc)
				o.clients = atoi(argv[++i]);
			else if (!strcmp(argv[i], "--spin") && i + 1 < argc)
				spin = atol(argv[++i]);
			else
				break;
		if (o.inflight < 1 || o.inflight > LOOKUP_INFLIGHT_MAX || o.clients < 1 ||
		    o.clients > 64 || spin < 0 || spin > 1000000) {
			fprintf(stderr, "fibl: --inflight 1..%d, --clients 1..64, --spin 0..1000000\n",
				LOOKUP_INFLIGHT_MAX);
			return 2;
		}
		o.spin_us = (unsigned)spin;
		return fibl_bench(path, &o, i < argc ? argv[i] : NULL);
	}
	if (!strcmp(argv[i], "--flows")) {
		const char *src;
		unsigned long nrand = 0;

		if (i + 1 < argc && !strcmp(argv[i + 1], "--plen")) {
			fibl_q2flags = LOOKUP2_Q_PLEN;
			i++;
		}
		src = i + 1 < argc ? argv[i + 1] : "-";
		i += 2;
		if (!strcmp(src, "random")) {
			nrand = i < argc ? strtoul(argv[i++], NULL, 10) : 256;
			if (i < argc && !strcmp(argv[i], "-6"))
				family = AF_INET6;
		}
		return fibl_flows(fd, src, nrand, family);
	}
	if (!strcmp(argv[i], "--cache")) {
		fibl_qflags = LOOKUP_Q_CACHE;
		if (++i >= argc)
			return 2;
	}
	int from_stdin = !strcmp(argv[i], "-");

	for (;;) {
		const char *s;
		uint8_t tmp[16];

		if (!from_stdin) {
			if (i >= argc)
				break;
			s = argv[i++];
		} else if (fgets(line, sizeof(line), stdin)) {
			line[strcspn(line, " \t\r\n")] = 0;
			if (!line[0])
				continue;
			s = line;
		} else {
			break;
		}
		if (inet_pton(AF_INET6, s, tmp) == 1) {
			memcpy(a6[n6++], tmp, 16);
		} else if (inet_pton(AF_INET, s, tmp) == 1) {
			memcpy(a4[n4++], tmp, 4);
		} else {
			fprintf(stderr, "fibl: bad address: %s\n", s);
			rc = 1;
		}
		if (n4 == LOOKUP_BATCH_MAX || n6 == LOOKUP_BATCH_MAX) {
			if (fibl_batch(fd, AF_INET, a4, n4, buf) || fibl_batch(fd, AF_INET6, a6, n6, buf))
				return 1;
			n4 = n6 = 0;
		}
	}
	if (fibl_batch(fd, AF_INET, a4, n4, buf) || fibl_batch(fd, AF_INET6, a6, n6, buf))
		return 1;
	close(fd);
	return rc;
}
