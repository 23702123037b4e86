/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_BASE64URL_H
#define FG_COMMON_BASE64URL_H
/*
 * base64url without padding (RFC 4648 §5 alphabet A-Z a-z 0-9 - _, no '='), strict both ways:
 * the decoder accepts exactly what the encoder produces, so one byte string has one text form
 * (no padding, no whitespace, no other alphabet, unused low bits of the last character zero).
 * Tokens rely on that: a MAC cannot be re-spelled into a second valid token.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* Characters that base64url_encode() writes for n bytes: ceil(n * 4 / 3). */
static inline size_t
base64url_encoded_len(size_t n)
{
	return n / 3 * 4 + (n % 3 == 0 ? 0 : n % 3 + 1);
}

/*
 * Writes the base64url text of in[0..n) to out: base64url_encoded_len(n) characters, no
 * padding and no terminating NUL. Returns the number of characters written. Cannot fail.
 */
size_t base64url_encode(const void *in, size_t n, char *out);

/* Value + 1 of each byte as a base64url character, 0 outside the alphabet. */
extern const uint8_t base64url_value1[256];

/*
 * The 6-bit value of character c, or 0xff when c is outside the alphabet: the table holds
 * value + 1 so that the 192 invalid bytes need no initialiser, and 0 - 1 sets the top bits
 * that base64url_decode() checks once at the end.
 */
static inline uint8_t
base64url_val(char c)
{
	return (uint8_t)(base64url_value1[(uint8_t)c] - 1);
}

/*
 * Decodes the len characters at in into out, which has room for cap bytes. Returns the
 * number of bytes written, or -EINVAL if the text is not what base64url_encode() writes
 * (a character outside the alphabet, '=', a length of 4k+1, non-zero unused bits in the last
 * character; out may have been written), or -ENOSPC if the result does not fit in cap bytes
 * (nothing is written then). Never reads past in[len - 1]. Inline: tokens are decoded per
 * request.
 */
static inline int
base64url_decode(const char *in, size_t len, uint8_t *out, size_t cap)
{
	size_t rem = len % 4;
	size_t n = len / 4 * 3 + (rem == 0 ? 0 : rem - 1);
	uint32_t bad = 0, v;
	size_t i = 0, o = 0;

	if (rem == 1)
		return -EINVAL;
	if (n > cap)
		return -ENOSPC;
	/* Any character outside the alphabet sets 0xff in bad; checked once at the end. */
	for (; i + 4 <= len; i += 4) {
		uint8_t a = base64url_val(in[i]), b = base64url_val(in[i + 1]);
		uint8_t c = base64url_val(in[i + 2]), d = base64url_val(in[i + 3]);

		bad |= a | b | c | d;
		v = (uint32_t)(a & 63) << 18 | (uint32_t)(b & 63) << 12 | (uint32_t)(c & 63) << 6 |
		    (d & 63);
		out[o++] = (uint8_t)(v >> 16);
		out[o++] = (uint8_t)(v >> 8);
		out[o++] = (uint8_t)v;
	}
	if (rem == 2) {
		uint8_t a = base64url_val(in[i]), b = base64url_val(in[i + 1]);

		/* The last character carries 2 bits of data; its 4 low bits must be zero. */
		bad |= a | b | ((b & 15) != 0 ? 0xff : 0);
		out[o++] = (uint8_t)((a & 63) << 2 | (b & 63) >> 4);
	} else if (rem == 3) {
		uint8_t a = base64url_val(in[i]), b = base64url_val(in[i + 1]);
		uint8_t c = base64url_val(in[i + 2]);

		/* The last character carries 4 bits of data; its 2 low bits must be zero. */
		bad |= a | b | c | ((c & 3) != 0 ? 0xff : 0);
		v = (uint32_t)(a & 63) << 12 | (uint32_t)(b & 63) << 6 | (c & 63);
		out[o++] = (uint8_t)(v >> 10);
		out[o++] = (uint8_t)(v >> 2);
	}
	if (bad & 0xc0)
		return -EINVAL;
	return (int)o;
}

#endif
