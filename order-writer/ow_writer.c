/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/ow_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

/* Releases the reservations of a refused batch that have no order. Returns 0 or < 0. */
static int
ow_release_refused(struct ow_writer *w, uint32_t event, const struct rs_outbox_entry *e,
	unsigned n, const struct os_order *have, unsigned n_have, struct wire_result *res,
	unsigned *n_res)
{
	*n_res = 0;
	for (unsigned i = 0; i < n; i++) {
		bool ordered = false;

		for (unsigned j = 0; j < n_have && !ordered; j++)
			ordered = have[j].reservation_id == e[i].reservation_id;
		if (ordered)
			continue;
		int rc = rs_release(w->rs, event, e[i].reservation_id, e[i].user, 1);

		if (rc == -ENOENT) {
			LOG_WARN("event %" PRIu32 ": reservation %" PRIu64 " of user %" PRIu64
				 " is in the outbox but the user is not a buyer; nothing to release",
				event, e[i].reservation_id, e[i].user);
			continue;
		}
		if (rc < 0)
			return rc;
		if (rc == 1) {
			w->st.released++;
			res[(*n_res)++] = (struct wire_result){
				.reservation_id = e[i].reservation_id,
				.user = e[i].user,
				.event = event,
				.verdict = WIRE_V_EXPIRED,
			};
		}
	}
	return 0;
}

int
ow_write_batch(struct ow_writer *w, uint32_t event, const struct rs_outbox_entry *e, unsigned n)
{
	struct rs_outbox_entry *todo = malloc(n * sizeof(*todo));
	struct os_order *orders = malloc(n * sizeof(*orders));
	struct rs_order_result *pub = malloc(n * sizeof(*pub));
	struct wire_result *res = malloc(n * sizeof(*res));
	uint64_t *rids = malloc(n * sizeof(*rids));
	uint8_t *released = malloc(n);
	unsigned n_todo = 0, n_orders = 0, n_pub = 0;
	struct os_batch_result br;
	char err[512];
	int rc = -ENOMEM;

	if (todo == NULL || orders == NULL || pub == NULL || res == NULL || rids == NULL ||
		released == NULL)
		goto out;
	for (unsigned i = 0; i < n; i++) {
		if (!e[i].valid) {
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"event %" PRIu32 ": outbox entry %" PRIu64 "-%" PRIu64
				" is malformed or deleted; acknowledged without an order",
				event, e[i].id_ms, e[i].id_seq);
			w->st.skipped++;
			continue;
		}
		rids[n_todo] = e[i].reservation_id;
		todo[n_todo++] = e[i];
	}
	/* A reservation released after a refused batch must never become an order later. */
	if (n_todo > 0) {
		unsigned k = 0;

		rc = rs_released_check(w->rs, event, rids, n_todo, released);
		if (rc != 0)
			goto fail;
		for (unsigned i = 0; i < n_todo; i++) {
			if (released[i])
				w->st.skipped++;
			else
				todo[k++] = todo[i];
		}
		n_todo = k;
	}
	if (n_todo > 0) {
		rc = os_write_batch(w->os, event, todo, n_todo, orders, &n_orders, &br, w->commit_hook,
			err, sizeof(err));
		if (rc != 0) {
			LOG_RL(LOG_LEVEL_WARN, 5000, "event %" PRIu32 ": %u orders not written: %s",
				event, n_todo, err);
			goto fail;
		}
		if (br.conflict) {
			unsigned n_res;

			w->st.conflicts++;
			LOG_RL(LOG_LEVEL_ERR, 5000,
				"event %" PRIu32 ": PostgreSQL has less stock than Redis handed out; "
				"%u reservation(s) released back to Redis (reconcile the event)",
				event, n_todo - n_orders);
			rc = ow_release_refused(
				w, event, todo, n_todo, orders, n_orders, res, &n_res);
			if (rc != 0)
				goto fail;
			if (w->link != NULL && n_res > 0)
				ow_link_results(w->link, res, n_res);
		} else {
			w->st.batches++;
			w->st.orders += br.inserted;
			w->st.redelivered += br.existing;
		}
		/* Every pending order of the batch is published, also after a redelivery: the
		 * first delivery may have died between COMMIT and publishing. */
		for (unsigned i = 0; i < n_orders; i++) {
			if (!orders[i].pending)
				continue;
			pub[n_pub] = (struct rs_order_result){
				.user = orders[i].user,
				.reservation_id = orders[i].reservation_id,
				.order_id = orders[i].order_id,
				.pay_deadline_ms = orders[i].pay_deadline_ms,
			};
			res[n_pub] = (struct wire_result){
				.reservation_id = orders[i].reservation_id,
				.user = orders[i].user,
				.order_id = orders[i].order_id,
				.pay_deadline_ms = orders[i].pay_deadline_ms,
				.event = event,
				.verdict = WIRE_V_ORDERED,
			};
			n_pub++;
		}
		if (n_pub > 0) {
			rc = rs_results_ordered(w->rs, event, pub, n_pub);
			if (rc != 0)
				goto fail;
			if (w->link != NULL)
				ow_link_results(w->link, res, n_pub);
		}
		if (!br.conflict && n_orders + 0u < n_todo)
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"event %" PRIu32 ": %u reservation(s) have no order: their user holds "
				"another order of the event",
				event, n_todo - n_orders);
	}
	rc = rs_outbox_ack(w->rs, event, w->group, e, n);
	if (rc >= 0) {
		rc = 0;
		goto out;
	}
fail:
	w->st.errors++;
	if (rc == 0)
		rc = -EIO;
out:
	free(todo);
	free(orders);
	free(pub);
	free(res);
	free(rids);
	free(released);
	return rc;
}
