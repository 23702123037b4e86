/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_OW_WRITER_H
#define FG_OW_WRITER_H
/*
 * One batch of reservations of one event's outbox, from Redis to PostgreSQL and back: released
 * reservations are skipped, the rest written as orders in one transaction (order_store), the
 * orders published (result hash "O:..." and RESULT ORDERED records to the control plane), and
 * only then the entries it completes acknowledged. Whatever fails before the acknowledgement
 * leaves the entries pending, and their redelivery inserts nothing twice.
 *
 * An outbox entry holds one or more reservations, and a batch holds consecutive reservations of
 * the entries of one read, so an entry can span batches: it is acknowledged with the batch that
 * holds its last reservation, when every batch that held a part of it succeeded. After a batch
 * fails (its COMMIT, or publishing it), no later batch acknowledges the entry it shares with
 * them (until that entry is delivered again from its start): such entries stay pending and are
 * claimed again whole. After a failed COMMIT the caller gives no more of that read
 * (ow_writer_write() returns the error).
 *
 * Batches overlap: ow_writer_write() sends its batch to PostgreSQL and returns while
 * PostgreSQL inserts and commits it. One batch is in flight on each connection (os and more[]):
 * one inserts while another's COMMIT waits for the disk (the stock row is the only thing they
 * share, updated last). When all are busy, the next call waits for the oldest COMMIT and hands
 * that batch to the publisher: a thread with its own Redis connection (publish_rs; without one, the
 * call itself) that writes the results and acknowledges the entries, batch after batch in the
 * order they were sent, while this thread reads the next entries and PostgreSQL writes. The
 * RESULT records of a published batch go to the control plane from this thread, at the next
 * call. ow_writer_flush() completes every batch in flight and waits until all are published.
 *
 * When PostgreSQL refuses the stock decrement (it holds less stock than Redis handed out),
 * nothing of the batch is committed; its reservations whose users hold no order of the event are
 * released in Redis (release.lua: stock back, result "S:<rid>") so that no stock is stranded,
 * and then acknowledged; with [redis] wait_replicas only once the replicas hold the releases
 * (else the batch fails and its entries stay pending; their redelivery skips what was released).
 */
#include <stdint.h>

#include "store/store_outbox.h"
#include "pg/pg_orders.h"
#include "order-writer/ow_config.h"
#include "order-writer/ow_link.h"

struct ow_writer_stats {
	uint64_t batches;     /* committed */
	uint64_t orders;      /* inserted */
	uint64_t redelivered; /* reservations whose order existed */
	uint64_t conflicts;   /* batches refused by the stock check */
	uint64_t released;    /* reservations released after a conflict */
	uint64_t skipped;     /* reservations without an order: released before, malformed */
	uint64_t errors;      /* batches left pending after an error */
	/* Reservations whose id another buyer's order has too (data planes sharing a dp id): each
	 * kept as its own order, and logged. */
	uint64_t rid_shared;
};

struct ow_writer_slots;

struct ow_writer {
	struct store *rs;
	/* Another connection, for the publisher thread; NULL: ow_writer_write() publishes. */
	struct store *publish_rs;
	struct pg_orders *os;
	/* More connections for batches, more[0..n_more): one batch in flight on each and on os. */
	struct pg_orders *more[OW_CONFIG_CONNECTIONS_MAX - 1];
	unsigned n_more;
	struct ow_link *link; /* may be NULL */
	const char *group;
	void (*commit_hook)(void); /* the test hook, run once after the first COMMIT; may be NULL */
	struct ow_writer_stats st;
	struct ow_writer_slots *slots; /* allocated by the first batch; freed by ow_writer_free() */
};

/*
 * Takes n (1..RS_BATCH_MAX) consecutive reservations of event's outbox that were just delivered
 * or claimed: sends the RESULT records of the batches published meanwhile; when every connection
 * has a batch in flight, completes the oldest (waits for its COMMIT) and hands it to the
 * publisher; sends these to PostgreSQL. The records are copied. Returns 0, or a negative errno
 * when the oldest batch or this one failed (logged; its entries stay pending and are claimed
 * again): the caller then gives no more of the same read.
 */
int ow_writer_write(struct ow_writer *w, uint32_t event, const struct store_outbox_rec *e, unsigned n);

/*
 * Completes the batches in flight, if any, oldest first (waits for each COMMIT), and waits until
 * every batch is published and its entries acknowledged. Call it before the store is used for
 * anything else and before sleeping. Returns 0 or a negative errno (the entries stay pending).
 */
int ow_writer_flush(struct ow_writer *w);

/* Completes the batches in flight, stops the publisher and frees what the writer allocated. */
void ow_writer_free(struct ow_writer *w);

#endif
