/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/un.h>

#include <hiredis/hiredis.h>

#include "common/log.h"
#include "common/now.h"
#include "controlplane/redis_store.h"
#include "lua/lua_scripts.h"

#define RS_DEFAULT_HOST		   "127.0.0.1"
#define RS_DEFAULT_PORT		   6379
#define RS_DEFAULT_CONNECT_TIMEOUT 1000
#define RS_DEFAULT_COMMAND_TIMEOUT 2000
#define RS_DEFAULT_BACKOFF_MIN	   50
#define RS_DEFAULT_BACKOFF_MAX	   2000
#define RS_KEY_MAX		   32 /* "fg:{4294967295}:released" is 24 bytes */
#define RS_U64_DIGITS		   20
#define RS_KEY_KINDS		   (RS_KEY_RELEASED + 1)
#define RS_RESERVE_KEYS		   3 /* stock, result, outbox: the first three kinds */
/* EVALSHA sha numkeys, the keys, then users, ids and times. */
#define RS_RESERVE_ARGC(n) (3 + RS_RESERVE_KEYS + 2 * (n))
/* Its RESP: "*N\r\n", then per argument "$L\r\n" (at most 6 bytes here), data, "\r\n". */
#define RS_RESERVE_CMD_MAX (16 + RS_RESERVE_ARGC(RS_BATCH_MAX) * (6 + 2 + 64))

/*
 * Sets an event's stock before its sale, unless somebody already reserved. It is a script so
 * that the check and the write are one atomic step. KEYS: stock, result, outbox; ARGV: stock.
 * Returns 1 when set, 0 when refused.
 */
static const char preheat_lua[] =
	"if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then\n"
	"\treturn 0\n"
	"end\n"
	"redis.call('SET', KEYS[1], ARGV[1])\n"
	"return 1\n";

enum rs_script_id { RS_SCRIPT_RESERVE, RS_SCRIPT_RELEASE, RS_SCRIPT_PREHEAT, RS_SCRIPT_MAX };

struct rs_script {
	const char *name;
	const char *text;
	size_t len;
	const char *want_sha1; /* the SHA1 computed at build time, or NULL */
	char sha1[41];	       /* what SCRIPT LOAD answered */
};

struct redis_store {
	struct rs_config cfg;
	char host[256];
	char unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char where[300]; /* "127.0.0.1:6379" or "unix:/path", for messages */
	redisContext *c;

	/* Outage bookkeeping: one warning when it starts, one notice when it ends. */
	bool in_outage;
	uint64_t outage_since_ms;
	uint64_t next_attempt_ms;
	unsigned backoff_ms;
	unsigned attempts;

	struct rs_script scripts[RS_SCRIPT_MAX];
	struct rs_stats st;

	/* One EVALSHA of reserve.lua in RESP: hiredis copies it when it is appended, so one
	 * buffer serves every batch of a pipeline. */
	char *cmd;
};

static struct timeval
rs_timeval(unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	return tv;
}

/* Writes v in decimal to p (no NUL); returns the length. */
static size_t
rs_u64_to_dec(char *p, uint64_t v)
{
	char tmp[RS_U64_DIGITS];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* Parses a whole string of 1..20 decimal digits that fits in uint64; returns 0 or -1. */
static int
rs_parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > RS_U64_DIGITS)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int
rs_key(char *buf, size_t cap, uint32_t event, enum rs_key_kind kind)
{
	static const char *const suffix[] = {
		[RS_KEY_STOCK] = "stock",
		[RS_KEY_RESULT] = "result",
		[RS_KEY_OUTBOX] = "outbox",
		[RS_KEY_RELEASED] = "released",
	};

	if ((unsigned)kind > RS_KEY_RELEASED)
		return -EINVAL;
	int n = snprintf(buf, cap, "fg:{%" PRIu32 "}:%s", event, suffix[kind]);

	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
}

/* Forgets a broken connection. The first loss of an outage is logged. */
static void
rs_lost(struct redis_store *rs, const char *why)
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

/* Reads one reply; on a connection error forgets the connection. Returns the reply or NULL. */
static redisReply *
rs_read_reply(struct redis_store *rs)
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
		rs_lost(rs, why);
		return NULL;
	}
	return reply;
}

static bool
rs_is_noscript(const redisReply *r)
{
	return r->type == REDIS_REPLY_ERROR && r->str != NULL &&
	       strncmp(r->str, "NOSCRIPT", 8) == 0;
}

/*
 * Loads every script on the current connection (pipelined SCRIPT LOADs) and checks that Redis
 * computed the SHA1s embedded at build time. Returns 0, or -1 with why filled; the connection
 * may have been forgotten.
 */
static int
rs_load_scripts(struct redis_store *rs, char *why, size_t why_len)
{
	int rc = 0;

	rs->st.script_loads++;
	for (unsigned i = 0; i < RS_SCRIPT_MAX; i++) {
		const char *argv[] = {"SCRIPT", "LOAD", rs->scripts[i].text};
		const size_t len[] = {6, 4, rs->scripts[i].len};

		if (redisAppendCommandArgv(rs->c, 3, argv, len) != REDIS_OK) {
			/* The replies of what was appended would misalign the next call's. */
			rs_lost(rs, "out of memory");
			snprintf(why, why_len, "out of memory");
			return -1;
		}
	}
	for (unsigned i = 0; i < RS_SCRIPT_MAX; i++) {
		struct rs_script *s = &rs->scripts[i];
		redisReply *r = rs_read_reply(rs);

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

/* One connection attempt, scripts included. Returns 0, or -1 with why filled. */
static int
rs_connect(struct redis_store *rs, char *why, size_t why_len)
{
	struct timeval ctv = rs_timeval(rs->cfg.connect_timeout_ms);
	redisContext *c;

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
	if (redisSetTimeout(c, rs_timeval(rs->cfg.command_timeout_ms)) != REDIS_OK ||
		(rs->unix_path[0] == '\0' && redisEnableKeepAlive(c) != REDIS_OK)) {
		snprintf(why, why_len, "cannot set socket options: %s", c->errstr);
		redisFree(c);
		return -1;
	}
	rs->c = c;
	if (rs_load_scripts(rs, why, why_len) != 0) {
		if (rs->c != NULL) {
			redisFree(rs->c);
			rs->c = NULL;
		}
		return -1;
	}
	rs->st.connects++;
	return 0;
}

int
rs_ensure_connected(struct redis_store *rs)
{
	char why[256];
	uint64_t now;

	if (rs->c != NULL) {
		struct pollfd p = {.fd = rs->c->fd, .events = POLLIN};

		/* Between calls Redis owes no reply, so a readable socket means it closed the
		 * connection (a restart): notice it now rather than fail the next pipeline. */
		if (poll(&p, 1, 0) == 0)
			return 0;
		rs_lost(rs, "the server closed the connection");
	}
	now = now_mono_ms();
	if (now < rs->next_attempt_ms)
		return -ENOTCONN;
	rs->attempts++;
	if (rs_connect(rs, why, sizeof(why)) != 0) {
		LOG_DEBUG("redis: %s: attempt %u failed: %s", rs->where, rs->attempts, why);
		rs->next_attempt_ms = now + rs->backoff_ms;
		rs->backoff_ms = rs->backoff_ms >= rs->cfg.backoff_max_ms / 2
					 ? rs->cfg.backoff_max_ms
					 : rs->backoff_ms * 2;
		return -ENOTCONN;
	}
	if (rs->in_outage) {
		LOG_NOTICE("redis: connected to %s again after %" PRIu64 " ms (%u attempts)",
			rs->where, now_mono_ms() - rs->outage_since_ms, rs->attempts);
		rs->in_outage = false;
	}
	return 0;
}

bool
rs_connected(const struct redis_store *rs)
{
	return rs->c != NULL;
}

/* Checks c and fills rs's copy with the defaults. Returns 0, or -1 with err filled. */
static int
rs_config_apply(struct redis_store *rs, const struct rs_config *c, char *err, size_t err_len)
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
	if (rs->cfg.backoff_min_ms > rs->cfg.backoff_max_ms) {
		snprintf(err, err_len,
			"the Redis reconnect backoff minimum (%u ms) exceeds its "
			"maximum (%u ms)",
			rs->cfg.backoff_min_ms, rs->cfg.backoff_max_ms);
		return -1;
	}
	return 0;
}

struct redis_store *
rs_open(const struct rs_config *c, char *err, size_t err_len)
{
	struct redis_store *rs = calloc(1, sizeof(*rs));
	struct sigaction old;
	char why[256];

	if (rs == NULL) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	if (rs_config_apply(rs, c, err, err_len) != 0)
		goto fail;
	rs->cmd = malloc(RS_RESERVE_CMD_MAX);
	if (rs->cmd == NULL) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	rs->scripts[RS_SCRIPT_RESERVE] = (struct rs_script){.name = "reserve",
		.text = lua_script_reserve.text,
		.len = lua_script_reserve.len,
		.want_sha1 = lua_script_reserve.sha1};
	rs->scripts[RS_SCRIPT_RELEASE] = (struct rs_script){.name = "release",
		.text = lua_script_release.text,
		.len = lua_script_release.len,
		.want_sha1 = lua_script_release.sha1};
	rs->scripts[RS_SCRIPT_PREHEAT] = (struct rs_script){
		.name = "preheat", .text = preheat_lua, .len = sizeof(preheat_lua) - 1};

	/* A write to a socket Redis closed raises SIGPIPE, whose default ends the process. */
	if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
		signal(SIGPIPE, SIG_IGN);

	rs->backoff_ms = rs->cfg.backoff_min_ms;
	rs->attempts = 1;
	if (rs_connect(rs, why, sizeof(why)) != 0) {
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
		rs->backoff_ms = rs->backoff_ms * 2 > rs->cfg.backoff_max_ms
					 ? rs->cfg.backoff_max_ms
					 : rs->backoff_ms * 2;
	} else {
		LOG_INFO("redis: connected to %s", rs->where);
	}
	return rs;
fail:
	rs_close(rs);
	return NULL;
}

void
rs_close(struct redis_store *rs)
{
	if (rs == NULL)
		return;
	if (rs->c != NULL)
		redisFree(rs->c);
	free(rs->cmd);
	free(rs);
}

void
rs_get_stats(const struct redis_store *rs, struct rs_stats *out)
{
	*out = rs->st;
}

/* Appends one RESP bulk string to p; returns the end. */
static char *
rs_resp_bulk(char *p, const char *s, size_t len)
{
	*p++ = '$';
	p += rs_u64_to_dec(p, len);
	*p++ = '\r';
	*p++ = '\n';
	memcpy(p, s, len);
	p += len;
	*p++ = '\r';
	*p++ = '\n';
	return p;
}

/* Appends v in decimal as one RESP bulk string to p; returns the end. */
static char *
rs_resp_u64(char *p, uint64_t v)
{
	char d[RS_U64_DIGITS];

	return rs_resp_bulk(p, d, rs_u64_to_dec(d, v));
}

/*
 * Writes one EVALSHA of reserve.lua in RESP to rs->cmd and returns its length. The command is
 * formatted here rather than by hiredis because, with thousands of arguments per batch, that
 * formatting is a visible part of the control plane's time per decision.
 */
static size_t
rs_reserve_format(struct redis_store *rs, const struct rs_batch *b)
{
	char *p = rs->cmd;
	unsigned n = b->n;

	*p++ = '*';
	p += rs_u64_to_dec(p, RS_RESERVE_ARGC(n));
	*p++ = '\r';
	*p++ = '\n';
	p = rs_resp_bulk(p, "EVALSHA", 7);
	p = rs_resp_bulk(p, rs->scripts[RS_SCRIPT_RESERVE].sha1, 40);
	p = rs_resp_bulk(p, "3", 1);
	for (unsigned k = 0; k < RS_RESERVE_KEYS; k++) {
		char key[RS_KEY_MAX];

		p = rs_resp_bulk(
			p, key, (size_t)rs_key(key, sizeof(key), b->event, (enum rs_key_kind)k));
	}
	/* reserve.lua's layout: all users, then all ids, so that it can pass the users to HMGET
	 * with unpack() instead of building a table. No time: an order's reserved_at is its
	 * outbox entry's, the moment Redis decided. */
	for (unsigned i = 0; i < n; i++)
		p = rs_resp_u64(p, b->res[i].user);
	for (unsigned i = 0; i < n; i++)
		p = rs_resp_u64(p, b->res[i].reservation_id);
	return (size_t)(p - rs->cmd);
}

/* Checks a batch's input; returns 0 or -EINVAL. */
static int
rs_batch_check(const struct rs_batch *b)
{
	if (b->n == 0 || b->n > RS_BATCH_MAX || b->event == 0 || b->res == NULL ||
		b->verdicts == NULL)
		return -EINVAL;
	for (unsigned i = 0; i < b->n; i++)
		if (b->res[i].event != b->event || b->res[i].user == 0 ||
			b->res[i].reservation_id == 0)
			return -EINVAL;
	return 0;
}

/* Takes one reply of reserve.lua into b. Returns 0, -EIO, or 1 for NOSCRIPT. */
static int
rs_reserve_take(struct redis_store *rs, struct rs_batch *b, const redisReply *r)
{
	if (rs_is_noscript(r))
		return 1;
	if (r->type == REDIS_REPLY_ERROR) {
		rs->st.errors++;
		LOG_RL(LOG_LEVEL_WARN, 10000, "redis: reserve.lua for event %" PRIu32 " failed: %s",
			b->event, r->str);
		return -EIO;
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements != (size_t)b->n + 1)
		goto bad;
	for (unsigned i = 0; i <= b->n; i++)
		if (r->element[i]->type != REDIS_REPLY_INTEGER)
			goto bad;
	uint64_t counts[3] = {0}; /* sold out, reserved, duplicate */

	for (unsigned i = 0; i < b->n; i++) {
		switch (r->element[i]->integer) {
		case 1:
			b->verdicts[i] = WIRE_V_RESERVED;
			counts[1]++;
			break;
		case -1:
			b->verdicts[i] = WIRE_V_DUPLICATE;
			counts[2]++;
			break;
		case 0:
			b->verdicts[i] = WIRE_V_SOLD_OUT;
			counts[0]++;
			break;
		default:
			goto bad;
		}
	}
	b->stock_left = r->element[b->n]->integer;
	rs->st.batches++;
	rs->st.sold_out += counts[0];
	rs->st.reserved += counts[1];
	rs->st.duplicate += counts[2];
	return 0;
bad:
	/* The script ran (its writes stand) but this build cannot read its answer: a reserve.lua
	 * of another version is loaded under our SHA1, which SCRIPT LOAD makes impossible. */
	rs->st.errors++;
	LOG_RL(LOG_LEVEL_ERR, 10000,
		"redis: reserve.lua for event %" PRIu32 " gave a reply this build cannot read",
		b->event);
	return -EIO;
}

/*
 * While rs_reserve() works, a batch's status says where it is; these values never reach the
 * caller, who sees 0 or a negative errno.
 */
enum {
	RS_ST_TODO = 1,	    /* to be sent */
	RS_ST_SENT = 2,	    /* sent, reply not read yet */
	RS_ST_NOSCRIPT = 3, /* Redis did not know the script: nothing of the batch ran */
};

/*
 * Appends one EVALSHA per batch in state RS_ST_TODO, then reads the replies in order: a batch
 * ends with status 0, -EIO, -ENOTCONN or RS_ST_NOSCRIPT. Returns how many got NOSCRIPT.
 */
static unsigned
rs_reserve_round(struct redis_store *rs, struct rs_batch *batches, unsigned n)
{
	unsigned noscript = 0;

	for (unsigned i = 0; i < n; i++) {
		struct rs_batch *b = &batches[i];
		int done = 0;

		if (b->status != RS_ST_TODO)
			continue;
		if (rs->c == NULL) {
			b->status = -ENOTCONN;
			continue;
		}
		/* hiredis appends all or nothing, so a failure here cannot misalign replies. */
		if (redisAppendFormattedCommand(rs->c, rs->cmd, rs_reserve_format(rs, b)) !=
			REDIS_OK) {
			b->status = -ENOMEM;
			continue;
		}
		b->status = RS_ST_SENT;
		/* Send it now: Redis runs this batch while the next one is formatted. */
		while (!done && rs->c != NULL)
			if (redisBufferWrite(rs->c, &done) != REDIS_OK)
				rs_lost(rs, rs->c->errstr[0] ? rs->c->errstr : "write failed");
	}
	for (unsigned i = 0; i < n; i++) {
		struct rs_batch *b = &batches[i];

		if (b->status != RS_ST_SENT)
			continue;
		/* After a loss, the replies still due will never come. */
		redisReply *r = rs->c != NULL ? rs_read_reply(rs) : NULL;

		if (r == NULL) {
			b->status = -ENOTCONN;
			continue;
		}
		int rc = rs_reserve_take(rs, b, r);

		freeReplyObject(r);
		b->status = rc == 1 ? RS_ST_NOSCRIPT : rc;
		noscript += rc == 1;
	}
	return noscript;
}

int
rs_reserve(struct redis_store *rs, struct rs_batch *batches, unsigned n)
{
	int first_err = 0;

	for (unsigned i = 0; i < n; i++) {
		struct rs_batch *b = &batches[i];

		b->stock_left = 0;
		b->status = rs_batch_check(b) == 0 ? RS_ST_TODO : -EINVAL;
	}
	if (rs_ensure_connected(rs) == 0 && rs_reserve_round(rs, batches, n) > 0 && rs->c != NULL) {
		char why[256];

		/* The script cache was flushed (SCRIPT FLUSH, or a failover to a replica that never
		 * loaded it). Nothing of those batches ran: load the scripts and resend them once.
		 */
		if (rs_load_scripts(rs, why, sizeof(why)) != 0) {
			LOG_RL(LOG_LEVEL_WARN, 10000, "redis: loading the scripts again failed: %s",
				why);
		} else {
			LOG_INFO("redis: the script cache of %s was flushed; scripts loaded again",
				rs->where);
			for (unsigned i = 0; i < n; i++)
				if (batches[i].status == RS_ST_NOSCRIPT)
					batches[i].status = RS_ST_TODO;
			rs_reserve_round(rs, batches, n);
		}
	}
	for (unsigned i = 0; i < n; i++) {
		struct rs_batch *b = &batches[i];

		if (b->status == RS_ST_TODO) /* never sent: no connection */
			b->status = -ENOTCONN;
		else if (b->status == RS_ST_NOSCRIPT) /* twice, or the reload failed */
			b->status = rs->c != NULL ? -EIO : -ENOTCONN;
		if (b->status == 0)
			continue;
		if (b->verdicts != NULL && b->n <= RS_BATCH_MAX)
			memset(b->verdicts, WIRE_V_RETRY, b->n);
		if (b->n <= RS_BATCH_MAX)
			rs->st.retry += b->n;
		if (first_err == 0)
			first_err = b->status;
	}
	return first_err;
}

/*
 * Runs one command and reads its reply. Returns the reply (free it with freeReplyObject), or
 * NULL with *err = -ENOTCONN or -ENOMEM. Error replies are returned as replies.
 */
static redisReply *
rs_command(struct redis_store *rs, int argc, const char **argv, const size_t *len, int *err)
{
	if (rs_ensure_connected(rs) != 0) {
		*err = -ENOTCONN;
		return NULL;
	}
	if (redisAppendCommandArgv(rs->c, argc, argv, len) != REDIS_OK) {
		*err = -ENOMEM;
		return NULL;
	}
	redisReply *r = rs_read_reply(rs);

	if (r == NULL)
		*err = -ENOTCONN;
	return r;
}

/*
 * EVALSHA of one small script with up to 4 keys and 3 arguments; on NOSCRIPT loads the
 * scripts and tries once more. Returns the integer it answered in *out and 0, or -ENOTCONN,
 * -ENOMEM, or -EIO (an error reply or a reply that is not an integer).
 */
static int
rs_eval_int(struct redis_store *rs, enum rs_script_id id, uint32_t event,
	const enum rs_key_kind *kinds, unsigned nkeys, const char *const *args, unsigned nargs,
	long long *out)
{
	char keys[4][RS_KEY_MAX];
	const char *argv[3 + 4 + 3];
	size_t len[3 + 4 + 3];
	char numkeys[2] = {(char)('0' + nkeys), '\0'};
	int argc = 0, err = 0;

	argv[argc] = "EVALSHA";
	len[argc++] = 7;
	argv[argc] = rs->scripts[id].sha1;
	len[argc++] = 40;
	argv[argc] = numkeys;
	len[argc++] = 1;
	for (unsigned k = 0; k < nkeys; k++) {
		argv[argc] = keys[k];
		len[argc++] = (size_t)rs_key(keys[k], RS_KEY_MAX, event, kinds[k]);
	}
	for (unsigned a = 0; a < nargs; a++) {
		argv[argc] = args[a];
		len[argc++] = strlen(args[a]);
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		char why[256];
		redisReply *r = rs_command(rs, argc, argv, len, &err);

		if (r == NULL)
			return err;
		if (rs_is_noscript(r) && attempt == 0) {
			freeReplyObject(r);
			if (rs_load_scripts(rs, why, sizeof(why)) != 0) {
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

int
rs_release(
	struct redis_store *rs, uint32_t event, uint64_t reservation_id, uint64_t user, unsigned n)
{
	static const enum rs_key_kind kinds[] = {RS_KEY_STOCK, RS_KEY_RELEASED, RS_KEY_RESULT};
	char rid_s[RS_U64_DIGITS + 1], user_s[RS_U64_DIGITS + 1], n_s[RS_U64_DIGITS + 1];
	const char *args[] = {rid_s, user_s, n_s};
	long long v;

	if (event == 0 || reservation_id == 0 || user == 0 || n == 0 || n > 1000000)
		return -EINVAL;
	rid_s[rs_u64_to_dec(rid_s, reservation_id)] = '\0';
	user_s[rs_u64_to_dec(user_s, user)] = '\0';
	n_s[rs_u64_to_dec(n_s, n)] = '\0';
	int rc = rs_eval_int(rs, RS_SCRIPT_RELEASE, event, kinds, 3, args, 3, &v);

	if (rc != 0)
		return rc;
	return v == 1 ? 1 : v == 0 ? 0 : v == -1 ? -ENOENT : -EIO;
}

int
rs_preheat(struct redis_store *rs, uint32_t event, int64_t stock)
{
	static const enum rs_key_kind kinds[] = {RS_KEY_STOCK, RS_KEY_RESULT, RS_KEY_OUTBOX};
	char stock_s[RS_U64_DIGITS + 1];
	const char *args[] = {stock_s};
	long long v;

	if (event == 0 || stock < 0)
		return -EINVAL;
	stock_s[rs_u64_to_dec(stock_s, (uint64_t)stock)] = '\0';
	int rc = rs_eval_int(rs, RS_SCRIPT_PREHEAT, event, kinds, 3, args, 1, &v);

	if (rc != 0)
		return rc;
	return v == 1 ? 0 : v == 0 ? -EBUSY : -EIO;
}

/* Parses a result hash value (see the top of redis_store.h). Returns 0 or -1. */
static int
rs_parse_result(const char *s, size_t len, struct rs_result *out)
{
	static const struct {
		char tag;
		uint8_t verdict;
		unsigned fields; /* numbers after "T:" */
	} tags[] = {
		{'O', WIRE_V_ORDERED, 3},
		{'P', WIRE_V_PAID, 2},
		{'X', WIRE_V_EXPIRED, 1},
		{'C', WIRE_V_CANCELLED, 1},
	};
	uint64_t v[3] = {0};
	unsigned fields, verdict;

	if (len == 1 && s[0] == 'H') {
		/* Restored by reconciliation: the user holds an order, PostgreSQL knows which. */
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (len > 0 && s[0] >= '0' && s[0] <= '9') {
		verdict = WIRE_V_RESERVED;
		fields = 1;
	} else {
		unsigned t = 0;

		while (t < sizeof(tags) / sizeof(tags[0]) && (len < 2 || tags[t].tag != s[0]))
			t++;
		if (t == sizeof(tags) / sizeof(tags[0]) || s[1] != ':')
			return -1;
		verdict = tags[t].verdict;
		fields = tags[t].fields;
		s += 2;
		len -= 2;
	}
	for (unsigned f = 0; f < fields; f++) {
		const char *colon = memchr(s, ':', len);
		size_t flen = colon != NULL ? (size_t)(colon - s) : len;

		if ((f + 1 < fields) != (colon != NULL) || rs_parse_u64(s, flen, &v[f]) != 0)
			return -1;
		if (colon != NULL) {
			s = colon + 1;
			len -= flen + 1;
		}
	}
	if (v[0] == 0)
		return -1;
	out->verdict = (uint8_t)verdict;
	out->reservation_id = v[0];
	out->order_id = fields >= 2 ? v[1] : 0;
	out->pay_deadline_ms = fields >= 3 ? v[2] : 0;
	return 0;
}

int
rs_results(struct redis_store *rs, const struct wire_result_query *q, unsigned n,
	struct rs_result *out)
{
	int rc = 0;

	if (n == 0)
		return 0;
	if (rs_ensure_connected(rs) != 0)
		return -ENOTCONN;
	for (unsigned i = 0; i < n; i++) {
		char key[RS_KEY_MAX], user[RS_U64_DIGITS];
		const char *argv[] = {"HGET", key, user};
		size_t len[] = {4, 0, 0};

		len[1] = (size_t)rs_key(key, sizeof(key), q[i].event, RS_KEY_RESULT);
		len[2] = rs_u64_to_dec(user, q[i].user);
		if (redisAppendCommandArgv(rs->c, 3, argv, len) != REDIS_OK) {
			/* hiredis keeps what it appended: drop the connection rather than misalign
			 * the replies of the next call. */
			rs_lost(rs, "out of memory");
			return -ENOMEM;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		redisReply *r = rs_read_reply(rs);

		if (r == NULL)
			return -ENOTCONN;
		memset(&out[i], 0, sizeof(out[i]));
		if (r->type == REDIS_REPLY_STRING) {
			if (rs_parse_result(r->str, (size_t)r->len, &out[i]) != 0)
				LOG_RL(LOG_LEVEL_WARN, 10000,
					"redis: the result of user %" PRIu64 " of event %" PRIu32
					" is not understood: \"%.40s\"",
					q[i].user, q[i].event, r->str);
		} else if (r->type != REDIS_REPLY_NIL) {
			rs->st.errors++;
			LOG_RL(LOG_LEVEL_WARN, 10000, "redis: HGET of a result failed: %s",
				r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
			rc = -EIO;
		}
		freeReplyObject(r);
	}
	return rc;
}

int
rs_event_state(struct redis_store *rs, uint32_t event, struct rs_event_state *out)
{
	char k[RS_KEY_KINDS][RS_KEY_MAX];
	size_t kl[RS_KEY_KINDS];
	int rc = 0;

	if (event == 0)
		return -EINVAL;
	if (rs_ensure_connected(rs) != 0)
		return -ENOTCONN;
	for (unsigned i = 0; i < RS_KEY_KINDS; i++)
		kl[i] = (size_t)rs_key(k[i], RS_KEY_MAX, event, (enum rs_key_kind)i);
	const char *cmds[][2] = {
		{"MULTI", NULL},
		{"GET", k[RS_KEY_STOCK]},
		{"HLEN", k[RS_KEY_RESULT]},
		{"XLEN", k[RS_KEY_OUTBOX]},
		{"SCARD", k[RS_KEY_RELEASED]},
		{"EXEC", NULL},
	};
	const size_t key_of[] = {0, RS_KEY_STOCK, RS_KEY_RESULT, RS_KEY_OUTBOX, RS_KEY_RELEASED, 0};
	const unsigned ncmd = sizeof(cmds) / sizeof(cmds[0]);

	for (unsigned i = 0; i < ncmd; i++) {
		size_t len[2] = {strlen(cmds[i][0]), cmds[i][1] ? kl[key_of[i]] : 0};

		if (redisAppendCommandArgv(rs->c, cmds[i][1] ? 2 : 1, cmds[i], len) != REDIS_OK) {
			rs_lost(rs, "out of memory");
			return -ENOMEM;
		}
	}
	for (unsigned i = 0; i < ncmd; i++) {
		redisReply *r = rs_read_reply(rs);

		if (r == NULL)
			return -ENOTCONN;
		if (i + 1 < ncmd) {
			if (r->type == REDIS_REPLY_ERROR)
				rc = -EIO;
			freeReplyObject(r);
			continue;
		}
		/* EXEC: GET, HLEN, XLEN, SCARD. */
		if (rc == 0 && (r->type != REDIS_REPLY_ARRAY || r->elements != 4))
			rc = -EIO;
		for (unsigned e = 1; rc == 0 && e < 4; e++)
			if (r->element[e]->type != REDIS_REPLY_INTEGER)
				rc = -EIO;
		if (rc == 0) {
			const redisReply *st = r->element[0];
			uint64_t v = 0;

			memset(out, 0, sizeof(*out));
			if (st->type == REDIS_REPLY_STRING) {
				bool neg = st->len > 0 && st->str[0] == '-';

				if (rs_parse_u64(st->str + neg, (size_t)st->len - neg, &v) != 0 ||
					v > INT64_MAX)
					rc = -EIO;
				out->stock = neg ? -(int64_t)v : (int64_t)v;
				out->preheated = true;
			} else if (st->type != REDIS_REPLY_NIL) {
				rc = -EIO;
			}
			out->buyers = (uint64_t)r->element[1]->integer;
			out->outbox_len = (uint64_t)r->element[2]->integer;
			out->released = (uint64_t)r->element[3]->integer;
		}
		freeReplyObject(r);
	}
	if (rc != 0) {
		rs->st.errors++;
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"redis: reading the state of event %" PRIu32
			" failed (a key of another type?)",
			event);
	}
	return rc;
}

int
rs_purge_event(struct redis_store *rs, uint32_t event)
{
	char k[RS_KEY_KINDS][RS_KEY_MAX];
	const char *argv[1 + RS_KEY_KINDS] = {"DEL"};
	size_t len[1 + RS_KEY_KINDS] = {3};
	int err = 0;

	if (event == 0)
		return -EINVAL;
	for (unsigned i = 0; i < RS_KEY_KINDS; i++) {
		argv[1 + i] = k[i];
		len[1 + i] = (size_t)rs_key(k[i], RS_KEY_MAX, event, (enum rs_key_kind)i);
	}
	redisReply *r = rs_command(rs, 1 + RS_KEY_KINDS, argv, len, &err);

	if (r == NULL)
		return err;
	err = r->type == REDIS_REPLY_INTEGER ? 0 : -EIO;
	freeReplyObject(r);
	return err;
}

/* ---- The order writer's outbox, released set and result hash (see redis_store.h). ---- */

#define RS_STREAM_ID_MAX 48 /* "18446744073709551615-18446744073709551615" */

/* Parses a stream id "ms-seq". Returns 0 or -1. */
static int
rs_parse_stream_id(const char *s, size_t len, uint64_t *ms, uint64_t *seq)
{
	const char *dash = memchr(s, '-', len);

	if (dash == NULL)
		return -1;
	return rs_parse_u64(s, (size_t)(dash - s), ms) == 0 &&
			       rs_parse_u64(dash + 1, len - (size_t)(dash + 1 - s), seq) == 0
		       ? 0
		       : -1;
}

static int
rs_format_stream_id(char *buf, size_t cap, uint64_t ms, uint64_t seq)
{
	return snprintf(buf, cap, "%" PRIu64 "-%" PRIu64, ms, seq);
}

void
rs_outbox_buf_free(struct rs_outbox_buf *b)
{
	free(b->rec);
	memset(b, 0, sizeof(*b));
}

/* Makes room for want more records in b. Returns 0 or -ENOMEM. */
static int
rs_outbox_buf_reserve(struct rs_outbox_buf *b, size_t want)
{
	size_t cap = b->cap ? b->cap : 256;
	struct rs_outbox_rec *p;

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
rs_rec_finish(struct rs_outbox_rec *r, bool have_u, bool have_r)
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
rs_take_entry(const redisReply *r, struct rs_outbox_buf *b)
{
	uint64_t ms, seq;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		r->element[0]->type != REDIS_REPLY_STRING ||
		rs_parse_stream_id(r->element[0]->str, r->element[0]->len, &ms, &seq) != 0)
		return -1;
	const redisReply *f = r->element[1];
	size_t pairs = f->type == REDIS_REPLY_ARRAY ? f->elements / 2 : 0;
	unsigned first = b->n, have = 0; /* bits: u, r, t of the current reservation */
	bool cur = false;

	if (rs_outbox_buf_reserve(b, pairs > 0 ? pairs : 1) != 0)
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
				rs_rec_finish(&b->rec[b->n - 1], have & 1, have & 2);
			b->rec[b->n++] = (struct rs_outbox_rec){.id_ms = ms, .id_seq = seq, .admitted_ms = ms};
			cur = true;
			have = 0;
		}
		have |= bit;
		num = v->type == REDIS_REPLY_STRING && rs_parse_u64(v->str, v->len, &x) == 0;
		struct rs_outbox_rec *rec = &b->rec[b->n - 1];

		if (bit == 1)
			rec->user = num ? x : 0;
		else if (bit == 2)
			rec->reservation_id = num ? x : 0;
		else if (num)
			rec->admitted_ms = x; /* entries written before 't' was dropped */
	}
	if (cur)
		rs_rec_finish(&b->rec[b->n - 1], have & 1, have & 2);
	else
		b->rec[b->n++] = (struct rs_outbox_rec){.id_ms = ms, .id_seq = seq, .admitted_ms = ms};
	for (unsigned i = first; i < b->n; i++) {
		b->rec[i].index = i - first;
		b->rec[i].count = b->n - first;
	}
	b->entries++;
	return 0;
}

/* Replaces b's records with those of the entries of a reply array. Returns entries or < 0. */
static int
rs_take_entries(const redisReply *list, struct rs_outbox_buf *b)
{
	b->n = 0;
	b->entries = 0;
	if (list->type != REDIS_REPLY_ARRAY)
		return -EIO;
	for (size_t i = 0; i < list->elements; i++)
		if (rs_take_entry(list->element[i], b) == -ENOMEM) {
			b->n = 0;
			b->entries = 0;
			return -ENOMEM;
		}
	return (int)b->entries;
}

/* Runs a command built from argv; an error reply is logged and becomes -EIO. */
static redisReply *
rs_command_ok(struct redis_store *rs, int argc, const char **argv, const size_t *len, int *err,
	uint32_t event)
{
	redisReply *r = rs_command(rs, argc, argv, len, err);

	if (r != NULL && r->type == REDIS_REPLY_ERROR) {
		rs->st.errors++;
		LOG_RL(LOG_LEVEL_WARN, 10000, "redis: %s on event %" PRIu32 " failed: %s", argv[0],
			event, r->str);
		freeReplyObject(r);
		*err = -EIO;
		return NULL;
	}
	return r;
}

static void
rs_argv_strs(const char **argv, size_t *len, int argc)
{
	for (int i = 0; i < argc; i++)
		len[i] = strlen(argv[i]);
}

int
rs_outbox_group_create(struct redis_store *rs, uint32_t event, const char *group)
{
	char key[RS_KEY_MAX];
	const char *argv[] = {"XGROUP", "CREATE", key, group, "0", "MKSTREAM"};
	size_t len[6];
	int err = 0;

	if (event == 0 || group == NULL || group[0] == '\0')
		return -EINVAL;
	rs_key(key, sizeof(key), event, RS_KEY_OUTBOX);
	rs_argv_strs(argv, len, 6);
	redisReply *r = rs_command(rs, 6, argv, len, &err);

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

int
rs_outbox_read(struct redis_store *rs, uint32_t event, const char *group, const char *consumer,
	unsigned max, struct rs_outbox_buf *out)
{
	char key[RS_KEY_MAX], count[16];
	const char *argv[] = {
		"XREADGROUP", "GROUP", group, consumer, "COUNT", count, "STREAMS", key, ">"};
	size_t len[9];
	int err = 0, n;

	if (event == 0 || max == 0 || max > RS_BATCH_MAX)
		return -EINVAL;
	rs_key(key, sizeof(key), event, RS_KEY_OUTBOX);
	snprintf(count, sizeof(count), "%u", max);
	rs_argv_strs(argv, len, 9);
	redisReply *r = rs_command_ok(rs, 9, argv, len, &err, event);

	if (r == NULL)
		return err;
	out->n = 0;
	out->entries = 0;
	if (r->type == REDIS_REPLY_NIL) {
		n = 0;
	} else if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
		   r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 2) {
		n = rs_take_entries(r->element[0]->element[1], out);
	} else {
		n = -EIO;
	}
	freeReplyObject(r);
	return n;
}

int
rs_outbox_claim(struct redis_store *rs, uint32_t event, const char *group, const char *consumer,
	uint64_t min_idle_ms, char *cursor, size_t cursor_cap, unsigned max,
	struct rs_outbox_buf *out)
{
	char key[RS_KEY_MAX], count[16], idle[24];
	const char *argv[] = {"XAUTOCLAIM", key, group, consumer, idle, cursor, "COUNT", count};
	size_t len[8];
	int err = 0, n;
	uint64_t ms, seq;

	if (event == 0 || max == 0 || max > RS_BATCH_MAX || cursor_cap < RS_STREAM_ID_MAX)
		return -EINVAL;
	rs_key(key, sizeof(key), event, RS_KEY_OUTBOX);
	snprintf(count, sizeof(count), "%u", max);
	snprintf(idle, sizeof(idle), "%" PRIu64, min_idle_ms);
	rs_argv_strs(argv, len, 8);
	redisReply *r = rs_command_ok(rs, 8, argv, len, &err, event);

	if (r == NULL)
		return err;
	out->n = 0;
	out->entries = 0;
	if (r->type == REDIS_REPLY_ARRAY && r->elements >= 2 &&
		r->element[0]->type == REDIS_REPLY_STRING &&
		rs_parse_stream_id(r->element[0]->str, r->element[0]->len, &ms, &seq) == 0) {
		n = rs_take_entries(r->element[1], out);
		/* Out of memory: the scan goes on from the same place next time. */
		if (n >= 0)
			rs_format_stream_id(cursor, cursor_cap, ms, seq);
	} else {
		n = -EIO;
	}
	freeReplyObject(r);
	return n;
}

int
rs_outbox_ack(struct redis_store *rs, uint32_t event, const char *group,
	const struct rs_outbox_rec *e, unsigned n)
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
	rs_key(key, sizeof(key), event, RS_KEY_OUTBOX);
	argv[0] = "XACK";
	argv[1] = key;
	argv[2] = group;
	for (unsigned i = 0; i < n; i++) {
		rs_format_stream_id(ids[i], sizeof(ids[i]), e[i].id_ms, e[i].id_seq);
		argv[3 + i] = ids[i];
	}
	rs_argv_strs(argv, len, (int)(3 + n));
	redisReply *r = rs_command_ok(rs, (int)(3 + n), argv, len, &err, event);

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
rs_outbox_pending(struct redis_store *rs, uint32_t event, const char *group, uint64_t *count,
	uint64_t *oldest_ms, uint64_t *oldest_seq)
{
	char key[RS_KEY_MAX];
	const char *argv[] = {"XPENDING", key, group};
	size_t len[3];
	int err = 0;

	rs_key(key, sizeof(key), event, RS_KEY_OUTBOX);
	rs_argv_strs(argv, len, 3);
	redisReply *r = rs_command_ok(rs, 3, argv, len, &err, event);

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
					  rs_parse_stream_id(r->element[1]->str, r->element[1]->len,
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
rs_outbox_trim(struct redis_store *rs, uint32_t event, const char *group, uint64_t *trimmed)
{
	char key[RS_KEY_MAX];
	const char *argv[] = {"EVAL", outbox_trim_lua, "1", key, group};
	size_t len[5];
	int err = 0;

	rs_key(key, sizeof(key), event, RS_KEY_OUTBOX);
	rs_argv_strs(argv, len, 5);
	redisReply *r = rs_command_ok(rs, 5, argv, len, &err, event);

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
 * Runs "cmd[0] .. cmd[ncmd-1] <event's key of kind> vals[0] ... vals[n-1]" (ncmd 1..3, n
 * 1..RS_BATCH_MAX numbers) and returns its reply (free it), or NULL with *err = -EINVAL,
 * -ENOMEM, -ENOTCONN or -EIO.
 */
static redisReply *
rs_key_numbers(struct redis_store *rs, const char *const *cmd, unsigned ncmd, uint32_t event,
	enum rs_key_kind kind, const uint64_t *vals, unsigned n, int *err)
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
	rs_key(key, sizeof(key), event, kind);
	for (unsigned i = 0; i < ncmd; i++) {
		argv[i] = cmd[i];
		len[i] = strlen(cmd[i]);
	}
	argv[ncmd] = key;
	len[ncmd] = strlen(key);
	for (unsigned i = 0; i < n; i++) {
		argv[ncmd + 1 + i] = num[i];
		len[ncmd + 1 + i] = rs_u64_to_dec(num[i], vals[i]);
	}
	redisReply *r = rs_command_ok(rs, (int)(ncmd + 1 + n), argv, len, err, event);

	free(num);
	return r;
}

/*
 * SMISMEMBER (on a set) or HMGET (on a hash) of n numbers (1..RS_BATCH_MAX) on one of an
 * event's keys: member[i] = 1 when vals[i] is a member or has a field. Returns 0, -EINVAL,
 * -ENOMEM, -ENOTCONN or -EIO.
 */
static int
rs_members(struct redis_store *rs, uint32_t event, enum rs_key_kind kind, const uint64_t *vals,
	unsigned n, uint8_t *member)
{
	bool hash = kind == RS_KEY_RESULT;
	const char *cmd[] = {hash ? "HMGET" : "SMISMEMBER"};
	int err = 0;
	redisReply *r = rs_key_numbers(rs, cmd, 1, event, kind, vals, n, &err);

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
rs_released_check(
	struct redis_store *rs, uint32_t event, const uint64_t *rids, unsigned n, uint8_t *released)
{
	return rs_members(rs, event, RS_KEY_RELEASED, rids, n, released);
}

int
rs_buyers_missing(
	struct redis_store *rs, uint32_t event, const uint64_t *users, unsigned n, uint8_t *missing)
{
	int rc = rs_members(rs, event, RS_KEY_RESULT, users, n, missing);

	for (unsigned i = 0; rc == 0 && i < n; i++)
		missing[i] = !missing[i];
	return rc;
}

/*
 * KEYS[1] the result hash, ARGV the users to make buyers again: a user without a field gets
 * "H" (holds an order in PostgreSQL); a field that exists is left as it is.
 */
static const char repair_lua[] =
	"for i = 1, #ARGV do redis.call('HSETNX', KEYS[1], ARGV[i], 'H') end\n"
	"return #ARGV\n";

int
rs_repair(struct redis_store *rs, uint32_t event, int64_t stock, const uint64_t *add_buyers,
	unsigned n)
{
	char key[RS_KEY_MAX], sval[RS_U64_DIGITS + 1];
	const char *argv[3];
	size_t len[3];
	int err = 0;

	if (event == 0 || stock < 0 || n > RS_BATCH_MAX)
		return -EINVAL;
	if (n > 0) {
		const char *cmd[] = {"EVAL", repair_lua, "1"};
		redisReply *r =
			rs_key_numbers(rs, cmd, 3, event, RS_KEY_RESULT, add_buyers, n, &err);

		if (r == NULL)
			return err;
		freeReplyObject(r);
	}
	rs_key(key, sizeof(key), event, RS_KEY_STOCK);
	argv[0] = "SET";
	len[0] = 3;
	argv[1] = key;
	len[1] = strlen(key);
	len[2] = rs_u64_to_dec(sval, (uint64_t)stock);
	argv[2] = sval;
	redisReply *r = rs_command_ok(rs, 3, argv, len, &err, event);

	if (r == NULL)
		return err;
	freeReplyObject(r);
	return 0;
}

/*
 * KEYS[1] the result hash, KEYS[2] the outbox; ARGV[1] the group, ARGV[2] the number p of
 * field/value pairs that follow, then the stream ids. One script, so that the entries are
 * acknowledged only once their results are written: an HSET that fails stops it before XACK.
 */
/*
 * KEYS[1] the result hash, KEYS[2] the outbox; ARGV[1] the group, ARGV[2] p, then p pairs
 * (user, "O:..."), then the entry ids to acknowledge. A user whose result became final
 * meanwhile (X: released, C: cancelled, P: paid) keeps it: an order expired by the sweeper
 * between this writer's COMMIT and its publishing must not be shown "ordered" again.
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
	"    if c ~= 'X:' and c ~= 'C:' and c ~= 'P:' then\n"
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
rs_results_ordered_ack(struct redis_store *rs, uint32_t event, const char *group,
	const struct rs_order_result *res, unsigned n_res, const struct rs_outbox_rec *e,
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
	rs_key(key_res, sizeof(key_res), event, RS_KEY_RESULT);
	rs_key(key_out, sizeof(key_out), event, RS_KEY_OUTBOX);
	snprintf(pairs, sizeof(pairs), "%u", n_res);
	argv[0] = "EVAL";
	argv[1] = results_ack_lua;
	argv[2] = "2";
	argv[3] = key_res;
	argv[4] = key_out;
	argv[5] = group;
	argv[6] = pairs;
	rs_argv_strs(argv, len, 7);
	for (unsigned i = 0; i < n_res; i++) {
		char *u = buf[2 * i], *v = buf[2 * i + 1];

		len[7 + 2 * i] = rs_u64_to_dec(u, res[i].user);
		len[8 + 2 * i] =
			(size_t)snprintf(v, sizeof(buf[0]), "O:%" PRIu64 ":%" PRIu64 ":%" PRIu64,
				res[i].reservation_id, res[i].order_id, res[i].pay_deadline_ms);
		argv[7 + 2 * i] = u;
		argv[8 + 2 * i] = v;
	}
	for (unsigned i = 0; i < n; i++) {
		char *id = buf[2 * n_res + i];

		rs_format_stream_id(id, sizeof(buf[0]), e[i].id_ms, e[i].id_seq);
		argv[7 + 2 * n_res + i] = id;
		len[7 + 2 * n_res + i] = strlen(id);
	}
	redisReply *r = rs_command_ok(rs, (int)argc, argv, len, &err, event);

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
