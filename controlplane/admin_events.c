/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/admin_events.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_answer.h"
#include "common/draw.h"
#include "common/hex.h"
#include "common/log.h"
#include "common/now.h"
#include "controlplane/cp_slow.h"
#include "store/store_event.h"

/*
 * "draw" of an event with one (docs/fairness.md): its state (scheduled, queueing, drawing,
 * done), the entrants (so far, then fixed) and their digest once fixed, decided and the rate
 * (what this control plane's draw runner knows, ce; NULL: PostgreSQL's), and once done when
 * and the seed.
 */
static void
json_draw(struct json_writer *j, const struct admin_event *ev, const struct cp_state_event *ce,
	uint64_t now_ms)
{
	char hex[2 * DRAW_DIGEST_LEN + 1];
	bool done = ev->draw_done_at_ms != 0;
	const struct cp_state_draw *d = ce != NULL ? &ce->draw : NULL;

	if (ev->draw_window_s == 0)
		return;
	jw_open(j, "draw", '{');
	jw_str(j, "state", admin_exec_draw_state(ev, now_ms));
	if (ev->has_digest)
		jw_u64(j, "entrants", ev->draw_entrants);
	else if (d != NULL && d->state != WIRE_DRAW_NONE)
		jw_u64(j, "entrants", d->entrants);
	if (ev->has_digest || (d != NULL && d->has_digest)) {
		hex_str(ev->has_digest ? ev->draw_digest : d->digest, DRAW_DIGEST_LEN, hex);
		jw_str(j, "entrants_digest", hex);
	}
	if (done) {
		jw_u64(j, "decided", ev->draw_entrants);
		jw_time(j, "done_at", ev->draw_done_at_ms);
	} else if (d != NULL && d->state >= WIRE_DRAW_DRAWING) {
		jw_u64(j, "decided", d->decided);
		jw_u64(j, "rate", d->rate);
	}
	/* The seed only once every entrant is decided: before, it would tell who wins. */
	if (done && ev->has_seed) {
		hex_str(ev->draw_seed, DRAW_DIGEST_LEN, hex);
		jw_str(j, "seed", hex);
	}
	jw_close(j, '}');
}

/*
 * An event as event show, preheat, open and close answer it (docs/operations.md), with ce the
 * loop's copy of it (NULL: the loop does not hold it): "event" is
 * the event object, the same as event create and event list write; its sold_out, Redis and
 * order figures are members of the answer beside it, not inside it.
 */
static void
json_event_full(struct cp_ctx *c, struct json_writer *j, const struct admin_event *ev,
	const struct cp_state_event *ce)
{
	struct store_event_state rst;
	struct pg_event_counts pc;
	char err[256];

	admin_json_event(j, "event", ev);
	if (ce != NULL)
		jw_bool(j, "sold_out", ce->sold_out);
	jw_u64(j, "pow_bits_now", ce != NULL ? ce->pow_bits_now : ev->pow_bits);
	json_draw(j, ev, ce, now_wall_ms());
	if (store_event_state(c->rs, ev->id, &rst) == 0) {
		jw_open(j, "redis", '{');
		jw_bool(j, "preheated", rst.preheated);
		jw_i64(j, "stock", rst.stock);
		jw_u64(j, "buyers", rst.buyers);
		jw_u64(j, "outbox", rst.outbox_len);
		jw_u64(j, "released", rst.released);
		jw_close(j, '}');
	} else {
		jw_str(j, "redis", "unreachable");
	}
	if (pg_event_counts(c->pg, ev->id, &pc, err, sizeof(err)) == 0) {
		jw_open(j, "orders", '{');
		jw_u64(j, "pending", pc.pending);
		jw_u64(j, "paid", pc.paid);
		jw_u64(j, "expired", pc.expired);
		jw_u64(j, "cancelled", pc.cancelled);
		jw_u64(j, "releases_pending", pc.releases_pending);
		jw_close(j, '}');
	}
}

/* A transition's work on the loop, in one call: the state read again and the events
 * published, the window keys in Redis, the event as the loop now holds it. */
struct transition_call {
	const char *after;
	uint32_t id;
	bool no_windows;	     /* the window keys are not written (event create) */
	unsigned unsynced;	     /* window keys that could not be written */
	bool held;		     /* the loop holds the event: copy */
	struct cp_state_event copy;
	struct admin_exec_reload x;  /* the state read again (admin_exec_reload_prepare()) */
};

static void
transition_on_loop(struct cp_ctx *c, void *arg)
{
	struct transition_call *tc = arg;
	const struct cp_state_event *ce;

	admin_exec_reload_publish(c, &tc->x, tc->after, cp_state_publish_events);
	if (!tc->no_windows)
		tc->unsynced = cp_state_sync_windows(c->st, c->rs);
	ce = cp_state_event(c->st, tc->id);
	tc->held = ce != NULL;
	if (ce != NULL)
		tc->copy = *ce;
}

/*
 * The answer of a transition run again after a lost connection that finds event ev already in
 * the state asked for: the lost try may have committed, and the data planes may not have heard
 * of it yet.
 */
static int
answer_in_place(struct cp_ctx *c, const struct admin_event *ev, char *out, size_t cap)
{
	struct json_writer j;

	struct transition_call tc = {.after = "a transition found done", .id = ev->id};

	admin_exec_reload_prepare(c, &tc.x);
	cp_slow_on_loop(c, transition_on_loop, &tc);
	LOG_NOTICE("event %u is %s (found so after a lost connection)", ev->id,
		admin_event_state_name(ev->state));
	admin_json_ok(&j, out, cap);
	json_event_full(c, &j, ev, tc.held ? &tc.copy : NULL);
	jw_str(&j, "note", ADMIN_EXEC_NOTE_IN_PLACE);
	return admin_exec_end(&j, out, cap);
}

/* Changes an event's state in PostgreSQL and tells the data planes. */
static int
do_transition(struct cp_ctx *c, const struct admin_req *req, enum admin_event_state to,
	const struct admin_exec_try *t, char *out, size_t cap)
{
	struct admin_event ev;
	struct json_writer j;
	char err[512];
	int rc;

	if ((rc = pg_event_get(c->pg, req->event_id, &ev, err, sizeof(err))) != 0)
		return admin_answer_error(out, cap, err);
	if (t->again && ev.state == to && to != ADMIN_EV_PREHEATED)
		return answer_in_place(c, &ev, out, cap);
	if (to == ADMIN_EV_PREHEATED) {
		/* Check the transition before touching Redis, then load the stock, then record
		 * it: a preheat that Redis refuses changes nothing in PostgreSQL. */
		if (admin_event_transition(ev.id, ev.state, to, err, sizeof(err)) != 0)
			return admin_answer_error(out, cap, err);
		rc = store_preheat(c->rs, ev.id, ev.available);
		if (rc == -EBUSY)
			return admin_exec_error(out, cap,
				"event preheat: event %u already has buyers in Redis: a sale ran, "
				"its stock is not overwritten (reconcile repairs it)",
				ev.id);
		if (rc == -ETIMEDOUT)
			return admin_exec_error(out, cap,
				"event preheat: Redis's replicas did not confirm the stock within "
				"[redis] wait_timeout (docs/ha.md): the event stays as it was; run it "
				"again");
		if (rc != 0)
			return admin_exec_error(out, cap,
				"event preheat: Redis is not reachable (%s): nothing changed",
				strerror(-rc));
	}
	if ((rc = pg_event_set_state(c->pg, ev.id, to, &ev, err, sizeof(err))) != 0) {
		/* A second run refused as "already so": the lost try (or someone else) made it
		 * while this one waited for the row. */
		if (rc == -EPERM && t->again && to != ADMIN_EV_PREHEATED &&
			pg_event_get(c->pg, req->event_id, &ev, err, sizeof(err)) == 0 &&
			ev.state == to)
			return answer_in_place(c, &ev, out, cap);
		return admin_answer_error(out, cap, err);
	}
	char what[48];

	snprintf(what, sizeof(what), "event %u changed", ev.id);
	/* The sale stops (or starts) in Redis itself before the answer: a reservation racing a
	 * close is decided before this SET or refused by reserve.lua after it. */
	struct transition_call tc = {.after = what, .id = ev.id};

	admin_exec_reload_prepare(c, &tc.x);
	cp_slow_on_loop(c, transition_on_loop, &tc);
	bool window_set = tc.unsynced == 0;

	LOG_NOTICE("event %u is now %s", ev.id, admin_event_state_name(ev.state));
	admin_json_ok(&j, out, cap);
	json_event_full(c, &j, &ev, tc.held ? &tc.copy : NULL);
	if (!window_set)
		jw_str(&j, "note",
			"Redis is not reachable: the control plane refuses outside the sale, and "
			"writes the event's window key in Redis when it is back");
	return admin_exec_end(&j, out, cap);
}

/* event create: a "warning" when the new event is on no data plane (held: the loop holds it
 * after the reload; otherwise 64 better claims). */
static void
warn_no_slot(bool held, struct json_writer *j, uint32_t id)
{
	char w[320];

	if (held)
		return;
	snprintf(w, sizeof(w),
		"event %u is on no data plane yet: they hold %d events, open and preheated ones "
		"first, then the earliest starts_at; it gets a slot when one of those ends or is "
		"closed (docs/operations.md \"More than 64 events\")",
		id, CP_STATE_EVENTS_MAX);
	jw_str(j, "warning", w);
	LOG_WARN("%s", w);
}

/*
 * event archive: an event that is over leaves the data planes and Redis (its keys are deleted,
 * its PostgreSQL rows kept). Archiving an archived event deletes its Redis keys again (a purge
 * that failed before), with a note.
 */
int
admin_events_archive(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	struct admin_event ev;
	struct store_event_state rst;
	struct json_writer j;
	char err[512];
	int rc;

	(void)t; /* repeatable: a second run finds the event archived and says so */
	/* Every buyer Redis holds must be an order first: the order writer reads the outbox. */
	if ((rc = store_event_state(c->rs, req->event_id, &rst)) != 0)
		return admin_exec_error(out, cap,
			"event archive: Redis is not reachable (%s): nothing changed",
			strerror(-rc));
	rc = pg_event_archive(c->pg, req->event_id, rst.buyers, &ev, err, sizeof(err));
	bool again = rc == -EALREADY;

	if (rc != 0 && !again)
		return admin_answer_error(out, cap, err);
	if ((rc = store_purge_event(c->rs, ev.id)) != 0)
		return admin_exec_error(out, cap,
			"event archive: event %u is archived, but Redis did not delete its keys "
			"(%s): run event archive %u again",
			ev.id, strerror(-rc), ev.id);
	admin_exec_reload_and_publish(c, "event archive", cp_state_publish_events);
	if (!again)
		LOG_NOTICE("event %u archived: its Redis keys are deleted, its rows kept", ev.id);
	admin_json_ok(&j, out, cap);
	admin_json_event(&j, "event", &ev);
	if (again)
		jw_str(&j, "note", "it was archived already; its Redis keys are deleted");
	return admin_exec_end(&j, out, cap);
}

struct pow_call {
	const struct admin_event *ev; /* as PostgreSQL now holds it */
	bool held;		      /* the loop holds the event */
	struct admin_exec_reload x;
};

/* On the loop: the state read again, the new difficulty published at once. */
static void
pow_on_loop(struct cp_ctx *c, void *arg)
{
	struct pow_call *p = arg;
	struct cp_state_event *ce;

	if (admin_exec_reload_apply(c, &p->x) != 0)
		LOG_WARN("state reload after event pow: %s", p->x.err);
	ce = cp_state_event(c->st, p->ev->id);
	p->held = ce != NULL;
	if (ce == NULL)
		return;
	ce->pow_bits_now = p->ev->pow_bits;
	ce->pow_moved_ms = now_mono_ms();
	cp_pow_publish(ce, c->links);
	if (c->pow != NULL)
		cp_pow_show(c->pow, c->st);
}

/* event pow: the operator's difficulty, for the next tokens (the automatic one starts from it). */
int
admin_events_pow(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t, char *out,
	size_t cap)
{
	struct admin_event ev;
	struct json_writer j;
	char err[512];
	int rc;

	(void)t; /* repeatable: the same difficulty again */
	rc = pg_event_set_pow(c->pg, req->event_id, req->pow_bits, req->pow_auto_given,
		req->pow_auto_max, &ev, err, sizeof(err));
	if (rc != 0)
		return admin_answer_error(out, cap, err);
	struct pow_call p = {.ev = &ev};

	admin_exec_reload_prepare(c, &p.x);
	cp_slow_on_loop(c, pow_on_loop, &p);
	LOG_NOTICE("event %u: challenge set to %u bits (automatic up to %u)", ev.id, ev.pow_bits,
		ev.pow_auto_max);
	admin_json_ok(&j, out, cap);
	admin_json_event(&j, "event", &ev);
	jw_u64(&j, "pow_bits_now", ev.pow_bits);
	if (!p.held)
		jw_str(&j, "note",
			"the event is on no data plane now: they get its difficulty with its slot");
	return admin_exec_end(&j, out, cap);
}

/* Whether two events are the same as event create writes them. */
static bool
same_event(const struct admin_event *a, const struct admin_event *b)
{
	return a->id == b->id && a->stock == b->stock && a->starts_at_ms == b->starts_at_ms &&
	       a->ends_at_ms == b->ends_at_ms && a->pay_window_s == b->pay_window_s &&
	       a->per_user_limit == b->per_user_limit && strcmp(a->name, b->name) == 0 &&
	       a->queue_opens_at_ms == b->queue_opens_at_ms &&
	       a->draw_window_s == b->draw_window_s && a->pow_bits == b->pow_bits &&
	       a->pow_auto_max == b->pow_auto_max;
}

int
admin_events_create(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	struct admin_event ev;
	struct json_writer j;
	char err[512];
	int rc;

	rc = pg_event_create(c->pg, &req->event, &ev, err, sizeof(err));
	if (rc == -EEXIST && t->again &&
		pg_event_get(c->pg, req->event.id, &ev, err, sizeof(err)) == 0 &&
		same_event(&ev, &req->event)) {
		admin_exec_reload_and_publish(c, "event create", cp_state_publish_events);
		admin_json_ok(&j, out, cap);
		admin_json_event(&j, "event", &ev);
		jw_str(&j, "note", ADMIN_EXEC_NOTE_IN_PLACE);
		return admin_exec_end(&j, out, cap);
	}
	if (rc != 0)
		return admin_answer_error(out, cap, err);
	/* One call on the loop: the reload, the events published, whether it holds the new one. */
	struct transition_call tc = {.after = "event create", .id = ev.id, .no_windows = true};

	admin_exec_reload_prepare(c, &tc.x);
	cp_slow_on_loop(c, transition_on_loop, &tc);
	LOG_NOTICE("event %u created: %u items", ev.id, ev.stock);
	admin_json_ok(&j, out, cap);
	admin_json_event(&j, "event", &ev);
	warn_no_slot(tc.held, &j, ev.id);
	return admin_exec_end(&j, out, cap);
}

int
admin_events_preheat(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	unsigned ready;
	char err[512];
	int rc;

	/* Open and preheated sales hold the data planes' slots before any draft: one more than
	 * they hold would leave a sale about to open on none of them. */
	if ((rc = pg_event_count_ready(c->pg, req->event_id, &ready, err, sizeof(err))) != 0)
		return admin_answer_error(out, cap, err);
	if (ready >= CP_STATE_EVENTS_MAX)
		return admin_exec_error(out, cap,
			"event preheat: %u events are preheated or open already, as many as a data "
			"plane holds: event %u would reach none (close the ones that are over, or "
			"wait for one to end; event list --state open)",
			ready, req->event_id);
	return do_transition(c, req, ADMIN_EV_PREHEATED, t, out, cap);
}

int
admin_events_open(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	return do_transition(c, req, ADMIN_EV_OPEN, t, out, cap);
}

int
admin_events_close(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	return do_transition(c, req, ADMIN_EV_CLOSED, t, out, cap);
}

int
admin_events_show(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	struct admin_event ev;
	struct json_writer j;
	char err[512];

	(void)t;
	if (pg_event_get(c->pg, req->event_id, &ev, err, sizeof(err)) != 0)
		return admin_answer_error(out, cap, err);
	struct cp_state_event copy;
	bool held = admin_exec_event(c, ev.id, &copy);

	admin_json_ok(&j, out, cap);
	json_event_full(c, &j, &ev, held ? &copy : NULL);
	return admin_exec_end(&j, out, cap);
}

int
admin_events_list(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	struct admin_event *evs = calloc(req->list_limit, sizeof(*evs));
	struct json_writer j;
	char err[512];
	unsigned n;
	bool more;

	(void)t;
	if (evs == NULL)
		return admin_exec_error(out, cap, "event list: out of memory");
	if (pg_event_page(c->pg, req->list_state_given, req->list_state, req->list_after,
		    req->list_limit, evs, &n, &more, err, sizeof(err)) != 0) {
		free(evs);
		return admin_answer_error(out, cap, err);
	}
	admin_json_ok(&j, out, cap);
	jw_open(&j, "events", '[');
	for (unsigned i = 0; i < n; i++)
		admin_json_event(&j, NULL, &evs[i]);
	jw_close(&j, ']');
	/* More after these: the next page is --after this id. */
	if (more)
		jw_u64(&j, "next_after", evs[n - 1].id);
	free(evs);
	return admin_exec_end(&j, out, cap);
}
