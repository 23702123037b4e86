/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loadgen client's requests (lg_parts.h): what each client sends, tokens and receipts
 * minted as the data plane mints them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/now.h"
#include "tools/loadgen/lg_parts.h"

/* Writes the request of flood connection c into c->req. Returns its length, or -1. */
static int
build_flood_request(struct lg_client *cl, struct lg_conn *c)
{
	const struct lg_opts *o = cl->o;
	char session[TOK_BUF_SIZE] = "";
	struct lg_flood_req x = {
		.event = o->event,
		.host = o->host,
		.session = session,
		.forged_session = cl->forged_session,
		.forged_purchase = cl->forged_purchase,
		.reserve_path = cl->reserve_path,
	};

	if (c->step == LG_STEP_FLOOD_ONE_IP &&
		tok_session_mint(&o->auth, c->user, (uint64_t)time(NULL) + 3600, session,
			sizeof(session)) < 0)
		return -1;
	return lg_flood_request(c->req, sizeof(c->req), c->step, &x);
}

/* GET /healthz for host into buf[0..cap). Returns its length (>= cap: it did not fit), or -1. */
int
lg_request_healthz(char *buf, size_t cap, const char *host)
{
	return snprintf(buf, cap, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", host);
}

/*
 * A reserve of user with a purchase token for the event of o that expires at exp (Unix s),
 * minted with the sale key as the data plane mints them, into buf[0..cap). Returns its length;
 * -ENOKEY if the token could not be minted, -ENOSPC if the request does not fit.
 */
int
lg_request_reserve(char *buf, size_t cap, const struct lg_opts *o, uint64_t user, uint64_t exp)
{
	char tok[TOK_BUF_SIZE];
	int n;

	if (tok_purchase_mint(&o->sale, o->event, user, exp, tok, sizeof(tok)) < 0)
		return -ENOKEY;
	n = snprintf(buf, cap,
		"POST %s HTTP/1.1\r\nHost: %s\r\nX-Flash-Token: %s\r\nContent-Length: 0\r\n\r\n",
		o->reserve_path, o->host, tok);
	return n >= 0 && (size_t)n < cap ? n : -ENOSPC;
}

/*
 * The one request of a connection of --mode healthz, reserve or result, into c->req: reserves
 * carry a purchase token and result polls a receipt of the connection's user, minted with the
 * sale key as the data plane mints them. Returns its length, or -1.
 */
static int
build_single(struct lg_client *cl, struct lg_conn *c)
{
	const struct lg_opts *o = cl->o;
	char tok[TOK_BUF_SIZE];

	switch (o->mode) {
	case LG_MODE_RESERVE:
	case LG_MODE_KEPT_RESERVE:
		return lg_request_reserve(
			c->req, sizeof(c->req), o, c->user, (uint64_t)time(NULL) + 3600);
	case LG_MODE_RESULT:
		if (tok_receipt_mint(&o->sale, o->event, c->user, now_wall_ms(), tok, sizeof(tok)) <
			0)
			return -1;
		return snprintf(c->req, sizeof(c->req),
			"GET /api/v1/events/%" PRIu32 "/result HTTP/1.1\r\nHost: %s\r\n"
			"X-Flash-Token: %s\r\n\r\n",
			o->event, o->host, tok);
	default:
		return lg_request_healthz(c->req, sizeof(c->req), o->host);
	}
}

/* Writes the request of c's step into c->req. Returns 0, or -1 if it does not fit. */
int
lg_request_build(struct lg_client *cl, struct lg_conn *c)
{
	const struct lg_opts *o = cl->o;
	char session[TOK_BUF_SIZE];
	int n = -1;

	switch ((enum lg_step)c->step) {
	case LG_STEP_HEALTHZ:
		n = build_single(cl, c);
		break;
	case LG_STEP_TOKEN: {
		/* A session valid for an hour, as the shop's login would hand out. */
		uint64_t exp = (uint64_t)time(NULL) + 3600;

		if (tok_session_mint(&o->auth, c->user, exp, session, sizeof(session)) < 0)
			return -1;
		n = snprintf(c->req, sizeof(c->req),
			"POST /api/v1/events/%" PRIu32 "/token HTTP/1.1\r\nHost: %s\r\n"
			"Authorization: Bearer %s\r\nContent-Length: 0\r\n\r\n",
			o->event, o->host, session);
		break;
	}
	case LG_STEP_RESERVE:
		/* With a challenge, its solution (docs/api.md): every reserve of the token. */
		n = snprintf(c->req, sizeof(c->req),
			"POST %s HTTP/1.1\r\nHost: %s\r\nX-Flash-Token: %s\r\n%s%s%s"
			"Content-Length: 0\r\n\r\n",
			c->path, o->host, c->token,
			c->pow == LG_POW_SOLVED ? "X-Flash-Solution: " : "",
			c->pow == LG_POW_SOLVED ? c->sol : "",
			c->pow == LG_POW_SOLVED ? "\r\n" : "");
		break;
	case LG_STEP_RESULT:
		n = snprintf(c->req, sizeof(c->req),
			"GET %s HTTP/1.1\r\nHost: %s\r\nX-Flash-Token: %s\r\n\r\n", c->path,
			o->host, c->token);
		break;
	case LG_STEP_FLOOD_SESSION_FORGED:
	case LG_STEP_FLOOD_SESSION_NONE:
	case LG_STEP_FLOOD_PURCHASE_FORGED:
	case LG_STEP_FLOOD_PURCHASE_NONE:
	case LG_STEP_FLOOD_ONE_IP:
		n = build_flood_request(cl, c);
		break;
	}
	if (n < 0 || (size_t)n >= sizeof(c->req))
		return -1;
	c->req_len = (uint16_t)n;
	return 0;
}

/*
 * --proxy-v2: puts a PROXY protocol v2 header (HAProxy's proxy-protocol.txt §2.2: the 12-byte
 * signature, version 2 and command PROXY, TCP over IPv4, then source and destination address
 * and port) before c's request, the first of its connection, in the same segment. The source
 * it gives is a client address of --proxy-src-net, one per user, and a port of its own.
 * Returns 0, or -1 when the request has no room for it.
 */
int
lg_request_proxy_v2(const struct lg_client *cl, struct lg_conn *c)
{
	static const uint8_t sig[12] = {
		0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
	const struct lg_opts *o = cl->o;
	uint32_t src = o->proxy_src_base + (uint32_t)(c->user % o->n_proxy_src);
	uint16_t sport = (uint16_t)(1024 + c->user % 64000);
	uint8_t *h = (uint8_t *)c->req;

	if (c->req_len + 28u > sizeof(c->req))
		return -1;
	memmove(c->req + 28, c->req, c->req_len);
	memcpy(h, sig, sizeof(sig));
	h[12] = 0x21; /* version 2, PROXY */
	h[13] = 0x11; /* AF_INET, STREAM */
	h[14] = 0;
	h[15] = 12; /* address block length */
	for (int i = 0; i < 4; i++) {
		h[16 + i] = (uint8_t)(src >> (24 - 8 * i));
		h[20 + i] = (uint8_t)(o->dst_ip >> (24 - 8 * i));
	}
	h[24] = (uint8_t)(sport >> 8);
	h[25] = (uint8_t)sport;
	h[26] = (uint8_t)(o->dport >> 8);
	h[27] = (uint8_t)o->dport;
	c->req_len = (uint16_t)(c->req_len + 28);
	return 0;
}
