/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/pipeline.h"

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_prefetch.h>

#include "dataplane/pipeline/arp.h"
#include "dataplane/pipeline/icmp.h"
#include "dataplane/pipeline/tcp_dispatch.h"
#include "net/net_cksum.h"

/* A source we must never answer: broadcast, multicast/reserved, "this network", loopback. */
static inline int
ipv4_bad_source(rte_be32_t src)
{
	uint32_t s = rte_be_to_cpu_32(src);

	return s >= 0xe0000000u || (s >> 24) == 0 || (s >> 24) == 127;
}

/*
 * Validates the IPv4 header (RFC 791, RFC 1122 §3.2.1) and hands the payload on, with ahead
 * (frame_input()'s). Inlined into pipeline_burst() with the TCP path below it (pipeline/tcp.h
 * says why they are forced).
 */
static __rte_always_inline int
ipv4_input(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct tcp_pending *pend, uint32_t ahead)
{
	uint16_t frame_len = rte_pktmbuf_data_len(m);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);

	if (unlikely(frame_len < sizeof(*eth) + sizeof(*ip)))
		return worker_drop(w, DP_DROP_IP_RUNT);
	if (unlikely((ip->version_ihl >> 4) != 4))
		return worker_drop(w, DP_DROP_IP_VERSION);
	if (unlikely(ip->version_ihl != RTE_IPV4_VHL_DEF))
		return worker_drop(
			w, (ip->version_ihl & 0xf) < 5 ? DP_DROP_IP_HDR_LEN : DP_DROP_IP_OPTIONS);

	uint16_t ip_len = rte_be_to_cpu_16(ip->total_length);

	if (unlikely(ip_len < sizeof(*ip) || ip_len > frame_len - sizeof(*eth)))
		return worker_drop(w, DP_DROP_IP_TOTAL_LEN);

	uint64_t ipf = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;

	if (unlikely(ipf == RTE_MBUF_F_RX_IP_CKSUM_BAD))
		return worker_drop(w, DP_DROP_IP_CKSUM);
	if (ipf != RTE_MBUF_F_RX_IP_CKSUM_GOOD && unlikely(!net_ipv4_cksum_ok(ip)))
		return worker_drop(w, DP_DROP_IP_CKSUM);
	if (unlikely(ip->time_to_live == 0))
		return worker_drop(w, DP_DROP_IP_TTL);
	/* Fragments would need reassembly state: a request must fit one unfragmented packet. */
	if (unlikely(ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)))
		return worker_drop(w, DP_DROP_IP_FRAGMENT);
	if (unlikely(ip->dst_addr != w->ipv4_addr))
		return worker_drop(w, DP_DROP_IP_NOT_FOR_US);
	if (unlikely(ipv4_bad_source(ip->src_addr)))
		return worker_drop(w, DP_DROP_IP_BAD_SOURCE);

	/* Ethernet pads short frames; what counts is the IP total length. */
	m->data_len = (uint16_t)(sizeof(*eth) + ip_len);
	m->pkt_len = m->data_len;

	if (likely(ip->next_proto_id == IPPROTO_TCP))
		return tcp_input(w, wp, m, eth, ip, ip_len, pend, ahead);
	if (ip->next_proto_id == IPPROTO_ICMP)
		return icmp_answer(w, wp, m, eth, ip, ip_len);
	return worker_drop(w, DP_DROP_IP_PROTO);
}

/*
 * One frame: 1 answered in place, 0 dropped, TCP_PENDING a request parsed into *pend. ahead:
 * kept_ahead()'s answer for m, or CONN_NO_SLOT (also when there was no look-ahead).
 */
static __rte_always_inline int
frame_input(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct tcp_pending *pend, uint32_t ahead)
{
	struct rte_ether_hdr *eth;

	if (unlikely(m->nb_segs != 1))
		return worker_drop(w, DP_DROP_MULTI_SEGMENT);
	if (unlikely(rte_pktmbuf_data_len(m) < sizeof(*eth)))
		return worker_drop(w, DP_DROP_ETH_RUNT);
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	if (likely(eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4))) {
		if (unlikely(!rte_is_same_ether_addr(&eth->dst_addr, &wp->mac)))
			return worker_drop(w, DP_DROP_ETH_NOT_FOR_US);
		return ipv4_input(w, wp, m, eth, pend, ahead);
	}
	if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_ARP)) {
		if (!rte_is_same_ether_addr(&eth->dst_addr, &wp->mac) &&
			!rte_is_broadcast_ether_addr(&eth->dst_addr))
			return worker_drop(w, DP_DROP_ETH_NOT_FOR_US);
		return arp_answer(w, wp, m, eth);
	}
	if (!rte_is_same_ether_addr(&eth->dst_addr, &wp->mac))
		return worker_drop(w, DP_DROP_ETH_NOT_FOR_US);
	return worker_drop(w, DP_DROP_ETH_UNSUPPORTED);
}

/*
 * The look-ahead for a trusted edge's kept connection, whose entry tcp_input() finds through
 * two dependent loads (conn_lookup_at(): the index slot, then the entry), each a cache miss
 * once there are many connections: frame m's index slot prefetched from its headers, or
 * CONN_NO_SLOT when it is no TCP segment from a trusted edge. The headers are checked only as
 * far as reading them needs: frame_input() decides what the frame is. The slot goes down to
 * tcp_input(), which takes the source as a trusted edge's and searches from it, as the checks
 * here read the same bytes at the same places as ipv4_input()'s and its own (an IPv4 header
 * without options, the TCP header after it); any other frame gets CONN_NO_SLOT, and
 * tcp_input() decides alone. The edges trusted are fixed at start, and the slot depends on
 * the 4-tuple alone: a frame before it that frees or makes an entry changes neither.
 */
static __rte_always_inline uint32_t
kept_ahead(const struct worker *w, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
	const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(ip + 1);

	if (rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*ip) + sizeof(*th) ||
		eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
		ip->version_ihl != RTE_IPV4_VHL_DEF || ip->next_proto_id != IPPROTO_TCP ||
		!edge_trusted4(w->edge, ip->src_addr))
		return CONN_NO_SLOT;
	return conn_prefetch_slot(w->conns, ip->src_addr, th->src_port, th->dst_port);
}

uint16_t
pipeline_burst(struct worker *w, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
	struct rte_mbuf **tx)
{
	const struct worker_port *wp = &w->ports[port];
	struct rte_mbuf *dropped[WORKER_BURST_MAX];
	/* Requests are routed one frame late: a request parsed into one slot is routed once the
	 * next request has been parsed into the other (or at the end of the burst), so that the
	 * user bucket its parse prefetched arrives meanwhile. Routing keeps the frames' order. */
	struct tcp_pending slot[2], *held = NULL;
	unsigned next = 0;
	uint16_t ntx = 0, ndrop = 0;
	/* Kept connections (a trusted edge): frame i + 2's index slot is prefetched as frame i
	 * goes in (kept_ahead(): its headers came four frames ahead), and frame i + 1's entry;
	 * frame i's slot goes down with it (here), so that tcp_input() does not find it again. */
	uint32_t ahead[WORKER_BURST_MAX];
	const bool kept = w->conns != NULL;

	RTE_ASSERT(n <= WORKER_BURST_MAX);
	for (uint16_t i = 0; i < n && i < 4; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	if (kept)
		for (uint16_t i = 0; i < n && i < 2; i++)
			ahead[i] = kept_ahead(w, pkts[i]);
	w->ctr.rx_packets += n;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t here = CONN_NO_SLOT;

		if (i + 4 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void *));
		if (kept) {
			here = ahead[i];
			if (i + 2 < n)
				ahead[i + 2] = kept_ahead(w, pkts[i + 2]);
			if (i + 1 < n && ahead[i + 1] != CONN_NO_SLOT)
				conn_prefetch_entry(w->conns, ahead[i + 1]);
		}
		w->ctr.rx_bytes += rte_pktmbuf_pkt_len(m);

		int rc = frame_input(w, wp, m, &slot[next], here);

		if (rc == TCP_PENDING) {
			if (held != NULL)
				ntx += tcp_answer_pending(w, held, tx + ntx);
			held = &slot[next];
			next ^= 1;
		} else if (rc) {
			tx[ntx++] = m;
		} else {
			dropped[ndrop++] = m;
		}
	}
	if (held != NULL)
		ntx += tcp_answer_pending(w, held, tx + ntx);
	/* The burst's reservations to the bridge's ring, before their 202s are sent. */
	if (w->bridge != NULL)
		bridge_flush(w->bridge);
	if (ndrop)
		rte_pktmbuf_free_bulk(dropped, ndrop);
	return ntx;
}

uint16_t
pipeline_kept_sweep(struct worker *w, struct rte_mbuf **tx, uint16_t *port, uint16_t max)
{
	return kept_sweep(w, tx, port, max);
}
