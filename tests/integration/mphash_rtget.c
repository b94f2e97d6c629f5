/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: mphash_rtget, `ip -6 route get` with a flow label
 *
 *   mphash_rtget < flows
 *
 * iproute2 before 6.14 cannot put a flow label (RTA_FLOWLABEL, Linux
 * >= 6.15) into a route request, and the flow label is hashed by IPv6's
 * default policy: this sends the request itself. One flow a line,
 * "SRC DST PROTO SPORT DPORT FLOWLABEL IIF" (SRC "-" for none, PROTO 0
 * for none, FLOWLABEL in hex, IIF an ifindex or 0 for an output flow);
 * prints the answer's gateway a line, or "error ERRNO". Exit 2 on a
 * malformed line or a socket error; 3 when the kernel rejects the flow
 * label attribute (too old).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#ifndef RTA_FLOWLABEL
#define RTA_FLOWLABEL 31
#endif

struct req {
	struct nlmsghdr nh;
	struct rtmsg rt;
	char attrs[256];
};

static void
put_attr(struct req *r, unsigned short type, const void *data, unsigned short len)
{
	struct rtattr *a = (struct rtattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* Send one request, print the gateway or the error. -1: socket trouble */
static int
ask(int fd, struct req *r, unsigned seq)
{
	char buf[8192], gw[INET6_ADDRSTRLEN];
	struct nlmsghdr *nh;
	ssize_t n;

	r->nh.nlmsg_seq = seq;
	if (send(fd, r, r->nh.nlmsg_len, 0) < 0)
		return -1;
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -1;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (unsigned)n);
		     nh = NLMSG_NEXT(nh, n)) {
			struct rtmsg *rt;
			struct rtattr *a;
			int len;

			if (nh->nlmsg_seq != seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nh);

				printf("error %d\n", -e->error);
				return -e->error;
			}
			if (nh->nlmsg_type != RTM_NEWROUTE)
				continue;
			rt = NLMSG_DATA(nh);
			len = (int)RTM_PAYLOAD(nh);
			strcpy(gw, "none");
			for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len))
				if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == 16)
					inet_ntop(AF_INET6, RTA_DATA(a), gw, sizeof(gw));
			printf("%s\n", gw);
			return 0;
		}
	}
}

int
main(void)
{
	char line[512];
	unsigned seq = 0;
	int fd;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		perror("socket");
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		char src[64], dst[64];
		unsigned proto, sport, dport, label, iif;
		struct in6_addr a;
		struct req r;
		int rc;

		if (sscanf(line, "%63s %63s %u %u %u %x %u", src, dst, &proto, &sport, &dport,
			   &label, &iif) != 7)
			return 2;
		memset(&r, 0, sizeof(r));
		r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(r.rt));
		r.nh.nlmsg_type = RTM_GETROUTE;
		r.nh.nlmsg_flags = NLM_F_REQUEST;
		r.rt.rtm_family = AF_INET6;
		if (inet_pton(AF_INET6, dst, &a) != 1)
			return 2;
		r.rt.rtm_dst_len = 128;
		put_attr(&r, RTA_DST, &a, sizeof(a));
		if (strcmp(src, "-")) {
			if (inet_pton(AF_INET6, src, &a) != 1)
				return 2;
			r.rt.rtm_src_len = 128;
			put_attr(&r, RTA_SRC, &a, sizeof(a));
		}
		if (iif)
			put_attr(&r, RTA_IIF, &iif, sizeof(iif));
		if (proto) {
			uint8_t p = (uint8_t)proto;

			put_attr(&r, RTA_IP_PROTO, &p, sizeof(p));
		}
		if (sport || dport) {
			uint16_t s = htons((uint16_t)sport), d = htons((uint16_t)dport);

			put_attr(&r, RTA_SPORT, &s, sizeof(s));
			put_attr(&r, RTA_DPORT, &d, sizeof(d));
		}
		if (label) {
			uint32_t l = htonl(label);

			put_attr(&r, RTA_FLOWLABEL, &l, sizeof(l));
		}
		rc = ask(fd, &r, ++seq);
		if (rc < 0) {
			perror("netlink");
			return 2;
		}
		if (rc == EINVAL && label)
			return 3;
	}
	close(fd);
	return 0;
}
