/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "common/wire.h"
#include "store/store_conn_int.h"
#include "store/store_release.h"

int
rs_release(struct redis_store *rs, uint32_t event, uint64_t reservation_id, uint64_t user,
	unsigned n, const struct rs_release_as *as)
{
	static const enum rs_key_kind kinds[] = {RS_KEY_STOCK, RS_KEY_RELEASED, RS_KEY_RESULT};
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
	rid_s[rs_u64_to_dec(rid_s, reservation_id)] = '\0';
	user_s[rs_u64_to_dec(user_s, user)] = '\0';
	n_s[rs_u64_to_dec(n_s, n)] = '\0';
	int rc = rs_eval_int(rs, RS_SCRIPT_RELEASE, event, kinds, 3, args, n_args, &v);

	if (rc != 0)
		return rc;
	return v == 1 ? 1 : v == 0 ? 0 : v == -1 ? -ENOENT : -EIO;
}

int
rs_released_check(
	struct redis_store *rs, uint32_t event, const uint64_t *rids, unsigned n, uint8_t *released)
{
	return rs_members(rs, event, RS_KEY_RELEASED, rids, n, released);
}
