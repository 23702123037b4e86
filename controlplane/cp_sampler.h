/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_CP_SAMPLER_H
#define FG_CP_CP_SAMPLER_H
/*
 * The samples of live sales (docs/operations.md "The report of a sale"): a thread of its own,
 * with a PostgreSQL connection of its own, that once a second writes a row of sale_samples per
 * open event (pg/pg_samples.h): the decisions so far (decider_counters(), read as the metrics
 * thread reads them: plain words, a moment old at worst), the data planes' answers so far
 * (dp_stats, locked) and the sale's figures from PostgreSQL. The decisions' loop never waits
 * for it; a PostgreSQL that is away costs samples (a warning a minute), nothing else.
 */
#include <stddef.h>
#include <stdint.h>

#include "controlplane/cp_ctx.h"

struct cp_sampler;

/*
 * Starts sampling c (its dec and dps must outlive the sampler) into conninfo every interval_ms.
 * Returns the sampler, or NULL with one line in err (no memory or thread).
 */
struct cp_sampler *cp_sampler_start(
	struct cp_ctx *c, const char *conninfo, unsigned interval_ms, char *err, size_t errlen);

/* Stops the thread (a sample being written finishes first) and frees s; NULL: nothing. */
void cp_sampler_stop(struct cp_sampler *s);

#endif
