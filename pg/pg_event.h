/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_EVENT_H
#define FG_PG_PG_EVENT_H
/*
 * Events and their stock in PostgreSQL, the source of truth for both: create, read, list, change
 * state, archive, count orders. Errors as pg/pg_conn.h says, and: -ENOENT no such event, -EPERM
 * a refused state change (the message says why).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"
#include "admin/admin_proto.h"
#include "pg/pg_conn.h"

/* Orders of an event by status, and its stock, for stats and reconciliation. */
struct pg_event_counts {
	uint32_t initial;
	uint32_t available;
	uint64_t pending;
	uint64_t paid;
	uint64_t expired;
	uint64_t cancelled;
	uint64_t releases_pending; /* stock_releases rows not yet applied to Redis */
};

/*
 * Creates event ev (checked as admin_event_check() does; its end must not be in the past) in
 * state draft with its stock, in one transaction. *out (may be NULL) receives it as stored.
 * -EINVAL: a bad field (nothing written); -EEXIST: the id is taken.
 */
int pg_event_create(struct pg_conn *s, const struct admin_event *ev, struct admin_event *out,
	char *err, size_t errlen);

/* Reads event id with its state and available stock. -ENOENT when there is none. */
int pg_event_get(struct pg_conn *s, uint32_t id, struct admin_event *out, char *err, size_t errlen);

/*
 * Reads events by id into out[0..cap) and their total number into *n (which may exceed cap:
 * then only the first cap are filled).
 */
int pg_event_list(struct pg_conn *s, struct admin_event *out, unsigned cap, unsigned *n, char *err,
	size_t errlen);

/*
 * The events the data planes hold (up to cap, their CP_STATE_EVENTS_MAX slots), best claim first:
 * the live ones (draft, preheated or open, and before their ends_at) by state, open first,
 * then preheated, then draft, each by starts_at; then those that are over (closed, or past
 * their ends_at), the most recently ended (or closed) first, so that buyers of a sale just
 * ended still reach it; never an archived one. *n receives how many were filled, *n_live how
 * many live events there are in all (more than cap: some upcoming sale is on no data plane
 * yet), and
 * *next_end_ms the earliest ends_at of a live event (Unix ms; 0: none), when this order
 * changes by itself.
 */
int pg_event_list_slots(struct pg_conn *s, struct admin_event *out, unsigned cap, unsigned *n,
	unsigned *n_live, uint64_t *next_end_ms, char *err, size_t errlen);

/*
 * event list: the events with an id above after (and in state `state` when has_state), by id,
 * at most limit of them into out (which holds limit); *more is true when there are others
 * after them (ask again with after = the last id).
 */
int pg_event_page(struct pg_conn *s, bool has_state, enum admin_event_state state, uint32_t after,
	unsigned limit, struct admin_event *out, unsigned *n, bool *more, char *err, size_t errlen);

/*
 * The events preheated or open and not past their ends_at, other than event except, into *n:
 * the ones that take a data plane slot before any draft.
 */
int pg_event_count_ready(struct pg_conn *s, uint32_t except, unsigned *n, char *err, size_t errlen);

/*
 * event archive: marks event id archived when it is over (closed, or past its ends_at in any
 * state) and settled: no order still pending, and at least redis_buyers orders (every buyer
 * Redis holds is an order: the order writer has caught up). Returns 0 with the event in *out
 * (may be NULL); -ENOENT; -EALREADY when it was archived before (*out filled); -EPERM with a
 * message saying what to wait for or do; or a database error. Nothing changes unless 0.
 */
int pg_event_archive(struct pg_conn *s, uint32_t id, uint64_t redis_buyers, struct admin_event *out,
	char *err, size_t errlen);

/*
 * Moves event id to state to, atomically, if admin_event_transition() allows it from the state
 * it has now; -EPERM with that function's message otherwise. A preheat also needs an event
 * whose end is still ahead. *out (may be NULL) receives the event after the change: for a
 * preheat, out->available is the stock to load into Redis.
 */
int pg_event_set_state(struct pg_conn *s, uint32_t id, enum admin_event_state to,
	struct admin_event *out, char *err, size_t errlen);

/*
 * event pow: sets event id's challenge difficulty to bits and, when auto_given, its automatic
 * maximum to auto_max (otherwise it keeps its own, which must then be 0 or at least bits).
 * Refused (-EPERM) for a closed or archived event; -EINVAL for values out of range. *out (may
 * be NULL) receives the event after the change.
 */
int pg_event_set_pow(struct pg_conn *s, uint32_t id, uint8_t bits, bool auto_given,
	uint8_t auto_max, struct admin_event *out, char *err, size_t errlen);

/* Stock and orders of event id by status. -ENOENT when there is no such event. */
int pg_event_counts(
	struct pg_conn *s, uint32_t id, struct pg_event_counts *out, char *err, size_t errlen);

/* An order a buyer holds, for reconciliation. */
struct pg_active_order {
	uint64_t user;
	uint64_t reservation_id;
	uint64_t order_id;
	uint64_t pay_deadline_ms; /* Unix ms */
	uint8_t verdict;	  /* WIRE_V_ORDERED (pending), PAID, EXPIRED or CANCELLED */
	bool release_pending;	  /* expired or cancelled: its stock release not yet marked
				   * applied (pg_event_gone_orders() only) */
};

/*
 * The users holding an order (pending or paid) of event id, ascending, each with that order
 * (one per user and event), in a malloc'd array (*orders, free it) of *n. For reconciliation.
 * Returns 0 or < 0 with err.
 */
int pg_event_active_orders(struct pg_conn *s, uint32_t id, struct pg_active_order **orders,
	size_t *n, char *err, size_t errlen);

/*
 * The orders of event id whose final state PostgreSQL has handed to Redis through the order
 * writer, done: paid (no result_changes row left) or expired or cancelled (the release marked
 * applied), by user as pg_event_active_orders(), verdict WIRE_V_PAID, EXPIRED or CANCELLED. For
 * reconciliation: a buyer whose Redis field still says less (ordered; paid for an expired one)
 * missed that change. Returns 0 or < 0 with err.
 */
int pg_event_handed_orders(struct pg_conn *s, uint32_t id, struct pg_active_order **orders,
	size_t *n, char *err, size_t errlen);

/*
 * The orders of event id that expired or were cancelled, by user as pg_event_active_orders(),
 * verdict WIRE_V_EXPIRED or CANCELLED, release_pending set while the order's stock release is
 * not marked applied (the order writer has yet to apply it, or is applying it, in Redis). For
 * reconciliation: such a buyer keeps its result field in Redis (X: or C:, release.lua), the
 * field that makes reserve.lua refuse them a second reservation. Returns 0 or < 0 with err.
 */
int pg_event_gone_orders(struct pg_conn *s, uint32_t id, struct pg_active_order **orders, size_t *n,
	char *err, size_t errlen);

/*
 * The state now of orders order_ids[0..n) of event id: verdict[i] becomes WIRE_V_ORDERED
 * (pending), WIRE_V_PAID, WIRE_V_EXPIRED or WIRE_V_CANCELLED, or 0 when the event has no such
 * order. For reconcile --repair's second look at the orders it wrote. Returns 0 or < 0 with err.
 */
int pg_event_orders_verdicts(struct pg_conn *s, uint32_t id, const uint64_t *order_ids, size_t n,
	uint8_t *verdict, char *err, size_t errlen);

/*
 * Hands the stock releases of orders order_ids[0..n) of event id back to the order writer: each
 * becomes a pending release again, under a new id (the order writer marks the releases it
 * applied by id, so one it is applying at this moment is not marked done by that), and the order
 * writer applies it to Redis once more (lua/release.lua returns an item once however often it
 * is tried: a release Redis has taken changes nothing there the second time). For reconcile
 * --repair: a release tried while its buyer had no result field changed nothing in Redis.
 * *requeued is set to how many were handed back. Returns 0 or < 0 with err.
 */
int pg_event_releases_again(struct pg_conn *s, uint32_t id, const uint64_t *order_ids, size_t n,
	uint64_t *requeued, char *err, size_t errlen);

#endif
