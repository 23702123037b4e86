/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/cp_cron.h"

#include <inttypes.h>

#include "common/log.h"
#include "common/now.h"
#include "common/wire.h"
#include "pg/pg_conn.h"

/*
 * A retired sale key must outlive the purchase tokens of every data plane: when one reports
 * (DP_STATS gauge purchase_token_ttl_s) a longer lifetime than [controlplane]
 * purchase_token_ttl, retired keys are kept that long from then on (never shorter again: its
 * tokens are out there), and the operator is told once.
 */
static void
follow_token_ttl(struct cp_ctx *c)
{
	uint64_t ttl_s = 0, life;
	uint32_t dp = 0;

	if (dp_stats_gauge_max(c->dps, "purchase_token_ttl_s", &ttl_s, &dp) != 0 ||
		ttl_s * 1000 <= c->cfg->purchase_token_ttl_ms)
		return;
	life = ttl_s * 1000 + CP_STATE_KEY_LATE_MS;
	if (life <= c->st->key_life_ms)
		return;
	c->st->key_life_ms = life;
	LOG_WARN("data plane %u mints purchase tokens valid %" PRIu64 " s, longer than "
		 "[controlplane] purchase_token_ttl (%" PRIu32 " ms): retired sale keys now verify "
		 "that long; set purchase_token_ttl to the data planes' longest",
		dp, ttl_s, c->cfg->purchase_token_ttl_ms);
}

/* At most this long between two looks at PostgreSQL's clock while it is behind ours: a step of
 * either clock is followed that soon. */
#define CP_CRON_DB_CLOCK_RECHECK_MS 5000

/*
 * Whether PostgreSQL's clock has not reached due_ms (Unix ms) yet, ours having reached it: a
 * sale's end and a key's retirement are PostgreSQL's to say, by its clock (now() in its
 * queries), so loading the state before then would find nothing changed, a heartbeat after
 * heartbeat. When it has not, *retry_mono_ms receives when to look again: when PostgreSQL's
 * clock should reach due_ms, on the monotonic clock, a heartbeat away at least and
 * CP_CRON_DB_CLOCK_RECHECK_MS at most; the wait is counted, and a skew of more than a heartbeat
 * logged (once a minute at most). False too when PostgreSQL cannot be asked: the caller's own
 * queries say so.
 */
static bool
db_clock_before(struct cp_ctx *c, uint64_t due_ms, uint64_t mono_ms, uint64_t wall_ms,
	uint64_t *retry_mono_ms)
{
	char err[256];
	uint64_t db_ms, wait_ms, behind_ms;

	if (pg_conn_now_ms(c->pg, &db_ms, err, sizeof(err)) != 0 || db_ms >= due_ms)
		return false;
	wait_ms = due_ms - db_ms;
	if (wait_ms > CP_CRON_DB_CLOCK_RECHECK_MS)
		wait_ms = CP_CRON_DB_CLOCK_RECHECK_MS;
	if (wait_ms < c->cfg->heartbeat_ms)
		wait_ms = c->cfg->heartbeat_ms;
	*retry_mono_ms = mono_ms + wait_ms;
	behind_ms = wall_ms > db_ms ? wall_ms - db_ms : 0;
	c->cron.db_clock_waits++;
	c->cron.db_clock_behind_ms = behind_ms;
	if (behind_ms > c->cfg->heartbeat_ms)
		LOG_RL(LOG_LEVEL_WARN, 60000,
			"PostgreSQL's clock is %" PRIu64 " ms behind the control plane's: sales "
			"end and sale keys retire by PostgreSQL's clock, so the control plane "
			"waits for it (check NTP on both hosts)",
			behind_ms);
	return true;
}

/* Removes the sale keys whose last token and receipt can no longer be valid, and tells the data
 * planes; not before PostgreSQL's clock reaches the retirement too (db_clock_before()). On a
 * database error it tries again a heartbeat later (mono_ms: monotonic, wall_ms: Unix ms). */
static void
retire_keys(struct cp_ctx *c, uint64_t mono_ms, uint64_t wall_ms)
{
	char err[512];
	unsigned removed = 0;

	if (db_clock_before(c, c->st->next_key_retire_ms, mono_ms, wall_ms, &c->key_retry_mono_ms))
		return;
	if (pg_keys_expire(c->pg, c->st->key_life_ms, &removed, err, sizeof(err)) != 0) {
		LOG_RL(LOG_LEVEL_WARN, 60000, "retiring sale keys: %s", err);
		c->key_retry_mono_ms = mono_ms + c->cfg->heartbeat_ms;
		return;
	}
	c->cron.reloads_key_retire++;
	if (cp_state_load(c->st, c->pg, c->rs, err, sizeof(err)) != 0) {
		LOG_RL(LOG_LEVEL_WARN, 60000, "state reload after retiring sale keys: %s", err);
		c->key_retry_mono_ms = mono_ms + c->cfg->heartbeat_ms;
		return;
	}
	/* A key may retire later than listed (an event it signed for was extended). */
	if (c->st->next_key_retire_ms != 0 && c->st->next_key_retire_ms <= wall_ms)
		c->key_retry_mono_ms = mono_ms + c->cfg->heartbeat_ms;
	if (removed > 0) {
		cp_state_publish_keys(c->st, c->links);
		LOG_NOTICE("%u retired sale key%s removed: the last token or receipt %s signed can "
			   "no longer be valid",
			removed, removed == 1 ? "" : "s", removed == 1 ? "it" : "they");
	}
}

/*
 * The data planes' 64 event slots go to the upcoming and selling sales first (cp_state_load()):
 * when one of those ends, the set may change by itself, so the events are loaded again then (once
 * PostgreSQL's clock says so too: db_clock_before()); and a set that lost an event since it was
 * published goes out as a snapshot.
 */
static void
follow_events(struct cp_ctx *c, uint64_t mono_ms, uint64_t wall_ms)
{
	struct cp_state *st = c->st;
	char err[512];
	bool due = st->events_next_end_ms != 0 && wall_ms >= st->events_next_end_ms;

	if ((!due && !st->events_dropped) || mono_ms < st->events_retry_mono_ms)
		return;
	if (due && db_clock_before(c, st->events_next_end_ms, mono_ms, wall_ms,
			   &st->events_retry_mono_ms)) {
		if (!st->events_dropped)
			return;
		due = false;
	}
	if (due) {
		c->cron.reloads_sale_end++;
		if (cp_state_load(st, c->pg, c->rs, err, sizeof(err)) != 0) {
			LOG_RL(LOG_LEVEL_WARN, 60000, "events reload after a sale ended: %s", err);
			st->events_retry_mono_ms = mono_ms + c->cfg->heartbeat_ms;
			return;
		}
		/* PostgreSQL's clock may be a little behind ours: the same end, a beat later. */
		if (st->events_next_end_ms != 0 && st->events_next_end_ms <= wall_ms)
			st->events_retry_mono_ms = mono_ms + c->cfg->heartbeat_ms;
	}
	cp_state_publish_event_set(st, c->links);
}

/* Each live data plane takes its share of the forward budget: a data plane that appears or goes
 * stale changes every share (docs/limits.md "Per-event forward budget"). */
static void
follow_data_planes(struct cp_ctx *c, uint64_t mono_ms)
{
	unsigned n = dp_stats_live(c->dps, mono_ms);

	if (n == 0)
		n = 1; /* none heard from yet: the first one takes the whole budget */
	if (n == c->st->forward_shares)
		return;
	c->st->forward_shares = n;
	cp_state_publish_limits(c->st, c->links);
	LOG_INFO("%u live data plane(s): each takes 1/%u of the forward budget", n, n);
}

uint64_t
cp_cron(struct cp_ctx *c, uint64_t mono_ms, uint64_t wall_ms)
{
	uint64_t wake;

	decider_flush(c->dec, mono_ms, wall_ms, false);
	struct wire_dp_refused refused[16];
	unsigned n_refused = dp_ids_refusals_due(c->ids, mono_ms, refused, 16);

	/* Each refused data plane is told (at most once a second each) while it is heard. */
	if (n_refused > 0)
		cp_links_publish(c->links, WIRE_T_DP_REFUSED, refused, n_refused);
	/* After a start, the data planes first report how long their tokens live (they send
	 * their counters at once when they connect, then every second; a longer lifetime
	 * learned before the restart is not stored): no key goes before that. */
	uint64_t retire_from = c->started_mono_ms + CP_STATE_KEY_RETIRE_HOLD_MS;

	if (retire_from < c->key_retry_mono_ms)
		retire_from = c->key_retry_mono_ms;
	if (c->st->next_key_retire_ms != 0 && wall_ms >= c->st->next_key_retire_ms &&
		mono_ms >= retire_from)
		retire_keys(c, mono_ms, wall_ms);
	if (mono_ms >= c->next_heartbeat_mono_ms) {
		/* The heartbeat carries Unix time: the data planes compare it with theirs. */
		struct wire_heartbeat hb = {wall_ms};

		cp_links_publish(c->links, WIRE_T_HEARTBEAT, &hb, 1);
		follow_data_planes(c, mono_ms);
		follow_events(c, mono_ms, wall_ms);
		store_ensure_connected(c->rs);
		/* The window keys follow PostgreSQL's state (after a start, a reload, or Redis
		 * coming back): reserve.lua refuses outside the sale by itself. */
		if (cp_state_sync_windows(c->st, c->rs) != 0)
			LOG_RL(LOG_LEVEL_WARN, 60000,
				"Redis: the sale window keys could not be written yet; the control "
				"plane refuses outside the sale meanwhile, and tries again");
		follow_token_ttl(c);
		c->next_heartbeat_mono_ms = mono_ms + c->cfg->heartbeat_ms;
	}
	/* The draws' work, in steps: reservations of other events are decided in between. */
	uint64_t draw_wake =
		c->draws != NULL ? draw_runner_step(c->draws, mono_ms, wall_ms) : UINT64_MAX;

	wake = decider_deadline(c->dec);
	if (draw_wake < wake)
		wake = draw_wake;
	if (c->pow != NULL) {
		uint64_t due = cp_pow_tick(c->pow, c->st, c->dps, c->links, mono_ms, wall_ms);

		if (due < wake)
			wake = due;
	}
	if (c->st->next_key_retire_ms != 0) {
		uint64_t due = now_mono_at_wall(c->st->next_key_retire_ms, mono_ms, wall_ms);

		due = due > retire_from ? due : retire_from;
		if (due < wake)
			wake = due;
	}
	/* Every wake computed from a Unix time (the key's, a draw's) is looked at again by the
	 * next heartbeat at the latest: a step of the wall clock is followed within one. */
	return wake < c->next_heartbeat_mono_ms ? wake : c->next_heartbeat_mono_ms;
}
