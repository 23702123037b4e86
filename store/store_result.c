/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "store/store_conn_int.h"
#include "store/store_wait.h"
#include "store/store_result.h"
#include "store/store_result_int.h"

/* Parses a result hash value (see fg:{EV}:result in store_keys.h). Returns 0 or -1. */
static int
store_parse_result(const char *s, size_t len, struct store_result *out)
{
	/* The numbers after "T:": reservation id, then order id and pay deadline where the form
	 * has them (older builds wrote "X:<rid>", "C:<rid>" and "P:<rid>:<order id>"). */
	static const struct {
		char tag;
		uint8_t verdict;
		unsigned min, max;
	} tags[] = {
		{'O', WIRE_V_ORDERED, 3, 3},
		{'P', WIRE_V_PAID, 2, 3},
		{'X', WIRE_V_EXPIRED, 1, 3},
		{'C', WIRE_V_CANCELLED, 1, 3},
		{'S', WIRE_V_SOLD_OUT, 1, 1},
	};
	uint64_t v[3] = {0};
	unsigned min, max, verdict, f = 0;

	if (len == 1 && s[0] == 'H') {
		/* Restored by an older build's reconciliation: the user holds an order, PostgreSQL
		 * knows which. */
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (len > 0 && s[0] >= '0' && s[0] <= '9') {
		verdict = WIRE_V_RESERVED;
		min = max = 1;
	} else {
		unsigned t = 0;

		while (t < sizeof(tags) / sizeof(tags[0]) && (len < 2 || tags[t].tag != s[0]))
			t++;
		if (t == sizeof(tags) / sizeof(tags[0]) || s[1] != ':')
			return -1;
		verdict = tags[t].verdict;
		min = tags[t].min;
		max = tags[t].max;
		s += 2;
		len -= 2;
	}
	for (;;) {
		const char *colon = memchr(s, ':', len);
		size_t flen = colon != NULL ? (size_t)(colon - s) : len;

		if (f == max || store_parse_u64(s, flen, &v[f]) != 0)
			return -1;
		f++;
		if (colon == NULL)
			break;
		s = colon + 1;
		len -= flen + 1;
	}
	if (f < min || (f == 2 && verdict != WIRE_V_PAID) || v[0] == 0)
		return -1;
	out->verdict = (uint8_t)verdict;
	out->reservation_id = v[0];
	out->order_id = f >= 2 ? v[1] : 0;
	out->pay_deadline_ms = f >= 3 ? v[2] : 0;
	return 0;
}

size_t
store_result_format(char *buf, size_t cap, const struct store_result *r)
{
	static const struct {
		uint8_t verdict;
		char tag;
	} tags[] = {
		{WIRE_V_ORDERED, 'O'},
		{WIRE_V_PAID, 'P'},
		{WIRE_V_EXPIRED, 'X'},
		{WIRE_V_CANCELLED, 'C'},
	};
	unsigned t = 0;
	int n;

	if (cap > 0)
		buf[0] = '\0';
	while (t < sizeof(tags) / sizeof(tags[0]) && tags[t].verdict != r->verdict)
		t++;
	if (t == sizeof(tags) / sizeof(tags[0]))
		return 0;
	n = snprintf(buf, cap, "%c:%" PRIu64 ":%" PRIu64 ":%" PRIu64, tags[t].tag,
		r->reservation_id, r->order_id, r->pay_deadline_ms);
	if (n < 0 || (size_t)n >= cap) {
		if (cap > 0)
			buf[0] = '\0';
		return 0;
	}
	return (size_t)n;
}

int
store_results(struct store *rs, const struct wire_result_query *q, unsigned n,
	struct store_result *out)
{
	int rc = 0;

	if (n == 0)
		return 0;
	if ((rc = store_append_hgets(rs, q, n, RS_KEY_RESULT)) != 0)
		return rc;
	for (unsigned i = 0; i < n; i++) {
		redisReply *r = store_read_reply(rs);

		if (r == NULL)
			return -ENOTCONN;
		memset(&out[i], 0, sizeof(out[i]));
		if (r->type == REDIS_REPLY_STRING) {
			if (store_parse_result(r->str, (size_t)r->len, &out[i]) != 0)
				LOG_RL(LOG_LEVEL_WARN, 10000,
					"redis: the result of user %" PRIu64 " of event %" PRIu32
					" is not understood: \"%.40s\"",
					q[i].user, q[i].event, r->str);
		} else if (r->type != REDIS_REPLY_NIL) {
			rs->st.errors++;
			LOG_RL(LOG_LEVEL_WARN, 10000, "redis: HGET of a result failed: %s",
				r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
			rc = -EIO;
		}
		freeReplyObject(r);
	}
	return rc == 0 ? store_wait_reads(rs) : rc;
}

/*
 * KEYS[1] the result hash, KEYS[2] the draw key; ARGV pairs (user, "P:..."). A user who is no
 * buyer here, or whose result is final for another reason (X: expired, C: cancelled, S:
 * released unordered), keeps what it has: PostgreSQL lets exactly one of pay, expire and cancel
 * take an order, so those cannot be the same order's; and a result is never created for a user
 * Redis does not know. A drawn sale's draw key counts the buyers paid ("paid", each once: a
 * result paid already is not counted again), so that store_draw_waiting() knows when no item
 * can come back to the waiting list; a sale without a draw key gets none.
 */
static const char results_paid_lua[] =
	"local n, p = 0, 0\n"
	"for i = 1, #ARGV, 2 do\n"
	"  local cur = redis.call('HGET', KEYS[1], ARGV[i])\n"
	"  local c = cur and string.sub(cur, 1, 2)\n"
	"  if cur and c ~= 'X:' and c ~= 'C:' and c ~= 'S:' then\n"
	"    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])\n"
	"    n = n + 1\n"
	"    if c ~= 'P:' then p = p + 1 end\n"
	"  end\n"
	"end\n"
	"if p > 0 and redis.call('EXISTS', KEYS[2]) == 1 then\n"
	"  redis.call('HINCRBY', KEYS[2], 'paid', p)\n"
	"end\n"
	"return n\n";

redisReply *
store_eval_buyers(struct store *rs, uint32_t event, const char *script,
	const enum store_key_kind *kinds, unsigned nkeys, const struct store_buyer *b, unsigned n,
	int *err)
{
	char keys[2][RS_KEY_MAX], nk[2] = {(char)('0' + nkeys), '\0'};
	unsigned at = 3 + nkeys, argc = at + 2 * n;
	const char **argv = malloc(argc * sizeof(*argv));
	size_t *len = malloc(argc * sizeof(*len));
	char(*buf)[STORE_RESULT_VALUE_MAX] = malloc(2 * (size_t)n * sizeof(*buf));
	redisReply *r = NULL;

	*err = 0;
	if (argv == NULL || len == NULL || buf == NULL) {
		*err = -ENOMEM;
		goto out;
	}
	argv[0] = "EVAL";
	argv[1] = script;
	argv[2] = nk;
	for (unsigned k = 0; k < nkeys; k++) {
		store_key(keys[k], sizeof(keys[k]), event, kinds[k]);
		argv[3 + k] = keys[k];
	}
	store_argv_strs(argv, len, (int)at);
	for (unsigned i = 0; i < n; i++) {
		char *u = buf[2 * i], *v = buf[2 * i + 1];

		len[at + 2 * i] = store_u64_to_dec(u, b[i].user);
		len[at + 1 + 2 * i] = store_result_format(v, sizeof(buf[0]), &b[i].result);
		if (len[at + 1 + 2 * i] == 0) {
			*err = -EINVAL;
			goto out;
		}
		argv[at + 2 * i] = u;
		argv[at + 1 + 2 * i] = v;
	}
	r = store_command_ok(rs, (int)argc, argv, len, err, event);
out:
	free(argv);
	free(len);
	free(buf);
	return r;
}

int
store_results_paid(struct store *rs, uint32_t event, const struct store_paid *p, unsigned n,
	unsigned *stored)
{
	static const enum store_key_kind kinds[] = {RS_KEY_RESULT, RS_KEY_DRAW};
	struct store_buyer *b;
	int err = 0;

	*stored = 0;
	if (event == 0 || n > RS_BATCH_MAX)
		return -EINVAL;
	if (n == 0)
		return 0;
	if ((b = malloc(n * sizeof(*b))) == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		b[i] = (struct store_buyer){.user = p[i].user,
			.result = {.verdict = WIRE_V_PAID,
				.reservation_id = p[i].reservation_id,
				.order_id = p[i].order_id,
				.pay_deadline_ms = p[i].pay_deadline_ms}};

	redisReply *r = store_eval_buyers(rs, event, results_paid_lua, kinds, 2, b, n, &err);

	if (r != NULL) {
		if (r->type == REDIS_REPLY_INTEGER)
			*stored = (unsigned)r->integer;
		else
			err = -EIO;
		freeReplyObject(r);
	}
	free(b);
	return err;
}
