/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_REPLY_H
#define FG_DP_PIPELINE_REPLY_H
/*
 * Turning a received frame into its answer in place: the same mbuf goes back
 * out with addresses swapped, so answering allocates nothing. The Ethernet and
 * TCP headers are written by net/frame.h, as every flashgate sender writes them.
 *
 * Private to the pipeline: only dataplane/pipeline.c includes it, directly or through
 * another header of dataplane/pipeline/ (tests and benchmarks aside).
 */
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "dataplane/worker.h"
#include "net/frame.h"

/* Addresses the frame back to its sender from our port's MAC. */
static inline void
reply_eth(struct rte_ether_hdr *eth, const struct worker_port *wp)
{
	frame_eth_put(eth, &eth->src_addr, &wp->mac);
}

/*
 * Rewrites the IPv4 header of a received packet into the header of our answer
 * carrying l4_len bytes of protocol proto: addresses swapped, our TTL, DF set,
 * no options, the fields the load generator writes (tools/loadgen/lg_pkt.h). Kept
 * here, in place, rather than in net/frame.h: through a shared writer the HTTP
 * answers cost 4-5 more instructions each (callgrind). The header checksum is
 * left to the caller.
 */
static inline void
reply_ipv4(struct rte_ipv4_hdr *ip, const struct worker *w, uint16_t l4_len, uint8_t proto)
{
	rte_be32_t src = ip->src_addr;

	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + l4_len));
	ip->packet_id = 0;
	ip->fragment_offset = RTE_BE16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = w->ip_ttl;
	ip->hdr_checksum = 0;
	ip->src_addr = ip->dst_addr;
	ip->dst_addr = src;
	ip->next_proto_id = proto;
}

/* Sets the mbuf's length to a frame of l2 + l3 + l4 bytes. */
static inline void
reply_set_len(struct rte_mbuf *m, uint32_t frame_len)
{
	m->data_len = (uint16_t)frame_len;
	m->pkt_len = frame_len;
	m->ol_flags = 0;
}

#endif
