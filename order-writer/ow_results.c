/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/ow_results.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/wire.h"
#include "store/store_result.h"
#include "store/store_wait.h"

/* One batch of rows; *more is set when it was full. */
static int
ow_results_round(struct pg_orders *os, struct store *rs, struct ow_link *link, unsigned batch,
	struct ow_results_stats *st, bool *more)
{
	struct pg_orders_paid *rows = malloc(batch * sizeof(*rows));
	struct store_paid *p = malloc(batch * sizeof(*p));
	struct wire_result *res = malloc(batch * sizeof(*res));
	uint64_t *ids = malloc(batch * sizeof(*ids));
	bool *done = calloc(batch, sizeof(*done));
	unsigned n = 0, n_res = 0;
	char err[512];
	int rc = -ENOMEM;

	*more = false;
	if (rows == NULL || p == NULL || res == NULL || ids == NULL || done == NULL)
		goto out;
	rc = pg_orders_paid_pending(os, rows, batch, &n, err, sizeof(err));
	if (rc != 0) {
		LOG_RL(LOG_LEVEL_WARN, 5000, "results: %s", err);
		goto out;
	}
	uint64_t mark = store_wait_mark(rs);

	/* One script per event: the rows of each event in turn. */
	for (unsigned i = 0; i < n; i++) {
		unsigned k = 0, stored;

		if (done[i])
			continue;
		for (unsigned j = i; j < n; j++) {
			if (done[j] || rows[j].event != rows[i].event)
				continue;
			done[j] = true;
			p[k++] = (struct store_paid){.user = rows[j].user,
				.reservation_id = rows[j].reservation_id,
				.order_id = rows[j].order_id,
				.pay_deadline_ms = rows[j].pay_deadline_ms};
			res[n_res++] = (struct wire_result){
				.reservation_id = rows[j].reservation_id,
				.user = rows[j].user,
				.order_id = rows[j].order_id,
				.pay_deadline_ms = rows[j].pay_deadline_ms,
				.event = rows[j].event,
				.verdict = WIRE_V_PAID,
			};
		}
		rc = store_results_paid(rs, rows[i].event, p, k, &stored);
		if (rc != 0) {
			LOG_RL(LOG_LEVEL_WARN, 5000,
				"results: storing %u paid result(s) of event %" PRIu32
				" in Redis: %s (tried again later)",
				k, rows[i].event, strerror(-rc));
			goto out;
		}
		st->paid += stored;
		st->kept += k - stored;
	}
	/* Every Redis result is written: the data planes hear of them, then the rows go. */
	if (link != NULL && n_res > 0)
		ow_link_results(link, res, n_res);
	/* With [redis] wait_replicas, once the replicas hold the results, written on one
	 * connection: a failover must not lose a paid result whose row is gone. */
	if (n > 0 && (rc = store_wait_reads_since(rs, mark)) != 0) {
		LOG_RL(LOG_LEVEL_WARN, 5000,
			"results: %u paid result(s) stored in Redis, not confirmed by its replicas "
			"(%s): stored again next round",
			n, strerror(-rc));
		goto out;
	}
	for (unsigned i = 0; i < n; i++)
		ids[i] = rows[i].id;
	rc = pg_orders_paid_done(os, ids, n, err, sizeof(err));
	if (rc != 0)
		LOG_RL(LOG_LEVEL_WARN, 5000, "results: %s", err);
	*more = rc == 0 && n == batch;
out:
	free(rows);
	free(p);
	free(res);
	free(ids);
	free(done);
	return rc;
}

int
ow_results_paid(struct pg_orders *os, struct store *rs, struct ow_link *link, unsigned batch,
	unsigned rounds, struct ow_results_stats *st)
{
	bool more = true;

	for (unsigned i = 0; i < rounds && more; i++) {
		int rc = ow_results_round(os, rs, link, batch, st, &more);

		if (rc != 0) {
			st->errors++;
			return rc;
		}
	}
	return 0;
}
