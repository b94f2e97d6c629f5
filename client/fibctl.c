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
 *   lookup ADDR... | -        one line per address, as doc/architecture.md
 *                             fixes it; "-" reads addresses from stdin,
 *                             sent in batches of requests of at most 32
 *                             addresses; --json: an array of objects
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
		"  show config | lookup ADDR... [from SRC] [tos T] [iif DEV] | lookup -\n"
		"  flush cache | compact | reload | metrics | help\n"
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

static int
fibctl_is_number(const char *s)
{
	char *end;

	if (!*s)
		return 0;
	strtod(s, &end);
	return *end == 0 && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'));
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

/* One lookup line "ADDR PREFIX TYPE [via GW] [dev IF] [nexthop ...]" as JSON. */
static void
fibctl_json_lookup(const char *line)
{
	char buf[FIBCTL_LINE_MAX], *tok[FIBCTL_LINE_MAX / 2], *save = NULL, *t;
	size_t n = 0, i;
	int in_nh = 0;
	const char *sep = ", ";

	snprintf(buf, sizeof(buf), "%s", line);
	for (t = strtok_r(buf, " ", &save); t && n < FIBCTL_LINE_MAX / 2; t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	if (n < 2)
		return;
	printf("{\"address\": ");
	fibctl_json_str(tok[0]);
	if (!strcmp(tok[1], "-") || n < 3) {
		printf(", \"prefix\": null}");
		return;
	}
	printf(", \"prefix\": ");
	fibctl_json_str(tok[1]);
	printf(", \"type\": ");
	fibctl_json_str(tok[2]);
	for (i = 3; i < n; i++) {
		if (!strcmp(tok[i], "nexthop")) {
			printf("%s{", in_nh ? "}, " : ", \"nexthops\": [");
			in_nh = 1;
			sep = "";
			continue;
		}
		if (i + 1 >= n)
			break;
		printf("%s", sep);
		sep = ", ";
		fibctl_json_str(tok[i]);
		printf(": ");
		fibctl_json_value(tok[i + 1]);
		i++;
	}
	if (in_nh)
		printf("}]");
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
	fibctl_send(c, req);
	fibctl_read(c, &a);
	if (fibctl_check(c, &a) == 0)
		fibctl_print_lookup(c, &a);
	fibctl_answer_free(&a);
	*len = 0;
}

static void
fibctl_lookup(struct fibctl *c, int argc, char **argv)
{
	char req[FIBCTL_LINE_MAX + 64], opts[256] = "", line[256];
	size_t len = 0, naddr = 0, olen = 0;
	int from_stdin = 0, i, na = 0;
	char **addrs = argv;

	/* Split the addresses from "from SRC", "tos T", "iif DEV". */
	for (i = 0; i < argc; i++) {
		if ((!strcmp(argv[i], "from") || !strcmp(argv[i], "tos") || !strcmp(argv[i], "iif")) &&
		    i + 1 < argc) {
			olen += (size_t)snprintf(opts + olen, sizeof(opts) - olen, " %s %s", argv[i],
						 argv[i + 1]);
			if (olen >= sizeof(opts))
				fibctl_usage();
			i++;
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
			line[strcspn(line, " \t\r\n")] = 0;
			if (!line[0])
				continue;
			addr = line;
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
		if (++naddr == FIBCTL_BATCH || len > FIBCTL_LINE_MAX - 300) {
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
