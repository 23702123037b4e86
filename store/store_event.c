/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "store/store_conn_int.h"
#include "store/store_wait.h"
#include "store/store_event.h"

int
store_preheat(struct store *rs, uint32_t event, int64_t stock)
{
	static const enum store_key_kind kinds[] = {
		RS_KEY_STOCK, RS_KEY_RESULT, RS_KEY_OUTBOX, RS_KEY_ENTRANTS, RS_KEY_DRAW, RS_KEY_ENTLOG};
	char stock_s[RS_U64_DIGITS + 1];
	const char *args[] = {stock_s};
	long long v;

	if (event == 0 || stock < 0)
		return -EINVAL;
	stock_s[store_u64_to_dec(stock_s, (uint64_t)stock)] = '\0';
	int rc = store_eval_int(rs, RS_SCRIPT_PREHEAT, event, kinds, 6, args, 1, &v);

	if (rc != 0)
		return rc;
	if (v != 1)
		return v == 0 ? -EBUSY : -EIO;
	/* A stock lost in a failover would be answered sold out. */
	return store_wait_replicas(rs);
}

int
store_event_state(struct store *rs, uint32_t event, struct store_event_state *out)
{
	char k[RS_KEY_KINDS][RS_KEY_MAX];
	size_t kl[RS_KEY_KINDS];
	int rc = 0;

	if (event == 0)
		return -EINVAL;
	if (store_ensure_connected(rs) != 0)
		return -ENOTCONN;
	for (unsigned i = 0; i < RS_KEY_KINDS; i++)
		kl[i] = (size_t)store_key(k[i], RS_KEY_MAX, event, (enum store_key_kind)i);
	const char *cmds[][2] = {
		{"MULTI", NULL},
		{"GET", k[RS_KEY_STOCK]},
		{"HLEN", k[RS_KEY_RESULT]},
		{"XLEN", k[RS_KEY_OUTBOX]},
		{"SCARD", k[RS_KEY_RELEASED]},
		{"EXEC", NULL},
	};
	const size_t key_of[] = {0, RS_KEY_STOCK, RS_KEY_RESULT, RS_KEY_OUTBOX, RS_KEY_RELEASED, 0};
	const unsigned ncmd = sizeof(cmds) / sizeof(cmds[0]);

	for (unsigned i = 0; i < ncmd; i++) {
		size_t len[2] = {strlen(cmds[i][0]), cmds[i][1] ? kl[key_of[i]] : 0};

		if (redisAppendCommandArgv(rs->c, cmds[i][1] ? 2 : 1, cmds[i], len) != REDIS_OK) {
			store_lost(rs, "out of memory");
			return -ENOMEM;
		}
	}
	for (unsigned i = 0; i < ncmd; i++) {
		redisReply *r = store_read_reply(rs);

		if (r == NULL)
			return -ENOTCONN;
		if (i + 1 < ncmd) {
			if (r->type == REDIS_REPLY_ERROR)
				rc = -EIO;
			freeReplyObject(r);
			continue;
		}
		/* EXEC: GET, HLEN, XLEN, SCARD. */
		if (rc == 0 && (r->type != REDIS_REPLY_ARRAY || r->elements != 4))
			rc = -EIO;
		for (unsigned e = 1; rc == 0 && e < 4; e++)
			if (r->element[e]->type != REDIS_REPLY_INTEGER)
				rc = -EIO;
		if (rc == 0) {
			const redisReply *st = r->element[0];
			uint64_t v = 0;

			memset(out, 0, sizeof(*out));
			if (st->type == REDIS_REPLY_STRING) {
				bool neg = st->len > 0 && st->str[0] == '-';

				if (store_parse_u64(st->str + neg, (size_t)st->len - neg, &v) != 0 ||
					v > INT64_MAX)
					rc = -EIO;
				out->stock = neg ? -(int64_t)v : (int64_t)v;
				out->preheated = true;
			} else if (st->type != REDIS_REPLY_NIL) {
				rc = -EIO;
			}
			out->buyers = (uint64_t)r->element[1]->integer;
			out->outbox_len = (uint64_t)r->element[2]->integer;
			out->released = (uint64_t)r->element[3]->integer;
		}
		freeReplyObject(r);
	}
	if (rc != 0) {
		rs->st.errors++;
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"redis: reading the state of event %" PRIu32
			" failed (a key of another type?)",
			event);
	}
	return rc;
}

int
store_purge_event(struct store *rs, uint32_t event)
{
	char k[RS_KEY_KINDS][RS_KEY_MAX];
	const char *argv[1 + RS_KEY_KINDS] = {"DEL"};
	size_t len[1 + RS_KEY_KINDS] = {3};
	int err = 0;

	if (event == 0)
		return -EINVAL;
	for (unsigned i = 0; i < RS_KEY_KINDS; i++) {
		argv[1 + i] = k[i];
		len[1 + i] = (size_t)store_key(k[i], RS_KEY_MAX, event, (enum store_key_kind)i);
	}
	redisReply *r = store_command(rs, 1 + RS_KEY_KINDS, argv, len, &err);

	if (r == NULL)
		return err;
	err = r->type == REDIS_REPLY_INTEGER ? 0 : -EIO;
	freeReplyObject(r);
	return err;
}

int
store_sale_window(struct store *rs, uint32_t event, enum store_sale_state state, uint64_t starts_ms,
	uint64_t ends_ms)
{
	char key[RS_KEY_MAX], val[2 * RS_U64_DIGITS + 2];
	size_t vl;
	int err = 0;

	if (event == 0 || (state == RS_SALE_OPEN && starts_ms >= ends_ms))
		return -EINVAL;
	switch (state) {
	case RS_SALE_HELD:
		vl = (size_t)snprintf(val, sizeof(val), "held");
		break;
	case RS_SALE_CLOSED:
		vl = (size_t)snprintf(val, sizeof(val), "closed");
		break;
	case RS_SALE_OPEN:
		vl = store_u64_to_dec(val, starts_ms);
		val[vl++] = ' ';
		vl += store_u64_to_dec(val + vl, ends_ms);
		break;
	default:
		return -EINVAL;
	}
	const char *argv[3] = {"SET", key, val};
	size_t len[3] = {3, (size_t)store_key(key, sizeof(key), event, RS_KEY_WINDOW), vl};
	redisReply *r = store_command(rs, 3, argv, len, &err);

	if (r == NULL)
		return err;
	err = r->type == REDIS_REPLY_STATUS ? 0 : -EIO;
	freeReplyObject(r);
	/* A close lost in a failover would let the new primary take reservations again. */
	return err == 0 ? store_wait_replicas(rs) : err;
}
