/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pg/pg_conn's failover with libpq's own host list (docs/ha.md, "PostgreSQL"): a conninfo that
 * lists two servers with target_session_attrs=read-write connects to the one that can write,
 * and a connection to a host that stopped being writable (set read-only to hand over, or gone)
 * is not carried on: the failed call is -ENOTCONN and the next one runs on the other host.
 * Two real servers (tests/lib/pg_server.h); the primary's read-only switch stands for a
 * demotion (the streaming standby and its promotion are tests/integration/test_pg_ha.sh's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg.h"
#include "tests/lib/pg_server.h"
#include "tests/tap.h"

static struct pg_server a, b;
static char err[512];

/* The port of the server c is connected to (0 on error). */
static unsigned
port_of(struct pg_conn *c)
{
	uint64_t v = 0;

	if (pg_conn_query_u64(
		    c, "SELECT current_setting('port')::int", 0, NULL, &v, err, sizeof(err)) != 0)
		return 0;
	return (unsigned)v;
}

/* Runs sql on server s as the superuser, over its socket. Returns whether it succeeded. */
static bool
admin(const struct pg_server *s, const char *sql)
{
	struct pg_conn *c = pg_conn_open(s->conninfo, err, sizeof(err));
	int rc = c != NULL ? pg_conn_exec(c, sql, 0, NULL, err, sizeof(err)) : -1;

	pg_conn_close(c);
	return rc == 0;
}

/* The read-only switch on s, and a wait until a new session of s sees it (the reload). */
static bool
set_read_only(const struct pg_server *s, bool on)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "ALTER SYSTEM SET default_transaction_read_only = %s",
		on ? "on" : "off");
	if (!admin(s, sql) || !admin(s, "SELECT pg_reload_conf()"))
		return false;
	for (int i = 0; i < 100; i++) {
		struct pg_conn *c = pg_conn_open(s->conninfo, err, sizeof(err));
		PGresult *r =
			c != NULL ? PQexec(pg_conn_libpq(c), "SHOW transaction_read_only") : NULL;
		bool seen = r != NULL && PQntuples(r) == 1 &&
			    strcmp(PQgetvalue(r, 0, 0), on ? "on" : "off") == 0;

		PQclear(r);
		pg_conn_close(c);
		if (seen)
			return true;
		child_sleep_ms(50);
	}
	return false;
}

static void
test_failover(void)
{
	char ci[PG_CONN_INFO_MAX];
	struct pg_conn *c;
	uint64_t losses;
	int rc;

	snprintf(ci, sizeof(ci),
		"host=127.0.0.1,127.0.0.1 port=%u,%u dbname=flashgate user=postgres "
		"target_session_attrs=read-write connect_timeout=5",
		a.port, b.port);
	tap_ok(admin(&a, "CREATE TABLE t (v int)") && admin(&b, "CREATE TABLE t (v int)"),
		"a table on each server");
	c = pg_conn_open(ci, err, sizeof(err));
	if (!tap_ok(c != NULL, "connected with both hosts listed: %s", c != NULL ? "yes" : err))
		return;
	tap_eq_int(port_of(c), a.port, "on the first host, which can write");
	tap_ok(pg_conn_exec(c, "INSERT INTO t VALUES (1)", 0, NULL, err, sizeof(err)) == 0,
		"a write on it");

	/* The first host is made read-only under the open session: it stands for a primary
	 * being demoted. The session must not go on writing nowhere. */
	tap_ok(set_read_only(&a, true), "the first host made read-only (ALTER SYSTEM, reload)");
	losses = pg_conn_losses(c);
	rc = pg_conn_exec(c, "INSERT INTO t VALUES (2)", 0, NULL, err, sizeof(err));
	tap_ok(rc == -ENOTCONN, "the write refused as read-only is a lost connection: %d %s", rc,
		err);
	tap_eq_int((long long)(pg_conn_losses(c) - losses), 1, "counted as a loss");
	rc = pg_conn_exec(c, "INSERT INTO t VALUES (2)", 0, NULL, err, sizeof(err));
	tap_ok(rc == 0, "the write tried again succeeds: %s", rc == 0 ? "" : err);
	tap_eq_int(port_of(c), b.port, "on the second host (libpq skipped the read-only one)");

	/* A read-only session seen between calls is replaced before anything is sent. */
	tap_ok(set_read_only(&a, false), "the first host writable again");
	tap_ok(set_read_only(&b, true), "the second host made read-only");
	tap_ok(pg_conn_exec(c, "SELECT 1", 0, NULL, err, sizeof(err)) == 0,
		"a read on the second host reports it read-only");
	losses = pg_conn_losses(c);
	rc = pg_conn_exec(c, "INSERT INTO t VALUES (3)", 0, NULL, err, sizeof(err));
	tap_ok(rc == 0, "the next write succeeds without a failed call: %s", rc == 0 ? "" : err);
	tap_eq_int((long long)(pg_conn_losses(c) - losses), 0, "nothing lost under a call");
	tap_eq_int(port_of(c), a.port, "back on the first host");

	/* The host it is on dies: the next call connects to the other. */
	tap_ok(set_read_only(&b, false), "the second host writable again");
	pg_server_kill(&a, SIGKILL);
	pg_conn_exec(c, "INSERT INTO t VALUES (4)", 0, NULL, err, sizeof(err));
	rc = pg_conn_exec(c, "INSERT INTO t VALUES (4)", 0, NULL, err, sizeof(err));
	tap_ok(rc == 0,
		"with the first host killed, a write succeeds at the latest on the second "
		"try: %s",
		rc == 0 ? "" : err);
	tap_eq_int(port_of(c), b.port, "on the second host");
	pg_conn_close(c);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!tap_ok(pg_server_start(&a, false) == 0 && pg_server_start(&b, false) == 0,
		    "two PostgreSQL servers started")) {
		tap_diag("is the Debian package postgresql installed?");
		return tap_done();
	}
	tap_diag("PostgreSQL on ports %u and %u", a.port, b.port);
	test_failover();
	pg_server_stop(&a);
	pg_server_stop(&b);
	return tap_done();
}
