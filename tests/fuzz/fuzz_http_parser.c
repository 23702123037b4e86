/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the strict HTTP/1.1 request parser (dataplane/http_parser.c); see
 * docs/testing.md. Beyond "no crash, no over-read" (AddressSanitizer), it aborts when a result
 * breaks the parser's contract, so the fuzzer reports logic errors too.
 */
#include "dataplane/http_parser.h"
#include "tests/fuzz/fuzz.h"

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

	FUZZ_CHECK(req->total_len <= len && req->head_len <= req->total_len);
	FUZZ_CHECK(req->head_len <= HTTP_MAX_HEAD && req->minor <= 1);
	FUZZ_CHECK((unsigned int)req->method <= HTTP_M_TRACE);
	FUZZ_CHECK(req->target.len > 0 && inside(req->target, buf, end));
	/* An absolute form with an empty path has the path "/", a static string. */
	FUZZ_CHECK(inside(req->path, buf, end) || (req->authority.len > 0 && req->path.len == 1));
	FUZZ_CHECK(inside(req->query, buf, end) && inside(req->authority, buf, end));
	FUZZ_CHECK(req->target.len <= HTTP_MAX_TARGET);
	if (req->authority.len > 0)
		FUZZ_CHECK(req->path.len > 0 && req->path.p[0] == '/' &&
			   req->authority.p == req->target.p + 7);
	else if (!(req->target.len == 1 && req->target.p[0] == '*'))
		FUZZ_CHECK(req->path.len > 0 && req->path.p == req->target.p && req->path.p[0] == '/');
	FUZZ_CHECK(req->n_headers <= HTTP_MAX_HEADERS);
	for (i = 0; i < req->n_headers; i++) {
		const struct http_header *h = &req->headers[i];

		FUZZ_CHECK(
			h->name.len > 0 && inside(h->name, buf, end) && inside(h->value, buf, end));
		FUZZ_CHECK(memchr(h->name.p, ':', h->name.len) == NULL);
		FUZZ_CHECK(h->value.len == 0 ||
			   (memchr(h->value.p, '\r', h->value.len) == NULL &&
				   memchr(h->value.p, '\n', h->value.len) == NULL &&
				   memchr(h->value.p, '\0', h->value.len) == NULL));
		FUZZ_CHECK(http_find_header(req, h->name.p, h->name.len) != NULL);
	}
	FUZZ_CHECK(inside(req->host, buf, end) && inside(req->authorization, buf, end));
	FUZZ_CHECK(inside(req->origin, buf, end) && inside(req->flash_token, buf, end));
	FUZZ_CHECK(inside(req->device_id, buf, end) && inside(req->content_type, buf, end));
	FUZZ_CHECK(inside(req->access_control_request_method, buf, end));
	FUZZ_CHECK(req->minor == 0 || (req->seen & HTTP_SEEN_HOST));
	if (req->content_length < 0)
		FUZZ_CHECK(req->body.len == 0);
	else
		FUZZ_CHECK(req->body.len == req->content_length &&
			   req->content_length <= HTTP_MAX_BODY);
	FUZZ_CHECK(req->head_len + req->body.len == req->total_len);
	FUZZ_CHECK(req->body.len == 0 ||
		   (req->body.p == buf + req->head_len && inside(req->body, buf, end)));
	/* The forwarding lists a trusted edge's request is read for: a count or a reason. */
	for (int fwd = 0; fwd < 2; fwd++) {
		struct http_addr a[HTTP_FWD_MAX];
		const char *why;
		int n = http_forwarded_for(req, fwd, a, HTTP_FWD_MAX, &why);

		FUZZ_CHECK(n >= -1 && n <= HTTP_FWD_MAX);
		FUZZ_CHECK(n < 0 ? why != NULL : why == NULL);
		FUZZ_CHECK(n != 0 || !(req->seen & (fwd ? HTTP_SEEN_FORWARDED : HTTP_SEEN_XFF)));
		for (int i = 0; i < n; i++)
			FUZZ_CHECK(a[i].family == 4 || a[i].family == 6 || (fwd && a[i].family == 0));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_request req, req2;
	char *buf = fuzz_copy(data, size);
	size_t k;
	int rc, rc2;

	rc = http_parse_request(buf, size, &req);
	FUZZ_CHECK(rc == 0 || rc == HTTP_INCOMPLETE || rc == 400 || rc == 414 || rc == 431 ||
		   rc == 501 || rc == 505);
	if (rc == 0)
		check_accepted(&req, buf, size);
	else if (rc > 0)
		FUZZ_CHECK(req.error != NULL && req.error[0] != '\0');
	else
		FUZZ_CHECK(req.error == NULL);

	/* A prefix answers "incomplete" or what the whole answered; 0 only once the whole
	 * request is in. */
	k = size / 2;
	rc2 = http_parse_request(buf, k, &req2);
	if (rc == 0 && k >= req.total_len)
		FUZZ_CHECK(rc2 == 0 && req2.total_len == req.total_len);
	else
		FUZZ_CHECK(rc2 == HTTP_INCOMPLETE || (rc2 == rc && rc != 0));
	free(buf);
	return 0;
}
