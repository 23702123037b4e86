/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_CLOCK_H
#define FG_DP_CLOCK_H
/*
 * Wall-clock time from the TSC, without a syscall per read: one calibration
 * point (TSC, Unix time) taken at start, and a fixed-point multiplier.
 * Workers read it once per burst.
 */
#include <stdint.h>
#include <rte_cycles.h>

#include "common/now.h"

struct dp_clock {
	uint64_t base_tsc;
	uint64_t base_unix_ms;
	uint64_t ms_mult; /* milliseconds per TSC tick, in 32.32 fixed point */
	uint64_t tsc_hz;
};

/* Calibrates c against CLOCK_REALTIME; needs rte_get_tsc_hz(), so call after rte_eal_init(). */
static inline void
dp_clock_init(struct dp_clock *c)
{
	c->tsc_hz = rte_get_tsc_hz();
	c->base_unix_ms = now_wall_ms();
	c->base_tsc = rte_rdtsc();
	c->ms_mult = (uint64_t)(((unsigned __int128)1000 << 32) / c->tsc_hz);
}

/* Unix time in milliseconds at TSC value tsc. */
static inline uint64_t
dp_clock_ms(const struct dp_clock *c, uint64_t tsc)
{
	return c->base_unix_ms + (uint64_t)(((unsigned __int128)(tsc - c->base_tsc) * c->ms_mult) >> 32);
}

#endif
