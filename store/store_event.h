/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_EVENT_H
#define FG_STORE_STORE_EVENT_H
/*
 * An event's keys as a whole (store/store_keys.h): setting its stock before the sale
 * (preheat), reading its counters, deleting them.
 */
#include <stdbool.h>
#include <stdint.h>

#include "store/store_conn.h"

struct store_event_state {
	int64_t stock;	     /* 0 when missing */
	bool preheated;	     /* the stock key exists */
	uint64_t buyers;     /* HLEN result: users holding a reservation, released ones included */
	uint64_t outbox_len; /* XLEN outbox: entries, each holding one or more reservations */
	uint64_t released;   /* |released| */
};

/*
 * Sets an event's stock before its sale, atomically with the check that nobody has reserved
 * yet: a repeated preheat before the start overwrites the stock (the operator changed it in
 * PostgreSQL). Returns 0, -EBUSY when the event has results, outbox entries or entrants (a
 * sale or a pre-queue ran: stock is repaired by reconciliation, never overwritten; a draw key
 * and an entrants' log without entrants are deleted, so the draw starts afresh), -EINVAL for a negative stock or
 * event 0, -ENOTCONN, -EIO or -ETIMEDOUT (with [redis] wait_replicas, the replicas did not
 * confirm it in time: it may be set on the primary; run it again).
 */
int store_preheat(struct store *rs, uint32_t event, int64_t stock);

/*
 * Reads an event's counters in one MULTI/EXEC, so they are consistent with each other.
 * Returns 0, -EINVAL for event 0, -ENOTCONN or -EIO.
 */
int store_event_state(struct store *rs, uint32_t event, struct store_event_state *out);

/* What an event's window key says (store/store_keys.h). */
enum store_sale_state {
	RS_SALE_HELD = 1, /* not opened yet: reserve.lua answers not started */
	RS_SALE_OPEN,	  /* open in [starts_at, ends_at) by the control plane's clock */
	RS_SALE_CLOSED,	  /* closed by the operator: reserve.lua answers closed */
};

/*
 * Sets an event's window key, so that reserve.lua itself refuses outside the sale: one SET,
 * atomic with every script (a batch runs wholly before it or after it). starts_ms < ends_ms
 * matter for RS_SALE_OPEN only. Nothing reserved is touched. Returns 0, -EINVAL (event 0, an
 * unknown state, an open window that is empty), -ENOTCONN, -EIO or -ETIMEDOUT (as
 * store_preheat()).
 */
int store_sale_window(struct store *rs, uint32_t event, enum store_sale_state state,
	uint64_t starts_ms, uint64_t ends_ms);

/* Deletes every key of an event (tests, and an operator's explicit purge). Returns 0 or < 0. */
int store_purge_event(struct store *rs, uint32_t event);

#endif
