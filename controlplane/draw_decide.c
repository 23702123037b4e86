/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/draw_decide.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/now.h"
#include "common/test_hook.h"
#include "store/store_reserve.h"

/* Rounds decided ahead of the loop at most. */
#define DD_RING 8
/* Draw batches in flight on the thread's connection (dd_rounds()). */
#define DD_INFLIGHT 2

struct draw_decide {
	const struct store_conn_config *rsc;
	uint32_t event;
	const struct store_entrant *v;
	uint64_t from, n;
	unsigned batch, round_n;
	struct draw_decide_hooks hooks; /* tests only; all 0 */
	struct wire_reserve *res;
	uint8_t *verdicts;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a slot freed, stop */
	bool stop, ended;
	bool joined; /* draw_decide_halt() */
	struct draw_decide_round ring[DD_RING];
	unsigned head, count; /* the loop takes at head */
	uint64_t rounds, us_sum, us_max;
};

/* DD_TEST_FAIL_ENV: the batch of b[0..nb) at that rank, if Redis decided it, gets the status of
 * a reply not read (-EIO, its verdicts RETRY), its decisions standing in Redis. */
static void
dd_test_fail(const struct draw_decide *d, struct store_batch *b, unsigned nb)
{
	for (unsigned r = 0; r < nb && d->hooks.fail_rank != 0; r++) {
		if (b[r].status != 0 || b[r].verdicts[0] == WIRE_V_NOT_STARTED ||
			b[r].draw_index + 1 != d->hooks.fail_rank)
			continue;
		LOG_WARN("draw of event %" PRIu32 ": the round of ranks %" PRIu64 "-%" PRIu64
			 ", decided in Redis, handed over as failed by " DD_TEST_FAIL_ENV
			 " (for tests only: unset it in production)",
			d->event, b[r].draw_index + 1, b[r].draw_index + b[r].n);
		b[r].status = -EIO;
		memset(b[r].verdicts, WIRE_V_RETRY, b[r].n);
	}
}

/*
 * Up to k rounds from index at into slots s[0..k) (on the thread): one store_reserve() of k
 * draw batches, each sent as soon as it is formatted, so that Redis runs a batch while the
 * thread reads the one before (it takes them one at a time, other clients between them: a
 * batch's run is still what another sale waits on). A batch decides only at its turn: after
 * one not decided the next is usually refused too (-ESTALE, nothing written), but not always
 * (another control plane's cursor may have reached it meanwhile: it is decided), so every
 * batch sent is handed over, decided or not, for the loop to publish what was decided. Returns
 * how many slots were filled; *more is false when one was not decided (the thread ends).
 */
static unsigned
dd_rounds(struct draw_decide *d, struct store *rs, uint64_t at, struct draw_decide_round *s[],
	unsigned k, bool *more)
{
	uint64_t t0 = now_mono_us(), now_ms = now_wall_ms();
	struct store_batch b[DD_INFLIGHT];
	unsigned nb = 0, filled = 0;

	for (uint64_t pos = at; nb < k && pos < d->n; nb++) {
		unsigned n = d->n - pos < d->round_n ? (unsigned)(d->n - pos) : d->round_n;
		struct wire_reserve *res = d->res + (size_t)nb * d->batch;

		for (unsigned i = 0; i < n; i++)
			res[i] = (struct wire_reserve){
				.reservation_id = d->v[pos + i].reservation_id,
				.user = d->v[pos + i].user,
				.admitted_ms = now_ms,
				.event = d->event};
		b[nb] = (struct store_batch){.event = d->event,
			.n = n,
			.res = res,
			.now_ms = now_ms,
			.draw = true,
			.draw_index = pos,
			.verdicts = d->verdicts + (size_t)nb * d->batch};
		pos += n;
	}
	store_reserve(rs, b, nb);
	dd_test_fail(d, b, nb);
	/* Per round: the pair's time halved (their replies come together). */
	uint64_t took = (now_mono_us() - t0) / (nb ? nb : 1);

	*more = true;
	for (unsigned r = 0; r < nb; r++) {
		struct draw_decide_round *o = s[r];

		o->index = b[r].draw_index;
		o->n = b[r].n;
		o->status = b[r].status;
		o->stock_left = b[r].stock_left;
		o->held = b[r].status == 0 && b[r].verdicts[0] == WIRE_V_NOT_STARTED;
		o->took_us = took;
		if (b[r].status == 0 && !o->held)
			for (unsigned i = 0; i < b[r].n; i++)
				o->out[i] = (struct wire_result){
					.reservation_id = b[r].res[i].reservation_id,
					.user = b[r].res[i].user,
					.event = d->event,
					.stock_left =
						b[r].stock_left > 0 ? (uint32_t)b[r].stock_left : 0,
					.verdict = b[r].verdicts[i],
					.flags = WIRE_RESULT_F_STOCK,
					.rank = (uint32_t)(b[r].draw_index + i + 1),
				};
		*more = *more && b[r].status == 0 && !o->held;
		filled++;
	}
	return filled;
}

/* DD_TEST_HOLD_ENV: the thread waits d->hooks.hold_ms with its rounds decided in Redis and not
 * handed over yet (not after a refused or held round), or until draw_decide_halt(). */
static void
dd_test_hold(struct draw_decide *d)
{
	struct timespec until = now_deadline_after_ms(CLOCK_MONOTONIC, d->hooks.hold_ms);

	pthread_mutex_lock(&d->mu);
	while (!d->stop && pthread_cond_timedwait(&d->cv, &d->mu, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&d->mu);
}

static void *
dd_main(void *arg)
{
	struct draw_decide *d = arg;
	char err[256] = "";
	struct store *rs = store_open(d->rsc, err, sizeof(err));
	uint64_t at = d->from;

	pthread_mutex_lock(&d->mu);
	while (!d->stop && at < d->n) {
		if (d->count + DD_INFLIGHT > DD_RING) {
			pthread_cond_wait(&d->cv, &d->mu);
			continue;
		}
		struct draw_decide_round *s[DD_INFLIGHT];

		for (unsigned r = 0; r < DD_INFLIGHT; r++)
			s[r] = &d->ring[(d->head + d->count + r) % DD_RING];
		pthread_mutex_unlock(&d->mu);
		bool more = false;
		unsigned filled;

		if (rs == NULL) {
			/* No connection could be made: handed over as a lost one. */
			*s[0] = (struct draw_decide_round){
				.index = at, .status = -ENOTCONN, .out = s[0]->out};
			filled = 1;
		} else {
			filled = dd_rounds(d, rs, at, s, DD_INFLIGHT, &more);
			/* Only rounds that decided are held: a refused (stale) one goes back at
			 * once, as it would without the hook. */
			if (d->hooks.hold_ms != 0 && filled > 0 && s[0]->status == 0 && !s[0]->held)
				dd_test_hold(d);
		}
		pthread_mutex_lock(&d->mu);
		for (unsigned r = 0; r < filled; r++) {
			d->count++;
			d->rounds++;
			d->us_sum += s[r]->took_us;
			if (s[r]->took_us > d->us_max)
				d->us_max = s[r]->took_us;
			at += s[r]->n;
		}
		if (!more)
			break;
	}
	d->ended = true;
	pthread_mutex_unlock(&d->mu);
	store_close(rs);
	return NULL;
}

/* Frees d and what it holds; its thread is joined or never started. */
static void
dd_release(struct draw_decide *d)
{
	for (unsigned i = 0; i < DD_RING; i++)
		free(d->ring[i].out);
	free(d->res);
	free(d->verdicts);
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->cv);
	free(d);
}

void
draw_decide_test_hooks(struct draw_decide_hooks *h)
{
	*h = (struct draw_decide_hooks){0};
	if (test_hook_ms(DD_TEST_HOLD_ENV, &h->hold_ms))
		LOG_WARN("draw: each pair of decision rounds is held %u ms before the loop gets it "
			 "by " DD_TEST_HOLD_ENV " (for tests only: unset it in production)",
			h->hold_ms);
	if (test_hook_u64(DD_TEST_FAIL_ENV, &h->fail_rank))
		LOG_WARN("draw: the decision round from rank %" PRIu64 " on is handed over as "
			 "failed once Redis decided it, by " DD_TEST_FAIL_ENV " (for tests only: "
			 "unset it in production)",
			h->fail_rank);
}

struct draw_decide *
draw_decide_start(const struct store_conn_config *rsc, uint32_t event,
	const struct store_entrant *v, uint64_t from, uint64_t n, unsigned batch,
	const struct draw_decide_hooks *hooks, int *rc)
{
	struct draw_decide *d = calloc(1, sizeof(*d));

	*rc = -ENOMEM;
	if (d == NULL)
		return NULL;
	d->rsc = rsc;
	d->event = event;
	d->v = v;
	d->from = from;
	d->n = n;
	d->batch = batch == 0 ? 1 : batch > RS_BATCH_MAX ? RS_BATCH_MAX : batch;
	d->round_n = d->batch;
	if (hooks != NULL)
		d->hooks = *hooks;
	d->res = calloc((size_t)d->batch * DD_INFLIGHT, sizeof(*d->res));
	d->verdicts = calloc((size_t)d->batch * DD_INFLIGHT, 1);
	bool ok = d->res != NULL && d->verdicts != NULL;

	for (unsigned i = 0; i < DD_RING && ok; i++)
		ok = (d->ring[i].out = calloc(d->batch, sizeof(*d->ring[i].out))) != NULL;
	pthread_mutex_init(&d->mu, NULL);
	now_cond_init_monotonic(&d->cv);
	if (ok) {
		int e = pthread_create(&d->th, NULL, dd_main, d);

		if (e == 0) {
			*rc = 0;
			return d;
		}
		*rc = -e;
	}
	d->ended = true;
	d->stop = true;
	d->th = 0;
	/* No thread: freed as a stopped one (nothing to join). */
	dd_release(d);
	return NULL;
}

const struct draw_decide_round *
draw_decide_peek(struct draw_decide *d)
{
	pthread_mutex_lock(&d->mu);
	const struct draw_decide_round *s = d->count > 0 ? &d->ring[d->head] : NULL;

	pthread_mutex_unlock(&d->mu);
	return s;
}

void
draw_decide_pop(struct draw_decide *d)
{
	pthread_mutex_lock(&d->mu);
	if (d->count > 0) {
		d->head = (d->head + 1) % DD_RING;
		d->count--;
		pthread_cond_broadcast(&d->cv);
	}
	pthread_mutex_unlock(&d->mu);
}

bool
draw_decide_ended(struct draw_decide *d)
{
	pthread_mutex_lock(&d->mu);
	bool e = d->ended;

	pthread_mutex_unlock(&d->mu);
	return e;
}

void
draw_decide_stats(struct draw_decide *d, uint64_t *rounds, uint64_t *us_sum, uint64_t *us_max,
	unsigned *round_n)
{
	pthread_mutex_lock(&d->mu);
	*rounds = d->rounds;
	*us_sum = d->us_sum;
	*us_max = d->us_max;
	*round_n = d->round_n;
	pthread_mutex_unlock(&d->mu);
}

void
draw_decide_halt(struct draw_decide *d)
{
	if (d->joined)
		return;
	pthread_mutex_lock(&d->mu);
	d->stop = true;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	pthread_join(d->th, NULL);
	d->joined = true;
}

void
draw_decide_stop(struct draw_decide *d)
{
	if (d == NULL)
		return;
	draw_decide_halt(d);
	dd_release(d);
}
