/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: tests of fibd's UNIX listener set-up and spare descriptor
 * (daemon/listen)
 *
 * listen_unix on real sockets in a temporary directory: a stale socket
 * (nobody listening) is replaced, a live one is refused with EADDRINUSE
 * and left alone, the mode and group are applied, the parent directory is
 * made with LISTEN_MKDIR; then the spare descriptor: with the process at
 * its descriptor limit, accept() fails with EMFILE, and
 * listen_spare_refuse still accepts and closes the waiting clients (who
 * read its message, then EOF) and takes its spare back.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/listen.h"
#include "tests/unit/ck_run.h"

static char dir[64];
static char path[128];

static void
setup(void)
{
	strcpy(dir, "/tmp/listen_test.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sock", dir);
}

static void
teardown(void)
{
	char sub[160];

	unlink(path);
	snprintf(sub, sizeof(sub), "%s/run/sock", dir);
	unlink(sub);
	snprintf(sub, sizeof(sub), "%s/run", dir);
	rmdir(sub);
	rmdir(dir);
}

static int
client(const char *p, int type)
{
	struct sockaddr_un sun;
	int fd = socket(AF_UNIX, type, 0);

	ck_assert_int_ge(fd, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, p);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

START_TEST(test_stale_replaced)
{
	int fd, c;

	/* a socket file nobody listens on, as a crashed daemon leaves it */
	fd = listen_unix(path, SOCK_STREAM, 0600, NULL, 0);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(access(path, F_OK), 0);
	fd = listen_unix(path, SOCK_STREAM, 0600, NULL, 0);
	ck_assert_int_ge(fd, 0);
	c = client(path, SOCK_STREAM);
	ck_assert_int_ge(c, 0);
	close(c);
	listen_unix_close(fd, path);
	ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

START_TEST(test_live_refused)
{
	int types[] = {SOCK_STREAM, SOCK_SEQPACKET};

	for (unsigned i = 0; i < 2; i++) {
		int fd = listen_unix(path, types[i], 0600, NULL, 0), c;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(listen_unix(path, types[i], 0600, NULL, 0), -EADDRINUSE);
		/* the first listener still answers */
		c = client(path, types[i]);
		ck_assert_int_ge(c, 0);
		close(c);
		listen_unix_close(fd, path);
	}
}
END_TEST

START_TEST(test_mode_owner)
{
	struct group *gr = getgrgid(getegid());
	struct stat st;
	int fd;

	ck_assert_ptr_nonnull(gr);
	fd = listen_unix(path, SOCK_STREAM, 0660, gr->gr_name, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
	ck_assert_uint_eq(st.st_gid, gr->gr_gid);
	listen_unix_close(fd, path);
	fd = listen_unix(path, SOCK_SEQPACKET, 0600, "", 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	listen_unix_close(fd, path);
	/* an unknown group: refused, nothing left behind */
	ck_assert_int_lt(listen_unix(path, SOCK_STREAM, 0600, "no-such-group-fibd", 0), 0);
	ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

START_TEST(test_mkdir)
{
	char sub[160];
	struct stat st;
	int fd;

	snprintf(sub, sizeof(sub), "%s/run/sock", dir);
	ck_assert_int_eq(listen_unix(sub, SOCK_STREAM, 0600, NULL, 0), -ENOENT);
	fd = listen_unix(sub, SOCK_STREAM, 0600, NULL, LISTEN_MKDIR);
	ck_assert_int_ge(fd, 0);
	snprintf(sub, sizeof(sub), "%s/run", dir);
	ck_assert_int_eq(stat(sub, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	snprintf(sub, sizeof(sub), "%s/run/sock", dir);
	listen_unix_close(fd, sub);
}
END_TEST

START_TEST(test_spare_emfile)
{
	static const char msg[] = "503 out of file descriptors\n";
	struct listen_spare spare;
	struct rlimit rl, low;
	uint64_t refused = 0;
	int lfd, c[3], fill[64], nfill = 0, fd;
	char buf[64];
	ssize_t n;

	lfd = listen_unix(path, SOCK_STREAM, 0600, NULL, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(listen_spare_open(&spare), 0);
	for (int i = 0; i < 3; i++) {
		c[i] = client(path, SOCK_STREAM);
		ck_assert_int_ge(c[i], 0);
	}
	/* Use up every descriptor below a low limit. */
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	low = rl;
	low.rlim_cur = (rlim_t)spare.fd + 8;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (nfill < 64 && (fd = dup(0)) >= 0)
		fill[nfill++] = fd;
	ck_assert_int_lt(accept(lfd, NULL, NULL), 0);
	ck_assert_int_eq(errno, EMFILE);
	/* The spare's slot lets every waiting client be refused. */
	ck_assert_int_eq(listen_spare_refuse(&spare, lfd, 64, msg, &refused), 1);
	ck_assert_uint_eq(refused, 3);
	ck_assert_int_ge(spare.fd, 0);
	ck_assert_int_lt(accept(lfd, NULL, NULL), 0);
	ck_assert_int_eq(errno, EMFILE); /* the spare took its slot back */
	/* Without the spare (still at the limit): nothing to give up. */
	listen_spare_close(&spare);
	fd = dup(0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(listen_spare_refuse(&spare, lfd, 64, msg, &refused), 0);
	close(fd);
	while (nfill)
		close(fill[--nfill]);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	for (int i = 0; i < 3; i++) {
		n = read(c[i], buf, sizeof(buf));
		ck_assert_int_eq(n, (ssize_t)sizeof(msg) - 1);
		ck_assert_int_eq(memcmp(buf, msg, sizeof(msg) - 1), 0);
		ck_assert_int_eq(read(c[i], buf, sizeof(buf)), 0); /* EOF */
		close(c[i]);
	}
	listen_spare_refill(&spare);
	ck_assert_int_ge(spare.fd, 0);
	listen_spare_close(&spare);
	listen_unix_close(lfd, path);
}
END_TEST

static Suite *
listen_suite(void)
{
	Suite *s = suite_create("listen");
	TCase *tc = tcase_create("listen");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_stale_replaced);
	tcase_add_test(tc, test_live_refused);
	tcase_add_test(tc, test_mode_owner);
	tcase_add_test(tc, test_mkdir);
	tcase_add_test(tc, test_spare_emfile);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(listen_suite(), CK_FORK_GETENV);
}
