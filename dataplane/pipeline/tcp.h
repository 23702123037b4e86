/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_TCP_H
#define FG_DP_PIPELINE_TCP_H
/*
 * Stateless TCP (see docs/dataplane.md): a SYN is answered with a SYN-ACK
 * whose ISN is a SYN cookie (a SYN whose MSS is below dataplane.mss_floor is
 * dropped); a data segment whose ACK proves a cookie of ours carries the whole
 * request, and is answered with one segment holding the response and our FIN,
 * or, when the response is longer than the client's MSS (the cookie's MSS
 * index), with several segments sent at once, FIN on the last
 * (tcp_answer_segments_slow()). FINs are acknowledged from the packet alone.
 * Nothing is remembered between packets, so a SYN flood costs only the SYN-ACKs.
 *
 * Private to the pipeline: only dataplane/pipeline.c includes it, directly or through
 * another header of dataplane/pipeline/ (tests and benchmarks aside).
 */
#include <rte_tcp.h>

#include "dataplane/pipeline/reply.h"
#include "dataplane/pipeline/request.h"
#include "dataplane/pipeline/routes.h"
#include "dataplane/pipeline.h"
#include "dataplane/worker.h"
#include "net/frame.h"
#include "net/net_cksum.h"
#include "net/tcp_syncookie.h"
#include "dataplane/proxy_header.h"

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
 * (net_word()); only the options and payload are summed from memory.
 */
static inline void
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

/*
 * A reset for a segment nobody should have sent us (RFC 9293 §3.10.7.1):
 * with an ACK, <SEQ=SEG.ACK><CTL=RST>; without, <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>.
 */
static inline int
tcp_send_rst(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th,
	uint16_t payload_len, enum dp_answer_kind kind)
{
	uint8_t in = th->tcp_flags;

	if (in & RTE_TCP_ACK_FLAG) {
		tcp_reply_finish(w, wp, m, eth, ip, th, RTE_TCP_RST_FLAG,
			rte_be_to_cpu_32(th->recv_ack), 0, 0, 0);
	} else {
		uint32_t seg_len =
			payload_len + !!(in & RTE_TCP_SYN_FLAG) + !!(in & RTE_TCP_FIN_FLAG);

		tcp_reply_finish(w, wp, m, eth, ip, th, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, 0,
			rte_be_to_cpu_32(th->sent_seq) + seg_len, 0, 0);
	}
	w->ctr.answers[kind]++;
	return 1;
}

/* Answers a SYN with a SYN-ACK carrying our cookie and our MSS option. */
static inline int
tcp_answer_syn(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th, unsigned th_len)
{
	uint32_t client_isn = rte_be_to_cpu_32(th->sent_seq);
	int mss = frame_tcp_syn_mss_opt(th, th_len);

	/* Only an absent option means 536; an explicit MSS of 0 (or anything under the floor)
	 * is what the client said, and is dropped below. */
	if (mss < 0)
		mss = TCP_MSS_DEFAULT;
	/* A client that takes less than the floor is not answered: the cookie's smallest MSS
	 * is 536, and answering in segments larger than the client asked for (RFC 9293 §3.7.1)
	 * is what a floor below it would mean. */
	if (unlikely(mss < w->mss_floor))
		return worker_drop(w, DP_DROP_TCP_MSS_FLOOR);

	unsigned mss_idx = syncookie_mss_index((uint16_t)mss);
	uint32_t cookie = syncookie_make(&w->cookies, ip->src_addr, ip->dst_addr, th->src_port,
		th->dst_port, client_isn, mss_idx);

	/* Only MSS: without timestamps, SACK or window scaling the client asks for nothing
	 * that would need state. */
	frame_tcp_mss_put((uint8_t *)(th + 1), w->mss);
	tcp_reply_finish(w, wp, m, eth, ip, th, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, cookie,
		client_isn + 1, 4, 0);
	w->ctr.answers[DP_ANS_SYN_ACK]++;
	return 1;
}

/* tcp_input() parsed a request into its tcp_pending: route it with tcp_answer_pending(). */
#define TCP_PENDING 2

/*
 * A request parsed by tcp_input() (req_parse()) and not yet routed, with what its answer
 * needs: pipeline_burst() routes it after the next frame's parse, so that the user bucket
 * req_parse() prefetched has that time to arrive.
 */
struct tcp_pending {
	const struct worker_port *wp;
	struct rte_mbuf *m;
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	uint32_t ack, next_seq; /* of the answer: our cookie + 1, their seq after the request */
	char *out;		/* where the answer goes (over the request) */
	uint16_t cap;		/* its room: the buffer's, at most TCP_SEGS_MAX segments */
	uint16_t seg;		/* the largest segment: the client's MSS (cookie), <= ours */
	struct conn *c;		/* a kept connection's entry (kept.h); NULL: stateless */
	bool close;		/* kept: close after this answer (Connection: close, FIN, ...) */
	struct req_claims claims;
	struct edge_client client; /* whom rules and per-IP limits see (req_client()) */
	struct http_request r;
};

/*
 * Fills p for the request in m's segment th, whose answer goes over it (from th + 1, at most
 * TCP_SEGS_MAX segments of at most seg bytes: the client's MSS, <= ours), with sequence number
 * ack and acknowledging next_seq; c is its kept connection, or NULL.
 */
static inline void
tcp_pending_set(struct tcp_pending *p, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th, uint32_t ack,
	uint32_t next_seq, uint16_t seg, struct conn *c)
{
	char *out = (char *)(th + 1);
	uint16_t cap = (uint16_t)((char *)m->buf_addr + m->buf_len - out);

	if (seg > cap)
		seg = cap;
	if (cap > seg * TCP_SEGS_MAX)
		cap = (uint16_t)(seg * TCP_SEGS_MAX);
	/* Field by field, not a compound literal: that would also clear p->r. */
	p->wp = wp;
	p->m = m;
	p->eth = eth;
	p->ip = ip;
	p->th = th;
	p->ack = ack;
	p->next_seq = next_seq;
	p->out = out;
	p->cap = cap;
	p->seg = seg;
	p->c = c;
}

/*
 * Turns p's frame into the HTTP answer of resp_len bytes already at p->out, with our FIN,
 * acknowledging the request (and the client's FIN, if it came with it).
 */
static inline void
tcp_answer_http(struct worker *w, const struct tcp_pending *p, uint16_t resp_len)
{
	tcp_reply_finish(w, p->wp, p->m, p->eth, p->ip, p->th,
		RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG, p->ack, p->next_seq, 0,
		resp_len);
	w->ctr.answers[DP_ANS_HTTP]++;
}

/*
 * The answer at p->out of resp_len bytes, longer than one segment (p->seg), as
 * k = ceil(resp_len / p->seg) segments: the first in p's frame, the others in mbufs of the
 * worker's pool, each with the request's headers turned round and its slice of the answer
 * copied in, sequence numbers following on, FIN on the last (RFC 9293 §3.10.4: one sequence
 * space, the FIN after the last byte). Stored in tx[0..k) in order; returns k. When the pool
 * cannot give k - 1 mbufs, p's frame is freed, nothing is sent and 0 is returned (counted as
 * drop answer_no_mbuf): the request was not acknowledged, so the client sends it again.
 * Out of line: only answers longer than a small MSS (536 with a long CORS origin) come here.
 */
static __rte_noinline uint16_t
tcp_answer_segments_slow(struct worker *w, const struct tcp_pending *p, uint16_t resp_len,
	struct rte_mbuf **tx)
{
	uint16_t seg = p->seg;
	unsigned k = (resp_len + seg - 1u) / seg;
	struct rte_mbuf *more[TCP_SEGS_MAX - 1];
	/* The request's Ethernet, IPv4 (no options: ipv4_input()) and bare TCP header. */
	size_t hdr_len = (size_t)(p->out - (char *)p->eth);

	RTE_ASSERT(k >= 2 && k <= TCP_SEGS_MAX);
	if (unlikely(rte_pktmbuf_alloc_bulk(w->pool, more, k - 1) != 0)) {
		rte_pktmbuf_free(p->m);
		return (uint16_t)worker_drop(w, DP_DROP_ANSWER_NO_MBUF);
	}
	/* The later segments first: they copy the request's headers before the first segment's
	 * are turned round in place. */
	for (unsigned i = 1; i < k; i++) {
		struct rte_mbuf *s = more[i - 1];
		struct rte_ether_hdr *eth = rte_pktmbuf_mtod(s, struct rte_ether_hdr *);
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
		bool last = i + 1 == k;
		uint16_t n = last ? (uint16_t)(resp_len - i * seg) : seg;

		memcpy(eth, p->eth, hdr_len);
		memcpy(th + 1, p->out + i * seg, n);
		tcp_reply_finish(w, p->wp, s, eth, ip, th,
			RTE_TCP_ACK_FLAG |
				(last ? RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG : 0),
			p->ack + i * seg, p->next_seq, 0, n);
		tx[i] = s;
	}
	tcp_reply_finish(w, p->wp, p->m, p->eth, p->ip, p->th, RTE_TCP_ACK_FLAG, p->ack,
		p->next_seq, 0, seg);
	tx[0] = p->m;
	w->ctr.answers[DP_ANS_HTTP]++;
	w->ctr.answers[DP_ANS_HTTP_MORE_SEGMENTS] += k - 1;
	return (uint16_t)k;
}

/*
 * A data segment that starts like a PROXY header (proxy_header_maybe()): from a trusted edge,
 * a header followed by the request in the same segment gives the client's address (*c) and
 * returns the header's length; anything else returns -1 after counting why (from another
 * source: proxy_untrusted; not the spec's: proxy_malformed; the header alone or cut short:
 * proxy_alone, which needs a kept connection, docs/edge.md) and the connection is reset.
 * Returns 0 when the bytes are no PROXY header after all (an HTTP request goes on as usual).
 */
static __rte_noinline int
tcp_proxy_slow(struct worker *w, const struct rte_ipv4_hdr *ip, const uint8_t *p, uint16_t len,
	struct edge_client *c)
{
	struct proxy_info pi;
	int hl = proxy_header_parse(p, len, &pi);

	if (hl == PROXY_NONE)
		return 0;
	if (!edge_trusted4(w->edge, ip->src_addr)) {
		w->ctr.client[DP_CLIENT_PROXY_UNTRUSTED]++;
		return -1;
	}
	if (hl == PROXY_MALFORMED) {
		w->ctr.client[DP_CLIENT_PROXY_MALFORMED]++;
		return -1;
	}
	if (hl == PROXY_INCOMPLETE || hl == len) {
		w->ctr.client[DP_CLIENT_PROXY_ALONE]++;
		return -1;
	}
	c->family = pi.family;
	c->src = pi.family != 0 ? DP_CLIENT_PROXY : DP_CLIENT_EDGE;
	c->ip4 = pi.src4;
	memcpy(c->ip6, pi.src6, 16);
	return hl;
}

#include "dataplane/pipeline/kept.h"

/*
 * Handles a TCP segment in a validated IPv4 packet of total length ip_len: returns 1 when m
 * became the answer to send, 0 when it is to be dropped, or, for a request that parsed,
 * TCP_PENDING with the request in *pend; m becomes its answer in tcp_answer_pending(pend).
 */
static inline int
tcp_input(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, uint16_t ip_len,
	struct tcp_pending *pend)
{
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
	uint16_t l4_len = (uint16_t)(ip_len - sizeof(*ip));
	unsigned th_len;
	uint8_t flags;

	if (unlikely(l4_len < sizeof(*th)))
		return worker_drop(w, DP_DROP_TCP_HDR_LEN);
	th_len = (unsigned)(th->data_off >> 4) * 4;
	if (unlikely(th_len < sizeof(*th) || th_len > l4_len))
		return worker_drop(w, DP_DROP_TCP_HDR_LEN);
	/* A request will look up its address's bucket (adm_check_ip()): with many clients that
	 * is a cache miss, which the checksum and the parse now hide. */
	if (l4_len > th_len && w->rl_ip != NULL)
		rl_prefetch(w->rl_ip, ip->src_addr);

	uint64_t l4f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;

	if (unlikely(l4f == RTE_MBUF_F_RX_L4_CKSUM_BAD))
		return worker_drop(w, DP_DROP_TCP_CKSUM);
	if (l4f != RTE_MBUF_F_RX_L4_CKSUM_GOOD && unlikely(!net_tcp4_cksum_ok(ip, th)))
		return worker_drop(w, DP_DROP_TCP_CKSUM);

	uint16_t payload_len = (uint16_t)(l4_len - th_len);
	bool trusted = false;

	/* A trusted edge's segment belongs to its kept connection, if it has one. */
	if (unlikely(w->conns != NULL) && edge_trusted4(w->edge, ip->src_addr)) {
		struct conn *c = conn_lookup(w->conns, ip->src_addr, th->src_port, th->dst_port);

		if (c != NULL)
			return kept_input(w, wp, m, eth, ip, th, th_len, payload_len, c, pend);
		trusted = true;
	}
	flags = th->tcp_flags;
	/* RFC 9293 §3.10.7.1: a RST is never answered. */
	if (unlikely(flags & RTE_TCP_RST_FLAG))
		return worker_drop(w, DP_DROP_TCP_RST_IN);
	if (unlikely(!worker_listens(w, rte_be_to_cpu_16(th->dst_port))))
		return tcp_send_rst(w, wp, m, eth, ip, th, payload_len, DP_ANS_RST);

	if (flags & RTE_TCP_SYN_FLAG) {
		if (unlikely(flags & (RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG))) {
			if (flags & RTE_TCP_FIN_FLAG)
				return worker_drop(w, DP_DROP_TCP_BAD_FLAGS);
			/* A SYN-ACK to a listener: we opened nothing. */
			return tcp_send_rst(w, wp, m, eth, ip, th, payload_len, DP_ANS_RST);
		}
		return tcp_answer_syn(w, wp, m, eth, ip, th, th_len);
	}
	if (unlikely(!(flags & RTE_TCP_ACK_FLAG)))
		return worker_drop(w, DP_DROP_TCP_BAD_FLAGS);

	uint32_t seq = rte_be_to_cpu_32(th->sent_seq);
	uint32_t ack = rte_be_to_cpu_32(th->recv_ack);
	uint32_t fin = !!(flags & RTE_TCP_FIN_FLAG);

	if (payload_len == 0) {
		if (!fin)
			return worker_drop(w, DP_DROP_TCP_PURE_ACK);
		/* A FIN before any request (seq and ack still at the handshake's values)
		 * closes a connection we never answered: close our side too. Any other FIN
		 * follows our response+FIN and only needs its ACK. */
		uint8_t out = RTE_TCP_ACK_FLAG;

		if (syncookie_check(&w->cookies, ip->src_addr, ip->dst_addr, th->src_port,
			    th->dst_port, seq - 1, ack - 1) >= 0)
			out |= RTE_TCP_FIN_FLAG;
		tcp_reply_finish(w, wp, m, eth, ip, th, out, ack, seq + 1, 0, 0);
		w->ctr.answers[DP_ANS_FIN_ACK]++;
		return 1;
	}

	/* The first data segment has seq = client ISN + 1 and acks our cookie + 1. */
	int mss_idx = syncookie_check(&w->cookies, ip->src_addr, ip->dst_addr, th->src_port,
		th->dst_port, seq - 1, ack - 1);

	if (unlikely(mss_idx < 0))
		return tcp_send_rst(w, wp, m, eth, ip, th, payload_len, DP_ANS_RST_BAD_COOKIE);

	uint16_t seg = syncookie_mss_value((unsigned)mss_idx);

	if (seg > w->mss)
		seg = w->mss;
	/* A trusted edge's connection is kept from its first request on, if there is room. */
	if (unlikely(trusted)) {
		struct conn *c = kept_open_slow(w, wp, eth, ip, th, seq, ack, seg);

		if (c != NULL)
			return kept_input(w, wp, m, eth, ip, th, th_len, payload_len, c, pend);
	}

	char *req = (char *)th + th_len;
	uint16_t req_len = payload_len;
	struct edge_client pc;
	const struct edge_client *proxied = NULL;
	uint16_t resp_len;

	tcp_pending_set(pend, wp, m, eth, ip, th, ack, seq + payload_len + fin, seg, NULL);
	/* A trusted L4 edge's PROXY header before the request (an HTTP request never starts
	 * with "PROX" or CRLF CRLF: one compare for everyone else). */
	if (unlikely(proxy_header_maybe((const uint8_t *)req, payload_len))) {
		int hl = tcp_proxy_slow(w, ip, (const uint8_t *)req, payload_len, &pc);

		if (hl < 0)
			return tcp_send_rst(w, wp, m, eth, ip, th, payload_len, DP_ANS_RST);
		if (hl > 0) {
			req += hl;
			req_len = (uint16_t)(payload_len - hl);
			proxied = &pc;
		}
	}
	/* A refusal of the parse is short: it fits one segment (else the answer is empty). */
	if (likely(req_parse(w, ip->src_addr, proxied, req, req_len, pend->out, pend->seg,
		    &pend->r, &pend->claims, &pend->client, &resp_len)))
		return TCP_PENDING;
	tcp_answer_http(w, pend, resp_len);
	return 1;
}

/*
 * Routes the request tcp_input() left in p and answers it: in its frame (tcp_answer_http()),
 * or, longer than one segment, in several (tcp_answer_segments_slow()). The answer's frames
 * go to tx[0..); returns how many (0 to TCP_SEGS_MAX).
 */
static inline uint16_t
tcp_answer_pending(struct worker *w, struct tcp_pending *p, struct rte_mbuf **tx)
{
	if (unlikely(p->c != NULL))
		return kept_answer(w, p, tx);

	uint16_t len = route_request(w, &p->client, &p->r, &p->claims, p->out, p->cap);

	if (likely(len <= p->seg)) {
		tcp_answer_http(w, p, len);
		tx[0] = p->m;
		return 1;
	}
	return tcp_answer_segments_slow(w, p, len, tx);
}

#endif
