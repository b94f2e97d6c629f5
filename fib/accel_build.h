/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: what every compiled table builds from (fib/accel4_impl.h, accel6_impl.h, accel_impl.h)
 *
 * Included by every table in its building section, inside one trie
 * instance: it needs tkey, KEYBITS, struct TRIE_PREFIX, the trie's walk
 * (find_leaf, IS_LEAF, TNODE), and the table's aword, A_DPBITS,
 * a_lookup, a_result (fib/accel_common.h) and a_bytes. The route items
 * of a key range in key order (a_collect), the answer from shorter
 * routes (a_outer), the check's probe of one address (a_check_addr) and
 * walk over every prefix (a_check_rec), and the table's stats (a_stats,
 * declared in fib/trie_types.h).
 */

struct aitem {
	tkey key;
	uint8_t plen;
	aword val;
};

struct avec {
	struct aitem *v;
	size_t n, cap;
};

static void
avec_free(struct avec *a)
{
	pool_scratch_free(a->v, a->cap * sizeof(*a->v));
}

struct accel;
/* Compare the compiled answer with the trie's at addr. */
static int
a_check_addr(const struct TRIE_PREFIX *t, const struct accel *A, tkey addr, char *buf, size_t len)
{
	aword v = a_lookup(A, addr);
	struct fib_result want = TN(lookup_trie)(t, addr, A->table, 0), got;

	if (v == A_ASK)
		return 0;
	a_result(A, v, &got);
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

static size_t a_bytes(const struct accel *A);

/*
 * A growing array v of n elements with room for one more (first cap
 * first): v itself, a larger copy, or NULL (ENOMEM, v unchanged). It
 * lives in scratch memory (fib/pool.h), so that a whole table's items
 * (13 MB for a full IPv4 table) get huge pages: free it with
 * pool_scratch_free(v, *cap * size).
 */
static inline void *
a_grow(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t c;
	void *nv;

	if (n < *cap)
		return v;
	c = *cap ? 2 * *cap : first;
	nv = pool_scratch_alloc(c * size);
	if (!nv)
		return NULL;
	if (n)
		memcpy(nv, v, n * size);
	pool_scratch_free(v, *cap * size);
	*cap = c;
	return nv;
}

/* Room for one more item. */
static int
avec_push(struct avec *a, tkey key, unsigned plen, aword val)
{
	struct aitem *v = a_grow(a->v, &a->cap, a->n, sizeof(*v), 256);

	if (!v)
		return -ENOMEM;
	a->v = v;
	a->v[a->n].key = key;
	a->v[a->n].plen = (uint8_t)plen;
	a->v[a->n].val = val;
	a->n++;
	return 0;
}

/*
 * The routes of leaf l that a lookup in table with tos 0 can return and
 * whose length is in (plo, phi], shortest prefix first (the order the
 * builder wants); those longer than /A_DPBITS to lng, the others to shrt
 * (either may be NULL).
 */
static int
a_leaf_items(const struct TRIE_PREFIX *t, const struct tleaf *l, uint32_t table, int plo,
	     unsigned phi, struct avec *shrt, struct avec *lng)
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
		if ((int)plen <= plo || plen > phi)
			continue;
		if (to && avec_push(to, l->kv.key, plen, a_value(t, l, a)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The answer for the key range of a /plen, from routes shorter than
 * /plen (exact lookups of /plen-1 ... /0).
 */
static aword
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
				return a_value(t, l, a);
		}
	}
	return 0;
}

/*
 * Every leaf below n with a key in [lo, hi] whose low `align` bits are
 * zero, in key order; their routes of lengths (plo, phi]. The alignment
 * prunes: a prefix of length p has a key aligned to KEYBITS - p, so a walk
 * for prefixes up to /phi skips the subtrees that hold only longer keys.
 */
static int
a_collect(const struct TRIE_PREFIX *t, const struct tkv *n, tkey lo, tkey hi, uint32_t table,
	  int plo, unsigned phi, unsigned align, struct avec *shrt, struct avec *lng)
{
	tkey nlo, nhi;
	unsigned long ilo, ihi, step = 1;
	unsigned span;

	if (!n)
		return 0;
	if (IS_LEAF(n))
		return n->key >= lo && n->key <= hi && !(n->key & a_low_mask(align))
			       ? a_leaf_items(t, TLEAF(n), table, plo, phi, shrt, lng)
			       : 0;
	span = n->pos + n->bits;
	nlo = n->key;
	nhi = nlo | a_low_mask(span);
	if (hi < nlo || lo > nhi)
		return 0;
	ilo = lo > nlo ? (unsigned long)((lo - nlo) >> n->pos) : 0;
	ihi = (unsigned long)(((hi < nhi ? hi : nhi) - nlo) >> n->pos);
	if (align > n->pos) {
		if (align >= span) {
			/* only the key nlo itself can be aligned */
			if ((nlo & a_low_mask(align)) || ilo)
				return 0;
			ihi = 0;
		} else {
			step = 1ul << (align - n->pos);
			ilo = (ilo + step - 1) & ~(step - 1);
		}
	}
	for (unsigned long i = ilo; i <= ihi; i += step) {
		int err = a_collect(t, t_child(t->ht, TNODE(n), i), lo, hi, table, plo, phi, align,
				    shrt, lng);
		if (err)
			return err;
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
		if (a_check_rec(t, A, t_elem(t->ht, TNODE(n)->child[i]), buf, len))
			return -EUCLEAN;
	return 0;
}

/* The table's part of the trie's stats, added to what is there. */
static void
a_stats(const struct accel *A, struct fib_trie_stats *st)
{
	size_t bytes = a_bytes(A);

	st->accel_bytes += bytes;
	st->accel_blocks += A->blocks;
	st->accel_nodes += A->nodes;
	st->accel_answers += A->answers;
	st->accel_asks += A->asks;
	st->bytes += bytes;
}
