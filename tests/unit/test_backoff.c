/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of common/backoff.h: doubling up to the bound, never past it, never overflowing. */
#include <limits.h>

#include "common/backoff.h"
#include "tests/tap.h"

int
main(void)
{
	/* The Redis store's defaults (50 ms doubling to 2 s): 50 .. 1600, then 2000 and staying. */
	static const unsigned want[] = {100, 200, 400, 800, 1600, 2000, 2000};
	unsigned cur = 50, bad = 0;

	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		cur = backoff_double(cur, 2000);
		bad += cur != want[i];
	}
	tap_ok(bad == 0, "50 doubles to 1600, then stops at the bound 2000 (%u wrong steps)", bad);
	tap_ok(backoff_double(250, 4000) == 500 && backoff_double(2000, 4000) == 4000 &&
			backoff_double(4000, 4000) == 4000,
		"250 → 500; half the bound → the bound; the bound stays");
	tap_ok(backoff_double(1999, 4000) == 3998, "below half the bound: doubled exactly");
	tap_ok(backoff_double(UINT_MAX / 2 + 1, UINT_MAX) == UINT_MAX &&
			backoff_double(UINT_MAX, UINT_MAX) == UINT_MAX,
		"no overflow near UINT_MAX: the bound");
	return tap_done();
}
