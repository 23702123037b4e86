/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store (store/) with Redis replicas and Sentinel (docs/ha.md, store/store_sentinel.h),
 * against a real primary, two replicas and three redis-sentinel on free ports of 127.0.0.1
 * (tests/lib/redis_ha.h), all stopped at the end:
 *
 *   - discovery: the store finds the primary through the Sentinels (also when the first one
 *     listed is down), refuses a bad Sentinel list, and never takes a replica for the primary
 *     (a Sentinel that names a replica: the store stays unconnected, nothing is written to it);
 *   - wait_replicas 1 on a primary without min-replicas-to-write is refused at start;
 *   - replicas stopped (SIGSTOP): a batch cannot reach them, every verdict is RETRY, nothing is
 *     acknowledged; once they are back, the same users' retry is decided (DUPLICATE for those
 *     the primary kept: the reserve is idempotent per user);
 *   - a draw's entrant, replicas stopped: retry, also through a second store that finds the
 *     entry written and writes nothing itself (its WAIT covers the entry all the same);
 *   - the same with the WAIT pipelined (the decider's way): two more batches are decided while
 *     the first one's WAIT is pending and share the next WAIT, none answers early, all retry;
 *   - a failover during a stream of decisions (the primary SIGKILLed with two batches' WAITs
 *     in flight, Sentinel promotes a replica): the store follows it, every reservation acknowledged
 * before or after the loss is in the new primary with its reservation id, nobody holds two (one
 * result field and one outbox place per buyer, stock + buyers == preheated stock); the time from
 * the loss to the first decision after it is printed;
 *   - no replica was ever written to (no EVALSHA in their command statistics, not even a
 *     refused one).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hiredis/hiredis.h>

#include "common/log.h"
#include "store/store_conn.h"
#include "store/store_draw.h"
#include "store/store_event.h"
#include "store/store_keys.h"
#include "store/store_outbox.h"
#include "store/store_reserve.h"
#include "store/store_result.h"
#include "store/store_wait.h"
#include "tests/lib/redis_ha.h"
#include "tests/tap.h"

#define EVENT	  7
#define STOCK	  100000
#define BATCH	  16
#define MAX_USERS 20000
#define STREAM_MS 40000 /* the stream's bound: the failover and 20 batches after it */

static struct redis_ha ha;

/* Every user's state as the stream saw it: the reservation id acknowledged, 0 if none. */
static uint64_t acked_rid[MAX_USERS + 1];

static struct store *
open_store(const char *sentinels, const char *master, unsigned wait_replicas, bool offline,
	char *err, size_t err_len)
{
	struct store_conn_config c = {
		.sentinels = sentinels,
		.master_name = master,
		.wait_replicas = wait_replicas,
		.wait_timeout_ms = 300,
		.command_timeout_ms = 2000,
		.connect_timeout_ms = 500,
		.backoff_min_ms = 20,
		.backoff_max_ms = 200,
		.start_offline = offline,
		.check_settings = true,
	};

	return store_open(&c, err, err_len);
}

/* The replies of INFO on node i, or an empty string. */
static void
node_info(unsigned i, const char *section, char *out, size_t len)
{
	redisContext *c = rha_connect(ha.redis[i].port);
	redisReply *r = c != NULL ? redisCommand(c, "INFO %s", section) : NULL;

	out[0] = '\0';
	if (r != NULL && r->type == REDIS_REPLY_STRING)
		snprintf(out, len, "%s", r->str);
	freeReplyObject(r);
	if (c != NULL)
		redisFree(c);
}

/* Decides one batch of users first..first+n-1 with reservation ids base+user. */
static int
decide(struct store *rs, uint64_t first, unsigned n, uint64_t rid_base, uint8_t *v)
{
	struct wire_reserve res[BATCH];
	struct store_batch b = {.event = EVENT, .n = n, .res = res, .verdicts = v};

	for (unsigned i = 0; i < n; i++)
		res[i] = (struct wire_reserve){
			.event = EVENT, .user = first + i, .reservation_id = rid_base + first + i};
	store_reserve(rs, &b, 1);
	return b.status;
}

static void
test_discovery(void)
{
	char err[512], where[64];
	struct store *rs;

	rs = open_store(ha.sentinels, RHA_MASTER, 1, false, err, sizeof(err));
	tap_ok(rs != NULL && store_connected(rs), "the store finds the primary through Sentinel");
	if (rs == NULL)
		tap_diag("%s", err);
	tap_ok(rs != NULL && store_preheat(rs, EVENT, STOCK) == 0, "and writes to it (preheat)");
	store_close(rs);

	/* The first Sentinel listed is down (nobody listens there). */
	snprintf(where, sizeof(where), "127.0.0.1:%u,", child_free_port());
	char list[200];

	snprintf(list, sizeof(list), "%s%s", where, ha.sentinels);
	rs = open_store(list, RHA_MASTER, 0, false, err, sizeof(err));
	tap_ok(rs != NULL && store_connected(rs),
		"a Sentinel down: the next one names the primary");
	store_close(rs);

	static const struct {
		const char *list, *master, *want;
	} bad[] = {
		{"127.0.0.1", RHA_MASTER, "is not host:port"},
		{"127.0.0.1:0", RHA_MASTER, "not in 1..65535"},
		{"127.0.0.1:26379", "two words", "master_name"},
		{" , ", RHA_MASTER, "no Sentinel"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rs = open_store(bad[i].list, bad[i].master, 0, true, err, sizeof(err));
		tap_ok(rs == NULL && strstr(err, bad[i].want) != NULL,
			"bad Sentinel setting \"%s\" / \"%s\" refused: %s", bad[i].list,
			bad[i].master, rs == NULL ? err : "(opened)");
		store_close(rs);
	}
	rs = open_store(ha.sentinels, "nosuchmaster", 0, false, err, sizeof(err));
	tap_ok(rs == NULL && strstr(err, "monitors no master named nosuchmaster") != NULL,
		"an unknown master name is refused, each Sentinel's answer given: %s",
		rs == NULL ? err : "(opened)");
	store_close(rs);
}

/* A Sentinel naming a replica as the primary (its answer older than a failover). */
static void
test_replica_refused(void)
{
	char err[512];
	redisContext *c = rha_connect(ha.sentinel[0].port);
	redisReply *r = c != NULL ? redisCommand(c, "SENTINEL MONITOR wrong 127.0.0.1 %u 3",
					    ha.redis[1].port)
				  : NULL;

	tap_ok(r != NULL && r->type == REDIS_REPLY_STATUS, "a Sentinel told to name a replica");
	freeReplyObject(r);
	char one[40];

	snprintf(one, sizeof(one), "127.0.0.1:%u", ha.sentinel[0].port);
	struct store *rs = open_store(one, "wrong", 0, false, err, sizeof(err));

	tap_ok(rs == NULL && strstr(err, "not the primary") != NULL,
		"the store refuses to take a replica for the primary: %s", rs ? "(opened)" : err);
	store_close(rs);
	rs = open_store(one, "wrong", 0, true, err, sizeof(err));
	uint8_t v[BATCH];

	tap_ok(rs != NULL && !store_connected(rs) && decide(rs, 1, BATCH, 0, v) == -ENOTCONN &&
			v[0] == WIRE_V_RETRY,
		"started offline: batches are answered retry, not sent to the replica");
	store_close(rs);
	r = c != NULL ? redisCommand(c, "SENTINEL REMOVE wrong") : NULL;
	freeReplyObject(r);
	if (c != NULL)
		redisFree(c);
}

static void
test_min_replicas_checked(void)
{
	char err[512];
	redisContext *c = rha_connect(ha.redis[0].port);
	redisReply *r = redisCommand(c, "CONFIG SET min-replicas-to-write 0");

	freeReplyObject(r);
	struct store *rs = open_store(ha.sentinels, RHA_MASTER, 1, false, err, sizeof(err));

	tap_ok(rs == NULL && strstr(err, "min-replicas-to-write 0") != NULL,
		"wait_replicas 1 on a primary without min-replicas-to-write is refused: %s",
		rs ? "(opened)" : err);
	store_close(rs);
	rs = open_store(ha.sentinels, RHA_MASTER, 0, false, err, sizeof(err));
	tap_ok(rs != NULL, "without wait_replicas it is not asked for");
	store_close(rs);
	r = redisCommand(c, "CONFIG SET min-replicas-to-write 1");
	freeReplyObject(r);
	redisFree(c);
}

static void
test_replicas_stopped(void)
{
	char err[512];
	struct store *rs = open_store(ha.sentinels, RHA_MASTER, 1, false, err, sizeof(err));
	struct store_stats st;
	uint8_t v[BATCH], v2[BATCH];
	unsigned retry = 0, dup = 0;
	int rc;

	if (rs == NULL) {
		tap_ok(0, "store for the stopped replicas: %s", err);
		return;
	}
	struct store_outbox_buf ob = {0};
	char cursor[48] = "0-0"; /* the cursor capacity store_outbox_claim() asks for */

	store_outbox_group_create(rs, EVENT, "ow");
	kill(ha.redis[1].pid, SIGSTOP);
	kill(ha.redis[2].pid, SIGSTOP);
	/* Users 900001.. are of this check only. */
	rc = decide(rs, 900001, BATCH, 0, v);
	for (unsigned i = 0; i < BATCH; i++)
		retry += v[i] == WIRE_V_RETRY;
	store_get_stats(rs, &st);
	tap_ok(rc == -ETIMEDOUT && retry == BATCH && st.wait_timeouts == 1,
		"replicas stopped: the batch is answered retry, nothing acknowledged (status %d, "
		"%u of %u retry)",
		rc, retry, BATCH);
	struct wire_result_query q = {.event = EVENT, .user = 900001};
	struct store_result res;

	rc = store_results(rs, &q, 1, &res);
	tap_ok(rc == -ETIMEDOUT,
		"a result query of that batch is not answered while the replicas may lack it (%d)",
		rc);
	rc = store_sale_window(rs, 99, RS_SALE_CLOSED, 0, 0);
	tap_ok(rc == -ETIMEDOUT,
		"an operator's close is not confirmed either while the replicas may lack it (%d)",
		rc);
	rc = store_outbox_read(rs, EVENT, "ow", "c1", 16, &ob);
	tap_ok(rc == -ETIMEDOUT && ob.n == 0,
		"the order writer's read of that batch's outbox entry waits for the replicas too: "
		"nothing to make orders of (%d, %zu reservations)",
		rc, (size_t)ob.n);
	kill(ha.redis[1].pid, SIGCONT);
	kill(ha.redis[2].pid, SIGCONT);
	rha_wait_synced(&ha, 0, 2, 10000);
	rc = decide(rs, 900001, BATCH, 0, v2);
	for (unsigned i = 0; i < BATCH; i++)
		dup += v2[i] == WIRE_V_DUPLICATE;
	tap_ok(rc == 0 && dup == BATCH,
		"replicas back: the retry finds every reservation the primary kept (%u of %u "
		"duplicate)",
		dup, BATCH);
	rc = store_results(rs, &q, 1, &res);
	tap_ok(rc == 0 && res.verdict == WIRE_V_RESERVED && res.reservation_id == 900001,
		"replicas back: the result query finds it (%d, verdict %u)", rc, res.verdict);
	rc = store_outbox_claim(rs, EVENT, "ow", "c1", 0, cursor, sizeof(cursor), 16, &ob);
	tap_ok(rc == 1 && ob.n == BATCH,
		"replicas back: the entry left pending is claimed with its %u reservations (%d "
		"entries, %zu reservations)",
		BATCH, rc, (size_t)ob.n);
	store_outbox_buf_free(&ob);
	store_close(rs);
}

/* A client of the first primary (node 0) subscribed to the store's PUBLISH before WAIT. */
static redisContext *
replicated_sub(void)
{
	redisContext *c = rha_connect(ha.redis[0].port);
	redisReply *r = c != NULL ? redisCommand(c, "SUBSCRIBE fg:replicated") : NULL;

	if (r != NULL)
		freeReplyObject(r);
	return c;
}

/* The messages c got (none more within 200 ms); c is freed. */
static unsigned
replicated_count(redisContext *c)
{
	struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
	unsigned n = 0;
	void *r;

	if (c == NULL)
		return 0;
	redisSetTimeout(c, tv);
	while (redisGetReply(c, &r) == REDIS_OK && r != NULL) {
		n++;
		freeReplyObject(r);
	}
	redisFree(c);
	return n;
}

/* Enters user into event's draw through rs; returns the status, *v the verdict. */
static int
enter_one(struct store *rs, uint32_t event, uint64_t user, uint64_t rid, uint8_t *v)
{
	struct wire_reserve res = {.event = event, .user = user, .reservation_id = rid};
	unsigned added;
	uint64_t entrants;

	return store_enter(rs, event, &res, 1, v, &added, &entrants);
}

/*
 * A draw's entrant is told queued only once the replicas hold the entry, also when the store
 * that tells it did not write it: a second control plane (or the same after a reconnect) finds
 * the user entered already, writes nothing, and its WAIT must still cover the entry.
 */
static void
test_enter_replicas_stopped(void)
{
	const uint32_t ev = 17;
	char err[512];
	struct store *cp1 = open_store(ha.sentinels, RHA_MASTER, 1, false, err, sizeof(err));
	struct store *cp2 =
		cp1 != NULL ? open_store(ha.sentinels, RHA_MASTER, 1, false, err, sizeof(err))
			    : NULL;
	uint8_t v1 = 0, v2 = 0, v3 = 0;
	int rc1, rc2, rc3;

	if (cp1 == NULL || cp2 == NULL) {
		tap_ok(0, "two stores for the entrants: %s", err);
		store_close(cp1);
		return;
	}
	kill(ha.redis[1].pid, SIGSTOP);
	kill(ha.redis[2].pid, SIGSTOP);
	rc1 = enter_one(cp1, ev, 910001, 910001, &v1);
	redisContext *sub = replicated_sub();

	rc2 = enter_one(cp2, ev, 910001, 910002, &v2);
	unsigned pub = replicated_count(sub);
	kill(ha.redis[1].pid, SIGCONT);
	kill(ha.redis[2].pid, SIGCONT);
	tap_ok(rc1 == -ETIMEDOUT && v1 == WIRE_V_RETRY,
		"replicas stopped: an entrant written on the primary is answered retry (%d, "
		"verdict %u)",
		rc1, v1);
	/* Redis 7.0 counts a WAIT from the client's last command, whatever it was; later
	 * versions from its last write, so without the PUBLISH the second store's WAIT would
	 * count nothing there and answer at once: the PUBLISH is checked, not just the verdict. */
	tap_ok(rc2 == -ETIMEDOUT && v2 == WIRE_V_RETRY && pub == 1,
		"and the same user through another store, which finds the entry and writes "
		"nothing, is not told queued either: its WAIT follows a PUBLISH (%d, verdict %u, "
		"%u PUBLISH)",
		rc2, v2, pub);
	rha_wait_synced(&ha, 0, 2, 10000);
	rc3 = enter_one(cp2, ev, 910001, 910003, &v3);
	tap_ok(rc3 == 0 && v3 == WIRE_V_QUEUED,
		"replicas back: the retry is told queued (%d, verdict %u)", rc3, v3);
	store_close(cp2);
	store_close(cp1);
}

/* The WAITs the first primary (node 0) has run, from INFO commandstats (0: none or unknown). */
static long long
wait_calls(void)
{
	char info[16384];
	const char *p;

	node_info(0, "commandstats", info, sizeof(info));
	p = strstr(info, "cmdstat_wait:calls=");
	return p != NULL ? atoll(p + strlen("cmdstat_wait:calls=")) : 0;
}

/* decide() with the WAIT pipelined, as the decider does: *sent says whether one was sent. */
static int
decide_pipelined(
	struct store *rs, uint64_t first, unsigned n, uint64_t rid_base, uint8_t *v, bool *sent)
{
	struct wire_reserve res[BATCH];
	struct store_batch b = {.event = EVENT, .n = n, .res = res, .verdicts = v};

	for (unsigned i = 0; i < n; i++)
		res[i] = (struct wire_reserve){
			.event = EVENT, .user = first + i, .reservation_id = rid_base + first + i};
	store_reserve_pipelined(rs, &b, 1, sent);
	return b.status;
}

/*
 * The WAIT pipelined (store/store_wait.h) with the replicas stopped: three batches are decided
 * on the primary one after the other while the first one's WAIT is pending (the WAIT blocks
 * only the waiter, not the deciding connection), the two later ones sharing the next WAIT; no
 * WAIT answers before its timeout (so the decider publishes no verdict of them), all answer
 * -ETIMEDOUT (the decider answers them retry, all of them); once the replicas are back, the
 * same users' retry finds what the primary kept, and its WAIT answers 0.
 */
static void
test_pipelined_replicas_stopped(void)
{
	char err[512];
	struct store *rs = open_store(ha.sentinels, RHA_MASTER, 1, false, err, sizeof(err));
	uint8_t v1[BATCH], v2[BATCH], v3[BATCH], v4[BATCH];
	bool sent1 = false, sent2 = false, sent3 = false, sent4 = false;
	unsigned dup = 0;
	int rc1, rc2, rc3, rc4, early, w1, w2, w3, w4;
	long long waits0 = wait_calls();

	if (rs == NULL) {
		tap_ok(0, "store for the pipelined WAIT: %s", err);
		return;
	}
	kill(ha.redis[1].pid, SIGSTOP);
	kill(ha.redis[2].pid, SIGSTOP);
	/* Users 700001.. are of this check only. */
	uint64_t t0 = now_mono_ms();

	rc1 = decide_pipelined(rs, 700001, BATCH, 0, v1, &sent1);
	early = store_wait_next(rs, false);
	rc2 = decide_pipelined(rs, 700001 + BATCH, BATCH, 0, v2, &sent2);
	rc4 = decide_pipelined(rs, 700001 + 2 * BATCH, BATCH, 0, v4, &sent4);
	uint64_t t2 = now_mono_ms();

	tap_ok(rc1 == 0 && rc2 == 0 && rc4 == 0 && sent1 && sent2 && sent4 &&
			v2[0] == WIRE_V_RESERVED && v4[0] == WIRE_V_RESERVED &&
			store_wait_owed(rs) == 3,
		"replicas stopped, WAIT pipelined: two more batches are decided on the primary "
		"while the first one's WAIT is pending (%d %d %d, %u owed, %" PRIu64
		" ms; wait_timeout 300 ms)",
		rc1, rc2, rc4, store_wait_owed(rs), t2 - t0);
	tap_ok(early == 1, "  the first WAIT has not answered at once (%d): nothing published yet",
		early);
	w1 = store_wait_next(rs, true);
	w2 = store_wait_next(rs, true);
	w4 = store_wait_next(rs, true);
	tap_ok(w1 == -ETIMEDOUT && w2 == -ETIMEDOUT && w4 == -ETIMEDOUT && store_wait_owed(rs) == 0,
		"  every WAIT answers that the replicas do not hold them: retry (%d %d %d)", w1, w2,
		w4);
	long long waits = wait_calls() - waits0;

	tap_ok(waits == 2,
		"  the two batches decided while the first WAIT was in flight shared one (%lld "
		"WAITs "
		"for 3 batches)",
		waits);
	kill(ha.redis[1].pid, SIGCONT);
	kill(ha.redis[2].pid, SIGCONT);
	rha_wait_synced(&ha, 0, 2, 10000);
	rc3 = decide_pipelined(rs, 700001, BATCH, 0, v3, &sent3);
	w3 = sent3 ? store_wait_next(rs, true) : -1;
	for (unsigned i = 0; i < BATCH; i++)
		dup += v3[i] == WIRE_V_DUPLICATE;
	tap_ok(rc3 == 0 && w3 == 0 && dup == BATCH,
		"replicas back: the retry finds every reservation the primary kept and its WAIT "
		"answers (%d, WAIT %d, %u of %u duplicate)",
		rc3, w3, dup, BATCH);
	store_close(rs);
}

/* No EVALSHA, not even a refused one, ever reached replica i. */
static bool
never_written(unsigned i)
{
	char info[16384];

	node_info(i, "commandstats", info, sizeof(info));
	return info[0] != '\0' && strstr(info, "cmdstat_evalsha") == NULL &&
	       strstr(info, "cmdstat_eval:") == NULL;
}

/* A batch whose WAIT is pending on the waiter (the pipelined stream). */
struct in_flight {
	uint64_t first;
	uint8_t v[BATCH];
};

struct stream {
	uint64_t next_user;
	unsigned acked_before, acked_after;
	unsigned batches_after;
	uint64_t killed_ms, first_after_ms;
	/* Pipelined: up to two batches decided with their WAIT pending, acknowledged only when
	 * it answered (as the decider publishes); lost, answered retry, else. */
	bool pipelined;
	struct in_flight q[2];
	unsigned q_len;
	unsigned retried_in_flight; /* batches whose pending WAIT failed */
};

/* Records what batch first's verdicts v acknowledged. */
static void
stream_ack(struct stream *s, uint64_t first, const uint8_t *v)
{
	for (unsigned i = 0; i < BATCH; i++) {
		if (v[i] != WIRE_V_RESERVED)
			continue;
		acked_rid[first + i] = 5000000 + first + i;
		if (s->killed_ms)
			s->acked_after++;
		else
			s->acked_before++;
	}
	if (s->killed_ms && !s->first_after_ms)
		s->first_after_ms = now_mono_ms();
	s->batches_after += s->killed_ms != 0;
}

/* Takes the oldest pending WAIT's answer: acknowledges its batch when it says replicated. */
static void
stream_take(struct store *rs, struct stream *s)
{
	int rc = store_wait_next(rs, true);

	if (rc == 0)
		stream_ack(s, s->q[0].first, s->q[0].v);
	else
		s->retried_in_flight++;
	s->q[0] = s->q[1];
	s->q_len--;
}

/* One pipelined batch of new users, its WAIT left pending while the next one is decided. */
static void
stream_step_pipelined(struct store *rs, struct stream *s)
{
	struct in_flight *f = &s->q[s->q_len];
	bool sent = false;
	int rc;

	f->first = s->next_user;
	rc = decide_pipelined(rs, f->first, BATCH, 5000000, f->v, &sent);
	if (rc != 0 || !sent) /* retry: the same users again (a buyer's retry) */
		return;
	s->next_user += BATCH;
	s->q_len++;
	if (s->q_len == 2)
		stream_take(rs, s);
}

/* One batch of new users: records what was acknowledged. */
static void
stream_step(struct store *rs, struct stream *s)
{
	uint8_t v[BATCH];
	uint64_t first = s->next_user;

	if (s->pipelined) {
		stream_step_pipelined(rs, s);
		return;
	}
	int rc = decide(rs, first, BATCH, 5000000, v);

	if (rc != 0) /* retry: the same users again (a buyer's retry) */
		return;
	stream_ack(s, first, v);
	s->next_user += BATCH;
}

/* The checks on the new primary after the stream. */
static void
check_new_primary(int node, const struct stream *s)
{
	redisContext *c = rha_connect(ha.redis[node].port);
	char key[RS_KEY_MAX];
	unsigned missing = 0, wrong = 0, twice = 0, outbox = 0;
	static uint8_t seen[MAX_USERS + 1];

	memset(seen, 0, sizeof(seen));

	store_key(key, sizeof(key), EVENT, RS_KEY_RESULT);
	for (uint64_t u = 1; u < s->next_user && u <= MAX_USERS; u++) {
		if (!acked_rid[u])
			continue;
		redisReply *r = redisCommand(c, "HGET %s %" PRIu64, key, u);

		if (r == NULL || r->type != REDIS_REPLY_STRING)
			missing++;
		else if (strtoull(r->str, NULL, 10) != acked_rid[u])
			wrong++;
		freeReplyObject(r);
	}
	tap_ok(missing == 0 && wrong == 0,
		"every acknowledged reservation (%u before the loss, %u after) is in the new "
		"primary with its id (%u missing, %u wrong)",
		s->acked_before, s->acked_after, missing, wrong);

	store_key(key, sizeof(key), EVENT, RS_KEY_OUTBOX);
	redisReply *r = redisCommand(c, "XRANGE %s - +", key);

	for (size_t e = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && e < r->elements; e++) {
		const redisReply *f = r->element[e]->element[1];

		for (size_t k = 0; k + 1 < f->elements; k += 2) {
			if (strcmp(f->element[k]->str, "u") != 0)
				continue;
			uint64_t u = strtoull(f->element[k + 1]->str, NULL, 10);

			outbox++;
			if (u <= MAX_USERS && seen[u]++)
				twice++;
		}
	}
	freeReplyObject(r);
	store_key(key, sizeof(key), EVENT, RS_KEY_RESULT);
	r = redisCommand(c, "HLEN %s", key);
	long long buyers = r != NULL && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;

	freeReplyObject(r);
	store_key(key, sizeof(key), EVENT, RS_KEY_STOCK);
	r = redisCommand(c, "GET %s", key);
	long long stock = r != NULL && r->type == REDIS_REPLY_STRING ? atoll(r->str) : -1;

	freeReplyObject(r);
	tap_ok(twice == 0 && outbox == (unsigned)buyers && stock + buyers == STOCK,
		"nobody holds two: %u outbox places, %lld buyers, stock %lld + buyers == %d (%u "
		"users twice)",
		outbox, buyers, stock, STOCK, twice);
	redisFree(c);
}

/*
 * The operator's failover (SENTINEL FAILOVER) from node to the other survivor: the old
 * primary is demoted under the store's open connection, which must notice it (+switch-master
 * or a READONLY answer) and go on with the new one.
 */
static void
graceful_failover(struct store *rs, struct stream *s, int node)
{
	uint64_t deadline = now_mono_ms() + 30000;
	redisContext *c = rha_connect(ha.sentinel[1].port);
	redisReply *r;
	struct store_stats st0, st;
	int now;

	if (rha_wait_synced(&ha, (unsigned)node, 1, 20000) != 0) {
		tap_ok(0, "the survivors are in sync before the operator's failover");
		redisFree(c);
		return;
	}
	/* A second store whose subscription goes to a node, not a Sentinel: no +switch-master ever
	 * reaches it. Redis closes its clients when it becomes a replica (7.0 does), so the lost
	 * connection tells it; a READONLY answer would too. */
	char list[200], err[512];
	uint8_t v[BATCH];

	snprintf(list, sizeof(list), "127.0.0.1:%u,%s", ha.redis[3 - node].port, ha.sentinels);
	struct store *ro = open_store(list, RHA_MASTER, 1, false, err, sizeof(err));
	struct store_stats ro_st;

	tap_ok(ro != NULL && decide(ro, 800001, BATCH, 0, v) == 0,
		"a store subscribed to no Sentinel decides on the primary %s", ro ? "" : err);
	store_get_stats(rs, &st0);
	/* Sentinel refuses a failover while the last one's timeout runs: ask until it takes it. */
	do {
		r = redisCommand(c, "SENTINEL FAILOVER %s", RHA_MASTER);
		bool ok = r != NULL && r->type == REDIS_REPLY_STATUS;

		freeReplyObject(r);
		if (ok)
			break;
		child_sleep_ms(200);
	} while (now_mono_ms() < deadline);
	redisFree(c);
	s->killed_ms = now_mono_ms();
	s->batches_after = 0;
	s->first_after_ms = 0;
	while ((now = rha_primary(&ha, 1)) == node && now_mono_ms() < deadline)
		stream_step(rs, s);
	/* Counted from the promotion on: the old primary refuses (no replica answers WAIT, then
	 * NOREPLICAS) until the store follows. */
	s->batches_after = 0;
	while (s->batches_after < 20 && now_mono_ms() < deadline &&
		s->next_user + BATCH < MAX_USERS)
		stream_step(rs, s);
	store_get_stats(rs, &st);
	tap_ok(now == 3 - node && s->batches_after >= 20 && st.failovers > st0.failovers,
		"the operator's failover to node %d: the store noticed it (%" PRIu64
		" failovers) and decisions go on (%u batches)",
		now, st.failovers - st0.failovers, s->batches_after);
	if (now == 3 - node)
		check_new_primary(now, s);
	/* The old primary is left once Sentinel made it a replica of the new one. */
	uint64_t first = 800001 + BATCH;
	int rc = -1;

	while (ro != NULL && now_mono_ms() < deadline + 20000) {
		rc = decide(ro, first, BATCH, 0, v);
		if (rc == 0 && v[0] == WIRE_V_RESERVED)
			break;
		child_sleep_ms(50);
	}
	store_get_stats(ro, &ro_st);
	tap_ok(rc == 0 && v[0] == WIRE_V_RESERVED && ro_st.connects >= 2,
		"  a store that missed the +switch-master follows it too (%" PRIu64
		" connections, status %d)",
		ro_st.connects, rc);
	store_close(ro);
}

static void
test_failover(void)
{
	char err[512];
	struct store *rs = open_store(ha.sentinels, RHA_MASTER, 1, false, err, sizeof(err));
	/* The primary's loss with batches in flight, their WAITs pipelined as the decider's;
	 * the operator's failover below with the WAIT on the connection (the draws' way). */
	struct stream s = {.next_user = 1, .pipelined = true};
	struct store_stats st;
	uint64_t deadline;
	int node;

	if (rs == NULL) {
		tap_ok(0, "store for the failover: %s", err);
		return;
	}
	tap_ok(never_written(1) && never_written(2),
		"before the failover no replica was written to");
	deadline = now_mono_ms() + STREAM_MS;
	while (s.acked_before < 200 && now_mono_ms() < deadline)
		stream_step(rs, &s);
	rha_kill(&ha.redis[0], SIGKILL);
	s.killed_ms = now_mono_ms();
	while (s.batches_after < 20 && now_mono_ms() < deadline && s.next_user + BATCH < MAX_USERS)
		stream_step(rs, &s);
	while (s.q_len > 0)
		stream_take(rs, &s);
	store_get_stats(rs, &st);
	tap_ok(s.batches_after >= 20,
		"decisions go on after the primary's loss, WAITs pipelined (%u batches after it, "
		"%u in flight answered retry, %" PRIu64 " failovers noticed)",
		s.batches_after, s.retried_in_flight, st.failovers);
	s.pipelined = false;
	if (s.first_after_ms)
		tap_diag("time from the primary's loss to the first decision after it: %" PRIu64
			 " ms (Sentinel down-after-milliseconds %u)",
			s.first_after_ms - s.killed_ms, RHA_DOWN_AFTER_MS);
	node = rha_primary(&ha, 1);
	tap_ok(node == 1 || node == 2, "Sentinel promoted a replica (node %d)", node);
	if (node == 1 || node == 2) {
		check_new_primary(node, &s);
		tap_ok(never_written(3 - (unsigned)node),
			"the replica that stayed one was never written to");
		graceful_failover(rs, &s, node);
	}
	store_close(rs);
}

int
main(void)
{
	struct stat sb;

	log_set_program("test_redis_sentinel");
	log_set_level(LOG_LEVEL_NOTICE);
	if (stat("/usr/bin/redis-sentinel", &sb) != 0 &&
		system("command -v redis-sentinel >/dev/null") != 0) {
		tap_skip("redis-sentinel is not installed (Debian's redis-sentinel)", "Sentinel");
		return tap_done();
	}
	alarm(240);
	if (rha_start(&ha, 2) != 0) {
		tap_ok(0, "a primary, two replicas and three Sentinels started");
		rha_stop(&ha);
		return tap_done();
	}
	test_discovery();
	test_replica_refused();
	test_min_replicas_checked();
	test_replicas_stopped();
	test_enter_replicas_stopped();
	test_pipelined_replicas_stopped();
	test_failover();
	rha_stop(&ha);
	return tap_done();
}
