/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the token parsers of common/token.c: session tokens, purchase tokens
 * ("p1", and "p2" with a challenge), receipts and reserve path segments, the texts a data plane
 * reads from every client (docs/testing.md).
 *
 * Each input is verified as each kind, and the answer compared with a reference written here
 * from docs/tokens.md alone: the text split at its dots, numbers read with an overflow check per
 * digit, base64url decoded bit by bit, HMACs from OpenSSL's HMAC(). Then the input is re-signed
 * (what follows its last '.' replaced by the right MAC for the key id it names), so that the
 * fuzzer reaches authentic tokens of every shape: an authentic token must verify with the fields
 * the reference read, and be exactly the text the mint functions make of those fields with that
 * key (one text per token: a token that verifies was minted with the key).
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdbool.h>

#include "common/siphash.h"
#include "common/token.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_keys.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

enum { K_SESSION, K_PURCHASE, K_RECEIPT, K_N };

/* docs/tokens.md: "<c>1.<numbers>.<mac>", the key id the last number. */
static const struct kind_spec {
	const char *name;
	char prefix;
	unsigned n; /* numbers */
	uint64_t min[5], max[5];
	size_t mac_bytes;
	bool sale; /* under the sale keys, else the auth keys */
	enum tok_kind tok_kind;
} kinds[K_N] = {
	[K_SESSION] = {"session", 's', 3, {1, 0, 0}, {TOK_USER_MAX, UINT64_MAX, UINT32_MAX},
		TOK_MAC_BYTES, false, TOK_KIND_SESSION},
	[K_PURCHASE] = {"purchase", 'p', 4, {1, 1, 0, 0},
		{UINT32_MAX, TOK_USER_MAX, UINT64_MAX, UINT32_MAX}, TOK_MAC_BYTES, true,
		TOK_KIND_PURCHASE},
	[K_RECEIPT] = {"receipt", 'r', 4, {1, 1, 0, 0},
		{UINT32_MAX, TOK_USER_MAX, UINT64_MAX, UINT32_MAX}, TOK_RMAC_BYTES, true,
		TOK_KIND_RECEIPT},
};

/*
 * A purchase token with a challenge, "p2.<event>.<user>.<expires_s>.<bits>.<kid>.<mac>": read
 * as a purchase token when its text starts "p2" (tok_purchase_verify() takes both). tok_kind_of()
 * knows only the "<c>1." prefixes.
 */
static const struct kind_spec purchase_pow = {"purchase", 'p', 5, {1, 1, 0, 1, 0},
	{UINT32_MAX, TOK_USER_MAX, UINT64_MAX, TOK_POW_BITS_MAX, UINT32_MAX}, TOK_MAC_BYTES, true,
	TOK_KIND_NONE};

/* The format t claims as kind: p2's for a purchase token starting "p2", else kind's own. */
static const struct kind_spec *
spec_of(unsigned kind, const char *t, size_t len)
{
	return kind == K_PURCHASE && len >= 2 && t[0] == 'p' && t[1] == '2' ? &purchase_pow
									    : &kinds[kind];
}

/* The version digit of a kind's prefix: "p2" for a challenge, "1" for the rest. */
static char
version_of(const struct kind_spec *k)
{
	return k == &purchase_pow ? '2' : '1';
}

static struct tok_keyring auth_ring, sale_ring;

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* ---- the reference ----------------------------------------------------------------------- */

/* Decimal digits s[0..len), no sign, no leading zero, within [min, max]. */
static bool
ref_number(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || (s[0] == '0' && len > 1))
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* Base64url without padding of exactly n bytes, canonical (the unused low bits zero). */
static bool
ref_base64url(const char *s, size_t len, uint8_t *out, size_t n)
{
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t o = 0;

	if (len != (n * 8 + 5) / 6)
		return false;
	for (size_t i = 0; i < len; i++) {
		const char *p = s[i] != '\0' ? strchr(b64, s[i]) : NULL;

		if (p == NULL)
			return false;
		acc = acc << 6 | (uint32_t)(p - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	return o == n && acc == 0;
}

/* The n bytes at in as base64url without padding; returns the characters written. */
static size_t
ref_base64url_encode(const uint8_t *in, size_t n, char *out)
{
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		acc = acc << 8 | in[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			out[o++] = b64[(acc >> bits) & 63];
		}
	}
	if (bits > 0)
		out[o++] = b64[(acc << (6 - bits)) & 63];
	return o;
}

/* What the reference read from a token: ok when it has exactly its kind's format. */
struct ref {
	bool ok;
	const struct kind_spec *spec; /* the format read */
	uint64_t v[5];
	size_t signed_len; /* the text the MAC covers */
	uint8_t mac[TOK_MAC_BYTES];
};

static void
ref_parse(unsigned kind, const char *t, size_t len, struct ref *r)
{
	const struct kind_spec *k = spec_of(kind, t, len);
	const char *p, *end = t + len, *dot;

	memset(r, 0, sizeof(*r));
	r->spec = k;
	if (len < 3 || t[0] != k->prefix || t[1] != version_of(k) || t[2] != '.')
		return;
	p = t + 3;
	for (unsigned i = 0; i < k->n; i++) {
		dot = memchr(p, '.', (size_t)(end - p));
		if (dot == NULL ||
			!ref_number(p, (size_t)(dot - p), k->min[i], k->max[i], &r->v[i]))
			return;
		p = dot + 1;
	}
	r->signed_len = (size_t)(p - 1 - t);
	r->ok = ref_base64url(p, (size_t)(end - p), r->mac, k->mac_bytes);
}

static const struct fuzz_key *
key_of(bool sale, uint64_t kid)
{
	const struct fuzz_key *keys = sale ? fuzz_sale_keys : fuzz_auth_keys;

	for (unsigned i = 0; i < FUZZ_N_KEYS; i++)
		if (keys[i].kid == kid)
			return &keys[i];
	return NULL;
}

static void
ref_hmac(const struct fuzz_key *key, const void *msg, size_t len, uint8_t out[32])
{
	unsigned int n = 32;

	FUZZ_CHECK(HMAC(EVP_sha256(), key->secret, FUZZ_SECRET_LEN, msg, len, out, &n) != NULL &&
		   n == 32);
}

/* The MAC a token of kind whose signed text is t[0..len) carries under key. */
static void
ref_mac(unsigned kind, const struct fuzz_key *key, const char *t, size_t len, uint8_t *mac)
{
	static const char label[] = "flashgate receipt key";
	uint8_t full[32];

	if (kind != K_RECEIPT) {
		ref_hmac(key, t, len, full);
		memcpy(mac, full, TOK_MAC_BYTES);
		return;
	}
	/* SipHash-2-4 under the first 16 bytes of HMAC(sale key, label), little-endian. */
	ref_hmac(key, label, sizeof(label) - 1, full);
	struct sipkey sk = siphash_key_from_bytes(full);
	uint64_t h = siphash24(&sk, t, len);

	for (unsigned i = 0; i < TOK_RMAC_BYTES; i++)
		mac[i] = (uint8_t)(h >> (8 * i));
}

/* What verifying t (read into r) as kind must answer. */
static enum tok_status
ref_status(unsigned kind, const char *t, const struct ref *r)
{
	const struct kind_spec *k = r->spec;
	const struct fuzz_key *key;
	uint8_t mac[TOK_MAC_BYTES];

	if (!r->ok)
		return TOK_MALFORMED;
	key = key_of(k->sale, r->v[k->n - 1]);
	if (key == NULL)
		return TOK_UNKNOWN_KEY;
	ref_mac(kind, key, t, r->signed_len, mac);
	if (memcmp(mac, r->mac, k->mac_bytes) != 0)
		return TOK_BAD_MAC;
	if (kind != K_SESSION && r->v[0] != FUZZ_EVENT)
		return TOK_WRONG_EVENT;
	if (kind == K_RECEIPT)
		return TOK_OK;
	/* expires_s: the number before the key id's, before bits' in a p2 token. */
	return FUZZ_NOW_S < r->v[k->n - (k == &purchase_pow ? 3 : 2)] ? TOK_OK : TOK_EXPIRED;
}

/* ---- the checks -------------------------------------------------------------------------- */

/* Verifies t as kind: the status, and the fields in the reference's order. */
static enum tok_status
verify(unsigned kind, const char *t, size_t len, uint64_t v[5])
{
	enum tok_status st;

	switch (kind) {
	case K_SESSION: {
		struct tok_session s;

		st = tok_session_verify(&auth_ring, t, len, FUZZ_NOW_S, &s);
		v[0] = s.user, v[1] = s.expires_s, v[2] = s.kid, v[3] = 0, v[4] = 0;
		break;
	}
	case K_PURCHASE: {
		struct tok_purchase p;

		st = tok_purchase_verify(&sale_ring, t, len, FUZZ_EVENT, FUZZ_NOW_S, &p);
		v[0] = p.event, v[1] = p.user, v[2] = p.expires_s;
		/* A p2 token's bits (1..30) come before its key id. */
		v[3] = p.pow_bits ? p.pow_bits : p.kid, v[4] = p.pow_bits ? p.kid : 0;
		break;
	}
	default: {
		struct tok_receipt r;

		st = tok_receipt_verify(&sale_ring, t, len, FUZZ_EVENT, &r);
		v[0] = r.event, v[1] = r.user, v[2] = r.admitted_ms, v[3] = r.kid, v[4] = 0;
		break;
	}
	}
	return st;
}

/* Verifies t as kind and compares with the reference; returns the status. */
static enum tok_status
check_kind(unsigned kind, const char *t, size_t len)
{
	static const uint64_t zero[5];
	struct ref r;
	enum tok_status want, st;
	uint64_t v[5];

	ref_parse(kind, t, len, &r);
	want = ref_status(kind, t, &r);
	st = verify(kind, t, len, v);
	if (st != want)
		fprintf(stderr, "fuzz: %s token \"%.*s\": verified %s, the reference says %s\n",
			kinds[kind].name, (int)len, t, tok_status_name(st), tok_status_name(want));
	FUZZ_CHECK(st == want);
	/* The fields only of an authentic token; never of a forged one. */
	if (st == TOK_OK || st == TOK_EXPIRED || st == TOK_WRONG_EVENT)
		FUZZ_CHECK(memcmp(v, r.v, sizeof(v)) == 0);
	else
		FUZZ_CHECK(memcmp(v, zero, sizeof(v)) == 0);
	if (r.ok)
		FUZZ_CHECK(tok_kind_of(t, len) == r.spec->tok_kind);
	return st;
}

/* Mints the token of kind in format k with fields v under the key v names; returns its length. */
static int
mint(unsigned kind, const struct kind_spec *k, const uint64_t v[5], char *out, size_t cap)
{
	struct tok_keyring ring = k->sale ? sale_ring : auth_ring;

	FUZZ_CHECK(tok_keyring_set_current(&ring, (uint32_t)v[k->n - 1]) == 0);
	if (k == &purchase_pow)
		return tok_purchase_mint_pow(
			&ring, (uint32_t)v[0], v[1], v[2], (unsigned)v[3], out, cap);
	switch (kind) {
	case K_SESSION:
		return tok_session_mint(&ring, v[0], v[1], out, cap);
	case K_PURCHASE:
		return tok_purchase_mint(&ring, (uint32_t)v[0], v[1], v[2], out, cap);
	default:
		return tok_receipt_mint(&ring, (uint32_t)v[0], v[1], v[2], out, cap);
	}
}

/*
 * t with what follows its last '.' replaced by the MAC of the key it names: if the rest is
 * well formed and the key known, it must verify, and be the text its fields mint.
 */
static void
check_resigned(unsigned kind, const char *t, size_t len)
{
	const struct kind_spec *k = &kinds[kind];
	const char *dot = memrchr(t, '.', len);
	size_t chars = (k->mac_bytes * 8 + 5) / 6, signed_len, n;
	char buf[2 * TOK_BUF_SIZE], minted[TOK_BUF_SIZE];
	const struct fuzz_key *key;
	uint8_t mac[TOK_MAC_BYTES];
	struct ref r;
	int m;

	if (dot == NULL || (size_t)(dot - t) + 1 + chars > sizeof(buf))
		return;
	signed_len = (size_t)(dot - t);
	memcpy(buf, t, signed_len + 1);
	memset(buf + signed_len + 1, 'A', chars); /* a canonical MAC of zeros, to read the rest */
	n = signed_len + 1 + chars;
	ref_parse(kind, buf, n, &r);
	key = r.ok ? key_of(k->sale, r.v[r.spec->n - 1]) : NULL;
	if (key == NULL) {
		check_kind(kind, buf, n);
		return;
	}
	ref_mac(kind, key, buf, signed_len, mac);
	FUZZ_CHECK(ref_base64url_encode(mac, k->mac_bytes, buf + signed_len + 1) == chars);
	FUZZ_CHECK(check_kind(kind, buf, n) != TOK_BAD_MAC);
	m = mint(kind, r.spec, r.v, minted, sizeof(minted));
	FUZZ_CHECK(m == (int)n && memcmp(minted, buf, n) == 0);
}

/* "<kid>-<pathkey>", as the reference reads it; returns what verifying it must answer. */
static enum tok_status
ref_path(const char *t, size_t len, uint64_t *kid, const struct fuzz_key **key)
{
	const char *dash = memchr(t, '-', len);
	uint8_t got[TOK_PATH_KEY_BYTES], full[32];
	char msg[32];

	*key = NULL;
	if (dash == NULL || !ref_number(t, (size_t)(dash - t), 0, UINT32_MAX, kid) ||
		!ref_base64url(dash + 1, len - (size_t)(dash + 1 - t), got, sizeof(got)))
		return TOK_MALFORMED;
	*key = key_of(true, *kid);
	if (*key == NULL)
		return TOK_UNKNOWN_KEY;
	ref_hmac(*key, msg, (size_t)snprintf(msg, sizeof(msg), "path.%u", FUZZ_EVENT), full);
	return memcmp(full, got, sizeof(got)) == 0 ? TOK_OK : TOK_BAD_MAC;
}

static void
check_path(const char *t, size_t len)
{
	const struct fuzz_key *key;
	uint64_t kid;
	uint32_t got = UINT32_MAX;
	enum tok_status want = ref_path(t, len, &kid, &key);
	enum tok_status st = tok_path_verify(&sale_ring, t, len, FUZZ_EVENT, &got);

	if (st != want)
		fprintf(stderr, "fuzz: path \"%.*s\": verified %s, the reference says %s\n",
			(int)len, t, tok_status_name(st), tok_status_name(want));
	FUZZ_CHECK(st == want);
	FUZZ_CHECK(st != TOK_OK || got == kid);
	FUZZ_CHECK(tok_path_verify(&sale_ring, t, len, 0, NULL) == TOK_MALFORMED);
}

/* The path segment of the key the input's leading number names, made by the mint functions. */
static void
check_path_minted(const char *t, size_t len)
{
	struct tok_keyring ring = sale_ring;
	char seg[TOK_PATH_MAX_LEN + 1], key[TOK_PATH_KEY_CHARS + 1];
	const char *dash = memchr(t, '-', len);
	uint64_t kid;
	int n;

	if (dash == NULL || !ref_number(t, (size_t)(dash - t), 0, UINT32_MAX, &kid) ||
		key_of(true, kid) == NULL)
		return;
	FUZZ_CHECK(tok_keyring_set_current(&ring, (uint32_t)kid) == 0);
	n = tok_path_mint(&ring, FUZZ_EVENT, seg, sizeof(seg));
	FUZZ_CHECK(n > 0 && tok_path_key(&ring, (uint32_t)kid, FUZZ_EVENT, key) == 0);
	FUZZ_CHECK((size_t)n == (size_t)(dash - t) + 1 + TOK_PATH_KEY_CHARS &&
		   memcmp(seg, t, (size_t)(dash - t) + 1) == 0 &&
		   strcmp(seg + (dash - t) + 1, key) == 0);
	check_path(seg, (size_t)n);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	tok_keyring_init(&auth_ring);
	tok_keyring_init(&sale_ring);
	for (unsigned i = 0; i < FUZZ_N_KEYS; i++) {
		FUZZ_CHECK(tok_keyring_set(&auth_ring, fuzz_auth_keys[i].kid,
				   fuzz_auth_keys[i].secret, FUZZ_SECRET_LEN, i == 0) == 0);
		FUZZ_CHECK(tok_keyring_set(&sale_ring, fuzz_sale_keys[i].kid,
				   fuzz_sale_keys[i].secret, FUZZ_SECRET_LEN, i == 0) == 0);
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *t = fuzz_copy(data, size);

	for (unsigned kind = 0; kind < K_N; kind++) {
		check_kind(kind, t, size);
		check_resigned(kind, t, size);
	}
	check_path(t, size);
	check_path_minted(t, size);
	free(t);
	return 0;
}
