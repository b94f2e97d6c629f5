/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: which routing tables get a compiled table, kept as routes come and go
 *
 * Included by the instance file (trie4.c, trie6.c) after the table
 * (fib/accel4_impl.h or fib/accel_impl.h); it meets both through
 * fib/trie_types.h.
 *
 * t->accel[0] holds the table of params accel_table (accel_table6 for
 * IPv6), whatever its size, from its first route on: the main table,
 * where the full BGP table is. A family whose main table holds no route
 * has none (an IPv6-only FIB would carry the empty IPv4 table's 2 MiB
 * directory), until a route comes, or until a whole rebuild if the
 * counts were lost.
 * Any other table that holds at least params accel_min_routes routes of
 * this family (a VRF carrying a full table) gets one of the other
 * FIB_ACCEL_TABLES - 1 slots, and gives it back when it falls below half
 * of that, so that a table hovering at the threshold is not built and
 * retired over and over. When more tables qualify than there are slots,
 * a whole rebuild keeps the largest; between rebuilds, the first come.
 *
 * The writer counts routes per table in t->tabs: fib_add and fib_del one
 * by one (as_count), a bulk load from the tree it builds (as_load_*).
 * Readers find a table's compiled table by scanning the slots (as_for,
 * in trie_types.h): [0] first, the others only when some are set.
 *
 * With params accel_defer, a table that crosses the threshold, or needs
 * a table under new parameters, is not built in that call: t->apending
 * says so, the trie answers it meanwhile, and as_retune builds it when
 * the writer asks (fib_accel_sync, run off a daemon's event loop).
 * Dropping a table is cheap (a store, then a retirement) and is never
 * deferred. A build that fails for memory leaves that table to the trie
 * (slower, never wrong) and is not tried again until the next whole
 * rebuild (bulk load, compaction) or new parameters. The counts are
 * writer-only: if a new table cannot be recorded it is not counted
 * (t->tabs.lost) until the next bulk load counts them all again; answers
 * never depend on them.
 */

#include <stdlib.h>
#include <string.h>

#include "fib/reclaim.h"
#include "fib/trie_types.h"

static uint32_t
as_main_table(const struct TRIE_PREFIX *t)
{
#if TRIE_KEYBITS == 32
	return t->ctx->params.accel_table;
#else
	return t->ctx->params.accel_table6;
#endif
}

static size_t
as_hslot(const struct atabs *ts, uint32_t table)
{
	size_t mask = 2 * ts->cap - 1, h = (size_t)((table * 0x9e3779b1u) >> 7) & mask;

	while (ts->hash[h] && ts->v[ts->hash[h] - 1].table != table)
		h = (h + 1) & mask;
	return h;
}

/* Index v again (after a sort, or into a new hash). */
static void
as_rehash(struct atabs *ts)
{
	if (!ts->hash)
		return;
	memset(ts->hash, 0, 2 * ts->cap * sizeof(*ts->hash));
	for (size_t i = 0; i < ts->n; i++)
		ts->hash[as_hslot(ts, ts->v[i].table)] = (uint32_t)i + 1;
}

/* table's entry in ts, made if make (NULL: none, or no memory). */
static struct atab *
as_tab(struct atabs *ts, uint32_t table, bool make)
{
	size_t h;

	if (ts->hash && ts->hash[h = as_hslot(ts, table)])
		return &ts->v[ts->hash[h] - 1];
	if (!make)
		return NULL;
	if (ts->n == ts->cap) {
		size_t c = ts->cap ? 2 * ts->cap : 8;
		struct atab *v = realloc(ts->v, c * sizeof(*v));
		uint32_t *hash;

		if (v)
			ts->v = v;
		hash = v ? calloc(2 * c, sizeof(*hash)) : NULL;
		if (!hash) {
			ts->lost = true;
			return NULL;
		}
		free(ts->hash);
		ts->hash = hash;
		ts->cap = c;
		as_rehash(ts);
	}
	ts->v[ts->n] = (struct atab){ .table = table };
	ts->hash[as_hslot(ts, table)] = (uint32_t)++ts->n;
	return &ts->v[ts->n - 1];
}

/* Does the main table hold routes, so that it gets [0]? */
static bool
as_main_wanted(const struct TRIE_PREFIX *t, uint32_t main)
{
	const struct atab *e = main ? as_tab((struct atabs *)&t->tabs, main, false) : NULL;

	return e && e->routes;
}

/* The slot of table's compiled table, or 0 (none; [0] is never asked). */
static unsigned
as_slot(const struct TRIE_PREFIX *t, uint32_t table)
{
	for (unsigned i = 1; i < FIB_ACCEL_TABLES; i++)
		if (t->accel[i] && a_serves(t->accel[i], table))
			return i;
	return 0;
}

/* Build table's compiled table into a free slot; false if none is free
 * or memory ran out. */
static bool
as_add(struct TRIE_PREFIX *t, uint32_t table)
{
	struct accel *A;
	unsigned i;

	for (i = 1; i < FIB_ACCEL_TABLES && t->accel[i]; i++)
		;
	if (i == FIB_ACCEL_TABLES)
		return false;
	A = a_build_all(t, table);
	if (!A)
		return false;
	T_STORE(t->accel[i], A);
	T_STORE8(t->nextra, t->nextra + 1);
	return true;
}

/* Retire the extra table of slot i (1..). */
static void
as_drop(struct TRIE_PREFIX *t, unsigned i)
{
	struct accel *A = t->accel[i];

	T_STORE(t->accel[i], NULL);
	T_STORE8(t->nextra, t->nextra - 1);
	a_retire_all(t, A);
}

static void
as_invalidate(struct TRIE_PREFIX *t, tkey key, unsigned slen)
{
	for (unsigned i = 0; i < FIB_ACCEL_TABLES; i++)
		if (t->accel[i])
			a_invalidate(t, t->accel[i], key, slen);
}

static void
as_revalidate(struct TRIE_PREFIX *t, tkey key, unsigned slen)
{
	for (unsigned i = 0; i < FIB_ACCEL_TABLES; i++)
		if (t->accel[i])
			a_revalidate(t, t->accel[i], key, slen);
}

static void
as_count(struct TRIE_PREFIX *t, uint32_t table, int delta)
{
	struct atab *e = as_tab(&t->tabs, table, delta > 0);
	uint32_t min = t->ctx->params.accel_min_routes;
	unsigned slot;

	if (!e)
		return;
	if (delta < 0 && !e->routes)
		return; /* counted low after a lost count: stay at 0 */
	e->routes += (uint32_t)delta;
	if (table == as_main_table(t)) {
		/* the main table's comes with its first route (once its build
		 * failed for memory, at the next whole rebuild); main 0: none */
		if (table && delta > 0 && !t->accel[0] && !e->failed) {
			struct accel *A = t->ctx->params.accel_defer ? NULL : a_build_all(t, table);

			if (A)
				T_STORE(t->accel[0], A);
			else if (t->ctx->params.accel_defer)
				t->apending = true;
			else
				e->failed = true;
		}
		return;
	}
	if (!min)
		return;
	if (delta > 0 && e->routes >= min && !e->failed && t->nextra < FIB_ACCEL_TABLES - 1 &&
	    !as_slot(t, table)) {
		if (t->ctx->params.accel_defer)
			t->apending = true;
		else
			e->failed = !as_add(t, table);
	} else if (delta < 0 && e->routes < min / 2 && (slot = as_slot(t, table)))
		as_drop(t, slot);
}

static void
as_load_begin(struct TRIE_PREFIX *t)
{
	t->ltabs.n = 0;
	t->ltabs.lost = false;
	as_rehash(&t->ltabs);
}

static void
as_load_note(struct TRIE_PREFIX *t, uint32_t table)
{
	/* the aliases of a leaf come table by table: the last entry first */
	struct atabs *ts = &t->ltabs;
	struct atab *e = ts->n && ts->v[ts->n - 1].table == table ? &ts->v[ts->n - 1]
								 : as_tab(ts, table, true);

	if (e)
		e->routes++;
}

static void
as_load_publish(struct TRIE_PREFIX *t)
{
	struct atabs tmp = t->tabs;

	t->tabs = t->ltabs;
	t->ltabs = tmp;
}

static void
as_counts_clear(struct TRIE_PREFIX *t)
{
	t->tabs.n = 0;
	t->tabs.lost = false;
	as_rehash(&t->tabs);
}

static int
as_by_routes(const void *pa, const void *pb)
{
	const struct atab *a = pa, *b = pb;

	if (a->routes != b->routes)
		return a->routes > b->routes ? -1 : 1;
	return a->table < b->table ? -1 : a->table > b->table;
}

/*
 * Build every compiled table again: [0] for the main table, the others
 * for the largest tables of at least accel_min_routes. All are built
 * before any is published, then the old ones are retired, as a bulk load
 * does with the trie. Without memory for one, that table is left to the
 * trie.
 */
static void
as_replace(struct TRIE_PREFIX *t)
{
	uint32_t main = as_main_table(t), min = t->ctx->params.accel_min_routes;
	struct accel *nw[FIB_ACCEL_TABLES] = { NULL }, *old[FIB_ACCEL_TABLES];
	unsigned n = 1;

	if (as_main_wanted(t, main))
		nw[0] = a_build_all(t, main);
	if (t->tabs.n > 1) {
		qsort(t->tabs.v, t->tabs.n, sizeof(t->tabs.v[0]), as_by_routes);
		as_rehash(&t->tabs);
	}
	for (size_t i = 0; i < t->tabs.n; i++) {
		struct atab *e = &t->tabs.v[i];

		e->failed = e->table == main && e->routes && !nw[0];
		if (!min || e->table == main || e->routes < min || n == FIB_ACCEL_TABLES)
			continue;
		nw[n] = a_build_all(t, e->table);
		e->failed = !nw[n];
		n += !!nw[n];
	}
	for (unsigned i = 0; i < FIB_ACCEL_TABLES; i++) {
		old[i] = t->accel[i];
		T_STORE(t->accel[i], nw[i]);
	}
	T_STORE8(t->nextra, n - 1);
	t->apending = false;
	for (unsigned i = 0; i < FIB_ACCEL_TABLES; i++)
		if (old[i])
			a_retire_all(t, old[i]);
}

/*
 * Bring the set in line with the parameters without rebuilding what
 * stays: retire [0] if accel_table changed (an extra slot that holds the
 * new main table moves to [0]), retire the extras of tables below half of
 * accel_min_routes (all of them at 0), then build what is missing, [0]
 * first and the largest tables next, or with defer only note that
 * something is (t->apending). fresh (new parameters): builds that failed
 * for memory are tried again. Returns 0, or -ENOMEM if a build failed (the
 * trie answers that table). Context: writer.
 */
static int
as_retune(struct TRIE_PREFIX *t, bool fresh, bool defer)
{
	uint32_t main = as_main_table(t), min = t->ctx->params.accel_min_routes;
	bool want = false;
	int err = 0;

	if (t->accel[0] && a_table(t->accel[0]) != main) {
		struct accel *A = t->accel[0];

		T_STORE(t->accel[0], NULL);
		a_retire_all(t, A);
	}
	for (unsigned i = 1; i < FIB_ACCEL_TABLES; i++) {
		struct atab *e;

		if (!t->accel[i])
			continue;
		if (a_table(t->accel[i]) == main) {
			/* a reader may find it in both slots for a while */
			T_STORE(t->accel[0], t->accel[i]);
			T_STORE(t->accel[i], NULL);
			T_STORE8(t->nextra, t->nextra - 1);
			continue;
		}
		e = as_tab(&t->tabs, a_table(t->accel[i]), false);
		if (!min || !e || e->routes < min / 2)
			as_drop(t, i);
	}
	if (t->tabs.n > 1) {
		qsort(t->tabs.v, t->tabs.n, sizeof(t->tabs.v[0]), as_by_routes);
		as_rehash(&t->tabs);
	}
	if (!t->accel[0] && as_main_wanted(t, main)) {
		struct atab *m = as_tab(&t->tabs, main, false);

		if (fresh)
			m->failed = false;
		if (defer) {
			want = true;
		} else if (!m->failed) {
			struct accel *A = a_build_all(t, main);

			if (A)
				T_STORE(t->accel[0], A);
			else
				err = -ENOMEM;
			m->failed = !A;
		}
	}
	for (size_t i = 0; i < t->tabs.n; i++) {
		struct atab *e = &t->tabs.v[i];

		if (fresh)
			e->failed = false;
		if (!min || e->table == main || e->routes < min || e->failed ||
		    t->nextra == FIB_ACCEL_TABLES - 1 || as_slot(t, e->table))
			continue;
		if (defer) {
			want = true;
			continue;
		}
		e->failed = !as_add(t, e->table);
		if (e->failed)
			err = -ENOMEM;
	}
	t->apending = want;
	return err;
}

static void
as_stats(const struct TRIE_PREFIX *t, struct fib_trie_stats *st)
{
	st->accel_table = t->accel[0] ? a_table(t->accel[0]) : 0;
	for (unsigned i = 0; i < FIB_ACCEL_TABLES; i++) {
		if (!t->accel[i])
			continue;
		st->accel_table_ids[st->accel_tables++] = a_table(t->accel[i]);
		a_stats(t->accel[i], st);
	}
}

/* Every table against a fresh build, one per routing table, the count
 * of [1..] right, none of them for the main table. */
static int
as_check(struct TRIE_PREFIX *t, char *buf, size_t len)
{
	unsigned extra = 0;

	for (unsigned i = 0; i < FIB_ACCEL_TABLES; i++) {
		int err;

		if (!t->accel[i])
			continue;
		if (i && (extra++, a_table(t->accel[i]) == as_main_table(t))) {
			snprintf(buf, len, "compiled table %u is the main table's", i);
			return -EUCLEAN;
		}
		for (unsigned j = i + 1; j < FIB_ACCEL_TABLES; j++)
			if (t->accel[j] && a_table(t->accel[j]) == a_table(t->accel[i])) {
				snprintf(buf, len, "compiled tables %u and %u are both table %u's", i,
					 j, a_table(t->accel[i]));
				return -EUCLEAN;
			}
		if ((err = a_check(t, t->accel[i], buf, len)))
			return err;
	}
	if (extra != t->nextra) {
		snprintf(buf, len, "%u compiled tables besides [0], %u counted", extra, t->nextra);
		return -EUCLEAN;
	}
	return 0;
}

static void
as_free(struct TRIE_PREFIX *t)
{
	a_scratch_free(t);
	free(t->tabs.v);
	free(t->ltabs.v);
	free(t->tabs.hash);
	free(t->ltabs.hash);
}
