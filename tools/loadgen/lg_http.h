/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_LG_HTTP_H
#define FG_LG_HTTP_H
/*
 * The load generator's check of an HTTP/1.1 response (RFC 9112), strict on what flashgate
 * promises (docs/api.md): a status line "HTTP/1.1 NNN reason", header fields of token name and
 * visible-character value, CRLF only, one Content-Length that counts the body exactly (none
 * for 1xx, 204 and 304), and "Connection: close". The whole response is given at once: the
 * server closed the connection after it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum lg_http_err {
	LG_HTTP_OK = 0,
	LG_HTTP_EMPTY, /* no bytes before the FIN */
	LG_HTTP_BAD_STATUS_LINE,
	LG_HTTP_BAD_HEADER, /* bad name, bad value byte, bare CR or LF, obs-fold */
	LG_HTTP_NO_END,	    /* no empty line after the header section */
	LG_HTTP_BAD_LENGTH, /* Content-Length missing, duplicated, not a number or wrong */
	LG_HTTP_NO_CLOSE,   /* no "Connection: close" */
	LG_HTTP_CLOSE,      /* kept: "Connection: close" where the connection should persist */
	LG_HTTP_ERR_N
};

struct lg_http_resp {
	unsigned status;
	long retry_after; /* seconds; -1 when absent or not a number */
	const char *body;
	size_t body_len;
};

/*
 * Checks the len bytes at buf as one complete response and fills *out (status, Retry-After,
 * body). Returns LG_HTTP_OK or the first error found; never reads beyond len bytes.
 */
enum lg_http_err lg_http_parse_response(const char *buf, size_t len, struct lg_http_resp *out);

/*
 * lg_http_parse_response() for an answer on a kept connection (--mode kept-healthz,
 * kept-reserve): the same checks, but "Connection: close" is an error (LG_HTTP_CLOSE).
 */
enum lg_http_err lg_http_parse_kept(const char *buf, size_t len, struct lg_http_resp *out);

/*
 * The length of the first response in buf[0..len) once all of it is there (its header section
 * and the Content-Length bytes after it; none for 204), else 0. For kept connections, where no
 * FIN ends an answer. Never reads beyond len bytes.
 */
size_t lg_http_response_len(const char *buf, size_t len);

/* A short name for an error, for the report ("bad_status_line", ...). */
const char *lg_http_err_name(enum lg_http_err e);

/*
 * Finds the string member "name" of the flat JSON object body (flashgate's answers: no
 * escapes in the values it sends) and points *val and *vlen at its value. Returns 0, or -ENOENT
 * when there is no such string member, or -EINVAL when its value holds a backslash.
 */
int lg_json_string(const char *body, size_t len, const char *name, const char **val, size_t *vlen);

/*
 * Finds the member "name" of body whose value is an object and points *obj and *olen at it,
 * braces included (strings inside are skipped, objects may nest). Returns 0, -ENOENT when
 * there is no such member (or its value is not an object, e.g. null), or -EINVAL when the
 * object does not end within len bytes.
 */
int lg_json_object(const char *body, size_t len, const char *name, const char **obj, size_t *olen);

/*
 * Finds the member "name" of body whose value is a non-negative integer (decimal digits only)
 * and stores it in *v. Returns 0, -ENOENT when there is no such member or its value is null,
 * or -EINVAL when the value is anything else (a sign, a fraction, a string, past 2^63).
 */
int lg_json_uint(const char *body, size_t len, const char *name, uint64_t *v);

#endif
