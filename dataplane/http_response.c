/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/http_response.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void
http_resp_status_line(struct out_buf *o, unsigned status)
{
	switch (status) {
	case 200: out_lit(o, "HTTP/1.1 200 OK\r\n"); return;
	case 202: out_lit(o, "HTTP/1.1 202 Accepted\r\n"); return;
	case 204: out_lit(o, "HTTP/1.1 204 No Content\r\n"); return;
	case 400: out_lit(o, "HTTP/1.1 400 Bad Request\r\n"); return;
	case 401: out_lit(o, "HTTP/1.1 401 Unauthorized\r\n"); return;
	case 403: out_lit(o, "HTTP/1.1 403 Forbidden\r\n"); return;
	case 404: out_lit(o, "HTTP/1.1 404 Not Found\r\n"); return;
	case 405: out_lit(o, "HTTP/1.1 405 Method Not Allowed\r\n"); return;
	case 410: out_lit(o, "HTTP/1.1 410 Gone\r\n"); return;
	case 414: out_lit(o, "HTTP/1.1 414 URI Too Long\r\n"); return;
	case 425: out_lit(o, "HTTP/1.1 425 Too Early\r\n"); return;
	case 429: out_lit(o, "HTTP/1.1 429 Too Many Requests\r\n"); return;
	case 431: out_lit(o, "HTTP/1.1 431 Request Header Fields Too Large\r\n"); return;
	case 501: out_lit(o, "HTTP/1.1 501 Not Implemented\r\n"); return;
	case 503: out_lit(o, "HTTP/1.1 503 Service Unavailable\r\n"); return;
	case 505: out_lit(o, "HTTP/1.1 505 HTTP Version Not Supported\r\n"); return;
	default:
		out_lit(o, "HTTP/1.1 ");
		out_u64(o, status);
		out_lit(o, " Error\r\n");
	}
}

void
http_resp_tick_slow(struct http_resp_ctx *ctx, uint64_t now_ms)
{
	static const char healthz_body[] = "{\"status\":\"ok\"}";
	time_t sec = (time_t)(now_ms / 1000);
	struct tm tm;
	char date[64];
	int n;

	/* Every cached error answer has the old Date line. */
	for (unsigned i = 0; i < HTTP_RESP_CACHE; i++)
		ctx->errors[i].reason = NULL;
	gmtime_r(&sec, &tm);
	/* RFC 9110 §5.6.7: IMF-fixdate. */
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	n = snprintf(ctx->common, sizeof(ctx->common),
		"Server: flashgate\r\n"
		"Date: %s\r\n"
		"Content-Type: application/json\r\n"
		"Cache-Control: no-store\r\n"
		/* Last: an answer on a kept connection is written without it (ctx->keep). */
		HTTP_RESP_CLOSE_LINE,
		date);
	ctx->common_len = (uint16_t)n;
	ctx->second = (uint64_t)sec;
	bool keep = ctx->keep;

	for (unsigned k = 0; k < 2; k++) {
		ctx->keep = k;
		ctx->healthz_len[k] = http_resp_write(ctx->healthz[k], sizeof(ctx->healthz[k]), ctx,
			200, "", 0, healthz_body, sizeof(healthz_body) - 1, false);
		ctx->healthz_head_len[k] =
			(uint16_t)(ctx->healthz_len[k] - (sizeof(healthz_body) - 1));
	}
	ctx->keep = keep;
}

/* The cache slot of an error answer: the reason's address mixed with status, head and extra. */
static inline struct http_resp_cached *
resp_error_slot(struct http_resp_ctx *ctx, const char *reason, unsigned status, bool head,
	size_t extra_len)
{
	uint64_t h = ((uintptr_t)reason ^ (uint64_t)status << 1 ^ (uint64_t)head ^
			     (uint64_t)extra_len << 11 ^ (uint64_t)ctx->keep << 3) *
		     UINT64_C(0x9e3779b97f4a7c15);

	return &ctx->errors[h >> 61];
}

uint16_t
http_resp_error(char *dst, size_t cap, struct http_resp_ctx *ctx, unsigned status,
	const char *reason, const char *extra, size_t extra_len, bool head)
{
	_Static_assert(HTTP_RESP_CACHE == 8, "resp_error_slot() takes 3 bits");
	struct http_resp_cached *c = resp_error_slot(ctx, reason, status, head, extra_len);

	if (c->reason == reason && c->status == status && c->head == head && c->keep == ctx->keep &&
		c->extra_len == extra_len &&
		(extra_len == 0 || memcmp(c->b + c->extra_off, extra, extra_len) == 0)) {
		if (c->len > cap)
			return 0;
		memcpy(dst, c->b, c->len);
		return c->len;
	}

	char body[256];
	struct out_buf b = { body, body + sizeof(body), true };

	out_lit(&b, "{\"error\":\"");
	out_json_text(&b, reason);
	out_lit(&b, "\"}");
	if (!b.ok)
		return 0;

	uint16_t n = http_resp_write(dst, cap, ctx, status, extra, extra_len, body,
		(size_t)(b.p - body), head);

	if (n != 0 && n <= sizeof(c->b)) {
		/* The extra lines follow the status line and the shared lines. */
		const char *eol = memchr(dst, '\n', n);

		memcpy(c->b, dst, n);
		c->len = n;
		c->status = (uint16_t)status;
		c->head = head;
		c->keep = ctx->keep;
		c->reason = reason;
		c->extra_off = (uint16_t)(eol + 1 - dst + ctx->common_len -
					  (ctx->keep ? HTTP_RESP_CLOSE_LEN : 0));
		c->extra_len = (uint16_t)extra_len;
	}
	return n;
}
