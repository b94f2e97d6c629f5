/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the two instances of the LC-trie
 *
 * fib/trie_impl.h is compiled twice: trie4.c with 32-bit keys, trie6.c
 * with 128-bit keys. Keys are host-order integers (IPv6: the 16 bytes read
 * big-endian into an unsigned __int128).
 */
#ifndef FIB_TRIE_H
#define FIB_TRIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fib/fib_priv.h"

typedef uint32_t trie4_key;
/* 4-aligned (a typedef may lower alignment): an IPv6 element's header is
 * then 20 bytes, and a leaf of one route (its 12-byte alias) 32. Keys
 * are read as two 8-byte halves, never atomically. */
typedef unsigned __int128 trie6_key __attribute__((aligned(4)));

#define TRIE_DECLARE(P, K)                                                                    \
	struct P;                                                                             \
	struct P *P##_new(struct fib_ctx *ctx);                                               \
	void P##_free(struct P *t);                                                           \
	int P##_add(struct P *t, const struct fib_route *r, unsigned flags);                  \
	int P##_del(struct P *t, const struct fib_route *r);                                  \
	int P##_load_prepare(struct P *t, const struct fib_route *r, size_t n, void **tree,    \
			     size_t *routes);                                                 \
	void P##_load_publish(struct P *t, void *tree, size_t routes);                        \
	void P##_load_discard(struct P *t, void *tree);                                       \
	void P##_flush(struct P *t);                                                          \
	int P##_accel_retune(struct P *t, bool fresh, bool defer);                            \
	bool P##_accel_pending(const struct P *t);                                            \
	size_t P##_count(const struct P *t);                                                  \
	struct fib_result P##_lookup(const struct P *t, K key, uint32_t table, uint8_t tos);  \
	void P##_lookup_batch(const struct P *t, const K *key, uint32_t table,                \
			      struct fib_result *res, size_t n);                              \
	void P##_lookup_ref_batch(const struct P *t, const K *key, uint32_t table,            \
				  uint32_t *ref, size_t n);                                   \
	int P##_ref_get(const struct P *t, uint32_t ref, struct fib_result *res);             \
	struct fib_result P##_find(const struct P *t, K key, unsigned slen, uint32_t table,   \
				   uint8_t tos, uint32_t priority, unsigned nth);             \
	struct fib_result P##_find_nth(const struct P *t, K key, unsigned slen, uint32_t table, \
				       uint8_t tos, unsigned nth);                            \
	void P##_leaf_key(const struct fib_leaf *l, union fib_addr *a);                       \
	int P##_walk(const struct P *t, fib_walk_cb cb, void *arg);                           \
	int P##_walk_from(const struct P *t, K *key, unsigned *skip, fib_walk_cb cb, void *arg); \
	void P##_stats(const struct P *t, struct fib_trie_stats *st);                         \
	int P##_check(struct P *t, char *buf, size_t len);

TRIE_DECLARE(trie4, trie4_key)
TRIE_DECLARE(trie6, trie6_key)

/* The key of a 16-byte address in network order: two 8-byte loads (a
 * batch converts every address it is given). */
static inline trie6_key
trie6_key_from(const uint8_t *b)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t hi, lo;

	memcpy(&hi, b, 8);
	memcpy(&lo, b + 8, 8);
	return (trie6_key)__builtin_bswap64(hi) << 64 | __builtin_bswap64(lo);
#else
	trie6_key k = 0;

	for (int i = 0; i < 16; i++)
		k = (k << 8) | b[i];
	return k;
#endif
}

#endif
