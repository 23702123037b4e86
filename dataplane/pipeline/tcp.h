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
 * (tcp_answer_segments_slow(), segment.h's writer). FINs are acknowledged from the packet
 * alone. Nothing is remembered between packets, so a SYN flood costs only the SYN-ACKs.
 * Kept connections (kept.h) build on this file; which of the two a segment takes is decided
 * above both, in tcp_dispatch.h.
 *
 * The per-packet path's functions are __rte_always_inline, one caller each (or two), all
 * inlined into pipeline_burst() as they were when this was one function: left to GCC, its
 * growth limit for pipeline_burst() keeps a different one out of line after each change (a
 * call with many arguments per packet: ~100 instructions more per SYN-ACK when
 * tcp_reply_finish() was). What is rare is out of line (__rte_noinline, most named _slow).
 *
 * Private to the pipeline: only dataplane/pipeline.c includes it, through another header of
 * dataplane/pipeline/ (tests and benchmarks aside).
 */
#include <rte_tcp.h>

#include "dataplane/pipeline/request.h"
#include "dataplane/pipeline/routes.h"
#include "dataplane/pipeline/segment.h"
#include "dataplane/proxy_header.h"
#include "dataplane/worker.h"
#include "net/frame.h"
#include "net/tcp_syncookie.h"

/*
 * A reset for a segment nobody should have sent us (RFC 9293 §3.10.7.1):
 * with an ACK, <SEQ=SEG.ACK><CTL=RST>; without, <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>.
 * Out of line (four callers), with the segment's writing inlined in it.
 */
static __rte_noinline int
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
static __rte_always_inline int
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
	uint32_t gen;		/* kept: c->gen when the request was taken */
	bool close;		/* kept: close after this answer (Connection: close, FIN, ...) */
	bool closing_written;	/* kept: the answer was written with Connection: close */
	struct req_claims claims;
	struct edge_client client; /* whom rules and per-IP limits see (req_client()) */
	struct http_request r;
};

/*
 * Fills p for the request in m's segment th, whose answer goes over it (from th + 1, at most
 * TCP_SEGS_MAX segments of at most seg bytes: the client's MSS, <= ours), with sequence number
 * ack and acknowledging next_seq; c is its kept connection, or NULL.
 */
static __rte_always_inline void
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
static __rte_always_inline void
tcp_answer_http(struct worker *w, const struct tcp_pending *p, uint16_t resp_len)
{
	tcp_reply_finish(w, p->wp, p->m, p->eth, p->ip, p->th,
		RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG, p->ack, p->next_seq, 0,
		resp_len);
	w->ctr.answers[DP_ANS_HTTP]++;
}

/*
 * The answer at p->out of resp_len bytes, longer than one segment (p->seg), as
 * k = ceil(resp_len / p->seg) segments by seg_write_slow(): the first in p's frame, FIN on the
 * last. Stored in tx[0..k) in order; returns k. When the pool cannot give k - 1 mbufs, p's
 * frame is freed, nothing is sent and 0 is returned (counted as drop answer_no_mbuf): the
 * request was not acknowledged, so the client sends it again. Out of line: only answers
 * longer than a small MSS (536 with a long CORS origin) come here.
 */
static __rte_noinline uint16_t
tcp_answer_segments_slow(struct worker *w, const struct tcp_pending *p, uint16_t resp_len,
	struct rte_mbuf **tx)
{
	uint16_t k = seg_write_slow(
		w, p->wp, p->m, p->out, resp_len, p->seg, p->ack, p->next_seq, true, tx);

	RTE_ASSERT(k != 1);
	if (k != 0) {
		w->ctr.answers[DP_ANS_HTTP]++;
		w->ctr.answers[DP_ANS_HTTP_MORE_SEGMENTS] += k - 1u;
	}
	return k;
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

/* tcp_stateless_segment(): a data segment whose ACK proves a cookie of ours, not yet taken. */
#define TCP_DATA 3

/*
 * The stateless checks of a TCP segment (no kept connection's): a RST is dropped, a port we do
 * not listen on reset, a SYN answered with a cookie, a FIN acknowledged. Returns 1 when m became
 * the answer, 0 when it is to be dropped, or TCP_DATA for a data segment whose ACK proves a
 * cookie of ours, with the MSS its answer is sent in (the cookie's, at most ours) in *seg.
 */
static __rte_always_inline int
tcp_stateless_segment(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th, unsigned th_len,
	uint16_t payload_len, uint16_t *seg)
{
	uint8_t flags = th->tcp_flags;

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

	if (payload_len == 0) {
		if (!(flags & RTE_TCP_FIN_FLAG))
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

	uint16_t mss = syncookie_mss_value((unsigned)mss_idx);

	*seg = mss > w->mss ? w->mss : mss;
	return TCP_DATA;
}

/*
 * The request in a data segment tcp_stateless_segment() accepted (TCP_DATA, answered in
 * segments of at most seg bytes; from_edge: its source is a trusted edge), answered
 * statelessly: returns TCP_PENDING with the request parsed into *pend (answered by
 * tcp_stateless_answer()), or 1 when m became the answer (a refused parse, a RST for a PROXY
 * header we do not take).
 */
static __rte_always_inline int
tcp_stateless_request(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th, unsigned th_len,
	uint16_t payload_len, uint16_t seg, bool from_edge, struct tcp_pending *pend)
{
	uint32_t seq = rte_be_to_cpu_32(th->sent_seq);
	uint32_t ack = rte_be_to_cpu_32(th->recv_ack);
	uint32_t fin = !!(th->tcp_flags & RTE_TCP_FIN_FLAG);
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
	if (likely(req_parse(w, ip->src_addr, from_edge, proxied, req, req_len, pend->out,
		    pend->seg, &pend->r, &pend->claims, &pend->client, &resp_len)))
		return TCP_PENDING;
	tcp_answer_http(w, pend, resp_len);
	return 1;
}

/*
 * Routes the request tcp_stateless_request() left in p and answers it: in its frame
 * (tcp_answer_http()), or, longer than one segment, in several (tcp_answer_segments_slow()).
 * The answer's frames go to tx[0..); returns how many (0 to TCP_SEGS_MAX).
 */
static __rte_always_inline uint16_t
tcp_stateless_answer(struct worker *w, struct tcp_pending *p, struct rte_mbuf **tx)
{
	uint16_t len = route_request(w, &p->client, &p->r, &p->claims, p->out, p->cap);

	if (likely(len <= p->seg)) {
		tcp_answer_http(w, p, len);
		tx[0] = p->m;
		return 1;
	}
	return tcp_answer_segments_slow(w, p, len, tx);
}

#endif
