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

/*
 * Which of users[0..n) (1..RS_BATCH_MAX) are not buyers of the event, i.e. have no field in
 * its result hash (missing[i] = 1). Returns 0, -EINVAL, -ENOTCONN or -EIO.
 */
int store_buyers_missing(struct store *rs, uint32_t event, const uint64_t *users, unsigned n,
	uint8_t *missing);

/*
 * Repairs an event from PostgreSQL's view: makes add_buyers[0..n) buyers again (their result
 * field, when missing, becomes "H": the order is in PostgreSQL), then sets the stock. Only for
 * a sale that is not running (the caller checks). Returns 0 or < 0.
 */
int store_repair(struct store *rs, uint32_t event, int64_t stock, const uint64_t *add_buyers,
	unsigned n);

#endif
