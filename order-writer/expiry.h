/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_OW_EXPIRY_H
#define FG_OW_EXPIRY_H
/*
 * The expiry sweeper: pending orders past their pay deadline become expired, and their stock
 * goes back, first in PostgreSQL (the same transaction writes a stock_releases row per order),
 * then in Redis: a loop applies each unapplied release with release.lua and marks it applied.
 * release.lua counts a reservation id once, so a release applied twice (a crash between Redis
 * and the mark, or two writers) returns its stock once. Each release applied here also sends a
 * RESULT EXPIRED (or CANCELLED, for an order flashgate_cancel() cancelled), with the order's id
 * and pay deadline, and each event that got stock back a RESTOCK, to the control plane.
 * With [redis] wait_replicas, releases are marked applied only once the replicas hold them.
 */
#include <stdint.h>

#include "store/store_conn.h"
#include "pg/pg_orders.h"
#include "order-writer/ow_link.h"

struct expiry_stats {
	uint64_t expired;  /* orders expired in PostgreSQL by this writer */
	uint64_t applied;  /* releases that returned stock in Redis */
	uint64_t repeated; /* releases Redis had already (applied before) */
	uint64_t to_waiting; /* items of releases handed to a draw's waiting list */
	uint64_t errors;
};

/*
 * One sweep: expires up to rounds * batch orders, then applies every pending release (batch at a
 * time). Returns 0, or the first error (logged; the next sweep goes on where this one stopped).
 */
int expiry_sweep(struct pg_orders *os, struct store *rs, struct ow_link *link, unsigned batch,
	unsigned rounds, struct expiry_stats *st);

/*
 * The second half of a sweep alone: applies up to rounds * batch pending releases (expired and
 * cancelled orders') to Redis. Returns 0 or the first error (logged).
 */
int expiry_releases(struct pg_orders *os, struct store *rs, struct ow_link *link,
	unsigned batch, unsigned rounds, struct expiry_stats *st);

#endif
