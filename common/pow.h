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
#define POW_BITS_MAX	 30 /* the hardest challenge (WIRE_POW_BITS_MAX, TOK_POW_BITS_MAX) */

/*
 * Whether sol (slen bytes, 1..POW_SOLUTION_MAX ASCII digits; leading zeros allowed) solves the
 * challenge prefix (plen bytes, 1..POW_PREFIX_MAX) at bits (0..POW_BITS_MAX; 0: anything well
 * formed). False for anything malformed. One SHA-256 compression; reads exactly
 * prefix[0..plen) and sol[0..slen); no allocation, no syscall: for worker lcores.
 */
bool pow_check(const char *prefix, size_t plen, const char *sol, size_t slen, unsigned bits);

/*
 * The first four bytes of SHA-256(prefix || sol) as a big-endian number, computed as
 * pow_check() does (its engine, its arguments' rules): pow_check() at bits is whether its top
 * bits are zero. For tests and benchmarks. Returns 0, or -EINVAL for arguments pow_check()
 * refuses (bits aside) or a NULL word.
 */
int pow_digest_word(const char *prefix, size_t plen, const char *sol, size_t slen, uint32_t *word);

/*
 * The engine pow_check() and pow_solve() use, chosen once at start: "sha-ni" where the CPU
 * has SHA-NI (and SSSE3, SSE4.1), else "openssl" (OpenSSL's SHA-256 compression function).
 */
const char *pow_engine(void);

/*
 * Makes name ("sha-ni" or "openssl") the engine, for tests and benchmarks (not thread-safe).
 * Returns 0, -ENOTSUP when this CPU cannot run it, -EINVAL for an unknown name.
 */
int pow_set_engine(const char *name);

/*
 * Finds the smallest nonce >= 0 solving prefix at bits, trying at most max_tries. Writes it to
 * out (NUL-terminated) and the nonces tried to *tries. Returns 0, -EINVAL (bad arguments) or
 * -EAGAIN (not found within max_tries). One compression per nonce, tried in increasing order
 * (the decimal text incremented in place).
 */
int pow_solve(const char *prefix, size_t plen, unsigned bits, uint64_t max_tries,
	char out[POW_SOLUTION_MAX + 1], uint64_t *tries);

#endif
