/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_HMAC_SHA256_NI_H
#define FG_COMMON_HMAC_SHA256_NI_H
/*
 * HMAC-SHA256 with the SHA-NI instructions (Intel Goldmont, Ice Lake and later; every AMD Zen):
 * the engine behind hmac_sha256() where it runs, the OpenSSL-based one elsewhere
 * (common/hmac_sha256.c chooses at start).
 *
 * What it saves over SHA256_Transform() on padded blocks (about a quarter of a token-sized
 * MAC, docs/tokens.md): the tail block is built in registers from loads of the message (no
 * buffer written and read back at once, whose loads wait for the stores they span), the
 * inner digest goes into the outer block without leaving the registers, and the chaining
 * values stay in the instructions' own layout between the two blocks.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hmac_sha256.h"

/* True when this CPU can run hmac_sha256_ni() (SHA-NI, SSSE3, SSE4.1: CPUID). */
bool hmac_sha256_ni_usable(void);

/*
 * hmac_sha256() with SHA-NI: same result for every key and message. Only call it when
 * hmac_sha256_ni_usable(); reads exactly msg[0..len), never past it.
 */
void hmac_sha256_ni(const struct hmac_sha256_key *key, const void *msg, size_t len,
	uint8_t out[HMAC_SHA256_LEN]);

#endif
