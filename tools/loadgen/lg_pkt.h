/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_LG_PKT_H
#define FG_LG_PKT_H
/*
 * Frames the load generator sends (ARP, TCP/IPv4 segments as a client's kernel would send
 * them, checksums in software) and the checks of the frames it receives. Per packet:
 * static inline, no allocation beyond the mbuf the caller passes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "net/frame.h"
#include "net/net_cksum.h"

#define LG_MSS 1460

/* The two ends of the link: our port's MAC and the data plane's (learned by ARP). */
struct lg_link {
	struct rte_ether_addr our_mac;
	struct rte_ether_addr peer_mac;
};

/* One TCP segment to send; addresses in host order. */
struct lg_seg {
	uint32_t src_ip, dst_ip;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	bool mss_opt; /* a SYN carries our MSS option */
	const void *payload;
	uint16_t payload_len;
};

/*
 * Writes segment s as a whole Ethernet frame into m (reset first). Returns 0, or -1 when m's
 * data room is too small (m is left reset).
 */
static inline int
lg_pkt_tcp(struct rte_mbuf *m, const struct lg_link *l, const struct lg_seg *s)
{
	uint16_t opt_len = s->mss_opt ? 4 : 0;
	uint16_t tcp_len = (uint16_t)(sizeof(struct rte_tcp_hdr) + opt_len + s->payload_len);
	uint16_t ip_len = (uint16_t)(sizeof(struct rte_ipv4_hdr) + tcp_len);

	rte_pktmbuf_reset(m);
	struct rte_ether_hdr *eth =
		(struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)(sizeof(*eth) + ip_len));

	if (unlikely(eth == NULL))
		return -1;
	frame_eth_put(eth, &l->peer_mac, &l->our_mac);
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);

	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	rte_be32_t src = rte_cpu_to_be_32(s->src_ip), dst = rte_cpu_to_be_32(s->dst_ip);
	/* Both headers' sums from the values written (net_cksum.h: reading a header back right
	 * after writing it stalls), the payload's from where it is copied from. */
	uint32_t addrs = net_sum32(src) + net_sum32(dst);

	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16(ip_len);
	ip->packet_id = 0;
	ip->fragment_offset = RTE_BE16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = src;
	ip->dst_addr = dst;
	ip->hdr_checksum =
		(uint16_t)~net_cksum_fold(net_ipv4_df_hdr_sum(ip_len, 64, IPPROTO_TCP, addrs));

	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
	uint8_t *o = (uint8_t *)(th + 1);

	rte_be16_t sport = rte_cpu_to_be_16(s->sport), dport = rte_cpu_to_be_16(s->dport);
	rte_be32_t seq = rte_cpu_to_be_32(s->seq), ack = rte_cpu_to_be_32(s->ack);
	uint8_t off = (uint8_t)(((sizeof(*th) + opt_len) / 4) << 4);
	uint32_t sum = net_tcp4_phdr_sum_of(addrs, tcp_len) +
		       net_tcp_hdr_sum(sport, dport, seq, ack, off, s->flags, RTE_BE16(65535));

	frame_tcp_put(th, sport, dport, seq, ack, off, s->flags, RTE_BE16(65535));
	if (opt_len) {
		frame_tcp_mss_put(o, LG_MSS);
		sum += net_word(FRAME_TCP_OPT_MSS, 4) +
		       net_word((uint8_t)(LG_MSS >> 8), (uint8_t)LG_MSS);
	}
	if (s->payload_len) {
		/* At an even offset of the segment: its sum is the source's. */
		memcpy(o + opt_len, s->payload, s->payload_len);
		sum += net_raw_sum(s->payload, s->payload_len);
	}
	th->cksum = (uint16_t)~net_cksum_fold(sum);
	return 0;
}

/*
 * Writes an ARP packet (RFC 826) into m: a request "who has tip, tell sip" when dst is NULL
 * (broadcast), else a reply "sip is at our MAC" to dst/tip. Addresses in host order.
 * Returns 0, or -1 when m is too small.
 */
static inline int
lg_pkt_arp(struct rte_mbuf *m, const struct lg_link *l, uint16_t op, uint32_t sip,
	const struct rte_ether_addr *dst, uint32_t tip)
{
	rte_pktmbuf_reset(m);
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)rte_pktmbuf_append(
		m, sizeof(*eth) + sizeof(struct rte_arp_hdr));

	if (unlikely(eth == NULL))
		return -1;
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eth + 1);

	if (dst != NULL)
		rte_ether_addr_copy(dst, &eth->dst_addr);
	else
		memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	rte_ether_addr_copy(&l->our_mac, &eth->src_addr);
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP);
	a->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = RTE_ETHER_ADDR_LEN;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(op);
	rte_ether_addr_copy(&l->our_mac, &a->arp_data.arp_sha);
	a->arp_data.arp_sip = rte_cpu_to_be_32(sip);
	if (dst != NULL)
		rte_ether_addr_copy(dst, &a->arp_data.arp_tha);
	else
		memset(&a->arp_data.arp_tha, 0, sizeof(a->arp_data.arp_tha));
	a->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	return 0;
}

/* A received TCP segment, checked; addresses and numbers in host order. */
struct lg_rx_seg {
	uint32_t src_ip, dst_ip;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t mss; /* the MSS option of a SYN, 0 if none */
	const char *payload;
	uint16_t payload_len;
};

enum lg_rx_kind {
	LG_RX_TCP,	 /* *seg is filled */
	LG_RX_ARP,	 /* an ARP packet; the caller looks at it */
	LG_RX_OTHER,	 /* not for this program (IPv6, other protocols) */
	LG_RX_MALFORMED, /* IPv4 TCP with a bad length, header or checksum */
};

/*
 * Classifies frame m and, for TCP, checks it as a receiver must: IPv4 version, header length,
 * total length within the frame, header checksum (RFC 1812 §5.2.2), TCP data offset and
 * checksum (RFC 9293 §3.1). Never reads beyond the frame.
 */
static inline enum lg_rx_kind
lg_pkt_rx(struct rte_mbuf *m, struct lg_rx_seg *seg)
{
	uint32_t flen = rte_pktmbuf_data_len(m);
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

	if (unlikely(flen < sizeof(*eth)))
		return LG_RX_OTHER;
	if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_ARP))
		return flen >= sizeof(*eth) + sizeof(struct rte_arp_hdr) ? LG_RX_ARP : LG_RX_OTHER;
	if (eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4))
		return LG_RX_OTHER;

	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	uint32_t avail = flen - (uint32_t)sizeof(*eth);

	if (unlikely(avail < sizeof(*ip) || (ip->version_ihl >> 4) != 4))
		return LG_RX_MALFORMED;
	uint32_t ihl = rte_ipv4_hdr_len(ip), tot = rte_be_to_cpu_16(ip->total_length);

	if (unlikely(ihl < sizeof(*ip) || tot < ihl || tot > avail))
		return LG_RX_MALFORMED;
	if (ip->next_proto_id != IPPROTO_TCP)
		return LG_RX_OTHER;
	/* RFC 1071: the sum over a correct header, checksum included, is all ones. */
	if (unlikely(net_raw_sum(ip, ihl) != 0xffff))
		return LG_RX_MALFORMED;
	/* Fragments: flashgate never sends them (DF, one segment per answer). */
	if (unlikely(ip->fragment_offset &
		     RTE_BE16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)))
		return LG_RX_MALFORMED;

	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)((uint8_t *)ip + ihl);
	uint32_t l4 = tot - ihl, thl;

	if (unlikely(l4 < sizeof(*th)))
		return LG_RX_MALFORMED;
	thl = (uint32_t)(th->data_off >> 4) * 4;
	if (unlikely(thl < sizeof(*th) || thl > l4))
		return LG_RX_MALFORMED;
	/* The sum over pseudo-header and segment, checksum included, is all ones. */
	if (unlikely(net_cksum_fold((uint32_t)net_raw_sum(th, l4) + net_ipv4_phdr_sum(ip)) !=
		     0xffff))
		return LG_RX_MALFORMED;

	seg->src_ip = rte_be_to_cpu_32(ip->src_addr);
	seg->dst_ip = rte_be_to_cpu_32(ip->dst_addr);
	seg->sport = rte_be_to_cpu_16(th->src_port);
	seg->dport = rte_be_to_cpu_16(th->dst_port);
	seg->seq = rte_be_to_cpu_32(th->sent_seq);
	seg->ack = rte_be_to_cpu_32(th->recv_ack);
	seg->flags = th->tcp_flags;
	seg->payload = (const char *)th + thl;
	seg->payload_len = (uint16_t)(l4 - thl);
	seg->mss = 0;
	if (seg->flags & RTE_TCP_SYN_FLAG)
		seg->mss = frame_tcp_syn_mss(th, thl);
	return LG_RX_TCP;
}

#endif
