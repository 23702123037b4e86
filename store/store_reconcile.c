/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include "store/store_conn_int.h"
#include "store/store_reconcile.h"
#include "store/store_result_int.h"

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
 * KEYS[1] the result hash, ARGV pairs (user, value) of the users to make buyers again: a user
 * without a field gets its value (its order, as PostgreSQL has it); a field that exists is left
 * as it is. Older builds wrote "H" instead (holds an order in PostgreSQL), still read.
 */
static const char repair_lua[] =
	"for i = 1, #ARGV, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end\n"
	"return #ARGV / 2\n";

/* EVAL of repair_lua for add[0..n) (1..RS_BATCH_MAX) on event's result hash. Returns 0 or < 0. */
static int
store_repair_buyers(struct store *rs, uint32_t event, const struct store_buyer *add, unsigned n)
{
	static const enum store_key_kind kinds[] = {RS_KEY_RESULT};
	int err;
	redisReply *r = store_eval_buyers(rs, event, repair_lua, kinds, 1, add, n, &err);

	if (r != NULL)
		freeReplyObject(r);
	return err;
}

int
store_repair(
	struct store *rs, uint32_t event, int64_t stock, const struct store_buyer *add, unsigned n)
{
	char key[RS_KEY_MAX], sval[RS_U64_DIGITS + 1];
	const char *argv[3];
	size_t len[3];
	int err = 0;

	if (event == 0 || stock < 0 || n > RS_BATCH_MAX || (n > 0 && add == NULL))
		return -EINVAL;
	if (n > 0 && (err = store_repair_buyers(rs, event, add, n)) != 0)
		return err;
	store_key(key, sizeof(key), event, RS_KEY_STOCK);
	argv[0] = "SET";
	len[0] = 3;
	argv[1] = key;
	len[1] = strlen(key);
	len[2] = store_u64_to_dec(sval, (uint64_t)stock);
	argv[2] = sval;
	redisReply *r = store_command_ok(rs, 3, argv, len, &err, event);

	if (r == NULL)
		return err;
	freeReplyObject(r);
	return 0;
}
