// SPDX-License-Identifier: BSD-2-Clause
/*
 * DOC: libFuzzer target for the control protocol parser
 *
 * Splits the input on newlines, as the control socket does, and hands
 * each line (bounded at 2 * CTL_LINE_MAX bytes, so the 413 path is
 * reached too) to ctl_parse(). Checks what callers rely on:
 *
 *   - the return value is 0 with r.code 200, or r.code itself, one of
 *     400, 404, 413; r.msg is NUL-terminated;
 *   - a parsed lookup has 1..CTL_ADDRS_MAX addresses of AF_INET or
 *     AF_INET6, a NUL-terminated iif; show trie/routes has a family of
 *     0, AF_INET or AF_INET6 and a plen within the family;
 *   - a parsed lookup printed back ("lookup A B ... [from S] [tos T]
 *     [iif I]") parses to the same command.
 *
 * Built by `make fuzz-ctl` (clang only, tests/fuzz/local.mk) and run for
 * FUZZ_SECONDS from the seeds in tests/fuzz/ctl_corpus.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/ctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_reply(int rc, const struct ctl_reply *r)
{
	if (!memchr(r->msg, '\0', sizeof(r->msg)))
		abort();
	if (rc == 0) {
		if (r->code != 200)
			abort();
		return;
	}
	if (rc != r->code || (rc != 400 && rc != 404 && rc != 413))
		abort();
}

static void
check_addr(const struct ctl_addr *a)
{
	if (a->family != AF_INET && a->family != AF_INET6)
		abort();
}

/* Print a parsed lookup back as a request line; parse it; compare. */
static void
check_lookup_roundtrip(const struct ctl_cmd *cmd)
{
	static char line[2 * CTL_LINE_MAX];
	struct ctl_cmd back;
	struct ctl_reply r;
	char a[INET6_ADDRSTRLEN];
	size_t off;
	int rc;

	off = (size_t)snprintf(line, sizeof(line), "lookup");
	for (unsigned i = 0; i < cmd->naddr; i++) {
		inet_ntop(cmd->addr[i].family, cmd->addr[i].a.b, a, sizeof(a));
		off += (size_t)snprintf(line + off, sizeof(line) - off, " %s", a);
	}
	if (cmd->has_src) {
		inet_ntop(cmd->src.family, cmd->src.a.b, a, sizeof(a));
		off += (size_t)snprintf(line + off, sizeof(line) - off, " from %s", a);
	}
#define ADD(...) (off += (size_t)snprintf(line + off, off < sizeof(line) ? sizeof(line) - off : 0, __VA_ARGS__))
	if (cmd->seen & CTL_K_TOS)
		ADD(" tos %u", cmd->tos);
	if (cmd->seen & CTL_K_DSCP)
		ADD(" dscp %u", cmd->tos);
	if (cmd->iif[0])
		ADD(" iif %s", cmd->iif);
	if (cmd->oif[0])
		ADD(" oif %s", cmd->oif);
	if (cmd->seen & CTL_K_MARK)
		ADD(" mark %u", cmd->mark);
	if (cmd->seen & CTL_K_IPPROTO)
		ADD(" ipproto %u", cmd->ipproto);
	if (cmd->seen & CTL_K_SPORT)
		ADD(" sport %u", cmd->sport);
	if (cmd->seen & CTL_K_DPORT)
		ADD(" dport %u", cmd->dport);
	if (cmd->seen & CTL_K_UID)
		ADD(" uid %u", cmd->uid);
	if (cmd->seen & CTL_K_FIBMATCH)
		ADD(" fibmatch");
#undef ADD
	if (off >= CTL_LINE_MAX)
		return; /* 64 long IPv6 addresses: legal parsed, too long printed */
	rc = ctl_parse(line, &back, &r);
	if (rc != 0 || back.op != CTL_LOOKUP || back.naddr != cmd->naddr ||
	    back.has_src != cmd->has_src || back.tos != cmd->tos || back.seen != cmd->seen ||
	    back.mark != cmd->mark || back.ipproto != cmd->ipproto || back.sport != cmd->sport ||
	    back.dport != cmd->dport || back.uid != cmd->uid || strcmp(back.iif, cmd->iif) != 0 ||
	    strcmp(back.oif, cmd->oif) != 0)
		abort();
	for (unsigned i = 0; i < cmd->naddr; i++)
		if (back.addr[i].family != cmd->addr[i].family ||
		    memcmp(back.addr[i].a.b, cmd->addr[i].a.b, 16) != 0)
			abort();
	if (cmd->has_src && (back.src.family != cmd->src.family ||
			     memcmp(back.src.a.b, cmd->src.a.b, 16) != 0))
		abort();
}

static void
check_cmd(const struct ctl_cmd *cmd)
{
	switch (cmd->op) {
	case CTL_LOOKUP:
		if (cmd->naddr == 0 || cmd->naddr > CTL_ADDRS_MAX)
			abort();
		for (unsigned i = 0; i < cmd->naddr; i++)
			check_addr(&cmd->addr[i]);
		if (cmd->has_src)
			check_addr(&cmd->src);
		if (!memchr(cmd->iif, '\0', sizeof(cmd->iif)) ||
		    !memchr(cmd->oif, '\0', sizeof(cmd->oif)))
			abort();
		check_lookup_roundtrip(cmd);
		break;
	case CTL_SHOW_ROUTES:
		if (cmd->has_prefix &&
		    (cmd->family == AF_INET ? cmd->plen > 32 :
		     cmd->family == AF_INET6 ? cmd->plen > 128 : 1))
			abort();
		/* fall through */
	case CTL_SHOW_TRIE:
	case CTL_SHOW_RULES:
		if (cmd->family != 0 && cmd->family != AF_INET && cmd->family != AF_INET6)
			abort();
		break;
	case CTL_SHOW_SUMMARY:
	case CTL_SHOW_CACHE:
	case CTL_SHOW_CONFIG:
	case CTL_FLUSH_CACHE:
	case CTL_RELOAD:
	case CTL_METRICS:
	case CTL_HELP:
	case CTL_COMPACT:
		break;
	default:
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char line[2 * CTL_LINE_MAX + 1];
	struct ctl_cmd cmd;
	struct ctl_reply r;
	size_t start = 0;

	while (start < size) {
		const uint8_t *nl = memchr(data + start, '\n', size - start);
		size_t end = nl ? (size_t)(nl - data) : size;
		size_t len = end - start;
		int rc;

		if (len > 2 * CTL_LINE_MAX)
			len = 2 * CTL_LINE_MAX;
		memcpy(line, data + start, len);
		line[len] = '\0';
		/* The server strips the newline, not a CR: leave it in. */
		rc = ctl_parse(line, &cmd, &r);
		check_reply(rc, &r);
		if ((strlen(line) >= CTL_LINE_MAX) != (rc == 413))
			abort();
		if (rc == 0)
			check_cmd(&cmd);
		start = end + 1;
	}
	return 0;
}
