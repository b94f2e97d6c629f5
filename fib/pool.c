/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: size-classed pools for trie memory (see pool.h)
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fib/pool.h"

#define POOL_CHUNK (256u * 1024)
#define POOL_SMALL_MAX 512u /* 8-byte steps up to here */
#define POOL_NSMALL (POOL_SMALL_MAX / 8)
#define POOL_LARGE_MIN_SHIFT 10 /* then powers of two: 1K .. 64K */
#define POOL_LARGE_MAX_SHIFT 16
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
	void **chunks;
	size_t nchunks, chunks_cap;
	struct pool_big big; /* list head */
	uint64_t bytes;
	uint64_t reserved;
#ifdef FIB_FAULT_INJECTION
	long fail_after;
#endif
};

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
		if (size <= (1ul << s)) {
			*csize = 1ul << s;
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
	for (size_t i = 0; i < p->nchunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	for (struct pool_big *b = p->big.next, *nb; b != &p->big; b = nb) {
		nb = b->next;
		free(b);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static int
pool_grow(struct pool *p, struct pool_class *c, size_t csize)
{
	char *chunk;

	if (p->nchunks == p->chunks_cap) {
		size_t ncap = p->chunks_cap ? p->chunks_cap * 2 : 64;
		void **n = realloc(p->chunks, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->chunks = n;
		p->chunks_cap = ncap;
	}
	chunk = aligned_alloc(64, POOL_CHUNK);
	if (!chunk)
		return -ENOMEM;
	p->chunks[p->nchunks++] = chunk;
	__atomic_fetch_add(&p->reserved, POOL_CHUNK, __ATOMIC_RELAXED);
	c->cur = chunk;
	c->end = chunk + POOL_CHUNK / csize * csize;
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
		struct pool_big *b = aligned_alloc(64, (sizeof(*b) + csize + 63) & ~(size_t)63);
		if (b) {
			b->size = csize;
			b->next = p->big.next;
			b->prev = &p->big;
			p->big.next->prev = b;
			p->big.next = b;
			__atomic_fetch_add(&p->bytes, csize, __ATOMIC_RELAXED);
			__atomic_fetch_add(&p->reserved, csize + sizeof(*b), __ATOMIC_RELAXED);
			obj = b + 1;
		}
	} else {
		struct pool_class *c = &p->cls[ci];
		if (c->free) {
			obj = c->free;
			c->free = *(void **)obj;
		} else if (c->cur + csize <= c->end || pool_grow(p, c, csize) == 0) {
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
		__atomic_fetch_sub(&p->reserved, csize + sizeof(*b), __ATOMIC_RELAXED);
		free(b);
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
