/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The order writer's committed orders per second (rate cap off), against single-row autocommit
 * INSERTs of the same rows on the same PostgreSQL (durable: fsync on, synchronous_commit on),
 * and its rate under a cap of 5,000/s (20,000 orders) against that cap. Prints figures and their
 * ratios; asserts nothing about time.
 *   bench_order_writer PATH-OF-flashgate-order-writer [N]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/now.h"
#include "pg/pg.h"
#include "store/store_conn.h"
#include "store/store_event.h"
#include "store/store_reserve.h"
#include "tests/lib/pg_server.h"
#include "tests/lib/redis_server.h"
#include "tests/tap.h"

enum { CAPPED_N = 20000, CAPPED_RATE = 5000 };

static long long
q1(PGconn *db, const char *sql)
{
	PGresult *r = PQexec(db, sql);
	long long v = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1
			      ? atoll(PQgetvalue(r, 0, 0))
			      : -1;

	PQclear(r);
	return v;
}

/* Event ev in PostgreSQL, in state, with stock items. */
static void
add_event(PGconn *db, uint32_t ev, const char *state, unsigned stock)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
		"INSERT INTO events (id, name, starts_at, ends_at, pay_window_s, state) VALUES "
		"(%u, 'b', now() - interval '1 hour', now() + interval '1 day', 600, '%s'); "
		"INSERT INTO stock VALUES (%u, %u, %u)",
		ev, state, ev, stock, stock);
	PQclear(PQexec(db, sql));
}

/* Reserves users first..first+n-1 of event ev in Redis, 2048 a batch. */
static void
fill(struct store *rs, uint32_t ev, unsigned first, unsigned n)
{
	static struct wire_reserve res[2048];
	static uint8_t verdicts[2048];

	store_preheat(rs, ev, n);
	for (unsigned done = 0; done < n;) {
		unsigned k = n - done < 2048 ? n - done : 2048;
		struct store_batch b = {.event = ev, .n = k, .res = res, .verdicts = verdicts};

		for (unsigned i = 0; i < k; i++)
			res[i] = (struct wire_reserve){.reservation_id = first + done + i,
				.user = first + done + i, .admitted_ms = 1, .event = ev};
		store_reserve(rs, &b, 1);
		done += k;
	}
}

/*
 * Runs the order writer exe with conf until event ev's PostgreSQL stock is 0 (at most 300 s),
 * then stops it. *have: the orders of ev; *wall_us: from its start to the last. Returns the
 * orders per second between the first COMMIT and the last (the last batch's orders left out).
 */
static double
writer_run(const char *exe, const char *conf, PGconn *db, uint32_t ev, long long *have,
	uint64_t *wall_us)
{
	char sql[256];
	uint64_t t0 = now_mono_us();
	pid_t w = fork();

	if (w == 0) {
		execl(exe, exe, "-c", conf, (char *)NULL);
		_exit(127);
	}
	/* Polls the stock row, not count(*): a scan of orders every 5 ms would take a share of
	 * the CPU from the writer it measures. The writer decrements it by what it inserts. */
	snprintf(sql, sizeof(sql), "SELECT available FROM stock WHERE event_id = %u", ev);
	while (q1(db, sql) > 0 && now_mono_us() - t0 < 300000000)
		redis_server_sleep_ms(5);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM orders WHERE event_id = %u", ev);
	*have = q1(db, sql);
	*wall_us = now_mono_us() - t0;
	kill(w, SIGTERM);
	waitpid(w, NULL, 0);
	snprintf(sql, sizeof(sql),
		"SELECT (extract(epoch FROM max(created_at) - min(created_at)) * 1e6)::bigint "
		"FROM orders WHERE event_id = %u",
		ev);
	long long span = q1(db, sql);

	snprintf(sql, sizeof(sql),
		"SELECT count(*) FROM orders WHERE event_id = %u AND created_at = (SELECT "
		"max(created_at) FROM orders WHERE event_id = %u)",
		ev, ev);
	long long last = q1(db, sql);

	return span > 0 ? (double)(*have - last) * 1e6 / (double)span : 0;
}

int
main(int argc, char **argv)
{
	static struct redis_server rsrv;
	static struct pg_server psrv;
	unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 100000, single = n / 10;
	char err[256], conf[160], log[160];
	struct store_conn_config rc = {0};
	struct pg_conn *ps;
	unsigned applied;
	PGconn *db;
	struct store *rs;

	if (argc < 2 || n < 1000)
		return fprintf(stderr, "usage: %s WRITER [N >= 1000]\n", argv[0]), 2;
	if (redis_server_start(&rsrv, false, false) != 0 || pg_server_start(&psrv, true) != 0) {
		tap_ok(0, "Redis and PostgreSQL start");
		return tap_done();
	}
	ps = pg_conn_open(psrv.conninfo, err, sizeof(err));
	tap_ok(ps != NULL && pg_migrate(ps, NULL, &applied, err, sizeof(err)) == 0, "migrated");
	pg_conn_close(ps);
	db = PQconnectdb(psrv.conninfo);
	rc.unix_path = rsrv.sock;
	rs = store_open(&rc, err, sizeof(err));
	/* Event 1: the uncapped run; 2: the baseline's rows. */
	for (unsigned ev = 1; ev <= 2; ev++)
		add_event(db, ev, ev == 1 ? "open" : "draft", n);
	fill(rs, 1, 1, n);

	/* The order writer, cap off, batches of 2048, its default connections (or
	 * FG_BENCH_OW_CONNECTIONS, to compare). */
	const char *conns = getenv("FG_BENCH_OW_CONNECTIONS");

	snprintf(conf, sizeof(conf), "%s/ow.conf", rsrv.dir);
	snprintf(log, sizeof(log), "%s/ow.log", rsrv.dir);
	/* Its Redis has no append-only file (a benchmark): the settings check is skipped. */
	FILE *f = fopen(conf, "w");

	fprintf(f, "[order_writer]\npush_endpoint = ipc://%s/pull\nmax_rate = 0\nbatch_size = 2048\n"
		   "poll_interval = 1ms\nlog_level = warn\n%s%s%s[redis]\nsocket = %s\n"
		   "unsafe_settings = yes\n[postgres]\nconninfo = \"%s\"\n",
		rsrv.dir, conns ? "connections = " : "", conns ? conns : "", conns ? "\n" : "",
		rsrv.sock, psrv.conninfo);
	fclose(f);
	long long have;
	uint64_t wall;
	double writer_rate = writer_run(argv[1], conf, db, 1, &have, &wall);
	double writer_wall = (double)have * 1e6 / (double)wall;

	tap_eq_int(have, n, "the writer wrote every reservation");
	tap_diag("order writer: %lld orders, %.0f orders/s between first and last COMMIT, %.0f/s "
		 "wall clock from its start",
		have, writer_rate, writer_wall);

	/* The baseline: the same rows, one autocommit INSERT each (a subset: it is slow). */
	const char *ins = "INSERT INTO orders (event_id, user_id, reservation_id, pay_deadline) "
			  "VALUES (2, $1, $2, now() + interval '10 minutes')";
	uint64_t b0 = now_mono_us();

	for (unsigned i = 0; i < single; i++) {
		char u[24], r[24];
		const char *p[2] = {u, r};

		snprintf(u, sizeof(u), "%u", 1 + i);
		snprintf(r, sizeof(r), "%u", 10000000 + i);
		PQclear(PQexecParams(db, ins, 2, NULL, p, NULL, NULL, 0));
	}
	double base_rate = (double)single * 1e6 / (double)(now_mono_us() - b0);

	tap_eq_int(q1(db, "SELECT count(*) FROM orders WHERE event_id = 2"), single,
		"the baseline inserted its rows");
	tap_diag("single-row autocommit INSERTs: %u rows, %.0f rows/s", single, base_rate);
	tap_diag("ratio: %.1fx (target >= 40x and >= 100000 orders/s)", writer_rate / base_rate);

	/* The cap: CAPPED_N orders of event 3 under max_rate = CAPPED_RATE, batches of 500. The
	 * event is made now, so that the uncapped run above did not see it. */
	add_event(db, 3, "open", CAPPED_N);
	fill(rs, 3, 20000000, CAPPED_N);
	f = fopen(conf, "w");
	fprintf(f, "[order_writer]\npush_endpoint = ipc://%s/pull\nmax_rate = %u\n"
		   "batch_size = 500\npoll_interval = 1ms\nlog_level = warn\n[redis]\nsocket = %s\n"
		   "unsafe_settings = yes\n[postgres]\nconninfo = \"%s\"\n",
		rsrv.dir, (unsigned)CAPPED_RATE, rsrv.sock, psrv.conninfo);
	fclose(f);
	double capped = writer_run(argv[1], conf, db, 3, &have, &wall);

	tap_eq_int(have, CAPPED_N, "under the cap the writer wrote every reservation");
	tap_diag("under a cap of %u/s: %lld orders, %.0f orders/s between first and last COMMIT "
		 "(%.1f%% of the cap)",
		(unsigned)CAPPED_RATE, have, capped, capped * 100.0 / CAPPED_RATE);
	store_close(rs);
	PQfinish(db);
	return tap_done();
}
