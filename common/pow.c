/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/pow.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

/* Whether the digest starts with bits zero bits. */
static bool
pow_zero_bits(const uint8_t *d, unsigned bits)
{
	unsigned i = 0;

	for (; bits >= 8; bits -= 8)
		if (d[i++] != 0)
			return false;
	return bits == 0 || (d[i] >> (8 - bits)) == 0;
}

bool
pow_check(const char *prefix, size_t plen, const char *sol, size_t slen, unsigned bits)
{
	uint8_t msg[POW_PREFIX_MAX + POW_SOLUTION_MAX], d[SHA256_DIGEST_LENGTH];

	if (prefix == NULL || sol == NULL || plen == 0 || plen > POW_PREFIX_MAX || slen == 0 ||
		slen > POW_SOLUTION_MAX || bits > 30)
		return false;
	for (size_t i = 0; i < slen; i++)
		if (sol[i] < '0' || sol[i] > '9')
			return false;
	memcpy(msg, prefix, plen);
	memcpy(msg + plen, sol, slen);
	SHA256(msg, plen + slen, d);
	return pow_zero_bits(d, bits);
}

int
pow_solve(const char *prefix, size_t plen, unsigned bits, uint64_t max_tries,
	char out[POW_SOLUTION_MAX + 1], uint64_t *tries)
{
	char buf[POW_SOLUTION_MAX + 1];

	if (prefix == NULL || plen == 0 || plen > POW_PREFIX_MAX || bits > 30 || out == NULL)
		return -EINVAL;
	for (uint64_t n = 0; n < max_tries; n++) {
		int len = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)n);

		if (pow_check(prefix, plen, buf, (size_t)len, bits)) {
			memcpy(out, buf, (size_t)len + 1);
			if (tries != NULL)
				*tries = n + 1;
			return 0;
		}
	}
	if (tries != NULL)
		*tries = max_tries;
	return -EAGAIN;
}
