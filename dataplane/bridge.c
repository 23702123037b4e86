/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/bridge.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <zmq.h>

#include "common/log.h"
#include "common/now.h"
#include "dataplane/counters.h"
#include "dataplane/rules.h"

#define SENDERS_MAX    8   /* control planes whose sequence numbers we follow */
#define RECV_PER_ROUND 256 /* messages handled before the bridge looks at its rings again */
#define DRAIN_BURST    64
#define KEYS_MAX       (2 * TOK_KEYS_MAX)

/* The control plane's view as the bridge last applied it: versions are built from this. */
struct model {
	struct wire_event ev[DP_MAX_EVENTS];
	unsigned n_ev;
	struct wire_key keys[KEYS_MAX];
	unsigned n_keys;
	struct wire_rule *rules;
	unsigned n_rules, cap_rules;
	struct wire_limits limits;
	bool have_limits;
};

/* A snapshot being received: BEGIN seen, END not yet. */
struct staging {
	bool active;
	uint32_t sender;
	uint64_t id;
	uint64_t started_ms;
	unsigned seen_ev, seen_keys, seen_rules; /* records received, kept or not */
	struct model m;
};

struct sender_track {
	bool used;
	uint32_t id;
	uint32_t epoch;
	uint64_t next_seq;
};

enum { CH_EVENTS = 1, CH_KEYS = 2, CH_RULES = 4, CH_LIMITS = 8, CH_ALL = 15 };

struct bridge {
	struct bridge_config cfg;
	struct bridge_port *ports;
	struct rte_rcu_qsbr *qsbr;
	struct result_table *results;
	struct shared_state shared;
	struct bridge_counters ctr;

	pthread_t thread;
	bool started, stopped;
	volatile bool stop;
	uint64_t flush_deadline_ms;

	void *zctx, *push, *sub;
	struct wire_sender tx;

	/* Out: records drained from the rings, and at most one encoded message in flight. */
	struct wire_reserve *staged;
	unsigned n_staged;
	uint64_t staged_since_us;
	struct wire_result_query *qstaged;
	unsigned n_qstaged;
	uint8_t *msg;
	size_t msg_cap, msg_len;
	bool pending;
	uint8_t pending_type;
	unsigned pending_records;
	unsigned rr; /* the ring drained first, rotating for fairness */
	struct wire_stat *stats; /* WIRE_STATS_MAX records of the next DP_STATS */
	bool stats_due;
	uint64_t last_stats_ms;

	/* In. */
	struct sender_track senders[SENDERS_MAX];
	struct model cur;
	struct staging snap;
	bool want_snapshot, request_due;
	uint64_t last_request_ms, last_rx_ms;
};

/* Counters are read by other threads: single writer, so relaxed atomic increments suffice. */
#define CTR_ADD(field, n) __atomic_store_n(&(field), (field) + (n), __ATOMIC_RELAXED)
#define CTR_INC(field)	  CTR_ADD(field, 1)

void
bridge_config_defaults(struct bridge_config *c)
{
	memset(c, 0, sizeof(*c));
	c->dp_id = 1;
	snprintf(c->push_endpoint, sizeof(c->push_endpoint), "tcp://127.0.0.1:5601");
	snprintf(c->sub_endpoint, sizeof(c->sub_endpoint), "tcp://127.0.0.1:5602");
	c->n_workers = 1;
	c->ring_size = 16384;
	c->batch_max = 256;
	c->batch_wait_us = 1000;
	c->result_capacity = 1u << 20;
	c->resync_ms = 5000;
	c->snapshot_retry_ms = 500;
	c->push_hwm = 1000;
	c->push_sndbuf = 0;
	c->socket_id = SOCKET_ID_ANY;
	c->stats_ms = 1000;
}

int
bridge_config_check(const struct bridge_config *c, char *err, size_t errlen)
{
	const char *what = NULL;

	if (c->dp_id < 1 || c->dp_id > WIRE_DP_ID_MAX)
		what = "the data plane id must be 1..1023 (it is part of every reservation id)";
	else if (c->push_endpoint[0] == '\0' || c->sub_endpoint[0] == '\0')
		what = "both control plane endpoints must be set (e.g. tcp://127.0.0.1:5601)";
	else if (c->n_workers < 1 || c->n_workers > WIRE_WORKERS_MAX)
		what = "the number of workers must be 1..64 (6 bits of the reservation id)";
	else if (c->ring_size < 2 || (c->ring_size & (c->ring_size - 1)) != 0 ||
		 c->ring_size > RTE_RING_SZ_MASK)
		what = "the ring size must be a power of two, at least 2";
	else if (c->batch_max < 1 || c->batch_max > BRIDGE_BATCH_MAX)
		what = "the batch size must be 1..4096 records";
	else if (c->batch_wait_us > 1000000)
		what = "the batch wait must be at most 1000000 us";
	else if (c->result_capacity < 1 || c->result_capacity > (1u << 28))
		what = "the result table capacity must be 1..268435456";
	else if (c->resync_ms < 100 || c->snapshot_retry_ms < 10)
		what = "resync must be at least 100 ms and the snapshot retry at least 10 ms";
	else if (c->push_hwm < 1)
		what = "the PUSH high-water mark must be at least 1 message";
	else if (c->stats_ms != 0 && (c->stats_ms < 10 || c->stats_ms > 3600000))
		what = "the counters interval must be 10..3600000 ms, or 0 to send none";
	if (what == NULL)
		return 0;
	snprintf(err, errlen, "bridge: %s", what);
	return -EINVAL;
}

struct bridge *
bridge_create(const struct bridge_config *c, char *err, size_t errlen)
{
	struct bridge *b;
	char name[RTE_RING_NAMESIZE];

	if (bridge_config_check(c, err, errlen) != 0)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		goto nomem;
	b->cfg = *c;
	b->ports = rte_zmalloc_socket("bridge_ports", sizeof(*b->ports) * c->n_workers,
		RTE_CACHE_LINE_SIZE, c->socket_id);
	b->qsbr = rte_zmalloc_socket("bridge_qsbr", rte_rcu_qsbr_get_memsize(c->n_workers),
		RTE_CACHE_LINE_SIZE, c->socket_id);
	b->staged = malloc(sizeof(*b->staged) * c->batch_max);
	b->qstaged = malloc(sizeof(*b->qstaged) * c->batch_max);
	b->msg_cap = wire_msg_size(WIRE_T_RESERVE, c->batch_max);
	/* The one message buffer also carries a full DP_STATS. */
	if (b->msg_cap < wire_msg_size(WIRE_T_DP_STATS, WIRE_STATS_MAX))
		b->msg_cap = wire_msg_size(WIRE_T_DP_STATS, WIRE_STATS_MAX);
	b->msg = malloc(b->msg_cap);
	b->stats = calloc(WIRE_STATS_MAX, sizeof(*b->stats));
	if (b->ports == NULL || b->qsbr == NULL || b->staged == NULL || b->qstaged == NULL ||
		b->msg == NULL || b->stats == NULL || rte_rcu_qsbr_init(b->qsbr, c->n_workers) != 0)
		goto nomem;
	snprintf(name, sizeof(name), "fg_results_%u", c->dp_id);
	b->results = result_table_create(name, c->result_capacity, c->socket_id, b->qsbr);
	if (b->results == NULL) {
		snprintf(err, errlen,
			"bridge: cannot create a result table of %u entries: %s "
			"(lower the capacity or give DPDK more memory)",
			c->result_capacity, rte_strerror(rte_errno));
		bridge_destroy(b);
		return NULL;
	}
	shared_init(&b->shared, b->qsbr);
	for (unsigned i = 0; i < c->n_workers; i++) {
		snprintf(name, sizeof(name), "fg_bridge_%u_%u", c->dp_id, i);
		b->ports[i].ring = rte_ring_create_elem(name, sizeof(struct wire_reserve),
			c->ring_size, c->socket_id, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (b->ports[i].ring == NULL) {
			snprintf(err, errlen, "bridge: cannot create ring %s of %u: %s", name,
				c->ring_size, rte_strerror(rte_errno));
			bridge_destroy(b);
			return NULL;
		}
		b->ports[i].shared = &b->shared;
		b->ports[i].results = b->results;
	}
	b->tx.id = c->dp_id;
	b->tx.epoch = (uint32_t)(now_wall_ms() / 1000);
	b->tx.seq = 0;
	return b;
nomem:
	snprintf(err, errlen, "bridge: out of memory");
	bridge_destroy(b);
	return NULL;
}

void
bridge_destroy(struct bridge *b)
{
	if (b == NULL)
		return;
	if (b->started && !b->stopped)
		bridge_stop(b, 0);
	if (b->ports != NULL)
		for (unsigned i = 0; i < b->cfg.n_workers; i++)
			rte_ring_free(b->ports[i].ring);
	shared_fini(&b->shared);
	result_table_free(b->results);
	rte_free(b->ports);
	rte_free(b->qsbr);
	free(b->cur.rules);
	free(b->snap.m.rules);
	free(b->staged);
	free(b->qstaged);
	free(b->msg);
	free(b->stats);
	free(b);
}

struct bridge_port *
bridge_port(struct bridge *b, unsigned worker)
{
	return worker < b->cfg.n_workers ? &b->ports[worker] : NULL;
}

struct rte_rcu_qsbr *
bridge_qsbr(struct bridge *b)
{
	return b->qsbr;
}

const struct shared_state *
bridge_shared(const struct bridge *b)
{
	return &b->shared;
}

const struct result_table *
bridge_results(const struct bridge *b)
{
	return b->results;
}

bool
bridge_ready(const struct bridge *b)
{
	return shared_get(&b->shared) != NULL;
}

void
bridge_counters_read(const struct bridge *b, struct bridge_counters *out)
{
	const uint64_t *src = (const uint64_t *)&b->ctr;
	uint64_t *dst = (uint64_t *)out;

	/* Every field is a u64 written by one thread: copy them one atomic word at a time. */
	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	out->submitted = out->ring_full = out->queries = out->queries_refused = 0;
	for (unsigned i = 0; i < b->cfg.n_workers; i++) {
		const struct bridge_port *p = &b->ports[i];

		out->submitted += __atomic_load_n(&p->submitted, __ATOMIC_RELAXED);
		out->ring_full += __atomic_load_n(&p->ring_full, __ATOMIC_RELAXED);
		out->queries += __atomic_load_n(&p->queries, __ATOMIC_RELAXED);
		out->queries_refused += __atomic_load_n(&p->queries_refused, __ATOMIC_RELAXED);
	}
	const uint64_t *rs = (const uint64_t *)&b->results->ctr;
	uint64_t *rd = (uint64_t *)&out->results;

	for (size_t i = 0; i < sizeof(out->results) / sizeof(uint64_t); i++)
		rd[i] = __atomic_load_n(&rs[i], __ATOMIC_RELAXED);
	out->shared_versions = __atomic_load_n(&b->shared.published, __ATOMIC_RELAXED);
}

_Static_assert(sizeof(struct bridge_counters) % sizeof(uint64_t) == 0, "counters are u64s");
_Static_assert(sizeof(struct result_table_counters) % sizeof(uint64_t) == 0, "counters are u64s");

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

		specs[i].kind = w->kind == WIRE_RULE_BLOCK_IP_CIDR ? RULE_BLOCK_IP
				: w->kind == WIRE_RULE_BLOCK_USER  ? RULE_BLOCK_USER
								   : RULE_BLOCK_DEVICE;
		specs[i].ip = w->ipv4;
		specs[i].prefix = w->prefix;
		specs[i].user = w->user;
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
		d->limits.event_forward = (struct rl_params){l->event_forward_per_s, 0};
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

static void
on_result(struct bridge *b, const struct wire_msg *m)
{
	for (unsigned i = 0; i < m->count; i++) {
		struct wire_result r;

		if (wire_get_result(m, i, &r) != 0) {
			CTR_INC(b->ctr.decode_errors[WIRE_ERRI_FIELD]);
			continue;
		}
		struct rt_result v = {
			.reservation_id = r.reservation_id,
			.order_id = r.order_id,
			.pay_deadline_ms = r.pay_deadline_ms,
			.verdict = r.verdict,
		};

		result_table_put(b->results, r.event, r.user, &v);
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
	if (!bridge_ready(b)) {
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

		if (snap)
			b->snap.seen_ev++;
		if (wire_get_event(m, i, &e) != 0) {
			CTR_INC(b->ctr.decode_errors[WIRE_ERRI_FIELD]);
			continue;
		}
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

		if (wire_get_stock(m, i, &s) != 0) {
			CTR_INC(b->ctr.decode_errors[WIRE_ERRI_FIELD]);
			continue;
		}
		/* A change that arrives while a snapshot is on its way applies to both. */
		struct wire_event *staged =
			b->snap.active ? model_event(&b->snap.m, s.event) : NULL;
		struct wire_event *e = bridge_ready(b) ? model_event(&b->cur, s.event) : NULL;

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

		if (snap)
			b->snap.seen_keys++;
		if (wire_get_key(m, i, &k) != 0) {
			CTR_INC(b->ctr.decode_errors[WIRE_ERRI_FIELD]);
			continue;
		}
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

		if (snap)
			b->snap.seen_rules++;
		if (wire_get_rule(m, i, &r) != 0) {
			CTR_INC(b->ctr.decode_errors[WIRE_ERRI_FIELD]);
			continue;
		}
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

	if (t == NULL)
		return;
	if (wire_get_limits(m, 0, &l) != 0) {
		CTR_INC(b->ctr.decode_errors[WIRE_ERRI_FIELD]);
		return;
	}
	t->limits = l;
	t->have_limits = true;
	if (!snap)
		publish(b, CH_LIMITS, 0);
}

static void
on_snapshot(struct bridge *b, const struct wire_msg *m)
{
	struct wire_snapshot s;

	if (wire_get_snapshot(m, 0, &s) != 0) {
		CTR_INC(b->ctr.decode_errors[WIRE_ERRI_FIELD]);
		return;
	}
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
	bool first = !bridge_ready(b);

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
	case WIRE_T_SNAPSHOT_BEGIN:
	case WIRE_T_SNAPSHOT_END:
		on_snapshot(b, &m);
		break;
	default: /* HEARTBEAT: its arrival is the point */
		break;
	}
}

/* Handles what the SUB socket holds, at most RECV_PER_ROUND messages. Returns how many. */
static unsigned
receive(struct bridge *b)
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

/* ---- counters to the control plane -------------------------------------------------------- */

/* Appends one record when there is room. Every name here is valid by construction. */
static void
put_stat(struct wire_stat *out, unsigned cap, unsigned *n, const char *name, uint64_t v,
	enum wire_stat_kind kind)
{
	if (*n < cap && wire_stat_set(&out[*n], name, v, kind) == 0)
		(*n)++;
}

/* Appends the counter "family.label=value". */
static void
put_labelled(struct wire_stat *out, unsigned cap, unsigned *n, const char *family,
	const char *label, const char *value, uint64_t v)
{
	char name[WIRE_STAT_NAME_MAX];

	if (snprintf(name, sizeof(name), "%s.%s=%s", family, label, value) < (int)sizeof(name))
		put_stat(out, cap, n, name, v, WIRE_STAT_COUNTER);
}

unsigned
bridge_stats_from_counters(const struct dp_counters *c, struct wire_stat *out, unsigned cap)
{
	unsigned n = 0;
	char status[8];

	put_stat(out, cap, &n, "rx_packets", c->rx_packets, WIRE_STAT_COUNTER);
	put_stat(out, cap, &n, "rx_bytes", c->rx_bytes, WIRE_STAT_COUNTER);
	put_stat(out, cap, &n, "tx_packets", c->tx_packets, WIRE_STAT_COUNTER);
	put_stat(out, cap, &n, "tx_bytes", c->tx_bytes, WIRE_STAT_COUNTER);
	put_stat(out, cap, &n, "http_requests", c->requests, WIRE_STAT_COUNTER);
	for (unsigned i = 0; i < DP_DROP_MAX; i++)
		put_labelled(out, cap, &n, "drops", "reason", dp_drop_name(i), c->drops[i]);
	for (unsigned i = 0; i < DP_ANS_MAX; i++)
		put_labelled(out, cap, &n, "answers", "kind", dp_answer_name(i), c->answers[i]);
	for (unsigned i = 0; i < DP_HTTP_MAX; i++) {
		snprintf(status, sizeof(status), "%u", dp_http_status_of(i));
		put_labelled(out, cap, &n, "http_responses", "status", status, c->http[i]);
	}
	for (unsigned i = 0; i < DP_REJ_MAX; i++)
		put_labelled(out, cap, &n, "rejects", "reason", dp_reject_name(i), c->reject[i]);
	for (unsigned i = 0; i < DP_ADM_MAX; i++)
		put_labelled(out, cap, &n, "admits", "kind", dp_admit_name(i), c->admit[i]);
	return n;
}

/* The bridge's own counters, after the data plane's: the health of its link. */
static unsigned
own_stats(const struct bridge *b, struct wire_stat *out, unsigned cap)
{
	static const struct {
		const char *name;
		size_t off;
	} plain[] = {
#define OWN(name, field) {name, offsetof(struct bridge_counters, field)}
		OWN("bridge_submitted", submitted),
		OWN("bridge_ring_full", ring_full),
		OWN("bridge_queries", queries),
		OWN("bridge_queries_refused", queries_refused),
		OWN("bridge_queries_dropped", queries_dropped),
		OWN("bridge_batches_sent", batches_sent),
		OWN("bridge_send_retries", send_retries),
		OWN("bridge_send_errors", send_errors),
		OWN("bridge_seq_gaps", seq_gaps),
		OWN("bridge_sender_restarts", sender_restarts),
		OWN("bridge_snapshot_requests", snapshot_requests),
		OWN("bridge_snapshots_applied", snapshots_applied),
		OWN("bridge_snapshots_incomplete", snapshots_incomplete),
		OWN("bridge_ignored_before_snapshot", ignored_before_snapshot),
		OWN("bridge_events_rejected", events_rejected),
		OWN("bridge_keys_rejected", keys_rejected),
		OWN("bridge_rules_rejected", rules_rejected),
		OWN("bridge_wrong_direction", wrong_direction),
		OWN("bridge_multipart", multipart),
		OWN("bridge_shared_versions", shared_versions),
#undef OWN
	};
	struct bridge_counters c;
	uint64_t backlog = b->n_staged;
	unsigned n = 0;

	bridge_counters_read(b, &c);
	for (size_t i = 0; i < RTE_DIM(plain); i++) {
		uint64_t v;

		memcpy(&v, (const uint8_t *)&c + plain[i].off, sizeof(v));
		put_stat(out, cap, &n, plain[i].name, v, WIRE_STAT_COUNTER);
	}
	put_stat(out, cap, &n, "bridge_reservations_sent", c.records_out[WIRE_T_RESERVE],
		WIRE_STAT_COUNTER);
	for (unsigned i = 0; i < b->cfg.n_workers; i++)
		backlog += rte_ring_count(b->ports[i].ring);
	put_stat(out, cap, &n, "bridge_ready", bridge_ready(b), WIRE_STAT_GAUGE);
	put_stat(out, cap, &n, "bridge_backlog", backlog, WIRE_STAT_GAUGE);
	put_stat(
		out, cap, &n, "purchase_token_ttl_s", b->cfg.purchase_token_ttl_s, WIRE_STAT_GAUGE);
	for (unsigned i = 0; i < WIRE_ERR_MAX; i++)
		put_labelled(out, cap, &n, "bridge_decode_errors", "reason",
			wire_err_name(-(int)i - 1), c.decode_errors[i]);
	for (unsigned t = WIRE_T_RESULT; t < WIRE_T_MAX; t++)
		if (strcmp(wire_type_name(t), "unknown") != 0)
			put_labelled(out, cap, &n, "bridge_messages_in", "type", wire_type_name(t),
				c.msgs_in[t]);
	put_labelled(out, cap, &n, "bridge_results", "outcome", "inserted", c.results.inserted);
	put_labelled(out, cap, &n, "bridge_results", "outcome", "replaced", c.results.replaced);
	put_labelled(out, cap, &n, "bridge_results", "outcome", "kept", c.results.kept);
	put_labelled(out, cap, &n, "bridge_results", "outcome", "evicted", c.results.evicted);
	put_labelled(out, cap, &n, "bridge_results", "outcome", "dropped", c.results.dropped);
	return n;
}

/* Fills b->stats for the next DP_STATS: the data plane's counters, then the bridge's. */
static unsigned
collect_stats(struct bridge *b)
{
	unsigned n = 0, own_room = 64;

	if (b->cfg.stats_fn != NULL) {
		b->cfg.stats_fn(b->cfg.stats_arg, b->stats, WIRE_STATS_MAX - own_room, &n);
		if (n > WIRE_STATS_MAX - own_room)
			n = WIRE_STATS_MAX - own_room;
	}
	return n + own_stats(b, b->stats + n, WIRE_STATS_MAX - n);
}

/* ---- outgoing ----------------------------------------------------------------------------- */

/* Moves records from the rings into the batches while the reservation batch has room. */
static unsigned
drain(struct bridge *b, uint64_t now_us)
{
	struct wire_reserve tmp[DRAIN_BURST];
	unsigned total = 0, n_workers = b->cfg.n_workers;

	for (unsigned k = 0; k < n_workers; k++) {
		struct bridge_port *p = &b->ports[(b->rr + k) % n_workers];
		unsigned room = b->cfg.batch_max - b->n_staged;

		if (room == 0)
			break;
		unsigned n = rte_ring_sc_dequeue_burst_elem(p->ring, tmp, sizeof(tmp[0]),
			room < DRAIN_BURST ? room : DRAIN_BURST, NULL);

		for (unsigned i = 0; i < n; i++) {
			if (tmp[i].reservation_id == 0) {
				if (b->n_qstaged == b->cfg.batch_max) {
					CTR_INC(b->ctr.queries_dropped);
					continue;
				}
				b->qstaged[b->n_qstaged++] = (struct wire_result_query){
					.user = tmp[i].user, .event = tmp[i].event};
				continue;
			}
			if (b->n_staged == 0)
				b->staged_since_us = now_us;
			b->staged[b->n_staged++] = tmp[i];
		}
		total += n;
	}
	b->rr++;
	return total;
}

/* Encodes the next message to send into b->msg if none is pending. */
static void
prepare(struct bridge *b, uint64_t now_us, bool flushing)
{
	int len;

	if (b->pending)
		return;
	if (b->request_due) {
		len = wire_encode(&b->tx, WIRE_T_SNAPSHOT_REQUEST, NULL, 0, b->msg, b->msg_cap);
		b->request_due = false;
		b->pending_type = WIRE_T_SNAPSHOT_REQUEST;
		b->pending_records = 0;
		CTR_INC(b->ctr.snapshot_requests);
	} else if (b->stats_due) {
		/* Before reservations: once per stats_ms it is cheap, and under a steady stream
		 * of batches it would never go otherwise. */
		unsigned n = collect_stats(b);

		len = wire_encode(&b->tx, WIRE_T_DP_STATS, b->stats, n, b->msg, b->msg_cap);
		b->stats_due = false;
		b->pending_type = WIRE_T_DP_STATS;
		b->pending_records = n;
	} else if (b->n_qstaged > 0) {
		unsigned n = b->n_qstaged;

		len = wire_encode(&b->tx, WIRE_T_RESULT_QUERY, b->qstaged, n, b->msg, b->msg_cap);
		b->n_qstaged = 0;
		b->pending_type = WIRE_T_RESULT_QUERY;
		b->pending_records = n;
	} else if (b->n_staged > 0 &&
		   (b->n_staged >= b->cfg.batch_max || flushing ||
			   now_us - b->staged_since_us >= b->cfg.batch_wait_us)) {
		unsigned n = b->n_staged;

		len = wire_encode_reservations(&b->tx, b->staged, n, b->msg, b->msg_cap);
		b->n_staged = 0;
		b->pending_type = WIRE_T_RESERVE;
		b->pending_records = n;
	} else {
		return;
	}
	/* msg_cap holds the largest batch, and every type and count here is valid. */
	if (len > 0) {
		b->msg_len = (size_t)len;
		b->pending = true;
	}
}

/* Tries to send the pending message without blocking. Returns true when it went out. */
static bool
send_pending(struct bridge *b)
{
	if (!b->pending)
		return false;
	if (zmq_send(b->push, b->msg, b->msg_len, ZMQ_DONTWAIT) < 0) {
		if (zmq_errno() == EAGAIN)
			CTR_INC(b->ctr.send_retries);
		else
			CTR_INC(b->ctr.send_errors);
		return false;
	}
	b->pending = false;
	CTR_INC(b->ctr.msgs_out[b->pending_type]);
	CTR_ADD(b->ctr.records_out[b->pending_type], b->pending_records);
	if (b->pending_type == WIRE_T_RESERVE)
		CTR_INC(b->ctr.batches_sent);
	return true;
}

/* Decides whether to ask for a snapshot now. */
static void
schedule_snapshot(struct bridge *b, uint64_t now_ms)
{
	const struct bridge_config *c = &b->cfg;
	bool ready = bridge_ready(b);

	/* A snapshot whose END never came is abandoned after a few retry periods. */
	if (b->snap.active && now_ms - b->snap.started_ms > 4 * (uint64_t)c->snapshot_retry_ms) {
		b->snap.active = false;
		CTR_INC(b->ctr.snapshots_incomplete);
		b->want_snapshot = true;
	}
	if (b->snap.active || b->request_due)
		return;
	bool silent = now_ms - b->last_rx_ms >= c->resync_ms;
	uint64_t interval = !ready || b->want_snapshot ? c->snapshot_retry_ms : c->resync_ms;

	if ((!ready || b->want_snapshot || silent) && now_ms - b->last_request_ms >= interval) {
		b->request_due = true;
		b->last_request_ms = now_ms;
	}
}

static bool
rings_empty(const struct bridge *b)
{
	for (unsigned i = 0; i < b->cfg.n_workers; i++)
		if (!rte_ring_empty(b->ports[i].ring))
			return false;
	return true;
}

static void *
bridge_main(void *arg)
{
	struct bridge *b = arg;
	uint64_t start_ms = now_mono_us() / 1000;

	/* The first request goes out at once; silence is measured from the start. */
	b->last_rx_ms = start_ms;
	b->last_request_ms = start_ms - (uint64_t)b->cfg.resync_ms - 1;
	/* The first counters go out at once, so the control plane knows this data plane. */
	b->last_stats_ms = start_ms - (uint64_t)b->cfg.stats_ms;
	for (;;) {
		uint64_t now_us = now_mono_us(), now_ms = now_us / 1000;
		bool stopping = __atomic_load_n(&b->stop, __ATOMIC_ACQUIRE);
		unsigned got = receive(b);

		shared_reclaim(&b->shared);
		result_table_reclaim(b->results);
		if (!stopping)
			schedule_snapshot(b, now_ms);
		if (!stopping && b->cfg.stats_ms != 0 &&
			now_ms - b->last_stats_ms >= b->cfg.stats_ms) {
			b->stats_due = true;
			b->last_stats_ms = now_ms;
		}
		unsigned drained = drain(b, now_us);

		prepare(b, now_us, stopping);
		bool sent = send_pending(b);

		if (sent)
			prepare(b, now_us, stopping);
		if (stopping) {
			bool done = !b->pending && b->n_staged == 0 && b->n_qstaged == 0 &&
				    rings_empty(b);

			if (done || now_ms >= b->flush_deadline_ms)
				break;
		}
		if (got == 0 && drained == 0 && !sent) {
			/* Idle, or blocked on the PUSH: sleep until a message, room to send, or
			 * the next millisecond (when batches are checked for age). */
			zmq_pollitem_t items[2] = {
				{.socket = b->sub, .events = ZMQ_POLLIN},
				{.socket = b->push, .events = ZMQ_POLLOUT},
			};

			zmq_poll(items, b->pending ? 2 : 1, 1);
		}
	}
	uint64_t unsent =
		b->n_staged +
		(b->pending && b->pending_type == WIRE_T_RESERVE ? b->pending_records : 0);

	for (unsigned i = 0; i < b->cfg.n_workers; i++)
		unsent += rte_ring_count(b->ports[i].ring);
	CTR_ADD(b->ctr.unsent_at_stop, unsent);
	if (unsent > 0)
		LOG_WARN("bridge: %" PRIu64 " reservation(s) could not be sent before the stop "
			 "(the control plane did not take them)",
			unsent);
	return NULL;
}

/* Sets an integer socket option; logs and returns -1 on failure. */
static int
set_int(void *sock, int opt, int value, const char *name, char *err, size_t errlen)
{
	if (zmq_setsockopt(sock, opt, &value, sizeof(value)) == 0)
		return 0;
	snprintf(err, errlen, "bridge: ZeroMQ option %s=%d: %s", name, value,
		zmq_strerror(zmq_errno()));
	return -1;
}

int
bridge_start(struct bridge *b, char *err, size_t errlen)
{
	const struct bridge_config *c = &b->cfg;

	if (b->started) {
		snprintf(err, errlen, "bridge: already started");
		return -1;
	}
	b->zctx = zmq_ctx_new();
	if (b->zctx == NULL) {
		snprintf(err, errlen, "bridge: no ZeroMQ context: %s", zmq_strerror(zmq_errno()));
		return -1;
	}
	b->push = zmq_socket(b->zctx, ZMQ_PUSH);
	b->sub = zmq_socket(b->zctx, ZMQ_SUB);
	if (b->push == NULL || b->sub == NULL) {
		snprintf(err, errlen, "bridge: no ZeroMQ socket: %s", zmq_strerror(zmq_errno()));
		goto fail;
	}
	/* Nothing waits in the context at close beyond what bridge_stop() allows. */
	if (set_int(b->push, ZMQ_SNDHWM, c->push_hwm, "ZMQ_SNDHWM", err, errlen) != 0 ||
		set_int(b->push, ZMQ_LINGER, 0, "ZMQ_LINGER", err, errlen) != 0 ||
		set_int(b->sub, ZMQ_LINGER, 0, "ZMQ_LINGER", err, errlen) != 0 ||
		/* Results must not be dropped by a full receive queue while we catch up. */
		set_int(b->sub, ZMQ_RCVHWM, 0, "ZMQ_RCVHWM", err, errlen) != 0 ||
		(c->push_sndbuf > 0 && set_int(b->push, ZMQ_SNDBUF, c->push_sndbuf, "ZMQ_SNDBUF",
					       err, errlen) != 0))
		goto fail;
	if (zmq_setsockopt(b->sub, ZMQ_SUBSCRIBE, "", 0) != 0) {
		snprintf(err, errlen, "bridge: subscribe: %s", zmq_strerror(zmq_errno()));
		goto fail;
	}
	if (zmq_connect(b->push, c->push_endpoint) != 0) {
		snprintf(err, errlen,
			"bridge: cannot use the PUSH endpoint \"%s\": %s (expected "
			"e.g. tcp://127.0.0.1:5601)",
			c->push_endpoint, zmq_strerror(zmq_errno()));
		goto fail;
	}
	if (zmq_connect(b->sub, c->sub_endpoint) != 0) {
		snprintf(err, errlen,
			"bridge: cannot use the SUB endpoint \"%s\": %s (expected "
			"e.g. tcp://127.0.0.1:5602)",
			c->sub_endpoint, zmq_strerror(zmq_errno()));
		goto fail;
	}
	/* pthread_create() is a full barrier: the sockets move to the new thread safely. */
	if (pthread_create(&b->thread, NULL, bridge_main, b) != 0) {
		snprintf(err, errlen, "bridge: cannot start the thread");
		goto fail;
	}
	pthread_setname_np(b->thread, "fg-bridge");
	b->started = true;
	return 0;
fail:
	if (b->push != NULL)
		zmq_close(b->push);
	if (b->sub != NULL)
		zmq_close(b->sub);
	zmq_ctx_term(b->zctx);
	b->push = b->sub = b->zctx = NULL;
	return -1;
}

void
bridge_stop(struct bridge *b, unsigned flush_ms)
{
	if (!b->started || b->stopped)
		return;
	b->flush_deadline_ms = now_mono_us() / 1000 + flush_ms;
	__atomic_store_n(&b->stop, true, __ATOMIC_RELEASE);
	pthread_join(b->thread, NULL);
	/* What ZeroMQ still queues gets the rest of the flush time to reach the peer. */
	uint64_t now_ms = now_mono_us() / 1000;
	int linger = now_ms < b->flush_deadline_ms ? (int)(b->flush_deadline_ms - now_ms) : 0;

	zmq_setsockopt(b->push, ZMQ_LINGER, &linger, sizeof(linger));
	zmq_close(b->push);
	zmq_close(b->sub);
	zmq_ctx_term(b->zctx);
	b->push = b->sub = b->zctx = NULL;
	b->stopped = true;
}
