/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/decider.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"
#include "common/log.h"
#include "controlplane/draw_runner.h"
#include "store/store_conn.h"
#include "store/store_draw.h"
#include "store/store_result.h"
#include "store/store_wait.h"

/* Result queries waiting to be answered (at most this many; more are shed, counted). */
#define DECIDER_QUERIES_MAX 65536
/* Pairs looked up in Redis at once (one pipelined round trip). */
#define DECIDER_LOOKUP_MAX 1024
/*
 * After a lookup of result queries failed (Redis away, or a read's WAIT timed out: its replicas
 * behind, as after a failover), the queries wait this long before the next try, doubling while
 * they fail up to the max: each failed lookup holds the loop (a command or WAIT timeout), and
 * the decisions come first. A lookup that succeeds ends the back-off.
 */
#define DECIDER_QUERY_BACKOFF_MIN_MS 250
#define DECIDER_QUERY_BACKOFF_MAX_MS 4000

/*
 * Rounds decided on the primary whose WAIT is pending on the store's waiter (with
 * wait_replicas, store/store_wait.h): the next round is decided meanwhile, at most this many
 * in all; a round's verdicts are published once its WAIT answered, in the order decided.
 */
#define DECIDER_ROUNDS_MAX 4
/* While a WAIT is pending, how often the loop's turn looks for its answer (ms). */
#define DECIDER_WAIT_POLL_MS 1

/* A round's results, published when they may be (at once without wait_replicas). */
struct round {
	struct wire_result *out; /* CP_STATE_EVENTS_MAX * batch_max */
	unsigned n_out;
	unsigned n_enter; /* out[0, n_enter): entrants (store_enter() waited for them) */
	bool known;	  /* rc is known: its WAIT answered, or none was sent */
	int rc;		  /* 0, or its decided batches are answered retry */
	unsigned n_notes; /* the events' stock after the round, noted once published */
	uint32_t note_event[CP_STATE_EVENTS_MAX];
	int64_t note_stock[CP_STATE_EVENTS_MAX];
};

/* Reservations of one event waiting for their round. */
struct pending {
	uint32_t event;
	bool enter; /* entrants of the event's draw (enter.lua), not decided */
	unsigned n;
	struct wire_reserve *recs; /* batch_max */
	uint8_t *verdicts;         /* batch_max */
};

struct decider {
	struct store *rs;
	struct cp_links *l;
	struct cp_state *st;
	unsigned batch_max;
	unsigned wait_ms;
	struct pending p[CP_STATE_EVENTS_MAX];
	unsigned n_p;          /* events with something pending */
	unsigned queued;       /* reservations pending */
	uint64_t oldest_mono_ms; /* arrival of the oldest pending reservation (monotonic) */
	struct store_batch b[CP_STATE_EVENTS_MAX];
	/* Rounds not published yet, a ring of n_rounds (DECIDER_ROUNDS_MAX with wait_replicas,
	 * else 1): r_len from r_head. */
	struct round r[DECIDER_ROUNDS_MAX];
	unsigned n_rounds, r_head, r_len;
	uint64_t poll_at_mono_ms;	/* when the loop looks for a pending WAIT's answer */
	struct wire_result refused[64]; /* outside the sale: answered by decider_add() */
	unsigned n_refused;
	struct wire_result_query *held; /* CP_STATE_EVENTS_MAX * batch_max: a round's duplicates */
	struct wire_result_query *qq;	/* DECIDER_QUERIES_MAX, a ring: queries to answer */
	const struct draw_runner *draws; /* the ranks of draws under way (may be NULL) */
	unsigned qq_head, qq_len;
	uint64_t qq_retry_mono_ms; /* queries wait until then after a failed lookup */
	unsigned qq_backoff_ms; /* the next failure's wait: 0 after a success */
	struct decider_counters ctr;
};

struct decider *
decider_create(struct store *rs, struct cp_links *l, struct cp_state *st, unsigned batch_max,
	unsigned wait_ms)
{
	struct decider *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	if (batch_max > RS_BATCH_MAX)
		batch_max = RS_BATCH_MAX;
	d->rs = rs;
	d->l = l;
	d->st = st;
	d->batch_max = batch_max ? batch_max : 1;
	d->wait_ms = wait_ms;
	d->n_rounds = store_wait_wanted(rs) > 0 ? DECIDER_ROUNDS_MAX : 1;
	for (unsigned i = 0; i < d->n_rounds; i++)
		if ((d->r[i].out = calloc((size_t)CP_STATE_EVENTS_MAX * d->batch_max,
			     sizeof(*d->r[i].out))) == NULL)
			goto fail;
	d->held = calloc((size_t)CP_STATE_EVENTS_MAX * d->batch_max, sizeof(*d->held));
	d->qq = calloc(DECIDER_QUERIES_MAX, sizeof(*d->qq));
	if (d->held == NULL || d->qq == NULL)
		goto fail;
	for (unsigned i = 0; i < CP_STATE_EVENTS_MAX; i++) {
		d->p[i].recs = calloc(d->batch_max, sizeof(*d->p[i].recs));
		d->p[i].verdicts = calloc(d->batch_max, 1);
		if (d->p[i].recs == NULL || d->p[i].verdicts == NULL)
			goto fail;
	}
	return d;
fail:
	decider_free(d);
	return NULL;
}

void
decider_set_draws(struct decider *d, const struct draw_runner *r)
{
	d->draws = r;
}

static void take_waits(struct decider *d, bool block);

void
decider_free(struct decider *d)
{
	if (d == NULL)
		return;
	/* Rounds decided are answered, whatever their WAIT says: nothing accepted is dropped. */
	while (d->r_len > 0)
		take_waits(d, true);
	for (unsigned i = 0; i < CP_STATE_EVENTS_MAX; i++) {
		free(d->p[i].recs);
		free(d->p[i].verdicts);
	}
	for (unsigned i = 0; i < DECIDER_ROUNDS_MAX; i++)
		free(d->r[i].out);
	free(d->held);
	free(d->qq);
	free(d);
}

/*
 * Whether event e's entrants may be waiting for their decision: it has a draw that this
 * control plane does not know done.
 */
static bool
draw_pending(const struct cp_state_event *e)
{
	return e != NULL && e->ev.draw_window_s > 0 && e->ev.draw_done_at_ms == 0 &&
	       e->draw.state != WIRE_DRAW_DONE;
}

/*
 * For the pairs of q without a result whose event has a draw: an entrant is answered WAITING
 * with its rank (res[i].order_id carries the rank to the caller) when the draw put it on the
 * waiting list, read from the draw runner while it holds the order, else from the event's
 * wrank hash (reserve.lua records it there, so after the draw is done and on a control plane
 * that did not run it too; the data plane turns it into sold out once the sale is final);
 * while the draw is not done, QUEUED with its rank when the draw runner holds the order, else
 * rank 0 when the entrants hash has the user (not drawn yet). Returns 0, or -1 when Redis could
 * not be read.
 */
static int
find_entrants(struct decider *d, const struct wire_result_query *q, unsigned n,
	struct store_result *res)
{
	struct wire_result_query ask[DECIDER_LOOKUP_MAX];
	unsigned idx[DECIDER_LOOKUP_MAX], m = 0;
	uint64_t rids[DECIDER_LOOKUP_MAX], ranks[DECIDER_LOOKUP_MAX];

	for (unsigned i = 0; i < n; i++) {
		const struct cp_state_event *e = cp_state_event(d->st, q[i].event);
		uint32_t rank;
		uint64_t rid;

		if (res[i].verdict != 0 || e == NULL || e->ev.draw_window_s == 0)
			continue;
		if (draw_pending(e) && d->draws != NULL &&
			draw_runner_rank(d->draws, q[i].event, q[i].user, &rank, &rid) == 0) {
			/* Decided already and not a buyer (no result): beyond the stock, on the
			 * waiting list; never queued again (a data plane would show it queued). */
			res[i] = (struct store_result){
				.verdict = rank <= e->draw.decided ? WIRE_V_WAITING : WIRE_V_QUEUED,
				.reservation_id = rid,
				.order_id = rank};
			continue;
		}
		ask[m] = q[i];
		idx[m++] = i;
	}
	if (m == 0)
		return 0;
	if (store_entrants_ranks(d->rs, ask, m, rids, ranks) != 0)
		return -1;
	for (unsigned i = 0; i < m; i++) {
		if (rids[i] != 0 && ranks[i] != 0 && ranks[i] <= UINT32_MAX)
			res[idx[i]] = (struct store_result){.verdict = WIRE_V_WAITING,
				.reservation_id = rids[i],
				.order_id = ranks[i]};
		else if (rids[i] != 0 && draw_pending(cp_state_event(d->st, ask[i].event)))
			res[idx[i]] = (struct store_result){
				.verdict = WIRE_V_QUEUED, .reservation_id = rids[i]};
	}
	return 0;
}

/*
 * Publishes the results Redis holds for the n (event, user) pairs q, DECIDER_LOOKUP_MAX at a
 * time (pipelined HGETs); a pair without one is left out. Returns how many were published, or
 * -1 when Redis could not be read (the rest is not tried).
 */
static int
publish_stored(struct decider *d, const struct wire_result_query *q, unsigned n)
{
	struct store_result res[DECIDER_LOOKUP_MAX];
	struct wire_result out[DECIDER_LOOKUP_MAX];
	int published = 0;

	for (unsigned at = 0; at < n; at += DECIDER_LOOKUP_MAX) {
		unsigned m = n - at < DECIDER_LOOKUP_MAX ? n - at : DECIDER_LOOKUP_MAX, k = 0;

		if (store_results(d->rs, q + at, m, res) != 0 || find_entrants(d, q + at, m, res) != 0)
			return -1;
		for (unsigned i = 0; i < m; i++) {
			if (res[i].verdict == WIRE_V_QUEUED || res[i].verdict == WIRE_V_WAITING) {
				out[k++] = (struct wire_result){
					.reservation_id = res[i].reservation_id,
					.user = q[at + i].user,
					.event = q[at + i].event,
					.verdict = res[i].verdict,
					.rank = (uint32_t)res[i].order_id, /* find_entrants() */
				};
				continue;
			}
			if (res[i].verdict == 0)
				continue; /* never reserved here: nothing to say */
			out[k++] = (struct wire_result){
				.reservation_id = res[i].reservation_id,
				.user = q[at + i].user,
				.order_id = res[i].order_id,
				.pay_deadline_ms = res[i].pay_deadline_ms,
				.event = q[at + i].event,
				.verdict = res[i].verdict,
			};
		}
		if (k)
			cp_links_publish(d->l, WIRE_T_RESULT, out, k);
		published += (int)k;
	}
	return published;
}

/*
 * A DUPLICATE is a user who holds a reservation already — often their own
 * first attempt, whose reply was lost (the client saw 503 and tried again).
 * Their poll should show what they hold, so the stored result follows: every
 * duplicate's, however many the round had.
 */
static void
publish_held(struct decider *d, const struct wire_result *out, unsigned n_out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < n_out; i++)
		if (out[i].verdict == WIRE_V_DUPLICATE)
			d->held[n++] = (struct wire_result_query){
				.user = out[i].user, .event = out[i].event};
	if (n == 0)
		return;
	int k = publish_stored(d, d->held, n);

	if (k > 0)
		d->ctr.held_published += (uint64_t)k;
}

/*
 * The round's entrants: one enter.lua per event batch, each reservation answered QUEUED (rank
 * 0: not drawn yet), or RETRY / CLOSED / NOT_STARTED as enter.lua says, into out. Returns
 * how many results it wrote there.
 */
static unsigned
enter_round(struct decider *d, struct wire_result *out)
{
	unsigned n_out = 0;

	for (unsigned i = 0; i < d->n_p; i++) {
		struct pending *p = &d->p[i];
		unsigned added = 0;
		uint64_t entrants = 0;

		if (!p->enter)
			continue;
		d->ctr.enter_batches++;
		if (store_enter(d->rs, p->event, p->recs, p->n, p->verdicts, &added, &entrants) != 0)
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"Redis could not take %u entrants of event %u: answered retry", p->n,
				p->event);
		struct cp_state_event *e = cp_state_event(d->st, p->event);

		if (entrants > 0 && e != NULL && e->draw.entrants != entrants) {
			e->draw.entrants = entrants;
			e->draw.dirty = true;
		}
		d->ctr.entrants_new += added;
		for (unsigned k = 0; k < p->n; k++) {
			uint8_t v = p->verdicts[k];

			out[n_out++] = (struct wire_result){
				.reservation_id = p->recs[k].reservation_id,
				.user = p->recs[k].user,
				.event = p->event,
				.stock_left = e != NULL && e->stock_left > 0
						      ? (uint32_t)e->stock_left
						      : 0,
				.verdict = v,
			};
		}
	}
	return n_out;
}

/*
 * Publishes round rd: when its WAIT failed (rd->rc), every result of its decided batches is
 * answered retry first (the replicas may not hold them; a retry of the same user finds what
 * the primary kept). Then the duplicates' stored results and the events' stock.
 */
static void
publish_round(struct decider *d, struct round *rd)
{
	for (unsigned i = 0; i < rd->n_out; i++) {
		struct wire_result *r = &rd->out[i];

		if (rd->rc != 0 && i >= rd->n_enter && (r->flags & WIRE_RESULT_F_STOCK)) {
			r->verdict = WIRE_V_RETRY;
			r->flags = 0;
			r->stock_left = 0;
		}
		if (r->verdict < WIRE_V_MAX)
			d->ctr.verdicts[r->verdict]++;
		if (i >= rd->n_enter && r->verdict != WIRE_V_RETRY && r->verdict != WIRE_V_CLOSED &&
			r->verdict != WIRE_V_NOT_STARTED)
			d->ctr.decided++;
	}
	cp_links_publish(d->l, WIRE_T_RESULT, rd->out, rd->n_out);
	publish_held(d, rd->out, rd->n_out);
	for (unsigned i = 0; i < rd->n_notes && rd->rc == 0; i++)
		cp_state_note_stock(d->st, d->l, rd->note_event[i], rd->note_stock[i]);
}

/*
 * Publishes the rounds whose WAIT answered, oldest first, up to the first still pending; with
 * block, waits for the oldest one's answer first (then takes what else is there).
 */
static void
take_waits(struct decider *d, bool block)
{
	while (d->r_len > 0) {
		struct round *rd = &d->r[d->r_head];

		if (!rd->known) {
			int rc = store_wait_next(d->rs, block);

			if (rc == 1)
				return;
			rd->rc = rc;
			rd->known = true;
		}
		publish_round(d, rd);
		d->r_head = (d->r_head + 1) % d->n_rounds;
		d->r_len--;
		block = false;
	}
}

unsigned
decider_flush(struct decider *d, uint64_t mono_ms, uint64_t wall_ms, bool force)
{
	unsigned n_out = 0, n_b = 0;
	bool wait_sent = false;

	take_waits(d, false);
	if (d->queued == 0 || (!force && mono_ms < d->oldest_mono_ms + d->wait_ms)) {
		d->poll_at_mono_ms = mono_ms + DECIDER_WAIT_POLL_MS;
		return 0;
	}
	/* As many rounds pending as the ring holds: the oldest one's answer first. */
	if (d->r_len == d->n_rounds)
		take_waits(d, true);
	struct round *rd = &d->r[(d->r_head + d->r_len) % d->n_rounds];

	for (unsigned i = 0; i < d->n_p; i++) {
		if (d->p[i].enter)
			continue;
		d->b[n_b++] = (struct store_batch){
			.event = d->p[i].event,
			.n = d->p[i].n,
			.res = d->p[i].recs,
			.verdicts = d->p[i].verdicts,
			.now_ms = wall_ms, /* reserve.lua checks the window by our clock too */
		};
	}
	d->ctr.rounds++;
	d->ctr.batches += n_b;
	/* With wait_replicas the WAIT is pipelined: this round's verdicts wait for it below,
	 * while the next round is decided. */
	if (n_b > 0 && store_reserve_pipelined(d->rs, d->b, n_b, &wait_sent) != 0)
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"Redis could not decide a round of %u reservations: answered retry", d->queued);
	rd->n_enter = n_out = enter_round(d, rd->out);
	rd->n_notes = 0;
	for (unsigned i = 0; i < n_b; i++) {
		const struct store_batch *b = &d->b[i];

		for (unsigned k = 0; k < b->n; k++) {
			struct wire_result *r = &rd->out[n_out++];

			memset(r, 0, sizeof(*r));
			r->reservation_id = b->res[k].reservation_id;
			r->user = b->res[k].user;
			r->event = b->event;
			r->verdict = b->verdicts[k];
			r->stock_left = b->status == 0 && b->stock_left > 0 ? (uint32_t)b->stock_left : 0;
			r->flags = b->status == 0 ? WIRE_RESULT_F_STOCK : 0;
		}
		if (b->status == 0) {
			rd->note_event[rd->n_notes] = b->event;
			rd->note_stock[rd->n_notes++] = b->stock_left;
		}
	}
	rd->n_out = n_out;
	rd->known = !wait_sent;
	rd->rc = 0;
	d->r_len++;
	for (unsigned i = 0; i < d->n_p; i++)
		d->p[i].n = 0;
	d->n_p = 0;
	d->queued = 0;
	take_waits(d, false);
	d->poll_at_mono_ms = mono_ms + DECIDER_WAIT_POLL_MS;
	return n_out;
}

/*
 * The verdict for a reservation of event e received at now_ms when the sale is not on (0 when
 * it may be): the control plane refuses at once what its own clock puts outside
 * [starts_at, ends_at), whatever the data plane's clock said when it admitted it, and an
 * event it knows closed (closing is final). An event it does not know or holds as not opened
 * yet may have been created or opened through another control plane since it last read
 * PostgreSQL: reserve.lua's window key, which every control plane writes, decides those
 * (held: not started; closed: closed; nothing written either way).
 */
static uint8_t
outside_sale(const struct cp_state_event *e, uint64_t now_ms)
{
	if (e == NULL)
		return 0;
	if (e->ev.state == ADMIN_EV_CLOSED || now_ms >= e->ev.ends_at_ms)
		return WIRE_V_CLOSED;
	/* An event with a draw takes entrants from its pre-queue's opening (docs/fairness.md). */
	uint64_t from = e->ev.draw_window_s > 0 && e->ev.queue_opens_at_ms != 0
				? e->ev.queue_opens_at_ms
				: e->ev.starts_at_ms;

	if (now_ms < from)
		return WIRE_V_NOT_STARTED;
	return 0;
}

/* Publishes the answers to reservations refused outside the sale. */
static void
flush_refused(struct decider *d)
{
	if (d->n_refused == 0)
		return;
	cp_links_publish(d->l, WIRE_T_RESULT, d->refused, d->n_refused);
	d->n_refused = 0;
}

/* Answers r with verdict v without deciding it: nothing reaches Redis. */
static void
refuse(struct decider *d, const struct wire_reserve *r, const struct cp_state_event *e, uint8_t v)
{
	if (d->n_refused == sizeof(d->refused) / sizeof(d->refused[0]))
		flush_refused(d);
	d->refused[d->n_refused++] = (struct wire_result){
		.reservation_id = r->reservation_id,
		.user = r->user,
		.event = r->event,
		.stock_left = e != NULL && e->stock_left > 0 ? (uint32_t)e->stock_left : 0,
		.verdict = v,
	};
	d->ctr.verdicts[v]++;
	if (v == WIRE_V_RETRY) { /* the event's draw is under way */
		d->ctr.draw_waiting++;
		return;
	}
	d->ctr.outside_sale++;
	LOG_RL(LOG_LEVEL_NOTICE, 10000,
		"reservations for event %u refused: %s by this control plane's clock (a data "
		"plane whose clock or state lags admitted them; see clock_ahead_ms in flashgatectl "
		"stats)",
		r->event, wire_verdict_name(v));
}

/*
 * Whether a reservation of a draw's event makes its user an entrant: before draw_at by this
 * control plane's clock, or admitted before draw_at by its data plane's clock (which answered
 * it 202 queued with a receipt) and reaching here within DRAW_GRACE_MS after draw_at, before
 * the freeze (draw_runner waits that long; enter.lua refuses after the freeze all the same, and
 * the entry is then answered retry, never left queued). An admitted_ms from the future beyond
 * the grace (a data plane's clock far ahead) counts as now.
 */
static bool
draw_entry_in_time(const struct admin_event *ev, uint64_t admitted_ms, uint64_t now_ms)
{
	uint64_t at = admin_event_draw_at_ms(ev);

	if (now_ms < at)
		return true;
	return admitted_ms < at && now_ms < at + DRAW_GRACE_MS;
}

void
decider_add(struct decider *d, const struct wire_msg *m, uint64_t mono_ms, uint64_t wall_ms)
{
	for (unsigned i = 0; i < m->count; i++) {
		struct wire_reserve r;
		struct pending *p = NULL;
		uint8_t out;

		if (wire_get_reserve(m, i, &r) != 0) {
			d->ctr.bad_records++;
			continue;
		}
		d->ctr.received++;
		struct cp_state_event *e = cp_state_event(d->st, r.event);

		if (e != NULL)
			e->forwarded++; /* the automatic difficulty's share of the refusals */

		if ((out = outside_sale(e, wall_ms)) != 0) {
			refuse(d, &r, e, out);
			continue;
		}
		/* An event with a draw (docs/fairness.md): before draw_at an entrant, from then
		 * until the draw is done nobody (the entrants go first; reserve.lua refuses a
		 * first-come batch meanwhile by itself), then first come as any event. */
		bool enter = false;

		if (draw_pending(e)) {
			if (!draw_entry_in_time(&e->ev, r.admitted_ms, wall_ms)) {
				refuse(d, &r, e, WIRE_V_RETRY);
				continue;
			}
			uint64_t at = admin_event_draw_at_ms(&e->ev);

			if (wall_ms >= at) { /* measured: how late the grace's entries come */
				d->ctr.entrants_late++;
				if (wall_ms - at > d->ctr.entrants_late_max_ms)
					d->ctr.entrants_late_max_ms = wall_ms - at;
			}
			enter = true;
		}
		for (unsigned k = 0; k < d->n_p; k++) {
			if (d->p[k].event == r.event) {
				p = &d->p[k];
				break;
			}
		}
		/* A full batch, or more events than one round holds, or an event's batch of the
		 * other kind (its draw_at came): decide what waits first. */
		if ((p != NULL && (p->n == d->batch_max || p->enter != enter)) ||
			(p == NULL && d->n_p == CP_STATE_EVENTS_MAX)) {
			decider_flush(d, mono_ms, wall_ms, true);
			p = NULL;
		}
		if (p == NULL) {
			p = &d->p[d->n_p++];
			p->event = r.event;
			p->enter = enter;
			p->n = 0;
		}
		if (d->queued == 0)
			d->oldest_mono_ms = mono_ms;
		p->recs[p->n++] = r;
		d->queued++;
	}
	flush_refused(d);
}

uint64_t
decider_deadline(const struct decider *d)
{
	uint64_t at = d->queued ? d->oldest_mono_ms + d->wait_ms : UINT64_MAX;

	/* A pending WAIT: the next turn looks for its answer (decider_flush()). */
	return d->r_len > 0 && d->poll_at_mono_ms < at ? d->poll_at_mono_ms : at;
}

void
decider_query(struct decider *d, const struct wire_msg *m)
{
	for (unsigned i = 0; i < m->count; i++) {
		struct wire_result_query q;

		if (wire_get_result_query(m, i, &q) != 0) {
			d->ctr.bad_records++;
			continue;
		}
		d->ctr.queries_in++;
		if (d->qq_len == DECIDER_QUERIES_MAX) {
			/* The data planes ask again after their cooldown; the poll was answered. */
			d->ctr.queries_shed++;
			continue;
		}
		d->qq[(d->qq_head + d->qq_len++) % DECIDER_QUERIES_MAX] = q;
	}
}

unsigned
decider_serve_queries(struct decider *d, unsigned max, uint64_t mono_ms)
{
	unsigned served = 0;

	/* Never a reconnection for them (the decisions and the heartbeat reconnect), and none
	 * while backing off. */
	if (d->qq_len == 0 || mono_ms < d->qq_retry_mono_ms || !store_connected(d->rs))
		return 0;
	while (served < max && d->qq_len > 0) {
		/* The contiguous part of the ring, at most one lookup's worth. */
		unsigned n = DECIDER_QUERIES_MAX - d->qq_head;

		n = n < d->qq_len ? n : d->qq_len;
		n = n < DECIDER_LOOKUP_MAX ? n : DECIDER_LOOKUP_MAX;
		n = n < max - served ? n : max - served;
		int k = publish_stored(d, d->qq + d->qq_head, n);

		if (k < 0) {
			/* They wait (and are shed if it lasts): the data planes ask again. */
			d->ctr.queries_failed++;
			d->qq_backoff_ms =
				d->qq_backoff_ms == 0
					? DECIDER_QUERY_BACKOFF_MIN_MS
					: backoff_double(d->qq_backoff_ms, DECIDER_QUERY_BACKOFF_MAX_MS);
			d->qq_retry_mono_ms = mono_ms + d->qq_backoff_ms;
			LOG_RL(LOG_LEVEL_WARN, 10000,
				"result queries: a lookup in Redis failed (Redis away, or its replicas "
				"behind); %u wait, tried again in %u ms",
				d->qq_len, d->qq_backoff_ms);
			break;
		}
		d->qq_backoff_ms = 0;
		d->qq_head = (d->qq_head + n) % DECIDER_QUERIES_MAX;
		d->qq_len -= n;
		d->ctr.queries += n;
		d->ctr.queries_found += (uint64_t)k;
		served += n;
	}
	return served;
}

uint64_t
decider_queries_at(const struct decider *d)
{
	/* Not connected: the reconnection (a turn's heartbeat or decisions) comes first. */
	return d->qq_len == 0 || !store_connected(d->rs) ? UINT64_MAX : d->qq_retry_mono_ms;
}

unsigned
decider_queries_waiting(const struct decider *d)
{
	return d->qq_len;
}

void
decider_counters(const struct decider *d, struct decider_counters *out)
{
	*out = d->ctr;
	/* Published by whoever decided the last item: this decider or a draw's batch. */
	out->sold_out_published = d->st->sold_out_published;
}
