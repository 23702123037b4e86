/* SPDX-License-Identifier: BSD-3-Clause */
/* The PROXY protocol header, versions 1 and 2: the contract is in proxy_header.h. */
#include "dataplane/proxy_header.h"

#include <arpa/inet.h>

#include "common/parse.h"

/* "PROXY " then the rest of a v1 line. */
#define PROXY_V1_SIG	 "PROXY "
#define PROXY_V1_SIG_LEN 6

/* v2 (spec §2.2): the command in the low nibble of byte 12, the version in its high one. */
#define PROXY_V2_VERSION 0x20
#define PROXY_V2_LOCAL	 0x0
#define PROXY_V2_PROXY	 0x1
/* Byte 13: address family (high nibble) and transport (low). */
#define PROXY_V2_AF_UNSPEC 0x0
#define PROXY_V2_AF_INET   0x1
#define PROXY_V2_AF_INET6  0x2
#define PROXY_V2_AF_UNIX   0x3
#define PROXY_V2_T_UNSPEC  0x0
#define PROXY_V2_T_STREAM  0x1
#define PROXY_V2_T_DGRAM   0x2
#define PROXY_V2_INET_LEN  12 /* src, dst, sport, dport */
#define PROXY_V2_INET6_LEN 36
#define PROXY_V2_UNIX_LEN  216
#define PROXY_V2_TLV_HDR   3 /* type, length (2 bytes) */

/* Whether the n bytes at p agree with the first n of sig (n <= its length). */
static bool
proxy_prefix_of(const uint8_t *p, size_t n, const char *sig, size_t sig_len)
{
	return memcmp(p, sig, n < sig_len ? n : sig_len) == 0;
}

/* A port in decimal, 0..65535, no leading zero (spec §2.1: "0" alone is allowed). */
static int
proxy_v1_port(const char *s, size_t n, uint16_t *out)
{
	unsigned v = 0;

	if (n == 0 || n > 5 || (n > 1 && s[0] == '0'))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/*
 * Spec §2.1: "PROXY" SP ( "TCP4" | "TCP6" ) SP src SP dst SP sport SP dport CRLF, or
 * "PROXY UNKNOWN" followed by anything up to the CRLF; at most 107 bytes.
 */
static int
proxy_v1(const uint8_t *p, size_t len, struct proxy_info *out)
{
	const uint8_t *cr = NULL;
	const char *f[5];
	size_t flen[5];
	size_t n = len < PROXY_V1_MAX ? len : PROXY_V1_MAX;
	unsigned nf = 0;

	for (size_t i = PROXY_V1_SIG_LEN; i < n; i++) {
		if (p[i] == '\r') {
			cr = p + i;
			break;
		}
		/* Printable US-ASCII and spaces only: a bare LF or any control byte is no v1. */
		if (p[i] < 0x20 || p[i] > 0x7e)
			return PROXY_MALFORMED;
	}
	if (cr == NULL)
		return len < PROXY_V1_MAX ? PROXY_INCOMPLETE : PROXY_MALFORMED;
	if ((size_t)(cr - p) + 1 == len)
		return PROXY_INCOMPLETE;
	if (cr[1] != '\n')
		return PROXY_MALFORMED;

	int hlen = (int)(cr - p) + 2;
	const char *s = (const char *)p + PROXY_V1_SIG_LEN, *end = (const char *)cr;

	memset(out, 0, sizeof(*out));
	out->version = 1;
	if (end - s >= 7 && memcmp(s, "UNKNOWN", 7) == 0 && (end - s == 7 || s[7] == ' '))
		return hlen; /* spec: the receiver ignores the rest of the line */
	/* Five fields (protocol, addresses, ports), each after exactly one space. */
	while (s <= end && nf < 5) {
		const char *e = memchr(s, ' ', (size_t)(end - s));

		if (e == NULL)
			e = end;
		f[nf] = s;
		flen[nf++] = (size_t)(e - s);
		if (e == end)
			break;
		s = e + 1;
	}
	if (nf != 5 || f[4] + flen[4] != end)
		return PROXY_MALFORMED;
	for (unsigned i = 0; i < 5; i++)
		if (flen[i] == 0)
			return PROXY_MALFORMED;
	if (flen[0] == 4 && memcmp(f[0], "TCP4", 4) == 0) {
		uint32_t a, b;

		if (parse_ipv4_n(f[1], flen[1], &a) != 0 || parse_ipv4_n(f[2], flen[2], &b) != 0)
			return PROXY_MALFORMED;
		out->family = 4;
		out->src4 = htonl(a);
		out->dst4 = htonl(b);
	} else if (flen[0] == 4 && memcmp(f[0], "TCP6", 4) == 0) {
		if (parse_ipv6_n(f[1], flen[1], out->src6) != 0 ||
			parse_ipv6_n(f[2], flen[2], out->dst6) != 0)
			return PROXY_MALFORMED;
		out->family = 6;
	} else {
		return PROXY_MALFORMED;
	}
	if (proxy_v1_port(f[3], flen[3], &out->sport) != 0 ||
		proxy_v1_port(f[4], flen[4], &out->dport) != 0)
		return PROXY_MALFORMED;
	return hlen;
}

/* Spec §2.2: the 16-byte fixed part, then len bytes of addresses and TLVs. */
static int
proxy_v2(const uint8_t *p, size_t len, struct proxy_info *out)
{
	if (len < PROXY_V2_HDR)
		return PROXY_INCOMPLETE;

	uint8_t ver_cmd = p[12], fam = p[13];
	size_t body = (size_t)p[14] << 8 | p[15];
	size_t need = 0;

	if ((ver_cmd & 0xf0) != PROXY_V2_VERSION)
		return PROXY_MALFORMED;
	if ((ver_cmd & 0x0f) != PROXY_V2_LOCAL && (ver_cmd & 0x0f) != PROXY_V2_PROXY)
		return PROXY_MALFORMED;
	switch (fam >> 4) {
	case PROXY_V2_AF_UNSPEC:
		break;
	case PROXY_V2_AF_INET:
		need = PROXY_V2_INET_LEN;
		break;
	case PROXY_V2_AF_INET6:
		need = PROXY_V2_INET6_LEN;
		break;
	case PROXY_V2_AF_UNIX:
		need = PROXY_V2_UNIX_LEN;
		break;
	default:
		return PROXY_MALFORMED;
	}
	if ((fam & 0x0f) > PROXY_V2_T_DGRAM)
		return PROXY_MALFORMED;
	if (body < need)
		return PROXY_MALFORMED;
	if (len < PROXY_V2_HDR + body)
		return PROXY_INCOMPLETE;

	const uint8_t *a = p + PROXY_V2_HDR;

	/* TLVs (§2.2.7) after the addresses: each must end inside the header. */
	for (size_t off = need; off < body;) {
		if (body - off < PROXY_V2_TLV_HDR)
			return PROXY_MALFORMED;
		size_t tl = (size_t)a[off + 1] << 8 | a[off + 2];

		if (body - off - PROXY_V2_TLV_HDR < tl)
			return PROXY_MALFORMED;
		off += PROXY_V2_TLV_HDR + tl;
	}
	memset(out, 0, sizeof(*out));
	out->version = 2;
	/* §2.2: LOCAL is the proxy's own connection (a health check): its addresses, if any,
	 * are to be ignored. So are UNSPEC and UNIX sources: no client address. */
	if ((ver_cmd & 0x0f) == PROXY_V2_LOCAL || (fam >> 4) == PROXY_V2_AF_UNSPEC ||
		(fam >> 4) == PROXY_V2_AF_UNIX)
		return (int)(PROXY_V2_HDR + body);
	if ((fam >> 4) == PROXY_V2_AF_INET) {
		out->family = 4;
		memcpy(&out->src4, a, 4);
		memcpy(&out->dst4, a + 4, 4);
		out->sport = (uint16_t)(a[8] << 8 | a[9]);
		out->dport = (uint16_t)(a[10] << 8 | a[11]);
	} else {
		out->family = 6;
		memcpy(out->src6, a, 16);
		memcpy(out->dst6, a + 16, 16);
		out->sport = (uint16_t)(a[32] << 8 | a[33]);
		out->dport = (uint16_t)(a[34] << 8 | a[35]);
	}
	return (int)(PROXY_V2_HDR + body);
}

/*
 * An IPv4-mapped IPv6 source (::ffff:a.b.c.d: what a dual-stack edge listening on an IPv6
 * socket says of its IPv4 clients) is that IPv4 client: family 4, so that it meets the IPv4
 * rules and has its own per-IP bucket rather than sharing the /64 of every mapped address.
 */
static int
proxy_unmap(int rc, struct proxy_info *out)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (rc > 0 && out->family == 6 && memcmp(out->src6, mapped, sizeof(mapped)) == 0) {
		out->family = 4;
		memcpy(&out->src4, out->src6 + 12, 4);
		out->dst4 = 0;
		if (memcmp(out->dst6, mapped, sizeof(mapped)) == 0)
			memcpy(&out->dst4, out->dst6 + 12, 4);
	}
	return rc;
}

int
proxy_header_parse(const uint8_t *p, size_t len, struct proxy_info *out)
{
	if (len == 0)
		return PROXY_INCOMPLETE;
	if (p[0] == 'P') {
		if (!proxy_prefix_of(p, len, PROXY_V1_SIG, PROXY_V1_SIG_LEN))
			return PROXY_NONE;
		if (len < PROXY_V1_SIG_LEN)
			return PROXY_INCOMPLETE;
		return proxy_unmap(proxy_v1(p, len, out), out);
	}
	if (p[0] == '\r') {
		if (!proxy_prefix_of(p, len, PROXY_V2_SIG, PROXY_V2_SIG_LEN))
			return PROXY_NONE;
		if (len < PROXY_V2_SIG_LEN)
			return PROXY_INCOMPLETE;
		return proxy_unmap(proxy_v2(p, len, out), out);
	}
	return PROXY_NONE;
}
