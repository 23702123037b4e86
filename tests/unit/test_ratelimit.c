/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Token buckets: exact arithmetic (burst, refill, caps, Retry-After rounding, rate 0, burst 0,
 * parameter changes, clocks that go back, idle times that would overflow), the same answers
 * from a table entry and a single bucket, replacement in a full table, and many keys.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>

#include "dataplane/ratelimit.h"
#include "tests/lib/eal_rundir.h"
#include "tests/lib/rng.h"
#include "tests/tap.h"

#define T0 UINT64_C(1700000000000) /* a Unix time in ms */

/* At time t under p, exactly n_ok takes succeed; then, if retry != 0, one fails with it. */
struct step {
	uint64_t t;
	struct rl_params p;
	unsigned n_ok;
	uint32_t retry;
};

struct bucket_case {
	const char *name;
	struct step steps[8];
	unsigned n_steps;
};

/* clang-format off */
#define P(r, b) { .rate = (r), .burst = (b) }
/* clang-format on */

static const struct bucket_case cases[] = {
	{"burst, then the rate",
		{{T0, P(2, 5), 5, 1}, {T0 + 499, P(2, 5), 0, 1}, {T0 + 500, P(2, 5), 1, 1},
			{T0 + 1000, P(2, 5), 1, 1}, {T0 + 2500, P(2, 5), 3, 1}},
		5},
	{"refill after an idle hour is capped at the burst",
		{{T0, P(10, 4), 4, 1}, {T0 + 3600000, P(10, 4), 4, 1}}, 2},
	{"burst 0 means one second's worth",
		{{T0, P(3, 0), 3, 1}, {T0 + 333, P(3, 0), 0, 1}, {T0 + 334, P(3, 0), 1, 1}}, 3},
	{"burst 0 and rate 1 means burst 1",
		{{T0, P(1, 0), 1, 1}, {T0 + 999, P(1, 0), 0, 1}, {T0 + 1000, P(1, 0), 1, 1}}, 3},
	{"a clock that goes back refills nothing, Retry-After counts the gap",
		{{T0 + 10000, P(1, 1), 1, 1}, {T0 + 7500, P(1, 1), 0, 4},
			{T0 + 10000, P(1, 1), 0, 1}, {T0 + 10999, P(1, 1), 0, 1},
			{T0 + 11000, P(1, 1), 1, 1}},
		5},
	{"a lowered burst applies at once",
		{{T0, P(1, 10), 3, 0}, {T0, P(1, 2), 2, 1}, {T0 + 1000, P(1, 10), 1, 1}}, 3},
	{"a raised rate applies at once", {{T0, P(1, 10), 10, 1}, {T0 + 100, P(100, 10), 10, 1}},
		2},
	{"the largest rate: full again after 1 ms, no overflow",
		{{T0, P(UINT32_MAX, 5), 5, 1}, {T0 + 1, P(UINT32_MAX, 5), 5, 1},
			{UINT64_MAX - 1, P(UINT32_MAX, 5), 5, 1},
			{UINT64_MAX, P(UINT32_MAX, 5), 5, 1}},
		4},
	{"years of idle time at rate 1: exactly the burst",
		{{T0, P(1, 5), 5, 1}, {T0 + (UINT64_C(1) << 50), P(1, 5), 5, 1},
			{UINT64_MAX, P(1, 5), 5, 1}},
		3},
	{"rate 0 is unlimited", {{T0, P(0, 0), 10000, 0}, {T0, P(0, 5), 10000, 0}}, 2},
	{"the largest table burst", {{T0, P(UINT32_MAX, RL_BURST_MAX), RL_BURST_MAX, 1}}, 1},
	{"time starting at 0", {{0, P(1, 2), 2, 1}, {1000, P(1, 2), 1, 1}}, 2},
};

/* Runs the steps on key `key` of t, or on b when t is NULL; returns the number of bad steps. */
static unsigned
run_case(const struct bucket_case *c, struct rl_table *t, uint64_t key, struct rl_bucket *b)
{
	unsigned bad = 0;

	for (unsigned s = 0; s < c->n_steps; s++) {
		const struct step *st = &c->steps[s];
		unsigned ok = 0;
		uint32_t retry = 0;
		bool failed = false;
		unsigned tries = st->retry != 0 ? st->n_ok + 1 : st->n_ok;

		for (unsigned i = 0; i < tries; i++) {
			bool r = t != NULL ? rl_take(t, key, &st->p, st->t, &retry)
					   : rl_bucket_take(b, &st->p, st->t, &retry);
			if (!r) {
				failed = true;
				break;
			}
			ok++;
		}
		if (ok != st->n_ok || failed != (st->retry != 0) ||
			(failed && retry != st->retry)) {
			tap_diag("%s: step %u: %u taken (want %u), %s, retry %u (want %u)", c->name,
				s, ok, st->n_ok, failed ? "then refused" : "never refused", retry,
				st->retry);
			bad++;
		}
	}
	return bad;
}

static void
test_bucket_cases(void)
{
	for (size_t i = 0; i < RTE_DIM(cases); i++) {
		struct rl_table *t = rl_table_create(10, SOCKET_ID_ANY);
		struct rl_bucket b;

		rl_bucket_init(&b);
		/* Other keys around the one under test must not disturb it. */
		for (uint64_t k = 1; k <= 20; k++)
			rl_take(t, k * 7919, &cases[i].steps[0].p, cases[i].steps[0].t, NULL);
		unsigned bad_t = run_case(&cases[i], t, 42, NULL);
		unsigned bad_b = run_case(&cases[i], NULL, 0, &b);

		tap_eq_int(bad_t, 0, cases[i].name);
		tap_eq_int(bad_b, 0, "single bucket: same answers");
		rl_table_free(t);
	}
}

/*
 * A rate that does not divide 1000: the k-th token after the burst comes at ceil(1000 k / 7)
 * ms. (The burst of 2 keeps the cap from cutting the leftover milli-tokens between tokens.)
 */
static void
test_exact_rate(void)
{
	const struct rl_params p = P(7, 2);
	struct rl_table *t = rl_table_create(4, SOCKET_ID_ANY);
	struct rl_bucket b;
	unsigned bad_t = 0, bad_b = 0, k = 0, n_t = 0, n_b = 0;

	rl_bucket_init(&b);
	for (int i = 0; i < 2; i++) {
		rl_take(t, 1, &p, T0, NULL);
		rl_bucket_take(&b, &p, T0, NULL);
	}
	for (uint64_t ms = 1; ms <= 10000; ms++) {
		bool due = (ms * 7) / 1000 > ((ms - 1) * 7) / 1000;
		bool gt = rl_take(t, 1, &p, T0 + ms, NULL);
		bool gb = rl_bucket_take(&b, &p, T0 + ms, NULL);

		k += due;
		n_t += gt;
		n_b += gb;
		bad_t += gt != due;
		bad_b += gb != due;
	}
	tap_eq_int(bad_t, 0, "7/s: the table admits exactly at ceil(1000 k / 7) ms");
	tap_eq_int(bad_b, 0, "7/s: the single bucket admits exactly at ceil(1000 k / 7) ms");
	tap_eq_int(n_t, 70, "7/s for 10 s admits 70 after the burst (table)");
	tap_eq_int(n_b, 70, "7/s for 10 s admits 70 after the burst (bucket)");
	rl_table_free(t);
}

static void
test_burst_limits(void)
{
	const struct rl_params big = P(1, 100000), zero_burst = P(100000, 0);
	struct rl_table *t = rl_table_create(4, SOCKET_ID_ANY);
	struct rl_bucket b;
	unsigned n = 0;
	char err[200] = "";

	while (n < 200000 && rl_take(t, 9, &big, T0, NULL))
		n++;
	tap_eq_int(n, RL_BURST_MAX, "a table cuts a burst above RL_BURST_MAX to it");
	rl_bucket_init(&b);
	for (n = 0; n < 200000 && rl_bucket_take(&b, &big, T0, NULL);)
		n++;
	tap_eq_int(n, 100000, "a single bucket holds a burst of 100000");
	rl_bucket_init(&b);
	for (n = 0; n < 200000 && rl_bucket_take(&b, &zero_burst, T0, NULL);)
		n++;
	tap_eq_int(n, 100000, "a single bucket with burst 0 holds one second at 100000/s");

	tap_eq_int(rl_params_check(&(struct rl_params)P(1, RL_BURST_MAX), err, sizeof(err)), 0,
		"rl_params_check accepts the largest table burst");
	tap_eq_int(rl_params_check(&big, err, sizeof(err)), -EINVAL,
		"rl_params_check refuses burst 100000");
	tap_ok(strstr(err, "100000") != NULL && strstr(err, "4194") != NULL,
		"its message names the burst and the maximum: %s", err);
	tap_eq_int(rl_params_check(&(struct rl_params)P(0, 100000), err, sizeof(err)), 0,
		"an unlimited rate ignores the burst");
	rl_table_free(t);
}

static void
test_new_keys_and_reset(void)
{
	const struct rl_params p = P(1, 3);
	struct rl_table *t = rl_table_create(10, SOCKET_ID_ANY);
	unsigned bad = 0;

	for (uint64_t k = 0; k < 100; k++) {
		unsigned n = 0;

		while (n < 10 && rl_take(t, k, &p, T0, NULL))
			n++;
		bad += n != 3;
	}
	tap_eq_int(bad, 0, "every new key (0 included) starts with a full bucket of 3");
	tap_eq_int(t->inserts, 100, "100 keys inserted");
	tap_ok(!rl_take(t, 5, &p, T0, NULL), "an exhausted key stays exhausted");
	rl_table_reset(t);
	tap_ok(rl_take(t, 5, &p, T0, NULL), "after rl_table_reset() it is full again");
	tap_eq_int(t->inserts, 1, "rl_table_reset() zeroes the counters");
	rl_table_free(t);
}

/* rl_peek() says what rl_take() would, and changes nothing. */
static void
test_peek(void)
{
	const struct rl_params p = P(2, 2);
	struct rl_table *t = rl_table_create(10, SOCKET_ID_ANY);
	uint32_t retry_peek = 0, retry_take = 0;
	unsigned agree = 0, rounds = 0;

	tap_ok(rl_peek(t, 9, &p, T0, NULL), "peek on an empty table: a full bucket");
	tap_eq_int(t->inserts, 0, "  peeking inserts nothing");
	for (uint64_t ms = 0; ms < 3000; ms += 50) {
		for (int i = 0; i < 3; i++) {
			bool would = rl_peek(t, 9, &p, T0 + ms, &retry_peek);
			bool took = rl_take(t, 9, &p, T0 + ms, &retry_take);

			agree += would == took && (took || retry_peek == retry_take);
			rounds++;
		}
	}
	tap_eq_int(agree, rounds, "peek agrees with the take that follows (and its Retry-After)");
	while (rl_take(t, 9, &p, T0 + 5000, NULL))
		;
	uint64_t inserts = t->inserts;

	for (int i = 0; i < 100; i++)
		rl_peek(t, 9, &p, T0 + 5000, NULL);
	tap_ok(!rl_peek(t, 9, &p, T0 + 5000, NULL) && rl_peek(t, 9, &p, T0 + 5500, NULL) &&
		       t->inserts == inserts,
		"peeks do not take: empty now, a token after 500 ms at 2/s");
	tap_ok(rl_peek(t, 10, &p, T0 + 5000, NULL) && t->inserts == inserts,
		"peek on an unknown key: full, and not inserted");
	rl_table_free(t);
}

/*
 * rl_take_at() with the entry a peek found does what rl_take() does on a twin table: with the
 * peeked key's entry, another key's, none, and one the table's reset emptied since the peek.
 */
static void
test_take_at(void)
{
	const struct rl_params p = P(2, 3);
	struct rl_table *t = rl_table_create(10, SOCKET_ID_ANY);
	struct rl_table *u = rl_table_create(10, SOCKET_ID_ANY);
	unsigned agree = 0, rounds = 0, hinted = 0;

	for (uint64_t ms = 0; ms < 6000; ms += 50) {
		for (unsigned i = 0; i < 8; i++, rounds++) {
			const struct rl_entry *at;
			uint64_t peeked = 9 + i % 2, key = i % 4 == 3 ? 19 - peeked : peeked;
			uint32_t rt = 0, ru = 0;

			rl_peek_at(t, peeked, &p, T0 + ms, NULL, &at);
			hinted += at != NULL && at->key == key;
			if (i == 5 && ms % 1000 == 0) {
				rl_table_reset(t);
				rl_table_reset(u);
			}
			if (i == 6)
				at = NULL;
			bool a = rl_take_at(t, key, at, &p, T0 + ms, &rt);
			bool b = rl_take(u, key, &p, T0 + ms, &ru);

			agree += a == b && (a || rt == ru);
		}
	}
	tap_eq_int(agree, rounds, "rl_take_at() agrees with rl_take() (and its Retry-After)");
	tap_ok(hinted > rounds / 2, "  most takes had the peeked entry (%u of %u)", hinted, rounds);
	tap_eq_int(t->inserts, u->inserts, "  and inserted as often");
	rl_table_free(t);
	rl_table_free(u);
}

/* Takes until refused (at most max); returns how many were taken. */
static unsigned
drain(struct rl_table *t, uint64_t key, const struct rl_params *p, uint64_t now, unsigned max)
{
	unsigned n = 0;

	while (n < max && rl_take(t, key, p, now, NULL))
		n++;
	return n;
}

/* A table of 8 entries: every key's two candidate sets are the same two, so 8 keys fill it. */
static void
test_replacement(void)
{
	const struct rl_params p = P(1, 5);
	struct rl_table *t = rl_table_create(RL_LOG2_MIN, SOCKET_ID_ANY);
	unsigned bad = 0;

	/* Eight hot keys, key k exhausted at T0 + k. */
	for (uint64_t k = 0; k < 8; k++)
		bad += drain(t, 100 + k, &p, T0 + k, 10) != 5;
	tap_eq_int(bad, 0, "8 keys fit a table of 8 entries");
	tap_eq_int(t->evictions, 0, "no eviction while there is room");

	/* A ninth key while all are hot: the least recently refilled (key 100) goes. */
	tap_ok(rl_take(t, 200, &p, T0 + 100, NULL), "a ninth key is admitted");
	tap_eq_int(t->evictions, 1, "replacing a hot entry counts one eviction");
	bad = 0;
	for (uint64_t k = 1; k < 8; k++)
		bad += drain(t, 100 + k, &p, T0 + 100, 10) != 0;
	tap_eq_int(bad, 0, "the other seven keep their empty buckets");
	unsigned n9 = drain(t, 200, &p, T0 + 100, 10);

	tap_eq_int(n9, 4, "the ninth key has its burst less one");
	tap_eq_int(t->evictions, 1, "no further evictions so far");
	unsigned n0 = drain(t, 100, &p, T0 + 100, 10);

	tap_eq_int(n0, 5, "the evicted key (the least recently used) starts again full");
	tap_eq_int(t->evictions, 2, "and its return evicted another hot entry");
	rl_table_free(t);

	/* Seven exhausted keys and one idle: a new key takes the idle one's place, losslessly. */
	t = rl_table_create(RL_LOG2_MIN, SOCKET_ID_ANY);
	for (uint64_t k = 0; k < 8; k++)
		drain(t, 100 + k, &p, T0, k == 3 ? 1 : 10);
	tap_ok(rl_take(t, 300, &p, T0 + 2000, NULL), "a new key when one entry is idle");
	tap_eq_int(t->evictions, 0, "replacing an idle entry is not an eviction");
	tap_eq_int(t->recycled, 1, "it is counted as recycled");
	bad = 0;
	for (uint64_t k = 0; k < 8; k++)
		if (k != 3)
			bad += drain(t, 100 + k, &p, T0 + 2000, 10) != 2;
	tap_eq_int(bad, 0, "the seven hot keys kept their state exactly (2 tokens after 2 s)");
	tap_eq_int(t->evictions, 0, "still no eviction");
	rl_table_free(t);
}

/* Keys of patterns that a weak hash would pile into a few sets. */
static uint64_t
key_of(unsigned pattern, uint64_t i, uint64_t *rng)
{
	switch (pattern) {
	case 0:
		return i + 1; /* sequential user ids */
	case 1:
		return (uint64_t)(0xc6120000u + (uint32_t)i); /* 198.18.0.0/16, host order */
	case 2:
		return __builtin_bswap32(0xc6120000u + (uint32_t)i); /* the same, network order */
	case 3:
		return i << 32; /* only high bits differ */
	case 4:
		return i << 56 | i << 20; /* very high and middle bits */
	default:
		return rng_splitmix64(rng); /* random */
	}
}

static void
test_many_keys(void)
{
	static const char *const names[] = {"sequential ids", "a /16 in host order",
		"a /16 in network order", "keys differing in bits 32+", "sparse high bits",
		"random keys"};
	const struct rl_params p = P(1, 3);
	const unsigned log2 = 16, n = 1u << 15; /* half full */

	for (unsigned pat = 0; pat < RTE_DIM(names); pat++) {
		struct rl_table *t = rl_table_create(log2, SOCKET_ID_ANY);
		uint64_t rng = 12345;
		unsigned bad = 0;

		t->seed = UINT64_C(0x0123456789abcdef) + pat; /* reproducible */
		for (uint64_t i = 0; i < n; i++)
			rl_take(t, key_of(pat, i, &rng), &p, T0, NULL);
		tap_eq_int(t->evictions, 0, names[pat]);
		rng = 12345;
		for (uint64_t i = 0; i < n; i++)
			bad += drain(t, key_of(pat, i, &rng), &p, T0, 10) != 2;
		tap_eq_int(bad, 0, "... and every one of the 32768 buckets is exact");
		rl_table_free(t);
	}

	/* Every IP of a /24 at a quarter load in a small table: none evicted. */
	struct rl_table *t = rl_table_create(10, SOCKET_ID_ANY);

	t->seed = 7;
	for (uint32_t i = 0; i < 256; i++)
		rl_take(t, 0x0a000000u + i, &p, T0, NULL);
	tap_eq_int(t->evictions, 0, "a whole /24 in a table of 1024 entries: no eviction");
	rl_table_free(t);

	/* Overfull: 4x more hot keys than entries; the table keeps working and counts. */
	t = rl_table_create(8, SOCKET_ID_ANY);
	t->seed = 7;
	for (uint64_t i = 0; i < 1024; i++)
		rl_take(t, i * 2654435761u, &p, T0, NULL);
	tap_eq_int(t->inserts, 1024, "1024 keys into 256 entries: 1024 inserts");
	tap_eq_int(t->evictions, 1024 - 256, "... and exactly 768 evictions");
	rl_table_free(t);
}

static void
test_split(void)
{
	static const struct {
		struct rl_params total;
		unsigned n;
		uint32_t rate[4], burst[4];
	} c[] = {
		{P(10, 20), 3, {4, 3, 3}, {7, 7, 6}},
		{P(1000, 0), 4, {250, 250, 250, 250}, {250, 250, 250, 250}},
		{P(2, 0), 4, {1, 1, 1, 1}, {1, 1, 1, 1}},
		{P(0, 50), 2, {0, 0}, {0, 0}},
		{P(5, 5), 0, {5}, {5}},
	};
	for (size_t i = 0; i < RTE_DIM(c); i++) {
		unsigned bad = 0, n = c[i].n ? c[i].n : 1;

		for (unsigned w = 0; w < n; w++) {
			struct rl_params s = rl_params_split(&c[i].total, c[i].n, w);

			bad += s.rate != c[i].rate[w] || s.burst != c[i].burst[w];
		}
		tap_ok(bad == 0, "rl_params_split(%u/s, burst %u) over %u workers", c[i].total.rate,
			c[i].total.burst, c[i].n);
	}
}

static void
test_create_and_keys(void)
{
	struct rl_table *a = rl_table_create(RL_LOG2_MIN - 1, SOCKET_ID_ANY);
	struct rl_table *b = rl_table_create(RL_LOG2_MAX + 1, SOCKET_ID_ANY);

	tap_ok(a == NULL && b == NULL, "rl_table_create refuses sizes outside %u..%u", RL_LOG2_MIN,
		RL_LOG2_MAX);
	a = rl_table_create(12, SOCKET_ID_ANY);
	b = rl_table_create(12, SOCKET_ID_ANY);
	tap_ok(a != NULL && b != NULL, "two tables of 4096 entries");
	tap_eq_int(rl_table_mem_size(20) - sizeof(struct rl_table), 16u << 20,
		"1M entries take 16 MiB");
	/* The same id from another buffer, other bytes after it: only its len bytes count. */
	char copy[] = "dev-1 and more";

	tap_ok(rl_key_bytes(a, copy, 5) == rl_key_bytes(a, "dev-1", 5),
		"a device id has the same key in one table, wherever its bytes are");
	tap_ok(rl_key_bytes(a, "dev-1", 5) != rl_key_bytes(a, "dev-2", 5) &&
			rl_key_bytes(a, "dev-1", 5) != rl_key_bytes(a, "dev-1x", 6),
		"different device ids have different keys");
	tap_ok(rl_key_bytes(a, "dev-1", 5) != rl_key_bytes(b, "dev-1", 5),
		"device keys differ between tables (keyed)");
	rl_table_free(a);
	rl_table_free(b);
	rl_table_free(NULL);
}

int
main(int argc, char **argv)
{
	char *eal_argv[] = {argv[0], "--no-huge", "-m", "256", "--no-pci", "--no-shconf",
		"--no-telemetry", "--log-level", "lib.*:error", "-l", "0", NULL};

	(void)argc;
	if (rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv) < 0) {
		printf("Bail out! EAL init failed\n");
		return 2;
	}
	test_eal_rundir_cleanup_at_exit();
	test_bucket_cases();
	test_exact_rate();
	test_burst_limits();
	test_new_keys_and_reset();
	test_peek();
	test_take_at();
	test_replacement();
	test_many_keys();
	test_split();
	test_create_and_keys();
	rte_eal_cleanup();
	return tap_done();
}
