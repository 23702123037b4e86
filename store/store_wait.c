/* SPDX-License-Identifier: BSD-3-Clause */
#include "store/store_wait.h"

#include <errno.h>
#include <poll.h>
#include <sys/time.h>

#include "common/log.h"
#include "store/store_conn_int.h"

int
store_append_wait(struct store *rs)
{
	char n[RS_U64_DIGITS + 1], t[RS_U64_DIGITS + 1];
	const char *argv[] = {"WAIT", n, t};
	size_t len[3] = {4, 0, 0};

	len[1] = store_u64_to_dec(n, rs->cfg.wait_replicas);
	len[2] = store_u64_to_dec(t, rs->cfg.wait_timeout_ms);
	if (redisAppendCommandArgv(rs->c, 3, argv, len) != REDIS_OK) {
		store_lost(rs, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int
store_wait_take(struct store *rs, redisReply *r)
{
	if (r == NULL)
		return -ENOTCONN;
	if (r->type == REDIS_REPLY_INTEGER && r->integer >= (long long)rs->cfg.wait_replicas)
		return 0;
	rs->st.wait_timeouts++;
	LOG_RL(LOG_LEVEL_WARN, 10000,
		"redis: %s: a batch reached %lld of the %u replicas within %u ms; its verdicts are "
		"answered retry (see docs/ha.md)",
		rs->where, r->type == REDIS_REPLY_INTEGER ? r->integer : -1LL,
		rs->cfg.wait_replicas, rs->cfg.wait_timeout_ms);
	return -ETIMEDOUT;
}

int
store_wait_replicas(struct store *rs)
{
	redisReply *r;
	int rc;

	if (rs->cfg.wait_replicas == 0)
		return 0;
	if (rs->c == NULL)
		return -ENOTCONN;
	if (store_append_wait(rs) != 0)
		return -ENOTCONN;
	r = store_read_reply(rs);
	rc = store_wait_take(rs, r);
	freeReplyObject(r);
	return rc;
}

int
store_wait_reads(struct store *rs)
{
	static const char *argv[] = {"PUBLISH", "fg:replicated", ""};
	static const size_t len[] = {7, 13, 0};
	redisReply *r;

	if (rs->cfg.wait_replicas == 0)
		return 0;
	if (rs->c == NULL)
		return -ENOTCONN;
	if (redisAppendCommandArgv(rs->c, 3, argv, len) != REDIS_OK) {
		store_lost(rs, "out of memory");
		return -ENOTCONN;
	}
	if (store_append_wait(rs) != 0)
		return -ENOTCONN;
	r = store_read_reply(rs);
	if (r == NULL)
		return -ENOTCONN;
	/* A refused PUBLISH leaves the offset before the reads: the WAIT would prove nothing. */
	bool published = r->type == REDIS_REPLY_INTEGER;

	freeReplyObject(r);
	r = rs->c != NULL ? store_read_reply(rs) : NULL;
	int rc = r == NULL || published ? store_wait_take(rs, r) : -ENOTCONN;

	freeReplyObject(r);
	return rc;
}

uint64_t
store_wait_mark(const struct store *rs)
{
	return rs->conn_id;
}

int
store_wait_reads_since(struct store *rs, uint64_t mark)
{
	if (rs->cfg.wait_replicas == 0)
		return 0;
	if (rs->conn_id != mark)
		return -ENOTCONN;
	return store_wait_reads(rs);
}

unsigned
store_wait_wanted(const struct store *rs)
{
	return rs->cfg.wait_replicas;
}

unsigned
store_wait_owed(const struct store *rs)
{
	return rs->wc_owed;
}

int
store_wait_fd(const struct store *rs)
{
	return rs->wc != NULL ? rs->wc->fd : -1;
}

/* The waiter's ticket group i places after the oldest. */
#define WC_GRP(rs, i) ((rs)->wc_grp[((rs)->wc_head + (i)) % RS_WAIT_GROUPS])

/* Drops the waiter: every ticket not answered yet is answered -ENOTCONN. */
static void
store_waiter_lost(struct store *rs, const char *why)
{
	unsigned lost = 0, keep = 0;

	/* The answered groups come first; the rest become one lost group after them. */
	while (keep < rs->wc_len && WC_GRP(rs, keep).state == RS_WAIT_ANSWERED)
		keep++;
	for (unsigned i = keep; i < rs->wc_len; i++)
		lost += WC_GRP(rs, i).n;
	rs->wc_len = keep;
	if (lost > 0) {
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"redis: %s: lost the WAIT connection (%s); %u pipelined round(s) answered "
			"retry",
			rs->where, why, lost);
		WC_GRP(rs, rs->wc_len).n = lost;
		WC_GRP(rs, rs->wc_len).state = RS_WAIT_ANSWERED;
		WC_GRP(rs, rs->wc_len).rc = -ENOTCONN;
		rs->wc_len++;
	}
	if (rs->wc != NULL)
		redisFree(rs->wc);
	rs->wc = NULL;
	rs->wc_pub = 0;
}

/* Opens the waiter to the server of the store's connection. Returns 0 or -ENOTCONN. */
static int
store_waiter_open(struct store *rs)
{
	unsigned ct = rs->cfg.connect_timeout_ms,
		 wt = rs->cfg.command_timeout_ms + rs->cfg.wait_timeout_ms;
	struct timeval ctv = {.tv_sec = ct / 1000, .tv_usec = (suseconds_t)(ct % 1000) * 1000};
	struct timeval wtv = {.tv_sec = wt / 1000, .tv_usec = (suseconds_t)(wt % 1000) * 1000};
	redisContext *c = rs->unix_path[0] != '\0'
				  ? redisConnectUnixWithTimeout(rs->unix_path, ctv)
				  : redisConnectWithTimeout(rs->host, (int)rs->cfg.port, ctv);

	if (c == NULL || c->err || redisSetTimeout(c, wtv) != REDIS_OK) {
		LOG_RL(LOG_LEVEL_WARN, 10000, "redis: %s: cannot open the WAIT connection: %s",
			rs->where, c != NULL ? c->errstr : "out of memory");
		goto fail;
	}
	if (rs->password[0] != '\0') {
		redisReply *r = rs->user[0] != '\0'
					? redisCommand(c, "AUTH %s %s", rs->user, rs->password)
					: redisCommand(c, "AUTH %s", rs->password);
		bool ok = r != NULL && r->type != REDIS_REPLY_ERROR;

		freeReplyObject(r);
		if (!ok) {
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"redis: %s: AUTH refused on the WAIT connection", rs->where);
			goto fail;
		}
	}
	rs->wc = c;
	rs->wc_conn_id = rs->conn_id;
	rs->wc_pub = 0;
	return 0;
fail:
	if (c != NULL)
		redisFree(c);
	return -ENOTCONN;
}

/*
 * Sends PUBLISH + WAIT on the open waiter for group g (no other in flight). Returns 0, or
 * -ENOTCONN with the waiter lost (g then answered -ENOTCONN with the others).
 */
static int
store_waiter_send(struct store *rs, unsigned g)
{
	static const char *pub[] = {"PUBLISH", "fg:replicated", ""};
	static const size_t pub_len[] = {7, 13, 0};
	char n[RS_U64_DIGITS + 1], t[RS_U64_DIGITS + 1];
	const char *wait[] = {"WAIT", n, t};
	size_t wait_len[3] = {4, 0, 0};
	int done = 0;

	wait_len[1] = store_u64_to_dec(n, rs->cfg.wait_replicas);
	wait_len[2] = store_u64_to_dec(t, rs->cfg.wait_timeout_ms);
	WC_GRP(rs, g).state = RS_WAIT_IN_FLIGHT;
	rs->wc_pub = 0;
	/* hiredis appends all or nothing; a half-sent pair is a lost waiter. */
	if (redisAppendCommandArgv(rs->wc, 3, pub, pub_len) != REDIS_OK ||
		redisAppendCommandArgv(rs->wc, 3, wait, wait_len) != REDIS_OK) {
		store_waiter_lost(rs, "out of memory");
		return -ENOTCONN;
	}
	while (!done)
		if (redisBufferWrite(rs->wc, &done) != REDIS_OK) {
			store_waiter_lost(rs, rs->wc->errstr[0] ? rs->wc->errstr : "write failed");
			return -ENOTCONN;
		}
	return 0;
}

int
store_wait_send(struct store *rs)
{
	if (rs->cfg.wait_replicas == 0)
		return -EINVAL;
	/* Reconnected since the waiter was opened: the old server's answers are still owed,
	 * but this batch ran elsewhere. Rare (an outage): those rounds are answered retry. */
	if (rs->wc != NULL && rs->wc_conn_id != rs->conn_id)
		store_waiter_lost(rs, "the store reconnected");
	if (rs->wc == NULL) {
		/* Only the live connection the batch ran on says which server holds it. */
		if (rs->c == NULL || store_waiter_open(rs) != 0)
			return -ENOTCONN;
	}
	if (rs->wc_len > 0 && WC_GRP(rs, rs->wc_len - 1).state == RS_WAIT_DEFERRED) {
		/* The WAIT sent when the one in flight answers covers this batch too. */
		WC_GRP(rs, rs->wc_len - 1).n++;
		rs->wc_owed++;
		return 0;
	}
	if (rs->wc_len == RS_WAIT_GROUPS)
		return -ENOTCONN; /* cannot happen: at most four groups at once */
	bool in_flight = rs->wc_len > 0 && WC_GRP(rs, rs->wc_len - 1).state == RS_WAIT_IN_FLIGHT;

	WC_GRP(rs, rs->wc_len).n = 1;
	WC_GRP(rs, rs->wc_len).state = RS_WAIT_DEFERRED;
	WC_GRP(rs, rs->wc_len).rc = 0;
	rs->wc_len++;
	rs->wc_owed++;
	/* One WAIT at a time: Redis would run a second only once the first answered, and it
	 * would then cover whatever was written meanwhile; one WAIT for all of them is cheaper. */
	if (!in_flight && store_waiter_send(rs, rs->wc_len - 1) != 0) {
		/* Not owed: the lost group holds this ticket as its last; take it back. */
		WC_GRP(rs, rs->wc_len - 1).n--;
		if (WC_GRP(rs, rs->wc_len - 1).n == 0)
			rs->wc_len--;
		rs->wc_owed--;
		return -ENOTCONN;
	}
	return 0;
}

/* One reply of the waiter into *out: 0, 1 none yet (only when !block), -1 the waiter lost. */
static int
store_waiter_reply(struct store *rs, bool block, redisReply **out)
{
	void *r = NULL;

	if (redisGetReplyFromReader(rs->wc, &r) != REDIS_OK)
		goto lost;
	if (r == NULL && !block) {
		struct pollfd p = {.fd = rs->wc->fd, .events = POLLIN};

		if (poll(&p, 1, 0) <= 0)
			return 1;
		if (redisBufferRead(rs->wc) != REDIS_OK ||
			redisGetReplyFromReader(rs->wc, &r) != REDIS_OK)
			goto lost;
		if (r == NULL)
			return 1;
	} else if (r == NULL && (redisGetReply(rs->wc, &r) != REDIS_OK || r == NULL)) {
		goto lost;
	}
	*out = r;
	return 0;
lost:
	store_waiter_lost(rs, rs->wc->errstr[0] ? rs->wc->errstr : "no reply");
	return -1;
}

/*
 * Reads the answer of the WAIT in flight (the oldest group's): 0 it came (the group is
 * answered, and the deferred group's WAIT sent), 1 not yet (!block), -1 the waiter was lost.
 */
static int
store_waiter_take(struct store *rs, bool block)
{
	redisReply *r = NULL;
	int rc;

	if (rs->wc_pub == 0) {
		rc = store_waiter_reply(rs, block, &r);
		if (rc != 0)
			return rc;
		/* Without it the WAIT would count an older offset: never trust it then. */
		rs->wc_pub = r->type == REDIS_REPLY_INTEGER ? 1 : -1;
		if (rs->wc_pub < 0)
			LOG_RL(LOG_LEVEL_WARN, 10000, "redis: %s: PUBLISH before WAIT refused: %s",
				rs->where,
				r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
		freeReplyObject(r);
		r = NULL;
	}
	rc = store_waiter_reply(rs, block, &r);
	if (rc != 0)
		return rc;
	WC_GRP(rs, 0).state = RS_WAIT_ANSWERED;
	WC_GRP(rs, 0).rc = rs->wc_pub > 0 ? store_wait_take(rs, r) : -ENOTCONN;
	rs->wc_pub = 0;
	freeReplyObject(r);
	if (rs->wc_len > 1 && WC_GRP(rs, 1).state == RS_WAIT_DEFERRED)
		store_waiter_send(rs, 1);
	return 0;
}

int
store_wait_next(struct store *rs, bool block)
{
	while (rs->wc_len > 0) {
		if (WC_GRP(rs, 0).state == RS_WAIT_ANSWERED) {
			int rc = WC_GRP(rs, 0).rc;

			rs->wc_owed--;
			if (--WC_GRP(rs, 0).n == 0) {
				rs->wc_head = (rs->wc_head + 1) % RS_WAIT_GROUPS;
				rs->wc_len--;
			}
			return rc;
		}
		if (rs->wc == NULL) /* cannot happen: a lost waiter answered them all */
			store_waiter_lost(rs, "gone");
		else if (WC_GRP(rs, 0).state == RS_WAIT_DEFERRED) /* not sent yet */
			store_waiter_send(rs, 0);
		else if (store_waiter_take(rs, block) == 1)
			return 1;
	}
	return -EINVAL;
}
