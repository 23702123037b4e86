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

#include "common/wire.h"
#include "dataplane/dp_config-t.h"

enum event_state {
	EVENT_UPCOMING,
	EVENT_OPEN,
	EVENT_SOLD_OUT,
	EVENT_CLOSED,
	EVENT_QUEUEING, /* a draw's pre-queue: [queue_opens_at, draw_at), reserves make entrants */
	EVENT_DRAWING,	/* [draw_at, the draw done): the entrants are being decided */
};

struct event_entry {
	uint32_t id;
	uint32_t stock;
	uint64_t starts_at_ms;
	uint64_t ends_at_ms;
	uint8_t sold_out;        /* the control plane says no stock is left */
	uint8_t closed;          /* the operator ended the sale early */
	uint8_t held;            /* the operator has not opened it yet: upcoming */
	uint8_t draw_state;      /* enum wire_draw_state of its FAIR record; NONE without one */
	uint8_t pow_bits;        /* the challenge of new purchase tokens; 0: none (in place) */
	uint8_t has_fair;        /* the control plane sent a FAIR record for it */
	uint8_t name_json_len;
	char name_json[2 * DP_EVENT_NAME_MAX + 8]; /* the name as a JSON string, quotes included */
	/* The rest of the FAIR record (docs/api.md): read by GET /api/v1/events/{id} and the
	 * result polls of entrants, never by a reserve. entrants, decided and rate (and
	 * pow_bits above) are rewritten in place by the bridge as the draw goes (bridge_in.c
	 * fair_progress()): read them with relaxed atomic loads. */
	uint64_t queue_opens_at_ms;
	uint64_t draw_at_ms;
	uint32_t entrants;
	uint32_t decided;
	uint32_t rate; /* entrants decided per second lately */
	uint32_t served; /* the highest rank holding an item: a waiting entrant's place */
	uint8_t final;	 /* no item can come back to the waiting list (WIRE_FAIR_F_FINAL) */
	uint8_t seed_sha256[WIRE_DIGEST_LEN];
	uint8_t entrants_digest[WIRE_DIGEST_LEN]; /* zero until the draw */
	uint8_t seed[WIRE_DIGEST_LEN];		  /* zero until the draw is done */
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

/*
 * Gives e the fair start of FAIR record f (a draw's state, times, progress, digests, and the
 * challenge's difficulty), on an entry not published yet. Cannot fail; f is trusted
 * (wire_get_fair() checked it).
 */
void event_entry_set_fair(struct event_entry *e, const struct wire_fair *f);

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

/*
 * The state of an event whose draw is not done (event_state_at()): upcoming before
 * queue_opens_at, queueing until draw_at (while the control plane takes entrants), drawing
 * from then until the control plane says the draw is done; held, closed and sold out as
 * outside a draw.
 */
static inline enum event_state
event_state_draw(const struct event_entry *e, uint64_t now_ms)
{
	if (now_ms < e->queue_opens_at_ms || e->held)
		return EVENT_UPCOMING;
	if (now_ms >= e->ends_at_ms || e->closed)
		return EVENT_CLOSED;
	if (e->sold_out)
		return EVENT_SOLD_OUT;
	if (now_ms < e->draw_at_ms && e->draw_state == WIRE_DRAW_QUEUEING)
		return EVENT_QUEUEING;
	return EVENT_DRAWING;
}

/* Whether e has a draw that is not done yet (queueing or drawing by the control plane). */
static inline int
event_draw_pending(const struct event_entry *e)
{
	return e->draw_state == WIRE_DRAW_QUEUEING || e->draw_state == WIRE_DRAW_DRAWING;
}

/* When e takes its first reserves: queue_opens_at for a pending draw, else starts_at. */
static inline uint64_t
event_opens_at(const struct event_entry *e)
{
	return event_draw_pending(e) ? e->queue_opens_at_ms : e->starts_at_ms;
}

/*
 * The state of e at Unix time now_ms: [starts_at, ends_at) is the sale window; an event with
 * a draw not done yet has its own (event_state_draw()).
 */
static inline enum event_state
event_state_at(const struct event_entry *e, uint64_t now_ms)
{
	if (__builtin_expect(event_draw_pending(e), 0))
		return event_state_draw(e, now_ms);
	if (now_ms < e->starts_at_ms || e->held)
		return EVENT_UPCOMING;
	if (now_ms >= e->ends_at_ms || e->closed)
		return EVENT_CLOSED;
	return e->sold_out ? EVENT_SOLD_OUT : EVENT_OPEN;
}

/* "upcoming", "open", "sold_out", "closed", "queueing" or "drawing". */
const char *event_state_name(enum event_state s);

#endif
