/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/wire.h"
#include "store/store_conn_int.h"
#include "store/store_wait.h"
#include "store/store_outbox.h"
#include "store/store_result.h"

#define RS_STREAM_ID_MAX 48 /* "18446744073709551615-18446744073709551615" */

/* Parses a stream id "ms-seq". Returns 0 or -1. */
static int
store_parse_stream_id(const char *s, size_t len, uint64_t *ms, uint64_t *seq)
{
	const char *dash = memchr(s, '-', len);

	if (dash == NULL)
		return -1;
	return store_parse_u64(s, (size_t)(dash - s), ms) == 0 &&
			       store_parse_u64(dash + 1, len - (size_t)(dash + 1 - s), seq) == 0
		       ? 0
		       : -1;
}

static int
store_format_stream_id(char *buf, size_t cap, uint64_t ms, uint64_t seq)
{
	return snprintf(buf, cap, "%" PRIu64 "-%" PRIu64, ms, seq);
}

void
store_outbox_buf_free(struct store_outbox_buf *b)
{
	free(b->rec);
	memset(b, 0, sizeof(*b));
}

/* Makes room for want more records in b. Returns 0 or -ENOMEM. */
static int
store_outbox_buf_reserve(struct store_outbox_buf *b, size_t want)
{
	size_t cap = b->cap ? b->cap : 256;
	struct store_outbox_rec *p;

	if ((size_t)b->n + want <= b->cap)
		return 0;
	if ((size_t)b->n + want > UINT32_MAX / 2)
		return -ENOMEM;
	while (cap < (size_t)b->n + want)
		cap *= 2;
	p = realloc(b->rec, cap * sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	b->rec = p;
	b->cap = (unsigned)cap;
	return 0;
}

/* Closes the reservation being parsed: checks it and counts it in the entry. */
static void
store_rec_finish(struct store_outbox_rec *r, bool have_u, bool have_r)
{
	r->valid = have_u && have_r && r->user >= 1 && r->user <= WIRE_USER_MAX &&
		   r->reservation_id != 0;
}

/*
 * Appends the reservations of one stream entry reply [id, [field, value, ...]] (value nil: the
 * entry was deleted while pending) to b. A reservation starts at a field that the current one
 * already has, so u, r (and t, in older entries) repeated in any order within each group parse
 * alike; unknown fields
 * are ignored. A deleted entry, or one without any field, gives one invalid record (it is
 * acknowledged without an order). Returns 0, -1 for a reply that is not an entry, or -ENOMEM.
 */
static int
store_take_entry(const redisReply *r, struct store_outbox_buf *b)
{
	uint64_t ms, seq;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		r->element[0]->type != REDIS_REPLY_STRING ||
		store_parse_stream_id(r->element[0]->str, r->element[0]->len, &ms, &seq) != 0)
		return -1;
	const redisReply *f = r->element[1];
	size_t pairs = f->type == REDIS_REPLY_ARRAY ? f->elements / 2 : 0;
	unsigned first = b->n, have = 0; /* bits: u, r, t of the current reservation */
	bool cur = false;

	if (store_outbox_buf_reserve(b, pairs > 0 ? pairs : 1) != 0)
		return -ENOMEM;
	for (size_t i = 0; i < pairs; i++) {
		const redisReply *k = f->element[2 * i], *v = f->element[2 * i + 1];
		static const char names[] = "urt";
		const char *which;
		uint64_t x = 0;
		bool num;

		if (k->type != REDIS_REPLY_STRING || k->len != 1 || k->str[0] == '\0' ||
			(which = strchr(names, k->str[0])) == NULL)
			continue;
		unsigned bit = 1u << (which - names);

		if (!cur || (have & bit)) {
			if (cur)
				store_rec_finish(&b->rec[b->n - 1], have & 1, have & 2);
			b->rec[b->n++] = (struct store_outbox_rec){
				.id_ms = ms, .id_seq = seq, .admitted_ms = ms};
			cur = true;
			have = 0;
		}
		have |= bit;
		num = v->type == REDIS_REPLY_STRING && store_parse_u64(v->str, v->len, &x) == 0;
		struct store_outbox_rec *rec = &b->rec[b->n - 1];

		if (bit == 1)
			rec->user = num ? x : 0;
		else if (bit == 2)
			rec->reservation_id = num ? x : 0;
		else if (num)
			rec->admitted_ms = x; /* entries written before 't' was dropped */
	}
	if (cur)
		store_rec_finish(&b->rec[b->n - 1], have & 1, have & 2);
	else
		b->rec[b->n++] =
			(struct store_outbox_rec){.id_ms = ms, .id_seq = seq, .admitted_ms = ms};
	for (unsigned i = first; i < b->n; i++) {
		b->rec[i].index = i - first;
		b->rec[i].count = b->n - first;
	}
	b->entries++;
	return 0;
}

/* Replaces b's records with those of the entries of a reply array. Returns entries or < 0. */
static int
store_take_entries(const redisReply *list, struct store_outbox_buf *b)
{
	b->n = 0;
	b->entries = 0;
	if (list->type != REDIS_REPLY_ARRAY)
		return -EIO;
	for (size_t i = 0; i < list->elements; i++)
		if (store_take_entry(list->element[i], b) == -ENOMEM) {
			b->n = 0;
			b->entries = 0;
			return -ENOMEM;
		}
	return (int)b->entries;
}

int
store_outbox_group_create(struct store *rs, uint32_t event, const char *group)
{
	char key[RS_KEY_MAX];
	const char *argv[] = {"XGROUP", "CREATE", key, group, "0", "MKSTREAM"};
	size_t len[6];
	int err = 0;

	if (event == 0 || group == NULL || group[0] == '\0')
		return -EINVAL;
	store_key(key, sizeof(key), event, RS_KEY_OUTBOX);
	store_argv_strs(argv, len, 6);
	redisReply *r = store_command(rs, 6, argv, len, &err);

	if (r == NULL)
		return err;
	if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "BUSYGROUP", 9) != 0) {
		LOG_RL(LOG_LEVEL_WARN, 10000, "redis: XGROUP CREATE on event %" PRIu32 ": %s",
			event, r->str);
		err = -EIO;
	}
	freeReplyObject(r);
	return err;
}

/*
 * With [redis] wait_replicas: entries read are made orders only once the replicas hold them
 * (WAIT after the read, whose own write to the group comes after every batch it returns): an
 * old primary cut off from its replicas may hold batches that a failover loses (answered retry
 * to their buyers), which must not become orders. Entries not confirmed stay pending, to be
 * claimed again. Returns n, or -ETIMEDOUT / -ENOTCONN with out emptied.
 */
static int
store_outbox_replicated(struct store *rs, struct store_outbox_buf *out, int n)
{
	int rc;

	if (n <= 0 || (rc = store_wait_replicas(rs)) == 0)
		return n;
	out->n = 0;
	out->entries = 0;
	return rc;
}

int
store_outbox_read(struct store *rs, uint32_t event, const char *group, const char *consumer,
	unsigned max, struct store_outbox_buf *out)
{
	char key[RS_KEY_MAX], count[16];
	const char *argv[] = {
		"XREADGROUP", "GROUP", group, consumer, "COUNT", count, "STREAMS", key, ">"};
	size_t len[9];
	int err = 0, n;

	if (event == 0 || max == 0 || max > RS_BATCH_MAX)
		return -EINVAL;
	store_key(key, sizeof(key), event, RS_KEY_OUTBOX);
	snprintf(count, sizeof(count), "%u", max);
	store_argv_strs(argv, len, 9);
	redisReply *r = store_command_ok(rs, 9, argv, len, &err, event);

	if (r == NULL)
		return err;
	out->n = 0;
	out->entries = 0;
	if (r->type == REDIS_REPLY_NIL) {
		n = 0;
	} else if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
		   r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 2) {
		n = store_take_entries(r->element[0]->element[1], out);
	} else {
		n = -EIO;
	}
	freeReplyObject(r);
	return store_outbox_replicated(rs, out, n);
}

int
store_outbox_claim(struct store *rs, uint32_t event, const char *group, const char *consumer,
	uint64_t min_idle_ms, char *cursor, size_t cursor_cap, unsigned max,
	struct store_outbox_buf *out)
{
	char key[RS_KEY_MAX], count[16], idle[24];
	const char *argv[] = {"XAUTOCLAIM", key, group, consumer, idle, cursor, "COUNT", count};
	size_t len[8];
	int err = 0, n;
	uint64_t ms, seq;

	if (event == 0 || max == 0 || max > RS_BATCH_MAX || cursor_cap < RS_STREAM_ID_MAX)
		return -EINVAL;
	store_key(key, sizeof(key), event, RS_KEY_OUTBOX);
	snprintf(count, sizeof(count), "%u", max);
	snprintf(idle, sizeof(idle), "%" PRIu64, min_idle_ms);
	store_argv_strs(argv, len, 8);
	redisReply *r = store_command_ok(rs, 8, argv, len, &err, event);

	if (r == NULL)
		return err;
	out->n = 0;
	out->entries = 0;
	out->deleted = 0;
	if (r->type == REDIS_REPLY_ARRAY && r->elements >= 2 &&
		r->element[0]->type == REDIS_REPLY_STRING &&
		store_parse_stream_id(r->element[0]->str, r->element[0]->len, &ms, &seq) == 0) {
		n = store_take_entries(r->element[1], out);
		/* Redis 7: the ids of pending entries no longer there, dropped from the group. */
		if (r->elements >= 3 && r->element[2]->type == REDIS_REPLY_ARRAY)
			out->deleted = (unsigned)r->element[2]->elements;
		/* Out of memory: the scan goes on from the same place next time. */
		if (n >= 0)
			store_format_stream_id(cursor, cursor_cap, ms, seq);
	} else {
		n = -EIO;
	}
	freeReplyObject(r);
	return store_outbox_replicated(rs, out, n);
}

int
store_outbox_ack(struct store *rs, uint32_t event, const char *group,
	const struct store_outbox_rec *e, unsigned n)
{
	char key[RS_KEY_MAX];
	const char **argv;
	size_t *len;
	char(*ids)[RS_STREAM_ID_MAX];
	int err = 0;

	if (n == 0)
		return 0;
	argv = malloc((3 + n) * sizeof(*argv));
	len = malloc((3 + n) * sizeof(*len));
	ids = malloc(n * sizeof(*ids));
	if (argv == NULL || len == NULL || ids == NULL) {
		err = -ENOMEM;
		goto out;
	}
	store_key(key, sizeof(key), event, RS_KEY_OUTBOX);
	argv[0] = "XACK";
	argv[1] = key;
	argv[2] = group;
	for (unsigned i = 0; i < n; i++) {
		store_format_stream_id(ids[i], sizeof(ids[i]), e[i].id_ms, e[i].id_seq);
		argv[3 + i] = ids[i];
	}
	store_argv_strs(argv, len, (int)(3 + n));
	redisReply *r = store_command_ok(rs, (int)(3 + n), argv, len, &err, event);

	if (r != NULL) {
		err = r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -EIO;
		freeReplyObject(r);
	}
out:
	free(argv);
	free(len);
	free(ids);
	return err;
}

int
store_outbox_pending(struct store *rs, uint32_t event, const char *group, uint64_t *count,
	uint64_t *oldest_ms, uint64_t *oldest_seq)
{
	char key[RS_KEY_MAX];
	const char *argv[] = {"XPENDING", key, group};
	size_t len[3];
	int err = 0;

	store_key(key, sizeof(key), event, RS_KEY_OUTBOX);
	store_argv_strs(argv, len, 3);
	redisReply *r = store_command_ok(rs, 3, argv, len, &err, event);

	if (r == NULL)
		return err;
	*count = 0;
	*oldest_ms = *oldest_seq = 0;
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 2 ||
		r->element[0]->type != REDIS_REPLY_INTEGER) {
		err = -EIO;
	} else {
		*count = (uint64_t)r->element[0]->integer;
		if (*count > 0 && (r->element[1]->type != REDIS_REPLY_STRING ||
					  store_parse_stream_id(r->element[1]->str, r->element[1]->len,
						  oldest_ms, oldest_seq) != 0))
			err = -EIO;
	}
	freeReplyObject(r);
	return err;
}

/*
 * KEYS[1] the outbox, ARGV[1] the group. One script, so that no entry can be delivered between
 * finding the bound and trimming: the bound is the oldest pending entry, else the group's last
 * delivered one (everything before it was acknowledged). Returns how many entries went.
 */
static const char outbox_trim_lua[] =
	"local p = redis.call('XPENDING', KEYS[1], ARGV[1])\n"
	"local minid = nil\n"
	"if p[1] > 0 then\n"
	"\tminid = p[2]\n"
	"else\n"
	"\tfor _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do\n"
	"\t\tlocal name, last\n"
	"\t\tfor i = 1, #g, 2 do\n"
	"\t\t\tif g[i] == 'name' then name = g[i + 1] end\n"
	"\t\t\tif g[i] == 'last-delivered-id' then last = g[i + 1] end\n"
	"\t\tend\n"
	"\t\tif name == ARGV[1] then minid = last end\n"
	"\tend\n"
	"end\n"
	"if not minid or minid == '0-0' then return 0 end\n"
	"return redis.call('XTRIM', KEYS[1], 'MINID', minid)\n";

int
store_outbox_trim(struct store *rs, uint32_t event, const char *group, uint64_t *trimmed)
{
	char key[RS_KEY_MAX];
	const char *argv[] = {"EVAL", outbox_trim_lua, "1", key, group};
	size_t len[5];
	int err = 0;

	store_key(key, sizeof(key), event, RS_KEY_OUTBOX);
	store_argv_strs(argv, len, 5);
	redisReply *r = store_command_ok(rs, 5, argv, len, &err, event);

	if (r == NULL)
		return err;
	if (r->type == REDIS_REPLY_INTEGER) {
		if (trimmed != NULL)
			*trimmed = (uint64_t)r->integer;
	} else {
		err = -EIO;
	}
	freeReplyObject(r);
	return err;
}

/*
 * KEYS[1] the result hash, KEYS[2] the outbox; ARGV[1] the group, ARGV[2] the number p of
 * field/value pairs that follow, then the stream ids. One script, so that the entries are
 * acknowledged only once their results are written: an HSET that fails stops it before XACK.
 */
/*
 * KEYS[1] the result hash, KEYS[2] the outbox; ARGV[1] the group, ARGV[2] p, then p pairs
 * (user, "O:..."), then the entry ids to acknowledge. A user whose result became final
 * meanwhile (X: released, C: cancelled, P: paid, S: released unordered) keeps it: an order
 * expired by the sweeper between this writer's COMMIT and its publishing must not be shown
 * "ordered" again.
 */
static const char results_ack_lua[] =
	"local p = tonumber(ARGV[2])\n"
	"if p > 0 then\n"
	"  local users = {}\n"
	"  for i = 1, p do users[i] = ARGV[1 + 2 * i] end\n"
	"  local cur = redis.call('HMGET', KEYS[1], unpack(users))\n"
	"  local set, k = {}, 0\n"
	"  for i = 1, p do\n"
	"    local c = cur[i] and string.sub(cur[i], 1, 2)\n"
	"    if c ~= 'X:' and c ~= 'C:' and c ~= 'P:' and c ~= 'S:' then\n"
	"      set[k + 1] = users[i]\n"
	"      set[k + 2] = ARGV[2 + 2 * i]\n"
	"      k = k + 2\n"
	"    end\n"
	"  end\n"
	"  if k > 0 then redis.call('HSET', KEYS[1], unpack(set)) end\n"
	"end\n"
	"if #ARGV < 3 + 2 * p then return 0 end\n"
	"return redis.call('XACK', KEYS[2], ARGV[1], unpack(ARGV, 3 + 2 * p, #ARGV))\n";

int
store_results_ordered_ack(struct store *rs, uint32_t event, const char *group,
	const struct store_order_result *res, unsigned n_res, const struct store_outbox_rec *e,
	unsigned n)
{
	char key_res[RS_KEY_MAX], key_out[RS_KEY_MAX], pairs[16];
	unsigned argc = 7 + 2 * n_res + n;
	const char **argv;
	size_t *len;
	char(*buf)[2 * RS_U64_DIGITS + 4 * RS_U64_DIGITS / 2 + 8];
	int err = 0;

	if (event == 0 || group == NULL || n_res > RS_BATCH_MAX || n > RS_BATCH_MAX)
		return -EINVAL;
	if (n_res == 0 && n == 0)
		return 0;
	argv = malloc(argc * sizeof(*argv));
	len = malloc(argc * sizeof(*len));
	/* Two per result, one per id: both fit the same slot size. */
	buf = malloc((2 * n_res + n + 1) * sizeof(*buf));
	if (argv == NULL || len == NULL || buf == NULL) {
		err = -ENOMEM;
		goto out;
	}
	store_key(key_res, sizeof(key_res), event, RS_KEY_RESULT);
	store_key(key_out, sizeof(key_out), event, RS_KEY_OUTBOX);
	snprintf(pairs, sizeof(pairs), "%u", n_res);
	argv[0] = "EVAL";
	argv[1] = results_ack_lua;
	argv[2] = "2";
	argv[3] = key_res;
	argv[4] = key_out;
	argv[5] = group;
	argv[6] = pairs;
	store_argv_strs(argv, len, 7);
	for (unsigned i = 0; i < n_res; i++) {
		char *u = buf[2 * i], *v = buf[2 * i + 1];

		len[7 + 2 * i] = store_u64_to_dec(u, res[i].user);
		len[8 + 2 * i] = store_result_format(v, sizeof(buf[0]),
			&(struct store_result){.verdict = WIRE_V_ORDERED,
				.reservation_id = res[i].reservation_id,
				.order_id = res[i].order_id,
				.pay_deadline_ms = res[i].pay_deadline_ms});
		argv[7 + 2 * i] = u;
		argv[8 + 2 * i] = v;
	}
	for (unsigned i = 0; i < n; i++) {
		char *id = buf[2 * n_res + i];

		store_format_stream_id(id, sizeof(buf[0]), e[i].id_ms, e[i].id_seq);
		argv[7 + 2 * n_res + i] = id;
		len[7 + 2 * n_res + i] = strlen(id);
	}
	redisReply *r = store_command_ok(rs, (int)argc, argv, len, &err, event);

	if (r != NULL) {
		err = r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -EIO;
		freeReplyObject(r);
	}
out:
	free(argv);
	free(len);
	free(buf);
	return err;
}
