/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of common/now.h: units, clocks and monotonicity. */
#include <errno.h>
#include <time.h>

#include "common/now.h"
#include "tests/tap.h"

int
main(void)
{
	/* Bracketed by CLOCK_REALTIME itself, not time(): time() reads the kernel's coarse clock,
	 * which may lag the precise one by up to a tick and so lie a second behind it. */
	struct timespec w0, w1;

	clock_gettime(CLOCK_REALTIME, &w0);
	uint64_t wall = now_wall_ms();
	clock_gettime(CLOCK_REALTIME, &w1);

	uint64_t before = (uint64_t)w0.tv_sec * 1000 + (uint64_t)w0.tv_nsec / 1000000;
	uint64_t after = (uint64_t)w1.tv_sec * 1000 + (uint64_t)w1.tv_nsec / 1000000;

	tap_ok(wall >= before && wall <= after && before > 1500000000000ull,
		"now_wall_ms is Unix time in milliseconds (%llu within %llu..%llu)",
		(unsigned long long)wall, (unsigned long long)before, (unsigned long long)after);

	/* Each finer clock read between two reads of a coarser one lies between them. */
	uint64_t ms0 = now_mono_ms(), us = now_mono_us(), ms1 = now_mono_ms();
	uint64_t us0 = now_mono_us(), ns = now_mono_ns(), us1 = now_mono_us();

	tap_ok(us / 1000 >= ms0 && us / 1000 <= ms1, "now_mono_us is now_mono_ms in microseconds");
	tap_ok(ns / 1000 >= us0 && ns / 1000 <= us1, "now_mono_ns is now_mono_us in nanoseconds");

	/* The monotonic clock is CLOCK_MONOTONIC in nanoseconds: a read between two reads of it
	 * lies between them (no bound on time: a loaded machine passes too). */
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	ns = now_mono_ns();
	clock_gettime(CLOCK_MONOTONIC, &b);
	tap_ok(ns >= (uint64_t)a.tv_sec * 1000000000u + (uint64_t)a.tv_nsec &&
			ns <= (uint64_t)b.tv_sec * 1000000000u + (uint64_t)b.tv_nsec,
		"now_mono_ns is CLOCK_MONOTONIC in nanoseconds");

	/* A 20 ms sleep shows as 20 ms or more on the monotonic clock (only a lower bound: the
	 * sleep may last any longer). */
	struct timespec nap = {0, 20 * 1000 * 1000};
	uint64_t m0 = now_mono_ms();

	nanosleep(&nap, NULL);

	uint64_t dm = now_mono_ms() - m0;

	tap_ok(dm >= 20, "monotonic time advances by a sleep (%llu ms)", (unsigned long long)dm);

	unsigned backwards = 0;
	uint64_t last = now_mono_ns();

	for (int i = 0; i < 100000; i++) {
		uint64_t t = now_mono_ns();

		backwards += t < last;
		last = t;
	}
	tap_ok(backwards == 0, "now_mono_ns never goes backwards (%u of 100000 reads)", backwards);

	/* A Unix time as a monotonic wake, from readings taken together; a wall clock stepped
	 * back an hour puts the same Unix time an hour further away. */
	static const struct {
		uint64_t due_wall, mono, wall, want;
		const char *what;
	} at[] = {
		{5000, 100, 2000, 3100, "a time 3 s ahead: 3 s from now"},
		{2000, 100, 2000, 100, "the time now: now"},
		{1000, 100, 2000, 100, "a time past: now, never in the past"},
		{0, 100, 2000, 100, "Unix 0: now"},
		{7200000, 50, 3600000, 3600050,
			"the wall clock stepped back an hour: an hour further"},
	};
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		tap_ok(now_mono_at_wall(at[i].due_wall, at[i].mono, at[i].wall) == at[i].want,
			"now_mono_at_wall: %s", at[i].what);

	/* A condition variable of now_cond_init_monotonic() times out by a monotonic deadline. */
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv;
	int rc;

	now_cond_init_monotonic(&cv);
	struct timespec until = now_deadline_after_ms(CLOCK_MONOTONIC, 20);

	m0 = now_mono_ms();
	pthread_mutex_lock(&mu);
	while ((rc = pthread_cond_timedwait(&cv, &mu, &until)) == 0)
		;
	pthread_mutex_unlock(&mu);
	dm = now_mono_ms() - m0;
	/* A CLOCK_REALTIME cond would take the monotonic deadline (seconds since boot) as long
	 * past, and time out at once. */
	tap_ok(rc == ETIMEDOUT && dm >= 19 && dm < 5000,
		"  it waits until a CLOCK_MONOTONIC deadline 20 ms ahead (%llu ms, rc %d)",
		(unsigned long long)dm, rc);
	pthread_cond_destroy(&cv);
	return tap_done();
}
