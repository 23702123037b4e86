/* SPDX-License-Identifier: BSD-3-Clause */
#include "pg/pg_keys.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/parse.h"
#include "common/token.h"
#include "pg/pg_row.h"

/* Advisory lock key ("fg" in the high bytes) of key rotation. */
#define PG_KEYS_LOCK	 "1718026242"
#define PG_KEYS_SALE_LEN 32
#define PG_KEYS_SALE_MAX TOK_KEYS_MAX /* what a data plane's sale key ring holds */

/*
 * When sale key k (not current) can retire, as a timestamptz: the later of
 *   - retired_at + $1 ms: the last purchase token (and reserve path) it signed expires; and
 *   - for each event it could have signed receipts for (open or closed, its window overlapping
 *     the time the key was current, and not closed before the key became current): the end of
 *     its sale (ends_at, or when it was closed) plus its pay window, since buyers poll their
 *     result with the receipt until their order is paid or expired.
 * NULL for a current key and for auth keys (the previous auth key goes at the next auth-set).
 */
/* clang-format off */
#define KEY_RETIRE_AT(k)                                                                     \
	"CASE WHEN " k ".kind = 'sale' AND NOT " k ".current THEN greatest("                \
	k ".retired_at + $1::bigint * interval '1 millisecond', "                          \
	"(SELECT max(CASE WHEN e.state = 'closed' THEN least(e.ends_at, e.updated_at) "     \
	"ELSE e.ends_at END + e.pay_window_s * interval '1 second') FROM events e "         \
	"WHERE e.state IN ('open', 'closed') AND e.starts_at < " k ".retired_at "          \
	"AND e.ends_at > " k ".created_at "                                                 \
	"AND (e.state = 'open' OR e.updated_at > " k ".created_at))) END"
/* clang-format on */

/* Deletes the sale keys past their retirement (inside the caller's transaction or alone). */
static int
keys_delete_retired(
	struct pg_conn *s, const char *life, unsigned *removed, char *err, size_t errlen)
{
	const char *vals[1] = {life};
	PGresult *res;
	int rc;

	res = pg_conn_query(s,
		"DELETE FROM keys k WHERE k.kind = 'sale' AND NOT k.current AND " KEY_RETIRE_AT(
			"k") " <= now() RETURNING k.kid",
		1, vals, &rc, err, errlen);
	if (res == NULL)
		return rc;
	if (removed != NULL)
		*removed = (unsigned)PQntuples(res);
	PQclear(res);
	return 0;
}

int
pg_keys_expire(
	struct pg_conn *s, uint64_t token_life_ms, unsigned *removed, char *err, size_t errlen)
{
	char life[24];

	snprintf(life, sizeof(life), "%" PRIu64, token_life_ms);
	*removed = 0;
	return keys_delete_retired(s, life, removed, err, errlen);
}

int
pg_keys_rotate(struct pg_conn *s, uint64_t token_life_ms, uint32_t *kid, char *err, size_t errlen)
{
	uint8_t secret[PG_KEYS_SALE_LEN];
	char kids[16], life[24];
	const char *vals[2] = {kids, (const char *)secret}, *lv[1] = {life};
	const int lens[2] = {0, PG_KEYS_SALE_LEN}, fmts[2] = {0, 1};
	PGresult *res;
	uint64_t next, live;
	int rc;

	snprintf(life, sizeof(life), "%" PRIu64, token_life_ms);
	if (getrandom(secret, sizeof(secret), 0) != (ssize_t)sizeof(secret)) {
		snprintf(err, errlen, "getrandom: %s", strerror(errno));
		return -EIO;
	}
	rc = pg_conn_begin(s, NULL, "SELECT pg_advisory_xact_lock(" PG_KEYS_LOCK ")", err, errlen);
	if (rc != 0)
		goto out;
	/* Keys past their retirement go first: they make room. */
	rc = keys_delete_retired(s, life, NULL, err, errlen);
	if (rc != 0)
		goto fail;
	/* clang-format off */
	res = pg_conn_query(s,
		"SELECT coalesce(max(kid), 0) + 1, count(*), "
		"(SELECT kid FROM keys k WHERE k.kind = 'sale' AND NOT k.current "
		"ORDER BY " KEY_RETIRE_AT("k") ", kid LIMIT 1), "
		"(SELECT " PG_ROW_MS(KEY_RETIRE_AT("k")) " FROM keys k WHERE k.kind = 'sale' "
		"AND NOT k.current ORDER BY 1, kid LIMIT 1) "
		"FROM keys WHERE kind = 'sale'", 1, lv, &rc, err, errlen);
	/* clang-format on */
	if (res == NULL)
		goto fail;
	next = pg_row_u64(res, 0, 0);
	live = pg_row_u64(res, 0, 1);
	if (live >= PG_KEYS_SALE_MAX) {
		char when[40];

		/* The data planes hold PG_KEYS_SALE_MAX sale keys: another one would push out a
		 * key whose tokens or receipts may still be valid. */
		parse_time_format(pg_row_u64(res, 0, 3), when, sizeof(when));
		snprintf(err, errlen,
			"%" PRIu64 " sale keys still verify (1 current, %" PRIu64 " retiring), as "
			"many as a data plane holds: rotate after %s, when key %s retires (its "
			"last "
			"token or receipt can no longer be valid then)",
			live, live - 1, when, PQgetvalue(res, 0, 2));
		PQclear(res);
		rc = -ENOSPC;
		goto fail;
	}
	PQclear(res);
	if (next > UINT32_MAX) {
		snprintf(err, errlen, "sale key ids are used up (the last is 4294967295)");
		rc = -ENOSPC;
		goto fail;
	}
	snprintf(kids, sizeof(kids), "%" PRIu64, next);
	/* The current key retires now: it verifies until its tokens and receipts are over. */
	rc = pg_conn_exec(s,
		"UPDATE keys SET current = false, retired_at = now() WHERE kind = 'sale' AND "
		"current",
		0, NULL, err, errlen);
	if (rc == 0) {
		res = pg_conn_query_params(s,
			"INSERT INTO keys (kind, kid, secret, current) "
			"VALUES ('sale', $1, $2, true)",
			2, vals, lens, fmts, &rc, err, errlen);
		PQclear(res);
	}
	if (rc == 0)
		rc = pg_conn_commit(s, err, errlen);
	if (rc != 0)
		goto fail;
	*kid = (uint32_t)next;
	goto out;
fail:
	pg_conn_rollback(s);
out:
	explicit_bzero(secret, sizeof(secret));
	return rc;
}

int
pg_keys_auth_set(struct pg_conn *s, uint32_t kid, const uint8_t *secret, size_t len, char *err,
	size_t errlen)
{
	char kids[16];
	const char *vals[2] = {kids, (const char *)secret};
	const int lens[2] = {0, (int)len}, fmts[2] = {0, 1};
	PGresult *res;
	int rc;

	if (len < ADMIN_SECRET_MIN || len > ADMIN_SECRET_MAX) {
		snprintf(err, errlen, "an auth key must be %u..%u bytes, got %zu", ADMIN_SECRET_MIN,
			ADMIN_SECRET_MAX, len);
		return -EINVAL;
	}
	snprintf(kids, sizeof(kids), "%" PRIu32, kid);
	rc = pg_conn_begin(s, NULL, "SELECT pg_advisory_xact_lock(" PG_KEYS_LOCK ")", err, errlen);
	if (rc != 0)
		return rc;
	/*
	 * A new current key: the old current one stays as the previous, older ones go. Setting
	 * the current key again only replaces its secret.
	 */
	rc = pg_conn_exec(s,
		"DELETE FROM keys WHERE kind = 'auth' AND NOT current AND kid <> $1 "
		"AND NOT EXISTS "
		"(SELECT 1 FROM keys WHERE kind = 'auth' AND kid = $1 AND current)",
		1, vals, err, errlen);
	if (rc == 0)
		rc = pg_conn_exec(s,
			"UPDATE keys SET current = false, retired_at = now() "
			"WHERE kind = 'auth' AND current AND kid <> $1",
			1, vals, err, errlen);
	if (rc == 0) {
		res = pg_conn_query_params(s,
			"INSERT INTO keys (kind, kid, secret, current) "
			"VALUES ('auth', $1, $2, true) "
			"ON CONFLICT (kind, kid) DO UPDATE SET secret = excluded.secret, current = "
			"true, retired_at = NULL, created_at = now()",
			2, vals, lens, fmts, &rc, err, errlen);
		PQclear(res);
	}
	if (rc == 0)
		rc = pg_conn_commit(s, err, errlen);
	if (rc != 0)
		pg_conn_rollback(s);
	return rc;
}

int
pg_keys_list(struct pg_conn *s, uint64_t token_life_ms, struct admin_key *out, unsigned cap,
	unsigned *n, char *err, size_t errlen)
{
	char life[24];
	const char *vals[1] = {life};
	PGresult *res;
	int rc;

	snprintf(life, sizeof(life), "%" PRIu64, token_life_ms);
	/* clang-format off */
	res = pg_conn_query(s,
		"SELECT kind, kid, encode(secret, 'hex'), current, " PG_ROW_MS("created_at") ", "
		"coalesce(" PG_ROW_MS("retired_at") ", 0), coalesce(" PG_ROW_MS(KEY_RETIRE_AT("k")) ", 0), "
		"coalesce(" KEY_RETIRE_AT("k") " <= now(), false) FROM keys k "
		"ORDER BY kind DESC, kid",
		1, vals, &rc, err, errlen);
	/* clang-format on */
	if (res == NULL)
		return rc;
	*n = (unsigned)PQntuples(res);
	for (unsigned i = 0; i < *n && i < cap; i++) {
		struct admin_key *k = &out[i];
		size_t len;

		memset(k, 0, sizeof(*k));
		k->kind = strcmp(PQgetvalue(res, (int)i, 0), "sale") == 0 ? WIRE_KEY_SALE
									  : WIRE_KEY_AUTH;
		k->kid = (uint32_t)pg_row_u64(res, (int)i, 1);
		if (parse_hex(PQgetvalue(res, (int)i, 2), k->secret, sizeof(k->secret), &len) == 0)
			k->len = (uint8_t)len;
		k->current = pg_row_bool(res, (int)i, 3);
		k->created_at_ms = pg_row_u64(res, (int)i, 4);
		k->retired_at_ms = pg_row_u64(res, (int)i, 5);
		k->retire_at_ms = pg_row_u64(res, (int)i, 6);
		k->retired = pg_row_bool(res, (int)i, 7);
	}
	/* libpq's copy of the secrets goes with the result; wipe it first. */
	for (int i = 0; i < PQntuples(res); i++)
		explicit_bzero(PQgetvalue(res, i, 2), (size_t)PQgetlength(res, i, 2));
	PQclear(res);
	return 0;
}
