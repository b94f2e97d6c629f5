/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: route region generations, what a flow cache compares per destination
 *
 * 4096 counters per family, indexed by the top 12 bits of an address
 * (IPv4 /12, IPv6 the top 12 bits of the first 32). Every route change
 * bumps the counters of the regions its prefix covers (one for a /12 or
 * longer, 2^(12 - plen) for a shorter one: a /8 bumps 16, a /0 all
 * 4096); a bulk load, a compaction and a flush bump all of their family.
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
 *     regions.gen[0][4096]  IPv4   uint32_t, bumped by the writer
 *     regions.gen[1][4096]  IPv6
 */
#ifndef FIB_REGIONS_H
#define FIB_REGIONS_H

#include <stdint.h>

#include "fib/fib.h"

#define FIB_REGION_BITS 12
#define FIB_REGIONS (1u << FIB_REGION_BITS)

struct fib_regions {
	uint32_t gen[2][FIB_REGIONS];
};

/* Bump the regions of family covered by dst/plen (writer side; libfib
 * internal). Context: writer. */
void regions_bump(struct fib_regions *rg, int family, const union fib_addr *dst, unsigned plen);
/* Bump every region of family (AF_UNSPEC: both). Context: writer. */
void regions_bump_all(struct fib_regions *rg, int family);

/* The region index of an address (network order, 4 or 16 bytes). */
static inline uint32_t
fib_region_of(const void *addr)
{
	const uint8_t *b = addr;

	return ((uint32_t)b[0] << 4) | (b[1] >> 4);
}

/*
 * The generation of the region holding dst (network order) in family.
 * Acquire: what the writer changed before bumping it is visible to a
 * resolution after this call. Context: any (reader for the meaning).
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
