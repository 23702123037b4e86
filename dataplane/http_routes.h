/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_HTTP_ROUTES_H
#define FG_DP_HTTP_ROUTES_H
/*
 * The data plane's HTTP API (docs/api.md): parse one request, pick its route,
 * write the answer.
 *   GET|HEAD /healthz
 *   GET|HEAD /api/v1/events/{id}
 *   POST     /api/v1/events/{id}/token
 *   POST     /api/v1/events/{id}/reserve/{kid-key}
 *   GET|HEAD /api/v1/events/{id}/result
 *   OPTIONS  on any of them: CORS preflight
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dataplane/events.h"
#include "dataplane/http_admission.h"
#include "dataplane/http_parser.h"
#include "dataplane/http_response.h"
#include "dataplane/worker.h"

#define EVENTS_PREFIX "/api/v1/events/"

static inline bool
str_is(const struct http_str *s, const char *lit, size_t lit_len)
{
	return s->len == lit_len && memcmp(s->p, lit, lit_len) == 0;
}

/*
 * Parses a decimal event id of 1 to 10 digits without a leading zero, at most
 * UINT32_MAX, from p[0..len). Returns the number of digits used, or 0.
 */
static inline unsigned
parse_event_id(const char *p, unsigned len, uint32_t *id)
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

static inline uint16_t
route_method_not_allowed(struct worker *w, const struct adm_req *q, char *out, uint16_t cap,
	const char *allow, size_t allow_len)
{
	struct adm_hdrs h;

	adm_hdrs_init(&h);

	adm_hdr_lit(&h, "Allow: ");
	adm_hdr_mem(&h, allow, allow_len);
	adm_hdr_lit(&h, "\r\n");
	adm_hdr_cors(&h, w, q->cors);
	w->ctr.http[DP_HTTP_405]++;
	return http_resp_error(out, cap, &w->resp, 405, "method not allowed on this resource",
		h.b, h.n, q->head);
}

static inline uint16_t
route_event_info(struct worker *w, const struct adm_req *q, char *out, uint16_t cap, uint32_t id)
{
	const struct event_entry *e = event_lookup(worker_events(w), id);
	char body[384];
	struct out_buf b = { body, body + sizeof(body), true };

	if (e == NULL) {
		/* Public information: what this data plane knows now (its config's events until
		 * the control plane's arrive). Admission routes say 503 instead (adm_no_event()). */
		struct adm_hdrs h;

		adm_hdrs_init(&h);

		adm_hdr_cors(&h, w, q->cors);
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
	out_u64(&b, e->stock);
	out_lit(&b, ",\"server_time\":");
	out_u64(&b, w->now_ms);
	out_lit(&b, "}");
	return adm_json(w, q, out, cap, 200, body, (size_t)(b.p - body));
}

#define ALLOW_GET  "GET, HEAD, OPTIONS"
#define ALLOW_POST "POST, OPTIONS"
#define ROUTE_ALLOW(w, q, out, cap, allow)                                                         \
	route_method_not_allowed((w), (q), (out), (cap), (allow), sizeof(allow) - 1)
#define ROUTE_PREFLIGHT(w, q, out, cap, allow)                                                     \
	route_preflight((w), (q), (out), (cap), (allow), sizeof(allow) - 1)

/* Routes below /api/v1/events/: rest is what follows the prefix. */
static inline uint16_t
route_events(struct worker *w, const struct adm_req *q, char *out, uint16_t cap, const char *rest,
	unsigned rest_len)
{
	enum http_method m = q->r->method;
	bool get = m == HTTP_M_GET || m == HTTP_M_HEAD;
	uint32_t id;
	unsigned digits = parse_event_id(rest, rest_len, &id);
	const char *sub = rest + digits;
	unsigned sub_len = rest_len - digits;

	if (digits == 0)
		goto not_found;
	if (sub_len == 0) {
		if (get)
			return route_event_info(w, q, out, cap, id);
		if (m == HTTP_M_OPTIONS)
			return ROUTE_PREFLIGHT(w, q, out, cap, ALLOW_GET);
		return ROUTE_ALLOW(w, q, out, cap, ALLOW_GET);
	}
	if (sub_len == 6 && memcmp(sub, "/token", 6) == 0) {
		if (m == HTTP_M_POST)
			return route_token(w, q, out, cap, id);
		if (m == HTTP_M_OPTIONS)
			return ROUTE_PREFLIGHT(w, q, out, cap, ALLOW_POST);
		return ROUTE_ALLOW(w, q, out, cap, ALLOW_POST);
	}
	if (sub_len > 9 && memcmp(sub, "/reserve/", 9) == 0) {
		if (m == HTTP_M_POST)
			return route_reserve(w, q, out, cap, id, sub + 9, sub_len - 9);
		if (m == HTTP_M_OPTIONS)
			return ROUTE_PREFLIGHT(w, q, out, cap, ALLOW_POST);
		return ROUTE_ALLOW(w, q, out, cap, ALLOW_POST);
	}
	if (sub_len == 7 && memcmp(sub, "/result", 7) == 0) {
		if (get)
			return route_result(w, q, out, cap, id);
		if (m == HTTP_M_OPTIONS)
			return ROUTE_PREFLIGHT(w, q, out, cap, ALLOW_GET);
		return ROUTE_ALLOW(w, q, out, cap, ALLOW_GET);
	}
not_found:;
	struct adm_hdrs h;

	adm_hdrs_init(&h);

	adm_hdr_cors(&h, w, q->cors);
	w->ctr.http[DP_HTTP_404]++;
	return http_resp_error(out, cap, &w->resp, 404, "no such resource", h.b, h.n, q->head);
}

/*
 * The first half of answering the HTTP request in req[0..req_len), the payload of one TCP
 * segment: parses it into *r, and a POST's claimed users into *claims. Returns true when the
 * request is to be routed (http_route()); false when it was answered already, *answer_len bytes
 * written to out[0..cap) (malformed or incomplete; out may be req's memory; 0 only if even that
 * answer did not fit). Also prefetches the bucket of the user the request claims: pipeline_burst()
 * routes a request after the next frame's first half, so a crowd's buckets load meanwhile.
 */
static inline bool
http_parse(struct worker *w, const char *req, uint16_t req_len, char *out, uint16_t cap,
	struct http_request *r, struct adm_claims *claims, uint16_t *answer_len)
{
	int rc;

	w->ctr.requests++;
	rc = http_parse_request(req, req_len, r);
	if (unlikely(rc != 0)) {
		if (rc == HTTP_INCOMPLETE) {
			/* Stateless TCP: the whole request must come in one segment. */
			w->ctr.http[DP_HTTP_431]++;
			*answer_len = http_resp_error(out, cap, &w->resp, 431,
				"request must fit in one TCP segment", "", 0, false);
			return false;
		}
		w->ctr.http[dp_http_slot_of((unsigned)rc)]++;
		*answer_len =
			http_resp_error(out, cap, &w->resp, (unsigned)rc, r->error, "", 0, false);
		return false;
	}
	/* Only the POSTs (token, reserve) read the claimed user's bucket, and only they need
	 * the claims. */
	claims->purchase = claims->session = claims->device = 0;
	claims->bearer = (struct http_str){NULL, 0};
	if (r->method == HTTP_M_POST) {
		if (r->flash_token.len != 0)
			claims->purchase =
				adm_claimed_user(r->flash_token.p, r->flash_token.len, 2);
		if (r->authorization.len != 0) {
			claims->bearer = adm_bearer(r);
			claims->session = adm_claimed_user(claims->bearer.p, claims->bearer.len, 1);
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

/*
 * The second half: routes the request r (with its claims) that http_parse() took from a
 * segment of client_ip (network byte order) and writes the answer to out[0..cap), which may be the
 * request's memory: everything needed from the request is taken before the first write. Returns the
 * response length; 0 only if even an error answer did not fit.
 */
static inline uint16_t
http_route(struct worker *w, uint32_t client_ip, const struct http_request *r,
	const struct adm_claims *claims, char *out, uint16_t cap)
{
	struct adm_req q = {
		.r = r,
		.client_ip = client_ip,
		.cors = adm_cors_match(w, r),
		.head = r->method == HTTP_M_HEAD,
		.claims = *claims,
	};

	if (str_is(&r->path, "/healthz", 8)) {
		if (likely(r->method == HTTP_M_GET || r->method == HTTP_M_HEAD) && !q.cors) {
			uint16_t n = q.head ? w->resp.healthz_head_len : w->resp.healthz_len;

			if (unlikely(n > cap))
				return 0;
			memcpy(out, w->resp.healthz, n);
			w->ctr.http[DP_HTTP_200]++;
			return n;
		}
		if (r->method == HTTP_M_GET || r->method == HTTP_M_HEAD)
			return adm_json(w, &q, out, cap, 200, "{\"status\":\"ok\"}", 15);
		if (r->method == HTTP_M_OPTIONS)
			return ROUTE_PREFLIGHT(w, &q, out, cap, ALLOW_GET);
		return ROUTE_ALLOW(w, &q, out, cap, ALLOW_GET);
	}
	if (r->path.len > sizeof(EVENTS_PREFIX) - 1 &&
		memcmp(r->path.p, EVENTS_PREFIX, sizeof(EVENTS_PREFIX) - 1) == 0)
		return route_events(w, &q, out, cap, r->path.p + sizeof(EVENTS_PREFIX) - 1,
			r->path.len - (unsigned)(sizeof(EVENTS_PREFIX) - 1));

	struct adm_hdrs h;

	adm_hdrs_init(&h);

	adm_hdr_cors(&h, w, q.cors);
	w->ctr.http[DP_HTTP_404]++;
	return http_resp_error(out, cap, &w->resp, 404, "no such resource", h.b, h.n, q.head);
}

#endif
