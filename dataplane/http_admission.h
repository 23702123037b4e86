/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_HTTP_ADMISSION_H
#define FG_DP_HTTP_ADMISSION_H
/*
 * The admission routes (docs/api.md):
 *   POST /api/v1/events/{id}/token             session token -> purchase token + reserve path
 *   POST /api/v1/events/{id}/reserve/{kid-key} purchase token -> 202 + receipt, forwarded
 *   GET  /api/v1/events/{id}/result            purchase token or receipt -> the user's result
 * Every check that needs no stock is decided here, cheapest first, so that a
 * flood costs the least it can: risk rules and the per-IP bucket before any
 * HMAC, the sale's state before the tokens, the user's and device's buckets
 * after the token proved who the user is, the event's forward budget last.
 *
 * The answer is written over the request (see http_answer()): every value
 * taken from the request is copied or reduced to numbers before the first
 * write. CORS headers echo the configured origin, never the request's bytes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/token.h"
#include "common/wire.h"
#include "dataplane/bridge.h"
#include "dataplane/events.h"
#include "dataplane/http_parser.h"
#include "dataplane/http_response.h"
#include "dataplane/ratelimit.h"
#include "dataplane/rules.h"
#include "dataplane/worker.h"

/* Extra header lines of one answer: CORS and Retry-After. */
struct adm_hdrs {
	char b[256];
	size_t n;
};

/*
 * Makes h empty. Use this, not "= { .n = 0 }": an initializer clears all of b too, a 256-byte
 * "rep stos" on every answer that perf showed as a third of adm_json().
 */
static inline void
adm_hdrs_init(struct adm_hdrs *h)
{
	h->n = 0;
}

/*
 * The users a request's tokens claim, read (not verified) while it is parsed (http_parse()):
 * the purchase token's or receipt's (X-Flash-Token, "p1.<event>.<user>.") and the session's
 * (Authorization: Bearer "s1.<user>."). 0 when there is none.
 */
struct adm_claims {
	uint64_t purchase, session;
	uint64_t device; /* the device table's key of X-Device-Id (rl_key_bytes()); 0: none */
	struct http_str bearer; /* the session token (adm_bearer()); empty when there is none */
};

/* What the routes need from the request, taken before the answer overwrites it. */
struct adm_req {
	const struct http_request *r;
	uint32_t client_ip;  /* network byte order */
	bool cors;           /* the Origin is the configured one: add CORS headers */
	bool head;
	struct adm_claims claims;
};

static inline void
adm_hdr_mem(struct adm_hdrs *h, const char *s, size_t n)
{
	if (h->n + n <= sizeof(h->b)) {
		memcpy(h->b + h->n, s, n);
		h->n += n;
	}
}

#define adm_hdr_lit(h, lit) adm_hdr_mem((h), (lit), sizeof(lit) - 1)

/* Adds Access-Control-Allow-Origin for a request from the configured origin. */
static inline void
adm_hdr_cors(struct adm_hdrs *h, const struct worker *w, bool cors)
{
	if (!cors)
		return;
	if (w->cors_any) {
		adm_hdr_lit(h, "Access-Control-Allow-Origin: *\r\n");
		return;
	}
	adm_hdr_lit(h, "Access-Control-Allow-Origin: ");
	adm_hdr_mem(h, w->cors_origin, w->cors_len);
	adm_hdr_lit(h, "\r\nVary: Origin\r\n");
}

static inline void
adm_hdr_retry_after(struct adm_hdrs *h, uint64_t seconds)
{
	struct out_buf o = { h->b + h->n, h->b + sizeof(h->b), true };

	out_lit(&o, "Retry-After: ");
	out_u64(&o, seconds ? seconds : 1);
	out_lit(&o, "\r\n");
	if (o.ok)
		h->n = (size_t)(o.p - h->b);
}

/* Whether the request's Origin is the one configured (compared before anything is written). */
static inline bool
adm_cors_match(const struct worker *w, const struct http_request *r)
{
	if (w->cors_len == 0 || r->origin.len == 0)
		return false;
	if (w->cors_any)
		return true;
	return r->origin.len == w->cors_len && memcmp(r->origin.p, w->cors_origin, w->cors_len) == 0;
}

/* A refusal: counts reason and status, writes {"error":...} with CORS (and Retry-After). */
static inline uint16_t
adm_refuse(struct worker *w, const struct adm_req *q, char *out, uint16_t cap, unsigned status,
	enum dp_reject_reason reason, const char *text, uint64_t retry_after_s)
{
	struct adm_hdrs h;

	adm_hdrs_init(&h);

	adm_hdr_cors(&h, w, q->cors);
	if (retry_after_s)
		adm_hdr_retry_after(&h, retry_after_s);
	w->ctr.reject[reason]++;
	w->ctr.http[dp_http_slot_of(status)]++;
	return http_resp_error(out, cap, &w->resp, status, text, h.b, h.n, q->head);
}

/* A JSON answer with CORS headers. */
static inline uint16_t
adm_json(struct worker *w, const struct adm_req *q, char *out, uint16_t cap, unsigned status,
	const char *body, size_t body_len)
{
	struct adm_hdrs h;

	adm_hdrs_init(&h);

	adm_hdr_cors(&h, w, q->cors);
	w->ctr.http[dp_http_slot_of(status)]++;
	return http_resp_write(out, cap, &w->resp, status, h.b, h.n, body, body_len, q->head);
}

/* The value of "Authorization: Bearer <token>", or a zero-length string. */
static inline struct http_str
adm_bearer(const struct http_request *r)
{
	struct http_str t = { NULL, 0 };

	/* RFC 6750 §2.1: the scheme is case-insensitive, one space, then the token. */
	if (r->authorization.len > 7 && strncasecmp(r->authorization.p, "Bearer ", 7) == 0) {
		t.p = r->authorization.p + 7;
		t.len = (uint16_t)(r->authorization.len - 7);
	}
	return t;
}

/*
 * The user id a token claims in its field-th dot-separated field (1 for "s1.<user>.",
 * 2 for "p1.<event>.<user>."), not verified: only for looking at that user's bucket
 * before paying for the MAC. 0 when the text has no such number.
 */
static inline uint64_t
adm_claimed_user(const char *p, size_t len, unsigned field)
{
	size_t i = 0;
	uint64_t v = 0;

	for (unsigned f = 0; f < field; f++) {
		while (i < len && p[i] != '.')
			i++;
		i++;
	}
	for (unsigned d = 0; i < len && d < 19 && p[i] >= '0' && p[i] <= '9'; i++, d++)
		v = v * 10 + (uint64_t)(p[i] - '0');
	return v;
}

/*
 * Refuses (429) a request whose claimed user is over the limit, before any MAC
 * is checked: the bucket is only looked at, so a forged claim cannot drain
 * anyone's bucket; the token is taken once the MAC proved the user.
 */
static inline uint16_t
adm_peek_user(struct worker *w, const struct adm_req *q, char *out, uint16_t cap, uint64_t user)
{
	uint32_t retry;

	if (w->rl_user != NULL && user != 0 &&
		unlikely(!rl_peek(w->rl_user, user, &w->sh->limits.user, w->now_ms, &retry)))
		return adm_refuse(w, q, out, cap, 429, DP_REJ_LIMIT_USER,
			"too many requests for this user", retry);
	return 0;
}

/* Seconds from now_ms until t_ms, rounded up, at least 1. */
static inline uint64_t
adm_seconds_until(uint64_t now_ms, uint64_t t_ms)
{
	return t_ms > now_ms ? (t_ms - now_ms + 999) / 1000 : 1;
}

/*
 * Checks shared by the three routes: the client's address against the risk
 * rules and its bucket. Returns 0 to go on, or the length of the refusal written.
 */
static inline uint16_t
adm_check_ip(struct worker *w, const struct adm_req *q, char *out, uint16_t cap)
{
	uint32_t retry;

	if (w->sh != NULL && unlikely(rules_block_ip(w->sh->rules, q->client_ip)))
		return adm_refuse(w, q, out, cap, 403, DP_REJ_BLOCKED_IP, "blocked", 0);
	if (w->sh != NULL && w->rl_ip != NULL &&
		unlikely(!rl_take(w->rl_ip, q->client_ip, &w->sh->limits.ip, w->now_ms, &retry)))
		return adm_refuse(w, q, out, cap, 429, DP_REJ_LIMIT_IP,
			"too many requests from this address", retry);
	return 0;
}

/*
 * An event this data plane does not know: 404 once the control plane's events
 * are here; before that (a data plane just started) it may well exist, so the
 * client is asked to come back (503) rather than told it does not.
 */
static inline uint16_t
adm_no_event(struct worker *w, const struct adm_req *q, char *out, uint16_t cap)
{
	if (w->sh == NULL && w->bridge != NULL)
		return adm_refuse(w, q, out, cap, 503, DP_REJ_NOT_READY,
			"not ready: no state from the control plane yet", 1);
	return adm_refuse(w, q, out, cap, 404, DP_REJ_NO_EVENT, "no such event", 0);
}

/*
 * The sale's state for admission: 0 when open, else the refusal written
 * (404 unknown, 425 not yet, 410 sold out or closed). *slot gets the event's
 * index in the table (for its forward budget).
 */
static inline uint16_t
adm_check_event(struct worker *w, const struct adm_req *q, char *out, uint16_t cap, uint32_t id,
	const struct event_entry **ev, unsigned *slot)
{
	const struct event_table *t = worker_events(w);
	const struct event_entry *e = event_lookup(t, id);

	if (e == NULL)
		return adm_no_event(w, q, out, cap);
	switch (event_state_at(e, w->now_ms)) {
	case EVENT_UPCOMING:
		return adm_refuse(w, q, out, cap, 425, DP_REJ_TOO_EARLY, "the sale has not started",
			adm_seconds_until(w->now_ms, e->starts_at_ms));
	case EVENT_SOLD_OUT:
		return adm_refuse(w, q, out, cap, 410, DP_REJ_SOLD_OUT, "sold out", 0);
	case EVENT_CLOSED:
		return adm_refuse(w, q, out, cap, 410, DP_REJ_CLOSED, "the sale is closed", 0);
	case EVENT_OPEN:
		break;
	}
	*ev = e;
	*slot = (unsigned)(e - t->e);
	return 0;
}

/*
 * The hidden reserve path segment of event id under the current sale key,
 * made once per event and shared-state version (an HMAC) and then only
 * compared. NULL when there is no current sale key.
 */
static inline const struct worker_path *
adm_path(struct worker *w, unsigned slot, uint32_t id)
{
	struct worker_path *p = &w->path_cache[slot];

	if (unlikely(p->event != id || p->version != w->sh->version)) {
		int n = tok_path_mint(&w->sh->sale, id, p->seg, sizeof(p->seg));

		p->event = id;
		p->version = w->sh->version;
		p->len = n > 0 ? (uint8_t)n : 0;
	}
	return p->len ? p : NULL;
}

/*
 * Compares n bytes without an early exit: the time says nothing about where they differ.
 * Eight bytes a step, then the rest one at a time.
 */
static inline bool
adm_equal_ct(const char *a, const char *b, size_t n)
{
	uint64_t d = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		d |= x ^ y;
	}
	for (; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/*
 * Whether seg is the reserve path of event id: the cached segment of the
 * current key; a segment of another key id (a rotation's overlap) is checked
 * with its own key, which costs an HMAC, only when that key id is not the
 * current one.
 */
static inline bool
adm_path_ok(struct worker *w, unsigned slot, uint32_t id, const char *seg, unsigned seg_len)
{
	const struct worker_path *p = adm_path(w, slot, id);

	if (likely(p != NULL)) {
		if (seg_len == p->len && adm_equal_ct(seg, p->seg, p->len))
			return true;
		/* Same key id as the current path: a wrong key, no need for an HMAC. */
		const char *dash = memchr(p->seg, '-', p->len);
		size_t kid_len = dash ? (size_t)(dash - p->seg) + 1 : 0;

		if (kid_len != 0 && seg_len > kid_len && memcmp(seg, p->seg, kid_len) == 0)
			return false;
	}
	return tok_path_verify(&w->sh->sale, seg, seg_len, id, NULL) == TOK_OK;
}

/* POST /api/v1/events/{id}/token: a session proves the user; answers a purchase token. */
static inline uint16_t
route_token(struct worker *w, const struct adm_req *q, char *out, uint16_t cap, uint32_t id)
{
	const struct event_entry *e;
	unsigned slot;
	uint16_t n;

	if ((n = adm_check_ip(w, q, out, cap)) != 0)
		return n;
	if ((n = adm_check_event(w, q, out, cap, id, &e, &slot)) != 0)
		return n;
	if (unlikely(w->sh == NULL))
		return adm_refuse(w, q, out, cap, 503, DP_REJ_NOT_READY,
			"not ready: no state from the control plane yet", 1);

	struct http_str bearer = q->claims.bearer;
	struct tok_session s;

	if (bearer.len == 0)
		return adm_refuse(w, q, out, cap, 401, DP_REJ_NO_SESSION,
			"log in first: Authorization: Bearer <session token>", 0);
	if ((n = adm_peek_user(w, q, out, cap, q->claims.session)) != 0)
		return n;
	switch (tok_session_verify(&w->sh->auth, bearer.p, bearer.len, w->now_ms / 1000, &s)) {
	case TOK_OK:
		break;
	case TOK_EXPIRED:
		return adm_refuse(w, q, out, cap, 401, DP_REJ_SESSION_EXPIRED,
			"session expired: log in again", 0);
	default:
		return adm_refuse(w, q, out, cap, 401, DP_REJ_SESSION_INVALID, "invalid session", 0);
	}
	if (unlikely(rules_block_user(w->sh->rules, s.user)))
		return adm_refuse(w, q, out, cap, 403, DP_REJ_BLOCKED_USER, "blocked", 0);

	uint32_t retry;

	if (w->rl_user != NULL &&
		unlikely(!rl_take(w->rl_user, s.user, &w->sh->limits.user, w->now_ms, &retry)))
		return adm_refuse(w, q, out, cap, 429, DP_REJ_LIMIT_USER,
			"too many requests for this user", retry);

	char tok[TOK_BUF_SIZE];
	uint64_t expires_s = w->now_ms / 1000 + w->purchase_ttl_s;
	int tl = tok_purchase_mint(&w->sh->sale, id, s.user, expires_s, tok, sizeof(tok));
	const struct worker_path *path = adm_path(w, slot, id);

	if (unlikely(tl < 0 || path == NULL))
		return adm_refuse(w, q, out, cap, 503, DP_REJ_NOT_READY,
			"not ready: no sale key from the control plane yet", 1);

	char body[384];
	struct out_buf b = { body, body + sizeof(body), true };

	out_lit(&b, "{\"token\":\"");
	out_mem(&b, tok, (size_t)tl);
	out_lit(&b, "\",\"reserve_path\":\"/api/v1/events/");
	out_u64(&b, id);
	out_lit(&b, "/reserve/");
	out_mem(&b, path->seg, path->len);
	out_lit(&b, "\",\"expires_at\":");
	out_u64(&b, expires_s * 1000);
	out_lit(&b, ",\"server_time\":");
	out_u64(&b, w->now_ms);
	out_lit(&b, "}");
	w->ctr.admit[DP_ADM_TOKEN_ISSUED]++;
	return adm_json(w, q, out, cap, 200, body, (size_t)(b.p - body));
}

/* The per-event forward budget of this worker; a slot whose event changed starts full. */
static inline struct rl_bucket *
adm_budget(struct worker *w, unsigned slot, uint32_t event)
{
	struct worker_budget *wb = &w->budget[slot];

	if (unlikely(wb->event != event)) {
		wb->event = event;
		rl_bucket_init(&wb->bucket);
	}
	return &wb->bucket;
}

/*
 * POST /api/v1/events/{id}/reserve/{seg}: the purchase token proves the user
 * (and, when a session comes too, it must be the same user); an admitted
 * reservation goes to the control plane and the client gets a signed receipt.
 */
static inline uint16_t
route_reserve(struct worker *w, const struct adm_req *q, char *out, uint16_t cap, uint32_t id,
	const char *seg, unsigned seg_len)
{
	const struct http_request *r = q->r;
	const struct event_entry *e;
	unsigned slot;
	uint16_t n;

	if ((n = adm_check_ip(w, q, out, cap)) != 0)
		return n;
	if ((n = adm_check_event(w, q, out, cap, id, &e, &slot)) != 0)
		return n;
	if (unlikely(w->sh == NULL || w->bridge == NULL))
		return adm_refuse(w, q, out, cap, 503, DP_REJ_NOT_READY,
			"not ready: no control plane yet", 1);

	/* The sale is open: the claimed user's bucket will be read (adm_peek_user()); http_parse()
	 * prefetched it, a frame ago. */
	uint64_t claimed = q->claims.purchase;

	if (!adm_path_ok(w, slot, id, seg, seg_len))
		return adm_refuse(w, q, out, cap, 403, DP_REJ_BAD_PATH, "no such reserve path", 0);
	if (r->flash_token.len == 0)
		return adm_refuse(w, q, out, cap, 403, DP_REJ_NO_TOKEN,
			"X-Flash-Token with the purchase token is required", 0);

	struct tok_purchase pt;

	if ((n = adm_peek_user(w, q, out, cap, claimed)) != 0)
		return n;
	switch (tok_purchase_verify(&w->sh->sale, r->flash_token.p, r->flash_token.len, id,
		w->now_ms / 1000, &pt)) {
	case TOK_OK:
		break;
	case TOK_WRONG_EVENT:
		return adm_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_OTHER_EVENT,
			"the purchase token is for another event", 0);
	case TOK_EXPIRED:
		return adm_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_EXPIRED,
			"the purchase token expired: ask for a new one", 0);
	default:
		return adm_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_INVALID, "invalid purchase token",
			0);
	}

	struct http_str bearer = q->claims.bearer;

	if (bearer.len != 0) {
		struct tok_session s;

		if (tok_session_verify(&w->sh->auth, bearer.p, bearer.len, w->now_ms / 1000, &s) !=
			TOK_OK)
			return adm_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_OTHER_USER,
				"the session does not prove the purchase token's user", 0);
		if (s.user != pt.user)
			return adm_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_OTHER_USER,
				"the purchase token belongs to another user", 0);
	}
	if (unlikely(rules_block_user(w->sh->rules, pt.user)))
		return adm_refuse(w, q, out, cap, 403, DP_REJ_BLOCKED_USER, "blocked", 0);
	if (r->device_id.len != 0 &&
		unlikely(rules_block_device(w->sh->rules, r->device_id.p, r->device_id.len)))
		return adm_refuse(w, q, out, cap, 403, DP_REJ_BLOCKED_DEVICE, "blocked", 0);

	uint32_t retry;

	if (w->rl_user != NULL &&
		unlikely(!rl_take(w->rl_user, pt.user, &w->sh->limits.user, w->now_ms, &retry)))
		return adm_refuse(w, q, out, cap, 429, DP_REJ_LIMIT_USER,
			"too many requests for this user", retry);
	if (r->device_id.len != 0 && w->rl_device != NULL) {
		/* http_parse() made the key while a sale was selling; otherwise it is made here. */
		uint64_t dev = q->claims.device != 0 ? q->claims.device
						     : rl_key_bytes(w->rl_device, r->device_id.p,
							       r->device_id.len);

		if (unlikely(!rl_take(w->rl_device, dev, &w->sh->limits.device, w->now_ms, &retry)))
			return adm_refuse(w, q, out, cap, 429, DP_REJ_LIMIT_DEVICE,
				"too many requests from this device", retry);
	}
	struct rl_params share = rl_params_split(&w->sh->limits.event_forward, w->n_workers,
		w->index);

	if (unlikely(!rl_bucket_take(adm_budget(w, slot, id), &share, w->now_ms, &retry)))
		return adm_refuse(w, q, out, cap, 429, DP_REJ_FORWARD_BUDGET,
			"too many buyers at once: retry", retry);

	struct wire_reserve res = {
		.reservation_id = wire_reservation_id(w->dp_id, w->index, w->rid_seq),
		.user = pt.user,
		.admitted_ms = w->now_ms,
		.event = id,
		.client_ipv4 = rte_be_to_cpu_32(q->client_ip),
	};

	if (unlikely(bridge_submit(w->bridge, &res) != 0))
		return adm_refuse(w, q, out, cap, 503, DP_REJ_BRIDGE_FULL,
			"busy: retry in a moment", 1);
	w->rid_seq++;

	char body[320];
	struct out_buf b = { body, body + sizeof(body), true };

	out_lit(&b, "{\"status\":\"queued\",\"receipt\":\"");
	/* Minted straight into the body: it has TOK_BUF_SIZE of room here. */
	int rl = tok_receipt_mint(&w->sh->sale, id, pt.user, w->now_ms, b.p, (size_t)(b.end - b.p));

	if (rl > 0)
		b.p += rl;
	out_lit(&b, "\",\"result_path\":\"/api/v1/events/");
	out_u64(&b, id);
	out_lit(&b, "/result\"}");
	w->ctr.admit[DP_ADM_RESERVE_ADMITTED]++;
	return adm_json(w, q, out, cap, 202, body, (size_t)(b.p - body));
}

/* "reserved", "ordered", ... for a wire verdict. */
static inline const char *
adm_verdict_name(uint8_t v)
{
	static const char *const names[WIRE_V_MAX] = {
		[WIRE_V_RESERVED] = "reserved", [WIRE_V_DUPLICATE] = "duplicate",
		[WIRE_V_SOLD_OUT] = "sold_out", [WIRE_V_RETRY] = "retry",
		[WIRE_V_ORDERED] = "ordered",   [WIRE_V_PAID] = "paid",
		[WIRE_V_EXPIRED] = "expired",   [WIRE_V_CANCELLED] = "cancelled",
	};

	return v < WIRE_V_MAX && names[v] != NULL ? names[v] : "unknown";
}

/*
 * GET /api/v1/events/{id}/result with X-Flash-Token: the purchase token or the
 * receipt. Only the user the token proves is looked up: no answer names
 * another user's result.
 */
static inline uint16_t
route_result(struct worker *w, const struct adm_req *q, char *out, uint16_t cap, uint32_t id)
{
	const struct http_request *r = q->r;
	uint16_t n;

	if ((n = adm_check_ip(w, q, out, cap)) != 0)
		return n;
	if (event_lookup(worker_events(w), id) == NULL)
		return adm_no_event(w, q, out, cap);
	if (unlikely(w->sh == NULL))
		return adm_refuse(w, q, out, cap, 503, DP_REJ_NOT_READY,
			"not ready: no state from the control plane yet", 1);
	if (r->flash_token.len == 0)
		return adm_refuse(w, q, out, cap, 403, DP_REJ_NO_TOKEN,
			"X-Flash-Token with the receipt or the purchase token is required", 0);

	uint64_t user;
	bool young = false, lost = false;
	enum tok_status st;

	if (tok_kind_of(r->flash_token.p, r->flash_token.len) == TOK_KIND_RECEIPT) {
		struct tok_receipt rc;

		st = tok_receipt_verify(&w->sh->sale, r->flash_token.p, r->flash_token.len, id, &rc);
		user = rc.user;
		young = w->now_ms < rc.admitted_ms + w->receipt_young_ms;
		lost = w->now_ms >= rc.admitted_ms + w->receipt_retry_ms;
	} else {
		struct tok_purchase pt;

		st = tok_purchase_verify(&w->sh->sale, r->flash_token.p, r->flash_token.len, id,
			w->now_ms / 1000, &pt);
		user = pt.user;
	}
	switch (st) {
	case TOK_OK:
		break;
	case TOK_WRONG_EVENT:
		return adm_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_OTHER_EVENT,
			"the token is for another event", 0);
	case TOK_EXPIRED:
		return adm_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_EXPIRED,
			"the purchase token expired: poll with the receipt", 0);
	default:
		return adm_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_INVALID, "invalid token", 0);
	}

	struct rt_result res = {0}; /* set by the lookup when found; zero keeps gcc sure of it */
	char body[256];
	struct out_buf b = { body, body + sizeof(body), true };
	int found = w->bridge != NULL ? result_table_lookup(w->bridge->results, id, user, &res)
				      : -ENOENT;

	out_lit(&b, "{\"event\":");
	out_u64(&b, id);
	if (found == 0) {
		const char *v = adm_verdict_name(res.verdict);

		out_lit(&b, ",\"status\":\"");
		out_mem(&b, v, strlen(v));
		out_lit(&b, "\"");
		if (res.order_id != 0) {
			out_lit(&b, ",\"order_id\":");
			out_u64(&b, res.order_id);
			out_lit(&b, ",\"pay_deadline\":");
			out_u64(&b, res.pay_deadline_ms);
		}
		w->ctr.admit[DP_ADM_RESULT_FOUND]++;
	} else {
		/* No result here: a young receipt is simply still queued; for anything older
		 * the result may have been missed or evicted, so the control plane is asked.
		 * A receipt that stayed without a result for receipt_retry was lost before
		 * Redis decided it (a control plane died with it in its buffers): the client
		 * reserves again, and if it was decided after all, that attempt says so. */
		if (lost) {
			out_lit(&b, ",\"status\":\"retry\"");
			w->ctr.admit[DP_ADM_RESULT_LOST]++;
		} else {
			out_lit(&b, ",\"status\":\"queued\"");
			w->ctr.admit[DP_ADM_RESULT_QUEUED]++;
		}
		if (!young && w->bridge != NULL && bridge_query(w->bridge, id, user) == 0)
			w->ctr.admit[DP_ADM_RESULT_QUERY]++;
	}
	out_lit(&b, ",\"server_time\":");
	out_u64(&b, w->now_ms);
	out_lit(&b, "}");
	return adm_json(w, q, out, cap, 200, body, (size_t)(b.p - body));
}

/*
 * A CORS preflight (OPTIONS) on an API resource whose methods are allow.
 * From the configured origin: 204 with the Access-Control-* headers; from any
 * other origin, or without CORS configured: 204 with Allow only, which the
 * browser takes as a refusal.
 */
static inline uint16_t
route_preflight(struct worker *w, const struct adm_req *q, char *out, uint16_t cap,
	const char *allow, size_t allow_len)
{
	struct adm_hdrs h;

	adm_hdrs_init(&h);

	adm_hdr_lit(&h, "Allow: ");
	adm_hdr_mem(&h, allow, allow_len);
	adm_hdr_lit(&h, "\r\n");
	if (q->cors) {
		adm_hdr_cors(&h, w, true);
		adm_hdr_lit(&h, "Access-Control-Allow-Methods: ");
		adm_hdr_mem(&h, allow, allow_len);
		adm_hdr_lit(&h, "\r\nAccess-Control-Allow-Headers: Authorization, X-Flash-Token, "
				"X-Device-Id, Content-Type\r\nAccess-Control-Max-Age: 600\r\n");
	}
	w->ctr.admit[DP_ADM_CORS_PREFLIGHT]++;
	w->ctr.http[DP_HTTP_204]++;
	return http_resp_write(out, cap, &w->resp, 204, h.b, h.n, "", 0, true);
}

#endif
