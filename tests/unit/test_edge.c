/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dataplane/edge: the [edge] trusted list and trusted_file (edge_trust_load()) and their
 * lookups (edge_trusted4(), edge_trusted6()): at both ends of 5,000 networks of each family
 * read from a file, and against a reference that tests every network of a list one by one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

	/* The text holds as many networks as fit its 4,095 bytes (64 used to be the bound). */
	char text[EDGE_TRUSTED_TEXT_MAX + 2];
	size_t n = 0;

	for (unsigned i = 0; i < 100; i++)
		n += (size_t)snprintf(
			text + n, sizeof(text) - n, "10.%u.0.0/16,2001:db8:%x::/48 ", 2 * i, i);
	int rc = edge_trust_parse(text, &t, err, sizeof(err));

	tap_ok(rc == 0 && t.n4 == 100 && t.n6 == 100,
		"100 IPv4 and 100 IPv6 networks are taken from the text (%u, %u)", t.n4, t.n6);
	edge_trust_free(&t);
	memset(text, ' ', EDGE_TRUSTED_TEXT_MAX + 1);
	text[EDGE_TRUSTED_TEXT_MAX + 1] = '\0';
	tap_ok(edge_trust_parse(text, NULL, err, sizeof(err)) == -EINVAL,
		"a list longer than %u bytes is refused", EDGE_TRUSTED_TEXT_MAX);
	tap_ok(edge_trust_parse(" , ,\t", &t, err, sizeof(err)) == 0 && t.n4 == 0 && t.n6 == 0 &&
			!edge_trusted4(&t, htonl(0x0a000001)) && !edge_trusted4(NULL, 1) &&
			t.mem == NULL,
		"an empty list trusts nobody, and allocates nothing");
	edge_trust_free(&t);
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
	edge_trust_free(&t);
	edge_trust_free(&t);
	tap_ok(t.n4 == 0 && t.n6 == 0 && !edge_trusted4(&t, htonl(1)), "freed twice: empty");
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
		edge_trust_free(&t);
	}
	tap_ok(wrong == 0 && hits > 1000,
		"200 random lists: every lookup as the reference (%u "
		"wrong, %u inside)",
		wrong, hits);
}

/* A temporary file with text; its path into path (cap bytes). Exits on failure. */
static void
file_with(char *path, size_t cap, const char *text)
{
	snprintf(path, cap, "%s/test_edge.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : P_tmpdir);
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
		perror("test file");
		exit(2);
	}
}

/* An IPv6 address from its two halves, as 16 bytes in network order. */
static void
ip6_bytes(uint64_t hi, uint64_t lo, uint8_t a[16])
{
	for (int i = 0; i < 8; i++) {
		a[i] = (uint8_t)(hi >> (56 - 8 * i));
		a[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
}

#define BIG_N	5000
#define BIG_HI6 0x20010db800000000ull

/*
 * 5,000 networks of each family in a file, shuffled, with comments, blank lines and CRLF: each
 * IPv4 network in its own 64 addresses (prefix /27 to /32, so none touches another), each IPv6
 * one in its own /64 with an empty /64 between (prefix /64 to /128). Every network's first and
 * last address are trusted, the addresses just before and just after are not.
 */
static void
test_file_big(void)
{
	static const unsigned p4[] = {27, 28, 29, 30, 31, 32}, p6[] = {64, 96, 120, 127, 128};
	static unsigned order[2 * BIG_N];
	size_t cap = (size_t)2 * BIG_N * 64 + 4096, len = 0;
	char *text = malloc(cap), path[512], err[256], a[64];
	uint64_t r = 99;
	struct edge_trust t;
	unsigned wrong = 0;
	uint8_t a6[16];

	for (unsigned i = 0; i < 2 * BIG_N; i++)
		order[i] = i;
	for (unsigned i = 2 * BIG_N - 1; i > 0; i--) {
		unsigned k = (unsigned)(rng_splitmix64(&r) % (i + 1)), x = order[i];

		order[i] = order[k];
		order[k] = x;
	}
	len += (size_t)snprintf(text + len, cap - len, "# the CDN's list\n\n");
	for (unsigned k = 0; k < 2 * BIG_N; k++) {
		unsigned i = order[k] % BIG_N;
		const char *tail = k % 7 == 0 ? "  # a comment\n" : k % 11 == 0 ? "\r\n" : "\n";

		if (order[k] < BIG_N) {
			uint32_t first = 0x0a000000u + 64 * i;

			len += (size_t)snprintf(text + len, cap - len, "%s%u.%u.%u.%u/%u%s",
				k % 5 == 0 ? "\t" : "", first >> 24, (first >> 16) & 0xff,
				(first >> 8) & 0xff, first & 0xff, p4[i % 6], tail);
		} else {
			ip6_bytes(BIG_HI6 + 2 * (uint64_t)i, 0, a6);
			inet_ntop(AF_INET6, a6, a, sizeof(a));
			len += (size_t)snprintf(
				text + len, cap - len, "%s/%u%s", a, p6[i % 5], tail);
		}
	}
	file_with(path, sizeof(path), text);
	int rc = edge_trust_load("", path, &t, err, sizeof(err));

	tap_ok(rc == 0 && t.n4 == BIG_N && t.n6 == BIG_N,
		"a file of %u IPv4 and %u IPv6 networks loads (%u, %u) %s", BIG_N, BIG_N, t.n4,
		t.n6, rc == 0 ? "" : err);
	for (unsigned i = 0; rc == 0 && i < BIG_N; i++) {
		uint32_t first = 0x0a000000u + 64 * i;
		uint32_t last = first | (uint32_t)((1ull << (32 - p4[i % 6])) - 1);

		wrong += !edge_trusted4_host(&t, first) + !edge_trusted4_host(&t, last) +
			 edge_trusted4_host(&t, first - 1) + edge_trusted4_host(&t, last + 1);

		uint64_t hi = BIG_HI6 + 2 * (uint64_t)i, bits = 128 - p6[i % 5];
		uint64_t lo_last = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;

		ip6_bytes(hi, 0, a6);
		wrong += !edge_trusted6(&t, a6);
		ip6_bytes(hi, lo_last, a6);
		wrong += !edge_trusted6(&t, a6);
		ip6_bytes(hi - 1, UINT64_MAX, a6);
		wrong += edge_trusted6(&t, a6);
		if (bits == 64)
			ip6_bytes(hi + 1, 0, a6);
		else
			ip6_bytes(hi, lo_last + 1, a6);
		wrong += edge_trusted6(&t, a6);
	}
	tap_ok(rc == 0 && wrong == 0,
		"every network's first and last address in, the ones just outside out (%u wrong "
		"of %u)",
		wrong, 8 * BIG_N);
	edge_trust_free(&t);

	/* The text's networks and the file's merge: 10.0.0.0/8 holds all of the file's IPv4. */
	rc = edge_trust_load("10.0.0.0/8, 2001:db8::/32", path, &t, err, sizeof(err));
	tap_ok(rc == 0 && t.n4 == 1 && t.n6 == 1 && edge_trusted4_host(&t, 0x0affffff) &&
			!edge_trusted4_host(&t, 0x0b000000),
		"the list and the file merge into one set (%u, %u)", t.n4, t.n6);
	edge_trust_free(&t);
	unlink(path);
	free(text);
}

/* A bad line names the file and its line; the bound of EDGE_TRUSTED_MAX a family holds. */
static void
test_file_errors(void)
{
	static const struct {
		const char *text;
		const char *msg; /* after "path:" */
	} bad[] = {
		{"198.18.0.0/24\n# fine\n198.18.1.1/24\n", ":3: \"198.18.1.1/24\" has host bits "
							   "set: the network is 198.18.1.0/24"},
		{"198.18.0.0/24 198.18.1.0/24\n", ":1: one network a line"},
		{"198.18.0.0/24, 198.18.1.0/24\n", ":1: one network a line"},
		{"\n\n2001:db8::/129 # no\n", ":3: \"2001:db8::/129\": the prefix length must be "
					      "0..128"},
		{"example.com\n", ":1: \"example.com\" is not an IPv4 or IPv6"},
	};
	char path[512], err[512], want[1024];
	struct edge_trust t;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		file_with(path, sizeof(path), bad[i].text);
		memset(&t, 0x5a, sizeof(t));
		err[0] = '\0';
		int rc = edge_trust_load("198.18.9.9", path, &t, err, sizeof(err));

		snprintf(want, sizeof(want), "%s%s", path, bad[i].msg);
		tap_ok(rc == -EINVAL && strstr(err, want) == err && t.n4 == 0x5a5a5a5au,
			"a bad line is refused with file:line: %s", err);
		unlink(path);
	}
	tap_ok(edge_trust_load("", "/nonexistent/trusted.txt", NULL, err, sizeof(err)) == -ENOENT &&
			strstr(err, "/nonexistent/trusted.txt: cannot open") == err,
		"a missing file: %s", err);
	tap_ok(edge_trust_load("", "/", NULL, err, sizeof(err)) == -EINVAL &&
			strstr(err, "not a regular file") != NULL,
		"a directory: %s", err);

	/* EDGE_TRUSTED_MAX IPv4 networks (none merges) are taken; one more, from the text, not. */
	size_t cap = (size_t)EDGE_TRUSTED_MAX * 20, len = 0;
	char *text = malloc(cap);

	for (uint32_t i = 0; i < EDGE_TRUSTED_MAX; i++) {
		uint32_t a = 0x0a000000u + 2 * i;

		len += (size_t)snprintf(text + len, cap - len, "%u.%u.%u.%u\n", a >> 24,
			(a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
	}
	file_with(path, sizeof(path), text);
	int rc = edge_trust_load("2001:db8::1", path, &t, err, sizeof(err));

	tap_ok(rc == 0 && t.n4 == EDGE_TRUSTED_MAX && t.n6 == 1,
		"%u IPv4 networks, the bound, are taken (%u)", EDGE_TRUSTED_MAX, t.n4);
	edge_trust_free(&t);
	rc = edge_trust_load("198.18.0.1", path, &t, err, sizeof(err));
	snprintf(want, sizeof(want), "%s:%u: more than %u IPv4 networks", path, EDGE_TRUSTED_MAX,
		EDGE_TRUSTED_MAX);
	tap_ok(rc == -EINVAL && strstr(err, want) == err, "one more with the list's is refused: %s",
		err);
	unlink(path);
	free(text);
}

int
main(void)
{
	test_parse_errors();
	test_merge_and_lookup();
	test_random();
	test_file_big();
	test_file_errors();
	return tap_done();
}
