/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
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
 * KEYS[1] the result hash, ARGV the users to make buyers again: a user without a field gets
 * "H" (holds an order in PostgreSQL); a field that exists is left as it is.
 */
static const char repair_lua[] =
	"for i = 1, #ARGV do redis.call('HSETNX', KEYS[1], ARGV[i], 'H') end\n"
	"return #ARGV\n";

int
store_repair(struct store *rs, uint32_t event, int64_t stock, const uint64_t *add_buyers,
	unsigned n)
{
	char key[RS_KEY_MAX], sval[RS_U64_DIGITS + 1];
	const char *argv[3];
	size_t len[3];
	int err = 0;

	if (event == 0 || stock < 0 || n > RS_BATCH_MAX)
		return -EINVAL;
	if (n > 0) {
		const char *cmd[] = {"EVAL", repair_lua, "1"};
		redisReply *r =
			store_key_numbers(rs, cmd, 3, event, RS_KEY_RESULT, add_buyers, n, &err);

		if (r == NULL)
			return err;
		freeReplyObject(r);
	}
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
