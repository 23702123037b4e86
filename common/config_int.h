/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_CONFIG_INT_H
#define FG_COMMON_CONFIG_INT_H
/*
 * What the config loader (common/config.c), its writer (common/config_write.c) and its
 * documentation printer (common/config_doc.c) share about keys and fields. Only those files
 * include it; programs use common/config.h.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/config.h"

#define CFG_WHY_MAX 256 /* a reason or a description of a key */

/* Stores v in the size-byte (1, 2, 4 or 8) unsigned field at p. */
static inline void
cfg_put_uint(void *p, size_t size, uint64_t v)
{
	switch (size) {
	case 1: {
		uint8_t x = (uint8_t)v;
		memcpy(p, &x, 1);
		break;
	}
	case 2: {
		uint16_t x = (uint16_t)v;
		memcpy(p, &x, 2);
		break;
	}
	case 4: {
		uint32_t x = (uint32_t)v;
		memcpy(p, &x, 4);
		break;
	}
	default:
		memcpy(p, &v, 8);
		break;
	}
}

/* The size-byte (1, 2, 4 or 8) unsigned field at p. */
static inline uint64_t
cfg_get_uint(const void *p, size_t size)
{
	switch (size) {
	case 1: {
		uint8_t x;
		memcpy(&x, p, 1);
		return x;
	}
	case 2: {
		uint16_t x;
		memcpy(&x, p, 2);
		return x;
	}
	case 4: {
		uint32_t x;
		memcpy(&x, p, 4);
		return x;
	}
	default: {
		uint64_t x;
		memcpy(&x, p, 8);
		return x;
	}
	}
}

/* The count (an unsigned) at base + offset: a list's or an array section's length. */
static inline unsigned
cfg_get_count(const void *base, size_t offset)
{
	unsigned n;

	memcpy(&n, (const uint8_t *)base + offset, sizeof(n));
	return n;
}

/* Stores the count n at base + offset. */
static inline void
cfg_put_count(void *base, size_t offset, unsigned n)
{
	memcpy((uint8_t *)base + offset, &n, sizeof(n));
}

/* The largest value a field of size bytes holds. */
static inline uint64_t
cfg_size_max(size_t size)
{
	return size >= 8 ? UINT64_MAX : (UINT64_C(1) << (size * 8)) - 1;
}

/* The bounds of a key as checked: max 0 means what its field holds. */
static inline uint64_t
cfg_uint_max(const struct cfg_key *k)
{
	return k->max != 0 ? k->max : cfg_size_max(k->size);
}

static inline size_t
cfg_string_max(const struct cfg_key *k)
{
	return k->max != 0 ? (size_t)k->max : k->size - 1;
}

/*
 * Writes what a value of key k looks like ("integer 1..64", "duration 1s..1d in whole seconds,
 * such as 30s, 15m, 2h", ...) into buf, for messages (config.c) and the reference (config_doc.c).
 */
void cfg_describe(const struct cfg_key *k, char *buf, size_t len);

#endif
