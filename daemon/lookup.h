/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: lookup, the batch lookup service of fibd
 *
 * A SOCK_SEQPACKET UNIX socket served by N lookup threads, each an RCU
 * reader of the FIB (fib_thread_online). The protocol and the client API
 * are in lookup_proto.h. Every thread polls the listening socket
 * (non-blocking accept: whichever thread wins takes the client), its own
 * clients (at most LOOKUP_THREAD_CLIENTS) and an eventfd that lookup_free
 * uses to stop it. A request is answered with one send; a client whose
 * socket is full (it sent requests without reading the answers) is
 * disconnected rather than blocking the thread, and so is a client that
 * sends no request for the idle timeout (lookup_set_idle_timeout).
 *
 *   listen fd ──accept──> thread k: poll(listen, efd, clients...)
 *                              recv -> fib_lookup{4,6}_batch_rcu -> send
 *                                      (flow_lookup_batch_rcu: LOOKUP_Q_CACHE)
 *                                      every waiting request, per wakeup
 *                                   v2: fib_resolve_batch_rcu -> record ids
 *                                       + records new to the connection
 */
#ifndef DAEMON_LOOKUP_H
#define DAEMON_LOOKUP_H

#include <stdint.h>

struct fib;
struct flow_cache;
struct lookup;

#define LOOKUP_THREADS_MAX 64
#define LOOKUP_THREAD_CLIENTS 256

/*
 * Listen on path (a stale socket is replaced, a live one is EADDRINUSE),
 * chmod mode, chown group ("" keeps it) and start threads readers. table
 * answers requests with table 0. NULL with errno set. Context: main loop.
 */
struct lookup *lookup_new(struct fib *fib, const char *path, unsigned mode, const char *group,
			  unsigned threads, uint32_t table);
/* Stop and join the threads, close every socket, unlink the path.
 * Context: main loop, before fib_free. */
void lookup_free(struct lookup *l);
/* Answers carry LOOKUP_F_READY from now on. Context: any. */
void lookup_set_ready(struct lookup *l, int ready);

/*
 * Answer through fc from now on (NULL: straight from the FIB). The store
 * is a release: a thread that loads the pointer inside its read section
 * sees the cache fully built. A replaced cache is still in use until a
 * grace period has passed (fibd_grace: synchronize_rcu); only then
 * flow_cache_stop and flow_cache_free it. Context: main loop.
 */
void lookup_set_cache(struct lookup *l, struct flow_cache *fc);

/*
 * Disconnect clients that send no request for ms milliseconds (checked
 * on each thread's poll return, at least once a second: a client goes
 * within a second after it); 0 turns it off (the default). Connected
 * clients start a new period. Context: main loop.
 */
void lookup_set_idle_timeout(struct lookup *l, unsigned ms);

/* 1 if every thread came back from poll (1 s timeout) within max_age
 * seconds: the watchdog's check. Context: any. */
int lookup_alive(const struct lookup *l, unsigned max_age);

#define LOOKUP_TYPES 16 /* decisions[] by enum fib_type; other types count as 0 */

struct lookup_stats {
	uint64_t requests;  /* of both versions */
	uint64_t addresses; /* version 1 */
	uint64_t flows;     /* version 2 */
	uint64_t decisions[LOOKUP_TYPES]; /* version 2 answers by route type, 0: no route */
	uint64_t decision_errors; /* version 2 answers with the kernel's errno */
	uint64_t records;   /* version 2 records sent */
	uint64_t epochs;    /* version 2 record epochs begun (a connection's first included) */
	uint64_t errors;
	uint64_t clients;  /* accepted, total */
	uint64_t dropped;  /* disconnected: socket full */
	uint64_t idle_closed;   /* disconnected: no request for the idle timeout */
	uint64_t refused_fds;   /* refused: fibd out of file descriptors */
	uint64_t accept_errors; /* failed accept() calls (not EAGAIN) */
	uint64_t fd_episodes;   /* times accept ran out of descriptors */
	int starved;            /* out of descriptors now (until an accept works) */
	int accept_errno;       /* of the last failed accept() */
};
/* Sums over the threads (relaxed reads). Context: any but a lookup
 * thread. */
void lookup_stats(const struct lookup *l, struct lookup_stats *st);

#endif
