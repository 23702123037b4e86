/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_H
#define FG_DP_PIPELINE_H
/*
 * The per-burst pipeline: classify each received frame, turn it into its
 * answer in place, or drop it with a counted reason. Tests and benchmarks call
 * it directly with mbufs they build; the lcore loop (lcore_loop.c) calls it
 * with what the port received. Its per-job parts are the headers of
 * dataplane/pipeline/, which only pipeline.c includes.
 */
#include <stdint.h>

#include <rte_mbuf.h>

#include "dataplane/worker.h"

/*
 * Processes pkts[0..n) received on port (an index into w->ports). Each mbuf
 * either becomes an answer, stored in tx, or is freed. The answers are in
 * arrival order except that an HTTP request's comes after the next request's
 * frame and the frames between (requests are routed a frame late, in their
 * order: see tcp_input()); an answer longer than the client's MSS is several
 * frames in a row, its own and others from w->pool. Returns the number of
 * frames in tx, which must have room for n * PIPELINE_TX_PER_RX; the caller
 * sends them in order. n must not exceed WORKER_BURST_MAX.
 */
/* The most answer frames one received frame can become (an answer in several segments). */
#define PIPELINE_TX_PER_RX 4

uint16_t pipeline_burst(struct worker *w, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
	struct rte_mbuf **tx);

/*
 * The timers of w's kept connections (dataplane/pipeline/kept.h: answers sent again, idle
 * connections closed), at w->now_ms; call it about once a millisecond when w->conns is not
 * NULL. Frames to send go to tx[0..max), the index of the port each goes out on to port[];
 * returns how many (max should be at least PIPELINE_TX_PER_RX).
 */
uint16_t pipeline_kept_sweep(struct worker *w, struct rte_mbuf **tx, uint16_t *port, uint16_t max);

#endif
