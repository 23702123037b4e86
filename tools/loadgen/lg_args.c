/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/loadgen/lg_args.h"

#include <errno.h>
#include <string.h>

#include "common/parse.h"

int
lg_parse_net(const char *s, uint32_t *base, uint32_t *n, uint32_t *net_out, unsigned *plen_out)
{
	uint32_t net;
	unsigned plen;
	int rc = parse_cidr(s, &net, &plen);

	/* A network here always says its length, and the tools want at least a /8. */
	if ((rc != 0 && rc != -EDOM) || strchr(s, '/') == NULL || plen < 8)
		return -EINVAL;
	if (net_out != NULL)
		*net_out = net;
	if (plen_out != NULL)
		*plen_out = plen;
	if (rc == -EDOM)
		return -EDOM;

	uint32_t size = plen == 32 ? 1 : 1u << (32 - plen);

	if (plen < 31) {
		*base = net + 1;
		*n = size - 2;
	} else {
		*base = net;
		*n = size;
	}
	return 0;
}
