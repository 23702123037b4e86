/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/pg_store.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "common/draw.h"
#include "common/hex.h"
#include "common/parse.h"
#include "common/token.h"

/* Advisory lock keys ("fg" in the high bytes): migrations, and key rotation. */
#define PG_LOCK_MIGRATE	      "1718026241"
#define PG_LOCK_KEYS	      "1718026242"
#define PG_SALE_KEY_LEN	      32
#define PG_SALE_KEYS_MAX      TOK_KEYS_MAX /* what a data plane's sale key ring holds */
#define PG_MIGRATION_FILE_MAX (1 << 20)

/* timestamptz <-> Unix ms, exact in both directions (no floating point). */
#define MS(col)	  "floor(extract(epoch FROM " col ") * 1000)::bigint"
#define TS(param) "(timestamptz 'epoch' + " param "::bigint * interval '1 millisecond')"

/* The columns that event_from_row() reads, in its order. */
/* clang-format off */
#define EVENT_COLUMNS                                                                        \
	"e.id, e.name, " MS("e.starts_at") ", " MS("e.ends_at") ", e.pay_window_s, "          \
	"e.per_user_limit, e.state, " MS("e.created_at") ", s.initial, s.available, "         \
	"coalesce(" MS("e.queue_opens_at") ", 0), e.draw_window_s, e.pow_bits, "              \
	"e.pow_auto_max, encode(e.draw_seed, 'hex'), encode(e.draw_digest, 'hex'), "          \
	"coalesce(e.draw_entrants, 0), coalesce(" MS("e.draw_done_at") ", 0)"
#define EVENT_NCOLUMNS 18
/* clang-format on */

struct pg_store {
	PGconn *conn;
	uint64_t losses; /* connections lost under a call (pg_losses()) */
};

/* Notices ("relation already exists, skipping") are not for the operator's terminal. */
static void
pg_notice_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* The first line of a libpq message, without its newline. */
static void
first_line(char *err, size_t errlen, const char *prefix, const char *msg)
{
	size_t n = strcspn(msg, "\n");

	snprintf(err, errlen, "%s%.*s", prefix, (int)n, msg);
}

struct pg_store *
pg_open(const char *conninfo, char *err, size_t errlen)
{
	struct pg_store *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->conn = PQconnectdb(conninfo);
	if (s->conn == NULL) {
		snprintf(err, errlen, "PostgreSQL: out of memory");
		goto fail;
	}
	if (PQstatus(s->conn) != CONNECTION_OK) {
		first_line(err, errlen, "cannot connect to PostgreSQL: ", PQerrorMessage(s->conn));
		goto fail;
	}
	PQsetNoticeProcessor(s->conn, pg_notice_quiet, NULL);
	return s;
fail:
	pg_close(s);
	return NULL;
}

void
pg_close(struct pg_store *s)
{
	if (s == NULL)
		return;
	if (s->conn != NULL)
		PQfinish(s->conn);
	free(s);
}

PGconn *
pg_conn(struct pg_store *s)
{
	return s->conn;
}

uint64_t
pg_losses(const struct pg_store *s)
{
	return s->losses;
}

/*
 * Whether the server closed an idle connection: between calls it owes no reply, so a readable
 * socket is its goodbye (a restart, pg_terminate_backend()) or a notice; libpq reads it and
 * marks the connection bad when it was the end.
 */
static bool
pg_closed_idle(struct pg_store *s)
{
	/* A goodbye message and the end of the stream may take two reads: libpq returns after
	 * the data and finds the end on the next one. */
	for (int i = 0; i < 4; i++) {
		struct pollfd p = {.fd = PQsocket(s->conn), .events = POLLIN};

		if (p.fd < 0 || poll(&p, 1, 0) <= 0)
			return false;
		if (PQconsumeInput(s->conn) == 0 || PQstatus(s->conn) != CONNECTION_OK)
			return true;
	}
	return false;
}

/*
 * Makes sure the connection is up, reconnecting once, before a call sends anything: a
 * connection the server closed since the last call (PostgreSQL restarted) is replaced here, so
 * that the call runs on the new one instead of failing.
 */
static int
pg_connected(struct pg_store *s, char *err, size_t errlen)
{
	if (PQstatus(s->conn) == CONNECTION_OK && !pg_closed_idle(s))
		return 0;
	PQreset(s->conn);
	if (PQstatus(s->conn) == CONNECTION_OK)
		return 0;
	first_line(err, errlen, "PostgreSQL is unreachable: ", PQerrorMessage(s->conn));
	return -ENOTCONN;
}

/*
 * Whether a failure means the connection is gone: libpq's own errors carry no SQLSTATE; class
 * 08 is "connection exception", 57P01..57P03 the server shutting down or not up yet.
 */
static bool
pg_lost(struct pg_store *s, const PGresult *res)
{
	const char *st = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	return PQstatus(s->conn) != CONNECTION_OK || st == NULL || strncmp(st, "08", 2) == 0 ||
	       strncmp(st, "57P0", 4) == 0;
}

/* The errno for a failed result, from its SQLSTATE (PostgreSQL manual, appendix A). */
static int
pg_errno(struct pg_store *s, const PGresult *res)
{
	const char *st = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (pg_lost(s, res))
		return -ENOTCONN;
	if (strcmp(st, "23505") == 0) /* unique_violation */
		return -EEXIST;
	if (strncmp(st, "23", 2) == 0 || strncmp(st, "22", 2) == 0) /* integrity, data */
		return -EINVAL;
	if (strcmp(st, "40001") == 0 || strcmp(st, "40P01") == 0) /* serialization, deadlock */
		return -EAGAIN;
	return -EIO;
}

/*
 * Writes why res failed to err and returns its errno. After a lost connection it reconnects at
 * once, so that the next call works; the failed call is not repeated, as PostgreSQL may have
 * done it before the connection broke.
 */
static int
pg_failed(struct pg_store *s, const PGresult *res, char *err, size_t errlen)
{
	const char *msg = res != NULL ? PQresultErrorMessage(res) : "";
	char why[ADMIN_ERR_MAX];
	int rc = pg_errno(s, res);

	first_line(why, sizeof(why), "", *msg != '\0' ? msg : PQerrorMessage(s->conn));
	if (rc != -ENOTCONN) {
		snprintf(err, errlen, "PostgreSQL: %s", why);
		return rc;
	}
	s->losses++;
	PQreset(s->conn);
	snprintf(err, errlen, "PostgreSQL connection lost (%s): %s",
		PQstatus(s->conn) == CONNECTION_OK ? "reconnected; try again"
						   : "cannot reconnect yet",
		why);
	return rc;
}

/*
 * Runs sql with n parameters (vals[i] NULL: SQL NULL; lens/fmts NULL: all text). Returns the
 * result, or NULL with *rc and err set. The caller PQclear()s the result.
 */
static PGresult *
run_params(struct pg_store *s, const char *sql, int n, const char *const *vals, const int *lens,
	const int *fmts, int *rc, char *err, size_t errlen)
{
	PGresult *res;
	ExecStatusType st;

	*rc = pg_connected(s, err, errlen);
	if (*rc != 0)
		return NULL;
	res = PQexecParams(s->conn, sql, n, NULL, vals, lens, fmts, 0);
	st = PQresultStatus(res);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return res;
	*rc = pg_failed(s, res, err, errlen);
	PQclear(res);
	return NULL;
}

static PGresult *
run(struct pg_store *s, const char *sql, int n, const char *const *vals, int *rc, char *err,
	size_t errlen)
{
	return run_params(s, sql, n, vals, NULL, NULL, rc, err, errlen);
}

/* Runs a statement whose result is not needed. */
static int
exec(struct pg_store *s, const char *sql, int n, const char *const *vals, char *err, size_t errlen)
{
	int rc;
	PGresult *res = run(s, sql, n, vals, &rc, err, errlen);

	PQclear(res);
	return rc;
}

static int
begin(struct pg_store *s, char *err, size_t errlen)
{
	return exec(s, "BEGIN", 0, NULL, err, errlen);
}

static int
commit(struct pg_store *s, char *err, size_t errlen)
{
	return exec(s, "COMMIT", 0, NULL, err, errlen);
}

/* Ends a failed transaction; its own failure (e.g. a lost connection) changes nothing. */
static void
rollback(struct pg_store *s)
{
	if (PQstatus(s->conn) == CONNECTION_OK)
		PQclear(PQexec(s->conn, "ROLLBACK"));
}

/*
 * BEGIN, then the transaction-scoped advisory lock that lock_sql takes, so that the work that
 * follows runs alone among the control planes. Returns 0 inside the transaction; on an error
 * the transaction is already ended.
 */
static int
begin_locked(struct pg_store *s, const char *lock_sql, char *err, size_t errlen)
{
	int rc = begin(s, err, errlen);

	if (rc == 0 && (rc = exec(s, lock_sql, 0, NULL, err, errlen)) != 0)
		rollback(s);
	return rc;
}

static uint64_t
get_u64(const PGresult *res, int row, int col)
{
	return strtoull(PQgetvalue(res, row, col), NULL, 10);
}

static bool
get_bool(const PGresult *res, int row, int col)
{
	return PQgetvalue(res, row, col)[0] == 't';
}

/* ---------------------------------------------------------------------------------------- */
/* Migrations                                                                                */

static int
migrate_one(
	struct pg_store *s, const struct pg_migration *m, bool *applied, char *err, size_t errlen)
{
	char version[16];
	const char *vals[2] = {version, m->name};
	PGresult *res;
	int rc;

	*applied = false;
	snprintf(version, sizeof(version), "%d", m->version);
	rc = begin_locked(s, "SELECT pg_advisory_xact_lock(" PG_LOCK_MIGRATE ")", err, errlen);
	if (rc != 0)
		return rc;
	rc = exec(s,
		"CREATE TABLE IF NOT EXISTS schema_migrations ("
		"version integer PRIMARY KEY, "
		"name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
		0, NULL, err, errlen);
	if (rc != 0)
		goto fail;
	res = run(
		s, "SELECT 1 FROM schema_migrations WHERE version = $1", 1, vals, &rc, err, errlen);
	if (res == NULL)
		goto fail;
	if (PQntuples(res) == 0) {
		/* Trusted text of our own, several statements: the simple query protocol. */
		PGresult *mres = PQexec(s->conn, m->sql);

		if (PQresultStatus(mres) != PGRES_COMMAND_OK &&
			PQresultStatus(mres) != PGRES_TUPLES_OK) {
			char why[ADMIN_ERR_MAX];

			rc = pg_failed(s, mres, why, sizeof(why));
			snprintf(err, errlen, "migration %s failed and was rolled back: %s",
				m->name, why);
			if (rc == -EEXIST || rc == -EINVAL)
				rc = -EIO;
			PQclear(mres);
			PQclear(res);
			goto fail;
		}
		PQclear(mres);
		rc = exec(s, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", 2,
			vals, err, errlen);
		*applied = rc == 0;
	}
	PQclear(res);
	if (rc != 0)
		goto fail;
	rc = commit(s, err, errlen);
	if (rc != 0)
		*applied = false;
	return rc;
fail:
	rollback(s);
	return rc;
}

static int
cmp_migration(const void *a, const void *b)
{
	const struct pg_migration *x = a, *y = b;

	return (x->version > y->version) - (x->version < y->version);
}

/* Reads the NNN_words.sql files of dir, sorted by version. */
static int
load_dir(const char *dir, struct pg_migration **out, unsigned *n, char *err, size_t errlen)
{
	struct pg_migration *ms = NULL;
	unsigned cnt = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc = 0;

	if (d == NULL) {
		rc = -errno;
		snprintf(err, errlen, "migrations: cannot open %s: %s", dir, strerror(-rc));
		return rc;
	}
	while ((de = readdir(d)) != NULL) {
		const char *nm = de->d_name;
		size_t len = strlen(nm), digits = strspn(nm, "0123456789");
		char path[4096];
		struct stat st;
		char *sql;
		FILE *f;

		if (len < 5 || strcmp(nm + len - 4, ".sql") != 0)
			continue;
		if (digits < 3 || nm[digits] != '_' || digits > 9) {
			snprintf(err, errlen,
				"migrations: %s/%s: the name must be NNN_words.sql "
				"(e.g. 001_init.sql)",
				dir, nm);
			rc = -EINVAL;
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, nm);
		f = fopen(path, "r");
		if (f == NULL || fstat(fileno(f), &st) != 0 || st.st_size > PG_MIGRATION_FILE_MAX) {
			rc = f == NULL ? -errno : -EFBIG;
			snprintf(err, errlen, "migrations: cannot read %s: %s", path,
				rc == -EFBIG ? "larger than 1 MiB" : strerror(-rc));
			if (f != NULL)
				fclose(f);
			goto out;
		}
		sql = calloc(1, (size_t)st.st_size + 1);
		if (sql == NULL || fread(sql, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
			snprintf(err, errlen, "migrations: cannot read %s", path);
			free(sql);
			fclose(f);
			rc = -EIO;
			goto out;
		}
		fclose(f);
		if (cnt == cap) {
			struct pg_migration *bigger;

			cap = cap ? cap * 2 : 8;
			bigger = realloc(ms, cap * sizeof(*ms));
			if (bigger == NULL) {
				free(sql);
				snprintf(err, errlen, "out of memory");
				rc = -ENOMEM;
				goto out;
			}
			ms = bigger;
		}
		ms[cnt].version = atoi(nm);
		ms[cnt].name = strdup(nm);
		ms[cnt].sql = sql;
		cnt++;
		if (ms[cnt - 1].name == NULL || ms[cnt - 1].version < 1) {
			snprintf(err, errlen, "migrations: %s: versions start at 1", path);
			rc = -EINVAL;
			goto out;
		}
	}
	if (cnt > 0)
		qsort(ms, cnt, sizeof(*ms), cmp_migration);
	for (unsigned i = 1; i < cnt; i++) {
		if (ms[i].version == ms[i - 1].version) {
			snprintf(err, errlen, "migrations: %s and %s have the same version",
				ms[i - 1].name, ms[i].name);
			rc = -EINVAL;
			goto out;
		}
	}
out:
	closedir(d);
	if (rc != 0) {
		for (unsigned i = 0; i < cnt; i++) {
			free((char *)ms[i].name);
			free((char *)ms[i].sql);
		}
		free(ms);
		return rc;
	}
	*out = ms;
	*n = cnt;
	return 0;
}

int
pg_migrate(struct pg_store *s, const char *dir, unsigned *applied, char *err, size_t errlen)
{
	const struct pg_migration *ms = pg_migrations;
	struct pg_migration *loaded = NULL;
	unsigned n = pg_n_migrations, done = 0;
	int rc = 0;

	if (dir != NULL) {
		rc = load_dir(dir, &loaded, &n, err, errlen);
		if (rc != 0)
			return rc;
		ms = loaded;
	}
	for (unsigned i = 0; i < n; i++) {
		bool one;

		rc = migrate_one(s, &ms[i], &one, err, errlen);
		if (rc != 0)
			break;
		done += one;
	}
	if (applied != NULL)
		*applied = done;
	if (loaded != NULL) {
		for (unsigned i = 0; i < n; i++) {
			free((char *)loaded[i].name);
			free((char *)loaded[i].sql);
		}
		free(loaded);
	}
	return rc;
}

int
pg_schema_version(struct pg_store *s, int *version, char *err, size_t errlen)
{
	PGresult *res;
	int rc;

	res = run(s, "SELECT to_regclass('schema_migrations') IS NOT NULL", 0, NULL, &rc, err,
		errlen);
	if (res == NULL)
		return rc;
	*version = 0;
	if (get_bool(res, 0, 0)) {
		PQclear(res);
		res = run(s, "SELECT coalesce(max(version), 0) FROM schema_migrations", 0, NULL,
			&rc, err, errlen);
		if (res == NULL)
			return rc;
		*version = (int)get_u64(res, 0, 0);
	}
	PQclear(res);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Events                                                                                    */

static void
event_from_row(const PGresult *res, int row, struct admin_event *ev)
{
	enum admin_event_state st = ADMIN_EV_DRAFT;

	memset(ev, 0, sizeof(*ev));
	ev->id = (uint32_t)get_u64(res, row, 0);
	snprintf(ev->name, sizeof(ev->name), "%s", PQgetvalue(res, row, 1));
	ev->starts_at_ms = get_u64(res, row, 2);
	ev->ends_at_ms = get_u64(res, row, 3);
	ev->pay_window_s = (uint32_t)get_u64(res, row, 4);
	ev->per_user_limit = (uint32_t)get_u64(res, row, 5);
	(void)admin_event_state_parse(PQgetvalue(res, row, 6), &st);
	ev->state = st;
	ev->created_at_ms = get_u64(res, row, 7);
	ev->stock = (uint32_t)get_u64(res, row, 8);
	ev->available = (uint32_t)get_u64(res, row, 9);
	ev->queue_opens_at_ms = get_u64(res, row, 10);
	ev->draw_window_s = (uint32_t)get_u64(res, row, 11);
	ev->pow_bits = (uint8_t)get_u64(res, row, 12);
	ev->pow_auto_max = (uint8_t)get_u64(res, row, 13);
	/* NULL reads as "": no seed (an event older than the fair start), no digest yet. */
	ev->has_seed = hex_decode(PQgetvalue(res, row, 14), (size_t)PQgetlength(res, row, 14),
			       ev->draw_seed, DRAW_DIGEST_LEN) == 0;
	ev->has_digest = hex_decode(PQgetvalue(res, row, 15), (size_t)PQgetlength(res, row, 15),
				 ev->draw_digest, DRAW_DIGEST_LEN) == 0;
	ev->draw_entrants = (uint32_t)get_u64(res, row, 16);
	ev->draw_done_at_ms = get_u64(res, row, 17);
}

int
pg_event_get(struct pg_store *s, uint32_t id, struct admin_event *out, char *err, size_t errlen)
{
	char ids[16];
	const char *vals[1] = {ids};
	PGresult *res;
	int rc;

	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	res = run(s,
		"SELECT " EVENT_COLUMNS " FROM events e JOIN stock s ON s.event_id = e.id "
		"WHERE e.id = $1",
		1, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	if (PQntuples(res) == 0) {
		PQclear(res);
		snprintf(err, errlen, "no event %" PRIu32 " (event list shows the events)", id);
		return -ENOENT;
	}
	event_from_row(res, 0, out);
	PQclear(res);
	return 0;
}

int
pg_event_list(struct pg_store *s, struct admin_event *out, unsigned cap, unsigned *n, char *err,
	size_t errlen)
{
	PGresult *res;
	int rc;

	res = run(s,
		"SELECT " EVENT_COLUMNS " FROM events e JOIN stock s ON s.event_id = e.id "
		"ORDER BY e.id",
		0, NULL, &rc, err, errlen);
	if (res == NULL)
		return rc;
	*n = (unsigned)PQntuples(res);
	for (unsigned i = 0; i < *n && i < cap; i++)
		event_from_row(res, (int)i, &out[i]);
	PQclear(res);
	return 0;
}

/*
 * The answer to a SELECT of event id's row whose first column is its state: res with *from set,
 * or NULL (res freed) with *rc: -ENOENT and a message when there is no such event; unchanged
 * when the query failed (res NULL: run() set *rc and err).
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
event_update_commit(struct pg_store *s, const char *sql, int n, const char *const *vals,
	uint32_t id, struct admin_event *out, char *err, size_t errlen)
{
	int rc = exec(s, sql, n, vals, err, errlen);

	if (rc == 0)
		rc = commit(s, err, errlen);
	if (rc != 0) {
		rollback(s);
		return rc;
	}
	return out != NULL ? pg_event_get(s, id, out, err, errlen) : 0;
}

/* Live: a sale still to come or running (docs/operations.md "More than 64 events"). */
#define EVENT_LIVE "(e.state IN ('draft', 'preheated', 'open') AND e.ends_at > now())"

int
pg_event_list_slots(struct pg_store *s, struct admin_event *out, unsigned cap, unsigned *n,
	unsigned *n_live, uint64_t *next_end_ms, char *err, size_t errlen)
{
	char lim[16];
	const char *vals[1] = {lim};
	PGresult *res;
	int rc;

	snprintf(lim, sizeof(lim), "%u", cap);
	/* clang-format off */
	res = run(s,
		"SELECT " EVENT_COLUMNS ", count(*) FILTER (WHERE " EVENT_LIVE ") OVER (), "
		"coalesce(" MS("min(e.ends_at) FILTER (WHERE " EVENT_LIVE ") OVER ()") ", 0) "
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
		*n_live = (unsigned)get_u64(res, 0, EVENT_NCOLUMNS);
		*next_end_ms = get_u64(res, 0, EVENT_NCOLUMNS + 1);
	}
	PQclear(res);
	return 0;
}

int
pg_event_page(struct pg_store *s, bool has_state, enum admin_event_state state, uint32_t after,
	unsigned limit, struct admin_event *out, unsigned *n, bool *more, char *err, size_t errlen)
{
	char aft[16], lim[16];
	const char *vals[3] = {aft, has_state ? admin_event_state_name(state) : NULL, lim};
	PGresult *res;
	int rc;

	snprintf(aft, sizeof(aft), "%" PRIu32, after);
	snprintf(lim, sizeof(lim), "%u", limit + 1);
	res = run(s,
		"SELECT " EVENT_COLUMNS " FROM events e JOIN stock s ON s.event_id = e.id "
		"WHERE e.id > $1::bigint AND ($2::text IS NULL OR e.state = $2) "
		"ORDER BY e.id LIMIT $3",
		3, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	*n = (unsigned)PQntuples(res);
	*more = *n > limit;
	if (*more)
		*n = limit;
	for (unsigned i = 0; i < *n; i++)
		event_from_row(res, (int)i, &out[i]);
	PQclear(res);
	return 0;
}

int
pg_event_count_ready(struct pg_store *s, uint32_t except, unsigned *n, char *err, size_t errlen)
{
	char ex[16];
	const char *vals[1] = {ex};
	PGresult *res;
	int rc;

	snprintf(ex, sizeof(ex), "%" PRIu32, except);
	res = run(s,
		"SELECT count(*) FROM events e WHERE e.state IN ('preheated', 'open') "
		"AND e.ends_at > now() AND e.id <> $1::bigint",
		1, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	*n = (unsigned)get_u64(res, 0, 0);
	PQclear(res);
	return 0;
}

int
pg_event_archive(struct pg_store *s, uint32_t id, uint64_t redis_buyers, struct admin_event *out,
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
	rc = begin(s, err, errlen);
	if (rc != 0)
		return rc;
	/* FOR UPDATE on the event: no order of it can be paid, expired or added meanwhile
	 * (the order writer's batches take the row FOR KEY SHARE). */
	/* clang-format off */
	res = run(s,
		"SELECT e.state, e.ends_at <= now(), "
		"(SELECT count(*) FROM orders o WHERE o.event_id = e.id AND o.status = 'pending'), "
		"(SELECT count(*) FROM orders o WHERE o.event_id = e.id), "
		"coalesce((SELECT " MS("max(o.pay_deadline)") " FROM orders o WHERE o.event_id = e.id "
		"AND o.status = 'pending'), 0) "
		"FROM events e WHERE e.id = $1 FOR UPDATE",
		1, vals, &rc, err, errlen);
	/* clang-format on */
	if ((res = event_row(res, id, &from, &rc, err, errlen)) == NULL)
		goto fail;
	ended = get_bool(res, 0, 1);
	pending = get_u64(res, 0, 2);
	orders = get_u64(res, 0, 3);
	deadline_ms = get_u64(res, 0, 4);
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
		rc = exec(s,
			"UPDATE events SET state = 'archived', updated_at = now() WHERE id = $1", 1,
			vals, err, errlen);
		if (rc == 0)
			rc = commit(s, err, errlen);
		if (rc != 0)
			goto fail;
		return out != NULL ? pg_event_get(s, id, out, err, errlen) : 0;
	}
	rollback(s);
	if (rc == -EALREADY && out != NULL) {
		int grc = pg_event_get(s, id, out, err, errlen);

		if (grc != 0)
			return grc;
	}
	return rc;
fail:
	rollback(s);
	return rc;
}

int
pg_event_create(struct pg_store *s, const struct admin_event *ev, struct admin_event *out,
	char *err, size_t errlen)
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
	rc = begin(s, err, errlen);
	if (rc != 0)
		return rc;
	/* The database's clock decides "in the past", as it does for everything else. */
	/* clang-format off */
	res = run(s,
		"INSERT INTO events (id, name, starts_at, ends_at, pay_window_s, per_user_limit, "
		"queue_opens_at, draw_window_s, pow_bits, pow_auto_max, draw_seed) "
		"SELECT $1, $2, " TS("$3") ", " TS("$4") ", $5, $6, "
		"CASE WHEN $8::int > 0 THEN " TS("$7") " END, $8, $9, $10, decode($11, 'hex') "
		"WHERE " TS("$4") " > now() AND ($8::int = 0 OR " TS("$7") " > now()) "
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
		res = run(s, "SELECT " TS("$1") " > now()", 1, (const char *[]){ends}, &rc, err,
			errlen);
		if (res == NULL)
			goto fail;
		bool end_ahead = get_bool(res, 0, 0);

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
	rc = exec(s, "INSERT INTO stock (event_id, initial, available) VALUES ($1, $2, $2)", 2,
		vals, err, errlen);
	if (rc == 0)
		rc = commit(s, err, errlen);
	if (rc != 0)
		goto fail;
	return out != NULL ? pg_event_get(s, ev->id, out, err, errlen) : 0;
fail:
	rollback(s);
	return rc;
}

int
pg_event_set_state(struct pg_store *s, uint32_t id, enum admin_event_state to,
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
	rc = begin(s, err, errlen);
	if (rc != 0)
		return rc;
	/* FOR UPDATE: two operators (or control planes) cannot both pass the check. */
	/* clang-format off */
	res = run(s,
		"SELECT state, ends_at > now(), " MS("ends_at") " FROM events WHERE id = $1 "
		"FOR UPDATE",
		1, vals, &rc, err, errlen);
	/* clang-format on */
	if ((res = event_row(res, id, &from, &rc, err, errlen)) == NULL)
		goto fail;
	ahead = get_bool(res, 0, 1);
	rc = admin_event_transition(id, from, to, err, errlen);
	if (rc == 0 && to == ADMIN_EV_PREHEATED && !ahead) {
		char t[40];

		parse_time_format(get_u64(res, 0, 2), t, sizeof(t));
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
	rollback(s);
	return rc;
}

int
pg_event_set_pow(struct pg_store *s, uint32_t id, uint8_t bits, bool auto_given, uint8_t auto_max,
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
	rc = begin(s, err, errlen);
	if (rc != 0)
		return rc;
	res = run(s, "SELECT state, pow_auto_max FROM events WHERE id = $1 FOR UPDATE", 1, vals,
		&rc, err, errlen);
	if ((res = event_row(res, id, &from, &rc, err, errlen)) == NULL)
		goto fail;
	if (!auto_given)
		auto_max = (uint8_t)get_u64(res, 0, 1);
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
	rollback(s);
	return rc;
}

int
pg_draw_entrants(
	struct pg_store *s, uint32_t id, struct pg_entrant **v, size_t *n, char *err, size_t errlen)
{
	char ids[16];
	const char *vals[1] = {ids};
	PGresult *res;
	int rc, rows;

	*v = NULL;
	*n = 0;
	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	res = run(s,
		"SELECT d.user_id, d.reservation_id, d.rank, EXISTS (SELECT 1 FROM orders o "
		"WHERE o.reservation_id = d.reservation_id AND o.event_id = d.event_id "
		"AND o.user_id = d.user_id) "
		"FROM draw_entrants d WHERE d.event_id = $1 ORDER BY d.rank",
		1, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	rows = PQntuples(res);
	if (rows > 0 && (*v = malloc((size_t)rows * sizeof(**v))) == NULL) {
		PQclear(res);
		snprintf(err, errlen, "out of memory for %d entrants", rows);
		return -ENOMEM;
	}
	for (int i = 0; i < rows; i++) {
		(*v)[i].user = get_u64(res, i, 0);
		(*v)[i].reservation_id = get_u64(res, i, 1);
		(*v)[i].rank = (uint32_t)get_u64(res, i, 2);
		(*v)[i].ordered = get_bool(res, i, 3);
	}
	*n = (size_t)rows;
	PQclear(res);
	return 0;
}

int
pg_event_counts(
	struct pg_store *s, uint32_t id, struct pg_event_counts *out, char *err, size_t errlen)
{
	char ids[16];
	const char *vals[1] = {ids};
	PGresult *res;
	int rc;

	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	/* One statement: one snapshot, so the numbers add up. */
	res = run(s,
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
	out->initial = (uint32_t)get_u64(res, 0, 0);
	out->available = (uint32_t)get_u64(res, 0, 1);
	out->pending = get_u64(res, 0, 2);
	out->paid = get_u64(res, 0, 3);
	out->expired = get_u64(res, 0, 4);
	out->cancelled = get_u64(res, 0, 5);
	out->releases_pending = get_u64(res, 0, 6);
	PQclear(res);
	return 0;
}

int
pg_event_active_users(
	struct pg_store *s, uint32_t id, uint64_t **users, size_t *n, char *err, size_t errlen)
{
	char ids[16];
	const char *vals[1] = {ids};
	PGresult *res;
	int rc;

	*users = NULL;
	*n = 0;
	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	res = run(s,
		"SELECT user_id FROM orders WHERE event_id = $1 AND status IN ('pending', 'paid') "
		"ORDER BY user_id",
		1, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	int rows = PQntuples(res);

	if (rows > 0) {
		*users = malloc((size_t)rows * sizeof(**users));
		if (*users == NULL) {
			PQclear(res);
			snprintf(err, errlen, "out of memory for %d users", rows);
			return -ENOMEM;
		}
		for (int i = 0; i < rows; i++)
			(*users)[i] = get_u64(res, i, 0);
	}
	*n = (size_t)rows;
	PQclear(res);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Keys                                                                                      */

/*
 * When sale key k (not current) can retire, as a timestamptz: the later of
 *   - retired_at + $1 ms: the last purchase token (and reserve path) it signed expires; and
 *   - for each event it could have signed receipts for (open or closed, its window overlapping
 *     the time the key was current, and not closed before the key became current): the end of
 *     its sale (ends_at, or when it was closed) plus its pay window, since buyers poll their
 *     result with the receipt until their order is paid or expired.
 * NULL for a current key and for auth keys (the previous auth key goes at the next auth-set).
 */
/* clang-format off */
#define KEY_RETIRE_AT(k)                                                                     \
	"CASE WHEN " k ".kind = 'sale' AND NOT " k ".current THEN greatest("                \
	k ".retired_at + $1::bigint * interval '1 millisecond', "                          \
	"(SELECT max(CASE WHEN e.state = 'closed' THEN least(e.ends_at, e.updated_at) "     \
	"ELSE e.ends_at END + e.pay_window_s * interval '1 second') FROM events e "         \
	"WHERE e.state IN ('open', 'closed') AND e.starts_at < " k ".retired_at "          \
	"AND e.ends_at > " k ".created_at "                                                 \
	"AND (e.state = 'open' OR e.updated_at > " k ".created_at))) END"
/* clang-format on */

/* Deletes the sale keys past their retirement (inside the caller's transaction or alone). */
static int
keys_delete_retired(
	struct pg_store *s, const char *life, unsigned *removed, char *err, size_t errlen)
{
	const char *vals[1] = {life};
	PGresult *res;
	int rc;

	res = run(s,
		"DELETE FROM keys k WHERE k.kind = 'sale' AND NOT k.current AND " KEY_RETIRE_AT(
			"k") " <= now() RETURNING k.kid",
		1, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	if (removed != NULL)
		*removed = (unsigned)PQntuples(res);
	PQclear(res);
	return 0;
}

int
pg_keys_expire(
	struct pg_store *s, uint64_t token_life_ms, unsigned *removed, char *err, size_t errlen)
{
	char life[24];

	snprintf(life, sizeof(life), "%" PRIu64, token_life_ms);
	*removed = 0;
	return keys_delete_retired(s, life, removed, err, errlen);
}

int
pg_key_rotate(struct pg_store *s, uint64_t token_life_ms, uint32_t *kid, char *err, size_t errlen)
{
	uint8_t secret[PG_SALE_KEY_LEN];
	char kids[16], life[24];
	const char *vals[2] = {kids, (const char *)secret}, *lv[1] = {life};
	const int lens[2] = {0, PG_SALE_KEY_LEN}, fmts[2] = {0, 1};
	PGresult *res;
	uint64_t next, live;
	int rc;

	snprintf(life, sizeof(life), "%" PRIu64, token_life_ms);
	if (getrandom(secret, sizeof(secret), 0) != (ssize_t)sizeof(secret)) {
		snprintf(err, errlen, "getrandom: %s", strerror(errno));
		return -EIO;
	}
	rc = begin_locked(s, "SELECT pg_advisory_xact_lock(" PG_LOCK_KEYS ")", err, errlen);
	if (rc != 0)
		goto out;
	/* Keys past their retirement go first: they make room. */
	rc = keys_delete_retired(s, life, NULL, err, errlen);
	if (rc != 0)
		goto fail;
	/* clang-format off */
	res = run(s,
		"SELECT coalesce(max(kid), 0) + 1, count(*), "
		"(SELECT kid FROM keys k WHERE k.kind = 'sale' AND NOT k.current "
		"ORDER BY " KEY_RETIRE_AT("k") ", kid LIMIT 1), "
		"(SELECT " MS(KEY_RETIRE_AT("k")) " FROM keys k WHERE k.kind = 'sale' "
		"AND NOT k.current ORDER BY 1, kid LIMIT 1) "
		"FROM keys WHERE kind = 'sale'", 1, lv, &rc, err, errlen);
	/* clang-format on */
	if (res == NULL)
		goto fail;
	next = get_u64(res, 0, 0);
	live = get_u64(res, 0, 1);
	if (live >= PG_SALE_KEYS_MAX) {
		char when[40];

		/* The data planes hold PG_SALE_KEYS_MAX sale keys: another one would push out a
		 * key whose tokens or receipts may still be valid. */
		parse_time_format(get_u64(res, 0, 3), when, sizeof(when));
		snprintf(err, errlen,
			"%" PRIu64 " sale keys still verify (1 current, %" PRIu64 " retiring), as "
			"many as a data plane holds: rotate after %s, when key %s retires (its "
			"last "
			"token or receipt can no longer be valid then)",
			live, live - 1, when, PQgetvalue(res, 0, 2));
		PQclear(res);
		rc = -ENOSPC;
		goto fail;
	}
	PQclear(res);
	if (next > UINT32_MAX) {
		snprintf(err, errlen, "sale key ids are used up (the last is 4294967295)");
		rc = -ENOSPC;
		goto fail;
	}
	snprintf(kids, sizeof(kids), "%" PRIu64, next);
	/* The current key retires now: it verifies until its tokens and receipts are over. */
	rc = exec(s,
		"UPDATE keys SET current = false, retired_at = now() WHERE kind = 'sale' AND "
		"current",
		0, NULL, err, errlen);
	if (rc == 0) {
		res = run_params(s,
			"INSERT INTO keys (kind, kid, secret, current) "
			"VALUES ('sale', $1, $2, true)",
			2, vals, lens, fmts, &rc, err, errlen);
		PQclear(res);
	}
	if (rc == 0)
		rc = commit(s, err, errlen);
	if (rc != 0)
		goto fail;
	*kid = (uint32_t)next;
	goto out;
fail:
	rollback(s);
out:
	explicit_bzero(secret, sizeof(secret));
	return rc;
}

int
pg_auth_key_set(struct pg_store *s, uint32_t kid, const uint8_t *secret, size_t len, char *err,
	size_t errlen)
{
	char kids[16];
	const char *vals[2] = {kids, (const char *)secret};
	const int lens[2] = {0, (int)len}, fmts[2] = {0, 1};
	PGresult *res;
	int rc;

	if (len < ADMIN_SECRET_MIN || len > ADMIN_SECRET_MAX) {
		snprintf(err, errlen, "an auth key must be %u..%u bytes, got %zu", ADMIN_SECRET_MIN,
			ADMIN_SECRET_MAX, len);
		return -EINVAL;
	}
	snprintf(kids, sizeof(kids), "%" PRIu32, kid);
	rc = begin_locked(s, "SELECT pg_advisory_xact_lock(" PG_LOCK_KEYS ")", err, errlen);
	if (rc != 0)
		return rc;
	/*
	 * A new current key: the old current one stays as the previous, older ones go. Setting
	 * the current key again only replaces its secret.
	 */
	rc = exec(s,
		"DELETE FROM keys WHERE kind = 'auth' AND NOT current AND kid <> $1 "
		"AND NOT EXISTS "
		"(SELECT 1 FROM keys WHERE kind = 'auth' AND kid = $1 AND current)",
		1, vals, err, errlen);
	if (rc == 0)
		rc = exec(s,
			"UPDATE keys SET current = false, retired_at = now() "
			"WHERE kind = 'auth' AND current AND kid <> $1",
			1, vals, err, errlen);
	if (rc == 0) {
		res = run_params(s,
			"INSERT INTO keys (kind, kid, secret, current) "
			"VALUES ('auth', $1, $2, true) "
			"ON CONFLICT (kind, kid) DO UPDATE SET secret = excluded.secret, current = "
			"true, retired_at = NULL, created_at = now()",
			2, vals, lens, fmts, &rc, err, errlen);
		PQclear(res);
	}
	if (rc == 0)
		rc = commit(s, err, errlen);
	if (rc != 0)
		rollback(s);
	return rc;
}

int
pg_keys_list(struct pg_store *s, uint64_t token_life_ms, struct admin_key *out, unsigned cap,
	unsigned *n, char *err, size_t errlen)
{
	char life[24];
	const char *vals[1] = {life};
	PGresult *res;
	int rc;

	snprintf(life, sizeof(life), "%" PRIu64, token_life_ms);
	/* clang-format off */
	res = run(s,
		"SELECT kind, kid, encode(secret, 'hex'), current, " MS("created_at") ", "
		"coalesce(" MS("retired_at") ", 0), coalesce(" MS(KEY_RETIRE_AT("k")) ", 0), "
		"coalesce(" KEY_RETIRE_AT("k") " <= now(), false) FROM keys k "
		"ORDER BY kind DESC, kid",
		1, vals, &rc, err, errlen);
	/* clang-format on */
	if (res == NULL)
		return rc;
	*n = (unsigned)PQntuples(res);
	for (unsigned i = 0; i < *n && i < cap; i++) {
		struct admin_key *k = &out[i];
		size_t len;

		memset(k, 0, sizeof(*k));
		k->kind = strcmp(PQgetvalue(res, (int)i, 0), "sale") == 0 ? WIRE_KEY_SALE
									  : WIRE_KEY_AUTH;
		k->kid = (uint32_t)get_u64(res, (int)i, 1);
		if (parse_hex(PQgetvalue(res, (int)i, 2), k->secret, sizeof(k->secret), &len) == 0)
			k->len = (uint8_t)len;
		k->current = get_bool(res, (int)i, 3);
		k->created_at_ms = get_u64(res, (int)i, 4);
		k->retired_at_ms = get_u64(res, (int)i, 5);
		k->retire_at_ms = get_u64(res, (int)i, 6);
		k->retired = get_bool(res, (int)i, 7);
	}
	/* libpq's copy of the secrets goes with the result; wipe it first. */
	for (int i = 0; i < PQntuples(res); i++)
		explicit_bzero(PQgetvalue(res, i, 2), (size_t)PQgetlength(res, i, 2));
	PQclear(res);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Rules                                                                                     */

/* The rule's canonical kind and value, after checking it as admin_rule_parse() does. */
static int
rule_text(const struct admin_rule *r, char *value, size_t len, char *err, size_t errlen)
{
	struct admin_rule again;

	if (admin_rule_value(r, value, len) < 0) {
		snprintf(err, errlen, "not a rule");
		return -EINVAL;
	}
	return admin_rule_parse(admin_rule_kind_name(r->kind), value, &again, err, errlen);
}

int
pg_rule_add(struct pg_store *s, const struct admin_rule *r, char *err, size_t errlen)
{
	char value[ADMIN_RULE_TEXT_MAX];
	const char *vals[2] = {admin_rule_kind_name(r->kind), value};
	int rc;

	rc = rule_text(r, value, sizeof(value), err, errlen);
	if (rc != 0)
		return rc;
	rc = exec(s, "INSERT INTO rules (kind, value) VALUES ($1, $2)", 2, vals, err, errlen);
	if (rc == -EEXIST)
		snprintf(err, errlen, "rule %s %s exists already", vals[0], value);
	return rc;
}

int
pg_rule_del(struct pg_store *s, const struct admin_rule *r, char *err, size_t errlen)
{
	char value[ADMIN_RULE_TEXT_MAX];
	const char *vals[2] = {admin_rule_kind_name(r->kind), value};
	PGresult *res;
	int rc;

	rc = rule_text(r, value, sizeof(value), err, errlen);
	if (rc != 0)
		return rc;
	res = run(s, "DELETE FROM rules WHERE kind = $1 AND value = $2", 2, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	if (strcmp(PQcmdTuples(res), "0") == 0) {
		snprintf(err, errlen, "no rule %s %s (rules list shows the rules)", vals[0], value);
		rc = -ENOENT;
	}
	PQclear(res);
	return rc;
}

int
pg_rule_foreach(struct pg_store *s,
	int (*fn)(const struct admin_rule *r, uint64_t created_at_ms, void *arg), void *arg,
	char *err, size_t errlen)
{
	PGresult *res;
	int rc;

	rc = pg_connected(s, err, errlen);
	if (rc != 0)
		return rc;
	/* Row by row: a rule set may hold a million rules. */
	if (!PQsendQueryParams(s->conn,
		    "SELECT kind, value, " MS("created_at") " FROM rules ORDER BY id", 0, NULL,
		    NULL, NULL, NULL, 0) ||
		!PQsetSingleRowMode(s->conn)) {
		first_line(err, errlen, "PostgreSQL: ", PQerrorMessage(s->conn));
		while ((res = PQgetResult(s->conn)) != NULL)
			PQclear(res);
		if (PQstatus(s->conn) == CONNECTION_OK)
			return -EIO;
		s->losses++;
		return -ENOTCONN;
	}
	while ((res = PQgetResult(s->conn)) != NULL) {
		ExecStatusType st = PQresultStatus(res);

		if (st == PGRES_SINGLE_TUPLE && rc == 0) {
			struct admin_rule r;
			char why[ADMIN_ERR_MAX];

			if (admin_rule_parse(PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), &r, why,
				    sizeof(why)) != 0) {
				snprintf(err, errlen, "rules: a stored rule is not valid: %s", why);
				rc = -EIO;
			} else {
				rc = fn(&r, get_u64(res, 0, 2), arg);
			}
		} else if (st != PGRES_SINGLE_TUPLE && st != PGRES_TUPLES_OK && rc == 0) {
			rc = pg_errno(s, res);
			first_line(err, errlen, "PostgreSQL: ", PQresultErrorMessage(res));
		}
		/* Stopping early still reads the rest: the connection must end up idle. */
		PQclear(res);
	}
	if (rc == -ENOTCONN) {
		s->losses++;
		PQreset(s->conn);
	}
	return rc;
}

int
pg_rule_count(struct pg_store *s, uint64_t *n, char *err, size_t errlen)
{
	PGresult *res;
	int rc;

	res = run(s, "SELECT count(*) FROM rules", 0, NULL, &rc, err, errlen);
	if (res == NULL)
		return rc;
	*n = get_u64(res, 0, 0);
	PQclear(res);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Limits                                                                                    */

#define LIMIT_COLUMNS                                                           \
	"ip_rate, ip_burst, user_rate, user_burst, device_rate, device_burst, " \
	"forward_per_s, forward_burst"

static void
limits_from_row(const PGresult *res, struct wire_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->ip_rate = (uint32_t)get_u64(res, 0, 0);
	l->ip_burst = (uint32_t)get_u64(res, 0, 1);
	l->user_rate = (uint32_t)get_u64(res, 0, 2);
	l->user_burst = (uint32_t)get_u64(res, 0, 3);
	l->device_rate = (uint32_t)get_u64(res, 0, 4);
	l->device_burst = (uint32_t)get_u64(res, 0, 5);
	l->event_forward_per_s = (uint32_t)get_u64(res, 0, 6);
	l->event_forward_burst = (uint32_t)get_u64(res, 0, 7);
}

int
pg_limits_get(struct pg_store *s, struct wire_limits *out, char *err, size_t errlen)
{
	PGresult *res;
	int rc;

	res = run(s, "SELECT " LIMIT_COLUMNS " FROM limits", 0, NULL, &rc, err, errlen);
	if (res == NULL)
		return rc;
	if (PQntuples(res) != 1) {
		PQclear(res);
		snprintf(err, errlen, "the limits table has no row: is the schema migrated?");
		return -ENOENT;
	}
	limits_from_row(res, out);
	PQclear(res);
	return 0;
}

int
pg_limits_set(struct pg_store *s, const struct wire_limits *l, unsigned given,
	struct wire_limits *out, char *err, size_t errlen)
{
	static const char *const names[3] = {"ip", "user", "device"};
	const uint32_t v[8] = {l->ip_rate, l->ip_burst, l->user_rate, l->user_burst, l->device_rate,
		l->device_burst, l->event_forward_per_s, l->event_forward_burst};
	char text[8][16];
	const char *vals[8];
	PGresult *res;
	int rc;

	for (int i = 0; i < 3; i++) {
		if (!(given & (1u << i)))
			continue;
		if (v[2 * i] > ADMIN_RATE_MAX || v[2 * i + 1] > ADMIN_BURST_MAX) {
			snprintf(err, errlen, "%s: rate must be 0..%u and burst 0..%u, got %u/%u",
				names[i], ADMIN_RATE_MAX, ADMIN_BURST_MAX, v[2 * i], v[2 * i + 1]);
			return -EINVAL;
		}
	}
	if ((given & ADMIN_LIMIT_FORWARD) &&
		(l->event_forward_per_s > ADMIN_FORWARD_MAX ||
			l->event_forward_burst > ADMIN_FORWARD_MAX ||
			(l->event_forward_per_s == 0 && l->event_forward_burst != 0))) {
		snprintf(err, errlen,
			"forward must be RATE/BURST with both 0..%u and a burst only with a rate, "
			"got %u/%u",
			ADMIN_FORWARD_MAX, l->event_forward_per_s, l->event_forward_burst);
		return -EINVAL;
	}
	for (int i = 0; i < 8; i++) {
		/* Bit i/2 gives rate and burst i = 0..5; bit 3 the forward budget (6, 7). */
		bool set = i < 6 ? (given >> (i / 2)) & 1 : (given & ADMIN_LIMIT_FORWARD) != 0;

		snprintf(text[i], sizeof(text[i]), "%" PRIu32, v[i]);
		vals[i] = set ? text[i] : NULL;
	}
	res = run(s,
		"UPDATE limits SET ip_rate = coalesce($1::int, ip_rate), "
		"ip_burst = coalesce($2::int, ip_burst), user_rate = coalesce($3::int, user_rate), "
		"user_burst = coalesce($4::int, user_burst), "
		"device_rate = coalesce($5::int, device_rate), "
		"device_burst = coalesce($6::int, device_burst), "
		"forward_per_s = coalesce($7::int, forward_per_s), "
		"forward_burst = coalesce($8::int, forward_burst), updated_at = now() "
		"RETURNING " LIMIT_COLUMNS,
		8, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	if (PQntuples(res) != 1) {
		PQclear(res);
		snprintf(err, errlen, "the limits table has no row: is the schema migrated?");
		return -ENOENT;
	}
	if (out != NULL)
		limits_from_row(res, out);
	PQclear(res);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Orders                                                                                    */

int
pg_order_call(struct pg_store *s, const char *fn, uint64_t order_id, char *result, size_t len,
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
	res = run(s, sql, 1, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	snprintf(result, len, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return 0;
}
