/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proof-of-work check and solver as one SHA-256 compression per nonce (pow.h). The message
 * (prefix || nonce, at most 52 bytes), the 0x80 after it, zeros and its length in bits fill one
 * 64-byte block (FIPS 180-4 §5.1.1), and the hash is the initial value plus that block's
 * compression; only its first word matters, since a challenge has at most 30 bits.
 *
 * Two engines, chosen once at start like HMAC-SHA256's (common/hmac_sha256.c): SHA-NI
 * (sha256_ni.h) with the block built in registers from loads of the prefix and the nonce, and
 * OpenSSL's compression function on a block padded in memory elsewhere. OpenSSL's one-shot
 * SHA256() (EVP: a context allocated and providers dispatched per call) cost ten times more.
 */
#define OPENSSL_API_COMPAT 10101 /* SHA256_Transform(): see common/hmac_sha256.c */

#include "common/pow.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include <openssl/sha.h>

#include "common/hmac_sha256_ni.h"

#define POW_BLOCK 64

_Static_assert(POW_PREFIX_MAX + POW_SOLUTION_MAX + 9 <= POW_BLOCK,
	"a prefix and a solution fit one block with the padding");

/* Whether the arguments of a check are well formed: lengths in range, the nonce digits only. */
static inline bool
pow_args_ok(const char *prefix, size_t plen, const char *sol, size_t slen)
{
	if (prefix == NULL || sol == NULL || plen == 0 || plen > POW_PREFIX_MAX || slen == 0 ||
		slen > POW_SOLUTION_MAX)
		return false;
	for (size_t i = 0; i < slen; i++)
		if ((unsigned char)(sol[i] - '0') > 9)
			return false;
	return true;
}

/* The block of prefix || sol, padded: bytes, 0x80, zeros, the length in bits (big-endian). */
static void
pow_block(const char *prefix, size_t plen, const char *sol, size_t slen, uint8_t block[POW_BLOCK])
{
	uint64_t bits = htobe64((uint64_t)(plen + slen) * 8);

	memset(block, 0, POW_BLOCK);
	memcpy(block, prefix, plen);
	memcpy(block + plen, sol, slen);
	block[plen + slen] = 0x80;
	memcpy(block + POW_BLOCK - 8, &bits, 8);
}

/* ---- the portable engine: OpenSSL's compression function ---------------------------------- */

static uint32_t
pow_openssl_word(const char *prefix, size_t plen, const char *sol, size_t slen)
{
	_Alignas(64) uint8_t block[POW_BLOCK];
	SHA256_CTX c;

	pow_block(prefix, plen, sol, slen, block);
	SHA256_Init(&c); /* fails only for a NULL context */
	SHA256_Transform(&c, block);
	return c.h[0];
}

/*
 * The smallest d in 0..9 such that the nonce text num[0..len) with its last digit d solves
 * the challenge at bits (1..30), or -1. num ends in '0'.
 */
static int
pow_openssl_batch(const char *prefix, size_t plen, const char *num, size_t len, unsigned bits)
{
	_Alignas(64) uint8_t block[POW_BLOCK];
	SHA256_CTX c;

	pow_block(prefix, plen, num, len, block);
	for (int d = 0; d < 10; d++) {
		block[plen + len - 1] = (uint8_t)('0' + d);
		SHA256_Init(&c);
		SHA256_Transform(&c, block);
		if (c.h[0] >> (32 - bits) == 0)
			return d;
	}
	return -1;
}

/* ---- SHA-NI ----------------------------------------------------------------------------- */

#if defined(__x86_64__)

#include "common/sha256_ni.h"

/*
 * Byte moves for PSHUFB, which clears a lane whose control has the top bit:
 * loadu(pow_shift + 16 - r) moves a vector's bytes up by r (0..16), clearing the r below;
 * loadu(pow_shift + 32 - r) moves its top r bytes down to 0..r-1 and clears the rest.
 * loadu(pow_mark + 16 - k) has 0x80 at byte k alone.
 */
static const uint8_t pow_shift[48] __attribute__((aligned(16))) = {0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 1, 2, 3, 4, 5, 6, 7, 8,
	9, 10, 11, 12, 13, 14, 15, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80};
static const uint8_t pow_mark[32] __attribute__((aligned(16))) = {[16] = 0x80};

#define POW_SHL(r)   _mm_loadu_si128((const __m128i *)(pow_shift + 16 - (r)))
#define POW_SPILL(r) _mm_loadu_si128((const __m128i *)(pow_shift + 32 - (r)))

/*
 * The n (0..16) bytes at p in bytes 0..n-1 of a vector, zeros above; reads p[0..n) only.
 * Two loads that overlap where n is not a power of two: the bytes they share are the same, so
 * OR-ing them after moving the second into place is exact.
 */
NI_INLINE __m128i
pow_ni_load(const char *p, size_t n)
{
	if (n >= 16)
		return _mm_loadu_si128((const __m128i *)p);
	if (n >= 8) {
		uint64_t a, b;

		memcpy(&a, p, 8);
		memcpy(&b, p + n - 8, 8);
		return _mm_or_si128(_mm_cvtsi64_si128((long long)a),
			_mm_shuffle_epi8(_mm_cvtsi64_si128((long long)b), POW_SHL(n - 8)));
	}
	uint64_t x;

	if (n >= 4) {
		uint32_t a, b;

		memcpy(&a, p, 4);
		memcpy(&b, p + n - 4, 4);
		x = a | (uint64_t)b << (8 * (n - 4));
	} else if (n > 0) {
		x = (uint64_t)(uint8_t)p[0] | (uint64_t)(uint8_t)p[n / 2] << (8 * (n / 2)) |
		    (uint64_t)(uint8_t)p[n - 1] << (8 * (n - 1));
	} else {
		x = 0;
	}
	return _mm_cvtsi64_si128((long long)x);
}

/*
 * The message words W0..W15 of the padded block of prefix || sol in w[0..4) (four a vector),
 * built in registers: nothing stored to be loaded back, nothing past either text read.
 */
NI_INLINE void
pow_ni_words(const char *prefix, size_t plen, const char *sol, size_t slen, __m128i w[4])
{
	const __m128i be = NI_BE;
	__m128i c[4], s, s2;

	if (plen < 16) {
		/* Not a token's MAC text: through memory. */
		_Alignas(16) uint8_t block[POW_BLOCK];

		pow_block(prefix, plen, sol, slen, block);
		for (int i = 0; i < 4; i++)
			w[i] = _mm_shuffle_epi8(
				_mm_load_si128((const __m128i *)(block + 16 * i)), be);
		return;
	}
	/* The prefix in c0 and c1: its first 16 bytes, then its last r = plen - 16 (0..16). */
	size_t r = plen - 16;

	c[0] = _mm_loadu_si128((const __m128i *)prefix);
	c[1] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(prefix + r)), POW_SPILL(r));
	/* The nonce (s: its first 16 digits, s2 the rest) and the 0x80 after it. */
	s = pow_ni_load(sol, slen < 16 ? slen : 16);
	s2 = slen > 16 ? pow_ni_load(sol + 16, slen - 16) : _mm_setzero_si128();
	if (slen < 16)
		s = _mm_or_si128(s, _mm_loadu_si128((const __m128i *)(pow_mark + 16 - slen)));
	else
		s2 = _mm_or_si128(s2, _mm_loadu_si128((const __m128i *)(pow_mark + 32 - slen)));
	/* s at byte plen = 16 + r: the top of c1 and the bottom of c2; s2 16 bytes later. */
	c[1] = _mm_or_si128(c[1], _mm_shuffle_epi8(s, POW_SHL(r)));
	c[2] = _mm_or_si128(_mm_shuffle_epi8(s, POW_SPILL(r)), _mm_shuffle_epi8(s2, POW_SHL(r)));
	c[3] = _mm_shuffle_epi8(s2, POW_SPILL(r));
	for (int i = 0; i < 4; i++)
		w[i] = _mm_shuffle_epi8(c[i], be);
	/* The length in bits: W15 (W14, its high half, is 0 for 52 bytes). */
	w[3] = _mm_or_si128(w[3], _mm_set_epi32((int)((plen + slen) * 8), 0, 0, 0));
}

/* The first word of SHA-256 of the one block whose message words are w: A of H(0) + H(block). */
NI_INLINE uint32_t
pow_ni_compress(__m128i w0, __m128i w1, __m128i w2, __m128i w3)
{
	__m128i abef = NI_H0_ABEF, cdgh = NI_H0_CDGH;

	ni_compress(&abef, &cdgh, w0, w1, w2, w3);
	return (uint32_t)_mm_extract_epi32(abef, 3);
}

__attribute__((target(NI_SSE))) static uint32_t
pow_ni_word(const char *prefix, size_t plen, const char *sol, size_t slen)
{
	__m128i w[4];

	pow_ni_words(prefix, plen, sol, slen, w);
	return pow_ni_compress(w[0], w[1], w[2], w[3]);
}

/*
 * pow_openssl_batch() with SHA-NI: the block of the nonce ending in '0' is built once, and
 * each next nonce adds 1 to its last digit's byte in the message words. Two nonces at a time:
 * a compression is a chain of dependent SHA256RNDS2, so two independent ones share the time.
 */
__attribute__((target(NI_SSE))) static int
pow_ni_batch(const char *prefix, size_t plen, const char *num, size_t len, unsigned bits)
{
	_Alignas(16) uint32_t one[16] = {0};
	size_t q = plen + len - 1; /* the last digit's byte in the block */
	__m128i w[4], inc[4], x[4], y[4];

	pow_ni_words(prefix, plen, num, len, w);
	one[q / 4] = 1u << (8 * (3 - q % 4)); /* a message word is big-endian */
	for (int i = 0; i < 4; i++)
		inc[i] = _mm_load_si128((const __m128i *)(one + 4 * i));
	for (int d = 0; d < 10; d += 2) {
		for (int i = 0; i < 4; i++) {
			x[i] = w[i];
			y[i] = _mm_add_epi32(w[i], inc[i]);
			w[i] = _mm_add_epi32(y[i], inc[i]);
		}
		uint32_t a = pow_ni_compress(x[0], x[1], x[2], x[3]);
		uint32_t b = pow_ni_compress(y[0], y[1], y[2], y[3]);

		if (a >> (32 - bits) == 0)
			return d;
		if (b >> (32 - bits) == 0)
			return d + 1;
	}
	return -1;
}

#else /* not x86-64: OpenSSL's engine only */

static uint32_t
pow_ni_word(const char *prefix, size_t plen, const char *sol, size_t slen)
{
	(void)prefix, (void)plen, (void)sol, (void)slen;
	__builtin_trap(); /* never chosen: hmac_sha256_ni_usable() says no */
}

static int
pow_ni_batch(const char *prefix, size_t plen, const char *num, size_t len, unsigned bits)
{
	(void)prefix, (void)plen, (void)num, (void)len, (void)bits;
	__builtin_trap();
}

#endif

/* ---- the engine in use ------------------------------------------------------------------ */

static bool
pow_openssl_usable(void)
{
	return true;
}

/* The engines, the fastest first: pow_choose() takes the first this CPU can run. */
static const struct pow_engine {
	const char *name;
	uint32_t (*word)(const char *prefix, size_t plen, const char *sol, size_t slen);
	int (*batch)(const char *prefix, size_t plen, const char *num, size_t len, unsigned bits);
	bool (*usable)(void);
} pow_engines[] = {
	{"sha-ni", pow_ni_word, pow_ni_batch, hmac_sha256_ni_usable},
	{"openssl", pow_openssl_word, pow_openssl_batch, pow_openssl_usable},
};

#define POW_N_ENGINES (sizeof(pow_engines) / sizeof(pow_engines[0]))

/* Chosen once before main(); pow_set_engine() changes it for tests. Until then, OpenSSL's. */
static const struct pow_engine *pow_cur = &pow_engines[POW_N_ENGINES - 1];

__attribute__((constructor)) static void
pow_choose(void)
{
	for (size_t i = 0; i < POW_N_ENGINES; i++) {
		if (pow_engines[i].usable()) {
			pow_cur = &pow_engines[i];
			return;
		}
	}
}

const char *
pow_engine(void)
{
	return pow_cur->name;
}

int
pow_set_engine(const char *name)
{
	for (size_t i = 0; name != NULL && i < POW_N_ENGINES; i++) {
		if (strcmp(name, pow_engines[i].name) != 0)
			continue;
		if (!pow_engines[i].usable())
			return -ENOTSUP;
		pow_cur = &pow_engines[i];
		return 0;
	}
	return -EINVAL;
}

/* ---- the API ---------------------------------------------------------------------------- */

int
pow_digest_word(const char *prefix, size_t plen, const char *sol, size_t slen, uint32_t *word)
{
	if (!pow_args_ok(prefix, plen, sol, slen) || word == NULL)
		return -EINVAL;
	*word = pow_cur->word(prefix, plen, sol, slen);
	return 0;
}

bool
pow_check(const char *prefix, size_t plen, const char *sol, size_t slen, unsigned bits)
{
	if (bits > POW_BITS_MAX || !pow_args_ok(prefix, plen, sol, slen))
		return false;
	/* Shifting a 32-bit word by 32 is undefined: 0 bits asks nothing of the digest. */
	return bits == 0 || pow_cur->word(prefix, plen, sol, slen) >> (32 - bits) == 0;
}

/*
 * Adds 1 to the decimal number num[0..*len) in place ("" is 0, "9" becomes "10"). Returns
 * false when the result would not fit max digits.
 */
static bool
pow_increment(char *num, size_t *len, size_t max)
{
	size_t i = *len;

	while (i > 0 && num[i - 1] == '9')
		num[--i] = '0';
	if (i > 0) {
		num[i - 1]++;
		return true;
	}
	if (*len + 1 > max)
		return false;
	/* 99...9 + 1: a 1 and as many zeros. */
	num[0] = '1';
	memset(num + 1, '0', *len);
	(*len)++;
	return true;
}

int
pow_solve(const char *prefix, size_t plen, unsigned bits, uint64_t max_tries,
	char out[POW_SOLUTION_MAX + 1], uint64_t *tries)
{
	/* The nonces are tried in batches of ten, head * 10 + 0..9: head's digits ("" for 0),
	 * then the last digit, which the engine varies. */
	char num[POW_SOLUTION_MAX + 1];
	size_t head = 0;

	if (prefix == NULL || plen == 0 || plen > POW_PREFIX_MAX || bits > POW_BITS_MAX ||
		out == NULL)
		return -EINVAL;
	uint64_t first = 0;

	for (; first < max_tries; first += 10) {
		int d;

		num[head] = '0';
		d = bits == 0 ? 0 : pow_cur->batch(prefix, plen, num, head + 1, bits);
		if (d >= 0 && first + (uint64_t)d < max_tries) {
			num[head] = (char)('0' + d);
			num[head + 1] = '\0';
			memcpy(out, num, head + 2);
			if (tries != NULL)
				*tries = first + (uint64_t)d + 1;
			return 0;
		}
		if (!pow_increment(num, &head, POW_SOLUTION_MAX - 1)) {
			first += 10; /* every nonce of POW_SOLUTION_MAX digits tried */
			break;
		}
	}
	if (tries != NULL)
		*tries = first < max_tries ? first : max_tries;
	return -EAGAIN;
}
