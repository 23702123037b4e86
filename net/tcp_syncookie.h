/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TCP_SYNCOOKIE_H
#define FG_TCP_SYNCOOKIE_H
/*
 * Stateless SYN cookies: the ISN of our SYN-ACK carries everything we need to accept the
 * client's next segment, so a SYN costs no memory (DESIGN.md "TCP is stateless").
 *
 * Cookie layout (a 32-bit sequence number, host order):
 *   [31..4]  28-bit MAC: SipHash-2-4 under the key of the time slot of
 *            (saddr, daddr, sport, dport, client ISN, MSS index), see syncookie_make()
 *   [3..2]   time slot modulo 4
 *   [1..0]   MSS index into {536, 1220, 1440, 1460}
 * slot = now_s / slot_seconds; the slot's 128-bit key is SipHash(master, "fgsynkey" | slot | i)
 * for i = 0, 1 (three little-endian words), derived once per slot by syncookie_tick().
 * The MAC hashes three little-endian words: saddr << 32 | daddr,
 * sport << 48 | dport << 32 | client ISN, and the MSS index; the low 28 bits are kept.
 *
 * Security:
 * - Forgery: without the master key, an ACK is accepted with probability 2^-28 per try. The
 *   slot and MSS bits are free for the attacker to set but each value selects a different key
 *   or MAC input, so they buy nothing: every forged ACK is one guess. At 1 Mpps of forged
 *   ACKs that is one accepted segment every ~4.5 minutes, which gets no further than any
 *   client that completed the handshake: tokens and rate limits still apply to it.
 * - Replay window: a cookie is accepted in the slot it was made in and the next one, i.e. for
 *   between one and two slots. After that its slot key is gone, so no clock is compared and no
 *   state is kept. Only the slot modulo 4 is sent; a cookie exactly 4 slots old has the right
 *   slot bits but not the right key, and fails its MAC like a forgery.
 * - The client's ISN is hashed so that a cookie is valid for one connection attempt only: a
 *   seen or reused cookie cannot be paired with another sequence space on the same 4-tuple,
 *   and a client that reconnects from the same port gets a new cookie. It also lets the
 *   pipeline trust the data segment's sequence number (ISN + 1) without having stored it.
 *
 * Each worker owns its own context (no sharing, no locks). Contexts initialised with the same
 * master key and slot length and ticked with the same clock produce and accept the same
 * cookies, so the clock should be one that every worker (and every dataplane sharing the
 * secret) agrees on, e.g. Unix seconds.
 */
#include <stdint.h>

#include <rte_branch_prediction.h>

#include "common/siphash.h"

#define SYNCOOKIE_MSS_COUNT 4

struct syncookie_ctx {
	/* keys[s & 3] is the key of slot s; valid only for s = cur_slot and cur_slot - 1. */
	struct sipkey keys[4];
	uint64_t cur_slot;
	uint64_t slot_start_s; /* first second of cur_slot */
	uint32_t slot_seconds;
	uint8_t valid_mask; /* bit (s & 3) set for s = cur_slot, cur_slot - 1 */
	struct sipkey master;
};

/*
 * Sets up ctx for master key `master` (16 bytes) and slots of slot_seconds seconds, with the
 * clock at now_s. Returns 0, or -EINVAL (ctx untouched) if an argument is NULL or
 * slot_seconds is 0.
 */
int syncookie_init(
	struct syncookie_ctx *ctx, const uint8_t master[16], uint32_t slot_seconds, uint64_t now_s);

/* Out-of-line part of syncookie_tick(): moves ctx to the slot of now_s and derives its keys. */
void syncookie_tick_slow(struct syncookie_ctx *ctx, uint64_t now_s);

/*
 * Advances ctx to the clock now_s (same unit and origin as given to syncookie_init()). One
 * compare when the slot did not change; a few hashes when it did. Call once per burst.
 */
static inline void
syncookie_tick(struct syncookie_ctx *ctx, uint64_t now_s)
{
	/* Unsigned: a clock that went backwards also takes the slow path. */
	if (likely(now_s - ctx->slot_start_s < ctx->slot_seconds))
		return;
	syncookie_tick_slow(ctx, now_s);
}

/* The 28-bit MAC of a cookie; the layout of the hashed words is part of the cookie format. */
static inline uint32_t
syncookie_mac(const struct sipkey *key, uint32_t saddr, uint32_t daddr, uint16_t sport,
	uint16_t dport, uint32_t client_isn, unsigned mss_idx)
{
	uint64_t w0 = (uint64_t)saddr << 32 | daddr;
	uint64_t w1 = (uint64_t)sport << 48 | (uint64_t)dport << 32 | client_isn;

	return (uint32_t)siphash24_3w(key, w0, w1, mss_idx) & 0x0fffffff;
}

/*
 * The cookie (host-order ISN for our SYN-ACK) for a SYN from saddr:sport to daddr:dport
 * (addresses and ports as they are in that SYN, network order) with sequence number
 * client_isn (host order) and MSS index mss_idx (0..3, see syncookie_mss_index(); only its
 * low 2 bits are used). Cannot fail.
 */
static inline uint32_t
syncookie_make(const struct syncookie_ctx *ctx, uint32_t saddr, uint32_t daddr, uint16_t sport,
	uint16_t dport, uint32_t client_isn, unsigned mss_idx)
{
	unsigned s = (unsigned)ctx->cur_slot & 3;

	mss_idx &= 3;
	return syncookie_mac(&ctx->keys[s], saddr, daddr, sport, dport, client_isn, mss_idx) << 4 |
	       s << 2 | mss_idx;
}

/*
 * Checks the segment that completes a handshake: saddr:sport -> daddr:dport as in that
 * segment (the client is the source, network order), client_isn = its sequence number - 1
 * and cookie = its acknowledgement number - 1 (host order). Returns the MSS index 0..3 when
 * the cookie was made by syncookie_make() for exactly these values in the current or the
 * previous slot, else -1.
 */
static inline int
syncookie_check(const struct syncookie_ctx *ctx, uint32_t saddr, uint32_t daddr, uint16_t sport,
	uint16_t dport, uint32_t client_isn, uint32_t cookie)
{
	unsigned s = (cookie >> 2) & 3;
	unsigned mss_idx = cookie & 3;

	if (unlikely(!((ctx->valid_mask >> s) & 1)))
		return -1;
	if (syncookie_mac(&ctx->keys[s], saddr, daddr, sport, dport, client_isn, mss_idx) !=
		cookie >> 4)
		return -1;
	return (int)mss_idx;
}

/*
 * The index of the largest MSS in {536, 1220, 1440, 1460} that is <= client_mss. A client
 * MSS below 536, or 0 for "no MSS option", gives index 0 (536, the RFC 9293 default).
 */
static inline uint8_t
syncookie_mss_index(uint16_t client_mss)
{
	return (uint8_t)((client_mss >= 1220) + (client_mss >= 1440) + (client_mss >= 1460));
}

/* The MSS of index idx (0..3); an index out of range gives the safe minimum 536. */
static inline uint16_t
syncookie_mss_value(unsigned idx)
{
	static const uint16_t mss[SYNCOOKIE_MSS_COUNT] = {536, 1220, 1440, 1460};

	if (unlikely(idx >= SYNCOOKIE_MSS_COUNT))
		return mss[0];
	return mss[idx];
}

#endif
