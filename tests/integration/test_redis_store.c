/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store (store/) and lua/{reserve,release}.lua against a real redis-server started in
 * a temporary directory (tests/lib/redis_server.h) and stopped at the end:
 *
 *   - exact stock: N users, stock S -> min(N, S) reserved, in order, for several N and S
 *     (S = 0, stock key missing, batches of several sizes); outbox reservations == buyers
 *     (result hash fields) == reserved, one outbox entry per batch (per 1,024 reservations),
 *     every reservation in the outbox and every result matches its reservation;
 *   - duplicates inside one batch and across batches, sold out, buyers when sold out;
 *   - reserve.lua == the seed's script, run one user at a time, on 1,000 random states with a
 *     batch of one and on 300 random batches of up to 8 users;
 *   - release exactly once, result queries, preheat, event state, several events in one
 *     pipeline, a malformed batch, an error reply, a flushed script cache;
 *   - the order writer's reading: entries of one and of many reservations (old and new
 *     format), malformed reservations and deleted entries, read, claimed and acknowledged;
 *     reconciliation's buyer check and repair;
 *   - two processes deciding one event at once: no oversell, no user reserved twice;
 *   - the sale window key: reserve.lua refuses (closed / not started, nothing written) outside
 *     [starts, ends) by the given clock, when held and when closed; a close racing a stream
 *     of reserves from another connection: every batch decided before it or refused after;
 *   - the draw (store/store_draw.h): enter.lua records each user once with its first
 *     reservation, refuses once frozen; the freeze counts the entrants and is done at once
 *     without any; reserve.lua refuses first-come batches while a draw is not done and runs a
 *     draw batch only at its turn (the cursor), advancing it, done at n; HSCAN reads every
 *     entrant; a query finds an entrant's reservation; preheat refuses after a pre-queue;
 *   - outages: Redis killed and restarted (persistence off: no crash, -ENOTCONN while down,
 *     one log line each way; append-only with fsync always, killed mid-stream: every
 *     acknowledged reservation survives, every outbox reservation has a buyer, stock + buyers ==
 *     preheated stock), and Redis stopped (SIGSTOP) past the command timeout.
 *
 *   test_redis_store [SEED_DOC]   (SEED_DOC: the seed document with the reference script)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "common/log.h"
#include "store/store_conn.h"
#include "store/store_draw.h"
#include "store/store_event.h"
#include "store/store_keys.h"
#include "store/store_outbox.h"
#include "store/store_reconcile.h"
#include "store/store_release.h"
#include "store/store_reserve.h"
#include "store/store_result.h"
#include "tests/lib/redis_server.h"
#include "tests/tap.h"

static struct redis_server srv;
static redisContext *raw; /* a plain connection for setting up and inspecting state */
static struct store *rs;
static uint64_t next_rid = 1000;
static uint64_t test_started_ms; /* Unix ms at start: no outbox entry is older */

/* --- Plain Redis access for the checks ------------------------------------------------------ */

static redisContext *
raw_connect(const struct redis_server *s)
{
	struct timeval tv = {.tv_sec = 5};
	redisContext *c = redisConnectUnixWithTimeout(s->sock, tv);

	if (c == NULL || c->err) {
		fprintf(stderr, "# cannot connect to %s\n", s->sock);
		exit(1);
	}
	redisSetTimeout(c, tv);
	return c;
}

static redisReply *__attribute__((format(printf, 2, 3)))
raw_cmd(redisContext *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	redisReply *r = redisvCommand(c, fmt, ap);

	va_end(ap);
	if (r == NULL) {
		fprintf(stderr, "# raw command failed: %s\n", c->errstr);
		exit(1);
	}
	return r;
}

/* An integer reply, or the integer a string reply holds; -999999 for nil or anything else. */
static long long __attribute__((format(printf, 2, 3)))
raw_int(redisContext *c, const char *fmt, ...)
{
	va_list ap;
	long long v = -999999;

	va_start(ap, fmt);
	redisReply *r = redisvCommand(c, fmt, ap);

	va_end(ap);
	if (r == NULL) {
		fprintf(stderr, "# raw command failed: %s\n", c->errstr);
		exit(1);
	}
	if (r->type == REDIS_REPLY_INTEGER)
		v = r->integer;
	else if (r->type == REDIS_REPLY_STRING)
		v = strtoll(r->str, NULL, 10);
	freeReplyObject(r);
	return v;
}

static const char *
key(uint32_t event, enum store_key_kind kind)
{
	static char buf[8][32];
	static unsigned next;
	char *k = buf[next++ % 8];

	store_key(k, 32, event, kind);
	return k;
}

static void
raw_preheat(uint32_t event, long long stock)
{
	freeReplyObject(raw_cmd(raw, "SET %s %lld", key(event, RS_KEY_STOCK), stock));
}

/* The key of the seed script's buyers set (the seed keeps buyers in a set of its own). */
static const char *
seed_buyers_key(uint32_t event)
{
	static char buf[4][40];
	static unsigned next;
	char *k = buf[next++ % 4];

	snprintf(k, 40, "fg:{%" PRIu32 "}:seed-buyers", event);
	return k;
}

/* 1 when user is a buyer of event: it has a field in the result hash. */
static long long
is_buyer(redisContext *c, uint32_t event, uint64_t user)
{
	return raw_int(c, "HEXISTS %s %" PRIu64, key(event, RS_KEY_RESULT), user);
}

/* Buyers of event: fields of its result hash. */
static long long
n_buyers(redisContext *c, uint32_t event)
{
	return raw_int(c, "HLEN %s", key(event, RS_KEY_RESULT));
}

/*
 * The reservations of event's outbox in order (u, r of every entry, each entry holding the two
 * fields once per reservation) into out[0..cap) as {user, rid, entry ms}; returns how many, or
 * -1 when an entry is not made of whole (u, r) groups.
 */
static long
outbox_reservations(redisContext *c, uint32_t event, uint64_t (*out)[3], size_t cap)
{
	redisReply *r = raw_cmd(c, "XRANGE %s - +", key(event, RS_KEY_OUTBOX));
	long n = 0;

	for (size_t e = 0; r->type == REDIS_REPLY_ARRAY && e < r->elements && n >= 0; e++) {
		const redisReply *f = r->element[e]->element[1];
		uint64_t ms = strtoull(r->element[e]->element[0]->str, NULL, 10);

		if (f->elements == 0 || f->elements % 4 != 0) {
			n = -1;
			break;
		}
		for (size_t i = 0; i < f->elements && n >= 0; i += 4) {
			if (strcmp(f->element[i]->str, "u") != 0 ||
				strcmp(f->element[i + 2]->str, "r") != 0) {
				n = -1;
				break;
			}
			if ((size_t)n < cap) {
				out[n][0] = strtoull(f->element[i + 1]->str, NULL, 10);
				out[n][1] = strtoull(f->element[i + 3]->str, NULL, 10);
				out[n][2] = ms;
			}
			n++;
		}
	}
	freeReplyObject(r);
	return n;
}

/* --- Deciding reservations ------------------------------------------------------------------ */

static struct wire_reserve
mkres(uint32_t event, uint64_t user)
{
	struct wire_reserve r = {.reservation_id = next_rid++,
		.user = user,
		.admitted_ms = UINT64_C(1767225600000) + user,
		.event = event};

	return r;
}

/* Decides users[0..n) of event in batches of at most per_batch, one store_reserve() call each.
 * Fills verdicts; returns the stock left after the last batch, or -1000 on an error. */
static int64_t
decide(uint32_t event, const uint64_t *users, unsigned n, unsigned per_batch, uint8_t *verdicts,
	struct wire_reserve *res_out)
{
	static struct wire_reserve res[RS_BATCH_MAX];
	int64_t left = -1000;

	for (unsigned done = 0; done < n;) {
		unsigned k = n - done < per_batch ? n - done : per_batch;
		struct store_batch b = {
			.event = event, .n = k, .res = res, .verdicts = verdicts + done};

		for (unsigned i = 0; i < k; i++) {
			res[i] = mkres(event, users[done + i]);
			if (res_out != NULL)
				res_out[done + i] = res[i];
		}
		if (store_reserve(rs, &b, 1) != 0)
			return -1000;
		left = b.stock_left;
		done += k;
	}
	return left;
}

/* --- Exact stock -------------------------------------------------------------------------- */

struct stock_case {
	unsigned users;
	long long stock; /* -1: the stock key is missing */
	unsigned per_batch;
};

static void
check_outbox_matches(uint32_t event, const struct wire_reserve *res, const uint8_t *v, unsigned n,
	const char *name)
{
	static uint64_t got[4096][3];
	long have = outbox_reservations(raw, event, got, 4096);
	unsigned e = 0, bad = 0;

	for (unsigned i = 0; i < n && have >= 0; i++) {
		if (v[i] != WIRE_V_RESERVED)
			continue;
		/* The entry's id is the moment Redis decided: not before the test began. */
		if (e >= (unsigned)have || got[e][0] != res[i].user ||
			got[e][1] != res[i].reservation_id || got[e][2] < test_started_ms) {
			if (bad++ == 0)
				tap_diag("outbox reservation %u: got u=%" PRIu64 " r=%" PRIu64
					 " ms=%" PRIu64 ", want u=%" PRIu64 " r=%" PRIu64
					 " ms>=%" PRIu64,
					e, e < (unsigned)have ? got[e][0] : 0,
					e < (unsigned)have ? got[e][1] : 0,
					e < (unsigned)have ? got[e][2] : 0, res[i].user,
					res[i].reservation_id, test_started_ms);
		}
		e++;
		/* The result hash holds the reservation id of each reserved user. */
		if (raw_int(raw, "HGET %s %" PRIu64, key(event, RS_KEY_RESULT), res[i].user) !=
			(long long)res[i].reservation_id)
			bad++;
	}
	tap_ok(bad == 0 && have >= 0 && e == (unsigned)have,
		"%s: one reservation (u, r) in the outbox and one result per reservation, in "
		"order",
		name);
}

static void
test_exact_stock(void)
{
	static const struct stock_case cases[] = {
		{10, 3, 10},
		{3, 10, 3},
		{100, 100, 100},
		{100, 99, 7},
		{50, 0, 50},
		{20, -1, 20}, /* not preheated: the seed treats a missing stock as 0 */
		{1, 1, 1},
		{2048, 1000, 2048},
		{3000, 2500, 256},
		{500, 10000, 64},
	};
	static uint64_t users[3000];
	static uint8_t v[3000];
	static struct wire_reserve res[3000];

	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct stock_case *t = &cases[c];
		uint32_t ev = 100 + c;
		long long s = t->stock < 0 ? 0 : t->stock;
		long long want = (long long)t->users < s ? (long long)t->users : s;
		char name[96];
		unsigned reserved = 0, sold = 0, in_order = 1;

		snprintf(name, sizeof(name), "%u users, stock %lld%s, batches of %u", t->users, s,
			t->stock < 0 ? " (key missing)" : "", t->per_batch);
		store_purge_event(rs, ev);
		if (t->stock >= 0)
			raw_preheat(ev, t->stock);
		for (unsigned i = 0; i < t->users; i++)
			users[i] = 7000000 + (uint64_t)i * 13;
		int64_t left = decide(ev, users, t->users, t->per_batch, v, res);

		for (unsigned i = 0; i < t->users; i++) {
			reserved += v[i] == WIRE_V_RESERVED;
			sold += v[i] == WIRE_V_SOLD_OUT;
			/* In order: the first min(N, S) users get the stock. */
			if ((v[i] == WIRE_V_RESERVED) != (i < (unsigned)want))
				in_order = 0;
		}
		tap_ok(reserved == want && sold == t->users - want && in_order,
			"%s: %u reserved, %u sold out, the first ones win (want %lld reserved)",
			name, reserved, sold, want);
		tap_eq_int(left, s - want, "  stock left answered");
		tap_eq_int(raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)),
			t->stock < 0 ? -999999 : s - want,
			"  stock key after (a missing key stays missing)");
		unsigned batches = 0, entries = 0;

		/* One entry per batch that reserved anyone, per 1,024 reservations of it. */
		for (unsigned d = 0; d < t->users; d += t->per_batch) {
			unsigned got = 0;

			for (unsigned i = d; i < t->users && i < d + t->per_batch; i++)
				got += v[i] == WIRE_V_RESERVED;
			batches += got > 0;
			entries += (got + RS_OUTBOX_ENTRY_RESERVATIONS - 1) /
				   RS_OUTBOX_ENTRY_RESERVATIONS;
		}
		tap_eq_int(n_buyers(raw, ev), want, "  buyers (fields of the result hash)");
		long long xlen = raw_int(raw, "XLEN %s", key(ev, RS_KEY_OUTBOX));

		tap_ok(xlen == entries,
			"  outbox entries: %lld, one per batch that reserved (%u batches), per "
			"1,024 reservations (want %u)",
			xlen, batches, entries);
		check_outbox_matches(ev, res, v, t->users, name);
	}
}

/* --- Duplicates and sold out ---------------------------------------------------------------- */

struct dup_case {
	const char *name;
	long long stock;
	unsigned n;
	uint64_t users[8];
	const char *want; /* one letter per user: R reserved, D duplicate, S sold out */
	long long left;
};

static char
verdict_letter(uint8_t v)
{
	return v == WIRE_V_RESERVED    ? 'R'
	       : v == WIRE_V_DUPLICATE ? 'D'
	       : v == WIRE_V_SOLD_OUT  ? 'S'
				       : '?';
}

static void
test_duplicates(void)
{
	/* Consecutive cases on one event continue from the state the previous left (ev same). */
	static const struct {
		uint32_t ev;
		struct dup_case c;
	} cases[] = {
		{200, {"a batch with repeats", 10, 6, {1, 2, 1, 3, 2, 1}, "RRDRDD", 7}},
		{200, {"the next batch: one earlier buyer, one new", 0, 2, {3, 4}, "DR", 6}},
		{201, {"stock 1: the repeat of the winner is a duplicate", 1, 3, {5, 5, 6}, "RDS",
			      0}},
		{201, {"sold out: a buyer is still told duplicate", 0, 3, {6, 5, 7}, "SDS", 0}},
		{202, {"repeats after the stock ran out", 2, 7, {1, 2, 3, 1, 3, 2, 4}, "RRSDSDS",
			      0}},
		{203, {"the same user eight times", 5, 8, {9, 9, 9, 9, 9, 9, 9, 9}, "RDDDDDDD", 4}},
	};
	uint8_t v[8];

	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct dup_case *t = &cases[c].c;
		uint32_t ev = cases[c].ev;
		char got[9] = "";

		if (c == 0 || cases[c - 1].ev != ev) {
			store_purge_event(rs, ev);
			raw_preheat(ev, t->stock);
		}
		int64_t left = decide(ev, t->users, t->n, t->n, v, NULL);

		for (unsigned i = 0; i < t->n; i++)
			got[i] = verdict_letter(v[i]);
		tap_ok(strcmp(got, t->want) == 0 && left == t->left,
			"%s: %s, stock left %lld (want %s, %lld)", t->name, got, (long long)left,
			t->want, t->left);
	}
	tap_eq_int(n_buyers(raw, 200), 4, "duplicates add no buyer (4 users)");
	tap_eq_int(outbox_reservations(raw, 200, NULL, 0), 4,
		"duplicates add nothing to the outbox (4 reservations)");
}

/* --- The seed's script, side by side ------------------------------------------------------ */

static char seed_sha[41];

/* Random state in both events: stock in -2..5 or missing, some of users 1..8 buyers. */
static void
random_state(uint32_t ev_a, uint32_t ev_b, unsigned *seed)
{
	int stock = (int)(rand_r(seed) % 9) - 3; /* -3: missing */
	unsigned buyers = (unsigned)rand_r(seed) & 0xff;

	for (uint32_t ev = ev_a; ev != 0; ev = ev == ev_a ? ev_b : 0) {
		redisAppendCommand(raw, "DEL %s %s %s %s", key(ev, RS_KEY_STOCK),
			seed_buyers_key(ev), key(ev, RS_KEY_OUTBOX), key(ev, RS_KEY_RESULT));
		if (stock != -3)
			redisAppendCommand(raw, "SET %s %d", key(ev, RS_KEY_STOCK), stock);
		/* Ours keeps buyers as result fields, the seed in a set. */
		for (unsigned u = 0; u < 8; u++)
			if (buyers & (1u << u)) {
				if (ev == ev_a)
					redisAppendCommand(raw, "HSET %s %u %u",
						key(ev, RS_KEY_RESULT), u + 1, 90 + u);
				else
					redisAppendCommand(
						raw, "SADD %s %u", seed_buyers_key(ev), u + 1);
			}
		unsigned replies = 1 + (stock != -3) + (unsigned)__builtin_popcount(buyers);

		for (unsigned i = 0; i < replies; i++) {
			void *r;

			if (redisGetReply(raw, &r) != REDIS_OK)
				exit(1);
			freeReplyObject(r);
		}
	}
}

/* The buyers among users 1..8 as a bit mask: of ours (result fields) or of the seed (set). */
static unsigned
buyer_mask(uint32_t ev, bool seed)
{
	unsigned m = 0;

	for (unsigned u = 0; u < 8; u++)
		if ((seed ? raw_int(raw, "SISMEMBER %s %u", seed_buyers_key(ev), u + 1)
			  : is_buyer(raw, ev, u + 1)) == 1)
			m |= 1u << u;
	return m;
}

/* Runs the seed on ev for users one at a time; letters into out. */
static void
seed_run(uint32_t ev, const uint64_t *users, unsigned n, char *out)
{
	for (unsigned i = 0; i < n; i++) {
		long long v = raw_int(raw, "EVALSHA %s 2 %s %s %" PRIu64, seed_sha,
			key(ev, RS_KEY_STOCK), seed_buyers_key(ev), users[i]);

		out[i] = v == 1 ? 'R' : v == -1 ? 'D' : v == 0 ? 'S' : '?';
	}
	out[n] = '\0';
}

static void
test_seed_equivalence(const char *doc)
{
	const char *from;
	const char *seed = redis_seed_script(doc, &from);
	redisReply *r = raw_cmd(raw, "SCRIPT LOAD %s", seed);
	unsigned state = 12345;
	const uint32_t ev_a = 300, ev_b = 301;
	unsigned seen[3] = {0}, mismatch = 0;

	tap_diag("the seed script comes from %s", from);
	tap_ok(r->type == REDIS_REPLY_STRING, "the seed script loads");
	if (r->type == REDIS_REPLY_STRING)
		snprintf(seed_sha, sizeof(seed_sha), "%s", r->str);
	freeReplyObject(r);

	for (unsigned round = 0; round < 1300; round++) {
		/* 1,000 batches of one user, then 300 batches of 2..8 users with repeats. */
		unsigned n = round < 1000 ? 1 : 2 + (unsigned)rand_r(&state) % 7;
		uint64_t users[8];
		uint8_t v[8];
		char ours[9], theirs[9];

		random_state(ev_a, ev_b, &state);
		for (unsigned i = 0; i < n; i++)
			users[i] = 1 + (unsigned)rand_r(&state) % 8;
		int64_t left = decide(ev_a, users, n, n, v, NULL);

		for (unsigned i = 0; i < n; i++) {
			ours[i] = verdict_letter(v[i]);
			seen[v[i] == WIRE_V_RESERVED ? 0 : v[i] == WIRE_V_DUPLICATE ? 1 : 2]++;
		}
		ours[n] = '\0';
		seed_run(ev_b, users, n, theirs);
		long long stock_a = raw_int(raw, "GET %s", key(ev_a, RS_KEY_STOCK));
		long long stock_b = raw_int(raw, "GET %s", key(ev_b, RS_KEY_STOCK));
		/* The seed leaves a missing key missing and so do we; we answer 0 left. */
		bool same = strcmp(ours, theirs) == 0 && stock_a == stock_b &&
			    buyer_mask(ev_a, false) == buyer_mask(ev_b, true) &&
			    left == (stock_b == -999999 ? 0 : stock_b);

		if (!same && mismatch++ < 3)
			tap_diag("round %u: ours %s stock %lld (answered %lld), seed %s stock %lld",
				round, ours, stock_a, (long long)left, theirs, stock_b);
	}
	tap_ok(mismatch == 0,
		"reserve.lua == the seed run one user at a time: 1,000 random states with one "
		"user, "
		"300 with 2..8 (verdicts, stock, buyers); %u differ",
		mismatch);
	tap_ok(seen[0] > 100 && seen[1] > 100 && seen[2] > 100,
		"  the random states exercised every verdict (%u reserved, %u duplicate, %u sold "
		"out)",
		seen[0], seen[1], seen[2]);
}

/* --- The sale window ------------------------------------------------------------------------ */

struct racer {
	struct store *rs;
	uint32_t event;
	atomic_bool closed_seen;
	unsigned reserved, refused, reserved_after_refused, other, batches;
};

/* Reserves batches of 5 new users until 20 batches after the first refusal. */
static void *
racer_run(void *arg)
{
	struct racer *r = arg;
	struct wire_reserve res[5];
	uint8_t v[5];
	uint64_t user = 1;
	unsigned after = 0;

	while (after < 20 && r->batches < 200000) {
		struct store_batch b = {.event = r->event, .n = 5, .res = res, .verdicts = v};

		for (unsigned i = 0; i < 5; i++)
			res[i] = (struct wire_reserve){.reservation_id = 500000 + user + i,
				.user = user + i,
				.event = r->event};
		user += 5;
		if (store_reserve(r->rs, &b, 1) != 0) {
			r->other += 5;
			continue;
		}
		r->batches++;
		for (unsigned i = 0; i < 5; i++) {
			if (v[i] == WIRE_V_RESERVED) {
				r->reserved++;
				r->reserved_after_refused += atomic_load(&r->closed_seen);
			} else if (v[i] == WIRE_V_CLOSED) {
				r->refused++;
				atomic_store(&r->closed_seen, true);
			} else {
				r->other++;
			}
		}
		after += atomic_load(&r->closed_seen);
	}
	return NULL;
}

static void
test_sale_window(void)
{
	const uint32_t ev = 700;
	const uint64_t t0 = UINT64_C(1800000000000);
	uint64_t users[4] = {1, 2, 3, 4};
	uint8_t v[4];
	struct wire_reserve res[4];
	struct {
		const char *name;
		enum store_sale_state st;
		uint64_t now;
		uint8_t want;
	} cases[] = {
		{"before starts_at", RS_SALE_OPEN, t0 - 1, WIRE_V_NOT_STARTED},
		{"at ends_at", RS_SALE_OPEN, t0 + 1000, WIRE_V_CLOSED},
		{"long after ends_at", RS_SALE_OPEN, t0 + 86400000, WIRE_V_CLOSED},
		{"held (preheated, not opened)", RS_SALE_HELD, t0 + 1, WIRE_V_NOT_STARTED},
		{"closed by the operator", RS_SALE_CLOSED, t0 + 1, WIRE_V_CLOSED},
	};

	raw_preheat(ev, 10);
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct store_batch b = {
			.event = ev, .n = 4, .res = res, .verdicts = v, .now_ms = cases[c].now};
		bool all = true;

		tap_ok(store_sale_window(rs, ev, cases[c].st, t0, t0 + 1000) == 0,
			"window %s: store_sale_window", cases[c].name);
		for (unsigned i = 0; i < 4; i++)
			res[i] = mkres(ev, users[i]);
		int rc = store_reserve(rs, &b, 1);

		for (unsigned i = 0; i < 4; i++)
			all = all && v[i] == cases[c].want;
		tap_ok(rc == 0 && all && b.stock_left == 10 &&
				raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)) == 10 &&
				n_buyers(raw, ev) == 0 &&
				raw_int(raw, "XLEN %s", key(ev, RS_KEY_OUTBOX)) == 0,
			"  %s: all four answered %s, stock, buyers and outbox unchanged",
			cases[c].name, wire_verdict_name(cases[c].want));
	}
	{
		struct store_batch b = {
			.event = ev, .n = 4, .res = res, .verdicts = v, .now_ms = t0 + 999};

		store_sale_window(rs, ev, RS_SALE_OPEN, t0, t0 + 1000);
		for (unsigned i = 0; i < 4; i++)
			res[i] = mkres(ev, users[i]);
		tap_ok(store_reserve(rs, &b, 1) == 0 && v[0] == WIRE_V_RESERVED &&
				v[3] == WIRE_V_RESERVED && b.stock_left == 6 &&
				n_buyers(raw, ev) == 4,
			"inside [starts_at, ends_at) (its last ms): reserved");
		tap_ok(store_sale_window(rs, ev, RS_SALE_OPEN, t0, t0) == -EINVAL &&
				store_sale_window(rs, 0, RS_SALE_CLOSED, 0, 0) == -EINVAL,
			"store_sale_window refuses an empty window and event 0");
		freeReplyObject(raw_cmd(raw, "SET %s bogus", key(ev, RS_KEY_WINDOW)));
		tap_ok(store_reserve(rs, &b, 1) == -EIO && v[0] == WIRE_V_RETRY &&
				n_buyers(raw, ev) == 4,
			"a window key holding something else: an error reply, answered retry, "
			"nothing "
			"written");
	}
	store_purge_event(rs, ev);
	tap_ok(raw_int(raw, "EXISTS %s", key(ev, RS_KEY_WINDOW)) == 0,
		"store_purge_event deletes the window key too");

	/* A close racing a stream of reserves from another connection. */
	const uint32_t ev2 = 701;
	struct store_conn_config c = {.unix_path = srv.sock};
	char err[256];
	struct racer r = {.event = ev2};
	pthread_t th;

	raw_preheat(ev2, 1000000);
	store_sale_window(rs, ev2, RS_SALE_OPEN, 1, UINT64_C(4000000000000));
	r.rs = store_open(&c, err, sizeof(err));
	if (!tap_ok(r.rs != NULL, "a second connection for the racing reserves"))
		return;
	pthread_create(&th, NULL, racer_run, &r);
	while (n_buyers(raw, ev2) < 500)
		usleep(1000);
	int rc = store_sale_window(rs, ev2, RS_SALE_CLOSED, 0, 0);
	long long buyers_at_close = n_buyers(raw, ev2);

	pthread_join(th, NULL);
	store_close(r.rs);
	tap_ok(rc == 0 && r.refused > 0 && r.other == 0,
		"event close racing %u batches of reserves: the close took (%u reserved, %u "
		"refused)",
		r.batches, r.reserved, r.refused);
	tap_ok(r.reserved_after_refused == 0,
		"  no reservation was decided after the first refusal (%u were)",
		r.reserved_after_refused);
	tap_ok(buyers_at_close == (long long)r.reserved && n_buyers(raw, ev2) == r.reserved &&
			raw_int(raw, "GET %s", key(ev2, RS_KEY_STOCK)) ==
				1000000 - (long long)r.reserved,
		"  every reservation was decided before the close returned; buyers %lld == "
		"reserved "
		"%u, stock + buyers == preheated",
		buyers_at_close, r.reserved);
	store_purge_event(rs, ev2);
}

/* --- Release, results, preheat, state -------------------------------------------------------- */

/* One draw batch of users[0..n) of event from index at: its status, verdicts in v. */
static int
draw_batch(uint32_t event, const uint64_t *users, unsigned n, uint64_t at, uint8_t *v,
	int64_t *stock)
{
	struct wire_reserve res[8];
	struct store_batch b = {.event = event, .n = n, .res = res, .verdicts = v, .draw = true,
		.draw_index = at};

	for (unsigned i = 0; i < n; i++)
		res[i] = mkres(event, users[i]);
	int rc = store_reserve(rs, &b, 1);

	*stock = b.stock_left;
	return rc;
}

/*
 * The waiting list (issue 27): event's draw decided users 12 and 10 (ranks 1 and 2, the stock
 * of 2) and put 13 and 11 (ranks 3 and 4) on the list. Every returned item goes to the list's
 * head by rank, never to a first-come reserve, exactly once; after the list, to the stock.
 */
static void
test_waiting_list(uint32_t ev)
{
	struct store_release_as as = {.verdict = WIRE_V_EXPIRED, .order_id = 7, .pay_deadline_ms = 9};
	struct store_waiter to[4];
	unsigned n_to = 9;
	uint8_t v[1];
	uint64_t rid12 = (uint64_t)raw_int(raw, "HGET %s 12", key(ev, RS_KEY_RESULT));
	uint64_t rid10 = (uint64_t)raw_int(raw, "HGET %s 10", key(ev, RS_KEY_RESULT));
	long outbox0 = outbox_reservations(raw, ev, NULL, 0);
	uint64_t ob[8][3];

	tap_ok(store_release_to(rs, ev, rid12, 12, 1, &as, to, 4, &n_to) == 1 && n_to == 1 &&
			to[0].user == 13 && to[0].rank == 3 &&
			raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)) == 0 &&
			raw_int(raw, "HGET %s 13", key(ev, RS_KEY_RESULT)) ==
				(long long)to[0].reservation_id,
		"waiting list: user 12's item came back and went to user 13 (rank 3), a buyer now; "
		"the stock stays 0");
	long nob = outbox_reservations(raw, ev, ob, 8);

	tap_ok(nob == outbox0 + 1 && ob[nob - 1][0] == 13 && ob[nob - 1][1] == to[0].reservation_id,
		"  user 13's reservation is in the outbox: its order follows as any other's");
	struct wire_reserve fc = mkres(ev, 501);
	struct store_batch b = {.event = ev, .n = 1, .res = &fc, .verdicts = v};

	tap_ok(store_reserve(rs, &b, 1) == 0 && v[0] == WIRE_V_SOLD_OUT && b.stock_left == 0 &&
			raw_int(raw, "HEXISTS %s 501", key(ev, RS_KEY_RESULT)) == 0,
		"  a faster first-come reserve gets nothing (sold out)");
	tap_ok(store_release_to(rs, ev, rid12, 12, 1, &as, to, 4, &n_to) == 0 && n_to == 0 &&
			raw_int(raw, "LLEN %s", key(ev, RS_KEY_WAIT)) == 1,
		"  the same release again: nothing (exactly once), user 11 still waiting");
	uint64_t served = 0, waiting = 0, rid13 = to[0].reservation_id;
	bool final = true;

	freeReplyObject(raw_cmd(raw, "SET %s %s", key(ev, RS_KEY_WINDOW), "1 2"));
	tap_ok(store_release_to(rs, ev, rid10, 10, 1, &as, to, 4, &n_to) == 1 && n_to == 0 &&
			raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)) == 1 &&
			raw_int(raw, "LLEN %s", key(ev, RS_KEY_WAIT)) == 1,
		"  the sale over (its window ended): user 10's item goes back to the stock, not "
		"the list");
	freeReplyObject(raw_cmd(raw, "DEL %s", key(ev, RS_KEY_WINDOW)));
	tap_ok(store_release_to(rs, ev, rid13, 13, 1, &as, to, 4, &n_to) == 1 && n_to == 1 &&
			to[0].user == 11 && to[0].rank == 4 &&
			store_draw_waiting(rs, ev, &served, &waiting, &final) == 0 && served == 4 &&
			waiting == 0 && !final,
		"  open again, user 13's item went to user 11 (rank 4): the list in rank order, now "
		"empty");
	tap_ok(store_release_to(rs, ev, to[0].reservation_id, 11, 1, &as, to, 4, &n_to) == 1 &&
			n_to == 0 && raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)) == 2,
		"  with nobody waiting, a returned item goes back to the stock (first come)");
	fc = mkres(ev, 502);
	tap_ok(store_reserve(rs, &b, 1) == 0 && v[0] == WIRE_V_RESERVED,
		"  and a first-come reserve gets it");
	long long buyers = n_buyers(raw, ev), released = raw_int(raw, "SCARD %s",
							    key(ev, RS_KEY_RELEASED));

	tap_ok(b.stock_left + buyers - released == 2,
		"  stock %lld + buyers %lld - released %lld == the preheated 2", (long long)b.stock_left,
		buyers, released);
}

/*
 * Sold out is final when no item can come back: a drawn sale of 2 items, 3 entrants (the third
 * waiting); while a holder has not paid, the list is not final; once both paid (each counted
 * once, however often the order writer stores it), it is; an item that came back all the same
 * (a paid buyer's release) makes it not final again.
 */
static void
test_waiting_final(void)
{
	const uint32_t ev = 803;
	struct wire_reserve res[3];
	uint64_t users[3] = {31, 32, 33}, served, waiting, rids[3];
	uint8_t v[4];
	unsigned added, stored = 0;
	uint64_t entrants;
	struct store_draw d;
	int64_t stock;
	bool final = true;

	raw_preheat(ev, 2);
	for (unsigned i = 0; i < 3; i++)
		res[i] = mkres(ev, users[i]);
	tap_ok(store_enter(rs, ev, res, 3, v, &added, &entrants) == 0 && added == 3 &&
			store_draw_freeze(rs, ev, &d) == 0 &&
			draw_batch(ev, users, 3, 0, v, &stock) == 0 && v[0] == WIRE_V_RESERVED &&
			v[1] == WIRE_V_RESERVED && v[2] == WIRE_V_WAITING && stock == 0,
		"final: a draw of 2 items among 3 entrants, the third waiting");
	for (unsigned i = 0; i < 2; i++)
		rids[i] = (uint64_t)raw_int(raw, "HGET %s %llu", key(ev, RS_KEY_RESULT),
			(unsigned long long)users[i]);
	tap_ok(store_draw_waiting(rs, ev, &served, &waiting, &final) == 0 && waiting == 1 && !final,
		"  nobody paid: not final (an item may come back)");
	struct store_paid p[2] = {{.user = 31, .reservation_id = rids[0], .order_id = 1,
					  .pay_deadline_ms = 5},
		{.user = 32, .reservation_id = rids[1], .order_id = 2, .pay_deadline_ms = 5}};

	tap_ok(store_results_paid(rs, ev, p, 1, &stored) == 0 && stored == 1 &&
			store_results_paid(rs, ev, p, 1, &stored) == 0 &&
			store_draw_waiting(rs, ev, &served, &waiting, &final) == 0 && !final,
		"  one of two paid (stored twice): not final");
	tap_ok(store_results_paid(rs, ev, p + 1, 1, &stored) == 0 && stored == 1 &&
			store_draw_waiting(rs, ev, &served, &waiting, &final) == 0 && waiting == 1 &&
			final,
		"  both paid: final (no item can come back), the entrant still on the list");
	/* Redis loses user 32 with the count's step for it (a failover without the last
	 * writes); reconcile --repair makes it a buyer again from its paid order. */
	raw_int(raw, "HDEL %s 32", key(ev, RS_KEY_RESULT));
	raw_int(raw, "HINCRBY %s paid -1", key(ev, RS_KEY_DRAW));
	const struct store_buyer again = {32, {WIRE_V_PAID, rids[1], 2, 5}};

	tap_ok(store_repair_buyers(rs, ev, &again, 1) == 0 &&
			store_repair_buyers(rs, ev, &again, 1) == 0 &&
			raw_int(raw, "HGET %s paid", key(ev, RS_KEY_DRAW)) == 2 &&
			store_draw_waiting(rs, ev, &served, &waiting, &final) == 0 && final,
		"  a paid buyer Redis lost, repaired (twice): counted paid once, final again");
	struct store_release_as as = {.verdict = WIRE_V_CANCELLED, .order_id = 2, .pay_deadline_ms = 5};
	struct store_waiter to[2];
	unsigned n_to = 0;

	tap_ok(store_release_to(rs, ev, rids[1], 32, 1, &as, to, 2, &n_to) == 1 && n_to == 1 &&
			to[0].user == 33 &&
			store_draw_waiting(rs, ev, &served, &waiting, &final) == 0 && waiting == 0 &&
			!final,
		"  a paid item came back all the same: it went to user 33, who has not paid: not "
		"final");
	tap_ok(store_purge_event(rs, ev) == 0, "  purged");
}

static void
test_draw(void)
{
	const uint32_t ev = 800, ev0 = 801;
	struct wire_reserve res[6];
	uint8_t v[8];
	unsigned added;
	uint64_t entrants;
	struct store_draw d;
	int64_t stock;

	raw_preheat(ev, 2);
	for (unsigned i = 0; i < 4; i++)
		res[i] = mkres(ev, 10 + i);
	res[4] = mkres(ev, 11); /* a repeat in the same batch */
	uint64_t first_rid_11 = res[1].reservation_id;

	tap_ok(store_enter(rs, ev, res, 5, v, &added, &entrants) == 0 && added == 4 &&
			entrants == 4 && v[0] == WIRE_V_QUEUED && v[4] == WIRE_V_QUEUED,
		"enter.lua: 4 entrants of 5 reservations (one user twice), all answered queued");
	res[5] = mkres(ev, 12);
	tap_ok(store_enter(rs, ev, &res[5], 1, v, &added, &entrants) == 0 && added == 0 &&
			entrants == 4 && v[0] == WIRE_V_QUEUED,
		"  a second reserve of an entrant: queued, nothing added");
	{
		struct store_entrant *e = NULL;
		size_t n = 0, cap = 0;
		bool same = true;

		int lrc = store_entrants_log_read(rs, ev, &e, &n, &cap);

		tap_ok(lrc == 0 && n == 4,
			"  the entrants' log holds the 4 entrants once each (%zu records)", n);
		for (size_t i = 0; i < n && i < 4; i++)
			same = same && e[i].user == 10 + i &&
			       e[i].reservation_id == (i == 1 ? first_rid_11 : res[i].reservation_id);
		tap_ok(same, "  in the order they entered, each with its first reservation");
		free(e);
	}
	struct wire_result_query q[2] = {{.user = 11, .event = ev}, {.user = 99, .event = ev}};
	uint64_t rids[2];

	tap_ok(store_entrants_get(rs, q, 2, rids) == 0 && rids[0] == first_rid_11 && rids[1] == 0,
		"  an entrant keeps its first reservation; a query finds it (and not a stranger)");
	tap_ok(store_draw_get(rs, ev, &d) == 0 && d.exists && d.state == RS_DRAW_OPEN,
		"  the first entrant opened the draw key");
	uint64_t users[4] = {12, 10, 13, 11};
	struct wire_reserve fc = mkres(ev, 500);
	struct store_batch b = {.event = ev, .n = 1, .res = &fc, .verdicts = v};

	tap_ok(store_reserve(rs, &b, 1) == 0 && v[0] == WIRE_V_RETRY && n_buyers(raw, ev) == 0 &&
			raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)) == 2,
		"reserve.lua: a first-come batch while the draw is open: retry, nothing written");
	tap_ok(draw_batch(ev, users, 2, 0, v, &stock) == -ESTALE && v[0] == WIRE_V_RETRY &&
			n_buyers(raw, ev) == 0,
		"  a draw batch before the freeze: refused (-ESTALE), nothing written");
	tap_ok(store_draw_freeze(rs, ev, &d) == 0 && d.state == RS_DRAW_FROZEN && d.n == 4 &&
			d.next == 0 && d.served == 0,
		"freeze: frozen with n 4, next 0, served 0");
	tap_ok(store_enter(rs, ev, &res[5], 1, v, &added, &entrants) == 0 && v[0] == WIRE_V_RETRY &&
			raw_int(raw, "HLEN %s", key(ev, RS_KEY_ENTRANTS)) == 4,
		"  enter.lua after the freeze: retry, the entrants unchanged");
	tap_ok(store_draw_freeze(rs, ev, &d) == 0 && d.state == RS_DRAW_FROZEN && d.n == 4,
		"  a second freeze changes nothing");
	tap_ok(draw_batch(ev, users + 2, 2, 2, v, &stock) == -ESTALE && n_buyers(raw, ev) == 0 &&
			store_draw_get(rs, ev, &d) == 0 && d.next == 0,
		"the cursor: a batch out of its turn is refused, nothing written, next stays 0");
	tap_ok(draw_batch(ev, users, 2, 0, v, &stock) == 0 && v[0] == WIRE_V_RESERVED &&
			v[1] == WIRE_V_RESERVED && stock == 0 && store_draw_get(rs, ev, &d) == 0 &&
			d.next == 2 && d.state == RS_DRAW_FROZEN && d.served == 2,
		"  the batch at its turn: decided (2 reserved), next 2, served 2");
	tap_ok(draw_batch(ev, users, 2, 0, v, &stock) == -ESTALE && n_buyers(raw, ev) == 2,
		"  the same batch again (a retry): refused, nobody decided twice");
	tap_ok(draw_batch(ev, users + 2, 2, 2, v, &stock) == 0 && v[0] == WIRE_V_WAITING &&
			v[1] == WIRE_V_WAITING && store_draw_get(rs, ev, &d) == 0 && d.next == 4 &&
			d.state == RS_DRAW_DONE && d.served == 2 && store_draw_freeze(rs, ev, &d) == 0 &&
			d.served == 2,
		"  the last batch: beyond the stock, waiting; next 4 == n, state done, served 2 "
		"(also read by a freeze)");
	{
		struct wire_result_query wq[4] = {{.user = 13, .event = ev}, {.user = 11, .event = ev},
			{.user = 12, .event = ev}, {.user = 99, .event = ev}};
		uint64_t wr[4], rk[4] = {9, 9, 9, 9};

		tap_ok(raw_int(raw, "HLEN %s", key(ev, RS_KEY_WRANK)) == 2 &&
				raw_int(raw, "HGET %s 13", key(ev, RS_KEY_WRANK)) == 3 &&
				raw_int(raw, "HGET %s 11", key(ev, RS_KEY_WRANK)) == 4,
			"  the wrank hash: users 13 and 11 with their ranks 3 and 4, nobody else");
		tap_ok(store_entrants_ranks(rs, wq, 4, wr, rk) == 0 && wr[0] != 0 && wr[1] != 0 &&
				wr[2] != 0 && wr[3] == 0 && rk[0] == 3 && rk[1] == 4 && rk[2] == 0 &&
				rk[3] == 0,
			"  a query finds a waiting entrant's rank (none for a buyer or a stranger)");
		freeReplyObject(raw_cmd(raw, "HSET %s 13 77", key(ev, RS_KEY_WRANK)));
		tap_ok(draw_batch(ev, users + 2, 2, 2, v, &stock) == -ESTALE &&
				raw_int(raw, "HLEN %s", key(ev, RS_KEY_WRANK)) == 2 &&
				raw_int(raw, "HGET %s 13", key(ev, RS_KEY_WRANK)) == 77,
			"  the last batch again (a retry, -5): the wrank hash not written");
		freeReplyObject(raw_cmd(raw, "HSET %s 13 3", key(ev, RS_KEY_WRANK)));
	}
	{
		uint64_t served = 0, waiting = 0;
		bool final = true;

		tap_ok(store_draw_waiting(rs, ev, &served, &waiting, &final) == 0 && served == 2 &&
				waiting == 2 && !final,
			"  the waiting list: ranks 3 and 4 on it, ranks up to 2 served; not final (the "
			"items held are not paid)");
	}
	fc = mkres(ev, 500);
	tap_ok(store_reserve(rs, &b, 1) == 0 && v[0] == WIRE_V_SOLD_OUT,
		"  after done, a first-come batch is decided (sold out)");
	test_waiting_list(ev);
	{
		uint8_t dg[32] = {1, 2, 3}, other[32] = {9};

		tap_ok(store_draw_set_digest(rs, ev, dg) == 0 && store_draw_set_digest(rs, ev, dg) == 0 &&
				store_draw_set_digest(rs, ev, other) == -EEXIST &&
				store_draw_get(rs, ev, &d) == 0 && d.has_digest &&
				memcmp(d.digest, dg, 32) == 0,
			"the digest is set once; another one is refused (-EEXIST)");
	}
	/* HSCAN over many entrants: every one, once after dropping repeats. */
	{
		enum { N = 5000 };
		struct wire_reserve many[512];
		struct store_entrant *e = NULL;
		size_t n = 0, cap = 0, distinct = 0;
		uint64_t cur = 0;
		int rc = 0;
		static uint8_t seen[N + 1], mv[512];

		for (unsigned at = 1; at <= N; at += 512) {
			unsigned k = 0;

			for (; k < 512 && at + k <= N; k++)
				many[k] = mkres(ev0, at + k);
			rc |= store_enter(rs, ev0, many, k, mv, &added, &entrants);
		}
		do
			rc |= store_entrants_scan(rs, ev0, &cur, 1000, &e, &n, &cap);
		while (rc == 0 && cur != 0);
		for (size_t i = 0; i < n; i++)
			if (e[i].user >= 1 && e[i].user <= N && !seen[e[i].user]++)
				distinct++;
		free(e);
		tap_ok(rc == 0 && entrants == N && distinct == N,
			"HSCAN reads all 5000 entrants (%zu returned, %zu distinct)", n, distinct);
		e = NULL; /* freed above */
		n = cap = 0;
		memset(seen, 0, sizeof(seen));
		distinct = 0;
		rc = store_entrants_log_read(rs, ev0, &e, &n, &cap);
		for (size_t i = 0; i < n; i++)
			if (e[i].user >= 1 && e[i].user <= N && !seen[e[i].user]++)
				distinct++;
		tap_ok(rc == 0 && n == N && distinct == N,
			"the entrants' log reads all 5000 entrants, each once (%zu)", n);
		free(e);
		e = NULL;
		n = cap = 0;
		/* A log over several slices, its records cut by the slices' ends. */
		{
			enum { BIG = 120000 };
			char rec[64];
			size_t bytes = 0;
			bool in_order = true;

			for (unsigned u = 1; u <= BIG; u++) {
				int l = snprintf(rec, sizeof(rec), "%u:%llu\n", u,
					(unsigned long long)(UINT64_C(1) << 60) + u);

				redisAppendCommand(raw, "APPEND fg:{%u}:entlog %b", ev0 + 1, rec,
					(size_t)l);
				bytes += (size_t)l;
			}
			for (unsigned u = 1; u <= BIG; u++) {
				redisReply *r = NULL;

				redisGetReply(raw, (void **)&r);
				freeReplyObject(r);
			}
			rc = store_entrants_log_read(rs, ev0 + 1, &e, &n, &cap);
			for (size_t i = 0; i < n && in_order; i++)
				in_order = e[i].user == i + 1 &&
					   e[i].reservation_id == (UINT64_C(1) << 60) + i + 1;
			tap_ok(rc == 0 && n == BIG && in_order && bytes > 2 * RS_ENTLOG_SLICE,
				"a log of %zu bytes (over two slices) reads back whole: %zu records",
				bytes, n);
			free(e);
			e = NULL;
			n = cap = 0;
			freeReplyObject(raw_cmd(raw, "APPEND fg:{%u}:entlog 71:x", ev0 + 1));
			tap_ok(store_entrants_log_read(rs, ev0 + 1, &e, &n, &cap) == -EIO,
				"  a log ending inside a record: refused (-EIO)");
			free(e);
			e = NULL;
			n = cap = 0;
			tap_ok(store_entrants_log_drop(rs, ev0 + 1) == 0 &&
					raw_int(raw, "EXISTS fg:{%u}:entlog", ev0 + 1) == 0,
				"  store_entrants_log_drop() deletes the log");
			tap_ok(store_entrants_log_read(rs, ev0 + 1, &e, &n, &cap) == 0 && n == 0,
				"  an absent log reads as no entrant");
			free(e);
			tap_ok(store_entrants_log_drop(rs, ev0 + 1) == 0 &&
					store_entrants_log_drop(rs, 0) == -EINVAL,
				"  dropping an absent log: 0; event 0: -EINVAL");
		}
		tap_ok(store_preheat(rs, ev0, 10) == -EBUSY,
			"preheat refuses after a pre-queue (entrants exist)");
		freeReplyObject(raw_cmd(raw, "DEL %s", key(ev0, RS_KEY_ENTRANTS)));
		tap_ok(store_preheat(rs, ev0, 10) == 0 &&
				raw_int(raw, "EXISTS %s %s", key(ev0, RS_KEY_DRAW),
					key(ev0, RS_KEY_ENTLOG)) == 0,
			"  without entrants it preheats and deletes the draw key and the log");
		tap_ok(store_draw_freeze(rs, ev0, &d) == 0 && d.state == RS_DRAW_DONE && d.n == 0,
			"a freeze without entrants: done at once (n 0)");
	}
	tap_ok(store_purge_event(rs, ev) == 0 &&
			raw_int(raw, "EXISTS %s %s %s", key(ev, RS_KEY_ENTRANTS), key(ev, RS_KEY_DRAW),
				key(ev, RS_KEY_ENTLOG)) == 0,
		"purge deletes the entrants, their log and the draw key");
}

static void
test_release_and_results(void)
{
	const uint32_t ev = 400;
	uint64_t users[] = {11, 12};
	struct wire_reserve res[2];
	uint8_t v[2];
	struct store_result out[4];
	struct store_event_state st;

	store_purge_event(rs, ev);
	tap_eq_int(store_preheat(rs, ev, 5), 0, "preheat a fresh event");
	tap_eq_int(store_preheat(rs, ev, 2), 0, "preheat again before the sale overwrites");
	tap_eq_int(
		raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)), 2, "  stock is the latest preheat");
	tap_eq_int(store_preheat(rs, ev, -1), -EINVAL, "preheat with a negative stock is refused");
	tap_eq_int(store_preheat(rs, 0, 1), -EINVAL, "preheat of event 0 is refused");
	decide(ev, users, 2, 2, v, res);
	tap_ok(v[0] == WIRE_V_RESERVED && v[1] == WIRE_V_RESERVED, "two users reserve");
	tap_eq_int(store_preheat(rs, ev, 100), -EBUSY, "preheat once somebody reserved: -EBUSY");
	tap_eq_int(
		raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)), 0, "  and the stock is unchanged");

	struct store_release_as exp = {.verdict = WIRE_V_EXPIRED, .order_id = 5001,
		.pay_deadline_ms = UINT64_C(1767225999000)};

	tap_eq_int(store_release(rs, ev, res[0].reservation_id, 11, 1, &exp), 1, "release: applied");
	tap_eq_int(raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)), 1, "  one item back");
	tap_eq_int(store_release(rs, ev, res[0].reservation_id, 11, 1, &exp), 0, "release again: 0");
	tap_eq_int(raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)), 1, "  stock returned only once");
	tap_eq_int(store_release(rs, ev, 999999, 13, 1, NULL), -ENOENT,
		"release for a user who is not a buyer: -ENOENT");
	tap_eq_int(raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)), 1, "  stock unchanged");
	tap_eq_int(store_release(rs, ev, res[1].reservation_id, 12, 0, NULL), -EINVAL,
		"release of 0 items");
	tap_eq_int(store_release(rs, ev, res[1].reservation_id, 12, 1,
			   &(struct store_release_as){.verdict = WIRE_V_PAID}),
		-EINVAL, "release as paid: -EINVAL");
	decide(ev, users, 1, 1, v, NULL);
	tap_eq_int(v[0], WIRE_V_DUPLICATE, "a user whose reservation expired stays a buyer");
	{
		/* Two buyers whose reservations share an id (two data planes with one dp id). */
		const uint32_t ev_s = 702;
		struct wire_reserve two[2] = {
			{.reservation_id = 4242, .user = 31, .event = ev_s},
			{.reservation_id = 4242, .user = 32, .event = ev_s},
		};
		uint8_t tv[2], rel[3];
		struct store_batch b = {.event = ev_s, .n = 2, .res = two, .verdicts = tv};
		const uint64_t rids[3] = {4242, 4242, 4242}, us[3] = {31, 32, 33};

		raw_preheat(ev_s, 5);
		tap_ok(store_reserve(rs, &b, 1) == 0 && tv[0] == WIRE_V_RESERVED &&
				tv[1] == WIRE_V_RESERVED,
			"two buyers with one reservation id: both reserved");
		tap_ok(store_release(rs, ev_s, 4242, 31, 1, NULL) == 1 &&
				store_release(rs, ev_s, 4242, 32, 1, NULL) == 1,
			"  each one's release applies (not taken for the other's)");
		tap_ok(store_release(rs, ev_s, 4242, 32, 1, NULL) == 0 &&
				raw_int(raw, "GET %s", key(ev_s, RS_KEY_STOCK)) == 5 &&
				raw_int(raw, "SCARD %s", key(ev_s, RS_KEY_RELEASED)) == 2,
			"  a second release of one is 0; stock back to 5, 2 released");
		tap_ok(store_released_check(rs, ev_s, rids, us, 3, rel) == 0 && rel[0] == 1 &&
				rel[1] == 1 && rel[2] == 0,
			"  store_released_check by (reservation id, user)");
		freeReplyObject(raw_cmd(raw, "SADD %s 5151", key(ev_s, RS_KEY_RELEASED)));
		tap_ok(store_released_check(rs, ev_s, (const uint64_t[]){5151}, us, 1, rel) == 0 &&
				rel[0] == 1,
			"  an older build's bare reservation id still counts as released");
		store_purge_event(rs, ev_s);
	}
	{
		/* A reservation that never became an order ("S:") goes back only while the user's
		 * field is still it: user 41's was replaced by its order's (a repair of an orphan
		 * reservation), whose item it is; user 42's is its own. */
		const uint32_t ev_s = 703;
		struct wire_reserve two[2] = {
			{.reservation_id = 5001, .user = 41, .event = ev_s},
			{.reservation_id = 5002, .user = 42, .event = ev_s},
		};
		uint8_t tv[2];
		struct store_batch b = {.event = ev_s, .n = 2, .res = two, .verdicts = tv};
		const struct store_release_as unordered = {.verdict = WIRE_V_SOLD_OUT};

		raw_preheat(ev_s, 5);
		tap_ok(store_reserve(rs, &b, 1) == 0 && tv[0] == WIRE_V_RESERVED &&
				tv[1] == WIRE_V_RESERVED,
			"users 41 and 42 reserve: stock 3");
		freeReplyObject(raw_cmd(raw, "HSET %s 41 O:5000:77:1767225900000",
			key(ev_s, RS_KEY_RESULT)));
		tap_eq_int(store_release(rs, ev_s, 5001, 41, 1, &unordered), 0,
			"  an unordered release of 41's reservation over its order's field: 0");
		redisReply *f41 = raw_cmd(raw, "HGET %s 41", key(ev_s, RS_KEY_RESULT));

		tap_ok(f41 != NULL && f41->type == REDIS_REPLY_STRING &&
				strcmp(f41->str, "O:5000:77:1767225900000") == 0 &&
				raw_int(raw, "GET %s", key(ev_s, RS_KEY_STOCK)) == 3 &&
				raw_int(raw, "SCARD %s", key(ev_s, RS_KEY_RELEASED)) == 0,
			"  the order's field stays, no item back, nothing released (%s)",
			f41 != NULL && f41->type == REDIS_REPLY_STRING ? f41->str : "?");
		freeReplyObject(f41);
		tap_eq_int(store_release(rs, ev_s, 5002, 42, 1, &unordered), 1,
			"  an unordered release of 42's own reservation: applied");
		tap_ok(raw_int(raw, "GET %s", key(ev_s, RS_KEY_STOCK)) == 4 &&
				raw_int(raw, "SCARD %s", key(ev_s, RS_KEY_RELEASED)) == 1,
			"  its item back (stock 4), released once");
		tap_eq_int(store_release(rs, ev_s, 5002, 42, 1, &unordered), 0,
			"  and again: 0");
		store_purge_event(rs, ev_s);
	}

	freeReplyObject(raw_cmd(raw,
		"HSET %s 14 O:77:9001:1767225900000 15 P:78:9002 16 C:79 "
		"17 garbage 18 O:80:1 19 H 20 C:81:9003:1767225901000 21 P:82:9004:1767225902000 "
		"22 S:83 23 X:84 24 S:85:1 25 X:86:9005",
		key(ev, RS_KEY_RESULT)));
	const struct {
		uint64_t user;
		uint8_t verdict;
		uint64_t rid, order, deadline;
	} want[] = {
		{11, WIRE_V_EXPIRED, res[0].reservation_id, 5001, UINT64_C(1767225999000)},
		{12, WIRE_V_RESERVED, res[1].reservation_id, 0, 0}, {13, 0, 0, 0, 0},
		{14, WIRE_V_ORDERED, 77, 9001, UINT64_C(1767225900000)},
		{15, WIRE_V_PAID, 78, 9002, 0}, {16, WIRE_V_CANCELLED, 79, 0, 0},
		{17, 0, 0, 0, 0}, /* not understood: reported as no entry */
		{18, 0, 0, 0, 0},
		{19, 0, 0, 0, 0}, /* restored by reconciliation: the order is in PostgreSQL */
		{20, WIRE_V_CANCELLED, 81, 9003, UINT64_C(1767225901000)},
		{21, WIRE_V_PAID, 82, 9004, UINT64_C(1767225902000)},
		{22, WIRE_V_SOLD_OUT, 83, 0, 0}, /* released before it became an order */
		{23, WIRE_V_EXPIRED, 84, 0, 0},	 /* an older build's form */
		{24, 0, 0, 0, 0},		 /* S: takes no order id */
		{25, 0, 0, 0, 0},		 /* X: takes one number or three */
	};
	enum { N_WANT = sizeof(want) / sizeof(want[0]) };
	struct wire_result_query q[N_WANT];

	for (unsigned i = 0; i < N_WANT; i++)
		q[i] = (struct wire_result_query){.user = want[i].user, .event = ev};
	struct store_result got[N_WANT];
	int rc = store_results(rs, q, N_WANT, got);

	tap_eq_int(rc, 0, "store_results for 15 users");
	for (unsigned i = 0; i < N_WANT; i++)
		tap_ok(got[i].verdict == want[i].verdict && got[i].reservation_id == want[i].rid &&
				got[i].order_id == want[i].order &&
				got[i].pay_deadline_ms == want[i].deadline,
			"  user %" PRIu64 ": %s rid %" PRIu64 " order %" PRIu64, want[i].user,
			got[i].verdict ? wire_verdict_name(got[i].verdict) : "none",
			got[i].reservation_id, got[i].order_id);
	(void)out;

	/* Paid: over ordered (and H), never over another final result nor for a non-buyer. */
	struct store_paid paid[4] = {
		{.user = 14, .reservation_id = 77, .order_id = 9001, .pay_deadline_ms = 1767225900000},
		{.user = 19, .reservation_id = 87, .order_id = 9006, .pay_deadline_ms = 1767225903000},
		{.user = 20, .reservation_id = 81, .order_id = 9003, .pay_deadline_ms = 1767225901000},
		{.user = 13, .reservation_id = 88, .order_id = 9007, .pay_deadline_ms = 1767225904000},
	};
	unsigned stored = 99;

	tap_ok(store_results_paid(rs, ev, paid, 4, &stored) == 0 && stored == 2,
		"store_results_paid: 2 of 4 stored (%u)", stored);
	q[0] = (struct wire_result_query){.user = 14, .event = ev};
	q[1] = (struct wire_result_query){.user = 19, .event = ev};
	q[2] = (struct wire_result_query){.user = 20, .event = ev};
	q[3] = (struct wire_result_query){.user = 13, .event = ev};
	tap_ok(store_results(rs, q, 4, got) == 0 && got[0].verdict == WIRE_V_PAID &&
			got[0].order_id == 9001 && got[0].pay_deadline_ms == 1767225900000 &&
			got[1].verdict == WIRE_V_PAID && got[1].reservation_id == 87 &&
			got[2].verdict == WIRE_V_CANCELLED && got[3].verdict == 0,
		"  ordered and H became paid with the order's fields; cancelled stays; no buyer, "
		"no result");

	freeReplyObject(raw_cmd(raw, "HDEL %s 14 15 16 17 18 19 20 21 22 23 24 25",
		key(ev, RS_KEY_RESULT)));

	/* The order writer publishes "ordered": not over a result that became final meanwhile
	 * (user 11 was released above: X:). */
	struct store_order_result ord[2] = {
		{.user = 11,
			.reservation_id = res[0].reservation_id,
			.order_id = 501,
			.pay_deadline_ms = 1},
		{.user = 12,
			.reservation_id = res[1].reservation_id,
			.order_id = 502,
			.pay_deadline_ms = 2},
	};

	tap_eq_int(store_results_ordered_ack(rs, ev, "order-writer", ord, 2, NULL, 0), 0,
		"store_results_ordered_ack for a released and a reserved user");
	redisReply *r11 = raw_cmd(raw, "HGET %s 11", key(ev, RS_KEY_RESULT));
	redisReply *r12 = raw_cmd(raw, "HGET %s 12", key(ev, RS_KEY_RESULT));
	char want12[64];

	snprintf(want12, sizeof(want12), "O:%" PRIu64 ":502:2", res[1].reservation_id);
	tap_ok(r11 != NULL && r11->type == REDIS_REPLY_STRING && strncmp(r11->str, "X:", 2) == 0,
		"  the released user keeps X: (got %s)", r11 && r11->str ? r11->str : "nil");
	tap_ok(r12 != NULL && r12->type == REDIS_REPLY_STRING && strcmp(r12->str, want12) == 0,
		"  the reserved user is ordered (got %s)", r12 && r12->str ? r12->str : "nil");
	freeReplyObject(r11);
	freeReplyObject(r12);
	tap_eq_int(store_event_state(rs, ev, &st), 0, "store_event_state");
	tap_ok(st.preheated && st.stock == 1 && st.buyers == 2 && st.outbox_len == 1 &&
			st.released == 1,
		"  stock 1, 2 buyers, 1 outbox entry, 1 released (got %" PRId64 ", %" PRIu64
		", %" PRIu64 ", %" PRIu64 ")",
		st.stock, st.buyers, st.outbox_len, st.released);
	tap_ok((int64_t)st.stock + (int64_t)st.buyers - (int64_t)st.released == 2,
		"  stock + buyers - released == preheated");
	tap_eq_int(store_purge_event(rs, ev), 0, "store_purge_event");
	tap_eq_int(store_event_state(rs, ev, &st), 0, "store_event_state of a purged event");
	tap_ok(!st.preheated && st.stock == 0 && st.buyers == 0 && st.outbox_len == 0,
		"  nothing left");
}

/* --- Pipelines, malformed batches, errors, a flushed script cache ------------------------- */

static void
test_pipeline(void)
{
	enum { NB = 6, PER = 300 };
	static struct wire_reserve res[NB][PER];
	static uint8_t v[NB][PER];
	struct store_batch b[NB];
	const long long stock[NB] = {0, 1, 150, 300, 1000, 77};
	struct store_stats before, after;

	for (unsigned i = 0; i < NB; i++) {
		store_purge_event(rs, 500 + i);
		raw_preheat(500 + i, stock[i]);
		for (unsigned k = 0; k < PER; k++)
			res[i][k] = mkres(500 + i, 1 + k);
		b[i] = (struct store_batch){
			.event = 500 + i, .n = PER, .res = res[i], .verdicts = v[i]};
	}
	/* Batch 5 is malformed: one of its reservations belongs to another event. */
	res[5][17].event = 999;
	store_get_stats(rs, &before);
	int rc = store_reserve(rs, b, NB);

	tap_eq_int(rc, -EINVAL, "6 events in one pipeline, one malformed: the first error");
	for (unsigned i = 0; i < NB - 1; i++) {
		unsigned reserved = 0;
		long long want = stock[i] < PER ? stock[i] : PER;

		for (unsigned k = 0; k < PER; k++)
			reserved += v[i][k] == WIRE_V_RESERVED;
		tap_ok(b[i].status == 0 && reserved == want && b[i].stock_left == stock[i] - want,
			"  event %u (stock %lld): %u reserved, %" PRId64 " left", 500 + i, stock[i],
			reserved, b[i].stock_left);
	}
	unsigned retry = 0;

	for (unsigned k = 0; k < PER; k++)
		retry += v[5][k] == WIRE_V_RETRY;
	tap_ok(b[5].status == -EINVAL && retry == PER && n_buyers(raw, 505) == 0,
		"  the malformed batch: -EINVAL, all RETRY, nothing written");
	store_get_stats(rs, &after);
	tap_eq_int((long long)(after.reserved - before.reserved), 0 + 1 + 150 + 300 + 300,
		"  stats count the reserved verdicts");

	/* An error reply for one batch: its result key holds a string. */
	res[5][17].event = 505;
	freeReplyObject(raw_cmd(raw, "SET %s oops", key(505, RS_KEY_RESULT)));
	store_purge_event(rs, 501);
	raw_preheat(501, 5);
	b[0].event = 501;
	for (unsigned k = 0; k < PER; k++)
		res[0][k] = mkres(501, 100000 + k);
	rc = store_reserve(rs, (struct store_batch[]){b[5], b[0]}, 2);
	tap_eq_int(rc, -EIO, "an error reply (WRONGTYPE): -EIO");
	tap_ok(store_connected(rs), "  the connection stays up");
	tap_eq_int(raw_int(raw, "GET %s", key(505, RS_KEY_STOCK)), 77,
		"  the failed batch wrote nothing (stock unchanged)");
	tap_eq_int(raw_int(raw, "XLEN %s", key(505, RS_KEY_OUTBOX)), 0, "  nor an outbox entry");
	tap_eq_int(n_buyers(raw, 501), 5, "  the other batch of the pipeline was decided");

	/* The outbox key of another type: the first XADD fails before any other write. */
	store_purge_event(rs, 505);
	raw_preheat(505, 77);
	freeReplyObject(raw_cmd(raw, "SET %s oops", key(505, RS_KEY_OUTBOX)));
	rc = store_reserve(rs, &b[5], 1);
	tap_ok(rc == -EIO && raw_int(raw, "GET %s", key(505, RS_KEY_STOCK)) == 77 &&
			raw_int(raw, "EXISTS %s", key(505, RS_KEY_RESULT)) == 0,
		"the outbox key of another type: -EIO, and nothing written");
	store_purge_event(rs, 505);

	/* A flushed script cache: the store loads the scripts again and resends. */
	freeReplyObject(raw_cmd(raw, "SCRIPT FLUSH"));
	store_purge_event(rs, 506);
	raw_preheat(506, 3);
	for (unsigned k = 0; k < 5; k++)
		res[0][k] = mkres(506, 1 + k);
	struct store_batch one = {.event = 506, .n = 5, .res = res[0], .verdicts = v[0]};

	store_get_stats(rs, &before);
	rc = store_reserve(rs, &one, 1);
	store_get_stats(rs, &after);
	tap_ok(rc == 0 && one.stock_left == 0 && v[0][2] == WIRE_V_RESERVED &&
			v[0][3] == WIRE_V_SOLD_OUT,
		"after SCRIPT FLUSH: decided (NOSCRIPT, reload, resend)");
	tap_eq_int(
		(long long)(after.script_loads - before.script_loads), 1, "  scripts loaded once");
	tap_eq_int(n_buyers(raw, 506), 3, "  3 buyers, not 6");
	freeReplyObject(raw_cmd(raw, "SCRIPT FLUSH"));
	store_purge_event(rs, 400);
	store_preheat(rs, 400, 1); /* also through NOSCRIPT: preheat.lua */
	tap_eq_int(raw_int(raw, "GET %s", key(400, RS_KEY_STOCK)), 1,
		"after SCRIPT FLUSH: preheat works too");

	struct store_batch bad[] = {
		{.event = 0, .n = 1, .res = res[0], .verdicts = v[0]},
		{.event = 506, .n = 0, .res = res[0], .verdicts = v[0]},
		{.event = 506, .n = RS_BATCH_MAX + 1, .res = res[0], .verdicts = v[0]},
	};

	for (unsigned i = 0; i < 3; i++)
		tap_eq_int(store_reserve(rs, &bad[i], 1), -EINVAL,
			i == 0	 ? "event 0: -EINVAL"
			: i == 1 ? "an empty batch: -EINVAL"
				 : "a batch over RS_BATCH_MAX: -EINVAL");
}

/* --- The order writer's reading, and reconciliation's ----------------------------------------- */

/* Checks that b holds the given (user, index, count) records; valid says which are valid. */
static bool
recs_are(const struct store_outbox_buf *b, unsigned n, const uint64_t (*want)[4])
{
	if (b->n != n)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (b->rec[i].user != want[i][0] || b->rec[i].index != want[i][1] ||
			b->rec[i].count != want[i][2] || b->rec[i].valid != (want[i][3] != 0))
			return false;
	return true;
}

static void
test_outbox_reading(void)
{
	const uint32_t ev = 450;
	static struct wire_reserve res[RS_BATCH_MAX];
	static uint8_t v[RS_BATCH_MAX];
	struct store_outbox_buf b = {0};
	char cursor[48] = "0-0";
	uint64_t pending, ms, seq;

	store_purge_event(rs, ev);
	raw_preheat(ev, 100000);
	tap_eq_int(store_outbox_group_create(rs, ev, "g"), 0, "outbox: group created");
	/* An entry of an older build: one reservation. */
	freeReplyObject(raw_cmd(raw, "XADD %s * u 1 r 101 t 5", key(ev, RS_KEY_OUTBOX)));
	/* A batch of 3 (one duplicate): one entry of 2. */
	uint64_t users[] = {2, 3, 2};

	decide(ev, users, 3, 3, v, NULL);
	/* Malformed: a reservation without r, then a good one, then an unknown field. */
	freeReplyObject(
		raw_cmd(raw, "XADD %s * u 4 t 1 u 5 r 105 t 2 x 9", key(ev, RS_KEY_OUTBOX)));
	/* A batch of 2048: two entries of 1,024. */
	for (unsigned i = 0; i < RS_BATCH_MAX; i++)
		res[i] = mkres(ev, 1000 + i);
	struct store_batch big = {.event = ev, .n = RS_BATCH_MAX, .res = res, .verdicts = v};

	tap_ok(store_reserve(rs, &big, 1) == 0 && v[RS_BATCH_MAX - 1] == WIRE_V_RESERVED,
		"outbox: a batch of %u reserved", RS_BATCH_MAX);
	tap_eq_int(raw_int(raw, "XLEN %s", key(ev, RS_KEY_OUTBOX)), 5,
		"outbox: 5 entries (1, 2, a malformed one, 1024, 1024)");

	const uint64_t first3[][4] = {
		{1, 0, 1, 1}, {2, 0, 2, 1}, {3, 1, 2, 1}, {4, 0, 2, 0}, {5, 1, 2, 1}};

	int got = store_outbox_read(rs, ev, "g", "c1", 3, &b);

	tap_ok(got == 3 && b.entries == 3 && recs_are(&b, 5, first3) &&
			b.rec[0].reservation_id == 101 && b.rec[0].admitted_ms == 5 &&
			b.rec[4].reservation_id == 105,
		"outbox read of 3 entries: 5 reservations, old and new format, the malformed "
		"one invalid (%u records)",
		b.n);
	tap_ok(store_outbox_read(rs, ev, "g", "c1", 1, &b) == 1 && b.n == 1024 &&
			b.rec[0].user == 1000 && b.rec[0].index == 0 && b.rec[1023].index == 1023 &&
			b.rec[1023].count == 1024 && store_outbox_rec_last(&b.rec[1023]) &&
			!store_outbox_rec_last(&b.rec[1022]) && b.rec[1023].user == 2023,
		"outbox read of 1 entry: its 1,024 reservations in order");
	tap_ok(store_outbox_read(rs, ev, "g", "c1", 1, &b) == 1 && b.n == 1024 &&
			b.rec[0].user == 2024,
		"  and the next entry's");
	tap_ok(store_outbox_read(rs, ev, "g", "c1", 1, &b) == 0 && b.n == 0, "  then nothing new");
	tap_ok(store_outbox_pending(rs, ev, "g", &pending, &ms, &seq) == 0 && pending == 5,
		"  5 entries pending");

	/* Another consumer claims them all; one is deleted while pending. */
	redisReply *x = raw_cmd(raw, "XRANGE %s - + COUNT 1", key(ev, RS_KEY_OUTBOX));

	freeReplyObject(
		raw_cmd(raw, "XDEL %s %s", key(ev, RS_KEY_OUTBOX), x->element[0]->element[0]->str));
	freeReplyObject(x);
	int n = store_outbox_claim(rs, ev, "g", "c2", 0, cursor, sizeof(cursor), 100, &b);
	unsigned valid = 0;

	for (unsigned i = 0; i < b.n; i++)
		valid += b.rec[i].valid;
	tap_ok(n >= 4 && strcmp(cursor, "0-0") == 0 && valid == 2 + 1 + 2048,
		"outbox claim: %d entries, %u reservations, %u valid (the deleted entry is gone "
		"or invalid)",
		n, b.n, valid);
	tap_ok(n == 4 && b.deleted == 1,
		"  the deleted entry, which Redis drops from the group, is counted (%u)", b.deleted);
	/* Acknowledge by the last record of each entry. */
	struct store_outbox_rec last[8];
	unsigned n_last = 0;

	for (unsigned i = 0; i < b.n && n_last < 8; i++)
		if (store_outbox_rec_last(&b.rec[i]))
			last[n_last++] = b.rec[i];
	tap_eq_int(store_outbox_ack(rs, ev, "g", last, n_last), n_last,
		"outbox ack: one id per entry acknowledges it");
	tap_ok(store_outbox_pending(rs, ev, "g", &pending, &ms, &seq) == 0 && pending == 0,
		"  nothing pending");
	store_outbox_buf_free(&b);

	/* Reconciliation: buyers are result fields; repair restores the missing ones. */
	uint64_t who[] = {2, 3, 77, 1000};
	uint8_t missing[4];

	freeReplyObject(raw_cmd(raw, "HDEL %s 3", key(ev, RS_KEY_RESULT)));
	tap_ok(store_buyers_missing(rs, ev, who, 4, missing) == 0 && !missing[0] && missing[1] &&
			missing[2] && !missing[3],
		"store_buyers_missing: users without a result field");
	/* Repaired buyers get their orders' own results (PostgreSQL's rows): user 3 an order
	 * awaiting payment, 77 a paid one; user 2 has a field, which stays. */
	const struct store_buyer add[] = {
		{3, {WIRE_V_ORDERED, 103, 9101, UINT64_C(1767225910000)}},
		{77, {WIRE_V_PAID, 177, 9102, UINT64_C(1767225911000)}},
		{2, {WIRE_V_ORDERED, 102, 9103, UINT64_C(1767225912000)}},
	};
	redisReply *before = raw_cmd(raw, "HGET %s 2", key(ev, RS_KEY_RESULT));

	tap_ok(store_repair_stock(rs, ev, true, 40, 42) == -EAGAIN &&
			store_repair_stock(rs, ev, false, 0, 42) == -EAGAIN &&
			raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)) != 42,
		"store_repair_stock: a stock that moved since the reading (or was made) is left alone");
	redisReply *was = raw_cmd(raw, "GET %s", key(ev, RS_KEY_STOCK));

	tap_ok(was->type == REDIS_REPLY_STRING &&
			store_repair_stock(rs, ev, true, strtoll(was->str, NULL, 10), 42) == 0,
		"store_repair_stock: the stock as read is set");
	freeReplyObject(was);
	tap_eq_int(store_repair_buyers(rs, ev, add, 3), 0, "store_repair_buyers");
	tap_ok(is_buyer(raw, ev, 3) == 1 && is_buyer(raw, ev, 77) == 1 &&
			raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)) == 42,
		"  the missing users are buyers again, the stock is set");
	redisReply *h = raw_cmd(raw, "HMGET %s 2 3 77", key(ev, RS_KEY_RESULT));

	tap_ok(h->type == REDIS_REPLY_ARRAY && h->elements == 3 &&
			before->type == REDIS_REPLY_STRING &&
			h->element[0]->type == REDIS_REPLY_STRING &&
			strcmp(h->element[0]->str, before->str) == 0 &&
			h->element[1]->type == REDIS_REPLY_STRING &&
			strcmp(h->element[1]->str, "O:103:9101:1767225910000") == 0 &&
			h->element[2]->type == REDIS_REPLY_STRING &&
			strcmp(h->element[2]->str, "P:177:9102:1767225911000") == 0,
		"  their fields are their orders' (O:, P:), an existing field is left alone");
	freeReplyObject(h);
	freeReplyObject(before);
	struct wire_result_query rq[2] = {{.user = 3, .event = ev}, {.user = 77, .event = ev}};
	struct store_result rr[2];

	tap_ok(store_results(rs, rq, 2, rr) == 0 && rr[0].verdict == WIRE_V_ORDERED &&
			rr[0].reservation_id == 103 && rr[0].order_id == 9101 &&
			rr[0].pay_deadline_ms == UINT64_C(1767225910000) &&
			rr[1].verdict == WIRE_V_PAID && rr[1].reservation_id == 177 &&
			rr[1].order_id == 9102 && rr[1].pay_deadline_ms == UINT64_C(1767225911000),
		"  a result query of a repaired user answers its order: ordered with its id and "
		"deadline, paid");
	const struct store_buyer bad[] = {{5, {WIRE_V_RESERVED, 105, 0, 0}}};

	tap_ok(store_repair_buyers(rs, ev, bad, 1) == -EINVAL && is_buyer(raw, ev, 5) == 0,
		"  a buyer without an order's result is refused, nothing written");
	/* Users 6 and 7, whose orders expired and were cancelled, their items back, lost with
	 * their releases: restored X: and C:, the releases' members with them, the stock alone;
	 * a release of either order again returns nothing. */
	const struct store_buyer ended[] = {
		{6, {WIRE_V_EXPIRED, 106, 9106, UINT64_C(1767225916000)}},
		{7, {WIRE_V_CANCELLED, 107, 9107, UINT64_C(1767225917000)}},
	};
	long long released = raw_int(raw, "SCARD %s", key(ev, RS_KEY_RELEASED));

	tap_ok(store_repair_buyers(rs, ev, ended, 2) == 0 &&
			store_repair_buyers(rs, ev, ended, 2) == 0 &&
			raw_int(raw, "SISMEMBER %s 106:6", key(ev, RS_KEY_RELEASED)) == 1 &&
			raw_int(raw, "SISMEMBER %s 107:7", key(ev, RS_KEY_RELEASED)) == 1 &&
			raw_int(raw, "SCARD %s", key(ev, RS_KEY_RELEASED)) == released + 2 &&
			raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)) == 42,
		"store_repair_buyers of an expired and a cancelled order (twice): their releases "
		"in the released set once, the stock alone");
	struct store_result er[2];
	struct wire_result_query eq[2] = {{.user = 6, .event = ev}, {.user = 7, .event = ev}};

	tap_ok(store_results(rs, eq, 2, er) == 0 && er[0].verdict == WIRE_V_EXPIRED &&
			er[0].order_id == 9106 && er[1].verdict == WIRE_V_CANCELLED &&
			er[1].order_id == 9107,
		"  their results: expired, cancelled, with their orders");
	tap_ok(store_release(rs, ev, 106, 6, 1, NULL) == 0 &&
			store_release(rs, ev, 107, 7, 1, NULL) == 0 &&
			raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)) == 42,
		"  a release of either order again returns nothing (0), the stock still 42");
	/* Users 8 and 9 reserved again after Redis lost them (bare reservations 208, 209): their
	 * orders' fields replace those reservations; user 6's field, not the reservation named,
	 * stays. */
	raw_int(raw, "HSET %s 8 208 9 209", key(ev, RS_KEY_RESULT));
	const struct store_buyer orphans[] = {
		{8, {WIRE_V_EXPIRED, 108, 9108, UINT64_C(1767225918000)}},
		{9, {WIRE_V_ORDERED, 109, 9109, UINT64_C(1767225919000)}},
		{6, {WIRE_V_ORDERED, 106, 9106, UINT64_C(1767225916000)}},
	};
	const uint64_t bare_rids[] = {208, 209, 206};
	redisReply *o = NULL;

	tap_ok(store_repair_orphans(rs, ev, orphans, bare_rids, 3) == 0 &&
			(o = raw_cmd(raw, "HMGET %s 8 9 6", key(ev, RS_KEY_RESULT))) != NULL &&
			o->type == REDIS_REPLY_ARRAY && o->elements == 3 &&
			strcmp(o->element[0]->str, "X:108:9108:1767225918000") == 0 &&
			strcmp(o->element[1]->str, "O:109:9109:1767225919000") == 0 &&
			strcmp(o->element[2]->str, "X:106:9106:1767225916000") == 0 &&
			raw_int(raw, "SISMEMBER %s 108:8", key(ev, RS_KEY_RELEASED)) == 1 &&
			raw_int(raw, "SISMEMBER %s 109:9", key(ev, RS_KEY_RELEASED)) == 0 &&
			raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)) == 42,
		"store_repair_orphans: bare reservations replaced by their users' orders (X: with "
		"its released member, O:), another field left, the stock alone");
	if (o != NULL)
		freeReplyObject(o);
	store_purge_event(rs, ev);
}

/* --- Two control planes at once ------------------------------------------------------------ */

/*
 * Two processes race on the same users while stock remains: each sends the SHARED users first,
 * in the same order and in the same batches, then OWN users that only it sends. Stock is more
 * than one process sends but less than all distinct users, so however the two are scheduled
 * (even one wholly after the other) the second still has stock when it reaches users the first
 * already holds: only the duplicate check of reserve.lua keeps them from a second item, and the
 * sale still sells out.
 */
static void
test_two_processes(void)
{
	enum { SHARED = 1000, OWN = 1000, STOCK = 2500, PER = 50 };
	enum { USERS = SHARED + 2 * OWN };
	const uint32_t ev = 600;
	int fd[2][2];
	pid_t pid[2];
	static uint8_t got[2][USERS + 1]; /* 1 when that process was told RESERVED */

	store_purge_event(rs, ev);
	raw_preheat(ev, STOCK);
	for (unsigned p = 0; p < 2; p++) {
		if (pipe(fd[p]) != 0)
			exit(1);
		pid[p] = fork();
		if (pid[p] == 0) {
			/* Process p sends users 1..SHARED, then its own block of OWN users. */
			struct store_conn_config c = {.unix_path = srv.sock};
			char err[256];
			struct store *mine = store_open(&c, err, sizeof(err));
			static struct wire_reserve res[PER];
			uint8_t v[PER];
			const unsigned count = SHARED + OWN;

			if (mine == NULL)
				_exit(2);
			for (unsigned done = 0; done < count; done += PER) {
				unsigned k = count - done < PER ? count - done : PER;
				struct store_batch b = {
					.event = ev, .n = k, .res = res, .verdicts = v};

				for (unsigned i = 0; i < k; i++) {
					uint64_t n = done + i + 1;
					uint64_t u = n <= SHARED ? n : n + p * OWN;

					res[i] = (struct wire_reserve){
						.reservation_id = (uint64_t)(p + 1) << 40 | u,
						.user = u,
						.admitted_ms = 1,
						.event = ev};
				}
				if (store_reserve(mine, &b, 1) != 0)
					_exit(3);
				for (unsigned i = 0; i < k; i++)
					if (v[i] == WIRE_V_RESERVED &&
						write(fd[p][1], &res[i].user, 8) != 8)
						_exit(4);
			}
			store_close(mine);
			_exit(0);
		}
		close(fd[p][1]);
	}
	unsigned told = 0, twice = 0, shared_once = 0;

	for (unsigned p = 0; p < 2; p++) {
		uint64_t u;
		int status;

		while (read(fd[p][0], &u, 8) == 8)
			if (u >= 1 && u <= USERS) {
				got[p][u] = 1;
				told++;
			}
		close(fd[p][0]);
		waitpid(pid[p], &status, 0);
		tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			"two processes: process %u decided all its batches", p);
	}
	for (unsigned u = 1; u <= USERS; u++)
		twice += got[0][u] && got[1][u];
	/* When either reaches a shared user at most SHARED + OWN items are gone (the shared users
	 * and the other's own): stock is left, so one of the two holds each shared user. */
	for (unsigned u = 1; u <= SHARED; u++)
		shared_once += got[0][u] + got[1][u] == 1;
	long long buyers = n_buyers(raw, ev);

	tap_eq_int(told, STOCK, "  exactly the stock was reserved across both (no oversell)");
	tap_eq_int(twice, 0, "  no user was reserved by both");
	tap_eq_int(shared_once, SHARED, "  every user sent by both was reserved exactly once");
	tap_eq_int(buyers, STOCK, "  buyers == stock");
	tap_eq_int(outbox_reservations(raw, ev, NULL, 0), buyers,
		"  reservations in the outbox == buyers");
	tap_eq_int(raw_int(raw, "GET %s", key(ev, RS_KEY_STOCK)), 0, "  stock 0, never negative");
}

/* --- Outages ----------------------------------------------------------------------------- */

/* Calls store_ensure_connected() until it connects, for at most 15 s; true when it did. */
static bool
wait_connected(struct store *s)
{
	uint64_t deadline = redis_server_now_ms() + 15000;

	while (redis_server_now_ms() < deadline) {
		if (store_ensure_connected(s) == 0)
			return true;
		redis_server_sleep_ms(10);
	}
	return false;
}

/* Counts lines of path containing needle. */
static unsigned
count_lines(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned n = 0;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, needle) != NULL;
	if (f != NULL)
		fclose(f);
	return n;
}

static void
test_restart_without_persistence(void)
{
	const uint32_t ev = 700;
	uint64_t users[] = {1, 2, 3};
	uint8_t v[3];
	char logpath[128];
	int saved = dup(2);
	unsigned notconn = 0, calls = 0;
	struct store_stats st;

	store_preheat(rs, ev, 10);
	snprintf(logpath, sizeof(logpath), "%s/store.log", srv.dir);
	int lf = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	fflush(stderr);
	dup2(lf, 2);
	close(lf);
	redis_server_kill(&srv, SIGKILL);
	for (unsigned i = 0; i < 40; i++, calls++) {
		uint64_t u = 10 + i;
		struct wire_reserve r = mkres(ev, u);
		struct store_batch b = {.event = ev, .n = 1, .res = &r, .verdicts = v};

		notconn += store_reserve(rs, &b, 1) == -ENOTCONN && v[0] == WIRE_V_RETRY;
		redis_server_sleep_ms(5);
	}
	int restarted = redis_server_restart(&srv);
	bool back = restarted == 0 && wait_connected(rs);

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	tap_eq_int(
		notconn, calls, "Redis killed: every call answers -ENOTCONN and RETRY, no crash");
	tap_ok(back, "Redis restarted: the store connects again");
	tap_eq_int(count_lines(logpath, "lost the connection"), 1, "  one warning for the outage");
	tap_eq_int(count_lines(logpath, "again after"), 1, "  one notice when it is back");
	if (raw != NULL)
		redisFree(raw);
	raw = raw_connect(&srv);
	tap_eq_int(decide(ev, users, 3, 3, v, NULL), 0,
		"  persistence off: the stock is gone, so answers are sold out (stock 0)");
	tap_ok(v[0] == WIRE_V_SOLD_OUT && v[2] == WIRE_V_SOLD_OUT, "  verdicts: sold out");
	store_get_stats(rs, &st);
	tap_ok(st.outages >= 1 && st.connects >= 2,
		"  stats: %" PRIu64 " outage(s), %" PRIu64 " connections", st.outages, st.connects);
}

static void
test_stopped_server(void)
{
	/* Redis frozen (SIGSTOP) past the command timeout: the call gives up with -ENOTCONN, and
	 * the batch, already in Redis's socket buffer, may still run once Redis goes on. */
	const uint32_t ev = 701;
	struct store_conn_config c = {.unix_path = srv.sock, .command_timeout_ms = 300};
	char err[256];
	struct store *s = store_open(&c, err, sizeof(err));
	struct wire_reserve r[2] = {mkres(ev, 1), mkres(ev, 2)};
	uint8_t v[2];
	struct store_batch b = {.event = ev, .n = 2, .res = r, .verdicts = v};

	store_purge_event(rs, ev);
	store_preheat(rs, ev, 5);
	kill(srv.pid, SIGSTOP);
	int rc = s != NULL ? store_reserve(s, &b, 1) : -1;

	kill(srv.pid, SIGCONT);
	tap_ok(rc == -ENOTCONN && v[0] == WIRE_V_RETRY, "Redis stopped: the call times out with "
							"-ENOTCONN and RETRY");
	tap_ok(s != NULL && wait_connected(s), "  connects again when Redis goes on");
	/* The retry (new reservation ids, as a client's retry gets) learns the truth. */
	r[0] = mkres(ev, 1);
	r[1] = mkres(ev, 2);
	rc = s != NULL ? store_reserve(s, &b, 1) : -1;
	long long buyers = n_buyers(raw, ev);

	tap_ok(rc == 0 && ((buyers == 2 && v[0] == WIRE_V_DUPLICATE && v[1] == WIRE_V_DUPLICATE) ||
				  (buyers == 2 && v[0] == WIRE_V_RESERVED &&
					  v[1] == WIRE_V_RESERVED)),
		"  the retry is consistent with what ran: %lld buyers, %s then %s", buyers,
		wire_verdict_name(v[0]), wire_verdict_name(v[1]));
	tap_eq_int(outbox_reservations(raw, ev, NULL, 0), 2,
		"  reservations in the outbox == buyers == 2");
	store_close(s);
}

/* The append-only test: a thread kills Redis while the main thread streams batches. */
static struct redis_server aof_srv;
static atomic_int aof_phase; /* 0 running, 1 go kill, 2 killed, 3 restarted, -1 failed */

static void *
killer(void *arg)
{
	unsigned delay = *(unsigned *)arg;

	while (atomic_load(&aof_phase) != 1)
		redis_server_sleep_ms(1);
	redis_server_sleep_ms(delay);
	redis_server_kill(&aof_srv, SIGKILL);
	atomic_store(&aof_phase, 2);
	redis_server_sleep_ms(200);
	atomic_store(&aof_phase, redis_server_restart(&aof_srv) == 0 ? 3 : -1);
	return NULL;
}

static void
test_kill_with_aof(void)
{
	enum { PER = 100, DEPTH = 4, MAX_BATCHES = 4000, STOCK = 1000000 };
	const uint32_t ev = 800;
	static uint8_t told[MAX_BATCHES * PER + 1];	 /* the verdict reported for a user */
	static uint8_t uncertain[MAX_BATCHES * PER + 1]; /* in a batch that failed */
	static struct wire_reserve res[DEPTH][PER];
	static uint8_t v[DEPTH][PER];
	unsigned queue[MAX_BATCHES], qhead = 0, qtail = 0, next_batch = 0;
	unsigned failed_calls = 0, after_restart = 0, told_twice = 0;
	struct store_conn_config c = {.unix_path = NULL, .command_timeout_ms = 1000};
	char err[256];
	pthread_t th;
	unsigned delay = 3;

	if (redis_server_start(&aof_srv, false, true) != 0) {
		tap_ok(0, "append-only redis-server starts");
		return;
	}
	c.unix_path = aof_srv.sock;
	struct store *s = store_open(&c, err, sizeof(err));

	tap_ok(s != NULL, "append-only Redis (appendfsync always): store opens");
	if (s == NULL)
		return;
	store_preheat(s, ev, STOCK);
	atomic_store(&aof_phase, 0);
	pthread_create(&th, NULL, killer, &delay);
	uint64_t deadline = redis_server_now_ms() + 60000;

	/* Stream batches of new users; a batch that failed is sent again (new reservation ids,
	 * like a client's retry) before new ones. Stop 20 decided batches after the restart. */
	while (after_restart < 20 && next_batch + DEPTH < MAX_BATCHES &&
		redis_server_now_ms() < deadline && atomic_load(&aof_phase) >= 0) {
		struct store_batch b[DEPTH];
		unsigned idx[DEPTH];

		for (unsigned d = 0; d < DEPTH; d++) {
			idx[d] = qhead != qtail ? queue[qhead++ % MAX_BATCHES] : next_batch++;
			for (unsigned i = 0; i < PER; i++)
				res[d][i] = mkres(ev, (uint64_t)idx[d] * PER + i + 1);
			b[d] = (struct store_batch){
				.event = ev, .n = PER, .res = res[d], .verdicts = v[d]};
		}
		int rc = store_reserve(s, b, DEPTH);
		int phase = atomic_load(&aof_phase);

		for (unsigned d = 0; d < DEPTH; d++) {
			if (b[d].status != 0) {
				queue[qtail++ % MAX_BATCHES] = idx[d];
				for (unsigned i = 0; i < PER; i++)
					uncertain[res[d][i].user] = 1;
				continue;
			}
			for (unsigned i = 0; i < PER; i++) {
				uint64_t u = res[d][i].user;

				told_twice +=
					told[u] == WIRE_V_RESERVED && v[d][i] == WIRE_V_RESERVED;
				if (told[u] != WIRE_V_RESERVED)
					told[u] = v[d][i];
			}
			after_restart += phase == 3;
		}
		if (rc != 0) {
			failed_calls++;
			redis_server_sleep_ms(5);
		}
		if (phase == 0 && next_batch >= 40)
			atomic_store(&aof_phase, 1);
	}
	pthread_join(th, NULL);
	tap_ok(failed_calls > 0 && after_restart >= 20,
		"  killed mid-stream (%u calls failed), decided again after the restart",
		failed_calls);

	/* Every reservation acknowledged before the kill survived it. */
	redisContext *r = raw_connect(&aof_srv);
	unsigned users = next_batch * PER, lost = 0, unexplained = 0, buyers_seen = 0,
		 ran_unacked = 0;

	for (unsigned u = 1; u <= users; u++) {
		long long m = is_buyer(r, ev, u);

		buyers_seen += m == 1;
		lost += told[u] == WIRE_V_RESERVED && m != 1;
		/* A buyer nobody was told about ran in a batch whose reply was lost; its retry
		 * said DUPLICATE. */
		unexplained += m == 1 && told[u] != WIRE_V_RESERVED &&
			       !(uncertain[u] && told[u] == WIRE_V_DUPLICATE);
		ran_unacked += m == 1 && told[u] == WIRE_V_DUPLICATE;
	}
	tap_diag("%u users ran in a batch whose reply was lost; their retry was told duplicate",
		ran_unacked);
	long long nbuyers = n_buyers(r, ev);
	long long stock = raw_int(r, "GET %s", key(ev, RS_KEY_STOCK));
	static uint64_t ob[MAX_BATCHES * PER][3];
	long outbox = outbox_reservations(r, ev, ob, MAX_BATCHES * PER);

	tap_eq_int(lost, 0, "  no acknowledged reservation was lost");
	tap_eq_int(told_twice, 0, "  no user was told RESERVED twice");
	tap_eq_int(unexplained, 0, "  every buyer was told RESERVED, or DUPLICATE after a failure");
	tap_eq_int(nbuyers, buyers_seen, "  all buyers are users we sent");
	tap_eq_int(stock + nbuyers, STOCK, "  stock + buyers == preheated stock");
	tap_eq_int(outbox, nbuyers, "  reservations in the outbox == buyers");

	/* Every reservation in the outbox has a buyer, and none appears twice. */
	static uint8_t in_outbox[MAX_BATCHES * PER + 1];
	unsigned orphan = 0, doubled = 0;

	for (long e = 0; e < outbox && e < MAX_BATCHES * PER; e++) {
		uint64_t u = ob[e][0];

		if (u == 0 || u > users || is_buyer(r, ev, u) != 1)
			orphan++;
		else
			doubled += in_outbox[u]++ > 0;
	}
	tap_ok(orphan == 0 && doubled == 0,
		"  every reservation in the outbox has a buyer, once (%u, %u)", orphan, doubled);
	redisFree(r);
	store_close(s);
	redis_server_stop(&aof_srv);
}

/* --- Opening ------------------------------------------------------------------------------ */

static void
test_open(void)
{
	char err[256] = "";
	char longpath[200];
	struct store_conn_config c = {0};
	struct wire_reserve r = mkres(1, 1);
	uint8_t v[1] = {0};
	struct store_batch b = {.event = 1, .n = 1, .res = &r, .verdicts = v};

	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	c.unix_path = longpath;
	tap_ok(store_open(&c, err, sizeof(err)) == NULL && strstr(err, "socket path") != NULL,
		"open: a socket path too long is refused: %s", err);
	c.unix_path = "/nonexistent/redis.sock";
	tap_ok(store_open(&c, err, sizeof(err)) == NULL && strstr(err, "cannot use Redis") != NULL,
		"open: no server there: %s", err);
	c.backoff_min_ms = 500;
	c.backoff_max_ms = 100;
	c.unix_path = srv.sock;
	tap_ok(store_open(&c, err, sizeof(err)) == NULL && strstr(err, "backoff") != NULL,
		"open: backoff min > max is refused: %s", err);
	c = (struct store_conn_config){.unix_path = "/nonexistent/redis.sock", .start_offline = true};
	int saved = dup(2), null = open("/dev/null", O_WRONLY);

	dup2(null, 2); /* the expected warning */
	struct store *off = store_open(&c, err, sizeof(err));

	dup2(saved, 2);
	close(saved);
	close(null);
	tap_ok(off != NULL && !store_connected(off), "open: start_offline gives a store that is down");
	tap_ok(off != NULL && store_reserve(off, &b, 1) == -ENOTCONN && v[0] == WIRE_V_RETRY,
		"  which answers -ENOTCONN and RETRY");
	store_close(off);

	char k[32];

	tap_ok(store_key(k, sizeof(k), 4294967295u, RS_KEY_RELEASED) > 0 &&
			strcmp(k, "fg:{4294967295}:released") == 0,
		"key names share the event's hash tag: %s", k);
	tap_eq_int(store_key(k, 8, 1, RS_KEY_STOCK), -ENOSPC, "store_key: -ENOSPC when too small");

	c = (struct store_conn_config){.host = "127.0.0.1", .port = srv.port};
	struct store *tcp = store_open(&c, err, sizeof(err));

	tap_ok(tcp != NULL && store_purge_event(tcp, 1) == 0, "open over TCP 127.0.0.1:%u", srv.port);
	store_close(tcp);
}


/*
 * check_settings: a Redis that could lose an acknowledged reservation (no append-only file,
 * appendfsync other than always) or evict keys is refused, with the setting, its value and what
 * is needed in the message; once all three are right, the store connects.
 */
static void
test_settings_check(void)
{
	static const struct {
		const char *name, *value, *want;
	} cases[] = {
		{"appendonly", "no", "appendonly no, flashgate needs appendonly yes"},
		{"appendonly", "yes", NULL},
		{"appendfsync", "everysec",
			"appendfsync everysec, flashgate needs appendfsync always"},
		{"appendfsync", "always", NULL},
		{"maxmemory-policy", "allkeys-lru",
			"maxmemory-policy allkeys-lru, flashgate needs maxmemory-policy noeviction"},
	};
	struct store_conn_config c = {.unix_path = srv.sock, .check_settings = true};
	char err[512];
	struct store *s;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		freeReplyObject(raw_cmd(raw, "CONFIG SET %s %s", cases[i].name, cases[i].value));
		if (cases[i].want == NULL)
			continue;
		err[0] = '\0';
		s = store_open(&c, err, sizeof(err));
		tap_ok(s == NULL && strstr(err, cases[i].want) != NULL,
			"check_settings refuses a Redis with %s (%s)", cases[i].want, err);
		store_close(s);
		c.start_offline = true;
		s = store_open(&c, err, sizeof(err));
		tap_ok(s == NULL, "also with start_offline: reached but unfit is an error, not an outage");
		store_close(s);
		c.start_offline = false;
	}
	freeReplyObject(raw_cmd(raw, "CONFIG SET maxmemory-policy noeviction"));
	s = store_open(&c, err, sizeof(err));
	tap_ok(s != NULL, "check_settings accepts appendonly yes, appendfsync always, noeviction %s",
		s ? "" : err);
	store_close(s);
	freeReplyObject(raw_cmd(raw, "CONFIG SET appendfsync everysec"));
	c.check_settings = false;
	s = store_open(&c, err, sizeof(err));
	tap_ok(s != NULL, "without check_settings (redis.unsafe_settings = yes) it connects %s",
		s ? "" : err);
	store_close(s);
	freeReplyObject(raw_cmd(raw, "CONFIG SET appendonly no"));
}

/* AUTH: an ACL user and its password from a 0600 file; a wrong password or a readable file is
 * refused with a clear error. */
static void
test_auth(void)
{
	char good[160], bad[160], open_file[160], err[512];
	struct store_conn_config c = {.unix_path = srv.sock, .user = "fgshop"};
	struct store *s;
	FILE *f;

	snprintf(good, sizeof(good), "%s/pw-good", srv.dir);
	snprintf(bad, sizeof(bad), "%s/pw-bad", srv.dir);
	snprintf(open_file, sizeof(open_file), "%s/pw-open", srv.dir);
	freeReplyObject(raw_cmd(raw, "ACL SETUSER fgshop on >s3cret-pw ~* &* +@all"));
	f = fopen(good, "w");
	fputs("s3cret-pw\n", f);
	fclose(f);
	f = fopen(bad, "w");
	fputs("wrong-pw\n", f);
	fclose(f);
	f = fopen(open_file, "w");
	fputs("s3cret-pw\n", f);
	fclose(f);
	chmod(good, 0600);
	chmod(bad, 0600);
	chmod(open_file, 0644);

	c.password_file = good;
	s = store_open(&c, err, sizeof(err));
	tap_ok(s != NULL,
		"AUTH as an ACL user with the password from a 0600 file %s", s ? "" : err);
	store_close(s);
	c.password_file = bad;
	c.start_offline = true;
	s = store_open(&c, err, sizeof(err));
	tap_ok(s == NULL && strstr(err, "AUTH as fgshop refused") != NULL,
		"a wrong password is refused at start with a clear error (%s)", err);
	store_close(s);
	c.password_file = open_file;
	s = store_open(&c, err, sizeof(err));
	tap_ok(s == NULL && strstr(err, "redis.password_file") != NULL,
		"a password file others may read is refused (%s)", err);
	store_close(s);
	freeReplyObject(raw_cmd(raw, "ACL DELUSER fgshop"));
	unlink(good);
	unlink(bad);
	unlink(open_file);
}

int
main(int argc, char **argv)
{
	const char *doc = argc > 1 ? argv[1] : "../shared/seed-flash-sale.md";
	struct store_conn_config c = {0};
	char err[256];

	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	test_started_ms = (uint64_t)now.tv_sec * 1000 - 1;
	log_set_level(LOG_LEVEL_NOTICE);
	if (redis_server_start(&srv, true, false) != 0) {
		tap_ok(0, "redis-server starts (is it installed? apt-get install redis-server)");
		return tap_done();
	}
	c.unix_path = srv.sock;
	rs = store_open(&c, err, sizeof(err));
	if (!tap_ok(rs != NULL, "store_open over the Unix socket %s", rs ? "" : err))
		return tap_done();
	raw = raw_connect(&srv);

	test_open();
	test_settings_check();
	test_auth();
	test_exact_stock();
	test_duplicates();
	test_seed_equivalence(doc);
	test_release_and_results();
	test_pipeline();
	test_outbox_reading();
	test_two_processes();
	test_sale_window();
	test_draw();
	test_waiting_final();
	test_stopped_server();
	test_restart_without_persistence();
	test_kill_with_aof();

	redisFree(raw);
	store_close(rs);
	redis_server_stop(&srv);
	return tap_done();
}
