/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_SHA256_NI_H
#define FG_COMMON_SHA256_NI_H
/*
 * The SHA-256 compression (FIPS 180-4) with SHA256RNDS2/MSG1/MSG2 as Intel documents them, for
 * the engines that use it (common/hmac_sha256_ni.c, common/pow.c): the eight chaining values
 * live in two vectors, ABEF and CDGH; each pair of rounds takes two message words plus
 * constants; MSG1/MSG2 extend the schedule four words at a time. x86-64 only: include it under
 * `#if defined(__x86_64__)` and call it only where hmac_sha256_ni_usable() says the CPU can.
 */
#include <stdint.h>

#include <immintrin.h>

/* SHA-NI with the SSSE3 and SSE4.1 instructions around it (every CPU with SHA-NI has them). */
#define NI_SSE	  "sha,ssse3,sse4.1"
#define NI_INLINE __attribute__((target(NI_SSE), always_inline)) static inline

/* FIPS 180-4 §4.2.2 */
static const uint32_t ni_k[64] __attribute__((aligned(16))) = {0x428a2f98, 0x71374491, 0xb5c0fbcf,
	0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
	0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1,
	0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351,
	0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb,
	0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
	0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
	0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814,
	0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

/* The chaining values h[0..8) (A..H) as ABEF and CDGH. */
NI_INLINE void
ni_state_load(const uint32_t h[8], __m128i *abef, __m128i *cdgh)
{
	__m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0xb1);
	__m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(h + 4)), 0x1b);

	*abef = _mm_alignr_epi8(dcba, hgfe, 8);
	*cdgh = _mm_blend_epi16(hgfe, dcba, 0xf0);
}

/* ABEF and CDGH back as two vectors of A B C D and E F G H (word 0 first). */
NI_INLINE void
ni_state_words(__m128i abef, __m128i cdgh, __m128i *abcd, __m128i *efgh)
{
	__m128i feba = _mm_shuffle_epi32(abef, 0x1b);
	__m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1);

	*abcd = _mm_blend_epi16(feba, dchg, 0xf0);
	*efgh = _mm_alignr_epi8(dchg, feba, 8);
}

/* One compression of the block whose message words W0..W15 are w0..w3 (four each). */
NI_INLINE void
ni_compress(__m128i *abef, __m128i *cdgh, __m128i w0, __m128i w1, __m128i w2, __m128i w3)
{
	__m128i s0 = *abef, s1 = *cdgh, m[4] = {w0, w1, w2, w3};

#pragma GCC unroll 16
	for (int g = 0; g < 16; g++) {
		__m128i w = m[g & 3];

		if (g >= 4) {
			/* W[t] for the next four t from W[t-16..t-13], W[t-7..t-4], W[t-4..t-1]. */
			w = _mm_sha256msg1_epu32(m[g & 3], m[(g + 1) & 3]);
			w = _mm_add_epi32(w, _mm_alignr_epi8(m[(g + 3) & 3], m[(g + 2) & 3], 4));
			w = _mm_sha256msg2_epu32(w, m[(g + 3) & 3]);
			m[g & 3] = w;
		}
		__m128i x = _mm_add_epi32(w, _mm_load_si128((const __m128i *)(ni_k + 4 * g)));

		s1 = _mm_sha256rnds2_epu32(s1, s0, x);
		s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(x, 0x0e));
	}
	*abef = _mm_add_epi32(*abef, s0);
	*cdgh = _mm_add_epi32(*cdgh, s1);
}

/* Big-endian words from bytes, and back. */
#define NI_BE _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL)

/* The initial hash value H(0) of SHA-256 (FIPS 180-4 §5.3.3), as ABEF and CDGH. */
#define NI_H0_ABEF _mm_set_epi32(0x6a09e667, (int)0xbb67ae85, 0x510e527f, (int)0x9b05688c)
#define NI_H0_CDGH _mm_set_epi32(0x3c6ef372, (int)0xa54ff53a, 0x1f83d9ab, 0x5be0cd19)

#endif
