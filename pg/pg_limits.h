/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_LIMITS_H
#define FG_PG_PG_LIMITS_H
/* The data planes' rate limits (one row). Errors as pg/pg_conn.h says. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"
#include "admin/admin_proto.h"
#include "pg/pg_conn.h"

/* The data planes' limits. */
int pg_limits_get(struct pg_conn *s, struct wire_limits *out, char *err, size_t errlen);

/*
 * Sets the limits named by given (ADMIN_LIMIT_*) to the values in l; the others keep theirs.
 * *out (may be NULL) receives all of them afterwards. -EINVAL for a value out of range.
 */
int pg_limits_set(struct pg_conn *s, const struct wire_limits *l, unsigned given,
	struct wire_limits *out, char *err, size_t errlen);

#endif
