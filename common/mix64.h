/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_MIX64_H
#define FG_COMMON_MIX64_H
/*
 * The 64-bit finaliser of MurmurHash3: every bit of x moves every bit of the result, and it is a
 * bijection. The hash tables of the data plane (rate limits, kept connections' per-client
 * counts, results) apply it to a key xor-ed with a random seed of theirs.
 */
#include <stdint.h>

/* Mixes x (pure; any value, any thread). */
static inline uint64_t
fg_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

#endif
