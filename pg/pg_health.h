/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_HEALTH_H
#define FG_PG_PG_HEALTH_H
/*
 * PostgreSQL's health as one daemon sees it (docs/metrics.md "PostgreSQL's health"): a thread of
 * its own, with a connection of its own, that asks "SELECT 1" every interval and keeps whether it
 * answered, how long it took and when it last did. The daemons' metrics threads read it
 * (pg_health_read()); nothing on a decision's path waits for it. A probe that has not answered
 * within the timeout counts as PostgreSQL away, also while it still waits (a hung server).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pg_health;

/* What pg_health_read() tells. */
struct pg_health_state {
	bool up;		/* the last probe answered, and none waits past the timeout */
	double query_s;		/* the last probe's time, or the waiting one's when longer */
	double since_success_s; /* since the last answer (since the start when none yet) */
	uint64_t failures;	/* probes that failed or timed out */
};

/*
 * Starts probing conninfo (a libpq conninfo, copied) every interval_ms, a probe counted failed
 * after timeout_ms, on a session named app (pg_conn_new_named(); NULL: unnamed). Returns the
 * prober, or NULL with one line in err (out of memory, no thread, a conninfo pg_conn refuses).
 */
struct pg_health *pg_health_start(const char *conninfo, const char *app, unsigned interval_ms,
	unsigned timeout_ms, char *err, size_t errlen);

/* The health as of now_ms (monotonic ms, common/now.h's now_mono_ms()) into *out. Any thread. */
void pg_health_read(struct pg_health *h, uint64_t now_ms, struct pg_health_state *out);

/*
 * Stops the thread and frees h; NULL: nothing. A probe stuck on a hung server is not waited for
 * longer than the timeout: its thread is left to free h when the probe returns.
 */
void pg_health_stop(struct pg_health *h);

#endif
