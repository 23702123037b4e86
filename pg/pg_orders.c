/* SPDX-License-Identifier: BSD-3-Clause */
#include "pg/pg_orders.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "admin/admin_proto.h"
#include "pg/pg_row.h"

/* PostgreSQL's type oids of the batch statement's parameters (pg_type.h is server-side). */
#define PG_ORDERS_INT8_OID		20
#define PG_ORDERS_INT8_ARRAY_OID	1016
#define PG_ORDERS_TIMESTAMPTZ_OID	1184
#define PG_ORDERS_TIMESTAMPTZ_ARRAY_OID 1185

/* Unix time of PostgreSQL's epoch, 2000-01-01 00:00 UTC, in ms. */
#define PG_ORDERS_PG_EPOCH_MS INT64_C(946684800000)

/* The SQLSTATE pg_orders_refuse_fn raises: the stock decrement of a batch was refused. */
#define PG_ORDERS_REFUSED_STATE "FG001"

/*
 * How often a batch is sent again at once when the ids it took exist (orders_pkey): enough to
 * pass one block of ids handed out before (sql/004), each try taking at least one id.
 */
#define PG_ORDERS_ID_RETRIES (RS_BATCH_MAX + 16)

/* A binary int8[] of up to RS_BATCH_MAX values: header, then 4-byte length + 8 bytes each. */
#define PG_ORDERS_ARRAY_HDR 20
#define PG_ORDERS_ARRAY_CAP (PG_ORDERS_ARRAY_HDR + RS_BATCH_MAX * 12)

/*
 * The statements a batch can be sent as: pg_orders_batch_new_sql first when it can, else
 * pg_orders_batch_sql.
 */
enum pg_orders_stmt {
	PG_ORDERS_STMT_NEW,  /* every order new, ids from one block: one row back */
	PG_ORDERS_STMT_FULL, /* any batch: a row per order inserted or found */
};

struct pg_orders {
	struct pg_conn *c;
	bool busy;		  /* a batch was sent and its result not read yet */
	enum pg_orders_stmt stmt; /* what the batch in flight was sent as */
	uint64_t id_block;	  /* ids per nextval('orders_id_seq') (sql/004), read on connect */
	uint32_t event;		  /* of the batch in flight */
	unsigned n;		  /* its reservations */
	/* Its parameters, kept until its result is read (a refused batch looks its rows up). */
	uint8_t ev[8];
	uint8_t users[PG_ORDERS_ARRAY_CAP], rids[PG_ORDERS_ARRAY_CAP], times[PG_ORDERS_ARRAY_CAP];
	int lens[4];
	/* Its users and reservation ids: its orders' when pg_orders_batch_new_sql takes it. */
	uint64_t user[RS_BATCH_MAX], rid[RS_BATCH_MAX];
};

/*
 * Raises PG_ORDERS_REFUSED_STATE. A temporary function (one per connection, created on connect), so
 * that the batch statement can refuse itself: it then runs as one autocommit statement, sent
 * without waiting, and a refused decrement rolls back everything it inserted.
 */
static const char pg_orders_refuse_fn[] =
	"CREATE FUNCTION pg_temp.fg_stock_refused(n bigint) RETURNS bigint LANGUAGE plpgsql AS "
	"$f$\n"
	"BEGIN\n"
	"  RAISE EXCEPTION 'the stock left is less than the % orders of the batch', n\n"
	"    USING ERRCODE = '" PG_ORDERS_REFUSED_STATE "';\n"
	"END $f$";

/*
 * One batch, one statement, committed on its own: $1 event, $2 users, $3 reservation ids (int8),
 * $4 the times Redis decided (timestamptz), all binary. Rows of kind 0 are the orders inserted,
 * kind 1 the orders that existed (a redelivery; the statement's snapshot does not see the rows
 * it inserts, so the two never overlap; looked up only when fewer rows were inserted than
 * sent, the one-time filter skips the join otherwise), and one row of kind 2: inserted, stock
 * rows updated, events found. The stock is decremented by the number actually inserted, and
 * only if that much is available: otherwise no row is updated and the statement raises
 * PG_ORDERS_REFUSED_STATE, which undoes the whole batch.
 *
 * What is skipped is named: a reservation whose buyer has its order (ON CONFLICT on (event_id,
 * user_id), and NOT EXISTS, and DISTINCT ON for one user twice in the batch). Kind 1 rows are
 * the existing orders of this very reservation, (event, user, reservation id): a redelivery,
 * also one another writer commits meanwhile. A user holding an order of another reservation gets
 * none (and no kind 1 row). Kind 3 rows name a reservation id that another buyer's order (or
 * another reservation of the batch) has too: both are kept, and reported (two data planes with
 * one dp id). Any other conflict is an error, never a skipped order: an id that orders_id_seq
 * hands out again (it was set back, or its increment lowered below the blocks of
 * pg_orders_batch_new_sql) fails the batch on orders_pkey, and pg_orders_batch_wait() sends it
 * again with the next ids.
 */
static const char pg_orders_batch_sql[] =
	"WITH x AS (SELECT * FROM unnest($2::bigint[], $3::bigint[], $4::timestamptz[])\n"
	"            WITH ORDINALITY AS x(u, r, t, o)),\n"
	"ev AS (SELECT pay_window_s FROM events WHERE id = $1 FOR KEY SHARE),\n"
	"ins AS (\n"
	"  INSERT INTO orders (event_id, user_id, reservation_id, reserved_at, pay_deadline)\n"
	"  SELECT DISTINCT ON (x.u) $1, x.u, x.r, x.t, now() + make_interval(secs => "
	"ev.pay_window_s)\n"
	"  FROM x, ev\n"
	"  WHERE NOT EXISTS (SELECT FROM orders o WHERE o.event_id = $1 AND o.user_id = x.u)\n"
	"  ORDER BY x.u, x.o\n"
	"  ON CONFLICT (event_id, user_id) DO NOTHING\n"
	"  RETURNING id, user_id, reservation_id, pay_deadline, status),\n"
	"n AS (SELECT count(*)::bigint AS c FROM ins),\n"
	"st AS (\n"
	"  UPDATE stock SET available = stock.available - n.c FROM n\n"
	"  WHERE stock.event_id = $1 AND n.c > 0 AND stock.available >= n.c\n"
	"  RETURNING stock.available),\n"
	"chk AS (SELECT (SELECT c FROM n) AS c, (SELECT count(*) FROM st) AS s,\n"
	"               (SELECT count(*) FROM ev) AS e)\n"
	"SELECT 0, id, user_id, reservation_id,\n"
	"       " PG_ROW_MS(
		"pay_deadline") ", status = 'pending' FROM ins\n"
				"UNION ALL\n"
				"SELECT 1, o.id, o.user_id, o.reservation_id,\n"
				"       " PG_ROW_MS(
					"o.pay_deadline") ", o.status = 'pending'\n"
							  "FROM orders o JOIN x ON o.event_id = $1 "
							  "AND o.user_id = x.u AND "
							  "o.reservation_id = x.r\n"
							  "WHERE (SELECT c FROM n) < "
							  "cardinality($3::bigint[])\n"
							  "UNION ALL\n"
							  "SELECT 3, o.id, o.user_id, x.r, "
							  "o.event_id, false\n"
							  "FROM orders o JOIN x ON "
							  "o.reservation_id = x.r AND (o.event_id "
							  "<> $1 OR o.user_id <> x.u)\n"
							  "UNION ALL\n"
							  "SELECT 3, 0, y.u, x.r, $1, false FROM x "
							  "JOIN x y ON y.r = x.r AND y.u <> x.u "
							  "AND y.o > x.o\n"
							  "UNION ALL\n"
							  "SELECT 2, c, s, e,\n"
							  "       CASE WHEN c > 0 AND s = 0 THEN "
							  "pg_temp.fg_stock_refused(c) ELSE 0 END, "
							  "false\n"
							  "FROM chk";

/*
 * The same batch when every reservation in it is new, tried first: nearly every batch is. Its
 * n orders take the ids of one block, base .. base + n - 1 in the batch's order (one nextval(),
 * sql/004: the sequence's increment is at least n, checked here too), the deadline is the same
 * for all, so one row comes back: base and the deadline (ms). No ON CONFLICT, whose speculative
 * insertion costs about a third of the statement, and no row per order. As in pg_orders_batch_sql
 * the stock row, the one row two batches in flight share, is updated last (st reads the count of
 * ins), so that one batch inserts while the other's COMMIT holds it. Anything else inserts
 * nothing, and the batch is sent again as pg_orders_batch_sql: a user who holds an order (this
 * reservation's: a redelivery, or another one) fails the INSERT with unique_violation; too
 * little stock for n updates no stock row and raises PG_ORDERS_REFUSED_STATE; no such event, or a
 * smaller increment, returns no row (and inserts nothing). Its fourth column counts the
 * reservation ids another buyer's order has too (both kept; reported).
 */
static const char pg_orders_batch_new_sql[] =
	"WITH ev AS (\n"
	"  SELECT nextval('orders_id_seq') AS base,\n"
	"         now() + make_interval(secs => pay_window_s) AS deadline\n"
	"  FROM events\n"
	"  WHERE id = $1 AND cardinality($3::bigint[]) <=\n"
	"        (SELECT seqincrement FROM pg_sequence WHERE seqrelid = "
	"'orders_id_seq'::regclass)\n"
	"  FOR KEY SHARE),\n"
	"ins AS (\n"
	"  INSERT INTO orders (id, event_id, user_id, reservation_id, reserved_at, pay_deadline)\n"
	"  SELECT ev.base + x.o - 1, $1, x.u, x.r, x.t, ev.deadline\n"
	"  FROM ev,\n"
	"       unnest($2::bigint[], $3::bigint[], $4::timestamptz[]) WITH ORDINALITY AS x(u, r, "
	"t, o)\n"
	"  RETURNING 1),\n"
	"n AS (SELECT count(*)::bigint AS c FROM ins),\n"
	"st AS (\n"
	"  UPDATE stock SET available = stock.available - n.c FROM n\n"
	"  WHERE stock.event_id = $1 AND n.c > 0 AND stock.available >= n.c\n"
	"  RETURNING 1)\n"
	"SELECT ev.base, " PG_ROW_MS(
		"ev.deadline") ",\n"
			       "       CASE WHEN (SELECT count(*) FROM st) = 0 THEN "
			       "pg_temp.fg_stock_refused(n.c) END,\n"
			       "       (SELECT count(*) FROM orders o\n"
			       "        JOIN unnest($2::bigint[], $3::bigint[]) AS x(u, r) ON "
			       "o.reservation_id = x.r\n"
			       "        WHERE o.event_id <> $1 OR o.user_id <> x.u) +\n"
			       "       (SELECT count(*) - count(DISTINCT r) FROM "
			       "unnest($3::bigint[]) AS r)\n"
			       "FROM ev, n";

/* The orders of a refused batch that exist without it ($1 event, $2 users, $3 reservation ids,
 * binary): each of the same (event, user, reservation id). */
static const char pg_orders_existing_sql[] =
	"SELECT 1, o.id, o.user_id, o.reservation_id, " PG_ROW_MS(
		"o.pay_deadline") ",\n"
				  "       o.status = 'pending'\n"
				  "FROM orders o JOIN unnest($2::bigint[], $3::bigint[]) AS x(u, "
				  "r)\n"
				  "  ON o.event_id = $1 AND o.user_id = x.u AND o.reservation_id = "
				  "x.r";

/*
 * Expiry: the due orders are locked (SKIP LOCKED: another sweeper's, or a payment in flight,
 * are left for the next round) and changed only while pending; their stock goes back and a
 * release row per order is written for the Redis side, all in this one statement.
 */
static const char pg_orders_expire_sql[] =
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
	"SELECT (SELECT count(*) FROM exp), (SELECT count(*) FROM rel), (SELECT count(*) FROM "
	"back)";

/*
 * The set-up of every new connection of s (arg): synchronous_commit on, the refusal function
 * and the prepared batch statements. A connection that cannot have them is dropped (the next
 * call tries again).
 */
static int
pg_orders_setup(struct pg_conn *c, void *arg, char *err, size_t errlen)
{
	static const Oid batch_types[4] = {PG_ORDERS_INT8_OID, PG_ORDERS_INT8_ARRAY_OID,
		PG_ORDERS_INT8_ARRAY_OID, PG_ORDERS_TIMESTAMPTZ_ARRAY_OID};
	static const Oid existing_types[3] = {
		PG_ORDERS_INT8_OID, PG_ORDERS_INT8_ARRAY_OID, PG_ORDERS_INT8_ARRAY_OID};
	struct pg_orders *s = arg;
	PGconn *conn = pg_conn_libpq(c);
	PGresult *r;
	const char *what;

	s->busy = false;
	/* An order is acknowledged in Redis only once its COMMIT is durable. */
	what = "SET synchronous_commit = on";
	r = PQexec(conn, what);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		goto fail;
	PQclear(r);
	what = "creating pg_temp.fg_stock_refused()";
	r = PQexec(conn, pg_orders_refuse_fn);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		goto fail;
	PQclear(r);
	/* Prepared once per connection: a batch is then one Bind/Execute, planned generically
	 * (an index probe per entry for the existing orders, whatever the table's size). */
	what = "preparing the batch statement";
	r = PQprepare(conn, "fg_batch", pg_orders_batch_sql, 4, batch_types);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		goto fail;
	PQclear(r);
	r = PQprepare(conn, "fg_batch_new", pg_orders_batch_new_sql, 4, batch_types);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		goto fail;
	PQclear(r);
	r = PQprepare(conn, "fg_existing", pg_orders_existing_sql, 3, existing_types);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		goto fail;
	PQclear(r);
	/* Blocks of ids (sql/004): without them every batch is sent as pg_orders_batch_sql. */
	what = "reading the increment of orders_id_seq";
	r = PQexec(conn, "SELECT seqincrement FROM pg_sequence "
			 "WHERE seqrelid = 'orders_id_seq'::regclass");
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
		goto fail;
	s->id_block = pg_row_u64(r, 0, 0);
	PQclear(r);
	if (s->id_block < RS_BATCH_MAX)
		LOG_WARN("postgres: orders_id_seq hands out %" PRIu64
			 " id(s) at a time: batches of "
			 "more orders than that take the slower statement (apply the schema "
			 "migrations, sql/004)",
			s->id_block);
	return 0;
fail:
	snprintf(err, errlen, "PostgreSQL: %s: %.*s", what,
		(int)strcspn(PQresultErrorMessage(r), "\n"), PQresultErrorMessage(r));
	PQclear(r);
	return -ENOTCONN;
}

/* Refuses a call while a batch is in flight: one statement at a time per connection. */
static int
pg_orders_idle(struct pg_orders *s, char *err, size_t errlen)
{
	if (!s->busy)
		return 0;
	snprintf(err, errlen, "postgres: a batch is in flight");
	return -EBUSY;
}

/* pg_orders_idle(), then the connection made or checked (pg_conn_ready()). 0 or < 0 with err. */
static int
pg_orders_connect(struct pg_orders *s, char *err, size_t errlen)
{
	int rc = pg_orders_idle(s, err, errlen);

	return rc != 0 ? rc : pg_conn_ready(s->c, err, errlen);
}

/* Reports r (may be NULL), a failure of what, and frees it: the errno of pg_conn_failed(). */
static int
pg_orders_fail(struct pg_orders *s, PGresult *r, const char *what, char *err, size_t errlen)
{
	int rc = pg_conn_failed(s->c, r, what, err, errlen);

	PQclear(r);
	return rc;
}

struct pg_orders *
pg_orders_open(const char *conninfo, const char *app, char *err, size_t errlen)
{
	struct pg_orders *s = calloc(1, sizeof(*s));

	if (s == NULL || (s->c = pg_conn_new_named(conninfo, app, pg_orders_setup, s)) == NULL) {
		snprintf(err, errlen, "out of memory");
		free(s);
		return NULL;
	}
	if (pg_conn_ready(s->c, err, errlen) != 0) {
		pg_orders_close(s);
		return NULL;
	}
	return s;
}

void
pg_orders_close(struct pg_orders *s)
{
	if (s == NULL)
		return;
	pg_conn_close(s->c);
	free(s);
}

/* Big-endian stores and loads, the byte order of PostgreSQL's binary format. */
static void
pg_orders_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void
pg_orders_put64(uint8_t *p, uint64_t v)
{
	pg_orders_put32(p, (uint32_t)(v >> 32));
	pg_orders_put32(p + 4, (uint32_t)v);
}

/*
 * Unix time in ms as a binary timestamptz: microseconds since 2000-01-01 UTC. Beyond what that
 * holds (no clock gives such a time), PostgreSQL's infinity.
 */
static uint64_t
pg_orders_timestamptz(uint64_t ms)
{
	if (ms > (uint64_t)(INT64_MAX / 1000 + PG_ORDERS_PG_EPOCH_MS))
		return (uint64_t)INT64_MAX;
	return (uint64_t)(((int64_t)ms - PG_ORDERS_PG_EPOCH_MS) * 1000);
}

/*
 * Writes n values taken from e by field (0 user, 1 reservation id, 2 the time Redis decided) as
 * a binary int8[] or, for 2, timestamptz[] (array_recv's format: ndim 1, no nulls, element oid,
 * dimension, lower bound 1, then each element as length 8 and value). Returns its length.
 */
static int
pg_orders_array(uint8_t *buf, const struct store_outbox_rec *e, unsigned n, int field)
{
	uint8_t *p = buf + PG_ORDERS_ARRAY_HDR;

	pg_orders_put32(buf, 1);
	pg_orders_put32(buf + 4, 0);
	pg_orders_put32(buf + 8, field == 2 ? PG_ORDERS_TIMESTAMPTZ_OID : PG_ORDERS_INT8_OID);
	pg_orders_put32(buf + 12, n);
	pg_orders_put32(buf + 16, 1);
	for (unsigned i = 0; i < n; i++, p += 12) {
		uint64_t v = field == 0	  ? e[i].user
			     : field == 1 ? e[i].reservation_id
					  : pg_orders_timestamptz(e[i].id_ms);

		pg_orders_put32(p, 8);
		pg_orders_put64(p + 4, v);
	}
	return (int)(p - buf);
}

/* Sends the batch whose parameters s holds as statement stmt. */
static int
pg_orders_send(struct pg_orders *s, enum pg_orders_stmt stmt)
{
	static const int formats[4] = {1, 1, 1, 1};
	const char *params[4] = {(const char *)s->ev, (const char *)s->users, (const char *)s->rids,
		(const char *)s->times};

	s->stmt = stmt;
	return PQsendQueryPrepared(pg_conn_libpq(s->c),
		       stmt == PG_ORDERS_STMT_NEW ? "fg_batch_new" : "fg_batch", 4, params, s->lens,
		       formats, 1)
		       ? 0
		       : -EIO;
}

int
pg_orders_batch_send(struct pg_orders *s, uint32_t event, const struct store_outbox_rec *e, unsigned n,
	char *err, size_t errlen)
{
	int rc;

	if (s->busy) {
		snprintf(err, errlen, "postgres: a batch is in flight already");
		return -EBUSY;
	}
	if (n == 0 || n > RS_BATCH_MAX) {
		snprintf(err, errlen, "postgres: a batch of %u reservations (1..%u)", n,
			RS_BATCH_MAX);
		return -EINVAL;
	}
	rc = pg_orders_connect(s, err, errlen);
	if (rc != 0)
		return rc;
	s->event = event;
	s->n = n;
	pg_orders_put64(s->ev, event);
	s->lens[0] = 8;
	s->lens[1] = pg_orders_array(s->users, e, n, 0);
	s->lens[2] = pg_orders_array(s->rids, e, n, 1);
	s->lens[3] = pg_orders_array(s->times, e, n, 2);
	for (unsigned i = 0; i < n; i++) {
		s->user[i] = e[i].user;
		s->rid[i] = e[i].reservation_id;
	}
	rc = pg_orders_send(s, n <= s->id_block ? PG_ORDERS_STMT_NEW : PG_ORDERS_STMT_FULL);
	if (rc != 0)
		return pg_orders_fail(s, NULL, "sending orders", err, errlen);
	s->busy = true;
	return 0;
}

bool
pg_orders_batch_busy(const struct pg_orders *s)
{
	return s->busy;
}

/*
 * Takes the order rows (kind 0 and 1) of a binary result into out, the kind 2 row into *sum and
 * the kind 3 rows (a reservation id another buyer's order has too) into res.
 */
static void
pg_orders_take_orders(const PGresult *r, struct pg_orders_row *out, unsigned cap, unsigned *n_out,
	uint64_t sum[3], struct pg_orders_batch *res)
{
	for (int i = 0; i < PQntuples(r); i++) {
		uint64_t kind = pg_row_bin(r, i, 0);

		if (kind == 2) {
			for (int k = 0; k < 3; k++)
				sum[k] = pg_row_bin(r, i, 1 + k);
			continue;
		}
		if (kind == 3) {
			if (res != NULL && res->rid_shared++ == 0) {
				res->shared_rid = pg_row_bin(r, i, 3);
				res->shared_order = pg_row_bin(r, i, 1);
				res->shared_user = pg_row_bin(r, i, 2);
				res->shared_event = (uint32_t)pg_row_bin(r, i, 4);
			}
			continue;
		}
		if (*n_out >= cap)
			continue;
		struct pg_orders_row *o = &out[(*n_out)++];

		o->order_id = pg_row_bin(r, i, 1);
		o->user = pg_row_bin(r, i, 2);
		o->reservation_id = pg_row_bin(r, i, 3);
		o->pay_deadline_ms = pg_row_bin(r, i, 4);
		o->pending = pg_row_bin(r, i, 5) != 0;
		o->inserted = kind == 0;
	}
}

/*
 * The row of pg_orders_batch_new_sql: its n orders into out (ids from base, in the batch's order,
 * all pending with the same deadline) and true; false when there is no row (no event or no block of
 * ids: nothing was inserted).
 */
static bool
pg_orders_take_new(struct pg_orders *s, const PGresult *r, struct pg_orders_row *out,
	unsigned *n_out, uint64_t sum[3], struct pg_orders_batch *res)
{
	uint64_t base, deadline_ms;

	if (PQntuples(r) != 1 || PQnfields(r) != 4)
		return false;
	res->rid_shared = (unsigned)pg_row_bin(r, 0, 3);
	base = pg_row_bin(r, 0, 0);
	deadline_ms = pg_row_bin(r, 0, 1);
	for (unsigned i = 0; i < s->n; i++)
		out[i] = (struct pg_orders_row){
			.order_id = base + i,
			.user = s->user[i],
			.reservation_id = s->rid[i],
			.pay_deadline_ms = deadline_ms,
			.pending = true,
			.inserted = true,
		};
	*n_out = s->n;
	sum[0] = s->n;
	sum[1] = 1;
	sum[2] = 1;
	return true;
}

/* Whether a failed result is pg_orders_refuse_fn's: the stock decrement was refused. */
static bool
pg_orders_refused(const PGresult *r)
{
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

	return state != NULL && strcmp(state, PG_ORDERS_REFUSED_STATE) == 0;
}

/* Whether a failed result is a unique_violation, of constraint (NULL: any). */
static bool
pg_orders_unique_violation(const PGresult *r, const char *constraint)
{
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	const char *name = PQresultErrorField(r, PG_DIAG_CONSTRAINT_NAME);

	return state != NULL && strcmp(state, "23505") == 0 &&
	       (constraint == NULL || (name != NULL && strcmp(name, constraint) == 0));
}

/* After a refused batch: the orders of its reservations that exist without it, into out. */
static int
pg_orders_existing(
	struct pg_orders *s, struct pg_orders_row *out, unsigned *n_out, char *err, size_t errlen)
{
	static const int format[3] = {1, 1, 1};
	const char *params[3] = {
		(const char *)s->ev, (const char *)s->users, (const char *)s->rids};
	uint64_t sum[3];
	PGresult *r =
		PQexecPrepared(pg_conn_libpq(s->c), "fg_existing", 3, params, s->lens, format, 1);

	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return pg_orders_fail(s, r, "reading the orders of a refused batch", err, errlen);
	pg_orders_take_orders(r, out, s->n, n_out, sum, NULL);
	PQclear(r);
	return 0;
}

int
pg_orders_batch_wait(struct pg_orders *s, struct pg_orders_row *out, unsigned *n_out,
	struct pg_orders_batch *res, void (*commit_hook)(void), char *err, size_t errlen)
{
	uint64_t sum[3] = {0, 0, 0}; /* inserted, stock rows updated, events found */
	PGresult *r, *failed = NULL;
	bool got = false, taken = false;
	unsigned id_retries = 0;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	*n_out = 0;
	if (!s->busy) {
		snprintf(err, errlen, "postgres: no batch in flight");
		return -EINVAL;
	}
again:
	/* Until NULL: the commit happens after the rows went out, and only the end of the
	 * exchange (ReadyForQuery, or an error instead) says it is durable. */
	while ((r = PQgetResult(pg_conn_libpq(s->c))) != NULL) {
		if (PQresultStatus(r) == PGRES_TUPLES_OK && !got && failed == NULL) {
			if (s->stmt == PG_ORDERS_STMT_NEW)
				taken = pg_orders_take_new(s, r, out, n_out, sum, res);
			else
				pg_orders_take_orders(r, out, s->n, n_out, sum, res);
			got = true;
			PQclear(r);
		} else if (failed == NULL && PQresultStatus(r) != PGRES_TUPLES_OK) {
			failed = r;
		} else {
			PQclear(r);
		}
	}
	/* Not all new, too little stock for all, or no event: nothing was inserted, and the
	 * statement that skips what exists says what happens to each. */
	bool not_new = s->stmt == PG_ORDERS_STMT_NEW &&
		       PQstatus(pg_conn_libpq(s->c)) == CONNECTION_OK &&
		       (failed != NULL ? pg_orders_unique_violation(failed, NULL) ||
						 pg_orders_refused(failed)
				       : got && !taken);
	/* An id handed out before: each try moves the sequence on by what it took. */
	bool id_taken = s->stmt == PG_ORDERS_STMT_FULL && failed != NULL &&
			PQstatus(pg_conn_libpq(s->c)) == CONNECTION_OK &&
			pg_orders_unique_violation(failed, "orders_pkey") &&
			id_retries++ < PG_ORDERS_ID_RETRIES;

	if (id_taken)
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"postgres: orders_id_seq gives ids that orders already have (was it set "
			"back, or its increment lowered?); writing the batch with the next ones");
	if (not_new || id_taken) {
		PQclear(failed);
		failed = NULL;
		got = false;
		*n_out = 0;
		if (pg_orders_send(s, PG_ORDERS_STMT_FULL) == 0)
			goto again;
		s->busy = false;
		return pg_orders_fail(s, NULL, "sending orders", err, errlen);
	}
	s->busy = false;
	if (failed != NULL) {
		const char *state = PQresultErrorField(failed, PG_DIAG_SQLSTATE);

		*n_out = 0; /* unknown whether it committed unless refused: the redelivery tells */
		if (state != NULL && strcmp(state, PG_ORDERS_REFUSED_STATE) == 0) {
			PQclear(failed);
			res->conflict = true;
			rc = pg_orders_existing(s, out, n_out, err, errlen);
			res->existing = *n_out;
			return rc;
		}
		return pg_orders_fail(s, failed, "writing orders", err, errlen);
	}
	if (!got || PQstatus(pg_conn_libpq(s->c)) != CONNECTION_OK) {
		*n_out = 0;
		return pg_orders_fail(s, NULL, "writing orders", err, errlen);
	}
	if (sum[2] == 0) {
		/* Nothing was inserted: the INSERT reads its event's row. */
		*n_out = 0;
		snprintf(err, errlen, "event %" PRIu32 " is not in PostgreSQL", s->event);
		return -ENOENT;
	}
	res->inserted = (unsigned)sum[0];
	res->existing = *n_out - res->inserted;
	if (commit_hook != NULL)
		commit_hook();
	return 0;
}

int
pg_orders_write_batch(struct pg_orders *s, uint32_t event, const struct store_outbox_rec *e,
	unsigned n, struct pg_orders_row *out, unsigned *n_out, struct pg_orders_batch *res,
	void (*commit_hook)(void), char *err, size_t errlen)
{
	int rc = pg_orders_batch_send(s, event, e, n, err, errlen);

	if (rc != 0) {
		memset(res, 0, sizeof(*res));
		*n_out = 0;
		return rc;
	}
	return pg_orders_batch_wait(s, out, n_out, res, commit_hook, err, errlen);
}

int
pg_orders_active_events(struct pg_orders *s, uint32_t *ids, bool *open, unsigned cap, unsigned *n,
	char *err, size_t errlen)
{
	PGresult *r;
	int rc = pg_orders_connect(s, err, errlen);

	*n = 0;
	if (rc != 0)
		return rc;
	r = PQexec(pg_conn_libpq(s->c),
		"SELECT id, state = 'open' FROM events WHERE state IN ('open', 'closed') "
		"ORDER BY id");
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return pg_orders_fail(s, r, "reading events", err, errlen);
	for (int i = 0; i < PQntuples(r) && *n < cap; i++) {
		ids[*n] = (uint32_t)pg_row_u64(r, i, 0);
		open[*n] = pg_row_bool(r, i, 1);
		(*n)++;
	}
	PQclear(r);
	return 0;
}

int
pg_orders_expire(struct pg_orders *s, unsigned limit, unsigned *expired, char *err, size_t errlen)
{
	char lim[16];
	const char *params[1] = {lim};
	PGresult *r;
	int rc = pg_orders_connect(s, err, errlen);

	*expired = 0;
	if (rc != 0)
		return rc;
	snprintf(lim, sizeof(lim), "%u", limit);
	r = PQexecParams(pg_conn_libpq(s->c), pg_orders_expire_sql, 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
		return pg_orders_fail(s, r, "expiring orders", err, errlen);
	*expired = (unsigned)pg_row_u64(r, 0, 0);
	PQclear(r);
	return 0;
}

/* Runs sql, a query whose one parameter $1 is the row limit cap: *out is its result (PQclear it).
 * Returns 0, or < 0 with what (and why) in err. */
static int
pg_orders_select_limit(struct pg_orders *s, const char *sql, unsigned cap, const char *what,
	PGresult **out, char *err, size_t errlen)
{
	char lim[16];
	const char *params[1] = {lim};
	int rc = pg_orders_connect(s, err, errlen);

	if (rc != 0)
		return rc;
	snprintf(lim, sizeof(lim), "%u", cap);
	*out = PQexecParams(pg_conn_libpq(s->c), sql, 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(*out) != PGRES_TUPLES_OK)
		return pg_orders_fail(s, *out, what, err, errlen);
	return 0;
}

int
pg_orders_users_holding(struct pg_orders *s, uint32_t event, const uint64_t *users, unsigned n,
	uint8_t *holds, char *err, size_t errlen)
{
	char ev[16], *arr;
	const char *params[2] = {ev};
	PGresult *r;
	int rc = pg_orders_connect(s, err, errlen);

	if (rc != 0)
		return rc;
	memset(holds, 0, n);
	if (n == 0)
		return 0;
	arr = pg_conn_bigint_array(users, n);
	if (arr == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(ev, sizeof(ev), "%" PRIu32, event);
	params[1] = arr;
	r = PQexecParams(pg_conn_libpq(s->c),
		"SELECT user_id FROM orders WHERE event_id = $1 AND user_id = ANY($2::bigint[])", 2,
		NULL, params, NULL, NULL, 0);
	free(arr);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return pg_orders_fail(s, r, "reading which users hold an order", err, errlen);
	for (int i = 0; i < PQntuples(r); i++) {
		uint64_t u = pg_row_u64(r, i, 0);

		for (unsigned k = 0; k < n; k++)
			holds[k] |= users[k] == u;
	}
	PQclear(r);
	return 0;
}

int
pg_orders_releases_pending(struct pg_orders *s, struct pg_orders_release *out, unsigned cap,
	unsigned *n, char *err, size_t errlen)
{
	PGresult *r;
	int rc = pg_orders_select_limit(s,
		"SELECT r.id, r.event_id, r.order_id, r.reservation_id, r.user_id, r.n, "
		"o.status = 'cancelled', " PG_ROW_MS(
			"o.pay_deadline") " "
					  "FROM stock_releases r JOIN orders o ON o.id = "
					  "r.order_id "
					  "WHERE r.applied_at IS NULL ORDER BY r.id LIMIT $1",
		cap, "reading stock releases", &r, err, errlen);

	*n = 0;
	if (rc != 0)
		return rc;
	for (int i = 0; i < PQntuples(r) && *n < cap; i++) {
		struct pg_orders_release *x = &out[(*n)++];

		x->id = pg_row_u64(r, i, 0);
		x->event = (uint32_t)pg_row_u64(r, i, 1);
		x->order_id = pg_row_u64(r, i, 2);
		x->reservation_id = pg_row_u64(r, i, 3);
		x->user = pg_row_u64(r, i, 4);
		x->n = (unsigned)pg_row_u64(r, i, 5);
		x->cancelled = pg_row_bool(r, i, 6);
		x->pay_deadline_ms = pg_row_u64(r, i, 7);
	}
	PQclear(r);
	return 0;
}

/* Runs sql, a command with one parameter $1::bigint[], with ids[0..n); what names it in err. */
static int
pg_orders_exec_ids(struct pg_orders *s, const char *sql, const uint64_t *ids, unsigned n,
	const char *what, char *err, size_t errlen)
{
	char *arr;
	const char *params[1];
	PGresult *r;
	int rc = pg_orders_connect(s, err, errlen);

	if (rc != 0 || n == 0)
		return rc;
	arr = pg_conn_bigint_array(ids, n);
	if (arr == NULL)
		return -ENOMEM;
	params[0] = arr;
	r = PQexecParams(pg_conn_libpq(s->c), sql, 1, NULL, params, NULL, NULL, 0);
	free(arr);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		return pg_orders_fail(s, r, what, err, errlen);
	PQclear(r);
	return 0;
}

int
pg_orders_releases_applied(
	struct pg_orders *s, const uint64_t *ids, unsigned n, char *err, size_t errlen)
{
	return pg_orders_exec_ids(s,
		"UPDATE stock_releases SET applied_at = now() "
		"WHERE id = ANY($1::bigint[]) AND applied_at IS NULL",
		ids, n, "marking stock releases applied", err, errlen);
}

int
pg_orders_paid_pending(struct pg_orders *s, struct pg_orders_paid *out, unsigned cap, unsigned *n,
	char *err, size_t errlen)
{
	PGresult *r;
	int rc = pg_orders_select_limit(s,
		"SELECT c.id, o.event_id, o.user_id, o.reservation_id, o.id, " PG_ROW_MS(
			"o.pay_deadline") ", o.status = 'paid' "
					  "FROM result_changes c JOIN orders o ON o.id = "
					  "c.order_id ORDER BY c.id LIMIT $1",
		cap, "reading paid orders", &r, err, errlen);

	*n = 0;
	if (rc != 0)
		return rc;
	for (int i = 0; i < PQntuples(r) && *n < cap; i++) {
		struct pg_orders_paid *x = &out[(*n)++];

		x->id = pg_row_u64(r, i, 0);
		x->event = (uint32_t)pg_row_u64(r, i, 1);
		x->user = pg_row_u64(r, i, 2);
		x->reservation_id = pg_row_u64(r, i, 3);
		x->order_id = pg_row_u64(r, i, 4);
		x->pay_deadline_ms = pg_row_u64(r, i, 5);
		x->paid = pg_row_bool(r, i, 6);
	}
	PQclear(r);
	return 0;
}

int
pg_orders_paid_done(struct pg_orders *s, const uint64_t *ids, unsigned n, char *err, size_t errlen)
{
	return pg_orders_exec_ids(s, "DELETE FROM result_changes WHERE id = ANY($1::bigint[])", ids,
		n, "deleting handled result changes", err, errlen);
}

int
pg_orders_call(struct pg_conn *s, const char *fn, uint64_t order_id, char *result, size_t len,
	char *err, size_t errlen)
{
	char ids[24], sql[64];
	const char *vals[1] = {ids};
	PGresult *res;
	int rc;

	if (order_id == 0 || order_id > ADMIN_ORDER_MAX) {
		snprintf(err, errlen, "order id must be 1..9223372036854775807, got %" PRIu64,
			order_id);
		return -EINVAL;
	}
	if (strcmp(fn, "flashgate_pay") != 0 && strcmp(fn, "flashgate_cancel") != 0) {
		snprintf(err, errlen, "no such order function: %s", fn);
		return -EINVAL;
	}
	snprintf(ids, sizeof(ids), "%" PRIu64, order_id);
	snprintf(sql, sizeof(sql), "SELECT %s($1::bigint)", fn);
	res = pg_conn_query(s, sql, 1, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	snprintf(result, len, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return 0;
}
