/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ck_run, the one runner of the Check tests
 *
 * Every Check test program (tests/unit, tests/util, tests/fault) builds its
 * Suite and ends with
 *
 *   return ck_run(suite, CK_FORK_GETENV);   each test in a child process,
 *                                           unless CK_FORK=no
 *   return ck_run(suite, CK_NOFORK);        one process: the tests share
 *                                           state (a thread registered as
 *                                           an RCU reader, a FIB built
 *                                           once, counted allocations)
 *
 * so the fork mode, the output (CK_NORMAL: failures and a summary line)
 * and the exit status (EXIT_SUCCESS when no test failed, else
 * EXIT_FAILURE) are the same everywhere. CK_FORK=no (tests/valgrind.sh)
 * runs the forking tests in one process too. ck_short() says whether
 * FIBD_TEST_SHORT is set (make check-valgrind): long tests then take
 * fewer iterations. Header-only, so every test program includes it
 * without a library of its own. Context: owner (the test program's main thread).
 */
#ifndef TESTS_UNIT_CK_RUN_H
#define TESTS_UNIT_CK_RUN_H

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>

/* Runs every test of s (fork: CK_FORK_GETENV or CK_NOFORK), frees the
 * runner and the suite, returns the program's exit status. */
static inline int
ck_run(Suite *s, enum fork_status fork)
{
	SRunner *sr = srunner_create(s);
	int failed;

	if (fork != CK_FORK_GETENV)
		srunner_set_fork_status(sr, fork);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* FIBD_TEST_SHORT set: fewer iterations (valgrind runs 30-50 times slower). */
static inline bool
ck_short(void)
{
	return getenv("FIBD_TEST_SHORT") != NULL;
}

#endif
