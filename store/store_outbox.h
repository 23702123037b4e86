/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_OUTBOX_H
#define FG_STORE_STORE_OUTBOX_H
/*
 * The order writer's side of an event's outbox stream and result hash (store/store_keys.h;
 * the control plane does not call these). An outbox entry is read with a consumer group, its
 * reservations become orders in PostgreSQL, and only then is it acknowledged (XACK), so an
 * entry whose writer died is still pending and another writer claims it (XAUTOCLAIM).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store_conn.h"

/*
 * One reservation of an outbox entry. An entry holds one or more (u, r in order, repeated; older
 * entries may add t); admitted_ms is t when given, else the entry's id ms.
 * Reading an entry gives one record per reservation, in order, index 0 .. count - 1.
 */
struct store_outbox_rec {
	uint64_t id_ms; /* the entry's stream id ms-seq (ms is when Redis decided) */
	uint64_t id_seq;
	uint64_t user;		 /* u */
	uint64_t reservation_id; /* r */
	uint64_t admitted_ms;	 /* t when the entry has it, else the entry's id ms */
	uint32_t index;		 /* this reservation's place in the entry */
	uint32_t count;		 /* the entry's reservations: 1 for a deleted or empty entry */
	bool valid;		 /* false: the entry was deleted or these fields are malformed */
};

/* True when r is the last reservation of its entry: acknowledging the entry follows it. */
static inline bool
store_outbox_rec_last(const struct store_outbox_rec *r)
{
	return r->index + 1 >= r->count;
}

/* The records of the entries one read or claim delivered, in stream order. */
struct store_outbox_buf {
	struct store_outbox_rec *rec; /* grown as needed; free with store_outbox_buf_free() */
	unsigned n;		      /* records */
	unsigned entries;	      /* entries they came from */
	unsigned cap;
	/* A claim's entries that were deleted while pending (XDEL, XTRIM): Redis drops them from
	 * the group itself (XAUTOCLAIM, Redis 7), so no order is made of them. */
	unsigned deleted;
};

/* Frees b's records and empties it; b itself is the caller's. */
void store_outbox_buf_free(struct store_outbox_buf *b);

/* What the order writer publishes in the result hash: "O:<rid>:<order id>:<deadline ms>". */
struct store_order_result {
	uint64_t user;
	uint64_t reservation_id;
	uint64_t order_id;
	uint64_t pay_deadline_ms;
};

/*
 * Creates consumer group `group` on the event's outbox (XGROUP CREATE ... 0 MKSTREAM), so that
 * entries added before the writer started are delivered too. Returns 0 also when the group
 * exists, -ENOTCONN or -EIO.
 */
int store_outbox_group_create(struct store *rs, uint32_t event, const char *group);

/*
 * Reads at most count (1..RS_BATCH_MAX) entries never delivered to the group (XREADGROUP GROUP
 * group consumer COUNT count STREAMS outbox >, not blocking) and replaces out's records with
 * their reservations (out grows as needed). Returns how many entries (0: none), -EINVAL,
 * -ENOMEM (the entries stay pending: they are claimed later), -ENOTCONN, -ENOENT (NOGROUP: the
 * group is gone, Redis lost it; make it again), -EIO or -ETIMEDOUT (with [redis]
 * wait_replicas, the replicas did not confirm they hold the entries: out is empty, the entries
 * stay pending; docs/ha.md).
 */
int store_outbox_read(struct store *rs, uint32_t event, const char *group, const char *consumer,
	unsigned count, struct store_outbox_buf *out);

/*
 * Takes over at most count entries pending for min_idle_ms or longer, whoever they were
 * delivered to (XAUTOCLAIM), into out as store_outbox_read() does. cursor (cap >= 48 bytes) is
 * "0-0" for a scan from the start and receives where the next call goes on ("0-0" again when
 * the scan is complete). out->deleted receives how many of the entries it went over were
 * deleted while pending (Redis acknowledges those itself; they are not in out). Returns how many
 * entries, -EINVAL, -ENOMEM, -ENOTCONN, -ENOENT (NOGROUP), -EIO or -ETIMEDOUT (as
 * store_outbox_read()).
 */
int store_outbox_claim(struct store *rs, uint32_t event, const char *group, const char *consumer,
	uint64_t min_idle_ms, char *cursor, size_t cursor_cap, unsigned count,
	struct store_outbox_buf *out);

/*
 * Acknowledges the entries of n records (XACK of each record's entry id; pass one record per
 * entry). Returns how many were pending, -ENOTCONN or -EIO.
 */
int store_outbox_ack(struct store *rs, uint32_t event, const char *group,
	const struct store_outbox_rec *e, unsigned n);

/*
 * The group's pending entries: their number in *count and the oldest one's id in *oldest_ms,
 * *oldest_seq (0, 0 when none). Returns 0, -ENOTCONN or -EIO.
 */
int store_outbox_pending(struct store *rs, uint32_t event, const char *group, uint64_t *count,
	uint64_t *oldest_ms, uint64_t *oldest_seq);

/*
 * Deletes the entries the group has acknowledged, never one that is pending or not delivered
 * yet: XTRIM MINID at the oldest pending entry, or at the group's last delivered entry when
 * none is pending, decided and done in one script. *trimmed (may be NULL) receives how many
 * went. Returns 0, -ENOTCONN or -EIO.
 */
int store_outbox_trim(struct store *rs, uint32_t event, const char *group, uint64_t *trimmed);

/*
 * Writes "O:<rid>:<order id>:<deadline ms>" to the event's result hash for the users of
 * res[0..n_res) whose result is not final (released X:, cancelled C:, paid P: stay), then
 * store_outbox_ack() of the entries of e[0..n), in one round trip (one script: when the HSET fails
 * nothing is acknowledged). Either n may be 0.
 * Returns how many entries were pending (acknowledged now), -EINVAL (a count > RS_BATCH_MAX),
 * -ENOMEM, -ENOTCONN or -EIO.
 */
int store_results_ordered_ack(struct store *rs, uint32_t event, const char *group,
	const struct store_order_result *res, unsigned n_res, const struct store_outbox_rec *e,
	unsigned n);

#endif
