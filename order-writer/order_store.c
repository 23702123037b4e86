/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/order_store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "common/log.h"

struct order_store {
	PGconn *c;
	char conninfo[512];
};

/*
 * One batch, one statement (inside BEGIN ... COMMIT): $1 event, $2 users, $3 reservation ids,
 * $4 the times Redis decided (ms). Rows of kind 0 are the orders inserted, kind 1 the orders
 * that existed (a redelivery; the statement's snapshot does not see the rows it inserts, so the
 * two never overlap), and one row of kind 2: inserted, stock rows updated, events found, stock
 * left. The stock is decremented by the number actually inserted, and only if that much is
 * available: otherwise no row is updated and the caller rolls back.
 */
static const char os_batch_sql[] =
	"WITH x AS (SELECT * FROM unnest($2::bigint[], $3::bigint[], $4::bigint[]) AS x(u, r, t)),\n"
	"ev AS (SELECT pay_window_s FROM events WHERE id = $1),\n"
	"ins AS (\n"
	"  INSERT INTO orders (event_id, user_id, reservation_id, reserved_at, pay_deadline)\n"
	"  SELECT $1, x.u, x.r, to_timestamp(x.t / 1000.0),\n"
	"         now() + make_interval(secs => ev.pay_window_s)\n"
	"  FROM x, ev\n"
	"  ON CONFLICT DO NOTHING\n"
	"  RETURNING id, user_id, reservation_id, pay_deadline, status),\n"
	"n AS (SELECT count(*)::bigint AS c FROM ins),\n"
	"st AS (\n"
	"  UPDATE stock SET available = stock.available - n.c FROM n\n"
	"  WHERE stock.event_id = $1 AND n.c > 0 AND stock.available >= n.c\n"
	"  RETURNING stock.available)\n"
	"SELECT 0, id, user_id, reservation_id,\n"
	"       (extract(epoch FROM pay_deadline) * 1000)::bigint, status = 'pending' FROM ins\n"
	"UNION ALL\n"
	"SELECT 1, o.id, o.user_id, o.reservation_id,\n"
	"       (extract(epoch FROM o.pay_deadline) * 1000)::bigint, o.status = 'pending'\n"
	"FROM orders o JOIN x ON o.reservation_id = x.r\n"
	"UNION ALL\n"
	"SELECT 2, (SELECT c FROM n), (SELECT count(*) FROM st), (SELECT count(*) FROM ev),\n"
	"       coalesce((SELECT available FROM st), -1)::bigint, false";

/*
 * Expiry: the due orders are locked (SKIP LOCKED: another sweeper's, or a payment in flight,
 * are left for the next round) and changed only while pending; their stock goes back and a
 * release row per order is written for the Redis side, all in this one statement.
 */
static const char os_expire_sql[] =
	"WITH due AS (\n"
	"  SELECT id FROM orders WHERE status = 'pending' AND pay_deadline <= now()\n"
	"  ORDER BY pay_deadline LIMIT $1 FOR UPDATE SKIP LOCKED),\n"
	"exp AS (\n"
	"  UPDATE orders o SET status = 'expired' FROM due\n"
	"  WHERE o.id = due.id AND o.status = 'pending'\n"
	"  RETURNING o.id, o.event_id, o.reservation_id, o.user_id),\n"
	"rel AS (\n"
	"  INSERT INTO stock_releases (event_id, order_id, reservation_id, user_id, n)\n"
	"  SELECT event_id, id, reservation_id, user_id, 1 FROM exp RETURNING 1),\n"
	"back AS (\n"
	"  UPDATE stock s SET available = s.available + c.n\n"
	"  FROM (SELECT event_id, count(*)::int AS n FROM exp GROUP BY event_id) c\n"
	"  WHERE s.event_id = c.event_id RETURNING 1)\n"
	"SELECT (SELECT count(*) FROM exp), (SELECT count(*) FROM rel), (SELECT count(*) FROM back)";

static int
os_connect(struct order_store *s, char *err, size_t errlen)
{
	PGresult *r;

	if (s->c != NULL && PQstatus(s->c) == CONNECTION_OK)
		return 0;
	if (s->c != NULL)
		PQfinish(s->c);
	s->c = PQconnectdb(s->conninfo);
	if (PQstatus(s->c) != CONNECTION_OK) {
		snprintf(err, errlen, "postgres: cannot connect: %s", PQerrorMessage(s->c));
		PQfinish(s->c);
		s->c = NULL;
		return -ENOTCONN;
	}
	/* An order is acknowledged in Redis only once its COMMIT is durable. */
	r = PQexec(s->c, "SET synchronous_commit = on");
	PQclear(r);
	return 0;
}

/* Turns a failed result into -ENOTCONN (connection gone) or -EIO, with the message in err. */
static int
os_fail(struct order_store *s, PGresult *r, const char *what, char *err, size_t errlen)
{
	const char *msg = r != NULL ? PQresultErrorMessage(r) : PQerrorMessage(s->c);
	int rc = PQstatus(s->c) == CONNECTION_OK ? -EIO : -ENOTCONN;

	snprintf(err, errlen, "postgres: %s: %.*s", what,
		(int)(strlen(msg) > 0 && msg[strlen(msg) - 1] == '\n' ? strlen(msg) - 1 : strlen(msg)),
		msg);
	PQclear(r);
	return rc;
}

static int
os_exec_cmd(struct order_store *s, const char *sql, char *err, size_t errlen)
{
	PGresult *r = PQexec(s->c, sql);

	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		return os_fail(s, r, sql, err, errlen);
	PQclear(r);
	return 0;
}

struct order_store *
os_open(const char *conninfo, char *err, size_t errlen)
{
	struct order_store *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(s->conninfo, sizeof(s->conninfo), "%s", conninfo);
	if (os_connect(s, err, errlen) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

void
os_close(struct order_store *s)
{
	if (s == NULL)
		return;
	if (s->c != NULL)
		PQfinish(s->c);
	free(s);
}

/* Appends "{a,b,c}" of n values taken by get(i) to buf; returns the text or NULL. */
static char *
os_array(unsigned n, const struct rs_outbox_entry *e, int field)
{
	char *buf = malloc(2 + (size_t)n * 21 + 1);
	size_t len = 0;

	if (buf == NULL)
		return NULL;
	buf[len++] = '{';
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = field == 0 ? e[i].user : field == 1 ? e[i].reservation_id : e[i].id_ms;

		len += (size_t)sprintf(buf + len, "%s%" PRIu64, i ? "," : "", v);
	}
	buf[len++] = '}';
	buf[len] = '\0';
	return buf;
}

static uint64_t
os_u64(const PGresult *r, int row, int col)
{
	return strtoull(PQgetvalue(r, row, col), NULL, 10);
}

int
os_write_batch(struct order_store *s, uint32_t event, const struct rs_outbox_entry *e,
	unsigned n, struct os_order *out, unsigned *n_out, struct os_batch_result *res,
	void (*commit_hook)(void), char *err, size_t errlen)
{
	char ev[16];
	char *users = NULL, *rids = NULL, *times = NULL;
	const char *params[4];
	PGresult *r = NULL;
	int rc;
	uint64_t inserted = 0, stock_rows = 0, events = 0;

	memset(res, 0, sizeof(*res));
	*n_out = 0;
	rc = os_connect(s, err, errlen);
	if (rc != 0)
		return rc;
	snprintf(ev, sizeof(ev), "%" PRIu32, event);
	users = os_array(n, e, 0);
	rids = os_array(n, e, 1);
	times = os_array(n, e, 2);
	if (users == NULL || rids == NULL || times == NULL) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	params[0] = ev;
	params[1] = users;
	params[2] = rids;
	params[3] = times;
	rc = os_exec_cmd(s, "BEGIN", err, errlen);
	if (rc != 0)
		goto out;
	r = PQexecParams(s->c, os_batch_sql, 4, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		rc = os_fail(s, r, "writing orders", err, errlen);
		r = NULL;
		goto rollback;
	}
	for (int i = 0; i < PQntuples(r); i++) {
		int kind = atoi(PQgetvalue(r, i, 0));

		if (kind == 2) {
			inserted = os_u64(r, i, 1);
			stock_rows = os_u64(r, i, 2);
			events = os_u64(r, i, 3);
			continue;
		}
		if (*n_out >= n)
			continue;
		struct os_order *o = &out[(*n_out)++];

		o->order_id = os_u64(r, i, 1);
		o->user = os_u64(r, i, 2);
		o->reservation_id = os_u64(r, i, 3);
		o->pay_deadline_ms = os_u64(r, i, 4);
		o->pending = PQgetvalue(r, i, 5)[0] == 't';
		o->inserted = kind == 0;
	}
	PQclear(r);
	r = NULL;
	if (events == 0) {
		snprintf(err, errlen, "event %" PRIu32 " is not in PostgreSQL", event);
		rc = -ENOENT;
		goto rollback;
	}
	res->existing = *n_out - (unsigned)inserted;
	if (inserted > 0 && stock_rows == 0) {
		/* Keep only the orders that exist without this transaction. */
		unsigned k = 0;

		for (unsigned i = 0; i < *n_out; i++)
			if (!out[i].inserted)
				out[k++] = out[i];
		*n_out = k;
		res->conflict = true;
		rc = os_exec_cmd(s, "ROLLBACK", err, errlen);
		goto out;
	}
	rc = os_exec_cmd(s, "COMMIT", err, errlen);
	if (rc != 0) {
		*n_out = 0; /* unknown whether it committed: the redelivery will tell */
		goto out;
	}
	res->inserted = (unsigned)inserted;
	if (commit_hook != NULL)
		commit_hook();
	goto out;
rollback:
	if (s->c != NULL && PQstatus(s->c) == CONNECTION_OK)
		PQclear(PQexec(s->c, "ROLLBACK"));
	*n_out = 0;
out:
	free(users);
	free(rids);
	free(times);
	return rc;
}

int
os_active_events(struct order_store *s, uint32_t *ids, bool *open, unsigned cap, unsigned *n,
	char *err, size_t errlen)
{
	PGresult *r;
	int rc = os_connect(s, err, errlen);

	*n = 0;
	if (rc != 0)
		return rc;
	r = PQexec(s->c, "SELECT id, state = 'open' FROM events WHERE state IN ('open', 'closed') "
			 "ORDER BY id");
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return os_fail(s, r, "reading events", err, errlen);
	for (int i = 0; i < PQntuples(r) && *n < cap; i++) {
		ids[*n] = (uint32_t)os_u64(r, i, 0);
		open[*n] = PQgetvalue(r, i, 1)[0] == 't';
		(*n)++;
	}
	PQclear(r);
	return 0;
}

int
os_expire(struct order_store *s, unsigned limit, unsigned *expired, char *err, size_t errlen)
{
	char lim[16];
	const char *params[1] = {lim};
	PGresult *r;
	int rc = os_connect(s, err, errlen);

	*expired = 0;
	if (rc != 0)
		return rc;
	snprintf(lim, sizeof(lim), "%u", limit);
	r = PQexecParams(s->c, os_expire_sql, 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
		return os_fail(s, r, "expiring orders", err, errlen);
	*expired = (unsigned)os_u64(r, 0, 0);
	PQclear(r);
	return 0;
}

int
os_releases_pending(struct order_store *s, struct os_release *out, unsigned cap, unsigned *n,
	char *err, size_t errlen)
{
	char lim[16];
	const char *params[1] = {lim};
	PGresult *r;
	int rc = os_connect(s, err, errlen);

	*n = 0;
	if (rc != 0)
		return rc;
	snprintf(lim, sizeof(lim), "%u", cap);
	r = PQexecParams(s->c,
		"SELECT id, event_id, order_id, reservation_id, user_id, n FROM stock_releases "
		"WHERE applied_at IS NULL ORDER BY id LIMIT $1",
		1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return os_fail(s, r, "reading stock releases", err, errlen);
	for (int i = 0; i < PQntuples(r) && *n < cap; i++) {
		struct os_release *x = &out[(*n)++];

		x->id = os_u64(r, i, 0);
		x->event = (uint32_t)os_u64(r, i, 1);
		x->order_id = os_u64(r, i, 2);
		x->reservation_id = os_u64(r, i, 3);
		x->user = os_u64(r, i, 4);
		x->n = (unsigned)os_u64(r, i, 5);
	}
	PQclear(r);
	return 0;
}

int
os_releases_applied(
	struct order_store *s, const uint64_t *ids, unsigned n, char *err, size_t errlen)
{
	char *arr;
	size_t len = 0;
	const char *params[1];
	PGresult *r;
	int rc = os_connect(s, err, errlen);

	if (rc != 0 || n == 0)
		return rc;
	arr = malloc(2 + (size_t)n * 21 + 1);
	if (arr == NULL)
		return -ENOMEM;
	arr[len++] = '{';
	for (unsigned i = 0; i < n; i++)
		len += (size_t)sprintf(arr + len, "%s%" PRIu64, i ? "," : "", ids[i]);
	arr[len++] = '}';
	arr[len] = '\0';
	params[0] = arr;
	r = PQexecParams(s->c,
		"UPDATE stock_releases SET applied_at = now() "
		"WHERE id = ANY($1::bigint[]) AND applied_at IS NULL",
		1, NULL, params, NULL, NULL, 0);
	free(arr);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		return os_fail(s, r, "marking stock releases applied", err, errlen);
	PQclear(r);
	return 0;
}
