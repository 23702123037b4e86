/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The result table: what a poll reads after each kind of update, which updates may not
 * hide an order, eviction of the oldest key when full, no slot reuse before a grace
 * period (one per sealed batch of evictions), keys past a full home bucket (found, their
 * overflow counts taken back when they leave), the summary in front of the index (exactly the
 * bits of the keys there, after any evictions), a reader thread that never sees a torn or
 * foreign result while the writer replaces and evicts entries under it, and one that never
 * misses a key that stayed while others left (both on a CPU of their own where there is one).
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "common/wire.h"
#include "dataplane/result_table.h"
#include "tests/lib/eal_rundir.h"
#include "tests/tap.h"

static struct rte_rcu_qsbr *
qsbr_new(unsigned threads)
{
	size_t sz = rte_rcu_qsbr_get_memsize(threads);
	struct rte_rcu_qsbr *v = rte_zmalloc("qsbr", sz, RTE_CACHE_LINE_SIZE);

	if (v == NULL || rte_rcu_qsbr_init(v, threads) != 0) {
		fprintf(stderr, "qsbr setup failed\n");
		exit(2);
	}
	return v;
}

static struct rt_result
res(uint8_t verdict, uint64_t rid)
{
	struct rt_result r = {.reservation_id = rid, .verdict = verdict};

	if (verdict == WIRE_V_ORDERED || verdict == WIRE_V_PAID) {
		r.order_id = rid * 10;
		r.pay_deadline_ms = 1700000000000 + rid;
	}
	return r;
}

static void
test_basics(void)
{
	struct result_table *t = result_table_create("rt_basic", 1000, SOCKET_ID_ANY, NULL);
	struct rt_result out, in = res(WIRE_V_ORDERED, 77);

	if (!tap_ok(t != NULL, "create a table of 1000"))
		exit(1);
	int rc = result_table_lookup(t, 1, 42, &out);

	/* tap_eq_int() evaluates its arguments twice: calls with effects go through rc. */
	tap_eq_int(rc, -ENOENT, "empty table: not found");
	rc = result_table_put(t, 1, 42, &in);
	tap_eq_int(rc, RT_PUT_NEW, "first result: new");
	tap_ok(result_table_lookup(t, 1, 42, &out) == 0 && out.verdict == WIRE_V_ORDERED &&
			out.reservation_id == 77 && out.order_id == 770 &&
			out.pay_deadline_ms == 1700000000077,
		"lookup returns what was stored");
	tap_eq_int(
		result_table_lookup(t, 2, 42, &out), -ENOENT, "same user, other event: not found");
	tap_eq_int(
		result_table_lookup(t, 1, 43, &out), -ENOENT, "same event, other user: not found");
	tap_eq_int(result_table_count(t), 1, "one key");
	result_table_free(t);
}

static void
test_precedence(void)
{
	static const struct {
		uint8_t old_v;
		uint64_t old_rid;
		uint8_t new_v;
		uint64_t new_rid;
		int want_put;
		uint8_t want_v;
		const char *name;
	} cases[] = {
		{WIRE_V_RESERVED, 1, WIRE_V_ORDERED, 1, RT_PUT_REPLACED, WIRE_V_ORDERED,
			"reserved -> ordered"},
		{WIRE_V_ORDERED, 1, WIRE_V_PAID, 1, RT_PUT_REPLACED, WIRE_V_PAID,
			"ordered -> paid"},
		{WIRE_V_PAID, 1, WIRE_V_CANCELLED, 1, RT_PUT_REPLACED, WIRE_V_CANCELLED,
			"paid -> cancelled"},
		{WIRE_V_ORDERED, 1, WIRE_V_RESERVED, 1, RT_PUT_KEPT, WIRE_V_ORDERED,
			"ordered is not set back to reserved (late duplicate message)"},
		{WIRE_V_ORDERED, 1, WIRE_V_DUPLICATE, 2, RT_PUT_KEPT, WIRE_V_ORDERED,
			"a second attempt's duplicate does not hide the order"},
		{WIRE_V_RESERVED, 1, WIRE_V_SOLD_OUT, 2, RT_PUT_KEPT, WIRE_V_RESERVED,
			"a second attempt's sold out does not hide the reservation"},
		{WIRE_V_PAID, 1, WIRE_V_RETRY, 2, RT_PUT_KEPT, WIRE_V_PAID,
			"a second attempt's retry does not hide the payment"},
		{WIRE_V_RETRY, 1, WIRE_V_RESERVED, 2, RT_PUT_REPLACED, WIRE_V_RESERVED,
			"retry -> reserved on the next attempt"},
		{WIRE_V_SOLD_OUT, 1, WIRE_V_RETRY, 2, RT_PUT_REPLACED, WIRE_V_RETRY,
			"sold out -> retry (both attempts' verdicts)"},
		{WIRE_V_EXPIRED, 1, WIRE_V_RESERVED, 2, RT_PUT_REPLACED, WIRE_V_RESERVED,
			"expired -> a new reservation after restock"},
		{WIRE_V_RESERVED, 3, WIRE_V_SOLD_OUT, 3, RT_PUT_REPLACED, WIRE_V_SOLD_OUT,
			"reserved -> sold out: the same reservation released before its order"},
		{WIRE_V_ORDERED, 3, WIRE_V_SOLD_OUT, 3, RT_PUT_KEPT, WIRE_V_ORDERED,
			"an order is never shown sold out"},
	};
	struct result_table *t = result_table_create("rt_prec", 64, SOCKET_ID_ANY, NULL);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_result a = res(cases[i].old_v, cases[i].old_rid);
		struct rt_result b = res(cases[i].new_v, cases[i].new_rid), out = {0};
		uint64_t user = 1000 + i;
		int p1 = result_table_put(t, 7, user, &a);
		int p2 = result_table_put(t, 7, user, &b);
		int lk = result_table_lookup(t, 7, user, &out);

		tap_ok(p1 == RT_PUT_NEW && p2 == cases[i].want_put && lk == 0 &&
				out.verdict == cases[i].want_v,
			"%s (put %d, verdict %s)", cases[i].name, p2,
			wire_verdict_name(out.verdict));
	}
	tap_ok(t->ctr.kept == 5 && t->ctr.replaced == 7, "counters: 5 kept, 7 replaced");
	result_table_free(t);
}

/* What an eviction run left: results stored as new, the oldest gone, the newest there. */
struct evict_seen {
	unsigned news, old_gone, new_there;
};

/*
 * Puts users 1..n into t (event 3) and reads them all back, the n - keep oldest expected gone.
 * hint: result_table_prefetch_evictions() before each put, for 0 to 129 keys, and a seal every
 * 16 puts (as the bridge does).
 */
static struct evict_seen
evict_run(struct result_table *t, unsigned n, unsigned keep, bool hint)
{
	struct evict_seen e = {0, 0, 0};
	struct rt_result out;

	if (hint)
		result_table_prefetch_evictions(t, 5); /* empty */
	for (uint64_t u = 1; u <= n; u++) {
		struct rt_result r = res(WIRE_V_RESERVED, u);

		if (hint)
			result_table_prefetch_evictions(t, (unsigned)(u * 7 % 130));
		e.news += result_table_put(t, 3, u, &r) == RT_PUT_NEW;
		if (hint && u % 16 == 0)
			result_table_seal(t);
	}
	for (uint64_t u = 1; u <= n; u++) {
		int rc = result_table_lookup(t, 3, u, &out);

		if (u <= n - keep)
			e.old_gone += rc == -ENOENT;
		else
			e.new_there += rc == 0 && out.reservation_id == u;
	}
	return e;
}

static void
test_eviction(void)
{
	/* A qsbr with no thread registered: every grace period is over at once. */
	struct rte_rcu_qsbr *v = qsbr_new(1);
	struct result_table *t = result_table_create("rt_evict", 1000, SOCKET_ID_ANY, v);
	struct evict_seen e = evict_run(t, 1500, 1000, false);

	tap_eq_int(e.news, 1500, "1500 results into a table of 1000: all stored");
	tap_eq_int(result_table_count(t), 1000, "the table holds 1000");
	tap_eq_int(t->ctr.evicted, 500, "500 evicted");
	tap_eq_int(e.old_gone, 500, "the 500 oldest are gone");
	tap_eq_int(e.new_there, 1000, "the 1000 newest are there");
	tap_eq_int(t->ctr.dropped, 0, "nothing dropped");
	result_table_free(t);
	rte_free(v);
}

/*
 * result_table_prefetch_evictions() before every put, for 0 to 129 keys (beyond the table's 100
 * and its FIFO's wrap, 3.5 times around): the same keys stored and evicted as without it.
 */
static void
test_prefetch_evictions(void)
{
	struct rte_rcu_qsbr *v = qsbr_new(1);
	struct result_table *t = result_table_create("rt_pf_evict", 100, SOCKET_ID_ANY, v);
	struct evict_seen e = evict_run(t, 350, 100, true);

	tap_ok(e.news == 350 && result_table_count(t) == 100 && t->ctr.evicted == 250 &&
			e.old_gone == 250 && e.new_there == 100 && t->ctr.dropped == 0,
		"evictions prefetched before each put: the 100 newest of 350 kept, the 250 oldest "
		"evicted (%u new, %u gone, %u there, %" PRIu64 " evicted)",
		e.news, e.old_gone, e.new_there, t->ctr.evicted);
	result_table_free(t);
	rte_free(v);
}

static void
test_grace_period(void)
{
	/* This thread registers as a reader and reports nothing: no grace period ends. */
	struct rte_rcu_qsbr *v = qsbr_new(1);
	struct result_table *t = result_table_create("rt_grace", 100, SOCKET_ID_ANY, v);
	unsigned ok = 0;

	rte_rcu_qsbr_thread_register(v, 0);
	rte_rcu_qsbr_thread_online(v, 0);
	for (uint64_t u = 1; u <= 164; u++) { /* 100 slots + 64 in their grace period */
		struct rt_result r = res(WIRE_V_RESERVED, u);

		ok += result_table_put(t, 4, u, &r) == RT_PUT_NEW;
	}
	struct rt_result r = res(WIRE_V_RESERVED, 165);

	tap_eq_int(ok, 164, "164 results stored, 64 evictions waiting for a grace period");
	int rc = result_table_put(t, 4, 165, &r);

	tap_eq_int(rc, -ENOSPC,
		"no slot is reused while a reader has not reported: the next one is dropped");
	tap_eq_int(t->ctr.reclaimed, 0, "nothing reclaimed before the grace period");
	rte_rcu_qsbr_quiescent(v, 0);
	rc = result_table_put(t, 4, 165, &r);
	tap_eq_int(rc, RT_PUT_NEW, "after the reader reported, the slots come back");
	tap_eq_int(t->ctr.reclaimed, 64, "64 reclaimed");
	rte_rcu_qsbr_thread_offline(v, 0);
	rte_rcu_qsbr_thread_unregister(v, 0);
	result_table_free(t);
	rte_free(v);
}

/*
 * A batch's evictions share one grace period, started by result_table_seal() and not before:
 * a report the reader made before the seal frees nothing, one after it frees the batch.
 */
static void
test_seal(void)
{
	struct rte_rcu_qsbr *v = qsbr_new(1);
	struct result_table *t = result_table_create("rt_seal", 100, SOCKET_ID_ANY, v);

	rte_rcu_qsbr_thread_register(v, 0);
	rte_rcu_qsbr_thread_online(v, 0);
	for (uint64_t u = 1; u <= 110; u++) { /* 10 evictions */
		struct rt_result r = res(WIRE_V_RESERVED, u);

		result_table_put(t, 5, u, &r);
	}
	uint64_t before = rte_rcu_qsbr_start(v);

	rte_rcu_qsbr_quiescent(v, 0);
	result_table_reclaim(t);
	tap_ok(t->ctr.evicted == 10 && t->ctr.reclaimed == 0,
		"10 evictions wait for their seal, whatever the reader reported before it");
	result_table_seal(t);
	result_table_seal(t); /* nothing new: no second grace period */
	result_table_reclaim(t);
	tap_eq_int(t->ctr.reclaimed, 0, "sealed: nothing back before the reader reports again");
	tap_ok(rte_rcu_qsbr_start(v) == before + 2, "one grace period for the 10 (and one here)");
	rte_rcu_qsbr_quiescent(v, 0);
	result_table_reclaim(t);
	tap_eq_int(t->ctr.reclaimed, 10, "after the report, all 10 come back");
	rte_rcu_qsbr_thread_offline(v, 0);
	rte_rcu_qsbr_thread_unregister(v, 0);
	result_table_free(t);
	rte_free(v);
}

#define HAMMER_USERS 1024

struct hammer {
	struct result_table *t;
	struct rte_rcu_qsbr *v;
	volatile bool started, stop;
	uint64_t lookups, hits, bad, busy;
};

/* Every stored result satisfies these, so a torn or foreign read shows. */
static struct rt_result
hammer_result(uint32_t event, uint64_t user, uint64_t rid)
{
	struct rt_result r = {
		.reservation_id = rid,
		.order_id = rid ^ (user * UINT64_C(0x9e3779b97f4a7c15)),
		.pay_deadline_ms = rid + user + event,
		.verdict = (uint8_t)(1 + rid % 8),
	};

	return r;
}

/*
 * Moves the calling thread (a reader) off the EAL's main lcore, whose CPU a thread it created
 * inherits: on another CPU, where there is one, it reads while the writer writes rather than in
 * turns with it.
 */
static void
reader_off_main_cpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	for (long c = 0; c < n && c < CPU_SETSIZE; c++)
		if (c != (long)rte_lcore_to_cpu_id((int)rte_get_main_lcore()) || n == 1)
			CPU_SET(c, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
		tap_diag("reader: the CPU set was not changed, it shares the writer's CPU");
}

/*
 * Whether a put that found no slot (the reader has not reported since) may try again, after a
 * short sleep: until 5 s after t0 (rte_get_timer_cycles()), as a reader on a busy host's other
 * CPU may wait that long for its turn there.
 */
static bool
may_wait(uint64_t t0)
{
	if (rte_get_timer_cycles() - t0 >= 5 * rte_get_timer_hz())
		return false;
	usleep(20);
	return true;
}

static void *
hammer_reader(void *arg)
{
	struct hammer *h = arg;
	uint64_t x = 88172645463325252ull;

	reader_off_main_cpu();
	rte_rcu_qsbr_thread_register(h->v, 0);
	rte_rcu_qsbr_thread_online(h->v, 0);
	h->started = true;
	while (!h->stop) {
		for (int i = 0; i < 16; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			uint64_t user = 1 + x % HAMMER_USERS;
			uint32_t event = 1 + (uint32_t)(x >> 40) % 2;
			struct rt_result out;
			int rc = result_table_lookup(h->t, event, user, &out);

			h->lookups++;
			if (rc == -EBUSY) {
				h->busy++;
			} else if (rc == 0) {
				struct rt_result want =
					hammer_result(event, user, out.reservation_id);

				h->hits++;
				h->bad += want.order_id != out.order_id ||
					  want.pay_deadline_ms != out.pay_deadline_ms ||
					  want.verdict != out.verdict;
			}
		}
		rte_rcu_qsbr_quiescent(h->v, 0);
		/* On a busy machine both threads may share a CPU: let the writer run. */
		if (h->lookups % 1024 == 0)
			sched_yield();
	}
	rte_rcu_qsbr_thread_offline(h->v, 0);
	rte_rcu_qsbr_thread_unregister(h->v, 0);
	return NULL;
}

static void
test_hammer(void)
{
	struct hammer h = {.v = qsbr_new(1)};
	pthread_t th;
	uint64_t x = 2463534242ull, puts = 200000, stored = 0;
	uint64_t calls[4] = {0}; /* every call's answer: RT_PUT_NEW, _REPLACED, _KEPT, -ENOSPC */

	/* 2048 keys into 256: constant eviction, and constant in-place replacement. */
	h.t = result_table_create("rt_hammer", 256, SOCKET_ID_ANY, h.v);
	if (h.t == NULL || pthread_create(&th, NULL, hammer_reader, &h) != 0) {
		tap_ok(0, "hammer setup");
		return;
	}
	while (!h.started)
		rte_pause();
	for (uint64_t i = 0; i < puts; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t user = 1 + x % HAMMER_USERS;
		uint32_t event = 1 + (uint32_t)(x >> 40) % 2;
		struct rt_result r = hammer_result(event, user, (x >> 8) | 1);

		int rc = result_table_put(h.t, event, user, &r);

		calls[rc < 0 ? 3 : rc]++;
		/* No slot until the reader reports: a real worker reports every loop, this thread
		 * may be descheduled (on a busy host, for a while), so wait for it as the bridge
		 * would, up to 5 s. */
		for (uint64_t t0 = rte_get_timer_cycles(); rc == -ENOSPC && may_wait(t0);) {
			rc = result_table_put(h.t, event, user, &r);
			calls[rc < 0 ? 3 : rc]++;
		}
		stored += rc >= 0;
		if (i % 64 == 63) /* the end of a RESULT message, as the bridge seals it */
			result_table_seal(h.t);
	}
	h.stop = true;
	pthread_join(th, NULL);
	tap_diag("%llu lookups, %llu hits, %llu stored, %llu evicted, %llu reclaimed, %llu dropped",
		(unsigned long long)h.lookups, (unsigned long long)h.hits,
		(unsigned long long)stored, (unsigned long long)h.t->ctr.evicted,
		(unsigned long long)h.t->ctr.reclaimed, (unsigned long long)h.t->ctr.dropped);
	tap_ok(h.lookups > 0, "the reader ran while the writer wrote");
	tap_eq_int(h.bad, 0, "no torn or foreign result was ever read");
	tap_ok(h.t->ctr.evicted > 0 && h.t->ctr.replaced > 0,
		"the writer both evicted and replaced under the reader");
	/* Each call's answer is counted by the table: nothing stored or refused goes unseen. */
	tap_ok(h.t->ctr.inserted == calls[RT_PUT_NEW] &&
			h.t->ctr.replaced == calls[RT_PUT_REPLACED] &&
			h.t->ctr.kept == calls[RT_PUT_KEPT] && h.t->ctr.dropped == calls[3],
		"every put is counted as what it answered: inserted %llu/%llu, replaced %llu/%llu, "
		"kept %llu/%llu, dropped %llu/%llu",
		(unsigned long long)h.t->ctr.inserted, (unsigned long long)calls[RT_PUT_NEW],
		(unsigned long long)h.t->ctr.replaced, (unsigned long long)calls[RT_PUT_REPLACED],
		(unsigned long long)h.t->ctr.kept, (unsigned long long)calls[RT_PUT_KEPT],
		(unsigned long long)h.t->ctr.dropped, (unsigned long long)calls[3]);
	tap_ok(h.t->ctr.reclaimed > 0, "slots came back as the reader reported");
	result_table_free(h.t);
	rte_free(h.v);
}

/*
 * Whether t's summary is exactly what keys users[0..n) of event, and nothing else, make it: each
 * one's bit in its home's summary, no other bit anywhere.
 */
static bool
summary_exact(const struct result_table *t, uint32_t event, const uint64_t *users, unsigned n)
{
	rt_summary_t *want = calloc(t->bucket_mask + 1, sizeof(*want));
	bool same = want != NULL;

	for (unsigned i = 0; same && i < n; i++) {
		uint64_t h = result_table_hash(t, event, users[i]);

		want[h & t->bucket_mask] |= rt_summary_bits(h);
	}
	for (uint32_t b = 0; same && b <= t->bucket_mask; b++)
		same = t->summary[b] == want[b];
	free(want);
	return same;
}

/* Up to n users whose key (event, user) has home bucket b in t, from user 1 upwards. */
static unsigned
users_of_bucket(const struct result_table *t, uint32_t event, uint32_t b, uint64_t *out, unsigned n)
{
	unsigned k = 0;

	for (uint64_t u = 1; k < n && u < 10000000; u++)
		if ((result_table_hash(t, event, u) & t->bucket_mask) == b)
			out[k++] = u;
	return k;
}

/* The sum of every bucket's overflow count. */
static uint64_t
overflow_sum(const struct result_table *t)
{
	uint64_t sum = 0;

	for (uint32_t b = 0; b <= t->bucket_mask; b++)
		sum += t->buckets[b].overflow;
	return sum;
}

/*
 * Keys whose home bucket is full go on to the next ones: each is found (with the hash given,
 * as a prefetching caller does, or computed), an absent key of that bucket is not, and once
 * they are evicted no overflow count is left behind (lookups stop at the home bucket again).
 */
static void
test_full_bucket(void)
{
	struct result_table *t = result_table_create("rt_full", 16, SOCKET_ID_ANY, NULL);
	uint64_t crowd[17], other[16];

	if (!tap_ok(t != NULL && t->bucket_mask == 7, "a table of 16 keys has 8 buckets of 7"))
		return;
	unsigned nc = users_of_bucket(t, 3, 2, crowd, 17);
	unsigned no = users_of_bucket(t, 3, 6, other, 16);

	if (!tap_ok(nc == 17 && no == 16, "users found for two home buckets"))
		return;
	unsigned stored = 0, found = 0, found_h = 0;

	for (unsigned i = 0; i < 16; i++) {
		struct rt_result r = res(WIRE_V_RESERVED, 100 + i);

		stored += result_table_put(t, 3, crowd[i], &r) == RT_PUT_NEW;
	}
	for (unsigned i = 0; i < 16; i++) {
		struct rt_result out;
		uint64_t h = result_table_hash(t, 3, crowd[i]);

		found += result_table_lookup(t, 3, crowd[i], &out) == 0 &&
			 out.reservation_id == 100 + i;
		found_h += result_table_lookup_h(t, h, 3, crowd[i], &out) == 0 &&
			   out.reservation_id == 100 + i;
	}
	tap_eq_int(stored, 16, "16 keys of one home bucket stored");
	tap_ok(found == 16 && found_h == 16, "all 16 found, 9 of them past their full home bucket");
	tap_ok(summary_exact(t, 3, crowd, 16), "the home's summary holds the bits of all 16");
	tap_ok(t->buckets[2].overflow == 9 && t->buckets[3].overflow == 2 && overflow_sum(t) == 11,
		"overflow counts: 9 went past bucket 2, 2 past bucket 3 too");

	struct rt_result out;
	int rc = result_table_lookup(t, 3, crowd[16], &out);

	tap_eq_int(rc, -ENOENT, "a 17th user of that bucket: not found, after looking further");
	for (unsigned i = 0; i < 16; i++) {
		struct rt_result r = res(WIRE_V_RESERVED, 200 + i);

		result_table_put(t, 3, other[i], &r);
	}
	unsigned gone = 0, there = 0;

	for (unsigned i = 0; i < 16; i++) {
		gone += result_table_lookup(t, 3, crowd[i], &out) == -ENOENT;
		there += result_table_lookup(t, 3, other[i], &out) == 0 &&
			 out.reservation_id == 200 + i;
	}
	tap_ok(gone == 16 && there == 16 && t->ctr.evicted == 16,
		"16 others evict the crowd: the crowd gone, the others there");
	tap_ok(summary_exact(t, 3, other, 16),
		"the crowd's home summary cleared as it left, though 9 of it lay past the home");
	tap_ok(t->buckets[2].overflow == 0 && t->buckets[3].overflow == 0 &&
			t->buckets[6].overflow == 9 && t->buckets[7].overflow == 2 &&
			overflow_sum(t) == 11,
		"the crowd's overflow counts went with it; the others' wrap past the last bucket");

	/* The crowd back, evicting the others one by one: the walk that keeps a leaving key's
	 * bits for the others homed at bucket 6 goes past the last bucket to bucket 0. */
	unsigned exact = 0, still = 0;

	for (unsigned i = 0; i < 16; i++) {
		struct rt_result r = res(WIRE_V_RESERVED, 300 + i);
		uint64_t now[16];

		result_table_put(t, 3, crowd[i], &r);
		for (unsigned k = 0; k < 16; k++)
			now[k] = k < 15 - i ? other[i + 1 + k] : crowd[k - (15 - i)];
		exact += summary_exact(t, 3, now, 16);
		for (unsigned k = i + 1; k < 16; k++)
			still += result_table_lookup(t, 3, other[k], &out) == 0;
	}
	tap_ok(exact == 16 && still == 120 && t->ctr.evicted == 32,
		"the others leave one by one: after each the summary is exact (%u of 16), the "
		"others still there are found (%u of 120), though the walk wraps",
		exact, still);
	result_table_free(t);
}

/*
 * The summary in front of the index: after ten times the capacity went through a table (every
 * key but the newest evicted), it holds exactly the bits of the keys there (the evicted keys'
 * bits cleared, a bit shared with a key still there kept), every key there "may be held", and
 * most absent keys are answered from it alone (at 2 keys homed per bucket, ~5 % are not).
 */
static void
test_summary(void)
{
	enum { CAP = 4096, ROUNDS = 10 };
	struct rte_rcu_qsbr *v = qsbr_new(1);
	struct result_table *t = result_table_create("rt_summary", CAP, SOCKET_ID_ANY, v);
	static uint64_t users[CAP];

	if (!tap_ok(t != NULL && t->bucket_mask == 2047, "a table of 4096 keys has 2048 buckets"))
		return;
	unsigned held = 0, absent_maybe = 0, absent_found = 0;

	for (uint64_t u = 1; u <= (uint64_t)CAP * ROUNDS; u++) {
		struct rt_result r = res(WIRE_V_RESERVED, u);

		result_table_put(t, 9, u * 7919, &r);
		if (u % 64 == 0)
			result_table_seal(t);
	}
	for (unsigned i = 0; i < CAP; i++) {
		users[i] = ((uint64_t)CAP * (ROUNDS - 1) + 1 + i) * 7919;
		held += result_table_may_hold(t, result_table_hash(t, 9, users[i]));
	}
	tap_ok(t->ctr.evicted == (uint64_t)CAP * (ROUNDS - 1) && result_table_count(t) == CAP,
		"40960 keys through a table of 4096: 36864 evicted");
	tap_eq_int(held, CAP, "every key there may be held by its summary");
	tap_ok(summary_exact(t, 9, users, CAP),
		"the summary holds exactly the bits of the keys there: the evicted keys' bits gone");
	for (uint64_t u = 1; u <= 100000; u++) {
		struct rt_result out;
		uint64_t h = result_table_hash(t, 9, u * 7919 + 1); /* never stored */

		absent_maybe += result_table_may_hold(t, h);
		absent_found += result_table_lookup_h(t, h, 9, u * 7919 + 1, &out) != -ENOENT;
	}
	tap_ok(absent_maybe > 2000 && absent_maybe < 10000 && absent_found == 0,
		"of 100000 absent keys %u (2-10 %% expected) read the index, none is found",
		absent_maybe);
	result_table_free(t);
	rte_free(v);
}

/*
 * A reader that must find every key the writer published and has not begun to evict, while
 * new keys go in one by one, each evicting the oldest (whose summary bits leave with it, those
 * shared with a key still homed there kept). Users 1, 2, ... in order: user v can leave only in
 * a put of user v + capacity or later. The writer says which user it put last (done, after the
 * put) and which one it is putting (began, before its first store); a reader that looked v up
 * and then still sees began below v + capacity had v in the table the whole time.
 */
enum { MISS_CAP = 256, MISS_EVENT = 5 };

struct miss_run {
	struct result_table *t;
	struct rte_rcu_qsbr *v;
	volatile bool started, stop;
	uint64_t began, done; /* atomics: the user being put, the last user stored */
	uint64_t lookups, checked, missed, last_miss;
};

static void *
miss_reader(void *arg)
{
	struct miss_run *m = arg;
	uint64_t x = 88172645463325252ull;

	reader_off_main_cpu();
	rte_rcu_qsbr_thread_register(m->v, 0);
	rte_rcu_qsbr_thread_online(m->v, 0);
	m->started = true;
	while (!m->stop) {
		for (int i = 0; i < 16; i++) {
			uint64_t done = __atomic_load_n(&m->done, __ATOMIC_ACQUIRE);

			if (done == 0)
				break;
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* One of the newest MISS_CAP users (the oldest of them about to go). */
			uint64_t lo = done > MISS_CAP ? done - MISS_CAP + 1 : 1;
			uint64_t user = lo + x % (done - lo + 1);
			struct rt_result out;
			int rc = result_table_lookup(m->t, MISS_EVENT, user, &out);

			/* The lookup's loads before the read of began: a put whose stores it saw
			 * shows there. */
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			m->lookups++;
			if (__atomic_load_n(&m->began, __ATOMIC_RELAXED) >= user + MISS_CAP)
				continue; /* it may have left meanwhile */
			m->checked++;
			if (rc != 0 || out.reservation_id != user) {
				m->missed++;
				m->last_miss = user;
			}
		}
		rte_rcu_qsbr_quiescent(m->v, 0);
		if (m->lookups % 1024 == 0)
			sched_yield();
	}
	rte_rcu_qsbr_thread_offline(m->v, 0);
	rte_rcu_qsbr_thread_unregister(m->v, 0);
	return NULL;
}

static void
test_no_false_miss(void)
{
	struct miss_run m = {.v = qsbr_new(1)};
	pthread_t th;
	uint64_t users = 500000, stored = 0;

	/* 2 keys homed per bucket, as at full capacity: a leaving key often shares a bit. */
	m.t = result_table_create("rt_miss", MISS_CAP, SOCKET_ID_ANY, m.v);
	if (m.t == NULL || pthread_create(&th, NULL, miss_reader, &m) != 0) {
		tap_ok(0, "false-miss run setup");
		return;
	}
	while (!m.started)
		rte_pause();
	for (uint64_t u = 1; u <= users; u++) {
		struct rt_result r = res(WIRE_V_RESERVED, u);
		int rc;

		__atomic_store_n(&m.began, u, __ATOMIC_RELAXED);
		/* began before any store of the put (a reader that sees one sees began too). */
		__atomic_thread_fence(__ATOMIC_RELEASE);
		rc = result_table_put(m.t, MISS_EVENT, u, &r);
		/* No slot until the reader reports (see test_hammer()). */
		for (uint64_t t0 = rte_get_timer_cycles(); rc == -ENOSPC && may_wait(t0);)
			rc = result_table_put(m.t, MISS_EVENT, u, &r);
		if (rc != RT_PUT_NEW)
			break;
		stored++;
		__atomic_store_n(&m.done, u, __ATOMIC_RELEASE);
		if (u % 64 == 0)
			result_table_seal(m.t);
	}
	m.stop = true;
	pthread_join(th, NULL);
	tap_diag("%llu lookups, %llu of keys that stayed, %llu evicted, %llu reclaimed",
		(unsigned long long)m.lookups, (unsigned long long)m.checked,
		(unsigned long long)m.t->ctr.evicted, (unsigned long long)m.t->ctr.reclaimed);
	tap_ok(stored == users, "%llu users stored one by one, each evicting the oldest",
		(unsigned long long)stored);
	tap_ok(m.checked > 10000, "the reader looked up %llu keys that stayed while it looked",
		(unsigned long long)m.checked);
	tap_ok(m.missed == 0, "none was missed while others left: %llu missed, the last user %llu",
		(unsigned long long)m.missed, (unsigned long long)m.last_miss);
	result_table_free(m.t);
	rte_free(m.v);
}

int
main(int argc, char **argv)
{
	char *eal_argv[] = {argc > 0 ? argv[0] : "test_result_table", "--no-huge", "-m", "256",
		"--no-pci", "--no-shconf", "--no-telemetry", "--log-level", "lib.*:error", "-l",
		"0", NULL};

	if (rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 2;
	}
	test_eal_rundir_cleanup_at_exit();
	test_basics();
	test_precedence();
	test_eviction();
	test_prefetch_evictions();
	test_grace_period();
	test_seal();
	test_full_bucket();
	test_summary();
	test_hammer();
	test_no_false_miss();
	rte_eal_cleanup();
	return tap_done();
}
