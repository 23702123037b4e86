/* SPDX-License-Identifier: BSD-3-Clause */
#include "pg/pg_conn.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg_row.h"

struct pg_conn {
	PGconn *conn;	 /* NULL until the first connection */
	uint64_t losses; /* connections lost under a call (pg_conn_losses()) */
	bool in_tx;	 /* pg_conn_begin() without its commit or rollback yet */
	/* The conninfo asks for a read-write session (target_session_attrs read-write or
	 * primary): a session that became read-only since is dropped, not used. */
	bool want_rw;
	pg_conn_setup_fn *setup;
	void *setup_arg;
	char conninfo[PG_CONN_INFO_MAX];
	char app[PG_CONN_APP_MAX]; /* fallback_application_name; "": none */
};

/* Notices ("relation already exists, skipping") are not for the operator's terminal. */
static void
pg_conn_notice_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* The first line of a libpq message, without its newline, after prefix. */
static void
pg_conn_first_line(char *err, size_t errlen, const char *prefix, const char *msg)
{
	size_t n = strcspn(msg, "\n");

	snprintf(err, errlen, "%s%.*s", prefix, (int)n, msg);
}

/*
 * Whether conninfo's target_session_attrs (or PGTARGETSESSIONATTRS) asks for a session that
 * can write: read-write or primary.
 */
static bool
pg_conn_wants_rw(const char *conninfo)
{
	PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
	const char *v = NULL;
	bool rw = false;

	if (opts == NULL)
		return false;
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
		if (strcmp(o->keyword, "target_session_attrs") == 0)
			v = o->val != NULL ? o->val : getenv("PGTARGETSESSIONATTRS");
	rw = v != NULL && (strcmp(v, "read-write") == 0 || strcmp(v, "primary") == 0);
	PQconninfoFree(opts);
	return rw;
}

/*
 * Whether the session reported itself read-only since it was made (PostgreSQL 14 and later
 * report both parameters at the start and after each command that changed them): a standby, or
 * a primary set read-only (default_transaction_read_only) to hand over to another.
 */
static bool
pg_conn_read_only(const struct pg_conn *c)
{
	const char *hs = PQparameterStatus(c->conn, "in_hot_standby");
	const char *ro = PQparameterStatus(c->conn, "default_transaction_read_only");

	return (hs != NULL && strcmp(hs, "on") == 0) || (ro != NULL && strcmp(ro, "on") == 0);
}

struct pg_conn *
pg_conn_new(const char *conninfo, pg_conn_setup_fn *setup, void *arg)
{
	return pg_conn_new_named(conninfo, NULL, setup, arg);
}

struct pg_conn *
pg_conn_new_named(const char *conninfo, const char *app, pg_conn_setup_fn *setup, void *arg)
{
	struct pg_conn *c;

	if (strlen(conninfo) >= PG_CONN_INFO_MAX)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	snprintf(c->conninfo, sizeof(c->conninfo), "%s", conninfo);
	snprintf(c->app, sizeof(c->app), "%s", app != NULL ? app : "");
	c->want_rw = pg_conn_wants_rw(conninfo);
	c->setup = setup;
	c->setup_arg = arg;
	return c;
}

/*
 * A password in the connection string would be seen by anyone who can read the command line
 * (ps) or the configuration file: refused. Returns 0, or -EINVAL with err (after prefix).
 */
static int
pg_conn_no_password(const char *conninfo, const char *prefix, char *err, size_t errlen)
{
	char *perr = NULL;
	PQconninfoOption *opts = PQconninfoParse(conninfo, &perr);
	int rc = 0;

	if (opts == NULL) {
		/* PQconnectdb() says what is wrong with it. */
		PQfreemem(perr);
		return 0;
	}
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++) {
		if (strcmp(o->keyword, "password") == 0 && o->val != NULL && o->val[0] != '\0') {
			snprintf(err, errlen,
				"%sthe connection string holds a password, which the command line "
				"and the configuration file would show: put it in a passfile "
				"(mode 0600) named by passfile= in the connection string, or in "
				"~/.pgpass",
				prefix);
			rc = -EINVAL;
		}
	}
	PQconninfoFree(opts);
	return rc;
}

/*
 * A new connection (PQreset of the one there is, so that libpq keeps its options): notices
 * quiet, then the setup. Returns 0, or -ENOTCONN with err, libpq's reason after prefix (the
 * connection is then dropped).
 */
static int
pg_conn_connect(struct pg_conn *c, const char *prefix, char *err, size_t errlen)
{
	c->in_tx = false;
	if (pg_conn_no_password(c->conninfo, prefix, err, errlen) != 0)
		return -ENOTCONN;
	if (c->conn != NULL) {
		PQreset(c->conn); /* with the options it was made with, the name too */
	} else if (c->app[0] != '\0') {
		/* The conninfo goes whole as dbname, which libpq expands (expand_dbname), never
		 * pasted into: an application_name set there wins over the fallback. */
		const char *kw[] = {"fallback_application_name", "dbname", NULL};
		const char *val[] = {c->app, c->conninfo, NULL};

		c->conn = PQconnectdbParams(kw, val, 1);
	} else {
		c->conn = PQconnectdb(c->conninfo);
	}
	if (c->conn == NULL) {
		snprintf(err, errlen, "PostgreSQL: out of memory");
		return -ENOTCONN;
	}
	if (PQstatus(c->conn) != CONNECTION_OK) {
		pg_conn_first_line(err, errlen, prefix, PQerrorMessage(c->conn));
		goto fail;
	}
	PQsetNoticeProcessor(c->conn, pg_conn_notice_quiet, NULL);
	if (c->setup != NULL && c->setup(c, c->setup_arg, err, errlen) != 0)
		goto fail;
	return 0;
fail:
	PQfinish(c->conn);
	c->conn = NULL;
	return -ENOTCONN;
}

struct pg_conn *
pg_conn_open(const char *conninfo, char *err, size_t errlen)
{
	return pg_conn_open_named(conninfo, NULL, err, errlen);
}

struct pg_conn *
pg_conn_open_named(const char *conninfo, const char *app, char *err, size_t errlen)
{
	struct pg_conn *c = pg_conn_new_named(conninfo, app, NULL, NULL);

	if (c == NULL) {
		snprintf(err, errlen, "out of memory (or a conninfo of %zu bytes or more)",
			(size_t)PG_CONN_INFO_MAX);
		return NULL;
	}
	if (pg_conn_connect(c, "cannot connect to PostgreSQL: ", err, errlen) != 0) {
		pg_conn_close(c);
		return NULL;
	}
	return c;
}

void
pg_conn_close(struct pg_conn *c)
{
	if (c == NULL)
		return;
	if (c->conn != NULL)
		PQfinish(c->conn);
	free(c);
}

PGconn *
pg_conn_libpq(struct pg_conn *c)
{
	return c->conn;
}

uint64_t
pg_conn_losses(const struct pg_conn *c)
{
	return c->losses;
}

bool
pg_conn_in_tx(const struct pg_conn *c)
{
	return c->in_tx;
}

/*
 * Whether the server closed an idle connection: between calls it owes no reply, so a readable
 * socket is its goodbye (a restart, pg_terminate_backend()) or a notice; libpq reads it and
 * marks the connection bad when it was the end.
 */
static bool
pg_conn_closed_idle(struct pg_conn *c)
{
	/* A goodbye message and the end of the stream may take two reads: libpq returns after
	 * the data and finds the end on the next one. */
	for (int i = 0; i < 4; i++) {
		struct pollfd p = {.fd = PQsocket(c->conn), .events = POLLIN};

		if (p.fd < 0 || poll(&p, 1, 0) <= 0)
			return false;
		if (PQconsumeInput(c->conn) == 0 || PQstatus(c->conn) != CONNECTION_OK)
			return true;
	}
	return false;
}

int
pg_conn_ready(struct pg_conn *c, char *err, size_t errlen)
{
	int rc;

	if (c->in_tx) {
		if (c->conn != NULL && PQstatus(c->conn) == CONNECTION_OK)
			return 0;
		/* The transaction went with the connection: nothing of it was committed. */
		c->in_tx = false;
		rc = pg_conn_connect(c, "", err, errlen);
		snprintf(err, errlen, "PostgreSQL connection lost in a transaction (%s)",
			rc == 0 ? "rolled back; try again" : "cannot reconnect yet");
		return -ENOTCONN;
	}
	if (c->conn != NULL && PQstatus(c->conn) == CONNECTION_OK && !pg_conn_closed_idle(c) &&
		!(c->want_rw && pg_conn_read_only(c)))
		return 0;
	return pg_conn_connect(c, "PostgreSQL is unreachable: ", err, errlen);
}

/*
 * Whether a failure means the connection is gone: libpq's own errors carry no SQLSTATE; class
 * 08 is "connection exception", 57P01..57P03 the server shutting down or not up yet. With a
 * read-write session asked for, 25006 (read_only_sql_transaction) too: the host is no longer
 * the primary (or is being handed over), and the next connection looks for the one that is.
 */
static bool
pg_conn_lost(struct pg_conn *c, const PGresult *res)
{
	const char *st = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	return c->conn == NULL || PQstatus(c->conn) != CONNECTION_OK || st == NULL ||
	       strncmp(st, "08", 2) == 0 || strncmp(st, "57P0", 4) == 0 ||
	       (c->want_rw && strcmp(st, "25006") == 0);
}

int
pg_conn_errno(struct pg_conn *c, const PGresult *res)
{
	const char *st = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (pg_conn_lost(c, res))
		return -ENOTCONN;
	if (strcmp(st, "23505") == 0) /* unique_violation */
		return -EEXIST;
	if (strncmp(st, "23", 2) == 0 || strncmp(st, "22", 2) == 0) /* integrity, data */
		return -EINVAL;
	if (strcmp(st, "40001") == 0 || strcmp(st, "40P01") == 0) /* serialization, deadlock */
		return -EAGAIN;
	return -EIO;
}

int
pg_conn_failed(struct pg_conn *c, const PGresult *res, const char *what, char *err, size_t errlen)
{
	ExecStatusType st = res != NULL ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	const char *msg = res != NULL ? PQresultErrorMessage(res) : "";
	char why[512], pre[128], again[256];
	int rc;

	snprintf(pre, sizeof(pre), "%s%s", what != NULL ? what : "", what != NULL ? ": " : "");
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		snprintf(err, errlen, "PostgreSQL: %sunexpected answer (%d rows)", pre,
			PQntuples(res));
		return -EIO;
	}
	if (*msg == '\0')
		msg = c->conn != NULL ? PQerrorMessage(c->conn) : "no connection";
	pg_conn_first_line(why, sizeof(why), pre, msg);
	rc = pg_conn_errno(c, res);
	if (rc != -ENOTCONN) {
		snprintf(err, errlen, "PostgreSQL: %s", why);
		return rc;
	}
	c->losses++;
	rc = pg_conn_connect(c, "", again, sizeof(again));
	snprintf(err, errlen, "PostgreSQL connection lost (%s): %s",
		rc == 0 ? "reconnected; try again" : "cannot reconnect yet", why);
	return -ENOTCONN;
}

PGresult *
pg_conn_query_params(struct pg_conn *c, const char *sql, int n, const char *const *vals,
	const int *lens, const int *fmts, int *rc, char *err, size_t errlen)
{
	PGresult *res;
	ExecStatusType st;

	*rc = pg_conn_ready(c, err, errlen);
	if (*rc != 0)
		return NULL;
	res = PQexecParams(c->conn, sql, n, NULL, vals, lens, fmts, 0);
	st = PQresultStatus(res);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return res;
	*rc = pg_conn_failed(c, res, NULL, err, errlen);
	PQclear(res);
	return NULL;
}

char *
pg_conn_bigint_array(const uint64_t *ids, size_t n)
{
	char *arr = malloc(2 + n * 21 + 1);
	size_t len = 0;

	if (arr == NULL)
		return NULL;
	arr[len++] = '{';
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(arr + len, "%s%" PRIu64, i ? "," : "", ids[i]);
	arr[len++] = '}';
	arr[len] = '\0';
	return arr;
}

PGresult *
pg_conn_query(struct pg_conn *c, const char *sql, int n, const char *const *vals, int *rc,
	char *err, size_t errlen)
{
	return pg_conn_query_params(c, sql, n, vals, NULL, NULL, rc, err, errlen);
}

int
pg_conn_exec_rows(struct pg_conn *c, const char *sql, int n, const char *const *vals,
	uint64_t *rows, char *err, size_t errlen)
{
	int rc;
	PGresult *res = pg_conn_query(c, sql, n, vals, &rc, err, errlen);

	if (res != NULL && rows != NULL)
		*rows = strtoull(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return rc;
}

int
pg_conn_exec(struct pg_conn *c, const char *sql, int n, const char *const *vals, char *err,
	size_t errlen)
{
	return pg_conn_exec_rows(c, sql, n, vals, NULL, err, errlen);
}

int
pg_conn_query_u64(struct pg_conn *c, const char *sql, int n, const char *const *vals, uint64_t *v,
	char *err, size_t errlen)
{
	int rc;
	PGresult *res = pg_conn_query(c, sql, n, vals, &rc, err, errlen);

	if (res == NULL)
		return rc;
	if (PQntuples(res) < 1 || PQnfields(res) < 1)
		rc = pg_conn_failed(c, res, NULL, err, errlen);
	else
		*v = pg_row_u64(res, 0, 0);
	PQclear(res);
	return rc;
}

int
pg_conn_now_ms(struct pg_conn *c, uint64_t *ms, char *err, size_t errlen)
{
	return pg_conn_query_u64(c, "SELECT " PG_ROW_MS("now()"), 0, NULL, ms, err, errlen);
}

int
pg_conn_begin(
	struct pg_conn *c, const char *begin_sql, const char *lock_sql, char *err, size_t errlen)
{
	int rc = pg_conn_exec(c, begin_sql != NULL ? begin_sql : "BEGIN", 0, NULL, err, errlen);

	if (rc != 0)
		return rc;
	c->in_tx = true;
	if (lock_sql != NULL && (rc = pg_conn_exec(c, lock_sql, 0, NULL, err, errlen)) != 0)
		pg_conn_rollback(c);
	return rc;
}

int
pg_conn_commit(struct pg_conn *c, char *err, size_t errlen)
{
	int rc = pg_conn_exec(c, "COMMIT", 0, NULL, err, errlen);

	c->in_tx = false;
	return rc;
}

void
pg_conn_rollback(struct pg_conn *c)
{
	if (c->conn != NULL && PQstatus(c->conn) == CONNECTION_OK &&
		PQtransactionStatus(c->conn) != PQTRANS_IDLE)
		PQclear(PQexec(c->conn, "ROLLBACK"));
	c->in_tx = false;
}
