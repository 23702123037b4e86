/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_conn_int.h"
#include "store/store_reconcile.h"

int
store_buyers_missing(
	struct store *rs, uint32_t event, const uint64_t *users, unsigned n, uint8_t *missing)
{
	int rc = store_members(rs, event, RS_KEY_RESULT, users, n, missing);

	for (unsigned i = 0; rc == 0 && i < n; i++)
		missing[i] = !missing[i];
	return rc;
}

/*
 * KEYS[1] the result hash, KEYS[2] the draw key, KEYS[3] the released set; ARGV triples (user,
 * value, was) of the users whose fields to write: a field that holds was ("": no field) gets the
 * value (its order, as PostgreSQL has it); any other is left as it is. Older builds wrote "H"
 * instead (holds an order in PostgreSQL), still read. A drawn sale's draw key counts the buyers
 * paid (store_results_paid()); Redis lost that count's step with the field (the step came after
 * the field, in the same order), so each field made "P:" here counts one, else the sale's waiting
 * list is never final (store_draw_waiting(): more buyers held than paid). A field made "X:" or
 * "C:" (an order whose release release.lua applied, lost with it) gets that release's member
 * "<rid>:<user>" back too, as release.lua left it: a later release of the order returns nothing.
 */
static const char repair_lua[] =
	"local p = 0\n"
	"for i = 1, #ARGV, 3 do\n"
	"  local v = ARGV[i + 1]\n"
	"  if (redis.call('HGET', KEYS[1], ARGV[i]) or '') == ARGV[i + 2] then\n"
	"    redis.call('HSET', KEYS[1], ARGV[i], v)\n"
	"    local tag, rid = string.match(v, '^([PXC]):(%d+):')\n"
	"    if tag == 'P' then p = p + 1\n"
	"    elseif tag then redis.call('SADD', KEYS[3], rid .. ':' .. ARGV[i]) end\n"
	"  end\n"
	"end\n"
	"if p > 0 and redis.call('EXISTS', KEYS[2]) == 1 then\n"
	"  redis.call('HINCRBY', KEYS[2], 'paid', p)\n"
	"end\n"
	"return #ARGV / 3\n";

/*
 * Runs repair_lua for buyers add[0..n) (1..RS_BATCH_MAX), each field written only while it
 * holds the bare reservation was_rid[i] (was_rid NULL: only while there is none). Returns 0,
 * -EINVAL (nothing written), -ENOMEM, -ENOTCONN or -EIO.
 */
static int
repair_fields(struct store *rs, uint32_t event, const struct store_buyer *add,
	const uint64_t *was_rid, unsigned n)
{
	static const enum store_key_kind kinds[] = {RS_KEY_RESULT, RS_KEY_DRAW, RS_KEY_RELEASED};
	enum { NK = sizeof(kinds) / sizeof(kinds[0]), AT = 3 + NK };
	char keys[NK][RS_KEY_MAX];
	const char **argv = malloc((AT + 3 * (size_t)n) * sizeof(*argv));
	size_t *len = malloc((AT + 3 * (size_t)n) * sizeof(*len));
	char(*buf)[STORE_RESULT_VALUE_MAX] = malloc(3 * (size_t)n * sizeof(*buf));
	int err = -ENOMEM;

	if (argv == NULL || len == NULL || buf == NULL)
		goto out;
	argv[0] = "EVAL";
	argv[1] = repair_lua;
	argv[2] = "3";
	for (unsigned k = 0; k < NK; k++) {
		store_key(keys[k], sizeof(keys[k]), event, kinds[k]);
		argv[3 + k] = keys[k];
	}
	store_argv_strs(argv, len, AT);
	err = -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		char *u = buf[3 * i], *v = buf[3 * i + 1], *was = buf[3 * i + 2];
		size_t at = AT + 3 * (size_t)i;

		len[at] = store_u64_to_dec(u, add[i].user);
		len[at + 1] = store_result_format(v, sizeof(buf[0]), &add[i].result);
		len[at + 2] = was_rid != NULL ? store_u64_to_dec(was, was_rid[i]) : 0;
		if (len[at + 1] == 0)
			goto out;
		argv[at] = u;
		argv[at + 1] = v;
		argv[at + 2] = was;
	}
	err = 0;
	redisReply *r = store_command_ok(rs, (int)(AT + 3 * n), argv, len, &err, event);

	if (r != NULL)
		freeReplyObject(r);
out:
	free(argv);
	free(len);
	free(buf);
	return err;
}

int
store_repair_buyers(struct store *rs, uint32_t event, const struct store_buyer *add, unsigned n)
{
	if (event == 0 || n == 0 || n > RS_BATCH_MAX || add == NULL)
		return -EINVAL;
	return repair_fields(rs, event, add, NULL, n);
}

int
store_repair_orphans(struct store *rs, uint32_t event, const struct store_buyer *add,
	const uint64_t *was_rid, unsigned n)
{
	if (event == 0 || n == 0 || n > RS_BATCH_MAX || add == NULL || was_rid == NULL)
		return -EINVAL;
	return repair_fields(rs, event, add, was_rid, n);
}

/*
 * KEYS[1] the stock; ARGV[1] the stock the caller read ("" when there was none), ARGV[2] the
 * stock to set. Sets it only while it is still what was read: returns 1, or 0 (nothing set)
 * when it moved (a release or a reservation since the reading).
 */
static const char repair_stock_lua[] =
	"if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end\n"
	"redis.call('SET', KEYS[1], ARGV[2])\n"
	"return 1\n";

int
store_repair_stock(struct store *rs, uint32_t event, bool was_set, int64_t was, int64_t stock)
{
	char key[RS_KEY_MAX], was_s[RS_U64_DIGITS + 2], stock_s[RS_U64_DIGITS + 1];
	const char *argv[6] = {"EVAL", repair_stock_lua, "1", key, was_s, stock_s};
	size_t len[6];
	int err = 0;

	if (event == 0 || stock < 0)
		return -EINVAL;
	store_key(key, sizeof(key), event, RS_KEY_STOCK);
	was_s[0] = '\0';
	if (was_set)
		snprintf(was_s, sizeof(was_s), "%" PRId64, was);
	stock_s[store_u64_to_dec(stock_s, (uint64_t)stock)] = '\0';
	store_argv_strs(argv, len, 6);
	redisReply *r = store_command_ok(rs, 6, argv, len, &err, event);

	if (r == NULL)
		return err;
	err = r->type != REDIS_REPLY_INTEGER ? -EIO : r->integer == 1 ? 0 : -EAGAIN;
	freeReplyObject(r);
	return err;
}
