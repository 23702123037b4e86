/* SPDX-License-Identifier: BSD-3-Clause */
#include "pg/pg_migrate.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pg/pg_row.h"

/* Advisory lock key ("fg" in the high bytes) of migrations. */
#define PG_MIGRATE_LOCK	    "1718026241"
#define PG_MIGRATE_FILE_MAX (1 << 20)
#define PG_MIGRATE_ERR_MAX  512

static int
migrate_one(
	struct pg_conn *s, const struct pg_migration *m, bool *applied, char *err, size_t errlen)
{
	char version[16];
	const char *vals[2] = {version, m->name};
	PGresult *res;
	int rc;

	*applied = false;
	snprintf(version, sizeof(version), "%d", m->version);
	rc = pg_conn_begin(
		s, NULL, "SELECT pg_advisory_xact_lock(" PG_MIGRATE_LOCK ")", err, errlen);
	if (rc != 0)
		return rc;
	rc = pg_conn_exec(s,
		"CREATE TABLE IF NOT EXISTS schema_migrations ("
		"version integer PRIMARY KEY, "
		"name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
		0, NULL, err, errlen);
	if (rc != 0)
		goto fail;
	res = pg_conn_query(
		s, "SELECT 1 FROM schema_migrations WHERE version = $1", 1, vals, &rc, err, errlen);
	if (res == NULL)
		goto fail;
	if (PQntuples(res) == 0) {
		/* Trusted text of our own, several statements: the simple query protocol. */
		PGresult *mres = PQexec(pg_conn_libpq(s), m->sql);

		if (PQresultStatus(mres) != PGRES_COMMAND_OK &&
			PQresultStatus(mres) != PGRES_TUPLES_OK) {
			char why[PG_MIGRATE_ERR_MAX];

			rc = pg_conn_failed(s, mres, NULL, why, sizeof(why));
			snprintf(err, errlen, "migration %s failed and was rolled back: %s",
				m->name, why);
			if (rc == -EEXIST || rc == -EINVAL)
				rc = -EIO;
			PQclear(mres);
			PQclear(res);
			goto fail;
		}
		PQclear(mres);
		rc = pg_conn_exec(s,
			"INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", 2, vals,
			err, errlen);
		*applied = rc == 0;
	}
	PQclear(res);
	if (rc != 0)
		goto fail;
	rc = pg_conn_commit(s, err, errlen);
	if (rc != 0)
		*applied = false;
	return rc;
fail:
	pg_conn_rollback(s);
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
		if (f == NULL || fstat(fileno(f), &st) != 0 || st.st_size > PG_MIGRATE_FILE_MAX) {
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

/*
 * Whether every one of ms is applied already, read without the lock or any CREATE, so that a
 * role that may not change the schema (the control plane's own, scripts/flashgate-db-setup)
 * starts on a database its owner migrated. Returns 0 with *all, or < 0 with err.
 */
static int
migrate_all_applied(struct pg_conn *s, const struct pg_migration *ms, unsigned n, bool *all,
	char *err, size_t errlen)
{
	char *list = malloc((size_t)n * 12 + 3);
	const char *vals[1] = {list};
	uint64_t v = 0;
	size_t off = 0;
	int rc;

	*all = false;
	if (list == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	list[off++] = '{';
	for (unsigned i = 0; i < n; i++)
		off += (size_t)sprintf(list + off, "%s%d", i ? "," : "", ms[i].version);
	snprintf(list + off, 2, "}");
	rc = pg_conn_query_u64(s, "SELECT (to_regclass('schema_migrations') IS NOT NULL)::int", 0,
		NULL, &v, err, errlen);
	if (rc == 0 && v != 0)
		rc = pg_conn_query_u64(s,
			"SELECT count(*) FROM schema_migrations WHERE version = ANY($1::int[])", 1,
			vals, &v, err, errlen);
	if (rc == 0)
		*all = v == n;
	free(list);
	return rc;
}

int
pg_migrate(struct pg_conn *s, const char *dir, unsigned *applied, char *err, size_t errlen)
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
	bool all = false;

	rc = n > 0 ? migrate_all_applied(s, ms, n, &all, err, errlen) : 0;
	for (unsigned i = 0; rc == 0 && !all && i < n; i++) {
		bool one;

		rc = migrate_one(s, &ms[i], &one, err, errlen);
		if (rc != 0)
			break;
		done += one;
	}
	if (rc != 0 && strstr(err, "permission denied") != NULL) {
		size_t len = strlen(err);

		snprintf(err + len, errlen - len,
			" (this role may not change the schema: apply the migrations as the owner "
			"role, flashgate-controlplane --migrate -s postgres.conninfo=..., "
			"docs/install.md)");
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
pg_migrate_version(struct pg_conn *s, int *version, char *err, size_t errlen)
{
	uint64_t v = 0;
	int rc;

	rc = pg_conn_query_u64(s, "SELECT (to_regclass('schema_migrations') IS NOT NULL)::int", 0,
		NULL, &v, err, errlen);
	if (rc == 0 && v != 0)
		rc = pg_conn_query_u64(s, "SELECT coalesce(max(version), 0) FROM schema_migrations",
			0, NULL, &v, err, errlen);
	if (rc == 0)
		*version = (int)v;
	return rc;
}
