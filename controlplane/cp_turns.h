/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_TURNS_H
#define FG_CP_TURNS_H
/*
 * How long the control plane's loop is away from its sockets: each turn's work, from zmq_poll()'s
 * return to its next call. Decisions wait while a turn runs, so the longest turn bounds the
 * longest gap between two rounds of decisions (the aim: under 10 ms, whatever an admin command
 * or a draw does). Written by the loop only; `stats` (on the loop) and GET /metrics (a plain
 * 64-bit word, a moment old at worst) read it.
 */
#include <stdint.h>

/* The recent maximum is kept per second over this many seconds. */
#define CP_TURNS_SECONDS 16

struct cp_turns {
	uint64_t turns;	 /* since the start */
	uint64_t max_us; /* the longest, since the start */
	uint64_t sec_max_us[CP_TURNS_SECONDS];
	uint64_t sec_of[CP_TURNS_SECONDS]; /* which second (monotonic) each slot holds */
};

/* Notes one turn of took_us microseconds, ending at now_ms (monotonic). */
static inline void
cp_turns_note(struct cp_turns *t, uint64_t took_us, uint64_t now_ms)
{
	uint64_t s = now_ms / 1000;
	unsigned i = (unsigned)(s % CP_TURNS_SECONDS);

	t->turns++;
	if (took_us > t->max_us)
		t->max_us = took_us;
	if (t->sec_of[i] != s) {
		t->sec_of[i] = s;
		t->sec_max_us[i] = 0;
	}
	if (took_us > t->sec_max_us[i])
		t->sec_max_us[i] = took_us;
}

/* The longest turn of the last `seconds` seconds (at most CP_TURNS_SECONDS) before now_ms. */
static inline uint64_t
cp_turns_recent_us(const struct cp_turns *t, unsigned seconds, uint64_t now_ms)
{
	uint64_t s = now_ms / 1000, m = 0;

	if (seconds > CP_TURNS_SECONDS)
		seconds = CP_TURNS_SECONDS;
	for (unsigned i = 0; i < CP_TURNS_SECONDS; i++)
		if (t->sec_of[i] + seconds > s && t->sec_max_us[i] > m)
			m = t->sec_max_us[i];
	return m;
}

#endif
