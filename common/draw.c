/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/draw.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "common/hmac_sha256.h"
#include "common/sort_u64.h"

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
		if (users[i] == 0 || users[i] > (uint64_t)INT64_MAX ||
			(i > 0 && users[i] <= users[i - 1]))
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

_Static_assert(sizeof(draw_tag) - 1 == 17, "DRAW_MSG_LEN counts the tag's 17 bytes");

void
draw_ranker_init(struct draw_ranker *r, const uint8_t seed[DRAW_SEED_LEN], uint32_t event,
	const uint8_t digest[DRAW_DIGEST_LEN])
{
	uint32_t ev = htobe32(event);

	hmac_sha256_key_init(&r->k, seed, DRAW_SEED_LEN);
	memcpy(r->msg, draw_tag, sizeof(draw_tag) - 1);
	memcpy(r->msg + sizeof(draw_tag) - 1, &ev, 4);
	memcpy(r->msg + sizeof(draw_tag) - 1 + 4, digest, DRAW_DIGEST_LEN);
}

uint64_t
draw_ranker_key(struct draw_ranker *r, uint64_t user)
{
	uint64_t u = htobe64(user), top;
	uint8_t mac[HMAC_SHA256_LEN];

	memcpy(r->msg + DRAW_MSG_LEN - 8, &u, 8);
	hmac_sha256(&r->k, r->msg, DRAW_MSG_LEN, mac);
	memcpy(&top, mac, 8);
	return be64toh(top);
}

void
draw_ranker_wipe(struct draw_ranker *r)
{
	hmac_sha256_key_wipe(&r->k);
	explicit_bzero(r->msg, sizeof(r->msg));
}

uint64_t
draw_rank_key(const uint8_t seed[DRAW_SEED_LEN], uint32_t event,
	const uint8_t digest[DRAW_DIGEST_LEN], uint64_t user)
{
	struct draw_ranker r;
	uint64_t v;

	draw_ranker_init(&r, seed, event, digest);
	v = draw_ranker_key(&r, user);
	draw_ranker_wipe(&r);
	return v;
}

struct ranked {
	uint64_t key;
	uint64_t user;
};

int
draw_order(const uint8_t seed[DRAW_SEED_LEN], uint32_t event, const uint8_t digest[DRAW_DIGEST_LEN],
	uint64_t *users, size_t n)
{
	struct ranked *r = n ? malloc(n * sizeof(*r)) : NULL;
	struct draw_ranker k;
	int rc;

	if (n != 0 && r == NULL)
		return -ENOMEM;
	draw_ranker_init(&k, seed, event, digest);
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){.key = draw_ranker_key(&k, users[i]), .user = users[i]};
	draw_ranker_wipe(&k);
	/* Ties by user: sorted by user first, then (stable) by key. */
	if ((rc = sort_u64(r, n, sizeof(*r), offsetof(struct ranked, user))) != 0 ||
		(rc = sort_u64(r, n, sizeof(*r), offsetof(struct ranked, key))) != 0) {
		free(r);
		return rc;
	}
	for (size_t i = 0; i < n; i++)
		users[i] = r[i].user;
	free(r);
	return 0;
}
