/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: lag, the event loop's lateness by phase
 *
 * A 1 ms timer of the main loop (health.c) records, at every tick, how
 * late it fired: the time since the previous tick minus the period. A
 * callback that holds the loop for 20 ms shows up as one sample of about
 * 19 ms. Samples go to the histogram of the daemon's phase at that tick,
 * so an operator sees what the first load, a resync, a compaction or a
 * reload cost the loop, apart from the steady state.
 *
 * The histogram is log-linear, after HdrHistogram: values in
 * microseconds; below 16 us one bucket per microsecond, above that 16
 * buckets per power of two, so a quantile is reported at most 1/16
 * (6.25 %) above the true sample, and never above the largest sample.
 * Fixed size (about 4 KiB), no allocation: adding a sample is a few
 * instructions.
 *
 *   bucket  0..15        value v us, exact
 *   bucket 16*(e-3)+s    v in [(16+s) << (e-4), (17+s) << (e-4)), e = log2(v) >= 4
 *
 * No I/O, no globals. Context: owner (the main loop's health state).
 */
#ifndef DAEMON_LAG_H
#define DAEMON_LAG_H

#include <stdint.h>

enum lag_phase {
	LAG_LOAD,    /* before ready: the first dump and load */
	LAG_STEADY,  /* ready, nothing below */
	LAG_RESYNC,  /* a dump again after ENOBUFS, merged with the FIB */
	LAG_COMPACT, /* a compaction thread holds the FIB */
	LAG_RELOAD,  /* the tick right after a reload */
	LAG_PHASES
};

#define LAG_SUB 16
#define LAG_BUCKETS (LAG_SUB * 30) /* up to 2^33 us, about 2.4 hours */

struct lag_hist {
	uint64_t count;
	uint64_t sum_us;
	uint64_t max_us;
	uint64_t b[LAG_BUCKETS];
};

/* Record one lateness of us microseconds. Context: owner. */
void lag_hist_add(struct lag_hist *h, uint64_t us);
/* The q-quantile (0 < q <= 1) in microseconds: the upper end of the
 * bucket holding the ceil(q * count)-th smallest sample, at most the
 * largest sample; 0 without samples. Context: owner. */
uint64_t lag_hist_quantile(const struct lag_hist *h, double q);
/* "load", "steady", "resync", "compaction", "reload". Context: any. */
const char *lag_phase_name(enum lag_phase p);

#endif
