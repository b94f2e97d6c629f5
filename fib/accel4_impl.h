/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the IPv4 compiled lookup table, run bitmaps over the /18s
 *
 * Included by trie4.c after trie_impl.h, in place of accel_impl.h (the
 * poptrie-like table, selected with -DFIB_ACCEL4_POPTRIE); it meets the
 * trie through fib/trie_types.h.
 * The LC-trie stays the writer's structure; this table answers lookups
 * in one table with tos 0 (params accel_table) in two dependent reads
 * for any prefix up to /24:
 *
 *   dir[2^18]  one pointer per /18 (2 MiB, one huge page) to its segment
 *   segment    lv   u64: bit s set = a run of equal answers starts at
 *                   /24 slot s of the /18 (bit 0 always set)
 *              ans  u32[popcount(lv)]: one answer per run
 *   answer of address a:
 *       seg = dir[a >> 14], s = (a >> 8) & 63
 *       ans = seg->ans[popcount(seg->lv & mask(s)) - 1]
 *
 * lv and the answers share the segment's first cache line for the /18s
 * with at most 14 runs, nearly all of them. The /18s without any route
 * share one segment answering 0 (an empty table is the dir alone), and
 * neighbouring /18s that answer one route everywhere share one segment
 * too, which counts its sharers after its answer (a_one).
 *
 * An answer word is a pool handle (fib/pool.h) shifted left by 3 and
 *   k         alias k (< A_KMAX) of the trie leaf named by the handle
 *   A_DEEP    a deep node: the /24 holds longer prefixes
 * or 0 (no route) or A_ASK (the trie answers: an alias index of 4 or
 * more, or a /18 left to the trie for want of memory).
 *
 *   deep node  lv[4]  u64 run bitmaps over the /24's 256 addresses
 *              cum[4] runs started before each quarter
 *              ans    one answer per run
 *   answer: q = (a & 255) >> 6,
 *           ans[cum[q] + popcount(lv[q] & mask(a & 63)) - 1]
 *
 * so a route longer than /24 costs two more reads (the tier-1 table has
 * a few hundred such /24s among 16M).
 *
 * The idea (a direct array of run bitmaps with the answers stored once
 * per run) is poptrie's leafvec (Asai and Ohara, SIGCOMM 2015) at the
 * first level only, as DIR-24-8 (Gupta et al., INFOCOM 1998) makes the
 * first level direct.
 *
 * Building. One ordered pass: the routes of the table (tos 0) in key
 * order, shortest first at equal keys, are a preorder of the prefix tree,
 * so painting them in that order gives every /24 slot (and every address
 * of a deep /24) its longest match; a stack of the prefixes of /18 or
 * shorter gives each /18 its default.
 *
 * Updates (writer only). Segments and deep nodes are immutable once
 * published. A change to the leaf of key K rebuilds the /18s its
 * shortest prefix covers (before or after the change), in one pass as at
 * load, and publishes each new segment with one pointer store; the old
 * segment and its deep nodes are retired through the batched
 * reclamation. When that prefix is longer than /18 (nearly every change
 * in a full table), only the /24 slots it covers (its /24, if longer)
 * are repainted, in a copy of the segment: the deep nodes of the other
 * slots move to the copy, and the trie is read for those /24s and the
 * answer around them, not for the whole /18. The reclamation is held
 * from before the trie changes to after the table is patched: a reader
 * that found an answer naming the old leaf read the old segment before
 * the new one was published, so the grace period of the old leaf waits
 * for it too.
 *
 * If memory runs out, the /18 points to a shared segment answering
 * A_ASK and the trie answers it until it is rebuilt (the next change
 * that covers it, or a bulk load): slower, never wrong. If the whole
 * build at load fails, there is no table and the trie answers all.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fib/pool.h"
#include "fib/rcu.h"
#include "fib/reclaim.h"
#include "fib/trie_types.h"

#define A_DPBITS 18
#define A_NDP (1ul << A_DPBITS)
#define A_GROUP 64
#define A_KMAX 4

#define A_DEEP ((aword)4)

struct aseg {
	uint64_t lv;
	aword ans[];
};

struct adeep {
	uint64_t lv[4];
	uint16_t cum[4];
	aword ans[];
};

struct accel {
	uint32_t table;
	struct aseg **dir;
	const uintptr_t *lt; /* handle table of leaves and deep nodes (the FIB's pool) */
	struct pool *pool;
	struct aseg *askseg; /* one run answering A_ASK: /18s left to the trie */
	struct aseg *zeroseg; /* one run answering 0: /18s without a route, shared */
	bool holding;        /* writer: reclaim held since a_invalidate */
	/* writer only */
	uint64_t blocks, block_bytes, nodes, answers, asks;
	uint64_t fail[A_NDP / 64];
};

/* A segment of n runs; one of one run keeps, after its answer, how many
 * /18s share it (a_one). */
static inline size_t
aseg_size(unsigned n)
{
	return sizeof(struct aseg) + (n == 1 ? 2 : n) * sizeof(aword);
}

static inline unsigned
aseg_n(const struct aseg *s)
{
	return (unsigned)__builtin_popcountll(s->lv);
}

static inline unsigned
adeep_n(const struct adeep *d)
{
	return d->cum[3] + (unsigned)__builtin_popcountll(d->lv[3]);
}

static inline size_t
adeep_size(unsigned n)
{
	return sizeof(struct adeep) + n * sizeof(aword);
}

static inline unsigned long
a_top(tkey key)
{
	return (unsigned long)(key >> (KEYBITS - A_DPBITS));
}

#include "fib/accel_common.h"

static inline uint64_t
a_mask(unsigned s)
{
	return (UINT64_C(2) << s) - 1;
}

/* The runs of lv started at or before key's /24 slot s = (key >> 8) & 63:
 * lv shifted left by 63 - s, which is (~key >> 8) & 63 (x86 masks the
 * count, so this is one not, one shift and one shift by register; the
 * mask of a_mask takes three more). At least 1 (bit 0 is set). Unsigned
 * long, so that the caller's - 1 folds into the load's displacement. */
static inline unsigned long
a_runs_to(uint64_t lv, tkey key)
{
	return (unsigned long)__builtin_popcountll(lv << ((~(unsigned)key >> 8) & 63));
}

static inline const struct adeep *
a_deep(const struct accel *A, aword v)
{
	return pool_handle_ptr3(A->lt, v);
}

static inline aword
a_deep_word(const struct adeep *d, tkey key)
{
	unsigned b = (unsigned)key & 255, q = b >> 6;

	return d->ans[d->cum[q] + __builtin_popcountll(d->lv[q] & a_mask(b & 63)) - 1];
}

/* ---------------------------------------------------------- the lookups */

/* The answer word for key: 0, A_ASK or an answer. Call with rcu_read_lock. */
static inline __attribute__((always_inline)) aword
a_lookup(const struct accel *A, tkey key)
{
	const struct aseg *s = T_LOAD(A->dir[a_top(key)]);
	aword v = s->ans[a_runs_to(s->lv, key) - 1];

	if (__builtin_expect(v & A_DEEP, 0))
		v = a_deep_word(a_deep(A, v), key);
	return v;
}

/*
 * Batch: groups of A_GROUP lookups in rounds, each access prefetched a
 * whole round (the other lookups' accesses) before it is used: the dir
 * entries, then the segments' first lines, then the answers (when not on
 * that line). Deep /24s and answers left to the trie are finished last.
 * Out: results in res, or route references in ref (refs: 1; an answer
 * word is its route's reference, see TN(ref_of)). Instructions per
 * lookup are what bounds it (the accesses overlap): refs is a constant
 * in each copy, the dir slot is found once, the rounds are unrolled.
 */
static inline __attribute__((always_inline)) void
a_batch(const struct TRIE_PREFIX *t, const struct accel *A, const tkey *keys, uint32_t table,
	struct fib_result *res, uint32_t *ref, size_t n, const int refs)
{
	struct aseg *const *dir = A->dir;

	for (size_t base = 0; base < n; base += A_GROUP) {
		unsigned m = n - base < A_GROUP ? (unsigned)(n - base) : A_GROUP;
		const tkey *k = keys + base;
		struct fib_result *r = refs ? NULL : res + base;
		uint32_t *rf = refs ? ref + base : NULL;
		const void *wp[A_GROUP];
		uint8_t odd[A_GROUP];
		unsigned nodd = 0;

#pragma GCC unroll 4
		for (unsigned i = 0; i < m; i++) {
			wp[i] = &dir[a_top(k[i])];
			__builtin_prefetch(wp[i]);
		}
#pragma GCC unroll 4
		for (unsigned i = 0; i < m; i++) {
			const struct aseg *s = T_LOAD(*(struct aseg *const *)wp[i]);

			wp[i] = s;
			__builtin_prefetch(s);
		}
#pragma GCC unroll 4
		for (unsigned i = 0; i < m; i++) {
			const struct aseg *s = wp[i];

			wp[i] = &s->ans[a_runs_to(s->lv, k[i]) - 1];
			__builtin_prefetch(wp[i]);
		}
#pragma GCC unroll 4
		for (unsigned i = 0; i < m; i++) {
			aword v = *(const aword *)wp[i];

			/* (alias indexes 1 and 3 share A_ASK's bit) */
			if (__builtin_expect(v & A_DEEP, 0) || __builtin_expect(v == A_ASK, 0)) {
				odd[nodd++] = (uint8_t)i;
				continue;
			}
			if (refs)
				rf[i] = v;
			else
				a_result(A, v, &r[i]);
		}
		for (unsigned j = 0; j < nodd; j++) {
			unsigned i = odd[j];
			aword v = *(const aword *)wp[i];

			if (v & A_DEEP)
				v = a_deep_word(a_deep(A, v), k[i]);
			if (v == A_ASK && refs)
				rf[i] = TN(ref_of)(t, TN(lookup_trie)(t, k[i], table, 0));
			else if (v == A_ASK)
				r[i] = TN(lookup_trie)(t, k[i], table, 0);
			else if (refs)
				rf[i] = v;
			else
				a_result(A, v, &r[i]);
		}
	}
}

static inline __attribute__((always_inline)) void
a_lookup_batch(const struct TRIE_PREFIX *t, const struct accel *A, const tkey *keys,
	       uint32_t table, struct fib_result *res, uint32_t *ref, size_t n)
{
	if (ref)
		a_batch(t, A, keys, table, NULL, ref, n, 1);
	else
		a_batch(t, A, keys, table, res, NULL, n, 0);
}

/* ------------------------------------------------------------- building */

#include "fib/accel_build.h"

static void
a_count_deep(struct accel *A, const struct adeep *d, int sign)
{
	unsigned n = adeep_n(d);

	A->nodes += (uint64_t)(int64_t)sign;
	A->block_bytes += (uint64_t)((int64_t)sign * (int64_t)adeep_size(n));
	A->answers += (uint64_t)((int64_t)sign * (int64_t)n);
}

static void
a_count_seg(struct accel *A, const struct aseg *s, int sign)
{
	unsigned n = aseg_n(s);

	A->blocks += (uint64_t)(int64_t)sign;
	A->block_bytes += (uint64_t)((int64_t)sign * (int64_t)aseg_size(n));
	A->answers += (uint64_t)((int64_t)sign * (int64_t)n);
}

/* Runs of w[0 .. n-1] (n a multiple of 64) into lv[n / 64] and ans;
 * returns the number of runs. */
static unsigned
a_runs(const aword *w, unsigned n, uint64_t *lv, aword *ans)
{
	unsigned k = 0;

	for (unsigned q = 0; q < n / 64; q++)
		lv[q] = 0;
	for (unsigned s = 0; s < n; s++)
		if (!s || w[s] != w[s - 1]) {
			lv[s / 64] |= UINT64_C(1) << (s % 64);
			ans[k++] = w[s];
		}
	return k;
}

/* How a segment build treats the deep nodes it computes. */
struct asegb {
	struct TRIE_PREFIX *t;
	struct accel *A;
	unsigned long c; /* the /18 being made */
	const struct aseg *cmp; /* check: compare with this segment, allocate nothing */
	bool differs;
	struct adeep *made[64];
	unsigned nmade;
};

/* The deep node of one /24 (its slot answer dflt, its items in preorder),
 * made or compared; its word, or 0 with b->differs set or -ENOMEM in *err. */
static aword
a_deep_make(struct asegb *b, unsigned slot, aword dflt, const struct aitem *it, size_t n, int *err)
{
	aword w[256], ans[256];
	uint64_t lv[4];
	uint16_t cum[4];
	unsigned k = 0, nr;
	struct adeep *d;
	uint32_t h;

	for (unsigned s = 0; s < 256; s++)
		w[s] = dflt;
	for (size_t i = 0; i < n; i++) {
		unsigned s0 = (unsigned)it[i].key & 255, cnt = 1u << (KEYBITS - it[i].plen);
		for (unsigned s = s0; s < s0 + cnt; s++)
			w[s] = it[i].val;
	}
	nr = a_runs(w, 256, lv, ans);
	for (unsigned q = 0; q < 4; q++) {
		cum[q] = (uint16_t)k;
		k += (unsigned)__builtin_popcountll(lv[q]);
	}
	if (b->cmp) {
		aword cw = b->cmp->ans[__builtin_popcountll(b->cmp->lv & a_mask(slot)) - 1];
		const struct adeep *cd;

		if (!(cw & A_DEEP)) {
			b->differs = true;
			return 0;
		}
		cd = a_deep(b->A, cw);
		if (memcmp(cd->lv, lv, sizeof(lv)) || memcmp(cd->cum, cum, sizeof(cum)) ||
		    memcmp(cd->ans, ans, nr * sizeof(aword)))
			b->differs = true;
		return cw;
	}
	d = pool_alloc(b->A->pool, adeep_size(nr));
	h = d ? pool_handle(b->A->pool, d, adeep_size(nr)) : 0;
	if (!h) {
		if (d)
			pool_free(b->A->pool, d, adeep_size(nr));
		*err = -ENOMEM;
		return 0;
	}
	memcpy(d->lv, lv, sizeof(lv));
	memcpy(d->cum, cum, sizeof(cum));
	memcpy(d->ans, ans, nr * sizeof(aword));
	a_count_deep(b->A, d, 1);
	b->made[b->nmade++] = d;
	return (aword)(h << 3) | A_DEEP;
}

static void
a_free_deep(struct accel *A, struct adeep *d)
{
	a_count_deep(A, d, -1);
	pool_free(A->pool, d, adeep_size(adeep_n(d)));
}

/* Paint the slots of w (one /18) with its items in preorder: the
 * prefixes up to /24 over their slots, the longer ones of each /24 into
 * a deep node made (b->made) or compared. Returns 0 or -ENOMEM. */
static int
a_paint(struct asegb *b, aword *w, const struct aitem *it, size_t n)
{
	int err = 0;

	for (size_t i = 0, j; i < n && !err; i = j) {
		unsigned s0 = (unsigned)(it[i].key >> 8) & 63;

		j = i + 1;
		if (it[i].plen <= 24) {
			unsigned cnt = 1u << (24 - it[i].plen);
			for (unsigned x = s0; x < s0 + cnt; x++)
				w[x] = it[i].val;
			continue;
		}
		/* the longer prefixes of one /24 follow each other */
		while (j < n && it[j].plen > 24 && ((it[j].key >> 8) & 63) == s0)
			j++;
		w[s0] = a_deep_make(b, s0, w[s0], it + i, j - i, &err);
	}
	return err;
}

/* How many /18s share a one-run segment. Context: writer. */
static inline uint32_t *
a_one_refs(struct aseg *s)
{
	return &s->ans[1];
}

/*
 * The segment of /18 c answering v everywhere: zeroseg for "no route",
 * else the one of a neighbouring /18 that answers v everywhere too, with
 * one more sharer, else a new one. Three quarters of a full table's
 * /18s have one run, a fifth as many distinct answers (the /18s under
 * one shorter route): shared, they take a fifth of the memory, and a
 * lookup landing in one of them reads a line that other /18s keep in
 * cache. The two neighbours are what sharing needs, as a build goes up
 * the /18s and a route's /18s are contiguous. NULL on ENOMEM.
 * Context: writer.
 */
static struct aseg *
a_one(struct accel *A, unsigned long c, aword v)
{
	struct aseg *s;

	if (!v)
		return A->zeroseg;
	for (int d = -1; d <= 1; d += 2) {
		unsigned long x = c + (unsigned long)d;

		if (x >= A_NDP)
			continue;
		s = A->dir[x];
		if (s != A->askseg && s != A->zeroseg && s->lv == 1 && s->ans[0] == v) {
			++*a_one_refs(s);
			return s;
		}
	}
	s = pool_alloc(A->pool, aseg_size(1));
	if (!s)
		return NULL;
	s->lv = 1;
	s->ans[0] = v;
	*a_one_refs(s) = 1;
	a_count_seg(A, s, 1);
	return s;
}

/*
 * The segment of one /18 from its default dflt (routes of /18 or
 * shorter) and its routes longer than /18 in preorder: made (*out), or
 * compared with b->cmp. Returns 0 or -ENOMEM (nothing left allocated).
 */
static int
a_seg_make(struct asegb *b, aword dflt, const struct aitem *it, size_t n, struct aseg **out)
{
	aword w[64], ans[64];
	uint64_t lv;
	unsigned nr;
	int err = 0;
	struct aseg *s;

	b->nmade = 0;
	if (!n) {
		/* one run: most /18s of a sparse table, every /18 checked */
		if (b->cmp) {
			b->differs |= b->cmp->lv != 1 || b->cmp->ans[0] != dflt;
			return 0;
		}
		*out = a_one(b->A, b->c, dflt);
		return *out ? 0 : -ENOMEM;
	}
	for (unsigned i = 0; i < 64; i++)
		w[i] = dflt;
	err = a_paint(b, w, it, n);
	if (err)
		goto fail;
	nr = a_runs(w, 64, &lv, ans);
	if (b->cmp) {
		if (b->cmp->lv != lv || memcmp(b->cmp->ans, ans, nr * sizeof(aword)))
			b->differs = true;
		return 0;
	}
	if (lv == 1) { /* routes longer than /18 that answer as the /18 does */
		*out = a_one(b->A, b->c, ans[0]);
		return *out ? 0 : -ENOMEM;
	}
	s = pool_alloc(b->A->pool, aseg_size(nr));
	if (!s) {
		err = -ENOMEM;
		goto fail;
	}
	s->lv = lv;
	memcpy(s->ans, ans, nr * sizeof(aword));
	a_count_seg(b->A, s, 1);
	*out = s;
	return 0;
fail:
	while (b->nmade)
		a_free_deep(b->A, b->made[--b->nmade]);
	return err;
}

/* Free (never published) or retire segment s with the deep nodes of its
 * slots s0 .. s0 + cnt - 1: all of them, or those of the slots a copy
 * painted again (the copy took over the others). The shared segments
 * (askseg, zeroseg) stay. */
static void
a_seg_drop_part(struct TRIE_PREFIX *t, struct accel *A, struct aseg *s, unsigned s0,
		unsigned cnt, bool published)
{
	uint64_t lv;
	unsigned n;

	if (!s || s == A->askseg || s == A->zeroseg)
		return;
	if (s->lv == 1 && --*a_one_refs(s))
		return; /* other /18s share it */
	lv = s->lv;
	n = aseg_n(s);
	for (unsigned i = 0; i < n; i++, lv &= lv - 1) {
		unsigned x = (unsigned)__builtin_ctzll(lv);

		if ((s->ans[i] & A_DEEP) && x >= s0 && x < s0 + cnt) {
			struct adeep *d = (struct adeep *)a_deep(A, s->ans[i]);
			a_count_deep(A, d, -1);
			if (published)
				reclaim_retire(t->ctx->rc, d, adeep_size(adeep_n(d)));
			else
				pool_free(A->pool, d, adeep_size(adeep_n(d)));
		}
	}
	a_count_seg(A, s, -1);
	if (published)
		reclaim_retire(t->ctx->rc, s, aseg_size(n));
	else
		pool_free(A->pool, s, aseg_size(n));
}

/* Free (never published) or retire a segment and all its deep nodes. */
static void
a_seg_drop(struct TRIE_PREFIX *t, struct accel *A, struct aseg *s, bool published)
{
	a_seg_drop_part(t, A, s, 0, A_GROUP, published);
}

static bool
a_failed(const struct accel *A, unsigned long c)
{
	return (A->fail[c / 64] >> (c % 64)) & 1;
}

static void
a_set_failed(struct accel *A, unsigned long c, bool on)
{
	if (on)
		A->fail[c / 64] |= UINT64_C(1) << (c % 64);
	else
		A->fail[c / 64] &= ~(UINT64_C(1) << (c % 64));
}

/* Publish s as /18 c's segment (one store), retiring the one it replaces. */
static void
a_set_seg(struct TRIE_PREFIX *t, struct accel *A, unsigned long c, struct aseg *s, bool published)
{
	struct aseg *old = A->dir[c];

	if (old == A->askseg)
		A->asks--;
	if (s == A->askseg)
		A->asks++;
	a_set_failed(A, c, s == A->askseg);
	T_STORE(A->dir[c], s);
	a_seg_drop(t, A, old, published);
}

/* The aligned run of /18s c0 .. c0 + cnt - 1 (cnt a power of two) that a
 * prefix of key with suffix slen covers (its /18 if longer). */
static void
a_range(tkey key, unsigned slen, unsigned long *c0, unsigned long *cnt)
{
	unsigned span = slen > KEYBITS - A_DPBITS ? slen - (KEYBITS - A_DPBITS) : 0;

	*cnt = 1ul << span;
	*c0 = a_top(key) & ~(*cnt - 1);
}

/*
 * Build the /18s c0 .. c0 + cnt - 1 (aligned, cnt a power of two) of A
 * from the trie in one ordered pass over their key range: each segment
 * is published with one store (published: A is live, the old segment is
 * retired), or with b->cmp set compared with what A holds (check). A /18
 * that cannot be built is left to the trie. Returns 0 or -ENOMEM.
 */
static int
a_build_range(struct TRIE_PREFIX *t, struct accel *A, unsigned long c0, unsigned long cnt,
	      bool published, bool check, bool *differs, unsigned long *where)
{
	unsigned lr = A_DPBITS - (unsigned)__builtin_ctzl(cnt);
	tkey lo = (tkey)c0 << (KEYBITS - A_DPBITS);
	tkey hi = lo | a_low_mask(KEYBITS - lr);
	struct avec all = { 0 };
	struct {
		tkey hi;
		aword val;
	} st[A_DPBITS + 2];
	unsigned sp = 0;
	aword outer;
	size_t i = 0;
	int err, ret = 0;
	struct asegb b = { .t = t, .A = A };

	err = a_collect(t, t->root, lo, hi, A->table, (int)lr - 1, KEYBITS, 0, &all, &all);
	if (err) {
		avec_free(&all);
		if (check)
			return err;
		for (unsigned long c = c0; c < c0 + cnt; c++)
			a_set_seg(t, A, c, A->askseg, published);
		return err;
	}
	outer = a_outer(t, A->table, lo, lr);
	for (unsigned long c = c0; c < c0 + cnt; c++) {
		tkey clo = (tkey)c << (KEYBITS - A_DPBITS), chi = clo | a_low_mask(KEYBITS - A_DPBITS);
		size_t j;
		struct aseg *s = NULL;

		/* the prefixes of /18 or shorter that start here: nested in
		 * the ones on the stack, or after them */
		for (; i < all.n && all.v[i].plen <= A_DPBITS && all.v[i].key <= clo; i++) {
			while (sp && st[sp - 1].hi < all.v[i].key)
				sp--;
			st[sp].hi = all.v[i].key | a_low_mask(KEYBITS - all.v[i].plen);
			st[sp].val = all.v[i].val;
			sp++;
		}
		while (sp && st[sp - 1].hi < clo)
			sp--;
		for (j = i; j < all.n && all.v[j].key <= chi; j++)
			;
		b.c = c;
		if (check) {
			if (A->dir[c] == A->askseg && a_failed(A, c)) {
				i = j;
				continue; /* left to the trie */
			}
			b.cmp = A->dir[c];
			b.differs = false;
			err = a_seg_make(&b, sp ? st[sp - 1].val : outer, all.v ? all.v + i : NULL, j - i, &s);
			if (!err && b.differs) {
				*differs = true;
				*where = c;
				break;
			}
		} else {
			aword d = sp ? st[sp - 1].val : outer;

			if (published && A->dir[c] != A->askseg) {
				/* unchanged /18s keep their segment */
				b.cmp = A->dir[c];
				b.differs = false;
				a_seg_make(&b, d, all.v ? all.v + i : NULL, j - i, &s);
				b.cmp = NULL;
				if (!b.differs) {
					i = j;
					continue;
				}
			}
			err = a_seg_make(&b, d, all.v ? all.v + i : NULL, j - i, &s);
			a_set_seg(t, A, c, err ? A->askseg : s, published);
		}
		if (err)
			ret = err;
		i = j;
	}
	avec_free(&all);
	return ret;
}

/*
 * A change whose leaf's widest prefix (suffix slen) is longer than /18:
 * repaint only the /24 slots that prefix covers (its /24 if it is
 * longer) in a copy of the segment, from the routes inside them and the
 * answer of the shorter ones, and publish the copy. It is what a fresh
 * build of the /18 makes (a_check compares); the deep nodes of the other
 * slots move to it, so one /24's change reads one /24 of the trie, not
 * the /18. Returns 0, -ENOMEM with nothing changed, or -EAGAIN when the
 * /18 is left to the trie (the caller rebuilds it).
 */
static int
a_patch_slots(struct TRIE_PREFIX *t, struct accel *A, tkey key, unsigned slen)
{
	unsigned long c = a_top(key);
	struct aseg *old = A->dir[c], *s;
	unsigned span = slen < 8 ? 8 : slen;
	tkey lo = key & ~a_low_mask(span), hi = lo | a_low_mask(span);
	unsigned s0 = (unsigned)(lo >> 8) & 63, cnt = 1u << (span - 8), nr, k = 0;
	aword w[64], ans[64], outer;
	struct avec v = { 0 };
	struct asegb b = { .t = t, .A = A, .c = c };
	uint64_t lv;
	int err;

	if (old == A->askseg)
		return -EAGAIN;
	for (unsigned x = 0; x < 64; x++) {
		k += (unsigned)(old->lv >> x) & 1;
		w[x] = old->ans[k - 1];
	}
	err = a_collect(t, t->root, lo, hi, A->table, (int)(KEYBITS - span) - 1, KEYBITS, 0, &v,
			&v);
	if (err) {
		avec_free(&v);
		return err;
	}
	outer = a_outer(t, A->table, lo, KEYBITS - span);
	for (unsigned x = s0; x < s0 + cnt; x++)
		w[x] = outer;
	err = a_paint(&b, w, v.v, v.n);
	avec_free(&v);
	if (err)
		goto fail;
	nr = a_runs(w, 64, &lv, ans);
	if (lv == old->lv && !memcmp(ans, old->ans, nr * sizeof(aword)))
		return 0; /* (a deep node made has a new handle: never equal) */
	if (lv == 1) {
		s = a_one(A, c, ans[0]);
		if (!s) {
			err = -ENOMEM;
			goto fail;
		}
	} else {
		s = pool_alloc(A->pool, aseg_size(nr));
		if (!s) {
			err = -ENOMEM;
			goto fail;
		}
		s->lv = lv;
		memcpy(s->ans, ans, nr * sizeof(aword));
		a_count_seg(A, s, 1);
	}
	T_STORE(A->dir[c], s);
	a_seg_drop_part(t, A, old, s0, cnt, true);
	return 0;
fail:
	while (b.nmade)
		a_free_deep(A, b.made[--b.nmade]);
	return err;
}

/* ------------------------------------------------------------- updates */

/*
 * Before the trie changes the leaf of key: hold the reclamation, so that
 * the old leaf's grace period starts only after a_revalidate has
 * published the segments that no longer name it.
 */
static void
a_invalidate(struct TRIE_PREFIX *t, struct accel *A, tkey key, unsigned slen)
{
	(void)key;
	(void)slen;
	if (A->holding)
		return;
	reclaim_hold(t->ctx->rc);
	A->holding = true;
}

/* After the change: repaint the /24s, or rebuild the /18s, that the
 * leaf's shortest prefix (slen, before or after the change) covers. */
static void
a_revalidate(struct TRIE_PREFIX *t, struct accel *A, tkey key, unsigned slen)
{
	unsigned long c0, cnt;
	int err = slen < KEYBITS - A_DPBITS ? a_patch_slots(t, A, key, slen) : -EAGAIN;

	if (err == -ENOMEM) /* as a rebuild that fails: left to the trie */
		a_set_seg(t, A, a_top(key), A->askseg, true);
	if (err == -EAGAIN) {
		a_range(key, slen, &c0, &cnt);
		a_build_range(t, A, c0, cnt, true, false, NULL, NULL);
	}
	if (A->holding) {
		A->holding = false;
		reclaim_release(t->ctx->rc);
	}
}

/* Free a table that was never published. */
static void
a_free_now(struct TRIE_PREFIX *t, struct accel *A)
{
	for (unsigned long c = 0; c < A_NDP; c++)
		a_seg_drop(t, A, A->dir[c], false);
	pool_free(A->pool, A->askseg, aseg_size(1));
	pool_free(A->pool, A->zeroseg, aseg_size(1));
	pool_free(A->pool, A->dir, A_NDP * sizeof(A->dir[0]));
	pool_free(A->pool, A, sizeof(*A));
}

static void
a_retire_all(struct TRIE_PREFIX *t, struct accel *A)
{
	for (unsigned long c = 0; c < A_NDP; c++)
		a_seg_drop(t, A, A->dir[c], true);
	reclaim_retire(t->ctx->rc, A->askseg, aseg_size(1));
	reclaim_retire(t->ctx->rc, A->zeroseg, aseg_size(1));
	reclaim_retire(t->ctx->rc, A->dir, A_NDP * sizeof(A->dir[0]));
	reclaim_retire(t->ctx->rc, A, sizeof(*A));
}

/* A whole table for the trie as it is, or NULL (ENOMEM). */
static struct accel *
a_build_all(struct TRIE_PREFIX *t, uint32_t table)
{
	struct pool *p = t->ctx->pool;
	struct accel *A = pool_alloc(p, sizeof(*A));
	struct aseg **dir = A ? pool_alloc(p, A_NDP * sizeof(*dir)) : NULL;
	struct aseg *ask = dir ? pool_alloc(p, aseg_size(1)) : NULL;
	struct aseg *zero = ask ? pool_alloc(p, aseg_size(1)) : NULL;

	if (!zero) {
		if (ask)
			pool_free(p, ask, aseg_size(1));
		if (dir)
			pool_free(p, dir, A_NDP * sizeof(*dir));
		if (A)
			pool_free(p, A, sizeof(*A));
		return NULL;
	}
	memset(A, 0, sizeof(*A));
	A->table = table;
	A->dir = dir;
	A->pool = p;
	A->lt = pool_handle_table(p);
	ask->lv = 1;
	ask->ans[0] = A_ASK;
	A->askseg = ask;
	zero->lv = 1;
	zero->ans[0] = 0;
	A->zeroseg = zero;
	if (!t->root) {
		/* an empty trie (every fib_new): every /18 answers "no
		 * route", without a pass of a_build_range over 2^18 /18s */
		for (unsigned long c = 0; c < A_NDP; c++)
			dir[c] = zero;
		A->asks = 0;
		memset(A->fail, 0, sizeof(A->fail));
		return A;
	}
	for (unsigned long c = 0; c < A_NDP; c++)
		dir[c] = ask;
	A->asks = A_NDP;
	memset(A->fail, 0xff, sizeof(A->fail));
	if (a_build_range(t, A, 0, A_NDP, false, false, NULL, NULL)) {
		a_free_now(t, A);
		return NULL;
	}
	return A;
}

static size_t
a_bytes(const struct accel *A)
{
	return sizeof(*A) + A_NDP * sizeof(A->dir[0]) + 2 * aseg_size(1) + A->block_bytes;
}

/* ------------------------------------------------------ check and stats */

static void
a_scratch_free(struct TRIE_PREFIX *t)
{
	free(t->adflt);
}

static int
a_ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* Every shared one-run segment counts the /18s that point to it. */
static int
a_check_refs(struct accel *A, char *buf, size_t len)
{
	uintptr_t *p = malloc(A_NDP * sizeof(*p));
	size_t n = 0;
	int ret = 0;

	if (!p)
		return 0; /* no memory for the check: the other checks only */
	for (unsigned long c = 0; c < A_NDP; c++)
		if (A->dir[c] != A->askseg && A->dir[c] != A->zeroseg && A->dir[c]->lv == 1)
			p[n++] = (uintptr_t)A->dir[c];
	qsort(p, n, sizeof(*p), a_ptr_cmp);
	for (size_t i = 0, j; i < n && !ret; i = j) {
		for (j = i + 1; j < n && p[j] == p[i]; j++)
			;
		if (*a_one_refs((struct aseg *)p[i]) != j - i) {
			snprintf(buf, len, "compiled table one-run segment shared by %zu /18s counts %u",
				 j - i, *a_one_refs((struct aseg *)p[i]));
			ret = -EUCLEAN;
		}
	}
	free(p);
	return ret;
}

/*
 * Every /18 (those left to the trie aside) holds what a fresh build from
 * the trie would, and the answers at both ends of every prefix and just
 * outside them equal the trie's own lookups.
 */
static int
a_check(struct TRIE_PREFIX *t, struct accel *A, char *buf, size_t len)
{
	bool differs = false;
	unsigned long where = 0, asks = 0;

	if (a_check_refs(A, buf, len))
		return -EUCLEAN;

	for (unsigned long c = 0; c < A_NDP; c++) {
		asks += A->dir[c] == A->askseg;
		if (A->dir[c] == A->askseg && !a_failed(A, c)) {
			snprintf(buf, len, "compiled table /18 %lu is left to the trie, not failed", c);
			return -EUCLEAN;
		}
	}
	if (asks != A->asks) {
		snprintf(buf, len, "compiled table counts %llu /18s for the trie, holds %lu",
			 (unsigned long long)A->asks, asks);
		return -EUCLEAN;
	}
	/* no memory for the pass: the probes only */
	if (!a_build_range(t, A, 0, A_NDP, false, true, &differs, &where) && differs) {
		snprintf(buf, len, "compiled table /18 %lu differs from a fresh build", where);
		return -EUCLEAN;
	}
	return a_check_rec(t, A, t->root, buf, len);
}
