/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_H
#define FG_PG_PG_H
/*
 * The PostgreSQL library (pg/), all of it, for a program that uses most of its jobs (the
 * control plane); a file that needs one job includes that job's header alone.
 */
#include "pg/pg_conn.h"
#include "pg/pg_draw.h"
#include "pg/pg_event.h"
#include "pg/pg_keys.h"
#include "pg/pg_limits.h"
#include "pg/pg_migrate.h"
#include "pg/pg_orders.h"
#include "pg/pg_row.h"
#include "pg/pg_rule.h"

#endif
