/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_MIGRATE_H
#define FG_PG_PG_MIGRATE_H
/*
 * The schema: sql/ as numbered migrations, embedded in the library at build time
 * (scripts/embed-sql), so that pg_migrate() needs no files at run time. Errors as pg/pg_conn.h
 * says.
 */
#include <stddef.h>

#include "pg/pg_conn.h"

/* One embedded migration (sql/NNN_words.sql). */
struct pg_migration {
	int version;
	const char *name;
	const char *sql;
};

/* Generated from sql/ by scripts/embed-sql, in ascending version order. */
extern const struct pg_migration pg_migrations[];
extern const unsigned pg_n_migrations;

/*
 * Applies every migration not applied yet, in version order, each in its own transaction that
 * also records it in schema_migrations(version, applied_at). Takes a transaction-scoped
 * advisory lock, so that control planes starting together apply each migration once.
 * dir NULL: the embedded migrations; otherwise the NNN_words.sql files of that directory.
 * Running it again applies nothing. *applied (may be NULL) receives how many were applied.
 * A migration that fails is rolled back whole and stops the run (the message names it).
 */
int pg_migrate(struct pg_conn *s, const char *dir, unsigned *applied, char *err, size_t errlen);

/* The highest applied migration version in *version (0: none). Returns 0 or < 0 with err. */
int pg_migrate_version(struct pg_conn *s, int *version, char *err, size_t errlen);

#endif
