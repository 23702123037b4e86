/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_CONFIG_INT_H
#define FG_COMMON_CONFIG_INT_H
/*
 * What the config loader (common/config.c) and its documentation printer (common/config_doc.c)
 * share about keys. Only those two files include it; programs use common/config.h.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"

#define CFG_WHY_MAX 256 /* a reason or a description of a key */

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
