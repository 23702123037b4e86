/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_TCP_DISPATCH_H
#define FG_DP_PIPELINE_TCP_DISPATCH_H
/*
 * Which way a TCP segment goes: a trusted edge's segment with an entry in the worker's table
 * of kept connections to kept.h; a first data segment from a trusted edge gets an entry, if
 * one is free (kept_open_slow()); everything else to the stateless path (tcp.h). Above both,
 * so that neither includes the other's caller: kept.h builds on tcp.h, tcp.h knows nothing of
 * kept connections.
 *
 * Private to the pipeline: only dataplane/pipeline.c includes it (tests and benchmarks aside).
 */
#include <rte_tcp.h>

#include "dataplane/pipeline/kept.h"
#include "dataplane/pipeline/tcp.h"
#include "dataplane/worker.h"
#include "net/net_cksum.h"

/*
 * Handles a TCP segment in a validated IPv4 packet of total length ip_len: returns 1 when m
 * became the answer to send, 0 when it is to be dropped, or, for a request that parsed,
 * TCP_PENDING with the request in *pend; m becomes its answer in tcp_answer_pending(pend).
 * ahead: the look-ahead's word on this segment (pipeline.c, kept_ahead()), read from these
 * same headers: its source is a trusted edge and its 4-tuple's index slot in w->conns is
 * ahead (conn_hash()'s answer); or CONN_NO_SLOT, which says nothing (no look-ahead, another
 * source): then both are found here.
 */
static __rte_always_inline int
tcp_input(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, uint16_t ip_len,
	struct tcp_pending *pend, uint32_t ahead)
{
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
	uint16_t l4_len = (uint16_t)(ip_len - sizeof(*ip));
	unsigned th_len;

	if (unlikely(l4_len < sizeof(*th)))
		return worker_drop(w, DP_DROP_TCP_HDR_LEN);
	th_len = (unsigned)(th->data_off >> 4) * 4;
	if (unlikely(th_len < sizeof(*th) || th_len > l4_len))
		return worker_drop(w, DP_DROP_TCP_HDR_LEN);
	/* A trusted edge's requests name their clients (req_client()): the client's bucket is
	 * req_parse()'s to prefetch, never the edge's. */
	bool from_edge = ahead != CONN_NO_SLOT || edge_trusted4(w->edge, ip->src_addr);

	/* Anyone else's request will look up its address's bucket (adm_check_ip()): with many
	 * clients that is a cache miss, which the checksum and the parse now hide. */
	if (l4_len > th_len && w->rl_ip != NULL && !from_edge)
		rl_prefetch(w->rl_ip, ip->src_addr);

	uint64_t l4f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;

	if (unlikely(l4f == RTE_MBUF_F_RX_L4_CKSUM_BAD))
		return worker_drop(w, DP_DROP_TCP_CKSUM);
	if (l4f != RTE_MBUF_F_RX_L4_CKSUM_GOOD && unlikely(!net_tcp4_cksum_ok(ip, th)))
		return worker_drop(w, DP_DROP_TCP_CKSUM);

	uint16_t payload_len = (uint16_t)(l4_len - th_len);
	bool trusted = false;

	/* A trusted edge's segment belongs to its kept connection, if it has one. */
	if (unlikely(w->conns != NULL) && from_edge) {
		uint32_t h = ahead;

		if (h == CONN_NO_SLOT)
			h = conn_hash(w->conns, ip->src_addr, th->src_port, th->dst_port);
		struct conn *c =
			conn_lookup_at(w->conns, h, ip->src_addr, th->src_port, th->dst_port);

		if (c != NULL)
			return kept_input(w, wp, m, eth, ip, th, th_len, payload_len, c, pend);
		trusted = true;
	}

	uint16_t seg = 0;
	int rc = tcp_stateless_segment(w, wp, m, eth, ip, th, th_len, payload_len, &seg);

	if (rc != TCP_DATA)
		return rc;
	/* A trusted edge's connection is kept from its first request on, if there is room. */
	if (unlikely(trusted)) {
		uint32_t seq = rte_be_to_cpu_32(th->sent_seq);
		uint32_t ack = rte_be_to_cpu_32(th->recv_ack);
		struct conn *c = kept_open_slow(w, wp, eth, ip, th, seq, ack, seg);

		if (c != NULL)
			return kept_input(w, wp, m, eth, ip, th, th_len, payload_len, c, pend);
	}
	return tcp_stateless_request(
		w, wp, m, eth, ip, th, th_len, payload_len, seg, from_edge, pend);
}

/*
 * Routes the request tcp_input() left in p and answers it, on its kept connection
 * (kept_answer()) or statelessly (tcp_stateless_answer()). The answer's frames go to tx[0..);
 * returns how many (0 to TCP_SEGS_MAX).
 */
static __rte_always_inline uint16_t
tcp_answer_pending(struct worker *w, struct tcp_pending *p, struct rte_mbuf **tx)
{
	if (unlikely(p->c != NULL))
		return kept_answer(w, p, tx);
	return tcp_stateless_answer(w, p, tx);
}

#endif
