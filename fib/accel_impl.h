/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the compiled lookup table beside the LC-trie (one table, tos 0)
 *
 * Included by trie4.c with -DFIB_ACCEL4_POPTRIE after trie_impl.h: the
 * previous IPv4 table, kept to compare with and for fib_fault_test. It
 * is written for either key width (it served IPv6 until
 * fib/accel6_impl.h); it meets the trie through fib/trie_types.h. The LC-trie stays the writer's
 * structure and answers every lookup; for the one table that carries the
 * full BGP table (params accel_table, default 254 main) and tos 0 -
 * what the datapath asks - this compiled copy answers in a few
 * cache-resident steps, after poptrie (Asai and Ohara, SIGCOMM 2015):
 *
 *   dp[top A_DPBITS bits]  one 32-bit word per /18 (IPv4: 1 MiB, so an
 *                          IPv4 /24 is one node below it) or /16 (IPv6):
 *       0              no route
 *       leaf << 3 | k  the answer: alias k (< 4) of trie leaf `leaf`
 *       1              ask the trie (alias index >= 4, or being rebuilt)
 *       blk << 3 | 4   a block holding this /18's or /16's subtree
 *   where leaf and blk are pool handles (fib/pool.h: a 29-bit mapping id
 *   and offset, decoded with one read of a small table) instead of
 *   64-bit pointers, which halves the answers, the largest part.
 *
 *   block of a /D:  header (nn, nl: 16 bits, dflt: a word; 8 bytes)
 *                   | node[nn] | word[nl]
 *       two levels of nodes, so 12 key bits (A_SPAN): the blocks of the
 *       dp, and below them sub-blocks for /30 (IPv4) or /28, /40, ...
 *       (IPv6) that hold longer routes; a word is an answer, 0 (the
 *       block's default, or if that is 0 the parent's), or BLOCK | sub-block.
 *   node:  vec      bit s: slot s (the next 6 key bits) has a child node
 *          leafvec  bit s: a run of equal words starts at slot s
 *          base1    index in node[] of the first child
 *          base0    index (in 32-bit words from the block start) of the
 *                   first word
 *   child of slot s:  node[base1 + popcount(vec & mask(s)) - 1]
 *   word of slot s:   word[base0 + popcount(leafvec & mask(s)) - 1]
 *
 * so a node is 24 bytes and words are stored once per run. An IPv4 /24
 * is the dp entry, one node and one word. The answers are the trie's own
 * leaves: a result is derived from the word without touching the leaf.
 *
 * Updates (writer only). A change to the leaf of key K may change every
 * answer that names the leaf: the defaults of the dp entries its short
 * prefixes cover, and the words of the blocks on K's path that its longer
 * prefixes fall in. Before the trie changes, those defaults become 1
 * ("ask the trie"), and the topmost block on K's path that holds one of
 * the leaf's prefixes is sent to the trie with its subtree: one store of
 * 1 in its parent's word, or in the dp entry. After it, the defaults are
 * set again (one store each, no rebuild), and that block and the blocks
 * below it on K's path are rebuilt from the trie: their own routes by a
 * walk that skips subtrees holding only longer keys, every other
 * sub-block reused as it is (its default stored in place). The new
 * subtree is published with one store where the 1 was. Two cases skip
 * most of a block's rebuild, the block being replaced by a copy in which
 * one second-level node's words are made again (a_copy_node), when that
 * node stays: the leaf's routes in the block all fall in that node (its
 * /D+6 alone is walked), or a sub-block below the block appears or goes
 * (its slot's word becomes the sub-block, or the answer it defaulted
 * to). Otherwise a sub-block that appears or goes changes its parent's
 * shape: the parent is rebuilt, from its parent's word, or higher if the
 * parent goes too. The replaced blocks are retired. A reader that still
 * holds an old block began before it was retired, so before the old leaf
 * was retired: both outlive it. A bulk load or flush builds a whole new
 * table from the new trie before the old trie is released.
 *
 * If memory runs out, the dp entry stays 1 and the trie answers: slower,
 * never wrong. The table is rebuilt whole at the next bulk load.
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

#if TRIE_KEYBITS == 32
#define A_DPBITS 18
#else
#define A_DPBITS 16
#endif
#define A_NDP (1ul << A_DPBITS)
#define A_SPAN 12 /* key bits of one block: two levels of nodes */
/*
 * A word (dp entry, block word, block default) is 32 bits: a pool handle
 * (fib/pool.h) shifted left by 3 and
 *   k          alias k (< A_KMAX) of the leaf named by the handle, or
 *   A_BLOCK    the block named by the handle;
 * 0 and A_ASK (handle 0, never an object's) as above.
 */
#define A_BLOCK ((aword)4)
#define A_KMAX 4
#define A_GROUP 64

struct anode {
	uint64_t vec;
	uint64_t leafvec;
	uint32_t base0; /* word index of the first answer, from the block start */
	uint32_t base1; /* node index of the first child */
};

struct ablk {
	uint16_t nn; /* nodes */
	uint16_t nl; /* answers */
	aword dflt; /* the answer of the words that are 0; 0: the parent's */
	struct anode node[];
};

struct accel {
	uint32_t table;
	aword *dp;
	const uintptr_t *lt; /* handle table of the leaves (the FIB's pool) */
	const uintptr_t *bt; /* handle table of the blocks (pool's) */
	struct pool *pool;   /* the blocks': the FIB's, or fib_check's own */
	uint64_t blocks, block_bytes, nodes, answers; /* writer only */
	uint64_t asks; /* /16s left to the trie */
	/* writer only: between a_invalidate and a_revalidate */
	aword held;     /* a subtree on the changed key's path, sent to the trie */
	aword *held_w;  /* where it was: a dp entry or a block's word, now 1 */
	uint64_t lens[3];  /* prefix lengths of the changed leaf before the change */
	uint64_t fail[A_NDP / 64]; /* /16s left to the trie for want of memory */
};

static inline size_t
ablk_size(uint32_t nn, uint32_t nl)
{
	/* in 32-byte steps: pool objects of such classes are 32-byte aligned,
	 * so the header and the first node (32 bytes) share one cache line */
	return (sizeof(struct ablk) + nn * sizeof(struct anode) + nl * sizeof(aword) + 31) &
	       ~(size_t)31;
}

static inline unsigned long
a_top(tkey key)
{
	return (unsigned long)(key >> (KEYBITS - A_DPBITS));
}

/* The 6 key bits below bit d (from the top), zero-padded past the end. */
static inline unsigned
a_idx(tkey key, unsigned d)
{
	return (unsigned)((tkey)(key << d) >> (KEYBITS - 6));
}

#include "fib/accel_common.h"

static inline struct ablk *
a_blk(const struct accel *A, aword e)
{
	return pool_handle_ptr3(A->bt, e);
}

/* The word naming blk (which ab_block made sure has a handle). */
static inline aword
a_bword(const struct accel *A, const struct ablk *blk)
{
	return (aword)(pool_handle(A->pool, blk, ablk_size(blk->nn, blk->nl)) << 3) | A_BLOCK;
}

/* ---------------------------------------------------------- the lookups */

/* The answer word for key: 0, A_ASK or an answer. Call with rcu_read_lock. */
static inline __attribute__((always_inline)) aword
a_lookup(const struct accel *A, tkey key)
{
	aword e = T_LOAD(A->dp[a_top(key)]), cur = 0;
	unsigned d = A_DPBITS;

	if (!(e & A_BLOCK))
		return e;
	for (;;) {
		const struct ablk *b = a_blk(A, e);
		const struct anode *nd = b->node;
		aword df;

		for (;;) {
			unsigned v = a_idx(key, d);
			uint64_t m = (UINT64_C(2) << v) - 1;

			d += 6;
			if (!((nd->vec >> v) & 1)) {
				/* a word may be patched in place: one atomic load */
				e = T_LOAD(((const aword *)b)[nd->base0 +
								 __builtin_popcountll(nd->leafvec & m) - 1]);
				break;
			}
			nd = &b->node[nd->base1 + __builtin_popcountll(nd->vec & m) - 1];
		}
		if (e && !(e & A_BLOCK))
			return e;
		df = T_LOAD8(b->dflt);
		if (!e)
			return df ? df : cur;
		if (df)
			cur = df;
	}
}

/* Answer word v (0 or a route) as lookup i's result or reference. */
static inline __attribute__((always_inline)) void
a_out(const struct accel *A, aword v, struct fib_result *r, uint32_t *rf, unsigned i)
{
	if (rf)
		rf[i] = v;
	else
		a_result(A, v, &r[i]);
}

/*
 * Batch: up to A_GROUP lookups advance level by level. Round 0 reads the
 * dp entries (all prefetched first); each later round takes one node step
 * for every lookup inside a block (to a child or to an answer word) and
 * reads the words the previous round found: a result, or a sub-block
 * whose first node the next round reads. Every access is prefetched a
 * whole round (the other lookups' accesses) before it is used. A block's
 * default is read only for a word of 0, from the line of its first node.
 * Out: results in res, or route references in ref (the other NULL; an
 * answer word is its route's reference, see TN(ref_of)).
 */
static inline __attribute__((always_inline)) void
a_lookup_batch(const struct TRIE_PREFIX *t, const struct accel *A, const tkey *keys,
	       uint32_t table, struct fib_result *res, uint32_t *ref, size_t n)
{
	const aword *dp = A->dp;

	for (size_t base = 0; base < n; base += A_GROUP) {
		unsigned m = n - base < A_GROUP ? (unsigned)(n - base) : A_GROUP;
		const tkey *k = keys + base;
		struct fib_result *r = res ? res + base : NULL;
		uint32_t *rf = ref ? ref + base : NULL;
		const struct anode *nd[A_GROUP];
		const struct ablk *bk[A_GROUP];
		const aword *wp[A_GROUP];
		aword cur[A_GROUP];
		uint8_t dd[A_GROUP], act[A_GROUP], wla[A_GROUP], wlb[A_GROUP], ask[A_GROUP];
		uint8_t *wl = wla, *wn = wlb;
		unsigned na = 0, nwd = 0, nask = 0;

		for (unsigned i = 0; i < m; i++)
			__builtin_prefetch(&dp[a_top(k[i])]);
		for (unsigned i = 0; i < m; i++) {
			aword e = T_LOAD(dp[a_top(k[i])]);

			if (e & A_BLOCK) {
				bk[i] = a_blk(A, e);
				nd[i] = bk[i]->node;
				__builtin_prefetch(nd[i]);
				cur[i] = 0;
				dd[i] = A_DPBITS;
				act[na++] = (uint8_t)i;
			} else if (e == A_ASK) {
				ask[nask++] = (uint8_t)i;
			} else {
				a_out(A, e, r, rf, i);
			}
		}
		while (na | nwd) {
			unsigned nn = 0, nw = 0;
			uint8_t *sw;

			/* one node step */
			for (unsigned j = 0; j < na; j++) {
				unsigned i = act[j], s = a_idx(k[i], dd[i]);
				const struct anode *x = nd[i];
				uint64_t msk = (UINT64_C(2) << s) - 1;

				dd[i] = (uint8_t)(dd[i] + 6);
				if ((x->vec >> s) & 1) {
					nd[i] = &bk[i]->node[x->base1 + __builtin_popcountll(x->vec & msk) - 1];
					__builtin_prefetch(nd[i]);
					act[nn++] = (uint8_t)i;
				} else {
					wp[i] = (const aword *)bk[i] + x->base0 +
						__builtin_popcountll(x->leafvec & msk) - 1;
					__builtin_prefetch(wp[i]);
					wn[nw++] = (uint8_t)i;
				}
			}
			/* the words found last round: a result or a sub-block */
			for (unsigned j = 0; j < nwd; j++) {
				unsigned i = wl[j];
				aword v = T_LOAD(*wp[i]);

				if (v & A_BLOCK) {
					aword df = T_LOAD8(bk[i]->dflt);
					if (df)
						cur[i] = df;
					bk[i] = a_blk(A, v);
					nd[i] = bk[i]->node;
					__builtin_prefetch(nd[i]);
					act[nn++] = (uint8_t)i;
					continue;
				}
				if (!v && !(v = T_LOAD8(bk[i]->dflt)))
					v = cur[i];
				if (v == A_ASK)
					ask[nask++] = (uint8_t)i;
				else
					a_out(A, v, r, rf, i);
			}
			na = nn;
			nwd = nw;
			sw = wl;
			wl = wn;
			wn = sw;
		}
		for (unsigned j = 0; j < nask; j++) {
			struct fib_result x = TN(lookup_trie)(t, k[ask[j]], table, 0);

			if (rf)
				rf[ask[j]] = TN(ref_of)(t, x);
			else
				r[ask[j]] = x;
		}
	}
}

/* ------------------------------------------------------------- building */

#include "fib/accel_build.h"

/* A sub-block and the /(D + A_SPAN) it covers. */
struct asub {
	tkey key;
	struct ablk *blk;
	aword w; /* the word naming blk */
};

struct asubv {
	struct asub *v;
	size_t n, cap;
};

static int
asubv_push(struct asubv *a, tkey key, struct ablk *blk, aword w)
{
	struct asub *v = a_grow(a->v, &a->cap, a->n, sizeof(*v), 16);

	if (!v)
		return -ENOMEM;
	a->v = v;
	a->v[a->n].key = key;
	a->v[a->n].blk = blk;
	a->v[a->n].w = w;
	a->n++;
	return 0;
}

/* Add the prefix lengths of the leaf of key (any table) to lens. */
static void
a_leaf_lens(const struct TRIE_PREFIX *t, tkey key, uint64_t lens[3])
{
	struct tnode *path[KEYBITS + 2];
	int depth;
	const struct tleaf *l = find_leaf(t, key, path, &depth);

	for (unsigned a = 0; l && a < l->kv.n; a++) {
		unsigned p = KEYBITS - l->fa[a].slen;
		lens[p / 64] |= UINT64_C(1) << (p % 64);
	}
}

/* Does lens hold a length in (lo, hi]? */
static bool
a_lens_in(const uint64_t lens[3], unsigned lo, unsigned hi)
{
	for (unsigned p = lo + 1; p <= hi && p <= KEYBITS; p++)
		if ((lens[p / 64] >> (p % 64)) & 1)
			return true;
	return false;
}

/* The longest length in lens, -1 for none. */
static int
a_lens_max(const uint64_t lens[3])
{
	for (int w = 2; w >= 0; w--)
		if (lens[w])
			return w * 64 + 63 - __builtin_clzll(lens[w]);
	return -1;
}

struct abuild {
	struct anode *node;
	size_t nn, ncap;
	aword *word;
	size_t nl, lcap;
	int err;
};

static size_t
ab_nodes(struct abuild *b, size_t cnt)
{
	size_t at = b->nn;

	if (b->nn + cnt > b->ncap) {
		size_t cap = b->ncap ? 2 * b->ncap : 64;
		struct anode *v;
		while (cap < b->nn + cnt)
			cap *= 2;
		v = realloc(b->node, cap * sizeof(*v));
		if (!v) {
			b->err = -ENOMEM;
			return 0;
		}
		b->node = v;
		b->ncap = cap;
	}
	b->nn += cnt;
	return at;
}

static void
ab_word(struct abuild *b, aword w)
{
	aword *v = a_grow(b->word, &b->lcap, b->nl, sizeof(*v), 256);

	if (!v) {
		b->err = -ENOMEM;
		return;
	}
	b->word = v;
	b->word[b->nl++] = w;
}

/*
 * Fill node ni at depth d (its slots are key bits d .. d + 5) of a block
 * at depth D from the items in [it, it + n) (inside this node's range,
 * sorted by key then length, all of length d + 1 ... D + A_SPAN) and the
 * sub-blocks in [sb, sb + ns) (inside this node's range, in key order):
 * a node at the block's second level holds the sub-blocks in its answer
 * words, and each sub-block's default becomes the answer of its slot.
 */
static void
ab_node(struct abuild *b, size_t ni, const struct aitem *it, size_t n, const struct asub *sb,
	size_t ns, unsigned d, unsigned D, aword dflt)
{
	uint64_t vec = 0, leafvec = 0;
	aword slot[64], prev = 0;
	size_t base0 = b->nl, base1, k = 0, i = 0, si = 0;
	bool have = false, last = d + 6 >= D + A_SPAN;

	uint8_t first[6], nxt[126];
	unsigned np = 0;
	const struct aitem *pi[126];

	for (unsigned s = 0; s < 64; s++)
		slot[s] = dflt;
	/* longer prefixes paint over shorter ones, chained per length: at
	 * most 2 + 4 + ... + 64 = 126 distinct prefixes end in one node */
	memset(first, 0xff, sizeof(first));
	for (size_t j = 0; j < n; j++) {
		unsigned p = it[j].plen;
		if (p > d + 6) {
			vec |= UINT64_C(1) << a_idx(it[j].key, d);
		} else if (p > d) {
			if (np == 126) { /* only with duplicate items */
				b->err = -EUCLEAN;
				return;
			}
			pi[np] = &it[j];
			nxt[np] = first[p - d - 1];
			first[p - d - 1] = (uint8_t)np++;
		}
	}
	if (!last)
		for (size_t j = 0; j < ns; j++)
			vec |= UINT64_C(1) << a_idx(sb[j].key, d);
	for (unsigned p = 0; p < 6; p++)
		for (unsigned q = first[p]; q != 0xff; q = nxt[q]) {
			unsigned s0 = a_idx(pi[q]->key, d), cnt = 1u << (5 - p);
			for (unsigned s = s0; s < s0 + cnt; s++)
				slot[s] = pi[q]->val;
		}
	if (last)
		for (size_t j = 0; j < ns; j++) {
			unsigned s = a_idx(sb[j].key, d);
			/* a sub-block in use may be read meanwhile: one store */
			if (T_LOAD8(sb[j].blk->dflt) != slot[s])
				T_STORE8(sb[j].blk->dflt, slot[s]);
			slot[s] = sb[j].w;
		}
	for (unsigned s = 0; s < 64; s++) {
		if ((vec >> s) & 1)
			continue;
		if (!have || slot[s] != prev) {
			leafvec |= UINT64_C(1) << s;
			ab_word(b, slot[s]);
			prev = slot[s];
			have = true;
		}
	}
	base1 = ab_nodes(b, (size_t)__builtin_popcountll(vec));
	if (b->err)
		return;
	b->node[ni].vec = vec;
	b->node[ni].leafvec = leafvec;
	b->node[ni].base0 = (uint32_t)base0; /* made absolute by ab_block */
	b->node[ni].base1 = (uint32_t)base1;
	for (unsigned s = 0; s < 64 && !b->err; s++) {
		size_t j, sj;
		if (!((vec >> s) & 1))
			continue;
		while (i < n && a_idx(it[i].key, d) < s)
			i++;
		for (j = i; j < n && a_idx(it[j].key, d) == s; j++)
			;
		while (si < ns && a_idx(sb[si].key, d) < s)
			si++;
		for (sj = si; sj < ns && a_idx(sb[sj].key, d) == s; sj++)
			;
		/* (no arithmetic on an empty list's NULL) */
		ab_node(b, base1 + k, j > i ? it + i : NULL, j - i, sj > si ? sb + si : NULL, sj - si,
			d + 6, D, slot[s]);
		k++;
		i = j;
		si = sj;
	}
}

static void
a_count_block(struct accel *A, const struct ablk *blk, int sign)
{
	A->blocks += (uint64_t)(int64_t)sign;
	A->block_bytes += (uint64_t)((int64_t)sign * (int64_t)ablk_size(blk->nn, blk->nl));
	A->nodes += (uint64_t)((int64_t)sign * blk->nn);
	A->answers += (uint64_t)((int64_t)sign * blk->nl);
}

/* The block at depth D of items (lengths D + 1 ... D + A_SPAN) and
 * sub-blocks, default 0; NULL if it would be empty or (b->err) on ENOMEM. */
static struct ablk *
ab_block(struct accel *A, struct abuild *b, unsigned D,
	 const struct aitem *it, size_t n, const struct asub *sb, size_t ns)
{
	struct ablk *blk;
	uint32_t off;

	b->nn = b->nl = 0;
	b->err = 0;
	if (!n && !ns)
		return NULL;
	ab_nodes(b, 1);
	if (!b->err)
		ab_node(b, 0, it, n, sb, ns, D, D, 0);
	if (!b->err && (b->nn > UINT16_MAX || b->nl > UINT16_MAX))
		b->err = -EUCLEAN; /* at most 65 nodes, 64 * 64 words */
	if (b->err)
		return NULL;
	blk = pool_alloc(A->pool, ablk_size((uint32_t)b->nn, (uint32_t)b->nl));
	if (blk && !pool_handle(A->pool, blk, ablk_size((uint32_t)b->nn, (uint32_t)b->nl))) {
		pool_free(A->pool, blk, ablk_size((uint32_t)b->nn, (uint32_t)b->nl));
		blk = NULL;
	}
	if (!blk) {
		b->err = -ENOMEM;
		return NULL;
	}
	blk->nn = (uint16_t)b->nn;
	blk->nl = (uint16_t)b->nl;
	blk->dflt = 0;
	off = (uint32_t)((sizeof(struct ablk) + b->nn * sizeof(struct anode)) / sizeof(aword));
	for (size_t i = 0; i < b->nn; i++) {
		blk->node[i] = b->node[i];
		blk->node[i].base0 += off;
	}
	memcpy((aword *)blk + off, b->word, b->nl * sizeof(aword));
	a_count_block(A, blk, 1);
	return blk;
}

static inline const aword *
a_words(const struct ablk *blk)
{
	return (const aword *)&blk->node[blk->nn];
}

/* Free a block and its sub-blocks now (never published, or a heap copy). */
static void
a_free_tree(struct accel *A, struct ablk *blk)
{
	const aword *w = a_words(blk);

	for (uint32_t i = 0; i < blk->nl; i++)
		if (w[i] & A_BLOCK)
			a_free_tree(A, a_blk(A, w[i]));
	a_count_block(A, blk, -1);
	pool_free(A->pool, blk, ablk_size(blk->nn, blk->nl));
}

/* Retire a published block and its sub-blocks. */
static void
a_retire_tree(struct TRIE_PREFIX *t, struct accel *A, struct ablk *blk)
{
	const aword *w = a_words(blk);

	for (uint32_t i = 0; i < blk->nl; i++)
		if (w[i] & A_BLOCK)
			a_retire_tree(t, A, a_blk(A, w[i]));
	a_count_block(A, blk, -1);
	reclaim_retire(t->ctx->rc, blk, ablk_size(blk->nn, blk->nl));
}

/*
 * The tree of a /D from all its routes longer than /D ([it, it + n),
 * sorted by key then length): the routes up to /D + A_SPAN in the block,
 * longer ones in sub-blocks per /D + A_SPAN. NULL if n is 0 or (b->err)
 * on ENOMEM. Reorders it: the block's own items first.
 */
static struct ablk *
ab_tree(struct accel *A, struct abuild *b, struct aitem *it, size_t n, unsigned D)
{
	struct avec deep = { 0 };
	struct asubv sv = { 0 };
	struct ablk *blk = NULL;
	size_t own = 0;
	unsigned lim = D + A_SPAN;

	for (size_t i = 0; i < n; i++) {
		if (it[i].plen <= lim)
			it[own++] = it[i];
		else if (avec_push(&deep, it[i].key, it[i].plen, it[i].val))
			goto nomem;
	}
	for (size_t i = 0, j; i < deep.n; i = j) {
		tkey key = deep.v[i].key & ~a_low_mask(KEYBITS - lim);
		struct ablk *sub;

		for (j = i; j < deep.n && (deep.v[j].key & ~a_low_mask(KEYBITS - lim)) == key; j++)
			;
		sub = ab_tree(A, b, deep.v + i, j - i, lim);
		if (!sub || asubv_push(&sv, key, sub, a_bword(A, sub))) {
			if (sub)
				a_free_tree(A, sub);
			goto nomem;
		}
	}
	blk = ab_block(A, b, D, it, own, sv.v, sv.n);
	if (blk || !b->err)
		goto out;
nomem:
	b->err = -ENOMEM;
	for (size_t i = 0; i < sv.n; i++)
		a_free_tree(A, sv.v[i].blk);
	blk = NULL;
out:
	avec_free(&deep);
	pool_scratch_free(sv.v, sv.cap * sizeof(*sv.v));
	return blk;
}

/* The sub-blocks of blk (a block of the /D at lo), in key order; a word
 * sent to the trie by a_invalidate counts as the subtree it held. */
static int
a_subs(const struct accel *A, const struct ablk *blk, unsigned D, tkey lo, struct asubv *out)
{
	const struct anode *r = blk->node;
	const aword *w = (const aword *)blk, *aw = a_words(blk);
	bool any = false;

	if (D + A_SPAN >= KEYBITS)
		return 0;
	for (uint32_t i = 0; i < blk->nl && !any; i++)
		any = (aw[i] & A_BLOCK) || &aw[i] == A->held_w;
	if (!any)
		return 0;
	for (unsigned s1 = 0; s1 < 64; s1++) {
		const struct anode *c;
		if (!((r->vec >> s1) & 1))
			continue;
		c = &blk->node[r->base1 + __builtin_popcountll(r->vec & ((UINT64_C(2) << s1) - 1)) - 1];
		for (unsigned s2 = 0; s2 < 64; s2++) {
			aword v;
			if (!((c->leafvec >> s2) & 1))
				continue;
			size_t wi = c->base0 + __builtin_popcountll(c->leafvec & ((UINT64_C(2) << s2) - 1)) - 1;
			v = &w[wi] == A->held_w ? A->held : w[wi];
			if ((v & A_BLOCK) &&
			    asubv_push(out,
				       lo | (tkey)s1 << (KEYBITS - D - 6) | (tkey)s2 << (KEYBITS - D - 12),
				       a_blk(A, v), v))
				return -ENOMEM;
		}
	}
	return 0;
}

/* What a rebuild along one key made and what it replaced. */
struct apath {
	struct ablk *made[KEYBITS / A_SPAN + 2];
	struct ablk *old[KEYBITS / A_SPAN + 2];
	unsigned nmade, nold;
};

/*
 * Rebuild the block of the /D of key after a change to the leaf of key
 * whose prefixes reach /plen (before or after it): the block's own routes
 * from the trie, its sub-blocks reused except the one on key's path,
 * rebuilt the same way if the leaf reaches into it. old is the block it
 * replaces (NULL: none, so no sub-blocks either). *out is NULL if the /D
 * has no routes longer than /D.
 */
static int
a_rebuild(struct TRIE_PREFIX *t, struct accel *A, struct abuild *b, unsigned D, tkey key,
	  int plen, struct ablk *old, struct apath *ap, struct ablk **out)
{
	tkey lo = key & ~a_low_mask(KEYBITS - D), hi = lo | a_low_mask(KEYBITS - D);
	unsigned lim = D + A_SPAN, align = lim >= KEYBITS ? 0 : KEYBITS - lim;
	struct avec own = { 0 };
	struct asubv sv = { 0 };
	int err;

	*out = NULL;
	err = a_collect(t, t->root, lo, hi, A->table, (int)D, lim, align, &own, &own);
	if (!err && old)
		err = a_subs(A, old, D, lo, &sv);
	if (!err && lim < KEYBITS) {
		tkey pk = key & ~a_low_mask(KEYBITS - lim);
		struct ablk *osub = NULL, *nsub = NULL;
		size_t at = 0;

		while (at < sv.n && sv.v[at].key < pk)
			at++;
		if (at < sv.n && sv.v[at].key == pk)
			osub = sv.v[at].blk;
		if (plen > (int)lim) {
			/* the leaf reaches below: rebuild that sub-block too */
			err = a_rebuild(t, A, b, lim, key, plen, osub, ap, &nsub);
			if (!err && osub && !nsub) {
				memmove(sv.v + at, sv.v + at + 1, (sv.n - at - 1) * sizeof(sv.v[0]));
				sv.n--;
			} else if (!err && osub) {
				sv.v[at].blk = nsub;
				sv.v[at].w = a_bword(A, nsub);
			} else if (!err && nsub) {
				err = asubv_push(&sv, pk, nsub, a_bword(A, nsub));
				if (!err) {
					memmove(sv.v + at + 1, sv.v + at, (sv.n - at - 1) * sizeof(sv.v[0]));
					sv.v[at].key = pk;
					sv.v[at].blk = nsub;
					sv.v[at].w = a_bword(A, nsub);
				}
			}
		}
	}
	if (!err) {
		*out = ab_block(A, b, D, own.v, own.n, sv.v, sv.n);
		err = b->err;
		if (*out)
			ap->made[ap->nmade++] = *out;
	}
	if (!err && old)
		ap->old[ap->nold++] = old;
	avec_free(&own);
	pool_scratch_free(sv.v, sv.cap * sizeof(*sv.v));
	return err;
}

static void
a_set_entry(struct accel *A, unsigned long c, aword e)
{
	if (A->dp[c] == A_ASK)
		A->asks--;
	if (e == A_ASK)
		A->asks++;
	T_STORE(A->dp[c], e);
}

static void
a_retire_entry(struct TRIE_PREFIX *t, struct accel *A, aword e)
{
	if (e & A_BLOCK)
		a_retire_tree(t, A, a_blk(A, e));
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

/* The aligned run of /A_DPBITS entries c0 .. c0 + cnt - 1 (cnt a power of
 * two) that a prefix of key with suffix slen covers (its /16 if longer). */
static void
a_range(tkey key, unsigned slen, unsigned long *c0, unsigned long *cnt)
{
	unsigned span = slen > KEYBITS - A_DPBITS ? slen - (KEYBITS - A_DPBITS) : 0;

	*cnt = 1ul << span;
	*c0 = a_top(key) & ~(*cnt - 1);
}

/* The answer of each /A_DPBITS of the run c0 .. c0 + cnt - 1 from routes of
 * /A_DPBITS or shorter (what its words of 0 mean); dflt holds cnt. */
static int
a_dflts(struct TRIE_PREFIX *t, struct accel *A, unsigned long c0, unsigned long cnt,
	aword *dflt)
{
	unsigned lr = A_DPBITS - (unsigned)__builtin_ctzl(cnt);
	tkey lo = (tkey)c0 << (KEYBITS - A_DPBITS);
	tkey hi = lo | a_low_mask(KEYBITS - lr);
	struct avec shrt = { 0 };
	int err = a_collect(t, t->root, lo, hi, A->table, (int)lr - 1, A_DPBITS,
			    KEYBITS - A_DPBITS, &shrt, NULL);

	if (!err) {
		dflt[0] = a_outer(t, A->table, lo, lr);
		for (unsigned long c = 1; c < cnt; c++)
			dflt[c] = dflt[0];
		for (unsigned p = lr; p <= A_DPBITS; p++)
			for (size_t i = 0; i < shrt.n; i++)
				if (shrt.v[i].plen == p) {
					unsigned long f = a_top(shrt.v[i].key) - c0,
						      n = 1ul << (A_DPBITS - p);
					for (unsigned long c = f; c < f + n; c++)
						dflt[c] = shrt.v[i].val;
				}
	}
	avec_free(&shrt);
	return err;
}

/* Scratch for the defaults of cnt entries. */
static aword *
a_dflt_buf(struct TRIE_PREFIX *t, unsigned long cnt, aword *small)
{
	if (cnt <= 256)
		return small;
	/* kept: rebuilding many /16s at once is rare, not one-off */
	if (!t->adflt)
		t->adflt = malloc(A_NDP * sizeof(aword));
	return t->adflt;
}

/*
 * Build the aligned run of /A_DPBITS entries c0 .. c0 + cnt - 1 of A from
 * the trie afresh, in one walk over their key range, and publish each
 * entry with one store, retiring what it replaces. An entry that cannot
 * be built is left to the trie. Returns 0 or -ENOMEM.
 */
static int
a_build_range(struct TRIE_PREFIX *t, struct accel *A, unsigned long c0, unsigned long cnt)
{
	unsigned lr = A_DPBITS - (unsigned)__builtin_ctzl(cnt);
	tkey lo = (tkey)c0 << (KEYBITS - A_DPBITS);
	tkey hi = lo | a_low_mask(KEYBITS - lr);
	struct avec lng = { 0 };
	struct abuild b = { 0 };
	aword small[256], *dflt = a_dflt_buf(t, cnt, small);
	unsigned long e = c0;
	int err = dflt ? 0 : -ENOMEM;

	if (!err)
		err = a_dflts(t, A, c0, cnt, dflt);
	if (!err)
		err = a_collect(t, t->root, lo, hi, A->table, A_DPBITS, KEYBITS, 0, NULL, &lng);
	if (err) {
		for (unsigned long c = c0; c < c0 + cnt; c++) {
			aword old = A->dp[c];
			a_set_entry(A, c, A_ASK);
			a_set_failed(A, c, true);
			a_retire_entry(t, A, old);
		}
		goto out;
	}
	for (size_t i = 0, j; e < c0 + cnt; i = j) {
		unsigned long c = i < lng.n ? a_top(lng.v[i].key) : c0 + cnt;
		struct ablk *blk;
		aword old;

		/* entries without longer routes: their default */
		for (; e < c; e++) {
			old = A->dp[e];
			a_set_failed(A, e, false);
			if (old == dflt[e - c0])
				continue;
			a_set_entry(A, e, dflt[e - c0]);
			a_retire_entry(t, A, old);
		}
		if (i >= lng.n)
			break;
		for (j = i; j < lng.n && a_top(lng.v[j].key) == c; j++)
			;
		blk = ab_tree(A, &b, lng.v + i, j - i, A_DPBITS);
		old = A->dp[c];
		if (blk) {
			blk->dflt = dflt[c - c0];
			a_set_entry(A, c, a_bword(A, blk));
			a_set_failed(A, c, false);
		} else {
			a_set_entry(A, c, A_ASK);
			a_set_failed(A, c, true);
			err = -ENOMEM;
		}
		a_retire_entry(t, A, old);
		e = c + 1;
	}
out:
	avec_free(&lng);
	free(b.node);
	pool_scratch_free(b.word, b.lcap * sizeof(*b.word));
	return err;
}

/* The word of key's slot at the second level of blk (a block of the /D
 * on key's path), or NULL if that slot has no node: a sub-block's word. */
static aword *
a_slot_word(struct ablk *blk, unsigned D, tkey key)
{
	const struct anode *r = blk->node, *c;
	unsigned s1 = a_idx(key, D), s2 = a_idx(key, D + 6);

	if (D + A_SPAN >= KEYBITS || !((r->vec >> s1) & 1))
		return NULL;
	c = &blk->node[r->base1 + __builtin_popcountll(r->vec & ((UINT64_C(2) << s1) - 1)) - 1];
	return (aword *)blk + c->base0 + __builtin_popcountll(c->leafvec & ((UINT64_C(2) << s2) - 1)) - 1;
}

/*
 * Before the trie changes or retires the leaf of key (its shortest prefix
 * with suffix slen): no reader that starts from now on may find the old
 * leaf. The /16s its short prefixes cover answer "ask the trie" for their
 * default (a block keeps its words: they hold longer routes); the
 * topmost block on key's path that holds a longer prefix of the leaf is
 * sent to the trie with its subtree (one store in its parent's word, or
 * the dp entry) and kept for a_revalidate to reuse.
 */
static void
a_invalidate(struct TRIE_PREFIX *t, struct accel *A, tkey key, unsigned slen)
{
	unsigned long c0, cnt, kc = a_top(key);
	aword e;

	memset(A->lens, 0, sizeof(A->lens));
	a_leaf_lens(t, key, A->lens);
	A->held = 0;
	A->held_w = NULL;
	a_range(key, slen, &c0, &cnt);
	for (unsigned long c = c0; c < c0 + cnt; c++) {
		e = A->dp[c];
		if (e & A_BLOCK)
			T_STORE8(a_blk(A, e)->dflt, A_ASK);
		else if (e != A_ASK)
			a_set_entry(A, c, A_ASK);
	}
	e = A->dp[kc];
	if (!(e & A_BLOCK))
		return;
	if (a_lens_in(A->lens, A_DPBITS, A_DPBITS + A_SPAN)) {
		A->held = e;
		A->held_w = &A->dp[kc];
		a_set_entry(A, kc, A_ASK);
		return;
	}
	for (unsigned D = A_DPBITS; D + A_SPAN < KEYBITS; D += A_SPAN) {
		struct ablk *blk = a_blk(A, e);
		aword *w = a_slot_word(blk, D, key);

		if (!w || !(*w & A_BLOCK))
			return; /* no block below holds the leaf's routes */
		e = *w;
		if (a_lens_in(A->lens, D + A_SPAN, D + 2 * A_SPAN)) {
			A->held = e;
			A->held_w = w;
			T_STORE(*w, A_ASK);
			return;
		}
	}
}

/* Free blocks built for a tree that is not published (they may hold
 * reused sub-blocks: each alone). */
static void
a_free_made(struct accel *A, struct apath *ap)
{
	for (unsigned i = 0; i < ap->nmade; i++) {
		a_count_block(A, ap->made[i], -1);
		pool_free(A->pool, ap->made[i], ablk_size(ap->made[i]->nn, ap->made[i]->nl));
	}
	ap->nmade = 0;
}

/* After a failure: the /16 is left to the trie until a bulk load; its
 * tree, and the subtree a_invalidate held, are retired. */
static void
a_fail_entry(struct TRIE_PREFIX *t, struct accel *A, unsigned long c, bool path)
{
	aword e = path && A->held_w == &A->dp[c] ? A->held : A->dp[c];

	a_set_entry(A, c, A_ASK);
	a_set_failed(A, c, true);
	a_retire_entry(t, A, e);
	if (!path)
		return;
	if (A->held && A->held_w != &A->dp[c])
		a_retire_entry(t, A, A->held);
	A->held = 0;
	A->held_w = NULL;
}

/* The second-level node of key's slot in blk (a block of the /D on key's
 * path) and its index, or NULL if that slot has none. */
static const struct anode *
a_node2(const struct ablk *blk, unsigned D, tkey key, size_t *ci)
{
	const struct anode *r = blk->node;
	unsigned s1 = a_idx(key, D);

	if (D + A_SPAN >= KEYBITS || !((r->vec >> s1) & 1))
		return NULL;
	*ci = r->base1 + (size_t)__builtin_popcountll(r->vec & ((UINT64_C(2) << s1) - 1)) - 1;
	return blk->node[*ci].vec ? NULL : &blk->node[*ci]; /* (never: two levels) */
}

/* The 64 slot words of a second-level node of blk, from its runs (a word
 * sent to the trie read as the subtree it stands for). */
static void
a_node_slots(const struct accel *A, const struct ablk *blk, const struct anode *c,
	     aword slot[64])
{
	const aword *bw = (const aword *)blk;
	aword cur = 0;

	for (unsigned s = 0, k = 0; s < 64; s++) {
		if ((c->leafvec >> s) & 1) {
			const aword *p = &bw[c->base0 + k++];
			cur = p == A->held_w ? A->held : *p;
		}
		slot[s] = cur;
	}
}

/*
 * A copy of blk with its second-level node ci holding the slot words
 * slot[] instead: only that node's runs are made again; the other nodes
 * and words are copied, those after it shifted. The caller makes sure the
 * result is what a fresh build makes (a_check compares): the block's
 * other routes did not change, and the node stays. It is refused (NULL,
 * b->err 0) when the node would be one run without a sub-block, which a
 * fresh build may not keep: the caller rebuilds the block instead.
 */
static struct ablk *
a_copy_node(struct accel *A, struct abuild *b, const struct ablk *blk, size_t ci,
	    const aword slot[64])
{
	const struct anode *c = &blk->node[ci];
	const aword *from = (const aword *)blk;
	unsigned oldn = (unsigned)__builtin_popcountll(c->leafvec), newn = 0;
	aword nw[64], cur = 0;
	uint64_t leafvec = 0;
	bool sub = false;
	size_t nl, off, cut, tail;
	struct ablk *nb;
	aword *to;

	b->err = 0;
	for (unsigned s = 0; s < 64; s++) {
		if (!s || slot[s] != cur) {
			leafvec |= UINT64_C(1) << s;
			nw[newn++] = slot[s];
			cur = slot[s];
		}
		sub |= (slot[s] & A_BLOCK) != 0;
	}
	if (newn == 1 && !sub)
		return NULL;
	nl = (size_t)blk->nl - oldn + newn;
	if (nl > UINT16_MAX)
		return NULL;
	nb = pool_alloc(A->pool, ablk_size(blk->nn, (uint32_t)nl));
	if (nb && !pool_handle(A->pool, nb, ablk_size(blk->nn, (uint32_t)nl))) {
		pool_free(A->pool, nb, ablk_size(blk->nn, (uint32_t)nl));
		nb = NULL;
	}
	if (!nb) {
		b->err = -ENOMEM;
		return NULL;
	}
	nb->nn = blk->nn;
	nb->nl = (uint16_t)nl;
	nb->dflt = 0;
	off = (sizeof(struct ablk) + blk->nn * sizeof(struct anode)) / sizeof(aword);
	cut = c->base0; /* in words from the block start, as base0 */
	for (size_t i = 0; i < blk->nn; i++) {
		nb->node[i] = blk->node[i];
		if (i != ci && nb->node[i].base0 > cut)
			nb->node[i].base0 = (uint32_t)(nb->node[i].base0 + newn - oldn);
	}
	nb->node[ci].leafvec = leafvec;
	to = (aword *)nb;
	tail = off + blk->nl - (cut + oldn);
	memcpy(to + off, from + off, (cut - off) * sizeof(aword));
	memcpy(to + cut, nw, newn * sizeof(aword));
	/* a word sent to the trie (held) is on key's path: in slot[] */
	memcpy(to + cut + newn, from + cut + oldn, tail * sizeof(aword));
	a_count_block(A, nb, 1);
	return nb;
}

/*
 * A copy of blk (a block of the /D on key's path whose own routes did not
 * change) with its second-level word for key's slot set to w: a sub-block
 * that appeared there, or the answer that a sub-block that went leaves.
 * NULL (b->err 0) if key's slot has no second-level node (a fresh build
 * changes the block's shape) or a_copy_node refuses.
 */
static struct ablk *
a_patch_slot(struct accel *A, struct abuild *b, const struct ablk *blk, unsigned D, tkey key,
	     aword w)
{
	const struct anode *c;
	aword slot[64];
	size_t ci;

	b->err = 0;
	if (!(c = a_node2(blk, D, key, &ci)))
		return NULL;
	a_node_slots(A, blk, c, slot);
	slot[a_idx(key, D + 6)] = w;
	return a_copy_node(A, b, blk, ci, slot);
}

/*
 * A copy of blk (a block of the /D on key's path) after a change of the
 * leaf of key whose routes there (lens) are all in the second-level node
 * of key's slot: that node's words made again from the trie, the routes
 * of its /D+6 and the answer it defaults to (the longest route of /D+1
 * ... /D+6 over it, or 0), its sub-blocks kept (their defaults set
 * again). NULL (b->err 0) when that node is not there or a_copy_node
 * refuses; b->err on ENOMEM.
 */
static struct ablk *
a_patch_node(struct TRIE_PREFIX *t, struct accel *A, struct abuild *b, const struct ablk *blk,
	     unsigned D, tkey key)
{
	unsigned lim = D + A_SPAN;
	tkey lo = key & ~a_low_mask(KEYBITS - D - 6), hi = lo | a_low_mask(KEYBITS - D - 6);
	const struct anode *c;
	struct avec own = { 0 };
	aword old[64], slot[64], v0 = 0;
	struct ablk *nb = NULL;
	size_t ci;

	b->err = 0;
	if (!(c = a_node2(blk, D, key, &ci)))
		return NULL;
	for (unsigned p = D + 6; p > D && !v0; p--) {
		struct tnode *path[KEYBITS + 2];
		int depth;
		const struct tleaf *l = find_leaf(t, key & ~a_low_mask(KEYBITS - p), path, &depth);

		for (unsigned a = 0; l && a < l->kv.n; a++) {
			const struct fib_alias *fa = &l->fa[a];
			if (fa->slen == KEYBITS - p && fa->table == A->table && !fa->tos) {
				v0 = a_value(t, l, a);
				break;
			}
		}
	}
	b->err = a_collect(t, t->root, lo, hi, A->table, (int)D + 6, lim, KEYBITS - lim, &own,
			   &own);
	if (b->err)
		goto out;
	for (unsigned s = 0; s < 64; s++)
		slot[s] = v0;
	for (unsigned p = D + 7; p <= lim; p++)
		for (size_t i = 0; i < own.n; i++)
			if (own.v[i].plen == p) {
				unsigned s0 = a_idx(own.v[i].key, D + 6), cnt = 1u << (lim - p);
				for (unsigned s = s0; s < s0 + cnt; s++)
					slot[s] = own.v[i].val;
			}
	a_node_slots(A, blk, c, old);
	for (unsigned s = 0; s < 64; s++)
		if (old[s] & A_BLOCK) {
			struct ablk *sub = a_blk(A, old[s]);
			/* a sub-block in use may be read meanwhile: one store */
			if (T_LOAD8(sub->dflt) != slot[s])
				T_STORE8(sub->dflt, slot[s]);
			slot[s] = old[s];
		}
	nb = a_copy_node(A, b, blk, ci, slot);
out:
	avec_free(&own);
	return nb;
}

/*
 * The changed key's /16 (default df): find the topmost block on key's
 * path that holds a prefix of the leaf (before or after the change: lens)
 * or whose sub-block on the path appears; rebuild it and the blocks below
 * it on the path, reusing every other sub-block; publish with one store
 * in its parent's word (the blocks above are unchanged) or the dp entry;
 * retire what was replaced.
 */
static void
a_update_top(struct TRIE_PREFIX *t, struct accel *A, unsigned long c, tkey key,
	     const uint64_t lens[3], aword df)
{
	aword e = A->held_w == &A->dp[c] ? A->held : A->dp[c];
	struct ablk *top = (e & A_BLOCK) ? a_blk(A, e) : NULL, *old, *blk;
	struct abuild b = { 0 };
	struct apath ap;
	aword *pw = NULL;
	unsigned D = A_DPBITS, nup = 0;
	int err, plen = a_lens_max(lens);
	/* the blocks above old on the path, and the words they hang from */
	struct {
		struct ablk *blk;
		aword *pw;
	} up[KEYBITS / A_SPAN + 2];

	if (!A->held && e == A_ASK && a_failed(A, c)) {
		a_build_range(t, A, c, 1);
		return;
	}
	if (top && T_LOAD8(top->dflt) != df)
		T_STORE8(top->dflt, df);
	if (plen <= A_DPBITS) {
		/* no route of the leaf in the blocks: the default only */
		if (!top && e != df)
			a_set_entry(A, c, df);
		return;
	}
	/* down the path while a block neither holds the leaf's routes nor
	 * gains a sub-block on the path */
	old = top;
	while (old && !a_lens_in(lens, D, D + A_SPAN)) {
		aword *w = a_slot_word(old, D, key);
		aword v = !w ? 0 : w == A->held_w ? A->held : *w;

		if (!(v & A_BLOCK))
			break;
		up[nup].blk = old;
		up[nup++].pw = pw;
		pw = w;
		old = a_blk(A, v);
		D += A_SPAN;
	}
	ap.nmade = ap.nold = 0;
	if (old && plen <= (int)(D + A_SPAN) && !a_lens_in(lens, D, D + 6) &&
	    a_lens_in(lens, D + 6, D + A_SPAN)) {
		/* the leaf's routes here are all in one second-level node:
		 * that node made again in a copy of old, when it stays */
		blk = a_patch_node(t, A, &b, old, D, key);
		err = b.err;
		if (blk) {
			ap.made[ap.nmade++] = blk;
			ap.old[ap.nold++] = old;
		}
		if (blk || err)
			goto publish;
	}
	if (old && !a_lens_in(lens, D, D + A_SPAN) && plen > (int)(D + A_SPAN) &&
	    a_slot_word(old, D, key)) {
		/* a sub-block appears below old, whose routes are unchanged:
		 * built alone and put in a copy of old (old's other words
		 * kept) when the slot's node stays; else old is rebuilt */
		struct ablk *nsub;
		aword *w = a_slot_word(old, D, key);

		err = a_rebuild(t, A, &b, D + A_SPAN, key, plen, NULL, &ap, &nsub);
		if (!err && !nsub) {
			blk = old; /* nothing below after all: unchanged */
			goto publish;
		}
		if (!err) {
			nsub->dflt = *w;
			blk = a_patch_slot(A, &b, old, D, key, a_bword(A, nsub));
			err = b.err;
			if (blk) {
				ap.made[ap.nmade++] = blk;
				ap.old[ap.nold++] = old;
				goto publish;
			}
		}
		a_free_made(A, &ap);
		ap.nmade = ap.nold = 0;
		if (err)
			goto publish;
	}
	for (;;) {
		ap.nmade = ap.nold = 0;
		err = a_rebuild(t, A, &b, D, key, plen, old, &ap, &blk);
		if (err || !pw || blk)
			break;
		/* the sub-block goes: its parent changes shape. Its slot takes
		 * the answer the sub-block defaulted to, in a copy of the
		 * parent, when the slot's node stays; else the parent is
		 * rebuilt (reusing its other sub-blocks), and if it goes too,
		 * its own parent */
		blk = a_patch_slot(A, &b, up[nup - 1].blk, D - A_SPAN, key, T_LOAD8(old->dflt));
		if (b.err) {
			err = b.err;
			break;
		}
		if (blk) {
			ap.made[ap.nmade++] = blk;
			ap.old[ap.nold++] = up[nup - 1].blk;
			nup--;
			old = up[nup].blk;
			pw = up[nup].pw;
			D -= A_SPAN;
			break;
		}
		a_free_made(A, &ap);
		nup--;
		old = up[nup].blk;
		pw = up[nup].pw;
		D -= A_SPAN;
	}
publish:
	free(b.node);
	pool_scratch_free(b.word, b.lcap * sizeof(*b.word));
	if (err) {
		a_free_made(A, &ap);
		a_fail_entry(t, A, c, true);
		return;
	}
	if (pw) {
		/* the parent is unchanged: so is the default it gives */
		blk->dflt = T_LOAD8(old->dflt);
		T_STORE(*pw, a_bword(A, blk));
	} else if (blk) {
		blk->dflt = df;
		a_set_entry(A, c, a_bword(A, blk));
	} else {
		a_set_entry(A, c, df);
	}
	A->held = 0;
	A->held_w = NULL;
	for (unsigned i = 0; i < ap.nold; i++) {
		a_count_block(A, ap.old[i], -1);
		reclaim_retire(t->ctx->rc, ap.old[i], ablk_size(ap.old[i]->nn, ap.old[i]->nl));
	}
}

/* After the change: the defaults of the /16s the leaf's short prefixes
 * cover, and the tree of its own /16. */
static void
a_revalidate(struct TRIE_PREFIX *t, struct accel *A, tkey key, unsigned slen)
{
	unsigned long c0, cnt, kc = a_top(key);
	aword small[256], *dflt;
	uint64_t lens[3];

	memcpy(lens, A->lens, sizeof(lens));
	memset(A->lens, 0, sizeof(A->lens));
	a_leaf_lens(t, key, lens);
	a_range(key, slen, &c0, &cnt);
	dflt = a_dflt_buf(t, cnt, small);
	if (!dflt || a_dflts(t, A, c0, cnt, dflt)) {
		for (unsigned long c = c0; c < c0 + cnt; c++)
			if (c != kc && !(A->dp[c] == A_ASK && a_failed(A, c)))
				a_fail_entry(t, A, c, false);
		a_fail_entry(t, A, kc, true);
		return;
	}
	for (unsigned long c = c0; c < c0 + cnt; c++) {
		aword e = A->dp[c], df = dflt[c - c0];

		if (c == kc)
			continue;
		if (e & A_BLOCK) {
			struct ablk *blk = a_blk(A, e);
			if (T_LOAD8(blk->dflt) != df)
				T_STORE8(blk->dflt, df);
		} else if (!(e == A_ASK && a_failed(A, c)) && e != df) {
			a_set_entry(A, c, df);
		}
	}
	a_update_top(t, A, kc, key, lens, dflt[kc - c0]);
}

/* Free a table that was never published (pool memory only: the checking
 * copy is emptied by a_clear_heap). */
static void
a_free_now(struct TRIE_PREFIX *t, struct accel *A)
{
	for (unsigned long c = 0; c < A_NDP; c++)
		if (A->dp[c] & A_BLOCK)
			a_free_tree(A, a_blk(A, A->dp[c]));
	pool_free(t->ctx->pool, A->dp, A_NDP * sizeof(aword));
	pool_free(t->ctx->pool, A, sizeof(*A));
}

static void
a_retire_all(struct TRIE_PREFIX *t, struct accel *A)
{
	for (unsigned long c = 0; c < A_NDP; c++)
		a_retire_entry(t, A, A->dp[c]);
	reclaim_retire(t->ctx->rc, A->dp, A_NDP * sizeof(aword));
	reclaim_retire(t->ctx->rc, A, sizeof(*A));
}

/* A whole table for the trie as it is, or NULL (ENOMEM). Not published:
 * its entries are plain stores until the table is. */
static struct accel *
a_build_all(struct TRIE_PREFIX *t, uint32_t table)
{
	struct accel *A = pool_alloc(t->ctx->pool, sizeof(*A));
	aword *dp = A ? pool_alloc(t->ctx->pool, A_NDP * sizeof(aword)) : NULL;

	if (!dp) {
		if (A)
			pool_free(t->ctx->pool, A, sizeof(*A));
		return NULL;
	}
	memset(A, 0, sizeof(*A));
	memset(dp, 0, A_NDP * sizeof(aword));
	A->table = table;
	A->dp = dp;
	A->pool = t->ctx->pool;
	A->lt = A->bt = pool_handle_table(t->ctx->pool);
	if (a_build_range(t, A, 0, A_NDP)) {
		a_free_now(t, A);
		return NULL;
	}
	return A;
}

static size_t
a_bytes(const struct accel *A)
{
	return sizeof(*A) + A_NDP * sizeof(aword) + A->block_bytes;
}

/* ------------------------------------------------------ check and stats */

/* Empty a checking copy for the next check (its dp stays allocated). */
static void
a_clear_heap(struct accel *F)
{
	for (unsigned long c = 0; c < A_NDP; c++) {
		if (F->dp[c] & A_BLOCK)
			a_free_tree(F, a_blk(F, F->dp[c]));
		F->dp[c] = 0;
	}
	memset(F->fail, 0, sizeof(F->fail));
	F->asks = F->blocks = F->block_bytes = F->nodes = F->answers = 0;
}

/* Two trees hold the same: nodes, words and defaults, sub-blocks alike. */
static bool
a_same_tree(const struct accel *A, const struct ablk *x, const struct accel *F,
	    const struct ablk *y)
{
	const aword *wx = a_words(x), *wy = a_words(y);

	if (x->nn != y->nn || x->nl != y->nl || T_LOAD8(x->dflt) != y->dflt ||
	    memcmp(x->node, y->node, x->nn * sizeof(x->node[0])))
		return false;
	for (uint32_t i = 0; i < x->nl; i++) {
		if (wx[i] & wy[i] & A_BLOCK) {
			if (!a_same_tree(A, a_blk(A, wx[i]), F, a_blk(F, wy[i])))
				return false;
		} else if (wx[i] != wy[i]) {
			return false;
		}
	}
	return true;
}

static void
a_scratch_free(struct TRIE_PREFIX *t)
{
	if (t->acheck) {
		a_clear_heap(t->acheck);
		free(t->acheck->dp);
		pool_free_all(t->acheck->pool);
		free(t->acheck);
	}
	free(t->adflt);
}

/*
 * The table equals one built afresh from the trie (entries left to the
 * trie aside), and its answers at both ends of every prefix and just
 * outside them equal the trie's own lookups.
 */
static int
a_check(struct TRIE_PREFIX *t, struct accel *A, char *buf, size_t len)
{
	struct accel *F;
	uint64_t asks = 0;
	int err = 0;

	/* the copy is kept: checks run after every step of the tests */
	F = t->acheck;
	if (!F) {
		F = calloc(1, sizeof(*F));
		if (F) {
			F->dp = calloc(A_NDP, sizeof(aword));
			F->pool = pool_new(); /* its own: no injected failures */
		}
		if (F && (!F->dp || !F->pool)) {
			free(F->dp);
			pool_free_all(F->pool);
			free(F);
			F = NULL;
		}
		if (F) {
			F->lt = pool_handle_table(t->ctx->pool);
			F->bt = pool_handle_table(F->pool);
		}
		t->acheck = F;
	}
	if (F) {
		F->table = A->table;
		if (a_build_range(t, F, 0, A_NDP)) {
			a_clear_heap(F);
			F = NULL;
		}
	}
	/* one pass: compare, and empty the copy for the next check */
	for (unsigned long c = 0; c < A_NDP; c++) {
		aword e = A->dp[c], f = F ? F->dp[c] : 0;
		bool same = e == f;

		asks += e == A_ASK;
		if (!F)
			continue; /* no memory for the copy: the probes only */
		if (e & f & A_BLOCK)
			same = a_same_tree(A, a_blk(A, e), F, a_blk(F, f));
		if (f & A_BLOCK)
			a_free_tree(F, a_blk(F, f));
		F->dp[c] = 0;
		if (!same && e != A_ASK && !err) {
			snprintf(buf, len, "compiled table entry %lu is %#llx, a fresh build has %#llx",
				 c, (unsigned long long)e, (unsigned long long)f);
			err = -EUCLEAN;
		}
	}
	if (F) {
		memset(F->fail, 0, sizeof(F->fail));
		F->asks = F->blocks = F->block_bytes = F->nodes = F->answers = 0;
	}
	if (err)
		return err;
	if (asks != A->asks) {
		snprintf(buf, len, "compiled table counts %llu dp entries for the trie, holds %llu",
			 (unsigned long long)A->asks, (unsigned long long)asks);
		return -EUCLEAN;
	}
	return a_check_rec(t, A, t->root, buf, len);
}
