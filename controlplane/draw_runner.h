/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_DRAW_RUNNER_H
#define FG_CP_DRAW_RUNNER_H
/*
 * The draw of events with a draw window (docs/fairness.md), followed by the control plane's loop
 * in small steps (cp_cron()) while its heavy parts run on threads, so that reservations of other
 * events keep being decided while a large draw runs. For each event whose draw_at (starts_at + draw_window_s) has come by
 * this control plane's clock and that PostgreSQL does not hold done:
 *
 *   freeze   draw_freeze.lua: the entrants are fixed (enter.lua refuses from now on), n of them;
 *            the event's draw columns and seed read from PostgreSQL (a thread)
 *   read     HSCAN of the entrants in steps, on a thread with its own Redis connection (or,
 *            when PostgreSQL holds the draw already: its draw_entrants in rank order, checked
 *            against events.draw_digest, on a thread too)
 *   order    digest and rank keys (common/draw.h), the sorts (a thread)
 *   write    draw_entrants and events.draw_digest/draw_entrants in one transaction (COPY, a
 *            thread, pg/pg_draw.h); a control plane that finds them compares digests
 *   ranks    RESULT QUEUED with each undecided entrant's rank, and FAIR DRAWING with the digest
 *   decide   reserve.lua draw batches from the draw key's "next" (store/store_keys.h), one a
 *            round of [controlplane] draw_batch entrants on a thread of its own
 *            (controlplane/draw_decide.h): a batch runs only at its turn and advances the
 *            cursor in the same script, so each entrant is decided exactly once, in rank
 *            order, by whichever control plane runs it; the loop publishes the results as the
 *            decider's
 *   done     events.draw_done_at (a thread), FAIR DONE with the seed
 *
 * Any failure (Redis or PostgreSQL away, a loss mid-way) drops what the job holds and starts it
 * again a second later from the freeze, which answers the state Redis holds: a restarted control
 * plane does the same, reading the order back from PostgreSQL and going on at "next". The ranks
 * stay in this control plane's memory until the draw is done, for result queries.
 */
#include <stdbool.h>
#include <stdint.h>

#include "common/json_writer.h"
#include "controlplane/cp_links.h"
#include "controlplane/cp_state.h"
#include "common/metrics.h"
#include "store/store_conn.h"

/*
 * How long after draw_at the freeze waits (ms): an entry its data plane admitted before draw_at
 * by its own clock (answered 202 queued with a receipt) and that reaches the control plane
 * within this time is an entrant (decider.c). Covers a data plane's clock behind the control
 * plane's (dataplane.clock_skew_max, 500 ms by default) and the link's transit.
 */
#define DRAW_GRACE_MS 1000

/*
 * FOR TESTS ONLY: this environment variable (milliseconds, at most 60000) holds the finishing
 * thread that long after draw_done_at is committed, so that a test can see the events' reload
 * (its NOTIFY) reach the loop before the thread's end does. Never set it in production.
 */
#define DR_TEST_DONE_DELAY_ENV "FG_TEST_DRAW_DONE_DELAY_MS"

struct draw_runner;

/*
 * A runner over rs, publishing on l; the stock its batches leave goes to st
 * (cp_state_note_stock(), as the decider's). Its threads speak to PostgreSQL (pg_conninfo) and
 * Redis (rsc, copied) on connections of their own: the loop never waits on PostgreSQL for a
 * draw. A decision round decides batch entrants ([controlplane] draw_batch). NULL when out of
 * memory.
 */
struct draw_runner *draw_runner_create(struct store *rs, const struct store_conn_config *rsc,
	struct cp_links *l, struct cp_state *st, const char *pg_conninfo, unsigned batch);

void draw_runner_free(struct draw_runner *r);

/*
 * Does the draws' due work at mono_ms (monotonic ms: retries, polls, FAIR's pace) and wall_ms
 * (Unix ms: draw_at, queue_opens_at), a bounded amount (about 10 ms), and publishes the FAIR
 * updates that are due (progress at most every 200 ms, state changes at once). Returns when it
 * wants to run again (monotonic ms): mono_ms when work remains.
 */
uint64_t draw_runner_step(struct draw_runner *r, uint64_t mono_ms, uint64_t wall_ms);

/*
 * An entrant's rank (1-based) and reservation in the draw of event that this control plane
 * holds in memory (from the order on, until done). Returns 0, or -ENOENT.
 */
int draw_runner_rank(
	const struct draw_runner *r, uint32_t event, uint64_t user, uint32_t *rank, uint64_t *rid);

/*
 * The draws this control plane ran or runs, for flashgatectl stats: "draws": [{"event",
 * "phase" (freezing, reading, loading, ordering, writing, ranking, deciding, finishing, done),
 * "entrants", "decided", "failures", "rounds" (decision rounds so far), "longest_round_us" (the
 * longest one's round trip on the deciding thread), "round_entrants" (a round's size)}].
 */
void draw_runner_json(const struct draw_runner *r, struct json_writer *j);

/*
 * The same as metrics (on the metrics thread: plain words, a moment old at worst):
 * flashgate_draw_entrants{event} and flashgate_draw_decided{event}.
 */
void draw_runner_metrics(const struct draw_runner *r, struct metrics_text *t);

#endif
