/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: log implementation
 *
 * One line per message, written with a single write(2) so lines from
 * several threads do not interleave. The state here (ident, verbosity,
 * journald detection) is the daemon's only logging state; it is set once
 * at start.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "daemon/log.h"

static struct {
	const char *ident;
	int verbose;
	int journal; /* prefix lines with <prio> for journald */
	int level;   /* drop messages of a higher priority number */
} log_state = { "fibd", 0, 0, LOG_DEBUG };

void
log_init(const char *ident, int verbose)
{
	log_state.ident = ident;
	log_state.verbose = verbose;
	log_state.journal = getenv("JOURNAL_STREAM") != NULL;
}

void
log_set_verbose(int verbose)
{
	log_state.verbose = verbose;
}

void
log_set_level(int level)
{
	log_state.level = level;
}

int
log_get_verbose(void)
{
	return log_state.verbose;
}

static void
log_vemit(int prio, int err, const char *fmt, va_list ap)
{
	char buf[1024];
	size_t n = 0;
	int r;

	if (prio > log_state.level)
		return;
	if (log_state.journal)
		r = snprintf(buf, sizeof(buf), "<%d>", prio);
	else
		r = snprintf(buf, sizeof(buf), "%s: ", log_state.ident);
	if (r > 0)
		n = (size_t)r;
	r = vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	if (r > 0)
		n += (size_t)r;
	if (n >= sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	if (err) {
		r = snprintf(buf + n, sizeof(buf) - n, ": %s", strerror(err));
		if (r > 0)
			n += (size_t)r;
		if (n >= sizeof(buf) - 2)
			n = sizeof(buf) - 2;
	}
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, n) < 0) {
		/* nowhere left to report it */
	}
}

void
log_warn(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_WARNING, err, fmt, ap);
	va_end(ap);
	errno = err;
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_WARNING, 0, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_INFO, 0, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_state.verbose)
		return;
	va_start(ap, fmt);
	log_vemit(LOG_DEBUG, 0, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_CRIT, err, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_CRIT, 0, fmt, ap);
	va_end(ap);
	exit(1);
}

int
log_rl_ok(struct log_rl *rl, uint64_t *suppressed)
{
	struct timespec ts;
	unsigned burst = rl->burst ? rl->burst : 5;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	if (ts.tv_sec != rl->second) {
		rl->second = ts.tv_sec;
		rl->used = 0;
	}
	if (rl->used >= burst) {
		rl->suppressed++;
		return 0;
	}
	rl->used++;
	*suppressed = rl->suppressed;
	rl->suppressed = 0;
	return 1;
}

void
log_warnx_rl(struct log_rl *rl, const char *fmt, ...)
{
	char buf[900];
	uint64_t sup;
	va_list ap;

	if (!log_rl_ok(rl, &sup))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (sup)
		log_warnx("%s (%llu similar messages suppressed)", buf, (unsigned long long)sup);
	else
		log_warnx("%s", buf);
}
