/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * controlplane/pg_store and sql/ against a real PostgreSQL started for this test
 * (tests/lib/pg_server.h): migrations, event creation and its validation, the event state
 * machine, keys, rules, limits, the orders constraints, flashgate_pay(), and a restart of the
 * server under an open store.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pg/pg.h"
#include "tests/lib/pg_server.h"
#include "tests/tap.h"

#define FAR_START 2000000000000ull /* 2033-05-18 */
#define FAR_END	  2000003600000ull

static struct pg_server srv;
static char err[ADMIN_ERR_MAX];

static bool
has(const char *s, const char *sub)
{
	return strstr(s, sub) != NULL;
}

/* Runs test SQL (constants only); returns the SQLSTATE ("" on success) in a static buffer. */
static const char *
sql_state(struct pg_conn *s, const char *sql)
{
	static char st[8];
	PGresult *r = PQexec(pg_conn_libpq(s), sql);
	ExecStatusType es = PQresultStatus(r);

	st[0] = '\0';
	if (es != PGRES_COMMAND_OK && es != PGRES_TUPLES_OK) {
		const char *f = PQresultErrorField(r, PG_DIAG_SQLSTATE);

		snprintf(st, sizeof(st), "%s", f != NULL ? f : "?????");
	}
	PQclear(r);
	return st;
}

/* The first column of the first row of a query, as a number (-1 on error or no row). */
static long long
sql_num(struct pg_conn *s, const char *sql)
{
	PGresult *r = PQexec(pg_conn_libpq(s), sql);
	long long v = -1;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0)
		v = atoll(PQgetvalue(r, 0, 0));
	PQclear(r);
	return v;
}

static struct admin_event
good_event(uint32_t id)
{
	struct admin_event ev = {
		.id = id,
		.stock = 1000,
		.starts_at_ms = FAR_START,
		.ends_at_ms = FAR_END,
		.pay_window_s = 900,
		.per_user_limit = 1,
	};

	snprintf(ev.name, sizeof(ev.name), "Sale %" PRIu32, id);
	return ev;
}

static struct pg_conn *
open_db(const char *dbname)
{
	char ci[256];

	snprintf(ci, sizeof(ci), "host=%s port=%u dbname=%s user=postgres", srv.dir, srv.port,
		dbname);
	return pg_conn_open(ci, err, sizeof(err));
}

/* ---------------------------------------------------------------------------------------- */

static void
test_migrations(struct pg_conn *s)
{
	unsigned applied = 99;
	int version = -1, rc;
	char dir[] = "/tmp/fg-sql-XXXXXX", path[128];
	struct pg_conn *t2;
	FILE *f;

	tap_eq_int(pg_migrate_version(s, &version, err, sizeof(err)), 0, "schema version readable");
	tap_eq_int(version, 0, "a new database has schema version 0");
	tap_eq_int(pg_migrate(s, NULL, &applied, err, sizeof(err)), 0, "first migration run");
	tap_eq_int(applied, pg_n_migrations, "every embedded migration applied");
	tap_eq_int(pg_migrate(s, NULL, &applied, err, sizeof(err)), 0, "second migration run");
	tap_eq_int(applied, 0, "migrations are idempotent: the second run applies nothing");
	rc = pg_migrate_version(s, &version, err, sizeof(err));
	tap_ok(rc == 0 && version == pg_migrations[pg_n_migrations - 1].version,
		"schema version is the last migration's (rc %d, version %d)", rc, version);
	tap_eq_int(sql_num(s, "SELECT count(*) FROM schema_migrations"), pg_n_migrations,
		"one schema_migrations row per migration");
	tap_eq_int(pg_migrate(s, "sql", &applied, err, sizeof(err)), 0,
		"migrating from the sql/ folder works");
	tap_eq_int(applied, 0, "sql/ holds the embedded migrations: nothing new to apply");

	/* A failing migration is rolled back whole and stops the run. */
	tap_eq_int(strlen(sql_state(s, "CREATE DATABASE t_bad")), 0, "second database created");
	t2 = open_db("t_bad");
	tap_ok(t2 != NULL, "connected to the second database");
	if (t2 == NULL || mkdtemp(dir) == NULL)
		return;
	snprintf(path, sizeof(path), "%s/001_init.sql", dir);
	f = fopen(path, "w");
	fputs(pg_migrations[0].sql, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/002_bad.sql", dir);
	f = fopen(path, "w");
	fputs("CREATE TABLE half_done (x int);\nSELECT no_such_function();\n", f);
	fclose(f);
	tap_ok(pg_migrate(t2, dir, &applied, err, sizeof(err)) != 0, "a bad migration fails");
	tap_ok(has(err, "002_bad.sql") && has(err, "rolled back"),
		"its message names it and says it was rolled back: %s", err);
	tap_eq_int(applied, 1, "the good migration before it stays applied");
	tap_eq_int(sql_num(t2, "SELECT count(*) FROM pg_tables WHERE tablename = 'half_done'"), 0,
		"nothing of the bad migration remains");
	rc = pg_migrate_version(t2, &version, err, sizeof(err));
	tap_ok(rc == 0 && version == 1,
		"the schema version stays at the last good migration (rc %d, version %d)", rc,
		version);
	remove(path);
	snprintf(path, sizeof(path), "%s/001_init.sql", dir);
	remove(path);
	snprintf(path, sizeof(path), "%s/01_short.sql", dir);
	f = fopen(path, "w");
	fclose(f);
	tap_eq_int(pg_migrate(t2, dir, &applied, err, sizeof(err)), -EINVAL,
		"a file not named NNN_words.sql is refused");
	tap_ok(has(err, "01_short.sql"), "and named: %s", err);
	remove(path);
	rmdir(dir);
	pg_conn_close(t2);

	/* Control planes starting together: each migration is applied once. */
	tap_eq_int(strlen(sql_state(s, "CREATE DATABASE t_race")), 0, "third database created");
	{
		enum { N = 4 };
		pid_t kids[N];
		int total = 0, failed = 0;

		for (int i = 0; i < N; i++) {
			kids[i] = fork();
			if (kids[i] == 0) {
				struct pg_conn *c = open_db("t_race");
				unsigned a = 0;
				int mrc =
					c != NULL ? pg_migrate(c, NULL, &a, err, sizeof(err)) : -1;

				pg_conn_close(c);
				_exit(mrc == 0 ? (int)a : 100);
			}
		}
		for (int i = 0; i < N; i++) {
			int st = 0;

			waitpid(kids[i], &st, 0);
			if (!WIFEXITED(st) || WEXITSTATUS(st) == 100)
				failed++;
			else
				total += WEXITSTATUS(st);
		}
		tap_eq_int(failed, 0, "4 concurrent pg_migrate() all succeed");
		tap_eq_int(total, (long long)pg_n_migrations,
			"4 concurrent pg_migrate() apply each migration exactly once");
	}
}

static long long
n_events(struct pg_conn *s)
{
	return sql_num(s, "SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM stock)");
}

static void
test_event_create(struct pg_conn *s)
{
	struct admin_event ev, out;
	long long before = n_events(s);
	int rc;

	/* Every invalid field: refused with its message, nothing written. */
	struct {
		const char *what;
		struct admin_event ev;
		const char *want;
	} cases[24];
	int n = 0;

#define CASE(what_, field_, value_, want_)     \
	do {                                   \
		cases[n].what = what_;         \
		cases[n].ev = good_event(900); \
		cases[n].ev.field_ = value_;   \
		cases[n].want = want_;         \
		n++;                           \
	} while (0)
	CASE("id 0", id, 0, "event id must be 1..4294967295");
	CASE("stock above 1e8", stock, 100000001, "--stock must be 0..100000000");
	CASE("start == end", ends_at_ms, FAR_START, "must be after --starts-at");
	CASE("start after end", ends_at_ms, FAR_START - 1000, "must be after --starts-at");
	CASE("pay window 9 s", pay_window_s, 9, "--pay-window must be 10s..1d");
	CASE("pay window 1 d + 1 s", pay_window_s, 86401, "--pay-window must be 10s..1d");
	CASE("per-user limit 2", per_user_limit, 2, "--per-user-limit must be 1");
	CASE("per-user limit 0", per_user_limit, 0, "--per-user-limit must be 1");
	CASE("ends in the past", starts_at_ms, 946684800000ull, "");
	cases[n - 1].ev.ends_at_ms = 946688400000ull;
	cases[n - 1].want = "is in the past";
	CASE("a pre-queue without a draw", queue_opens_at_ms, FAR_START - 60000,
		"--queue-opens-at needs a draw");
	CASE("a pre-queue after the start", draw_window_s, 30, "must be at or before --starts-at");
	cases[n - 1].ev.queue_opens_at_ms = FAR_START + 1000;
	CASE("a draw at the end", draw_window_s, 3600, "the draw must happen inside the sale");
	cases[n - 1].ev.queue_opens_at_ms = FAR_START;
	CASE("a pre-queue in the past", draw_window_s, 30,
		"--queue-opens-at (2000-01-01T00:00:00Z) is in the past: the seed's commitment");
	cases[n - 1].ev.queue_opens_at_ms = 946684800000ull;
	CASE("31 bits", pow_bits, 31, "--pow-bits must be 0..30");
	CASE("an automatic maximum below", pow_bits, 12, "--pow-auto-max (8) must be at least");
	cases[n - 1].ev.pow_auto_max = 8;
#undef CASE
	for (int i = 0; i < n; i++) {
		err[0] = '\0';
		rc = pg_event_create(s, &cases[i].ev, NULL, err, sizeof(err));
		tap_ok(rc == -EINVAL && has(err, cases[i].want), "event create refuses %s: %s",
			cases[i].what, err);
	}
	{
		static const struct {
			const char *what, *name, *want;
		} names[] = {
			{"an empty name", "", "--name is empty"},
			{"a name with a newline", "Big\nsale", "--name has a control character"},
			{"a name that is not UTF-8", "Sale \xff", "--name is not valid UTF-8"},
			{"a 64-byte name",
				"0123456789012345678901234567890123456789012345678901234567890123",
				"at most 63"},
		};

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			ev = good_event(900);
			/* The struct holds 63 bytes and a NUL: overfill it to test the check. */
			memcpy(ev.name, names[i].name,
				strlen(names[i].name) < sizeof(ev.name) ? strlen(names[i].name) + 1
									: sizeof(ev.name));
			rc = pg_event_create(s, &ev, NULL, err, sizeof(err));
			tap_ok(rc == -EINVAL && has(err, names[i].want),
				"event create refuses %s: %s", names[i].what, err);
		}
	}
	tap_eq_int(n_events(s), before, "nothing was written by the refused creates");

	ev = good_event(7);
	snprintf(ev.name, sizeof(ev.name), "Launch sale: 1000 \"headphones\" 耳机");
	rc = pg_event_create(s, &ev, &out, err, sizeof(err));
	tap_eq_int(rc, 0, "a valid event is created");
	tap_ok(out.id == 7 && strcmp(out.name, ev.name) == 0 && out.stock == 1000 &&
			out.available == 1000 && out.starts_at_ms == FAR_START &&
			out.ends_at_ms == FAR_END && out.pay_window_s == 900 &&
			out.per_user_limit == 1 && out.state == ADMIN_EV_DRAFT &&
			out.created_at_ms != 0,
		"it reads back exactly, in state draft, with all its stock available");
	tap_ok(out.has_seed && !out.has_digest && out.draw_window_s == 0 &&
			out.queue_opens_at_ms == 0 && out.pow_bits == 0 && out.pow_auto_max == 0 &&
			out.draw_done_at_ms == 0,
		"it has a seed, no draw and no challenge");
	rc = pg_event_create(s, &ev, NULL, err, sizeof(err));
	tap_ok(rc == -EEXIST && has(err, "event 7 exists already"),
		"the same id again is refused: %s", err);
	{
		struct admin_event d = good_event(11), d2 = good_event(12), o2;

		d.queue_opens_at_ms = FAR_START - 600000;
		d.draw_window_s = 30;
		d.pow_bits = 12;
		d.pow_auto_max = 20;
		tap_eq_int(pg_event_create(s, &d, &out, err, sizeof(err)), 0,
			"an event with a pre-queue, a draw and a challenge is created");
		tap_ok(out.queue_opens_at_ms == d.queue_opens_at_ms && out.draw_window_s == 30 &&
				out.pow_bits == 12 && out.pow_auto_max == 20 && out.has_seed &&
				!out.has_digest && out.draw_entrants == 0 &&
				out.draw_done_at_ms == 0,
			"it reads back: pre-queue, window, difficulty, a seed, no entrants yet");
		tap_eq_int(sql_num(s, "SELECT octet_length(draw_seed) FROM events WHERE id = 11"),
			32, "its seed is 32 bytes in events.draw_seed");
		tap_eq_int(pg_event_create(s, &d2, &o2, err, sizeof(err)), 0, "another event");
		tap_ok(o2.has_seed && memcmp(o2.draw_seed, out.draw_seed, 32) != 0,
			"gets another seed (drawn at create, not derived)");
	}
	tap_eq_int(sql_num(s, "SELECT initial FROM stock WHERE event_id = 7"), 1000,
		"its stock row holds the initial stock");
	rc = pg_event_get(s, 8, &out, err, sizeof(err));
	tap_ok(rc == -ENOENT && has(err, "no event 8"), "an unknown event is -ENOENT: %s", err);
	ev = good_event(3);
	ev.stock = 0;
	tap_eq_int(pg_event_create(s, &ev, NULL, err, sizeof(err)), 0, "stock 0 is allowed");
	ev = good_event(4294967295u);
	ev.stock = ADMIN_STOCK_MAX;
	ev.pay_window_s = 86400;
	tap_eq_int(pg_event_create(s, &ev, NULL, err, sizeof(err)), 0,
		"the largest id, stock and pay window are allowed");
	{
		struct admin_event list[2];
		unsigned cnt = 0;

		tap_eq_int(pg_event_list(s, list, 2, &cnt, err, sizeof(err)), 0, "event list");
		tap_eq_int(cnt, 5, "event list counts every event");
		tap_ok(list[0].id == 3 && list[1].id == 7, "event list is ordered by id");
	}
}

/* Drives a new event to state `to` by allowed steps. */
static int
make_event_in(struct pg_conn *s, uint32_t id, enum admin_event_state st)
{
	struct admin_event ev = good_event(id);
	int rc = pg_event_create(s, &ev, NULL, err, sizeof(err));

	if (rc == 0 && st == ADMIN_EV_CLOSED)
		return pg_event_set_state(s, id, ADMIN_EV_CLOSED, NULL, err, sizeof(err));
	if (rc == 0 && st >= ADMIN_EV_PREHEATED)
		rc = pg_event_set_state(s, id, ADMIN_EV_PREHEATED, NULL, err, sizeof(err));
	if (rc == 0 && st >= ADMIN_EV_OPEN)
		rc = pg_event_set_state(s, id, ADMIN_EV_OPEN, NULL, err, sizeof(err));
	return rc;
}

static void
test_state_machine(struct pg_conn *s)
{
	static const struct {
		enum admin_event_state from, to;
		bool allowed;
		const char *why;
	} t[] = {
		{ADMIN_EV_DRAFT, ADMIN_EV_PREHEATED, true, NULL},
		{ADMIN_EV_DRAFT, ADMIN_EV_OPEN, false, "is a draft: preheat it first"},
		{ADMIN_EV_DRAFT, ADMIN_EV_CLOSED, true, NULL},
		{ADMIN_EV_PREHEATED, ADMIN_EV_PREHEATED, true, NULL},
		{ADMIN_EV_PREHEATED, ADMIN_EV_OPEN, true, NULL},
		{ADMIN_EV_PREHEATED, ADMIN_EV_CLOSED, true, NULL},
		{ADMIN_EV_OPEN, ADMIN_EV_PREHEATED, false, "is open: preheating would reset"},
		{ADMIN_EV_OPEN, ADMIN_EV_OPEN, false, "is already open"},
		{ADMIN_EV_OPEN, ADMIN_EV_CLOSED, true, NULL},
		{ADMIN_EV_CLOSED, ADMIN_EV_PREHEATED, false, "is closed: a closed event cannot"},
		{ADMIN_EV_CLOSED, ADMIN_EV_OPEN, false, "is closed, which is final"},
		{ADMIN_EV_CLOSED, ADMIN_EV_CLOSED, false, "is already closed"},
		{ADMIN_EV_OPEN, ADMIN_EV_DRAFT, false, "no command takes an event to state draft"},
	};
	struct admin_event out;
	int rc;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint32_t id = 100 + (uint32_t)i;
		const char *from = admin_event_state_name(t[i].from);
		const char *to = admin_event_state_name(t[i].to);

		rc = make_event_in(s, id, t[i].from);
		if (!tap_eq_int(rc, 0, "set-up: an event in the state before")) {
			tap_diag("%s", err);
			continue;
		}
		err[0] = '\0';
		rc = pg_event_set_state(s, id, t[i].to, &out, err, sizeof(err));
		if (t[i].allowed) {
			tap_ok(rc == 0 && out.state == t[i].to, "%s -> %s is allowed", from, to);
		} else {
			tap_ok(rc == -EPERM && has(err, t[i].why), "%s -> %s is refused: %s", from,
				to, err);
			memset(&out, 0, sizeof(out));
			rc = pg_event_get(s, id, &out, err, sizeof(err));
			tap_ok(rc == 0 && out.state == t[i].from,
				"and the state did not change (rc %d, %s)", rc,
				admin_event_state_name(out.state));
		}
	}
	rc = pg_event_set_state(s, 999, ADMIN_EV_OPEN, NULL, err, sizeof(err));
	tap_ok(rc == -ENOENT && has(err, "no event 999"), "a change of an unknown event: %s", err);

	/* A sale that has ended cannot be preheated. */
	make_event_in(s, 200, ADMIN_EV_DRAFT);
	tap_eq_int(strlen(sql_state(s, "UPDATE events SET starts_at = now() - interval '2 hours', "
				       "ends_at = now() - interval '1 hour' WHERE id = 200")),
		0, "set-up: event 200 ended an hour ago");
	rc = pg_event_set_state(s, 200, ADMIN_EV_PREHEATED, NULL, err, sizeof(err));
	tap_ok(rc == -EPERM && has(err, "ended at"), "preheating an ended event is refused: %s",
		err);
	tap_ok(pg_event_set_state(s, 200, ADMIN_EV_CLOSED, NULL, err, sizeof(err)) == 0,
		"an ended event can still be closed");
	tap_ok(strcmp(sql_state(s, "UPDATE events SET state = 'paused' WHERE id = 200"), "23514") ==
			0,
		"the schema refuses a state outside the four");
}

static bool
key_is(const struct admin_key *k, uint8_t kind, uint32_t kid, bool current)
{
	return k->kind == kind && k->kid == kid && k->current == current;
}

#define LIFE 300000ull /* ms a retired sale key's purchase tokens may still be valid */

/* The keys now, and the index of sale key kid in k (-1: not there; -2: no list). */
static int
key_index(struct pg_conn *s, struct admin_key *k, unsigned *n, uint32_t kid)
{
	if (pg_keys_list(s, LIFE, k, 8, n, err, sizeof(err)) != 0)
		return -2; /* no list: every caller's check fails */
	for (unsigned i = 0; i < *n && i < 8; i++)
		if (k[i].kind == WIRE_KEY_SALE && k[i].kid == kid)
			return (int)i;
	return -1;
}

static void
test_keys(struct pg_conn *s)
{
	struct admin_key k[8];
	uint8_t first_secret[ADMIN_SECRET_MAX];
	uint8_t auth1[16], auth2[20];
	unsigned n = 99, removed = 99;
	uint32_t kid = 0;
	int i, rc;

	memset(auth1, 0xa1, sizeof(auth1));
	memset(auth2, 0xb2, sizeof(auth2));
	tap_ok(pg_keys_list(s, LIFE, k, 8, &n, err, sizeof(err)) == 0 && n == 0,
		"a new database has no keys");
	tap_ok(pg_keys_rotate(s, LIFE, &kid, err, sizeof(err)) == 0 && kid == 1,
		"the first rotation makes sale key 1");
	rc = pg_keys_list(s, LIFE, k, 8, &n, err, sizeof(err));
	tap_ok(rc == 0 && n == 1 && key_is(&k[0], WIRE_KEY_SALE, 1, true) && k[0].len == 32 &&
			k[0].retire_at_ms == 0 && k[0].retired_at_ms == 0,
		"sale key 1 is current, 32 bytes, not retiring");
	memcpy(first_secret, k[0].secret, sizeof(first_secret));
	tap_ok(pg_keys_rotate(s, LIFE, &kid, err, sizeof(err)) == 0 && kid == 2,
		"rotation makes key 2");
	rc = pg_keys_list(s, LIFE, k, 8, &n, err, sizeof(err));
	tap_ok(rc == 0 && n == 2 && key_is(&k[0], WIRE_KEY_SALE, 1, false) &&
			key_is(&k[1], WIRE_KEY_SALE, 2, true),
		"key 2 is current, key 1 stays");
	tap_ok(k[0].retired_at_ms != 0 && k[0].retire_at_ms == k[0].retired_at_ms + LIFE &&
			!k[0].retired,
		"key 1 retires a token lifetime after it stopped being current (%" PRIu64
		" ms after)",
		k[0].retire_at_ms - k[0].retired_at_ms);
	tap_ok(memcmp(k[0].secret, first_secret, 32) == 0, "key 1 kept its secret");
	tap_ok(memcmp(k[1].secret, first_secret, 32) != 0, "key 2 has a new random secret");

	/* Three rotations within a token's lifetime: every key still verifies. */
	err[0] = '\0';
	tap_ok(pg_keys_rotate(s, LIFE, &kid, err, sizeof(err)) == 0 && kid == 3 &&
			pg_keys_rotate(s, LIFE, &kid, err, sizeof(err)) == 0 && kid == 4,
		"two more rotations make keys 3 and 4: %s", err);
	rc = pg_keys_list(s, LIFE, k, 8, &n, err, sizeof(err));
	tap_ok(rc == 0 && n == 4 && key_is(&k[0], WIRE_KEY_SALE, 1, false) &&
			key_is(&k[1], WIRE_KEY_SALE, 2, false) &&
			key_is(&k[2], WIRE_KEY_SALE, 3, false) &&
			key_is(&k[3], WIRE_KEY_SALE, 4, true) &&
			memcmp(k[0].secret, first_secret, 32) == 0 && !k[0].retired &&
			!k[1].retired && !k[2].retired,
		"three rotations within a token's lifetime keep keys 1, 2 and 3 retiring (key 1 "
		"with its secret) and 4 current");
	tap_ok(pg_keys_expire(s, LIFE, &removed, err, sizeof(err)) == 0 && removed == 0,
		"none of them is past its retirement: nothing removed");
	tap_ok(pg_keys_rotate(s, LIFE, &kid, err, sizeof(err)) == -ENOSPC &&
			has(err, "4 sale keys still verify") && has(err, "rotate after 20") &&
			has(err, "when key 1 retires"),
		"a fourth rotation is refused: a data plane holds 4 sale keys, and dropping key 1 "
		"would break its tokens: %s",
		err);
	rc = pg_keys_list(s, LIFE, k, 8, &n, err, sizeof(err));
	tap_ok(rc == 0 && n == 4 && key_is(&k[0], WIRE_KEY_SALE, 1, false) &&
			key_is(&k[3], WIRE_KEY_SALE, 4, true),
		"and nothing changed");

	/* Key 1 past its retirement: gone, and the rotation goes through. */
	tap_eq_int(strlen(sql_state(s, "UPDATE keys SET created_at = now() - interval '30 min', "
				       "retired_at = now() - interval '301 seconds' "
				       "WHERE kind = 'sale' AND kid = 1")),
		0, "key 1 stopped being current 301 s ago (token lifetime 300 s)");
	i = key_index(s, k, &n, 1);
	tap_ok(i >= 0 && k[i].retired && !key_is(&k[i], WIRE_KEY_SALE, 1, true),
		"keys list shows key 1 retired");
	err[0] = '\0';
	tap_ok(pg_keys_expire(s, LIFE, &removed, err, sizeof(err)) == 0 && removed == 1 &&
			key_index(s, k, &n, 1) == -1 && n == 3,
		"the cron's pg_keys_expire() removes key 1, and only it: %s", err);
	tap_ok(pg_keys_rotate(s, LIFE, &kid, err, sizeof(err)) == 0 && kid == 5,
		"then a rotation makes key 5: %s", err);

	/* Receipts: a key verifies until the sales it could have signed for are over. */
	tap_eq_int(strlen(sql_state(s, "INSERT INTO events (id, name, starts_at, ends_at, "
				       "pay_window_s, state) VALUES (900, 'receipts', now() - "
				       "interval '20 min', now() + interval '1 hour', 600, 'open'); "
				       "INSERT INTO events (id, name, starts_at, ends_at, "
				       "pay_window_s, state, updated_at) VALUES (901, 'closed early', "
				       "now() - interval '2 hours', now() + interval '10 hours', 600, "
				       "'closed', now() - interval '1 hour'); "
				       "UPDATE keys SET created_at = now() - interval '30 min', "
				       "retired_at = now() - interval '301 seconds' "
				       "WHERE kind = 'sale' AND kid = 2")),
		0, "key 2 stopped being current 301 s ago, during open sale 900 (ends in 1 h, pay "
		   "window 10 min); sale 901 was closed before key 2 became current");
	i = key_index(s, k, &n, 2);
	long long ends = sql_num(s, "SELECT floor(extract(epoch FROM ends_at) * 1000)::bigint "
				    "FROM events WHERE id = 900");
	tap_ok(i >= 0 && !k[i].retired && (long long)k[i].retire_at_ms == ends + 600000,
		"key 2 retires when sale 900's pay window after its end is over, not after the "
		"token lifetime (retires_at - ends_at = %lld ms)",
		i >= 0 ? (long long)k[i].retire_at_ms - ends : -1);
	tap_ok(pg_keys_expire(s, LIFE, &removed, err, sizeof(err)) == 0 && removed == 0 &&
			key_index(s, k, &n, 2) >= 0,
		"so the cron keeps it: receipts of sale 900 still poll");
	tap_eq_int(strlen(sql_state(s, "UPDATE events SET state = 'closed', updated_at = now() - "
				       "interval '11 min' WHERE id = 900")),
		0, "sale 900 closed early, 11 min ago");
	tap_ok(pg_keys_expire(s, LIFE, &removed, err, sizeof(err)) == 0 && removed == 1 &&
			key_index(s, k, &n, 2) == -1,
		"its pay window is over: key 2 is removed");
	tap_eq_int(strlen(sql_state(s, "DELETE FROM events WHERE id IN (900, 901); DELETE FROM "
				       "keys WHERE kind = 'sale' AND kid = 3")),
		0, "(the test's sales and key 3 go: 4 retiring and 5 current stay)");

	tap_eq_int(pg_keys_auth_set(s, 7, auth1, sizeof(auth1), err, sizeof(err)), 0,
		"auth key 7 set");
	rc = pg_keys_list(s, LIFE, k, 8, &n, err, sizeof(err));
	tap_ok(rc == 0 && n == 3 && key_is(&k[2], WIRE_KEY_AUTH, 7, true) && k[2].len == 16 &&
			memcmp(k[2].secret, auth1, 16) == 0,
		"auth key 7 is current with its exact secret (listed after the sale keys)");
	pg_keys_auth_set(s, 8, auth2, sizeof(auth2), err, sizeof(err));
	rc = pg_keys_list(s, LIFE, k, 8, &n, err, sizeof(err));
	tap_ok(rc == 0 && n == 4 && key_is(&k[2], WIRE_KEY_AUTH, 7, false) &&
			key_is(&k[3], WIRE_KEY_AUTH, 8, true) && k[3].len == 20,
		"auth key 8 is current, 7 stays as the previous one");
	pg_keys_auth_set(s, 9, auth1, sizeof(auth1), err, sizeof(err));
	rc = pg_keys_list(s, LIFE, k, 8, &n, err, sizeof(err));
	tap_ok(rc == 0 && n == 4 && key_is(&k[2], WIRE_KEY_AUTH, 8, false) &&
			key_is(&k[3], WIRE_KEY_AUTH, 9, true),
		"auth key 9: 8 previous, 7 gone");
	pg_keys_auth_set(s, 9, auth2, sizeof(auth2), err, sizeof(err));
	rc = pg_keys_list(s, LIFE, k, 8, &n, err, sizeof(err));
	tap_ok(rc == 0 && n == 4 && key_is(&k[2], WIRE_KEY_AUTH, 8, false) &&
			key_is(&k[3], WIRE_KEY_AUTH, 9, true) && k[3].len == 20 &&
			memcmp(k[3].secret, auth2, 20) == 0,
		"setting the current auth key again replaces its secret and keeps the previous");
	tap_ok(pg_keys_auth_set(s, 10, auth1, 15, err, sizeof(err)) == -EINVAL &&
			has(err, "16..64 bytes"),
		"a 15-byte auth key is refused: %s", err);
	rc = pg_keys_list(s, LIFE, k, 8, &n, err, sizeof(err));
	tap_ok(rc == 0 && n == 4 && key_is(&k[3], WIRE_KEY_AUTH, 9, true), "and nothing changed");
	tap_ok(strcmp(sql_state(
			      s, "UPDATE keys SET current = true, retired_at = NULL "
				 "WHERE kind = 'auth' AND kid = 8"),
		       "23505") == 0,
		"the schema allows one current key per kind");
	tap_ok(pg_keys_list(s, LIFE, k, 1, &n, err, sizeof(err)) == 0 && n == 4,
		"a short array still gets the total count");
}

struct rule_seen {
	char text[8][80];
	int n;
	int stop_after;
};

static int
collect_rule(const struct admin_rule *r, uint64_t created_at_ms, void *arg)
{
	struct rule_seen *seen = arg;
	char v[ADMIN_RULE_TEXT_MAX];

	if (created_at_ms == 0 || seen->n == 8)
		return -EIO;
	admin_rule_value(r, v, sizeof(v));
	snprintf(seen->text[seen->n++], sizeof(seen->text[0]), "%s %s",
		admin_rule_kind_name(r->kind), v);
	return seen->stop_after != 0 && seen->n == seen->stop_after ? 42 : 0;
}

static void
test_rules(struct pg_conn *s)
{
	static const char *const adds[][2] = {
		{"ip", "198.18.0.0/24"},
		{"ip", "198.18.1.7/32"},
		{"user", "42"},
		{"device", "abc-123"},
	};
	struct rule_seen seen = {0};
	struct admin_rule r;
	uint64_t n = 0;
	int rc;

	for (size_t i = 0; i < 4; i++) {
		admin_rule_parse(adds[i][0], adds[i][1], &r, err, sizeof(err));
		tap_eq_int(pg_rule_add(s, &r, err, sizeof(err)), 0, "rule added");
	}
	admin_rule_parse("ip", "198.18.0.0/24", &r, err, sizeof(err));
	rc = pg_rule_add(s, &r, err, sizeof(err));
	tap_ok(rc == -EEXIST && has(err, "rule ip 198.18.0.0/24 exists already"),
		"a duplicate rule is refused: %s", err);
	admin_rule_parse("ip", "198.18.1.7", &r, err, sizeof(err));
	rc = pg_rule_add(s, &r, err, sizeof(err));
	tap_ok(rc == -EEXIST, "ip a.b.c.d and a.b.c.d/32 are the same rule: %s", err);
	r = (struct admin_rule){.kind = ADMIN_RULE_IP, .ip = 0xc6120001, .prefix = 24};
	rc = pg_rule_add(s, &r, err, sizeof(err));
	tap_ok(rc == -EINVAL && has(err, "host bits set"), "an invalid rule is refused: %s", err);
	tap_ok(pg_rule_count(s, &n, err, sizeof(err)) == 0 && n == 4, "4 rules stored");
	tap_eq_int(pg_rule_foreach(s, collect_rule, &seen, err, sizeof(err)), 0, "rules listed");
	tap_ok(seen.n == 4 && strcmp(seen.text[0], "ip 198.18.0.0/24") == 0 &&
			strcmp(seen.text[1], "ip 198.18.1.7") == 0 &&
			strcmp(seen.text[2], "user 42") == 0 &&
			strcmp(seen.text[3], "device abc-123") == 0,
		"in the order added, in canonical form");
	admin_rule_parse("user", "42", &r, err, sizeof(err));
	tap_eq_int(pg_rule_del(s, &r, err, sizeof(err)), 0, "rule user 42 deleted");
	rc = pg_rule_del(s, &r, err, sizeof(err));
	tap_ok(rc == -ENOENT && has(err, "no rule user 42"), "deleting it again: %s", err);
	rc = pg_rule_count(s, &n, err, sizeof(err));
	tap_ok(rc == 0 && n == 3, "3 rules left (rc %d, %llu)", rc, (unsigned long long)n);
	memset(&seen, 0, sizeof(seen));
	seen.stop_after = 2;
	tap_eq_int(pg_rule_foreach(s, collect_rule, &seen, err, sizeof(err)), 42,
		"a callback that stops ends the walk with its value");
	tap_eq_int(seen.n, 2, "after that many rules");
	tap_ok(pg_rule_count(s, &n, err, sizeof(err)) == 0 && n == 3,
		"the connection is usable after a stopped walk");
	tap_ok(strcmp(sql_state(s, "INSERT INTO rules (kind, value) VALUES ('host', 'x')"),
		       "23514") == 0,
		"the schema refuses an unknown rule kind");

	/* IPv6 networks: canonical text, one network written two ways is one rule. */
	static const char *const v6[][2] = {
		{"2001:DB8::/32", "ip 2001:db8::/32"},
		{"2001:0db8:0:0:0:0:0:7/128", "ip 2001:db8::7"},
		{"::/0", "ip ::/0"},
	};
	for (size_t i = 0; i < 3; i++) {
		admin_rule_parse("ip", v6[i][0], &r, err, sizeof(err));
		tap_ok(r.kind == ADMIN_RULE_IP6 && pg_rule_add(s, &r, err, sizeof(err)) == 0,
			"IPv6 rule ip %s added: %s", v6[i][0], err);
	}
	admin_rule_parse("ip", "2001:db8:0::/32", &r, err, sizeof(err));
	rc = pg_rule_add(s, &r, err, sizeof(err));
	tap_ok(rc == -EEXIST && has(err, "rule ip 2001:db8::/32 exists already"),
		"the same IPv6 network written another way is a duplicate: %s", err);
	r = (struct admin_rule){
		.kind = ADMIN_RULE_IP6, .ip6 = {0x20, 1, 0xd, 0xb8, [15] = 1}, .prefix = 32};
	rc = pg_rule_add(s, &r, err, sizeof(err));
	tap_ok(rc == -EINVAL && has(err, "host bits set: the network is 2001:db8::/32"),
		"an IPv6 network with host bits is refused before PostgreSQL: %s", err);
	memset(&seen, 0, sizeof(seen));
	tap_eq_int(pg_rule_foreach(s, collect_rule, &seen, err, sizeof(err)), 0,
		"rules listed with the IPv6 ones");
	tap_ok(seen.n == 6 && strcmp(seen.text[3], v6[0][1]) == 0 &&
			strcmp(seen.text[4], v6[1][1]) == 0 && strcmp(seen.text[5], v6[2][1]) == 0,
		"  read back as ip 2001:db8::/32, ip 2001:db8::7, ip ::/0");
	tap_eq_int(sql_num(s, "SELECT count(*) FROM rules WHERE kind = 'ip' AND value IN "
			      "('2001:db8::/32', '2001:db8::7', '::/0')"),
		3, "  stored in that text");
	/* sql/011: what no control plane could load is refused by the schema too. */
	tap_ok(sql_state(s, "INSERT INTO rules (kind, value) VALUES ('ip', '2001:db8::1/32')")[0] !=
			'\0',
		"the schema refuses an IPv6 'ip' value with host bits set (%s)",
		sql_state(s, "INSERT INTO rules (kind, value) VALUES ('ip', '2001:db8::1/32')"));
	tap_ok(sql_state(s, "INSERT INTO rules (kind, value) VALUES ('ip', 'not-an-address')")[0] !=
			'\0',
		"and an 'ip' value that is no address");
	tap_ok(sql_num(s, "SELECT count(*) FROM rules") == 6, "  nothing was stored by them");
	for (size_t i = 0; i < 3; i++) {
		admin_rule_parse("ip", v6[i][0], &r, err, sizeof(err));
		tap_eq_int(pg_rule_del(s, &r, err, sizeof(err)), 0, "IPv6 rule deleted");
	}
}

static void
test_limits(struct pg_conn *s)
{
	struct wire_limits l, in = {0};
	int rc;

	tap_eq_int(pg_limits_get(s, &l, err, sizeof(err)), 0, "limits read");
	tap_ok(l.ip_rate == 20 && l.ip_burst == 40 && l.user_rate == 2 && l.user_burst == 5 &&
			l.device_rate == 2 && l.device_burst == 5 && l.event_forward_per_s == 20000,
		"the defaults of docs/limits.md");
	in.ip_rate = 100;
	in.ip_burst = 200;
	in.user_rate = 77; /* not given: must not be applied */
	tap_eq_int(pg_limits_set(s, &in, ADMIN_LIMIT_IP, &l, err, sizeof(err)), 0, "set ip only");
	tap_ok(l.ip_rate == 100 && l.ip_burst == 200 && l.user_rate == 2 && l.user_burst == 5 &&
			l.device_rate == 2 && l.event_forward_per_s == 20000,
		"only ip changed");
	in = (struct wire_limits){.user_rate = 1,
		.user_burst = 1,
		.device_rate = 0,
		.device_burst = 0,
		.event_forward_per_s = 0};
	memset(&l, 0, sizeof(l));
	rc = pg_limits_set(s, &in, ADMIN_LIMIT_USER | ADMIN_LIMIT_DEVICE | ADMIN_LIMIT_FORWARD, &l,
		err, sizeof(err));
	tap_ok(rc == 0 && l.ip_rate == 100 && l.user_rate == 1 && l.user_burst == 1 &&
			l.device_rate == 0 && l.device_burst == 0 && l.event_forward_per_s == 0,
		"user, device and forward set together, zeros included");
	in.ip_burst = 5000;
	rc = pg_limits_set(s, &in, ADMIN_LIMIT_IP, NULL, err, sizeof(err));
	tap_ok(rc == -EINVAL && has(err, "burst 0..4194"), "a burst of 5000 is refused: %s", err);
	memset(&l, 0, sizeof(l));
	rc = pg_limits_get(s, &l, err, sizeof(err));
	tap_ok(rc == 0 && l.ip_rate == 100 && l.ip_burst == 200, "and nothing changed");
	tap_ok(strcmp(sql_state(s, "INSERT INTO limits (ip_rate, ip_burst, user_rate, user_burst, "
				   "device_rate, device_burst, forward_per_s) VALUES "
				   "(1, 1, 1, 1, 1, 1, 1)"),
		       "23505") == 0,
		"the limits table holds one row");
}

/* One check: pg_orders_call(fn, order_id) returns 0 and answers want. Its answer starts empty
 * each time, so a failed call never shows the previous call's. */
static void
check_order_call(
	struct pg_conn *s, const char *fn, uint64_t order_id, const char *want, const char *name)
{
	char result[32] = "", perr[256] = "";
	int rc = pg_orders_call(s, fn, order_id, result, sizeof(result), perr, sizeof(perr));

	tap_ok(rc == 0 && strcmp(result, want) == 0, "%s: %s (rc %d, got '%s'%s%s)", name, want, rc,
		result, perr[0] != '\0' ? ": " : "", perr);
}

#define check_pay(s, id, want, name)    check_order_call(s, "flashgate_pay", id, want, name)
#define check_cancel(s, id, want, name) check_order_call(s, "flashgate_cancel", id, want, name)

static void
test_orders(struct pg_conn *s)
{
	struct pg_event_counts c;
	char result[32];
	int rc;

	/* Event 7 exists (test_event_create). */
	tap_eq_int(strlen(sql_state(s, "INSERT INTO orders (id, event_id, user_id, reservation_id, "
				       "pay_deadline) VALUES (1, 7, 1, 1001, now() + interval "
				       "'15 minutes')")),
		0, "an order is inserted");
	tap_ok(strcmp(sql_state(s, "INSERT INTO orders (event_id, user_id, reservation_id, "
				   "pay_deadline) VALUES (7, 1, 1002, now())"),
		       "23505") == 0,
		"a second order of the same user for the same event conflicts");
	/* sql/006: a reservation id is not unique across buyers (data planes sharing a dp id). */
	tap_ok(strlen(sql_state(s, "INSERT INTO orders (event_id, user_id, reservation_id, "
				   "pay_deadline) VALUES (7, 2, 1001, now())")) == 0 &&
		       strlen(sql_state(s, "DELETE FROM orders WHERE event_id = 7 AND user_id = 2 "
					   "AND reservation_id = 1001")) == 0,
		"another buyer's order with the same reservation id is kept (and removed again)");
	tap_eq_int(sql_num(s, "WITH i AS (INSERT INTO orders (event_id, user_id, reservation_id, "
			      "pay_deadline) VALUES (7, 1, 1001, now()) ON CONFLICT DO NOTHING "
			      "RETURNING 1) SELECT count(*) FROM i"),
		0, "a redelivered order inserts nothing with ON CONFLICT DO NOTHING");
	tap_eq_int(strlen(sql_state(s, "INSERT INTO orders (event_id, user_id, reservation_id, "
				       "pay_deadline) VALUES (3, 1, 3001, now())")),
		0, "the same user may order in another event");
	tap_ok(strcmp(sql_state(s, "INSERT INTO orders (event_id, user_id, reservation_id, "
				   "pay_deadline, status) VALUES (7, 5, 5001, now(), 'shipped')"),
		       "23514") == 0,
		"an unknown order status is refused");
	tap_ok(strcmp(sql_state(s, "UPDATE stock SET available = -1 WHERE event_id = 7"),
		       "23514") == 0,
		"stock never goes below 0");
	tap_ok(strcmp(sql_state(s, "UPDATE stock SET available = initial + 1 WHERE event_id = 7"),
		       "23514") == 0,
		"stock never goes above the initial stock");

	/* flashgate_pay */
	tap_eq_int(strlen(sql_state(s, "INSERT INTO orders (id, event_id, user_id, reservation_id, "
				       "status, pay_deadline) VALUES "
				       "(12, 7, 2, 1003, 'expired', now() - interval '1 minute'), "
				       "(13, 7, 3, 1004, 'pending', now() - interval '1 second'), "
				       "(14, 7, 4, 1005, 'cancelled', now() + interval '1 hour')")),
		0, "expired, late and cancelled orders inserted");
	check_pay(s, 1, "paid", "a pending order in time is paid");
	tap_eq_int(sql_num(s, "SELECT count(*) FROM orders WHERE id = 1 AND status = 'paid' AND "
			      "paid_at IS NOT NULL"),
		1, "it is 'paid' with paid_at set");
	check_pay(s, 1, "already_paid", "paying it again");
	check_pay(s, 12, "expired_refund_needed", "an expired order: refund");
	check_pay(s, 13, "expired_refund_needed", "a pending order past its deadline: refund");
	tap_eq_int(sql_num(s, "SELECT count(*) FROM orders WHERE id = 13 AND status = 'pending'"),
		1, "and it stays pending for the expiry sweeper");
	check_pay(s, 14, "expired_refund_needed", "a cancelled order: refund");
	check_pay(s, 424242, "no_such_order", "an unknown order");
	tap_eq_int(pg_orders_call(s, "flashgate_pay", 0, result, sizeof(result), err, sizeof(err)),
		-EINVAL, "order id 0 is refused before asking PostgreSQL");
	tap_eq_int(pg_orders_call(s, "pg_sleep", 1, result, sizeof(result), err, sizeof(err)),
		-EINVAL, "only flashgate_pay and flashgate_cancel are called");

	tap_eq_int(strlen(sql_state(s, "INSERT INTO stock_releases (event_id, order_id, "
				       "reservation_id, user_id) VALUES (7, 12, 1003, 2)")),
		0, "a stock release is recorded");
	tap_ok(strcmp(sql_state(s, "INSERT INTO stock_releases (event_id, order_id, "
				   "reservation_id, user_id) VALUES (7, 12, 1003, 2)"),
		       "23505") == 0,
		"an order's stock is released at most once");
	sql_state(s, "UPDATE stock SET available = 996 WHERE event_id = 7");
	rc = pg_event_counts(s, 7, &c, err, sizeof(err));
	tap_ok(rc == 0 && c.initial == 1000 && c.available == 996 && c.pending == 1 &&
			c.paid == 1 && c.expired == 1 && c.cancelled == 1 &&
			c.releases_pending == 1,
		"event counts: stock 1000/996, 1 pending, 1 paid, 1 expired, 1 cancelled, 1 "
		"release to apply");
	rc = pg_event_counts(s, 3, &c, err, sizeof(err));
	tap_ok(rc == 0 && c.initial == 0 && c.pending == 1 && c.paid == 0,
		"event counts of another event count only its orders");
	rc = pg_event_counts(s, 12345, &c, err, sizeof(err));
	tap_eq_int(rc, -ENOENT, "counts of an unknown event: -ENOENT");

	/* flashgate_cancel: order 13 (pending), 1 (paid), 12 (expired), 14 (cancelled). */
	long long avail = sql_num(s, "SELECT available FROM stock WHERE event_id = 7");

	check_cancel(s, 13, "cancelled", "a pending order is cancelled");
	tap_eq_int(sql_num(s, "SELECT count(*) FROM orders WHERE id = 13 AND status = "
			      "'cancelled'"),
		1, "  it is 'cancelled'");
	tap_eq_int(sql_num(s, "SELECT count(*) FROM stock_releases WHERE order_id = 13 AND "
			      "applied_at IS NULL AND reservation_id = 1004 AND user_id = 3"),
		1, "  with a stock release for Redis");
	tap_eq_int(sql_num(s, "SELECT available FROM stock WHERE event_id = 7"), avail + 1,
		"  and its item back in PostgreSQL's stock");
	check_cancel(s, 13, "already_cancelled", "cancelling it again");
	check_cancel(s, 1, "paid", "a paid order is not cancelled");
	check_cancel(s, 12, "expired", "an expired order is not cancelled");
	check_cancel(s, 424242, "no_such_order", "an unknown order");
	tap_eq_int(sql_num(s, "SELECT count(*) FROM stock_releases WHERE order_id IN (1, 12)"), 1,
		"  none of them wrote a release (order 12's is the one above)");
	tap_eq_int(sql_num(s, "SELECT count(*) FROM result_changes WHERE order_id = 1"), 1,
		"paying wrote the order's result change (for the order writer) once");
}

/*
 * A connection lost inside a transaction is not replaced under it: the statements after the
 * loss would run on the new connection outside any transaction, and COMMIT would commit
 * nothing, silently. The call fails with -ENOTCONN, nothing of the transaction stays, and the
 * next call works.
 */
static void
test_lost_in_tx(struct pg_conn *s)
{
	struct pg_conn *killer = pg_conn_open(srv.conninfo, err, sizeof(err));
	char pid[16];
	const char *vals[1] = {pid};
	int rc;

	err[0] = '\0';
	if (!tap_ok(killer != NULL, "a second connection: %s", killer != NULL ? "" : err))
		return;
	pg_conn_exec(s, "CREATE TABLE lost_tx (v int)", 0, NULL, err, sizeof(err));
	snprintf(pid, sizeof(pid), "%d", PQbackendPID(pg_conn_libpq(s)));
	rc = pg_conn_begin(s, NULL, NULL, err, sizeof(err));
	if (rc == 0)
		rc = pg_conn_exec(s, "INSERT INTO lost_tx VALUES (1)", 0, NULL, err, sizeof(err));
	tap_ok(rc == 0 && pg_conn_in_tx(s), "a transaction begun, a row inserted: %s", err);
	tap_eq_int(pg_conn_query_u64(killer, "SELECT pg_terminate_backend($1::int)::int", 1, vals,
			   &(uint64_t){0}, err, sizeof(err)),
		0, "  its connection terminated from another");
	usleep(300 * 1000);
	rc = pg_conn_exec(s, "INSERT INTO lost_tx VALUES (2)", 0, NULL, err, sizeof(err));
	tap_ok(rc == -ENOTCONN && !pg_conn_in_tx(s),
		"the next statement of the transaction fails with -ENOTCONN: %s", err);
	pg_conn_rollback(s);
	tap_eq_int(sql_num(s, "SELECT count(*) FROM lost_tx"), 0,
		"  nothing of the transaction stayed, and the next call works");
	pg_conn_close(killer);
}

static void
test_restart(struct pg_conn *s)
{
	struct admin_event ev;
	int rc;

	tap_eq_int(pg_server_restart(&srv), 0, "PostgreSQL restarted under an open store");
	/* The first call may learn of the restart by failing; it must say so and reconnect. */
	rc = pg_event_get(s, 7, &ev, err, sizeof(err));
	tap_ok(rc == 0 || (rc == -ENOTCONN && has(err, "reconnected; try again")),
		"the first call after the restart works or asks to try again: %s",
		rc == 0 ? "it worked" : err);
	rc = pg_event_get(s, 7, &ev, err, sizeof(err));
	tap_ok(rc == 0 && ev.id == 7, "the next call works: the store reconnected by itself");
	pg_server_kill(&srv, SIGQUIT);
	rc = pg_event_get(s, 7, &ev, err, sizeof(err));
	if (rc != -ENOTCONN)
		rc = pg_event_get(s, 7, &ev, err, sizeof(err));
	tap_ok(rc == -ENOTCONN && has(err, "PostgreSQL"),
		"with PostgreSQL down, calls fail with -ENOTCONN: %s", err);
	{
		struct pg_conn *none = pg_conn_open(
			"host=127.0.0.1 port=1 dbname=x connect_timeout=2", err, sizeof(err));

		tap_ok(none == NULL && has(err, "cannot connect to PostgreSQL"),
			"pg_conn_open of an unreachable server: %s", err);
	}
}

/* A password in the conninfo (ps and the config file would show it) is refused, even by a
 * server that would let it in; passfile= is the way (docs/install.md). */
static void
test_no_password(void)
{
	char ci[PG_CONN_INFO_MAX];
	struct pg_conn *c;

	snprintf(ci, sizeof(ci), "%s password=secret", srv.conninfo);
	c = pg_conn_open(ci, err, sizeof(err));
	tap_ok(c == NULL && has(err, "holds a password") && has(err, "passfile"),
		"a conninfo with password= is refused, the passfile named: %s", c ? "it connected" : err);
	pg_conn_close(c);
	c = pg_conn_open("postgresql://fg:secret@127.0.0.1:1/x", err, sizeof(err));
	tap_ok(c == NULL && has(err, "holds a password"), "and a URI with user:password@: %s",
		c ? "it connected" : err);
	pg_conn_close(c);
	snprintf(ci, sizeof(ci), "%s passfile=/nonexistent", srv.conninfo);
	c = pg_conn_open(ci, err, sizeof(err));
	tap_ok(c != NULL, "a conninfo with passfile= connects: %s", c ? "connected" : err);
	pg_conn_close(c);
}

/* The session's application_name, or "?". */
static const char *
app_name(struct pg_conn *c, char *buf, size_t len)
{
	int rc;
	PGresult *res = pg_conn_query(c, "SELECT current_setting('application_name')", 0, NULL, &rc,
		err, sizeof(err));

	snprintf(buf, len, "%s", res != NULL && PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : "?");
	PQclear(res);
	return buf;
}

/*
 * A named connection's sessions carry its name (pg_stat_activity's application_name), also
 * after a reconnection; an application_name in the conninfo wins over it (docs/operations.md
 * "PostgreSQL sessions").
 */
static void
test_named(void)
{
	char ci[PG_CONN_INFO_MAX], name[256];
	struct pg_conn *c = pg_conn_open_named(srv.conninfo, "flashgate-test job", err,
		sizeof(err));
	struct pg_conn *killer = pg_conn_open(srv.conninfo, err, sizeof(err));
	char pid[16];
	const char *vals[1] = {pid};

	if (!tap_ok(c != NULL && killer != NULL, "a named connection: %s", c ? "" : err))
		goto out;
	app_name(c, name, sizeof(name));
	tap_ok(strcmp(name, "flashgate-test job") == 0, "its session is named for its job: %s",
		name);
	int pid0 = PQbackendPID(pg_conn_libpq(c));
	uint64_t ended = 0;

	snprintf(pid, sizeof(pid), "%d", pid0);
	pg_conn_query_u64(killer, "SELECT pg_terminate_backend($1::int)::int", 1, vals, &ended,
		err, sizeof(err));
	usleep(300 * 1000);
	app_name(c, name, sizeof(name));
	/* A new backend proves the reconnection happened (PQreset, its options kept). */
	tap_ok(ended == 1 && PQbackendPID(pg_conn_libpq(c)) != pid0 &&
			strcmp(name, "flashgate-test job") == 0,
		"  and the session it reconnects with after being ended too: %s (ended %" PRIu64
		", backend %d, was %d)",
		name, ended, PQbackendPID(pg_conn_libpq(c)), pid0);
	pg_conn_close(c);
	snprintf(ci, sizeof(ci), "%s application_name=shop-db-1", srv.conninfo);
	c = pg_conn_open_named(ci, "flashgate-test job", err, sizeof(err));
	snprintf(name, sizeof(name), "%s", err);
	if (c != NULL)
		app_name(c, name, sizeof(name));
	tap_ok(strcmp(name, "shop-db-1") == 0, "an application_name set in the conninfo wins: %s",
		name);
	/* A URI conninfo is expanded as a key=value one is: named, and its own name wins. */
	const char *uri[][2] = {
		{"", "flashgate-test job"},
		{"&application_name=shop-db-2", "shop-db-2"},
	};

	for (size_t i = 0; i < sizeof(uri) / sizeof(uri[0]); i++) {
		pg_conn_close(c);
		snprintf(ci, sizeof(ci), "postgresql://postgres@/flashgate?host=%s&port=%u%s",
			srv.dir, srv.port, uri[i][0]);
		c = pg_conn_open_named(ci, "flashgate-test job", err, sizeof(err));
		snprintf(name, sizeof(name), "%s", err);
		if (c != NULL)
			app_name(c, name, sizeof(name));
		tap_ok(strcmp(name, uri[i][1]) == 0, "a URI conninfo%s: the session is %s (%s)",
			uri[i][0], uri[i][1], name);
	}
	/* PGAPPNAME names every session alike (docs/operations.md): it wins too. */
	pg_conn_close(c);
	setenv("PGAPPNAME", "shop-env", 1);
	c = pg_conn_open_named(srv.conninfo, "flashgate-test job", err, sizeof(err));
	unsetenv("PGAPPNAME");
	snprintf(name, sizeof(name), "%s", err);
	if (c != NULL)
		app_name(c, name, sizeof(name));
	tap_ok(strcmp(name, "shop-env") == 0, "PGAPPNAME wins over the job's name: %s", name);
out:
	pg_conn_close(c);
	pg_conn_close(killer);
}

int
main(void)
{
	struct pg_conn *s;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!tap_ok(pg_server_start(&srv, false) == 0, "PostgreSQL started")) {
		tap_diag("is the Debian package postgresql installed?");
		return tap_done();
	}
	tap_diag("PostgreSQL in %s, port %u", srv.dir, srv.port);
	s = pg_conn_open(srv.conninfo, err, sizeof(err));
	if (!tap_ok(s != NULL, "pg_conn_open: %s", s != NULL ? "connected" : err))
		return tap_done();
	test_no_password();
	test_named();
	test_migrations(s);
	test_event_create(s);
	test_state_machine(s);
	test_keys(s);
	test_rules(s);
	test_limits(s);
	test_orders(s);
	test_lost_in_tx(s);
	test_restart(s);
	pg_conn_close(s);
	pg_server_stop(&srv);
	return tap_done();
}
