/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: mphash_tool, fib_mphash on the command line (for mphash_kernel.sh)
 *
 *   mphash_tool -4|-6 POLICY FIELDS SEED W1,W2,...  < flows
 *
 * reads one flow a line, "SRC DST PROTO SPORT DPORT [FLOWLABEL]" (SRC "-"
 * for none: the unspecified address is hashed; PROTO 0 for none; FIELDS
 * in hex or decimal), and prints "PATH HASH" a line: the hash fib_mphash
 * computes and the index of the path the kernel's upper bounds
 * (fib_rebalance) give it among paths of weights W1,W2,... in the
 * kernel's order. Exit 2 on a malformed line.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "fib/mphash.h"

#define MAX_PATHS 64

int
main(int argc, char **argv)
{
	struct fib_mp_hash h;
	uint16_t weight[MAX_PATHS];
	unsigned n = 0;
	char line[512], *p, *save = NULL;
	int family;

	if (argc != 6 || (strcmp(argv[1], "-4") && strcmp(argv[1], "-6"))) {
		fprintf(stderr, "usage: %s -4|-6 POLICY FIELDS SEED W1,W2,... < flows\n", argv[0]);
		return 2;
	}
	family = argv[1][1] == '4' ? AF_INET : AF_INET6;
	memset(&h, 0, sizeof(h));
	h.policy4 = h.policy6 = (uint8_t)strtoul(argv[2], NULL, 0);
	h.fields4 = h.fields6 = (uint32_t)strtoul(argv[3], NULL, 0);
	h.seed = (uint32_t)strtoul(argv[4], NULL, 0);
	h.seed_set = 1;
	for (p = strtok_r(argv[5], ",", &save); p && n < MAX_PATHS; p = strtok_r(NULL, ",", &save))
		weight[n++] = (uint16_t)strtoul(p, NULL, 0);
	if (!n)
		return 2;

	while (fgets(line, sizeof(line), stdin)) {
		char src[64], dst[64];
		unsigned proto, sport, dport, label = 0;
		struct fib_flow fl;
		union fib_addr saddr;
		uint32_t hash;

		if (sscanf(line, "%63s %63s %u %u %u %x", src, dst, &proto, &sport, &dport,
			   &label) < 5)
			return 2;
		memset(&fl, 0, sizeof(fl));
		memset(&saddr, 0, sizeof(saddr));
		fl.family = (uint8_t)family;
		fl.ipproto = (uint8_t)proto;
		fl.sport = (uint16_t)sport;
		fl.dport = (uint16_t)dport;
		fl.flowlabel = label;
		if (inet_pton(family, dst, fl.dst.b) != 1)
			return 2;
		if (strcmp(src, "-")) {
			if (inet_pton(family, src, saddr.b) != 1)
				return 2;
			fl.src = saddr;
			fl.flags |= FIB_FLOW_SRC;
		}
		hash = fib_mphash(&h, &fl, &saddr);
		printf("%u %u\n", fib_mphash_select(hash, weight, n), hash);
	}
	return 0;
}
