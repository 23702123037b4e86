/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_POW_H
#define FG_COMMON_POW_H
/*
 * The proof-of-work challenge of a purchase token (docs/tokens.md, docs/fairness.md): a
 * solution is a decimal nonce (1..POW_SOLUTION_MAX digits) such that
 * SHA-256(prefix || nonce), prefix being the token's 22-character MAC text, starts with
 * `bits` zero bits. Prefix and nonce fit one SHA-256 block, so a check is one compression.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POW_SOLUTION_MAX 20 /* digits: any uint64 */
#define POW_PREFIX_MAX	 32 /* prefix + solution stay within one block (55 bytes) */

/*
 * Whether sol (slen bytes, 1..POW_SOLUTION_MAX ASCII digits) solves the challenge prefix
 * (plen bytes, 1..POW_PREFIX_MAX) at bits (0..30; 0: anything well formed). No allocation, no
 * syscall: for worker lcores.
 */
bool pow_check(const char *prefix, size_t plen, const char *sol, size_t slen, unsigned bits);

/*
 * Finds the smallest nonce >= 0 solving prefix at bits, trying at most max_tries. Writes it to
 * out (NUL-terminated) and the nonces tried to *tries. Returns 0, -EINVAL (bad arguments) or
 * -EAGAIN (not found within max_tries).
 */
int pow_solve(const char *prefix, size_t plen, unsigned bits, uint64_t max_tries,
	char out[POW_SOLUTION_MAX + 1], uint64_t *tries);

#endif
