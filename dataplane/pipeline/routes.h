/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_ROUTES_H
#define FG_DP_PIPELINE_ROUTES_H
/*
 * The data plane's HTTP API (docs/api.md): every route, and the dispatcher route_request()
 * that picks one for a request req_parse() (request.h) parsed.
 *   GET|HEAD /healthz
 *   GET|HEAD /readyz                                 can this data plane sell now (readyz.h)
 *   GET|HEAD /api/v1/events/{id}
 *   POST     /api/v1/events/{id}/token             session token -> purchase token + reserve path
 *   POST     /api/v1/events/{id}/reserve/{kid-key} purchase token -> 202 + receipt, forwarded
 *   GET|HEAD /api/v1/events/{id}/result            purchase token or receipt -> the user's result
 *   OPTIONS  on any of them: CORS preflight
 *
 * Private to the pipeline: only dataplane/pipeline.c includes it, directly or through
 * another header of dataplane/pipeline/ (tests and benchmarks aside).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/hex.h"
#include "common/pow.h"
#include "common/token.h"
#include "common/wire.h"
#include "dataplane/bridge/bridge.h"
#include "dataplane/events.h"
#include "dataplane/http_parser.h"
#include "dataplane/http_response.h"
#include "dataplane/pipeline/admission.h"
#include "dataplane/pipeline/answer.h"
#include "dataplane/pipeline/readyz.h"
#include "dataplane/pipeline/request.h"
#include "dataplane/result_table.h"
#include "dataplane/worker.h"

#define ROUTE_EVENTS_PREFIX "/api/v1/events/"

static inline bool
route_str_is(const struct http_str *s, const char *lit, size_t lit_len)
{
	return s->len == lit_len && memcmp(s->p, lit, lit_len) == 0;
}

/*
 * Parses a decimal event id of 1 to 10 digits without a leading zero, at most
 * UINT32_MAX, from p[0..len). Returns the number of digits used, or 0.
 */
static inline unsigned
route_event_id(const char *p, unsigned len, uint32_t *id)
{
	uint64_t v = 0;
	unsigned i = 0;

	while (i < len && i < 11 && p[i] >= '0' && p[i] <= '9')
		v = v * 10 + (uint64_t)(p[i++] - '0');
	if (i == 0 || i > 10 || v == 0 || v > UINT32_MAX || p[0] == '0')
		return 0;
	*id = (uint32_t)v;
	return i;
}

/*
 * 405 for a method a resource does not take: the Allow line says which it does
 * (RFC 9110 §15.5.6).
 */
static inline uint16_t
route_method_not_allowed(struct worker *w, const struct req_view *q, char *out, uint16_t cap,
	const char *allow, size_t allow_len)
{
	struct ans_hdrs h;

	ans_hdrs_init(&h);

	ans_hdr_allow(&h, allow, allow_len);
	ans_hdr_cors(&h, w, q->cors);
	w->ctr.http[DP_HTTP_405]++;
	return http_resp_error(out, cap, &w->resp, 405, "method not allowed on this resource",
		h.b, h.n, q->head);
}

/*
 * A CORS preflight (OPTIONS) on an API resource whose methods are allow.
 * From the configured origin: 204 with the Access-Control-* headers; from any
 * other origin, or without CORS configured: 204 with Allow only, which the
 * browser takes as a refusal.
 */
static inline uint16_t
route_preflight(struct worker *w, const struct req_view *q, char *out, uint16_t cap,
	const char *allow, size_t allow_len)
{
	struct ans_hdrs h;

	ans_hdrs_init(&h);

	ans_hdr_allow(&h, allow, allow_len);
	if (q->cors) {
		ans_hdr_cors(&h, w, true);
		ans_hdr_lit(&h, "Access-Control-Allow-Methods: ");
		ans_hdr_mem(&h, allow, allow_len);
		ans_hdr_lit(&h, "\r\n" ANS_PREFLIGHT_TAIL);
	}
	w->ctr.admit[DP_ADM_CORS_PREFLIGHT]++;
	w->ctr.http[DP_HTTP_204]++;
	return http_resp_write(out, cap, &w->resp, 204, h.b, h.n, "", 0, true);
}

/* Writes the n bytes at d (at most WIRE_DIGEST_LEN) as lowercase hex, quoted. */
static inline void
route_hex(struct out_buf *b, const uint8_t *d, size_t n)
{
	char hex[2 * WIRE_DIGEST_LEN];

	n = n < WIRE_DIGEST_LEN ? n : WIRE_DIGEST_LEN;
	hex_encode(d, n, hex);
	out_lit(b, "\"");
	out_mem(b, hex, 2 * n);
	out_lit(b, "\"");
}

/* A digest as hex, or null while it is all zeros (not published yet). */
static inline void
route_hex_or_null(struct out_buf *b, const uint8_t *d)
{
	uint8_t any = 0;

	for (size_t i = 0; i < WIRE_DIGEST_LEN; i++)
		any |= d[i];
	if (any)
		route_hex(b, d, WIRE_DIGEST_LEN);
	else
		out_lit(b, "null");
}

/*
 * The fair start's fields of GET /api/v1/events/{id} (docs/api.md): the challenge's
 * difficulty for new tokens, the seed's commitment, and for a draw its times and progress.
 * Out of line: the event answer is not the hot path, and this keeps it short.
 */
static __rte_noinline void
route_event_fair(struct out_buf *b, const struct event_entry *e, uint64_t now_ms)
{
	out_lit(b, ",\"challenge_bits\":");
	out_u64(b, e->has_fair ? __atomic_load_n(&e->pow_bits, __ATOMIC_RELAXED) : 0);
	if (!e->has_fair)
		return;
	out_lit(b, ",\"seed_sha256\":");
	route_hex(b, e->seed_sha256, WIRE_DIGEST_LEN);
	if (e->draw_state == WIRE_DRAW_NONE)
		return;

	const char *st = e->draw_state == WIRE_DRAW_DONE ? "done"
			 : e->draw_state == WIRE_DRAW_DRAWING || now_ms >= e->draw_at_ms
				 ? "drawing"
				 : "queueing";

	out_lit(b, ",\"queue_opens_at\":");
	out_u64(b, e->queue_opens_at_ms);
	out_lit(b, ",\"draw_at\":");
	out_u64(b, e->draw_at_ms);
	out_lit(b, ",\"draw\":{\"state\":\"");
	out_mem(b, st, strlen(st));
	out_lit(b, "\",\"seed_sha256\":");
	route_hex(b, e->seed_sha256, WIRE_DIGEST_LEN);
	out_lit(b, ",\"entrants\":");
	out_u64(b, __atomic_load_n(&e->entrants, __ATOMIC_RELAXED));
	out_lit(b, ",\"entrants_digest\":");
	route_hex_or_null(b, e->entrants_digest);
	out_lit(b, ",\"decided\":");
	out_u64(b, __atomic_load_n(&e->decided, __ATOMIC_RELAXED));
	out_lit(b, ",\"seed\":");
	if (e->draw_state == WIRE_DRAW_DONE)
		route_hex_or_null(b, e->seed);
	else
		out_lit(b, "null");
	out_lit(b, "}");
}

static inline uint16_t
route_event_info(struct worker *w, const struct req_view *q, char *out, uint16_t cap, uint32_t id)
{
	const struct event_entry *e = event_lookup(worker_events(w), id);
	/* Up to ~330 bytes without a draw, ~700 with one (five digests in hex): one segment
	 * at a usual MSS, more at a small one (tcp.h sends an answer in several). */
	char body[1024];
	struct out_buf b = { body, body + sizeof(body), true };

	if (e == NULL) {
		/* Public information: what this data plane knows now (its config's events until
		 * the control plane's arrive). Admission routes say 503 instead (adm_no_event()). */
		struct ans_hdrs h;

	ans_hdrs_init(&h);

	ans_hdr_cors(&h, w, q->cors);
	w->ctr.http[DP_HTTP_404]++;
	return http_resp_error(out, cap, &w->resp, 404, "no such event", h.b, h.n, q->head);
	}
	out_lit(&b, "{\"id\":");
	out_u64(&b, e->id);
	out_lit(&b, ",\"name\":");
	out_mem(&b, e->name_json, e->name_json_len);
	out_lit(&b, ",\"state\":\"");
	const char *st = event_state_name(event_state_at(e, w->now_ms));
	out_mem(&b, st, strlen(st));
	out_lit(&b, "\",\"starts_at\":");
	out_u64(&b, e->starts_at_ms);
	out_lit(&b, ",\"ends_at\":");
	out_u64(&b, e->ends_at_ms);
	out_lit(&b, ",\"stock\":");
	/* The bridge updates it in place as results come (bridge_in.c result_stock()). */
	out_u64(&b, __atomic_load_n(&e->stock, __ATOMIC_RELAXED));
	route_event_fair(&b, e, w->now_ms);
	out_lit(&b, ",\"server_time\":");
	out_u64(&b, w->now_ms);
	out_lit(&b, "}");
	return ans_json(w, q, out, cap, 200, body, (size_t)(b.p - body));
}

/* POST /api/v1/events/{id}/token: a session proves the user; answers a purchase token. */
static inline uint16_t
route_token(struct worker *w, const struct req_view *q, char *out, uint16_t cap, uint32_t id)
{
	const struct event_entry *e;
	unsigned slot;
	uint16_t n;

	if ((n = adm_check_ip(w, q, out, cap)) != 0)
		return n;
	if ((n = adm_check_event(w, q, out, cap, id, &e, &slot)) != 0)
		return n;
	if (unlikely(w->sh == NULL))
		return ans_refuse(w, q, out, cap, 503, DP_REJ_NOT_READY,
			"not ready: no state from the control plane yet", 1);

	struct http_str bearer = q->claims.bearer;
	struct tok_session s;

	if (bearer.len == 0)
		return ans_refuse(w, q, out, cap, 401, DP_REJ_NO_SESSION,
			"log in first: Authorization: Bearer <session token>", 0);
	const struct rl_entry *user_at;

	if ((n = adm_peek_user(w, q, out, cap, q->claims.session, &user_at)) != 0)
		return n;
	/* A blocked user is shed before the session's HMAC, by its claim. */
	if (unlikely(rules_block_user(w->sh->rules, q->claims.session)))
		return ans_refuse(w, q, out, cap, 403, DP_REJ_BLOCKED_USER, "blocked", 0);
	switch (tok_session_verify(&w->sh->auth, bearer.p, bearer.len, w->now_ms / 1000, &s)) {
	case TOK_OK:
		break;
	case TOK_EXPIRED:
		return ans_refuse(w, q, out, cap, 401, DP_REJ_SESSION_EXPIRED,
			"session expired: log in again", 0);
	default:
		return ans_refuse(w, q, out, cap, 401, DP_REJ_SESSION_INVALID, "invalid session", 0);
	}
	if (unlikely(s.user != q->claims.session) && rules_block_user(w->sh->rules, s.user))
		return ans_refuse(w, q, out, cap, 403, DP_REJ_BLOCKED_USER, "blocked", 0);

	uint32_t retry;

	if (w->rl_user != NULL &&
		unlikely(!rl_take_at(w->rl_user, s.user, user_at, &w->sh->limits.user, w->now_ms,
			&retry)))
		return ans_refuse(w, q, out, cap, 429, DP_REJ_LIMIT_USER,
			"too many requests for this user", retry);

	char tok[TOK_BUF_SIZE];
	uint64_t expires_s = w->now_ms / 1000 + w->purchase_ttl_s;
	/* The event's difficulty now (the bridge changes it in place): a p2 token with a
	 * challenge when it is on, p1 otherwise. */
	unsigned bits = __atomic_load_n(&e->pow_bits, __ATOMIC_RELAXED);
	int tl = tok_purchase_mint_pow(&w->sh->sale, id, s.user, expires_s, bits, tok, sizeof(tok));
	const struct worker_path *path = adm_path(w, slot, id);

	if (unlikely(tl < 0 || path == NULL))
		return ans_refuse(w, q, out, cap, 503, DP_REJ_NOT_READY,
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
	if (bits != 0) {
		/* The challenge's prefix is the token's MAC text (common/pow.h). */
		out_lit(&b, ",\"challenge\":{\"prefix\":\"");
		out_mem(&b, tok + tl - TOK_MAC_CHARS, TOK_MAC_CHARS);
		out_lit(&b, "\",\"bits\":");
		out_u64(&b, bits);
		out_lit(&b, "}");
		w->ctr.admit[DP_ADM_TOKEN_CHALLENGE]++;
	}
	out_lit(&b, ",\"server_time\":");
	out_u64(&b, w->now_ms);
	out_lit(&b, "}");
	w->ctr.admit[DP_ADM_TOKEN_ISSUED]++;
	return ans_json(w, q, out, cap, 200, body, (size_t)(b.p - body));
}

/*
 * The result of (event, user) from the table of the worker's bridge (not NULL): with the user's
 * hash req_parse() computed, and its bucket prefetched, when the request's purchase token
 * claimed that user.
 */
static inline int
route_result_lookup(const struct worker *w, const struct req_view *q, uint32_t event,
	uint64_t user, struct rt_result *out)
{
	const struct result_table *t = w->bridge->results;
	/* purchase_rt is set when purchase is not 0. */
	uint64_t uh = likely(q->claims.purchase == user && user != 0)
			      ? q->claims.purchase_rt
			      : result_table_user_hash(t, user);

	return result_table_lookup_h(t, result_table_hash_of(uh, event), event, user, out);
}

/*
 * For a reserve whose claimed user may be a known buyer of event (its home's summary, which
 * req_parse() prefetched, has its bit): the index's bucket on the way, while the token's checks
 * run before route_result_lookup(). Most new buyers' bits are clear: nothing to fetch.
 */
static inline void
route_result_prefetch(const struct worker *w, const struct req_view *q, uint32_t event)
{
	const struct result_table *t = w->bridge->results;

	if (q->claims.purchase == 0) /* purchase_rt is set only for a claim */
		return;
	uint64_t h = result_table_hash_of(q->claims.purchase_rt, event);

	if (unlikely(result_table_may_hold(t, h)))
		result_table_prefetch(t, h);
}

/*
 * A draw entrant's place in line (docs/api.md), from what the control plane pushed (the
 * result's rank, the event's decided and rate), never by a query: once ranked, "position"
 * (entrants ahead not decided yet: rank - 1 - decided, at least 0) and "wait_ms" (position at
 * the recent rate; absent while the rate is 0); before the draw, "draw_at" and "wait_ms"
 * until it. Out of line: only entrants' polls come here.
 */
static __rte_noinline void
route_queued_fields(struct out_buf *b, const struct event_entry *e, const struct rt_result *r,
	uint64_t now_ms)
{
	if (e == NULL)
		return;
	if (r->rank == 0) {
		if (e->draw_at_ms == 0)
			return;
		out_lit(b, ",\"draw_at\":");
		out_u64(b, e->draw_at_ms);
		out_lit(b, ",\"wait_ms\":");
		out_u64(b, e->draw_at_ms > now_ms ? e->draw_at_ms - now_ms : 0);
		return;
	}
	uint64_t decided = __atomic_load_n(&e->decided, __ATOMIC_RELAXED);
	uint64_t rate = __atomic_load_n(&e->rate, __ATOMIC_RELAXED);
	uint64_t ahead = (uint64_t)r->rank - 1;
	uint64_t pos = ahead > decided ? ahead - decided : 0;

	out_lit(b, ",\"position\":");
	out_u64(b, pos);
	if (rate != 0) {
		out_lit(b, ",\"wait_ms\":");
		out_u64(b, pos * 1000 / rate);
	}
}

/*
 * A draw's entrant beyond the stock on the waiting list (docs/api.md): while the sale is open
 * and items may come back, "waiting" with its rank and "ahead" (rank - 1 - served: entrants by
 * rank before it still without an item); once it is closed or ended, or no item can come back
 * (the control plane's FAIR says so: the stock is 0 and every item held is paid), "sold_out"
 * (final).
 */
static inline bool
route_waiting_open(const struct event_entry *e, uint64_t now_ms)
{
	return e != NULL && !e->closed && now_ms < e->ends_at_ms &&
	       !__atomic_load_n(&e->final, __ATOMIC_RELAXED);
}

static __rte_noinline void
route_waiting_fields(struct out_buf *b, const struct event_entry *e, const struct rt_result *r)
{
	uint64_t served = __atomic_load_n(&e->served, __ATOMIC_RELAXED);
	uint64_t ahead = (uint64_t)r->rank - 1;

	out_lit(b, ",\"rank\":");
	out_u64(b, r->rank);
	out_lit(b, ",\"ahead\":");
	out_u64(b, ahead > served ? ahead - served : 0);
}

/*
 * Writes ,"status":"...", and the order's fields when there is an order, for result r of
 * event e (NULL: not known here); a draw entrant's place in line when it is queued, on the
 * waiting list while it is open.
 */
static inline void
route_result_fields(struct out_buf *b, const struct event_entry *e, const struct rt_result *r,
	uint64_t now_ms)
{
	bool waiting = unlikely(r->verdict == WIRE_V_WAITING) && route_waiting_open(e, now_ms);
	const char *v = r->verdict == WIRE_V_WAITING && !waiting
				? wire_verdict_name(WIRE_V_SOLD_OUT)
				: wire_verdict_name(r->verdict);

	out_lit(b, ",\"status\":\"");
	out_mem(b, v, strlen(v));
	out_lit(b, "\"");
	if (r->order_id != 0) {
		out_lit(b, ",\"order_id\":");
		out_u64(b, r->order_id);
		out_lit(b, ",\"pay_deadline\":");
		out_u64(b, r->pay_deadline_ms);
	}
	if (unlikely(r->verdict == WIRE_V_QUEUED))
		route_queued_fields(b, e, r, now_ms);
	if (waiting)
		route_waiting_fields(b, e, r);
}

/*
 * A reserve from a user whose result here shows they hold (or held) an item of the sale:
 * reserved, ordered, paid, expired, cancelled, or duplicate (Redis knows them as a buyer, so
 * a new attempt could only be decided duplicate); or an entrant of the sale's draw, queued
 * (a second entry changes nothing). Answered 200 with that result, as a poll
 * would be, without taking from the forward budget or reaching the control plane. Out of line:
 * rare next to the reserves that go through.
 */
static __rte_noinline uint16_t
route_reserve_known(struct worker *w, const struct req_view *q, char *out, uint16_t cap,
	const struct event_entry *e, const struct rt_result *r)
{
	char body[256];
	struct out_buf b = {body, body + sizeof(body), true};

	out_lit(&b, "{\"event\":");
	out_u64(&b, e->id);
	route_result_fields(&b, e, r, w->now_ms);
	out_lit(&b, ",\"server_time\":");
	out_u64(&b, w->now_ms);
	out_lit(&b, "}");
	w->ctr.admit[DP_ADM_RESERVE_KNOWN]++;
	return ans_json(w, q, out, cap, 200, body, (size_t)(b.p - body));
}

/* Whether verdict v makes a user a known buyer (route_reserve_known()). */
static inline bool
route_known_buyer(uint8_t v)
{
	return v == WIRE_V_RESERVED || v == WIRE_V_DUPLICATE || v == WIRE_V_ORDERED ||
	       v == WIRE_V_PAID || v == WIRE_V_EXPIRED || v == WIRE_V_CANCELLED ||
	       v == WIRE_V_QUEUED || v == WIRE_V_WAITING;
}

/*
 * Whether user (claimed, not verified yet) is an entrant of event's draw here: during the
 * draw only they get past the 425 (to be answered their place), the others are refused before
 * any hash. A forged claim only reaches the token's HMAC, which refuses it.
 */
static inline bool
route_entrant(struct worker *w, uint32_t event, uint64_t user)
{
	struct rt_result r;

	return user != 0 && result_table_lookup(w->bridge->results, event, user, &r) == 0 &&
	       r.verdict == WIRE_V_QUEUED;
}

/*
 * A p2 token's challenge (common/pow.h): X-Flash-Solution must solve it. Checked from the
 * token's text before its HMAC, one SHA-256 block, so a flood without work costs little; a
 * lowered difficulty in the text fails the HMAC afterwards, and a solution for another token
 * (another MAC text, so another prefix) fails here. Returns 0 to go on, or the refusal's length.
 */
static inline uint16_t
route_check_solution(struct worker *w, const struct req_view *q, char *out, uint16_t cap)
{
	const struct http_request *r = q->r;
	unsigned bits;
	const char *prefix;

	if (likely(!tok_purchase_challenge(r->flash_token.p, r->flash_token.len, &bits, &prefix)))
		return 0;
	if (r->flash_solution.len == 0)
		return ans_refuse(w, q, out, cap, 403, DP_REJ_POW_MISSING,
			"solve the challenge: X-Flash-Solution is required", 0);
	if (!pow_check(prefix, TOK_MAC_CHARS, r->flash_solution.p, r->flash_solution.len, bits))
		return ans_refuse(w, q, out, cap, 403, DP_REJ_POW_WRONG,
			"X-Flash-Solution does not solve the challenge", 0);
	return 0;
}

/*
 * POST /api/v1/events/{id}/reserve/{seg}: the purchase token proves the user
 * (and, when a session comes too, it must be the same user); an admitted
 * reservation goes to the control plane and the client gets a signed receipt.
 */
static inline uint16_t
route_reserve(struct worker *w, const struct req_view *q, char *out, uint16_t cap, uint32_t id,
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
		return ans_refuse(w, q, out, cap, 503, DP_REJ_NOT_READY,
			"not ready: no control plane yet", 1);

	/* The sale is open: the claimed user's bucket will be read (adm_peek_user()); req_parse()
	 * prefetched it, a frame ago. */
	uint64_t claimed = q->claims.purchase;

	if (!adm_path_ok(w, slot, id, seg, seg_len))
		return ans_refuse(w, q, out, cap, 403, DP_REJ_BAD_PATH, "no such reserve path", 0);
	if (r->flash_token.len == 0)
		return ans_refuse(w, q, out, cap, 403, DP_REJ_NO_TOKEN,
			"X-Flash-Token with the purchase token is required", 0);
	/* The draw decides its entrants now: nobody new is taken, an entrant learns its place. */
	bool drawing = unlikely(event_draw_pending(e)) &&
		       event_state_draw(e, w->now_ms) == EVENT_DRAWING;

	if (unlikely(drawing) && !route_entrant(w, id, claimed))
		return ans_refuse(w, q, out, cap, 425, DP_REJ_DRAWING, "the draw is in progress", 1);
	route_result_prefetch(w, q, id);

	struct tok_purchase pt;
	/* req_parse() made the device's key while a sale was selling; otherwise it is made here. */
	uint64_t dev = r->device_id.len == 0 || w->rl_device == NULL ? 0
		       : q->claims.device != 0
			       ? q->claims.device
			       : rl_key_bytes(w->rl_device, r->device_id.p, r->device_id.len);

	const struct rl_entry *user_at, *dev_at;

	if ((n = adm_peek_user(w, q, out, cap, claimed, &user_at)) != 0)
		return n;
	if ((n = adm_shed_claims(w, q, out, cap, claimed, dev, &dev_at)) != 0)
		return n;
	if ((n = route_check_solution(w, q, out, cap)) != 0)
		return n;
	switch (tok_purchase_verify(&w->sh->sale, r->flash_token.p, r->flash_token.len, id,
		w->now_ms / 1000, &pt)) {
	case TOK_OK:
		break;
	case TOK_WRONG_EVENT:
		return ans_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_OTHER_EVENT,
			"the purchase token is for another event", 0);
	case TOK_EXPIRED:
		return ans_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_EXPIRED,
			"the purchase token expired: ask for a new one", 0);
	default:
		return ans_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_INVALID, "invalid purchase token",
			0);
	}

	struct http_str bearer = q->claims.bearer;

	if (bearer.len != 0) {
		struct tok_session s;

		if (tok_session_verify(&w->sh->auth, bearer.p, bearer.len, w->now_ms / 1000, &s) !=
			TOK_OK)
			return ans_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_OTHER_USER,
				"the session does not prove the purchase token's user", 0);
		if (s.user != pt.user)
			return ans_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_OTHER_USER,
				"the purchase token belongs to another user", 0);
	}
	/* The claim was the user's rules' check (adm_shed_claims()); a token whose user reads
	 * otherwise than its claim is checked again. */
	if (unlikely(pt.user != claimed) && rules_block_user(w->sh->rules, pt.user))
		return ans_refuse(w, q, out, cap, 403, DP_REJ_BLOCKED_USER, "blocked", 0);

	uint32_t retry;

	if (w->rl_user != NULL &&
		unlikely(!rl_take_at(w->rl_user, pt.user, user_at, &w->sh->limits.user, w->now_ms,
			&retry)))
		return ans_refuse(w, q, out, cap, 429, DP_REJ_LIMIT_USER,
			"too many requests for this user", retry);
	if (r->device_id.len != 0 && w->rl_device != NULL &&
		unlikely(!rl_take_at(w->rl_device, dev, dev_at, &w->sh->limits.device, w->now_ms,
			&retry)))
		return ans_refuse(w, q, out, cap, 429, DP_REJ_LIMIT_DEVICE,
			"too many requests from this device", retry);
	struct rt_result known;

	if (unlikely(route_result_lookup(w, q, id, pt.user, &known) == 0) &&
		route_known_buyer(known.verdict))
		return route_reserve_known(w, q, out, cap, e, &known);
	if (unlikely(drawing)) /* claimed an entrant's id, proved another user */
		return ans_refuse(w, q, out, cap, 425, DP_REJ_DRAWING, "the draw is in progress", 1);

	/* A stopping data plane takes nothing new: what it took is being handed over. */
	if (unlikely(bridge_port_stopping(w->bridge)))
		return ans_refuse(w, q, out, cap, 503, DP_REJ_STOPPING,
			"this server is stopping: retry", 1);
	if (unlikely(!rl_bucket_take(adm_budget(w, slot, id), adm_forward_share(w), w->now_ms,
		    &retry)))
		return ans_refuse(w, q, out, cap, 429, DP_REJ_FORWARD_BUDGET,
			"too many buyers at once: retry", retry);

	struct wire_reserve res = {
		.reservation_id = wire_reservation_id(w->dp_id, w->index, w->rid_seq),
		.user = pt.user,
		.admitted_ms = w->now_ms,
		.event = id,
		.client_ipv4 = q->client->family == 4 ? rte_be_to_cpu_32(q->client->ip4) : 0,
	};

	if (unlikely(bridge_submit(w->bridge, &res) != 0))
		return ans_refuse(w, q, out, cap, 503, DP_REJ_BRIDGE_FULL,
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
	return ans_json(w, q, out, cap, 202, body, (size_t)(b.p - body));
}

/*
 * A poll that found the user queued in the draw: counted; and when the draw is past the
 * user's rank (decided beyond it, or done) while the table still says queued, the decision
 * was missed (evicted, or published before this data plane listened): the control plane is
 * asked, once per cooldown as for any missing result. Never while the user is still waiting.
 */
static __rte_noinline void
route_result_queued(struct worker *w, const struct event_entry *e, uint32_t id, uint64_t user,
	const struct rt_result *r)
{
	w->ctr.admit[DP_ADM_RESULT_POSITION]++;
	if (e->draw_state == WIRE_DRAW_QUEUEING || e->draw_state == WIRE_DRAW_NONE)
		return;
	if (r->rank != 0 && r->rank > __atomic_load_n(&e->decided, __ATOMIC_RELAXED))
		return;
	if (w->bridge != NULL && bridge_query(w->bridge, id, user, w->now_ms) == 0)
		w->ctr.admit[DP_ADM_RESULT_QUERY]++;
}

/*
 * A poll that found the user reserved or duplicate, with a receipt past
 * admission.receipt_young (or with the purchase token, which tells no time), or ordered past
 * the order's pay deadline: what follows (ORDERED with the order's id and pay deadline; after a
 * duplicate, the result the user holds; after the deadline, PAID or EXPIRED) comes as a push,
 * which this data plane may have missed (it restarted or reconnected, or a message was dropped
 * at the PUB high-water mark). The control plane is asked to publish the
 * result again, once per cooldown as for a missing result; it answers from Redis, where the
 * order writer writes ORDERED with the order (docs/wire.md RESULT_QUERY). The poll is answered
 * from the table meanwhile.
 */
static __rte_noinline void
route_result_stale(struct worker *w, uint32_t id, uint64_t user)
{
	int qr = bridge_query(w->bridge, id, user, w->now_ms);

	if (qr == 0)
		w->ctr.admit[DP_ADM_RESULT_QUERY]++;
	else if (qr == -EALREADY)
		w->ctr.admit[DP_ADM_RESULT_COOLED]++;
}

/*
 * GET /api/v1/events/{id}/result with X-Flash-Token: the purchase token or the
 * receipt. Only the user the token proves is looked up: no answer names
 * another user's result.
 */
static inline uint16_t
route_result(struct worker *w, const struct req_view *q, char *out, uint16_t cap, uint32_t id)
{
	const struct http_request *r = q->r;
	uint16_t n;

	const struct event_entry *e;

	if ((n = adm_check_ip(w, q, out, cap)) != 0)
		return n;
	if ((e = event_lookup(worker_events(w), id)) == NULL)
		return adm_no_event(w, q, out, cap);
	if (unlikely(w->sh == NULL))
		return ans_refuse(w, q, out, cap, 503, DP_REJ_NOT_READY,
			"not ready: no state from the control plane yet", 1);
	if (r->flash_token.len == 0)
		return ans_refuse(w, q, out, cap, 403, DP_REJ_NO_TOKEN,
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
		return ans_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_OTHER_EVENT,
			"the token is for another event", 0);
	case TOK_EXPIRED:
		return ans_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_EXPIRED,
			"the purchase token expired: poll with the receipt", 0);
	default:
		return ans_refuse(w, q, out, cap, 403, DP_REJ_TOKEN_INVALID, "invalid token", 0);
	}

	uint32_t retry;

	if (w->rl_poll != NULL &&
		unlikely(!rl_take(w->rl_poll, user, &w->poll_limit, w->now_ms, &retry)))
		return ans_refuse(w, q, out, cap, 429, DP_REJ_LIMIT_POLL,
			"too many polls for this user", retry);

	struct rt_result res = {0}; /* set by the lookup when found; zero keeps gcc sure of it */
	char body[256];
	struct out_buf b = { body, body + sizeof(body), true };
	int found = w->bridge != NULL ? route_result_lookup(w, q, id, user, &res) : -ENOENT;

	/* A stored RETRY is about an earlier attempt when a young receipt proves a newer one is
	 * on its way: that one is queued, and says "retry" itself if it is lost too. */
	if (found == 0 && unlikely(res.verdict == WIRE_V_RETRY) && young)
		found = -EAGAIN;
	out_lit(&b, "{\"event\":");
	out_u64(&b, id);
	if (found == 0) {
		route_result_fields(&b, e, &res, w->now_ms);
		w->ctr.admit[DP_ADM_RESULT_FOUND]++;
		if (unlikely(res.verdict == WIRE_V_QUEUED))
			route_result_queued(w, e, id, user, &res);
		else if (((res.verdict == WIRE_V_RESERVED || res.verdict == WIRE_V_DUPLICATE) &&
				 !young) ||
			 (res.verdict == WIRE_V_ORDERED && w->now_ms > res.pay_deadline_ms))
			route_result_stale(w, id, user);
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
		if (!young && w->bridge != NULL) {
			/* One query per (event, user) per cooldown; a full query ring is counted
			 * by the bridge. The poll is answered either way. */
			int qr = bridge_query(w->bridge, id, user, w->now_ms);

			if (qr == 0)
				w->ctr.admit[DP_ADM_RESULT_QUERY]++;
			else if (qr == -EALREADY)
				w->ctr.admit[DP_ADM_RESULT_COOLED]++;
		}
	}
	out_lit(&b, ",\"server_time\":");
	out_u64(&b, w->now_ms);
	out_lit(&b, "}");
	return ans_json(w, q, out, cap, 200, body, (size_t)(b.p - body));
}

#define ROUTE_METHODS_GET  "GET, HEAD, OPTIONS"
#define ROUTE_METHODS_POST "POST, OPTIONS"
_Static_assert(sizeof(ROUTE_METHODS_GET) <= ANS_ALLOW_MAX &&
		       sizeof(ROUTE_METHODS_POST) <= ANS_ALLOW_MAX,
	"struct ans_hdrs has room for every Allow value");
#define ROUTE_ALLOW(w, q, out, cap, allow)                                                         \
	route_method_not_allowed((w), (q), (out), (cap), (allow), sizeof(allow) - 1)
#define ROUTE_PREFLIGHT(w, q, out, cap, allow)                                                     \
	route_preflight((w), (q), (out), (cap), (allow), sizeof(allow) - 1)

/* Routes below /api/v1/events/: rest is what follows the prefix. */
static inline uint16_t
route_events(struct worker *w, const struct req_view *q, char *out, uint16_t cap, const char *rest,
	unsigned rest_len)
{
	enum http_method m = q->r->method;
	bool get = m == HTTP_M_GET || m == HTTP_M_HEAD;
	uint32_t id;
	unsigned digits = route_event_id(rest, rest_len, &id);
	const char *sub = rest + digits;
	unsigned sub_len = rest_len - digits;

	if (digits == 0)
		goto not_found;
	if (sub_len == 0) {
		if (get)
			return route_event_info(w, q, out, cap, id);
		if (m == HTTP_M_OPTIONS)
			return ROUTE_PREFLIGHT(w, q, out, cap, ROUTE_METHODS_GET);
		return ROUTE_ALLOW(w, q, out, cap, ROUTE_METHODS_GET);
	}
	if (sub_len == 6 && memcmp(sub, "/token", 6) == 0) {
		if (m == HTTP_M_POST)
			return route_token(w, q, out, cap, id);
		if (m == HTTP_M_OPTIONS)
			return ROUTE_PREFLIGHT(w, q, out, cap, ROUTE_METHODS_POST);
		return ROUTE_ALLOW(w, q, out, cap, ROUTE_METHODS_POST);
	}
	if (sub_len > 9 && memcmp(sub, "/reserve/", 9) == 0) {
		if (m == HTTP_M_POST)
			return route_reserve(w, q, out, cap, id, sub + 9, sub_len - 9);
		if (m == HTTP_M_OPTIONS)
			return ROUTE_PREFLIGHT(w, q, out, cap, ROUTE_METHODS_POST);
		return ROUTE_ALLOW(w, q, out, cap, ROUTE_METHODS_POST);
	}
	if (sub_len == 7 && memcmp(sub, "/result", 7) == 0) {
		if (get)
			return route_result(w, q, out, cap, id);
		if (m == HTTP_M_OPTIONS)
			return ROUTE_PREFLIGHT(w, q, out, cap, ROUTE_METHODS_GET);
		return ROUTE_ALLOW(w, q, out, cap, ROUTE_METHODS_GET);
	}
not_found:;
	struct ans_hdrs h;

	ans_hdrs_init(&h);

	ans_hdr_cors(&h, w, q->cors);
	w->ctr.http[DP_HTTP_404]++;
	return http_resp_error(out, cap, &w->resp, 404, "no such resource", h.b, h.n, q->head);
}

/*
 * The second half: routes the request r (with its claims) that req_parse() took from a
 * segment, whose client's address it chose (client), and writes the answer to out[0..cap), which may be the
 * request's memory: everything needed from the request is taken before the first write. Returns the
 * response length; 0 only if even an error answer did not fit.
 */
static inline uint16_t
route_request(struct worker *w, const struct edge_client *client, const struct http_request *r,
	const struct req_claims *claims, char *out, uint16_t cap)
{
	struct req_view q = {
		.r = r,
		.client = client,
		.cors = ans_cors_match(w, r),
		.head = r->method == HTTP_M_HEAD,
		.claims = *claims,
	};

	if (route_str_is(&r->path, "/healthz", 8)) {
		if (likely(r->method == HTTP_M_GET || r->method == HTTP_M_HEAD) && !q.cors) {
			unsigned k = w->resp.keep;
			uint16_t n = q.head ? w->resp.healthz_head_len[k] : w->resp.healthz_len[k];

			if (unlikely(n > cap))
				return 0;
			memcpy(out, w->resp.healthz[k], n);
			w->ctr.http[DP_HTTP_200]++;
			return n;
		}
		if (r->method == HTTP_M_GET || r->method == HTTP_M_HEAD)
			return ans_json(w, &q, out, cap, 200, "{\"status\":\"ok\"}", 15);
		if (r->method == HTTP_M_OPTIONS)
			return ROUTE_PREFLIGHT(w, &q, out, cap, ROUTE_METHODS_GET);
		return ROUTE_ALLOW(w, &q, out, cap, ROUTE_METHODS_GET);
	}
	if (route_str_is(&r->path, "/readyz", 7)) {
		if (r->method == HTTP_M_GET || r->method == HTTP_M_HEAD)
			return route_readyz(w, &q, out, cap);
		if (r->method == HTTP_M_OPTIONS)
			return ROUTE_PREFLIGHT(w, &q, out, cap, ROUTE_METHODS_GET);
		return ROUTE_ALLOW(w, &q, out, cap, ROUTE_METHODS_GET);
	}
	if (r->path.len > sizeof(ROUTE_EVENTS_PREFIX) - 1 &&
		memcmp(r->path.p, ROUTE_EVENTS_PREFIX, sizeof(ROUTE_EVENTS_PREFIX) - 1) == 0)
		return route_events(w, &q, out, cap, r->path.p + sizeof(ROUTE_EVENTS_PREFIX) - 1,
			r->path.len - (unsigned)(sizeof(ROUTE_EVENTS_PREFIX) - 1));

	struct ans_hdrs h;

	ans_hdrs_init(&h);

	ans_hdr_cors(&h, w, q.cors);
	w->ctr.http[DP_HTTP_404]++;
	return http_resp_error(out, cap, &w->resp, 404, "no such resource", h.b, h.n, q.head);
}

#endif
