/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: tests of the decision counters (daemon/decisions.c)
 *
 * Each decision lands in the slot of its type and of its error, a batch
 * counts as its members, unknown types and errors go to "other", and
 * threads counting at once lose nothing (relaxed atomic adds).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "daemon/decisions.h"
#include "tests/unit/ck_run.h"

static struct fib_decision
dec(unsigned type, unsigned err)
{
	struct fib_decision d;

	memset(&d, 0, sizeof(d));
	d.type = (uint8_t)type;
	d.error = (uint8_t)err;
	return d;
}

START_TEST(test_slots)
{
	static struct decisions ds;
	struct fib_decision b[] = {
	    dec(FIB_UNICAST, 0),
	    dec(FIB_UNICAST, 0),
	    dec(0, ENETUNREACH),
	    dec(FIB_BLACKHOLE, EINVAL),
	    dec(FIB_PROHIBIT, EACCES),
	    dec(FIB_UNREACHABLE, EHOSTUNREACH),
	    dec(FIB_LOCAL, 0),
	    dec(FIB_BROADCAST, 0),
	    dec(FIB_THROW, ENETUNREACH),
	    dec(4, 0),
	    dec(0, EPERM),
	};
	struct decisions c;

	decisions_count(&ds, b, sizeof(b) / sizeof(b[0]));
	decisions_count(&ds, b, 1);
	decisions_count(&ds, b, 0);
	decisions_read(&ds, &c);
	ck_assert_uint_eq(c.type[DECISIONS_UNICAST], 3);
	ck_assert_uint_eq(c.type[DECISIONS_NONE], 2);
	ck_assert_uint_eq(c.type[DECISIONS_BLACKHOLE], 1);
	ck_assert_uint_eq(c.type[DECISIONS_PROHIBIT], 1);
	ck_assert_uint_eq(c.type[DECISIONS_UNREACHABLE], 1);
	ck_assert_uint_eq(c.type[DECISIONS_LOCAL], 1);
	ck_assert_uint_eq(c.type[DECISIONS_BROADCAST], 1);
	ck_assert_uint_eq(c.type[DECISIONS_THROW], 1);
	ck_assert_uint_eq(c.type[DECISIONS_OTHER_TYPE], 1);
	ck_assert_uint_eq(c.error[DECISIONS_OK], 6);
	ck_assert_uint_eq(c.error[DECISIONS_ENETUNREACH], 2);
	ck_assert_uint_eq(c.error[DECISIONS_EINVAL], 1);
	ck_assert_uint_eq(c.error[DECISIONS_EACCES], 1);
	ck_assert_uint_eq(c.error[DECISIONS_EHOSTUNREACH], 1);
	ck_assert_uint_eq(c.error[DECISIONS_OTHER_ERROR], 1);
	ck_assert_uint_eq(decisions_total(&c), 12);
	ck_assert_uint_eq(decisions_errors(&c), 6);
	ck_assert_str_eq(decisions_type_name(DECISIONS_NONE), "none");
	ck_assert_str_eq(decisions_type_name(DECISIONS_BLACKHOLE), "blackhole");
	ck_assert_str_eq(decisions_error_name(DECISIONS_EACCES), "EACCES");
	ck_assert_str_eq(decisions_error_name(DECISIONS_ERRORS), "?");
}
END_TEST

#define THREADS 4
#define ROUNDS	20000

static struct decisions shared;

static void *
counter(void *arg)
{
	struct fib_decision b[3] = {dec(FIB_UNICAST, 0), dec(0, ENETUNREACH),
				    dec(FIB_BLACKHOLE, EINVAL)};

	(void)arg;
	for (int i = 0; i < ROUNDS; i++)
		decisions_count(&shared, b, 1 + (size_t)(i % 3));
	return NULL;
}

START_TEST(test_threads)
{
	pthread_t t[THREADS];
	struct decisions c;
	uint64_t per = 0;

	for (int i = 0; i < ROUNDS; i++)
		per += 1 + (uint64_t)(i % 3);
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, counter, NULL), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	decisions_read(&shared, &c);
	ck_assert_uint_eq(decisions_total(&c), THREADS * per);
	ck_assert_uint_eq(c.type[DECISIONS_UNICAST], THREADS * ROUNDS);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("decisions");
	TCase *tc = tcase_create("counters");

	tcase_add_test(tc, test_slots);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	return ck_run(s, CK_FORK_GETENV);
}
