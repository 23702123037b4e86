/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_REPLY_H
#define FG_DP_PIPELINE_REPLY_H
/*
 * Turning a received frame into its answer in place: the same mbuf goes back
 * out with addresses swapped, so answering allocates nothing. The headers are
 * written by net/frame.h as every flashgate sender writes them.
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
 * no options (frame_ipv4_put()). The header checksum is left to the caller.
 */
static inline void
reply_ipv4(struct rte_ipv4_hdr *ip, const struct worker *w, uint16_t l4_len, uint8_t proto)
{
	frame_ipv4_put(ip, (uint16_t)(sizeof(*ip) + l4_len), w->ip_ttl, proto, ip->dst_addr,
		ip->src_addr);
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
