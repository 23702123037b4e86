/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flashgate-order-writer against a real Redis and PostgreSQL (tests/lib): reservations made by
 * reserve.lua (store_reserve) become exactly one order each, also when the same entries are
 * delivered twice and when the writer is killed between COMMIT and XACK; a stock conflict
 * releases the batch back to Redis; the rate cap holds; payments racing the expiry at the
 * deadline give exactly one terminal state per order with stock returned once. The design's
 * invariants 1-3 are checked after each case.
 *   test_order_writer PATH-OF-flashgate-order-writer
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "common/now.h"
#include "order-writer/expiry.h"
#include "order-writer/outbox_reader.h"
#include "order-writer/ow_results.h"
#include "order-writer/ow_writer.h"
#include "pg/pg.h"
#include "store/store_conn.h"
#include "store/store_event.h"
#include "store/store_reserve.h"
#include "store/store_result.h"
#include "tests/lib/pg_server.h"
#include "tests/lib/redis_server.h"
#include "tests/tap.h"

static struct redis_server rsrv;
static struct pg_server psrv;
static struct store *rs;
static PGconn *db;
static const char *writer_bin;
static char conf_path[128], log_path[128], pull_ep[160];
static void *zctx, *zpull;
static uint64_t next_rid = 1000;

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Runs a query that answers one number. */
static long long
q1(const char *fmt, ...)
{
	char sql[1024];
	va_list ap;
	long long v = -999999;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	PGresult *r = PQexec(db, sql);

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0))
		v = atoll(PQgetvalue(r, 0, 0));
	else if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
		tap_diag("%s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
	return v;
}

static long long
redis_int(const char *fmt, ...)
{
	char cmd[256];
	va_list ap;
	long long v = -999999;
	redisContext *c = redisConnectUnix(rsrv.sock);

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	redisReply *r = redisCommand(c, cmd);

	if (r != NULL && r->type == REDIS_REPLY_INTEGER)
		v = r->integer;
	else if (r != NULL && r->type == REDIS_REPLY_STRING)
		v = atoll(r->str);
	else if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
		 r->element[0]->type == REDIS_REPLY_INTEGER)
		v = r->element[0]->integer; /* XPENDING: the count */
	if (r != NULL)
		freeReplyObject(r);
	redisFree(c);
	return v;
}

/* An open event with stock in PostgreSQL (initial = available = pg_stock) and Redis. */
static void
event_create(uint32_t ev, int pg_stock, int redis_stock)
{
	q1("INSERT INTO events (id, name, starts_at, ends_at, pay_window_s, state) VALUES "
	   "(%u, 'e%u', now() - interval '1 hour', now() + interval '1 day', 600, 'open')",
		ev, ev);
	q1("INSERT INTO stock (event_id, initial, available) VALUES (%u, %d, %d)", ev, pg_stock,
		pg_stock);
	store_preheat(rs, ev, redis_stock);
}

/* Reserves users first..first+n-1 of ev through reserve.lua; returns how many were reserved. */
static unsigned
reserve(uint32_t ev, uint64_t first, unsigned n)
{
	static struct wire_reserve res[512];
	static uint8_t verdicts[512];
	unsigned reserved = 0;

	for (unsigned done = 0; done < n;) {
		unsigned k = n - done < 512 ? n - done : 512;
		struct store_batch b = {.event = ev, .n = k, .res = res, .verdicts = verdicts};

		for (unsigned i = 0; i < k; i++)
			res[i] = (struct wire_reserve){.reservation_id = next_rid++,
				.user = first + done + i,
				.admitted_ms = now_wall_ms(),
				.event = ev};
		store_reserve(rs, &b, 1);
		for (unsigned i = 0; i < k; i++)
			reserved += verdicts[i] == WIRE_V_RESERVED;
		done += k;
	}
	return reserved;
}

static void
write_conf(const char *extra)
{
	FILE *f = fopen(conf_path, "w");

	fprintf(f,
		"[order_writer]\npush_endpoint = %s\npoll_interval = 1ms\nclaim_idle = 100ms\n"
		"claim_interval = 100ms\nevents_refresh = 50ms\nsweep_interval = 2ms\n"
		"max_rate = 0\nlog_level = notice\n"
		/* The stand-in control plane's PULL is plain ZeroMQ. */
		"insecure_plaintext_links = yes\n%s\n[redis]\nsocket = %s\nunsafe_settings = yes\n[postgres]\n"
		"conninfo = \"%s\"\n",
		pull_ep, extra, rsrv.sock, psrv.conninfo);
	fclose(f);
}

static pid_t
writer_start(bool crash, const char *set)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);

		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (crash)
			setenv("FG_OW_CRASH_AFTER_COMMIT", "1", 1);
		if (set != NULL)
			execl(writer_bin, writer_bin, "-c", conf_path, "-s", set, (char *)NULL);
		else
			execl(writer_bin, writer_bin, "-c", conf_path, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int
writer_stop(pid_t pid)
{
	int status = -1;

	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	return status;
}

/* Waits up to ms for cond(event) to reach want. */
static long long
wait_for(const char *sql_fmt, uint32_t ev, long long want, unsigned ms)
{
	uint64_t end = now_mono_ms() + ms;
	long long v;

	do {
		v = q1(sql_fmt, ev);
		if (v == want)
			break;
		sleep_ms(20);
	} while (now_mono_ms() < end);
	return v;
}

#define ORDERS_SQL "SELECT count(*) FROM orders WHERE event_id = %u"

/*
 * How many of users first..first+n-1 of ev have in the result hash exactly what PostgreSQL holds
 * for them: "ordered" with their pending order's id, reservation id and deadline (ms, rounded
 * down from the microseconds PostgreSQL holds, as every program of flashgate reads a time: a
 * deadline at 12:00:00.999600 is 12:00:00.999, never 12:00:01.000).
 */
static unsigned
published_matches(uint32_t ev, uint64_t first, unsigned n)
{
	static struct wire_result_query q[1000];
	static struct store_result res[1000];
	unsigned good = 0;
	char sql[256];

	if (n > 1000)
		return 0;
	for (unsigned i = 0; i < n; i++)
		q[i] = (struct wire_result_query){.user = first + i, .event = ev};
	store_results(rs, q, n, res);
	snprintf(sql, sizeof(sql),
		"SELECT user_id, id, reservation_id, (extract(epoch FROM pay_deadline) * "
		"1000000)::bigint "
		"FROM orders WHERE event_id = %u AND status = 'pending'",
		ev);
	PGresult *r = PQexec(db, sql);

	for (int i = 0; i < PQntuples(r); i++) {
		uint64_t user = strtoull(PQgetvalue(r, i, 0), NULL, 10);

		if (user < first || user >= first + n)
			continue;
		const struct store_result *x = &res[user - first];

		good += x->verdict == WIRE_V_ORDERED &&
			x->order_id == strtoull(PQgetvalue(r, i, 1), NULL, 10) &&
			x->reservation_id == strtoull(PQgetvalue(r, i, 2), NULL, 10) &&
			x->pay_deadline_ms == strtoull(PQgetvalue(r, i, 3), NULL, 10) / 1000;
	}
	PQclear(r);
	return good;
}

/* RESULT PAID and SOLD_OUT records pull_drain() saw, and those whose order id or deadline was 0. */
static unsigned paid_recs, sold_out_recs, recs_without_order;

/* Counts the fields of event ev's result hash whose value matches the Lua pattern pat. */
static long long
results_matching(uint32_t ev, const char *pat)
{
	static const char lua[] =
		"local n = 0 for _, v in ipairs(redis.call('HVALS', KEYS[1])) do "
		"if string.match(v, ARGV[1]) then n = n + 1 end end return n";

	char key[32];
	long long v = -999999;
	redisContext *c = redisConnectUnix(rsrv.sock);
	redisReply *r;

	snprintf(key, sizeof(key), "fg:{%u}:result", ev);
	r = c != NULL ? redisCommand(c, "EVAL %s 1 %s %s", lua, key, pat) : NULL;
	if (r != NULL && r->type == REDIS_REPLY_INTEGER)
		v = r->integer;
	if (r != NULL)
		freeReplyObject(r);
	if (c != NULL)
		redisFree(c);
	return v;
}

/* Drains the PULL socket; counts RESULT records by verdict and RESTOCK records. */
static void
pull_drain(unsigned *ordered, unsigned *expired, unsigned *restock)
{
	static uint8_t buf[1 << 17];
	int len;

	while ((len = zmq_recv(zpull, buf, sizeof(buf), ZMQ_DONTWAIT)) > 0) {
		struct wire_msg m;

		if (wire_decode(buf, (size_t)len, &m) != 0)
			continue;
		for (unsigned i = 0; i < m.count; i++) {
			struct wire_result r;

			if (m.type == WIRE_T_RESTOCK)
				(*restock)++;
			else if (m.type == WIRE_T_RESULT && wire_get_result(&m, i, &r) == 0) {
				*(r.verdict == WIRE_V_ORDERED ? ordered : expired) +=
					r.verdict == WIRE_V_ORDERED || r.verdict == WIRE_V_EXPIRED;
				paid_recs += r.verdict == WIRE_V_PAID;
				sold_out_recs += r.verdict == WIRE_V_SOLD_OUT;
				recs_without_order += r.order_id == 0 || r.pay_deadline_ms == 0;
			}
		}
	}
}

/* Invariants 1-3 of the design for ev; drained: also Redis stock == PostgreSQL available. */
static void
invariants(uint32_t ev, long long preheat, bool drained)
{
	long long initial = q1("SELECT initial FROM stock WHERE event_id = %u", ev);
	long long avail = q1("SELECT available FROM stock WHERE event_id = %u", ev);
	long long live = q1("SELECT count(*) FROM orders WHERE event_id = %u AND status IN "
			    "('pending', 'paid')",
		ev);
	long long dup = q1("SELECT count(*) FROM (SELECT user_id FROM orders WHERE event_id = %u "
			   "GROUP BY user_id HAVING count(*) > 1) d",
		ev);
	long long rstock = redis_int("GET fg:{%u}:stock", ev);
	long long buyers = redis_int("HLEN fg:{%u}:result", ev);
	long long released = redis_int("SCARD fg:{%u}:released", ev);

	tap_ok(live <= initial && avail >= 0 && rstock >= 0,
		"event %u inv 1: orders %lld <= stock %lld, no negative stock (pg %lld, redis "
		"%lld)",
		ev, live, initial, avail, rstock);
	tap_eq_int(dup, 0, "inv 2: users with more than one order");
	tap_eq_int(avail + live, initial, "inv 3: available + pending + paid == initial (pg)");
	tap_eq_int(rstock + buyers - released, preheat,
		"inv 3: redis stock + buyers (result fields) - released == preheated");
	if (drained)
		tap_eq_int(rstock, avail, "drained: Redis stock equals PostgreSQL available");
}

/* N entries -> N orders, published; the same entries delivered again -> still N. */
static void
test_exactly_once(void)
{
	unsigned ordered = 0, expired = 0, restock = 0;
	struct wire_result_query q[1000];
	static struct store_result res[1000];
	unsigned good = 0;

	event_create(1, 1000, 1000);
	uint64_t t0 = now_wall_ms();

	tap_eq_int(reserve(1, 1, 1000), 1000, "1000 reservations in Redis");
	uint64_t t1 = now_wall_ms();

	write_conf("batch_size = 256");
	pid_t w = writer_start(false, NULL);

	tap_eq_int(wait_for(ORDERS_SQL, 1, 1000, 20000), 1000, "1000 entries -> 1000 orders");
	tap_eq_int(q1("SELECT available FROM stock WHERE event_id = 1"), 0,
		"stock decremented by the orders");
	tap_eq_int(q1("SELECT count(DISTINCT reservation_id) FROM orders WHERE event_id = 1 AND "
		      "reservation_id >= 1000"),
		1000, "one order per reservation id");
	sleep_ms(200);
	tap_eq_int(redis_int("XPENDING fg:{1}:outbox order-writer"), 0, "every entry acknowledged");
	for (unsigned i = 0; i < 1000; i++)
		q[i] = (struct wire_result_query){.user = 1 + i, .event = 1};
	store_results(rs, q, 1000, res);
	for (unsigned i = 0; i < 1000; i++)
		good += res[i].verdict == WIRE_V_ORDERED && res[i].order_id != 0 &&
			res[i].pay_deadline_ms > now_wall_ms();
	tap_eq_int(good, 1000, "result hash: every user ordered with order id and deadline");
	tap_eq_int(published_matches(1, 1, 1000), 1000,
		"the published order ids, reservation ids and deadlines are PostgreSQL's");
	tap_eq_int(q1("SELECT count(*) FROM orders WHERE event_id = 1 AND reserved_at BETWEEN "
		      "to_timestamp(%" PRIu64 " / 1000.0) AND to_timestamp(%" PRIu64 " / 1000.0)",
			   t0 - 1, t1 + 1),
		1000, "reserved_at is when Redis decided");
	pull_drain(&ordered, &expired, &restock);
	tap_eq_int(ordered, 1000, "1000 RESULT ORDERED records pushed to the control plane");

	/* Deliver everything again: the group forgets what it delivered. */
	redis_int("XGROUP SETID fg:{1}:outbox order-writer 0");
	uint64_t end = now_mono_ms() + 20000;

	while (ordered < 2000 && now_mono_ms() < end) {
		sleep_ms(20);
		pull_drain(&ordered, &expired, &restock);
	}
	tap_eq_int(ordered, 2000, "redelivered entries are published again");
	tap_eq_int(q1(ORDERS_SQL, 1), 1000, "the same entries delivered twice -> still 1000");
	tap_eq_int(q1("SELECT available FROM stock WHERE event_id = 1"), 0,
		"stock not decremented again");
	tap_eq_int(redis_int("XPENDING fg:{1}:outbox order-writer"), 0,
		"redelivered entries acknowledged");
	writer_stop(w);
	invariants(1, 1000, true);
}

/* Killed between COMMIT and XACK: after a restart nothing is duplicated, nothing lost. */
static void
test_crash_after_commit(void)
{
	int status = -1;

	event_create(2, 1200, 1200);
	tap_eq_int(reserve(2, 1, 1200), 1200, "1200 reservations in Redis");
	write_conf("batch_size = 500");
	pid_t w = writer_start(true, NULL);

	waitpid(w, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 9,
		"the test hook ends the writer right after its first COMMIT");
	/* reserve() decides 512 at a time: entries of 512, 512 and 176. The first read takes
	 * one entry (nothing seen yet), written as batches of 500 at most, one in flight on
	 * each of the two connections: the hook exits after the first COMMIT, when the other
	 * batch may have committed too, but never the whole entry's acknowledgement. */
	long long first = q1(ORDERS_SQL, 2);

	tap_ok(first > 0 && first <= 2 * 500, "the first batches are committed (%lld orders)",
		first);
	tap_ok(redis_int("XPENDING fg:{2}:outbox order-writer") >= 1,
		"and its entry is still pending (not acknowledged)");
	w = writer_start(false, NULL);
	tap_eq_int(wait_for(ORDERS_SQL, 2, 1200, 20000), 1200,
		"after a restart: every reservation is an order");
	sleep_ms(300);
	tap_eq_int(q1(ORDERS_SQL, 2), 1200, "and none twice");
	tap_eq_int(redis_int("XPENDING fg:{2}:outbox order-writer"), 0,
		"the dead writer's entries were claimed and acknowledged");
	tap_eq_int(redis_int("HLEN fg:{2}:result"), 1200, "every user has a result");
	writer_stop(w);
	invariants(2, 1200, true);
}

/* PostgreSQL holds less stock than Redis handed out: refused batches go back to Redis. */
static void
test_stock_conflict(void)
{
	event_create(3, 10, 20);
	tap_eq_int(reserve(3, 1, 20), 20, "20 reservations in Redis against 10 in PostgreSQL");
	write_conf("batch_size = 4");
	pid_t w = writer_start(false, NULL);

	wait_for("SELECT count(*) FROM orders WHERE event_id = %u", 3, 8, 10000);
	uint64_t end = now_mono_ms() + 10000;

	while (redis_int("SCARD fg:{3}:released") < 12LL && now_mono_ms() < end)
		sleep_ms(20);
	sleep_ms(200);
	writer_stop(w);
	tap_eq_int(q1(ORDERS_SQL, 3), 8, "the batches that fit are committed (2 of 4)");
	tap_eq_int(q1("SELECT available FROM stock WHERE event_id = 3"), 2,
		"a refused batch commits nothing (2 left)");
	tap_eq_int(redis_int("SCARD fg:{3}:released"), 12, "the refused reservations are released");
	tap_eq_int(redis_int("GET fg:{3}:stock"), 12, "and their stock is back in Redis");
	tap_eq_int(redis_int("XPENDING fg:{3}:outbox order-writer"), 0, "and acknowledged");
	tap_eq_int(results_matching(3, "^S:%d+$"), 12,
		"  their users' results say sold out (S:<rid>), not an order that expired");
	tap_eq_int(results_matching(3, "^X:"), 0, "  no X: result for an order that never existed");
	invariants(3, 20, false);
}

/*
 * 20,000 entries under a cap of 5,000/s: every one becomes an order, in transactions of at most
 * batch_size. The rate itself is a figure, not a check (a loaded machine commits slower):
 * printed here, measured by tests/bench/bench_order_writer.c.
 */
static void
test_rate_cap(void)
{
	event_create(4, 20000, 20000);
	tap_eq_int(reserve(4, 1, 20000), 20000, "20000 reservations in Redis");
	write_conf("batch_size = 500");
	pid_t w = writer_start(false, "order_writer.max_rate=5000");

	tap_eq_int(wait_for(ORDERS_SQL, 4, 20000, 120000), 20000, "20000 orders");
	writer_stop(w);
	/* By the inserting transaction (xmin): two connections' batches may share created_at. */
	long long biggest =
		q1("SELECT max(n) FROM (SELECT count(*) n FROM orders WHERE event_id = 4 "
		   "GROUP BY xmin::text) b");

	tap_ok(biggest > 0 && biggest <= 500,
		"no transaction holds more than batch_size = 500 orders (the largest %lld)",
		biggest);
	/* Orders of one batch share created_at (its transaction's start). The span from the first
	 * batch to the last carries every order but the last batch's. */
	long long last = q1("SELECT count(*) FROM orders WHERE event_id = 4 AND created_at = "
			    "(SELECT max(created_at) FROM orders WHERE event_id = 4)");
	long long span_us = q1("SELECT (extract(epoch FROM max(created_at) - min(created_at)) * "
			       "1e6)::bigint FROM orders WHERE event_id = 4");

	if (span_us > 0)
		tap_diag("commit rate under the cap of 5000/s: %.0f orders/s (not checked)",
			(double)(20000 - last) * 1e6 / (double)span_us);
	invariants(4, 20000, true);
}

/* 1000 payments at their order's deadline +- a few ms, racing the expiry sweeper. */
static void
test_pay_vs_expiry(void)
{
	static uint64_t ids[1000];
	static char verdict[1000][32];
	unsigned ordered = 0, expired_recs = 0, restock = 0;
	long long paid, expired, said_paid = 0, said_refund = 0;

	event_create(5, 1000, 1000);
	tap_eq_int(reserve(5, 1, 1000), 1000, "1000 reservations in Redis");
	write_conf("batch_size = 500");
	pid_t w = writer_start(false, NULL);

	tap_eq_int(wait_for(ORDERS_SQL, 5, 1000, 20000), 1000, "1000 orders");
	pull_drain(&ordered, &expired_recs, &restock);
	expired_recs = restock = 0;
	paid_recs = recs_without_order = 0;

	/* Deadlines 3 ms apart from a second from now; each order is paid at its deadline plus
	 * an offset in -4..+4 ms. */
	uint64_t base = now_wall_ms() + 1000;

	q1("UPDATE orders o SET pay_deadline = to_timestamp(%" PRIu64 " / 1000.0) + "
	   "(r.rn * interval '3 ms') FROM (SELECT id, row_number() OVER (ORDER BY id) - 1 AS rn "
	   "FROM orders WHERE event_id = 5) r WHERE o.id = r.id",
		base);
	PGresult *r = PQexec(db, "SELECT id FROM orders WHERE event_id = 5 ORDER BY id");

	for (int i = 0; i < PQntuples(r) && i < 1000; i++)
		ids[i] = strtoull(PQgetvalue(r, i, 0), NULL, 10);
	PQclear(r);
	for (unsigned i = 0; i < 1000; i++) {
		uint64_t at = base + 3 * i + ((i * 7) % 9) - 4;
		char arg[24];
		const char *p[1] = {arg};

		/* Read the writer's pushes as a control plane does, all along: a PULL that is not
		 * read holds 1,000 messages, and the writer's PUSH keeps the rest only for its
		 * linger when it stops. */
		pull_drain(&ordered, &expired_recs, &restock);
		while (now_wall_ms() < at)
			sleep_ms(1);
		snprintf(arg, sizeof(arg), "%" PRIu64, ids[i]);
		r = PQexecParams(db, "SELECT flashgate_pay($1)", 1, NULL, p, NULL, NULL, 0);
		snprintf(verdict[i], sizeof(verdict[i]), "%s",
			PQresultStatus(r) == PGRES_TUPLES_OK ? PQgetvalue(r, 0, 0) : "error");
		PQclear(r);
		said_paid += strcmp(verdict[i], "paid") == 0;
		said_refund += strcmp(verdict[i], "expired_refund_needed") == 0;
	}
	tap_eq_int(said_paid + said_refund, 1000, "every payment answered paid or refund");
	tap_eq_int(wait_for("SELECT count(*) FROM orders WHERE event_id = %u AND status = "
			    "'pending'",
			   5, 0, 10000),
		0, "no order left pending");
	tap_eq_int(wait_for("SELECT count(*) FROM stock_releases WHERE event_id = %u AND "
			    "applied_at IS NULL",
			   5, 0, 10000),
		0, "every release applied to Redis");
	/* The paid results go every results_interval: the last payments' within one more. */
	tap_eq_int(wait_for("SELECT count(*) FROM result_changes r JOIN orders o ON "
			    "o.id = r.order_id WHERE o.event_id = %u",
			   5, 0, 10000),
		0, "result_changes: every row handled");
	for (unsigned i = 0; i < 5; i++) {
		sleep_ms(20);
		pull_drain(&ordered, &expired_recs, &restock);
	}
	writer_stop(w);
	paid = q1("SELECT count(*) FROM orders WHERE event_id = 5 AND status = 'paid'");
	expired = q1("SELECT count(*) FROM orders WHERE event_id = 5 AND status = 'expired'");
	tap_diag("paid %lld, expired %lld", paid, expired);
	tap_eq_int(paid + expired, 1000, "exactly one terminal state per order");
	tap_eq_int(paid, said_paid, "paid orders == payments answered paid");
	tap_ok(paid > 0 && expired > 0, "the race went both ways (paid %lld, expired %lld)", paid,
		expired);
	long long wrong = 0;

	for (unsigned i = 0; i < 1000; i++) {
		char sql[128];

		snprintf(sql, sizeof(sql), "SELECT status = 'paid' FROM orders WHERE id = %" PRIu64,
			ids[i]);
		PGresult *x = PQexec(db, sql);
		bool is_paid = PQntuples(x) == 1 && PQgetvalue(x, 0, 0)[0] == 't';

		PQclear(x);
		wrong += is_paid != (strcmp(verdict[i], "paid") == 0);
	}
	tap_eq_int(wrong, 0, "each order's state matches what its payment was told");
	tap_eq_int(q1("SELECT available FROM stock WHERE event_id = 5"), expired,
		"PostgreSQL got back the stock of the expired orders only");
	tap_eq_int(q1("SELECT count(*) FROM stock_releases WHERE event_id = 5"), expired,
		"one stock release per expired order");
	tap_eq_int(redis_int("SCARD fg:{5}:released"), expired, "Redis released each once");
	tap_eq_int(redis_int("GET fg:{5}:stock"), expired, "Redis stock back by the expired only");
	/* The writer sent them before it stopped; the last may still be on their way here. */
	uint64_t drain_end = now_mono_ms() + 5000;

	pull_drain(&ordered, &expired_recs, &restock);
	while (expired_recs < expired && now_mono_ms() < drain_end) {
		sleep_ms(20);
		pull_drain(&ordered, &expired_recs, &restock);
	}
	tap_eq_int(expired_recs, expired, "one RESULT EXPIRED pushed per expired order");
	while (paid_recs < paid && now_mono_ms() < drain_end) {
		sleep_ms(20);
		pull_drain(&ordered, &expired_recs, &restock);
	}
	tap_eq_int(paid_recs, paid, "one RESULT PAID pushed per paid order (result_changes)");
	tap_eq_int(recs_without_order, 0, "  every PAID and EXPIRED record names its order and deadline");
	tap_eq_int(results_matching(5, "^P:%d+:%d+:%d+$"), paid,
		"Redis: each paid order's user has P:<rid>:<order id>:<deadline>");
	tap_eq_int(results_matching(5, "^X:%d+:%d+:%d+$"), expired,
		"Redis: each expired order's user has X:<rid>:<order id>:<deadline>");
	tap_ok(restock >= 1, "RESTOCK pushed (%u)", restock);
	invariants(5, 1000, true);
}

/*
 * What reserve.lua of an older build did for one user: an outbox entry of one reservation (the
 * order writer reads both formats), the result, the stock decremented.
 */
static const char old_reserve_lua[] =
	"redis.call('XADD', KEYS[1], '*', 'u', ARGV[1], 'r', ARGV[2], 't', ARGV[3])\n"
	"redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])\n"
	"return redis.call('DECR', KEYS[3])\n";

/* Entries of many reservations and of one, with small batches: each reservation once. */
static void
test_entry_formats(void)
{
	const uint32_t ev = 6;
	redisContext *c = redisConnectUnix(rsrv.sock);
	unsigned ordered = 0, expired = 0, restock = 0;

	pull_drain(&ordered, &expired, &restock); /* what earlier cases pushed */
	ordered = expired = restock = 0;
	event_create(ev, 1000, 1000);
	/* 700 in entries of 512 and 188, then 300 old entries of one, then 1 more new entry. */
	tap_eq_int(reserve(ev, 1, 700), 700, "700 reservations through reserve.lua");
	for (unsigned u = 701; u <= 999; u++) {
		redisReply *r = redisCommand(c,
			"EVAL %s 3 fg:{6}:outbox fg:{6}:result fg:{6}:stock "
			"%u %" PRIu64 " %" PRIu64,
			old_reserve_lua, u, next_rid++, now_wall_ms());

		if (r != NULL)
			freeReplyObject(r);
	}
	tap_eq_int(reserve(ev, 999, 2), 1, "then one more through reserve.lua (999 is a buyer)");
	tap_eq_int(redis_int("XLEN fg:{6}:outbox"), 2 + 299 + 1,
		"the outbox: 2 entries of many, 299 of one, 1 of one");
	write_conf("batch_size = 100");
	pid_t w = writer_start(false, NULL);

	tap_eq_int(wait_for(ORDERS_SQL, ev, 1000, 20000), 1000, "1000 reservations -> 1000 orders");
	sleep_ms(200);
	tap_eq_int(redis_int("XPENDING fg:{6}:outbox order-writer"), 0, "every entry acknowledged");
	tap_eq_int(q1("SELECT count(DISTINCT reservation_id) FROM orders WHERE event_id = 6"), 1000,
		"one order per reservation id");
	/* By the inserting transaction (xmin): two connections' batches may share created_at. */
	tap_eq_int(q1("SELECT max(n) FROM (SELECT count(*) n FROM orders WHERE event_id = 6 GROUP "
		      "BY xmin::text) b"),
		100, "no transaction holds more than batch_size = 100 orders");
	uint64_t end = now_mono_ms() + 5000;

	while (ordered < 1000 && now_mono_ms() < end) {
		pull_drain(&ordered, &expired, &restock);
		sleep_ms(20);
	}
	tap_eq_int(ordered, 1000, "1000 RESULT ORDERED records");

	/* Everything delivered again, entries of many reservations spanning batches included. */
	redis_int("XGROUP SETID fg:{6}:outbox order-writer 0");
	end = now_mono_ms() + 20000;
	while (ordered < 2000 && now_mono_ms() < end) {
		sleep_ms(20);
		pull_drain(&ordered, &expired, &restock);
	}
	tap_eq_int(ordered, 2000, "redelivered: published again");
	tap_eq_int(q1(ORDERS_SQL, ev), 1000, "redelivered: still 1000 orders");
	tap_eq_int(redis_int("XPENDING fg:{6}:outbox order-writer"), 0,
		"redelivered entries acknowledged");
	writer_stop(w);
	redisFree(c);
	invariants(ev, 1000, true);
}

/*
 * The orders of a batch take one block of ids (orders_id_seq hands out 2048 at a time, sql/004).
 * When the sequence's increment is lowered while the writer runs, the next ids it gives meet
 * ids of the last block: no order is skipped for that, the batch takes the ids after. A writer
 * started on a sequence without blocks lets each order take its own id. Every order is there
 * once, published with the id PostgreSQL has.
 */
static void
test_id_blocks(void)
{
	const uint32_t ev = 7;
	char cmd[256];

	event_create(ev, 1000, 1000);
	tap_eq_int(reserve(ev, 1, 400), 400, "400 reservations in Redis");
	write_conf("batch_size = 256");
	pid_t w = writer_start(false, NULL);

	tap_eq_int(wait_for(ORDERS_SQL, ev, 400, 20000), 400, "400 orders");
	tap_eq_int(q1("SELECT count(*) FROM (SELECT 1 FROM orders WHERE event_id = 7 GROUP BY "
		      "created_at HAVING max(id) - min(id) + 1 <> count(*)) b"),
		0, "the orders of each batch have consecutive ids (one block)");
	sleep_ms(200);
	tap_eq_int(published_matches(ev, 1, 400), 400, "published with PostgreSQL's order ids");

	/* One id at a time from now on: the next ones are ids of the last block. */
	q1("ALTER SEQUENCE orders_id_seq INCREMENT BY 1");
	tap_eq_int(reserve(ev, 401, 400), 400, "400 more reservations");
	tap_eq_int(wait_for(ORDERS_SQL, ev, 800, 20000), 800,
		"with orders_id_seq handing out one id at a time: 800 orders");
	sleep_ms(200);
	tap_eq_int(published_matches(ev, 1, 800), 800, "published with PostgreSQL's order ids");
	writer_stop(w);
	snprintf(cmd, sizeof(cmd), "grep -q 'orders_id_seq gives ids that orders already have' %s",
		log_path);
	tap_ok(system(cmd) == 0, "the writer says the sequence gave ids again");

	/* A writer that starts so says what to do, and writes every order too. */
	w = writer_start(false, NULL);
	tap_eq_int(reserve(ev, 801, 200), 200, "200 more reservations");
	tap_eq_int(wait_for(ORDERS_SQL, ev, 1000, 20000), 1000, "1000 orders");
	sleep_ms(200);
	tap_eq_int(published_matches(ev, 1, 1000), 1000, "published with PostgreSQL's order ids");
	tap_eq_int(redis_int("XPENDING fg:{7}:outbox order-writer"), 0, "every entry acknowledged");
	writer_stop(w);
	snprintf(cmd, sizeof(cmd), "grep -q 'orders_id_seq hands out 1 id(s) at a time' %s",
		log_path);
	tap_ok(system(cmd) == 0, "the writer warns that the sequence lacks migration 004");
	q1("ALTER SEQUENCE orders_id_seq INCREMENT BY 2048");
	invariants(ev, 1000, true);
}

/* Reserves users first..first+n-1 of ev with reservation ids rid0.. in one batch (ids chosen by
 * the caller, as two data planes sharing a dp id would make them). Returns how many reserved. */
static unsigned
reserve_ids(uint32_t ev, uint64_t first, unsigned n, uint64_t rid0, unsigned rid_mod)
{
	struct wire_reserve res[64];
	uint8_t v[64];
	struct store_batch b = {.event = ev, .n = n, .res = res, .verdicts = v};
	unsigned reserved = 0;

	for (unsigned i = 0; i < n; i++)
		res[i] = (struct wire_reserve){.reservation_id = rid0 + i % rid_mod,
			.user = first + i,
			.admitted_ms = now_wall_ms(),
			.event = ev};
	store_reserve(rs, &b, 1);
	for (unsigned i = 0; i < n; i++)
		reserved += v[i] == WIRE_V_RESERVED;
	return reserved;
}

/*
 * Two buyers with one reservation id (two data planes with one dp id): both get their order, the
 * writer says so loudly, and a redelivery is still recognised by (event, user, reservation id).
 */
static void
test_shared_rid(void)
{
	char cmd[512];

	event_create(9, 100, 100);
	event_create(10, 100, 100);
	tap_eq_int(reserve_ids(9, 1, 30, 7000001, 30), 30, "event 9: users 1-30, ids 7000001-30");
	tap_eq_int(reserve_ids(9, 31, 30, 7000001, 30), 30,
		"event 9: users 31-60 with the same ids (another data plane, the same dp id)");
	tap_eq_int(reserve_ids(9, 61, 10, 7000101, 5), 10,
		"event 9: users 61-70 in one batch, two users per id");
	tap_eq_int(reserve_ids(10, 1, 30, 7000001, 30), 30, "event 10: users 1-30, the same ids");
	write_conf("batch_size = 64");
	pid_t w = writer_start(false, NULL);

	tap_eq_int(wait_for(ORDERS_SQL, 9, 70, 20000), 70, "event 9: 70 orders, one per buyer");
	tap_eq_int(wait_for(ORDERS_SQL, 10, 30, 20000), 30, "event 10: 30 orders");
	tap_eq_int(
		q1("SELECT count(*) FROM orders WHERE event_id = 9 AND reservation_id = 7000001"),
		2, "  reservation id 7000001 is the id of two orders of event 9 (users 1 and 31)");
	tap_eq_int(q1("SELECT available FROM stock WHERE event_id = 9"), 30, "  stock 100 - 70");
	sleep_ms(300);
	tap_eq_int(published_matches(9, 1, 70), 70,
		"every buyer's result shows its own order (not the other buyer's)");
	snprintf(cmd, sizeof(cmd), "grep -q 'belong to another buyer too' %s", log_path);
	tap_ok(system(cmd) == 0, "the writer logs the shared reservation ids loudly");

	/* Everything again: still recognised as redeliveries. */
	redis_int("XGROUP SETID fg:{9}:outbox order-writer 0");
	sleep_ms(1000);
	tap_eq_int(q1(ORDERS_SQL, 9), 70, "redelivered: still 70 orders");
	tap_eq_int(q1("SELECT available FROM stock WHERE event_id = 9"), 30,
		"  stock not decremented again");
	tap_eq_int(redis_int("XPENDING fg:{9}:outbox order-writer"), 0,
		"  redelivered entries acknowledged");
	writer_stop(w);
	invariants(9, 100, true);
}

/*
 * Publishing fails (the result hash is not a hash for a while): the orders are committed but no
 * entry is acknowledged, and once Redis takes the results the claimed entries are published and
 * acknowledged, each order still once.
 */
static void
test_publish_fails(void)
{
	const uint32_t ev = 8;

	event_create(ev, 1000, 1000);
	tap_eq_int(reserve(ev, 1, 1000), 1000, "1000 reservations in Redis");
	redis_int("RENAME fg:{8}:result fg:{8}:result.away");
	redis_int("SET fg:{8}:result not-a-hash");
	write_conf("batch_size = 100");
	pid_t w = writer_start(false, NULL);

	tap_eq_int(wait_for(ORDERS_SQL, ev, 1000, 20000), 1000,
		"1000 orders committed while the results cannot be written");
	sleep_ms(300);
	tap_eq_int(redis_int("XPENDING fg:{8}:outbox order-writer"), 2,
		"no entry acknowledged (both still pending)");
	redis_int("DEL fg:{8}:result");
	redis_int("RENAME fg:{8}:result.away fg:{8}:result");
	tap_eq_int(redis_int("HLEN fg:{8}:result"), 1000, "the result hash is back");
	uint64_t end = now_mono_ms() + 20000;

	while (redis_int("XPENDING fg:{8}:outbox order-writer") != 0 && now_mono_ms() < end)
		sleep_ms(20);
	tap_eq_int(redis_int("XPENDING fg:{8}:outbox order-writer"), 0,
		"the claimed entries are acknowledged");
	tap_eq_int(published_matches(ev, 1, 1000), 1000, "every order published");
	tap_eq_int(q1(ORDERS_SQL, ev), 1000, "and written once");
	writer_stop(w);
	invariants(ev, 1000, true);
}

/*
 * A reservation decided after PostgreSQL said closed (one racing `event close`: decided before
 * the control plane's SET of the window key, or by a control plane that has not heard of the
 * close yet) reaches the outbox after the writer found the closed event drained: it still
 * becomes an order, at the next events refresh.
 */
static void
test_closed_late_entry(void)
{
	const uint32_t ev = 11;
	char cmd[512];

	event_create(ev, 100, 100);
	tap_eq_int(reserve(ev, 1, 10), 10, "event 11: 10 reservations");
	write_conf("batch_size = 64");
	/* At info, the writer logs when it finds a closed event drained. */
	pid_t w = writer_start(false, "order_writer.log_level=info");

	tap_eq_int(wait_for(ORDERS_SQL, ev, 10, 20000), 10, "10 orders");
	q1("UPDATE events SET state = 'closed', updated_at = now() WHERE id = %u", ev);
	snprintf(cmd, sizeof(cmd), "grep -q 'event %u: closed and its outbox is drained' %s", ev,
		log_path);
	uint64_t end = now_mono_ms() + 10000;

	while (system(cmd) != 0 && now_mono_ms() < end)
		sleep_ms(20);
	tap_ok(system(cmd) == 0, "the writer finds the closed event drained");
	tap_eq_int(reserve(ev, 11, 5), 5, "then 5 reservations racing the close reach the outbox");
	tap_eq_int(wait_for(ORDERS_SQL, ev, 15, 5000), 15, "they become orders too");
	tap_eq_int(wait_for("SELECT count(*) FROM orders WHERE event_id = %u AND user_id > 10", ev,
			   5, 1000),
		5, "  the 5 late ones, once each");
	sleep_ms(200);
	tap_eq_int(redis_int("XPENDING fg:{11}:outbox order-writer"), 0, "  and acknowledged");
	writer_stop(w);
	invariants(ev, 100, true);
}

/*
 * Event ev with 1 item in PostgreSQL and 3 in Redis (Redis restored from an older state): user 1
 * reserves id rid and a writer started here makes its order, PostgreSQL's last item. Returns the
 * writer.
 */
static pid_t
conflict_setup(uint32_t ev, uint64_t rid)
{
	event_create(ev, 1, 3);
	tap_ok(reserve_ids(ev, 1, 1, rid, 1) == 1, "event %u: user 1 reserves id %" PRIu64, ev,
		rid);
	write_conf("batch_size = 64");
	pid_t w = writer_start(false, NULL);

	tap_eq_int(wait_for(ORDERS_SQL, ev, 1, 20000), 1, "  its order takes PostgreSQL's 1 item");
	sleep_ms(200);
	return w;
}

/*
 * A batch refused on a stock conflict releases each reservation that has no order, also one whose
 * reservation id another buyer's order of the batch has (data planes sharing a dp id): user 1's
 * order of id 8000001 exists, user 2's reservation of the same id is new and finds no stock.
 */
static void
test_conflict_shared_rid(void)
{
	const uint32_t ev = 14;
	pid_t w = conflict_setup(ev, 8000001);

	/* One read for both entries: user 1's delivered again, user 2's new. */
	kill(w, SIGSTOP);
	tap_eq_int(reserve_ids(ev, 2, 1, 8000001, 1), 1,
		"  user 2 reserves with the same id (Redis had 3)");
	redis_int("XGROUP SETID fg:{14}:outbox order-writer 0");
	kill(w, SIGCONT);
	uint64_t end = now_mono_ms() + 10000;

	while (redis_int("XPENDING fg:{14}:outbox order-writer") != 0 && now_mono_ms() < end)
		sleep_ms(20);
	sleep_ms(300);
	writer_stop(w);
	tap_eq_int(q1(ORDERS_SQL, ev), 1, "  the refused batch commits nothing");
	tap_eq_int(results_matching(ev, "^S:8000001$"), 1,
		"  user 2's reservation is released: its result sold out");
	tap_eq_int(redis_int("GET fg:{14}:stock"), 2, "  and its item back in Redis's stock");
	invariants(ev, 3, false);
}

/*
 * Redis restored from an older state (more stock than PostgreSQL, user 1's reservation lost)
 * decides user 1 again, in a batch that PostgreSQL refuses for want of stock. User 1 holds an
 * order already: that second reservation is not released (its decrement stands for the order's
 * item, as when no conflict happens), else the item would go back twice, once now and once
 * when the order expires.
 */
static void
test_conflict_holder(void)
{
	const uint32_t ev = 16;
	pid_t w = conflict_setup(ev, 9000001);

	/* Redis forgets user 1 and its decrement (restored from before it). */
	redis_int("HDEL fg:{16}:result 1");
	redis_int("INCR fg:{16}:stock");
	tap_eq_int(reserve_ids(ev, 1, 2, 9000002, 2), 2,
		"  users 1 (again) and 2 reserve in one batch");
	uint64_t end = now_mono_ms() + 10000;

	while (results_matching(ev, "^S:") < 1 && now_mono_ms() < end)
		sleep_ms(20);
	sleep_ms(300);
	tap_eq_int(q1(ORDERS_SQL, ev), 1, "  the batch is refused (no stock for user 2)");
	tap_eq_int(results_matching(ev, "^S:9000003$"), 1, "  user 2's reservation is released");
	tap_eq_int(results_matching(ev, "^S:9000002$"), 0,
		"  user 1's is not: it holds an order, whose item that decrement is");
	tap_eq_int(redis_int("GET fg:{16}:stock"), 2, "  Redis's stock: 3 - 2 + 1");
	/* The order expires: its item goes back once. */
	q1("UPDATE orders SET pay_deadline = now() - interval '1 second' WHERE event_id = %u", ev);
	tap_eq_int(wait_for("SELECT count(*) FROM stock_releases WHERE event_id = %u AND "
			    "applied_at IS NOT NULL",
			   ev, 1, 10000),
		1, "  user 1's order expires, its release applied");
	writer_stop(w);
	tap_eq_int(redis_int("GET fg:{16}:stock"), 3,
		"  Redis's stock 3, PostgreSQL's item back once");
	tap_eq_int(
		q1("SELECT available FROM stock WHERE event_id = %u", ev), 1, "  PostgreSQL's 1");
}

/*
 * Redis loses an event's outbox with its consumer group during the sale (a failover to a node
 * that never had them, a restart without its append-only file): reserve.lua's next XADD makes the
 * stream again, without the group. The writer makes the group again and writes the new
 * reservations, instead of failing on NOGROUP until it is restarted.
 */
static void
test_group_lost(void)
{
	const uint32_t ev = 15;

	event_create(ev, 100, 100);
	write_conf("batch_size = 64");
	pid_t w = writer_start(false, NULL);

	tap_eq_int(reserve(ev, 1, 5), 5, "event 15: 5 reservations");
	tap_eq_int(wait_for(ORDERS_SQL, ev, 5, 20000), 5, "  5 orders");
	sleep_ms(200);
	redis_int("DEL fg:{15}:outbox");
	tap_eq_int(reserve(ev, 6, 5), 5, "  Redis lost the outbox and its group; 5 more reserve");
	tap_eq_int(wait_for(ORDERS_SQL, ev, 10, 5000), 10, "  the writer makes them orders too");
	sleep_ms(200);
	tap_eq_int(redis_int("XPENDING fg:{15}:outbox order-writer"), 0, "  and acknowledges them");
	writer_stop(w);
	invariants(ev, 100, true);
}

/*
 * An outbox entry deleted while pending (a writer read it and died, then someone ran XDEL): Redis
 * drops it from the group when it is claimed, and the writer says so, loudly, with the event.
 */
static void
test_deleted_pending(void)
{
	const uint32_t ev = 13;
	char cmd[512];

	event_create(ev, 10, 10);
	tap_eq_int(reserve(ev, 1, 3), 3, "event 13: 3 reservations, one outbox entry");
	redis_int("XGROUP CREATE fg:{13}:outbox order-writer 0 MKSTREAM");
	redis_int("XREADGROUP GROUP order-writer gone COUNT 1 STREAMS fg:{13}:outbox >");
	redisContext *c = redisConnectUnix(rsrv.sock);
	redisReply *r = redisCommand(c, "XRANGE fg:{13}:outbox - +");

	if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 1)
		freeReplyObject(
			redisCommand(c, "XDEL fg:{13}:outbox %s", r->element[0]->element[0]->str));
	freeReplyObject(r);
	redisFree(c);
	tap_eq_int(redis_int("XPENDING fg:{13}:outbox order-writer"), 1,
		"  read by a writer that died, then deleted: pending, gone from the stream");
	write_conf("batch_size = 64");
	pid_t w = writer_start(false, NULL);

	snprintf(cmd, sizeof(cmd),
		"grep -q 'event %u: 1 outbox entries were deleted while pending' %s", ev, log_path);
	uint64_t end = now_mono_ms() + 10000;

	while (system(cmd) != 0 && now_mono_ms() < end)
		sleep_ms(20);
	tap_ok(system(cmd) == 0, "  the writer's claim logs it as an error, naming the event");
	tap_eq_int(redis_int("XPENDING fg:{13}:outbox order-writer"), 0, "  nothing pending");
	writer_stop(w);
	invariants(ev, 10, false);
}

/*
 * A claim's count of entries deleted while pending is that claim's: the claim of an event without
 * its group (XGROUP CREATE failed, or Redis lost the group) finds nothing and must not hand on the
 * count of the event claimed before it, which the writer would log as deleted entries of this
 * one. Events 18 and 19 exist only in Redis, for the reader alone.
 */
static void
test_claim_deleted_own(void)
{
	struct outbox_reader *r = outbox_reader_open(rs, "order-writer", "t");
	struct store_outbox_buf b = {0};
	const uint32_t ids[2] = {18, 19};
	const bool open[2] = {true, true};
	bool done;

	redis_int("XADD fg:{18}:outbox 1-1 u 1 r 1");
	redis_int("XGROUP CREATE fg:{18}:outbox order-writer 0");
	redis_int("XREADGROUP GROUP order-writer gone COUNT 1 STREAMS fg:{18}:outbox >");
	redis_int("XDEL fg:{18}:outbox 1-1");
	redis_int("SET fg:{19}:outbox not-a-stream"); /* its group cannot be made */
	tap_ok(r != NULL && outbox_reader_set_events(r, ids, open, 2) != 0,
		"event 19's group cannot be made (its outbox key is a string)");
	int n = outbox_reader_claim(r, 0, 0, 64, &b, &done);

	tap_ok(n == 0 && b.deleted == 1, "event 18's claim counts its deleted entry (%d, %u)", n,
		b.deleted);
	n = outbox_reader_claim(r, 1, 0, 64, &b, &done);
	tap_ok(n == 0 && b.deleted == 0,
		"  event 19's claim (no group) counts none, not event 18's (%d, %u)", n, b.deleted);
	store_outbox_buf_free(&b);
	outbox_reader_close(r);
	redis_int("DEL fg:{18}:outbox fg:{19}:outbox");
}

/*
 * With [redis] wait_replicas, a stock release applied to Redis is marked applied in PostgreSQL
 * only once the replicas confirmed it: here none does (a Redis without replicas), so the sweep
 * leaves the releases pending, and a later round applies them again, the stock going back once.
 */
static void
test_release_unconfirmed(void)
{
	const uint32_t ev = 12;
	const uint64_t rid0 = next_rid;
	struct store_outbox_rec rec[3];
	struct pg_orders_row out[3];
	struct pg_orders_batch res;
	struct expiry_stats st = {0}, st2 = {0};
	unsigned n = 0;
	char err[256] = "";
	struct store_conn_config wc = {
		.unix_path = rsrv.sock, .wait_replicas = 1, .wait_timeout_ms = 50};
	struct store *wrs = store_open(&wc, err, sizeof(err));
	struct pg_orders *os = pg_orders_open(psrv.conninfo, NULL, err, sizeof(err));

	if (!tap_ok(wrs != NULL && os != NULL, "a store with wait_replicas 1, and PostgreSQL: %s",
		    err)) {
		store_close(wrs);
		pg_orders_close(os);
		return;
	}
	event_create(ev, 10, 10);
	tap_eq_int(reserve(ev, 1, 3), 3, "event 12: 3 reservations");
	for (unsigned i = 0; i < 3; i++)
		rec[i] = (struct store_outbox_rec){.id_ms = now_wall_ms(),
			.user = 1 + i,
			.reservation_id = rid0 + i,
			.valid = true};
	tap_ok(pg_orders_write_batch(os, ev, rec, 3, out, &n, &res, NULL, err, sizeof(err)) == 0 &&
			res.inserted == 3,
		"  their 3 orders: %s", err);
	q1("UPDATE orders SET pay_deadline = now() - interval '1 second' WHERE event_id = %u", ev);
	int rc = expiry_sweep(os, wrs, NULL, 100, 1, &st);

	tap_ok(rc == -ETIMEDOUT && st.expired == 3 && st.applied == 3,
		"  expired and applied to Redis, not confirmed by a replica (rc %d, expired "
		"%" PRIu64 ", applied %" PRIu64 ")",
		rc, st.expired, st.applied);
	tap_eq_int(q1("SELECT count(*) FROM stock_releases WHERE event_id = %u AND applied_at IS "
		      "NULL",
			   ev),
		3, "  so the releases are not marked applied");
	rc = expiry_releases(os, rs, NULL, 100, 1, &st2);
	tap_ok(rc == 0 && st2.repeated == 3 && st2.applied == 0,
		"  the next round (no replicas asked for) finds them applied (rc %d, repeated "
		"%" PRIu64 ")",
		rc, st2.repeated);
	tap_eq_int(q1("SELECT count(*) FROM stock_releases WHERE event_id = %u AND applied_at IS "
		      "NULL",
			   ev),
		0, "  and marks them");
	tap_eq_int(redis_int("GET fg:{12}:stock"), 10, "  Redis got each item back once");

	/* The same for a paid order's result: its result_changes row stays until confirmed. */
	struct ow_results_stats ps = {0};

	rec[0] = (struct store_outbox_rec){
		.id_ms = now_wall_ms(), .user = 4, .reservation_id = next_rid, .valid = true};
	tap_eq_int(reserve(ev, 4, 1), 1, "  user 4 reserves");
	tap_ok(pg_orders_write_batch(os, ev, rec, 1, out, &n, &res, NULL, err, sizeof(err)) == 0 &&
			res.inserted == 1,
		"  and has an order: %s", err);
	q1("SELECT flashgate_pay(id) FROM orders WHERE event_id = %u AND user_id = 4", ev);
	rc = ow_results_paid(os, wrs, NULL, 100, 1, &ps);
	tap_ok(rc == -ETIMEDOUT && ps.paid == 1,
		"  paid: its result stored, not confirmed by a replica (rc %d)", rc);
	tap_eq_int(q1("SELECT count(*) FROM result_changes c JOIN orders o ON o.id = c.order_id "
		      "WHERE o.event_id = %u",
			   ev),
		1, "  so its result_changes row stays");
	tap_ok(ow_results_paid(os, rs, NULL, 100, 1, &ps) == 0, "  the next round stores it");
	tap_eq_int(q1("SELECT count(*) FROM result_changes c JOIN orders o ON o.id = c.order_id "
		      "WHERE o.event_id = %u",
			   ev),
		0, "  and deletes the row");
	tap_eq_int(results_matching(ev, "^P:"), 1, "  user 4's result is paid");
	store_close(wrs);
	pg_orders_close(os);
	invariants(ev, 10, true);
}

/*
 * Delivers what the group has pending or new on event ev's outbox (read on rs, a store without
 * wait_replicas) to a writer whose releases run on wrs and whose entries are acknowledged on prs
 * (NULL: on wrs), and completes it. Returns the entries delivered, or -1 with the writer's error
 * in *wrc.
 */
static int
refused_deliver(uint32_t ev, struct store *wrs, struct store *prs, struct pg_orders *os,
	struct ow_link *link, bool claim, int *wrc, struct ow_writer_stats *st)
{
	struct store_outbox_buf ob = {0};
	char cursor[48] = "0-0";
	struct ow_writer w = {
		.rs = wrs, .publish_rs = prs, .os = os, .link = link, .group = "order-writer"};
	int n = claim ? store_outbox_claim(rs, ev, "order-writer", "t", 0, cursor, sizeof(cursor),
				RS_BATCH_MAX, &ob)
		      : store_outbox_read(rs, ev, "order-writer", "t", RS_BATCH_MAX, &ob);

	*wrc = 0;
	if (n > 0) {
		*wrc = ow_writer_write(&w, ev, ob.rec, ob.n);
		int f = ow_writer_flush(&w);

		*wrc = *wrc != 0 ? *wrc : f;
		ow_writer_free(&w);
		*st = w.st;
	}
	store_outbox_buf_free(&ob);
	return n;
}

/*
 * With [redis] wait_replicas, a batch PostgreSQL refuses for want of stock has its reservations
 * released in Redis, and its outbox entries are acknowledged (on another connection, the
 * publisher's) only once the replicas hold those releases: a failover in between would lose them
 * for good. Here none confirms (the releases run on a store with wait_replicas 1 on a Redis
 * without replicas; the outbox is read and acknowledged on stores without it): the entry stays
 * pending, the buyers told sold out at once; its redelivery through a plain store finds them
 * released and acknowledges it, each item back in Redis once.
 */
static void
test_refused_unconfirmed(void)
{
	const uint32_t ev = 17;
	unsigned ordered = 0, expired = 0, restock = 0;
	struct ow_writer_stats st = {0};
	char err[256] = "";
	struct store_conn_config wc = {
		.unix_path = rsrv.sock, .wait_replicas = 1, .wait_timeout_ms = 50};
	struct store_conn_config pc = {.unix_path = rsrv.sock};
	struct store *wrs = store_open(&wc, err, sizeof(err));
	struct store *prs = wrs != NULL ? store_open(&pc, err, sizeof(err)) : NULL;
	struct pg_orders *os = pg_orders_open(psrv.conninfo, NULL, err, sizeof(err));
	struct ow_link *link = ow_link_open(
		pull_ep, 17, 100, &(struct zlink_keys){.curve = false}, err, sizeof(err));
	int wrc, n;

	if (!tap_ok(wrs != NULL && prs != NULL && os != NULL && link != NULL,
		    "a store with wait_replicas 1, a plain one, PostgreSQL and a link: %s", err))
		goto out;
	event_create(ev, 1, 3);
	tap_eq_int(
		reserve(ev, 1, 2), 2, "event 17: 2 reservations in Redis against 1 in PostgreSQL");
	tap_ok(store_outbox_group_create(rs, ev, "order-writer") == 0, "  the group");
	pull_drain(&ordered, &expired, &restock);
	sold_out_recs = 0;
	n = refused_deliver(ev, wrs, prs, os, link, false, &wrc, &st);
	tap_ok(n == 1 && st.conflicts == 1 && st.released == 2,
		"  their entry read, refused by PostgreSQL, both released (entries %d, conflicts "
		"%" PRIu64 ", released %" PRIu64 ")",
		n, st.conflicts, st.released);
	tap_eq_int(wrc, -ETIMEDOUT, "  the releases not confirmed by a replica: the writer fails");
	tap_eq_int(redis_int("XPENDING fg:{17}:outbox order-writer"), 1,
		"  so the entry stays pending, not acknowledged");
	ow_link_close(link); /* sends what it holds */
	link = NULL;
	sleep_ms(100);
	pull_drain(&ordered, &expired, &restock);
	tap_eq_int(sold_out_recs, 2, "  the 2 buyers are told sold out at once");
	st = (struct ow_writer_stats){0};
	n = refused_deliver(ev, rs, NULL, os, NULL, true, &wrc, &st);
	tap_ok(n == 1 && wrc == 0 && st.skipped == 2 && st.released == 0 && st.conflicts == 0,
		"  delivered again (no replicas asked for): found released, nothing released again "
		"(entries %d, rc %d, skipped %" PRIu64 ", released %" PRIu64 ")",
		n, wrc, st.skipped, st.released);
	tap_eq_int(redis_int("XPENDING fg:{17}:outbox order-writer"), 0, "  and acknowledged");
	tap_eq_int(redis_int("GET fg:{17}:stock"), 3, "  Redis got each item back once (1 + 2)");
	tap_eq_int(results_matching(ev, "^S:%d+$"), 2, "  both results say sold out");
	tap_eq_int(q1(ORDERS_SQL, ev), 0, "  and no order was made");
	invariants(ev, 3, false);
out:
	ow_link_close(link);
	pg_orders_close(os);
	store_close(prs);
	store_close(wrs);
}

/*
 * A time reads the same in every program: rounded down to the millisecond (pg/pg_row.h). Orders
 * whose deadlines PostgreSQL holds at .9996 s read .999 s wherever the order writer reads them:
 * in a redelivered batch's answer, in the stock release of an expiry and in a paid order's
 * result (the order writer rounded them to the next millisecond before pg/ had one expression
 * for all).
 */
static void
test_deadline_ms(void)
{
	const uint32_t ev = 95;
	const uint64_t past_ms = UINT64_C(1577836800999);   /* 2020-01-01 00:00:00.999 UTC */
	const uint64_t future_ms = UINT64_C(4070908800999); /* 2099-01-01 00:00:00.999 UTC */
	struct store_outbox_rec rec[2] = {
		{.id_ms = 1700000000000, .user = 9501, .reservation_id = 950001, .valid = true},
		{.id_ms = 1700000000000, .user = 9502, .reservation_id = 950002, .valid = true},
	};
	static struct pg_orders_release rel[256];
	static struct pg_orders_paid paid[256];
	struct pg_orders_row out[2];
	struct pg_orders_batch res;
	unsigned n = 0, nrel = 0, npaid = 0, expired = 0, good = 0;
	char err[256] = "";
	bool ok;
	struct pg_orders *os = pg_orders_open(psrv.conninfo, NULL, err, sizeof(err));

	if (!tap_ok(os != NULL, "the order writer's PostgreSQL opened: %s", os ? "" : err))
		return;
	event_create(ev, 10, 10);
	ok = pg_orders_write_batch(os, ev, rec, 2, out, &n, &res, NULL, err, sizeof(err)) == 0;
	tap_ok(ok && res.inserted == 2, "deadlines: two orders written: %s", err);
	q1("UPDATE orders SET pay_deadline = CASE user_id WHEN 9501 THEN "
	   "timestamptz '2020-01-01 00:00:00.9996+00' ELSE "
	   "timestamptz '2099-01-01 00:00:00.9996+00' END WHERE event_id = %u",
		ev);
	n = 0;
	ok = pg_orders_write_batch(os, ev, rec, 2, out, &n, &res, NULL, err, sizeof(err)) == 0;
	tap_ok(ok && res.existing == 2 && n == 2, "  the batch delivered again finds both: %s",
		err);
	for (unsigned i = 0; i < n; i++)
		good += out[i].pay_deadline_ms == (out[i].user == 9501 ? past_ms : future_ms);
	tap_eq_int(good, 2, "  their deadlines (.9996 s) read .999 s in the batch's answer");
	q1("SELECT flashgate_pay(id) FROM orders WHERE event_id = %u AND user_id = 9502", ev);
	ok = pg_orders_expire(os, 1000, &expired, err, sizeof(err)) == 0 &&
	     pg_orders_releases_pending(os, rel, 256, &nrel, err, sizeof(err)) == 0 &&
	     pg_orders_paid_pending(os, paid, 256, &npaid, err, sizeof(err)) == 0;
	tap_ok(ok, "  expired (%u), releases and paid results read: %s", expired, err);
	good = 0;
	for (unsigned i = 0; i < nrel; i++)
		good += rel[i].event == ev && rel[i].pay_deadline_ms == past_ms;
	for (unsigned i = 0; i < npaid; i++)
		good += paid[i].event == ev && paid[i].pay_deadline_ms == future_ms;
	tap_eq_int(good, 2, "  and in the expired order's stock release and the paid one's result");
	pg_orders_close(os);
}

int
main(int argc, char **argv)
{
	char err[256];
	unsigned applied;
	struct pg_conn *ps;
	struct store_conn_config rc = {0};

	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH-OF-flashgate-order-writer\n", argv[0]);
		return 2;
	}
	writer_bin = argv[1];
	if (redis_server_start(&rsrv, false, false) != 0 || pg_server_start(&psrv, false) != 0) {
		tap_ok(0, "Redis and PostgreSQL start");
		return tap_done();
	}
	ps = pg_conn_open(psrv.conninfo, err, sizeof(err));
	tap_ok(ps != NULL && pg_migrate(ps, NULL, &applied, err, sizeof(err)) == 0,
		"schema migrated");
	pg_conn_close(ps);
	db = PQconnectdb(psrv.conninfo);
	rc.unix_path = rsrv.sock;
	rs = store_open(&rc, err, sizeof(err));
	snprintf(conf_path, sizeof(conf_path), "%s/ow.conf", rsrv.dir);
	snprintf(log_path, sizeof(log_path), "%s/ow.log", rsrv.dir);
	snprintf(pull_ep, sizeof(pull_ep), "ipc://%s/pull", rsrv.dir);
	zctx = zmq_ctx_new();
	zpull = zmq_socket(zctx, ZMQ_PULL);
	tap_ok(zmq_bind(zpull, pull_ep) == 0, "a stand-in control plane PULL at %s", pull_ep);

	test_exactly_once();
	test_crash_after_commit();
	test_entry_formats();
	test_stock_conflict();
	test_rate_cap();
	test_pay_vs_expiry();
	test_id_blocks();
	test_publish_fails();
	test_shared_rid();
	test_closed_late_entry();
	test_release_unconfirmed();
	test_refused_unconfirmed();
	test_deleted_pending();
	test_conflict_shared_rid();
	test_group_lost();
	test_conflict_holder();
	test_claim_deleted_own();
	test_deadline_ms();

	if (tap_failed) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "sed 's/^/# /' %s | tail -40", log_path);
		if (system(cmd) != 0)
			tap_diag("no writer log");
	}
	zmq_close(zpull);
	zmq_ctx_term(zctx);
	store_close(rs);
	PQfinish(db);
	return tap_done();
}
