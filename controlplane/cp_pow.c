/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/cp_pow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/draw.h"
#include "common/log.h"
#include "common/now.h"

/* Whether event e's difficulty may move by itself now: a live sale with room above. */
static bool
auto_on(const struct cp_event *e, uint64_t now_ms)
{
	return e->ev.pow_auto_max > e->ev.pow_bits &&
	       (e->ev.state == ADMIN_EV_OPEN || e->ev.state == ADMIN_EV_PREHEATED) &&
	       now_ms < e->ev.ends_at_ms;
}

uint64_t
cp_pow_tick(struct cp_pow *p, struct cp_state *st, struct dp_stats *dps, struct cp_links *l,
	uint64_t now_ms)
{
	uint64_t sum = 0;
	bool grew;

	if (now_ms < p->next_tick_ms)
		return p->next_tick_ms;
	p->next_tick_ms = now_ms + CP_POW_TICK_MS;
	(void)dp_stats_sum(dps, CP_POW_REFUSALS, &sum);
	/* Fewer than before: a data plane restarted (its counters start again), not a calm. */
	grew = p->have_last && sum > p->last_refusals;
	p->last_refusals = sum;
	p->have_last = true;
	if (grew)
		p->last_growth_ms = now_ms;
	for (unsigned i = 0; i < st->n_ev; i++) {
		struct cp_event *e = &st->ev[i];
		uint8_t was = e->pow_bits_now;

		if (!auto_on(e, now_ms))
			continue;
		if (grew && e->pow_bits_now < e->ev.pow_auto_max) {
			e->pow_bits_now++;
			p->raised++;
		} else if (!grew && e->pow_bits_now > e->ev.pow_bits &&
			   now_ms - p->last_growth_ms >= CP_POW_QUIET_MS &&
			   now_ms - e->pow_moved_ms >= CP_POW_QUIET_MS) {
			e->pow_bits_now--;
			p->lowered++;
		} else {
			continue;
		}
		e->pow_moved_ms = now_ms;
		LOG_NOTICE("event %" PRIu32
			   ": challenge %u -> %u bits (%s; set %u, automatic up to "
			   "%u)",
			e->ev.id, was, e->pow_bits_now,
			grew ? "the data planes refuse reservations over the forward budget"
			     : "no refusals over the forward budget for 5 s",
			e->ev.pow_bits, e->ev.pow_auto_max);
		cp_pow_publish(st, l, e->ev.id);
	}
	cp_pow_show(p, st);
	return p->next_tick_ms;
}

void
cp_pow_show(struct cp_pow *p, const struct cp_state *st)
{
	for (unsigned i = 0; i < CP_MAX_EVENTS; i++) {
		uint64_t v =
			i < st->n_ev ? (uint64_t)st->ev[i].ev.id << 8 | st->ev[i].pow_bits_now : 0;

		atomic_store_explicit(&p->shown[i], v, memory_order_relaxed);
	}
}

void
cp_pow_metrics(const struct cp_pow *p, struct metrics_text *t)
{
	for (unsigned i = 0; i < CP_MAX_EVENTS; i++) {
		uint64_t v = atomic_load_explicit(&p->shown[i], memory_order_relaxed);
		char labels[48] = "", id[24];

		if (v == 0)
			break;
		snprintf(id, sizeof(id), "%" PRIu64, v >> 8);
		metrics_label(labels, sizeof(labels), "event", id);
		metrics_gauge_int(t, "flashgate_pow_bits",
			"The challenge's difficulty for new purchase tokens now (leading zero "
			"bits; "
			"0: none), the automatic raise included.",
			labels, (int64_t)(v & 0xff));
	}
}

bool
cp_pow_has_fair(const struct cp_event *e)
{
	return e->ev.draw_window_s != 0 || e->ev.pow_bits != 0 || e->ev.pow_auto_max != 0 ||
	       e->pow_bits_now != 0;
}

void
cp_pow_fair_to_wire(const struct cp_event *e, uint64_t now_ms, struct wire_fair *out)
{
	const struct admin_event *ev = &e->ev;

	memset(out, 0, sizeof(*out));
	out->event = ev->id;
	out->pow_bits = e->pow_bits_now;
	if (ev->has_seed)
		draw_commitment(ev->draw_seed, out->seed_sha256);
	if (ev->draw_window_s == 0)
		return;
	out->queue_opens_at_ms = ev->queue_opens_at_ms;
	out->draw_at_ms = admin_event_draw_at_ms(ev);
	out->draw_state = ev->draw_done_at_ms != 0			? WIRE_DRAW_DONE
			  : ev->has_digest || now_ms >= out->draw_at_ms ? WIRE_DRAW_DRAWING
									: WIRE_DRAW_QUEUEING;
	if (ev->has_digest) {
		out->entrants = ev->draw_entrants;
		memcpy(out->entrants_digest, ev->draw_digest, sizeof(out->entrants_digest));
	}
	if (out->draw_state == WIRE_DRAW_DONE) {
		out->decided = out->entrants;
		if (ev->has_seed)
			memcpy(out->seed, ev->draw_seed, sizeof(out->seed));
	}
}

int
cp_pow_publish(const struct cp_state *st, struct cp_links *l, uint32_t id)
{
	struct wire_fair w[CP_MAX_EVENTS];
	uint64_t now_ms = now_wall_ms();
	unsigned n = 0;

	for (unsigned i = 0; i < st->n_ev; i++)
		if (id != 0 ? st->ev[i].ev.id == id : cp_pow_has_fair(&st->ev[i]))
			cp_pow_fair_to_wire(&st->ev[i], now_ms, &w[n++]);
	return n != 0 ? cp_links_publish(l, WIRE_T_FAIR, w, n) : 0;
}
