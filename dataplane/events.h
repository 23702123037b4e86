/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_EVENTS_H
#define FG_DP_EVENTS_H
/*
 * The table of sales the data plane answers for. Built once on the slow path
 * (from the config today, from the control plane's snapshots later), then
 * only read by workers: lookups are a binary search over a sorted array.
 */
#include <stddef.h>
#include <stdint.h>

#include "dataplane/dp_config-t.h"

enum event_state {
	EVENT_UPCOMING,
	EVENT_OPEN,
	EVENT_SOLD_OUT,
	EVENT_CLOSED,
};

struct event_entry {
	uint32_t id;
	uint32_t stock;
	uint64_t starts_at_ms;
	uint64_t ends_at_ms;
	uint8_t sold_out;        /* the control plane says no stock is left */
	uint8_t closed;          /* the operator ended the sale early */
	uint8_t held;            /* the operator has not opened it yet: upcoming */
	uint8_t name_json_len;
	char name_json[2 * DP_EVENT_NAME_MAX + 8]; /* the name as a JSON string, quotes included */
};

struct event_table {
	unsigned n;
	/* Events neither sold out nor closed (event_table_count_selling()): 0 when every sale
	 * is over, as after a sell-out, when the hot path can skip work only a sale needs. */
	unsigned selling;
	struct event_entry e[DP_MAX_EVENTS]; /* sorted by id */
};

/*
 * Fills t from the configured events, sorted by id. Returns 0, or -EINVAL when
 * two events share an id (the config loader already refuses that).
 */
int event_table_build(struct event_table *t, const struct dp_event_cfg *cfg, unsigned n);

/* Sets t->selling from its entries' flags; call after changing them. */
static inline void
event_table_count_selling(struct event_table *t)
{
	t->selling = 0;
	for (unsigned i = 0; i < t->n; i++)
		t->selling += !t->e[i].sold_out && !t->e[i].closed;
}

/* The event with this id, or NULL. */
static inline const struct event_entry *
event_lookup(const struct event_table *t, uint32_t id)
{
	unsigned lo = 0, hi = t->n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (t->e[mid].id == id)
			return &t->e[mid];
		if (t->e[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The state of e at Unix time now_ms: [starts_at, ends_at) is the sale window. */
static inline enum event_state
event_state_at(const struct event_entry *e, uint64_t now_ms)
{
	if (now_ms < e->starts_at_ms || e->held)
		return EVENT_UPCOMING;
	if (now_ms >= e->ends_at_ms || e->closed)
		return EVENT_CLOSED;
	return e->sold_out ? EVENT_SOLD_OUT : EVENT_OPEN;
}

/* "upcoming", "open", "sold_out" or "closed". */
const char *event_state_name(enum event_state s);

#endif
