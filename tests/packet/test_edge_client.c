/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet tests of the client's address behind trusted edges (docs/edge.md): X-Forwarded-For,
 * Forwarded and PROXY headers through pipeline_burst() in real frames, judged by what a
 * client sees (the risk rule that blocks 198.18.9.0/24, the per-IP limit of 1 request a
 * second, the reservation's client address) and by the counters by address source.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/dp_harness.h"
#include "tests/tap.h"

#define EDGE_IP	    RTE_IPV4(198, 18, 0, 50) /* a trusted edge */
#define EDGE2_IP    RTE_IPV4(198, 18, 0, 51) /* another, in the same list */
#define STRANGER_IP RTE_IPV4(198, 18, 0, 1)  /* no edge */
#define BLOCKED_NET "ip 198.18.9.0/24"

static struct dp_harness H;
static struct edge_trust trust;
static uint16_t next_port = 30000;
static struct dp_event_cfg events[1];
static struct dp_limits limits;
static const char *const rules[] = {BLOCKED_NET, NULL};

/* Sends payload[0..len) as the first data segment of a new connection from src. */
static void
send_raw(uint32_t src, const void *payload, size_t len, struct dph_answer *a)
{
	dph_send(&H, src, next_port++, payload, len, a);
}

/* A result poll with a token that does not verify (403 after the IP checks), from src with the
 * extra header lines hdrs ("" for none). */
static void
poll_from(uint32_t src, const char *hdrs, struct dph_answer *a)
{
	char req[1024];
	int n = snprintf(req, sizeof(req),
		"GET /api/v1/events/1/result HTTP/1.1\r\nHost: s\r\n%sX-Flash-Token: x\r\n\r\n",
		hdrs);

	send_raw(src, req, (size_t)n, a);
}

/* The same behind a PROXY header of hlen bytes. */
static void
poll_proxied(uint32_t src, const void *hdr, size_t hlen, struct dph_answer *a)
{
	char buf[1024];
	static const char req[] =
		"GET /api/v1/events/1/result HTTP/1.1\r\nHost: s\r\nX-Flash-Token: x\r\n\r\n";

	memcpy(buf, hdr, hlen);
	memcpy(buf + hlen, req, sizeof(req) - 1);
	send_raw(src, buf, hlen + sizeof(req) - 1, a);
}

static uint64_t
ctr_client(enum dp_client_source s)
{
	return H.w->ctr.client[s];
}

static uint64_t
ctr_rej(enum dp_reject_reason r)
{
	return H.w->ctr.reject[r];
}

/* Expects status from what the call sends and counter c to grow by one. */
#define EXPECT(a, want, counter, what, ...)                                                \
	do {                                                                               \
		uint64_t before_ = (counter);                                              \
		__VA_ARGS__;                                                               \
		tap_ok((a).status == (want) && (counter)-before_ == 1,                     \
			what " (status %u, want %u; %s grew by %llu)", (a).status, (want), \
			#counter, (unsigned long long)((counter)-before_));                \
	} while (0)

/*
 * Expects the request past the client's risk rule and per-IP limit, to its token's check
 * (403 token_invalid: a rule that blocked the client would say blocked_ip, a limit 429), and
 * counter (where the address came from) to grow by one.
 */
#define EXPECT_PASSES(a, counter, what, ...)                                                     \
	do {                                                                                     \
		uint64_t before_ = (counter), tok_ = ctr_rej(DP_REJ_TOKEN_INVALID);              \
		__VA_ARGS__;                                                                     \
		tap_ok((a).status == 403 && (counter)-before_ == 1 &&                            \
				ctr_rej(DP_REJ_TOKEN_INVALID) - tok_ == 1,                       \
			what " (status %u; %s grew by %llu; token_invalid by %llu)", (a).status, \
			#counter, (unsigned long long)((counter)-before_),                       \
			(unsigned long long)(ctr_rej(DP_REJ_TOKEN_INVALID) - tok_));             \
	} while (0)

static void
publish(void)
{
	dph_publish(&H, events, NULL, 1, rules, &limits);
}

/* X-Forwarded-For: the rightmost address that is not an edge's is the client. */
static void
test_xff(void)
{
	struct dph_answer a;

	EXPECT_PASSES(a, ctr_client(DP_CLIENT_XFF), "XFF from the edge: a client's request",
		poll_from(EDGE_IP, "X-Forwarded-For: 198.18.5.1\r\n", &a));
	EXPECT(a, 429, ctr_rej(DP_REJ_LIMIT_IP), "  the same client again: over its limit, 429",
		poll_from(EDGE_IP, "X-Forwarded-For: 198.18.5.1\r\n", &a));
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_XFF),
		"  another client behind the same edge is not limited",
		poll_from(EDGE_IP, "X-Forwarded-For: 198.18.5.2\r\n", &a));
	EXPECT(a, 429, ctr_rej(DP_REJ_LIMIT_IP),
		"  the first client through another trusted edge: still limited",
		poll_from(EDGE2_IP, "X-Forwarded-For: 198.18.5.1\r\n", &a));
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP), "a client in a blocked network: 403 blocked",
		poll_from(EDGE_IP, "X-Forwarded-For: 198.18.9.7\r\n", &a));
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP),
		"the rightmost address that is not an edge's decides (blocked one, then edges)",
		poll_from(EDGE_IP, "X-Forwarded-For: 198.18.5.3, 198.18.9.8, 198.18.0.51\r\n", &a));
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_XFF),
		"  what a client wrote left of it is not believed (a blocked address there)",
		poll_from(EDGE_IP, "X-Forwarded-For: 198.18.9.9 , 198.18.5.4\r\n", &a));
	tap_eq_int(ctr_rej(DP_REJ_BLOCKED_IP), 2, "  (only the two blocked clients were blocked)");
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP),
		"several X-Forwarded-For lines: the last line's last address",
		poll_from(EDGE_IP,
			"X-Forwarded-For: 198.18.5.5\r\nX-Forwarded-For: 198.18.9.10\r\n", &a));
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_XFF), "  and not the first line's",
		poll_from(EDGE_IP,
			"X-Forwarded-For: 198.18.9.11\r\nx-forwarded-for: 198.18.5.6\r\n", &a));
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP), "IPv4-mapped IPv6 is the IPv4 client",
		poll_from(EDGE_IP, "X-Forwarded-For: ::ffff:198.18.9.12\r\n", &a));
}

/* The edge's own requests are no client's; untrusted sources' headers are ignored. */
static void
test_edge_and_strangers(void)
{
	struct dph_answer a;

	for (int i = 0; i < 3; i++)
		EXPECT_PASSES(a, ctr_client(DP_CLIENT_EDGE),
			"the edge's own request (no X-Forwarded-For) is never limited",
			poll_from(EDGE_IP, "", &a));
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_EDGE), "an X-Forwarded-For of edges only: the edge's",
		poll_from(EDGE_IP, "X-Forwarded-For: 198.18.0.51\r\n", &a));
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_IGNORED),
		"X-Forwarded-For from a stranger: ignored and counted",
		poll_from(STRANGER_IP, "X-Forwarded-For: 198.18.5.7\r\n", &a));
	EXPECT(a, 429, ctr_rej(DP_REJ_LIMIT_IP), "  the stranger is its packets' source: limited",
		poll_from(STRANGER_IP, "X-Forwarded-For: 198.18.5.8\r\n", &a));
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP),
		"  a blocked source cannot escape with X-Forwarded-For",
		poll_from(RTE_IPV4(198, 18, 9, 1), "X-Forwarded-For: 198.18.5.9\r\n", &a));
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP), "  nor with Forwarded",
		poll_from(RTE_IPV4(198, 18, 9, 1), "Forwarded: for=198.18.5.9\r\n", &a));
}

/* Forwarded (RFC 7239), IPv6 clients. */
static void
test_forwarded(void)
{
	struct dph_answer a;

	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP), "Forwarded for= from the edge: blocked client",
		poll_from(EDGE_IP, "Forwarded: for=198.18.9.20;proto=https;by=198.18.0.2\r\n", &a));
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_FORWARDED), "  an unblocked one, quoted with a port",
		poll_from(EDGE_IP, "Forwarded: For=\"198.18.5.20:4711\"\r\n", &a));
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_FORWARDED), "an IPv6 client, quoted in brackets",
		poll_from(EDGE_IP, "Forwarded: for=\"[2001:db8:cafe::17]:4711\"\r\n", &a));
	EXPECT(a, 429, ctr_rej(DP_REJ_LIMIT_IP), "  another address of its /64: the same limit",
		poll_from(EDGE_IP, "X-Forwarded-For: 2001:db8:cafe::99\r\n", &a));
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_XFF), "  another /64 is another client",
		poll_from(EDGE_IP, "X-Forwarded-For: 2001:db8:cafe:1::17\r\n", &a));
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_FORWARDED),
		"elements over two lines and an edge's: the rightmost not an edge's (the blocked "
		"198.18.9.21 on the first line not believed)",
		poll_from(EDGE_IP,
			"Forwarded: for=198.18.9.21\r\nForwarded: for=198.18.5.21, "
			"for=\"198.18.0.51\";proto=http\r\n",
			&a));
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP),
		"  the blocked address on the last line: 403 blocked (not the first line's client)",
		poll_from(EDGE_IP,
			"Forwarded: for=198.18.5.22\r\nForwarded: for=198.18.9.22;proto=http\r\n",
			&a));
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP),
		"an IPv4-mapped client in brackets (for=\"[::ffff:198.18.9.23]\"): the IPv4 "
		"client, blocked by 198.18.9.0/24",
		poll_from(EDGE_IP, "Forwarded: for=\"[::ffff:198.18.9.23]\"\r\n", &a));
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_FORWARDED),
		"  and [::ffff:198.18.5.23], with a port, not blocked",
		poll_from(EDGE_IP, "Forwarded: for=\"[::ffff:198.18.5.23]:443\"\r\n", &a));
}

/* A trusted edge's malformed header: 400, counted, the edge not taken for the client. */
static void
test_refused(void)
{
	static const char *const bad[] = {
		"X-Forwarded-For: 198.18.5.300\r\n",
		"X-Forwarded-For: 198.18.5.1,,198.18.5.2\r\n",
		"X-Forwarded-For: \r\n",
		"X-Forwarded-For: 198.18.5.1:80\r\n",
		"X-Forwarded-For: [2001:db8::1]\r\n",
		"X-Forwarded-For: unknown\r\n",
		"Forwarded: for=2001:db8::1\r\n",
		"Forwarded: for=198.18.5.1;for=198.18.5.2\r\n",
		"Forwarded: for=\"198.18.5.1\r\n",
		"Forwarded: for=unknown\r\n",
		"Forwarded: proto=https\r\n",
		"Forwarded: for=198.18.5.1 proto=https\r\n",
		"X-Forwarded-For: 198.18.5.1\r\nForwarded: for=198.18.5.1\r\n",
	};
	struct dph_answer a;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t ref = ctr_client(DP_CLIENT_REFUSED), xff = ctr_client(DP_CLIENT_XFF);

		poll_from(EDGE_IP, bad[i], &a);
		tap_ok(a.status == 400 && ctr_client(DP_CLIENT_REFUSED) == ref + 1 &&
				ctr_client(DP_CLIENT_XFF) == xff,
			"malformed from the edge: 400 and counted refused: %.*s (%u)",
			(int)strcspn(bad[i], "\r"), bad[i], a.status);
	}
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_IGNORED), "  the same from a stranger: just ignored",
		poll_from(RTE_IPV4(198, 18, 0, 3), bad[0], &a));
}

/* PROXY v2 and v1 before the request in the same segment. */
static void
test_proxy(void)
{
	struct dph_answer a;
	uint8_t v2[16 + 12] = "\r\n\r\n\0\r\nQUIT\n";
	const uint8_t inet[12] = {198, 18, 9, 30, 198, 18, 0, 2, 0x12, 0x34, 0, 80};

	v2[12] = 0x21;
	v2[13] = 0x11;
	v2[14] = 0;
	v2[15] = 12;
	memcpy(v2 + 16, inet, 12);
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP),
		"PROXY v2 from the edge: its source is the client",
		poll_proxied(EDGE_IP, v2, sizeof(v2), &a));
	v2[16 + 2] = 5; /* 198.18.5.30 */
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_PROXY),
		"  an unblocked one goes through, counted proxy",
		poll_proxied(EDGE_IP, v2, sizeof(v2), &a));
	EXPECT(a, 429, ctr_rej(DP_REJ_LIMIT_IP), "  and is limited as itself",
		poll_proxied(EDGE_IP, v2, sizeof(v2), &a));

	static const char v1[] = "PROXY TCP4 198.18.9.31 198.18.0.2 40000 80\r\n";

	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP),
		"PROXY v1 from the edge: its source is the client",
		poll_proxied(EDGE_IP, v1, sizeof(v1) - 1, &a));
	static const char v1u[] = "PROXY UNKNOWN\r\n";

	for (int i = 0; i < 2; i++)
		EXPECT_PASSES(a, ctr_client(DP_CLIENT_EDGE),
			"PROXY UNKNOWN: the edge's own, not limited",
			poll_proxied(EDGE_IP, v1u, sizeof(v1u) - 1, &a));
	v2[12] = 0x20; /* LOCAL */
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_EDGE), "PROXY v2 LOCAL: the edge's own",
		poll_proxied(EDGE_IP, v2, sizeof(v2), &a));
	v2[12] = 0x21;

	uint64_t rst = H.w->ctr.answers[DP_ANS_RST];

	EXPECT(a, 0, ctr_client(DP_CLIENT_PROXY_UNTRUSTED), "PROXY v2 from a stranger: refused",
		poll_proxied(STRANGER_IP, v2, sizeof(v2), &a));
	tap_ok(a.rst, "  with a reset");
	EXPECT(a, 0, ctr_client(DP_CLIENT_PROXY_UNTRUSTED), "PROXY v1 from a stranger: refused",
		poll_proxied(STRANGER_IP, v1, sizeof(v1) - 1, &a));
	v2[12] = 0x31; /* version 3 */
	EXPECT(a, 0, ctr_client(DP_CLIENT_PROXY_MALFORMED), "a malformed PROXY v2 header: reset",
		poll_proxied(EDGE_IP, v2, sizeof(v2), &a));
	tap_ok(a.rst, "  with a reset");
	v2[12] = 0x21;
	static const char v1bad[] = "PROXY TCP4 198.18.5.1  198.18.0.2 40000 80\r\n";

	EXPECT(a, 0, ctr_client(DP_CLIENT_PROXY_MALFORMED), "a malformed PROXY v1 header: reset",
		poll_proxied(EDGE_IP, v1bad, sizeof(v1bad) - 1, &a));
	EXPECT(a, 0, ctr_client(DP_CLIENT_PROXY_ALONE),
		"a PROXY header alone (needs a kept connection): reset",
		send_raw(EDGE_IP, v2, sizeof(v2), &a));
	tap_eq_int(H.w->ctr.answers[DP_ANS_RST] - rst, 5, "  every one of them a reset");
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_IGNORED),
		"X-Forwarded-For after a PROXY header is the client's own: ignored",
		send_raw(EDGE_IP,
			"PROXY TCP4 198.18.5.32 198.18.0.2 40000 80\r\nGET /api/v1/events/1/result "
			"HTTP/1.1\r\nHost: s\r\nX-Forwarded-For: 198.18.9.32\r\nX-Flash-Token: "
			"x\r\n\r\n",
			sizeof("PROXY TCP4 198.18.5.32 198.18.0.2 40000 80\r\nGET "
			       "/api/v1/events/1/result "
			       "HTTP/1.1\r\nHost: s\r\nX-Forwarded-For: "
			       "198.18.9.32\r\nX-Flash-Token: "
			       "x\r\n\r\n") -
				1,
			&a));
}

/* The reservation carries the client's address, not the edge's. */
static void
test_reserve_carries_client(void)
{
	struct tok_keyring ring;
	char s[TOK_BUF_SIZE], req[1024], tok[TOK_BUF_SIZE], path[128];
	struct dph_answer a;
	struct wire_reserve res;
	const char *p, *e;

	tok_keyring_init(&ring);
	tok_keyring_set(
		&ring, DPH_AUTH_KID, (const uint8_t *)dph_auth_key, sizeof(dph_auth_key) - 1, true);
	tok_session_mint(&ring, 77, H.w->now_ms / 1000 + 600, s, sizeof(s));
	snprintf(req, sizeof(req),
		"POST /api/v1/events/1/token HTTP/1.1\r\nHost: s\r\nAuthorization: Bearer %s\r\n"
		"X-Forwarded-For: 198.18.5.40\r\nContent-Length: 0\r\n\r\n",
		s);
	send_raw(EDGE_IP, req, strlen(req), &a);
	p = strstr(a.body, "\"token\":\"");
	e = p ? strchr(p + 9, '"') : NULL;
	tap_ok(a.status == 200 && e != NULL, "a token through the edge: 200");
	if (e == NULL)
		return;
	snprintf(tok, sizeof(tok), "%.*s", (int)(e - p - 9), p + 9);
	p = strstr(a.body, "\"reserve_path\":\"");
	e = p ? strchr(p + 16, '"') : NULL;
	if (e == NULL)
		return;
	snprintf(path, sizeof(path), "%.*s", (int)(e - p - 16), p + 16);
	snprintf(req, sizeof(req),
		"POST %s HTTP/1.1\r\nHost: s\r\nX-Flash-Token: %s\r\nX-Forwarded-For: "
		"198.18.5.41\r\nContent-Length: 0\r\n\r\n",
		path, tok);
	send_raw(EDGE_IP, req, strlen(req), &a);
	tap_ok(a.status == 202 && rte_ring_sc_dequeue_elem(H.port.ring, &res, sizeof(res)) == 0 &&
			res.client_ipv4 == RTE_IPV4(198, 18, 5, 41),
		"a reserve through the edge: 202, the reservation names the client 198.18.5.41 "
		"(%u)",
		a.status);
}

/*
 * IPv6 address rules: IPv6 clients named by the edge (X-Forwarded-For, Forwarded, PROXY v2)
 * are blocked by the IPv6 networks and addresses, counted blocked_ip; IPv4 rules do not touch
 * them, except an IPv4-mapped client, which is that IPv4 client (its own bucket too).
 */
static void
test_ip6_rules(void)
{
	static const char *const rules6[] = {
		BLOCKED_NET, "ip 2001:db8:bad::/48", "ip 2001:db8:1::66", NULL};
	struct dph_answer a;
	uint8_t v2[16 + 36] = "\r\n\r\n\0\r\nQUIT\n";

	dph_publish(&H, events, NULL, 1, rules6, &limits);
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP),
		"IPv6: a client of 2001:db8:bad::/48 in X-Forwarded-For: 403 blocked",
		poll_from(EDGE_IP, "X-Forwarded-For: 2001:db8:bad:ffff::9\r\n", &a));
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP),
		"  the blocked address 2001:db8:1::66 in Forwarded: 403 blocked",
		poll_from(EDGE_IP, "Forwarded: for=\"[2001:db8:1::66]:443\"\r\n", &a));
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_XFF),
		"  its neighbour 2001:db8:1::67 is not blocked (its request goes on)",
		poll_from(EDGE_IP, "X-Forwarded-For: 2001:db8:1::67\r\n", &a));
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_XFF), "  nor is 2001:db8:bac::1, outside the /48",
		poll_from(EDGE_IP, "X-Forwarded-For: 2001:db8:bac::1\r\n", &a));
	/* PROXY v2, TCP over IPv6. */
	v2[12] = 0x21;
	v2[13] = 0x21;
	v2[14] = 0;
	v2[15] = 36;
	static const uint8_t bad6[16] = {0x20, 0x01, 0x0d, 0xb8, 0x0b, 0xad, [15] = 0x42};
	memcpy(v2 + 16, bad6, 16);
	memcpy(v2 + 32, bad6, 16);
	v2[48] = 0x9c;
	v2[50] = 0;
	v2[51] = 80;
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP),
		"  2001:db8:bad::42 in a PROXY v2 header: 403 blocked",
		poll_proxied(EDGE_IP, v2, sizeof(v2), &a));
	/* ::ffff:198.18.9.44 (a dual-stack edge's IPv4 client) is 198.18.9.44: blocked by
	 * 198.18.9.0/24; ::ffff:198.18.5.60 and .61 are two clients with a bucket each. */
	memset(v2 + 16, 0, 16);
	v2[26] = v2[27] = 0xff;
	v2[28] = 198;
	v2[29] = 18;
	v2[30] = 9;
	v2[31] = 44;
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP),
		"  ::ffff:198.18.9.44 in a PROXY v2 header meets the IPv4 rule 198.18.9.0/24",
		poll_proxied(EDGE_IP, v2, sizeof(v2), &a));
	v2[30] = 5;
	v2[31] = 60;
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_PROXY), "  ::ffff:198.18.5.60 is not blocked",
		poll_proxied(EDGE_IP, v2, sizeof(v2), &a));
	v2[31] = 61;
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_PROXY),
		"  ::ffff:198.18.5.61 has a bucket of its own (not 429 after .60's request)",
		poll_proxied(EDGE_IP, v2, sizeof(v2), &a));
	EXPECT(a, 403, ctr_rej(DP_REJ_BLOCKED_IP),
		"  an IPv4 client is still blocked by the IPv4 rule",
		poll_from(EDGE_IP, "X-Forwarded-For: 198.18.9.45\r\n", &a));
	publish();
}

/* Without trusted edges nobody's header is believed. */
static void
test_no_edges(void)
{
	struct dph_answer a;
	const struct edge_trust *t = H.w->edge;

	H.w->edge = NULL;
	EXPECT_PASSES(a, ctr_client(DP_CLIENT_IGNORED), "no trusted edge: X-Forwarded-For ignored",
		poll_from(EDGE_IP, "X-Forwarded-For: 198.18.5.50\r\n", &a));
	EXPECT(a, 0, ctr_client(DP_CLIENT_PROXY_UNTRUSTED), "  a PROXY header refused",
		poll_proxied(EDGE_IP, "PROXY UNKNOWN\r\n", 15, &a));
	H.w->edge = t;
}

int
main(int argc, char **argv)
{
	char err[256];

	(void)argc;
	dph_init(&H, argv[0]);
	unsigned in_use0 = rte_mempool_in_use_count(H.pool);
	dph_admission_init(&H, 16);
	uint64_t now = H.w->now_ms;

	if (edge_trust_parse(
		    "198.18.0.50, 198.18.0.51 2001:db8:e::/48", &trust, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	H.w->edge = &trust;
	events[0] = (struct dp_event_cfg){.id = 1,
		.name = "open",
		.starts_at_ms = now - 1000,
		.ends_at_ms = now + 3600000,
		.stock = 10};
	limits = (struct dp_limits){.ip = {1, 1},
		.user = {1000, 1000},
		.device = {1000, 1000},
		.event_forward = {0, 0}};
	publish();
	test_xff();
	test_edge_and_strangers();
	test_forwarded();
	test_refused();
	test_proxy();
	test_ip6_rules();
	limits.ip = (struct rl_params){0, 0};
	publish();
	test_reserve_carries_client();
	test_no_edges();
	tap_eq_int(rte_mempool_in_use_count(H.pool), in_use0, "no mbuf leaked");
	return tap_done();
}
