/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <inttypes.h>
#include <stdio.h>

#include "common/wire.h"
#include "store/store_conn_int.h"
#include "store/store_release.h"

int
store_release(struct store *rs, uint32_t event, uint64_t reservation_id, uint64_t user,
	unsigned n, const struct store_release_as *as)
{
	static const enum store_key_kind kinds[] = {RS_KEY_STOCK, RS_KEY_RELEASED, RS_KEY_RESULT};
	char rid_s[RS_U64_DIGITS + 1], user_s[RS_U64_DIGITS + 1], n_s[RS_U64_DIGITS + 1];
	char value[3 * RS_U64_DIGITS + 8];
	const char *args[] = {rid_s, user_s, n_s, value};
	unsigned n_args = 3;
	long long v;

	if (event == 0 || reservation_id == 0 || user == 0 || n == 0 || n > 1000000)
		return -EINVAL;
	if (as != NULL) {
		if (as->verdict == WIRE_V_SOLD_OUT)
			snprintf(value, sizeof(value), "S:%" PRIu64, reservation_id);
		else if (as->verdict == WIRE_V_EXPIRED || as->verdict == WIRE_V_CANCELLED)
			snprintf(value, sizeof(value), "%c:%" PRIu64 ":%" PRIu64 ":%" PRIu64,
				as->verdict == WIRE_V_EXPIRED ? 'X' : 'C', reservation_id,
				as->order_id, as->pay_deadline_ms);
		else
			return -EINVAL;
		n_args = 4;
	}
	rid_s[store_u64_to_dec(rid_s, reservation_id)] = '\0';
	user_s[store_u64_to_dec(user_s, user)] = '\0';
	n_s[store_u64_to_dec(n_s, n)] = '\0';
	int rc = store_eval_int(rs, RS_SCRIPT_RELEASE, event, kinds, 3, args, n_args, &v);

	if (rc != 0)
		return rc;
	return v == 1 ? 1 : v == 0 ? 0 : v == -1 ? -ENOENT : -EIO;
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
