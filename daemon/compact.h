/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: compact, when a FIB is worth rebuilding
 *
 * The compaction policy as a pure function (no I/O, no FIB, no clock), so
 * that a unit test checks it against a model (STYLE.md item 18). Churn
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
 * rebuilt for noise. When the table is quiet enough to ask is the
 * daemon's business (daemon/settle.c).
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

/* Decide whether in's FIB is worth compacting. Context: any. */
void compact_decide(const struct compact_input *in, struct compact_decision *out);

/* "forced", "under the minimum", ... for the log. Context: any. */
const char *compact_why_name(enum compact_why why);

#endif
