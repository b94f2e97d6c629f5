/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ctl implementation
 *
 * One listener event and one bufferevent per client, all on the main
 * thread. Per client, reading goes line by line: a complete line is parsed
 * and executed at once, its whole answer appended to the output buffer; a
 * partial line longer than CTL_LINE_MAX switches the client to "discard"
 * until the next newline and answers 413 once, so an oversize request
 * costs no memory and keeps the request/answer pairing. A read watermark
 * is not enough for output back-pressure (one small request can produce a
 * large answer), so reading is disabled while the output holds more than
 * CTL_OUT_HIGH and enabled again by the write callback.
 *
 * Streamed answers (struct ctl_reply's more, show routes of a full
 * table): the answer is produced in slices, each only once the client's
 * output has drained below CTL_STREAM_LOW (the write callback's low
 * watermark, so a slice follows the socket becoming writable), one slice
 * per turn of the loop (a slice that left the output below the mark is
 * followed by a zero timer, after the loop has polled everything else).
 * A slow reader holds at most CTL_STREAM_LOW plus one slice of memory and
 * never the loop; its next requests are not read until the answer ends.
 *
 * Out of file descriptors (EMFILE, ENFILE): accept() fails and the
 * listener stays readable, so retrying at once spins and, without an
 * error callback, libevent logs every failure. Instead, after libev's
 * advice: a spare descriptor (/dev/null) is closed, the waiting clients
 * are accepted into its slot one by one, told "503 out of file
 * descriptors" and closed, and the spare is opened again; the clients
 * get an answer instead of a hang and the listener is quiet. If the spare
 * is gone (another thread took the slot), the listener is paused for
 * 100 ms, doubling to 1 s, and re-enabled by a timer. The next
 * successful accept ends the episode. Nothing is logged here: ctl_stats
 * says whether the socket is starved, with counters, and fibd logs one
 * line when an episode starts and one when it ends (fibd_starve_tick).
 *
 * Idle clients: a client that completes no request line for
 * idle_timeout (conf control.idle_timeout) is disconnected, so stalled
 * clients cannot hold the CTL_CLIENTS_MAX slots forever. The per-client
 * timer is re-armed by every complete line; while an answer is still
 * being written the bufferevent's write timeout (the same value) judges
 * the client instead.
 *
 *   listener --accept--> client (bufferevent) --line--> ctl_parse
 *                                                          |
 *     "NNN-data" ... "NNN msg" <----- prefix ------ exec callback
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <time.h>

#include "daemon/ctl.h"
#include "daemon/listen.h"

#define CTL_PAUSE_MIN_MS 100  /* listener pause when out of descriptors */
#define CTL_PAUSE_MAX_MS 1000 /* ... doubling up to this */
#define CTL_REFUSE_BATCH 64   /* clients refused through the spare a turn */

struct ctl_client {
	struct ctl *ctl;
	struct bufferevent *bev;
	struct event *idle;  /* the idle timeout (pending only while idle_ms) */
	struct event *kick;  /* the next slice of a streamed answer */
	struct ctl_reply *stream; /* the answer being streamed, or NULL */
	struct ctl_client *next, *prev;
	int discard; /* inside an oversize line */
};

struct ctl {
	struct event_base *base;
	struct evconnlistener *lis;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	ctl_exec_cb exec;
	void *arg;
	struct ctl_client *clients;
	struct evbuffer *data;
	struct ctl_stats st;
	unsigned idle_ms;      /* 0: no idle timeout */
	struct listen_spare spare; /* given up to refuse clients */
	struct event *resume;  /* re-enables a paused listener */
	unsigned pause_ms;     /* next pause, CTL_PAUSE_MIN_MS..CTL_PAUSE_MAX_MS */
};

/* Parser. */

static void
ctl_set(struct ctl_reply *r, int code, const char *fmt, ...)
{
	va_list ap;

	r->code = code;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
}

static int
ctl_addr_parse(const char *s, struct ctl_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = strchr(s, ':') ? AF_INET6 : AF_INET;
	return inet_pton(a->family, s, a->a.b) == 1 ? 0 : -EINVAL;
}

/* [4|6] after show WHAT. */
static void
ctl_args_family(const char *what, char **tok, unsigned n, struct ctl_cmd *cmd, struct ctl_reply *r)
{
	if (n == 1 && !strcmp(tok[0], "4"))
		cmd->family = AF_INET;
	else if (n == 1 && !strcmp(tok[0], "6"))
		cmd->family = AF_INET6;
	else if (n != 0)
		ctl_set(r, 400, "usage: show %s [4|6]", what);
}

/* show trie [4|6] */
static void
ctl_args_trie(char **tok, unsigned n, struct ctl_cmd *cmd, struct ctl_reply *r)
{
	ctl_args_family("trie", tok, n, cmd, r);
}

/* show rules [4|6] */
static void
ctl_args_rules(char **tok, unsigned n, struct ctl_cmd *cmd, struct ctl_reply *r)
{
	ctl_args_family("rules", tok, n, cmd, r);
}

/* show routes [PREFIX] */
static void
ctl_args_routes(char **tok, unsigned n, struct ctl_cmd *cmd, struct ctl_reply *r)
{
	uint8_t fam = 0;

	if (n == 1) {
		if (fib_prefix_parse(tok[0], &cmd->prefix, &cmd->plen, &fam) < 0)
			ctl_set(r, 400, "bad prefix: %.64s", tok[0]);
		cmd->family = fam;
		cmd->has_prefix = 1;
	} else if (n != 0) {
		ctl_set(r, 400, "usage: show routes [PREFIX]");
	}
}

/* An unsigned number of at most max (decimal, 0x hex or 0 octal, as
 * `ip` reads them). Returns 0 or -1. */
static int
ctl_num(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 0);
	return *end || errno || *v > max ? -1 : 0;
}

static int
ctl_kw_from(const char *val, struct ctl_cmd *cmd)
{
	if (ctl_addr_parse(val, &cmd->src) < 0)
		return -1;
	cmd->has_src = 1;
	return 0;
}

static int
ctl_kw_ifname(const char *val, char *name)
{
	if (strlen(val) >= IFNAMSIZ)
		return -1;
	strcpy(name, val);
	return 0;
}

static int
ctl_kw_iif(const char *val, struct ctl_cmd *cmd)
{
	return ctl_kw_ifname(val, cmd->iif);
}

static int
ctl_kw_oif(const char *val, struct ctl_cmd *cmd)
{
	return ctl_kw_ifname(val, cmd->oif);
}

static int
ctl_kw_mark(const char *val, struct ctl_cmd *cmd)
{
	unsigned long v;

	if (ctl_num(val, UINT32_MAX, &v) < 0)
		return -1;
	cmd->mark = (uint32_t)v;
	return 0;
}

static int
ctl_kw_uid(const char *val, struct ctl_cmd *cmd)
{
	unsigned long v;

	if (ctl_num(val, UINT32_MAX, &v) < 0)
		return -1;
	cmd->uid = (uint32_t)v;
	return 0;
}

static int
ctl_kw_tos(const char *val, struct ctl_cmd *cmd)
{
	unsigned long v;

	if (ctl_num(val, 255, &v) < 0)
		return -1;
	cmd->tos = (uint8_t)v;
	return 0;
}

static int
ctl_kw_dscp(const char *val, struct ctl_cmd *cmd)
{
	unsigned long v;

	if (ctl_num(val, 63, &v) < 0)
		return -1;
	cmd->tos = (uint8_t)v;
	return 0;
}

/* The protocol names `ip route get ipproto` is mostly given; else a
 * number (fibd reads no /etc/protocols). */
static int
ctl_kw_ipproto(const char *val, struct ctl_cmd *cmd)
{
	static const struct {
		const char *name;
		uint8_t proto;
	} names[] = {
	    {"icmp", 1}, {"tcp", 6}, {"udp", 17}, {"ipv6-icmp", 58}, {"icmpv6", 58}, {"sctp", 132},
	};
	unsigned long v;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(val, names[i].name)) {
			cmd->ipproto = names[i].proto;
			return 0;
		}
	if (ctl_num(val, 255, &v) < 0)
		return -1;
	cmd->ipproto = (uint8_t)v;
	return 0;
}

static int
ctl_kw_sport(const char *val, struct ctl_cmd *cmd)
{
	unsigned long v;

	if (ctl_num(val, 65535, &v) < 0)
		return -1;
	cmd->sport = (uint16_t)v;
	return 0;
}

static int
ctl_kw_dport(const char *val, struct ctl_cmd *cmd)
{
	unsigned long v;

	if (ctl_num(val, 65535, &v) < 0)
		return -1;
	cmd->dport = (uint16_t)v;
	return 0;
}

/*
 * The keywords of a lookup, `ip route get`'s: each once, with a value
 * but fibmatch. A bad value is answered "bad WHAT: VALUE".
 */
static const struct {
	const char *word;
	unsigned bit;
	int (*parse)(const char *val, struct ctl_cmd *cmd); /* NULL: no value */
	const char *what;
} ctl_lookup_kws[] = {
    {"from", CTL_K_FROM, ctl_kw_from, "source address"},
    {"iif", CTL_K_IIF, ctl_kw_iif, "iif"},
    {"oif", CTL_K_OIF, ctl_kw_oif, "oif"},
    {"mark", CTL_K_MARK, ctl_kw_mark, "mark"},
    {"tos", CTL_K_TOS, ctl_kw_tos, "tos"},
    {"dscp", CTL_K_DSCP, ctl_kw_dscp, "dscp"},
    {"ipproto", CTL_K_IPPROTO, ctl_kw_ipproto, "ipproto"},
    {"sport", CTL_K_SPORT, ctl_kw_sport, "sport"},
    {"dport", CTL_K_DPORT, ctl_kw_dport, "dport"},
    {"uid", CTL_K_UID, ctl_kw_uid, "uid"},
    {"fibmatch", CTL_K_FIBMATCH, NULL, NULL},
};

#define CTL_NKWS (sizeof(ctl_lookup_kws) / sizeof(ctl_lookup_kws[0]))

/*
 * lookup ADDR... [from A] [iif NAME] [oif NAME] [mark N] [tos N|dscp N]
 * [ipproto P] [sport N] [dport N] [uid N] [fibmatch]: the keywords apply
 * to every address.
 */
static void
ctl_args_lookup(char **tok, unsigned n, struct ctl_cmd *cmd, struct ctl_reply *r)
{
	for (unsigned i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < CTL_NKWS && strcmp(tok[i], ctl_lookup_kws[k].word); k++)
			;
		if (k < CTL_NKWS) {
			unsigned bit = ctl_lookup_kws[k].bit;

			if (cmd->seen & bit) {
				ctl_set(r, 400, "duplicated keyword: %s", tok[i]);
				return;
			}
			if ((cmd->seen & (CTL_K_TOS | CTL_K_DSCP)) &&
			    (bit & (CTL_K_TOS | CTL_K_DSCP))) {
				ctl_set(r, 400, "tos and dscp: give one of them");
				return;
			}
			cmd->seen |= bit;
			if (!ctl_lookup_kws[k].parse)
				continue;
			if (i + 1 >= n) {
				ctl_set(r, 400, "%s needs a value", tok[i]);
				return;
			}
			i++;
			if (ctl_lookup_kws[k].parse(tok[i], cmd) < 0) {
				ctl_set(r, 400, "bad %s: %.64s", ctl_lookup_kws[k].what, tok[i]);
				return;
			}
			continue;
		}
		if (cmd->naddr == CTL_ADDRS_MAX) {
			ctl_set(r, 400, "at most %d addresses a request", CTL_ADDRS_MAX);
			return;
		}
		if (ctl_addr_parse(tok[i], &cmd->addr[cmd->naddr]) < 0) {
			ctl_set(r, 400, "bad address: %.64s", tok[i]);
			return;
		}
		cmd->naddr++;
	}
	if (cmd->naddr == 0)
		ctl_set(r, 400,
			"usage: lookup ADDR... [from A] [iif NAME] [oif NAME] [mark N] "
			"[tos N|dscp N] [ipproto P] [sport N] [dport N] [uid N] [fibmatch]");
}

/*
 * The commands: one or two words, then arguments for those with an args
 * parser (the others take none). A line that names a command but
 * matches no row gets "400 bad arguments", except "show X" for an
 * unknown X, which is "404 unknown command".
 */
static const struct {
	const char *word, *sub; /* sub: the second word, or NULL */
	enum ctl_op op;
	void (*args)(char **tok, unsigned n, struct ctl_cmd *cmd, struct ctl_reply *r);
} ctl_verbs[] = {
    {"show", "summary", CTL_SHOW_SUMMARY, NULL},
    {"show", "cache", CTL_SHOW_CACHE, NULL},
    {"show", "config", CTL_SHOW_CONFIG, NULL},
    {"show", "trie", CTL_SHOW_TRIE, ctl_args_trie},
    {"show", "routes", CTL_SHOW_ROUTES, ctl_args_routes},
    {"show", "rules", CTL_SHOW_RULES, ctl_args_rules},
    {"lookup", NULL, CTL_LOOKUP, ctl_args_lookup},
    {"flush", "cache", CTL_FLUSH_CACHE, NULL},
    {"reload", NULL, CTL_RELOAD, NULL},
    {"metrics", NULL, CTL_METRICS, NULL},
    {"compact", NULL, CTL_COMPACT, NULL},
    {"help", NULL, CTL_HELP, NULL},
};

#define CTL_NVERBS (sizeof(ctl_verbs) / sizeof(ctl_verbs[0]))

int
ctl_parse(const char *line, struct ctl_cmd *cmd, struct ctl_reply *r)
{
	char buf[CTL_LINE_MAX + 1], *tok[CTL_LINE_MAX / 2 + 1], *save = NULL, *t;
	unsigned n = 0, words;
	size_t i;

	memset(cmd, 0, sizeof(*cmd));
	ctl_set(r, 200, "ok");
	if (strlen(line) >= sizeof(buf) - 1) {
		ctl_set(r, 413, "line too long (at most %d bytes)", CTL_LINE_MAX);
		return r->code;
	}
	strcpy(buf, line);
	for (t = strtok_r(buf, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save))
		tok[n++] = t;
	if (n == 0) {
		ctl_set(r, 400, "empty request");
		return r->code;
	}
	for (i = 0; i < CTL_NVERBS; i++) {
		words = ctl_verbs[i].sub ? 2 : 1;
		if (strcmp(tok[0], ctl_verbs[i].word) || n < words ||
		    (ctl_verbs[i].sub && strcmp(tok[1], ctl_verbs[i].sub)) ||
		    (!ctl_verbs[i].args && n != words))
			continue;
		cmd->op = ctl_verbs[i].op;
		if (ctl_verbs[i].args)
			ctl_verbs[i].args(tok + words, n - words, cmd, r);
		return r->code == 200 ? 0 : r->code;
	}
	for (i = 0; i < CTL_NVERBS && strcmp(tok[0], ctl_verbs[i].word); i++)
		;
	if (i < CTL_NVERBS && !strcmp(tok[0], "show") && n >= 2)
		ctl_set(r, 404, "unknown command: show %.64s", tok[1]);
	else if (i < CTL_NVERBS)
		ctl_set(r, 400, "bad arguments to %s", tok[0]);
	else
		ctl_set(r, 404, "unknown command: %.64s", tok[0]);
	return r->code;
}

/* Server. */

static void
ctl_client_free(struct ctl_client *c)
{
	struct ctl *ctl = c->ctl;

	if (c->prev)
		c->prev->next = c->next;
	else
		ctl->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	bufferevent_free(c->bev);
	if (c->idle)
		event_free(c->idle);
	if (c->kick)
		event_free(c->kick);
	if (c->stream) {
		if (c->stream->release)
			c->stream->release(c->stream->state);
		free(c->stream);
	}
	ctl->st.clients--;
	free(c);
}

/* (Re)start the client's idle period from now, or stop it (idle_ms 0). */
static void
ctl_idle_arm(struct ctl_client *c)
{
	unsigned ms = c->ctl->idle_ms;
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	if (ms)
		evtimer_add(c->idle, &tv);
	else
		evtimer_del(c->idle);
	bufferevent_set_timeouts(c->bev, NULL, ms ? &tv : NULL);
}

static void
ctl_idle(evutil_socket_t fd, short what, void *arg)
{
	struct ctl_client *c = arg;

	(void)fd;
	(void)what;
	if (c->stream || evbuffer_get_length(bufferevent_get_output(c->bev))) {
		/* Still answering: the write timeout judges this client. */
		ctl_idle_arm(c);
		return;
	}
	c->ctl->st.idle_closed++;
	ctl_client_free(c);
}

/* Move the data lines written so far to out, each as "NNN-line". */
static void
ctl_prefix(struct ctl *ctl, struct evbuffer *out, int rc)
{
	size_t len = evbuffer_get_length(ctl->data);
	char code[8];

	snprintf(code, sizeof(code), "%03d-", rc);
	if (len) {
		const char *p = (const char *)evbuffer_pullup(ctl->data, -1), *end = p + len;

		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

			evbuffer_add(out, code, 4);
			evbuffer_add(out, p, n);
			evbuffer_add(out, "\n", 1);
			p += n + 1;
		}
		evbuffer_drain(ctl->data, len);
	}
}

/* Append the answer: each data line as "NNN-line", then "NNN msg". */
static void
ctl_answer(struct ctl *ctl, struct evbuffer *out, const struct ctl_reply *r)
{
	ctl_prefix(ctl, out, r->code);
	evbuffer_add_printf(out, "%03d %s\n", r->code, r->msg);
	ctl->st.requests++;
	if (r->code >= 400)
		ctl->st.errors++;
}

static void ctl_read(struct bufferevent *bev, void *arg);

/* The next slice after the loop has polled everything else. */
static void
ctl_kick_arm(struct ctl_client *c)
{
	static const struct timeval now = {0, 0};

	evtimer_add(c->kick, &now);
}

/*
 * The next slice of the streamed answer, if the output has room; at its
 * end the final line, then the requests that waited. Context: main loop.
 */
static void
ctl_pump(struct ctl_client *c)
{
	struct ctl *ctl = c->ctl;
	struct evbuffer *out = bufferevent_get_output(c->bev);
	struct ctl_reply *s = c->stream;

	if (!s || evbuffer_get_length(out) >= CTL_STREAM_LOW)
		return; /* the write callback comes back below the mark */
	if (s->more(s->state, ctl->data, s)) {
		ctl_prefix(ctl, out, s->code);
		if (evbuffer_get_length(out) < CTL_STREAM_LOW)
			ctl_kick_arm(c);
		return;
	}
	c->stream = NULL;
	ctl_answer(ctl, out, s);
	if (s->release)
		s->release(s->state);
	free(s);
	bufferevent_enable(c->bev, EV_READ);
	ctl_read(c->bev, c);
}

static void
ctl_kick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ctl_pump(arg);
}

static void
ctl_line(struct ctl_client *c, struct evbuffer *out, const char *line)
{
	struct ctl *ctl = c->ctl;
	struct ctl_cmd *cmd;
	struct ctl_reply r;

	memset(&r, 0, sizeof(r));
	cmd = malloc(sizeof(*cmd));
	if (!cmd) {
		ctl_set(&r, 500, "out of memory");
	} else if (ctl_parse(line, cmd, &r) == 0) {
		ctl->exec(cmd, ctl->data, &r, ctl->arg);
	}
	free(cmd);
	if (r.more && r.code == 200) {
		c->stream = malloc(sizeof(*c->stream));
		if (c->stream) {
			*c->stream = r;
			ctl_prefix(ctl, out, r.code);
			/* the first slice on the next turn: no recursion into
			 * ctl_read when it is also the last */
			ctl_kick_arm(c);
			return;
		}
		ctl_set(&r, 500, "out of memory");
		evbuffer_drain(ctl->data, evbuffer_get_length(ctl->data));
	}
	if (r.release)
		r.release(r.state);
	ctl_answer(ctl, out, &r);
}

static void
ctl_read(struct bufferevent *bev, void *arg)
{
	struct ctl_client *c = arg;
	struct ctl *ctl = c->ctl;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer *out = bufferevent_get_output(bev);
	char line[CTL_LINE_MAX + 1];

	while (!c->stream && evbuffer_get_length(out) < CTL_OUT_HIGH) {
		struct evbuffer_ptr p = evbuffer_search_eol(in, NULL, NULL, EVBUFFER_EOL_LF);
		size_t len;

		if (p.pos < 0) {
			len = evbuffer_get_length(in);
			if (len >= CTL_LINE_MAX) {
				evbuffer_drain(in, len);
				if (!c->discard) {
					struct ctl_reply r;

					ctl_set(&r, 413, "line too long (at most %d bytes)", CTL_LINE_MAX);
					ctl->st.oversize++;
					ctl_answer(ctl, out, &r);
				}
				c->discard = 1;
			}
			return;
		}
		len = (size_t)p.pos;
		ctl_idle_arm(c); /* a complete line: the client is alive */
		if (c->discard) {
			evbuffer_drain(in, len + 1);
			c->discard = 0;
			continue;
		}
		if (len + 1 > CTL_LINE_MAX) {
			struct ctl_reply r;

			evbuffer_drain(in, len + 1);
			ctl_set(&r, 413, "line too long (at most %d bytes)", CTL_LINE_MAX);
			ctl->st.oversize++;
			ctl_answer(ctl, out, &r);
			continue;
		}
		evbuffer_remove(in, line, len + 1);
		line[len] = 0;
		ctl_line(c, out, line);
	}
	/* Back-pressure, or a streamed answer: resumed by ctl_write once the
	 * output drained, or by ctl_pump at the stream's end. */
	bufferevent_disable(bev, EV_READ);
}

static void
ctl_write(struct bufferevent *bev, void *arg)
{
	struct ctl_client *c = arg;

	if (c->stream) {
		ctl_pump(c);
		return;
	}
	if (!(bufferevent_get_enabled(bev) & EV_READ)) {
		bufferevent_enable(bev, EV_READ);
		ctl_read(bev, c);
	}
}

static void
ctl_event(struct bufferevent *bev, short what, void *arg)
{
	struct ctl_client *c = arg;

	/* A write timeout: the client has not read its answer for idle_ms. */
	if (what & BEV_EVENT_TIMEOUT) {
		c->ctl->st.idle_closed++;
		ctl_client_free(c);
		return;
	}
	/* EOF or error: a half-sent request is simply dropped. */
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		ctl_client_free(c);
}

/* An accept succeeded: end an out-of-descriptors episode. */
static void
ctl_fed(struct ctl *ctl)
{
	if (!ctl->st.starved)
		return;
	ctl->st.starved = 0;
	ctl->pause_ms = CTL_PAUSE_MIN_MS;
	listen_spare_refill(&ctl->spare);
}

static void
ctl_resume(evutil_socket_t fd, short what, void *arg)
{
	struct ctl *ctl = arg;

	(void)fd;
	(void)what;
	listen_spare_refill(&ctl->spare);
	evconnlistener_enable(ctl->lis);
}

/*
 * accept() failed with an error libevent does not retry (EMFILE, ENFILE,
 * ENOBUFS, ...): the listener would fire again at once. Refuse the waiting
 * clients through the spare descriptor, else pause the listener.
 */
static void
ctl_accept_error(struct evconnlistener *lis, void *arg)
{
	struct ctl *ctl = arg;
	int err = EVUTIL_SOCKET_ERROR();
	struct timeval tv;

	(void)lis;
	ctl->st.accept_errors++;
	ctl->st.accept_errno = err;
	if (err == EMFILE || err == ENFILE) {
		if (!ctl->st.starved) {
			ctl->st.starved = 1;
			ctl->st.fd_episodes++;
		}
		if (listen_spare_refuse(&ctl->spare, evconnlistener_get_fd(ctl->lis),
					CTL_REFUSE_BATCH, "503 out of file descriptors\n",
					&ctl->st.refused_fds))
			return;
	}
	tv.tv_sec = (time_t)(ctl->pause_ms / 1000);
	tv.tv_usec = (suseconds_t)(ctl->pause_ms % 1000) * 1000;
	evconnlistener_disable(ctl->lis);
	evtimer_add(ctl->resume, &tv);
	ctl->st.pauses++;
	ctl->pause_ms = ctl->pause_ms * 2 > CTL_PAUSE_MAX_MS ? CTL_PAUSE_MAX_MS : ctl->pause_ms * 2;
}

static void
ctl_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa, int salen,
	   void *arg)
{
	struct ctl *ctl = arg;
	struct ctl_client *c;

	ctl_fed(ctl);
	if (ctl->st.clients >= CTL_CLIENTS_MAX) {
		static const char busy[] = "503 too many clients\n";

		ctl->st.refused++;
		if (write(fd, busy, sizeof(busy) - 1) < 0) {
			/* the client goes away either way */
		}
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->ctl = ctl;
	c->bev = bufferevent_socket_new(ctl->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev) {
		close(fd);
		free(c);
		return;
	}
	c->idle = evtimer_new(ctl->base, ctl_idle, c);
	c->kick = evtimer_new(ctl->base, ctl_kick, c);
	if (!c->idle || !c->kick) {
		if (c->idle)
			event_free(c->idle);
		if (c->kick)
			event_free(c->kick);
		bufferevent_free(c->bev);
		free(c);
		return;
	}
	/* The write callback fires once the output drained to CTL_STREAM_LOW:
	 * time for a streamed answer's next slice, or to read again. */
	bufferevent_setwatermark(c->bev, EV_WRITE, CTL_STREAM_LOW, 0);
	bufferevent_setcb(c->bev, ctl_read, ctl_write, ctl_event, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	c->next = ctl->clients;
	if (c->next)
		c->next->prev = c;
	ctl->clients = c;
	ctl->st.clients++;
	ctl->st.connections++;
	ctl_idle_arm(c);
}

struct ctl *
ctl_new(struct event_base *base, const char *path, unsigned mode, const char *group,
	ctl_exec_cb exec, void *arg)
{
	struct ctl *ctl;
	int fd, err;

	if (strlen(path) >= sizeof(ctl->path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	fd = listen_unix(path, SOCK_STREAM, mode, group, LISTEN_MKDIR);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl) {
		listen_unix_close(fd, path);
		errno = ENOMEM;
		return NULL;
	}
	ctl->base = base;
	ctl->exec = exec;
	ctl->arg = arg;
	ctl->pause_ms = CTL_PAUSE_MIN_MS;
	strcpy(ctl->path, path);
	if ((err = listen_spare_open(&ctl->spare)) < 0)
		goto fail;
	err = -ENOMEM;
	ctl->data = evbuffer_new();
	ctl->resume = evtimer_new(base, ctl_resume, ctl);
	if (!ctl->data || !ctl->resume)
		goto fail;
	ctl->lis = evconnlistener_new(base, ctl_accept, ctl,
				      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (!ctl->lis)
		goto fail;
	evconnlistener_set_error_cb(ctl->lis, ctl_accept_error);
	return ctl;

fail:
	listen_unix_close(fd, path);
	if (ctl->data)
		evbuffer_free(ctl->data);
	if (ctl->resume)
		event_free(ctl->resume);
	listen_spare_close(&ctl->spare);
	free(ctl);
	errno = -err;
	return NULL;
}

void
ctl_free(struct ctl *ctl)
{
	if (!ctl)
		return;
	while (ctl->clients)
		ctl_client_free(ctl->clients);
	evconnlistener_free(ctl->lis);
	unlink(ctl->path);
	evbuffer_free(ctl->data);
	event_free(ctl->resume);
	listen_spare_close(&ctl->spare);
	free(ctl);
}

void
ctl_set_idle_timeout(struct ctl *ctl, unsigned ms)
{
	struct ctl_client *c;

	if (ctl->idle_ms == ms)
		return;
	ctl->idle_ms = ms;
	for (c = ctl->clients; c; c = c->next)
		ctl_idle_arm(c);
}

void
ctl_stats(const struct ctl *ctl, struct ctl_stats *st)
{
	*st = ctl->st;
}
