/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet tests of kept connections from trusted edges (dataplane/pipeline/kept.h): frames
 * built here go through pipeline_burst() as a trusted edge (198.18.0.1) or an untrusted
 * client (198.18.0.9) sends them, and the answers are read as the edge's TCP would.
 */
#include <stdlib.h>
#include <string.h>

#include "dataplane/edge.h"
/* tcp_input() itself, told the look-ahead's slot or not (test_look_ahead_or_not()); the
 * pipeline's functions this file does not call are pipeline.c's. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "dataplane/pipeline/tcp_dispatch.h"
#pragma GCC diagnostic pop
#include "tests/lib/dp_harness.h"
#include "tests/tap.h"

static struct dp_harness H;
static struct edge_trust trust;
static uint16_t next_port = 30000;

#define EDGE_IP      PB_CL_IP                 /* 198.18.0.1, trusted */
#define UNTRUSTED_IP RTE_IPV4(198, 18, 0, 9)

static const char healthz[] = "GET /healthz HTTP/1.1\r\nHost: s\r\n\r\n";

/* One connection as its peer sees it: our next sequence number to acknowledge, theirs. */
struct kc {
	uint32_t ip;
	uint16_t sport;
	uint32_t snd; /* the peer's next sequence number */
	uint32_t rcv; /* ours it expects next (what it acknowledges) */
	uint16_t win;
	bool shut; /* its window 0 */
};

/* A segment from the peer of k. */
static struct rte_mbuf *
seg(const struct kc *k, uint8_t flags, uint32_t seq, uint32_t ack, const char *payload,
	uint16_t len)
{
	struct pb_tcp t = { .src_ip = k->ip, .sport = k->sport, .seq = seq, .ack = ack,
		.flags = flags, .payload = payload, .payload_len = len, .win = k->win,
		.win_zero = k->shut };

	return dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t));
}

/* A handshake from ip: SYN, our SYN-ACK's cookie; the peer's numbers in *k. */
static bool
connect_from(struct kc *k, uint32_t ip)
{
	struct pb_tcp t = { .src_ip = ip, .sport = next_port, .seq = 5000u * next_port,
		.flags = RTE_TCP_SYN_FLAG, .mss = 1460 };
	struct rte_mbuf *r = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t));

	memset(k, 0, sizeof(*k));
	k->ip = ip;
	k->sport = next_port++;
	if (r == NULL)
		return false;
	k->snd = t.seq + 1;
	k->rcv = rte_be_to_cpu_32(pb_th(r)->sent_seq) + 1;
	rte_pktmbuf_free(r);
	return true;
}

/* The answer to a request: its payload copied into out (NUL-ended), its TCP header in *th. */
struct ans {
	struct rte_tcp_hdr th;
	uint16_t len;
	char text[1600];
};

static bool
read_ans(struct rte_mbuf *r, struct ans *a)
{
	memset(a, 0, sizeof(*a));
	if (r == NULL)
		return false;

	const char *p = pb_payload(r, &a->len);

	a->th = *pb_th(r);
	if (a->len >= sizeof(a->text))
		a->len = sizeof(a->text) - 1;
	memcpy(a->text, p, a->len);
	rte_pktmbuf_free(r);
	return true;
}

/* Sends req on k at its next sequence number, acknowledging all we sent; the answer in *a. */
static bool
send_req(struct kc *k, const char *req, struct ans *a)
{
	uint16_t len = (uint16_t)strlen(req);
	bool got = read_ans(seg(k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k->snd, k->rcv, req, len), a);

	k->snd += len;
	if (got)
		k->rcv = rte_be_to_cpu_32(a->th.sent_seq) + a->len +
			 !!(a->th.tcp_flags & RTE_TCP_FIN_FLAG);
	return got;
}

static uint64_t
kept(enum dp_kept_counter c)
{
	return H.w->ctr.kept[c];
}

static bool
is_kept_200(const struct ans *a)
{
	return strncmp(a->text, "HTTP/1.1 200 ", 13) == 0 && !strstr(a->text, "Connection:") &&
	       a->th.tcp_flags == (RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG);
}

static bool
is_closed_answer(const struct ans *a)
{
	return strstr(a->text, "\r\nConnection: close\r\n") != NULL &&
	       (a->th.tcp_flags & RTE_TCP_FIN_FLAG);
}

static void
test_several_requests(void)
{
	struct kc k;
	struct ans a;
	uint64_t opened = kept(DP_KEPT_OPENED), in_use = kept(DP_KEPT_IN_USE);

	if (!tap_ok(connect_from(&k, EDGE_IP), "a trusted edge's SYN gets a SYN-ACK"))
		return;
	/* The handshake's ACK makes nothing: the entry comes with the first request. */
	tap_ok(seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0) == NULL,
		"the handshake's ACK is dropped (stateless)");
	tap_eq_int(kept(DP_KEPT_IN_USE), in_use, "  no entry for it");
	for (int i = 0; i < 3; i++) {
		uint32_t want_seq = k.rcv, want_ack = k.snd + (uint32_t)strlen(healthz);

		send_req(&k, healthz, &a);
		tap_ok(is_kept_200(&a), "request %d on one kept connection: 200, no Connection: "
					"close, no FIN (ACK|PSH)", i + 1);
		tap_ok(rte_be_to_cpu_32(a.th.sent_seq) == want_seq &&
			       rte_be_to_cpu_32(a.th.recv_ack) == want_ack,
			"  its seq follows the last answer, its ack the request");
		tap_ok(strstr(a.text, "Content-Length: 15\r\n") && strstr(a.text, "{\"status\":\"ok\"}"),
			"  the whole healthz answer, framed by Content-Length");
	}
	tap_eq_int(kept(DP_KEPT_OPENED) - opened, 1, "one entry opened for the three");
	tap_eq_int(kept(DP_KEPT_IN_USE), in_use + 1, "  and in use");
	/* The edge closes: FIN after our last answer; we answer FIN|ACK; its ACK frees the entry. */
	struct rte_mbuf *r = seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, k.snd, k.rcv, NULL, 0);

	read_ans(r, &a);
	tap_ok(a.th.tcp_flags == (RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG) &&
		       rte_be_to_cpu_32(a.th.recv_ack) == k.snd + 1 &&
		       rte_be_to_cpu_32(a.th.sent_seq) == k.rcv,
		"the edge's FIN gets our FIN|ACK acknowledging it");
	tap_eq_int(kept(DP_KEPT_IN_USE), in_use + 1, "  the entry waits for our FIN's ACK");
	tap_ok(seg(&k, RTE_TCP_ACK_FLAG, k.snd + 1, k.rcv + 1, NULL, 0) == NULL,
		"the ACK of our FIN is not answered");
	tap_eq_int(kept(DP_KEPT_IN_USE), in_use, "  and frees the entry");
}

static void
test_untrusted_stateless(void)
{
	struct kc k;
	struct ans a;
	uint64_t in_use = kept(DP_KEPT_IN_USE), opened = kept(DP_KEPT_OPENED);

	connect_from(&k, UNTRUSTED_IP);
	send_req(&k, healthz, &a);
	tap_ok(strncmp(a.text, "HTTP/1.1 200 ", 13) == 0 && is_closed_answer(&a),
		"an untrusted client's request: 200 with Connection: close and FIN, as before");
	tap_ok(kept(DP_KEPT_OPENED) == opened && kept(DP_KEPT_IN_USE) == in_use,
		"  no entry made for it");
	/* Its next request on that connection finds no state: the cookie no longer matches. */
	send_req(&k, healthz, &a);
	tap_ok(a.th.tcp_flags & RTE_TCP_RST_FLAG, "  a second request there gets a RST");
}

/* A purchase token and the reserve path for user. */
static void
mint(uint64_t user, char *tok, char *path)
{
	char segm[TOK_BUF_SIZE];

	tok_purchase_mint(&H.w->sh->sale, DPH_EVENT_OPEN, user, H.w->now_ms / 1000 + 300, tok,
		TOK_BUF_SIZE);
	tok_path_mint(&H.w->sh->sale, DPH_EVENT_OPEN, segm, sizeof(segm));
	snprintf(path, 128, "/api/v1/events/%u/reserve/%s", DPH_EVENT_OPEN, segm);
}

static void
test_retransmitted_reserve(void)
{
	struct kc k;
	struct ans a, b;
	char tok[TOK_BUF_SIZE], path[128], req[768];
	struct wire_reserve rec;

	while (rte_ring_sc_dequeue_elem(H.port.ring, &rec, sizeof(rec)) == 0)
		;
	mint(4242, tok, path);
	snprintf(req, sizeof(req),
		"POST %s HTTP/1.1\r\nHost: s\r\nX-Flash-Token: %s\r\nContent-Length: 0\r\n\r\n", path,
		tok);
	connect_from(&k, EDGE_IP);
	send_req(&k, healthz, &a);

	uint32_t seq = k.snd, ack = k.rcv;
	uint16_t len = (uint16_t)strlen(req);

	read_ans(seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, seq, ack, req, len), &a);
	tap_ok(strncmp(a.text, "HTTP/1.1 202 ", 13) == 0 && !strstr(a.text, "Connection:"),
		"a reserve on a kept connection: 202, kept");
	tap_eq_int(rte_ring_count(H.port.ring), 1, "  one reservation to the bridge");

	uint64_t resent = kept(DP_KEPT_ANSWER_RESENT);

	/* Our answer was lost: the edge sends the request again, the same bytes. */
	read_ans(seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, seq, ack, req, len), &b);
	tap_ok(a.len == b.len && memcmp(a.text, b.text, a.len) == 0 &&
		       a.th.sent_seq == b.th.sent_seq && a.th.recv_ack == b.th.recv_ack,
		"the retransmitted reserve gets the same answer, byte for byte (same receipt)");
	tap_eq_int(rte_ring_count(H.port.ring), 1, "  and is not forwarded again");
	tap_eq_int(kept(DP_KEPT_ANSWER_RESENT) - resent, 1, "  counted as answer_resent");
	/* Acknowledged, a copy of the request is only acknowledged. */
	k.snd = seq + len;
	k.rcv = rte_be_to_cpu_32(a.th.sent_seq) + a.len;
	tap_ok(seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0) == NULL, "the edge's ACK of it");
	read_ans(seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, seq, k.rcv, req, len), &b);
	tap_ok(b.len == 0 && b.th.tcp_flags == RTE_TCP_ACK_FLAG &&
		       rte_be_to_cpu_32(b.th.recv_ack) == k.snd,
		"a late copy after that ACK gets a bare ACK");
	tap_eq_int(rte_ring_count(H.port.ring), 1, "  and is still not forwarded");
	/* The next request on the connection is a new one. */
	mint(4243, tok, path);
	snprintf(req, sizeof(req),
		"POST %s HTTP/1.1\r\nHost: s\r\nX-Flash-Token: %s\r\nContent-Length: 0\r\n\r\n", path,
		tok);
	send_req(&k, req, &a);
	tap_ok(strncmp(a.text, "HTTP/1.1 202 ", 13) == 0, "the next reserve there: 202");
	tap_eq_int(rte_ring_count(H.port.ring), 2, "  forwarded: two in all");
	while (rte_ring_sc_dequeue_elem(H.port.ring, &rec, sizeof(rec)) == 0)
		;
}

static void
test_rfc5961(void)
{
	struct kc k;
	struct ans a;

	connect_from(&k, EDGE_IP);
	send_req(&k, healthz, &a);
	seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0);

	uint64_t oow = kept(DP_KEPT_OUT_OF_WINDOW), ch = kept(DP_KEPT_CHALLENGE_ACK);

	/* RFC 9293 3.10.7.4: a segment outside the window gets an ACK and is dropped. */
	read_ans(seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k.snd + 100000, k.rcv, healthz,
			 (uint16_t)strlen(healthz)),
		&a);
	tap_ok(a.len == 0 && a.th.tcp_flags == RTE_TCP_ACK_FLAG &&
		       rte_be_to_cpu_32(a.th.sent_seq) == k.rcv &&
		       rte_be_to_cpu_32(a.th.recv_ack) == k.snd,
		"data outside the window: <SEQ=SND.NXT><ACK=RCV.NXT><ACK>, not answered");
	tap_eq_int(kept(DP_KEPT_OUT_OF_WINDOW) - oow, 1, "  counted as out_of_window");
	tap_ok(seg(&k, RTE_TCP_RST_FLAG, k.snd + 100000, 0, NULL, 0) == NULL,
		"a RST outside the window is dropped");
	/* RFC 5961 3.2: a RST in the window but not at RCV.NXT gets a challenge ACK. */
	read_ans(seg(&k, RTE_TCP_RST_FLAG, k.snd + 10, 0, NULL, 0), &a);
	tap_ok(a.th.tcp_flags == RTE_TCP_ACK_FLAG && rte_be_to_cpu_32(a.th.sent_seq) == k.rcv &&
		       rte_be_to_cpu_32(a.th.recv_ack) == k.snd,
		"a RST in the window, not at RCV.NXT: a challenge ACK (RFC 5961 3.2)");
	/* RFC 5961 4.2: a SYN on an established connection gets a challenge ACK. */
	struct pb_tcp t = { .src_ip = k.ip, .sport = k.sport, .seq = 12345,
		.flags = RTE_TCP_SYN_FLAG, .mss = 1460 };

	read_ans(dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t)), &a);
	tap_ok(a.th.tcp_flags == RTE_TCP_ACK_FLAG && rte_be_to_cpu_32(a.th.recv_ack) == k.snd,
		"a SYN on the established connection: a challenge ACK, no SYN-ACK (RFC 5961 4.2)");
	/* RFC 5961 5.2: an ACK of what we never sent. */
	read_ans(seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k.snd, k.rcv + 5000, healthz,
			 (uint16_t)strlen(healthz)),
		&a);
	tap_ok(a.len == 0 && a.th.tcp_flags == RTE_TCP_ACK_FLAG,
		"a request acknowledging data we never sent: a challenge ACK, not answered");
	tap_eq_int(kept(DP_KEPT_CHALLENGE_ACK) - ch, 3, "  three challenge ACKs counted");
	/* Still usable. */
	send_req(&k, healthz, &a);
	tap_ok(is_kept_200(&a), "the connection still answers after all of that");
	seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0);

	/* Ahead of RCV.NXT but in the window: no reassembly, an ACK for what is missing. */
	read_ans(seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k.snd + 10, k.rcv, healthz,
			 (uint16_t)strlen(healthz)),
		&a);
	tap_ok(a.len == 0 && a.th.tcp_flags == RTE_TCP_ACK_FLAG &&
		       rte_be_to_cpu_32(a.th.recv_ack) == k.snd,
		"a segment ahead of RCV.NXT: an ACK of RCV.NXT, not answered");

	uint64_t in_use = kept(DP_KEPT_IN_USE), reset = kept(DP_KEPT_RESET);

	/* A RST at exactly RCV.NXT resets. */
	tap_ok(seg(&k, RTE_TCP_RST_FLAG, k.snd, 0, NULL, 0) == NULL,
		"a RST at exactly RCV.NXT is not answered");
	tap_ok(kept(DP_KEPT_IN_USE) == in_use - 1 && kept(DP_KEPT_RESET) == reset + 1,
		"  and closes the connection: its entry freed, counted as reset");
	send_req(&k, healthz, &a);
	tap_ok(a.th.tcp_flags & RTE_TCP_RST_FLAG,
		"  a request on it afterwards finds no entry and gets the stateless RST");
}

static void
test_close_and_pipelining(void)
{
	struct kc k;
	struct ans a;

	connect_from(&k, EDGE_IP);
	send_req(&k, "GET /healthz HTTP/1.1\r\nHost: s\r\nConnection: keep-alive, close\r\n\r\n",
		&a);
	tap_ok(is_closed_answer(&a), "a request with Connection: close: answered with "
				     "Connection: close and our FIN (RFC 9112 9.6)");
	connect_from(&k, EDGE_IP);
	send_req(&k, "GET /healthz HTTP/1.0\r\nHost: s\r\n\r\n", &a);
	tap_ok(is_closed_answer(&a), "an HTTP/1.0 request: answered and closed");

	uint64_t pipelined = kept(DP_KEPT_PIPELINED);
	char two[128];

	snprintf(two, sizeof(two), "%s%s", healthz, healthz);
	connect_from(&k, EDGE_IP);
	send_req(&k, healthz, &a);
	send_req(&k, two, &a);
	tap_ok(is_closed_answer(&a) && strncmp(a.text, "HTTP/1.1 200 ", 13) == 0 &&
		       rte_be_to_cpu_32(a.th.recv_ack) == k.snd,
		"two pipelined requests in a segment: the first answered, all acknowledged, closed");
	tap_eq_int(kept(DP_KEPT_PIPELINED) - pipelined, 1, "  counted as pipelined_closed");

	/* A request before the last answer was acknowledged is not taken. */
	uint64_t early = H.w->ctr.drops[DP_DROP_KEPT_EARLY];

	connect_from(&k, EDGE_IP);
	send_req(&k, healthz, &a);
	uint32_t unacked = rte_be_to_cpu_32(a.th.sent_seq);

	tap_ok(seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k.snd, unacked, healthz,
		       (uint16_t)strlen(healthz)) == NULL,
		"a request that does not acknowledge the last answer is dropped (sent again later)");
	tap_eq_int(H.w->ctr.drops[DP_DROP_KEPT_EARLY] - early, 1,
		"  counted as drop kept_request_before_ack");
	send_req(&k, healthz, &a);
	tap_ok(is_kept_200(&a), "  sent again with the ACK, it is answered");

	/* A malformed request ends the connection: its framing is lost. */
	send_req(&k, "GET /healthz HTTP/1.1\nHost: s\n\n", &a);
	tap_ok(strncmp(a.text, "HTTP/1.1 400 ", 13) == 0 && is_closed_answer(&a),
		"a malformed request: 400, Connection: close and FIN");
}

/*
 * Runs the sweep over the whole table; returns its frame to the peer port sport (NULL if
 * none), the others freed (earlier tests' connections have timers too).
 */
static struct rte_mbuf *
sweep_find(uint16_t sport)
{
	struct rte_mbuf *tx[16], *found = NULL;
	uint16_t port[16];

	for (int i = 0; i < 4; i++) {
		uint16_t n = pipeline_kept_sweep(H.w, tx, port, 16);

		for (uint16_t j = 0; j < n; j++) {
			if (pb_th(tx[j])->dst_port == rte_cpu_to_be_16(sport) && found == NULL &&
				port[j] == 0)
				found = tx[j];
			else
				rte_pktmbuf_free(tx[j]);
		}
	}
	return found;
}

static void
test_window_and_timers(void)
{
	struct kc k;
	struct ans a;
	uint64_t now = H.w->now_ms;

	/* The peer's window: 100 bytes; the healthz answer is longer. */
	connect_from(&k, EDGE_IP);
	k.win = 100;
	send_req(&k, healthz, &a);
	tap_ok(a.len == 100 && !(a.th.tcp_flags & RTE_TCP_FIN_FLAG),
		"a window of 100 bytes: the answer's first 100 bytes only (got %u)", a.len);

	char first[128];

	memcpy(first, a.text, 100);
	k.win = 0;
	k.rcv = rte_be_to_cpu_32(a.th.sent_seq) + 100;
	k.win = 64240;
	read_ans(seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0), &a);
	tap_ok(a.len > 0 && rte_be_to_cpu_32(a.th.sent_seq) == k.rcv &&
		       strstr(a.text, "{\"status\":\"ok\"}") != NULL,
		"  the window opened by the ACK: the rest follows (%u bytes)", a.len);
	k.rcv += a.len;

	/* Unacknowledged: the sweep sends it again after KEPT_RTO_MS. */
	send_req(&k, healthz, &a);

	H.w->now_ms = now + 100;
	tap_ok(sweep_find(k.sport) == NULL, "unacknowledged for 100 ms: nothing sent again yet");
	H.w->now_ms = now + CONN_RTO_MS + 1;

	struct rte_mbuf *again = sweep_find(k.sport);
	struct ans b;

	if (tap_ok(again != NULL, "after the RTO the sweep sends the answer again")) {
		read_ans(again, &b);
		tap_ok(b.len == a.len && memcmp(a.text, b.text, a.len) == 0 &&
			       b.th.sent_seq == a.th.sent_seq,
			"  the same bytes at the same sequence number");
	}
	seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0);

	/* Idle: our FIN, then the edge's FIN|ACK is acknowledged and the entry freed. */
	uint64_t idle = kept(DP_KEPT_IDLE_CLOSED), in_use = kept(DP_KEPT_IN_USE);

	H.w->now_ms = now + H.w->kept_idle_ms + 1000;

	struct rte_mbuf *fin = sweep_find(k.sport);

	tap_ok(kept(DP_KEPT_IDLE_CLOSED) > idle, "idle past kept_idle_timeout: closed");
	if (tap_ok(fin != NULL, "  with a FIN to the edge")) {
		read_ans(fin, &b);
		tap_ok(b.th.tcp_flags == (RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG) &&
			       rte_be_to_cpu_32(b.th.sent_seq) == k.rcv,
			"  FIN|ACK at SND.NXT");
	}
	read_ans(seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, k.snd, k.rcv + 1, NULL, 0), &b);
	tap_ok(b.th.tcp_flags == RTE_TCP_ACK_FLAG && rte_be_to_cpu_32(b.th.recv_ack) == k.snd + 1,
		"the edge's FIN|ACK is acknowledged");
	tap_ok(kept(DP_KEPT_IN_USE) < in_use, "  and the entry freed");
	H.w->now_ms = now;
}

/*
 * Sends healthz on a new connection of the edge with a window of 0: the answer is held back
 * (a bare ACK of the request comes). k->rcv is then SND.UNA (= SND.NXT).
 */
static bool
zero_window_request(struct kc *k)
{
	struct ans a;

	connect_from(k, EDGE_IP);
	k->shut = true;
	send_req(k, healthz, &a);
	k->rcv = rte_be_to_cpu_32(a.th.sent_seq);
	return a.len == 0 && a.th.tcp_flags == RTE_TCP_ACK_FLAG &&
	       rte_be_to_cpu_32(a.th.recv_ack) == k->snd;
}

/* Whether r (freed) is a zero-window probe of k: an ACK at SND.UNA - 1 without data. */
static bool
is_probe(struct rte_mbuf *r, const struct kc *k)
{
	struct ans a;

	return read_ans(r, &a) && a.len == 0 && a.th.tcp_flags == RTE_TCP_ACK_FLAG &&
	       rte_be_to_cpu_32(a.th.sent_seq) == k->rcv - 1 &&
	       rte_be_to_cpu_32(a.th.recv_ack) == k->snd;
}

/*
 * Ends the earlier tests' connections by their timers (idle FIN, then given up), so that
 * counters and the table's use below are this test's; the clock put back.
 */
static void
drain_table(void)
{
	uint64_t now = H.w->now_ms;
	struct rte_mbuf *tx[16];
	uint16_t port[16];

	for (int i = 0; i < 64 && H.w->conns->used != 0; i++) {
		H.w->now_ms += 20000;
		for (int j = 0; j < 4; j++) {
			uint16_t n = pipeline_kept_sweep(H.w, tx, port, 16);

			rte_pktmbuf_free_bulk(tx, n);
		}
	}
	H.w->now_ms = now;
}

/* Whether r is NULL (no frame); a frame is freed. */
static bool
none(struct rte_mbuf *r)
{
	rte_pktmbuf_free(r);
	return r == NULL;
}

/* k's entry in the table, or NULL. */
static struct conn *
conn_of(const struct kc *k)
{
	return conn_lookup(H.w->conns, rte_cpu_to_be_32(k->ip), rte_cpu_to_be_16(k->sport),
		rte_cpu_to_be_16(80));
}

/* RFC 9293 §3.8.6.1: a zero window that holds an answer back is probed until it opens. */
static void
test_zero_window(void)
{
	drain_table();
	tap_eq_int(H.w->conns->used, 0, "(the earlier tests' connections ended by their timers)");

	struct kc k;
	struct ans a;
	uint64_t now = H.w->now_ms, idle_ms = H.w->kept_idle_ms;
	uint64_t probes0 = kept(DP_KEPT_WINDOW_PROBES), gave_up = kept(DP_KEPT_GAVE_UP);
	uint64_t t = now;
	bool all = true, quiet = true;
	unsigned n = 0;

	H.w->kept_idle_ms = 60000;
	tap_ok(zero_window_request(&k), "a request with the edge's window 0: only its ACK comes");
	tap_ok(none(sweep_find(k.sport)), "  no probe before the RTO");
	/* Probes answered with the window still shut: more of them than CONN_RETRIES, each
	 * after twice the wait (at most 2^CONN_RETRIES RTOs), and the connection stays. */
	for (unsigned i = 0; i < 8; i++) {
		unsigned shift = i < CONN_RETRIES ? i : CONN_RETRIES;

		t += ((uint64_t)CONN_RTO_MS << shift) - 1;
		H.w->now_ms = t;
		quiet &= none(sweep_find(k.sport));
		H.w->now_ms = ++t;
		all &= is_probe(sweep_find(k.sport), &k);
		n++;
		/* The edge's TCP answers the probe with an ACK of its window, still 0. */
		quiet &= none(seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0));
	}
	tap_ok(all, "%u probes, each <SEQ=SND.UNA-1><ACK=RCV.NXT><CTL=ACK> without data", n);
	tap_ok(quiet, "  none before its time (RTO, doubling), and the ACKs of a shut window get none");
	tap_eq_int(kept(DP_KEPT_WINDOW_PROBES) - probes0, n, "  counted window_probes");
	tap_ok(conn_of(&k) != NULL && kept(DP_KEPT_GAVE_UP) == gave_up,
		"  answered: the connection stays after more than CONN_RETRIES of them");
	/* The window opens: the answer goes, whole, at SND.UNA. */
	k.shut = false;
	read_ans(seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0), &a);
	tap_ok(is_kept_200(&a) && rte_be_to_cpu_32(a.th.sent_seq) == k.rcv,
		"the edge's window opens: the held answer follows, 200, kept");
	k.rcv += a.len;
	tap_ok(send_req(&k, healthz, &a) && is_kept_200(&a), "  and the connection goes on");
	none(seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0));
	none(seg(&k, RTE_TCP_RST_FLAG, k.snd, 0, NULL, 0)); /* ended: no timers for the rest */

	/* Answered probes, the window shut for kept_idle_timeout: reset, the entry freed. */
	uint64_t zr = kept(DP_KEPT_WINDOW_RESET), t0 = ++t;

	H.w->now_ms = t;
	zero_window_request(&k);
	while (t + 100 < t0 + H.w->kept_idle_ms) {
		t += 100;
		H.w->now_ms = t;

		struct rte_mbuf *r = sweep_find(k.sport);

		if (!none(r))
			none(seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0));
	}
	tap_ok(conn_of(&k) != NULL && kept(DP_KEPT_WINDOW_RESET) == zr,
		"a window shut for just under kept_idle_timeout, the probes answered: not yet reset");
	H.w->now_ms = t = t0 + H.w->kept_idle_ms;
	read_ans(sweep_find(k.sport), &a);
	tap_ok(a.th.tcp_flags == RTE_TCP_RST_FLAG && rte_be_to_cpu_32(a.th.sent_seq) == k.rcv,
		"  at kept_idle_timeout: RST at SND.NXT");
	tap_eq_int(kept(DP_KEPT_WINDOW_RESET) - zr, 1, "  counted zero_window_reset");
	tap_ok(conn_of(&k) == NULL, "  and the entry freed");

	/* A peer that answers no probe: given up after CONN_RETRIES of them. */
	gave_up = kept(DP_KEPT_GAVE_UP);
	H.w->now_ms = ++t;
	zero_window_request(&k);
	n = 0;

	uint8_t last = 0;

	for (unsigned i = 0; i < 16 && conn_of(&k) != NULL; i++) {
		t += (uint64_t)CONN_RTO_MS << (i < CONN_RETRIES ? i : CONN_RETRIES);
		H.w->now_ms = t;

		struct rte_mbuf *r = sweep_find(k.sport);

		if (r != NULL) {
			last = pb_th(r)->tcp_flags;
			n += last == RTE_TCP_ACK_FLAG;
		}
		rte_pktmbuf_free(r);
	}
	tap_eq_int(n, CONN_RETRIES, "a silent peer: CONN_RETRIES probes");
	tap_ok(last == RTE_TCP_RST_FLAG && conn_of(&k) == NULL &&
		       kept(DP_KEPT_GAVE_UP) - gave_up == 1,
		"  then a RST, the entry freed, counted gave_up");
	drain_table();
	H.w->now_ms = now;
	H.w->kept_idle_ms = idle_ms;
}

/* A PROXY v2 header (TCP over IPv4) naming client src. */
static uint16_t
proxy_v2(uint8_t *h, uint32_t src)
{
	static const uint8_t sig[12] = { 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55,
		0x49, 0x54, 0x0a };
	uint32_t s_be = rte_cpu_to_be_32(src), d_be = rte_cpu_to_be_32(PB_DP_IP);

	memcpy(h, sig, 12);
	h[12] = 0x21;
	h[13] = 0x11;
	h[14] = 0;
	h[15] = 12;
	memcpy(h + 16, &s_be, 4);
	memcpy(h + 20, &d_be, 4);
	h[24] = 0x9c;
	h[25] = 0x40;
	h[26] = 0;
	h[27] = 80;
	return 28;
}

/* A PROXY v2 header (TCP over IPv6) naming client src[0..16). */
static uint16_t
proxy_v2_6(uint8_t *h, const uint8_t src[16])
{
	uint16_t n = proxy_v2(h, 0);

	(void)n;
	h[13] = 0x21;
	h[15] = 36;
	memcpy(h + 16, src, 16);
	memset(h + 32, 0, 16);
	h[47] = 2; /* ::2, ours */
	h[48] = 0x9c;
	h[49] = 0x40;
	h[50] = 0;
	h[51] = 80;
	return 52;
}

/* A reserve request of user into req (NUL-ended); returns its length. */
static uint16_t
reserve_req(uint64_t user, char *req, size_t cap)
{
	char tok[TOK_BUF_SIZE], path[128];

	mint(user, tok, path);
	return (uint16_t)snprintf(req, cap,
		"POST %s HTTP/1.1\r\nHost: s\r\nX-Flash-Token: %s\r\nContent-Length: 0\r\n\r\n",
		path, tok);
}

/* The PROXY header of a kept connection names its client: rules and limits see that address. */
static void
test_proxy(void)
{
	static const char *const block[] = { "ip 198.19.7.7", NULL };
	struct dp_limits limits = { .ip = { 0, 0 }, .user = { 1000, 1000 },
		.device = { 1000, 1000 }, .event_forward = { 0, 0 } };
	struct dp_event_cfg ev[1] = { { .id = DPH_EVENT_OPEN, .name = "open",
		.starts_at_ms = H.w->now_ms - 1000, .ends_at_ms = H.w->now_ms + 3600000,
		.stock = 10 } };
	struct wire_reserve rec;
	struct kc k;
	struct ans a;
	uint8_t seg_buf[1024];
	char req[768];
	uint64_t alone = kept(DP_KEPT_PROXY_HEADERS);

	dph_publish(&H, ev, NULL, 1, block, &limits);
	/* HAProxy's way: the header alone in the first segment, then the requests. */
	connect_from(&k, EDGE_IP);
	uint16_t hl = proxy_v2(seg_buf, RTE_IPV4(198, 19, 7, 7));

	read_ans(seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k.snd, k.rcv, (char *)seg_buf, hl),
		&a);
	tap_ok(a.len == 0 && a.th.tcp_flags == RTE_TCP_ACK_FLAG &&
		       rte_be_to_cpu_32(a.th.recv_ack) == k.snd + hl,
		"a PROXY v2 header alone in the first segment: acknowledged, nothing answered");
	tap_eq_int(kept(DP_KEPT_PROXY_HEADERS) - alone, 1, "  counted as kept proxy_alone");
	k.snd += hl;
	reserve_req(5151, req, sizeof(req));
	send_req(&k, req, &a);
	tap_ok(strncmp(a.text, "HTTP/1.1 403 ", 13) == 0 && !strstr(a.text, "Connection:"),
		"  a reserve after it is refused 403: the header's client 198.19.7.7 is blocked, "
		"the connection kept");
	seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0);
	send_req(&k, healthz, &a);
	tap_ok(is_kept_200(&a), "  GET /healthz on it still answered, kept");
	seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0);

	/* The header and the request in one segment; another client: admitted. */
	connect_from(&k, EDGE_IP);
	hl = proxy_v2(seg_buf, RTE_IPV4(198, 19, 7, 8));
	uint16_t rl = reserve_req(5152, req, sizeof(req));

	memcpy(seg_buf + hl, req, rl);
	read_ans(seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k.snd, k.rcv, (char *)seg_buf,
			 (uint16_t)(hl + rl)),
		&a);
	tap_ok(strncmp(a.text, "HTTP/1.1 202 ", 13) == 0 && !strstr(a.text, "Connection:") &&
		       rte_be_to_cpu_32(a.th.recv_ack) == k.snd + hl + rl,
		"a PROXY header and a reserve in one segment: 202 for 198.19.7.8, kept");
	if (tap_ok(rte_ring_sc_dequeue_elem(H.port.ring, &rec, sizeof(rec)) == 0,
		    "  the reservation went to the bridge"))
		tap_eq_int(rec.client_ipv4, RTE_IPV4(198, 19, 7, 8),
			"  with the header's client address");
	k.snd += hl + rl;
	k.rcv = rte_be_to_cpu_32(a.th.sent_seq) + a.len;
	/* A PROXY header after the first bytes is no PROXY header: bad HTTP, closed. */
	hl = proxy_v2(seg_buf, RTE_IPV4(198, 19, 7, 9));
	read_ans(seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k.snd, k.rcv, (char *)seg_buf, hl),
		&a);
	tap_ok(strncmp(a.text, "HTTP/1.1 400 ", 13) == 0 && is_closed_answer(&a),
		"a PROXY header later on the connection: 400 and closed");

	/* A malformed header: reset, the entry freed. */
	uint64_t in_use = kept(DP_KEPT_IN_USE);

	connect_from(&k, EDGE_IP);
	hl = proxy_v2(seg_buf, RTE_IPV4(198, 19, 7, 7));
	seg_buf[13] = 0x71; /* no such family */
	read_ans(seg(&k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k.snd, k.rcv, (char *)seg_buf, hl),
		&a);
	tap_ok(a.th.tcp_flags & RTE_TCP_RST_FLAG, "a malformed PROXY header: the connection reset");
	tap_eq_int(kept(DP_KEPT_IN_USE), in_use, "  and its entry freed");
	dph_publish(&H, ev, NULL, 1, NULL, &limits);
}

/* A segment from the peer of k, built and not yet sent (for a burst of several). */
static struct rte_mbuf *
frame_of(const struct kc *k, uint8_t flags, uint32_t seq, uint32_t ack, const char *payload,
	uint16_t len)
{
	struct pb_tcp t = { .src_ip = k->ip, .sport = k->sport, .seq = seq, .ack = ack,
		.flags = flags, .payload = payload, .payload_len = len, .win = k->win };

	return pb_tcp_frame(dph_mbuf(&H), &t);
}

/* Whether frame r goes to k's port with a payload starting with text. */
static bool
is_to(struct rte_mbuf *r, const struct kc *k, const char *text)
{
	uint16_t len;
	const char *p = pb_payload(r, &len);

	return pb_th(r)->dst_port == rte_cpu_to_be_16(k->sport) && len >= strlen(text) &&
	       memcmp(p, text, strlen(text)) == 0;
}

/*
 * Issue 25, 1: one receive burst holds a request on kept connection A (routed a frame late),
 * then A's RST at RCV.NXT, which frees A's entry, then the first request of a new connection B,
 * which takes the same entry (the free stack is LIFO): A's answer must not become B's.
 */
static void
test_rst_then_new_connection(void)
{
	static const char nope[] = "GET /nope-of-a HTTP/1.1\r\nHost: s\r\n\r\n";
	uint16_t nl = (uint16_t)strlen(nope), hl = (uint16_t)strlen(healthz);
	struct rte_mbuf *in[3], *tx[3 * PIPELINE_TX_PER_RX];
	struct kc a, b;
	struct ans r;

	drain_table();
	connect_from(&a, EDGE_IP);
	send_req(&a, healthz, &r);
	none(seg(&a, RTE_TCP_ACK_FLAG, a.snd, a.rcv, NULL, 0));
	struct conn *entry = conn_of(&a);

	connect_from(&b, EDGE_IP);
	in[0] = frame_of(&a, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, a.snd, a.rcv, nope, nl);
	in[1] = frame_of(&a, RTE_TCP_RST_FLAG, a.snd + nl, 0, NULL, 0);
	in[2] = frame_of(&b, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, b.snd, b.rcv, healthz, hl);

	uint16_t n = pipeline_burst(H.w, 0, in, 3, tx);
	bool to_a = false, b_ok = false;

	for (uint16_t i = 0; i < n; i++) {
		to_a |= pb_th(tx[i])->dst_port == rte_cpu_to_be_16(a.sport);
		b_ok |= is_to(tx[i], &b, "HTTP/1.1 200 ") &&
			rte_be_to_cpu_32(pb_th(tx[i])->sent_seq) == b.rcv &&
			rte_be_to_cpu_32(pb_th(tx[i])->recv_ack) == b.snd + hl;
	}
	rte_pktmbuf_free_bulk(tx, n);
	tap_ok(entry != NULL && conn_of(&b) == entry && conn_of(&a) == NULL,
		"a request held on A, A's RST at RCV.NXT, B's first request, one burst: B has A's "
		"entry");
	tap_ok(b_ok && !to_a && n == 1, "  B gets B's answer (200), A's is dropped (%u frames)", n);
	/* B's request again (lost answer): the kept answer is B's, never A's 404. */
	tap_ok(read_ans(seg(&b, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, b.snd, b.rcv, healthz, hl),
		       &r) &&
		       strncmp(r.text, "HTTP/1.1 200 ", 13) == 0,
		"  B's retransmitted request gets B's kept answer: %.12s", r.text);
}

/*
 * Issue 25, 3: the peer's FIN in the same burst as a request still held: the answer goes
 * first, our FIN after it, and a resend copies the answer from its first byte.
 */
static void
test_fin_behind_held_request(void)
{
	uint16_t hl = (uint16_t)strlen(healthz);
	struct rte_mbuf *in[2], *tx[2 * PIPELINE_TX_PER_RX];
	struct kc k;
	struct ans r;

	drain_table();
	connect_from(&k, EDGE_IP);
	send_req(&k, healthz, &r);
	none(seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0));
	in[0] = frame_of(&k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k.snd, k.rcv, healthz, hl);
	in[1] = frame_of(&k, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG, k.snd + hl, k.rcv, NULL, 0);

	uint16_t n = pipeline_burst(H.w, 0, in, 2, tx);

	read_ans(n >= 1 ? tx[0] : NULL, &r);
	for (uint16_t i = 1; i < n; i++)
		rte_pktmbuf_free(tx[i]);
	tap_ok(n == 1 && strncmp(r.text, "HTTP/1.1 200 ", 13) == 0 && is_closed_answer(&r) &&
		       rte_be_to_cpu_32(r.th.sent_seq) == k.rcv &&
		       rte_be_to_cpu_32(r.th.recv_ack) == k.snd + hl + 1,
		"a request and the peer's FIN in one burst: the answer, then our FIN on it, "
		"acknowledging both (%u frames, seq %+d)", n,
		(int)(rte_be_to_cpu_32(r.th.sent_seq) - k.rcv));

	/* Unacknowledged: the timer sends it again, from the answer's first byte. */
	uint16_t len = r.len;
	uint64_t now = H.w->now_ms;

	H.w->now_ms += CONN_RTO_MS + 1;
	read_ans(sweep_find(k.sport), &r);
	H.w->now_ms = now;
	tap_ok(strncmp(r.text, "HTTP/1.1 200 ", 13) == 0 && r.len == len &&
		       rte_be_to_cpu_32(r.th.sent_seq) == k.rcv &&
		       (r.th.tcp_flags & RTE_TCP_FIN_FLAG),
		"  sent again by the timer: the same bytes from the answer's start, FIN after "
		"(\"%.8s\", seq %+d)", r.text, (int)(rte_be_to_cpu_32(r.th.sent_seq) - k.rcv));
	k.snd += hl + 1;
	k.rcv += len + 1;
	none(seg(&k, RTE_TCP_ACK_FLAG, k.snd, k.rcv, NULL, 0));
	tap_ok(conn_of(&k) == NULL, "  our FIN acknowledged: the entry freed");
}

/* The index slot that holds k's entry (its home slot, conn_hash(), or one past it). */
static uint32_t
slot_of(const struct kc *k)
{
	const struct conn_table *t = H.w->conns;
	const struct conn *c = conn_of(k);

	for (uint32_t i = 0; c != NULL && i <= t->mask; i++)
		if (t->slot[i] != 0 && &t->e[t->slot[i] - 1] == c)
			return i;
	return CONN_NO_SLOT;
}

/* k's home index slot: where conn_lookup() and the look-ahead start. */
static uint32_t
home_of(const struct kc *k)
{
	return conn_hash(H.w->conns, rte_cpu_to_be_32(k->ip), rte_cpu_to_be_16(k->sport),
		rte_cpu_to_be_16(80));
}

/* A kept connection from the trusted edge on source port sport, its first request answered. */
static bool
open_kept(struct kc *k, uint16_t sport)
{
	uint16_t next = next_port;
	struct ans a;
	bool ok;

	next_port = sport;
	ok = connect_from(k, EDGE_IP) && send_req(k, healthz, &a) && is_kept_200(&a);
	next_port = next;
	return ok && conn_of(k) != NULL;
}

/* The frame of tx[0..n) sent to k (its address and port), or NULL; *count: how many. */
static struct rte_mbuf *
tx_to(struct rte_mbuf **tx, uint16_t n, const struct kc *k, unsigned *count)
{
	struct rte_mbuf *r = NULL;

	*count = 0;
	for (uint16_t i = 0; i < n; i++)
		if (pb_ip(tx[i])->dst_addr == rte_cpu_to_be_32(k->ip) &&
			pb_th(tx[i])->dst_port == rte_cpu_to_be_16(k->sport)) {
			r = tx[i];
			++*count;
		}
	return r;
}

/*
 * Whether r is k's kept 200 to a healthz request sent at k->snd (then k moves past both); r
 * is not freed.
 */
static bool
kept_answered(struct rte_mbuf *r, struct kc *k)
{
	uint16_t len;
	const char *p = r != NULL ? pb_payload(r, &len) : NULL;
	struct rte_tcp_hdr *th = r != NULL ? pb_th(r) : NULL;
	uint32_t hl = (uint32_t)strlen(healthz);

	if (r == NULL || len < 13 || memcmp(p, "HTTP/1.1 200 ", 13) != 0 ||
		memmem(p, len, "Connection:", 11) != NULL ||
		th->tcp_flags != (RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG) ||
		rte_be_to_cpu_32(th->sent_seq) != k->rcv ||
		rte_be_to_cpu_32(th->recv_ack) != k->snd + hl)
		return false;
	k->snd += hl;
	k->rcv += len;
	return true;
}

/* Whether r is a stateless 200 to a request: Connection: close, and our FIN. */
static bool
closed_answered(struct rte_mbuf *r)
{
	uint16_t len;
	const char *p = r != NULL ? pb_payload(r, &len) : NULL;

	return r != NULL && len >= 13 && memcmp(p, "HTTP/1.1 200 ", 13) == 0 &&
	       memmem(p, len, "\r\nConnection: close\r\n", 21) != NULL &&
	       (pb_th(r)->tcp_flags & RTE_TCP_FIN_FLAG);
}

#define AHEAD_CHAIN 3 /* connections of one home slot */
#define AHEAD_OTHER 6 /* and of any */

/*
 * Issue 30: the look-ahead's index slot and trusted-edge decision, handed down to tcp_input()
 * (pipeline.c, kept_ahead()), find the same connection as tcp_input()'s own. One burst of
 * requests on kept connections, three of which share a home slot (two stored past it), with
 * frames the look-ahead reads as no trusted edge's between them: a request with IP options
 * (dropped, as before, its connection untouched), an untrusted client's request from the same
 * port as a kept connection (answered statelessly, kept nowhere), and a RST that frees the
 * home slot's second entry, moving the third into its slot after the look-ahead read the
 * third's frame. Each request is answered on its own connection.
 */
static void
test_look_ahead_burst(void)
{
	uint16_t hl = (uint16_t)strlen(healthz);
	struct kc ch[AHEAD_CHAIN], ot[AHEAD_OTHER], u;
	struct rte_mbuf *in[16], *tx[16 * PIPELINE_TX_PER_RX];
	uint16_t port = 50000, nin = 0;
	unsigned cnt;
	bool ok = true;

	drain_table();
	/* Source ports whose 4-tuples share one home slot, in the order they are stored. */
	for (int i = 0; i < AHEAD_CHAIN && ok; port++) {
		struct kc probe = { .ip = EDGE_IP, .sport = port };

		if (i == 0 || home_of(&probe) == home_of(&ch[0]))
			ok = open_kept(&ch[i++], port);
	}
	for (int i = 0; i < AHEAD_OTHER && ok; i++)
		ok = open_kept(&ot[i], port++);
	if (!tap_ok(ok, "(%d kept connections opened, 3 of one home slot)",
		    AHEAD_CHAIN + AHEAD_OTHER))
		return;
	tap_ok(slot_of(&ch[1]) != home_of(&ch[1]) && slot_of(&ch[2]) != home_of(&ch[2]),
		"  two of them stored past their home slot (%u, %u from home %u)", slot_of(&ch[1]),
		slot_of(&ch[2]), home_of(&ch[0]));
	/* An untrusted client on ot[1]'s source port, its handshake done. */
	uint16_t next = next_port;

	next_port = ot[1].sport;
	connect_from(&u, UNTRUSTED_IP);
	next_port = next;

	uint64_t opened = kept(DP_KEPT_OPENED), opts = H.w->ctr.drops[DP_DROP_IP_OPTIONS];
	struct conn *third = conn_of(&ch[2]);
	struct pb_tcp with_opts = { .src_ip = EDGE_IP, .sport = ot[0].sport, .seq = ot[0].snd,
		.ack = ot[0].rcv, .flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
		.payload = healthz, .payload_len = hl, .ihl = 6 };
	uint8_t req = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;

	in[nin++] = frame_of(&ch[0], req, ch[0].snd, ch[0].rcv, healthz, hl);
	in[nin++] = pb_tcp_frame(dph_mbuf(&H), &with_opts);
	in[nin++] = frame_of(&ch[1], RTE_TCP_RST_FLAG, ch[1].snd, 0, NULL, 0);
	in[nin++] = frame_of(&u, req, u.snd, u.rcv, healthz, hl);
	in[nin++] = frame_of(&ch[2], req, ch[2].snd, ch[2].rcv, healthz, hl);
	for (int i = 1; i < AHEAD_OTHER; i++)
		in[nin++] = frame_of(&ot[i], req, ot[i].snd, ot[i].rcv, healthz, hl);

	uint16_t n = pipeline_burst(H.w, 0, in, nin, tx);

	tap_ok(kept_answered(tx_to(tx, n, &ch[0], &cnt), &ch[0]) && cnt == 1,
		"one burst: the request on the home slot's first connection answered on it");
	tap_ok(kept_answered(tx_to(tx, n, &ch[2], &cnt), &ch[2]) && cnt == 1,
		"  the third's, read ahead before the RST moved its entry, answered on it");
	tap_ok(conn_of(&ch[2]) == third &&
		       slot_of(&ch[2]) == ((home_of(&ch[2]) + 1) & H.w->conns->mask),
		"  (its entry is the one past the home slot now)");
	tap_ok(conn_of(&ch[1]) == NULL && tx_to(tx, n, &ch[1], &cnt) == NULL,
		"  the second's RST freed its entry, unanswered");
	ok = true;
	for (int i = 1; i < AHEAD_OTHER; i++)
		ok &= kept_answered(tx_to(tx, n, &ot[i], &cnt), &ot[i]) && cnt == 1;
	tap_ok(ok, "  the %d others' requests answered each on its own connection",
		AHEAD_OTHER - 1);
	tap_ok(tx_to(tx, n, &ot[0], &cnt) == NULL &&
		       H.w->ctr.drops[DP_DROP_IP_OPTIONS] == opts + 1,
		"  the request with IP options dropped (ip_options), as without kept connections");
	tap_ok(closed_answered(tx_to(tx, n, &u, &cnt)) && cnt == 1,
		"  the untrusted client's request from a kept connection's port: answered "
		"statelessly (Connection: close, FIN)");
	tap_eq_int(kept(DP_KEPT_OPENED), opened, "  no entry opened in the burst");
	tap_ok(n == AHEAD_CHAIN - 1 + AHEAD_OTHER, "  one frame each, nothing else (%u)", n);
	rte_pktmbuf_free_bulk(tx, n);
	/* The dropped request, sent again without options, finds its connection unchanged. */
	struct rte_mbuf *r = seg(&ot[0], req, ot[0].snd, ot[0].rcv, healthz, hl);

	tap_ok(kept_answered(r, &ot[0]),
		"  the dropped request again, without options: its connection's kept answer");
	rte_pktmbuf_free(r);
}

/* Frame m, a TCP segment of the worker's IPv4 address, into tcp_input() with ahead. */
static int
tcp_input_of(struct rte_mbuf *m, uint32_t ahead, struct tcp_pending *p)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);

	return tcp_input(
		H.w, &H.w->ports[0], m, eth, ip, rte_be_to_cpu_16(ip->total_length), p, ahead);
}

/* k's request through tcp_input() with ahead and answered: the answer's frame, or NULL. */
static struct rte_mbuf *
input_and_answer(const struct kc *k, uint32_t ahead, struct conn **c)
{
	uint16_t hl = (uint16_t)strlen(healthz);
	struct rte_mbuf *m = frame_of(
		k, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k->snd, k->rcv, healthz, hl);
	struct rte_mbuf *tx[PIPELINE_TX_PER_RX];
	struct tcp_pending p;
	int rc = tcp_input_of(m, ahead, &p);

	*c = NULL;
	if (rc != TCP_PENDING) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	*c = p.c;

	uint16_t n = tcp_answer_pending(H.w, &p, tx);

	if (n > 1)
		rte_pktmbuf_free_bulk(tx + 1, n - 1u);
	return n != 0 ? tx[0] : NULL;
}

/*
 * Issue 30: tcp_input() told the look-ahead's slot (as pipeline_burst() hands it down) and
 * told nothing (CONN_NO_SLOT: a frame kept_ahead() did not read, which tcp_input() checks
 * itself) takes each request to the same kept connection, for three connections of one home
 * slot; and an untrusted client's request told nothing is answered statelessly.
 */
static void
test_look_ahead_or_not(void)
{
	struct kc ch[AHEAD_CHAIN], u;
	uint16_t port = 51000;
	struct conn *c;
	struct rte_mbuf *r;
	bool ok = true, same = true, told = true;

	drain_table();
	for (int i = 0; i < AHEAD_CHAIN && ok; port++) {
		struct kc probe = { .ip = EDGE_IP, .sport = port };

		if (i == 0 || home_of(&probe) == home_of(&ch[0]))
			ok = open_kept(&ch[i++], port);
	}
	if (!tap_ok(ok, "(%d kept connections of one home slot opened)", AHEAD_CHAIN))
		return;
	for (int i = 0; i < AHEAD_CHAIN; i++) {
		r = input_and_answer(&ch[i], CONN_NO_SLOT, &c);
		same &= c != NULL && c == conn_of(&ch[i]) && kept_answered(r, &ch[i]);
		rte_pktmbuf_free(r);
		r = input_and_answer(&ch[i], home_of(&ch[i]), &c);
		told &= c != NULL && c == conn_of(&ch[i]) && kept_answered(r, &ch[i]);
		rte_pktmbuf_free(r);
	}
	tap_ok(same, "tcp_input() told no slot: each request on its own kept connection, answered");
	tap_ok(told, "  told the look-ahead's slot: the same connections, answered");

	uint16_t next = next_port;

	next_port = ch[1].sport;
	connect_from(&u, UNTRUSTED_IP);
	next_port = next;
	r = input_and_answer(&u, CONN_NO_SLOT, &c);
	tap_ok(c == NULL && closed_answered(r),
		"  an untrusted client's request from a kept connection's port, told no slot: "
		"answered statelessly");
	rte_pktmbuf_free(r);

	/* A kept connection is a trusted edge's: its request's X-Forwarded-For names the
	 * client (req_parse() told so by kept_input(), not asking edge.h again). */
	static const char xff[] =
		"GET /healthz HTTP/1.1\r\nHost: s\r\nX-Forwarded-For: 203.0.113.7\r\n\r\n";
	uint64_t by_xff = H.w->ctr.client[DP_CLIENT_XFF];
	struct ans a;

	send_req(&ch[0], xff, &a);
	tap_ok(is_kept_200(&a) && H.w->ctr.client[DP_CLIENT_XFF] == by_xff + 1,
		"  a kept connection's request with X-Forwarded-For: its client taken from it");
}

/*
 * Issue 25, 2: behind an L4 edge each client connection takes an entry with its PROXY header,
 * before any request: one client address holds at most kept_per_client entries, and an entry
 * that carries no request is closed after kept_first_request_timeout.
 */
static void
test_per_client_bound(void)
{
	enum { BOUND = 3 };
	struct kc k[BOUND + 1], other;
	struct ans a;
	uint8_t hdr[64];
	uint64_t limit = kept(DP_KEPT_CLIENT_LIMIT), unused = kept(DP_KEPT_NO_REQUEST);
	uint32_t used;
	bool all = true;
	int got = 0;

	drain_table();
	H.w->kept_per_client = BOUND;
	H.w->kept_first_ms = 2000; /* below kept_idle_timeout (5 s here) */
	/* One client opens connections through the edge until refused. */
	for (int i = 0; i <= BOUND; i++) {
		uint16_t hl = proxy_v2(hdr, RTE_IPV4(198, 19, 9, 1));

		connect_from(&k[i], EDGE_IP);
		read_ans(seg(&k[i], RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k[i].snd, k[i].rcv,
				 (char *)hdr, hl),
			&a);
		k[i].snd += hl;
		if (a.th.tcp_flags == RTE_TCP_ACK_FLAG && conn_of(&k[i]) != NULL)
			got++;
		else
			break;
	}
	tap_eq_int(got, BOUND,
		"one client's PROXY headers on new connections: kept_per_client (3) of them kept");
	tap_ok((a.th.tcp_flags & RTE_TCP_RST_FLAG) && conn_of(&k[BOUND]) == NULL,
		"  the next one is reset, its entry freed");
	tap_eq_int(kept(DP_KEPT_CLIENT_LIMIT) - limit, 1, "  counted kept client_limit");
	used = H.w->conns->used;
	tap_ok(used < H.w->conns->cap, "  the table is not full (%u of %u)", used,
		H.w->conns->cap);

	/* Another client still gets in, and is answered. */
	uint16_t hl = proxy_v2(hdr, RTE_IPV4(198, 19, 9, 2));

	connect_from(&other, EDGE_IP);
	read_ans(seg(&other, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, other.snd, other.rcv,
			 (char *)hdr, hl),
		&a);
	other.snd += hl;
	tap_ok(a.th.tcp_flags == RTE_TCP_ACK_FLAG && conn_of(&other) != NULL,
		"another client's PROXY header meanwhile: kept");
	tap_ok(send_req(&other, healthz, &a) && is_kept_200(&a), "  and its request answered");

	/* The first client's entries carried no request: closed after 2 s, the other kept. */
	uint64_t now = H.w->now_ms;
	struct rte_mbuf *tx[16];
	uint16_t port[16];

	H.w->now_ms = now + 1900;
	rte_pktmbuf_free_bulk(tx, pipeline_kept_sweep(H.w, tx, port, 16));
	for (int i = 0; i < BOUND; i++)
		all &= conn_of(&k[i]) != NULL && conn_of(&k[i])->state == CONN_ESTABLISHED;
	tap_ok(all, "entries without a request, 1.9 s after their PROXY header: still open");
	H.w->now_ms = now + 2000;
	rte_pktmbuf_free_bulk(tx, pipeline_kept_sweep(H.w, tx, port, 16));
	all = true;
	for (int i = 0; i < BOUND; i++)
		all &= conn_of(&k[i]) != NULL && conn_of(&k[i])->state == CONN_CLOSING;
	tap_ok(all && conn_of(&other)->state == CONN_ESTABLISHED,
		"  at kept_first_request_timeout (2 s): closed with our FIN; the one that asked "
		"stays");
	tap_eq_int(kept(DP_KEPT_NO_REQUEST) - unused, BOUND, "  counted kept no_request_closed");
	H.w->now_ms = now;
	drain_table();

	/* An IPv6 client is its /64 (as for the per-IP limit): other addresses of it share the
	 * bound, another /64 does not. */
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x77, [15] = 1 };
	bool kept6 = true;

	for (int i = 0; i <= BOUND; i++) {
		a6[15] = (uint8_t)(1 + i);
		hl = proxy_v2_6(hdr, a6);
		connect_from(&k[i], EDGE_IP);
		read_ans(seg(&k[i], RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, k[i].snd, k[i].rcv,
				 (char *)hdr, hl),
			&a);
		if (i < BOUND)
			kept6 &= a.th.tcp_flags == RTE_TCP_ACK_FLAG && conn_of(&k[i]) != NULL;
	}
	tap_ok(kept6 && (a.th.tcp_flags & RTE_TCP_RST_FLAG) && conn_of(&k[BOUND]) == NULL,
		"IPv6: three addresses of 2001:db8:77::/64 kept, a fourth of it reset");
	a6[5] = 0x78;
	hl = proxy_v2_6(hdr, a6);
	connect_from(&other, EDGE_IP);
	read_ans(seg(&other, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, other.snd, other.rcv,
			 (char *)hdr, hl),
		&a);
	tap_ok(a.th.tcp_flags == RTE_TCP_ACK_FLAG && conn_of(&other) != NULL,
		"  an address of 2001:db8:78::/64 meanwhile: kept");
	drain_table();
	H.w->kept_per_client = 0;
	H.w->kept_first_ms = 0;
}

/* The table full: a new connection falls back to Connection: close. */
static void
test_table_full(void)
{
	struct kc k[8];
	struct ans a;
	uint64_t full = kept(DP_KEPT_TABLE_FULL);
	unsigned free_n = H.w->conns->cap - H.w->conns->used;

	for (unsigned i = 0; i < free_n; i++) {
		connect_from(&k[0], EDGE_IP);
		send_req(&k[0], healthz, &a);
	}
	tap_eq_int(H.w->conns->used, H.w->conns->cap, "the table filled");
	connect_from(&k[1], EDGE_IP);
	send_req(&k[1], healthz, &a);
	tap_ok(strncmp(a.text, "HTTP/1.1 200 ", 13) == 0 && is_closed_answer(&a),
		"one more connection while full: answered with Connection: close and FIN");
	tap_eq_int(kept(DP_KEPT_TABLE_FULL) - full, 1, "  counted as table_full");
}

int
main(int argc, char **argv)
{
	char err[256];

	(void)argc;
	dph_init(&H, argv[0]);
	dph_admission_init(&H, 16);

	uint64_t now = H.w->now_ms;
	struct dp_event_cfg ev[1] = { { .id = DPH_EVENT_OPEN, .name = "open",
		.starts_at_ms = now - 1000, .ends_at_ms = now + 3600000, .stock = 10 } };
	struct dp_limits limits = { .ip = { 0, 0 }, .user = { 1000, 1000 },
		.device = { 1000, 1000 }, .event_forward = { 0, 0 } };

	dph_publish(&H, ev, NULL, 1, NULL, &limits);
	if (edge_trust_parse("198.18.0.1", &trust, err, sizeof(err)) != 0) {
		fprintf(stderr, "edge: %s\n", err);
		return 2;
	}
	H.w->edge = &trust;
	H.w->conns = conn_table_create(16, SOCKET_ID_ANY);
	H.w->ctr.kept[DP_KEPT_CAPACITY] = 16;
	H.w->kept_idle_ms = 5000;
	if (H.w->conns == NULL)
		return 2;

	unsigned in_use0 = rte_mempool_in_use_count(H.pool);

	test_several_requests();
	test_untrusted_stateless();
	test_retransmitted_reserve();
	test_rfc5961();
	test_close_and_pipelining();
	test_window_and_timers();
	test_zero_window();
	test_proxy();
	test_rst_then_new_connection();
	test_fin_behind_held_request();
	test_look_ahead_burst();
	test_look_ahead_or_not();
	test_per_client_bound();
	test_table_full();
	tap_eq_int(rte_mempool_in_use_count(H.pool), in_use0, "no mbuf leaked by the tests above");
	return tap_done();
}
