/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: rng, the deterministic PRNG of the test utilities
 *
 * xoshiro256** (Blackman and Vigna, "Scrambled linear pseudorandom number
 * generators", 2018) seeded through splitmix64, so one 64-bit seed gives
 * the same stream on every machine and compiler. Tables, traces and
 * randomized tests all draw from it; nothing here touches libc's rand().
 * Not for cryptography.
 */
#ifndef TESTS_UTIL_RNG_H
#define TESTS_UTIL_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

static inline uint64_t
rng_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Seed the generator. Context: any. */
static inline void
rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = rng_splitmix64(&seed);
}

static inline uint64_t
rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* Next 64 random bits. Context: any, one thread per struct rng. */
static inline uint64_t
rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return res;
}

/* Uniform in [0, n), n > 0 (Lemire's multiply-shift, unbiased). */
static inline uint64_t
rng_below(struct rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)rng_next(r) * n;
	uint64_t lo = (uint64_t)m;

	if (lo < n) {
		uint64_t t = -n % n;

		while (lo < t) {
			m = (unsigned __int128)rng_next(r) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

/* Uniform double in [0, 1). */
static inline double
rng_double(struct rng *r)
{
	return (rng_next(r) >> 11) * 0x1.0p-53;
}

#endif
