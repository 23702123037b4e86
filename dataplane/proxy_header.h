/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PROXY_HEADER_H
#define FG_DP_PROXY_HEADER_H
/*
 * The PROXY protocol header (HAProxy's "The PROXY protocol", versions 1 and 2) that an L4 edge
 * (HAProxy send-proxy / send-proxy-v2, cloud balancers) sends at the very start of a TCP
 * connection to say whose connection it relays. A pure parser: no state, no allocation, no
 * DPDK, never reads past the bytes it is given; fuzzed (tests/fuzz/fuzz_proxy_header.c).
 *
 * Who calls it: the stateless TCP path (dataplane/pipeline/tcp.h) when a trusted edge's first
 * data segment carries the PROXY header and the HTTP request together; the kept-connection
 * table (issue 17 item 2) when the header comes alone in the first segment, as HAProxy sends
 * it, and stores the address for every request of that connection.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* What proxy_header_parse() returns besides a header length. */
#define PROXY_NONE	 0    /* not a PROXY header: the bytes start otherwise */
#define PROXY_INCOMPLETE (-1) /* a PROXY header so far, but not all of it is here */
#define PROXY_MALFORMED	 (-2) /* a PROXY signature followed by what the spec does not allow */

#define PROXY_V1_MAX	 107 /* the longest v1 line, CRLF included (spec §2.1) */
#define PROXY_V2_HDR	 16  /* the fixed part of a v2 header: signature, command, family, length */
#define PROXY_V2_SIG	 "\r\n\r\n\0\r\nQUIT\n"
#define PROXY_V2_SIG_LEN 12

/* The connection a header describes. */
struct proxy_info {
	uint8_t version; /* 1 or 2 */
	/* 4 or 6: the source (the client) is below; 0: no address (v2 LOCAL, as for the edge's
	 * own health checks; UNSPEC or UNIX families; v1 UNKNOWN): the connection is the edge's. */
	uint8_t family;
	uint32_t src4, dst4;	    /* network byte order, family 4 */
	uint8_t src6[16], dst6[16]; /* family 6 */
	uint16_t sport, dport;	    /* host byte order */
};

/*
 * Parses the PROXY header at p[0..len). Returns its length in bytes (> 0; the payload after it
 * is the relayed stream) with *out filled; PROXY_NONE when p does not start with "PROXY " or the
 * v2 signature (and cannot be their beginning either: fewer bytes that match so far give
 * PROXY_INCOMPLETE); PROXY_INCOMPLETE when more bytes are needed; PROXY_MALFORMED when the
 * header breaks the spec: v1 with other than single spaces, a protocol other than TCP4, TCP6
 * or UNKNOWN, an address not of its protocol, a port not 0..65535 in decimal without leading
 * zeros, no CRLF within 107 bytes; v2 with a version other than 2, a command other than LOCAL
 * or PROXY, an unknown family or transport, an address block shorter than its family needs, or
 * TLVs that overrun the header. *out is unspecified unless a length is returned. An
 * IPv4-mapped IPv6 source (::ffff:a.b.c.d, v1 TCP6 or v2 over IPv6) is given as family 4, src4
 * a.b.c.d (dst4 the destination when it is mapped too, else 0).
 */
int proxy_header_parse(const uint8_t *p, size_t len, struct proxy_info *out);

/*
 * Whether p[0..len) may start a PROXY header: a cheap test of the first bytes for the
 * per-packet path (an HTTP request never starts with "PROX" or "\r\n\r\n"), after which
 * proxy_header_parse() decides.
 */
static inline bool
proxy_header_maybe(const uint8_t *p, size_t len)
{
	uint32_t w;

	if (len < 4)
		return false;
	memcpy(&w, p, 4);
	return memcmp(&w, "PROX", 4) == 0 || memcmp(&w, "\r\n\r\n", 4) == 0;
}

#endif
