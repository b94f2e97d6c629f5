/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: readers racing the writer
 *
 * Reader threads look up without pause while the writer loads a table one
 * route at a time (every resize on the way), churns it and deletes it.
 * The table is built so that every probe address has a known set of
 * valid answers at each moment:
 *
 *   S  a stable /16 (IPv6: /32), present from the load to the delete
 *   C  a /24 (IPv6: /48) inside S, added and withdrawn during the churn
 *
 * A probe inside C may see C or S while both exist, nothing only while
 * the load or delete phase runs, never any other prefix, and the route it
 * sees must carry the attributes that prefix always has (a torn read would
 * mix them). Each case runs twice: in the main table (254, compiled as
 * accel_table), and in table 100, which gets a compiled table of its own
 * as the load makes it large enough (accel_min_routes), loses it on the
 * way down, and has it rebuilt and dropped by new parameters during the
 * churn. Built twice: plainly and with -fsanitize=thread.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fib/fib.h"
#include "tests/unit/lpm_model.h"
#include "tests/unit/ck_rcu.h"
#include "tests/unit/ck_run.h"

#ifdef __SANITIZE_THREAD__
enum { NS_FULL = 16, NC_FULL = 16, CHURN_FULL = 3000 };
#else
enum { NS_FULL = 64, NC_FULL = 32, CHURN_FULL = 40000 };
#endif
/* FIBD_TEST_SHORT set (make check-valgrind: the threads take turns, and
 * each of the writer's grace periods waits for the readers' turns): a
 * smaller table and churn, still many reclamation batches. */
enum { NS_SHORT = 8, NC_SHORT = 16, CHURN_SHORT = 600 };
static int ns = NS_FULL, nc = NC_FULL, churn = CHURN_FULL;
#define NREADERS 2

enum { PHASE_LOAD = 1, PHASE_CHURN = 2, PHASE_DELETE = 3, PHASE_DONE = 4 };

/* The table of every route and lookup: set before the readers start. */
static uint32_t race_table = 254;

struct race {
	struct fib *fib;
	int family;
	int phase;
	unsigned long lookups, errors;
	char msg[256];
};

/* Route i of S (c < 0) or of C (s, c): a distinct priority identifies it. */
static void
race_route(int family, int s, int c, struct fib_route *r)
{
	memset(r, 0, sizeof(*r));
	r->family = (uint8_t)family;
	r->type = FIB_UNICAST;
	r->table = race_table;
	if (family == AF_INET) {
		r->dst.b[0] = 10;
		r->dst.b[1] = (uint8_t)s;
		r->dst.b[2] = c < 0 ? 0 : (uint8_t)(c * 4 + 1);
		r->plen = c < 0 ? 16 : 24;
	} else {
		r->dst.b[0] = 0x20;
		r->dst.b[1] = 0x01;
		r->dst.b[2] = (uint8_t)s;
		r->dst.b[4] = c < 0 ? 0 : (uint8_t)(c * 4 + 1);
		r->plen = c < 0 ? 32 : 48;
	}
	r->priority = c < 0 ? 1000u + (unsigned)s : 100000u + (unsigned)s * 1000u + (unsigned)c;
	r->protocol = (uint8_t)(c < 0 ? 1 : 2);
}

static void *
race_reader(void *arg)
{
	struct race *rc = arg;
	uint64_t seed = (uint64_t)(uintptr_t)&seed;
	unsigned long iter = 0;

	fib_thread_online();
	while (__atomic_load_n(&rc->phase, __ATOMIC_ACQUIRE) != PHASE_DONE) {
		int s = (int)(lpm_rand(&seed) % ns), c = (int)(lpm_rand(&seed) % nc);
		int phase = __atomic_load_n(&rc->phase, __ATOMIC_ACQUIRE);
		struct fib_route rs, rcr;
		union fib_addr a;
		struct fib_result res;
		struct fib_match m;
		const char *bad = NULL;

		race_route(rc->family, s, c, &rcr);
		race_route(rc->family, s, -1, &rs);
		a = rcr.dst;
		a.b[rc->family == AF_INET ? 3 : 15] = (uint8_t)lpm_rand(&seed);
		fib_read_lock();
		/* every other lookup by route reference: the reference made and
		 * resolved in one read section names a route as valid as the
		 * lookup's own answer */
		if (iter++ & 1) {
			uint32_t ref;

			if (rc->family == AF_INET) {
				uint32_t k = ntohl(a.v4.s_addr);

				if (iter & 2)
					fib_lookup4_ref_batch_rcu(rc->fib, race_table, &k, &ref, 1);
				else
					ref = fib_lookup4_ref_rcu(rc->fib, race_table, k);
			} else {
				const uint8_t(*a6)[16] = (const uint8_t(*)[16])a.b;

				fib_lookup6_ref_batch_rcu(rc->fib, race_table, a6, &ref, 1);
			}
			(void)fib_ref_get_rcu(rc->fib, rc->family, ref, &res);
		} else {
			res = fib_lookup_rcu(rc->fib, rc->family, a.b, race_table, 0);
		}
		if (fib_result_get(&res, &m) != 0) {
			if (phase == PHASE_CHURN &&
			    __atomic_load_n(&rc->phase, __ATOMIC_ACQUIRE) == PHASE_CHURN)
				bad = "no route while S is stable";
		} else if (m.plen == rs.plen) {
			if (memcmp(m.prefix.b, rs.dst.b, 16) || m.info->priority != rs.priority ||
			    m.info->protocol != 1)
				bad = "wrong or torn S";
		} else if (m.plen == rcr.plen) {
			if (memcmp(m.prefix.b, rcr.dst.b, 16) || m.info->priority != rcr.priority ||
			    m.info->protocol != 2)
				bad = "wrong or torn C";
		} else {
			bad = "answer outside the valid set";
		}
		fib_read_unlock();
		__atomic_fetch_add(&rc->lookups, 1, __ATOMIC_RELAXED);
		if (bad && __atomic_fetch_add(&rc->errors, 1, __ATOMIC_RELAXED) == 0)
			snprintf(rc->msg, sizeof(rc->msg), "S %d C %d: %s", s, c, bad);
	}
	fib_thread_offline();
	return NULL;
}

/* The compiled tables of the race's family: does race_table have one? */
static bool
race_compiled(const struct race *rc)
{
	struct fib_stats st;
	const struct fib_trie_stats *t;

	fib_stats(rc->fib, &st);
	t = rc->family == AF_INET ? &st.v4 : &st.v6;
	for (unsigned i = 0; i < t->accel_tables; i++)
		if (t->accel_table_ids[i] == race_table)
			return true;
	return false;
}

static void
race_run(int family, unsigned mode, uint32_t table)
{
	struct race rc = { 0 };
	pthread_t th[NREADERS];
	struct fib_params p;
	struct fib_route r;
	uint64_t seed = 42;
	char msg[256];
	bool *on = calloc(ns * nc, sizeof(*on));

	fib_params_default(&p);
	p.reclaim_mode = mode;
	p.sync_pages = 8; /* many batches */
	/* table 100: compiled from a third of the load on */
	p.accel_min_routes = (uint32_t)(ns + ns * nc / 2) / 3;
	race_table = table;
	rc.fib = fib_new(&p);
	rc.family = family;
	rc.phase = PHASE_LOAD;
	for (int i = 0; i < NREADERS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, race_reader, &rc), 0);

	/* load: S first in random order interleaved with C */
	for (int s = 0; s < ns; s++) {
		race_route(family, s, -1, &r);
		ck_assert_int_eq(fib_add(rc.fib, &r, 0), 0);
		for (int c = 0; c < nc; c += 2) {
			race_route(family, s, c, &r);
			ck_assert_int_eq(fib_add(rc.fib, &r, 0), 0);
			on[s * nc + c] = true;
		}
	}
	ck_assert(race_compiled(&rc));
	__atomic_store_n(&rc.phase, PHASE_CHURN, __ATOMIC_RELEASE);
	for (int i = 0; i < churn; i++) {
		int k = (int)(lpm_rand(&seed) % (ns * nc));
		race_route(family, k / nc, k % nc, &r);
		if (on[k])
			ck_assert_int_eq(fib_del(rc.fib, &r), 0);
		else
			ck_assert_int_eq(fib_add(rc.fib, &r, 0), 0);
		on[k] = !on[k];
		if (i % 1024 == 0)
			ck_assert_msg(fib_check(rc.fib, msg, sizeof(msg)) == 0, "%s", msg);
		if (table != 254 && i % 1024 == 512) {
			/* table 100's compiled table dropped, or built again */
			p.accel_min_routes = p.accel_min_routes ? 0 : (uint32_t)(ns + ns * nc / 2) / 3;
			/* every other build deferred to fib_accel_sync, 256
			 * changes later (readers meanwhile in the trie) */
			p.accel_defer = (uint8_t)(i / 1024 % 4 == 1);
			ck_assert_int_eq(fib_set_params(rc.fib, &p), 0);
			ck_assert(race_compiled(&rc) == (p.accel_min_routes != 0 && !p.accel_defer));
		}
		if (table != 254 && i % 1024 == 768 && p.accel_defer) {
			ck_assert(fib_accel_pending(rc.fib));
			ck_assert_int_eq(fib_accel_sync(rc.fib), 0);
			ck_assert(race_compiled(&rc));
		}
	}
	__atomic_store_n(&rc.phase, PHASE_DELETE, __ATOMIC_RELEASE);
	for (int s = 0; s < ns; s++) {
		for (int c = 0; c < nc; c++) {
			race_route(family, s, c, &r);
			if (on[s * nc + c])
				ck_assert_int_eq(fib_del(rc.fib, &r), 0);
		}
		race_route(family, s, -1, &r);
		ck_assert_int_eq(fib_del(rc.fib, &r), 0);
	}
	__atomic_store_n(&rc.phase, PHASE_DONE, __ATOMIC_RELEASE);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(th[i], NULL);
	ck_assert_msg(rc.errors == 0, "%lu bad answers of %lu, first: %s", rc.errors, rc.lookups,
		      rc.msg);
	ck_assert_uint_gt(rc.lookups, 1000);
	ck_assert_uint_eq(fib_count(rc.fib, AF_UNSPEC), 0);
	ck_assert(!race_compiled(&rc) || table == 254);
	ck_assert_msg(fib_check(rc.fib, msg, sizeof(msg)) == 0, "%s", msg);
	fib_free(rc.fib);
	free(on);
}

START_TEST(test_race4)
{
	race_run(AF_INET, _i % 2 ? FIB_RECLAIM_SYNC : FIB_RECLAIM_CALL_RCU, _i < 2 ? 254 : 100);
}
END_TEST

START_TEST(test_race6)
{
	race_run(AF_INET6, _i % 2 ? FIB_RECLAIM_SYNC : FIB_RECLAIM_CALL_RCU, _i < 2 ? 254 : 100);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("fib_rcu");
	TCase *tc = tcase_create("race");
	int ret;

	ck_rcu_fixture(tc);
	if (ck_short()) {
		ns = NS_SHORT;
		nc = NC_SHORT;
		churn = CHURN_SHORT;
	}
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_race4, 0, 4);
	tcase_add_loop_test(tc, test_race6, 0, 4);
	suite_add_tcase(s, tc);
	fib_thread_online();
	ret = ck_run(s, CK_NOFORK);
	fib_thread_offline();
	return ret;
}
