/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/outbox_reader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "store/store_keys.h"

struct outbox_reader_event {
	uint32_t id;
	bool open;
	bool grouped;	    /* the consumer group exists */
	/* Closed, nothing new, nothing pending: read once per events refresh only (recheck). */
	bool drained;
	bool recheck;
	unsigned per_entry; /* reservations per entry in the last read or claim */
	char cursor[48];
};

struct outbox_reader {
	struct store *rs;
	char group[64];
	char consumer[128];
	unsigned n;
	struct outbox_reader_event ev[OUTBOX_READER_EVENTS_MAX];
};

struct outbox_reader *
outbox_reader_open(struct store *rs, const char *group, const char *consumer)
{
	struct outbox_reader *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->rs = rs;
	snprintf(r->group, sizeof(r->group), "%s", group);
	snprintf(r->consumer, sizeof(r->consumer), "%s", consumer);
	return r;
}

void
outbox_reader_close(struct outbox_reader *r)
{
	free(r);
}

int
outbox_reader_set_events(struct outbox_reader *r, const uint32_t *ids, const bool *open, unsigned n)
{
	struct outbox_reader_event *next = calloc(OUTBOX_READER_EVENTS_MAX, sizeof(*next));
	int first_err = 0;

	if (next == NULL)
		return -ENOMEM;
	if (n > OUTBOX_READER_EVENTS_MAX)
		n = OUTBOX_READER_EVENTS_MAX;
	for (unsigned i = 0; i < n; i++) {
		struct outbox_reader_event *e = &next[i];

		e->id = ids[i];
		/* Until an entry is seen, assume the largest reserve.lua writes. */
		e->per_entry = RS_OUTBOX_ENTRY_RESERVATIONS;
		snprintf(e->cursor, sizeof(e->cursor), "0-0");
		for (unsigned j = 0; j < r->n; j++)
			if (r->ev[j].id == ids[i])
				*e = r->ev[j];
		/* A closed sale that opens again (or an event re-listed) is read again. A drained
		 * one gets one more read: a reservation that raced the close (decided before the
		 * window key said closed, or by a control plane that had not heard yet) can reach
		 * the outbox after the writer found it drained, and must still become an order. */
		if (open[i])
			e->drained = false;
		e->recheck = e->drained;
		if (!e->open && open[i])
			LOG_INFO("event %" PRIu32 ": reading its outbox", e->id);
		e->open = open[i];
		if (!e->grouped) {
			int rc = store_outbox_group_create(r->rs, e->id, r->group);

			if (rc == 0)
				e->grouped = true;
			else if (first_err == 0)
				first_err = rc;
		}
	}
	memcpy(r->ev, next, n * sizeof(*next));
	r->n = n;
	free(next);
	return first_err;
}

unsigned
outbox_reader_n_events(const struct outbox_reader *r)
{
	return r->n;
}

uint32_t
outbox_reader_event_id(const struct outbox_reader *r, unsigned i)
{
	return r->ev[i].id;
}

/* Entries to ask for to get about want reservations. */
static unsigned
outbox_reader_count(const struct outbox_reader_event *e, unsigned want)
{
	unsigned c = (want + e->per_entry - 1) / e->per_entry;

	return c < 1 ? 1 : c > RS_BATCH_MAX ? RS_BATCH_MAX : c;
}

/* Learns the reservations per entry from what a read or claim gave. */
static void
outbox_reader_learn(struct outbox_reader_event *e, const struct store_outbox_buf *out)
{
	if (out->entries > 0)
		e->per_entry = (out->n + out->entries - 1) / out->entries;
	if (e->per_entry == 0)
		e->per_entry = 1;
}

/*
 * After a read or claim that gave rc: a group that is gone (Redis lost the outbox, and
 * reserve.lua's next XADD made the stream again without it) is made again at the next
 * outbox_reader_set_events(), from the stream's start (a redelivery makes nothing twice).
 */
static void
outbox_reader_lost_group(struct outbox_reader_event *e, int rc)
{
	if (rc != -ENOENT || !e->grouped)
		return;
	LOG_WARN("event %" PRIu32 ": the outbox's consumer group is gone (Redis lost it?); "
		 "making it again",
		e->id);
	e->grouped = false;
}

int
outbox_reader_read(struct outbox_reader *r, unsigned i, unsigned want, struct store_outbox_buf *out)
{
	struct outbox_reader_event *e = &r->ev[i];
	uint64_t pending, ms, seq;
	int n;

	out->n = 0;
	out->entries = 0;
	if (!e->grouped || (e->drained && !e->recheck))
		return 0;
	n = store_outbox_read(r->rs, e->id, r->group, r->consumer, outbox_reader_count(e, want), out);
	e->recheck = false; /* once per refresh, whatever it gave */
	outbox_reader_lost_group(e, n);
	if (n > 0)
		outbox_reader_learn(e, out);
	if (n > 0 && e->drained) {
		LOG_NOTICE("event %" PRIu32 ": closed, but %u reservation(s) reached its outbox "
			   "after it was drained (decided while the close was under way); writing "
			   "them",
			e->id, out->n);
		e->drained = false;
	}
	if (n == 0 && !e->open && !e->drained &&
		store_outbox_pending(r->rs, e->id, r->group, &pending, &ms, &seq) == 0 &&
		pending == 0) {
		LOG_INFO("event %" PRIu32 ": closed and its outbox is drained", e->id);
		e->drained = true;
	}
	return n;
}

int
outbox_reader_claim(struct outbox_reader *r, unsigned i, uint64_t min_idle_ms, unsigned want,
	struct store_outbox_buf *out, bool *done)
{
	struct outbox_reader_event *e = &r->ev[i];
	int n;

	*done = true;
	out->n = 0;
	out->entries = 0;
	out->deleted = 0; /* this claim's only: the buffer may hold another event's count */
	if (!e->grouped)
		return 0;
	n = store_outbox_claim(r->rs, e->id, r->group, r->consumer, min_idle_ms, e->cursor,
		sizeof(e->cursor), outbox_reader_count(e, want), out);
	outbox_reader_lost_group(e, n);
	if (n < 0) {
		snprintf(e->cursor, sizeof(e->cursor), "0-0");
	} else {
		*done = strcmp(e->cursor, "0-0") == 0;
		outbox_reader_learn(e, out);
	}
	return n;
}
