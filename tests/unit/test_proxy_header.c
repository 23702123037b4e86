/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dataplane/proxy_header: PROXY protocol v1 and v2 headers against a table of valid, cut short
 * and malformed ones, each placed just before a PROT_NONE guard page so that an over-read
 * crashes; every strict prefix of a valid header must read as incomplete, never as malformed.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "dataplane/proxy_header.h"
#include "tests/guard.h"
#include "tests/tap.h"

#define SIG "\r\n\r\n\0\r\nQUIT\n"

struct pcase {
	const char *name;
	const char *bytes;
	size_t len;
	int rc; /* the header length, or PROXY_* */
	uint8_t family;
	const char *src; /* the source address as text, family 4 or 6 */
	uint16_t sport;
};

#define B(s) s, sizeof(s) - 1

static const struct pcase cases[] = {
	{"v1 TCP4", B("PROXY TCP4 198.18.5.1 198.18.0.2 56324 443\r\nGET / HTTP/1.1\r\n"), 44, 4,
		"198.18.5.1", 56324},
	{"v1 TCP6", B("PROXY TCP6 2001:db8::1 2001:db8::2 0 80\r\n"), 41, 6, "2001:db8::1", 0},
	{"v1 TCP6 from an IPv4-mapped source: that IPv4 client",
		B("PROXY TCP6 ::ffff:198.18.5.1 2001:db8::2 7 80\r\n"), 47, 4, "198.18.5.1", 7},
	{"v1 TCP6 from ::fffe:198.18.5.1: not mapped, an IPv6 client",
		B("PROXY TCP6 ::fffe:198.18.5.1 2001:db8::2 7 80\r\n"), 47, 6, "::fffe:c612:501",
		7},
	{"v1 UNKNOWN", B("PROXY UNKNOWN\r\n"), 15, 0, NULL, 0},
	{"v1 UNKNOWN with addresses (ignored)",
		B("PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n"), 59, 0, NULL, 0},
	{"v1 port 65535", B("PROXY TCP4 1.2.3.4 5.6.7.8 65535 1\r\n"), 36, 4, "1.2.3.4", 65535},
	{"v1 port 65536", B("PROXY TCP4 1.2.3.4 5.6.7.8 65536 1\r\n"), PROXY_MALFORMED, 0, NULL, 0},
	{"v1 port with a leading zero", B("PROXY TCP4 1.2.3.4 5.6.7.8 080 1\r\n"), PROXY_MALFORMED,
		0, NULL, 0},
	{"v1 two spaces", B("PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n"), PROXY_MALFORMED, 0, NULL, 0},
	{"v1 a sixth field", B("PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n"), PROXY_MALFORMED, 0, NULL,
		0},
	{"v1 four fields", B("PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n"), PROXY_MALFORMED, 0, NULL, 0},
	{"v1 trailing space", B("PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n"), PROXY_MALFORMED, 0, NULL,
		0},
	{"v1 IPv6 under TCP4", B("PROXY TCP4 ::1 ::1 1 2\r\n"), PROXY_MALFORMED, 0, NULL, 0},
	{"v1 IPv4 under TCP6", B("PROXY TCP6 1.2.3.4 5.6.7.8 1 2\r\n"), PROXY_MALFORMED, 0, NULL,
		0},
	{"v1 UDP4", B("PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n"), PROXY_MALFORMED, 0, NULL, 0},
	{"v1 lower case", B("PROXY tcp4 1.2.3.4 5.6.7.8 1 2\r\n"), PROXY_MALFORMED, 0, NULL, 0},
	{"v1 bare LF", B("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n"), PROXY_MALFORMED, 0, NULL, 0},
	{"v1 CR without LF", B("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX"), PROXY_MALFORMED, 0, NULL, 0},
	{"v1 no CRLF in 107 bytes",
		B("PROXY UNKNOWN "
		  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		  "xxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n"),
		PROXY_MALFORMED, 0, NULL, 0},
	{"v1 a NUL", B("PROXY TCP4 1.2.3.4\0 5.6.7.8 1 2\r\n"), PROXY_MALFORMED, 0, NULL, 0},
	{"HTTP is no PROXY header", B("POST / HTTP/1.1\r\n"), PROXY_NONE, 0, NULL, 0},
	{"PROXZ is no PROXY header", B("PROXZ TCP4"), PROXY_NONE, 0, NULL, 0},
	{"v2 TCP over IPv4",
		B(SIG "\x21\x11\x00\x0c\xc6\x12\x05\x01\xc6\x12\x00\x02\xdc\x04\x01\xbb"
		      "GET"),
		28, 4, "198.18.5.1", 56324},
	{"v2 TCP over IPv6",
		B(SIG "\x21\x21\x00\x24"
		      "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01"
		      "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02\x00\x50\x01\xbb"),
		52, 6, "2001:db8::1", 80},
	{"v2 TCP over IPv6 from an IPv4-mapped source: that IPv4 client",
		B(SIG "\x21\x21\x00\x24"
		      "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x05\x01"
		      "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x00\x02\xdc\x04\x01\xbb"),
		52, 4, "198.18.5.1", 56324},
	{"v2 with a TLV (unique id) after the addresses",
		B(SIG "\x21\x11\x00\x12\xc6\x12\x05\x01\xc6\x12\x00\x02\xdc\x04\x01\xbb"
		      "\x05\x00\x03"
		      "abc"),
		34, 4, "198.18.5.1", 56324},
	{"v2 LOCAL (a health check)", B(SIG "\x20\x00\x00\x00"), 16, 0, NULL, 0},
	{"v2 LOCAL with addresses (ignored)",
		B(SIG "\x20\x11\x00\x0c\xc6\x12\x05\x01\xc6\x12\x00\x02\xdc\x04\x01\xbb"), 28, 0,
		NULL, 0},
	{"v2 UNIX without its 216-byte block", B(SIG "\x21\x31\x00\x00"), PROXY_MALFORMED, 0, NULL,
		0},
	{"v2 version 1", B(SIG "\x11\x11\x00\x0c\xc6\x12\x05\x01\xc6\x12\x00\x02\xdc\x04\x01\xbb"),
		PROXY_MALFORMED, 0, NULL, 0},
	{"v2 command 2", B(SIG "\x22\x11\x00\x0c\xc6\x12\x05\x01\xc6\x12\x00\x02\xdc\x04\x01\xbb"),
		PROXY_MALFORMED, 0, NULL, 0},
	{"v2 family 4", B(SIG "\x21\x41\x00\x00"), PROXY_MALFORMED, 0, NULL, 0},
	{"v2 transport 3",
		B(SIG "\x21\x13\x00\x0c\xc6\x12\x05\x01\xc6\x12\x00\x02\xdc\x04\x01\xbb"),
		PROXY_MALFORMED, 0, NULL, 0},
	{"v2 IPv4 block too short",
		B(SIG "\x21\x11\x00\x0b\xc6\x12\x05\x01\xc6\x12\x00\x02\xdc\x04\x01"),
		PROXY_MALFORMED, 0, NULL, 0},
	{"v2 a TLV past the end",
		B(SIG "\x21\x11\x00\x10\xc6\x12\x05\x01\xc6\x12\x00\x02\xdc\x04\x01\xbb\x05\x00\x03"
		      "a"),
		PROXY_MALFORMED, 0, NULL, 0},
	{"v2 a TLV header cut",
		B(SIG "\x21\x11\x00\x0e\xc6\x12\x05\x01\xc6\x12\x00\x02\xdc\x04\x01\xbb"
		      "\x05\x00"),
		PROXY_MALFORMED, 0, NULL, 0},
	{"a wrong v2 signature", B("\r\n\r\n\0\r\nQUIT\r\x21\x11\x00\x00"), PROXY_NONE, 0, NULL, 0},
};

static const char *
family_src(const struct proxy_info *pi, char *buf)
{
	if (pi->family == 4)
		return inet_ntop(AF_INET, &pi->src4, buf, 64);
	if (pi->family == 6)
		return inet_ntop(AF_INET6, pi->src6, buf, 64);
	return "";
}

int
main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pcase *c = &cases[i];
		struct guard_buf g = {0};
		const uint8_t *p = (const uint8_t *)guard_place(&g, c->bytes, c->len);
		struct proxy_info pi;
		char src[64] = "";
		int rc = proxy_header_parse(p, c->len, &pi);
		bool same = rc == c->rc;

		if (same && rc > 0) {
			family_src(&pi, src);
			same = pi.family == c->family &&
			       (c->src == NULL ||
				       (strcmp(src, c->src) == 0 && pi.sport == c->sport));
		}
		tap_ok(same, "%s: %d (want %d) %s", c->name, rc, c->rc, src);
		guard_free(&g);
		if (c->rc <= 0)
			continue;
		/* Every strict prefix is incomplete (or, before the signature is told, no
		 * header at all is never claimed). */
		unsigned bad = 0;

		for (size_t k = 0; k < (size_t)c->rc; k++) {
			struct guard_buf h = {0};
			const uint8_t *q = (const uint8_t *)guard_place(&h, c->bytes, k);

			bad += proxy_header_parse(q, k, &pi) != PROXY_INCOMPLETE;
			guard_free(&h);
		}
		tap_ok(bad == 0, "  each of its %d strict prefixes is incomplete (%u are not)",
			c->rc, bad);
	}
	tap_ok(proxy_header_maybe((const uint8_t *)"PROXY TCP4", 10) &&
			proxy_header_maybe((const uint8_t *)SIG, 12) &&
			!proxy_header_maybe((const uint8_t *)"POST /", 6) &&
			!proxy_header_maybe((const uint8_t *)"PRO", 3),
		"proxy_header_maybe(): PROX and CRLF CRLF, nothing else");
	return tap_done();
}
