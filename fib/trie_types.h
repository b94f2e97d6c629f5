/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: where the LC-trie and its compiled lookup table meet
 *
 * One trie instance (trie4.c, trie6.c) is four parts, included in this
 * order by the instance file after it defines TRIE_PREFIX, TRIE_KEY and
 * TRIE_KEYBITS:
 *
 *   fib/trie_impl.h        the trie (includes this file first)
 *   fib/accel4_impl.h      the compiled table: the run-bitmap one for
 *   or fib/accel6_impl.h   IPv4, the /32 hash over range blocks for
 *   or fib/accel_impl.h    IPv6, the poptrie-like one for IPv4 with
 *                          -DFIB_ACCEL4_POPTRIE
 *   fib/accel_set.h        which routing tables have one (main, and
 *                          those above params accel_min_routes)
 *
 * This file holds what the parts need: the key type, the trie's element
 * types (which the table walks when it builds), the instance's struct,
 * the answer word, and the few functions each part calls in another,
 * declared here and defined in the part that owns them. No part
 * includes another, so each reads alone against this file.
 *
 * An answer word (aword) of either table is 0 (no route), A_ASK (the
 * trie answers: an alias the word cannot name, or a part of the table
 * left to the trie for want of memory), or a pool handle << 3 with the
 * low bits naming an alias of that leaf (k < 4) or the table's own
 * structures (accel4_impl.h: A_DEEP; accel6_impl.h: A_BLK, A_DIR;
 * accel_impl.h: A_BLOCK). A word
 * naming an alias is also that route's reference (trie_impl.h, "route
 * references").
 */
#ifndef FIB_TRIE_TYPES_H
#define FIB_TRIE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fib/fib_priv.h"
#include "fib/pool.h"
#include "fib/trie.h"

#if !defined(TRIE_PREFIX) || !defined(TRIE_KEY) || !defined(TRIE_KEYBITS)
#error "define TRIE_PREFIX, TRIE_KEY and TRIE_KEYBITS first (see fib/trie4.c)"
#endif

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define TN(x) CAT(TRIE_PREFIX, CAT(_, x))

typedef TRIE_KEY tkey;

#define KEYBITS TRIE_KEYBITS
/* Readers see child slots, the root and slen change under them. */
#define T_LOAD(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define T_STORE(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#define T_LOAD8(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define T_STORE8(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)

struct tkv {
	tkey key;
	uint8_t pos;
	uint8_t bits;
	uint8_t slen;
	uint8_t n; /* leaf: number of aliases */
};

/* An element's 32-bit name: its pool handle (fib/pool.h), 0 for none. A
 * pointer per child would take a third more memory on a full table. */
typedef uint32_t tref;

/*
 * A node: the kernel's tnode, its child counts (writer only, like the
 * kernel's tnode info) in 16 bits up to TN_NARROW_MAX bits of width, so
 * that an IPv6 node's header is 24 bytes and a node of 4 children fits
 * 40; a wider node (the root of a full table, a few others) keeps them
 * as two 32-bit words after its children (tn_counts).
 */
#define TN_NARROW_MAX 15
struct tnode {
	struct tkv kv;
	uint16_t empty;
	uint16_t full;
	tref child[];
};

struct tleaf {
	struct tkv kv;
	struct fib_alias fa[];
};
/* fib_result_get finds an alias's attribute set through its leaf's
 * superblock (pool_table_of): every leaf (at most 255 aliases) is small */
_Static_assert(sizeof(struct tleaf) + 255 * sizeof(struct fib_alias) <= POOL_SUPER_OBJ_MAX,
	       "every leaf lives in a superblock");

/*
 * Root fallbacks. A lookup that finds nothing below the root would strip
 * the root index bit by bit, one cache miss per try, up to bits tries: the
 * common case for unrouted space. Instead slot[i] holds the leaf of the
 * longest prefix that covers the whole range of root slot i (any table);
 * its aliases answer at once, and only when they do not (another table or
 * tos) does the lookup strip bits as the kernel does. Rebuilt when the root
 * changes, patched when a short prefix changes; readers use it only if it
 * belongs to the root they read.
 */
struct rootfb {
	const struct tkv *node;
	unsigned long len;
	tref slot[]; /* leaves */
};

struct accel;

/* Routes of one table in this trie (fib/accel_set.h). Writer only. */
struct atab {
	uint32_t table;
	uint32_t routes;
	bool failed; /* its compiled table could not be built: not again
		      * until the next whole rebuild */
};

struct atabs {
	struct atab *v;
	size_t n, cap;
	/* v's index + 1 by table, open addressing over 2 * cap slots (0:
	 * free): a router with hundreds of VRFs counts every change */
	uint32_t *hash;
	bool lost; /* a table could not be counted (ENOMEM): counts are low */
};

struct TRIE_PREFIX {
	struct tkv *root;
	struct rootfb *rfb;
	const uintptr_t *ht; /* the pool's handle table: what trefs name */
	/* The compiled tables (fib/accel_set.h): [0] for params accel_table
	 * (accel_table6), the others for tables of at least params
	 * accel_min_routes routes; NULL where none. nextra: how many of
	 * [1..] are set, so that lookups of other tables skip the scan. */
	struct accel *accel[FIB_ACCEL_TABLES];
	unsigned nextra;
	bool apending;       /* writer: a table waits for as_retune (defer) */
	struct atabs tabs;   /* writer: routes per table */
	struct atabs ltabs;  /* load_prepare's counts, for load_publish */
	uint32_t *adflt;     /* writer scratch for wide rebuilds (words), kept */
	void *ascratch;      /* writer scratch of the IPv6 table's builds, kept */
	struct accel *acheck; /* fib_check's copy, kept */
	struct fib_ctx *ctx;
	size_t routes;
	int budget; /* resize steps left in this update */
	uint64_t resizes, inflates, halves, collapses;
};

#define IS_LEAF(n) ((n)->bits == 0)
#define TNODE(n) ((struct tnode *)(n))
#define TLEAF(n) ((struct tleaf *)(n))

static inline size_t
node_size(unsigned bits)
{
	return sizeof(struct tnode) + ((size_t)1 << bits) * sizeof(tref) +
	       (bits > TN_NARROW_MAX ? 2 * sizeof(uint32_t) : 0);
}

static inline size_t
leaf_size(unsigned n)
{
	return sizeof(struct tleaf) + n * sizeof(struct fib_alias);
}

static inline unsigned long
child_length(const struct tkv *n)
{
	return 1ul << n->bits;
}

static inline size_t
elem_size(const struct tkv *n)
{
	return IS_LEAF(n) ? leaf_size(n->n) : node_size(n->bits);
}

/* The element h names (NULL for 0). Context: any; a reader for a tref it
 * read under RCU. */
static inline struct tkv *
t_elem(const uintptr_t *ht, tref h)
{
	return (struct tkv *)pool_handle_ptr(ht, h);
}

/* Child i of tn, loaded as readers do. Context: any. */
static inline struct tkv *
t_child(const uintptr_t *ht, const struct tnode *tn, unsigned long i)
{
	return t_elem(ht, T_LOAD(tn->child[i]));
}

/* ------------------------------------------------------ the answer word */

typedef uint32_t aword;
#define A_ASK ((aword)1)

/*
 * A route's word (0 or leaf handle << 3 | alias) as a result, through the
 * pool's handle table lt. No branch on the word: a lookup that finds no
 * route (a third of the addresses of a uniform trace) would mispredict,
 * and a mispredicted branch after the table's cache misses throws away
 * the next lookups' reads already under way. Handle 0 reads as a NULL
 * leaf (fib/pool.h); the alias is masked. Context: reader.
 */
static inline void
aword_result(const uintptr_t *lt, aword v, struct fib_result *r)
{
	uintptr_t l = (uintptr_t)pool_handle_ptr3(lt, v);
	uintptr_t m = (uintptr_t)0 - (uintptr_t)(v != 0);

	r->leaf = (const struct fib_leaf *)l;
	r->alias = (const struct fib_alias *)((l + offsetof(struct tleaf, fa) +
					       (v & 3) * sizeof(struct fib_alias)) &
					      m);
}

/*
 * The compiled table's side, defined by fib/accel4_impl.h or
 * fib/accel6_impl.h or fib/accel_impl.h, one table (one routing
 * table's tos-0 routes) each.
 */

/* Does A answer lookups (tos 0) of table? Context: reader. */
static inline bool a_serves(const struct accel *A, uint32_t table);
/* The table A answers. Context: any. */
static inline uint32_t a_table(const struct accel *A);
/* The answer word for key. Context: reader. */
static inline aword a_lookup(const struct accel *A, tkey key);
/* A route's word (0 or an alias, not A_ASK) as a result. Context: reader. */
static inline void a_result(const struct accel *A, aword v, struct fib_result *r);
/* n lookups of table in A into res, or into ref as route references (the
 * other NULL); the trie answers where A says A_ASK. Context: reader. */
static inline void a_lookup_batch(const struct TRIE_PREFIX *t, const struct accel *A,
				  const tkey *keys, uint32_t table, struct fib_result *res,
				  uint32_t *ref, size_t n);
/* Before and after the trie changes the leaf of key whose shortest
 * prefix has suffix length slen: hold the reclamation, then patch A and
 * release it. Context: writer. */
static void a_invalidate(struct TRIE_PREFIX *t, struct accel *A, tkey key, unsigned slen);
static void a_revalidate(struct TRIE_PREFIX *t, struct accel *A, tkey key, unsigned slen);
/* A whole table of table's routes for the trie as it is, not published,
 * or NULL (ENOMEM). Context: writer. */
static struct accel *a_build_all(struct TRIE_PREFIX *t, uint32_t table);
/* Retire a table readers may still hold. Context: writer. */
static void a_retire_all(struct TRIE_PREFIX *t, struct accel *A);
/* Add A's part to the trie's stats (accel_*, and bytes). Context: writer. */
static void a_stats(const struct accel *A, struct fib_trie_stats *st);
/* A against a fresh build from the trie: 0 or -EUCLEAN and a message in
 * buf. Context: writer. */
static int a_check(struct TRIE_PREFIX *t, struct accel *A, char *buf, size_t len);
/* Free the writer's scratch kept in t. Context: writer, at the end. */
static void a_scratch_free(struct TRIE_PREFIX *t);

/*
 * The set of compiled tables, defined by fib/accel_set.h: the trie calls
 * these, which call the table's side for each table in the set.
 */

/* The compiled table that answers table, or NULL. Context: reader. */
static inline const struct accel *
as_for(const struct TRIE_PREFIX *t, uint32_t table)
{
	const struct accel *A = T_LOAD(t->accel[0]);

	if (A && a_serves(A, table))
		return A;
	if (!T_LOAD8(t->nextra))
		return NULL;
	for (unsigned i = 1; i < FIB_ACCEL_TABLES; i++) {
		A = T_LOAD(t->accel[i]);
		if (A && a_serves(A, table))
			return A;
	}
	return NULL;
}
/* a_invalidate and a_revalidate for every table of the set. */
static void as_invalidate(struct TRIE_PREFIX *t, tkey key, unsigned slen);
static void as_revalidate(struct TRIE_PREFIX *t, tkey key, unsigned slen);
/* A route of table came (delta 1) or went (-1) by fib_add or fib_del:
 * count it, and build or retire that table's compiled table when it
 * crosses params accel_min_routes. Context: writer. */
static void as_count(struct TRIE_PREFIX *t, uint32_t table, int delta);
/* load_prepare counts the routes of the tree it builds (begin, then one
 * note per route); load_publish makes them the trie's; flush empties them. */
static void as_load_begin(struct TRIE_PREFIX *t);
static void as_load_note(struct TRIE_PREFIX *t, uint32_t table);
static void as_load_publish(struct TRIE_PREFIX *t);
static void as_counts_clear(struct TRIE_PREFIX *t);
/* Build every table of the set again from the trie (a new root, or new
 * parameters) and retire the old ones. Context: writer. */
static void as_replace(struct TRIE_PREFIX *t);
/* The set for new parameters, keeping the tables that stay; builds what
 * is missing, or with defer only sets t->apending. Context: writer. */
static int as_retune(struct TRIE_PREFIX *t, bool fresh, bool defer);
static void as_stats(const struct TRIE_PREFIX *t, struct fib_trie_stats *st);
static int as_check(struct TRIE_PREFIX *t, char *buf, size_t len);
/* Free the counts and the tables' scratch. Context: writer, at the end. */
static void as_free(struct TRIE_PREFIX *t);

/*
 * The trie's side, defined by fib/trie_impl.h.
 */

/* Longest match in the trie alone. Context: reader (or the writer). */
static struct fib_result TN(lookup_trie)(const struct TRIE_PREFIX *t, tkey key, uint32_t table,
					 uint8_t tos);
/* The leaf of exactly key (NULL: none), the nodes above it in
 * path[0 .. *depth). Context: writer (or a reader). */
static struct tleaf *find_leaf(const struct TRIE_PREFIX *t, tkey key, struct tnode **path,
			       int *depth);
/* The 32-bit reference of a result's route. Context: reader. */
static inline uint32_t TN(ref_of)(const struct TRIE_PREFIX *t, struct fib_result r);

#endif
