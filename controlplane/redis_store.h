/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CONTROLPLANE_REDIS_STORE_H
#define FG_CONTROLPLANE_REDIS_STORE_H
/*
 * The control plane's only Redis code (hiredis, one blocking connection): decides batches of
 * reservations with lua/reserve.lua, returns released stock with lua/release.lua, answers
 * result queries, preheats and inspects events.
 *
 * Keys of event EV share the hash tag {EV}, so every script touches one cluster slot:
 *   fg:{EV}:stock     string, the stock left (an integer; missing = not preheated = 0)
 *   fg:{EV}:result    hash, user -> the latest state of that user's reservation. It has exactly
 *                     one field per user holding a reservation (never removed, see
 *                     release.lua), so it is also the event's set of buyers: |buyers| is its
 *                     HLEN. The values (the P: and C: forms are a proposal; rs_results() reads
 *                     them all):
 *                       "<rid>"                         reserved (bare: the hot path adds nothing)
 *                       "O:<rid>:<order id>:<deadline>" ordered (written by the order writer)
 *                       "P:<rid>:<order id>"            paid
 *                       "X:<rid>"                       expired, stock returned (release.lua)
 *                       "C:<rid>"                       cancelled, stock returned
 *                       "H"                             holds an order in PostgreSQL: restored
 *                                                       by reconciliation (rs_repair)
 *   fg:{EV}:outbox    stream, one entry per batch of reserve.lua (per 1024 reservations of a
 *                     batch): the fields u=<user> r=<reservation id> repeated once per
 *                     reservation, in order (entries of older builds hold one, and may carry
 *                     t=<admitted_ms>); the
 *                     order writer reads it with XREADGROUP and acks an entry once every
 *                     reservation in it is an order
 *   fg:{EV}:released  set of reservation ids whose stock went back (release.lua, exactly once)
 * Invariant: stock + |buyers| - |released| == preheated stock, and the outbox holds one
 * reservation per buyer until the order writer trims acknowledged entries.
 *
 * A store is one connection: use it from one thread at a time (the control plane's main loop).
 *
 * Connection loss. Every call that finds the connection broken frees it and returns
 * -ENOTCONN; later calls reconnect, at most once per backoff period (50 ms doubling to 2 s by
 * default), load the scripts again and go on. An outage is logged once when it starts
 * (warn) and once when it ends (notice). A store never exits the process; it sets SIGPIPE to
 * "ignore" when it is at its default, as a write to a closed socket must not kill a daemon.
 *
 * Why answering RETRY after a failure loses and doubles nothing: a batch whose reply was not
 * read may or may not have run (Redis may have died after running it, or after writing its
 * reply). reserve.lua is atomic and its effects reach the AOF as one MULTI/EXEC, so a batch
 * either ran whole or not at all. If it ran, each reserved user has a field in the result hash
 * and is in exactly one outbox entry (so the order writer makes the order); the data plane answered
 * 503, the client retries, and the retry is answered DUPLICATE, while a result query finds
 * the reservation in the result hash. If it did not run, the retry is decided afresh. With
 * persistence off, a Redis restart loses everything since the preheat: reconciliation from
 * PostgreSQL repairs it, which is why production runs appendonly yes, appendfsync always.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "common/wire.h"

/* The most reservations one batch (one EVALSHA) may carry: reserve.lua unpacks them. */
#define RS_BATCH_MAX 2048

/* The most reservations reserve.lua puts in one outbox entry (readers take any number). */
#define RS_OUTBOX_ENTRY_RESERVATIONS 1024

struct rs_config {
	const char *unix_path;	     /* a Unix socket; when set, host and port are not used */
	const char *host;	     /* NULL: 127.0.0.1 */
	unsigned port;		     /* 0: 6379 */
	unsigned connect_timeout_ms; /* 0: 1000 */
	unsigned command_timeout_ms; /* 0: 2000; a reply that takes longer is a lost connection */
	unsigned backoff_min_ms;     /* 0: 50; the first wait after an outage starts */
	unsigned backoff_max_ms;     /* 0: 2000; the wait doubles up to this */
	/* rs_open() succeeds even when Redis cannot be reached yet (the store then connects
	 * like after an outage); otherwise rs_open() fails and says why. */
	bool start_offline;
};

/* One event's reservations, decided by one EVALSHA. */
struct rs_batch {
	uint32_t event;			/* in: 1..UINT32_MAX */
	unsigned n;			/* in: 1..RS_BATCH_MAX */
	const struct wire_reserve *res; /* in: n reservations, each with .event == event */
	uint8_t *verdicts;  /* out: n of WIRE_V_RESERVED, _DUPLICATE, _SOLD_OUT, or all _RETRY */
	int64_t stock_left; /* out: the event's stock after the batch (0 if it had none) */
	int status;	    /* out: 0 decided, or the negative errno for this batch */
};

/* Counters since rs_open(), for stats and metrics. */
struct rs_stats {
	uint64_t batches;  /* decided */
	uint64_t reserved; /* verdicts, by kind */
	uint64_t duplicate;
	uint64_t sold_out;
	uint64_t retry;	       /* reservations answered RETRY (connection lost or error reply) */
	uint64_t errors;       /* error replies */
	uint64_t outages;      /* connections lost */
	uint64_t connects;     /* successful (re)connections, the first included */
	uint64_t script_loads; /* SCRIPT LOAD rounds: one per connection, plus after NOSCRIPT */
};

/* What rs_results() found for one user. */
struct rs_result {
	uint8_t verdict;	  /* 0 when the user has no entry, else a WIRE_V_* */
	uint64_t reservation_id;  /* 0 when verdict is 0 */
	uint64_t order_id;	  /* ORDERED and PAID only, else 0 */
	uint64_t pay_deadline_ms; /* ORDERED only, else 0 */
};

struct rs_event_state {
	int64_t stock;	     /* 0 when missing */
	bool preheated;	     /* the stock key exists */
	uint64_t buyers;     /* HLEN result: users holding a reservation, released ones included */
	uint64_t outbox_len; /* XLEN outbox: entries, each holding one or more reservations */
	uint64_t released;   /* |released| */
};

enum rs_key_kind {
	RS_KEY_STOCK,
	RS_KEY_RESULT,
	RS_KEY_OUTBOX,
	RS_KEY_RELEASED,
};

struct redis_store;

/*
 * Connects to Redis as c says and loads both scripts (SCRIPT LOAD, checking that Redis
 * computed the SHA1 embedded at build time). Returns the store, or NULL with a message that
 * says what was wrong in err (a bad config, or Redis not reachable unless c->start_offline).
 */
struct redis_store *rs_open(const struct rs_config *c, char *err, size_t err_len);

/* Closes the connection and frees rs; NULL is allowed. */
void rs_close(struct redis_store *rs);

/*
 * Reconnects when the connection is down and the backoff period has passed. Returns 0 when
 * connected, else -ENOTCONN. The other calls do this themselves; a daemon may call it from
 * its cron so that the "back" notice does not wait for traffic.
 */
int rs_ensure_connected(struct redis_store *rs);

/* True while the store holds a working connection (as far as it knows). */
bool rs_connected(const struct redis_store *rs);

/*
 * Decides n batches with one EVALSHA of reserve.lua each, all pipelined: every command is
 * sent, then every reply read. Fills each batch's verdicts, stock_left and status. A batch
 * that was not decided (status != 0) has all its verdicts set to WIRE_V_RETRY: -ENOTCONN when
 * the connection is down or was lost before its reply was read (it may have run: see the top
 * of this file), -EIO when Redis answered an error (logged, rate-limited), -EINVAL when the
 * batch itself is malformed (n out of range, an event 0, a reservation of another event).
 * Replies read before a connection loss stay valid. A NOSCRIPT answer (the script cache was
 * flushed) makes the store load the scripts again and resend those batches once.
 * Returns 0 when every batch was decided, else the first batch's error.
 */
int rs_reserve(struct redis_store *rs, struct rs_batch *batches, unsigned n);

/*
 * Returns the stock of one cancelled or expired reservation with release.lua: n items back to
 * the event's stock and the user's result set to "X:<rid>", once per reservation id.
 * Returns 1 when applied, 0 when this reservation id was released before, -ENOENT when user
 * is not a buyer of the event (nothing changes), -EINVAL for n outside 1..1000000 or a zero
 * id, -ENOTCONN or -EIO.
 */
int rs_release(
	struct redis_store *rs, uint32_t event, uint64_t reservation_id, uint64_t user, unsigned n);

/*
 * Looks up the results of n (event, user) pairs (pipelined HGETs on each event's result hash)
 * into out[0..n). A value this build cannot parse is reported as verdict 0 and logged; "H"
 * (restored by reconciliation, the order is in PostgreSQL) is verdict 0 without a log.
 * Returns 0, -ENOTCONN or -EIO (then out is unspecified).
 */
int rs_results(struct redis_store *rs, const struct wire_result_query *q, unsigned n,
	struct rs_result *out);

/*
 * Sets an event's stock before its sale, atomically with the check that nobody has reserved
 * yet: a repeated preheat before the start overwrites the stock (the operator changed it in
 * PostgreSQL). Returns 0, -EBUSY when the event has results or outbox entries (a sale ran:
 * stock is repaired by reconciliation, never overwritten), -EINVAL for a negative stock or
 * event 0, -ENOTCONN or -EIO.
 */
int rs_preheat(struct redis_store *rs, uint32_t event, int64_t stock);

/*
 * Reads an event's counters in one MULTI/EXEC, so they are consistent with each other.
 * Returns 0, -EINVAL for event 0, -ENOTCONN or -EIO.
 */
int rs_event_state(struct redis_store *rs, uint32_t event, struct rs_event_state *out);

/* Deletes every key of an event (tests, and an operator's explicit purge). Returns 0 or < 0. */
int rs_purge_event(struct redis_store *rs, uint32_t event);

/* Copies the counters. */
void rs_get_stats(const struct redis_store *rs, struct rs_stats *out);

/*
 * Writes the name of one of an event's keys ("fg:{42}:stock") to buf. Returns its length, or
 * -ENOSPC when cap is too small (32 bytes always suffice).
 */
int rs_key(char *buf, size_t cap, uint32_t event, enum rs_key_kind kind);

/*
 * The order writer's side of an event's outbox stream and result hash (added for
 * flashgate-order-writer; the control plane does not call these). An outbox entry is read with
 * a consumer group, its reservations become orders in PostgreSQL, and only then is it
 * acknowledged (XACK), so an entry whose writer died is still pending and another writer
 * claims it (XAUTOCLAIM).
 */

/*
 * One reservation of an outbox entry. An entry holds one or more (u, r in order, repeated; older
 * entries may add t); admitted_ms is t when given, else the entry's id ms.
 * reading an entry gives one record per reservation, in order, index 0 .. count - 1.
 */
struct rs_outbox_rec {
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
rs_outbox_rec_last(const struct rs_outbox_rec *r)
{
	return r->index + 1 >= r->count;
}

/* The records of the entries one read or claim delivered, in stream order. */
struct rs_outbox_buf {
	struct rs_outbox_rec *rec; /* grown as needed; free with rs_outbox_buf_free() */
	unsigned n;		   /* records */
	unsigned entries;	   /* entries they came from */
	unsigned cap;
};

/* Frees b's records and empties it; b itself is the caller's. */
void rs_outbox_buf_free(struct rs_outbox_buf *b);

/* What the order writer publishes in the result hash: "O:<rid>:<order id>:<deadline ms>". */
struct rs_order_result {
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
int rs_outbox_group_create(struct redis_store *rs, uint32_t event, const char *group);

/*
 * Reads at most count (1..RS_BATCH_MAX) entries never delivered to the group (XREADGROUP GROUP
 * group consumer COUNT count STREAMS outbox >, not blocking) and replaces out's records with
 * their reservations (out grows as needed). Returns how many entries (0: none), -EINVAL,
 * -ENOMEM (the entries stay pending: they are claimed later), -ENOTCONN or -EIO (e.g. NOGROUP:
 * the group is gone).
 */
int rs_outbox_read(struct redis_store *rs, uint32_t event, const char *group, const char *consumer,
	unsigned count, struct rs_outbox_buf *out);

/*
 * Takes over at most count entries pending for min_idle_ms or longer, whoever they were
 * delivered to (XAUTOCLAIM), into out as rs_outbox_read() does. cursor (cap >= 48 bytes) is
 * "0-0" for a scan from the start and receives where the next call goes on ("0-0" again when
 * the scan is complete). Returns how many entries, -EINVAL, -ENOMEM, -ENOTCONN or -EIO.
 */
int rs_outbox_claim(struct redis_store *rs, uint32_t event, const char *group, const char *consumer,
	uint64_t min_idle_ms, char *cursor, size_t cursor_cap, unsigned count,
	struct rs_outbox_buf *out);

/*
 * Acknowledges the entries of n records (XACK of each record's entry id; pass one record per
 * entry). Returns how many were pending, -ENOTCONN or -EIO.
 */
int rs_outbox_ack(struct redis_store *rs, uint32_t event, const char *group,
	const struct rs_outbox_rec *e, unsigned n);

/*
 * The group's pending entries: their number in *count and the oldest one's id in *oldest_ms,
 * *oldest_seq (0, 0 when none). Returns 0, -ENOTCONN or -EIO.
 */
int rs_outbox_pending(struct redis_store *rs, uint32_t event, const char *group, uint64_t *count,
	uint64_t *oldest_ms, uint64_t *oldest_seq);

/*
 * Deletes the entries the group has acknowledged, never one that is pending or not delivered
 * yet: XTRIM MINID at the oldest pending entry, or at the group's last delivered entry when
 * none is pending, decided and done in one script. *trimmed (may be NULL) receives how many
 * went. Returns 0, -ENOTCONN or -EIO.
 */
int rs_outbox_trim(struct redis_store *rs, uint32_t event, const char *group, uint64_t *trimmed);

/*
 * Which of n reservation ids were released (SMISMEMBER on the released set): released[i] is
 * set to 1 or 0. Returns 0, -EINVAL (n 0 or > RS_BATCH_MAX), -ENOTCONN or -EIO.
 */
int rs_released_check(struct redis_store *rs, uint32_t event, const uint64_t *rids, unsigned n,
	uint8_t *released);

/*
 * Writes "O:<rid>:<order id>:<deadline ms>" to the event's result hash for the users of
 * res[0..n_res) whose result is not final (released X:, cancelled C:, paid P: stay), then
 * rs_outbox_ack() of the entries of e[0..n), in one round trip (one script: when the HSET fails
 * nothing is acknowledged). Either n may be 0.
 * Returns how many entries were pending (acknowledged now), -EINVAL (a count > RS_BATCH_MAX),
 * -ENOMEM, -ENOTCONN or -EIO.
 */
int rs_results_ordered_ack(struct redis_store *rs, uint32_t event, const char *group,
	const struct rs_order_result *res, unsigned n_res, const struct rs_outbox_rec *e,
	unsigned n);

/*
 * For reconciliation: which of users[0..n) (1..RS_BATCH_MAX) are not buyers of the event, i.e.
 * have no field in its result hash (missing[i] = 1). Returns 0, -EINVAL, -ENOTCONN or -EIO.
 */
int rs_buyers_missing(struct redis_store *rs, uint32_t event, const uint64_t *users, unsigned n,
	uint8_t *missing);

/*
 * Repairs an event from PostgreSQL's view: makes add_buyers[0..n) buyers again (their result
 * field, when missing, becomes "H": the order is in PostgreSQL), then sets the stock. Only for
 * a sale that is not running (the caller checks). Returns 0 or < 0.
 */
int rs_repair(struct redis_store *rs, uint32_t event, int64_t stock, const uint64_t *add_buyers,
	unsigned n);

#endif
