/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_CTX_H
#define FG_CP_CTX_H
/* Everything the control plane's loop and its admin commands work on. */
#include <stdint.h>

#include "controlplane/admin_conns.h"
#include "controlplane/cp_config.h"
#include "controlplane/cp_links.h"
#include "controlplane/cp_pow.h"
#include "controlplane/cp_state.h"
#include "controlplane/cp_turns.h"
#include "controlplane/decider.h"
#include "controlplane/dp_ids.h"
#include "controlplane/draw_runner.h"
#include "controlplane/dp_stats.h"
#include "common/metrics.h"
#include "pg/pg.h"
#include "store/store_conn.h"

struct cp_follow;

struct cp_ctx {
	const struct cp_config *cfg;
	struct pg_conn *pg;
	struct store *rs;
	struct cp_links *links;
	struct cp_state *st;
	struct decider *dec;
	struct draw_runner *draws; /* the draws of events with a draw window (draw_runner.h) */
	struct dp_stats *dps;     /* the data planes' counters, as they last reported them */
	struct dp_ids *ids;       /* which data plane holds each dp id */
	struct metrics *metrics;  /* GET /metrics */
	struct pg_health *pg_health; /* PostgreSQL's health probe (pg/pg_health.h; may be NULL) */
	struct cp_pow *pow;       /* the challenge's automatic difficulty (may be NULL in tests) */
	uint64_t started_mono_ms; /* when the loop started (monotonic ms) */
	struct admin_conns *admin; /* the admin socket's connections */
	uint64_t snapshots_sent;
	uint64_t next_heartbeat_mono_ms; /* cp_cron()'s: when the next HEARTBEAT is due */
	uint64_t key_retry_mono_ms; /* cp_cron()'s: no key retirement before (after a failure) */
	/* cp_cron()'s state reloads when a sale ends or a key retires, and its waits for
	 * PostgreSQL's clock (stats "follow", metrics): written by the loop only. */
	struct cp_cron_counters {
		uint64_t reloads_sale_end, reloads_key_retire;
		uint64_t db_clock_waits;     /* a due time PostgreSQL's clock had not reached yet */
		uint64_t db_clock_behind_ms; /* how far behind it was the last time (0: never) */
	} cron;
	/* The slow-job thread (controlplane/cp_slow.h; NULL: commands run on the loop). */
	struct cp_slow *slow;
	/* Following other control planes' admin changes (controlplane/cp_follow.h; may be NULL). */
	struct cp_follow *follow;
	/* On the slow-job thread's context: the loop's (whose state only the loop touches,
	 * through cp_slow_on_loop()); NULL on the loop's own. */
	struct cp_ctx *loop;
	struct cp_turns turns; /* the loop's turns: the longest holds decisions longest */
	/* Test hook FG_TEST_DROP_ORDERED_USER (docs/operations.md): the order writer's ORDERED
	 * results of this user are not relayed to the data planes; 0: none dropped. */
	uint64_t test_drop_ordered_user;
};

#endif
