/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ck_rcu_fixture, for Check tests that run in one process and read
 * the FIB
 *
 * With CK_NOFORK a failed check jumps out of the test, and out of any
 * fib_read_lock() section it was in. That section would stay open, and
 * the next grace period (the next test's fib_free, a reclaim barrier)
 * would wait for it forever: the run would hang instead of failing. The
 * fixture's teardown, which Check runs after a failed test too, closes
 * what the test left open. Link with liburcu-memb (URCU_LIBS): it calls
 * the library's own read-side functions, on the thread-local state the
 * inlined ones in libfib use. Context: owner (the test program's main
 * thread, the registered reader).
 */
#ifndef TESTS_UNIT_CK_RCU_H
#define TESTS_UNIT_CK_RCU_H

#include <check.h>
#include <urcu/urcu-memb.h>

static void
ck_rcu_release(void)
{
	while (urcu_memb_read_ongoing())
		urcu_memb_read_unlock();
}

static inline void
ck_rcu_fixture(TCase *tc)
{
	tcase_add_checked_fixture(tc, NULL, ck_rcu_release);
}

#endif
