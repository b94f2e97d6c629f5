/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fibctl, the control client of fibd
 *
 * fibctl [-s SOCKET] [--json] COMMAND [ARGS...] sends one request line over
 * the control socket (daemon/ctl.h describes the protocol), reads the
 * answer ("NNN-data" lines, then "NNN message") and prints it:
 *
 *   show summary, show trie,  "key value" lines, aligned as a table; with
 *   show cache                --json one object (numbers, true/false and
 *                             strings as they look)
 *   lookup ADDR... [KEYWORDS] one line per address, as doc/architecture.md
 *   lookup - [KEYWORDS]       fixes it; KEYWORDS are `ip route get`'s
 *                             (from, iif, oif, mark, tos|dscp, ipproto,
 *                             sport, dport, uid, fibmatch); "-" reads one
 *                             flow a line from stdin: lines of a bare
 *                             address go in batches of requests of at
 *                             most 32 addresses, a line with keywords is
 *                             a request of its own; --json: an array of
 *                             objects (the contract's keys)
 *   show rules [4|6]          the rules as `ip rule show`, IPv4's then
 *                             IPv6's (one request each); --json: an array
 *                             of objects as `ip -j rule show` plus family
 *   anything else             the data lines as they are; --json:
 *                             {"lines": [...]}
 *   compact, reload,          then the 200 answer's message on a line of
 *   flush cache (any command  its own ("compaction started: ...",
 *   not show/lookup whose     "reloaded", "flushed"); --json:
 *   message is not "ok")      {"lines": [...], "message": "..."}. show
 *                             routes' "N routes" is not printed: scripts
 *                             read its lines as routes
 *
 * Exit status: 0 for a 2xx answer, 1 for a 4xx/5xx answer (its message on
 * stderr), 2 for a usage error or when the daemon cannot be reached.
 *
 * --response FILE (for the golden tests in tests/ctl) reads the daemon's
 * answers from FILE instead of a socket, so the formatting is tested
 * without a running daemon.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef FIBCTL_SOCKET
#define FIBCTL_SOCKET "/run/fibd/fibd.sock"
#endif

#define FIBCTL_LINE_MAX 1024 /* CTL_LINE_MAX of the daemon */
#define FIBCTL_BATCH 32      /* addresses a lookup request */
#define FIBCTL_OPTS_MAX 300	/* a lookup's keywords: all of them fit */

struct fibctl {
	const char *path;
	int json;
	int fd;       /* -1 with --response */
	FILE *in;     /* answers */
	int first;    /* JSON array: no comma yet */
	int rc;
};

struct fibctl_answer {
	int code;
	char msg[FIBCTL_LINE_MAX];
	char **lines;
	size_t n, cap;
};

static void
fibctl_usage(void)
{
	fprintf(stderr,
		"usage: fibctl [-s SOCKET] [--json] COMMAND [ARGS...]\n"
		"commands:\n"
		"  show summary | show trie [4|6] | show cache | show routes [PREFIX]\n"
		"  show rules [4|6] | show config | flush cache | compact | reload | metrics\n"
		"  help\n"
		"  lookup ADDR... [from A] [iif NAME] [oif NAME] [mark N] [tos N|dscp N]\n"
		"         [ipproto tcp|udp|icmp|N] [sport N] [dport N] [uid N] [fibmatch]\n"
		"  lookup - [KEYWORDS...]   one flow a line from stdin: ADDR [KEYWORDS...]\n"
		"default socket: %s\n",
		FIBCTL_SOCKET);
	exit(2);
}

static void
fibctl_connect(struct fibctl *c)
{
	struct sockaddr_un sun;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(c->path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "fibctl: %s: socket path too long\n", c->path);
		exit(2);
	}
	strcpy(sun.sun_path, c->path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		fprintf(stderr, "fibctl: socket: %s\n", strerror(errno));
		exit(2);
	}
	if (connect(c->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int e = errno;

		if (e == ENOENT)
			fprintf(stderr, "fibctl: %s: no such socket: is fibd running? "
					"(-s SOCKET names another one)\n", c->path);
		else if (e == ECONNREFUSED)
			fprintf(stderr, "fibctl: %s: connection refused: fibd is not running "
					"(stale socket)\n", c->path);
		else if (e == EACCES || e == EPERM)
			fprintf(stderr, "fibctl: %s: permission denied: run as root or as a "
					"member of the socket's group\n", c->path);
		else
			fprintf(stderr, "fibctl: %s: %s\n", c->path, strerror(e));
		exit(2);
	}
	c->in = fdopen(c->fd, "r");
	if (!c->in) {
		fprintf(stderr, "fibctl: fdopen: %s\n", strerror(errno));
		exit(2);
	}
}

static void
fibctl_send(struct fibctl *c, const char *line)
{
	size_t len = strlen(line), off = 0;

	if (c->fd < 0)
		return;
	while (off < len) {
		ssize_t w = write(c->fd, line + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			fprintf(stderr, "fibctl: %s: %s\n", c->path, strerror(errno));
			exit(2);
		}
		off += (size_t)w;
	}
}

static void
fibctl_answer_free(struct fibctl_answer *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->lines[i]);
	free(a->lines);
	memset(a, 0, sizeof(*a));
}

/* Read one answer: data lines until "NNN message". */
static void
fibctl_read(struct fibctl *c, struct fibctl_answer *a)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	memset(a, 0, sizeof(*a));
	for (;;) {
		len = getline(&line, &cap, c->in);
		if (len < 0) {
			fprintf(stderr, "fibctl: %s: connection closed before the answer ended\n",
				c->path);
			exit(2);
		}
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (len < 4 || line[0] < '1' || line[0] > '5' || line[1] < '0' || line[1] > '9' ||
		    line[2] < '0' || line[2] > '9' || (line[3] != '-' && line[3] != ' ')) {
			fprintf(stderr, "fibctl: %s: not a fibd answer: %.80s\n", c->path, line);
			exit(2);
		}
		if (line[3] == ' ') {
			a->code = atoi(line);
			snprintf(a->msg, sizeof(a->msg), "%s", line + 4);
			free(line);
			return;
		}
		if (a->n == a->cap) {
			a->cap = a->cap ? 2 * a->cap : 16;
			a->lines = realloc(a->lines, a->cap * sizeof(*a->lines));
			if (!a->lines) {
				fprintf(stderr, "fibctl: out of memory\n");
				exit(2);
			}
		}
		a->lines[a->n] = strdup(line + 4);
		if (!a->lines[a->n]) {
			fprintf(stderr, "fibctl: out of memory\n");
			exit(2);
		}
		a->n++;
	}
}

static void
fibctl_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

/* A JSON number: -?digits[.digits][e[+-]digits] (not 0x10, nor inf). */
static int
fibctl_is_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s < '0' || *s > '9')
		return 0;
	while (*s >= '0' && *s <= '9')
		s++;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (*s < '0' || *s > '9')
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == 0;
}

static void
fibctl_json_value(const char *v)
{
	if (fibctl_is_number(v) || !strcmp(v, "true") || !strcmp(v, "false"))
		fputs(v, stdout);
	else
		fibctl_json_str(v);
}

/* "key value" lines: a table, or one JSON object. */
static void
fibctl_print_kv(struct fibctl *c, const struct fibctl_answer *a)
{
	size_t w = 0;

	for (size_t i = 0; i < a->n; i++) {
		size_t k = strcspn(a->lines[i], " ");

		if (k > w)
			w = k;
	}
	if (c->json)
		putchar('{');
	for (size_t i = 0; i < a->n; i++) {
		const char *l = a->lines[i];
		size_t k = strcspn(l, " ");
		const char *v = l[k] ? l + k + 1 : "";

		if (c->json) {
			char key[FIBCTL_LINE_MAX];

			snprintf(key, sizeof(key), "%.*s", (int)k, l);
			printf("%s", i ? ", " : "");
			fibctl_json_str(key);
			printf(": ");
			fibctl_json_value(v);
		} else {
			printf("%-*.*s  %s\n", (int)w, (int)k, l, v);
		}
	}
	if (c->json)
		printf("}\n");
}

/* The data lines, then msg (NULL: none) after them. */
static void
fibctl_print_lines(struct fibctl *c, const struct fibctl_answer *a, const char *msg)
{
	if (c->json)
		printf("{\"lines\": [");
	for (size_t i = 0; i < a->n; i++) {
		if (c->json) {
			printf("%s", i ? ", " : "");
			fibctl_json_str(a->lines[i]);
		} else {
			puts(a->lines[i]);
		}
	}
	if (c->json) {
		printf("]");
		if (msg) {
			printf(", \"message\": ");
			fibctl_json_str(msg);
		}
		printf("}\n");
	} else if (msg) {
		puts(msg);
	}
}

/* A string or null. */
static void
fibctl_json_str_or_null(const char *v)
{
	if (v)
		fibctl_json_str(v);
	else
		fputs("null", stdout);
}

/* A number (a string if it does not look like one) or null. */
static void
fibctl_json_or_null(const char *v)
{
	if (v)
		fibctl_json_value(v);
	else
		fputs("null", stdout);
}

#define FIBCTL_PATHS_MAX 256

struct fibctl_path {
	const char *gw, *dev, *weight;
};

/*
 * One lookup line (doc/architecture.md, "fibctl lookup"):
 *   ADDR (PREFIX/LEN TYPE [via GW] [dev IF] [nexthop [via GW] [dev IF]
 *   [weight W]]... | -) [src S] [table T] [rule P] [path I] [error E]
 * as one JSON object with every key of the contract (null when absent),
 * then the keys of the first format (address, via, nexthops) kept for
 * the scripts written against it. Unknown "key value" pairs are skipped:
 * a newer daemon may add some.
 */
static void
fibctl_json_lookup(const char *line)
{
	char buf[FIBCTL_LINE_MAX], *tok[FIBCTL_LINE_MAX / 2], *save = NULL, *t;
	static struct fibctl_path paths[FIBCTL_PATHS_MAX];
	const char *prefix = NULL, *type = NULL, *gw = NULL, *dev = NULL, *src = NULL;
	const char *table = NULL, *rule = NULL, *path = NULL, *error = NULL;
	size_t n = 0, i, np = 0;
	int multi = 0, in_nh = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (t = strtok_r(buf, " ", &save); t && n < FIBCTL_LINE_MAX / 2;
	     t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	if (n < 2)
		return;
	i = 2;
	if (strcmp(tok[1], "-") && n >= 3) {
		prefix = tok[1];
		type = tok[2];
		i = 3;
	} else if (n >= 4 && !strcmp(tok[2], "unicast")) {
		/* "ADDR - unicast dev IF ...": a type without a route (IPv4
		 * output flow with oif, on link) */
		type = tok[2];
		i = 3;
	}
	for (; i < n; i++) {
		const char *k = tok[i], *v = i + 1 < n ? tok[i + 1] : NULL;

		if (!strcmp(k, "nexthop")) {
			if (np < FIBCTL_PATHS_MAX)
				memset(&paths[np++], 0, sizeof(paths[0]));
			multi = in_nh = 1;
			continue;
		}
		if (!v)
			break;
		i++;
		if (in_nh && (!strcmp(k, "via") || !strcmp(k, "dev") || !strcmp(k, "weight"))) {
			struct fibctl_path *p = &paths[np - 1];

			if (!strcmp(k, "via"))
				p->gw = v;
			else if (!strcmp(k, "dev"))
				p->dev = v;
			else
				p->weight = v;
			continue;
		}
		in_nh = 0;
		if (!strcmp(k, "via"))
			gw = v;
		else if (!strcmp(k, "dev"))
			dev = v;
		else if (!strcmp(k, "src"))
			src = v;
		else if (!strcmp(k, "table"))
			table = v;
		else if (!strcmp(k, "rule"))
			rule = v;
		else if (!strcmp(k, "path"))
			path = v;
		else if (!strcmp(k, "error"))
			error = v;
	}
	if (!multi && (gw || dev)) {
		paths[0] = (struct fibctl_path){gw, dev, "1"};
		np = 1;
	} else if (multi && path && (size_t)atoi(path) < np) {
		gw = paths[atoi(path)].gw;
		dev = paths[atoi(path)].dev;
	}
	printf("{\"dst\": ");
	fibctl_json_str(tok[0]);
	printf(", \"prefix\": ");
	fibctl_json_str_or_null(prefix);
	printf(", \"type\": ");
	fibctl_json_str_or_null(type);
	printf(", \"table\": ");
	fibctl_json_or_null(table);
	printf(", \"rule\": ");
	fibctl_json_or_null(rule);
	printf(", \"gateway\": ");
	fibctl_json_str_or_null(gw);
	printf(", \"dev\": ");
	fibctl_json_str_or_null(dev);
	printf(", \"src\": ");
	fibctl_json_str_or_null(src);
	printf(", \"paths\": [");
	for (i = 0; i < np; i++) {
		printf("%s{\"gateway\": ", i ? ", " : "");
		fibctl_json_str_or_null(paths[i].gw);
		printf(", \"dev\": ");
		fibctl_json_str_or_null(paths[i].dev);
		printf(", \"weight\": ");
		fibctl_json_value(paths[i].weight ? paths[i].weight : "1");
		putchar('}');
	}
	printf("], \"path\": ");
	fibctl_json_or_null(multi ? path : (np ? "0" : NULL));
	printf(", \"error\": ");
	fibctl_json_str_or_null(error);
	/* the first format's keys */
	printf(", \"address\": ");
	fibctl_json_str(tok[0]);
	if (!multi && gw) {
		printf(", \"via\": ");
		fibctl_json_str(gw);
	}
	if (multi) {
		printf(", \"nexthops\": [");
		for (i = 0; i < np; i++) {
			const char *sep = "";

			printf("%s{", i ? ", " : "");
			if (paths[i].gw) {
				printf("\"via\": ");
				fibctl_json_str(paths[i].gw);
				sep = ", ";
			}
			if (paths[i].dev) {
				printf("%s\"dev\": ", sep);
				fibctl_json_str(paths[i].dev);
				sep = ", ";
			}
			if (paths[i].weight) {
				printf("%s\"weight\": ", sep);
				fibctl_json_value(paths[i].weight);
			}
			putchar('}');
		}
		putchar(']');
	}
	putchar('}');
}

static void
fibctl_print_lookup(struct fibctl *c, const struct fibctl_answer *a)
{
	for (size_t i = 0; i < a->n; i++) {
		if (!c->json) {
			puts(a->lines[i]);
			continue;
		}
		printf("%s\n  ", c->first ? "" : ",");
		c->first = 0;
		fibctl_json_lookup(a->lines[i]);
	}
}

static int
fibctl_check(struct fibctl *c, const struct fibctl_answer *a)
{
	if (a->code >= 200 && a->code < 300)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		fprintf(stderr, "%s\n", a->lines[i]);
	fprintf(stderr, "fibctl: %d %s\n", a->code, a->msg);
	c->rc = 1;
	return -1;
}

/* Send the lookup request in buf and print its answer. */
static void
fibctl_lookup_batch(struct fibctl *c, char *req, size_t *len, const char *opts)
{
	struct fibctl_answer a;

	if (*len == 0)
		return;
	snprintf(req + *len, FIBCTL_LINE_MAX + 64 - *len, "%s\n", opts);
	/* the callers keep *len + opts under FIBCTL_LINE_MAX: the newline fits */
	fibctl_send(c, req);
	fibctl_read(c, &a);
	if (fibctl_check(c, &a) == 0)
		fibctl_print_lookup(c, &a);
	fibctl_answer_free(&a);
	*len = 0;
}

/* "key value" in a rule object; numbers typed when they are numbers. */
static void
fibctl_json_kv(const char *k, const char *v, int *sep)
{
	printf("%s\"%s\": ", *sep ? ", " : "", k);
	*sep = 1;
	if (v)
		fibctl_json_value(v);
	else
		fputs("null", stdout);
}

/* "A-B" -> K_start A, K_end B; "A" -> K A. */
static void
fibctl_json_range(const char *k, char *v, int *sep)
{
	char key[32], *dash = strchr(v, '-');

	if (!dash) {
		fibctl_json_kv(k, v, sep);
		return;
	}
	*dash = 0;
	snprintf(key, sizeof(key), "%s_start", k);
	fibctl_json_kv(key, v, sep);
	snprintf(key, sizeof(key), "%s_end", k);
	fibctl_json_kv(key, dash + 1, sep);
}

/* "ADDR[/LEN]" -> K ADDR, KLEN LEN ("all" for from all). */
static void
fibctl_json_prefix(const char *k, const char *klen, char *v, int *sep)
{
	char *slash = strchr(v, '/');

	if (slash)
		*slash = 0;
	printf("%s\"%s\": ", *sep ? ", " : "", k);
	fibctl_json_str(v);
	*sep = 1;
	if (slash)
		fibctl_json_kv(klen, slash + 1, sep);
}

/*
 * One `show rules` line, "PRIO:\tfrom all lookup local", as the object
 * `ip -j rule show` prints for it (its keys: priority, not, src, srclen,
 * dst, dstlen, tos, dscp, fwmark, fwmask, iif, oif, uid_start, uid_end,
 * ipproto, sport(_start, _end), dport(...), table, suppress_prefixlen,
 * suppress_ifgroup, goto, nop, action, protocol), with family first.
 */
static void
fibctl_json_rule(const char *family, const char *line)
{
	char buf[FIBCTL_LINE_MAX], *tok[FIBCTL_LINE_MAX / 2], *save = NULL, *t;
	size_t n = 0;
	int sep = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (t = strtok_r(buf, " \t", &save); t && n < FIBCTL_LINE_MAX / 2;
	     t = strtok_r(NULL, " \t", &save))
		tok[n++] = t;
	printf("{");
	if (family) {
		fibctl_json_kv("family", family, &sep);
	}
	for (size_t i = 0; i < n; i++) {
		char *k = tok[i], *v = i + 1 < n ? tok[i + 1] : NULL;
		size_t kl = strlen(k);

		if (i == 0 && kl && k[kl - 1] == ':') {
			k[kl - 1] = 0;
			fibctl_json_kv("priority", k, &sep);
		} else if (!strcmp(k, "not") || !strcmp(k, "nop")) {
			fibctl_json_kv(k, NULL, &sep);
		} else if (!strcmp(k, "[detached]")) {
			fibctl_json_kv("iif_detached", NULL, &sep);
		} else if (!strcmp(k, "blackhole") || !strcmp(k, "unreachable") ||
			   !strcmp(k, "prohibit")) {
			printf("%s\"action\": ", sep ? ", " : "");
			fibctl_json_str(k);
			sep = 1;
		} else if (!v) {
			fibctl_json_kv(k, NULL, &sep);
		} else {
			i++;
			if (!strcmp(k, "from")) {
				fibctl_json_prefix("src", "srclen", v, &sep);
			} else if (!strcmp(k, "to")) {
				fibctl_json_prefix("dst", "dstlen", v, &sep);
			} else if (!strcmp(k, "fwmark")) {
				char *slash = strchr(v, '/');

				if (slash)
					*slash = 0;
				printf("%s\"fwmark\": ", sep ? ", " : "");
				fibctl_json_str(v);
				if (slash) {
					printf(", \"fwmask\": ");
					fibctl_json_str(slash + 1);
				}
				sep = 1;
			} else if (!strcmp(k, "uidrange")) {
				fibctl_json_range("uid", v, &sep);
			} else if (!strcmp(k, "sport") || !strcmp(k, "dport")) {
				fibctl_json_range(k, v, &sep);
			} else if (!strcmp(k, "lookup")) {
				printf("%s\"table\": ", sep ? ", " : "");
				fibctl_json_str(v);
				sep = 1;
			} else if (!strcmp(k, "suppress_prefixlength")) {
				fibctl_json_kv("suppress_prefixlen", v, &sep);
			} else if (!strcmp(k, "proto")) {
				printf("%s\"protocol\": ", sep ? ", " : "");
				fibctl_json_str(v);
				sep = 1;
			} else if (!strcmp(k, "goto") || !strcmp(k, "dscp")) {
				fibctl_json_kv(k, v, &sep);
			} else {
				/* tos, iif, oif, ipproto, suppress_ifgroup: strings */
				printf("%s\"%s\": ", sep ? ", " : "", k);
				fibctl_json_str(v);
				sep = 1;
			}
		}
	}
	printf("}");
}

/*
 * show rules [4|6]: without a family, one request per family, so that
 * each line's family is known (the text, as `ip rule show`, does not
 * say it). Text: the lines, IPv4's first; --json: one array of objects.
 */
static void
fibctl_show_rules(struct fibctl *c, int argc, char **argv)
{
	static const char *const fam_arg[] = {"4", "6"}, *const fam_name[] = {"inet", "inet6"};
	struct fibctl_answer a;
	char req[64];
	int first = 1;

	if (argc > 3 || (argc == 3 && strcmp(argv[2], "4") && strcmp(argv[2], "6"))) {
		/* the daemon's usage message */
		snprintf(req, sizeof(req), "show rules %.40s\n", argv[2]);
		fibctl_send(c, req);
		fibctl_read(c, &a);
		fibctl_check(c, &a);
		fibctl_answer_free(&a);
		return;
	}
	if (c->json)
		printf("[");
	for (int f = 0; f < 2; f++) {
		if (argc == 3 && strcmp(argv[2], fam_arg[f]))
			continue;
		snprintf(req, sizeof(req), "show rules %s\n", fam_arg[f]);
		fibctl_send(c, req);
		fibctl_read(c, &a);
		if (fibctl_check(c, &a) == 0)
			for (size_t i = 0; i < a.n; i++) {
				if (!c->json) {
					puts(a.lines[i]);
					continue;
				}
				printf("%s\n  ", first ? "" : ",");
				first = 0;
				fibctl_json_rule(fam_name[f], a.lines[i]);
			}
		fibctl_answer_free(&a);
		if (c->rc)
			break;
	}
	if (c->json)
		printf("%s]\n", first ? "" : "\n");
}

/*
 * The keywords of a lookup (daemon/ctl.c has the same table and checks
 * the values): fibctl only needs to tell them from addresses.
 */
static int
fibctl_lookup_keyword(const char *w, int *has_value)
{
	static const char *const with_value[] = {"from", "iif",	    "oif",   "mark",  "tos",
						 "dscp", "ipproto", "sport", "dport", "uid"};

	for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
		if (!strcmp(w, with_value[i])) {
			*has_value = 1;
			return 1;
		}
	*has_value = 0;
	return !strcmp(w, "fibmatch");
}

/* An IPv4 or IPv6 address, as the daemon parses them. */
static int
fibctl_is_addr(const char *s)
{
	unsigned char a[16];

	return inet_pton(strchr(s, ':') ? AF_INET6 : AF_INET, s, a) == 1;
}

/* A line of `lookup -` with keywords: one request of its own, with the
 * command line's keywords after its own. */
static void
fibctl_lookup_flow(struct fibctl *c, const char *flow, const char *opts)
{
	char req[FIBCTL_LINE_MAX + 64];
	size_t len;

	len = (size_t)snprintf(req, sizeof(req), "lookup %s", flow);
	if (len + strlen(opts) + 1 >= FIBCTL_LINE_MAX) {
		fprintf(stderr, "fibctl: flow too long: %.64s...\n", flow);
		c->rc = 1;
		return;
	}
	fibctl_lookup_batch(c, req, &len, opts);
}

static void
fibctl_lookup(struct fibctl *c, int argc, char **argv)
{
	char req[FIBCTL_LINE_MAX + 64], opts[FIBCTL_OPTS_MAX] = "", line[FIBCTL_LINE_MAX];
	size_t len = 0, naddr = 0, olen = 0;
	int from_stdin = 0, i, na = 0, hv;
	char **addrs = argv;

	/* Split the addresses from the keywords (and their values): the
	 * keywords go after the addresses of every request. A keyword
	 * without its value is sent as it is, for the daemon to say so. */
	for (i = 0; i < argc; i++) {
		if (fibctl_lookup_keyword(argv[i], &hv)) {
			olen += (size_t)snprintf(opts + olen, sizeof(opts) - olen, " %s", argv[i]);
			if (hv && i + 1 < argc)
				olen += (size_t)snprintf(opts + olen, sizeof(opts) - olen, " %s",
							 argv[++i]);
			if (olen >= sizeof(opts))
				fibctl_usage();
		} else if (!strcmp(argv[i], "-")) {
			from_stdin = 1;
		} else {
			addrs[na++] = argv[i];
		}
	}
	if (!na && !from_stdin)
		fibctl_usage();
	if (c->json)
		printf("[");
	c->first = 1;
	for (i = 0;; i++) {
		const char *addr;

		if (i < na) {
			addr = addrs[i];
		} else if (from_stdin && fgets(line, sizeof(line), stdin)) {
			char *p = line + strspn(line, " \t");

			p[strcspn(p, "\r\n")] = 0;
			for (size_t k = strlen(p); k && (p[k - 1] == ' ' || p[k - 1] == '\t'); k--)
				p[k - 1] = 0;
			if (!p[0] || p[0] == '#')
				continue;
			if (p[strcspn(p, " \t")] || !fibctl_is_addr(p)) {
				/* a flow with keywords, or a bad address (the
				 * daemon names it): its own request, in order,
				 * so that it fails alone */
				fibctl_lookup_batch(c, req, &len, opts);
				naddr = 0;
				fibctl_lookup_flow(c, p, opts);
				continue;
			}
			addr = p;
		} else {
			break;
		}
		if (strlen(addr) > 64) {
			fprintf(stderr, "fibctl: bad address: %.64s...\n", addr);
			c->rc = 1;
			continue;
		}
		if (len == 0)
			len = (size_t)snprintf(req, sizeof(req), "lookup");
		len += (size_t)snprintf(req + len, sizeof(req) - len, " %s", addr);
		if (++naddr == FIBCTL_BATCH || len > FIBCTL_LINE_MAX - FIBCTL_OPTS_MAX - 72) {
			fibctl_lookup_batch(c, req, &len, opts);
			naddr = 0;
		}
	}
	fibctl_lookup_batch(c, req, &len, opts);
	if (c->json)
		printf("%s]\n", c->first ? "" : "\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 's' },
		{ "response", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct fibctl c = { .path = FIBCTL_SOCKET, .fd = -1 };
	struct fibctl_answer a;
	const char *response = NULL;
	char req[FIBCTL_LINE_MAX + 1];
	size_t len = 0;
	int ch, i;

	while ((ch = getopt_long(argc, argv, "+js:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			c.json = 1;
			break;
		case 's':
			c.path = optarg;
			break;
		case 'R':
			response = optarg;
			break;
		default:
			fibctl_usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		fibctl_usage();
	if (response) {
		c.in = fopen(response, "r");
		if (!c.in) {
			fprintf(stderr, "fibctl: %s: %s\n", response, strerror(errno));
			return 2;
		}
		c.path = response;
	} else {
		fibctl_connect(&c);
	}
	if (!strcmp(argv[0], "lookup")) {
		fibctl_lookup(&c, argc - 1, argv + 1);
		return c.rc;
	}
	if (argc >= 2 && !strcmp(argv[0], "show") && !strcmp(argv[1], "rules")) {
		fibctl_show_rules(&c, argc, argv);
		return c.rc;
	}
	for (i = 0; i < argc; i++) {
		int w = snprintf(req + len, sizeof(req) - len, "%s%s", i ? " " : "", argv[i]);

		if (w < 0 || (size_t)w >= sizeof(req) - len - 1) {
			fprintf(stderr, "fibctl: request too long\n");
			return 2;
		}
		len += (size_t)w;
	}
	req[len++] = '\n';
	req[len] = 0;
	fibctl_send(&c, req);
	fibctl_read(&c, &a);
	if (fibctl_check(&c, &a) == 0) {
		if (argc >= 2 && !strcmp(argv[0], "show") &&
		    (!strcmp(argv[1], "summary") || !strcmp(argv[1], "trie") ||
		     !strcmp(argv[1], "cache")))
			fibctl_print_kv(&c, &a);
		else
			/* An action's answer (compaction started, reloaded,
			 * flushed) is its message: the operator sees it. A
			 * show's message is a count beside its data. */
			fibctl_print_lines(&c, &a,
					   strcmp(argv[0], "show") && strcmp(a.msg, "ok") ? a.msg : NULL);
	}
	fibctl_answer_free(&a);
	return c.rc;
}
