/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control-plane decisions per second against one local Redis, side by side in one run:
 *
 *   (a) the seed's one-user script (its text from the seed document), one EVALSHA per
 *       decision, driven by redis-benchmark (50 clients) unpipelined and with -P 32;
 *   (b) lua/reserve.lua through store_reserve(): batches of 64..2048 reservations of one event,
 *       several batches pipelined per call, the outbox XADD and the result HSET included.
 *
 * Both over TCP on 127.0.0.1 to the same redis-server (persistence off), with a stock so large
 * that every decision reserves: the seed decrements and records the buyer in a set of its
 * own, reserve.lua also appends the reservation to the outbox (one entry per batch) and writes
 * the result (the result hash is its buyers set). Prints decisions/s and the ratio of the best (b)
 * to the -P 32 figure (target: >= 2x). The TAP checks assert only that every answer was right,
 * never a time. FG_BENCH_QUICK=1 runs a short pass.
 *
 *   bench_reserve [SEED_DOC]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "common/log.h"
#include "common/now.h"
#include "store/store_conn.h"
#include "store/store_event.h"
#include "store/store_keys.h"
#include "store/store_reserve.h"
#include "tests/lib/redis_server.h"
#include "tests/tap.h"

#define HUGE_STOCK 1000000000000LL
/* The seed's buyers set (reserve.lua has none: its buyers are the result hash's fields). */
#define SEED_BUYERS "fg:{1}:seed-buyers"

/* Counts the reservations in an outbox: each entry holds u and r once per reservation. */
static const char count_outbox_lua[] =
	"local n = 0 for _, e in ipairs(redis.call('XRANGE', KEYS[1], '-', '+')) do "
	"n = n + #e[2] / 4 end return n";

static struct redis_server srv;
static redisContext *raw;

static double
now_s(void)
{
	return (double)now_mono_ns() / 1e9;
}

static long long
raw_int(const char *cmd, const char *k)
{
	redisReply *r = redisCommand(raw, cmd, k);
	long long v = -1;

	if (r != NULL && r->type == REDIS_REPLY_INTEGER)
		v = r->integer;
	else if (r != NULL && r->type == REDIS_REPLY_STRING)
		v = strtoll(r->str, NULL, 10);
	if (r != NULL)
		freeReplyObject(r);
	return v;
}

static void
raw_do(const char *cmd, const char *a, const char *b)
{
	redisReply *r = redisCommand(raw, cmd, a, b);

	if (r != NULL)
		freeReplyObject(r);
}

static const char *
key(uint32_t event, enum store_key_kind kind)
{
	static char buf[4][32];
	static unsigned next;
	char *k = buf[next++ % 4];

	store_key(k, 32, event, kind);
	return k;
}

/* Runs redis-benchmark with the seed's EVALSHA; returns its requests/s, or -1. */
static double
run_redis_benchmark(const char *sha, unsigned n, unsigned pipeline)
{
	char port[16], nreq[16], pipe_s[16];
	char cmd[512];
	int fd[2];

	snprintf(port, sizeof(port), "%u", srv.port);
	snprintf(nreq, sizeof(nreq), "%u", n);
	snprintf(pipe_s, sizeof(pipe_s), "%u", pipeline);
	if (pipe(fd) != 0)
		return -1;
	pid_t pid = fork();

	if (pid == 0) {
		/* -r: users are random 12-digit numbers, so (nearly) every call reserves. */
		const char *argv[] = {"redis-benchmark", "-h", "127.0.0.1", "-p", port, "-n", nreq,
			"-P", pipe_s, "-r", "1000000000", "--csv", "EVALSHA", sha, "2",
			key(1, RS_KEY_STOCK), SEED_BUYERS, "__rand_int__", NULL};

		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fd[1]);
	char out[4096];
	size_t len = 0;
	ssize_t got;

	while (len + 1 < sizeof(out) && (got = read(fd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)got;
	out[len] = '\0';
	close(fd[0]);
	waitpid(pid, NULL, 0);
	/* The CSV line of the test: "EVALSHA ...","<rps>",... */
	snprintf(cmd, sizeof(cmd), "\"EVALSHA %s", sha);
	const char *line = strstr(out, cmd);
	const char *field = line != NULL ? strstr(line, "\",\"") : NULL;

	return field != NULL ? strtod(field + 3, NULL) : -1;
}

/*
 * Decides total reservations of a fresh event with the given stock through store_reserve(): calls
 * of `depth` pipelined batches of `per` reservations, each user new. Returns decisions/s;
 * *wrong counts the verdicts that were not `want`.
 */
static double
run_rs_reserve(struct store *rs, uint32_t ev, int64_t stock, uint8_t want, unsigned per,
	unsigned depth, unsigned total, unsigned *wrong)
{
	struct wire_reserve *res = calloc((size_t)per * depth, sizeof(*res));
	uint8_t *v = calloc((size_t)per * depth, 1);
	struct store_batch b[16];
	uint64_t user = 1, rid = 1;
	unsigned done = 0;

	*wrong = 0;
	store_purge_event(rs, ev);
	store_preheat(rs, ev, stock);
	double t0 = now_s();

	while (done < total) {
		for (unsigned d = 0; d < depth; d++) {
			for (unsigned i = 0; i < per; i++) {
				struct wire_reserve *r = &res[d * per + i];

				r->reservation_id = rid++;
				r->user = user++;
				r->admitted_ms = UINT64_C(1767225600000) + done;
				r->event = ev;
			}
			b[d] = (struct store_batch){.event = ev,
				.n = per,
				.res = res + d * per,
				.verdicts = v + d * per};
		}
		if (store_reserve(rs, b, depth) != 0) {
			*wrong += per * depth;
			break;
		}
		for (unsigned i = 0; i < per * depth; i++)
			*wrong += v[i] != want;
		done += per * depth;
	}
	double dt = now_s() - t0;

	free(res);
	free(v);
	return done / dt;
}

int
main(int argc, char **argv)
{
	const char *doc = argc > 1 ? argv[1] : "../shared/seed-flash-sale.md";
	bool quick = getenv("FG_BENCH_QUICK") != NULL && strcmp(getenv("FG_BENCH_QUICK"), "0") != 0;
	/* The same number of decisions on both sides: the sets and hashes grow alike. */
	unsigned n_seed = quick ? 32768 : 524288, n_ours = n_seed;
	struct store_conn_config c = {.host = "127.0.0.1"};
	char err[256], sha[41] = "";
	const char *from;

	log_set_level(LOG_LEVEL_WARN);
	if (!tap_ok(redis_server_start(&srv, true, false) == 0, "redis-server starts"))
		return tap_done();
	c.port = srv.port;
	struct store *rs = store_open(&c, err, sizeof(err));

	if (!tap_ok(rs != NULL, "store_open over TCP %s", rs ? "" : err))
		return tap_done();
	raw = redisConnectUnix(srv.sock);

	/* (a) the seed. */
	const char *seed = redis_seed_script(doc, &from);
	redisReply *r = redisCommand(raw, "SCRIPT LOAD %s", seed);

	if (r != NULL && r->type == REDIS_REPLY_STRING)
		snprintf(sha, sizeof(sha), "%s", r->str);
	if (r != NULL)
		freeReplyObject(r);
	tap_diag("the seed script comes from %s", from);
	double seed_rps[2];
	const unsigned pipelines[2] = {1, 32};

	for (unsigned p = 0; p < 2; p++) {
		raw_do("DEL %s %s", key(1, RS_KEY_STOCK), SEED_BUYERS);
		raw_do("SET %s %s", key(1, RS_KEY_STOCK), "1000000000000");
		seed_rps[p] = run_redis_benchmark(sha, n_seed, pipelines[p]);
		long long buyers = raw_int("SCARD %s", SEED_BUYERS);

		/* -r draws users at random: a few repeat and are answered duplicate. */
		tap_ok(seed_rps[p] > 0 && buyers > (long long)n_seed * 9 / 10 &&
				buyers + raw_int("GET %s", key(1, RS_KEY_STOCK)) == HUGE_STOCK,
			"seed via redis-benchmark -P %u: %u calls, %lld buyers, stock consistent",
			pipelines[p], n_seed, buyers);
		tap_diag("seed one-user script, redis-benchmark -c 50 -P %-2u %10.0f decisions/s",
			pipelines[p], seed_rps[p]);
	}

	/* (b) reserve.lua, batched and pipelined. */
	static const struct {
		unsigned per, depth;
	} shapes[] = {{64, 4}, {256, 4}, {1024, 1}, {1024, 4}, {2048, 2}};
	double best = 0;
	unsigned best_i = 0;

	for (unsigned s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		unsigned wrong;
		uint32_t ev = 2;
		double rps = run_rs_reserve(rs, ev, HUGE_STOCK, WIRE_V_RESERVED, shapes[s].per,
			shapes[s].depth, n_ours, &wrong);
		long long buyers = raw_int("HLEN %s", key(ev, RS_KEY_RESULT));
		long long outbox = raw_int("XLEN %s", key(ev, RS_KEY_OUTBOX));
		redisReply *cnt =
			redisCommand(raw, "EVAL %s 1 %s", count_outbox_lua, key(ev, RS_KEY_OUTBOX));
		long long in_outbox =
			cnt != NULL && cnt->type == REDIS_REPLY_INTEGER ? cnt->integer : -1;

		if (cnt != NULL)
			freeReplyObject(cnt);
		tap_ok(wrong == 0 && buyers >= n_ours && in_outbox == buyers,
			"store_reserve, batches of %u x %u pipelined: every decision reserved, "
			"reservations in the outbox (%lld entries) == buyers == %lld",
			shapes[s].per, shapes[s].depth, outbox, buyers);
		tap_diag("reserve.lua via store_reserve, batch %4u x %u pipelined %10.0f decisions/s "
			 "(%.1fx the seed at -P 32)",
			shapes[s].per, shapes[s].depth, rps, rps / seed_rps[1]);
		if (rps > best) {
			best = rps;
			best_i = s;
		}
	}
	tap_diag("best: batch %u x %u, %.0f decisions/s = %.1fx the seed unpipelined, %.1fx the "
		 "seed at -P 32 (target >= 2x)",
		shapes[best_i].per, shapes[best_i].depth, best, best / seed_rps[0],
		best / seed_rps[1]);

	/* After the stock ran out, which in a sale is most of the traffic: no writes at all. */
	unsigned wrong;

	raw_do("DEL %s %s", key(1, RS_KEY_STOCK), SEED_BUYERS);
	raw_do("SET %s %s", key(1, RS_KEY_STOCK), "0");
	double seed_sold = run_redis_benchmark(sha, n_seed, 32);

	tap_ok(seed_sold > 0 && raw_int("SCARD %s", SEED_BUYERS) == 0,
		"sold out: the seed via redis-benchmark -P 32 reserved nothing");
	double ours_sold = run_rs_reserve(rs, 3, 0, WIRE_V_SOLD_OUT, shapes[best_i].per,
		shapes[best_i].depth, n_ours, &wrong);

	tap_ok(wrong == 0 && raw_int("HLEN %s", key(3, RS_KEY_RESULT)) == 0 &&
			raw_int("XLEN %s", key(3, RS_KEY_OUTBOX)) == 0,
		"sold out: store_reserve answered sold out to all, wrote nothing");
	tap_diag("sold out: seed -P 32 %.0f decisions/s, reserve.lua batch %u x %u %.0f "
		 "decisions/s (%.1fx)",
		seed_sold, shapes[best_i].per, shapes[best_i].depth, ours_sold,
		ours_sold / seed_sold);
	redisFree(raw);
	store_close(rs);
	redis_server_stop(&srv);
	return tap_done();
}
