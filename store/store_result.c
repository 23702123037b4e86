/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "common/log.h"
#include "store/store_conn_int.h"
#include "store/store_result.h"

/* Parses a result hash value (see fg:{EV}:result in store_keys.h). Returns 0 or -1. */
static int
rs_parse_result(const char *s, size_t len, struct rs_result *out)
{
	static const struct {
		char tag;
		uint8_t verdict;
		unsigned fields; /* numbers after "T:" */
	} tags[] = {
		{'O', WIRE_V_ORDERED, 3},
		{'P', WIRE_V_PAID, 2},
		{'X', WIRE_V_EXPIRED, 1},
		{'C', WIRE_V_CANCELLED, 1},
	};
	uint64_t v[3] = {0};
	unsigned fields, verdict;

	if (len == 1 && s[0] == 'H') {
		/* Restored by reconciliation: the user holds an order, PostgreSQL knows which. */
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (len > 0 && s[0] >= '0' && s[0] <= '9') {
		verdict = WIRE_V_RESERVED;
		fields = 1;
	} else {
		unsigned t = 0;

		while (t < sizeof(tags) / sizeof(tags[0]) && (len < 2 || tags[t].tag != s[0]))
			t++;
		if (t == sizeof(tags) / sizeof(tags[0]) || s[1] != ':')
			return -1;
		verdict = tags[t].verdict;
		fields = tags[t].fields;
		s += 2;
		len -= 2;
	}
	for (unsigned f = 0; f < fields; f++) {
		const char *colon = memchr(s, ':', len);
		size_t flen = colon != NULL ? (size_t)(colon - s) : len;

		if ((f + 1 < fields) != (colon != NULL) || rs_parse_u64(s, flen, &v[f]) != 0)
			return -1;
		if (colon != NULL) {
			s = colon + 1;
			len -= flen + 1;
		}
	}
	if (v[0] == 0)
		return -1;
	out->verdict = (uint8_t)verdict;
	out->reservation_id = v[0];
	out->order_id = fields >= 2 ? v[1] : 0;
	out->pay_deadline_ms = fields >= 3 ? v[2] : 0;
	return 0;
}

int
rs_results(struct redis_store *rs, const struct wire_result_query *q, unsigned n,
	struct rs_result *out)
{
	int rc = 0;

	if (n == 0)
		return 0;
	if (rs_ensure_connected(rs) != 0)
		return -ENOTCONN;
	for (unsigned i = 0; i < n; i++) {
		char key[RS_KEY_MAX], user[RS_U64_DIGITS];
		const char *argv[] = {"HGET", key, user};
		size_t len[] = {4, 0, 0};

		len[1] = (size_t)rs_key(key, sizeof(key), q[i].event, RS_KEY_RESULT);
		len[2] = rs_u64_to_dec(user, q[i].user);
		if (redisAppendCommandArgv(rs->c, 3, argv, len) != REDIS_OK) {
			/* hiredis keeps what it appended: drop the connection rather than misalign
			 * the replies of the next call. */
			rs_lost(rs, "out of memory");
			return -ENOMEM;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		redisReply *r = rs_read_reply(rs);

		if (r == NULL)
			return -ENOTCONN;
		memset(&out[i], 0, sizeof(out[i]));
		if (r->type == REDIS_REPLY_STRING) {
			if (rs_parse_result(r->str, (size_t)r->len, &out[i]) != 0)
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
	return rc;
}
