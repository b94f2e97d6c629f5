// SPDX-License-Identifier: BSD-2-Clause
/*
 * DOC: soak_reader, a lookup client that checks every answer
 *
 *   soak_reader SOCKET VALID ADDRS
 *
 * Looks up the addresses of ADDRS (one a line, IPv4 and IPv6 mixed)
 * through fibd's batch lookup service (daemon/lookup_proto.h), batches of
 * 256 of one family, without pause, until SIGTERM or SIGINT. Every answer
 * must be status 0 and every result either "no match" (type 0: during a
 * withdrawal cycle the address may have no route) or a route whose prefix
 * covers the address and is one of VALID (one PREFIX/LEN a line: every
 * prefix the table may hold at any moment of the soak). On exit one line:
 *
 *   reader: requests R addresses A hits H misses M errors E bad B
 *
 * and exit status 1 if E or B is not 0 (the first few are printed).
 */
#include "config.h"

#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/lookup_proto.h"

struct key {
	uint8_t family, plen;
	uint8_t a[16];
};

static struct key *set;
static size_t set_mask;
static volatile sig_atomic_t stop;

static uint64_t
key_hash(const struct key *k)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ ((const uint8_t *)k)[i]) * 1099511628211ull;
	return h;
}

static int
key_parse(const char *s, struct key *k)
{
	char buf[64], *slash;

	memset(k, 0, sizeof(*k));
	snprintf(buf, sizeof(buf), "%.63s", s);
	buf[strcspn(buf, " \t\n")] = '\0';
	slash = strchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	k->family = strchr(buf, ':') ? AF_INET6 : AF_INET;
	k->plen = (uint8_t)atoi(slash + 1);
	return inet_pton(k->family, buf, k->a) == 1 ? 0 : -1;
}

/* family 0 marks an empty slot. */
static void
set_add(const struct key *k)
{
	for (size_t i = key_hash(k) & set_mask;; i = (i + 1) & set_mask) {
		if (set[i].family == 0) {
			set[i] = *k;
			return;
		}
		if (!memcmp(&set[i], k, sizeof(*k)))
			return;
	}
}

static int
set_has(const struct key *k)
{
	for (size_t i = key_hash(k) & set_mask;; i = (i + 1) & set_mask) {
		if (set[i].family == 0)
			return 0;
		if (!memcmp(&set[i], k, sizeof(*k)))
			return 1;
	}
}

static int
covers(const uint8_t *pfx, unsigned plen, const uint8_t *a)
{
	unsigned full = plen / 8, rest = plen % 8;

	if (memcmp(pfx, a, full) != 0)
		return 0;
	return rest == 0 || ((pfx[full] ^ a[full]) & (0xff00 >> rest) & 0xff) == 0;
}

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char **argv)
{
	static uint64_t buf[LOOKUP_RESP_MAX / 8 + 1];
	uint8_t(*a4)[4] = NULL, (*a6)[16] = NULL;
	size_t n4 = 0, n6 = 0, cap4 = 0, cap6 = 0, nvalid = 0, i4 = 0, i6 = 0;
	uint64_t requests = 0, addresses = 0, hits = 0, misses = 0, errors = 0, bad = 0;
	char line[256];
	FILE *f;
	int fd, turn = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: soak_reader SOCKET VALID ADDRS\n");
		return 2;
	}
	/* The valid set: count, size the table at 2x or more, fill. */
	if (!(f = fopen(argv[2], "r")))
		return perror(argv[2]), 2;
	while (fgets(line, sizeof(line), f))
		nvalid++;
	for (set_mask = 1; set_mask < 2 * nvalid + 2; set_mask <<= 1)
		;
	set = calloc(set_mask, sizeof(*set));
	set_mask--;
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		struct key k;

		if (key_parse(line, &k) == 0)
			set_add(&k);
	}
	fclose(f);
	if (!(f = fopen(argv[3], "r")))
		return perror(argv[3]), 2;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \t\n")] = '\0';
		if (strchr(line, ':')) {
			if (n6 == cap6)
				a6 = realloc(a6, (cap6 = cap6 * 2 + 256) * 16);
			if (inet_pton(AF_INET6, line, a6[n6]) == 1)
				n6++;
		} else {
			if (n4 == cap4)
				a4 = realloc(a4, (cap4 = cap4 * 2 + 256) * 4);
			if (inet_pton(AF_INET, line, a4[n4]) == 1)
				n4++;
		}
	}
	fclose(f);
	if (n4 + n6 == 0)
		return fprintf(stderr, "soak_reader: no addresses\n"), 2;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	fd = lookup_client_connect(argv[1]);
	if (fd < 0)
		return fprintf(stderr, "soak_reader: connect %s: %s\n", argv[1], strerror(-fd)), 1;

	while (!stop) {
		const struct lookup_resp *resp;
		const struct lookup_result *res;
		const struct lookup_nh *nh;
		int v6 = n6 && (!n4 || (turn++ & 7) == 7); /* v6 one batch in 8 */
		size_t have = v6 ? n6 : n4, *pos = v6 ? &i6 : &i4, alen = v6 ? 16 : 4;
		unsigned n = have - *pos < LOOKUP_BATCH_MAX ? (unsigned)(have - *pos) : LOOKUP_BATCH_MAX;
		const uint8_t *base = v6 ? a6[*pos] : a4[*pos];
		int rc;

		/* through the flow cache, which the soak must exercise */
		rc = lookup_client_send(fd, v6 ? AF_INET6 : AF_INET, 0, LOOKUP_Q_CACHE, base, n, 0);
		if (rc >= 0)
			rc = lookup_client_recv(fd, n, buf, &resp, &res, &nh);
		requests++;
		if (rc < 0) {
			if (errors++ < 5)
				fprintf(stderr, "soak_reader: query: %s\n", strerror(-rc));
			if (rc != -EPROTO) {
				close(fd);
				fd = lookup_client_connect(argv[1]);
				if (fd < 0)
					break;
			}
			continue;
		}
		addresses += n;
		for (unsigned i = 0; i < n; i++) {
			const uint8_t *a = base + i * alen;
			struct key k;

			if (res[i].type == 0) {
				misses++;
				continue;
			}
			hits++;
			memset(&k, 0, sizeof(k));
			k.family = v6 ? AF_INET6 : AF_INET;
			k.plen = res[i].plen;
			memcpy(k.a, res[i].prefix, alen);
			if (k.plen > alen * 8 || !covers(k.a, k.plen, a) || !set_has(&k)) {
				char as[INET6_ADDRSTRLEN], ps[INET6_ADDRSTRLEN];

				if (bad++ < 5) {
					inet_ntop(k.family, a, as, sizeof(as));
					inet_ntop(k.family, k.a, ps, sizeof(ps));
					fprintf(stderr, "soak_reader: %s answered %s/%u type %u: %s\n", as, ps,
						k.plen, res[i].type,
						!covers(k.a, k.plen, a) ? "does not cover" : "not a valid prefix");
				}
			}
		}
		*pos += n;
		if (*pos == have)
			*pos = 0;
	}
	printf("reader: requests %llu addresses %llu hits %llu misses %llu errors %llu bad %llu\n",
	       (unsigned long long)requests, (unsigned long long)addresses, (unsigned long long)hits,
	       (unsigned long long)misses, (unsigned long long)errors, (unsigned long long)bad);
	if (fd >= 0)
		close(fd);
	return errors || bad ? 1 : 0;
}
