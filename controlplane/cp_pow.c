/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/cp_pow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/now.h"

/* Whether event e's difficulty may move by itself at wall_ms (Unix ms): a live sale with room
 * above. */
static bool
auto_on(const struct cp_state_event *e, uint64_t wall_ms)
{
	return e->ev.pow_auto_max > e->ev.pow_bits &&
	       (e->ev.state == ADMIN_EV_OPEN || e->ev.state == ADMIN_EV_PREHEATED) &&
	       wall_ms < e->ev.ends_at_ms;
}

/*
 * Which events the forward-budget refusals of this tick are put down to: each event's budget is
 * the same, so the events refused are those whose reservations forwarded reach it, the busiest
 * ones. An event counts when it forwarded at least half as many as the busiest one since the
 * last tick; a quiet sale's challenge does not move with a busy one's. When nothing at all was
 * forwarded (a data plane's counter alone, the link down), the refusals cannot be put down to
 * any event: every one counts, as when they were not counted per event.
 */
static void
pow_attribute(struct cp_state *st, uint64_t mono_ms, bool grew)
{
	uint64_t most = 0;

	for (unsigned i = 0; i < st->n_ev; i++) {
		struct cp_state_event *e = &st->ev[i];
		uint64_t d = e->forwarded - e->pow_fwd_last;

		most = d > most ? d : most;
	}
	for (unsigned i = 0; i < st->n_ev; i++) {
		struct cp_state_event *e = &st->ev[i];
		uint64_t d = e->forwarded - e->pow_fwd_last;

		e->pow_fwd_last = e->forwarded;
		if (grew && (most == 0 || 2 * d >= most))
			e->pow_growth_ms = mono_ms;
	}
}

uint64_t
cp_pow_tick(struct cp_pow *p, struct cp_state *st, struct dp_stats *dps, struct cp_links *l,
	uint64_t mono_ms, uint64_t wall_ms)
{
	uint64_t sum = 0;
	bool grew;

	if (mono_ms < p->next_tick_ms)
		return p->next_tick_ms;
	p->next_tick_ms = mono_ms + CP_POW_TICK_MS;
	(void)dp_stats_sum(dps, CP_POW_REFUSALS, &sum);
	/* Fewer than before: a data plane restarted (its counters start again), not a calm. */
	grew = p->have_last && sum > p->last_refusals;
	p->last_refusals = sum;
	p->have_last = true;
	if (grew)
		p->last_growth_ms = mono_ms;
	pow_attribute(st, mono_ms, grew);
	for (unsigned i = 0; i < st->n_ev; i++) {
		struct cp_state_event *e = &st->ev[i];
		uint8_t was = e->pow_bits_now;
		bool its = grew && e->pow_growth_ms == mono_ms;

		if (!auto_on(e, wall_ms))
			continue;
		if (its && e->pow_bits_now < e->ev.pow_auto_max) {
			e->pow_bits_now++;
			p->raised++;
		} else if (!its && e->pow_bits_now > e->ev.pow_bits &&
			   mono_ms - e->pow_growth_ms >= CP_POW_QUIET_MS &&
			   mono_ms - e->pow_moved_ms >= CP_POW_QUIET_MS) {
			e->pow_bits_now--;
			p->lowered++;
		} else {
			continue;
		}
		e->pow_moved_ms = mono_ms;
		LOG_NOTICE("event %" PRIu32 ": challenge %u -> %u bits (%s; set %u, "
			   "automatic up to %u)",
			e->ev.id, was, e->pow_bits_now,
			its ? "the data planes refuse its reservations over the forward budget"
			    : "no refusals over its forward budget for 5 s",
			e->ev.pow_bits, e->ev.pow_auto_max);
		cp_pow_publish(e, l);
	}
	cp_pow_show(p, st);
	return p->next_tick_ms;
}

void
cp_pow_show(struct cp_pow *p, const struct cp_state *st)
{
	for (unsigned i = 0; i < CP_STATE_EVENTS_MAX; i++) {
		uint64_t v =
			i < st->n_ev ? (uint64_t)st->ev[i].ev.id << 8 | st->ev[i].pow_bits_now : 0;

		atomic_store_explicit(&p->shown[i], v, memory_order_relaxed);
	}
}

void
cp_pow_metrics(const struct cp_pow *p, struct metrics_text *t)
{
	for (unsigned i = 0; i < CP_STATE_EVENTS_MAX; i++) {
		uint64_t v = atomic_load_explicit(&p->shown[i], memory_order_relaxed);
		char labels[48] = "", id[24];

		if (v == 0)
			break;
		snprintf(id, sizeof(id), "%" PRIu64, v >> 8);
		metrics_label(labels, sizeof(labels), "event", id);
		metrics_gauge_int(t, "flashgate_pow_bits",
			"The challenge's difficulty for new purchase tokens now (leading zero "
			"bits; 0: none), the automatic raise included.",
			labels, (int64_t)(v & 0xff));
	}
}

int
cp_pow_publish(struct cp_state_event *e, struct cp_links *l)
{
	struct wire_fair w;

	cp_state_fair_to_wire(e, &w);
	return cp_links_publish(l, WIRE_T_FAIR, &w, 1);
}
