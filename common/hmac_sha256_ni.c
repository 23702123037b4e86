/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HMAC-SHA256 with the SHA-NI compression of sha256_ni.h. See hmac_sha256_ni.h for why and
 * when.
 */
#include "common/hmac_sha256_ni.h"

#if defined(__x86_64__)

#include <cpuid.h>

#include "common/sha256_ni.h"

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
