/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of common/now.h: units, clocks and monotonicity. */
#include <time.h>

#include "common/now.h"
#include "tests/tap.h"

int
main(void)
{
	time_t before = time(NULL);
	uint64_t wall = now_wall_ms();
	time_t after = time(NULL);

	tap_ok(wall / 1000 >= (uint64_t)before && wall / 1000 <= (uint64_t)after,
		"now_wall_ms is Unix time in milliseconds (%llu within %lld..%lld s)",
		(unsigned long long)wall, (long long)before, (long long)after);

	/* Each finer clock read between two reads of a coarser one lies between them. */
	uint64_t ms0 = now_mono_ms(), us = now_mono_us(), ms1 = now_mono_ms();
	uint64_t us0 = now_mono_us(), ns = now_mono_ns(), us1 = now_mono_us();

	tap_ok(us / 1000 >= ms0 && us / 1000 <= ms1, "now_mono_us is now_mono_ms in microseconds");
	tap_ok(ns / 1000 >= us0 && ns / 1000 <= us1, "now_mono_ns is now_mono_us in nanoseconds");

	/* A 20 ms sleep shows as 20 ms or more, and far less than a second, on both clocks. */
	struct timespec nap = {0, 20 * 1000 * 1000};
	uint64_t m0 = now_mono_ms(), w0 = now_wall_ms();

	nanosleep(&nap, NULL);

	uint64_t dm = now_mono_ms() - m0, dw = now_wall_ms() - w0;

	tap_ok(dm >= 20 && dm < 1000, "monotonic time advances by a sleep (%llu ms)",
		(unsigned long long)dm);
	tap_ok(dw >= 19 && dw < 1000, "wall time advances by a sleep (%llu ms)",
		(unsigned long long)dw);

	unsigned backwards = 0;
	uint64_t last = now_mono_ns();

	for (int i = 0; i < 100000; i++) {
		uint64_t t = now_mono_ns();

		backwards += t < last;
		last = t;
	}
	tap_ok(backwards == 0, "now_mono_ns never goes backwards (%u of 100000 reads)", backwards);
	return tap_done();
}
