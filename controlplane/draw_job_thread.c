/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/draw_job.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/sort_u64.h"
#include "pg/pg_draw.h"

/* The digest of the entrants j->v (any order): their users sorted through common/draw. */
static int
entrants_digest(const struct dr_job *j, uint8_t out[DRAW_DIGEST_LEN])
{
	uint64_t *u = malloc((j->nv ? j->nv : 1) * sizeof(*u));
	bool sorted = true;
	int rc;

	if (u == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < j->nv; i++) {
		u[i] = j->v[i].user;
		sorted = sorted && (i == 0 || u[i - 1] < u[i]);
	}
	rc = sorted ? 0 : sort_u64(u, j->nv, sizeof(*u), 0);
	if (rc == 0)
		rc = draw_entrants_digest(j->event, u, j->nv, out);
	free(u);
	return rc;
}

/* The ranks for queries: every entrant of j->v (rank order) by user. NULL: no memory. */
static struct dr_rank *
ranks_by_user(const struct dr_job *j)
{
	struct dr_rank *b = malloc((j->nv ? j->nv : 1) * sizeof(*b));

	if (b == NULL)
		return NULL;
	for (size_t i = 0; i < j->nv; i++)
		b[i] = (struct dr_rank){.user = j->v[i].user, .rank = (uint32_t)(i + 1)};
	if (sort_u64(b, j->nv, sizeof(*b), offsetof(struct dr_rank, user)) != 0) {
		free(b);
		return NULL;
	}
	return b;
}

/* A failure of the job's thread: what, rc, and err's message (may be empty). */
static int
bg_fail(struct dr_job *j, const char *what, int rc, const char *msg)
{
	j->bg.what = what;
	j->bg.rc = rc;
	if (msg != NULL)
		snprintf(j->bg.err, sizeof(j->bg.err), "%s", msg);
	return rc;
}

/* Sorts j->v by user unless it is sorted already. 0 or -ENOMEM. */
static int
entrants_by_user(struct dr_job *j)
{
	for (size_t i = 1; i < j->nv; i++)
		if (j->v[i - 1].user > j->v[i].user)
			return sort_u64(j->v, j->nv, sizeof(*j->v), offsetof(struct store_entrant, user));
	return 0;
}

/* The distinct users of j->v, sorted by user. */
static size_t
distinct_users(const struct dr_job *j)
{
	size_t k = 0;

	for (size_t i = 0; i < j->nv; i++)
		k += i == 0 || j->v[i - 1].user != j->v[i].user;
	return k;
}

/* DR_BG_READ: the frozen entrants from Redis on a connection of the thread's own, into j->v:
 * their log in large slices when it holds the freeze's count of them (enter.lua writes both in
 * one script), else the hash itself (HSCAN in steps; repeats and all: DR_BG_ORDER drops them). */
static int
bg_read(struct dr_job *j)
{
	char err[256] = "";
	struct store *s = store_open(j->bg.rsc, err, sizeof(err));
	uint64_t cursor = 0;
	int rc = 0;

	if (s == NULL)
		return bg_fail(j, "reading the entrants", -ENOTCONN, err);
	free(j->v);
	j->v = NULL;
	j->nv = j->cap = 0;
	rc = store_entrants_log_read(s, j->event, &j->v, &j->nv, &j->cap);
	/* Trusted only when it holds the freeze's count of distinct users (sorted by user here,
	 * which DR_BG_ORDER then finds done). */
	if (rc == 0 && j->nv == j->n && entrants_by_user(j) == 0 && distinct_users(j) == j->n) {
		store_close(s);
		return 0;
	}
	if (rc == 0 || rc == -EIO) {
		LOG_INFO("draw of event %" PRIu32 ": the entrants' log holds %zu of the %" PRIu64
			 " entrants%s: reading them from their hash",
			j->event, rc == 0 && j->nv == j->n ? distinct_users(j) : j->nv, j->n,
			rc == -EIO ? " and what this build cannot read" : "");
		j->nv = 0;
		rc = 0;
		do
			rc = store_entrants_scan(
				s, j->event, &cursor, DR_SCAN_COUNT, &j->v, &j->nv, &j->cap);
		while (rc == 0 && cursor != 0);
	}
	store_close(s);
	return rc == 0 ? 0 : bg_fail(j, "reading the entrants", rc, NULL);
}

/* DR_BG_ORDER: the scanned entrants sorted by user (HSCAN's repeats dropped), counted, their
 * digest, each one's rank key, and the sort by key into j->v: the draw's order; and the ranks
 * by user for queries (j->ranked), which the sort by key gives without another sort. */
static int
bg_order(struct dr_job *j)
{
	struct draw_ranker rk;
	struct dr_keyed *kd;
	struct store_entrant *by_rank;
	size_t k = 0;
	int rc;

	if ((rc = entrants_by_user(j)) != 0)
		return bg_fail(j, "sorting the entrants", rc, NULL);
	for (size_t i = 0; i < j->nv; i++)
		if (k == 0 || j->v[k - 1].user != j->v[i].user)
			j->v[k++] = j->v[i];
	j->nv = k;
	if (j->nv != j->n)
		return bg_fail(j, "reading the entrants", -EPROTO,
			"their number differs from the freeze's");
	if ((rc = entrants_digest(j, j->digest)) != 0)
		return bg_fail(j, "the entrants' digest", rc, NULL);
	kd = malloc((j->nv ? j->nv : 1) * sizeof(*kd));
	by_rank = malloc((j->nv ? j->nv : 1) * sizeof(*by_rank));
	free(j->ranked);
	j->ranked = malloc((j->nv ? j->nv : 1) * sizeof(*j->ranked));
	if (kd == NULL || by_rank == NULL || j->ranked == NULL) {
		free(kd);
		free(by_rank);
		return bg_fail(j, "allocating the order", -ENOMEM, NULL);
	}
	draw_ranker_init(&rk, j->seed, j->event, j->digest);
	for (size_t i = 0; i < j->nv; i++)
		kd[i] = (struct dr_keyed){.key = draw_ranker_key(&rk, j->v[i].user), .idx = i};
	draw_ranker_wipe(&rk);
	/* Stable: equal keys (practically never) stay in user order, common/draw.h's tie rule. */
	if ((rc = sort_u64(kd, j->nv, sizeof(*kd), offsetof(struct dr_keyed, key))) != 0) {
		free(kd);
		free(by_rank);
		return bg_fail(j, "sorting the entrants", rc, NULL);
	}
	for (size_t i = 0; i < j->nv; i++) {
		by_rank[i] = j->v[kd[i].idx];
		j->ranked[kd[i].idx] =
			(struct dr_rank){.user = j->v[kd[i].idx].user, .rank = (uint32_t)(i + 1)};
	}
	free(kd);
	free(j->v);
	j->v = by_rank;
	j->cap = j->nv;
	return 0;
}

/* DR_BG_WRITE: draw_entrants written in one transaction (or found written: -EEXIST), on a
 * connection of the thread's own; then the ranks for queries. */
static int
bg_write(struct dr_job *j)
{
	struct pg_draw *dp = pg_draw_create(j->bg.conninfo, "flashgate-cp draw");
	int rc;

	if (dp == NULL)
		return bg_fail(j, "writing draw_entrants", -ENOMEM, NULL);
	rc = pg_draw_write_all(dp, j->event, j->v, j->nv, j->digest, j->bg.have, &j->bg.have_n,
		j->bg.err, sizeof(j->bg.err));
	pg_draw_free(dp);
	if (rc != 0 && rc != -EEXIST)
		return bg_fail(j, "writing draw_entrants", rc, NULL);
	j->bg.rc = rc;
	j->bg.by_user = j->ranked != NULL ? j->ranked : ranks_by_user(j);
	j->ranked = NULL;
	if (j->bg.by_user == NULL)
		return bg_fail(j, "allocating the ranks", -ENOMEM, NULL);
	return rc;
}

/* DR_BG_LOAD: the order back from PostgreSQL, checked against its digest; the ranks. */
static int
bg_load(struct dr_job *j)
{
	struct pg_draw *dp = pg_draw_create(j->bg.conninfo, "flashgate-cp draw");
	uint8_t digest[DRAW_DIGEST_LEN];
	int rc;

	if (dp == NULL)
		return bg_fail(j, "reading draw_entrants", -ENOMEM, NULL);
	free(j->v);
	j->v = NULL;
	rc = pg_draw_load_all(dp, j->event, j->n, &j->v, &j->nv, j->bg.err, sizeof(j->bg.err));
	pg_draw_free(dp);
	j->cap = j->nv;
	if (rc != 0)
		return bg_fail(j, "reading draw_entrants", rc, NULL);
	if (j->nv != j->n || entrants_digest(j, digest) != 0 ||
		memcmp(digest, j->digest, DRAW_DIGEST_LEN) != 0) {
		snprintf(j->bg.err, sizeof(j->bg.err),
			"draw_entrants in PostgreSQL (%zu rows) do not match events.draw_digest and "
			"the %" PRIu64 " frozen entrants",
			j->nv, j->n);
		return bg_fail(j, "checking draw_entrants", -EPROTO, NULL);
	}
	if ((j->bg.by_user = ranks_by_user(j)) == NULL)
		return bg_fail(j, "allocating the ranks", -ENOMEM, NULL);
	return 0;
}

/* DR_BG_GET: the event's draw columns and seed, on a connection of the thread's own. */
static int
bg_get(struct dr_job *j)
{
	struct pg_draw *dp = pg_draw_create(j->bg.conninfo, "flashgate-cp draw");
	int rc;

	if (dp == NULL)
		return bg_fail(j, "reading the event from PostgreSQL", -ENOMEM, NULL);
	rc = pg_draw_get(dp, j->event, &j->bg.pg_digest, j->bg.pg_dg, &j->bg.pg_n, &j->bg.done_ms,
		&j->has_seed, j->seed, j->bg.err, sizeof(j->bg.err));
	pg_draw_free(dp);
	return rc == 0 ? 0 : bg_fail(j, "reading the event from PostgreSQL", rc, NULL);
}

/* DR_BG_DONE: events.draw_done_at, on a connection of the thread's own. */
static int
bg_done(struct dr_job *j)
{
	struct pg_draw *dp = pg_draw_create(j->bg.conninfo, "flashgate-cp draw");
	int rc;

	if (dp == NULL)
		return bg_fail(j, "setting draw_done_at", -ENOMEM, NULL);
	rc = pg_draw_done(dp, j->event, j->bg.err, sizeof(j->bg.err));
	pg_draw_free(dp);
	if (rc == 0 && j->bg.done_delay_ms != 0) {
		struct timespec ts = {.tv_sec = j->bg.done_delay_ms / 1000,
			.tv_nsec = (long)(j->bg.done_delay_ms % 1000) * 1000000L};

		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
	return rc == 0 ? 0 : bg_fail(j, "setting draw_done_at", rc, NULL);
}

static void *
bg_main(void *arg)
{
	struct dr_job *j = arg;

	switch (j->bg.kind) {
	case DR_BG_GET:
		j->bg.rc = bg_get(j);
		break;
	case DR_BG_READ:
		j->bg.rc = bg_read(j);
		break;
	case DR_BG_ORDER:
		j->bg.rc = bg_order(j);
		break;
	case DR_BG_WRITE:
		j->bg.rc = bg_write(j);
		break;
	case DR_BG_LOAD:
		j->bg.rc = bg_load(j);
		break;
	case DR_BG_DONE:
		j->bg.rc = bg_done(j);
		break;
	default:
		break;
	}
	atomic_store(&j->bg.done, true);
	return NULL;
}

int
dr_bg_start(struct dr_job *j, int kind, const char *conninfo, const struct store_conn_config *rsc,
	unsigned done_delay_ms)
{
	int rc;

	free(j->bg.by_user);
	memset(&j->bg, 0, sizeof(j->bg));
	j->bg.kind = kind;
	j->bg.conninfo = conninfo;
	j->bg.rsc = rsc;
	j->bg.done_delay_ms = done_delay_ms;
	atomic_init(&j->bg.done, false);
	if ((rc = pthread_create(&j->bg.th, NULL, bg_main, j)) != 0) {
		j->bg.kind = DR_BG_NONE;
		return -rc;
	}
	return 0;
}

bool
dr_bg_over(struct dr_job *j, uint64_t now_ms)
{
	if (j->bg.kind == DR_BG_NONE)
		return true;
	if (!atomic_load(&j->bg.done)) {
		j->retry_ms = now_ms + DR_BG_POLL_MS;
		return false;
	}
	pthread_join(j->bg.th, NULL);
	j->bg.kind = DR_BG_NONE;
	return true;
}

void
dr_bg_join(struct dr_job *j)
{
	if (j->bg.kind != DR_BG_NONE)
		pthread_join(j->bg.th, NULL);
	free(j->bg.by_user);
	j->bg.by_user = NULL;
	j->bg.kind = DR_BG_NONE;
}
