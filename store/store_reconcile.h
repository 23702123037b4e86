/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_RECONCILE_H
#define FG_STORE_STORE_RECONCILE_H
/*
 * Reconciliation: finding the buyers PostgreSQL knows and Redis lost (a Redis restart without
 * persistence), and repairing an event's result hash and stock (store/store_keys.h). The
 * control plane's admin "reconcile" command calls these, for a sale that is not running.
 */
#include <stdint.h>

#include "store/store_conn.h"
#include "store/store_result.h"

/*
 * Which of users[0..n) (1..RS_BATCH_MAX) are not buyers of the event, i.e. have no field in
 * its result hash (missing[i] = 1). Returns 0, -EINVAL, -ENOTCONN or -EIO.
 */
int store_buyers_missing(struct store *rs, uint32_t event, const uint64_t *users, unsigned n,
	uint8_t *missing);

/*
 * Repairs an event from PostgreSQL's view: makes add[0..n) (n 0..RS_BATCH_MAX; each its order,
 * as PostgreSQL's order row has it) buyers again,
 * each missing result field becoming its order's own value (store_result_format(): "O:...",
 * "P:...", "X:..." or "C:..."), in one script (a field that exists is left as it is), then sets
 * the stock. Only for a sale that is not running (the caller checks). Returns 0, -EINVAL (event
 * 0, stock < 0, n too many, a result of another verdict), -ENOMEM, -ENOTCONN or -EIO.
 */
int store_repair(
	struct store *rs, uint32_t event, int64_t stock, const struct store_buyer *add, unsigned n);

#endif
