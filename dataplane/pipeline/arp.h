/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_ARP_H
#define FG_DP_PIPELINE_ARP_H
/*
 * Answers ARP requests for our IPv4 address (RFC 826); ignores everything else ARP.
 *
 * Private to the pipeline: only dataplane/pipeline.c includes it, directly or through
 * another header of dataplane/pipeline/ (tests and benchmarks aside).
 */
#include <rte_arp.h>

#include "dataplane/pipeline/reply.h"

/* Returns 1 when m became an ARP reply to send, 0 when it is to be dropped (counted). */
static inline int
arp_answer(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth)
{
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);

	if (unlikely(rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*arp)))
		return worker_drop(w, DP_DROP_ARP_MALFORMED);
	/* RFC 826: Ethernet hardware (1), IPv4 protocol, 6- and 4-byte addresses. */
	if (unlikely(arp->arp_hardware != RTE_BE16(RTE_ARP_HRD_ETHER) ||
		     arp->arp_protocol != RTE_BE16(RTE_ETHER_TYPE_IPV4) || arp->arp_hlen != 6 ||
		     arp->arp_plen != 4))
		return worker_drop(w, DP_DROP_ARP_MALFORMED);
	if (arp->arp_opcode != RTE_BE16(RTE_ARP_OP_REQUEST) ||
		arp->arp_data.arp_tip != w->ipv4_addr)
		return worker_drop(w, DP_DROP_ARP_IGNORED);
	arp->arp_opcode = RTE_BE16(RTE_ARP_OP_REPLY);
	rte_ether_addr_copy(&arp->arp_data.arp_sha, &arp->arp_data.arp_tha);
	arp->arp_data.arp_tip = arp->arp_data.arp_sip;
	rte_ether_addr_copy(&wp->mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = w->ipv4_addr;
	/* Reply to the asker, not to the broadcast address the request went to. */
	rte_ether_addr_copy(&arp->arp_data.arp_tha, &eth->dst_addr);
	rte_ether_addr_copy(&wp->mac, &eth->src_addr);
	reply_set_len(m, sizeof(*eth) + sizeof(*arp));
	w->ctr.answers[DP_ANS_ARP_REPLY]++;
	return 1;
}

#endif
