/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_SIPHASH_H
#define FG_SIPHASH_H
/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012): a keyed
 * 64-bit PRF that is fast on the short, fixed-size inputs we MAC per packet.
 *
 * siphash24() takes any byte string (receipts, device ids).
 * siphash24_2w() and siphash24_3w() hash exactly 16 and 24 bytes given as 64-bit words; they
 * return what siphash24() returns for those words stored little-endian, without touching
 * memory, so the per-packet caller never builds a buffer.
 */
#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A 128-bit SipHash key: k0 is key bytes 0..7, k1 bytes 8..15, both read little-endian. */
struct sipkey {
	uint64_t k0;
	uint64_t k1;
};

#define SIPHASH_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

/* The SipRound of the paper, section 2.1. */
#define SIPHASH_ROUND(v0, v1, v2, v3)      \
	do {                               \
		v0 += v1;                  \
		v1 = SIPHASH_ROTL(v1, 13); \
		v1 ^= v0;                  \
		v0 = SIPHASH_ROTL(v0, 32); \
		v2 += v3;                  \
		v3 = SIPHASH_ROTL(v3, 16); \
		v3 ^= v2;                  \
		v0 += v3;                  \
		v3 = SIPHASH_ROTL(v3, 21); \
		v3 ^= v0;                  \
		v2 += v1;                  \
		v1 = SIPHASH_ROTL(v1, 17); \
		v1 ^= v2;                  \
		v2 = SIPHASH_ROTL(v2, 32); \
	} while (0)

struct siphash_state {
	uint64_t v0, v1, v2, v3;
};

static inline void
siphash_begin(struct siphash_state *s, const struct sipkey *k)
{
	/* "somepseudorandomlygeneratedbytes", the paper's initialisation constants. */
	s->v0 = k->k0 ^ UINT64_C(0x736f6d6570736575);
	s->v1 = k->k1 ^ UINT64_C(0x646f72616e646f6d);
	s->v2 = k->k0 ^ UINT64_C(0x6c7967656e657261);
	s->v3 = k->k1 ^ UINT64_C(0x7465646279746573);
}

/* Compression: c = 2 SipRounds per 64-bit message block. */
static inline void
siphash_block(struct siphash_state *s, uint64_t m)
{
	uint64_t v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3;

	v3 ^= m;
	SIPHASH_ROUND(v0, v1, v2, v3);
	SIPHASH_ROUND(v0, v1, v2, v3);
	v0 ^= m;
	s->v0 = v0;
	s->v1 = v1;
	s->v2 = v2;
	s->v3 = v3;
}

/* Finalisation: d = 4 SipRounds. */
static inline uint64_t
siphash_end(struct siphash_state *s)
{
	uint64_t v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3;

	v2 ^= 0xff;
	SIPHASH_ROUND(v0, v1, v2, v3);
	SIPHASH_ROUND(v0, v1, v2, v3);
	SIPHASH_ROUND(v0, v1, v2, v3);
	SIPHASH_ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* The 8 bytes at p as a little-endian word: one load (a loop of byte loads was not merged into
 * one by gcc -O2, and cost about 2 cycles a byte of every receipt and device id hashed). */
static inline uint64_t
siphash_load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/*
 * Builds a key from 16 bytes as the paper does (two little-endian words), so the key means the
 * same thing on every host.
 */
static inline struct sipkey
siphash_key_from_bytes(const uint8_t bytes[16])
{
	struct sipkey k = {siphash_load_le64(bytes), siphash_load_le64(bytes + 8)};

	return k;
}

/* SipHash-2-4 of len bytes at msg under key k (msg may be NULL when len is 0). Cannot fail. */
static inline uint64_t
siphash24(const struct sipkey *k, const void *msg, size_t len)
{
	const uint8_t *p = msg;
	struct siphash_state s;
	uint64_t last = (uint64_t)len << 56;
	size_t full = len & ~(size_t)7;

	siphash_begin(&s, k);
	for (size_t i = 0; i < full; i += 8)
		siphash_block(&s, siphash_load_le64(p + i));
	/* The last block carries the 0..7 leftover bytes and the length modulo 256. With at
	 * least 8 bytes, they are the top bytes of the last 8, read as one word. */
	if (len >= 8 && (len & 7) != 0)
		last |= siphash_load_le64(p + len - 8) >> (64 - 8 * (len & 7));
	else
		for (size_t i = 0; i < (len & 7); i++)
			last |= (uint64_t)p[full + i] << (8 * i);
	siphash_block(&s, last);
	return siphash_end(&s);
}

/*
 * SipHash-2-4 of the 16 bytes w0, w1 (each stored little-endian), i.e. siphash24() of that
 * buffer. No memory access; cannot fail.
 */
static inline uint64_t
siphash24_2w(const struct sipkey *k, uint64_t w0, uint64_t w1)
{
	struct siphash_state s;

	siphash_begin(&s, k);
	siphash_block(&s, w0);
	siphash_block(&s, w1);
	siphash_block(&s, (uint64_t)16 << 56);
	return siphash_end(&s);
}

/*
 * SipHash-2-4 of the 24 bytes w0, w1, w2 (each stored little-endian), i.e. siphash24() of that
 * buffer. No memory access; cannot fail.
 */
static inline uint64_t
siphash24_3w(const struct sipkey *k, uint64_t w0, uint64_t w1, uint64_t w2)
{
	struct siphash_state s;

	siphash_begin(&s, k);
	siphash_block(&s, w0);
	siphash_block(&s, w1);
	siphash_block(&s, w2);
	siphash_block(&s, (uint64_t)24 << 56);
	return siphash_end(&s);
}

#endif
