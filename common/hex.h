/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_HEX_H
#define FG_COMMON_HEX_H
/*
 * Bytes as hexadecimal text and back, the one way every program writes and reads them: seeds,
 * digests and commitments in answers, PostgreSQL and Redis, keys given by an operator. The
 * writers are static inline, without a branch on the data, for the data plane's answers (hot
 * path) as much as for the control plane; hex_decode() is the one reader (common/parse.h's
 * parse_hex() reads a C string with it).
 */
#include <stddef.h>
#include <stdint.h>

/* The value of a hex digit (0-9, a-f, A-F), or -1. */
static inline int
hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Writes the n bytes at v as 2 * n lowercase hex digits at out, without a NUL. Cannot fail. */
static inline void
hex_encode(const uint8_t *v, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[v[i] >> 4];
		out[2 * i + 1] = digits[v[i] & 15];
	}
}

/* hex_encode() and a NUL: out holds 2 * n + 1 bytes. Cannot fail. */
static inline void
hex_str(const uint8_t *v, size_t n, char *out)
{
	hex_encode(v, n, out);
	out[2 * n] = '\0';
}

/*
 * Reads exactly 2 * n hex digits (either case), the len bytes at s (no NUL needed), into
 * out[0..n). Returns 0; -EINVAL when len is not 2 * n or a byte is not a hex digit (out is
 * written only on success).
 */
int hex_decode(const char *s, size_t len, uint8_t *out, size_t n);

#endif
