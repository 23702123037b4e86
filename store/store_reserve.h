/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_RESERVE_H
#define FG_STORE_STORE_RESERVE_H
/*
 * Deciding batches of reservations with lua/reserve.lua (the control plane's decider): each
 * reserved user gets a field in the event's result hash and a place in an outbox entry, the
 * stock goes down (store/store_keys.h).
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

#include "common/wire.h"
#include "store/store_conn.h"

/* One event's reservations, decided by one EVALSHA. */
struct store_batch {
	uint32_t event;			/* in: 1..UINT32_MAX */
	unsigned n;			/* in: 1..RS_BATCH_MAX */
	const struct wire_reserve *res; /* in: n reservations, each with .event == event */
	uint64_t now_ms;    /* in: the control plane's clock for the sale window; 0: read it here */
	/* in: a draw batch (controlplane/draw_runner.h): res are the entrants of ranks
	 * draw_index + 1 .. draw_index + n, decided only if the draw key's "next" is draw_index
	 * (store/store_keys.h). false: a first-come batch, refused (all RETRY, nothing written)
	 * while the event's draw is under way. */
	bool draw;
	uint64_t draw_index;
	uint8_t *verdicts;  /* out: n of WIRE_V_RESERVED, _DUPLICATE, _SOLD_OUT, or all _RETRY,
			     * or all _CLOSED / _NOT_STARTED (outside the window: nothing written) */
	int64_t stock_left; /* out: the event's stock after the batch (0 if it had none) */
	int status;	    /* out: 0 decided, or the negative errno for this batch */
};

/*
 * Decides n batches with one EVALSHA of reserve.lua each, all pipelined: every command is
 * sent, then every reply read. Fills each batch's verdicts, stock_left and status. A batch
 * that was not decided (status != 0) has all its verdicts set to WIRE_V_RETRY: -ENOTCONN when
 * the connection is down or was lost before its reply was read (it may have run: see the top
 * of this file), -EIO when Redis answered an error (logged, rate-limited), -EINVAL when the
 * batch itself is malformed (n out of range, an event 0, a reservation of another event),
 * -ESTALE for a draw batch that was not this batch's turn (the draw's "next" is elsewhere or
 * the draw is not frozen: nothing written; read the draw again), -ETIMEDOUT when the store
 * waits for replicas (struct store_conn_config .wait_replicas) and they did not acknowledge
 * the batch in time (it was decided on the primary: a retry of the same users finds it, as
 * after -ENOTCONN; docs/ha.md). With wait_replicas, one WAIT follows the pipeline's EVALSHAs,
 * so that no verdict is returned before the replicas hold its batch.
 * Replies read before a connection loss stay valid. A NOSCRIPT answer (the script cache was
 * flushed) makes the store load the scripts again and resend those batches once.
 * Returns 0 when every batch was decided, else the first batch's error.
 */
int store_reserve(struct store *rs, struct store_batch *batches, unsigned n);

/*
 * store_reserve() with the WAIT pipelined (store/store_wait.h): when the store has
 * wait_replicas, no WAIT blocks the connection; right after the batches, before returning,
 * one PUBLISH + WAIT goes to the waiter (a second connection to the server they ran on) and
 * *wait_sent says so. A batch with status 0 was then decided on the primary, and its verdicts
 * must not be answered before store_wait_next() returned 0 for this call's WAIT; any other
 * answer means retry, the whole batch (as -ETIMEDOUT here). A decided batch whose WAIT could
 * not be sent gets -ENOTCONN (verdicts RETRY). Without wait_replicas it is store_reserve()
 * (*wait_sent false). Otherwise the same arguments and returns as store_reserve().
 */
int store_reserve_pipelined(
	struct store *rs, struct store_batch *batches, unsigned n, bool *wait_sent);

#endif
