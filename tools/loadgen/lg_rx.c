/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loadgen client's receive path (lg_parts.h): each frame to its connection, the
 * stateless modes' and floods' answers checked where they come in, ARP answered.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "tools/loadgen/lg_parts.h"
#include "tools/loadgen/lg_http.h"

/* --mode syn-flood: a SYN-ACK must ack one of our SYNs. */
static void
rx_syn_flood_mode(struct lg_client *cl, const struct lg_rx_seg *s)
{
	if ((s->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG |
				RTE_TCP_FIN_FLAG)) == (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) &&
		s->ack == lg_flood_syn_isn(cl->flood_salt, s->dst_ip, s->dport) + 1 &&
		s->payload_len == 0)
		cl->st.syn_acks++;
	else if (s->flags & RTE_TCP_RST_FLAG)
		cl->st.conns_rst++;
	else
		cl->st.malformed_tcp++;
}

/*
 * The blasts: the three answers of a connection, each checked: a SYN-ACK acking our SYN,
 * "HTTP/1.1 200 " (healthz) or "HTTP/1.1 202 " (reserve; or 503, the data plane's link to the
 * control plane busy) with the data plane's FIN, the bare ACK of our FIN. A RST means the data
 * plane refused the cookie (another secret or slot).
 */
static void
rx_blast_mode(struct lg_client *cl, const struct lg_rx_seg *s)
{
	uint32_t isn = lg_flood_syn_isn(cl->flood_salt, s->dst_ip, s->dport);
	uint8_t f = s->flags &
		    (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG | RTE_TCP_FIN_FLAG);

	if (f & RTE_TCP_RST_FLAG) {
		cl->st.conns_rst++;
	} else if (f == (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) && s->ack == isn + 1 &&
		   s->payload_len == 0) {
		cl->st.blast_syn_acks++;
	} else if (f == (RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG) &&
		   s->ack == isn + 1 + cl->blast_req_len && s->payload_len > 0) {
		bool reserve = cl->o->mode == LG_MODE_RESERVE_BLAST;

		if (s->payload_len >= 13 &&
			memcmp(s->payload, reserve ? "HTTP/1.1 202 " : "HTTP/1.1 200 ", 13) == 0) {
			cl->st.blast_ok++;
			cl->st.responses++;
			cl->st.status[reserve ? 202 : 200]++;
		} else if (reserve && s->payload_len >= 13 &&
			   memcmp(s->payload, "HTTP/1.1 503 ", 13) == 0) {
			cl->st.blast_busy++;
			cl->st.responses++;
			cl->st.status[503]++;
		} else {
			cl->st.unexpected_status++;
		}
	} else if (f == RTE_TCP_ACK_FLAG && s->payload_len == 0 &&
		   s->ack == isn + 1 + cl->blast_req_len + 1) {
		cl->st.blast_fin_acks++;
	} else {
		cl->st.malformed_tcp++;
	}
}

/* An answer to a syn or bad-ack flood segment (lg_flood_classify()). */
static void
rx_stateless_flood(struct lg_client *cl, const struct lg_rx_seg *s)
{
	struct lg_flood_stats *f = cl->st.flood;

	switch (lg_flood_classify(cl->flood_salt, cl->ack_salt, cl->bad_ack_len, s)) {
	case LG_FRX_SYN_ACK:
		f[LG_FLOOD_SYN].answered++;
		break;
	case LG_FRX_SYN_RST:
		f[LG_FLOOD_SYN].rsts++;
		f[LG_FLOOD_SYN].unexpected++;
		break;
	case LG_FRX_BAD_ACK_RST:
		f[LG_FLOOD_BAD_ACK].answered++;
		break;
	case LG_FRX_BAD_ACK_TAKEN:
		f[LG_FLOOD_BAD_ACK].unexpected++;
		break;
	case LG_FRX_UNKNOWN:
		cl->st.malformed_tcp++;
		break;
	}
}

/* A RST on connection c: it fails when the RST is ours. */
static void
rx_rst(struct lg_client *cl, struct lg_conn *c, const struct lg_rx_seg *s)
{
	/* RFC 9293 §3.10.7: a RST is ours if it acks our SYN (SYN-SENT) or sits at the sequence
	 * number we expect next. */
	bool ours = c->state == LG_CS_SYN_SENT
			    ? (s->flags & RTE_TCP_ACK_FLAG) && s->ack == c->isn + 1
			    : s->seq == c->rcv_nxt || s->seq == c->rcv_nxt - 1;
	struct lg_flood_stats *fs = lg_state_flood_stats(cl, c);

	if (!ours) {
		cl->st.stray++;
		return;
	}
	if (unlikely(fs != NULL)) {
		fs->rsts++;
		fs->unexpected++;
	} else {
		cl->st.conns_rst++;
	}
	lg_connect_fail(cl, c);
}

/* SYN-SENT: the SYN-ACK; our request goes in the handshake's third segment. */
static void
rx_syn_sent(struct lg_client *cl, struct lg_conn *c, const struct lg_rx_seg *s, uint64_t now)
{
	if ((s->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG)) !=
			(RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) ||
		s->ack != c->isn + 1) {
		cl->st.stray++;
		return;
	}
	if (s->payload_len != 0) {
		lg_state_count_malformed(cl, c, false);
		lg_connect_fail(cl, c);
		return;
	}
	c->rcv_nxt = s->seq + 1;
	c->state = LG_CS_REQ_SENT;
	c->rtx = 0;
	c->t_req = now;
	c->t_due = now + cl->rto;
	if (unlikely(c->step >= LG_STEP_FLOOD_FIRST))
		cl->st.flood[lg_flood_of_step(c->step)].sent++;
	else
		cl->st.requests++;
	lg_connect_req(cl, c, now);
}

/*
 * REQ-SENT: the answer's bytes, gathered until its FIN (then judged, and our FIN) or, on a
 * kept connection, until its Content-Length is in.
 */
static void
rx_req_sent(struct lg_client *cl, struct lg_conn *c, const struct lg_rx_seg *s, uint64_t now)
{
	uint32_t snd_end = c->seq0 + c->req_len; /* after our request */

	/* A SYN: our request was lost and the SYN-ACK repeated; the timer resends it. */
	if ((s->flags & RTE_TCP_SYN_FLAG) || !(s->flags & RTE_TCP_ACK_FLAG) ||
		s->seq != c->rcv_nxt) {
		cl->st.stray++;
		return;
	}
	/* The answer must acknowledge the whole request (it answers all of it), and fit: a TCP
	 * fault when it does not acknowledge it, an HTTP one when it is too long. */
	if (s->ack != snd_end || s->payload_len > LG_RESP_MAX - c->resp_len) {
		lg_state_count_malformed(cl, c, s->ack == snd_end);
		lg_connect_fail(cl, c);
		return;
	}
	memcpy(c->resp + c->resp_len, s->payload, s->payload_len);
	c->resp_len = (uint16_t)(c->resp_len + s->payload_len);
	c->rcv_nxt += s->payload_len;
	if (!(s->flags & RTE_TCP_FIN_FLAG)) {
		size_t whole;

		/* A kept connection's answer ends where its Content-Length says. */
		if (lg_mode_kept(cl->o->mode) && s->payload_len != 0 &&
			(whole = lg_http_response_len(c->resp, c->resp_len)) != 0) {
			if (whole != c->resp_len) {
				lg_state_count_malformed(cl, c, true);
				lg_connect_fail(cl, c);
				return;
			}
			lg_connect_kept_next(cl, c, now);
			return;
		}
		if (s->payload_len)
			lg_connect_send(cl, c, RTE_TCP_ACK_FLAG, snd_end, NULL, 0, now);
		return;
	}
	c->rcv_nxt++;
	lg_judge_response(cl, c, now);
	c->state = LG_CS_FIN_SENT;
	c->rtx = 0;
	c->t_due = now + cl->rto;
	lg_connect_fin(cl, c, now);
}

/* FIN-SENT: the ACK of our FIN closes the connection. */
static void
rx_fin_sent(struct lg_client *cl, struct lg_conn *c, const struct lg_rx_seg *s, uint64_t now)
{
	uint32_t snd_end = c->seq0 + c->req_len;

	if ((s->flags & RTE_TCP_ACK_FLAG) && s->ack == snd_end + 1 && s->payload_len == 0 &&
		!(s->flags & RTE_TCP_FIN_FLAG)) {
		lg_connect_closed(cl, c, now);
		return;
	}
	/* A kept connection: the server's FIN comes with the ACK of ours; ours of it ends the
	 * connection. */
	if (lg_mode_kept(cl->o->mode) && (s->flags & RTE_TCP_ACK_FLAG) &&
		(s->flags & RTE_TCP_FIN_FLAG) && s->ack == snd_end + 1 && s->payload_len == 0 &&
		s->seq == c->rcv_nxt) {
		c->rcv_nxt++;
		lg_connect_send(cl, c, RTE_TCP_ACK_FLAG, snd_end + 1, NULL, 0, now);
		lg_connect_closed(cl, c, now);
		return;
	}
	/* The answer again: our FIN was lost; say it once more. */
	if (s->flags & RTE_TCP_FIN_FLAG) {
		lg_connect_fin(cl, c, now);
		return;
	}
	cl->st.stray++;
}

/* A segment of connection c (NULL: none is current at its address and port). */
static void
rx_conn(struct lg_client *cl, struct lg_conn *c, const struct lg_rx_seg *s, uint64_t now)
{
	if (c == NULL || c->state == LG_CS_IDLE) {
		cl->st.stray++;
		return;
	}
	if (unlikely(s->flags & RTE_TCP_RST_FLAG)) {
		rx_rst(cl, c, s);
		return;
	}
	switch ((enum lg_conn_state)c->state) {
	case LG_CS_SYN_SENT:
		rx_syn_sent(cl, c, s, now);
		return;
	case LG_CS_REQ_SENT:
		rx_req_sent(cl, c, s, now);
		return;
	case LG_CS_FIN_SENT:
		rx_fin_sent(cl, c, s, now);
		return;
	case LG_CS_FREE:
	case LG_CS_IDLE:
		break;
	}
	cl->st.stray++;
}

static void
rx_tcp(struct lg_client *cl, const struct lg_rx_seg *s, uint64_t now)
{
	const struct lg_opts *o = cl->o;

	if (unlikely(s->src_ip != o->dst_ip || s->sport != o->dport)) {
		cl->st.other_rx++;
		return;
	}
	if (likely(s->dst_ip - o->src_base < o->n_src)) {
		if (unlikely(o->mode == LG_MODE_SYN_FLOOD)) {
			rx_syn_flood_mode(cl, s);
			return;
		}
		if (unlikely(lg_mode_blast(o->mode))) {
			rx_blast_mode(cl, s);
			return;
		}
		rx_conn(cl, lg_table_find(cl->tab, s->dst_ip, s->dport), s, now);
		return;
	}
	if (cl->any_flood && s->dst_ip - o->flood_base < o->n_flood) {
		if (s->dport >= cl->stateless_port_lo)
			rx_stateless_flood(cl, s);
		else
			rx_conn(cl, cl->ftab ? lg_table_find(cl->ftab, s->dst_ip, s->dport) : NULL,
				s, now);
		return;
	}
	cl->st.other_rx++;
}

/*
 * A blast's flush waiting on a full TX ring takes the data plane's answers meanwhile: its
 * worker receives nothing while its own TX queue (our RX ring) refuses frames (it holds them,
 * dataplane/lcore_loop.c), so a loadgen that only waited would wait for the data plane while
 * the data plane waits for it, both stalled until the wait ran out and frames were dropped
 * (about 100 rounds a second, a few hundred connections/s). A blast's answers are only
 * counted (rx_blast_mode() sends nothing); anything else (ARP) is counted and dropped here:
 * its sender asks again. Returns how many frames it took.
 */
uint16_t
lg_rx_blast_take_answers(struct lg_client *cl)
{
	struct rte_mbuf *rx[LG_BURST];
	uint16_t n = rte_eth_rx_burst(cl->port_id, cl->queue_id, rx, LG_BURST);
	uint64_t now = rte_get_tsc_cycles();

	for (uint16_t i = 0; i < n; i++) {
		struct lg_rx_seg s;

		cl->st.rx_pkts++;
		cl->st.rx_bytes += rte_pktmbuf_pkt_len(rx[i]);
		if (cl->capturing)
			lg_pcap_write(&cl->pcap, rte_pktmbuf_mtod(rx[i], void *),
				rte_pktmbuf_data_len(rx[i]), now);
		if (lg_pkt_rx(rx[i], &s) == LG_RX_TCP)
			rx_tcp(cl, &s, now);
		else
			cl->st.other_rx++;
	}
	rte_pktmbuf_free_bulk(rx, n);
	return n;
}

static void
rx_arp(struct lg_client *cl, struct rte_mbuf *m, uint64_t now)
{
	const struct rte_arp_hdr *a =
		(const struct rte_arp_hdr *)(rte_pktmbuf_mtod(m, struct rte_ether_hdr *) + 1);
	uint32_t sip = rte_be_to_cpu_32(a->arp_data.arp_sip);
	uint32_t tip = rte_be_to_cpu_32(a->arp_data.arp_tip);

	if (a->arp_hardware != RTE_BE16(RTE_ARP_HRD_ETHER) ||
		a->arp_protocol != RTE_BE16(RTE_ETHER_TYPE_IPV4)) {
		cl->st.other_rx++;
		return;
	}
	if (a->arp_opcode == RTE_BE16(RTE_ARP_OP_REPLY) && sip == cl->o->dst_ip) {
		rte_ether_addr_copy(&a->arp_data.arp_sha, &cl->link.peer_mac);
		cl->have_peer_mac = true;
		cl->st.arp_replies++;
		return;
	}
	/* We own the client addresses: answer for them, as their hosts would. */
	if (a->arp_opcode == RTE_BE16(RTE_ARP_OP_REQUEST) &&
		(tip - cl->o->src_base < cl->o->n_src ||
			(cl->any_flood && tip - cl->o->flood_base < cl->o->n_flood))) {
		struct rte_mbuf *r = rte_pktmbuf_alloc(cl->pool);
		struct rte_ether_addr sha = a->arp_data.arp_sha;

		if (r == NULL || lg_pkt_arp(r, &cl->link, RTE_ARP_OP_REPLY, tip, &sha, sip) != 0) {
			rte_pktmbuf_free(r);
			cl->st.tx_dropped++;
			return;
		}
		cl->st.arp_requests_answered++;
		lg_state_emit(cl, r, now);
		return;
	}
	cl->st.other_rx++;
}

void
lg_rx_frames(struct lg_client *cl, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct lg_rx_seg s;

		cl->st.rx_pkts++;
		cl->st.rx_bytes += rte_pktmbuf_pkt_len(m);
		if (cl->capturing)
			lg_pcap_write(&cl->pcap, rte_pktmbuf_mtod(m, void *),
				rte_pktmbuf_data_len(m), now);
		switch (lg_pkt_rx(m, &s)) {
		case LG_RX_TCP:
			rx_tcp(cl, &s, now);
			break;
		case LG_RX_ARP:
			rx_arp(cl, m, now);
			break;
		case LG_RX_MALFORMED:
			cl->st.malformed_tcp++;
			break;
		case LG_RX_OTHER:
			cl->st.other_rx++;
			break;
		}
		rte_pktmbuf_free(m);
	}
}
