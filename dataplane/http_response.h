/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_HTTP_RESPONSE_H
#define FG_DP_HTTP_RESPONSE_H
/*
 * HTTP/1.1 responses written straight into the packet being answered. Every
 * answer carries Connection: close (one request per connection), but on a kept connection
 * from a trusted edge (http_resp_keep_alive()), and Cache-Control: no-store. The header lines shared by all answers, with the
 * Date, are rebuilt once a second by http_resp_tick(), so the per-request work
 * is a few memcpy()s and one integer to text.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define HTTP_RESP_COMMON_MAX 192
/* Every answer we build fits the smallest MSS a SYN cookie can encode (536). */
#define HTTP_RESP_MAX 536

/* The last of the shared lines; not in an answer on a kept connection (http_resp_ctx.keep). */
#define HTTP_RESP_CLOSE_LINE "Connection: close\r\n"
#define HTTP_RESP_CLOSE_LEN  (sizeof(HTTP_RESP_CLOSE_LINE) - 1)

/* Error answers built this second, by reason text, status and HEAD (http_resp_error()). */
#define HTTP_RESP_CACHE 8

struct http_resp_cached {
	const char *reason; /* NULL: empty */
	uint16_t status;
	bool head;
	bool keep; /* written without the Connection: close line (http_resp_ctx.keep) */
	uint16_t len;
	uint16_t extra_off, extra_len; /* where the extra header lines are in b */
	char b[HTTP_RESP_MAX];
};

struct http_resp_ctx {
	uint64_t second; /* Unix second the Date line shows */
	uint16_t common_len;
	/* Server, Date, Content-Type, Cache-Control, Connection: close (the last) */
	char common[HTTP_RESP_COMMON_MAX];
	/* true: what is written now is for a kept connection, which persists, and goes without
	 * the Connection: close line (RFC 9112 §9.3); set by the kept path around its routing. */
	bool keep;
	/* The whole GET /healthz answer, [keep]: without Connection: close. */
	uint16_t healthz_len[2];
	char healthz[2][HTTP_RESP_MAX];
	uint16_t healthz_head_len[2]; /* the same without its body, for HEAD */
	/* A flood is answered with the same few refusals all second: each is built once. */
	struct http_resp_cached errors[HTTP_RESP_CACHE];
};

/* A bounded output cursor; ok turns false on the first write past end. */
struct out_buf {
	char *p;
	char *end;
	bool ok;
};

static inline void
out_mem(struct out_buf *o, const void *s, size_t n)
{
	if (unlikely((size_t)(o->end - o->p) < n)) {
		o->ok = false;
		return;
	}
	memcpy(o->p, s, n);
	o->p += n;
}

#define out_lit(o, lit) out_mem((o), (lit), sizeof(lit) - 1)

/* Writes v in decimal. */
static inline void
out_u64(struct out_buf *o, uint64_t v)
{
	char tmp[20];
	unsigned n = 0;

	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_mem(o, tmp + sizeof(tmp) - n, n);
}

/*
 * True if none of the n bytes at s needs escaping in a JSON string (a quote, a backslash or
 * a control). Reads only [s, s + n): 16 bytes a step, the last step overlapping the one
 * before.
 */
static inline bool
out_json_plain(const char *s, size_t n)
{
#ifdef __SSE2__
	if (n >= 16) {
		const __m128i ctl = _mm_set1_epi8(0x1f);
		const __m128i quote = _mm_set1_epi8('"');
		const __m128i bslash = _mm_set1_epi8('\\');
		__m128i bad = _mm_setzero_si128();

		for (size_t i = 0;; i += 16) {
			if (i + 16 > n)
				i = n - 16;
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));

			bad = _mm_or_si128(bad, _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v));
			bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, quote));
			bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, bslash));
			if (i + 16 == n)
				break;
		}
		return _mm_movemask_epi8(bad) == 0;
	}
#endif
	for (size_t i = 0; i < n; i++)
		if (s[i] == '"' || s[i] == '\\' || (unsigned char)s[i] < 0x20)
			return false;
	return true;
}

/* Writes s as the inside of a JSON string: quotes, backslashes and controls escaped or dropped. */
static inline void
out_json_text(struct out_buf *o, const char *s)
{
	size_t n = strlen(s);

	/* Every reason text of ours is plain: one copy. */
	if (likely(out_json_plain(s, n))) {
		out_mem(o, s, n);
		return;
	}
	for (; *s && o->ok; s++) {
		char c = *s;

		if (c == '"' || c == '\\') {
			char esc[2] = {'\\', c};

			out_mem(o, esc, 2);
		} else if ((unsigned char)c >= 0x20) {
			out_mem(o, &c, 1);
		}
	}
}

/* "HTTP/1.1 404 Not Found\r\n" for status; unknown statuses get a generic reason. */
void http_resp_status_line(struct out_buf *o, unsigned status);

/*
 * Prepares ctx for Unix time now_ms: rebuilds the shared header lines and the
 * precomputed /healthz answer, and forgets the error answers built, when the second
 * changed. Cheap otherwise.
 */
void http_resp_tick_slow(struct http_resp_ctx *ctx, uint64_t now_ms);

static inline void
http_resp_tick(struct http_resp_ctx *ctx, uint64_t now_ms)
{
	if (unlikely(now_ms / 1000 != ctx->second))
		http_resp_tick_slow(ctx, now_ms);
}

/*
 * Writes a whole response: status line, the shared lines, extra header lines
 * (each ending in CRLF; may be empty), Content-Length (not for 204) and,
 * unless head is true, body. Returns the length written, or 0 when it does not fit in
 * [dst, dst + cap).
 */
static inline uint16_t
http_resp_write(char *dst, size_t cap, const struct http_resp_ctx *ctx, unsigned status,
	const char *extra, size_t extra_len, const char *body, size_t body_len, bool head)
{
	struct out_buf o = {dst, dst + cap, true};

	http_resp_status_line(&o, status);
	out_mem(&o, ctx->common, ctx->common_len - (ctx->keep ? HTTP_RESP_CLOSE_LEN : 0));
	out_mem(&o, extra, extra_len);
	/* RFC 9110 §8.6: no Content-Length in a 204. */
	if (status != 204) {
		out_lit(&o, "Content-Length: ");
		out_u64(&o, body_len);
		out_lit(&o, "\r\n");
	}
	out_lit(&o, "\r\n");
	if (!head)
		out_mem(&o, body, body_len);
	return o.ok ? (uint16_t)(o.p - dst) : 0;
}

/*
 * Puts the Connection: close line back into a[0..len) (cap bytes of room), an answer written
 * with ctx->keep (without it: http_resp_write(), http_resp_error(), the healthz answer), for
 * a kept connection that closes after all (an answer too long to keep). Returns the new
 * length, or 0 when a is not such an answer or there is no room (a left as it was).
 */
static inline uint16_t
http_resp_close_again(char *a, uint16_t len, size_t cap, const struct http_resp_ctx *ctx)
{
	/* The status line is "HTTP/1.1 NNN Reason\r\n": its end within the first 64 bytes. */
	const char *nl = memchr(a, '\n', len < 64 ? len : 64);

	if (unlikely(nl == NULL))
		return 0;

	size_t at = (size_t)(nl + 1 - a) + ctx->common_len - HTTP_RESP_CLOSE_LEN;

	if (unlikely(at > len || (size_t)len + HTTP_RESP_CLOSE_LEN > cap ||
		     memcmp(a + (nl + 1 - a), ctx->common, at - (size_t)(nl + 1 - a)) != 0))
		return 0;
	memmove(a + at + HTTP_RESP_CLOSE_LEN, a + at, len - at);
	memcpy(a + at, HTTP_RESP_CLOSE_LINE, HTTP_RESP_CLOSE_LEN);
	return (uint16_t)(len + HTTP_RESP_CLOSE_LEN);
}

/*
 * Writes an error answer whose body is {"error":"<reason>"}; extra header
 * lines as in http_resp_write(). Returns the length written, or 0.
 * reason must be a static string (a literal, or a parser's error text): the answer is kept in
 * ctx until the next second, found again by the reason's address, status, head and the same
 * extra lines (the CORS lines of a refusal are the same all second), and then copied whole.
 */
uint16_t http_resp_error(char *dst, size_t cap, struct http_resp_ctx *ctx, unsigned status,
	const char *reason, const char *extra, size_t extra_len, bool head);

#endif
