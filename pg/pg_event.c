/* SPDX-License-Identifier: BSD-3-Clause */
#include "pg/pg_event.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/draw.h"
#include "common/hex.h"
#include "common/parse.h"
#include "pg/pg_row.h"

/* The columns that event_from_row() reads, in its order. */
/* clang-format off */
#define EVENT_COLUMNS                                                                        \
	"e.id, e.name, " PG_ROW_MS("e.starts_at") ", " PG_ROW_MS("e.ends_at") ", e.pay_window_s, "          \
	"e.per_user_limit, e.state, " PG_ROW_MS("e.created_at") ", s.initial, s.available, "         \
	"coalesce(" PG_ROW_MS("e.queue_opens_at") ", 0), e.draw_window_s, e.pow_bits, "              \
	"e.pow_auto_max, encode(e.draw_seed, 'hex'), encode(e.draw_digest, 'hex'), "          \
	"coalesce(e.draw_entrants, 0), coalesce(" PG_ROW_MS("e.draw_done_at") ", 0)"
#define EVENT_NCOLUMNS 18
/* clang-format on */

static void
event_from_row(const PGresult *res, int row, struct admin_event *ev)
{
	enum admin_event_state st = ADMIN_EV_DRAFT;

	memset(ev, 0, sizeof(*ev));
	ev->id = (uint32_t)pg_row_u64(res, row, 0);
	snprintf(ev->name, sizeof(ev->name), "%s", PQgetvalue(res, row, 1));
	ev->starts_at_ms = pg_row_u64(res, row, 2);
	ev->ends_at_ms = pg_row_u64(res, row, 3);
	ev->pay_window_s = (uint32_t)pg_row_u64(res, row, 4);
	ev->per_user_limit = (uint32_t)pg_row_u64(res, row, 5);
	(void)admin_event_state_parse(PQgetvalue(res, row, 6), &st);
	ev->state = st;
	ev->created_at_ms = pg_row_u64(res, row, 7);
	ev->stock = (uint32_t)pg_row_u64(res, row, 8);
	ev->available = (uint32_t)pg_row_u64(res, row, 9);
	ev->queue_opens_at_ms = pg_row_u64(res, row, 10);
	ev->draw_window_s = (uint32_t)pg_row_u64(res, row, 11);
	ev->pow_bits = (uint8_t)pg_row_u64(res, row, 12);
	ev->pow_auto_max = (uint8_t)pg_row_u64(res, row, 13);
	/* NULL reads as "": no seed (an event older than the fair start), no digest yet. */
	ev->has_seed = hex_decode(PQgetvalue(res, row, 14), (size_t)PQgetlength(res, row, 14), ev->draw_seed, DRAW_DIGEST_LEN) == 0;
	ev->has_digest = hex_decode(PQgetvalue(res, row, 15), (size_t)PQgetlength(res, row, 15), ev->draw_digest, DRAW_DIGEST_LEN) == 0;
	ev->draw_entrants = (uint32_t)pg_row_u64(res, row, 16);
	ev->draw_done_at_ms = pg_row_u64(res, row, 17);
}

/*
 * Runs sql, a SELECT of EVENT_COLUMNS, and reads its first cap rows into out; *n receives how
 * many rows it answered (more than cap: the rest are not read). Returns 0 or < 0 with err.
 */
static int
event_query(struct pg_conn *s, const char *sql, int nv, const char *const *vals,
	struct admin_event *out, unsigned cap, unsigned *n, char *err, size_t errlen)
{
	int rc;
	PGresult *res = pg_conn_query(s, sql, nv, vals, &rc, err, errlen);

	if (res == NULL)
		return rc;
	*n = (unsigned)PQntuples(res);
	for (unsigned i = 0; i < *n && i < cap; i++)
		event_from_row(res, (int)i, &out[i]);
	PQclear(res);
	return 0;
}

int
pg_event_get(struct pg_conn *s, uint32_t id, struct admin_event *out, char *err, size_t errlen)
{
	char ids[16];
	const char *vals[1] = {ids};
	unsigned n = 0;
	int rc;

	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	rc = event_query(s,
		"SELECT " EVENT_COLUMNS " FROM events e JOIN stock s ON s.event_id = e.id "
		"WHERE e.id = $1",
		1, vals, out, 1, &n, err, errlen);
	if (rc == 0 && n == 0) {
		snprintf(err, errlen, "no event %" PRIu32 " (event list shows the events)", id);
		return -ENOENT;
	}
	return rc;
}

int
pg_event_list(struct pg_conn *s, struct admin_event *out, unsigned cap, unsigned *n, char *err,
	size_t errlen)
{
	return event_query(s,
		"SELECT " EVENT_COLUMNS " FROM events e JOIN stock s ON s.event_id = e.id "
		"ORDER BY e.id",
		0, NULL, out, cap, n, err, errlen);
}

/*
 * The answer to a SELECT of event id's row whose first column is its state: res with *from set,
 * or NULL (res freed) with *rc: -ENOENT and a message when there is no such event; unchanged
 * when the query failed (res NULL: pg_conn_query() set *rc and err).
 */
static PGresult *
event_row(
	PGresult *res, uint32_t id, enum admin_event_state *from, int *rc, char *err, size_t errlen)
{
	if (res == NULL)
		return NULL;
	if (PQntuples(res) == 0) {
		PQclear(res);
		snprintf(err, errlen, "no event %" PRIu32 " (event list shows the events)", id);
		*rc = -ENOENT;
		return NULL;
	}
	(void)admin_event_state_parse(PQgetvalue(res, 0, 0), from);
	return res;
}

/*
 * The end of a change of event id in an open transaction: runs sql (n parameters vals),
 * commits, and reads the event into *out (may be NULL); rolls back on an error.
 */
static int
event_update_commit(struct pg_conn *s, const char *sql, int n, const char *const *vals, uint32_t id,
	struct admin_event *out, char *err, size_t errlen)
{
	int rc = pg_conn_exec(s, sql, n, vals, err, errlen);

	if (rc == 0)
		rc = pg_conn_commit(s, err, errlen);
	if (rc != 0) {
		pg_conn_rollback(s);
		return rc;
	}
	return out != NULL ? pg_event_get(s, id, out, err, errlen) : 0;
}

/* Live: a sale still to come or running (docs/operations.md "More than 64 events"). */
#define EVENT_LIVE "(e.state IN ('draft', 'preheated', 'open') AND e.ends_at > now())"

int
pg_event_list_slots(struct pg_conn *s, struct admin_event *out, unsigned cap, unsigned *n,
	unsigned *n_live, uint64_t *next_end_ms, char *err, size_t errlen)
{
	char lim[16];
	const char *vals[1] = {lim};
	PGresult *res;
	int rc;

	snprintf(lim, sizeof(lim), "%u", cap);
	/* clang-format off */
	res = pg_conn_query(s,
		"SELECT " EVENT_COLUMNS ", count(*) FILTER (WHERE " EVENT_LIVE ") OVER (), "
		"coalesce(" PG_ROW_MS("min(e.ends_at) FILTER (WHERE " EVENT_LIVE ") OVER ()") ", 0) "
		"FROM events e JOIN stock s ON s.event_id = e.id WHERE e.state <> 'archived' "
		"ORDER BY " EVENT_LIVE " DESC, "
		"CASE WHEN " EVENT_LIVE " THEN array_position("
		"ARRAY['open', 'preheated', 'draft'], e.state) END, "
		"CASE WHEN " EVENT_LIVE " THEN e.starts_at END, "
		"CASE WHEN e.state = 'closed' THEN least(e.ends_at, e.updated_at) "
		"ELSE e.ends_at END DESC, e.id LIMIT $1",
		1, vals, &rc, err, errlen);
	/* clang-format on */
	if (res == NULL)
		return rc;
	*n = (unsigned)PQntuples(res);
	*n_live = 0;
	*next_end_ms = 0;
	for (unsigned i = 0; i < *n && i < cap; i++)
		event_from_row(res, (int)i, &out[i]);
	if (*n > 0) {
		*n_live = (unsigned)pg_row_u64(res, 0, EVENT_NCOLUMNS);
		*next_end_ms = pg_row_u64(res, 0, EVENT_NCOLUMNS + 1);
	}
	PQclear(res);
	return 0;
}

int
pg_event_page(struct pg_conn *s, bool has_state, enum admin_event_state state, uint32_t after,
	unsigned limit, struct admin_event *out, unsigned *n, bool *more, char *err, size_t errlen)
{
	char aft[16], lim[16];
	const char *vals[3] = {aft, has_state ? admin_event_state_name(state) : NULL, lim};
	int rc;

	snprintf(aft, sizeof(aft), "%" PRIu32, after);
	snprintf(lim, sizeof(lim), "%u", limit + 1);
	rc = event_query(s,
		"SELECT " EVENT_COLUMNS " FROM events e JOIN stock s ON s.event_id = e.id "
		"WHERE e.id > $1::bigint AND ($2::text IS NULL OR e.state = $2) "
		"ORDER BY e.id LIMIT $3",
		3, vals, out, limit, n, err, errlen);
	if (rc != 0)
		return rc;
	*more = *n > limit;
	if (*more)
		*n = limit;
	return 0;
}

int
pg_event_count_ready(struct pg_conn *s, uint32_t except, unsigned *n, char *err, size_t errlen)
{
	char ex[16];
	const char *vals[1] = {ex};
	uint64_t v;
	int rc;

	snprintf(ex, sizeof(ex), "%" PRIu32, except);
	rc = pg_conn_query_u64(s,
		"SELECT count(*) FROM events e WHERE e.state IN ('preheated', 'open') "
		"AND e.ends_at > now() AND e.id <> $1::bigint",
		1, vals, &v, err, errlen);
	if (rc == 0)
		*n = (unsigned)v;
	return rc;
}

int
pg_event_archive(struct pg_conn *s, uint32_t id, uint64_t redis_buyers, struct admin_event *out,
	char *err, size_t errlen)
{
	char ids[16];
	const char *vals[1] = {ids};
	enum admin_event_state from = ADMIN_EV_DRAFT;
	PGresult *res;
	uint64_t pending, orders, deadline_ms;
	bool ended;
	int rc;

	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	rc = pg_conn_begin(s, NULL, NULL, err, errlen);
	if (rc != 0)
		return rc;
	/* FOR UPDATE on the event: no order of it can be paid, expired or added meanwhile
	 * (the order writer's batches take the row FOR KEY SHARE). */
	/* clang-format off */
	res = pg_conn_query(s,
		"SELECT e.state, e.ends_at <= now(), "
		"(SELECT count(*) FROM orders o WHERE o.event_id = e.id AND o.status = 'pending'), "
		"(SELECT count(*) FROM orders o WHERE o.event_id = e.id), "
		"coalesce((SELECT " PG_ROW_MS("max(o.pay_deadline)") " FROM orders o WHERE o.event_id = e.id "
		"AND o.status = 'pending'), 0) "
		"FROM events e WHERE e.id = $1 FOR UPDATE",
		1, vals, &rc, err, errlen);
	/* clang-format on */
	if ((res = event_row(res, id, &from, &rc, err, errlen)) == NULL)
		goto fail;
	ended = pg_row_bool(res, 0, 1);
	pending = pg_row_u64(res, 0, 2);
	orders = pg_row_u64(res, 0, 3);
	deadline_ms = pg_row_u64(res, 0, 4);
	PQclear(res);
	if (from == ADMIN_EV_ARCHIVED) {
		rc = -EALREADY;
	} else if (!ended &&
		   (rc = admin_event_transition(id, from, ADMIN_EV_ARCHIVED, err, errlen)) != 0) {
		/* the message says why */
	} else if (pending > 0) {
		char t[40];

		parse_time_format(deadline_ms, t, sizeof(t));
		snprintf(err, errlen,
			"event %" PRIu32 " still has %" PRIu64
			" pending order(s), the last due at %s: archive it once they are paid or "
			"expired",
			id, pending, t);
		rc = -EPERM;
	} else if (orders < redis_buyers) {
		snprintf(err, errlen,
			"event %" PRIu32 ": Redis holds %" PRIu64 " buyers and PostgreSQL %" PRIu64
			" orders: the order writer has not written them all yet (archive it once "
			"it has; stats shows its backlog)",
			id, redis_buyers, orders);
		rc = -EPERM;
	} else {
		rc = pg_conn_exec(s,
			"UPDATE events SET state = 'archived', updated_at = now() WHERE id = $1", 1,
			vals, err, errlen);
		if (rc == 0)
			rc = pg_conn_commit(s, err, errlen);
		if (rc != 0)
			goto fail;
		return out != NULL ? pg_event_get(s, id, out, err, errlen) : 0;
	}
	pg_conn_rollback(s);
	if (rc == -EALREADY && out != NULL) {
		int grc = pg_event_get(s, id, out, err, errlen);

		if (grc != 0)
			return grc;
	}
	return rc;
fail:
	pg_conn_rollback(s);
	return rc;
}

int
pg_event_create(struct pg_conn *s, const struct admin_event *ev, struct admin_event *out, char *err,
	size_t errlen)
{
	char id[16], starts[24], ends[24], pay[16], limit[16], stock[16], queue[24], window[16],
		bits[8], bits_max[8], seed_hex[2 * DRAW_SEED_LEN + 1];
	const char *vals[11] = {
		id, ev->name, starts, ends, pay, limit, queue, window, bits, bits_max, seed_hex};
	uint8_t seed[DRAW_SEED_LEN];
	char t[40];
	PGresult *res;
	int rc;

	rc = admin_event_check(ev, err, errlen);
	if (rc != 0)
		return rc;
	/* The draw's seed: its SHA-256 is published from now on, the seed only after the draw
	 * (docs/fairness.md). Every event gets one, so that none is ever without. */
	if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
		snprintf(err, errlen, "getrandom: %s", strerror(errno));
		return -EIO;
	}
	hex_str(seed, DRAW_DIGEST_LEN, seed_hex);
	explicit_bzero(seed, sizeof(seed));
	snprintf(queue, sizeof(queue), "%" PRIu64, ev->queue_opens_at_ms);
	snprintf(window, sizeof(window), "%" PRIu32, ev->draw_window_s);
	snprintf(bits, sizeof(bits), "%u", ev->pow_bits);
	snprintf(bits_max, sizeof(bits_max), "%u", ev->pow_auto_max);
	snprintf(id, sizeof(id), "%" PRIu32, ev->id);
	snprintf(starts, sizeof(starts), "%" PRIu64, ev->starts_at_ms);
	snprintf(ends, sizeof(ends), "%" PRIu64, ev->ends_at_ms);
	snprintf(pay, sizeof(pay), "%" PRIu32, ev->pay_window_s);
	snprintf(limit, sizeof(limit), "%" PRIu32, ev->per_user_limit);
	snprintf(stock, sizeof(stock), "%" PRIu32, ev->stock);
	rc = pg_conn_begin(s, NULL, NULL, err, errlen);
	if (rc != 0)
		return rc;
	/* The database's clock decides "in the past", as it does for everything else. */
	/* clang-format off */
	res = pg_conn_query(s,
		"INSERT INTO events (id, name, starts_at, ends_at, pay_window_s, per_user_limit, "
		"queue_opens_at, draw_window_s, pow_bits, pow_auto_max, draw_seed) "
		"SELECT $1, $2, " PG_ROW_TS("$3") ", " PG_ROW_TS("$4") ", $5, $6, "
		"CASE WHEN $8::int > 0 THEN " PG_ROW_TS("$7") " END, $8, $9, $10, decode($11, 'hex') "
		"WHERE " PG_ROW_TS("$4") " > now() AND ($8::int = 0 OR " PG_ROW_TS("$7") " > now()) "
		"RETURNING id",
		11, vals, &rc, err, errlen);
	/* clang-format on */
	explicit_bzero(seed_hex, sizeof(seed_hex));
	if (res == NULL) {
		if (rc == -EEXIST)
			snprintf(err, errlen,
				"event %" PRIu32 " exists already (event show %" PRIu32 ")", ev->id,
				ev->id);
		goto fail;
	}
	if (PQntuples(res) == 0) {
		PQclear(res);
		rc = -EINVAL;
		/* Which of the two: the end decides first, as before the fair start. */
		res = pg_conn_query(s, "SELECT " PG_ROW_TS("$1") " > now()", 1,
			(const char *[]){ends}, &rc, err, errlen);
		if (res == NULL)
			goto fail;
		bool end_ahead = pg_row_bool(res, 0, 0);

		PQclear(res);
		rc = -EINVAL;
		if (!end_ahead) {
			parse_time_format(ev->ends_at_ms, t, sizeof(t));
			snprintf(err, errlen,
				"--ends-at (%s) is in the past: the sale could never open", t);
		} else {
			parse_time_format(ev->queue_opens_at_ms, t, sizeof(t));
			snprintf(err, errlen,
				"--queue-opens-at (%s) is in the past: the seed's commitment must "
				"be published before the pre-queue opens (docs/fairness.md)",
				t);
		}
		goto fail;
	}
	PQclear(res);
	vals[1] = stock;
	rc = pg_conn_exec(s, "INSERT INTO stock (event_id, initial, available) VALUES ($1, $2, $2)",
		2, vals, err, errlen);
	if (rc == 0)
		rc = pg_conn_commit(s, err, errlen);
	if (rc != 0)
		goto fail;
	return out != NULL ? pg_event_get(s, ev->id, out, err, errlen) : 0;
fail:
	pg_conn_rollback(s);
	return rc;
}

int
pg_event_set_state(struct pg_conn *s, uint32_t id, enum admin_event_state to,
	struct admin_event *out, char *err, size_t errlen)
{
	char ids[16];
	const char *vals[2] = {ids, admin_event_state_name(to)};
	enum admin_event_state from = ADMIN_EV_DRAFT;
	PGresult *res;
	bool ahead;
	int rc;

	if ((unsigned)to >= ADMIN_EV_STATES) {
		snprintf(err, errlen, "event %" PRIu32 ": not a state", id);
		return -EINVAL;
	}
	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	rc = pg_conn_begin(s, NULL, NULL, err, errlen);
	if (rc != 0)
		return rc;
	/* FOR UPDATE: two operators (or control planes) cannot both pass the check. */
	/* clang-format off */
	res = pg_conn_query(s,
		"SELECT state, ends_at > now(), " PG_ROW_MS("ends_at") " FROM events WHERE id = $1 "
		"FOR UPDATE",
		1, vals, &rc, err, errlen);
	/* clang-format on */
	if ((res = event_row(res, id, &from, &rc, err, errlen)) == NULL)
		goto fail;
	ahead = pg_row_bool(res, 0, 1);
	rc = admin_event_transition(id, from, to, err, errlen);
	if (rc == 0 && to == ADMIN_EV_PREHEATED && !ahead) {
		char t[40];

		parse_time_format(pg_row_u64(res, 0, 2), t, sizeof(t));
		snprintf(err, errlen, "event %" PRIu32 " ended at %s: there is nothing to preheat",
			id, t);
		rc = -EPERM;
	}
	PQclear(res);
	if (rc != 0)
		goto fail;
	return event_update_commit(s,
		"UPDATE events SET state = $2, updated_at = now() WHERE id = $1", 2, vals, id, out,
		err, errlen);
fail:
	pg_conn_rollback(s);
	return rc;
}

int
pg_event_set_pow(struct pg_conn *s, uint32_t id, uint8_t bits, bool auto_given, uint8_t auto_max,
	struct admin_event *out, char *err, size_t errlen)
{
	char ids[16], b[8], m[8];
	const char *vals[3] = {ids, b, m};
	enum admin_event_state from = ADMIN_EV_DRAFT;
	PGresult *res;
	int rc;

	if (bits > ADMIN_POW_BITS_MAX || auto_max > ADMIN_POW_BITS_MAX) {
		snprintf(err, errlen, "event pow: the difficulty must be 0..%u bits",
			ADMIN_POW_BITS_MAX);
		return -EINVAL;
	}
	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	snprintf(b, sizeof(b), "%u", bits);
	rc = pg_conn_begin(s, NULL, NULL, err, errlen);
	if (rc != 0)
		return rc;
	res = pg_conn_query(s, "SELECT state, pow_auto_max FROM events WHERE id = $1 FOR UPDATE", 1,
		vals, &rc, err, errlen);
	if ((res = event_row(res, id, &from, &rc, err, errlen)) == NULL)
		goto fail;
	if (!auto_given)
		auto_max = (uint8_t)pg_row_u64(res, 0, 1);
	PQclear(res);
	if (from == ADMIN_EV_CLOSED || from == ADMIN_EV_ARCHIVED) {
		snprintf(err, errlen,
			"event pow: event %" PRIu32 " is %s: no more tokens are minted for it", id,
			admin_event_state_name(from));
		rc = -EPERM;
		goto fail;
	}
	if (auto_max != 0 && auto_max < bits) {
		snprintf(err, errlen,
			"event pow: event %" PRIu32 " may be raised automatically up to %u bits, "
			"below %u: give --auto-max %u or more (or --auto-max 0: never)",
			id, auto_max, bits, bits);
		rc = -EINVAL;
		goto fail;
	}
	snprintf(m, sizeof(m), "%u", auto_max);
	return event_update_commit(s,
		"UPDATE events SET pow_bits = $2, pow_auto_max = $3, updated_at = now() "
		"WHERE id = $1",
		3, vals, id, out, err, errlen);
fail:
	pg_conn_rollback(s);
	return rc;
}

int
pg_event_counts(
	struct pg_conn *s, uint32_t id, struct pg_event_counts *out, char *err, size_t errlen)
{
	char ids[16];
	const char *vals[1] = {ids};
	PGresult *res;
	int rc;

	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	/* One statement: one snapshot, so the numbers add up. */
	res = pg_conn_query(s,
		"SELECT s.initial, s.available, "
		"count(o.id) FILTER (WHERE o.status = 'pending'), "
		"count(o.id) FILTER (WHERE o.status = 'paid'), "
		"count(o.id) FILTER (WHERE o.status = 'expired'), "
		"count(o.id) FILTER (WHERE o.status = 'cancelled'), "
		"(SELECT count(*) FROM stock_releases r WHERE r.event_id = $1 AND r.applied_at IS "
		"NULL) "
		"FROM stock s LEFT JOIN orders o ON o.event_id = s.event_id WHERE s.event_id = $1 "
		"GROUP BY s.initial, s.available",
		1, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	if (PQntuples(res) == 0) {
		PQclear(res);
		snprintf(err, errlen, "no event %" PRIu32 " (event list shows the events)", id);
		return -ENOENT;
	}
	out->initial = (uint32_t)pg_row_u64(res, 0, 0);
	out->available = (uint32_t)pg_row_u64(res, 0, 1);
	out->pending = pg_row_u64(res, 0, 2);
	out->paid = pg_row_u64(res, 0, 3);
	out->expired = pg_row_u64(res, 0, 4);
	out->cancelled = pg_row_u64(res, 0, 5);
	out->releases_pending = pg_row_u64(res, 0, 6);
	PQclear(res);
	return 0;
}

/* Orders held, by user: user, reservation id, order id, deadline (Unix ms), status. */
/* clang-format off */
static const char active_orders_sql[] =
	"SELECT user_id, reservation_id, id, " PG_ROW_MS("pay_deadline") ", status "
	"FROM orders WHERE event_id = $1 AND status IN ('pending', 'paid') ORDER BY user_id";
/*
 * Orders whose final state PostgreSQL has handed to the order writer, done: paid with no
 * result_changes row left, expired or cancelled with their release marked applied. Same columns.
 */
static const char handed_orders_sql[] =
	"SELECT o.user_id, o.reservation_id, o.id, " PG_ROW_MS("o.pay_deadline") ", o.status "
	"FROM orders o WHERE o.event_id = $1 AND ("
	"(o.status = 'paid' AND NOT EXISTS "
	"(SELECT 1 FROM result_changes c WHERE c.order_id = o.id)) OR "
	"(o.status IN ('expired', 'cancelled') AND EXISTS (SELECT 1 FROM stock_releases r "
	"WHERE r.order_id = o.id AND r.applied_at IS NOT NULL))) ORDER BY o.user_id";
/*
 * Orders expired or cancelled, by user: active_orders_sql's columns, then whether the stock release
 * is still to be applied in Redis (its row not marked applied; an order without a release row
 * has none coming: false).
 */
static const char gone_orders_sql[] =
	"SELECT o.user_id, o.reservation_id, o.id, " PG_ROW_MS("o.pay_deadline") ", o.status, "
	"r.id IS NOT NULL AND r.applied_at IS NULL "
	"FROM orders o LEFT JOIN stock_releases r ON r.order_id = o.id "
	"WHERE o.event_id = $1 AND o.status IN ('expired', 'cancelled') ORDER BY o.user_id";
/* clang-format on */

/* An order's status as a result verdict: WIRE_V_ORDERED (pending), PAID, EXPIRED, CANCELLED, or 0
 * for another (or NULL: ""). */
static uint8_t
verdict_of_status(const char *status)
{
	static const struct {
		const char *status;
		uint8_t verdict;
	} st[] = {{"pending", WIRE_V_ORDERED}, {"paid", WIRE_V_PAID}, {"expired", WIRE_V_EXPIRED},
		{"cancelled", WIRE_V_CANCELLED}};

	for (size_t k = 0; k < sizeof(st) / sizeof(st[0]); k++)
		if (strcmp(status, st[k].status) == 0)
			return st[k].verdict;
	return 0;
}

/* The rows of sql (active_orders_sql's columns) for event id, as pg_event_active_orders(). */
static int
orders_of(struct pg_conn *s, const char *sql, uint32_t id, struct pg_active_order **orders,
	size_t *n, char *err, size_t errlen)
{
	char ids[16];
	const char *vals[1] = {ids};
	PGresult *res;
	int rc;

	*orders = NULL;
	*n = 0;
	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	res = pg_conn_query(s, sql, 1, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	int rows = PQntuples(res);

	if (rows > 0) {
		*orders = malloc((size_t)rows * sizeof(**orders));
		if (*orders == NULL) {
			PQclear(res);
			snprintf(err, errlen, "out of memory for %d orders", rows);
			return -ENOMEM;
		}
		for (int i = 0; i < rows; i++)
			(*orders)[i] = (struct pg_active_order){
				.user = pg_row_u64(res, i, 0),
				.reservation_id = pg_row_i64(res, i, 1),
				.order_id = pg_row_u64(res, i, 2),
				.pay_deadline_ms = pg_row_u64(res, i, 3),
				.verdict = verdict_of_status(PQgetvalue(res, i, 4)),
				.release_pending = PQnfields(res) > 5 && pg_row_bool(res, i, 5),
			};
	}
	*n = (size_t)rows;
	PQclear(res);
	return 0;
}

int
pg_event_active_orders(struct pg_conn *s, uint32_t id, struct pg_active_order **orders, size_t *n,
	char *err, size_t errlen)
{
	return orders_of(s, active_orders_sql, id, orders, n, err, errlen);
}

int
pg_event_handed_orders(struct pg_conn *s, uint32_t id, struct pg_active_order **orders, size_t *n,
	char *err, size_t errlen)
{
	return orders_of(s, handed_orders_sql, id, orders, n, err, errlen);
}

int
pg_event_gone_orders(struct pg_conn *s, uint32_t id, struct pg_active_order **orders, size_t *n,
	char *err, size_t errlen)
{
	return orders_of(s, gone_orders_sql, id, orders, n, err, errlen);
}

/* One row per id of $2, in its order: the order's status, NULL when event $1 has no such order. */
static const char orders_verdicts_sql[] =
	"SELECT o.status FROM unnest($2::bigint[]) WITH ORDINALITY AS x(id, i) "
	"LEFT JOIN orders o ON o.id = x.id AND o.event_id = $1 ORDER BY x.i";

int
pg_event_orders_verdicts(struct pg_conn *s, uint32_t id, const uint64_t *order_ids, size_t n,
	uint8_t *verdict, char *err, size_t errlen)
{
	char ids[16], *arr = pg_conn_bigint_array(order_ids, n);
	const char *vals[2] = {ids, arr};
	PGresult *res;
	int rc;

	if (arr == NULL) {
		snprintf(err, errlen, "out of memory for %zu order ids", n);
		return -ENOMEM;
	}
	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	res = pg_conn_query(s, orders_verdicts_sql, 2, vals, &rc, err, errlen);
	free(arr);
	if (res == NULL)
		return rc;
	if ((size_t)PQntuples(res) != n) {
		snprintf(err, errlen, "reading %zu orders' states: %d rows", n, PQntuples(res));
		PQclear(res);
		return -EIO;
	}
	for (size_t i = 0; i < n; i++)
		verdict[i] = verdict_of_status(
			PQgetisnull(res, (int)i, 0) ? "" : PQgetvalue(res, (int)i, 0));
	PQclear(res);
	return 0;
}

int
pg_event_releases_again(struct pg_conn *s, uint32_t id, const uint64_t *order_ids, size_t n,
	uint64_t *requeued, char *err, size_t errlen)
{
	char ids[16], *arr = pg_conn_bigint_array(order_ids, n);
	const char *vals[2] = {ids, arr};
	int rc;

	*requeued = 0;
	if (arr == NULL) {
		snprintf(err, errlen, "out of memory for %zu order ids", n);
		return -ENOMEM;
	}
	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	/* A new id too: an order writer between its release.lua and its mark (by id) of the same
	 * release must not mark this one applied. */
	rc = pg_conn_exec_rows(s,
		"UPDATE stock_releases SET id = nextval('stock_releases_id_seq'), "
		"applied_at = NULL WHERE event_id = $1 AND order_id = ANY($2::bigint[])",
		2, vals, requeued, err, errlen);
	free(arr);
	return rc;
}
