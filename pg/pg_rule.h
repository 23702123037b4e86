/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_RULE_H
#define FG_PG_PG_RULE_H
/* The risk rules the data planes apply. Errors as pg/pg_conn.h says. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"
#include "admin/admin_proto.h"
#include "pg/pg_conn.h"

/* Adds rule r (checked again here). -EEXIST when the same rule exists. */
int pg_rule_add(struct pg_conn *s, const struct admin_rule *r, char *err, size_t errlen);

/* Deletes rule r. -ENOENT when there is no such rule. */
int pg_rule_del(struct pg_conn *s, const struct admin_rule *r, char *err, size_t errlen);

/*
 * Calls fn for every rule, ordered by kind and value, with the time it was added. Stops and
 * returns fn's value when it is not 0. The rules are read in one snapshot.
 */
int pg_rule_foreach(struct pg_conn *s,
	int (*fn)(const struct admin_rule *r, uint64_t created_at_ms, void *arg), void *arg,
	char *err, size_t errlen);

/* The number of rules in *n. */
int pg_rule_count(struct pg_conn *s, uint64_t *n, char *err, size_t errlen);

#endif
