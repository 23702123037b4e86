/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the response writer: JSON text escaping (against a reference, at every
 * length and position, each input just before a PROT_NONE page) and whole error answers.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dataplane/http_response.h"
#include "tests/guard.h"
#include "tests/tap.h"

/* The reference: RFC 8259 §7 escapes for the two characters that need one, controls dropped. */
static size_t
ref_json_text(const char *s, char *out)
{
	size_t o = 0;

	for (; *s; s++) {
		if (*s == '"' || *s == '\\') {
			out[o++] = '\\';
			out[o++] = *s;
		} else if ((unsigned char)*s >= 0x20) {
			out[o++] = *s;
		}
	}
	return o;
}

/* Every length 0..48 of plain text, and each special byte at every position of each length. */
static void
test_json_text(void)
{
	static const char specials[] = {
		'"', '\\', 0x01, 0x1f, '\t', 0x7f, (char)0x80, (char)0xff, ' ', '~'};
	unsigned wrong_text = 0, wrong_plain = 0, tried = 0;

	for (size_t len = 0; len <= 48; len++) {
		for (size_t k = 0; k <= sizeof(specials); k++) {
			for (size_t at = 0; at < (k == sizeof(specials) ? 1 : len); at++) {
				char in[64], want[160], got[160];
				struct guard_buf g;

				memset(in, 'a', len);
				if (k < sizeof(specials))
					in[at] = specials[k];
				in[len] = '\0';

				/* The NUL is the last byte before the guard page. */
				const char *s = guard_place(&g, in, len + 1);

				if (s == NULL) {
					tap_ok(false, "guard_place");
					return;
				}

				struct out_buf o = {got, got + sizeof(got), true};
				size_t wn = ref_json_text(s, want);
				bool plain = wn == len;

				out_json_text(&o, s);
				wrong_text += !o.ok || (size_t)(o.p - got) != wn ||
					      memcmp(got, want, wn) != 0;
				wrong_plain += out_json_plain(s, len) != plain;
				tried++;
				guard_free(&g);
			}
		}
	}
	tap_ok(wrong_text == 0, "out_json_text equals the reference escaping (%u of %u wrong)",
		wrong_text, tried);
	tap_ok(wrong_plain == 0,
		"out_json_plain tells plain text from text to escape (%u of %u wrong)", wrong_plain,
		tried);
}

/* A text that does not fit turns the buffer's ok false and writes nothing past its end. */
static void
test_json_text_bounds(void)
{
	char buf[24];
	struct out_buf o = {buf, buf + 10, true};

	memset(buf, '#', sizeof(buf));
	out_json_text(&o, "a reason longer than ten bytes");
	tap_ok(!o.ok && buf[10] == '#',
		"a plain text longer than the room: ok turns false, nothing past it");
	o = (struct out_buf){buf, buf + 10, true};
	memset(buf, '#', sizeof(buf));
	out_json_text(&o, "\"\"\"\"\"\"\"\"");
	tap_ok(!o.ok && buf[10] == '#',
		"escapes longer than the room: ok turns false, nothing past it");
}

/* An error answer as a client reads it: status line, shared lines, length, JSON body. */
static void
test_error_answer(void)
{
	struct http_resp_ctx ctx;
	char out[HTTP_RESP_MAX + 1];

	memset(&ctx, 0, sizeof(ctx));
	ctx.second = UINT64_MAX;
	http_resp_tick(&ctx, 1764583200000ull);

	uint16_t n = http_resp_error(out, sizeof(out) - 1, &ctx, 403, "invalid \"purchase\" token",
		"X-A: b\r\n", 8, false);
	static const char body[] = "{\"error\":\"invalid \\\"purchase\\\" token\"}";
	char want_cl[32];

	out[n] = '\0';
	snprintf(want_cl, sizeof(want_cl), "Content-Length: %zu\r\n", sizeof(body) - 1);
	tap_ok(n > 0 && strncmp(out, "HTTP/1.1 403 Forbidden\r\n", 24) == 0,
		"error answer: status line");
	tap_ok(strstr(out, "Date: Mon, 01 Dec 2025 10:00:00 GMT\r\n") != NULL,
		"error answer: the Date of its second");
	tap_ok(strstr(out, "X-A: b\r\n") != NULL && strstr(out, want_cl) != NULL,
		"error answer: extra lines and Content-Length");
	tap_ok(n > sizeof(body) - 1 && strcmp(out + n - (sizeof(body) - 1), body) == 0 &&
			strstr(out, "\r\n\r\n") == out + n - (sizeof(body) - 1) - 4,
		"error answer: the escaped body after the empty line");
	n = http_resp_error(out, sizeof(out) - 1, &ctx, 403, "invalid token", "", 0, true);
	out[n] = '\0';
	tap_ok(n > 4 && strcmp(out + n - 4, "\r\n\r\n") == 0, "HEAD: no body after the empty line");
}

/*
 * The cache of error answers: a repeated refusal is the same bytes; reason, status, HEAD and
 * extra lines keep answers apart; a new second rebuilds them with its Date.
 */
static void
test_error_cache(void)
{
	static const char r1[] = "invalid purchase token", r2[] = "sold out";
	struct http_resp_ctx ctx;
	char a[HTTP_RESP_MAX + 1], b[HTTP_RESP_MAX + 1];
	uint16_t na, nb;
	unsigned cached = 0;

	memset(&ctx, 0, sizeof(ctx));
	ctx.second = UINT64_MAX;
	http_resp_tick(&ctx, 1764583200000ull);
	na = http_resp_error(a, sizeof(a) - 1, &ctx, 403, r1, "", 0, false);
	for (unsigned i = 0; i < HTTP_RESP_CACHE; i++)
		cached += ctx.errors[i].reason == r1;
	nb = http_resp_error(b, sizeof(b) - 1, &ctx, 403, r1, "", 0, false);
	tap_ok(cached == 1 && na > 0 && na == nb && memcmp(a, b, na) == 0,
		"a refusal is kept once and answered again byte for byte");

	nb = http_resp_error(b, sizeof(b) - 1, &ctx, 410, r2, "", 0, false);
	b[nb] = '\0';
	tap_ok(strncmp(b, "HTTP/1.1 410 Gone\r\n", 19) == 0 && strstr(b, "\"sold out\"") != NULL,
		"another reason and status: its own answer");
	nb = http_resp_error(b, sizeof(b) - 1, &ctx, 404, r1, "", 0, false);
	b[nb] = '\0';
	tap_ok(strncmp(b, "HTTP/1.1 404 Not Found\r\n", 24) == 0,
		"the same reason with another status: that status");
	nb = http_resp_error(b, sizeof(b) - 1, &ctx, 403, r1, "", 0, true);
	tap_ok(nb < na && memcmp(a, b, nb) == 0 && strncmp(b + nb - 4, "\r\n\r\n", 4) == 0,
		"HEAD of the same refusal: the head alone");
	nb = http_resp_error(b, sizeof(b) - 1, &ctx, 403, r1, "Retry-After: 3\r\n", 16, false);
	b[nb] = '\0';
	tap_ok(strstr(b, "Retry-After: 3\r\n") != NULL,
		"extra lines are never served from the cache");
	nb = http_resp_error(b, sizeof(b) - 1, &ctx, 403, r1, "", 0, false);
	tap_ok(nb == na && memcmp(a, b, na) == 0 && strstr(b, "Retry-After") == NULL,
		"and do not replace the cached refusal");
	tap_eq_int(http_resp_error(b, (size_t)na - 1, &ctx, 403, r1, "", 0, false), 0,
		"a cached refusal longer than the room: 0");

	http_resp_tick(&ctx, 1764583201000ull);
	nb = http_resp_error(b, sizeof(b) - 1, &ctx, 403, r1, "", 0, false);
	b[nb] = '\0';
	tap_ok(strstr(b, "Date: Mon, 01 Dec 2025 10:00:01 GMT\r\n") != NULL,
		"the next second: the refusal carries the new Date");
}

/* Answers for a kept connection (ctx.keep): written without Connection: close, cached apart,
 * the healthz answer too; http_resp_close_again() puts the line back. */
static void
test_keep(void)
{
	static struct http_resp_ctx ctx;
	static const char r1[] = "forbidden";
	char a[1024], b[1024], c[1024];
	uint16_t na, nb, nc;

	http_resp_tick(&ctx, 1764583200000ull);
	na = http_resp_error(a, sizeof(a) - 1, &ctx, 403, r1, "X-A: b\r\n", 8, false);
	a[na] = '\0';
	ctx.keep = true;
	nb = http_resp_error(b, sizeof(b) - 1, &ctx, 403, r1, "X-A: b\r\n", 8, false);
	b[nb] = '\0';
	tap_ok(strstr(a, "\r\nConnection: close\r\n") != NULL && strstr(b, "Connection") == NULL &&
			nb == na - HTTP_RESP_CLOSE_LEN,
		"keep: the same answer without its Connection: close line");
	nb = http_resp_error(b, sizeof(b) - 1, &ctx, 403, r1, "", 0, false);
	b[nb] = '\0';
	tap_ok(strstr(b, "Connection") == NULL, "keep: not served the closing answer's cache");
	memcpy(c, b, nb);
	nc = http_resp_close_again(c, nb, sizeof(c), &ctx);
	ctx.keep = false;
	nb = http_resp_error(b, sizeof(b) - 1, &ctx, 403, r1, "", 0, false);
	tap_ok(nc == nb && memcmp(b, c, nb) == 0,
		"http_resp_close_again(): the closing answer, byte for byte");
	tap_eq_int(http_resp_close_again(c, nc, nc + HTTP_RESP_CLOSE_LEN - 1, &ctx), 0,
		"  0 without the room for the line");
	tap_ok(ctx.healthz_len[1] == ctx.healthz_len[0] - HTTP_RESP_CLOSE_LEN &&
			memmem(ctx.healthz[1], ctx.healthz_len[1], "Connection", 10) == NULL &&
			memmem(ctx.healthz[0], ctx.healthz_len[0], HTTP_RESP_CLOSE_LINE,
				HTTP_RESP_CLOSE_LEN) != NULL,
		"the healthz answer in both forms");
}

int
main(void)
{
	test_json_text();
	test_json_text_bounds();
	test_error_answer();
	test_error_cache();
	test_keep();
	return tap_done();
}
