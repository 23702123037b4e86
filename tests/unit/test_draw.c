/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The draw's formulas (common/draw.h) against values computed independently with Python's
 * hashlib and hmac from the text of docs/fairness.md, and the proof-of-work check
 * (common/pow.h) against a nonce found the same way, and both of its engines (SHA-NI and
 * OpenSSL's compression function) against OpenSSL's SHA256() over random prefixes and nonces
 * of every length, placed before a guard page.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "common/draw.h"
#include "common/hex.h"
#include "common/pow.h"
#include "tests/guard.h"
#include "tests/lib/rng.h"
#include "tests/tap.h"

static void
test_draw(void)
{
	uint8_t seed[DRAW_SEED_LEN], c[DRAW_DIGEST_LEN], d[DRAW_DIGEST_LEN], back[DRAW_DIGEST_LEN];
	char hex[2 * DRAW_DIGEST_LEN + 1];
	uint64_t sorted[] = {1, 3, 42, 99, UINT64_C(9223372036854775807)};
	uint64_t users[] = {3, 1, 99, UINT64_C(9223372036854775807), 42};
	uint64_t want[] = {99, 42, 3, UINT64_C(9223372036854775807), 1};
	uint64_t unsorted[] = {3, 1}, twice[] = {1, 1}, zero[] = {0, 1};

	for (unsigned i = 0; i < DRAW_SEED_LEN; i++)
		seed[i] = (uint8_t)i;
	draw_commitment(seed, c);
	hex_str(c, DRAW_DIGEST_LEN, hex);
	tap_ok(strcmp(hex, "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd") == 0,
		"commitment: SHA-256 of the seed (%s)", hex);
	tap_ok(draw_entrants_digest(7, sorted, 5, d) == 0, "digest of five sorted entrants");
	hex_str(d, DRAW_DIGEST_LEN, hex);
	tap_ok(strcmp(hex, "cfda9b5396b59b250e5e26d12ee1edc722cb30cf51b9163ac78e757441501823") == 0,
		"digest as documented (%s)", hex);
	tap_ok(draw_rank_key(seed, 7, d, 42) == UINT64_C(0xb4568e9f9bfa4b30),
		"rank key of user 42 as documented");
	tap_ok(draw_order(seed, 7, d, users, 5) == 0 && memcmp(users, want, sizeof(want)) == 0,
		"rank order as documented: 99 42 3 2^63-1 1");
	tap_ok(draw_entrants_digest(7, unsorted, 2, back) == -EINVAL &&
			draw_entrants_digest(7, twice, 2, back) == -EINVAL &&
			draw_entrants_digest(7, zero, 2, back) == -EINVAL,
		"digest: unsorted, repeated and zero users are refused");
	tap_ok(hex_decode(hex, strlen(hex), back, DRAW_DIGEST_LEN) == 0 &&
			memcmp(back, d, sizeof(d)) == 0,
		"the digest's hex reads back");
	uint8_t d2[DRAW_DIGEST_LEN];
	uint64_t other[] = {1, 3, 42, 99};

	tap_ok(draw_entrants_digest(7, other, 4, d2) == 0 && memcmp(d, d2, sizeof(d)) != 0 &&
			draw_rank_key(seed, 7, d2, 42) != draw_rank_key(seed, 7, d, 42),
		"one entrant less changes the digest and every rank key");
}

struct keyed {
	uint64_t key, user;
};

static int
cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->user < y->user ? -1 : x->user > y->user;
}

/* The ranker (keys prepared once) gives draw_rank_key()'s keys, and draw_order() (radix sorts)
 * the order of a plain comparison sort by (key, user), for 20,000 random users. */
static void
test_draw_many(void)
{
	enum { N = 20000 };
	static uint64_t users[N];
	static struct keyed ref[N];
	uint8_t seed[DRAW_SEED_LEN], d[DRAW_DIGEST_LEN];
	struct draw_ranker r;
	uint64_t rng = 7;
	bool same = true, order = true;

	for (unsigned i = 0; i < DRAW_SEED_LEN; i++)
		seed[i] = (uint8_t)(i * 7 + 1);
	memset(d, 0xa5, sizeof(d));
	draw_ranker_init(&r, seed, 9, d);
	for (unsigned i = 0; i < N; i++) {
		users[i] = (rng_splitmix64(&rng) >> 1) | 1; /* 1..2^63-1, practically distinct */
		ref[i] = (struct keyed){.key = draw_ranker_key(&r, users[i]), .user = users[i]};
		if (i % 97 == 0)
			same = same && ref[i].key == draw_rank_key(seed, 9, d, users[i]);
	}
	draw_ranker_wipe(&r);
	tap_ok(same, "the ranker's keys are draw_rank_key()'s");
	qsort(ref, N, sizeof(ref[0]), cmp_keyed);
	tap_ok(draw_order(seed, 9, d, users, N) == 0, "draw_order() of %d users", N);
	for (unsigned i = 0; i < N; i++)
		order = order && users[i] == ref[i].user;
	tap_ok(order, "draw_order() gives the order of a comparison sort by key, then user");
}

static void
test_pow(void)
{
	const char *p = "abcdefghijklmnopqrstuv";
	char out[POW_SOLUTION_MAX + 1];
	uint64_t tries = 0;

	tap_ok(pow_check(p, 22, "451", 3, 12), "pow: 451 solves the prefix at 12 bits");
	tap_ok(!pow_check(p, 22, "450", 3, 12), "pow: 450 does not");
	tap_ok(pow_solve(p, 22, 12, 100000, out, &tries) == 0 && strcmp(out, "451") == 0 &&
			tries == 452,
		"pow: the smallest solution is found (%s, %llu tries)", out,
		(unsigned long long)tries);
	tap_ok(pow_check(p, 22, "0", 1, 0), "pow: 0 bits: any well-formed nonce");
	tap_ok(!pow_check(p, 22, "", 0, 0) && !pow_check(p, 22, "12a", 3, 0) &&
			!pow_check(p, 22, "123456789012345678901", 21, 0) &&
			!pow_check(p, 22, "451", 3, 31),
		"pow: empty, non-digit and too long nonces and over 30 bits are refused");
	tap_ok(pow_solve(p, 22, 30, 10, out, &tries) == -EAGAIN && tries == 10,
		"pow: a bounded search gives up");
}

/* The reference: the first four bytes of SHA256(prefix || sol), OpenSSL's one-shot function. */
static uint32_t
ref_word(const char *prefix, size_t plen, const char *sol, size_t slen)
{
	uint8_t msg[POW_PREFIX_MAX + POW_SOLUTION_MAX + 8], d[SHA256_DIGEST_LENGTH];

	memcpy(msg, prefix, plen);
	memcpy(msg + plen, sol, slen);
	SHA256(msg, plen + slen, d);
	return (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
}

/* How many leading zero bits a digest whose first word is w has (32 for a zero word). */
static unsigned
zero_bits(uint32_t w)
{
	return w == 0 ? 32 : (unsigned)__builtin_clz(w);
}

/* The reference's smallest nonce solving prefix at bits: snprintf and SHA256() per try. */
static uint64_t
ref_solve(const char *prefix, size_t plen, unsigned bits)
{
	char s[POW_SOLUTION_MAX + 1];

	for (uint64_t n = 0;; n++) {
		int len = snprintf(s, sizeof(s), "%" PRIu64, n);

		if (zero_bits(ref_word(prefix, plen, s, (size_t)len)) >= bits)
			return n;
	}
}

/*
 * One engine against the reference: every prefix length 1..32 with every nonce length 1..20,
 * random bytes and digits, both placed just before a PROT_NONE page (an over-read crashes),
 * the digest's first word and the check at every difficulty 0..30; then the solver.
 */
static void
test_pow_engine(const char *engine)
{
	uint64_t rs = 0x5eed0f9a1e5ULL;
	unsigned cases = 0, wrong_word = 0, wrong_check = 0, wrong_solve = 0;
	char p[POW_PREFIX_MAX], sol[POW_SOLUTION_MAX];

	if (pow_set_engine(engine) != 0) {
		tap_skip("this CPU has not got it", "pow engine %s: every prefix and nonce length",
			engine);
		return;
	}
	for (size_t plen = 1; plen <= POW_PREFIX_MAX; plen++) {
		for (size_t slen = 1; slen <= POW_SOLUTION_MAX; slen++) {
			for (int k = 0; k < 40; k++) {
				struct guard_buf gp, gs;

				for (size_t i = 0; i < plen; i++)
					p[i] = (char)rng_xorshift64s(&rs);
				for (size_t i = 0; i < slen; i++)
					sol[i] = (char)('0' + rng_xorshift64s(&rs) % 10);
				const char *gpp = guard_place(&gp, p, plen);
				const char *gsp = guard_place(&gs, sol, slen);
				uint32_t want = ref_word(p, plen, sol, slen), got = 0;

				cases++;
				if (gpp == NULL || gsp == NULL ||
					pow_digest_word(gpp, plen, gsp, slen, &got) != 0 ||
					got != want)
					wrong_word++;
				for (unsigned b = 0; b <= POW_BITS_MAX; b++)
					wrong_check += pow_check(gpp, plen, gsp, slen, b) !=
						       (zero_bits(want) >= b);
				guard_free(&gp);
				guard_free(&gs);
			}
		}
	}
	tap_ok(wrong_word == 0 && wrong_check == 0,
		"pow %s: %u prefixes and nonces of every length as SHA256() says: %u words and "
		"%u checks wrong",
		engine, cases, wrong_word, wrong_check);

	/* 30 bits, the most a token asks: the smallest nonces with 29 and with 30 zero bits
	 * (found with pow_solve() in 10^9 tries, hashes checked with Python's hashlib). */
	const char *ab = "abcdefghijklmnopqrstuv";

	tap_ok(pow_check(ab, 22, "1500551223", 10, 30) && pow_check(ab, 22, "1017220521", 10, 29) &&
			!pow_check(ab, 22, "1017220521", 10, 30),
		"pow %s: 30 bits: SHA-256(...1500551223) = 00000002af.. solves, "
		"SHA-256(...1017220521) = 0000000509.. solves 29 bits, not 30",
		engine);

	/* The solver: the smallest nonce, as the reference finds it one snprintf at a time. */
	for (int k = 0; k < 24; k++) {
		size_t plen = 16 + (size_t)k % 17;
		unsigned bits = 1 + (unsigned)k % 11;
		char out[POW_SOLUTION_MAX + 1];
		uint64_t tries = 0;

		for (size_t i = 0; i < plen; i++)
			p[i] = (char)('A' + rng_xorshift64s(&rs) % 26);
		uint64_t want = ref_solve(p, plen, bits);
		char ws[POW_SOLUTION_MAX + 1];

		snprintf(ws, sizeof(ws), "%" PRIu64, want);
		wrong_solve += pow_solve(p, plen, bits, UINT64_MAX, out, &tries) != 0 ||
			       strcmp(out, ws) != 0 || tries != want + 1;
	}
	tap_ok(wrong_solve == 0,
		"pow %s: the solver finds the reference's smallest nonce (24 "
		"prefixes, 1..11 bits): %u wrong",
		engine, wrong_solve);
}

/* What does not depend on the engine: the edges of the arguments and of the difficulty. */
static void
test_pow_edges(void)
{
	const char *p = "abcdefghijklmnopqrstuv";
	const char *p32 = "0123456789abcdefghijklmnopqrstuv";
	char out[POW_SOLUTION_MAX + 1];
	uint64_t tries = 0;
	uint32_t w = 0;

	/* 20 digits: 2^64 - 1 and the largest 20-digit text (a check reads digits, not a value). */
	tap_ok(pow_digest_word(p, 22, "18446744073709551615", 20, &w) == 0 &&
			w == ref_word(p, 22, "18446744073709551615", 20) &&
			pow_digest_word(p, 22, "99999999999999999999", 20, &w) == 0 &&
			w == ref_word(p, 22, "99999999999999999999", 20),
		"pow: 20-digit nonces are hashed whole");
	tap_ok(pow_digest_word(p32, 32, "99999999999999999999", 20, &w) == 0 &&
			w == ref_word(p32, 32, "99999999999999999999", 20) &&
			pow_digest_word(p32, 33, "1", 1, &w) == -EINVAL,
		"pow: a 32-byte prefix with 20 digits (52 bytes, one block) is hashed; 33 refused");
	tap_ok(pow_digest_word(p, 22, "0451", 4, &w) == 0 && w == ref_word(p, 22, "0451", 4) &&
			w != ref_word(p, 22, "451", 3),
		"pow: a leading zero is part of the message (0451 is not 451)");
	/* The smallest solution at 8 bits, and where the count of zero bits ends. */
	uint64_t n8 = ref_solve(p, 22, 8);
	char s8[POW_SOLUTION_MAX + 1];
	int l8 = snprintf(s8, sizeof(s8), "%" PRIu64, n8);
	unsigned z8 = zero_bits(ref_word(p, 22, s8, (size_t)l8));

	tap_ok(pow_check(p, 22, s8, (size_t)l8, 8) && pow_check(p, 22, s8, (size_t)l8, z8) &&
			!pow_check(p, 22, s8, (size_t)l8, z8 + 1) &&
			pow_solve(p, 22, 8, 1000000, out, &tries) == 0 && strcmp(out, s8) == 0,
		"pow: 8 bits: %s has %u zero bits, solves at %u and not at %u", s8, z8, z8, z8 + 1);
	tap_ok(pow_solve(p, 22, 0, 5, out, &tries) == 0 && strcmp(out, "0") == 0 && tries == 1,
		"pow: 0 bits: the nonce 0, first try");
	/* max_tries is exact, also within a batch of ten: 451 is the 452nd nonce. */
	tap_ok(pow_solve(p, 22, 12, 452, out, &tries) == 0 && strcmp(out, "451") == 0 &&
			tries == 452 && pow_solve(p, 22, 12, 451, out, &tries) == -EAGAIN &&
			tries == 451,
		"pow: a solution at the last try allowed is found, one try less gives up");
	tap_ok(pow_solve(NULL, 22, 12, 10, out, &tries) == -EINVAL &&
			pow_solve(p, 0, 12, 10, out, &tries) == -EINVAL &&
			pow_solve(p, 33, 12, 10, out, &tries) == -EINVAL &&
			pow_solve(p, 22, 31, 10, out, &tries) == -EINVAL &&
			pow_solve(p, 22, 12, 10, NULL, &tries) == -EINVAL,
		"pow: the solver refuses a missing or oversized prefix, 31 bits, no output");
	tap_ok(!pow_check(NULL, 22, "1", 1, 0) && !pow_check(p, 22, NULL, 1, 0) &&
			!pow_check(p, 0, "1", 1, 0) && !pow_check(p, 22, "1\0", 2, 0) &&
			!pow_check(p, 22, "/", 1, 0) && !pow_check(p, 22, ":", 1, 0) &&
			pow_digest_word(p, 22, "1", 1, NULL) == -EINVAL,
		"pow: no prefix, no nonce, a NUL or the characters around the digits are refused");
	tap_ok(pow_set_engine("nope") == -EINVAL, "pow: an unknown engine is refused");
}

int
main(void)
{
	const char *engine = pow_engine();

	test_draw();
	test_draw_many();
	test_pow();
	test_pow_edges();
	tap_diag("pow engine chosen at start: %s", engine);
	test_pow_engine("sha-ni");
	test_pow_engine("openssl");
	pow_set_engine(engine);
	return tap_done();
}
