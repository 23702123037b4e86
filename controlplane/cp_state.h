/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_STATE_H
#define FG_CP_STATE_H
/*
 * What the control plane tells data planes, as it last read it: the events
 * (from PostgreSQL, with the stock Redis holds), the keys, the rules and the
 * limits. PostgreSQL is the source of truth; this is the copy that snapshots
 * and updates are published from. Slow path only.
 */
#include <stdbool.h>
#include <stdint.h>

#include "common/wire.h"
#include "admin/admin_proto.h"
#include "controlplane/cp_links.h"
#include "pg/pg.h"
#include "store/store_conn.h"

#define CP_STATE_EVENTS_MAX 64
#define CP_STATE_KEYS_MAX   16
/* A data plane that learns of a rotation late (resync) keeps minting with the old key meanwhile. */
#define CP_STATE_KEY_LATE_MS 30000
/* After a start, no retired key is removed this long: the data planes report their purchase
 * token lifetime first. */
#define CP_STATE_KEY_RETIRE_HOLD_MS 5000

struct cp_state_event {
	struct admin_event ev;
	int64_t stock_left;   /* in Redis once preheated; the PostgreSQL stock before */
	bool sold_out;        /* published SOLD_OUT and not restocked since */
	bool window_set;      /* its window key in Redis says what ev says (cp_state_sync_windows) */
	/* The challenge's difficulty for new purchase tokens now (published in FAIR): ev.pow_bits,
	 * raised by the automatic difficulty (cp_cron(), up to ev.pow_auto_max) while the data
	 * planes refuse reservations over the forward budget. Kept across reloads while within
	 * [pow_bits, pow_auto_max]. */
	uint8_t pow_bits_now;
	uint64_t pow_moved_ms; /* when its difficulty last moved (monotonic ms; 0: never) */
	/* The event's reservations received from the data planes (the decider counts them), and
	 * the automatic difficulty's reading of it a tick ago and last time the forward-budget
	 * refusals were put down to it (monotonic ms): the refusals are counted per event. */
	uint64_t forwarded;
	uint64_t pow_fwd_last;
	uint64_t pow_growth_ms;
	/* The draw as this control plane follows it (controlplane/draw_runner.h), published in
	 * FAIR; kept across reloads. */
	struct cp_state_draw {
		uint8_t state;	   /* enum wire_draw_state as far as this control plane knows */
		bool has_digest;   /* digest: the entrants' (from the freeze on) */
		uint8_t digest[WIRE_DIGEST_LEN];
		uint64_t entrants; /* so far (QUEUEING), fixed from DRAWING on */
		uint64_t decided;  /* in rank order */
		uint32_t rate;	   /* entrants decided per second over the last ~2 s */
		uint64_t served;   /* the highest rank holding an item (draw or waiting list) */
		uint64_t waiting;  /* entrants on the waiting list (Redis's, last read) */
		bool final;	   /* no item can come back to the list (Redis's, last read) */
		uint64_t wait_ms;  /* when the waiting list was last read (monotonic ms) */
		bool dirty;	   /* a field changed since the last FAIR (progress: 200 ms) */
		bool state_dirty;  /* the state changed: FAIR at once */
		bool counted;	   /* entrants read from Redis once (a start during the pre-queue) */
		uint64_t fair_ms;  /* when its last FAIR went out (monotonic ms) */
	} draw;
};

struct cp_state {
	struct cp_state_event ev[CP_STATE_EVENTS_MAX];
	unsigned n_ev;
	/* An event left the set since it was last published: the data planes must replace
	 * theirs (a snapshot), since EVENT messages only add. Cleared by the publisher. */
	bool events_dropped;
	/* When the set may change by itself: a live event's ends_at (Unix ms; 0: none).
	 * cp_cron() loads the events again then. */
	uint64_t events_next_end_ms;
	uint64_t events_retry_mono_ms; /* cp_cron()'s: not before this (a failed or early load) */
	struct wire_key keys[CP_STATE_KEYS_MAX];
	unsigned n_keys;
	struct wire_rule *rules;
	unsigned n_rules, cap_rules;
	struct wire_limits limits;
	/* The live data planes the forward budget is shared among (0 counts as 1): cp_cron()
	 * follows them, and every LIMITS gives each its share (docs/limits.md). */
	unsigned forward_shares;
	uint64_t snapshot_id;
	/* How long a retired sale key's tokens may still be valid (purchase_token_ttl + late). */
	uint64_t key_life_ms;
	/* When the next retiring sale key retires (Unix ms; 0: none): cp_cron() removes it. */
	uint64_t next_key_retire_ms;
	/* Bumped by the loop whenever a decision or a restock moves an event's stock_left
	 * (cp_state_stock_moved()): cp_state_apply() keeps the loop's stock then. */
	uint64_t stock_gen;
	/* Reads are numbered as they start (read_ticket, taken atomically by any thread's
	 * cp_state_read()); the loop applies a read only when it started after the one applied last
	 * (applied_ticket, loop only): a read that started later sees every change an earlier one
	 * saw, so an older read (the follower's, taken before an admin change committed) arriving
	 * after a newer one is dropped instead of undoing the change (a closed sale reopened). */
	uint64_t read_ticket;
	uint64_t applied_ticket;
	/* SOLD_OUT messages published by cp_state_note_stock() since the start. */
	uint64_t sold_out_published;
	/* The current auth key, for session-token. */
	uint32_t auth_kid;
	uint8_t auth_len;
	uint8_t auth_secret[WIRE_SECRET_MAX];
};

/*
 * Reads events, keys, rules and limits from pg, and each preheated event's
 * stock from rs (when it is reachable). The events are the CP_STATE_EVENTS_MAX that
 * the data planes need most (pg_event_list_slots(): the upcoming and selling
 * ones first, archived ones never). Returns 0, or -errno with err; on failure
 * st keeps what it had.
 */
int cp_state_load(struct cp_state *st, struct pg_conn *pg, struct store *rs, char *err,
	size_t errlen);

/*
 * cp_state_load() in two parts, for a thread other than the loop: cp_state_read() reads what
 * cp_state_load() reads (st only for the sale keys' life and stock_gen, read atomically; pg and
 * rs the calling thread's own connections) into a malloc'd record, or returns NULL with *rc
 * (-errno) and err; cp_state_apply(), on the loop, makes st hold it as cp_state_load() would
 * and frees rd. An open event's stock that decisions moved meanwhile (stock_gen) stays the
 * loop's. A read that started before the one applied last is dropped (read_ticket).
 * cp_state_read_free() frees a record not applied (NULL is a no-op).
 */
struct cp_state_read;
struct cp_state_read *cp_state_read(const struct cp_state *st, struct pg_conn *pg,
	struct store *rs, int *rc, char *err, size_t errlen);
void cp_state_apply(struct cp_state *st, struct cp_state_read *rd);
void cp_state_read_free(struct cp_state_read *rd);

/*
 * Writes the window key (store/store_event.h store_sale_window()) of every event whose key is
 * not known to match its state and times since the last load: held before open, the sale's
 * [starts_at, ends_at) while open, closed after. Returns how many could not be written
 * (Redis unreachable: tried again at the next call).
 */
unsigned cp_state_sync_windows(struct cp_state *st, struct store *rs);

/*
 * The current difficulty of event ev as loaded again: what the event had before (old, may be
 * NULL) while it is within [ev->pow_bits, ev->pow_auto_max], ev->pow_bits otherwise.
 */
uint8_t cp_state_pow_bits_keep(const struct admin_event *ev, const struct cp_state_event *old);

/* On the loop, after it changed an event's stock_left: stock_gen moves on (read atomically by
 * cp_state_read() on another thread). */
static inline void
cp_state_stock_moved(struct cp_state *st)
{
	__atomic_store_n(&st->stock_gen, st->stock_gen + 1, __ATOMIC_RELEASE);
}

/* Frees what st holds. */
void cp_state_free(struct cp_state *st);

/* The event with this id, or NULL. */
struct cp_state_event *cp_state_event(struct cp_state *st, uint32_t id);

/*
 * Keeps event's stock as a decision in Redis left it (stock_left: the decider's rounds and the
 * draw runner's batches both tell it here, the one place that holds it): the first time it
 * reaches 0, SOLD_OUT goes to every data plane on l at once (counted in sold_out_published).
 * An event st does not hold is ignored. Returns true when SOLD_OUT was published now.
 */
bool cp_state_note_stock(struct cp_state *st, struct cp_links *l, uint32_t event,
	int64_t stock_left);

/*
 * The limits one of n data planes gets: the per-event forward budget's rate and burst divided
 * by n (n 0 counts as 1), rounded down so that the shares never add up to more than the
 * budget, but at least 1 when the total is not 0 (0 would mean "no limit"). A burst of 0 (one
 * second's worth) stays 0: each data plane then takes its share of the rate.
 */
void cp_state_limits_share(const struct wire_limits *total, unsigned n, struct wire_limits *out);

/*
 * After a load: publishes the events, as a full snapshot when one left the set
 * (events_dropped, then cleared). 0 or -EIO.
 */
int cp_state_publish_event_set(struct cp_state *st, struct cp_links *l);

/* Publishes every event / the keys / the rules / the limits (each data plane's share of the
 * forward budget, cp_state_limits_share() with forward_shares). 0 or -EIO. */
int cp_state_publish_events(const struct cp_state *st, struct cp_links *l);
int cp_state_publish_keys(const struct cp_state *st, struct cp_links *l);
int cp_state_publish_rules(const struct cp_state *st, struct cp_links *l);
int cp_state_publish_limits(const struct cp_state *st, struct cp_links *l);

/* Publishes a full snapshot: BEGIN, events, keys, rules, limits, END, then a HEARTBEAT (the
 * control plane's clock). 0 or -EIO. */
int cp_state_publish_snapshot(struct cp_state *st, struct cp_links *l);

/* The wire form of one event: held until opened, closed, sold out. */
void cp_state_event_to_wire(const struct cp_state_event *e, struct wire_event *out);

/* Whether event e has a FAIR record: a draw (draw_window_s > 0) or a challenge now. */
bool cp_state_event_has_fair(const struct cp_state_event *e);

/*
 * The FAIR record of event e (common/wire.h struct wire_fair): its draw's state (NONE without
 * a draw; DONE once PostgreSQL or the draw says so; else what the draw runner set, QUEUEING
 * before the draw), times, counts, the seed's commitment, the entrants' digest once fixed and
 * the seed only when done, and the current difficulty (pow_bits_now).
 */
void cp_state_fair_to_wire(const struct cp_state_event *e, struct wire_fair *out);

/* Publishes the FAIR records of every event that has one (none: nothing sent). 0 or -EIO. */
int cp_state_publish_fair(const struct cp_state *st, struct cp_links *l);

/* Publishes event e's FAIR record (when it has one) and clears its dirty flags; mono_ms (monotonic
 * ms) is kept as when it went out. 0 or -EIO. */
int cp_state_publish_fair_one(struct cp_state_event *e, struct cp_links *l, uint64_t mono_ms);

#endif
