/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dataplane/pipeline/request.h's req_claimed_user(): the user a token claims, read 8 bytes at
 * a time, against the byte-by-byte reading it replaced (ref_claimed_user() below) on a table of
 * tokens and on every string of a small alphabet up to 8 bytes and random ones up to 40, each
 * placed just before a guard page (tests/guard.h), so that a read past the token crashes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/pipeline/request.h"
#include "tests/guard.h"
#include "tests/tap.h"

/* The reading before the 8-byte one, kept here as the reference. */
static uint64_t
ref_claimed_user(const char *p, size_t len, unsigned field)
{
	size_t i = 0;
	uint64_t v = 0;

	for (unsigned f = 0; f < field; f++) {
		while (i < len && p[i] != '.')
			i++;
		i++;
	}
	for (unsigned d = 0; i < len && d < 19 && p[i] >= '0' && p[i] <= '9'; i++, d++)
		v = v * 10 + (uint64_t)(p[i] - '0');
	return v;
}

static const struct {
	const char *tok;
	unsigned field;
	uint64_t want;
} table[] = {
	{"p1.1.42.1999999999.1.mac", 2, 42}, {"p1.1.1000031.1999999999.1.mac", 2, 1000031},
	{"p1.7.12345678.1999999999.1.mac", 2, 12345678},
	{"p1.7.123456789.1999999999.1.mac", 2, 123456789},
	{"p1.7.1234567890123456789012.1.mac", 2, 1234567890123456789u}, /* 19 digits read */
	{"p1.123456789.55.1999999999.1.mac", 2, 55}, /* second dot past the first 8 bytes */
	{"p2.3.44.1999999999.8.1.mac", 2, 44}, {"s1.987654.1999999999.1.mac", 1, 987654},
	{"s1.0.1999999999.1.mac", 1, 0}, {"p1.1.x42.1999999999.1.mac", 2, 0},
	{"p1.1..1999999999.1.mac", 2, 0}, {"p1.1.42", 2, 42}, /* shorter than 8 after the dots */
	{"p1.1.4", 2, 4},				      /* the token 6 bytes */
	{"p1.1.", 2, 0}, {"p1.1", 2, 0}, {"", 2, 0},
	{"p1.1.9:", 2, 9}, /* ':' and '/' border the digits */
	{"p1.1.0/123456789", 2, 0},
	{"p1.1.12345678", 2, 12345678}, /* exactly 8 digits to the end */
};

/* One guard page for every input (guard_place_again()): they all fit in a page. */
static struct guard_buf guard;

static int
check(const char *tok, size_t len, unsigned field, uint64_t want)
{
	char *p = guard_place_again(&guard, tok, len);

	return p != NULL && req_claimed_user(p, len, field) == want;
}

int
main(void)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		size_t len = strlen(table[i].tok);

		tap_ok(check(table[i].tok, len, table[i].field, table[i].want) &&
				ref_claimed_user(table[i].tok, len, table[i].field) ==
					table[i].want,
			"'%s' field %u: %llu", table[i].tok, table[i].field,
			(unsigned long long)table[i].want);
	}

	/* Every string of "0.9a" up to 8 bytes and random ones of "0189./:p" up to 40. */
	static const char small[] = "0.9a", wide[] = "0189./:p";
	char s[48];
	unsigned bad = 0, n = 0;

	for (size_t len = 0; len <= 8; len++) {
		size_t total = 1;

		for (size_t k = 0; k < len; k++)
			total *= 4;
		for (size_t x = 0; x < total; x++) {
			size_t y = x;

			for (size_t k = 0; k < len; k++, y /= 4)
				s[k] = small[y % 4];
			for (unsigned f = 1; f <= 2; f++, n++)
				bad += !check(s, len, f, ref_claimed_user(s, len, f));
		}
	}
	srand(30);
	for (unsigned t = 0; t < 100000; t++) {
		size_t len = (size_t)rand() % 41;

		for (size_t k = 0; k < len; k++)
			s[k] = wide[rand() % 8];
		/* Most of them shaped as a token: "p1." and digits. */
		if (len >= 3 && (t & 1))
			memcpy(s, "p1.", 3);
		for (unsigned f = 1; f <= 2; f++, n++)
			bad += !check(s, len, f, ref_claimed_user(s, len, f));
	}
	tap_ok(bad == 0, "%u strings read as the byte-by-byte reading reads them (%u differ)", n,
		bad);
	guard_free(&guard);
	return tap_done();
}
