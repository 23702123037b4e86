/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_random.h>

#include "common/now.h"
#include "tools/loadgen/lg_client.h"
#include "tools/loadgen/lg_http.h"
#include "tools/loadgen/lg_sched.h"

/* What an answer means for the user who got it. */
/* Result polls after a 410 to a reserve before the user is taken to hold nothing. */
#define LG_CHECK_POLLS 3

enum next_action {
	NEXT_STEP,  /* go on with c->step at c->t_due */
	NEXT_RETRY, /* ask the same again at c->t_due */
	NEXT_DONE,  /* the user (or healthz connection) has ended; outcome in *out */
};

/* The flood counters of connection c, or NULL when c is an honest client's. */
static inline struct lg_flood_stats *
conn_flood(struct lg_client *cl, const struct lg_conn *c)
{
	enum lg_flood_kind k = lg_flood_of_step(c->step);

	return likely(k == LG_FLOOD_N) ? NULL : &cl->st.flood[k];
}

/* A connection's segment or answer failed the checks (http: the HTTP ones). */
static void
count_malformed(struct lg_client *cl, const struct lg_conn *c, bool http)
{
	struct lg_flood_stats *fs = conn_flood(cl, c);

	if (unlikely(fs != NULL)) {
		fs->malformed++;
		return;
	}
	if (http)
		cl->st.malformed_http++;
	else
		cl->st.malformed_tcp++;
	cl->st.conns_malformed++;
}

static void
emit(struct lg_client *cl, struct rte_mbuf *m, uint64_t now)
{
	if (cl->capturing)
		lg_pcap_write(&cl->pcap, rte_pktmbuf_mtod(m, void *), rte_pktmbuf_data_len(m), now);
	cl->st.tx_pkts++;
	cl->st.tx_bytes += rte_pktmbuf_data_len(m);
	cl->tx[cl->n_tx++] = m;
	if (cl->n_tx == LG_BURST)
		lg_client_flush(cl);
}

void
lg_client_flush(struct lg_client *cl)
{
	uint16_t sent = 0;

	/* A full TX ring drains in microseconds; a bounded number of tries, then drop: the
	 * retransmission timers recover what was dropped, as on a real link. A blast has no
	 * timers, so what it drops is a connection lost: it waits up to 10 ms for the data plane
	 * to take its frames (a worker whose core is briefly taken by something else). */
	uint64_t until = lg_mode_blast(cl->o->mode) ? rte_get_tsc_cycles() + cl->hz / 100 : 0;

	for (int tries = 0; sent < cl->n_tx && (tries < 64 || rte_get_tsc_cycles() < until);
		tries++)
		sent += rte_eth_tx_burst(
			cl->port_id, cl->queue_id, cl->tx + sent, (uint16_t)(cl->n_tx - sent));
	if (sent < cl->n_tx) {
		cl->st.tx_dropped += cl->n_tx - sent;
		cl->st.tx_pkts -= cl->n_tx - sent;
		rte_pktmbuf_free_bulk(cl->tx + sent, (unsigned)(cl->n_tx - sent));
	}
	cl->n_tx = 0;
}

static void
send_seg(struct lg_client *cl, const struct lg_seg *s, uint64_t now)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(cl->pool);

	if (unlikely(m == NULL || lg_pkt_tcp(m, &cl->link, s) != 0)) {
		rte_pktmbuf_free(m);
		cl->st.tx_dropped++;
		return;
	}
	emit(cl, m, now);
}

/* Sends a segment of connection c with our sequence number seq. */
static void
conn_send(struct lg_client *cl, const struct lg_conn *c, uint8_t flags, uint32_t seq,
	const void *payload, uint16_t len, uint64_t now)
{
	struct lg_seg s = {
		.src_ip = c->cip,
		.dst_ip = cl->o->dst_ip,
		.sport = c->sport,
		.dport = cl->o->dport,
		.seq = seq,
		.ack = (flags & RTE_TCP_ACK_FLAG) ? c->rcv_nxt : 0,
		.flags = flags,
		.mss_opt = (flags & RTE_TCP_SYN_FLAG) != 0,
		.payload = payload,
		.payload_len = len,
	};

	send_seg(cl, &s, now);
}

static void
send_syn(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	conn_send(cl, c, RTE_TCP_SYN_FLAG, c->isn, NULL, 0, now);
}

/* The handshake's third segment carries the request, as the data plane expects. */
static void
send_req(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	conn_send(cl, c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c->seq0, c->req, c->req_len, now);
}

static void
send_fin(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	conn_send(cl, c, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, c->seq0 + c->req_len, NULL, 0, now);
}

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
static int
healthz_request(char *buf, size_t cap, const char *host)
{
	return snprintf(buf, cap, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", host);
}

/*
 * A reserve of user with a purchase token for the event of o that expires at exp (Unix s),
 * minted with the sale key as the data plane mints them, into buf[0..cap). Returns its length;
 * -ENOKEY if the token could not be minted, -ENOSPC if the request does not fit.
 */
static int
reserve_request(char *buf, size_t cap, const struct lg_opts *o, uint64_t user, uint64_t exp)
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
		return reserve_request(
			c->req, sizeof(c->req), o, c->user, (uint64_t)time(NULL) + 3600);
	case LG_MODE_RESULT:
		if (tok_receipt_mint(&o->sale, o->event, c->user, now_wall_ms(), tok, sizeof(tok)) < 0)
			return -1;
		return snprintf(c->req, sizeof(c->req),
			"GET /api/v1/events/%" PRIu32 "/result HTTP/1.1\r\nHost: %s\r\n"
			"X-Flash-Token: %s\r\n\r\n",
			o->event, o->host, tok);
	default:
		return healthz_request(c->req, sizeof(c->req), o->host);
	}
}

/* Writes the request of c's step into c->req. Returns 0, or -1 if it does not fit. */
static int
build_request(struct lg_client *cl, struct lg_conn *c)
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
			c->pow == LG_POW_SOLVED ? c->sol : "", c->pow == LG_POW_SOLVED ? "\r\n" : "");
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
static int
proxy_v2_prepend(const struct lg_client *cl, struct lg_conn *c)
{
	static const uint8_t sig[12] = { 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55,
		0x49, 0x54, 0x0a };
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

/* Opens a new TCP connection for slot c (its step, user and address already set). */
static void
conn_open(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	struct lg_flood_stats *fs = conn_flood(cl, c);

	if (build_request(cl, c) != 0 || (cl->o->proxy_v2 && proxy_v2_prepend(cl, c) != 0)) {
		/* Only a --host too long for the request buffer gets here; main() bounds it. */
		if (fs != NULL) {
			fs->unexpected++;
			lg_table_put(cl->ftab, c);
			return;
		}
		cl->st.outcome[LG_OUT_REFUSED]++;
		cl->st.users_done++;
		lg_table_put(cl->tab, c);
		return;
	}
	c->isn = (uint32_t)rte_rand();
	c->seq0 = c->isn + 1;
	c->rcv_nxt = 0;
	c->rtx = 0;
	c->verdict = 0;
	c->resp_len = 0;
	c->t_syn = now;
	c->t_req = 0;
	c->t_due = now + cl->rto;
	c->state = LG_CS_SYN_SENT;
	if (unlikely(fs != NULL))
		fs->conns++;
	else
		cl->st.conns_started++;
	send_syn(cl, c, now);
}

/* Ends client c (a healthz connection or a sale user) with outcome out. */
static void
client_end(struct lg_client *cl, struct lg_conn *c, enum lg_outcome out)
{
	if (unlikely(c->step >= LG_STEP_FLOOD_FIRST)) {
		lg_table_put(cl->ftab, c);
		return;
	}
	if (cl->o->mode == LG_MODE_SALE) {
		cl->st.outcome[out]++;
		cl->st.users_done++;
		cl->st.pop_items[c->bot ? LG_POP_BOTS : LG_POP_PEOPLE] +=
			out == LG_OUT_RESERVED || out == LG_OUT_ORDERED || out == LG_OUT_PAID;
	}
	lg_table_put(cl->tab, c);
}

/* A connection failed (RST, timeout, malformed segment): its client ends with it. */
static void
conn_fail(struct lg_client *cl, struct lg_conn *c)
{
	client_end(cl, c, LG_OUT_CONN_FAILED);
}

/*
 * The wait of c's user before asking again after 425/429/503: Retry-After plus up to 1/4 s of
 * jitter; a bot's is --bot-speed times shorter.
 */
static uint64_t
retry_wait(const struct lg_client *cl, const struct lg_conn *c, long retry_after)
{
	uint64_t s = retry_after > 0 ? (uint64_t)retry_after : 1;
	uint64_t w = s * cl->hz + rte_rand_max(cl->hz / 4 + 1);

	return c->bot ? (uint64_t)((double)w / cl->o->bot_speed) : w;
}

/* How many answers 425/429/503 in a row c's user takes: a bot as many more as it is faster. */
static unsigned
retry_limit(const struct lg_client *cl, const struct lg_conn *c)
{
	return c->bot ? (unsigned)(cl->o->retries * cl->o->bot_speed) : cl->o->retries;
}

/* TSC cycles of c's user's think time (lg_sched_think_ms()): 0 without --think-ms. */
static uint64_t
think_cycles(const struct lg_client *cl, const struct lg_conn *c)
{
	const struct lg_opts *o = cl->o;
	double ms = lg_sched_think_ms(c->user, o->seed, o->think_ms, c->bot, o->bot_speed);

	return (uint64_t)(ms * (double)cl->hz / 1000.0);
}

/*
 * The wait of a queued user before its next poll: the answer's wait_ms (the time to the draw,
 * or the estimated wait for its turn) within [--poll-ms, --poll-max-ms], plus up to a quarter
 * of it (at most 1/4 s) of jitter so that a line of buyers told the same wait does not come
 * back in the same millisecond; --poll-ms when the answer has no wait_ms.
 */
static uint64_t
queued_wait(const struct lg_client *cl, const struct lg_http_resp *r)
{
	const struct lg_opts *o = cl->o;
	uint64_t ms, w, j;

	if (lg_json_uint(r->body, r->body_len, "wait_ms", &ms) != 0)
		return cl->poll;
	ms = ms < o->poll_ms ? o->poll_ms : ms > o->poll_max_ms ? o->poll_max_ms : ms;
	w = ms * cl->hz / 1000;
	j = w / 4 < cl->hz / 4 ? w / 4 : cl->hz / 4;
	return w + rte_rand_max(j + 1);
}

/* Puts c's user in line for the solver (lg_client_solve()). Returns false when it is full. */
static bool
solve_enqueue(struct lg_client *cl, struct lg_conn *c)
{
	uint32_t i;

	if (cl->solve_n == cl->solve_cap)
		return false;
	i = cl->solve_head + cl->solve_n;
	if (i >= cl->solve_cap)
		i -= cl->solve_cap;
	cl->solve_q[i] = (struct lg_solve_wait){ .slot = (uint32_t)(c - cl->tab->c), .user = c->user };
	cl->solve_n++;
	return true;
}

static bool
copy_field(const struct lg_http_resp *r, const char *name, char *dst, size_t cap)
{
	const char *v;
	size_t n;

	if (lg_json_string(r->body, r->body_len, name, &v, &n) != 0 || n == 0 || n >= cap)
		return false;
	memcpy(dst, v, n);
	dst[n] = '\0';
	return true;
}

static bool
is_retry_status(unsigned s)
{
	return s == 425 || s == 429 || s == 503;
}

static enum lg_outcome
result_outcome(const char *v, size_t n)
{
	static const struct {
		const char *name;
		enum lg_outcome out;
	} tab[] = {
		{"reserved", LG_OUT_RESERVED},
		{"ordered", LG_OUT_ORDERED},
		{"paid", LG_OUT_PAID},
		{"sold_out", LG_OUT_SOLD_OUT},
		{"duplicate", LG_OUT_DUPLICATE},
		{"expired", LG_OUT_EXPIRED},
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strlen(tab[i].name) == n && memcmp(tab[i].name, v, n) == 0)
			return tab[i].out;
	return LG_OUT_OTHER_RESULT;
}

/* The unsigned flood's reserves go to the event's real reserve path once one is known. */
static void
learn_reserve_path(struct lg_client *cl, const char *path)
{
	size_t n = strlen(path);

	if (n >= sizeof(cl->reserve_path))
		return;
	memcpy(cl->reserve_path, path, n + 1);
	cl->have_reserve_path = true;
}

/*
 * A token answer's challenge (lg_pow.h): puts c's user in line for its solution. Returns false
 * when the answer's challenge is malformed or not its token's (or the line is full).
 */
static bool
take_challenge(struct lg_client *cl, struct lg_conn *c, const struct lg_http_resp *r, uint64_t now)
{
	struct lg_pow_challenge ch;
	int rc = lg_pow_from_answer(r->body, r->body_len, c->token, strlen(c->token), &ch);

	c->pow = LG_POW_NONE;
	if (rc <= 0)
		return rc == 0;
	cl->st.pow_challenges++;
	if (cl->pow_bits_min == 0 || ch.bits < cl->pow_bits_min)
		cl->pow_bits_min = ch.bits;
	if (ch.bits > cl->pow_bits_max)
		cl->pow_bits_max = ch.bits;
	c->t_chal = now;
	c->pow = LG_POW_WAITING;
	return solve_enqueue(cl, c);
}

/*
 * A "queued" result's place in line (docs/api.md): counts it, and a position above the user's
 * last one (the design says it never rises) as unexpected. Returns false when position or
 * wait_ms is there but not a number.
 */
static bool
take_position(struct lg_client *cl, struct lg_conn *c, const struct lg_http_resp *r)
{
	uint64_t pos, w;
	int rc = lg_json_uint(r->body, r->body_len, "position", &pos);
	int rw = lg_json_uint(r->body, r->body_len, "wait_ms", &w);

	if (rc == -EINVAL || rw == -EINVAL)
		return false;
	cl->st.queued_polls++;
	cl->st.queued_wait += rw == 0;
	if (rc != 0)
		return true;
	cl->st.queued_position++;
	if (c->last_pos != LG_POS_NONE && pos > c->last_pos) {
		cl->st.position_rises++;
		cl->st.unexpected_status++;
	}
	c->last_pos = pos < LG_POS_NONE ? (uint32_t)pos : LG_POS_NONE - 1;
	return true;
}

/*
 * Decides what a well-formed answer r to c's step means (docs/api.md's flow), counting
 * answers an honest client should not get as unexpected.
 */
static enum next_action
judge(struct lg_client *cl, struct lg_conn *c, const struct lg_http_resp *r, uint64_t now,
	enum lg_outcome *out)
{
	const struct lg_opts *o = cl->o;
	unsigned s = r->status;

	*out = LG_OUT_REFUSED;
	c->plain_poll = 0;
	if (c->step == LG_STEP_HEALTHZ) {
		/* A reserve may also be told 503 "busy" when the link to the control plane is
		 * backed up (docs/api.md): the data plane's backpressure, counted by status. */
		if (s != (lg_mode_reserve(o->mode) ? 202u : 200u) &&
			!(lg_mode_reserve(o->mode) && s == 503))
			cl->st.unexpected_status++;
		return NEXT_DONE;
	}
	if (s == 410 && c->step == LG_STEP_RESERVE) {
		/* docs/api.md: a reserve resent after its answer was lost (or a second click) may
		 * be refused 410 while the first attempt holds an item; ask the result with the
		 * purchase token before taking the 410 for sold out. */
		snprintf(c->path, sizeof(c->path), "/api/v1/events/%" PRIu32 "/result", o->event);
		c->step = LG_STEP_RESULT;
		c->checking = 1;
		c->attempts = 0;
		c->polls = 0;
		c->t_next = now;
		return NEXT_STEP;
	}
	if (s == 410) {
		*out = LG_OUT_SOLD_OUT;
		return NEXT_DONE;
	}
	/* 425: a token before the sale (or its pre-queue) opens, a reserve while the draw runs. */
	if (is_retry_status(s) && !(s == 425 && c->step == LG_STEP_RESULT)) {
		if (++c->attempts > retry_limit(cl, c)) {
			*out = LG_OUT_GAVE_UP;
			return NEXT_DONE;
		}
		c->t_next = now + retry_wait(cl, c, r->retry_after);
		return NEXT_RETRY;
	}
	switch ((enum lg_step)c->step) {
	case LG_STEP_TOKEN:
		if (s != 200)
			break;
		if (!copy_field(r, "token", c->token, sizeof(c->token)) ||
			!copy_field(r, "reserve_path", c->path, sizeof(c->path)) ||
			c->path[0] != '/') {
			cl->st.malformed_http++;
			*out = LG_OUT_CONN_FAILED;
			return NEXT_DONE;
		}
		if (unlikely(!cl->have_reserve_path))
			learn_reserve_path(cl, c->path);
		if (!take_challenge(cl, c, r, now)) {
			cl->st.malformed_http++;
			*out = LG_OUT_CONN_FAILED;
			return NEXT_DONE;
		}
		c->step = LG_STEP_RESERVE;
		c->attempts = 0;
		c->t_next = now + think_cycles(cl, c);
		return NEXT_STEP;
	case LG_STEP_RESERVE:
		if (s == 200 && c->clicks > 0) {
			/* The second click of a user whose result the data plane holds already:
			 * answered with that result (docs/api.md, a known buyer). */
			const char *v;
			size_t n;

			if (lg_json_string(r->body, r->body_len, "status", &v, &n) != 0) {
				cl->st.malformed_http++;
				*out = LG_OUT_CONN_FAILED;
				return NEXT_DONE;
			}
			*out = result_outcome(v, n);
			return NEXT_DONE;
		}
		if (s != 202)
			break;
		/* --double-click: a chosen share of users reserve again with the same token, as
		 * an impatient buyer clicks twice; the control plane answers the second duplicate
		 * and the user's result stays the first one's. */
		if (c->clicks == 0)
			cl->st.pop_entrants[c->bot ? LG_POP_BOTS : LG_POP_PEOPLE]++;
		if (c->clicks++ == 0 && (c->user - o->user_base) % 100 < o->double_click) {
			cl->st.double_clicks++;
			c->attempts = 0;
			c->t_next = now;
			return NEXT_STEP;
		}
		if (!copy_field(r, "receipt", c->token, sizeof(c->token)) ||
			!copy_field(r, "result_path", c->path, sizeof(c->path)) ||
			c->path[0] != '/') {
			cl->st.malformed_http++;
			*out = LG_OUT_CONN_FAILED;
			return NEXT_DONE;
		}
		c->step = LG_STEP_RESULT;
		c->attempts = 0;
		c->t_next = now + cl->poll;
		c->plain_poll = 1;
		return NEXT_STEP;
	case LG_STEP_RESULT: {
		const char *v;
		size_t n;

		if (s != 200)
			break;
		if (lg_json_string(r->body, r->body_len, "status", &v, &n) != 0) {
			cl->st.malformed_http++;
			*out = LG_OUT_CONN_FAILED;
			return NEXT_DONE;
		}
		if (n == 6 && memcmp(v, "queued", 6) == 0) {
			/* After a 410 a result that stays unknown means the user holds nothing. */
			if (c->checking && ++c->polls >= LG_CHECK_POLLS) {
				*out = LG_OUT_SOLD_OUT;
				return NEXT_DONE;
			}
			if (!c->checking && ++c->polls >= o->max_polls) {
				*out = LG_OUT_STILL_QUEUED;
				return NEXT_DONE;
			}
			if (!take_position(cl, c, r)) {
				cl->st.malformed_http++;
				*out = LG_OUT_CONN_FAILED;
				return NEXT_DONE;
			}
			/* Answered: a 429 of the poll limit before it is no longer "in a row". */
			c->attempts = 0;
			c->t_next = now + queued_wait(cl, r);
			c->plain_poll = c->t_next == now + cl->poll;
			return NEXT_STEP;
		}
		*out = result_outcome(v, n);
		return NEXT_DONE;
	}
	case LG_STEP_HEALTHZ:
	case LG_STEP_FLOOD_SESSION_FORGED:
	case LG_STEP_FLOOD_SESSION_NONE:
	case LG_STEP_FLOOD_PURCHASE_FORGED:
	case LG_STEP_FLOOD_PURCHASE_NONE:
	case LG_STEP_FLOOD_ONE_IP:
		break;
	}
	cl->st.unexpected_status++;
	return NEXT_DONE;
}

/* The whole answer and its FIN are in: check it, count it and decide what comes next. */
static void
on_response(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	struct lg_http_resp r;
	enum lg_http_err e = lg_http_parse_response(c->resp, c->resp_len, &r);
	enum lg_outcome out = LG_OUT_CONN_FAILED;
	enum next_action next = NEXT_DONE;
	struct lg_flood_stats *fs = conn_flood(cl, c);

	if (unlikely(fs != NULL)) {
		fs->answered++;
		if (e != LG_HTTP_OK) {
			fs->malformed++;
		} else {
			fs->status[r.status < LG_STATUS_MAX ? r.status : 0]++;
			if (!lg_flood_answer_ok(c->step, &r))
				fs->unexpected++;
			else if (r.status == 200 && !cl->have_reserve_path &&
				 copy_field(&r, "reserve_path", c->path, sizeof(c->path)) &&
				 c->path[0] == '/')
				learn_reserve_path(cl, c->path);
		}
		c->verdict = 2; /* one request per flood connection */
		return;
	}
	cl->st.responses++;
	lg_hist_add(&cl->st.req_lat, now - c->t_req);
	if (e != LG_HTTP_OK) {
		cl->st.malformed_http++;
	} else {
		cl->st.status[r.status < LG_STATUS_MAX ? r.status : 0]++;
		next = judge(cl, c, &r, now, &out);
	}
	/* A kept client answered with Connection: close (the data plane's table was full): the
	 * rest of its requests go on a new connection (conn_closed()). */
	if (lg_mode_kept(cl->o->mode)) {
		cl->st.kept_closed++;
		c->left--;
		c->user += lg_mode_reserve(cl->o->mode);
	}
	/* Remembered until our FIN is acknowledged; polls reuse this slot afterwards. */
	c->verdict = (uint8_t)(next == NEXT_DONE ? 2 + out : 1);
}

/*
 * Idle sale user c starts its next connection at due: at once when due is now, as a browser
 * would (the reserve after the token); a plain poll's wait (--poll-ms, the same for everyone)
 * ends on time in the wake queue, waits of other lengths (think times, Retry-After, a queued
 * user's wait_ms) on the timer heap, or at the timer scan when either is full.
 */
static void
idle_until(struct lg_client *cl, struct lg_conn *c, uint64_t due, uint64_t now)
{
	c->t_due = due;
	if (now >= c->t_due)
		conn_open(cl, c, now);
	else if (c->plain_poll && c->t_due - now <= cl->poll)
		lg_table_wake_at(cl->tab, c);
	else
		lg_table_timer_at(cl->tab, c);
}

/* Our FIN was acknowledged: the connection is complete. */
static void
conn_closed(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	if (unlikely(c->step >= LG_STEP_FLOOD_FIRST)) {
		client_end(cl, c, LG_OUT_REFUSED);
		return;
	}
	cl->st.conns_completed++;
	lg_hist_add(&cl->st.conn_lat, now - c->t_syn);
	if (lg_mode_kept(cl->o->mode) && c->left > 0) {
		conn_open(cl, c, now);
		return;
	}
	if (cl->o->mode != LG_MODE_SALE || c->verdict >= 2) {
		client_end(cl, c,
			c->verdict >= 2 ? (enum lg_outcome)(c->verdict - 2) : LG_OUT_CONN_FAILED);
		return;
	}
	if (c->pow == LG_POW_FAILED) {
		client_end(cl, c, LG_OUT_GAVE_UP);
		return;
	}
	/* t_due was our FIN's retransmission timer; judge() said when the next step is due. A
	 * reserve that waits for its challenge's solution is started by lg_client_solve(). */
	c->state = LG_CS_IDLE;
	if (c->pow == LG_POW_WAITING && c->step == LG_STEP_RESERVE) {
		c->t_due = UINT64_MAX;
		return;
	}
	idle_until(cl, c, c->t_next, now);
}

/*
 * A kept connection's whole answer is in (no FIN: lg_http_response_len()): check it, count it,
 * and send the client's next request on the same connection, acknowledging the answer; after
 * the last, our FIN.
 */
static void
kept_next(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	struct lg_http_resp r;
	enum lg_http_err e = lg_http_parse_kept(c->resp, c->resp_len, &r);
	enum lg_outcome out;

	cl->st.responses++;
	cl->st.kept_answers++;
	lg_hist_add(&cl->st.req_lat, now - c->t_req);
	if (e != LG_HTTP_OK) {
		cl->st.malformed_http++;
	} else {
		cl->st.status[r.status < LG_STATUS_MAX ? r.status : 0]++;
		judge(cl, c, &r, now, &out);
	}
	c->seq0 += c->req_len;
	c->resp_len = 0;
	c->rtx = 0;
	c->t_due = now + cl->rto;
	if (--c->left == 0) {
		c->req_len = 0;
		c->verdict = 2;
		c->state = LG_CS_FIN_SENT;
		send_fin(cl, c, now);
		return;
	}
	c->user += lg_mode_reserve(cl->o->mode);
	if (build_request(cl, c) != 0) {
		count_malformed(cl, c, false);
		conn_fail(cl, c);
		return;
	}
	c->t_req = now;
	cl->st.requests++;
	send_req(cl, c, now);
}

/* --mode syn-flood: a SYN-ACK must ack one of our SYNs. */
static void
rx_syn_flood_mode(struct lg_client *cl, const struct lg_rx_seg *s)
{
	if ((s->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG |
				RTE_TCP_FIN_FLAG)) == (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) &&
		s->ack == lg_flood_syn_isn(cl->flood_salt, s->dst_ip, s->dport) + 1 &&
		s->payload_len == 0)
		cl->st.syn_acks++;
	else if (s->flags & RTE_TCP_RST_FLAG)
		cl->st.conns_rst++;
	else
		cl->st.malformed_tcp++;
}

/*
 * The blasts: the three answers of a connection, each checked: a SYN-ACK acking our SYN,
 * "HTTP/1.1 200 " (healthz) or "HTTP/1.1 202 " (reserve; or 503, the data plane's link to the
 * control plane busy) with the data plane's FIN, the bare ACK of our FIN. A RST means the data
 * plane refused the cookie (another secret or slot).
 */
static void
rx_blast_mode(struct lg_client *cl, const struct lg_rx_seg *s)
{
	uint32_t isn = lg_flood_syn_isn(cl->flood_salt, s->dst_ip, s->dport);
	uint8_t f = s->flags &
		    (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG | RTE_TCP_FIN_FLAG);

	if (f & RTE_TCP_RST_FLAG) {
		cl->st.conns_rst++;
	} else if (f == (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) && s->ack == isn + 1 &&
		   s->payload_len == 0) {
		cl->st.blast_syn_acks++;
	} else if (f == (RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG) &&
		   s->ack == isn + 1 + cl->blast_req_len && s->payload_len > 0) {
		bool reserve = cl->o->mode == LG_MODE_RESERVE_BLAST;

		if (s->payload_len >= 13 &&
			memcmp(s->payload, reserve ? "HTTP/1.1 202 " : "HTTP/1.1 200 ", 13) == 0) {
			cl->st.blast_ok++;
			cl->st.responses++;
			cl->st.status[reserve ? 202 : 200]++;
		} else if (reserve && s->payload_len >= 13 &&
			   memcmp(s->payload, "HTTP/1.1 503 ", 13) == 0) {
			cl->st.blast_busy++;
			cl->st.responses++;
			cl->st.status[503]++;
		} else {
			cl->st.unexpected_status++;
		}
	} else if (f == RTE_TCP_ACK_FLAG && s->payload_len == 0 &&
		   s->ack == isn + 1 + cl->blast_req_len + 1) {
		cl->st.blast_fin_acks++;
	} else {
		cl->st.malformed_tcp++;
	}
}

/* An answer to a syn or bad-ack flood segment (lg_flood_classify()). */
static void
rx_stateless_flood(struct lg_client *cl, const struct lg_rx_seg *s)
{
	struct lg_flood_stats *f = cl->st.flood;

	switch (lg_flood_classify(cl->flood_salt, cl->ack_salt, cl->bad_ack_len, s)) {
	case LG_FRX_SYN_ACK:
		f[LG_FLOOD_SYN].answered++;
		break;
	case LG_FRX_SYN_RST:
		f[LG_FLOOD_SYN].rsts++;
		f[LG_FLOOD_SYN].unexpected++;
		break;
	case LG_FRX_BAD_ACK_RST:
		f[LG_FLOOD_BAD_ACK].answered++;
		break;
	case LG_FRX_BAD_ACK_TAKEN:
		f[LG_FLOOD_BAD_ACK].unexpected++;
		break;
	case LG_FRX_UNKNOWN:
		cl->st.malformed_tcp++;
		break;
	}
}

static void rx_conn(
	struct lg_client *cl, struct lg_conn *c, const struct lg_rx_seg *s, uint64_t now);

static void
rx_tcp(struct lg_client *cl, const struct lg_rx_seg *s, uint64_t now)
{
	const struct lg_opts *o = cl->o;

	if (unlikely(s->src_ip != o->dst_ip || s->sport != o->dport)) {
		cl->st.other_rx++;
		return;
	}
	if (likely(s->dst_ip - o->src_base < o->n_src)) {
		if (unlikely(o->mode == LG_MODE_SYN_FLOOD)) {
			rx_syn_flood_mode(cl, s);
			return;
		}
		if (unlikely(lg_mode_blast(o->mode))) {
			rx_blast_mode(cl, s);
			return;
		}
		rx_conn(cl, lg_table_find(cl->tab, s->dst_ip, s->dport), s, now);
		return;
	}
	if (cl->any_flood && s->dst_ip - o->flood_base < o->n_flood) {
		if (s->dport >= cl->stateless_port_lo)
			rx_stateless_flood(cl, s);
		else
			rx_conn(cl, cl->ftab ? lg_table_find(cl->ftab, s->dst_ip, s->dport) : NULL,
				s, now);
		return;
	}
	cl->st.other_rx++;
}

/* A segment of connection c (NULL: none is current at its address and port). */
static void
rx_conn(struct lg_client *cl, struct lg_conn *c, const struct lg_rx_seg *s, uint64_t now)
{
	if (c == NULL || c->state == LG_CS_IDLE) {
		cl->st.stray++;
		return;
	}
	uint32_t snd_end = c->seq0 + c->req_len; /* after our request */

	if (unlikely(s->flags & RTE_TCP_RST_FLAG)) {
		/* RFC 9293 §3.10.7: a RST is ours if it acks our SYN (SYN-SENT) or sits at the
		 * sequence number we expect next. */
		bool ours = c->state == LG_CS_SYN_SENT
				    ? (s->flags & RTE_TCP_ACK_FLAG) && s->ack == c->isn + 1
				    : s->seq == c->rcv_nxt || s->seq == c->rcv_nxt - 1;

		if (!ours) {
			cl->st.stray++;
			return;
		}
		struct lg_flood_stats *fs = conn_flood(cl, c);

		if (unlikely(fs != NULL)) {
			fs->rsts++;
			fs->unexpected++;
		} else {
			cl->st.conns_rst++;
		}
		conn_fail(cl, c);
		return;
	}
	switch ((enum lg_conn_state)c->state) {
	case LG_CS_SYN_SENT:
		if ((s->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG)) !=
				(RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) ||
			s->ack != c->isn + 1) {
			cl->st.stray++;
			return;
		}
		if (s->payload_len != 0) {
			count_malformed(cl, c, false);
			conn_fail(cl, c);
			return;
		}
		c->rcv_nxt = s->seq + 1;
		c->state = LG_CS_REQ_SENT;
		c->rtx = 0;
		c->t_req = now;
		c->t_due = now + cl->rto;
		if (unlikely(c->step >= LG_STEP_FLOOD_FIRST))
			cl->st.flood[lg_flood_of_step(c->step)].sent++;
		else
			cl->st.requests++;
		send_req(cl, c, now);
		return;
	case LG_CS_REQ_SENT:
		if (s->flags & RTE_TCP_SYN_FLAG) {
			/* Our request was lost and the SYN-ACK repeated: the timer resends it. */
			cl->st.stray++;
			return;
		}
		if (!(s->flags & RTE_TCP_ACK_FLAG) || s->seq != c->rcv_nxt) {
			cl->st.stray++;
			return;
		}
		/* The answer must acknowledge the whole request (it answers all of it). */
		if (s->ack != snd_end) {
			count_malformed(cl, c, false);
			conn_fail(cl, c);
			return;
		}
		if (s->payload_len > LG_RESP_MAX - c->resp_len) {
			count_malformed(cl, c, true);
			conn_fail(cl, c);
			return;
		}
		memcpy(c->resp + c->resp_len, s->payload, s->payload_len);
		c->resp_len = (uint16_t)(c->resp_len + s->payload_len);
		c->rcv_nxt += s->payload_len;
		if (!(s->flags & RTE_TCP_FIN_FLAG)) {
			size_t whole;

			/* A kept connection's answer ends where its Content-Length says. */
			if (lg_mode_kept(cl->o->mode) && s->payload_len != 0 &&
				(whole = lg_http_response_len(c->resp, c->resp_len)) != 0) {
				if (whole != c->resp_len) {
					count_malformed(cl, c, true);
					conn_fail(cl, c);
					return;
				}
				kept_next(cl, c, now);
				return;
			}
			if (s->payload_len)
				conn_send(cl, c, RTE_TCP_ACK_FLAG, snd_end, NULL, 0, now);
			return;
		}
		c->rcv_nxt++;
		on_response(cl, c, now);
		c->state = LG_CS_FIN_SENT;
		c->rtx = 0;
		c->t_due = now + cl->rto;
		send_fin(cl, c, now);
		return;
	case LG_CS_FIN_SENT:
		if ((s->flags & RTE_TCP_ACK_FLAG) && s->ack == snd_end + 1 && s->payload_len == 0 &&
			!(s->flags & RTE_TCP_FIN_FLAG)) {
			conn_closed(cl, c, now);
			return;
		}
		/* A kept connection: the server's FIN comes with the ACK of ours; ours of it ends
		 * the connection. */
		if (lg_mode_kept(cl->o->mode) && (s->flags & RTE_TCP_ACK_FLAG) &&
			(s->flags & RTE_TCP_FIN_FLAG) && s->ack == snd_end + 1 && s->payload_len == 0 &&
			s->seq == c->rcv_nxt) {
			c->rcv_nxt++;
			conn_send(cl, c, RTE_TCP_ACK_FLAG, snd_end + 1, NULL, 0, now);
			conn_closed(cl, c, now);
			return;
		}
		/* The answer again: our FIN was lost; say it once more. */
		if (s->flags & RTE_TCP_FIN_FLAG) {
			send_fin(cl, c, now);
			return;
		}
		cl->st.stray++;
		return;
	case LG_CS_FREE:
	case LG_CS_IDLE:
		break;
	}
	cl->st.stray++;
}

static void
rx_arp(struct lg_client *cl, struct rte_mbuf *m, uint64_t now)
{
	const struct rte_arp_hdr *a =
		(const struct rte_arp_hdr *)(rte_pktmbuf_mtod(m, struct rte_ether_hdr *) + 1);
	uint32_t sip = rte_be_to_cpu_32(a->arp_data.arp_sip);
	uint32_t tip = rte_be_to_cpu_32(a->arp_data.arp_tip);

	if (a->arp_hardware != RTE_BE16(RTE_ARP_HRD_ETHER) ||
		a->arp_protocol != RTE_BE16(RTE_ETHER_TYPE_IPV4)) {
		cl->st.other_rx++;
		return;
	}
	if (a->arp_opcode == RTE_BE16(RTE_ARP_OP_REPLY) && sip == cl->o->dst_ip) {
		rte_ether_addr_copy(&a->arp_data.arp_sha, &cl->link.peer_mac);
		cl->have_peer_mac = true;
		cl->st.arp_replies++;
		return;
	}
	/* We own the client addresses: answer for them, as their hosts would. */
	if (a->arp_opcode == RTE_BE16(RTE_ARP_OP_REQUEST) &&
		(tip - cl->o->src_base < cl->o->n_src ||
			(cl->any_flood && tip - cl->o->flood_base < cl->o->n_flood))) {
		struct rte_mbuf *r = rte_pktmbuf_alloc(cl->pool);
		struct rte_ether_addr sha = a->arp_data.arp_sha;

		if (r == NULL || lg_pkt_arp(r, &cl->link, RTE_ARP_OP_REPLY, tip, &sha, sip) != 0) {
			rte_pktmbuf_free(r);
			cl->st.tx_dropped++;
			return;
		}
		cl->st.arp_requests_answered++;
		emit(cl, r, now);
		return;
	}
	cl->st.other_rx++;
}

void
lg_client_rx(struct lg_client *cl, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct lg_rx_seg s;

		cl->st.rx_pkts++;
		cl->st.rx_bytes += rte_pktmbuf_pkt_len(m);
		if (cl->capturing)
			lg_pcap_write(&cl->pcap, rte_pktmbuf_mtod(m, void *),
				rte_pktmbuf_data_len(m), now);
		switch (lg_pkt_rx(m, &s)) {
		case LG_RX_TCP:
			rx_tcp(cl, &s, now);
			break;
		case LG_RX_ARP:
			rx_arp(cl, m, now);
			break;
		case LG_RX_MALFORMED:
			cl->st.malformed_tcp++;
			break;
		case LG_RX_OTHER:
			cl->st.other_rx++;
			break;
		}
		rte_pktmbuf_free(m);
	}
}

void
lg_client_arp_probe(struct lg_client *cl, uint64_t now)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(cl->pool);

	if (m == NULL || lg_pkt_arp(m, &cl->link, RTE_ARP_OP_REQUEST, cl->o->src_base, NULL,
				 cl->o->dst_ip)) {
		rte_pktmbuf_free(m);
		return;
	}
	emit(cl, m, now);
	lg_client_flush(cl);
}

/* --mode syn-flood: one SYN from a random --src-net address and port. */
static void
launch_syn_flood_mode(struct lg_client *cl, uint64_t now)
{
	const struct lg_opts *o = cl->o;
	uint64_t r = rte_rand();
	struct lg_seg s = {
		.src_ip = o->src_base + (uint32_t)(r % o->n_src),
		.dst_ip = o->dst_ip,
		/* Any port above the well-known ones, as a flood tool picks them. */
		.sport = (uint16_t)(1024 + (r >> 32) % 64512),
		.dport = o->dport,
		.flags = RTE_TCP_SYN_FLAG,
		.mss_opt = true,
	};

	s.seq = lg_flood_syn_isn(cl->flood_salt, s.src_ip, s.sport);
	cl->st.syn_sent++;
	send_seg(cl, &s, now);
}

/*
 * The blasts: one whole connection sent at once, as a client that knows the data plane's
 * cookie secret: the SYN, the request acking the SYN-ACK's cookie (computed here as the data
 * plane's workers compute it), and our FIN. The request is GET /healthz (healthz-blast) or a
 * reserve of user --user-base + i with its purchase token (reserve-blast). The data plane keeps
 * no state, so it answers each as it would a client that waited for the SYN-ACK; nothing waits
 * here, so one core can offer more connections than the handshaking modes.
 */
static void
launch_blast_mode(struct lg_client *cl, uint64_t now)
{
	const struct lg_opts *o = cl->o;
	uint64_t i = cl->launched;

	/* The same length for every request: lg_client_init() and the option checks see to it
	 * (users of as many digits, one expiry); one that differed would be answered unchecked. */
	if (o->mode == LG_MODE_RESERVE_BLAST &&
		unlikely(reserve_request(cl->blast_req, sizeof(cl->blast_req), o, o->user_base + i,
				 cl->blast_exp) != cl->blast_req_len)) {
		cl->st.unexpected_status++;
		return;
	}
	struct lg_seg s = {
		.src_ip = o->src_base + (uint32_t)(i % o->n_src),
		.dst_ip = o->dst_ip,
		.sport = (uint16_t)(LG_PORT_BASE + (i / o->n_src) % (65536 - LG_PORT_BASE)),
		.dport = o->dport,
		.flags = RTE_TCP_SYN_FLAG,
		.mss_opt = true,
	};
	uint32_t isn = lg_flood_syn_isn(cl->flood_salt, s.src_ip, s.sport);
	uint32_t cookie = syncookie_make(&cl->cookies, rte_cpu_to_be_32(s.src_ip),
		rte_cpu_to_be_32(s.dst_ip), rte_cpu_to_be_16(s.sport), rte_cpu_to_be_16(s.dport),
		isn, syncookie_mss_index(LG_MSS));

	s.seq = isn;
	send_seg(cl, &s, now);
	s.seq = isn + 1;
	s.ack = cookie + 1;
	s.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
	s.mss_opt = false;
	s.payload = cl->blast_req;
	s.payload_len = cl->blast_req_len;
	send_seg(cl, &s, now);
	s.seq = isn + 1 + cl->blast_req_len;
	s.flags = RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG;
	s.payload = NULL;
	s.payload_len = 0;
	send_seg(cl, &s, now);
	cl->st.blast_sent++;
	cl->st.requests++;
}

/* A flood address other than the one-ip flood's. */
static inline uint32_t
flood_addr(const struct lg_client *cl)
{
	return cl->o->flood_base + 1 + (uint32_t)rte_rand_max(cl->o->n_flood - 1);
}

/* One SYN, or one bad-cookie ACK with its request, from a random flood address and port. */
static void
launch_stateless(struct lg_client *cl, enum lg_flood_kind k, uint64_t now)
{
	const struct lg_opts *o = cl->o;
	struct lg_seg s = {
		.src_ip = flood_addr(cl),
		.dst_ip = o->dst_ip,
		.sport = (uint16_t)(cl->stateless_port_lo +
				    rte_rand_max(65536u - cl->stateless_port_lo)),
		.dport = o->dport,
	};

	if (k == LG_FLOOD_SYN) {
		s.flags = RTE_TCP_SYN_FLAG;
		s.mss_opt = true;
		s.seq = lg_flood_syn_isn(cl->flood_salt, s.src_ip, s.sport);
	} else {
		s.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
		lg_flood_bad_ack_nums(cl->ack_salt, s.src_ip, s.sport, &s.seq, &s.ack);
		s.payload = cl->bad_ack_req;
		s.payload_len = cl->bad_ack_len;
	}
	cl->st.flood[k].sent++;
	send_seg(cl, &s, now);
}

/* Opens one unsigned or one-ip flood connection. Returns 0, or -1 when every slot is busy. */
static int
launch_flood_conn(struct lg_client *cl, enum lg_flood_kind k, uint64_t now)
{
	struct lg_conn *c = lg_table_take(cl->ftab);

	if (c == NULL)
		return -1;
	if (k == LG_FLOOD_ONE_IP) {
		c->cip = cl->o->flood_base;
		c->step = LG_STEP_FLOOD_ONE_IP;
		c->user = cl->one_ip_user++;
	} else {
		c->cip = flood_addr(cl);
		c->step = (uint8_t)(LG_STEP_FLOOD_FIRST +
				    cl->st.flood[k].conns % LG_UNSIGNED_VARIANTS);
		c->user = LG_FLOOD_USER_BASE;
	}
	c->attempts = 0;
	c->polls = 0;
	c->checking = 0;
	conn_open(cl, c, now);
	return 0;
}

/* Begins flood segments and connections, each kind at its rate (at most a burst a call). */
static void
launch_floods(struct lg_client *cl, uint64_t now)
{
	const struct lg_opts *o = cl->o;
	double dt = (double)(now - cl->t_flood_credit) / (double)cl->hz;

	cl->t_flood_credit = now;
	for (unsigned k = 0; k < LG_FLOOD_N; k++) {
		double rate = o->flood_rate[k];
		double cap = rate / 1000.0 < 1 ? 1 : rate / 1000.0; /* 1 ms, as --rate */

		if (rate <= 0)
			continue;
		cl->flood_credit[k] += dt * rate;
		if (cl->flood_credit[k] > cap)
			cl->flood_credit[k] = cap;
		for (unsigned n = 0; n < LG_BURST && cl->flood_credit[k] >= 1; n++) {
			if (k == LG_FLOOD_SYN || k == LG_FLOOD_BAD_ACK)
				launch_stateless(cl, (enum lg_flood_kind)k, now);
			else if (launch_flood_conn(cl, (enum lg_flood_kind)k, now) != 0)
				break;
			cl->flood_credit[k] -= 1;
		}
	}
}

/* The TSC at which the k-th sale user arrives (lg_sched_arrival_s(): at the start but for a
 * pre-queue's). */
static uint64_t
arrival_tsc(const struct lg_client *cl, uint64_t k)
{
	const struct lg_opts *o = cl->o;
	double s = lg_sched_arrival_s(
		k, cl->n_pre, o->arrive_before, lg_sched_unit(o->user_base + k, ~o->seed));
	double d = s * (double)cl->hz;

	return d >= 0 ? cl->t_start + (uint64_t)d
		      : cl->t_start - (uint64_t)(-d < (double)cl->t_start ? -d : (double)cl->t_start);
}

/*
 * Sale user c (the launched-th) arrives now: counted in its population (and, with a pre-queue,
 * in the arrivals before or at the start); its first request, the token, goes after its think
 * time.
 */
static void
sale_arrive(struct lg_client *cl, struct lg_conn *c, uint64_t now)
{
	const struct lg_opts *o = cl->o;
	uint64_t k = cl->launched;
	double at = ((double)now - (double)cl->t_start) / (double)cl->hz;

	c->bot = lg_sched_is_bot(k, o->count, o->bots);
	cl->st.users_started++;
	cl->st.pop_users[c->bot ? LG_POP_BOTS : LG_POP_PEOPLE]++;
	if (o->arrive_before > 0 && k < cl->n_pre) {
		if (cl->st.arrived_pre++ == 0)
			cl->arr_first_pre = at;
		cl->arr_last_pre = at;
	} else if (o->arrive_before > 0) {
		if (cl->st.arrived_burst++ == 0)
			cl->arr_first_burst = at;
	}
	c->state = LG_CS_IDLE;
	idle_until(cl, c, now + think_cycles(cl, c), now);
}

static void
launch_honest(struct lg_client *cl, uint64_t now)
{
	const struct lg_opts *o = cl->o;

	if (o->rate > 0) {
		/* Token bucket refilled from the TSC, holding at most 1 ms of launches (at least
		 * one), so a stall is not followed by a burst. */
		double cap = o->rate / 1000.0 < 1 ? 1 : o->rate / 1000.0;

		cl->credit += (double)(now - cl->t_credit) * o->rate / (double)cl->hz;
		cl->t_credit = now;
		if (cl->credit > cap)
			cl->credit = cap;
	}
	for (unsigned k = 0; k < LG_BURST && cl->launched < o->count; k++) {
		/* Sale users arrive in order, each at its time: a pre-queue's over the span before
		 * the start, the others at the start (lg_sched.h). */
		if (o->mode == LG_MODE_SALE && now < arrival_tsc(cl, cl->launched))
			return;
		if (o->rate > 0) {
			if (cl->credit < 1)
				return;
			cl->credit -= 1;
		}
		if (o->mode == LG_MODE_SYN_FLOOD) {
			launch_syn_flood_mode(cl, now);
			cl->launched++;
			continue;
		}
		if (lg_mode_blast(o->mode)) {
			/* A second behind the data plane's clock: its worker may not have
			 * moved to a new slot yet, and accepts the one before as well. */
			if (k == 0)
				syncookie_tick(&cl->cookies, now_wall_ms() / 1000 - 1);
			launch_blast_mode(cl, now);
			cl->launched++;
			continue;
		}
		struct lg_conn *c = lg_table_take(cl->tab);

		if (c == NULL) {
			if (o->rate > 0)
				cl->credit += 1;
			return;
		}
		/* A user keeps its address across its connections, as a browser does. A kept
		 * client's requests are --per-conn users in a row (kept-reserve). */
		c->left = lg_mode_kept(o->mode) ? o->per_conn : 1;
		c->user = o->mode == LG_MODE_HEALTHZ || o->mode == LG_MODE_KEPT_HEALTHZ
				  ? cl->launched
			  : o->mode == LG_MODE_KEPT_RESERVE
				  ? o->user_base + cl->launched * o->per_conn
				  : o->user_base + cl->launched;
		c->cip = o->src_base + (uint32_t)(cl->launched % o->n_src);
		c->step = o->mode == LG_MODE_SALE ? LG_STEP_TOKEN : LG_STEP_HEALTHZ;
		c->attempts = 0;
		c->polls = 0;
		c->checking = 0;
		c->clicks = 0;
		c->bot = 0;
		c->plain_poll = 0;
		c->pow = LG_POW_NONE;
		c->last_pos = LG_POS_NONE;
		if (o->mode != LG_MODE_SALE) {
			cl->launched++;
			conn_open(cl, c, now);
			continue;
		}
		sale_arrive(cl, c, now);
		cl->launched++;
	}
}

void
lg_client_launch(struct lg_client *cl, uint64_t now)
{
	if (!cl->have_peer_mac)
		return;
	launch_honest(cl, now);
	/* Floods go on while the honest clients do, and stop with them. */
	if (cl->any_flood && !lg_client_honest_done(cl))
		launch_floods(cl, now);
}

static void
scan_table(struct lg_client *cl, struct lg_table *tab, uint64_t now)
{
	const struct lg_opts *o = cl->o;

	for (uint32_t i = 0; i < tab->n; i++) {
		struct lg_conn *c = &tab->c[i];

		if (c->state == LG_CS_FREE || now < c->t_due)
			continue;
		if (c->state == LG_CS_IDLE) {
			conn_open(cl, c, now);
			continue;
		}
		struct lg_flood_stats *fs = conn_flood(cl, c);

		if (c->rtx >= o->retries) {
			if (unlikely(fs != NULL))
				fs->timeouts++;
			else
				cl->st.conns_timeout++;
			conn_fail(cl, c);
			continue;
		}
		c->rtx++;
		if (unlikely(fs != NULL))
			fs->retransmits++;
		else
			cl->st.retransmits++;
		/* RFC 6298 §5.5: back off, doubling the timeout each time. */
		c->t_due = now + (cl->rto << c->rtx);
		if (c->state == LG_CS_SYN_SENT)
			send_syn(cl, c, now);
		else if (c->state == LG_CS_REQ_SENT)
			send_req(cl, c, now);
		else
			send_fin(cl, c, now);
	}
}

void
lg_client_timers(struct lg_client *cl, uint64_t now)
{
	struct lg_conn *c;

	/* Polls whose wait ended, at most a burst of them a call (as launches). */
	for (unsigned k = 0; k < LG_BURST && cl->tab != NULL &&
	     (c = lg_table_wake_next(cl->tab, now)) != NULL;
	     k++)
		conn_open(cl, c, now);
	/* Waits of other lengths whose time has come, as many a call. */
	for (unsigned k = 0; k < LG_BURST && cl->tab != NULL &&
	     (c = lg_table_timer_next(cl->tab, now)) != NULL;
	     k++)
		conn_open(cl, c, now);
	/* A scan of the tables each 1/4 of the first RTO is enough for timers of that size. */
	if (now < cl->t_next_scan)
		return;
	cl->t_next_scan = now + cl->rto / 4 + 1;
	if (cl->tab != NULL)
		scan_table(cl, cl->tab, now);
	if (cl->ftab != NULL && cl->ftab->active != 0)
		scan_table(cl, cl->ftab, now);
}

void
lg_client_set_start(struct lg_client *cl, uint64_t start)
{
	cl->t_start = start;
	cl->n_pre = cl->o->arrive_before > 0 ? lg_sched_pre_count(cl->o->count, cl->o->burst_pct)
					      : 0;
}

/* The next user in line for a solution who still waits for one, taken off the line; false if none. */
static bool
solve_next(struct lg_client *cl)
{
	while (cl->solve_n != 0) {
		struct lg_solve_wait w = cl->solve_q[cl->solve_head];
		const struct lg_conn *c = &cl->tab->c[w.slot];

		if (++cl->solve_head == cl->solve_cap)
			cl->solve_head = 0;
		cl->solve_n--;
		if (c->state != LG_CS_FREE && c->user == w.user && c->pow == LG_POW_WAITING) {
			struct lg_pow_challenge ch;

			/* The token's claim, which take_challenge() found equal to the answer's. */
			if (!lg_pow_of_token(c->token, strlen(c->token), &ch))
				continue;
			cl->solving_for = w;
			cl->solving_cycles = 0;
			lg_pow_start(&cl->solver, &ch);
			return true;
		}
	}
	return false;
}

void
lg_client_solve(struct lg_client *cl, uint64_t now)
{
	const struct lg_opts *o = cl->o;

	if (!cl->solving && !(cl->solving = solve_next(cl)))
		return;
	struct lg_conn *c = &cl->tab->c[cl->solving_for.slot];

	if (c->state == LG_CS_FREE || c->user != cl->solving_for.user || c->pow != LG_POW_WAITING) {
		cl->solving = false; /* the user ended meanwhile (a failed connection) */
		return;
	}
	uint64_t before = cl->solver.tries, left = o->pow_max_tries - before;
	uint64_t t0 = rte_get_tsc_cycles();
	bool found;

	if (o->pow_tries_per_loop == 0) {
		/* Whole, with pow_solve() (the run loop waits for it): the solver's own speed. */
		found = pow_solve(cl->solver.ch.prefix, cl->solver.ch.plen, cl->solver.ch.bits,
				left, cl->solver.nonce, &cl->solver.tries) == 0;
		cl->solver.nlen = (uint8_t)strlen(cl->solver.nonce);
		cl->solver.tries += before;
	} else {
		found = lg_pow_step(&cl->solver, left < o->pow_tries_per_loop
							 ? left
							 : o->pow_tries_per_loop);
	}
	uint64_t t1 = rte_get_tsc_cycles();

	cl->solving_cycles += t1 - t0;
	cl->st.pow_tries += cl->solver.tries - before;
	cl->st.pow_cycles += t1 - t0;
	if (!found && cl->solver.tries < o->pow_max_tries)
		return;
	cl->solving = false;
	if (!found) {
		cl->st.pow_unsolved++;
		c->pow = LG_POW_FAILED;
		if (c->state == LG_CS_IDLE)
			client_end(cl, c, LG_OUT_GAVE_UP);
		return;
	}
	memcpy(c->sol, cl->solver.nonce, (size_t)cl->solver.nlen + 1);
	c->pow = LG_POW_SOLVED;
	cl->st.pow_solved++;
	lg_hist_add(&cl->st.pow_cpu, cl->solving_cycles);
	lg_hist_add(&cl->st.pow_wait, t1 - c->t_chal);
	/* Its reserve goes when its think time is over too (conn_closed() when its token's
	 * connection is still closing). */
	if (c->state == LG_CS_IDLE)
		idle_until(cl, c, c->t_next > now ? c->t_next : t1, t1);
}

bool
lg_client_honest_done(const struct lg_client *cl)
{
	return cl->launched >= cl->o->count && (cl->tab == NULL || cl->tab->active == 0);
}

bool
lg_client_done(const struct lg_client *cl)
{
	return lg_client_honest_done(cl) && (cl->ftab == NULL || cl->ftab->active == 0);
}

/*
 * The floods' fixed texts: a session token, a purchase token and a reserve path of the right
 * form made under a random key (so their MACs are wrong), and the bad-ack flood's request; the
 * flood connection table. Returns 0, -EINVAL when a text does not fit, or -ENOMEM.
 */
static int
flood_init(struct lg_client *cl)
{
	const struct lg_opts *o = cl->o;
	struct tok_keyring forge;
	uint8_t secret[32];
	char seg[TOK_BUF_SIZE];
	uint64_t exp = (uint64_t)time(NULL) + 3600;
	int rc = 0, n;

	for (size_t i = 0; i < sizeof(secret); i += 8) {
		uint64_t r = rte_rand();

		memcpy(secret + i, &r, 8);
	}
	tok_keyring_init(&forge);
	if (tok_keyring_set(&forge, o->kid, secret, sizeof(secret), true) != 0 ||
		tok_session_mint(&forge, LG_FLOOD_USER_BASE, exp, cl->forged_session,
			sizeof(cl->forged_session)) < 0 ||
		tok_purchase_mint(&forge, o->event, LG_FLOOD_USER_BASE, exp, cl->forged_purchase,
			sizeof(cl->forged_purchase)) < 0 ||
		tok_path_mint(&forge, o->event, seg, sizeof(seg)) < 0)
		rc = -EINVAL;
	tok_keyring_wipe(&forge);
	if (rc != 0)
		return rc;
	n = snprintf(cl->reserve_path, sizeof(cl->reserve_path),
		"/api/v1/events/%" PRIu32 "/reserve/%s", o->event, seg);
	if (n < 0 || (size_t)n >= sizeof(cl->reserve_path))
		return -EINVAL;

	struct lg_flood_req x = {
		.event = o->event,
		.host = o->host,
		.forged_session = cl->forged_session,
	};

	n = lg_flood_request(
		cl->bad_ack_req, sizeof(cl->bad_ack_req), LG_STEP_FLOOD_SESSION_FORGED, &x);
	if (n < 0)
		return -EINVAL;
	cl->bad_ack_len = (uint16_t)n;
	cl->one_ip_user = LG_FLOOD_USER_BASE + 1;
	for (unsigned k = 0; k < LG_FLOOD_N; k++)
		cl->flood_credit[k] =
			1; /* each flood's first segment goes with the first clients */
	if (lg_opts_flood(o, LG_FLOOD_UNSIGNED) || lg_opts_flood(o, LG_FLOOD_ONE_IP)) {
		cl->ftab = lg_table_create(o->flood_concurrency, LG_PORT_BASE);
		if (cl->ftab == NULL)
			return -ENOMEM;
	}
	cl->stateless_port_lo = (uint16_t)(LG_PORT_BASE + (cl->ftab ? cl->ftab->n : 0));
	return 0;
}

int
lg_client_init(struct lg_client *cl, const struct lg_opts *o, uint16_t port_id,
	struct rte_mempool *pool, const struct rte_ether_addr *mac)
{
	memset(cl, 0, sizeof(*cl));
	cl->o = o;
	cl->port_id = port_id;
	cl->pool = pool;
	rte_ether_addr_copy(mac, &cl->link.our_mac);
	cl->hz = rte_get_tsc_hz();
	cl->rto = cl->hz / 1000 * o->rto_ms;
	cl->poll = cl->hz / 1000 * o->poll_ms;
	cl->t_credit = rte_get_tsc_cycles();
	cl->flood_salt = rte_rand();
	cl->ack_salt = rte_rand();
	cl->t_flood_credit = cl->t_credit;
	lg_client_set_start(cl, cl->t_credit);
	for (unsigned k = 0; k < LG_FLOOD_N; k++)
		cl->any_flood |= lg_opts_flood(o, (enum lg_flood_kind)k);
	if (cl->any_flood) {
		int rc = flood_init(cl);

		if (rc != 0) {
			fprintf(stderr,
				rc == -ENOMEM ? "loadgen: no memory for %u flood connection slots; "
						"lower --flood-concurrency\n"
					      : "loadgen: the floods' requests do not fit (--host "
						"too long?)\n",
				o->flood_concurrency);
			lg_table_free(cl->ftab);
			cl->ftab = NULL;
			return rc;
		}
	}
	if (lg_mode_blast(o->mode)) {
		const char *why = NULL;
		int n;

		cl->blast_exp = (uint64_t)time(NULL) + 3600;
		/* Each cause its own message: the key, the request's size, the cookies. */
		if (o->mode == LG_MODE_RESERVE_BLAST)
			n = reserve_request(cl->blast_req, sizeof(cl->blast_req), o, o->user_base,
				cl->blast_exp);
		else
			n = healthz_request(cl->blast_req, sizeof(cl->blast_req), o->host);
		if (n == -ENOKEY)
			why = "cannot mint the purchase tokens (is --sale-key-hex set?)";
		else if (n < 0 || (size_t)n >= sizeof(cl->blast_req))
			why = "the blast's request does not fit one frame (--host too long?)";
		if (why == NULL && syncookie_init(&cl->cookies, o->cookie_secret, o->cookie_slot_s,
					   now_wall_ms() / 1000) != 0)
			why = "cannot compute the data plane's cookies (--cookie-secret-hex, "
			      "--cookie-slot-s)";
		if (why != NULL) {
			fprintf(stderr, "loadgen: %s\n", why);
			lg_table_free(cl->ftab);
			cl->ftab = NULL;
			return -EINVAL;
		}
		cl->blast_req_len = (uint16_t)n;
	} else if (o->mode != LG_MODE_SYN_FLOOD) {
		cl->tab = lg_table_create(o->concurrency, LG_PORT_BASE);
		cl->solve_cap = o->concurrency * LG_WAKE_PER_SLOT;
		cl->solve_q = calloc(cl->solve_cap, sizeof(*cl->solve_q));
		if (cl->tab == NULL || cl->solve_q == NULL) {
			free(cl->solve_q);
			cl->solve_q = NULL;
			lg_table_free(cl->tab);
			cl->tab = NULL;
			fprintf(stderr,
				"loadgen: no memory for %u connection slots; lower "
				"--concurrency\n",
				o->concurrency);
			lg_table_free(cl->ftab);
			cl->ftab = NULL;
			return -ENOMEM;
		}
	}
	if (o->pcap_path != NULL) {
		int rc = lg_pcap_open(
			&cl->pcap, o->pcap_path, o->pcap_max, rte_get_tsc_cycles(), cl->hz);

		if (rc < 0) {
			fprintf(stderr, "loadgen: cannot create %s: %s\n", o->pcap_path,
				strerror(-rc));
			lg_table_free(cl->tab);
			cl->tab = NULL;
			lg_table_free(cl->ftab);
			cl->ftab = NULL;
			free(cl->solve_q);
			cl->solve_q = NULL;
			return rc;
		}
		cl->capturing = true;
	}
	return 0;
}

int
lg_client_fini(struct lg_client *cl)
{
	int rc = 0;

	if (cl->n_tx)
		lg_client_flush(cl);
	if (cl->capturing)
		rc = lg_pcap_close(&cl->pcap);
	cl->capturing = false;
	lg_table_free(cl->tab);
	cl->tab = NULL;
	lg_table_free(cl->ftab);
	cl->ftab = NULL;
	free(cl->solve_q);
	cl->solve_q = NULL;
	return rc;
}
