/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_ORDERS_H
#define FG_PG_PG_ORDERS_H
/*
 * The orders. For the order writer (struct pg_orders: one connection, synchronous_commit on,
 * its batch statements prepared on each new connection): a batch of outbox reservations
 * becomes orders in one transaction, pending orders past their deadline expire with their
 * stock returned, the stock releases that still have to reach Redis are read and marked
 * applied, and paid orders' results are read. For the control plane (pg_orders_call()): pay
 * or cancel one order.
 *
 * Every function returns 0 or a negative errno with one line in err, as pg/pg_conn.h says
 * (-ENOTCONN: PostgreSQL cannot be reached, the next call reconnects), and -ENOENT no such
 * event, -EBUSY a batch is in flight.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pg/pg_conn.h"
#include "store/store_outbox.h"

struct pg_orders;

/* One order of a batch, inserted now or found from an earlier delivery. */
struct pg_orders_row {
	uint64_t order_id;
	uint64_t user;
	uint64_t reservation_id;
	uint64_t pay_deadline_ms;
	bool pending;  /* still pending: its result is "ordered" */
	bool inserted; /* by this batch */
};

/* What one batch did. */
struct pg_orders_batch {
	unsigned inserted; /* new orders (0 when conflict) */
	unsigned existing; /* reservations whose order existed (a redelivery) */
	/* The stock decrement was refused (it would go below 0): nothing was committed. */
	bool conflict;
	/*
	 * Reservations of the batch whose id another buyer's order (another user or event, or
	 * another reservation of the batch) has too: data planes sharing a dp id. Every one is
	 * kept as its own order; the first is named for the log (shared_order 0: in the batch).
	 */
	unsigned rid_shared;
	uint64_t shared_rid, shared_order, shared_user;
	uint32_t shared_event;
};

/* One stock release still to apply to Redis. */
struct pg_orders_release {
	uint64_t id;
	uint32_t event;
	uint64_t order_id;
	uint64_t reservation_id;
	uint64_t user;
	unsigned n;
	bool cancelled;		  /* the order was cancelled (else it expired) */
	uint64_t pay_deadline_ms; /* the order's, Unix ms */
};

/* A paid order whose result the data planes do not know yet (table result_changes). */
struct pg_orders_paid {
	uint64_t id; /* the result_changes row */
	uint32_t event;
	uint64_t user;
	uint64_t reservation_id;
	uint64_t order_id;
	uint64_t pay_deadline_ms;
	bool paid; /* still paid (always, as nothing unpays an order) */
};

/*
 * Connects with a libpq conninfo string, the session named app (pg_conn_new_named(); NULL:
 * unnamed). Returns the store, or NULL with the reason in err.
 */
struct pg_orders *pg_orders_open(const char *conninfo, const char *app, char *err, size_t errlen);

/* Closes the connection and frees s; NULL is allowed. */
void pg_orders_close(struct pg_orders *s);

/*
 * Writes the n reservations (1..RS_BATCH_MAX) of event's outbox (each .valid) as orders in one
 * statement that commits on its own: each new reservation becomes an order (a redelivered one
 * inserts nothing, nor one whose user holds another order of the event), stock decremented by
 * the number inserted WHERE available >= that number (else the statement raises and nothing
 * of it stays). out[0..n) receives the orders of the reservations, inserted or existing, and
 * *n_out their number (one whose user already holds another order of the event has none).
 * When the decrement is refused, nothing is committed, res->conflict is set, and out holds only
 * the existing orders. -ENOENT: the event is not in PostgreSQL (nothing written). commit_hook
 * (may be NULL) runs right after the COMMIT is known to be durable. pg_orders_write_batch() is
 * pg_orders_batch_send() followed by pg_orders_batch_wait().
 */
int pg_orders_write_batch(struct pg_orders *s, uint32_t event, const struct store_outbox_rec *e,
	unsigned n, struct pg_orders_row *out, unsigned *n_out, struct pg_orders_batch *res,
	void (*commit_hook)(void), char *err, size_t errlen);

/*
 * The first half of pg_orders_write_batch(): sends the batch (the records are copied) and returns
 * without waiting, so that the caller works on Redis while PostgreSQL inserts and commits.
 * Until pg_orders_batch_wait() every other function of the store fails with -EBUSY.
 */
int pg_orders_batch_send(struct pg_orders *s, uint32_t event, const struct store_outbox_rec *e,
	unsigned n, char *err, size_t errlen);

/* The second half: waits for the batch sent and returns what pg_orders_write_batch() returns. */
int pg_orders_batch_wait(struct pg_orders *s, struct pg_orders_row *out, unsigned *n_out,
	struct pg_orders_batch *res, void (*commit_hook)(void), char *err, size_t errlen);

/* True while a batch was sent and not waited for. */
bool pg_orders_batch_busy(const struct pg_orders *s);

/*
 * The events whose outboxes are read: state open or closed (a closed sale may still have a
 * backlog), in ids[0..cap), open[i] true for the open ones; *n their number (<= cap).
 */
int pg_orders_active_events(struct pg_orders *s, uint32_t *ids, bool *open, unsigned cap,
	unsigned *n, char *err, size_t errlen);

/*
 * Expires at most limit pending orders past their deadline in one transaction (FOR UPDATE SKIP
 * LOCKED, so sweepers of several writers take different orders; WHERE status = 'pending', so a
 * payment and an expiry never both win), returns their stock to PostgreSQL and records one
 * stock release per order. *expired receives how many.
 */
int pg_orders_expire(
	struct pg_orders *s, unsigned limit, unsigned *expired, char *err, size_t errlen);

/*
 * Which of users[0..n) hold an order of event, in any state: holds[i] set to 1 or 0. Returns 0,
 * or < 0 with err (-EBUSY while a batch is in flight on s).
 */
int pg_orders_users_holding(struct pg_orders *s, uint32_t event, const uint64_t *users, unsigned n,
	uint8_t *holds, char *err, size_t errlen);

/* Reads at most cap stock releases not applied to Redis yet, oldest first. */
int pg_orders_releases_pending(struct pg_orders *s, struct pg_orders_release *out, unsigned cap,
	unsigned *n, char *err, size_t errlen);

/* Marks n releases applied (applied_at = now()); ones already marked are left alone. */
int pg_orders_releases_applied(
	struct pg_orders *s, const uint64_t *ids, unsigned n, char *err, size_t errlen);

/*
 * Reads up to cap paid orders whose result is still to publish (result_changes, oldest first,
 * written by the trigger on orders that flashgate_pay() fires). Returns 0 or < 0 (err says why).
 */
int pg_orders_paid_pending(struct pg_orders *s, struct pg_orders_paid *out, unsigned cap,
	unsigned *n, char *err, size_t errlen);

/* Deletes the n result_changes rows whose results were stored and sent. Returns 0 or < 0. */
int pg_orders_paid_done(
	struct pg_orders *s, const uint64_t *ids, unsigned n, char *err, size_t errlen);

/*
 * Calls fn, "flashgate_pay" or "flashgate_cancel", on order order_id: *result (len bytes)
 * receives its answer: "paid", "already_paid", "expired_refund_needed" or "no_such_order"
 * (pay); "cancelled", "already_cancelled", "paid", "expired" or "no_such_order" (cancel).
 * Returns 0, or < 0 with err set (-EINVAL: another fn, or an order id out of range).
 */
int pg_orders_call(struct pg_conn *s, const char *fn, uint64_t order_id, char *result, size_t len,
	char *err, size_t errlen);

#endif
