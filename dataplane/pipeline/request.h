/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_REQUEST_H
#define FG_DP_PIPELINE_REQUEST_H
/*
 * The first half of answering an HTTP request: parse the payload of one TCP segment
 * (http_parse_request()), answer at once what is malformed, and read, without verifying
 * them, the users a POST's tokens claim so that their buckets can be prefetched before the
 * request is routed (routes.h) a frame later.
 *
 * Private to the pipeline: only dataplane/pipeline.c includes it, directly or through
 * another header of dataplane/pipeline/ (tests and benchmarks aside).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "dataplane/edge.h"
#include "dataplane/http_parser.h"
#include "dataplane/http_response.h"
#include "dataplane/ratelimit.h"
#include "dataplane/result_table.h"
#include "dataplane/worker.h"

#include <rte_byteorder.h>
#include <rte_common.h>

/*
 * The users a request's tokens claim, read (not verified) while it is parsed (req_parse()):
 * the purchase token's or receipt's (X-Flash-Token, "p1.<event>.<user>.") and the session's
 * (Authorization: Bearer "s1.<user>."). 0 when there is none.
 */
struct req_claims {
	uint64_t purchase, session;
	uint64_t device; /* the device table's key of X-Device-Id (rl_key_bytes()); 0: none */
	struct http_str bearer; /* the session token (req_bearer()); empty when there is none */
	uint64_t purchase_rt; /* result_table_user_hash() of purchase, when there is a bridge */
};

/* What the routes need from the request, taken before the answer overwrites it. */
struct req_view {
	const struct http_request *r;
	const struct edge_client *client; /* whom rules and per-IP limits see (req_client()) */
	bool cors;           /* the Origin is the configured one: add CORS headers */
	bool head;
	struct req_claims claims;
};

/* The value of "Authorization: Bearer <token>", or a zero-length string. */
static inline struct http_str
req_bearer(const struct http_request *r)
{
	struct http_str t = { NULL, 0 };

	/* RFC 6750 §2.1: the scheme is case-insensitive, one space, then the token. */
	if (r->authorization.len > 7 && strncasecmp(r->authorization.p, "Bearer ", 7) == 0) {
		t.p = r->authorization.p + 7;
		t.len = (uint16_t)(r->authorization.len - 7);
	}
	return t;
}

/* Bit 7 of each byte of p[0..8) that is '.', the others 0 (exact: no borrow between bytes). */
static inline uint64_t
req_dots8(const char *p)
{
	const uint64_t k = UINT64_C(0x7f7f7f7f7f7f7f7f);
	uint64_t x;

	memcpy(&x, p, sizeof(x));
	x = rte_le_to_cpu_64(x) ^ UINT64_C(0x2e2e2e2e2e2e2e2e);
	return ~(((x & k) + k) | x | k);
}

/*
 * The user id a token claims in its field-th dot-separated field (1 for "s1.<user>.",
 * 2 for "p1.<event>.<user>."), not verified: only for looking at that user's bucket
 * before paying for the MAC. 0 when the text has no such number. The field's dots are
 * found in the token's first 8 bytes at once when they are there (a token is longer, and
 * "p1.<event>." short), else byte by byte; the same result either way.
 */
static inline uint64_t
req_claimed_user(const char *p, size_t len, unsigned field)
{
	size_t i = 0;
	uint64_t v = 0;
	uint64_t dots = len >= 8 ? req_dots8(p) : 0;

	for (unsigned f = 1; f < field && dots != 0; f++)
		dots &= dots - 1;
	if (likely(dots != 0)) {
		i = (size_t)__builtin_ctzll(dots) / 8 + 1;
	} else {
		for (unsigned f = 0; f < field; f++) {
			while (i < len && p[i] != '.')
				i++;
			i++;
		}
	}
	unsigned d = 0;

	if (likely(i + 8 <= len)) {
		/* The digits among the next 8 bytes at once: a byte is one when its high nibble
		 * is 3 and its low one at most 9; those before the first other byte are added
		 * up by three multiplications (pairs, fours, eight). */
		uint64_t x;

		memcpy(&x, p + i, sizeof(x));
		x = rte_le_to_cpu_64(x);

		uint64_t other =
			((x & UINT64_C(0xf0f0f0f0f0f0f0f0)) ^ UINT64_C(0x3030303030303030)) |
			(((x & UINT64_C(0x0f0f0f0f0f0f0f0f)) + UINT64_C(0x0606060606060606)) &
				UINT64_C(0x1010101010101010));

		d = other == 0 ? 8 : (unsigned)__builtin_ctzll(other) / 8;
		if (d == 0)
			return 0;
		x = (x & UINT64_C(0x0f0f0f0f0f0f0f0f)) << (8 * (8 - d));
		x = (x * 10 + (x >> 8)) & UINT64_C(0x00ff00ff00ff00ff);
		x = (x * 100 + (x >> 16)) & UINT64_C(0x0000ffff0000ffff);
		v = (x * 10000 + (x >> 32)) & UINT64_C(0xffffffff);
		if (d < 8)
			return v;
		i += 8;
	}
	for (; i < len && d < 19 && p[i] >= '0' && p[i] <= '9'; i++, d++)
		v = v * 10 + (uint64_t)(p[i] - '0');
	return v;
}

/*
 * The CORS lines of an answer to the configured origin: Access-Control-Allow-Origin, Vary, and
 * Access-Control-Expose-Headers so that a page can read Retry-After (the Fetch standard
 * exposes only the CORS-safelisted response headers otherwise).
 */
#define REQ_CORS_EXPOSE "Access-Control-Expose-Headers: Retry-After\r\n"
#define REQ_CORS_LINES_MAX                                                                         \
	(sizeof("Access-Control-Allow-Origin: \r\nVary: Origin\r\n") - 1 +                         \
		sizeof(((struct worker *)0)->cors_origin) - 1 + sizeof(REQ_CORS_EXPOSE) - 1)

/*
 * Writes the CORS lines of an answer to the configured origin (admission.cors_origin) at dst,
 * which has room for REQ_CORS_LINES_MAX bytes; "*" gets no Vary. Returns the length, 0 when
 * no CORS is configured. The configured value is written, never the request's.
 */
static inline size_t
req_cors_lines(const struct worker *w, char *dst)
{
#define REQ_PUT(lit) (memcpy(p, (lit), sizeof(lit) - 1), p += sizeof(lit) - 1)
	char *p = dst;

	if (w->cors_len == 0)
		return 0;
	if (w->cors_any) {
		REQ_PUT("Access-Control-Allow-Origin: *\r\n" REQ_CORS_EXPOSE);
		return (size_t)(p - dst);
	}
	REQ_PUT("Access-Control-Allow-Origin: ");
	memcpy(p, w->cors_origin, w->cors_len);
	p += w->cors_len;
	REQ_PUT("\r\nVary: Origin\r\n" REQ_CORS_EXPOSE);
	return (size_t)(p - dst);
#undef REQ_PUT
}

/*
 * A request the parser refused (400, 414, 431, 501, 505): {"error":text} with the CORS lines
 * whatever the request's Origin, which may not have been read (docs/api.md: a page can read
 * every refusal). Counted by status. Out of line: browsers send well-formed requests.
 */
static __rte_noinline uint16_t
req_refuse_slow(struct worker *w, char *out, uint16_t cap, unsigned status, const char *text)
{
	char cors[REQ_CORS_LINES_MAX];

	w->ctr.http[counters_http_slot(status)]++;
	return http_resp_error(out, cap, &w->resp, status, text, cors, req_cors_lines(w, cors),
		false);
}

/* http_authority_is()'s port check: a port we listen on. */
static inline bool
req_port_ours(const void *w, uint16_t port)
{
	return worker_listens(w, port);
}

/*
 * RFC 9112 §3.2.2: an absolute-form request is ours when its authority names us (our address
 * or dataplane.host, a port we listen on); we are no proxy, so any other is refused with 400
 * and counted (reject other_host). Out of line: browsers send origin-form.
 */
static __rte_noinline bool
req_other_host_slow(struct worker *w, const struct http_request *r, char *out, uint16_t cap,
	uint16_t *answer_len)
{
	if (http_authority_is(&r->authority, w->names->name, w->names->n, req_port_ours, w))
		return false;
	w->ctr.reject[DP_REJ_OTHER_HOST]++;
	*answer_len = req_refuse_slow(w, out, cap, 400,
		"absolute-form request-target names another host");
	return true;
}

/* A 400 for a trusted edge's request whose client address cannot be known; counted. With the
 * CORS lines, as the parser's refusals: a cross-origin page can read why (docs/api.md). */
static __rte_noinline bool
req_client_refuse(struct worker *w, const char *why, char *out, uint16_t cap, uint16_t *answer_len)
{
	w->ctr.client[DP_CLIENT_REFUSED]++;
	*answer_len = req_refuse_slow(w, out, cap, 400, why);
	return true;
}

/* Whether an address from X-Forwarded-For or Forwarded is itself a trusted edge's. */
static inline bool
req_addr_trusted(const struct worker *w, const struct http_addr *a)
{
	uint32_t v4;

	if (a->family == 6)
		return edge_trusted6(w->edge, a->a);
	if (a->family != 4)
		return false;
	memcpy(&v4, a->a, 4);
	return edge_trusted4(w->edge, v4);
}

/*
 * req_client()'s cases other than "an untrusted source without forwarding headers": a PROXY
 * header's address (proxied), forwarding headers from an untrusted source (ignored), and a
 * trusted edge's request (its X-Forwarded-For or Forwarded, walked from the right past the
 * trusted edges' own addresses; none: the edge itself, no client). Returns true when the
 * request was refused (400 written to out, *answer_len set).
 */
static __rte_noinline bool
req_client_slow(struct worker *w, uint32_t src_be, bool trusted, const struct edge_client *proxied,
	const struct http_request *r, struct edge_client *c, char *out, uint16_t cap,
	uint16_t *answer_len)
{
	bool xff = (r->seen & HTTP_SEEN_XFF) != 0, fwd = (r->seen & HTTP_SEEN_FORWARDED) != 0;
	struct http_addr a[HTTP_FWD_MAX];
	const char *why;
	int n, i;

	if (proxied != NULL || !trusted) {
		/* An L4 edge relays the client's bytes untouched, and anyone else's headers say
		 * what the sender likes: either way they are not believed. */
		if (xff || fwd)
			w->ctr.client[DP_CLIENT_IGNORED]++;
		if (proxied != NULL) {
			*c = *proxied;
		} else {
			c->family = 4;
			c->src = DP_CLIENT_PACKET;
			c->ip4 = src_be;
		}
		w->ctr.client[c->src]++;
		return false;
	}
	if (!xff && !fwd) {
		/* The edge's own request (a health check): no client to limit. */
		c->family = 0;
		c->src = DP_CLIENT_EDGE;
		w->ctr.client[DP_CLIENT_EDGE]++;
		return false;
	}
	/* Only one of them is the edge's: with both, one came from the client, and which is
	 * not known here. */
	if (xff && fwd)
		return req_client_refuse(w, "both X-Forwarded-For and Forwarded: an edge sends one",
			out, cap, answer_len);
	n = http_forwarded_for(r, fwd, a, HTTP_FWD_MAX, &why);
	if (n < 0)
		return req_client_refuse(w, why, out, cap, answer_len);
	/* The rightmost address that is not a trusted edge's: those left of it were written by
	 * whoever sent the request to the first edge, and prove nothing. */
	for (i = 0; i < n && req_addr_trusted(w, &a[i]); i++)
		;
	if (i == n) {
		/* Edges only (an edge's own request through another edge). */
		c->family = 0;
		c->src = DP_CLIENT_EDGE;
		w->ctr.client[DP_CLIENT_EDGE]++;
		return false;
	}
	if (a[i].family == 0)
		return req_client_refuse(w, "Forwarded names no client address (for=unknown)", out,
			cap, answer_len);
	c->family = a[i].family;
	c->src = fwd ? DP_CLIENT_FORWARDED : DP_CLIENT_XFF;
	if (c->family == 4)
		memcpy(&c->ip4, a[i].a, 4);
	else
		memcpy(c->ip6, a[i].a, 16);
	w->ctr.client[c->src]++;
	return false;
}

/*
 * The client's address of a parsed request from src_be (the packet's source, network byte
 * order) into *c: the packet's source unless the source is a trusted edge (trusted: the
 * caller's edge_trusted4(w->edge, src_be)) or a PROXY header named one (proxied, NULL when
 * there was none). Returns true when the request was refused instead (a trusted edge's
 * malformed X-Forwarded-For or Forwarded: 400 at out). The stateless path's case, no trusted
 * edge and no forwarding header, costs a compare or two.
 */
static inline bool
req_client(struct worker *w, uint32_t src_be, bool trusted, const struct edge_client *proxied,
	const struct http_request *r, struct edge_client *c, char *out, uint16_t cap,
	uint16_t *answer_len)
{
	if (likely(!trusted && proxied == NULL &&
		    !(r->seen & (HTTP_SEEN_XFF | HTTP_SEEN_FORWARDED)))) {
		c->family = 4;
		c->src = DP_CLIENT_PACKET;
		c->ip4 = src_be;
		w->ctr.client[DP_CLIENT_PACKET]++;
		return false;
	}
	return req_client_slow(w, src_be, trusted, proxied, r, c, out, cap, answer_len);
}

/*
 * The per-IP limit table's key of a client: an IPv4 address as itself (below 2^32); an IPv6
 * one by its /64 (one subscriber's usual allocation, so that hopping through its addresses
 * does not escape the limit), a keyed hash with the top bit set so that it meets no IPv4 key.
 */
static inline uint64_t
req_client_key(const struct worker *w, const struct edge_client *c)
{
	if (likely(c->family == 4))
		return c->ip4;
	return rl_key_bytes(w->rl_ip, c->ip6, 8) | UINT64_C(1) << 63;
}

/*
 * The first half of answering the HTTP request in req[0..req_len), the payload of one TCP
 * segment from src_be (trusted: whether that is a trusted edge, edge_trusted4(), as the caller
 * found): parses it into *r, its client's address into *client (req_client(); proxied: a
 * PROXY header's, or NULL), and a POST's claimed users into *claims. Returns true
 * when the request is to be routed (route_request()); false when it was answered already,
 * *answer_len bytes written to out[0..cap) (malformed, incomplete, an absolute form for another
 * host, a trusted edge's malformed forwarding header; out may be req's memory; 0 only if even
 * that answer did not fit). Also prefetches the bucket of the user the request claims:
 * pipeline_burst() routes a request after the next frame's first half, so a crowd's buckets
 * load meanwhile.
 */
static inline bool
req_parse(struct worker *w, uint32_t src_be, bool trusted, const struct edge_client *proxied,
	const char *req, uint16_t req_len, char *out, uint16_t cap, struct http_request *r,
	struct req_claims *claims, struct edge_client *client, uint16_t *answer_len)
{
	int rc;

	w->ctr.requests++;
	rc = http_parse_request(req, req_len, r);
	if (unlikely(rc != 0)) {
		/* Stateless TCP: the whole request must come in one segment. */
		if (rc == HTTP_INCOMPLETE)
			*answer_len = req_refuse_slow(w, out, cap, 431,
				"request must fit in one TCP segment");
		else
			*answer_len = req_refuse_slow(w, out, cap, (unsigned)rc, r->error);
		return false;
	}
	if (unlikely(r->authority.len != 0) && req_other_host_slow(w, r, out, cap, answer_len))
		return false;
	if (req_client(w, src_be, trusted, proxied, r, client, out, cap, answer_len))
		return false;
	/* Behind an edge the packet's source is the edge's: the client's bucket now. */
	if (unlikely(client->src != DP_CLIENT_PACKET) && client->family != 0 && w->rl_ip != NULL)
		rl_prefetch(w->rl_ip, req_client_key(w, client));
	/* Only the POSTs (token, reserve) read the claimed user's bucket, and only they need
	 * the claims. */
	claims->purchase = claims->session = claims->device = 0;
	claims->bearer = (struct http_str){NULL, 0};
	if (r->method == HTTP_M_POST) {
		if (r->flash_token.len != 0)
			claims->purchase =
				req_claimed_user(r->flash_token.p, r->flash_token.len, 2);
		if (r->authorization.len != 0) {
			claims->bearer = req_bearer(r);
			claims->session = req_claimed_user(claims->bearer.p, claims->bearer.len, 1);
		}
		/* A reserve asks whether its user is a known buyer: the summary of the user's home
		 * bucket in the result table on the way too (for a new buyer, all it reads). */
		if (claims->purchase != 0 && w->bridge != NULL) {
			const struct result_table *rt = w->bridge->results;

			claims->purchase_rt = result_table_user_hash(rt, claims->purchase);
			result_table_prefetch_summary(rt, claims->purchase_rt);
		}
		if (w->rl_user != NULL) {
			if (claims->purchase != 0)
				rl_prefetch(w->rl_user, claims->purchase);
			else if (claims->session != 0)
				rl_prefetch(w->rl_user, claims->session);
		}
		/* A reserve's device: its key now (route_reserve() needs it) and its bucket on
		 * the way, as the user's; not once every sale is sold out or closed, when the
		 * reserves that still come are all answered 410 before any device is looked at. */
		if (claims->purchase != 0 && r->device_id.len != 0 && w->rl_device != NULL &&
			worker_events(w)->selling != 0) {
			claims->device =
				rl_key_bytes(w->rl_device, r->device_id.p, r->device_id.len);
			rl_prefetch(w->rl_device, claims->device);
		}
	}
	return true;
}

#endif
