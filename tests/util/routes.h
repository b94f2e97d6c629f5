/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: routes, routes files for tests and benchmarks
 *
 * Reads the routes file format of doc/architecture.md (text or gzip, one route a
 * line, `PREFIX/LEN NEXTHOP`, NEXTHOP may be `-`, one family a file) into
 * an array of struct fib_route ready for fib_load(), keeping for every
 * route the 1-based number of the line it came from (benchmark checksums
 * are sums of line numbers). Every route is unicast in the main table
 * (254), protocol bgp (186), scope universe, with one next hop when the
 * line names one (ifindex 0) and none for `-`.
 *
 *   struct routes: r[i] (struct fib_route) --nh--> nh[i] (or NULL)
 *                  line[i] = line number of r[i]
 *
 * Blank lines and lines starting with '#' are skipped; anything else that
 * does not parse is an error naming the line. Also: where the real
 * tables live (a data directory beside the source tree, or $FIBD_SHARED).
 */
#ifndef TESTS_UTIL_ROUTES_H
#define TESTS_UTIL_ROUTES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fib/fib.h"

#define ROUTES_TABLE 254    /* RT_TABLE_MAIN */
#define ROUTES_PROTOCOL 186 /* RTPROT_BGP */

struct routes {
	int family;         /* AF_INET or AF_INET6, 0 while empty */
	size_t n;           /* routes */
	size_t cap;
	struct fib_route *r;
	struct fib_nh *nh;  /* nh[i] belongs to r[i] */
	uint32_t *line;     /* 1-based source line of r[i] */
};

/* Empty set. Context: any. */
void routes_init(struct routes *rt);
/* Release the arrays; rt is empty again. Context: any. */
void routes_free(struct routes *rt);

/*
 * Append one route with line number line; gw_family 0 for no next hop,
 * else AF_INET or AF_INET6 for gw. The family of the first route fixes the
 * set's family. Returns 0, -EINVAL (other family, bad length, host bits
 * set) or -ENOMEM. Context: any; rt belongs to one thread.
 */
int routes_add(struct routes *rt, int family, const union fib_addr *dst, unsigned plen,
	       int gw_family, const union fib_addr *gw, uint32_t line);

/*
 * Parse one line (without the newline) and append its route; blank and
 * comment lines add nothing. Returns 0 or -EINVAL with a message in err.
 * Context: any.
 */
int routes_parse_line(struct routes *rt, const char *s, uint32_t line, char *err, size_t errlen);

/*
 * Read a whole routes file (plain or gzip). Returns 0, -errno from open
 * or -EINVAL for the first malformed line; err then says
 * "FILE:LINE: what". Context: any.
 */
int routes_read(struct routes *rt, const char *path, char *err, size_t errlen);

/* Write the routes in the file format, in array order. Returns 0 or -EIO.
 * Context: any. */
int routes_write(const struct routes *rt, FILE *f);

/* "a.b.c.d/len" or "x::/len" of route i into buf (>= 64 bytes). Context: any. */
const char *routes_prefix_str(const struct routes *rt, size_t i, char *buf, size_t len);

/* Compare two routes by address then length (file order). Context: any. */
int routes_cmp(const struct fib_route *a, const struct fib_route *b);

/*
 * Map prefixes back to their route index: an open-addressing hash from
 * (prefix, plen) to the first route with that prefix. Build returns 0 or
 * -ENOMEM; the index reads rt, which must outlive it and not change.
 * Context: any; lookups from any number of threads once built.
 */
struct routes_index {
	size_t mask;
	uint32_t *slot; /* route index + 1, 0 = empty */
	const struct routes *rt;
};
int routes_index_build(struct routes_index *ix, const struct routes *rt);
/* Returns the route index or -1. addr in network order. */
long routes_index_find(const struct routes_index *ix, const union fib_addr *addr, unsigned plen);
void routes_index_free(struct routes_index *ix);

/*
 * Where the real tables are: $FIBD_SHARED if set, else the data directory
 * beside the source tree (TOP_SRCDIR/..). Returns buf, or NULL if that directory does
 * not exist. Context: any.
 */
const char *routes_shared_dir(char *buf, size_t len);
/* Full path of a shared file into buf, or NULL if it is not there. */
const char *routes_shared_file(const char *name, char *buf, size_t len);

#endif
