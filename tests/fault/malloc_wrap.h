/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: malloc_wrap, the heap half of libfib's fault tests
 *
 * Included once by a fault test linked with -Wl,--wrap=malloc,
 * --wrap=calloc and --wrap=realloc: while malloc_armed is set, the
 * malloc_fail_at-th heap call (counted in malloc_calls) fails with
 * ENOMEM. The pool's own allocations go through the test's pool_alloc
 * wrap instead.
 */
#ifndef TESTS_FAULT_MALLOC_WRAP_H
#define TESTS_FAULT_MALLOC_WRAP_H

#include <errno.h>
#include <stddef.h>

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size);

static int malloc_armed;
static unsigned long malloc_calls, malloc_fail_at;

static int
malloc_fails(void)
{
	return malloc_armed && ++malloc_calls == malloc_fail_at;
}

void *
__wrap_malloc(size_t size)
{
	if (malloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_malloc(size);
}

void *
__wrap_calloc(size_t n, size_t size)
{
	if (malloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(n, size);
}

void *
__wrap_realloc(void *p, size_t size)
{
	if (malloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_realloc(p, size);
}

#endif
