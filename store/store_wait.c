/* SPDX-License-Identifier: BSD-3-Clause */
#include "store/store_wait.h"

#include <errno.h>

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
	freeReplyObject(r);
	r = rs->c != NULL ? store_read_reply(rs) : NULL;
	int rc = store_wait_take(rs, r);

	freeReplyObject(r);
	return rc;
}
