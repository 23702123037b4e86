/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_RECONCILE_H
#define FG_STORE_STORE_RECONCILE_H
/*
 * Reconciliation: finding the buyers PostgreSQL knows and Redis lost (a Redis restart without
 * persistence), and repairing an event's result hash and stock (store/store_keys.h). The
 * control plane's admin "reconcile" command calls these, for a sale that is not running.
 */
#include <stdbool.h>
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
 * Makes add[0..n) (1..RS_BATCH_MAX; each its order, as PostgreSQL's order row has it) buyers
 * again: each missing result field becomes its order's own value (store_result_format():
 * "O:...", "P:...", "X:..." or "C:..."), in one script; a field that exists is left as it is.
 * A drawn sale's count of buyers paid grows by the "P:" fields made; an "X:" or "C:" field made
 * puts its reservation in the released set (as release.lua did when it returned the item), so
 * that a release of that order returns nothing again; the stock is not touched.
 * Returns 0, -EINVAL (event 0, n out of range, a result of another verdict: nothing written),
 * -ENOMEM, -ENOTCONN or -EIO.
 */
int store_repair_buyers(
	struct store *rs, uint32_t event, const struct store_buyer *add, unsigned n);

/*
 * Gives add[0..n) (1..RS_BATCH_MAX; each its order, as for store_repair_buyers()) their orders'
 * fields in place of the reservations was_rid[0..n) their fields hold: reservations Redis decided
 * after it lost the user's first, which can never become orders (one order per user and event).
 * A field that holds anything else by now is left as it is. As store_repair_buyers() for the
 * count of buyers paid and the released set; the stock is not touched (the caller sets it).
 * Returns 0, -EINVAL (nothing written), -ENOMEM, -ENOTCONN or -EIO.
 */
int store_repair_orphans(struct store *rs, uint32_t event, const struct store_buyer *add,
	const uint64_t *was_rid, unsigned n);

/*
 * Sets event's stock to stock if it is still what the caller read (was_set: the key existed,
 * holding was; otherwise it must still not exist), in one script, so that a release or a
 * reservation since the reading is never overwritten. For reconciliation of a sale that is not
 * running (the caller checks). Returns 0, -EAGAIN (it moved: nothing set), -EINVAL (event 0,
 * stock < 0), -ENOTCONN or -EIO.
 */
int store_repair_stock(struct store *rs, uint32_t event, bool was_set, int64_t was, int64_t stock);

#endif
