/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: log, the daemon's one logging API
 *
 * After OpenBSD's log.c: log_warn appends strerror(errno), log_warnx does
 * not, fatal/fatalx log and exit(1). Messages go to stderr; under systemd
 * (JOURNAL_STREAM set) each line starts with a syslog priority prefix
 * ("<4>") so journald keeps the level. Repeats are rate-limited with a
 * struct log_rl per call site: at most `burst` messages a second, and the
 * next message that passes says how many were suppressed.
 *
 * Only the daemon logs: fib/, cache/ and conf/ return errors instead.
 */
#ifndef DAEMON_LOG_H
#define DAEMON_LOG_H

#include <stdint.h>
#include <time.h>

#define LOG_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Context: main loop, before other threads start. */
void log_init(const char *ident, int verbose);
/* 0 = info and above, 1 = debug. Context: main loop. */
void log_set_verbose(int verbose);
int log_get_verbose(void);
/* Drop messages of lower importance than the syslog priority level
 * (LOG_ERR..LOG_DEBUG; fatal is always written). Default LOG_DEBUG: all,
 * debug still needing verbose. Context: main loop. */
void log_set_level(int level);

/* Context: any (one write(2) per line); fatal/fatalx exit(1). */
void log_warn(const char *fmt, ...) LOG_PRINTF(1, 2);
void log_warnx(const char *fmt, ...) LOG_PRINTF(1, 2);
void log_info(const char *fmt, ...) LOG_PRINTF(1, 2);
void log_debug(const char *fmt, ...) LOG_PRINTF(1, 2);
void fatal(const char *fmt, ...) LOG_PRINTF(1, 2) __attribute__((noreturn));
void fatalx(const char *fmt, ...) LOG_PRINTF(1, 2) __attribute__((noreturn));

/* A rate limit for one call site; zero-initialise, set burst (0 means 5). */
struct log_rl {
	time_t second;
	unsigned burst;
	unsigned used;
	uint64_t suppressed;
};

/*
 * True if a message may be logged now. *suppressed receives the number of
 * messages dropped since the last one that passed. Context: main loop.
 */
int log_rl_ok(struct log_rl *rl, uint64_t *suppressed);

/* Rate-limited log_warnx: "... (N similar messages suppressed)". */
void log_warnx_rl(struct log_rl *rl, const char *fmt, ...) LOG_PRINTF(2, 3);

#endif
