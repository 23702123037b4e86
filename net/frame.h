/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_NET_FRAME_H
#define FG_NET_FRAME_H
/*
 * Writing and reading the Ethernet and TCP headers of a frame, the same way wherever one is
 * built: the data plane's answers (written over the request, dataplane/pipeline/) and the
 * load generator's segments (written into a fresh mbuf, tools/loadgen/lg_pkt.h). Per packet:
 * static inline, no checksum here (the callers sum what they wrote, net_cksum.h). Values in
 * network order unless a parameter says otherwise. The IPv4 header is not here: an answer
 * rewrites the request's in place (dataplane/pipeline/reply.h), which written through one
 * shared writer cost the HTTP answers 4-5 instructions more each (callgrind).
 */
#include <stdint.h>
#include <string.h>

#include <rte_ether.h>
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
 * The MSS option of a SYN whose header is hdr_len bytes (RFC 9293 §3.7.1): its value, 0 to
 * 65535 (0 included: a client that says 0 is told apart from one that says nothing), or -1 when
 * the option is absent or the options are malformed. Reads nothing beyond the header.
 */
static inline int
frame_tcp_syn_mss_opt(const struct rte_tcp_hdr *th, unsigned hdr_len)
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
			return o[2] << 8 | o[3];
		o += o[1];
	}
	return -1;
}

/* frame_tcp_syn_mss_opt() with 0 for an absent option (the tools' view). */
static inline uint16_t
frame_tcp_syn_mss(const struct rte_tcp_hdr *th, unsigned hdr_len)
{
	int mss = frame_tcp_syn_mss_opt(th, hdr_len);

	return mss < 0 ? 0 : (uint16_t)mss;
}

#endif
