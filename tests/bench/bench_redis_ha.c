/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Redis with replicas (docs/ha.md) in one run, against a primary, two replicas and three
 * redis-sentinel on 127.0.0.1 (tests/lib/redis_ha.h: appendonly yes, appendfsync always on
 * every node, min-replicas-to-write 1, Sentinel's down-after-milliseconds 1000):
 *
 *   (a) decisions per second through store_reserve() with [redis] wait_replicas 1 (one WAIT
 *       after each pipeline of batches) against wait_replicas 0, same nodes, same batches
 *       (reserve.lua, batches of 64 and 512 reservations, 1 and 4 events per pipeline as the
 *       decider sends them), the two alternated in rounds so that the host's load falls on
 *       both alike; prints each rate and the ratio (target: >= 0.7);
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

/*
 * Decides pipelines of n_ev batches of size reservations for ms milliseconds. Returns the
 * decisions per second; *bad counts verdicts that are not RESERVED.
 */
static double
run(struct store *rs, unsigned n_ev, unsigned size, unsigned ms, uint64_t *bad)
{
	static struct wire_reserve res[EVENTS][BATCH_MAX];
	static uint8_t v[EVENTS][BATCH_MAX];
	struct store_batch b[EVENTS];
	uint64_t t0 = now_mono_ms(), t, done = 0;

	do {
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
		store_reserve(rs, b, n_ev);
		for (unsigned e = 0; e < n_ev; e++) {
			if (b[e].status != 0) { /* retry (a WAIT that timed out): not a decision */
				retried += size;
				continue;
			}
			for (unsigned i = 0; i < size; i++)
				*bad += v[e][i] != WIRE_V_RESERVED;
			done += size;
		}
		t = now_mono_ms();
	} while (t - t0 < ms);
	return (double)done * 1000.0 / (double)(t - t0);
}

static void
bench_wait(bool quick)
{
	static const struct {
		unsigned n_ev, size;
	} shapes[] = {{1, 64}, {1, 512}, {4, 512}};
	struct store *none = open_store(0), *one = open_store(1);
	unsigned rounds = quick ? 1 : 3, ms = quick ? 1000 : 3000;
	uint64_t bad = 0;

	if (none == NULL || one == NULL) {
		tap_ok(0, "stores for the WAIT comparison");
		store_close(none);
		store_close(one);
		return;
	}
	for (unsigned e = 1; e <= EVENTS; e++)
		store_preheat(none, e, HUGE_STOCK);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		double r0 = 0, r1 = 0;

		for (unsigned k = 0; k < rounds; k++) {
			r0 += run(none, shapes[s].n_ev, shapes[s].size, ms, &bad);
			r1 += run(one, shapes[s].n_ev, shapes[s].size, ms, &bad);
		}
		r0 /= rounds;
		r1 /= rounds;
		printf("# %u event(s) x batches of %3u: wait_replicas 0: %9.0f decisions/s, "
		       "wait_replicas 1: %9.0f decisions/s, ratio %.2f (target >= 0.7)\n",
			shapes[s].n_ev, shapes[s].size, r0, r1, r0 > 0 ? r1 / r0 : 0);
	}
	tap_ok(bad == 0, "every decision of the WAIT comparison reserved (%" PRIu64 " did not)",
		bad);
	printf("# answered retry (not counted): %" PRIu64 "\n", retried);
	store_close(none);
	store_close(one);
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
