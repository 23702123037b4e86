/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common/hex.h: the one hex writer (hex_encode/hex_str) and reader (hex_decode), table-driven;
 * the reader's input sits just before a guard page (no NUL after it), so that reading one byte
 * past len crashes the test.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/hex.h"
#include "tests/guard.h"
#include "tests/tap.h"

static const struct {
	const char *text;
	size_t n; /* bytes asked for */
	int rc;
	uint8_t want[4];
} decode[] = {
	{"", 0, 0, {0}}, {"00ffA5", 3, 0, {0x00, 0xff, 0xa5}}, {"0123", 2, 0, {0x01, 0x23}},
	{"abCD", 2, 0, {0xab, 0xcd}}, {"00ff", 3, -EINVAL, {0}}, /* too short for n */
	{"00ff00", 2, -EINVAL, {0}},				 /* too long for n */
	{"0g", 1, -EINVAL, {0}},				 /* not a digit */
	{"g0", 1, -EINVAL, {0}}, {"0 ", 1, -EINVAL, {0}}, {"0x", 1, -EINVAL, {0}},
	{"0", 1, -EINVAL, {0}},	 /* odd */
	{"f:", 1, -EINVAL, {0}}, /* the byte after '9' */
	{"`0", 1, -EINVAL, {0}}, /* the byte before 'a' */
	{"G0", 1, -EINVAL, {0}}, /* the byte after 'F' */
	{"@0", 1, -EINVAL, {0}}, /* the byte before 'A' */
};

static const struct {
	uint8_t v[4];
	size_t n;
	const char *want;
} encode[] = {
	{{0}, 0, ""},
	{{0x00, 0xff, 0xa5}, 3, "00ffa5"},
	{{0x01, 0x23, 0x45, 0x67}, 4, "01234567"},
	{{0x89, 0xab, 0xcd, 0xef}, 4, "89abcdef"},
};

int
main(void)
{
	for (size_t i = 0; i < sizeof(decode) / sizeof(decode[0]); i++) {
		size_t len = strlen(decode[i].text);
		struct guard_buf g = {0};
		const char *s = guard_place(&g, decode[i].text, len);
		uint8_t out[4];
		int rc;

		memset(out, 0xee, sizeof(out));
		rc = hex_decode(s, len, out, decode[i].n);
		tap_ok(rc == decode[i].rc &&
				(rc == 0 ? memcmp(out, decode[i].want, decode[i].n) == 0
					 : out[0] == 0xee),
			"decode \"%s\" as %zu bytes: rc %d (want %d)%s", decode[i].text,
			decode[i].n, rc, decode[i].rc, rc != 0 ? ", out untouched" : "");
		guard_free(&g);
	}
	for (size_t i = 0; i < sizeof(encode) / sizeof(encode[0]); i++) {
		char out[9];

		memset(out, 'x', sizeof(out));
		hex_str(encode[i].v, encode[i].n, out);
		tap_ok(strcmp(out, encode[i].want) == 0,
			"hex_str of %zu bytes: \"%s\" (want \"%s\")", encode[i].n, out,
			encode[i].want);
		memset(out, 'x', sizeof(out));
		hex_encode(encode[i].v, encode[i].n, out);
		tap_ok(memcmp(out, encode[i].want, 2 * encode[i].n) == 0 &&
				out[2 * encode[i].n] == 'x',
			"hex_encode of %zu bytes writes %zu digits and no NUL", encode[i].n,
			2 * encode[i].n);
	}

	/* Every byte value there and back, and every character: 22 digits, the rest refused. */
	uint8_t all[256], back[256];
	char text[513];
	unsigned digits = 0;

	for (unsigned i = 0; i < 256; i++)
		all[i] = (uint8_t)i;
	hex_str(all, sizeof(all), text);
	tap_ok(hex_decode(text, 512, back, sizeof(back)) == 0 && memcmp(all, back, 256) == 0,
		"all 256 byte values are written and read back");
	for (unsigned c = 0; c < 256; c++)
		digits += hex_digit((char)c) >= 0;
	tap_ok(digits == 22 && hex_digit('7') == 7 && hex_digit('b') == 11 && hex_digit('E') == 14,
		"hex_digit: 22 characters are digits (got %u), with their values", digits);
	return tap_done();
}
