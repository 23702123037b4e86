/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "common/log.h"
#include "common/now.h"
#include "store/store_conn_int.h"
#include "store/store_wait.h"
#include "store/store_reserve.h"

/* Appends one RESP bulk string to p; returns the end. */
static char *
store_resp_bulk(char *p, const char *s, size_t len)
{
	*p++ = '$';
	p += store_u64_to_dec(p, len);
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
store_resp_u64(char *p, uint64_t v)
{
	char d[RS_U64_DIGITS];

	return store_resp_bulk(p, d, store_u64_to_dec(d, v));
}

/*
 * Writes one EVALSHA of reserve.lua in RESP to rs->cmd and returns its length. The command is
 * formatted here rather than by hiredis because, with thousands of arguments per batch, that
 * formatting is a visible part of the control plane's time per decision.
 */
static size_t
store_reserve_format(struct store *rs, const struct store_batch *b)
{
	char *p = rs->cmd;
	unsigned n = b->n;

	*p++ = '*';
	p += store_u64_to_dec(p, RS_RESERVE_ARGC(n));
	*p++ = '\r';
	*p++ = '\n';
	p = store_resp_bulk(p, "EVALSHA", 7);
	p = store_resp_bulk(p, rs->scripts[RS_SCRIPT_RESERVE].sha1, 40);
	p = store_resp_bulk(p, "7", 1);
	static const enum store_key_kind kinds[RS_RESERVE_KEYS] = {RS_KEY_STOCK, RS_KEY_RESULT,
		RS_KEY_OUTBOX, RS_KEY_WINDOW, RS_KEY_DRAW, RS_KEY_WAIT, RS_KEY_WRANK};

	for (unsigned k = 0; k < RS_RESERVE_KEYS; k++) {
		char key[RS_KEY_MAX];

		p = store_resp_bulk(p, key, (size_t)store_key(key, sizeof(key), b->event, kinds[k]));
	}
	/* reserve.lua's layout: all users, then all ids, so that it can pass the users to HMGET
	 * with unpack() instead of building a table, then the control plane's clock for the sale
	 * window (an order's reserved_at is its outbox entry's, the moment Redis decided). */
	for (unsigned i = 0; i < n; i++)
		p = store_resp_u64(p, b->res[i].user);
	for (unsigned i = 0; i < n; i++)
		p = store_resp_u64(p, b->res[i].reservation_id);
	p = store_resp_u64(p, b->now_ms != 0 ? b->now_ms : now_wall_ms());
	p = b->draw ? store_resp_u64(p, b->draw_index) : store_resp_bulk(p, "-", 1);
	return (size_t)(p - rs->cmd);
}

/* Checks a batch's input; returns 0 or -EINVAL. */
static int
store_batch_check(const struct store_batch *b)
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
store_reserve_take(struct store *rs, struct store_batch *b, const redisReply *r)
{
	if (store_is_noscript(r))
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
	uint64_t counts[5] = {0}; /* sold out (or waiting), reserved, duplicate, closed, not
				   * started */

	/* The draw's guard refused the whole batch: nothing was written. */
	if (b->n > 0 && (r->element[0]->integer == -4 || r->element[0]->integer == -5)) {
		bool stale = r->element[0]->integer == -5;

		memset(b->verdicts, WIRE_V_RETRY, b->n);
		b->stock_left = r->element[b->n]->integer;
		rs->st.draw_refused += b->n;
		return stale ? -ESTALE : 0;
	}
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
		case 2: /* a draw batch's entrant beyond the stock, on the waiting list */
			if (!b->draw)
				goto bad;
			b->verdicts[i] = WIRE_V_WAITING;
			counts[0]++;
			break;
		case -2:
			b->verdicts[i] = WIRE_V_CLOSED;
			counts[3]++;
			break;
		case -3:
			b->verdicts[i] = WIRE_V_NOT_STARTED;
			counts[4]++;
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
	rs->st.outside_window += counts[3] + counts[4];
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
 * While store_reserve() works, a batch's status says where it is; these values never reach the
 * caller, who sees 0 or a negative errno.
 */
enum {
	RS_ST_TODO = 1,	     /* to be sent */
	RS_ST_SENT = 2,	     /* sent, reply not read yet */
	RS_ST_NOSCRIPT = 3,  /* Redis did not know the script: nothing of the batch ran */
	RS_ST_SENT_DONE = 4, /* decided in this round, the replicas' WAIT not read yet */
};

/*
 * With wait_replicas: sends one WAIT after the round's EVALSHAs (Redis answers it once the
 * replicas acknowledged every write before it), so that a whole pipeline of batches waits for
 * the replicas once. Returns true when it was sent.
 */
static bool
store_reserve_send_wait(struct store *rs, unsigned sent)
{
	int done = 0;

	if (rs->cfg.wait_replicas == 0 || sent == 0 || rs->c == NULL || store_append_wait(rs) != 0)
		return false;
	while (!done && rs->c != NULL)
		if (redisBufferWrite(rs->c, &done) != REDIS_OK)
			store_lost(rs, rs->c->errstr[0] ? rs->c->errstr : "write failed");
	return true;
}

/*
 * Appends one EVALSHA per batch in state RS_ST_TODO, then WAIT when replicas are configured,
 * then reads the replies in order: a batch ends with status 0, -EIO, -ENOTCONN, -ESTALE,
 * -ETIMEDOUT (decided, but the replicas did not acknowledge it: its verdicts must not be
 * published) or RS_ST_NOSCRIPT. Returns how many got NOSCRIPT.
 */
static unsigned
store_reserve_round(struct store *rs, struct store_batch *batches, unsigned n, bool wait)
{
	unsigned noscript = 0, sent = 0;
	bool waiting;

	for (unsigned i = 0; i < n; i++) {
		struct store_batch *b = &batches[i];
		int done = 0;

		if (b->status != RS_ST_TODO)
			continue;
		if (rs->c == NULL) {
			b->status = -ENOTCONN;
			continue;
		}
		/* hiredis appends all or nothing, so a failure here cannot misalign replies. */
		if (redisAppendFormattedCommand(rs->c, rs->cmd, store_reserve_format(rs, b)) !=
			REDIS_OK) {
			b->status = -ENOMEM;
			continue;
		}
		b->status = RS_ST_SENT;
		sent++;
		/* Send it now: Redis runs this batch while the next one is formatted. */
		while (!done && rs->c != NULL)
			if (redisBufferWrite(rs->c, &done) != REDIS_OK)
				store_lost(rs, rs->c->errstr[0] ? rs->c->errstr : "write failed");
	}
	waiting = wait && store_reserve_send_wait(rs, sent);
	for (unsigned i = 0; i < n; i++) {
		struct store_batch *b = &batches[i];

		if (b->status != RS_ST_SENT)
			continue;
		/* After a loss, the replies still due will never come. */
		redisReply *r = rs->c != NULL ? store_read_reply(rs) : NULL;

		if (r == NULL) {
			b->status = -ENOTCONN;
			continue;
		}
		int rc = store_reserve_take(rs, b, r);

		freeReplyObject(r);
		b->status = rc == 1 ? RS_ST_NOSCRIPT : rc == 0 ? RS_ST_SENT_DONE : rc;
		noscript += rc == 1;
	}
	if (waiting) {
		redisReply *r = rs->c != NULL ? store_read_reply(rs) : NULL;
		int rc = store_wait_take(rs, r);

		freeReplyObject(r);
		/* Only what the replicas hold is answered: a failover now would keep it. */
		for (unsigned i = 0; i < n && rc != 0; i++)
			if (batches[i].status == RS_ST_SENT_DONE)
				batches[i].status = rc;
	}
	for (unsigned i = 0; i < n; i++)
		if (batches[i].status == RS_ST_SENT_DONE)
			batches[i].status = 0;
	return noscript;
}

/*
 * store_reserve(), with wait: WAIT after the round on the connection; else (with
 * wait_replicas) on the waiter, *wait_sent then saying whether one was sent.
 */
static int
store_reserve_wait(
	struct store *rs, struct store_batch *batches, unsigned n, bool wait, bool *wait_sent)
{
	int first_err = 0;

	for (unsigned i = 0; i < n; i++) {
		struct store_batch *b = &batches[i];

		b->stock_left = 0;
		b->status = store_batch_check(b) == 0 ? RS_ST_TODO : -EINVAL;
	}
	if (store_ensure_connected(rs) == 0 && store_reserve_round(rs, batches, n, wait) > 0 &&
		rs->c != NULL) {
		char why[256];

		/* The script cache was flushed (SCRIPT FLUSH, or a failover to a replica that never
		 * loaded it). Nothing of those batches ran: load the scripts and resend them once.
		 */
		if (store_load_scripts(rs, why, sizeof(why)) != 0) {
			LOG_RL(LOG_LEVEL_WARN, 10000, "redis: loading the scripts again failed: %s",
				why);
		} else {
			LOG_INFO("redis: the script cache of %s was flushed; scripts loaded again",
				rs->where);
			for (unsigned i = 0; i < n; i++)
				if (batches[i].status == RS_ST_NOSCRIPT)
					batches[i].status = RS_ST_TODO;
			store_reserve_round(rs, batches, n, wait);
		}
	}
	if (!wait && rs->cfg.wait_replicas > 0) {
		bool decided = false;

		for (unsigned i = 0; i < n; i++)
			decided |= batches[i].status == 0;
		/* At once, before any other call could reconnect the store elsewhere: the
		 * waiter must ask the server these batches ran on. */
		if (decided && store_wait_send(rs) == 0)
			*wait_sent = true;
		else
			for (unsigned i = 0; i < n; i++)
				if (batches[i].status == 0)
					batches[i].status = -ENOTCONN;
	}
	for (unsigned i = 0; i < n; i++) {
		struct store_batch *b = &batches[i];

		if (b->status == RS_ST_TODO) /* never sent: no connection */
			b->status = -ENOTCONN;
		else if (b->status == RS_ST_NOSCRIPT) /* twice, or the reload failed */
			b->status = rs->c != NULL ? -EIO : -ENOTCONN;
		if (b->status == 0)
			continue;
		if (b->status == -ESTALE) { /* verdicts set; not an error of the store */
			if (first_err == 0)
				first_err = b->status;
			continue;
		}
		if (b->verdicts != NULL && b->n <= RS_BATCH_MAX)
			memset(b->verdicts, WIRE_V_RETRY, b->n);
		if (b->n <= RS_BATCH_MAX)
			rs->st.retry += b->n;
		if (first_err == 0)
			first_err = b->status;
	}
	return first_err;
}

int
store_reserve(struct store *rs, struct store_batch *batches, unsigned n)
{
	return store_reserve_wait(rs, batches, n, true, NULL);
}

int
store_reserve_pipelined(struct store *rs, struct store_batch *batches, unsigned n, bool *wait_sent)
{
	*wait_sent = false;
	return store_reserve_wait(rs, batches, n, false, wait_sent);
}
