/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Strict HTTP/1.1 request parser: one forward pass over the bytes, no state kept between
 * calls. Every check quotes the RFC 9112 (or RFC 9110) section that demands it.
 *
 * How "incomplete" and "error" are told apart: the parser walks the bytes in order and
 * stops at the first byte that cannot belong to any valid request (-> that error) or at
 * the end of the input (-> HTTP_INCOMPLETE). Any strict prefix of a valid request thus
 * reads as incomplete, and an error is reported as soon as the bytes make it certain.
 */
#include "dataplane/http_parser.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "common/parse.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#ifdef __SSSE3__
#include <tmmintrin.h>
#endif

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

typedef unsigned char uchar;

/* Byte classes, one bit each, so one table load answers every per-byte question. */
#define C_TCHAR	 0x01 /* RFC 9110 §5.6.2 tchar: method and field-name bytes */
#define C_TARGET 0x02 /* allowed in an origin-form request-target: VCHAR except '#' */
#define C_VALUE	 0x04 /* RFC 9110 §5.5 field-vchar / SP / HTAB (obs-text included) */
#define C_HOST	 0x08 /* RFC 3986 reg-name, IP-literal brackets and ":" port */

#define IS_ALNUM(c) \
	(((c) >= '0' && (c) <= '9') || ((c) >= 'A' && (c) <= 'Z') || ((c) >= 'a' && (c) <= 'z'))
#define IS_TCHAR(c)                                                                           \
	(IS_ALNUM(c) || (c) == '!' || (c) == '#' || (c) == '$' || (c) == '%' || (c) == '&' || \
		(c) == '\'' || (c) == '*' || (c) == '+' || (c) == '-' || (c) == '.' ||        \
		(c) == '^' || (c) == '_' || (c) == '`' || (c) == '|' || (c) == '~')
#define IS_TARGET(c) ((c) >= 0x21 && (c) <= 0x7e && (c) != '#')
#define IS_VALUE(c)  ((c) == '\t' || ((c) >= 0x20 && (c) != 0x7f))
#define IS_HOST(c)                                                                            \
	(IS_ALNUM(c) || (c) == '-' || (c) == '.' || (c) == '_' || (c) == '~' || (c) == '!' || \
		(c) == '$' || (c) == '&' || (c) == '\'' || (c) == '(' || (c) == ')' ||        \
		(c) == '*' || (c) == '+' || (c) == ',' || (c) == ';' || (c) == '=' ||         \
		(c) == '%' || (c) == ':' || (c) == '[' || (c) == ']')
#define CLS(c)                                                         \
	((IS_TCHAR(c) ? C_TCHAR : 0) | (IS_TARGET(c) ? C_TARGET : 0) | \
		(IS_VALUE(c) ? C_VALUE : 0) | (IS_HOST(c) ? C_HOST : 0))
#define CLS4(c)	 CLS(c), CLS((c) + 1), CLS((c) + 2), CLS((c) + 3)
#define CLS16(c) CLS4(c), CLS4((c) + 4), CLS4((c) + 8), CLS4((c) + 12)
#define CLS64(c) CLS16(c), CLS16((c) + 16), CLS16((c) + 32), CLS16((c) + 48)

static const uint8_t http_cls[256] = {CLS64(0), CLS64(64), CLS64(128), CLS64(192)};

#ifdef __SSSE3__
/*
 * A class tested 16 bytes at a time by their two nibbles (one PSHUFB each): ROWS(PRED, lo) has
 * bit h set when byte (h << 4 | lo) satisfies PRED, for h 0..7; bytes 0x80 and up are in no
 * class tested this way (tchar and host bytes are ASCII). Made from the same predicates as
 * http_cls, so the two cannot disagree.
 */
#define ROW(PRED, h, lo) (PRED(((h) << 4) | (lo)) ? 1u << (h) : 0u)
#define ROWS(PRED, lo)                                                                     \
	(uint8_t)(ROW(PRED, 0, lo) | ROW(PRED, 1, lo) | ROW(PRED, 2, lo) | ROW(PRED, 3, lo) | \
		  ROW(PRED, 4, lo) | ROW(PRED, 5, lo) | ROW(PRED, 6, lo) | ROW(PRED, 7, lo))
#define ROWS4(PRED, lo) ROWS(PRED, lo), ROWS(PRED, (lo) + 1), ROWS(PRED, (lo) + 2), ROWS(PRED, (lo) + 3)
#define ROWS16(PRED)	ROWS4(PRED, 0), ROWS4(PRED, 4), ROWS4(PRED, 8), ROWS4(PRED, 12)

static const uint8_t nib_tchar[16] __attribute__((aligned(16))) = {ROWS16(IS_TCHAR)};
static const uint8_t nib_host[16] __attribute__((aligned(16))) = {ROWS16(IS_HOST)};
/* The high nibble's row bit; 0x80 and up: none. */
static const uint8_t nib_row[16] __attribute__((aligned(16))) = {
	1, 2, 4, 8, 16, 32, 64, 128, 0, 0, 0, 0, 0, 0, 0, 0};

/* Bit i set when byte i of the 16 at p is NOT in the class whose low-nibble table is tbl. */
static inline unsigned int
outside16(const uchar *p, const uint8_t *tbl)
{
	const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	const __m128i low = _mm_set1_epi8(0x0f);
	const __m128i lo = _mm_and_si128(v, low);
	const __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), low);
	const __m128i in =
		_mm_and_si128(_mm_shuffle_epi8(_mm_load_si128((const __m128i *)(const void *)tbl), lo),
			_mm_shuffle_epi8(_mm_load_si128((const __m128i *)(const void *)nib_row), hi));

	return (unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(in, _mm_setzero_si128()));
}
#endif

static const struct {
	const char *name;
	uint8_t len;
} http_methods[] = {
	[HTTP_M_GET] = {"GET", 3},
	[HTTP_M_HEAD] = {"HEAD", 4},
	[HTTP_M_POST] = {"POST", 4},
	[HTTP_M_PUT] = {"PUT", 3},
	[HTTP_M_DELETE] = {"DELETE", 6},
	[HTTP_M_OPTIONS] = {"OPTIONS", 7},
	[HTTP_M_PATCH] = {"PATCH", 5},
	[HTTP_M_CONNECT] = {"CONNECT", 7},
	[HTTP_M_TRACE] = {"TRACE", 5},
};

static inline uint32_t
load32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t
load64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Compares a field-name of n >= 4 tchar bytes with a lowercase literal of the same
 * length. On tchar bytes, OR-ing in 0x20 folds exactly the ASCII letters (no other tchar
 * lands on a letter or '-'), so each word costs one OR and one compare.
 */
static inline bool
token_ieq(const uchar *s, const char *lit, size_t n)
{
	size_t i;

	if (n < 8)
		return (load32(s) | 0x20202020u) == load32(lit) &&
		       (load32(s + n - 4) | 0x20202020u) == load32(lit + n - 4);
	for (i = 0; i + 8 < n; i += 8)
		if ((load64(s + i) | 0x2020202020202020ull) != load64(lit + i))
			return false;
	return (load64(s + n - 8) | 0x2020202020202020ull) == load64(lit + n - 8);
}

static int __attribute__((noinline, cold))
http_fail(struct http_request *req, int status, const char *why)
{
	req->error = why;
	return status;
}

/* The input ended before the header section did. */
static int __attribute__((noinline)) http_ran_out(struct http_request *req, size_t len)
{
	/* The scan stops at HTTP_MAX_HEAD bytes: running out there means the section is
	 * longer, which no more input can fix. */
	if (len >= HTTP_MAX_HEAD)
		return http_fail(req, 431, "header section too large");
	return HTTP_INCOMPLETE;
}

/* Returns the first byte in [p, end) that is not in class cls, or end. */
static inline const uchar *
scan_class(const uchar *p, const uchar *end, uint8_t cls)
{
	/* Four bytes per test while four remain: field names are short, so the loop
	 * branch costs as much as the table loads. */
	while (end - p >= 4 &&
		likely(http_cls[p[0]] & http_cls[p[1]] & http_cls[p[2]] & http_cls[p[3]] & cls))
		p += 4;
	while (p < end && likely(http_cls[*p] & cls))
		p++;
	return p;
}

/* Returns the first byte in [p, end) that is not a tchar (a field-name's end), or end. */
static inline const uchar *
scan_name(const uchar *p, const uchar *end)
{
#ifdef __SSSE3__
	/* Sixteen at a time while sixteen remain: a name and its ':' mostly fit in one step. */
	while (end - p >= 16) {
		unsigned int m = outside16(p, nib_tchar);

		if (m != 0)
			return p + __builtin_ctz(m);
		p += 16;
	}
#endif
	return scan_class(p, end, C_TCHAR);
}

/*
 * Returns the first byte in [p, end) that may not appear inside a field value (a CTL
 * other than HTAB, or DEL), or end. CR, which ends every value, is such a byte.
 */
static inline const uchar *
scan_value(const uchar *p, const uchar *end)
{
#ifdef __SSE2__
	/* Sixteen bytes at a time while sixteen remain: flag bytes <= 0x1f or == 0x7f. HTAB
	 * is flagged too and stepped over one at a time; it is rare in values. */
	const __m128i ctl = _mm_set1_epi8(0x1f);
	const __m128i del = _mm_set1_epi8(0x7f);

	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i bad = _mm_or_si128(
			_mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v), _mm_cmpeq_epi8(v, del));
		unsigned int m = (unsigned int)_mm_movemask_epi8(bad);

		if (m != 0) {
			p += __builtin_ctz(m);
			if (likely(*p != '\t'))
				return p;
			p++;
			continue;
		}
		p += 16;
	}
#endif
	return scan_class(p, end, C_VALUE);
}

/*
 * Returns the first byte in [p, end) that may not appear in an origin-form request-target,
 * or end; *q is set to the first '?' before it, or NULL.
 */
static inline const uchar *
scan_target(const uchar *p, const uchar *end, const uchar **q)
{
	*q = NULL;
#ifdef __SSE2__
	/* Flag bytes outside 0x21..0x7e, and '#'. Adding 0x5f maps 0x21..0x7e onto
	 * 0x80..0xdd, the lowest signed bytes, so one signed compare finds every byte
	 * outside the range. The query mark is found in the same pass. */
	const __m128i shift = _mm_set1_epi8(0x5f);
	const __m128i hi = _mm_set1_epi8((char)0xdd);
	const __m128i hash = _mm_set1_epi8('#');
	const __m128i qmark = _mm_set1_epi8('?');

	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i out = _mm_cmpgt_epi8(_mm_add_epi8(v, shift), hi);
		__m128i bad = _mm_or_si128(out, _mm_cmpeq_epi8(v, hash));
		unsigned int m = (unsigned int)_mm_movemask_epi8(bad);
		unsigned int mq = (unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(v, qmark));

		/* only a '?' before the stop byte counts: (m & -m) - 1 masks those */
		mq &= m ? (m & -m) - 1 : ~0u;
		if (mq != 0 && *q == NULL)
			*q = p + __builtin_ctz(mq);
		if (m != 0)
			return p + __builtin_ctz(m);
		p += 16;
	}
#endif
	for (; p < end && likely(http_cls[*p] & C_TARGET); p++)
		if (unlikely(*p == '?') && *q == NULL)
			*q = p;
	return p;
}

/* RFC 9112 §3.1: method = token; we implement a fixed set, other tokens get 501. */
static int __attribute__((noinline))
parse_method_slow(const uchar **pp, const uchar *end, struct http_request *req)
{
	const uchar *m = *pp;
	const uchar *p = scan_class(m, end, C_TCHAR);
	size_t n = (size_t)(p - m);
	unsigned int i;

	if (p == end)
		return HTTP_INCOMPLETE;
	if (p == m) {
		/* RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the
		 * request-line; we sit behind nothing that would send one, so it is noise. */
		if (*p == '\r' || *p == '\n')
			return http_fail(req, 400, "empty line before request-line");
		return http_fail(req, 400, "request-line does not start with a method");
	}
	/* RFC 9112 §3: exactly one SP between the parts of the request-line. */
	if (*p != ' ')
		return http_fail(req, 400, "invalid character in method");
	for (i = 0; i < sizeof(http_methods) / sizeof(http_methods[0]); i++) {
		/* RFC 9110 §9.1: the method token is case-sensitive. */
		if (http_methods[i].len == n && memcmp(m, http_methods[i].name, n) == 0) {
			req->method = (enum http_method)i;
			*pp = p + 1;
			return 0;
		}
	}
	/* RFC 9110 §9.1: an unrecognized method SHOULD get 501. */
	return http_fail(req, 501, "method not implemented");
}

/* RFC 9112 §2.3: HTTP-version = "HTTP" "/" DIGIT "." DIGIT, followed by CRLF (§3). */
static int __attribute__((noinline))
parse_version_slow(const uchar **pp, const uchar *end, struct http_request *req)
{
	static const char pattern[] = "HTTP/0.0\r\n";
	const uchar *p = *pp;
	unsigned int i;

	for (i = 0; i < 10; i++) {
		if (p + i == end)
			return HTTP_INCOMPLETE;
		switch (i) {
		case 5:
		case 7:
			if (p[i] < '0' || p[i] > '9')
				return http_fail(req, 400, "malformed HTTP-version");
			break;
		case 8:
			/* RFC 9112 §2.2: a bare LF is not a line terminator here. */
			if (p[i] == '\n')
				return http_fail(req, 400, "bare LF in request-line");
			if (p[i] != '\r')
				return http_fail(req, 400, "malformed HTTP-version");
			break;
		case 9:
			/* RFC 9112 §2.2: a CR not followed by LF is invalid. */
			if (p[i] != '\n')
				return http_fail(req, 400, "bare CR in request-line");
			break;
		default:
			if (i == 0 && p[i] == ' ')
				return http_fail(req, 400, "more than one SP in request-line");
			/* RFC 9112 §2.3: HTTP-name is case-sensitive. */
			if (p[i] != (uchar)pattern[i])
				return http_fail(req, 400, "malformed HTTP-version");
			break;
		}
	}
	/* RFC 9110 §15.6.6: 505 for a major version we do not support; RFC 9112 §2.3 leaves
	 * only 1.0 and 1.1 as HTTP/1 versions we can answer in kind. */
	if (p[5] != '1' || p[7] > '1')
		return http_fail(req, 505, "HTTP version not supported");
	req->minor = (uint8_t)(p[7] - '0');
	*pp = p + 10;
	return 0;
}

/* Explains why a request-target scan stopped at *p. */
static int __attribute__((noinline, cold)) target_error(const uchar *p, struct http_request *req)
{
	switch (*p) {
	case '\r':
		/* RFC 9112 §3: the HTTP-version is not optional (no HTTP/0.9). */
		return http_fail(req, 400, "missing HTTP-version");
	case '\n':
		return http_fail(req, 400, "bare LF in request-line");
	case '#':
		/* RFC 9112 §3.2.1: origin-form has no fragment. */
		return http_fail(req, 400, "fragment in request-target");
	default:
		return http_fail(req, 400, "invalid character in request-target");
	}
}

/*
 * Scans target bytes from t to the SP that ends the request-target, at most to lim (the
 * HTTP_MAX_TARGET-th byte of the target, or end): 0 with *sp at that SP and *q at the first
 * '?' before it (or NULL); else HTTP_INCOMPLETE or the error status.
 */
static inline int
target_scan_to_sp(const uchar *t, const uchar *lim, const uchar *end, const uchar **sp,
	const uchar **q, struct http_request *req)
{
	const uchar *p = scan_target(t, lim, q);

	*sp = p;
	if (unlikely(p == lim)) {
		if (p == end)
			return HTTP_INCOMPLETE;
		/* RFC 9112 §3: a server MUST answer 414 to a target longer than it wishes to
		 * parse; one more target byte already proves it. */
		if (http_cls[*p] & C_TARGET)
			return http_fail(req, 414, "request-target too long");
	}
	if (unlikely(*p != ' '))
		return target_error(p, req);
	return 0;
}

/*
 * RFC 9112 §3.2.2: absolute-form = absolute-URI. A server MUST accept it (a client sends it
 * to a proxy, and a proxy may pass it on unchanged). Only the "http" scheme names a resource
 * of ours (RFC 9110 §4.2.1; the scheme is case-insensitive, RFC 3986 §3.1): "http://"
 * authority path-abempty [ "?" query ]. Whether the authority is this server is the caller's
 * to decide (http_authority_is()); RFC 9112 §3.2.2 has the Host field ignored in its favour.
 * Out of line: origin-form is what every browser and shop client sends.
 */
static int __attribute__((noinline))
parse_absolute_form(const uchar **pp, const uchar *end, struct http_request *req)
{
	static const char scheme[] = "http://";
	const uchar *t = *pp;
	const uchar *lim = end - t > HTTP_MAX_TARGET ? t + HTTP_MAX_TARGET : end;
	const uchar *a, *p, *q;
	size_t i;

	/* authority-form (RFC 9112 §3.2.3) is for CONNECT through a proxy: not ours. */
	if (req->method == HTTP_M_CONNECT)
		return http_fail(req, 400, "authority-form request-target (CONNECT) not supported");
	for (i = 0; i < sizeof(scheme) - 1; i++) {
		if (t + i == end)
			return HTTP_INCOMPLETE;
		if ((t[i] | (i < 4 ? 0x20 : 0)) != (uchar)scheme[i])
			return http_fail(req, 400,
				"request-target is neither origin-form nor an http absolute-form");
	}
	a = t + i;
	/* RFC 3986 §3.2: the authority ends at the first '/', '?' or the SP that ends the
	 * target; RFC 9110 §4.2.4: no userinfo ('@' is not a host byte). */
	for (p = a; p < lim && *p != '/' && *p != '?' && *p != ' '; p++)
		if (!(http_cls[*p] & C_HOST))
			return http_fail(
				req, 400, "invalid authority in absolute-form request-target");
	if (p == end)
		return HTTP_INCOMPLETE;
	if (p == lim)
		return http_fail(req, 414, "request-target too long");
	/* RFC 9110 §4.2.1: an http URI with an empty host is invalid. */
	if (p == a || *a == ':')
		return http_fail(req, 400, "absolute-form request-target without a host");
	const struct http_str authority = {(const char *)a, (uint16_t)(p - a)};
	const uchar *path = p;

	int rc = target_scan_to_sp(path, lim, end, &p, &q, req);

	if (rc != 0)
		return rc;
	req->target = (struct http_str){(const char *)t, (uint16_t)(p - t)};
	req->authority = authority;
	if (q == NULL)
		q = p;
	/* RFC 9110 §4.2.3: an empty path is "/". */
	if (q == path)
		req->path = (struct http_str){"/", 1};
	else
		req->path = (struct http_str){(const char *)path, (uint16_t)(q - path)};
	req->query = q == p ? (struct http_str){(const char *)p, 0}
			    : (struct http_str){(const char *)q + 1, (uint16_t)(p - q - 1)};
	*pp = p + 1;
	return 0;
}

/* RFC 9112 §3.2: request-target; we accept origin-form and, for OPTIONS, asterisk-form;
 * absolute-form out of line (parse_absolute_form()). */
static inline int
parse_target(const uchar **pp, const uchar *end, struct http_request *req)
{
	const uchar *t = *pp;
	const uchar *p, *lim, *q;
	uint16_t n;

	if (unlikely(t == end))
		return HTTP_INCOMPLETE;
	if (likely(*t == '/')) {
		int rc;

		lim = end - t > HTTP_MAX_TARGET ? t + HTTP_MAX_TARGET : end;
		rc = target_scan_to_sp(t, lim, end, &p, &q, req);
		if (unlikely(rc != 0))
			return rc;
		n = (uint16_t)(p - t);
		/* From a local, not from req->target just written (see http_parse_request). */
		const struct http_str target = {(const char *)t, n};

		req->target = target;
		/* RFC 9112 §3.2.1: origin-form = absolute-path [ "?" query ] */
		if (q == NULL) {
			req->path = target;
			req->query = (struct http_str){(const char *)p, 0};
		} else {
			req->path = (struct http_str){(const char *)t, (uint16_t)(q - t)};
			req->query = (struct http_str){(const char *)q + 1, (uint16_t)(p - q - 1)};
		}
		*pp = p + 1;
		return 0;
	}
	if (*t == '*') {
		/* RFC 9112 §3.2.4: asterisk-form is only used for a server-wide OPTIONS. */
		if (req->method != HTTP_M_OPTIONS)
			return http_fail(req, 400, "asterisk-form request-target without OPTIONS");
		if (t + 1 == end)
			return HTTP_INCOMPLETE;
		if (t[1] != ' ')
			return http_fail(req, 400, "invalid asterisk-form request-target");
		req->target = (struct http_str){(const char *)t, 1};
		req->path = (struct http_str){(const char *)t + 1, 0};
		req->query = req->path;
		*pp = t + 2;
		return 0;
	}
	/* RFC 9112 §3: exactly one SP between method and request-target. */
	if (*t == ' ')
		return http_fail(req, 400, "more than one SP in request-line");
	return parse_absolute_form(pp, end, req);
}

/* Explains why a field-name scan stopped at *p (name started at n). */
static int __attribute__((noinline, cold))
name_error(const uchar *n, const uchar *p, struct http_request *req)
{
	if (*p == '\n')
		return http_fail(req, 400, "bare LF in header section");
	if (p == n) {
		/* RFC 9112 §5.2: obs-fold is rejected with 400 outside message/http; §2.2
		 * also rejects whitespace between the start-line and the first field. */
		if (*p == ' ' || *p == '\t')
			return http_fail(req, 400, "obs-fold (header line starts with whitespace)");
		if (*p == ':')
			return http_fail(req, 400, "empty header name");
		return http_fail(req, 400, "invalid character in header name");
	}
	/* RFC 9112 §5.1: no whitespace is allowed between field-name and colon; a server
	 * MUST reject such a message with 400. */
	if (*p == ' ' || *p == '\t')
		return http_fail(req, 400, "space before colon in header name");
	if (*p == '\r')
		return http_fail(req, 400, "header line without colon");
	return http_fail(req, 400, "invalid character in header name");
}

/* RFC 9110 §8.6: Content-Length = 1*DIGIT (a list, even of equal values, is rejected). */
static int __attribute__((noinline))
parse_content_length(const uchar *v, uint16_t n, struct http_request *req)
{
	int64_t cl = 0;
	uint16_t i;

	if (n == 0)
		return http_fail(req, 400, "empty Content-Length");
	for (i = 0; i < n; i++)
		if (v[i] < '0' || v[i] > '9')
			return http_fail(req, 400, "Content-Length is not a decimal number");
	if (n > 9)
		return http_fail(req, 400, "Content-Length too large");
	for (i = 0; i < n; i++)
		cl = cl * 10 + (v[i] - '0');
	/* 413 (RFC 9110 §15.5.14) would fit too; we keep every Content-Length problem a
	 * 400, so callers handle one status for all of them. */
	if (cl > HTTP_MAX_BODY)
		return http_fail(req, 400, "Content-Length too large");
	req->content_length = cl;
	return 0;
}

/*
 * RFC 9112 §3.2 / RFC 3986 §3.2.2: Host = uri-host [ ":" port ]; we check the alphabet of
 * v[0..n), which lies in the input that ends at end.
 */
static int
check_host(const uchar *v, uint16_t n, const uchar *end, struct http_request *req)
{
	uint16_t i = 0;

#ifdef __SSSE3__
	/* Sixteen at a time; the last step reads past the value (the CRLF and what follows,
	 * never past end) and looks only at the value's bytes. */
	for (; i < n && end - (v + i) >= 16; i += 16) {
		unsigned int m = outside16(v + i, nib_host);

		if (n - i < 16)
			m &= (1u << (n - i)) - 1;
		if (m != 0)
			return http_fail(req, 400, "invalid Host header");
	}
#endif
	for (; i < n; i++)
		if (!(http_cls[v[i]] & C_HOST))
			return http_fail(req, 400, "invalid Host header");
	return 0;
}

enum known_field {
	KF_HOST,
	KF_AUTHORIZATION,
	KF_ORIGIN,
	KF_FLASH_TOKEN,
	KF_DEVICE_ID,
	KF_CONTENT_TYPE,
	KF_ACRM,
	KF_CONTENT_LENGTH,
	KF_TRANSFER_ENCODING,
	KF_XFF,	      /* may repeat: a list over several lines (RFC 9110 §5.3) */
	KF_FORWARDED, /* may repeat too (RFC 7239 §4) */
	KF_FLASH_SOLUTION,
	KF_CONNECTION, /* may repeat too (RFC 9110 §7.6.1): only noted, kept.h reads it */
	KF_NONE,
};

/* A field's HTTP_SEEN_* bit is 1 << its known_field. */
_Static_assert(HTTP_SEEN_HOST == 1u << KF_HOST && HTTP_SEEN_ACRM == 1u << KF_ACRM &&
		       HTTP_SEEN_AUTHORIZATION == 1u << KF_AUTHORIZATION &&
		       HTTP_SEEN_ORIGIN == 1u << KF_ORIGIN &&
		       HTTP_SEEN_FLASH_TOKEN == 1u << KF_FLASH_TOKEN &&
		       HTTP_SEEN_DEVICE_ID == 1u << KF_DEVICE_ID &&
		       HTTP_SEEN_CONTENT_TYPE == 1u << KF_CONTENT_TYPE &&
		       HTTP_SEEN_CONTENT_LEN == 1u << KF_CONTENT_LENGTH &&
		       HTTP_SEEN_XFF == 1u << KF_XFF && HTTP_SEEN_FORWARDED == 1u << KF_FORWARDED &&
		       HTTP_SEEN_FLASH_SOLUTION == 1u << KF_FLASH_SOLUTION &&
		       HTTP_SEEN_CONNECTION == 1u << KF_CONNECTION,
	"HTTP_SEEN_* bits follow enum known_field");

static const char *const known_dup_reason[] = {
	[KF_HOST] = "duplicate Host",
	[KF_AUTHORIZATION] = "duplicate Authorization",
	[KF_ORIGIN] = "duplicate Origin",
	[KF_FLASH_TOKEN] = "duplicate X-Flash-Token",
	[KF_DEVICE_ID] = "duplicate X-Device-Id",
	[KF_CONTENT_TYPE] = "duplicate Content-Type",
	[KF_ACRM] = "duplicate Access-Control-Request-Method",
	[KF_CONTENT_LENGTH] = "duplicate Content-Length",
	[KF_FLASH_SOLUTION] = "duplicate X-Flash-Solution",
};

/* Which well-known field a name (tchar only) is; dispatch on length first. */
static inline enum known_field
classify_name(const uchar *n, size_t len)
{
	switch (len) {
	case 4:
		return token_ieq(n, "host", 4) ? KF_HOST : KF_NONE;
	case 6:
		return token_ieq(n, "origin", 6) ? KF_ORIGIN : KF_NONE;
	case 9:
		return token_ieq(n, "forwarded", 9) ? KF_FORWARDED : KF_NONE;
	case 10:
		return token_ieq(n, "connection", 10) ? KF_CONNECTION : KF_NONE;
	case 11:
		return token_ieq(n, "x-device-id", 11) ? KF_DEVICE_ID : KF_NONE;
	case 12:
		return token_ieq(n, "content-type", 12) ? KF_CONTENT_TYPE : KF_NONE;
	case 13:
		if (token_ieq(n, "authorization", 13))
			return KF_AUTHORIZATION;
		return token_ieq(n, "x-flash-token", 13) ? KF_FLASH_TOKEN : KF_NONE;
	case 14:
		return token_ieq(n, "content-length", 14) ? KF_CONTENT_LENGTH : KF_NONE;
	case 15:
		return token_ieq(n, "x-forwarded-for", 15) ? KF_XFF : KF_NONE;
	case 16:
		return token_ieq(n, "x-flash-solution", 16) ? KF_FLASH_SOLUTION : KF_NONE;
	case 17:
		return token_ieq(n, "transfer-encoding", 17) ? KF_TRANSFER_ENCODING : KF_NONE;
	case 29:
		return token_ieq(n, "access-control-request-method", 29) ? KF_ACRM : KF_NONE;
	default:
		return KF_NONE;
	}
}

/* Records a well-known field (its value lies in the input that ends at end); rejects what makes
 * the request ambiguous. */
static inline int
capture_known(
	enum known_field kf, struct http_str value, const uchar *end, struct http_request *req)
{
	struct http_str *slot;
	int rc;

	if (kf == KF_TRANSFER_ENCODING) {
		/* RFC 9112 §6.1: a server that receives a transfer coding it does not
		 * understand SHOULD answer 501; we implement none (not even chunked), which
		 * also removes every TE/CL smuggling ambiguity. */
		return http_fail(req, 501, "Transfer-Encoding is not supported");
	}
	/* Lists that may span several lines: only noted here; http_forwarded_for() reads them
	 * when the request came from a trusted edge. */
	if (kf == KF_XFF || kf == KF_FORWARDED || kf == KF_CONNECTION) {
		req->seen |= 1u << kf;
		return 0;
	}
	/* RFC 9112 §3.2 (Host) and §6.3 (Content-Length): more than one is a 400. The other
	 * captured fields are singletons too (RFC 9110 §5.3): two tokens or two origins
	 * would leave us checking one and acting on the other. */
	if (req->seen & (1u << kf))
		return http_fail(req, 400, known_dup_reason[kf]);
	req->seen |= 1u << kf;
	switch (kf) {
	case KF_HOST:
		rc = check_host((const uchar *)value.p, value.len, end, req);
		if (rc != 0)
			return rc;
		slot = &req->host;
		break;
	case KF_CONTENT_LENGTH:
		return parse_content_length((const uchar *)value.p, value.len, req);
	case KF_AUTHORIZATION:
		slot = &req->authorization;
		break;
	case KF_ORIGIN:
		slot = &req->origin;
		break;
	case KF_FLASH_TOKEN:
		slot = &req->flash_token;
		break;
	case KF_DEVICE_ID:
		slot = &req->device_id;
		break;
	case KF_CONTENT_TYPE:
		slot = &req->content_type;
		break;
	case KF_ACRM:
		slot = &req->access_control_request_method;
		break;
	case KF_FLASH_SOLUTION:
		slot = &req->flash_solution;
		break;
	default:
		return 0;
	}
	*slot = value;
	return 0;
}

/* RFC 9112 §5: field-line = field-name ":" OWS field-value OWS, each ending in CRLF. */
static inline int
parse_fields(const uchar **pp, const uchar *end, struct http_request *req)
{
	const uchar *p = *pp;

	for (;;) {
		const uchar *n, *v, *ve;
		struct http_header *h;
		enum known_field kf;
		uint16_t nlen;

		if (unlikely(p == end))
			return HTTP_INCOMPLETE;
		if (*p == '\r') {
			if (p + 1 == end)
				return HTTP_INCOMPLETE;
			/* RFC 9112 §2.2: CR must be followed by LF. */
			if (unlikely(p[1] != '\n'))
				return http_fail(req, 400, "bare CR in header section");
			*pp = p + 2;
			return 0;
		}
		/* RFC 9110 §5.4 / RFC 6585 §5: too many fields -> 431; another line that is
		 * not the empty line is already one too many. */
		if (unlikely(req->n_headers == HTTP_MAX_HEADERS))
			return http_fail(req, 431, "too many header fields");

		/* RFC 9110 §5.1: field-name = token */
		n = p;
		p = scan_name(p, end);
		if (unlikely(p == end))
			return HTTP_INCOMPLETE;
		if (unlikely(*p != ':' || p == n))
			return name_error(n, p, req);
		nlen = (uint16_t)(p - n);
		p++;

		/* RFC 9112 §5.1: OWS before the value is not part of it. Mostly one SP. */
		if (likely(end - p >= 2 && p[0] == ' ' && p[1] > ' '))
			p++;
		else
			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
		v = p;
		p = scan_value(p, end);
		if (unlikely(p == end))
			return HTTP_INCOMPLETE;
		if (unlikely(*p != '\r')) {
			/* RFC 9112 §2.2: bare LF is rejected here (we do not take the MAY). */
			if (*p == '\n')
				return http_fail(req, 400, "bare LF in header section");
			/* RFC 9110 §5.5: NUL and other CTLs in a value MUST be rejected (or
			 * replaced; we reject). */
			return http_fail(req, 400, "invalid character in header value");
		}
		if (unlikely(p + 1 == end))
			return HTTP_INCOMPLETE;
		if (unlikely(p[1] != '\n'))
			return http_fail(req, 400, "bare CR in header section");
		/* RFC 9112 §5.1: trailing OWS is not part of the value. ve[-1] is at worst the
		 * name's ':' or OWS (no CTL but HTAB is in a value, so "<= SP" means SP or HTAB). */
		ve = p;
		if (unlikely(ve[-1] <= ' '))
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
		p += 2;

		const struct http_str value = {(const char *)v, (uint16_t)(ve - v)};

		h = &req->headers[req->n_headers++];
		h->name = (struct http_str){(const char *)n, nlen};
		h->value = value;
		kf = classify_name(n, nlen);
		if (unlikely(kf != KF_NONE)) {
			int rc = capture_known(kf, value, end, req);

			if (rc != 0)
				return rc;
		}
	}
}

/* Parses one request from buf[0..len); the full contract is in http_parser.h. */
int
http_parse_request(const char *buf, size_t len, struct http_request *req)
{
	const uchar *start = (const uchar *)buf;
	const uchar *end = start + (len < HTTP_MAX_HEAD ? len : HTTP_MAX_HEAD);
	const uchar *p = start;
	size_t avail;
	int rc;

	/* Each from the constant, not copied from the first: a 16-byte load of a struct just
	 * written by two narrower stores waits for them to reach the cache (~12 cycles). */
	const struct http_str none = {NULL, 0};

	req->n_headers = 0;
	req->authority = none;
	req->host = none;
	req->authorization = none;
	req->origin = none;
	req->flash_token = none;
	req->device_id = none;
	req->content_type = none;
	req->access_control_request_method = none;
	req->flash_solution = none;
	req->seen = 0;
	req->content_length = -1;
	req->head_len = 0;
	req->total_len = 0;
	req->error = NULL;

	/* RFC 9112 §3: request-line = method SP request-target SP HTTP-version CRLF.
	 * Fast path for the methods and the versions that make up nearly all traffic. */
	if (likely(end - p >= 5) && memcmp(p, "GET ", 4) == 0) {
		req->method = HTTP_M_GET;
		p += 4;
	} else if (likely(end - p >= 5) && memcmp(p, "POST ", 5) == 0) {
		req->method = HTTP_M_POST;
		p += 5;
	} else {
		rc = parse_method_slow(&p, end, req);
		if (rc != 0)
			goto out;
	}
	rc = parse_target(&p, end, req);
	if (unlikely(rc != 0))
		goto out;
	if (likely(end - p >= 10) && memcmp(p, "HTTP/1.", 7) == 0 && (p[7] == '1' || p[7] == '0') &&
		p[8] == '\r' && p[9] == '\n') {
		req->minor = (uint8_t)(p[7] - '0');
		p += 10;
	} else {
		rc = parse_version_slow(&p, end, req);
		if (rc != 0)
			goto out;
	}
	rc = parse_fields(&p, end, req);
	if (unlikely(rc != 0))
		goto out;

	req->head_len = (uint32_t)(p - start);
	/* RFC 9112 §3.2: an HTTP/1.1 request without Host gets 400 (duplicates were
	 * rejected as they came). */
	if (unlikely(req->minor == 1 && !(req->seen & HTTP_SEEN_HOST)))
		return http_fail(req, 400, "missing Host header");
	/* RFC 9112 §6.3: without Transfer-Encoding, Content-Length gives the body length;
	 * without either, a request has no body. */
	if (req->content_length < 0) {
		req->body = (struct http_str){(const char *)p, 0};
		req->total_len = req->head_len;
		return 0;
	}
	avail = len - req->head_len;
	if ((size_t)req->content_length > avail)
		return HTTP_INCOMPLETE;
	req->body = (struct http_str){(const char *)p, (uint16_t)req->content_length};
	req->total_len = req->head_len + (uint32_t)req->content_length;
	return 0;
out:
	return rc == HTTP_INCOMPLETE ? http_ran_out(req, len) : rc;
}

static inline uchar
ascii_lower(uchar c)
{
	return (c >= 'A' && c <= 'Z') ? (uchar)(c | 0x20) : c;
}

/* First field named name (ASCII case-insensitive) in req, or NULL; see http_parser.h. */
const struct http_str *
http_find_header(const struct http_request *req, const char *name, size_t name_len)
{
	uint16_t i;
	size_t j;

	for (i = 0; i < req->n_headers; i++) {
		const struct http_str *n = &req->headers[i].name;

		if (n->len != name_len)
			continue;
		for (j = 0; j < name_len; j++)
			if (ascii_lower((uchar)n->p[j]) != ascii_lower((uchar)name[j]))
				break;
		if (j == name_len)
			return &req->headers[i].value;
	}
	return NULL;
}

/* The contract is in http_parser.h. */
bool
http_authority_is(const struct http_str *authority, const struct http_str *names, unsigned n_names,
	bool (*port_ok)(const void *ctx, uint16_t port), const void *ctx)
{
	const char *a = authority->p;
	size_t n = authority->len, host_len = n;

	if (n == 0)
		return false;
	/* RFC 3986 §3.2.3: port = *DIGIT after the last ':' (an IPv6 literal's colons are
	 * inside its brackets; we have no IPv6 name, so such a host matches nothing anyway). */
	for (size_t i = n; i-- > 0 && a[i] != ']';) {
		if (a[i] == ':') {
			unsigned long port = 0;

			host_len = i;
			if (i + 1 == n)
				break; /* an empty port is the scheme's default */
			if (n - i - 1 > 5)
				return false;
			for (size_t k = i + 1; k < n; k++) {
				if (a[k] < '0' || a[k] > '9')
					return false;
				port = port * 10 + (unsigned long)(a[k] - '0');
			}
			if (port > 65535 || !port_ok(ctx, (uint16_t)port))
				return false;
			break;
		}
	}
	for (unsigned k = 0; k < n_names; k++)
		if (names[k].len == host_len && strncasecmp(names[k].p, a, host_len) == 0)
			return true;
	return false;
}

/* ---- X-Forwarded-For and Forwarded ----------------------------------------------------- */

/* An address as text in s[0..n): IPv4 dotted or IPv6 (RFC 4291 §2.2); IPv4-mapped IPv6
 * (::ffff:a.b.c.d) is its IPv4 address. Returns 0 or -1. */
static int
fwd_addr(const char *s, size_t n, struct http_addr *out)
{
	uint32_t a4;

	memset(out, 0, sizeof(*out));
	if (memchr(s, ':', n) == NULL) {
		if (parse_ipv4_n(s, n, &a4) != 0)
			return -1;
		out->family = 4;
		out->a[0] = (uint8_t)(a4 >> 24);
		out->a[1] = (uint8_t)(a4 >> 16);
		out->a[2] = (uint8_t)(a4 >> 8);
		out->a[3] = (uint8_t)a4;
		return 0;
	}
	if (parse_ipv6_n(s, n, out->a) != 0)
		return -1;
	out->family = 6;
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (memcmp(out->a, mapped, sizeof(mapped)) == 0) {
		memmove(out->a, out->a + 12, 4);
		memset(out->a + 4, 0, 12);
		out->family = 4;
	}
	return 0;
}

static inline const char *
fwd_skip_ows(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/*
 * RFC 7239 §6: node = nodename [ ":" node-port ], nodename = IPv4address / "[" IPv6address "]"
 * / "unknown" / obfnode, node-port = port (1*5DIGIT) / obfport ("_" 1*(ALPHA / DIGIT / "." /
 * "_" / "-")). An IPv6 node (and any with a port) comes quoted; v[0..n) is the value without
 * the quotes. "unknown" and obfuscated nodes give family 0.
 */
static int
fwd_node(const char *v, size_t n, struct http_addr *out)
{
	const char *end = v + n, *host_end;

	if (n == 0)
		return -1;
	if (v[0] == '[') {
		const char *rb = memchr(v, ']', n);

		/* An IPv6 literal (a colon in it); ::ffff:a.b.c.d in brackets is the IPv4
		 * client fwd_addr() makes of it (family 4), [a.b.c.d] is refused. */
		if (rb == NULL || memchr(v + 1, ':', (size_t)(rb - v - 1)) == NULL ||
			fwd_addr(v + 1, (size_t)(rb - v - 1), out) != 0)
			return -1;
		host_end = rb + 1;
	} else {
		host_end = memchr(v, ':', n);
		if (host_end == NULL)
			host_end = end;
		size_t hn = (size_t)(host_end - v);

		if (hn == 7 && strncasecmp(v, "unknown", 7) == 0) {
			memset(out, 0, sizeof(*out));
		} else if (v[0] == '_') {
			for (const char *q = v + 1; q < host_end; q++)
				if (!IS_ALNUM((uchar)*q) && *q != '.' && *q != '_' && *q != '-')
					return -1;
			if (hn < 2)
				return -1;
			memset(out, 0, sizeof(*out));
		} else if (fwd_addr(v, hn, out) != 0 || out->family != 4) {
			return -1;
		}
	}
	if (host_end == end)
		return 0;
	if (*host_end != ':' || host_end + 1 == end)
		return -1;
	const char *port = host_end + 1;
	size_t pn = (size_t)(end - port);

	if (port[0] == '_') {
		for (const char *q = port + 1; q < end; q++)
			if (!IS_ALNUM((uchar)*q) && *q != '.' && *q != '_' && *q != '-')
				return -1;
		return pn >= 2 ? 0 : -1;
	}
	if (pn > 5)
		return -1;
	for (const char *q = port; q < end; q++)
		if (*q < '0' || *q > '9')
			return -1;
	return 0;
}

/*
 * One forwarded-element (RFC 7239 §4: forwarded-pair *( ";" forwarded-pair ), pair = token
 * "=" value, value = token / quoted-string) from p, up to the ',' that ends it or end (commas
 * inside quoted strings do not count). Its for= node goes to *out (family 0 when it has none
 * or an unknown or obfuscated one). Returns the byte after the element, or NULL if malformed.
 */
static const char *
fwd_element(const char *p, const char *end, struct http_addr *out, const char **why)
{
	bool seen_for = false;
	uint32_t seen_params = 0;

	memset(out, 0, sizeof(*out));
	for (;;) {
		const char *k = p, *v, *ve;
		bool quoted = false;

		while (p < end && IS_TCHAR((uchar)*p))
			p++;
		if (p == k || p == end || *p != '=') {
			*why = "malformed Forwarded parameter";
			return NULL;
		}
		size_t klen = (size_t)(p - k);

		p++;
		if (p < end && *p == '"') {
			quoted = true;
			v = ++p;
			/* qdtext; a quoted-pair (backslash) never belongs in a node, and no other
			 * parameter is read: refused rather than decoded. */
			while (p < end && *p != '"' && *p != '\\' && (*p == '\t' || (uchar)*p >= 0x20) &&
				*p != 0x7f)
				p++;
			if (p == end || *p != '"') {
				*why = "malformed quoted string in Forwarded";
				return NULL;
			}
			ve = p++;
		} else {
			v = p;
			while (p < end && IS_TCHAR((uchar)*p))
				p++;
			ve = p;
			if (v == ve) {
				*why = "empty Forwarded parameter value";
				return NULL;
			}
		}
		/* RFC 7239 §4: a parameter MUST NOT occur more than once per element. */
		static const char *const params[] = {"for", "by", "host", "proto"};
		unsigned bit = 4;

		for (unsigned i = 0; i < 4; i++)
			if (klen == strlen(params[i]) && strncasecmp(k, params[i], klen) == 0)
				bit = i;
		if (bit < 4) {
			if (seen_params & (1u << bit)) {
				*why = "a Forwarded parameter twice in one element";
				return NULL;
			}
			seen_params |= 1u << bit;
		}
		if (bit == 0) {
			if (fwd_node(v, (size_t)(ve - v), out) != 0 ||
				(!quoted && out->family == 6)) {
				*why = "malformed Forwarded for= address";
				return NULL;
			}
			seen_for = true;
		}
		p = fwd_skip_ows(p, end);
		if (p == end || *p == ',')
			break;
		if (*p != ';') {
			*why = "malformed Forwarded element";
			return NULL;
		}
		p = fwd_skip_ows(p + 1, end);
	}
	if (!seen_for)
		memset(out, 0, sizeof(*out));
	return p;
}

/* X-Forwarded-For's element: an address alone, OWS around it. */
static const char *
xff_element(const char *p, const char *end, struct http_addr *out, const char **why)
{
	const char *e = memchr(p, ',', (size_t)(end - p));
	const char *ve;

	if (e == NULL)
		e = end;
	ve = e;
	while (ve > p && (ve[-1] == ' ' || ve[-1] == '\t'))
		ve--;
	if (fwd_addr(p, (size_t)(ve - p), out) != 0) {
		*why = "malformed X-Forwarded-For address";
		return NULL;
	}
	return e;
}

/* The contract is in http_parser.h. */
int
http_forwarded_for(const struct http_request *req, bool forwarded, struct http_addr *out,
	unsigned cap, const char **why)
{
	const char *name = forwarded ? "forwarded" : "x-forwarded-for";
	size_t name_len = forwarded ? 9 : 15;
	unsigned n = 0;

	*why = NULL;
	/* The last field line holds the rightmost addresses: walk the lines backwards and each
	 * line's elements forwards into a window that keeps its last ones. */
	for (unsigned hi = req->n_headers; hi-- > 0;) {
		const struct http_header *h = &req->headers[hi];
		struct http_addr line[HTTP_FWD_MAX];
		unsigned k = 0;

		if (h->name.len != name_len || strncasecmp(h->name.p, name, name_len) != 0)
			continue;
		const char *p = h->value.p, *end = p + h->value.len;

		for (;;) {
			struct http_addr a;

			p = fwd_skip_ows(p, end);
			if (p == end) {
				/* RFC 9110 §5.6.1: empty list elements are to be ignored by a
				 * recipient; we are stricter for a list that names clients: an
				 * empty field or element is malformed. */
				*why = forwarded ? "empty Forwarded element"
						 : "empty X-Forwarded-For element";
				return -1;
			}
			p = forwarded ? fwd_element(p, end, &a, why) : xff_element(p, end, &a, why);
			if (p == NULL)
				return -1;
			if (k == HTTP_FWD_MAX) {
				*why = "too many forwarded addresses";
				return -1;
			}
			line[k++] = a;
			if (p == end)
				break;
			p++; /* the ',' */
		}
		while (k > 0) {
			if (n == HTTP_FWD_MAX) {
				*why = "too many forwarded addresses";
				return -1;
			}
			if (n < cap)
				out[n] = line[k - 1];
			n++;
			k--;
		}
	}
	return (int)(n < cap ? n : cap);
}
