/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/now.h"

#include "common/wire.h"
#include "store/store_conn_int.h"
#include "store/store_release.h"
#include "store/store_result.h"

/* Reads release.lua's reply {1, user, rid, rank, ...} | {0} | {-1}. Returns 1, 0, -ENOENT, -EIO. */
static int
store_release_take(const redisReply *r, struct store_waiter *to, unsigned cap, unsigned *n_to)
{
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 || (r->elements - 1) % 3 != 0 ||
		r->element[0]->type != REDIS_REPLY_INTEGER)
		return -EIO;
	long long v = r->element[0]->integer;
	size_t k = (r->elements - 1) / 3;

	if (v != 1)
		return v == 0 && k == 0 ? 0 : v == -1 && k == 0 ? -ENOENT : -EIO;
	if (k > cap)
		return -EIO;
	for (size_t i = 0; i < k; i++) {
		uint64_t f[3];

		for (unsigned j = 0; j < 3; j++) {
			const redisReply *e = r->element[1 + 3 * i + j];

			if (e->type != REDIS_REPLY_STRING || store_parse_u64(e->str, e->len, &f[j]) != 0)
				return -EIO;
		}
		to[i] = (struct store_waiter){.user = f[0], .reservation_id = f[1], .rank = f[2]};
	}
	*n_to = (unsigned)k;
	return 1;
}

int
store_release_to(struct store *rs, uint32_t event, uint64_t reservation_id, uint64_t user,
	unsigned n, const struct store_release_as *as, struct store_waiter *to, unsigned cap,
	unsigned *n_to)
{
	static const enum store_key_kind kinds[] = {RS_KEY_STOCK, RS_KEY_RELEASED, RS_KEY_RESULT,
		RS_KEY_DRAW, RS_KEY_WAIT, RS_KEY_OUTBOX, RS_KEY_WINDOW};
	enum { NK = sizeof(kinds) / sizeof(kinds[0]) };
	char rid_s[RS_U64_DIGITS + 1], user_s[RS_U64_DIGITS + 1], n_s[RS_U64_DIGITS + 1];
	char cap_s[RS_U64_DIGITS + 1], now_s[RS_U64_DIGITS + 1], value[3 * RS_U64_DIGITS + 8], keys[NK][RS_KEY_MAX];
	const char *argv[3 + NK + 6] = {"EVALSHA", NULL};
	size_t len[3 + NK + 6] = {7, 40};
	unsigned nk = 3, na = 3;
	int rc = 0;

	if (n_to != NULL)
		*n_to = 0;
	if (event == 0 || reservation_id == 0 || user == 0 || n == 0 || n > 1000000 ||
		(cap > 0 && (to == NULL || n_to == NULL || as == NULL)) || cap > 1000)
		return -EINVAL;
	if (as != NULL) {
		if (as->verdict == WIRE_V_SOLD_OUT)
			snprintf(value, sizeof(value), "S:%" PRIu64, reservation_id);
		else if (as->verdict == WIRE_V_EXPIRED || as->verdict == WIRE_V_CANCELLED)
			store_result_format(value, sizeof(value),
				&(struct store_result){.verdict = as->verdict,
					.reservation_id = reservation_id,
					.order_id = as->order_id,
					.pay_deadline_ms = as->pay_deadline_ms});
		else
			return -EINVAL;
		na = 4;
	}
	if (cap > 0) {
		nk = NK;
		na = 6;
	}
	rid_s[store_u64_to_dec(rid_s, reservation_id)] = '\0';
	user_s[store_u64_to_dec(user_s, user)] = '\0';
	n_s[store_u64_to_dec(n_s, n)] = '\0';
	cap_s[store_u64_to_dec(cap_s, cap)] = '\0';
	now_s[store_u64_to_dec(now_s, now_wall_ms())] = '\0';
	char nk_s[2] = {(char)('0' + nk), '\0'};
	const char *args[6] = {rid_s, user_s, n_s, value, cap_s, now_s};
	unsigned argc = 3;

	argv[2] = nk_s;
	len[2] = 1;
	for (unsigned k = 0; k < nk; k++, argc++) {
		argv[argc] = keys[k];
		len[argc] = (size_t)store_key(keys[k], RS_KEY_MAX, event, kinds[k]);
	}
	for (unsigned a = 0; a < na; a++, argc++) {
		argv[argc] = args[a];
		len[argc] = strlen(args[a]);
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		char why[256];

		if (store_ensure_connected(rs) != 0)
			return -ENOTCONN;
		argv[1] = rs->scripts[RS_SCRIPT_RELEASE].sha1;
		redisReply *r = store_command(rs, (int)argc, argv, len, &rc);

		if (r == NULL)
			return rc;
		if (store_is_noscript(r) && attempt == 0) {
			freeReplyObject(r);
			if (store_load_scripts(rs, why, sizeof(why)) != 0)
				return rs->c != NULL ? -EIO : -ENOTCONN;
			continue;
		}
		if (r->type == REDIS_REPLY_ERROR) {
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"redis: release.lua for event %" PRIu32 " failed: %s", event, r->str);
			freeReplyObject(r);
			return -EIO;
		}
		unsigned dummy;

		rc = store_release_take(r, to, cap, n_to != NULL ? n_to : &dummy);
		freeReplyObject(r);
		return rc;
	}
	return -EIO;
}

int
store_release(struct store *rs, uint32_t event, uint64_t reservation_id, uint64_t user,
	unsigned n, const struct store_release_as *as)
{
	return store_release_to(rs, event, reservation_id, user, n, as, NULL, 0, NULL);
}

int
store_released_check(struct store *rs, uint32_t event, const uint64_t *rids,
	const uint64_t *users, unsigned n, uint8_t *released)
{
	char key[RS_KEY_MAX];
	int err = 0;

	if (n == 0 || n > RS_BATCH_MAX || event == 0)
		return -EINVAL;
	/* "<rid>:<user>" (and an older build's bare "<rid>") in one SMISMEMBER. */
	size_t argc = 2 + 2 * (size_t)n;
	const char **argv = malloc(argc * sizeof(*argv));
	size_t *len = malloc(argc * sizeof(*len));
	char *text = malloc((size_t)n * (2 * RS_U64_DIGITS + 2));

	if (argv == NULL || len == NULL || text == NULL) {
		err = -ENOMEM;
		goto out;
	}
	argv[0] = "SMISMEMBER";
	len[0] = 10;
	argv[1] = key;
	len[1] = (size_t)store_key(key, sizeof(key), event, RS_KEY_RELEASED);
	for (unsigned i = 0; i < n; i++) {
		char *p = text + (size_t)i * (2 * RS_U64_DIGITS + 2);
		size_t l = store_u64_to_dec(p, rids[i]);

		argv[2 + i] = p;
		len[2 + i] = l;
		argv[2 + n + i] = p;
		p[l] = ':';
		len[2 + n + i] = l + 1 + store_u64_to_dec(p + l + 1, users[i]);
	}
	redisReply *r = store_command_ok(rs, (int)argc, argv, len, &err, event);

	if (r != NULL) {
		if (r->type == REDIS_REPLY_ARRAY && r->elements == argc - 2)
			for (unsigned i = 0; i < n; i++)
				released[i] = r->element[i]->integer == 1 ||
					      r->element[n + i]->integer == 1;
		else
			err = -EIO;
		freeReplyObject(r);
	}
out:
	free(argv);
	free(len);
	free(text);
	return err;
}
