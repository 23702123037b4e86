/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_POW_H
#define FG_CP_POW_H
/*
 * The proof-of-work challenge's difficulty (docs/fairness.md "The challenge"): the operator's
 * (event create --pow-bits, event pow) and the automatic one. While the data planes report
 * reservations refused over the forward budget (their DP_STATS counter
 * "rejects.reason=forward_budget" grew since the last look, a second ago), every live event with
 * an automatic maximum above its difficulty is raised by one bit a second, up to that maximum;
 * once the refusals stop growing for CP_POW_QUIET_MS it is lowered by one bit every
 * CP_POW_QUIET_MS, never below the operator's. The data planes count the refusals per data
 * plane; the control plane puts them down to the events whose forwarded reservations reach the
 * budget (at least half the busiest event's since the last tick, cp_state_event.forwarded), so
 * a busy sale does not raise a quiet one's challenge. Each move is logged and published.
 *
 * The current difficulty is cp_event.pow_bits_now; it goes to the data planes in the event's
 * FAIR record (cp_state_fair_to_wire()) at each move. Slow path only.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "controlplane/cp_links.h"
#include "controlplane/cp_state.h"
#include "controlplane/dp_stats.h"
#include "common/metrics.h"

#define CP_POW_TICK_MS	1000
#define CP_POW_QUIET_MS 5000
#define CP_POW_REFUSALS "rejects.reason=forward_budget"

struct cp_pow {
	bool have_last;		  /* last_refusals holds a reading */
	uint64_t last_refusals;	  /* the data planes' forward-budget refusals last tick */
	uint64_t next_tick_ms;	  /* when cp_pow_tick() looks again */
	uint64_t last_growth_ms;  /* the last tick that saw them grow (monotonic ms; 0: never) */
	uint64_t raised, lowered; /* moves made, for tests and stats */
	/* For the metrics thread: (event << 8 | difficulty now) of each event, 0 after the
	 * last; written by the main thread (cp_pow_show()). */
	_Atomic uint64_t shown[CP_STATE_EVENTS_MAX];
};

/*
 * Once a tick (CP_POW_TICK_MS): reads the refusals from dps and moves the difficulty of
 * st's events as above, publishing each event that moved on l. mono_ms is monotonic ms (the
 * tick, the quiet time), wall_ms Unix ms (the sale's end). Returns when it is due again
 * (monotonic ms).
 */
uint64_t cp_pow_tick(struct cp_pow *p, struct cp_state *st, struct dp_stats *dps,
	struct cp_links *l, uint64_t mono_ms, uint64_t wall_ms);

/* Copies every event's current difficulty where the metrics thread reads it. */
void cp_pow_show(struct cp_pow *p, const struct cp_state *st);

/* flashgate_pow_bits{event="ID"}: each event's current difficulty (from cp_pow_show()). */
void cp_pow_metrics(const struct cp_pow *p, struct metrics_text *t);

/*
 * Publishes event e's FAIR record (cp_state_fair_to_wire()) on l, with or without a draw or a
 * challenge now: a difficulty back to 0 must reach the data planes too. 0 or -EIO.
 */
int cp_pow_publish(struct cp_state_event *e, struct cp_links *l);

#endif
