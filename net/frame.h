/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_NET_FRAME_H
#define FG_NET_FRAME_H
/*
 * Writing and reading the headers of an Ethernet/IPv4/TCP frame, the same way wherever one is
 * built: the data plane's answers (written over the request, dataplane/pipeline/reply.h) and
 * the load generator's segments (written into a fresh mbuf, tools/loadgen/lg_pkt.h). Per
 * packet: static inline, no checksum here (the callers sum what they wrote, net_cksum.h).
 * Values in network order unless a parameter says otherwise.
 */
#include <stdint.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>

/* TCP option kinds (RFC 9293 §3.1). */
#define FRAME_TCP_OPT_EOL 0
#define FRAME_TCP_OPT_NOP 1
#define FRAME_TCP_OPT_MSS 2

/* Addresses the frame from src to dst; the EtherType is the caller's. */
static inline void
frame_eth_put(struct rte_ether_hdr *eth, const struct rte_ether_addr *dst,
	const struct rte_ether_addr *src)
{
	rte_ether_addr_copy(dst, &eth->dst_addr);
	rte_ether_addr_copy(src, &eth->src_addr);
}

/*
 * Writes the IPv4 header of a packet of tot_len bytes carrying protocol proto, the way every
 * flashgate sender does: no options, TOS 0, id 0, DF set, checksum 0 (the caller fills it).
 */
static inline void
frame_ipv4_put(struct rte_ipv4_hdr *ip, uint16_t tot_len, uint8_t ttl, uint8_t proto,
	rte_be32_t src, rte_be32_t dst)
{
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16(tot_len);
	ip->packet_id = 0;
	ip->fragment_offset = RTE_BE16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = ttl;
	ip->next_proto_id = proto;
	ip->hdr_checksum = 0;
	ip->src_addr = src;
	ip->dst_addr = dst;
}

/*
 * Writes a TCP header: data offset byte off (header length in words << 4), urgent pointer
 * and checksum 0 (the caller fills it, net_tcp_hdr_sum() takes the same values).
 */
static inline void
frame_tcp_put(struct rte_tcp_hdr *th, rte_be16_t sport, rte_be16_t dport, rte_be32_t seq,
	rte_be32_t ack, uint8_t off, uint8_t flags, rte_be16_t win)
{
	th->src_port = sport;
	th->dst_port = dport;
	th->sent_seq = seq;
	th->recv_ack = ack;
	th->data_off = off;
	th->tcp_flags = flags;
	th->rx_win = win;
	th->cksum = 0;
	th->tcp_urp = 0;
}

/*
 * Writes the 4-byte MSS option (RFC 9293 §3.2: kind 2, length 4) of value mss (host order)
 * at o. Built in a register and stored at once: a checksum may read it right back.
 */
static inline void
frame_tcp_mss_put(uint8_t *o, uint16_t mss)
{
	const uint8_t opt[4] = {FRAME_TCP_OPT_MSS, 4, (uint8_t)(mss >> 8), (uint8_t)mss};

	memcpy(o, opt, sizeof(opt));
}

/*
 * The MSS option of a SYN whose header is hdr_len bytes (RFC 9293 §3.7.1), or 0 when absent
 * or malformed. Reads nothing beyond the header.
 */
static inline uint16_t
frame_tcp_syn_mss(const struct rte_tcp_hdr *th, unsigned hdr_len)
{
	const uint8_t *o = (const uint8_t *)(th + 1);
	const uint8_t *end = (const uint8_t *)th + hdr_len;

	while (o < end) {
		if (*o == FRAME_TCP_OPT_EOL)
			break;
		if (*o == FRAME_TCP_OPT_NOP) {
			o++;
			continue;
		}
		if (end - o < 2 || o[1] < 2 || o[1] > end - o)
			break;
		if (o[0] == FRAME_TCP_OPT_MSS && o[1] == 4)
			return (uint16_t)(o[2] << 8 | o[3]);
		o += o[1];
	}
	return 0;
}

#endif
