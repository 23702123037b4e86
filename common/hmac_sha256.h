/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_HMAC_SHA256_H
#define FG_COMMON_HMAC_SHA256_H
/*
 * HMAC-SHA256 (RFC 2104, FIPS 198-1) with the key's pads hashed once: a key holds the SHA-256
 * chaining values after the first block, H(K ^ ipad) and H(K ^ opad), so a MAC costs only the
 * blocks of the message plus one block for the outer hash -- two blocks for a token. Two
 * engines compute the same MACs: on CPUs with SHA-NI our own (hmac_sha256_ni.h), elsewhere
 * OpenSSL's compression function (libcrypto) on blocks padded here; the choice is made once
 * at start (hmac_sha256_engine()).
 *
 * A key is plain data without pointers: it can be copied by value (keyrings published with
 * RCU are). The states are as secret as the key itself: whoever has them can forge MACs.
 */
#include <stddef.h>
#include <stdint.h>

#define HMAC_SHA256_LEN	  32 /* bytes of a full MAC */
#define HMAC_SHA256_BLOCK 64 /* SHA-256 block; longer keys are hashed first (RFC 2104 §2) */

struct hmac_sha256_key {
	uint32_t inner[8]; /* SHA-256 chaining value after the block K ^ ipad */
	uint32_t outer[8]; /* SHA-256 chaining value after the block K ^ opad */
};

/*
 * Prepares key for the secret of len bytes (any length; RFC 2104 hashes a secret longer than
 * one block first). Returns 0, or -EINVAL (key untouched) if key is NULL, or secret is NULL
 * while len is not 0.
 */
int hmac_sha256_key_init(struct hmac_sha256_key *key, const void *secret, size_t len);

/*
 * Writes HMAC-SHA256(key, msg[0..len)) to out (HMAC_SHA256_LEN bytes). msg may be NULL when
 * len is 0. Cannot fail; no allocation, no lock, no syscall: safe on a worker lcore.
 */
void hmac_sha256(const struct hmac_sha256_key *key, const void *msg, size_t len,
	uint8_t out[HMAC_SHA256_LEN]);

/* The engine hmac_sha256() uses: "sha-ni" or "openssl". */
const char *hmac_sha256_engine(void);

/*
 * Makes hmac_sha256() use the engine name (one of the two above), for tests and benchmarks
 * that compare them; call it before other threads compute MACs. Returns 0, -EINVAL for
 * another name, or -ENOTSUP when this CPU cannot run that engine (nothing changes then).
 */
int hmac_sha256_set_engine(const char *name);

/* Overwrites key with zeros in a way the compiler cannot drop (use before freeing it). */
void hmac_sha256_key_wipe(struct hmac_sha256_key *key);

#endif
