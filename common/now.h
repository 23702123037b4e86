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
#include <stdint.h>
#include <time.h>

/* Unix time in milliseconds. */
static inline uint64_t
now_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Monotonic time in milliseconds (from an unspecified start). */
static inline uint64_t
now_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Monotonic time in microseconds. */
static inline uint64_t
now_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Monotonic time in nanoseconds. */
static inline uint64_t
now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
