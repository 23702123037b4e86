/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_DRAW_H
#define FG_COMMON_DRAW_H
/*
 * The verifiable draw of an event's entrants (docs/fairness.md gives the same formulas for
 * anyone to check in another language):
 *
 *   commitment = SHA-256(seed)                                  published from event create
 *   digest     = SHA-256("flashgate-entrants-v1" || be32(event) || be64(n)
 *                        || be64(user_1) || ... || be64(user_n))  users sorted ascending
 *   key(user)  = HMAC-SHA256(seed, "flashgate-draw-v1" || be32(event) || digest || be64(user))
 *   rank order : ascending by the first 8 bytes of key(user) read as a big-endian unsigned
 *                64-bit integer, ties (practically never) by user id ascending; rank 1 first
 *
 * The seed is 32 random bytes drawn when the event is created; the digest fixes the entrants
 * before the draw, and every rank depends on it, so a change of entrants reshuffles everyone.
 * Slow path only (control plane, flashgatectl, tests, benchmarks).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/hmac_sha256.h"

#define DRAW_SEED_LEN	32
#define DRAW_DIGEST_LEN 32
#define DRAW_MSG_LEN	(17 + 4 + DRAW_DIGEST_LEN + 8) /* key(user)'s message, tag first */

/* SHA-256(seed): the commitment published before the pre-queue opens. */
void draw_commitment(const uint8_t seed[DRAW_SEED_LEN], uint8_t out[DRAW_DIGEST_LEN]);

/*
 * The digest of the entrant list: users (n of them, 1..2^63-1) must be sorted ascending and
 * distinct. Returns 0, -EINVAL when they are not, or -ENOMEM (out untouched either way).
 */
int draw_entrants_digest(
	uint32_t event, const uint64_t *users, size_t n, uint8_t out[DRAW_DIGEST_LEN]);

/* The 64-bit rank key of user: the first 8 bytes of key(user) above, big-endian. */
uint64_t draw_rank_key(const uint8_t seed[DRAW_SEED_LEN], uint32_t event,
	const uint8_t digest[DRAW_DIGEST_LEN], uint64_t user);

/*
 * The rank keys of one draw (seed, event, digest fixed), one user after another: the seed's
 * HMAC pads and the message's fixed part are prepared once, so a key costs the MAC's three
 * SHA-256 blocks only. As secret as the seed until the draw is done: wipe it after use.
 */
struct draw_ranker {
	struct hmac_sha256_key k;
	uint8_t msg[DRAW_MSG_LEN];
};

/* Prepares r for the draw of (seed, event, digest). */
void draw_ranker_init(struct draw_ranker *r, const uint8_t seed[DRAW_SEED_LEN], uint32_t event,
	const uint8_t digest[DRAW_DIGEST_LEN]);

/* draw_rank_key(seed, event, digest, user) for r's draw. */
uint64_t draw_ranker_key(struct draw_ranker *r, uint64_t user);

/* Overwrites r with zeros in a way the compiler cannot drop. */
void draw_ranker_wipe(struct draw_ranker *r);

/*
 * Puts users (n distinct entrants, any order) in rank order, in place: users[0] has rank 1.
 * Returns 0, or -ENOMEM (users unchanged). About 0.3 µs an entrant plus the sort.
 */
int draw_order(const uint8_t seed[DRAW_SEED_LEN], uint32_t event,
	const uint8_t digest[DRAW_DIGEST_LEN], uint64_t *users, size_t n);

/* Seeds, commitments and digests are written and read as hex with common/hex.h. */

#endif
