/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the PROXY protocol parser (dataplane/proxy_header.c), which reads the
 * first bytes a trusted edge's connection sends (docs/testing.md, docs/edge.md).
 *
 * Beyond "no crash, no over-read": the result is one of the documented ones; a header's length
 * is within the input, and every strict prefix of it reads as incomplete while anything after it
 * changes nothing; a v1 TCP4 header is byte for byte the line a reference writes from the
 * addresses and ports it returned (inet_ntop, "%u"), so nothing lax is accepted; a v2 header's
 * length is its fixed part plus its length field, and its source address is the bytes there.
 */
#include <arpa/inet.h>

#include "dataplane/proxy_header.h"
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = (uint8_t *)fuzz_copy(data, size);
	struct proxy_info pi, pj;
	int rc = proxy_header_parse(p, size, &pi);

	FUZZ_CHECK(rc == PROXY_NONE || rc == PROXY_INCOMPLETE || rc == PROXY_MALFORMED || rc > 0);
	FUZZ_CHECK(rc <= (int)size);
	if (rc > 0) {
		FUZZ_CHECK(pi.version == 1 || pi.version == 2);
		FUZZ_CHECK(pi.family == 0 || pi.family == 4 || pi.family == 6);
		/* A prefix is incomplete; the header alone answers the same. */
		for (size_t k = 0; k < (size_t)rc; k++) {
			uint8_t *q = (uint8_t *)fuzz_copy(p, k);

			FUZZ_CHECK(proxy_header_parse(q, k, &pj) == PROXY_INCOMPLETE);
			free(q);
		}
		uint8_t *h = (uint8_t *)fuzz_copy(p, (size_t)rc);

		FUZZ_CHECK(proxy_header_parse(h, (size_t)rc, &pj) == rc);
		FUZZ_CHECK(pj.family == pi.family && pj.src4 == pi.src4 && pj.sport == pi.sport &&
			   memcmp(pj.src6, pi.src6, 16) == 0);
		free(h);
		/* A TCP6 line or an AF_INET6 header with an IPv4-mapped source gives an IPv4
		 * client (proxy_header.h): the text is rebuilt only for a TCP4 line. */
		if (pi.version == 1 && pi.family == 4 && memcmp(p, "PROXY TCP4 ", 11) == 0) {
			char s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN], line[PROXY_V1_MAX + 1];
			int n;

			inet_ntop(AF_INET, &pi.src4, s, sizeof(s));
			inet_ntop(AF_INET, &pi.dst4, d, sizeof(d));
			n = snprintf(line, sizeof(line), "PROXY TCP4 %s %s %u %u\r\n", s, d,
				pi.sport, pi.dport);
			FUZZ_CHECK(n == rc && memcmp(line, p, (size_t)n) == 0);
		}
		if (pi.version == 2) {
			FUZZ_CHECK(rc == PROXY_V2_HDR + (p[14] << 8 | p[15]));
			/* AF_INET: the source at 16; AF_INET6 mapped (::ffff:a.b.c.d): its last 4. */
			if (pi.family == 4)
				FUZZ_CHECK(memcmp(&pi.src4, p + ((p[13] >> 4) == 2 ? 28 : 16), 4) == 0);
			if (pi.family == 6)
				FUZZ_CHECK(memcmp(pi.src6, p + 16, 16) == 0);
		}
	} else if (rc == PROXY_NONE) {
		FUZZ_CHECK(size > 0 && !(size >= 6 && memcmp(p, "PROXY ", 6) == 0) &&
			   !(size >= 12 && memcmp(p, PROXY_V2_SIG, 12) == 0));
	}
	free(p);
	return 0;
}
