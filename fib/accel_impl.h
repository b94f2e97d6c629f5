/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the compiled lookup table beside the LC-trie (one table, tos 0)
 *
 * Included by trie_impl.h, so it is built once per key width with the
 * trie. The LC-trie stays the writer's structure and answers every
 * lookup; for the one table that carries the full BGP table (params
 * accel_table, default 254 main) and tos 0 - what the datapath asks -
 * this compiled copy answers in a few cache-resident steps, after
 * poptrie (Asai and Ohara, SIGCOMM 2015):
 *
 *   dp[top 16 bits]  one 8-byte entry per /16:
 *       0              no route
 *       leaf | k       the answer: alias k (< 8) of trie leaf `leaf`
 *       1              ask the trie (alias index >= 8, or being rebuilt)
 *       BLOCK | blk    a block holding this /16's subtree
 *
 *   block: header | node[nn] | value[nl]
 *   node:  vec      bit s: slot s (the next 6 key bits) has a child node
 *          leafvec  bit s: a run of equal answers starts at leaf slot s
 *          base1    index in node[] of the first child
 *          base0    index (in 8-byte words from the block start) of the
 *                   first answer
 *   child of slot s:  node[base1 + popcount(vec & mask(s)) - 1]
 *   answer of slot s: word[base0 + popcount(leafvec & mask(s)) - 1]
 *
 * so a node is 24 bytes, answers are stored once per run, and an IPv4
 * lookup is the dp entry and at most three nodes and one answer (16 + 3 x
 * 6 bits covers 34). The answers are the trie's own leaves: a result is
 * derived from the word without touching the leaf.
 *
 * Updates (writer only). Any change to the leaf of key K may change or
 * move the answers of every prefix in that leaf: the /16s that its
 * shortest prefix covers are affected. Before the trie changes, their dp
 * entries become 1 ("ask the trie") and their blocks are retired; after
 * it, each is rebuilt from the trie (its routes longer than /16 by a
 * range walk, the best route covering it by exact lookups of its /16 ...
 * /0) and published with one store. A reader that still holds an old
 * block began before the block was retired, so before the old leaf was
 * retired: both outlive it. A bulk load or flush builds a whole new
 * table from the new trie before the old trie is released.
 *
 * If memory runs out, the /16 stays 1 and the trie answers: slower,
 * never wrong. The table is rebuilt whole at the next bulk load.
 */

#define A_DPBITS 16
#define A_NDP (1ul << A_DPBITS)
#define A_BLOCK (UINT64_C(1) << 63)
#define A_ASK UINT64_C(1)
#define A_GROUP 64

struct anode {
	uint64_t vec;
	uint64_t leafvec;
	uint32_t base0; /* word index of the first answer, from the block start */
	uint32_t base1; /* node index of the first child */
};

struct ablk {
	uint32_t nn; /* nodes */
	uint32_t nl; /* answers */
	struct anode node[];
};

struct accel {
	uint32_t table;
	uint32_t heap; /* a scratch copy for checking: malloc, not the pool */
	uint64_t *dp;
	uint64_t blocks, block_bytes, nodes, answers; /* writer only */
	uint64_t asks; /* /16s left to the trie */
};

static inline size_t
ablk_size(uint32_t nn, uint32_t nl)
{
	return sizeof(struct ablk) + nn * sizeof(struct anode) + nl * sizeof(uint64_t);
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

static inline tkey
a_low_mask(unsigned b)
{
	return b >= KEYBITS ? ~(tkey)0 : (((tkey)1 << b) - 1);
}

static inline uint64_t
a_value(const struct tleaf *l, unsigned k)
{
	return k < 8 ? (uint64_t)(uintptr_t)l | k : A_ASK;
}

static inline void
a_result(uint64_t v, struct fib_result *r)
{
	const struct tleaf *l = (const struct tleaf *)(uintptr_t)(v & ~(uint64_t)7);

	r->leaf = (const struct fib_leaf *)l;
	r->alias = v ? (const struct fib_alias *)&l->fa[v & 7] : NULL;
}

/* ---------------------------------------------------------- the lookups */

/* The answer word for key: 0, A_ASK or leaf | k. Call with rcu_read_lock. */
static inline __attribute__((always_inline)) uint64_t
a_lookup(const struct accel *A, tkey key)
{
	uint64_t e = T_LOAD(A->dp[a_top(key)]);
	const struct ablk *b;
	const struct anode *nd;
	unsigned d = A_DPBITS;

	if (!(e & A_BLOCK))
		return e;
	b = (const struct ablk *)(uintptr_t)(e & ~A_BLOCK);
	nd = b->node;
	for (;;) {
		unsigned v = a_idx(key, d);
		uint64_t m = (UINT64_C(2) << v) - 1;

		if (!((nd->vec >> v) & 1))
			return ((const uint64_t *)b)[nd->base0 + __builtin_popcountll(nd->leafvec & m) - 1];
		nd = &b->node[nd->base1 + __builtin_popcountll(nd->vec & m) - 1];
		d += 6;
	}
}

/*
 * Batch: up to A_GROUP lookups advance level by level. Round 0 reads the
 * dp entries (all prefetched first); each later round takes one node step
 * for every lookup still inside a block, all at the same depth, and
 * prefetches what each goes to next (a node or its answer word); the
 * words are read at the end. Every access was prefetched a whole round
 * (A_GROUP other accesses) before it is used, and a round is a tight loop
 * over the lookups still going.
 */
static inline __attribute__((always_inline)) void
a_lookup_batch(const struct TRIE_PREFIX *t, const struct accel *A, const tkey *keys,
	       uint32_t table, struct fib_result *res, size_t n)
{
	const uint64_t *dp = A->dp;

	for (size_t base = 0; base < n; base += A_GROUP) {
		unsigned m = n - base < A_GROUP ? (unsigned)(n - base) : A_GROUP;
		const tkey *k = keys + base;
		struct fib_result *r = res + base;
		const struct anode *nd[A_GROUP];
		const struct ablk *bk[A_GROUP];
		const uint64_t *wp[A_GROUP];
		uint8_t act[A_GROUP], wl[A_GROUP], ask[A_GROUP];
		unsigned na = 0, nwd = 0, nask = 0, d = A_DPBITS;

		for (unsigned i = 0; i < m; i++)
			__builtin_prefetch(&dp[a_top(k[i])]);
		for (unsigned i = 0; i < m; i++) {
			uint64_t e = T_LOAD(dp[a_top(k[i])]);

			if (e & A_BLOCK) {
				bk[i] = (const struct ablk *)(uintptr_t)(e & ~A_BLOCK);
				nd[i] = bk[i]->node;
				__builtin_prefetch(nd[i]);
				act[na++] = (uint8_t)i;
			} else if (e == A_ASK) {
				ask[nask++] = (uint8_t)i;
			} else {
				a_result(e, &r[i]);
			}
		}
		while (na) {
			unsigned nn = 0;

			for (unsigned j = 0; j < na; j++) {
				unsigned i = act[j], s = a_idx(k[i], d);
				const struct anode *x = nd[i];
				uint64_t msk = (UINT64_C(2) << s) - 1;

				if ((x->vec >> s) & 1) {
					nd[i] = &bk[i]->node[x->base1 + __builtin_popcountll(x->vec & msk) - 1];
					__builtin_prefetch(nd[i]);
					act[nn++] = (uint8_t)i;
				} else {
					wp[i] = (const uint64_t *)bk[i] + x->base0 +
						__builtin_popcountll(x->leafvec & msk) - 1;
					__builtin_prefetch(wp[i]);
					wl[nwd++] = (uint8_t)i;
				}
			}
			na = nn;
			d += 6;
		}
		for (unsigned j = 0; j < nwd; j++) {
			unsigned i = wl[j];
			uint64_t v = *wp[i];

			if (v == A_ASK)
				ask[nask++] = (uint8_t)i;
			else
				a_result(v, &r[i]);
		}
		for (unsigned j = 0; j < nask; j++)
			r[ask[j]] = TN(lookup_trie)(t, k[ask[j]], table, 0);
	}
}

/* ------------------------------------------------------------- building */

struct aitem {
	tkey key;
	uint8_t plen;
	uint64_t val;
};

struct avec {
	struct aitem *v;
	size_t n, cap;
};

static int
avec_push(struct avec *a, tkey key, unsigned plen, uint64_t val)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 256;
		struct aitem *v = realloc(a->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n].key = key;
	a->v[a->n].plen = (uint8_t)plen;
	a->v[a->n].val = val;
	a->n++;
	return 0;
}

/*
 * The routes of leaf l that a lookup in table with tos 0 can return,
 * shortest prefix first (the order the builder wants), those longer than
 * /A_DPBITS to long, the others to shrt (either may be NULL).
 */
static int
a_leaf_items(const struct tleaf *l, uint32_t table, struct avec *shrt, struct avec *lng)
{
	unsigned pick[256], np = 0;

	for (unsigned a = 0; a < l->kv.n; a++) {
		const struct fib_alias *fa = &l->fa[a];
		if (fa->table != table || fa->tos)
			continue;
		if (np && l->fa[pick[np - 1]].slen == fa->slen)
			continue; /* the first of one length answers */
		pick[np++] = a;
	}
	while (np--) {
		unsigned a = pick[np], plen = KEYBITS - l->fa[a].slen;
		struct avec *to = plen > A_DPBITS ? lng : shrt;
		if (to && avec_push(to, l->kv.key, plen, a_value(l, a)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The answer for the key range of a /plen, from routes shorter than
 * /plen (exact lookups of /plen-1 ... /0).
 */
static uint64_t
a_outer(const struct TRIE_PREFIX *t, uint32_t table, tkey base, unsigned plen)
{
	tkey last = 0;
	const struct tleaf *l = NULL;
	bool looked = false;

	for (int p = (int)plen - 1; p >= 0; p--) {
		tkey k = base & ~a_low_mask(KEYBITS - (unsigned)p);
		struct tnode *path[KEYBITS + 2];
		int depth;

		if (!looked || k != last) {
			l = find_leaf(t, k, path, &depth);
			last = k;
			looked = true;
		}
		if (!l)
			continue;
		for (unsigned a = 0; a < l->kv.n; a++) {
			const struct fib_alias *fa = &l->fa[a];
			if (fa->slen == KEYBITS - (unsigned)p && fa->table == table && !fa->tos)
				return a_value(l, a);
		}
	}
	return 0;
}

struct abuild {
	struct anode *node;
	size_t nn, ncap;
	uint64_t *word;
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
ab_word(struct abuild *b, uint64_t w)
{
	if (b->nl == b->lcap) {
		size_t cap = b->lcap ? 2 * b->lcap : 256;
		uint64_t *v = realloc(b->word, cap * sizeof(*v));
		if (!v) {
			b->err = -ENOMEM;
			return;
		}
		b->word = v;
		b->lcap = cap;
	}
	b->word[b->nl++] = w;
}

/*
 * Fill node ni at depth d (its slots are key bits d .. d + 5) from the
 * items in [it, it + n): all inside this node's range, sorted by key then
 * length; those of length <= d are already in dflt and ignored.
 */
static void
ab_node(struct abuild *b, size_t ni, const struct aitem *it, size_t n, unsigned d, uint64_t dflt)
{
	uint64_t slot[64], vec = 0, leafvec = 0, prev = 0;
	size_t base0 = b->nl, base1, k = 0, i = 0;
	bool have = false;

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
	for (unsigned p = 0; p < 6; p++)
		for (unsigned q = first[p]; q != 0xff; q = nxt[q]) {
			unsigned s0 = a_idx(pi[q]->key, d), cnt = 1u << (5 - p);
			for (unsigned s = s0; s < s0 + cnt; s++)
				slot[s] = pi[q]->val;
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
	b->node[ni].base0 = (uint32_t)base0; /* made absolute by ab_finish */
	b->node[ni].base1 = (uint32_t)base1;
	for (unsigned s = 0; s < 64 && !b->err; s++) {
		size_t j;
		if (!((vec >> s) & 1))
			continue;
		while (i < n && a_idx(it[i].key, d) < s)
			i++;
		for (j = i; j < n && a_idx(it[j].key, d) == s; j++)
			;
		ab_node(b, base1 + k, it + i, j - i, d + 6, slot[s]);
		k++;
		i = j;
	}
}

/* The block of one /A_DPBITS from its items (n > 0), or NULL (ENOMEM). */
static struct ablk *
ab_block(struct TRIE_PREFIX *t, struct abuild *b, const struct aitem *it, size_t n, uint64_t dflt,
	 bool heap)
{
	struct ablk *blk;
	uint32_t off;

	b->nn = b->nl = 0;
	b->err = 0;
	ab_nodes(b, 1);
	if (!b->err)
		ab_node(b, 0, it, n, A_DPBITS, dflt);
	if (b->err || b->nn > UINT32_MAX / 4 || b->nl > UINT32_MAX / 4)
		return NULL;
	blk = heap ? malloc(ablk_size((uint32_t)b->nn, (uint32_t)b->nl))
		   : pool_alloc(t->ctx->pool, ablk_size((uint32_t)b->nn, (uint32_t)b->nl));
	if (!blk)
		return NULL;
	blk->nn = (uint32_t)b->nn;
	blk->nl = (uint32_t)b->nl;
	off = (uint32_t)((sizeof(struct ablk) + b->nn * sizeof(struct anode)) / sizeof(uint64_t));
	for (size_t i = 0; i < b->nn; i++) {
		blk->node[i] = b->node[i];
		blk->node[i].base0 += off;
	}
	memcpy((uint64_t *)blk + off, b->word, b->nl * sizeof(uint64_t));
	return blk;
}

static void
a_count_block(struct accel *A, const struct ablk *blk, int sign)
{
	A->blocks += (uint64_t)(int64_t)sign;
	A->block_bytes += (uint64_t)((int64_t)sign * (int64_t)ablk_size(blk->nn, blk->nl));
	A->nodes += (uint64_t)((int64_t)sign * blk->nn);
	A->answers += (uint64_t)((int64_t)sign * blk->nl);
}

static void
a_retire_entry(struct TRIE_PREFIX *t, struct accel *A, uint64_t e)
{
	if (e & A_BLOCK) {
		struct ablk *blk = (struct ablk *)(uintptr_t)(e & ~A_BLOCK);
		a_count_block(A, blk, -1);
		reclaim_retire(t->ctx->rc, blk, ablk_size(blk->nn, blk->nl));
	}
}

static void
a_set_entry(struct accel *A, unsigned long c, uint64_t e)
{
	if (A->dp[c] == A_ASK)
		A->asks--;
	if (e == A_ASK)
		A->asks++;
	T_STORE(A->dp[c], e);
}

/* Every leaf below n with a key in [lo, hi], in key order. */
static int
a_collect(const struct tkv *n, tkey lo, tkey hi, uint32_t table, struct avec *shrt,
	  struct avec *lng)
{
	tkey nlo, nhi;
	unsigned long ilo, ihi;

	if (!n)
		return 0;
	if (IS_LEAF(n))
		return n->key >= lo && n->key <= hi ? a_leaf_items(TLEAF(n), table, shrt, lng) : 0;
	nlo = n->key;
	nhi = nlo | a_low_mask(n->pos + n->bits);
	if (hi < nlo || lo > nhi)
		return 0;
	ilo = lo > nlo ? (unsigned long)((lo - nlo) >> n->pos) : 0;
	ihi = (unsigned long)(((hi < nhi ? hi : nhi) - nlo) >> n->pos);
	for (unsigned long i = ilo; i <= ihi; i++) {
		int err = a_collect(T_LOAD(TNODE(n)->child[i]), lo, hi, table, shrt, lng);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Rebuild the aligned run of /A_DPBITS entries c0 .. c0 + cnt - 1 (cnt a
 * power of two) of A from the trie, in one walk over their key range, and
 * publish each entry with one store, retiring what it replaces. An entry
 * that cannot be built is left to the trie. Returns 0 or -ENOMEM (some
 * entries left to the trie).
 */
static int
a_build_range(struct TRIE_PREFIX *t, struct accel *A, unsigned long c0, unsigned long cnt)
{
	unsigned lr = A_DPBITS - (unsigned)__builtin_ctzl(cnt);
	tkey lo = (tkey)c0 << (KEYBITS - A_DPBITS);
	tkey hi = lo | a_low_mask(KEYBITS - lr);
	struct avec shrt = { 0 }, lng = { 0 };
	struct abuild b = { 0 };
	uint64_t small[256], *dflt = small;
	unsigned long e = c0;
	int err = 0;

	if (cnt > 256) {
		/* kept: rebuilding many /16s at once is rare, not one-off */
		if (!t->adflt)
			t->adflt = malloc(A_NDP * sizeof(uint64_t));
		dflt = t->adflt;
		if (!dflt)
			err = -ENOMEM;
	}

	if (!err)
		err = a_collect(t->root, lo, hi, A->table, &shrt, &lng);
	if (err) {
		for (unsigned long c = c0; c < c0 + cnt; c++) {
			uint64_t old = A->dp[c];
			a_set_entry(A, c, A_ASK);
			a_retire_entry(t, A, old);
		}
		goto out;
	}
	/* routes of /lr ... /A_DPBITS inside paint over the best one outside */
	dflt[0] = a_outer(t, A->table, lo, lr);
	for (unsigned long c = 1; c < cnt; c++)
		dflt[c] = dflt[0];
	for (unsigned p = lr; p <= A_DPBITS; p++)
		for (size_t i = 0; i < shrt.n; i++)
			if (shrt.v[i].plen == p) {
				unsigned long f = a_top(shrt.v[i].key) - c0, n = 1ul << (A_DPBITS - p);
				for (unsigned long c = f; c < f + n; c++)
					dflt[c] = shrt.v[i].val;
			}
	for (size_t i = 0, j; e < c0 + cnt; i = j) {
		unsigned long c = i < lng.n ? a_top(lng.v[i].key) : c0 + cnt;
		struct ablk *blk;
		uint64_t old;

		/* entries without longer routes: their default */
		for (; e < c; e++) {
			old = A->dp[e];
			if (old == dflt[e - c0])
				continue;
			a_set_entry(A, e, dflt[e - c0]);
			a_retire_entry(t, A, old);
		}
		if (i >= lng.n)
			break;
		for (j = i; j < lng.n && a_top(lng.v[j].key) == c; j++)
			;
		blk = ab_block(t, &b, lng.v + i, j - i, dflt[c - c0], A->heap);
		old = A->dp[c];
		if (blk) {
			a_count_block(A, blk, 1);
			a_set_entry(A, c, (uint64_t)(uintptr_t)blk | A_BLOCK);
		} else {
			a_set_entry(A, c, A_ASK);
			err = -ENOMEM;
		}
		a_retire_entry(t, A, old);
		e = c + 1;
	}
out:
	free(shrt.v);
	free(lng.v);
	free(b.node);
	free(b.word);
	return err;
}

/* The aligned run of /A_DPBITS entries that a change to prefixes of key
 * with suffixes up to slen may touch. */
static void
a_range(tkey key, unsigned slen, unsigned long *c0, unsigned long *cnt)
{
	unsigned span = slen > KEYBITS - A_DPBITS ? slen - (KEYBITS - A_DPBITS) : 0;

	*cnt = 1ul << span;
	*c0 = a_top(key) & ~(*cnt - 1);
}

/* Before the trie changes or retires the leaf of key (suffixes up to
 * slen): send its /16s to the trie and retire their blocks. */
static void
a_invalidate(struct TRIE_PREFIX *t, tkey key, unsigned slen)
{
	struct accel *A = t->accel;
	unsigned long c0, cnt;

	if (!A)
		return;
	a_range(key, slen, &c0, &cnt);
	for (unsigned long c = c0; c < c0 + cnt; c++) {
		uint64_t old = A->dp[c];
		if (old == A_ASK)
			continue;
		a_set_entry(A, c, A_ASK);
		a_retire_entry(t, A, old);
	}
}

/* After the change: rebuild that range from the trie. */
static void
a_revalidate(struct TRIE_PREFIX *t, tkey key, unsigned slen)
{
	struct accel *A = t->accel;
	unsigned long c0, cnt;

	if (!A)
		return;
	a_range(key, slen, &c0, &cnt);
	a_build_range(t, A, c0, cnt);
}

/* Free a table that was never published (pool memory only: the checking
 * copy is emptied by a_clear_heap). */
static void
a_free_now(struct TRIE_PREFIX *t, struct accel *A)
{
	for (unsigned long c = 0; c < A_NDP; c++)
		if (A->dp[c] & A_BLOCK) {
			struct ablk *blk = (struct ablk *)(uintptr_t)(A->dp[c] & ~A_BLOCK);
			pool_free(t->ctx->pool, blk, ablk_size(blk->nn, blk->nl));
		}
	pool_free(t->ctx->pool, A->dp, A_NDP * sizeof(uint64_t));
	pool_free(t->ctx->pool, A, sizeof(*A));
}

static void
a_retire_all(struct TRIE_PREFIX *t, struct accel *A)
{
	for (unsigned long c = 0; c < A_NDP; c++)
		a_retire_entry(t, A, A->dp[c]);
	reclaim_retire(t->ctx->rc, A->dp, A_NDP * sizeof(uint64_t));
	reclaim_retire(t->ctx->rc, A, sizeof(*A));
}

/* A whole table for the trie as it is, or NULL (ENOMEM). Not published:
 * its entries are plain stores until the table is. */
static struct accel *
a_build_all(struct TRIE_PREFIX *t, uint32_t table)
{
	struct accel *A = pool_alloc(t->ctx->pool, sizeof(*A));
	uint64_t *dp = A ? pool_alloc(t->ctx->pool, A_NDP * sizeof(uint64_t)) : NULL;

	if (!dp) {
		if (A)
			pool_free(t->ctx->pool, A, sizeof(*A));
		return NULL;
	}
	memset(A, 0, sizeof(*A));
	memset(dp, 0, A_NDP * sizeof(uint64_t));
	A->table = table;
	A->dp = dp;
	if (a_build_range(t, A, 0, A_NDP)) {
		a_free_now(t, A);
		return NULL;
	}
	return A;
}

/*
 * Replace the whole table after the trie got a new root (bulk load,
 * flush) or table (parameters), before the old trie is released. Without
 * memory the trie answers everything until the next bulk load.
 */
static void
a_replace(struct TRIE_PREFIX *t)
{
	struct accel *old = t->accel, *A = NULL;
#if TRIE_KEYBITS == 32
	uint32_t table = t->ctx->params.accel_table;
#else
	uint32_t table = t->ctx->params.accel_table6;
#endif

	if (table)
		A = a_build_all(t, table);
	T_STORE(t->accel, A);
	if (old)
		a_retire_all(t, old);
}

/* ------------------------------------------------------ check and stats */

/* Compare the compiled answer with the trie's at addr. */
static int
a_check_addr(const struct TRIE_PREFIX *t, const struct accel *A, tkey addr, char *buf, size_t len)
{
	uint64_t v = a_lookup(A, addr);
	struct fib_result want = TN(lookup_trie)(t, addr, A->table, 0), got;

	if (v == A_ASK)
		return 0;
	a_result(v, &got);
	if (got.alias != want.alias || (want.alias && got.leaf != want.leaf)) {
		char a[INET6_ADDRSTRLEN];
		union fib_addr fa;
		fa.b[0] = 0;
#if TRIE_KEYBITS == 32
		fa.v4.s_addr = htonl(addr);
		inet_ntop(AF_INET, &fa, a, sizeof(a));
#else
		for (int i = 15; i >= 0; i--, addr >>= 8)
			fa.b[i] = (uint8_t)addr;
		inet_ntop(AF_INET6, &fa, a, sizeof(a));
#endif
		snprintf(buf, len, "compiled table answers %s with %p/%p, the trie with %p/%p", a,
			 (const void *)got.leaf, (const void *)got.alias, (const void *)want.leaf,
			 (const void *)want.alias);
		return -EUCLEAN;
	}
	return 0;
}

/* Both ends of every prefix and the addresses just outside them. */
static int
a_check_rec(const struct TRIE_PREFIX *t, const struct accel *A, const struct tkv *n, char *buf,
	    size_t len)
{
	if (!n)
		return 0;
	if (IS_LEAF(n)) {
		const struct tleaf *l = TLEAF(n);
		for (unsigned a = 0; a < n->n; a++) {
			tkey lo = n->key, hi = n->key | a_low_mask(l->fa[a].slen);
			tkey probe[4] = { lo, hi, lo - 1, hi + 1 };
			for (int i = 0; i < 4; i++)
				if (a_check_addr(t, A, probe[i], buf, len))
					return -EUCLEAN;
		}
		return 0;
	}
	for (unsigned long i = 0; i < child_length(n); i++)
		if (a_check_rec(t, A, TNODE(n)->child[i], buf, len))
			return -EUCLEAN;
	return 0;
}

/* Empty a checking copy for the next check (its dp stays allocated). */
static void
a_clear_heap(struct accel *F)
{
	for (unsigned long c = 0; c < A_NDP; c++) {
		if (F->dp[c] & A_BLOCK)
			free((void *)(uintptr_t)(F->dp[c] & ~A_BLOCK));
		F->dp[c] = 0;
	}
	F->asks = F->blocks = F->block_bytes = F->nodes = F->answers = 0;
}

static void
a_scratch_free(struct TRIE_PREFIX *t)
{
	if (t->acheck) {
		a_clear_heap(t->acheck);
		free(t->acheck->dp);
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
a_check(struct TRIE_PREFIX *t, char *buf, size_t len)
{
	const struct accel *A = t->accel;
	struct accel *F;
	uint64_t asks = 0;
	int err = 0;

	if (!A)
		return 0;
	/* the copy is kept: checks run after every step of the tests */
	F = t->acheck;
	if (!F) {
		F = calloc(1, sizeof(*F));
		if (F)
			F->dp = calloc(A_NDP, sizeof(uint64_t));
		if (F && !F->dp) {
			free(F);
			F = NULL;
		}
		t->acheck = F;
	}
	if (F) {
		F->table = A->table;
		F->heap = 1;
		if (a_build_range(t, F, 0, A_NDP)) {
			a_clear_heap(F);
			F = NULL;
		}
	}
	/* one pass: compare, and empty the copy for the next check */
	for (unsigned long c = 0; c < A_NDP; c++) {
		uint64_t e = A->dp[c], f = F ? F->dp[c] : 0;
		bool same = e == f;

		asks += e == A_ASK;
		if (!F)
			continue; /* no memory for the copy: the probes only */
		if (e & f & A_BLOCK) {
			const struct ablk *x = (const void *)(uintptr_t)(e & ~A_BLOCK);
			const struct ablk *y = (const void *)(uintptr_t)(f & ~A_BLOCK);
			same = x->nn == y->nn && x->nl == y->nl &&
			       !memcmp(x, y, ablk_size(x->nn, x->nl));
		}
		if (f & A_BLOCK)
			free((void *)(uintptr_t)(f & ~A_BLOCK));
		F->dp[c] = 0;
		if (!same && e != A_ASK && !err) {
			snprintf(buf, len, "compiled table entry %lu is %#llx, a fresh build has %#llx",
				 c, (unsigned long long)e, (unsigned long long)f);
			err = -EUCLEAN;
		}
	}
	if (F)
		F->asks = F->blocks = F->block_bytes = F->nodes = F->answers = 0;
	if (err)
		return err;
	if (asks != A->asks) {
		snprintf(buf, len, "compiled table counts %llu /16s for the trie, holds %llu",
			 (unsigned long long)A->asks, (unsigned long long)asks);
		return -EUCLEAN;
	}
	return a_check_rec(t, A, t->root, buf, len);
}
