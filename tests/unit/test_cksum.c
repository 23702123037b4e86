/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_cksum.h against a plain RFC 1071 checksum written here: known packets, random headers
 * and payloads of every length, incremental updates, and rejection of any flipped bit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/net_cksum.h"
#include "tests/lib/rng.h"
#include "tests/tap.h"

/* Room for any IPv4 datagram, so a flipped total length never reads outside the buffer. */
#define BUF_LEN 65536 + 64

static uint8_t pkt[BUF_LEN];

/* xorshift64* (tests/lib/rng.h): reproducible inputs, so a failure can be replayed. */
static uint64_t rng_state = UINT64_C(0x243f6a8885a308d3);

static uint64_t
rng64(void)
{
	return rng_xorshift64s(&rng_state);
}

static void
fill_rand(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)rng64();
}

/*
 * RFC 1071 section 4.1, spelled out: add big-endian 16-bit words (an odd last byte is the
 * high half of a word), fold the carries back in. Returns the sum, not its complement.
 */
static uint16_t
ref_sum(const uint8_t *p, size_t len, uint32_t start)
{
	uint64_t sum = start;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The RFC 1071 checksum (complemented sum) of len bytes, as a number. */
static uint16_t
ref_cksum(const uint8_t *p, size_t len)
{
	return (uint16_t)~ref_sum(p, len, 0);
}

/* The big-endian 16-bit value at p. */
static uint16_t
be16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* TCP checksum by the reference: pseudo-header (RFC 9293 3.1) then the segment. */
static uint16_t
ref_tcp4_cksum(const uint8_t *ip, const uint8_t *tcp, size_t tcp_len)
{
	uint8_t ph[12];

	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = ip[9];
	ph[10] = (uint8_t)(tcp_len >> 8);
	ph[11] = (uint8_t)tcp_len;
	return (uint16_t)~ref_sum(tcp, tcp_len, ref_sum(ph, sizeof(ph), 0));
}

/* A random IPv4 header of ihl words with a correct checksum, total length tot_len. */
static struct rte_ipv4_hdr *
make_ipv4(uint8_t *p, unsigned ihl, unsigned tot_len, uint8_t proto)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;

	fill_rand(p, ihl * 4);
	ip->version_ihl = (uint8_t)(0x40 | ihl);
	ip->total_length = rte_cpu_to_be_16((uint16_t)tot_len);
	ip->next_proto_id = proto;
	net_ipv4_cksum_set(ip);
	return ip;
}

static void
test_known(void)
{
	/* The example header of Wikipedia's "Internet checksum" article (checksum b861). */
	static const uint8_t wiki[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
	/* RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to ddf2. */
	static const uint8_t rfc1071[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
	/*
	 * A SYN 192.0.2.1:51000 -> 198.51.100.2:80, seq 0x01020304, window 64240, MSS 1460;
	 * checksums 324f (IP) and e56f (TCP) computed outside this program.
	 */
	static const uint8_t syn[44] = {0x45, 0x00, 0x00, 0x2c, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x06,
		0x32, 0x4f, 0xc0, 0x00, 0x02, 0x01, 0xc6, 0x33, 0x64, 0x02, 0xc7, 0x38, 0x00, 0x50,
		0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x00, 0x00, 0x60, 0x02, 0xfa, 0xf0, 0xe5, 0x6f,
		0x00, 0x00, 0x02, 0x04, 0x05, 0xb4};
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)pkt;
	struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(pkt + 20);

	tap_eq_int(ref_sum(rfc1071, sizeof(rfc1071), 0), 0xddf2, "reference: RFC 1071 example sum");
	tap_eq_int(rte_be_to_cpu_16(
			   net_icmp_cksum((const struct rte_icmp_hdr *)rfc1071, sizeof(rfc1071))),
		0x220d, "net_icmp_cksum: RFC 1071 example, complemented");

	memcpy(pkt, wiki, sizeof(wiki));
	tap_ok(net_ipv4_cksum_ok(ip), "net_ipv4_cksum_ok: example header");
	tap_ok(net_ipv4_hdr_ok(ip, 0x73), "net_ipv4_hdr_ok: example header, 0x73 bytes");
	net_ipv4_cksum_set(ip);
	tap_eq_int(be16_at(pkt + 10), 0xb861, "net_ipv4_cksum_set: example header");
	pkt[10] = pkt[11] = 0;
	tap_eq_int(ref_cksum(pkt, 20), 0xb861, "reference: example header");

	memcpy(pkt, syn, sizeof(syn));
	tap_ok(net_ipv4_hdr_ok(ip, sizeof(syn)), "net_ipv4_hdr_ok: the SYN");
	tap_ok(net_tcp4_cksum_ok(ip, tcp), "net_tcp4_cksum_ok: the SYN");
	pkt[20 + 16] = pkt[20 + 17] = 0;
	tap_eq_int(ref_tcp4_cksum(pkt, pkt + 20, 24), 0xe56f, "reference: TCP checksum of the SYN");
	net_ipv4_cksum_set(ip);
	net_tcp4_cksum_set(ip, tcp);
	tap_ok(memcmp(pkt, syn, sizeof(syn)) == 0, "cksum_set of IPv4 and TCP rebuild the SYN");
}

/* Every length 0..1500, odd and even, at an odd and an even address. */
static void
test_random_lengths(void)
{
	int bad_ip = 0, bad_tcp_even = 0, bad_tcp_odd = 0, bad_icmp = 0, bad_raw = 0;

	for (unsigned ihl = 5; ihl <= 15; ihl++) {
		for (int i = 0; i < 200; i++) {
			struct rte_ipv4_hdr *ip = make_ipv4(pkt, ihl, 1500, IPPROTO_TCP);
			uint16_t got = be16_at(pkt + 10);

			pkt[10] = pkt[11] = 0;
			bad_ip += got != ref_cksum(pkt, ihl * 4);
			ip->hdr_checksum = rte_cpu_to_be_16(got);
			bad_ip += !net_ipv4_cksum_ok(ip) || !net_ipv4_hdr_ok(ip, 1500);
		}
	}
	tap_eq_int(bad_ip, 0, "IPv4 header checksum of 2200 random headers, IHL 5..15");

	for (unsigned len = 20; len <= 1500; len++) {
		for (unsigned ihl = 5; ihl <= 6; ihl++) {
			struct rte_ipv4_hdr *ip = make_ipv4(pkt, ihl, ihl * 4 + len, IPPROTO_TCP);
			uint8_t *l4 = pkt + ihl * 4;
			struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)l4;
			uint16_t want;
			int bad;

			fill_rand(l4, len);
			l4[16] = l4[17] = 0;
			want = ref_tcp4_cksum(pkt, l4, len);
			net_tcp4_cksum_set(ip, tcp);
			bad = be16_at(l4 + 16) != want || !net_tcp4_cksum_ok(ip, tcp);
			if (len & 1)
				bad_tcp_odd += bad;
			else
				bad_tcp_even += bad;
		}
	}
	tap_eq_int(bad_tcp_even, 0, "TCP checksum, even segment lengths 20..1500");
	tap_eq_int(bad_tcp_odd, 0, "TCP checksum, odd segment lengths 21..1499");

	for (unsigned len = 8; len <= 1500; len++) {
		for (unsigned off = 0; off <= 1; off++) {
			uint8_t *p = pkt + off;
			uint16_t ck;

			fill_rand(p, len);
			p[2] = p[3] = 0;
			ck = net_icmp_cksum((const struct rte_icmp_hdr *)p, len);
			bad_icmp += ck != rte_cpu_to_be_16(ref_cksum(p, len));
			memcpy(p + 2, &ck, 2);
			bad_icmp += !net_icmp_cksum_ok((const struct rte_icmp_hdr *)p, len);
		}
	}
	tap_eq_int(bad_icmp, 0, "ICMP checksum, lengths 8..1500 at even and odd addresses");

	for (unsigned len = 0; len <= 1500; len++) {
		fill_rand(pkt + 1, len);
		bad_raw +=
			rte_be_to_cpu_16(rte_raw_cksum(pkt + 1, len)) != ref_sum(pkt + 1, len, 0);
	}
	tap_eq_int(bad_raw, 0, "DPDK's raw sum equals RFC 1071, lengths 0..1500");

	/* net_raw_sum() is the pipeline's own 8-bytes-a-step sum: every length and alignment. */
	unsigned bad_fast = 0, bad_ones = 0;

	for (unsigned off = 0; off < 8; off++) {
		for (unsigned len = 0; len <= 1500; len++) {
			fill_rand(pkt + off, len);
			bad_fast += rte_be_to_cpu_16(net_raw_sum(pkt + off, len)) !=
				    ref_sum(pkt + off, len, 0);
		}
	}
	/* All ones exercises the carries the folds must keep. */
	memset(pkt, 0xff, 1500);
	for (unsigned len = 0; len <= 1500; len++)
		bad_ones += rte_be_to_cpu_16(net_raw_sum(pkt, len)) != ref_sum(pkt, len, 0);
	tap_eq_int(bad_fast, 0, "net_raw_sum equals RFC 1071, lengths 0..1500 at 8 alignments");
	tap_eq_int(bad_ones, 0, "net_raw_sum equals RFC 1071 on all-ones data (carries)");
}

/*
 * Buffers of up to 1.5 MiB: all ones, the worst case for the accumulators' carries, and
 * random bytes, at lengths around multiples of 512 KiB.
 */
static void
test_long_buffers(void)
{
	const size_t interval = (size_t)512 * 1024;
	size_t cap = 3 * interval + 64;
	uint8_t *big = malloc(cap);
	const size_t lens[] = {interval - 1, interval, interval + 1, interval + 33, 2 * interval,
		3 * interval + 63};
	unsigned bad_ones = 0, bad_rand = 0;

	if (big == NULL) {
		tap_ok(false, "malloc of %zu bytes", cap);
		return;
	}
	memset(big, 0xff, cap);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		bad_ones += rte_be_to_cpu_16(net_raw_sum(big, lens[i])) != ref_sum(big, lens[i], 0);
	fill_rand(big, cap);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		bad_rand += rte_be_to_cpu_16(net_raw_sum(big + 1, lens[i])) !=
			    ref_sum(big + 1, lens[i], 0);
	free(big);
	tap_eq_int(bad_ones, 0, "net_raw_sum equals RFC 1071 on long buffers (all ones)");
	tap_eq_int(bad_rand, 0, "net_raw_sum equals RFC 1071 on long buffers (random)");
}

/* net_ipv4_phdr_sum() against DPDK's rte_ipv4_phdr_cksum() and the reference, random headers. */
static void
test_phdr_sum(void)
{
	unsigned bad_dpdk = 0, bad_ref = 0;

	for (unsigned i = 0; i < 20000; i++) {
		unsigned ihl = 5 + (unsigned)(rng64() % 11),
			 tot = ihl * 4 + (unsigned)(rng64() % 1480);
		struct rte_ipv4_hdr *ip = make_ipv4(pkt, ihl, tot, (uint8_t)rng64());
		uint8_t ph[12];

		memcpy(ph, pkt + 12, 8);
		ph[8] = 0;
		ph[9] = pkt[9];
		ph[10] = (uint8_t)((tot - ihl * 4) >> 8);
		ph[11] = (uint8_t)(tot - ihl * 4);
		bad_dpdk += net_ipv4_phdr_sum(ip) != rte_ipv4_phdr_cksum(ip, 0);
		bad_ref += rte_be_to_cpu_16(net_ipv4_phdr_sum(ip)) != ref_sum(ph, sizeof(ph), 0);
	}
	tap_eq_int(bad_dpdk, 0, "net_ipv4_phdr_sum equals rte_ipv4_phdr_cksum (20000 headers)");
	tap_eq_int(bad_ref, 0, "net_ipv4_phdr_sum equals RFC 9293's pseudo-header sum");
}

/* The sums from values (for headers just written) against the same headers summed in memory. */
static void
test_sums_from_values(void)
{
	unsigned bad_ip = 0, bad_tcp = 0, bad_phdr = 0;

	for (unsigned i = 0; i < 20000; i++) {
		uint8_t h[40];
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)h;
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(h + 20);
		uint16_t tcp_len = (uint16_t)(20 + rng64() % 1460);
		uint8_t ttl = (uint8_t)rng64(), proto = (uint8_t)rng64();

		memset(h, 0, sizeof(h));
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + tcp_len));
		ip->fragment_offset = RTE_BE16(RTE_IPV4_HDR_DF_FLAG);
		ip->time_to_live = ttl;
		ip->next_proto_id = proto;
		ip->src_addr = (uint32_t)rng64();
		ip->dst_addr = (uint32_t)rng64();
		th->src_port = (uint16_t)rng64();
		th->dst_port = (uint16_t)rng64();
		th->sent_seq = (uint32_t)rng64();
		th->recv_ack = (uint32_t)rng64();
		th->data_off = (uint8_t)rng64();
		th->tcp_flags = (uint8_t)rng64();
		th->rx_win = (uint16_t)rng64();

		uint32_t addrs = net_sum32(ip->src_addr) + net_sum32(ip->dst_addr);

		bad_ip += net_cksum_fold(net_ipv4_df_hdr_sum((uint16_t)(20 + tcp_len), ttl, proto,
				  addrs)) != net_raw_sum(ip, 20);
		bad_tcp += net_cksum_fold(net_tcp_hdr_sum(th->src_port, th->dst_port, th->sent_seq,
				   th->recv_ack, th->data_off, th->tcp_flags, th->rx_win)) !=
			   net_raw_sum(th, 20);
		ip->next_proto_id = IPPROTO_TCP;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + tcp_len));
		bad_phdr += net_cksum_fold(net_tcp4_phdr_sum_of(addrs, tcp_len)) !=
			    net_ipv4_phdr_sum(ip);
	}
	tap_eq_int(bad_ip, 0, "net_ipv4_df_hdr_sum equals the header summed in memory (20000)");
	tap_eq_int(bad_tcp, 0, "net_tcp_hdr_sum equals the TCP header summed in memory (20000)");
	tap_eq_int(bad_phdr, 0, "net_tcp4_phdr_sum_of equals net_ipv4_phdr_sum (20000)");
}

static void
test_ipv4_hdr_ok(void)
{
	static const struct {
		unsigned ihl, version, tot_len, avail;
		int ok;
		const char *what;
	} rows[] = {
		{5, 4, 60, 60, 1, "plain 20-byte header"},
		{15, 4, 60, 60, 1, "60-byte header, no payload"},
		{5, 4, 60, 64, 1, "link layer padding after the datagram"},
		{5, 4, 20, 19, 0, "fewer than 20 bytes received"},
		{5, 4, 61, 60, 0, "total length beyond what was received"},
		{6, 4, 23, 60, 0, "total length shorter than the header"},
		{4, 4, 60, 60, 0, "IHL 4"},
		{0, 4, 60, 60, 0, "IHL 0"},
		{5, 6, 60, 60, 0, "version 6"},
		{5, 0, 60, 60, 0, "version 0"},
		{15, 4, 60, 59, 0, "header longer than what was received"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)pkt;

		fill_rand(pkt, 64);
		ip->version_ihl = (uint8_t)(rows[i].version << 4 | rows[i].ihl);
		ip->total_length = rte_cpu_to_be_16((uint16_t)rows[i].tot_len);
		/* A correct checksum, so only the check under test can refuse. */
		ip->hdr_checksum = 0;
		ip->hdr_checksum =
			rte_cpu_to_be_16(ref_cksum(pkt, rows[i].ihl ? rows[i].ihl * 4 : 20));
		tap_ok(net_ipv4_hdr_ok(ip, rows[i].avail) == rows[i].ok, "net_ipv4_hdr_ok %s: %s",
			rows[i].ok ? "accepts" : "refuses", rows[i].what);
	}
	tap_ok(!net_icmp_cksum_ok((const struct rte_icmp_hdr *)pkt, 7),
		"net_icmp_cksum_ok refuses a message shorter than the ICMP header");
}

/* Any single flipped bit must fail verification (RFC 1071 detects every 1-bit error). */
static void
test_bit_flips(void)
{
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *tcp;
	int bad;

	memset(pkt, 0, sizeof(pkt));
	ip = make_ipv4(pkt, 5, 20, IPPROTO_TCP);
	bad = 0;
	for (unsigned b = 0; b < 20 * 8; b++) {
		pkt[b / 8] ^= (uint8_t)(1u << (b % 8));
		bad += net_ipv4_hdr_ok(ip, BUF_LEN);
		pkt[b / 8] ^= (uint8_t)(1u << (b % 8));
	}
	tap_eq_int(bad, 0, "net_ipv4_hdr_ok refuses each of the 160 single-bit flips of a header");
	tap_ok(net_ipv4_hdr_ok(ip, BUF_LEN), "and accepts the header once restored");

	/* A data segment: 20-byte IP header, 20-byte TCP header, 333 bytes of data. */
	memset(pkt, 0, sizeof(pkt));
	ip = make_ipv4(pkt, 5, 20 + 20 + 333, IPPROTO_TCP);
	tcp = (struct rte_tcp_hdr *)(pkt + 20);
	fill_rand(pkt + 20, 20 + 333);
	net_tcp4_cksum_set(ip, tcp);
	bad = 0;
	for (unsigned b = 20 * 8; b < (20 + 20 + 333) * 8; b++) {
		pkt[b / 8] ^= (uint8_t)(1u << (b % 8));
		bad += net_tcp4_cksum_ok(ip, tcp);
		pkt[b / 8] ^= (uint8_t)(1u << (b % 8));
	}
	tap_eq_int(bad, 0, "net_tcp4_cksum_ok refuses each single-bit flip of the segment");

	/* The pseudo-header: total length (bytes 2-3), protocol (9), addresses (12-19). */
	bad = 0;
	for (unsigned b = 0; b < 20 * 8; b++) {
		unsigned byte = b / 8;

		if (!(byte == 2 || byte == 3 || byte == 9 || byte >= 12))
			continue;
		pkt[byte] ^= (uint8_t)(1u << (b % 8));
		bad += net_tcp4_cksum_ok(ip, tcp);
		pkt[byte] ^= (uint8_t)(1u << (b % 8));
	}
	tap_eq_int(bad, 0, "net_tcp4_cksum_ok refuses each single-bit flip of the pseudo-header");
	tap_ok(net_tcp4_cksum_ok(ip, tcp), "and accepts the segment once restored");

	/* An echo request of 64 bytes. */
	fill_rand(pkt, 64);
	pkt[0] = RTE_IP_ICMP_ECHO_REQUEST;
	pkt[1] = 0;
	pkt[2] = pkt[3] = 0;
	{
		uint16_t ck = net_icmp_cksum((const struct rte_icmp_hdr *)pkt, 64);

		memcpy(pkt + 2, &ck, 2);
	}
	bad = 0;
	for (unsigned b = 0; b < 64 * 8; b++) {
		pkt[b / 8] ^= (uint8_t)(1u << (b % 8));
		bad += net_icmp_cksum_ok((const struct rte_icmp_hdr *)pkt, 64);
		pkt[b / 8] ^= (uint8_t)(1u << (b % 8));
	}
	tap_eq_int(bad, 0, "net_icmp_cksum_ok refuses each single-bit flip of an echo request");
}

static uint16_t
ld16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static uint32_t
ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* RFC 1624 updates must give exactly what recomputing gives, for any change. */
static void
test_incremental(void)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)pkt;
	struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(pkt + 20);
	int bad_ttl = 0, bad_word = 0, bad_addr = 0, bad_icmp = 0, bad_tcp = 0, bad_zero = 0;

	for (int i = 0; i < 5000; i++) {
		uint16_t old, neu, ck;
		unsigned off;

		/* TTL: the high byte of the word at offset 8 (TTL, protocol). */
		make_ipv4(pkt, 5, 20, IPPROTO_TCP);
		old = ld16(pkt + 8);
		pkt[8] = (uint8_t)(pkt[8] - 1);
		ck = net_cksum_adjust16(ip->hdr_checksum, old, ld16(pkt + 8));
		net_ipv4_cksum_set(ip);
		bad_ttl += ck != ip->hdr_checksum;

		/* Any 16-bit word of the header but version/IHL (the length) and the checksum. */
		make_ipv4(pkt, 5, 20, IPPROTO_TCP);
		do
			off = (unsigned)(rng64() % 10) * 2;
		while (off == 0 || off == 10);
		old = ld16(pkt + off);
		neu = (uint16_t)rng64();
		memcpy(pkt + off, &neu, 2);
		ck = net_cksum_adjust16(ip->hdr_checksum, old, neu);
		net_ipv4_cksum_set(ip);
		bad_word += ck != ip->hdr_checksum;

		/* An address: IP header and, through the pseudo-header, the TCP checksum. */
		make_ipv4(pkt, 5, 20 + 40, IPPROTO_TCP);
		fill_rand(pkt + 20, 40);
		net_tcp4_cksum_set(ip, tcp);
		{
			uint32_t olda = ld32(pkt + 12), newa = (uint32_t)rng64();
			uint16_t ipck, tcpck;

			memcpy(pkt + 12, &newa, 4);
			ipck = net_cksum_adjust32(ip->hdr_checksum, olda, newa);
			tcpck = net_cksum_adjust32(tcp->cksum, olda, newa);
			net_ipv4_cksum_set(ip);
			net_tcp4_cksum_set(ip, tcp);
			bad_addr += ipck != ip->hdr_checksum;
			bad_tcp += tcpck != tcp->cksum;
		}

		/* ICMP echo request -> reply: type 8 -> 0, the high byte of word 0. */
		fill_rand(pkt, 64);
		pkt[0] = RTE_IP_ICMP_ECHO_REQUEST;
		pkt[2] = pkt[3] = 0;
		ck = net_icmp_cksum((const struct rte_icmp_hdr *)pkt, 64);
		old = ld16(pkt);
		pkt[0] = RTE_IP_ICMP_ECHO_REPLY;
		ck = net_cksum_adjust16(ck, old, ld16(pkt));
		pkt[2] = pkt[3] = 0;
		bad_icmp += ck != net_icmp_cksum((const struct rte_icmp_hdr *)pkt, 64);
	}
	tap_eq_int(bad_ttl, 0, "adjust16 of a TTL decrement equals recomputation (5000 headers)");
	tap_eq_int(bad_word, 0, "adjust16 of a random header word equals recomputation (5000)");
	tap_eq_int(bad_addr, 0, "adjust32 of a source address: IPv4 checksum (5000)");
	tap_eq_int(
		bad_tcp, 0, "adjust32 of a source address: TCP checksum via pseudo-header (5000)");
	tap_eq_int(
		bad_icmp, 0, "adjust16 of ICMP echo request -> reply equals recomputation (5000)");

	/*
	 * Edges of one's complement: a segment whose checksum is 0x0000 (sum all ones), changed
	 * to and from that state; eqn. 3 of RFC 1624 exists because eqn. 2 gets this wrong.
	 */
	for (int i = 0; i < 1000; i++) {
		uint16_t fix, old, ck;

		make_ipv4(pkt, 5, 20 + 40, IPPROTO_TCP);
		fill_rand(pkt + 20, 40);
		memset(pkt + 20 + 38, 0, 2);
		net_tcp4_cksum_set(ip, tcp);
		/* Choose the last data word so that the checksum becomes 0. */
		fix = tcp->cksum;
		memcpy(pkt + 20 + 38, &fix, 2);
		net_tcp4_cksum_set(ip, tcp);
		bad_zero += tcp->cksum != 0;
		/* From checksum 0 to a random word and back. */
		old = fix;
		fix = (uint16_t)rng64();
		memcpy(pkt + 20 + 38, &fix, 2);
		ck = net_cksum_adjust16(tcp->cksum, old, fix);
		net_tcp4_cksum_set(ip, tcp);
		bad_zero += ck != tcp->cksum;
		memcpy(pkt + 20 + 38, &old, 2);
		tcp->cksum = net_cksum_adjust16(ck, fix, old);
		bad_zero += tcp->cksum != 0 || !net_tcp4_cksum_ok(ip, tcp);
	}
	tap_eq_int(bad_zero, 0, "adjust16 to and from a checksum of 0x0000 equals recomputation");
}

int
main(void)
{
	test_known();
	test_random_lengths();
	test_long_buffers();
	test_phdr_sum();
	test_sums_from_values();
	test_ipv4_hdr_ok();
	test_bit_flips();
	test_incremental();
	return tap_done();
}
