/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_DP_IDS_H
#define FG_CP_DP_IDS_H
/*
 * Which data plane holds each dp id. A reservation id is unique only per dp id
 * (common/wire.h), so a second live data plane with an id in use must not have its
 * reservations decided: they could carry the ids of another's.
 *
 * A data plane is known by its header's (sender, epoch) and, from its HELLO, its random
 * instance. The first (sender, epoch) heard holds the id while it is heard from at least every
 * timeout_ms (data planes send a HELLO and their counters every second); a message of another
 * epoch meanwhile is refused. Once the holder is silent that long, the next data plane heard
 * takes the id: a restarted data plane is accepted once the old one is gone. Two instances with
 * the same (sender, epoch) (started in the same second) cannot be told apart message by
 * message: while both say hello, every message of that (sender, epoch) is refused, and both
 * are told.
 *
 * Slow path: the control plane's loop only.
 */
#include <stdbool.h>
#include <stdint.h>

#include "common/json_writer.h"
#include "common/wire.h"

struct dp_ids;

struct dp_ids_counters {
	uint64_t refused_msgs;	       /* messages of a refused data plane, dropped */
	uint64_t refused_reservations; /* of which reservations (counted by the caller) */
	uint64_t conflicts;	       /* times a second data plane showed up with an id in use */
	uint64_t takeovers; /* times a new data plane took an id whose holder went quiet */
};

/* A registry with this timeout (ms, > 0). NULL when out of memory. */
struct dp_ids *dp_ids_create(uint32_t timeout_ms);

void dp_ids_destroy(struct dp_ids *d);

/*
 * Every now_ms of this module is monotonic ms (common/now.h now_mono_ms()): the timeout is an
 * interval.
 *
 * Whether a message from data plane (dp_id, epoch) received at now_ms is taken: true when it
 * holds the id (or takes it now), false when it is refused (counted; the first of a data plane
 * is logged). hello is that message's HELLO record, or NULL for other messages. An id outside
 * 1..WIRE_DP_ID_MAX is refused.
 */
bool dp_ids_accept(struct dp_ids *d, uint32_t dp_id, uint32_t epoch, const struct wire_hello *hello,
	uint64_t now_ms);

/*
 * The DP_REFUSED records due at now_ms into out[0..cap): one per refused data plane heard from
 * within the timeout, at most one per second each. Returns how many.
 */
unsigned dp_ids_refusals_due(
	struct dp_ids *d, uint64_t now_ms, struct wire_dp_refused *out, unsigned cap);

/* Adds n to the refused reservations (the caller counts the records of a refused RESERVE). */
void dp_ids_count_refused_reservations(struct dp_ids *d, unsigned n);

/* A copy of the counters. */
void dp_ids_counters(const struct dp_ids *d, struct dp_ids_counters *out);

/*
 * Writes "dp_ids": {"refused_messages", "refused_reservations", "conflicts", "takeovers",
 * "refused": [{"dp_id", "epoch", "holder_epoch", "age_ms", "messages"}]} (the refused data
 * planes heard from within the timeout) into j.
 */
void dp_ids_json(const struct dp_ids *d, struct json_writer *j, uint64_t now_ms);

#endif
