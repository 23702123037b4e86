/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_RELEASE_H
#define FG_STORE_STORE_RELEASE_H
/*
 * Returning the stock of expired and cancelled reservations with lua/release.lua, exactly once
 * per (reservation id, user) (the event's released set, store/store_keys.h), and asking which
 * were.
 * The order writer's expiry sweeper and writer call these.
 */
#include <stdint.h>

#include "store/store_conn.h"

/* Why a reservation's stock goes back, and so what its user's result becomes. */
struct store_release_as {
	uint8_t verdict;	  /* WIRE_V_EXPIRED, WIRE_V_CANCELLED or WIRE_V_SOLD_OUT */
	uint64_t order_id;	  /* the order (expired, cancelled); 0 for WIRE_V_SOLD_OUT */
	uint64_t pay_deadline_ms; /* its pay deadline (Unix ms); 0 for WIRE_V_SOLD_OUT */
};

/*
 * Returns the stock of one cancelled or expired reservation with release.lua: n items back to
 * the event's stock and the user's result set to what as says, once per (reservation id, user):
 * "X:<rid>:<order id>:<deadline>" (expired), "C:<rid>:<order id>:<deadline>" (cancelled) or
 * "S:<rid>" (sold out: a reservation that never became an order because PostgreSQL had no stock
 * left for it); as NULL: "X:<rid>". Two buyers whose reservations share an id (data planes with
 * one dp id) each get theirs back. Returns 1 when applied, 0 when this reservation of this user
 * was released before, -ENOENT when user is not a buyer of the event (nothing changes), -EINVAL
 * for n outside 1..1000000, a zero id or another verdict, -ENOTCONN or -EIO.
 */
int store_release(struct store *rs, uint32_t event, uint64_t reservation_id, uint64_t user,
	unsigned n, const struct store_release_as *as);

/* An entrant of the draw's waiting list a returned item went to. */
struct store_waiter {
	uint64_t user;
	uint64_t reservation_id; /* the entrant's reservation: its order's */
	uint64_t rank;		 /* its rank in the draw */
};

/*
 * As store_release(), and while the event's draw has entrants on its waiting list and the sale
 * is neither closed nor past its end by this host's clock (store/store_keys.h), the returned items go to them instead of the stock, in
 * rank order, at most cap (1..1000; as must be set; 0: as store_release()), in the same script:
 * each becomes a buyer (its result "<rid>") with its reservation in the outbox, and is written
 * to to[0..*n_to). Returns as store_release(), or -EINVAL for cap over 1000 or to, n_to or as
 * NULL with cap > 0.
 */
int store_release_to(struct store *rs, uint32_t event, uint64_t reservation_id, uint64_t user,
	unsigned n, const struct store_release_as *as, struct store_waiter *to, unsigned cap,
	unsigned *n_to);

/*
 * Which of n reservations (rids[i] of users[i]) were released (SMISMEMBER on the released
 * set): released[i] is set to 1 or 0. Returns 0, -EINVAL (n 0 or > RS_BATCH_MAX, event 0),
 * -ENOMEM, -ENOTCONN or -EIO.
 */
int store_released_check(struct store *rs, uint32_t event, const uint64_t *rids,
	const uint64_t *users, unsigned n, uint8_t *released);

#endif
