/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/draw.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "common/hmac_sha256.h"

static const char entrants_tag[] = "flashgate-entrants-v1";
static const char draw_tag[] = "flashgate-draw-v1";

void
draw_commitment(const uint8_t seed[DRAW_SEED_LEN], uint8_t out[DRAW_DIGEST_LEN])
{
	SHA256(seed, DRAW_SEED_LEN, out);
}

int
draw_entrants_digest(uint32_t event, const uint64_t *users, size_t n, uint8_t out[DRAW_DIGEST_LEN])
{
	EVP_MD_CTX *c;
	uint32_t ev = htobe32(event);
	uint64_t cnt = htobe64((uint64_t)n);
	uint64_t buf[512];
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (users[i] == 0 || users[i] > (uint64_t)INT64_MAX || (i > 0 && users[i] <= users[i - 1]))
			return -EINVAL;
	if ((c = EVP_MD_CTX_new()) == NULL || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(c);
		return -ENOMEM;
	}
	EVP_DigestUpdate(c, entrants_tag, sizeof(entrants_tag) - 1);
	EVP_DigestUpdate(c, &ev, 4);
	EVP_DigestUpdate(c, &cnt, 8);
	for (size_t i = 0; i < n; i++) {
		buf[k++] = htobe64(users[i]);
		if (k == sizeof(buf) / sizeof(buf[0])) {
			EVP_DigestUpdate(c, buf, k * 8);
			k = 0;
		}
	}
	EVP_DigestUpdate(c, buf, k * 8);
	EVP_DigestFinal_ex(c, out, NULL);
	EVP_MD_CTX_free(c);
	return 0;
}

/* The message of key(user) before the user: tag, event and digest; the user's 8 bytes follow. */
struct draw_msg {
	uint8_t b[sizeof(draw_tag) - 1 + 4 + DRAW_DIGEST_LEN + 8];
};

static void
draw_msg_init(struct draw_msg *m, uint32_t event, const uint8_t digest[DRAW_DIGEST_LEN])
{
	uint32_t ev = htobe32(event);

	memcpy(m->b, draw_tag, sizeof(draw_tag) - 1);
	memcpy(m->b + sizeof(draw_tag) - 1, &ev, 4);
	memcpy(m->b + sizeof(draw_tag) - 1 + 4, digest, DRAW_DIGEST_LEN);
}

static uint64_t
draw_key_of(const struct hmac_sha256_key *k, struct draw_msg *m, uint64_t user)
{
	uint64_t u = htobe64(user), top;
	uint8_t mac[HMAC_SHA256_LEN];

	memcpy(m->b + sizeof(m->b) - 8, &u, 8);
	hmac_sha256(k, m->b, sizeof(m->b), mac);
	memcpy(&top, mac, 8);
	return be64toh(top);
}

uint64_t
draw_rank_key(const uint8_t seed[DRAW_SEED_LEN], uint32_t event,
	const uint8_t digest[DRAW_DIGEST_LEN], uint64_t user)
{
	struct hmac_sha256_key k;
	struct draw_msg m;
	uint64_t v;

	hmac_sha256_key_init(&k, seed, DRAW_SEED_LEN);
	draw_msg_init(&m, event, digest);
	v = draw_key_of(&k, &m, user);
	hmac_sha256_key_wipe(&k);
	return v;
}

struct ranked {
	uint64_t key;
	uint64_t user;
};

static int
ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->user < y->user ? -1 : x->user > y->user;
}

int
draw_order(const uint8_t seed[DRAW_SEED_LEN], uint32_t event,
	const uint8_t digest[DRAW_DIGEST_LEN], uint64_t *users, size_t n)
{
	struct ranked *r = n ? malloc(n * sizeof(*r)) : NULL;
	struct hmac_sha256_key k;
	struct draw_msg m;

	if (n != 0 && r == NULL)
		return -ENOMEM;
	hmac_sha256_key_init(&k, seed, DRAW_SEED_LEN);
	draw_msg_init(&m, event, digest);
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){.key = draw_key_of(&k, &m, users[i]), .user = users[i]};
	hmac_sha256_key_wipe(&k);
	qsort(r, n, sizeof(*r), ranked_cmp);
	for (size_t i = 0; i < n; i++)
		users[i] = r[i].user;
	free(r);
	return 0;
}
