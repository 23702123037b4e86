/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_SORTED_H
#define FG_DP_SORTED_H
/*
 * The branch-free binary search of a sorted array, for the per-packet path: the trusted
 * edges (edge.h) and the rules' single addresses, IPv6 ranges and users (rules.h) all search
 * with it. Each step is a conditional move, not a branch, so a search costs log2(n) steps
 * whatever the key, and no mispredicted branch.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The index of the last element of a[0..n) (n >= 1 elements of size bytes, sorted by le) that
 * is le key, or 0 when none is: the caller compares a[result] itself. le(elem, key) says
 * whether elem <= key; with a constant le the call is inlined, and so is le.
 */
static inline __attribute__((always_inline)) uint32_t
sorted_floor(const void *a, size_t size, uint32_t n, const void *key,
	bool (*le)(const void *elem, const void *key))
{
	uint32_t base = 0;

	while (n > 1) {
		uint32_t half = n / 2;

		base = le((const char *)a + (size_t)(base + half) * size, key) ? base + half : base;
		n -= half;
	}
	return base;
}

/* le for sorted_floor() over uint32_t. */
static inline bool
sorted_le_u32(const void *elem, const void *key)
{
	return *(const uint32_t *)elem <= *(const uint32_t *)key;
}

/* le for sorted_floor() over uint64_t. */
static inline bool
sorted_le_u64(const void *elem, const void *key)
{
	return *(const uint64_t *)elem <= *(const uint64_t *)key;
}

#endif
