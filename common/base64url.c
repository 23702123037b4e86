/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include "common/base64url.h"

static const char b64url_alphabet[64] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Value + 1 of each character, 0 outside the alphabet: see base64url_val(). */
/* clang-format off */
const uint8_t base64url_value1[256] = {
	['A'] = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
		24, 25, 26,
	['a'] = 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
		48, 49, 50, 51, 52,
	['0'] = 53, 54, 55, 56, 57, 58, 59, 60, 61, 62,
	['-'] = 63,
	['_'] = 64,
};
/* clang-format on */

size_t
base64url_encode(const void *in, size_t n, char *out)
{
	const uint8_t *p = in;
	char *o = out;
	size_t i = 0;

	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		*o++ = b64url_alphabet[v >> 18];
		*o++ = b64url_alphabet[(v >> 12) & 63];
		*o++ = b64url_alphabet[(v >> 6) & 63];
		*o++ = b64url_alphabet[v & 63];
	}
	if (n - i == 1) {
		*o++ = b64url_alphabet[p[i] >> 2];
		*o++ = b64url_alphabet[(p[i] & 3) << 4];
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)p[i] << 8 | p[i + 1];

		*o++ = b64url_alphabet[v >> 10];
		*o++ = b64url_alphabet[(v >> 4) & 63];
		*o++ = b64url_alphabet[(v & 15) << 2];
	}
	return (size_t)(o - out);
}
