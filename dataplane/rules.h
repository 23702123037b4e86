/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_RULES_H
#define FG_DP_RULES_H
/*
 * Risk rules (DESIGN.md "Risk rules"): blocked IPv4 and IPv6 addresses and networks, users and
 * device ids. A rule set is built once by rules_build() and never changes afterwards, so any number
 * of lcores may read it at once without locks; a new version is built beside the old one and
 * swapped in by the bridge (RCU), then the old one is freed with rules_free(). Any matching rule
 * blocks: there is no "allow" and no order.
 *
 * Storage, chosen by measurement (tests/bench/bench_limits.c, docs/limits.md):
 * - Address rules are normalised first: a network inside another blocked network, and any
 *   duplicate, adds nothing (any match blocks) and is dropped.
 * - 0.0.0.0/0: a flag.
 * - networks /1../31: a DPDK LPM table (rte_lpm; one or two memory reads per lookup). rte_lpm
 *   adds a rule in time linear in the rules of its prefix length, so building is quadratic:
 *   RULES_MAX_NETWORKS keeps a build under a few seconds.
 * - single addresses (/32) and users: sorted arrays searched without branches. Up to 100k
 *   entries this is as fast as rte_hash (users) or within 2x of rte_lpm (addresses), and it
 *   takes 4 or 8 bytes a rule, where rte_lpm would take 1 KiB of tbl8 per /32 (100 MiB for
 *   100k addresses) and a quadratic build.
 * - device ids: rte_hash with NUL-padded 64-byte keys (3x faster than a sorted array of
 *   SipHashes).
 * - IPv6 networks and addresses (any prefix 1..128): normalised the same way, what is left is
 *   disjoint ranges [first, last], kept as two sorted arrays of 128-bit numbers and searched
 *   without branches (edge_ip6_in(), log2(n) steps); ::/0 is a flag. Only an IPv6 client (behind
 *   a trusted edge: X-Forwarded-For, Forwarded, PROXY) is looked up there, so they cost an IPv4
 *   client nothing. An IPv4-mapped client address (::ffff:a.b.c.d) is looked up as the IPv4
 *   address a.b.c.d.
 * An empty part costs one compare; a NULL rule set means "no rules".
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_hash.h>
#include <rte_lpm.h>

#include "dataplane/edge.h"
#include "dataplane/sorted.h"

enum rule_kind {
	RULE_BLOCK_IP = 1, /* an IPv4 network a.b.c.d/len; /32 for one address */
	RULE_BLOCK_USER,   /* a user id, 1..2^63-1 */
	RULE_BLOCK_DEVICE, /* a device id (X-Device-Id), 1..63 visible ASCII bytes */
	RULE_BLOCK_IP6,	   /* an IPv6 network a:b::/len; /128 for one address */
};

#define RULE_DEVICE_MAX 63 /* bytes in a device id, without the NUL */
#define RULE_USER_MAX	INT64_MAX
#define RULES_MAX	1048576 /* rules in one set */
/* Distinct networks /1../31 (after normalising) in one set: bounds the LPM's build time. */
#define RULES_MAX_NETWORKS 32768
#define RULE_TEXT_MAX	   80 /* room for rule_spec_format() of any valid rule */

struct rule_spec {
	enum rule_kind kind;
	uint32_t ip; /* RULE_BLOCK_IP: network address, host byte order (198.18.0.0 = 0xc6120000) */
	uint8_t prefix;	 /* RULE_BLOCK_IP: 0..32; RULE_BLOCK_IP6: 0..128 */
	uint8_t ip6[16]; /* RULE_BLOCK_IP6: network address, network byte order (as in a packet) */
	uint64_t user;			  /* RULE_BLOCK_USER */
	char device[RULE_DEVICE_MAX + 1]; /* RULE_BLOCK_DEVICE: NUL-terminated */
};

struct rules {
	bool all_ip;	       /* a 0.0.0.0/0 rule: every address is blocked */
	struct rte_lpm *lpm;   /* /1../31 rules; NULL when there are none */
	const uint32_t *ip32;  /* /32 rules not inside a network rule: sorted, unique, host order */
	const uint64_t *users; /* sorted, unique */
	struct rte_hash *devices; /* keys: device ids NUL-padded to 64 bytes; NULL when none */
	uint32_t n_ip32;
	uint32_t n_users;
	uint32_t n_devices;
	uint32_t n_networks; /* /1../31 rules in lpm */
	unsigned serial;     /* makes DPDK object names unique among live rule sets */
	/* IPv6 (after the IPv4 part, which the IPv4 lookups read). */
	bool all_ip6;		       /* a ::/0 rule: every IPv6 address is blocked */
	uint32_t n_ip6;		       /* ranges in first6/last6 */
	const struct edge_ip6 *first6; /* IPv6 rules as sorted, disjoint ranges: their first */
	const struct edge_ip6 *last6;  /* and last addresses */
};

/*
 * Builds an immutable rule set from specs[0..n) on NUMA socket `socket` (or SOCKET_ID_ANY).
 * Duplicate rules are allowed and count once. n = 0 gives a valid, empty set. Needs EAL; may be
 * called from any thread, also while other sets are alive and being read. Takes about 5 ms per
 * 10k rules, plus up to ~3 s for RULES_MAX_NETWORKS networks of one prefix length (rte_lpm), so
 * call it away from any loop that must keep moving. On error returns NULL and writes a message
 * naming the first bad rule (its index and what is wrong) to err: an unknown kind, a prefix
 * above 32 (IPv6: 128), host bits set in a network, an IPv4-mapped IPv6 network, a user id
 * outside 1..2^63-1, a device id that is empty, too long or not visible ASCII, more than RULES_MAX
 * rules, more than RULES_MAX_NETWORKS networks, or no memory.
 */
struct rules *rules_build(
	const struct rule_spec *specs, unsigned n, int socket, char *err, size_t errlen);

/* Frees a rule set from rules_build() once no reader can see it any more; NULL is a no-op. */
void rules_free(struct rules *r);

/*
 * Checks one rule as rules_build() does. Returns 0, or -EINVAL with a message in err (which says
 * what is wrong and, when it can, what was probably meant).
 */
int rule_spec_check(const struct rule_spec *s, char *err, size_t errlen);

/*
 * Parses one rule in text form: "ip 198.18.0.0/24", "ip 198.18.0.7" (= /32), "ip 2001:db8::/32",
 * "ip 2001:db8::7" (= /128), "user 42", "device abc-123"; words separated by spaces or tabs,
 * surrounding white space (also CR, LF) ignored. Writes the rule to *out (unused fields zeroed) and
 * returns 0, or returns -EINVAL with a specific message in err. The rule is also checked as by
 * rule_spec_check().
 */
int rule_spec_parse(const char *text, struct rule_spec *out, char *err, size_t errlen);

/*
 * Writes s as text in the form rule_spec_parse() reads ("ip a.b.c.d" for /32, "ip a.b.c.d/len"
 * otherwise; IPv6 in RFC 5952's form, "ip 2001:db8::7" for /128, "ip 2001:db8::/32"),
 * NUL-terminated. Returns the length written, -ENOSPC when it does not fit in len
 * bytes (RULE_TEXT_MAX always fits), or -EINVAL when s is not a valid rule.
 */
int rule_spec_format(const struct rule_spec *s, char *buf, size_t len);

/* Whether the sorted a[0..n) holds k: a branch-free binary search (n may be 0). */
static inline bool
rules_has_u64(const uint64_t *a, uint32_t n, uint64_t k)
{
	return n != 0 && a[sorted_floor(a, sizeof(*a), n, &k, sorted_le_u64)] == k;
}

/* rules_has_u64() for u32 values. */
static inline bool
rules_has_u32(const uint32_t *a, uint32_t n, uint32_t k)
{
	return n != 0 && a[sorted_floor(a, sizeof(*a), n, &k, sorted_le_u32)] == k;
}

/* Whether r blocks the IPv4 address ip_be (network byte order). r may be NULL (no rules). */
static inline bool
rules_block_ip(const struct rules *r, uint32_t ip_be)
{
	uint32_t ip = rte_be_to_cpu_32(ip_be);
	uint32_t hop;

	if (r == NULL)
		return false;
	if (unlikely(r->all_ip))
		return true;
	if (r->n_ip32 != 0 && rules_has_u32(r->ip32, r->n_ip32, ip))
		return true;
	return r->lpm != NULL && rte_lpm_lookup(r->lpm, ip, &hop) == 0;
}

/*
 * Whether r blocks the IPv6 address a[0..16) (network byte order, as a client's address behind
 * an edge). An IPv4-mapped address (::ffff:a.b.c.d) is looked up as the IPv4 address. r may be
 * NULL (no rules). No allocation; at most log2(IPv6 rules) steps.
 */
static inline bool
rules_block_ip6(const struct rules *r, const uint8_t a[16])
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	uint32_t v4;

	if (r == NULL)
		return false;
	if (unlikely(memcmp(a, mapped, sizeof(mapped)) == 0)) {
		memcpy(&v4, a + 12, 4);
		return rules_block_ip(r, v4);
	}
	if (unlikely(r->all_ip6))
		return true;
	return r->n_ip6 != 0 && edge_ip6_in(r->first6, r->last6, r->n_ip6, edge_ip6_of(a));
}

/* Whether r blocks user id `user`. r may be NULL (no rules). */
static inline bool
rules_block_user(const struct rules *r, uint64_t user)
{
	return r != NULL && r->n_users != 0 && rules_has_u64(r->users, r->n_users, user);
}

/*
 * Whether r blocks the device id dev[0..len) (not NUL-terminated, e.g. straight from the
 * X-Device-Id header). An empty or over-long id matches no rule. r may be NULL (no rules).
 */
static inline bool
rules_block_device(const struct rules *r, const char *dev, size_t len)
{
	char key[RULE_DEVICE_MAX + 1];

	/* A NUL inside would match the id cut at it once padded; no rule holds a NUL. */
	if (r == NULL || r->devices == NULL || len == 0 || len > RULE_DEVICE_MAX ||
		memchr(dev, '\0', len) != NULL)
		return false;
	memcpy(key, dev, len);
	memset(key + len, 0, sizeof(key) - len);
	return rte_hash_lookup(r->devices, key) >= 0;
}

#endif
