/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/admin_reconcile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin/admin_answer.h"
#include "common/log.h"
#include "common/test_hook.h"
#include "common/wire.h"
#include "store/store_event.h"
#include "store/store_reconcile.h"
#include "store/store_result.h"

/*
 * One reading of an event's figures: PostgreSQL's counts and active users, then Redis's state
 * and which of those users it has no buyer for. Every figure is true at its own moment; during a
 * live sale the moments differ (an expiry recorded in PostgreSQL, then its release applied in
 * Redis, between the two reads), so one reading alone can show a difference that is not there.
 */
struct reading {
	struct pg_event_counts pc;
	struct store_event_state rst;
	/* Users with an order (any state) and no buyer in Redis, each as the field a repair
	 * writes (restored_field()); n_missing_released of them X: or C:, whose releases Redis
	 * took and lost with the field, and gets back with it. */
	struct store_buyer *missing;
	size_t n_missing, n_missing_released;
	/* Users with an order whose field holds another reservation (orphan_rid[i]), decided
	 * after Redis lost the first: it can never become an order. Each as the field a repair
	 * writes instead (restored_field()); n_orphans_released of them X: or C:. */
	struct store_buyer *orphans;
	uint64_t *orphan_rid;
	size_t n_orphans, n_orphans_released;
	/* Buyers whose field missed their order's final state (paid, expired, cancelled) that
	 * PostgreSQL has handed over, done (find_behind()); each with PostgreSQL's order. */
	struct store_buyer *behind;
	size_t n_behind;
};

/* The buyer of PostgreSQL's order o, with that order's result. */
static struct store_buyer
buyer_of(const struct pg_active_order *o)
{
	return (struct store_buyer){
		.user = o->user,
		.result = {.verdict = o->verdict,
			.reservation_id = o->reservation_id,
			.order_id = o->order_id,
			.pay_deadline_ms = o->pay_deadline_ms},
	};
}

/* Whether Redis's result have (verdict 0: no field) is short of order o's final state, which
 * PostgreSQL has handed to the order writer: the field never took it. That is an ordered field
 * (a paid one too, for an order expired or cancelled), or the bare reservation the order was
 * made from, whose ordered step was lost with the final one (a failover that lost the order
 * writer's last writes). No field is not behind: a buyer Redis lost altogether is a missing one
 * (find_missing()); a bare reservation of another id is an orphan (find_orphans()). */
static bool
field_behind(const struct store_result *have, const struct pg_active_order *o)
{
	if (have->verdict == WIRE_V_RESERVED)
		return have->reservation_id == o->reservation_id;
	if (o->verdict == WIRE_V_PAID)
		return have->verdict == WIRE_V_ORDERED;
	return have->verdict == WIRE_V_ORDERED || have->verdict == WIRE_V_PAID;
}

/*
 * The buyers of event id whose field is behind PostgreSQL (field_behind()) into r->behind. Such
 * a field is what a repair leaves when PostgreSQL or Redis failed between its write and its
 * second look (repair_second_look()): the order paid or expired while the buyer had no field,
 * the order writer's change found nothing, and the field the repair wrote says ordered. No later
 * change comes for it, so reconcile finds it here, and a repair looks at it again. Returns 0, or
 * -1 with err.
 */
static int
find_behind(struct cp_ctx *c, uint32_t id, struct reading *r, char *err, size_t errlen)
{
	struct pg_active_order *o = NULL;
	size_t n = 0;
	int rc;

	if (pg_event_handed_orders(c->pg, id, &o, &n, err, errlen) != 0)
		return -1;
	r->behind = calloc(n ? n : 1, sizeof(*r->behind));
	if (r->behind == NULL) {
		snprintf(err, errlen, "reconcile: out of memory");
		free(o);
		return -1;
	}
	for (size_t i = 0; i < n; i += RS_BATCH_MAX) {
		unsigned k = (unsigned)(n - i < RS_BATCH_MAX ? n - i : RS_BATCH_MAX);
		struct wire_result_query q[RS_BATCH_MAX];
		struct store_result have[RS_BATCH_MAX];

		for (unsigned m = 0; m < k; m++)
			q[m] = (struct wire_result_query){.user = o[i + m].user, .event = id};
		if ((rc = store_results(c->rs, q, k, have)) != 0) {
			snprintf(err, errlen, "reconcile: Redis: %s", strerror(-rc));
			free(o);
			return -1;
		}
		for (unsigned m = 0; m < k; m++)
			if (field_behind(&have[m], &o[i + m]))
				r->behind[r->n_behind++] = buyer_of(&o[i + m]);
	}
	free(o);
	return 0;
}

/*
 * The field a repair writes for the buyer of PostgreSQL's order o, which Redis lost: the order's
 * own (O:, P:, X:, C:), but O: for an order expired or cancelled whose release is still to be
 * applied: its buyer had O: before it, and the order writer's release.lua, finding that field,
 * returns the item once and writes X: or C: (repair_second_look() hands the release back, should
 * the order writer have tried it on no field meanwhile). An X: or C: field (the release applied)
 * comes back with the release's member of the released set (store_repair_buyers()): the item
 * went back to the stock then, and a second release of the order returns nothing.
 */
static struct store_buyer
restored_field(const struct pg_active_order *o)
{
	struct store_buyer b = buyer_of(o);

	if (o->release_pending)
		b.result.verdict = WIRE_V_ORDERED;
	return b;
}

/* Whether buyer b's field, restored, says its item went back (X: or C:). */
static bool
restored_released(const struct store_buyer *b)
{
	return b->result.verdict == WIRE_V_EXPIRED || b->result.verdict == WIRE_V_CANCELLED;
}

/*
 * Among orders o[0..k) (1..RS_BATCH_MAX) of event id, whose users miss[m] says have a field, the
 * users whose field holds a reservation other than their order's, appended to r->orphans.
 * Returns 0, or -1 with err.
 */
static int
find_orphans(struct cp_ctx *c, uint32_t id, const struct pg_active_order *o, unsigned k,
	const uint8_t *miss, struct reading *r, char *err, size_t errlen)
{
	struct wire_result_query q[RS_BATCH_MAX];
	struct store_result have[RS_BATCH_MAX];
	int rc;

	for (unsigned m = 0; m < k; m++)
		q[m] = (struct wire_result_query){.user = o[m].user, .event = id};
	if ((rc = store_results(c->rs, q, k, have)) != 0) {
		snprintf(err, errlen, "reconcile: Redis: %s", strerror(-rc));
		return -1;
	}
	for (unsigned m = 0; m < k; m++) {
		if (miss[m] || have[m].verdict != WIRE_V_RESERVED ||
			have[m].reservation_id == o[m].reservation_id)
			continue;
		r->orphan_rid[r->n_orphans] = have[m].reservation_id;
		r->orphans[r->n_orphans] = restored_field(&o[m]);
		r->n_orphans_released += restored_released(&r->orphans[r->n_orphans]);
		r->n_orphans++;
	}
	return 0;
}

/*
 * Appends to r->missing and r->orphans (room for n more each) the buyers of orders o[0..n) of
 * event id that have no field in Redis, and those whose field holds another reservation
 * (find_orphans()), each as restored_field(). Returns 0, or -1 with err.
 */
static int
find_missing(struct cp_ctx *c, uint32_t id, const struct pg_active_order *o, size_t n,
	struct reading *r, char *err, size_t errlen)
{
	int rc;

	for (size_t i = 0; i < n; i += RS_BATCH_MAX) {
		unsigned k = (unsigned)(n - i < RS_BATCH_MAX ? n - i : RS_BATCH_MAX);
		uint64_t users[RS_BATCH_MAX];
		uint8_t miss[RS_BATCH_MAX];

		for (unsigned m = 0; m < k; m++)
			users[m] = o[i + m].user;
		if ((rc = store_buyers_missing(c->rs, id, users, k, miss)) != 0) {
			snprintf(err, errlen, "reconcile: Redis: %s", strerror(-rc));
			return -1;
		}
		for (unsigned m = 0; m < k; m++) {
			if (!miss[m])
				continue;
			r->missing[r->n_missing] = restored_field(&o[i + m]);
			r->n_missing_released += restored_released(&r->missing[r->n_missing]);
			r->n_missing++;
		}
		if (find_orphans(c, id, o + i, k, miss, r, err, errlen) != 0)
			return -1;
	}
	return 0;
}

/* Frees what reading r holds. */
static void
reading_free(struct reading *r)
{
	free(r->missing);
	r->missing = NULL;
	free(r->orphans);
	r->orphans = NULL;
	free(r->orphan_rid);
	r->orphan_rid = NULL;
	free(r->behind);
	r->behind = NULL;
}

/*
 * Reads event id's figures into *r (reading_free() it): the buyers missing in Redis are those of
 * the orders held (pending, paid) and of those expired or cancelled, whose buyers Redis keeps
 * too (their X: or C: field: a user whose order ended cannot reserve again). Returns 0, or -1
 * with err.
 */
static int
read_once(struct cp_ctx *c, uint32_t id, struct reading *r, char *err, size_t errlen)
{
	struct pg_active_order *held = NULL, *gone = NULL;
	size_t n_held = 0, n_gone = 0;
	int rc;

	*r = (struct reading){0};
	if (pg_event_counts(c->pg, id, &r->pc, err, errlen) != 0 ||
		pg_event_active_orders(c->pg, id, &held, &n_held, err, errlen) != 0 ||
		pg_event_gone_orders(c->pg, id, &gone, &n_gone, err, errlen) != 0)
		goto fail;
	if ((rc = store_event_state(c->rs, id, &r->rst)) != 0) {
		snprintf(err, errlen, "reconcile: Redis is not reachable (%s)", strerror(-rc));
		goto fail;
	}
	r->missing = calloc(n_held + n_gone + 1, sizeof(*r->missing));
	r->orphans = calloc(n_held + n_gone + 1, sizeof(*r->orphans));
	r->orphan_rid = calloc(n_held + n_gone + 1, sizeof(*r->orphan_rid));
	if (r->missing == NULL || r->orphans == NULL || r->orphan_rid == NULL) {
		snprintf(err, errlen, "reconcile: out of memory");
		goto fail;
	}
	if (find_missing(c, id, held, n_held, r, err, errlen) != 0 ||
		find_missing(c, id, gone, n_gone, r, err, errlen) != 0)
		goto fail;
	free(held);
	free(gone);
	held = gone = NULL;
	if (find_behind(c, id, r, err, errlen) != 0)
		goto fail;
	return 0;
fail:
	free(held);
	free(gone);
	reading_free(r);
	return -1;
}

/* Whether two readings show the same figures. */
static bool
same_reading(const struct reading *a, const struct reading *b)
{
	const struct pg_event_counts *p = &a->pc, *q = &b->pc;

	for (size_t i = 0; i < a->n_missing && i < b->n_missing; i++)
		if (a->missing[i].user != b->missing[i].user ||
			a->missing[i].result.verdict != b->missing[i].result.verdict)
			return false;
	for (size_t i = 0; i < a->n_orphans && i < b->n_orphans; i++)
		if (a->orphans[i].user != b->orphans[i].user ||
			a->orphan_rid[i] != b->orphan_rid[i])
			return false;
	for (size_t i = 0; i < a->n_behind && i < b->n_behind; i++)
		if (a->behind[i].user != b->behind[i].user ||
			a->behind[i].result.verdict != b->behind[i].result.verdict)
			return false;
	return p->initial == q->initial && p->available == q->available &&
	       p->pending == q->pending && p->paid == q->paid && p->expired == q->expired &&
	       p->cancelled == q->cancelled && p->releases_pending == q->releases_pending &&
	       a->rst.stock == b->rst.stock && a->rst.preheated == b->rst.preheated &&
	       a->rst.buyers == b->rst.buyers && a->rst.outbox_len == b->rst.outbox_len &&
	       a->rst.released == b->rst.released && a->n_missing == b->n_missing &&
	       a->n_behind == b->n_behind && a->n_orphans == b->n_orphans;
}

/*
 * Reads until two readings in a row agree, at most ADMIN_RECONCILE_READINGS times: PostgreSQL
 * did not move from the first's read to the second's, nor Redis, so the second's Redis figures
 * were read while PostgreSQL held the second's: one moment of both. *r is the last reading;
 * *settled says whether it is such a one, *readings how many were taken. Returns 0, or -1 with
 * err.
 */
static int
read_settled(struct cp_ctx *c, uint32_t id, struct reading *r, bool *settled, unsigned *readings,
	char *err, size_t errlen)
{
	struct reading next;

	*settled = false;
	if (read_once(c, id, r, err, errlen) != 0)
		return -1;
	*readings = 1;
	while (!*settled && *readings < ADMIN_RECONCILE_READINGS) {
		if (read_once(c, id, &next, err, errlen) != 0) {
			reading_free(r);
			return -1;
		}
		(*readings)++;
		*settled = same_reading(r, &next);
		reading_free(r);
		*r = next;
	}
	return 0;
}

/* The figures reconcile compares, from one reading. */
struct verdict {
	int64_t in_flight; /* releases Redis has taken that PostgreSQL does not mark applied yet */
	int64_t unapplied; /* releases PostgreSQL has written that Redis has not taken yet */
	int64_t backlog, expected;
	bool stock_ok, ok;
};

/*
 * Judges one reading, as Redis would be with its missing buyers back and its orphans' fields
 * made their orders' (restored_field()): each missing one a buyer more, each X: or C: one a
 * release taken more (an orphan's reservation then holds no item: the stock gets it back). Every
 * expired or cancelled order has one release row in PostgreSQL, so (expired + cancelled - releases
 * not marked applied) releases are marked applied there; Redis has taken |released|. The difference
 * is the releases in flight: the order writer applied them in Redis and has not yet marked them (a
 * step of every release, long when the writer stopped in between), counted once, on Redis's side.
 */
static struct verdict
judge(const struct reading *r)
{
	struct verdict v;
	int64_t active_pg = (int64_t)(r->pc.pending + r->pc.paid);
	int64_t released = (int64_t)r->rst.released + (int64_t)r->n_missing_released +
			   (int64_t)r->n_orphans_released;
	int64_t held = (int64_t)r->rst.buyers + (int64_t)r->n_missing - released;
	int64_t pending = (int64_t)r->pc.releases_pending;
	int64_t marked = (int64_t)(r->pc.expired + r->pc.cancelled) - pending;

	v.in_flight = released - marked;
	v.in_flight = v.in_flight < 0 ? 0 : v.in_flight > pending ? pending : v.in_flight;
	v.unapplied = pending - v.in_flight;
	v.backlog = held - active_pg - v.unapplied;
	v.expected = (int64_t)r->pc.available - (v.backlog > 0 ? v.backlog : 0) - v.unapplied;
	v.stock_ok = r->rst.preheated && r->rst.stock == v.expected;
	/* A buyer behind (find_behind()) counts as held: an expired one's item is in neither
	 * stock until its release, handed back by the repair, brings it to Redis's. */
	v.ok = v.stock_ok && r->n_missing == 0 && r->n_orphans == 0 && r->n_behind == 0 &&
	       v.backlog >= 0;
	if (v.expected < 0)
		v.expected = 0;
	return v;
}

/*
 * Test hook (docs/operations.md): holds reconcile --repair this many ms between its reading and
 * its first write to Redis, so that a test can pay or expire an order meanwhile. Unset: no hold.
 */
#define RECONCILE_TEST_HOLD_ENV "FG_TEST_RECONCILE_HOLD_MS"

static void
repair_test_hold(uint32_t event)
{
	unsigned ms;

	if (!test_hook_ms(RECONCILE_TEST_HOLD_ENV, &ms))
		return;
	LOG_WARN("test hook " RECONCILE_TEST_HOLD_ENV
		 ": reconcile --repair of event %u held %u ms between its reading and its write "
		 "(for tests only: unset it in production)",
		event, ms);
	nanosleep(&(struct timespec){.tv_sec = (time_t)(ms / 1000),
			  .tv_nsec = (long)(ms % 1000) * 1000000L},
		NULL);
}

/* What the repair's second look found moved since the reading. */
struct repair_moved {
	uint64_t paid;	   /* orders paid meanwhile: their fields made paid */
	uint64_t released; /* orders expired or cancelled meanwhile: releases handed back */
};

/*
 * The second look at the orders of buyers b[0..n) (1..RS_BATCH_MAX), whose fields the repair
 * has just written from the reading. An order paid, expired or cancelled in PostgreSQL between
 * the reading and that write may have been handled by the order writer while the buyer had no
 * field: store_results_paid() and release.lua change only a buyer's field, so the payment left
 * nothing in Redis and the release neither its result nor its stock, and the field written
 * after says what the reading said. Read now, after the write, each such order's state is
 * seen here, or else its change comes later and finds the field: a paid one gets its P: here
 * (store_results_paid(), the order writer's own writer), an expired or cancelled one's release
 * is handed back to the order writer, whose release.lua now finds the field and returns the
 * item once (its released set) with its X: or C:. A buyer restored with O: for an order that had
 * expired or been cancelled before the reading, its release still to be applied
 * (restored_field()), is one of these too: its release may have found no field meanwhile.
 * Returns 0 or < 0 with err.
 */
static int
repair_second_look(struct cp_ctx *c, uint32_t ev, const struct store_buyer *b, unsigned n,
	struct repair_moved *moved, char *err, size_t errlen)
{
	uint64_t *ids = malloc(n * sizeof(*ids)), *gone = malloc(n * sizeof(*gone)), requeued;
	uint8_t *verdict = malloc(n);
	struct store_paid *paid = malloc(n * sizeof(*paid));
	unsigned k = 0, n_paid = 0, n_gone = 0, stored;
	int rc = -ENOMEM;

	if (ids == NULL || gone == NULL || verdict == NULL || paid == NULL) {
		snprintf(err, errlen, "reconcile: out of memory");
		goto out;
	}
	for (unsigned i = 0; i < n; i++)
		if (b[i].result.verdict == WIRE_V_ORDERED)
			ids[k++] = b[i].result.order_id;
	rc = k == 0 ? 0 : pg_event_orders_verdicts(c->pg, ev, ids, k, verdict, err, errlen);
	for (unsigned i = 0, j = 0; rc == 0 && i < n; i++) {
		if (b[i].result.verdict != WIRE_V_ORDERED)
			continue;
		if (verdict[j] == WIRE_V_PAID)
			paid[n_paid++] = (struct store_paid){.user = b[i].user,
				.reservation_id = b[i].result.reservation_id,
				.order_id = b[i].result.order_id,
				.pay_deadline_ms = b[i].result.pay_deadline_ms};
		else if (verdict[j] == WIRE_V_EXPIRED || verdict[j] == WIRE_V_CANCELLED)
			gone[n_gone++] = ids[j];
		j++;
	}
	if (rc == 0 && n_paid > 0 &&
		(rc = store_results_paid(c->rs, ev, paid, n_paid, &stored)) != 0)
		snprintf(err, errlen, "reconcile: Redis: storing %u order(s) paid meanwhile: %s",
			n_paid, strerror(-rc));
	if (rc == 0 && n_gone > 0)
		rc = pg_event_releases_again(c->pg, ev, gone, n_gone, &requeued, err, errlen);
	if (rc == 0) {
		moved->paid += n_paid;
		moved->released += n_gone;
	}
out:
	free(ids);
	free(gone);
	free(verdict);
	free(paid);
	return rc;
}

/*
 * The buyers b[0..n) (1..RS_BATCH_MAX) whose field is behind PostgreSQL (find_behind()): the
 * second look they missed (a repair that failed after writing their fields), which reads their
 * orders again and makes a paid one paid and hands an expired or cancelled one's release back.
 * Returns 0 or < 0 with err.
 */
static int
repair_behind(struct cp_ctx *c, uint32_t ev, const struct store_buyer *b, unsigned n,
	struct repair_moved *moved, char *err, size_t errlen)
{
	struct store_buyer look[RS_BATCH_MAX];

	/* As the orders their fields show: repair_second_look() looks at ordered ones. */
	for (unsigned i = 0; i < n; i++) {
		look[i] = b[i];
		look[i].result.verdict = WIRE_V_ORDERED;
	}
	return repair_second_look(c, ev, look, n, moved, err, errlen);
}

/*
 * Writes buyers b[0..n) their fields (restored_field()), each batch with its second look
 * (repair_second_look()): was NULL, those with no field (store_repair_buyers()), else those
 * whose field still holds the orphan reservation was[i] (store_repair_orphans()). Returns 0 or
 * < 0 (with err when the second look failed).
 */
static int
repair_fields(struct cp_ctx *c, uint32_t ev, const struct store_buyer *b, const uint64_t *was,
	size_t n, struct repair_moved *moved, char *err, size_t errlen)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < n; i += RS_BATCH_MAX) {
		unsigned k = (unsigned)(n - i < RS_BATCH_MAX ? n - i : RS_BATCH_MAX);

		rc = was == NULL ? store_repair_buyers(c->rs, ev, b + i, k)
				 : store_repair_orphans(c->rs, ev, b + i, was + i, k);
		if (rc == 0)
			rc = repair_second_look(c, ev, b + i, k, moved, err, errlen);
	}
	return rc;
}

/*
 * Makes Redis agree with reading r (verdict v) for event ev: the stock first, only if it is
 * still what the reading saw (store_repair_stock()), then the missing buyers and the orphans'
 * fields (repair_fields()), then the fields behind (repair_behind()). The stock
 * comes first so that a release applied after a buyer's field is written adds to it instead of
 * being overwritten. Returns 0, or < 0 with
 * err (-EAGAIN: Redis's stock moved since the reading, nothing written).
 */
static int
repair(struct cp_ctx *c, const struct admin_event *ev, const struct reading *r,
	const struct verdict *v, char *err, size_t errlen)
{
	struct repair_moved moved = {0};
	int rc;

	err[0] = '\0';
	repair_test_hold(ev->id);
	rc = store_repair_stock(c->rs, ev->id, r->rst.preheated, r->rst.stock, v->expected);
	if (rc == -EAGAIN)
		snprintf(err, errlen,
			"reconcile: event %u: Redis's stock moved between the reading and the "
			"repair (a release or a reservation): nothing repaired; run it again",
			ev->id);
	if (rc == 0)
		rc = repair_fields(c, ev->id, r->missing, NULL, r->n_missing, &moved, err, errlen);
	if (rc == 0)
		rc = repair_fields(
			c, ev->id, r->orphans, r->orphan_rid, r->n_orphans, &moved, err, errlen);
	for (size_t i = 0; rc == 0 && i < r->n_behind; i += RS_BATCH_MAX)
		rc = repair_behind(c, ev->id, r->behind + i,
			(unsigned)(r->n_behind - i < RS_BATCH_MAX ? r->n_behind - i : RS_BATCH_MAX),
			&moved, err, errlen);
	if (rc != 0 && err[0] == '\0') /* Redis's: the second look says what failed */
		snprintf(err, errlen, "reconcile: repair failed in Redis: %s", strerror(-rc));
	if (rc != 0)
		return rc;
	LOG_NOTICE("event %u reconciled: Redis stock %" PRId64 " -> %" PRId64
		   ", %zu buyer(s) restored (%zu expired or cancelled, with their releases), %zu "
		   "orphan reservation(s) made their users' orders (%zu expired or cancelled), %zu "
		   "field(s) behind looked at again; %" PRIu64
		   " of their orders paid (made paid) and %" PRIu64
		   " expired or cancelled (releases handed back)",
		ev->id, r->rst.stock, v->expected, r->n_missing, r->n_missing_released,
		r->n_orphans, r->n_orphans_released, r->n_behind, moved.paid, moved.released);
	return 0;
}

/* The answer's "differences": what does not agree in reading r (verdict v), for people. */
static void
json_differences(struct json_writer *j, const struct reading *r, const struct verdict *v,
	bool settled, unsigned readings)
{
	char d[320];

	jw_open(j, "differences", '[');
	if (!settled) {
		snprintf(d, sizeof(d),
			"the figures moved between every two of %u readings (a live sale: "
			"reservations, orders, expiries and releases in flight), so none of them "
			"shows one moment of both: nothing is judged; run reconcile again once the "
			"sale is closed and its orders and releases are written",
			readings);
		jw_str(j, NULL, d);
		jw_close(j, ']');
		return;
	}
	if (!r->rst.preheated)
		jw_str(j, NULL, "Redis has no stock for this event (not preheated, or lost)");
	else if (!v->stock_ok) {
		snprintf(d, sizeof(d),
			"Redis stock is %" PRId64 ", PostgreSQL says %" PRId64
			" (available %u - backlog %" PRId64 " - releases not in Redis yet %" PRId64 ")",
			r->rst.stock, v->expected, r->pc.available, v->backlog > 0 ? v->backlog : 0,
			v->unapplied);
		jw_str(j, NULL, d);
	}
	for (size_t i = 0; i < r->n_missing && i < 20; i++) {
		const struct store_buyer *b = &r->missing[i];

		if (restored_released(b))
			snprintf(d, sizeof(d),
				"user %" PRIu64 "'s order %" PRIu64
				" is %s in PostgreSQL, its item returned, but the user is not a "
				"buyer in Redis (no result field): they could reserve again",
				b->user, b->result.order_id, wire_verdict_name(b->result.verdict));
		else
			snprintf(d, sizeof(d),
				"user %" PRIu64
				" has an order but is not a buyer in Redis (no result field)",
				b->user);
		jw_str(j, NULL, d);
	}
	if (r->n_missing > 20) {
		snprintf(d, sizeof(d), "... %zu users in all", r->n_missing);
		jw_str(j, NULL, d);
	}
	for (size_t i = 0; i < r->n_orphans && i < 20; i++) {
		snprintf(d, sizeof(d),
			"user %" PRIu64 " holds reservation %" PRIu64
			" in Redis, which can never become an order: the user has order %" PRIu64
			" (reservation %" PRIu64 ") in PostgreSQL; a repair writes its field (%s)",
			r->orphans[i].user, r->orphan_rid[i], r->orphans[i].result.order_id,
			r->orphans[i].result.reservation_id,
			wire_verdict_name(r->orphans[i].result.verdict));
		jw_str(j, NULL, d);
	}
	if (r->n_orphans > 20) {
		snprintf(d, sizeof(d), "... %zu orphan reservations in all", r->n_orphans);
		jw_str(j, NULL, d);
	}
	for (size_t i = 0; i < r->n_behind && i < 20; i++) {
		snprintf(d, sizeof(d),
			"user %" PRIu64 "'s order %" PRIu64
			" is %s in PostgreSQL, handed to Redis, "
			"but its result field in Redis never took it",
			r->behind[i].user, r->behind[i].result.order_id,
			wire_verdict_name(r->behind[i].result.verdict));
		jw_str(j, NULL, d);
	}
	if (r->n_behind > 20) {
		snprintf(d, sizeof(d), "... %zu fields behind in all", r->n_behind);
		jw_str(j, NULL, d);
	}
	if (v->backlog < 0) {
		snprintf(d, sizeof(d),
			"Redis holds %" PRId64 " reservation(s) fewer than PostgreSQL has orders",
			-v->backlog);
		jw_str(j, NULL, d);
	}
	jw_close(j, ']');
}

int
admin_reconcile(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t, char *out,
	size_t cap)
{
	struct admin_event ev;
	struct reading r;
	struct verdict v;
	struct json_writer j;
	bool settled, repaired = false;
	unsigned readings = 0;
	char err[512];
	int rc;

	(void)t; /* repeatable: a second run compares again */
	if (pg_event_get(c->pg, req->event_id, &ev, err, sizeof(err)) != 0 ||
		read_settled(c, ev.id, &r, &settled, &readings, err, sizeof(err)) != 0)
		return admin_answer_error(out, cap, err);
	v = judge(&r);
	if (req->repair && !v.ok) {
		if (ev.state == ADMIN_EV_OPEN && !req->force) {
			reading_free(&r);
			return admin_exec_error(out, cap,
				"reconcile: event %u is open: repairing a running sale could "
				"resell stock; close it first, or add --force",
				ev.id);
		}
		if (!settled) {
			reading_free(&r);
			return admin_exec_error(out, cap,
				"reconcile: event %u: the figures moved between every two of %u "
				"readings: nothing repaired (a repair needs one moment of both); "
				"close the sale and let its orders and releases be written first",
				ev.id, readings);
		}
		if ((rc = repair(c, &ev, &r, &v, err, sizeof(err))) != 0) {
			reading_free(&r);
			return admin_exec_error(out, cap, "%s", err);
		}
		repaired = true;
		admin_exec_reload_and_publish(c, "reconcile --repair", cp_state_publish_events);
	}
	admin_json_ok(&j, out, cap);
	jw_u64(&j, "event_id", ev.id);
	/* Only a settled reading is judged: "consistent" false is never said of figures read at
	 * different moments. */
	if (settled)
		jw_bool(&j, "consistent", v.ok);
	jw_bool(&j, "settled", settled);
	jw_u64(&j, "readings", readings);
	jw_bool(&j, "repaired", repaired);
	jw_open(&j, "postgres", '{');
	jw_u64(&j, "initial", r.pc.initial);
	jw_u64(&j, "available", r.pc.available);
	jw_u64(&j, "pending", r.pc.pending);
	jw_u64(&j, "paid", r.pc.paid);
	jw_u64(&j, "expired", r.pc.expired);
	jw_u64(&j, "cancelled", r.pc.cancelled);
	jw_u64(&j, "releases_unapplied", r.pc.releases_pending);
	jw_close(&j, '}');
	jw_open(&j, "redis", '{');
	jw_bool(&j, "preheated", r.rst.preheated);
	jw_i64(&j, "stock", r.rst.stock);
	jw_u64(&j, "buyers", r.rst.buyers);
	jw_u64(&j, "released", r.rst.released);
	jw_u64(&j, "outbox", r.rst.outbox_len);
	jw_u64(&j, "buyers_missing", r.n_missing);
	jw_u64(&j, "orphan_reservations", r.n_orphans);
	jw_u64(&j, "fields_behind", r.n_behind);
	jw_close(&j, '}');
	jw_i64(&j, "releases_in_flight", v.in_flight);
	jw_i64(&j, "backlog", v.backlog);
	jw_i64(&j, "expected_stock", v.expected);
	json_differences(&j, &r, &v, settled, readings);
	reading_free(&r);
	return admin_exec_end(&j, out, cap);
}
