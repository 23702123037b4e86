/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/cp_sampler.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/now.h"
#include "common/wire.h"
#include "controlplane/decider.h"
#include "controlplane/dp_stats.h"
#include "pg/pg_samples.h"

/* The HTTP statuses a sample keeps (the data planes' http_responses members). */
static const char *const sample_statuses[] = {
	"200", "202", "400", "401", "403", "404", "410", "425", "429", "503"};

struct cp_sampler {
	struct cp_ctx *c;
	struct pg_conn *pg;
	unsigned interval_ms;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
};

/* {"reserved":N,...} of d's verdicts into buf. */
static void
decisions_json(const struct decider_counters *d, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "{\"received\":%" PRIu64, d->received);

	for (unsigned v = 1; v < WIRE_V_MAX && n < cap; v++)
		n += (size_t)snprintf(
			buf + n, cap - n, ",\"%s\":%" PRIu64, wire_verdict_name(v), d->verdicts[v]);
	if (n < cap)
		snprintf(buf + n, cap - n, "}");
}

/* {"202":N,...} of the data planes' answers into buf. */
static void
answers_json(const struct dp_stats *dps, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "{");

	for (size_t i = 0; i < sizeof(sample_statuses) / sizeof(sample_statuses[0]) && n < cap;
		i++) {
		char name[48];
		uint64_t v = 0;

		snprintf(name, sizeof(name), "http_responses.status=%s", sample_statuses[i]);
		(void)dp_stats_sum(dps, name, &v);
		n += (size_t)snprintf(
			buf + n, cap - n, "%s\"%s\":%" PRIu64, i ? "," : "", sample_statuses[i], v);
	}
	if (n < cap)
		snprintf(buf + n, cap - n, "}");
}

static void
sample_once(struct cp_sampler *s)
{
	struct decider_counters d;
	char dec[1024], ans[512], err[512];
	struct pg_sample smp = {.cp_id = s->c->cfg->id, .decisions = dec, .answers = ans};

	decider_counters(s->c->dec, &d);
	decisions_json(&d, dec, sizeof(dec));
	answers_json(s->c->dps, ans, sizeof(ans));
	(void)dp_stats_sum(s->c->dps, "admits.kind=reserve_admitted", &smp.admitted);
	(void)dp_stats_sum(s->c->dps, "rejects.reason=forward_budget", &smp.budget_refused);
	smp.data_planes = dp_stats_live(s->c->dps, now_mono_ms());
	if (pg_samples_write(s->pg, &smp, NULL, err, sizeof(err)) != 0)
		LOG_RL(LOG_LEVEL_WARN, 60000, "samples: not written: %s", err);
}

static void *
sampler_main(void *arg)
{
	struct cp_sampler *s = arg;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		struct timespec until = now_deadline_after_ms(CLOCK_MONOTONIC, s->interval_ms);

		while (!s->stop && pthread_cond_timedwait(&s->cond, &s->lock, &until) != ETIMEDOUT)
			;
		if (s->stop)
			break;
		pthread_mutex_unlock(&s->lock);
		sample_once(s);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct cp_sampler *
cp_sampler_start(
	struct cp_ctx *c, const char *conninfo, unsigned interval_ms, char *err, size_t errlen)
{
	struct cp_sampler *s = calloc(1, sizeof(*s));

	if (s == NULL)
		goto nomem;
	s->c = c;
	s->interval_ms = interval_ms;
	s->pg = pg_conn_new_named(conninfo, "flashgate-cp sampler", NULL, NULL);
	if (s->pg == NULL)
		goto nomem;
	pthread_mutex_init(&s->lock, NULL);
	now_cond_init_monotonic(&s->cond);
	if (pthread_create(&s->th, NULL, sampler_main, s) != 0) {
		snprintf(err, errlen, "samples: cannot start the sampler's thread");
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		pg_conn_close(s->pg);
		free(s);
		return NULL;
	}
	return s;
nomem:
	if (s != NULL)
		pg_conn_close(s->pg);
	free(s);
	snprintf(err, errlen, "samples: out of memory");
	return NULL;
}

void
cp_sampler_stop(struct cp_sampler *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->th, NULL);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	pg_conn_close(s->pg);
	free(s);
}
