/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the strict HTTP/1.1 request parser. Every input sits just before a
 * PROT_NONE page (tests/guard.h), so reading one byte past the input crashes the test.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "dataplane/http_parser.h"
#include "tests/guard.h"
#include "tests/lib/rng.h"
#include "tests/tap.h"

/* Printable, bounded rendering of an input for test names (TAP lines must stay one line). */
static const char *
show(const char *s, size_t n)
{
	static char out[96];
	size_t o = 0, i;

	for (i = 0; i < n && o < sizeof(out) - 8; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\r')
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\r");
		else if (c == '\n')
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\n");
		else if (c == '\t')
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\t");
		else if (c < 0x20 || c >= 0x7f || c == '#')
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (i < n)
		o += (size_t)snprintf(out + o, sizeof(out) - o, "...");
	out[o] = '\0';
	return out;
}

static bool
str_is(struct http_str s, const char *want)
{
	size_t n = strlen(want);

	return s.len == n && (n == 0 || memcmp(s.p, want, n) == 0);
}

/* Parses a guarded copy of in[0..n); returns the result. */
static int
parse_guarded(const char *in, size_t n, struct http_request *req, struct guard_buf *g)
{
	const char *buf = guard_place(g, in, n);

	if (buf == NULL) {
		tap_diag("guard_place failed");
		return -1000;
	}
	return http_parse_request(buf, n, req);
}

/*
 * PARSE(input literal, expected result, checks...): the checks run only when the result
 * matched, with `req` in scope and `name` naming the input.
 */
#define PARSE(in, want, ...)                                            \
	do {                                                            \
		struct http_request req;                                \
		struct guard_buf g_;                                    \
		int rc_ = parse_guarded(in, sizeof(in) - 1, &req, &g_); \
		const char *name = show(in, sizeof(in) - 1);            \
		if (tap_eq_int(rc_, want, name)) {                      \
			__VA_ARGS__                                     \
		}                                                       \
		guard_free(&g_);                                        \
	} while (0)

#define CHECK_STR(field, want) \
	tap_ok(str_is(req.field, want), "%s: " #field " is \"%s\"", name, want)
#define CHECK_INT(field, want)                                                                 \
	tap_ok((long long)req.field == (long long)(want), "%s: " #field " is %lld (got %lld)", \
		name, (long long)(want), (long long)req.field)

static void
test_valid(void)
{
	PARSE("GET / HTTP/1.0\r\n\r\n", 0, CHECK_INT(method, HTTP_M_GET); CHECK_STR(target, "/");
		CHECK_STR(path, "/"); CHECK_STR(query, ""); CHECK_INT(minor, 0);
		CHECK_INT(n_headers, 0); CHECK_INT(host.len, 0); CHECK_INT(seen, 0);
		CHECK_INT(content_length, -1); CHECK_INT(body.len, 0); CHECK_INT(head_len, 18);
		CHECK_INT(total_len, 18);
		tap_ok(req.error == NULL, "%s: no error text on success", name););
	PARSE("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 0, CHECK_INT(minor, 1);
		CHECK_STR(path, "/healthz"); CHECK_STR(host, "x"); CHECK_INT(seen, HTTP_SEEN_HOST);
		CHECK_INT(n_headers, 1); CHECK_STR(headers[0].name, "Host");
		CHECK_STR(headers[0].value, "x"););
	PARSE("HEAD /a HTTP/1.1\r\nHost: h\r\n\r\n", 0, CHECK_INT(method, HTTP_M_HEAD););
	PARSE("PUT /a HTTP/1.1\r\nHost: h\r\n\r\n", 0, CHECK_INT(method, HTTP_M_PUT););
	PARSE("DELETE /a HTTP/1.1\r\nHost: h\r\n\r\n", 0, CHECK_INT(method, HTTP_M_DELETE););
	PARSE("PATCH /a HTTP/1.1\r\nHost: h\r\n\r\n", 0, CHECK_INT(method, HTTP_M_PATCH););
	PARSE("TRACE /a HTTP/1.1\r\nHost: h\r\n\r\n", 0, CHECK_INT(method, HTTP_M_TRACE););
	PARSE("CONNECT /a HTTP/1.1\r\nHost: h\r\n\r\n", 0, CHECK_INT(method, HTTP_M_CONNECT););
	PARSE("OPTIONS /api/v1/events/1 HTTP/1.1\r\nHost: h\r\n"
	      "Origin: https://shop.example\r\nAccess-Control-Request-Method: POST\r\n\r\n",
		0, CHECK_INT(method, HTTP_M_OPTIONS);
		CHECK_STR(origin, "https://shop.example");
		CHECK_STR(access_control_request_method, "POST");
		CHECK_INT(seen, HTTP_SEEN_HOST | HTTP_SEEN_ORIGIN | HTTP_SEEN_ACRM););
	PARSE("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 0, CHECK_INT(method, HTTP_M_OPTIONS);
		CHECK_STR(target, "*"); CHECK_STR(path, ""); CHECK_STR(query, ""););
	PARSE("POST /api/v1/events/7/token HTTP/1.1\r\nHost: shop\r\nContent-Length: 5\r\n"
	      "Content-Type: application/json\r\n\r\nhello",
		0, CHECK_INT(method, HTTP_M_POST);
		CHECK_INT(content_length, 5); CHECK_STR(body, "hello");
		CHECK_STR(content_type, "application/json"); CHECK_INT(head_len, 103);
		CHECK_INT(total_len, 108););
	PARSE("GET /search?q=1&r=%20 HTTP/1.1\r\nHost: x\r\n\r\n", 0,
		CHECK_STR(target, "/search?q=1&r=%20");
		CHECK_STR(path, "/search"); CHECK_STR(query, "q=1&r=%20"););
	PARSE("GET /0123456789abcdef0123456789?x=1&y=/?z HTTP/1.1\r\nHost: x\r\n\r\n", 0,
		CHECK_STR(path, "/0123456789abcdef0123456789");
		CHECK_STR(query, "x=1&y=/?z"););
	PARSE("GET /a?b?c HTTP/1.1\r\nHost: x\r\n\r\n", 0, CHECK_STR(path, "/a");
		CHECK_STR(query, "b?c"););
	PARSE("GET /a? HTTP/1.1\r\nHost: x\r\n\r\n", 0, CHECK_STR(path, "/a");
		CHECK_STR(query, ""););
	PARSE("GET /~a/b.c-d_e!$&'()*+,;=:@%zz HTTP/1.1\r\nHost: x\r\n\r\n", 0,
		CHECK_STR(path, "/~a/b.c-d_e!$&'()*+,;=:@%zz"););
	/* OWS around values is stripped; inner SP and HTAB are kept. */
	PARSE("GET / HTTP/1.1\r\nHost:x\r\nX-A: \t v \t \r\nX-B:\r\nX-C:   \r\n"
	      "X-D: a\tb c\r\nX-E: a:b\r\n\r\n",
		0, CHECK_STR(host, "x");
		CHECK_STR(headers[1].value, "v"); CHECK_STR(headers[2].value, "");
		CHECK_STR(headers[3].value, ""); CHECK_STR(headers[4].value, "a\tb c");
		CHECK_STR(headers[5].value, "a:b"););
	/* Long values take the vector path: a HTAB in the middle and obs-text at the end. */
	PARSE("GET / HTTP/1.1\r\nHost: x\r\nX-Long: 0123456789abcdef\t0123456789abcdef0123"
	      "\xc3\xa9\xff\r\n\r\n",
		0,
		CHECK_STR(headers[1].value, "0123456789abcdef\t0123456789abcdef0123\xc3\xa9\xff"););
	PARSE("GET / HTTP/1.1\r\nHost: x\r\nX-Name: caf\xc3\xa9 \x80\r\n\r\n", 0,
		CHECK_STR(headers[1].value, "caf\xc3\xa9 \x80"););
	PARSE("POST /r/abc HTTP/1.1\r\nHost: api.shop.example:8443\r\n"
	      "Authorization: Bearer s3ss10n\r\nX-Flash-Token: ptok.1.2\r\nX-Device-Id: dev-42\r\n"
	      "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nok",
		0, CHECK_STR(host, "api.shop.example:8443");
		CHECK_STR(authorization, "Bearer s3ss10n"); CHECK_STR(flash_token, "ptok.1.2");
		CHECK_STR(device_id, "dev-42"); CHECK_STR(content_type, "text/plain");
		CHECK_STR(body, "ok"); CHECK_INT(n_headers, 6);
		CHECK_INT(seen, HTTP_SEEN_HOST | HTTP_SEEN_AUTHORIZATION | HTTP_SEEN_FLASH_TOKEN |
					HTTP_SEEN_DEVICE_ID | HTTP_SEEN_CONTENT_TYPE |
					HTTP_SEEN_CONTENT_LEN););
	/* RFC 9110 §5.1: field names are case-insensitive. */
	PARSE("POST /r HTTP/1.1\r\nhOsT: x\r\nX-FLASH-TOKEN: t\r\nx-device-id: d\r\n"
	      "AUTHORIZATION: a\r\nORIGIN: o\r\ncontent-TYPE: c\r\n"
	      "access-control-request-METHOD: m\r\ncontent-length: 0\r\n\r\n",
		0, CHECK_STR(host, "x");
		CHECK_STR(flash_token, "t"); CHECK_STR(device_id, "d");
		CHECK_STR(authorization, "a"); CHECK_STR(origin, "o"); CHECK_STR(content_type, "c");
		CHECK_STR(access_control_request_method, "m"); CHECK_INT(content_length, 0);
		CHECK_INT(total_len, 162););
	/* A challenge's solution (docs/api.md): captured as it comes, judged by the route. */
	PARSE("POST /r HTTP/1.1\r\nHost: x\r\nX-Flash-Token: p2.t\r\nX-Flash-Solution:  4711 \r\n"
	      "Content-Length: 0\r\n\r\n",
		0, CHECK_STR(flash_solution, "4711"); CHECK_STR(flash_token, "p2.t");
		CHECK_INT(seen, HTTP_SEEN_HOST | HTTP_SEEN_FLASH_TOKEN | HTTP_SEEN_FLASH_SOLUTION |
					HTTP_SEEN_CONTENT_LEN););
	PARSE("GET / HTTP/1.1\r\nHost: x\r\nX-Flash-Solutions: 1\r\n\r\n", 0,
		CHECK_INT(flash_solution.len, 0); CHECK_INT(seen, HTTP_SEEN_HOST););
	/* Look-alike names are ordinary headers, not captured. */
	PARSE("GET / HTTP/1.1\r\nHost: x\r\nHosts: y\r\nX-Flash-Tokens: t\r\nOrigin_: o\r\n"
	      "Content-Lengthy: 9\r\nHost-: z\r\n\r\n",
		0, CHECK_STR(host, "x");
		CHECK_INT(flash_token.len, 0); CHECK_INT(origin.len, 0);
		CHECK_INT(content_length, -1); CHECK_INT(n_headers, 6););
	/* RFC 9112 §3.2.2: absolute-form; the authority is the caller's to judge */
	PARSE("GET http://198.18.0.2/healthz HTTP/1.1\r\nHost: other\r\n\r\n", 0,
		CHECK_STR(target, "http://198.18.0.2/healthz"); CHECK_STR(authority, "198.18.0.2");
		CHECK_STR(path, "/healthz"); CHECK_STR(query, ""); CHECK_STR(host, "other"););
	PARSE("POST HTTP://Sale.Shop.Example:8080/api/v1/events/1/token?x=1&y=/?z HTTP/1.1\r\n"
	      "Host: sale.shop.example:8080\r\n\r\n",
		0, CHECK_INT(method, HTTP_M_POST);
		CHECK_STR(authority, "Sale.Shop.Example:8080");
		CHECK_STR(path, "/api/v1/events/1/token"); CHECK_STR(query, "x=1&y=/?z"););
	PARSE("GET http://x HTTP/1.1\r\nHost: x\r\n\r\n", 0, CHECK_STR(authority, "x");
		CHECK_STR(path, "/"); CHECK_STR(query, ""););
	PARSE("GET http://[::1]:80?q HTTP/1.1\r\nHost: x\r\n\r\n", 0,
		CHECK_STR(authority, "[::1]:80"); CHECK_STR(path, "/"); CHECK_STR(query, "q"););
	PARSE("GET /a HTTP/1.1\r\nHost: x\r\n\r\n", 0, CHECK_INT(authority.len, 0););
	PARSE("GET /old HTTP/1.0\r\nUser-Agent: ancient\r\n\r\n", 0, CHECK_INT(minor, 0);
		CHECK_INT(host.len, 0); CHECK_STR(headers[0].value, "ancient"););
	PARSE("GET / HTTP/1.0\r\nHost: a\r\n\r\n", 0, CHECK_STR(host, "a"););
	PARSE("GET / HTTP/1.1\r\nHost:\r\n\r\n", 0, CHECK_INT(host.len, 0);
		CHECK_INT(seen, HTTP_SEEN_HOST););
	PARSE("GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", 0, CHECK_STR(host, "[::1]:80"););
	PARSE("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 007\r\n\r\n1234567", 0,
		CHECK_INT(content_length, 7);
		CHECK_STR(body, "1234567"););
	PARSE("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 0,
		CHECK_INT(content_length, 0);
		CHECK_INT(body.len, 0););
	PARSE("POST / HTTP/1.1\r\nHost: x\r\nContent-Length:  3 \t\r\n\r\nabc", 0,
		CHECK_STR(body, "abc"););
	/* Pipelining: the bytes after the first request are left to the caller. */
	PARSE("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n", 0,
		CHECK_STR(path, "/a");
		CHECK_INT(total_len, 28););
	PARSE("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\n", 0,
		CHECK_STR(body, "abc");
		CHECK_INT(total_len, 51););
	/* Incomplete body: the header fields are already usable. */
	PARSE("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nabc", HTTP_INCOMPLETE,
		CHECK_INT(head_len, 48);
		CHECK_INT(content_length, 5); CHECK_STR(host, "x"););
	PARSE("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 65535\r\n\r\n", HTTP_INCOMPLETE,
		CHECK_INT(content_length, 65535););
}

static void
test_find_header(void)
{
	PARSE("GET / HTTP/1.1\r\nHost: x\r\nAccept: */*\r\nX-Trace: 1\r\nx-trace: 2\r\n\r\n", 0, {
		const struct http_str *v = http_find_header(&req, "accept", 6);

		tap_ok(v != NULL && str_is(*v, "*/*"), "find_header: lowercase query finds Accept");
		v = http_find_header(&req, "X-TRACE", 7);
		tap_ok(v != NULL && str_is(*v, "1"), "find_header: first of repeated fields");
		tap_ok(http_find_header(&req, "Accep", 5) == NULL, "find_header: no prefix match");
		tap_ok(http_find_header(&req, "Cookie", 6) == NULL, "find_header: absent -> NULL");
		v = http_find_header(&req, "HOST", 4);
		tap_ok(v != NULL && v->p == req.host.p, "find_header: Host is in headers[] too");
		tap_ok(!(req.seen & HTTP_SEEN_CONNECTION), "no Connection field: not seen");
	});
	/* Connection may come on several lines (a list, RFC 9110 §7.6.1): noted, never a 400,
	 * each line in headers[] (kept connections read it only when seen). */
	PARSE("GET / HTTP/1.1\r\nHost: x\r\nconnection: keep-alive\r\nCONNECTION: close\r\n\r\n", 0, {
		tap_ok(req.seen & HTTP_SEEN_CONNECTION, "Connection on two lines: seen");
		tap_eq_int(req.n_headers, 3, "  both lines in headers[]");
	});
}

/* X-Forwarded-For and Forwarded: the addresses, rightmost first, or why they are refused. */
struct fwd_case {
	const char *fields; /* header lines */
	bool forwarded;
	int n;              /* http_forwarded_for()'s result */
	const char *want;   /* the addresses, rightmost first, "-" for none, space separated */
};

static const struct fwd_case fwd_cases[] = {
	{"X-Forwarded-For: 198.18.5.1\r\n", false, 1, "198.18.5.1"},
	{"X-Forwarded-For: 198.18.5.1, 198.18.0.50\r\n", false, 2, "198.18.0.50 198.18.5.1"},
	{"X-Forwarded-For:1.2.3.4 ,\t5.6.7.8\r\n", false, 2, "5.6.7.8 1.2.3.4"},
	{"X-Forwarded-For: 1.1.1.1\r\nAccept: x\r\nx-forwarded-for: 2.2.2.2, 3.3.3.3\r\n", false, 3,
		"3.3.3.3 2.2.2.2 1.1.1.1"},
	{"X-Forwarded-For: 2001:db8::1, ::ffff:1.2.3.4\r\n", false, 2, "1.2.3.4 2001:db8::1"},
	{"Accept: x\r\n", false, 0, ""},
	{"X-Forwarded-For: 1.2.3.4\r\n", true, 0, ""},
	{"X-Forwarded-For: 1.2.3.400\r\n", false, -1, NULL},
	{"X-Forwarded-For: 1.2.3.4,\r\n", false, -1, NULL},
	{"X-Forwarded-For: ,1.2.3.4\r\n", false, -1, NULL},
	{"X-Forwarded-For:\r\n", false, -1, NULL},
	{"X-Forwarded-For: 1.2.3.4 5.6.7.8\r\n", false, -1, NULL},
	{"X-Forwarded-For: 1.2.3.4:80\r\n", false, -1, NULL},
	{"X-Forwarded-For: [::1]\r\n", false, -1, NULL},
	{"X-Forwarded-For: unknown\r\n", false, -1, NULL},
	{"X-Forwarded-For: 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1\r\n"
	 "X-Forwarded-For: 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1\r\n",
		false, 16, "1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 "
			   "1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1 1.1.1.1"},
	{"X-Forwarded-For: 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1\r\n"
	 "X-Forwarded-For: 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1, 1.1.1.1\r\n"
	 "X-Forwarded-For: 2.2.2.2\r\n",
		false, -1, NULL},
	{"Forwarded: for=198.18.5.1\r\n", true, 1, "198.18.5.1"},
	{"Forwarded: For=\"[2001:db8:cafe::17]:4711\"\r\n", true, 1, "2001:db8:cafe::17"},
	{"Forwarded: for=192.0.2.43, for=198.51.100.17;by=203.0.113.60;proto=http;host=example.com"
	 "\r\n",
		true, 2, "198.51.100.17 192.0.2.43"},
	{"Forwarded: for=\"_gazonk\"\r\n", true, 1, "-"},
	{"Forwarded: For=unknown;proto=https, for=1.2.3.4\r\n", true, 2, "1.2.3.4 -"},
	{"Forwarded: proto=https\r\n", true, 1, "-"},
	{"Forwarded: for=\"1.2.3.4:_port\" ; proto=\"a,b\"\r\n", true, 1, "1.2.3.4"},
	{"Forwarded: for=\"[::ffff:198.18.5.9]\"\r\n", true, 1, "198.18.5.9"},
	{"Forwarded: for=\"[::FFFF:1.2.3.4]:80\", for=5.6.7.8\r\n", true, 2, "5.6.7.8 1.2.3.4"},
	{"Forwarded: for=\"[1.2.3.4]\"\r\n", true, -1, NULL},
	{"Forwarded: for=2001:db8::1\r\n", true, -1, NULL},
	{"Forwarded: for=\"[2001:db8::1\"\r\n", true, -1, NULL},
	{"Forwarded: for=\"1.2.3.4:123456\"\r\n", true, -1, NULL},
	{"Forwarded: for=1.2.3.4;for=5.6.7.8\r\n", true, -1, NULL},
	{"Forwarded: for=\"1.2.3.4\r\n", true, -1, NULL},
	{"Forwarded: for=\"1.2\\.3.4\"\r\n", true, -1, NULL},
	{"Forwarded: for\r\n", true, -1, NULL},
	{"Forwarded: for=\r\n", true, -1, NULL},
	{"Forwarded: for=1.2.3.4 by=x\r\n", true, -1, NULL},
	{"Forwarded: for=1.2.3.4,\r\n", true, -1, NULL},
};

static void
test_forwarded_for(void)
{
	for (size_t i = 0; i < sizeof(fwd_cases) / sizeof(fwd_cases[0]); i++) {
		const struct fwd_case *c = &fwd_cases[i];
		char in[640], got[512] = "";
		int n = snprintf(in, sizeof(in), "GET / HTTP/1.1\r\nHost: x\r\n%s\r\n", c->fields);
		struct http_request req;
		struct guard_buf g;
		struct http_addr a[HTTP_FWD_MAX];
		const char *why = NULL;
		int rc = parse_guarded(in, (size_t)n, &req, &g);
		int k = rc == 0 ? http_forwarded_for(&req, c->forwarded, a, HTTP_FWD_MAX, &why) : -9;
		size_t len = 0;

		for (int j = 0; j < k; j++) {
			char t[64] = "-";

			if (a[j].family == 4)
				inet_ntop(AF_INET, a[j].a, t, sizeof(t));
			else if (a[j].family == 6)
				inet_ntop(AF_INET6, a[j].a, t, sizeof(t));
			len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s", j ? " " : "", t);
		}
		tap_ok(k == c->n && (k < 0 ? why != NULL : strcmp(got, c->want) == 0),
			"%s %s: %d \"%s\" %s", c->forwarded ? "Forwarded" : "XFF",
			show(c->fields, strlen(c->fields)), k, got, why ? why : "");
		guard_free(&g);
	}
}

struct reject_case {
	const char *in;
	size_t len;
	int want;
};

#define R(want, lit)                       \
	{                                  \
		lit, sizeof(lit) - 1, want \
	}
#define H "GET / HTTP/1.1\r\nHost: x\r\n"

static const struct reject_case rejects[] = {
	/* request-line: method */
	R(501, "get / HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(501, "BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(501, "GETS / HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(501, "BREW "), /* certain before the line ends */
	R(400, "G(T / HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET\t/ HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET\r\n\r\n"),
	R(400, " GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "\r"),
	R(400, "\x00GET / HTTP/1.1\r\n\r\n"),
	/* request-line: spaces and request-target */
	R(400, "GET  / HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET /  HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET / HTTP/1.1 \r\nHost: x\r\n\r\n"),
	R(400, "GET /\r\n\r\n"),
	R(400, "GET /\n"),
	/* absolute-form (RFC 9112 §3.2.2): only the http scheme, a host, no userinfo */
	R(400, "GET https://x/ HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET ftp://x/ HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET http:/x/ HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET http:// HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET http:///a HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET http://:80/a HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET http://u@x/ HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET http://x\"y/ HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET http://x/a#f HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET http://x/a\x01 HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET http://x/\r\n\r\n"),
	R(400, "GET x/ HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "CONNECT x:443 HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET * HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "OPTIONS *x HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET /a#frag HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET /a\x01"
	       "b HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET /a\x00"
	       "b HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET /\x80 HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET /\x7f HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET /a\tb HTTP/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET /0123456789abcdef0123456789\x01 HTTP/1.1\r\n"),
	R(400, "GET /0123456789abcdef0123456789# HTTP/1.1\r\n"),
	/* request-line: HTTP-version */
	R(505, "GET / HTTP/2.0\r\nHost: x\r\n\r\n"),
	R(505, "GET / HTTP/1.2\r\nHost: x\r\n\r\n"),
	R(505, "GET / HTTP/0.9\r\nHost: x\r\n\r\n"),
	R(505, "GET / HTTP/3.0\r\n"),
	R(400, "GET / HTTP/1.10\r\nHost: x\r\n\r\n"),
	R(400, "GET / HTTP/1\r\nHost: x\r\n\r\n"),
	R(400, "GET / HTTP/1.\r\nHost: x\r\n\r\n"),
	R(400, "GET / HTTP/a.1\r\nHost: x\r\n\r\n"),
	R(400, "GET / http/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET / HTTX/1.1\r\nHost: x\r\n\r\n"),
	R(400, "GET / HTTP/1.1\nHost: x\r\n\r\n"),
	R(400, "GET / HTTP/1.1\n"),
	R(400, "GET / HTTP/1.1\rHost: x\r\n\r\n"),
	R(400, "GET / HTTP/1.1\r\r\n"),
	/* field lines */
	R(400, "GET / HTTP/1.1\r\nHost : x\r\n\r\n"),
	R(400, "GET / HTTP/1.1\r\nHost\t: x\r\n\r\n"),
	R(400, H "X-A: a\r\n  folded\r\n\r\n"),
	R(400, H "X-A: a\r\n\tfolded\r\n\r\n"),
	R(400, "GET / HTTP/1.1\r\n Host: x\r\n\r\n"),
	R(400, H ": x\r\n\r\n"),
	R(400, H "X A: x\r\n\r\n"),
	R(400, H "X-A\r\n\r\n"),
	R(400, H "X-A x\r\n\r\n"),
	R(400, H "X-\x80: x\r\n\r\n"),
	R(400, H "X-(A): x\r\n\r\n"),
	R(400, H "X-A@b: x\r\n\r\n"),
	R(400, H "X-A: a\x00"
		 "b\r\n\r\n"),
	R(400, H "X-A: a\x01"
		 "b\r\n\r\n"),
	R(400, H "X-A: a\x1f"
		 "b\r\n\r\n"),
	R(400, H "X-A: a\x7f"
		 "b\r\n\r\n"),
	R(400, H "X-A: 0123456789abcdef0123456789abcdef\x00\r\n\r\n"),
	R(400, H "X-A: a\nX-B: b\r\n\r\n"),
	R(400, H "X-A: a\n"),
	R(400, H "X-A: a\rb\r\n\r\n"),
	R(400, H "X-A: a\r\r\n\r\n"),
	R(400, H "\n"),
	R(400, H "\rX"),
	R(400, H "X-A\n: a\r\n\r\n"),
	/* Host (RFC 9112 §3.2) */
	R(400, "GET / HTTP/1.1\r\n\r\n"),
	R(400, "GET / HTTP/1.1\r\nX-Host: x\r\n\r\n"),
	R(400, "GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"),
	R(400, "GET / HTTP/1.1\r\nHost: x\r\nhost: x\r\n\r\n"),
	R(400, "GET / HTTP/1.0\r\nHost: x\r\nHost: x\r\n\r\n"),
	R(400, "GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n"), /* certain before the end */
	R(400, "GET / HTTP/1.1\r\nHost: a b\r\n\r\n"),
	R(400, "GET / HTTP/1.1\r\nHost: x/y\r\n\r\n"),
	R(400, "GET / HTTP/1.1\r\nHost: u@x\r\n\r\n"),
	R(400, "GET / HTTP/1.1\r\nHost: x\xc3\xa9\r\n\r\n"),
	/* other singleton fields */
	R(400, H "X-Flash-Token: a\r\nX-Flash-Token: b\r\n\r\n"),
	R(400, H "Authorization: a\r\nauthorization: a\r\n\r\n"),
	R(400, H "Origin: a\r\nOrigin: b\r\n\r\n"),
	R(400, H "X-Device-Id: a\r\nX-Device-Id: b\r\n\r\n"),
	R(400, H "X-Flash-Solution: 1\r\nx-flash-solution: 1\r\n\r\n"),
	/* Content-Length (RFC 9110 §8.6, RFC 9112 §6.3) */
	R(400, H "Content-Length: abc\r\n\r\n"),
	R(400, H "Content-Length: -5\r\n\r\n"),
	R(400, H "Content-Length: +5\r\n\r\n"),
	R(400, H "Content-Length: 5, 5\r\n\r\nhello"),
	R(400, H "Content-Length: 5,5\r\n\r\nhello"),
	R(400, H "Content-Length: 5 5\r\n\r\nhello"),
	R(400, H "Content-Length: \r\n\r\n"),
	R(400, H "Content-Length: 0x10\r\n\r\n"),
	R(400, H "Content-Length: 1.5\r\n\r\n"),
	R(400, H "Content-Length: 1234567890\r\n\r\n"),
	R(400, H "Content-Length: 00000000000\r\n\r\n"),
	R(400, H "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello"),
	R(400, H "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"),
	R(400, H "Content-Length: 65536\r\n\r\n"),
	R(400, H "Content-Length: 999999999\r\n\r\n"),
	R(400, H "Content-Length: 100000\r\n"), /* certain before the end */
	/* Transfer-Encoding (RFC 9112 §6.1) */
	R(501, H "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
	R(501, H "Transfer-Encoding: identity\r\n\r\n"),
	R(501, H "transfer-ENCODING: chunked\r\nContent-Length: 5\r\n\r\nhello"),
	R(501, H "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello"),
	R(501, H "Transfer-Encoding: chunked\r\n"), /* certain before the end */
	R(505, "GET / HTTP/2.0\r\n"),
};

static void
test_rejects(void)
{
	size_t i;

	for (i = 0; i < sizeof(rejects) / sizeof(rejects[0]); i++) {
		const struct reject_case *c = &rejects[i];
		struct http_request req;
		struct guard_buf g;
		int rc = parse_guarded(c->in, c->len, &req, &g);
		const char *name = show(c->in, c->len);

		if (tap_eq_int(rc, c->want, name))
			tap_ok(req.error != NULL && req.error[0] != '\0', "%s: reason \"%s\"", name,
				req.error ? req.error : "(null)");
		else
			tap_diag("reason: %s", req.error ? req.error : "(null)");
		guard_free(&g);
	}
}

/* Builds test inputs that are too long to write as literals. */
struct builder {
	char buf[8192];
	size_t len;
};

static void
b_add(struct builder *b, const char *s)
{
	size_t n = strlen(s);

	if (b->len + n <= sizeof(b->buf)) {
		memcpy(b->buf + b->len, s, n);
		b->len += n;
	}
}

static void
b_fill(struct builder *b, char c, size_t n)
{
	if (b->len + n <= sizeof(b->buf)) {
		memset(b->buf + b->len, c, n);
		b->len += n;
	}
}

static int
parse_built(const struct builder *b, struct http_request *req, struct guard_buf *g)
{
	return parse_guarded(b->buf, b->len, req, g);
}

static void
expect_built(const struct builder *b, int want, const char *what)
{
	struct http_request req;
	struct guard_buf g;
	int rc = parse_built(b, &req, &g);

	if (tap_eq_int(rc, want, what) && want > 0)
		tap_ok(req.error != NULL && req.error[0] != '\0', "%s: reason \"%s\"", what,
			req.error);
	guard_free(&g);
}

/* RFC 9110 §5.6.2, spelled out independently of the parser's tables. */
static bool
is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/*
 * Parses before, then text with byte c at place at, then after, the input ending at a guard
 * page (g: guard_free() it). Returns what http_parse_request() did.
 */
static int
parse_with_byte(const char *before, const char *text, unsigned at, unsigned c, const char *after,
	struct http_request *req, struct guard_buf *g)
{
	struct builder b = {.len = 0};
	size_t n = strlen(text);

	b_add(&b, before);
	memcpy(b.buf + b.len, text, n);
	b.buf[b.len + at] = (char)c;
	b.len += n;
	b_add(&b, after);
	return parse_built(&b, req, g);
}

/*
 * Every byte value at every place of a field-name: of a 24-byte name followed by another
 * field (the parser's 16-byte steps see all of it), of a 17-byte name in the last field
 * (one step, then byte by byte) and of a 4-byte one there, where few bytes remain. Each
 * input ends at a guard page. A tchar belongs to the name; ':' ends it early (the rest
 * becomes the value); any other byte is a 400.
 */
static void
test_name_bytes(void)
{
	static const struct {
		const char *name, *after;
	} cases[] = {
		{"X-Abcdefghijklmnopqrstuv", ": v\r\nAccept: */*\r\n\r\n"},
		{"X-Abcdefghijklmno", ": v\r\n\r\n"},
		{"Xabc", ": v\r\n\r\n"},
	};
	unsigned wrong = 0, tried = 0;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t nlen = strlen(cases[k].name);

		for (unsigned at = 0; at < nlen; at++) {
			for (unsigned c = 0; c < 256; c++) {
				struct http_request req;
				struct guard_buf g;
				int rc = parse_with_byte("GET / HTTP/1.1\r\nHost: a\r\n",
					cases[k].name, at, c, cases[k].after, &req, &g);
				bool ok;

				if (is_tchar((unsigned char)c))
					ok = rc == 0 && req.n_headers >= 2 &&
					     req.headers[1].name.len == nlen;
				else if (c == ':' && at > 0)
					ok = rc == 0 && req.n_headers >= 2 &&
					     req.headers[1].name.len == at;
				else
					ok = rc == 400;
				wrong += !ok;
				tried++;
				guard_free(&g);
			}
		}
	}
	tap_ok(wrong == 0,
		"every byte at every place of three header names: tchar, early colon or 400 (%u "
		"of %u wrong)",
		wrong, tried);
}

/* RFC 3986 §3.2.2-3.2.3 (reg-name, IP-literal, ":" port), spelled out independently. */
static bool
is_host_byte(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c != '\0' && strchr("-._~!$&'()*+,;=%:[]", c) != NULL);
}

/*
 * Every byte value at every place of a Host value (SP or HTAB at its ends is OWS, trimmed):
 * of a 34-byte host followed by another field (16-byte steps and a masked last step), of a
 * 20-byte one in the last field (one step, the rest byte by byte, the input ending at a guard
 * page), and of a 10-byte one before another field (one masked step). A host byte is accepted;
 * any other is a 400.
 */
static void
test_host_bytes(void)
{
	static const struct {
		const char *host, *after;
	} cases[] = {
		{"h0123456789abcdefghij.example:8080", "\r\nAccept: */*\r\n\r\n"},
		{"sale.shop.example:80", "\r\n\r\n"},
		{"198.18.0.2", "\r\nAccept: */*\r\n\r\n"},
	};
	unsigned wrong = 0, tried = 0;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t hlen = strlen(cases[k].host);

		for (unsigned at = 0; at < hlen; at++) {
			for (unsigned c = 0; c < 256; c++) {
				struct http_request req;
				struct guard_buf g;
				int rc = parse_with_byte("GET / HTTP/1.1\r\nHost: ", cases[k].host,
					at, c, cases[k].after, &req, &g);
				bool ows = (c == ' ' || c == '\t') && (at == 0 || at + 1 == hlen);
				bool ok = ows ? rc == 0 && req.host.len == hlen - 1
					: is_host_byte((unsigned char)c)
						? rc == 0 && req.host.len == hlen
						: rc == 400;

				wrong += !ok;
				tried++;
				guard_free(&g);
			}
		}
	}
	tap_ok(wrong == 0,
		"every byte at every place of three Host values: a host byte, trimmed OWS or 400 "
		"(%u of %u wrong)",
		wrong, tried);
}

static void
test_limits(void)
{
	struct builder b;
	struct http_request req;
	struct guard_buf g;
	char line[64];
	int i, rc;

	/* request-target: HTTP_MAX_TARGET is the longest accepted */
	b.len = 0;
	b_add(&b, "GET /");
	b_fill(&b, 'a', HTTP_MAX_TARGET - 1);
	b_add(&b, " HTTP/1.1\r\nHost: x\r\n\r\n");
	rc = parse_built(&b, &req, &g);
	tap_eq_int(rc, 0, "target of exactly HTTP_MAX_TARGET bytes");
	tap_eq_int(rc == 0 ? req.target.len : 0, HTTP_MAX_TARGET, "target length kept whole");
	guard_free(&g);

	b.len = 0;
	b_add(&b, "GET /");
	b_fill(&b, 'a', HTTP_MAX_TARGET);
	b_add(&b, " HTTP/1.1\r\nHost: x\r\n\r\n");
	expect_built(&b, 414, "target of HTTP_MAX_TARGET + 1 bytes");
	b.len = 0;
	b_add(&b, "GET /?");
	b_fill(&b, 'a', HTTP_MAX_TARGET + 300);
	expect_built(&b, 414, "long target, no SP yet: 414 before the line ends");
	b.len = 0;
	b_add(&b, "GET /");
	b_fill(&b, 'a', HTTP_MAX_TARGET - 1);
	expect_built(&b, HTTP_INCOMPLETE, "target of HTTP_MAX_TARGET bytes, no SP yet");

	/* header fields: HTTP_MAX_HEADERS is the most accepted */
	b.len = 0;
	b_add(&b, "GET / HTTP/1.1\r\nHost: x\r\n");
	for (i = 1; i < HTTP_MAX_HEADERS; i++) {
		snprintf(line, sizeof(line), "X-H%d: v%d\r\n", i, i);
		b_add(&b, line);
	}
	b_add(&b, "\r\n");
	rc = parse_built(&b, &req, &g);
	tap_eq_int(rc, 0, "HTTP_MAX_HEADERS fields");
	tap_eq_int(rc == 0 ? req.n_headers : 0, HTTP_MAX_HEADERS, "all fields recorded");
	tap_ok(rc == 0 && str_is(req.headers[HTTP_MAX_HEADERS - 1].value, "v23"),
		"last field value");
	guard_free(&g);
	b.len -= 2;
	b_add(&b, "X-One-Too-Many: 1\r\n\r\n");
	expect_built(&b, 431, "HTTP_MAX_HEADERS + 1 fields");
	b.len -= 2;
	expect_built(&b, 431, "HTTP_MAX_HEADERS + 1 fields, section not finished");
	b.len -= 19;
	b_add(&b, "X");
	expect_built(&b, 431, "first byte of field HTTP_MAX_HEADERS + 1");
	b.len -= 1;
	expect_built(&b, HTTP_INCOMPLETE, "HTTP_MAX_HEADERS fields, no empty line yet");

	/* header section: HTTP_MAX_HEAD bytes is the most accepted */
	b.len = 0;
	b_add(&b, "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ");
	b_fill(&b, 'p', HTTP_MAX_HEAD - b.len - 4);
	b_add(&b, "\r\n\r\n");
	rc = parse_built(&b, &req, &g);
	tap_eq_int(rc, 0, "header section of exactly HTTP_MAX_HEAD bytes");
	tap_eq_int(rc == 0 ? req.head_len : 0, HTTP_MAX_HEAD, "head_len is HTTP_MAX_HEAD");
	guard_free(&g);
	b.len = 0;
	b_add(&b, "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ");
	b_fill(&b, 'p', HTTP_MAX_HEAD - b.len - 3);
	b_add(&b, "\r\n\r\n");
	expect_built(&b, 431, "header section of HTTP_MAX_HEAD + 1 bytes");
	b.len -= 1;
	expect_built(&b, 431, "HTTP_MAX_HEAD bytes and no end in sight");
	b.len -= 1;
	expect_built(&b, HTTP_INCOMPLETE, "HTTP_MAX_HEAD - 1 bytes, no end yet");
	b.len = 0;
	b_add(&b, "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ");
	b_fill(&b, 'p', 6000);
	expect_built(&b, 431, "6 kB field value");
	b.len = 0;
	b_add(&b, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n");
	b_fill(&b, 'b', 5000);
	rc = parse_built(&b, &req, &g);
	tap_eq_int(rc, 0, "a body may go past HTTP_MAX_HEAD");
	tap_eq_int(rc == 0 ? req.body.len : 0, 5000, "body length");
	guard_free(&g);
}

/* Every strict prefix of a valid request asks for more bytes; the whole parses. */
static const char *const prefix_cases[] = {
	"GET / HTTP/1.0\r\n\r\n",
	"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
	"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
	"DELETE /a?b=c HTTP/1.1\r\nHost: h:1\r\nX-A: \t v \t \r\nX-B:\r\n\r\n",
	"POST /api/v1/events/7/token HTTP/1.1\r\nHost: shop.example\r\n"
	"Authorization: Bearer 0123456789abcdef0123456789abcdef\r\n"
	"Content-Type: application/json\r\n"
	"Content-Length: 11\r\nX-Device-Id: d-1\r\n\r\n{\"qty\": 1}\n",
	"PATCH /x HTTP/1.1\r\nHost: x\r\nX-Name: caf\xc3\xa9\r\nContent-Length: 0\r\n\r\n",
};

static void
test_prefixes(void)
{
	size_t i, k;

	for (i = 0; i < sizeof(prefix_cases) / sizeof(prefix_cases[0]); i++) {
		const char *in = prefix_cases[i];
		size_t n = strlen(in), bad = 0;
		struct http_request req;
		struct guard_buf g;
		int rc;

		for (k = 0; k < n; k++) {
			rc = parse_guarded(in, k, &req, &g);
			if (rc != HTTP_INCOMPLETE) {
				if (bad++ == 0)
					tap_diag("prefix %zu of %s -> %d (%s)", k, show(in, n), rc,
						req.error ? req.error : "");
			}
			guard_free(&g);
		}
		tap_ok(bad == 0, "all %zu strict prefixes incomplete: %s", n, show(in, n));
		rc = parse_guarded(in, n, &req, &g);
		tap_ok(rc == 0 && req.total_len == n, "whole request parses: %s", show(in, n));
		guard_free(&g);
	}
}

/* Deterministic xorshift64* (tests/lib/rng.h): the same seed gives the same mutations on
 * every run. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t
rng(void)
{
	return rng_xorshift64s_u32(&rng_state);
}

static const char *const seeds[] = {
	"GET / HTTP/1.0\r\n\r\n",
	"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
	"HEAD /a HTTP/1.1\r\nHost: h\r\n\r\n",
	"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
	"OPTIONS /api/v1/events/1 HTTP/1.1\r\nHost: h\r\nOrigin: https://shop.example\r\n"
	"Access-Control-Request-Method: POST\r\n\r\n",
	"GET /search?q=1&r=%20 HTTP/1.1\r\nHost: x\r\n\r\n",
	"POST /api/v1/events/7/token HTTP/1.1\r\nHost: shop\r\nContent-Length: 5\r\n"
	"Content-Type: application/json\r\n\r\nhello",
	"POST /r/abc HTTP/1.1\r\nHost: api.shop.example:8443\r\nAuthorization: Bearer s3ss10n\r\n"
	"X-Flash-Token: ptok.1.2\r\nX-Device-Id: dev-42\r\nContent-Type: text/plain\r\n"
	"Content-Length: 2\r\n\r\nok",
	"GET / HTTP/1.1\r\nHost:x\r\nX-A: \t v \t \r\nX-B:\r\nX-D: a\tb c\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nX-Long: 0123456789abcdef\t0123456789abcdef0123\xc3\xa9\r\n"
	"\r\n",
	"PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc",
	"DELETE /a?b=c HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
	"PATCH /x HTTP/1.1\r\nhOsT: x\r\nX-FLASH-TOKEN: t\r\ncontent-length: 1\r\n\r\n!",
	"GET /old HTTP/1.0\r\nUser-Agent: ancient\r\n\r\n",
	"TRACE /t HTTP/1.1\r\nHost: t\r\nMax-Forwards: 0\r\n\r\n",
	"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /api/v1/events/42/result HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: Mozilla/5.0\r\n"
	"Accept: application/json\r\nAccept-Language: en-US,en;q=0.9\r\nX-Flash-Token: "
	"v1.42.1001.3.abcdef0123456789\r\nX-Device-Id: 0f3c9a\r\nCookie: s=1\r\n\r\n",
	"POST /r HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n",
	"CONNECT /c HTTP/1.1\r\nHost: c\r\n\r\n",
	"GET /0123456789abcdef0123456789abcdef?0123456789abcdef HTTP/1.1\r\nHost: x\r\n\r\n",
};

/* Bytes that sit on the parser's decision points; mutations favour them. */
static const unsigned char interesting[] = {'\r', '\n', ' ', '\t', ':', '\0', '#', '?', '/', '*',
	0x7f, 0x80, 0xff, '0', '9', ',', '-', 'H'};

#define MUT_MAX 600

static unsigned char
random_byte(void)
{
	uint32_t r = rng();

	if (r & 1)
		return interesting[(r >> 1) % sizeof(interesting)];
	return (unsigned char)(r >> 8);
}

static void
mutate(unsigned char *b, size_t *n)
{
	uint32_t r = rng();
	size_t pos = *n ? rng() % *n : 0;

	switch (r % 5) {
	case 0: /* overwrite a byte */
		if (*n)
			b[pos] = random_byte();
		break;
	case 1: /* flip a bit */
		if (*n)
			b[pos] ^= (unsigned char)(1u << (rng() % 8));
		break;
	case 2: /* insert a byte */
		if (*n < MUT_MAX) {
			memmove(b + pos + 1, b + pos, *n - pos);
			b[pos] = random_byte();
			(*n)++;
		}
		break;
	case 3: /* delete a byte */
		if (*n) {
			memmove(b + pos, b + pos + 1, *n - pos - 1);
			(*n)--;
		}
		break;
	default: /* truncate */
		*n = pos;
		break;
	}
}

static bool
inside(struct http_str s, const char *lo, const char *hi)
{
	return s.p != NULL && s.p >= lo && s.p + s.len <= hi;
}

static bool
inside_or_absent(struct http_str s, const char *lo, const char *hi)
{
	return s.len == 0 || inside(s, lo, hi);
}

static bool
has_ows_edge(struct http_str s)
{
	return s.len > 0 &&
	       (s.p[0] == ' ' || s.p[0] == '\t' || s.p[s.len - 1] == ' ' || s.p[s.len - 1] == '\t');
}

/* Checks what a caller relies on after a 0 result; returns a reason or NULL. */
static const char *
check_accepted(const struct http_request *req, const char *buf, size_t len)
{
	const char *end = buf + req->total_len;
	uint16_t i;

	if (req->total_len > len || req->head_len > req->total_len || req->head_len < 18)
		return "lengths";
	if (req->minor > 1 || (unsigned int)req->method > HTTP_M_TRACE)
		return "method or version";
	if (!inside(req->target, buf, end) || !inside_or_absent(req->path, buf, end) ||
		!inside_or_absent(req->query, buf, end))
		return "target outside buffer";
	if (req->target.len > HTTP_MAX_TARGET)
		return "target too long";
	if (str_is(req->target, "*")) {
		if (req->method != HTTP_M_OPTIONS || req->path.len || req->query.len)
			return "asterisk-form";
	} else if (req->authority.len != 0) {
		/* absolute-form: "http://" authority path [ "?" query ], all inside the target */
		if (req->authority.p != req->target.p + 7 || !inside(req->authority, buf, end) ||
			strncasecmp(req->target.p, "http://", 7) != 0 || req->path.len == 0 ||
			req->path.p[0] != '/' ||
			(req->path.p != req->authority.p + req->authority.len &&
				!(req->path.len == 1 && !inside(req->path, buf, end))))
			return "absolute-form";
	} else if (req->path.len == 0 || req->path.p != req->target.p || req->path.p[0] != '/' ||
		   memchr(req->path.p, '?', req->path.len) != NULL) {
		return "path not origin-form";
	} else if (req->path.len < req->target.len &&
		   (req->path.len + 1 + req->query.len != req->target.len ||
			   req->query.p != req->path.p + req->path.len + 1)) {
		return "query is not the rest of the target";
	} else if (req->path.len == req->target.len && req->query.len != 0) {
		return "query without '?'";
	}
	if (req->n_headers > HTTP_MAX_HEADERS)
		return "n_headers";
	for (i = 0; i < req->n_headers; i++) {
		const struct http_header *h = &req->headers[i];

		if (h->name.len == 0 || !inside(h->name, buf, end) ||
			!inside_or_absent(h->value, buf, end))
			return "header outside buffer";
		if (memchr(h->name.p, ':', h->name.len) || memchr(h->value.p, '\r', h->value.len) ||
			memchr(h->value.p, '\n', h->value.len) || has_ows_edge(h->value))
			return "header contents";
	}
	if (!inside_or_absent(req->host, buf, end) ||
		!inside_or_absent(req->flash_token, buf, end) ||
		!inside_or_absent(req->authorization, buf, end) ||
		!inside_or_absent(req->device_id, buf, end) ||
		!inside_or_absent(req->flash_solution, buf, end))
		return "well-known header outside buffer";
	if (req->minor == 1 && !(req->seen & HTTP_SEEN_HOST))
		return "HTTP/1.1 without Host";
	if (req->content_length < 0 ? req->body.len != 0 : req->body.len != req->content_length)
		return "body length";
	if (req->body.len && (req->body.p != buf + req->head_len || !inside(req->body, buf, end)))
		return "body position";
	if (req->head_len + req->body.len != req->total_len)
		return "total_len";
	return NULL;
}

static bool
allowed_result(int rc)
{
	return rc == 0 || rc == HTTP_INCOMPLETE || rc == 400 || rc == 414 || rc == 431 ||
	       rc == 501 || rc == 505;
}

/* Where an input of n bytes goes so that its last byte touches the guard page. */
static char *
guard_slot(struct guard_buf *g, size_t n)
{
	return g->map + g->map_len - (size_t)sysconf(_SC_PAGESIZE) - n;
}

static void
test_mutations(void)
{
	enum { ROUNDS = 300000 };
	static unsigned char work[MUT_MAX + 64];
	unsigned long bad_result = 0, bad_accept = 0, bad_ext = 0, bad_prefix = 0, no_error = 0;
	unsigned long accepted = 0, errors = 0, incomplete = 0;
	struct guard_buf g;
	char zero[2 * MUT_MAX] = {0};
	long r;

	if (guard_place(&g, zero, sizeof(zero)) == NULL) {
		tap_ok(0, "mutation test: guard_place");
		return;
	}
	for (r = 0; r < ROUNDS; r++) {
		const char *seed = seeds[(size_t)r % (sizeof(seeds) / sizeof(seeds[0]))];
		size_t n = strlen(seed), k, extra;
		struct http_request req, req2;
		const char *why;
		char *buf;
		int rc, rc2, m, rounds = 1 + (int)(rng() % 4);

		memcpy(work, seed, n);
		for (m = 0; m < rounds; m++)
			mutate(work, &n);
		buf = guard_slot(&g, n);
		memcpy(buf, work, n);
		rc = http_parse_request(buf, n, &req);
		if (!allowed_result(rc)) {
			if (bad_result++ == 0)
				tap_diag("result %d for %s", rc, show((char *)work, n));
			continue;
		}
		if (rc == 0) {
			accepted++;
			why = check_accepted(&req, buf, n);
			if (why != NULL && bad_accept++ == 0)
				tap_diag("accepted %s: %s", show((char *)work, n), why);
		} else if (rc == HTTP_INCOMPLETE) {
			incomplete++;
		} else {
			errors++;
			if ((req.error == NULL || req.error[0] == '\0') && no_error++ == 0)
				tap_diag("status %d, no reason: %s", rc, show((char *)work, n));
		}

		/* Every 4th round: more bytes never change an answer that was not
		 * "incomplete" (an error was certain, or the request had ended). */
		if (rc != HTTP_INCOMPLETE && (r & 3) == 0) {
			extra = 1 + rng() % 40;
			buf = guard_slot(&g, n + extra);
			memcpy(buf, work, n);
			for (k = 0; k < extra; k++)
				buf[n + k] = (char)random_byte();
			rc2 = http_parse_request(buf, n + extra, &req2);
			if ((rc2 != rc || (rc == 0 && req2.total_len != req.total_len)) &&
				bad_ext++ == 0)
				tap_diag(
					"%s -> %d, extended -> %d", show((char *)work, n), rc, rc2);
		}
		/* Every 4th round: a prefix answers "incomplete" or what the whole answered
		 * (0 only once the whole request is in). */
		if (n > 0 && (r & 3) == 1) {
			k = rng() % n;
			buf = guard_slot(&g, k);
			memcpy(buf, work, k);
			rc2 = http_parse_request(buf, k, &req2);
			if (rc == 0 && k >= req.total_len
					? rc2 != 0
					: (rc2 != HTTP_INCOMPLETE && (rc2 != rc || rc == 0))) {
				if (bad_prefix++ == 0)
					tap_diag("%s -> %d, prefix %zu -> %d",
						show((char *)work, n), rc, k, rc2);
			}
		}
	}
	guard_free(&g);
	tap_diag("%d mutated inputs: %lu accepted, %lu incomplete, %lu errors", ROUNDS, accepted,
		incomplete, errors);
	tap_ok(bad_result == 0, "mutations: only 0, HTTP_INCOMPLETE or a known status (%lu bad)",
		bad_result);
	tap_ok(bad_accept == 0, "mutations: accepted requests are consistent (%lu bad)",
		bad_accept);
	tap_ok(no_error == 0, "mutations: every error status has a reason (%lu without)", no_error);
	tap_ok(bad_ext == 0, "mutations: extra bytes never change a final answer (%lu bad)",
		bad_ext);
	tap_ok(bad_prefix == 0, "mutations: prefixes answer incomplete or the same (%lu bad)",
		bad_prefix);
	/* A mutation run that accepts nothing or rejects nothing tests nothing. */
	tap_ok(accepted > ROUNDS / 50 && errors > ROUNDS / 10 && incomplete > ROUNDS / 50,
		"mutations: every kind of answer was exercised");
}

static bool
port_80_8080(const void *ctx, uint16_t port)
{
	(void)ctx;
	return port == 80 || port == 8080;
}

/* http_authority_is(): our names, any ASCII case, a port we listen on or none. */
static void
test_authority(void)
{
	static const struct {
		const char *authority;
		bool ours;
	} rows[] = {
		{"198.18.0.2", true},
		{"198.18.0.2:80", true},
		{"198.18.0.2:8080", true},
		{"198.18.0.2:", true},
		{"SALE.Shop.example", true},
		{"sale.shop.example:80", true},
		{"198.18.0.2:81", false},
		{"198.18.0.2:080x", false},
		{"198.18.0.2:65616", false},
		{"198.18.0.2:000080", false},
		{"198.18.0.20", false},
		{"198.18.0.", false},
		{"sale.shop.example.", false},
		{"evil.example", false},
		{"sale.shop.example.evil.example", false},
		{"[::1]:80", false},
		{"", false},
	};
	const struct http_str names[] = {{"198.18.0.2", 10}, {"sale.shop.example", 17}};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct guard_buf g;
		size_t n = strlen(rows[i].authority);
		const char *p = guard_place(&g, rows[i].authority, n);
		struct http_str a = {p, (uint16_t)n};

		tap_ok(p != NULL && http_authority_is(&a, names, 2, port_80_8080, NULL) ==
					    rows[i].ours,
			"authority \"%s\" is %s", rows[i].authority,
			rows[i].ours ? "ours" : "not ours");
		guard_free(&g);
	}
}

int
main(void)
{
	test_valid();
	test_authority();
	test_find_header();
	test_forwarded_for();
	test_rejects();
	test_limits();
	test_name_bytes();
	test_host_bytes();
	test_prefixes();
	test_mutations();
	return tap_done();
}
