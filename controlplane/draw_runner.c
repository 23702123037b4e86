/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/draw_runner.h"
#include "controlplane/draw_decide.h"
#include "controlplane/draw_job.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/draw.h"
#include "common/log.h"
#include "common/now.h"
#include "common/test_hook.h"
#include "store/store_draw.h"
#include "store/store_reserve.h"

/* One turn's draw work: about this long (ms) before the loop gets its turn again (a step more at
 * most: the longest gap between two rounds of decisions stays under 10 ms). */
#define DR_STEP_MS 4
/* QUEUED results with ranks published per step (a PUB drops beyond its high-water mark; 8,192
 * took the loop 4 ms of CPU time, half the 10 ms a turn may take). */
#define DR_RANKS_PER_STEP 2048
/* After a failure, the job starts again from the freeze this much later. */
#define DR_RETRY_MS 1000
/* FAIR progress updates at most this often. */
#define DR_FAIR_MS 200
/* A drawn sale's waiting list is read this often (ms). */
#define DR_WAIT_MS 1000

static const char *const phase_name[] = {
	[DR_FREEZE] = "freezing",
	[DR_SCAN] = "reading",
	[DR_LOAD] = "loading",
	[DR_KEYS] = "ordering",
	[DR_WRITE] = "writing",
	[DR_RANKS] = "ranking",
	[DR_DECIDE] = "deciding",
	[DR_FINISH] = "finishing",
	[DR_DONE] = "done",
};

struct draw_runner {
	char *conninfo; /* for the threads' connections */
	struct store_conn_config rsc; /* the same (host: a copy of its own) */
	char rsc_host[64];
	struct store *rs;
	struct cp_links *l;
	struct cp_state *st;
	unsigned batch;	   /* a round's entrants at most ([controlplane] draw_batch) */
	unsigned test_done_delay_ms; /* DR_TEST_DONE_DELAY_ENV (tests only; 0) */
	struct draw_decide_hooks test_hooks; /* the deciding threads' (tests only; all 0) */
	struct dr_job jobs[CP_STATE_EVENTS_MAX];
	unsigned n_jobs;
	struct wire_result *out;     /* DR_RANKS_PER_STEP */
};

struct draw_runner *
draw_runner_create(struct store *rs, const struct store_conn_config *rsc, struct cp_links *l,
	struct cp_state *st, const char *pg_conninfo, unsigned batch)
{
	struct draw_runner *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->rs = rs;
	r->rsc = *rsc;
	if (rsc->host != NULL) {
		snprintf(r->rsc_host, sizeof(r->rsc_host), "%s", rsc->host);
		r->rsc.host = r->rsc_host;
	}
	r->l = l;
	r->st = st;
	r->batch = batch == 0 ? 1 : batch > RS_BATCH_MAX ? RS_BATCH_MAX : batch;

	if (test_hook_ms(DR_TEST_DONE_DELAY_ENV, &r->test_done_delay_ms))
		LOG_WARN("draw: each draw_done_at is held %u ms after its commit by "
			 DR_TEST_DONE_DELAY_ENV " (for tests only: unset it in production)",
			r->test_done_delay_ms);
	draw_decide_test_hooks(&r->test_hooks);
	r->conninfo = strdup(pg_conninfo);
	r->out = calloc(DR_RANKS_PER_STEP, sizeof(*r->out));
	if (r->conninfo == NULL || r->out == NULL) {
		draw_runner_free(r);
		return NULL;
	}
	return r;
}

/* Stops the job's decision thread, if one runs, keeping its rounds' figures. */
static void
dr_decide_end(struct dr_job *j)
{
	uint64_t rounds, sum, max;

	if (j->dec == NULL)
		return;
	draw_decide_stats(j->dec, &rounds, &sum, &max, &j->round_n);
	j->rounds += rounds;
	j->round_us_sum += sum;
	if (max > j->round_us_max)
		j->round_us_max = max;
	draw_decide_stop(j->dec);
	j->dec = NULL;
}

/* Drops what a job holds (not its identity or counters). */
static void
job_clear(struct dr_job *j)
{
	dr_decide_end(j);
	dr_bg_join(j);
	free(j->v);
	free(j->ranked);
	free(j->by_user);
	j->v = NULL;
	j->ranked = NULL;
	j->by_user = NULL;
	j->nv = j->cap = 0;
	j->at = 0;
	j->finishing = false;
	explicit_bzero(j->seed, sizeof(j->seed));
}

/*
 * Stops job j's deciding thread, if one runs, after its round in flight; the rounds it decided
 * in Redis and that were not yet taken are published (the data planes would otherwise learn
 * them only by result queries).
 */
static void
decide_halt_publish(struct draw_runner *r, struct dr_job *j)
{
	const struct draw_decide_round *s;

	if (j->dec == NULL)
		return;
	draw_decide_halt(j->dec);
	while ((s = draw_decide_peek(j->dec)) != NULL) {
		if (s->status == 0 && !s->held)
			cp_links_publish(r->l, WIRE_T_RESULT, s->out, s->n);
		draw_decide_pop(j->dec);
	}
}

void
draw_runner_free(struct draw_runner *r)
{
	if (r == NULL)
		return;
	for (unsigned i = 0; i < r->n_jobs; i++) {
		decide_halt_publish(r, &r->jobs[i]);
		job_clear(&r->jobs[i]);
	}
	free(r->conninfo);
	free(r->out);
	free(r);
}

/*
 * The jobs' clock: the now_ms of the job functions below, a job's retry_ms and rate_ms are
 * monotonic ms (draw_runner_step()'s mono_ms), so that a wall clock's step holds no draw up.
 */

/* Gives a job up for now: everything again from the freeze a second later. */
static void
job_fail(struct draw_runner *r, struct dr_job *j, uint64_t now_ms, const char *what, int rc,
	const char *err)
{
	(void)r; /* every connection a job holds is its threads' own */
	LOG_RL(LOG_LEVEL_WARN, 10000,
		"draw of event %" PRIu32 ": %s failed (%s%s%s); trying again from the freeze in "
		"1 s",
		j->event, what, strerror(rc < 0 ? -rc : rc), err ? ": " : "", err ? err : "");
	job_clear(j);
	j->failures++;
	j->phase = DR_FREEZE;
	j->phase_ms = now_ms; /* "freezing took" counts from here, not from the failed phase */
	j->retry_ms = now_ms + DR_RETRY_MS;
}

/* Goes to phase p, logging at info how long the phase before took. */
static void
job_phase(struct dr_job *j, enum dr_phase p)
{
	uint64_t now = now_mono_ms();

	LOG_INFO("draw of event %" PRIu32 ": %s took %" PRIu64 " ms (%zu entrants)", j->event,
		phase_name[j->phase], now - j->phase_ms, j->nv);
	j->phase = p;
	j->phase_ms = now;
}

/* Sets the event's published draw state (FAIR at once when it changed). */
static void
set_state(struct cp_state_event *e, uint8_t s)
{
	if (e == NULL || e->draw.state == s)
		return;
	e->draw.state = s;
	e->draw.state_dirty = true;
}


/* bsearch()'s order of the ranks by user. */
static int
cmp_rank_user(const void *a, const void *b)
{
	const struct dr_rank *x = a, *y = b;

	return x->user < y->user ? -1 : x->user > y->user;
}

/* Starts j's thread for kind (dr_bg_start()) with r's connections and test wait. */
static int
job_thread_start(struct draw_runner *r, struct dr_job *j, int kind)
{
	return dr_bg_start(j, kind, r->conninfo, &r->rsc, r->test_done_delay_ms);
}

/*
 * Redis's "served" (the draw key's, d): rounds decided in Redis that this control plane did not
 * take (a round whose reply was lost, another control plane's, those before a restart) hold
 * items too, and a waiting entrant's place counts them (FAIR at its next progress update).
 */
static void
note_served(struct cp_state_event *e, const struct store_draw *d)
{
	if (d->served <= e->draw.served)
		return;
	e->draw.served = d->served;
	e->draw.dirty = true;
}

/*
 * Redis's cursor (redis_next) is behind ours: Redis lost decisions this control plane published
 * (a failover without the last writes, a restore). Ours only moves forward (an entrant is never
 * decided twice on our own: the data planes told twice, the waiting list appended twice), so the
 * draw waits for Redis's to catch up, looked at again a second later; an operator's restart of
 * the control plane goes on from Redis's (docs/operations.md, "After a crash").
 */
static void
wait_cursor_behind(struct dr_job *j, uint64_t redis_next, uint64_t ours, uint64_t now_ms)
{
	LOG_RL(LOG_LEVEL_WARN, 10000,
		"draw of event %" PRIu32 ": the draw's cursor in Redis (%" PRIu64
		") is behind this control plane's (%" PRIu64 "): Redis lost decisions; the draw "
		"waits for it (docs/operations.md)",
		j->event, redis_next, ours);
	j->retry_ms = now_ms + DR_RETRY_MS;
}

/* DR_FREEZE: the draw key after the freeze says where to go on. */
static void
step_freeze(struct draw_runner *r, struct dr_job *j, struct cp_state_event *e, uint64_t now_ms)
{
	int rc;

	/* The freeze (one script in Redis) on the loop; the event's row read by the job's
	 * thread: a table locked in PostgreSQL holds the draw, not the loop. */
	if (j->at == 0) {
		if ((rc = store_draw_freeze(r->rs, j->event, &j->fz)) != 0)
			return job_fail(r, j, now_ms, "the freeze in Redis", rc, NULL);
		if ((rc = job_thread_start(r, j, DR_BG_GET)) != 0)
			return job_fail(r, j, now_ms, "starting the reading thread", rc, NULL);
		j->at = 1;
	}
	if (!dr_bg_over(j, now_ms))
		return;
	j->at = 0;
	if (j->bg.rc != 0)
		return job_fail(r, j, now_ms, j->bg.what, j->bg.rc,
			j->bg.err[0] != '\0' ? j->bg.err : NULL);

	const struct store_draw d = j->fz;
	bool pg_digest = j->bg.pg_digest;
	uint64_t pg_n = j->bg.pg_n;
	uint8_t digest[DRAW_DIGEST_LEN];

	memcpy(digest, j->bg.pg_dg, sizeof(digest));
	if (!j->has_seed) {
		LOG_RL(LOG_LEVEL_ERR, 60000,
			"draw of event %" PRIu32 ": the event has no seed in PostgreSQL (created "
			"before the fair start?): it cannot be drawn",
			j->event);
		j->retry_ms = now_ms + 60000;
		return;
	}
	if (d.next < j->published && d.state != RS_DRAW_DONE) {
		/* Started again after a failure (job_fail(): what a failover causes) with Redis's
		 * cursor behind what this job published: the freeze again a second later. */
		return wait_cursor_behind(j, d.next, j->published, now_ms);
	}
	j->n = d.n;
	j->next = d.next;
	e->draw.entrants = d.n;
	note_served(e, &d);
	if (d.state == RS_DRAW_DONE && (pg_digest || d.n > 0)) {
		if (!pg_digest) {
			/* Redis says done but PostgreSQL never got the draw: an operator's mix. */
			LOG_RL(LOG_LEVEL_ERR, 60000,
				"draw of event %" PRIu32 ": Redis holds it done but PostgreSQL has no "
				"entrants' digest; not marked done",
				j->event);
			j->retry_ms = now_ms + 60000;
			return;
		}
		e->draw.decided = d.n;
		j->phase = DR_FINISH;
		return;
	}
	set_state(e, WIRE_DRAW_DRAWING);
	if (pg_digest) {
		if (pg_n != d.n)
			return job_fail(r, j, now_ms, "comparing PostgreSQL's entrants with Redis's",
				EPROTO, "their counts differ");
		memcpy(j->digest, digest, sizeof(digest));
		j->at = 0;
		job_phase(j, DR_LOAD);
		LOG_NOTICE("draw of event %" PRIu32 ": %" PRIu64 " entrants, %" PRIu64
			   " decided; reading the order from PostgreSQL",
			j->event, d.n, d.next);
		return;
	}
	if (d.next != 0)
		return job_fail(r, j, now_ms, "resuming", EPROTO,
			"Redis has decided entrants that PostgreSQL has no draw for");
	j->at = 0;
	job_phase(j, DR_SCAN);
	LOG_NOTICE("draw of event %" PRIu32 ": %" PRIu64 " entrants frozen", j->event, d.n);
}

/* DR_SCAN: the entrants from Redis (the job's thread); then the order is made, off the loop too.
 * Returns whether it is over. */
static bool
step_scan(struct draw_runner *r, struct dr_job *j, uint64_t now_ms)
{
	int rc;

	if (j->at == 0) {
		if ((rc = job_thread_start(r, j, DR_BG_READ)) != 0) {
			job_fail(r, j, now_ms, "starting the reading thread", rc, NULL);
			return true;
		}
		j->at = 1;
	}
	if (!dr_bg_over(j, now_ms))
		return false;
	if (j->bg.rc != 0) {
		job_fail(r, j, now_ms, j->bg.what, j->bg.rc, j->bg.err[0] != '\0' ? j->bg.err : NULL);
		return true;
	}
	/* The sorts, the digest and the rank keys of every entrant: a thread's work (about a
	 * second at 10^6), not the loop's. */
	j->at = 0;
	job_phase(j, DR_KEYS);
	if ((rc = job_thread_start(r, j, DR_BG_ORDER)) != 0) {
		job_fail(r, j, now_ms, "starting the ordering thread", rc, NULL);
		return true;
	}
	return true;
}

/* DR_KEYS: waits for the order (the job's thread). */
static void
step_keys(struct draw_runner *r, struct dr_job *j, uint64_t now_ms)
{
	if (!dr_bg_over(j, now_ms))
		return;
	if (j->bg.rc != 0)
		return job_fail(r, j, now_ms, j->bg.what, j->bg.rc,
			j->bg.err[0] != '\0' ? j->bg.err : NULL);
	j->at = 0;
	job_phase(j, DR_WRITE);
}

/* After the order: the digest in Redis, the ranks for queries, FAIR DRAWING with the digest. */
static int
order_ready(struct draw_runner *r, struct dr_job *j, struct cp_state_event *e, uint64_t now_ms)
{
	int rc = store_draw_set_digest(r->rs, j->event, j->digest);

	if (rc != 0) {
		job_fail(r, j, now_ms, "recording the digest in Redis", rc,
			rc == -EEXIST ? "Redis holds another digest: the entrants changed" : NULL);
		return rc;
	}
	/* The ranks for queries, made by the job's thread with the order. */
	j->by_user = j->bg.by_user;
	j->bg.by_user = NULL;
	if (j->by_user == NULL) {
		job_fail(r, j, now_ms, "allocating the ranks", ENOMEM, NULL);
		return -ENOMEM;
	}
	e->draw.has_digest = true;
	memcpy(e->draw.digest, j->digest, DRAW_DIGEST_LEN);
	e->draw.entrants = j->n;
	e->draw.decided = j->next;
	e->draw.state_dirty = true; /* the digest is news: FAIR at once */
	j->at = j->next;
	j->rate_at = 0;
	memset(j->rate_ms, 0, sizeof(j->rate_ms));
	job_phase(j, DR_RANKS);
	return 0;
}

/* DR_WRITE: draw_entrants in PostgreSQL (the job's thread, one transaction); or the digest
 * found there compared. */
static bool
step_write(struct draw_runner *r, struct dr_job *j, struct cp_state_event *e, uint64_t now_ms)
{
	int rc;

	if (j->at == 0) {
		if ((rc = job_thread_start(r, j, DR_BG_WRITE)) != 0) {
			job_fail(r, j, now_ms, "starting the writing thread", rc, NULL);
			return true;
		}
		j->at = 1;
	}
	if (!dr_bg_over(j, now_ms))
		return false;
	rc = j->bg.rc;
	if (rc == -EEXIST) {
		/* Another control plane wrote it meanwhile: the same entrants, the same order, or
		 * something is badly wrong. */
		if (j->bg.have_n != j->n || memcmp(j->bg.have, j->digest, DRAW_DIGEST_LEN) != 0) {
			LOG_RL(LOG_LEVEL_ERR, 10000,
				"draw of event %" PRIu32 ": PostgreSQL holds another entrants' digest "
				"than Redis's entrants give: not drawn",
				j->event);
			job_fail(r, j, now_ms, "comparing digests", EPROTO, NULL);
			return true;
		}
		order_ready(r, j, e, now_ms);
		return true;
	}
	if (rc != 0) {
		job_fail(r, j, now_ms, j->bg.what, rc, j->bg.err[0] != '\0' ? j->bg.err : NULL);
		return true;
	}
	e->ev.has_digest = true;
	memcpy(e->ev.draw_digest, j->digest, DRAW_DIGEST_LEN);
	e->ev.draw_entrants = (uint32_t)j->n;
	LOG_NOTICE("draw of event %" PRIu32 ": %" PRIu64 " entrants ordered and written", j->event,
		j->n);
	order_ready(r, j, e, now_ms);
	return true;
}

/* DR_LOAD: the order back from PostgreSQL, checked against its digest (the job's thread). */
static bool
step_load(struct draw_runner *r, struct dr_job *j, struct cp_state_event *e, uint64_t now_ms)
{
	int rc;

	if (j->at == 0) {
		if ((rc = job_thread_start(r, j, DR_BG_LOAD)) != 0) {
			job_fail(r, j, now_ms, "starting the loading thread", rc, NULL);
			return true;
		}
		j->at = 1;
	}
	if (!dr_bg_over(j, now_ms))
		return false;
	if (j->bg.rc != 0) {
		if (j->bg.rc == -EPROTO)
			LOG_RL(LOG_LEVEL_ERR, 10000, "draw of event %" PRIu32 ": %s", j->event,
				j->bg.err);
		job_fail(r, j, now_ms, j->bg.what, j->bg.rc,
			j->bg.err[0] != '\0' ? j->bg.err : NULL);
		return true;
	}
	order_ready(r, j, e, now_ms);
	return true;
}

/* DR_RANKS: QUEUED with its rank for every entrant not decided yet, a chunk per step. */
static bool
step_ranks(struct draw_runner *r, struct dr_job *j, const struct cp_state_event *e)
{
	size_t end = j->at + DR_RANKS_PER_STEP < j->nv ? j->at + DR_RANKS_PER_STEP : j->nv;
	unsigned k = 0;

	for (size_t i = j->at; i < end; i++)
		r->out[k++] = (struct wire_result){
			.reservation_id = j->v[i].reservation_id,
			.user = j->v[i].user,
			.event = j->event,
			.stock_left = e->stock_left > 0 ? (uint32_t)e->stock_left : 0,
			.verdict = WIRE_V_QUEUED,
			.rank = (uint32_t)(i + 1),
		};
	if (k)
		cp_links_publish(r->l, WIRE_T_RESULT, r->out, k);
	j->at = end;
	if (end < j->nv)
		return false;
	job_phase(j, DR_DECIDE);
	return true;
}

/* The decisions per second over the last ~2 s. */
static uint32_t
rate_of(struct dr_job *j, uint64_t now_ms, uint64_t decided)
{
	unsigned last = (j->rate_at + DR_RATE_SAMPLES - 1) % DR_RATE_SAMPLES;

	if (j->rate_ms[last] == 0 || now_ms >= j->rate_ms[last] + DR_RATE_SAMPLE_MS) {
		j->rate_ms[j->rate_at] = now_ms;
		j->rate_dec[j->rate_at] = decided;
		j->rate_at = (j->rate_at + 1) % DR_RATE_SAMPLES;
	}
	/* The oldest sample is the next one to be overwritten (or the first, while filling). */
	unsigned old = j->rate_at;

	if (j->rate_ms[old] == 0)
		old = 0;
	if (j->rate_ms[old] == 0 || now_ms <= j->rate_ms[old])
		return 0;
	return (uint32_t)((decided - j->rate_dec[old]) * 1000 / (now_ms - j->rate_ms[old]));
}

/*
 * Round s, decided by j's thread: published as the decider publishes, the stock noted, the
 * cursor moved to its end, "served" to its last reserved entrant.
 */
static void
take_round(struct draw_runner *r, struct dr_job *j, struct cp_state_event *e,
	const struct draw_decide_round *s)
{
	/* Never behind the cursor: the thread's rounds come in index order, without gaps, from
	 * the cursor it was started at (draw_decide_start(j->next)), and while it lives j->next
	 * moves only here, to the end of the round taken. So a decided round starts at j->next,
	 * or past it by the rounds not decided popped before it this turn (the rest of a pair
	 * after a refused, failed or held round: step_decide() takes them all in the turn it meets
	 * the first); every other write of j->next (the stale branch of step_decide(), job_end(),
	 * the freeze after job_fail()) comes after dr_decide_end(). One behind would publish
	 * decisions twice and move the cursor back: a bug, not a state to go on from. */
	if (s->index < j->next) {
		LOG_ERR("draw of event %" PRIu32 ": a decided round at %" PRIu64
			" is behind the cursor (%" PRIu64 "): a bug",
			j->event, s->index, (uint64_t)j->next);
		abort();
	}
	for (unsigned k = 0; k < s->n; k++)
		if (s->out[k].verdict == WIRE_V_RESERVED && s->index + k + 1 > e->draw.served)
			e->draw.served = s->index + k + 1;
	cp_links_publish(r->l, WIRE_T_RESULT, s->out, s->n);
	j->next = s->index + s->n;
	if (j->next > j->published)
		j->published = j->next;
	cp_state_note_stock(r->st, r->l, j->event, s->stock_left);
}

/* The draw's progress (FAIR, at most every 200 ms) at j's cursor. */
static void
note_progress(struct dr_job *j, struct cp_state_event *e, uint64_t now_ms)
{
	e->draw.decided = j->next;
	e->draw.rate = rate_of(j, now_ms, j->next);
	e->draw.dirty = true;
}

/* DR_DECIDE: the rounds the job's decision thread (controlplane/draw_decide.h) decided, taken
 * (take_round()). Returns whether the phase is over. */
static bool
step_decide(struct draw_runner *r, struct dr_job *j, struct cp_state_event *e, uint64_t now_ms)
{
	const struct draw_decide_round *s;
	bool stale = false, failed = false, held = false;
	int failed_rc = 0;
	unsigned taken = 0;
	int rc;

	if (j->next >= j->n && j->dec == NULL) {
		j->phase = DR_FINISH;
		return true;
	}
	if (j->dec == NULL && (j->dec = draw_decide_start(&r->rsc, j->event, j->v, j->next, j->n,
				       r->batch, &r->test_hooks, &rc)) == NULL) {
		job_fail(r, j, now_ms, "starting the deciding thread", rc, NULL);
		return true;
	}
	/* A turn takes what is ready, a bounded number of results. The first round not decided
	 * (refused as stale, failed, held) ends the thread and says what comes next; the rest the
	 * thread handed over are taken in the same turn: a batch sent with it may have been decided
	 * all the same (at another control plane's cursor, or at ours moved by a failed batch that
	 * Redis ran) and is published, else its entrants' data planes would learn their decisions
	 * only by result queries (a retry starts from Redis's cursor, past them). */
	while ((stale || failed || held || taken < DR_RANKS_PER_STEP) &&
		(s = draw_decide_peek(j->dec)) != NULL) {
		if (s->status == 0 && !s->held) {
			take_round(r, j, e, s);
			taken += s->n;
		} else if (!stale && !failed && !held) {
			stale = s->status == -ESTALE;
			held = s->status == 0;
			failed = !stale && !held;
			failed_rc = s->status;
		}
		draw_decide_pop(j->dec);
	}
	if (stale || failed || held || (draw_decide_peek(j->dec) == NULL &&
						draw_decide_ended(j->dec))) {
		dr_decide_end(j);
	} else if (taken == 0) {
		j->retry_ms = now_ms + 1; /* nothing ready yet: looked at again next ms */
	}
	if (stale) {
		/* Not our turn: another control plane decides this draw too. Go on from its
		 * cursor (its data planes were told; ours learn by result queries). */
		struct store_draw d;

		if (store_draw_get(r->rs, j->event, &d) != 0) {
			job_fail(r, j, now_ms, "reading the draw's cursor", EIO, NULL);
			return true;
		}
		note_served(e, &d);
		if (d.next > j->next) {
			j->next = d.next;
		} else if (d.next < j->next && d.state != RS_DRAW_DONE) {
			/* Looked at again a second later, not a new deciding thread each turn. */
			wait_cursor_behind(j, d.next, j->next, now_ms);
		}
		if (d.state == RS_DRAW_DONE)
			j->next = j->n;
	} else if (failed) {
		note_progress(j, e, now_ms);
		job_fail(r, j, now_ms, "deciding a draw batch", failed_rc, NULL);
		return true;
	} else if (held) {
		LOG_RL(LOG_LEVEL_WARN, 10000,
			"draw of event %" PRIu32 ": the sale's window in Redis says held: the draw "
			"waits (open the event)",
			j->event);
		j->retry_ms = now_ms + DR_RETRY_MS;
	}
	note_progress(j, e, now_ms);
	if (j->next >= j->n) {
		dr_decide_end(j);
		j->phase = DR_FINISH;
		return true;
	}
	return false;
}

/*
 * Job j's draw is over (its draw_done_at is in PostgreSQL): the entrants' log deleted (it has
 * served: its memory back, else it goes at the archive), what the job holds dropped, its cursor
 * at n and the event's progress final.
 */
static void
job_end(struct draw_runner *r, struct dr_job *j, struct cp_state_event *e)
{
	int rc;

	if ((rc = store_entrants_log_drop(r->rs, j->event)) != 0)
		LOG_WARN("draw of event %" PRIu32 ": deleting the entrants' log: %s (it goes when "
			 "the event is archived)",
			j->event, strerror(-rc));
	job_clear(j);
	j->next = j->n;
	j->phase = DR_DONE;
	e->draw.decided = j->n;
	e->draw.rate = 0;
}

/* DR_FINISH: PostgreSQL's draw_done_at, FAIR DONE with the seed, memory freed. */
static void
step_finish(struct draw_runner *r, struct dr_job *j, struct cp_state_event *e, uint64_t now_ms)
{
	int rc;

	/* draw_done_at by the job's thread (a locked events table holds the draw, not the loop). */
	if (j->bg.kind == DR_BG_NONE && !j->finishing) {
		if ((rc = job_thread_start(r, j, DR_BG_DONE)) != 0)
			return job_fail(r, j, now_ms, "starting the finishing thread", rc, NULL);
		j->finishing = true;
	}
	if (!dr_bg_over(j, now_ms))
		return;
	j->finishing = false;
	if (j->bg.rc != 0)
		return job_fail(r, j, now_ms, j->bg.what, j->bg.rc,
			j->bg.err[0] != '\0' ? j->bg.err : NULL);
	/* A reload may have brought PostgreSQL's own time of it first (draw_runner_step()). */
	if (e->ev.draw_done_at_ms == 0)
		e->ev.draw_done_at_ms = now_wall_ms(); /* Unix time, as PostgreSQL's */
	job_end(r, j, e);
	set_state(e, WIRE_DRAW_DONE);
	LOG_NOTICE("draw of event %" PRIu32 ": done, %" PRIu64 " entrants decided in rank order; "
		   "first come, first served from now on",
		j->event, j->n);
	LOG_INFO("draw of event %" PRIu32 ": %" PRIu64 " decision rounds of %u entrants (the "
		 "deciding thread), %" PRIu64 " us each on average, the longest %" PRIu64 " us",
		j->event, j->rounds, j->round_n, j->rounds ? j->round_us_sum / j->rounds : 0,
		j->round_us_max);
}

/*
 * A drawn sale still open: its waiting list read from Redis at most every DR_WAIT_MS, so that
 * FAIR carries "served" (the waiting entrants' place) as returned items go to the list
 * (release.lua, run by the order writer).
 */
static void
follow_waiting(struct draw_runner *r, struct cp_state_event *e)
{
	uint64_t mono = now_mono_ms(), served, waiting;
	bool final;

	if (e->ev.state != ADMIN_EV_OPEN || mono < e->draw.wait_ms + DR_WAIT_MS)
		return;
	e->draw.wait_ms = mono;
	if (store_draw_waiting(r->rs, e->ev.id, &served, &waiting, &final) != 0)
		return;
	if (served != e->draw.served || final != e->draw.final)
		e->draw.dirty = true;
	e->draw.served = served;
	e->draw.waiting = waiting;
	e->draw.final = final;
}

/* The job of event, or NULL. */
static struct dr_job *
job_find(struct draw_runner *r, uint32_t event)
{
	for (unsigned i = 0; i < r->n_jobs; i++)
		if (r->jobs[i].event == event)
			return &r->jobs[i];
	return NULL;
}

/*
 * Event e's row says its draw is done while job j is not: a reload of the events (the
 * NOTIFY of this control plane's own draw_done_at) reached the loop before the loop looked at
 * the finishing thread again, or another control plane finished the draw. Brings j to its end:
 * a finish under way goes on (its UPDATE changes nothing twice); in any other phase the job
 * stops once its thread's work is over (never joined while it runs), its deciding thread
 * after the round in flight, whose decisions are published. Returns whether j is done.
 */
static bool
job_wind_down(struct draw_runner *r, struct dr_job *j, struct cp_state_event *e, uint64_t now_ms)
{
	if (j->phase == DR_FINISH) {
		step_finish(r, j, e, now_ms);
		if (j->phase == DR_DONE || j->phase == DR_FINISH)
			return j->phase == DR_DONE;
		/* The finish failed (job_fail()): done all the same, by the row. */
	}
	if (!dr_bg_over(j, now_ms))
		return false;
	decide_halt_publish(r, j);
	job_end(r, j, e);
	LOG_NOTICE("draw of event %" PRIu32 ": done by PostgreSQL's row (another control plane "
		   "finished it); this one's part stopped",
		j->event);
	return true;
}

/* The job of event, created when missing; NULL when the table is full. */
static struct dr_job *
job_of(struct draw_runner *r, uint32_t event)
{
	struct dr_job *found = job_find(r, event);

	if (found != NULL)
		return found;
	if (r->n_jobs == CP_STATE_EVENTS_MAX) {
		/* An event no longer loaded, whose job is over, makes room: its slot, in place
		 * (another job's thread holds a pointer to its own). */
		struct dr_job *j = NULL;

		for (unsigned i = 0; i < r->n_jobs && j == NULL; i++)
			if (r->jobs[i].phase == DR_DONE &&
				cp_state_event(r->st, r->jobs[i].event) == NULL)
				j = &r->jobs[i];
		if (j == NULL)
			return NULL;
		job_clear(j);
		memset(j, 0, sizeof(*j));
		j->event = event;
		j->phase = DR_FREEZE;
		j->phase_ms = now_mono_ms();
		return j;
	}
	struct dr_job *j = &r->jobs[r->n_jobs++];

	memset(j, 0, sizeof(*j));
	j->event = event;
	j->phase = DR_FREEZE;
	j->phase_ms = now_mono_ms();
	return j;
}

/* Whether event e's draw is this control plane's to run at wall_ms (Unix ms): DRAW_GRACE_MS after
 * draw_at. */
static bool
draw_due(const struct cp_state_event *e, uint64_t wall_ms)
{
	const struct admin_event *ev = &e->ev;

	return ev->draw_window_s > 0 && ev->draw_done_at_ms == 0 &&
	       (ev->state == ADMIN_EV_OPEN || ev->state == ADMIN_EV_CLOSED) &&
	       wall_ms >= admin_event_draw_at_ms(ev) + DRAW_GRACE_MS;
}

/* One step of job j. Returns whether it has more to do at once. */
static bool
job_step(struct draw_runner *r, struct dr_job *j, struct cp_state_event *e, uint64_t now_ms)
{
	switch (j->phase) {
	case DR_FREEZE:
		step_freeze(r, j, e, now_ms);
		return j->phase != DR_FREEZE;
	case DR_SCAN:
		step_scan(r, j, now_ms);
		return j->retry_ms <= now_ms;
	case DR_LOAD:
		step_load(r, j, e, now_ms);
		return j->retry_ms <= now_ms;
	case DR_KEYS:
		step_keys(r, j, now_ms);
		return j->retry_ms <= now_ms;
	case DR_WRITE:
		step_write(r, j, e, now_ms);
		return j->retry_ms <= now_ms;
	case DR_RANKS:
		step_ranks(r, j, e);
		return true;
	case DR_DECIDE:
		step_decide(r, j, e, now_ms);
		return j->retry_ms <= now_ms;
	case DR_FINISH:
		step_finish(r, j, e, now_ms);
		return false;
	case DR_DONE:
		return false;
	}
	return false;
}

uint64_t
draw_runner_step(struct draw_runner *r, uint64_t mono_ms, uint64_t wall_ms)
{
	uint64_t wake = UINT64_MAX, until = now_mono_ms() + DR_STEP_MS;

	for (unsigned i = 0; i < r->st->n_ev; i++) {
		struct cp_state_event *e = &r->st->ev[i];
		const struct admin_event *ev = &e->ev;

		if (ev->draw_window_s == 0)
			continue;
		if (ev->draw_done_at_ms != 0) {
			struct dr_job *j = job_find(r, ev->id);

			if (j != NULL && j->phase != DR_DONE && !job_wind_down(r, j, e, mono_ms))
				wake = j->retry_ms > mono_ms
					       ? (j->retry_ms < wake ? j->retry_ms : wake)
					       : mono_ms;
			set_state(e, WIRE_DRAW_DONE);
			follow_waiting(r, e);
		} else if (draw_due(e, wall_ms)) {
			struct dr_job *j = job_of(r, ev->id);
			bool more = true;

			while (j != NULL && more && j->retry_ms <= mono_ms &&
				now_mono_ms() < until) {
				more = job_step(r, j, e, mono_ms);
				/* A new state (drawing with its digest, done) goes out before the
				 * next phase's results: a small draw passes them all in one step. */
				if (e->draw.state_dirty)
					cp_state_publish_fair_one(e, r->l, mono_ms);
			}
			if (j != NULL && j->phase != DR_DONE)
				wake = j->retry_ms > mono_ms
					       ? (j->retry_ms < wake ? j->retry_ms : wake)
					       : mono_ms;
		} else {
			uint64_t at = admin_event_draw_at_ms(ev);

			if (e->draw.state == WIRE_DRAW_NONE)
				set_state(e, WIRE_DRAW_QUEUEING);
			/* Started during the pre-queue: the entrants so far, once. */
			uint64_t n = 0;

			if (!e->draw.counted && wall_ms >= ev->queue_opens_at_ms &&
				store_entrants_count(r->rs, ev->id, &n) == 0) {
				e->draw.counted = true;
				if (n > e->draw.entrants) {
					e->draw.entrants = n;
					e->draw.dirty = true;
				}
			}
			/* Unix time, as a monotonic wake (cp_cron() looks again every heartbeat).
			 */
			at = now_mono_at_wall(at + DRAW_GRACE_MS, mono_ms, wall_ms);
			if ((ev->state == ADMIN_EV_OPEN || ev->state == ADMIN_EV_CLOSED) &&
				at > mono_ms && at < wake)
				wake = at;
		}
		/* FAIR: a state change at once, progress at most every 200 ms. */
		if (e->draw.state_dirty ||
			(e->draw.dirty && mono_ms >= e->draw.fair_ms + DR_FAIR_MS))
			cp_state_publish_fair_one(e, r->l, mono_ms);
		else if (e->draw.dirty && e->draw.fair_ms + DR_FAIR_MS < wake)
			wake = e->draw.fair_ms + DR_FAIR_MS;
	}
	return wake;
}

int
draw_runner_rank(
	const struct draw_runner *r, uint32_t event, uint64_t user, uint32_t *rank, uint64_t *rid)
{
	for (unsigned i = 0; i < r->n_jobs; i++) {
		const struct dr_job *j = &r->jobs[i];

		if (j->event != event || j->by_user == NULL)
			continue;
		struct dr_rank key = {.user = user};
		const struct dr_rank *f =
			bsearch(&key, j->by_user, j->nv, sizeof(key), cmp_rank_user);

		if (f == NULL)
			return -ENOENT;
		*rank = f->rank;
		*rid = j->v[f->rank - 1].reservation_id;
		return 0;
	}
	return -ENOENT;
}

void
draw_runner_json(const struct draw_runner *r, struct json_writer *j)
{
	jw_open(j, "draws", '[');
	for (unsigned i = 0; i < r->n_jobs; i++) {
		const struct dr_job *d = &r->jobs[i];

		jw_open(j, NULL, '{');
		jw_u64(j, "event", d->event);
		jw_str(j, "phase", phase_name[d->phase]);
		jw_u64(j, "entrants", d->n);
		jw_u64(j, "decided", d->phase == DR_DONE ? d->n : d->next);
		jw_u64(j, "failures", d->failures);
		uint64_t rounds = 0, sum = 0, max = 0;
		unsigned round_n = d->round_n;

		if (d->dec != NULL)
			draw_decide_stats(d->dec, &rounds, &sum, &max, &round_n);
		jw_u64(j, "rounds", d->rounds + rounds);
		jw_u64(j, "longest_round_us", max > d->round_us_max ? max : d->round_us_max);
		jw_u64(j, "round_entrants", round_n);
		jw_close(j, '}');
	}
	jw_close(j, ']');
}

void
draw_runner_metrics(const struct draw_runner *r, struct metrics_text *t)
{
	/* A family's samples are written together: entrants of every draw, then decided. */
	for (unsigned m = 0; m < 2; m++) {
		for (unsigned i = 0; i < r->n_jobs && i < CP_STATE_EVENTS_MAX; i++) {
			const struct dr_job *d = &r->jobs[i];
			char labels[32] = "", ev[16];

			snprintf(ev, sizeof(ev), "%" PRIu32, d->event);
			metrics_label(labels, sizeof(labels), "event", ev);
			if (m == 0)
				metrics_gauge_int(t, "flashgate_draw_entrants",
					"Entrants of a draw this control plane runs or ran (fixed "
					"at the freeze).",
					labels, (int64_t)d->n);
			else
				metrics_gauge_int(t, "flashgate_draw_decided",
					"Entrants of a draw decided so far, in rank order.", labels,
					(int64_t)(d->phase == DR_DONE ? d->n : d->next));
		}
	}
}
