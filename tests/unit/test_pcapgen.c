/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flashgate-pcapgen's modules on their own: every frame of every stream (checksums by
 * tests/lib/pktbuild.h's independent reference sum, headers, flows), the address/port pairs
 * never repeating up to the bound, determinism per seed, the pcap file read back byte for byte,
 * the reserve stream's connections (cookies the data plane accepts, tokens and paths its keys
 * verify), and the option checks with their messages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/pktbuild.h"
#include "tests/tap.h"
#include "tools/pcapgen/pcapgen_args.h"
#include "tools/pcapgen/pcapgen_stream.h"

#define NET29 RTE_IPV4(198, 18, 4, 0) /* 198.18.4.0/29: hosts .1 to .6 */
#define DP_IP RTE_IPV4(198, 18, 0, 2)

static struct pcapgen_stream s, s2;

static struct pcapgen_stream_cfg
cfg_of(enum pcapgen_stream_kind kind, uint64_t count)
{
	struct pcapgen_stream_cfg c = {
		.kind = kind,
		.count = count,
		.src_base = NET29 + 1,
		.n_src = 6,
		.dst_ip = DP_IP,
		.dport = 80,
		.src_mac = {{2, 0, 0, 0, 0, 1}},
		.dst_mac = {{2, 0, 0, 0, 0, 2}},
		.seed = 42,
	};

	return c;
}

static void
test_kind_names(void)
{
	static const char *const names[] = {"syn", "bad-ack", "arp", "reserve"};
	enum pcapgen_stream_kind k;
	int ok = 1;

	for (unsigned i = 0; i < RTE_DIM(names); i++)
		ok &= pcapgen_stream_kind_parse(names[i], &k) == 0 &&
		      strcmp(pcapgen_stream_kind_name(k), names[i]) == 0;
	tap_ok(ok, "stream names parse and print back");
	tap_ok(pcapgen_stream_kind_parse("SYN", &k) == -EINVAL &&
			pcapgen_stream_kind_parse("", &k) == -EINVAL &&
			pcapgen_stream_kind_parse("syn-flood", &k) == -EINVAL,
		"other stream names are refused");
}

static void
test_init_bounds(void)
{
	struct pcapgen_stream_cfg c = cfg_of(PCAPGEN_STREAM_SYN, 0);

	tap_eq_int(pcapgen_stream_init(&s, &c), -EINVAL, "init: count 0 refused");
	c.count = 6ull * PCAPGEN_SPORT_COUNT + 1;
	tap_eq_int(pcapgen_stream_init(&s, &c), -EINVAL,
		"init: more frames than address/port pairs refused");
	c.count = 6ull * PCAPGEN_SPORT_COUNT;
	tap_eq_int(pcapgen_stream_init(&s, &c), 0, "init: exactly as many frames as pairs taken");
	c.dport = 0;
	tap_eq_int(pcapgen_stream_init(&s, &c), -EDOM, "init: TCP stream to port 0 refused");
	c = cfg_of(PCAPGEN_STREAM_ARP, 1);
	c.dport = 0;
	tap_eq_int(pcapgen_stream_init(&s, &c), 0, "init: ARP stream needs no port");
	uint16_t len;

	tap_ok(pcapgen_stream_frame(&s, 1, &len, NULL) == NULL,
		"frame: index past count gives NULL");
}

/* Checks the Ethernet, IPv4 and TCP headers of a TCP frame against flow f; returns 1 if all
 * hold, else prints what did not. */
static int
tcp_frame_ok(const uint8_t *frame, uint16_t len, const struct pcapgen_flow *f, uint8_t flags,
	uint16_t want_len)
{
	static const uint8_t dmac[6] = {2, 0, 0, 0, 0, 2}, smac[6] = {2, 0, 0, 0, 0, 1};
	const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)frame;
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
	const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(ip + 1);
	const char *why = NULL;

	if (len != want_len)
		why = "length";
	else if (memcmp(&eth->dst_addr, dmac, 6) || memcmp(&eth->src_addr, smac, 6) ||
		 eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4))
		why = "ethernet header";
	else if (ip->version_ihl != 0x45 || rte_be_to_cpu_16(ip->total_length) != len - 14 ||
		 ip->next_proto_id != IPPROTO_TCP || ip->time_to_live == 0 ||
		 (rte_be_to_cpu_16(ip->fragment_offset) & 0x3fff) != 0)
		why = "ipv4 header";
	else if (!pb_ip_ok(ip))
		why = "ipv4 checksum";
	else if (!pb_tcp_ok(ip))
		why = "tcp checksum";
	else if (rte_be_to_cpu_32(ip->src_addr) != f->src_ip ||
		 rte_be_to_cpu_32(ip->dst_addr) != DP_IP ||
		 rte_be_to_cpu_16(th->src_port) != f->sport || rte_be_to_cpu_16(th->dst_port) != 80)
		why = "addresses or ports";
	else if (rte_be_to_cpu_32(th->sent_seq) != f->seq ||
		 rte_be_to_cpu_32(th->recv_ack) != f->ack || th->tcp_flags != flags)
		why = "seq, ack or flags";
	else if (f->src_ip <= NET29 || f->src_ip >= NET29 + 7 || f->sport < PCAPGEN_SPORT_MIN)
		why = "source outside --src-net or below port 1024";
	if (why != NULL)
		tap_diag("frame from %08x:%u: bad %s", f->src_ip, f->sport, why);
	return why == NULL;
}

static void
test_syn(void)
{
	struct pcapgen_stream_cfg c = cfg_of(PCAPGEN_STREAM_SYN, 100);
	int ok = 1, mss_ok = 1;

	tap_eq_int(pcapgen_stream_init(&s, &c), 0, "syn: stream set up");
	for (uint64_t i = 0; i < c.count; i++) {
		struct pcapgen_flow f;
		uint16_t len;
		const uint8_t *fr = pcapgen_stream_frame(&s, i, &len, &f);

		if (fr == NULL || !tcp_frame_ok(fr, len, &f, RTE_TCP_SYN_FLAG, 14 + 20 + 24)) {
			ok = 0;
			break;
		}
		const uint8_t *o = fr + 14 + 20 + 20;

		/* RFC 9293 §3.2: MSS option, kind 2, length 4; data offset 6 words. */
		mss_ok &= fr[14 + 20 + 12] == 0x60 && o[0] == 2 && o[1] == 4 &&
			  (o[2] << 8 | o[3]) == LG_MSS;
	}
	tap_ok(ok, "syn: 100 frames with right headers, flags SYN, both checksums right");
	tap_ok(mss_ok, "syn: each carries the MSS option %u", LG_MSS);
}

static void
test_bad_ack(void)
{
	struct pcapgen_stream_cfg c = cfg_of(PCAPGEN_STREAM_BAD_ACK, 50);
	const uint16_t req_len = sizeof(PCAPGEN_BAD_ACK_REQUEST) - 1;
	int ok = 1, payload_ok = 1, acks_differ = 0;
	uint32_t first_ack = 0;

	tap_eq_int(pcapgen_stream_init(&s, &c), 0, "bad-ack: stream set up");
	for (uint64_t i = 0; i < c.count; i++) {
		struct pcapgen_flow f;
		uint16_t len;
		const uint8_t *fr = pcapgen_stream_frame(&s, i, &len, &f);

		if (fr == NULL || !tcp_frame_ok(fr, len, &f, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
					  (uint16_t)(14 + 20 + 20 + req_len))) {
			ok = 0;
			break;
		}
		payload_ok &= memcmp(fr + 54, PCAPGEN_BAD_ACK_REQUEST, req_len) == 0;
		if (i == 0)
			first_ack = f.ack;
		else
			acks_differ |= f.ack != first_ack;
	}
	tap_ok(ok, "bad-ack: 50 frames with right headers, flags ACK|PSH, both checksums right");
	tap_ok(payload_ok, "bad-ack: each carries the whole GET /healthz request");
	tap_ok(acks_differ, "bad-ack: the ACK numbers vary from frame to frame");
}

static void
test_arp(void)
{
	struct pcapgen_stream_cfg c = cfg_of(PCAPGEN_STREAM_ARP, 12);
	int ok = 1;

	memset(&c.dst_mac, 0xff, sizeof(c.dst_mac));
	tap_eq_int(pcapgen_stream_init(&s, &c), 0, "arp: stream set up");
	for (uint64_t i = 0; i < c.count && ok; i++) {
		struct pcapgen_flow f;
		uint16_t len;
		const uint8_t *fr = pcapgen_stream_frame(&s, i, &len, &f);
		const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)fr;
		const struct rte_arp_hdr *a = (const struct rte_arp_hdr *)(eth + 1);

		ok = fr != NULL && len == 42 && rte_is_broadcast_ether_addr(&eth->dst_addr) &&
		     eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_ARP) &&
		     a->arp_hardware == RTE_BE16(RTE_ARP_HRD_ETHER) &&
		     a->arp_protocol == RTE_BE16(RTE_ETHER_TYPE_IPV4) && a->arp_hlen == 6 &&
		     a->arp_plen == 4 && a->arp_opcode == RTE_BE16(RTE_ARP_OP_REQUEST) &&
		     rte_is_same_ether_addr(&a->arp_data.arp_sha, &c.src_mac) &&
		     rte_be_to_cpu_32(a->arp_data.arp_sip) == f.src_ip &&
		     rte_be_to_cpu_32(a->arp_data.arp_tip) == DP_IP && f.src_ip > NET29 &&
		     f.src_ip < NET29 + 7;
	}
	tap_ok(ok, "arp: 12 broadcast requests 'who has --dst, tell host i of --src-net'");
}

/* Every frame up to the bound has its own address/port pair. */
#define R_NOW  1764590000u
#define R_SALT "salekey-pcapgen-test-0123456789"

static const uint8_t r_secret[16] = "pcapgen-cookies!";

static struct pcapgen_stream_cfg
reserve_cfg(uint64_t count)
{
	struct pcapgen_stream_cfg c = cfg_of(PCAPGEN_STREAM_RESERVE, count);
	struct pcapgen_reserve_cfg *r = &c.reserve;

	memcpy(r->cookie_secret, r_secret, sizeof(r_secret));
	r->cookie_slot_s = 64;
	r->now_s = R_NOW;
	tok_keyring_init(&r->sale);
	tok_keyring_set(&r->sale, 7, R_SALT, strlen(R_SALT), true);
	r->event = 3;
	r->user_base = 500;
	r->expires_s = R_NOW + 3600;
	strcpy(r->host, "shop.example");
	return c;
}

/*
 * The reserve stream: per connection a SYN, an ACK with the reserve request and a FIN, all of
 * one flow; the ACK's acknowledgement a cookie a data plane with the same secret accepts (at
 * now_s and a slot later); the request's path and purchase token verified by the sale key, for
 * user user_base + i.
 */
static void
test_reserve(void)
{
	struct pcapgen_stream_cfg c = reserve_cfg(30);
	struct syncookie_ctx dp, dp_later, dp_late;
	int ok = 1, cookie_ok = 1, later_ok = 1, late_refused = 1, token_ok = 1, path_ok = 1;

	tap_eq_int(pcapgen_stream_init(&s, &c), 0, "reserve: stream set up");
	tap_ok(pcapgen_stream_frames(&s) == 90, "reserve: 3 frames per connection");
	syncookie_init(&dp, r_secret, 64, R_NOW);
	syncookie_init(&dp_later, r_secret, 64, R_NOW + 64);
	syncookie_init(&dp_late, r_secret, 64, R_NOW + 128);
	for (uint64_t i = 0; i < c.count && ok; i++) {
		struct pcapgen_flow f[3];
		uint16_t len[3];
		static uint8_t
			fr[3][PCAPGEN_FRAME_ROOM]; /* a frame lasts until the next call: copied */
		char req[1024];

		for (unsigned k = 0; k < 3; k++) {
			const uint8_t *p = pcapgen_stream_frame(&s, 3 * i + k, &len[k], &f[k]);

			if (p == NULL) {
				ok = 0;
				break;
			}
			memcpy(fr[k], p, len[k]);
		}
		if (!ok)
			break;
		uint16_t plen = (uint16_t)(len[1] - 14 - 20 - 20);
		uint32_t isn = f[0].seq;

		memcpy(req, fr[1] + 14 + 20 + 20, plen);
		req[plen] = '\0';
		ok &= tcp_frame_ok(fr[0], len[0], &f[0], RTE_TCP_SYN_FLAG, 14 + 20 + 24) &&
		      tcp_frame_ok(
			      fr[1], len[1], &f[1], RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, len[1]) &&
		      tcp_frame_ok(fr[2], len[2], &f[2], RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG,
			      14 + 20 + 20) &&
		      f[0].src_ip == f[1].src_ip && f[1].src_ip == f[2].src_ip &&
		      f[0].sport == f[1].sport && f[1].sport == f[2].sport && f[1].seq == isn + 1 &&
		      f[2].seq == isn + 1 + plen && f[1].ack == f[2].ack && f[0].user == 500 + i &&
		      f[1].user == 500 + i;

		/* The cookie as the data plane checks the ACK that completes the handshake. */
		uint32_t sa = rte_cpu_to_be_32(f[1].src_ip), da = rte_cpu_to_be_32(DP_IP);
		uint16_t sp = rte_cpu_to_be_16(f[1].sport), dpt = rte_cpu_to_be_16(80);

		cookie_ok &= syncookie_check(&dp, sa, da, sp, dpt, isn, f[1].ack - 1) ==
			     (int)syncookie_mss_index(LG_MSS);
		later_ok &= syncookie_check(&dp_later, sa, da, sp, dpt, isn, f[1].ack - 1) >= 0;
		late_refused &= syncookie_check(&dp_late, sa, da, sp, dpt, isn, f[1].ack - 1) < 0;

		/* POST <path> with Host and the user's purchase token. */
		static const char pre[] = "POST /api/v1/events/3/reserve/";
		char *seg = req + sizeof(pre) - 1, *sp_end = strchr(seg, ' ');
		char *tok = strstr(req, "\r\nX-Flash-Token: "), *tok_end;
		struct tok_purchase pt;

		if (strncmp(req, pre, sizeof(pre) - 1) != 0 || sp_end == NULL || tok == NULL ||
			strstr(req, " HTTP/1.1\r\nHost: shop.example\r\n") == NULL ||
			strstr(req, "\r\nContent-Length: 0\r\n\r\n") == NULL) {
			tap_diag("reserve: request %llu: %s", (unsigned long long)i, req);
			path_ok = token_ok = 0;
			break;
		}
		path_ok &= tok_path_verify(&c.reserve.sale, seg, (size_t)(sp_end - seg), 3, NULL) ==
			   TOK_OK;
		tok += strlen("\r\nX-Flash-Token: ");
		tok_end = strstr(tok, "\r\n");
		token_ok &= tok_end != NULL &&
			    tok_purchase_verify(&c.reserve.sale, tok, (size_t)(tok_end - tok), 3,
				    R_NOW, &pt) == TOK_OK &&
			    pt.user == 500 + i && pt.expires_s == R_NOW + 3600;
	}
	tap_ok(ok, "reserve: 30 connections of SYN, ACK|PSH with the request, ACK|FIN; one flow "
		   "each, sequence numbers in order, checksums right");
	tap_ok(cookie_ok, "reserve: each ACK acknowledges the cookie the data plane makes");
	tap_ok(later_ok && late_refused,
		"reserve: the cookies still hold a slot later, not two slots later");
	tap_ok(path_ok, "reserve: the path is event 3's under the sale key");
	tap_ok(token_ok, "reserve: each request carries its user's purchase token for event 3");

	struct pcapgen_stream_cfg no_key = reserve_cfg(1);

	tok_keyring_init(&no_key.reserve.sale);
	tap_eq_int(pcapgen_stream_init(&s2, &no_key), -ENOKEY, "reserve: no sale key, no stream");
	tok_keyring_wipe(&c.reserve.sale);
}

static void
test_pairs_unique(void)
{
	struct pcapgen_stream_cfg c = cfg_of(PCAPGEN_STREAM_SYN, 6ull * PCAPGEN_SPORT_COUNT);
	size_t n = 6u * 65536u;
	uint8_t *seen = calloc(n, 1);
	uint64_t dups = 0, hosts_used = 0;

	if (seen == NULL || pcapgen_stream_init(&s, &c) != 0) {
		tap_ok(0, "pairs: set up");
		free(seen);
		return;
	}
	for (uint64_t i = 0; i < c.count; i++) {
		struct pcapgen_flow f;
		uint16_t len;

		pcapgen_stream_frame(&s, i, &len, &f);
		size_t k = (size_t)(f.src_ip - c.src_base) * 65536u + f.sport;

		if (f.src_ip - c.src_base >= 6 || seen[k]++)
			dups++;
	}
	for (unsigned h = 0; h < 6; h++)
		hosts_used += seen[h * 65536u + PCAPGEN_SPORT_MIN] || seen[h * 65536u + 65535];
	tap_eq_int((long long)dups, 0,
		"pairs: 6 hosts x 64512 ports, every address/port pair exactly once");
	tap_eq_int((long long)hosts_used, 6, "pairs: every host of the network is used");
	free(seen);
}

static void
test_seed(void)
{
	struct pcapgen_stream_cfg c = cfg_of(PCAPGEN_STREAM_BAD_ACK, 20);
	int same = 1, differs = 0;

	pcapgen_stream_init(&s, &c);
	pcapgen_stream_init(&s2, &c);
	for (uint64_t i = 0; i < c.count; i++) {
		uint16_t l1, l2;
		const uint8_t *a = pcapgen_stream_frame(&s, 19 - i, &l1, NULL);
		const uint8_t *b = pcapgen_stream_frame(&s2, 19 - i, &l2, NULL);

		same &= l1 == l2 && memcmp(a, b, l1) == 0;
	}
	tap_ok(same, "seed: the same seed gives the same frames, in any order");
	c.seed = 43;
	pcapgen_stream_init(&s2, &c);
	for (uint64_t i = 0; i < c.count; i++) {
		uint16_t l1, l2;
		const uint8_t *a = pcapgen_stream_frame(&s, i, &l1, NULL);
		const uint8_t *b = pcapgen_stream_frame(&s2, i, &l2, NULL);

		differs |= memcmp(a, b, l1) != 0;
	}
	tap_ok(differs, "seed: another seed gives other frames");
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void
test_pcap_file(void)
{
	char path[] = "/tmp/fg-pcapgen-test.XXXXXX";
	struct pcapgen_stream_cfg c = cfg_of(PCAPGEN_STREAM_SYN, 300);
	int fd = mkstemp(path);
	FILE *f;
	uint8_t buf[1 << 16];
	size_t n = 0, off = 24;
	uint64_t recs = 0;
	int same = 1;

	if (fd < 0) {
		tap_ok(0, "pcap: temporary file");
		return;
	}
	close(fd);
	pcapgen_stream_init(&s, &c);
	tap_eq_int(pcapgen_stream_write_pcap(&s, path), 0, "pcap: 300 SYNs written");
	f = fopen(path, "rb");
	if (f != NULL) {
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
	}
	tap_ok(n >= 24 && le32(buf) == 0xa1b2c3d4u && le32(buf + 20) == 1,
		"pcap: classic header, microsecond magic, link type Ethernet");
	while (off + 16 <= n) {
		uint32_t incl = le32(buf + off + 8), orig = le32(buf + off + 12);
		uint16_t len;
		const uint8_t *fr = pcapgen_stream_frame(&s, recs, &len, NULL);

		same &= fr != NULL && incl == len && orig == len && off + 16 + incl <= n &&
			memcmp(buf + off + 16, fr, len) == 0;
		off += 16 + incl;
		recs++;
	}
	tap_ok(same && recs == 300 && off == n,
		"pcap: 300 records, each the frame of its index, whole, up to the file's end "
		"(got %llu records)",
		(unsigned long long)recs);
	unlink(path);
	tap_ok(pcapgen_stream_write_pcap(&s, "/nonexistent-dir/x.pcap") == -ENOENT,
		"pcap: a file that cannot be created gives -ENOENT");
}

/* Option cases: arguments (NULL-terminated), expected result, and a part of the message. */
static const struct {
	const char *argv[12];
	int want;
	const char *msg;
} arg_cases[] = {
	{{"--stream", "arp", "--out", "x.pcap"}, 0, ""},
	{{"--stream", "syn", "--out", "x", "--dst-mac", "02:70:63:61:70:00", "--count", "5"}, 0,
		""},
	{{"--stream", "bad-ack", "--out", "x", "--dst-mac", "02:00:00:00:00:02", "--src-net",
		 "10.1.0.0/16", "--dst", "10.2.0.1", "--port", "8080"},
		0, ""},
	{{"--help"}, 1, ""},
	{{"--out", "x"}, -1, "--stream is missing"},
	{{"--stream", "arp"}, -1, "--out FILE is missing"},
	{{"--stream", "flood", "--out", "x"}, -1, "unknown --stream 'flood'"},
	{{"--stream", "syn", "--out", "x"}, -1, "needs --dst-mac"},
	{{"--stream", "syn", "--out", "x", "--dst-mac", "ff:ff:ff:ff:ff:ff"}, -1, "unicast MAC"},
	{{"--stream", "arp", "--out", "x", "--dst-mac", "02:00:00:00:02"}, -1,
		"--dst-mac '02:00:00:00:02' is not a MAC"},
	{{"--stream", "arp", "--out", "x", "--src-mac", "01:00:5e:00:00:01"}, -1,
		"--src-mac '01:00:5e:00:00:01' is not a unicast"},
	{{"--stream", "arp", "--out", "x", "--count", "0"}, -1, "--count '0' is not a number"},
	{{"--stream", "arp", "--out", "x", "--count", "100000001"}, -1, "in 1..100000000"},
	{{"--stream", "arp", "--out", "x", "--count", "-3"}, -1, "--count '-3'"},
	{{"--stream", "arp", "--out", "x", "--src-net", "198.18.2.0"}, -1, "not A.B.C.D/P"},
	{{"--stream", "arp", "--out", "x", "--src-net", "198.18.2.5/24"}, -1,
		"host bits set; give the network, e.g. 198.18.2.0/24"},
	{{"--stream", "arp", "--out", "x", "--src-net", "198.18.2.0/7"}, -1, "P in 8..32"},
	{{"--stream", "arp", "--out", "x", "--src-net", "127.0.0.0/8"}, -1, "drops as sources"},
	{{"--stream", "arp", "--out", "x", "--dst", "198.18.2.7"}, -1,
		"--dst must not be inside --src-net"},
	{{"--stream", "arp", "--out", "x", "--dst", "224.0.0.1"}, -1, "not a unicast IPv4"},
	{{"--stream", "arp", "--out", "x", "--port", "65536"}, -1, "--port '65536'"},
	{{"--stream", "arp", "--out", "x", "--src-net", "198.18.9.9/32", "--count", "64513"}, -1,
		"more than the 64512 distinct address/port pairs"},
	{{"--stream", "arp", "--out", "x", "--bogus"}, -1, "unknown option '--bogus'"},
	{{"--stream", "arp", "--out"}, -1, "--out needs a value"},
	{{"--stream", "arp", "--out", "x", "extra"}, -1, "unexpected argument 'extra'"},
	{{"--stream", "reserve", "--out", "x", "--dst-mac", "02:70:63:61:70:00", "--sale-key-hex",
		 "00112233445566778899aabbccddeeff"},
		-1, "needs --cookie-secret-hex"},
	{{"--stream", "reserve", "--out", "x", "--dst-mac", "02:70:63:61:70:00",
		 "--cookie-secret-hex", "00112233445566778899aabbccddeeff"},
		-1, "needs --sale-key-hex"},
	{{"--stream", "reserve", "--out", "x", "--cookie-secret-hex", "0011"}, -1,
		"--cookie-secret-hex needs 32 hex digits"},
	{{"--stream", "reserve", "--out", "x", "--sale-key-hex",
		 "00112233445566778899aabbccddeexx"},
		-1, "--sale-key-hex needs 32 to 128 hex digits"},
	{{"--stream", "reserve", "--out", "x", "--host", "a b"}, -1, "--host 'a b' is not"},
	{{"--stream", "reserve", "--out", "x", "--host", "x\r\nEvil: 1"}, -1, "is not a host"},
	{{"--stream", "reserve", "--out", "x", "--event", "0"}, -1, "--event '0'"},
	{{"--stream", "reserve", "--out", "x", "--user-base", "0"}, -1, "--user-base '0'"},
	{{"--stream", "reserve", "--out", "x", "--cookie-slot-s", "601"}, -1, "--cookie-slot-s"},
};

static void
test_args(void)
{
	for (unsigned i = 0; i < RTE_DIM(arg_cases); i++) {
		char *argv[16] = {"flashgate-pcapgen"};
		char err[256];
		struct pcapgen_args a;
		int argc = 1;

		for (unsigned k = 0; arg_cases[i].argv[k] != NULL; k++)
			argv[argc++] = (char *)(uintptr_t)arg_cases[i].argv[k];
		int rc = pcapgen_args_parse(argc, argv, &a, err, sizeof(err));

		tap_ok(rc == arg_cases[i].want && strstr(err, arg_cases[i].msg) != NULL,
			"args %u (%s ...): result %d, message '%s'", i, argv[argc - 1], rc, err);
	}

	/* The values of a good line arrive in the settings. */
	char *argv[] = {"flashgate-pcapgen", "--stream", "bad-ack", "--out", "o.pcap", "--dst-mac",
		"02:AB:cd:00:00:09", "--src-net", "10.1.0.0/16", "--dst", "10.2.0.1", "--port",
		"8080", "--count", "7", "--seed", "9"};
	struct pcapgen_args a;
	char err[256];
	const struct rte_ether_addr mac = {{2, 0xab, 0xcd, 0, 0, 9}};

	tap_ok(pcapgen_args_parse((int)RTE_DIM(argv), argv, &a, err, sizeof(err)) == 0 &&
			a.cfg.kind == PCAPGEN_STREAM_BAD_ACK && strcmp(a.out, "o.pcap") == 0 &&
			rte_is_same_ether_addr(&a.cfg.dst_mac, &mac) &&
			a.cfg.src_base == RTE_IPV4(10, 1, 0, 1) && a.cfg.n_src == 65534 &&
			a.cfg.dst_ip == RTE_IPV4(10, 2, 0, 1) && a.cfg.dport == 8080 &&
			a.cfg.count == 7 && a.cfg.seed == 9,
		"args: every value of a good line lands in the settings");

	char *rargv[] = {"flashgate-pcapgen", "--stream", "reserve", "--out", "r.pcap", "--dst-mac",
		"02:70:63:61:70:00", "--count", "33333333", "--cookie-secret-hex",
		"00112233445566778899aabbccddeeff", "--cookie-slot-s", "30", "--sale-key-hex",
		"73616c656b65792d62656e63682d3031323334353637383961626364", "--sale-kid", "7",
		"--event", "4", "--user-base", "900", "--host", "shop.example:8080", "--src-net",
		"198.19.0.0/16"};
	uint32_t kid = 0;
	uint64_t t0 = (uint64_t)time(NULL);

	tap_ok(pcapgen_args_parse((int)RTE_DIM(rargv), rargv, &a, err, sizeof(err)) == 0 &&
			a.cfg.kind == PCAPGEN_STREAM_RESERVE && a.cfg.count == 33333333 &&
			a.cfg.reserve.cookie_secret[0] == 0x00 &&
			a.cfg.reserve.cookie_secret[15] == 0xff &&
			a.cfg.reserve.cookie_slot_s == 30 &&
			tok_keyring_current(&a.cfg.reserve.sale, &kid) == 0 && kid == 7 &&
			a.cfg.reserve.event == 4 && a.cfg.reserve.user_base == 900 &&
			strcmp(a.cfg.reserve.host, "shop.example:8080") == 0 &&
			a.cfg.reserve.now_s - t0 <= 2 &&
			a.cfg.reserve.expires_s == a.cfg.reserve.now_s + 3600,
		"args: a reserve line's keys, sale and host land in the settings (%s)", err);
	/* The keys from files of mode 0600; one others may read is refused. */
	{
		char sk[] = "/tmp/fg-pcapgen-sale-XXXXXX", ck[] = "/tmp/fg-pcapgen-cookie-XXXXXX";
		int sfd = mkstemp(sk), cfd = mkstemp(ck);
		char *fargv[] = {"flashgate-pcapgen", "--stream", "reserve", "--out", "r.pcap",
			"--dst-mac", "02:70:63:61:70:00", "--cookie-secret-file", ck,
			"--sale-key-file", sk, "--sale-kid", "7"};

		dprintf(sfd, "73616c656b65792d62656e63682d3031323334353637383961626364\n");
		dprintf(cfd, "00112233445566778899aabbccddeeff\n");
		fchmod(sfd, 0600);
		fchmod(cfd, 0600);
		kid = 0;
		tap_ok(pcapgen_args_parse((int)RTE_DIM(fargv), fargv, &a, err, sizeof(err)) == 0 &&
				a.cfg.reserve.cookie_secret[15] == 0xff &&
				tok_keyring_current(&a.cfg.reserve.sale, &kid) == 0 && kid == 7,
			"args: --cookie-secret-file and --sale-key-file read 0600 files (%s)", err);
		tok_keyring_wipe(&a.cfg.reserve.sale);
		fchmod(sfd, 0644);
		tap_ok(pcapgen_args_parse((int)RTE_DIM(fargv), fargv, &a, err, sizeof(err)) == -1 &&
				strstr(err, "--sale-key-file") != NULL &&
				strstr(err, "chmod 600") != NULL,
			"args: a sale key file others may read is refused: %s", err);
		close(sfd);
		close(cfd);
		unlink(sk);
		unlink(ck);
	}
	rargv[8] = "33333334";
	tap_ok(pcapgen_args_parse((int)RTE_DIM(rargv), rargv, &a, err, sizeof(err)) == -1 &&
			strstr(err, "connections is more than 33333333") != NULL,
		"args: more reserve connections than 100000000 frames refused");
	tok_keyring_wipe(&a.cfg.reserve.sale);
}

int
main(void)
{
	test_kind_names();
	test_init_bounds();
	test_syn();
	test_bad_ack();
	test_arp();
	test_reserve();
	test_pairs_unique();
	test_seed();
	test_pcap_file();
	test_args();
	return tap_done();
}
