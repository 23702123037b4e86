/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load generator's modules on their own: its HTTP response checker (guard-page inputs),
 * JSON field lookup, latency histogram, connection table, the frames it builds and receives
 * (checksums checked by tests/lib/pktbuild.h's independent reference sum), and the floods'
 * option parser, requests and checks of answers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/guard.h"
#include "tests/lib/pktbuild.h"
#include "tests/tap.h"
#include "tools/loadgen/lg_args.h"
#include "tools/loadgen/lg_cli.h"
#include "tools/loadgen/lg_conn.h"
#include "tools/loadgen/lg_flood.h"
#include "tools/loadgen/lg_http.h"
#include "tools/loadgen/lg_pkt.h"
#include "tools/loadgen/lg_pow.h"
#include "tools/loadgen/lg_sched.h"
#include "tools/loadgen/lg_stats.h"

#define OK_200 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n"
#define CLOSE  "Connection: close\r\n"

static const struct {
	const char *name;
	const char *in;
	enum lg_http_err want;
	unsigned status;
	long retry_after;
	size_t body_len;
} http_cases[] = {
	{"200 with body", OK_200 CLOSE "\r\n{\"status\":\"ok\"}", LG_HTTP_OK, 200, -1, 15},
	{"429 Retry-After",
		"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\n"
		"Content-Length: 2\r\nConnection: close\r\n\r\n{}",
		LG_HTTP_OK, 429, 3, 2},
	{"204 without length", "HTTP/1.1 204 No Content\r\nAllow: GET\r\n" CLOSE "\r\n", LG_HTTP_OK,
		204, -1, 0},
	{"empty reason phrase", "HTTP/1.1 200 \r\nContent-Length: 0\r\n" CLOSE "\r\n", LG_HTTP_OK,
		200, -1, 0},
	{"OWS around value", "HTTP/1.1 200 OK\r\nContent-Length:\t 1 \r\nConnection:close\r\n\r\nx",
		LG_HTTP_OK, 200, -1, 1},
	{"empty", "", LG_HTTP_EMPTY, 0, -1, 0},
	{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n" CLOSE "\r\n",
		LG_HTTP_BAD_STATUS_LINE, 0, -1, 0},
	{"two-digit status", "HTTP/1.1 20 OK\r\n" CLOSE "\r\n", LG_HTTP_BAD_STATUS_LINE, 0, -1, 0},
	{"status 600", "HTTP/1.1 600 X\r\nContent-Length: 0\r\n" CLOSE "\r\n",
		LG_HTTP_BAD_STATUS_LINE, 600, -1, 0},
	{"no space after status", "HTTP/1.1 200OK\r\n" CLOSE "\r\n", LG_HTTP_BAD_STATUS_LINE, 0, -1,
		0},
	{"control byte in reason", "HTTP/1.1 200 O\x01K\r\nContent-Length: 0\r\n" CLOSE "\r\n",
		LG_HTTP_BAD_STATUS_LINE, 200, -1, 0},
	{"bare LF in status line", "HTTP/1.1 200 OK\nContent-Length: 0\r\n" CLOSE "\r\n",
		LG_HTTP_BAD_STATUS_LINE, 0, -1, 0},
	{"bare LF in header", "HTTP/1.1 200 OK\r\nContent-Length: 0\n" CLOSE "\r\n",
		LG_HTTP_BAD_HEADER, 200, -1, 0},
	{"bare CR in header", "HTTP/1.1 200 OK\r\nX: a\rb\r\nContent-Length: 0\r\n" CLOSE "\r\n",
		LG_HTTP_BAD_HEADER, 200, -1, 0},
	{"obs-fold", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n" CLOSE "\r\n",
		LG_HTTP_BAD_HEADER, 200, -1, 0},
	{"space before colon", "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n" CLOSE "\r\n",
		LG_HTTP_BAD_HEADER, 200, -1, 0},
	{"no colon", "HTTP/1.1 200 OK\r\nContent-Length 0\r\n" CLOSE "\r\n", LG_HTTP_BAD_HEADER,
		200, -1, 0},
	{"NUL in value", "HTTP/1.1 200 OK\r\nX: a\0b\r\nContent-Length: 0\r\n" CLOSE "\r\n",
		LG_HTTP_BAD_HEADER, 200, -1, 0},
	{"headers never end", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n" CLOSE, LG_HTTP_NO_END, 200,
		-1, 0},
	{"cut inside a header", "HTTP/1.1 200 OK\r\nContent-Len", LG_HTTP_NO_END, 200, -1, 0},
	{"no Content-Length", "HTTP/1.1 200 OK\r\n" CLOSE "\r\n{}", LG_HTTP_BAD_LENGTH, 200, -1, 2},
	{"body shorter than length", OK_200 CLOSE "\r\n{}", LG_HTTP_BAD_LENGTH, 200, -1, 2},
	{"body longer than length", OK_200 CLOSE "\r\n{\"status\":\"ok\"}x", LG_HTTP_BAD_LENGTH,
		200, -1, 16},
	{"two Content-Length", OK_200 "Content-Length: 15\r\n" CLOSE "\r\n{\"status\":\"ok\"}",
		LG_HTTP_BAD_LENGTH, 200, -1, 0},
	{"signed Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: +0\r\n" CLOSE "\r\n",
		LG_HTTP_BAD_LENGTH, 200, -1, 0},
	{"204 with a body", "HTTP/1.1 204 No Content\r\n" CLOSE "\r\nx", LG_HTTP_BAD_LENGTH, 204,
		-1, 1},
	{"no Connection: close", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", LG_HTTP_NO_CLOSE,
		200, -1, 0},
	{"keep-alive", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n",
		LG_HTTP_NO_CLOSE, 200, -1, 0},
};

/* Literal lengths: some inputs hold a NUL. */
static size_t
case_len(size_t i)
{
	if (strcmp(http_cases[i].name, "NUL in value") == 0)
		return strlen(http_cases[i].in) + 1 +
		       strlen(http_cases[i].in + strlen(http_cases[i].in) + 1);
	return strlen(http_cases[i].in);
}

static void
test_http(void)
{
	for (size_t i = 0; i < sizeof(http_cases) / sizeof(http_cases[0]); i++) {
		struct guard_buf g = {0};
		size_t len = case_len(i);
		const char *in = guard_place(&g, http_cases[i].in, len);
		struct lg_http_resp r;
		enum lg_http_err e = lg_http_parse_response(in, len, &r);

		tap_ok(e == http_cases[i].want, "http %s: %s (want %s)", http_cases[i].name,
			lg_http_err_name(e), lg_http_err_name(http_cases[i].want));
		if (e == LG_HTTP_OK)
			tap_ok(r.status == http_cases[i].status &&
					r.retry_after == http_cases[i].retry_after &&
					r.body_len == http_cases[i].body_len,
				"http %s: status %u retry_after %ld body %zu", http_cases[i].name,
				r.status, r.retry_after, r.body_len);
		guard_free(&g);
	}
}

/* A kept connection's answers: no Connection: close, and where each one ends (no FIN). */
static void
test_http_kept(void)
{
	static const char ka[] = OK_200 "\r\n{\"status\":\"ok\"}";
	static const char closed[] = OK_200 CLOSE "\r\n{\"status\":\"ok\"}";
	static const char nc[] = "HTTP/1.1 204 No Content\r\nAllow: GET\r\n\r\n";
	struct guard_buf g = {0};
	struct lg_http_resp r;
	const char *in = guard_place(&g, ka, sizeof(ka) - 1);

	tap_ok(lg_http_parse_kept(in, sizeof(ka) - 1, &r) == LG_HTTP_OK && r.status == 200 &&
			r.body_len == 15,
		"kept: a 200 without Connection: close is well-formed");
	tap_eq_int((long long)lg_http_response_len(in, sizeof(ka) - 1), sizeof(ka) - 1,
		"kept: the whole answer is its header section and Content-Length bytes");
	size_t early = 0;

	for (size_t n = 0; n < sizeof(ka) - 1 && early == 0; n++)
		if (lg_http_response_len(in, n) != 0)
			early = n;
	tap_eq_int((long long)early, 0, "kept: no shorter prefix counts as a whole answer");
	guard_free(&g);
	in = guard_place(&g, closed, sizeof(closed) - 1);
	tap_ok(lg_http_parse_kept(in, sizeof(closed) - 1, &r) == LG_HTTP_CLOSE,
		"kept: Connection: close is an error there (%s)", lg_http_err_name(LG_HTTP_CLOSE));
	guard_free(&g);
	in = guard_place(&g, nc, sizeof(nc) - 1);
	tap_eq_int((long long)lg_http_response_len(in, sizeof(nc) - 1), sizeof(nc) - 1,
		"kept: a 204 ends with its header section");
	guard_free(&g);

	char two[256];

	snprintf(two, sizeof(two), "%s%s", ka, ka);
	tap_eq_int((long long)lg_http_response_len(two, strlen(two)), sizeof(ka) - 1,
		"kept: two answers in a row: the first one's length");
}

static void
test_json(void)
{
	static const struct {
		const char *body, *name;
		int rc;
		const char *want;
	} t[] = {
		{"{\"token\":\"p1.1.2.3.4.abc\",\"reserve_path\":\"/api/v1/events/1/reserve/7-x\"}",
			"reserve_path", 0, "/api/v1/events/1/reserve/7-x"},
		{"{\"token\":\"p1.1.2.3.4.abc\",\"reserve_path\":\"/r\"}", "token", 0,
			"p1.1.2.3.4.abc"},
		{"{\"status\": \"queued\"}", "status", 0, "queued"},
		{"{\"event\":1,\"status\":\"reserved\"}", "status", 0, "reserved"},
		{"{\"xstatus\":\"a\"}", "status", -ENOENT, NULL},
		{"{\"status\":1}", "status", -ENOENT, NULL},
		{"{\"status\":\"unterminated", "status", -ENOENT, NULL},
		{"{\"status\":\"a\\\"b\"}", "status", -EINVAL, NULL},
		{"{\"status\"", "status", -ENOENT, NULL},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct guard_buf g = {0};
		size_t len = strlen(t[i].body);
		const char *in = guard_place(&g, t[i].body, len);
		const char *v = NULL;
		size_t n = 0;
		int rc = lg_json_string(in, len, t[i].name, &v, &n);
		bool ok = rc == t[i].rc &&
			  (t[i].want == NULL ||
				  (n == strlen(t[i].want) && memcmp(v, t[i].want, n) == 0));

		tap_ok(ok, "json \"%s\" in %s: rc %d", t[i].name, t[i].body, rc);
		guard_free(&g);
	}
}

static void
test_hist(void)
{
	static struct lg_hist h;
	bool bounds = true;

	/* Every value falls in a bucket whose upper edge is within 1/16 above it. */
	for (uint64_t v = 0; v < 200000; v = v < 64 ? v + 1 : v + v / 7) {
		uint64_t hi = lg_hist_bucket_high(lg_hist_index(v));

		if (hi < v || hi - v > v / 16)
			bounds = false;
	}
	tap_ok(bounds, "hist: bucket upper edges within 1/16 of the value");
	tap_ok(lg_hist_index(UINT64_MAX) < LG_HIST_BUCKETS, "hist: 2^64-1 has a bucket");
	tap_eq_int((long long)lg_hist_quantile(&h, 0.5), 0, "hist: empty quantile is 0");
	for (uint64_t v = 1; v <= 10000; v++)
		lg_hist_add(&h, v);
	uint64_t p50 = lg_hist_quantile(&h, 0.5), p99 = lg_hist_quantile(&h, 0.99);
	uint64_t p999 = lg_hist_quantile(&h, 0.999), p100 = lg_hist_quantile(&h, 1.0);

	tap_ok(p50 >= 5000 && p50 <= 5000 + 5000 / 16, "hist: p50 of 1..10000 is %llu",
		(unsigned long long)p50);
	tap_ok(p99 >= 9900 && p99 <= 10000, "hist: p99 of 1..10000 is %llu",
		(unsigned long long)p99);
	tap_ok(p999 >= 9990 && p999 <= 10000, "hist: p999 of 1..10000 is %llu",
		(unsigned long long)p999);
	tap_eq_int((long long)p100, 10000, "hist: p100 is the maximum");
	lg_hist_add(&h, 1000000);
	tap_eq_int((long long)h.max, 1000000, "hist: max follows the largest value");
	tap_ok(lg_hist_quantile(&h, 0.5) <= 5000 + 5000 / 16, "hist: one outlier leaves p50");

	static struct lg_stats a, b;

	a.responses = 2;
	b.responses = 3;
	b.status[200] = 4;
	b.outcome[LG_OUT_SOLD_OUT] = 1;
	lg_hist_add(&b.req_lat, 77);
	b.flood[LG_FLOOD_ONE_IP].status[429] = 6;
	b.flood[LG_FLOOD_SYN].answered = 7;
	lg_stats_add(&a, &b);
	tap_ok(a.responses == 5 && a.status[200] == 4 && a.outcome[LG_OUT_SOLD_OUT] == 1 &&
			a.req_lat.count == 1 && a.req_lat.max == 77,
		"stats: lg_stats_add adds counters and histograms");
	tap_ok(a.flood[LG_FLOOD_ONE_IP].status[429] == 6 && a.flood[LG_FLOOD_SYN].answered == 7 &&
			a.status[429] == 0,
		"stats: lg_stats_add adds the floods' counters, apart from the honest ones");
}

static void
test_table(void)
{
	struct lg_table *t = lg_table_create(3, 1024);
	struct lg_conn *c[4];

	tap_ok(lg_table_create(0, 1024) == NULL && lg_table_create(64513, 1024) == NULL,
		"table: sizes that do not fit the port range are refused");
	if (!tap_ok(t != NULL, "table: created"))
		return;
	for (int i = 0; i < 4; i++)
		c[i] = lg_table_take(t);
	tap_ok(c[0] && c[1] && c[2] && c[3] == NULL, "table: 3 slots, the 4th take fails");
	tap_ok(c[0]->sport == 1024 && c[1]->sport == 1025 && c[2]->sport == 1026,
		"table: slots take ports in order from the base");
	for (int i = 0; i < 3; i++) {
		c[i]->cip = 0xc6120201u + (uint32_t)i;
		c[i]->state = LG_CS_SYN_SENT;
	}
	tap_ok(lg_table_find(t, 0xc6120202u, 1025) == c[1], "table: found by address and port");
	tap_ok(lg_table_find(t, 0xc6120201u, 1025) == NULL, "table: wrong address is not found");
	tap_ok(lg_table_find(t, 0xc6120202u, 1023) == NULL &&
			lg_table_find(t, 0xc6120202u, 1027) == NULL,
		"table: ports outside the table are not found");
	lg_table_put(t, c[1]);
	tap_ok(lg_table_find(t, 0xc6120202u, 1025) == NULL && t->active == 2,
		"table: a freed slot is not found");
	struct lg_conn *again = lg_table_take(t);

	tap_ok(again == c[1] && again->sport == 1025, "table: the freed slot is taken again");
	lg_table_free(t);
}

/* The wake queue of short waits (result polls): on time, in order, stale entries dropped. */
static void
test_wake(void)
{
	struct lg_table *t = lg_table_create(2, 1024);
	struct lg_conn *a, *b;

	if (!tap_ok(t != NULL && t->wake_cap == 2 * LG_WAKE_PER_SLOT, "wake: a queue per table"))
		return;
	a = lg_table_take(t);
	b = lg_table_take(t);
	tap_ok(lg_table_wake_next(t, 1000) == NULL, "wake: an empty queue wakes nobody");
	a->state = LG_CS_IDLE;
	a->t_due = 100;
	b->state = LG_CS_IDLE;
	b->t_due = 150;
	tap_ok(lg_table_wake_at(t, a) && lg_table_wake_at(t, b) && t->wake_n == 2,
		"wake: two waits queued");
	tap_ok(lg_table_wake_next(t, 99) == NULL && t->wake_n == 2,
		"wake: nobody before the first wait ends");
	tap_ok(lg_table_wake_next(t, 120) == a && lg_table_wake_next(t, 120) == NULL,
		"wake: the first at its time, the second not yet");
	tap_ok(lg_table_wake_next(t, 150) == b && t->wake_n == 0, "wake: the second at its time");

	/* A slot that moved on (opened by the timer scan, or a new wait) is not woken by its old
	 * entry; its new entry wakes it. */
	a->t_due = 200;
	lg_table_wake_at(t, a);
	a->state = LG_CS_SYN_SENT;
	b->t_due = 210;
	lg_table_wake_at(t, b);
	b->t_due = 260;
	lg_table_wake_at(t, b);
	tap_ok(lg_table_wake_next(t, 220) == NULL && t->wake_n == 1,
		"wake: entries of a slot no longer idle or due later are dropped");
	tap_ok(lg_table_wake_next(t, 260) == b && t->wake_n == 0, "wake: the new entry wakes it");

	/* Full: refused (the timer scan wakes the slot later), and usable again when drained;
	 * the ring wraps around. */
	unsigned queued = 0;

	b->t_due = 300;
	while (lg_table_wake_at(t, b))
		queued++;
	tap_eq_int(queued, t->wake_cap, "wake: a full queue refuses more");
	tap_ok(lg_table_wake_next(t, 300) == b, "wake: the first of the duplicates wakes the slot");
	b->state = LG_CS_SYN_SENT; /* what conn_open() does */
	tap_ok(lg_table_wake_next(t, 300) == NULL && t->wake_n == 0,
		"wake: the other duplicates of that wait are dropped");
	b->state = LG_CS_IDLE;
	b->t_due = 400;
	tap_ok(lg_table_wake_at(t, b) && lg_table_wake_next(t, 400) == b,
		"wake: queued again after wrapping around");
	lg_table_free(t);
}

/* An mbuf over a static buffer: the frame builders need no EAL. */
static struct rte_mbuf *
fake_mbuf(void)
{
	static uint8_t buf[RTE_MBUF_DEFAULT_BUF_SIZE];
	static struct rte_mbuf m;

	memset(&m, 0, sizeof(m));
	m.buf_addr = buf;
	m.buf_len = sizeof(buf);
	rte_mbuf_refcnt_set(&m, 1);
	rte_pktmbuf_reset(&m);
	return &m;
}

static void
test_pkt(void)
{
	struct lg_link l = {
		.our_mac = {{2, 0, 0, 0, 0, 1}},
		.peer_mac = {{2, 0, 0, 0, 0, 2}},
	};
	static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
	struct rte_mbuf *m = fake_mbuf();
	struct lg_seg s = {
		.src_ip = RTE_IPV4(198, 18, 2, 7),
		.dst_ip = RTE_IPV4(198, 18, 0, 2),
		.sport = 1030,
		.dport = 80,
		.seq = 0xfffffff0u,
		.ack = 12345,
		.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
		.payload = req,
		.payload_len = sizeof(req) - 1,
	};
	struct lg_rx_seg r;

	tap_ok(lg_pkt_tcp(m, &l, &s) == 0, "pkt: data segment built");
	tap_ok(pb_ip_ok(pb_ip(m)) && pb_tcp_ok(pb_ip(m)),
		"pkt: IPv4 and TCP checksums right by the reference sum");
	tap_ok(lg_pkt_rx(m, &r) == LG_RX_TCP && r.src_ip == s.src_ip && r.dst_ip == s.dst_ip &&
			r.sport == 1030 && r.dport == 80 && r.seq == s.seq && r.ack == 12345 &&
			r.flags == s.flags && r.payload_len == s.payload_len &&
			memcmp(r.payload, req, r.payload_len) == 0,
		"pkt: the receiver reads back every field");

	s.flags = RTE_TCP_SYN_FLAG;
	s.mss_opt = true;
	s.payload_len = 0;
	lg_pkt_tcp(m, &l, &s);
	tap_ok(pb_tcp_ok(pb_ip(m)) && lg_pkt_rx(m, &r) == LG_RX_TCP && r.mss == LG_MSS &&
			(pb_th(m)->data_off >> 4) == 6,
		"pkt: SYN carries the MSS option");

	static const struct {
		const char *name;
		size_t off; /* from the IP header */
		uint8_t xor ;
		enum lg_rx_kind want;
	} bad[] = {
		{"flipped TCP payload bit", 40, 0x01, LG_RX_MALFORMED},
		{"flipped IP address bit", 12, 0x80, LG_RX_MALFORMED},
		{"IP version 6", 0, 0x20, LG_RX_MALFORMED},
		{"protocol UDP (not ours)", 9, IPPROTO_TCP ^ IPPROTO_UDP, LG_RX_OTHER},
	};

	s.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
	s.mss_opt = false;
	s.payload_len = sizeof(req) - 1;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lg_pkt_tcp(m, &l, &s);
		uint8_t *ip = (uint8_t *)pb_ip(m);

		ip[bad[i].off] ^= bad[i].xor ;
		if (bad[i].want == LG_RX_OTHER) {
			/* Keep the IP checksum right so only the protocol differs. */
			struct rte_ipv4_hdr *h = pb_ip(m);

			h->hdr_checksum = 0;
			h->hdr_checksum = rte_ipv4_cksum(h);
		}
		tap_ok(lg_pkt_rx(m, &r) == bad[i].want, "pkt: %s is classified", bad[i].name);
	}
	lg_pkt_tcp(m, &l, &s);
	pb_ip(m)->total_length = rte_cpu_to_be_16(2000);
	tap_ok(lg_pkt_rx(m, &r) == LG_RX_MALFORMED, "pkt: total length beyond the frame");

	struct rte_ether_addr who = {{2, 0, 0, 0, 0, 9}};

	tap_ok(lg_pkt_arp(m, &l, RTE_ARP_OP_REPLY, RTE_IPV4(198, 18, 2, 7), &who,
		       RTE_IPV4(198, 18, 0, 2)) == 0 &&
			lg_pkt_rx(m, &r) == LG_RX_ARP,
		"pkt: ARP reply built and classified");
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eth + 1);

	tap_ok(rte_is_same_ether_addr(&eth->dst_addr, &who) &&
			rte_is_same_ether_addr(&a->arp_data.arp_sha, &l.our_mac) &&
			a->arp_data.arp_sip == rte_cpu_to_be_32(RTE_IPV4(198, 18, 2, 7)) &&
			a->arp_data.arp_tip == rte_cpu_to_be_32(RTE_IPV4(198, 18, 0, 2)) &&
			a->arp_opcode == RTE_BE16(RTE_ARP_OP_REPLY),
		"pkt: ARP reply says our MAC has the client address");
	lg_pkt_arp(
		m, &l, RTE_ARP_OP_REQUEST, RTE_IPV4(198, 18, 2, 1), NULL, RTE_IPV4(198, 18, 0, 2));
	tap_ok(rte_is_broadcast_ether_addr(&eth->dst_addr) &&
			a->arp_opcode == RTE_BE16(RTE_ARP_OP_REQUEST),
		"pkt: ARP request is broadcast");
}

static void
test_flood_parse(void)
{
	static const struct {
		const char *in;
		int rc;
		enum lg_flood_kind kind;
		double rate;
	} cases[] = {
		{"syn:2000", 0, LG_FLOOD_SYN, 2000},
		{"bad-ack:1", 0, LG_FLOOD_BAD_ACK, 1},
		{"unsigned:10000000", 0, LG_FLOOD_UNSIGNED, 1e7},
		{"one-ip:2.5", 0, LG_FLOOD_ONE_IP, 2.5},
		{"syn", -EINVAL, 0, 0},
		{"syn:", -EINVAL, 0, 0},
		{"syn:0", -EINVAL, 0, 0},
		{"syn:0.5", -EINVAL, 0, 0},
		{"syn:10000001", -EINVAL, 0, 0},
		{"syn:-5", -EINVAL, 0, 0},
		{"syn:1e3x", -EINVAL, 0, 0},
		{"syn:inf", -EINVAL, 0, 0},
		{"synx:5", -EINVAL, 0, 0},
		{"sy:5", -EINVAL, 0, 0},
		{"SYN:5", -EINVAL, 0, 0},
		{":5", -EINVAL, 0, 0},
		{"one_ip:5", -EINVAL, 0, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum lg_flood_kind k = LG_FLOOD_N;
		double r = -1;
		int rc = lg_flood_parse(cases[i].in, &k, &r);

		tap_ok(rc == cases[i].rc && (rc != 0 || (k == cases[i].kind && r == cases[i].rate)),
			"flood: parse '%s'", cases[i].in);
	}
	tap_ok(strcmp(lg_flood_name(LG_FLOOD_BAD_ACK), "bad-ack") == 0 &&
			strcmp(lg_flood_report_key(LG_FLOOD_BAD_ACK), "flood_bad_ack") == 0 &&
			strcmp(lg_flood_report_key(LG_FLOOD_ONE_IP), "flood_one_ip") == 0,
		"flood: names on the command line and in the report");
	tap_ok(lg_flood_of_step(LG_STEP_RESULT) == LG_FLOOD_N &&
			lg_flood_of_step(LG_STEP_HEALTHZ) == LG_FLOOD_N &&
			lg_flood_of_step(LG_STEP_FLOOD_SESSION_FORGED) == LG_FLOOD_UNSIGNED &&
			lg_flood_of_step(LG_STEP_FLOOD_PURCHASE_NONE) == LG_FLOOD_UNSIGNED &&
			lg_flood_of_step(LG_STEP_FLOOD_ONE_IP) == LG_FLOOD_ONE_IP,
		"flood: a connection's step tells honest clients from floods");
}

static void
test_flood_request(void)
{
	const struct lg_flood_req x = {
		.event = 7,
		.host = "shop",
		.session = "s1.5.9.1.VALID",
		.forged_session = "s1.5.9.1.FORGED",
		.forged_purchase = "p1.7.5.9.1.FORGED",
		.reserve_path = "/api/v1/events/7/reserve/7-abc",
	};
	static const struct {
		unsigned step;
		const char *want;
	} cases[] = {
		{LG_STEP_FLOOD_SESSION_FORGED,
			"POST /api/v1/events/7/token HTTP/1.1\r\nHost: shop\r\nAuthorization: "
			"Bearer s1.5.9.1.FORGED\r\nContent-Length: 0\r\n\r\n"},
		{LG_STEP_FLOOD_SESSION_NONE, "POST /api/v1/events/7/token HTTP/1.1\r\nHost: "
					     "shop\r\nContent-Length: 0\r\n\r\n"},
		{LG_STEP_FLOOD_PURCHASE_FORGED,
			"POST /api/v1/events/7/reserve/7-abc HTTP/1.1\r\nHost: shop\r\n"
			"X-Flash-Token: p1.7.5.9.1.FORGED\r\nContent-Length: 0\r\n\r\n"},
		{LG_STEP_FLOOD_PURCHASE_NONE, "POST /api/v1/events/7/reserve/7-abc HTTP/1.1\r\n"
					      "Host: shop\r\nContent-Length: 0\r\n\r\n"},
		{LG_STEP_FLOOD_ONE_IP,
			"POST /api/v1/events/7/token HTTP/1.1\r\nHost: shop\r\nAuthorization: "
			"Bearer s1.5.9.1.VALID\r\nContent-Length: 0\r\n\r\n"},
	};
	char buf[LG_REQ_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = lg_flood_request(buf, sizeof(buf), cases[i].step, &x);

		tap_ok(n == (int)strlen(cases[i].want) && strcmp(buf, cases[i].want) == 0,
			"flood: request of step %u", cases[i].step);
	}
	tap_ok(lg_flood_request(buf, sizeof(buf), LG_STEP_TOKEN, &x) == -1,
		"flood: an honest step is no flood request");
	tap_ok(lg_flood_request(buf, 40, LG_STEP_FLOOD_SESSION_NONE, &x) == -1,
		"flood: a request that does not fit is refused");
}

static void
test_flood_answer(void)
{
#define TOKEN_BODY "{\"token\":\"p1.x\",\"reserve_path\":\"/api/v1/events/1/reserve/7-k\"}"
#define IP_429	   "{\"error\":\"too many requests from this address\"}"
#define USER_429   "{\"error\":\"too many requests for this user\"}"
	static const struct {
		unsigned step;
		unsigned status;
		const char *body;
		bool ok;
	} cases[] = {
		{LG_STEP_FLOOD_SESSION_FORGED, 401, "{\"error\":\"invalid session\"}", true},
		{LG_STEP_FLOOD_SESSION_NONE, 401, "{}", true},
		{LG_STEP_FLOOD_SESSION_FORGED, 403, "{}", false},
		{LG_STEP_FLOOD_SESSION_FORGED, 200, TOKEN_BODY, false},
		{LG_STEP_FLOOD_PURCHASE_FORGED, 403, "{\"error\":\"invalid purchase token\"}",
			true},
		{LG_STEP_FLOOD_PURCHASE_NONE, 403, "{}", true},
		{LG_STEP_FLOOD_PURCHASE_FORGED, 401, "{}", false},
		{LG_STEP_FLOOD_PURCHASE_FORGED, 202, "{\"status\":\"queued\"}", false},
		{LG_STEP_FLOOD_PURCHASE_NONE, 404, "{}", false},
		{LG_STEP_FLOOD_ONE_IP, 200, TOKEN_BODY, true},
		{LG_STEP_FLOOD_ONE_IP, 200, "{\"token\":\"p1.x\"}", false},
		{LG_STEP_FLOOD_ONE_IP, 401, "{}", false},
		{LG_STEP_FLOOD_ONE_IP, 429, IP_429, true},
		{LG_STEP_FLOOD_ONE_IP, 429, USER_429, false},
		{LG_STEP_FLOOD_ONE_IP, 429, "{}", false},
		{LG_STEP_FLOOD_SESSION_NONE, 429, IP_429, true},
		{LG_STEP_FLOOD_PURCHASE_NONE, 410, "{}", true},
		{LG_STEP_FLOOD_SESSION_FORGED, 425, "{}", true},
		{LG_STEP_FLOOD_ONE_IP, 503, "{}", true},
		{LG_STEP_TOKEN, 410, "{}", false},
		{LG_STEP_HEALTHZ, 200, "{}", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lg_http_resp r = {
			.status = cases[i].status,
			.retry_after = -1,
			.body = cases[i].body,
			.body_len = strlen(cases[i].body),
		};

		tap_ok(lg_flood_answer_ok(cases[i].step, &r) == cases[i].ok,
			"flood: step %u, %u %s is %s", cases[i].step, cases[i].status,
			cases[i].body, cases[i].ok ? "expected" : "unexpected");
	}
#undef TOKEN_BODY
#undef IP_429
#undef USER_429
}

/* The stateless floods' answers, written as dataplane/pipeline/tcp.h writes them. */
static void
test_flood_classify(void)
{
	const uint64_t syn_salt = 0x1234, ack_salt = 0x5678;
	const uint32_t cip = RTE_IPV4(198, 19, 3, 4), dp = RTE_IPV4(198, 18, 0, 2);
	const uint16_t sport = 40000, req_len = 120;
	uint32_t isn = lg_flood_syn_isn(syn_salt, cip, sport), seq, ack;

	lg_flood_bad_ack_nums(ack_salt, cip, sport, &seq, &ack);
	tap_ok(lg_flood_syn_isn(syn_salt, cip, sport + 1) != isn &&
			lg_flood_syn_isn(syn_salt + 1, cip, sport) != isn,
		"flood: ISNs depend on port and salt");

	const uint8_t S = RTE_TCP_SYN_FLAG, A = RTE_TCP_ACK_FLAG, R = RTE_TCP_RST_FLAG,
		      F = RTE_TCP_FIN_FLAG, P = RTE_TCP_PSH_FLAG;
	const struct {
		const char *name;
		uint8_t flags;
		uint32_t seq, ack;
		uint16_t len;
		uint16_t dport;
		enum lg_flood_rx want;
	} cases[] = {
		{"SYN-ACK acking the SYN", S | A, 99, isn + 1, 0, sport, LG_FRX_SYN_ACK},
		{"SYN-ACK acking another ISN", S | A, 99, isn + 2, 0, sport, LG_FRX_UNKNOWN},
		{"SYN-ACK to another port", S | A, 99, isn + 1, 0, sport + 1, LG_FRX_UNKNOWN},
		{"SYN-ACK with data", S | A, 99, isn + 1, 5, sport, LG_FRX_UNKNOWN},
		{"RST+ACK refusing the SYN", R | A, 0, isn + 1, 0, sport, LG_FRX_SYN_RST},
		{"RST <SEQ=SEG.ACK> to the bad ACK", R, ack, 0, 0, sport, LG_FRX_BAD_ACK_RST},
		{"RST at another sequence number", R, ack + 1, 0, 0, sport, LG_FRX_UNKNOWN},
		{"RST+ACK to the bad ACK", R | A, ack, seq + req_len, 0, sport, LG_FRX_UNKNOWN},
		{"an answer taking the forged cookie", A | P | F, ack, seq + req_len, 200, sport,
			LG_FRX_BAD_ACK_TAKEN},
		{"a pure ACK of nothing of ours", A, 5, 6, 0, sport, LG_FRX_UNKNOWN},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lg_rx_seg s = {
			.src_ip = dp,
			.dst_ip = cip,
			.sport = 80,
			.dport = cases[i].dport,
			.seq = cases[i].seq,
			.ack = cases[i].ack,
			.flags = cases[i].flags,
			.payload = "",
			.payload_len = cases[i].len,
		};

		tap_ok(lg_flood_classify(syn_salt, ack_salt, req_len, &s) == cases[i].want,
			"flood: %s is classified", cases[i].name);
	}
}

static void
test_args(void)
{
	uint32_t base = 7, n = 7, net = 0;
	unsigned plen = 0;

	tap_eq_int(lg_parse_net("198.18.2.0/24", &base, &n, NULL, NULL), 0, "net: /24 parses");
	tap_ok(base == (198u << 24 | 18u << 16 | 2u << 8 | 1u) && n == 254,
		"net: a /24 has 254 hosts from .1");
	tap_eq_int(lg_parse_net("198.18.2.4/31", &base, &n, NULL, NULL), 0, "net: /31 parses");
	tap_ok(base == (198u << 24 | 18u << 16 | 2u << 8 | 4u) && n == 2, "net: a /31 has both");
	tap_eq_int(lg_parse_net("198.18.2.9/32", &base, &n, NULL, NULL), 0, "net: /32 parses");
	tap_eq_int(n, 1, "net: a /32 is one host");
	base = n = 7;
	tap_eq_int(lg_parse_net("198.18.2.1/24", &base, &n, &net, &plen), -EDOM,
		"net: host bits set is -EDOM");
	tap_ok(net == (198u << 24 | 18u << 16 | 2u << 8) && plen == 24 && base == 7 && n == 7,
		"net: -EDOM names the network and changes nothing else");
	const char *bad[] = {"198.18.2.0", "198.18.2.0/7", "198.18.2.0/33", "198.18.2/24",
		"198.18.2.0/24x", "x/24", "198.18.2.0/-1", ""};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_eq_int(lg_parse_net(bad[i], &base, &n, NULL, NULL), -EINVAL, bad[i]);
}

/* lg_json_object() and lg_json_uint(): a token answer's challenge, a queued poll's place. */
static void
test_json_members(void)
{
	static const char chal[] = "{\"token\":\"p2.x\",\"reserve_path\":\"/r\","
				   "\"challenge\":{\"prefix\":\"AbC-_d\",\"bits\":12}}";
	const char *o = NULL;
	size_t n = 0;
	uint64_t v = 0;

	tap_ok(lg_json_object(chal, strlen(chal), "challenge", &o, &n) == 0 &&
			n == strlen("{\"prefix\":\"AbC-_d\",\"bits\":12}") && o[0] == '{' &&
			o[n - 1] == '}',
		"json object: the challenge, braces included");
	tap_ok(lg_json_uint(o, n, "bits", &v) == 0 && v == 12, "json uint: bits 12 in the object");
	tap_eq_int(lg_json_object(chal, strlen(chal), "token", &o, &n), -ENOENT,
		"json object: a string member is not an object");
	tap_eq_int(lg_json_object("{\"challenge\":null}", 18, "challenge", &o, &n), -ENOENT,
		"json object: null is no object");
	tap_eq_int(lg_json_object("{\"challenge\":{\"prefix\":\"}\"", 26, "challenge", &o, &n),
		-EINVAL, "json object: cut before its end (a brace in a string does not end it)");
	tap_ok(lg_json_object("{\"a\":{\"b\":{\"c\":1}},\"d\":2}", 25, "a", &o, &n) == 0 &&
			n == strlen("{\"b\":{\"c\":1}}"),
		"json object: nested objects");

	static const struct {
		const char *body;
		int rc;
		uint64_t want;
	} t[] = {
		{"{\"status\":\"queued\",\"position\":42,\"wait_ms\":1500}", 0, 42},
		{"{\"position\": 0}", 0, 0},
		{"{\"position\":null}", -ENOENT, 0},
		{"{\"status\":\"queued\"}", -ENOENT, 0},
		{"{\"status\":\"position\"}", -ENOENT, 0},
		{"{\"position\":-1}", -EINVAL, 0},
		{"{\"position\":1.5}", -EINVAL, 0},
		{"{\"position\":\"3\"}", -EINVAL, 0},
		{"{\"position\":99999999999999999999}", -EINVAL, 0},
		{"{\"position\":7", 0, 7},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct guard_buf g = {0};
		size_t len = strlen(t[i].body);
		const char *in = guard_place(&g, t[i].body, len);
		int rc = lg_json_uint(in, len, "position", &v);

		tap_ok(rc == t[i].rc && (rc != 0 || v == t[i].want),
			"json uint \"position\" in %s: rc %d", t[i].body, rc);
		guard_free(&g);
	}
}

/* Bots spread evenly, think times per user, the pre-queue's arrivals. */
static void
test_sched(void)
{
	bool exact = true, spread = true;

	for (uint64_t n = 1; n <= 300; n += 37) {
		for (uint64_t nb = 0; nb <= n; nb += 1 + n / 7) {
			uint64_t count = 0, run = 0, max_run = 0;

			for (uint64_t i = 0; i < n; i++) {
				bool b = lg_sched_is_bot(i, n, nb);

				count += b;
				run = b ? 0 : run + 1;
				max_run = run > max_run ? run : max_run;
			}
			exact &= count == nb;
			/* No stretch of people longer than n / nb: the bots are spread. */
			spread &= nb == 0 || max_run <= n / nb;
		}
	}
	tap_ok(exact, "sched: exactly nb of n users are bots");
	tap_ok(spread, "sched: bots spread evenly (no run of people longer than n / nb)");
	tap_ok(!lg_sched_is_bot(5, 5, 5) && lg_sched_is_bot(4, 5, 5) && !lg_sched_is_bot(0, 0, 0),
		"sched: out of range is no bot");

	bool range = true, again = true, faster = true;
	double sum = 0;

	for (uint64_t u = 1; u <= 10000; u++) {
		double p = lg_sched_think_ms(u, 1, 1000, false, 100);
		double b = lg_sched_think_ms(u, 1, 1000, true, 100);

		range &= p >= 500 && p < 1500;
		again &= p == lg_sched_think_ms(u, 1, 1000, false, 100);
		faster &= b * 100 > p * 0.999999 && b * 100 < p * 1.000001;
		sum += p;
	}
	tap_ok(range, "sched: people think 500..1500 ms for a mean of 1000");
	tap_ok(sum / 10000 > 980 && sum / 10000 < 1020, "sched: their mean is about 1000 ms (%.1f)",
		sum / 10000);
	tap_ok(again, "sched: a user's think time is the same each time it is asked");
	tap_ok(faster, "sched: a bot thinks --bot-speed (100) times faster than the same draw");
	tap_ok(lg_sched_think_ms(1, 1, 1000, false, 100) !=
			lg_sched_think_ms(1, 2, 1000, false, 100),
		"sched: another seed, another draw");
	tap_ok(lg_sched_think_ms(7, 1, 0, false, 100) == 0 &&
			lg_sched_think_ms(7, 1, 0, true, 100) == 0,
		"sched: no --think-ms, no think time");

	/* 1000 users, 30 % in the burst: 700 over the 10 s before the start, in order, each in
	 * its slice, every second of the span holding 70 of them. */
	uint64_t n_pre = lg_sched_pre_count(1000, 30);
	unsigned per_s[10] = {0};
	bool inside = true, ordered = true, burst = true;
	double last = -1e9;

	tap_eq_int((long long)n_pre, 700, "sched: 1000 users with a 30 %% burst: 700 before");
	tap_ok(lg_sched_pre_count(1000, 0) == 1000 && lg_sched_pre_count(1000, 100) == 0 &&
			lg_sched_pre_count(3, 50) == 2,
		"sched: no burst, all burst, and rounding (3 users, 50 %%: 2 before)");
	for (uint64_t k = 0; k < 1000; k++) {
		double a = lg_sched_arrival_s(k, n_pre, 10, lg_sched_unit(k, 5));

		if (k >= n_pre) {
			burst &= a == 0;
			continue;
		}
		inside &= a >= -10 && a < 0;
		inside &=
			a >= -10 + 10.0 * (double)k / 700 && a < -10 + 10.0 * (double)(k + 1) / 700;
		ordered &= a >= last;
		last = a;
		if (a >= -10 && a < 0)
			per_s[(int)(a + 10)]++;
	}
	tap_ok(inside, "sched: each early arrival in [-10 s, 0), in its own slice of the span");
	tap_ok(ordered, "sched: early arrivals in launch order");
	tap_ok(burst, "sched: the other 300 arrive at the start");
	bool even = true;

	for (int i = 0; i < 10; i++)
		even &= per_s[i] == 70;
	tap_ok(even, "sched: every second of the span holds 70 arrivals");
	tap_ok(lg_sched_arrival_s(0, 0, 10, 0.5) == 0 && lg_sched_arrival_s(0, 5, 0, 0.5) == 0,
		"sched: no pre-queue, everyone at the start");

	/* A queued buyer's wait: as the answer says, within [--poll-ms, --poll-max-ms]. */
	tap_ok(lg_sched_poll_wait_ms(false, 0, 500, 5000) == 500 &&
			lg_sched_poll_wait_ms(true, 100, 500, 5000) == 500 &&
			lg_sched_poll_wait_ms(true, 1234, 500, 5000) == 1234 &&
			lg_sched_poll_wait_ms(true, 60000, 500, 5000) == 5000 &&
			lg_sched_poll_wait_ms(true, 60000, 500, 100) == 500,
		"sched: a queued poll waits wait_ms within [poll, poll max], poll without one");
}

/*
 * The challenge of a token answer, built as the data plane builds it (a "p2" token minted
 * with tok_purchase_mint_pow() and its MAC as the prefix), and the solver, which must find
 * what pow_solve() finds whatever slices it is given.
 */
static void
test_pow(void)
{
	struct tok_keyring ring;
	static const uint8_t key[32] = "sale-key-of-the-loadgen-test-123";
	char p2[TOK_BUF_SIZE], p1[TOK_BUF_SIZE], body[512], other[TOK_BUF_SIZE];
	struct lg_pow_challenge ch;
	const char *mac;

	tok_keyring_init(&ring);
	tok_keyring_set(&ring, 3, key, sizeof(key), true);
	int n2 = tok_purchase_mint_pow(&ring, 9, 1234, 2000000000, 11, p2, sizeof(p2));
	int n1 = tok_purchase_mint(&ring, 9, 1234, 2000000000, p1, sizeof(p1));
	int no = tok_purchase_mint_pow(&ring, 9, 1235, 2000000000, 11, other, sizeof(other));

	if (!tap_ok(n2 > 0 && n1 > 0 && no > 0, "pow: tokens minted"))
		return;
	mac = p2 + n2 - TOK_MAC_CHARS;
	snprintf(body, sizeof(body),
		"{\"token\":\"%s\",\"reserve_path\":\"/r\",\"challenge\":{\"prefix\":\"%.*s\","
		"\"bits\":11}}",
		p2, TOK_MAC_CHARS, mac);
	tap_ok(lg_pow_from_answer(body, strlen(body), p2, (size_t)n2, &ch) == 1 && ch.bits == 11 &&
			ch.plen == TOK_MAC_CHARS && memcmp(ch.prefix, mac, TOK_MAC_CHARS) == 0 &&
			ch.prefix[TOK_MAC_CHARS] == '\0',
		"pow: a p2 token's answer: its challenge, prefix the token's MAC, 11 bits");
	snprintf(body, sizeof(body), "{\"token\":\"%s\",\"reserve_path\":\"/r\"}", p1);
	tap_eq_int(lg_pow_from_answer(body, strlen(body), p1, (size_t)n1, &ch), 0,
		"pow: a p1 token's answer without a challenge: none to solve");
	snprintf(body, sizeof(body), "{\"token\":\"%s\",\"challenge\":null}", p1);
	tap_eq_int(lg_pow_from_answer(body, strlen(body), p1, (size_t)n1, &ch), 0,
		"pow: a challenge of null: none to solve");
	snprintf(body, sizeof(body), "{\"token\":\"%s\",\"reserve_path\":\"/r\"}", p2);
	tap_eq_int(lg_pow_from_answer(body, strlen(body), p2, (size_t)n2, &ch), -EINVAL,
		"pow: a p2 token without its challenge is malformed");

	static const char *const bad[] = {
		"{\"challenge\":{\"prefix\":\"%.*s\",\"bits\":12}}", /* not the token's bits */
		"{\"challenge\":{\"prefix\":\"%.*s\",\"bits\":0}}",
		"{\"challenge\":{\"prefix\":\"%.*s\",\"bits\":\"11\"}}",
		"{\"challenge\":{\"prefix\":\"%.*s\"}}",
		"{\"challenge\":{\"prefix\":\"%.*sx\",\"bits\":11}}", "{\"challenge\":\"%.*s\"}",
		"{\"challenge\":{\"prefix\":\"%.*s\",\"bits\":11", /* never closed */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(body, sizeof(body), bad[i], TOK_MAC_CHARS, mac);
		tap_eq_int(
			lg_pow_from_answer(body, strlen(body), p2, (size_t)n2, &ch), -EINVAL, body);
	}
	/* Another token's challenge (a replayed answer) and a challenge beside a p1 token. */
	snprintf(body, sizeof(body), "{\"challenge\":{\"prefix\":\"%.*s\",\"bits\":11}}",
		TOK_MAC_CHARS, other + no - TOK_MAC_CHARS);
	tap_eq_int(lg_pow_from_answer(body, strlen(body), p2, (size_t)n2, &ch), -EINVAL,
		"pow: a challenge whose prefix is another token's is malformed");
	snprintf(body, sizeof(body), "{\"challenge\":{\"prefix\":\"%.*s\",\"bits\":11}}",
		TOK_MAC_CHARS, mac);
	tap_eq_int(lg_pow_from_answer(body, strlen(body), p1, (size_t)n1, &ch), -EINVAL,
		"pow: a challenge beside a p1 token is malformed");
	tap_ok(!lg_pow_of_token(p1, (size_t)n1, &ch) && lg_pow_of_token(p2, (size_t)n2, &ch) &&
			ch.bits == 11,
		"pow: a token's own claim");

	/* The solver in slices of 7, 1000 and all at once finds pow_solve()'s nonce. */
	bool same = true, bounded = true;

	for (unsigned bits = 1; bits <= 14; bits++) {
		char want[POW_SOLUTION_MAX + 1];
		uint64_t want_tries = 0;

		ch.bits = (uint8_t)bits;
		if (pow_solve(ch.prefix, ch.plen, bits, 1u << 24, want, &want_tries) != 0) {
			same = false;
			continue;
		}
		static const uint64_t slice[] = {7, 1000, UINT64_MAX / 4};

		for (size_t k = 0; k < 3; k++) {
			struct lg_pow_solver sv;
			uint64_t calls = 0;

			lg_pow_start(&sv, &ch);
			for (;;) {
				uint64_t before = sv.tries;
				bool found = lg_pow_step(&sv, slice[k]);

				bounded &= sv.tries - before <= slice[k];
				calls++;
				if (found || calls > (1u << 24))
					break;
			}
			same &= strcmp(sv.nonce, want) == 0 && sv.tries == want_tries &&
				pow_check(ch.prefix, ch.plen, sv.nonce, sv.nlen, bits);
		}
	}
	tap_ok(same,
		"pow: the solver finds pow_solve()'s nonce and tries at 1..14 bits, in any slices");
	tap_ok(bounded, "pow: a slice never tries more nonces than it is given");

	/* The nonces' text counts on past 9, 99, 999: 1234 tries without a solution end at 1234. */
	struct lg_pow_solver sv;

	ch.bits = 30; /* 2^-30 a try: none of the first 1234 solves it (checked by pow_check) */
	lg_pow_start(&sv, &ch);
	bool found = lg_pow_step(&sv, 1234);

	tap_ok(!found && sv.tries == 1234 && strcmp(sv.nonce, "1234") == 0 && sv.nlen == 4,
		"pow: after 1234 tries without a solution the next nonce is \"1234\" (%s)",
		sv.nonce);
	tok_keyring_wipe(&ring);
}

/* The timer heap: waits of any length woken in the order of their times. */
static void
test_timer(void)
{
	struct lg_table *t = lg_table_create(8, 1024);
	static const uint64_t due[8] = {500, 100, 900, 300, 700, 200, 800, 600};
	bool order = true;
	uint64_t last = 0;

	if (!tap_ok(t != NULL, "timer: table"))
		return;
	for (int i = 0; i < 8; i++) {
		struct lg_conn *c = lg_table_take(t);

		c->state = LG_CS_IDLE;
		c->t_due = due[(c - t->c)];
		lg_table_timer_at(t, c);
	}
	tap_ok(lg_table_timer_next(t, 99) == NULL, "timer: nothing before the first is due");
	/* Slot 3 (due 300) moved on: its timer is dropped, not woken. */
	t->c[3].t_due = 5000;
	for (int i = 0; i < 7; i++) {
		struct lg_conn *c = lg_table_timer_next(t, 1000);

		order &= c != NULL && c->t_due >= last && c != &t->c[3];
		last = c ? c->t_due : UINT64_MAX;
	}
	tap_ok(order, "timer: the 7 still waiting woken in the order of their times");
	tap_ok(lg_table_timer_next(t, 1000) == NULL && t->timer_n == 0,
		"timer: the moved slot's stale entry dropped, the heap empty");
	lg_table_free(t);
}

#define KEY16 "00112233445566778899aabbccddeeff"

/* The loadgen's command line: every message is the one the loadgen has always given. */
static const struct {
	const char *argv[16];
	int want;
	const char *msg; /* err, whole */
} cli_cases[] = {
	{{"--mode", "sale", "--auth-key-hex", KEY16}, 0, ""},
	{{"-h"}, 1, ""},
	{{"--concurrency", "0", "--help"}, -1, "bad value '0' for --concurrency: 1..64000"},
	{{"--help", "--concurrency", "0"}, 1, ""},
	{{"--mode", "x"}, -1,
		"bad value 'x' for --mode: healthz, syn-flood, sale, reserve, result, "
		"healthz-blast "
		"or reserve-blast"},
	{{"--duration-s", "0"}, -1,
		"bad value '0' for --duration-s: seconds, more than 0 and at most 86400"},
	{{"--port", "65536"}, -1, "bad value '65536' for --port: 1..65535"},
	{{"--dst", "1.2.3"}, -1, "bad value '1.2.3' for --dst: an IPv4 address"},
	{{"--src-net", "198.18.2.1/24"}, -1,
		"bad value '198.18.2.1/24' for --src-net: A.B.C.D/P with P 8..32 and no host bits "
		"set"},
	{{"--flood-src-net", "198.19.2.0/32"}, -1,
		"bad value '198.19.2.0/32' for --flood-src-net: A.B.C.D/P with P 8..31 and no host "
		"bits set"},
	{{"--host", "a b"}, -1,
		"bad value 'a b' for --host: a host name of at most 63 characters, no spaces"},
	{{"--bots", "101%"}, -1,
		"bad value '101%' for --bots: a number of users, or a percent of them (0%..100%)"},
	{{"--auth-key-hex", "0011"}, -1,
		"bad value '0011' for --auth-key-hex: 32 to 128 hex digits (16 to 64 bytes)"},
	{{"--cookie-secret-hex", KEY16 "00"}, -1,
		"bad value '" KEY16 "00' for --cookie-secret-hex: 32 hex digits (the data plane's "
		"syncookie_secret)"},
	{{"--flood", "syn:10", "--flood", "syn:20"}, -1,
		"--flood syn given twice; give each kind once"},
	{{"--flood", "foo:5"}, -1,
		"bad value 'foo:5' for --flood: KIND:RATE, KIND syn, bad-ack, unsigned or one-ip, "
		"RATE per second 1..1e7"},
	{{"stray"}, -1, "unexpected argument 'stray' (options go after --)"},
	{{"--dst", "198.18.2.5"}, -1, "--dst must not be inside --src-net"},
	{{"--think-ms", "5"}, -1, "--bots, --think-ms and --arrive-before go with --mode sale"},
	{{"--mode", "sale", "--bots", "200", "--users", "100", "--auth-key-hex", KEY16}, -1,
		"--bots 200 is more than the 100 --users"},
	{{"--mode", "sale", "--arrive-before", "5", "--auth-key-hex", KEY16}, -1,
		"--arrive-before places the arrivals before the sale's start: give --start-at"},
	{{"--mode", "sale"}, -1,
		"--mode sale needs --auth-key-hex (and --kid), the auth key the data plane "
		"verifies "
		"session tokens with"},
	{{"--mode", "healthz-blast"}, -1,
		"--mode healthz-blast computes the data plane's SYN cookies: give "
		"--cookie-secret-hex "
		"with its syncookie_secret"},
	{{"--mode", "reserve"}, -1,
		"--mode reserve needs --sale-key-hex (and --sale-kid), the sale key the data plane "
		"signs purchase tokens and receipts with"},
	{{"--mode", "reserve-blast", "--sale-key-hex", KEY16, "--cookie-secret-hex", KEY16,
		 "--user-base", "95", "--connections", "10"},
		-1,
		"--mode reserve-blast needs user ids of one length: --user-base 95 to 104 changes "
		"digits (try --user-base 10)"},
	{{"--mode", "reserve", "--sale-key-hex", KEY16, "--user-base", "9223372036854775807",
		 "--connections", "2"},
		-1, "--user-base + --connections goes past the largest user id"},
	{{"--flood", "syn:10", "--mode", "syn-flood"}, -1,
		"--flood goes with --mode healthz or sale; for SYNs alone use --mode syn-flood, or "
		"--flood syn beside healthz clients"},
	{{"--flood", "syn:10", "--flood-src-net", "198.18.2.0/24"}, -1,
		"--flood-src-net must not overlap --src-net nor hold --dst"},
	{{"--flood", "one-ip:10"}, -1,
		"--flood one-ip sends token requests with valid sessions; give --auth-key-hex (and "
		"--kid)"},
	{{"--flood-max", "100"}, -1, "--flood-max goes with --flood"},
	{{"--flood", "syn:10", "--flood-max", "0"}, -1,
		"bad value '0' for --flood-max: 1 or more flood segments and connections"},
	{{"--flood", "syn:10", "--flood-max", "100"}, 0, ""},
	{{"--bogus"}, -1, ""}, /* getopt_long() says it, the usage follows */
	{{"--users"}, -1, ""},
};

static void
test_cli(void)
{
	struct lg_opts o;
	char err[512];

	for (unsigned i = 0; i < RTE_DIM(cli_cases); i++) {
		char *argv[18] = {"flashgate-loadgen"};
		int argc = 1;

		for (unsigned k = 0; cli_cases[i].argv[k] != NULL; k++)
			argv[argc++] = (char *)(uintptr_t)cli_cases[i].argv[k];
		int rc = lg_cli_parse(argc, argv, &o, err, sizeof(err));

		tap_ok(rc == cli_cases[i].want && strcmp(err, cli_cases[i].msg) == 0,
			"cli %u (%s ...): result %d, message '%s'", i, argv[1], rc, err);
		tok_keyring_wipe(&o.auth);
		tok_keyring_wipe(&o.sale);
	}

	/* The defaults, and the values of a good line where they belong. */
	char *def[] = {"flashgate-loadgen"};

	tap_ok(lg_cli_parse(1, def, &o, err, sizeof(err)) == 0 && o.mode == LG_MODE_HEALTHZ &&
			o.count == 1000 && o.concurrency == 64 && o.duration_s == 10 &&
			o.src_base == RTE_IPV4(198, 18, 2, 1) && o.n_src == 254 &&
			o.dst_ip == RTE_IPV4(198, 18, 0, 2) && o.dport == 80 && o.think_ms == 0 &&
			o.poll_max_ms == 5000 && o.pow_max_tries == 1ull << 32 &&
			strcmp(o.host, "198.18.0.2") == 0,
		"cli: the defaults (%s)", err);
	char *good[] = {"flashgate-loadgen", "--mode", "sale", "--users", "50", "--bots", "10%",
		"--concurrency", "7", "--port", "8080", "--retries", "0", "--dst", "10.9.0.1",
		"--src-net", "10.8.0.0/16", "--poll-ms", "6000", "--proxy-v2", "--pcap", "x.pcap",
		"--auth-key-hex", KEY16, "--kid", "4", "--host", "shop", "--rate", "2.5"};

	tap_ok(lg_cli_parse((int)RTE_DIM(good), good, &o, err, sizeof(err)) == 0 &&
			o.mode == LG_MODE_SALE && o.count == 50 && o.bots == 5 && o.populations &&
			o.think_ms == 1000 && o.concurrency == 7 && o.dport == 8080 &&
			o.retries == 0 && o.dst_ip == RTE_IPV4(10, 9, 0, 1) &&
			o.src_base == RTE_IPV4(10, 8, 0, 1) && o.n_src == 65534 &&
			o.poll_max_ms == 6000 && o.proxy_v2 && strcmp(o.pcap_path, "x.pcap") == 0 &&
			o.kid == 4 && strcmp(o.host, "shop") == 0 && o.rate == 2.5,
		"cli: a sale line's values land in the settings (%s)", err);
	tok_keyring_wipe(&o.auth);

	/* --help: each option on its line, the help from column 24, long names followed by two
	 * spaces, continuation lines indented. */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	lg_cli_usage(f);
	fclose(f);
	tap_ok(strstr(text, "\n  --mode MODE          healthz (GET /healthz), syn-flood, sale "
			    "(token, reserve,\n                       result polls") != NULL &&
			strstr(text,
				"\n  --cookie-secret-hex HEX  the blasts: the data plane's "
				"syncookie_secret (32 hex\n                       digits)\n") !=
				NULL &&
			strstr(text, "\n  --auth-key-file PATH the same from a file") != NULL &&
			strstr(text, "\n  --bots N|P%          sale: N users") != NULL &&
			strstr(text, "\n  -h, --help           this text\n\nExit status: 0") !=
				NULL,
		"cli: --help lays out each option and its help");
	free(text);
}

int
main(void)
{
	test_args();
	test_cli();
	test_http();
	test_http_kept();
	test_json();
	test_hist();
	test_table();
	test_wake();
	test_pkt();
	test_flood_parse();
	test_flood_request();
	test_flood_answer();
	test_flood_classify();
	test_json_members();
	test_sched();
	test_pow();
	test_timer();
	return tap_done();
}
