/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/cp_state.h"

#include <errno.h>
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

int
cp_state_load(struct cp_state *st, struct pg_conn *pg, struct store *rs, char *err,
	size_t errlen)
{
	struct admin_event evs[CP_STATE_EVENTS_MAX];
	struct admin_key keys[CP_STATE_KEYS_MAX];
	struct rule_acc acc = { 0 };
	struct wire_limits lim;
	unsigned n_ev, n_live, n_keys;
	uint64_t next_end_ms;
	int rc;

	if ((rc = pg_event_list_slots(
		     pg, evs, CP_STATE_EVENTS_MAX, &n_ev, &n_live, &next_end_ms, err, errlen)) != 0 ||
		(rc = pg_keys_list(pg, st->key_life_ms, keys, CP_STATE_KEYS_MAX, &n_keys, err, errlen)) !=
			0 ||
		(rc = pg_limits_get(pg, &lim, err, errlen)) != 0 ||
		(rc = pg_rule_foreach(pg, add_rule, &acc, err, errlen)) != 0) {
		free(acc.v);
		return rc;
	}
	if (n_live > CP_STATE_EVENTS_MAX)
		LOG_RL(LOG_LEVEL_WARN, 60000,
			"%u upcoming or selling events: data planes hold %d, open and preheated "
			"ones first, then by starts_at; the rest get a slot as sales end (close or "
			"archive the ones that are over; docs/operations.md \"More than 64 "
			"events\")",
			n_live, CP_STATE_EVENTS_MAX);
	if (n_keys > CP_STATE_KEYS_MAX)
		n_keys = CP_STATE_KEYS_MAX;
	for (unsigned i = 0; i < st->n_ev && !st->events_dropped; i++) {
		bool kept = false;

		for (unsigned k = 0; k < n_ev && !kept; k++)
			kept = evs[k].id == st->ev[i].ev.id;
		st->events_dropped = !kept;
	}
	st->events_next_end_ms = next_end_ms;
	for (unsigned i = 0; i < n_ev; i++) {
		struct cp_state_event *old = cp_state_event(st, evs[i].id);
		struct cp_state_event e = { .ev = evs[i], .stock_left = evs[i].available };
		struct store_event_state rst;

		if (evs[i].state != ADMIN_EV_DRAFT && rs != NULL &&
			store_event_state(rs, evs[i].id, &rst) == 0 && rst.preheated)
			e.stock_left = rst.stock;
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
		struct wire_key *k;

		/* A key past its retirement verifies nothing any more: not published, and the
		 * cron deletes it at once. */
		if (keys[i].retired) {
			st->next_key_retire_ms = 1;
			continue;
		}
		if (keys[i].retire_at_ms != 0 &&
			(st->next_key_retire_ms == 0 || keys[i].retire_at_ms < st->next_key_retire_ms))
			st->next_key_retire_ms = keys[i].retire_at_ms;
		k = &st->keys[st->n_keys++];

		memset(k, 0, sizeof(*k));
		k->kid = keys[i].kid;
		k->kind = keys[i].kind;
		k->flags = keys[i].current ? WIRE_KEY_F_CURRENT : 0;
		k->len = keys[i].len;
		memcpy(k->secret, keys[i].secret, keys[i].len);
		if (keys[i].kind == WIRE_KEY_AUTH && keys[i].current) {
			st->auth_kid = keys[i].kid;
			st->auth_len = keys[i].len;
			memcpy(st->auth_secret, keys[i].secret, keys[i].len);
		}
	}
	explicit_bzero(keys, sizeof(keys));
	free(st->rules);
	st->rules = acc.v;
	st->n_rules = acc.n;
	st->cap_rules = acc.cap;
	st->limits = lim;
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
cp_state_publish_fair_one(struct cp_state_event *e, struct cp_links *l, uint64_t now_ms)
{
	struct wire_fair w;

	e->draw.dirty = false;
	e->draw.state_dirty = false;
	e->draw.fair_ms = now_ms;
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
