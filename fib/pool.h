/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: per-FIB memory pools
 *
 * Trie nodes, leaves and interned attribute sets come from size-classed
 * pools carved out of 32 KiB chunks of 2 MiB (huge page) superblocks: no
 * per-object malloc header (a 24-byte leaf costs 24 bytes), neighbours
 * allocated together, exact byte counts, and freeing a whole FIB releases
 * superblocks, not millions of objects. A chunk serves one class at a
 * time and counts its live objects; an empty chunk goes back to its
 * superblock, and its pages to the system (MADV_DONTNEED) beyond a small
 * reserve, an empty superblock is unmapped: after a peak (a compaction,
 * a withdrawn table) the pool shrinks back. Objects larger than the
 * largest class (wide root nodes) are mapped one by one and tracked on a
 * list. Details and the placement policy in pool.c.
 *
 *   class:  8 16 24 ... 512 | 544 1056 ... 16K+32 | own mapping
 *   free list per chunk, threaded through the first word of free objects
 *
 * pool_alloc is called by the writer; pool_free by the writer or by the
 * call_rcu thread when a reclamation batch expires: one mutex serialises
 * them (uncontended in practice).
 */
#ifndef FIB_POOL_H
#define FIB_POOL_H

#include <stddef.h>
#include <stdint.h>

struct pool;

struct pool *pool_new(void);
/* Release every chunk and large object. Context: owner, nobody using it. */
void pool_free_all(struct pool *p);
/* Context: writer. NULL on allocation failure (or injected failure). */
void *pool_alloc(struct pool *p, size_t size);
/* size must be the size given to pool_alloc. Context: any. */
void pool_free(struct pool *p, void *obj, size_t size);
/* Give back the free chunks kept backed for the next allocations (up to
 * 4 MiB while the table churns), all but 256 KiB. Context: any. */
void pool_trim(struct pool *p);
/*
 * Scratch memory for a bulk build's large temporary arrays (the sorted
 * entries and leaves of fib_load): from 1 MiB up, a 2 MiB-aligned mapping
 * advised MADV_HUGEPAGE, below that malloc. Faulting tens of MB in 4 KiB
 * pages was a third of a full table's load here. Not the pool's memory:
 * not in its bytes, not subject to fault injection. NULL when out of
 * memory. Context: any.
 */
void *pool_scratch_alloc(size_t size);
/* size: as given to pool_scratch_alloc; p may be NULL. Context: any. */
void pool_scratch_free(void *p, size_t size);

/* Bytes handed out (rounded to the class size). Context: any. */
uint64_t pool_bytes(const struct pool *p);
/* Bytes held from the system: superblocks less the chunks given back,
 * plus large objects. Context: any. */
uint64_t pool_reserved(const struct pool *p);

/*
 * Handles: 29-bit names of pool objects, for structures that store many
 * references (the trie's children, the compiled lookup table's answers
 * and blocks) in 32 bits instead of 64. A handle is a mapping's id (a
 * superblock or a large object, POOL_NIDS - 1 of them, so up to 4 GiB of
 * superblocks) and the object's offset in it in 8-byte units
 * (POOL_HANDLE_OFF_BITS); 0 is never a handle (id 0 is never given, and
 * pool_handle_ptr reads it as NULL, with no branch). A
 * mapping's id is taken when it is mapped and given back when it is
 * unmapped, after its last object was freed: a handle is valid while its
 * object is, for readers too (RCU).
 */
#define POOL_NIDS 2048u
#define POOL_HANDLE_OFF_BITS 18

/* obj's handle (size: its size at pool_alloc), 0 if its mapping got no
 * id (more than POOL_NIDS mappings). Context: owner (of the object). */
uint32_t pool_handle(const struct pool *p, const void *obj, size_t size);
/* The table pool_handle_ptr reads; fixed for the pool's life. Context: any. */
const uintptr_t *pool_handle_table(const struct pool *p);

/* The handle of the object that holds the 8-byte aligned place named by
 * h (a handle made by adding to an object's handle the offset of a place
 * inside it, in 8-byte units). O(1): one read of the chunk's class.
 * Context: any; a reader under RCU, for an object it holds. */
uint32_t pool_handle_obj(const struct pool *p, uint32_t h);

/* The object of handle h (of a live object; NULL for 0). Context: any; a
 * reader under RCU, for handles it read in the same read section. */
static inline void *
pool_handle_ptr(const uintptr_t *tab, uint32_t h)
{
	return (void *)(__atomic_load_n(&tab[h >> POOL_HANDLE_OFF_BITS], __ATOMIC_RELAXED) +
			((uintptr_t)(h & ((1u << POOL_HANDLE_OFF_BITS) - 1)) << 3));
}

/*
 * The handle table of the pool that holds obj, for a reader that has an
 * object but not its FIB (fib_result_get): objects of at most
 * POOL_SUPER_OBJ_MAX bytes (every trie leaf) live in a 2 MiB-aligned
 * superblock whose first word is that table. Context: any, for an object
 * it holds.
 */
#define POOL_SUPER_BYTES (2u * 1024 * 1024)
#define POOL_SUPER_OBJ_MAX (16u * 1024)
static inline const uintptr_t *
pool_table_of(const void *obj)
{
	return *(const uintptr_t *const *)((uintptr_t)obj & ~(uintptr_t)(POOL_SUPER_BYTES - 1));
}

/* The same for a word holding a handle shifted left by 3 (the low bits
 * the caller's, ignored): one shift and one mask fewer. */
static inline void *
pool_handle_ptr3(const uintptr_t *tab, uint32_t w)
{
	return (void *)(__atomic_load_n(&tab[w >> (POOL_HANDLE_OFF_BITS + 3)], __ATOMIC_RELAXED) +
			(uintptr_t)(w & (((1u << POOL_HANDLE_OFF_BITS) - 1) << 3)));
}

#ifdef FIB_FAULT_INJECTION
/* Fail the nth next allocation (1 = the next one); 0 disables. */
void pool_fail_after(struct pool *p, long n);
#endif

#endif
