/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_WAIT_H
#define FG_STORE_WAIT_H
/*
 * Redis WAIT after a batch: with [redis] wait_replicas above 0, a batch's verdicts (and the reads
 * that answer buyers) are answered only once that many replicas hold them (docs/ha.md). Used by
 * the store's batch pipelines (store_reserve, store_draw, store_event, store_result,
 * store_outbox); a batch that does not reach them within wait_timeout is answered retry.
 */
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

#endif
