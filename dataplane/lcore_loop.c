/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/lcore_loop.h"

#include <string.h>
#include <time.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_rcu_qsbr.h>

#include "dataplane/pipeline.h"
#include "dataplane/worker.h"

/*
 * Frames of one TX queue that it did not take: an answer cut short there would leave its
 * client waiting for segments nobody will send again (the TCP is stateless), and a request
 * answered is one whose work (a reservation handed to the bridge) is done. So nothing is
 * dropped: they are sent before anything new is received on that queue, and until then the
 * queue's receive waits (the NIC drops what does not fit its RX ring, before any work).
 */
struct tx_held {
	uint16_t n;
	struct rte_mbuf *m[WORKER_BURST_MAX * PIPELINE_TX_PER_RX];
};

/*
 * Sends m[0..n) on port/queue and counts what went; what the queue did not take is kept in h
 * (m is h->m, or h is empty), counted as held when it was not held already. Returns true
 * when all of it went.
 */
static inline bool
tx_send(struct worker *w, uint16_t port, uint16_t queue, struct rte_mbuf **m, uint16_t n,
	struct tx_held *h)
{
	uint64_t bytes = 0;

	/* Lengths are read before sending: a PMD may free what it sent at once. */
	for (uint16_t i = 0; i < n; i++)
		bytes += rte_pktmbuf_pkt_len(m[i]);
	uint16_t sent = rte_eth_tx_burst(port, queue, m, n);

	if (unlikely(sent < n)) {
		uint16_t rest = n - sent;

		/* Only an empty h takes new frames (lcore_loop_run() receives nothing while it
		 * holds any): they fit. */
		RTE_ASSERT(m == h->m || h->n == 0);

		for (uint16_t i = sent; i < n; i++)
			bytes -= rte_pktmbuf_pkt_len(m[i]);
		/* m may be h->m itself (a second try): the rest moves to its front, counted
		 * once, when it was first refused. */
		if (m == h->m) {
			memmove(h->m, m + sent, rest * sizeof(m[0]));
			h->n = rest;
		} else {
			memcpy(h->m, m + sent, rest * sizeof(m[0]));
			h->n = rest;
			w->ctr.tx_held += rest;
		}
	} else if (m == h->m) {
		h->n = 0;
	}
	w->ctr.tx_packets += sent;
	w->ctr.tx_bytes += bytes;
	return sent == n;
}

/* Out of line: a full TX queue is rare. True when h is empty again. */
static __rte_noinline bool
tx_held_flush(struct worker *w, uint16_t port, uint16_t queue, struct tx_held *h)
{
	return tx_send(w, port, queue, h->m, h->n, h);
}

/*
 * The kept connections' timers (pipeline_kept_sweep()), about once a millisecond: what they
 * send goes out on the queue of its port, unless that queue holds refused frames already (then
 * it is freed: the next sweep sends it again).
 */
static __rte_noinline void
kept_sweep_send(struct worker *w, uint64_t tsc, struct tx_held *held)
{
	struct rte_mbuf *tx[WORKER_BURST_MAX], *out[WORKER_BURST_MAX];
	uint16_t port[WORKER_BURST_MAX];

	worker_clock_update(w, tsc);

	uint16_t n = pipeline_kept_sweep(w, tx, port, WORKER_BURST_MAX);

	if (n == 0)
		return;
	for (unsigned q = 0; q < w->n_rxq; q++) {
		uint16_t k = 0;

		for (uint16_t i = 0; i < n; i++)
			if (tx[i] != NULL && port[i] == w->rxq[q].port) {
				out[k++] = tx[i];
				tx[i] = NULL;
			}
		if (k == 0)
			continue;
		if (held[q].n == 0) {
			tx_send(w, w->rxq[q].port, w->rxq[q].queue, out, k, &held[q]);
		} else {
			w->ctr.drops[DP_DROP_TX_FULL] += k;
			rte_pktmbuf_free_bulk(out, k);
		}
	}
	for (uint16_t i = 0; i < n; i++)
		if (tx[i] != NULL)
			rte_pktmbuf_free(tx[i]);
}

/* The time of clock id in nanoseconds (0 if the clock cannot be read). */
static uint64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The worker's own time (cpu_ns, wall_ns) since its loop started at (cpu0, wall0): once a
 * millisecond and at stop. The thread's CPU clock is a system call (a few hundred ns), too
 * dear per burst.
 */
static __rte_noinline void
own_time_update(struct worker *w, uint64_t cpu0, uint64_t wall0)
{
	w->ctr.cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	w->ctr.wall_ns = clock_ns(CLOCK_MONOTONIC) - wall0;
}

int
lcore_loop_run(void *arg)
{
	struct worker *w = arg;
	struct rte_mbuf *rx[WORKER_BURST_MAX];
	struct rte_mbuf *tx[WORKER_BURST_MAX * PIPELINE_TX_PER_RX];
	struct tx_held held[WORKER_MAX_RXQ];
	uint16_t burst = w->burst > WORKER_BURST_MAX ? WORKER_BURST_MAX : w->burst;
	uint64_t tick = rte_get_tsc_hz() / 1000, next_tick = 0;
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall0 = clock_ns(CLOCK_MONOTONIC);

	for (unsigned q = 0; q < WORKER_MAX_RXQ; q++)
		held[q].n = 0;

	/* RCU: the bridge frees an old shared state only after every worker passed a
	 * quiescent point, which is the end of each loop; no pointer from w->sh lives past it. */
	if (w->qsbr != NULL) {
		rte_rcu_qsbr_thread_register(w->qsbr, w->index);
		rte_rcu_qsbr_thread_online(w->qsbr, w->index);
	}
	while (!*w->stop) {
		uint64_t t_done = 0; /* when the last burst with packets was sent; 0: none yet */

		for (unsigned q = 0; q < w->n_rxq; q++) {
			uint16_t port = w->rxq[q].port, queue = w->rxq[q].queue;
			uint64_t t0 = rte_rdtsc();

			/* What the queue refused last time goes first; until it has, nothing
			 * new is received here. */
			if (unlikely(held[q].n != 0) && !tx_held_flush(w, port, queue, &held[q]))
				continue;

			uint16_t n = rte_eth_rx_burst(port, queue, rx, burst);

			if (n == 0)
				continue;
			w->ctr.rx_bursts++;
			worker_clock_update(w, t0);
			if (w->bridge != NULL)
				w->sh = shared_get(w->bridge->shared);
			uint16_t ntx = pipeline_burst(w, port, rx, n, tx);

			if (ntx != 0)
				tx_send(w, port, queue, tx, ntx, &held[q]);
			t_done = rte_rdtsc();
			w->ctr.busy_cycles += t_done - t0;
		}
		/* Once a millisecond: the kept connections' timers, and (not counted as busy)
		 * the worker's own time. */
		uint64_t now = t_done != 0 ? t_done : rte_rdtsc();
		bool tick_due = now >= next_tick;

		if (unlikely(tick_due)) {
			next_tick = now + tick;
			if (w->conns != NULL)
				kept_sweep_send(w, now, held);
		}
		w->sh = NULL;
		if (w->qsbr != NULL)
			rte_rcu_qsbr_quiescent(w->qsbr, w->index);
		/* The report belongs to the work: a loop that had packets counts it as busy (a
		 * fully loaded core pays it once per loop). */
		if (t_done != 0)
			w->ctr.busy_cycles += rte_rdtsc() - t_done;
		if (unlikely(tick_due))
			own_time_update(w, cpu0, wall0);
	}
	own_time_update(w, cpu0, wall0);
	/* Stopping: what a queue still holds is lost after all. */
	for (unsigned q = 0; q < w->n_rxq; q++) {
		w->ctr.drops[DP_DROP_TX_FULL] += held[q].n;
		rte_pktmbuf_free_bulk(held[q].m, held[q].n);
		held[q].n = 0;
	}
	if (w->qsbr != NULL) {
		rte_rcu_qsbr_thread_offline(w->qsbr, w->index);
		rte_rcu_qsbr_thread_unregister(w->qsbr, w->index);
	}
	return 0;
}
