/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_SEGMENT_H
#define FG_DP_PIPELINE_SEGMENT_H
/*
 * Writing our TCP segments, for the stateless path (tcp.h) and kept connections (kept.h)
 * alike: tcp_reply_finish() turns a received frame round into one segment of ours, and
 * seg_write_slow() is the one writer of an answer longer than a segment (headers copied,
 * bytes, sequence numbers, lengths by the MSS, PSH and FIN on the last).
 *
 * Private to the pipeline: only dataplane/pipeline.c includes it, through another header of
 * dataplane/pipeline/ (tests and benchmarks aside).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "dataplane/pipeline.h"
#include "dataplane/pipeline/reply.h"
#include "dataplane/worker.h"
#include "net/frame.h"
#include "net/net_cksum.h"

#define TCP_WINDOW 65535
/* The most segments one answer is sent in: pipeline_burst()'s tx holds that many per frame. */
#define TCP_SEGS_MAX PIPELINE_TX_PER_RX
/* RFC 9293 §3.7.1: a SYN without the MSS option means 536. */
#define TCP_MSS_DEFAULT 536

/*
 * Rewrites m into our segment: ports and addresses swapped, seq/ack/flags as
 * given, opt_len bytes of options and payload_len bytes of payload already in
 * place after the 20-byte TCP header, checksums filled (or left to the NIC).
 * The headers' checksums are summed from the values written, not read back
 * (net_word()); only the options and payload are summed from memory. Always inlined: the
 * answers of the per-packet path (SYN-ACK, RST, FIN-ACK, a stateless or kept answer in one
 * segment) are written here, where opt_len and payload_len are often constants; out of line,
 * it cost a SYN-ACK ~100 instructions more (the call with eleven arguments, and the payload's
 * sum as a loop for 4 bytes of options). Paths that are out of line themselves call
 * tcp_reply_finish_slow(), so that the code is not copied into each of them.
 */
static __rte_always_inline void
tcp_reply_finish(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th, uint8_t flags,
	uint32_t seq, uint32_t ack, uint16_t opt_len, uint16_t payload_len)
{
	uint16_t tcp_len = (uint16_t)(sizeof(*th) + opt_len + payload_len);
	rte_be16_t sport = th->dst_port, dport = th->src_port;
	rte_be32_t seq_be = rte_cpu_to_be_32(seq), ack_be = rte_cpu_to_be_32(ack);
	uint8_t off = (uint8_t)(((sizeof(*th) + opt_len) / 4) << 4);
	/* Both addresses are in both headers; reply_ipv4() swaps them, which leaves their sum
	 * as it is. The pseudo-header (RFC 9293 §3.1): addresses, zero and protocol, length. */
	uint32_t addrs = net_sum32(ip->src_addr) + net_sum32(ip->dst_addr);
	uint32_t phdr = net_tcp4_phdr_sum_of(addrs, tcp_len);

	frame_tcp_put(th, sport, dport, seq_be, ack_be, off, flags, RTE_BE16(TCP_WINDOW));
	reply_ipv4(ip, w, tcp_len, IPPROTO_TCP);
	reply_eth(eth, wp);
	reply_set_len(m, sizeof(*eth) + sizeof(*ip) + tcp_len);
	if (wp->tx_cksum_offload) {
		m->l2_len = sizeof(*eth);
		m->l3_len = sizeof(*ip);
		m->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM;
		/* No TSO here (a reply is one small segment): the length is in the sum. */
		th->cksum = net_cksum_fold(phdr);
		return;
	}
	/* What reply_ipv4() wrote. */
	uint32_t ip_sum = net_ipv4_df_hdr_sum(
		(uint16_t)(sizeof(*ip) + tcp_len), w->ip_ttl, IPPROTO_TCP, addrs);
	uint32_t tcp_sum =
		phdr +
		net_tcp_hdr_sum(sport, dport, seq_be, ack_be, off, flags, RTE_BE16(TCP_WINDOW)) +
		net_raw_sum(th + 1, (size_t)opt_len + payload_len);

	ip->hdr_checksum = (uint16_t)~net_cksum_fold(ip_sum);
	th->cksum = (uint16_t)~net_cksum_fold(tcp_sum);
}

/* tcp_reply_finish(), out of line: for the segments of the slow paths (kept.h's). */
static __rte_noinline void
tcp_reply_finish_slow(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th, uint8_t flags,
	uint32_t seq, uint32_t ack, uint16_t opt_len, uint16_t payload_len)
{
	tcp_reply_finish(w, wp, m, eth, ip, th, flags, seq, ack, opt_len, payload_len);
}

/*
 * The one writer of an answer in segments: bytes[0..len) as k = ceil(len / mss) segments
 * (one without data when len is 0), k <= TCP_SEGS_MAX. The first goes in m's frame, a segment
 * received from the peer (or written as one) with a bare 20-byte TCP header after an IPv4
 * header without options, whose headers are turned round (tcp_reply_finish()); the others in
 * new mbufs of w's pool with m's headers copied. Sequence numbers follow on from seq, each
 * segment acknowledges ack, the last one with data carries PSH, and our FIN follows the last
 * byte when fin (RFC 9293 §3.10.4: one sequence space). bytes may be m's own payload (th + 1:
 * the stateless answer is written over the request), else it must not overlap m's buffer.
 * Frames go to tx[0..k), tx[0] = m; returns k. When the pool cannot give k - 1 mbufs, m is
 * freed, nothing is sent and 0 is returned (counted as drop answer_no_mbuf). Counts no answer:
 * its callers know what it was. Out of line: only long answers and kept resends come here.
 */
static __rte_noinline uint16_t
seg_write_slow(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	const char *bytes, uint16_t len, uint16_t mss, uint32_t seq, uint32_t ack, bool fin,
	struct rte_mbuf **tx)
{
	struct rte_ether_hdr *eth0 = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip0 = (struct rte_ipv4_hdr *)(eth0 + 1);
	struct rte_tcp_hdr *th0 = (struct rte_tcp_hdr *)(ip0 + 1);
	unsigned k = len != 0 ? (len + mss - 1u) / mss : 1;
	struct rte_mbuf *more[TCP_SEGS_MAX - 1];

	RTE_ASSERT(k >= 1 && k <= TCP_SEGS_MAX);
	if (k > 1 && unlikely(rte_pktmbuf_alloc_bulk(w->pool, more, k - 1) != 0)) {
		rte_pktmbuf_free(m);
		return (uint16_t)worker_drop(w, DP_DROP_ANSWER_NO_MBUF);
	}
	/* The later segments first: they copy m's headers (and, for the stateless answer, the
	 * bytes after the first segment's) before the first segment's are turned round. */
	for (unsigned i = 1; i < k; i++) {
		struct rte_mbuf *s = more[i - 1];
		struct rte_ether_hdr *eth = rte_pktmbuf_mtod(s, struct rte_ether_hdr *);
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
		bool last = i + 1 == k;
		uint32_t off = (uint32_t)i * mss;
		uint16_t n = (uint16_t)(last ? len - off : mss);

		memcpy(eth, eth0, sizeof(*eth) + sizeof(*ip) + sizeof(*th));
		memcpy(th + 1, bytes + off, n);
		tcp_reply_finish_slow(w, wp, s, eth, ip, th,
			RTE_TCP_ACK_FLAG |
				(last ? RTE_TCP_PSH_FLAG | (fin ? RTE_TCP_FIN_FLAG : 0) : 0),
			seq + off, ack, 0, n);
		tx[i] = s;
	}

	uint16_t n0 = len < mss ? len : mss;
	uint8_t fl = RTE_TCP_ACK_FLAG;

	if (n0 != 0 && bytes != (const char *)(th0 + 1))
		memcpy(th0 + 1, bytes, n0);
	if (k == 1)
		fl |= (n0 != 0 ? RTE_TCP_PSH_FLAG : 0) | (fin ? RTE_TCP_FIN_FLAG : 0);
	tcp_reply_finish_slow(w, wp, m, eth0, ip0, th0, fl, seq, ack, 0, n0);
	tx[0] = m;
	return (uint16_t)k;
}

#endif
