/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/ow_feed.h"

#include <inttypes.h>
#include <time.h>

#include "common/log.h"
#include "common/now.h"

static void
ow_feed_sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};

	nanosleep(&ts, NULL); /* a signal cuts it short: the loop then sees the stop flag */
}

/*
 * The rate cap: batch i+1 starts no earlier than batch i's start plus its size / max_rate, so
 * over any run of batches the orders committed per second stay at or below the cap (idle time
 * earns no burst).
 */
static void
ow_feed_pace(struct ow_ctx *c, unsigned n)
{
	uint64_t now;

	if (c->cfg.max_rate == 0)
		return;
	now = now_mono_ns();
	while (now < c->next_commit_ns && !*c->stop) {
		ow_feed_sleep_ns(c->next_commit_ns - now);
		now = now_mono_ns();
	}
	c->next_commit_ns = now + (uint64_t)n * 1000000000u / c->cfg.max_rate;
}

/*
 * Writes the reservations of one read or claim in batches of at most batch_size, as even as
 * that allows (1,024 reservations with batches of 500: 3 of 342, not 500, 500 and 24), each
 * paced by the rate cap. Stops at the first failure: the entries not acknowledged stay pending
 * and are claimed again whole. Returns 0 or the error.
 */
static int
ow_feed_write(struct ow_ctx *c, uint32_t event, const struct store_outbox_buf *b)
{
	unsigned parts = (b->n + c->cfg.batch_size - 1) / c->cfg.batch_size;

	for (unsigned done = 0; done < b->n && !*c->stop;) {
		unsigned left = parts-- > 0 ? (b->n - done + parts) / (parts + 1) : b->n - done;
		int rc;

		ow_feed_pace(c, left);
		rc = ow_writer_write(&c->w, event, b->rec + done, left);
		if (rc != 0)
			return rc;
		done += left;
	}
	return 0;
}

void
ow_feed_claim(struct ow_ctx *c)
{
	for (unsigned i = 0; i < outbox_reader_n_events(c->reader) && !*c->stop; i++) {
		bool done = false;

		/* Bounded: a scan that keeps failing is taken up again at the next interval. */
		for (unsigned round = 0; round < 1000 && !done && !*c->stop; round++) {
			int n = outbox_reader_claim(c->reader, i, c->cfg.claim_idle_ms,
				c->cfg.batch_size, &c->buf, &done);

			if (n >= 0 && c->buf.deleted > 0)
				LOG_ERR("event %" PRIu32 ": %u outbox entries were deleted while "
					"pending (XDEL or XTRIM by hand?): Redis dropped them, and "
					"no order is made of their reservations; run flashgatectl "
					"reconcile %" PRIu32,
					outbox_reader_event_id(c->reader, i), c->buf.deleted,
					outbox_reader_event_id(c->reader, i));
			if (n <= 0)
				break;
			LOG_INFO("event %" PRIu32 ": claimed %d pending outbox entries (%u "
				 "reservations)",
				outbox_reader_event_id(c->reader, i), n, c->buf.n);
			if (ow_feed_write(c, outbox_reader_event_id(c->reader, i), &c->buf) != 0)
				break;
		}
	}
}

bool
ow_feed_read(struct ow_ctx *c)
{
	bool work = false;

	for (unsigned i = 0; i < outbox_reader_n_events(c->reader) && !*c->stop; i++) {
		int n = outbox_reader_read(c->reader, i, c->cfg.batch_size, &c->buf);

		if (n <= 0)
			continue;
		work = true;
		ow_feed_write(c, outbox_reader_event_id(c->reader, i), &c->buf);
	}
	return work;
}

void
ow_feed_idle(struct ow_ctx *c)
{
	ow_writer_flush(&c->w);
	ow_feed_sleep_ns((uint64_t)c->cfg.poll_ms * 1000000u);
}
