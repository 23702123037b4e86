/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_OW_FEED_H
#define FG_OW_FEED_H
/*
 * Feeding the writer: the reservations of outbox entries, read new or claimed from a writer
 * taken for dead, go to ow_writer_write() in batches of at most batch_size, each paced by the
 * rate cap (max_rate).
 */
#include <stdbool.h>

#include "order-writer/ow_ctx.h"

/*
 * One pass over every event's new entries. Returns true when any were read (their batches are
 * written or failed: a failed one stays pending and is claimed later). Stops early on *c->stop.
 */
bool ow_feed_read(struct ow_ctx *c);

/*
 * Claims the entries pending longer than claim_idle on every event and writes them (at most
 * 1000 claims per event and call: a scan that keeps failing is taken up again at the next
 * call). Stops early on *c->stop.
 */
void ow_feed_claim(struct ow_ctx *c);

/*
 * Nothing was read: finishes the batch in flight and waits the poll interval (a signal cuts it
 * short).
 */
void ow_feed_idle(struct ow_ctx *c);

#endif
