/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_CONN_H
#define FG_PG_PG_CONN_H
/*
 * One PostgreSQL connection (libpq), the only place that connects, reconnects and turns a
 * failure into an errno and a message. Every program that speaks to PostgreSQL does it through
 * pg/ (the slow path only: admin commands, start-up, the draw, the order writer's batches).
 *
 * Functions that can fail return 0 or a negative errno and write one line to err (any size; the
 * control plane's answers hold ADMIN_ERR_MAX): -ENOTCONN PostgreSQL cannot be reached or the
 * connection was lost under the call (it may or may not have taken effect); -EEXIST a unique
 * violation; -EINVAL a value the schema refuses (SQLSTATE classes 22 and 23); -EAGAIN a
 * serialization failure or deadlock; -EIO any other database error. Values travel as parameters
 * (PQexecParams), never inside SQL text. One struct pg_conn is one connection: use it from one
 * thread at a time.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

struct pg_conn;

/*
 * Runs on every new connection (the first and each reconnection) before anything else is sent
 * on it: session settings, temporary functions, prepared statements. Returns 0, or < 0 with err
 * set: the connection is then dropped and the call that needed it fails with -ENOTCONN.
 */
typedef int pg_conn_setup_fn(struct pg_conn *c, void *arg, char *err, size_t errlen);

/*
 * A connection to conninfo (a libpq conninfo string or postgresql:// URI, copied) that is made
 * when first needed, with setup (may be NULL) run on it and on every reconnection. Returns it,
 * or NULL when out of memory or conninfo is longer than PG_CONN_INFO_MAX.
 */
#define PG_CONN_INFO_MAX 512
struct pg_conn *pg_conn_new(const char *conninfo, pg_conn_setup_fn *setup, void *arg);

/*
 * pg_conn_new() whose sessions are named app (may be NULL: unnamed), the job they do
 * ("flashgate-cp admin"): libpq's fallback_application_name, so an operator sees it in
 * pg_stat_activity. An application_name the conninfo (or PGAPPNAME) sets wins: that operator
 * asked for one name on every session. The conninfo is passed whole to libpq (never pasted
 * into); app is cut at PG_CONN_APP_MAX - 1 bytes. Returns as pg_conn_new().
 */
#define PG_CONN_APP_MAX 64
struct pg_conn *pg_conn_new_named(
	const char *conninfo, const char *app, pg_conn_setup_fn *setup, void *arg);

/*
 * pg_conn_new() without a setup, connected now. Returns the connection, or NULL with the reason
 * in err ("cannot connect to PostgreSQL: ..."). Every connection refuses a conninfo that holds a
 * password (password=, or a URI's user:password@): it belongs in a passfile.
 */
struct pg_conn *pg_conn_open(const char *conninfo, char *err, size_t errlen);

/* pg_conn_open() whose sessions are named app (pg_conn_new_named()). */
struct pg_conn *pg_conn_open_named(const char *conninfo, const char *app, char *err, size_t errlen);

/* Closes the connection (what is open is rolled back by the server) and frees c; NULL: no-op. */
void pg_conn_close(struct pg_conn *c);

/*
 * Makes sure the connection is up before a call sends anything: connects when there is none,
 * and replaces one the server closed since the last call (PostgreSQL restarted), so that the
 * call runs on the new one instead of failing. Inside a transaction (pg_conn_begin()) a lost
 * connection is not replaced: the transaction is gone, -ENOTCONN. Returns 0 or -ENOTCONN.
 */
int pg_conn_ready(struct pg_conn *c, char *err, size_t errlen);

/*
 * How many times a call found the connection lost after it had sent something (its error was
 * -ENOTCONN "connection lost"; it may or may not have taken effect). A caller compares the
 * count before and after a command to know whether to check or repeat it. A connection that
 * the server closed between calls is replaced before the next call sends anything, and does
 * not count.
 */
uint64_t pg_conn_losses(const struct pg_conn *c);

/*
 * The libpq connection, for what the helpers here do not cover (COPY, pipelined statements,
 * tests). NULL before the first connection. Whoever uses it reports failures with
 * pg_conn_failed().
 */
PGconn *pg_conn_libpq(struct pg_conn *c);

/*
 * The errno of res, a failed result (NULL: libpq's own failure), from its SQLSTATE (PostgreSQL
 * manual, appendix A): see the top of this file.
 */
int pg_conn_errno(struct pg_conn *c, const PGresult *res);

/*
 * Reports res (may be NULL; it is not freed): writes "PostgreSQL: what: why" (what may be NULL)
 * to err and returns its errno. After a lost connection it counts a loss and reconnects at once,
 * so that the next call works; the failed call is not repeated, as PostgreSQL may have done it
 * before the connection broke. A result that did not fail (a query that returned something
 * else than expected) is -EIO.
 */
int pg_conn_failed(
	struct pg_conn *c, const PGresult *res, const char *what, char *err, size_t errlen);

/*
 * Runs sql with n text parameters (vals[i] NULL: SQL NULL) and returns its result, which the
 * caller PQclear()s; NULL with *rc and err set when it fails.
 */
PGresult *pg_conn_query(struct pg_conn *c, const char *sql, int n, const char *const *vals, int *rc,
	char *err, size_t errlen);

/*
 * pg_conn_query() with parameters of given lengths and formats (lens, fmts NULL: all text; a
 * format 1 parameter is binary, lens[i] bytes).
 */
PGresult *pg_conn_query_params(struct pg_conn *c, const char *sql, int n, const char *const *vals,
	const int *lens, const int *fmts, int *rc, char *err, size_t errlen);

/*
 * ids[0..n) as a PostgreSQL array literal, "{1,2,3}", for a $k::bigint[] text parameter, in a
 * malloc'd string (free it). Returns NULL when out of memory.
 */
char *pg_conn_bigint_array(const uint64_t *ids, size_t n);

/* Runs a statement whose result is not needed. Returns 0 or < 0 with err. */
int pg_conn_exec(struct pg_conn *c, const char *sql, int n, const char *const *vals, char *err,
	size_t errlen);

/*
 * Runs sql, whose answer is one row of one integer column, into *v. Returns 0 or < 0 with err
 * (-EIO when it answered no row).
 */
int pg_conn_query_u64(struct pg_conn *c, const char *sql, int n, const char *const *vals,
	uint64_t *v, char *err, size_t errlen);

/*
 * PostgreSQL's clock: now() (Unix ms), as the statements that compare with now() read it, into
 * *ms. Returns 0 or < 0 with err.
 */
int pg_conn_now_ms(struct pg_conn *c, uint64_t *ms, char *err, size_t errlen);

/*
 * Runs sql, a command or query, and returns how many rows it affected or returned (PQcmdTuples)
 * in *rows (may be NULL). Returns 0 or < 0 with err.
 */
int pg_conn_exec_rows(struct pg_conn *c, const char *sql, int n, const char *const *vals,
	uint64_t *rows, char *err, size_t errlen);

/*
 * BEGIN (begin_sql NULL) or begin_sql ("BEGIN READ ONLY"); then, when lock_sql is not NULL,
 * that statement (a transaction-scoped advisory lock), so that the work that follows runs alone
 * among the programs that take it. Returns 0 inside the transaction; on an error the
 * transaction is already ended.
 */
int pg_conn_begin(
	struct pg_conn *c, const char *begin_sql, const char *lock_sql, char *err, size_t errlen);

/* COMMIT. Returns 0 or < 0 with err; either way the transaction is over. */
int pg_conn_commit(struct pg_conn *c, char *err, size_t errlen);

/*
 * Ends a failed transaction (ROLLBACK); its own failure (e.g. a lost connection) changes
 * nothing. Without a transaction: nothing.
 */
void pg_conn_rollback(struct pg_conn *c);

/* Whether a transaction begun with pg_conn_begin() is open. */
bool pg_conn_in_tx(const struct pg_conn *c);

#endif
