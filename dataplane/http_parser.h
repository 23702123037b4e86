/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DATAPLANE_HTTP_PARSER_H
#define FG_DATAPLANE_HTTP_PARSER_H
/*
 * Strict HTTP/1.1 request parser (RFC 9112) for the per-packet path.
 *
 * Zero-copy: every string in struct http_request points into the caller's buffer, which
 * must outlive the request. Stateless: each call parses from the first byte, so a caller
 * that receives more bytes simply calls again with the longer buffer. No allocation, no
 * syscalls, no locks, no dependency on DPDK.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_HEADERS 24   /* more header fields -> 431 */
#define HTTP_MAX_TARGET	 1024 /* longer request-target -> 414 */
#define HTTP_MAX_HEAD	 4096 /* longer request-line + fields + empty line -> 431 */
/* Larger Content-Length -> 400: the body must fit struct http_str, and no single segment
 * ever carries more. */
#define HTTP_MAX_BODY	65535
#define HTTP_INCOMPLETE (-1)

struct http_str {
	const char *p;
	uint16_t len;
};

struct http_header {
	struct http_str name, value;
};

enum http_method {
	HTTP_M_GET,
	HTTP_M_HEAD,
	HTTP_M_POST,
	HTTP_M_PUT,
	HTTP_M_DELETE,
	HTTP_M_OPTIONS,
	HTTP_M_PATCH,
	HTTP_M_CONNECT,
	HTTP_M_TRACE,
};

/* Bits of struct http_request.seen: which well-known header fields were present. */
#define HTTP_SEEN_HOST		(1u << 0)
#define HTTP_SEEN_AUTHORIZATION (1u << 1)
#define HTTP_SEEN_ORIGIN	(1u << 2)
#define HTTP_SEEN_FLASH_TOKEN	(1u << 3)
#define HTTP_SEEN_DEVICE_ID	(1u << 4)
#define HTTP_SEEN_CONTENT_TYPE	(1u << 5)
#define HTTP_SEEN_ACRM		(1u << 6) /* Access-Control-Request-Method */
#define HTTP_SEEN_CONTENT_LEN	(1u << 7)
#define HTTP_SEEN_XFF		(1u << 9)  /* X-Forwarded-For, one line or more */
#define HTTP_SEEN_FORWARDED	(1u << 10) /* Forwarded (RFC 7239), one line or more */
#define HTTP_SEEN_FLASH_SOLUTION (1u << 11) /* X-Flash-Solution */

struct http_request {
	enum http_method method;
	/* path starts with '/', query is what follows the first '?' (without it). For the
	 * asterisk-form ("OPTIONS * HTTP/1.1") target is "*" and path and query are empty. For
	 * the absolute-form ("GET http://host:port/path?q HTTP/1.1", RFC 9112 §3.2.2) authority
	 * is "host:port" and path and query are those of the URI (an empty path is "/", a
	 * static string); for every other form authority is empty. */
	struct http_str target, path, query, authority;
	uint8_t minor; /* HTTP/1.<minor>: 0 or 1 */
	uint16_t n_headers;
	struct http_header headers[HTTP_MAX_HEADERS];
	/* Well-known headers captured while parsing (len 0 when absent or empty; tell the two
	 * apart with seen). Each may appear at most once. */
	struct http_str host, authorization, origin, flash_token /* X-Flash-Token */,
		device_id /* X-Device-Id */, content_type, access_control_request_method,
		flash_solution /* X-Flash-Solution: a challenge's solution (docs/api.md) */;
	uint32_t seen;		/* HTTP_SEEN_* bits */
	int64_t content_length; /* -1 when absent */
	struct http_str body;	/* content_length bytes after the header section */
	uint32_t head_len;	/* bytes of request-line + fields + empty line; 0 until known */
	uint32_t total_len;	/* bytes of header section + body */
	const char *error;	/* static text when the result is an error status */
};

/*
 * Parses one request from buf[0..len). Never reads buf[len] or beyond.
 *
 * Returns 0 when a complete request (with its body) is in req; bytes after total_len
 * (a pipelined request) are ignored. Returns HTTP_INCOMPLETE when more bytes are needed
 * and no error is certain yet; if the header section was complete (head_len != 0), the
 * header fields and content_length in req are valid, so a caller can reject a body it
 * could never receive. Otherwise returns an HTTP status with req->error set to a short
 * static English reason:
 *   400 malformed request (also Content-Length above HTTP_MAX_BODY; an absolute-form
 *   request-target whose scheme is not http or whose authority is empty, has userinfo or
 *   bytes outside RFC 3986's reg-name / IP-literal / port),
 *   414 request-target longer than HTTP_MAX_TARGET, 431 more than HTTP_MAX_HEADERS fields
 *   or a header section longer than HTTP_MAX_HEAD, 501 unknown method or any
 *   Transfer-Encoding, 505 HTTP version other than 1.0 and 1.1.
 * An error is returned as soon as the bytes seen make it certain, even before the end of
 * the request. Apart from the fields listed above, req is unspecified after a non-zero
 * return.
 */
int
http_parse_request(const char *buf, size_t len, struct http_request *req);

/*
 * Case-insensitive (ASCII) lookup of a header field by name in a request that
 * http_parse_request() accepted. Returns the value of the first field with that name, or
 * NULL when there is none.
 */
const struct http_str *
http_find_header(const struct http_request *req, const char *name, size_t name_len);

/*
 * Whether the authority of an absolute-form request-target ("host" or "host:port", as
 * http_parse_request() left it in req->authority) names this server: its host equal,
 * ignoring ASCII case, to one of the n_names names[i] (a DNS name or a dotted IPv4 address),
 * and its port absent, empty or one that port_ok(ctx, port) accepts. Cannot fail; false for
 * an empty authority.
 */
bool
http_authority_is(const struct http_str *authority, const struct http_str *names, unsigned n_names,
	bool (*port_ok)(const void *ctx, uint16_t port), const void *ctx);

/* The most addresses X-Forwarded-For or Forwarded may list in one request. */
#define HTTP_FWD_MAX 16

/* An address from X-Forwarded-For or Forwarded: family 4 (a[0..4), network order) or 6
 * (a[0..16)); 0 for a Forwarded node that is "unknown" or obfuscated, or an element with no
 * for= parameter. */
struct http_addr {
	uint8_t family;
	uint8_t a[16];
};

/*
 * The addresses that the X-Forwarded-For fields (forwarded false) or the Forwarded fields
 * (RFC 7239 §4, forwarded true) of a parsed request list, rightmost first (the last field
 * line's last element is out[0]), at most cap of them. Parsed strictly: X-Forwarded-For
 * elements are bare IPv4 or IPv6 addresses with optional spaces around them (IPv4-mapped IPv6
 * counts as IPv4); Forwarded elements are parameter lists whose for= is a node of RFC 7239 §6
 * (IPv4, "[IPv6]" quoted, an optional port, "unknown", obfuscated). Returns how many were
 * written (0 when there is no such field); -1 when a field is malformed (an empty element, an
 * address that does not parse, a parameter twice, more than HTTP_FWD_MAX elements), with a
 * static reason in *why. For the trusted edges' requests only: it is not on the path of
 * anyone else's.
 */
int http_forwarded_for(const struct http_request *req, bool forwarded, struct http_addr *out,
	unsigned cap, const char **why);

#endif
