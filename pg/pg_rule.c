/* SPDX-License-Identifier: BSD-3-Clause */
#include "pg/pg_rule.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pg/pg_row.h"

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
pg_rule_add(struct pg_conn *s, const struct admin_rule *r, char *err, size_t errlen)
{
	char value[ADMIN_RULE_TEXT_MAX];
	const char *vals[2] = {admin_rule_kind_name(r->kind), value};
	int rc;

	rc = rule_text(r, value, sizeof(value), err, errlen);
	if (rc != 0)
		return rc;
	rc = pg_conn_exec(
		s, "INSERT INTO rules (kind, value) VALUES ($1, $2)", 2, vals, err, errlen);
	if (rc == -EEXIST)
		snprintf(err, errlen, "rule %s %s exists already", vals[0], value);
	return rc;
}

int
pg_rule_del(struct pg_conn *s, const struct admin_rule *r, char *err, size_t errlen)
{
	char value[ADMIN_RULE_TEXT_MAX];
	const char *vals[2] = {admin_rule_kind_name(r->kind), value};
	uint64_t rows = 0;
	int rc;

	rc = rule_text(r, value, sizeof(value), err, errlen);
	if (rc == 0)
		rc = pg_conn_exec_rows(s, "DELETE FROM rules WHERE kind = $1 AND value = $2", 2,
			vals, &rows, err, errlen);
	if (rc == 0 && rows == 0) {
		snprintf(err, errlen, "no rule %s %s (rules list shows the rules)", vals[0], value);
		rc = -ENOENT;
	}
	return rc;
}

int
pg_rule_foreach(struct pg_conn *s,
	int (*fn)(const struct admin_rule *r, uint64_t created_at_ms, void *arg), void *arg,
	char *err, size_t errlen)
{
	PGconn *conn;
	PGresult *res, *failed = NULL;
	int rc;

	rc = pg_conn_ready(s, err, errlen);
	if (rc != 0)
		return rc;
	conn = pg_conn_libpq(s);
	/* Row by row: a rule set may hold a million rules. */
	if (!PQsendQueryParams(conn,
		    "SELECT kind, value, " PG_ROW_MS("created_at") " FROM rules ORDER BY id", 0,
		    NULL, NULL, NULL, NULL, 0) ||
		!PQsetSingleRowMode(conn)) {
		while ((res = PQgetResult(conn)) != NULL)
			PQclear(res);
		return pg_conn_failed(s, NULL, NULL, err, errlen);
	}
	while ((res = PQgetResult(conn)) != NULL) {
		ExecStatusType st = PQresultStatus(res);

		if (st == PGRES_SINGLE_TUPLE && rc == 0) {
			struct admin_rule r;
			char why[ADMIN_ERR_MAX];

			if (admin_rule_parse(pg_row_text(res, 0, 0), pg_row_text(res, 0, 1), &r,
				    why, sizeof(why)) != 0) {
				snprintf(err, errlen, "rules: a stored rule is not valid: %s", why);
				rc = -EIO;
			} else {
				rc = fn(&r, pg_row_u64(res, 0, 2), arg);
			}
		} else if (st != PGRES_SINGLE_TUPLE && st != PGRES_TUPLES_OK && failed == NULL &&
			   rc == 0) {
			failed = res; /* reported once the connection is idle */
			continue;
		}
		/* Stopping early still reads the rest: the connection must end up idle. */
		PQclear(res);
	}
	if (failed != NULL) {
		rc = pg_conn_failed(s, failed, NULL, err, errlen);
		PQclear(failed);
	}
	return rc;
}

int
pg_rule_count(struct pg_conn *s, uint64_t *n, char *err, size_t errlen)
{
	return pg_conn_query_u64(s, "SELECT count(*) FROM rules", 0, NULL, n, err, errlen);
}
