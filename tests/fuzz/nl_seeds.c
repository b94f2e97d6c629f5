/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: write real rtnetlink messages as fuzz seeds
 *
 * Dumps the next-hop objects and the IPv4 and IPv6 routes of the current
 * network namespace and writes each message to DIR/PREFIX-N, plus one
 * file holding the next-hop dump followed by the routes (so the fuzzer
 * starts with resolvable RTA_NH_ID). Used by tests/fuzz/make-nl-seeds.sh.
 *
 * With "policy" as second argument it dumps the links, the addresses and
 * the IPv4 and IPv6 rules instead (tests/fuzz/make-nl-policy-seeds.sh).
 * With "res" it dumps the next-hop objects, the resilient groups' buckets
 * (RTM_GETNEXTHOPBUCKET) and the routes, into DIR/res-N and DIR/res-all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

static char nl_seeds_all[1 << 20];
static size_t nl_seeds_all_len;
static const char *nl_seeds_prefix = "msg";

static int
nl_seeds_dump(struct mnl_socket *nl, int type, int family, const char *dir, int *n)
{
	static char buf[1 << 16];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	unsigned portid = mnl_socket_get_portid(nl);
	int ret;

	nlh->nlmsg_type = (uint16_t)type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = (uint32_t)(*n + 1);
	if (type == RTM_GETNEXTHOP || type == RTM_GETNEXTHOPBUCKET) {
		struct nhmsg *m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));
		m->nh_family = (uint8_t)family;
	} else if (type == RTM_GETLINK) {
		struct ifinfomsg *m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));
		m->ifi_family = (uint8_t)family;
	} else if (type == RTM_GETADDR) {
		struct ifaddrmsg *m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));
		m->ifa_family = (uint8_t)family;
	} else {
		struct rtmsg *m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));
		m->rtm_family = (uint8_t)family;
	}
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	while ((ret = (int)mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		const struct nlmsghdr *m = (const struct nlmsghdr *)buf;
		int len = ret;

		for (; mnl_nlmsg_ok(m, len); m = mnl_nlmsg_next(m, &len)) {
			char path[4096];
			FILE *f;

			if (m->nlmsg_type == NLMSG_DONE || m->nlmsg_type == NLMSG_ERROR)
				return 0;
			snprintf(path, sizeof(path), "%s/%s-%03d", dir, nl_seeds_prefix, (*n)++);
			f = fopen(path, "w");
			if (!f || fwrite(m, m->nlmsg_len, 1, f) != 1 || fclose(f))
				return -1;
			if (nl_seeds_all_len + m->nlmsg_len <= sizeof(nl_seeds_all)) {
				memcpy(nl_seeds_all + nl_seeds_all_len, m, m->nlmsg_len);
				nl_seeds_all_len += MNL_ALIGN(m->nlmsg_len);
			}
		}
	}
	return ret;
}

int
main(int argc, char **argv)
{
	struct mnl_socket *nl;
	char path[4096];
	FILE *f;
	int n = 0;

	int policy = argc == 3 && !strcmp(argv[2], "policy");
	int res = argc == 3 && !strcmp(argv[2], "res");

	if (argc != 2 && !policy && !res) {
		fprintf(stderr, "usage: nl_seeds DIR [policy|res]\n");
		return 2;
	}
	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("netlink");
		return 1;
	}
	if (policy) {
		if (nl_seeds_dump(nl, RTM_GETLINK, AF_UNSPEC, argv[1], &n) < 0 ||
		    nl_seeds_dump(nl, RTM_GETADDR, AF_UNSPEC, argv[1], &n) < 0 ||
		    nl_seeds_dump(nl, RTM_GETRULE, AF_INET, argv[1], &n) < 0 ||
		    nl_seeds_dump(nl, RTM_GETRULE, AF_INET6, argv[1], &n) < 0) {
			perror("dump");
			return 1;
		}
	} else if (res) {
		nl_seeds_prefix = "res";
		if (nl_seeds_dump(nl, RTM_GETNEXTHOP, AF_UNSPEC, argv[1], &n) < 0 ||
		    nl_seeds_dump(nl, RTM_GETNEXTHOPBUCKET, AF_UNSPEC, argv[1], &n) < 0 ||
		    nl_seeds_dump(nl, RTM_GETROUTE, AF_INET, argv[1], &n) < 0 ||
		    nl_seeds_dump(nl, RTM_GETROUTE, AF_INET6, argv[1], &n) < 0) {
			perror("dump");
			return 1;
		}
	} else if (nl_seeds_dump(nl, RTM_GETNEXTHOP, AF_UNSPEC, argv[1], &n) < 0 ||
	    nl_seeds_dump(nl, RTM_GETROUTE, AF_INET, argv[1], &n) < 0 ||
	    nl_seeds_dump(nl, RTM_GETROUTE, AF_INET6, argv[1], &n) < 0) {
		perror("dump");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s", argv[1], res ? "res-all" : "all");
	f = fopen(path, "w");
	if (!f || fwrite(nl_seeds_all, nl_seeds_all_len, 1, f) != 1 || fclose(f)) {
		perror(path);
		return 1;
	}
	mnl_socket_close(nl);
	printf("%d messages\n", n);
	return 0;
}
