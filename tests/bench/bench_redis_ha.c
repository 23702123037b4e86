/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Redis with replicas (docs/ha.md) in one run, against a primary, two replicas and three
 * redis-sentinel on 127.0.0.1 (tests/lib/redis_ha.h: appendonly yes, appendfsync always on
 * every node, min-replicas-to-write 1, Sentinel's down-after-milliseconds 1000):
 *
 *   (a) decisions per second with [redis] wait_replicas 1 against wait_replicas 0, same
 *       nodes, same batches (reserve.lua, batches of 64 and 512 reservations, 1 and 4 events
 *       per round as the decider sends them), in two ways: one WAIT after each round on the
 *       deciding connection (store_reserve(), the draws' way), and the WAIT pipelined as the
 *       decider does it (store_reserve_pipelined(): the WAIT on the store's second connection
 *       while the next round is decided, a round counted only once its WAIT answered, at most
 *       4 unanswered); the three alternated in rounds so that the host's load falls on all
 *       alike (16 rounds of 400 ms), the best round of each kept, and all rounds together
 *       (the load's ups and downs fall on the three alike); prints each rate, the ratios
 *       (target: >= 0.7) and the host's load average;
 *   (b) the time from the primary's loss (SIGKILL) to the first decision after it, the store
 *       following Sentinel (target: < 5 s).
 *
 * The TAP checks assert only that every answer was right, never a time. FG_BENCH_QUICK=1
 * runs a short pass.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "store/store_conn.h"
#include "store/store_event.h"
#include "store/store_reserve.h"
#include "store/store_wait.h"
#include "tests/lib/redis_ha.h"
#include "tests/tap.h"

#define EVENTS	   4
#define BATCH_MAX  512
#define HUGE_STOCK 1000000000000LL

static struct redis_ha ha;
static uint64_t next_user = 1;
static uint64_t retried; /* answered retry: not counted as decisions */

static struct store *
open_store(unsigned wait_replicas)
{
	char err[512];
	struct store_conn_config c = {
		.sentinels = ha.sentinels,
		.master_name = RHA_MASTER,
		.wait_replicas = wait_replicas,
		.wait_timeout_ms = 1000,
		.command_timeout_ms = 3000,
		.backoff_min_ms = 20,
		.backoff_max_ms = 200,
		.check_settings = true,
	};
	struct store *rs = store_open(&c, err, sizeof(err));

	if (rs == NULL)
		tap_diag("store_open: %s", err);
	return rs;
}

/* How run() decides: without WAIT, with WAIT after each round, or with the WAIT pipelined. */
enum mode { M_NONE, M_WAIT, M_PIPE, M_MAX };

/* The decider's bound on rounds decided and not yet published (controlplane/decider.c). */
#define PIPE_DEPTH 4

/* Counts round n_ev x size, whose WAIT answered rc, as decisions (else answered retry). */
static void
count_round(int rc, uint64_t n, uint64_t *done)
{
	if (rc == 0)
		*done += n;
	else
		retried += n;
}

/*
 * Decides pipelines of n_ev batches of size reservations for ms milliseconds. M_PIPE decides
 * as the decider does: store_reserve_pipelined(), a round counted only once its WAIT
 * answered, at most PIPE_DEPTH rounds unanswered (the rest waited for within the time).
 * Returns the decisions per second; *bad counts verdicts that are not RESERVED.
 */
static double
run(struct store *rs, enum mode m, unsigned n_ev, unsigned size, unsigned ms, uint64_t *bad,
	uint64_t *sum_done, uint64_t *sum_ms)
{
	static struct wire_reserve res[EVENTS][BATCH_MAX];
	static uint8_t v[EVENTS][BATCH_MAX];
	struct store_batch b[EVENTS];
	uint64_t t0 = now_mono_ms(), t, done = 0, round = (uint64_t)n_ev * size;
	uint64_t owed[PIPE_DEPTH]; /* decided reservations of each round whose WAIT is owed */
	unsigned head = 0, n_owed = 0;

	do {
		bool sent = false;
		uint64_t decided = 0;

		for (unsigned e = 0; e < n_ev; e++) {
			for (unsigned i = 0; i < size; i++) {
				res[e][i] = (struct wire_reserve){.event = e + 1,
					.user = next_user,
					.reservation_id = next_user};
				next_user++;
			}
			b[e] = (struct store_batch){
				.event = e + 1, .n = size, .res = res[e], .verdicts = v[e]};
		}
		if (m == M_PIPE)
			store_reserve_pipelined(rs, b, n_ev, &sent);
		else
			store_reserve(rs, b, n_ev);
		for (unsigned e = 0; e < n_ev; e++) {
			if (b[e].status != 0) /* retry (a WAIT that timed out): not a decision */
				continue;
			for (unsigned i = 0; i < size; i++)
				*bad += v[e][i] != WIRE_V_RESERVED;
			decided += size;
		}
		retried += round - decided;
		if (sent) {
			owed[(head + n_owed++) % PIPE_DEPTH] = decided;
			/* The decider's turn: what answered is published; a full ring waits. */
			for (bool block = n_owed == PIPE_DEPTH; n_owed > 0; block = false) {
				int rc = store_wait_next(rs, block);

				if (rc == 1)
					break;
				count_round(rc, owed[head], &done);
				head = (head + 1) % PIPE_DEPTH;
				n_owed--;
			}
		} else {
			done += decided;
		}
		t = now_mono_ms();
	} while (t - t0 < ms);
	while (n_owed > 0) { /* the last rounds count once answered, within the time */
		count_round(store_wait_next(rs, true), owed[head], &done);
		head = (head + 1) % PIPE_DEPTH;
		n_owed--;
	}
	t = now_mono_ms();
	*sum_done += done;
	*sum_ms += t - t0;
	return (double)done * 1000.0 / (double)(t - t0);
}

static void
bench_wait(bool quick)
{
	static const struct {
		unsigned n_ev, size;
	} shapes[] = {{1, 64}, {1, 512}, {4, 512}};
	static const char *names[M_MAX] = {"no WAIT", "WAIT per round", "WAIT pipelined"};
	struct store *st[M_MAX] = {open_store(0), open_store(1), open_store(1)};
	unsigned rounds = quick ? 2 : 16, ms = quick ? 250 : 400;
	uint64_t bad = 0;
	double load[3] = {0};

	if (st[M_NONE] == NULL || st[M_WAIT] == NULL || st[M_PIPE] == NULL) {
		tap_ok(0, "stores for the WAIT comparison");
		for (unsigned k = 0; k < M_MAX; k++)
			store_close(st[k]);
		return;
	}
	for (unsigned e = 1; e <= EVENTS; e++)
		store_preheat(st[M_NONE], e, HUGE_STOCK);
	getloadavg(load, 3);
	printf("# the host's load average at the start: %.1f %.1f %.1f (other jobs share it; the "
	       "modes alternate, %u rounds of %u ms each, the best round of each is kept, and all "
	       "together)\n",
		load[0], load[1], load[2], rounds, ms);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		double best[M_MAX] = {0}, all[M_MAX];
		uint64_t done[M_MAX] = {0}, spent[M_MAX] = {0};

		for (unsigned k = 0; k < rounds; k++)
			for (unsigned m = 0; m < M_MAX; m++) {
				double r = run(st[m], m, shapes[s].n_ev, shapes[s].size, ms, &bad,
					&done[m], &spent[m]);

				best[m] = r > best[m] ? r : best[m];
			}
		for (unsigned m = 0; m < M_MAX; m++)
			all[m] = spent[m] ? (double)done[m] * 1000.0 / (double)spent[m] : 0;
		printf("# %u event(s) x batches of %3u, best round: %s %6.0f/s, %s %6.0f/s (ratio "
		       "%.2f), %s %6.0f/s (ratio %.2f; target >= 0.7)\n",
			shapes[s].n_ev, shapes[s].size, names[M_NONE], best[M_NONE], names[M_WAIT],
			best[M_WAIT], best[M_NONE] > 0 ? best[M_WAIT] / best[M_NONE] : 0,
			names[M_PIPE], best[M_PIPE],
			best[M_NONE] > 0 ? best[M_PIPE] / best[M_NONE] : 0);
		printf("#   all %u rounds together: %6.0f/s, %6.0f/s (ratio %.2f), %6.0f/s (ratio "
		       "%.2f)\n",
			rounds, all[M_NONE], all[M_WAIT],
			all[M_NONE] > 0 ? all[M_WAIT] / all[M_NONE] : 0, all[M_PIPE],
			all[M_NONE] > 0 ? all[M_PIPE] / all[M_NONE] : 0);
	}
	getloadavg(load, 3);
	printf("# the host's load average at the end: %.1f %.1f %.1f\n", load[0], load[1], load[2]);
	tap_ok(bad == 0, "every decision of the WAIT comparison reserved (%" PRIu64 " did not)",
		bad);
	printf("# answered retry (not counted): %" PRIu64 "\n", retried);
	for (unsigned k = 0; k < M_MAX; k++)
		store_close(st[k]);
}

static void
bench_failover(void)
{
	struct store *rs = open_store(1);
	struct wire_reserve res[64];
	uint8_t v[64];
	uint64_t killed, first = 0, deadline;
	unsigned before = 0;

	if (rs == NULL) {
		tap_ok(0, "store for the failover");
		return;
	}
	deadline = now_mono_ms() + 60000;
	while (before < 100 && now_mono_ms() < deadline) {
		struct store_batch b = {.event = 1, .n = 64, .res = res, .verdicts = v};

		for (unsigned i = 0; i < 64; i++)
			res[i] = (struct wire_reserve){
				.event = 1, .user = next_user + i, .reservation_id = next_user + i};
		store_reserve(rs, &b, 1);
		if (b.status == 0) {
			next_user += 64;
			before++;
		}
	}
	rha_kill(&ha.redis[0], SIGKILL);
	killed = now_mono_ms();
	while (now_mono_ms() < deadline) {
		struct store_batch b = {.event = 1, .n = 64, .res = res, .verdicts = v};

		for (unsigned i = 0; i < 64; i++)
			res[i] = (struct wire_reserve){
				.event = 1, .user = next_user + i, .reservation_id = next_user + i};
		store_reserve(rs, &b, 1);
		if (b.status == 0 && v[0] == WIRE_V_RESERVED) {
			first = now_mono_ms();
			break;
		}
	}
	tap_ok(first != 0, "decisions resumed after the primary's loss");
	if (first)
		printf("# time from the primary's loss (SIGKILL) to the first decision after it: "
		       "%" PRIu64 " ms (down-after-milliseconds %u; target < 5000 ms)\n",
			first - killed, RHA_DOWN_AFTER_MS);
	store_close(rs);
}

int
main(void)
{
	bool quick = getenv("FG_BENCH_QUICK") != NULL && strcmp(getenv("FG_BENCH_QUICK"), "1") == 0;

	log_set_program("bench_redis_ha");
	log_set_level(LOG_LEVEL_WARN);
	if (system("command -v redis-sentinel >/dev/null") != 0) {
		tap_skip("redis-sentinel is not installed (Debian's redis-sentinel)", "Sentinel");
		return tap_done();
	}
	if (rha_start(&ha, 2) != 0) {
		tap_ok(0, "a primary, two replicas and three Sentinels started");
		rha_stop(&ha);
		return tap_done();
	}
	bench_wait(quick);
	bench_failover();
	rha_stop(&ha);
	return tap_done();
}
