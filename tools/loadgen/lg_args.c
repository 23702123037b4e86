/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/loadgen/lg_args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

int
lg_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	unsigned long long v = strtoull(s, &end, 10);

	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int
lg_parse_double(const char *s, double min, double max, double *out)
{
	char *end;

	errno = 0;
	double v = strtod(s, &end);

	if (errno || end == s || *end || !isfinite(v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int
lg_parse_ipv4(const char *s, uint32_t *out)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	*out = ntohl(a.s_addr);
	return 0;
}

int
lg_parse_net(const char *s, uint32_t *base, uint32_t *n, uint32_t *net_out, unsigned *plen_out)
{
	char buf[32];
	const char *slash = strchr(s, '/');
	uint64_t plen;
	uint32_t net;

	if (slash == NULL || (size_t)(slash - s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (lg_parse_ipv4(buf, &net) || lg_parse_u64(slash + 1, 8, 32, &plen))
		return -EINVAL;
	uint32_t size = plen == 32 ? 1 : 1u << (32 - plen);

	if (net_out != NULL)
		*net_out = net & ~(size - 1);
	if (plen_out != NULL)
		*plen_out = (unsigned)plen;
	if (net & (size - 1))
		return -EDOM;
	if (plen < 31) {
		*base = net + 1;
		*n = size - 2;
	} else {
		*base = net;
		*n = size;
	}
	return 0;
}

int
lg_parse_hex(const char *hex, uint8_t *out, size_t cap, size_t *len)
{
	size_t n = strlen(hex);

	if (n % 2 || n / 2 > cap)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)hex[i]))
			return -EINVAL;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		out[i] = (uint8_t)v;
	}
	*len = n / 2;
	return 0;
}
