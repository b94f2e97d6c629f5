/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: what every compiled table (fib/accel4_impl.h, accel6_impl.h,
 * accel_impl.h) defines alike
 *
 * Included by the table after its struct accel (which has `table` and
 * `lt`, the FIB pool's handle table) and A_KMAX: the answer word of a
 * route, the reader's hooks declared in fib/trie_types.h that do not
 * depend on the table's layout, and a key mask.
 */

/* The low b bits of a key. */
static inline tkey
a_low_mask(unsigned b)
{
	return b >= KEYBITS ? ~(tkey)0 : (((tkey)1 << b) - 1);
}

/* The word answering with alias k of leaf l: A_ASK if it cannot. */
static inline aword
a_value(const struct TRIE_PREFIX *t, const struct tleaf *l, unsigned k)
{
	uint32_t h = k < A_KMAX ? pool_handle(t->ctx->pool, l, leaf_size(l->kv.n)) : 0;

	return h ? (aword)(h << 3 | k) : A_ASK;
}

/* Context: reader. */
static inline bool
a_serves(const struct accel *A, uint32_t table)
{
	return A->table == table;
}

static inline uint32_t
a_table(const struct accel *A)
{
	return A->table;
}

static inline void
a_result(const struct accel *A, aword v, struct fib_result *r)
{
	aword_result(A->lt, v, r);
}
