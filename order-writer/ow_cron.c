/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/ow_cron.h"

#include <inttypes.h>

#include "common/log.h"
#include "order-writer/ow_feed.h"

#define OW_CRON_STATS_MS 60000

/* The events whose outboxes are read: those PostgreSQL has active. */
static void
ow_cron_refresh_events(struct ow_ctx *c)
{
	static uint32_t ids[OUTBOX_READER_EVENTS_MAX];
	static bool open[OUTBOX_READER_EVENTS_MAX];
	unsigned n;
	char err[512];

	if (pg_orders_active_events(
		    c->os, ids, open, OUTBOX_READER_EVENTS_MAX, &n, err, sizeof(err)) != 0) {
		LOG_RL(LOG_LEVEL_WARN, 10000, "%s", err);
		return;
	}
	outbox_reader_set_events(c->reader, ids, open, n);
}

/* Deletes the acknowledged entries of every event's outbox. */
static void
ow_cron_trim(struct ow_ctx *c)
{
	for (unsigned i = 0; i < outbox_reader_n_events(c->reader); i++) {
		uint32_t event = outbox_reader_event_id(c->reader, i);
		uint64_t trimmed = 0;

		if (store_outbox_trim(c->rs, event, c->cfg.group, &trimmed) == 0 && trimmed > 0)
			LOG_DEBUG("event %" PRIu32 ": trimmed %" PRIu64
				  " acknowledged outbox entries",
				event, trimmed);
	}
}

void
ow_cron_log_stats(const struct ow_ctx *c)
{
	LOG_NOTICE("orders %" PRIu64 " in %" PRIu64 " batches, redelivered %" PRIu64
		   ", conflicts %" PRIu64 " (released %" PRIu64 "), skipped %" PRIu64
		   ", errors %" PRIu64 ", reservation ids shared by two buyers %" PRIu64
		   "; expired %" PRIu64 ", releases applied %" PRIu64 " (repeated %" PRIu64
		   "); paid results %" PRIu64 " (kept %" PRIu64 ")",
		c->w.st.orders, c->w.st.batches, c->w.st.redelivered, c->w.st.conflicts,
		c->w.st.released, c->w.st.skipped, c->w.st.errors, c->w.st.rid_shared,
		c->ex.expired, c->ex.applied, c->ex.repeated, c->results.paid, c->results.kept);
}

void
ow_cron(struct ow_ctx *c, uint64_t now_ms)
{
	if (now_ms >= c->next_events_ms) {
		ow_writer_flush(&c->w);
		ow_cron_refresh_events(c);
		c->next_events_ms = now_ms + c->cfg.events_refresh_ms;
	}
	if (now_ms >= c->next_claim_ms) {
		ow_writer_flush(&c->w);
		ow_feed_claim(c);
		ow_writer_flush(&c->w);
		c->next_claim_ms = now_ms + c->cfg.claim_interval_ms;
	}
	if (now_ms >= c->next_sweep_ms) {
		ow_writer_flush(&c->w);
		expiry_sweep(c->os, c->rs, c->link, c->cfg.sweep_batch, 10, &c->ex);
		c->next_sweep_ms = now_ms + c->cfg.sweep_interval_ms;
	}
	if (now_ms >= c->next_results_ms) {
		/* Cancelled orders' releases, then paid orders' results: each buyer's poll shows
		 * them a results_interval later (the sweep above does the expired ones). */
		ow_writer_flush(&c->w);
		expiry_releases(c->os, c->rs, c->link, c->cfg.sweep_batch, 10, &c->ex);
		ow_results_paid(c->os, c->rs, c->link, c->cfg.sweep_batch, 10, &c->results);
		c->next_results_ms = now_ms + c->cfg.results_interval_ms;
	}
	if (c->cfg.trim_interval_ms != 0 && now_ms >= c->next_trim_ms) {
		if (c->next_trim_ms != 0) {
			ow_writer_flush(&c->w);
			ow_cron_trim(c);
		}
		c->next_trim_ms = now_ms + c->cfg.trim_interval_ms;
	}
	if (now_ms >= c->next_stats_ms) {
		if (c->next_stats_ms != 0 && log_enabled(LOG_LEVEL_INFO))
			ow_cron_log_stats(c);
		c->next_stats_ms = now_ms + OW_CRON_STATS_MS;
	}
}
