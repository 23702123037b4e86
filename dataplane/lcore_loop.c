/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/lcore_loop.h"

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_rcu_qsbr.h>

#include "dataplane/pipeline.h"
#include "dataplane/worker.h"

int
lcore_loop_run(void *arg)
{
	struct worker *w = arg;
	struct rte_mbuf *rx[WORKER_BURST_MAX];
	struct rte_mbuf *tx[WORKER_BURST_MAX * PIPELINE_TX_PER_RX];
	uint16_t burst = w->burst > WORKER_BURST_MAX ? WORKER_BURST_MAX : w->burst;

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
			uint16_t n = rte_eth_rx_burst(port, queue, rx, burst);

			if (n == 0)
				continue;
			w->ctr.rx_bursts++;
			worker_clock_update(w, t0);
			if (w->bridge != NULL)
				w->sh = shared_get(w->bridge->shared);
			uint16_t ntx = pipeline_burst(w, port, rx, n, tx);
			uint64_t bytes = 0;

			if (ntx == 0) {
				t_done = rte_rdtsc();
				w->ctr.busy_cycles += t_done - t0;
				continue;
			}
			/* Lengths are read before sending: a PMD may free what it sent at once. */
			for (uint16_t i = 0; i < ntx; i++)
				bytes += rte_pktmbuf_pkt_len(tx[i]);
			uint16_t sent = rte_eth_tx_burst(port, queue, tx, ntx);

			if (unlikely(sent < ntx)) {
				for (uint16_t i = sent; i < ntx; i++)
					bytes -= rte_pktmbuf_pkt_len(tx[i]);
				w->ctr.drops[DP_DROP_TX_FULL] += ntx - sent;
				rte_pktmbuf_free_bulk(tx + sent, ntx - sent);
			}
			w->ctr.tx_packets += sent;
			w->ctr.tx_bytes += bytes;
			t_done = rte_rdtsc();
			w->ctr.busy_cycles += t_done - t0;
		}
		w->sh = NULL;
		if (w->qsbr != NULL)
			rte_rcu_qsbr_quiescent(w->qsbr, w->index);
		/* The report belongs to the work: a loop that had packets counts it as busy (a
		 * fully loaded core pays it once per loop). */
		if (t_done != 0)
			w->ctr.busy_cycles += rte_rdtsc() - t_done;
	}
	if (w->qsbr != NULL) {
		rte_rcu_qsbr_thread_offline(w->qsbr, w->index);
		rte_rcu_qsbr_thread_unregister(w->qsbr, w->index);
	}
	return 0;
}
