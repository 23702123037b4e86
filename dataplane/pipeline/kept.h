/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_KEPT_H
#define FG_DP_PIPELINE_KEPT_H
/*
 * Kept (HTTP/1.1 persistent, RFC 9112 §9.3) connections from trusted edges ([edge] trusted),
 * docs/edge.md. A connection from a trusted edge gets an entry of the worker's table
 * (conn_table.h) when its first data segment proves a SYN cookie of ours, if one is free (else
 * it is answered statelessly, with Connection: close). From then on its segments are checked
 * as RFC 9293 §3.10.7.4 says for a synchronized connection, with RFC 5961's mitigations:
 *   - sequence numbers: a segment must fall in [RCV.NXT, RCV.NXT + RCV.WND); one that does not
 *     is answered with an ACK and dropped (a RST outside it just dropped);
 *   - a RST at exactly RCV.NXT ends the connection; one elsewhere in the window, and any SYN,
 *     gets a challenge ACK (RFC 5961 §3.2, §4.2);
 *   - an ACK must lie in [SND.UNA - MAX.SND.WND, SND.NXT] (RFC 5961 §5.2), else a challenge
 *     ACK; the peer's window bounds what is sent;
 *   - one request at a time: a request is taken only at RCV.NXT, whole in one segment, once
 *     every byte of the last answer was acknowledged; one that comes earlier is dropped
 *     unacknowledged (the peer sends it again), and bytes after a request in its segment
 *     (pipelining) are acknowledged but not answered: the answer to the first closes the
 *     connection (RFC 9112 §9.3.2: the client retries what was not answered);
 *   - the answer, without Connection: close, is kept in the entry until acknowledged: a
 *     retransmitted request gets the same bytes again (a reserve is never forwarded twice),
 *     and the worker's sweep (kept_sweep()) sends unacknowledged data again after
 *     CONN_RTO_MS, doubling, CONN_RETRIES times before it gives up with a RST;
 *   - a zero window that holds the answer back is probed (RFC 9293 §3.8.6.1, kept_probe_slow()):
 *     while the peer answers the probes the connection stays, for at most
 *     dataplane.kept_idle_timeout (RFC 6429: the table's entries are not held forever);
 *   - FIN: the peer's is acknowledged with ours, and the entry is freed once ours is
 *     acknowledged; an idle connection (dataplane.kept_idle_timeout) is closed with our FIN.
 * Everything else (untrusted sources, a full table) takes tcp.h's stateless path, whose cost
 * is one test of w->conns when no edge is trusted.
 *
 * Private to the pipeline: included by tcp_dispatch.h; builds on tcp.h (its request slot,
 * its stateless answer for what is too long to keep) and segment.h (the segment writer).
 */
#include <rte_tcp.h>

#include "dataplane/conn_table.h"
#include "dataplane/pipeline/segment.h"
#include "dataplane/pipeline/tcp.h"
#include "dataplane/worker.h"

/* Entries the sweep looks at per call (once a millisecond): at least this many... */
#define KEPT_SWEEP_MIN 64
/* ...and at least this fraction of the table, so that a whole table is seen within ~1 s. */
#define KEPT_SWEEP_SHIFT 10

/* RFC 9293 §3.4: sequence numbers compare modulo 2^32. */
static inline bool
kept_seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool
kept_seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

/* The end of what we send: the held answer's last byte + 1 (our FIN's sequence number). */
static inline uint32_t
kept_data_end(const struct conn *c)
{
	return c->ans_seq + c->ans_len;
}

/*
 * RFC 9293 §3.10.7.4, the acceptability test with RCV.WND = TCP_WINDOW: a segment of seg_len
 * sequence numbers starting at seq is acceptable when its first or last number is in the window.
 */
static inline bool
kept_seq_ok(const struct conn *c, uint32_t seq, uint32_t seg_len)
{
	uint32_t off = seq - c->rcv_nxt;

	if (seg_len == 0)
		return off < TCP_WINDOW;
	return off < TCP_WINDOW || seq + seg_len - 1 - c->rcv_nxt < TCP_WINDOW;
}

/* Frees c's entry and counts why. */
static inline void
kept_free(struct worker *w, struct conn *c, enum dp_kept_counter why)
{
	conn_remove(w->conns, c);
	w->ctr.kept[why]++;
	w->ctr.kept[DP_KEPT_IN_USE] = w->conns->used;
}

/* An ACK, <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>, in m; counted under why. Returns 1. */
static __rte_noinline int
kept_ack_slow(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th,
	const struct conn *c, enum dp_kept_counter why)
{
	w->ctr.kept[why]++;
	tcp_reply_finish_slow(
		w, wp, m, eth, ip, th, RTE_TCP_ACK_FLAG, c->snd_nxt, c->rcv_nxt, 0, 0);
	w->ctr.answers[DP_ANS_KEPT_ACK]++;
	return 1;
}

/*
 * Sends c's data from sequence from, as far as the peer's window (SND.UNA + SND.WND) and
 * max_frames segments of c->mss allow, with our FIN after the last byte when it is due
 * (c->fin_sent) and every byte before it goes, by seg_write_slow(): in m's frame, a segment
 * received from the peer or written as one (kept_frame_new()), and in new mbufs for the
 * segments after the first; a bare ACK when nothing fits. from lies in the held answer
 * [ans_seq, ans_seq + ans_len]: nothing outside it is read. Frames go to tx[0..) (tx[0] = m).
 * Returns how many; 0 when the pool had no mbufs (m freed, counted): what was not sent goes
 * again on the next ACK or from the sweep.
 */
static __rte_noinline uint16_t
kept_emit_slow(struct worker *w, const struct worker_port *wp, struct conn *c, struct rte_mbuf *m,
	uint32_t from, unsigned max_frames, struct rte_mbuf **tx)
{
	uint32_t end = kept_data_end(c);
	uint32_t wnd_end = c->snd_una + c->snd_wnd;
	uint32_t stop = kept_seq_lt(wnd_end, end) ? wnd_end : end;

	/* Never before the answer: its bytes are all the entry holds. */
	if (unlikely(kept_seq_lt(from, c->ans_seq)))
		from = c->ans_seq;

	uint32_t n = kept_seq_lt(from, stop) ? stop - from : 0;

	if (max_frames > TCP_SEGS_MAX)
		max_frames = TCP_SEGS_MAX;
	if (n > (uint32_t)max_frames * c->mss)
		n = (uint32_t)max_frames * c->mss;

	bool fin = c->fin_sent && from + n == end;
	uint16_t k = seg_write_slow(w, wp, m, c->ans + (from - c->ans_seq), (uint16_t)n, c->mss,
		from, c->rcv_nxt, fin, tx);

	if (k == 0)
		return 0;
	if (n != 0 || fin) {
		uint32_t next = from + n + fin;

		if (kept_seq_lt(c->snd_nxt, next))
			c->snd_nxt = next;
		c->sent_ms = w->now_ms;
		if (n != 0)
			c->zwnd = false;
	} else {
		w->ctr.answers[DP_ANS_KEPT_ACK]++;
	}
	return k;
}

/*
 * A new entry for the connection whose first data segment (m: seq, ack) proved a cookie of
 * ours, answered in segments of at most seg bytes; NULL, counted, when the table is full (the
 * connection is then answered statelessly, with Connection: close). Out of line: once per
 * connection.
 */
static __rte_noinline struct conn *
kept_open_slow(struct worker *w, const struct worker_port *wp, struct rte_ether_hdr *eth,
	struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th, uint32_t seq, uint32_t ack, uint16_t seg)
{
	struct conn *c = conn_insert(w->conns, ip->src_addr, th->src_port, th->dst_port);

	if (c == NULL) {
		w->ctr.kept[DP_KEPT_TABLE_FULL]++;
		return NULL;
	}
	c->port = (uint8_t)(wp - w->ports);
	c->mss = seg;
	c->rcv_nxt = seq;
	c->snd_una = c->snd_nxt = c->ans_seq = ack;
	c->snd_wnd = c->max_wnd = rte_be_to_cpu_16(th->rx_win);
	c->last_ms = c->open_ms = w->now_ms;
	rte_ether_addr_copy(&eth->src_addr, &c->peer_mac);
	w->ctr.kept[DP_KEPT_OPENED]++;
	w->ctr.kept[DP_KEPT_IN_USE] = w->conns->used;
	return c;
}

/*
 * A segment that failed the acceptability test (RFC 9293 §3.10.7.4): a RST is dropped; else,
 * when data of ours is unacknowledged, it is sent again from SND.UNA (a retransmitted request
 * gets its kept answer, byte for byte, and nothing is routed again); else an ACK.
 */
static __rte_noinline int
kept_unacceptable_slow(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th, struct conn *c,
	uint32_t seq, uint16_t payload_len)
{
	struct rte_mbuf *tx[1];

	if (th->tcp_flags & RTE_TCP_RST_FLAG) {
		w->ctr.kept[DP_KEPT_OUT_OF_WINDOW]++;
		return worker_drop(w, DP_DROP_TCP_RST_IN);
	}
	if (kept_seq_lt(c->snd_una, c->snd_nxt) && !c->pending) {
		bool again = seq == c->req_seq && payload_len == c->req_len && payload_len != 0;

		w->ctr.kept[again ? DP_KEPT_ANSWER_RESENT : DP_KEPT_OUT_OF_WINDOW]++;
		w->ctr.answers[DP_ANS_KEPT_RESENT]++;
		kept_emit_slow(w, wp, c, m, c->snd_una, 1, tx);
		return 1;
	}
	return kept_ack_slow(w, wp, m, eth, ip, th, c, DP_KEPT_OUT_OF_WINDOW);
}

/*
 * A segment without data, or with data, on a connection whose FIN we sent, or the peer's FIN
 * (RFC 9293 §3.10.7.4, eighth): ACK processing was done. Our FIN acknowledged and theirs
 * received: the entry is freed. Data after our FIN: a RST (we said close). Their FIN: its ACK,
 * with our FIN (and what of our data is still unacknowledged) when we have not sent it.
 */
static __rte_noinline int
kept_closing_slow(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th, struct conn *c,
	uint32_t seq, uint16_t payload_len, bool fin)
{
	struct rte_mbuf *tx[1];

	if (seq != c->rcv_nxt && (payload_len != 0 || fin))
		return kept_ack_slow(w, wp, m, eth, ip, th, c, DP_KEPT_OUT_OF_ORDER);
	if (payload_len != 0) {
		/* We sent our FIN: nothing more is answered here (RFC 9293 §3.10.7.4: data after
		 * the application closed). The reset tells the edge at once. */
		uint32_t snd = c->snd_nxt;

		kept_free(w, c, DP_KEPT_DATA_AFTER_CLOSE);
		tcp_reply_finish_slow(w, wp, m, eth, ip, th, RTE_TCP_RST_FLAG, snd, 0, 0, 0);
		w->ctr.answers[DP_ANS_KEPT_ACK]++;
		return 1;
	}
	if (fin) {
		c->rcv_nxt++;
		c->peer_fin = true;
		if (c->state == CONN_ESTABLISHED) {
			/* Their FIN first: we have nothing more to say, so ours follows. */
			c->state = CONN_CLOSING;
			c->fin_sent = true;
		}
	}
	bool ours_acked = c->fin_sent && c->snd_una == kept_data_end(c) + 1;

	if (ours_acked && c->peer_fin) {
		if (!fin) {
			kept_free(w, c, DP_KEPT_CLOSED);
			return worker_drop(w, DP_DROP_TCP_PURE_ACK);
		}
		/* Their FIN after our acknowledged one: its ACK is the last segment. */
		uint32_t snd = c->snd_nxt, rcv = c->rcv_nxt;

		kept_free(w, c, DP_KEPT_CLOSED);
		tcp_reply_finish_slow(w, wp, m, eth, ip, th, RTE_TCP_ACK_FLAG, snd, rcv, 0, 0);
		w->ctr.answers[DP_ANS_KEPT_ACK]++;
		return 1;
	}
	if (fin || kept_seq_lt(c->snd_nxt, kept_data_end(c) + c->fin_sent)) {
		kept_emit_slow(w, wp, c, m, fin ? c->snd_una : c->snd_nxt, 1, tx);
		return 1;
	}
	return worker_drop(w, DP_DROP_TCP_PURE_ACK);
}

/* Whether a Connection field's value lists the "close" option (RFC 9110 §7.6.1). */
static inline bool
kept_says_close(const struct http_str *v)
{
	const char *p = v->p, *end = v->p + v->len;

	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
			p++;

		const char *t = p;

		while (p < end && *p != ',' && *p != ' ' && *p != '\t')
			p++;
		if (p - t == 5 && strncasecmp(t, "close", 5) == 0)
			return true;
	}
	return false;
}

/*
 * The answer of kept_answer_finish() that is not the common case: one that closes the
 * connection (p->close: with our FIN after it), or that is longer than a segment or the peer's
 * window. Kept in the entry and sent from it (kept_emit_slow()); one too long to keep
 * (CONN_ANS_MAX) is sent as the stateless path sends it, and the entry freed.
 */
static __rte_noinline uint16_t
kept_answer_slow(struct worker *w, struct tcp_pending *p, uint16_t len, unsigned max_frames,
	struct rte_mbuf **tx)
{
	struct conn *c = p->c;

	if (p->close) {
		w->ctr.kept[DP_KEPT_CLOSE_ASKED]++;
		if (len > CONN_ANS_MAX) {
			/* Written to keep the connection: it says close after all. */
			if (!p->closing_written) {
				uint16_t k = http_resp_close_again(p->out, len, p->cap, &w->resp);

				if (k != 0)
					len = k;
			}
			kept_free(w, c, DP_KEPT_CLOSED);
			if (len <= p->seg) {
				tcp_answer_http(w, p, len);
				tx[0] = p->m;
				return 1;
			}
			return tcp_answer_segments_slow(w, p, len, tx);
		}
		c->state = CONN_CLOSING;
		c->fin_sent = true;
	}
	memcpy(c->ans, p->out, len);
	c->ans_seq = c->snd_nxt;
	c->ans_len = len;
	c->sent_ms = w->now_ms; /* a zero window's first probe is due an RTO from now */
	w->ctr.answers[DP_ANS_HTTP]++;
	return kept_emit_slow(w, p->wp, c, p->m, c->ans_seq, max_frames, tx);
}

/*
 * Sends the answer of len bytes at p->out to the request kept_input() took on p->c, at most
 * max_frames segments into tx[0..); returns how many. The answer is kept in the entry until
 * acknowledged. It was written without its Connection: close line (w->resp.keep, by
 * kept_answer()) unless p->close, when our FIN follows it; p->closing_written says which. The
 * common case, an answer that fits one segment and the peer's window, is sent here from p's
 * frame.
 */
static inline uint16_t
kept_answer_finish(struct worker *w, struct tcp_pending *p, uint16_t len, unsigned max_frames,
	struct rte_mbuf **tx)
{
	struct conn *c = p->c;

	c->pending = false;
	w->ctr.kept[DP_KEPT_REQUESTS]++;
	if (likely(!p->close && len != 0 && len <= CONN_ANS_MAX)) {
		/* SND.UNA = SND.NXT: the request was taken only then. */
		if (likely(len <= p->seg && len <= c->snd_wnd)) {
			memcpy(c->ans, p->out, len);
			c->ans_seq = c->snd_nxt;
			c->ans_len = len;
			c->snd_nxt += len;
			c->sent_ms = w->now_ms;
			tcp_reply_finish(w, p->wp, p->m, p->eth, p->ip, p->th,
				RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c->ans_seq, c->rcv_nxt, 0, len);
			w->ctr.answers[DP_ANS_HTTP]++;
			tx[0] = p->m;
			return 1;
		}
	} else {
		p->close = true;
	}
	return kept_answer_slow(w, p, len, max_frames, tx);
}

/*
 * Routes the request kept_input() parsed into p and answers it (kept_answer_finish()), for
 * the client req_parse() found (the connection's PROXY header's, X-Forwarded-For, ...).
 * Returns the frames in tx.
 */
static inline uint16_t
kept_answer(struct worker *w, struct tcp_pending *p, struct rte_mbuf **tx)
{
	struct conn *c = p->c;

	/* A RST later in the burst may have freed the entry, and a new connection taken it
	 * (pending again, for its own request: the generation tells them apart): then nobody
	 * waits for this answer, and nothing is routed. */
	if (unlikely(c->state == CONN_FREE || c->gen != p->gen || !c->pending)) {
		rte_pktmbuf_free(p->m);
		return 0;
	}
	/* The peer's FIN came after the request (kept_input()): the answer closes, and
	 * acknowledges the FIN. */
	if (unlikely(c->peer_fin)) {
		p->close = true;
		p->next_seq = c->rcv_nxt;
	}

	/* Written without Connection: close, unless it closes (RFC 9112 §9.3). */
	w->resp.keep = !p->close;
	p->closing_written = p->close;

	uint16_t len = route_request(w, &p->client, &p->r, &p->claims, p->out, p->cap);

	w->resp.keep = false;
	return kept_answer_finish(w, p, len, TCP_SEGS_MAX, tx);
}

/*
 * The PROXY header (proxy_header_maybe() said it may be one) at the start of kept connection
 * c's bytes, p[0..len) being the first data segment's payload: its client becomes the
 * connection's (c->client; a v2 LOCAL or v1 UNKNOWN header: the edge's own). Returns its
 * length when a request follows in the segment; 0 when the bytes are no PROXY header after
 * all; -1 when m became the answer: the ACK of a header alone in its segment (as HAProxy sends
 * it; with a FIN, our FIN too), or a RST for a malformed or cut one (the entry freed, counted
 * proxy_malformed) or for a client that holds w->kept_per_client entries already
 * (conn_client_take(); counted kept client_limit); -2 when m is to be dropped.
 */
static __rte_noinline int
kept_proxy_slow(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th, struct conn *c,
	const uint8_t *p, uint16_t len, bool fin)
{
	struct proxy_info pi;
	int hl = proxy_header_parse(p, len, &pi);

	if (hl == PROXY_NONE)
		return 0;
	if (hl >= 0) {
		c->client.family = pi.family;
		c->client.src = pi.family != 0 ? DP_CLIENT_PROXY : DP_CLIENT_EDGE;
		c->client.ip4 = pi.src4;
		memcpy(c->client.ip6, pi.src6, 16);
	}
	/* A malformed header, or a client that holds its share of the table already
	 * (dataplane.kept_per_client): reset, the entry freed. */
	if (hl < 0 || (w->kept_per_client != 0 &&
			      !conn_client_take(w->conns, c, &c->client, w->kept_per_client))) {
		uint32_t snd = c->snd_nxt;

		if (hl < 0)
			w->ctr.client[DP_CLIENT_PROXY_MALFORMED]++;
		kept_free(w, c, hl < 0 ? DP_KEPT_RESET : DP_KEPT_CLIENT_LIMIT);
		tcp_reply_finish_slow(w, wp, m, eth, ip, th, RTE_TCP_RST_FLAG, snd, 0, 0, 0);
		w->ctr.answers[DP_ANS_KEPT_ACK]++;
		return -1;
	}
	c->proxied = true;
	c->has_request = true;
	if (hl < len)
		return hl;
	/* The header alone: acknowledged; the requests follow. */
	c->rcv_nxt += len;
	if (fin)
		return kept_closing_slow(w, wp, m, eth, ip, th, c, c->rcv_nxt, 0, true) ? -1 : -2;
	kept_ack_slow(w, wp, m, eth, ip, th, c, DP_KEPT_PROXY_HEADERS);
	return -1;
}

/*
 * A segment of a kept connection c (tcp_input() found its entry, or made it for this first
 * data segment): 1 when m became the answer, 0 to drop it, or TCP_PENDING with the request
 * parsed into *pend. (kept_emit_slow() of one frame allocates nothing, so it cannot fail.)
 */
static inline int
kept_input(struct worker *w, const struct worker_port *wp, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *th, unsigned th_len,
	uint16_t payload_len, struct conn *c, struct tcp_pending *pend)
{
	uint8_t flags = th->tcp_flags;
	uint32_t seq = rte_be_to_cpu_32(th->sent_seq);
	bool fin = (flags & RTE_TCP_FIN_FLAG) != 0;

	/* RFC 5961 §4.2: a SYN on a synchronized connection, at any sequence number. */
	if (unlikely(flags & RTE_TCP_SYN_FLAG))
		return kept_ack_slow(w, wp, m, eth, ip, th, c, DP_KEPT_CHALLENGE_ACK);
	/* RFC 9293 §3.10.7.4, first: the sequence number. */
	if (unlikely(!kept_seq_ok(c, seq, payload_len + fin)))
		return kept_unacceptable_slow(w, wp, m, eth, ip, th, c, seq, payload_len);
	/* Second: RST. RFC 5961 §3.2: only one at exactly RCV.NXT resets; any other in the
	 * window gets a challenge ACK, which a real peer answers with that exact RST. */
	if (unlikely(flags & RTE_TCP_RST_FLAG)) {
		if (seq != c->rcv_nxt)
			return kept_ack_slow(w, wp, m, eth, ip, th, c, DP_KEPT_CHALLENGE_ACK);
		kept_free(w, c, DP_KEPT_RESET);
		return worker_drop(w, DP_DROP_TCP_RST_IN);
	}
	/* Fifth: the ACK field. RFC 5961 §5.2: acceptable only in
	 * [SND.UNA - MAX.SND.WND, SND.NXT]; anything else gets a challenge ACK. */
	if (unlikely(!(flags & RTE_TCP_ACK_FLAG)))
		return worker_drop(w, DP_DROP_TCP_BAD_FLAGS);

	uint32_t ack = rte_be_to_cpu_32(th->recv_ack);

	if (unlikely(kept_seq_lt(c->snd_nxt, ack) || kept_seq_lt(ack, c->snd_una - c->max_wnd)))
		return kept_ack_slow(w, wp, m, eth, ip, th, c, DP_KEPT_CHALLENGE_ACK);
	c->last_ms = w->now_ms;
	c->probes = 0;
	if (kept_seq_lt(c->snd_una, ack)) {
		c->snd_una = ack;
		c->retries = 0;
	}
	/* RFC 9293 §3.10.7.4: the window of a segment not older than the last update (no
	 * scaling: our SYN-ACK offered none). */
	if (kept_seq_le(c->snd_una, ack)) {
		c->snd_wnd = rte_be_to_cpu_16(th->rx_win);
		if (c->snd_wnd > c->max_wnd)
			c->max_wnd = c->snd_wnd;
	}
	if (unlikely(c->state != CONN_ESTABLISHED || payload_len == 0 || c->pending)) {
		/* The peer's FIN behind a request still held (routed a frame late, later in this
		 * burst): taken now, and acknowledged by that request's answer, which closes with
		 * our FIN after it (kept_answer()). Our FIN never goes before the held answer. */
		if (c->pending && fin && payload_len == 0 && seq == c->rcv_nxt &&
			c->state == CONN_ESTABLISHED) {
			c->rcv_nxt++;
			c->peer_fin = true;
			return worker_drop(w, DP_DROP_TCP_PURE_ACK);
		}
		if (payload_len != 0 && c->state == CONN_ESTABLISHED)
			return worker_drop(w, DP_DROP_KEPT_EARLY); /* c->pending */
		if (c->state != CONN_ESTABLISHED || fin)
			return kept_closing_slow(w, wp, m, eth, ip, th, c, seq, payload_len, fin);
		/* A pure ACK: what the window held back may go now, if it opened (else it is the
		 * answer to a zero-window probe, and the sweep probes again). */
		if (unlikely(kept_seq_lt(c->snd_nxt, kept_data_end(c))) &&
			kept_seq_lt(c->snd_nxt, c->snd_una + c->snd_wnd)) {
			struct rte_mbuf *tx[1];

			kept_emit_slow(w, wp, c, m, c->snd_nxt, 1, tx);
			return 1;
		}
		return worker_drop(w, DP_DROP_TCP_PURE_ACK);
	}
	/* Seventh: the data, taken only in order and whole. */
	if (unlikely(seq != c->rcv_nxt))
		return kept_ack_slow(w, wp, m, eth, ip, th, c, DP_KEPT_OUT_OF_ORDER);
	/* One request at a time: not before every byte of the last answer was acknowledged.
	 * Unacknowledged, the request comes again. */
	if (unlikely(c->snd_una != c->snd_nxt))
		return worker_drop(w, DP_DROP_KEPT_EARLY);

	char *req = (char *)th + th_len;
	uint16_t req_len = payload_len;
	uint16_t resp_len;

	/* A PROXY header opens the connection's bytes (HAProxy sends it alone in the first
	 * segment): its client is the connection's. Never after the first data. */
	if (unlikely(!c->has_request) && proxy_header_maybe((const uint8_t *)req, payload_len)) {
		int hl = kept_proxy_slow(w, wp, m, eth, ip, th, c, (const uint8_t *)req,
			payload_len, fin);

		if (hl < 0)
			return hl == -1; /* the ACK of a header alone, or a RST */
		req += hl;
		req_len = (uint16_t)(payload_len - hl);
	}
	tcp_pending_set(pend, wp, m, eth, ip, th, c->snd_nxt, seq + payload_len + fin, c->mss, c);
	pend->gen = c->gen;
	pend->close = fin;
	pend->closing_written = true; /* a refusal of the parse: written with Connection: close */
	/* The request is taken now: a copy of it later in this burst is an old segment, and a
	 * next request waits for this one's answer (c->pending). */
	c->rcv_nxt = pend->next_seq;
	c->req_seq = seq;
	c->req_len = payload_len;
	c->pending = true;
	c->has_request = true;
	c->requested = true;
	c->peer_fin = fin;
	/* A kept connection is a trusted edge's (tcp_input() keeps no other). */
	if (likely(req_parse(w, ip->src_addr, true, c->proxied ? &c->client : NULL, req, req_len,
		    pend->out, pend->seg, &pend->r, &pend->claims, &pend->client, &resp_len))) {
		const struct http_request *r = &pend->r;

		/* RFC 9112 §9.3: HTTP/1.0 does not persist here (we send no keep-alive), nor
		 * does a request that says close (§9.6); bytes after the request are a
		 * pipelined one, which we do not take (see above). */
		if (unlikely(r->minor == 0 || r->total_len != req_len))
			pend->close = true;
		if (unlikely(r->seen & HTTP_SEEN_CONNECTION) && !pend->close) {
			const struct http_str *v = http_find_header(r, "connection", 10);

			if (v != NULL && kept_says_close(v))
				pend->close = true;
		}
		if (r->total_len != req_len)
			w->ctr.kept[DP_KEPT_PIPELINED]++;
		return TCP_PENDING;
	}
	/* A request we cannot parse leaves the framing unknown: answered, then closed. */
	pend->close = true;
	struct rte_mbuf *tx[1];

	kept_answer_finish(w, pend, resp_len, 1, tx);
	return 1;
}

/*
 * A frame written as if c's peer had sent it (our MAC and address its destination), for
 * kept_emit_slow() and tcp_reply_finish() to turn round: what the sweep sends. NULL when the
 * pool is empty.
 */
static inline struct rte_mbuf *
kept_frame_new(struct worker *w, const struct conn *c)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(w->pool);

	if (m == NULL)
		return NULL;

	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);

	rte_ether_addr_copy(&c->peer_mac, &eth->src_addr);
	rte_ether_addr_copy(&w->ports[c->port].mac, &eth->dst_addr);
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	ip->src_addr = c->src_ip;
	ip->dst_addr = w->ipv4_addr;
	th->src_port = c->src_port;
	th->dst_port = c->dst_port;
	m->data_len = (uint16_t)(sizeof(*eth) + sizeof(*ip) + sizeof(*th));
	m->pkt_len = m->data_len;
	return m;
}

/*
 * RFC 9293 §3.8.6.1: c's peer offers a zero window, nothing of ours is in flight and data
 * waits (the sweep's test). A window probe is due CONN_RTO_MS << retries after the last
 * sending (the answer held back, or the last probe), doubling up to CONN_RETRIES doublings: a
 * segment <SEQ=SND.UNA-1><ACK=RCV.NXT><CTL=ACK> without data, outside the peer's window, which
 * its TCP must answer with an ACK carrying its window (§3.10.7.4); an ACK that opens it sends
 * the data (kept_input()). Each acceptable segment from the peer answers the probes
 * (c->probes = 0); CONN_RETRIES unanswered ones: a RST (gave_up). A peer that answers but
 * keeps its window shut for w->kept_idle_ms: a RST (zero_window_reset; RFC 6429: an entry
 * of a bounded table is not held forever). Returns the frames written to tx[0] (0 or 1).
 */
static __rte_noinline uint16_t
kept_probe_slow(struct worker *w, struct conn *c, uint64_t now, struct rte_mbuf **tx)
{
	if (!c->zwnd) {
		c->zwnd = true;
		c->zwnd_ms = c->sent_ms;
	}

	bool due = now - c->sent_ms >= (uint64_t)CONN_RTO_MS << c->retries;
	bool silent = due && c->probes >= CONN_RETRIES;
	bool too_long = now - c->zwnd_ms >= w->kept_idle_ms;

	if (!due && !too_long)
		return 0;

	struct rte_mbuf *m = kept_frame_new(w, c);

	if (m == NULL) {
		w->ctr.drops[DP_DROP_ANSWER_NO_MBUF]++;
		return 0;
	}

	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);

	w->ctr.answers[DP_ANS_KEPT_ACK]++;
	if (silent || too_long) {
		tcp_reply_finish_slow(w, &w->ports[c->port], m, eth, ip, th, RTE_TCP_RST_FLAG,
			c->snd_nxt, 0, 0, 0);
		kept_free(w, c, silent ? DP_KEPT_GAVE_UP : DP_KEPT_WINDOW_RESET);
	} else {
		tcp_reply_finish_slow(w, &w->ports[c->port], m, eth, ip, th, RTE_TCP_ACK_FLAG,
			c->snd_una - 1, c->rcv_nxt, 0, 0);
		c->probes++;
		if (c->retries < CONN_RETRIES)
			c->retries++;
		c->sent_ms = now;
		w->ctr.kept[DP_KEPT_WINDOW_PROBES]++;
	}
	tx[0] = m;
	return 1;
}

/*
 * The timers of kept connections, at w->now_ms: looks at the next entries of w's table
 * (KEPT_SWEEP_MIN, or 1 / 2^KEPT_SWEEP_SHIFT of it when more) and
 *   - sends unacknowledged data (or FIN) again from SND.UNA once CONN_RTO_MS << retries passed
 *     since it was last sent; after CONN_RETRIES, sends a RST and frees the entry;
 *   - closes a connection idle for w->kept_idle_ms, or one that carried no request within
 *     w->kept_first_ms of its opening, with our FIN, and frees one whose FIN was
 *     acknowledged but whose peer stayed silent that long again;
 *   - probes a zero window that holds data back (kept_probe_slow()).
 * Frames to tx[0..max), each with its port index in port[]; returns how many.
 */
static __rte_noinline uint16_t
kept_sweep(struct worker *w, struct rte_mbuf **tx, uint16_t *port, uint16_t max)
{
	struct conn_table *t = w->conns;
	uint32_t n = t->cap >> KEPT_SWEEP_SHIFT;
	uint64_t now = w->now_ms;
	uint16_t k = 0;

	if (n < KEPT_SWEEP_MIN)
		n = KEPT_SWEEP_MIN;
	if (n > t->cap)
		n = t->cap;
	for (uint32_t i = 0; i < n && k + TCP_SEGS_MAX <= max; i++) {
		struct conn *c = &t->e[t->sweep];

		t->sweep = t->sweep + 1 == t->cap ? 0 : t->sweep + 1;
		if (c->state == CONN_FREE)
			continue;

		uint32_t done = kept_data_end(c) + c->fin_sent; /* all of ours, acknowledged */
		bool unacked = c->snd_una != done;

		/* Nothing in flight, data waiting, the peer's window shut: probed. */
		if (unlikely(unacked && c->snd_wnd == 0 && c->snd_una == c->snd_nxt &&
			     kept_seq_lt(c->snd_nxt, kept_data_end(c)))) {
			uint8_t p = c->port;

			if (kept_probe_slow(w, c, now, tx + k) != 0)
				port[k++] = p;
			continue;
		}
		bool resend = unacked && now - c->sent_ms >= (uint64_t)CONN_RTO_MS << c->retries;
		/* An entry that never carried a request (a PROXY header alone) is closed sooner:
		 * dataplane.kept_first_request_timeout after it was made, whatever came since. */
		bool unused = !c->requested && c->state == CONN_ESTABLISHED &&
			      w->kept_first_ms != 0 && now - c->open_ms >= w->kept_first_ms;
		bool idle = !unacked && (now - c->last_ms >= w->kept_idle_ms || unused);

		if (!resend && !idle)
			continue;
		if (!unacked && c->state == CONN_CLOSING) {
			/* Our FIN acknowledged, theirs never came. */
			kept_free(w, c, DP_KEPT_CLOSED);
			continue;
		}

		struct rte_mbuf *m = kept_frame_new(w, c);

		if (m == NULL) {
			w->ctr.drops[DP_DROP_ANSWER_NO_MBUF]++;
			break;
		}
		if (resend && c->retries >= CONN_RETRIES) {
			struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
			struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);

			tcp_reply_finish_slow(w, &w->ports[c->port], m, eth, ip, th,
				RTE_TCP_RST_FLAG, c->snd_nxt, 0, 0, 0);
			w->ctr.answers[DP_ANS_KEPT_ACK]++;
			port[k] = c->port;
			tx[k++] = m;
			kept_free(w, c, DP_KEPT_GAVE_UP);
			continue;
		}

		uint32_t from = c->snd_una;

		if (resend) {
			c->retries++;
			w->ctr.kept[DP_KEPT_TIMER_RESENT]++;
			w->ctr.answers[DP_ANS_KEPT_RESENT]++;
		} else {
			/* Idle: RFC 9112 §9.6, the server closes with a FIN. */
			c->state = CONN_CLOSING;
			c->fin_sent = true;
			c->last_ms = now;
			from = c->snd_nxt;
			w->ctr.kept[unused ? DP_KEPT_NO_REQUEST : DP_KEPT_IDLE_CLOSED]++;
		}

		uint16_t f = kept_emit_slow(w, &w->ports[c->port], c, m, from, TCP_SEGS_MAX, tx + k);

		for (uint16_t j = 0; j < f; j++)
			port[k + j] = c->port;
		k = (uint16_t)(k + f);
	}
	return k;
}

#endif
