/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_HTTP_ROUTES_H
#define FG_DP_HTTP_ROUTES_H
/*
 * The data plane's HTTP API: parse one request, pick its route, write the
 * answer. Routes today: GET|HEAD /healthz and GET|HEAD /api/v1/events/{id}.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dataplane/events.h"
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
route_method_not_allowed(struct worker *w, char *out, uint16_t cap, bool head, const char *allow,
	size_t allow_len)
{
	w->ctr.http[DP_HTTP_405]++;
	return http_resp_error(out, cap, &w->resp, 405, "method not allowed on this resource",
		allow, allow_len, head);
}

static inline uint16_t
route_event_info(struct worker *w, char *out, uint16_t cap, bool head, uint32_t id)
{
	const struct event_entry *e = event_lookup(w->events, id);
	char body[384];
	struct out_buf b = { body, body + sizeof(body), true };

	if (e == NULL) {
		w->ctr.http[DP_HTTP_404]++;
		return http_resp_error(out, cap, &w->resp, 404, "no such event", "", 0, head);
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
	w->ctr.http[DP_HTTP_200]++;
	return http_resp_write(out, cap, &w->resp, 200, "", 0, body, (size_t)(b.p - body), head);
}

/*
 * Answers the HTTP request in req[0..req_len), the payload of one TCP segment.
 * Writes the response to out[0..cap) — which may be the same memory as req:
 * everything needed from the request is taken before the first write.
 * Returns the response length; 0 only if even an error answer did not fit.
 */
static inline uint16_t
http_answer(struct worker *w, const char *req, uint16_t req_len, char *out, uint16_t cap)
{
	struct http_request r;
	int rc;

	w->ctr.requests++;
	rc = http_parse_request(req, req_len, &r);
	if (unlikely(rc != 0)) {
		if (rc == HTTP_INCOMPLETE) {
			/* Stateless TCP: the whole request must come in one segment. */
			w->ctr.http[DP_HTTP_431]++;
			return http_resp_error(out, cap, &w->resp, 431,
				"request must fit in one TCP segment", "", 0, false);
		}
		w->ctr.http[dp_http_slot_of((unsigned)rc)]++;
		return http_resp_error(out, cap, &w->resp, (unsigned)rc, r.error, "", 0, false);
	}

	bool head = r.method == HTTP_M_HEAD;
	bool get = r.method == HTTP_M_GET || head;

	if (str_is(&r.path, "/healthz", 8)) {
		static const char allow[] = "Allow: GET, HEAD\r\n";

		if (unlikely(!get))
			return route_method_not_allowed(w, out, cap, head, allow, sizeof(allow) - 1);
		uint16_t n = head ? w->resp.healthz_head_len : w->resp.healthz_len;

		if (unlikely(n > cap))
			return 0;
		memcpy(out, w->resp.healthz, n);
		w->ctr.http[DP_HTTP_200]++;
		return n;
	}
	if (r.path.len > sizeof(EVENTS_PREFIX) - 1 &&
		memcmp(r.path.p, EVENTS_PREFIX, sizeof(EVENTS_PREFIX) - 1) == 0) {
		static const char allow[] = "Allow: GET, HEAD\r\n";
		const char *rest = r.path.p + sizeof(EVENTS_PREFIX) - 1;
		unsigned rest_len = r.path.len - (unsigned)(sizeof(EVENTS_PREFIX) - 1);
		uint32_t id;
		unsigned digits = parse_event_id(rest, rest_len, &id);

		if (digits != 0 && digits == rest_len) {
			if (unlikely(!get))
				return route_method_not_allowed(w, out, cap, head, allow,
					sizeof(allow) - 1);
			return route_event_info(w, out, cap, head, id);
		}
	}
	w->ctr.http[DP_HTTP_404]++;
	return http_resp_error(out, cap, &w->resp, 404, "no such resource", "", 0, head);
}

#endif
