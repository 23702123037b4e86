/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_DRAW_DECIDE_H
#define FG_CP_DRAW_DECIDE_H
/*
 * A draw's decisions (controlplane/draw_runner.h, phase "deciding") on a thread of their own,
 * with a Redis connection of its own: the control plane's loop never waits on a draw batch's
 * reserve.lua. The thread runs one draw batch of [controlplane] draw_batch entrants a round from
 * the draw's cursor ("next") on, two rounds in flight (the second sent while Redis runs the
 * first, so that Redis does not wait for the thread between them), and hands each round's
 * verdicts, as the RESULT records to publish, to the loop through a small ring; a ring without
 * room for two stops it until the loop has taken some.
 * The loop publishes them, notes the stock and moves its cursor: every decided round, also one
 * handed over after a round not decided (controlplane/draw_runner.c, step_decide()).
 *
 * A round's size is the batch, not sized by its time: the time a round takes on this thread is
 * mostly the time slices of a loaded host (measured: 18.8 ms on average for 256 entrants while
 * Redis's own time for them was 1.2 ms, docs/benchmarks.md), so rounds cut by it only lost
 * throughput; what other sales wait on is Redis's own time for one reserve.lua, which the batch
 * bounds (about 5 us an entrant: 1,024 entrants about 5 ms).
 *
 * Exactly once is reserve.lua's: a batch runs only at its turn and moves the cursor in the same
 * script. A round that is not decided (-ESTALE: another control plane's turn; held: the window
 * key says held; any failure) is handed over like the others and ends the thread.
 */
#include <stdbool.h>
#include <stdint.h>

#include "common/wire.h"
#include "store/store_conn.h"
#include "store/store_draw.h"

/* One round, as the thread hands it to the loop. */
struct draw_decide_round {
	uint64_t index;		 /* the first entrant's index (rank - 1) */
	unsigned n;		 /* entrants in the batch */
	int status;		 /* store_batch's: 0, -ESTALE, -ENOTCONN, ... */
	bool held;		 /* decided nothing: the window key says held */
	int64_t stock_left;	 /* the event's stock after it */
	uint64_t took_us;	 /* the round's time on the thread (reserve.lua's round trip) */
	struct wire_result *out; /* n results when status is 0 and not held */
};

struct draw_decide;

/*
 * FOR TESTS ONLY: this environment variable (milliseconds, at most 60000) holds the deciding
 * thread that long after each pair of rounds is decided in Redis, before the loop is handed
 * them (draw_decide_halt() cuts the wait short), so that a test can end a draw while its decisions
 * are under way. Never set it in production.
 */
#define DD_TEST_HOLD_ENV "FG_TEST_DRAW_ROUND_HOLD_MS"

/*
 * FOR TESTS ONLY: this environment variable (a rank) makes the round whose first entrant has that
 * rank, once Redis decided it, be handed to the loop as failed (-EIO, its verdicts retry), as if
 * its reply had been lost, so that a test shows what the loop does with the round sent with it.
 * Never set it in production.
 */
#define DD_TEST_FAIL_ENV "FG_TEST_DRAW_ROUND_FAIL_RANK"

/* The deciding thread's test hooks: all 0 outside tests. */
struct draw_decide_hooks {
	unsigned hold_ms;   /* DD_TEST_HOLD_ENV's, clamped at 60000 */
	uint64_t fail_rank; /* DD_TEST_FAIL_ENV's */
};

/* The hooks from the environment into *h, each logged as test-only when set. */
void draw_decide_test_hooks(struct draw_decide_hooks *h);

/*
 * Starts deciding event's entrants v[from..n) (rank order; v stays the caller's and unchanged
 * until draw_decide_stop()) in rounds of at most batch entrants, on a Redis connection made
 * from rsc; hooks are draw_decide_test_hooks()'s (copied; NULL or all 0 outside tests). Returns the
 * thread's handle, or NULL with *rc (-ENOMEM, or a pthread error).
 */
struct draw_decide *draw_decide_start(const struct store_conn_config *rsc, uint32_t event,
	const struct store_entrant *v, uint64_t from, uint64_t n, unsigned batch,
	const struct draw_decide_hooks *hooks, int *rc);

/*
 * On the loop: the oldest round not taken yet (NULL: none ready), then draw_decide_pop() once
 * done with it (its out is reused).
 */
const struct draw_decide_round *draw_decide_peek(struct draw_decide *d);
void draw_decide_pop(struct draw_decide *d);

/* Whether the thread has ended (every entrant decided, or a round it could not decide). */
bool draw_decide_ended(struct draw_decide *d);

/* The rounds so far: count, total and longest time (us), the next round's size. */
void draw_decide_stats(struct draw_decide *d, uint64_t *rounds, uint64_t *us_sum, uint64_t *us_max,
	unsigned *round_n);

/*
 * Stops the thread after the round it runs, if any (at most Redis's command timeout), keeping
 * the rounds not taken for draw_decide_peek() / _pop(): those decided before a stop are
 * published all the same.
 */
void draw_decide_halt(struct draw_decide *d);

/*
 * Stops the thread (after the round it runs, if any: at most Redis's command timeout) and
 * frees d with the rounds not taken. NULL is a no-op.
 */
void draw_decide_stop(struct draw_decide *d);

#endif
