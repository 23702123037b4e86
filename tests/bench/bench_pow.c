/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark of the proof-of-work challenge (common/pow.h) on one core:
 *  - TSC cycles and nanoseconds per pow_check() with each engine this CPU runs (the data
 *    plane's cost per reserve with a challenge), the fastest of many rounds;
 *  - the cost of solving in C at each difficulty 8..24: hashes per second and the median and
 *    mean time to solve over several prefixes (a solve tries 2^bits nonces on average).
 * Prints figures; the TAP checks only assert that every answer was right (each check against
 * OpenSSL's SHA256(), each solution checked), never a time.
 * FG_BENCH_QUICK=1 runs a short pass (used by scripts/test): fewer rounds, 8..16 bits.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>
#include <rte_cycles.h>

#include "common/now.h"
#include "common/pow.h"
#include "common/token.h"
#include "tests/lib/rng.h"
#include "tests/tap.h"

#define NOW_S	1767225600u
#define N_NONCE 64 /* nonces per round of checks, of 1..10 digits */

static char prefix[TOK_MAC_CHARS + 1];
static char nonce[N_NONCE][POW_SOLUTION_MAX + 1];
static size_t nonce_len[N_NONCE];
static bool want[N_NONCE][POW_BITS_MAX + 1];

/* What pow_check() must answer, from OpenSSL's SHA256() of the whole message. */
static void
expect(size_t i)
{
	uint8_t msg[64], d[SHA256_DIGEST_LENGTH];

	memcpy(msg, prefix, TOK_MAC_CHARS);
	memcpy(msg + TOK_MAC_CHARS, nonce[i], nonce_len[i]);
	SHA256(msg, TOK_MAC_CHARS + nonce_len[i], d);
	uint32_t w = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];

	for (unsigned b = 0; b <= POW_BITS_MAX; b++)
		want[i][b] = b == 0 || w >> (32 - b) == 0;
}

/* Cycles per pow_check() at 12 bits: the fastest of rounds rounds of N_NONCE x reps checks. */
static void
bench_check(const char *engine, int rounds, int reps)
{
	uint64_t best_cyc = UINT64_MAX, best_ns = 0, wrong = 0,
		 per_round = (uint64_t)N_NONCE * reps;

	if (pow_set_engine(engine) != 0) {
		tap_diag("engine %s: not on this CPU", engine);
		return;
	}
	for (int r = 0; r <= rounds; r++) { /* round 0 warms up */
		uint64_t t0 = now_mono_ns(), c0 = rte_rdtsc(), n = 0;

		for (int k = 0; k < reps; k++)
			for (size_t i = 0; i < N_NONCE; i++)
				n += pow_check(prefix, TOK_MAC_CHARS, nonce[i], nonce_len[i], 12) !=
				     want[i][12];
		uint64_t cyc = rte_rdtsc() - c0, ns = now_mono_ns() - t0;

		wrong += n;
		if (r > 0 && cyc < best_cyc) {
			best_cyc = cyc;
			best_ns = ns;
		}
	}
	/* Every difficulty once, untimed. */
	for (size_t i = 0; i < N_NONCE; i++)
		for (unsigned b = 0; b <= POW_BITS_MAX; b++)
			wrong += pow_check(prefix, TOK_MAC_CHARS, nonce[i], nonce_len[i], b) !=
				 want[i][b];
	tap_ok(wrong == 0,
		"pow_check (%-7s) %6.1f cycles %6.1f ns per check (target <= 150 cycles); %" PRIu64
		" wrong",
		engine, (double)best_cyc / (double)per_round, (double)best_ns / (double)per_round,
		wrong);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Solves n prefixes (MAC texts of tokens for users 1..n) at each difficulty lo..hi and prints
 * a row per difficulty: tries, hashes per second, median and mean time per solve.
 */
static void
bench_solve(const struct tok_keyring *sale, unsigned lo, unsigned hi, int n)
{
	uint64_t *ns = calloc((size_t)n, sizeof(*ns));
	uint64_t wrong = 0;

	if (ns == NULL) {
		tap_ok(0, "out of memory");
		return;
	}
	tap_diag(
		"solving in C (engine %s), %d prefixes per difficulty, one core:", pow_engine(), n);
	tap_diag("%4s %12s %12s %10s %12s %12s", "bits", "2^bits", "mean tries", "Mhash/s",
		"median ms", "mean ms");
	for (unsigned bits = lo; bits <= hi; bits++) {
		uint64_t all_tries = 0, all_ns = 0;

		for (int k = 0; k < n; k++) {
			char tok[TOK_BUF_SIZE], out[POW_SOLUTION_MAX + 1];
			const char *p = NULL;
			unsigned b = 0;
			uint64_t tries = 0;
			int len = tok_purchase_mint_pow(sale, 42, (uint64_t)k + 1 + 1000000u * bits,
				NOW_S + 300, bits, tok, sizeof(tok));

			if (len <= 0 || !tok_purchase_challenge(tok, (size_t)len, &b, &p)) {
				wrong++;
				continue;
			}
			uint64_t t0 = now_mono_ns();
			int rc = pow_solve(p, TOK_MAC_CHARS, b, UINT64_MAX, out, &tries);

			ns[k] = now_mono_ns() - t0;
			all_ns += ns[k];
			all_tries += tries;
			wrong += rc != 0 || !pow_check(p, TOK_MAC_CHARS, out, strlen(out), b);
		}
		qsort(ns, (size_t)n, sizeof(*ns), cmp_u64);
		tap_diag("%4u %12" PRIu64 " %12.0f %10.2f %12.3f %12.3f", bits, UINT64_C(1) << bits,
			(double)all_tries / n,
			all_ns ? (double)all_tries * 1e3 / (double)all_ns : 0,
			(double)(n % 2 ? ns[n / 2] : (ns[n / 2 - 1] + ns[n / 2]) / 2) / 1e6,
			(double)all_ns / n / 1e6);
	}
	free(ns);
	tap_ok(wrong == 0, "every solution checks (%u..%u bits); %" PRIu64 " wrong", lo, hi, wrong);
}

/* Hashes per second of an engine's solver on a fixed number of tries (no solution needed). */
static void
bench_rate(const char *engine, uint64_t tries_max)
{
	char out[POW_SOLUTION_MAX + 1];
	uint64_t tries = 0, best = UINT64_MAX;

	if (pow_set_engine(engine) != 0)
		return;
	for (int r = 0; r < 5; r++) {
		uint64_t t0 = now_mono_ns();

		/* 30 bits: found within the budget once in 2^30 / tries_max runs at most. */
		pow_solve(prefix, TOK_MAC_CHARS, 30, tries_max, out, &tries);
		uint64_t ns = now_mono_ns() - t0;

		if (ns < best)
			best = ns;
	}
	tap_diag("solver (%-7s) %.2f Mhash/s, %.1f ns per try (%" PRIu64 " tries, fastest of 5)",
		engine, (double)tries * 1e3 / (double)best, (double)best / (double)tries, tries);
}

int
main(void)
{
	bool quick = getenv("FG_BENCH_QUICK") != NULL;
	struct tok_keyring sale;
	char tok[TOK_BUF_SIZE];
	const char *p;
	unsigned bits;
	uint64_t rs = 0x706f77;
	const char *engine = pow_engine();
	int len;

	tok_keyring_init(&sale);
	tok_keyring_set(&sale, 3, "sale key 3 for the demo, 32 byte", 32, true);
	len = tok_purchase_mint_pow(&sale, 42, 1234567, NOW_S + 300, 12, tok, sizeof(tok));
	if (len <= 0 || !tok_purchase_challenge(tok, (size_t)len, &bits, &p)) {
		tap_ok(0, "a p2 token to take a prefix from");
		return tap_done();
	}
	memcpy(prefix, p, TOK_MAC_CHARS);
	for (size_t i = 0; i < N_NONCE; i++) {
		uint64_t v = rng_xorshift64s(&rs) % 1000000000u;

		/* 1..10 digits, as solutions to 8..30 bits are */
		v %= (uint64_t)1 << (1 + i % 30);
		nonce_len[i] = (size_t)snprintf(nonce[i], sizeof(nonce[i]), "%" PRIu64, v);
		expect(i);
	}
	tap_diag("proof-of-work benchmark: prefix %s (the MAC text of %s), engine chosen at start "
		 "%s",
		prefix, tok, engine);
	static const char *const engines[] = {"sha-ni", "openssl"};

	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		bench_check(engines[i], quick ? 20 : 200, quick ? 20 : 200);
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		bench_rate(engines[i], quick ? 100000 : 2000000);
	pow_set_engine(engine);
	bench_solve(&sale, 8, quick ? 16 : 24, quick ? 5 : 15);
	tok_keyring_wipe(&sale);
	return tap_done();
}
