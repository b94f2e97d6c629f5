/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: libFuzzer target for the route-message parser (daemon/nl.c)
 *
 * The input is a stream of netlink messages, parsed as fibd parses a
 * receive buffer: RTM_NEWNEXTHOP/RTM_DELNEXTHOP and resilient groups'
 * RTM_NEWNEXTHOPBUCKET go into a fresh next-hop table, route messages
 * through nl_route_parse with that table. If the
 * first header does not describe a valid message, the whole input is
 * used as one message whose nlmsg_len is forced to the input size, so
 * the fuzzer reaches the attribute parser without learning lengths
 * first. Invariants checked on every accepted route: family, prefix
 * length, path count, canonical key, and a bucket map whose every bucket
 * names one of the route's paths (the FIB refuses any other).
 *
 * Build and run: tests/fuzz/run-nl-fuzz.sh (clang -fsanitize=fuzzer,address).
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

static struct nl_route nl_fuzz_route;

static void
nl_fuzz_one(struct nl_nhtab *t, const struct nlmsghdr *nlh)
{
	enum nl_err err = NL_ERR_COUNT;
	int changed, ret;

	switch (nlh->nlmsg_type) {
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		ret = nl_nhtab_msg(t, nlh, &changed, &err);
		assert(ret == 0 || ret == NL_SKIP || ret == -ENOMEM || (ret == -EINVAL && err < NL_ERR_COUNT));
		break;
	case RTM_NEWNEXTHOPBUCKET:
		ret = nl_nhtab_bucket_msg(t, nlh, &changed, &err);
		assert(ret == 0 || (ret == -EINVAL && err == NL_ERR_NHBUCKET));
		break;
	default:
		ret = nl_route_parse(nlh, t, &nl_fuzz_route, &err);
		if (ret == -EINVAL) {
			assert(err < NL_ERR_COUNT);
			break;
		}
		assert(ret == NL_OK || ret == NL_SKIP);
		{
			const struct fib_route *r = &nl_fuzz_route.r;
			unsigned alen = r->family == AF_INET ? 4 : 16;

			assert(r->family == AF_INET || r->family == AF_INET6);
			assert(r->plen <= alen * 8);
			assert(r->nh == nl_fuzz_route.nh);
			for (unsigned i = r->plen; i < alen * 8; i++)
				assert(!(r->dst.b[i / 8] & (0x80 >> (i % 8))));
			for (unsigned i = 0; i < r->nh_count; i++)
				assert(r->nh[i].weight >= 1 && r->nh[i].weight <= 65535);
			assert(!r->res_buckets || (r->res_map && r->nh_count));
			for (unsigned i = 0; i < r->res_buckets; i++)
				assert(r->res_map[i] < r->nh_count);
		}
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nl_nhtab *t;
	uint32_t *buf;
	const struct nlmsghdr *nlh;
	int len;

	if (size < sizeof(struct nlmsghdr) || size > 1 << 16)
		return 0;
	t = nl_nhtab_new();
	buf = malloc((size + 3) & ~(size_t)3); /* aligned, as a receive buffer */
	if (!t || !buf)
		abort();
	memcpy(buf, data, size);
	nlh = (const struct nlmsghdr *)buf;
	len = (int)size;
	if (!nl_msg_ok(nlh, len)) {
		((struct nlmsghdr *)buf)->nlmsg_len = (uint32_t)size;
		nl_fuzz_one(t, nlh);
	} else {
		for (; nl_msg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len))
			nl_fuzz_one(t, nlh);
	}
	nl_nhtab_free(t);
	free(buf);
	return 0;
}
