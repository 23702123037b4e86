/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet tests of admission: every route and every rejection reason, with
 * requests in real frames through pipeline_burst(), the shared state published
 * as the bridge would, and the ring and result table read as the bridge would.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/pow.h"
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

/* Sends req on a fresh connection from client_ip and parses the answer into a. */
static void
ask(const char *req, struct dph_answer *a)
{
	dph_ask(&H, client_ip, next_port++, req, a);
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
has(const struct dph_answer *a, const char *needle)
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
get_token(uint32_t event, const char *sess, struct dph_answer *a, char *tok, char *path)
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
reserve(const char *path, const char *tok, const char *extra, struct dph_answer *a)
{
	char req[768];

	snprintf(req, sizeof(req), "POST %s HTTP/1.1\r\nHost: s\r\n%s%s%s%sContent-Length: 0\r\n\r\n",
		path, tok ? "X-Flash-Token: " : "", tok ? tok : "", tok ? "\r\n" : "",
		extra ? extra : "");
	ask(req, a);
}

/* n reserves with tok at path; returns how many were answered 202 (a holds the last answer). */
static unsigned
reserve_n(const char *path, const char *tok, unsigned n, struct dph_answer *a)
{
	unsigned ok = 0;

	for (unsigned i = 0; i < n; i++) {
		reserve(path, tok, NULL, a);
		ok += a->status == 202;
	}
	return ok;
}

/* Every slot's forward budget starts full again (adm_budget(): a slot whose event changed). */
static void
budgets_restart(void)
{
	for (unsigned i = 0; i < DP_MAX_EVENTS; i++)
		H.w->budget[i].event = 0;
}

static void
poll_result(uint32_t event, const char *tok, struct dph_answer *a)
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
	struct dph_answer a;
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
	struct dph_answer a;
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
	struct dph_answer a;
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
	struct dph_answer a;
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
	struct dph_answer a;
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
	struct dph_answer a;
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
	tap_eq_int(reserve_n(path, tok, 2, &a), 2, "forward budget 2/s: two reserves 202");
	EXPECT_REJECT(a, 429, DP_REJ_FORWARD_BUDGET, "  the third: 429",
		reserve(path, tok, NULL, &a));
	/* Its burst alone raised to 4, the rate kept (the worker's share is split again when
	 * either changes): a bucket started anew holds 4. */
	limits.event_forward = (struct rl_params){ 2, 4 };
	publish();
	budgets_restart();
	tap_eq_int(reserve_n(path, tok, 4, &a), 4,
		"  the burst raised to 4 at the same rate: four reserves 202");
	EXPECT_REJECT(a, 429, DP_REJ_FORWARD_BUDGET, "  the fifth: 429",
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
	struct dph_answer a;
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
	struct dph_answer a;
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
	struct dph_answer a;
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

	/* A reserved or duplicate result whose push of what follows (ORDERED; the result a
	 * duplicate holds) may have been missed: a receipt past receipt_young, or the purchase
	 * token, also asks the control plane again, once per cooldown; a young receipt does not. */
	ring_drain();
	res = (struct rt_result){ .reservation_id = 8, .verdict = WIRE_V_RESERVED };
	result_table_put(H.results, EV_OPEN, 93, &res);
	tok_receipt_mint(sale_ring(), EV_OPEN, 93, H.w->now_ms - 1000, r91, sizeof(r91));
	poll_result(EV_OPEN, r91, &a);
	tap_ok(has(&a, "\"status\":\"reserved\"") && qring_count() == 0,
		"reserved and a young receipt: answered from the table, nothing asked");
	tok_receipt_mint(sale_ring(), EV_OPEN, 93, H.w->now_ms - 15000, r91, sizeof(r91));
	uint64_t cooled = H.w->ctr.admit[DP_ADM_RESULT_COOLED];

	poll_result(EV_OPEN, r91, &a);
	tap_ok(has(&a, "\"status\":\"reserved\"") && qring_pop(&qrec) && qrec.user == 93 &&
			qrec.event == EV_OPEN,
		"  a receipt past receipt_young: reserved, and the control plane is asked again "
		"(an ORDERED may have been missed)");
	poll_result(EV_OPEN, r91, &a);
	tap_ok(has(&a, "\"status\":\"reserved\"") && qring_count() == 0 &&
			H.w->ctr.admit[DP_ADM_RESULT_COOLED] - cooled == 1,
		"  not again within the cooldown (counted as result_cooled)");
	res = (struct rt_result){ .reservation_id = 9, .verdict = WIRE_V_DUPLICATE };
	result_table_put(H.results, EV_OPEN, 94, &res);
	tok_purchase_mint(sale_ring(), EV_OPEN, 94, H.w->now_ms / 1000 + 300, r91, sizeof(r91));
	poll_result(EV_OPEN, r91, &a);
	tap_ok(has(&a, "\"status\":\"duplicate\"") && qring_pop(&qrec) && qrec.user == 94,
		"  duplicate, polled with the purchase token: asked again too");
	/* Ordered: its PAID or EXPIRED is due by the pay deadline, so only a poll past it asks. */
	res = (struct rt_result){ .reservation_id = 10, .verdict = WIRE_V_ORDERED,
		.order_id = 777, .pay_deadline_ms = H.w->now_ms + 60000 };
	result_table_put(H.results, EV_OPEN, 95, &res);
	tok_receipt_mint(sale_ring(), EV_OPEN, 95, H.w->now_ms - 15000, r91, sizeof(r91));
	poll_result(EV_OPEN, r91, &a);
	tap_ok(has(&a, "\"status\":\"ordered\"") && qring_count() == 0,
		"  ordered before its pay deadline: answered from the table, nothing asked");
	res.pay_deadline_ms = H.w->now_ms - 1;
	result_table_put(H.results, EV_OPEN, 95, &res);
	poll_result(EV_OPEN, r91, &a);
	tap_ok(has(&a, "\"status\":\"ordered\"") && qring_pop(&qrec) && qrec.user == 95,
		"  ordered past its pay deadline: asked again (a PAID or EXPIRED may have been missed)");
	ring_drain();

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
	struct dph_answer a;
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
	struct dph_answer a;
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
	budgets_restart();
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
	struct dph_answer a;
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
ask_mss(const char *req, uint16_t mss, struct dph_answer *a)
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
	struct dph_answer a;

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
			"Access-Control-Expose-Headers: Retry-After\r\n"
			"Access-Control-Allow-Methods: %s\r\nAccess-Control-Allow-Headers: "
			"Authorization, X-Flash-Token, X-Device-Id, X-Flash-Solution, Content-Type\r\n"
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
	struct dph_answer a;

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
	struct dph_answer a;
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

/* ---- issue 18: the fair start (pre-queue, draw, positions, challenge) -------------------- */

#define EV_FAIR_PLAIN 11 /* open, no FAIR record */
#define EV_FAIR_POW   12 /* open, a FAIR record without a draw: the challenge */
#define EV_FAIR_DRAW  13 /* a draw: queue opens, draw_at, done */

static struct dp_event_cfg fair_events[3];
static struct wire_fair fair_rec[3];
static bool fair_has[3];

/* Publishes the fair tests' events, then gives them their FAIR records as the bridge does. */
static void
fair_publish(void)
{
	dph_publish(&H, fair_events, NULL, 3, NULL, &limits);
	for (unsigned i = 0; i < 3; i++) {
		struct event_entry *e = (struct event_entry *)(uintptr_t)event_lookup(
			H.w->sh->events, fair_events[i].id);

		if (fair_has[i])
			event_entry_set_fair(e, &fair_rec[i]);
	}
}

/* The published entry of event id, which the test changes in place as the bridge does. */
static struct event_entry *
fair_entry(uint32_t id)
{
	return (struct event_entry *)(uintptr_t)event_lookup(H.w->sh->events, id);
}

/* A token for user on event: *bits and prefix (the MAC text) from its challenge, 0 without. */
static void
fair_token(uint32_t event, uint64_t user, struct dph_answer *a, char *tok, char *path)
{
	char s[TOK_BUF_SIZE];

	session(user, 3600, s);
	get_token(event, s, a, tok, path);
}

/* The solution of tok's challenge (tok_purchase_challenge() must say it has one). */
static void
fair_solve(const char *tok, char *sol)
{
	unsigned bits;
	const char *prefix;
	uint64_t tries;

	if (!tok_purchase_challenge(tok, strlen(tok), &bits, &prefix) ||
		pow_solve(prefix, TOK_MAC_CHARS, bits, UINT64_C(1) << 32, sol, &tries) != 0)
		abort();
}

/* POST reserve with the token and X-Flash-Solution: sol (none when NULL). */
static void
fair_reserve(const char *path, const char *tok, const char *sol, struct dph_answer *a)
{
	char extra[128] = "";

	if (sol != NULL)
		snprintf(extra, sizeof(extra), "X-Flash-Solution: %s\r\n", sol);
	reserve(path, tok, extra, a);
}

/*
 * The challenge (issue 18 §4): p1 without one; with the event's difficulty on, a p2 token and
 * its challenge in the answer; a reserve without a solution, with a wrong one, with another
 * token's, refused 403 and counted before the token's HMAC; the right one admitted. A new
 * difficulty applies to the next tokens; an older token keeps its own.
 */
static void
test_fair_challenge(void)
{
	struct dph_answer a;
	char tok[TOK_BUF_SIZE], tok2[TOK_BUF_SIZE], path[128], prefix[64], sol[32], sol2[32];
	uint64_t miss0 = rej(DP_REJ_POW_MISSING), wrong0 = rej(DP_REJ_POW_WRONG);

	ring_drain();
	fair_token(EV_FAIR_PLAIN, 3001, &a, tok, path);
	tap_ok(a.status == 200 && strncmp(tok, "p1.", 3) == 0 && !has(&a, "\"challenge\""),
		"challenge: an event without a FAIR record mints p1 tokens, no challenge");
	ask("GET /api/v1/events/11 HTTP/1.1\r\nHost: s\r\n\r\n", &a);
	tap_ok(a.status == 200 && has(&a, "\"challenge_bits\":0") && !has(&a, "seed_sha256") &&
		       !has(&a, "\"draw\""),
		"  its JSON: challenge_bits 0, no seed commitment, no draw");
	fair_token(EV_FAIR_POW, 3002, &a, tok, path);
	tap_ok(a.status == 200 && strncmp(tok, "p1.", 3) == 0,
		"challenge: a FAIR record with pow_bits 0 mints p1 too");

	__atomic_store_n(&fair_entry(EV_FAIR_POW)->pow_bits, 8, __ATOMIC_RELAXED);
	fair_token(EV_FAIR_POW, 3003, &a, tok, path);
	json_str(a.body, "prefix", prefix, sizeof(prefix));
	tap_ok(a.status == 200 && strncmp(tok, "p2.", 3) == 0 && strstr(tok, ".8.7.") != NULL &&
		       has(&a, "\"challenge\":{\"prefix\":\"") && has(&a, "\"bits\":8}") &&
		       strlen(prefix) == TOK_MAC_CHARS &&
		       strcmp(prefix, tok + strlen(tok) - TOK_MAC_CHARS) == 0,
		"challenge: pow_bits 8 mints a p2 token of 8 bits; the answer's challenge is its MAC "
		"text and 8 bits (%s)",
		a.body);
	ask("GET /api/v1/events/12 HTTP/1.1\r\nHost: s\r\n\r\n", &a);
	tap_ok(has(&a, "\"challenge_bits\":8") && has(&a, "\"seed_sha256\":\"0101") &&
		       !has(&a, "\"draw\"") && !has(&a, "draw_at"),
		"  the event's JSON: challenge_bits 8 and the seed's commitment, no draw");

	fair_reserve(path, tok, NULL, &a);
	tap_ok(a.status == 403 && has(&a, "solve the challenge: X-Flash-Solution is required") &&
		       rej(DP_REJ_POW_MISSING) == miss0 + 1 && ring_count() == 0,
		"challenge: a reserve without X-Flash-Solution: 403, counted pow_missing");
	fair_solve(tok, sol);
	/* A wrong one: the right one's neighbours fail at 8 bits but for one in 256. */
	for (uint64_t v = strtoull(sol, NULL, 10) + 1;; v++) {
		snprintf(sol2, sizeof(sol2), "%" PRIu64, v);
		if (!pow_check(prefix, TOK_MAC_CHARS, sol2, strlen(sol2), 8))
			break;
	}
	fair_reserve(path, tok, sol2, &a);
	tap_ok(a.status == 403 && has(&a, "X-Flash-Solution does not solve the challenge") &&
		       rej(DP_REJ_POW_WRONG) == wrong0 + 1 && ring_count() == 0,
		"challenge: a wrong solution: 403, counted pow_wrong");
	fair_reserve(path, tok, "12a4", &a);
	tap_ok(a.status == 403 && rej(DP_REJ_POW_WRONG) == wrong0 + 2,
		"challenge: a solution that is no number: pow_wrong");
	fair_reserve(path, tok, "123456789012345678901", &a);
	tap_ok(a.status == 403 && rej(DP_REJ_POW_WRONG) == wrong0 + 3,
		"challenge: 21 digits: pow_wrong");

	/* Another user's token and its solution: replayed on this token, it is wrong. */
	fair_token(EV_FAIR_POW, 3004, &a, tok2, path);
	fair_solve(tok2, sol2);
	if (pow_check(prefix, TOK_MAC_CHARS, sol2, strlen(sol2), 8)) {
		/* One in 256: that solution happens to solve both; take the other user's next. */
		fair_token(EV_FAIR_POW, 3005, &a, tok2, path);
		fair_solve(tok2, sol2);
	}
	fair_reserve(path, tok, sol2, &a);
	tap_ok(a.status == 403 && rej(DP_REJ_POW_WRONG) == wrong0 + 4 && ring_count() == 0,
		"challenge: another token's solution replayed on this one: pow_wrong");

	uint64_t inv0 = rej(DP_REJ_TOKEN_INVALID);

	/* The claim says fewer bits than were minted: the solution passes, the MAC does not. */
	char low[TOK_BUF_SIZE], low_sol[32];
	char *p8 = strstr(strcpy(low, tok), ".8.7.");

	p8[1] = '1';
	fair_solve(low, low_sol);
	fair_reserve(path, low, low_sol, &a);
	tap_ok(a.status == 403 && rej(DP_REJ_TOKEN_INVALID) == inv0 + 1,
		"challenge: a token whose bits were lowered to 1 (solved at 1): the HMAC refuses it");

	fair_reserve(path, tok, sol, &a);
	struct wire_reserve rec;

	tap_ok(a.status == 202 && ring_pop(&rec) && rec.user == 3003 && rec.event == EV_FAIR_POW,
		"challenge: the right solution: 202, forwarded (%d %s)", a.status, a.body);

	/* A new difficulty: the next tokens carry it, older ones keep theirs. */
	char old_tok[TOK_BUF_SIZE], old_sol[32];

	fair_token(EV_FAIR_POW, 3006, &a, old_tok, path);
	fair_solve(old_tok, old_sol);
	__atomic_store_n(&fair_entry(EV_FAIR_POW)->pow_bits, 3, __ATOMIC_RELAXED);
	fair_token(EV_FAIR_POW, 3007, &a, tok, path);
	tap_ok(strstr(tok, ".3.7.") != NULL && has(&a, "\"bits\":3}"),
		"difficulty 8 -> 3: the next token carries 3 bits");
	fair_solve(tok, sol);
	fair_reserve(path, tok, sol, &a);
	tap_ok(a.status == 202 && ring_count() == 1, "  and is admitted with its 3-bit solution");
	fair_reserve(path, old_tok, old_sol, &a);
	tap_ok(a.status == 202 && ring_count() == 2,
		"  a token minted at 8 bits before the change still works with its 8-bit solution");
	fair_reserve(path, old_tok, NULL, &a);
	tap_ok(a.status == 403 && has(&a, "X-Flash-Solution is required"),
		"  and still needs it");
	__atomic_store_n(&fair_entry(EV_FAIR_POW)->pow_bits, 0, __ATOMIC_RELAXED);
	fair_token(EV_FAIR_POW, 3008, &a, tok, path);
	tap_ok(strncmp(tok, "p1.", 3) == 0 && !has(&a, "challenge"),
		"difficulty back to 0: p1 tokens again");
	ring_drain();
}

/*
 * The pre-queue and the draw (issue 18 §1, §3): queueing admits before the start, drawing
 * answers 425 but to entrants (200, their place), the JSON shows the draw, and after it
 * first come as today.
 */
static void
test_fair_draw(void)
{
	struct dph_answer a;
	char tok[TOK_BUF_SIZE], path[128];
	struct event_entry *e = fair_entry(EV_FAIR_DRAW);
	uint64_t now = H.w->now_ms;

	ring_drain();
	/* Before the queue opens: upcoming, 425 until it opens. */
	e->queue_opens_at_ms = now + 30000;
	fair_token(EV_FAIR_DRAW, 4001, &a, tok, path);
	tap_ok(a.status == 425 && has(&a, "Retry-After: 30\r\n") && has(&a, "not started"),
		"draw: before queue_opens_at the token is 425 with Retry-After until it opens");
	ask("GET /api/v1/events/13 HTTP/1.1\r\nHost: s\r\n\r\n", &a);
	tap_ok(has(&a, "\"state\":\"upcoming\"") && has(&a, "\"draw\":{\"state\":\"queueing\""),
		"  the event is upcoming; its draw is taking entrants from queue_opens_at");
	e->queue_opens_at_ms = fair_rec[2].queue_opens_at_ms;

	/* Queueing, before starts_at: tokens and reserves as when open. */
	char want[128];

	ask_mss("GET /api/v1/events/13 HTTP/1.1\r\nHost: s\r\n\r\n", 1460, &a);
	snprintf(want, sizeof(want), "\"queue_opens_at\":%" PRIu64 ",\"draw_at\":%" PRIu64,
		e->queue_opens_at_ms, e->draw_at_ms);
	tap_ok(a.status == 200 && has(&a, "\"state\":\"queueing\"") && has(&a, want) &&
		       has(&a, "\"draw\":{\"state\":\"queueing\",\"seed_sha256\":\"0303") &&
		       has(&a, "\"entrants\":0,\"entrants_digest\":null,\"decided\":0,\"seed\":null}"),
		"draw: queueing before the start; the JSON has the times and the draw (%s)", a.body);
	fair_token(EV_FAIR_DRAW, 4002, &a, tok, path);
	reserve(path, tok, NULL, &a);
	struct wire_reserve rec;

	tap_ok(a.status == 202 && has(&a, "\"status\":\"queued\"") && ring_pop(&rec) &&
		       rec.user == 4002,
		"draw: a reserve while queueing, before starts_at: 202 with a receipt, forwarded");
	/* The control plane makes the user an entrant: QUEUED, rank 0. */
	struct rt_result q0 = {.reservation_id = rec.reservation_id, .verdict = WIRE_V_QUEUED};

	result_table_put(H.results, EV_FAIR_DRAW, 4002, &q0);
	uint64_t known0 = H.w->ctr.admit[DP_ADM_RESERVE_KNOWN];

	reserve(path, tok, NULL, &a);
	snprintf(want, sizeof(want), "\"draw_at\":%" PRIu64 ",\"wait_ms\":%" PRIu64, e->draw_at_ms,
		e->draw_at_ms - H.w->now_ms);
	tap_ok(a.status == 200 && has(&a, "\"status\":\"queued\"") && has(&a, want) &&
		       ring_count() == 0 && H.w->ctr.admit[DP_ADM_RESERVE_KNOWN] == known0 + 1,
		"draw: an entrant reserving again: 200 queued with draw_at and the wait, not "
		"forwarded (%s)",
		a.body);
	poll_result(EV_FAIR_DRAW, tok, &a);
	tap_ok(a.status == 200 && has(&a, "\"status\":\"queued\"") && has(&a, want) &&
		       !has(&a, "position") && qring_count() == 0,
		"draw: the entrant's poll before the draw: draw_at and wait_ms, no query");

	/* The clock passes draw_at: drawing, even before the control plane says so. */
	uint64_t d0 = rej(DP_REJ_DRAWING);

	e->starts_at_ms = H.w->now_ms - 1; /* queue_opens_at <= starts_at <= draw_at */
	e->draw_at_ms = H.w->now_ms;
	fair_token(EV_FAIR_DRAW, 4003, &a, tok, path);
	tap_ok(a.status == 200, "draw: tokens are still minted while drawing");
	reserve(path, tok, NULL, &a);
	tap_ok(a.status == 425 && has(&a, "the draw is in progress") &&
		       has(&a, "Retry-After: 1\r\n") && rej(DP_REJ_DRAWING) == d0 + 1 &&
		       ring_count() == 0,
		"draw: a reserve at draw_at: 425 the draw is in progress, Retry-After 1, counted");
	char bad[TOK_BUF_SIZE];

	snprintf(bad, sizeof(bad), "%.*sAAAAAAAAAAAAAAAAAAAAAA", (int)(strlen(tok) - 22), tok);
	reserve(path, bad, NULL, &a);
	tap_ok(a.status == 425 && rej(DP_REJ_DRAWING) == d0 + 2,
		"draw: a non-entrant's forged token gets the 425 too: refused before any hash");
	ask("GET /api/v1/events/13 HTTP/1.1\r\nHost: s\r\n\r\n", &a);
	tap_ok(has(&a, "\"state\":\"drawing\"") && has(&a, "\"draw\":{\"state\":\"drawing\""),
		"  the event and its draw say drawing");
	/* A token that claims the entrant's user id but is not theirs: refused by its HMAC. */
	char forged[TOK_BUF_SIZE];

	fair_token(EV_FAIR_DRAW, 4003, &a, tok, path);
	snprintf(forged, sizeof(forged), "%s", tok);
	memcpy(strstr(forged, ".4003.") + 1, "4002", 4);
	reserve(path, forged, NULL, &a);
	tap_ok(a.status == 403 && ring_count() == 0,
		"draw: a token forged to claim an entrant's id gets past the 425 only to its "
		"HMAC: 403");

	/* The draw ranks the entrants (FAIR DRAWING, digest) and decides them in order. */
	e->draw_state = WIRE_DRAW_DRAWING;
	memset(e->entrants_digest, 0xab, sizeof(e->entrants_digest));
	__atomic_store_n(&e->entrants, 100, __ATOMIC_RELAXED);
	__atomic_store_n(&e->rate, 20, __ATOMIC_RELAXED);
	struct rt_result q50 = {.reservation_id = rec.reservation_id,
		.verdict = WIRE_V_QUEUED,
		.rank = 50};

	result_table_put(H.results, EV_FAIR_DRAW, 4002, &q50);
	fair_token(EV_FAIR_DRAW, 4002, &a, tok, path);
	reserve(path, tok, NULL, &a);
	tap_ok(a.status == 200 && has(&a, "\"status\":\"queued\",\"position\":49,\"wait_ms\":2450") &&
		       ring_count() == 0,
		"draw: the entrant's reserve while drawing: 200 with its place (rank 50, none "
		"decided: 49 ahead, 2450 ms at 20/s) (%s)",
		a.body);
	ask_mss("GET /api/v1/events/13 HTTP/1.1\r\nHost: s\r\n\r\n", 536, &a);
	tap_ok(has(&a, "\"entrants\":100,\"entrants_digest\":\"abababab") &&
		       has(&a, "\"seed\":null}"),
		"draw: the JSON shows the entrants and their digest, not the seed, also at MSS 536");

	/* Its poll as the draw goes: the position never increases. */
	unsigned last = UINT32_MAX, ups = 0, polls = 0, queried_waiting = 0;
	bool zero_at_end = false;

	struct rl_table *poll_rl = H.w->rl_poll; /* many polls at one instant */

	H.w->rl_poll = NULL;
	for (uint32_t decided = 0; decided <= 100; decided += 7) {
		__atomic_store_n(&e->decided, decided, __ATOMIC_RELAXED);
		poll_result(EV_FAIR_DRAW, tok, &a);
		const char *p = strstr(a.body, "\"position\":");

		if (a.status != 200 || p == NULL) {
			tap_diag("poll at decided %u: %u %s", decided, a.status, a.body);
			continue;
		}
		unsigned pos = (unsigned)atoi(p + 11);

		polls++;
		queried_waiting += decided < 50 && qring_count() != 0;
		ups += pos > last;
		last = pos;
		zero_at_end = pos == 0;
	}
	tap_ok(polls == 15 && ups == 0 && zero_at_end && queried_waiting == 0,
		"draw: 15 polls as decided grows 0..98: the position never increases, ends at 0; "
		"no query while the entrant waits");
	ring_drain();
	__atomic_store_n(&e->decided, 10, __ATOMIC_RELAXED);
	__atomic_store_n(&e->rate, 0, __ATOMIC_RELAXED);
	poll_result(EV_FAIR_DRAW, tok, &a);
	tap_ok(has(&a, "\"position\":39,\"server_time\""),
		"draw: rate 0: the position (39) without wait_ms");

	/* The draw decides the entrant: the decision replaces its place. */
	struct rt_result dec = {.reservation_id = rec.reservation_id, .verdict = WIRE_V_SOLD_OUT};

	result_table_put(H.results, EV_FAIR_DRAW, 4002, &dec);
	poll_result(EV_FAIR_DRAW, tok, &a);
	tap_ok(has(&a, "\"status\":\"sold_out\"") && !has(&a, "position"),
		"draw: an entrant beyond the stock learns sold_out from the pushed RESULT");

	/* Done: first come as today; the seed is shown. */
	e->draw_state = WIRE_DRAW_DONE;
	memset(e->seed, 0x5e, sizeof(e->seed));
	ask("GET /api/v1/events/13 HTTP/1.1\r\nHost: s\r\n\r\n", &a);
	tap_ok(has(&a, "\"state\":\"open\"") && has(&a, "\"draw\":{\"state\":\"done\"") &&
		       has(&a, "\"seed\":\"5e5e5e"),
		"draw: done: the event is open, the draw done with its seed revealed");
	fair_token(EV_FAIR_DRAW, 4004, &a, tok, path);
	reserve(path, tok, NULL, &a);
	tap_ok(a.status == 202 && ring_count() == 1, "draw: done: a newcomer's reserve is admitted");
	ring_drain();

	/* A place still queued after the draw is done was missed: the control plane is asked. */
	struct rt_result stale = {.reservation_id = 77, .verdict = WIRE_V_QUEUED, .rank = 3};

	result_table_put(H.results, EV_FAIR_DRAW, 4005, &stale);
	fair_token(EV_FAIR_DRAW, 4005, &a, tok, path);
	poll_result(EV_FAIR_DRAW, tok, &a);
	tap_ok(has(&a, "\"status\":\"queued\",\"position\":0") && qring_count() == 1,
		"draw: a place still queued once the draw is done asks the control plane again");
	ring_drain();

	/* On the waiting list: "waiting" with its place while an item may come back; a final
	 * "sold_out" once the control plane says none can (FAIR's WIRE_FAIR_F_FINAL: the stock 0
	 * and every item held paid), the sale still open. */
	struct rt_result wait = {.reservation_id = 79, .verdict = WIRE_V_WAITING, .rank = 60};
	struct wire_fair fin = fair_rec[2];

	__atomic_store_n(&e->served, 50, __ATOMIC_RELAXED);
	result_table_put(H.results, EV_FAIR_DRAW, 4006, &wait);
	fair_token(EV_FAIR_DRAW, 4006, &a, tok, path);
	poll_result(EV_FAIR_DRAW, tok, &a);
	tap_ok(has(&a, "\"status\":\"waiting\",\"rank\":60,\"ahead\":9"),
		"draw: an entrant on the waiting list: waiting, rank 60, 9 ahead (%s)", a.body);
	fin.flags = WIRE_FAIR_F_FINAL;
	fin.draw_state = WIRE_DRAW_DONE;
	fin.served = 50;
	event_entry_set_fair(e, &fin);
	poll_result(EV_FAIR_DRAW, tok, &a);
	tap_ok(has(&a, "\"status\":\"sold_out\"") && !has(&a, "\"ahead\"") && !e->closed,
		"draw: FAIR says no item can come back (every item held paid): sold_out, final, the "
		"sale still open (%s)",
		a.body);
	e->final = 0;
	ring_drain();
	H.w->rl_poll = poll_rl;
}

/* QUEUED in the result table: never over a decision, always under one (issue 18 §3). */
static void
test_fair_result_table(void)
{
	struct rt_result r, q = {.reservation_id = 1, .verdict = WIRE_V_QUEUED, .rank = 0};
	struct rt_result res = {.reservation_id = 1, .verdict = WIRE_V_RESERVED};
	struct rt_result q9 = {.reservation_id = 1, .verdict = WIRE_V_QUEUED, .rank = 9};
	struct rt_result retry = {.reservation_id = 2, .verdict = WIRE_V_RETRY};
	struct rt_result so = {.reservation_id = 3, .verdict = WIRE_V_SOLD_OUT};
	static const uint8_t decisions[] = {WIRE_V_RESERVED, WIRE_V_DUPLICATE, WIRE_V_SOLD_OUT,
		WIRE_V_ORDERED, WIRE_V_PAID, WIRE_V_EXPIRED, WIRE_V_CANCELLED};
	unsigned kept = 0;

	for (unsigned i = 0; i < sizeof(decisions); i++) {
		struct rt_result d = {.reservation_id = 1, .verdict = decisions[i]};

		result_table_put(H.results, 14, 6000 + i, &d);
		kept += result_table_put(H.results, 14, 6000 + i, &q9) == RT_PUT_KEPT &&
			result_table_lookup(H.results, 14, 6000 + i, &r) == 0 &&
			r.verdict == decisions[i];
	}
	tap_eq_int(kept, sizeof(decisions),
		"result table: QUEUED never replaces a decision (each of the 7 kept)");
	result_table_put(H.results, 14, 6100, &q);
	tap_ok(result_table_put(H.results, 14, 6100, &q9) == RT_PUT_REPLACED &&
		       result_table_lookup(H.results, 14, 6100, &r) == 0 && r.rank == 9 &&
		       r.verdict == WIRE_V_QUEUED,
		"result table: QUEUED rank 0 then rank 9: the rank is stored");
	tap_ok(result_table_put(H.results, 14, 6100, &q) == RT_PUT_KEPT &&
		       result_table_lookup(H.results, 14, 6100, &r) == 0 && r.rank == 9,
		"result table: an unranked QUEUED does not unrank it");
	tap_ok(result_table_put(H.results, 14, 6100, &retry) == RT_PUT_KEPT,
		"result table: a RETRY (another attempt) does not replace the entry");
	tap_ok(result_table_put(H.results, 14, 6100, &res) == RT_PUT_REPLACED &&
		       result_table_lookup(H.results, 14, 6100, &r) == 0 &&
		       r.verdict == WIRE_V_RESERVED && r.rank == 0,
		"result table: the draw's decision (reserved) replaces QUEUED, rank gone");
	struct rt_result nst = {.reservation_id = 4, .verdict = WIRE_V_NOT_STARTED};

	result_table_put(H.results, 14, 6101, &nst);
	tap_ok(result_table_put(H.results, 14, 6101, &q) == RT_PUT_REPLACED,
		"result table: QUEUED replaces not_started (no decision)");
	tap_ok(result_table_put(H.results, 14, 6101, &so) == RT_PUT_REPLACED,
		"result table: sold_out replaces QUEUED");
}

/* Issue 16 leftover: a page can read Retry-After (Access-Control-Expose-Headers). */
static void
test_fair_cors(void)
{
	struct dph_answer a;
	const char *origin = "https://shop.example";

	strcpy(H.w->cors_origin, origin);
	H.w->cors_len = (uint8_t)strlen(origin);
	ask("POST /api/v1/events/2/token HTTP/1.1\r\nHost: s\r\nOrigin: https://shop.example\r\n"
	    "Content-Length: 0\r\n\r\n",
		&a);
	tap_ok(a.status == 425 && has(&a, "Retry-After: ") &&
		       has(&a, "Access-Control-Expose-Headers: Retry-After\r\n"),
		"CORS: a 425 with Retry-After exposes it to the page");
	ask("GET /api/v1/events/1 HTTP/1.1\r\nHost: s\r\nOrigin: https://shop.example\r\n\r\n", &a);
	tap_ok(a.status == 200 && has(&a, "Access-Control-Expose-Headers: Retry-After\r\n"),
		"CORS: every answer to the shop's origin says so");
	ask("OPTIONS /api/v1/events/1/reserve/x HTTP/1.1\r\nHost: s\r\nOrigin: https://shop.example"
	    "\r\nAccess-Control-Request-Method: POST\r\n\r\n",
		&a);
	tap_ok(a.status == 204 && has(&a, "X-Flash-Token, X-Device-Id, X-Flash-Solution,"),
		"CORS: the preflight allows X-Flash-Solution");
	H.w->cors_len = 0;
}

static void
test_fair(void)
{
	uint64_t now = H.w->now_ms;

	fair_events[0] = (struct dp_event_cfg){.id = EV_FAIR_PLAIN, .name = "plain",
		.starts_at_ms = now - 1000, .ends_at_ms = now + 3600000, .stock = 10};
	fair_events[1] = (struct dp_event_cfg){.id = EV_FAIR_POW, .name = "pow",
		.starts_at_ms = now - 1000, .ends_at_ms = now + 3600000, .stock = 10};
	fair_events[2] = (struct dp_event_cfg){.id = EV_FAIR_DRAW, .name = "draw",
		.starts_at_ms = now + 60000, .ends_at_ms = now + 3600000, .stock = 10};
	fair_rec[1] = (struct wire_fair){.event = EV_FAIR_POW, .draw_state = WIRE_DRAW_NONE};
	memset(fair_rec[1].seed_sha256, 0x01, WIRE_DIGEST_LEN);
	fair_rec[2] = (struct wire_fair){.event = EV_FAIR_DRAW,
		.draw_state = WIRE_DRAW_QUEUEING,
		.queue_opens_at_ms = now - 1000,
		.draw_at_ms = now + 120000};
	memset(fair_rec[2].seed_sha256, 0x03, WIRE_DIGEST_LEN);
	fair_has[1] = fair_has[2] = true;
	fair_publish();
	test_fair_challenge();
	test_fair_draw();
	test_fair_result_table();
	publish();
	test_fair_cors();
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
	test_fair();
	/* Every path above (admitted, refused, limited, blocked, sold out, results, CORS) gave
	 * back every mbuf it took. */
	tap_eq_int(rte_mempool_in_use_count(H.pool), in_use0,
		"no mbuf leaked across every test above: as many in use as before them");
	return tap_done();
}
