/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the policy snapshot shared by fib/policy.c and fib/resolve.c
 *
 * One struct fib_policy per family, immutable once published, in one
 * block of pool memory (retired whole through fib/reclaim.h):
 *
 *   struct fib_policy | rules[nrules] | links[nlinks] | addrs[naddrs]
 *     rules: sorted by priority, equal priorities in insertion order; each
 *            with its devices resolved to ifindexes and its goto target
 *            resolved to an index (the kernel's ctarget)
 *     links: sorted by ifindex
 *     addrs: this family's, sorted by ifindex, then in the kernel's list
 *            order (IPv4: primaries by scope, host first)
 */
#ifndef FIB_POLICY_PRIV_H
#define FIB_POLICY_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "fib/fib_priv.h"
#include "fib/policy.h"

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000 /* linux/if.h: carrier */
#endif

#define POLICY_NOIF UINT32_MAX  /* a rule's device that does not exist */
#define POLICY_NOJUMP UINT32_MAX /* a goto without a target rule */
#define POLICY_LOOPBACK 1u      /* the kernel's LOOPBACK_IFINDEX */

struct policy_rule {
	struct fib_rule r;
	uint32_t iif, oif; /* 0 any, POLICY_NOIF never */
	uint32_t jump;     /* FIB_RULE_GOTO: index of the target rule */
};

struct fib_policy {
	size_t size; /* of the whole block, for the retire */
	uint64_t gen;
	uint8_t family, is_default;
	uint8_t all_up; /* every link up with carrier: no path can be dead */
	/*
	 * IPv4: the kernel's fib_has_custom_rules. Until a rule other than
	 * the defaults is added, the kernel keeps the local table merged into
	 * main and answers table main (254) for local and broadcast routes;
	 * the first custom rule sets it for good (fib4_rule_configure), so
	 * even after every custom rule is deleted it answers local (255).
	 * fibd sees only the rules published since it started: a fibd started
	 * after custom rules were added and removed again answers 254 where
	 * the kernel answers 255, and a rule added and deleted between two
	 * publishes is not seen. IPv6 never merges: always 1.
	 */
	uint8_t custom_rules;
	uint32_t nrules, nlinks, naddrs;
	struct fib_mp_hash hash;
	const struct policy_rule *rules;
	const struct fib_link *links;
	const struct fib_ifaddr *addrs;
	/* inet_select_addr's last resort outside any VRF (every device in
	 * ifindex order) for scopes universe, link, host; host order, 0 none */
	uint32_t fallback4[3];
	/*
	 * IPv4: the source inet_select_addr picks on a device whatever the
	 * gateway (the device has one primary address of the scope), by
	 * ifindex below nsrc4, for routes of scope universe [0] and link
	 * [1]; network order, 0: ask inet_select_addr. The kernel keeps it
	 * per next hop (nh_saddr); here one snapshot serves every route.
	 */
	uint32_t nsrc4;
	const uint32_t (*src4)[2];
};

/* devices of ifindex at most this get a src4 entry */
#define POLICY_SRC4_MAX 4096u

static inline int
policy_fidx(int family)
{
	return family == AF_INET6;
}

/* The link of ifindex in p, NULL if unknown. Context: reader. */
const struct fib_link *policy_link(const struct fib_policy *p, uint32_t ifindex);
/* The first address of ifindex in p and how many follow it. */
const struct fib_ifaddr *policy_addrs(const struct fib_policy *p, uint32_t ifindex, size_t *n);

/* inet_select_addr's last step: the first device of VRF master (0: none)
 * in ifindex order with an address of scope. Context: reader; or the
 * writer on a snapshot it builds. */
uint32_t policy_select_fallback4(const struct fib_policy *p, uint32_t master, int scope);
/* The address of ifindex that inet_select_addr picks for scope whatever
 * the gateway (host order), 0 when the gateway or another device decides.
 * Context: the writer, on a snapshot it builds. */
uint32_t policy_dev_only_addr4(const struct fib_policy *p, uint32_t ifindex, int scope);

/* fib.c's hooks: the policy's part of fib_new and fib_free. */
int policy_init(struct fib *fib);
void policy_fini(struct fib *fib);

/*
 * The local-table filter, kept by fib.c's route calls (Context: writer):
 * a route of table 255 is noted before it is added and forgotten after it
 * is deleted, so a reader never misses one that is in the trie.
 */
#define POLICY_TABLE_LOCAL 255u
#define POLICY_TABLE_DEFAULT 253u
void localf_note_add(struct fib *fib, const struct fib_route *r);
void localf_note_del(struct fib *fib, const struct fib_route *r);
void localf_reset(struct fib *fib, int family);
/* The filter's hash of an address's /24 (IPv4) or /64 (IPv6): 12 bits */
static inline unsigned
localf_hash(int family, unsigned __int128 key)
{
	uint64_t x = family == AF_INET ? (uint64_t)(key >> (32 - LOCALF_GRAIN4))
				       : (uint64_t)(key >> (128 - LOCALF_GRAIN6));

	return (unsigned)((x * 0x9e3779b97f4a7c15ull) >> 52);
}

/* localf_maybe of an IPv4 address, host order */
static inline int
localf_maybe4(const struct localf *f, uint32_t key)
{
	unsigned h = localf_hash(AF_INET, key);
	unsigned top = key >> 24;

	return ((__atomic_load_n(&f->bits[h / 64], __ATOMIC_RELAXED) >> (h % 64)) |
		(__atomic_load_n(&f->top[top / 64], __ATOMIC_RELAXED) >> (top % 64))) & 1;
}

/* May dst (IPv4: host order in the low 32 bits; IPv6: the trie key) be
 * in the local table? Never "no" for an address under a local route.
 * Context: reader. */
static inline int
localf_maybe(const struct localf *f, int family, unsigned __int128 key)
{
	unsigned h, top;

	if (family == AF_INET)
		return localf_maybe4(f, (uint32_t)key);
	h = localf_hash(family, key);
	top = (unsigned)(key >> 120);
	return ((__atomic_load_n(&f->bits[h / 64], __ATOMIC_RELAXED) >> (h % 64)) |
		(__atomic_load_n(&f->top[top / 64], __ATOMIC_RELAXED) >> (top % 64))) & 1;
}

#endif
