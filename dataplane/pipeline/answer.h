/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_ANSWER_H
#define FG_DP_PIPELINE_ANSWER_H
/*
 * HTTP answers of the API (docs/api.md): the extra header lines (CORS, Retry-After), JSON
 * answers and refusals, all through http_response.h. The answer is written over the
 * request: every value taken from the request is copied or reduced to numbers (struct
 * req_view) before the first write. CORS headers echo the configured origin, never the
 * request's bytes.
 *
 * Private to the pipeline: only dataplane/pipeline.c includes it, directly or through
 * another header of dataplane/pipeline/ (tests and benchmarks aside).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dataplane/counters.h"
#include "dataplane/http_parser.h"
#include "dataplane/http_response.h"
#include "dataplane/pipeline/request.h"
#include "dataplane/worker.h"

/* "Access-Control-Allow-Headers: ..." and Max-Age of a preflight (route_preflight()). */
#define ANS_PREFLIGHT_TAIL                                                                         \
	"Access-Control-Allow-Headers: Authorization, X-Flash-Token, X-Device-Id, "                \
	"X-Flash-Solution, Content-Type\r\nAccess-Control-Max-Age: 600\r\n"
/* The longest Allow value (ROUTE_METHODS_GET in routes.h). */
#define ANS_ALLOW_MAX sizeof("GET, HEAD, OPTIONS")

/*
 * Extra header lines of one answer: Allow, CORS, Retry-After. Sized for the longest set an
 * answer has, a preflight from a 127-byte origin: nothing is ever cut (issue 16: a 256-byte
 * buffer dropped the preflight's last lines and the CRLF that ends the head).
 */
#define ANS_HDRS_MAX                                                                               \
	(sizeof("Allow: \r\n") + ANS_ALLOW_MAX + REQ_CORS_LINES_MAX +                              \
		sizeof("Access-Control-Allow-Methods: \r\n") + ANS_ALLOW_MAX +                     \
		sizeof(ANS_PREFLIGHT_TAIL) + sizeof("Retry-After: 4294967295\r\n"))

struct ans_hdrs {
	char b[ANS_HDRS_MAX];
	size_t n;
};

/*
 * Makes h empty. Use this, not "= { .n = 0 }": an initializer clears all of b too, a 256-byte
 * "rep stos" on every answer that perf showed as a third of ans_json().
 */
static inline void
ans_hdrs_init(struct ans_hdrs *h)
{
	h->n = 0;
}

static inline void
ans_hdr_mem(struct ans_hdrs *h, const char *s, size_t n)
{
	if (likely(h->n + n <= sizeof(h->b))) {
		memcpy(h->b + h->n, s, n);
		h->n += n;
	}
}

#define ans_hdr_lit(h, lit) ans_hdr_mem((h), (lit), sizeof(lit) - 1)

/* Adds the Allow line of a resource whose methods are allow[0..allow_len). */
static inline void
ans_hdr_allow(struct ans_hdrs *h, const char *allow, size_t allow_len)
{
	ans_hdr_lit(h, "Allow: ");
	ans_hdr_mem(h, allow, allow_len);
	ans_hdr_lit(h, "\r\n");
}

/* Adds Access-Control-Allow-Origin (and Vary) for a request from the configured origin. */
static inline void
ans_hdr_cors(struct ans_hdrs *h, const struct worker *w, bool cors)
{
	if (!cors || sizeof(h->b) - h->n < REQ_CORS_LINES_MAX)
		return;
	h->n += req_cors_lines(w, h->b + h->n);
}

static inline void
ans_hdr_retry_after(struct ans_hdrs *h, uint64_t seconds)
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
ans_cors_match(const struct worker *w, const struct http_request *r)
{
	if (w->cors_len == 0 || r->origin.len == 0)
		return false;
	if (w->cors_any)
		return true;
	return r->origin.len == w->cors_len && memcmp(r->origin.p, w->cors_origin, w->cors_len) == 0;
}

/* A refusal: counts reason and status, writes {"error":...} with CORS (and Retry-After). */
static inline uint16_t
ans_refuse(struct worker *w, const struct req_view *q, char *out, uint16_t cap, unsigned status,
	enum dp_reject_reason reason, const char *text, uint64_t retry_after_s)
{
	struct ans_hdrs h;

	ans_hdrs_init(&h);

	ans_hdr_cors(&h, w, q->cors);
	if (retry_after_s)
		ans_hdr_retry_after(&h, retry_after_s);
	w->ctr.reject[reason]++;
	w->ctr.http[counters_http_slot(status)]++;
	return http_resp_error(out, cap, &w->resp, status, text, h.b, h.n, q->head);
}

/* A JSON answer with CORS headers. */
static inline uint16_t
ans_json(struct worker *w, const struct req_view *q, char *out, uint16_t cap, unsigned status,
	const char *body, size_t body_len)
{
	struct ans_hdrs h;

	ans_hdrs_init(&h);

	ans_hdr_cors(&h, w, q->cors);
	w->ctr.http[counters_http_slot(status)]++;
	return http_resp_write(out, cap, &w->resp, status, h.b, h.n, body, body_len, q->head);
}

#endif
