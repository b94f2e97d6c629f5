/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: size-classed pools for trie memory (see pool.h)
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fib/pool.h"

#define POOL_CHUNK (64u * 1024)
#define POOL_SUPER (2u * 1024 * 1024) /* one transparent huge page */
#define POOL_BIG_HUGE (1u * 1024 * 1024) /* large objects this big get huge pages */
#define POOL_SMALL_MAX 512u /* 8-byte steps up to here */
#define POOL_NSMALL (POOL_SMALL_MAX / 8)
/* then 2^k + 32 bytes, which fits a node of 2^(k-3) children and its
 * header in either key width with at most 16 bytes to spare: 544 .. 16K+32 */
#define POOL_LARGE_MIN_SHIFT 9
#define POOL_LARGE_MAX_SHIFT 14
#define POOL_LARGE_EXTRA 32u
#define POOL_NLARGE (POOL_LARGE_MAX_SHIFT - POOL_LARGE_MIN_SHIFT + 1)
#define POOL_NCLASS (POOL_NSMALL + POOL_NLARGE)

struct pool_big {
	struct pool_big *prev, *next;
	size_t size;
	uint64_t pad_; /* keep the object 16-byte aligned */
};

struct pool_class {
	void *free;   /* free list */
	char *cur;    /* carve pointer in the current chunk */
	char *end;
};

struct pool {
	pthread_mutex_t lock;
	struct pool_class cls[POOL_NCLASS];
	void **supers; /* 2 MiB superblocks, carved into chunks */
	size_t nsupers, supers_cap;
	char *scur, *send; /* carve pointer in the current superblock */
	struct pool_big big; /* list head */
	uint64_t bytes;
	uint64_t reserved;
#ifdef FIB_FAULT_INJECTION
	long fail_after;
#endif
};

static void pool_big_unmap(struct pool_big *b);

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
	for (int s = POOL_LARGE_MIN_SHIFT; s <= POOL_LARGE_MAX_SHIFT; s++)
		if (size <= (1ul << s) + POOL_LARGE_EXTRA) {
			*csize = (1ul << s) + POOL_LARGE_EXTRA;
			return POOL_NSMALL + s - POOL_LARGE_MIN_SHIFT;
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
	return p;
}

void
pool_free_all(struct pool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nsupers; i++)
		munmap(p->supers[i], POOL_SUPER);
	free(p->supers);
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

static int
pool_grow(struct pool *p, struct pool_class *c, size_t csize)
{
	if (p->scur == p->send) {
		char *sb;
		if (p->nsupers == p->supers_cap) {
			size_t ncap = p->supers_cap ? p->supers_cap * 2 : 16;
			void **n = realloc(p->supers, ncap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			p->supers = n;
			p->supers_cap = ncap;
		}
		sb = pool_map_huge(POOL_SUPER);
		if (!sb)
			return -ENOMEM;
		p->supers[p->nsupers++] = sb;
		__atomic_fetch_add(&p->reserved, POOL_SUPER, __ATOMIC_RELAXED);
		p->scur = sb;
		p->send = sb + POOL_SUPER;
	}
	c->cur = p->scur;
	c->end = p->scur + POOL_CHUNK / csize * csize;
	p->scur += POOL_CHUNK;
	return 0;
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
		if (c->free) {
			obj = c->free;
			c->free = *(void **)obj;
		} else if ((c->cur && csize <= (size_t)(c->end - c->cur)) ||
			   pool_grow(p, c, csize) == 0) {
			obj = c->cur;
			c->cur += csize;
		}
		if (obj)
			__atomic_fetch_add(&p->bytes, csize, __ATOMIC_RELAXED);
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
		pool_big_unmap(b);
	} else {
		*(void **)obj = p->cls[ci].free;
		p->cls[ci].free = obj;
	}
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

#ifdef FIB_FAULT_INJECTION
void
pool_fail_after(struct pool *p, long n)
{
	pthread_mutex_lock(&p->lock);
	p->fail_after = n;
	pthread_mutex_unlock(&p->lock);
}
#endif
