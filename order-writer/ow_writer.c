/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/ow_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

/*
 * One batch on its way: read from Redis, sent to PostgreSQL, then published and acknowledged.
 * Its reservations are consecutive ones of the outbox; the entries whose last reservation it
 * holds are acknowledged with it.
 */
struct ow_slot {
	struct order_store *os; /* the connection it was sent on */
	uint32_t event;
	unsigned n;	 /* reservations delivered */
	unsigned n_todo; /* the ones sent to PostgreSQL */
	bool sent;	 /* n_todo > 0 and os_batch_send() succeeded */
	/* The batch before, which held the start of this one's first entry, failed: that entry
	 * is not acknowledged (it stays pending and is claimed again whole). */
	bool skip_first;
	unsigned n_orders; /* after the wait: orders of the batch, inserted or existing */
	struct os_batch_result br;
	struct rs_outbox_rec e[RS_BATCH_MAX];
	struct rs_outbox_rec todo[RS_BATCH_MAX];
	struct rs_outbox_rec ack[RS_BATCH_MAX];
	struct os_order orders[RS_BATCH_MAX];
	struct rs_order_result pub[RS_BATCH_MAX];
	struct wire_result res[RS_BATCH_MAX];
	uint64_t rids[RS_BATCH_MAX];
	uint8_t released[RS_BATCH_MAX];
};

/*
 * The batches in flight, oldest first, one per PostgreSQL connection (w->os and w->more[]),
 * and one more slot for the batch being published while they are.
 */
struct ow_slots {
	struct ow_slot s[OW_CONNECTIONS_MAX + 1];
	struct ow_slot *fifo[OW_CONNECTIONS_MAX];
	unsigned n_fifo;
};

/* Releases the reservations of a refused batch that have no order. Returns 0 or < 0. */
static int
ow_release_refused(struct ow_writer *w, uint32_t event, const struct rs_outbox_rec *e, unsigned n,
	const struct os_order *have, unsigned n_have, struct wire_result *res, unsigned *n_res)
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
			LOG_WARN(
				"event %" PRIu32 ": reservation %" PRIu64 " of user %" PRIu64
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

/*
 * Takes the entries into a slot, drops the malformed and the released ones, and sends the rest
 * to PostgreSQL. Returns 0 (the slot is in flight, or has nothing to write) or < 0 (logged).
 */
static int
ow_start(struct ow_writer *w, struct ow_slot *b, struct order_store *os, uint32_t event,
	const struct rs_outbox_rec *e, unsigned n)
{
	char err[512];
	int rc;

	b->os = os;
	b->event = event;
	b->n = n;
	b->n_todo = 0;
	b->sent = false;
	b->skip_first = false;
	memcpy(b->e, e, n * sizeof(*e));
	for (unsigned i = 0; i < n; i++) {
		if (!e[i].valid) {
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"event %" PRIu32 ": outbox entry %" PRIu64 "-%" PRIu64
				" is deleted or its reservation %u is malformed; acknowledged "
				"without an order",
				event, e[i].id_ms, e[i].id_seq, e[i].index);
			w->st.skipped++;
			continue;
		}
		b->rids[b->n_todo] = e[i].reservation_id;
		b->todo[b->n_todo++] = e[i];
	}
	if (b->n_todo == 0)
		return 0;
	/* A reservation released after a refused batch must never become an order later. */
	rc = rs_released_check(w->rs, event, b->rids, b->n_todo, b->released);
	if (rc != 0)
		return rc;
	unsigned k = 0;

	for (unsigned i = 0; i < b->n_todo; i++) {
		if (b->released[i])
			w->st.skipped++;
		else
			b->todo[k++] = b->todo[i];
	}
	b->n_todo = k;
	if (k == 0)
		return 0;
	rc = os_batch_send(os, event, b->todo, k, err, sizeof(err));
	if (rc != 0) {
		LOG_RL(LOG_LEVEL_WARN, 5000, "event %" PRIu32 ": %u orders not written: %s", event,
			k, err);
		return rc;
	}
	b->sent = true;
	return 0;
}

/*
 * Waits for the slot's COMMIT (or refusal: its new reservations then go back to Redis).
 * Returns 0, or < 0 when its entries stay pending (logged).
 */
static int
ow_wait(struct ow_writer *w, struct ow_slot *b)
{
	char err[512];
	int rc;

	b->n_orders = 0;
	memset(&b->br, 0, sizeof(b->br));
	if (!b->sent)
		return 0;
	b->sent = false;
	rc = os_batch_wait(
		b->os, b->orders, &b->n_orders, &b->br, w->commit_hook, err, sizeof(err));
	if (rc != 0) {
		LOG_RL(LOG_LEVEL_WARN, 5000, "event %" PRIu32 ": %u orders not written: %s",
			b->event, b->n_todo, err);
		return rc;
	}
	if (b->br.conflict) {
		unsigned n_res;

		w->st.conflicts++;
		LOG_RL(LOG_LEVEL_ERR, 5000,
			"event %" PRIu32 ": PostgreSQL has less stock than Redis handed out; "
			"%u reservation(s) released back to Redis (reconcile the event)",
			b->event, b->n_todo - b->n_orders);
		rc = ow_release_refused(
			w, b->event, b->todo, b->n_todo, b->orders, b->n_orders, b->res, &n_res);
		if (rc != 0)
			return rc;
		if (w->link != NULL && n_res > 0)
			ow_link_results(w->link, b->res, n_res);
	} else {
		w->st.batches++;
		w->st.orders += b->br.inserted;
		w->st.redelivered += b->br.existing;
	}
	return 0;
}

/*
 * Publishes the pending orders of a slot that was waited for (result hash, RESULT records) and
 * acknowledges the entries it completes. Returns 0 when acknowledged, < 0 when they stay
 * pending.
 */
static int
ow_publish(struct ow_writer *w, struct ow_slot *b)
{
	unsigned n_pub = 0, n_ack = 0;
	int rc;

	/* An entry is acknowledged with the batch of its last reservation: the batches before
	 * held the rest of it and succeeded (else this one would not have been given it, or
	 * skip_first is set). */
	for (unsigned i = 0; i < b->n; i++) {
		const struct rs_outbox_rec *r = &b->e[i];

		if (!rs_outbox_rec_last(r))
			continue;
		if (b->skip_first && b->e[0].index > 0 && r->id_ms == b->e[0].id_ms &&
			r->id_seq == b->e[0].id_seq)
			continue;
		b->ack[n_ack++] = *r;
	}
	/* Every pending order of the batch is published, also after a redelivery: the first
	 * delivery may have died between COMMIT and publishing. */
	for (unsigned i = 0; i < b->n_orders; i++) {
		const struct os_order *o = &b->orders[i];

		if (!o->pending)
			continue;
		b->pub[n_pub] = (struct rs_order_result){
			.user = o->user,
			.reservation_id = o->reservation_id,
			.order_id = o->order_id,
			.pay_deadline_ms = o->pay_deadline_ms,
		};
		b->res[n_pub] = (struct wire_result){
			.reservation_id = o->reservation_id,
			.user = o->user,
			.order_id = o->order_id,
			.pay_deadline_ms = o->pay_deadline_ms,
			.event = b->event,
			.verdict = WIRE_V_ORDERED,
		};
		n_pub++;
	}
	if (b->n_todo > 0 && !b->br.conflict && b->n_orders < b->n_todo)
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"event %" PRIu32 ": %u reservation(s) have no order: their user holds "
			"another order of the event",
			b->event, b->n_todo - b->n_orders);
	/* The results and the acknowledgement in one round trip, the results first. */
	rc = rs_results_ordered_ack(w->rs, b->event, w->group, b->pub, n_pub, b->ack, n_ack);
	if (rc < 0)
		return rc;
	if (w->link != NULL && n_pub > 0)
		ow_link_results(w->link, b->res, n_pub);
	return 0;
}

/* Whether slot b is a batch in flight. */
static bool
ow_slot_busy(const struct ow_slots *q, const struct ow_slot *b)
{
	for (unsigned i = 0; i < q->n_fifo; i++)
		if (q->fifo[i] == b)
			return true;
	return false;
}

/* Whether connection os has a batch in flight. */
static bool
ow_store_busy(const struct ow_slots *q, const struct order_store *os)
{
	for (unsigned i = 0; i < q->n_fifo; i++)
		if (q->fifo[i]->os == os)
			return true;
	return false;
}

/* A slot neither in flight nor the one being retired. */
static struct ow_slot *
ow_free_slot(struct ow_slots *q, const struct ow_slot *retiring)
{
	for (unsigned i = 0; i < OW_CONNECTIONS_MAX + 1; i++) {
		struct ow_slot *b = &q->s[i];

		if (b != retiring && !ow_slot_busy(q, b))
			return b;
	}
	return NULL; /* not reached: at most one in flight per connection and one retiring */
}

/* A connection with no batch in flight (one exists when the queue is not full). */
static struct order_store *
ow_free_store(const struct ow_writer *w, const struct ow_slots *q)
{
	if (!ow_store_busy(q, w->os))
		return w->os;
	for (unsigned i = 0; i < w->n_more; i++)
		if (!ow_store_busy(q, w->more[i]))
			return w->more[i];
	return w->os; /* not reached: the queue is not full */
}

/* After a failed batch: no batch in flight acknowledges an entry that began before it. */
static void
ow_skip_first_all(struct ow_slots *q)
{
	for (unsigned i = 0; i < q->n_fifo; i++)
		q->fifo[i]->skip_first = true;
}

/* Takes the oldest batch in flight off the queue and waits for its COMMIT. */
static struct ow_slot *
ow_pop(struct ow_writer *w, int *rc)
{
	struct ow_slots *q = w->slots;
	struct ow_slot *b = q->fifo[0];

	memmove(q->fifo, q->fifo + 1, (q->n_fifo - 1) * sizeof(q->fifo[0]));
	q->fifo[--q->n_fifo] = NULL;
	*rc = ow_wait(w, b);
	return b;
}

int
ow_write_batch(struct ow_writer *w, uint32_t event, const struct rs_outbox_rec *e, unsigned n)
{
	struct ow_slot *old = NULL, *b;
	struct ow_slots *q;
	unsigned depth = 1 + w->n_more;
	int rc_prev = 0, rc;

	if (n == 0 || n > RS_BATCH_MAX)
		return -EINVAL;
	if (w->slots == NULL && (w->slots = calloc(1, sizeof(*w->slots))) == NULL)
		return -ENOMEM;
	q = w->slots;
	/* A connection takes one statement at a time: the oldest batch's COMMIT first. */
	if (q->n_fifo == depth)
		old = ow_pop(w, &rc_prev);
	b = ow_free_slot(q, old);
	rc = ow_start(w, b, ow_free_store(w, q), event, e, n);
	/* This batch is now with PostgreSQL: Redis takes the old one's results meanwhile. */
	if (old != NULL && rc_prev == 0)
		rc_prev = ow_publish(w, old);
	if (rc_prev != 0) {
		w->st.errors++;
		/* An entry can span several batches: the first entry of each batch sent after the
		 * failed one may have started in it. */
		ow_skip_first_all(q);
		b->skip_first = true;
	}
	if (rc != 0) {
		w->st.errors++;
		return rc;
	}
	q->fifo[q->n_fifo++] = b;
	return rc_prev;
}

int
ow_flush(struct ow_writer *w)
{
	int rc = 0;

	while (w->slots != NULL && w->slots->n_fifo > 0) {
		int r;
		struct ow_slot *b = ow_pop(w, &r);

		if (r == 0)
			r = ow_publish(w, b);
		if (r != 0) {
			w->st.errors++;
			ow_skip_first_all(w->slots);
			rc = r;
		}
	}
	return rc;
}

void
ow_writer_free(struct ow_writer *w)
{
	ow_flush(w);
	free(w->slots);
	w->slots = NULL;
}
