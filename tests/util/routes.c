/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: routes, reading and writing routes files (see routes.h)
 *
 * Parsing uses inet_pton, not libfib's own parser, so that tests which
 * compare libfib against these routes do not share its bugs. zlib's gzread
 * reads plain files unchanged, so one path serves both forms.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "tests/util/routes.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

void
routes_init(struct routes *rt)
{
	memset(rt, 0, sizeof(*rt));
}

void
routes_free(struct routes *rt)
{
	free(rt->r);
	free(rt->nh);
	free(rt->line);
	routes_init(rt);
}

static int
routes_grow(struct routes *rt)
{
	size_t cap = rt->cap ? rt->cap * 2 : 1024;
	struct fib_route *r;
	struct fib_nh *nh;
	uint32_t *line;

	r = realloc(rt->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	rt->r = r;
	nh = realloc(rt->nh, cap * sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	rt->nh = nh;
	/* r[i].nh points into nh[]: redo the pointers after a move */
	for (size_t i = 0; i < rt->n; i++)
		if (rt->r[i].nh_count)
			rt->r[i].nh = &nh[i];
	line = realloc(rt->line, cap * sizeof(*line));
	if (!line)
		return -ENOMEM;
	rt->line = line;
	rt->cap = cap;
	return 0;
}

static unsigned
routes_alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

int
routes_add(struct routes *rt, int family, const union fib_addr *dst, unsigned plen,
	   int gw_family, const union fib_addr *gw, uint32_t line)
{
	struct fib_route *r;
	unsigned alen, bit;
	int err;

	if (family != AF_INET && family != AF_INET6)
		return -EINVAL;
	if (rt->family && rt->family != family)
		return -EINVAL;
	if (gw_family && (!gw || (gw_family != AF_INET && gw_family != AF_INET6)))
		return -EINVAL;
	alen = routes_alen(family);
	if (plen > alen * 8)
		return -EINVAL;
	for (bit = plen; bit < alen * 8; bit++)
		if (dst->b[bit / 8] & (0x80 >> (bit % 8)))
			return -EINVAL;
	if (rt->n == rt->cap && (err = routes_grow(rt)) < 0)
		return err;
	rt->family = family;
	r = &rt->r[rt->n];
	memset(r, 0, sizeof(*r));
	r->family = family;
	r->plen = plen;
	r->type = FIB_UNICAST;
	r->protocol = ROUTES_PROTOCOL;
	r->scope = 0;
	r->table = ROUTES_TABLE;
	memcpy(r->dst.b, dst->b, alen);
	if (gw_family) {
		struct fib_nh *nh = &rt->nh[rt->n];

		memset(nh, 0, sizeof(*nh));
		memcpy(nh->gw.b, gw->b, routes_alen(gw_family));
		nh->gw_family = gw_family;
		nh->weight = 1;
		r->nh_count = 1;
		r->nh = nh;
	}
	rt->line[rt->n] = line;
	rt->n++;
	return 0;
}

static int
routes_parse_addr(const char *s, union fib_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (strchr(s, ':'))
		return inet_pton(AF_INET6, s, a->b) == 1 ? AF_INET6 : 0;
	return inet_pton(AF_INET, s, a->b) == 1 ? AF_INET : 0;
}

int
routes_parse_line(struct routes *rt, const char *s, uint32_t line, char *err, size_t errlen)
{
	char pfx[64], nh[64], extra[2];
	int family, gw_family = 0, n, ret;
	union fib_addr dst, gw;
	char *slash, *end;
	unsigned long plen;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == 0 || *s == '#' || *s == '\n' || *s == '\r')
		return 0;
	n = sscanf(s, "%63s %63s %1s", pfx, nh, extra);
	if (n < 1 || n > 2) {
		snprintf(err, errlen, "expected PREFIX/LEN NEXTHOP");
		return -EINVAL;
	}
	slash = strchr(pfx, '/');
	if (!slash) {
		snprintf(err, errlen, "missing /LEN in '%s'", pfx);
		return -EINVAL;
	}
	*slash = 0;
	family = routes_parse_addr(pfx, &dst);
	if (!family) {
		snprintf(err, errlen, "bad address '%s'", pfx);
		return -EINVAL;
	}
	errno = 0;
	plen = strtoul(slash + 1, &end, 10);
	if (errno || end == slash + 1 || *end || plen > routes_alen(family) * 8) {
		snprintf(err, errlen, "bad prefix length '%s'", slash + 1);
		return -EINVAL;
	}
	if (n == 2 && strcmp(nh, "-") != 0) {
		gw_family = routes_parse_addr(nh, &gw);
		if (!gw_family) {
			snprintf(err, errlen, "bad next hop '%s'", nh);
			return -EINVAL;
		}
	}
	if (rt->family && rt->family != family) {
		snprintf(err, errlen, "%s is not of the file's family", pfx);
		return -EINVAL;
	}
	ret = routes_add(rt, family, &dst, plen, gw_family, &gw, line);
	if (ret == -EINVAL)
		snprintf(err, errlen, "host bits set in %s/%lu", pfx, plen);
	else if (ret < 0)
		snprintf(err, errlen, "%s", strerror(-ret));
	return ret;
}

int
routes_read(struct routes *rt, const char *path, char *err, size_t errlen)
{
	char buf[512], msg[256];
	uint32_t line = 0;
	gzFile f;
	int ret = 0;

	f = gzopen(path, "rb");
	if (!f) {
		ret = errno ? -errno : -ENOMEM;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	gzbuffer(f, 1 << 17);
	while (gzgets(f, buf, sizeof(buf))) {
		size_t len = strlen(buf);

		line++;
		if (len == sizeof(buf) - 1 && buf[len - 1] != '\n') {
			snprintf(err, errlen, "%s:%u: line too long", path, line);
			ret = -EINVAL;
			break;
		}
		while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			buf[--len] = 0;
		ret = routes_parse_line(rt, buf, line, msg, sizeof(msg));
		if (ret < 0) {
			snprintf(err, errlen, "%s:%u: %s", path, line, msg);
			break;
		}
	}
	if (!ret && !gzeof(f)) {
		int zerr;

		snprintf(err, errlen, "%s: read error: %s", path, gzerror(f, &zerr));
		ret = -EIO;
	}
	gzclose(f);
	return ret;
}

const char *
routes_prefix_str(const struct routes *rt, size_t i, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(rt->family, rt->r[i].dst.b, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, rt->r[i].plen);
	return buf;
}

int
routes_write(const struct routes *rt, FILE *f)
{
	char p[64], g[INET6_ADDRSTRLEN];

	for (size_t i = 0; i < rt->n; i++) {
		const struct fib_route *r = &rt->r[i];

		if (r->nh_count)
			inet_ntop(r->nh[0].gw_family, r->nh[0].gw.b, g, sizeof(g));
		else
			strcpy(g, "-");
		if (fprintf(f, "%s %s\n", routes_prefix_str(rt, i, p, sizeof(p)), g) < 0)
			return -EIO;
	}
	return fflush(f) ? -EIO : 0;
}

int
routes_cmp(const struct fib_route *a, const struct fib_route *b)
{
	int c = memcmp(a->dst.b, b->dst.b, a->family == AF_INET ? 4 : 16);

	if (c)
		return c;
	return (int)a->plen - (int)b->plen;
}

static uint64_t
routes_hash(const union fib_addr *a, unsigned plen)
{
	uint64_t x, y, h;

	memcpy(&x, a->b, 8);
	memcpy(&y, a->b + 8, 8);
	h = (x * 0x9e3779b97f4a7c15ULL) ^ (y + 0xbf58476d1ce4e5b9ULL * (plen + 1));
	h ^= h >> 29;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 32);
}

int
routes_index_build(struct routes_index *ix, const struct routes *rt)
{
	size_t size = 16;

	while (size < rt->n * 2)
		size *= 2;
	ix->slot = calloc(size, sizeof(*ix->slot));
	if (!ix->slot)
		return -ENOMEM;
	ix->mask = size - 1;
	ix->rt = rt;
	for (size_t i = 0; i < rt->n; i++) {
		size_t h = routes_hash(&rt->r[i].dst, rt->r[i].plen) & ix->mask;

		for (;; h = (h + 1) & ix->mask) {
			uint32_t s = ix->slot[h];

			if (!s) {
				ix->slot[h] = i + 1;
				break;
			}
			/* a duplicate prefix keeps its first line, as fib_load */
			if (rt->r[s - 1].plen == rt->r[i].plen &&
			    !memcmp(rt->r[s - 1].dst.b, rt->r[i].dst.b, 16))
				break;
		}
	}
	return 0;
}

long
routes_index_find(const struct routes_index *ix, const union fib_addr *addr, unsigned plen)
{
	union fib_addr a;
	size_t h;

	/* rt routes hold zeros past the family's length; so must the key */
	memset(&a, 0, sizeof(a));
	memcpy(a.b, addr->b, ix->rt->family == AF_INET ? 4 : 16);
	for (h = routes_hash(&a, plen) & ix->mask; ix->slot[h]; h = (h + 1) & ix->mask) {
		const struct fib_route *r = &ix->rt->r[ix->slot[h] - 1];

		if (r->plen == plen && !memcmp(r->dst.b, a.b, 16))
			return ix->slot[h] - 1;
	}
	return -1;
}

void
routes_index_free(struct routes_index *ix)
{
	free(ix->slot);
	ix->slot = NULL;
}

const char *
routes_shared_dir(char *buf, size_t len)
{
	const char *env = getenv("FIBD_SHARED");
	struct stat st;

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else
		snprintf(buf, len, "%s/../shared/data", TOP_SRCDIR);
	if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode))
		return NULL;
	return buf;
}

const char *
routes_shared_file(const char *name, char *buf, size_t len)
{
	char dir[4096];
	struct stat st;

	if (!routes_shared_dir(dir, sizeof(dir)))
		return NULL;
	snprintf(buf, len, "%s/%s", dir, name);
	if (stat(buf, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	return buf;
}
