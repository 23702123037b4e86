/* SPDX-License-Identifier: BSD-3-Clause */
#include "pg/pg_audit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg_row.h"

int
pg_audit_add(struct pg_conn *s, const struct pg_audit_entry *e, char *err, size_t errlen)
{
	char uid[24], pid[16], ev[16], order[24], answer[PG_AUDIT_ANSWER_MAX + 1];
	size_t n = strlen(e->answer);

	/* Cut at a character's start, so the text stays valid UTF-8. */
	if (n > PG_AUDIT_ANSWER_MAX) {
		n = PG_AUDIT_ANSWER_MAX;
		while (n > 0 && ((unsigned char)e->answer[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(answer, e->answer, n);
	answer[n] = '\0';
	while (n > 0 && answer[n - 1] == '\n')
		answer[--n] = '\0';
	snprintf(uid, sizeof(uid), "%" PRId64, e->uid);
	snprintf(pid, sizeof(pid), "%d", e->pid);
	snprintf(ev, sizeof(ev), "%" PRIu32, e->event_id);
	snprintf(order, sizeof(order), "%" PRIu64, e->order_id);
	const char *vals[9] = {e->uid >= 0 ? uid : NULL, e->user[0] != '\0' ? e->user : NULL,
		e->pid > 0 ? pid : NULL, e->command, e->request, e->event_id != 0 ? ev : NULL,
		e->order_id != 0 ? order : NULL, e->ok ? "t" : "f", answer};

	return pg_conn_exec(s,
		"INSERT INTO admin_audit (uid, user_name, pid, command, request, event_id, ok, "
		"answer) VALUES ($1::bigint, $2, $3::int, $4, $5, coalesce($6::bigint, "
		"(SELECT event_id FROM orders WHERE id = $7::bigint)), $8::boolean, $9)",
		9, vals, err, errlen);
}

/* The text of column col of row 0, or "" when NULL, into dst (cap bytes). */
static void
text_into(const PGresult *res, int col, char *dst, size_t cap)
{
	snprintf(dst, cap, "%s", PQgetisnull(res, 0, col) ? "" : PQgetvalue(res, 0, col));
}

int
pg_audit_foreach(struct pg_conn *s, uint32_t event_id, uint32_t limit,
	int (*fn)(const struct pg_audit_entry *e, void *arg), void *arg, char *err, size_t errlen)
{
	char ev[16], lim[16];
	const char *vals[2] = {ev, lim};
	PGconn *conn;
	PGresult *res, *failed = NULL;
	struct pg_audit_entry *e;
	int rc;

	snprintf(ev, sizeof(ev), "%" PRIu32, event_id);
	snprintf(lim, sizeof(lim), "%" PRIu32, limit);
	rc = pg_conn_ready(s, err, errlen);
	if (rc != 0)
		return rc;
	e = malloc(sizeof(*e));
	if (e == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	conn = pg_conn_libpq(s);
	if (!PQsendQueryParams(conn,
		    "SELECT id, " PG_ROW_MS(
			    "at") ", coalesce(uid, -1), user_name, "
				  "coalesce(pid, 0), command, request, coalesce(event_id, 0), ok, "
				  "answer "
				  "FROM admin_audit WHERE $1::bigint = 0 OR event_id = $1::bigint "
				  "ORDER BY id DESC LIMIT $2::int",
		    2, NULL, vals, NULL, NULL, 0) ||
		!PQsetSingleRowMode(conn)) {
		while ((res = PQgetResult(conn)) != NULL)
			PQclear(res);
		free(e);
		return pg_conn_failed(s, NULL, NULL, err, errlen);
	}
	while ((res = PQgetResult(conn)) != NULL) {
		ExecStatusType st = PQresultStatus(res);

		if (st == PGRES_SINGLE_TUPLE && rc == 0) {
			memset(e, 0, sizeof(*e));
			e->id = pg_row_u64(res, 0, 0);
			e->at_ms = pg_row_u64(res, 0, 1);
			e->uid = pg_row_i64(res, 0, 2);
			text_into(res, 3, e->user, sizeof(e->user));
			e->pid = (int)pg_row_i64(res, 0, 4);
			text_into(res, 5, e->command, sizeof(e->command));
			text_into(res, 6, e->request, sizeof(e->request));
			e->event_id = pg_row_u32(res, 0, 7);
			e->ok = pg_row_bool(res, 0, 8);
			text_into(res, 9, e->answer, sizeof(e->answer));
			rc = fn(e, arg);
		} else if (st != PGRES_SINGLE_TUPLE && st != PGRES_TUPLES_OK && failed == NULL &&
			   rc == 0) {
			failed = res; /* reported once the connection is idle */
			continue;
		}
		/* Stopping early still reads the rest: the connection must end up idle. */
		PQclear(res);
	}
	free(e);
	if (failed != NULL) {
		rc = pg_conn_failed(s, failed, "audit", err, errlen);
		PQclear(failed);
	}
	return rc;
}
