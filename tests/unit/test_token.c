/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Signed tokens: HMAC-SHA256 with precomputed pads against RFC 4231 and OpenSSL's HMAC(),
 * strict base64url, keyrings and rotation, and what each verify function answers for
 * authentic, altered, truncated, extended, malformed, expired and misdirected tokens.
 * Every token under test is placed just before a PROT_NONE page (tests/guard.h), so a parser
 * that reads past the end crashes instead of passing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/base64url.h"
#include "common/hmac_sha256.h"
#include "common/pow.h"
#include "common/token.h"
#include "tests/guard.h"
#include "tests/tap.h"

/* The worked example of docs/tokens.md; the expected texts were made with the openssl CLI. */
static const char auth_key1_hex[] =
	"0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0";
static uint8_t auth_key1[32];
static const char sale_key3[] = "sale key 3 for the demo, 32 byte";
#define DOC_SESSION  "s1.1234567.1767225600.1.F6euVysiiGpbYd3q4eW72g"
#define DOC_PURCHASE "p1.42.1234567.1767225900.3.V-OnkLWYCKB6pfwVMXAkvQ"
#define DOC_RECEIPT  "r1.42.1234567.1767225601234.3.-CJhRdWUgyQ"
#define DOC_PATH     "3-8adNU1Sny37zYiTo"
/* ... and its purchase token with a challenge of 12 bits, solved with Python's hashlib. */
#define DOC_PURCHASE_POW "p2.42.1234567.1767225900.12.3.UmD8QGH-7k2f9-iFBP92cQ"
#define DOC_POW_PREFIX	 "UmD8QGH-7k2f9-iFBP92cQ"
#define DOC_POW_SOLUTION "951"

/*
 * tap_eq_int() as a function: the macro evaluates its argument twice, which would call a
 * function with side effects (tok_keyring_remove) twice.
 */
static void
check_eq(long long got, long long want, const char *name)
{
	tap_ok(got == want, "%s (got %lld, want %lld)", name, got, want);
}

/* check_eq() for a verify result, by name. */
static void
check_st(enum tok_status got, enum tok_status want, const char *name)
{
	tap_ok(got == want, "%s (got %s, want %s)", name, tok_status_name(got),
		tok_status_name(want));
}

static struct guard_buf G;
static size_t G_page;

/* Copies len bytes of s so that the last one is the last readable byte; returns the copy. */
static const char *
at_end(const char *s, size_t len)
{
	char *dst = G.map + G_page - len;

	memcpy(dst, s, len);
	return dst;
}

static enum tok_status
vsess(const struct tok_keyring *r, const char *s, size_t len, uint64_t now, struct tok_session *o)
{
	return tok_session_verify(r, at_end(s, len), len, now, o);
}

static enum tok_status
vpur(const struct tok_keyring *r, const char *s, size_t len, uint32_t ev, uint64_t now,
	struct tok_purchase *o)
{
	return tok_purchase_verify(r, at_end(s, len), len, ev, now, o);
}

static enum tok_status
vrec(const struct tok_keyring *r, const char *s, size_t len, uint32_t ev, struct tok_receipt *o)
{
	return tok_receipt_verify(r, at_end(s, len), len, ev, o);
}

static enum tok_status
vpath(const struct tok_keyring *r, const char *s, size_t len, uint32_t ev, uint32_t *kid)
{
	return tok_path_verify(r, at_end(s, len), len, ev, kid);
}

/* One verifier for the loops below: 0 session, 1 purchase, 2 receipt, 3 path segment. */
static enum tok_status
verify_any(int kind, const struct tok_keyring *r, const char *s, size_t len)
{
	struct tok_session so;
	struct tok_purchase po;
	struct tok_receipt ro;

	switch (kind) {
	case 0:
		return vsess(r, s, len, 1000, &so);
	case 1:
		return vpur(r, s, len, 42, 1000, &po);
	case 2:
		return vrec(r, s, len, 42, &ro);
	default:
		return vpath(r, s, len, 42, NULL);
	}
}

static void
hex_to_bytes(const char *hex, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		sscanf(hex + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
}

/* ---- HMAC-SHA256 ------------------------------------------------------------------------ */

static void
test_hmac_with(const char *eng)
{
	static const char case7[] =
		"This is a test using a larger than block-size key and a larger than block-size "
		"data. The key needs to be hashed before being used by the HMAC algorithm.";
	/* RFC 4231 §4.2-4.5, 4.7, 4.8: key byte (repeated) or text, data, full-length MAC. */
	struct {
		const char *name;
		uint8_t key_byte;
		size_t key_len;
		const char *key_text;
		uint8_t data_byte;
		size_t data_len;
		const char *data_text;
		const char *mac;
	} v[] = {
		{"RFC 4231 case 1", 0x0b, 20, NULL, 0, 0, "Hi There",
			"b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
		{"RFC 4231 case 2", 0, 4, "Jefe", 0, 0, "what do ya want for nothing?",
			"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{"RFC 4231 case 3", 0xaa, 20, NULL, 0xdd, 50, NULL,
			"773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
		{"RFC 4231 case 4", 0, 25,
			"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d"
			"\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19",
			0xcd, 50, NULL,
			"82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
		{"RFC 4231 case 6", 0xaa, 131, NULL, 0, 0,
			"Test Using Larger Than Block-Size Key - Hash Key First",
			"60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
		{"RFC 4231 case 7", 0xaa, 131, NULL, 0, 0, case7,
			"9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t key[131], data[64], want[32], got[32];
		const void *d = v[i].data_text;
		size_t dlen = v[i].data_text ? strlen(v[i].data_text) : v[i].data_len;
		struct hmac_sha256_key k;

		if (v[i].key_text)
			memcpy(key, v[i].key_text, v[i].key_len);
		else
			memset(key, v[i].key_byte, v[i].key_len);
		if (d == NULL) {
			memset(data, v[i].data_byte, dlen);
			d = data;
		}
		hex_to_bytes(v[i].mac, want, 32);
		hmac_sha256_key_init(&k, key, v[i].key_len);
		hmac_sha256(&k, d, dlen, got);
		tap_ok(memcmp(got, want, 32) == 0, "HMAC-SHA256 [%s] %s", eng, v[i].name);
	}

	/* Every key length around the block size with every message length that changes the
	 * number of blocks: the precomputed states must agree with a plain HMAC. */
	uint8_t key[140], msg[200], a[32], b[32];
	unsigned pairs = 0, diffs = 0;

	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 7 + 1);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 13 + 5);
	for (size_t kl = 0; kl <= sizeof(key); kl += (kl < 70 ? 1 : 7)) {
		struct hmac_sha256_key k;

		hmac_sha256_key_init(&k, key, kl);
		for (size_t ml = 0; ml <= sizeof(msg); ml++) {
			unsigned int blen = 0;

			hmac_sha256(&k, msg, ml, a);
			HMAC(EVP_sha256(), key, (int)kl, msg, ml, b, &blen);
			diffs += blen != 32 || memcmp(a, b, 32) != 0;
			pairs++;
		}
	}
	tap_ok(diffs == 0,
		"HMAC-SHA256 [%s] equals OpenSSL HMAC() for %u (key, message) lengths, "
		"%u differ",
		eng, pairs, diffs);

	/* Every message length up to three blocks ending at an unreadable page: the engine
	 * reads nothing past the message (a fault would end the test). */
	struct hmac_sha256_key gk;
	unsigned gdiffs = 0;

	hmac_sha256_key_init(&gk, key, 32);
	for (size_t ml = 0; ml <= sizeof(msg) && ml <= 3 * HMAC_SHA256_BLOCK; ml++) {
		struct guard_buf g;
		const char *at = guard_place(&g, msg, ml);
		unsigned int blen = 0;

		if (at == NULL) {
			gdiffs++;
			continue;
		}
		hmac_sha256(&gk, at, ml, a);
		HMAC(EVP_sha256(), key, 32, msg, ml, b, &blen);
		gdiffs += blen != 32 || memcmp(a, b, 32) != 0;
		guard_free(&g);
	}
	tap_ok(gdiffs == 0,
		"HMAC-SHA256 [%s]: messages of 0..%d bytes before a guard page, %u differ", eng,
		3 * HMAC_SHA256_BLOCK, gdiffs);

	struct hmac_sha256_key k;

	check_eq(hmac_sha256_key_init(NULL, key, 16), -EINVAL, "hmac key init: NULL key");
	check_eq(hmac_sha256_key_init(&k, NULL, 16), -EINVAL, "hmac key init: NULL secret");
}

/* Both engines where this CPU has them (this machine has SHA-NI and AVX-512: both run). */
static void
test_hmac(void)
{
	const char *dflt = hmac_sha256_engine();

	tap_ok(strcmp(dflt, "sha-ni") == 0 || strcmp(dflt, "openssl") == 0,
		"HMAC-SHA256 engine chosen at start: %s", dflt);
	check_eq(hmac_sha256_set_engine("openssl"), 0, "hmac engine: openssl can always be chosen");
	test_hmac_with("openssl");
	int rc = hmac_sha256_set_engine("sha-ni");

	if (rc == 0) {
		test_hmac_with("sha-ni");
	} else {
		tap_ok(rc == -ENOTSUP && strcmp(dflt, "openssl") == 0,
			"hmac engine: sha-ni refused (-ENOTSUP) only where it was not chosen at "
			"start");
		tap_skip("this CPU has not got SHA-NI", "HMAC-SHA256 [sha-ni]: every vector");
	}
	check_eq(hmac_sha256_set_engine("md5"), -EINVAL, "hmac engine: an unknown name is refused");
	check_eq(hmac_sha256_set_engine(NULL), -EINVAL, "hmac engine: NULL is refused");
	tap_ok(strcmp(hmac_sha256_engine(), rc == 0 ? "sha-ni" : "openssl") == 0,
		"hmac engine: a refused name changes nothing");
	check_eq(hmac_sha256_set_engine(dflt), 0, "hmac engine: the start's choice again");
}

/* ---- base64url -------------------------------------------------------------------------- */

static void
test_base64url(void)
{
	/* RFC 4648 §10 vectors (identical in the url alphabet) and the two url characters. */
	static const struct {
		const char *bin;
		size_t len;
		const char *text;
	} enc[] = {
		{"", 0, ""},
		{"f", 1, "Zg"},
		{"fo", 2, "Zm8"},
		{"foo", 3, "Zm9v"},
		{"foob", 4, "Zm9vYg"},
		{"fooba", 5, "Zm9vYmE"},
		{"foobar", 6, "Zm9vYmFy"},
		{"\xfb\xff", 2, "-_8"},
		{"\xff\xff\xfe", 3, "___-"},
	};
	char out[16];
	uint8_t bin[16];
	int bad = 0;

	for (size_t i = 0; i < sizeof(enc) / sizeof(enc[0]); i++) {
		size_t n = base64url_encode(enc[i].bin, enc[i].len, out);
		int m = base64url_decode(at_end(enc[i].text, n), n, bin, sizeof(bin));

		bad += n != strlen(enc[i].text) || memcmp(out, enc[i].text, n) != 0 ||
		       n != base64url_encoded_len(enc[i].len) || m != (int)enc[i].len ||
		       memcmp(bin, enc[i].bin, enc[i].len) != 0;
	}
	tap_ok(bad == 0, "base64url encodes and decodes the RFC 4648 vectors (%d wrong)", bad);

	static const struct {
		const char *text;
		int want;
		const char *why;
	} dec[] = {
		{"Zg==", -EINVAL, "padding"},
		{"Zg=", -EINVAL, "one '='"},
		{"Zh", -EINVAL, "non-canonical: unused bits of the last of 2 characters"},
		{"Zm9", -EINVAL, "non-canonical: unused bits of the last of 3 characters"},
		{"Z", -EINVAL, "4k+1 characters"},
		{"Zm9v+g", -EINVAL, "standard alphabet '+'"},
		{"Zm/v", -EINVAL, "standard alphabet '/'"},
		{"Zm9 ", -EINVAL, "a space"},
		{"Zm9v\n", -EINVAL, "a newline"},
		{"Zm9vYmFyYmF6cXV4cXV1eHh4", -ENOSPC, "18 bytes into 16"},
		{"Zm9vYmFyYmF6cXV4cXV1eA", 16, "16 bytes into 16"},
	};

	for (size_t i = 0; i < sizeof(dec) / sizeof(dec[0]); i++) {
		size_t n = strlen(dec[i].text);

		check_eq(base64url_decode(at_end(dec[i].text, n), n, bin, 16), dec[i].want,
			dec[i].why);
	}

	/* Every byte value at every position of 1..15-byte strings survives a round trip. */
	bad = 0;
	for (int v = 0; v < 256; v++) {
		for (size_t len = 1; len < 16; len++) {
			uint8_t src[16];

			for (size_t j = 0; j < len; j++)
				src[j] = (uint8_t)(v + j * 41);
			size_t n = base64url_encode(src, len, out);

			bad += base64url_decode(at_end(out, n), n, bin, len) != (int)len ||
			       memcmp(bin, src, len) != 0;
		}
	}
	tap_ok(bad == 0, "base64url round trip of 3840 strings (%d wrong)", bad);
}

/* ---- keyrings --------------------------------------------------------------------------- */

static void
test_keyring(void)
{
	struct tok_keyring r;
	uint8_t s64[64], out[64];
	uint32_t kid = 99;
	char tok[TOK_BUF_SIZE];

	memset(s64, 0x5a, sizeof(s64));
	tok_keyring_init(&r);
	check_eq(tok_keyring_count(&r), 0, "a new ring is empty");
	check_eq(tok_keyring_current(&r, &kid), -ENOKEY, "a new ring has no current key");
	check_eq(tok_session_mint(&r, 5, 10, tok, sizeof(tok)), -ENOKEY,
		"minting without a current key fails");
	check_eq(tok_keyring_set(&r, 1, s64, 15, true), -EINVAL, "a 15-byte secret is refused");
	check_eq(tok_keyring_set(&r, 1, s64, 65, true), -EINVAL, "a 65-byte secret is refused");
	check_eq(tok_keyring_set(&r, 1, NULL, 32, true), -EINVAL, "a NULL secret is refused");
	check_eq(tok_keyring_count(&r), 0, "refused keys leave the ring empty");
	check_eq(tok_keyring_set(&r, 1, s64, 16, false), 0, "a 16-byte secret is accepted");
	check_eq(tok_keyring_current(&r, &kid), -ENOKEY,
		"adding without make_current: none current");
	check_eq(tok_keyring_set(&r, 2, s64, 64, true), 0, "a 64-byte secret is accepted");
	tap_ok(tok_keyring_current(&r, &kid) == 0 && kid == 2, "make_current makes key 2 current");
	tap_ok(tok_keyring_set(&r, 0, s64, 32, false) == 0 &&
			tok_keyring_set(&r, UINT32_MAX, s64, 32, false) == 0 &&
			tok_keyring_count(&r) == 4,
		"key ids 0 and 2^32-1 are usable; the ring holds 4 keys");
	check_eq(tok_keyring_set(&r, 5, s64, 32, false), -ENOSPC, "a fifth key id is refused");
	check_eq(tok_keyring_set(&r, 1, s64, 20, false), 0, "a full ring still replaces key 1");
	tap_ok(tok_keyring_secret(&r, 1, out, sizeof(out)) == 20 && memcmp(out, s64, 20) == 0,
		"the secret of key 1 reads back (20 bytes)");
	check_eq(tok_keyring_secret(&r, 1, out, 19), -ENOSPC,
		"reading a secret into too little room");
	check_eq(
		tok_keyring_secret(&r, 7, out, 64), -ENOENT, "reading the secret of a missing key");
	check_eq(tok_keyring_remove(&r, 7), -ENOENT, "removing a missing key");
	check_eq(tok_keyring_set_current(&r, 7), -ENOENT, "making a missing key current");
	check_eq(tok_keyring_remove(&r, 2), 0, "removing the current key");
	tap_ok(!tok_keyring_has(&r, 2) && tok_keyring_count(&r) == 3, "key 2 is gone");
	check_eq(tok_keyring_current(&r, &kid), -ENOKEY,
		"after removing the current key, none is current");
	check_eq(tok_purchase_mint(&r, 1, 5, 10, tok, sizeof(tok)), -ENOKEY,
		"and minting fails until one is made current");
	tap_ok(tok_keyring_set_current(&r, 0) == 0 && tok_keyring_current(&r, &kid) == 0 &&
			kid == 0,
		"set_current makes key 0 current");
	tok_keyring_wipe(&r);
	tap_ok(tok_keyring_count(&r) == 0 && tok_keyring_current(&r, &kid) == -ENOKEY,
		"a wiped ring is empty");
}

/* ---- the worked example and round trips ------------------------------------------------- */

static struct tok_keyring auth, sale;

static void
setup_rings(void)
{
	hex_to_bytes(auth_key1_hex, auth_key1, sizeof(auth_key1));
	tok_keyring_init(&auth);
	tok_keyring_init(&sale);
	tok_keyring_set(&auth, 1, auth_key1, sizeof(auth_key1), true);
	tok_keyring_set(&sale, 3, sale_key3, strlen(sale_key3), true);
}

static void
test_worked_example(void)
{
	char tok[TOK_BUF_SIZE], pk[TOK_PATH_KEY_CHARS + 1];
	struct tok_session so;
	struct tok_purchase po;
	struct tok_receipt ro;
	uint32_t kid = 0;
	int n;

	n = tok_session_mint(&auth, 1234567, 1767225600, tok, sizeof(tok));
	tap_ok(n == (int)strlen(DOC_SESSION) && strcmp(tok, DOC_SESSION) == 0,
		"session mint matches openssl: %s", tok);
	n = tok_purchase_mint(&sale, 42, 1234567, 1767225900, tok, sizeof(tok));
	tap_ok(n == (int)strlen(DOC_PURCHASE) && strcmp(tok, DOC_PURCHASE) == 0,
		"purchase mint matches openssl: %s", tok);
	n = tok_receipt_mint(&sale, 42, 1234567, UINT64_C(1767225601234), tok, sizeof(tok));
	tap_ok(n == (int)strlen(DOC_RECEIPT) && strcmp(tok, DOC_RECEIPT) == 0,
		"receipt mint matches openssl: %s", tok);
	n = tok_path_mint(&sale, 42, tok, sizeof(tok));
	tap_ok(n == (int)strlen(DOC_PATH) && strcmp(tok, DOC_PATH) == 0,
		"path segment matches openssl: %s", tok);
	tap_ok(tok_path_key(&sale, 3, 42, pk) == 0 && strcmp(pk, DOC_PATH + 2) == 0,
		"path key of event 42 under key 3 is %s", pk);

	tap_ok(vsess(&auth, DOC_SESSION, strlen(DOC_SESSION), 1767225599, &so) == TOK_OK &&
			so.user == 1234567 && so.expires_s == 1767225600 && so.kid == 1,
		"the documented session token verifies and gives user 1234567");
	tap_ok(vpur(&sale, DOC_PURCHASE, strlen(DOC_PURCHASE), 42, 1767225600, &po) == TOK_OK &&
			po.event == 42 && po.user == 1234567 && po.expires_s == 1767225900 &&
			po.kid == 3,
		"the documented purchase token verifies");
	tap_ok(vrec(&sale, DOC_RECEIPT, strlen(DOC_RECEIPT), 42, &ro) == TOK_OK && ro.event == 42 &&
			ro.user == 1234567 && ro.admitted_ms == UINT64_C(1767225601234) &&
			ro.kid == 3,
		"the documented receipt verifies");
	tap_ok(vpath(&sale, DOC_PATH, strlen(DOC_PATH), 42, &kid) == TOK_OK && kid == 3,
		"the documented path segment verifies, key 3");

	/* The token with a challenge, its challenge and the smallest solution. */
	char sol[POW_SOLUTION_MAX + 1];
	const char *prefix = NULL;
	unsigned bits = 0;
	uint64_t tries = 0;

	n = tok_purchase_mint_pow(&sale, 42, 1234567, 1767225900, 12, tok, sizeof(tok));
	tap_ok(n == (int)strlen(DOC_PURCHASE_POW) && strcmp(tok, DOC_PURCHASE_POW) == 0,
		"purchase mint with a 12-bit challenge matches openssl: %s", tok);
	tap_ok(vpur(&sale, DOC_PURCHASE_POW, strlen(DOC_PURCHASE_POW), 42, 1767225600, &po) ==
				TOK_OK &&
			po.user == 1234567 && po.pow_bits == 12 && po.kid == 3,
		"the documented p2 token verifies, 12 bits");
	tap_ok(tok_purchase_challenge(DOC_PURCHASE_POW, strlen(DOC_PURCHASE_POW), &bits, &prefix) &&
			bits == 12 && strncmp(prefix, DOC_POW_PREFIX, TOK_MAC_CHARS) == 0,
		"its challenge: the MAC text as the prefix, 12 bits");
	tap_ok(pow_solve(DOC_POW_PREFIX, TOK_MAC_CHARS, 12, 100000, sol, &tries) == 0 &&
			strcmp(sol, DOC_POW_SOLUTION) == 0 && tries == 952,
		"its smallest solution is the documented one: %s", sol);
	tap_ok(pow_check(prefix, TOK_MAC_CHARS, DOC_POW_SOLUTION, 3, 12) &&
			!pow_check(prefix, TOK_MAC_CHARS, "950", 3, 12) &&
			pow_check(prefix, TOK_MAC_CHARS, DOC_POW_SOLUTION, 3, 16) &&
			!pow_check(prefix, TOK_MAC_CHARS, DOC_POW_SOLUTION, 3, 17),
		"951 solves it (16 zero bits, as documented), 950 does not");
}

static void
test_round_trips(void)
{
	static const struct {
		uint32_t event;
		uint64_t user, t;
		uint32_t kid;
	} v[] = {
		{1, 1, 1, 0},
		{7, 1000, 1767225600, 1},
		{UINT32_MAX, TOK_USER_MAX, UINT64_MAX, UINT32_MAX},
		{4000000000u, UINT64_C(9223372036854775806), UINT64_MAX - 1, 10},
		{10, 10, 10, 100},
	};
	uint8_t secret[32];

	for (size_t i = 0; i < sizeof(secret); i++)
		secret[i] = (uint8_t)(0xc0 ^ i);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct tok_keyring r;
		char s[TOK_BUF_SIZE], p[TOK_BUF_SIZE], rc[TOK_BUF_SIZE], path[TOK_BUF_SIZE];
		struct tok_session so;
		struct tok_purchase po;
		struct tok_receipt ro;
		uint32_t kid = 0;

		tok_keyring_init(&r);
		tok_keyring_set(&r, v[i].kid, secret, sizeof(secret), true);
		int ns = tok_session_mint(&r, v[i].user, v[i].t, s, sizeof(s));
		int np = tok_purchase_mint(&r, v[i].event, v[i].user, v[i].t, p, sizeof(p));
		int nr = tok_receipt_mint(&r, v[i].event, v[i].user, v[i].t, rc, sizeof(rc));
		int nq = tok_path_mint(&r, v[i].event, path, sizeof(path));
		uint64_t now = v[i].t - 1;

		tap_ok(ns > 0 && vsess(&r, s, (size_t)ns, now, &so) == TOK_OK &&
				so.user == v[i].user && so.expires_s == v[i].t &&
				so.kid == v[i].kid,
			"session round trip %s", s);
		tap_ok(np > 0 && vpur(&r, p, (size_t)np, v[i].event, now, &po) == TOK_OK &&
				po.event == v[i].event && po.user == v[i].user &&
				po.expires_s == v[i].t && po.kid == v[i].kid,
			"purchase round trip %s", p);
		tap_ok(nr > 0 && vrec(&r, rc, (size_t)nr, v[i].event, &ro) == TOK_OK &&
				ro.event == v[i].event && ro.user == v[i].user &&
				ro.admitted_ms == v[i].t && ro.kid == v[i].kid,
			"receipt round trip %s", rc);
		tap_ok(nq > 0 && vpath(&r, path, (size_t)nq, v[i].event, &kid) == TOK_OK &&
				kid == v[i].kid,
			"path round trip %s", path);
		char p2[TOK_BUF_SIZE];
		int n2 = tok_purchase_mint_pow(&r, v[i].event, v[i].user, v[i].t, 30, p2, sizeof(p2));

		tap_ok(n2 > 0 && vpur(&r, p2, (size_t)n2, v[i].event, now, &po) == TOK_OK &&
				po.event == v[i].event && po.user == v[i].user &&
				po.expires_s == v[i].t && po.kid == v[i].kid && po.pow_bits == 30,
			"purchase with a challenge round trip %s", p2);
		if (i == 2) {
			tap_ok(ns == TOK_SESSION_MAX_LEN && n2 == TOK_PURCHASE_MAX_LEN &&
					np == TOK_PURCHASE_MAX_LEN - 3 &&
					nr == TOK_RECEIPT_MAX_LEN && nq == TOK_PATH_MAX_LEN,
				"the largest values give the documented maximum lengths (%d %d %d "
				"%d)",
				ns, np, nr, nq);
		}
	}
}

/* p2 purchase tokens: the challenge's view of the text, and a tampered difficulty. */
static void
test_pow_tokens(void)
{
	struct tok_keyring r;
	const uint8_t secret[32] = {7};
	char t[TOK_BUF_SIZE], bad[TOK_BUF_SIZE];
	struct tok_purchase po;
	unsigned bits = 0;
	const char *prefix = NULL;

	tok_keyring_init(&r);
	tok_keyring_set(&r, 5, secret, sizeof(secret), true);
	int n = tok_purchase_mint_pow(&r, 9, 77, 2000000000, 12, t, sizeof(t));

	tap_ok(n > 0 && strncmp(t, "p2.9.77.2000000000.12.5.", 24) == 0, "p2 text: %s", t);
	tap_ok(tok_purchase_challenge(t, (size_t)n, &bits, &prefix) && bits == 12 &&
			prefix == t + n - TOK_MAC_CHARS,
		"challenge view: 12 bits, the MAC text is the prefix");
	memcpy(bad, t, (size_t)n + 1);
	bad[20] = '1'; /* 12 -> 11: an easier challenge claimed */
	tap_ok(tok_purchase_challenge(bad, (size_t)n, &bits, &prefix) && bits == 11 &&
			tok_purchase_verify(&r, bad, (size_t)n, 9, 1, &po) == TOK_BAD_MAC,
		"a lowered difficulty is claimed but the MAC refuses it");
	n = tok_purchase_mint_pow(&r, 9, 77, 2000000000, 0, t, sizeof(t));
	tap_ok(n > 0 && strncmp(t, "p1.", 3) == 0 && !tok_purchase_challenge(t, (size_t)n, &bits,
								  &prefix) &&
			tok_purchase_verify(&r, t, (size_t)n, 9, 1, &po) == TOK_OK && po.pow_bits == 0,
		"bits 0 mints a plain p1 token");
	tap_ok(tok_purchase_mint_pow(&r, 9, 77, 1, 31, t, sizeof(t)) == -EINVAL,
		"31 bits are refused");
	const char *odd[] = {"p2.9.77.5.0.5.AAAAAAAAAAAAAAAAAAAAAA", "p2.9.77.5.31.5.AAAAAAAAAAAAAAAAAAAAAA",
		"p2.9.77.5.a.5.AAAAAAAAAAAAAAAAAAAAAA", "p2.AAAAAAAAAAAAAAAAAAAAAA", "p2.", ""};

	for (unsigned i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		tap_ok(!tok_purchase_challenge(odd[i], strlen(odd[i]), &bits, &prefix) &&
				tok_purchase_verify(&r, odd[i], strlen(odd[i]), 9, 1, &po) != TOK_OK,
			"challenge view refuses \"%s\"", odd[i]);
	/* One number between "p2." and the MAC: the "2" of "p2" is no bits field (found by
	 * tests/fuzz/fuzz_pow.c). */
	tap_ok(!tok_purchase_challenge("p2.555.AAAAAAAAAAAAAAAAAAAAAA", 29, &bits, &prefix) &&
			!tok_purchase_challenge("p2.5555.AAAAAAAAAAAAAAAAAAAAAA", 30, &bits, &prefix),
		"challenge view refuses a text whose only number is the key id");
	tok_keyring_wipe(&r);
}

/* Numbers of every length: 10^k - 1, 10^k and 10^k + 1 for k = 0..19 survive a round trip. */
static void
test_number_lengths(void)
{
	unsigned bad = 0, tried = 0;
	uint64_t p = 1;

	for (int k = 0; k <= 19; k++, p *= 10) {
		uint64_t v[3] = {p - 1, p, p + 1};

		for (int j = 0; j < 3; j++) {
			char t[TOK_BUF_SIZE], want[32];
			struct tok_receipt ro;
			uint64_t user = v[j] == 0 ? 1 : v[j] > TOK_USER_MAX ? TOK_USER_MAX : v[j];
			int n = tok_receipt_mint(&sale, 42, user, v[j], t, sizeof(t));

			snprintf(want, sizeof(want), ".%" PRIu64 ".%" PRIu64 ".3.", user, v[j]);
			tried++;
			bad += n <= 0 || strstr(t, want) == NULL ||
			       vrec(&sale, t, (size_t)n, 42, &ro) != TOK_OK || ro.user != user ||
			       ro.admitted_ms != v[j];
		}
	}
	tap_ok(bad == 0, "numbers of 1 to 20 digits are written and read back (%u of %u wrong)",
		bad, tried);

	/* Random numbers, half of them with runs of zero digits (the writer works in chunks of
	 * eight digits, whose leading zeros must be written). */
	uint64_t x = UINT64_C(0x9e3779b97f4a7c15);

	bad = tried = 0;
	for (int i = 0; i < 20000; i++) {
		char t[TOK_BUF_SIZE], want[32];
		struct tok_receipt ro;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;

		uint64_t v = x >> (x % 64);

		if (i & 1) {
			uint64_t z = 1;

			for (unsigned d = (unsigned)(x >> 58) % 12; d > 0; d--)
				z *= 10;
			v = v / z * z * 10 + (x & 1);
		}
		int n = tok_receipt_mint(&sale, 42, 7, v, t, sizeof(t));

		snprintf(want, sizeof(want), ".7.%" PRIu64 ".3.", v);
		tried++;
		bad += n <= 0 || strstr(t, want) == NULL ||
		       vrec(&sale, t, (size_t)n, 42, &ro) != TOK_OK || ro.admitted_ms != v;
	}
	tap_ok(bad == 0, "random numbers are written as printf writes them (%u of %u wrong)", bad,
		tried);
}

static void
test_mint_errors(void)
{
	char tok[TOK_BUF_SIZE];
	int n;

	check_eq(tok_session_mint(&auth, 0, 10, tok, sizeof(tok)), -EINVAL, "mint: user 0");
	check_eq(tok_session_mint(&auth, TOK_USER_MAX + 1, 10, tok, sizeof(tok)), -EINVAL,
		"mint: user 2^63");
	check_eq(tok_purchase_mint(&sale, 0, 5, 10, tok, sizeof(tok)), -EINVAL, "mint: event 0");
	check_eq(tok_receipt_mint(&sale, 1, 0, 10, tok, sizeof(tok)), -EINVAL,
		"mint receipt: user 0");
	check_eq(tok_path_mint(&sale, 0, tok, sizeof(tok)), -EINVAL, "path: event 0");
	check_eq(tok_session_mint(NULL, 5, 10, tok, sizeof(tok)), -EINVAL, "mint: NULL ring");
	memset(tok, '#', sizeof(tok));
	n = (int)strlen(DOC_SESSION);
	check_eq(tok_session_mint(&auth, 1234567, 1767225600, tok, (size_t)n), -ENOSPC,
		"mint: no room for the NUL");
	tap_ok(tok[0] == '#', "a mint without room leaves out untouched");
	check_eq(tok_session_mint(&auth, 1234567, 1767225600, tok, (size_t)n + 1), n,
		"mint: exactly enough room");
	check_eq(tok_path_mint(&sale, 42, tok, strlen(DOC_PATH)), -ENOSPC, "path: no room");
	char pk[TOK_PATH_KEY_CHARS + 1];

	check_eq(tok_path_key(&sale, 4, 42, pk), -ENOKEY, "path key of a missing key id");
}

/* ---- alterations ------------------------------------------------------------------------ */

/*
 * Changes each byte of the token to each of the 255 other values and verifies every
 * variant; reports one check per field (the text between dots) so that a failure names it.
 */
static void
tamper_all(int kind, const char *name, const struct tok_keyring *r, const char *tok)
{
	size_t len = strlen(tok), start = 0;
	char buf[TOK_BUF_SIZE];
	unsigned field = 0;

	while (start < len) {
		size_t end = start;
		unsigned tried = 0, accepted = 0;

		while (end < len && tok[end] != '.' && !(kind == 3 && tok[end] == '-'))
			end++;
		/* The separator after a field belongs to it: changing it must fail too. */
		size_t stop = end < len ? end + 1 : len;

		for (size_t i = start; i < stop; i++) {
			for (int c = 0; c < 256; c++) {
				if (c == (uint8_t)tok[i])
					continue;
				memcpy(buf, tok, len);
				buf[i] = (char)c;
				tried++;
				accepted += verify_any(kind, r, buf, len) == TOK_OK;
			}
		}
		tap_ok(accepted == 0 && tried > 0,
			"%s field %u \"%.*s\": %u of %u single-byte changes accepted", name, field,
			(int)(end - start), tok + start, accepted, tried);
		start = stop;
		field++;
	}
}

/* Every proper prefix, and the token with bytes appended, is rejected. */
static void
truncate_extend(int kind, const char *name, const struct tok_keyring *r, const char *tok)
{
	static const char tails[] = ".A0=_- \r\n\t";
	size_t len = strlen(tok);
	char buf[TOK_BUF_SIZE + 4];
	unsigned accepted = 0, malformed = 0, tried = 0;

	for (size_t n = 0; n < len; n++) {
		enum tok_status st = verify_any(kind, r, tok, n);

		accepted += st == TOK_OK;
		malformed += st == TOK_MALFORMED;
	}
	tap_ok(accepted == 0 && malformed == len, "%s: all %zu truncations are malformed", name,
		len);
	accepted = malformed = 0;
	for (size_t t = 0; t < sizeof(tails); t++) { /* includes the NUL */
		for (size_t extra = 1; extra <= 2; extra++) {
			memcpy(buf, tok, len);
			memset(buf + len, tails[t], extra);
			enum tok_status st = verify_any(kind, r, buf, len + extra);

			tried++;
			accepted += st == TOK_OK;
			malformed += st == TOK_MALFORMED;
		}
	}
	tap_ok(accepted == 0 && malformed == tried, "%s: all %u extensions are malformed", name,
		tried);
}

static void
test_tampering(void)
{
	char tok[TOK_BUF_SIZE];
	struct tok_purchase po;
	struct tok_receipt ro;

	tamper_all(0, "session", &auth, DOC_SESSION);
	tamper_all(1, "purchase", &sale, DOC_PURCHASE);
	tamper_all(2, "receipt", &sale, DOC_RECEIPT);
	tamper_all(3, "path", &sale, DOC_PATH);
	truncate_extend(0, "session", &auth, DOC_SESSION);
	truncate_extend(1, "purchase", &sale, DOC_PURCHASE);
	truncate_extend(2, "receipt", &sale, DOC_RECEIPT);
	truncate_extend(3, "path", &sale, DOC_PATH);

	/* A receipt's MAC is shorter than a purchase token's, so neither passes for the other;
	 * and the kind is inside every MAC. */
	strcpy(tok, DOC_RECEIPT);
	tok[0] = 'p';
	check_st(vpur(&sale, tok, strlen(tok), 42, 1000, &po), TOK_MALFORMED,
		"a receipt relabelled p1 is refused (its MAC is not a purchase token's)");
	strcpy(tok, DOC_PURCHASE);
	tok[0] = 'r';
	check_st(vrec(&sale, tok, strlen(tok), 42, &ro), TOK_MALFORMED,
		"a purchase token relabelled r1 is refused (its MAC is not a receipt's)");
	check_st(vpur(&sale, DOC_RECEIPT, strlen(DOC_RECEIPT), 42, 1000, &po), TOK_MALFORMED,
		"a receipt is not a purchase token");
	check_st(vrec(&sale, DOC_PURCHASE, strlen(DOC_PURCHASE), 42, &ro), TOK_MALFORMED,
		"a purchase token is not a receipt");
	check_st(verify_any(0, &auth, DOC_PURCHASE, strlen(DOC_PURCHASE)), TOK_MALFORMED,
		"a purchase token is not a session token");
	tap_ok(po.user == 0 && ro.user == 0, "a rejected token leaves its output zeroed");
}

/*
 * Texts that a lax parser would take, each given a correct MAC over everything before its
 * last '.': only the strict format can reject them, so they must be TOK_MALFORMED (not
 * TOK_BAD_MAC) -- which also shows that the parser, not the MAC, rejected them.
 */
static void
test_malformed(void)
{
	static const struct {
		int kind;	  /* 0 session, 1 purchase, 2 receipt */
		const char *text; /* the signed part; ".<mac>" is appended */
		const char *why;
	} v[] = {
		{0, "s1.1234567.1767225600.1", NULL}, /* control: well formed, must be OK */
		{0, "s1.01234567.1767225600.1", "leading zero in user"},
		{0, "s1.1234567.01767225600.1", "leading zero in expiry"},
		{0, "s1.1234567.1767225600.01", "leading zero in key id"},
		{0, "s1.0.1767225600.1", "user 0"},
		{0, "s1.9223372036854775808.1767225600.1", "user 2^63"},
		{0, "s1.18446744073709551617.1767225600.1", "user overflowing 64 bits"},
		{0, "s1.1234567.18446744073709551616.1", "expiry 2^64"},
		{0, "s1.1234567.99999999999999999999.1", "expiry of 20 nines"},
		{0, "s1.1234567.100000000000000000000.1",
			"expiry of 21 digits (wraps to a small value)"},
		{0, "s1.1234567.18446744073709551615.1", NULL},
		{0, "s1.1234567.1767225600.4294967297", "key id 2^32+1 (wraps to 1)"},
		{0, "s1.+1234567.1767225600.1", "plus sign"},
		{0, "s1.-1234567.1767225600.1", "minus sign"},
		{0, "s1. 1234567.1767225600.1", "space before a number"},
		{0, "s1.1234567 .1767225600.1", "space after a number"},
		{0, "s1.0x12d687.1767225600.1", "hexadecimal"},
		{0, "s1..1767225600.1", "empty user"},
		{0, "s1.1234567..1", "empty expiry"},
		{0, "s1.1234567.1767225600.", "empty key id"},
		{0, "s1.1234567.1767225600..1", "two dots"},
		{0, "s1.1234567.1767225600.1.", "trailing dot before the MAC"},
		{0, "s1.1234567.1767225600.1.1", "an extra field"},
		{0, "s1.1234567.1", "a missing field"},
		{0, "S1.1234567.1767225600.1", "upper-case prefix"},
		{0, "s2.1234567.1767225600.1", "unknown version"},
		{0, "s1 1234567.1767225600.1", "space after the prefix"},
		{0, ".s1.1234567.1767225600.1", "leading dot"},
		{1, "p1.42.1234567.1767225900.3", NULL},
		{1, "p1.0.1234567.1767225900.3", "event 0"},
		{1, "p1.4294967296.1234567.1767225900.3", "event 2^32"},
		{1, "p1.042.1234567.1767225900.3", "leading zero in event"},
		{1, "p1.42.1234567.1767225900", "a missing field"},
		{1, "p1.42.1234567.1767225900.3.3", "an extra field"},
		{2, "r1.42.1234567.1767225601234.3", NULL},
		{2, "r1.42.1234567.1767225601234.00", "key id 00"},
		{2, "r1.42.1234567.-1.3", "negative time"},
	};
	char buf[160];
	uint8_t full[HMAC_SHA256_LEN];
	struct hmac_sha256_key auth_mac, sale_mac;

	/* The keys of the rings (auth key 1, sale key 3), whatever key id the text claims. */
	hmac_sha256_key_init(&auth_mac, auth_key1, sizeof(auth_key1));
	hmac_sha256_key_init(&sale_mac, sale_key3, strlen(sale_key3));
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const struct tok_keyring *r = v[i].kind == 0 ? &auth : &sale;
		size_t n = strlen(v[i].text);

		memcpy(buf, v[i].text, n);
		buf[n] = '.';
		if (v[i].kind == 2) {
			/* Receipts: SipHash-2-4 under HMAC(sale key, label)[0..16). */
			uint8_t rk[HMAC_SHA256_LEN], le[8];

			hmac_sha256(&sale_mac, "flashgate receipt key", 21, rk);
			struct sipkey sk = siphash_key_from_bytes(rk);
			uint64_t h = siphash24(&sk, buf, n);

			for (int b = 0; b < 8; b++)
				le[b] = (uint8_t)(h >> (8 * b));
			n += 1 + base64url_encode(le, TOK_RMAC_BYTES, buf + n + 1);
		} else {
			hmac_sha256(v[i].kind == 0 ? &auth_mac : &sale_mac, buf, n, full);
			n += 1 + base64url_encode(full, TOK_MAC_BYTES, buf + n + 1);
		}
		enum tok_status st = verify_any(v[i].kind, r, buf, n);

		if (v[i].why == NULL)
			check_st(st, TOK_OK, v[i].text);
		else
			tap_ok(st == TOK_MALFORMED, "%s is malformed (%s): %s", v[i].why,
				tok_status_name(st), v[i].text);
	}

	/* The MAC field itself: alphabet, length, padding, canonical form. */
	static const struct {
		const char *text;
		const char *why;
	} m[] = {
		{"p1.42.1234567.1767225900.3.V+OnkLWYCKB6pfwVMXAkvQ", "standard base64 '+'"},
		{"p1.42.1234567.1767225900.3.V-OnkLWYCKB6pfwVMXAkvQ==", "padding"},
		{"p1.42.1234567.1767225900.3.V-OnkLWYCKB6pfwVMXAkvQ=", "one '='"},
		{"p1.42.1234567.1767225900.3.V-OnkLWYCKB6pfwVMXAkv", "21 characters"},
		{"p1.42.1234567.1767225900.3.V-OnkLWYCKB6pfwVMXAkvQA", "23 characters"},
		{"p1.42.1234567.1767225900.3.V-OnkLWYCKB6pfwVMXAkvR", "unused bits set"},
		{"p1.42.1234567.1767225900.3.V-OnkLWYCKB6pfwVMXAk/Q", "standard base64 '/'"},
		{"p1.42.1234567.1767225900.3.V-OnkLWYCKB6pfwVMXAk Q", "a space"},
		{"p1.42.1234567.1767225900.3.", "no MAC"},
		{"p1.42.1234567.1767225900.3", "no MAC and no dot"},
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		check_st(verify_any(1, &sale, m[i].text, strlen(m[i].text)), TOK_MALFORMED,
			m[i].why);

	/* A NUL inside the token: verification goes by length, not by C string. */
	char nul[TOK_BUF_SIZE];

	strcpy(nul, DOC_SESSION);
	nul[10] = '\0';
	check_st(verify_any(0, &auth, nul, strlen(DOC_SESSION)), TOK_MALFORMED,
		"a NUL inside a session token");
	check_st(verify_any(0, &auth, NULL, 0), TOK_MALFORMED, "an empty token");

	/* A header-sized run of digits: rejected by its length (and read no further). */
	char *big = malloc(4000);

	if (big == NULL)
		abort();

	memcpy(big, "s1.", 3);
	memset(big + 3, '7', 4000 - 3);
	check_st(verify_any(0, &auth, big, 4000), TOK_MALFORMED, "a 4000-byte token of digits");
	check_st(verify_any(0, &auth, big, TOK_PURCHASE_MAX_LEN + 1), TOK_MALFORMED,
		"an 89-byte token of digits");
	free(big);
}

/* ---- keys, rotation, expiry, events, users ---------------------------------------------- */

static void
test_keys_and_rotation(void)
{
	struct tok_keyring r;
	struct tok_session so;
	uint8_t k1[32], k2[32];
	char t1[TOK_BUF_SIZE], t2[TOK_BUF_SIZE], t[TOK_BUF_SIZE];
	int n1, n2;

	memset(k1, 0x11, sizeof(k1));
	memset(k2, 0x22, sizeof(k2));
	tok_keyring_init(&r);
	tok_keyring_set(&r, 1, k1, sizeof(k1), true);
	n1 = tok_session_mint(&r, 77, 2000, t1, sizeof(t1));
	tap_ok(strstr(t1, ".2000.1.") != NULL, "minted with key 1: %s", t1);

	/* Key id changed in the text: another key of the ring, or none. */
	tok_keyring_set(&r, 2, k2, sizeof(k2), false);
	strcpy(t, t1);
	t[strlen("s1.77.2000.")] = '2';
	check_st(vsess(&r, t, (size_t)n1, 1000, &so), TOK_BAD_MAC, "key id 1 -> 2 is a bad MAC");
	t[strlen("s1.77.2000.")] = '3';
	check_st(vsess(&r, t, (size_t)n1, 1000, &so), TOK_UNKNOWN_KEY,
		"key id 1 -> 3 (not in the ring) is an unknown key");
	check_st(vsess(&sale, t1, (size_t)n1, 1000, &so), TOK_UNKNOWN_KEY,
		"a token of another ring without its key id is an unknown key");

	/* Key id 0 is a key id like any other: an empty slot must not pass for key 0. */
	struct tok_keyring r0;
	char t0[TOK_BUF_SIZE];

	tok_keyring_init(&r0);
	tok_keyring_set(&r0, 0, k1, sizeof(k1), true);
	int n0 = tok_session_mint(&r0, 77, 2000, t0, sizeof(t0));

	tap_ok(!tok_keyring_has(&r, 0) && vsess(&r, t0, (size_t)n0, 1000, &so) == TOK_UNKNOWN_KEY,
		"a key-0 token at a ring without key 0 is an unknown key");

	/* Rotation: key 2 becomes current; key 1 still verifies until it is removed. */
	check_eq(tok_keyring_set_current(&r, 2), 0, "key 2 made current");
	n2 = tok_session_mint(&r, 77, 2000, t2, sizeof(t2));
	tap_ok(strstr(t2, ".2000.2.") != NULL, "new tokens carry key id 2: %s", t2);
	check_st(vsess(&r, t1, (size_t)n1, 1000, &so), TOK_OK,
		"during the overlap a key-1 token still verifies");
	check_st(vsess(&r, t2, (size_t)n2, 1000, &so), TOK_OK, "and a key-2 token verifies");

	/* A copy by value (what RCU publishes) verifies the same tokens. */
	struct tok_keyring copy;

	memcpy(&copy, &r, sizeof(copy));
	tap_ok(vsess(&copy, t1, (size_t)n1, 1000, &so) == TOK_OK &&
			vsess(&copy, t2, (size_t)n2, 1000, &so) == TOK_OK,
		"a keyring copied by value verifies both");

	tok_keyring_remove(&r, 1);
	check_st(vsess(&r, t1, (size_t)n1, 1000, &so), TOK_UNKNOWN_KEY,
		"after removing key 1, its token is an unknown key");
	check_st(vsess(&r, t2, (size_t)n2, 1000, &so), TOK_OK, "while key 2 tokens verify");
	check_st(vsess(&copy, t1, (size_t)n1, 1000, &so), TOK_OK,
		"the old copy is unaffected (workers on the old version finish with it)");

	/* Same id, another secret: the old token is forged as far as the ring can tell. */
	tok_keyring_set(&r, 1, k2, sizeof(k2), false);
	check_st(vsess(&r, t1, (size_t)n1, 1000, &so), TOK_BAD_MAC,
		"key id 1 re-added with another secret: old token is a bad MAC");
}

static void
test_expiry(void)
{
	static const struct {
		uint64_t expires, now;
		enum tok_status want;
	} v[] = {
		{1767225600, 1767225599, TOK_OK},
		{1767225600, 1767225600, TOK_EXPIRED},
		{1767225600, 1767225601, TOK_EXPIRED},
		{1767225600, 0, TOK_OK},
		{1767225600, UINT64_MAX, TOK_EXPIRED},
		{0, 0, TOK_EXPIRED},
		{1, 0, TOK_OK},
		{UINT64_MAX, UINT64_MAX - 1, TOK_OK},
		{UINT64_MAX, UINT64_MAX, TOK_EXPIRED},
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char s[TOK_BUF_SIZE], p[TOK_BUF_SIZE];
		struct tok_session so;
		struct tok_purchase po;
		int ns = tok_session_mint(&auth, 5, v[i].expires, s, sizeof(s));
		int np = tok_purchase_mint(&sale, 9, 5, v[i].expires, p, sizeof(p));
		enum tok_status a = vsess(&auth, s, (size_t)ns, v[i].now, &so);
		enum tok_status b = vpur(&sale, p, (size_t)np, 9, v[i].now, &po);

		tap_ok(a == v[i].want && b == v[i].want && so.user == 5 && po.user == 5,
			"expires %" PRIu64 " at now %" PRIu64 ": session %s, purchase %s (want %s)",
			v[i].expires, v[i].now, tok_status_name(a), tok_status_name(b),
			tok_status_name(v[i].want));
	}
}

static void
test_events_and_users(void)
{
	char p[TOK_BUF_SIZE], r[TOK_BUF_SIZE], path[TOK_BUF_SIZE];
	struct tok_purchase po;
	struct tok_receipt ro;
	int np = tok_purchase_mint(&sale, 5, 1001, 2000, p, sizeof(p));
	int nr = tok_receipt_mint(&sale, 5, 1001, 1500, r, sizeof(r));
	int nq = tok_path_mint(&sale, 5, path, sizeof(path));
	uint32_t kid = 1234;

	tap_ok(vpur(&sale, p, (size_t)np, 6, 1000, &po) == TOK_WRONG_EVENT && po.event == 5 &&
			po.user == 1001,
		"purchase token of event 5 at event 6: wrong event, and says event 5");
	check_st(vpur(&sale, p, (size_t)np, 6, 3000, &po), TOK_WRONG_EVENT,
		"an expired token of another event is reported as the other event");
	tap_ok(vrec(&sale, r, (size_t)nr, 6, &ro) == TOK_WRONG_EVENT && ro.event == 5,
		"receipt of event 5 at event 6: wrong event");
	tap_ok(vpur(&sale, p, (size_t)np, 5, 1000, &po) == TOK_OK && po.user == 1001 &&
			po.user != 1002,
		"verify gives user 1001: a caller expecting user 1002 can tell");
	tap_ok(vrec(&sale, r, (size_t)nr, 5, &ro) == TOK_OK && ro.user == 1001 &&
			ro.admitted_ms == 1500,
		"receipt gives user 1001 admitted at 1500 ms");

	/* Reserve path: other event, other key, malformed segments. */
	check_st(vpath(&sale, path, (size_t)nq, 5, &kid), TOK_OK, "path of event 5 at event 5");
	check_eq(kid, 3, "path verify gives its key id");
	check_st(vpath(&sale, path, (size_t)nq, 6, NULL), TOK_BAD_MAC,
		"path of event 5 at event 6 is rejected");
	check_st(vpath(&sale, path, (size_t)nq, 0, NULL), TOK_MALFORMED, "path at event 0");

	struct tok_keyring other;
	uint8_t k[32];

	memset(k, 0x77, sizeof(k));
	tok_keyring_init(&other);
	tok_keyring_set(&other, 3, k, sizeof(k), true);
	check_st(vpath(&other, path, (size_t)nq, 5, NULL), TOK_BAD_MAC,
		"path under another secret with the same key id is rejected");
	check_st(vpath(&auth, path, (size_t)nq, 5, NULL), TOK_UNKNOWN_KEY,
		"path with a key id the ring does not have");

	char pk1[TOK_PATH_KEY_CHARS + 1], pk2[TOK_PATH_KEY_CHARS + 1];

	tok_path_key(&sale, 3, 1, pk1);
	tok_path_key(&sale, 3, 2, pk2);
	tap_ok(strlen(pk1) == TOK_PATH_KEY_CHARS && strcmp(pk1, pk2) != 0,
		"events 1 and 2 have different 16-character path keys");

	static const char *const bad[] = {
		"3_8adNU1Sny37zYiTo",	       /* wrong separator */
		"38adNU1Sny37zYiTo",	       /* none */
		"03-8adNU1Sny37zYiTo",	       /* leading zero */
		"-8adNU1Sny37zYiTo",	       /* no key id */
		"3-8adNU1Sny37zYiT",	       /* 15 characters */
		"3-8adNU1Sny37zYiToA",	       /* 17 characters */
		"3-8adNU1Sny37zYiT=",	       /* padding */
		"3-8adNU1Sny37zYi+o",	       /* standard base64 */
		"3-8adNU1Sny37zYiTo/",	       /* a trailing slash */
		"+3-8adNU1Sny37zYiTo",	       /* a sign */
		"4294967296-8adNU1Sny37zYiTo", /* key id 2^32 */
		"",			       /* empty */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_st(vpath(&sale, bad[i], strlen(bad[i]), 42, NULL), TOK_MALFORMED,
			bad[i][0] ? bad[i] : "empty segment");
}

static void
test_names(void)
{
	int bad = 0;

	for (int s = 0; s < TOK_STATUS_COUNT; s++)
		bad += strcmp(tok_status_name((enum tok_status)s), "?") == 0;
	tap_ok(bad == 0 && strcmp(tok_status_name(TOK_BAD_MAC), "bad_mac") == 0 &&
			strcmp(tok_status_name((enum tok_status)99), "?") == 0,
		"every status has a name");
	tap_ok(tok_kind_of(DOC_SESSION, strlen(DOC_SESSION)) == TOK_KIND_SESSION &&
			tok_kind_of(DOC_PURCHASE, 3) == TOK_KIND_PURCHASE &&
			tok_kind_of(DOC_RECEIPT, 3) == TOK_KIND_RECEIPT &&
			tok_kind_of("r1", 2) == TOK_KIND_NONE &&
			tok_kind_of("x1.", 3) == TOK_KIND_NONE &&
			tok_kind_of("p2.", 3) == TOK_KIND_NONE,
		"tok_kind_of tells the kinds apart by prefix");
}

int
main(void)
{
	G_page = (size_t)sysconf(_SC_PAGESIZE);
	char *page = calloc(1, G_page);

	if (page == NULL || guard_place(&G, page, G_page) == NULL) {
		tap_ok(0, "guard page");
		return tap_done();
	}
	setup_rings();
	test_hmac();
	test_base64url();
	test_keyring();
	test_worked_example();
	test_round_trips();
	test_number_lengths();
	test_pow_tokens();
	test_mint_errors();
	test_tampering();
	test_malformed();
	test_keys_and_rotation();
	test_expiry();
	test_events_and_users();
	test_names();
	guard_free(&G);
	free(page);
	tok_keyring_wipe(&auth);
	tok_keyring_wipe(&sale);
	return tap_done();
}
