/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_CLOCK_H
#define FG_DP_CLOCK_H
/*
 * Wall-clock time from the TSC, without a syscall per read: one calibration
 * point (TSC, Unix time) taken at start, a fixed-point multiplier, and an
 * offset that a slow-path thread re-synchronises against CLOCK_REALTIME every
 * DP_CLOCK_RESYNC_MS (clock_resync()), so that a TSC that drifts from the
 * wall clock, or a wall clock that NTP stepped, is followed within a second.
 * Workers read it once per burst: one relaxed load of the shared offset more.
 */
#include <stdint.h>
#include <stdlib.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "common/now.h"

/* How often the data plane's control loop re-synchronises the clock with the wall clock. */
#define DP_CLOCK_RESYNC_MS 1000

/*
 * FOR TESTS ONLY: this environment variable (signed milliseconds) shifts the data plane's
 * clock against the wall clock, as a drifted or mis-set clock would, so that tests can see the
 * control plane refuse what it admits and the skew it reports. Never set it in production.
 */
#define DP_CLOCK_TEST_OFFSET_ENV "FG_TEST_CLOCK_OFFSET_MS"

struct clock {
	uint64_t base_tsc;
	uint64_t base_unix_ms;
	uint64_t ms_mult; /* milliseconds per TSC tick, in 32.32 fixed point */
	uint64_t tsc_hz;
	const int64_t *offset_ms; /* added to every reading (clock_sync's); NULL: none */
};

/*
 * The shared calibration of a data plane's workers: ref is copied into each worker's clock
 * (clock_attach()), offset_ms is written by the thread that calls clock_resync() and
 * read by the workers (an aligned 64-bit word: never torn).
 */
struct clock_sync {
	struct clock ref;
	int64_t test_offset_ms; /* DP_CLOCK_TEST_OFFSET_ENV at start; 0 in production */
	uint64_t resyncs;	/* clock_resync() calls */
	int64_t last_step_ms;	/* how far the last resync moved the clock */
	int64_t offset_ms __rte_cache_aligned;
};

/* Calibrates c against CLOCK_REALTIME; needs rte_get_tsc_hz(), so call after rte_eal_init(). */
static inline void
clock_init(struct clock *c)
{
	c->tsc_hz = rte_get_tsc_hz();
	c->base_unix_ms = now_wall_ms();
	c->base_tsc = rte_rdtsc();
	c->ms_mult = (uint64_t)(((unsigned __int128)1000 << 32) / c->tsc_hz);
	c->offset_ms = NULL;
}

/* Unix time in milliseconds at TSC value tsc, before the offset. */
static inline uint64_t
clock_raw_ms(const struct clock *c, uint64_t tsc)
{
	return c->base_unix_ms +
	       (uint64_t)(((unsigned __int128)(tsc - c->base_tsc) * c->ms_mult) >> 32);
}

/* Unix time in milliseconds at TSC value tsc. */
static inline uint64_t
clock_ms(const struct clock *c, uint64_t tsc)
{
	uint64_t ms = clock_raw_ms(c, tsc);

	if (c->offset_ms != NULL)
		ms += (uint64_t)__atomic_load_n(c->offset_ms, __ATOMIC_RELAXED);
	return ms;
}

/*
 * Calibrates s (after rte_eal_init()) and reads DP_CLOCK_TEST_OFFSET_ENV: the clock starts
 * shifted by it. Returns the test offset (0 when unset or not a number).
 */
static inline int64_t
clock_sync_init(struct clock_sync *s)
{
	const char *t = getenv(DP_CLOCK_TEST_OFFSET_ENV);
	char *end = NULL;
	long long v = t != NULL ? strtoll(t, &end, 10) : 0;

	clock_init(&s->ref);
	s->ref.offset_ms = &s->offset_ms;
	s->test_offset_ms = t != NULL && end != t && *end == '\0' ? (int64_t)v : 0;
	s->resyncs = 0;
	s->last_step_ms = 0;
	__atomic_store_n(&s->offset_ms, s->test_offset_ms, __ATOMIC_RELAXED);
	return s->test_offset_ms;
}

/* Gives c the shared calibration of s (before the worker reads it). */
static inline void
clock_attach(struct clock *c, const struct clock_sync *s)
{
	*c = s->ref;
}

/*
 * Re-synchronises s: the offset becomes what makes the TSC reading tsc equal wall_ms (plus the
 * test offset). Slow path (one writer). Returns how far the clock moved, in ms.
 */
static inline int64_t
clock_resync(struct clock_sync *s, uint64_t wall_ms, uint64_t tsc)
{
	int64_t old = __atomic_load_n(&s->offset_ms, __ATOMIC_RELAXED);
	int64_t off = (int64_t)(wall_ms - clock_raw_ms(&s->ref, tsc)) + s->test_offset_ms;

	__atomic_store_n(&s->offset_ms, off, __ATOMIC_RELAXED);
	s->resyncs++;
	s->last_step_ms = off - old;
	return off - old;
}

#endif
