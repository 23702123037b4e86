/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_WAIT_H
#define FG_STORE_WAIT_H
/*
 * Redis WAIT after a batch: with [redis] wait_replicas above 0, a batch's verdicts (and the reads
 * that answer buyers) are answered only once that many replicas hold them (docs/ha.md). Used by
 * the store's batch pipelines (store_reserve, store_draw, store_event, store_result,
 * store_outbox); a batch that does not reach them within wait_timeout is answered retry.
 */
#include <stdbool.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

struct store;

/*
 * Appends (does not send) "WAIT wait_replicas wait_timeout" to the store's pipeline. Returns
 * 0, or -ENOMEM (the connection is then dropped, so no reply misaligns).
 */
int store_append_wait(struct store *rs);

/*
 * Takes the reply of the WAIT appended by store_append_wait() (NULL: the connection was lost).
 * Returns 0 when the configured number of replicas acknowledged every write sent before it,
 * else -ETIMEDOUT (counted, and logged rate-limited) or -ENOTCONN.
 */
int store_wait_take(struct store *rs, redisReply *r);

/*
 * WAIT for the configured replicas now (after a write run with store_command()): 0 when none
 * is configured or they acknowledged, else -ETIMEDOUT or -ENOTCONN.
 */
int store_wait_replicas(struct store *rs);

/*
 * After reads (result queries): with wait_replicas, makes sure that what they returned is on
 * the replicas, so that an old primary cut off from its replicas never reports a reservation
 * that the failover then loses. WAIT counts the client's own writes only, so a PUBLISH (no
 * key, but replicated) first puts the connection's offset after everything it read. Returns
 * 0 (also without wait_replicas), -ETIMEDOUT or -ENOTCONN.
 */
int store_wait_reads(struct store *rs);

/*
 * For work of several commands that may each reconnect (store_ensure_connected()): a mark of the
 * connection now, then store_wait_reads_since() after the work, which is store_wait_reads() when
 * the connection is still the one marked and -ENOTCONN when the store reconnected since (a WAIT
 * there would not cover what ran before, perhaps on another primary). 0 without wait_replicas.
 */
uint64_t store_wait_mark(const struct store *rs);
int store_wait_reads_since(struct store *rs, uint64_t mark);

/*
 * Pipelined WAITs (the decider's rounds with wait_replicas, docs/ha.md): Redis blocks a client
 * in WAIT and runs none of its later commands meanwhile, so a WAIT after a batch on the store's
 * connection would hold the next batch back. Instead a batch is decided without WAIT
 * (store_reserve_pipelined()), then store_wait_send() asks on a second connection to the same
 * server (the waiter) "PUBLISH, then WAIT": the PUBLISH puts the waiter's replication offset
 * after the batch's writes, so the WAIT answers once the replicas hold the batch, while the
 * store's connection decides the next one. store_wait_next() takes the answers in the order
 * of the sends. One WAIT is in flight at a time (Redis would run a second only once the first
 * answered): the batches sent meanwhile share the next one, sent when it answered. The waiter is
 * tied to the connection the batch ran on: when the store has reconnected since (perhaps to another
 * primary) a send fails, never asks another server.
 */

/* The replicas a batch must reach ([redis] wait_replicas; 0: no WAIT at all). */
unsigned store_wait_wanted(const struct store *rs);

/*
 * Sends PUBLISH + WAIT on the waiter for what the store's current connection (the one the
 * batches just decided ran on, even if it was lost since) has written, opening the waiter
 * first when needed. Returns 0 (store_wait_next() then owes its answer), -EINVAL without
 * wait_replicas, or -ENOTCONN when the waiter cannot reach that server (the batches' verdicts
 * are then answered retry: nothing says the replicas hold them).
 */
int store_wait_send(struct store *rs);

/*
 * The answer to the oldest WAIT sent by store_wait_send() and not taken yet: 0 the replicas
 * hold everything written before it, -ETIMEDOUT they did not within wait_timeout, -ENOTCONN
 * the waiter was lost (or its PUBLISH refused), 1 not answered yet (only when !block), -EINVAL
 * none is owed. With block, waits for it (at most wait_timeout plus the command timeout).
 */
int store_wait_next(struct store *rs, bool block);

/* WAITs sent by store_wait_send() whose answer store_wait_next() has not returned. */
unsigned store_wait_owed(const struct store *rs);

/* The waiter's socket (for a loop's poll: readable when an answer came), or -1. */
int store_wait_fd(const struct store *rs);

#endif
