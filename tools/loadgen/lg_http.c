/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "tools/loadgen/lg_http.h"

/* RFC 9110 §5.6.2: tchar. */
static bool
is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* RFC 9110 §5.5: field-vchar / SP / HTAB (obs-text allowed, as a recipient must). */
static bool
is_value_char(unsigned char c)
{
	return c == ' ' || c == '\t' || (c >= 0x21 && c != 0x7f);
}

/* The length of the line at p (up to its CRLF), or -1 if it has a bare CR/LF or no CRLF. */
static long
line_len(const char *p, const char *end)
{
	for (const char *q = p; q < end; q++) {
		if (*q == '\r')
			return q + 1 < end && q[1] == '\n' ? q - p : -1;
		if (*q == '\n')
			return -1;
	}
	return -1;
}

static bool
parse_uint(const char *p, size_t n, unsigned long *out)
{
	unsigned long v = 0;

	if (n == 0 || n > 9)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(p[i] - '0');
	}
	*out = v;
	return true;
}

static enum lg_http_err
parse(const char *buf, size_t len, struct lg_http_resp *out, bool kept)
{
	const char *p = buf, *end = buf + len;
	unsigned long clen = 0;
	bool have_clen = false, close = false;
	long n;

	memset(out, 0, sizeof(*out));
	out->retry_after = -1;
	if (len == 0)
		return LG_HTTP_EMPTY;
	/* RFC 9112 §4: status-line = HTTP-version SP status-code SP [ reason-phrase ] CRLF. */
	n = line_len(p, end);
	if (n < 13 || memcmp(p, "HTTP/1.1 ", 9) != 0 || p[12] != ' ')
		return LG_HTTP_BAD_STATUS_LINE;
	for (int i = 9; i < 12; i++)
		if (p[i] < '0' || p[i] > '9')
			return LG_HTTP_BAD_STATUS_LINE;
	out->status = (unsigned)((p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0'));
	if (out->status < 100 || out->status > 599)
		return LG_HTTP_BAD_STATUS_LINE;
	for (long i = 13; i < n; i++)
		if (!is_value_char((unsigned char)p[i]))
			return LG_HTTP_BAD_STATUS_LINE;
	p += n + 2;

	/* RFC 9112 §5: field-line = field-name ":" OWS field-value OWS; no obs-fold. */
	for (;;) {
		if (p >= end)
			return LG_HTTP_NO_END;
		n = line_len(p, end);
		if (n < 0)
			return memchr(p, '\n', (size_t)(end - p)) == NULL &&
					       memchr(p, '\r', (size_t)(end - p)) == NULL
				       ? LG_HTTP_NO_END
				       : LG_HTTP_BAD_HEADER;
		if (n == 0) {
			p += 2;
			break;
		}
		const char *colon = memchr(p, ':', (size_t)n);

		if (colon == NULL || colon == p)
			return LG_HTTP_BAD_HEADER;
		for (const char *q = p; q < colon; q++)
			if (!is_tchar((unsigned char)*q))
				return LG_HTTP_BAD_HEADER;
		const char *v = colon + 1, *ve = p + n;

		for (const char *q = v; q < ve; q++)
			if (!is_value_char((unsigned char)*q))
				return LG_HTTP_BAD_HEADER;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		size_t name_len = (size_t)(colon - p), vlen = (size_t)(ve - v);

		if (name_len == 14 && strncasecmp(p, "Content-Length", 14) == 0) {
			/* RFC 9112 §6.3: more than one, or not a number, is an unrecoverable error.
			 */
			if (have_clen || !parse_uint(v, vlen, &clen))
				return LG_HTTP_BAD_LENGTH;
			have_clen = true;
		} else if (name_len == 10 && strncasecmp(p, "Connection", 10) == 0) {
			close = vlen == 5 && strncasecmp(v, "close", 5) == 0;
		} else if (name_len == 11 && strncasecmp(p, "Retry-After", 11) == 0) {
			unsigned long ra;

			if (parse_uint(v, vlen, &ra))
				out->retry_after = (long)ra;
		}
		p += n + 2;
	}
	out->body = p;
	out->body_len = (size_t)(end - p);
	/* RFC 9112 §6.3: 1xx, 204 and 304 have no body. */
	bool no_body = out->status < 200 || out->status == 204 || out->status == 304;

	if (no_body) {
		if (out->body_len != 0 || (have_clen && clen != 0 && out->status != 304))
			return LG_HTTP_BAD_LENGTH;
	} else if (!have_clen || clen != out->body_len) {
		return LG_HTTP_BAD_LENGTH;
	}
	if (kept && close)
		return LG_HTTP_CLOSE;
	if (!kept && !close)
		return LG_HTTP_NO_CLOSE;
	return LG_HTTP_OK;
}

enum lg_http_err
lg_http_parse_response(const char *buf, size_t len, struct lg_http_resp *out)
{
	return parse(buf, len, out, false);
}

enum lg_http_err
lg_http_parse_kept(const char *buf, size_t len, struct lg_http_resp *out)
{
	return parse(buf, len, out, true);
}

size_t
lg_http_response_len(const char *buf, size_t len)
{
	const char *end = buf + len, *p = buf;
	unsigned long clen = 0;

	/* Line by line up to the empty one; Content-Length read on the way. */
	for (;;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (nl == NULL)
			return 0;
		size_t n = (size_t)(nl - p);

		if (n == 1 && p[0] == '\r') {
			size_t head = (size_t)(nl + 1 - buf);
			/* 204: no body (RFC 9110 §6.4.1); the parse checks the rest. */
			bool no_body = len >= 12 && memcmp(buf + 9, "204", 3) == 0;

			if (no_body)
				return head;
			return len - head >= clen ? head + clen : 0;
		}
		if (n > 15 && strncasecmp(p, "Content-Length:", 15) == 0) {
			const char *v = p + 15;

			while (v < nl && (*v == ' ' || *v == '\t'))
				v++;
			clen = 0;
			for (; v < nl && *v >= '0' && *v <= '9' && clen < 1000000; v++)
				clen = clen * 10 + (unsigned long)(*v - '0');
		}
		p = nl + 1;
	}
}

const char *
lg_http_err_name(enum lg_http_err e)
{
	static const char *const names[LG_HTTP_ERR_N] = {
		[LG_HTTP_OK] = "ok",
		[LG_HTTP_EMPTY] = "empty",
		[LG_HTTP_BAD_STATUS_LINE] = "bad_status_line",
		[LG_HTTP_BAD_HEADER] = "bad_header",
		[LG_HTTP_NO_END] = "no_end_of_headers",
		[LG_HTTP_BAD_LENGTH] = "bad_content_length",
		[LG_HTTP_NO_CLOSE] = "no_connection_close",
		[LG_HTTP_CLOSE] = "connection_close_on_kept",
	};

	return (unsigned)e < LG_HTTP_ERR_N ? names[e] : "?";
}

/*
 * The value of the next member "name" (nlen bytes) that starts at or after *from, before end:
 * past the name's closing quote, optional spaces, ':' and optional spaces. NULL when there is
 * none; *from moves past the name found, so that a caller may look for the next one.
 */
static const char *
json_next_value(const char **from, const char *end, const char *name, size_t nlen)
{
	for (const char *p = *from; p + nlen + 2 <= end; p++) {
		if (*p != '"' || (size_t)(end - p - 1) < nlen + 1 ||
			memcmp(p + 1, name, nlen) != 0 || p[nlen + 1] != '"')
			continue;
		const char *q = p + nlen + 2;

		*from = q;
		while (q < end && *q == ' ')
			q++;
		if (q >= end || *q != ':')
			continue;
		q++;
		while (q < end && *q == ' ')
			q++;
		if (q < end)
			return q;
	}
	*from = end;
	return NULL;
}

int
lg_json_string(const char *body, size_t len, const char *name, const char **val, size_t *vlen)
{
	const char *end = body + len, *from = body, *q;
	size_t nlen = strlen(name);

	/* Look for "name" followed by optional spaces, ':', optional spaces and '"'. */
	while ((q = json_next_value(&from, end, name, nlen)) != NULL) {
		if (*q != '"')
			continue;
		q++;
		const char *s = q;

		while (q < end && *q != '"') {
			if (*q == '\\')
				return -EINVAL;
			q++;
		}
		if (q >= end)
			return -ENOENT;
		*val = s;
		*vlen = (size_t)(q - s);
		return 0;
	}
	return -ENOENT;
}

int
lg_json_object(const char *body, size_t len, const char *name, const char **obj, size_t *olen)
{
	const char *end = body + len, *from = body, *q;
	size_t nlen = strlen(name);

	while ((q = json_next_value(&from, end, name, nlen)) != NULL) {
		if (*q != '{')
			continue;
		unsigned depth = 0;
		bool in_str = false;

		for (const char *p = q; p < end; p++) {
			if (in_str) {
				if (*p == '\\')
					p++;
				else if (*p == '"')
					in_str = false;
			} else if (*p == '"') {
				in_str = true;
			} else if (*p == '{') {
				depth++;
			} else if (*p == '}' && --depth == 0) {
				*obj = q;
				*olen = (size_t)(p + 1 - q);
				return 0;
			}
		}
		return -EINVAL;
	}
	return -ENOENT;
}

int
lg_json_uint(const char *body, size_t len, const char *name, uint64_t *v)
{
	const char *end = body + len, *from = body, *q;
	size_t nlen = strlen(name);
	uint64_t x = 0;

	q = json_next_value(&from, end, name, nlen);
	if (q == NULL || (end - q >= 4 && memcmp(q, "null", 4) == 0))
		return -ENOENT;
	if (*q < '0' || *q > '9')
		return -EINVAL;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		if (x > (UINT64_MAX / 2 - 9) / 10)
			return -EINVAL;
		x = x * 10 + (uint64_t)(*q - '0');
	}
	/* A number ends at a separator: no fraction, exponent or trailing letters. */
	if (q < end && *q != ',' && *q != '}' && *q != ' ' && *q != ']')
		return -EINVAL;
	*v = x;
	return 0;
}
