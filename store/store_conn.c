/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "common/backoff.h"
#include "common/log.h"
#include "common/secret_input.h"
#include "common/now.h"
#include "lua/lua_scripts.h"
#include "store/store_conn_int.h"

#define RS_DEFAULT_HOST		   "127.0.0.1"
#define RS_DEFAULT_PORT		   6379
#define RS_DEFAULT_CONNECT_TIMEOUT 1000
#define RS_DEFAULT_COMMAND_TIMEOUT 2000
#define RS_DEFAULT_BACKOFF_MIN	   50
#define RS_DEFAULT_BACKOFF_MAX	   2000
#define RS_DEFAULT_WAIT_TIMEOUT	   500

/*
 * Sets an event's stock before its sale, unless somebody already reserved. It is a script so
 * that the check and the write are one atomic step. KEYS: stock, result, outbox, entrants (any
 * of the three refuses), draw and entrants' log (deleted); ARGV: stock.
 * Returns 1 when set, 0 when refused. store_preheat() (store_event.c) runs it; it is loaded with
 * the other scripts on every connection.
 */
static const char preheat_lua[] =
	"if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 or\n"
	"\tredis.call('EXISTS', KEYS[4]) == 1 then\n"
	"\treturn 0\n"
	"end\n"
	"redis.call('DEL', KEYS[5], KEYS[6])\n"
	"redis.call('SET', KEYS[1], ARGV[1])\n"
	"return 1\n";

static struct timeval
store_timeval(unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	return tv;
}

void
store_lost(struct store *rs, const char *why)
{
	if (rs->c != NULL) {
		redisFree(rs->c);
		rs->c = NULL;
		rs->st.outages++;
	}
	if (!rs->in_outage) {
		LOG_WARN("redis: lost the connection to %s (%s); reservations are answered retry "
			 "until it is back",
			rs->where, why);
		rs->in_outage = true;
		rs->outage_since_ms = now_mono_ms();
		rs->attempts = 0;
		rs->backoff_ms = rs->cfg.backoff_min_ms;
		/* Redis may be back already (a quick restart): try at once, then back off. */
		rs->next_attempt_ms = rs->outage_since_ms;
	}
}

redisReply *
store_read_reply(struct store *rs)
{
	void *reply = NULL;

	if (redisGetReply(rs->c, &reply) != REDIS_OK || reply == NULL) {
		int e = errno;
		char why[160];

		/* hiredis reports the socket timeout as the errno of the read. */
		if (rs->c->err == REDIS_ERR_IO && (e == EAGAIN || e == EWOULDBLOCK))
			snprintf(why, sizeof(why), "no reply within the command timeout of %u ms",
				rs->cfg.command_timeout_ms);
		else
			snprintf(why, sizeof(why), "%s",
				rs->c->errstr[0] ? rs->c->errstr : "no reply");
		store_lost(rs, why);
		return NULL;
	}
	/* The node became a replica: a failover (store/store_sentinel.h). */
	if (((redisReply *)reply)->type == REDIS_REPLY_ERROR &&
		strncmp(((redisReply *)reply)->str, "READONLY", 8) == 0)
		rs->failover_seen = true;
	return reply;
}

int
store_load_scripts(struct store *rs, char *why, size_t why_len)
{
	int rc = 0;

	rs->st.script_loads++;
	for (unsigned i = 0; i < RS_SCRIPT_MAX; i++) {
		const char *argv[] = {"SCRIPT", "LOAD", rs->scripts[i].text};
		const size_t len[] = {6, 4, rs->scripts[i].len};

		if (redisAppendCommandArgv(rs->c, 3, argv, len) != REDIS_OK) {
			/* The replies of what was appended would misalign the next call's. */
			store_lost(rs, "out of memory");
			snprintf(why, why_len, "out of memory");
			return -1;
		}
	}
	for (unsigned i = 0; i < RS_SCRIPT_MAX; i++) {
		struct store_script *s = &rs->scripts[i];
		redisReply *r = store_read_reply(rs);

		if (r == NULL) {
			snprintf(why, why_len, "the connection was lost while loading the scripts");
			return -1;
		}
		if (r->type != REDIS_REPLY_STRING || r->len != 40) {
			if (rc == 0)
				snprintf(why, why_len, "SCRIPT LOAD %s.lua: %s", s->name,
					r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
			rc = -1;
		} else if (s->want_sha1 != NULL && memcmp(r->str, s->want_sha1, 40) != 0) {
			if (rc == 0)
				snprintf(why, why_len,
					"SCRIPT LOAD %s.lua answered SHA1 %.40s, the build "
					"embedded %s",
					s->name, r->str, s->want_sha1);
			rc = -1;
		} else {
			memcpy(s->sha1, r->str, 40);
			s->sha1[40] = '\0';
		}
		freeReplyObject(r);
	}
	return rc;
}

/*
 * The settings an acknowledged reservation relies on: Redis writes every command to its
 * append-only file and syncs it before replying (a crash must not forget a reservation the
 * buyer was told about), and never evicts a key when memory runs out (an evicted stock or
 * buyers set would sell again). Returns 0, -1 with why naming the setting, or -2 with why
 * filled when the connection failed.
 */
static int
store_check_settings(struct store *rs, char *why, size_t why_len)
{
	static const struct {
		const char *name, *want, *because;
	} need[] = {
		{"appendonly", "yes",
			"without the append-only file a restart forgets acknowledged reservations"},
		{"appendfsync", "always",
			"otherwise a crash of Redis or of the host loses the last acknowledged "
			"reservations"},
		{"maxmemory-policy", "noeviction",
			"an evicted stock, buyers or outbox key would sell again or lose orders"},
	};

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		redisReply *r = redisCommand(rs->c, "CONFIG GET %s", need[i].name);

		if (r == NULL) {
			snprintf(why, why_len, "the connection was lost while checking its settings: %s",
				rs->c->errstr);
			return -2;
		}
		if (r->type == REDIS_REPLY_ERROR || r->type != REDIS_REPLY_ARRAY ||
			r->elements != 2 || r->element[1]->type != REDIS_REPLY_STRING) {
			snprintf(why, why_len,
				"its settings could not be checked (CONFIG GET %s: %s): check that "
				"appendonly is yes, appendfsync always and maxmemory-policy "
				"noeviction, then set redis.unsafe_settings = yes",
				need[i].name, r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
			freeReplyObject(r);
			return -1;
		}
		if (strcmp(r->element[1]->str, need[i].want) != 0) {
			snprintf(why, why_len,
				"it runs with %s %s, flashgate needs %s %s: %s (set it in redis.conf, "
				"or redis.unsafe_settings = yes to accept the risk)",
				need[i].name, r->element[1]->str, need[i].name, need[i].want,
				need[i].because);
			freeReplyObject(r);
			return -1;
		}
		freeReplyObject(r);
	}
	return 0;
}

/* One connection attempt, scripts included. Returns 0, or -1 with why filled. */
static int
store_connect(struct store *rs, char *why, size_t why_len)
{
	struct timeval ctv = store_timeval(rs->cfg.connect_timeout_ms);
	redisContext *c;
	int rc;

	if (store_locate_primary(rs, why, why_len) != 0)
		return -1;
	if (rs->unix_path[0] != '\0')
		c = redisConnectUnixWithTimeout(rs->unix_path, ctv);
	else
		c = redisConnectWithTimeout(rs->host, (int)rs->cfg.port, ctv);
	if (c == NULL) {
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	if (c->err) {
		snprintf(why, why_len, "%s", c->errstr);
		redisFree(c);
		return -1;
	}
	if (redisSetTimeout(c, store_timeval(rs->cfg.command_timeout_ms)) != REDIS_OK ||
		(rs->unix_path[0] == '\0' && redisEnableKeepAlive(c) != REDIS_OK)) {
		snprintf(why, why_len, "cannot set socket options: %s", c->errstr);
		redisFree(c);
		return -1;
	}
	rs->c = c;
	rs->settings_refused = false;
	if (rs->password[0] != '\0') {
		redisReply *r = rs->user[0] != '\0'
					? redisCommand(c, "AUTH %s %s", rs->user, rs->password)
					: redisCommand(c, "AUTH %s", rs->password);

		if (r == NULL || r->type == REDIS_REPLY_ERROR) {
			snprintf(why, why_len, "AUTH%s%s refused: %s (check [redis] user and password_file)",
				rs->user[0] ? " as " : "", rs->user,
				r != NULL ? r->str : c->errstr);
			rs->settings_refused = r != NULL;
			freeReplyObject(r);
			redisFree(rs->c);
			rs->c = NULL;
			return -1;
		}
		freeReplyObject(r);
	}
	rc = rs->cfg.check_settings ? store_check_settings(rs, why, why_len) : 0;
	if (rc == 0)
		rc = store_check_replication(rs, rs->c, why, why_len);
	if (rc != 0) {
		if (rc == -1) {
			rs->settings_refused = true;
			/* store_open() returns it; a reconnect logs it, once until it changes. */
			if (rs->in_outage && strcmp(why, rs->settings_why) != 0) {
				LOG_ERR("redis: refusing %s: %s", rs->where, why);
				snprintf(rs->settings_why, sizeof(rs->settings_why), "%s", why);
			}
		}
		redisFree(rs->c);
		rs->c = NULL;
		return -1;
	}
	rs->settings_why[0] = '\0';
	if (store_load_scripts(rs, why, why_len) != 0) {
		if (rs->c != NULL) {
			redisFree(rs->c);
			rs->c = NULL;
		}
		return -1;
	}
	rs->st.connects++;
	rs->conn_id++;
	return 0;
}

int
store_ensure_connected(struct store *rs)
{
	char why[512];
	uint64_t now;

	if (rs->c != NULL) {
		struct pollfd p = {.fd = rs->c->fd, .events = POLLIN};

		/* Between calls Redis owes no reply, so a readable socket means it closed the
		 * connection (a restart): notice it now rather than fail the next pipeline. */
		if (store_failover_noticed(rs))
			store_lost(rs, "a failover: asking Sentinel for the primary");
		else if (poll(&p, 1, 0) == 0)
			return 0;
		else
			store_lost(rs, "the server closed the connection");
	} else if (store_failover_noticed(rs)) {
		rs->next_attempt_ms = 0; /* the new primary is known: no backoff */
	}
	now = now_mono_ms();
	if (now < rs->next_attempt_ms)
		return -ENOTCONN;
	rs->attempts++;
	if (store_connect(rs, why, sizeof(why)) != 0) {
		LOG_DEBUG("redis: %s: attempt %u failed: %s", rs->where, rs->attempts, why);
		rs->next_attempt_ms = now + rs->backoff_ms;
		rs->backoff_ms = backoff_double(rs->backoff_ms, rs->cfg.backoff_max_ms);
		return -ENOTCONN;
	}
	if (rs->in_outage) {
		LOG_NOTICE("redis: connected to %s again after %" PRIu64 " ms (%u attempts)",
			rs->where, now_mono_ms() - rs->outage_since_ms, rs->attempts);
		rs->in_outage = false;
	}
	return 0;
}

int
store_reconnect_now(struct store *rs)
{
	if (rs->c == NULL)
		rs->next_attempt_ms = 0;
	return store_ensure_connected(rs);
}

bool
store_connected(const struct store *rs)
{
	return rs->c != NULL;
}

/* Checks c and fills rs's copy with the defaults. Returns 0, or -1 with err filled. */
static int
store_conn_config_apply(struct store *rs, const struct store_conn_config *c, char *err, size_t err_len)
{
	rs->cfg = *c;
	if (c->unix_path != NULL && c->unix_path[0] != '\0') {
		if (strlen(c->unix_path) >= sizeof(rs->unix_path)) {
			snprintf(err, err_len,
				"the Redis socket path is longer than %zu bytes: use a shorter "
				"path",
				sizeof(rs->unix_path) - 1);
			return -1;
		}
		strcpy(rs->unix_path, c->unix_path);
		snprintf(rs->where, sizeof(rs->where), "unix:%s", rs->unix_path);
	} else {
		const char *host =
			c->host != NULL && c->host[0] != '\0' ? c->host : RS_DEFAULT_HOST;

		if (strlen(host) >= sizeof(rs->host)) {
			snprintf(err, err_len, "the Redis host name is longer than %zu bytes",
				sizeof(rs->host) - 1);
			return -1;
		}
		if (c->port > 65535) {
			snprintf(err, err_len, "the Redis port %u is not in 1..65535", c->port);
			return -1;
		}
		strcpy(rs->host, host);
		rs->cfg.port = c->port ? c->port : RS_DEFAULT_PORT;
		snprintf(rs->where, sizeof(rs->where), "%s:%u", rs->host, rs->cfg.port);
	}
	rs->cfg.host = NULL;
	rs->cfg.unix_path = NULL;
	if (!rs->cfg.connect_timeout_ms)
		rs->cfg.connect_timeout_ms = RS_DEFAULT_CONNECT_TIMEOUT;
	if (!rs->cfg.command_timeout_ms)
		rs->cfg.command_timeout_ms = RS_DEFAULT_COMMAND_TIMEOUT;
	if (!rs->cfg.backoff_min_ms)
		rs->cfg.backoff_min_ms = RS_DEFAULT_BACKOFF_MIN;
	if (!rs->cfg.backoff_max_ms)
		rs->cfg.backoff_max_ms = RS_DEFAULT_BACKOFF_MAX;
	if (!rs->cfg.wait_timeout_ms)
		rs->cfg.wait_timeout_ms = RS_DEFAULT_WAIT_TIMEOUT;
	if (rs->cfg.wait_replicas > 0 && rs->cfg.wait_timeout_ms >= rs->cfg.command_timeout_ms) {
		snprintf(err, err_len,
			"redis.wait_timeout (%u ms) must be shorter than redis.timeout (%u ms)",
			rs->cfg.wait_timeout_ms, rs->cfg.command_timeout_ms);
		return -1;
	}
	if (c->sentinels != NULL && c->sentinels[0] != '\0') {
		rs->sn = store_sentinel_new(
			c->sentinels, c->master_name, rs->cfg.connect_timeout_ms, err, err_len);
		if (rs->sn == NULL)
			return -1;
		rs->host[0] = '\0';
		rs->unix_path[0] = '\0';
		snprintf(rs->where, sizeof(rs->where), "the primary of %s",
			store_sentinel_describe(rs->sn));
	}
	rs->cfg.sentinels = NULL;
	rs->cfg.master_name = NULL;
	if (rs->cfg.backoff_min_ms > rs->cfg.backoff_max_ms) {
		snprintf(err, err_len,
			"the Redis reconnect backoff minimum (%u ms) exceeds its "
			"maximum (%u ms)",
			rs->cfg.backoff_min_ms, rs->cfg.backoff_max_ms);
		return -1;
	}
	return 0;
}

struct store *
store_open(const struct store_conn_config *c, char *err, size_t err_len)
{
	struct store *rs = calloc(1, sizeof(*rs));
	struct sigaction old;
	char why[512];

	if (rs == NULL) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	if (store_conn_config_apply(rs, c, err, err_len) != 0)
		goto fail;
	if (c->user != NULL && c->user[0] != '\0') {
		if (strlen(c->user) >= sizeof(rs->user)) {
			snprintf(err, err_len, "the Redis user name is longer than %zu bytes",
				sizeof(rs->user) - 1);
			goto fail;
		}
		strcpy(rs->user, c->user);
	}
	if (c->password_file != NULL && c->password_file[0] != '\0') {
		size_t len;

		if (secret_read_text(c->password_file, "redis.password_file", rs->password,
			    sizeof(rs->password), &len, err, err_len) != 0)
			goto fail;
	}
	rs->cmd = malloc(RS_RESERVE_CMD_MAX);
	if (rs->cmd == NULL) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	rs->scripts[RS_SCRIPT_RESERVE] = (struct store_script){.name = "reserve",
		.text = lua_script_reserve.text,
		.len = lua_script_reserve.len,
		.want_sha1 = lua_script_reserve.sha1};
	rs->scripts[RS_SCRIPT_RELEASE] = (struct store_script){.name = "release",
		.text = lua_script_release.text,
		.len = lua_script_release.len,
		.want_sha1 = lua_script_release.sha1};
	rs->scripts[RS_SCRIPT_PREHEAT] = (struct store_script){
		.name = "preheat", .text = preheat_lua, .len = sizeof(preheat_lua) - 1};
	rs->scripts[RS_SCRIPT_ENTER] = (struct store_script){.name = "enter",
		.text = lua_script_enter.text,
		.len = lua_script_enter.len,
		.want_sha1 = lua_script_enter.sha1};
	rs->scripts[RS_SCRIPT_FREEZE] = (struct store_script){.name = "draw_freeze",
		.text = lua_script_draw_freeze.text,
		.len = lua_script_draw_freeze.len,
		.want_sha1 = lua_script_draw_freeze.sha1};

	/* A write to a socket Redis closed raises SIGPIPE, whose default ends the process. */
	if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
		signal(SIGPIPE, SIG_IGN);

	rs->backoff_ms = rs->cfg.backoff_min_ms;
	rs->attempts = 1;
	if (store_connect(rs, why, sizeof(why)) != 0) {
		if (rs->settings_refused) {
			/* Reached, but unfit: a configuration error, not an outage to wait out. */
			snprintf(err, err_len, "refusing Redis at %s: %s", rs->where, why);
			goto fail;
		}
		if (!rs->cfg.start_offline) {
			snprintf(err, err_len,
				"cannot use Redis at %s: %s (is redis-server running there? check "
				"the Redis address in the configuration)",
				rs->where, why);
			goto fail;
		}
		LOG_WARN("redis: cannot use %s yet (%s); reservations are answered retry until it "
			 "is reachable",
			rs->where, why);
		rs->in_outage = true;
		rs->outage_since_ms = now_mono_ms();
		rs->next_attempt_ms = rs->outage_since_ms + rs->backoff_ms;
		rs->backoff_ms = backoff_double(rs->backoff_ms, rs->cfg.backoff_max_ms);
	} else {
		LOG_INFO("redis: connected to %s", rs->where);
	}
	return rs;
fail:
	store_close(rs);
	return NULL;
}

void
store_close(struct store *rs)
{
	if (rs == NULL)
		return;
	if (rs->c != NULL)
		redisFree(rs->c);
	if (rs->wc != NULL)
		redisFree(rs->wc);
	store_sentinel_free(rs->sn);
	explicit_bzero(rs->password, sizeof(rs->password));
	free(rs->cmd);
	free(rs);
}

void
store_get_stats(const struct store *rs, struct store_stats *out)
{
	*out = rs->st;
}

redisReply *
store_command(struct store *rs, int argc, const char **argv, const size_t *len, int *err)
{
	if (store_ensure_connected(rs) != 0) {
		*err = -ENOTCONN;
		return NULL;
	}
	if (redisAppendCommandArgv(rs->c, argc, argv, len) != REDIS_OK) {
		*err = -ENOMEM;
		return NULL;
	}
	redisReply *r = store_read_reply(rs);

	if (r == NULL)
		*err = -ENOTCONN;
	return r;
}

redisReply *
store_command_ok(struct store *rs, int argc, const char **argv, const size_t *len, int *err,
	uint32_t event)
{
	redisReply *r = store_command(rs, argc, argv, len, err);

	if (r != NULL && r->type == REDIS_REPLY_ERROR) {
		rs->st.errors++;
		LOG_RL(LOG_LEVEL_WARN, 10000, "redis: %s on event %" PRIu32 " failed: %s", argv[0],
			event, r->str);
		/* A stream's consumer group that is gone (Redis lost it): the caller makes it again. */
		*err = strncmp(r->str, "NOGROUP", 7) == 0 ? -ENOENT : -EIO;
		freeReplyObject(r);
		return NULL;
	}
	return r;
}

int
store_eval_int(struct store *rs, enum store_script_id id, uint32_t event,
	const enum store_key_kind *kinds, unsigned nkeys, const char *const *args, unsigned nargs,
	long long *out)
{
	char keys[RS_EVAL_KEYS][RS_KEY_MAX];
	const char *argv[3 + RS_EVAL_KEYS + RS_EVAL_ARGS];
	size_t len[3 + RS_EVAL_KEYS + RS_EVAL_ARGS];
	char numkeys[2] = {(char)('0' + nkeys), '\0'};
	int argc = 0, err = 0;

	if (nkeys > RS_EVAL_KEYS || nargs > RS_EVAL_ARGS)
		return -EINVAL;

	argv[argc] = "EVALSHA";
	len[argc++] = 7;
	argv[argc] = rs->scripts[id].sha1;
	len[argc++] = 40;
	argv[argc] = numkeys;
	len[argc++] = 1;
	for (unsigned k = 0; k < nkeys; k++) {
		argv[argc] = keys[k];
		len[argc++] = (size_t)store_key(keys[k], RS_KEY_MAX, event, kinds[k]);
	}
	for (unsigned a = 0; a < nargs; a++) {
		argv[argc] = args[a];
		len[argc++] = strlen(args[a]);
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		char why[512];
		redisReply *r = store_command(rs, argc, argv, len, &err);

		if (r == NULL)
			return err;
		if (store_is_noscript(r) && attempt == 0) {
			freeReplyObject(r);
			if (store_load_scripts(rs, why, sizeof(why)) != 0) {
				LOG_RL(LOG_LEVEL_WARN, 10000,
					"redis: reloading the scripts failed: %s", why);
				return rs->c != NULL ? -EIO : -ENOTCONN;
			}
			continue;
		}
		if (r->type == REDIS_REPLY_INTEGER) {
			*out = r->integer;
			freeReplyObject(r);
			return 0;
		}
		rs->st.errors++;
		LOG_RL(LOG_LEVEL_WARN, 10000, "redis: %s.lua for event %" PRIu32 " failed: %s",
			rs->scripts[id].name, event,
			r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
		freeReplyObject(r);
		return -EIO;
	}
	return -EIO;
}

redisReply *
store_key_numbers(struct store *rs, const char *const *cmd, unsigned ncmd, uint32_t event,
	enum store_key_kind kind, const uint64_t *vals, unsigned n, int *err)
{
	char key[RS_KEY_MAX];
	const char *argv[4 + RS_BATCH_MAX];
	size_t len[4 + RS_BATCH_MAX];
	char(*num)[RS_U64_DIGITS + 1];

	if (event == 0 || n == 0 || n > RS_BATCH_MAX || ncmd == 0 || ncmd > 3) {
		*err = -EINVAL;
		return NULL;
	}
	num = malloc(n * sizeof(*num));
	if (num == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	store_key(key, sizeof(key), event, kind);
	for (unsigned i = 0; i < ncmd; i++) {
		argv[i] = cmd[i];
		len[i] = strlen(cmd[i]);
	}
	argv[ncmd] = key;
	len[ncmd] = strlen(key);
	for (unsigned i = 0; i < n; i++) {
		argv[ncmd + 1 + i] = num[i];
		len[ncmd + 1 + i] = store_u64_to_dec(num[i], vals[i]);
	}
	redisReply *r = store_command_ok(rs, (int)(ncmd + 1 + n), argv, len, err, event);

	free(num);
	return r;
}

int
store_members(struct store *rs, uint32_t event, enum store_key_kind kind, const uint64_t *vals,
	unsigned n, uint8_t *member)
{
	bool hash = kind == RS_KEY_RESULT;
	const char *cmd[] = {hash ? "HMGET" : "SMISMEMBER"};
	int err = 0;
	redisReply *r = store_key_numbers(rs, cmd, 1, event, kind, vals, n, &err);

	if (r == NULL)
		return err;
	if (r->type == REDIS_REPLY_ARRAY && r->elements == n) {
		for (unsigned i = 0; i < n; i++) {
			const redisReply *e = r->element[i];

			member[i] = hash ? e->type == REDIS_REPLY_STRING
					 : e->type == REDIS_REPLY_INTEGER && e->integer == 1;
		}
	} else {
		err = -EIO;
	}
	freeReplyObject(r);
	return err;
}

int
store_append_hgets(struct store *rs, const struct wire_result_query *q, unsigned n,
	enum store_key_kind kind)
{
	if (store_ensure_connected(rs) != 0)
		return -ENOTCONN;
	for (unsigned i = 0; i < n; i++) {
		char key[RS_KEY_MAX], user[RS_U64_DIGITS];
		const char *argv[] = {"HGET", key, user};
		size_t len[] = {4, 0, 0};

		len[1] = (size_t)store_key(key, sizeof(key), q[i].event, kind);
		len[2] = store_u64_to_dec(user, q[i].user);
		if (redisAppendCommandArgv(rs->c, 3, argv, len) != REDIS_OK) {
			/* hiredis keeps what it appended: drop the connection rather than misalign
			 * the replies of the next call. */
			store_lost(rs, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}
