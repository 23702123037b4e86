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
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* A turn longer than this (us) is logged at info (four a second at most): the 10 ms aim. */
#define CP_TURN_LONG_US 10000

/* The recent maximum is kept per second over this many seconds. */
#define CP_TURNS_SECONDS 16

/*
 * Each turn is measured twice: by the clock (how long decisions waited) and by the loop thread's
 * own CPU time in it (the work the turn did: on a loaded host the clock's figure also holds the
 * time slices other processes had meanwhile, which no change of this program shortens).
 */
struct cp_turns {
	uint64_t turns;	     /* since the start */
	uint64_t max_us;     /* the longest, since the start */
	uint64_t cpu_max_us; /* the most CPU time one turn took, since the start */
	uint64_t sec_max_us[CP_TURNS_SECONDS];
	uint64_t sec_cpu_max_us[CP_TURNS_SECONDS];
	uint64_t sec_of[CP_TURNS_SECONDS]; /* which second (monotonic) each slot holds */
};

/* The calling thread's CPU time (us): a turn's is its difference. */
static inline uint64_t
cp_turns_cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Notes one turn of took_us microseconds (cpu_us of them on the loop thread's CPU time), ending
 * at now_ms (monotonic). */
static inline void
cp_turns_note(struct cp_turns *t, uint64_t took_us, uint64_t cpu_us, uint64_t now_ms)
{
	uint64_t s = now_ms / 1000;
	unsigned i = (unsigned)(s % CP_TURNS_SECONDS);

	t->turns++;
	if (took_us > t->max_us)
		t->max_us = took_us;
	if (cpu_us > t->cpu_max_us)
		t->cpu_max_us = cpu_us;
	if (t->sec_of[i] != s) {
		t->sec_of[i] = s;
		t->sec_max_us[i] = 0;
		t->sec_cpu_max_us[i] = 0;
	}
	if (took_us > t->sec_max_us[i])
		t->sec_max_us[i] = took_us;
	if (cpu_us > t->sec_cpu_max_us[i])
		t->sec_cpu_max_us[i] = cpu_us;
}

/* The longest turn (cpu: the most CPU time of one turn) of the last `seconds` seconds (at most
 * CP_TURNS_SECONDS) before now_ms. */
static inline uint64_t
cp_turns_recent(const struct cp_turns *t, unsigned seconds, uint64_t now_ms, bool cpu)
{
	uint64_t s = now_ms / 1000, m = 0;

	if (seconds > CP_TURNS_SECONDS)
		seconds = CP_TURNS_SECONDS;
	for (unsigned i = 0; i < CP_TURNS_SECONDS; i++) {
		uint64_t v = cpu ? t->sec_cpu_max_us[i] : t->sec_max_us[i];

		if (t->sec_of[i] + seconds > s && v > m)
			m = v;
	}
	return m;
}

static inline uint64_t
cp_turns_recent_us(const struct cp_turns *t, unsigned seconds, uint64_t now_ms)
{
	return cp_turns_recent(t, seconds, now_ms, false);
}

#endif
