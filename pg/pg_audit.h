/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_AUDIT_H
#define FG_PG_PG_AUDIT_H
/*
 * The audit log of admin commands that change something (sql/013, docs/operations.md "The
 * audit log"). Errors as pg/pg_conn.h says.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pg/pg_conn.h"

#define PG_AUDIT_ANSWER_MAX  2000 /* bytes of an answer kept */
#define PG_AUDIT_REQUEST_MAX 4096

/* One command. Strings are NUL-terminated; uid < 0 and pid 0 mean not known. */
struct pg_audit_entry {
	uint64_t id;
	uint64_t at_ms; /* read back only: PostgreSQL's now() when written */
	int64_t uid;
	char user[64]; /* "" when not known */
	int pid;
	char command[32];
	char request[PG_AUDIT_REQUEST_MAX];
	uint32_t event_id; /* 0: none */
	uint64_t order_id; /* written only: its event is looked up when event_id is 0 */
	bool ok;
	char answer[PG_AUDIT_ANSWER_MAX + 1];
};

/*
 * Writes e (at is now(); an answer longer than PG_AUDIT_ANSWER_MAX is cut there; the event of
 * e->order_id when e->event_id is 0 and the order exists). Returns 0 or < 0 with err.
 */
int pg_audit_add(struct pg_conn *s, const struct pg_audit_entry *e, char *err, size_t errlen);

/*
 * Calls fn for the newest limit entries (of event_id; 0: of every event and none), newest
 * first, until fn returns non-zero (returned). Returns 0, fn's value, or < 0 with err.
 */
int pg_audit_foreach(struct pg_conn *s, uint32_t event_id, uint32_t limit,
	int (*fn)(const struct pg_audit_entry *e, void *arg), void *arg, char *err, size_t errlen);

#endif
