/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/draw_pg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "common/draw.h"
#include "common/hex.h"

/* timestamptz -> Unix ms, exact (as pg_store.c). */
#define DPG_MS(col) "floor(extract(epoch FROM " col ") * 1000)::bigint"

struct draw_pg {
	char conninfo[256];
	PGconn *conn;
	bool in_tx; /* a transaction (write or load) is open */
	bool copy_ended; /* the COPY's end was queued; its result not read yet */
};

struct draw_pg *
draw_pg_create(const char *conninfo)
{
	struct draw_pg *dp = calloc(1, sizeof(*dp));

	if (dp != NULL)
		snprintf(dp->conninfo, sizeof(dp->conninfo), "%s", conninfo);
	return dp;
}

void
draw_pg_free(struct draw_pg *dp)
{
	if (dp == NULL)
		return;
	if (dp->conn != NULL)
		PQfinish(dp->conn);
	free(dp);
}

/* The first line of a libpq message into err, after prefix. */
static int
dpg_fail(struct draw_pg *dp, const char *prefix, char *err, size_t errlen)
{
	const char *m = dp->conn != NULL ? PQerrorMessage(dp->conn) : "no connection";

	snprintf(err, errlen, "%s: %.*s", prefix, (int)strcspn(m, "\n"), m);
	return -EIO;
}

/* Connects when there is no good connection (never in a transaction). 0 or -EIO. */
static int
dpg_connect(struct draw_pg *dp, char *err, size_t errlen)
{
	if (dp->conn != NULL && PQstatus(dp->conn) == CONNECTION_OK)
		return 0;
	if (dp->conn != NULL)
		PQfinish(dp->conn);
	dp->in_tx = false;
	dp->conn = PQconnectdb(dp->conninfo);
	if (dp->conn == NULL || PQstatus(dp->conn) != CONNECTION_OK)
		return dpg_fail(dp, "cannot connect to PostgreSQL", err, errlen);
	return 0;
}

/* Runs sql with params; a result of status want, or NULL with err (the result freed). */
static PGresult *
dpg_run(struct draw_pg *dp, const char *sql, int n, const char *const *vals, ExecStatusType want,
	char *err, size_t errlen)
{
	PGresult *res = PQexecParams(dp->conn, sql, n, NULL, vals, NULL, NULL, 0);

	if (res != NULL && PQresultStatus(res) == want)
		return res;
	dpg_fail(dp, "PostgreSQL", err, errlen);
	PQclear(res);
	return NULL;
}

/* Runs a command without a result set. 0 or -EIO. */
static int
dpg_cmd(struct draw_pg *dp, const char *sql, int n, const char *const *vals, char *err,
	size_t errlen)
{
	PGresult *res = dpg_run(dp, sql, n, vals, PGRES_COMMAND_OK, err, errlen);

	PQclear(res);
	return res != NULL ? 0 : -EIO;
}

void
draw_pg_abort(struct draw_pg *dp)
{
	if (dp->conn == NULL || !dp->in_tx)
		return;
	PQsetnonblocking(dp->conn, 0);
	dp->copy_ended = false;
	if (PQtransactionStatus(dp->conn) == PQTRANS_ACTIVE) {
		/* In a COPY: end it with an error, then read what follows. */
		PQputCopyEnd(dp->conn, "given up");
		PGresult *r;

		while ((r = PQgetResult(dp->conn)) != NULL)
			PQclear(r);
	}
	PQclear(PQexec(dp->conn, "ROLLBACK"));
	dp->in_tx = false;
}

int
draw_pg_get(struct draw_pg *dp, uint32_t event, bool *has_digest, uint8_t digest[32],
	uint64_t *entrants, uint64_t *done_at_ms, bool *has_seed, uint8_t seed[32], char *err,
	size_t errlen)
{
	char id[16];
	const char *vals[1] = {id};

	if (dpg_connect(dp, err, errlen) != 0)
		return -EIO;
	snprintf(id, sizeof(id), "%" PRIu32, event);
	PGresult *res = dpg_run(dp,
		"SELECT encode(draw_digest, 'hex'), coalesce(draw_entrants, 0), "
		"coalesce(" DPG_MS("draw_done_at") ", 0), encode(draw_seed, 'hex') "
		"FROM events WHERE id = $1",
		1, vals, PGRES_TUPLES_OK, err, errlen);

	if (res == NULL)
		return -EIO;
	if (PQntuples(res) != 1) {
		PQclear(res);
		snprintf(err, errlen, "no event %" PRIu32 " in PostgreSQL", event);
		return -ENOENT;
	}
	*has_digest = hex_decode(PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0),
			      digest, DRAW_DIGEST_LEN) == 0;
	*entrants = strtoull(PQgetvalue(res, 0, 1), NULL, 10);
	*done_at_ms = strtoull(PQgetvalue(res, 0, 2), NULL, 10);
	*has_seed = hex_decode(PQgetvalue(res, 0, 3), (size_t)PQgetlength(res, 0, 3), seed, DRAW_DIGEST_LEN) ==
		    0;
	PQclear(res);
	return 0;
}

int
draw_pg_write_begin(struct draw_pg *dp, uint32_t event, uint8_t have_digest[32],
	uint64_t *have_n, char *err, size_t errlen)
{
	char id[16];
	const char *vals[1] = {id};

	if (dpg_connect(dp, err, errlen) != 0)
		return -EIO;
	snprintf(id, sizeof(id), "%" PRIu32, event);
	if (dpg_cmd(dp, "BEGIN", 0, NULL, err, errlen) != 0)
		return -EIO;
	dp->in_tx = true;
	PGresult *res = dpg_run(dp,
		"SELECT encode(draw_digest, 'hex'), coalesce(draw_entrants, 0) FROM events "
		"WHERE id = $1 FOR UPDATE",
		1, vals, PGRES_TUPLES_OK, err, errlen);

	if (res == NULL)
		goto fail;
	if (PQntuples(res) != 1) {
		PQclear(res);
		snprintf(err, errlen, "no event %" PRIu32 " in PostgreSQL", event);
		goto fail;
	}
	if (hex_decode(PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0), have_digest, DRAW_DIGEST_LEN) ==
		0) {
		*have_n = strtoull(PQgetvalue(res, 0, 1), NULL, 10);
		PQclear(res);
		draw_pg_abort(dp);
		return -EEXIST;
	}
	PQclear(res);
	res = PQexec(dp->conn,
		"COPY draw_entrants (event_id, user_id, reservation_id, rank) FROM STDIN");
	if (res == NULL || PQresultStatus(res) != PGRES_COPY_IN) {
		dpg_fail(dp, "PostgreSQL COPY", err, errlen);
		PQclear(res);
		goto fail;
	}
	PQclear(res);
	/* The rows go out without blocking: see draw_pg_write_rows(). */
	PQsetnonblocking(dp->conn, 1);
	dp->copy_ended = false;
	return 0;
fail:
	draw_pg_abort(dp);
	return -EIO;
}

int
draw_pg_write_rows(struct draw_pg *dp, uint32_t event, const struct rs_entrant *v, size_t from,
	size_t to, size_t *sent, char *err, size_t errlen)
{
	char buf[32768];

	*sent = 0;
	/* Never more than libpq can send now: what PostgreSQL has not taken waits for the next
	 * step instead of holding up the control plane's loop. */
	while (from + *sent < to) {
		int f = PQflush(dp->conn);

		if (f < 0)
			goto fail;
		if (f == 1)
			return 0; /* the socket is full: later */
		size_t len = 0, i = from + *sent, k = 0;

		for (; i + k < to && sizeof(buf) - len >= 128; k++) {
			const struct rs_entrant *e = &v[i + k];

			/* A reservation id is the column's signed bigint with the same 64 bits. */
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
				"%" PRIu32 "\t%" PRIu64 "\t%" PRId64 "\t%zu\n", event, e->user,
				(int64_t)e->reservation_id, i + k + 1);
		}
		int rc = PQputCopyData(dp->conn, buf, (int)len);

		if (rc < 0)
			goto fail;
		if (rc == 0)
			return 0; /* not queued: the same rows again later */
		*sent += k;
	}
	return PQflush(dp->conn) < 0 ? (dpg_fail(dp, "PostgreSQL COPY", err, errlen), draw_pg_abort(dp),
						-EIO)
				     : 0;
fail:
	dpg_fail(dp, "PostgreSQL COPY", err, errlen);
	draw_pg_abort(dp);
	return -EIO;
}

int
draw_pg_write_end(struct draw_pg *dp, uint32_t event, const uint8_t digest[32], uint64_t n,
	char *err, size_t errlen)
{
	char id[16], hex[2 * DRAW_DIGEST_LEN + 1], cnt[24];
	const char *vals[3] = {id, hex, cnt};
	PGresult *res;
	bool ok = true;

	if (!dp->copy_ended) {
		int rc = PQputCopyEnd(dp->conn, NULL);

		if (rc < 0) {
			dpg_fail(dp, "PostgreSQL COPY", err, errlen);
			goto fail;
		}
		if (rc == 0)
			return -EAGAIN;
		dp->copy_ended = true;
	}
	/* PostgreSQL takes its time with a large COPY (its indexes): asked again each step. */
	if (PQflush(dp->conn) < 0 || PQconsumeInput(dp->conn) == 0) {
		dpg_fail(dp, "PostgreSQL COPY", err, errlen);
		goto fail;
	}
	if (PQflush(dp->conn) == 1 || PQisBusy(dp->conn))
		return -EAGAIN;
	while ((res = PQgetResult(dp->conn)) != NULL) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK && ok) {
			dpg_fail(dp, "PostgreSQL COPY", err, errlen);
			ok = false;
		}
		PQclear(res);
	}
	dp->copy_ended = false;
	PQsetnonblocking(dp->conn, 0);
	if (!ok)
		goto fail;
	snprintf(id, sizeof(id), "%" PRIu32, event);
	hex_str(digest, DRAW_DIGEST_LEN, hex);
	snprintf(cnt, sizeof(cnt), "%" PRIu64, n);
	if (dpg_cmd(dp,
		    "UPDATE events SET draw_digest = decode($2, 'hex'), draw_entrants = $3 "
		    "WHERE id = $1",
		    3, vals, err, errlen) != 0 ||
		dpg_cmd(dp, "COMMIT", 0, NULL, err, errlen) != 0)
		goto fail;
	dp->in_tx = false;
	return 0;
fail:
	draw_pg_abort(dp);
	return -EIO;
}

int
draw_pg_load_begin(struct draw_pg *dp, uint32_t event, char *err, size_t errlen)
{
	char id[16];
	const char *vals[1] = {id};

	if (dpg_connect(dp, err, errlen) != 0)
		return -EIO;
	snprintf(id, sizeof(id), "%" PRIu32, event);
	if (dpg_cmd(dp, "BEGIN READ ONLY", 0, NULL, err, errlen) != 0)
		return -EIO;
	dp->in_tx = true;
	if (dpg_cmd(dp,
		    "DECLARE fg_draw NO SCROLL CURSOR FOR SELECT user_id, reservation_id FROM "
		    "draw_entrants WHERE event_id = $1 ORDER BY rank",
		    1, vals, err, errlen) != 0) {
		draw_pg_abort(dp);
		return -EIO;
	}
	return 0;
}

int
draw_pg_load_step(struct draw_pg *dp, struct rs_entrant *v, size_t *n, unsigned max, bool *end,
	char *err, size_t errlen)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "FETCH %u FROM fg_draw", max);
	PGresult *res = dpg_run(dp, sql, 0, NULL, PGRES_TUPLES_OK, err, errlen);

	if (res == NULL) {
		draw_pg_abort(dp);
		return -EIO;
	}
	unsigned got = (unsigned)PQntuples(res);

	for (unsigned i = 0; i < got; i++) {
		v[*n].user = strtoull(PQgetvalue(res, (int)i, 0), NULL, 10);
		v[*n].reservation_id = (uint64_t)strtoll(PQgetvalue(res, (int)i, 1), NULL, 10);
		(*n)++;
	}
	PQclear(res);
	*end = got < max;
	if (*end) {
		if (dpg_cmd(dp, "COMMIT", 0, NULL, err, errlen) != 0) {
			draw_pg_abort(dp);
			return -EIO;
		}
		dp->in_tx = false;
	}
	return 0;
}

int
draw_pg_done(struct draw_pg *dp, uint32_t event, char *err, size_t errlen)
{
	char id[16];
	const char *vals[1] = {id};

	if (dpg_connect(dp, err, errlen) != 0)
		return -EIO;
	snprintf(id, sizeof(id), "%" PRIu32, event);
	return dpg_cmd(dp,
		"UPDATE events SET draw_done_at = now() WHERE id = $1 AND draw_done_at IS NULL", 1,
		vals, err, errlen);
}
