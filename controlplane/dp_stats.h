/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_DP_STATS_H
#define FG_CP_DP_STATS_H
/*
 * The latest counters of every data plane, as their DP_STATS messages brought them
 * (docs/wire.md): for `flashgatectl stats` (each data plane's and the totals, by reason) and
 * for the Prometheus metrics.
 *
 * A data plane is known by its sender id (1..WIRE_DP_ID_MAX); one that has sent nothing for
 * more than DP_STATS_STALE_MS is shown as stale with its last values. A counter is a name
 * "family" or "family.label=value" (struct wire_stat): names are interned once for all data
 * planes, and a family keeps the kind and the label key it first came with, so that every
 * family is one Prometheus metric with one label set. A new epoch of a sender (it restarted)
 * starts its counters afresh; an older epoch or sequence number is ignored.
 *
 * Memory is bounded: up to DP_STATS_COUNTERS_MAX counters per data plane (about 10 KiB,
 * allocated with its first message; nothing is allocated per message after that), and
 * DP_STATS_NAMES_MAX distinct names in all. What does not fit is counted and dropped.
 *
 * Thread safety: every function takes the table's lock, so dp_stats_apply() may run on the
 * control plane's main thread while the metrics thread renders.
 */
#include <stdbool.h>
#include <stdint.h>

#include "common/wire.h"

#define DP_STATS_STALE_MS     5000
#define DP_STATS_COUNTERS_MAX 256  /* per data plane */
#define DP_STATS_NAMES_MAX    4096 /* distinct names over all data planes */
#define DP_STATS_FAMILIES_MAX 1024

/* What one data plane is, as last heard. */
struct dp_stats_info {
	uint32_t id;
	uint32_t epoch;	   /* its start, Unix s, from the message header */
	uint64_t first_ms; /* when its first message arrived (the caller's clock) */
	uint64_t last_ms;  /* when its latest message arrived */
	uint64_t reports;  /* messages applied */
	uint64_t restarts; /* epochs seen after the first */
	unsigned n_counters;
	bool stale; /* silent for more than DP_STATS_STALE_MS */
};

/* Why messages or records were not applied, for the control plane's own metrics. */
#define DP_STATS_REFUSALS(X)                                                                    \
	X(BAD_RECORD, "bad_record")		  /* a record wire_get_stat() refused */        \
	X(BAD_SENDER, "bad_sender")		  /* a sender id outside 1..WIRE_DP_ID_MAX */   \
	X(OUT_OF_ORDER, "out_of_order")		  /* an older epoch or sequence number */       \
	X(TOO_MANY_COUNTERS, "too_many_counters") /* past DP_STATS_COUNTERS_MAX */              \
	X(TOO_MANY_NAMES, "too_many_names")	  /* past DP_STATS_NAMES_MAX or FAMILIES_MAX */ \
	X(FAMILY_CONFLICT, "family_conflict")	  /* another kind or label key than before */   \
	X(NO_MEMORY, "no_memory")		  /* a new data plane's table */

#define DP_STATS_X_ENUM(name, str) DP_STATS_REFUSED_##name,
enum dp_stats_refusal { DP_STATS_REFUSALS(DP_STATS_X_ENUM) DP_STATS_REFUSED_MAX };
#undef DP_STATS_X_ENUM

struct dp_stats_counters {
	uint64_t messages; /* DP_STATS messages applied */
	uint64_t records;  /* records applied */
	uint64_t refused[DP_STATS_REFUSED_MAX];
};

struct dp_stats;
struct metrics_text;
struct json_writer;

/* Creates an empty table. Returns NULL when memory is short. */
struct dp_stats *dp_stats_create(void);

/* Frees s. NULL is a no-op. */
void dp_stats_destroy(struct dp_stats *s);

/*
 * Applies one decoded DP_STATS message that arrived at now_ms: monotonic ms (common/now.h
 * now_mono_ms()), as every now_ms of this module and the times of struct dp_stats_info, so that a
 * wall clock's step makes no data plane stale or live. Each valid record sets its counter; refused
 * records are counted and the rest is applied. Returns the records applied (0 for a message
 * ignored as older than what is held), -EINVAL when m is not a DP_STATS message, -ERANGE for a
 * sender id outside 1..WIRE_DP_ID_MAX, -ENOMEM when a new data plane cannot be held.
 */
int dp_stats_apply(struct dp_stats *s, const struct wire_msg *m, uint64_t now_ms);

/* The number of data planes heard from. */
unsigned dp_stats_count(const struct dp_stats *s);

/* The number of data planes heard from within DP_STATS_STALE_MS of now_ms (not stale). */
unsigned dp_stats_live(const struct dp_stats *s, uint64_t now_ms);

/*
 * Copies what is known of up to cap data planes, in increasing id order, into out. Returns
 * how many there are (which may be more than cap).
 */
unsigned dp_stats_list(
	const struct dp_stats *s, uint64_t now_ms, struct dp_stats_info *out, unsigned cap);

/*
 * Copies data plane id's info into *info (when not NULL) and up to cap of its counters, in the
 * order they first came, into out; *n receives how many it has. Returns 0, or -ENOENT when it
 * was never heard from.
 */
int dp_stats_get(const struct dp_stats *s, uint32_t id, uint64_t now_ms, struct dp_stats_info *info,
	struct wire_stat *out, unsigned cap, unsigned *n);

/*
 * The sums over all data planes of each name, grouped by family, into out (up to cap).
 * Counters of stale data planes count (what they did happened); their gauges do not (they
 * are no longer true). Returns how many names there are (which may be more than cap).
 */
unsigned dp_stats_totals(
	const struct dp_stats *s, uint64_t now_ms, struct wire_stat *out, unsigned cap);

/*
 * The largest value of name (a gauge or counter without a label, such as
 * "purchase_token_ttl_s") that any data plane, stale or not, last reported, in *max, and which
 * data plane in *dp_id (may be NULL). Returns 0, or -ENOENT (outputs untouched) when none
 * reported it.
 */
int dp_stats_gauge_max(const struct dp_stats *s, const char *name, uint64_t *max, uint32_t *dp_id);

/*
 * The sum of name (such as "rejects.reason=forward_budget") over every data plane, stale or
 * not, as last reported, in *sum. Returns 0, or -ENOENT (*sum 0) when none reported it.
 */
int dp_stats_sum(const struct dp_stats *s, const char *name, uint64_t *sum);

/* A copy of the table's own counters. */
void dp_stats_read_counters(const struct dp_stats *s, struct dp_stats_counters *out);

/*
 * Writes every data plane's counters as Prometheus metrics into t: a family becomes
 * flashgate_dp_<family>_total (a counter) or flashgate_dp_<family> (a gauge) with the labels
 * dp="<id>" and, for "family.label=value", label="value"; and per data plane
 * flashgate_dataplane_up (0 when stale), flashgate_dataplane_report_age_seconds,
 * flashgate_dataplane_reports_total, flashgate_dataplane_restarts_total, and the table's own
 * flashgate_dataplane_stats_refused_total{reason}. Errors are kept in t->error.
 */
void dp_stats_metrics(const struct dp_stats *s, struct metrics_text *t, uint64_t now_ms);

/*
 * Writes the members "data_planes" (an array: id, state "up"|"stale", age_ms, reports,
 * restarts, counters), "dp_totals" and "dp_counters" (an object per data plane id) into the
 * open object of j. Counters are objects by family: {"rx_packets":5,"drops":{"ip_checksum":3}}.
 * With skip_zero, labelled counters that are 0 are left out (a reason that never happened).
 */
void dp_stats_json(const struct dp_stats *s, struct json_writer *j, uint64_t now_ms, bool skip_zero);

#endif
