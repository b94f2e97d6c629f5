/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: pool handles (fib/pool.h): 32-bit names of pool objects; trim
 *
 * Every object, small or large, gets a handle that names it back; a
 * mapping's id is given back when the mapping goes; past POOL_NIDS
 * mappings objects get no handle (0), and get one again once an id is
 * free. The free chunks kept backed, and pool_trim. Linked against
 * fib/pool.c itself (libfib exports fib_ only).
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fib/pool.h"
#include "tests/unit/ck_run.h"

#define NSMALL 20000
#define BIG 40000 /* above the largest class: its own mapping */

START_TEST(test_handle_roundtrip)
{
	struct pool *p = pool_new();
	const uintptr_t *tab;
	static void *obj[NSMALL];
	static size_t sz[NSMALL];
	void *big;
	uint32_t h;

	ck_assert_ptr_nonnull(p);
	tab = pool_handle_table(p);
	for (unsigned i = 0; i < NSMALL; i++) {
		sz[i] = 8 + (i * 37) % 9000; /* small and large classes */
		obj[i] = pool_alloc(p, sz[i]);
		ck_assert_ptr_nonnull(obj[i]);
		memset(obj[i], 0xa5, sz[i]);
		h = pool_handle(p, obj[i], sz[i]);
		ck_assert_uint_ne(h, 0);
		ck_assert_uint_lt(h, 1u << 29);
		ck_assert_ptr_eq(pool_handle_ptr(tab, h), obj[i]);
		/* every 8-byte place inside names the object (pool_handle_obj) */
		for (size_t off = 0; off < sz[i]; off += 8 + (i % 7) * 8)
			ck_assert_uint_eq(pool_handle_obj(p, h + (uint32_t)(off >> 3)), h);
	}
	big = pool_alloc(p, BIG);
	ck_assert_ptr_nonnull(big);
	h = pool_handle(p, big, BIG);
	ck_assert_uint_ne(h, 0);
	ck_assert_ptr_eq(pool_handle_ptr(tab, h), big);
	for (size_t off = 0; off < BIG; off += 8 * 97)
		ck_assert_uint_eq(pool_handle_obj(p, h + (uint32_t)(off >> 3)), h);
	/* its id goes with its mapping */
	pool_free(p, big, BIG);
	ck_assert_uint_eq(tab[h >> POOL_HANDLE_OFF_BITS], 0);
	/* handles stay valid while other objects come and go */
	for (unsigned i = 0; i < NSMALL; i += 2)
		pool_free(p, obj[i], sz[i]);
	for (unsigned i = 1; i < NSMALL; i += 2) {
		h = pool_handle(p, obj[i], sz[i]);
		ck_assert_ptr_eq(pool_handle_ptr(tab, h), obj[i]);
		pool_free(p, obj[i], sz[i]);
	}
	/* only the last superblock is left: one id in use */
	{
		unsigned used = 0;
		for (unsigned i = 0; i < POOL_NIDS; i++)
			used += tab[i] != 0;
		ck_assert_uint_eq(used, 1);
	}
	pool_free_all(p);
}
END_TEST

START_TEST(test_handle_ids_run_out)
{
	struct pool *p = pool_new();
	static void *obj[POOL_NIDS + 2];
	const uintptr_t *tab = pool_handle_table(p);
	void *extra;
	uint32_t h;

	for (unsigned i = 0; i < POOL_NIDS + 2; i++) {
		obj[i] = pool_alloc(p, BIG);
		ck_assert_ptr_nonnull(obj[i]); /* memory, handle or not */
		h = pool_handle(p, obj[i], BIG);
		if (i < POOL_NIDS - 1) { /* id 0 is never given */
			ck_assert_uint_ne(h, 0);
			ck_assert_ptr_eq(pool_handle_ptr(tab, h), obj[i]);
		} else {
			ck_assert_uint_eq(h, 0);
		}
	}
	/* handle 0 reads as NULL, as the trie's empty child slots need */
	ck_assert_ptr_null(pool_handle_ptr(tab, 0));
	/* an id given back is taken by the next mapping */
	pool_free(p, obj[7], BIG);
	extra = pool_alloc(p, BIG);
	ck_assert_ptr_nonnull(extra);
	h = pool_handle(p, extra, BIG);
	ck_assert_uint_ne(h, 0);
	ck_assert_ptr_eq(pool_handle_ptr(tab, h), extra);
	/* freeing an object that has no handle gives back no id */
	pool_free(p, obj[POOL_NIDS], BIG);
	ck_assert_uint_eq(pool_handle(p, obj[POOL_NIDS + 1], BIG), 0);
	pool_free_all(p);
}
END_TEST

/*
 * Free chunks kept backed: up to 4 MiB while objects come and go (a
 * superblock emptied of all but one object keeps its other chunks),
 * and pool_trim gives back all but 256 KiB of them.
 */
START_TEST(test_trim)
{
	enum { N = 600, SIZE = 16000, CHUNK = 32 * 1024, SUPER = 2 * 1024 * 1024 };
	enum { HOT = 4 * 1024 * 1024 / CHUNK, KEEP = 256 * 1024 / CHUNK };
	struct pool *p = pool_new();
	static void *obj[N];
	uintptr_t supers[64];
	unsigned nsup = 0;
	uint64_t r1, r2;

	ck_assert_ptr_nonnull(p);
	for (unsigned i = 0; i < N; i++) {
		uintptr_t s;
		unsigned j;

		obj[i] = pool_alloc(p, SIZE);
		ck_assert_ptr_nonnull(obj[i]);
		s = (uintptr_t)obj[i] & ~(uintptr_t)(SUPER - 1);
		for (j = 0; j < nsup && supers[j] != s; j++)
			;
		if (j < nsup)
			continue;
		ck_assert_uint_lt(nsup, 64);
		supers[nsup++] = s;
		obj[i] = NULL; /* the first of each superblock stays */
	}
	ck_assert_uint_ge(nsup, 4); /* 600 x 16 KiB: about 300 chunks */
	for (unsigned i = 0; i < N; i++)
		pool_free(p, obj[i], SIZE);
	r1 = pool_reserved(p);
	/* one chunk in use per superblock, the free ones kept up to HOT */
	ck_assert_uint_ge(r1, (uint64_t)(nsup + HOT - 4) * CHUNK);
	ck_assert_uint_le(r1, (uint64_t)(nsup + HOT) * CHUNK + nsup * 4096);
	pool_trim(p);
	r2 = pool_reserved(p);
	ck_assert_uint_le(r2, (uint64_t)(nsup + KEEP) * CHUNK + nsup * 4096);
	ck_assert_uint_ge(r2, (uint64_t)nsup * CHUNK);
	pool_free_all(p);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("pool");
	TCase *tc = tcase_create("handles");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_handle_roundtrip);
	tcase_add_test(tc, test_handle_ids_run_out);
	suite_add_tcase(s, tc);
	tc = tcase_create("trim");
	tcase_add_test(tc, test_trim);
	suite_add_tcase(s, tc);
	return ck_run(s, CK_FORK_GETENV);
}
