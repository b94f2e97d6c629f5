/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: route region generations, what a flow cache compares per destination
 *
 * Two levels of 65536 counters per family; the generation of a
 * destination is the sum of its coarse and its fine counter.
 *
 *   coarse: the /16 of an IPv4 address; for IPv6 bits 16..31 (what tells
 *           the /32s of the registries' allocations apart: the top 16
 *           bits are a handful of values, 2001, 2400, 2600, 2a00, ...),
 *           XORed with a mix of bits 0..15 so that 2001:db8::/32 and
 *           2a00:db8::/32 fall apart too.
 *   fine:   a hash of the /24 of an IPv4 address, of the /48 of an IPv6
 *           one.
 *
 * A route change bumps, by its prefix length (IPv4 / IPv6):
 *   >= /24 / >= /48    the fine counter of its /24 (/48): one
 *   /16-/23 / /32-/47  the coarse counter of its /16 (/32): one
 *   shorter            the coarse counters of its block, 2^(16 - plen)
 *                      (IPv6 2^(32 - plen); the XOR maps an aligned block
 *                      onto an aligned block): an IPv4 /8 bumps 256
 *   /0 / <= /16        every coarse counter
 * and a bulk load, a compaction and a flush bump every coarse counter of
 * their family. Every destination a prefix covers has its fine or coarse
 * counter bumped; destinations elsewhere keep theirs (bar hash aliases
 * of the fine level, which only cost a refused hit).
 *
 * Why this granularity: a cached decision goes stale with any change of
 * its region, so under a BGP feed the hit rate lost is about (updates/s)
 * x (flows of the region looked up again). 60 % of the IPv4 table are
 * /24s and most of the IPv6 one /48s and /32s; with one level of 4096
 * regions (IPv4 /12, IPv6 the top 12 bits), 1,000 updates/s across the
 * tier-1 tables cost 3-6 % of the IPv4 hits and half of the IPv6 ones
 * (tests/bench/README.md). The counters take 1 MiB (pages touched as
 * used); a hit reads two of them (the hot flows' lines stay in cache).
 *
 * A cache that read the counter of a destination before resolving it and
 * finds it unchanged knows that no route over that destination changed
 * since, so a BGP update stales only the flows under it
 * (doc/decisions.md, section 4).
 *
 * Ordering: the writer bumps AFTER the trie change and before fib_end()
 * releases the change's reclamation batches, with release semantics. A
 * reader that reads the counter (acquire) before resolving either sees
 * the bump, and then the change, or keeps a value the bump will make
 * stale. A reader that still sees the old value after the change is
 * inside a read section that the grace period of the change's retired
 * memory waits for, so what its cached answer points to is still there.
 *
 *   struct fib_ctx
 *     regions.coarse[0][65536], fine[0][65536]  IPv4   uint32_t, bumped by
 *     regions.coarse[1][65536], fine[1][65536]  IPv6   the writer
 */
#ifndef FIB_REGIONS_H
#define FIB_REGIONS_H

#include <stdint.h>
#include <sys/socket.h>

#include "fib/fib.h"

#define FIB_REGION_BITS 16
#define FIB_REGIONS (1u << FIB_REGION_BITS)

struct fib_regions {
	uint32_t coarse[2][FIB_REGIONS];
	uint32_t fine[2][FIB_REGIONS];
};

/* Bump the regions of family covered by dst/plen (writer side; libfib
 * internal). Context: writer. */
void regions_bump(struct fib_regions *rg, int family, const union fib_addr *dst, unsigned plen);
/* Bump every region of family (AF_UNSPEC: both). Context: writer. */
void regions_bump_all(struct fib_regions *rg, int family);

/* The coarse region index of an address of family (network order, 4 or
 * 16 bytes). */
static inline uint32_t
fib_region_of(int family, const void *addr)
{
	const uint8_t *b = addr;
	uint32_t hi = (uint32_t)b[0] << 8 | b[1];

	if (family != AF_INET6)
		return hi;
	/* bits 16..31, XORed with a multiplicative mix of bits 0..15 */
	return ((uint32_t)b[2] << 8 | b[3]) ^ ((hi * 0x9e37u) & 0xffffu);
}

/* The fine region index: a hash of the /24 (IPv4) or the /48 (IPv6). */
static inline uint32_t
fib_region_fine_of(int family, const void *addr)
{
	const uint8_t *b = addr;
	uint64_t x = (uint64_t)b[0] << 16 | (uint64_t)b[1] << 8 | b[2];

	if (family == AF_INET6)
		x = x << 24 | (uint64_t)b[3] << 16 | (uint64_t)b[4] << 8 | b[5];
	return (uint32_t)((x * 0x9e3779b97f4a7c15ull) >> 48);
}

/*
 * The generation of the regions holding dst (network order) in family:
 * the sum of its coarse and fine counters, which moves with any change
 * of a route covering dst. Acquire: what the writer changed before
 * bumping either is visible to a resolution after this call.
 * Context: any (reader for the meaning).
 */
uint32_t fib_region_gen_rcu(const struct fib *fib, int family, const void *dst);


/* The flow fields a policy reads besides family, flags, tos, iif, oif,
 * destination and source (struct fib_keymask.fields). */
#define FIB_KEY_MARK 0x01
#define FIB_KEY_UID 0x02
#define FIB_KEY_SPORT 0x04
#define FIB_KEY_DPORT 0x08
#define FIB_KEY_PROTO 0x10
#define FIB_KEY_FLOWLABEL 0x20
struct fib_keymask {
	uint32_t fields;    /* FIB_KEY_* */
	uint32_t mark_mask; /* the OR of the rules' fwmark masks */
};

/*
 * The generation of the policy snapshot of family published now, read
 * from the snapshot itself: a resolution that starts after this call sees
 * that snapshot or a newer one, whose generation differs.
 * Context: reader.
 */
uint64_t fib_policy_gen_rcu(const struct fib *fib, int family);
/*
 * The fields of a flow that the rules and the multipath hash of the
 * snapshot published now read (doc/decisions.md, section 4: keymask);
 * returns that snapshot's generation. Context: reader.
 */
uint64_t fib_policy_keymask_rcu(const struct fib *fib, int family, struct fib_keymask *m);

#endif
