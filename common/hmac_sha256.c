/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OpenSSL 3 deprecates the low-level SHA256_* functions in favour of EVP. EVP_MAC allocates
 * contexts and dispatches through providers: several times slower for ~50-byte messages, and
 * an allocation per token is not acceptable on a worker lcore. The low-level functions are
 * still exported (and use SHA-NI); asking for the 1.1.1 API declares them without the
 * deprecation attribute. This must come before any OpenSSL header.
 */
#define OPENSSL_API_COMPAT 10101

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "common/hmac_sha256.h"
#include "common/hmac_sha256_ni.h"

_Static_assert(sizeof(((SHA256_CTX *)0)->h) == sizeof(((struct hmac_sha256_key *)0)->inner),
	"a key state is the h[] of a SHA256_CTX");

/*
 * A MAC is computed with SHA256_Transform() (one compression) on blocks padded here, rather
 * than SHA256_Update/Final on a copied context: Update/Final buffer the message, count bits,
 * cleanse the context and copy it in and out, which costs nearly half a block more for
 * a token-sized message. SHA256_Transform() reads and writes only ctx->h, so a key stores
 * just the two chaining values (64 bytes instead of two 112-byte contexts).
 * FIPS 180-4 §5.1.1: the message, a 1 bit, zeros, then its length in bits as a 64-bit
 * big-endian number, filling a whole number of 64-byte blocks.
 */

/*
 * A SHA-256 block as four 16-byte vectors (GCC vector extension: SSE2 on x86-64, plain words
 * elsewhere). The digest and the outer block are written with 16-byte stores because
 * SHA256_Transform() loads 16 bytes at a time: a load that spans several narrower stores
 * cannot be forwarded from them and waits for them to reach the cache (~10 ns per block here).
 */
typedef uint32_t hmac_v4 __attribute__((vector_size(16)));

struct hmac_block {
	hmac_v4 w[4];
};

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HMAC_BE32(x) __builtin_bswap32(x)
static inline hmac_v4
be_v4(hmac_v4 v)
{
	return v << 24 | (v & 0xff00) << 8 | ((v >> 8) & 0xff00) | v >> 24;
}
#else
#define HMAC_BE32(x) (x)
static inline hmac_v4
be_v4(hmac_v4 v)
{
	return v;
}
#endif

/* Writes the eight state words h as the big-endian bytes of a digest into w[0..1]. */
static inline void
be_words(const uint32_t h[8], hmac_v4 w[2])
{
	hmac_v4 a, b;

	memcpy(&a, h, sizeof(a));
	memcpy(&b, h + 4, sizeof(b));
	w[0] = be_v4(a);
	w[1] = be_v4(b);
}

/*
 * memcpy() of n < 64 bytes as at most two overlapping fixed-size copies, which compile to plain
 * loads and stores. A variable-size memcpy() or memset() here becomes "rep movs"/"rep stos",
 * whose start-up costs about as much as a quarter of a SHA-256 block.
 */
static inline void
copy_short(uint8_t *dst, const uint8_t *src, size_t n)
{
	if (n >= 32) {
		memcpy(dst, src, 32);
		memcpy(dst + n - 32, src + n - 32, 32);
	} else if (n >= 16) {
		memcpy(dst, src, 16);
		memcpy(dst + n - 16, src + n - 16, 16);
	} else if (n >= 8) {
		memcpy(dst, src, 8);
		memcpy(dst + n - 8, src + n - 8, 8);
	} else if (n >= 4) {
		memcpy(dst, src, 4);
		memcpy(dst + n - 4, src + n - 4, 4);
	} else {
		for (size_t i = 0; i < n; i++)
			dst[i] = src[i];
	}
}

static void
pad_state(uint32_t state[8], const uint8_t block[HMAC_SHA256_BLOCK], uint8_t pad)
{
	uint8_t x[HMAC_SHA256_BLOCK];
	SHA256_CTX c;

	for (size_t i = 0; i < sizeof(x); i++)
		x[i] = block[i] ^ pad;
	/* SHA256_Init() fails only for a NULL context; SHA256_Transform() cannot fail. */
	SHA256_Init(&c);
	SHA256_Transform(&c, x);
	memcpy(state, c.h, sizeof(c.h));
	OPENSSL_cleanse(x, sizeof(x));
	OPENSSL_cleanse(&c, sizeof(c));
}

int
hmac_sha256_key_init(struct hmac_sha256_key *key, const void *secret, size_t len)
{
	uint8_t block[HMAC_SHA256_BLOCK] = {0};

	if (key == NULL || (secret == NULL && len != 0))
		return -EINVAL;
	/* RFC 2104 §2: a key longer than the block is replaced by its hash; shorter ones are
	 * zero-padded to the block. */
	if (len > sizeof(block))
		SHA256(secret, len, block);
	else if (len != 0)
		memcpy(block, secret, len);
	pad_state(key->inner, block, 0x36);
	pad_state(key->outer, block, 0x5c);
	OPENSSL_cleanse(block, sizeof(block));
	return 0;
}

/* The engine for CPUs without SHA-NI (hmac_sha256_ni.h): OpenSSL's compression function. */
static void
hmac_sha256_openssl(const struct hmac_sha256_key *key, const void *msg, size_t len,
	uint8_t out[HMAC_SHA256_LEN])
{
	_Alignas(64) uint8_t tail[2 * HMAC_SHA256_BLOCK];
	const uint8_t *m = msg;
	size_t n = len, tail_len;
	uint64_t bits;
	SHA256_CTX c;

	/* Inner hash: H(K ^ ipad || msg); the pad block is already in key->inner. */
	memcpy(c.h, key->inner, sizeof(c.h));
	for (; n >= HMAC_SHA256_BLOCK; n -= HMAC_SHA256_BLOCK, m += HMAC_SHA256_BLOCK)
		SHA256_Transform(&c, m);
	/* The rest, 0x80, zeros and the 8-byte length: one block, or two if 9 bytes do not fit. */
	tail_len = n + 9 <= HMAC_SHA256_BLOCK ? HMAC_SHA256_BLOCK : 2 * HMAC_SHA256_BLOCK;
	memset(tail, 0, HMAC_SHA256_BLOCK);
	if (tail_len > HMAC_SHA256_BLOCK)
		memset(tail + HMAC_SHA256_BLOCK, 0, HMAC_SHA256_BLOCK);
	copy_short(tail, m, n);
	tail[n] = 0x80;
	bits = htobe64(((uint64_t)HMAC_SHA256_BLOCK + len) * 8);
	memcpy(tail + tail_len - 8, &bits, 8);
	SHA256_Transform(&c, tail);
	if (tail_len > HMAC_SHA256_BLOCK)
		SHA256_Transform(&c, tail + HMAC_SHA256_BLOCK);

	/* Outer hash: H(K ^ opad || inner digest), always exactly one more block. */
	struct hmac_block outer;

	be_words(c.h, outer.w);
	outer.w[2] = (hmac_v4){HMAC_BE32(0x80000000u), 0, 0, 0};
	outer.w[3] = (hmac_v4){0, 0, 0, HMAC_BE32((HMAC_SHA256_BLOCK + HMAC_SHA256_LEN) * 8)};
	memcpy(c.h, key->outer, sizeof(c.h));
	SHA256_Transform(&c, (const uint8_t *)&outer);
	be_words(c.h, outer.w);
	memcpy(out, outer.w, HMAC_SHA256_LEN);
}

typedef void hmac_engine_fn(const struct hmac_sha256_key *key, const void *msg, size_t len,
	uint8_t out[HMAC_SHA256_LEN]);

static bool
hmac_openssl_usable(void)
{
	return true;
}

/* The engines, the fastest first: hmac_choose() takes the first this CPU can run. */
static const struct hmac_engine {
	const char *name;
	hmac_engine_fn *fn;
	bool (*usable)(void);
} hmac_engines[] = {
	{"sha-ni", hmac_sha256_ni, hmac_sha256_ni_usable},
	{"openssl", hmac_sha256_openssl, hmac_openssl_usable},
};

#define HMAC_N_ENGINES (sizeof(hmac_engines) / sizeof(hmac_engines[0]))

/* Chosen once before main() (hmac_choose()); hmac_sha256_set_engine() changes it for tests.
 * Until then, OpenSSL's, which every CPU runs. */
static const struct hmac_engine *hmac_cur = &hmac_engines[HMAC_N_ENGINES - 1];

__attribute__((constructor)) static void
hmac_choose(void)
{
	for (size_t i = 0; i < HMAC_N_ENGINES; i++) {
		if (hmac_engines[i].usable()) {
			hmac_cur = &hmac_engines[i];
			return;
		}
	}
}

void
hmac_sha256(const struct hmac_sha256_key *key, const void *msg, size_t len,
	uint8_t out[HMAC_SHA256_LEN])
{
	hmac_cur->fn(key, msg, len, out);
}

const char *
hmac_sha256_engine(void)
{
	return hmac_cur->name;
}

int
hmac_sha256_set_engine(const char *name)
{
	for (size_t i = 0; name != NULL && i < HMAC_N_ENGINES; i++) {
		if (strcmp(name, hmac_engines[i].name) != 0)
			continue;
		if (!hmac_engines[i].usable())
			return -ENOTSUP;
		hmac_cur = &hmac_engines[i];
		return 0;
	}
	return -EINVAL;
}

void
hmac_sha256_key_wipe(struct hmac_sha256_key *key)
{
	if (key != NULL)
		OPENSSL_cleanse(key, sizeof(*key));
}
