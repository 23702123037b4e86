/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/draw.h"
#include "common/hex.h"
#include "common/log.h"
#include "store/store_conn_int.h"
#include "store/store_wait.h"
#include "store/store_draw.h"

/* A reply's string element as a number (nil: 0). Returns 0 or -1. */
static int
store_elem_u64(const redisReply *e, uint64_t *out)
{
	*out = 0;
	if (e->type == REDIS_REPLY_NIL)
		return 0;
	if (e->type == REDIS_REPLY_INTEGER && e->integer >= 0) {
		*out = (uint64_t)e->integer;
		return 0;
	}
	if (e->type != REDIS_REPLY_STRING)
		return -1;
	return store_parse_u64(e->str, e->len, out);
}

/* Reads an HMGET state n next digest served reply into out. Returns 0 or -EIO. */
static int
store_draw_parse(const redisReply *r, struct store_draw *out)
{
	memset(out, 0, sizeof(*out));
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 5)
		return -EIO;
	const redisReply *st = r->element[0], *dg = r->element[3];

	if (st->type == REDIS_REPLY_STRING) {
		out->exists = true;
		if (strcmp(st->str, "open") == 0)
			out->state = RS_DRAW_OPEN;
		else if (strcmp(st->str, "frozen") == 0)
			out->state = RS_DRAW_FROZEN;
		else if (strcmp(st->str, "done") == 0)
			out->state = RS_DRAW_DONE;
		else
			return -EIO;
	} else if (st->type != REDIS_REPLY_NIL) {
		return -EIO;
	}
	if (store_elem_u64(r->element[1], &out->n) != 0 || store_elem_u64(r->element[2], &out->next) != 0 ||
		out->next > out->n || store_elem_u64(r->element[4], &out->served) != 0)
		return -EIO;
	if (dg->type == REDIS_REPLY_STRING) {
		if (hex_decode(dg->str, dg->len, out->digest, DRAW_DIGEST_LEN) != 0)
			return -EIO;
		out->has_digest = true;
	} else if (dg->type != REDIS_REPLY_NIL) {
		return -EIO;
	}
	return 0;
}

/* Logs a draw key this build cannot read. */
static int
store_draw_bad(struct store *rs, uint32_t event)
{
	rs->st.errors++;
	LOG_RL(LOG_LEVEL_WARN, 10000,
		"redis: the draw key of event %" PRIu32 " holds what this build cannot read", event);
	return -EIO;
}

int
store_enter(struct store *rs, uint32_t event, const struct wire_reserve *res, unsigned n,
	uint8_t *verdicts, unsigned *added, uint64_t *entrants)
{
	char keys[4][RS_KEY_MAX], sha[41];
	static const enum store_key_kind kinds[4] = {
		RS_KEY_ENTRANTS, RS_KEY_DRAW, RS_KEY_WINDOW, RS_KEY_ENTLOG};
	const char **argv = NULL;
	size_t *len = NULL;
	char(*num)[RS_U64_DIGITS] = NULL;
	unsigned argc = 3 + 4 + 2 * n;
	redisReply *r = NULL;
	int rc = -ENOMEM;

	*added = 0;
	*entrants = 0;
	if (n == 0 || n > RS_BATCH_MAX || event == 0)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (res[i].event != event || res[i].user == 0 || res[i].reservation_id == 0)
			return -EINVAL;
	memset(verdicts, WIRE_V_RETRY, n);
	argv = malloc(argc * sizeof(*argv));
	len = malloc(argc * sizeof(*len));
	num = malloc(2 * n * sizeof(*num));
	if (argv == NULL || len == NULL || num == NULL)
		goto out;
	argv[0] = "EVALSHA";
	len[0] = 7;
	argv[1] = sha;
	len[1] = 40;
	argv[2] = "4";
	len[2] = 1;
	for (unsigned k = 0; k < 4; k++) {
		argv[3 + k] = keys[k];
		len[3 + k] = (size_t)store_key(keys[k], RS_KEY_MAX, event, kinds[k]);
	}
	for (unsigned i = 0; i < n; i++) {
		argv[7 + i] = num[i];
		len[7 + i] = store_u64_to_dec(num[i], res[i].user);
		argv[7 + n + i] = num[n + i];
		len[7 + n + i] = store_u64_to_dec(num[n + i], res[i].reservation_id);
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		char why[256];

		rc = 0;
		if (store_ensure_connected(rs) != 0) {
			rc = -ENOTCONN;
			goto out;
		}
		memcpy(sha, rs->scripts[RS_SCRIPT_ENTER].sha1, sizeof(sha));
		r = store_command(rs, (int)argc, argv, len, &rc);
		if (r == NULL)
			goto out;
		if (!store_is_noscript(r) || attempt == 1)
			break;
		freeReplyObject(r);
		r = NULL;
		if (store_load_scripts(rs, why, sizeof(why)) != 0) {
			LOG_RL(LOG_LEVEL_WARN, 10000, "redis: reloading the scripts failed: %s", why);
			rc = rs->c != NULL ? -EIO : -ENOTCONN;
			goto out;
		}
	}
	rc = -EIO;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != (size_t)n + 1) {
		rs->st.errors++;
		LOG_RL(LOG_LEVEL_WARN, 10000, "redis: enter.lua for event %" PRIu32 " failed: %s",
			event, r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
		goto out;
	}
	for (unsigned i = 0; i <= n; i++)
		if (r->element[i]->type != REDIS_REPLY_INTEGER)
			goto out;
	for (unsigned i = 0; i < n; i++) {
		long long v = r->element[i]->integer;

		verdicts[i] = v == 1 || v == 0 ? WIRE_V_QUEUED
			      : v == -2	       ? WIRE_V_CLOSED
			      : v == -3	       ? WIRE_V_NOT_STARTED
					       : WIRE_V_RETRY;
		*added += v == 1;
	}
	if (verdicts[0] == WIRE_V_RETRY)
		rs->st.draw_refused += n;
	*entrants = (uint64_t)r->element[n]->integer;
	/* A queued verdict is a promise too: answered only once the replicas hold it. A user
	 * entered already (by another control plane, or on a connection since lost) makes the
	 * script write nothing: WAIT counts a client's own writes (store_wait.h), so a PUBLISH
	 * first puts this one's offset after the entry. */
	rc = store_wait_reads(rs);
	if (rc != 0)
		*entrants = 0;
out:
	if (rc != 0) {
		memset(verdicts, WIRE_V_RETRY, n);
		*added = 0;
		rs->st.retry += n;
	}
	if (r != NULL)
		freeReplyObject(r);
	free(argv);
	free(len);
	free(num);
	return rc;
}

int
store_draw_freeze(struct store *rs, uint32_t event, struct store_draw *out)
{
	char keys[2][RS_KEY_MAX];
	static const enum store_key_kind kinds[2] = {RS_KEY_ENTRANTS, RS_KEY_DRAW};
	const char *argv[5] = {"EVALSHA", NULL, "2", keys[0], keys[1]};
	size_t len[5] = {7, 40, 1, 0, 0};
	int rc = 0;

	if (event == 0)
		return -EINVAL;
	for (unsigned k = 0; k < 2; k++)
		len[3 + k] = (size_t)store_key(keys[k], RS_KEY_MAX, event, kinds[k]);
	for (int attempt = 0; attempt < 2; attempt++) {
		char why[256];

		if (store_ensure_connected(rs) != 0)
			return -ENOTCONN;
		argv[1] = rs->scripts[RS_SCRIPT_FREEZE].sha1;
		redisReply *r = store_command(rs, 5, argv, len, &rc);

		if (r == NULL)
			return rc;
		if (store_is_noscript(r) && attempt == 0) {
			freeReplyObject(r);
			if (store_load_scripts(rs, why, sizeof(why)) != 0)
				return rs->c != NULL ? -EIO : -ENOTCONN;
			continue;
		}
		rc = store_draw_parse(r, out);
		freeReplyObject(r);
		return rc == 0 ? 0 : store_draw_bad(rs, event);
	}
	return -EIO;
}

int
store_draw_get(struct store *rs, uint32_t event, struct store_draw *out)
{
	char key[RS_KEY_MAX];
	const char *argv[7] = {"HMGET", key, "state", "n", "next", "digest", "served"};
	size_t len[7] = {5, 0, 5, 1, 4, 6, 6};
	int rc = 0;

	if (event == 0)
		return -EINVAL;
	len[1] = (size_t)store_key(key, sizeof(key), event, RS_KEY_DRAW);
	redisReply *r = store_command_ok(rs, 7, argv, len, &rc, event);

	if (r == NULL)
		return rc;
	rc = store_draw_parse(r, out);
	freeReplyObject(r);
	return rc == 0 ? 0 : store_draw_bad(rs, event);
}

int
store_draw_set_digest(struct store *rs, uint32_t event, const uint8_t digest[32])
{
	char key[RS_KEY_MAX], hex[2 * DRAW_DIGEST_LEN + 1];
	const char *argv[4] = {"HSETNX", key, "digest", hex};
	size_t len[4] = {6, 0, 6, 2 * DRAW_DIGEST_LEN};
	struct store_draw d;
	int rc = 0;

	if (event == 0)
		return -EINVAL;
	len[1] = (size_t)store_key(key, sizeof(key), event, RS_KEY_DRAW);
	hex_str(digest, DRAW_DIGEST_LEN, hex);
	redisReply *r = store_command_ok(rs, 4, argv, len, &rc, event);

	if (r == NULL)
		return rc;
	freeReplyObject(r);
	if ((rc = store_draw_get(rs, event, &d)) != 0)
		return rc;
	return d.has_digest && memcmp(d.digest, digest, DRAW_DIGEST_LEN) == 0 ? 0 : -EEXIST;
}

/* Room for more entrants after the n of *v (cap allocated): grown to twice its size plus more
 * (4,096 at first). 0, or -ENOMEM (*v unchanged). */
static int
entrants_room(struct store_entrant **v, size_t n, size_t *cap, size_t more)
{
	if (n + more <= *cap)
		return 0;
	size_t want = (*cap ? *cap * 2 : 4096) + more;
	struct store_entrant *nv = realloc(*v, want * sizeof(**v));

	if (nv == NULL)
		return -ENOMEM;
	*v = nv;
	*cap = want;
	return 0;
}

int
store_entrants_scan(struct store *rs, uint32_t event, uint64_t *cursor, unsigned count,
	struct store_entrant **v, size_t *n, size_t *cap)
{
	char key[RS_KEY_MAX], cur[RS_U64_DIGITS], cnt[RS_U64_DIGITS];
	const char *argv[5] = {"HSCAN", key, cur, "COUNT", cnt};
	size_t len[5] = {5, 0, 0, 5, 0};
	int rc = 0;

	if (event == 0 || count == 0)
		return -EINVAL;
	len[1] = (size_t)store_key(key, sizeof(key), event, RS_KEY_ENTRANTS);
	len[2] = store_u64_to_dec(cur, *cursor);
	len[4] = store_u64_to_dec(cnt, count);
	redisReply *r = store_command_ok(rs, 5, argv, len, &rc, event);

	if (r == NULL)
		return rc;
	rc = -EIO;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		r->element[0]->type != REDIS_REPLY_STRING ||
		r->element[1]->type != REDIS_REPLY_ARRAY || r->element[1]->elements % 2 != 0)
		goto out;
	const redisReply *kv = r->element[1];
	uint64_t next;

	if (store_parse_u64(r->element[0]->str, r->element[0]->len, &next) != 0)
		goto out;
	if (entrants_room(v, *n, cap, kv->elements / 2) != 0) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < kv->elements; i += 2) {
		const redisReply *u = kv->element[i], *id = kv->element[i + 1];
		struct store_entrant e;

		if (u->type != REDIS_REPLY_STRING || id->type != REDIS_REPLY_STRING ||
			store_parse_u64(u->str, u->len, &e.user) != 0 ||
			store_parse_u64(id->str, id->len, &e.reservation_id) != 0 || e.user == 0)
			goto out;
		(*v)[(*n)++] = e;
	}
	*cursor = next;
	rc = 0;
out:
	if (rc == -EIO) {
		rs->st.errors++;
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"redis: the entrants of event %" PRIu32 " hold what this build cannot read",
			event);
	}
	freeReplyObject(r);
	return rc;
}

/*
 * Reads the n replies of store_append_hgets() into v (v[i] 0 for a missing or unreadable
 * field). Returns 0, -ENOTCONN or -EIO (every reply is read all the same, so that the next
 * reads stay aligned).
 */
static int
store_read_u64s(struct store *rs, unsigned n, uint64_t *v)
{
	int rc = 0;

	for (unsigned i = 0; i < n; i++) {
		redisReply *r = store_read_reply(rs);

		if (r == NULL)
			return -ENOTCONN;
		v[i] = 0;
		if (r->type == REDIS_REPLY_STRING) {
			if (store_parse_u64(r->str, r->len, &v[i]) != 0)
				v[i] = 0;
		} else if (r->type != REDIS_REPLY_NIL) {
			rs->st.errors++;
			rc = -EIO;
		}
		freeReplyObject(r);
	}
	return rc;
}

int
store_entrants_get(
	struct store *rs, const struct wire_result_query *q, unsigned n, uint64_t *rids)
{
	int rc;

	if (n == 0)
		return 0;
	if ((rc = store_append_hgets(rs, q, n, RS_KEY_ENTRANTS)) != 0)
		return rc;
	rc = store_read_u64s(rs, n, rids);
	return rc == 0 ? store_wait_reads(rs) : rc;
}

int
store_entrants_ranks(struct store *rs, const struct wire_result_query *q, unsigned n,
	uint64_t *rids, uint64_t *ranks)
{
	int rc, rc2;

	if (n == 0)
		return 0;
	if ((rc = store_append_hgets(rs, q, n, RS_KEY_ENTRANTS)) != 0 ||
		(rc = store_append_hgets(rs, q, n, RS_KEY_WRANK)) != 0)
		return rc;
	rc = store_read_u64s(rs, n, rids);
	if (rc == -ENOTCONN)
		return rc;
	rc2 = store_read_u64s(rs, n, ranks);
	if (rc == 0)
		rc = rc2;
	return rc == 0 ? store_wait_reads(rs) : rc;
}

/* Appends one "<user>:<rid>" record of the log (without its newline) to *v. 0 or -EIO. */
static int
entlog_record(const char *p, size_t len, struct store_entrant **v, size_t *n, size_t *cap)
{
	const char *colon = memchr(p, ':', len);
	struct store_entrant e;

	if (colon == NULL || store_parse_u64(p, (size_t)(colon - p), &e.user) != 0 || e.user == 0 ||
		store_parse_u64(colon + 1, len - (size_t)(colon - p) - 1, &e.reservation_id) != 0)
		return -EIO;
	if (entrants_room(v, *n, cap, 1) != 0)
		return -ENOMEM;
	(*v)[(*n)++] = e;
	return 0;
}

int
store_entrants_log_read(
	struct store *rs, uint32_t event, struct store_entrant **v, size_t *n, size_t *cap)
{
	char key[RS_KEY_MAX], from[RS_U64_DIGITS], to[RS_U64_DIGITS];
	const char *argv[4] = {"GETRANGE", key, from, to};
	size_t len[4] = {8, 0, 0, 0};
	char carry[2 * RS_U64_DIGITS + 2]; /* a record cut by a slice's end */
	size_t ncarry = 0;
	uint64_t off = 0;
	int rc = 0;

	if (event == 0)
		return -EINVAL;
	len[1] = (size_t)store_key(key, sizeof(key), event, RS_KEY_ENTLOG);
	for (;;) {
		len[2] = store_u64_to_dec(from, off);
		len[3] = store_u64_to_dec(to, off + RS_ENTLOG_SLICE - 1);
		redisReply *r = store_command_ok(rs, 4, argv, len, &rc, event);

		if (r == NULL)
			return rc;
		if (r->type != REDIS_REPLY_STRING) {
			freeReplyObject(r);
			rc = -EIO;
			break;
		}
		const char *p = r->str, *end = r->str + r->len;

		while (rc == 0 && p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t part = (size_t)((nl != NULL ? nl : end) - p);

			if (ncarry + part > sizeof(carry)) {
				rc = -EIO;
				break;
			}
			if (nl == NULL) { /* the slice ends inside this record */
				memcpy(carry + ncarry, p, part);
				ncarry += part;
				break;
			}
			if (ncarry > 0) {
				memcpy(carry + ncarry, p, part);
				rc = entlog_record(carry, ncarry + part, v, n, cap);
				ncarry = 0;
			} else {
				rc = entlog_record(p, part, v, n, cap);
			}
			p = nl + 1;
		}
		bool last = r->len < RS_ENTLOG_SLICE;

		off += r->len;
		freeReplyObject(r);
		if (rc != 0 || last)
			break;
	}
	if (rc == 0 && ncarry > 0)
		rc = -EIO;
	if (rc == -EIO) {
		rs->st.errors++;
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"redis: the entrants' log of event %" PRIu32 " holds what this build cannot "
			"read (at byte %" PRIu64 ")",
			event, off);
	}
	return rc;
}

int
store_entrants_log_drop(struct store *rs, uint32_t event)
{
	char key[RS_KEY_MAX];
	const char *argv[2] = {"UNLINK", key};
	size_t len[2] = {6, 0};
	int rc = 0;

	if (event == 0)
		return -EINVAL;
	len[1] = (size_t)store_key(key, sizeof(key), event, RS_KEY_ENTLOG);
	redisReply *r = store_command_ok(rs, 2, argv, len, &rc, event);

	if (r == NULL)
		return rc;
	rc = r->type == REDIS_REPLY_INTEGER ? 0 : -EIO;
	freeReplyObject(r);
	return rc;
}

int
store_entrants_count(struct store *rs, uint32_t event, uint64_t *n)
{
	char key[RS_KEY_MAX];
	const char *argv[2] = {"HLEN", key};
	size_t len[2] = {4, 0};
	int rc = 0;

	if (event == 0)
		return -EINVAL;
	len[1] = (size_t)store_key(key, sizeof(key), event, RS_KEY_ENTRANTS);
	redisReply *r = store_command_ok(rs, 2, argv, len, &rc, event);

	if (r == NULL)
		return rc;
	rc = r->type == REDIS_REPLY_INTEGER && r->integer >= 0 ? 0 : -EIO;
	if (rc == 0)
		*n = (uint64_t)r->integer;
	freeReplyObject(r);
	return rc;
}

/*
 * KEYS[1] the draw key, KEYS[2] the waiting list, KEYS[3] the stock, KEYS[4] the result hash,
 * KEYS[5] the released set. Returns {served, waiting, final}: final 1 when no item can come
 * back, i.e. the stock is 0 and every buyer still holding an item (HLEN(result) - |released|)
 * has paid (the draw key's "paid", store_results_paid()); in one script, so the four are read
 * at one moment.
 */
static const char draw_waiting_lua[] =
	"local served = tonumber(redis.call('HGET', KEYS[1], 'served') or '0') or 0\n"
	"local waiting = redis.call('LLEN', KEYS[2])\n"
	"local stock = tonumber(redis.call('GET', KEYS[3]) or '')\n"
	"local held = redis.call('HLEN', KEYS[4]) - redis.call('SCARD', KEYS[5])\n"
	"local paid = tonumber(redis.call('HGET', KEYS[1], 'paid') or '0') or 0\n"
	"local final = 0\n"
	"if stock and stock <= 0 and held <= paid then final = 1 end\n"
	"return {served, waiting, final}\n";

int
store_draw_waiting(
	struct store *rs, uint32_t event, uint64_t *served, uint64_t *waiting, bool *final)
{
	static const enum store_key_kind kinds[5] = {
		RS_KEY_DRAW, RS_KEY_WAIT, RS_KEY_STOCK, RS_KEY_RESULT, RS_KEY_RELEASED};
	char keys[5][RS_KEY_MAX];
	const char *argv[8] = {"EVAL", draw_waiting_lua, "5"};
	size_t len[8];
	uint64_t f = 0;
	int rc = 0;

	*served = *waiting = 0;
	*final = false;
	if (event == 0)
		return -EINVAL;
	for (unsigned i = 0; i < 5; i++) {
		store_key(keys[i], sizeof(keys[i]), event, kinds[i]);
		argv[3 + i] = keys[i];
	}
	store_argv_strs(argv, len, 8);
	redisReply *r = store_command_ok(rs, 8, argv, len, &rc, event);

	if (r == NULL)
		return rc;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
		store_elem_u64(r->element[0], served) != 0 ||
		store_elem_u64(r->element[1], waiting) != 0 ||
		store_elem_u64(r->element[2], &f) != 0)
		rc = -EIO;
	freeReplyObject(r);
	*final = rc == 0 && f == 1;
	return rc;
}
