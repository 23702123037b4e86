/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/base64url.h"
#include "common/parse.h"
#include "common/token.h"

_Static_assert(TOK_KEYS_MAX <= 8, "tok_keyring.used is an 8-bit mask");
_Static_assert(TOK_SECRET_MAX <= UINT8_MAX, "tok_keyring.secret_len is 8 bits");
_Static_assert(TOK_MAC_BYTES <= HMAC_SHA256_LEN && TOK_PATH_KEY_BYTES <= HMAC_SHA256_LEN,
	"a truncated MAC cannot be longer than the MAC");

/* One decimal field of a token: the values it may take. */
struct tok_field {
	uint64_t min;
	uint64_t max;
};

static const struct tok_field tok_session_fields[] = {
	{1, TOK_USER_MAX}, /* user */
	{0, UINT64_MAX},   /* expires_s */
	{0, UINT32_MAX},   /* kid */
};

/* A purchase token with a challenge: event, user, expires_s, bits, kid. */
static const struct tok_field tok_pow_fields[] = {
	{1, UINT32_MAX},	     /* event */
	{1, TOK_USER_MAX},	     /* user */
	{0, UINT64_MAX},	     /* expires_s */
	{1, TOK_POW_BITS_MAX},	     /* bits */
	{0, UINT32_MAX},	     /* kid */
};
static const struct tok_field tok_sale_fields[] = {
	{1, UINT32_MAX},   /* event */
	{1, TOK_USER_MAX}, /* user */
	{0, UINT64_MAX},   /* expires_s or admitted_ms */
	{0, UINT32_MAX},   /* kid */
};

/* ---- keyring ---------------------------------------------------------------------------- */

static int
tok_slot(const struct tok_keyring *ring, uint32_t kid)
{
	for (int i = 0; i < TOK_KEYS_MAX; i++)
		if ((ring->used >> i & 1) && ring->kids[i] == kid)
			return i;
	return -1;
}

void
tok_keyring_init(struct tok_keyring *ring)
{
	memset(ring, 0, sizeof(*ring));
	ring->current = -1;
}

void
tok_keyring_wipe(struct tok_keyring *ring)
{
	OPENSSL_cleanse(ring, sizeof(*ring));
	ring->current = -1;
}

int
tok_keyring_set(
	struct tok_keyring *ring, uint32_t kid, const void *secret, size_t len, bool make_current)
{
	int s;

	if (ring == NULL || secret == NULL || len < TOK_SECRET_MIN || len > TOK_SECRET_MAX)
		return -EINVAL;
	s = tok_slot(ring, kid);
	if (s < 0) {
		for (s = 0; s < TOK_KEYS_MAX && (ring->used >> s & 1); s++)
			;
		if (s == TOK_KEYS_MAX)
			return -ENOSPC;
	}
	OPENSSL_cleanse(ring->secret[s], sizeof(ring->secret[s]));
	memcpy(ring->secret[s], secret, len);
	ring->secret_len[s] = (uint8_t)len;
	hmac_sha256_key_init(&ring->mac[s], secret, len);
	/* The receipt key: a separate key from the same secret, so neither MAC helps forge
	 * the other. */
	uint8_t rk[HMAC_SHA256_LEN];
	static const char label[] = "flashgate receipt key";

	hmac_sha256(&ring->mac[s], label, sizeof(label) - 1, rk);
	ring->rmac[s] = siphash_key_from_bytes(rk);
	OPENSSL_cleanse(rk, sizeof(rk));
	ring->kids[s] = kid;
	ring->used |= (uint8_t)(1u << s);
	if (make_current)
		ring->current = (int8_t)s;
	return 0;
}

int
tok_keyring_remove(struct tok_keyring *ring, uint32_t kid)
{
	int s = tok_slot(ring, kid);

	if (s < 0)
		return -ENOENT;
	ring->used &= (uint8_t) ~(1u << s);
	ring->kids[s] = 0;
	ring->secret_len[s] = 0;
	OPENSSL_cleanse(ring->secret[s], sizeof(ring->secret[s]));
	hmac_sha256_key_wipe(&ring->mac[s]);
	OPENSSL_cleanse(&ring->rmac[s], sizeof(ring->rmac[s]));
	if (ring->current == s)
		ring->current = -1;
	return 0;
}

int
tok_keyring_set_current(struct tok_keyring *ring, uint32_t kid)
{
	int s = tok_slot(ring, kid);

	if (s < 0)
		return -ENOENT;
	ring->current = (int8_t)s;
	return 0;
}

int
tok_keyring_current(const struct tok_keyring *ring, uint32_t *kid)
{
	if (ring->current < 0)
		return -ENOKEY;
	*kid = ring->kids[ring->current];
	return 0;
}

bool
tok_keyring_has(const struct tok_keyring *ring, uint32_t kid)
{
	return tok_slot(ring, kid) >= 0;
}

unsigned
tok_keyring_count(const struct tok_keyring *ring)
{
	return (unsigned)__builtin_popcount(ring->used);
}

int
tok_keyring_secret(const struct tok_keyring *ring, uint32_t kid, uint8_t *out, size_t cap)
{
	int s = tok_slot(ring, kid);

	if (s < 0)
		return -ENOENT;
	if (cap < ring->secret_len[s])
		return -ENOSPC;
	memcpy(out, ring->secret[s], ring->secret_len[s]);
	return ring->secret_len[s];
}

/* ---- text ------------------------------------------------------------------------------- */

static const char tok_pairs[201] = "0001020304050607080910111213141516171819"
				   "2021222324252627282930313233343536373839"
				   "4041424344454647484950515253545556575859"
				   "6061626364656667686970717273747576777879"
				   "8081828384858687888990919293949596979899";

/* Writes the 8 decimal digits of v < 10^8, leading zeros included, at p. */
static inline void
tok_put_8(char *p, uint32_t v)
{
	/* Two independent halves, each two independent pairs: a short dependency chain. */
	uint32_t hi = v / 10000, lo = v % 10000;

	memcpy(p, tok_pairs + 2 * (hi / 100), 2);
	memcpy(p + 2, tok_pairs + 2 * (hi % 100), 2);
	memcpy(p + 4, tok_pairs + 2 * (lo / 100), 2);
	memcpy(p + 6, tok_pairs + 2 * (lo % 100), 2);
}

/*
 * Writes v in decimal at p; returns the end. From the end: eight digits at a time with 32-bit
 * arithmetic once a 64-bit division split them off, then two at a time (receipts, with a
 * 13-digit millisecond time, are minted per request).
 */
static char *
tok_put_u64(char *p, uint64_t v)
{
	char *end = p + parse_dec_digits(v), *e = end;

	while (v >= UINT64_C(100000000)) {
		e -= 8;
		tok_put_8(e, (uint32_t)(v % UINT64_C(100000000)));
		v /= UINT64_C(100000000);
	}

	uint32_t x = (uint32_t)v;

	while (x >= 100) {
		e -= 2;
		memcpy(e, tok_pairs + 2 * (x % 100), 2);
		x /= 100;
	}
	if (x >= 10)
		memcpy(e - 2, tok_pairs + 2 * x, 2);
	else
		e[-1] = (char)('0' + x);
	return end;
}

/*
 * Reads the decimal number that starts at p and ends at the first non-digit (or end) into *v.
 * Returns the end of the digits, or NULL if there are none, there is a leading zero, or the
 * value is outside [f->min, f->max] (which includes anything past 2^64 - 1).
 */
static inline const char *
tok_get_dec(const char *p, const char *end, const struct tok_field *f, uint64_t *v)
{
	static const char u64_max[] = "18446744073709551615"; /* 2^64 - 1 */
	const char *start = p;
	uint64_t x = 0;
	size_t n;

	/*
	 * No overflow test per digit: that would put a multiply with a flag test on the
	 * critical path of every digit (most of the cost of a verify besides the hash). Up to
	 * 19 digits cannot overflow; 20 digits are compared as text with 2^64 - 1 (same length,
	 * no leading zero, so text order is numeric order); more are too many.
	 */
	while (p < end && (unsigned)(*p - '0') < 10) {
		x = x * 10 + (unsigned)(*p - '0');
		p++;
	}
	n = (size_t)(p - start);
	if (n == 0 || n > sizeof(u64_max) - 1 || (*start == '0' && n > 1))
		return NULL;
	if (n == sizeof(u64_max) - 1 && memcmp(start, u64_max, n) > 0)
		return NULL;
	if (x < f->min || x > f->max)
		return NULL;
	*v = x;
	return p;
}

/*
 * Splits tok into "<prefix>.<n fields>.<mac>": checks the two-character prefix, reads the
 * fields into vals, decodes the MAC into mac and sets *signed_len to the length of the text
 * the MAC covers. Returns false if the text is anything else.
 */
static inline bool
tok_parse(const char *tok, size_t len, const char prefix[2], const struct tok_field *fields,
	unsigned n, uint64_t *vals, uint8_t *mac, size_t mac_bytes, size_t mac_chars,
	size_t *signed_len)
{
	const char *p = tok, *end = tok + len;

	/* Longer than the longest form (every number at its maximum): no need to read it. */
	if (len > TOK_PURCHASE_MAX_LEN)
		return false;
	if (len < 3 || p[0] != prefix[0] || p[1] != prefix[1] || p[2] != '.')
		return false;
	p += 3;
	for (unsigned i = 0; i < n; i++) {
		p = tok_get_dec(p, end, &fields[i], &vals[i]);
		if (p == NULL || p == end || *p != '.')
			return false;
		p++;
	}
	if ((size_t)(end - p) != mac_chars)
		return false;
	*signed_len = (size_t)(p - 1 - tok);
	return base64url_decode(p, mac_chars, mac, mac_bytes) == (int)mac_bytes;
}

/* The MAC key of key id kid, or NULL. */
static inline const struct hmac_sha256_key *
tok_find(const struct tok_keyring *ring, uint32_t kid)
{
	int s = tok_slot(ring, kid);

	return s < 0 ? NULL : &ring->mac[s];
}

/* Checks the truncated MAC of msg in constant time. */
static inline bool
tok_mac_ok(const struct hmac_sha256_key *key, const char *msg, size_t len, const uint8_t *mac,
	size_t mac_len)
{
	uint8_t full[HMAC_SHA256_LEN];

	hmac_sha256(key, msg, len, full);
	return CRYPTO_memcmp(full, mac, mac_len) == 0;
}

/*
 * Mints "<prefix>.<vals...>.<mac>" with the current key: the common part of the mint
 * functions, whose arguments are already checked.
 */
static int
tok_mint(const struct tok_keyring *ring, const char prefix[2], const uint64_t *vals, unsigned n,
	bool receipt, char *out, size_t cap)
{
	char tmp[TOK_BUF_SIZE];
	uint8_t full[HMAC_SHA256_LEN];
	size_t len;

	if (ring == NULL || out == NULL)
		return -EINVAL;
	if (ring->current < 0)
		return -ENOKEY;

	/* Any token fits TOK_BUF_SIZE: a caller with that much room gets it written in place,
	 * others through a copy, so that too small a buffer is left untouched. */
	char *buf = cap >= TOK_BUF_SIZE ? out : tmp, *p = buf;

	*p++ = prefix[0];
	*p++ = prefix[1];
	for (unsigned i = 0; i < n; i++) {
		*p++ = '.';
		p = tok_put_u64(p, vals[i]);
	}
	*p++ = '.';
	p = tok_put_u64(p, ring->kids[ring->current]);
	if (receipt) {
		uint64_t h = siphash24(&ring->rmac[ring->current], buf, (size_t)(p - buf));

		for (unsigned i = 0; i < TOK_RMAC_BYTES; i++)
			full[i] = (uint8_t)(h >> (8 * i));
		*p++ = '.';
		p += base64url_encode(full, TOK_RMAC_BYTES, p);
	} else {
		hmac_sha256(&ring->mac[ring->current], buf, (size_t)(p - buf), full);
		*p++ = '.';
		p += base64url_encode(full, TOK_MAC_BYTES, p);
	}
	len = (size_t)(p - buf);
	if (buf != out) {
		if (cap < len + 1)
			return -ENOSPC;
		memcpy(out, buf, len);
	}
	out[len] = '\0';
	return (int)len;
}

/* ---- tokens ----------------------------------------------------------------------------- */

int
tok_session_mint(
	const struct tok_keyring *ring, uint64_t user, uint64_t expires_s, char *out, size_t cap)
{
	uint64_t vals[] = {user, expires_s};

	if (user < 1 || user > TOK_USER_MAX)
		return -EINVAL;
	return tok_mint(ring, "s1", vals, 2, false, out, cap);
}

int
tok_purchase_mint(const struct tok_keyring *ring, uint32_t event, uint64_t user, uint64_t expires_s,
	char *out, size_t cap)
{
	uint64_t vals[] = {event, user, expires_s};

	if (event == 0 || user < 1 || user > TOK_USER_MAX)
		return -EINVAL;
	return tok_mint(ring, "p1", vals, 3, false, out, cap);
}

int
tok_purchase_mint_pow(const struct tok_keyring *ring, uint32_t event, uint64_t user,
	uint64_t expires_s, unsigned bits, char *out, size_t cap)
{
	uint64_t vals[] = {event, user, expires_s, bits};

	if (bits == 0)
		return tok_purchase_mint(ring, event, user, expires_s, out, cap);
	if (event == 0 || user < 1 || user > TOK_USER_MAX || bits > TOK_POW_BITS_MAX)
		return -EINVAL;
	return tok_mint(ring, "p2", vals, 4, false, out, cap);
}

int
tok_receipt_mint(const struct tok_keyring *ring, uint32_t event, uint64_t user,
	uint64_t admitted_ms, char *out, size_t cap)
{
	uint64_t vals[] = {event, user, admitted_ms};

	if (event == 0 || user < 1 || user > TOK_USER_MAX)
		return -EINVAL;
	return tok_mint(ring, "r1", vals, 3, true, out, cap);
}

/*
 * The common part of the verify functions: format, key, MAC. vals receives the fields, the
 * key id last. Anything but TOK_OK means vals must not be trusted.
 */
static inline enum tok_status
tok_check(const struct tok_keyring *ring, const char *tok, size_t len, const char prefix[2],
	const struct tok_field *fields, unsigned n, uint64_t *vals)
{
	uint8_t mac[TOK_MAC_BYTES];
	const struct hmac_sha256_key *key;
	size_t signed_len;

	if (tok == NULL || !tok_parse(tok, len, prefix, fields, n, vals, mac, TOK_MAC_BYTES,
				   TOK_MAC_CHARS, &signed_len))
		return TOK_MALFORMED;
	key = tok_find(ring, (uint32_t)vals[n - 1]);
	if (key == NULL)
		return TOK_UNKNOWN_KEY;
	if (!tok_mac_ok(key, tok, signed_len, mac, TOK_MAC_BYTES))
		return TOK_BAD_MAC;
	return TOK_OK;
}

enum tok_status
tok_session_verify(const struct tok_keyring *ring, const char *tok, size_t len, uint64_t now_s,
	struct tok_session *out)
{
	uint64_t v[3];
	enum tok_status st = tok_check(ring, tok, len, "s1", tok_session_fields, 3, v);

	memset(out, 0, sizeof(*out));
	if (st != TOK_OK)
		return st;
	out->user = v[0];
	out->expires_s = v[1];
	out->kid = (uint32_t)v[2];
	/* Valid while now < expires: at now == expires it has expired. */
	return now_s < out->expires_s ? TOK_OK : TOK_EXPIRED;
}

enum tok_status
tok_purchase_verify(const struct tok_keyring *ring, const char *tok, size_t len, uint32_t event,
	uint64_t now_s, struct tok_purchase *out)
{
	uint64_t v[5];
	bool pow = len >= 2 && tok != NULL && tok[1] == '2';
	enum tok_status st = pow ? tok_check(ring, tok, len, "p2", tok_pow_fields, 5, v)
				 : tok_check(ring, tok, len, "p1", tok_sale_fields, 4, v);

	memset(out, 0, sizeof(*out));
	if (st != TOK_OK)
		return st;
	out->event = (uint32_t)v[0];
	out->user = v[1];
	out->expires_s = v[2];
	out->pow_bits = pow ? (uint8_t)v[3] : 0;
	out->kid = (uint32_t)v[pow ? 4 : 3];
	if (out->event != event)
		return TOK_WRONG_EVENT;
	return now_s < out->expires_s ? TOK_OK : TOK_EXPIRED;
}

enum tok_status
tok_receipt_verify(const struct tok_keyring *ring, const char *tok, size_t len, uint32_t event,
	struct tok_receipt *out)
{
	uint64_t v[4];
	uint8_t mac[TOK_RMAC_BYTES], want[TOK_RMAC_BYTES];
	size_t signed_len;
	int s;

	memset(out, 0, sizeof(*out));
	if (tok == NULL || !tok_parse(tok, len, "r1", tok_sale_fields, 4, v, mac, TOK_RMAC_BYTES,
				   TOK_RMAC_CHARS, &signed_len))
		return TOK_MALFORMED;
	s = tok_slot(ring, (uint32_t)v[3]);
	if (s < 0)
		return TOK_UNKNOWN_KEY;
	uint64_t h = siphash24(&ring->rmac[s], tok, signed_len);

	for (unsigned i = 0; i < TOK_RMAC_BYTES; i++)
		want[i] = (uint8_t)(h >> (8 * i));
	if (CRYPTO_memcmp(want, mac, TOK_RMAC_BYTES) != 0)
		return TOK_BAD_MAC;
	out->event = (uint32_t)v[0];
	out->user = v[1];
	out->admitted_ms = v[2];
	out->kid = (uint32_t)v[3];
	return out->event != event ? TOK_WRONG_EVENT : TOK_OK;
}

/* ---- reserve path ----------------------------------------------------------------------- */

/* HMAC-SHA256(key, "path.<event>"), full length. */
static void
tok_path_mac(const struct hmac_sha256_key *key, uint32_t event, uint8_t full[HMAC_SHA256_LEN])
{
	char msg[16] = "path.";
	char *p = tok_put_u64(msg + 5, event);

	hmac_sha256(key, msg, (size_t)(p - msg), full);
}

int
tok_path_key(const struct tok_keyring *ring, uint32_t kid, uint32_t event,
	char out[TOK_PATH_KEY_CHARS + 1])
{
	const struct hmac_sha256_key *key;
	uint8_t full[HMAC_SHA256_LEN];

	if (ring == NULL || out == NULL || event == 0)
		return -EINVAL;
	key = tok_find(ring, kid);
	if (key == NULL)
		return -ENOKEY;
	tok_path_mac(key, event, full);
	out[base64url_encode(full, TOK_PATH_KEY_BYTES, out)] = '\0';
	return 0;
}

int
tok_path_mint(const struct tok_keyring *ring, uint32_t event, char *out, size_t cap)
{
	char buf[TOK_PATH_MAX_LEN + 1];
	uint32_t kid;
	char *p;
	size_t len;
	int rc;

	if (ring == NULL || out == NULL || event == 0)
		return -EINVAL;
	if (tok_keyring_current(ring, &kid) != 0)
		return -ENOKEY;
	p = tok_put_u64(buf, kid);
	*p++ = '-';
	rc = tok_path_key(ring, kid, event, p);
	if (rc != 0)
		return rc;
	len = (size_t)(p - buf) + TOK_PATH_KEY_CHARS;
	if (cap < len + 1)
		return -ENOSPC;
	memcpy(out, buf, len + 1);
	return (int)len;
}

enum tok_status
tok_path_verify(
	const struct tok_keyring *ring, const char *seg, size_t len, uint32_t event, uint32_t *kid)
{
	static const struct tok_field kid_field = {0, UINT32_MAX};
	uint8_t want[TOK_PATH_KEY_BYTES], full[HMAC_SHA256_LEN];
	const struct hmac_sha256_key *key;
	const char *p, *end = seg + len;
	uint64_t k;

	if (seg == NULL || event == 0)
		return TOK_MALFORMED;
	p = tok_get_dec(seg, end, &kid_field, &k);
	if (p == NULL || p == end || *p != '-' || end - (p + 1) != TOK_PATH_KEY_CHARS)
		return TOK_MALFORMED;
	if (base64url_decode(p + 1, TOK_PATH_KEY_CHARS, want, sizeof(want)) != TOK_PATH_KEY_BYTES)
		return TOK_MALFORMED;
	key = tok_find(ring, (uint32_t)k);
	if (key == NULL)
		return TOK_UNKNOWN_KEY;
	tok_path_mac(key, event, full);
	if (CRYPTO_memcmp(full, want, TOK_PATH_KEY_BYTES) != 0)
		return TOK_BAD_MAC;
	if (kid != NULL)
		*kid = (uint32_t)k;
	return TOK_OK;
}

const char *
tok_status_name(enum tok_status st)
{
	static const char *const names[TOK_STATUS_COUNT] = {
		[TOK_OK] = "ok",
		[TOK_MALFORMED] = "malformed",
		[TOK_UNKNOWN_KEY] = "unknown_key",
		[TOK_BAD_MAC] = "bad_mac",
		[TOK_WRONG_EVENT] = "wrong_event",
		[TOK_EXPIRED] = "expired",
	};

	return (unsigned)st < TOK_STATUS_COUNT ? names[st] : "?";
}
