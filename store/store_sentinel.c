/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "common/log.h"
#include "common/now.h"
#include "store/store_conn_int.h"
#include "store/store_sentinel.h"

/* A lost subscription is made again (to the next Sentinel) at most this often. */
#define RS_SUBSCRIBE_EVERY_MS 1000
/* The subscription is made from the daemon's loop: a Sentinel whose host is gone must not hold
 * decisions up for a whole connect timeout. */
#define RS_SUBSCRIBE_CONNECT_MS 100

struct store_sentinel {
	unsigned n;
	unsigned next; /* the Sentinel to ask first: the last one that answered */
	unsigned sub_next;
	struct {
		char host[256];
		unsigned port;
	} s[RS_SENTINELS_MAX];
	char master[64];
	char describe[400];
	unsigned timeout_ms;
	redisContext *sub; /* SUBSCRIBE +switch-master, read without blocking */
	uint64_t sub_next_ms;
	bool switched;
	char to_host[256]; /* where the last +switch-master went */
	unsigned to_port;
};

static struct timeval
sn_timeval(unsigned ms)
{
	return (struct timeval){.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};
}

/* Parses one "host:port" of len bytes into slot i. Returns 0 or -1 with err filled. */
static int
sn_parse_one(
	struct store_sentinel *sn, unsigned i, const char *p, size_t len, char *err, size_t err_len)
{
	const char *colon = memrchr(p, ':', len);
	char port[8];
	char *end;
	unsigned long v;

	if (colon == NULL || colon == p || (size_t)(p + len - colon - 1) >= sizeof(port) ||
		colon + 1 == p + len || (size_t)(colon - p) >= sizeof(sn->s[i].host)) {
		snprintf(err, err_len,
			"redis.sentinels: \"%.*s\" is not host:port (e.g. "
			"10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379)",
			(int)len, p);
		return -1;
	}
	memcpy(port, colon + 1, (size_t)(p + len - colon - 1));
	port[p + len - colon - 1] = '\0';
	v = strtoul(port, &end, 10);
	if (*end != '\0' || v == 0 || v > 65535) {
		snprintf(err, err_len, "redis.sentinels: the port of \"%.*s\" is not in 1..65535",
			(int)len, p);
		return -1;
	}
	memcpy(sn->s[i].host, p, (size_t)(colon - p));
	sn->s[i].host[colon - p] = '\0';
	sn->s[i].port = (unsigned)v;
	return 0;
}

struct store_sentinel *
store_sentinel_new(
	const char *list, const char *master, unsigned timeout_ms, char *err, size_t err_len)
{
	struct store_sentinel *sn = calloc(1, sizeof(*sn));
	const char *p = list;

	if (sn == NULL) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	if (master == NULL || master[0] == '\0' || strlen(master) >= sizeof(sn->master) ||
		strpbrk(master, " \t\r\n") != NULL) {
		snprintf(err, err_len,
			"redis.master_name must be the name the Sentinels monitor the primary by "
			"(1..%zu characters, no spaces)",
			sizeof(sn->master) - 1);
		goto fail;
	}
	strcpy(sn->master, master);
	while (*p != '\0') {
		size_t len = strcspn(p, ", ");

		if (len > 0) {
			if (sn->n == RS_SENTINELS_MAX) {
				snprintf(err, err_len,
					"redis.sentinels lists more than %d Sentinels",
					RS_SENTINELS_MAX);
				goto fail;
			}
			if (sn_parse_one(sn, sn->n, p, len, err, err_len) != 0)
				goto fail;
			sn->n++;
		}
		p += len;
		p += *p != '\0';
	}
	if (sn->n == 0) {
		snprintf(err, err_len, "redis.sentinels lists no Sentinel");
		goto fail;
	}
	sn->timeout_ms = timeout_ms ? timeout_ms : 1000;
	snprintf(sn->describe, sizeof(sn->describe), "master %s of Sentinel %s:%u%s", sn->master,
		sn->s[0].host, sn->s[0].port, sn->n > 1 ? " and others" : "");
	return sn;
fail:
	free(sn);
	return NULL;
}

void
store_sentinel_free(struct store_sentinel *sn)
{
	if (sn == NULL)
		return;
	if (sn->sub != NULL)
		redisFree(sn->sub);
	free(sn);
}

const char *
store_sentinel_describe(const struct store_sentinel *sn)
{
	return sn->describe;
}

static redisContext *
sn_connect(
	const struct store_sentinel *sn, unsigned i, unsigned connect_ms, char *why, size_t why_len)
{
	redisContext *c =
		redisConnectWithTimeout(sn->s[i].host, (int)sn->s[i].port, sn_timeval(connect_ms));

	if (c == NULL || c->err) {
		snprintf(why, why_len, "%s", c != NULL ? c->errstr : "out of memory");
		if (c != NULL)
			redisFree(c);
		return NULL;
	}
	if (redisSetTimeout(c, sn_timeval(sn->timeout_ms)) != REDIS_OK) {
		snprintf(why, why_len, "cannot set its timeout: %s", c->errstr);
		redisFree(c);
		return NULL;
	}
	return c;
}

/* Asks Sentinel i. Returns 0 with the address, or -1 with why. */
static int
sn_ask(struct store_sentinel *sn, unsigned i, char *host, size_t host_len, unsigned *port,
	char *why, size_t why_len)
{
	redisContext *c = sn_connect(sn, i, sn->timeout_ms, why, why_len);
	redisReply *r;
	int rc = -1;

	if (c == NULL)
		return -1;
	r = redisCommand(c, "SENTINEL get-master-addr-by-name %s", sn->master);
	if (r == NULL) {
		snprintf(why, why_len, "%s", c->errstr);
	} else if (r->type == REDIS_REPLY_NIL) {
		snprintf(why, why_len, "it monitors no master named %s", sn->master);
	} else if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		   r->element[0]->type != REDIS_REPLY_STRING ||
		   r->element[1]->type != REDIS_REPLY_STRING || r->element[0]->len >= host_len) {
		snprintf(why, why_len, "%s",
			r->type == REDIS_REPLY_ERROR ? r->str : "an answer this build cannot read");
	} else {
		unsigned long v = strtoul(r->element[1]->str, NULL, 10);

		if (v == 0 || v > 65535) {
			snprintf(why, why_len, "it answered port %s", r->element[1]->str);
		} else {
			memcpy(host, r->element[0]->str, r->element[0]->len + 1);
			*port = (unsigned)v;
			rc = 0;
		}
	}
	freeReplyObject(r);
	redisFree(c);
	return rc;
}

int
store_sentinel_primary(struct store_sentinel *sn, char *host, size_t host_len, unsigned *port,
	char *why, size_t why_len)
{
	size_t used = 0;

	why[0] = '\0';
	for (unsigned k = 0; k < sn->n; k++) {
		unsigned i = (sn->next + k) % sn->n;
		char one[256];

		if (sn_ask(sn, i, host, host_len, port, one, sizeof(one)) == 0) {
			sn->next = i;
			return 0;
		}
		if (used < why_len)
			used += (size_t)snprintf(why + used, why_len - used, "%sSentinel %s:%u: %s",
				k ? "; " : "", sn->s[i].host, sn->s[i].port, one);
	}
	return -1;
}

/* Subscribes to +switch-master on the next Sentinel. */
static void
sn_subscribe(struct store_sentinel *sn)
{
	char why[256];
	unsigned i = sn->sub_next;
	redisReply *r;

	sn->sub_next = (sn->sub_next + 1) % sn->n;
	sn->sub = sn_connect(sn, i, RS_SUBSCRIBE_CONNECT_MS, why, sizeof(why));
	if (sn->sub == NULL) {
		LOG_DEBUG("redis: cannot subscribe to Sentinel %s:%u: %s", sn->s[i].host,
			sn->s[i].port, why);
		return;
	}
	r = redisCommand(sn->sub, "SUBSCRIBE +switch-master");
	if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
		LOG_DEBUG(
			"redis: SUBSCRIBE on Sentinel %s:%u failed", sn->s[i].host, sn->s[i].port);
		freeReplyObject(r);
		redisFree(sn->sub);
		sn->sub = NULL;
		return;
	}
	freeReplyObject(r);
}

/* Takes one message of the subscription. */
static void
sn_take(struct store_sentinel *sn, const redisReply *r)
{
	size_t mlen = strlen(sn->master);

	/* ["message", "+switch-master", "<master> <old ip> <old port> <new ip> <new port>"] */
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
		r->element[2]->type != REDIS_REPLY_STRING)
		return;
	const char *m = r->element[2]->str;

	char host[256];
	unsigned port;

	if (strncmp(m, sn->master, mlen) == 0 && m[mlen] == ' ' &&
		sscanf(m + mlen, " %*s %*u %255s %u", host, &port) == 2) {
		LOG_NOTICE("redis: Sentinel announced a failover: %s", m);
		sn->switched = true;
		strcpy(sn->to_host, host);
		sn->to_port = port;
	}
}

bool
store_sentinel_switched(struct store_sentinel *sn)
{
	uint64_t now = now_mono_ms();

	if (sn->sub == NULL && now >= sn->sub_next_ms) {
		sn->sub_next_ms = now + RS_SUBSCRIBE_EVERY_MS;
		sn_subscribe(sn);
	}
	while (sn->sub != NULL) {
		struct pollfd p = {.fd = sn->sub->fd, .events = POLLIN};
		void *reply = NULL;

		if (redisGetReplyFromReader(sn->sub, &reply) != REDIS_OK)
			goto lost;
		if (reply != NULL) {
			sn_take(sn, reply);
			freeReplyObject(reply);
			continue;
		}
		if (poll(&p, 1, 0) != 1)
			break;
		if (redisBufferRead(sn->sub) != REDIS_OK)
			goto lost;
	}
	bool s = sn->switched;

	sn->switched = false;
	return s;
lost:
	/* A failover announced on it may have been missed: READONLY or a lost connection to the
	 * old primary still tells the store. */
	LOG_DEBUG("redis: the subscription to a Sentinel was lost: %s", sn->sub->errstr);
	redisFree(sn->sub);
	sn->sub = NULL;
	sn->sub_next_ms = now + RS_SUBSCRIBE_EVERY_MS;
	s = sn->switched;
	sn->switched = false;
	return s;
}

int
store_check_primary(redisContext *c, char *why, size_t why_len)
{
	redisReply *r = redisCommand(c, "ROLE");
	int rc = 0;

	if (r == NULL) {
		snprintf(why, why_len, "the connection was lost while asking its ROLE: %s",
			c->errstr);
		return -2;
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
		r->element[0]->type != REDIS_REPLY_STRING) {
		snprintf(why, why_len, "ROLE: %s",
			r->type == REDIS_REPLY_ERROR ? r->str : "an answer this build cannot read");
		rc = -1;
	} else if (strcmp(r->element[0]->str, "master") != 0) {
		/* Sentinel's answer is older than a failover or a demotion: ask again later. */
		snprintf(why, why_len, "it is a %s, not the primary (a failover under way?)",
			r->element[0]->str);
		rc = -1;
	}
	freeReplyObject(r);
	return rc;
}

/* CONFIG GET name into *v. Returns 0, -1 with why, or -2 (connection lost). */
static int
sn_config_uint(redisContext *c, const char *name, unsigned long *v, char *why, size_t why_len)
{
	redisReply *r = redisCommand(c, "CONFIG GET %s", name);
	int rc = 0;

	if (r == NULL) {
		snprintf(why, why_len, "the connection was lost while checking its settings: %s",
			c->errstr);
		return -2;
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		r->element[1]->type != REDIS_REPLY_STRING) {
		snprintf(why, why_len,
			"its settings could not be checked (CONFIG GET %s: %s): check that "
			"min-replicas-to-write is at least redis.wait_replicas, then set "
			"redis.unsafe_settings = yes",
			name, r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
		rc = -1;
	} else {
		*v = strtoul(r->element[1]->str, NULL, 10);
	}
	freeReplyObject(r);
	return rc;
}

int
store_check_min_replicas(redisContext *c, unsigned want, char *why, size_t why_len)
{
	unsigned long n = 0, lag = 0;
	int rc;

	if ((rc = sn_config_uint(c, "min-replicas-to-write", &n, why, why_len)) != 0 ||
		(rc = sn_config_uint(c, "min-replicas-max-lag", &lag, why, why_len)) != 0)
		return rc;
	if (n < want || lag == 0) {
		snprintf(why, why_len,
			"it runs with min-replicas-to-write %lu and min-replicas-max-lag %lu, "
			"flashgate needs min-replicas-to-write %u (redis.wait_replicas) and a lag "
			"above 0: otherwise a primary cut off from its replicas takes reservations "
			"that the failover then loses (set them in redis.conf, or "
			"redis.unsafe_settings = yes to accept the risk)",
			n, lag, want);
		return -1;
	}
	return 0;
}

int
store_locate_primary(struct store *rs, char *why, size_t why_len)
{
	char host[sizeof(rs->host)], one[400];
	unsigned port;

	if (rs->sn == NULL)
		return 0;
	if (store_sentinel_primary(rs->sn, host, sizeof(host), &port, one, sizeof(one)) != 0) {
		snprintf(why, why_len, "no Sentinel named the primary of %s: %s",
			store_sentinel_describe(rs->sn), one);
		return -1;
	}
	if (strcmp(host, rs->host) != 0 || port != rs->cfg.port) {
		if (rs->host[0] != '\0')
			LOG_NOTICE("redis: Sentinel names %s:%u the primary (was %s)", host, port,
				rs->where);
		strcpy(rs->host, host);
		rs->cfg.port = port;
		snprintf(rs->where, sizeof(rs->where), "%s:%u", rs->host, rs->cfg.port);
	}
	return 0;
}

int
store_check_replication(struct store *rs, redisContext *c, char *why, size_t why_len)
{
	int rc;

	if (rs->sn != NULL && (rc = store_check_primary(c, why, why_len)) != 0)
		return rc == -2 ? -2 : -3;
	if (rs->cfg.wait_replicas > 0 && rs->cfg.check_settings &&
		(rc = store_check_min_replicas(c, rs->cfg.wait_replicas, why, why_len)) != 0)
		return rc;
	rs->failover_seen = false;
	return 0;
}

bool
store_failover_noticed(struct store *rs)
{
	if (rs->sn == NULL) {
		/* One Redis: reconnecting to the same replica would change nothing. */
		rs->failover_seen = false;
		return false;
	}
	bool switched = store_sentinel_switched(rs->sn);

	/* A store that followed the failover already (its connection to the old primary was
	 * lost first) stays where it is. */
	if (switched && rs->c != NULL && rs->sn->to_port == rs->cfg.port &&
		strcmp(rs->sn->to_host, rs->host) == 0)
		switched = false;
	if (!switched && !rs->failover_seen)
		return false;
	rs->failover_seen = false;
	rs->st.failovers++;
	return true;
}
