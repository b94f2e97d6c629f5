/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: compact.c, when a FIB is worth rebuilding
 *
 * See compact.h for the rule. The expected size is computed in double, as
 * built_bytes * routes overflows 64 bits for no real table but may for a
 * test's extremes.
 */
#include "config.h"

#include "daemon/compact.h"

void
compact_decide(const struct compact_input *in, struct compact_decision *out)
{
	out->expected = 0;
	if (in->built_routes)
		out->expected = (uint64_t)((double)in->built_bytes * (double)in->routes /
					   (double)in->built_routes);
	if (in->force)
		out->why = COMPACT_FORCED;
	else if (in->bytes < out->expected + COMPACT_MIN_BYTES)
		out->why = COMPACT_UNDER_MIN;
	else if (in->bytes * 100 <= out->expected * (100 + (uint64_t)in->margin))
		out->why = COMPACT_UNDER_MARGIN;
	else
		out->why = COMPACT_OVER_MARGIN;
	out->compact = out->why == COMPACT_FORCED || out->why == COMPACT_OVER_MARGIN;
}

const char *
compact_why_name(enum compact_why why)
{
	static const char *const names[] = {
	    [COMPACT_FORCED] = "forced",
	    [COMPACT_UNDER_MIN] = "under the minimum",
	    [COMPACT_UNDER_MARGIN] = "within the margin",
	    [COMPACT_OVER_MARGIN] = "past the margin",
	};

	return (unsigned)why < sizeof(names) / sizeof(names[0]) ? names[why] : "?";
}

enum compact_step
compact_quiet_step(struct compact_quiet *q, uint64_t gen, int busy, double now, uint64_t quiet_us)
{
	if (gen - q->settle_gen >= COMPACT_QUIET_CHANGES || busy)
		q->busy_at = now;
	if (gen != q->settle_gen)
		q->churned = 1;
	q->settle_gen = gen;
	if (now - q->busy_at < 1.0)
		return COMPACT_WAIT;
	if ((q->pass || q->built_pending) && gen != q->gen) {
		/* churn since: the policy looks again after the next quiet
		 * period, the reference stays the last clean build's */
		q->pass = 0;
		q->built_pending = 0;
	}
	if (q->pass == 1)
		return COMPACT_PASS2;
	if (q->built_pending)
		return COMPACT_REFERENCE;
	if (!q->churned || quiet_us == 0 || now - q->busy_at < (double)quiet_us * 1e-6)
		return COMPACT_WAIT;
	q->churned = 0;
	return COMPACT_SETTLE;
}
