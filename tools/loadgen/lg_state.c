/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loadgen's shared state (lg_state.h): the TX buffer, counting, a user's think time, the
 * solver's line; what every part of the client does to it.
 */
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "tools/loadgen/lg_sched.h"
#include "tools/loadgen/lg_state.h"

void
lg_state_count_malformed(struct lg_client *cl, const struct lg_conn *c, bool http)
{
	struct lg_flood_stats *fs = lg_state_flood_stats(cl, c);

	if (unlikely(fs != NULL)) {
		fs->malformed++;
		return;
	}
	if (http)
		cl->st.malformed_http++;
	else
		cl->st.malformed_tcp++;
	cl->st.conns_malformed++;
}

void
lg_state_emit(struct lg_client *cl, struct rte_mbuf *m, uint64_t now)
{
	if (cl->capturing)
		lg_pcap_write(&cl->pcap, rte_pktmbuf_mtod(m, void *), rte_pktmbuf_data_len(m), now);
	cl->st.tx_pkts++;
	cl->st.tx_bytes += rte_pktmbuf_data_len(m);
	cl->tx[cl->n_tx++] = m;
	if (cl->n_tx == LG_BURST)
		lg_state_flush(cl);
}

void
lg_state_flush(struct lg_client *cl)
{
	uint16_t sent = 0;

	/* A full TX ring drains in microseconds; a bounded number of tries, then drop: the
	 * retransmission timers recover what was dropped, as on a real link. A blast has no
	 * timers, so what it drops is a connection lost: it waits for the data plane to take its
	 * frames, taking its answers meanwhile, until neither moved for 100 ms (a worker whose
	 * core is taken by something else for a while). */
	uint64_t wait = lg_mode_blast(cl->o->mode) ? cl->hz / 10 : 0;
	uint64_t until = wait != 0 ? rte_get_tsc_cycles() + wait : 0;

	for (int tries = 0; sent < cl->n_tx && (tries < 64 || rte_get_tsc_cycles() < until);
		tries++) {
		uint16_t k = rte_eth_tx_burst(
			cl->port_id, cl->queue_id, cl->tx + sent, (uint16_t)(cl->n_tx - sent));

		sent += k;
		if (wait != 0 && sent < cl->n_tx && (cl->take_answers(cl) != 0 || k != 0))
			until = rte_get_tsc_cycles() + wait;
	}
	if (sent < cl->n_tx) {
		cl->st.tx_dropped += cl->n_tx - sent;
		cl->st.tx_pkts -= cl->n_tx - sent;
		rte_pktmbuf_free_bulk(cl->tx + sent, (unsigned)(cl->n_tx - sent));
	}
	cl->n_tx = 0;
}

void
lg_state_send_seg(struct lg_client *cl, const struct lg_seg *s, uint64_t now)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(cl->pool);

	if (unlikely(m == NULL || lg_pkt_tcp(m, &cl->link, s) != 0)) {
		rte_pktmbuf_free(m);
		cl->st.tx_dropped++;
		return;
	}
	lg_state_emit(cl, m, now);
}

uint64_t
lg_state_think_cycles(const struct lg_client *cl, const struct lg_conn *c)
{
	const struct lg_opts *o = cl->o;
	double ms = lg_sched_think_ms(c->user, o->seed, o->think_ms, c->bot, o->bot_speed);

	return (uint64_t)(ms * (double)cl->hz / 1000.0);
}

bool
lg_state_solve_enqueue(struct lg_client *cl, struct lg_conn *c)
{
	uint32_t i;

	if (cl->solve_n == cl->solve_cap)
		return false;
	i = cl->solve_head + cl->solve_n;
	if (i >= cl->solve_cap)
		i -= cl->solve_cap;
	cl->solve_q[i] =
		(struct lg_solve_wait){.slot = (uint32_t)(c - cl->tab->c), .user = c->user};
	cl->solve_n++;
	return true;
}

bool
lg_state_honest_done(const struct lg_client *cl)
{
	return cl->launched >= cl->o->count && (cl->tab == NULL || cl->tab->active == 0);
}
