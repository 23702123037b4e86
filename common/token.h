/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_TOKEN_H
#define FG_COMMON_TOKEN_H
/*
 * Signed tokens, shared by every flashgate program (docs/tokens.md has the byte-for-byte
 * formats and a worked example):
 *
 *   session   s1.<user>.<expires_s>.<kid>.<mac>           auth key <kid> (the shop's login)
 *   purchase  p1.<event>.<user>.<expires_s>.<kid>.<mac>   sale key <kid> (the data plane)
 *             p2.<event>.<user>.<expires_s>.<bits>.<kid>.<mac>  the same with a proof-of-work
 *             challenge of <bits> (1..30) bits whose prefix is <mac> (common/pow.h)
 *   receipt   r1.<event>.<user>.<admitted_ms>.<kid>.<rmac> sale key <kid> (the data plane)
 *   path key  <kid>-<pathkey> in /api/v1/events/<event>/reserve/<kid>-<pathkey>
 *
 * Numbers are decimal without sign or leading zeros: user 1..2^63-1, event 1..2^32-1, kid
 * 0..2^32-1, times 0..2^64-1. <mac> is base64url (no padding) of the first 16 bytes of
 * HMAC-SHA256(key, everything before the last '.'), 22 characters. <pathkey> is base64url of
 * the first 12 bytes of HMAC-SHA256(sale key, "path.<event>"), 16 characters. The prefixes
 * "s1.", "p1.", "r1." and "path." are inside the MAC, so no kind can stand in for another.
 *
 * <rmac> is base64url of SipHash-2-4 (8 bytes, little-endian) of the text before the last
 * '.', 11 characters, under a 16-byte key derived from the sale key: the first 16 bytes of
 * HMAC-SHA256(sale key, "flashgate receipt key"). Receipts are minted for every admitted
 * reservation and only ever checked by data planes, so they take a MAC of one SipHash
 * (~60 cycles) instead of two SHA-256 blocks; a forgery still needs 2^64 guesses online.
 *
 * Parsing is strict: anything but exactly this text is TOK_MALFORMED. MACs are compared in
 * constant time. A token is valid while now < expires.
 *
 * Verification is out of line: the two SHA-256 blocks dominate (~120 ns with SHA-NI), not the
 * call. It does not allocate, lock, log or make syscalls, so workers call it per request.
 * Secrets are never logged nor part of any error text.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hmac_sha256.h"
#include "common/siphash.h"

#define TOK_KEYS_MAX	   4  /* keys in a ring: the current one and older ones still verifying */
#define TOK_SECRET_MIN	   16 /* bytes of a secret */
#define TOK_SECRET_MAX	   64
#define TOK_MAC_BYTES	   16 /* truncated HMAC-SHA256 in a token */
#define TOK_MAC_CHARS	   22
#define TOK_PATH_KEY_BYTES 12 /* truncated HMAC-SHA256 in a reserve path */
#define TOK_PATH_KEY_CHARS 16
#define TOK_RMAC_BYTES	   8  /* SipHash-2-4 in a receipt */
#define TOK_RMAC_CHARS	   11
#define TOK_USER_MAX	   UINT64_C(0x7fffffffffffffff)

/* Longest texts (without the NUL the mint functions add), with every number at its maximum. */
#define TOK_SESSION_MAX_LEN  77 /* 3 + 19 + 1 + 20 + 1 + 10 + 1 + 22 */
#define TOK_PURCHASE_MAX_LEN 91 /* 3 + 10 + 1 + 19 + 1 + 20 + 1 + 2 + 1 + 10 + 1 + 22 */
#define TOK_POW_BITS_MAX     30 /* the hardest challenge a purchase token carries */
#define TOK_RECEIPT_MAX_LEN  77 /* 3 + 10 + 1 + 19 + 1 + 20 + 1 + 10 + 1 + 11 */
#define TOK_PATH_MAX_LEN     27 /* 10 + 1 + 16 */
#define TOK_BUF_SIZE	     96 /* holds any of them and its NUL */

enum tok_status {
	TOK_OK = 0,
	TOK_MALFORMED,	 /* not the exact text of this kind of token */
	TOK_UNKNOWN_KEY, /* well formed, but its key id is not in the ring */
	TOK_BAD_MAC,	 /* the MAC does not match: forged, altered, or another key's */
	TOK_WRONG_EVENT, /* authentic, but for another event than the caller's */
	TOK_EXPIRED,	 /* authentic, but now >= its expiry */
};
#define TOK_STATUS_COUNT (TOK_EXPIRED + 1)

enum tok_kind {
	TOK_KIND_NONE = 0,
	TOK_KIND_SESSION,
	TOK_KIND_PURCHASE,
	TOK_KIND_RECEIPT,
};

/*
 * Up to TOK_KEYS_MAX keys by id, each with its secret and the HMAC states precomputed from it;
 * one of them may be current (it mints). Plain data without pointers: copy it by value to
 * publish a new version (RCU). A session ring holds the shop's auth keys, a sale ring the
 * sale keys. Treat the whole struct as secret. Fields are private: use the functions.
 */
struct tok_keyring {
	uint32_t kids[TOK_KEYS_MAX]; /* key id of slot i when bit i of used is set */
	uint8_t used;		     /* bit i: slot i holds a key */
	int8_t current;		     /* slot that mints; -1: none */
	uint8_t secret_len[TOK_KEYS_MAX];
	uint8_t secret[TOK_KEYS_MAX][TOK_SECRET_MAX];
	struct hmac_sha256_key mac[TOK_KEYS_MAX];
	struct sipkey rmac[TOK_KEYS_MAX]; /* receipt MAC keys, derived from the secrets */
};

/* What an authentic session token says. */
struct tok_session {
	uint64_t user;
	uint64_t expires_s;
	uint32_t kid;
};

/* What an authentic purchase token says. */
struct tok_purchase {
	uint64_t user;
	uint64_t expires_s;
	uint32_t event;
	uint32_t kid;
	uint8_t pow_bits; /* p2: the challenge's difficulty; p1: 0 */
};

/* What an authentic receipt says. */
struct tok_receipt {
	uint64_t user;
	uint64_t admitted_ms;
	uint32_t event;
	uint32_t kid;
};

/* Empties ring: no keys, none current. Cannot fail. */
void tok_keyring_init(struct tok_keyring *ring);

/* Empties ring and overwrites its secrets in a way the compiler cannot drop. */
void tok_keyring_wipe(struct tok_keyring *ring);

/*
 * Adds key kid with the len bytes of secret (TOK_SECRET_MIN..TOK_SECRET_MAX), or replaces the
 * secret of key kid if the ring has it. make_current makes it the key that mints; otherwise
 * the current key does not change. Returns 0; -EINVAL (ring unchanged) if ring or secret is
 * NULL or len is out of range; -ENOSPC (ring unchanged) if kid is new and the ring already
 * holds TOK_KEYS_MAX keys: remove one first.
 */
int tok_keyring_set(
	struct tok_keyring *ring, uint32_t kid, const void *secret, size_t len, bool make_current);

/*
 * Removes key kid and wipes its secret: tokens made with it no longer verify. If it was the
 * current key, no key is current afterwards (minting fails with -ENOKEY until
 * tok_keyring_set_current()). Returns 0, or -ENOENT if the ring has no key kid.
 */
int tok_keyring_remove(struct tok_keyring *ring, uint32_t kid);

/* Makes key kid the one that mints. Returns 0, or -ENOENT if the ring has no key kid. */
int tok_keyring_set_current(struct tok_keyring *ring, uint32_t kid);

/* Stores the id of the current key in *kid. Returns 0, or -ENOKEY if no key is current. */
int tok_keyring_current(const struct tok_keyring *ring, uint32_t *kid);

/* True if the ring has key kid. */
bool tok_keyring_has(const struct tok_keyring *ring, uint32_t kid);

/* The number of keys in the ring, 0..TOK_KEYS_MAX. */
unsigned tok_keyring_count(const struct tok_keyring *ring);

/*
 * Copies the secret of key kid to out (cap bytes), for a control plane that republishes its
 * keys. Returns its length, -ENOENT if the ring has no key kid, or -ENOSPC if cap is too small.
 */
int tok_keyring_secret(const struct tok_keyring *ring, uint32_t kid, uint8_t *out, size_t cap);

/*
 * Mints a session token for user (1..TOK_USER_MAX) valid while now < expires_s, with the
 * current key of ring (the shop's auth keys), into out (cap bytes, NUL-terminated).
 * Returns the token's length (without the NUL); -EINVAL if user is out of range or ring/out
 * is NULL; -ENOKEY if no key is current; -ENOSPC if cap < length + 1 (out untouched).
 */
int tok_session_mint(
	const struct tok_keyring *ring, uint64_t user, uint64_t expires_s, char *out, size_t cap);

/*
 * Mints a purchase token of user for event (1..2^32-1) valid while now < expires_s, with the
 * current sale key. Returns and fails as tok_session_mint() (-EINVAL also for event 0).
 */
int tok_purchase_mint(const struct tok_keyring *ring, uint32_t event, uint64_t user,
	uint64_t expires_s, char *out, size_t cap);

/*
 * Mints a purchase token that carries a proof-of-work challenge of bits (1..TOK_POW_BITS_MAX):
 * "p2...", whose MAC text is the challenge's prefix (tok_purchase_challenge()). bits 0 mints
 * a plain "p1" token. Returns and fails as tok_purchase_mint() (-EINVAL also for bits > 30).
 */
int tok_purchase_mint_pow(const struct tok_keyring *ring, uint32_t event, uint64_t user,
	uint64_t expires_s, unsigned bits, char *out, size_t cap);

/*
 * What a purchase token's text claims about its challenge, without verifying anything (the
 * caller verifies the token's MAC after checking the solution): for a "p2" token, *bits and
 * *prefix (its last 22 characters, the MAC text) and returns true; for anything else false
 * (a "p1" token has no challenge). Reads only tok[0..len).
 */
static inline bool
tok_purchase_challenge(const char *tok, size_t len, unsigned *bits, const char **prefix)
{
	const char *p;
	unsigned b = 0;

	if (len < 3 + TOK_MAC_CHARS + 4 || tok[0] != 'p' || tok[1] != '2' || tok[2] != '.')
		return false;
	/* ...<expires_s>.<bits>.<kid>.<mac>: bits is the field before the kid. */
	p = tok + len - TOK_MAC_CHARS - 1; /* the '.' before the MAC */
	if (*p != '.')
		return false;
	do
		p--;
	while (p > tok && *p != '.'); /* the '.' before the kid */
	const char *e = p;

	do
		p--;
	while (p > tok && *p != '.'); /* the '.' before bits */
	/* p at the start: only one number before the MAC, and "p2" is no bits field */
	if (*p != '.' || e - p < 2 || e - p > 3)
		return false;
	for (const char *c = p + 1; c < e; c++) {
		if (*c < '0' || *c > '9')
			return false;
		b = b * 10 + (unsigned)(*c - '0');
	}
	if (b == 0 || b > TOK_POW_BITS_MAX)
		return false;
	*bits = b;
	*prefix = tok + len - TOK_MAC_CHARS;
	return true;
}

/*
 * Mints the receipt of user's reservation for event admitted at admitted_ms (Unix ms), with
 * the current sale key. Returns and fails as tok_purchase_mint().
 */
int tok_receipt_mint(const struct tok_keyring *ring, uint32_t event, uint64_t user,
	uint64_t admitted_ms, char *out, size_t cap);

/*
 * Verifies the len bytes at tok (no NUL needed; never reads tok[len]) as a session token at
 * now_s (Unix seconds). Checks, in this order: the exact format (TOK_MALFORMED), the key id
 * (TOK_UNKNOWN_KEY), the MAC (TOK_BAD_MAC), the expiry (TOK_EXPIRED: now_s >= expires_s).
 * *out is filled when the MAC is valid (TOK_OK, TOK_EXPIRED), else zeroed: never act on a
 * field of a token whose MAC failed. The caller uses out->user as the authenticated user.
 */
enum tok_status tok_session_verify(const struct tok_keyring *ring, const char *tok, size_t len,
	uint64_t now_s, struct tok_session *out);

/*
 * Verifies a purchase token ("p1" or "p2") for event at now_s with the sale ring. As
 * tok_session_verify(),
 * with TOK_WRONG_EVENT (checked after the MAC, before the expiry) when it is authentic but
 * for another event. The caller compares out->user with the user it expects.
 */
enum tok_status tok_purchase_verify(const struct tok_keyring *ring, const char *tok, size_t len,
	uint32_t event, uint64_t now_s, struct tok_purchase *out);

/*
 * Verifies a receipt for event with the sale ring: TOK_OK, TOK_MALFORMED, TOK_UNKNOWN_KEY,
 * TOK_BAD_MAC or TOK_WRONG_EVENT, as tok_purchase_verify(). A receipt has no expiry: the
 * caller judges out->admitted_ms (a young receipt without a result yet is "queued").
 */
enum tok_status tok_receipt_verify(const struct tok_keyring *ring, const char *tok, size_t len,
	uint32_t event, struct tok_receipt *out);

/*
 * Writes the 16-character path key of event (1..2^32-1) under sale key kid to out
 * (TOK_PATH_KEY_CHARS + 1 bytes, NUL-terminated). Returns 0, -EINVAL (event 0 or a NULL
 * argument) or -ENOKEY (no key kid). Deterministic: a data plane may cache it per event.
 */
int tok_path_key(const struct tok_keyring *ring, uint32_t kid, uint32_t event,
	char out[TOK_PATH_KEY_CHARS + 1]);

/*
 * Writes the reserve path segment "<kid>-<pathkey>" of event with the current sale key to out
 * (cap bytes, NUL-terminated). Returns its length, or fails as tok_purchase_mint().
 */
int tok_path_mint(const struct tok_keyring *ring, uint32_t event, char *out, size_t cap);

/*
 * Verifies the len bytes at seg as the reserve path segment "<kid>-<pathkey>" of event.
 * Returns TOK_OK, TOK_MALFORMED, TOK_UNKNOWN_KEY, or TOK_BAD_MAC (which is also what a path
 * of another event gives: the event is inside the MAC, not in the segment). *kid receives the
 * key id when the result is TOK_OK; kid may be NULL.
 */
enum tok_status tok_path_verify(
	const struct tok_keyring *ring, const char *seg, size_t len, uint32_t event, uint32_t *kid);

/* A short lowercase name for st ("ok", "malformed", ...), for counters and logs. */
const char *tok_status_name(enum tok_status st);

/*
 * Which kind of token the len bytes at tok claim to be, from their prefix alone (nothing is
 * verified): lets GET .../result accept a purchase token or a receipt.
 */
static inline enum tok_kind
tok_kind_of(const char *tok, size_t len)
{
	if (len < 3 || tok[1] != '1' || tok[2] != '.')
		return TOK_KIND_NONE;
	switch (tok[0]) {
	case 's':
		return TOK_KIND_SESSION;
	case 'p':
		return TOK_KIND_PURCHASE;
	case 'r':
		return TOK_KIND_RECEIPT;
	default:
		return TOK_KIND_NONE;
	}
}

#endif
