/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Risk rules: CIDR edges, users and devices present and absent, 50k random rules against a
 * naive reference, the errors bad rules get, two rule sets alive at once, readers on several
 * threads, and the text form (parse, format, round trips); IPv6 networks the same way (edges,
 * /0, /128, normalising, 20k random networks against a reference, mapped addresses).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>

#include "dataplane/rules.h"
#include "tests/lib/eal_rundir.h"
#include "tests/lib/rng.h"
#include "tests/guard.h"
#include "tests/tap.h"

#define IP(a, b, c, d) \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

/* Parses texts[0..n) into specs; false, after a "not ok" naming the rule, if one does not parse:
 * a test whose rules do not parse has tested nothing and must fail. */
static bool
parse_all(const char *const *texts, unsigned n, struct rule_spec *specs)
{
	char err[256];

	for (unsigned i = 0; i < n; i++)
		if (rule_spec_parse(texts[i], &specs[i], err, sizeof(err)) != 0)
			return tap_ok(0, "the test's rule '%s' parses: %s", texts[i], err);
	return true;
}

static bool
block_ip(const struct rules *r, uint32_t ip)
{
	return rules_block_ip(r, rte_cpu_to_be_32(ip));
}

struct probe {
	uint32_t ip;
	int blocked; /* 1 blocked, -1 not blocked, 0 ends the list */
};

/* clang-format off */
#define BLK(a, b, c, d) { IP(a, b, c, d), 1 }
#define OPN(a, b, c, d) { IP(a, b, c, d), -1 }
/* clang-format on */

static const struct {
	const char *name;
	const char *rules[4];
	struct probe probes[8];
} cidr_cases[] = {
	{"/0 blocks every address", {"ip 0.0.0.0/0"},
		{BLK(0, 0, 0, 0), BLK(255, 255, 255, 255), BLK(1, 2, 3, 4)}},
	{"/1", {"ip 128.0.0.0/1"},
		{BLK(128, 0, 0, 0), BLK(255, 255, 255, 255), OPN(127, 255, 255, 255),
			OPN(0, 0, 0, 0)}},
	{"/8", {"ip 10.0.0.0/8"},
		{BLK(10, 0, 0, 0), BLK(10, 255, 255, 255), OPN(9, 255, 255, 255),
			OPN(11, 0, 0, 0)}},
	{"/24", {"ip 198.18.0.0/24"},
		{BLK(198, 18, 0, 0), BLK(198, 18, 0, 255), OPN(198, 18, 1, 0),
			OPN(198, 17, 255, 255)}},
	{"/31", {"ip 203.0.113.4/31"},
		{BLK(203, 0, 113, 4), BLK(203, 0, 113, 5), OPN(203, 0, 113, 3),
			OPN(203, 0, 113, 6)}},
	{"/32", {"ip 198.18.5.7"},
		{BLK(198, 18, 5, 7), OPN(198, 18, 5, 6), OPN(198, 18, 5, 8), OPN(7, 5, 18, 198)}},
	{"adjacent /25s cover their /24 and nothing more", {"ip 192.0.2.0/25", "ip 192.0.2.128/25"},
		{BLK(192, 0, 2, 0), BLK(192, 0, 2, 127), BLK(192, 0, 2, 128), BLK(192, 0, 2, 255),
			OPN(192, 0, 3, 0), OPN(192, 0, 1, 255)}},
	{"nested rules: any match blocks",
		{"ip 10.1.0.0/16", "ip 10.1.2.0/28", "ip 10.1.2.3", "ip 172.16.0.1"},
		{BLK(10, 1, 2, 3), BLK(10, 1, 2, 15), BLK(10, 1, 2, 16), BLK(10, 1, 255, 255),
			OPN(10, 2, 0, 0), BLK(172, 16, 0, 1), OPN(172, 16, 0, 0)}},
};

static void
test_cidr(void)
{
	char err[256];

	for (size_t c = 0; c < RTE_DIM(cidr_cases); c++) {
		struct rule_spec specs[4];
		unsigned n = 0, bad = 0;

		while (n < 4 && cidr_cases[c].rules[n] != NULL)
			n++;
		if (!parse_all(cidr_cases[c].rules, n, specs))
			continue;
		struct rules *r = rules_build(specs, n, SOCKET_ID_ANY, err, sizeof(err));

		if (!tap_ok(r != NULL, "%s: builds", cidr_cases[c].name))
			continue;
		for (unsigned i = 0; i < 8; i++) {
			const struct probe *p = &cidr_cases[c].probes[i];

			if (p->blocked == 0)
				break;
			if (block_ip(r, p->ip) != (p->blocked > 0)) {
				tap_diag("%u.%u.%u.%u: got %s", p->ip >> 24, (p->ip >> 16) & 255,
					(p->ip >> 8) & 255, p->ip & 255,
					p->blocked > 0 ? "not blocked" : "blocked");
				bad++;
			}
		}
		tap_eq_int(bad, 0, cidr_cases[c].name);
		tap_ok(!rules_block_user(r, 1) && !rules_block_device(r, "a", 1),
			"%s: blocks no user or device", cidr_cases[c].name);
		rules_free(r);
	}
}

/* Networks inside others and duplicates add nothing (any match blocks) and are dropped. */
static void
test_normalise(void)
{
	static const char *const texts[] = {"ip 10.1.0.0/16", "ip 10.0.0.0/8", "ip 10.1.2.3",
		"ip 10.1.2.3", "ip 11.0.0.1", "ip 11.0.0.1", "ip 10.255.255.0/24", "ip 12.0.0.0/30",
		"ip 12.0.0.4/30", "ip 12.0.0.3"};
	struct rule_spec specs[RTE_DIM(texts)];
	char err[256];

	if (!parse_all(texts, RTE_DIM(texts), specs))
		return;
	struct rules *r = rules_build(specs, RTE_DIM(texts), SOCKET_ID_ANY, err, sizeof(err));

	if (!tap_ok(r != NULL, "overlapping address rules build"))
		return;
	tap_eq_int(r->n_networks, 3, "networks kept: 10/8, 12.0.0.0/30, 12.0.0.4/30");
	tap_eq_int(r->n_ip32, 1, "addresses kept: 11.0.0.1");
	tap_ok(block_ip(r, IP(10, 1, 2, 3)) && block_ip(r, IP(10, 200, 0, 0)) &&
			block_ip(r, IP(11, 0, 0, 1)) && block_ip(r, IP(12, 0, 0, 3)) &&
			block_ip(r, IP(12, 0, 0, 7)) && !block_ip(r, IP(12, 0, 0, 8)) &&
			!block_ip(r, IP(11, 0, 0, 0)) && !block_ip(r, IP(9, 255, 255, 255)),
		"and block what the rules say");
	rules_free(r);
}

/* rules_block_device() on a copy of s placed just before a guard page (no over-read). */
static bool
block_dev(const struct rules *r, const char *s, size_t len)
{
	struct guard_buf g = {0};
	const char *p = len != 0 ? guard_place(&g, s, len) : s;
	bool b = rules_block_device(r, p, len);

	guard_free(&g);
	return b;
}

static void
test_users_devices(void)
{
	static const char *const texts[] = {"user 1", "user 42", "user 9223372036854775807",
		"device abc-123", "device A", "user 42"};
	struct rule_spec specs[RTE_DIM(texts) + 1];
	char err[256], d64[65];
	const char *d63 = specs[RTE_DIM(texts)].device;
	struct rules *r;

	if (!parse_all(texts, RTE_DIM(texts), specs))
		return;
	for (unsigned i = 0; i < 64; i++)
		d64[i] = "0123456789abcdef"[i % 16];
	d64[64] = '\0';
	specs[RTE_DIM(texts)] = (struct rule_spec){.kind = RULE_BLOCK_DEVICE};
	memcpy(specs[RTE_DIM(texts)].device, d64, 63);
	r = rules_build(specs, RTE_DIM(specs), SOCKET_ID_ANY, err, sizeof(err));
	if (!tap_ok(r != NULL, "users and devices build"))
		return;
	tap_eq_int(r->n_users, 3, "a duplicate user counts once");
	tap_ok(rules_block_user(r, 1) && rules_block_user(r, 42) &&
			rules_block_user(r, UINT64_C(9223372036854775807)),
		"listed users are blocked (1, 42, 2^63-1)");
	tap_ok(!rules_block_user(r, 0) && !rules_block_user(r, 2) && !rules_block_user(r, 41) &&
			!rules_block_user(r, 43) && !rules_block_user(r, UINT64_MAX),
		"other users are not (0, 2, 41, 43, 2^64-1)");
	tap_ok(block_dev(r, "abc-123", 7) && block_dev(r, "A", 1) && block_dev(r, d63, 63),
		"listed devices are blocked (also one of 63 bytes)");
	tap_ok(!block_dev(r, "abc-12", 6) && !block_dev(r, "abc-1234", 8) &&
			!block_dev(r, "ABC-123", 7) && !block_dev(r, "a", 1) &&
			!block_dev(r, "", 0) && !block_dev(r, d63, 62),
		"prefixes, extensions, other case and the empty id are not");
	tap_ok(!block_dev(r, d64, 64),
		"an id of 64 bytes (the listed one and one more) matches nothing");
	tap_ok(!block_dev(r, "abc-123\0", 8) && !block_dev(r, "A\0\0", 3),
		"a listed id followed by NULs does not match");
	tap_eq_int(r->n_devices, 3, "3 device rules");
	tap_ok(!block_ip(r, IP(1, 2, 3, 4)), "no address is blocked");
	rules_free(r);

	r = rules_build(NULL, 0, SOCKET_ID_ANY, err, sizeof(err));
	tap_ok(r != NULL, "an empty rule set is valid");
	tap_ok(!block_ip(r, 0) && !block_ip(r, UINT32_MAX) && !rules_block_user(r, 1) &&
			!block_dev(r, "x", 1),
		"and blocks nothing");
	tap_ok(r->lpm == NULL, "it needs no LPM table");
	rules_free(r);
	tap_ok(!block_ip(NULL, 1) && !rules_block_user(NULL, 1) && !block_dev(NULL, "x", 1),
		"a NULL rule set blocks nothing");
	rules_free(NULL);
}

static uint64_t rng = 0x5eed;

/* splitmix64 (tests/lib/rng.h) from this file's seed. */
static uint64_t
rnd(void)
{
	return rng_splitmix64(&rng);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

#define N_IP   20000
#define N_USER 15000
#define N_DEV  15000

static void
random_device(char *out)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789-_.:ABCDEF";
	unsigned len = 1 + (unsigned)(rnd() % RULE_DEVICE_MAX);

	for (unsigned i = 0; i < len; i++)
		out[i] = alphabet[rnd() % (sizeof(alphabet) - 1)];
	out[len] = '\0';
}

/* The naive reference for addresses: does any rule's network hold ip? */
static bool
ref_block_ip(const uint32_t *net, const uint32_t *mask, unsigned n, uint32_t ip)
{
	bool hit = false;

	for (unsigned i = 0; i < n; i++)
		hit |= (ip & mask[i]) == net[i];
	return hit;
}

static void
test_random(void)
{
	const unsigned n = N_IP + N_USER + N_DEV;
	struct rule_spec *specs = calloc(n, sizeof(*specs));
	uint32_t *net = malloc(sizeof(*net) * N_IP), *mask = malloc(sizeof(*mask) * N_IP);
	uint64_t *users = malloc(sizeof(*users) * N_USER);
	const char **devs = malloc(sizeof(*devs) * N_DEV);
	unsigned bad_ip = 0, bad_user = 0, bad_dev = 0, n_blocked = 0, n_probes = 0;
	char err[256];

	for (unsigned i = 0; i < N_IP; i++) {
		/* A third single addresses, the rest networks /8../31. */
		unsigned pfx = rnd() % 3 == 0 ? 32 : 8 + (unsigned)(rnd() % 24);

		mask[i] = UINT32_MAX << (32 - pfx);
		net[i] = (uint32_t)rnd() & mask[i];
		specs[i] = (struct rule_spec){.kind = RULE_BLOCK_IP, .ip = net[i], .prefix = pfx};
	}
	for (unsigned i = 0; i < N_USER; i++) {
		users[i] = 1 + rnd() % 2000000; /* dense enough that probes hit and miss */
		specs[N_IP + i] = (struct rule_spec){.kind = RULE_BLOCK_USER, .user = users[i]};
	}
	for (unsigned i = 0; i < N_DEV; i++) {
		struct rule_spec *s = &specs[N_IP + N_USER + i];

		s->kind = RULE_BLOCK_DEVICE;
		random_device(s->device);
		devs[i] = s->device;
	}
	/* Shuffle so that kinds are interleaved. */
	for (unsigned i = n - 1; i > 0; i--) {
		unsigned j = (unsigned)(rnd() % (i + 1));
		struct rule_spec tmp = specs[i];

		specs[i] = specs[j];
		specs[j] = tmp;
	}
	for (unsigned i = 0, d = 0; i < n; i++)
		if (specs[i].kind == RULE_BLOCK_DEVICE)
			devs[d++] = specs[i].device;

	struct rules *r = rules_build(specs, n, SOCKET_ID_ANY, err, sizeof(err));

	if (!tap_ok(r != NULL, "50000 random rules build")) {
		tap_diag("%s", err);
		goto out;
	}
	/* Addresses: random ones, and the first, last and neighbours of every rule's network. */
	for (unsigned i = 0; i < 40000; i++) {
		uint32_t ip;

		if (i < 4 * 5000) {
			unsigned k = i / 4;
			uint32_t first = net[k], last = net[k] | ~mask[k];

			ip = (uint32_t[]){first, last, first - 1, last + 1}[i % 4];
		} else {
			ip = (uint32_t)rnd();
		}
		bool want = ref_block_ip(net, mask, N_IP, ip);

		bad_ip += block_ip(r, ip) != want;
		n_blocked += want;
		n_probes++;
	}
	tap_eq_int(bad_ip, 0, "40000 addresses: the same answers as the naive reference");
	tap_ok(n_blocked > n_probes / 10 && n_blocked < n_probes, "(of which %u blocked)",
		n_blocked);

	qsort(users, N_USER, sizeof(*users), cmp_u64);
	n_blocked = 0;
	for (uint64_t u = 1; u <= 2000000; u++) {
		bool want = bsearch(&u, users, N_USER, sizeof(*users), cmp_u64) != NULL;

		bad_user += rules_block_user(r, u) != want;
		n_blocked += want;
	}
	bad_user += rules_block_user(r, 0) || rules_block_user(r, UINT64_MAX);
	tap_eq_int(
		bad_user, 0, "user ids 0..2000000 and 2^64-1: the same answers as the reference");

	qsort(devs, N_DEV, sizeof(*devs), cmp_str);
	n_blocked = 0;
	for (unsigned i = 0; i < 2 * N_DEV; i++) {
		char d[RULE_DEVICE_MAX + 2];

		if (i < N_DEV) {
			/* Listed ids, and each with its last byte changed or cut. */
			strcpy(d, devs[i]);
			if (i % 3 == 1)
				d[strlen(d) - 1] ^= 1;
			else if (i % 3 == 2)
				d[strlen(d) - 1] = '\0';
		} else {
			random_device(d);
		}
		const char *key = d;
		bool want =
			d[0] != '\0' && bsearch(&key, devs, N_DEV, sizeof(*devs), cmp_str) != NULL;

		bad_dev += block_dev(r, d, strlen(d)) != want;
		n_blocked += want;
	}
	tap_eq_int(bad_dev, 0, "30000 device ids: the same answers as the reference");
	tap_ok(n_blocked >= N_DEV / 3, "(of which %u blocked)", n_blocked);
	rules_free(r);
out:
	free(specs);
	free(net);
	free(mask);
	free(users);
	free(devs);
}

/* An IPv6 address from its text (the test's own, always valid). */
static void
ip6(const char *text, uint8_t a[16])
{
	if (inet_pton(AF_INET6, text, a) != 1)
		abort();
}

static bool
block_ip6(const struct rules *r, const char *text)
{
	uint8_t a[16];

	ip6(text, a);
	return rules_block_ip6(r, a);
}

static const struct {
	const char *name;
	const char *rules[4];
	const char *blocked[6];
	const char *open[6];
} ip6_cases[] = {
	{"IPv6 ::/0 blocks every IPv6 address", {"ip ::/0"},
		{"::", "::1", "2001:db8::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, {NULL}},
	{"IPv6 /1", {"ip 8000::/1"}, {"8000::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "::"}},
	{"IPv6 /32", {"ip 2001:db8::/32"},
		{"2001:db8::", "2001:db8::1", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::", "::1"}},
	{"IPv6 /64 (a subscriber)", {"ip 2001:db8:1:2::/64"},
		{"2001:db8:1:2::", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2:1:2:3:4"},
		{"2001:db8:1:1:ffff:ffff:ffff:ffff", "2001:db8:1:3::"}},
	{"IPv6 /65 (the bit past the high half)", {"ip 2001:db8::8000:0:0:0/65"},
		{"2001:db8::8000:0:0:0", "2001:db8::ffff:ffff:ffff:ffff"},
		{"2001:db8::7fff:ffff:ffff:ffff", "2001:db8:0:1::"}},
	{"IPv6 /127", {"ip 2001:db8::4/127"}, {"2001:db8::4", "2001:db8::5"},
		{"2001:db8::3", "2001:db8::6"}},
	{"IPv6 /128", {"ip 2001:db8::7"}, {"2001:db8::7"},
		{"2001:db8::6", "2001:db8::8", "2001:db8::7:0", "7::2001:db8"}},
	{"IPv6 nested and separate rules: any match blocks",
		{"ip 2001:db8:1::/48", "ip 2001:db8:1:2::/64", "ip 2001:db8:1:2::3", "ip fd00::1"},
		{"2001:db8:1:2::3", "2001:db8:1:ffff::", "2001:db8:1::", "fd00::1"},
		{"2001:db8:2::", "2001:db8::ffff", "fd00::", "fd00::2"}},
	{"IPv4 rules block no IPv6 client, IPv6 rules no IPv4 one",
		{"ip 0.0.0.0/0", "ip 2001:db8::/32"}, {"2001:db8::1"}, {"2001:db9::", "::"}},
};

static void
test_ip6(void)
{
	char err[256];

	for (size_t c = 0; c < RTE_DIM(ip6_cases); c++) {
		struct rule_spec specs[4];
		unsigned n = 0, bad = 0;

		while (n < 4 && ip6_cases[c].rules[n] != NULL)
			n++;
		if (!parse_all(ip6_cases[c].rules, n, specs))
			continue;
		struct rules *r = rules_build(specs, n, SOCKET_ID_ANY, err, sizeof(err));

		if (!tap_ok(r != NULL, "%s: builds%s%s", ip6_cases[c].name, r ? "" : ": ",
			    r ? "" : err))
			continue;
		for (unsigned i = 0; i < 6 && ip6_cases[c].blocked[i] != NULL; i++)
			if (!block_ip6(r, ip6_cases[c].blocked[i])) {
				tap_diag("%s: not blocked", ip6_cases[c].blocked[i]);
				bad++;
			}
		for (unsigned i = 0; i < 6 && ip6_cases[c].open[i] != NULL; i++)
			if (block_ip6(r, ip6_cases[c].open[i])) {
				tap_diag("%s: blocked", ip6_cases[c].open[i]);
				bad++;
			}
		tap_ok(bad == 0, "%s", ip6_cases[c].name);
		rules_free(r);
	}

	/* Only IPv4 rules: an IPv6 client meets none; no rules at all: neither. */
	static const char *const v4only[] = {"ip 198.18.0.0/15", "ip 10.0.0.1"};
	static const char *const v6only[] = {"ip 2001:db8::/32", "ip ::/0"};
	struct rule_spec specs[2];
	struct rules *r;

	tap_ok(!block_ip6(NULL, "2001:db8::1"), "IPv6: a NULL rule set blocks nothing");
	if (parse_all(v4only, 2, specs) &&
		(r = rules_build(specs, 2, SOCKET_ID_ANY, err, sizeof(err))) != NULL) {
		tap_ok(r->n_ip6 == 0 && !r->all_ip6 && !block_ip6(r, "2001:db8::1") &&
				!block_ip6(r, "::c612:1") && block_ip(r, IP(198, 18, 0, 1)),
			"IPv4 rules only: no IPv6 part, an IPv6 client is not blocked");
		/* An IPv4-mapped client address is its IPv4 client. */
		tap_ok(block_ip6(r, "::ffff:198.18.0.1") && block_ip6(r, "::ffff:198.19.255.255") &&
				block_ip6(r, "::ffff:10.0.0.1") &&
				!block_ip6(r, "::ffff:10.0.0.2") &&
				!block_ip6(r, "::ffff:198.20.0.0"),
			"an IPv4-mapped client (::ffff:198.18.0.1) meets the IPv4 rules");
		rules_free(r);
	}
	if (parse_all(v6only, 2, specs) &&
		(r = rules_build(specs, 2, SOCKET_ID_ANY, err, sizeof(err))) != NULL) {
		tap_ok(r->all_ip6 && r->n_ip6 == 0 && !block_ip(r, IP(1, 2, 3, 4)) &&
				!block_ip6(r, "::ffff:1.2.3.4") && block_ip6(r, "fe80::1"),
			"::/0 is a flag; it blocks no IPv4 client, mapped or not");
		rules_free(r);
	}

	/* Normalising: networks inside others and duplicates are dropped. */
	static const char *const texts[] = {"ip 2001:db8::/32", "ip 2001:db8:5::/48",
		"ip 2001:db8::1", "ip 2001:db8::1", "ip fd00::/8", "ip fd12:3456::/32",
		"ip 2001:db9::7", "ip 2001:db9::7", "ip 2001:db9::6/127"};
	struct rule_spec nspecs[RTE_DIM(texts)];

	if (parse_all(texts, RTE_DIM(texts), nspecs) &&
		(r = rules_build(nspecs, RTE_DIM(texts), SOCKET_ID_ANY, err, sizeof(err))) !=
			NULL) {
		tap_eq_int(r->n_ip6, 3,
			"IPv6 normalising: 2001:db8::/32, 2001:db9::6/127, fd00::/8 kept");
		tap_ok(block_ip6(r, "2001:db8:5::9") && block_ip6(r, "2001:db9::7") &&
				block_ip6(r, "2001:db9::6") && !block_ip6(r, "2001:db9::8") &&
				block_ip6(r, "fd12:3456::1") && !block_ip6(r, "fe00::"),
			"  and the answers are those of every rule");
		rules_free(r);
	}
}

/*
 * 20,000 random IPv6 networks in 2000::/8 (prefixes 24..128, a few of 12..23 that many others
 * fall inside) against a naive reference, probed at random addresses and at networks' ends.
 */
static void
test_ip6_random(void)
{
	enum { N = 20000, PROBES = 10000 };
	struct rule_spec *specs = calloc(N, sizeof(*specs));
	char err[256];
	unsigned bad = 0, n_blocked = 0;

	if (!tap_ok(specs != NULL, "IPv6 random: memory"))
		return;
	for (unsigned i = 0; i < N; i++) {
		struct rule_spec *s = &specs[i];
		unsigned pfx = rnd() % 2000 == 0 ? 12 + (unsigned)(rnd() % 12)
						 : 24 + (unsigned)(rnd() % 105);

		s->kind = RULE_BLOCK_IP6;
		s->prefix = (uint8_t)pfx;
		for (unsigned b = 0; b < 16; b++)
			s->ip6[b] = (uint8_t)rnd();
		s->ip6[0] = 0x20;
		for (unsigned bit = s->prefix; bit < 128; bit++)
			s->ip6[bit / 8] &= (uint8_t) ~(0x80u >> (bit % 8));
	}
	uint64_t t0 = rte_rdtsc();
	struct rules *r = rules_build(specs, N, SOCKET_ID_ANY, err, sizeof(err));

	if (!tap_ok(r != NULL, "20000 random IPv6 networks build%s%s", r ? "" : ": ",
		    r ? "" : err)) {
		free(specs);
		return;
	}
	tap_diag("built in %.1f ms, %u ranges after normalising",
		(double)(rte_rdtsc() - t0) * 1e3 / (double)rte_get_tsc_hz(), r->n_ip6);
	for (unsigned p = 0; p < PROBES; p++) {
		uint8_t a[16];
		bool want = false;

		if (p % 3 == 0) {
			/* A network's first or last address, or one past it. */
			const struct rule_spec *s = &specs[rnd() % N];

			memcpy(a, s->ip6, 16);
			if (p % 2)
				for (unsigned bit = s->prefix; bit < 128; bit++)
					a[bit / 8] |= (uint8_t)(0x80u >> (bit % 8));
			if (p % 5 == 0)
				for (int b = 15; b >= 0 && ++a[b] == 0; b--)
					;
		} else {
			for (unsigned b = 0; b < 16; b++)
				a[b] = (uint8_t)rnd();
			a[0] = 0x20;
		}
		for (unsigned i = 0; i < N && !want; i++) {
			unsigned pfx = specs[i].prefix, full = pfx / 8, rest = pfx % 8;

			want = memcmp(a, specs[i].ip6, full) == 0 &&
			       (rest == 0 || ((a[full] ^ specs[i].ip6[full]) &
						     (uint8_t)(0xff00u >> rest)) == 0);
		}
		n_blocked += want;
		bad += rules_block_ip6(r, a) != want;
	}
	tap_ok(bad == 0, "%u IPv6 probes: the same answers as the reference (%u differ)", PROBES,
		bad);
	tap_ok(n_blocked > PROBES / 10 && n_blocked < PROBES - PROBES / 10, "(of which %u blocked)",
		n_blocked);
	rules_free(r);
	free(specs);
}

static void
test_bad_specs(void)
{
	static const struct {
		struct rule_spec s;
		const char *want;
	} c[] = {
		{{.kind = RULE_BLOCK_IP, .ip = IP(198, 18, 0, 0), .prefix = 33}, "0..32"},
		{{.kind = RULE_BLOCK_IP, .ip = IP(198, 18, 0, 1), .prefix = 24},
			"198.18.0.1/24 has host bits set: the network is 198.18.0.0/24"},
		{{.kind = RULE_BLOCK_IP, .ip = IP(10, 0, 0, 1), .prefix = 0}, "host bits"},
		{{.kind = RULE_BLOCK_USER, .user = 0}, "user id 0 is not from 1 to"},
		{{.kind = RULE_BLOCK_USER, .user = UINT64_C(9223372036854775808)},
			"user id 9223372036854775808"},
		{{.kind = RULE_BLOCK_DEVICE, .device = ""}, "device id is empty"},
		{{.kind = RULE_BLOCK_DEVICE, .device = "a b"}, "byte 0x20 at offset 1"},
		{{.kind = RULE_BLOCK_DEVICE, .device = "\x7f"}, "byte 0x7f"},
		{{.kind = RULE_BLOCK_IP6, .ip6 = {0x20, 0x01, 0x0d, 0xb8}, .prefix = 129},
			"0..128"},
		{{.kind = RULE_BLOCK_IP6, .ip6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}, .prefix = 32},
			"ip 2001:db8::1/32 has host bits set: the network is 2001:db8::/32"},
		{{.kind = RULE_BLOCK_IP6, .ip6 = {[0] = 0x80}, .prefix = 0}, "host bits"},
		{{.kind = RULE_BLOCK_IP6, .ip6 = {[10] = 0xff, 0xff, 198, 18}, .prefix = 112},
			"IPv4-mapped network: block ip 198.18.0.0/16 instead"},
		{{.kind = 0}, "unknown rule kind 0"},
		{{.kind = 99}, "unknown rule kind 99"},
	};
	struct rule_spec ok[3] = {{.kind = RULE_BLOCK_USER, .user = 5},
		{.kind = RULE_BLOCK_IP, .ip = IP(10, 0, 0, 0), .prefix = 8}};
	char err[256];

	for (size_t i = 0; i < RTE_DIM(c); i++) {
		err[0] = '\0';
		tap_ok(rule_spec_check(&c[i].s, err, sizeof(err)) == -EINVAL &&
				strstr(err, c[i].want) != NULL,
			"bad rule: \"%s\" (%s)", c[i].want, err);
		ok[2] = c[i].s;
		err[0] = '\0';
		tap_ok(rules_build(ok, 3, SOCKET_ID_ANY, err, sizeof(err)) == NULL &&
				strncmp(err, "rule 2: ", 8) == 0 && strstr(err, c[i].want) != NULL,
			"rules_build names rule 2 (%s)", err);
	}

	struct rule_spec long_dev = {.kind = RULE_BLOCK_DEVICE};

	memset(long_dev.device, 'x', sizeof(long_dev.device));
	tap_ok(rule_spec_check(&long_dev, err, sizeof(err)) == -EINVAL &&
			strstr(err, "longer than 63") != NULL,
		"a device id without a NUL in 64 bytes (%s)", err);

	struct rule_spec *many = calloc(RULES_MAX + 1, sizeof(*many));

	tap_ok(rules_build(many, RULES_MAX + 1, SOCKET_ID_ANY, err, sizeof(err)) == NULL &&
			strstr(err, "too many rules: 1048577, at most 1048576") != NULL,
		"more than RULES_MAX rules (%s)", err);
	/* One network more than allowed, each /24 with an address inside that does not count. */
	for (unsigned i = 0; i <= RULES_MAX_NETWORKS; i++) {
		many[2 * i] = (struct rule_spec){
			.kind = RULE_BLOCK_IP, .ip = (i + 256) << 8, .prefix = 24};
		many[2 * i + 1] = (struct rule_spec){
			.kind = RULE_BLOCK_IP, .ip = (i + 256) << 8 | 7, .prefix = 32};
	}
	tap_ok(rules_build(many, 2 * (RULES_MAX_NETWORKS + 1), SOCKET_ID_ANY, err, sizeof(err)) ==
				NULL &&
			strstr(err, "32769 distinct networks (/1../31), at most 32768") != NULL,
		"more than RULES_MAX_NETWORKS networks (%s)", err);
	struct rules *r =
		rules_build(many, 2 * RULES_MAX_NETWORKS, SOCKET_ID_ANY, err, sizeof(err));

	tap_ok(r != NULL && r->n_networks == RULES_MAX_NETWORKS && r->n_ip32 == 0,
		"exactly RULES_MAX_NETWORKS networks build; the addresses inside them are dropped");
	tap_ok(r != NULL && block_ip(r, IP(0, 1, 0, 0)) && block_ip(r, IP(0, 128, 255, 255)) &&
			!block_ip(r, IP(0, 129, 0, 0)) && !block_ip(r, IP(0, 0, 255, 255)),
		"and answer right at both ends");
	rules_free(r);
	free(many);
}

/* Two versions alive at once (as during a swap): unique LPM names, independent answers. */
static void
test_two_alive(void)
{
	static const char *const ta[] = {"ip 10.0.0.0/8", "user 1", "device a"};
	static const char *const tb[] = {"ip 172.16.0.0/12", "user 2", "device b"};
	struct rule_spec sa[3], sb[3];
	char err[256];

	if (!parse_all(ta, 3, sa) || !parse_all(tb, 3, sb))
		return;
	struct rules *a = rules_build(sa, 3, SOCKET_ID_ANY, err, sizeof(err));
	struct rules *b = rules_build(sb, 3, SOCKET_ID_ANY, err, sizeof(err));

	tap_ok(a != NULL && b != NULL && a->lpm != NULL && b->lpm != NULL && a->devices != NULL &&
			b->devices != NULL,
		"two rule sets with networks and devices are alive at once");
	if (a == NULL || b == NULL)
		goto out;
	tap_ok(a->serial != b->serial && a->lpm != b->lpm && a->devices != b->devices,
		"each has its own LPM and hash table (DPDK refuses a name in use)");
	tap_ok(block_ip(a, IP(10, 1, 2, 3)) && !block_ip(a, IP(172, 16, 0, 1)) &&
			rules_block_user(a, 1) && !rules_block_user(a, 2) && block_dev(a, "a", 1) &&
			!block_dev(a, "b", 1),
		"the first answers by its own rules");
	tap_ok(!block_ip(b, IP(10, 1, 2, 3)) && block_ip(b, IP(172, 16, 0, 1)) &&
			!rules_block_user(b, 1) && rules_block_user(b, 2) &&
			!block_dev(b, "a", 1) && block_dev(b, "b", 1),
		"the second by its own");
	rules_free(a);
	a = rules_build(sa, 3, SOCKET_ID_ANY, err, sizeof(err));
	tap_ok(a != NULL && block_ip(a, IP(10, 1, 2, 3)) && block_ip(b, IP(172, 16, 0, 1)),
		"a third builds after the first is freed, the second still answers");
out:
	rules_free(a);
	rules_free(b);
}

struct reader_arg {
	const struct rules *r;
	unsigned mismatches;
};

/* Reads r for a while from a thread that is not an EAL lcore; counts wrong answers. */
static void *
reader(void *p)
{
	struct reader_arg *a = p;

	for (unsigned round = 0; round < 200; round++)
		for (uint32_t i = 0; i < 4096; i++) {
			uint32_t ip = IP(10, 0, 0, 0) + i * 65537;

			a->mismatches +=
				block_ip(a->r, ip) != ((ip >> 16) == IP(10, 0, 0, 0) >> 16);
			a->mismatches += rules_block_user(a->r, i) != (i % 2 == 1 && i < 1000);
		}
	return NULL;
}

struct builder_arg {
	struct rules *r;
};

static void *
builder(void *p)
{
	struct builder_arg *a = p;
	struct rule_spec s[501];
	char err[256];

	s[0] = (struct rule_spec){.kind = RULE_BLOCK_IP, .ip = IP(10, 0, 0, 0), .prefix = 16};
	for (unsigned i = 0; i < 500; i++)
		s[1 + i] = (struct rule_spec){.kind = RULE_BLOCK_USER, .user = 2 * i + 1};
	a->r = rules_build(s, 501, SOCKET_ID_ANY, err, sizeof(err));
	return NULL;
}

static void
test_threads(void)
{
	struct builder_arg b1 = {NULL}, b2 = {NULL};
	pthread_t bt, rt[2];
	struct reader_arg ra[2];

	/* Built on a thread that is not an EAL lcore, as the bridge thread is. */
	pthread_create(&bt, NULL, builder, &b1);
	pthread_join(bt, NULL);
	if (!tap_ok(b1.r != NULL, "a rule set builds on a non-EAL thread"))
		return;
	/* Readers on two threads while another version is built beside it. */
	for (int i = 0; i < 2; i++) {
		ra[i] = (struct reader_arg){b1.r, 0};
		pthread_create(&rt[i], NULL, reader, &ra[i]);
	}
	pthread_create(&bt, NULL, builder, &b2);
	pthread_join(bt, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(rt[i], NULL);
	tap_ok(b2.r != NULL, "a second version builds while the first is read");
	tap_eq_int(ra[0].mismatches + ra[1].mismatches, 0,
		"two reader threads get every answer right meanwhile");
	rules_free(b1.r);
	rules_free(b2.r);
}

/* s with control and non-ASCII bytes as \xNN, for test names (TAP is one line per check). */
static const char *
printable(const char *s, char *buf, size_t len)
{
	size_t k = 0;

	for (; *s != '\0' && k + 5 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c >= 0x7f)
			k += (size_t)snprintf(buf + k, len - k, "\\x%02x", c);
		else
			buf[k++] = (char)c;
	}
	buf[k] = '\0';
	return buf;
}

static void
test_parse(void)
{
	static const struct {
		const char *text;
		const char *canon;
		struct rule_spec want;
	} good[] = {
		{"ip 198.18.0.0/24", "ip 198.18.0.0/24",
			{.kind = RULE_BLOCK_IP, .ip = IP(198, 18, 0, 0), .prefix = 24}},
		{"ip 198.18.0.7", "ip 198.18.0.7",
			{.kind = RULE_BLOCK_IP, .ip = IP(198, 18, 0, 7), .prefix = 32}},
		{"ip 198.18.0.7/32", "ip 198.18.0.7",
			{.kind = RULE_BLOCK_IP, .ip = IP(198, 18, 0, 7), .prefix = 32}},
		{"  ip\t0.0.0.0/0 \r\n", "ip 0.0.0.0/0", {.kind = RULE_BLOCK_IP, .prefix = 0}},
		{"ip 255.255.255.255", "ip 255.255.255.255",
			{.kind = RULE_BLOCK_IP, .ip = UINT32_MAX, .prefix = 32}},
		{"ip 2001:db8::/32", "ip 2001:db8::/32",
			{.kind = RULE_BLOCK_IP6, .ip6 = {0x20, 0x01, 0x0d, 0xb8}, .prefix = 32}},
		{"ip 2001:DB8:0:0::/32", "ip 2001:db8::/32",
			{.kind = RULE_BLOCK_IP6, .ip6 = {0x20, 0x01, 0x0d, 0xb8}, .prefix = 32}},
		{"ip 2001:db8::7", "ip 2001:db8::7",
			{.kind = RULE_BLOCK_IP6,
				.ip6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 7},
				.prefix = 128}},
		{"ip 2001:0db8:0000:0000:0000:0000:0000:0007/128", "ip 2001:db8::7",
			{.kind = RULE_BLOCK_IP6,
				.ip6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 7},
				.prefix = 128}},
		{"ip ::/0", "ip ::/0", {.kind = RULE_BLOCK_IP6, .prefix = 0}},
		{"ip ::1", "ip ::1", {.kind = RULE_BLOCK_IP6, .ip6 = {[15] = 1}, .prefix = 128}},
		{"ip 2001:db8:0:1:1:1:1:1", "ip 2001:db8:0:1:1:1:1:1",
			{.kind = RULE_BLOCK_IP6,
				.ip6 = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
				.prefix = 128}},
		{"user 42", "user 42", {.kind = RULE_BLOCK_USER, .user = 42}},
		{"user 9223372036854775807", "user 9223372036854775807",
			{.kind = RULE_BLOCK_USER, .user = UINT64_C(9223372036854775807)}},
		{"device abc-123", "device abc-123",
			{.kind = RULE_BLOCK_DEVICE, .device = "abc-123"}},
		{"device Zz0_:.~!", "device Zz0_:.~!",
			{.kind = RULE_BLOCK_DEVICE, .device = "Zz0_:.~!"}},
	};
	static const struct {
		const char *text;
		const char *want;
	} bad[] = {
		{"", "empty rule"},
		{" \t\r\n", "empty rule"},
		{"ipv4 1.2.3.4", "unknown rule kind 'ipv4'"},
		{"IP 1.2.3.4", "unknown rule kind 'IP'"},
		{"ip", "'ip' needs a value, e.g. 'ip 198.18.0.0/24'"},
		{"user", "'user' needs a value, e.g. 'user 42'"},
		{"device  ", "'device' needs a value"},
		{"ip 198.18.0", "'198.18.0' is not an IPv4 address"},
		{"ip 198.18.0.256", "'198.18.0.256' is not an IPv4 address"},
		{"ip 198.18.00.1", "is not an IPv4 address"},
		{"ip 198.18.0.1.2", "unexpected '.' after '198.18.0.1'"},
		{"ip 198.18.0.0/33", "prefix length '/33' is not a number from 0 to 32"},
		{"ip 198.18.0.0/", "prefix length '/' is not"},
		{"ip 198.18.0.0/024", "prefix length '/024'"},
		{"ip 198.18.0.0/24x", "prefix length '/24x'"},
		{"ip 198.18.0.1/24", "has host bits set: the network is 198.18.0.0/24"},
		{"ip 1.2.3.4 5.6.7.8", "unexpected '5.6.7.8' after the rule"},
		{"ip 2001:db8::/129", "prefix length '/129' is not a number from 0 to 128"},
		{"ip 2001:db8::/", "prefix length '/' is not a number from 0 to 128"},
		{"ip 2001:db8::/032", "prefix length '/032'"},
		{"ip 2001:db8::1/32", "has host bits set: the network is 2001:db8::/32"},
		{"ip 2001:db8::8000:0:0:0/64", "has host bits set: the network is 2001:db8::/64 "
					       "(use /128 for one address)"},
		{"ip [2001:db8::1]", "'[2001:db8::1]' is not an IPv6 address"},
		{"ip 2001:db8::1%eth0", "is not an IPv6 address"},
		{"ip 2001:db8:::1", "'2001:db8:::1' is not an IPv6 address"},
		{"ip 2001:db8::1::2", "is not an IPv6 address"},
		{"ip 12345::1", "is not an IPv6 address"},
		{"ip 1:2:3:4:5:6:7:8:9", "is not an IPv6 address"},
		{"ip 2001:db8::g", "is not an IPv6 address"},
		{"ip ::ffff:198.18.0.0/112", "is an IPv4-mapped network: block ip 198.18.0.0/16"},
		{"ip ::ffff:198.18.0.7", "block ip 198.18.0.7/32 instead"},
		{"user 0", "user id '0' is not a decimal number from 1 to 9223372036854775807"},
		{"user -1", "user id '-1'"},
		{"user 042", "user id '042'"},
		{"user 12a", "user id '12a'"},
		{"user 9223372036854775808", "user id '9223372036854775808'"},
		{"user 99999999999999999999", "user id '99999999999999999999'"},
		{"device 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			"is 64 bytes long, at most 63"},
		{"device abc\x01", "byte 0x01 at offset 3"},
		{"device \xc3\xa9t\xc3\xa9", "byte 0xc3 at offset 0"},
	};
	char err[256], buf[RULE_TEXT_MAX];
	struct rule_spec s;

	for (size_t i = 0; i < RTE_DIM(good); i++) {
		int rc = rule_spec_parse(good[i].text, &s, err, sizeof(err));
		char shown[96];

		tap_ok(rc == 0 && memcmp(&s, &good[i].want, sizeof(s)) == 0, "parses \"%s\"",
			printable(good[i].text, shown, sizeof(shown)));
		rc = rule_spec_format(&s, buf, sizeof(buf));
		tap_ok(rc == (int)strlen(good[i].canon) && strcmp(buf, good[i].canon) == 0,
			"formats as \"%s\" (got \"%s\")", good[i].canon, rc >= 0 ? buf : "");
	}
	for (size_t i = 0; i < RTE_DIM(bad); i++) {
		char shown[96];

		err[0] = '\0';
		tap_ok(rule_spec_parse(bad[i].text, &s, err, sizeof(err)) == -EINVAL &&
				strstr(err, bad[i].want) != NULL,
			"refuses \"%s\": %s", printable(bad[i].text, shown, sizeof(shown)), err);
	}

	/* format then parse gives the rule back, for random valid rules. */
	unsigned mismatch = 0;

	for (unsigned i = 0; i < 3000; i++) {
		struct rule_spec r = {0}, back;

		switch (i % 4) {
		case 0: {
			unsigned pfx = (unsigned)(rnd() % 33);

			r.kind = RULE_BLOCK_IP;
			r.prefix = (uint8_t)pfx;
			r.ip = pfx == 0 ? 0 : (uint32_t)rnd() & (UINT32_MAX << (32 - pfx));
			break;
		}
		case 3: {
			unsigned pfx = (unsigned)(rnd() % 129);

			r.kind = RULE_BLOCK_IP6;
			r.prefix = (uint8_t)pfx;
			for (unsigned b = 0; b < 16; b++)
				r.ip6[b] = (uint8_t)rnd();
			r.ip6[0] |= 1; /* never in ::ffff:0:0/96 */
			for (unsigned bit = pfx; bit < 128; bit++)
				r.ip6[bit / 8] &= (uint8_t) ~(0x80u >> (bit % 8));
			break;
		}
		case 1:
			r.kind = RULE_BLOCK_USER;
			r.user = 1 + rnd() % UINT64_C(9223372036854775807);
			break;
		default:
			r.kind = RULE_BLOCK_DEVICE;
			random_device(r.device);
			break;
		}
		mismatch += rule_spec_format(&r, buf, sizeof(buf)) < 0 ||
			    rule_spec_parse(buf, &back, err, sizeof(err)) != 0 ||
			    memcmp(&r, &back, sizeof(r)) != 0;
	}
	tap_eq_int(mismatch, 0, "3000 random rules (IPv6 too): format then parse gives them back");

	s = (struct rule_spec){.kind = RULE_BLOCK_USER, .user = 42};
	tap_eq_int(
		rule_spec_format(&s, buf, 7), -ENOSPC, "format into a buffer too small: -ENOSPC");
	tap_eq_int(rule_spec_format(&s, buf, 8), 7, "format into exactly enough room");
	s.user = 0;
	tap_eq_int(
		rule_spec_format(&s, buf, sizeof(buf)), -EINVAL, "format of a bad rule: -EINVAL");
}

int
main(int argc, char **argv)
{
	/* Each LPM table takes 64 MiB of tbl24; two are alive at once in test_two_alive(). */
	char *eal_argv[] = {argv[0], "--no-huge", "-m", "512", "--no-pci", "--no-shconf",
		"--no-telemetry", "--log-level", "lib.*:error", "-l", "0", NULL};

	(void)argc;
	if (rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv) < 0) {
		printf("Bail out! EAL init failed\n");
		return 2;
	}
	test_eal_rundir_cleanup_at_exit();
	test_cidr();
	test_normalise();
	test_users_devices();
	test_random();
	test_bad_specs();
	test_ip6();
	test_ip6_random();
	test_two_alive();
	test_threads();
	test_parse();
	rte_eal_cleanup();
	return tap_done();
}
