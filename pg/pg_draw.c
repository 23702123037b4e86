/* SPDX-License-Identifier: BSD-3-Clause */
#include "pg/pg_draw.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/draw.h"
#include "common/hex.h"
#include "pg/pg_row.h"

/* Rows per FETCH of pg_draw_load_all(). */
#define DRAW_LOAD_CHUNK 50000

struct pg_draw {
	struct pg_conn *c;
	bool copy_ended; /* the COPY's end was queued; its result not read yet */
};

int
pg_draw_entrants(struct pg_conn *s, uint32_t id, struct pg_draw_entrant **v, size_t *n, char *err,
	size_t errlen)
{
	char ids[16];
	const char *vals[1] = {ids};
	PGresult *res;
	int rc, rows;

	*v = NULL;
	*n = 0;
	snprintf(ids, sizeof(ids), "%" PRIu32, id);
	res = pg_conn_query(s,
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
		(*v)[i].user = pg_row_u64(res, i, 0);
		(*v)[i].reservation_id = pg_row_u64(res, i, 1);
		(*v)[i].rank = pg_row_u32(res, i, 2);
		(*v)[i].ordered = pg_row_bool(res, i, 3);
	}
	*n = (size_t)rows;
	PQclear(res);
	return 0;
}

struct pg_draw *
pg_draw_create(const char *conninfo, const char *app)
{
	struct pg_draw *dp = calloc(1, sizeof(*dp));

	if (dp == NULL)
		return NULL;
	dp->c = pg_conn_new_named(conninfo, app, NULL, NULL);
	if (dp->c == NULL) {
		free(dp);
		return NULL;
	}
	return dp;
}

void
pg_draw_free(struct pg_draw *dp)
{
	if (dp == NULL)
		return;
	pg_conn_close(dp->c);
	free(dp);
}

/* Reports a failure (res may be NULL) of what into err: always -EIO (this module's contract). */
static int
pg_draw_fail(struct pg_draw *dp, const PGresult *res, const char *what, char *err, size_t errlen)
{
	pg_conn_failed(dp->c, res, what, err, errlen);
	return -EIO;
}

void
pg_draw_abort(struct pg_draw *dp)
{
	PGconn *conn = pg_conn_libpq(dp->c);

	dp->copy_ended = false;
	if (conn == NULL)
		return;
	PQsetnonblocking(conn, 0);
	if (!pg_conn_in_tx(dp->c))
		return;
	if (PQtransactionStatus(conn) == PQTRANS_ACTIVE) {
		/* In a COPY: end it with an error, then read what follows. */
		PQputCopyEnd(conn, "given up");
		PGresult *r;

		while ((r = PQgetResult(conn)) != NULL)
			PQclear(r);
	}
	pg_conn_rollback(dp->c);
}

int
pg_draw_get(struct pg_draw *dp, uint32_t event, bool *has_digest, uint8_t digest[32],
	uint64_t *entrants, uint64_t *done_at_ms, bool *has_seed, uint8_t seed[32], char *err,
	size_t errlen)
{
	char id[16];
	const char *vals[1] = {id};
	PGresult *res;
	int rc;

	snprintf(id, sizeof(id), "%" PRIu32, event);
	res = pg_conn_query(dp->c,
		"SELECT encode(draw_digest, 'hex'), coalesce(draw_entrants, 0), "
		"coalesce(" PG_ROW_MS("draw_done_at") ", 0), encode(draw_seed, 'hex') "
						      "FROM events WHERE id = $1",
		1, vals, &rc, err, errlen);
	if (res == NULL)
		return -EIO;
	if (PQntuples(res) != 1) {
		PQclear(res);
		snprintf(err, errlen, "no event %" PRIu32 " in PostgreSQL", event);
		return -ENOENT;
	}
	*has_digest =
		hex_decode(pg_row_text(res, 0, 0), (size_t)PQgetlength(res, 0, 0), digest, DRAW_DIGEST_LEN) == 0;
	*entrants = pg_row_u64(res, 0, 1);
	*done_at_ms = pg_row_u64(res, 0, 2);
	*has_seed =
		hex_decode(pg_row_text(res, 0, 3), (size_t)PQgetlength(res, 0, 3), seed, DRAW_DIGEST_LEN) == 0;
	PQclear(res);
	return 0;
}

int
pg_draw_write_begin(struct pg_draw *dp, uint32_t event, uint8_t have_digest[32], uint64_t *have_n,
	char *err, size_t errlen)
{
	char id[16];
	const char *vals[1] = {id};
	PGresult *res;
	int rc;

	snprintf(id, sizeof(id), "%" PRIu32, event);
	if (pg_conn_begin(dp->c, NULL, NULL, err, errlen) != 0)
		return -EIO;
	res = pg_conn_query(dp->c,
		"SELECT encode(draw_digest, 'hex'), coalesce(draw_entrants, 0) FROM events "
		"WHERE id = $1 FOR UPDATE",
		1, vals, &rc, err, errlen);
	if (res == NULL)
		goto fail;
	if (PQntuples(res) != 1) {
		PQclear(res);
		snprintf(err, errlen, "no event %" PRIu32 " in PostgreSQL", event);
		goto fail;
	}
	if (hex_decode(pg_row_text(res, 0, 0), (size_t)PQgetlength(res, 0, 0), have_digest, DRAW_DIGEST_LEN) ==
		0) {
		*have_n = pg_row_u64(res, 0, 1);
		PQclear(res);
		pg_draw_abort(dp);
		return -EEXIST;
	}
	PQclear(res);
	/* The draw's own partition (sql/016), without keys while it fills: built once full
	 * (pg_draw_write_end()), far quicker than kept up row by row. */
	char sql[160];

	snprintf(sql, sizeof(sql),
		"CREATE TABLE draw_entrants_%" PRIu32 " (LIKE draw_entrants INCLUDING CONSTRAINTS)",
		event);
	if (pg_conn_exec(dp->c, sql, 0, NULL, err, errlen) != 0)
		goto fail;
	snprintf(sql, sizeof(sql),
		"COPY draw_entrants_%" PRIu32 " (event_id, user_id, reservation_id, rank) FROM STDIN",
		event);
	res = PQexec(pg_conn_libpq(dp->c), sql);
	if (res == NULL || PQresultStatus(res) != PGRES_COPY_IN) {
		pg_draw_fail(dp, res, "COPY", err, errlen);
		PQclear(res);
		goto fail;
	}
	PQclear(res);
	dp->copy_ended = false;
	return 0;
fail:
	pg_draw_abort(dp);
	return -EIO;
}

int
pg_draw_write_end(struct pg_draw *dp, uint32_t event, const uint8_t digest[32], uint64_t n,
	char *err, size_t errlen)
{
	PGconn *conn = pg_conn_libpq(dp->c);
	char id[16], hex[2 * DRAW_DIGEST_LEN + 1], cnt[24];
	const char *vals[3] = {id, hex, cnt};
	PGresult *res;
	bool ok = true;

	if (!dp->copy_ended) {
		int rc = PQputCopyEnd(conn, NULL);

		if (rc < 0) {
			pg_draw_fail(dp, NULL, "COPY", err, errlen);
			goto fail;
		}
		if (rc == 0)
			return -EAGAIN;
		dp->copy_ended = true;
	}
	/* PostgreSQL takes its time with a large COPY (its indexes): asked again each step. */
	if (PQflush(conn) < 0 || PQconsumeInput(conn) == 0) {
		pg_draw_fail(dp, NULL, "COPY", err, errlen);
		goto fail;
	}
	if (PQflush(conn) == 1 || PQisBusy(conn))
		return -EAGAIN;
	while ((res = PQgetResult(conn)) != NULL) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK && ok) {
			snprintf(err, errlen, "PostgreSQL: COPY: %.*s",
				(int)strcspn(PQresultErrorMessage(res), "\n"),
				PQresultErrorMessage(res));
			ok = false;
		}
		PQclear(res);
	}
	dp->copy_ended = false;
	PQsetnonblocking(conn, 0);
	if (!ok)
		goto fail;
	snprintf(id, sizeof(id), "%" PRIu32, event);
	hex_str(digest, DRAW_DIGEST_LEN, hex);
	snprintf(cnt, sizeof(cnt), "%" PRIu64, n);
	/* The partition's keys, each built in one pass over the rows, and the check that makes
	 * ATTACH trust its rows are the event's; then it joins draw_entrants. */
	char keys[400], attach[160];

	snprintf(keys, sizeof(keys),
		"ALTER TABLE draw_entrants_%1$" PRIu32 " ADD CONSTRAINT draw_entrants_%1$" PRIu32
		"_pkey PRIMARY KEY (event_id, user_id), ADD CONSTRAINT draw_entrants_%1$" PRIu32
		"_rank_key UNIQUE (event_id, rank), ADD CONSTRAINT draw_entrants_%1$" PRIu32
		"_event CHECK (event_id = %1$" PRIu32 ")",
		event);
	snprintf(attach, sizeof(attach),
		"ALTER TABLE draw_entrants ATTACH PARTITION draw_entrants_%1$" PRIu32
		" FOR VALUES IN (%1$" PRIu32 ")",
		event);
	if (pg_conn_exec(dp->c, keys, 0, NULL, err, errlen) != 0 ||
		pg_conn_exec(dp->c, attach, 0, NULL, err, errlen) != 0)
		goto fail;
	if (pg_conn_exec(dp->c,
		    "UPDATE events SET draw_digest = decode($2, 'hex'), draw_entrants = $3 "
		    "WHERE id = $1",
		    3, vals, err, errlen) != 0 ||
		pg_conn_commit(dp->c, err, errlen) != 0)
		goto fail;
	return 0;
fail:
	pg_draw_abort(dp);
	return -EIO;
}

int
pg_draw_load_begin(struct pg_draw *dp, uint32_t event, char *err, size_t errlen)
{
	char id[16];
	const char *vals[1] = {id};

	snprintf(id, sizeof(id), "%" PRIu32, event);
	if (pg_conn_begin(dp->c, "BEGIN READ ONLY", NULL, err, errlen) != 0)
		return -EIO;
	if (pg_conn_exec(dp->c,
		    "DECLARE fg_draw NO SCROLL CURSOR FOR SELECT user_id, reservation_id FROM "
		    "draw_entrants WHERE event_id = $1 ORDER BY rank",
		    1, vals, err, errlen) != 0) {
		pg_draw_abort(dp);
		return -EIO;
	}
	return 0;
}

int
pg_draw_load_step(struct pg_draw *dp, struct store_entrant *v, size_t *n, unsigned max, bool *end,
	char *err, size_t errlen)
{
	char sql[64];
	PGresult *res;
	int rc;

	snprintf(sql, sizeof(sql), "FETCH %u FROM fg_draw", max);
	res = pg_conn_query(dp->c, sql, 0, NULL, &rc, err, errlen);
	if (res == NULL) {
		pg_draw_abort(dp);
		return -EIO;
	}
	unsigned got = (unsigned)PQntuples(res);

	for (unsigned i = 0; i < got; i++) {
		v[*n].user = pg_row_u64(res, (int)i, 0);
		v[*n].reservation_id = pg_row_i64(res, (int)i, 1);
		(*n)++;
	}
	PQclear(res);
	*end = got < max;
	if (*end && pg_conn_commit(dp->c, err, errlen) != 0) {
		pg_draw_abort(dp);
		return -EIO;
	}
	return 0;
}

int
pg_draw_done(struct pg_draw *dp, uint32_t event, char *err, size_t errlen)
{
	char id[16];
	const char *vals[1] = {id};

	snprintf(id, sizeof(id), "%" PRIu32, event);
	return pg_conn_exec(dp->c,
		       "UPDATE events SET draw_done_at = now() WHERE id = $1 AND draw_done_at IS "
		       "NULL",
		       1, vals, err, errlen) == 0
		       ? 0
		       : -EIO;
}

int
pg_draw_write_all(struct pg_draw *dp, uint32_t event, const struct store_entrant *v, size_t n,
	const uint8_t digest[32], uint8_t have_digest[32], uint64_t *have_n, char *err,
	size_t errlen)
{
	/* Rows go out in large pieces, blocking: this runs off the control plane's loop. */
	enum { BUF = 1 << 20 };
	char *buf = malloc(BUF);
	PGconn *conn;
	int rc;

	if (buf == NULL) {
		snprintf(err, errlen, "out of memory for the COPY");
		return -ENOMEM;
	}
	rc = pg_draw_write_begin(dp, event, have_digest, have_n, err, errlen);
	if (rc != 0)
		goto out;
	conn = pg_conn_libpq(dp->c);
	for (size_t i = 0; i < n;) {
		size_t len = 0;

		for (; i < n && BUF - len >= 128; i++)
			/* A reservation id is the column's signed bigint with the same 64 bits. */
			len += (size_t)snprintf(buf + len, BUF - len,
				"%" PRIu32 "\t%" PRIu64 "\t%" PRId64 "\t%zu\n", event, v[i].user,
				(int64_t)v[i].reservation_id, i + 1);
		if (PQputCopyData(conn, buf, (int)len) != 1) {
			rc = pg_draw_fail(dp, NULL, "COPY", err, errlen);
			pg_draw_abort(dp);
			goto out;
		}
	}
	/* PostgreSQL's answer comes once it has taken every row (its indexes): waited for. */
	while ((rc = pg_draw_write_end(dp, event, digest, n, err, errlen)) == -EAGAIN) {
		struct pollfd p = {.fd = PQsocket(conn), .events = POLLIN};

		(void)poll(&p, 1, 1000);
	}
out:
	free(buf);
	return rc;
}

int
pg_draw_load_all(struct pg_draw *dp, uint32_t event, size_t expect, struct store_entrant **v,
	size_t *n, char *err, size_t errlen)
{
	size_t cap = expect + DRAW_LOAD_CHUNK;
	bool end = false;
	int rc;

	*n = 0;
	*v = malloc(cap * sizeof(**v));
	if (*v == NULL) {
		snprintf(err, errlen, "out of memory for %zu entrants", expect);
		return -ENOMEM;
	}
	if ((rc = pg_draw_load_begin(dp, event, err, errlen)) != 0)
		return rc;
	while (!end) {
		if (*n + DRAW_LOAD_CHUNK > cap) {
			/* More rows than expected: read on to count them. */
			struct store_entrant *nv = realloc(*v, (cap *= 2) * sizeof(*nv));

			if (nv == NULL) {
				pg_draw_abort(dp);
				snprintf(err, errlen, "out of memory for the entrants");
				return -ENOMEM;
			}
			*v = nv;
		}
		rc = pg_draw_load_step(dp, *v, n, DRAW_LOAD_CHUNK, &end, err, errlen);
		if (rc != 0)
			return rc;
	}
	return 0;
}
