/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/expiry.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "store/store_event.h"
#include "store/store_release.h"
#include "store/store_wait.h"

/* The most items of one release handed to the waiting list (the rest goes to the stock). */
#define EXPIRY_WAITERS_MAX 16

/* Applies releases to Redis; *more is set when a full batch was read. */
static int
expiry_apply(struct pg_orders *os, struct store *rs, struct ow_link *link, unsigned batch,
	struct expiry_stats *st, bool *more)
{
	struct pg_orders_release *rel = malloc(batch * sizeof(*rel));
	uint64_t *done = malloc(batch * sizeof(*done));
	/* A release's own result and one per item it handed to the draw's waiting list. */
	struct wire_result *res = malloc((size_t)batch * (1 + EXPIRY_WAITERS_MAX) * sizeof(*res));
	struct store_waiter to[EXPIRY_WAITERS_MAX];
	struct wire_stock *restock = malloc(batch * sizeof(*restock));
	unsigned n = 0, n_done = 0, n_res = 0, n_restock = 0;
	char err[512];
	int rc = -ENOMEM;

	*more = false;
	if (rel == NULL || done == NULL || res == NULL || restock == NULL)
		goto out;
	rc = pg_orders_releases_pending(os, rel, batch, &n, err, sizeof(err));
	if (rc != 0) {
		LOG_RL(LOG_LEVEL_WARN, 5000, "expiry: %s", err);
		goto out;
	}
	uint64_t mark = store_wait_mark(rs);

	for (unsigned i = 0; i < n; i++) {
		struct store_release_as as = {
			.verdict = rel[i].cancelled ? WIRE_V_CANCELLED : WIRE_V_EXPIRED,
			.order_id = rel[i].order_id,
			.pay_deadline_ms = rel[i].pay_deadline_ms,
		};
		unsigned n_to = 0;
		int r = store_release_to(rs, rel[i].event, rel[i].reservation_id, rel[i].user,
			rel[i].n, &as, to, EXPIRY_WAITERS_MAX, &n_to);

		if (r == -ENOENT || r == -EINVAL) {
			/* Nothing Redis could give back: marking it keeps it from blocking the
			 * loop. */
			LOG_WARN("expiry: order %" PRIu64 " of event %" PRIu32 ": user %" PRIu64
				 " is not a buyer in Redis; its release changes nothing there",
				rel[i].order_id, rel[i].event, rel[i].user);
		} else if (r < 0) {
			rc = r;
			break;
		} else if (r == 0) {
			st->repeated++;
		} else {
			st->applied++;
			res[n_res++] = (struct wire_result){
				.reservation_id = rel[i].reservation_id,
				.user = rel[i].user,
				.order_id = rel[i].order_id,
				.pay_deadline_ms = rel[i].pay_deadline_ms,
				.event = rel[i].event,
				.verdict = as.verdict,
			};
			/* The item went to the next entrant by rank on the draw's waiting list: its
			 * poll turns reserved (its order follows from the outbox, as any other). */
			for (unsigned k = 0; k < n_to; k++) {
				st->to_waiting++;
				res[n_res++] = (struct wire_result){
					.reservation_id = to[k].reservation_id,
					.user = to[k].user,
					.event = rel[i].event,
					.verdict = WIRE_V_RESERVED,
					.rank = (uint32_t)to[k].rank,
				};
			}
			bool seen = false;

			for (unsigned j = 0; j < n_restock && !seen; j++)
				seen = restock[j].event == rel[i].event;
			if (!seen)
				restock[n_restock++] = (struct wire_stock){.event = rel[i].event};
		}
		done[n_done++] = rel[i].id;
	}
	/* With [redis] wait_replicas, a release is marked applied only once the replicas hold
	 * what this round wrote and read (a release applied by an earlier round reads "released
	 * before"), all on one connection: a failover to a replica without it would otherwise
	 * never give its stock back to Redis. Unmarked, it is applied again next round, which
	 * gives the stock once. */
	if (n_done > 0) {
		int w = store_wait_reads_since(rs, mark);

		if (w != 0) {
			LOG_RL(LOG_LEVEL_WARN, 5000,
				"expiry: %u release(s) applied to Redis, not confirmed by its "
				"replicas (%s): applied again next round",
				n_done, strerror(-w));
			rc = rc != 0 ? rc : w;
			n_done = 0;
		}
	}
	if (n_done > 0) {
		int r = pg_orders_releases_applied(os, done, n_done, err, sizeof(err));

		if (r != 0) {
			LOG_RL(LOG_LEVEL_WARN, 5000, "expiry: %s", err);
			rc = rc != 0 ? rc : r;
		}
	}
	if (link != NULL && n_res > 0)
		ow_link_results(link, res, n_res);
	for (unsigned j = 0; j < n_restock; j++) {
		struct store_event_state es;

		if (store_event_state(rs, restock[j].event, &es) == 0)
			restock[j].stock_left = es.stock > 0 ? (uint32_t)es.stock : 0;
	}
	if (link != NULL && n_restock > 0)
		ow_link_restock(link, restock, n_restock);
	*more = rc == 0 && n == batch;
out:
	free(rel);
	free(done);
	free(res);
	free(restock);
	return rc;
}

int
expiry_sweep(struct pg_orders *os, struct store *rs, struct ow_link *link, unsigned batch,
	unsigned rounds, struct expiry_stats *st)
{
	char err[512];
	int rc;

	for (unsigned i = 0; i < rounds; i++) {
		unsigned expired;

		rc = pg_orders_expire(os, batch, &expired, err, sizeof(err));
		if (rc != 0) {
			st->errors++;
			LOG_RL(LOG_LEVEL_WARN, 5000, "expiry: %s", err);
			return rc;
		}
		st->expired += expired;
		if (expired < batch)
			break;
	}
	return expiry_releases(os, rs, link, batch, rounds, st);
}

int
expiry_releases(struct pg_orders *os, struct store *rs, struct ow_link *link, unsigned batch,
	unsigned rounds, struct expiry_stats *st)
{
	bool more;
	int rc;

	for (unsigned i = 0; i < rounds; i++) {
		rc = expiry_apply(os, rs, link, batch, st, &more);
		if (rc != 0) {
			st->errors++;
			if (rc != -ENOTCONN)
				LOG_RL(LOG_LEVEL_WARN, 5000,
					"expiry: applying releases to Redis: %s", strerror(-rc));
			return rc;
		}
		if (!more)
			break;
	}
	return 0;
}
