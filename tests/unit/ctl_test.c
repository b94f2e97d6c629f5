/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: tests of the control protocol (daemon/ctl)
 *
 * ctl_parse() on good and bad lines (unknown commands, bad arguments,
 * limits), then the server itself on a real UNIX socket and a real
 * libevent loop: answers framed as "NNN-data" / "NNN msg", pipelined
 * requests answered in order, an oversize line answered 413 with the
 * connection kept, a client that disconnects mid-request, many clients.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "daemon/ctl.h"
#include "tests/unit/ck_run.h"

static int
parse(const char *line, struct ctl_cmd *cmd, struct ctl_reply *r)
{
	return ctl_parse(line, cmd, r);
}

START_TEST(test_parse_good)
{
	struct ctl_cmd c;
	struct ctl_reply r;

	ck_assert_int_eq(parse("show summary", &c, &r), 0);
	ck_assert_int_eq(c.op, CTL_SHOW_SUMMARY);
	ck_assert_int_eq(parse("  show   trie\t6 ", &c, &r), 0);
	ck_assert_int_eq(c.op, CTL_SHOW_TRIE);
	ck_assert_int_eq(c.family, AF_INET6);
	ck_assert_int_eq(parse("show trie", &c, &r), 0);
	ck_assert_int_eq(c.family, 0);
	ck_assert_int_eq(parse("show routes 10.0.0.0/8", &c, &r), 0);
	ck_assert_int_eq(c.op, CTL_SHOW_ROUTES);
	ck_assert_int_eq(c.has_prefix, 1);
	ck_assert_int_eq(c.plen, 8);
	ck_assert_int_eq(c.family, AF_INET);
	ck_assert_int_eq(parse("show routes 2001:db8::/32", &c, &r), 0);
	ck_assert_int_eq(c.family, AF_INET6);
	ck_assert_int_eq(parse("lookup 192.0.2.1 2001:db8::1 from 10.0.0.1 tos 16 iif eth0", &c, &r),
			 0);
	ck_assert_int_eq(c.op, CTL_LOOKUP);
	ck_assert_uint_eq(c.naddr, 2);
	ck_assert_int_eq(c.addr[0].family, AF_INET);
	ck_assert_int_eq(c.addr[1].family, AF_INET6);
	ck_assert_int_eq(c.has_src, 1);
	ck_assert_int_eq(c.tos, 16);
	ck_assert_str_eq(c.iif, "eth0");
	ck_assert_int_eq(parse("flush cache", &c, &r), 0);
	ck_assert_int_eq(c.op, CTL_FLUSH_CACHE);
	ck_assert_int_eq(parse("reload\r", &c, &r), 0);
	ck_assert_int_eq(c.op, CTL_RELOAD);
	ck_assert_int_eq(parse("metrics", &c, &r), 0);
	ck_assert_int_eq(parse("show config", &c, &r), 0);
	ck_assert_int_eq(parse("show cache", &c, &r), 0);
}
END_TEST

START_TEST(test_parse_bad)
{
	static const struct {
		const char *line;
		int code;
		const char *msg;
	} cases[] = {
		{ "", 400, "empty request" },
		{ "   ", 400, "empty request" },
		{ "frobnicate", 404, "unknown command: frobnicate" },
		{ "show nothing", 404, "unknown command: show nothing" },
		{ "show", 400, "bad arguments to show" },
		{ "show summary now", 404, "unknown command: show summary" },
		{ "show trie 5", 400, "usage: show trie [4|6]" },
		{ "show trie 4 6", 400, "usage: show trie [4|6]" },
		{ "show routes 10.0.0.0/33", 400, "bad prefix: 10.0.0.0/33" },
		{ "show routes 10/8 x", 400, "usage: show routes [PREFIX]" },
		{ "lookup", 400, "usage: lookup" },
		{ "lookup 300.1.1.1", 400, "bad address: 300.1.1.1" },
		{ "lookup 192.0.2.1 tos", 400, "tos needs a value" },
		{ "lookup 192.0.2.1 tos 256", 400, "bad tos: 256" },
		{ "lookup 192.0.2.1 from nowhere", 400, "bad source address: nowhere" },
		{ "lookup 192.0.2.1 iif averyveryverylongname", 400, "bad iif: averyveryverylongname" },
		{ "lookup from 10.0.0.1", 400, "usage: lookup" },
		{ "flush", 400, "bad arguments to flush" },
		{ "flush routes", 400, "bad arguments to flush" },
		{ "reload now", 400, "bad arguments to reload" },
		{ "metrics please", 400, "bad arguments to metrics" },
	};
	struct ctl_cmd c;
	struct ctl_reply r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = parse(cases[i].line, &c, &r);

		ck_assert_msg(rc == cases[i].code, "'%s': %d, expected %d", cases[i].line, rc,
			      cases[i].code);
		ck_assert_int_eq(r.code, cases[i].code);
		ck_assert_msg(strstr(r.msg, cases[i].msg), "'%s': message '%s'", cases[i].line,
			      r.msg);
	}
}
END_TEST

/* Every keyword of `ip route get`, alone and together. */
START_TEST(test_parse_flow)
{
	struct ctl_cmd c;
	struct ctl_reply r;

	ck_assert_int_eq(parse("lookup 192.0.2.1", &c, &r), 0);
	ck_assert_uint_eq(c.seen, 0);
	ck_assert_int_eq(parse("lookup 192.0.2.1 oif v0", &c, &r), 0);
	ck_assert_str_eq(c.oif, "v0");
	ck_assert_uint_eq(c.seen, CTL_K_OIF);
	ck_assert_int_eq(parse("lookup 192.0.2.1 mark 0x10", &c, &r), 0);
	ck_assert_uint_eq(c.mark, 16);
	ck_assert_uint_eq(c.seen, CTL_K_MARK);
	ck_assert_int_eq(parse("lookup 192.0.2.1 mark 4294967295", &c, &r), 0);
	ck_assert_uint_eq(c.mark, 4294967295u);
	ck_assert_int_eq(parse("lookup 192.0.2.1 dscp 46", &c, &r), 0);
	ck_assert_uint_eq(c.tos, 46);
	ck_assert_uint_eq(c.seen, CTL_K_DSCP);
	ck_assert_int_eq(parse("lookup 192.0.2.1 tos 0x10", &c, &r), 0);
	ck_assert_uint_eq(c.tos, 16);
	ck_assert_uint_eq(c.seen, CTL_K_TOS);
	ck_assert_int_eq(parse("lookup 192.0.2.1 ipproto tcp", &c, &r), 0);
	ck_assert_uint_eq(c.ipproto, 6);
	ck_assert_int_eq(parse("lookup 192.0.2.1 ipproto udp", &c, &r), 0);
	ck_assert_uint_eq(c.ipproto, 17);
	ck_assert_int_eq(parse("lookup 192.0.2.1 ipproto icmp", &c, &r), 0);
	ck_assert_uint_eq(c.ipproto, 1);
	ck_assert_int_eq(parse("lookup 2001:db8::1 ipproto ipv6-icmp", &c, &r), 0);
	ck_assert_uint_eq(c.ipproto, 58);
	ck_assert_int_eq(parse("lookup 192.0.2.1 ipproto 47", &c, &r), 0);
	ck_assert_uint_eq(c.ipproto, 47);
	ck_assert_int_eq(parse("lookup 192.0.2.1 sport 0 dport 65535", &c, &r), 0);
	ck_assert_uint_eq(c.sport, 0);
	ck_assert_uint_eq(c.dport, 65535);
	ck_assert_uint_eq(c.seen, CTL_K_SPORT | CTL_K_DPORT);
	ck_assert_int_eq(parse("lookup 192.0.2.1 uid 1000", &c, &r), 0);
	ck_assert_uint_eq(c.uid, 1000);
	ck_assert_int_eq(parse("lookup 192.0.2.1 fibmatch", &c, &r), 0);
	ck_assert_uint_eq(c.seen, CTL_K_FIBMATCH);
	ck_assert_uint_eq(c.naddr, 1);
	/* all of them, fibmatch between the address and the rest */
	ck_assert_int_eq(parse("lookup 192.0.2.1 fibmatch from 10.0.0.1 iif v1 oif v0 mark 7 "
			       "dscp 10 ipproto udp sport 53 dport 5353 uid 0 198.51.100.1",
			       &c, &r),
			 0);
	ck_assert_uint_eq(c.naddr, 2);
	ck_assert_uint_eq(c.seen, CTL_K_FROM | CTL_K_IIF | CTL_K_OIF | CTL_K_MARK | CTL_K_DSCP |
					  CTL_K_IPPROTO | CTL_K_SPORT | CTL_K_DPORT | CTL_K_UID |
					  CTL_K_FIBMATCH);
	ck_assert_int_eq(c.has_src, 1);
	ck_assert_str_eq(c.iif, "v1");
	ck_assert_str_eq(c.oif, "v0");
	ck_assert_uint_eq(c.mark, 7);
	ck_assert_uint_eq(c.tos, 10);
	ck_assert_uint_eq(c.ipproto, 17);
	ck_assert_uint_eq(c.sport, 53);
	ck_assert_uint_eq(c.dport, 5353);
	ck_assert_uint_eq(c.uid, 0);
	/* show rules [4|6] */
	ck_assert_int_eq(parse("show rules", &c, &r), 0);
	ck_assert_int_eq(c.op, CTL_SHOW_RULES);
	ck_assert_int_eq(c.family, 0);
	ck_assert_int_eq(parse("show rules 6", &c, &r), 0);
	ck_assert_int_eq(c.family, AF_INET6);
}
END_TEST

/* Each bad flow names its keyword and value. */
START_TEST(test_parse_flow_bad)
{
	static const struct {
		const char *line, *msg;
	} cases[] = {
		{ "lookup 192.0.2.1 mark x", "bad mark: x" },
		{ "lookup 192.0.2.1 mark -1", "bad mark: -1" },
		{ "lookup 192.0.2.1 mark 4294967296", "bad mark: 4294967296" },
		{ "lookup 192.0.2.1 mark", "mark needs a value" },
		{ "lookup 192.0.2.1 mark 1 mark 2", "duplicated keyword: mark" },
		{ "lookup 192.0.2.1 fibmatch fibmatch", "duplicated keyword: fibmatch" },
		{ "lookup 192.0.2.1 from 10.0.0.1 from 10.0.0.2", "duplicated keyword: from" },
		{ "lookup 192.0.2.1 oif", "oif needs a value" },
		{ "lookup 192.0.2.1 oif averyveryverylongname", "bad oif: averyveryverylongname" },
		{ "lookup 192.0.2.1 dscp 64", "bad dscp: 64" },
		{ "lookup 192.0.2.1 dscp ef", "bad dscp: ef" },
		{ "lookup 192.0.2.1 tos 16 dscp 4", "tos and dscp: give one of them" },
		{ "lookup 192.0.2.1 dscp 4 tos 16", "tos and dscp: give one of them" },
		{ "lookup 192.0.2.1 ipproto tcpx", "bad ipproto: tcpx" },
		{ "lookup 192.0.2.1 ipproto 256", "bad ipproto: 256" },
		{ "lookup 192.0.2.1 sport 65536", "bad sport: 65536" },
		{ "lookup 192.0.2.1 dport http", "bad dport: http" },
		{ "lookup 192.0.2.1 dport", "dport needs a value" },
		{ "lookup 192.0.2.1 uid 1e3", "bad uid: 1e3" },
		{ "lookup 192.0.2.1 uid", "uid needs a value" },
		{ "lookup mark 1", "usage: lookup" },
		{ "lookup 192.0.2.1 nosuchkeyword 1", "bad address: nosuchkeyword" },
	};
	struct ctl_cmd c;
	struct ctl_reply r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = parse(cases[i].line, &c, &r);

		ck_assert_msg(rc == 400, "'%s': %d, expected 400", cases[i].line, rc);
		ck_assert_msg(!strcmp(r.msg, cases[i].msg) ||
				  (!strncmp(cases[i].msg, "usage", 5) && strstr(r.msg, cases[i].msg)),
			      "'%s': message '%s', expected '%s'", cases[i].line, r.msg,
			      cases[i].msg);
	}
	ck_assert_int_eq(parse("show rules 5", &c, &r), 400);
	ck_assert_str_eq(r.msg, "usage: show rules [4|6]");
}
END_TEST

START_TEST(test_parse_limits)
{
	char line[CTL_LINE_MAX * 2];
	struct ctl_cmd c;
	struct ctl_reply r;
	size_t n;

	/* CTL_ADDRS_MAX addresses pass, one more is refused. */
	n = (size_t)snprintf(line, sizeof(line), "lookup");
	for (int i = 0; i < CTL_ADDRS_MAX; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " 1.1.1.%d", i);
	ck_assert_int_eq(parse(line, &c, &r), 0);
	ck_assert_uint_eq(c.naddr, CTL_ADDRS_MAX);
	snprintf(line + n, sizeof(line) - n, " 2.2.2.2");
	ck_assert_int_eq(parse(line, &c, &r), 400);
	/* A line longer than the protocol allows. */
	memset(line, 'a', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	ck_assert_int_eq(parse(line, &c, &r), 413);
}
END_TEST

/* The server over a real socket. */

static struct event_base *base;
static struct ctl *ctl;
static char sock_path[108];
static unsigned execs;

static void
exec_cb(const struct ctl_cmd *cmd, struct evbuffer *out, struct ctl_reply *r, void *arg)
{
	execs++;
	if (cmd->op == CTL_LOOKUP) {
		for (unsigned i = 0; i < cmd->naddr; i++)
			evbuffer_add_printf(out, "addr %u\n", i);
	} else if (cmd->op == CTL_METRICS) {
		/* A large answer: back-pressure path. */
		for (int i = 0; i < 200000; i++)
			evbuffer_add_printf(out, "metric_%d 1234567890\n", i);
	} else if (cmd->op == CTL_RELOAD) {
		evbuffer_add_printf(out, "x.yaml:1:2: wrong");
		r->code = 500;
		snprintf(r->msg, sizeof(r->msg), "reload failed");
	}
}

static void
setup(void)
{
	snprintf(sock_path, sizeof(sock_path), "/tmp/ctl_test.%d/fibd.sock", (int)getpid());
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	ctl = ctl_new(base, sock_path, 0600, "", exec_cb, NULL);
	ck_assert_msg(ctl != NULL, "ctl_new: %s", strerror(errno));
	execs = 0;
}

static void
teardown(void)
{
	char dir[108];

	ctl_free(ctl);
	event_base_free(base);
	snprintf(dir, sizeof(dir), "/tmp/ctl_test.%d", (int)getpid());
	rmdir(dir);
}

static int
client(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	strcpy(sun.sun_path, sock_path);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Count final lines ("NNN " at a line start) in buf from *pos on; *pos
 * moves past the last complete line. */
static int
finals(const char *buf, size_t *pos)
{
	int n = 0;
	const char *l = buf + *pos, *nl;

	while ((nl = strchr(l, '\n'))) {
		if (nl - l >= 4 && l[3] == ' ')
			n++;
		l = nl + 1;
	}
	*pos = (size_t)(l - buf);
	return n;
}

/* Run the loop until fd received `want` complete answers (2 s at most). */
static char *
collect(int fd, int want)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	double t0 = now();
	size_t pos = 0;
	int got = 0;

	buf[0] = 0;
	while (now() - t0 < 2.0) {
		ssize_t r;

		event_base_loop(base, EVLOOP_NONBLOCK);
		for (;;) {
			if (cap - len < 4096) {
				cap *= 2;
				buf = realloc(buf, cap);
			}
			r = recv(fd, buf + len, cap - len - 1, 0);
			if (r <= 0)
				break;
			len += (size_t)r;
			buf[len] = 0;
		}
		got += finals(buf, &pos);
		if (got >= want && len && buf[len - 1] == '\n')
			break;
	}
	return buf;
}

static void
send_all(int fd, const char *s, size_t len)
{
	size_t off = 0;
	double t0 = now();

	while (off < len && now() - t0 < 2.0) {
		ssize_t w = send(fd, s + off, len - off, MSG_NOSIGNAL);

		if (w > 0)
			off += (size_t)w;
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	ck_assert_uint_eq(off, len);
}

START_TEST(test_server_answers)
{
	int fd;
	char *buf;
	struct stat st;

	ck_assert_int_eq(stat(sock_path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	fd = client();
	/* Pipelined: three requests in one write, answered in order. */
	send_all(fd, "lookup 1.2.3.4 5.6.7.8\nbogus\nreload\n", 37);
	buf = collect(fd, 3);
	ck_assert_str_eq(buf, "200-addr 0\n200-addr 1\n200 ok\n"
			      "404 unknown command: bogus\n"
			      "500-x.yaml:1:2: wrong\n500 reload failed\n");
	free(buf);
	close(fd);
}
END_TEST

START_TEST(test_server_oversize)
{
	char big[3 * CTL_LINE_MAX];
	char *buf;
	int fd = client();

	/* An oversize line sent in pieces: one 413, the connection stays. */
	memset(big, 'x', sizeof(big));
	send_all(fd, big, sizeof(big));
	send_all(fd, big, sizeof(big));
	send_all(fd, "\nshow summary\n", 14);
	buf = collect(fd, 2);
	ck_assert_str_eq(buf, "413 line too long (at most 1024 bytes)\n200 ok\n");
	free(buf);
	/* Exactly at the limit (1023 bytes and the newline) is accepted. */
	memset(big, ' ', CTL_LINE_MAX - 1);
	memcpy(big, "show summary", 12);
	big[CTL_LINE_MAX - 1] = '\n';
	send_all(fd, big, CTL_LINE_MAX);
	buf = collect(fd, 1);
	ck_assert_str_eq(buf, "200 ok\n");
	free(buf);
	/* One byte more is not, even when it arrives with its newline. */
	big[CTL_LINE_MAX - 1] = ' ';
	big[CTL_LINE_MAX] = '\n';
	send_all(fd, big, CTL_LINE_MAX + 1);
	buf = collect(fd, 1);
	ck_assert_str_eq(buf, "413 line too long (at most 1024 bytes)\n");
	free(buf);
	close(fd);
}
END_TEST

START_TEST(test_server_disconnect_midrequest)
{
	struct ctl_stats st;
	char *buf;
	int fd = client(), fd2;

	send_all(fd, "show sum", 8); /* no newline yet */
	event_base_loop(base, EVLOOP_NONBLOCK);
	close(fd);
	/* A client that asked for a large answer and left before reading it. */
	fd2 = client();
	send_all(fd2, "metrics\n", 8);
	for (int i = 0; i < 10; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
	close(fd2);
	for (int i = 0; i < 50; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		ctl_stats(ctl, &st);
		if (st.clients == 0)
			break;
		usleep(1000);
	}
	ctl_stats(ctl, &st);
	ck_assert_uint_eq(st.clients, 0);
	ck_assert_uint_eq(execs, 1);
	/* The server still answers. */
	fd = client();
	send_all(fd, "show summary\n", 13);
	buf = collect(fd, 1);
	ck_assert_str_eq(buf, "200 ok\n");
	free(buf);
	close(fd);
}
END_TEST

START_TEST(test_server_many_clients)
{
	enum { N = 200 };
	int fd[N];
	struct ctl_stats st;

	for (int i = 0; i < N; i++) {
		fd[i] = client();
		event_base_loop(base, EVLOOP_NONBLOCK); /* accept: the backlog is 128 */
	}
	for (int i = 0; i < N; i++)
		send_all(fd[i], "lookup 1.1.1.1\n", 15);
	for (int i = 0; i < N; i++) {
		char *buf = collect(fd[i], 1);

		ck_assert_str_eq(buf, "200-addr 0\n200 ok\n");
		free(buf);
	}
	ctl_stats(ctl, &st);
	ck_assert_uint_eq(st.clients, N);
	ck_assert_uint_eq(st.requests, N);
	for (int i = 0; i < N; i++)
		close(fd[i]);
}
END_TEST

START_TEST(test_server_large_answer)
{
	int fd = client();
	char *buf;
	size_t lines = 0;

	send_all(fd, "metrics\n", 8);
	buf = collect(fd, 1);
	for (char *p = buf; (p = strchr(p, '\n')); p++)
		lines++;
	ck_assert_uint_eq(lines, 200001);
	ck_assert_ptr_nonnull(strstr(buf, "200-metric_199999 1234567890\n200 ok\n"));
	free(buf);
	close(fd);
}
END_TEST

START_TEST(test_server_live_socket)
{
	/* A second server on the same path is refused: one daemon answers. */
	struct ctl *c2 = ctl_new(base, sock_path, 0600, "", exec_cb, NULL);

	ck_assert_ptr_null(c2);
	ck_assert_int_eq(errno, EADDRINUSE);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ctl");
	TCase *tp = tcase_create("parse");
	TCase *ts = tcase_create("server");

	tcase_set_timeout(tp, 60);
	tcase_set_timeout(ts, 120); /* loaded machines */
	signal(SIGPIPE, SIG_IGN); /* as fibd: a client gone is an EPIPE */

	tcase_add_test(tp, test_parse_good);
	tcase_add_test(tp, test_parse_bad);
	tcase_add_test(tp, test_parse_flow);
	tcase_add_test(tp, test_parse_flow_bad);
	tcase_add_test(tp, test_parse_limits);
	tcase_add_checked_fixture(ts, setup, teardown);
	tcase_add_test(ts, test_server_answers);
	tcase_add_test(ts, test_server_oversize);
	tcase_add_test(ts, test_server_disconnect_midrequest);
	tcase_add_test(ts, test_server_many_clients);
	tcase_add_test(ts, test_server_large_answer);
	tcase_add_test(ts, test_server_live_socket);
	suite_add_tcase(s, tp);
	suite_add_tcase(s, ts);
	return ck_run(s, CK_FORK_GETENV);
}
