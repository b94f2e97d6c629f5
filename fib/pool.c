/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: size-classed pools for trie memory that give memory back (see pool.h)
 *
 * A slab allocator (Bonwick, "The Slab Allocator", USENIX 1994; the
 * kernel's SLUB) over 2 MiB superblocks: each 32 KiB chunk of a
 * superblock serves one size class at a time and counts its live
 * objects; its free objects are threaded through their first word on the
 * chunk's own free list. A chunk whose last object is freed leaves its
 * class and goes back to its superblock; a superblock whose last chunk
 * is free is unmapped, unless it is the pool's last one. Free chunks in
 * live superblocks are kept backed up to POOL_HOT_MAX of them (4 MiB),
 * beyond that their pages go back with MADV_DONTNEED. So RSS follows the
 * live objects after a peak (a compaction, a withdrawn table) at 32 KiB
 * granularity.
 *
 *   superblock (2 MiB aligned, 2 MiB)
 *   +--------+---------------+---------------+-----+---------------+
 *   | header | chunk 0 objs  | chunk 1       | ... | chunk 63      |
 *   | 4 KiB  | (28 KiB)      | 32 KiB        |     | 32 KiB        |
 *   +--------+---------------+---------------+-----+---------------+
 *   header: superblock links, used/cold counts, 64 chunk descriptors
 *   descriptor: class, live count, free list, carve pointer, list links
 *   object -> superblock: address & ~(2 MiB - 1); -> chunk: offset >> 15
 *
 * Why 32 KiB: each class in use holds one partly carved chunk, and a
 * full table uses some 60 classes (the compiled table's segments spread
 * over every 8-byte size): half a chunk each was 1.35 MB of the tier-1
 * IPv4 FIB's 44 MB with 64 KiB chunks. The largest classes (16 KiB and
 * more) then fit one object per chunk; they are the rare wide nodes.
 *
 * Allocation takes from the class's current chunk (its free list, else
 * carving never-used space), then from the class's partial chunks, then
 * a free chunk of the superblock with the most chunks in use (so lightly
 * used superblocks drain and can be unmapped), then a new superblock.
 *
 * Partial chunks are kept on two lists per class, sparse (less than half
 * live) and dense. Mixed traffic (route by route) tops up dense chunks
 * first, so that sparse ones drain and go back.
 *
 * Bulk builds: fib_load and fib_compact allocate a whole trie and free
 * the old one only after publishing the new one. Were the new trie to
 * fill the holes that churn left in the old trie's dense chunks, those
 * chunks would keep a scatter of new objects once the old ones are gone,
 * and a compaction would give little memory back. So after
 * POOL_BULK_STREAK allocations without a free (the daemon waits for
 * pending frees before it compacts) a class takes sparse partial chunks
 * (mostly new objects once the old ones are gone) or free chunks, never
 * dense ones; the next free ends the streak. What the first allocations
 * of a rebuild put into old chunks, and the sparse chunks it filled, a
 * second rebuild moves out: fibd compacts in two passes (RIS table: 26
 * MB after churn, 18.0 MB after one pass, 17.5 MB after two, 17.4 MB
 * bulk-built). A pool cannot tell a bulk build from a long run of
 * route-by-route adds with the frees still in a grace period; such a run
 * takes sparse and free chunks too, a compaction later repairs that. An
 * explicit hint from fib_load/fib_compact would be exact.
 *
 * Huge pages: superblocks are advised MADV_HUGEPAGE. Giving a chunk back
 * splits the huge page; the superblock is then advised MADV_NOHUGEPAGE
 * so that khugepaged does not collapse the mostly empty range into a full
 * huge page again (max_ptes_none defaults to 511), and MADV_HUGEPAGE once
 * every given-back chunk is in use again.
 *
 * Objects larger than the largest class (wide root nodes) are mmapped one
 * by one and tracked on a list; freeing one unmaps it.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fib/pool.h"

#define POOL_CHUNK_SHIFT 15
#define POOL_CHUNK (1u << POOL_CHUNK_SHIFT) /* 32 KiB */
#define POOL_SUPER (2u * 1024 * 1024)       /* one transparent huge page */
#define POOL_NCHUNK (POOL_SUPER / POOL_CHUNK)
#define POOL_HDR 4096u /* the superblock header, in front of chunk 0 */
/* allocations without a free in between that make a bulk build */
#define POOL_BULK_STREAK 256u
/*
 * Free chunks of live superblocks kept backed: 4 MiB, a new superblock's
 * 63 and more. Route-by-route changes retire and allocate compiled-table
 * blocks of up to 16 KiB, one or a few per chunk, whose chunks empty and fill
 * again all the time; with less kept, each went back (splitting the
 * superblock's huge page) and was faulted in again, zeroed, by the
 * writer's next copy into it. pool_trim gives back all but POOL_HOT_MIN
 * (256 KiB) once the table is quiet. Built with
 * -DPOOL_PROTECT_FREE (debugging), none, and every chunk given back is
 * mprotect(PROT_NONE) until reused: a read of freed trie memory after
 * its grace period then faults at the read instead of seeing zeros.
 */
#ifdef POOL_PROTECT_FREE
#define POOL_HOT_MAX 0u
#define POOL_HOT_MIN 0u
#else
#define POOL_HOT_MAX (4u * 1024 * 1024 / POOL_CHUNK)
#define POOL_HOT_MIN (256u * 1024 / POOL_CHUNK) /* what pool_trim keeps */
#endif
#define POOL_BIG_HUGE (1u * 1024 * 1024) /* large objects this big get huge pages */
#define POOL_SMALL_MAX 512u /* 8-byte steps up to here */
#define POOL_NSMALL (POOL_SMALL_MAX / 8)
/* then 2^k + 32 bytes, which fits a node of 2^(k-3) children and its
 * header in either key width with at most 16 bytes to spare: 544 .. 16K+32,
 * and three steps between each two (2^k x 5/4, 3/2, 7/4, + 32) for the
 * compiled table's blocks, whose sizes are anything: they waste a fifth at
 * most instead of half */
#define POOL_LARGE_MIN_SHIFT 9
#define POOL_LARGE_MAX_SHIFT 14
#define POOL_LARGE_EXTRA 32u
#define POOL_NLARGE (4 * (POOL_LARGE_MAX_SHIFT - POOL_LARGE_MIN_SHIFT) + 1)
#define POOL_NCLASS (POOL_NSMALL + POOL_NLARGE)
_Static_assert((1u << POOL_LARGE_MAX_SHIFT) >= POOL_SUPER_OBJ_MAX,
	       "objects up to POOL_SUPER_OBJ_MAX live in superblocks");

enum { POOL_SPARSE, POOL_DENSE };

enum pool_chunk_state {
	POOL_CH_USED,  /* serves a class */
	POOL_CH_FREE,  /* free, pages (possibly) backed */
	POOL_CH_COLD,  /* free, pages given back (MADV_DONTNEED) */
};

/* A chunk's descriptor, in its superblock's header. */
struct pool_chunk {
	struct pool_chunk *next, *prev; /* on a partial list of its class */
	void *free;                     /* free objects of this chunk */
	char *carve;                    /* never-used objects from here to end */
	char *end;
	uint16_t live;  /* objects handed out */
	uint16_t cap;   /* objects it holds */
	int16_t cls;    /* class index while USED */
	uint8_t state;  /* enum pool_chunk_state */
	uint8_t listed; /* 0, or on partial[listed - 1] of its class */
};

struct pool_super {
	const uintptr_t *idtab; /* first: the pool's handle table (pool_table_of) */
	struct pool_super *next, *prev; /* every superblock of the pool */
	uint32_t used;  /* chunks serving a class */
	uint32_t cold;  /* chunks given back */
	uint32_t huge;  /* advised MADV_HUGEPAGE */
	uint32_t id;    /* its handle id (pool_handle), POOL_ID_NONE: none */
	struct pool_chunk ch[POOL_NCHUNK];
};
_Static_assert(sizeof(struct pool_super) <= POOL_HDR, "superblock header fits a page");
_Static_assert(offsetof(struct pool_super, idtab) == 0 && POOL_SUPER == POOL_SUPER_BYTES,
	       "pool_table_of reads the first word of the 2 MiB superblock");

struct pool_big {
	struct pool_big *prev, *next;
	size_t size;
	uint32_t id;   /* its handle id, POOL_ID_NONE: none */
	uint32_t pad_; /* keep the object 16-byte aligned */
};

struct pool_class {
	struct pool_chunk *cur; /* allocating from; on no list */
	/* chunks with free objects, doubly linked: [POOL_SPARSE] less than
	 * half live, [POOL_DENSE] at least half */
	struct pool_chunk *partial[2];
	uint32_t csize;
};

struct pool {
	pthread_mutex_t lock;
	struct pool_class cls[POOL_NCLASS];
	struct pool_super supers; /* list head (its chunks unused) */
	size_t nsupers;
	size_t free_backed; /* POOL_CH_FREE chunks of live superblocks */
	uint64_t streak;    /* allocations since the last free */
	struct pool_big big; /* list head */
	uint64_t bytes;
	uint64_t reserved;
	uint32_t id_next; /* where the search for a free handle id starts */
#ifdef FIB_FAULT_INJECTION
	long fail_after;
#endif
	/* handle id -> base address (superblock, or large object's mapping);
	 * 0: free. Written under lock, read by anyone (atomics). */
	uintptr_t idbase[POOL_NIDS];
	/* 1: the id names a large object's mapping (pool_handle_obj) */
	uint8_t idbig[POOL_NIDS];
};

#define POOL_ID_NONE UINT32_MAX

/* A free handle id for the mapping at base, or POOL_ID_NONE (all taken:
 * its objects get no handle). Context: any, with the pool lock held. */
static uint32_t
pool_id_get(struct pool *p, const void *base, int big)
{
	/* id 0 is never given: idbase[0] stays 0, so handle 0 reads as NULL */
	for (uint32_t n = 0; n < POOL_NIDS - 1; n++) {
		uint32_t id = 1 + (p->id_next + n) % (POOL_NIDS - 1);

		if (!p->idbase[id]) {
			/* before the base: a reader that sees the base sees it */
			__atomic_store_n(&p->idbig[id], (uint8_t)big, __ATOMIC_RELAXED);
			__atomic_store_n(&p->idbase[id], (uintptr_t)base, __ATOMIC_RELEASE);
			p->id_next = id % (POOL_NIDS - 1);
			return id;
		}
	}
	return POOL_ID_NONE;
}

/* The mapping is going: its objects were freed a grace period ago or
 * more, so no reader holds a handle of it. Context: any, with the pool lock held. */
static void
pool_id_put(struct pool *p, uint32_t id)
{
	if (id != POOL_ID_NONE)
		__atomic_store_n(&p->idbase[id], 0, __ATOMIC_RELAXED);
}

static void pool_big_unmap(struct pool_big *b);

/* The size of large class j. */
static size_t
pool_large_size(int j)
{
	size_t k = 1ul << (POOL_LARGE_MIN_SHIFT + j / 4);

	return k + (size_t)(j % 4) * (k / 4) + POOL_LARGE_EXTRA;
}

static int
pool_class_of(size_t size, size_t *csize)
{
	if (size <= POOL_SMALL_MAX) {
		size_t c = (size + 7) / 8;
		if (c == 0)
			c = 1;
		*csize = c * 8;
		return (int)c - 1;
	}
	{
		/* x in (2^s, 2^(s+1)]: the quarter steps above 2^s it needs */
		size_t x = size - POOL_LARGE_EXTRA;
		int s = 63 - __builtin_clzl(x - 1);
		int j = s < POOL_LARGE_MIN_SHIFT
				? 0
				: (s - POOL_LARGE_MIN_SHIFT) * 4 +
					  (int)((x - (1ul << s) + (1ul << (s - 2)) - 1) >> (s - 2));

		if (j < (int)POOL_NLARGE) {
			*csize = pool_large_size(j);
			return (int)POOL_NSMALL + j;
		}
	}
	*csize = size;
	return -1;
}

struct pool *
pool_new(void)
{
	struct pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	p->big.prev = p->big.next = &p->big;
	p->supers.prev = p->supers.next = &p->supers;
	for (unsigned i = 0; i < POOL_NCLASS; i++) {
		size_t csize;

		pool_class_of(i < POOL_NSMALL ? (size_t)(i + 1) * 8 : pool_large_size((int)(i - POOL_NSMALL)),
			      &csize);
		p->cls[i].csize = (uint32_t)csize;
	}
	return p;
}

void
pool_free_all(struct pool *p)
{
	if (!p)
		return;
	for (struct pool_super *s = p->supers.next, *ns; s != &p->supers; s = ns) {
		ns = s->next;
		munmap(s, POOL_SUPER);
	}
	for (struct pool_big *b = p->big.next, *nb; b != &p->big; b = nb) {
		nb = b->next;
		pool_big_unmap(b);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* A 2 MiB-aligned mapping of len bytes (a multiple of 2 MiB), huge pages
 * requested. */
static void *
pool_map_huge(size_t len)
{
	size_t span = len + POOL_SUPER;
	char *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;

	if (m == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)m + POOL_SUPER - 1) & ~(uintptr_t)(POOL_SUPER - 1));
	if (a > m)
		munmap(m, (size_t)(a - m));
	if (m + span > a + len)
		munmap(a + len, (size_t)(m + span - (a + len)));
	madvise(a, len, MADV_HUGEPAGE);
	return a;
}

#define POOL_SCRATCH_HUGE (1u << 20)

static size_t
pool_scratch_len(size_t size)
{
	return (size + POOL_SUPER - 1) & ~(size_t)(POOL_SUPER - 1);
}

void *
pool_scratch_alloc(size_t size)
{
	if (size < POOL_SCRATCH_HUGE)
		return malloc(size ? size : 1);
	return pool_map_huge(pool_scratch_len(size));
}

void
pool_scratch_free(void *p, size_t size)
{
	if (!p)
		return;
	if (size < POOL_SCRATCH_HUGE)
		free(p);
	else
		munmap(p, pool_scratch_len(size));
}

/* Pages, not huge pages: a root node of 2^18 children is 2 MiB plus its
 * header, and rounding that to 4 MiB would waste 2 MiB. The mapping is
 * still 2 MiB-aligned, so all but its last few pages are huge. */
static size_t
pool_big_len(size_t csize)
{
	return (sizeof(struct pool_big) + csize + 4095) & ~(size_t)4095;
}

static void
pool_big_unmap(struct pool_big *b)
{
	munmap(b, pool_big_len(b->size));
}

static inline struct pool_super *
pool_super_of(const void *obj)
{
	return (struct pool_super *)((uintptr_t)obj & ~(uintptr_t)(POOL_SUPER - 1));
}

static inline unsigned
pool_chunk_index(const struct pool_super *s, const struct pool_chunk *ch)
{
	return (unsigned)(ch - s->ch);
}

/* First byte of chunk i's objects (chunk 0 starts after the header). */
static inline char *
pool_chunk_base(struct pool_super *s, unsigned i)
{
	return (char *)s + (size_t)i * POOL_CHUNK + (i == 0 ? POOL_HDR : 0);
}

static void
pool_partial_push(struct pool_class *c, struct pool_chunk *ch, int which)
{
	ch->prev = NULL;
	ch->next = c->partial[which];
	if (c->partial[which])
		c->partial[which]->prev = ch;
	c->partial[which] = ch;
	ch->listed = (uint8_t)(which + 1);
}

static void
pool_partial_unlink(struct pool_class *c, struct pool_chunk *ch)
{
	if (ch->prev)
		ch->prev->next = ch->next;
	else
		c->partial[ch->listed - 1] = ch->next;
	if (ch->next)
		ch->next->prev = ch->prev;
	ch->next = ch->prev = NULL;
	ch->listed = 0;
}

static struct pool_super *
pool_super_new(struct pool *p)
{
	struct pool_super *s = pool_map_huge(POOL_SUPER);

	if (!s)
		return NULL;
	/* the mapping is zeroed: every chunk POOL_CH_USED (0) until set */
	for (unsigned i = 0; i < POOL_NCHUNK; i++)
		s->ch[i].state = POOL_CH_FREE;
	s->huge = 1;
	s->idtab = p->idbase;
	s->id = pool_id_get(p, s, 0);
	s->next = p->supers.next;
	s->prev = &p->supers;
	p->supers.next->prev = s;
	p->supers.next = s;
	p->nsupers++;
	p->free_backed += POOL_NCHUNK;
	__atomic_fetch_add(&p->reserved, POOL_SUPER, __ATOMIC_RELAXED);
	return s;
}

static void
pool_super_unmap(struct pool *p, struct pool_super *s)
{
	for (unsigned i = 0; i < POOL_NCHUNK; i++)
		if (s->ch[i].state == POOL_CH_FREE)
			p->free_backed--;
	__atomic_fetch_sub(&p->reserved, POOL_SUPER - (uint64_t)s->cold * POOL_CHUNK,
			   __ATOMIC_RELAXED);
	s->prev->next = s->next;
	s->next->prev = s->prev;
	p->nsupers--;
	pool_id_put(p, s->id);
	munmap(s, POOL_SUPER);
}

/*
 * A free chunk for class ci: from the superblock with the most chunks in
 * use, a backed one first; else a new superblock. Scanning the
 * superblocks is O(superblocks) once per 32 KiB handed out.
 */
static struct pool_chunk *
pool_chunk_get(struct pool *p, int ci)
{
	struct pool_class *c = &p->cls[ci];
	struct pool_super *best = NULL, *s;
	struct pool_chunk *ch = NULL;
	unsigned i;

	for (s = p->supers.next; s != &p->supers; s = s->next)
		if (s->used < POOL_NCHUNK && (!best || s->used > best->used))
			best = s;
	if (!best && !(best = pool_super_new(p)))
		return NULL;
	s = best;
	for (i = 0; i < POOL_NCHUNK; i++) {
		if (s->ch[i].state == POOL_CH_FREE) {
			ch = &s->ch[i];
			break;
		}
		if (s->ch[i].state == POOL_CH_COLD && !ch)
			ch = &s->ch[i];
	}
	if (ch->state == POOL_CH_FREE) {
		p->free_backed--;
	} else {
#ifdef POOL_PROTECT_FREE
		char *b = pool_chunk_base(s, pool_chunk_index(s, ch));

		mprotect(b, (size_t)((char *)s + (size_t)(pool_chunk_index(s, ch) + 1) * POOL_CHUNK - b),
			 PROT_READ | PROT_WRITE);
#endif
		s->cold--;
		__atomic_fetch_add(&p->reserved, POOL_CHUNK, __ATOMIC_RELAXED);
		if (s->cold == 0 && !s->huge) {
			/* in use again: let khugepaged make it huge */
			madvise(s, POOL_SUPER, MADV_HUGEPAGE);
			s->huge = 1;
		}
	}
	i = pool_chunk_index(s, ch);
	s->used++;
	ch->state = POOL_CH_USED;
	ch->cls = (int16_t)ci;
	ch->live = 0;
	ch->free = NULL;
	ch->listed = 0;
	ch->next = ch->prev = NULL;
	ch->carve = pool_chunk_base(s, i);
	ch->cap = (uint16_t)(((char *)s + (size_t)(i + 1) * POOL_CHUNK - ch->carve) / c->csize);
	ch->end = ch->carve + (size_t)ch->cap * c->csize;
	return ch;
}

/* Give a free chunk's pages back. */
static void
pool_chunk_cool(struct pool *p, struct pool_super *s, struct pool_chunk *ch)
{
	unsigned i = pool_chunk_index(s, ch);
	char *base = pool_chunk_base(s, i); /* chunk 0 keeps the header page */

	if (ch->state == POOL_CH_FREE)
		p->free_backed--;
	ch->state = POOL_CH_COLD;
	s->cold++;
	madvise(base, (size_t)((char *)s + (size_t)(i + 1) * POOL_CHUNK - base), MADV_DONTNEED);
#ifdef POOL_PROTECT_FREE
	mprotect(base, (size_t)((char *)s + (size_t)(i + 1) * POOL_CHUNK - base), PROT_NONE);
#endif
	__atomic_fetch_sub(&p->reserved, POOL_CHUNK, __ATOMIC_RELAXED);
	if (s->huge) {
		madvise(s, POOL_SUPER, MADV_NOHUGEPAGE);
		s->huge = 0;
	}
}

/*
 * Over the budget of free backed chunks (a new superblock brings 31):
 * give back the free chunks of the least used superblocks first, where
 * splitting the huge page costs least.
 */
static void
pool_trim_to(struct pool *p, size_t keep)
{
	while (p->free_backed > keep) {
		struct pool_super *best = NULL;

		for (struct pool_super *s = p->supers.next; s != &p->supers; s = s->next)
			if (s->used + s->cold < POOL_NCHUNK && (!best || s->used < best->used))
				best = s;
		if (!best)
			return;
		for (unsigned i = 0; i < POOL_NCHUNK && p->free_backed > keep; i++)
			if (best->ch[i].state == POOL_CH_FREE)
				pool_chunk_cool(p, best, &best->ch[i]);
	}
}

/* ch has no live object left: give it back to its superblock. */
static void
pool_chunk_put(struct pool *p, struct pool_chunk *ch)
{
	struct pool_super *s = pool_super_of(ch);

	s->used--;
	if (s->used == 0) {
		if (p->nsupers == 1) {
			/* the last one: keep it, so that one object coming and
			 * going in a small pool does not map and zero a
			 * superblock each time */
			ch->state = POOL_CH_FREE;
			p->free_backed++;
			return;
		}
		ch->state = POOL_CH_COLD; /* not counted in free_backed */
		pool_super_unmap(p, s);
		pool_trim_to(p, POOL_HOT_MAX);
		return;
	}
	if (p->free_backed + 1 <= POOL_HOT_MAX) {
		ch->state = POOL_CH_FREE;
		p->free_backed++;
		return;
	}
	ch->state = POOL_CH_USED; /* not free_backed yet */
	pool_chunk_cool(p, s, ch);
	pool_trim_to(p, POOL_HOT_MAX);
}

/*
 * The class's current chunk is full: a dense partial one (topping those
 * up lets sparse ones drain and go back), else a sparse one, else a free
 * one. In a bulk build only sparse ones: see the DOC comment.
 */
static struct pool_chunk *
pool_class_refill(struct pool *p, int ci)
{
	struct pool_class *c = &p->cls[ci];
	struct pool_chunk *ch = p->streak < POOL_BULK_STREAK ? c->partial[POOL_DENSE] : NULL;

	if (!ch)
		ch = c->partial[POOL_SPARSE];
	if (ch)
		pool_partial_unlink(c, ch);
	else
		ch = pool_chunk_get(p, ci);
	c->cur = ch; /* the full one is on no list until an object comes back */
	return ch;
}

void *
pool_alloc(struct pool *p, size_t size)
{
	size_t csize;
	int ci = pool_class_of(size, &csize);
	void *obj = NULL;

	pthread_mutex_lock(&p->lock);
#ifdef FIB_FAULT_INJECTION
	if (p->fail_after > 0 && --p->fail_after == 0) {
		pthread_mutex_unlock(&p->lock);
		errno = ENOMEM;
		return NULL;
	}
#endif
	if (ci < 0) {
		size_t len = pool_big_len(csize);
		struct pool_big *b = len >= POOL_BIG_HUGE ? pool_map_huge(len)
			: mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED)
			b = NULL;
		if (b) {
			b->size = csize;
			b->id = pool_id_get(p, b, 1);
			b->next = p->big.next;
			b->prev = &p->big;
			p->big.next->prev = b;
			p->big.next = b;
			__atomic_fetch_add(&p->bytes, csize, __ATOMIC_RELAXED);
			__atomic_fetch_add(&p->reserved, len, __ATOMIC_RELAXED);
			obj = b + 1;
		}
	} else {
		struct pool_class *c = &p->cls[ci];
		struct pool_chunk *ch = c->cur;

		for (;;) {
			if (ch && ch->free) {
				obj = ch->free;
				ch->free = *(void **)obj;
				break;
			}
			if (ch && ch->carve != ch->end) {
				obj = ch->carve;
				ch->carve += csize;
				break;
			}
			if (!(ch = pool_class_refill(p, ci)))
				break;
		}
		if (obj) {
			ch->live++;
			p->streak++;
			__atomic_fetch_add(&p->bytes, csize, __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_unlock(&p->lock);
	if (!obj)
		errno = ENOMEM;
	return obj;
}

void
pool_free(struct pool *p, void *obj, size_t size)
{
	size_t csize;
	int ci = pool_class_of(size, &csize);

	if (!obj)
		return;
	pthread_mutex_lock(&p->lock);
	__atomic_fetch_sub(&p->bytes, csize, __ATOMIC_RELAXED);
	if (ci < 0) {
		struct pool_big *b = (struct pool_big *)obj - 1;
		b->prev->next = b->next;
		b->next->prev = b->prev;
		__atomic_fetch_sub(&p->reserved, pool_big_len(csize), __ATOMIC_RELAXED);
		pool_id_put(p, b->id);
		pool_big_unmap(b);
	} else {
		struct pool_super *s = pool_super_of(obj);
		struct pool_chunk *ch = &s->ch[((uintptr_t)obj & (POOL_SUPER - 1)) >> POOL_CHUNK_SHIFT];
		struct pool_class *c = &p->cls[ch->cls];

		*(void **)obj = ch->free;
		ch->free = obj;
		p->streak = 0;
		if (--ch->live == 0) {
			if (ch->listed)
				pool_partial_unlink(c, ch);
			if (c->cur == ch)
				c->cur = NULL;
			pool_chunk_put(p, ch);
		} else if (c->cur != ch) {
			if (!ch->listed) {
				pool_partial_push(c, ch, POOL_DENSE); /* it was full */
			} else if (ch->listed == POOL_DENSE + 1 && ch->live < ch->cap / 2) {
				pool_partial_unlink(c, ch);
				pool_partial_push(c, ch, POOL_SPARSE);
			}
		}
	}
	pthread_mutex_unlock(&p->lock);
}

void
pool_trim(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	pool_trim_to(p, POOL_HOT_MIN);
	pthread_mutex_unlock(&p->lock);
}

uint64_t
pool_bytes(const struct pool *p)
{
	return __atomic_load_n(&p->bytes, __ATOMIC_RELAXED);
}

uint64_t
pool_reserved(const struct pool *p)
{
	return __atomic_load_n(&p->reserved, __ATOMIC_RELAXED);
}

uint32_t
pool_handle(const struct pool *p, const void *obj, size_t size)
{
	size_t csize;
	uint32_t id;
	uintptr_t base;

	(void)p;
	if (size > POOL_SMALL_MAX && pool_class_of(size, &csize) < 0) {
		const struct pool_big *b = (const struct pool_big *)obj - 1;
		id = b->id;
		base = (uintptr_t)b;
	} else {
		const struct pool_super *s = pool_super_of(obj);
		id = s->id;
		base = (uintptr_t)s;
	}
	if (id == POOL_ID_NONE)
		return 0;
	return id << POOL_HANDLE_OFF_BITS | (uint32_t)(((uintptr_t)obj - base) >> 3);
}

const uintptr_t *
pool_handle_table(const struct pool *p)
{
	return p->idbase;
}

/*
 * A large object starts right after its header; an object of a chunk at
 * a multiple of its class size from the chunk's first byte. The chunk
 * keeps its class while the object lives, so a reader that holds the
 * object (RCU) reads a class that does not change under it.
 */
uint32_t
pool_handle_obj(const struct pool *p, uint32_t h)
{
	uint32_t id = h >> POOL_HANDLE_OFF_BITS;
	size_t off = (size_t)(h & ((1u << POOL_HANDLE_OFF_BITS) - 1)) << 3, base, csize;
	const struct pool_super *s;
	unsigned i;
	int cls;

	if (__atomic_load_n(&p->idbig[id], __ATOMIC_RELAXED))
		return id << POOL_HANDLE_OFF_BITS | (uint32_t)(sizeof(struct pool_big) >> 3);
	s = (const struct pool_super *)__atomic_load_n(&p->idbase[id], __ATOMIC_ACQUIRE);
	i = (unsigned)(off >> POOL_CHUNK_SHIFT);
	cls = __atomic_load_n(&s->ch[i].cls, __ATOMIC_RELAXED);
	csize = p->cls[cls].csize;
	base = (size_t)i * POOL_CHUNK + (i == 0 ? POOL_HDR : 0);
	off = base + (off - base) / csize * csize;
	return id << POOL_HANDLE_OFF_BITS | (uint32_t)(off >> 3);
}

#ifdef FIB_FAULT_INJECTION
void
pool_fail_after(struct pool *p, long n)
{
	pthread_mutex_lock(&p->lock);
	p->fail_after = n;
	pthread_mutex_unlock(&p->lock);
}
#endif
