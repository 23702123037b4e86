/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet tests: frames built here go through pipeline_burst() and the answers
 * are checked field by field, as the client's kernel would read them.
 */
#include <string.h>

#include "tests/lib/dp_harness.h"
#include "tests/tap.h"

static struct dp_harness H;

/* Sends a SYN from sport with client_isn; returns our SYN-ACK (checked by the caller). */
static struct rte_mbuf *
syn(uint32_t isn, uint16_t sport, uint16_t mss, bool linux_opts)
{
	struct pb_tcp t = { .sport = sport, .seq = isn, .flags = RTE_TCP_SYN_FLAG, .mss = mss,
		.linux_opts = linux_opts };

	return dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t));
}

/* The cookie our SYN-ACK carries for (sport, isn); 0 and a failed check if there was none. */
static uint32_t
cookie_for(uint32_t isn, uint16_t sport)
{
	struct rte_mbuf *r = syn(isn, sport, 1460, true);
	uint32_t c = 0;

	if (r == NULL || pb_th(r)->tcp_flags != (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) {
		tap_ok(0, "the SYN from port %u gets a SYN-ACK, whose cookie the test uses", sport);
		rte_pktmbuf_free(r);
		return 0;
	}
	c = rte_be_to_cpu_32(pb_th(r)->sent_seq);
	rte_pktmbuf_free(r);
	return c;
}

/* Sends req on a connection with a valid cookie; returns the answer frame. */
static struct rte_mbuf *
request(const char *req, uint16_t sport)
{
	uint32_t isn = 1000u * sport;
	uint32_t c = cookie_for(isn, sport);

	return dph_one(&H, pb_request(dph_mbuf(&H), isn, c, req, sport));
}

static unsigned
http_status(struct rte_mbuf *r)
{
	uint16_t len;
	const char *p = pb_payload(r, &len);

	if (len < 12 || memcmp(p, "HTTP/1.1 ", 9) != 0)
		return 0;
	return (unsigned)((p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0'));
}

static bool
body_has(struct rte_mbuf *r, const char *needle)
{
	uint16_t len;
	const char *p = pb_payload(r, &len);

	return memmem(p, len, needle, strlen(needle)) != NULL;
}

static void
test_arp(void)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, cl[6] = PB_CL_MAC,
			     dp[6] = PB_DP_MAC;
	struct rte_mbuf *m = dph_mbuf(&H);
	struct rte_ether_hdr *eth = pb_eth(m, bcast, cl, RTE_ETHER_TYPE_ARP, 14 + 28 + 18);
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eth + 1);

	a->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = RTE_BE16(RTE_ARP_OP_REQUEST);
	memcpy(&a->arp_data.arp_sha, cl, 6);
	a->arp_data.arp_sip = rte_cpu_to_be_32(PB_CL_IP);
	a->arp_data.arp_tip = rte_cpu_to_be_32(PB_DP_IP);
	struct rte_mbuf *r = dph_one(&H, m);

	if (!tap_ok(r != NULL, "ARP request for our address is answered"))
		return;
	eth = rte_pktmbuf_mtod(r, struct rte_ether_hdr *);
	a = (struct rte_arp_hdr *)(eth + 1);
	tap_ok(a->arp_opcode == RTE_BE16(RTE_ARP_OP_REPLY), "ARP answer is a reply");
	tap_ok(memcmp(&a->arp_data.arp_sha, dp, 6) == 0, "ARP reply carries our MAC as sender");
	tap_ok(a->arp_data.arp_sip == rte_cpu_to_be_32(PB_DP_IP), "ARP reply sender IP is ours");
	tap_ok(memcmp(&a->arp_data.arp_tha, cl, 6) == 0 &&
		       a->arp_data.arp_tip == rte_cpu_to_be_32(PB_CL_IP),
		"ARP reply targets the asker");
	tap_ok(memcmp(&eth->dst_addr, cl, 6) == 0 && memcmp(&eth->src_addr, dp, 6) == 0,
		"ARP reply goes unicast from our MAC to the asker");
	tap_eq_int(rte_pktmbuf_data_len(r), 42, "ARP reply frame length");
	rte_pktmbuf_free(r);

	/* A request for someone else's address is not ours to answer. */
	m = dph_mbuf(&H);
	eth = pb_eth(m, bcast, cl, RTE_ETHER_TYPE_ARP, 14 + 28);
	a = (struct rte_arp_hdr *)(eth + 1);
	a->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = RTE_BE16(RTE_ARP_OP_REQUEST);
	a->arp_data.arp_tip = rte_cpu_to_be_32(RTE_IPV4(198, 18, 0, 99));
	uint64_t before = H.w->ctr.drops[DP_DROP_ARP_IGNORED];

	tap_ok(dph_one(&H, m) == NULL, "ARP request for another address is dropped");
	tap_eq_int(H.w->ctr.drops[DP_DROP_ARP_IGNORED] - before, 1, "  counted as arp_ignored");

	/* Truncated ARP. */
	m = dph_mbuf(&H);
	pb_eth(m, bcast, cl, RTE_ETHER_TYPE_ARP, 14 + 10);
	before = H.w->ctr.drops[DP_DROP_ARP_MALFORMED];
	tap_ok(dph_one(&H, m) == NULL, "truncated ARP is dropped");
	tap_eq_int(H.w->ctr.drops[DP_DROP_ARP_MALFORMED] - before, 1, "  counted as arp_malformed");
}

static struct rte_mbuf *
icmp_frame(uint8_t type, uint16_t payload, bool corrupt)
{
	static const uint8_t dp[6] = PB_DP_MAC, cl[6] = PB_CL_MAC;
	struct rte_mbuf *m = dph_mbuf(&H);
	uint16_t ip_len = (uint16_t)(20 + 8 + payload);
	struct rte_ether_hdr *eth = pb_eth(m, dp, cl, RTE_ETHER_TYPE_IPV4, (uint16_t)(14 + ip_len));
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)(ip + 1);

	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(ip_len);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_ICMP;
	ip->src_addr = rte_cpu_to_be_32(PB_CL_IP);
	ip->dst_addr = rte_cpu_to_be_32(PB_DP_IP);
	ip->hdr_checksum = rte_cpu_to_be_16((uint16_t)~pb_fold(pb_sum(ip, 20, 0)));
	ic->icmp_type = type;
	ic->icmp_ident = RTE_BE16(0x4242);
	ic->icmp_seq_nb = RTE_BE16(7);
	for (uint16_t i = 0; i < payload; i++)
		((uint8_t *)(ic + 1))[i] = (uint8_t)i;
	ic->icmp_cksum = rte_cpu_to_be_16((uint16_t)~pb_fold(pb_sum(ic, 8u + payload, 0)));
	if (corrupt)
		ic->icmp_cksum ^= 1;
	return m;
}

static void
test_icmp(void)
{
	struct rte_mbuf *r = dph_one(&H, icmp_frame(RTE_IP_ICMP_ECHO_REQUEST, 56, false));

	if (!tap_ok(r != NULL, "ICMP echo request is answered"))
		return;
	struct rte_ipv4_hdr *ip = pb_ip(r);
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)(ip + 1);
	bool payload_same = true;

	for (uint16_t i = 0; i < 56; i++)
		payload_same &= ((uint8_t *)(ic + 1))[i] == (uint8_t)i;
	tap_ok(ic->icmp_type == RTE_IP_ICMP_ECHO_REPLY && ic->icmp_code == 0, "echo reply type");
	tap_ok(ic->icmp_ident == RTE_BE16(0x4242) && ic->icmp_seq_nb == RTE_BE16(7) && payload_same,
		"echo reply keeps id, sequence and data");
	tap_ok(pb_fold(pb_sum(ic, 64, 0)) == 0xffff, "echo reply ICMP checksum is right");
	tap_ok(pb_ip_ok(ip), "echo reply IPv4 checksum is right");
	tap_ok(ip->src_addr == rte_cpu_to_be_32(PB_DP_IP) && ip->dst_addr == rte_cpu_to_be_32(PB_CL_IP),
		"echo reply addresses are swapped");
	rte_pktmbuf_free(r);

	uint64_t before = H.w->ctr.drops[DP_DROP_ICMP_CKSUM];

	tap_ok(dph_one(&H, icmp_frame(RTE_IP_ICMP_ECHO_REQUEST, 56, true)) == NULL,
		"ICMP with a bad checksum is dropped");
	tap_eq_int(H.w->ctr.drops[DP_DROP_ICMP_CKSUM] - before, 1, "  counted as icmp_checksum");
	before = H.w->ctr.drops[DP_DROP_ICMP_UNSUPPORTED];
	tap_ok(dph_one(&H, icmp_frame(13, 12, false)) == NULL, "ICMP timestamp request is dropped");
	tap_eq_int(H.w->ctr.drops[DP_DROP_ICMP_UNSUPPORTED] - before, 1,
		"  counted as icmp_unsupported");
}

static void
test_syn(void)
{
	struct rte_mbuf *r = syn(0x11223344, 40001, 1460, true);

	if (!tap_ok(r != NULL, "SYN is answered"))
		return;
	struct rte_ipv4_hdr *ip = pb_ip(r);
	struct rte_tcp_hdr *th = pb_th(r);
	uint32_t cookie = rte_be_to_cpu_32(th->sent_seq);
	const uint8_t *opt = (const uint8_t *)(th + 1);

	tap_ok(th->tcp_flags == (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG), "answer is a SYN-ACK");
	tap_eq_int(rte_be_to_cpu_32(th->recv_ack), 0x11223345u, "SYN-ACK acks the client ISN + 1");
	tap_ok(th->src_port == RTE_BE16(80) && th->dst_port == RTE_BE16(40001),
		"SYN-ACK ports swapped");
	tap_eq_int(th->data_off >> 4, 6, "SYN-ACK has one 4-byte option");
	tap_ok(opt[0] == 2 && opt[1] == 4 && (opt[2] << 8 | opt[3]) == 1460,
		"SYN-ACK option is MSS 1460 (no timestamps, SACK or window scale)");
	tap_ok(pb_ip_ok(ip) && pb_tcp_ok(ip), "SYN-ACK checksums are right");
	tap_eq_int(rte_be_to_cpu_16(ip->total_length), 44, "SYN-ACK IP length");
	tap_eq_int(syncookie_check(&H.w->cookies, ip->dst_addr, ip->src_addr, th->dst_port,
			   th->src_port, 0x11223344, cookie),
		syncookie_mss_index(1460), "SYN-ACK ISN is a cookie for this 4-tuple and MSS");
	tap_ok(ip->time_to_live == 64 && (ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_DF_FLAG)),
		"SYN-ACK TTL 64 and DF");
	rte_pktmbuf_free(r);

	uint32_t c1 = cookie_for(0x11223344, 40001);

	tap_eq_int(c1, cookie, "a retransmitted SYN gets the same cookie");
	tap_ok(cookie_for(0x11223344, 40002) != cookie, "another source port gets another cookie");

	/* SYN to a closed port: RST+ACK acking the SYN. */
	struct pb_tcp t = { .sport = 40003, .dport = 81, .seq = 500, .flags = RTE_TCP_SYN_FLAG,
		.mss = 1460 };

	r = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t));
	if (tap_ok(r != NULL, "SYN to a closed port is answered")) {
		th = pb_th(r);
		tap_ok(th->tcp_flags == (RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG) &&
			       rte_be_to_cpu_32(th->recv_ack) == 501 && th->sent_seq == 0,
			"  with RST+ACK, seq 0, ack = SYN + 1 (RFC 9293 3.10.7.1)");
		tap_ok(pb_ip_ok(pb_ip(r)) && pb_tcp_ok(pb_ip(r)), "  RST checksums are right");
		rte_pktmbuf_free(r);
	}
	/* Listening port list: 8080 is also ours. */
	t.dport = 8080;
	r = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t));
	tap_ok(r != NULL && pb_th(r)->tcp_flags == (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG),
		"SYN to the second listening port gets a SYN-ACK");
	rte_pktmbuf_free(r);

	/* The client's MSS bounds the answer: 536 -> index 0. */
	r = syn(77, 40004, 536, false);
	ip = pb_ip(r);
	th = pb_th(r);
	tap_eq_int(syncookie_check(&H.w->cookies, ip->dst_addr, ip->src_addr, th->dst_port,
			   th->src_port, 77, rte_be_to_cpu_32(th->sent_seq)),
		0, "a SYN with MSS 536 gets a cookie of MSS index 0");
	rte_pktmbuf_free(r);

	uint64_t before = H.w->ctr.drops[DP_DROP_TCP_BAD_FLAGS];

	t = (struct pb_tcp){ .sport = 40005, .seq = 1, .flags = RTE_TCP_SYN_FLAG | RTE_TCP_FIN_FLAG };
	tap_ok(dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t)) == NULL, "SYN+FIN is dropped");
	tap_eq_int(H.w->ctr.drops[DP_DROP_TCP_BAD_FLAGS] - before, 1, "  counted as tcp_bad_flags");
}

static void
test_request(void)
{
	const char *req = "GET /healthz HTTP/1.1\r\nHost: 198.18.0.2\r\nUser-Agent: t\r\n\r\n";
	uint16_t req_len = (uint16_t)strlen(req);
	uint32_t isn = 0xfffffff0; /* seq wraps around during the connection */
	uint32_t c = cookie_for(isn, 41000);
	struct rte_mbuf *r = dph_one(&H, pb_request(dph_mbuf(&H), isn, c, req, 41000));

	if (!tap_ok(r != NULL, "a request with a valid cookie is answered"))
		return;
	struct rte_ipv4_hdr *ip = pb_ip(r);
	struct rte_tcp_hdr *th = pb_th(r);
	uint16_t len;
	const char *p = pb_payload(r, &len);

	tap_eq_int(th->tcp_flags, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG,
		"the answer is one segment with ACK, PSH and FIN");
	tap_eq_int(rte_be_to_cpu_32(th->sent_seq), c + 1, "answer seq is cookie + 1");
	tap_eq_int(rte_be_to_cpu_32(th->recv_ack), (uint32_t)(isn + 1 + req_len),
		"answer acks the whole request");
	tap_ok(pb_ip_ok(ip) && pb_tcp_ok(ip), "answer checksums are right");
	tap_eq_int(http_status(r), 200, "GET /healthz is 200");
	tap_ok(memmem(p, len, "\r\nConnection: close\r\n", 21) != NULL, "answer says Connection: close");
	tap_ok(memmem(p, len, "\r\nCache-Control: no-store\r\n", 27) != NULL,
		"answer says Cache-Control: no-store");
	tap_ok(len > 4 && memcmp(p + len - 15, "{\"status\":\"ok\"}", 15) == 0, "healthz body");
	tap_ok(memmem(p, len, "Content-Length: 15\r\n", 20) != NULL, "Content-Length matches the body");
	tap_ok(memmem(p, len, "\r\nDate: ", 8) != NULL && memmem(p, len, " GMT\r\n", 6) != NULL,
		"answer has a Date");
	rte_pktmbuf_free(r);

	/* The same request again (a retransmission) gets the same answer. */
	r = dph_one(&H, pb_request(dph_mbuf(&H), isn, c, req, 41000));
	tap_ok(r != NULL && http_status(r) == 200, "a retransmitted request is answered again");
	rte_pktmbuf_free(r);

	/* A request whose segment also carries the client's FIN: the ack covers the FIN too. */
	struct pb_tcp tf = { .sport = 41000, .seq = isn + 1, .ack = c + 1,
		.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG, .payload = req,
		.payload_len = req_len };

	r = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &tf));
	tap_ok(r != NULL && http_status(r) == 200 &&
		       rte_be_to_cpu_32(pb_th(r)->recv_ack) == (uint32_t)(isn + 1 + req_len + 1),
		"request+FIN in one segment: answered, and the ack covers the FIN");
	rte_pktmbuf_free(r);

	/* Bad cookie: RST, seq = their ack. */
	uint64_t before = H.w->ctr.answers[DP_ANS_RST_BAD_COOKIE];

	r = dph_one(&H, pb_request(dph_mbuf(&H), isn, c ^ 0x100, req, 41000));
	if (tap_ok(r != NULL, "data acking a wrong cookie is answered")) {
		th = pb_th(r);
		tap_ok(th->tcp_flags == RTE_TCP_RST_FLAG &&
			       rte_be_to_cpu_32(th->sent_seq) == ((c ^ 0x100) + 1),
			"  with a RST whose seq is their ack");
		tap_eq_int(rte_pktmbuf_data_len(r), 54, "  the RST carries no data");
		tap_eq_int(H.w->ctr.answers[DP_ANS_RST_BAD_COOKIE] - before, 1,
			"  counted as rst_bad_cookie");
		rte_pktmbuf_free(r);
	}
	/* A valid cookie for another client ISN: RST. */
	r = dph_one(&H, pb_request(dph_mbuf(&H), isn + 1, c, req, 41000));
	tap_ok(r != NULL && pb_th(r)->tcp_flags == RTE_TCP_RST_FLAG,
		"a cookie replayed with another ISN is refused");
	rte_pktmbuf_free(r);
	/* A valid cookie from another source port: RST. */
	r = dph_one(&H, pb_request(dph_mbuf(&H), isn, c, req, 41001));
	tap_ok(r != NULL && pb_th(r)->tcp_flags == RTE_TCP_RST_FLAG,
		"a cookie replayed from another port is refused");
	rte_pktmbuf_free(r);

	/* Previous slot still accepted, two slots old refused. */
	uint64_t now_s = H.w->now_ms / 1000;

	syncookie_tick(&H.w->cookies, now_s + 64);
	r = dph_one(&H, pb_request(dph_mbuf(&H), isn, c, req, 41000));
	tap_ok(r != NULL && http_status(r) == 200, "a cookie from the previous slot is accepted");
	rte_pktmbuf_free(r);
	syncookie_tick(&H.w->cookies, now_s + 128);
	r = dph_one(&H, pb_request(dph_mbuf(&H), isn, c, req, 41000));
	tap_ok(r != NULL && pb_th(r)->tcp_flags == RTE_TCP_RST_FLAG,
		"a cookie two slots old is refused");
	rte_pktmbuf_free(r);
	syncookie_tick(&H.w->cookies, now_s);
	syncookie_init(&H.w->cookies, dph_secret, 64, now_s);
}

static void
test_fin_and_acks(void)
{
	uint32_t isn = 5000;
	uint32_t c = cookie_for(isn, 42000);
	struct pb_tcp t = { .sport = 42000, .seq = isn + 1 + 60, .ack = c + 1 + 200 + 1,
		.flags = RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG };
	struct rte_mbuf *r = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t));

	if (tap_ok(r != NULL, "the client's FIN after our answer is answered")) {
		struct rte_tcp_hdr *th = pb_th(r);

		tap_eq_int(th->tcp_flags, RTE_TCP_ACK_FLAG, "  with a bare ACK");
		tap_eq_int(rte_be_to_cpu_32(th->recv_ack), isn + 1 + 60 + 1, "  acking the FIN");
		tap_eq_int(rte_be_to_cpu_32(th->sent_seq), c + 1 + 200 + 1, "  seq = their ack");
		tap_ok(pb_tcp_ok(pb_ip(r)), "  checksum right");
		rte_pktmbuf_free(r);
	}
	/* A FIN before any request: close our side too. */
	t = (struct pb_tcp){ .sport = 42000, .seq = isn + 1, .ack = c + 1,
		.flags = RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG };
	r = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t));
	tap_ok(r != NULL && pb_th(r)->tcp_flags == (RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG) &&
		       rte_be_to_cpu_32(pb_th(r)->recv_ack) == isn + 2,
		"a FIN right after the handshake gets FIN+ACK");
	rte_pktmbuf_free(r);

	uint64_t before = H.w->ctr.drops[DP_DROP_TCP_PURE_ACK];

	t = (struct pb_tcp){ .sport = 42000, .seq = isn + 1, .ack = c + 1, .flags = RTE_TCP_ACK_FLAG };
	tap_ok(dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t)) == NULL,
		"the handshake's final ACK is dropped");
	tap_eq_int(H.w->ctr.drops[DP_DROP_TCP_PURE_ACK] - before, 1, "  counted as tcp_pure_ack");
	before = H.w->ctr.drops[DP_DROP_TCP_RST_IN];
	t.flags = RTE_TCP_RST_FLAG;
	tap_ok(dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t)) == NULL, "a RST is never answered");
	tap_eq_int(H.w->ctr.drops[DP_DROP_TCP_RST_IN] - before, 1, "  counted as tcp_rst_received");
	before = H.w->ctr.drops[DP_DROP_TCP_BAD_FLAGS];
	t.flags = RTE_TCP_PSH_FLAG;
	t.payload = "GET / HTTP/1.1\r\n\r\n";
	t.payload_len = 18;
	tap_ok(dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t)) == NULL, "data without ACK is dropped");
	tap_eq_int(H.w->ctr.drops[DP_DROP_TCP_BAD_FLAGS] - before, 1, "  counted as tcp_bad_flags");
}

/* One malformed frame: it must be dropped and counted under reason. */
static void
expect_drop(struct rte_mbuf *m, enum dp_drop_reason reason, const char *what)
{
	uint64_t before = H.w->ctr.drops[reason];

	tap_ok(dph_one(&H, m) == NULL, "%s is dropped", what);
	tap_eq_int(H.w->ctr.drops[reason] - before, 1, counters_drop_name(reason));
}

static void
test_drops(void)
{
	struct pb_tcp syn_t = { .sport = 43000, .seq = 1, .flags = RTE_TCP_SYN_FLAG, .mss = 1460 };
	struct pb_tcp t;
	struct rte_mbuf *m;

	t = syn_t;
	t.frag = RTE_IPV4_HDR_MF_FLAG;
	expect_drop(pb_tcp_frame(dph_mbuf(&H), &t), DP_DROP_IP_FRAGMENT, "a first fragment (MF)");
	t.frag = 100;
	expect_drop(pb_tcp_frame(dph_mbuf(&H), &t), DP_DROP_IP_FRAGMENT,
		"a later fragment (offset)");
	t = syn_t;
	t.ihl = 6;
	expect_drop(pb_tcp_frame(dph_mbuf(&H), &t), DP_DROP_IP_OPTIONS, "IPv4 with options");
	t = syn_t;
	m = pb_tcp_frame(dph_mbuf(&H), &t);
	pb_ip(m)->hdr_checksum ^= RTE_BE16(0x0100);
	expect_drop(m, DP_DROP_IP_CKSUM, "a bad IPv4 checksum");
	m = pb_tcp_frame(dph_mbuf(&H), &t);
	pb_th(m)->cksum ^= RTE_BE16(0x0001);
	expect_drop(m, DP_DROP_TCP_CKSUM, "a bad TCP checksum");
	t.ttl = 0;
	m = pb_tcp_frame(dph_mbuf(&H), &t);
	pb_ip(m)->time_to_live = 0;
	pb_ip(m)->hdr_checksum = 0;
	pb_ip(m)->hdr_checksum = rte_cpu_to_be_16((uint16_t)~pb_fold(pb_sum(pb_ip(m), 20, 0)));
	expect_drop(m, DP_DROP_IP_TTL, "TTL 0");
	t = syn_t;
	t.dst_ip = RTE_IPV4(198, 18, 0, 3);
	expect_drop(pb_tcp_frame(dph_mbuf(&H), &t), DP_DROP_IP_NOT_FOR_US,
		"a packet for another address");
	t = syn_t;
	t.src_ip = RTE_IPV4(255, 255, 255, 255);
	expect_drop(pb_tcp_frame(dph_mbuf(&H), &t), DP_DROP_IP_BAD_SOURCE, "a broadcast source");
	t.src_ip = RTE_IPV4(224, 0, 0, 1);
	expect_drop(pb_tcp_frame(dph_mbuf(&H), &t), DP_DROP_IP_BAD_SOURCE, "a multicast source");
	t.src_ip = RTE_IPV4(127, 0, 0, 1);
	expect_drop(pb_tcp_frame(dph_mbuf(&H), &t), DP_DROP_IP_BAD_SOURCE, "a loopback source");
	t = syn_t;
	m = pb_tcp_frame(dph_mbuf(&H), &t);
	pb_ip(m)->total_length = RTE_BE16(400);
	pb_ip(m)->hdr_checksum = 0;
	pb_ip(m)->hdr_checksum = rte_cpu_to_be_16((uint16_t)~pb_fold(pb_sum(pb_ip(m), 20, 0)));
	expect_drop(m, DP_DROP_IP_TOTAL_LEN, "a total length beyond the frame");
	m = pb_tcp_frame(dph_mbuf(&H), &t);
	pb_ip(m)->version_ihl = 0x65;
	expect_drop(m, DP_DROP_IP_VERSION, "IP version 6 in an IPv4 frame");
	m = pb_tcp_frame(dph_mbuf(&H), &t);
	pb_ip(m)->version_ihl = 0x44;
	expect_drop(m, DP_DROP_IP_HDR_LEN, "IHL 4");
	m = pb_tcp_frame(dph_mbuf(&H), &t);
	pb_th(m)->data_off = 0x40;
	expect_drop(m, DP_DROP_TCP_HDR_LEN, "TCP data offset 4");
	m = pb_tcp_frame(dph_mbuf(&H), &t);
	pb_ip(m)->next_proto_id = IPPROTO_UDP;
	pb_ip(m)->hdr_checksum = 0;
	pb_ip(m)->hdr_checksum = rte_cpu_to_be_16((uint16_t)~pb_fold(pb_sum(pb_ip(m), 20, 0)));
	expect_drop(m, DP_DROP_IP_PROTO, "UDP");

	static const uint8_t other[6] = { 0x02, 0, 0, 0, 0, 0x99 }, cl[6] = PB_CL_MAC,
			     dp[6] = PB_DP_MAC;

	m = pb_tcp_frame(dph_mbuf(&H), &syn_t);
	memcpy(&rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->dst_addr, other, 6);
	expect_drop(m, DP_DROP_ETH_NOT_FOR_US, "a frame for another MAC");
	m = dph_mbuf(&H);
	pb_eth(m, dp, cl, RTE_ETHER_TYPE_IPV6, 14 + 40);
	expect_drop(m, DP_DROP_ETH_UNSUPPORTED, "IPv6");
	m = dph_mbuf(&H);
	pb_eth(m, dp, cl, RTE_ETHER_TYPE_IPV4, 14);
	m->data_len = m->pkt_len = 10;
	expect_drop(m, DP_DROP_ETH_RUNT, "a 10-byte frame");
	m = dph_mbuf(&H);
	pb_eth(m, dp, cl, RTE_ETHER_TYPE_IPV4, 14 + 12);
	expect_drop(m, DP_DROP_IP_RUNT, "a frame too short for IPv4");

	/* Ethernet padding after a short packet is not part of the segment. */
	t = syn_t;
	t.pad = 6;
	m = dph_one(&H, pb_tcp_frame(dph_mbuf(&H), &t));
	tap_ok(m != NULL && pb_th(m)->tcp_flags == (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG),
		"a padded SYN is answered (padding ignored)");
	rte_pktmbuf_free(m);
}

struct route_case {
	const char *req;
	unsigned status;
	const char *needle; /* must appear in the answer; NULL: nothing more to check */
};

static void
test_routes(void)
{
	char ev_open[64], ev_up[64], ev_closed[64];

	snprintf(ev_open, sizeof(ev_open), "\"id\":%d,", DPH_EVENT_OPEN);
	snprintf(ev_up, sizeof(ev_up), "\"id\":%d,", DPH_EVENT_UPCOMING);
	snprintf(ev_closed, sizeof(ev_closed), "\"id\":%d,", DPH_EVENT_CLOSED);
	const struct route_case cases[] = {
		{ "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 200, "{\"status\":\"ok\"}" },
		{ "GET /healthz?probe=1 HTTP/1.1\r\nHost: a\r\n\r\n", 200, NULL },
		{ "GET /healthz HTTP/1.0\r\n\r\n", 200, NULL },
		{ "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", 405,
			"Allow: GET, HEAD, OPTIONS\r\n" },
		{ "GET /api/v1/events/1 HTTP/1.1\r\nHost: a\r\n\r\n", 200, "\"state\":\"open\"" },
		{ "GET /api/v1/events/1 HTTP/1.1\r\nHost: a\r\n\r\n", 200,
			"\"name\":\"Open \\\"sale\\\"\"" },
		{ "GET /api/v1/events/1 HTTP/1.1\r\nHost: a\r\n\r\n", 200, "\"server_time\":" },
		{ "GET /api/v1/events/2 HTTP/1.1\r\nHost: a\r\n\r\n", 200, "\"state\":\"upcoming\"" },
		{ "GET /api/v1/events/3 HTTP/1.1\r\nHost: a\r\n\r\n", 200, "\"state\":\"closed\"" },
		{ "GET /api/v1/events/4 HTTP/1.1\r\nHost: a\r\n\r\n", 404, "no such event" },
		{ "GET /api/v1/events/01 HTTP/1.1\r\nHost: a\r\n\r\n", 404, NULL },
		{ "GET /api/v1/events/0 HTTP/1.1\r\nHost: a\r\n\r\n", 404, NULL },
		{ "GET /api/v1/events/4294967296 HTTP/1.1\r\nHost: a\r\n\r\n", 404, NULL },
		{ "GET /api/v1/events/1x HTTP/1.1\r\nHost: a\r\n\r\n", 404, NULL },
		{ "GET /api/v1/events/ HTTP/1.1\r\nHost: a\r\n\r\n", 404, NULL },
		{ "DELETE /api/v1/events/1 HTTP/1.1\r\nHost: a\r\n\r\n", 405, "Allow: GET, HEAD" },
		{ "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 404, "no such resource" },
		{ "GET /healthz HTTP/1.1\nHost: a\r\n\r\n", 400, "\"error\":\"" },
		{ "GET /healthz HTTP/1.1\r\nHost : a\r\n\r\n", 400, NULL },
		{ "GET /healthz HTTP/1.1\r\nHost: a\r\n x\r\n\r\n", 400, NULL },
		{ "GET /healthz HTTP/1.1\r\n\r\n", 400, NULL },
		{ "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 501,
			NULL },
		{ "BREW /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 501, NULL },
		{ "GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n", 505, NULL },
		{ "GET /healthz HTTP/1.1\r\nHost: a\r\n", 431, "one TCP segment" },
		/* RFC 9112 §3.2.2: absolute-form for our address or dataplane.host and a port
		 * we listen on; any other host is refused */
		{ "GET http://198.18.0.2/healthz HTTP/1.1\r\nHost: a\r\n\r\n", 200,
			"{\"status\":\"ok\"}" },
		{ "GET HTTP://Sale.Shop.Example:8080/api/v1/events/1 HTTP/1.1\r\nHost: a\r\n\r\n",
			200, "\"state\":\"open\"" },
		{ "GET http://198.18.0.2:/healthz?x HTTP/1.1\r\nHost: a\r\n\r\n", 200, NULL },
		{ "GET http://other.example/healthz HTTP/1.1\r\nHost: a\r\n\r\n", 400,
			"names another host" },
		{ "GET http://198.18.0.2:81/healthz HTTP/1.1\r\nHost: a\r\n\r\n", 400,
			"names another host" },
		{ "GET http://198.18.0.20/healthz HTTP/1.1\r\nHost: a\r\n\r\n", 400, NULL },
		{ "GET http://sale.shop.example.evil/ HTTP/1.1\r\nHost: a\r\n\r\n", 400, NULL },
		{ "GET https://198.18.0.2/healthz HTTP/1.1\r\nHost: a\r\n\r\n", 400, NULL },
		{ "GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc", 431, NULL },
	};

	uint64_t other_host = H.w->ctr.reject[DP_REJ_OTHER_HOST];

	for (size_t i = 0; i < RTE_DIM(cases); i++) {
		const struct route_case *rc = &cases[i];
		struct rte_mbuf *r = request(rc->req, (uint16_t)(44000 + i));
		char name[80];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(rc->req, "\r\n"), rc->req);
		if (!tap_ok(r != NULL, "route case %zu answered: %s", i, name))
			continue;
		tap_eq_int(http_status(r), rc->status, name);
		if (rc->needle)
			tap_ok(body_has(r, rc->needle), "  answer contains %s", rc->needle);
		tap_ok(body_has(r, "Connection: close\r\n"), "  Connection: close");
		rte_pktmbuf_free(r);
	}
	tap_eq_int(H.w->ctr.reject[DP_REJ_OTHER_HOST] - other_host, 4,
		"the 4 absolute-form requests for another host counted as reject other_host");

	/* HEAD: the GET headers with the body's length, and no body. */
	struct rte_mbuf *r = request("HEAD /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 45000);
	uint16_t len;
	const char *p = pb_payload(r, &len);

	tap_ok(http_status(r) == 200 && memmem(p, len, "Content-Length: 15\r\n", 20) != NULL &&
		       len >= 4 && memcmp(p + len - 4, "\r\n\r\n", 4) == 0,
		"HEAD /healthz: headers of the GET answer, no body");
	rte_pktmbuf_free(r);
	r = request("HEAD /api/v1/events/1 HTTP/1.1\r\nHost: a\r\n\r\n", 45001);
	p = pb_payload(r, &len);
	tap_ok(http_status(r) == 200 && len >= 4 && memcmp(p + len - 4, "\r\n\r\n", 4) == 0,
		"HEAD on an event: no body");
	rte_pktmbuf_free(r);

	/* A client that announced MSS 536 never gets a bigger segment. */
	uint32_t isn = 99;
	struct rte_mbuf *s = syn(isn, 45002, 536, false);
	uint32_t c = rte_be_to_cpu_32(pb_th(s)->sent_seq);

	rte_pktmbuf_free(s);
	r = dph_one(&H, pb_request(dph_mbuf(&H), isn, c,
			    "GET /api/v1/events/1 HTTP/1.1\r\nHost: a\r\n\r\n", 45002));
	pb_payload(r, &len);
	tap_ok(len > 0 && len <= 536, "answers fit the client's MSS of 536 (%u bytes)", len);
	rte_pktmbuf_free(r);
}

/* A SYN below dataplane.mss_floor is dropped and counted; one at the floor is answered. */
static void
test_mss_floor(void)
{
	uint64_t before = H.w->ctr.drops[DP_DROP_TCP_MSS_FLOOR];
	struct rte_mbuf *r;

	tap_eq_int(H.w->mss_floor, 536, "mss_floor is 536 unless set");
	tap_ok(syn(5, 47000, 535, false) == NULL, "a SYN with MSS 535 (below 536) is dropped");
	tap_ok(syn(5, 47001, 88, true) == NULL, "a SYN with MSS 88 is dropped");
	/* linux_opts with mss 0: an MSS option that says 0, not an absent one. */
	tap_ok(syn(5, 47007, 0, true) == NULL, "a SYN with an explicit MSS option of 0 is dropped");
	tap_eq_int(H.w->ctr.drops[DP_DROP_TCP_MSS_FLOOR] - before, 3,
		"  counted as tcp_mss_below_floor");
	r = syn(5, 47002, 536, false);
	tap_ok(r != NULL && pb_th(r)->tcp_flags == (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG),
		"a SYN with MSS 536 gets a SYN-ACK");
	rte_pktmbuf_free(r);
	r = syn(5, 47003, 0, false);
	tap_ok(r != NULL, "a SYN without the MSS option (536, RFC 9293) gets a SYN-ACK");
	rte_pktmbuf_free(r);

	H.w->mss_floor = 1220;
	before = H.w->ctr.drops[DP_DROP_TCP_MSS_FLOOR];
	tap_ok(syn(5, 47004, 1219, false) == NULL && syn(5, 47005, 0, false) == NULL,
		"floor 1220: MSS 1219 and a SYN without MSS are dropped");
	r = syn(5, 47006, 1220, true);
	tap_ok(r != NULL && syncookie_check(&H.w->cookies, pb_ip(r)->dst_addr,
				    pb_ip(r)->src_addr, pb_th(r)->dst_port, pb_th(r)->src_port, 5,
				    rte_be_to_cpu_32(pb_th(r)->sent_seq)) == 1,
		"floor 1220: MSS 1220 is answered, cookie of MSS index 1");
	rte_pktmbuf_free(r);
	tap_eq_int(H.w->ctr.drops[DP_DROP_TCP_MSS_FLOOR] - before, 2, "  both counted");
	H.w->mss_floor = 536;
}

static void
test_burst_and_leaks(void)
{
	unsigned avail = rte_mempool_avail_count(H.pool);
	struct rte_mbuf *in[8], *tx[8 * PIPELINE_TX_PER_RX];
	struct pb_tcp t = { .sport = 46000, .seq = 1, .flags = RTE_TCP_SYN_FLAG, .mss = 1460 };

	for (int i = 0; i < 8; i++) {
		t.sport = (uint16_t)(46000 + i);
		t.dst_ip = (i % 2) ? RTE_IPV4(198, 18, 0, 9) : 0; /* odd ones are not ours */
		in[i] = pb_tcp_frame(dph_mbuf(&H), &t);
	}
	uint16_t n = pipeline_burst(H.w, 0, in, 8, tx);
	bool order = n == 4;

	for (int i = 0; i < n; i++)
		order &= pb_th(tx[i])->dst_port == rte_cpu_to_be_16((uint16_t)(46000 + 2 * i));
	tap_ok(order, "a burst of 8 with 4 foreign packets yields 4 answers in arrival order");
	rte_pktmbuf_free_bulk(tx, n);
	tap_eq_int(rte_mempool_avail_count(H.pool), avail, "no mbuf is leaked by answers or drops");
}

int
main(int argc, char **argv)
{
	(void)argc;
	dph_init(&H, argv[0]);
	unsigned in_use0 = rte_mempool_in_use_count(H.pool);
	test_arp();
	test_icmp();
	test_syn();
	test_request();
	test_fin_and_acks();
	test_drops();
	test_routes();
	test_mss_floor();
	test_burst_and_leaks();
	/* Every path above (answers, drops, bursts) gave back every mbuf it took. */
	tap_eq_int(rte_mempool_in_use_count(H.pool), in_use0,
		"no mbuf leaked across every test above: as many in use as before them");
	return tap_done();
}
