/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: decisions, the counters of the kernel-like answers fibd gives
 *
 * Every struct fib_decision fibd hands out (fibctl lookup on the main
 * loop; the lookup socket's threads) is counted once by its route type
 * and by its error, for `show summary` and the metrics
 * (fibd_decisions_total{type}, fibd_decision_errors_total{error}).
 *
 * The counters are relaxed atomic adds on one struct decisions that the
 * daemon owns (struct fibd's): a caller with a batch counts it with one
 * call, which adds each non-zero slot once, so lookup threads answering
 * 256 flows a request touch the shared line a few times a batch, not a
 * flow. Readers see each counter whole; the set is not a snapshot (a
 * batch may be half added), which counters need not be.
 *
 *   decisions_count(ds, d, n)     any thread: count n decisions
 *   decisions_read(ds, &copy)     any thread: the counters now
 */
#ifndef DAEMON_DECISIONS_H
#define DAEMON_DECISIONS_H

#include <stddef.h>
#include <stdint.h>

#include "fib/policy.h"

/* Slots by route type: the decision's enum fib_type, 0 without a route. */
enum decisions_type {
	DECISIONS_NONE, /* no route: an error from a rule or every table missed */
	DECISIONS_UNICAST,
	DECISIONS_LOCAL,
	DECISIONS_BROADCAST,
	DECISIONS_BLACKHOLE,
	DECISIONS_UNREACHABLE,
	DECISIONS_PROHIBIT,
	DECISIONS_THROW,
	DECISIONS_OTHER_TYPE, /* a type libfib may add later */
	DECISIONS_TYPES
};

/* Slots by error: 0, the kernel's four, anything else. */
enum decisions_error {
	DECISIONS_OK,
	DECISIONS_ENETUNREACH,
	DECISIONS_EHOSTUNREACH,
	DECISIONS_EACCES,
	DECISIONS_EINVAL,
	DECISIONS_OTHER_ERROR,
	DECISIONS_ERRORS
};

struct decisions {
	uint64_t type[DECISIONS_TYPES];
	uint64_t error[DECISIONS_ERRORS];
};

/* Count n decisions (a batch, or 1). ds zeroed by its owner first
 * (a static or calloc'd struct is). Context: any. */
void decisions_count(struct decisions *ds, const struct fib_decision *d, size_t n);
/* Copy the counters into out. Context: any. */
void decisions_read(const struct decisions *ds, struct decisions *out);
/* Every decision counted (the sum of the type slots). Context: any. */
uint64_t decisions_total(const struct decisions *copy);
/* Those with an error (the sum of the error slots but DECISIONS_OK). */
uint64_t decisions_errors(const struct decisions *copy);

/* Slot names, as the metrics' labels: "none", "unicast", ... "other";
 * "ok", "ENETUNREACH", ... "other". Context: any. */
const char *decisions_type_name(unsigned slot);
const char *decisions_error_name(unsigned slot);

#endif
