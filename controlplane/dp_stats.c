/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/dp_stats.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_writer.h"
#include "common/metrics.h"

#define NAME_NONE   UINT16_MAX
#define HASH_SLOTS  (2 * DP_STATS_NAMES_MAX) /* a power of two: at most half full */
#define PROM_PREFIX "flashgate_dp_"

_Static_assert((HASH_SLOTS & (HASH_SLOTS - 1)) == 0, "HASH_SLOTS is a power of two");
_Static_assert(DP_STATS_NAMES_MAX < NAME_NONE, "name ids fit 16 bits");
_Static_assert(DP_STATS_COUNTERS_MAX < UINT16_MAX, "slots fit 16 bits");

/* One distinct name, shared by every data plane that reports it. */
struct name_ent {
	char name[WIRE_STAT_NAME_MAX];
	uint16_t family;
	uint16_t next;	   /* the family's next name, NAME_NONE at the end */
	uint8_t value_off; /* where the label value starts in name; 0: no label */
};

struct family_ent {
	char name[WIRE_STAT_NAME_MAX];	/* the family part of the names */
	char label[WIRE_STAT_NAME_MAX]; /* the label key, "" when the family has none */
	char prom[METRICS_NAME_MAX];	/* its Prometheus metric name */
	uint8_t kind;			/* enum wire_stat_kind */
	uint16_t first, last;		/* its names, in the order they came */
};

struct dp_ent {
	uint32_t id, epoch;
	uint64_t seq, first_ms, last_ms, reports, restarts;
	unsigned n;
	uint16_t name_id[DP_STATS_COUNTERS_MAX]; /* counter i's name */
	uint64_t value[DP_STATS_COUNTERS_MAX];
	uint16_t slot[DP_STATS_NAMES_MAX]; /* name id -> counter index + 1; 0: not reported */
};

struct dp_stats {
	pthread_mutex_t lock;
	struct dp_ent *dp[WIRE_DP_ID_MAX + 1]; /* by sender id */
	unsigned n_dps;
	struct name_ent names[DP_STATS_NAMES_MAX];
	unsigned n_names;
	uint16_t hash[HASH_SLOTS]; /* name id + 1; 0: empty */
	struct family_ent fam[DP_STATS_FAMILIES_MAX];
	unsigned n_fam;
	struct dp_stats_counters ctr;
	uint64_t sum[DP_STATS_NAMES_MAX]; /* scratch for totals, under the lock */
	bool has[DP_STATS_NAMES_MAX];
};

static void
lock(const struct dp_stats *s)
{
	pthread_mutex_lock((pthread_mutex_t *)&s->lock);
}

static void
unlock(const struct dp_stats *s)
{
	pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
}

struct dp_stats *
dp_stats_create(void)
{
	struct dp_stats *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	if (pthread_mutex_init(&s->lock, NULL) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

void
dp_stats_destroy(struct dp_stats *s)
{
	if (s == NULL)
		return;
	for (unsigned i = 0; i <= WIRE_DP_ID_MAX; i++)
		free(s->dp[i]);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static uint32_t
name_hash(const char *name)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *name != '\0'; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	return h;
}

static struct family_ent *
family_find(struct dp_stats *s, const char *name, size_t len)
{
	for (unsigned i = 0; i < s->n_fam; i++)
		if (strlen(s->fam[i].name) == len && memcmp(s->fam[i].name, name, len) == 0)
			return &s->fam[i];
	return NULL;
}

/* How name_id() and family_of() return a refusal: never 0, which is a valid id. */
#define REFUSAL(why) (-1 - (int)DP_STATS_REFUSED_##why)

/*
 * The family of a new name: found, or added with this kind and label key. Returns its index,
 * or REFUSAL(FAMILY_CONFLICT, TOO_MANY_NAMES or BAD_RECORD).
 */
static int
family_of(struct dp_stats *s, const char *name, uint8_t kind)
{
	size_t flen = strcspn(name, ".");
	const char *label = name[flen] == '.' ? name + flen + 1 : NULL;
	size_t llen = label != NULL ? strcspn(label, "=") : 0;
	struct family_ent *f = family_find(s, name, flen);

	if (f != NULL) {
		bool same_label = strlen(f->label) == llen &&
				  (llen == 0 || memcmp(f->label, label, llen) == 0);

		return f->kind == kind && same_label ? (int)(f - s->fam) : REFUSAL(FAMILY_CONFLICT);
	}
	/* The metrics add the label dp; Prometheus reserves labels that start with "__". */
	if ((llen == 2 && memcmp(label, "dp", 2) == 0) ||
		(llen >= 2 && label[0] == '_' && label[1] == '_'))
		return REFUSAL(BAD_RECORD);
	if (s->n_fam == DP_STATS_FAMILIES_MAX)
		return REFUSAL(TOO_MANY_NAMES);
	f = &s->fam[s->n_fam];
	memset(f, 0, sizeof(*f));
	memcpy(f->name, name, flen);
	if (llen > 0)
		memcpy(f->label, label, llen);
	f->kind = kind;
	/* Prometheus wants counters to end in _total; "x" and "x_total" would then be one. */
	size_t n = strlen(f->name);
	bool has_total = n >= 6 && strcmp(f->name + n - 6, "_total") == 0;

	snprintf(f->prom, sizeof(f->prom), PROM_PREFIX "%s%s", f->name,
		kind == WIRE_STAT_COUNTER && !has_total ? "_total" : "");
	for (unsigned i = 0; i < s->n_fam; i++)
		if (strcmp(s->fam[i].prom, f->prom) == 0)
			return REFUSAL(FAMILY_CONFLICT);
	f->first = f->last = NAME_NONE;
	return (int)s->n_fam++;
}

/* The id of a valid name, interned if new. Returns it, or REFUSAL(...). */
static int
name_id(struct dp_stats *s, const char *name, uint8_t kind)
{
	uint32_t h = name_hash(name) & (HASH_SLOTS - 1);

	for (; s->hash[h] != 0; h = (h + 1) & (HASH_SLOTS - 1)) {
		const struct name_ent *e = &s->names[s->hash[h] - 1];

		if (strcmp(e->name, name) == 0)
			return s->fam[e->family].kind == kind ? s->hash[h] - 1
							      : REFUSAL(FAMILY_CONFLICT);
	}
	if (s->n_names == DP_STATS_NAMES_MAX)
		return REFUSAL(TOO_MANY_NAMES);
	int f = family_of(s, name, kind);

	if (f < 0)
		return f;
	uint16_t id = (uint16_t)s->n_names++;
	struct name_ent *e = &s->names[id];
	struct family_ent *fe = &s->fam[f];
	const char *eq = strchr(name, '=');

	memset(e, 0, sizeof(*e));
	memcpy(e->name, name, strlen(name));
	e->family = (uint16_t)f;
	e->next = NAME_NONE;
	e->value_off = eq != NULL ? (uint8_t)(eq - name + 1) : 0;
	if (fe->last == NAME_NONE)
		fe->first = id;
	else
		s->names[fe->last].next = id;
	fe->last = id;
	s->hash[h] = (uint16_t)(id + 1);
	return id;
}

static void
refuse(struct dp_stats *s, enum dp_stats_refusal why)
{
	s->ctr.refused[why]++;
}

int
dp_stats_apply(struct dp_stats *s, const struct wire_msg *m, uint64_t now_ms)
{
	struct dp_ent *d;
	int applied = 0;

	if (m->type != WIRE_T_DP_STATS)
		return -EINVAL;
	lock(s);
	if (m->sender < 1 || m->sender > WIRE_DP_ID_MAX) {
		refuse(s, DP_STATS_REFUSED_BAD_SENDER);
		applied = -ERANGE;
		goto out;
	}
	d = s->dp[m->sender];
	if (d == NULL) {
		d = calloc(1, sizeof(*d));
		if (d == NULL) {
			refuse(s, DP_STATS_REFUSED_NO_MEMORY);
			applied = -ENOMEM;
			goto out;
		}
		d->id = m->sender;
		d->epoch = m->epoch;
		d->first_ms = now_ms;
		s->dp[m->sender] = d;
		s->n_dps++;
	} else if (m->epoch < d->epoch || (m->epoch == d->epoch && m->seq <= d->seq)) {
		/* A late message of an earlier process or an earlier second: what we hold is
		 * newer. */
		refuse(s, DP_STATS_REFUSED_OUT_OF_ORDER);
		goto out;
	} else if (m->epoch != d->epoch) {
		/* The data plane restarted: its counters start again from 0, and names it no
		 * longer reports must not linger. */
		for (unsigned i = 0; i < d->n; i++)
			d->slot[d->name_id[i]] = 0;
		d->n = 0;
		d->epoch = m->epoch;
		d->restarts++;
	}
	d->seq = m->seq;
	for (unsigned i = 0; i < m->count; i++) {
		struct wire_stat st;

		if (wire_get_stat(m, i, &st) != 0) {
			refuse(s, DP_STATS_REFUSED_BAD_RECORD);
			continue;
		}
		int id = name_id(s, st.name, st.kind);

		if (id < 0) {
			refuse(s, (enum dp_stats_refusal)(-1 - id));
			continue;
		}
		unsigned k = d->slot[id];

		if (k == 0) {
			if (d->n == DP_STATS_COUNTERS_MAX) {
				refuse(s, DP_STATS_REFUSED_TOO_MANY_COUNTERS);
				continue;
			}
			d->name_id[d->n] = (uint16_t)id;
			k = ++d->n;
			d->slot[id] = (uint16_t)k;
		}
		d->value[k - 1] = st.value;
		applied++;
	}
	d->last_ms = now_ms;
	d->reports++;
	s->ctr.messages++;
	s->ctr.records += (uint64_t)applied;
out:
	unlock(s);
	return applied;
}

static bool
is_stale(const struct dp_ent *d, uint64_t now_ms)
{
	return now_ms > d->last_ms && now_ms - d->last_ms > DP_STATS_STALE_MS;
}

static void
info_of(const struct dp_ent *d, uint64_t now_ms, struct dp_stats_info *out)
{
	out->id = d->id;
	out->epoch = d->epoch;
	out->first_ms = d->first_ms;
	out->last_ms = d->last_ms;
	out->reports = d->reports;
	out->restarts = d->restarts;
	out->n_counters = d->n;
	out->stale = is_stale(d, now_ms);
}

unsigned
dp_stats_count(const struct dp_stats *s)
{
	unsigned n;

	lock(s);
	n = s->n_dps;
	unlock(s);
	return n;
}

unsigned
dp_stats_live(const struct dp_stats *s, uint64_t now_ms)
{
	unsigned n = 0;

	lock(s);
	for (unsigned id = 1; id <= WIRE_DP_ID_MAX; id++)
		if (s->dp[id] != NULL && !is_stale(s->dp[id], now_ms))
			n++;
	unlock(s);
	return n;
}

unsigned
dp_stats_list(const struct dp_stats *s, uint64_t now_ms, struct dp_stats_info *out, unsigned cap)
{
	unsigned n = 0;

	lock(s);
	for (unsigned id = 1; id <= WIRE_DP_ID_MAX; id++) {
		if (s->dp[id] == NULL)
			continue;
		if (n < cap)
			info_of(s->dp[id], now_ms, &out[n]);
		n++;
	}
	unlock(s);
	return n;
}

/* Fills a wire_stat from interned name id (valid names only: no checks needed). */
static void
stat_of(const struct dp_stats *s, unsigned id, uint64_t value, struct wire_stat *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->name, s->names[id].name, sizeof(out->name));
	out->kind = s->fam[s->names[id].family].kind;
	out->value = value;
}

int
dp_stats_get(const struct dp_stats *s, uint32_t id, uint64_t now_ms, struct dp_stats_info *info,
	struct wire_stat *out, unsigned cap, unsigned *n)
{
	const struct dp_ent *d;

	lock(s);
	d = id >= 1 && id <= WIRE_DP_ID_MAX ? s->dp[id] : NULL;
	if (d == NULL) {
		unlock(s);
		if (n != NULL)
			*n = 0;
		return -ENOENT;
	}
	if (info != NULL)
		info_of(d, now_ms, info);
	for (unsigned i = 0; i < d->n && i < cap; i++)
		stat_of(s, d->name_id[i], d->value[i], &out[i]);
	if (n != NULL)
		*n = d->n;
	unlock(s);
	return 0;
}

/* Sums every name over the data planes into s->sum / s->has. Under the lock. */
static void
sum_all(struct dp_stats *s, uint64_t now_ms)
{
	memset(s->has, 0, sizeof(s->has[0]) * s->n_names);
	memset(s->sum, 0, sizeof(s->sum[0]) * s->n_names);
	for (unsigned id = 1; id <= WIRE_DP_ID_MAX; id++) {
		const struct dp_ent *d = s->dp[id];

		if (d == NULL)
			continue;
		bool stale = is_stale(d, now_ms);

		for (unsigned i = 0; i < d->n; i++) {
			unsigned nid = d->name_id[i];

			if (stale && s->fam[s->names[nid].family].kind == WIRE_STAT_GAUGE)
				continue;
			s->sum[nid] += d->value[i];
			s->has[nid] = true;
		}
	}
}

unsigned
dp_stats_totals(const struct dp_stats *cs, uint64_t now_ms, struct wire_stat *out, unsigned cap)
{
	struct dp_stats *s = (struct dp_stats *)cs; /* the scratch sums are written, under lock */
	unsigned n = 0;

	lock(s);
	sum_all(s, now_ms);
	for (unsigned f = 0; f < s->n_fam; f++)
		for (unsigned id = s->fam[f].first; id != NAME_NONE; id = s->names[id].next) {
			if (!s->has[id])
				continue;
			if (n < cap)
				stat_of(s, id, s->sum[id], &out[n]);
			n++;
		}
	unlock(s);
	return n;
}

/* The interned id of name, or -1 (never interns it). Under the lock. */
static int
name_find(const struct dp_stats *s, const char *name)
{
	for (uint32_t h = name_hash(name) & (HASH_SLOTS - 1); s->hash[h] != 0;
		h = (h + 1) & (HASH_SLOTS - 1)) {
		uint16_t id = (uint16_t)(s->hash[h] - 1);

		if (strcmp(s->names[id].name, name) == 0)
			return id;
	}
	return -1;
}

/*
 * The values of name over every data plane that reported it: their sum (sum) or their largest
 * and who reported it (*dp_id, may be NULL), in *acc. Returns 0, or -ENOENT (*acc untouched).
 */
static int
name_fold(const struct dp_stats *s, const char *name, bool sum, uint64_t *acc, uint32_t *dp_id)
{
	int found = -ENOENT;

	lock(s);
	int id = name_find(s, name);

	for (unsigned d = 1; id >= 0 && d <= WIRE_DP_ID_MAX; d++) {
		const struct dp_ent *e = s->dp[d];

		if (e == NULL || e->slot[id] == 0)
			continue;
		uint64_t v = e->value[e->slot[id] - 1];

		if (sum) {
			*acc = found != 0 ? v : *acc + v;
		} else if (found != 0 || v > *acc) {
			*acc = v;
			if (dp_id != NULL)
				*dp_id = e->id;
		}
		found = 0;
	}
	unlock(s);
	return found;
}

int
dp_stats_gauge_max(const struct dp_stats *s, const char *name, uint64_t *max, uint32_t *dp_id)
{
	return name_fold(s, name, false, max, dp_id);
}

int
dp_stats_sum(const struct dp_stats *s, const char *name, uint64_t *sum)
{
	*sum = 0;
	return name_fold(s, name, true, sum, NULL);
}

void
dp_stats_read_counters(const struct dp_stats *s, struct dp_stats_counters *out)
{
	lock(s);
	*out = s->ctr;
	unlock(s);
}

/* ---- Prometheus ------------------------------------------------------------------------- */

static void
sample(struct metrics_text *t, const char *name, const char *help, uint8_t kind, const char *labels,
	uint64_t v)
{
	if (kind == WIRE_STAT_COUNTER)
		metrics_counter(t, name, help, labels, v);
	else if (v <= (uint64_t)INT64_MAX)
		metrics_gauge_int(t, name, help, labels, (int64_t)v);
	else
		metrics_gauge(t, name, help, labels, (double)v);
}

void
dp_stats_metrics(const struct dp_stats *s, struct metrics_text *t, uint64_t now_ms)
{
	uint16_t ids[WIRE_DP_ID_MAX + 1];
	unsigned n_ids = 0;
	char labels[256], dp[16], help[160];

	lock(s);
	for (unsigned id = 1; id <= WIRE_DP_ID_MAX; id++)
		if (s->dp[id] != NULL)
			ids[n_ids++] = (uint16_t)id;

	/* Per data plane: is it reporting, and since when. */
	static const struct {
		const char *name, *help;
		uint8_t kind;
	} meta[] = {
		{"flashgate_dataplane_up",
			"1 when the data plane reported its counters in the last 5 s, 0 when it "
			"went silent (stale)",
			WIRE_STAT_GAUGE},
		{"flashgate_dataplane_report_age_seconds",
			"Seconds since the data plane's latest counters arrived", WIRE_STAT_GAUGE},
		{"flashgate_dataplane_reports_total",
			"Counter reports (DP_STATS messages) received from the data plane",
			WIRE_STAT_COUNTER},
		{"flashgate_dataplane_restarts_total",
			"Times the data plane came back with a new epoch (its counters restart)",
			WIRE_STAT_COUNTER},
	};
	for (unsigned k = 0; k < sizeof(meta) / sizeof(meta[0]); k++) {
		for (unsigned i = 0; i < n_ids; i++) {
			const struct dp_ent *d = s->dp[ids[i]];

			labels[0] = '\0';
			snprintf(dp, sizeof(dp), "%u", ids[i]);
			metrics_label(labels, sizeof(labels), "dp", dp);
			switch (k) {
			case 0:
				metrics_gauge_int(t, meta[k].name, meta[k].help, labels,
					is_stale(d, now_ms) ? 0 : 1);
				break;
			case 1:
				metrics_gauge(t, meta[k].name, meta[k].help, labels,
					now_ms > d->last_ms ? (double)(now_ms - d->last_ms) / 1000
							    : 0.0);
				break;
			case 2:
				metrics_counter(t, meta[k].name, meta[k].help, labels, d->reports);
				break;
			default:
				metrics_counter(t, meta[k].name, meta[k].help, labels, d->restarts);
				break;
			}
		}
	}

	/* Every family is one metric: its names (labels) in order, each for every data plane. */
	for (unsigned f = 0; f < s->n_fam; f++) {
		const struct family_ent *fe = &s->fam[f];

		snprintf(help, sizeof(help),
			"Data plane %s \"%s\"%s%s, as each data plane last "
			"reported it",
			fe->kind == WIRE_STAT_COUNTER ? "counter" : "gauge", fe->name,
			fe->label[0] != '\0' ? " by " : "", fe->label);
		for (unsigned id = fe->first; id != NAME_NONE; id = s->names[id].next) {
			const struct name_ent *ne = &s->names[id];

			for (unsigned i = 0; i < n_ids; i++) {
				const struct dp_ent *d = s->dp[ids[i]];
				unsigned k = d->slot[id];

				if (k == 0)
					continue;
				labels[0] = '\0';
				snprintf(dp, sizeof(dp), "%u", ids[i]);
				metrics_label(labels, sizeof(labels), "dp", dp);
				if (ne->value_off != 0)
					metrics_label(labels, sizeof(labels), fe->label,
						ne->name + ne->value_off);
				sample(t, fe->prom, help, fe->kind, labels, d->value[k - 1]);
			}
		}
	}

	static const char *const reasons[] = {
#define DP_STATS_X_NAME(name, str) str,
		DP_STATS_REFUSALS(DP_STATS_X_NAME)
#undef DP_STATS_X_NAME
	};
	for (unsigned r = 0; r < DP_STATS_REFUSED_MAX; r++) {
		labels[0] = '\0';
		metrics_label(labels, sizeof(labels), "reason", reasons[r]);
		metrics_counter(t, "flashgate_dataplane_stats_refused_total",
			"Data plane counter reports or records the control plane did not apply, by "
			"reason",
			labels, s->ctr.refused[r]);
	}
	unlock(s);
}

/* ---- JSON for the stats command ----------------------------------------------------------- */

/* Writes one data plane's (values/has indexed by name id) counters as objects by family. */
static void
json_counters(const struct dp_stats *s, struct json_writer *j, const char *key, const uint64_t *sum,
	const bool *has, const struct dp_ent *d, bool skip_zero)
{
	jw_open(j, key, '{');
	for (unsigned f = 0; f < s->n_fam; f++) {
		const struct family_ent *fe = &s->fam[f];
		bool opened = false;

		for (unsigned id = fe->first; id != NAME_NONE; id = s->names[id].next) {
			const struct name_ent *ne = &s->names[id];
			uint64_t v;

			if (d != NULL) {
				if (d->slot[id] == 0)
					continue;
				v = d->value[d->slot[id] - 1];
			} else {
				if (!has[id])
					continue;
				v = sum[id];
			}
			if (ne->value_off == 0) {
				jw_u64(j, fe->name, v);
				continue;
			}
			if (skip_zero && v == 0)
				continue;
			if (!opened) {
				jw_open(j, fe->name, '{');
				opened = true;
			}
			jw_u64(j, ne->name + ne->value_off, v);
		}
		if (opened)
			jw_close(j, '}');
	}
	jw_close(j, '}');
}

void
dp_stats_json(const struct dp_stats *cs, struct json_writer *j, uint64_t now_ms, bool skip_zero)
{
	struct dp_stats *s = (struct dp_stats *)cs; /* the scratch sums are written, under lock */
	char key[16];

	lock(s);
	jw_open(j, "data_planes", '[');
	for (unsigned id = 1; id <= WIRE_DP_ID_MAX; id++) {
		const struct dp_ent *d = s->dp[id];

		if (d == NULL)
			continue;
		jw_open(j, NULL, '{');
		jw_u64(j, "id", d->id);
		jw_str(j, "state", is_stale(d, now_ms) ? "stale" : "up");
		jw_u64(j, "age_ms", now_ms > d->last_ms ? now_ms - d->last_ms : 0);
		jw_u64(j, "reports", d->reports);
		jw_u64(j, "restarts", d->restarts);
		jw_u64(j, "counters", d->n);
		jw_close(j, '}');
	}
	jw_close(j, ']');
	sum_all(s, now_ms);
	json_counters(s, j, "dp_totals", s->sum, s->has, NULL, skip_zero);
	jw_open(j, "dp_counters", '{');
	for (unsigned id = 1; id <= WIRE_DP_ID_MAX; id++) {
		if (s->dp[id] == NULL)
			continue;
		snprintf(key, sizeof(key), "%u", id);
		json_counters(s, j, key, NULL, NULL, s->dp[id], skip_zero);
	}
	jw_close(j, '}');
	unlock(s);
}
