/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the level-compressed trie, after Linux net/ipv4/fib_trie.c
 *
 * Included once per key width by trie4.c (TRIE_KEYBITS 32) and trie6.c
 * (128): one implementation, specialised by the compiler.
 *
 * Types. Every element starts with the same header, struct tkv:
 *
 *   key   the key bits above pos + bits (lower bits zero); a leaf's key is
 *         the network address of its prefixes
 *   pos   lowest key bit of the child index (0 for a leaf)
 *   bits  log2 of the number of children (0 for a leaf)
 *   slen  largest suffix length (key bits - prefix length) of any route
 *         below: prunes backtracking
 *
 *   internal node: tkv | empty full (writer only) | child[1 << bits]
 *                  (trefs: 32-bit pool handles, fib/trie_types.h)
 *   leaf:          tkv | alias[n]  (routes of one key, kernel order)
 *
 *             root (pos 16, bits 16)
 *          /    |       \
 *   leaf 1.0.0.0  node (pos 4, bits 4)   NULL ...
 *   [/24]          | ...
 *
 * Lookup. One compare per node checks both the path-compressed bits and
 * the child index: index = (key ^ n->key) >> n->pos; index >> bits != 0
 * means a mismatch in the skipped bits. The first leaf reached is tried;
 * if none of its routes covers the key, shorter prefixes are found by
 * backtracking: strip the lowest set bit of the child index, as the
 * kernel does. Readers keep their own stack of ancestors instead of the
 * kernel's parent pointers, so resizes never rewrite children.
 *
 * Updates. One writer. Leaves are copy-on-write: adding or removing a
 * route builds a new leaf and publishes it with one pointer store. New
 * and resized nodes are built completely, then published with one store;
 * what they replace is retired to the reclamation queue. Nodes resize as
 * fib_trie's resize(): inflate while the doubled node would be at least
 * inflate_threshold % full (full children count twice), halve while under
 * halve_threshold %, separate thresholds for the root, at most MAX_WORK
 * steps per call, collapse nodes with one child.
 *
 * Bulk load builds the whole trie off-line from sorted leaves, choosing
 * each node's width with the same inflate rule, and publishes the root
 * once.
 *
 * Beside the trie, a compiled copy of one table (tos 0) answers the
 * datapath's lookups in a few cache-resident steps: fib/accel4_impl.h
 * (IPv4) or fib/accel_impl.h. The trie stays the structure every update
 * goes to first, and answers every other lookup. The two meet through the
 * functions fib/trie_types.h declares; the instance file (trie4.c,
 * trie6.c) includes the table after this file.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fib/info.h"
#include "fib/pool.h"
#include "fib/rcu.h"
#include "fib/reclaim.h"
#include "fib/trie.h"
#include "fib/trie_types.h"

#define MAX_BITS 24 /* widest node: 16M children */
#define MAX_WORK 10
/* Inflates and halves one update may do in all. Growing the root splits
 * every full child and resizes them in turn: one insert could otherwise
 * restructure the whole trie (tens of thousands of inflates, tens of ms).
 * What is left over happens on later updates along those paths. */
#define RESIZE_BUDGET 64
#define LOOKUP_GROUP 16


static inline tkey
get_cindex(tkey key, const struct tkv *n)
{
	return (key ^ n->key) >> n->pos;
}

/* Index of key in n; key must match n above pos + bits. */
static inline unsigned long
get_index(tkey key, const struct tkv *n)
{
	return (unsigned long)((key ^ n->key) >> n->pos);
}

static inline int
key_fls(tkey k)
{
#if TRIE_KEYBITS == 32
	return 31 - __builtin_clz(k);
#else
	uint64_t hi = (uint64_t)(k >> 64);
	if (hi)
		return 127 - __builtin_clzll(hi);
	return 63 - __builtin_clzll((uint64_t)k);
#endif
}

static inline bool
prefix_mismatch(tkey key, const struct tkv *n)
{
	tkey prefix = n->key;

	return ((key ^ prefix) & (prefix | -prefix)) != 0;
}

/* Does the route of suffix length slen cover a key differing by index? */
static inline bool
slen_covers(tkey index, unsigned slen)
{
	return slen >= KEYBITS || (index >> slen) == 0;
}

/*
 * First (longest) alias of l covering key in table with tos. With
 * minslen >= 0 the writer asks instead for the longest alias of any table
 * and tos whose suffix is at least minslen (root fallbacks).
 */
static inline const struct fib_alias *
leaf_match(const struct tleaf *l, tkey key, uint32_t table, uint8_t tos, int minslen)
{
	tkey index = key ^ l->kv.key;

	for (unsigned i = 0; i < l->kv.n; i++) {
		const struct fib_alias *fa = &l->fa[i];
		if (!slen_covers(index, fa->slen))
			continue;
		if (minslen >= 0) {
			if (fa->slen < minslen)
				continue;
			return fa;
		}
		if (fa->table != table)
			continue;
		if (fa->tos && fa->tos != tos)
			continue;
		return fa;
	}
	return NULL;
}

/* ---------------------------------------------------------------- lookup */

/*
 * The kernel's fib_table_lookup, with an explicit stack of the nodes whose
 * suffix lengths make backtracking through them worthwhile.
 * Call with rcu_read_lock held.
 */
static const struct fib_alias *
trie_lookup_slow(const uintptr_t *ht, const struct tkv *root, const struct rootfb *F, tkey key,
		 uint32_t table, uint8_t tos, int minslen, const struct tleaf **lp)
{
	struct {
		const struct tnode *pn;
		unsigned long cindex;
	} stack[KEYBITS + 1];
	int sp = 0;
	const struct tnode *pn = NULL;
	unsigned long cindex = 0;
	const struct tkv *n = root;
	const tref *cptr;
	const struct fib_alias *fa;
	bool fb_tried = false;

	if (!n)
		return NULL;
	if (F && F->node != root)
		F = NULL; /* built for another root: strip bits instead */

	/* Step 1: travel to the longest prefix match in the trie */
	for (;;) {
		tkey index = get_cindex(key, n);

		if (index >> n->bits)
			break;
		if (IS_LEAF(n))
			goto found;
		if (T_LOAD8(n->slen) > n->pos) {
			stack[sp].pn = pn;
			stack[sp].cindex = cindex;
			sp++;
			pn = TNODE(n);
			cindex = (unsigned long)index;
		}
		n = t_child(ht, TNODE(n), (unsigned long)index);
		if (!n)
			goto backtrace;
	}

	/* Step 2: sort out leaves and begin backtracking for longest prefix */
	for (;;) {
		cptr = TNODE(n)->child;
		if (prefix_mismatch(key, n) || T_LOAD8(n->slen) == n->pos)
			goto backtrace;
		if (IS_LEAF(n))
			break;
		while ((n = t_elem(ht, T_LOAD(*cptr))) == NULL) {
backtrace:
			for (;;) {
				if (pn && &pn->kv == root && F && !fb_tried) {
					const struct tleaf *fl = TLEAF(
						t_elem(ht, T_LOAD(F->slot[get_index(key, root)])));
					fb_tried = true;
					if (!fl)
						return NULL;
					fa = leaf_match(fl, key, table, tos, minslen);
					if (fa) {
						*lp = fl;
						return fa;
					}
				}
				/* Stripping the lowest set bit b of cindex leaves only
				 * children that need a suffix above pos + b: none if
				 * this node's slen is lower. */
				if (cindex && pn->kv.pos + (unsigned)__builtin_ctzl(cindex) <
						      T_LOAD8(pn->kv.slen))
					break;
				if (!sp)
					return NULL;
				sp--;
				pn = stack[sp].pn;
				cindex = stack[sp].cindex;
			}
			cindex &= cindex - 1;
			cptr = &pn->child[cindex];
		}
	}

found:
	fa = leaf_match(TLEAF(n), key, table, tos, minslen);
	if (!fa)
		goto backtrace;
	*lp = TLEAF(n);
	return fa;
}

static struct fib_result
TN(lookup_trie)(const struct TRIE_PREFIX *t, tkey key, uint32_t table, uint8_t tos)
{
	struct fib_result res = { NULL, NULL };
	const struct tleaf *l = NULL;

	res.alias = (const struct fib_alias *)trie_lookup_slow(t->ht, T_LOAD(t->root), T_LOAD(t->rfb), key,
							       table, tos, -1, &l);
	res.leaf = (const struct fib_leaf *)l;
	return res;
}

/*
 * The kernel's backtracking inside one node pn from child index cindex,
 * without going up: strip the lowest set bit, follow child 0 of what is
 * there, as fib_table_lookup does. NULL when pn holds nothing covering
 * key. Call with rcu_read_lock held.
 */
static const struct fib_alias *
backtrack_node(const uintptr_t *ht, const struct tnode *pn, unsigned long cindex, tkey key,
	       uint32_t table, const struct tleaf **lp)
{
	unsigned slen = T_LOAD8(pn->kv.slen);

	while (cindex && pn->kv.pos + (unsigned)__builtin_ctzl(cindex) < slen) {
		const tref *cptr;

		cindex &= cindex - 1;
		cptr = &pn->child[cindex];
		for (;;) {
			const struct tkv *n = t_elem(ht, T_LOAD(*cptr));
			const struct fib_alias *fa;

			if (!n || prefix_mismatch(key, n) || T_LOAD8(n->slen) == n->pos)
				break;
			if (!IS_LEAF(n)) {
				cptr = TNODE(n)->child;
				continue;
			}
			fa = leaf_match(TLEAF(n), key, table, 0, -1);
			if (fa) {
				*lp = TLEAF(n);
				return fa;
			}
			break;
		}
	}
	return NULL;
}

/*
 * Batch lookups, software-pipelined: LOOKUP_GROUP lookups are in flight at
 * once, each advancing by one memory access per round, and every access
 * was prefetched the round before: a node's header (to compute the child
 * index), then the child slot (to find the next node), then the leaf. A
 * lookup that finishes hands its place to the next address at once, so
 * the misses of LOOKUP_GROUP independent lookups overlap all the time.
 * An empty root slot goes to the root fallbacks (two more prefetched
 * steps); a lookup whose first leaf does not answer it (the kernel would
 * backtrack) is finished by the scalar path.
 */
enum { LB_NODE, LB_SLOT, LB_FB, LB_FBLEAF };

static void
TN(lookup_batch_trie)(const struct TRIE_PREFIX *t, const tkey *keys, uint32_t table,
		      struct fib_result *res, size_t n)
{
	const uintptr_t *ht = t->ht;
	const struct tkv *root = T_LOAD(t->root);
	const struct rootfb *F = T_LOAD(t->rfb);
	struct {
		const void *p; /* node or leaf (LB_NODE, LB_FBLEAF), slot (LB_SLOT, LB_FB) */
		size_t i;
		uint8_t state;
		uint8_t deep; /* nodes below the root worth backtracking in */
		const struct tnode *dn; /* the last of them */
		unsigned long dci;      /* and the child index taken there */
	} w[LOOKUP_GROUP];
	unsigned nw = 0;
	size_t next = 0;

	if (!root) {
		for (size_t i = 0; i < n; i++)
			res[i].leaf = NULL, res[i].alias = NULL;
		return;
	}
	if (F && F->node != root)
		F = NULL;
	/* The root's header is hot: every lookup starts at its slot. */
#define LB_START(e, idx)                                                              \
	do {                                                                          \
		tkey ri_ = get_cindex(keys[idx], root);                               \
		(e).i = (idx);                                                        \
		(e).deep = 0;                                                         \
		if (IS_LEAF(root) || (ri_ >> root->bits)) {                           \
			(e).p = root;                                                 \
			(e).state = LB_NODE;                                          \
		} else {                                                              \
			(e).p = &TNODE(root)->child[(unsigned long)ri_];              \
			(e).state = LB_SLOT;                                          \
			__builtin_prefetch((e).p);                                    \
		}                                                                     \
	} while (0)
	while (nw < LOOKUP_GROUP && next < n) {
		LB_START(w[nw], next);
		nw++;
		next++;
	}
	while (nw) {
		for (unsigned k = 0; k < nw; k++) {
			size_t i = w[k].i;
			tkey key = keys[i];
			const struct fib_alias *fa = NULL;
			const struct tkv *c;
			tkey index;

			switch (w[k].state) {
			case LB_SLOT:
				c = t_elem(ht, T_LOAD(*(const tref *)w[k].p));
				if (!c)
					goto backtrack;
				/* the header and, for small nodes, the slots */
				__builtin_prefetch(c);
				__builtin_prefetch((const char *)c + 64);
				w[k].p = c;
				w[k].state = LB_NODE;
				continue;
			case LB_FB:
				c = t_elem(ht, T_LOAD(*(const tref *)w[k].p));
				if (!c)
					goto done; /* no prefix covers this root slot */
				__builtin_prefetch(c);
				w[k].p = c;
				w[k].state = LB_FBLEAF;
				continue;
			case LB_FBLEAF:
				c = w[k].p;
				fa = leaf_match(TLEAF(c), key, table, 0, -1);
				if (!fa)
					goto slow;
				goto found;
			default:
				c = w[k].p;
				index = get_cindex(key, c);
				if (IS_LEAF(c)) {
					/* exact key, or the kernel's step 2 on this leaf */
					if (index == 0 ||
					    (!prefix_mismatch(key, c) && T_LOAD8(c->slen) != 0))
						fa = leaf_match(TLEAF(c), key, table, 0, -1);
					if (!fa)
						goto backtrack;
					goto found;
				}
				if (index >> c->bits) {
					/* nothing below c reaches above its index bits */
					if (c != root && T_LOAD8(c->slen) <= c->pos)
						goto backtrack;
					goto slow;
				}
				if (c != root && T_LOAD8(c->slen) > c->pos) {
					w[k].deep++;
					w[k].dn = TNODE(c);
					w[k].dci = (unsigned long)index;
				}
				w[k].p = &TNODE(c)->child[(unsigned long)index];
				if ((uintptr_t)w[k].p - ((uintptr_t)c & ~(uintptr_t)63) < 128) {
					/* prefetched with the header: go on now */
					c = t_elem(ht, T_LOAD(*(const tref *)w[k].p));
					if (!c)
						goto backtrack;
					__builtin_prefetch(c);
					__builtin_prefetch((const char *)c + 64);
					w[k].p = c;
					continue;
				}
				w[k].state = LB_SLOT;
				__builtin_prefetch(w[k].p);
				continue;
			}
backtrack:
			/* The kernel would backtrack: through the nodes below the
			 * root worth it (one is done here, more by the scalar
			 * path), then at the root, whose fallback answers in two
			 * prefetched steps. */
			if (w[k].deep == 1 && F) {
				const struct tleaf *l = NULL;
				fa = backtrack_node(ht, w[k].dn, w[k].dci, key, table, &l);
				if (fa) {
					c = &l->kv;
					goto found;
				}
				w[k].deep = 0;
			}
			if (!w[k].deep && F) {
				w[k].p = &F->slot[get_index(key, root)];
				w[k].state = LB_FB;
				__builtin_prefetch(w[k].p);
				continue;
			}
slow:
			{
				const struct tleaf *l = NULL;
				fa = trie_lookup_slow(ht, root, F, key, table, 0, -1, &l);
				if (!fa)
					goto done;
				c = &l->kv;
			}
found:
			res[i].leaf = (const struct fib_leaf *)c;
			res[i].alias = (const struct fib_alias *)fa;
			goto refill;
done:
			res[i].leaf = NULL;
			res[i].alias = NULL;
refill:
			if (next < n) {
				LB_START(w[k], next);
				next++;
			} else {
				w[k] = w[--nw];
				k--; /* the moved entry takes this place */
			}
		}
	}
#undef LB_START
}

/*
 * Exact match: the nth alias (0: the first, the one lookups answer with)
 * of key/(KEYBITS - slen) in table with tos and priority. The leaf of a
 * key is where find_leaf stops; its aliases are immutable once published.
 * Call with rcu_read_lock held.
 */
struct fib_result
TN(find)(const struct TRIE_PREFIX *t, tkey key, unsigned slen, uint32_t table, uint8_t tos,
	 uint32_t priority, unsigned nth)
{
	struct fib_result res = { NULL, NULL };
	const struct tkv *n = T_LOAD(t->root);

	while (n && !IS_LEAF(n)) {
		tkey index = get_cindex(key, n);

		if (index >> n->bits)
			return res;
		n = t_child(t->ht, TNODE(n), (unsigned long)index);
	}
	if (!n || n->key != key)
		return res;
	for (unsigned i = 0; i < n->n; i++) {
		const struct fib_alias *fa = &TLEAF(n)->fa[i];

		if (fa->slen == slen && fa->table == table && fa->tos == tos &&
		    fa_info(t->ht, fa)->priority == priority && nth-- == 0) {
			res.leaf = (const struct fib_leaf *)n;
			res.alias = (const struct fib_alias *)fa;
			break;
		}
	}
	return res;
}

/*
 * The nth alias (0: the first) of key/(KEYBITS - slen) in table that a
 * lookup with tos may answer with (route tos 0 or tos), in lookup order:
 * the resolution's way past a route whose paths are all dead, as the
 * kernel's fib_table_lookup goes on to the next alias, then backtracks.
 * Call with rcu_read_lock held.
 */
struct fib_result
TN(find_nth)(const struct TRIE_PREFIX *t, tkey key, unsigned slen, uint32_t table, uint8_t tos,
	     unsigned nth)
{
	struct fib_result res = { NULL, NULL };
	const struct tkv *n = T_LOAD(t->root);

	while (n && !IS_LEAF(n)) {
		tkey index = get_cindex(key, n);

		if (index >> n->bits)
			return res;
		n = t_child(t->ht, TNODE(n), (unsigned long)index);
	}
	if (!n || n->key != key)
		return res;
	for (unsigned i = 0; i < n->n; i++) {
		const struct fib_alias *fa = &TLEAF(n)->fa[i];

		if (fa->slen == slen && fa->table == table && (!fa->tos || fa->tos == tos) &&
		    nth-- == 0) {
			res.leaf = (const struct fib_leaf *)n;
			res.alias = (const struct fib_alias *)fa;
			break;
		}
	}
	return res;
}

void
TN(leaf_key)(const struct fib_leaf *l, union fib_addr *a)
{
	tkey k = ((const struct tleaf *)l)->kv.key;

	memset(a, 0, sizeof(*a));
#if TRIE_KEYBITS == 32
	a->v4.s_addr = htonl(k);
#else
	for (int i = 15; i >= 0; i--) {
		a->b[i] = (uint8_t)k;
		k >>= 8;
	}
#endif
}

/* ----------------------------------------------------------- allocation */

/* A wide node's two count words, after its children (node_size). */
static inline uint32_t *
tn_counts(const struct tnode *tn)
{
	return (uint32_t *)&tn->child[child_length(&tn->kv)];
}

/* Children that are NULL, and that are full (tnode_full). Context: writer. */
static inline unsigned long
tn_empty(const struct tnode *tn)
{
	return tn->kv.bits > TN_NARROW_MAX ? tn_counts(tn)[0] : tn->empty;
}

static inline unsigned long
tn_full(const struct tnode *tn)
{
	return tn->kv.bits > TN_NARROW_MAX ? tn_counts(tn)[1] : tn->full;
}

static inline void
tn_counts_set(struct tnode *tn, unsigned long empty, unsigned long full)
{
	if (tn->kv.bits > TN_NARROW_MAX) {
		tn_counts(tn)[0] = (uint32_t)empty;
		tn_counts(tn)[1] = (uint32_t)full;
	} else {
		tn->empty = (uint16_t)empty;
		tn->full = (uint16_t)full;
	}
}

static struct tnode *
tnode_new(struct TRIE_PREFIX *t, tkey key, unsigned pos, unsigned bits)
{
	struct tnode *tn = pool_alloc(t->ctx->pool, node_size(bits));
	unsigned shift = pos + bits;

	if (!tn)
		return NULL;
	if (!pool_handle(t->ctx->pool, tn, node_size(bits))) {
		/* no handle to store in its parent (pools beyond 4 GiB) */
		pool_free(t->ctx->pool, tn, node_size(bits));
		return NULL;
	}
	memset(tn, 0, node_size(bits));
	tn->kv.key = shift < KEYBITS ? (key >> shift) << shift : 0;
	tn->kv.pos = (uint8_t)pos;
	tn->kv.bits = (uint8_t)bits;
	tn->kv.slen = (uint8_t)pos;
	tn_counts_set(tn, 1ul << bits, 0);
	return tn;
}

/* Free an element that was never published. */
static void
elem_free_now(struct TRIE_PREFIX *t, struct tkv *n)
{
	pool_free(t->ctx->pool, n, elem_size(n));
}

/* Free an element readers may still see. */
static void
elem_retire(struct TRIE_PREFIX *t, struct tkv *n)
{
	reclaim_retire(t->ctx->rc, n, elem_size(n));
}

static struct tleaf *
leaf_new(struct TRIE_PREFIX *t, tkey key, unsigned n)
{
	struct tleaf *l = pool_alloc(t->ctx->pool, leaf_size(n));

	if (!l)
		return NULL;
	if (!pool_handle(t->ctx->pool, l, leaf_size(n))) {
		pool_free(t->ctx->pool, l, leaf_size(n));
		return NULL;
	}
	l->kv.key = key;
	l->kv.pos = 0;
	l->kv.bits = 0;
	l->kv.n = (uint8_t)n;
	l->kv.slen = 0;
	return l;
}

/* ------------------------------------------------------ child handling */

static inline bool
tnode_full(const struct tnode *tn, const struct tkv *n)
{
	return n && !IS_LEAF(n) && n->pos + n->bits == tn->kv.pos;
}

/* n's tref (0 for NULL); every element has one (tnode_new, leaf_new). */
static inline tref
t_ref(const struct TRIE_PREFIX *t, const struct tkv *n)
{
	return n ? pool_handle(t->ctx->pool, n, elem_size(n)) : 0;
}

/* Child i of tn, for the writer. */
static inline struct tkv *
child_at(const struct TRIE_PREFIX *t, const struct tnode *tn, unsigned long i)
{
	return t_elem(t->ht, tn->child[i]);
}

static void
put_child(struct TRIE_PREFIX *t, struct tnode *tn, unsigned long i, struct tkv *n)
{
	struct tkv *chi = child_at(t, tn, i);
	unsigned long empty = tn_empty(tn), full = tn_full(tn);

	empty += (!n && chi) - (n && !chi);
	full += tnode_full(tn, n) - tnode_full(tn, chi);
	tn_counts_set(tn, empty, full);
	if (n && tn->kv.slen < n->slen)
		T_STORE8(tn->kv.slen, n->slen);
	T_STORE(tn->child[i], t_ref(t, n));
}

static void
put_child_root(struct TRIE_PREFIX *t, struct tnode *tp, tkey key, struct tkv *n)
{
	if (tp)
		put_child(t, tp, get_index(key, &tp->kv), n);
	else
		T_STORE(t->root, n);
}

static unsigned
update_suffix(const struct TRIE_PREFIX *t, struct tnode *tn)
{
	unsigned slen = tn->kv.pos;
	unsigned slen_max = tn->kv.pos + tn->kv.bits - 1;
	unsigned long stride = 2, len = child_length(&tn->kv);

	if (tn->kv.slen < slen_max)
		slen_max = tn->kv.slen;
	/* Child i can hold a suffix of pos + k only if its low k index bits
	 * are zero: skip the indices that cannot beat what we have. */
	for (unsigned long i = 0; i < len; i += stride) {
		struct tkv *n = child_at(t, tn, i);
		if (!n || n->slen <= slen)
			continue;
		stride <<= (n->slen - slen) < 63 ? (n->slen - slen) : 63;
		slen = n->slen;
		i &= ~(stride - 1);
		if (slen >= slen_max || stride >= len)
			break;
	}
	T_STORE8(tn->kv.slen, (uint8_t)slen);
	return slen;
}

static void
node_push_suffix(struct tnode **path, int depth, unsigned slen)
{
	for (int d = depth - 1; d >= 0 && path[d]->kv.slen < slen; d--)
		T_STORE8(path[d]->kv.slen, (uint8_t)slen);
}

static void
node_pull_suffix(const struct TRIE_PREFIX *t, struct tnode **path, int depth, unsigned slen)
{
	for (int d = depth - 1; d >= 0; d--) {
		struct tnode *tn = path[d];
		unsigned node_slen = tn->kv.slen;

		if (node_slen <= tn->kv.pos || node_slen <= slen)
			break;
		slen = update_suffix(t, tn);
		if (node_slen == slen)
			break;
	}
}

/* --------------------------------------------------------------- resize */

static bool
should_inflate(const struct TRIE_PREFIX *t, const struct tnode *tp, const struct tnode *tn)
{
	unsigned long used = child_length(&tn->kv);
	unsigned long threshold = used;

	threshold *= tp ? t->ctx->params.inflate_threshold : t->ctx->params.inflate_threshold_root;
	used -= tn_empty(tn);
	used += tn_full(tn);
	return used > 1 && tn->kv.pos && tn->kv.bits < MAX_BITS && 50 * used >= threshold;
}

static bool
should_halve(const struct TRIE_PREFIX *t, const struct tnode *tp, const struct tnode *tn)
{
	unsigned long used = child_length(&tn->kv);
	unsigned long threshold = used;

	threshold *= tp ? t->ctx->params.halve_threshold : t->ctx->params.halve_threshold_root;
	used -= tn_empty(tn);
	return used > 1 && tn->kv.bits > 1 && 100 * used < threshold;
}

static bool
should_collapse(const struct tnode *tn)
{
	return child_length(&tn->kv) - tn_empty(tn) < 2;
}

static void resize(struct TRIE_PREFIX *t, struct tnode *tp, struct tnode *tn);

/* Publish tn in place of old, retire old and the nodes split out of it,
 * then resize tn's full children (kernel: replace()). */
static void
replace(struct TRIE_PREFIX *t, struct tnode *tp, struct tnode *old, struct tnode *tn,
	struct tnode **dead, size_t ndead)
{
	put_child_root(t, tp, tn->kv.key, &tn->kv);
	elem_retire(t, &old->kv);
	for (size_t i = 0; i < ndead; i++)
		elem_retire(t, &dead[i]->kv);
	for (unsigned long i = child_length(&tn->kv); i;) {
		struct tkv *inode = child_at(t, tn, --i);
		if (tnode_full(tn, inode))
			resize(t, tn, TNODE(inode));
	}
}

static struct tnode *
inflate(struct TRIE_PREFIX *t, struct tnode *tp, struct tnode *old)
{
	unsigned long len = child_length(&old->kv);
	struct tnode **fresh = NULL, **dead = NULL, *tn;
	size_t nfresh = 0, ndead = 0;
	tkey m;

	tn = tnode_new(t, old->kv.key, old->kv.pos - 1u, old->kv.bits + 1u);
	if (!tn)
		return NULL;
	if (tn_full(old)) {
		fresh = malloc(2 * tn_full(old) * sizeof(*fresh));
		dead = malloc(tn_full(old) * sizeof(*dead));
		if (!fresh || !dead)
			goto nomem;
	}
	m = (tkey)1 << tn->kv.pos;
	for (unsigned long i = len; i;) {
		struct tkv *inode = child_at(t, old, --i);
		struct tnode *node0, *node1, *in;
		unsigned long half;

		if (!inode)
			continue;
		if (!tnode_full(old, inode)) {
			put_child(t, tn, get_index(inode->key, &tn->kv), inode);
			continue;
		}
		in = TNODE(inode);
		dead[ndead++] = in;
		if (in->kv.bits == 1) {
			put_child(t, tn, 2 * i + 1, child_at(t, in, 1));
			put_child(t, tn, 2 * i, child_at(t, in, 0));
			continue;
		}
		node1 = tnode_new(t, in->kv.key | m, in->kv.pos, in->kv.bits - 1u);
		if (!node1)
			goto nomem;
		fresh[nfresh++] = node1;
		node0 = tnode_new(t, in->kv.key, in->kv.pos, in->kv.bits - 1u);
		if (!node0)
			goto nomem;
		fresh[nfresh++] = node0;
		half = child_length(&in->kv) / 2;
		for (unsigned long j = 0; j < half; j++) {
			put_child(t, node0, j, child_at(t, in, j));
			put_child(t, node1, j, child_at(t, in, j + half));
		}
		put_child(t, tn, 2 * i + 1, &node1->kv);
		put_child(t, tn, 2 * i, &node0->kv);
	}
	free(fresh);
	t->inflates++;
	replace(t, tp, old, tn, dead, ndead);
	free(dead);
	return tn;
nomem:
	for (size_t i = 0; i < nfresh; i++)
		elem_free_now(t, &fresh[i]->kv);
	elem_free_now(t, &tn->kv);
	free(fresh);
	free(dead);
	return NULL;
}

static struct tnode *
halve(struct TRIE_PREFIX *t, struct tnode *tp, struct tnode *old)
{
	unsigned long len = child_length(&old->kv);
	struct tnode **fresh, *tn;
	size_t nfresh = 0;

	tn = tnode_new(t, old->kv.key, old->kv.pos + 1u, old->kv.bits - 1u);
	if (!tn)
		return NULL;
	fresh = malloc(len / 2 * sizeof(*fresh));
	if (!fresh)
		goto nomem;
	for (unsigned long i = len; i;) {
		struct tkv *node1 = child_at(t, old, --i);
		struct tkv *node0 = child_at(t, old, --i);
		struct tnode *inode;

		if (!node1 || !node0) {
			put_child(t, tn, i / 2, node1 ? node1 : node0);
			continue;
		}
		inode = tnode_new(t, node0->key, old->kv.pos, 1);
		if (!inode)
			goto nomem;
		fresh[nfresh++] = inode;
		put_child(t, inode, 1, node1);
		put_child(t, inode, 0, node0);
		put_child(t, tn, i / 2, &inode->kv);
	}
	free(fresh);
	t->halves++;
	replace(t, tp, old, tn, NULL, 0);
	return tn;
nomem:
	for (size_t i = 0; i < nfresh; i++)
		elem_free_now(t, &fresh[i]->kv);
	elem_free_now(t, &tn->kv);
	free(fresh);
	return NULL;
}

static void
collapse(struct TRIE_PREFIX *t, struct tnode *tp, struct tnode *old)
{
	struct tkv *n = NULL;

	for (unsigned long i = child_length(&old->kv); !n && i;)
		n = child_at(t, old, --i);
	put_child_root(t, tp, old->kv.key, n);
	elem_retire(t, &old->kv);
	t->collapses++;
}

static void
resize(struct TRIE_PREFIX *t, struct tnode *tp, struct tnode *tn)
{
	int max_work = MAX_WORK;

	t->resizes++;
	while (should_inflate(t, tp, tn) && max_work && t->budget > 0) {
		t->budget--;
		struct tnode *nn = inflate(t, tp, tn);
		if (!nn)
			break;
		max_work--;
		tn = nn;
	}
	if (max_work != MAX_WORK) {
		/* Splitting full children can leave halves empty: unlike the
		 * kernel, collapse now rather than keep a one-child node. */
		if (should_collapse(tn))
			collapse(t, tp, tn);
		return;
	}
	while (should_halve(t, tp, tn) && max_work && t->budget > 0) {
		t->budget--;
		struct tnode *nn = halve(t, tp, tn);
		if (!nn)
			break;
		max_work--;
		tn = nn;
	}
	if (should_collapse(tn)) {
		collapse(t, tp, tn);
		return;
	}
	if (max_work != MAX_WORK)
		return;
	/* Push the suffix length to the parent. Not for the root: it has no
	 * parent, and a scan of its 2^18 slots on every update was most of
	 * the writer's time. Its slen stays an upper bound, as lookups need. */
	if (tp && tn->kv.slen > tn->kv.pos) {
		unsigned slen = update_suffix(t, tn);
		if (slen > tp->kv.slen)
			T_STORE8(tp->kv.slen, (uint8_t)slen);
	}
}

/* Resize from the deepest node of the path up to the root. Resizing a node
 * only rewrites a slot of its parent, so the path above stays valid. */
static void
rebalance(struct TRIE_PREFIX *t, struct tnode **path, int depth)
{
	for (int d = depth - 1; d >= 0; d--)
		resize(t, d ? path[d - 1] : NULL, path[d]);
}

/* -------------------------------------------------------- root fallbacks */

static size_t
rfb_size(unsigned long len)
{
	return sizeof(struct rootfb) + len * sizeof(tref);
}

static int
rfb_collect(const uintptr_t *ht, const struct tkv *n, unsigned minslen, struct tleaf ***v,
	    size_t *nv, size_t *cap)
{
	if (!n || n->slen < minslen)
		return 0;
	if (IS_LEAF(n)) {
		if (*nv == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			struct tleaf **nvv = realloc(*v, nc * sizeof(**v));
			if (!nvv)
				return -ENOMEM;
			*v = nvv;
			*cap = nc;
		}
		(*v)[(*nv)++] = TLEAF(n);
		return 0;
	}
	for (unsigned long i = 0; i < child_length(n); i++)
		if (rfb_collect(ht, t_elem(ht, TNODE(n)->child[i]), minslen, v, nv, cap))
			return -ENOMEM;
	return 0;
}

static void
rfb_retire(struct TRIE_PREFIX *t, struct rootfb *F)
{
	if (F)
		reclaim_retire(t->ctx->rc, F, rfb_size(F->len));
}

/* Slots of root covered by a leaf whose shortest prefix has suffix slen. */
static void
rfb_range(const struct tkv *root, tkey key, unsigned slen, unsigned long *lo, unsigned long *cnt)
{
	if (slen >= (unsigned)root->pos + root->bits) {
		*lo = 0;
		*cnt = child_length(root);
	} else {
		*cnt = 1ul << (slen - root->pos);
		*lo = get_index(key, root) & ~(*cnt - 1);
	}
}

/* Build the fallbacks for the current root and publish them. */
static void
rfb_rebuild(struct TRIE_PREFIX *t)
{
	struct tkv *root = t->root;
	struct rootfb *old = t->rfb, *F = NULL;
	struct tleaf **v = NULL;
	size_t nv = 0, cap = 0, cnt[KEYBITS + 2] = { 0 }, off[KEYBITS + 2];
	struct tleaf **sorted;

	if (root && !IS_LEAF(root) && (F = pool_alloc(t->ctx->pool, rfb_size(child_length(root))))) {
		F->node = root;
		F->len = child_length(root);
		memset(F->slot, 0, F->len * sizeof(F->slot[0]));
		int err = rfb_collect(t->ht, root, root->pos, &v, &nv, &cap);
		/* shortest prefixes first, so longer ones overwrite them */
		for (size_t i = 0; i < nv; i++)
			cnt[v[i]->kv.slen]++;
		off[KEYBITS] = 0;
		for (int sl = KEYBITS; sl > 0; sl--)
			off[sl - 1] = off[sl] + cnt[sl];
		sorted = malloc((nv ? nv : 1) * sizeof(*sorted));
		if (!sorted || err) {
			/* cannot build: no fallbacks, lookups strip bits */
			pool_free(t->ctx->pool, F, rfb_size(F->len));
			F = NULL;
		} else {
			for (size_t i = 0; i < nv; i++)
				sorted[off[v[i]->kv.slen]++] = v[i];
			for (size_t i = 0; i < nv; i++) {
				unsigned long lo, c;
				rfb_range(root, sorted[i]->kv.key, sorted[i]->kv.slen, &lo, &c);
				for (unsigned long j = 0; j < c; j++)
					F->slot[lo + j] = t_ref(t, &sorted[i]->kv);
			}
		}
		free(sorted);
		free(v);
	}
	T_STORE(t->rfb, F);
	rfb_retire(t, old);
}

/*
 * A prefix with suffix slen changed (added, removed, its leaf replaced):
 * recompute the slots it covers, by lookups restricted to short prefixes,
 * or rebuild when that would be more work. Context: writer, after the
 * trie change is published.
 */
static void
rfb_patch(struct TRIE_PREFIX *t, tkey key, unsigned slen)
{
	struct rootfb *F = t->rfb;
	const struct tkv *root = t->root;
	unsigned long lo, c;

	if (!F || F->node != root) {
		rfb_rebuild(t);
		return;
	}
	if (slen < root->pos)
		return;
	rfb_range(root, key, slen, &lo, &c);
	if (c > 4096) {
		rfb_rebuild(t);
		return;
	}
	for (unsigned long i = lo; i < lo + c; i++) {
		tkey a = root->key | ((tkey)i << root->pos);
		const struct tleaf *l = NULL;
		trie_lookup_slow(t->ht, root, NULL, a, 0, 0, root->pos, &l);
		T_STORE(F->slot[i], l ? t_ref(t, &l->kv) : 0);
	}
}

/* After every update: fallbacks follow a new root, or patch the range. */
static void
rfb_after(struct TRIE_PREFIX *t, tkey key, int slen)
{
	struct rootfb *F = t->rfb;

	if (!t->root || IS_LEAF(t->root)) {
		if (F)
			rfb_rebuild(t);
	} else if (!F || F->node != t->root) {
		rfb_rebuild(t);
	} else if (slen >= 0) {
		rfb_patch(t, key, (unsigned)slen);
	}
}

/* ---------------------------------------------------------------- update */

/* Exact leaf for key, recording the internal nodes on the way. */
static struct tleaf *
find_leaf(const struct TRIE_PREFIX *t, tkey key, struct tnode **path, int *depth)
{
	struct tkv *n = t->root;

	*depth = 0;
	while (n) {
		tkey index = get_cindex(key, n);
		if (index >> n->bits)
			return NULL;
		if (IS_LEAF(n))
			return TLEAF(n);
		path[(*depth)++] = TNODE(n);
		n = child_at(t, TNODE(n), (unsigned long)index);
	}
	return NULL;
}

/* ------------------------------------------------- route references */

/*
 * A route reference names alias k of a leaf in 32 bits (fib.h,
 * fib_lookup4_ref_batch_rcu), as the compiled tables' answer words do:
 *
 *   k < 7    leaf handle << 3 | k          (an answer word is one as is)
 *   k >= 7   (leaf handle + k) << 3 | 7    (the handle of the 8-byte place
 *            k places into the leaf, inside it since a leaf is at least
 *            8 bytes a route; the leaf is the pool object that holds it,
 *            pool_handle_obj, and k the difference of the two handles)
 *
 * 0 is no route (no handle is 0); FIB_REF_UNNAMED a route whose mapping
 * has no handle id (pools beyond 4 GiB). Valid while the leaf is, so
 * until the reader's fib_read_unlock.
 */
#define REF_ESC 7u
_Static_assert(sizeof(struct fib_alias) >= 8, "place k of a leaf of more than k aliases lies inside it");

static inline uint32_t
TN(ref_of)(const struct TRIE_PREFIX *t, struct fib_result r)
{
	const struct tleaf *l = (const struct tleaf *)r.leaf;
	uint32_t h, k;

	if (!r.alias)
		return FIB_REF_NONE;
	k = (uint32_t)((const struct fib_alias *)r.alias - l->fa);
	h = pool_handle(t->ctx->pool, l, leaf_size(l->kv.n));
	if (!h)
		return FIB_REF_UNNAMED;
	if (k < REF_ESC)
		return h << 3 | k;
	if ((h & ((1u << POOL_HANDLE_OFF_BITS) - 1)) + k >= 1u << POOL_HANDLE_OFF_BITS)
		return FIB_REF_UNNAMED; /* (a leaf of a large mapping above 2 MiB: none) */
	return (h + k) << 3 | REF_ESC;
}

int
TN(ref_get)(const struct TRIE_PREFIX *t, uint32_t ref, struct fib_result *res)
{
	const uintptr_t *lt = pool_handle_table(t->ctx->pool);
	const struct tleaf *l;

	if (ref == FIB_REF_NONE || ref == FIB_REF_UNNAMED) {
		res->leaf = NULL;
		res->alias = NULL;
		return -ENOENT;
	}
	if ((ref & 7) < REF_ESC) {
		l = pool_handle_ptr3(lt, ref);
		res->alias = (const struct fib_alias *)&l->fa[ref & 7];
	} else {
		uint32_t lh = pool_handle_obj(t->ctx->pool, ref >> 3);

		l = pool_handle_ptr(lt, lh);
		res->alias = (const struct fib_alias *)&l->fa[(ref >> 3) - lh];
	}
	res->leaf = (const struct fib_leaf *)l;
	return 0;
}

/* ------------------------------------------- lookups, compiled table first */

/*
 * The compiled table's lookups want popcnt, which the x86-64 baseline
 * lacks: a second copy of each entry point is built for CPUs with it and
 * chosen at load time.
 */
/* (Not under the sanitizers: their runtimes start after ifunc resolvers
 * run.) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(FIB_NO_CLONES) && \
	!defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define A_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define A_CLONES
#endif

/* One lookup, inlined into each entry point and each of its copies (so
 * that each gets its CPU's instructions): trie4.c's fib_lookup4_rcu is
 * one of them. */
static inline __attribute__((always_inline)) struct fib_result
TN(lookup_in)(const struct TRIE_PREFIX *t, tkey key, uint32_t table, uint8_t tos)
{
	const struct accel *A = tos ? NULL : as_for(t, table);
	struct fib_result res;
	aword v;

	if (!A)
		return TN(lookup_trie)(t, key, table, tos);
	v = a_lookup(A, key);
	if (v == A_ASK)
		return TN(lookup_trie)(t, key, table, 0);
	a_result(A, v, &res);
	return res;
}

A_CLONES struct fib_result
TN(lookup)(const struct TRIE_PREFIX *t, tkey key, uint32_t table, uint8_t tos)
{
	return TN(lookup_in)(t, key, table, tos);
}

A_CLONES void
TN(lookup_batch)(const struct TRIE_PREFIX *t, const tkey *keys, uint32_t table,
		 struct fib_result *res, size_t n)
{
	const struct accel *A = as_for(t, table);

	if (A)
		a_lookup_batch(t, A, keys, table, res, NULL, n);
	else
		TN(lookup_batch_trie)(t, keys, table, res, n);
}

A_CLONES void
TN(lookup_ref_batch)(const struct TRIE_PREFIX *t, const tkey *keys, uint32_t table,
		     uint32_t *ref, size_t n)
{
	const struct accel *A = as_for(t, table);
	enum { CHUNK = 64 };
	struct fib_result res[CHUNK];

	if (A) {
		a_lookup_batch(t, A, keys, table, NULL, ref, n);
		return;
	}
	for (size_t base = 0; base < n; base += CHUNK) {
		size_t m = n - base < CHUNK ? n - base : CHUNK;

		TN(lookup_batch_trie)(t, keys + base, table, res, m);
		for (size_t i = 0; i < m; i++)
			ref[base + i] = TN(ref_of)(t, res[i]);
	}
}

int
TN(accel_retune)(struct TRIE_PREFIX *t, bool fresh, bool defer)
{
	return as_retune(t, fresh, defer);
}

bool
TN(accel_pending)(const struct TRIE_PREFIX *t)
{
	return t->apending;
}

/* Kernel order: slen ascending, table descending, tos descending,
 * priority ascending. */
static int
alias_cmp(const uintptr_t *ht, const struct fib_alias *a, unsigned slen, uint32_t table, uint8_t tos,
	  uint32_t prio)
{
	uint32_t aprio;

	if (a->slen != slen)
		return a->slen < slen ? -1 : 1;
	if (a->table != table)
		return a->table > table ? -1 : 1;
	if (a->tos != tos)
		return a->tos > tos ? -1 : 1;
	aprio = fa_info(ht, a)->priority;
	if (aprio != prio)
		return aprio < prio ? -1 : 1;
	return 0;
}

static tkey
route_key(const struct fib_route *r)
{
#if TRIE_KEYBITS == 32
	return ntohl(r->dst.v4.s_addr);
#else
	return trie6_key_from(r->dst.b);
#endif
}

/* Insert a new leaf for a key not in the trie (kernel: fib_insert_node). */
static int
insert_leaf(struct TRIE_PREFIX *t, struct tnode **path, int depth, tkey key, struct tleaf *l)
{
	struct tnode *tp = depth ? path[depth - 1] : NULL;
	struct tkv *n = tp ? child_at(t, tp, get_index(key, &tp->kv)) : t->root;

	if (n) {
		struct tnode *tn = tnode_new(t, key, (unsigned)key_fls(key ^ n->key), 1);
		if (!tn)
			return -ENOMEM;
		put_child(t, tn, get_index(key, &tn->kv) ^ 1, n);
		put_child(t, tn, get_index(key, &tn->kv), &l->kv);
		node_push_suffix(path, depth, tn->kv.slen);
		put_child_root(t, tp, key, &tn->kv);
		path[depth++] = tn;
	} else {
		node_push_suffix(path, depth, l->kv.slen);
		put_child_root(t, tp, key, &l->kv);
	}
	rebalance(t, path, depth);
	return 0;
}

static int TN(add_leaf)(struct TRIE_PREFIX *t, struct tnode **path, int depth, tkey key,
			const struct fib_alias *pna);
static int TN(add_alias)(struct TRIE_PREFIX *t, struct tnode **path, int depth, struct tleaf *l,
			 const struct fib_alias *pna, const struct fib_route *r, unsigned flags);

int
TN(add)(struct TRIE_PREFIX *t, const struct fib_route *r, unsigned flags)
{
	struct tnode *path[KEYBITS + 2];
	int depth, err;
	tkey key = route_key(r);
	unsigned slen = KEYBITS - r->plen;
	uint32_t fi;
	struct tleaf *l;
	struct fib_alias na;

	fi = info_get(t->ctx->it, r);
	if (!fi)
		return -ENOMEM;
	t->budget = RESIZE_BUDGET;
	na.slen = (uint8_t)slen;
	na.tos = r->tos;
	na.type = r->type;
	na.family = r->family;
	na.table = r->table;
	na.info = fi;

	l = find_leaf(t, key, path, &depth);
	if (!l) {
		err = TN(add_leaf)(t, path, depth, key, &na);
		if (!err) {
			as_revalidate(t, key, slen);
			as_count(t, r->table, 1);
		}
		return err;
	} else {
		unsigned oslen = l->kv.slen > slen ? l->kv.slen : slen;
		size_t before = t->routes;

		as_invalidate(t, key, oslen);
		err = TN(add_alias)(t, path, depth, l, &na, r, flags);
		as_revalidate(t, key, oslen);
		if (!err && t->routes != before)
			as_count(t, r->table, 1); /* not a replacement */
		return err;
	}
}

static int
TN(add_leaf)(struct TRIE_PREFIX *t, struct tnode **path, int depth, tkey key,
	     const struct fib_alias *pna)
{
	struct fib_alias na = *pna;
	uint32_t fi = na.info;
	unsigned slen = na.slen;
	struct tleaf *nl;
	int err;

	{
		nl = leaf_new(t, key, 1);
		if (!nl) {
			info_put(t->ctx->it, fi);
			return -ENOMEM;
		}
		nl->fa[0] = na;
		nl->kv.slen = (uint8_t)slen;
		err = insert_leaf(t, path, depth, key, nl);
		if (err) {
			elem_free_now(t, &nl->kv);
			info_put(t->ctx->it, fi);
			return err;
		}
		T_STORE8(t->routes, t->routes + 1); /* fib_count reads it from any thread */
		rfb_after(t, key, (int)slen);
		return 0;
	}
}

static int
TN(add_alias)(struct TRIE_PREFIX *t, struct tnode **path, int depth, struct tleaf *l,
	      const struct fib_alias *pna, const struct fib_route *r, unsigned flags)
{
	struct fib_alias na = *pna;
	uint32_t fi = na.info;
	unsigned slen = na.slen;
	tkey key = l->kv.key;
	struct tleaf *nl;

	{
		unsigned n = l->kv.n, first, end, at;
		uint32_t old_fi = 0;
		bool replace_one = false;

		for (first = 0;
		     first < n && alias_cmp(t->ht, &l->fa[first], slen, r->table, r->tos, r->priority) < 0;
		     first++)
			;
		for (end = first;
		     end < n && alias_cmp(t->ht, &l->fa[end], slen, r->table, r->tos, r->priority) == 0;
		     end++)
			;
		at = first;
		if (end > first) {
			if (flags & FIB_ADD_REPLACE) {
				replace_one = true;
			} else if (flags & FIB_ADD_EXCL) {
				info_put(t->ctx->it, fi);
				return -EEXIST;
			} else {
				for (unsigned i = first; i < end; i++)
					if (l->fa[i].info == fi && l->fa[i].type == na.type) {
						info_put(t->ctx->it, fi);
						return -EEXIST;
					}
				if (flags & FIB_ADD_APPEND)
					at = end;
			}
		}
		if (!replace_one && n == 255) {
			info_put(t->ctx->it, fi);
			return -ENOSPC;
		}
		nl = leaf_new(t, key, replace_one ? n : n + 1);
		if (!nl) {
			info_put(t->ctx->it, fi);
			return -ENOMEM;
		}
		if (replace_one) {
			memcpy(nl->fa, l->fa, n * sizeof(na));
			old_fi = nl->fa[at].info;
			nl->fa[at] = na;
		} else {
			memcpy(nl->fa, l->fa, at * sizeof(na));
			nl->fa[at] = na;
			memcpy(nl->fa + at + 1, l->fa + at, (n - at) * sizeof(na));
			T_STORE8(t->routes, t->routes + 1); /* fib_count reads it from any thread */
		}
		nl->kv.slen = nl->fa[nl->kv.n - 1].slen;
		/* push first: put_child raises the parent, which would stop it */
		node_push_suffix(path, depth, nl->kv.slen);
		put_child_root(t, depth ? path[depth - 1] : NULL, key, &nl->kv);
		rfb_after(t, key, nl->kv.slen > l->kv.slen ? nl->kv.slen : l->kv.slen);
		elem_retire(t, &l->kv);
		if (old_fi)
			info_put(t->ctx->it, old_fi);
		return 0;
	}
}

int
TN(del)(struct TRIE_PREFIX *t, const struct fib_route *r)
{
	struct tnode *path[KEYBITS + 2];
	int depth;
	tkey key = route_key(r);
	unsigned slen = KEYBITS - r->plen, n, at, oslen;
	struct tleaf *l = find_leaf(t, key, path, &depth);
	struct tnode *tp = depth ? path[depth - 1] : NULL;
	uint32_t fi;

	if (!l)
		return -ENOENT;
	t->budget = RESIZE_BUDGET;
	n = l->kv.n;
	for (at = 0; at < n; at++) {
		const struct fib_alias *fa = &l->fa[at];
		if (fa->slen == slen && fa->table == r->table && fa->tos == r->tos &&
		    (!r->type || fa->type == r->type) && info_match(fa_info(t->ht, fa), r))
			break;
	}
	if (at == n)
		return -ENOENT;
	fi = l->fa[at].info;
	oslen = l->kv.slen;
	as_invalidate(t, key, oslen);
	if (n == 1) {
		put_child_root(t, tp, key, NULL);
		if (tp) {
			if (tp->kv.slen == l->kv.slen)
				node_pull_suffix(t, path, depth, tp->kv.pos);
			rebalance(t, path, depth);
		}
		rfb_after(t, key, l->kv.slen);
		elem_retire(t, &l->kv);
	} else {
		struct tleaf *nl = leaf_new(t, key, n - 1);
		if (!nl) {
			as_revalidate(t, key, oslen);
			return -ENOMEM;
		}
		memcpy(nl->fa, l->fa, at * sizeof(nl->fa[0]));
		memcpy(nl->fa + at, l->fa + at + 1, (n - at - 1) * sizeof(nl->fa[0]));
		nl->kv.slen = nl->fa[n - 2].slen;
		put_child_root(t, tp, key, &nl->kv);
		if (nl->kv.slen < l->kv.slen)
			node_pull_suffix(t, path, depth, nl->kv.slen);
		rfb_after(t, key, l->kv.slen);
		elem_retire(t, &l->kv);
	}
	info_put(t->ctx->it, fi);
	T_STORE8(t->routes, t->routes - 1);
	as_revalidate(t, key, oslen);
	as_count(t, r->table, -1);
	return 0;
}

/* ------------------------------------------------------------ bulk load */

struct load_ent {
	tkey key;
	uint32_t table;
	uint32_t prio;
	uint32_t idx; /* input order: stable, first wins */
	uint8_t slen;
	uint8_t tos;
	const struct fib_alias *old; /* a route already in the trie, or NULL */
};

static int
load_cmp(const void *pa, const void *pb)
{
	const struct load_ent *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->slen != b->slen)
		return a->slen < b->slen ? -1 : 1;
	if (a->table != b->table)
		return a->table > b->table ? -1 : 1;
	if (a->tos != b->tos)
		return a->tos > b->tos ? -1 : 1;
	if (a->prio != b->prio)
		return a->prio < b->prio ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Number of non-empty and full children of a candidate node over sorted
 * leaves [lo, hi) with the given pos and bits. */
static void
load_count(struct tleaf **L, size_t lo, size_t hi, unsigned pos, unsigned bits,
	   unsigned long *nonempty, unsigned long *full)
{
	size_t i = lo;

	*nonempty = *full = 0;
	while (i < hi) {
		unsigned long idx = (unsigned long)(L[i]->kv.key >> pos) & ((1ul << bits) - 1);
		size_t j = i + 1;
		while (j < hi && ((unsigned long)(L[j]->kv.key >> pos) & ((1ul << bits) - 1)) == idx)
			j++;
		(*nonempty)++;
		if (j - i > 1 && pos > 0 && key_fls(L[i]->kv.key ^ L[j - 1]->kv.key) == (int)pos - 1)
			(*full)++;
		i = j;
	}
}

/*
 * The same counts for every width at once, over a node's leaves [lo, hi)
 * whose keys first differ at bit top: nonempty[pos] and full[pos] for
 * each pos <= top, in one pass instead of one per width tried (the root
 * tries 19 widths over every leaf). Neighbours L[i-1], L[i] fall in
 * different children at pos iff their highest differing bit d >= pos,
 * and a child of two or more leaves is full iff two of its neighbours
 * first differ at pos - 1: seen's bit v tells whether such a pair (d = v)
 * was met since the last pair with d > v.
 */
static void
load_count_all(struct tleaf **L, size_t lo, size_t hi, unsigned top, uint32_t *nonempty,
	       uint32_t *full)
{
	uint32_t h[KEYBITS] = { 0 }, f[KEYBITS] = { 0 }, sum = 1;
	tkey prev = L[lo]->kv.key, seen = 0;

	for (size_t i = lo + 1; i < hi; i++) {
		tkey k = L[i]->kv.key;
		unsigned d = (unsigned)key_fls(prev ^ k);

		prev = k;
		h[d]++;
		seen &= ~(((tkey)1 << d) - 1);
		if (!((seen >> d) & 1)) {
			f[d]++;
			seen |= (tkey)1 << d;
		}
	}
	for (int pos = (int)top; pos >= 0; pos--) {
		sum += h[pos];
		nonempty[pos] = sum;
		full[pos] = pos > 0 ? f[pos - 1] : 0;
	}
}

/* Below this many leaves a node tries its few widths one pass each. */
#define LOAD_COUNT_ALL 256

static struct tkv *
load_build(struct TRIE_PREFIX *t, struct tleaf **L, size_t lo, size_t hi, bool is_root, int *err)
{
	uint32_t nonempty_at[KEYBITS], full_at[KEYBITS];
	unsigned top, pos, bits = 1;
	unsigned inflate = is_root ? t->ctx->params.inflate_threshold_root
				   : t->ctx->params.inflate_threshold;
	struct tnode *tn;
	size_t i;

	if (hi - lo == 1)
		return &L[lo]->kv;
	top = (unsigned)key_fls(L[lo]->kv.key ^ L[hi - 1]->kv.key);
	if (hi - lo >= LOAD_COUNT_ALL)
		load_count_all(L, lo, hi, top, nonempty_at, full_at);
	/* grow the node while the kernel's should_inflate would say so */
	for (;;) {
		unsigned long nonempty, full, used;
		pos = top + 1 - bits;
		if (pos == 0 || bits >= MAX_BITS)
			break;
		if (hi - lo >= LOAD_COUNT_ALL) {
			nonempty = nonempty_at[pos];
			full = full_at[pos];
		} else {
			load_count(L, lo, hi, pos, bits, &nonempty, &full);
		}
		used = nonempty + full;
		if (!(used > 1 && 50 * used >= (unsigned long)inflate << bits))
			break;
		bits++;
	}
	pos = top + 1 - bits;
	tn = tnode_new(t, L[lo]->kv.key, pos, bits);
	if (!tn) {
		*err = -ENOMEM;
		return NULL;
	}
	for (i = lo; i < hi;) {
		unsigned long idx = get_index(L[i]->kv.key, &tn->kv);
		size_t j = i + 1;
		struct tkv *c;
		while (j < hi && get_index(L[j]->kv.key, &tn->kv) == idx)
			j++;
		c = load_build(t, L, i, j, false, err);
		if (c)
			put_child(t, tn, idx, c);
		if (*err)
			return &tn->kv; /* caller frees the partial tree */
		i = j;
	}
	return &tn->kv;
}

/* Free the nodes of an unpublished tree; its leaves are the caller's. */
static void
tree_free_nodes(struct TRIE_PREFIX *t, struct tkv *n)
{
	if (!n || IS_LEAF(n))
		return;
	for (unsigned long i = 0; i < child_length(n); i++)
		tree_free_nodes(t, child_at(t, TNODE(n), i));
	elem_free_now(t, n);
}

static size_t
load_collect(const uintptr_t *ht, const struct tkv *n, struct load_ent *e, size_t k)
{
	if (!n)
		return k;
	if (IS_LEAF(n)) {
		const struct tleaf *l = TLEAF(n);
		for (unsigned a = 0; a < n->n; a++, k++) {
			e[k].key = n->key;
			e[k].slen = l->fa[a].slen;
			e[k].table = l->fa[a].table;
			e[k].tos = l->fa[a].tos;
			e[k].prio = fa_info(ht, &l->fa[a])->priority;
			e[k].idx = (uint32_t)k;
			e[k].old = &l->fa[a];
		}
		return k;
	}
	for (unsigned long i = 0; i < child_length(n); i++)
		k = load_collect(ht, t_elem(ht, TNODE(n)->child[i]), e, k);
	return k;
}

/*
 * Drop a whole tree: every alias's reference, every node and leaf, freed
 * at once when it was never published, else retired for the grace period.
 */
static void
tree_release(struct TRIE_PREFIX *t, struct tkv *n, bool published)
{
	if (!n)
		return;
	if (IS_LEAF(n)) {
		for (unsigned a = 0; a < n->n; a++)
			info_put(t->ctx->it, TLEAF(n)->fa[a].info);
	} else {
		for (unsigned long i = 0; i < child_length(n); i++)
			tree_release(t, child_at(t, TNODE(n), i), published);
	}
	if (published)
		elem_retire(t, n);
	else
		elem_free_now(t, n);
}

/* Fill e[m..m+n) from r and sort e[0..m+n) by key (load_cmp). Tables
 * arrive sorted by address from dumps and files (a prefix's lengths in
 * either order): then only the runs of one key are sorted. */
static void
TN(load_entries)(struct load_ent *e, size_t m, const struct fib_route *r, size_t n)
{
	size_t ne = m + n, i;

	for (i = 0; i < n; i++) {
		struct load_ent *x = &e[m + i];

		x->key = route_key(&r[i]);
		x->slen = (uint8_t)(KEYBITS - r[i].plen);
		x->table = r[i].table;
		x->tos = r[i].tos;
		x->prio = r[i].priority;
		x->idx = (uint32_t)(m + i);
		x->old = NULL;
	}
	for (i = 1; i < ne && e[i - 1].key <= e[i].key; i++)
		;
	if (i < ne) {
		qsort(e, ne, sizeof(*e), load_cmp);
		return;
	}
	for (size_t a = 0, b; a < ne; a = b) {
		for (b = a + 1; b < ne && e[b].key == e[a].key; b++)
			;
		if (b - a > 1)
			qsort(e + a, b - a, sizeof(*e), load_cmp);
	}
}

/* The leaf of the sorted entries e[i..j) of one key: an alias each, the
 * trie's own held again, new ones interned from r (entry idx - m),
 * identical ones once. NULL on ENOMEM, with nothing held. */
static struct tleaf *
TN(load_leaf)(struct TRIE_PREFIX *t, const struct load_ent *e, size_t i, size_t j, size_t m,
	      const struct fib_route *r)
{
	struct fib_alias tmp[255];
	unsigned cnt = 0;
	struct tleaf *l;

	for (size_t k = i; k < j; k++) {
		struct fib_alias a;
		bool dup = cnt == 255;

		if (e[k].old) {
			a = *e[k].old;
			info_hold(t->ctx->it, a.info);
		} else {
			const struct fib_route *rr = &r[e[k].idx - m];

			a.info = info_get(t->ctx->it, rr);
			if (!a.info)
				goto fail;
			a.slen = e[k].slen;
			a.tos = rr->tos;
			a.type = rr->type;
			a.family = rr->family;
			a.table = rr->table;
		}
		for (unsigned d = cnt; d-- > 0 && !dup && tmp[d].slen == a.slen;)
			dup = tmp[d].info == a.info && tmp[d].type == a.type &&
			      tmp[d].table == a.table && tmp[d].tos == a.tos;
		if (dup) {
			info_put(t->ctx->it, a.info);
			continue;
		}
		tmp[cnt++] = a;
	}
	l = leaf_new(t, e[i].key, cnt);
	if (!l)
		goto fail;
	memcpy(l->fa, tmp, cnt * sizeof(tmp[0]));
	l->kv.slen = l->fa[cnt - 1].slen;
	return l;
fail:
	for (unsigned a = 0; a < cnt; a++)
		info_put(t->ctx->it, tmp[a].info);
	return NULL;
}

/*
 * Build, off-line, the trie of the routes already in t plus r[0..n): the
 * routes of one key in kernel order, equal ones in input order (those in
 * the trie first, as appends), identical ones once. Nothing is published:
 * on success *tree and *routes are for load_publish or load_discard, on
 * error nothing is left allocated and t is unchanged. Context: writer.
 */
int
TN(load_prepare)(struct TRIE_PREFIX *t, const struct fib_route *r, size_t n, void **tree,
		 size_t *routes)
{
	size_t m = t->routes, ne = m + n, nl = 0;
	struct load_ent *e;
	struct tleaf **L;
	struct tkv *root;
	int err = 0;

	*tree = NULL;
	*routes = 0;
	if (ne == 0)
		return 0;
	e = pool_scratch_alloc(ne * sizeof(*e));
	L = pool_scratch_alloc(ne * sizeof(*L));
	if (!e || !L) {
		pool_scratch_free(e, ne * sizeof(*e));
		pool_scratch_free(L, ne * sizeof(*L));
		return -ENOMEM;
	}
	if (load_collect(t->ht, t->root, e, 0) != m) {
		pool_scratch_free(e, ne * sizeof(*e));
		pool_scratch_free(L, ne * sizeof(*L));
		return -EUCLEAN;
	}
	TN(load_entries)(e, m, r, n);
	as_load_begin(t);
	for (size_t i = 0, j; i < ne; i = j) {
		for (j = i + 1; j < ne && e[j].key == e[i].key; j++)
			;
		L[nl] = TN(load_leaf)(t, e, i, j, m, r);
		if (!L[nl]) {
			err = -ENOMEM;
			break;
		}
		for (unsigned a = 0; a < L[nl]->kv.n; a++)
			as_load_note(t, L[nl]->fa[a].table);
		*routes += L[nl++]->kv.n;
	}
	root = err ? NULL : load_build(t, L, 0, nl, true, &err);
	if (err) {
		tree_free_nodes(t, root);
		for (size_t i = 0; i < nl; i++) {
			for (unsigned a = 0; a < L[i]->kv.n; a++)
				info_put(t->ctx->it, L[i]->fa[a].info);
			elem_free_now(t, &L[i]->kv);
		}
		*routes = 0;
	} else {
		*tree = root;
	}
	pool_scratch_free(e, ne * sizeof(*e));
	pool_scratch_free(L, ne * sizeof(*L));
	return err;
}

/* Publish a prepared tree with one pointer store; retire the old one. */
void
TN(load_publish)(struct TRIE_PREFIX *t, void *tree, size_t routes)
{
	struct tkv *old = t->root;

	T_STORE(t->root, (struct tkv *)tree);
	T_STORE8(t->routes, routes);
	rfb_rebuild(t);
	as_load_publish(t);
	as_replace(t);
	tree_release(t, old, true);
}

void
TN(load_discard)(struct TRIE_PREFIX *t, void *tree)
{
	tree_release(t, tree, false);
}

/* ------------------------------------------------------- flush and free */

void
TN(flush)(struct TRIE_PREFIX *t)
{
	struct tkv *old = t->root;

	T_STORE(t->root, NULL);
	rfb_rebuild(t);
	as_counts_clear(t);
	as_replace(t);
	tree_release(t, old, true);
	T_STORE8(t->routes, 0);
}

struct TRIE_PREFIX *
TN(new)(struct fib_ctx *ctx)
{
	struct TRIE_PREFIX *t = calloc(1, sizeof(*t));

	if (t) {
		t->ctx = ctx;
		t->ht = pool_handle_table(ctx->pool);
	}
	return t;
}

/* The pools hold the memory: fib_free releases them whole. */
void
TN(free)(struct TRIE_PREFIX *t)
{
	as_free(t);
	free(t);
}

size_t
TN(count)(const struct TRIE_PREFIX *t)
{
	return T_LOAD8(t->routes); /* Context: any (the writer stores atomically) */
}

/* ----------------------------------------------------- walk, stats, check */

static int
walk_rec(const uintptr_t *ht, const struct tkv *n, fib_walk_cb cb, void *arg)
{
	int ret;

	if (!n)
		return 0;
	if (IS_LEAF(n)) {
		const struct tleaf *l = TLEAF(n);
		for (unsigned a = 0; a < n->n; a++) {
			struct fib_result res = { (const struct fib_leaf *)l,
						  (const struct fib_alias *)&l->fa[a] };
			struct fib_match m;
			fib_result_get(&res, &m);
			ret = cb(&m, arg);
			if (ret)
				return ret;
		}
		return 0;
	}
	for (unsigned long i = 0; i < child_length(n); i++) {
		ret = walk_rec(ht, t_child(ht, TNODE(n), i), cb, arg);
		if (ret)
			return ret;
	}
	return 0;
}

int
TN(walk)(const struct TRIE_PREFIX *t, fib_walk_cb cb, void *arg)
{
	return walk_rec(t->ht, T_LOAD(t->root), cb, arg);
}

/*
 * The walk resumed at a key, as the kernel's fib_table_dump resumes a
 * netlink dump (leaf_walk_rcu from cb->args' key, then the routes of that
 * leaf not dumped yet): only leaves with key >= from are visited, and in
 * the leaf of key from its first skip routes are passed over. bounded
 * says n lies on from's path (else everything below n is past from).
 * When cb stops the walk, *at and *idx say where: the leaf's key and the
 * index after the route cb was called for.
 */
static int
walk_from_rec(const uintptr_t *ht, const struct tkv *n, tkey from, unsigned skip, int bounded, fib_walk_cb cb,
	      void *arg, tkey *at, unsigned *idx)
{
	unsigned long first = 0;
	int ret;

	if (!n)
		return 0;
	if (IS_LEAF(n)) {
		const struct tleaf *l = TLEAF(n);
		unsigned a = 0;

		if (bounded && n->key < from)
			return 0;
		if (bounded && n->key == from)
			a = skip;
		for (; a < n->n; a++) {
			struct fib_result res = { (const struct fib_leaf *)l,
						  (const struct fib_alias *)&l->fa[a] };
			struct fib_match m;

			fib_result_get(&res, &m);
			ret = cb(&m, arg);
			if (ret) {
				*at = n->key;
				*idx = a + 1;
				return ret;
			}
		}
		return 0;
	}
	if (bounded) {
		tkey c = get_cindex(from, n);

		if (c >> n->bits) {
			/* from leaves this node in its skipped bits: the whole
			 * node is before or after it */
			if (n->key < from)
				return 0;
			bounded = 0;
		} else {
			first = (unsigned long)c;
		}
	}
	for (unsigned long i = first; i < child_length(n); i++) {
		ret = walk_from_rec(ht, t_child(ht, TNODE(n), i), from, skip, bounded && i == first, cb,
				    arg, at, idx);
		if (ret)
			return ret;
	}
	return 0;
}

int
TN(walk_from)(const struct TRIE_PREFIX *t, tkey *key, unsigned *skip, fib_walk_cb cb, void *arg)
{
	return walk_from_rec(t->ht, T_LOAD(t->root), *key, *skip, 1, cb, arg, key, skip);
}

static void
stats_rec(const uintptr_t *ht, const struct tkv *n, unsigned depth, struct fib_trie_stats *st)
{
	if (IS_LEAF(n)) {
		st->leaves++;
		st->prefixes += n->n;
		st->depth_total += depth;
		if (depth > st->depth_max)
			st->depth_max = depth;
		st->bytes += leaf_size(n->n);
		return;
	}
	st->nodes++;
	st->nodes_by_bits[n->bits <= FIB_STATS_MAX_BITS ? n->bits : FIB_STATS_MAX_BITS]++;
	st->bytes += node_size(n->bits);
	for (unsigned long i = 0; i < child_length(n); i++) {
		const struct tkv *c = t_elem(ht, TNODE(n)->child[i]);
		st->pointers++;
		if (!c)
			st->null_pointers++;
		else
			stats_rec(ht, c, depth + 1, st);
	}
}

void
TN(stats)(const struct TRIE_PREFIX *t, struct fib_trie_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (t->root)
		stats_rec(t->ht, t->root, 0, st);
	if (t->rfb)
		st->bytes += rfb_size(t->rfb->len);
	as_stats(t, st);
	st->resizes = t->resizes;
	st->inflates = t->inflates;
	st->halves = t->halves;
	st->collapses = t->collapses;
}

#define CHECK(cond, ...)                                     \
	do {                                                 \
		if (!(cond)) {                               \
			snprintf(buf, len, __VA_ARGS__);     \
			return -EUCLEAN;                     \
		}                                            \
	} while (0)

/* Returns the true maximum suffix length below n, or -EUCLEAN. */
static int
check_rec(const uintptr_t *ht, const struct tkv *n, const struct tnode *parent, unsigned long pidx, size_t *routes,
	  char *buf, size_t len)
{
	if (parent) {
		unsigned shift = parent->kv.pos + parent->kv.bits;
		CHECK(shift >= KEYBITS || (n->key >> shift) == (parent->kv.key >> shift),
		      "child key outside its parent's prefix");
		CHECK(get_index(n->key, &parent->kv) == pidx, "child in the wrong slot %lu", pidx);
		CHECK(IS_LEAF(n) || n->pos + n->bits <= parent->kv.pos, "child overlaps parent bits");
	}
	if (IS_LEAF(n)) {
		const struct tleaf *l = TLEAF(n);
		CHECK(n->n >= 1, "empty leaf");
		CHECK(n->pos == 0, "leaf with pos %u", n->pos);
		for (unsigned a = 0; a < n->n; a++) {
			const struct fib_alias *fa = &l->fa[a];
			CHECK(fa->slen <= KEYBITS, "alias slen %u", fa->slen);
			CHECK(fa->slen >= KEYBITS || ((n->key >> fa->slen) << fa->slen) == n->key,
			      "leaf key has host bits for /%u", KEYBITS - fa->slen);
			if (a)
				CHECK(alias_cmp(ht, &l->fa[a - 1], fa->slen, fa->table, fa->tos,
						fa_info(ht, fa)->priority) <= 0,
				      "aliases out of order");
		}
		CHECK(n->slen == l->fa[n->n - 1].slen, "leaf slen %u, expected %u", n->slen,
		      l->fa[n->n - 1].slen);
		*routes += n->n;
		return n->slen;
	} else {
		const struct tnode *tn = TNODE(n);
		unsigned long empty = 0, full = 0;
		unsigned shift = n->pos + n->bits, smax = n->pos;
		CHECK(n->bits >= 1 && n->bits <= MAX_BITS, "node bits %u", n->bits);
		CHECK(shift <= KEYBITS, "node pos %u bits %u", n->pos, n->bits);
		CHECK(shift >= KEYBITS || ((n->key >> shift) << shift) == n->key,
		      "node key has bits below pos + bits");
		for (unsigned long i = 0; i < child_length(n); i++) {
			const struct tkv *c = t_elem(ht, tn->child[i]);
			int s;
			if (!c) {
				empty++;
				continue;
			}
			if (tnode_full(tn, c))
				full++;
			s = check_rec(ht, c, tn, i, routes, buf, len);
			if (s < 0)
				return s;
			/* stored, not true, values: push_suffix stops at the first
			 * ancestor whose slen is high enough */
			if (c->slen > smax)
				smax = c->slen;
		}
		CHECK(empty == tn_empty(tn), "empty count %lu, counted %lu", tn_empty(tn), empty);
		CHECK(full == tn_full(tn), "full count %lu, counted %lu", tn_full(tn), full);
		CHECK(child_length(n) - empty >= 2, "node with %lu children", child_length(n) - empty);
		CHECK(n->slen >= smax, "node (pos %u bits %u) slen %u below its children's %u",
		      n->pos, n->bits, n->slen, smax);
		return (int)smax;
	}
}

int
TN(check)(struct TRIE_PREFIX *t, char *buf, size_t len)
{
	size_t routes = 0;
	int s;

	if (!t->root) {
		CHECK(t->routes == 0, "empty trie counts %zu routes", t->routes);
		return as_check(t, buf, len);
	}
	s = check_rec(t->ht, t->root, NULL, 0, &routes, buf, len);
	if (s < 0)
		return s;
	CHECK(routes == t->routes, "trie counts %zu routes, holds %zu", t->routes, routes);
	return as_check(t, buf, len);
}
