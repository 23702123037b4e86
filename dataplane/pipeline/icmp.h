/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_ICMP_H
#define FG_DP_PIPELINE_ICMP_H
/*
 * Answers ICMP echo requests (RFC 792); every other ICMP message is dropped.
 *
 * Private to the pipeline: only dataplane/pipeline.c includes it, directly or through
 * another header of dataplane/pipeline/ (tests and benchmarks aside).
 */
#include <rte_icmp.h>

#include "dataplane/pipeline/reply.h"
#include "net/net_cksum.h"

/*
 * ip is a validated IPv4 header of total length ip_len addressed to us.
 * Returns 1 when m became the echo reply, 0 when it is to be dropped (counted).
 */
static inline int
icmp_answer(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, uint16_t ip_len)
{
	struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(ip + 1);
	uint16_t icmp_len = (uint16_t)(ip_len - sizeof(*ip));

	if (unlikely(icmp_len < sizeof(*icmp)))
		return worker_drop(w, DP_DROP_ICMP_MALFORMED);
	/* RFC 792: the checksum covers the whole ICMP message. */
	if (unlikely(!net_icmp_cksum_ok(icmp, icmp_len)))
		return worker_drop(w, DP_DROP_ICMP_CKSUM);
	if (icmp->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || icmp->icmp_code != 0)
		return worker_drop(w, DP_DROP_ICMP_UNSUPPORTED);
	icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	icmp->icmp_cksum = 0;
	icmp->icmp_cksum = net_icmp_cksum(icmp, icmp_len);
	reply_ipv4(ip, w, icmp_len, IPPROTO_ICMP);
	net_ipv4_cksum_set(ip);
	reply_eth(eth, wp);
	reply_set_len(m, sizeof(*eth) + ip_len);
	w->ctr.answers[DP_ANS_ICMP_ECHO_REPLY]++;
	return 1;
}

#endif
