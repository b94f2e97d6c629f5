/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the kernel's multipath hash of a flow (internal to libfib)
 *
 * fib_mphash returns the 31-bit hash (already shifted right by one) that
 * the kernel's fib_multipath_hash / rt6_multipath_hash computes for the
 * flow under the hash settings h, with saddr the source address the
 * kernel hashes with. fib/resolve.c compares it with each path's upper
 * bound (fib_rebalance). Context: any; pure.
 */
#ifndef FIB_MPHASH_H
#define FIB_MPHASH_H

#include <stdint.h>

#include "fib/policy.h"

/* Not exported: libfib-internal (hidden despite the fib_ prefix). */
__attribute__((visibility("hidden")))
uint32_t fib_mphash(const struct fib_mp_hash *h, const struct fib_flow *fl,
		    const union fib_addr *saddr);

#endif
