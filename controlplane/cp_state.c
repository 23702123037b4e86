/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/cp_state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/draw.h"
#include "common/log.h"
#include "common/now.h"
#include "store/store_event.h"

struct rule_acc {
	struct wire_rule *v;
	unsigned n, cap;
};

static int
add_rule(const struct admin_rule *r, uint64_t created_at_ms, void *arg)
{
	struct rule_acc *a = arg;

	(void)created_at_ms;
	if (a->n == a->cap) {
		unsigned cap = a->cap ? a->cap * 2 : 256;
		struct wire_rule *v = realloc(a->v, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	struct wire_rule *w = &a->v[a->n++];

	memset(w, 0, sizeof(*w));
	w->kind = (uint8_t)r->kind;
	w->ipv4 = r->ip;
	w->prefix = r->prefix;
	w->user = r->user;
	if (r->kind == ADMIN_RULE_IP6)
		memcpy(w->ipv6, r->ip6, sizeof(r->ip6)); /* the rest of the 64 bytes stays zero */
	else
		snprintf(w->device, sizeof(w->device), "%s", r->device);
	return 0;
}

uint8_t
cp_state_pow_bits_keep(const struct admin_event *ev, const struct cp_state_event *old)
{
	uint8_t top = ev->pow_auto_max > ev->pow_bits ? ev->pow_auto_max : ev->pow_bits;

	if (old == NULL || old->pow_bits_now < ev->pow_bits || old->pow_bits_now > top)
		return ev->pow_bits;
	return old->pow_bits_now;
}

/* What cp_state_read() reads, for cp_state_apply(). */
struct cp_state_read {
	struct admin_event evs[CP_STATE_EVENTS_MAX];
	int64_t stock[CP_STATE_EVENTS_MAX]; /* Redis's once preheated, else PostgreSQL's */
	unsigned n_ev, n_live, n_keys;
	uint64_t next_end_ms;
	uint64_t stock_gen; /* st->stock_gen before Redis was read */
	uint64_t ticket;    /* when this read started, among all reads (st->read_ticket) */
	struct admin_key keys[CP_STATE_KEYS_MAX];
	struct rule_acc rules;
	struct wire_limits lim;
};

struct cp_state_read *
cp_state_read(const struct cp_state *st, struct pg_conn *pg, struct store *rs, int *rc, char *err,
	size_t errlen)
{
	struct cp_state_read *rd = calloc(1, sizeof(*rd));
	/* Written by the loop only; read here on another thread too: a moment old at worst. */
	uint64_t key_life_ms = __atomic_load_n(&st->key_life_ms, __ATOMIC_RELAXED);

	if (rd == NULL) {
		snprintf(err, errlen, "out of memory for the state");
		*rc = -ENOMEM;
		return NULL;
	}
	/* The counter is the only field a reader writes: taken before anything is read. */
	rd->ticket = __atomic_add_fetch(&((struct cp_state *)st)->read_ticket, 1, __ATOMIC_SEQ_CST);
	rd->stock_gen = __atomic_load_n(&st->stock_gen, __ATOMIC_ACQUIRE);
	if ((*rc = pg_event_list_slots(pg, rd->evs, CP_STATE_EVENTS_MAX, &rd->n_ev, &rd->n_live,
		     &rd->next_end_ms, err, errlen)) != 0 ||
		(*rc = pg_keys_list(pg, key_life_ms, rd->keys, CP_STATE_KEYS_MAX, &rd->n_keys, err,
			 errlen)) != 0 ||
		(*rc = pg_limits_get(pg, &rd->lim, err, errlen)) != 0 ||
		(*rc = pg_rule_foreach(pg, add_rule, &rd->rules, err, errlen)) != 0) {
		cp_state_read_free(rd);
		return NULL;
	}
	for (unsigned i = 0; i < rd->n_ev; i++) {
		struct store_event_state rst;

		rd->stock[i] = rd->evs[i].available;
		if (rd->evs[i].state != ADMIN_EV_DRAFT && rs != NULL &&
			store_event_state(rs, rd->evs[i].id, &rst) == 0 && rst.preheated)
			rd->stock[i] = rst.stock;
	}
	return rd;
}

void
cp_state_read_free(struct cp_state_read *rd)
{
	if (rd == NULL)
		return;
	free(rd->rules.v);
	explicit_bzero(rd, sizeof(*rd));
	free(rd);
}

void
cp_state_apply(struct cp_state *st, struct cp_state_read *rd)
{
	struct admin_event *evs = rd->evs;
	unsigned n_ev = rd->n_ev, n_keys = rd->n_keys;
	/* Decisions changed some event's stock since Redis was read: the loop's copy is newer for
	 * an event it holds open (the next decision tells it anyway). */
	bool stock_moved = rd->stock_gen != st->stock_gen;

	if (rd->ticket < st->applied_ticket) {
		LOG_DEBUG("state read %" PRIu64 " dropped: read %" PRIu64 " started after it and is "
			  "applied already",
			rd->ticket, st->applied_ticket);
		cp_state_read_free(rd);
		return;
	}
	st->applied_ticket = rd->ticket;

	if (rd->n_live > CP_STATE_EVENTS_MAX)
		LOG_RL(LOG_LEVEL_WARN, 60000,
			"%u upcoming or selling events: data planes hold %d, open and preheated "
			"ones first, then by starts_at; the rest get a slot as sales end (close or "
			"archive the ones that are over; docs/operations.md \"More than 64 "
			"events\")",
			rd->n_live, CP_STATE_EVENTS_MAX);
	if (n_keys > CP_STATE_KEYS_MAX)
		n_keys = CP_STATE_KEYS_MAX;
	for (unsigned i = 0; i < st->n_ev && !st->events_dropped; i++) {
		bool kept = false;

		for (unsigned k = 0; k < n_ev && !kept; k++)
			kept = evs[k].id == st->ev[i].ev.id;
		st->events_dropped = !kept;
	}
	st->events_next_end_ms = rd->next_end_ms;
	for (unsigned i = 0; i < n_ev; i++) {
		struct cp_state_event *old = cp_state_event(st, evs[i].id);
		struct cp_state_event e = { .ev = evs[i], .stock_left = rd->stock[i] };

		if (old != NULL && stock_moved && old->ev.state == ADMIN_EV_OPEN &&
			evs[i].state == ADMIN_EV_OPEN)
			e.stock_left = old->stock_left;
		e.sold_out = old != NULL ? old->sold_out && e.stock_left <= 0 : false;
		e.pow_bits_now = cp_state_pow_bits_keep(&evs[i], old);
		e.pow_moved_ms = old != NULL ? old->pow_moved_ms : 0;
		if (old != NULL) {
			e.forwarded = old->forwarded;
			e.pow_fwd_last = old->pow_fwd_last;
			e.pow_growth_ms = old->pow_growth_ms;
		}
		if (old != NULL)
			e.draw = old->draw;
		if (evs[i].state == ADMIN_EV_OPEN && e.stock_left <= 0)
			e.sold_out = true;
		evs[i] = e.ev;
		st->ev[i] = e;
	}
	st->n_ev = n_ev;
	st->n_keys = 0;
	st->auth_len = 0;
	st->next_key_retire_ms = 0;
	for (unsigned i = 0; i < n_keys; i++) {
		const struct admin_key *key = &rd->keys[i];
		struct wire_key *k;

		/* A key past its retirement verifies nothing any more: not published, and the
		 * cron deletes it at once. */
		if (key->retired) {
			st->next_key_retire_ms = 1;
			continue;
		}
		if (key->retire_at_ms != 0 &&
			(st->next_key_retire_ms == 0 || key->retire_at_ms < st->next_key_retire_ms))
			st->next_key_retire_ms = key->retire_at_ms;
		k = &st->keys[st->n_keys++];

		memset(k, 0, sizeof(*k));
		k->kid = key->kid;
		k->kind = key->kind;
		k->flags = key->current ? WIRE_KEY_F_CURRENT : 0;
		k->len = key->len;
		memcpy(k->secret, key->secret, key->len);
		if (key->kind == WIRE_KEY_AUTH && key->current) {
			st->auth_kid = key->kid;
			st->auth_len = key->len;
			memcpy(st->auth_secret, key->secret, key->len);
		}
	}
	free(st->rules);
	st->rules = rd->rules.v;
	st->n_rules = rd->rules.n;
	st->cap_rules = rd->rules.cap;
	rd->rules.v = NULL;
	st->limits = rd->lim;
	cp_state_read_free(rd);
}

int
cp_state_load(struct cp_state *st, struct pg_conn *pg, struct store *rs, char *err,
	size_t errlen)
{
	int rc;
	struct cp_state_read *rd = cp_state_read(st, pg, rs, &rc, err, errlen);

	if (rd == NULL)
		return rc;
	cp_state_apply(st, rd);
	return 0;
}

void
cp_state_free(struct cp_state *st)
{
	free(st->rules);
	explicit_bzero(st, sizeof(*st));
}

struct cp_state_event *
cp_state_event(struct cp_state *st, uint32_t id)
{
	for (unsigned i = 0; i < st->n_ev; i++)
		if (st->ev[i].ev.id == id)
			return &st->ev[i];
	return NULL;
}

bool
cp_state_note_stock(struct cp_state *st, struct cp_links *l, uint32_t event, int64_t stock_left)
{
	struct cp_state_event *e = cp_state_event(st, event);
	struct wire_stock s = {.event = event, .stock_left = 0};

	if (e == NULL)
		return false;
	e->stock_left = stock_left;
	cp_state_stock_moved(st);
	if (stock_left > 0 || e->sold_out)
		return false;
	e->sold_out = true;
	st->sold_out_published++;
	cp_links_publish(l, WIRE_T_SOLD_OUT, &s, 1);
	LOG_NOTICE("event %u sold out", event);
	return true;
}

unsigned
cp_state_sync_windows(struct cp_state *st, struct store *rs)
{
	unsigned failed = 0;

	for (unsigned i = 0; i < st->n_ev; i++) {
		struct cp_state_event *e = &st->ev[i];
		enum store_sale_state s = e->ev.state == ADMIN_EV_OPEN	 ? RS_SALE_OPEN
				       : e->ev.state == ADMIN_EV_CLOSED ? RS_SALE_CLOSED
									: RS_SALE_HELD;

		if (e->window_set)
			continue;
		if (store_sale_window(rs, e->ev.id, s, e->ev.starts_at_ms, e->ev.ends_at_ms) == 0)
			e->window_set = true;
		else
			failed++;
	}
	return failed;
}

void
cp_state_event_to_wire(const struct cp_state_event *e, struct wire_event *out)
{
	memset(out, 0, sizeof(*out));
	out->id = e->ev.id;
	out->stock = e->stock_left > 0 ? (uint32_t)e->stock_left : 0;
	out->starts_at_ms = e->ev.starts_at_ms;
	out->ends_at_ms = e->ev.ends_at_ms;
	if (e->ev.state == ADMIN_EV_DRAFT || e->ev.state == ADMIN_EV_PREHEATED)
		out->flags |= WIRE_EVENT_F_HELD;
	if (e->ev.state == ADMIN_EV_CLOSED)
		out->flags |= WIRE_EVENT_F_CLOSED;
	if (e->sold_out)
		out->flags |= WIRE_EVENT_F_SOLD_OUT;
	snprintf(out->name, sizeof(out->name), "%s", e->ev.name);
}

bool
cp_state_event_has_fair(const struct cp_state_event *e)
{
	return e->ev.draw_window_s > 0 || e->pow_bits_now > 0;
}

void
cp_state_fair_to_wire(const struct cp_state_event *e, struct wire_fair *out)
{
	const struct admin_event *ev = &e->ev;

	memset(out, 0, sizeof(*out));
	out->event = ev->id;
	out->pow_bits = e->pow_bits_now;
	if (ev->has_seed)
		draw_commitment(ev->draw_seed, out->seed_sha256);
	if (ev->draw_window_s == 0)
		return;
	out->queue_opens_at_ms = ev->queue_opens_at_ms ? ev->queue_opens_at_ms : ev->starts_at_ms;
	out->draw_at_ms = admin_event_draw_at_ms(ev);
	out->draw_state = e->draw.state != WIRE_DRAW_NONE ? e->draw.state : WIRE_DRAW_QUEUEING;
	if (ev->draw_done_at_ms != 0)
		out->draw_state = WIRE_DRAW_DONE;
	out->entrants = (uint32_t)(ev->has_digest ? ev->draw_entrants : e->draw.entrants);
	out->decided = (uint32_t)e->draw.decided;
	out->rate = e->draw.rate;
	out->served = (uint32_t)e->draw.served;
	if (e->draw.final)
		out->flags |= WIRE_FAIR_F_FINAL;
	if (e->draw.has_digest)
		memcpy(out->entrants_digest, e->draw.digest, WIRE_DIGEST_LEN);
	else if (ev->has_digest)
		memcpy(out->entrants_digest, ev->draw_digest, WIRE_DIGEST_LEN);
	if (out->draw_state == WIRE_DRAW_DONE) {
		out->decided = out->entrants;
		out->rate = 0;
		if (ev->has_seed)
			memcpy(out->seed, ev->draw_seed, WIRE_DIGEST_LEN);
	}
}

int
cp_state_publish_fair(const struct cp_state *st, struct cp_links *l)
{
	struct wire_fair w[CP_STATE_EVENTS_MAX];
	unsigned n = 0;

	for (unsigned i = 0; i < st->n_ev; i++)
		if (cp_state_event_has_fair(&st->ev[i]))
			cp_state_fair_to_wire(&st->ev[i], &w[n++]);
	return n ? cp_links_publish(l, WIRE_T_FAIR, w, n) : 0;
}

int
cp_state_publish_fair_one(struct cp_state_event *e, struct cp_links *l, uint64_t mono_ms)
{
	struct wire_fair w;

	e->draw.dirty = false;
	e->draw.state_dirty = false;
	e->draw.fair_ms = mono_ms;
	if (!cp_state_event_has_fair(e))
		return 0;
	cp_state_fair_to_wire(e, &w);
	return cp_links_publish(l, WIRE_T_FAIR, &w, 1);
}

int
cp_state_publish_events(const struct cp_state *st, struct cp_links *l)
{
	struct wire_event w[CP_STATE_EVENTS_MAX];

	for (unsigned i = 0; i < st->n_ev; i++)
		cp_state_event_to_wire(&st->ev[i], &w[i]);
	if (st->n_ev && cp_links_publish(l, WIRE_T_EVENT, w, st->n_ev) != 0)
		return -EIO;
	/* Every event's FAIR after the events: a data plane has the event when it reads it. */
	return cp_state_publish_fair(st, l);
}

int
cp_state_publish_event_set(struct cp_state *st, struct cp_links *l)
{
	if (!st->events_dropped)
		return cp_state_publish_events(st, l);
	st->events_dropped = false;
	return cp_state_publish_snapshot(st, l);
}

int
cp_state_publish_keys(const struct cp_state *st, struct cp_links *l)
{
	return cp_links_publish(l, WIRE_T_KEYS, st->keys, st->n_keys);
}

int
cp_state_publish_rules(const struct cp_state *st, struct cp_links *l)
{
	return cp_links_publish(l, WIRE_T_RULES, st->rules, st->n_rules);
}

static uint32_t
share_of(uint32_t total, unsigned n)
{
	return total != 0 && total / n == 0 ? 1 : total / n;
}

void
cp_state_limits_share(const struct wire_limits *total, unsigned n, struct wire_limits *out)
{
	*out = *total;
	if (n < 2)
		return;
	out->event_forward_per_s = share_of(total->event_forward_per_s, n);
	out->event_forward_burst = share_of(total->event_forward_burst, n);
}

int
cp_state_publish_limits(const struct cp_state *st, struct cp_links *l)
{
	struct wire_limits share;

	cp_state_limits_share(&st->limits, st->forward_shares, &share);
	return cp_links_publish(l, WIRE_T_LIMITS, &share, 1);
}

int
cp_state_publish_snapshot(struct cp_state *st, struct cp_links *l)
{
	st->events_dropped = false; /* a snapshot replaces the data planes' sets */
	struct wire_snapshot s = {
		.snapshot_id = ++st->snapshot_id,
		.n_events = st->n_ev,
		.n_keys = st->n_keys,
		.n_rules = st->n_rules,
	};

	if (cp_links_publish(l, WIRE_T_SNAPSHOT_BEGIN, &s, 1) != 0)
		return -EIO;
	/* A snapshot may hold no event; EVENT with no record is not a message. */
	if (cp_state_publish_events(st, l) != 0 || cp_state_publish_keys(st, l) != 0 ||
		cp_state_publish_rules(st, l) != 0 || cp_state_publish_limits(st, l) != 0)
		return -EIO;
	if (cp_links_publish(l, WIRE_T_SNAPSHOT_END, &s, 1) != 0)
		return -EIO;
	/* The control plane's clock with every snapshot too: a data plane that just got its
	 * state knows its skew at once, not a heartbeat later. */
	struct wire_heartbeat hb = {.now_ms = now_wall_ms()};

	return cp_links_publish(l, WIRE_T_HEARTBEAT, &hb, 1);
}
