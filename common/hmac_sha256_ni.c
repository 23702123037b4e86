/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SHA-256 (FIPS 180-4) compressions with SHA256RNDS2/MSG1/MSG2 as Intel documents them: the
 * eight chaining values live in two vectors, ABEF and CDGH; each pair of rounds takes two
 * message words plus constants; MSG1/MSG2 extend the schedule four words at a time.
 * See hmac_sha256_ni.h for why and when.
 */
#include "common/hmac_sha256_ni.h"

#if defined(__x86_64__)

#include <cpuid.h>
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

/* The inner hash's full blocks of msg; *p and *r are left at the tail (r < 64 bytes). */
NI_INLINE void
ni_inner_blocks(const struct hmac_sha256_key *key, const uint8_t **p, size_t *r, __m128i *abef,
	__m128i *cdgh)
{
	const __m128i be = NI_BE;

	/* H(K ^ ipad || msg): the pad block already in key->inner. */
	ni_state_load(key->inner, abef, cdgh);
	for (; *r >= HMAC_SHA256_BLOCK; *r -= HMAC_SHA256_BLOCK, *p += HMAC_SHA256_BLOCK)
		ni_compress(abef, cdgh, _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)*p), be),
			_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(*p + 16)), be),
			_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(*p + 32)), be),
			_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(*p + 48)), be));
}

/*
 * The rest of the MAC from the tail's bytes c[0..4) (the r < 64 bytes left, 0x80, zeros):
 * the length, the last inner block(s), the outer block, the digest to out.
 */
NI_INLINE void
ni_finish(const struct hmac_sha256_key *key, size_t len, size_t r, __m128i c[4], __m128i abef,
	__m128i cdgh, uint8_t out[HMAC_SHA256_LEN])
{
	const __m128i be = NI_BE;
	uint64_t bits = ((uint64_t)HMAC_SHA256_BLOCK + len) * 8;
	__m128i abcd, efgh;

	if (r + 9 <= HMAC_SHA256_BLOCK) {
		/* The length fits behind: the last 8 bytes of this block. */
		c[3] = _mm_insert_epi64(c[3], (long long)__builtin_bswap64(bits), 1);
		ni_compress(&abef, &cdgh, _mm_shuffle_epi8(c[0], be), _mm_shuffle_epi8(c[1], be),
			_mm_shuffle_epi8(c[2], be), _mm_shuffle_epi8(c[3], be));
	} else {
		/* It does not: one more block of zeros and the length (as words W14, W15). */
		ni_compress(&abef, &cdgh, _mm_shuffle_epi8(c[0], be), _mm_shuffle_epi8(c[1], be),
			_mm_shuffle_epi8(c[2], be), _mm_shuffle_epi8(c[3], be));
		ni_compress(&abef, &cdgh, _mm_setzero_si128(), _mm_setzero_si128(),
			_mm_setzero_si128(),
			_mm_set_epi32((int)(uint32_t)bits, (int)(uint32_t)(bits >> 32), 0, 0));
	}
	ni_state_words(abef, cdgh, &abcd, &efgh);

	/* Outer hash: H(K ^ opad || inner digest), one block whose first eight message words
	 * are the digest's words themselves, then 0x80 and the length of 96 bytes. */
	ni_state_load(key->outer, &abef, &cdgh);
	ni_compress(&abef, &cdgh, abcd, efgh, _mm_set_epi32(0, 0, 0, (int)0x80000000u),
		_mm_set_epi32((HMAC_SHA256_BLOCK + HMAC_SHA256_LEN) * 8, 0, 0, 0));
	ni_state_words(abef, cdgh, &abcd, &efgh);
	_mm_storeu_si128((__m128i *)out, _mm_shuffle_epi8(abcd, be));
	_mm_storeu_si128((__m128i *)(out + 16), _mm_shuffle_epi8(efgh, be));
}

/*
 * Shuffle controls for a partial chunk of the tail: loadu(ni_slide + 16 - k) moves bytes
 * 16 - k .. 15 of a vector to 0 .. k - 1 and clears the rest (PSHUFB clears a lane whose
 * control has the top bit); loadu(ni_mark + 16 - k) has 0x80 at byte k alone.
 */
static const uint8_t ni_slide[32] __attribute__((aligned(32))) = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
	11, 12, 13, 14, 15, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80};
static const uint8_t ni_mark[32] __attribute__((aligned(32))) = {[16] = 0x80};

__attribute__((target(NI_SSE))) void
hmac_sha256_ni(const struct hmac_sha256_key *key, const void *msg, size_t len,
	uint8_t out[HMAC_SHA256_LEN])
{
	const uint8_t *p = msg;
	size_t r = len;
	__m128i abef, cdgh, c[4];

	ni_inner_blocks(key, &p, &r, &abef, &cdgh);
	if (len >= 16) {
		/* Whole chunks as they are, the partial one from the 16 bytes that end where msg
		 * ends (in msg, since it has 16), slid into place: nothing is stored to be loaded
		 * back, and nothing past msg is read. */
		for (int i = 0; i < 4; i++) {
			long k = (long)r - 16 * i;

			if (k >= 16)
				c[i] = _mm_loadu_si128((const __m128i *)(p + 16 * i));
			else if (k >= 0)
				c[i] = _mm_or_si128(
					_mm_shuffle_epi8(
						_mm_loadu_si128((const __m128i *)(p + r - 16)),
						_mm_loadu_si128(
							(const __m128i *)(ni_slide + 16 - k))),
					_mm_loadu_si128((const __m128i *)(ni_mark + 16 - k)));
			else
				c[i] = _mm_setzero_si128();
		}
	} else {
		/* A message of under 16 bytes: through a buffer. */
		_Alignas(16) uint8_t t[HMAC_SHA256_BLOCK] = {0};

		for (size_t i = 0; i < r; i++)
			t[i] = p[i];
		t[r] = 0x80;
		for (int i = 0; i < 4; i++)
			c[i] = _mm_load_si128((const __m128i *)(t + 16 * i));
	}
	ni_finish(key, len, r, c, abef, cdgh, out);
}

bool
hmac_sha256_ni_usable(void)
{
	unsigned a, b, c, d;

	if (__get_cpuid_max(0, NULL) < 7 || !__get_cpuid(1, &a, &b, &c, &d))
		return false;
	if (!(c & bit_SSSE3) || !(c & bit_SSE4_1))
		return false;
	__cpuid_count(7, 0, a, b, c, d);
	return (b & bit_SHA) != 0;
}

#else /* not x86-64: the OpenSSL-based engine only */

bool
hmac_sha256_ni_usable(void)
{
	return false;
}

void
hmac_sha256_ni(const struct hmac_sha256_key *key, const void *msg, size_t len,
	uint8_t out[HMAC_SHA256_LEN])
{
	(void)key;
	(void)msg;
	(void)len;
	(void)out;
	__builtin_trap(); /* never chosen: hmac_sha256_ni_usable() says no */
}

#endif
