/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_PKTBUILD_H
#define FG_TESTS_PKTBUILD_H
/*
 * Frames for packet tests and benchmarks, built the way a client's kernel
 * would send them, with checksums from an RFC 1071 reference sum written here
 * (independent of the data plane's own checksum code), and a checker for the
 * frames the data plane answers with.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#define PB_DP_MAC  { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 }
#define PB_CL_MAC  { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 }
#define PB_DP_IP   RTE_IPV4(198, 18, 0, 2)
#define PB_CL_IP   RTE_IPV4(198, 18, 0, 1)

/* RFC 1071 one's complement sum, byte by byte: slow and obviously right. */
static inline uint32_t
pb_sum(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *p = data;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)(p[len - 1] << 8);
	return sum;
}

static inline uint16_t
pb_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* True if the IPv4 header checksum of ip is right. */
static inline bool
pb_ip_ok(const struct rte_ipv4_hdr *ip)
{
	return pb_fold(pb_sum(ip, (ip->version_ihl & 0xf) * 4u, 0)) == 0xffff;
}

/* True if the TCP checksum (with pseudo-header) of the segment in ip is right. */
static inline bool
pb_tcp_ok(const struct rte_ipv4_hdr *ip)
{
	uint16_t tot = rte_be_to_cpu_16(ip->total_length);
	unsigned ihl = (ip->version_ihl & 0xf) * 4u;
	uint16_t l4 = (uint16_t)(tot - ihl);
	uint8_t ph[12];

	memcpy(ph, &ip->src_addr, 4);
	memcpy(ph + 4, &ip->dst_addr, 4);
	ph[8] = 0;
	ph[9] = ip->next_proto_id;
	ph[10] = (uint8_t)(l4 >> 8);
	ph[11] = (uint8_t)l4;
	return pb_fold(pb_sum((const uint8_t *)ip + ihl, l4, pb_sum(ph, 12, 0))) == 0xffff;
}

struct pb_tcp {
	uint32_t src_ip, dst_ip;     /* host order */
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t mss;                /* MSS option value; 0: no options */
	bool linux_opts;             /* SYN with MSS, SACK-permitted, timestamps, window scale */
	const void *payload;
	uint16_t payload_len;
	uint16_t pad;                /* Ethernet padding bytes after the IP packet */
	uint8_t ttl;                 /* 0: 64 */
	uint16_t frag;               /* fragment_offset field, host order */
	uint8_t ihl;                 /* 0: 5 (with options the bytes are NOPs) */
	uint16_t win;                /* the window field; 0: 64240 */
	bool win_zero;               /* the window field 0 (a zero window), win ignored */
};

/* Writes an Ethernet frame into m (reset first). */
static inline struct rte_ether_hdr *
pb_eth(struct rte_mbuf *m, const uint8_t dst[6], const uint8_t src[6], uint16_t type, uint16_t len)
{
	rte_pktmbuf_reset(m);
	char *frame = rte_pktmbuf_append(m, len);

	if (frame == NULL)
		abort();
	memset(frame, 0, len);
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;

	memcpy(&eth->dst_addr, dst, 6);
	memcpy(&eth->src_addr, src, 6);
	eth->ether_type = rte_cpu_to_be_16(type);
	return eth;
}

/* Builds a TCP/IPv4 frame from the client to the data plane's MAC. Returns m. */
static inline struct rte_mbuf *
pb_tcp_frame(struct rte_mbuf *m, const struct pb_tcp *t)
{
	static const uint8_t dmac[6] = PB_DP_MAC, smac[6] = PB_CL_MAC;
	unsigned ihl = t->ihl ? t->ihl : 5;
	unsigned optlen = t->linux_opts ? 20 : (t->mss ? 4 : 0);
	unsigned thl = 20 + optlen;
	uint16_t ip_len = (uint16_t)(ihl * 4 + thl + t->payload_len);
	struct rte_ether_hdr *eth = pb_eth(m, dmac, smac, RTE_ETHER_TYPE_IPV4,
		(uint16_t)(sizeof(*eth) + ip_len + t->pad));
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);

	ip->version_ihl = (uint8_t)(0x40 | ihl);
	ip->total_length = rte_cpu_to_be_16(ip_len);
	ip->packet_id = rte_cpu_to_be_16(0x1234);
	ip->fragment_offset = rte_cpu_to_be_16(t->frag ? t->frag : RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = t->ttl ? t->ttl : 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = rte_cpu_to_be_32(t->src_ip ? t->src_ip : PB_CL_IP);
	ip->dst_addr = rte_cpu_to_be_32(t->dst_ip ? t->dst_ip : PB_DP_IP);
	if (ihl > 5)
		memset(ip + 1, 1, (ihl - 5) * 4); /* NOP options */
	ip->hdr_checksum = rte_cpu_to_be_16((uint16_t)~pb_fold(pb_sum(ip, ihl * 4, 0)));

	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)((uint8_t *)ip + ihl * 4);
	uint8_t *o = (uint8_t *)(th + 1);

	th->src_port = rte_cpu_to_be_16(t->sport ? t->sport : 40000);
	th->dst_port = rte_cpu_to_be_16(t->dport ? t->dport : 80);
	th->sent_seq = rte_cpu_to_be_32(t->seq);
	th->recv_ack = rte_cpu_to_be_32(t->ack);
	th->data_off = (uint8_t)((thl / 4) << 4);
	th->tcp_flags = t->flags;
	th->rx_win = rte_cpu_to_be_16(t->win_zero ? 0 : t->win ? t->win : 64240);
	if (t->linux_opts) {
		static const uint8_t lo[20] = { 2, 4, 0, 0, 4, 2, 8, 10, 0, 1, 2, 3, 0, 0, 0, 0, 1,
			3, 3, 7 };

		memcpy(o, lo, 20);
		o[2] = (uint8_t)(t->mss >> 8);
		o[3] = (uint8_t)t->mss;
	} else if (t->mss) {
		o[0] = 2;
		o[1] = 4;
		o[2] = (uint8_t)(t->mss >> 8);
		o[3] = (uint8_t)t->mss;
	}
	if (t->payload_len)
		memcpy((uint8_t *)th + thl, t->payload, t->payload_len);
	th->cksum = 0;
	/* Pseudo-header + segment. */
	uint8_t ph[12];
	uint16_t l4 = (uint16_t)(thl + t->payload_len);

	memcpy(ph, &ip->src_addr, 4);
	memcpy(ph + 4, &ip->dst_addr, 4);
	ph[8] = 0;
	ph[9] = IPPROTO_TCP;
	ph[10] = (uint8_t)(l4 >> 8);
	ph[11] = (uint8_t)l4;
	th->cksum = rte_cpu_to_be_16((uint16_t)~pb_fold(pb_sum(th, l4, pb_sum(ph, 12, 0))));
	return m;
}

/* The IPv4 header of a frame m. */
static inline struct rte_ipv4_hdr *
pb_ip(struct rte_mbuf *m)
{
	return (struct rte_ipv4_hdr *)(rte_pktmbuf_mtod(m, struct rte_ether_hdr *) + 1);
}

/* The TCP header of a frame m. */
static inline struct rte_tcp_hdr *
pb_th(struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = pb_ip(m);

	return (struct rte_tcp_hdr *)((uint8_t *)ip + (ip->version_ihl & 0xf) * 4);
}

/* The TCP payload of frame m, and its length in *len. */
static inline const char *
pb_payload(struct rte_mbuf *m, uint16_t *len)
{
	struct rte_ipv4_hdr *ip = pb_ip(m);
	struct rte_tcp_hdr *th = pb_th(m);
	unsigned thl = (th->data_off >> 4) * 4u;

	*len = (uint16_t)(rte_be_to_cpu_16(ip->total_length) - (ip->version_ihl & 0xf) * 4 - thl);
	return (const char *)th + thl;
}

/* A whole request from the client: handshake values chosen so that cookie + 1 is acked. */
static inline struct rte_mbuf *
pb_request(struct rte_mbuf *m, uint32_t client_isn, uint32_t cookie, const char *req, uint16_t sport)
{
	struct pb_tcp t = {
		.sport = sport,
		.seq = client_isn + 1,
		.ack = cookie + 1,
		.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
		.payload = req,
		.payload_len = (uint16_t)strlen(req),
	};

	return pb_tcp_frame(m, &t);
}

#endif
