/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The draw's formulas (common/draw.h) against values computed independently with Python's
 * hashlib and hmac from the text of docs/fairness.md, and the proof-of-work check
 * (common/pow.h) against a nonce found the same way.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/draw.h"
#include "common/pow.h"
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
	draw_hex(c, hex);
	tap_ok(strcmp(hex, "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd") == 0,
		"commitment: SHA-256 of the seed (%s)", hex);
	tap_ok(draw_entrants_digest(7, sorted, 5, d) == 0, "digest of five sorted entrants");
	draw_hex(d, hex);
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
	tap_ok(draw_hex_parse(hex, strlen(hex), back) == 0 && memcmp(back, d, sizeof(d)) == 0,
		"hex parses back");
	tap_ok(draw_hex_parse(hex, 63, back) == -EINVAL && draw_hex_parse("zz", 2, back) == -EINVAL,
		"hex: a short or non-hex text is refused");
	uint8_t d2[DRAW_DIGEST_LEN];
	uint64_t other[] = {1, 3, 42, 99};

	tap_ok(draw_entrants_digest(7, other, 4, d2) == 0 && memcmp(d, d2, sizeof(d)) != 0 &&
			draw_rank_key(seed, 7, d2, 42) != draw_rank_key(seed, 7, d, 42),
		"one entrant less changes the digest and every rank key");
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

int
main(void)
{
	test_draw();
	test_pow();
	return tap_done();
}
