/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_DRAW_H
#define FG_STORE_STORE_DRAW_H
/*
 * An event's draw in Redis (docs/fairness.md; the keys fg:{EV}:entrants and fg:{EV}:draw in
 * store/store_keys.h): entering users (lua/enter.lua), freezing the entrants
 * (lua/draw_freeze.lua), reading them back, and the draw's cursor. The draw's batches
 * themselves are reserve.lua's (store/store_reserve.h, struct store_batch .draw).
 */
#include <stdbool.h>
#include <stdint.h>

#include "common/wire.h"
#include "store/store_conn.h"

/* The draw key's state. */
enum store_draw_state {
	RS_DRAW_OPEN = 0,   /* entrants are taken (also: no key) */
	RS_DRAW_FROZEN = 1, /* entrants fixed (n); being decided from "next" */
	RS_DRAW_DONE = 2,   /* every entrant decided */
};

struct store_draw {
	enum store_draw_state state;
	bool exists;	    /* the draw key exists */
	uint64_t n;	    /* entrants fixed at the freeze (0 while open) */
	uint64_t next;	    /* the index (rank - 1) of the first entrant not decided yet */
	bool has_digest;    /* digest was set (store_draw_set_digest()) */
	uint8_t digest[32]; /* the entrants' digest (common/draw.h) */
	uint64_t served;    /* the highest rank holding an item (0: none yet) */
};

/* One entrant as the entrants hash holds it. */
struct store_entrant {
	uint64_t user;
	uint64_t reservation_id;
};

/*
 * Makes the n users of res (one event's reservations, 1..RS_BATCH_MAX) entrants of its draw
 * with one enter.lua: verdicts[i] = WIRE_V_QUEUED (a new entrant, or one already: nothing
 * changed), or every verdict WIRE_V_RETRY (the entrants are frozen: the draw began; or Redis
 * could not be asked), WIRE_V_CLOSED / WIRE_V_NOT_STARTED (the window key says closed /
 * held; nothing written). *added counts the new entrants, *entrants the event's entrants
 * after the batch (both 0 when not decided). Returns 0, -EINVAL (a malformed batch),
 * -ENOTCONN, -EIO or -ETIMEDOUT (the configured replicas did not acknowledge it in time;
 * verdicts all RETRY then).
 */
int store_enter(struct store *rs, uint32_t event, const struct wire_reserve *res, unsigned n,
	uint8_t *verdicts, unsigned *added, uint64_t *entrants);

/*
 * Freezes event's entrants (draw_freeze.lua: open or missing -> frozen with n = the entrants
 * and next 0, or done at once without entrants) and reads the draw key into out; a frozen or
 * done draw is only read. Returns 0, -EINVAL, -ENOTCONN or -EIO (a draw key this build cannot
 * read).
 */
int store_draw_freeze(struct store *rs, uint32_t event, struct store_draw *out);

/* Reads event's draw key into out without changing it. Returns 0, -EINVAL, -ENOTCONN or -EIO. */
int store_draw_get(struct store *rs, uint32_t event, struct store_draw *out);

/*
 * Records the entrants' digest in the draw key once (HSETNX). Returns 0 when it holds this
 * digest now, -EEXIST when it holds another one (the entrants changed under the draw: stop),
 * -EINVAL, -ENOTCONN or -EIO.
 */
int store_draw_set_digest(struct store *rs, uint32_t event, const uint8_t digest[32]);

/*
 * One HSCAN step over event's entrants from *cursor (0 to begin; 0 again when the scan is
 * over), asking for about count of them: appends what it returns to *v (n used, cap
 * allocated; grown with realloc). HSCAN may return an entrant twice: callers sort and drop
 * the repeats. Returns 0, -EINVAL, -ENOMEM, -ENOTCONN or -EIO.
 */
int store_entrants_scan(struct store *rs, uint32_t event, uint64_t *cursor, unsigned count,
	struct store_entrant **v, size_t *n, size_t *cap);

/* The slice of the entrants' log one GETRANGE reads (bytes). */
#define RS_ENTLOG_SLICE (1u << 20)

/*
 * Reads event's entrants' log (fg:{ev}:entlog, store/store_keys.h: a record per entrant, in the
 * order they entered) into *v after its *n entries, growing it as store_entrants_scan() does,
 * in GETRANGE slices of RS_ENTLOG_SLICE bytes until a shorter one. An absent log reads as no
 * entrant. Returns 0, -EINVAL (event 0), -ENOMEM, -ENOTCONN, or -EIO (a record this build
 * cannot read, or a log that ends inside a record: logged). Whether it holds every entrant is
 * the caller's to check (their count at the freeze).
 */
int store_entrants_log_read(
	struct store *rs, uint32_t event, struct store_entrant **v, size_t *n, size_t *cap);

/*
 * Deletes event's entrants' log (UNLINK): a draw that is done reads it no more, and a sale of
 * 10^6 entrants holds 26 MB in it. Nothing appends to it after the freeze (enter.lua refuses).
 * Returns 0 (also when there was none), -EINVAL (event 0), -ENOTCONN or -EIO.
 */
int store_entrants_log_drop(struct store *rs, uint32_t event);

/* The number of event's entrants now (HLEN). Returns 0, -EINVAL, -ENOTCONN or -EIO. */
int store_entrants_count(struct store *rs, uint32_t event, uint64_t *n);

/*
 * Looks up n (event, user) pairs in their events' entrants hashes (pipelined HGETs):
 * rids[i] is the reservation that made the user an entrant, 0 when the user is not one.
 * Returns 0, -ENOTCONN, -EIO or -ETIMEDOUT (as store_results()).
 */
int store_entrants_get(
	struct store *rs, const struct wire_result_query *q, unsigned n, uint64_t *rids);

/*
 * As store_entrants_get(), and in the same pipeline ranks[i], the rank the draw gave the user
 * when a draw batch put it on the waiting list (the event's wrank hash, written by reserve.lua),
 * 0 when none did. Returns 0, -ENOTCONN, -EIO or -ETIMEDOUT (as store_results()).
 */
int store_entrants_ranks(struct store *rs, const struct wire_result_query *q, unsigned n,
	uint64_t *rids, uint64_t *ranks);

/*
 * The waiting list of event's draw (store/store_keys.h): *served, the highest rank holding an
 * item (the draw key's "served", 0 when missing), *waiting, the entrants on the list, and
 * *final, whether no item can come back to it any more: the stock is 0 and every item held is
 * paid (the draw key's "paid" counts the buyers paid, store_results_paid()). Read at one
 * moment (one script). Returns 0, -EINVAL (event 0), -ENOTCONN or -EIO (then *final false).
 */
int store_draw_waiting(
	struct store *rs, uint32_t event, uint64_t *served, uint64_t *waiting, bool *final);

#endif
