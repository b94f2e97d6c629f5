/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the IPv6 compiled lookup table: a /32 hash over range blocks
 *
 * Included by trie6.c after trie_impl.h; it meets the trie through
 * fib/trie_types.h. The LC-trie stays the writer's structure; this table
 * answers lookups in one table with tos 0 (params accel_table6). A full
 * IPv6 table is sparse at the top (a few dozen /16s hold routes) and
 * dense below the /32s (tens of thousands of /32s hold the /32 - /64
 * routes, most with a handful of distinct answers), so two levels:
 *
 *   hash   the /32s that hold routes of /32 or longer: a hash on the top
 *          32 bits, buckets of one cache line, 8 x {key32, word32}. A key
 *          goes to its first bucket, else to its second, and then the
 *          first bucket's spill bit says so: a lookup reads one bucket
 *          (a table at half load spills a few percent).
 *   word   of a /32, from its routes of /32 and longer only: an answer,
 *          A_ASK, a range block over the /32's bits 32-63, or a dir
 *          (A_BLK | A_DIR: 256 words, one per /40, each an answer or a
 *          block) for the /32s with more than A_DIR_MIN intervals
 *   dp     one word per /16 for the other addresses, and where a /32's
 *          word answers 0: the routes of /16 or shorter, or a range block
 *          over bits 16-47 of the /16's routes /17 - /31
 *   block  the sorted starts of the intervals of equal answers and one
 *          answer per interval, in 64-byte lines, searched by counting
 *          the lanes below x (one compare of 16 lanes: AVX-512 where the
 *          CPU has it, chosen at run time; SSE2 otherwise):
 *          up to 8 intervals   one line: lane 0 header, lanes 1-7 the
 *                              starts - 1 of intervals 1-7, lanes 8-15
 *                              the answers
 *          up to 16            lanes 1-15 the starts, then a line of answers
 *          more (R_MAX)        leaf lines of 8 intervals as the first
 *                              case, under 1-3 levels of 16-way lines
 *                              (r_levels), the root first
 *
 * So a /48 costs the bucket, the block's line (up to 8 intervals) and
 * the leaf it names; a /32 holding thousands of routes, the dir's word
 * and a small block. Routes longer than /64 make their /64 an interval
 * that answers A_ASK (the trie answers it). The answer words are those
 * of the other tables (fib/trie_types.h): a leaf's handle and alias.
 *
 * Updates (writer only). Blocks are immutable once published; a block
 * is replaced by one store of its word (in the hash, a dir or a dp
 * entry) and the old one retired through the batched reclamation. The
 * two levels do not share routes, so a change touches only where the
 * changed leaf's routes (before or after) answer: for those shorter
 * than /32, the intervals of the shortest one's range in its /16's block
 * (or whole /16s, for /16 and shorter); for /32 and longer, the leaf's
 * /32 again from the trie, or under a dir only its /40. The hash never
 * moves an entry: an insert takes a free slot, or the hash is rebuilt
 * twice as large and published with one store; an entry is written
 * with one 8-byte store and read whole. The reclamation is held from
 * before the trie changes to after the table is patched, as for the
 * IPv4 table.
 *
 * If memory runs out, the /32 answers A_ASK (no block), or, when its
 * hash entry cannot be made, its /16 answers A_ASK for good (until the
 * next whole build): the trie answers, slower, never wrong. If the whole
 * build fails, there is no table and the trie answers all.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "fib/pool.h"
#include "fib/rcu.h"
#include "fib/reclaim.h"
#include "fib/trie_types.h"

#if TRIE_KEYBITS != 128
#error "accel6_impl.h is the IPv6 table"
#endif

#define A_DPBITS 16
#define A_NDP (1ul << A_DPBITS)
#define A_GROUP 64
#define A_KMAX 4
#define A_BLK ((aword)4)
#define A_DIR ((aword)1) /* with A_BLK: a /32's dir of 256 words, one per /40 */
#define R_MAX 32767 /* intervals of one block at most (15 bits) */
#define H_WAYS 8
#define H_MINBITS 6

/* A 64-byte bucket: entry i is key | (uint64_t)word << 32, 0 when free. */
struct hbkt {
	uint64_t e[H_WAYS];
} __attribute__((aligned(64)));

struct ahash {
	unsigned bits;        /* 2^bits buckets */
	uint32_t count;       /* entries (writer) */
	struct hbkt *b;       /* inside this object, 64-byte aligned */
	uint64_t *spill;      /* bit j: a key whose first bucket is j went to
			       * its second (read it too); inside, after b */
	size_t size;          /* of this object */
};

struct rpaint;

struct accel {
	uint32_t table;
	struct ahash *hash;
	aword *dp;
	const uintptr_t *lt; /* handle table of the leaves and blocks (the FIB's pool) */
	struct pool *pool;
	bool holding;        /* writer: reclaim held since a_invalidate */
	bool lost;           /* writer: an entry or block could not be made */
	uint64_t lens[3];    /* writer: prefix lengths of the changed leaf's
			      * routes here, before and after the change */
	/* writer only */
	uint64_t blocks, block_bytes, nodes, answers, asks;
	uint64_t fail[A_NDP / 64]; /* /16s left to the trie: a /32 had no hash entry */
};

#include "fib/accel_common.h"

static inline uint32_t
a_k32(tkey key)
{
	return (uint32_t)(key >> 96);
}

static inline const uint32_t *
a_rblk(const struct accel *A, aword v)
{
	return pool_handle_ptr3(A->lt, v);
}

/* ---------------------------------------------------------- the lookups */

/* The AVX-512 copies of the batch, where the CPU has AVX-512BW (not under
 * ThreadSanitizer: it reads the hash's entries one by one, atomically). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_THREAD__) && \
	!defined(FIB_NO_AVX512)
#if defined(__has_feature)
#if !__has_feature(thread_sanitizer)
#define A_AVX512 1
#endif
#else
#define A_AVX512 1
#endif
#endif

static inline bool
h_spilled(const struct ahash *H, unsigned j)
{
	return (__atomic_load_n(&H->spill[j / 64], __ATOMIC_RELAXED) >> (j % 64)) & 1;
}

static inline bool
a_vec(void)
{
#ifdef A_AVX512
	return __builtin_cpu_supports("avx512bw");
#else
	return false;
#endif
}

static inline unsigned
h_b1(uint32_t k, unsigned bits)
{
	return (k * 0x9e3779b1u) >> (32 - bits);
}

static inline unsigned
h_b2(uint32_t k, unsigned bits)
{
	return ((k ^ (k >> 16)) * 0x85ebca6bu) >> (32 - bits);
}

/* The word of key k in bucket b, 0 if none: no branch on a match (a
 * key is in one slot of its two buckets at most; free slots are 0).
 * Inserts fill a key's first bucket first; its second one is read only
 * when the first one's spill bit says a key went there. */
static inline aword
h_find_bkt(const struct hbkt *b, uint32_t k)
{
	uint64_t v = 0;

	for (int i = 0; i < H_WAYS; i++) {
		uint64_t e = __atomic_load_n(&b->e[i], __ATOMIC_ACQUIRE);

		v |= (uint64_t)((uint32_t)e == k) * (e >> 32);
	}
	return (aword)v;
}

/* The count of lanes 1-15 of line (those in mask) below x. */
static inline unsigned
r_count(const uint32_t *line, uint32_t mask, uint32_t x)
{
#if defined(__x86_64__)
	__m128i bias = _mm_set1_epi32((int)0x80000000u);
	__m128i xv = _mm_xor_si128(_mm_set1_epi32((int)x), bias);
	unsigned m = 0;

	for (int q = 0; q < 4; q++) {
		__m128i l = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(line + 4 * q)), bias);

		m |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmplt_epi32(l, xv))) << (4 * q);
	}
	return (unsigned)__builtin_popcount(m & mask);
#else
	unsigned c = 0;

	for (int i = 1; i < 16; i++)
		c += ((mask >> i) & 1) & (line[i] < x);
	return c;
#endif
}

#ifdef A_AVX512
__attribute__((target("avx512f,avx512bw,popcnt"))) static inline unsigned
r_count512(const uint32_t *line, uint32_t mask, uint32_t x)
{
	__mmask16 m = _mm512_cmplt_epu32_mask(_mm512_loadu_si512(line), _mm512_set1_epi32((int)x));

	return (unsigned)__builtin_popcount((unsigned)m & mask);
}

__attribute__((target("avx512f,avx512bw,popcnt,bmi"))) static inline aword
h_find512(const struct hbkt *b, uint32_t k)
{
	__m512i e = _mm512_load_si512(b);
	/* key lanes equal to k whose word lane is not 0 */
	unsigned m = (unsigned)_mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32((int)k)) &
		     ((unsigned)_mm512_test_epi32_mask(e, e) >> 1) & 0x5555u;

	return m ? ((const uint32_t *)b)[__builtin_ctz(m) + 1] : 0;
}
#endif

/* Lanes of line below x (those of mask), counted with `vec` (1: AVX-512). */
static inline __attribute__((always_inline)) unsigned
r_cnt(const uint32_t *line, uint32_t mask, uint32_t x, const int vec)
{
#ifdef A_AVX512
	if (vec)
		return r_count512(line, mask, x);
#endif
	return r_count(line, mask, x);
}

/*
 * A multi-level block of n intervals: leaf lines of 8 intervals each
 * (lanes 1-7 the starts of the 2nd to 8th, lanes 8-15 their answers),
 * under k levels of 16-way lines (lane i: the start of child i's first
 * interval), the root first, then each level in order.
 */
static inline unsigned
r_levels(unsigned n)
{
	return n <= 128 ? 1 : n <= 2048 ? 2 : 3;
}

/* Lines of level l (k: the leaves) of such a block. */
static inline unsigned
r_lines(unsigned n, unsigned k, unsigned l)
{
	unsigned leaves = (n + 7) / 8;

	return (leaves + (1u << 4 * (k - l)) - 1) >> (4 * (k - l));
}

/* The answer of leaf line b at x. */
static inline __attribute__((always_inline)) aword
r_leaf(const uint32_t *b, uint32_t x, const int vec)
{
	return b[8 + r_cnt(b, 0xfe, x, vec)];
}

/* Multi-level block b (header h) at x, from its root line's count c. */
static inline __attribute__((always_inline)) aword
r_deep(const uint32_t *b, uint32_t h, unsigned c, uint32_t x, const int vec)
{
	unsigned n = (h >> 16) & 0x7fff, k = r_levels(n), off = 1;

	for (unsigned l = 1; l < k; l++) {
		c = 16 * c + r_cnt(b + 16 * (off + c), 0xfffe, x, vec);
		off += r_lines(n, k, l);
	}
	return r_leaf(b + 16 * (off + c), x, vec);
}

/* The answer of block b at x. */
static inline __attribute__((always_inline)) aword
r_search(const uint32_t *b, uint32_t x, const int vec)
{
	uint32_t h = b[0];
	unsigned c = r_cnt(b, h & 0xffff, x, vec);

	if (__builtin_expect(h >> 31, 0))
		return r_deep(b, h, c, x, vec);
	return b[((h >> 16) & 0x7fff) + c];
}

/* A /32's word resolved at x: a dir's word for x's /40, then a block's
 * answer. 0: no route of /32 or longer (the /16 level answers). */
static inline __attribute__((always_inline)) aword
a_word(const struct accel *A, aword v, uint32_t x, const int vec)
{
	if (v & A_BLK) {
		const uint32_t *b = a_rblk(A, v);

		if (v & A_DIR) {
			v = T_LOAD(b[x >> 24]);
			if (!(v & A_BLK))
				return v;
			b = a_rblk(A, v);
		}
		v = r_search(b, x, vec);
	}
	return v;
}

/* The answer word for key: 0, A_ASK or an answer. Call with rcu_read_lock. */
static inline __attribute__((always_inline)) aword
a_lookup(const struct accel *A, tkey key)
{
	uint32_t k = a_k32(key);
	const struct ahash *H = T_LOAD(A->hash);
	unsigned j = h_b1(k, H->bits);
	aword v = h_find_bkt(&H->b[j], k);

	if (!v && h_spilled(H, j))
		v = h_find_bkt(&H->b[h_b2(k, H->bits)], k);
	if (v)
		v = a_word(A, v, (uint32_t)(key >> 64), 0);
	if (!v)
		v = a_word(A, T_LOAD(A->dp[k >> 16]), (uint32_t)(key >> 80), 0);
	return v;
}

/*
 * The words w[i] of the lookups idx[0 .. n) resolved at x[i] into
 * answers, in rounds: each access is prefetched a whole round (the
 * other lookups' accesses) before it is used. The dirs' words, then the
 * blocks' first lines, then (multi-level blocks) one level per round,
 * then the answers' lines.
 */
static inline __attribute__((always_inline)) void
a_resolve(const struct accel *A, const uint8_t *idx, unsigned n, aword *w, const uint32_t *x,
	  const int vec)
{
	const uint32_t *p[A_GROUP];
	uint8_t act[A_GROUP], di[A_GROUP], dlv[A_GROUP];
	uint16_t dl[A_GROUP], dc[A_GROUP], doff[A_GROUP];
	unsigned na = 0, nd = 0, ndir = 0;

	for (unsigned j = 0; j < n; j++) {
		unsigned i = idx[j];

		if (w[i] & A_BLK) {
			const uint32_t *b = a_rblk(A, w[i]);

			p[i] = w[i] & A_DIR ? &b[x[i] >> 24] : b;
			ndir += (w[i] & A_DIR) != 0;
			__builtin_prefetch(p[i]);
			act[na++] = (uint8_t)i;
		}
	}
	if (ndir) {
		unsigned nn = 0;

		for (unsigned j = 0; j < na; j++) {
			unsigned i = act[j];

			if (w[i] & A_DIR) {
				aword v = T_LOAD(*p[i]);

				w[i] = v;
				if (!(v & A_BLK))
					continue;
				p[i] = a_rblk(A, v);
				__builtin_prefetch(p[i]);
			}
			act[nn++] = (uint8_t)i;
		}
		na = nn;
	}
	/* the blocks' first lines: the answer's place, or the next line of
	 * a multi-level block */
	for (unsigned j = 0; j < na; j++) {
		unsigned i = act[j];
		const uint32_t *b = p[i];
		uint32_t h = b[0];
		unsigned c = r_cnt(b, h & 0xffff, x[i], vec);

		if (__builtin_expect(h >> 31, 0)) {
			dl[nd] = (uint16_t)((h >> 16) & 0x7fff);
			dc[nd] = (uint16_t)c;
			doff[nd] = 1;
			dlv[nd] = 1;
			di[nd++] = (uint8_t)i;
			__builtin_prefetch(b + 16 * (1 + c));
			continue;
		}
		p[i] = &b[((h >> 16) & 0x7fff) + c];
		__builtin_prefetch(p[i]);
	}
	/* multi-level blocks: one level per round, the leaf line last (the
	 * answer is on it) */
	while (nd) {
		unsigned nn = 0;

		for (unsigned j = 0; j < nd; j++) {
			unsigned i = di[j], bn = dl[j], kl = r_levels(bn), l = dlv[j];
			const uint32_t *b = p[i];
			unsigned c, off;

			if (l == kl) {
				p[i] = b + 16 * (doff[j] + dc[j]);
				p[i] += 8 + r_cnt(p[i], 0xfe, x[i], vec);
				continue;
			}
			c = 16u * dc[j] + r_cnt(b + 16 * (doff[j] + dc[j]), 0xfffe, x[i], vec);
			off = doff[j] + r_lines(bn, kl, l);
			dl[nn] = (uint16_t)bn;
			dc[nn] = (uint16_t)c;
			doff[nn] = (uint16_t)off;
			dlv[nn] = (uint8_t)(l + 1);
			di[nn++] = (uint8_t)i;
			__builtin_prefetch(b + 16 * (off + c));
		}
		nd = nn;
	}
	for (unsigned j = 0; j < na; j++)
		w[act[j]] = *p[act[j]];
}

/*
 * Batch: groups of A_GROUP lookups. The keys' first buckets (all
 * prefetched first), then their /32s' words resolved (a_resolve); the
 * lookups that found no /32 or no route in it go to their /16s: the dp
 * entries (prefetched), resolved likewise. Answers left to the trie are
 * finished last. Out: results in res, or route references in ref
 * (refs: 1).
 */
static inline __attribute__((always_inline)) void
a_batch(const struct TRIE_PREFIX *t, const struct accel *A, const tkey *keys, uint32_t table,
	struct fib_result *res, uint32_t *ref, size_t n, const int refs, const int vec)
{
	const struct ahash *H = T_LOAD(A->hash);
	const struct hbkt *bk = H->b;
	const aword *dp = A->dp;
	unsigned bits = H->bits;

	for (size_t base = 0; base < n; base += A_GROUP) {
		unsigned m = n - base < A_GROUP ? (unsigned)(n - base) : A_GROUP;
		const tkey *k = keys + base;
		struct fib_result *r = refs ? NULL : res + base;
		uint32_t *rf = refs ? ref + base : NULL;
		uint32_t x[A_GROUP];
		aword w[A_GROUP];
		uint8_t hit[A_GROUP], miss[A_GROUP], odd[A_GROUP];
		unsigned nhit = 0, nmiss = 0, nodd = 0;

		for (unsigned i = 0; i < m; i++)
			__builtin_prefetch(&bk[h_b1(a_k32(k[i]), bits)]);
		for (unsigned i = 0; i < m; i++) {
			uint32_t k32 = a_k32(k[i]);
			unsigned j = h_b1(k32, bits);
			aword v;

#ifdef A_AVX512
			if (vec) {
				v = h_find512(&bk[j], k32);
				if (__builtin_expect(!v && h_spilled(H, j), 0))
					v = h_find512(&bk[h_b2(k32, bits)], k32);
			} else
#endif
			{
				v = h_find_bkt(&bk[j], k32);
				if (__builtin_expect(!v && h_spilled(H, j), 0))
					v = h_find_bkt(&bk[h_b2(k32, bits)], k32);
			}
			x[i] = (uint32_t)(k[i] >> 64);
			w[i] = v;
			if (v)
				hit[nhit++] = (uint8_t)i;
		}
		a_resolve(A, hit, nhit, w, x, vec);
		for (unsigned i = 0; i < m; i++)
			if (!w[i]) {
				uint32_t k32 = a_k32(k[i]);

				__builtin_prefetch(&dp[k32 >> 16]);
				x[i] = k32 << 16;
				miss[nmiss++] = (uint8_t)i;
			}
		for (unsigned j = 0; j < nmiss; j++)
			w[miss[j]] = T_LOAD(dp[a_k32(k[miss[j]]) >> 16]);
		a_resolve(A, miss, nmiss, w, x, vec);
		for (unsigned i = 0; i < m; i++) {
			aword v = w[i];

			if (__builtin_expect(v == A_ASK, 0)) {
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

			if (refs)
				rf[i] = TN(ref_of)(t, TN(lookup_trie)(t, k[i], table, 0));
			else
				r[i] = TN(lookup_trie)(t, k[i], table, 0);
		}
	}
}

#ifdef A_AVX512
__attribute__((target("avx512f,avx512bw,popcnt,bmi"), noinline)) static void
a_batch512_res(const struct TRIE_PREFIX *t, const struct accel *A, const tkey *keys,
	       uint32_t table, struct fib_result *res, size_t n)
{
	a_batch(t, A, keys, table, res, NULL, n, 0, 1);
}

__attribute__((target("avx512f,avx512bw,popcnt,bmi"), noinline)) static void
a_batch512_ref(const struct TRIE_PREFIX *t, const struct accel *A, const tkey *keys,
	       uint32_t table, uint32_t *ref, size_t n)
{
	a_batch(t, A, keys, table, NULL, ref, n, 1, 1);
}
#endif

static inline __attribute__((always_inline)) void
a_lookup_batch(const struct TRIE_PREFIX *t, const struct accel *A, const tkey *keys,
	       uint32_t table, struct fib_result *res, uint32_t *ref, size_t n)
{
#ifdef A_AVX512
	if (a_vec()) {
		if (ref)
			a_batch512_ref(t, A, keys, table, ref, n);
		else
			a_batch512_res(t, A, keys, table, res, n);
		return;
	}
#endif
	if (ref)
		a_batch(t, A, keys, table, NULL, ref, n, 1, 0);
	else
		a_batch(t, A, keys, table, res, NULL, n, 0, 0);
}

/* ------------------------------------------------------------- building */

#include "fib/accel_build.h"

/* Intervals of equal answers over a 32-bit range, painted from routes in
 * preorder (key order, shorter first at equal keys). */
struct rpaint {
	uint32_t s[R_MAX + 1];
	aword a[R_MAX + 1];
	unsigned n;
	bool over; /* more than R_MAX intervals */
	uint32_t end; /* of the range painted */
	unsigned sp;
	struct {
		uint32_t e;
		aword v;
	} st[72];
};

/* The writer's painter, kept in t (freed by a_scratch_free); NULL
 * when out of memory. */
static struct rpaint *
a_painter(struct TRIE_PREFIX *t)
{
	if (!t->ascratch)
		t->ascratch = malloc(sizeof(struct rpaint));
	return t->ascratch;
}

static void
rp_emit(struct rpaint *p, uint32_t pos, aword v)
{
	if (p->n && p->s[p->n - 1] == pos) {
		p->a[p->n - 1] = v;
		if (p->n > 1 && p->a[p->n - 2] == v)
			p->n--;
		return;
	}
	if (p->n && p->a[p->n - 1] == v)
		return;
	if (p->n == R_MAX) {
		p->over = true;
		return;
	}
	p->s[p->n] = pos;
	p->a[p->n] = v;
	p->n++;
}

/* Paint [start, end] from dflt. */
static void
rp_begin_in(struct rpaint *p, uint32_t start, uint32_t end, aword dflt)
{
	p->n = 0;
	p->over = false;
	p->end = end;
	p->sp = 1;
	p->st[0].e = UINT32_MAX;
	p->st[0].v = dflt;
	rp_emit(p, start, dflt);
}

static void
rp_begin(struct rpaint *p, aword dflt)
{
	rp_begin_in(p, 0, UINT32_MAX, dflt);
}

static void
rp_close(struct rpaint *p, uint32_t s, bool all)
{
	while (p->sp > 1 && (all || p->st[p->sp - 1].e < s)) {
		uint32_t e = p->st[--p->sp].e;

		if (e < p->end)
			rp_emit(p, e + 1, p->st[p->sp - 1].v);
	}
}

/* Item it at level off (16 or 32: the range covers key bits off to off +
 * 31); its length is above off. Longer than off + 32: its point asks. */
static void
rp_add(struct rpaint *p, const struct aitem *it, unsigned off)
{
	uint32_t s = (uint32_t)(it->key >> (96 - off)), e = s;
	aword v = it->val;

	if (it->plen > off + 32)
		v = A_ASK;
	else
		e = s | (uint32_t)((UINT64_C(1) << (off + 32 - it->plen)) - 1);
	rp_close(p, s, false);
	rp_emit(p, s, v);
	if (p->sp < sizeof(p->st) / sizeof(p->st[0])) {
		p->st[p->sp].e = e;
		p->st[p->sp].v = v;
		p->sp++;
	} else {
		p->over = true;
	}
}

static inline uint32_t
rb_words(unsigned n)
{
	unsigned k, lines = 0;

	if (n <= 8)
		return 16;
	if (n <= 16)
		return 32;
	k = r_levels(n);
	for (unsigned l = 0; l <= k; l++)
		lines += r_lines(n, k, l);
	return 16 * lines;
}

/* The intervals of block b into s, a (R_MAX each); their count. In a
 * multi-level block, lane 0 of a leaf line holds the start of its first
 * interval (the search masks it). */
static unsigned
rb_decode(const uint32_t *b, uint32_t *s, aword *a)
{
	uint32_t h = b[0];
	unsigned n = 1, aoff = (h >> 16) & 0x7fff;

	if (!(h >> 31)) {
		s[0] = 0;
		for (unsigned i = 1; i < 16 && ((h >> i) & 1) && b[i] != UINT32_MAX; i++)
			s[n++] = b[i] + 1;
		for (unsigned i = 0; i < n; i++)
			a[i] = b[aoff + i];
	} else {
		unsigned k;
		const uint32_t *leaf;

		n = aoff;
		k = r_levels(n);
		leaf = b + rb_words(n) - 16 * r_lines(n, k, k);
		for (unsigned i = 0; i < n; i++) {
			s[i] = i ? leaf[16 * (i / 8) + i % 8] + 1 : 0;
			a[i] = leaf[16 * (i / 8) + 8 + i % 8];
		}
	}
	return n;
}

/* Intervals and bytes of block b, from its header. */
static unsigned
rb_count(const uint32_t *b, size_t *size)
{
	uint32_t h = b[0];
	unsigned n = 1;

	if (h >> 31)
		n = (h >> 16) & 0x7fff;
	else
		for (unsigned i = 1; i < 16 && ((h >> i) & 1) && b[i] != UINT32_MAX; i++)
			n++;
	*size = rb_words(n) * sizeof(uint32_t);
	return n;
}

static void
a_count_blk(struct accel *A, unsigned n, size_t size, int sign)
{
	A->blocks += (uint64_t)(int64_t)sign;
	A->block_bytes += (uint64_t)((int64_t)sign * (int64_t)size);
	A->answers += (uint64_t)((int64_t)sign * (int64_t)n);
	if (n > 16)
		A->nodes += (uint64_t)(int64_t)sign;
}

/* The word of painted intervals p: one answer, A_ASK (too many), or a
 * block made; 0 with -ENOMEM in *err. */
static aword
rb_make(struct accel *A, const struct rpaint *p, int *err)
{
	unsigned n = p->n, nw = rb_words(n);
	uint32_t *b, h;

	if (p->over)
		return A_ASK;
	if (n == 1)
		return p->a[0];
	b = pool_alloc(A->pool, nw * sizeof(uint32_t));
	h = b ? pool_handle(A->pool, b, nw * sizeof(uint32_t)) : 0;
	if (!h) {
		if (b)
			pool_free(A->pool, b, nw * sizeof(uint32_t));
		*err = -ENOMEM;
		return 0;
	}
	memset(b, 0xff, nw * sizeof(uint32_t));
	if (n <= 16) {
		uint32_t aoff = n <= 8 ? 8 : 16;

		b[0] = (n <= 8 ? 0xfeu : 0xfffeu) | aoff << 16;
		for (unsigned i = 1; i < n; i++)
			b[i] = p->s[i] - 1;
		for (unsigned i = 0; i < aoff; i++)
			b[aoff + i] = p->a[i < n ? i : n - 1];
	} else {
		/* line j of level l < k: lane i holds the start of the first
		 * interval of its child 16 j + i, 8 * 16^(k - l - 1) intervals
		 * each; leaf line j: intervals 8 j to 8 j + 7 */
		unsigned k = r_levels(n), off = 0;

		for (unsigned l = 0; l < k; l++) {
			size_t span = (size_t)8 << 4 * (k - l - 1);
			unsigned lines = r_lines(n, k, l);

			for (unsigned j = 0; j < lines; j++)
				for (unsigned i = 0; i < 16; i++) {
					size_t at = ((size_t)16 * j + i) * span;

					if (at < n)
						b[16 * (off + j) + i] = p->s[at] - 1;
				}
			off += lines;
		}
		for (unsigned j = 0; j < r_lines(n, k, k); j++)
			for (unsigned i = 0; i < 8; i++) {
				unsigned at = 8 * j + i;

				if (at < n)
					b[16 * (off + j) + i] = p->s[at] - 1;
				b[16 * (off + j) + 8 + i] = p->a[at < n ? at : n - 1];
			}
		b[0] = 0xfffeu | n << 16 | 1u << 31;
	}
	a_count_blk(A, n, nw * sizeof(uint32_t), 1);
	return (aword)(h << 3) | A_BLK;
}

/* Free (never published) or retire the block of word w, if it names one. */
static void
a_drop(struct TRIE_PREFIX *t, struct accel *A, aword w, bool published)
{
	uint32_t *b;
	unsigned n;
	size_t size;

	if (!(w & A_BLK))
		return;
	b = (uint32_t *)a_rblk(A, w);
	n = rb_count(b, &size);
	a_count_blk(A, n, size, -1);
	if (published)
		reclaim_retire(t->ctx->rc, b, size);
	else
		pool_free(A->pool, b, size);
}

static inline bool
a_failed(const struct accel *A, unsigned long c)
{
	return (A->fail[c / 64] >> (c % 64)) & 1;
}

/* Store w as /16 c's dp word, dropping the one it replaces. */
static void
a_set_dp(struct TRIE_PREFIX *t, struct accel *A, unsigned long c, aword w, bool published)
{
	aword old = A->dp[c];

	A->asks += (w == A_ASK) - (old == A_ASK);
	T_STORE(A->dp[c], w);
	a_drop(t, A, old, published);
}

/* ---------------------------------------------------------------- hash */

static void a_drop32(struct TRIE_PREFIX *t, struct accel *A, aword w, bool published);

static struct ahash *
h_new(struct pool *p, unsigned bits)
{
	size_t nspill = ((size_t)1 << bits) / 64 + 1;
	size_t size = sizeof(struct ahash) + 64 + ((size_t)64 << bits) + nspill * 8;
	struct ahash *H = pool_alloc(p, size);

	if (!H)
		return NULL;
	H->bits = bits;
	H->count = 0;
	H->size = size;
	H->b = (struct hbkt *)(((uintptr_t)(H + 1) + 63) & ~(uintptr_t)63);
	H->spill = (uint64_t *)(H->b + ((size_t)1 << bits));
	memset(H->b, 0, ((size_t)64 << bits) + nspill * 8);
	return H;
}

/* The slot holding k in H, or NULL. */
static uint64_t *
h_slot(struct ahash *H, uint32_t k)
{
	struct hbkt *b[2] = { &H->b[h_b1(k, H->bits)], &H->b[h_b2(k, H->bits)] };

	for (int j = 0; j < 2; j++)
		for (int i = 0; i < H_WAYS; i++)
			if ((uint32_t)b[j]->e[i] == k && b[j]->e[i] >> 32)
				return &b[j]->e[i];
	return NULL;
}

/* Put k -> w (not 0) in a free slot of H; false if both buckets are full. */
static bool
h_put(struct ahash *H, uint32_t k, aword w)
{
	struct hbkt *b[2] = { &H->b[h_b1(k, H->bits)], &H->b[h_b2(k, H->bits)] };

	for (int j = 0; j < 2; j++)
		for (int i = 0; i < H_WAYS; i++)
			if (!(b[j]->e[i] >> 32)) {
				unsigned j1 = h_b1(k, H->bits);

				/* the bit before the entry: a reader that finds
				 * the entry in the second bucket looked there */
				if (j)
					__atomic_store_n(&H->spill[j1 / 64],
							 H->spill[j1 / 64] | UINT64_C(1) << (j1 % 64),
							 __ATOMIC_RELEASE);
				__atomic_store_n(&b[j]->e[i], k | (uint64_t)w << 32, __ATOMIC_RELEASE);
				H->count++;
				return true;
			}
	return false;
}

/* A copy of H with 2^bits buckets or more, every entry placed. */
static struct ahash *
h_regrow(struct pool *p, const struct ahash *H, unsigned bits)
{
	for (; bits <= 30; bits++) {
		struct ahash *N = h_new(p, bits);
		bool ok = true;

		if (!N)
			return NULL;
		for (size_t j = 0; H && ok && j < ((size_t)1 << H->bits); j++)
			for (int i = 0; i < H_WAYS && ok; i++)
				if (H->b[j].e[i] >> 32)
					ok = h_put(N, (uint32_t)H->b[j].e[i], (aword)(H->b[j].e[i] >> 32));
		if (ok)
			return N;
		pool_free(p, N, N->size);
	}
	return NULL;
}

/* N becomes the hash, the old one retired (or freed: not published). */
static void
h_publish(struct TRIE_PREFIX *t, struct accel *A, struct ahash *N, bool published)
{
	struct ahash *H = A->hash;

	T_STORE(A->hash, N);
	if (published)
		reclaim_retire(t->ctx->rc, H, H->size);
	else
		pool_free(A->pool, H, H->size);
}

/* Room for n entries at half load, the hash replaced if it must grow. */
static int
h_reserve(struct TRIE_PREFIX *t, struct accel *A, size_t n, bool published)
{
	struct ahash *H = A->hash, *N;
	unsigned bits = H->bits;

	while (((size_t)4 << bits) < n)
		bits++;
	if (bits == H->bits)
		return 0;
	N = h_regrow(A->pool, H, bits);
	if (!N)
		return -ENOMEM;
	h_publish(t, A, N, published);
	return 0;
}

/* The word of /32 k becomes w (0: no entry), dropping the one it
 * replaces. -ENOMEM when a new entry found no room (nothing changed). */
static int
h_set(struct TRIE_PREFIX *t, struct accel *A, uint32_t k, aword w, bool published)
{
	uint64_t *e = h_slot(A->hash, k);
	aword old = e ? (aword)(*e >> 32) : 0;

	if (e) {
		__atomic_store_n(e, w ? k | (uint64_t)w << 32 : 0, __ATOMIC_RELEASE);
		if (!w)
			A->hash->count--;
	} else if (w) {
		if (h_reserve(t, A, A->hash->count + 1, published))
			return -ENOMEM;
		if (!h_put(A->hash, k, w)) {
			struct ahash *H = A->hash, *N = h_regrow(A->pool, H, H->bits + 1);

			if (!N || !h_put(N, k, w)) {
				if (N)
					pool_free(A->pool, N, N->size);
				return -ENOMEM;
			}
			h_publish(t, A, N, published);
		}
	}
	A->asks += (w == A_ASK) - (old == A_ASK);
	a_drop32(t, A, old, published);
	return 0;
}

/* ------------------------------------------------------ the two levels */

/* A /32 with more intervals gets a dir: one word per /40, so that a
 * change of a route of /40 or longer rebuilds one /40, not the /32. */
#define A_DIR_MIN 128

/* The answer of routes of /pmin to /plen - 1 at base (the default of a
 * /plen inside a /32, or inside a /16): exact lookups, longest first. */
static aword
a_outer_in(const struct TRIE_PREFIX *t, uint32_t table, tkey base, unsigned plen, unsigned pmin)
{
	for (int p = (int)plen - 1; p >= (int)pmin; p--) {
		tkey kk = base & ~a_low_mask(KEYBITS - (unsigned)p);
		struct tnode *path[KEYBITS + 2];
		int depth;
		const struct tleaf *l = find_leaf(t, kk, path, &depth);

		for (unsigned a = 0; l && a < l->kv.n; a++) {
			const struct fib_alias *fa = &l->fa[a];
			if (fa->slen == KEYBITS - (unsigned)p && fa->table == table && !fa->tos)
				return a_value(t, l, a);
		}
	}
	return 0;
}

/*
 * The word of /32 k from its routes of /32 or longer (items, in
 * preorder; the intervals they leave answer 0: the /16 level's): one
 * answer, a block, or a dir of /40s with more than A_DIR_MIN intervals.
 * 0 with -ENOMEM in *err (nothing left allocated).
 */
static aword
a_make32(struct accel *A, const struct aitem *it, size_t n, struct rpaint *p, int *err)
{
	unsigned cnt, at = 0;
	aword *dir;
	uint32_t h, *ss;
	aword *aa;

	rp_begin(p, 0);
	for (size_t i = 0; i < n; i++)
		rp_add(p, &it[i], 32);
	rp_close(p, 0, true);
	if (p->over || p->n <= A_DIR_MIN)
		return rb_make(A, p, err);
	/* the dir: each /40's slice of the intervals */
	cnt = p->n;
	ss = malloc(cnt * (sizeof(*ss) + sizeof(*aa)));
	dir = pool_alloc(A->pool, 256 * sizeof(aword));
	h = dir ? pool_handle(A->pool, dir, 256 * sizeof(aword)) : 0;
	if (!ss || !h) {
		if (dir)
			pool_free(A->pool, dir, 256 * sizeof(aword));
		free(ss);
		*err = -ENOMEM;
		return 0;
	}
	aa = (aword *)(ss + cnt);
	memcpy(ss, p->s, cnt * sizeof(*ss));
	memcpy(aa, p->a, cnt * sizeof(*aa));
	for (unsigned j = 0; j < 256; j++) {
		uint32_t lo = j << 24, hi = lo | 0xffffff;
		unsigned first, end;

		while (at + 1 < cnt && ss[at + 1] <= lo)
			at++;
		first = at;
		for (end = at + 1; end < cnt && ss[end] <= hi; end++)
			;
		p->s[0] = 0;
		p->a[0] = aa[first];
		for (unsigned q = first + 1; q < end; q++) {
			p->s[q - first] = ss[q];
			p->a[q - first] = aa[q];
		}
		p->n = end - first;
		dir[j] = rb_make(A, p, err);
		if (*err) {
			for (unsigned q = 0; q < j; q++)
				if (dir[q] & A_BLK) {
					size_t size;
					unsigned bn = rb_count(a_rblk(A, dir[q]), &size);

					a_count_blk(A, bn, size, -1);
					pool_free(A->pool, (void *)a_rblk(A, dir[q]), size);
				}
			pool_free(A->pool, dir, 256 * sizeof(aword));
			free(ss);
			return 0;
		}
	}
	free(ss);
	A->block_bytes += 256 * sizeof(aword);
	A->nodes++;
	return (aword)(h << 3) | A_BLK | A_DIR;
}

/* Free (never published) or retire what word w names: a block, or a dir
 * and its blocks. */
static void
a_drop32(struct TRIE_PREFIX *t, struct accel *A, aword w, bool published)
{
	aword *dir;

	if ((w & (A_BLK | A_DIR)) != (A_BLK | A_DIR)) {
		a_drop(t, A, w, published);
		return;
	}
	dir = (aword *)a_rblk(A, w);
	for (unsigned j = 0; j < 256; j++)
		a_drop(t, A, dir[j], published);
	A->block_bytes -= 256 * sizeof(aword);
	A->nodes--;
	if (published)
		reclaim_retire(t->ctx->rc, dir, 256 * sizeof(aword));
	else
		pool_free(A->pool, dir, 256 * sizeof(aword));
}

/*
 * /32 k from its routes of /32 or longer (items, in preorder). A block
 * that cannot be made leaves the /32 to the trie; an entry that cannot
 * be made, its /16.
 */
static void
a_set32(struct TRIE_PREFIX *t, struct accel *A, uint32_t k, const struct aitem *it, size_t n,
	bool published, struct rpaint *p)
{
	aword w = 0;
	int err = 0;

	if (n) {
		w = a_make32(A, it, n, p, &err);
		if (err) {
			w = A_ASK;
			A->lost = true;
		}
	}
	if (h_set(t, A, k, w, published)) {
		A->lost = true;
		A->fail[(k >> 16) / 64] |= UINT64_C(1) << ((k >> 16) % 64);
		a_drop32(t, A, w, false);
		a_set_dp(t, A, k >> 16, A_ASK, published);
	}
}

/* /16 c from its default and its routes /17 - /31 (among items, in
 * preorder, the others skipped). */
static void
a_set16(struct TRIE_PREFIX *t, struct accel *A, unsigned long c, aword dflt,
	const struct aitem *it, size_t n, bool published, struct rpaint *p)
{
	aword w;
	int err = 0;

	if (a_failed(A, c)) {
		a_set_dp(t, A, c, A_ASK, published);
		return;
	}
	rp_begin(p, dflt);
	for (size_t i = 0; i < n; i++)
		if (it[i].plen > 16 && it[i].plen < 32)
			rp_add(p, &it[i], 16);
	rp_close(p, 0, true);
	w = rb_make(A, p, &err);
	A->lost |= err != 0;
	a_set_dp(t, A, c, err ? A_ASK : w, published);
}

/* The /32s among items (in preorder) that hold routes of /32 or longer. */
static void
a_walk32(struct TRIE_PREFIX *t, struct accel *A, const struct aitem *v, size_t n, bool published,
	 struct rpaint *p)
{
	for (size_t i = 0, j; i < n; i = j) {
		uint32_t k = a_k32(v[i].key);

		j = i + 1;
		if (v[i].plen < 32)
			continue;
		while (j < n && a_k32(v[j].key) == k)
			j++;
		a_set32(t, A, k, v + i, j - i, published, p);
	}
}

/*
 * Rebuild the /16 level where the prefix key/lr covers it (lr below 32):
 * its /16s, or the /16 it is in; a whole build (lr 0, not published)
 * also makes every /32's entry. Returns 0 or -ENOMEM (the trie could not
 * be walked).
 */
static int
a_build_range(struct TRIE_PREFIX *t, struct accel *A, tkey key, unsigned lr, bool published)
{
	tkey lo = key & ~a_low_mask(KEYBITS - lr), hi = lo | a_low_mask(KEYBITS - lr);
	struct avec all = { 0 };
	struct rpaint *p = a_painter(t);
	int err = 0;

	if (!p)
		return -ENOMEM;
	if (lr > 16) {
		/* the /16 holds routes outside the prefix too */
		unsigned long c = (unsigned long)(lo >> 112);
		tkey clo = (tkey)c << 112;

		err = a_collect(t, t->root, clo, clo | a_low_mask(112), A->table, 16, 31,
				KEYBITS - 31, &all, &all);
		if (!err)
			a_set16(t, A, c, a_outer(t, A->table, clo, 17), all.v, all.n, published, p);
	} else {
		unsigned long c0 = (unsigned long)(lo >> 112), cnt = 1ul << (16 - lr);
		struct {
			tkey hi;
			aword val;
		} st[18];
		unsigned sp = 0;
		size_t i = 0;
		aword outer;

		/* a whole build reads every route, a wide change those up to
		 * /31 (aligned keys only) */
		err = a_collect(t, t->root, lo, hi, A->table, (int)lr - 1, published ? 31 : KEYBITS,
				published ? KEYBITS - 31 : 0, &all, &all);
		if (err)
			goto out;
		outer = a_outer(t, A->table, lo, lr);
		if (!published) {
			size_t groups = 0;
			uint32_t last = 0;

			for (size_t q = 0; q < all.n; q++)
				if (all.v[q].plen >= 32 && (!groups || a_k32(all.v[q].key) != last)) {
					groups++;
					last = a_k32(all.v[q].key);
				}
			err = h_reserve(t, A, groups, false);
			if (err)
				goto out;
		}
		for (unsigned long c = c0; c < c0 + cnt; c++) {
			tkey clo = (tkey)c << 112, chi = clo | a_low_mask(112);
			aword d;
			size_t j;

			for (; i < all.n && all.v[i].plen <= 16 && all.v[i].key <= clo; i++) {
				while (sp && st[sp - 1].hi < all.v[i].key)
					sp--;
				st[sp].hi = all.v[i].key | a_low_mask(KEYBITS - all.v[i].plen);
				st[sp].val = all.v[i].val;
				sp++;
			}
			while (sp && st[sp - 1].hi < clo)
				sp--;
			d = sp ? st[sp - 1].val : outer;
			for (j = i; j < all.n && all.v[j].key <= chi; j++)
				;
			if (j == i) {
				/* no route inside: most /16s of a whole build */
				a_set_dp(t, A, c, a_failed(A, c) ? A_ASK : d, published);
				continue;
			}
			a_set16(t, A, c, d, all.v + i, j - i, published, p);
			if (!published)
				a_walk32(t, A, all.v + i, j - i, false, p);
			i = j;
		}
	}
out:
	avec_free(&all);
	return err;
}

/* /32 k again from the trie. */
static void
a_build32(struct TRIE_PREFIX *t, struct accel *A, uint32_t k)
{
	tkey base = (tkey)k << 96;
	struct avec v = { 0 };
	struct rpaint *p = a_painter(t);

	if (!p || a_collect(t, t->root, base, base | a_low_mask(96), A->table, 31, KEYBITS, 0, &v,
			    &v)) {
		/* the trie answers the /32 (a failed entry: its /16) */
		if (h_set(t, A, k, A_ASK, true)) {
			A->fail[(k >> 16) / 64] |= UINT64_C(1) << ((k >> 16) % 64);
			a_set_dp(t, A, k >> 16, A_ASK, true);
		}
	} else {
		a_set32(t, A, k, v.v, v.n, true, p);
	}
	avec_free(&v);
}

/*
 * A change of a prefix of /40 or longer (suffix slen) in a /32 that has
 * a dir: its /40 again from the trie, published with one store in the
 * dir. Returns -EAGAIN when the /32 has no dir (the caller rebuilds the
 * /32), or -ENOMEM (nothing changed).
 */
static int
a_build40(struct TRIE_PREFIX *t, struct accel *A, tkey key)
{
	uint64_t *e = h_slot(A->hash, a_k32(key));
	tkey lo = key & ~a_low_mask(88);
	unsigned j = (unsigned)(key >> 88) & 255;
	struct avec v = { 0 };
	struct rpaint *p = a_painter(t);
	aword *dir, old, w = 0;
	int err = 0;

	if (!e || ((aword)(*e >> 32) & (A_BLK | A_DIR)) != (A_BLK | A_DIR))
		return -EAGAIN;
	if (!p)
		return -ENOMEM;
	dir = (aword *)a_rblk(A, (aword)(*e >> 32));
	err = a_collect(t, t->root, lo, lo | a_low_mask(88), A->table, 39, KEYBITS, 0, &v, &v);
	if (!err) {
		uint32_t xlo = (uint32_t)(lo >> 64);

		rp_begin_in(p, xlo, xlo | 0xffffff, a_outer_in(t, A->table, lo, 40, 32));
		for (size_t i = 0; i < v.n; i++)
			rp_add(p, &v.v[i], 32);
		rp_close(p, 0, true);
		w = rb_make(A, p, &err);
	}
	avec_free(&v);
	if (err)
		return err;
	old = dir[j];
	T_STORE(dir[j], w);
	a_drop(t, A, old, true);
	if (!w) {
		/* the /32's last route gone: no entry */
		unsigned q = 0;

		while (q < 256 && !dir[q])
			q++;
		if (q == 256)
			h_set(t, A, a_k32(key), 0, true);
	}
	return 0;
}

/*
 * A change of prefixes of /17 to /31, the shortest key/lr: only the
 * intervals of its range in its /16's block change. The routes inside
 * it (a walk of its subtree) over the answer of the shorter ones, in the
 * block's intervals around it, published with one store. -EAGAIN when
 * the /16 has no intervals to keep (the caller rebuilds it).
 */
static int
a_patch16(struct TRIE_PREFIX *t, struct accel *A, tkey key, unsigned lr)
{
	unsigned long c = (unsigned long)(key >> 112);
	tkey lo = key & ~a_low_mask(KEYBITS - lr), clo = (tkey)c << 112;
	uint32_t xs = (uint32_t)(lo >> 80), xe = xs | (uint32_t)((UINT64_C(1) << (48 - lr)) - 1);
	aword old = A->dp[c], d, w, *oa;
	uint32_t *os;
	struct rpaint *p = a_painter(t);
	struct avec v = { 0 };
	unsigned on, at = 0;
	int err = 0;

	size_t size;

	if (a_failed(A, c) || old == A_ASK || !p)
		return -EAGAIN;
	on = old & A_BLK ? rb_count(a_rblk(A, old), &size) : 1;
	os = malloc(2 * (size_t)on * sizeof(uint32_t));
	if (!os)
		return -ENOMEM;
	oa = os + on;
	os[0] = 0;
	oa[0] = old;
	if (old & A_BLK)
		rb_decode(a_rblk(A, old), os, oa);
	err = a_collect(t, t->root, lo, lo | a_low_mask(KEYBITS - lr), A->table, (int)lr - 1, 31,
			KEYBITS - 31, &v, &v);
	if (err)
		goto out;
	d = a_outer_in(t, A->table, lo, lr, 17);
	if (!d)
		d = a_outer(t, A->table, clo, 17);
	/* the intervals before the range, the range painted, the rest */
	p->n = 0;
	p->over = false;
	for (; at < on && os[at] < xs; at++)
		rp_emit(p, os[at], oa[at]);
	p->end = xe;
	p->sp = 1;
	p->st[0].e = UINT32_MAX;
	p->st[0].v = d;
	rp_emit(p, xs, d);
	for (size_t i = 0; i < v.n; i++)
		rp_add(p, &v.v[i], 16);
	rp_close(p, 0, true);
	if (xe != UINT32_MAX) {
		/* the interval holding xe + 1, then the others */
		unsigned q = at ? at - 1 : 0;

		while (q + 1 < on && os[q + 1] <= xe + 1)
			q++;
		rp_emit(p, xe + 1, oa[q]);
		for (q++; q < on; q++)
			rp_emit(p, os[q], oa[q]);
	}
	w = rb_make(A, p, &err);
	if (!err)
		a_set_dp(t, A, c, w, true);
out:
	avec_free(&v);
	free(os);
	return err;
}

/* The lengths of the routes of leaf key (table, tos 0) into lens. */
static void
a_leaf_lens(const struct TRIE_PREFIX *t, uint32_t table, tkey key, uint64_t *lens)
{
	struct tnode *path[KEYBITS + 2];
	int depth;
	const struct tleaf *l = find_leaf(t, key, path, &depth);

	for (unsigned a = 0; l && a < l->kv.n; a++)
		if (l->fa[a].table == table && !l->fa[a].tos) {
			unsigned plen = KEYBITS - l->fa[a].slen;

			lens[plen / 64] |= UINT64_C(1) << (plen % 64);
		}
}

/* The shortest length in lens from lo up, or 129. */
static unsigned
a_lens_min(const uint64_t *lens, unsigned lo)
{
	for (unsigned l = lo; l <= KEYBITS; l++)
		if ((lens[l / 64] >> (l % 64)) & 1)
			return l;
	return KEYBITS + 1;
}

/* ------------------------------------------------------------- updates */

/* Before the trie changes the leaf of key: hold the reclamation, and note
 * the lengths of the leaf's routes here. */
static void
a_invalidate(struct TRIE_PREFIX *t, struct accel *A, tkey key, unsigned slen)
{
	(void)slen;
	a_leaf_lens(t, A->table, key, A->lens);
	if (A->holding)
		return;
	reclaim_hold(t->ctx->rc);
	A->holding = true;
}

/*
 * After the change: where the leaf's routes here (before or after the
 * change) answer. Below /32: the /16 level over the shortest one's
 * range (its /16's intervals in that range, or whole /16s); /32 and
 * longer: the leaf's /32 (its /40, for routes of /40 or longer under a
 * dir). A leaf without routes here is named by no answer.
 */
static void
a_revalidate(struct TRIE_PREFIX *t, struct accel *A, tkey key, unsigned slen)
{
	unsigned ls, l32;

	(void)slen;
	a_leaf_lens(t, A->table, key, A->lens);
	ls = a_lens_min(A->lens, 0);
	l32 = a_lens_min(A->lens, 32);
	memset(A->lens, 0, sizeof(A->lens));
	if (ls < 32 && (ls <= 16 || a_patch16(t, A, key, ls)) && a_build_range(t, A, key, ls, true)) {
		/* no memory to walk the trie: the /16s the prefix covers go to
		 * it for good */
		unsigned long cnt = 1ul << (ls < 16 ? 16 - ls : 0);
		unsigned long c0 = (unsigned long)(key >> 112) & ~(cnt - 1);

		for (unsigned long c = c0; c < c0 + cnt; c++) {
			A->fail[c / 64] |= UINT64_C(1) << (c % 64);
			a_set_dp(t, A, c, A_ASK, true);
		}
	}
	if (l32 <= KEYBITS && (l32 < 40 || a_build40(t, A, key)))
		a_build32(t, A, a_k32(key));
	if (A->holding) {
		A->holding = false;
		reclaim_release(t->ctx->rc);
	}
}

/* Free (never published) or retire every part of A. */
static void
a_drop_all(struct TRIE_PREFIX *t, struct accel *A, bool published)
{
	struct ahash *H = A->hash;

	for (unsigned long c = 0; c < A_NDP; c++)
		a_drop(t, A, A->dp[c], published);
	for (size_t j = 0; j < ((size_t)1 << H->bits); j++)
		for (int i = 0; i < H_WAYS; i++)
			a_drop32(t, A, (aword)(H->b[j].e[i] >> 32), published);
	if (published) {
		reclaim_retire(t->ctx->rc, H, H->size);
		reclaim_retire(t->ctx->rc, A->dp, A_NDP * sizeof(aword));
		reclaim_retire(t->ctx->rc, A, sizeof(*A));
	} else {
		pool_free(A->pool, H, H->size);
		pool_free(A->pool, A->dp, A_NDP * sizeof(aword));
		pool_free(A->pool, A, sizeof(*A));
	}
}

static void
a_retire_all(struct TRIE_PREFIX *t, struct accel *A)
{
	a_drop_all(t, A, true);
}

/* A whole table for the trie as it is, or NULL (ENOMEM). */
static struct accel *
a_build_all(struct TRIE_PREFIX *t, uint32_t table)
{
	struct pool *p = t->ctx->pool;
	struct accel *A = pool_alloc(p, sizeof(*A));
	aword *dp = A ? pool_alloc(p, A_NDP * sizeof(*dp)) : NULL;
	struct ahash *H = dp ? h_new(p, H_MINBITS) : NULL;

	if (!H) {
		if (dp)
			pool_free(p, dp, A_NDP * sizeof(*dp));
		if (A)
			pool_free(p, A, sizeof(*A));
		return NULL;
	}
	memset(A, 0, sizeof(*A));
	memset(dp, 0, A_NDP * sizeof(*dp));
	A->table = table;
	A->dp = dp;
	A->hash = H;
	A->pool = p;
	A->lt = pool_handle_table(p);
	if (t->root && a_build_range(t, A, 0, 0, false)) {
		a_drop_all(t, A, false);
		return NULL;
	}
	/* a failure inside (an entry, a block) left part of it to the trie:
	 * a whole build wants all of it */
	if (A->lost) {
		a_drop_all(t, A, false);
		return NULL;
	}
	return A;
}

static size_t
a_bytes(const struct accel *A)
{
	return sizeof(*A) + A_NDP * sizeof(aword) + A->hash->size + A->block_bytes;
}

/* ------------------------------------------------------ check and stats */

static void
a_scratch_free(struct TRIE_PREFIX *t)
{
	free(t->adflt);
	free(t->ascratch);
}

/* Words x (of A) and y (of F) hold the same intervals; A_ASK in A
 * stands for anything. */
/* The intervals of word w (an answer, a block, or a dir of blocks) into
 * s, a (A_XMAX each), adjacent equal answers merged; their count, or 0
 * if more. */
#define A_XMAX 65536u
static unsigned
a_expand(const struct accel *A, aword w, uint32_t *s, aword *a, uint32_t *ts, aword *ta)
{
	unsigned n = 0;

	if ((w & (A_BLK | A_DIR)) != (A_BLK | A_DIR)) {
		s[0] = 0;
		a[0] = w;
		return w & A_BLK ? rb_decode(a_rblk(A, w), s, a) : 1;
	}
	for (unsigned j = 0; j < 256; j++) {
		aword v = ((const aword *)a_rblk(A, w))[j];
		unsigned m = 1;

		ts[0] = 0;
		ta[0] = v;
		if (v & A_BLK)
			m = rb_decode(a_rblk(A, v), ts, ta);
		ts[0] = j << 24;
		for (unsigned q = 0; q < m; q++) {
			if (n && a[n - 1] == ta[q])
				continue;
			if (n == A_XMAX)
				return 0;
			s[n] = ts[q];
			a[n++] = ta[q];
		}
	}
	return n;
}

/* Words x (of A) and y (of F) hold the same intervals; A_ASK in A
 * stands for anything. buf: 6 * A_XMAX words. */
static bool
a_same(const struct accel *A, aword x, const struct accel *F, aword y, uint32_t *buf)
{
	uint32_t *sx = buf, *sy = buf + A_XMAX, *ts = buf + 4 * A_XMAX;
	aword *ax = buf + 2 * A_XMAX, *ay = buf + 3 * A_XMAX, *ta = buf + 5 * A_XMAX;
	unsigned nx, ny;

	if (x == A_ASK || x == y)
		return true;
	nx = a_expand(A, x, sx, ax, ts, ta);
	ny = a_expand(F, y, sy, ay, ts, ta);
	return nx && nx == ny && !memcmp(sx, sy, nx * sizeof(sx[0])) &&
	       !memcmp(ax, ay, nx * sizeof(ax[0]));
}

/*
 * Counts and placement: every entry in one of its two buckets, once;
 * the table equals one built afresh from the trie (parts left to the
 * trie aside, and when there is memory for the copy); the answers at
 * both ends of every prefix and just outside them equal the trie's.
 */
static int
a_check(struct TRIE_PREFIX *t, struct accel *A, char *buf, size_t len)
{
	struct ahash *H = A->hash;
	uint64_t asks = 0, count = 0;
	struct accel *F;
	uint32_t *sbuf;

	for (unsigned long c = 0; c < A_NDP; c++) {
		asks += A->dp[c] == A_ASK;
		if (a_failed(A, c) && A->dp[c] != A_ASK) {
			snprintf(buf, len, "compiled table /16 %lu failed but answers", c);
			return -EUCLEAN;
		}
	}
	for (size_t j = 0; j < ((size_t)1 << H->bits); j++)
		for (int i = 0; i < H_WAYS; i++) {
			uint64_t e = H->b[j].e[i];
			uint32_t k = (uint32_t)e;

			if (!(e >> 32))
				continue;
			count++;
			asks += (e >> 32) == A_ASK;
			if ((j != h_b1(k, H->bits) && j != h_b2(k, H->bits)) || h_slot(H, k) != &H->b[j].e[i] ||
			    (j != h_b1(k, H->bits) && !h_spilled(H, h_b1(k, H->bits)))) {
				snprintf(buf, len, "compiled table /32 %08x misplaced or twice", k);
				return -EUCLEAN;
			}
		}
	if (count != H->count || asks != A->asks) {
		snprintf(buf, len, "compiled table counts %u entries and %llu asks, holds %llu and %llu",
			 H->count, (unsigned long long)A->asks, (unsigned long long)count,
			 (unsigned long long)asks);
		return -EUCLEAN;
	}
	F = a_build_all(t, A->table);
	sbuf = F ? malloc(6 * A_XMAX * sizeof(uint32_t)) : NULL;
	if (F && !sbuf)
		a_drop_all(t, F, false);
	if (sbuf) {
		int err = 0;

		for (unsigned long c = 0; c < A_NDP && !err; c++)
			if (!a_same(A, A->dp[c], F, F->dp[c], sbuf)) {
				snprintf(buf, len, "compiled table /16 %lu differs from a fresh build", c);
				err = -EUCLEAN;
			}
		for (size_t j = 0; j < ((size_t)1 << F->hash->bits) && !err; j++)
			for (int i = 0; i < H_WAYS && !err; i++) {
				uint64_t e = F->hash->b[j].e[i];
				uint32_t k = (uint32_t)e;
				uint64_t *s;

				if (!(e >> 32) || a_failed(A, k >> 16))
					continue;
				s = h_slot(H, k);
				if (!s || !a_same(A, (aword)(*s >> 32), F, (aword)(e >> 32), sbuf)) {
					snprintf(buf, len, "compiled table /32 %08x differs from a fresh build", k);
					err = -EUCLEAN;
				}
			}
		if (!err) {
			/* entries a fresh build does not make */
			for (size_t j = 0; j < ((size_t)1 << H->bits) && !err; j++)
				for (int i = 0; i < H_WAYS && !err; i++) {
					uint64_t e = H->b[j].e[i];

					if ((e >> 32) && (e >> 32) != A_ASK && !h_slot(F->hash, (uint32_t)e)) {
						snprintf(buf, len, "compiled table /32 %08x has no routes",
							 (uint32_t)e);
						err = -EUCLEAN;
					}
				}
		}
		a_drop_all(t, F, false);
		free(sbuf);
		if (err)
			return err;
	}
	return a_check_rec(t, A, t->root, buf, len);
}
