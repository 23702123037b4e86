/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark of the signed tokens on one core: nanoseconds and TSC cycles per session verify,
 * purchase verify, receipt verify, receipt mint, purchase mint, path key and path verify,
 * with the keys of a full ring (4 keys, the one used last). Prints figures; the TAP checks
 * only assert that every operation gave the right answer, never a time.
 * FG_BENCH_QUICK=1 runs a short pass (used by scripts/test).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "common/base64url.h"
#include "common/hmac_sha256.h"
#include "common/now.h"
#include "common/token.h"
#include "tests/tap.h"

#define NOW_S 1767225600u

static struct tok_keyring auth, sale;
static struct hmac_sha256_key hmac_key; /* the session token's key, outside a ring */
static uint8_t session_mac[TOK_MAC_BYTES];
static char session[TOK_BUF_SIZE], purchase[TOK_BUF_SIZE], receipt[TOK_BUF_SIZE];
static char path[TOK_BUF_SIZE];
static size_t session_len, purchase_len, receipt_len, path_len;

/* Each operation returns true when it gave the expected answer; i varies its input. */
typedef bool (*bench_op)(uint64_t i);

static bool
op_session_verify(uint64_t i)
{
	struct tok_session s;

	(void)i;
	return tok_session_verify(&auth, session, session_len, NOW_S, &s) == TOK_OK &&
	       s.user == 1234567;
}

static bool
op_purchase_verify(uint64_t i)
{
	struct tok_purchase p;

	(void)i;
	return tok_purchase_verify(&sale, purchase, purchase_len, 42, NOW_S, &p) == TOK_OK &&
	       p.user == 1234567;
}

static bool
op_receipt_verify(uint64_t i)
{
	struct tok_receipt r;

	(void)i;
	return tok_receipt_verify(&sale, receipt, receipt_len, 42, &r) == TOK_OK &&
	       r.user == 1234567;
}

/* The last token a mint case made and the i it made it for, verified after each round. */
static char minted[TOK_BUF_SIZE];
static int minted_len;
static uint64_t minted_i;

static bool
op_receipt_mint(uint64_t i)
{
	minted_i = i;
	minted_len = tok_receipt_mint(
		&sale, 42, 1234567 + i, UINT64_C(1767225601234) + i, minted, sizeof(minted));
	return minted_len > 0;
}

static bool
op_purchase_mint(uint64_t i)
{
	minted_i = i;
	minted_len = tok_purchase_mint(&sale, 42, 1234567 + i, NOW_S + 300, minted, sizeof(minted));
	return minted_len > 0;
}

/* The last minted receipt verifies with the sale keys and says what it was minted with. */
static bool
check_receipt(void)
{
	struct tok_receipt r;

	return minted_len > 0 &&
	       tok_receipt_verify(&sale, minted, (size_t)minted_len, 42, &r) == TOK_OK &&
	       r.user == 1234567 + minted_i && r.admitted_ms == UINT64_C(1767225601234) + minted_i;
}

/* The last minted purchase token verifies with the sale keys and names its user. */
static bool
check_purchase(void)
{
	struct tok_purchase p;

	return minted_len > 0 &&
	       tok_purchase_verify(&sale, minted, (size_t)minted_len, 42, NOW_S, &p) == TOK_OK &&
	       p.user == 1234567 + minted_i && p.expires_s == NOW_S + 300;
}

static bool
op_path_key(uint64_t i)
{
	char out[TOK_PATH_KEY_CHARS + 1];

	return tok_path_key(&sale, 3, (uint32_t)(i % 1000) + 1, out) == 0;
}

static bool
op_path_verify(uint64_t i)
{
	(void)i;
	return tok_path_verify(&sale, path, path_len, 42, NULL) == TOK_OK;
}

/* The floor: HMAC-SHA256 alone of a session token's signed text (two SHA-256 blocks). */
static bool
op_hmac(uint64_t i)
{
	uint8_t mac[HMAC_SHA256_LEN];

	(void)i;
	hmac_sha256(&hmac_key, session, session_len - TOK_MAC_CHARS - 1, mac);
	return memcmp(mac, session_mac, TOK_MAC_BYTES) == 0;
}

/*
 * Runs op iters times in ROUNDS rounds and reports the fastest round: on a shared machine the
 * slower rounds measure the neighbours, not the code.
 */
#define ROUNDS 100

/* check, when not NULL, is asked after each round (untimed) whether its last result is right. */
static void
run(const char *name, bench_op op, bool (*check)(void), uint64_t iters, unsigned target_ns)
{
	uint64_t wrong = 0, per_round = iters / ROUNDS, best_ns = UINT64_MAX, best_cyc = 0;
	char target[32] = "";

	for (uint64_t i = 0; i < per_round; i++) /* warm up caches and branch predictors */
		wrong += !op(i);
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_mono_ns(), c0 = rte_rdtsc();

		for (uint64_t i = 0; i < per_round; i++)
			wrong += !op(i);
		uint64_t cyc = rte_rdtsc() - c0, ns = now_mono_ns() - t0;

		if (ns < best_ns) {
			best_ns = ns;
			best_cyc = cyc;
		}
		wrong += check != NULL && !check();
	}
	if (target_ns)
		snprintf(target, sizeof(target), " (target <= %u ns)", target_ns);
	tap_ok(wrong == 0, "%-16s %7.1f ns %7.1f cycles per operation%s; %" PRIu64 " wrong", name,
		(double)best_ns / (double)per_round, (double)best_cyc / (double)per_round, target,
		wrong);
}

int
main(void)
{
	uint64_t iters = getenv("FG_BENCH_QUICK") ? 20000 : 2000000;
	uint8_t k[32];

	/* Full rings, the keys in use last: the worst case of the key lookup. */
	tok_keyring_init(&auth);
	tok_keyring_init(&sale);
	for (uint32_t kid = 0; kid < TOK_KEYS_MAX; kid++) {
		memset(k, (int)(0x40 + kid), sizeof(k));
		tok_keyring_set(&auth, kid, k, sizeof(k), true);
		tok_keyring_set(&sale, kid, k, sizeof(k), true);
	}
	session_len =
		(size_t)tok_session_mint(&auth, 1234567, NOW_S + 3600, session, sizeof(session));
	purchase_len = (size_t)tok_purchase_mint(
		&sale, 42, 1234567, NOW_S + 300, purchase, sizeof(purchase));
	receipt_len = (size_t)tok_receipt_mint(
		&sale, 42, 1234567, UINT64_C(1767225601234), receipt, sizeof(receipt));
	path_len = (size_t)tok_path_mint(&sale, 42, path, sizeof(path));

	/* k is still the secret of the last key, the current one that minted the session token. */
	hmac_sha256_key_init(&hmac_key, k, sizeof(k));
	base64url_decode(session + session_len - TOK_MAC_CHARS, TOK_MAC_CHARS, session_mac,
		sizeof(session_mac));

	const char *engine = hmac_sha256_engine();

	tap_diag("token benchmark: %" PRIu64 " operations per case in %d rounds, one core, the "
		 "fastest round reported; e.g. %s (%zu bytes), %s (%zu bytes); HMAC engine %s",
		iters, ROUNDS, session, session_len, purchase, purchase_len, engine);
	/* Every engine this CPU can run, side by side; the cases after use the one chosen. */
	static const char *const engines[] = {"openssl", "sha-ni"};

	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++) {
		char name[48];

		if (hmac_sha256_set_engine(engines[i]) != 0)
			continue;
		snprintf(name, sizeof(name), "HMAC-SHA256 only (%s)", engines[i]);
		run(name, op_hmac, NULL, iters, 0);
	}
	hmac_sha256_set_engine(engine);
	run("session verify", op_session_verify, NULL, iters, 150);
	run("purchase verify", op_purchase_verify, NULL, iters, 150);
	run("receipt verify", op_receipt_verify, NULL, iters, 150);
	run("receipt mint", op_receipt_mint, check_receipt, iters, 0);
	run("purchase mint", op_purchase_mint, check_purchase, iters, 0);
	run("path key", op_path_key, NULL, iters, 0);
	run("path verify", op_path_verify, NULL, iters, 0);
	tok_keyring_wipe(&auth);
	tok_keyring_wipe(&sale);
	return tap_done();
}
