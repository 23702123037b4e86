/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_CRON_H
#define FG_CP_CRON_H
/*
 * The control plane's timed work, in one place (as Redis's serverCron): the main loop calls
 * cp_cron() after every wake-up and sleeps until the time it returns, or until a socket wakes
 * it.
 */
#include <stdint.h>

#include "controlplane/cp_ctx.h"

/*
 * Does what is due at mono_ms (monotonic ms, common/now.h now_mono_ms(): every interval, period
 * and back-off) and wall_ms (Unix ms, read with it: what is Unix time by meaning, the sale's
 * times, the keys' retirement, the heartbeat's clock):
 *   - the decider's batches whose wait (batch_wait) is over, and full ones, go to Redis;
 *   - every heartbeat interval: a HEARTBEAT to the data planes, and a reconnect to Redis when
 *     it is down (so that the "back" notice does not wait for traffic), and the longest
 *     purchase token lifetime the data planes report raises how long retired keys verify;
 *   - the draws (controlplane/draw_runner.h): a bounded step of each draw that is due, and the
 *     FAIR updates that are due;
 *   - when a retiring sale key's time is up: it is deleted and the data planes get the keys
 *     without it (a database error tries again a heartbeat later);
 *   - when a sale ends: the events are loaded again (the data planes' 64 slots may change).
 * A sale's end and a key's retirement are PostgreSQL's clock's: when that clock has not reached
 * the time yet, nothing is loaded; PostgreSQL's clock is looked at again when it should have,
 * a heartbeat to a few seconds later (docs/operations.md "Timers follow the monotonic clock").
 * Returns when the next work is due (monotonic ms): the next heartbeat, the decider's deadline or
 * the next key retirement, whichever comes first; never after the next heartbeat, so that a
 * step of the wall clock is followed within one. Cannot fail.
 */
uint64_t cp_cron(struct cp_ctx *c, uint64_t mono_ms, uint64_t wall_ms);

#endif
