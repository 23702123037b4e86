/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_LG_SCHED_H
#define FG_LG_SCHED_H
/*
 * Who a sale's users are and when they come (docs/loadgen.md, "Bots, people and a pre-queue"):
 * which users are bots (spread evenly over the users), each user's think time (people: drawn
 * per user around --think-ms; bots: that divided by --bot-speed), and the arrival schedule of a
 * pre-queue (--arrive-before: users spread over the span before the start, the rest in a burst
 * at the start). Pure functions of their arguments: the same run asks the same of everyone.
 */
#include <stdbool.h>
#include <stdint.h>

/*
 * Whether the user of index i (0-based, from --user-base) of n users is a bot when nb of the n
 * are (0 <= nb <= n): the bots are spread evenly, one every n/nb users, so that every stretch
 * of users (and of arrivals) holds about their share. Exactly nb of i = 0..n-1 are bots.
 */
bool lg_sched_is_bot(uint64_t i, uint64_t n, uint64_t nb);

/*
 * A number in [0, 1) drawn from (user, seed) alone (splitmix64): the same user gets the same
 * draw in every run with that seed.
 */
double lg_sched_unit(uint64_t user, uint64_t seed);

/*
 * The think time of user in ms, its reaction before each request it starts of its own accord
 * (the token on arrival, the reserve after the token answer): for people, drawn per user,
 * uniform in [mean_ms / 2, 3 * mean_ms / 2]; for a bot, the same draw divided by speed (>= 1).
 * mean_ms 0: no think time for anyone.
 */
double lg_sched_think_ms(uint64_t user, uint64_t seed, double mean_ms, bool bot, double speed);

/*
 * The arrival of the k-th user (0-based, in launch order) in seconds from the start (negative:
 * before it) when the first n_pre users arrive over the span_s seconds before the start and
 * the rest in a burst at it: user k < n_pre arrives in the k-th of n_pre equal slices of
 * [-span_s, 0), at the place u (in [0, 1)) inside it, so the arrivals are spread evenly with
 * some randomness; k >= n_pre arrives at 0.
 */
double lg_sched_arrival_s(uint64_t k, uint64_t n_pre, double span_s, double u);

/*
 * How many of n users arrive before the start when burst_pct percent (0..100) of them come in
 * the burst at the start: n - floor(n * burst_pct / 100).
 */
uint64_t lg_sched_pre_count(uint64_t n, unsigned burst_pct);

#endif
