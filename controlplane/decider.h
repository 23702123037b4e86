/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_DECIDER_H
#define FG_CP_DECIDER_H
/*
 * Decides admitted reservations, only for an open event inside [starts_at, ends_at) by the
 * control plane's clock (others are answered CLOSED or NOT_STARTED at once, never decided;
 * reserve.lua checks the event's window key as well, so a close races nothing): collects them by event for at most
 * batch_wait or batch_max records, runs one reserve.lua per event batch (all
 * events of a round pipelined in one store_reserve()), and publishes a RESULT per
 * reservation, then SOLD_OUT the moment an event's stock reaches 0. When
 * Redis cannot decide, every reservation of the round is answered RETRY: the
 * data plane's client tries again, and Redis's atomic script makes a retry of
 * something that did run a DUPLICATE (store/store_reserve.h explains why nothing is
 * lost or doubled).
 *
 * An event with a draw (draw_window_s > 0, docs/fairness.md) is on from queue_opens_at: until
 * draw_at its reservations go to enter.lua instead (the user becomes an entrant, answered
 * QUEUED with rank 0, nothing decided); from draw_at until the draw is done they are answered
 * RETRY without reaching Redis (controlplane/draw_runner.h decides the entrants first); then
 * first come as any event. A result query of an undecided entrant is answered QUEUED, with
 * its rank once drawn.
 */
#include <stdint.h>

#include "common/wire.h"
#include "controlplane/cp_links.h"
#include "controlplane/cp_state.h"
#include "store/store_reserve.h"

struct decider_counters {
	uint64_t received;   /* reservations from data planes */
	uint64_t decided;    /* answered with a verdict from Redis */
	uint64_t verdicts[WIRE_V_MAX];
	uint64_t rounds;     /* store_reserve() calls */
	uint64_t batches;    /* event batches (EVALSHAs) */
	uint64_t sold_out_published; /* cp_state's: by this decider and the draws' batches */
	uint64_t queries;    /* result queries answered (looked up in Redis) */
	uint64_t queries_in; /* result query records received */
	uint64_t queries_found; /* ... of them with a stored result, published */
	uint64_t queries_shed;  /* received while DECIDER_QUERIES_MAX waited: dropped, counted */
	uint64_t queries_failed; /* lookups that failed: the queries waited a back-off */
	uint64_t held_published; /* stored results published for a round's duplicates */
	uint64_t bad_records; /* reservations refused by the decoder */
	/* Answered closed / not started without reaching Redis: the event is not open, or the
	 * control plane's clock is outside [starts_at, ends_at) (also in verdicts[]). */
	uint64_t outside_sale;
	/* Events with a draw (docs/fairness.md): */
	uint64_t enter_batches; /* enter.lua runs */
	uint64_t entrants_new;	/* users that became entrants (a repeated one is not counted) */
	uint64_t draw_waiting;	/* answered retry: after draw_at, before the draw was done */
	uint64_t entrants_late;	/* entries admitted before draw_at that came after it (grace) */
	uint64_t entrants_late_max_ms; /* the latest of them: how long after draw_at it came */
};

struct decider;
struct draw_runner;

/*
 * A decider over rs, publishing on l, keeping st's stock current (cp_state_note_stock()). NULL
 * when out of memory. The decider asks the draw runner for ranks (decider_set_draws()); the
 * draw runner never calls the decider.
 */
struct decider *decider_create(struct store *rs, struct cp_links *l, struct cp_state *st,
	unsigned batch_max, unsigned wait_ms);

/* Publishes the rounds still waiting for their WAIT (waiting for it), then frees d. */
void decider_free(struct decider *d);

/* The draw runner whose ranks answer entrants' result queries (NULL: none; rank 0 then). */
void decider_set_draws(struct decider *d, const struct draw_runner *r);

/*
 * Queues the reservations of a RESERVE message received at mono_ms (monotonic ms: the batch's
 * wait) and wall_ms (Unix ms: the sale's window, the draw's entry); may decide a full round.
 */
void decider_add(struct decider *d, const struct wire_msg *m, uint64_t mono_ms, uint64_t wall_ms);

/*
 * Decides what is queued when its wait is over at mono_ms (monotonic ms), or at once with force;
 * reserve.lua checks the sale's window at wall_ms (Unix ms). Returns what was decided. With
 * [redis] wait_replicas the round's WAIT is pipelined (store_reserve_pipelined()): its
 * verdicts are published when the WAIT answered, which each call looks for (a WAIT that fell
 * short: the round's decided batches are answered retry, all of them), in the order decided,
 * while the next rounds are decided (at most 4 rounds unpublished; a fifth waits for the
 * oldest's answer). Without wait_replicas a round is published before this returns.
 */
unsigned decider_flush(struct decider *d, uint64_t mono_ms, uint64_t wall_ms, bool force);

/*
 * When the oldest queued reservation's wait ends (monotonic ms), or UINT64_MAX when none waits;
 * while a round's WAIT is pending, 1 ms after the last decider_flush() (to look for it).
 */
uint64_t decider_deadline(const struct decider *d);

/*
 * Queues the records of a RESULT_QUERY message; none is looked up here, so that queries never
 * delay the reservations received with them. Beyond 65,536 waiting they are shed (counted in
 * queries_shed: the data plane answered the poll, and asks again after its cooldown).
 */
void decider_query(struct decider *d, const struct wire_msg *m);

/*
 * Answers up to max queued result queries from the events' result hashes in Redis (1,024 per
 * pipelined round trip), publishing the results that exist. For the loop to call after the
 * round's decisions, with a bound that keeps the next round's wait short. Never connects to
 * Redis itself; after a failed lookup the queries wait a back-off (250 ms doubling to 4 s while
 * lookups fail) before the next, so that a Redis away or behind does not hold every turn of the
 * loop for a timeout. mono_ms is monotonic time (the back-off's clock). Returns how many were
 * answered.
 */
unsigned decider_serve_queries(struct decider *d, unsigned max, uint64_t mono_ms);

/* When queued result queries may be tried next (monotonic ms; in the past: now), or UINT64_MAX when
 * none is queued or Redis is not connected (the loop's turns reconnect it first). */
uint64_t decider_queries_at(const struct decider *d);

/* Result queries queued and not yet answered. */
unsigned decider_queries_waiting(const struct decider *d);

/* A copy of the counters. */
void decider_counters(const struct decider *d, struct decider_counters *out);

#endif
