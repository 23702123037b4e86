/* SPDX-License-Identifier: BSD-3-Clause */
/* The bridge's SUB side: the control plane's messages into new versions of the shared state. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "common/log.h"
#include "common/now.h"
#include "dataplane/bridge/bridge_int.h"
#include "dataplane/rules.h"

/* ---- building versions of the shared state ------------------------------------------- */

static struct event_table *
build_events(const struct model *m)
{
	struct dp_event_cfg cfg[DP_MAX_EVENTS];
	struct event_table *t = malloc(sizeof(*t));

	if (t == NULL)
		return NULL;
	for (unsigned i = 0; i < m->n_ev; i++) {
		const struct wire_event *e = &m->ev[i];

		cfg[i].id = e->id;
		memcpy(cfg[i].name, e->name, sizeof(cfg[i].name));
		cfg[i].name[sizeof(cfg[i].name) - 1] = '\0';
		cfg[i].starts_at_ms = e->starts_at_ms;
		cfg[i].ends_at_ms = e->ends_at_ms;
		cfg[i].stock = e->stock;
	}
	if (event_table_build(t, cfg, m->n_ev) != 0) { /* ids are unique in a model */
		free(t);
		return NULL;
	}
	for (unsigned i = 0; i < t->n; i++)
		for (unsigned k = 0; k < m->n_ev; k++)
			if (m->ev[k].id == t->e[i].id) {
				t->e[i].sold_out = (m->ev[k].flags & WIRE_EVENT_F_SOLD_OUT) != 0;
				t->e[i].closed = (m->ev[k].flags & WIRE_EVENT_F_CLOSED) != 0;
				t->e[i].held = (m->ev[k].flags & WIRE_EVENT_F_HELD) != 0;
				if (m->has_fair[k])
					event_entry_set_fair(&t->e[i], &m->fair[k]);
			}
	event_table_count_selling(t);
	return t;
}

static void
build_keys(struct bridge *b, const struct model *m, struct dp_shared *d)
{
	tok_keyring_wipe(&d->auth);
	tok_keyring_wipe(&d->sale);
	tok_keyring_init(&d->auth);
	tok_keyring_init(&d->sale);
	for (unsigned i = 0; i < m->n_keys; i++) {
		const struct wire_key *k = &m->keys[i];
		struct tok_keyring *ring = k->kind == WIRE_KEY_AUTH ? &d->auth : &d->sale;

		if (tok_keyring_set(ring, k->kid, k->secret, k->len,
			    (k->flags & WIRE_KEY_F_CURRENT) != 0) != 0)
			CTR_INC(b->ctr.keys_rejected);
	}
}

/* Returns the new rule set, or NULL when it was refused (then the old one stays). */
static struct rules *
build_rules(struct bridge *b, const struct model *m, bool *ok)
{
	struct rule_spec *specs = calloc(m->n_rules ? m->n_rules : 1, sizeof(*specs));
	char err[160];
	struct rules *r = NULL;

	*ok = false;
	if (specs == NULL)
		return NULL;
	for (unsigned i = 0; i < m->n_rules; i++) {
		const struct wire_rule *w = &m->rules[i];

		specs[i].kind = w->kind == WIRE_RULE_BLOCK_IP_CIDR    ? RULE_BLOCK_IP
				: w->kind == WIRE_RULE_BLOCK_USER     ? RULE_BLOCK_USER
				: w->kind == WIRE_RULE_BLOCK_IP6_CIDR ? RULE_BLOCK_IP6
								      : RULE_BLOCK_DEVICE;
		specs[i].ip = w->ipv4;
		specs[i].prefix = w->prefix;
		specs[i].user = w->user;
		if (w->kind == WIRE_RULE_BLOCK_IP6_CIDR) {
			memcpy(specs[i].ip6, w->ipv6, sizeof(specs[i].ip6));
			continue;
		}
		memcpy(specs[i].device, w->device, sizeof(specs[i].device));
		specs[i].device[sizeof(specs[i].device) - 1] = '\0';
	}
	r = rules_build(specs, m->n_rules, b->cfg.socket_id, err, sizeof(err));
	free(specs);
	if (r == NULL) {
		CTR_INC(b->ctr.rules_rejected);
		LOG_WARN(
			"bridge: the control plane's rule set (%u rules) was refused, the previous "
			"set stays: %s",
			m->n_rules, err);
		return NULL;
	}
	*ok = true;
	return r;
}

/* Publishes a new version with the parts in `what` rebuilt from the current model. */
static void
publish(struct bridge *b, unsigned what, uint64_t snapshot_id)
{
	bool first = shared_get(&b->shared) == NULL;
	struct dp_shared *d = shared_alloc(&b->shared);

	if (d == NULL) {
		LOG_ERR("bridge: out of memory for a new shared state; the update is lost until "
			"the next snapshot");
		b->want_snapshot = true;
		return;
	}
	if (first)
		what = CH_ALL;
	if (what & CH_EVENTS) {
		struct event_table *t = build_events(&b->cur);

		if (t == NULL) {
			shared_discard(d);
			b->want_snapshot = true;
			return;
		}
		d->events = t;
	}
	if (what & CH_RULES) {
		bool ok;
		struct rules *r = build_rules(b, &b->cur, &ok);

		if (ok)
			d->rules = r;
	}
	if (what & CH_KEYS)
		build_keys(b, &b->cur, d);
	if (what & CH_LIMITS) {
		const struct wire_limits *l = &b->cur.limits;

		d->limits.ip = (struct rl_params){l->ip_rate, l->ip_burst};
		d->limits.user = (struct rl_params){l->user_rate, l->user_burst};
		d->limits.device = (struct rl_params){l->device_rate, l->device_burst};
		d->limits.event_forward =
			(struct rl_params){l->event_forward_per_s, l->event_forward_burst};
	}
	if (snapshot_id != 0)
		d->snapshot_id = snapshot_id;
	shared_publish(&b->shared, d);
}

/* ---- the model ------------------------------------------------------------------------- */

static struct wire_event *
model_event(struct model *m, uint32_t id)
{
	for (unsigned i = 0; i < m->n_ev; i++)
		if (m->ev[i].id == id)
			return &m->ev[i];
	return NULL;
}

/* Inserts or replaces an event; false when the model is full. */
static bool
model_upsert_event(struct model *m, const struct wire_event *e)
{
	struct wire_event *x = model_event(m, e->id);

	if (x == NULL) {
		if (m->n_ev == DP_MAX_EVENTS)
			return false;
		m->has_fair[m->n_ev] = false; /* FAIR follows its EVENT */
		x = &m->ev[m->n_ev++];
	}
	*x = *e;
	return true;
}

static bool
model_add_rule(struct model *m, const struct wire_rule *r)
{
	if (m->n_rules == m->cap_rules) {
		unsigned cap = m->cap_rules ? m->cap_rules * 2 : 64;
		struct wire_rule *n = realloc(m->rules, sizeof(*n) * cap);

		if (n == NULL)
			return false;
		m->rules = n;
		m->cap_rules = cap;
	}
	m->rules[m->n_rules++] = *r;
	return true;
}

static void
model_reset(struct model *m)
{
	struct wire_rule *keep = m->rules;
	unsigned cap = m->cap_rules;

	memset(m, 0, sizeof(*m));
	m->rules = keep;
	m->cap_rules = cap;
}

/* ---- incoming messages ------------------------------------------------------------------ */

/* Follows a sender's sequence numbers; asks for a snapshot on a gap or a restart. */
static void
track_sender(struct bridge *b, const struct wire_msg *m)
{
	struct sender_track *free_slot = NULL, *t = NULL;

	for (unsigned i = 0; i < SENDERS_MAX; i++) {
		if (b->senders[i].used && b->senders[i].id == m->sender)
			t = &b->senders[i];
		else if (!b->senders[i].used && free_slot == NULL)
			free_slot = &b->senders[i];
	}
	if (t == NULL) {
		/* A sender never seen: nothing to compare with (a snapshot is asked at start). */
		t = free_slot != NULL ? free_slot : &b->senders[m->sender % SENDERS_MAX];
		t->used = true;
		t->id = m->sender;
		t->epoch = m->epoch;
	} else if (t->epoch != m->epoch) {
		CTR_INC(b->ctr.sender_restarts);
		LOG_NOTICE("bridge: control plane %" PRIu32 " restarted; asking for a snapshot",
			m->sender);
		t->epoch = m->epoch;
		b->want_snapshot = true;
	} else if (m->seq != t->next_seq) {
		CTR_INC(b->ctr.seq_gaps);
		LOG_RL(LOG_LEVEL_WARN, 1000,
			"bridge: control plane %" PRIu32 ": message %" PRIu64 " where %" PRIu64
			" was next; asking for a snapshot",
			m->sender, m->seq, t->next_seq);
		b->want_snapshot = true;
		if (b->snap.active && b->snap.sender == m->sender) {
			b->snap.active = false;
			CTR_INC(b->ctr.snapshots_incomplete);
		}
	}
	t->next_seq = m->seq + 1;
}

static struct wire_event *model_event(struct model *m, uint32_t id);

/*
 * The stock a reserve round left (WIRE_RESULT_F_STOCK): into the model, so that the next
 * version keeps it, and into the published event table in place, so that GET
 * /api/v1/events/{id} shows it now without a new version per result message (the bridge is
 * that table's only writer; workers read the field with a relaxed load). A sold-out or a
 * restock still comes as its own message and makes a new version.
 */
static void
result_stock(struct bridge *b, uint32_t event, uint32_t stock)
{
	struct wire_event *e = bridge_is_ready(b) ? model_event(&b->cur, event) : NULL;
	const struct dp_shared *d = shared_get(&b->shared);
	struct event_entry *x;

	if (e == NULL || d == NULL || e->stock == stock)
		return;
	e->stock = stock;
	x = (struct event_entry *)(uintptr_t)event_lookup(d->events, event);
	if (x != NULL)
		__atomic_store_n(&x->stock, stock, __ATOMIC_RELAXED);
}

/*
 * Counts one record of a message as its handler decoded it (rc, from wire_get_*()): in
 * a snapshot, one more of its kind seen (*seen; seen NULL: not counted); refused, a decode
 * error. Returns whether it decoded.
 */
static bool
record_decoded(struct bridge *b, bool snap, unsigned *seen, int rc)
{
	if (snap && seen != NULL)
		(*seen)++;
	if (rc == 0)
		return true;
	CTR_INC(b->ctr.decode_errors[WIRE_ERRI_FIELD]);
	return false;
}

/* Results decoded, and their home buckets prefetched, before the first of them is stored. */
#define RESULT_AHEAD 16

static void
on_result(struct bridge *b, const struct wire_msg *m)
{
	struct wire_result rs[RESULT_AHEAD];
	bool ok[RESULT_AHEAD];

	for (unsigned i = 0; i < m->count; i++) {
		unsigned j = i % RESULT_AHEAD;

		/* Every RESULT_AHEAD results: the next ones decoded, and the bucket each put reads
		 * first (random in an index of tens of MB: a cache and TLB miss each, which the
		 * put would otherwise wait for one after the other) asked for at once. */
		if (j == 0) {
			unsigned n = m->count - i < RESULT_AHEAD ? m->count - i : RESULT_AHEAD;

			for (unsigned k = 0; k < n; k++) {
				ok[k] = record_decoded(
					b, false, NULL, wire_get_result(m, i + k, &rs[k]));
				if (ok[k]) {
					uint64_t uh = result_table_user_hash(b->results, rs[k].user);

					/* A new key's put writes its home's summary too. */
					result_table_prefetch(b->results, uh);
					result_table_prefetch_summary(b->results, uh);
				}
			}
			/* A full table evicts its oldest key for each new one: those too. */
			result_table_prefetch_evictions(b->results, n);
		}
		if (!ok[j])
			continue;

		const struct wire_result r = rs[j];
		struct rt_result v = {
			.reservation_id = r.reservation_id,
			.order_id = r.order_id,
			.pay_deadline_ms = r.pay_deadline_ms,
			.rank = r.verdict == WIRE_V_QUEUED || r.verdict == WIRE_V_WAITING ? r.rank
											     : 0,
			.verdict = r.verdict,
		};

		/* The stock first: a poll that sees the result sees the stock it left. */
		if (r.flags & WIRE_RESULT_F_STOCK)
			result_stock(b, r.event, r.stock_left);
		result_table_put(b->results, r.event, r.user, &v);
		if (unlikely(r.reservation_id == b->mark_rid))
			b->confirmed = b->mark_count; /* docs/wire.md "Delivery" */
	}
	/* One grace period for the message's evictions (result_table_seal()). */
	result_table_seal(b->results);
}

/* The model a state message goes to: the snapshot being received, the current one, or none. */
static struct model *
target_model(struct bridge *b, const struct wire_msg *m, bool *in_snapshot)
{
	*in_snapshot = b->snap.active && b->snap.sender == m->sender;
	if (*in_snapshot)
		return &b->snap.m;
	if (!bridge_is_ready(b)) {
		CTR_INC(b->ctr.ignored_before_snapshot);
		return NULL;
	}
	return &b->cur;
}

static void
on_events(struct bridge *b, const struct wire_msg *m)
{
	bool snap;
	struct model *t = target_model(b, m, &snap);
	bool changed = false;

	if (t == NULL)
		return;
	for (unsigned i = 0; i < m->count; i++) {
		struct wire_event e;

		if (!record_decoded(b, snap, &b->snap.seen_ev, wire_get_event(m, i, &e)))
			continue;
		if (!model_upsert_event(t, &e)) {
			CTR_INC(b->ctr.events_rejected);
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"bridge: event %" PRIu32
				" ignored: at most %d events per data plane",
				e.id, DP_MAX_EVENTS);
			continue;
		}
		changed = true;
	}
	if (!snap && changed)
		publish(b, CH_EVENTS, 0);
}

static void
on_stock(struct bridge *b, const struct wire_msg *m)
{
	bool changed = false;

	for (unsigned i = 0; i < m->count; i++) {
		struct wire_stock s;

		if (!record_decoded(b, false, NULL, wire_get_stock(m, i, &s)))
			continue;
		/* A change that arrives while a snapshot is on its way applies to both. */
		struct wire_event *staged =
			b->snap.active ? model_event(&b->snap.m, s.event) : NULL;
		struct wire_event *e = bridge_is_ready(b) ? model_event(&b->cur, s.event) : NULL;

		for (int k = 0; k < 2; k++) {
			struct wire_event *x = k == 0 ? staged : e;

			if (x == NULL)
				continue;
			x->stock = s.stock_left;
			if (m->type == WIRE_T_SOLD_OUT)
				x->flags |= WIRE_EVENT_F_SOLD_OUT;
			else
				x->flags &= (uint8_t)~WIRE_EVENT_F_SOLD_OUT;
		}
		if (e != NULL)
			changed = true;
		else if (staged == NULL)
			CTR_INC(b->ctr.stock_unknown_event);
	}
	if (changed)
		publish(b, CH_EVENTS, 0);
}

/*
 * Whether FAIR records a and b differ only in what the bridge rewrites in place: the draw's
 * progress (entrants, decided, rate) and the difficulty of new tokens.
 */
static bool
fair_same_state(const struct wire_fair *a, const struct wire_fair *b)
{
	return a->event == b->event && a->draw_state == b->draw_state &&
	       a->queue_opens_at_ms == b->queue_opens_at_ms && a->draw_at_ms == b->draw_at_ms &&
	       memcmp(a->seed_sha256, b->seed_sha256, sizeof(a->seed_sha256)) == 0 &&
	       memcmp(a->entrants_digest, b->entrants_digest, sizeof(a->entrants_digest)) == 0 &&
	       memcmp(a->seed, b->seed, sizeof(a->seed)) == 0;
}

/*
 * The draw's progress and the difficulty into the published event table in place, as
 * result_stock() does with the stock: the progress comes up to five times a second per event
 * while a draw runs, and the difficulty may change every second under load, neither worth a
 * new version of the shared state (the bridge is the table's only writer; workers read these
 * fields with relaxed loads). Returns false when the published table has no such event.
 */
static bool
fair_progress(struct bridge *b, const struct wire_fair *f)
{
	const struct dp_shared *d = shared_get(&b->shared);
	struct event_entry *x =
		d != NULL ? (struct event_entry *)(uintptr_t)event_lookup(d->events, f->event)
			  : NULL;

	if (x == NULL || !x->has_fair)
		return false;
	__atomic_store_n(&x->entrants, f->entrants, __ATOMIC_RELAXED);
	__atomic_store_n(&x->decided, f->decided, __ATOMIC_RELAXED);
	__atomic_store_n(&x->rate, f->rate, __ATOMIC_RELAXED);
	__atomic_store_n(&x->served, f->served, __ATOMIC_RELAXED);
	__atomic_store_n(
		&x->final, (uint8_t)((f->flags & WIRE_FAIR_F_FINAL) != 0), __ATOMIC_RELAXED);
	__atomic_store_n(&x->pow_bits, f->pow_bits, __ATOMIC_RELAXED);
	CTR_INC(b->ctr.fair_in_place);
	return true;
}

/*
 * FAIR: an event's draw and challenge, upserted into the model next to its EVENT (which comes
 * first, in a snapshot as outside one). A record for an event the model does not have is
 * refused and counted; one that changes the draw's state, times or digests makes a new
 * version; one that only moves the progress or the difficulty is applied in place.
 */
static void
on_fair(struct bridge *b, const struct wire_msg *m)
{
	bool snap;
	struct model *t = target_model(b, m, &snap);
	bool changed = false;

	if (t == NULL)
		return;
	for (unsigned i = 0; i < m->count; i++) {
		struct wire_fair f;

		if (!record_decoded(b, snap, NULL, wire_get_fair(m, i, &f))) {
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"bridge: a FAIR record of the control plane was refused: a field is out "
				"of range (draw state, pow bits, decided > entrants or the times)");
			continue;
		}
		struct wire_event *e = model_event(t, f.event);

		if (e == NULL) {
			CTR_INC(b->ctr.fair_unknown_event);
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"bridge: FAIR for event %" PRIu32 " that no EVENT announced: ignored",
				f.event);
			continue;
		}
		unsigned k = (unsigned)(e - t->ev);
		bool same = t->has_fair[k] && fair_same_state(&t->fair[k], &f);

		/* A waiting buyer's position is rank - 1 - decided: it never goes back up, even
		 * when a resumed draw reports a count a moment old. */
		if (same && f.decided < t->fair[k].decided && t->fair[k].decided <= f.entrants)
			f.decided = t->fair[k].decided;
		t->fair[k] = f;
		t->has_fair[k] = true;
		if (snap)
			continue;
		if (!same || !fair_progress(b, &f))
			changed = true;
	}
	if (!snap && changed)
		publish(b, CH_EVENTS, 0);
}

static void
on_keys(struct bridge *b, const struct wire_msg *m)
{
	bool snap;
	struct model *t = target_model(b, m, &snap);

	if (t == NULL)
		return;
	/* Outside a snapshot a KEYS message is the whole keyring; inside, part of it. */
	if (!snap)
		t->n_keys = 0;
	for (unsigned i = 0; i < m->count; i++) {
		struct wire_key k;

		if (!record_decoded(b, snap, &b->snap.seen_keys, wire_get_key(m, i, &k)))
			continue;
		if (t->n_keys == KEYS_MAX) {
			CTR_INC(b->ctr.keys_rejected);
			continue;
		}
		t->keys[t->n_keys++] = k;
	}
	if (!snap)
		publish(b, CH_KEYS, 0);
}

static void
on_rules(struct bridge *b, const struct wire_msg *m)
{
	bool snap;
	struct model *t = target_model(b, m, &snap);

	if (t == NULL)
		return;
	if (!snap)
		t->n_rules = 0;
	for (unsigned i = 0; i < m->count; i++) {
		struct wire_rule r;

		if (!record_decoded(b, snap, &b->snap.seen_rules, wire_get_rule(m, i, &r)))
			continue;
		if (!model_add_rule(t, &r))
			CTR_INC(b->ctr.rules_rejected);
	}
	if (!snap)
		publish(b, CH_RULES, 0);
}

static void
on_limits(struct bridge *b, const struct wire_msg *m)
{
	bool snap;
	struct model *t = target_model(b, m, &snap);
	struct wire_limits l;

	if (t == NULL || !record_decoded(b, snap, NULL, wire_get_limits(m, 0, &l)))
		return;
	t->limits = l;
	t->have_limits = true;
	if (!snap)
		publish(b, CH_LIMITS, 0);
}

static void
on_snapshot(struct bridge *b, const struct wire_msg *m)
{
	struct wire_snapshot s;

	if (!record_decoded(b, false, NULL, wire_get_snapshot(m, 0, &s)))
		return;
	if (m->type == WIRE_T_SNAPSHOT_BEGIN) {
		if (b->snap.active)
			CTR_INC(b->ctr.snapshots_incomplete);
		model_reset(&b->snap.m);
		b->snap.active = true;
		b->snap.sender = m->sender;
		b->snap.id = s.snapshot_id;
		b->snap.started_ms = now_mono_us() / 1000;
		b->snap.seen_ev = b->snap.seen_keys = b->snap.seen_rules = 0;
		return;
	}
	struct staging *st = &b->snap;

	if (!st->active || st->sender != m->sender || st->id != s.snapshot_id ||
		st->seen_ev != s.n_events || st->seen_keys != s.n_keys ||
		st->seen_rules != s.n_rules || !st->m.have_limits) {
		if (st->active && st->sender == m->sender)
			st->active = false;
		CTR_INC(b->ctr.snapshots_incomplete);
		LOG_RL(LOG_LEVEL_WARN, 1000,
			"bridge: snapshot %" PRIu64 " from control plane %" PRIu32
			" is incomplete; asking again",
			s.snapshot_id, m->sender);
		b->want_snapshot = true;
		return;
	}
	/* The snapshot replaces everything: swap the models (the rule arrays move too). */
	struct model tmp = b->cur;

	b->cur = st->m;
	st->m = tmp;
	st->active = false;
	bool first = !bridge_is_ready(b);

	publish(b, CH_ALL, s.snapshot_id);
	b->want_snapshot = false;
	CTR_INC(b->ctr.snapshots_applied);
	if (first)
		LOG_NOTICE("bridge: first snapshot %" PRIu64 " applied (%u events, %u keys, %u "
			   "rules): ready",
			s.snapshot_id, b->cur.n_ev, b->cur.n_keys, b->cur.n_rules);
	else
		LOG_INFO("bridge: snapshot %" PRIu64 " applied (%u events, %u keys, %u rules)",
			s.snapshot_id, b->cur.n_ev, b->cur.n_keys, b->cur.n_rules);
}

/* Sets every port's refused flag: the workers answer 503 to reserve while it is set. */
static void
set_refused(struct bridge *b, bool refused)
{
	for (unsigned i = 0; i < b->cfg.n_workers; i++)
		__atomic_store_n(&b->ports[i].refused, refused, __ATOMIC_RELAXED);
}

/*
 * DP_REFUSED: the control plane refuses this data plane (another holds its dp id, or two started
 * with it in the same second). Every reservation it would admit would never be decided: answer
 * 503 until the control plane stops refusing (BRIDGE_REFUSED_HOLD_MS after its last notice).
 */
static void
on_dp_refused(struct bridge *b, const struct wire_msg *m)
{
	for (unsigned i = 0; i < m->count; i++) {
		struct wire_dp_refused d;

		if (wire_get_dp_refused(m, i, &d) != 0 || d.dp_id != b->cfg.dp_id ||
			d.epoch != b->tx.epoch || (d.instance != 0 && d.instance != b->instance))
			continue;
		CTR_INC(b->ctr.refusals);
		if (b->refused_until_ms == 0) {
			set_refused(b, true);
			LOG_ERR("bridge: THE CONTROL PLANE REFUSES THIS DATA PLANE: another live "
				"data "
				"plane uses dp_id %u%s. Reservations are answered 503 until it is "
				"gone; "
				"give every data plane its own [bridge] dp_id",
				b->cfg.dp_id,
				d.instance == 0 ? " and started in the same second as this one"
						: "");
		}
		b->refused_until_ms = now_mono_us() / 1000 + BRIDGE_REFUSED_HOLD_MS;
	}
}

void
bridge_in_check_refusal(struct bridge *b, uint64_t now_ms)
{
	if (b->refused_until_ms == 0 || now_ms < b->refused_until_ms)
		return;
	b->refused_until_ms = 0;
	set_refused(b, false);
	LOG_NOTICE("bridge: the control plane no longer refuses dp_id %u: reservations are "
		   "admitted again",
		b->cfg.dp_id);
}

/*
 * HEARTBEAT: the control plane's clock. This data plane's clock minus it (the link's latency
 * included, well below a millisecond on a LAN) is the skew shown in the counters; one beyond
 * clock_skew_max_ms is logged once, until it is back within.
 */
static void
on_heartbeat(struct bridge *b, const struct wire_msg *m)
{
	struct wire_heartbeat hb;

	if (wire_get_heartbeat(m, 0, &hb) != 0)
		return;
	uint64_t mine =
		b->cfg.clock != NULL ? clock_ms(&b->cfg.clock->ref, rte_rdtsc()) : now_wall_ms();
	int64_t skew = (int64_t)(mine - hb.now_ms);
	uint64_t mag = skew < 0 ? (uint64_t)-skew : (uint64_t)skew;
	bool over = b->cfg.clock_skew_max_ms != 0 && mag > b->cfg.clock_skew_max_ms;

	__atomic_store_n(&b->skew_ms, skew, __ATOMIC_RELAXED);
	__atomic_store_n(&b->skew_known, true, __ATOMIC_RELEASE);
	if (over && !b->skew_over) {
		CTR_INC(b->ctr.clock_skew_over);
		LOG_WARN("bridge: this data plane's clock is %" PRIu64 " ms %s the control plane's "
			 "(more than [bridge] clock_skew_max, %u ms): it shows the sale's state "
			 "wrongly (the control plane decides by its own clock); check NTP on both "
			 "hosts",
			mag, skew > 0 ? "ahead of" : "behind", b->cfg.clock_skew_max_ms);
	} else if (!over && b->skew_over) {
		LOG_NOTICE("bridge: the clock skew against the control plane is back within %u ms "
			   "(%" PRId64 " ms)",
			b->cfg.clock_skew_max_ms, skew);
	}
	b->skew_over = over;
}

static void
handle_message(struct bridge *b, const void *data, size_t len)
{
	struct wire_msg m;
	int rc = wire_decode(data, len, &m);

	if (rc != 0) {
		CTR_INC(b->ctr.decode_errors[wire_err_index(rc)]);
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"bridge: a message from the control plane was "
			"refused: %s (%zu bytes)",
			wire_err_name(rc), len);
		return;
	}
	if (m.type < WIRE_T_RESULT) {
		CTR_INC(b->ctr.wrong_direction);
		return;
	}
	track_sender(b, &m);
	CTR_INC(b->ctr.msgs_in[m.type]);
	CTR_ADD(b->ctr.records_in[m.type], m.count);
	switch (m.type) {
	case WIRE_T_RESULT:
		on_result(b, &m);
		break;
	case WIRE_T_EVENT:
		on_events(b, &m);
		break;
	case WIRE_T_SOLD_OUT:
	case WIRE_T_RESTOCK:
		on_stock(b, &m);
		break;
	case WIRE_T_KEYS:
		on_keys(b, &m);
		break;
	case WIRE_T_RULES:
		on_rules(b, &m);
		break;
	case WIRE_T_LIMITS:
		on_limits(b, &m);
		break;
	case WIRE_T_FAIR:
		on_fair(b, &m);
		break;
	case WIRE_T_SNAPSHOT_BEGIN:
	case WIRE_T_SNAPSHOT_END:
		on_snapshot(b, &m);
		break;
	case WIRE_T_DP_REFUSED:
		on_dp_refused(b, &m);
		break;
	case WIRE_T_HEARTBEAT: /* its arrival is the point, and its clock */
		on_heartbeat(b, &m);
		break;
	default:
		break;
	}
}

/* Handles what the SUB socket holds, at most RECV_PER_ROUND messages. Returns how many. */
unsigned
bridge_in_receive(struct bridge *b)
{
	unsigned n = 0;

	while (n < RECV_PER_ROUND) {
		zmq_msg_t msg;

		zmq_msg_init(&msg);
		if (zmq_msg_recv(&msg, b->sub, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&msg);
			break;
		}
		n++;
		b->last_rx_ms = now_mono_us() / 1000;
		shared_heard(&b->shared, b->last_rx_ms);
		if (zmq_msg_more(&msg)) {
			/* Every message is one frame: drop all parts of anything else. */
			CTR_INC(b->ctr.multipart);
			while (zmq_msg_more(&msg) && zmq_msg_recv(&msg, b->sub, ZMQ_DONTWAIT) >= 0)
				;
		} else {
			handle_message(b, zmq_msg_data(&msg), zmq_msg_size(&msg));
		}
		zmq_msg_close(&msg);
	}
	return n;
}

/* Decides whether to ask for a snapshot now. */
void
bridge_in_schedule_snapshot(struct bridge *b, uint64_t now_ms)
{
	const struct bridge_config *c = &b->cfg;
	bool ready = bridge_is_ready(b);

	/* A snapshot whose END never came is abandoned after a few retry periods. */
	if (b->snap.active &&
		bridge_ms_since(now_ms, b->snap.started_ms) > 4 * (uint64_t)c->snapshot_retry_ms) {
		b->snap.active = false;
		CTR_INC(b->ctr.snapshots_incomplete);
		b->want_snapshot = true;
	}
	if (b->snap.active || b->request_due)
		return;
	bool silent = bridge_silent_ms(b, now_ms) >= c->resync_ms;
	uint64_t interval = !ready || b->want_snapshot ? c->snapshot_retry_ms : c->resync_ms;

	if ((!ready || b->want_snapshot || silent) && now_ms - b->last_request_ms >= interval) {
		b->request_due = true;
		b->last_request_ms = now_ms;
	}
}
