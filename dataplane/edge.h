/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_EDGE_H
#define FG_DP_EDGE_H
/*
 * Trusted edges ([edge] trusted, docs/edge.md): the addresses and networks of the TLS edges
 * (CDN, HAProxy, nginx, an L4 or L7 balancer) that sit in front of the data plane. Only a
 * connection from one of them may tell the client's address (PROXY protocol, X-Forwarded-For,
 * Forwarded); from anyone else those are ignored or refused, and the packet's source address
 * is the client's.
 *
 * The set is parsed once at start from the config's list and file (edge_trust_load()) and never
 * changes while workers run, so every lcore reads it without locks. Each family is kept as
 * sorted, disjoint, merged ranges [first, last], at most EDGE_TRUSTED_MAX networks a family: a
 * lookup is a branch-free binary search (log2(n) steps: 6 for 64 ranges, 13 for 5,000, 16 at
 * the bound), and an empty set, the stateless path's case, costs one compare. IPv6 networks
 * are accepted and looked up (a client address in X-Forwarded-For or a PROXY header may be
 * IPv6) although the data plane receives IPv4 packets only.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>

#include "dataplane/sorted.h"

/* Networks per address family, [edge] trusted and trusted_file together (docs/edge.md): the
 * largest CDN lists are a few thousand; at the bound a lookup is 16 steps, the set 4.2 MB. */
#define EDGE_TRUSTED_MAX      65536
#define EDGE_TRUSTED_TEXT_MAX 4095 /* bytes of the [edge] trusted value */
#define EDGE_TRUSTED_PATH_MAX 4096 /* bytes of the [edge] trusted_file path, its NUL included */

/* An IPv6 address as a number: hi holds bytes 0..7, lo bytes 8..15 (network order). */
struct edge_ip6 {
	uint64_t hi, lo;
};

/* An IPv6 range [first, last]: a network's first and last address. */
struct edge_r6 {
	struct edge_ip6 first, last;
};

/* A set from edge_trust_load(): n4 and n6 ranges in one allocation (mem; NULL when empty). A
 * zeroed struct is the empty set. */
struct edge_trust {
	uint32_t n4, n6;
	uint32_t *first4; /* n4 each, host byte order, sorted, ranges disjoint */
	uint32_t *last4;
	struct edge_ip6 *first6; /* n6 each, sorted, ranges disjoint */
	struct edge_ip6 *last6;
	void *mem;
};

/*
 * The client's address for one request: what the risk rules and the per-IP limit look at
 * (dataplane/pipeline/request.h chooses it). family 4: ip4 (network byte order); 6: ip6; 0: no
 * client (a trusted edge's own request, such as a health check, names none): no address rule
 * or per-IP limit applies. src is the enum dp_client_source it came from (counters.h).
 */
struct edge_client {
	uint8_t family;
	uint8_t src;
	uint32_t ip4;
	uint8_t ip6[16];
};

/*
 * Reads the trusted edges: the [edge] trusted text (addresses and networks such as
 * "198.18.0.7", "198.18.1.0/24", "2001:db8::/32", "::1", separated by commas and/or blanks, at
 * most EDGE_TRUSTED_TEXT_MAX bytes; NULL or "" is none) and, when path is neither NULL nor "",
 * the [edge] trusted_file at path (one address or network a line; blank lines and comments
 * from '#' to the end of a line ignored). Duplicates and networks inside others are merged.
 * When out is not NULL it receives the set (release it with edge_trust_free()); with out NULL
 * everything is only checked (the config loader). Returns 0; or a negative errno with a
 * message in err and *out unchanged: -EINVAL naming the item, and for the file "path:line:",
 * and what is wrong (not an address, prefix out of range, host bits set past the prefix with
 * the network meant, one network a line, more than EDGE_TRUSTED_MAX networks of one family);
 * the open's errno (-ENOENT, -EACCES, ...) or -EIO for a file that cannot be read; -ENOMEM.
 */
int edge_trust_load(
	const char *text, const char *path, struct edge_trust *out, char *err, size_t errlen);

/* edge_trust_load() of the text alone. */
int edge_trust_parse(const char *text, struct edge_trust *out, char *err, size_t errlen);

/* Releases what edge_trust_load() gave t, leaving the empty set; t may be NULL or empty. */
void edge_trust_free(struct edge_trust *t);

/* An IPv6 address from its 16 bytes in network order. */
static inline struct edge_ip6
edge_ip6_of(const uint8_t a[16])
{
	struct edge_ip6 v;

	v.hi = (uint64_t)a[0] << 56 | (uint64_t)a[1] << 48 | (uint64_t)a[2] << 40 |
	       (uint64_t)a[3] << 32 | (uint64_t)a[4] << 24 | (uint64_t)a[5] << 16 |
	       (uint64_t)a[6] << 8 | a[7];
	v.lo = (uint64_t)a[8] << 56 | (uint64_t)a[9] << 48 | (uint64_t)a[10] << 40 |
	       (uint64_t)a[11] << 32 | (uint64_t)a[12] << 24 | (uint64_t)a[13] << 16 |
	       (uint64_t)a[14] << 8 | a[15];
	return v;
}

static inline bool
edge_ip6_le(struct edge_ip6 a, struct edge_ip6 b)
{
	/* As one 128-bit compare: a subtract with borrow, no branch for the searches to miss. */
	return ((unsigned __int128)a.hi << 64 | a.lo) <= ((unsigned __int128)b.hi << 64 | b.lo);
}

/* le for sorted_floor() over struct edge_ip6. */
static inline bool
edge_ip6_le_p(const void *elem, const void *key)
{
	return edge_ip6_le(*(const struct edge_ip6 *)elem, *(const struct edge_ip6 *)key);
}

/* The last address of the IPv6 network of prefix len (0..128) that starts at first. */
struct edge_ip6 edge_ip6_last(struct edge_ip6 first, unsigned len);

/*
 * Sorts r[0..n) by first address and merges overlapping ranges into one (adjacent ones stay
 * two): afterwards the ranges are sorted and disjoint. Returns the new count. For CIDR networks,
 * which are nested or disjoint, this drops every network inside another.
 */
uint32_t edge_merge6(struct edge_r6 *r, uint32_t n);

/*
 * Whether ip is in one of the n sorted, disjoint ranges first[i]..last[i] (n may be 0): a
 * branch-free binary search, log2(n) steps, no allocation. For the per-packet path.
 */
static inline bool
edge_ip6_in(
	const struct edge_ip6 *first, const struct edge_ip6 *last, uint32_t n, struct edge_ip6 ip)
{
	if (n == 0)
		return false;

	/* The last range whose first address is <= ip, if any. */
	uint32_t i = sorted_floor(first, sizeof(*first), n, &ip, edge_ip6_le_p);

	return edge_ip6_le(first[i], ip) && edge_ip6_le(ip, last[i]);
}

/*
 * Whether the IPv4 address ip (host byte order) is in t. t may be NULL (no trusted edge). For
 * the per-packet path: an empty set is one compare, else a branch-free binary search.
 */
static inline bool
edge_trusted4_host(const struct edge_trust *t, uint32_t ip)
{
	if (t == NULL || t->n4 == 0)
		return false;

	/* The last range whose first address is <= ip, if any. */
	uint32_t i = sorted_floor(t->first4, sizeof(*t->first4), t->n4, &ip, sorted_le_u32);

	return t->first4[i] <= ip && ip <= t->last4[i];
}

/* edge_trusted4_host() for an address in network byte order, as in a packet. */
static inline bool
edge_trusted4(const struct edge_trust *t, uint32_t ip_be)
{
	if (t == NULL || t->n4 == 0)
		return false;
	return edge_trusted4_host(t, ntohl(ip_be));
}

/* Whether the IPv6 address a[0..16) (network order) is in t; t may be NULL. */
static inline bool
edge_trusted6(const struct edge_trust *t, const uint8_t a[16])
{
	if (t == NULL || t->n6 == 0)
		return false;
	return edge_ip6_in(t->first6, t->last6, t->n6, edge_ip6_of(a));
}

#endif
