/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data plane's and the bridge's counters as DP_STATS records for the control plane, and
 * the bridge's counters for any thread (bridge_counters_read()).
 */
#include <stdio.h>
#include <string.h>

#include "dataplane/bridge/bridge_int.h"
#include "dataplane/counters.h"

/* ---- counters to the control plane -------------------------------------------------------- */

/* Appends one record when there is room. Every name here is valid by construction. */
static void
put_stat(struct wire_stat *out, unsigned cap, unsigned *n, const char *name, uint64_t v,
	enum wire_stat_kind kind)
{
	if (*n < cap && wire_stat_set(&out[*n], name, v, kind) == 0)
		(*n)++;
}

/* Appends the counter or gauge "family.label=value". */
static void
put_labelled(struct wire_stat *out, unsigned cap, unsigned *n, const char *family,
	const char *label, const char *value, uint64_t v, enum wire_stat_kind kind)
{
	char name[WIRE_STAT_NAME_MAX];

	if (snprintf(name, sizeof(name), "%s.%s=%s", family, label, value) < (int)sizeof(name))
		put_stat(out, cap, n, name, v, kind);
}

unsigned
bridge_stats_from_counters(const struct dp_counters *c, struct wire_stat *out, unsigned cap)
{
	unsigned n = 0;

	for (unsigned k = 0; k < COUNTERS_TABLE_LEN; k++) {
		const struct counters_desc *d = &counters_table[k];
		enum wire_stat_kind kind =
			d->kind == COUNTERS_GAUGE ? WIRE_STAT_GAUGE : WIRE_STAT_COUNTER;

		for (unsigned i = 0; i < d->n; i++) {
			if (d->members == NULL)
				put_stat(out, cap, &n, d->name, counters_value(c, d, i), kind);
			else
				put_labelled(out, cap, &n, d->name, d->label, d->members[i],
					counters_value(c, d, i), kind);
		}
	}
	return n;
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
	out->queries_cooled = 0;
	for (unsigned i = 0; i < b->cfg.n_workers; i++) {
		const struct bridge_port *p = &b->ports[i];

		out->submitted += __atomic_load_n(&p->submitted, __ATOMIC_RELAXED);
		out->ring_full += __atomic_load_n(&p->ring_full, __ATOMIC_RELAXED);
		out->queries += __atomic_load_n(&p->queries, __ATOMIC_RELAXED);
		out->queries_refused += __atomic_load_n(&p->queries_refused, __ATOMIC_RELAXED);
		out->queries_cooled += __atomic_load_n(&p->queries_cooled, __ATOMIC_RELAXED);
	}
	const uint64_t *rs = (const uint64_t *)&b->results->ctr;
	uint64_t *rd = (uint64_t *)&out->results;

	for (size_t i = 0; i < sizeof(out->results) / sizeof(uint64_t); i++)
		rd[i] = __atomic_load_n(&rs[i], __ATOMIC_RELAXED);
	out->shared_versions = __atomic_load_n(&b->shared.published, __ATOMIC_RELAXED);
}

_Static_assert(sizeof(struct bridge_counters) % sizeof(uint64_t) == 0, "counters are u64s");
_Static_assert(sizeof(struct result_table_counters) % sizeof(uint64_t) == 0, "counters are u64s");

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
		OWN("bridge_queries_cooled", queries_cooled),
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
		OWN("bridge_fair_unknown_event", fair_unknown_event),
		OWN("bridge_fair_in_place", fair_in_place),
		OWN("bridge_keys_rejected", keys_rejected),
		OWN("bridge_rules_rejected", rules_rejected),
		OWN("bridge_wrong_direction", wrong_direction),
		OWN("bridge_multipart", multipart),
		OWN("bridge_shared_versions", shared_versions),
		OWN("bridge_refusals", refusals),
		OWN("bridge_clock_skew_over", clock_skew_over),
		OWN("bridge_cp_switches", cp_switches),
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
	put_stat(out, cap, &n, "bridge_ready", bridge_is_ready(b), WIRE_STAT_GAUGE);
	put_stat(out, cap, &n, "bridge_refused", bridge_is_refused(b), WIRE_STAT_GAUGE);
	int64_t skew = 0;

	/* The skew as two gauges (a gauge is unsigned): one of them is 0. */
	if (bridge_skew_read(b, &skew)) {
		put_stat(out, cap, &n, "clock_ahead_ms", skew > 0 ? (uint64_t)skew : 0,
			WIRE_STAT_GAUGE);
		put_stat(out, cap, &n, "clock_behind_ms", skew < 0 ? (uint64_t)-skew : 0,
			WIRE_STAT_GAUGE);
	}
	if (b->cfg.clock != NULL)
		put_stat(out, cap, &n, "clock_resyncs", b->cfg.clock->resyncs, WIRE_STAT_COUNTER);
	put_stat(out, cap, &n, "bridge_backlog", backlog, WIRE_STAT_GAUGE);
	put_stat(
		out, cap, &n, "purchase_token_ttl_s", b->cfg.purchase_token_ttl_s, WIRE_STAT_GAUGE);
	for (unsigned i = 0; i < WIRE_ERR_MAX; i++)
		put_labelled(out, cap, &n, "bridge_decode_errors", "reason",
			wire_err_name(-(int)i - 1), c.decode_errors[i], WIRE_STAT_COUNTER);
	for (unsigned t = WIRE_T_RESULT; t < WIRE_T_MAX; t++)
		if (strcmp(wire_type_name(t), "unknown") != 0)
			put_labelled(out, cap, &n, "bridge_messages_in", "type", wire_type_name(t),
				c.msgs_in[t], WIRE_STAT_COUNTER);
	const struct {
		const char *outcome;
		uint64_t v;
	} results[] = {{"inserted", c.results.inserted}, {"replaced", c.results.replaced},
		{"kept", c.results.kept}, {"evicted", c.results.evicted},
		{"dropped", c.results.dropped}};
	for (size_t i = 0; i < RTE_DIM(results); i++)
		put_labelled(out, cap, &n, "bridge_results", "outcome", results[i].outcome,
			results[i].v, WIRE_STAT_COUNTER);
	return n;
}

/* Fills b->stats for the next DP_STATS: the data plane's counters, then the bridge's. */
unsigned
bridge_stats_collect(struct bridge *b)
{
	unsigned n = 0, own_room = 64;

	if (b->cfg.stats_fn != NULL) {
		b->cfg.stats_fn(b->cfg.stats_arg, b->stats, WIRE_STATS_MAX - own_room, &n);
		if (n > WIRE_STATS_MAX - own_room)
			n = WIRE_STATS_MAX - own_room;
	}
	return n + own_stats(b, b->stats + n, WIRE_STATS_MAX - n);
}
