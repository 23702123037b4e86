/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet tests of admission: every route and every rejection reason, with
 * requests in real frames through pipeline_burst(), the shared state published
 * as the bridge would, and the ring and result table read as the bridge would.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/lib/dp_harness.h"
#include "tests/tap.h"

static struct dp_harness H;
static uint16_t next_port = 20000;
static uint32_t client_ip = PB_CL_IP;

#define EV_OPEN  1
#define EV_UP    2
#define EV_DONE  3
#define EV_OTHER 4

static struct dp_event_cfg events[4];
static uint8_t sold_out[4];
static struct dp_limits limits;
static const char *const *rules;

static void
publish(void)
{
	dph_publish(&H, events, sold_out, 4, rules, &limits);
}

struct answer {
	unsigned status;
	char text[1500]; /* headers and body, NUL-terminated */
	const char *body;
};

/* Sends req on a fresh connection from client_ip and parses the answer into a. */
static void
ask(const char *req, struct answer *a)
{
	uint16_t sport = next_port++;
	uint32_t isn = 77u * sport;
	struct pb_tcp syn = { .src_ip = client_ip, .sport = sport, .seq = isn,
		.flags = RTE_TCP_SYN_FLAG, .mss = 1460 };
	struct rte_mbuf *r = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &syn));

	memset(a, 0, sizeof(*a));
	if (r == NULL)
		return;
	uint32_t cookie = rte_be_to_cpu_32(pb_th(r)->sent_seq);

	rte_pktmbuf_free(r);
	struct pb_tcp t = { .src_ip = client_ip, .sport = sport, .seq = isn + 1, .ack = cookie + 1,
		.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, .payload = req,
		.payload_len = (uint16_t)strlen(req) };

	r = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t));
	if (r == NULL)
		return;
	uint16_t len;
	const char *p = pb_payload(r, &len);

	if (len >= sizeof(a->text))
		len = sizeof(a->text) - 1;
	memcpy(a->text, p, len);
	a->text[len] = '\0';
	if (len > 12 && memcmp(p, "HTTP/1.1 ", 9) == 0)
		a->status = (unsigned)atoi(a->text + 9);
	a->body = strstr(a->text, "\r\n\r\n");
	a->body = a->body ? a->body + 4 : "";
	rte_pktmbuf_free(r);
}

/* Copies the JSON string value of key from body into out; returns its length or -1. */
static int
json_str(const char *body, const char *key, char *out, size_t cap)
{
	char pat[64];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	p = strstr(body, pat);
	if (p == NULL)
		return -1;
	p += strlen(pat);
	e = strchr(p, '"');
	if (e == NULL || (size_t)(e - p) >= cap)
		return -1;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
	return (int)(e - p);
}

static bool
has(const struct answer *a, const char *needle)
{
	return strstr(a->text, needle) != NULL;
}

static void
session(uint64_t user, int64_t ttl_s, char *out)
{
	struct tok_keyring ring;

	tok_keyring_init(&ring);
	tok_keyring_set(&ring, DPH_AUTH_KID, (const uint8_t *)dph_auth_key, sizeof(dph_auth_key) - 1,
		true);
	if (tok_session_mint(&ring, user, (uint64_t)((int64_t)(H.w->now_ms / 1000) + ttl_s), out,
		    TOK_BUF_SIZE) < 0)
		abort();
}

static const struct tok_keyring *
sale_ring(void)
{
	return &H.w->sh->sale;
}

/* POST .../token for user; fills tok and path when the answer is 200. */
static void
get_token(uint32_t event, const char *sess, struct answer *a, char *tok, char *path)
{
	char req[512];

	snprintf(req, sizeof(req),
		"POST /api/v1/events/%u/token HTTP/1.1\r\nHost: s\r\nAuthorization: Bearer %s\r\n"
		"Content-Length: 0\r\n\r\n",
		event, sess);
	ask(req, a);
	if (tok)
		json_str(a->body, "token", tok, TOK_BUF_SIZE);
	if (path)
		json_str(a->body, "reserve_path", path, 128);
}

static void
reserve(const char *path, const char *tok, const char *extra, struct answer *a)
{
	char req[768];

	snprintf(req, sizeof(req), "POST %s HTTP/1.1\r\nHost: s\r\n%s%s%s%sContent-Length: 0\r\n\r\n",
		path, tok ? "X-Flash-Token: " : "", tok ? tok : "", tok ? "\r\n" : "",
		extra ? extra : "");
	ask(req, a);
}

static void
poll_result(uint32_t event, const char *tok, struct answer *a)
{
	char req[512];

	snprintf(req, sizeof(req),
		"GET /api/v1/events/%u/result HTTP/1.1\r\nHost: s\r\nX-Flash-Token: %s\r\n\r\n", event,
		tok);
	ask(req, a);
}

static unsigned
ring_count(void)
{
	return rte_ring_count(H.port.ring);
}

static bool
ring_pop(struct wire_reserve *r)
{
	return rte_ring_sc_dequeue_elem(H.port.ring, r, sizeof(*r)) == 0;
}

/* The result queries the worker sent, in their own ring. */
static unsigned
qring_count(void)
{
	return rte_ring_count(H.port.qring);
}

static bool
qring_pop(struct wire_result_query *q)
{
	return rte_ring_sc_dequeue_elem(H.port.qring, q, sizeof(*q)) == 0;
}

static void
ring_drain(void)
{
	struct wire_reserve r;
	struct wire_result_query q;

	while (ring_pop(&r))
		;
	while (qring_pop(&q))
		;
}

static uint64_t
rej(enum dp_reject_reason r)
{
	return H.w->ctr.reject[r];
}

/* Expects status and one more counted rejection of reason from the request that fill() sends. */
#define EXPECT_REJECT(a, want_status, reason, what, ...)                                            \
	do {                                                                                       \
		uint64_t before_ = rej(reason);                                                    \
		__VA_ARGS__;                                                                       \
		tap_eq_int((a).status, (want_status), what);                                       \
		tap_eq_int(rej(reason) - before_, 1, "  counted as " #reason);                     \
	} while (0)

static void
test_not_ready(void)
{
	struct answer a;
	char s[TOK_BUF_SIZE];

	session(42, 3600, s);
	EXPECT_REJECT(a, 503, DP_REJ_NOT_READY, "token before the first snapshot: 503",
		get_token(EV_OPEN, s, &a, NULL, NULL));
	tap_ok(has(&a, "Retry-After: 1\r\n"), "  with Retry-After");
	EXPECT_REJECT(a, 503, DP_REJ_NOT_READY, "reserve before the first snapshot: 503",
		reserve("/api/v1/events/1/reserve/7-AAAAAAAAAAAAAAAA", "p1.x", NULL, &a));
	EXPECT_REJECT(a, 503, DP_REJ_NOT_READY, "result before the first snapshot: 503",
		poll_result(EV_OPEN, "r1.x", &a));
	ask("GET /api/v1/events/2 HTTP/1.1\r\nHost: s\r\n\r\n", &a);
	tap_ok(a.status == 200 && has(&a, "\"state\":\"upcoming\""),
		"event info answers from the config's events before the snapshot");
	/* An event the config does not have may exist at the control plane: admission says
	 * "come back" (503), not "no such sale" (404), until the snapshot is here. */
	EXPECT_REJECT(a, 503, DP_REJ_NOT_READY, "a token for an unknown event before the snapshot",
		get_token(99, "s1.x", &a, NULL, NULL));
}

static void
test_token_route(void)
{
	struct answer a;
	char s[TOK_BUF_SIZE], tok[TOK_BUF_SIZE], path[128];

	EXPECT_REJECT(a, 401, DP_REJ_NO_SESSION, "token without Authorization: 401",
		ask("POST /api/v1/events/1/token HTTP/1.1\r\nHost: s\r\nContent-Length: 0\r\n\r\n",
			&a));
	EXPECT_REJECT(a, 401, DP_REJ_NO_SESSION, "token with Basic auth: 401",
		ask("POST /api/v1/events/1/token HTTP/1.1\r\nHost: s\r\nAuthorization: Basic "
		    "eDp5\r\nContent-Length: 0\r\n\r\n",
			&a));
	session(42, 3600, s);
	s[strlen(s) - 1] ^= 1;
	EXPECT_REJECT(a, 401, DP_REJ_SESSION_INVALID, "token with a tampered session: 401",
		get_token(EV_OPEN, s, &a, NULL, NULL));
	session(42, -1, s);
	EXPECT_REJECT(a, 401, DP_REJ_SESSION_EXPIRED, "token with an expired session: 401",
		get_token(EV_OPEN, s, &a, NULL, NULL));
	session(42, 3600, s);
	EXPECT_REJECT(a, 404, DP_REJ_NO_EVENT, "token for an unknown event: 404",
		get_token(99, s, &a, NULL, NULL));
	EXPECT_REJECT(a, 425, DP_REJ_TOO_EARLY, "token before the start: 425",
		get_token(EV_UP, s, &a, NULL, NULL));
	tap_ok(has(&a, "Retry-After: 3600\r\n"), "  Retry-After counts the seconds to the start");
	EXPECT_REJECT(a, 410, DP_REJ_CLOSED, "token after the end: 410",
		get_token(EV_DONE, s, &a, NULL, NULL));

	uint64_t issued = H.w->ctr.admit[DP_ADM_TOKEN_ISSUED];

	get_token(EV_OPEN, s, &a, tok, path);
	tap_eq_int(a.status, 200, "token with a valid session: 200");
	tap_eq_int(H.w->ctr.admit[DP_ADM_TOKEN_ISSUED] - issued, 1, "  counted as token_issued");

	struct tok_purchase pt;

	tap_eq_int(tok_purchase_verify(sale_ring(), tok, strlen(tok), EV_OPEN, H.w->now_ms / 1000,
			   &pt),
		TOK_OK, "  the purchase token verifies with the sale key");
	tap_ok(pt.user == 42 && pt.expires_s == H.w->now_ms / 1000 + 300,
		"  for user 42, expiring after purchase_token_ttl");
	char want[128], seg[TOK_BUF_SIZE];

	tok_path_mint(sale_ring(), EV_OPEN, seg, sizeof(seg));
	snprintf(want, sizeof(want), "/api/v1/events/1/reserve/%s", seg);
	tap_ok(strcmp(path, want) == 0, "  reserve_path is the hidden path of the sale key (%s)", path);
	tap_ok(has(&a, "\"expires_at\":") && has(&a, "\"server_time\":"), "  with expiry and time");
	ask("GET /api/v1/events/1/token HTTP/1.1\r\nHost: s\r\n\r\n", &a);
	tap_ok(a.status == 405 && has(&a, "Allow: POST, OPTIONS\r\n"), "GET on token: 405 + Allow");
}

static void
test_reserve_route(void)
{
	struct answer a;
	char s[TOK_BUF_SIZE], tok[TOK_BUF_SIZE], path[128], other_path[128];
	char tok4[TOK_BUF_SIZE], extra[256];
	struct wire_reserve rec;

	ring_drain();
	session(42, 3600, s);
	get_token(EV_OPEN, s, &a, tok, path);
	get_token(EV_OTHER, s, &a, tok4, other_path);

	uint64_t admitted = H.w->ctr.admit[DP_ADM_RESERVE_ADMITTED];

	reserve(path, tok, NULL, &a);
	tap_eq_int(a.status, 202, "reserve with the purchase token on the hidden path: 202");
	tap_eq_int(H.w->ctr.admit[DP_ADM_RESERVE_ADMITTED] - admitted, 1,
		"  counted as reserve_admitted");
	char receipt[TOK_BUF_SIZE];
	struct tok_receipt rc;

	tap_ok(json_str(a.body, "receipt", receipt, sizeof(receipt)) > 0 &&
		       tok_receipt_verify(sale_ring(), receipt, strlen(receipt), EV_OPEN, &rc) ==
			       TOK_OK &&
		       rc.user == 42,
		"  the receipt is signed, for user 42 and this event");
	tap_ok(has(&a, "\"status\":\"queued\"") && has(&a, "/api/v1/events/1/result"),
		"  says queued and where to poll");
	tap_eq_int(ring_count(), 1, "  one reservation handed to the bridge");
	if (ring_pop(&rec)) {
		tap_ok(rec.event == EV_OPEN && rec.user == 42 && rec.client_ipv4 == PB_CL_IP &&
			       rec.admitted_ms == rc.admitted_ms,
			"  the record: event, user, client address, admission time");
		tap_ok(rec.reservation_id != 0 && rec.reservation_id >> 54 == 3,
			"  reservation id carries the data plane id");
		uint64_t first = rec.reservation_id;

		reserve(path, tok, NULL, &a);
		ring_pop(&rec);
		tap_ok(a.status == 202 && rec.reservation_id == first + 1,
			"a second reservation gets the next id");
	}

	EXPECT_REJECT(a, 403, DP_REJ_BAD_PATH, "reserve on a guessed path: 403",
		reserve("/api/v1/events/1/reserve/7-AAAAAAAAAAAAAAAA", tok, NULL, &a));
	char bad_path[160];

	snprintf(bad_path, sizeof(bad_path), "/api/v1/events/1/reserve/%s",
		strrchr(other_path, '/') + 1);
	EXPECT_REJECT(a, 403, DP_REJ_BAD_PATH, "reserve with another event's path: 403",
		reserve(bad_path, tok, NULL, &a));
	EXPECT_REJECT(a, 403, DP_REJ_NO_TOKEN, "reserve without X-Flash-Token: 403",
		reserve(path, NULL, NULL, &a));
	char t2[TOK_BUF_SIZE];

	strcpy(t2, tok);
	t2[5] = t2[5] == '9' ? '8' : '9';
	EXPECT_REJECT(a, 403, DP_REJ_TOKEN_INVALID, "reserve with a tampered token: 403",
		reserve(path, t2, NULL, &a));
	EXPECT_REJECT(a, 403, DP_REJ_TOKEN_OTHER_EVENT, "reserve with another event's token: 403",
		reserve(path, tok4, NULL, &a));
	tok_purchase_mint(sale_ring(), EV_OPEN, 42, H.w->now_ms / 1000, t2, sizeof(t2));
	EXPECT_REJECT(a, 403, DP_REJ_TOKEN_EXPIRED, "reserve with an expired token: 403",
		reserve(path, t2, NULL, &a));
	char s43[TOK_BUF_SIZE];

	session(43, 3600, s43);
	snprintf(extra, sizeof(extra), "Authorization: Bearer %s\r\n", s43);
	EXPECT_REJECT(a, 403, DP_REJ_TOKEN_OTHER_USER,
		"reserve with user 42's token and user 43's session: 403",
		reserve(path, tok, extra, &a));
	snprintf(extra, sizeof(extra), "Authorization: Bearer %s\r\n", s);
	reserve(path, tok, extra, &a);
	tap_eq_int(a.status, 202, "reserve with the token and its user's own session: 202");
	ring_drain();
	tap_eq_int(ring_count(), 0, "nothing refused reached the bridge");
}

static void
test_bridge_full(void)
{
	struct answer a;
	char s[TOK_BUF_SIZE], tok[TOK_BUF_SIZE], path[128];
	unsigned ok = 0;

	ring_drain();
	session(50, 3600, s);
	get_token(EV_OPEN, s, &a, tok, path);
	/* The ring holds size - 1 records. */
	for (unsigned i = 0; i < rte_ring_get_capacity(H.port.ring); i++) {
		reserve(path, tok, NULL, &a);
		ok += a.status == 202;
	}
	tap_eq_int(ok, rte_ring_get_capacity(H.port.ring), "reserves fill the ring to the bridge");
	EXPECT_REJECT(a, 503, DP_REJ_BRIDGE_FULL, "a reserve with the ring full: 503",
		reserve(path, tok, NULL, &a));
	tap_ok(has(&a, "Retry-After: 1\r\n"), "  with Retry-After");
	ring_drain();
	reserve(path, tok, NULL, &a);
	tap_eq_int(a.status, 202, "once the bridge drained the ring: 202 again");
	ring_drain();
}

/* A stopping data plane takes no reservation (docs/dataplane.md "Stopping without dropping a
 * reservation"). */
static void
test_stopping(void)
{
	struct answer a;
	char s[TOK_BUF_SIZE], tok[TOK_BUF_SIZE], path[128];

	ring_drain();
	session(51, 3600, s);
	get_token(EV_OPEN, s, &a, tok, path);
	H.stopping = true;
	EXPECT_REJECT(a, 503, DP_REJ_STOPPING, "a reserve while the data plane stops: 503",
		reserve(path, tok, NULL, &a));
	tap_ok(has(&a, "Retry-After: 1\r\n"), "  with Retry-After");
	tap_eq_int(ring_count(), 0, "  and nothing reaches the bridge");
	H.stopping = false;
	reserve(path, tok, NULL, &a);
	tap_eq_int(a.status, 202, "the same reserve on a data plane that is not stopping: 202");
	ring_drain();
}

static void
test_limits(void)
{
	struct answer a;
	char s[TOK_BUF_SIZE], tok[TOK_BUF_SIZE], path[128], extra[128];

	/* Per user: 1/s, burst 2. */
	limits.user = (struct rl_params){ 1, 2 };
	publish();
	session(60, 3600, s);
	get_token(EV_OPEN, s, &a, tok, path);
	tap_eq_int(a.status, 200, "user limit 1/s burst 2: first token 200");
	get_token(EV_OPEN, s, &a, NULL, NULL);
	tap_eq_int(a.status, 200, "  second 200");
	EXPECT_REJECT(a, 429, DP_REJ_LIMIT_USER, "  third: 429",
		get_token(EV_OPEN, s, &a, NULL, NULL));
	tap_ok(has(&a, "Retry-After: 1\r\n"), "  with Retry-After");
	EXPECT_REJECT(a, 429, DP_REJ_LIMIT_USER, "  a reserve by the same user: 429",
		reserve(path, tok, NULL, &a));
	/* Forged tokens that claim user 62 are refused for their MAC and leave 62's bucket full. */
	char s62[TOK_BUF_SIZE], forged[TOK_BUF_SIZE];
	unsigned forged_403 = 0;

	session(62, 3600, s62);
	strcpy(forged, s62);
	forged[strlen(forged) - 2] ^= 1;
	for (int i = 0; i < 5; i++) {
		get_token(EV_OPEN, forged, &a, NULL, NULL);
		forged_403 += a.status == 401;
	}
	tap_eq_int(forged_403, 5, "five forged sessions claiming user 62: 401 each, not 429");
	get_token(EV_OPEN, s62, &a, NULL, NULL);
	tap_eq_int(a.status, 200, "  user 62's own session still gets its token (bucket not drained)");
	limits.user = (struct rl_params){ 1000, 1000 };

	/* Per device: 1/s, burst 1. */
	limits.device = (struct rl_params){ 1, 1 };
	publish();
	session(61, 3600, s);
	get_token(EV_OPEN, s, &a, tok, path);
	snprintf(extra, sizeof(extra), "X-Device-Id: phone-1\r\n");
	reserve(path, tok, extra, &a);
	tap_eq_int(a.status, 202, "device limit 1/s: first reserve from phone-1 202");
	EXPECT_REJECT(a, 429, DP_REJ_LIMIT_DEVICE, "  second from phone-1: 429",
		reserve(path, tok, extra, &a));
	/* Issue 16 item 11: the device's bucket is shed before the purchase token's HMAC: a
	 * forged token from phone-1 is 429, not 403 invalid, and drains nothing (phone-3 below). */
	snprintf(forged, sizeof(forged), "%s", tok);
	forged[strlen(forged) - 1] = forged[strlen(forged) - 1] == 'A' ? 'B' : 'A';
	uint64_t invalid = rej(DP_REJ_TOKEN_INVALID);

	EXPECT_REJECT(a, 429, DP_REJ_LIMIT_DEVICE,
		"  a forged token from phone-1: 429 before the HMAC", reserve(path, forged, extra, &a));
	tap_eq_int(rej(DP_REJ_TOKEN_INVALID) - invalid, 0, "    the token was not verified");
	EXPECT_REJECT(a, 403, DP_REJ_TOKEN_INVALID, "  a forged token from phone-3: 403 invalid",
		reserve(path, forged, "X-Device-Id: phone-3\r\n", &a));
	reserve(path, tok, "X-Device-Id: phone-3\r\n", &a);
	tap_eq_int(a.status, 202, "    and phone-3's bucket was only looked at: its reserve 202");
	reserve(path, tok, "X-Device-Id: phone-2\r\n", &a);
	tap_eq_int(a.status, 202, "  another device: 202");
	limits.device = (struct rl_params){ 1000, 1000 };

	/* The event's forward budget: 2 per second. */
	limits.event_forward = (struct rl_params){ 2, 0 };
	publish();
	unsigned ok = 0;

	for (int i = 0; i < 2; i++) {
		reserve(path, tok, NULL, &a);
		ok += a.status == 202;
	}
	tap_eq_int(ok, 2, "forward budget 2/s: two reserves 202");
	EXPECT_REJECT(a, 429, DP_REJ_FORWARD_BUDGET, "  the third: 429",
		reserve(path, tok, NULL, &a));
	limits.event_forward = (struct rl_params){ 0, 0 };

	/* Per IP: 1/s burst 1, from a new address. */
	limits.ip = (struct rl_params){ 1, 1 };
	publish();
	client_ip = RTE_IPV4(198, 18, 1, 77);
	ask("GET /api/v1/events/1/result HTTP/1.1\r\nHost: s\r\nX-Flash-Token: x\r\n\r\n", &a);
	tap_eq_int(a.status, 403, "IP limit 1/s: the first request goes through (403: bad token)");
	EXPECT_REJECT(a, 429, DP_REJ_LIMIT_IP, "  the second from that address: 429",
		get_token(EV_OPEN, s, &a, NULL, NULL));
	ask("GET /api/v1/events/1 HTTP/1.1\r\nHost: s\r\n\r\n", &a);
	tap_eq_int(a.status, 200, "  the event's public info is not limited");
	client_ip = PB_CL_IP;
	limits.ip = (struct rl_params){ 0, 0 };
	publish();
	ring_drain();
}

static void
test_rules(void)
{
	struct answer a;
	char s[TOK_BUF_SIZE], s42[TOK_BUF_SIZE], tok[TOK_BUF_SIZE], path[128];
	static const char *const by_ip[] = { "ip 198.18.0.0/24", NULL };
	static const char *const by_user[] = { "user 42", "device stolen-phone", NULL };

	session(70, 3600, s);
	session(42, 3600, s42);
	get_token(EV_OPEN, s, &a, tok, path);
	rules = by_ip;
	publish();
	EXPECT_REJECT(a, 403, DP_REJ_BLOCKED_IP, "a rule blocks the client's /24: token 403",
		get_token(EV_OPEN, s, &a, NULL, NULL));
	EXPECT_REJECT(a, 403, DP_REJ_BLOCKED_IP, "  reserve 403", reserve(path, tok, NULL, &a));
	client_ip = RTE_IPV4(198, 18, 1, 9);
	get_token(EV_OPEN, s, &a, NULL, NULL);
	tap_eq_int(a.status, 200, "  another network is not blocked");
	client_ip = PB_CL_IP;

	/* A new snapshot replaces the rules, not adds to them. */
	rules = by_user;
	publish();
	get_token(EV_OPEN, s, &a, NULL, NULL);
	tap_eq_int(a.status, 200, "a snapshot that replaces the rules unblocks the /24");
	EXPECT_REJECT(a, 403, DP_REJ_BLOCKED_USER, "  and blocks user 42: token 403",
		get_token(EV_OPEN, s42, &a, NULL, NULL));
	EXPECT_REJECT(a, 403, DP_REJ_BLOCKED_DEVICE, "  and the device stolen-phone: reserve 403",
		reserve(path, tok, "X-Device-Id: stolen-phone\r\n", &a));
	reserve(path, tok, "X-Device-Id: fine-phone\r\n", &a);
	tap_eq_int(a.status, 202, "  another device: 202");

	/* Issue 16 item 11: blocked users and devices are shed before the token's HMAC, by what
	 * the request claims: a forged token or session of user 42 is "blocked", not "invalid"
	 * (the counters say which check refused it). */
	char t42[TOK_BUF_SIZE], bad_s42[TOK_BUF_SIZE], bad_tok[TOK_BUF_SIZE];
	uint64_t invalid = rej(DP_REJ_TOKEN_INVALID), sinvalid = rej(DP_REJ_SESSION_INVALID);

	tok_purchase_mint(sale_ring(), EV_OPEN, 42, H.w->now_ms / 1000 + 600, t42, sizeof(t42));
	t42[strlen(t42) - 1] = t42[strlen(t42) - 1] == 'A' ? 'B' : 'A';
	EXPECT_REJECT(a, 403, DP_REJ_BLOCKED_USER,
		"a blocked user's reserve with a bad signature: 403 blocked", reserve(path, t42, NULL, &a));
	snprintf(bad_s42, sizeof(bad_s42), "%s", s42);
	bad_s42[strlen(bad_s42) - 1] = bad_s42[strlen(bad_s42) - 1] == 'A' ? 'B' : 'A';
	EXPECT_REJECT(a, 403, DP_REJ_BLOCKED_USER,
		"  its token request with a bad session signature: 403 blocked",
		get_token(EV_OPEN, bad_s42, &a, NULL, NULL));
	snprintf(bad_tok, sizeof(bad_tok), "%s", tok);
	bad_tok[strlen(bad_tok) - 1] = bad_tok[strlen(bad_tok) - 1] == 'A' ? 'B' : 'A';
	EXPECT_REJECT(a, 403, DP_REJ_BLOCKED_DEVICE,
		"  a bad signature from the blocked device: 403 blocked",
		reserve(path, bad_tok, "X-Device-Id: stolen-phone\r\n", &a));
	tap_eq_int(rej(DP_REJ_TOKEN_INVALID) - invalid, 0,
		"  none of them was verified: token_invalid did not grow");
	tap_eq_int(rej(DP_REJ_SESSION_INVALID) - sinvalid, 0, "  nor session_invalid");
	EXPECT_REJECT(a, 403, DP_REJ_TOKEN_INVALID,
		"  a bad signature of a user not blocked: 403 invalid (verified)",
		reserve(path, bad_tok, NULL, &a));
	rules = NULL;
	publish();
	ring_drain();
}

static void
test_sold_out(void)
{
	struct answer a;
	char s[TOK_BUF_SIZE], tok[TOK_BUF_SIZE], path[128];

	session(80, 3600, s);
	get_token(EV_OPEN, s, &a, tok, path);
	ring_drain();
	/* The control plane says sold out between two requests of a stream. */
	sold_out[0] = 1;
	publish();
	EXPECT_REJECT(a, 410, DP_REJ_SOLD_OUT, "after SOLD_OUT arrives: reserve 410",
		reserve(path, tok, NULL, &a));
	tap_eq_int(ring_count(), 0, "  answered here: nothing goes to the control plane");
	EXPECT_REJECT(a, 410, DP_REJ_SOLD_OUT, "  token 410", get_token(EV_OPEN, s, &a, NULL, NULL));
	ask("GET /api/v1/events/1 HTTP/1.1\r\nHost: s\r\n\r\n", &a);
	tap_ok(has(&a, "\"state\":\"sold_out\""), "  the event's state says sold_out");
	tap_eq_int(worker_events(H.w)->selling, 3, "  3 of the 4 events still count as selling");
	/* Every sale sold out: reserves with a device id are still answered 410 (the device's
	 * key is no longer made while parsing). */
	memset(sold_out, 1, sizeof(sold_out));
	publish();
	tap_eq_int(worker_events(H.w)->selling, 0, "every event sold out: none selling");
	EXPECT_REJECT(a, 410, DP_REJ_SOLD_OUT, "  a reserve with X-Device-Id: 410",
		reserve(path, tok, "X-Device-Id: dev-sold\r\n", &a));
	memset(sold_out, 0, sizeof(sold_out));
	publish();
	reserve(path, tok, NULL, &a);
	tap_eq_int(a.status, 202, "a restock clears it: reserve 202");
	ring_drain();
}

static void
test_result_route(void)
{
	struct answer a;
	char s[TOK_BUF_SIZE], tok[TOK_BUF_SIZE], path[128], receipt[TOK_BUF_SIZE];
	char r91[TOK_BUF_SIZE];

	session(90, 3600, s);
	get_token(EV_OPEN, s, &a, tok, path);
	reserve(path, tok, NULL, &a);
	json_str(a.body, "receipt", receipt, sizeof(receipt));
	ring_drain();

	uint64_t queued = H.w->ctr.admit[DP_ADM_RESULT_QUEUED];

	poll_result(EV_OPEN, receipt, &a);
	tap_ok(a.status == 200 && has(&a, "\"status\":\"queued\""),
		"a young receipt without a result: queued");
	tap_eq_int(H.w->ctr.admit[DP_ADM_RESULT_QUEUED] - queued, 1, "  counted as result_queued");
	tap_eq_int(ring_count() + qring_count(), 0, "  without asking the control plane");

	tok_receipt_mint(sale_ring(), EV_OPEN, 90, H.w->now_ms - 20000, r91, sizeof(r91));
	poll_result(EV_OPEN, r91, &a);
	tap_ok(a.status == 200 && has(&a, "\"status\":\"queued\""), "an old receipt: queued");
	struct wire_result_query qrec;

	tap_ok(qring_pop(&qrec) && qrec.user == 90 && qrec.event == EV_OPEN && ring_count() == 0,
		"  and a result query for (event, user) goes to the control plane, in its own ring");

	tok_receipt_mint(sale_ring(), EV_OPEN, 90, H.w->now_ms - 31000, r91, sizeof(r91));
	uint64_t lost = H.w->ctr.admit[DP_ADM_RESULT_LOST];

	poll_result(EV_OPEN, r91, &a);
	tap_ok(a.status == 200 && has(&a, "\"status\":\"retry\""),
		"a receipt past receipt_retry without a result: retry (reserve again)");
	tap_eq_int(H.w->ctr.admit[DP_ADM_RESULT_LOST] - lost, 1, "  counted as result_lost");
	ring_drain();

	struct rt_result res = { .reservation_id = 5, .verdict = WIRE_V_RESERVED };

	result_table_put(H.results, EV_OPEN, 90, &res);
	poll_result(EV_OPEN, receipt, &a);
	tap_ok(a.status == 200 && has(&a, "\"status\":\"reserved\"") && !has(&a, "order_id"),
		"a result in the table: reserved");
	poll_result(EV_OPEN, tok, &a);
	tap_ok(a.status == 200 && has(&a, "\"status\":\"reserved\""),
		"  the purchase token polls too");
	res = (struct rt_result){ .reservation_id = 5, .order_id = 123456, .pay_deadline_ms = 1700,
		.verdict = WIRE_V_ORDERED };
	result_table_put(H.results, EV_OPEN, 90, &res);
	poll_result(EV_OPEN, receipt, &a);
	tap_ok(has(&a, "\"status\":\"ordered\",\"order_id\":123456,\"pay_deadline\":1700"),
		"ordered: with the order id and the pay deadline");

	/* Issue 16 item 4: a RETRY stored for user 92's first attempt does not answer the poll of
	 * a young receipt (a newer attempt, on its way); an old receipt and the purchase token
	 * see it. */
	res = (struct rt_result){ .reservation_id = 7, .verdict = WIRE_V_RETRY };
	result_table_put(H.results, EV_OPEN, 92, &res);
	tok_receipt_mint(sale_ring(), EV_OPEN, 92, H.w->now_ms - 1000, r91, sizeof(r91));
	poll_result(EV_OPEN, r91, &a);
	tap_ok(a.status == 200 && has(&a, "\"status\":\"queued\""),
		"a stored retry and a young receipt (a newer attempt): queued");
	tok_receipt_mint(sale_ring(), EV_OPEN, 92, H.w->now_ms - 15000, r91, sizeof(r91));
	poll_result(EV_OPEN, r91, &a);
	tap_ok(a.status == 200 && has(&a, "\"status\":\"retry\""),
		"  a stored retry and a receipt past receipt_young: retry (reserve again)");
	ring_drain();

	/* User 91 has another result; each receipt shows only its own user's. */
	res = (struct rt_result){ .reservation_id = 6, .verdict = WIRE_V_SOLD_OUT };
	result_table_put(H.results, EV_OPEN, 91, &res);
	tok_receipt_mint(sale_ring(), EV_OPEN, 91, H.w->now_ms, r91, sizeof(r91));
	poll_result(EV_OPEN, r91, &a);
	tap_ok(has(&a, "\"status\":\"sold_out\"") && !has(&a, "123456"),
		"another user's receipt shows only that user's result");
	poll_result(EV_OPEN, receipt, &a);
	tap_ok(has(&a, "\"status\":\"ordered\""), "  and user 90's still shows user 90's");

	char bad[TOK_BUF_SIZE];

	strcpy(bad, receipt);
	bad[3] = bad[3] == '9' ? '8' : '9';
	EXPECT_REJECT(a, 403, DP_REJ_TOKEN_INVALID, "a forged receipt: 403",
		poll_result(EV_OPEN, bad, &a));
	EXPECT_REJECT(a, 403, DP_REJ_TOKEN_OTHER_EVENT, "a receipt of another event: 403",
		poll_result(EV_OTHER, receipt, &a));
	EXPECT_REJECT(a, 403, DP_REJ_NO_TOKEN, "a poll without a token: 403",
		ask("GET /api/v1/events/1/result HTTP/1.1\r\nHost: s\r\n\r\n", &a));
	EXPECT_REJECT(a, 404, DP_REJ_NO_EVENT, "a poll for an unknown event: 404",
		poll_result(99, receipt, &a));
	tok_purchase_mint(sale_ring(), EV_OPEN, 90, H.w->now_ms / 1000, bad, sizeof(bad));
	EXPECT_REJECT(a, 403, DP_REJ_TOKEN_EXPIRED, "an expired purchase token: 403",
		poll_result(EV_OPEN, bad, &a));
	tap_ok(has(&a, "poll with the receipt"), "  telling the client to poll with the receipt");
	ring_drain();
}

/*
 * A storm of polls of users without a result while reservations flow (issue 15 item 3): the
 * queries fill their own ring, never the reservations'; every poll is answered (200, or 429
 * over the user's poll limit), what is shed is counted, and a reservation still goes through.
 */
static void
test_poll_storm(void)
{
	struct answer a;
	char s[TOK_BUF_SIZE], tok[TOK_BUF_SIZE], path[128];
	unsigned answered = 0, limited = 0, other = 0;
	uint64_t refused0 = H.port.queries_refused, queried0 = H.w->ctr.admit[DP_ADM_RESULT_QUERY];
	uint64_t cooled0 = H.w->ctr.admit[DP_ADM_RESULT_COOLED];
	uint64_t lim0 = rej(DP_REJ_LIMIT_POLL);

	ring_drain();
	/* 60 users poll with their purchase tokens, 12 times each: 720 polls, no result for any. */
	for (uint64_t u = 2000; u < 2060; u++) {
		tok_purchase_mint(sale_ring(), EV_OPEN, u, H.w->now_ms / 1000 + 300, tok,
			sizeof(tok));
		for (int i = 0; i < 12; i++) {
			poll_result(EV_OPEN, tok, &a);
			if (a.status == 200 && has(&a, "\"status\":\"queued\""))
				answered++;
			else if (a.status == 429 && has(&a, "too many polls for this user"))
				limited++;
			else
				other++;
		}
	}
	tap_ok(other == 0 && answered + limited == 720,
		"poll storm: all 720 polls answered, 200 queued or 429 (%u, %u, %u other)", answered,
		limited, other);
	tap_eq_int(limited, 60 * 2, "  each user's polls past the burst of 10: 429");
	tap_eq_int(rej(DP_REJ_LIMIT_POLL) - lim0, 120, "  counted as limit_poll");
	tap_eq_int(H.w->ctr.admit[DP_ADM_RESULT_QUERY] - queried0, 15,
		"  a query per user while the query ring had room (15 slots)");
	tap_eq_int(H.port.queries_refused - refused0, 45,
		"  the other 45 users' queries refused, counted");
	tap_eq_int(H.w->ctr.admit[DP_ADM_RESULT_COOLED] - cooled0, 60 * 9,
		"  every user's later polls within the cooldown ask nothing, counted");
	tap_eq_int(ring_count(), 0, "  not one query in the reservations' ring");

	session(2100, 3600, s);
	get_token(EV_OPEN, s, &a, tok, path);
	reserve(path, tok, NULL, &a);
	tap_eq_int(a.status, 202, "a reservation during the storm: 202 (its ring is free)");
	tap_eq_int(ring_count(), 1, "  handed to the bridge");
	ring_drain();
}

/*
 * A reserve from a user whose result is here (reserved, ordered, paid, ...) is answered from the
 * result table: 200 with that result, nothing to the control plane, no forward budget taken.
 */
static void
test_known_buyer(void)
{
	struct answer a;
	char s[TOK_BUF_SIZE], tok[TOK_BUF_SIZE], path[128];
	static const struct {
		uint8_t verdict;
		const char *status;
	} known[] = {
		{WIRE_V_RESERVED, "reserved"}, {WIRE_V_ORDERED, "ordered"},
		{WIRE_V_DUPLICATE, "duplicate"}, {WIRE_V_PAID, "paid"},
		{WIRE_V_EXPIRED, "expired"}, {WIRE_V_CANCELLED, "cancelled"},
	};

	ring_drain();
	/* The forward budget: one reservation for the event, then 429; its bucket starts full. */
	limits.event_forward = (struct rl_params){1, 1};
	publish();
	for (unsigned i = 0; i < DP_MAX_EVENTS; i++)
		H.w->budget[i].event = 0;
	for (unsigned i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		uint64_t u = 2200 + i, k0 = H.w->ctr.admit[DP_ADM_RESERVE_KNOWN];
		struct rt_result r = {.reservation_id = 900 + i, .verdict = known[i].verdict};

		if (known[i].verdict >= WIRE_V_ORDERED) {
			r.order_id = 5000 + i;
			r.pay_deadline_ms = 1700000000000 + i;
		}
		result_table_put(H.results, EV_OPEN, u, &r);
		session(u, 3600, s);
		get_token(EV_OPEN, s, &a, tok, path);
		reserve(path, tok, NULL, &a);
		char want[64];

		snprintf(want, sizeof(want), "\"status\":\"%s\"", known[i].status);
		tap_ok(a.status == 200 && has(&a, want) &&
				(r.order_id == 0 || has(&a, "\"order_id\":")) && ring_count() == 0 &&
				H.w->ctr.admit[DP_ADM_RESERVE_KNOWN] - k0 == 1,
			"a %s user reserving again: 200 with the result, nothing forwarded",
			known[i].status);
	}
	/* The budget of 1 is still whole: a new buyer takes it, the next is over it. */
	session(2300, 3600, s);
	get_token(EV_OPEN, s, &a, tok, path);
	reserve(path, tok, NULL, &a);
	tap_ok(a.status == 202 && ring_count() == 1,
		"  the known buyers took nothing of the forward budget: a new buyer goes through "
		"(%d %s)", a.status, a.body);
	struct rt_result so = {.reservation_id = 999, .verdict = WIRE_V_SOLD_OUT};

	result_table_put(H.results, EV_OPEN, 2301, &so);
	session(2301, 3600, s);
	get_token(EV_OPEN, s, &a, tok, path);
	reserve(path, tok, NULL, &a);
	tap_ok(a.status == 429 && has(&a, "too many buyers at once"),
		"  a user told sold out before is no known buyer: the budget decides (429)");
	limits.event_forward = (struct rl_params){0, 0};
	publish();
	ring_drain();
}

static void
test_cors(void)
{
	struct answer a;
	const char *origin = "https://shop.example";

	strcpy(H.w->cors_origin, origin);
	H.w->cors_len = (uint8_t)strlen(origin);
	ask("GET /api/v1/events/1 HTTP/1.1\r\nHost: s\r\nOrigin: https://shop.example\r\n\r\n", &a);
	tap_ok(has(&a, "Access-Control-Allow-Origin: https://shop.example\r\nVary: Origin\r\n"),
		"the shop's origin gets Access-Control-Allow-Origin");
	ask("GET /api/v1/events/1 HTTP/1.1\r\nHost: s\r\nOrigin: https://evil.example\r\n\r\n", &a);
	tap_ok(a.status == 200 && !has(&a, "Access-Control"), "another origin gets no CORS header");
	ask("POST /api/v1/events/1/token HTTP/1.1\r\nHost: s\r\nOrigin: https://shop.example\r\n"
	    "Content-Length: 0\r\n\r\n",
		&a);
	tap_ok(a.status == 401 && has(&a, "Access-Control-Allow-Origin: https://shop.example"),
		"refusals carry CORS too, so the page can read them");
	ask("OPTIONS /api/v1/events/1/reserve/x HTTP/1.1\r\nHost: s\r\nOrigin: https://shop.example\r\n"
	    "Access-Control-Request-Method: POST\r\n\r\n",
		&a);
	tap_ok(a.status == 204 && has(&a, "Access-Control-Allow-Methods: POST, OPTIONS\r\n") &&
		       has(&a, "Access-Control-Allow-Headers: Authorization, X-Flash-Token") &&
		       !has(&a, "Content-Length"),
		"preflight: 204 with methods and headers, no Content-Length");
	ask("OPTIONS /healthz HTTP/1.1\r\nHost: s\r\nOrigin: https://evil.example\r\n\r\n", &a);
	tap_ok(a.status == 204 && !has(&a, "Access-Control-Allow-Origin"),
		"preflight from another origin: no Access-Control-Allow-Origin");
	H.w->cors_len = 0;
	ask("GET /api/v1/events/1 HTTP/1.1\r\nHost: s\r\nOrigin: https://shop.example\r\n\r\n", &a);
	tap_ok(!has(&a, "Access-Control"), "without cors_origin no CORS header at all");
}

/*
 * Sends req on a connection whose SYN announced mss; the answer's frames to tx, their count
 * returned; *isn and *cookie are the connection's.
 */
static uint16_t
request_mss(const char *req, uint16_t sport, uint16_t mss, struct rte_mbuf **tx, uint32_t *isn,
	uint32_t *cookie)
{
	struct pb_tcp t = { .src_ip = client_ip, .sport = sport, .seq = *isn = 7000u * sport,
		.flags = RTE_TCP_SYN_FLAG, .mss = mss };
	struct rte_mbuf *s = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t));
	struct rte_mbuf *m;

	if (s == NULL)
		return 0;
	*cookie = rte_be_to_cpu_32(pb_th(s)->sent_seq);
	rte_pktmbuf_free(s);
	m = pb_request(dph_mbuf(&H), *isn, *cookie, req, sport);
	return pipeline_burst(H.w, 0, &m, 1, tx);
}

/*
 * An answer longer than the client's MSS goes out in several segments at once (FIN on the
 * last): MSS 536 and the longest CORS origin (admission.cors_origin, 127 bytes).
 */
static void
test_segments(void)
{
	char origin[128], req[512], whole[2048], got[2048];
	struct rte_mbuf *tx[PIPELINE_TX_PER_RX];
	unsigned avail = rte_mempool_avail_count(H.pool);
	uint32_t isn, c;
	uint16_t n, whole_len = 0, got_len = 0;

	memcpy(origin, "https://", 8);
	memset(origin + 8, 'a', 127 - 8 - 8);
	memcpy(origin + 127 - 8, ".example", 9);
	memcpy(H.w->cors_origin, origin, 127);
	H.w->cors_len = 127;
	char name[DP_EVENT_NAME_MAX];

	/* An event whose name (63 bytes, 21 quotes escaped in JSON) and the origin make an
	 * answer longer than 536 bytes. */
	memcpy(name, events[0].name, sizeof(name));
	for (unsigned i = 0; i < 63; i++)
		events[0].name[i] = i % 3 == 0 ? '"' : 'x';
	events[0].name[63] = '\0';
	publish();
	snprintf(req, sizeof(req),
		"GET /api/v1/events/%u HTTP/1.1\r\nHost: s\r\nOrigin: %s\r\n\r\n", EV_OPEN,
		origin);

	/* The whole answer, in one segment to a client of MSS 1460. */
	n = request_mss(req, 47100, 1460, tx, &isn, &c);
	if (tap_eq_int(n, 1, "MSS 1460: the answer is one segment")) {
		const char *p = pb_payload(tx[0], &whole_len);

		memcpy(whole, p, whole_len);
		tap_ok(whole_len > 536 && memcmp(p, "HTTP/1.1 200 ", 13) == 0 &&
			       memmem(p, whole_len, origin, 127) != NULL,
			"  200 with the 127-byte origin, %u bytes: more than 536", whole_len);
	}
	rte_pktmbuf_free_bulk(tx, n);

	uint64_t more = H.w->ctr.answers[DP_ANS_HTTP_MORE_SEGMENTS];
	uint16_t req_len = (uint16_t)strlen(req);
	unsigned want = (whole_len + 535u) / 536;
	bool seq_ok = true, len_ok = true, cksum_ok = true, flags_ok = true;

	n = request_mss(req, 47101, 536, tx, &isn, &c);
	tap_ok(n >= 2 && n == want, "MSS 536: the answer is %u segments (%u bytes)", n, whole_len);
	for (uint16_t i = 0; i < n; i++) {
		struct rte_tcp_hdr *th = pb_th(tx[i]);
		uint16_t len;
		const char *p = pb_payload(tx[i], &len);
		uint8_t want_flags = RTE_TCP_ACK_FLAG;

		if (i + 1 == n)
			want_flags |= RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG;

		seq_ok &= rte_be_to_cpu_32(th->sent_seq) == c + 1 + got_len &&
			  rte_be_to_cpu_32(th->recv_ack) == isn + 1 + req_len;
		len_ok &= len <= 536 && (i + 1 == n || len == 536) && len > 0;
		cksum_ok &= pb_ip_ok(pb_ip(tx[i])) && pb_tcp_ok(pb_ip(tx[i])) &&
			    rte_be_to_cpu_16(pb_ip(tx[i])->total_length) == 40 + len;
		flags_ok &= th->tcp_flags == want_flags && th->src_port == RTE_BE16(80) &&
			    th->dst_port == rte_cpu_to_be_16(47101);
		if (got_len + len <= sizeof(got))
			memcpy(got + got_len, p, len);
		got_len = (uint16_t)(got_len + len);
	}
	tap_ok(seq_ok, "  each seq follows the last (from cookie + 1), each acks the request");
	tap_ok(len_ok, "  every segment holds at most 536 bytes, all but the last exactly 536");
	tap_ok(cksum_ok, "  IPv4 and TCP checksums and lengths are right in every segment");
	tap_ok(flags_ok, "  FIN (with PSH) only on the last; ports turned round");
	tap_ok(got_len == whole_len && memcmp(got, whole, whole_len) == 0,
		"  the segments put together are the whole answer (%u of %u bytes)", got_len,
		whole_len);
	tap_eq_int(H.w->ctr.answers[DP_ANS_HTTP_MORE_SEGMENTS] - more, n - 1,
		"  counted as http_more_segments");
	rte_pktmbuf_free_bulk(tx, n);
	tap_eq_int(rte_mempool_avail_count(H.pool), avail, "  no mbuf is leaked");

	/* An empty pool: nothing is sent (the request is not acknowledged, the client sends it
	 * again), the request's mbuf is freed, and it is counted. */
	unsigned left = rte_mempool_avail_count(H.pool);
	struct rte_mbuf **hold = calloc(left, sizeof(*hold));
	struct pb_tcp t = { .src_ip = client_ip, .sport = 47102, .seq = 11,
		.flags = RTE_TCP_SYN_FLAG, .mss = 536 };
	struct rte_mbuf *s = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t)), *m;
	uint64_t before = H.w->ctr.drops[DP_DROP_ANSWER_NO_MBUF];

	c = rte_be_to_cpu_32(pb_th(s)->sent_seq);
	m = pb_request(s, 11, c, req, 47102);
	if (hold != NULL && rte_pktmbuf_alloc_bulk(H.pool, hold, left - 1) == 0) {
		n = pipeline_burst(H.w, 0, &m, 1, tx);
		tap_eq_int(n, 0, "an empty pool: no segment of the answer is sent");
		tap_eq_int(H.w->ctr.drops[DP_DROP_ANSWER_NO_MBUF] - before, 1,
			"  counted as answer_no_mbuf");
		rte_pktmbuf_free_bulk(hold, left - 1);
	} else {
		tap_ok(0, "could not empty the pool");
		rte_pktmbuf_free(m);
	}
	free(hold);
	tap_eq_int(rte_mempool_avail_count(H.pool), avail, "  and its frame went back to the pool");
	H.w->cors_len = 0;
	memcpy(events[0].name, name, sizeof(name));
	publish();
}

/*
 * Sends req on a connection whose SYN announced mss and puts the answer's segments together in
 * a (status, text, body). Returns the number of segments.
 */
static uint16_t
ask_mss(const char *req, uint16_t mss, struct answer *a)
{
	struct rte_mbuf *tx[PIPELINE_TX_PER_RX];
	uint32_t isn, c;
	uint16_t n = request_mss(req, next_port++, mss, tx, &isn, &c);
	size_t len = 0;

	memset(a, 0, sizeof(*a));
	for (uint16_t i = 0; i < n; i++) {
		uint16_t l;
		const char *p = pb_payload(tx[i], &l);

		if (len + l < sizeof(a->text)) {
			memcpy(a->text + len, p, l);
			len += l;
		}
	}
	rte_pktmbuf_free_bulk(tx, n);
	a->text[len] = '\0';
	if (len > 12 && memcmp(a->text, "HTTP/1.1 ", 9) == 0)
		a->status = (unsigned)atoi(a->text + 9);
	a->body = strstr(a->text, "\r\n\r\n");
	a->body = a->body ? a->body + 4 : "";
	return n;
}

/* A 127-byte origin, the longest admission.cors_origin takes, made the worker's. */
static void
cors_longest(char *origin)
{
	memcpy(origin, "https://", 8);
	memset(origin + 8, 'b', 127 - 8 - 8);
	memcpy(origin + 127 - 8, ".example", 9);
	memcpy(H.w->cors_origin, origin, 128);
	H.w->cors_len = 127;
	H.w->cors_any = false;
}

/*
 * Issue 16 item 1: the preflight of every route, from the longest origin the config takes, to
 * a client of the smallest MSS: every Access-Control line is there and the head ends with its
 * empty line (a 256-byte buffer used to cut the last lines and that CRLF).
 */
static void
test_preflight_longest_origin(void)
{
	static const struct {
		const char *path, *methods;
	} routes[] = {
		{"/healthz", "GET, HEAD, OPTIONS"},
		{"/api/v1/events/1", "GET, HEAD, OPTIONS"},
		{"/api/v1/events/1/token", "POST, OPTIONS"},
		{"/api/v1/events/1/reserve/7-CkoSL1DPbL8Rfy6n", "POST, OPTIONS"},
		{"/api/v1/events/1/result", "GET, HEAD, OPTIONS"},
	};
	char origin[128], req[512], want[512];
	struct answer a;

	cors_longest(origin);
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		snprintf(req, sizeof(req),
			"OPTIONS %s HTTP/1.1\r\nHost: s\r\nOrigin: %s\r\n"
			"Access-Control-Request-Method: POST\r\n\r\n",
			routes[i].path, origin);
		uint16_t n = ask_mss(req, 536, &a);
		size_t tl = strlen(a.text);

		snprintf(want, sizeof(want),
			"Allow: %s\r\nAccess-Control-Allow-Origin: %s\r\nVary: Origin\r\n"
			"Access-Control-Allow-Methods: %s\r\nAccess-Control-Allow-Headers: "
			"Authorization, X-Flash-Token, X-Device-Id, Content-Type\r\n"
			"Access-Control-Max-Age: 600\r\n\r\n",
			routes[i].methods, origin, routes[i].methods);
		tap_ok(a.status == 204 && tl > strlen(want) &&
			       strcmp(a.text + tl - strlen(want), want) == 0,
			"preflight of %s from a 127-byte origin at MSS 536: every CORS line and the "
			"head's end (%u segment(s), %zu bytes)",
			routes[i].path, n, tl);
	}
	/* Allowed origin "*": the same lines with "*". */
	H.w->cors_any = true;
	H.w->cors_len = 1;
	ask_mss("OPTIONS /api/v1/events/1/result HTTP/1.1\r\nHost: s\r\nOrigin: https://x.example"
		"\r\n\r\n", 536, &a);
	tap_ok(a.status == 204 && has(&a, "Access-Control-Allow-Origin: *\r\n") &&
		       has(&a, "Access-Control-Max-Age: 600\r\n\r\n"),
		"cors_origin = *: the preflight is whole too");
	H.w->cors_any = false;
	H.w->cors_len = 0;
}

/*
 * Issue 16 item 2: the parser's refusals carry CORS too, whatever the request's Origin (it may
 * not have been read), so a page can read them; each status once, from the longest origin.
 */
static void
test_parser_refusals_cors(void)
{
	char origin[128], req[1500], want[200];
	char path[1100];
	struct answer a;

	cors_longest(origin);
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	snprintf(want, sizeof(want), "Access-Control-Allow-Origin: %s\r\nVary: Origin\r\n",
		origin);
	struct {
		unsigned status;
		char req[1500];
	} cases[6];
	unsigned n = 0;

	snprintf(cases[n].req, sizeof(cases[n].req),
		"GET /api/v1/events/1 HTTP/1.1\nHost: s\r\nOrigin: %s\r\n\r\n", origin);
	cases[n++].status = 400;
	snprintf(cases[n].req, sizeof(cases[n].req), "GET %s HTTP/1.1\r\nHost: s\r\n\r\n", path);
	cases[n++].status = 414;
	snprintf(cases[n].req, sizeof(cases[n].req), "GET / HTTP/1.1\r\nOrigin: %s\r\n", origin);
	cases[n++].status = 431; /* incomplete: not one segment */
	snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nOrigin: %s\r\n", origin);
	for (int i = 0; i < 25; i++)
		strcat(req, "X-A: b\r\n");
	snprintf(cases[n].req, sizeof(cases[n].req), "%s\r\n", req);
	cases[n++].status = 431; /* too many header fields */
	snprintf(cases[n].req, sizeof(cases[n].req),
		"BREW /api/v1/events/1 HTTP/1.1\r\nHost: s\r\nOrigin: %s\r\n\r\n", origin);
	cases[n++].status = 501;
	snprintf(cases[n].req, sizeof(cases[n].req),
		"GET /api/v1/events/1 HTTP/2.0\r\nHost: s\r\nOrigin: %s\r\n\r\n", origin);
	cases[n++].status = 505;
	for (unsigned i = 0; i < n; i++) {
		/* Twice: built, then from the second's cache of refusals. */
		for (int k = 0; k < 2; k++) {
			ask_mss(cases[i].req, 536, &a);
			tap_ok(a.status == cases[i].status && has(&a, want) &&
				       strncmp(a.body, "{\"error\":\"", 10) == 0,
				"parser refusal %u (%s) carries the CORS lines at MSS 536", a.status,
				k ? "cached" : "built");
		}
	}
	H.w->cors_len = 0;
	ask_mss("GET / HTTP/2.0\r\nHost: s\r\n\r\n", 536, &a);
	tap_ok(a.status == 505 && !has(&a, "Access-Control"),
		"  without cors_origin no CORS line (and not the cached one)");
}

/*
 * One burst of five reserves of five users between a SYN and a request with a forged cookie:
 * pipeline_burst() routes each request a frame late (after the next one's parse), and still
 * answers every frame, each reserve with its own user's receipt, and hands the reservations to
 * the bridge in the order of their frames.
 */
static void
test_burst_order(void)
{
	enum { N = 5 };
	struct answer a;
	char s[TOK_BUF_SIZE], path[128], tok[N][TOK_BUF_SIZE], req[N][768];
	struct rte_mbuf *b[N + 2], *tx[(N + 2) * PIPELINE_TX_PER_RX];
	uint64_t user[N];
	uint16_t sport[N];
	unsigned at[N] = {0, 2, 3, 5, 6}; /* the reserves' places in the burst */

	ring_drain();
	session(500, 3600, s);
	get_token(EV_OPEN, s, &a, NULL, path);
	for (unsigned i = 0; i < N; i++) {
		user[i] = 501 + i;
		sport[i] = next_port++;
		if (tok_purchase_mint(sale_ring(), EV_OPEN, user[i], H.w->now_ms / 1000 + 600,
			    tok[i], sizeof(tok[i])) < 0)
			abort();
		snprintf(req[i], sizeof(req[i]),
			"POST %s HTTP/1.1\r\nHost: s\r\nX-Flash-Token: %s\r\nContent-Length: 0"
			"\r\n\r\n",
			path, tok[i]);

		/* The handshake, one frame at a time, for the cookie of this connection. */
		struct pb_tcp syn = {.src_ip = client_ip,
			.sport = sport[i],
			.seq = 1000u * i,
			.flags = RTE_TCP_SYN_FLAG,
			.mss = 1460};
		struct rte_mbuf *r = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &syn));
		uint32_t cookie = r != NULL ? rte_be_to_cpu_32(pb_th(r)->sent_seq) : 0;

		rte_pktmbuf_free(r);
		struct pb_tcp t = {.src_ip = client_ip,
			.sport = sport[i],
			.seq = 1000u * i + 1,
			.ack = cookie + 1,
			.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
			.payload = req[i],
			.payload_len = (uint16_t)strlen(req[i])};

		b[at[i]] = pb_tcp_frame(dph_mbuf(&H), &t);
	}
	struct pb_tcp syn = {.src_ip = client_ip,
		.sport = next_port++,
		.seq = 7,
		.flags = RTE_TCP_SYN_FLAG,
		.mss = 1460};
	struct pb_tcp forged = {.src_ip = client_ip,
		.sport = next_port++,
		.seq = 8,
		.ack = 12345,
		.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
		.payload = req[0],
		.payload_len = (uint16_t)strlen(req[0])};

	b[1] = pb_tcp_frame(dph_mbuf(&H), &syn);
	b[4] = pb_tcp_frame(dph_mbuf(&H), &forged);

	uint64_t admitted = H.w->ctr.admit[DP_ADM_RESERVE_ADMITTED];
	uint16_t n = pipeline_burst(H.w, 0, b, N + 2, tx);
	unsigned ok = 0, syn_acks = 0, rsts = 0;

	tap_eq_int(n, N + 2, "a burst of 5 reserves, a SYN and a forged cookie: 7 answers");
	for (uint16_t k = 0; k < n; k++) {
		uint8_t f = pb_th(tx[k])->tcp_flags;
		uint16_t len;
		const char *p = pb_payload(tx[k], &len);

		if (f == (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG))
			syn_acks++;
		else if (f & RTE_TCP_RST_FLAG)
			rsts++;
		for (unsigned i = 0; i < N; i++) {
			char text[1500], receipt[TOK_BUF_SIZE];
			struct tok_receipt rc;

			if (tx[k] != b[at[i]] || len == 0 || len >= sizeof(text))
				continue;
			memcpy(text, p, len);
			text[len] = '\0';
			const char *body = strstr(text, "\r\n\r\n");

			ok += strncmp(text, "HTTP/1.1 202 ", 13) == 0 && body != NULL &&
			      json_str(body, "receipt", receipt, sizeof(receipt)) > 0 &&
			      tok_receipt_verify(sale_ring(), receipt, strlen(receipt), EV_OPEN,
				      &rc) == TOK_OK &&
			      rc.user == user[i] &&
			      rte_be_to_cpu_16(pb_th(tx[k])->dst_port) == sport[i];
		}
		rte_pktmbuf_free(tx[k]);
	}
	tap_eq_int(
		ok, N, "  each reserve answered 202 in its own frame, with its own user's receipt");
	tap_ok(syn_acks == 1 && rsts == 1, "  the SYN got its SYN-ACK, the forged cookie its RST");
	tap_eq_int(H.w->ctr.admit[DP_ADM_RESERVE_ADMITTED] - admitted, N, "  5 counted admitted");

	struct wire_reserve rec;
	unsigned in_order = 0;
	uint64_t prev = 0;

	for (unsigned i = 0; i < N && ring_pop(&rec); i++) {
		in_order += rec.user == user[i] && (i == 0 || rec.reservation_id == prev + 1);
		prev = rec.reservation_id;
	}
	tap_eq_int(in_order, N,
		"  the bridge got the 5 reservations in the order of their frames, ids "
		"consecutive");
	tap_eq_int(ring_count(), 0, "  and nothing else");
}

int
main(int argc, char **argv)
{
	(void)argc;
	dph_init(&H, argv[0]);
	unsigned in_use0 = rte_mempool_in_use_count(H.pool);
	dph_admission_init(&H, 16);
	uint64_t now = H.w->now_ms;

	events[0] = (struct dp_event_cfg){ .id = EV_OPEN, .name = "open", .starts_at_ms = now - 1000,
		.ends_at_ms = now + 3600000, .stock = 10 };
	events[1] = (struct dp_event_cfg){ .id = EV_UP, .name = "later", .starts_at_ms = now + 3600000,
		.ends_at_ms = now + 7200000, .stock = 10 };
	events[2] = (struct dp_event_cfg){ .id = EV_DONE, .name = "past",
		.starts_at_ms = now - 7200000, .ends_at_ms = now - 3600000, .stock = 10 };
	events[3] = (struct dp_event_cfg){ .id = EV_OTHER, .name = "other",
		.starts_at_ms = now - 1000, .ends_at_ms = now + 3600000, .stock = 10 };
	limits = (struct dp_limits){ .ip = { 0, 0 }, .user = { 1000, 1000 },
		.device = { 1000, 1000 }, .event_forward = { 0, 0 } };

	test_not_ready();
	publish();
	test_token_route();
	test_reserve_route();
	test_bridge_full();
	test_stopping();
	test_limits();
	test_rules();
	test_sold_out();
	test_result_route();
	test_poll_storm();
	test_known_buyer();
	test_cors();
	test_segments();
	test_preflight_longest_origin();
	test_parser_refusals_cors();
	test_burst_order();
	/* Every path above (admitted, refused, limited, blocked, sold out, results, CORS) gave
	 * back every mbuf it took. */
	tap_eq_int(rte_mempool_in_use_count(H.pool), in_use0,
		"no mbuf leaked across every test above: as many in use as before them");
	return tap_done();
}
