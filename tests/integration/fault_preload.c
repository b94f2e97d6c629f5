/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fault_preload, failed allocations for a running fibd (LD_PRELOAD)
 *
 * daemon_fault.sh preloads this into fibd. It fails malloc, calloc,
 * realloc and anonymous mmap calls made by fibd's own code (the daemon
 * executable and libfib.so, by the caller's address), one call in
 * FAULT_ONE_IN, from FAULT_AFTER_S seconds after the start for
 * FAULT_FOR_S seconds; with FAULT_ARM_BYTES=B the seconds count from
 * fibd's first own allocation of B bytes or more instead (which itself
 * succeeds): the first dump's route set, so that the start-up, whose
 * failures are fatal by design, is over. Libraries' own allocations (libc, libevent,
 * libyaml, liburcu) are left alone: the test is about fibd's handling
 * of its own allocation sites; other programs (a libtool wrapper's
 * shell) are left alone entirely. At exit it prints "fault_preload: N of M
 * calls failed" on stderr.
 *
 * Built by the test with `cc -shared -fPIC` (no part of make's build).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct range {
	uintptr_t lo, hi;
};

static struct range ranges[16];
static int nranges;
static double t_on, t_off;
static unsigned long one_in;
static size_t arm_bytes;
static unsigned long calls, failed;
static unsigned long long rnd = 88172645463325252ull;
static int ready;
static uintptr_t sites[4096]; /* the callers of the first failures */

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);

/* dlsym may calloc before real_calloc is known */
static char early[4096];
static size_t early_used;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	int main_obj = *(int *)arg;

	(void)size;
	*(int *)arg = 0;
	if (!main_obj && !strstr(info->dlpi_name, "libfib"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nranges < 16; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			ranges[nranges].lo = info->dlpi_addr + ph->p_vaddr;
			ranges[nranges].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			nranges++;
		}
	}
	return 0;
}

static int
fail_now(const void *caller, size_t bytes)
{
	uintptr_t pc = (uintptr_t)caller;
	double t;
	int mine = 0;

	if (!ready || !one_in)
		return 0;
	for (int i = 0; i < nranges; i++)
		if (pc >= ranges[i].lo && pc < ranges[i].hi)
			mine = 1;
	if (!mine)
		return 0;
	t = now();
	if (arm_bytes) {
		if (bytes < arm_bytes)
			return 0;
		arm_bytes = 0; /* armed: the window starts now */
		t_off = t + (t_off - t_on);
		t_on = t;
		return 0;
	}
	if (t < t_on || t >= t_off)
		return 0;
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	/* xorshift: a data race between threads only changes which call fails */
	rnd ^= rnd << 13;
	rnd ^= rnd >> 7;
	rnd ^= rnd << 17;
	if (rnd % one_in)
		return 0;
	{
		unsigned long k = __atomic_fetch_add(&failed, 1, __ATOMIC_RELAXED);

		if (k < 4096)
			sites[k] = pc;
	}
	errno = ENOMEM;
	return 1;
}

__attribute__((constructor)) static void
fault_init(void)
{
	const char *a = getenv("FAULT_AFTER_S"), *f = getenv("FAULT_FOR_S"),
		   *o = getenv("FAULT_ONE_IN");
	int main_obj = 1;

	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_mmap = dlsym(RTLD_NEXT, "mmap");
	if (!a || !f || !o)
		return;
	/* only fibd itself (not the libtool wrapper's shell before it) */
	if (strcmp(program_invocation_short_name, "fibd") &&
	    strcmp(program_invocation_short_name, "lt-fibd"))
		return;
	t_on = now() + atof(a);
	t_off = t_on + atof(f);
	one_in = strtoul(o, NULL, 10);
	if (getenv("FAULT_ARM_BYTES") && *getenv("FAULT_ARM_BYTES"))
		arm_bytes = strtoul(getenv("FAULT_ARM_BYTES"), NULL, 10);
	dl_iterate_phdr(phdr_cb, &main_obj);
	ready = 1;
}

__attribute__((destructor)) static void
fault_fini(void)
{
	if (!ready)
		return;
	fprintf(stderr, "fault_preload: %lu of %lu calls failed\n", failed, calls);
	/* where, by symbol (dladdr: exported ones; else the address) */
	for (unsigned long i = 0; i < failed && i < 4096; i++) {
		Dl_info di;
		unsigned long same = 0;
		int seen = 0;

		for (unsigned long j = 0; j < i && !seen; j++)
			seen = sites[j] == sites[i];
		if (seen)
			continue;
		for (unsigned long j = i; j < failed && j < 4096; j++)
			same += sites[j] == sites[i];
		memset(&di, 0, sizeof(di));
		if (dladdr((void *)sites[i], &di) && di.dli_sname)
			fprintf(stderr, "fault_preload: %lu at %s+%#lx\n", same, di.dli_sname,
				(unsigned long)(sites[i] - (uintptr_t)di.dli_saddr));
		else
			fprintf(stderr, "fault_preload: %lu at %s+%#lx\n", same,
				di.dli_fname ? di.dli_fname : "?",
				(unsigned long)(sites[i] - (di.dli_fbase ? (uintptr_t)di.dli_fbase : 0)));
	}
}

void *
malloc(size_t n)
{
	if (fail_now(__builtin_return_address(0), n))
		return NULL;
	if (!real_malloc)
		real_malloc = dlsym(RTLD_NEXT, "malloc");
	return real_malloc(n);
}

void *
calloc(size_t n, size_t m)
{
	if (!real_calloc) { /* dlsym itself: a zeroed static block */
		size_t want = (n * m + 15) & ~(size_t)15;
		void *p;

		if (early_used + want > sizeof(early))
			return NULL;
		p = early + early_used;
		early_used += want;
		return p;
	}
	if (fail_now(__builtin_return_address(0), n * m))
		return NULL;
	return real_calloc(n, m);
}

void *
realloc(void *p, size_t n)
{
	if (fail_now(__builtin_return_address(0), n))
		return NULL;
	if (!real_realloc)
		real_realloc = dlsym(RTLD_NEXT, "realloc");
	return real_realloc(p, n);
}

void
free(void *p)
{
	static void (*real_free)(void *);

	if ((char *)p >= early && (char *)p < early + sizeof(early))
		return;
	if (!real_free)
		real_free = dlsym(RTLD_NEXT, "free");
	real_free(p);
}

void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if ((flags & MAP_ANONYMOUS) && fail_now(__builtin_return_address(0), len))
		return MAP_FAILED;
	if (!real_mmap)
		real_mmap = dlsym(RTLD_NEXT, "mmap");
	return real_mmap(addr, len, prot, flags, fd, off);
}
