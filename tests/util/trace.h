/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: trace, lookup traces for tests and benchmarks
 *
 * A trace is an array of addresses in the trace file layout of
 * doc/architecture.md: IPv4 as uint32 in host order (little-endian on
 * disk), IPv6 as 16 bytes in network order. Generators, all deterministic for a seed (see rng.h):
 *
 *   uniform  random 32-bit IPv4 addresses (mostly misses in a BGP table)
 *   routed   a random address inside a random prefix of the table, as
 *            the DPDK reference benchmarks do (every lookup hits)
 *   zipf     FLOWS distinct routed addresses, drawn by a Zipf(1.0) law
 *            (rank k with probability proportional to 1/k), for caches
 */
#ifndef TESTS_UTIL_TRACE_H
#define TESTS_UTIL_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "tests/util/routes.h"

struct trace {
	int family;    /* AF_INET or AF_INET6 */
	size_t n;
	uint32_t *a4;  /* family AF_INET */
	uint8_t (*a6)[16]; /* family AF_INET6 */
};

/* Release the addresses. Context: any. */
void trace_free(struct trace *t);

/*
 * Generators fill t (uninitialised) and return 0, -EINVAL or -ENOMEM.
 * Context: any.
 */
/* n uniform random addresses of the family (IPv6: all 128 bits random). */
int trace_uniform(struct trace *t, int family, size_t n, uint64_t seed);
/* n addresses inside random routes of rt (family of rt); rt->n > 0. */
int trace_routed(struct trace *t, const struct routes *rt, size_t n, uint64_t seed);
/* n draws from flows distinct routed addresses with Zipf(1.0) ranks. */
int trace_zipf(struct trace *t, const struct routes *rt, size_t n, size_t flows, uint64_t seed);

/* Read or write a trace file of a given family. Return 0 or -errno.
 * Context: any. */
int trace_read(struct trace *t, int family, const char *path);
int trace_write(const struct trace *t, const char *path);

#endif
