/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_OW_RESULTS_H
#define FG_OW_RESULTS_H
/*
 * Results that change in PostgreSQL alone reach the buyers' polls: a paid order (flashgate_pay(),
 * flashgate order pay) leaves a row in result_changes (a trigger, sql/006); every
 * results_interval the order writer reads those rows, stores "P:<rid>:<order id>:<deadline>" in
 * the event's Redis result hash (store_results_paid(): what a data plane gets back after a restart),
 * sends RESULT PAID records to the control plane, which publishes them to every data plane, and
 * deletes the rows. A row is deleted only after Redis has the result and the records went out, so
 * a crash in between sends it again (harmless: the same result). Cancelled orders go the way of
 * expired ones (stock_releases, expiry_releases()), at the same pace (ow_cron()).
 */
#include <stdint.h>

#include "pg/pg_orders.h"
#include "order-writer/ow_link.h"
#include "store/store_conn.h"

struct ow_results_stats {
	uint64_t paid;	 /* paid results stored and sent */
	uint64_t kept;	 /* paid orders whose user's Redis result stayed (not a buyer, or final) */
	uint64_t errors; /* rounds that stopped on an error (logged; the rows stay for the next) */
};

/*
 * Publishes the paid orders' results, batch rows at a time, until none is left (at most rounds
 * batches). link may be NULL (nothing sent; tests). Returns 0 or the first error (logged).
 */
int ow_results_paid(struct pg_orders *os, struct store *rs, struct ow_link *link,
	unsigned batch, unsigned rounds, struct ow_results_stats *st);

#endif
