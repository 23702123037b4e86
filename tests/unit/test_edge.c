/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dataplane/edge: the [edge] trusted list (edge_trust_parse()) and its lookups
 * (edge_trusted4(), edge_trusted6()), against a reference that tests every network of the
 * list one by one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/parse.h"
#include "dataplane/edge.h"
#include "tests/lib/rng.h"
#include "tests/tap.h"

static void
test_parse_errors(void)
{
	static const struct {
		const char *text;
		const char *msg; /* a piece of the message */
	} bad[] = {
		{"198.18.0.1/24", "the network is 198.18.0.0/24"},
		{"198.18.0.0/33", "prefix length must be 0..32"},
		{"198.18.0", "is not an IPv4 or IPv6 address"},
		{"198.18.0.0/24; 10.0.0.0/8", "\"198.18.0.0/24;\": the prefix length"},
		{"2001:db8::1/32", "the network is 2001:db8::/32"},
		{"2001:db8::/129", "prefix length must be 0..128"},
		{"[2001:db8::1]", "no brackets"},
		{"example.com", "is not an IPv4 or IPv6"},
	};
	struct edge_trust t;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&t, 0x5a, sizeof(t));
		err[0] = '\0';
		int rc = edge_trust_parse(bad[i].text, &t, err, sizeof(err));

		tap_ok(rc == -EINVAL && strstr(err, bad[i].msg) != NULL && t.n4 == 0x5a5a5a5au,
			"\"%s\" is refused: %s", bad[i].text, err);
	}

	/* 65 networks of one family are one too many; 64 of each are fine. */
	char text[EDGE_TRUSTED_TEXT_MAX + 2];
	size_t n = 0;

	for (unsigned i = 0; i < 64; i++)
		n += (size_t)snprintf(
			text + n, sizeof(text) - n, "10.%u.0.0/16,2001:db8:%x::/48 ", 2 * i, i);
	int rc = edge_trust_parse(text, &t, err, sizeof(err));

	tap_ok(rc == 0 && t.n4 == 64 && t.n6 == 64,
		"64 IPv4 and 64 IPv6 networks are taken (%u, %u)", t.n4, t.n6);
	snprintf(text + n, sizeof(text) - n, "10.200.0.0/16");
	tap_ok(edge_trust_parse(text, &t, err, sizeof(err)) == -EINVAL &&
			strstr(err, "more than 64 IPv4") != NULL,
		"a 65th IPv4 network is refused: %s", err);
	memset(text, ' ', EDGE_TRUSTED_TEXT_MAX + 1);
	text[EDGE_TRUSTED_TEXT_MAX + 1] = '\0';
	tap_ok(edge_trust_parse(text, NULL, err, sizeof(err)) == -EINVAL,
		"a list longer than %u bytes is refused", EDGE_TRUSTED_TEXT_MAX);
	tap_ok(edge_trust_parse(" , ,\t", &t, err, sizeof(err)) == 0 && t.n4 == 0 && t.n6 == 0 &&
			!edge_trusted4(&t, htonl(0x0a000001)) && !edge_trusted4(NULL, 1),
		"an empty list trusts nobody");
}

static void
test_merge_and_lookup(void)
{
	struct edge_trust t;
	char err[256];
	uint8_t a6[16];

	tap_ok(edge_trust_parse("198.18.1.0/24, 198.18.0.7 198.18.1.128/25,198.18.2.0/24 "
				"0.0.0.1, 255.255.255.255, 2001:db8::/32, ::1, 2001:db8:1::/48",
		       &t, err, sizeof(err)) == 0,
		"a mixed list parses: %s", err);
	/* 198.18.1.0/24 and 198.18.2.0/24 are adjacent: one range; the /25 is inside. */
	tap_ok(t.n4 == 4 && t.n6 == 2, "networks inside others and adjacent ones merge (%u, %u)",
		t.n4, t.n6);
	tap_ok(edge_trusted4(&t, htonl(0xc6120007)) && !edge_trusted4(&t, htonl(0xc6120006)) &&
			!edge_trusted4(&t, htonl(0xc6120008)),
		"one address: itself only");
	tap_ok(edge_trusted4(&t, htonl(0xc6120100)) && edge_trusted4(&t, htonl(0xc61202ff)) &&
			!edge_trusted4(&t, htonl(0xc61200ff)) &&
			!edge_trusted4(&t, htonl(0xc6120300)),
		"merged networks: both ends in, one past them out");
	tap_ok(edge_trusted4(&t, htonl(1)) && edge_trusted4(&t, htonl(0xffffffff)) &&
			!edge_trusted4(&t, 0),
		"the ends of the address space");
	parse_ipv6_n("2001:db8:ffff::9", 16, a6);
	tap_ok(edge_trusted6(&t, a6), "IPv6 inside 2001:db8::/32");
	parse_ipv6_n("2001:db9::", 10, a6);
	tap_ok(!edge_trusted6(&t, a6), "IPv6 just past 2001:db8::/32");
	parse_ipv6_n("::1", 3, a6);
	tap_ok(edge_trusted6(&t, a6), "IPv6 ::1 by itself");
	parse_ipv6_n("::2", 3, a6);
	tap_ok(!edge_trusted6(&t, a6) && !edge_trusted6(NULL, a6), "IPv6 ::2 is not trusted");
}

/* Random lists against checking every network in turn. */
static void
test_random(void)
{
	uint64_t r = 17;
	unsigned wrong = 0, hits = 0;

	for (unsigned round = 0; round < 200; round++) {
		char text[EDGE_TRUSTED_TEXT_MAX + 1];
		uint32_t net[64], mask[64];
		unsigned n = 1 + (unsigned)(rng_splitmix64(&r) % 64);
		size_t len = 0;
		struct edge_trust t;
		char err[256];

		for (unsigned i = 0; i < n; i++) {
			unsigned prefix = 8 + (unsigned)(rng_splitmix64(&r) % 25);

			mask[i] = parse_prefix_mask(prefix);
			/* Few distinct high bits, so networks nest and touch. */
			net[i] = ((uint32_t)rng_splitmix64(&r) & 0x0303ffffu) & mask[i];
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%u.%u.%u.%u/%u,",
				net[i] >> 24, (net[i] >> 16) & 0xff, (net[i] >> 8) & 0xff,
				net[i] & 0xff, prefix);
		}
		if (edge_trust_parse(text, &t, err, sizeof(err)) != 0) {
			wrong++;
			continue;
		}
		for (unsigned k = 0; k < 2000; k++) {
			uint32_t ip = (uint32_t)rng_splitmix64(&r) & 0x0303ffffu;
			bool want = false;

			if (k % 2)
				ip = net[k % n] | ((uint32_t)rng_splitmix64(&r) & ~mask[k % n]);
			for (unsigned i = 0; i < n; i++)
				want |= (ip & mask[i]) == net[i];
			hits += want;
			wrong += edge_trusted4(&t, htonl(ip)) != want;
		}
	}
	tap_ok(wrong == 0 && hits > 1000,
		"200 random lists: every lookup as the reference (%u "
		"wrong, %u inside)",
		wrong, hits);
}

int
main(void)
{
	test_parse_errors();
	test_merge_and_lookup();
	test_random();
	return tap_done();
}
