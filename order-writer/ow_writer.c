/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/ow_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "store/store_release.h"
#include "store/store_wait.h"

/*
 * One batch on its way: read from Redis, sent to PostgreSQL, then published and acknowledged.
 * Its reservations are consecutive ones of the outbox; the entries whose last reservation it
 * holds are acknowledged with it.
 */
struct ow_writer_slot {
	struct pg_orders *os; /* the connection it was sent on */
	uint32_t event;
	unsigned n;	 /* reservations delivered */
	unsigned n_todo; /* the ones sent to PostgreSQL */
	bool sent;	 /* n_todo > 0 and pg_orders_batch_send() succeeded */
	/* Its COMMIT failed or is unknown: nothing of it is published or acknowledged, and no
	 * later batch acknowledges the entry it shares with them (ow_writer_publish_next()). */
	bool failed;
	int pub_rc;	   /* what publishing it gave: 0 or < 0 (its entries stay pending) */
	unsigned n_pub;	   /* orders published (RESULT records to send) */
	unsigned n_orders; /* after the wait: orders of the batch, inserted or existing */
	struct pg_orders_batch br;
	struct store_outbox_rec e[RS_BATCH_MAX];
	struct store_outbox_rec todo[RS_BATCH_MAX];
	struct store_outbox_rec ack[RS_BATCH_MAX];
	struct pg_orders_row orders[RS_BATCH_MAX];
	struct store_order_result pub[RS_BATCH_MAX];
	struct wire_result res[RS_BATCH_MAX];
	uint64_t rids[RS_BATCH_MAX];
	uint64_t users[RS_BATCH_MAX];
	uint8_t released[RS_BATCH_MAX];
};

/* Slots: one per PostgreSQL connection in flight, and those waiting for or being published. */
#define OW_WRITER_SLOTS (OW_CONFIG_CONNECTIONS_MAX + 3)

/*
 * The batches in flight in PostgreSQL, oldest first, one per connection (w->os and w->more[]),
 * and the ring of batches to publish, in the order they were sent. The publisher (a thread with
 * its own Redis connection, w->publish_rs; without one, ow_writer_write() itself) takes them in
 * that order; the main thread then sends their RESULT records and frees them (ow_writer_reap()), so
 * that ZeroMQ and the counters stay with the main thread.
 */
struct ow_writer_slots {
	struct ow_writer_slot s[OW_WRITER_SLOTS];
	bool used[OW_WRITER_SLOTS];
	struct ow_writer_slot *fifo[OW_CONFIG_CONNECTIONS_MAX];
	unsigned n_fifo;
	/* Under mu: ring[head .. head + n) to publish, the first `published` of them done. */
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct ow_writer_slot *ring[OW_WRITER_SLOTS];
	unsigned head, n, published;
	bool stop;
	bool thread; /* the publisher thread runs */
	pthread_t tid;
	/* Publisher only: an entry that a failed batch holds part of, and later ones do not
	 * acknowledge (it stays pending and is claimed again whole). */
	bool skip;
	uint64_t skip_ms, skip_seq;
};

/*
 * Releases the reservations of a refused batch (sent on os) whose user holds no order of the
 * event; the SOLD_OUT results of those applied go to res[0..*n_res), also when it fails. With
 * [redis] wait_replicas, returns 0 only once the replicas hold what the releases wrote and read
 * on the connection they ran on. Returns 0 or < 0 (the batch's entries must then stay pending).
 */
static int
ow_writer_release_refused(struct ow_writer *w, struct pg_orders *os, uint32_t event,
	const struct store_outbox_rec *e, unsigned n, struct wire_result *res, unsigned *n_res)
{
	uint64_t users[RS_BATCH_MAX];
	uint8_t holds[RS_BATCH_MAX];
	unsigned n_asked = 0;
	uint64_t mark;
	char err[512];
	int rc;

	*n_res = 0;
	if (n == 0 || n > RS_BATCH_MAX)
		return 0;
	for (unsigned i = 0; i < n; i++)
		users[i] = e[i].user;
	/*
	 * Not only this reservation's order (a redelivery): a user holding another order of the
	 * event was decided again by a Redis that lost state (an older one restored, the usual
	 * cause of a conflict too), and that decrement stands for the order's item, as the
	 * writer keeps it when no conflict happens; releasing it would give the item back twice,
	 * now and when the order ends. Reconciliation writes the user's order's field.
	 */
	rc = pg_orders_users_holding(os, event, users, n, holds, err, sizeof(err));
	if (rc != 0) {
		LOG_RL(LOG_LEVEL_WARN, 5000, "event %" PRIu32 ": %s", event, err);
		return rc;
	}
	mark = store_wait_mark(w->rs);
	for (unsigned i = 0; i < n; i++) {
		if (holds[i])
			continue;
		n_asked++;
		/* No order was ever made of it: the buyer is told sold out (PostgreSQL had no
		 * stock left for it), not that an order expired. */
		static const struct store_release_as unordered = {.verdict = WIRE_V_SOLD_OUT};
		rc = store_release(w->rs, event, e[i].reservation_id, e[i].user, 1, &unordered);
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
				.verdict = WIRE_V_SOLD_OUT,
			};
		}
	}
	/*
	 * The entries are acknowledged next, on the publisher's connection: a failover to a
	 * replica that lacks these releases (or the earlier one a "released before" read) would
	 * lose them for good, the buyer's field the bare reservation and its item lost to the
	 * sale. Unconfirmed, the entries stay pending; their redelivery finds what reached Redis
	 * released (store_released_check(), release.lua's "released before") and releases again
	 * only what a failover lost, so each item goes back once.
	 */
	if (n_asked > 0 && (rc = store_wait_reads_since(w->rs, mark)) != 0) {
		LOG_RL(LOG_LEVEL_WARN, 5000,
			"event %" PRIu32 ": the release of %u reservation(s) of a refused batch "
			"not confirmed by Redis's replicas (%s): their entries stay pending and "
			"are released again when delivered again",
			event, n_asked, strerror(-rc));
		return rc;
	}
	return 0;
}

/*
 * Takes the entries into a slot, drops the malformed and the released ones, and sends the rest
 * to PostgreSQL. Returns 0 (the slot is in flight, or has nothing to write) or < 0 (logged).
 */
static int
ow_writer_start(struct ow_writer *w, struct ow_writer_slot *b, struct pg_orders *os, uint32_t event,
	const struct store_outbox_rec *e, unsigned n)
{
	char err[512];
	int rc;

	b->os = os;
	b->event = event;
	b->n = n;
	b->n_todo = 0;
	b->sent = false;
	b->failed = false;
	b->pub_rc = 0;
	b->n_pub = 0;
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
		b->users[b->n_todo] = e[i].user;
		b->todo[b->n_todo++] = e[i];
	}
	if (b->n_todo == 0)
		return 0;
	/* A reservation released after a refused batch must never become an order later. */
	rc = store_released_check(w->rs, event, b->rids, b->users, b->n_todo, b->released);
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
	rc = pg_orders_batch_send(os, event, b->todo, k, err, sizeof(err));
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
ow_writer_wait(struct ow_writer *w, struct ow_writer_slot *b)
{
	char err[512];
	int rc;

	b->n_orders = 0;
	memset(&b->br, 0, sizeof(b->br));
	if (!b->sent)
		return 0;
	b->sent = false;
	rc = pg_orders_batch_wait(
		b->os, b->orders, &b->n_orders, &b->br, w->commit_hook, err, sizeof(err));
	if (rc != 0) {
		LOG_RL(LOG_LEVEL_WARN, 5000, "event %" PRIu32 ": %u orders not written: %s",
			b->event, b->n_todo, err);
		return rc;
	}
	if (b->br.conflict) {
		unsigned n_res;

		w->st.conflicts++;
		rc = ow_writer_release_refused(
			w, b->os, b->event, b->todo, b->n_todo, b->res, &n_res);
		LOG_RL(LOG_LEVEL_ERR, 5000,
			"event %" PRIu32 ": PostgreSQL has less stock than Redis handed out; "
			"%u reservation(s) released back to Redis (reconcile the event)",
			b->event, n_res);
		/* Told at once, also when the entries stay pending (rc): their redelivery finds
		 * these released and tells nothing, as the expiry tells before it marks. */
		if (w->link != NULL && n_res > 0)
			ow_link_results(w->link, b->res, n_res);
		if (rc != 0)
			return rc;
	} else {
		w->st.batches++;
		w->st.orders += b->br.inserted;
		w->st.redelivered += b->br.existing;
	}
	if (b->br.rid_shared > 0) {
		/* Never taken for a redelivery: a redelivery is the same (event, user, id). */
		w->st.rid_shared += b->br.rid_shared;
		LOG_RL(LOG_LEVEL_ERR, 5000,
			"event %" PRIu32
			": %u reservation id(s) of this batch belong to another buyer "
			"too (e.g. id %" PRIu64 ", order %" PRIu64 " of event %" PRIu32
			", user %" PRIu64 "; 0: in the batch): two data planes run with one dp id? "
					  "Every buyer's order is "
			"kept; give each data plane its own dataplane.dp_id",
			b->event, b->br.rid_shared, b->br.shared_rid, b->br.shared_order,
			b->br.shared_event, b->br.shared_user);
	}
	return 0;
}

/*
 * Publishes the pending orders of a slot that was waited for (result hash; the RESULT records
 * are prepared in b->res for the main thread to send) and acknowledges the entries it
 * completes, on rs; q->skip names an entry a failed batch held part of, not acknowledged.
 * Returns 0 when acknowledged, < 0 when they stay pending.
 */
static int
ow_writer_publish(struct ow_writer *w, struct store *rs, const struct ow_writer_slots *q,
	struct ow_writer_slot *b)
{
	unsigned n_pub = 0, n_ack = 0;
	int rc;

	/* An entry is acknowledged with the batch of its last reservation: the batches before
	 * held the rest of it and succeeded (else q->skip names it). */
	for (unsigned i = 0; i < b->n; i++) {
		const struct store_outbox_rec *r = &b->e[i];

		if (!store_outbox_rec_last(r))
			continue;
		if (q->skip && r->id_ms == q->skip_ms && r->id_seq == q->skip_seq)
			continue;
		b->ack[n_ack++] = *r;
	}
	/* Every pending order of the batch is published, also after a redelivery: the first
	 * delivery may have died between COMMIT and publishing. */
	for (unsigned i = 0; i < b->n_orders; i++) {
		const struct pg_orders_row *o = &b->orders[i];

		if (!o->pending)
			continue;
		b->pub[n_pub] = (struct store_order_result){
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
	/*
	 * A reservation of a user who holds another order of the event gets none. Redis can
	 * decide one only after it lost state (reserve.lua answers a buyer duplicate), and its
	 * stock is deliberately not given back here: if what Redis lost was the first
	 * reservation (its decrement, buyer and outbox entry, after this writer had made its
	 * order), this second decrement is the one that keeps Redis's stock right, and returning
	 * it would sell one item more than PostgreSQL has. Only a comparison with PostgreSQL
	 * can tell, which is what reconciliation does.
	 */
	if (b->n_todo > 0 && !b->br.conflict && b->n_orders < b->n_todo)
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"event %" PRIu32 ": %u reservation(s) have no order: their user holds "
			"another order of the event (Redis lost state?); run flashgatectl "
			"reconcile %" PRIu32 " and repair",
			b->event, b->n_todo - b->n_orders, b->event);
	/* The results and the acknowledgement in one round trip, the results first. */
	rc = store_results_ordered_ack(rs, b->event, w->group, b->pub, n_pub, b->ack, n_ack);
	if (rc < 0)
		return rc;
	b->n_pub = n_pub;
	return 0;
}

/*
 * Publishes the next batch of the ring (the caller holds no lock; only one publisher runs). A
 * failed batch, or one whose publishing fails, makes the entry its last reservation belongs to
 * q->skip when that entry goes on in later batches: none of them acknowledges it.
 */
static void
ow_writer_publish_next(struct ow_writer *w, struct store *rs, struct ow_writer_slots *q,
	struct ow_writer_slot *b)
{
	const struct store_outbox_rec *last = &b->e[b->n - 1];

	/* The skipped entry's first reservation again: a new delivery of it, acknowledged as any.
	 */
	for (unsigned i = 0; q->skip && i < b->n; i++)
		if (b->e[i].index == 0 && b->e[i].id_ms == q->skip_ms &&
			b->e[i].id_seq == q->skip_seq)
			q->skip = false;
	b->pub_rc = b->failed ? -EIO : ow_writer_publish(w, rs, q, b);
	if (b->pub_rc != 0 && !store_outbox_rec_last(last)) {
		q->skip = true;
		q->skip_ms = last->id_ms;
		q->skip_seq = last->id_seq;
	}
}

/* The publisher thread: the ring's batches in order, on its own Redis connection. */
static void *
ow_writer_publisher(void *arg)
{
	struct ow_writer *w = arg;
	struct ow_writer_slots *q = w->slots;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->stop && q->published == q->n)
			pthread_cond_wait(&q->work, &q->mu);
		if (q->published == q->n)
			break; /* stop, and nothing left */
		struct ow_writer_slot *b = q->ring[(q->head + q->published) % OW_WRITER_SLOTS];

		pthread_mutex_unlock(&q->mu);
		ow_writer_publish_next(w, w->publish_rs, q, b);
		pthread_mutex_lock(&q->mu);
		q->published++;
		pthread_cond_signal(&q->done);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* Hands a batch that was waited for (or failed) to the publisher, in the order sent. */
static void
ow_writer_hand_over(struct ow_writer *w, struct ow_writer_slot *b)
{
	struct ow_writer_slots *q = w->slots;

	if (!q->thread) {
		ow_writer_publish_next(w, w->rs, q, b);
		q->ring[(q->head + q->n) % OW_WRITER_SLOTS] = b;
		q->n++;
		q->published++;
		return;
	}
	pthread_mutex_lock(&q->mu);
	q->ring[(q->head + q->n) % OW_WRITER_SLOTS] = b;
	q->n++;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
}

/*
 * Takes the published batches off the ring, oldest first: sends their RESULT records, counts
 * their errors, frees their slots. With wait, until the ring is empty. Returns the first error
 * of a batch published now (0 when none).
 */
static int
ow_writer_reap(struct ow_writer *w, bool wait)
{
	struct ow_writer_slots *q = w->slots;
	int rc = 0;

	if (q->thread)
		pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->thread && wait && q->n > 0 && q->published == 0)
			pthread_cond_wait(&q->done, &q->mu);
		if (q->published == 0)
			break;
		struct ow_writer_slot *b = q->ring[q->head];

		q->head = (q->head + 1) % OW_WRITER_SLOTS;
		q->n--;
		q->published--;
		if (q->thread)
			pthread_mutex_unlock(&q->mu);
		if (b->pub_rc != 0 && !b->failed) {
			w->st.errors++;
			if (rc == 0)
				rc = b->pub_rc;
		}
		if (b->pub_rc == 0 && w->link != NULL && b->n_pub > 0)
			ow_link_results(w->link, b->res, b->n_pub);
		q->used[b - q->s] = false;
		if (q->thread)
			pthread_mutex_lock(&q->mu);
	}
	if (q->thread)
		pthread_mutex_unlock(&q->mu);
	return rc;
}

/* Whether connection os has a batch in flight. */
static bool
ow_writer_store_busy(const struct ow_writer_slots *q, const struct pg_orders *os)
{
	for (unsigned i = 0; i < q->n_fifo; i++)
		if (q->fifo[i]->os == os)
			return true;
	return false;
}

/* A free slot, waiting for the publisher to free one when all are taken. */
static struct ow_writer_slot *
ow_writer_free_slot(struct ow_writer *w)
{
	struct ow_writer_slots *q = w->slots;

	for (;;) {
		for (unsigned i = 0; i < OW_WRITER_SLOTS; i++)
			if (!q->used[i]) {
				q->used[i] = true;
				return &q->s[i];
			}
		/* At most one per connection is in flight: the rest wait to be published. */
		ow_writer_reap(w, true);
	}
}

/* A connection with no batch in flight (one exists when the queue is not full). */
static struct pg_orders *
ow_writer_free_store(const struct ow_writer *w, const struct ow_writer_slots *q)
{
	if (!ow_writer_store_busy(q, w->os))
		return w->os;
	for (unsigned i = 0; i < w->n_more; i++)
		if (!ow_writer_store_busy(q, w->more[i]))
			return w->more[i];
	return w->os; /* not reached: the queue is not full */
}

/* Takes the oldest batch in flight off the queue, waits for its COMMIT, hands it over. */
static int
ow_writer_pop(struct ow_writer *w)
{
	struct ow_writer_slots *q = w->slots;
	struct ow_writer_slot *b = q->fifo[0];
	int rc;

	memmove(q->fifo, q->fifo + 1, (q->n_fifo - 1) * sizeof(q->fifo[0]));
	q->fifo[--q->n_fifo] = NULL;
	rc = ow_writer_wait(w, b);
	if (rc != 0) {
		w->st.errors++;
		b->failed = true;
	}
	ow_writer_hand_over(w, b);
	return rc;
}

/* Allocates the slots and starts the publisher (when there is a connection for it). */
static int
ow_writer_slots_init(struct ow_writer *w)
{
	struct ow_writer_slots *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return -ENOMEM;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->work, NULL);
	pthread_cond_init(&q->done, NULL);
	w->slots = q;
	if (w->publish_rs != NULL) {
		sigset_t all, old;

		/* Signals stay with the main thread, whose loop they stop. */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (pthread_create(&q->tid, NULL, ow_writer_publisher, w) == 0)
			q->thread = true;
		else
			LOG_WARN("cannot start the publisher thread; publishing in the main one");
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return 0;
}

int
ow_writer_write(struct ow_writer *w, uint32_t event, const struct store_outbox_rec *e, unsigned n)
{
	struct ow_writer_slot *b;
	struct ow_writer_slots *q;
	unsigned depth = 1 + w->n_more;
	int rc_prev = 0, rc;

	if (n == 0 || n > RS_BATCH_MAX)
		return -EINVAL;
	if (w->slots == NULL && ow_writer_slots_init(w) != 0)
		return -ENOMEM;
	q = w->slots;
	ow_writer_reap(w, false);
	/* A connection takes one statement at a time: the oldest batch's COMMIT first. */
	if (q->n_fifo == depth)
		rc_prev = ow_writer_pop(w);
	b = ow_writer_free_slot(w);
	rc = ow_writer_start(w, b, ow_writer_free_store(w, q), event, e, n);
	if (rc != 0) {
		/* Handed over failed, so that no later batch acknowledges an entry it began. */
		w->st.errors++;
		b->failed = true;
		ow_writer_hand_over(w, b);
		return rc;
	}
	q->fifo[q->n_fifo++] = b;
	return rc_prev;
}

int
ow_writer_flush(struct ow_writer *w)
{
	int rc = 0, r;

	if (w->slots == NULL)
		return 0;
	while (w->slots->n_fifo > 0) {
		r = ow_writer_pop(w);
		if (rc == 0)
			rc = r;
	}
	r = ow_writer_reap(w, true);
	return rc != 0 ? rc : r;
}

void
ow_writer_free(struct ow_writer *w)
{
	struct ow_writer_slots *q = w->slots;

	ow_writer_flush(w);
	if (q == NULL)
		return;
	if (q->thread) {
		pthread_mutex_lock(&q->mu);
		q->stop = true;
		pthread_cond_signal(&q->work);
		pthread_mutex_unlock(&q->mu);
		pthread_join(q->tid, NULL);
	}
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->done);
	pthread_mutex_destroy(&q->mu);
	free(q);
	w->slots = NULL;
}
