/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/order_store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "common/log.h"

/* PostgreSQL's type oids of the batch statement's parameters (pg_type.h is server-side). */
#define OSTORE_INT8_OID		     20
#define OSTORE_INT8_ARRAY_OID	     1016
#define OSTORE_TIMESTAMPTZ_OID	     1184
#define OSTORE_TIMESTAMPTZ_ARRAY_OID 1185

/* Unix time of PostgreSQL's epoch, 2000-01-01 00:00 UTC, in ms. */
#define OSTORE_PG_EPOCH_MS INT64_C(946684800000)

/* The SQLSTATE ostore_refuse_fn raises: the stock decrement of a batch was refused. */
#define OSTORE_REFUSED_STATE "FG001"

/*
 * How often a batch is sent again at once when the ids it took exist (orders_pkey): enough to
 * pass one block of ids handed out before (sql/004), each try taking at least one id.
 */
#define OSTORE_ID_RETRIES (RS_BATCH_MAX + 16)

/* A binary int8[] of up to RS_BATCH_MAX values: header, then 4-byte length + 8 bytes each. */
#define OSTORE_ARRAY_HDR 20
#define OSTORE_ARRAY_CAP (OSTORE_ARRAY_HDR + RS_BATCH_MAX * 12)

/*
 * The statements a batch can be sent as: ostore_batch_new_sql first when it can, else
 * ostore_batch_sql.
 */
enum ostore_stmt {
	OSTORE_STMT_NEW,  /* every order new, ids from one block: one row back */
	OSTORE_STMT_FULL, /* any batch: a row per order inserted or found */
};

struct order_store {
	PGconn *c;
	bool busy;	   /* a batch was sent and its result not read yet */
	enum ostore_stmt stmt; /* what the batch in flight was sent as */
	uint64_t id_block; /* ids per nextval('orders_id_seq') (sql/004), read on connect */
	uint32_t event;	   /* of the batch in flight */
	unsigned n;	   /* its reservations */
	/* Its parameters, kept until its result is read (a refused batch looks its rows up). */
	uint8_t ev[8];
	uint8_t users[OSTORE_ARRAY_CAP], rids[OSTORE_ARRAY_CAP], times[OSTORE_ARRAY_CAP];
	int lens[4];
	/* Its users and reservation ids: its orders' when ostore_batch_new_sql takes it. */
	uint64_t user[RS_BATCH_MAX], rid[RS_BATCH_MAX];
	char conninfo[512];
};

/*
 * Raises OSTORE_REFUSED_STATE. A temporary function (one per connection, created on connect), so
 * that the batch statement can refuse itself: it then runs as one autocommit statement, sent
 * without waiting, and a refused decrement rolls back everything it inserted.
 */
static const char ostore_refuse_fn[] =
	"CREATE FUNCTION pg_temp.fg_stock_refused(n bigint) RETURNS bigint LANGUAGE plpgsql AS "
	"$f$\n"
	"BEGIN\n"
	"  RAISE EXCEPTION 'the stock left is less than the % orders of the batch', n\n"
	"    USING ERRCODE = '" OSTORE_REFUSED_STATE "';\n"
	"END $f$";

/*
 * One batch, one statement, committed on its own: $1 event, $2 users, $3 reservation ids (int8),
 * $4 the times Redis decided (timestamptz), all binary. Rows of kind 0 are the orders inserted,
 * kind 1 the orders that existed (a redelivery; the statement's snapshot does not see the rows
 * it inserts, so the two never overlap; looked up only when fewer rows were inserted than
 * sent, the one-time filter skips the join otherwise), and one row of kind 2: inserted, stock
 * rows updated, events found. The stock is decremented by the number actually inserted, and
 * only if that much is available: otherwise no row is updated and the statement raises
 * OSTORE_REFUSED_STATE, which undoes the whole batch.
 *
 * What is skipped is named: a reservation whose buyer has its order (ON CONFLICT on (event_id,
 * user_id), and NOT EXISTS, and DISTINCT ON for one user twice in the batch). Kind 1 rows are
 * the existing orders of this very reservation, (event, user, reservation id): a redelivery,
 * also one another writer commits meanwhile. A user holding an order of another reservation gets
 * none (and no kind 1 row). Kind 3 rows name a reservation id that another buyer's order (or
 * another reservation of the batch) has too: both are kept, and reported (two data planes with
 * one dp id). Any other conflict is an error, never a skipped order: an id that orders_id_seq
 * hands out again (it was set back, or its increment lowered below the blocks of
 * ostore_batch_new_sql) fails the batch on orders_pkey, and ostore_batch_wait() sends it again
 * with the next ids.
 */
static const char ostore_batch_sql[] =
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
	"       (extract(epoch FROM pay_deadline) * 1000)::bigint, status = 'pending' FROM ins\n"
	"UNION ALL\n"
	"SELECT 1, o.id, o.user_id, o.reservation_id,\n"
	"       (extract(epoch FROM o.pay_deadline) * 1000)::bigint, o.status = 'pending'\n"
	"FROM orders o JOIN x ON o.event_id = $1 AND o.user_id = x.u AND o.reservation_id = x.r\n"
	"WHERE (SELECT c FROM n) < cardinality($3::bigint[])\n"
	"UNION ALL\n"
	"SELECT 3, o.id, o.user_id, x.r, o.event_id, false\n"
	"FROM orders o JOIN x ON o.reservation_id = x.r AND (o.event_id <> $1 OR o.user_id <> x.u)\n"
	"UNION ALL\n"
	"SELECT 3, 0, y.u, x.r, $1, false FROM x JOIN x y ON y.r = x.r AND y.u <> x.u AND y.o > x.o\n"
	"UNION ALL\n"
	"SELECT 2, c, s, e,\n"
	"       CASE WHEN c > 0 AND s = 0 THEN pg_temp.fg_stock_refused(c) ELSE 0 END, false\n"
	"FROM chk";

/*
 * The same batch when every reservation in it is new, tried first: nearly every batch is. Its
 * n orders take the ids of one block, base .. base + n - 1 in the batch's order (one nextval(),
 * sql/004: the sequence's increment is at least n, checked here too), the deadline is the same
 * for all, so one row comes back: base and the deadline (ms). No ON CONFLICT, whose speculative
 * insertion costs about a third of the statement, and no row per order. As in ostore_batch_sql the
 * stock row, the one row two batches in flight share, is updated last (st reads the count of
 * ins), so that one batch inserts while the other's COMMIT holds it. Anything else inserts
 * nothing, and the batch is sent again as ostore_batch_sql: a user who holds an order (this
 * reservation's: a redelivery, or another one) fails the INSERT with unique_violation; too
 * little stock for n updates no stock row and raises OSTORE_REFUSED_STATE; no such event, or a
 * smaller increment, returns no row (and inserts nothing). Its fourth column counts the
 * reservation ids another buyer's order has too (both kept; reported).
 */
static const char ostore_batch_new_sql[] =
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
	"SELECT ev.base, (extract(epoch FROM ev.deadline) * 1000)::bigint,\n"
	"       CASE WHEN (SELECT count(*) FROM st) = 0 THEN pg_temp.fg_stock_refused(n.c) END,\n"
	"       (SELECT count(*) FROM orders o\n"
	"        JOIN unnest($2::bigint[], $3::bigint[]) AS x(u, r) ON o.reservation_id = x.r\n"
	"        WHERE o.event_id <> $1 OR o.user_id <> x.u) +\n"
	"       (SELECT count(*) - count(DISTINCT r) FROM unnest($3::bigint[]) AS r)\n"
	"FROM ev, n";

/* The orders of a refused batch that exist without it ($1 event, $2 users, $3 reservation ids,
 * binary): each of the same (event, user, reservation id). */
static const char ostore_existing_sql[] =
	"SELECT 1, o.id, o.user_id, o.reservation_id, (extract(epoch FROM "
	"o.pay_deadline) * 1000)::bigint,\n"
	"       o.status = 'pending'\n"
	"FROM orders o JOIN unnest($2::bigint[], $3::bigint[]) AS x(u, r)\n"
	"  ON o.event_id = $1 AND o.user_id = x.u AND o.reservation_id = x.r";

/*
 * Expiry: the due orders are locked (SKIP LOCKED: another sweeper's, or a payment in flight,
 * are left for the next round) and changed only while pending; their stock goes back and a
 * release row per order is written for the Redis side, all in this one statement.
 */
static const char ostore_expire_sql[] =
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
 * Connects if not connected: synchronous_commit on, the refusal function and the prepared batch
 * statements. A connection that cannot have them is dropped (the next call tries again).
 */
static int
ostore_connect(struct order_store *s, char *err, size_t errlen)
{
	static const Oid batch_types[4] = {OSTORE_INT8_OID, OSTORE_INT8_ARRAY_OID,
		OSTORE_INT8_ARRAY_OID, OSTORE_TIMESTAMPTZ_ARRAY_OID};
	static const Oid existing_types[3] = {
		OSTORE_INT8_OID, OSTORE_INT8_ARRAY_OID, OSTORE_INT8_ARRAY_OID};
	PGresult *r;
	const char *what;

	/* One statement at a time per connection: the caller waits for its batch first. */
	if (s->busy) {
		snprintf(err, errlen, "postgres: a batch is in flight");
		return -EBUSY;
	}
	if (s->c != NULL && PQstatus(s->c) == CONNECTION_OK)
		return 0;
	if (s->c != NULL)
		PQfinish(s->c);
	s->busy = false;
	s->c = PQconnectdb(s->conninfo);
	if (PQstatus(s->c) != CONNECTION_OK) {
		snprintf(err, errlen, "postgres: cannot connect: %s", PQerrorMessage(s->c));
		goto fail;
	}
	/* An order is acknowledged in Redis only once its COMMIT is durable. */
	what = "SET synchronous_commit = on";
	r = PQexec(s->c, what);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		goto fail_result;
	PQclear(r);
	what = "creating pg_temp.fg_stock_refused()";
	r = PQexec(s->c, ostore_refuse_fn);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		goto fail_result;
	PQclear(r);
	/* Prepared once per connection: a batch is then one Bind/Execute, planned generically
	 * (an index probe per entry for the existing orders, whatever the table's size). */
	what = "preparing the batch statement";
	r = PQprepare(s->c, "fg_batch", ostore_batch_sql, 4, batch_types);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		goto fail_result;
	PQclear(r);
	r = PQprepare(s->c, "fg_batch_new", ostore_batch_new_sql, 4, batch_types);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		goto fail_result;
	PQclear(r);
	r = PQprepare(s->c, "fg_existing", ostore_existing_sql, 3, existing_types);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		goto fail_result;
	PQclear(r);
	/* Blocks of ids (sql/004): without them every batch is sent as ostore_batch_sql. */
	what = "reading the increment of orders_id_seq";
	r = PQexec(s->c, "SELECT seqincrement FROM pg_sequence "
			 "WHERE seqrelid = 'orders_id_seq'::regclass");
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
		goto fail_result;
	s->id_block = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	if (s->id_block < RS_BATCH_MAX)
		LOG_WARN("postgres: orders_id_seq hands out %" PRIu64
			 " id(s) at a time: batches of "
			 "more orders than that take the slower statement (apply the schema "
			 "migrations, sql/004)",
			s->id_block);
	return 0;
fail_result:
	snprintf(err, errlen, "postgres: %s: %s", what, PQresultErrorMessage(r));
	PQclear(r);
fail:
	PQfinish(s->c);
	s->c = NULL;
	return -ENOTCONN;
}

/* Turns a failed result into -ENOTCONN (connection gone) or -EIO, with the message in err. */
static int
ostore_fail(struct order_store *s, PGresult *r, const char *what, char *err, size_t errlen)
{
	const char *msg = r != NULL ? PQresultErrorMessage(r) : PQerrorMessage(s->c);
	int rc = PQstatus(s->c) == CONNECTION_OK ? -EIO : -ENOTCONN;

	snprintf(err, errlen, "postgres: %s: %.*s", what,
		(int)(strlen(msg) > 0 && msg[strlen(msg) - 1] == '\n' ? strlen(msg) - 1
								      : strlen(msg)),
		msg);
	PQclear(r);
	return rc;
}

struct order_store *
ostore_open(const char *conninfo, char *err, size_t errlen)
{
	struct order_store *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(s->conninfo, sizeof(s->conninfo), "%s", conninfo);
	if (ostore_connect(s, err, errlen) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

void
ostore_close(struct order_store *s)
{
	if (s == NULL)
		return;
	if (s->c != NULL)
		PQfinish(s->c);
	free(s);
}

/* Big-endian stores and loads, the byte order of PostgreSQL's binary format. */
static void
ostore_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void
ostore_put64(uint8_t *p, uint64_t v)
{
	ostore_put32(p, (uint32_t)(v >> 32));
	ostore_put32(p + 4, (uint32_t)v);
}

static uint64_t
ostore_get_be(const uint8_t *p, int len)
{
	uint64_t v = 0;

	for (int i = 0; i < len; i++)
		v = v << 8 | p[i];
	return v;
}

/*
 * Unix time in ms as a binary timestamptz: microseconds since 2000-01-01 UTC. Beyond what that
 * holds (no clock gives such a time), PostgreSQL's infinity.
 */
static uint64_t
ostore_timestamptz(uint64_t ms)
{
	if (ms > (uint64_t)(INT64_MAX / 1000 + OSTORE_PG_EPOCH_MS))
		return (uint64_t)INT64_MAX;
	return (uint64_t)(((int64_t)ms - OSTORE_PG_EPOCH_MS) * 1000);
}

/*
 * Writes n values taken from e by field (0 user, 1 reservation id, 2 the time Redis decided) as
 * a binary int8[] or, for 2, timestamptz[] (array_recv's format: ndim 1, no nulls, element oid,
 * dimension, lower bound 1, then each element as length 8 and value). Returns its length.
 */
static int
ostore_array(uint8_t *buf, const struct rs_outbox_rec *e, unsigned n, int field)
{
	uint8_t *p = buf + OSTORE_ARRAY_HDR;

	ostore_put32(buf, 1);
	ostore_put32(buf + 4, 0);
	ostore_put32(buf + 8, field == 2 ? OSTORE_TIMESTAMPTZ_OID : OSTORE_INT8_OID);
	ostore_put32(buf + 12, n);
	ostore_put32(buf + 16, 1);
	for (unsigned i = 0; i < n; i++, p += 12) {
		uint64_t v = field == 0	  ? e[i].user
			     : field == 1 ? e[i].reservation_id
					  : ostore_timestamptz(e[i].id_ms);

		ostore_put32(p, 8);
		ostore_put64(p + 4, v);
	}
	return (int)(p - buf);
}

/* Column col of a binary result row as an unsigned integer (int2/4/8 or bool). */
static uint64_t
ostore_bin(const PGresult *r, int row, int col)
{
	return ostore_get_be((const uint8_t *)PQgetvalue(r, row, col), PQgetlength(r, row, col));
}

static uint64_t
ostore_u64(const PGresult *r, int row, int col)
{
	return strtoull(PQgetvalue(r, row, col), NULL, 10);
}

/* Sends the batch whose parameters s holds as statement stmt. */
static int
ostore_send(struct order_store *s, enum ostore_stmt stmt)
{
	static const int formats[4] = {1, 1, 1, 1};
	const char *params[4] = {(const char *)s->ev, (const char *)s->users, (const char *)s->rids,
		(const char *)s->times};

	s->stmt = stmt;
	return PQsendQueryPrepared(s->c, stmt == OSTORE_STMT_NEW ? "fg_batch_new" : "fg_batch", 4,
		       params, s->lens, formats, 1)
		       ? 0
		       : -EIO;
}

int
ostore_batch_send(struct order_store *s, uint32_t event, const struct rs_outbox_rec *e, unsigned n,
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
	rc = ostore_connect(s, err, errlen);
	if (rc != 0)
		return rc;
	s->event = event;
	s->n = n;
	ostore_put64(s->ev, event);
	s->lens[0] = 8;
	s->lens[1] = ostore_array(s->users, e, n, 0);
	s->lens[2] = ostore_array(s->rids, e, n, 1);
	s->lens[3] = ostore_array(s->times, e, n, 2);
	for (unsigned i = 0; i < n; i++) {
		s->user[i] = e[i].user;
		s->rid[i] = e[i].reservation_id;
	}
	rc = ostore_send(s, n <= s->id_block ? OSTORE_STMT_NEW : OSTORE_STMT_FULL);
	if (rc != 0)
		return ostore_fail(s, NULL, "sending orders", err, errlen);
	s->busy = true;
	return 0;
}

bool
ostore_batch_busy(const struct order_store *s)
{
	return s->busy;
}

/*
 * Takes the order rows (kind 0 and 1) of a binary result into out, the kind 2 row into *sum and
 * the kind 3 rows (a reservation id another buyer's order has too) into res.
 */
static void
ostore_take_orders(const PGresult *r, struct ostore_order *out, unsigned cap, unsigned *n_out,
	uint64_t sum[3], struct ostore_batch_result *res)
{
	for (int i = 0; i < PQntuples(r); i++) {
		uint64_t kind = ostore_bin(r, i, 0);

		if (kind == 2) {
			for (int k = 0; k < 3; k++)
				sum[k] = ostore_bin(r, i, 1 + k);
			continue;
		}
		if (kind == 3) {
			if (res != NULL && res->rid_shared++ == 0) {
				res->shared_rid = ostore_bin(r, i, 3);
				res->shared_order = ostore_bin(r, i, 1);
				res->shared_user = ostore_bin(r, i, 2);
				res->shared_event = (uint32_t)ostore_bin(r, i, 4);
			}
			continue;
		}
		if (*n_out >= cap)
			continue;
		struct ostore_order *o = &out[(*n_out)++];

		o->order_id = ostore_bin(r, i, 1);
		o->user = ostore_bin(r, i, 2);
		o->reservation_id = ostore_bin(r, i, 3);
		o->pay_deadline_ms = ostore_bin(r, i, 4);
		o->pending = ostore_bin(r, i, 5) != 0;
		o->inserted = kind == 0;
	}
}

/*
 * The row of ostore_batch_new_sql: its n orders into out (ids from base, in the batch's order, all
 * pending with the same deadline) and true; false when there is no row (no event or no block of
 * ids: nothing was inserted).
 */
static bool
ostore_take_new(struct order_store *s, const PGresult *r, struct ostore_order *out, unsigned *n_out,
	uint64_t sum[3], struct ostore_batch_result *res)
{
	uint64_t base, deadline_ms;

	if (PQntuples(r) != 1 || PQnfields(r) != 4)
		return false;
	res->rid_shared = (unsigned)ostore_bin(r, 0, 3);
	base = ostore_bin(r, 0, 0);
	deadline_ms = ostore_bin(r, 0, 1);
	for (unsigned i = 0; i < s->n; i++)
		out[i] = (struct ostore_order){
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

/* Whether a failed result is ostore_refuse_fn's: the stock decrement was refused. */
static bool
ostore_refused(const PGresult *r)
{
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

	return state != NULL && strcmp(state, OSTORE_REFUSED_STATE) == 0;
}

/* Whether a failed result is a unique_violation, of constraint (NULL: any). */
static bool
ostore_unique_violation(const PGresult *r, const char *constraint)
{
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	const char *name = PQresultErrorField(r, PG_DIAG_CONSTRAINT_NAME);

	return state != NULL && strcmp(state, "23505") == 0 &&
	       (constraint == NULL || (name != NULL && strcmp(name, constraint) == 0));
}

/* After a refused batch: the orders of its reservations that exist without it, into out. */
static int
ostore_existing(
	struct order_store *s, struct ostore_order *out, unsigned *n_out, char *err, size_t errlen)
{
	static const int format[3] = {1, 1, 1};
	const char *params[3] = {(const char *)s->ev, (const char *)s->users, (const char *)s->rids};
	uint64_t sum[3];
	PGresult *r = PQexecPrepared(s->c, "fg_existing", 3, params, s->lens, format, 1);

	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return ostore_fail(s, r, "reading the orders of a refused batch", err, errlen);
	ostore_take_orders(r, out, s->n, n_out, sum, NULL);
	PQclear(r);
	return 0;
}

int
ostore_batch_wait(struct order_store *s, struct ostore_order *out, unsigned *n_out,
	struct ostore_batch_result *res, void (*commit_hook)(void), char *err, size_t errlen)
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
	while ((r = PQgetResult(s->c)) != NULL) {
		if (PQresultStatus(r) == PGRES_TUPLES_OK && !got && failed == NULL) {
			if (s->stmt == OSTORE_STMT_NEW)
				taken = ostore_take_new(s, r, out, n_out, sum, res);
			else
				ostore_take_orders(r, out, s->n, n_out, sum, res);
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
	bool not_new =
		s->stmt == OSTORE_STMT_NEW && PQstatus(s->c) == CONNECTION_OK &&
		(failed != NULL ? ostore_unique_violation(failed, NULL) || ostore_refused(failed)
				: got && !taken);
	/* An id handed out before: each try moves the sequence on by what it took. */
	bool id_taken =
		s->stmt == OSTORE_STMT_FULL && failed != NULL && PQstatus(s->c) == CONNECTION_OK &&
		ostore_unique_violation(failed, "orders_pkey") && id_retries++ < OSTORE_ID_RETRIES;

	if (id_taken)
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"postgres: orders_id_seq gives ids that orders already have (was it set "
			"back, or its increment lowered?); writing the batch with the next ones");
	if (not_new || id_taken) {
		PQclear(failed);
		failed = NULL;
		got = false;
		*n_out = 0;
		if (ostore_send(s, OSTORE_STMT_FULL) == 0)
			goto again;
		s->busy = false;
		return ostore_fail(s, NULL, "sending orders", err, errlen);
	}
	s->busy = false;
	if (failed != NULL) {
		const char *state = PQresultErrorField(failed, PG_DIAG_SQLSTATE);

		*n_out = 0; /* unknown whether it committed unless refused: the redelivery tells */
		if (state != NULL && strcmp(state, OSTORE_REFUSED_STATE) == 0) {
			PQclear(failed);
			res->conflict = true;
			rc = ostore_existing(s, out, n_out, err, errlen);
			res->existing = *n_out;
			return rc;
		}
		return ostore_fail(s, failed, "writing orders", err, errlen);
	}
	if (!got || PQstatus(s->c) != CONNECTION_OK) {
		*n_out = 0;
		return ostore_fail(s, NULL, "writing orders", err, errlen);
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
ostore_write_batch(struct order_store *s, uint32_t event, const struct rs_outbox_rec *e, unsigned n,
	struct ostore_order *out, unsigned *n_out, struct ostore_batch_result *res,
	void (*commit_hook)(void), char *err, size_t errlen)
{
	int rc = ostore_batch_send(s, event, e, n, err, errlen);

	if (rc != 0) {
		memset(res, 0, sizeof(*res));
		*n_out = 0;
		return rc;
	}
	return ostore_batch_wait(s, out, n_out, res, commit_hook, err, errlen);
}

int
ostore_active_events(struct order_store *s, uint32_t *ids, bool *open, unsigned cap, unsigned *n,
	char *err, size_t errlen)
{
	PGresult *r;
	int rc = ostore_connect(s, err, errlen);

	*n = 0;
	if (rc != 0)
		return rc;
	r = PQexec(s->c, "SELECT id, state = 'open' FROM events WHERE state IN ('open', 'closed') "
			 "ORDER BY id");
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return ostore_fail(s, r, "reading events", err, errlen);
	for (int i = 0; i < PQntuples(r) && *n < cap; i++) {
		ids[*n] = (uint32_t)ostore_u64(r, i, 0);
		open[*n] = PQgetvalue(r, i, 1)[0] == 't';
		(*n)++;
	}
	PQclear(r);
	return 0;
}

int
ostore_expire(struct order_store *s, unsigned limit, unsigned *expired, char *err, size_t errlen)
{
	char lim[16];
	const char *params[1] = {lim};
	PGresult *r;
	int rc = ostore_connect(s, err, errlen);

	*expired = 0;
	if (rc != 0)
		return rc;
	snprintf(lim, sizeof(lim), "%u", limit);
	r = PQexecParams(s->c, ostore_expire_sql, 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
		return ostore_fail(s, r, "expiring orders", err, errlen);
	*expired = (unsigned)ostore_u64(r, 0, 0);
	PQclear(r);
	return 0;
}

/* Runs sql, a query whose one parameter $1 is the row limit cap: *out is its result (PQclear it).
 * Returns 0, or < 0 with what (and why) in err. */
static int
ostore_select_limit(struct order_store *s, const char *sql, unsigned cap, const char *what,
	PGresult **out, char *err, size_t errlen)
{
	char lim[16];
	const char *params[1] = {lim};
	int rc = ostore_connect(s, err, errlen);

	if (rc != 0)
		return rc;
	snprintf(lim, sizeof(lim), "%u", cap);
	*out = PQexecParams(s->c, sql, 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(*out) != PGRES_TUPLES_OK)
		return ostore_fail(s, *out, what, err, errlen);
	return 0;
}

int
ostore_releases_pending(struct order_store *s, struct ostore_release *out, unsigned cap,
	unsigned *n, char *err, size_t errlen)
{
	PGresult *r;
	int rc = ostore_select_limit(s,
		"SELECT r.id, r.event_id, r.order_id, r.reservation_id, r.user_id, r.n, "
		"o.status = 'cancelled', "
		"(extract(epoch FROM o.pay_deadline) * 1000)::bigint "
		"FROM stock_releases r JOIN orders o ON o.id = r.order_id "
		"WHERE r.applied_at IS NULL ORDER BY r.id LIMIT $1",
		cap, "reading stock releases", &r, err, errlen);

	*n = 0;
	if (rc != 0)
		return rc;
	for (int i = 0; i < PQntuples(r) && *n < cap; i++) {
		struct ostore_release *x = &out[(*n)++];

		x->id = ostore_u64(r, i, 0);
		x->event = (uint32_t)ostore_u64(r, i, 1);
		x->order_id = ostore_u64(r, i, 2);
		x->reservation_id = ostore_u64(r, i, 3);
		x->user = ostore_u64(r, i, 4);
		x->n = (unsigned)ostore_u64(r, i, 5);
		x->cancelled = PQgetvalue(r, i, 6)[0] == 't';
		x->pay_deadline_ms = ostore_u64(r, i, 7);
	}
	PQclear(r);
	return 0;
}

/* Runs sql, a command with one parameter $1::bigint[], with ids[0..n); what names it in err. */
static int
ostore_exec_ids(struct order_store *s, const char *sql, const uint64_t *ids, unsigned n,
	const char *what, char *err, size_t errlen)
{
	char *arr;
	size_t len = 0;
	const char *params[1];
	PGresult *r;
	int rc = ostore_connect(s, err, errlen);

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
	r = PQexecParams(s->c, sql, 1, NULL, params, NULL, NULL, 0);
	free(arr);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		return ostore_fail(s, r, what, err, errlen);
	PQclear(r);
	return 0;
}

int
ostore_releases_applied(
	struct order_store *s, const uint64_t *ids, unsigned n, char *err, size_t errlen)
{
	return ostore_exec_ids(s,
		"UPDATE stock_releases SET applied_at = now() "
		"WHERE id = ANY($1::bigint[]) AND applied_at IS NULL",
		ids, n, "marking stock releases applied", err, errlen);
}

int
ostore_paid_pending(struct order_store *s, struct ostore_paid *out, unsigned cap, unsigned *n,
	char *err, size_t errlen)
{
	PGresult *r;
	int rc = ostore_select_limit(s,
		"SELECT c.id, o.event_id, o.user_id, o.reservation_id, o.id, "
		"(extract(epoch FROM o.pay_deadline) * 1000)::bigint, o.status = 'paid' "
		"FROM result_changes c JOIN orders o ON o.id = c.order_id ORDER BY c.id LIMIT $1",
		cap, "reading paid orders", &r, err, errlen);

	*n = 0;
	if (rc != 0)
		return rc;
	for (int i = 0; i < PQntuples(r) && *n < cap; i++) {
		struct ostore_paid *x = &out[(*n)++];

		x->id = ostore_u64(r, i, 0);
		x->event = (uint32_t)ostore_u64(r, i, 1);
		x->user = ostore_u64(r, i, 2);
		x->reservation_id = ostore_u64(r, i, 3);
		x->order_id = ostore_u64(r, i, 4);
		x->pay_deadline_ms = ostore_u64(r, i, 5);
		x->paid = PQgetvalue(r, i, 6)[0] == 't';
	}
	PQclear(r);
	return 0;
}

int
ostore_paid_done(struct order_store *s, const uint64_t *ids, unsigned n, char *err, size_t errlen)
{
	return ostore_exec_ids(s, "DELETE FROM result_changes WHERE id = ANY($1::bigint[])", ids, n,
		"deleting handled result changes", err, errlen);
}
