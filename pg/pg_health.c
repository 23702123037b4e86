/* SPDX-License-Identifier: BSD-3-Clause */
#include "pg/pg_health.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/now.h"
#include "pg/pg_conn.h"

struct pg_health {
	char conninfo[PG_CONN_INFO_MAX];
	char app[PG_CONN_APP_MAX]; /* its session's application_name */
	unsigned interval_ms, timeout_ms;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Under lock: */
	bool stop, done, orphan; /* stop asked; the thread ended; it frees h itself */
	bool up;
	uint64_t started_ms, probe_since_ms, last_ok_ms, last_us, failures; /* monotonic; 0: none */
};

static void
pg_health_free(struct pg_health *h)
{
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* Waits interval_ms or until stop; returns with the lock held, true when stop was asked. */
static bool
pg_health_wait(struct pg_health *h)
{
	struct timespec until = now_deadline_after_ms(CLOCK_MONOTONIC, h->interval_ms);

	while (!h->stop && pthread_cond_timedwait(&h->cond, &h->lock, &until) != ETIMEDOUT)
		;
	return h->stop;
}

static void *
pg_health_main(void *arg)
{
	struct pg_health *h = arg;
	struct pg_conn *c = pg_conn_new_named(h->conninfo, h->app, NULL, NULL);
	bool first = true;

	pthread_mutex_lock(&h->lock);
	while (c != NULL && (first || !pg_health_wait(h))) {
		char err[256];
		uint64_t one = 0, t0 = now_mono_us();
		int rc;

		first = false;
		h->probe_since_ms = t0 / 1000;
		pthread_mutex_unlock(&h->lock);
		rc = pg_conn_query_u64(c, "SELECT 1", 0, NULL, &one, err, sizeof(err));
		pthread_mutex_lock(&h->lock);
		h->probe_since_ms = 0;
		h->last_us = now_mono_us() - t0;
		h->up = rc == 0 && one == 1 && h->last_us <= (uint64_t)h->timeout_ms * 1000;
		if (h->up)
			h->last_ok_ms = now_mono_ms();
		else
			h->failures++;
	}
	if (h->orphan) {
		pthread_mutex_unlock(&h->lock);
		pg_conn_close(c);
		pg_health_free(h);
		return NULL;
	}
	h->done = true;
	pthread_mutex_unlock(&h->lock);
	pg_conn_close(c);
	return NULL;
}

struct pg_health *
pg_health_start(const char *conninfo, const char *app, unsigned interval_ms, unsigned timeout_ms,
	char *err, size_t errlen)
{
	struct pg_health *h = calloc(1, sizeof(*h));

	if (h == NULL) {
		snprintf(err, errlen, "PostgreSQL health: out of memory");
		return NULL;
	}
	if (snprintf(h->conninfo, sizeof(h->conninfo), "%s", conninfo) >=
		(int)sizeof(h->conninfo)) {
		snprintf(err, errlen, "PostgreSQL health: the conninfo is too long");
		free(h);
		return NULL;
	}
	snprintf(h->app, sizeof(h->app), "%s", app != NULL ? app : "");
	h->interval_ms = interval_ms > 0 ? interval_ms : 1000;
	h->timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
	h->started_ms = now_mono_ms();
	pthread_mutex_init(&h->lock, NULL);
	/* pg_health_wait() counts on the monotonic clock. */
	now_cond_init_monotonic(&h->cond);
	if (pthread_create(&h->th, NULL, pg_health_main, h) != 0) {
		snprintf(err, errlen, "PostgreSQL health: cannot start its thread");
		pg_health_free(h);
		return NULL;
	}
	return h;
}

void
pg_health_read(struct pg_health *h, uint64_t now_ms, struct pg_health_state *out)
{
	uint64_t last;

	pthread_mutex_lock(&h->lock);
	out->up = h->up;
	out->query_s = (double)h->last_us / 1e6;
	out->failures = h->failures;
	if (h->probe_since_ms != 0 && now_ms > h->probe_since_ms) {
		double waiting = (double)(now_ms - h->probe_since_ms) / 1000;

		if (waiting > out->query_s)
			out->query_s = waiting;
		if (now_ms - h->probe_since_ms > h->timeout_ms)
			out->up = false;
	}
	last = h->last_ok_ms != 0 ? h->last_ok_ms : h->started_ms;
	out->since_success_s = now_ms > last ? (double)(now_ms - last) / 1000 : 0.0;
	pthread_mutex_unlock(&h->lock);
}

void
pg_health_stop(struct pg_health *h)
{
	struct timespec until;
	bool joined;

	if (h == NULL)
		return;
	pthread_mutex_lock(&h->lock);
	h->stop = true;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += h->timeout_ms / 1000 + 1;
	joined = pthread_clockjoin_np(h->th, NULL, CLOCK_MONOTONIC, &until) == 0;
	if (!joined) {
		pthread_mutex_lock(&h->lock);
		if (!h->done) {
			/* Stuck on a hung server: the thread frees h once its probe returns. */
			h->orphan = true;
			pthread_mutex_unlock(&h->lock);
			pthread_detach(h->th);
			return;
		}
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->th, NULL);
	}
	pg_health_free(h);
}
