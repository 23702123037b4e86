/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_CTR_H
#define FG_COMMON_CTR_H
/*
 * Counters with one writer (a thread of their own, such as the bridge's or the ZAP handler's)
 * read by any thread: the writer adds with a relaxed atomic store of its own read, which no
 * other thread can race, and a reader sees a whole 64-bit value, perhaps a moment old. Readers
 * load them with __atomic_load_n(..., __ATOMIC_RELAXED) or copy them whole.
 */

/* Adds n to the counter field (an lvalue of an integer type) written by this thread only. */
#define CTR_ADD(field, n) __atomic_store_n(&(field), (field) + (n), __ATOMIC_RELAXED)

/* Adds 1 to the counter field, as CTR_ADD(). */
#define CTR_INC(field) CTR_ADD(field, 1)

#endif
