/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: listen.c, fibd's UNIX listeners and their spare descriptor
 *
 * See listen.h. The stale-socket probe connects with the listener's own
 * socket type: a SOCK_STREAM probe of a SOCK_SEQPACKET socket fails
 * (EPROTOTYPE) even when a daemon answers there.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/listen.h"

/* The runtime directory, when systemd did not make it. */
static int
listen_mkdir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], *slash;

	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* -EADDRINUSE if a daemon answers on sun, else remove a stale socket. */
static int
listen_unlink_stale(const struct sockaddr_un *sun, int type)
{
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	int live;

	if (fd < 0)
		return -errno;
	live = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0;
	close(fd);
	if (live)
		return -EADDRINUSE;
	if (unlink(sun->sun_path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static int
listen_owner(const char *path, unsigned mode, const char *group)
{
	if (group && group[0]) {
		struct group *gr;

		errno = 0;
		gr = getgrnam(group);
		if (!gr)
			return errno ? -errno : -ENOENT;
		if (chown(path, (uid_t)-1, gr->gr_gid) < 0)
			return -errno;
	}
	if (chmod(path, mode) < 0)
		return -errno;
	return 0;
}

int
listen_unix(const char *path, int type, unsigned mode, const char *group, unsigned flags)
{
	struct sockaddr_un sun;
	int fd, err;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	if ((flags & LISTEN_MKDIR) && (err = listen_mkdir(path)) < 0)
		return err;
	if ((err = listen_unlink_stale(&sun, type)) < 0)
		return err;
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (listen(fd, LISTEN_BACKLOG) < 0 || (err = listen_owner(path, mode, group)) < 0) {
		err = err ? err : -errno;
		listen_unix_close(fd, path);
		return err;
	}
	return fd;
}

void
listen_unix_close(int fd, const char *path)
{
	if (fd < 0)
		return;
	close(fd);
	if (path && path[0])
		unlink(path);
}

int
listen_spare_open(struct listen_spare *s)
{
	s->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return s->fd < 0 ? -errno : 0;
}

void
listen_spare_close(struct listen_spare *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Serialises the refusals' windows (spare closed) with the lookup
 * threads' accepts (listen.h). */
static pthread_mutex_t listen_lock = PTHREAD_MUTEX_INITIALIZER;

static void
listen_spare_refill_locked(struct listen_spare *s)
{
	if (s->fd < 0)
		s->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void
listen_spare_refill(struct listen_spare *s)
{
	if (s->fd >= 0)
		return;
	pthread_mutex_lock(&listen_lock);
	listen_spare_refill_locked(s);
	pthread_mutex_unlock(&listen_lock);
}

int
listen_accept(int lfd)
{
	int fd, err;

	pthread_mutex_lock(&listen_lock);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	err = errno;
	pthread_mutex_unlock(&listen_lock);
	errno = err;
	return fd;
}

int
listen_spare_refuse(struct listen_spare *s, int lfd, unsigned max, const char *msg,
		    uint64_t *refused)
{
	size_t len = msg ? strlen(msg) : 0;
	int fd, err = 0;

	pthread_mutex_lock(&listen_lock);
	listen_spare_refill_locked(s); /* one lost earlier, if a slot is free now */
	if (s->fd < 0) {
		pthread_mutex_unlock(&listen_lock);
		return 0;
	}
	close(s->fd);
	s->fd = -1;
	for (unsigned n = 0; n < max; n++) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			err = errno;
			break;
		}
		if (len && write(fd, msg, len) < 0) {
			/* the client goes away either way */
		}
		close(fd);
		(*refused)++;
	}
	listen_spare_refill_locked(s);
	pthread_mutex_unlock(&listen_lock);
	return err == EAGAIN || err == EWOULDBLOCK;
}
