/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: libFuzzer target for the rule, address and link parsers
 * (daemon/nl_policy.c)
 *
 * The input is a stream of netlink messages, parsed as fibd parses a
 * receive buffer: rule messages through nl_rule_parse, address messages
 * through nl_ifaddr_parse, link (and any other) messages through
 * nl_link_parse. If the first header does not describe a valid message,
 * the whole input is used as one message whose nlmsg_len is forced to
 * the input size, and its type is taken from the input's first byte (a
 * rule, an address or a link message), so the fuzzer reaches each
 * attribute parser without learning lengths first.
 *
 * Invariants on every accepted message: a rejection carries a reason
 * below NL_ERR_COUNT; a rule has family AF_INET or AF_INET6, prefix
 * lengths within it, a known action, goto exactly with a goto priority
 * source (the action), NUL-terminated names shorter than IF_NAMESIZE and
 * an ordered uid range; an address has a family, a prefix length within
 * it and an interface; a link has an ifindex and a non-empty name.
 *
 * Build and run: tests/fuzz/run-nl-policy-fuzz.sh (`make fuzz-nl-policy`);
 * seeds: tests/fuzz/nl_policy_corpus (tests/fuzz/make-nl-policy-seeds.sh).
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "daemon/nl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned
nl_pfuzz_width(int family)
{
	return family == AF_INET ? 32 : 128;
}

static void
nl_pfuzz_rule(const struct nlmsghdr *nlh)
{
	struct nl_rule nr;
	enum nl_err err = NL_ERR_COUNT;
	int ret = nl_rule_parse(nlh, &nr, &err);
	const struct fib_rule *r = &nr.r;

	if (ret == -EINVAL) {
		assert(err < NL_ERR_COUNT);
		return;
	}
	assert(ret == NL_OK || ret == NL_SKIP);
	if (ret == NL_SKIP)
		return;
	assert(r->family == AF_INET || r->family == AF_INET6);
	assert(r->src_len <= nl_pfuzz_width(r->family));
	assert(r->dst_len <= nl_pfuzz_width(r->family));
	assert(r->action == FIB_RULE_TO_TBL || r->action == FIB_RULE_GOTO ||
	       r->action == FIB_RULE_NOP || r->action == FIB_RULE_BLACKHOLE ||
	       r->action == FIB_RULE_UNREACHABLE || r->action == FIB_RULE_PROHIBIT);
	assert(strnlen(r->iifname, IF_NAMESIZE) < IF_NAMESIZE);
	assert(strnlen(r->oifname, IF_NAMESIZE) < IF_NAMESIZE);
	assert(r->uid_lo <= r->uid_hi || (r->uid_lo == 1 && r->uid_hi == 0));
	assert(r->sport_lo <= r->sport_hi && r->dport_lo <= r->dport_hi);
	assert(!(r->flags & FIB_RULE_DSCP) || r->tos <= 63);
	assert(!(r->flags & ~(uint32_t)(FIB_RULE_INVERT | FIB_RULE_DSCP)));
}

static void
nl_pfuzz_addr(const struct nlmsghdr *nlh)
{
	struct nl_ifaddr na;
	enum nl_err err = NL_ERR_COUNT;
	int ret = nl_ifaddr_parse(nlh, &na, &err);

	if (ret == -EINVAL) {
		assert(err < NL_ERR_COUNT);
		return;
	}
	assert(ret == NL_OK);
	assert(na.a.family == AF_INET || na.a.family == AF_INET6);
	assert(na.a.plen <= nl_pfuzz_width(na.a.family));
	assert(na.a.ifindex != 0);
	assert(strnlen(na.label, IF_NAMESIZE) < IF_NAMESIZE);
}

static void
nl_pfuzz_link(const struct nlmsghdr *nlh)
{
	struct nl_link nk;
	enum nl_err err = NL_ERR_COUNT;
	int ret = nl_link_parse(nlh, &nk, &err);

	if (ret == -EINVAL) {
		assert(err < NL_ERR_COUNT);
		return;
	}
	assert(ret == NL_OK || ret == NL_SKIP);
	if (ret == NL_SKIP)
		return;
	assert(nk.l.ifindex != 0 && nk.l.ifindex <= INT32_MAX);
	assert(nk.l.name[0] && strnlen(nk.l.name, IF_NAMESIZE) < IF_NAMESIZE);
	assert(strnlen(nk.kind, sizeof(nk.kind)) < sizeof(nk.kind));
}

static void
nl_pfuzz_one(const struct nlmsghdr *nlh)
{
	switch (nlh->nlmsg_type) {
	case RTM_NEWRULE:
	case RTM_DELRULE:
		nl_pfuzz_rule(nlh);
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		nl_pfuzz_addr(nlh);
		break;
	default:
		nl_pfuzz_link(nlh);
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t types[] = { RTM_NEWRULE, RTM_DELRULE, RTM_NEWADDR,
					  RTM_DELADDR, RTM_NEWLINK, RTM_DELLINK };
	uint32_t *buf;
	const struct nlmsghdr *nlh;
	int len;

	if (size < sizeof(struct nlmsghdr) || size > 1 << 16)
		return 0;
	buf = malloc((size + 3) & ~(size_t)3); /* aligned, as a receive buffer */
	if (!buf)
		abort();
	memcpy(buf, data, size);
	nlh = (const struct nlmsghdr *)buf;
	len = (int)size;
	if (!nl_msg_ok(nlh, len)) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		h->nlmsg_len = (uint32_t)size;
		h->nlmsg_type = types[data[0] % (sizeof(types) / sizeof(types[0]))];
		nl_pfuzz_one(nlh);
	} else {
		for (; nl_msg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len))
			nl_pfuzz_one(nlh);
	}
	free(buf);
	return 0;
}
