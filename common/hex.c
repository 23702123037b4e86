/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/hex.h"

#include <errno.h>

int
hex_decode(const char *s, size_t len, uint8_t *out, size_t n)
{
	if (s == NULL || len != 2 * n)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (hex_digit(s[i]) < 0)
			return -EINVAL;
	for (size_t i = 0; i < n; i++)
		out[i] = (uint8_t)(hex_digit(s[2 * i]) << 4 | hex_digit(s[2 * i + 1]));
	return 0;
}
