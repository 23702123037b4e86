/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_NET_CKSUM_H
#define FG_NET_CKSUM_H
/*
 * The Internet checksums (RFC 1071) that the data plane and the tools share, on top of
 * DPDK's rte_ip.h: verifying an IPv4 header and a TCP segment, ICMP, setting them, and
 * RFC 1624 incremental updates for answers built by editing the request in place.
 *
 * All values are as they are in the packet (network order): a 16-bit field is read and
 * written with its bytes as they lie, so the one's complement arithmetic, which does not
 * depend on byte order, needs no swapping.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>

/*
 * The one's complement sum of len bytes at buf, as DPDK's rte_raw_cksum() returns it (not
 * complemented, in memory order), eight bytes a step: a request and its answer are summed
 * for every packet, and DPDK 22.11's loop takes two bytes a step.
 *
 * RFC 1071 §2(B): the sum may be formed over larger words and folded. Each 8-byte load is
 * added as two 32-bit halves to one of four 64-bit accumulators; 2^32 of them cannot carry
 * out, so no end-around carry is lost before the final fold.
 */
static inline uint16_t
net_raw_sum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t a = 0, b = 0, c = 0, d = 0;

	for (; len >= 32; p += 32, len -= 32) {
		uint64_t w0, w1, w2, w3;

		memcpy(&w0, p, 8);
		memcpy(&w1, p + 8, 8);
		memcpy(&w2, p + 16, 8);
		memcpy(&w3, p + 24, 8);
		a += (w0 & 0xffffffff) + (w0 >> 32);
		b += (w1 & 0xffffffff) + (w1 >> 32);
		c += (w2 & 0xffffffff) + (w2 >> 32);
		d += (w3 & 0xffffffff) + (w3 >> 32);
	}
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		a += (w & 0xffffffff) + (w >> 32);
	}
	if (len >= 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		b += w;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t w;

		memcpy(&w, p, 2);
		c += w;
		p += 2;
		len -= 2;
	}
	/* The odd byte is the first of a 16-bit word: its low byte in memory order. */
	if (len)
		d += *p;
	uint64_t sum = a + b + c + d;

	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Folds a 32-bit one's complement sum to 16 bits (two end-around carries always suffice). */
static inline uint16_t
net_cksum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/*
 * Sums from values, for headers just written: summing a header back from memory right after
 * writing it field by field makes each 8-byte load wait for the several narrower stores it
 * spans (a failed store-to-load forward, over ten cycles each), which `perf annotate` showed
 * as a fifth of a SYN's cost in the data plane. These give the same one's complement sums
 * from the values the fields were written with.
 */

/* The 16-bit word that the two bytes first, second make in memory, as a load gives it. */
static inline uint16_t
net_word(uint8_t first, uint8_t second)
{
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	return (uint16_t)(first | second << 8);
#else
	return (uint16_t)(first << 8 | second);
#endif
}

/* The sum of the two 16-bit words of a 32-bit field as it lies in the packet. */
static inline uint32_t
net_sum32(uint32_t v)
{
	return (v & 0xffff) + (v >> 16);
}

/*
 * The sum of a 20-byte IPv4 header as the data plane's answers and the load generator's
 * frames have it: version and IHL, TOS 0, total length tot_len, id 0, DF, ttl, proto, checksum
 * 0, and two addresses whose net_sum32() add up to addrs.
 */
static inline uint32_t
net_ipv4_df_hdr_sum(uint16_t tot_len, uint8_t ttl, uint8_t proto, uint32_t addrs)
{
	return net_word(RTE_IPV4_VHL_DEF, 0) + rte_cpu_to_be_16(tot_len) +
	       RTE_BE16(RTE_IPV4_HDR_DF_FLAG) + net_word(ttl, proto) + addrs;
}

/* The sum of a TCP pseudo-header (RFC 9293 §3.1): addresses summing to addrs, zero and the
 * protocol, the segment's length tcp_len. */
static inline uint32_t
net_tcp4_phdr_sum_of(uint32_t addrs, uint16_t tcp_len)
{
	return addrs + net_word(0, IPPROTO_TCP) + rte_cpu_to_be_16(tcp_len);
}

/*
 * The sum of a 20-byte TCP header from its fields as they lie in the packet (network order),
 * the checksum and urgent pointer 0: what is left to add is options and payload.
 */
static inline uint32_t
net_tcp_hdr_sum(rte_be16_t sport, rte_be16_t dport, rte_be32_t seq, rte_be32_t ack, uint8_t off,
	uint8_t flags, rte_be16_t win)
{
	return (uint32_t)sport + dport + net_sum32(seq) + net_sum32(ack) + net_word(off, flags) +
	       win;
}

/*
 * True if the IPv4 header at ip has a correct checksum. Reads the IHL * 4 bytes the header
 * claims; the caller has checked that they are there (net_ipv4_hdr_ok() does both).
 */
static inline bool
net_ipv4_cksum_ok(const struct rte_ipv4_hdr *ip)
{
	/* RFC 1071: the sum over the header, checksum included, is all ones. */
	return net_raw_sum(ip, rte_ipv4_hdr_len(ip)) == 0xffff;
}

/*
 * True if the avail bytes at ip start a well-formed IPv4 datagram: the checks of RFC 1812
 * 5.2.2 plus "the datagram fits in what was received" (avail may exceed the total length,
 * e.g. by Ethernet padding). Never reads beyond avail bytes.
 */
static inline bool
net_ipv4_hdr_ok(const struct rte_ipv4_hdr *ip, uint32_t avail)
{
	uint32_t hlen, tlen;

	/*
	 * RFC 1812 5.2.2: (1) the link layer length holds a minimal datagram (20 bytes);
	 * (2) the checksum is correct; (3) the version is 4; (4) the header length is at least
	 * 20 bytes; (5) the total length holds the header.
	 */
	if (unlikely(avail < sizeof(struct rte_ipv4_hdr)))
		return false;
	if (unlikely((ip->version_ihl >> 4) != 4))
		return false;
	hlen = rte_ipv4_hdr_len(ip);
	tlen = rte_be_to_cpu_16(ip->total_length);
	if (unlikely(hlen < sizeof(struct rte_ipv4_hdr) || tlen < hlen || tlen > avail))
		return false;
	return net_ipv4_cksum_ok(ip);
}

/* Fills in the header checksum of the IPv4 header at ip (IHL and all fields already set). */
static inline void
net_ipv4_cksum_set(struct rte_ipv4_hdr *ip)
{
	ip->hdr_checksum = 0;
	ip->hdr_checksum = (uint16_t)~net_raw_sum(ip, rte_ipv4_hdr_len(ip));
}

/*
 * The non-complemented sum of the TCP/UDP pseudo-header of ip (RFC 9293 §3.1: source,
 * destination, zero, protocol, segment length), folded, as rte_ipv4_phdr_cksum(ip, 0) returns
 * it; from the header's fields, without building the 12 bytes in memory (DPDK does, then
 * sums them two bytes a step). The segment length is the total length less the header's.
 */
static inline uint16_t
net_ipv4_phdr_sum(const struct rte_ipv4_hdr *ip)
{
	uint32_t src = ip->src_addr, dst = ip->dst_addr;
	uint16_t l4_len = (uint16_t)(rte_be_to_cpu_16(ip->total_length) - rte_ipv4_hdr_len(ip));
	/* In memory order: the zero byte then the protocol form one word, the length another. */
	uint16_t proto_word = rte_cpu_to_be_16((uint16_t)ip->next_proto_id);
	uint32_t sum = (src & 0xffff) + (src >> 16) + (dst & 0xffff) + (dst >> 16) + proto_word +
		       rte_cpu_to_be_16(l4_len);

	return net_cksum_fold(sum);
}

/* The non-complemented sum of a TCP segment and its pseudo-header; 0 if lengths are bad. */
static inline uint16_t
net_tcp4_sum(const struct rte_ipv4_hdr *ip, const struct rte_tcp_hdr *tcp)
{
	uint32_t hlen = rte_ipv4_hdr_len(ip);
	uint32_t tlen = rte_be_to_cpu_16(ip->total_length);

	if (unlikely(tlen < hlen))
		return 0;
	return net_cksum_fold((uint32_t)net_raw_sum(tcp, tlen - hlen) + net_ipv4_phdr_sum(ip));
}

/*
 * True if the TCP segment at tcp, carried by the IPv4 header at ip, has a correct checksum
 * (RFC 9293 3.1: over the pseudo-header, the TCP header and the data). The segment length
 * comes from ip's total length, which the caller has checked against the bytes received
 * (net_ipv4_hdr_ok()).
 */
static inline bool
net_tcp4_cksum_ok(const struct rte_ipv4_hdr *ip, const struct rte_tcp_hdr *tcp)
{
	return net_tcp4_sum(ip, tcp) == 0xffff;
}

/*
 * Fills in the checksum of the TCP segment at tcp; ip's addresses, protocol, IHL and total
 * length must be final.
 */
static inline void
net_tcp4_cksum_set(const struct rte_ipv4_hdr *ip, struct rte_tcp_hdr *tcp)
{
	tcp->cksum = 0;
	tcp->cksum = (uint16_t)~net_tcp4_sum(ip, tcp);
}

/*
 * The checksum to store in an ICMP message of len bytes at icmp (header and data) whose
 * checksum field is 0 (RFC 792: no pseudo-header).
 */
static inline uint16_t
net_icmp_cksum(const struct rte_icmp_hdr *icmp, uint32_t len)
{
	return (uint16_t)~net_raw_sum(icmp, len);
}

/* True if the ICMP message of len bytes at icmp has a correct checksum. */
static inline bool
net_icmp_cksum_ok(const struct rte_icmp_hdr *icmp, uint32_t len)
{
	return len >= sizeof(*icmp) && net_raw_sum(icmp, len) == 0xffff;
}

/*
 * RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'): the checksum cksum after the 16-bit word at an
 * even offset of the checksummed data changes from old_val to new_val. To change one byte,
 * pass the word that holds it (e.g. TTL and protocol of IPv4; type and code of ICMP).
 * Equals recomputing from scratch (not for UDP, whose 0 means "no checksum").
 */
static inline uint16_t
net_cksum_adjust16(uint16_t cksum, uint16_t old_val, uint16_t new_val)
{
	uint32_t sum = (uint32_t)(uint16_t)~cksum + (uint16_t)~old_val + new_val;

	return (uint16_t)~net_cksum_fold(sum);
}

/*
 * net_cksum_adjust16() for a 32-bit field at an even offset (an IPv4 address), old_val and
 * new_val as loaded from the packet.
 */
static inline uint16_t
net_cksum_adjust32(uint16_t cksum, uint32_t old_val, uint32_t new_val)
{
	uint32_t sum = (uint32_t)(uint16_t)~cksum;

	sum += (uint16_t) ~(old_val >> 16) + (uint16_t) ~(old_val & 0xffff);
	sum += (new_val >> 16) + (new_val & 0xffff);
	return (uint16_t)~net_cksum_fold(sum);
}

#endif
