/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/loadgen/lg_flood.h"

#include "common/parse.h"

static const char *const flood_names[LG_FLOOD_N] = {
	[LG_FLOOD_SYN] = "syn",
	[LG_FLOOD_BAD_ACK] = "bad-ack",
	[LG_FLOOD_UNSIGNED] = "unsigned",
	[LG_FLOOD_ONE_IP] = "one-ip",
};

const char *
lg_flood_name(enum lg_flood_kind k)
{
	return (unsigned)k < LG_FLOOD_N ? flood_names[k] : "?";
}

const char *
lg_flood_report_key(enum lg_flood_kind k)
{
	static const char *const keys[LG_FLOOD_N] = {
		[LG_FLOOD_SYN] = "flood_syn",
		[LG_FLOOD_BAD_ACK] = "flood_bad_ack",
		[LG_FLOOD_UNSIGNED] = "flood_unsigned",
		[LG_FLOOD_ONE_IP] = "flood_one_ip",
	};

	return (unsigned)k < LG_FLOOD_N ? keys[k] : "flood_?";
}

int
lg_flood_parse(const char *s, enum lg_flood_kind *kind, double *rate)
{
	const char *colon = strchr(s, ':');
	double r;

	if (colon == NULL)
		return -EINVAL;
	for (unsigned k = 0; k < LG_FLOOD_N; k++) {
		size_t n = strlen(flood_names[k]);

		if ((size_t)(colon - s) != n || memcmp(s, flood_names[k], n) != 0)
			continue;
		if (parse_double(colon + 1, LG_FLOOD_RATE_MIN, LG_FLOOD_RATE_MAX, &r) != 0)
			return -EINVAL;
		*kind = (enum lg_flood_kind)k;
		*rate = r;
		return 0;
	}
	return -EINVAL;
}

int
lg_flood_request(char *buf, size_t cap, unsigned step, const struct lg_flood_req *x)
{
	int n;

	switch (step) {
	case LG_STEP_FLOOD_SESSION_FORGED:
	case LG_STEP_FLOOD_ONE_IP:
		n = snprintf(buf, cap,
			"POST /api/v1/events/%" PRIu32 "/token HTTP/1.1\r\nHost: %s\r\n"
			"Authorization: Bearer %s\r\nContent-Length: 0\r\n\r\n",
			x->event, x->host,
			step == LG_STEP_FLOOD_ONE_IP ? x->session : x->forged_session);
		break;
	case LG_STEP_FLOOD_SESSION_NONE:
		n = snprintf(buf, cap,
			"POST /api/v1/events/%" PRIu32 "/token HTTP/1.1\r\nHost: %s\r\n"
			"Content-Length: 0\r\n\r\n",
			x->event, x->host);
		break;
	case LG_STEP_FLOOD_PURCHASE_FORGED:
		n = snprintf(buf, cap,
			"POST %s HTTP/1.1\r\nHost: %s\r\nX-Flash-Token: %s\r\n"
			"Content-Length: 0\r\n\r\n",
			x->reserve_path, x->host, x->forged_purchase);
		break;
	case LG_STEP_FLOOD_PURCHASE_NONE:
		n = snprintf(buf, cap, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n",
			x->reserve_path, x->host);
		break;
	default:
		return -1;
	}
	if (n < 0 || (size_t)n >= cap)
		return -1;
	return n;
}

static bool
json_has(const struct lg_http_resp *r, const char *name)
{
	const char *v;
	size_t n;

	return lg_json_string(r->body, r->body_len, name, &v, &n) == 0 && n > 0;
}

bool
lg_flood_answer_ok(unsigned step, const struct lg_http_resp *r)
{
	static const char ip_limit[] = "too many requests from this address";
	const char *v;
	size_t n;

	switch (r->status) {
	case 410:
	case 425:
	case 503:
		return step >= LG_STEP_FLOOD_FIRST && step <= LG_STEP_FLOOD_ONE_IP;
	case 429:
		return step >= LG_STEP_FLOOD_FIRST && step <= LG_STEP_FLOOD_ONE_IP &&
		       lg_json_string(r->body, r->body_len, "error", &v, &n) == 0 &&
		       n == sizeof(ip_limit) - 1 && memcmp(v, ip_limit, n) == 0;
	}
	switch (step) {
	case LG_STEP_FLOOD_SESSION_FORGED:
	case LG_STEP_FLOOD_SESSION_NONE:
		return r->status == 401;
	case LG_STEP_FLOOD_PURCHASE_FORGED:
	case LG_STEP_FLOOD_PURCHASE_NONE:
		return r->status == 403;
	case LG_STEP_FLOOD_ONE_IP:
		return r->status == 200 && json_has(r, "token") && json_has(r, "reserve_path");
	}
	return false;
}
