/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_OW_OUTBOX_READER_H
#define FG_OW_OUTBOX_READER_H
/*
 * Which outboxes the order writer reads, and reading them: one consumer group on each event's
 * outbox stream, this writer a consumer named host-pid. An entry holds one or more
 * reservations; a read asks for as many entries as make about the reservations the caller
 * wants, from the reservations per entry seen last. New entries are read with XREADGROUP;
 * entries pending too long (their writer died, or this one failed to write them) are claimed
 * with XAUTOCLAIM, at start and periodically. A closed event is read until its outbox has
 * nothing new and nothing pending, then once per outbox_reader_set_events() call only (a
 * reservation that raced the close may still come).
 */
#include <stdbool.h>
#include <stdint.h>

#include "store/store_outbox.h"

#define OUTBOX_READER_EVENTS_MAX 1024

struct outbox_reader;

/* group and consumer are copied. Returns the reader or NULL (out of memory). */
struct outbox_reader *outbox_reader_open(
	struct store *rs, const char *group, const char *consumer);

void outbox_reader_close(struct outbox_reader *r);

/*
 * Replaces the event list with ids[0..n) (open[i]: the sale is open), keeping what is known of
 * events already listed, and creates the group on the new ones. Returns 0 or the first error
 * (an event whose group could not be created is tried again at the next call).
 */
int outbox_reader_set_events(
	struct outbox_reader *r, const uint32_t *ids, const bool *open, unsigned n);

/* The number of events read, and the id of event i. */
unsigned outbox_reader_n_events(const struct outbox_reader *r);
uint32_t outbox_reader_event_id(const struct outbox_reader *r, unsigned i);

/*
 * Reads new entries of event i into out (its records are replaced): as many entries as make
 * about want reservations (1..RS_BATCH_MAX) at the event's recent reservations per entry, at
 * least one, so out may hold more or fewer than want. Returns how many entries (0: none, or the
 * event is drained), or a negative errno.
 */
int outbox_reader_read(
	struct outbox_reader *r, unsigned i, unsigned want, struct store_outbox_buf *out);

/*
 * Claims entries of event i pending for min_idle_ms or more into out, as many as
 * outbox_reader_read() would read, going on from where the previous call for this event stopped.
 * *done is set when the scan of event i reached the end (the next call starts again from the
 * beginning). out->deleted is this claim's count of entries deleted while pending (0 when it
 * claimed nothing: no group, or a failure). Returns how many entries or a negative errno.
 */
int outbox_reader_claim(struct outbox_reader *r, unsigned i, uint64_t min_idle_ms, unsigned want,
	struct store_outbox_buf *out, bool *done);

#endif
