/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_RNG_H
#define FG_TESTS_RNG_H
/*
 * Reproducible pseudo-random numbers for tests and benchmarks: the same seed gives the same
 * sequence on every run, so a failure can be replayed. Each caller keeps its own state (a
 * uint64_t holding its seed). Not for anything that must be unpredictable.
 */
#include <stdint.h>

/* splitmix64 (Steele, Lea, Flood): any seed, 0 included. */
static inline uint64_t
rng_splitmix64(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* xorshift64* (Vigna): the seed must not be 0. */
static inline uint64_t
rng_xorshift64s(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(0x2545f4914f6cdd1d);
}

/* 32 bits of xorshift64*: its high half, the better one. */
static inline uint32_t
rng_xorshift64s_u32(uint64_t *s)
{
	return (uint32_t)(rng_xorshift64s(s) >> 32);
}

#endif
