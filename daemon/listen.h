/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: listen, fibd's UNIX listeners and their spare descriptor
 *
 * One set-up for every UNIX socket fibd listens on (the control socket,
 * the lookup socket): the parent directory when systemd did not make it,
 * a probe that refuses a path a live daemon answers on and replaces a
 * stale socket, bind and listen, then group and mode.
 *
 * One way to survive running out of descriptors, for those two and the
 * metrics listener (libev's advice): keep a spare descriptor
 * (/dev/null); when accept() fails with EMFILE or ENFILE, close the
 * spare, accept the waiting clients into its slot one by one, tell each
 * a short message (or nothing) and close it, then open the spare again.
 * The clients get an answer instead of a hang and the listener is quiet.
 * The caller counts, pauses and logs.
 *
 * The spares share the process's descriptor table with every thread's
 * accept(): a lookup thread accepting while the main loop has given up a
 * spare would take its slot, and that listener would lose its spare (its
 * clients left hanging until a descriptor frees). So the refusals and the
 * lookup threads' accepts take one lock (listen_accept); the main loop's
 * own accepts cannot meet its refusals. A spare lost anyway (a descriptor
 * opened elsewhere in the window) is opened again at the next refusal
 * that finds one free.
 */
#ifndef FIBD_LISTEN_H
#define FIBD_LISTEN_H

#include <stdint.h>

#define LISTEN_BACKLOG 128
#define LISTEN_MKDIR   0x1 /* create the parent directory (0755) if missing */

/*
 * Listen on the UNIX socket path (type SOCK_STREAM or SOCK_SEQPACKET):
 * -EADDRINUSE when a live listener answers there, else a stale socket is
 * replaced; group ("" or NULL: unchanged) and mode applied. The socket
 * is non-blocking and close-on-exec. Returns the descriptor or -errno
 * (the path removed again on a late failure). Context: any.
 */
int listen_unix(const char *path, int type, unsigned mode, const char *group, unsigned flags);

/* Close a listener of listen_unix and remove its path. Context: any. */
void listen_unix_close(int fd, const char *path);

/* The spare descriptor: -1 while given up (or not opened). */
struct listen_spare {
	int fd;
};

/* Open the spare. Returns 0 or -errno. Context: owner (of s). */
int listen_spare_open(struct listen_spare *s);

/* Open the spare again if an episode left it closed. Context: owner (of s). */
void listen_spare_refill(struct listen_spare *s);

/* Close the spare for good. Context: owner (of s). */
void listen_spare_close(struct listen_spare *s);

/* accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), never inside a
 * refusal's window. Returns the descriptor, or -1 with errno. Context:
 * any thread but the main loop (whose accepts libevent makes). */
int listen_accept(int lfd);

/*
 * Out of descriptors on lfd: give up the spare, accept and close at most
 * max waiting clients (each told msg first, if not NULL), take the spare
 * again. Adds the clients refused to *refused. Returns 1 when the
 * backlog is empty (the listener will be quiet), 0 when it could not be
 * emptied (no spare, or another error). Takes listen_accept's lock.
 * Context: owner (of s).
 */
int listen_spare_refuse(struct listen_spare *s, int lfd, unsigned max, const char *msg,
			uint64_t *refused);

#endif
