/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_NOW_H
#define FG_COMMON_NOW_H
/*
 * The time now, for the slow path of every program: Unix time (CLOCK_REALTIME, for what
 * is compared across hosts or shown: deadlines, sale times, tokens) and monotonic time
 * (CLOCK_MONOTONIC, for intervals and timeouts, which must not jump with the wall clock).
 * One clock_gettime() each (a vDSO call, no syscall on Linux); workers read the TSC instead
 * (dataplane/clock.h). None can fail with these clocks.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Nanoseconds of clock clk (CLOCK_REALTIME or CLOCK_MONOTONIC); fits 64 bits until 2554. */
static inline uint64_t
now_ns_of(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Unix time in milliseconds. */
static inline uint64_t
now_wall_ms(void)
{
	return now_ns_of(CLOCK_REALTIME) / 1000000;
}

/* Monotonic time in milliseconds (from an unspecified start). */
static inline uint64_t
now_mono_ms(void)
{
	return now_ns_of(CLOCK_MONOTONIC) / 1000000;
}

/* Monotonic time in microseconds. */
static inline uint64_t
now_mono_us(void)
{
	return now_ns_of(CLOCK_MONOTONIC) / 1000;
}

/* Monotonic time in nanoseconds. */
static inline uint64_t
now_mono_ns(void)
{
	return now_ns_of(CLOCK_MONOTONIC);
}

/*
 * When Unix time due_wall_ms comes, on the monotonic clock, as of the readings mono_ms and wall_ms
 * taken together (mono_ms when it is past). A later step of the wall clock moves the answer: a
 * caller that waits for it looks again within a bounded time (the control plane: every heartbeat).
 */
static inline uint64_t
now_mono_at_wall(uint64_t due_wall_ms, uint64_t mono_ms, uint64_t wall_ms)
{
	return due_wall_ms > wall_ms ? mono_ms + (due_wall_ms - wall_ms) : mono_ms;
}

/* The time on clock id ms milliseconds from now, as a deadline for pthread_cond_timedwait() (the
 * condition variable's clock must be id). */
static inline struct timespec
now_deadline_after_ms(clockid_t id, uint64_t ms)
{
	struct timespec t;

	clock_gettime(id, &t);
	t.tv_sec += (time_t)(ms / 1000);
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

/* Initialises c to time its waits on CLOCK_MONOTONIC (deadlines from now_deadline_after_ms()
 * with that clock), which a step of the wall clock does not move. glibc cannot fail here
 * (CLOCK_MONOTONIC is always valid, the default attributes need no memory); a failure would
 * leave waits with no clock to time them, so it ends the program with the reason. */
static inline void
now_cond_init_monotonic(pthread_cond_t *c)
{
	pthread_condattr_t a;
	int rc = pthread_condattr_init(&a);

	if (rc == 0) {
		rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
		if (rc == 0)
			rc = pthread_cond_init(c, &a);
		pthread_condattr_destroy(&a);
	}
	if (rc != 0) {
		fprintf(stderr, "a condition variable on CLOCK_MONOTONIC: %s\n", strerror(rc));
		abort();
	}
}

#endif
