/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the proof-of-work challenge (docs/tokens.md, "Purchase tokens with a
 * challenge"): the data plane reads a purchase token's challenge from the client's text
 * (tok_purchase_challenge()) and checks the client's solution (pow_check()) before it verifies
 * the token's MAC, so both see every byte a client sends.
 *
 * Each input is read three ways:
 *  1. as a token: tok_purchase_challenge() must agree with tok_purchase_verify() whenever the
 *     MAC is right (a p2 token: its bits, its MAC text as the prefix; a p1 token: no
 *     challenge), and claim only what the text says ("p2.", bits 1..30 as the field before the
 *     key id, the prefix the last 22 characters). The input is also re-signed (what follows
 *     its last '.' replaced by the right MAC for the key id it names), so authentic p2 tokens
 *     of every shape are reached;
 *  2. as a check: byte 0 the difficulty, byte 1 the prefix's length, then the prefix and the
 *     solution, each in an exact-size allocation (AddressSanitizer flags a read past either):
 *     pow_check() and pow_digest_word() with every engine this CPU runs against a reference
 *     from OpenSSL's SHA256() and the rules of pow.h;
 *  3. the solver on that prefix at 1..6 bits: the smallest solution, as the reference finds it.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdbool.h>

#include "common/base64url.h"
#include "common/pow.h"
#include "common/token.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_keys.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct tok_keyring sale_ring;
static const char *const engines[] = {"sha-ni", "openssl"};

/* ---- 1. the challenge of a token --------------------------------------------------------- */

/* What tok_purchase_challenge() may claim: the text's own "p2.", bits field and MAC text. */
static void
check_claim(const char *t, size_t len, unsigned bits, const char *prefix)
{
	const char *mac_dot = t + len - TOK_MAC_CHARS - 1, *kid_dot, *bits_dot;
	unsigned b = 0;

	FUZZ_CHECK(len >= 3 + TOK_MAC_CHARS && memcmp(t, "p2.", 3) == 0 && *mac_dot == '.');
	FUZZ_CHECK(prefix == t + len - TOK_MAC_CHARS);
	kid_dot = memrchr(t, '.', (size_t)(mac_dot - t));
	FUZZ_CHECK(kid_dot != NULL && kid_dot > t);
	bits_dot = memrchr(t, '.', (size_t)(kid_dot - t));
	FUZZ_CHECK(bits_dot != NULL);
	for (const char *c = bits_dot + 1; c < kid_dot; c++) {
		FUZZ_CHECK(*c >= '0' && *c <= '9');
		b = b * 10 + (unsigned)(*c - '0');
	}
	FUZZ_CHECK(kid_dot - bits_dot >= 2 && kid_dot - bits_dot <= 3);
	FUZZ_CHECK(b == bits && bits >= 1 && bits <= TOK_POW_BITS_MAX);
}

/* The challenge view of t against the verifier's, when its MAC is right. */
static void
check_token(const char *t, size_t len)
{
	struct tok_purchase p;
	const char *prefix = NULL;
	unsigned bits = 0;
	bool claims = tok_purchase_challenge(t, len, &bits, &prefix);
	enum tok_status st = tok_purchase_verify(&sale_ring, t, len, FUZZ_EVENT, FUZZ_NOW_S, &p);

	if (claims) {
		check_claim(t, len, bits, prefix);
		/* The prefix is readable where it says: the data plane hashes it next. */
		(void)pow_check(prefix, TOK_MAC_CHARS, "0", 1, bits);
	}
	if (st != TOK_OK && st != TOK_EXPIRED && st != TOK_WRONG_EVENT)
		return;
	if (t[1] == '2') {
		if (!claims || bits != p.pow_bits)
			fprintf(stderr,
				"fuzz: \"%.*s\" verifies with %u bits, the challenge view "
				"says %s %u\n",
				(int)len, t, p.pow_bits, claims ? "bits" : "none", bits);
		FUZZ_CHECK(claims && bits == p.pow_bits && p.pow_bits >= 1);
	} else {
		FUZZ_CHECK(!claims && p.pow_bits == 0);
	}
}

/* t with what follows its last '.' replaced by the MAC of the sale key it names, if any. */
static void
check_resigned(const char *t, size_t len)
{
	const char *dot = memrchr(t, '.', len), *kid_dot;
	char buf[TOK_BUF_SIZE + TOK_MAC_CHARS];
	uint8_t mac[32];
	unsigned mac_len = sizeof(mac);
	uint64_t kid = 0;
	const char *secret = NULL;

	if (dot == NULL || (size_t)(dot - t) + 1 + TOK_MAC_CHARS > sizeof(buf))
		return;
	kid_dot = memrchr(t, '.', (size_t)(dot - t));
	if (kid_dot == NULL || dot - kid_dot < 2 || dot - kid_dot > 11)
		return;
	for (const char *c = kid_dot + 1; c < dot; c++) {
		if (*c < '0' || *c > '9')
			return;
		kid = kid * 10 + (uint64_t)(*c - '0');
	}
	for (unsigned i = 0; i < FUZZ_N_KEYS; i++)
		if (fuzz_sale_keys[i].kid == kid)
			secret = fuzz_sale_keys[i].secret;
	if (secret == NULL)
		return;
	size_t signed_len = (size_t)(dot - t);

	FUZZ_CHECK(HMAC(EVP_sha256(), secret, FUZZ_SECRET_LEN, (const uint8_t *)t, signed_len, mac,
			   &mac_len) != NULL);
	memcpy(buf, t, signed_len + 1);
	FUZZ_CHECK(base64url_encode(mac, TOK_MAC_BYTES, buf + signed_len + 1) == TOK_MAC_CHARS);
	check_token(buf, signed_len + 1 + TOK_MAC_CHARS);
}

/* ---- 2. and 3. the check and the solver --------------------------------------------------- */

/* The reference's first digest word of prefix || sol, from OpenSSL's SHA256(). */
static uint32_t
ref_word(const char *prefix, size_t plen, const char *sol, size_t slen)
{
	uint8_t msg[POW_PREFIX_MAX + POW_SOLUTION_MAX], d[SHA256_DIGEST_LENGTH];

	memcpy(msg, prefix, plen);
	memcpy(msg + plen, sol, slen);
	SHA256(msg, plen + slen, d);
	return (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
}

/* pow.h's rules: the lengths, the digits. */
static bool
ref_well_formed(const char *prefix, size_t plen, const char *sol, size_t slen)
{
	if (plen < 1 || plen > POW_PREFIX_MAX || slen < 1 || slen > POW_SOLUTION_MAX)
		return false;
	for (size_t i = 0; i < slen; i++)
		if (sol[i] < '0' || sol[i] > '9')
			return false;
	(void)prefix;
	return true;
}

static void
check_pow(const uint8_t *data, size_t size)
{
	if (size < 2)
		return;
	unsigned bits = data[0] % 32;				       /* 31: refused */
	size_t plen = data[1] % (POW_PREFIX_MAX + 2), rest = size - 2; /* 0 and 33: refused */

	if (plen > rest)
		plen = rest;
	size_t slen = rest - plen;
	char *prefix = fuzz_copy(data + 2, plen), *sol = fuzz_copy(data + 2 + plen, slen);
	bool ok = ref_well_formed(prefix, plen, sol, slen);
	uint32_t want = ok ? ref_word(prefix, plen, sol, slen) : 0;
	bool solves = ok && bits <= POW_BITS_MAX && (bits == 0 || want >> (32 - bits) == 0);
	const char *engine = pow_engine();

	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		uint32_t w = 0;

		if (pow_set_engine(engines[e]) != 0)
			continue;
		if (pow_check(prefix, plen, sol, slen, bits) != solves)
			fprintf(stderr,
				"fuzz: %s: check of %zu + %zu bytes at %u bits: %d, want %d\n",
				engines[e], plen, slen, bits, !solves, solves);
		FUZZ_CHECK(pow_check(prefix, plen, sol, slen, bits) == solves);
		FUZZ_CHECK(pow_digest_word(prefix, plen, sol, slen, &w) == (ok ? 0 : -EINVAL));
		FUZZ_CHECK(!ok || w == want);
	}
	/* The solver at 1..6 bits: the smallest nonce, counted in tries. */
	if (plen >= 1 && plen <= POW_PREFIX_MAX) {
		unsigned sb = 1 + bits % 6;
		char out[POW_SOLUTION_MAX + 1], s[POW_SOLUTION_MAX + 1];
		uint64_t tries = 0, n = 0;

		for (;; n++) {
			int l = snprintf(s, sizeof(s), "%llu", (unsigned long long)n);

			if (ref_word(prefix, plen, s, (size_t)l) >> (32 - sb) == 0)
				break;
		}
		for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
			if (pow_set_engine(engines[e]) != 0)
				continue;
			FUZZ_CHECK(pow_solve(prefix, plen, sb, n + 1, out, &tries) == 0);
			FUZZ_CHECK(strcmp(out, s) == 0 && tries == n + 1);
			FUZZ_CHECK(
				n == 0 || (pow_solve(prefix, plen, sb, n, out, &tries) == -EAGAIN &&
						  tries == n));
		}
	}
	pow_set_engine(engine);
	free(prefix);
	free(sol);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	tok_keyring_init(&sale_ring);
	for (unsigned i = 0; i < FUZZ_N_KEYS; i++)
		FUZZ_CHECK(tok_keyring_set(&sale_ring, fuzz_sale_keys[i].kid,
				   fuzz_sale_keys[i].secret, FUZZ_SECRET_LEN, i == 0) == 0);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *t = fuzz_copy(data, size);

	check_token(t, size);
	check_resigned(t, size);
	free(t);
	check_pow(data, size);
	return 0;
}
