/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_OW_CRON_H
#define FG_OW_CRON_H
/*
 * The order writer's timed work, in one place (as Redis's serverCron). The main loop calls
 * ow_cron() once per turn, before it reads the outboxes; the loop does not sleep to its
 * deadlines but polls every poll_interval when idle (at most 1 s, below every interval here).
 */
#include <stdint.h>

#include "order-writer/ow_ctx.h"

/*
 * Does what is due at now_ms (monotonic ms), each job after the batch in flight is finished
 * (whatever else uses PostgreSQL waits for it):
 *   - every events_refresh: the events whose outboxes are read, from PostgreSQL;
 *   - every claim_interval: the entries pending longer than claim_idle are claimed and written;
 *   - every sweep_interval: one expiry sweep (expiry.h);
 *   - every results_interval: cancelled orders' releases and paid orders' results (ow_results.h);
 *   - every trim_interval (0: never; not at start): acknowledged outbox entries are trimmed;
 *   - every minute (not at start): the counters are logged at level info.
 * The first call does every job but the last two. Errors are logged; the job runs again at its
 * next time.
 */
void ow_cron(struct ow_ctx *c, uint64_t now_ms);

/* Logs the writer's and the sweeper's counters (the minute's log, and once at exit). */
void ow_cron_log_stats(const struct ow_ctx *c);

#endif
