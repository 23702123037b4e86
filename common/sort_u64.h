/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_SORT_U64_H
#define FG_COMMON_SORT_U64_H
/*
 * A stable sort of fixed-size records by an unsigned 64-bit field, as a least-significant-digit
 * radix sort (a byte a pass; a pass in which every record has the same byte is skipped): linear
 * in the records where qsort() calls a comparison n log n times. For the draw's million-record
 * sorts (entrants by user, by rank key), which are on a thread of their own: slow path.
 */
#include <stddef.h>

/*
 * Sorts n records of size bytes at base ascending by the uint64_t at key_off in each (aligned
 * as the records are), keeping the order of equal keys. size is 8..64 and a multiple of 8,
 * key_off + 8 <= size. Returns 0, -EINVAL (base untouched) when size or key_off is out of
 * range, or -ENOMEM (base untouched): it needs a second buffer of n records.
 */
int sort_u64(void *base, size_t n, size_t size, size_t key_off);

#endif
