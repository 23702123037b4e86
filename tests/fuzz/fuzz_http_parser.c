/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the strict HTTP/1.1 request parser; see tests/fuzz/README.md.
 * Beyond "no crash, no over-read" (AddressSanitizer), it aborts when a result breaks the
 * parser's contract, so the fuzzer reports logic errors too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/http_parser.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

static int
inside(struct http_str s, const char *lo, const char *hi)
{
	return s.len == 0 || (s.p != NULL && s.p >= lo && s.p + s.len <= hi);
}

/* What a caller relies on after a 0 result. */
static void
check_accepted(const struct http_request *req, const char *buf, size_t len)
{
	const char *end = buf + req->total_len;
	uint16_t i;

	CHECK(req->total_len <= len && req->head_len <= req->total_len);
	CHECK(req->head_len <= HTTP_MAX_HEAD && req->minor <= 1);
	CHECK((unsigned int)req->method <= HTTP_M_TRACE);
	CHECK(req->target.len > 0 && inside(req->target, buf, end));
	/* An absolute form with an empty path has the path "/", a static string. */
	CHECK(inside(req->path, buf, end) || (req->authority.len > 0 && req->path.len == 1));
	CHECK(inside(req->query, buf, end) && inside(req->authority, buf, end));
	CHECK(req->target.len <= HTTP_MAX_TARGET);
	if (req->authority.len > 0)
		CHECK(req->path.len > 0 && req->path.p[0] == '/' &&
		      req->authority.p == req->target.p + 7);
	else if (!(req->target.len == 1 && req->target.p[0] == '*'))
		CHECK(req->path.len > 0 && req->path.p == req->target.p && req->path.p[0] == '/');
	CHECK(req->n_headers <= HTTP_MAX_HEADERS);
	for (i = 0; i < req->n_headers; i++) {
		const struct http_header *h = &req->headers[i];

		CHECK(h->name.len > 0 && inside(h->name, buf, end) && inside(h->value, buf, end));
		CHECK(memchr(h->name.p, ':', h->name.len) == NULL);
		CHECK(h->value.len == 0 || (memchr(h->value.p, '\r', h->value.len) == NULL &&
						   memchr(h->value.p, '\n', h->value.len) == NULL &&
						   memchr(h->value.p, '\0', h->value.len) == NULL));
		CHECK(http_find_header(req, h->name.p, h->name.len) != NULL);
	}
	CHECK(inside(req->host, buf, end) && inside(req->authorization, buf, end));
	CHECK(inside(req->origin, buf, end) && inside(req->flash_token, buf, end));
	CHECK(inside(req->device_id, buf, end) && inside(req->content_type, buf, end));
	CHECK(inside(req->access_control_request_method, buf, end));
	CHECK(req->minor == 0 || (req->seen & HTTP_SEEN_HOST));
	if (req->content_length < 0)
		CHECK(req->body.len == 0);
	else
		CHECK(req->body.len == req->content_length && req->content_length <= HTTP_MAX_BODY);
	CHECK(req->head_len + req->body.len == req->total_len);
	CHECK(req->body.len == 0 ||
		(req->body.p == buf + req->head_len && inside(req->body, buf, end)));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_request req, req2;
	/* An exact-size heap copy, so AddressSanitizer flags a read of buf[size]. */
	char *buf = malloc(size ? size : 1);
	size_t k;
	int rc, rc2;

	if (buf == NULL)
		return 0;
	if (size)
		memcpy(buf, data, size);
	rc = http_parse_request(buf, size, &req);
	CHECK(rc == 0 || rc == HTTP_INCOMPLETE || rc == 400 || rc == 414 || rc == 431 ||
		rc == 501 || rc == 505);
	if (rc == 0)
		check_accepted(&req, buf, size);
	else if (rc > 0)
		CHECK(req.error != NULL && req.error[0] != '\0');
	else
		CHECK(req.error == NULL);

	/* A prefix answers "incomplete" or what the whole answered; 0 only once the whole
	 * request is in. */
	k = size / 2;
	rc2 = http_parse_request(buf, k, &req2);
	if (rc == 0 && k >= req.total_len)
		CHECK(rc2 == 0 && req2.total_len == req.total_len);
	else
		CHECK(rc2 == HTTP_INCOMPLETE || (rc2 == rc && rc != 0));
	free(buf);
	return 0;
}
