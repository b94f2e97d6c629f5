/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: nl, rtnetlink messages to struct fib_route
 *
 * The edge where netlink ends (doc/style.md, item 4): nl_route_parse validates
 * every attribute of an RTM_NEWROUTE/RTM_DELROUTE message and fills a
 * struct nl_route (a struct fib_route plus room for its next hops), or
 * rejects the whole message with a reason. Nothing is applied here: the
 * caller gets a complete route or nothing, so a malformed message can
 * never leave half a route in the FIB.
 *
 * Next-hop objects (RTM_NEWNEXTHOP, `ip nexthop`) live in a struct
 * nl_nhtab: a hash of id -> single path, blackhole or group of member ids
 * with weights. A route with RTA_NH_ID keeps nh_id and gets its paths from
 * the table, unless the kernel also sent them expanded
 * (net.ipv4.nexthop_compat_mode=1), in which case those are used as sent.
 *
 * A resilient group (`type resilient buckets N`) also holds its bucket
 * table: which member each bucket holds is kernel state, learnt from
 * RTM_NEWNEXTHOPBUCKET messages (a dump of RTM_GETNEXTHOPBUCKET; the
 * kernel sends no event when it migrates buckets). Once every bucket is
 * known, a route through the group carries it as its bucket -> path map
 * (fib_route.res_map, pointing into the table: valid until the table
 * changes, so the caller copies it or hands it to the FIB at once).
 *
 * Rules, addresses and links (RTM_NEWRULE, RTM_NEWADDR, RTM_NEWLINK and
 * their deletions) become fib/policy.h's struct fib_rule, fib_ifaddr and
 * fib_link in daemon/nl_policy.c, with the same whole-message rejection.
 *
 * No I/O, no logging, no globals: counters and reasons go back to the
 * caller (daemon/ingest_event.c), which logs them rate-limited.
 */
#ifndef DAEMON_NL_H
#define DAEMON_NL_H

#include <stdint.h>
#include <net/if.h>
#include <linux/netlink.h>

#include "fib/fib.h"
#include "fib/policy.h"

/* More paths than this in one route is rejected (the kernel allows more,
 * but no BGP daemon installs them). */
#define NL_NH_MAX 256

/* Why a message was rejected. */
enum nl_err {
	NL_ERR_TRUNC = 0,  /* message or attribute shorter than its header says */
	NL_ERR_FAMILY,     /* not AF_INET / AF_INET6, or address of the wrong size */
	NL_ERR_PLEN,       /* prefix length beyond the family's width */
	NL_ERR_ATTR,       /* known attribute with a bad length */
	NL_ERR_MULTIPATH,  /* malformed RTA_MULTIPATH */
	NL_ERR_NH_MAX,     /* more than NL_NH_MAX paths */
	NL_ERR_VIA,        /* malformed RTA_VIA */
	NL_ERR_NH_ID,      /* RTA_NH_ID unknown to the next-hop table */
	NL_ERR_NHMSG,      /* malformed RTM_NEWNEXTHOP */
	NL_ERR_RULE,       /* rule the kernel would refuse: action, goto, address, range */
	NL_ERR_IFNAME,     /* interface name not a NUL-terminated string of 1..15 bytes */
	NL_ERR_IFADDR,     /* address message without an address or an interface */
	NL_ERR_LINK,       /* link message without ifindex or name, or bad IFLA_LINKINFO */
	NL_ERR_NHBUCKET,   /* malformed RTM_NEWNEXTHOPBUCKET, or one naming no bucket of a
			    * known resilient group or no member of it */
	NL_ERR_COUNT
};

/* Name of a reason, for logs and counters ("trunc", "family", ...). */
const char *nl_err_name(unsigned err);

/* Parse results other than an error. */
#define NL_OK 0
#define NL_SKIP 1 /* valid but not for the FIB: cloned, multicast, anycast... */

struct nl_route {
	struct fib_route r; /* r.nh points at nh[] */
	struct fib_nh nh[NL_NH_MAX];
	uint16_t msg_type;  /* RTM_NEWROUTE or RTM_DELROUTE */
	uint16_t msg_flags; /* nlmsg_flags: NLM_F_REPLACE, NLM_F_APPEND, ... */
	uint32_t unknown_attrs; /* attributes this parser does not know, ignored */
	uint16_t unknown_type;  /* the last of them, for the log */
	uint8_t nh_resolved; /* paths came from the next-hop table */
	uint8_t res_incomplete; /* a resilient group whose buckets are not all known
				 * yet: r carries no bucket map (hash-threshold meanwhile) */
};

struct nl_nhtab;

/*
 * mnl_nlmsg_ok without its signed comparison: libmnl casts nlmsg_len to
 * int, so a length of 0xffffffff passes and mnl_nlmsg_next() then stops
 * advancing. Every receive loop uses this. Context: any.
 */
static inline int
nl_msg_ok(const struct nlmsghdr *nlh, int len)
{
	return len >= (int)sizeof(*nlh) && nlh->nlmsg_len >= sizeof(*nlh) &&
	       nlh->nlmsg_len <= (unsigned)len;
}

/*
 * Parse one route message, which must lie inside its buffer (nl_msg_ok). nht may be NULL (RTA_NH_ID without expanded
 * paths then fails with NL_ERR_NH_ID). Returns NL_OK, NL_SKIP, or -EINVAL
 * with *err set. Context: any; out is the caller's.
 */
int nl_route_parse(const struct nlmsghdr *nlh, const struct nl_nhtab *nht, struct nl_route *out,
		   enum nl_err *err);

/* Context: owner (the main loop). NULL on ENOMEM. */
struct nl_nhtab *nl_nhtab_new(void);
void nl_nhtab_free(struct nl_nhtab *t);
/* Forget every object (before a fresh dump). */
void nl_nhtab_clear(struct nl_nhtab *t);
size_t nl_nhtab_count(const struct nl_nhtab *t);

/*
 * Apply an RTM_NEWNEXTHOP or RTM_DELNEXTHOP message. Returns 0 (*changed
 * set when an existing object was replaced or deleted: routes using it may
 * have changed without a route notification), NL_SKIP for other messages,
 * -EINVAL with *err, or -ENOMEM.
 */
int nl_nhtab_msg(struct nl_nhtab *t, const struct nlmsghdr *nlh, int *changed, enum nl_err *err);

/*
 * Apply an RTM_NEWNEXTHOPBUCKET message (one bucket of a resilient group).
 * Returns 0 (*changed set when the bucket's member is new or differs:
 * routes through the group need their bucket map again), NL_SKIP for
 * other messages, or -EINVAL with *err (NL_ERR_NHBUCKET: malformed, or
 * not a bucket of a known resilient group, or not one of its members).
 */
int nl_nhtab_bucket_msg(struct nl_nhtab *t, const struct nlmsghdr *nlh, int *changed,
			enum nl_err *err);
/* Resilient groups in the table (the daemon re-dumps their buckets on a
 * timer while there is one). */
size_t nl_nhtab_res_count(const struct nl_nhtab *t);

/*
 * Expand object id into at most max paths. Returns the number of paths
 * (0 for a blackhole object, with *blackhole set), -ENOENT or -E2BIG.
 */
int nl_nhtab_resolve(const struct nl_nhtab *t, uint32_t id, struct fib_nh *nh, unsigned max,
		     int *blackhole);

/* A rule message (daemon/nl_policy.c). */
struct nl_rule {
	struct fib_rule r;
	uint16_t msg_type;      /* RTM_NEWRULE or RTM_DELRULE */
	uint16_t unknown_type;  /* the last unknown attribute, for the log */
	uint32_t unknown_attrs; /* selectors struct fib_rule cannot hold, ignored */
};

/* An address message. */
struct nl_ifaddr {
	struct fib_ifaddr a;
	uint16_t msg_type; /* RTM_NEWADDR or RTM_DELADDR */
	char label[IF_NAMESIZE]; /* IFA_LABEL, "" without */
};

/* A link message. */
struct nl_link {
	struct fib_link l;
	uint16_t msg_type; /* RTM_NEWLINK or RTM_DELLINK */
	char kind[16];     /* IFLA_INFO_KIND ("vrf", "veth", ...), "" without */
};

/*
 * Parse one rule, address or link message (inside its buffer: nl_msg_ok).
 * Returns NL_OK, NL_SKIP (a multicast routing rule; a link message of
 * another family, such as a bridge port's), or -EINVAL with *err set;
 * on -EINVAL out holds nothing usable. Context: any; out is the caller's.
 */
int nl_rule_parse(const struct nlmsghdr *nlh, struct nl_rule *out, enum nl_err *err);
int nl_ifaddr_parse(const struct nlmsghdr *nlh, struct nl_ifaddr *out, enum nl_err *err);
int nl_link_parse(const struct nlmsghdr *nlh, struct nl_link *out, enum nl_err *err);

#endif
