/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: compact, when a FIB is worth rebuilding
 *
 * The compaction policy as a pure function (no I/O, no FIB, no clock), so
 * that a unit test checks it against a model (doc/style.md, item 18). Churn
 * leaves the FIB larger than a bulk build of the same routes; the bytes
 * held are compared with those of the last bulk build scaled to today's
 * routes:
 *
 *   expected = built_bytes * routes / built_routes   (0 without a build)
 *   compact  = force
 *           or (bytes >= expected + COMPACT_MIN_BYTES
 *               and bytes * 100 > expected * (100 + margin))
 *
 * The minimum keeps small tables, all fixed costs, from being rebuilt for
 * a few kilobytes; the margin (fib.compact_margin, percent) from being
 * rebuilt for noise.
 *
 * When to ask is compact_quiet_step, a step per 1 s tick of a small state
 * machine, also pure: a tick is busy when the FIB generation moved by
 * COMPACT_QUIET_CHANGES or more (a live BGP feed is never fully quiet)
 * or a dump, resync or test write runs; after one quiet second a due
 * second pass runs, or a pending reference is measured; after
 * fib.compact_quiet of quiet following churn, a compaction starts. Churn
 * between the passes (or before the reference) drops them: the policy
 * looks again after the next quiet period.
 */
#ifndef FIBD_COMPACT_H
#define FIBD_COMPACT_H

#include <stddef.h>
#include <stdint.h>

#define COMPACT_MIN_BYTES (1u << 20) /* bytes over the expected size, at least */

enum compact_why {
	COMPACT_FORCED,       /* fibctl compact: no decision */
	COMPACT_UNDER_MIN,    /* less than COMPACT_MIN_BYTES over expected */
	COMPACT_UNDER_MARGIN, /* within the margin */
	COMPACT_OVER_MARGIN,  /* past the margin: compact */
};

struct compact_input {
	uint64_t bytes;        /* the FIB holds now, pending frees done */
	size_t routes;         /* both families, now */
	uint64_t built_bytes;  /* right after the last bulk build */
	size_t built_routes;   /* its routes; 0: no build measured yet */
	unsigned margin;       /* percent */
	int force;
};

struct compact_decision {
	int compact;
	enum compact_why why;
	uint64_t expected;     /* bytes a bulk build of routes would hold */
};

/* generation steps in a 1 s tick that still count as quiet: 100 route
 * changes (each moves the generation twice) */
#define COMPACT_QUIET_CHANGES 200

/* The quiet-period state, kept by the caller between ticks. */
struct compact_quiet {
	uint64_t settle_gen; /* FIB generation at the last tick */
	uint64_t gen;        /* generation after the last pass */
	double busy_at;      /* last busy tick, seconds */
	int churned;         /* routes changed since the last settle */
	int pass;            /* 1: the second pass is due */
	int built_pending;   /* the reference is to be measured */
};

enum compact_step {
	COMPACT_WAIT,      /* nothing this tick */
	COMPACT_PASS2,     /* start the second pass */
	COMPACT_REFERENCE, /* measure the bulk build's reference */
	COMPACT_SETTLE,    /* a quiet period after churn: decide, maybe compact */
};

/*
 * One tick at now (seconds) with the FIB at generation gen; busy: a dump,
 * resync or write runs; quiet_us: fib.compact_quiet (0: never settle).
 * Updates q and says what to do. Context: any (one caller per q).
 */
enum compact_step compact_quiet_step(struct compact_quiet *q, uint64_t gen, int busy, double now,
				     uint64_t quiet_us);

/* Decide whether in's FIB is worth compacting. Context: any. */
void compact_decide(const struct compact_input *in, struct compact_decision *out);

/* "forced", "under the minimum", ... for the log. Context: any. */
const char *compact_why_name(enum compact_why why);

#endif
