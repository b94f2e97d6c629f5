/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ctl, the control socket of fibd
 *
 * A UNIX stream socket (conf: control.socket, mode, group) speaking a line
 * protocol after SMTP and FTP: the client sends one command a line (at most
 * CTL_LINE_MAX bytes, newline included), the server answers with any number
 * of data lines "NNN-text" and one final line "NNN text", where NNN is the
 * status code of the answer:
 *
 *   client: lookup 192.0.2.1
 *   server: 200-192.0.2.1 192.0.2.0/24 unicast via 10.0.0.1 dev eth0
 *   server: 200 ok
 *
 *   2xx  done (200 ok)
 *   4xx  the request is wrong: 400 bad arguments, 404 unknown command,
 *        413 line too long (the rest of the line is discarded, the
 *        connection stays open)
 *   5xx  the daemon cannot do it: 500 failed (reload with errors, the
 *        errors as data lines), 503 not available (not ready yet, no flow
 *        cache, too many clients)
 *
 * Requests on one connection are answered in order, so a client may send
 * many before reading (fibctl lookup - does). Every connection is a
 * libevent bufferevent on the main thread: nothing blocks, a client that
 * stops reading is not read from until its output drains below
 * CTL_OUT_HIGH, one that disconnects mid-request is freed at once.
 *
 * ctl_parse() turns a line into a struct ctl_cmd without I/O (unit-tested
 * on its own); the server hands each parsed command to the exec callback
 * the daemon registered, which writes data lines into an evbuffer and
 * returns the status.
 */
#ifndef DAEMON_CTL_H
#define DAEMON_CTL_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#include "fib/fib.h"

struct event_base;
struct evbuffer;
struct ctl;

#define CTL_LINE_MAX 1024         /* request bytes, newline included */
#define CTL_ADDRS_MAX 64          /* addresses in one lookup request */
#define CTL_CLIENTS_MAX 1024      /* connections at once */
#define CTL_OUT_HIGH (4u << 20)   /* stop reading a client above this output */
#define CTL_STREAM_LOW (64u << 10) /* a streamed answer's next slice below this output */

enum ctl_op {
	CTL_SHOW_SUMMARY,
	CTL_SHOW_TRIE,
	CTL_SHOW_CACHE,
	CTL_SHOW_ROUTES,
	CTL_SHOW_CONFIG,
	CTL_LOOKUP,
	CTL_FLUSH_CACHE,
	CTL_RELOAD,
	CTL_METRICS,
	CTL_HELP,
	CTL_COMPACT,
	CTL_SHOW_RULES,
};

/* The keywords of a lookup (`ip route get`'s), in ctl_cmd.seen: each may
 * be given once; CTL_K_DSCP says tos holds a DSCP. */
#define CTL_K_FROM     0x001
#define CTL_K_IIF      0x002
#define CTL_K_OIF      0x004
#define CTL_K_MARK     0x008
#define CTL_K_TOS      0x010
#define CTL_K_DSCP     0x020
#define CTL_K_IPPROTO  0x040
#define CTL_K_SPORT    0x080
#define CTL_K_DPORT    0x100
#define CTL_K_UID      0x200
#define CTL_K_FIBMATCH 0x400

struct ctl_addr {
	uint8_t family;
	union fib_addr a;
};

struct ctl_cmd {
	enum ctl_op op;
	int family;           /* show trie, routes, rules: 0 (both), AF_INET, AF_INET6 */
	int has_prefix;       /* show routes PREFIX */
	uint8_t plen;
	union fib_addr prefix;
	unsigned naddr;       /* lookup */
	struct ctl_addr addr[CTL_ADDRS_MAX];
	/* lookup's flow, for every address: `ip route get`'s keywords */
	unsigned seen;        /* CTL_K_* given */
	int has_src;
	struct ctl_addr src;
	uint8_t tos;          /* tos, or dscp (0..63) with CTL_K_DSCP */
	uint8_t ipproto;
	uint16_t sport, dport;
	uint32_t mark, uid;
	char iif[IFNAMSIZ];   /* "" when not given */
	char oif[IFNAMSIZ];   /* "" when not given */
};

/*
 * The status and message of a result, with data lines in out. An answer
 * too large to build at once (show routes of a full table) is streamed:
 * the exec callback sets more and state (release too, when state needs
 * freeing). After the data lines written by exec, the server calls
 * more(state, out, r) whenever the client's output has drained below
 * CTL_STREAM_LOW, once per turn of the loop: it appends the next slice of
 * data lines (a bounded amount of time and bytes) and returns non-zero
 * while there is more to come, 0 with r->msg set when done. The client's
 * next requests wait meanwhile. release(state) is called once, at the end
 * or when the client goes away first. The code must be known at the start
 * (200): data lines carry it.
 */
struct ctl_reply {
	int code;
	char msg[256];
	int (*more)(void *state, struct evbuffer *out, struct ctl_reply *r);
	void (*release)(void *state);
	void *state;
};

/*
 * Parse one request line (no newline). Returns 0, or a status code (400,
 * 404) with a message in r. Context: any; no I/O.
 */
int ctl_parse(const char *line, struct ctl_cmd *cmd, struct ctl_reply *r);

/*
 * Execute a command: append data lines (each ending in '\n') to out and
 * set r (r->code is 200 and r->msg "ok" on entry). Context: main loop.
 */
typedef void (*ctl_exec_cb)(const struct ctl_cmd *cmd, struct evbuffer *out, struct ctl_reply *r,
			    void *arg);

/*
 * Listen on path (a stale socket is replaced, a live one is -EADDRINUSE),
 * chmod to mode, chown to group ("" keeps the daemon's group). NULL with
 * errno set on failure. Context: main loop.
 */
struct ctl *ctl_new(struct event_base *base, const char *path, unsigned mode, const char *group,
		    ctl_exec_cb exec, void *arg);
/* Close every client and the socket, unlink it. Context: main loop. */
void ctl_free(struct ctl *ctl);
/*
 * Disconnect clients that complete no request line (or, with an answer
 * pending, read nothing of it) for ms milliseconds; 0 turns it off (the
 * default). Existing clients start a new period. Context: main loop.
 */
void ctl_set_idle_timeout(struct ctl *ctl, unsigned ms);

struct ctl_stats {
	uint64_t connections;   /* accepted, total */
	uint64_t requests;
	uint64_t errors;        /* 4xx and 5xx answers */
	uint64_t oversize;      /* 413 answers */
	uint64_t refused;       /* over CTL_CLIENTS_MAX */
	uint64_t refused_fds;   /* refused: fibd out of file descriptors */
	uint64_t fd_episodes;   /* times accept ran out of descriptors */
	uint64_t accept_errors; /* failed accept() calls (not EAGAIN) */
	uint64_t pauses;        /* listener paused after an accept error */
	uint64_t idle_closed;   /* disconnected by the idle timeout */
	unsigned clients;       /* connected now */
	int starved;            /* out of descriptors now (until an accept works) */
	int accept_errno;       /* of the last failed accept() */
};
/* Context: main loop. */
void ctl_stats(const struct ctl *ctl, struct ctl_stats *st);

#endif
