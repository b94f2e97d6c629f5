/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: libfib policy and resolution: the kernel's whole answer to a flow
 *
 * A struct fib holds, besides its routes, what the kernel reads to route a
 * flow: the policy rules (`ip rule`), the links (name, up, carrier, VRF
 * master, group), the interface addresses (for the source address) and
 * the multipath hash settings (sysctls). fib_resolve_rcu walks them as
 * ip_route_output_key / ip_route_input and fib6_rule_lookup do, and
 * answers with a struct fib_decision: the result type or the kernel's
 * error, the table, the rule, the matched prefix, the chosen path and the
 * preferred source (doc/decisions.md, sections 1 to 3).
 *
 * The writer edits a private staging copy with the calls below, then
 * fib_policy_publish() builds one immutable snapshot per family and
 * publishes it with one pointer store; the old snapshot is retired
 * through the FIB's batched reclamation. Readers see the last published
 * snapshot. A FIB starts with the kernel's default rules of both families
 * (local 0, main 32766, default 32767; IPv6: local 0, main 32766)
 * published, no links, no addresses and the default hash settings.
 *
 * Threads: the edit calls and fib_policy_publish are Context: writer; the
 * resolve calls are Context: reader (between fib_read_lock and
 * fib_read_unlock); the decision's info pointer is valid until
 * fib_read_unlock().
 *
 * Errors: 0 or -errno (-EINVAL, -EEXIST, -ENOENT, -ENOMEM); on error
 * nothing changed.
 */
#ifndef FIB_POLICY_H
#define FIB_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <net/if.h>

#include "fib/fib.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rule actions, numbered as the kernel's FR_ACT_*. */
enum fib_rule_action {
	FIB_RULE_TO_TBL = 1,
	FIB_RULE_GOTO = 2,
	FIB_RULE_NOP = 3,
	FIB_RULE_BLACKHOLE = 6,
	FIB_RULE_UNREACHABLE = 7,
	FIB_RULE_PROHIBIT = 8,
};

/* fib_rule.flags, as the kernel's FIB_RULE_* where they exist. */
#define FIB_RULE_INVERT 0x02 /* `not` */
#define FIB_RULE_DSCP 0x100  /* tos holds a DSCP (FRA_DSCP), not a TOS */

/*
 * One policy rule, as `ip rule` shows it. Zero/empty selectors match
 * anything; ports ranges with hi == 0 match any port; uid range
 * uid_lo > uid_hi (the default: 1, 0) matches any uid.
 * iifname/oifname are matched against the flow's iif/oif through the
 * links (a rule naming a device that does not exist matches nothing, as
 * the kernel's detached rules). For output flows (no iif), the kernel's
 * iif is the loopback device, so `iif lo` matches locally generated
 * traffic.
 */
struct fib_rule {
	uint8_t family;    /* AF_INET or AF_INET6 */
	uint8_t action;    /* enum fib_rule_action */
	uint8_t src_len, dst_len;
	uint8_t tos;       /* TOS, or DSCP with FIB_RULE_DSCP; 0 any */
	uint8_t ipproto;   /* 0 any */
	uint8_t l3mdev;    /* table = the flow's VRF table */
	uint8_t pad_;
	uint32_t flags;    /* FIB_RULE_INVERT, FIB_RULE_DSCP */
	uint32_t priority;
	uint32_t table;    /* FIB_RULE_TO_TBL */
	uint32_t goto_prio; /* FIB_RULE_GOTO: priority of the target rule */
	uint32_t mark, mark_mask; /* mask 0: mark not matched */
	int32_t suppress_prefixlen; /* -1 none */
	int32_t suppress_ifgroup;   /* -1 none */
	uint32_t uid_lo, uid_hi;
	uint16_t sport_lo, sport_hi, dport_lo, dport_hi;
	uint8_t protocol;  /* RTPROT_* of the rule's creator, kept for show */
	char iifname[IF_NAMESIZE], oifname[IF_NAMESIZE];
	union fib_addr src, dst;
};

/* Fill r with "matches everything, lookup main, priority 0". Context: any. */
void fib_rule_init(struct fib_rule *r, int family);

/*
 * Add a rule after the rules of equal priority (as the kernel); -EEXIST
 * if an identical rule exists. fib_rule_del removes the first rule equal
 * to r in every field (the kernel's delete match). fib_rule_flush removes
 * every rule of a family (AF_UNSPEC: both), default ones included.
 * Context: writer.
 */
int fib_rule_add(struct fib *fib, const struct fib_rule *r);
int fib_rule_del(struct fib *fib, const struct fib_rule *r);
void fib_rule_flush(struct fib *fib, int family);

/* A link (RTM_NEWLINK). flags: IFF_UP, IFF_LOWER_UP (carrier), ... */
struct fib_link {
	uint32_t ifindex;
	uint32_t flags;
	uint32_t master;    /* ifindex of the VRF (or other master), 0 none */
	uint32_t group;     /* IFLA_GROUP */
	uint32_t vrf_table; /* a VRF device's own table, 0 not a VRF */
	char name[IF_NAMESIZE];
};
/* Add or replace by ifindex; fib_link_del also drops its addresses. */
int fib_link_set(struct fib *fib, const struct fib_link *l);
int fib_link_del(struct fib *fib, uint32_t ifindex);

/* An interface address (RTM_NEWADDR). flags: IFA_F_* (secondary,
 * tentative, deprecated, ...). scope: RT_SCOPE_*. */
struct fib_ifaddr {
	uint8_t family, plen, scope, pad_;
	uint32_t flags;
	uint32_t ifindex;
	union fib_addr addr;
};
/* Add or replace by (family, ifindex, addr, plen); del by the same key. */
int fib_ifaddr_add(struct fib *fib, const struct fib_ifaddr *a);
int fib_ifaddr_del(struct fib *fib, const struct fib_ifaddr *a);

/* Multipath hash settings, from sysctls (they have no netlink events). */
struct fib_mp_hash {
	uint8_t policy4, policy6;  /* fib_multipath_hash_policy: 0 L3, 1 L4, 2 L3 inner, 3 custom */
	uint8_t seed_set;          /* fib_multipath_hash_seed pinned: the kernel's path is reproduced */
	uint8_t pad_;
	uint32_t fields4, fields6; /* fib_multipath_hash_fields (policy 3) */
	uint32_t seed;
	uint8_t forwarding4, forwarding6; /* all.forwarding: input flows are forwarded */
	uint8_t ignore_linkdown4, ignore_linkdown6; /* ignore_routes_with_linkdown */
};
void fib_mp_hash_default(struct fib_mp_hash *h);
int fib_mp_hash_set(struct fib *fib, const struct fib_mp_hash *h);

/* Build and publish the snapshots if anything changed since the last
 * publish; retire the old ones. Context: writer. */
int fib_policy_publish(struct fib *fib);

/* Bumped by every publish that changed something. Context: any. */
uint64_t fib_policy_generation(const struct fib *fib);
/* Rules of the published snapshot, in order, into out (at most max);
 * returns how many there are. Context: reader, or the writer. */
size_t fib_rules_get(const struct fib *fib, int family, struct fib_rule *out, size_t max);
/* Links and addresses of the published snapshot, same convention. */
size_t fib_links_get(const struct fib *fib, struct fib_link *out, size_t max);
size_t fib_ifaddrs_get(const struct fib *fib, struct fib_ifaddr *out, size_t max);
/* 1 when the published rules of family are the kernel's defaults, the
 * fast path of fib_resolve_rcu. Context: any. */
int fib_policy_is_default(const struct fib *fib, int family);

/* The flow, what `ip route get` takes. */
#define FIB_FLOW_SRC 0x01      /* src given (`from`) */
#define FIB_FLOW_IIF 0x02      /* iif given: an input (forwarded) flow */
#define FIB_FLOW_OIF 0x04
#define FIB_FLOW_UID 0x08
#define FIB_FLOW_FIBMATCH 0x10 /* the matched route only (`fibmatch`) */
#define FIB_FLOW_DSCP 0x20     /* tos holds a DSCP (`dscp`), not a TOS */

struct fib_flow {
	uint8_t family;  /* AF_INET, AF_INET6 */
	uint8_t tos;     /* the kernel's tos byte, or DSCP with FIB_FLOW_DSCP */
	uint8_t ipproto; /* 0 any */
	uint8_t flags;   /* FIB_FLOW_* */
	uint32_t iif, oif; /* ifindex; 0 none */
	uint32_t mark;
	uint32_t uid;
	uint16_t sport, dport; /* host order */
	uint32_t flowlabel;    /* IPv6, host order, 20 bits */
	union fib_addr dst, src;
};

/* fib_decision.flags */
#define FIB_D_RULE 0x01 /* rule holds the priority of the deciding rule */
#define FIB_D_SRC 0x02  /* src holds the preferred source */
#define FIB_D_ROUTE 0x04 /* a route matched: prefix, plen, table, info valid */

/*
 * The decision. error is 0 or the kernel's positive errno: ENETUNREACH
 * (no rule matched, every table missed, an `unreachable` rule, an oif
 * that is down), EHOSTUNREACH (an unreachable route, both families: the
 * kernel's fib_props and fib6_prop; or an input flow on a host that does
 * not forward), EACCES (prohibit), EINVAL (blackhole, or a malformed
 * flow), ENODEV (an oif the links do not know). type is the matched
 * route's enum fib_type (also set with the route types' errors), 0
 * without a route. path indexes info->nh[] (the chosen path); npaths ==
 * info->nh_count. Without FIB_D_ROUTE, info is NULL: an error, or an
 * IPv4 output flow with an oif whose lookup failed, which the kernel
 * sends on-link out of oif (type FIB_UNICAST, no path).
 * table is the kernel's answer: IPv4 local-table routes answer main
 * (254) until a custom IPv4 rule was published (the kernel's merged
 * local/main tables, fib_has_custom_rules); the on-link answer's table is
 * main. The device `ip route get` prints is the chosen path's, except
 * for local routes: the loopback (the VRF device in a VRF), and for the
 * on-link answer: the flow's oif. The decision holds no device of its
 * own: it fills a 64-byte cache record (cache/flow.c).
 */
struct fib_decision {
	uint8_t family, type, error, plen;
	uint8_t path, npaths, flags, tos;
	uint32_t table;
	uint32_t rule;
	union fib_addr prefix, src;
	const struct fib_info *info; /* valid until fib_read_unlock() */
};

/*
 * Resolve one flow as the kernel would. Returns 0 or -d->error.
 * Context: reader.
 */
int fib_resolve_rcu(const struct fib *fib, const struct fib_flow *fl, struct fib_decision *d);
/* n flows of one family at once; with the default policy the
 * destinations go through the batch lookups. Context: reader. */
void fib_resolve_batch_rcu(const struct fib *fib, const struct fib_flow *fl,
			   struct fib_decision *d, size_t n);

/* "ENETUNREACH" for ENETUNREACH ..., NULL for 0. Context: any. */
const char *fib_errno_name(int err);

#ifdef __cplusplus
}
#endif
#endif
