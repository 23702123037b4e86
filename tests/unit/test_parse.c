/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common/parse: every value parser against a table of its edge cases (overflow, signs, spaces,
 * empty text, 0x, out of range, dates that do not exist, prefixes past 32, host bits), each
 * input placed just before a PROT_NONE guard page so that an over-read crashes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"
#include "tests/guard.h"
#include "tests/tap.h"

/* The text s (with its NUL) just before a guard page; freed by the next call. */
static const char *
guarded(const char *s)
{
	static struct guard_buf g;

	if (g.map != NULL)
		guard_free(&g);
	g = (struct guard_buf){0};
	return guard_place(&g, s, strlen(s) + 1);
}

/* ---------------------------------------------------------------------------------------- */
/* Decimal numbers                                                                           */

static const struct {
	const char *text;
	uint64_t min, max;
	int rc;
	uint64_t v;
} u64_cases[] = {
	{"0", 0, 10, 0, 0},
	{"42", 1, 100, 0, 42},
	{"007", 0, 10, 0, 7},
	{"100", 1, 100, 0, 100},
	{"101", 1, 100, -ERANGE, 0},
	{"0", 1, 100, -ERANGE, 0},
	{"18446744073709551615", 0, UINT64_MAX, 0, UINT64_MAX},
	{"18446744073709551616", 0, UINT64_MAX, -ERANGE, 0},
	{"99999999999999999999999", 0, UINT64_MAX, -ERANGE, 0},
	{"99999999999999999999999x", 0, UINT64_MAX, -EINVAL, 0},
	{"", 0, 100, -EINVAL, 0},
	{"+1", 0, 100, -EINVAL, 0},
	{"-1", 0, 100, -EINVAL, 0},
	{"-0", 0, 100, -EINVAL, 0},
	{" 1", 0, 100, -EINVAL, 0},
	{"1 ", 0, 100, -EINVAL, 0},
	{"0x10", 0, 100, -EINVAL, 0},
	{"1e3", 0, 10000, -EINVAL, 0},
	{"1.0", 0, 100, -EINVAL, 0},
};

static void
test_u64(void)
{
	const char *end;
	uint64_t v;

	for (size_t i = 0; i < sizeof(u64_cases) / sizeof(u64_cases[0]); i++) {
		int rc;

		v = 12345;
		rc = parse_u64(guarded(u64_cases[i].text), u64_cases[i].min, u64_cases[i].max, &v);
		tap_ok(rc == u64_cases[i].rc && v == (rc == 0 ? u64_cases[i].v : 12345),
			"u64 \"%s\" in %llu..%llu: rc %d (want %d), value %s", u64_cases[i].text,
			(unsigned long long)u64_cases[i].min, (unsigned long long)u64_cases[i].max,
			rc, u64_cases[i].rc, rc == 0 ? "as written" : "untouched");
	}
	tap_ok(parse_u64_prefix("8080, 80", &end, &v) == 0 && v == 8080 && strcmp(end, ", 80") == 0,
		"u64 prefix: the digits, and end after them");
	tap_ok(parse_u64_prefix("x1", &end, &v) == -EINVAL, "u64 prefix: no digit is -EINVAL");
	end = NULL;
	tap_ok(parse_u64_prefix("99999999999999999999,1", &end, &v) == -ERANGE && end != NULL &&
			*end == ',',
		"u64 prefix: an overflow is -ERANGE, with end after its digits for the message");

	/* The load generator's option checks (were lg_parse_u64 and lg_parse_double). */
	uint64_t u = 0;
	double d = 0;

	tap_eq_int(parse_u64("42", 1, 100, &u), 0, "u64: 42 in 1..100");
	tap_eq_int((long long)u, 42, "u64: the value");
	tap_eq_int(parse_u64("101", 1, 100, &u), -ERANGE, "u64: over the bound");
	tap_eq_int(parse_u64("-1", 0, 100, &u), -EINVAL, "u64: a sign");
	tap_eq_int(parse_u64("1 ", 0, 100, &u), -EINVAL, "u64: trailing space");
	tap_eq_int(parse_double("0.25", 0, 1, &d), 0, "double: 0.25 in 0..1");
	tap_ok(d == 0.25, "double: the value");
	tap_eq_int(parse_double("nan", 0, 1, &d), -EINVAL, "double: nan");
	tap_eq_int(parse_double("1e9", 0, 1, &d), -EINVAL, "double: over the bound");
	tap_ok(parse_double("", 0, 1, &d) == -EINVAL && parse_double("0.5x", 0, 1, &d) == -EINVAL &&
			parse_double("inf", 0, INFINITY, &d) == -EINVAL,
		"double: empty, trailing text and infinity are refused");
	static const char *const bad_double[] = {
		"+0.5", "-0.5", " 0.5", "0.5 ", ".5", "0x1p-1", "nan", "inf", "1e", "0,5"};

	for (size_t i = 0; i < sizeof(bad_double) / sizeof(bad_double[0]); i++) {
		d = 7;
		tap_ok(parse_double(guarded(bad_double[i]), -1, 1, &d) == -EINVAL && d == 7,
			"double \"%s\" is refused", bad_double[i]);
	}
	tap_ok(parse_double(guarded("1e-3"), 0, 1, &d) == 0 && d == 0.001 &&
			parse_double(guarded("5"), 0, 10, &d) == 0 && d == 5,
		"double: an exponent and a whole number parse");

	static const struct {
		uint64_t v;
		unsigned digits;
	} dd[] = {{0, 1}, {9, 1}, {10, 2}, {99, 2}, {100, 3}, {4294967295u, 10},
		{9999999999999999999ull, 19}, {10000000000000000000ull, 20}, {UINT64_MAX, 20}};
	int bad = 0;

	for (size_t i = 0; i < sizeof(dd) / sizeof(dd[0]); i++)
		bad += parse_dec_digits(dd[i].v) != dd[i].digits;
	for (uint64_t p = 10; p <= 1000000000000000000ull; p *= 10)
		bad += parse_dec_digits(p - 1) + 1 != parse_dec_digits(p);
	tap_eq_int(bad, 0, "decimal digits: 0, the powers of ten and their neighbours, 2^64 - 1");
}

/* ---------------------------------------------------------------------------------------- */
/* Times and durations                                                                       */

struct time_case {
	const char *text;
	int rc;
	uint64_t ms;
};

static const struct time_case time_cases[] = {
	{"2026-12-01T18:00:00+08:00", 0, 1796119200000ull},
	{"2026-12-01t10:00:00z", 0, 1796119200000ull},
	{"2026-12-01T10:00:00.1234Z", 0, 1796119200123ull},
	{"2026-02-29T00:00:00Z", -EINVAL, 0},
	{"2100-02-29T00:00:00Z", -EINVAL, 0},
	{"2026-04-31T00:00:00Z", -EINVAL, 0},
	{"2026-13-01T00:00:00Z", -EINVAL, 0},
	{"2026-00-01T00:00:00Z", -EINVAL, 0},
	{"2026-12-00T00:00:00Z", -EINVAL, 0},
	{"2026-12-01T10:00:00", -EINVAL, 0},
	{"1969-12-31T23:59:59Z", -EINVAL, 0},
	{"1970-01-01T00:00:00+00:01", -EINVAL, 0},
	{"+1796119200", -EINVAL, 0},
	{"-1", -EINVAL, 0},
	{" 1796119200", -EINVAL, 0},
	{"18446744073709551616", -EINVAL, 0},
	{"1970-01-01T00:00:00Z", 0, 0},
	{"2024-02-29T00:00:00Z", 0, 1709164800000ull},
	{"2000-02-29T23:59:59.999+00:00", 0, 951868800000ull - 1},
	{"9999-12-31T23:59:59Z", 0, 253402300799000ull},
	{"253402300799", 0, 253402300799000ull},
	{"253402300800", -EINVAL, 0},
	{"1900-02-29T00:00:00Z", -EINVAL, 0},
	{"2026-12-01T24:00:00Z", -EINVAL, 0},
	{"2026-12-01T10:60:00Z", -EINVAL, 0},
	{"2026-12-01T10:00:60Z", -EINVAL, 0},
	{"2026-12-01T10:00:00+24:00", -EINVAL, 0},
	{"2026-12-01T10:00:00.Z", -EINVAL, 0},
	{"2026-12-01 10:00:00Z", -EINVAL, 0},
	{"2026-12-01T10:00:00Zjunk", -EINVAL, 0},
	{"", -EINVAL, 0},
};

struct dur_case {
	const char *text;
	int rc;
	uint64_t ms;
};

static const struct dur_case dur_cases[] = {
	{"+5s", -EINVAL, 0},
	{" 5s", -EINVAL, 0},
	{"5s ", -EINVAL, 0},
	{"5S", -EINVAL, 0},
	{"0x10s", -EINVAL, 0},
	{"00", -EINVAL, 0},
	{"0s", 0, 0},
	{"213503982334601d", -EINVAL, 0},
	{"0", 0, 0},
	{"500ms", 0, 500},
	{"30s", 0, 30000},
	{"15m", 0, 900000},
	{"2h", 0, 7200000},
	{"1d", 0, 86400000},
	{"1h30m", 0, 5400000},
	{"1s500ms", 0, 1500},
	{"", -EINVAL, 0},
	{"5", -EINVAL, 0},
	{"s", -EINVAL, 0},
	{"-5s", -EINVAL, 0},
	{"5 s", -EINVAL, 0},
	{"1.5s", -EINVAL, 0},
	{"999999999999999999d", -EINVAL, 0},
};

static void
test_times(void)
{
	char buf[40];
	uint64_t v;
	int bad;

	for (size_t i = 0; i < sizeof(time_cases) / sizeof(time_cases[0]); i++) {
		const struct time_case *t = &time_cases[i];
		int rc = parse_time(guarded(t->text), &v);

		tap_ok(rc == t->rc && (rc != 0 || v == t->ms), "time \"%s\": rc %d (want %d)",
			t->text, rc, t->rc);
	}
	for (size_t i = 0; i < sizeof(dur_cases) / sizeof(dur_cases[0]); i++) {
		const struct dur_case *d = &dur_cases[i];
		int rc = parse_duration(guarded(d->text), &v);

		tap_ok(rc == d->rc && (rc != 0 || v == d->ms), "duration \"%s\": rc %d (want %d)",
			d->text, rc, d->rc);
	}

	/* Formatting and parsing are inverses, every day of four centuries. */
	bad = 0;
	for (uint64_t day = 0; day < 146097; day += 1) {
		uint64_t ms = day * 86400000ull + (day % 86400) * 1000 + day % 1000;

		parse_time_format(ms, buf, sizeof(buf));
		if (parse_time(buf, &v) != 0 || v != ms) {
			if (bad++ < 3)
				tap_diag("%llu -> %s", (unsigned long long)ms, buf);
		}
	}
	tap_eq_int(bad, 0, "time formatting round-trips for 400 years of days");

	static const struct {
		uint64_t ms;
		const char *text;
	} df[] = {{0, "0"}, {1500, "1500ms"}, {64000, "64s"}, {900000, "15m"}, {7200000, "2h"},
		{86400000, "1d"}, {90000000, "25h"}};

	bad = 0;
	for (size_t i = 0; i < sizeof(df) / sizeof(df[0]); i++) {
		parse_duration_format(df[i].ms, buf, sizeof(buf));
		if (strcmp(buf, df[i].text) != 0 || parse_duration(buf, &v) != 0 || v != df[i].ms) {
			tap_diag("%llu ms -> %s", (unsigned long long)df[i].ms, buf);
			bad++;
		}
	}
	tap_eq_int(bad, 0, "durations are written with the largest unit that divides them");
}

/* ---------------------------------------------------------------------------------------- */
/* Addresses                                                                                 */

static void
test_addresses(void)
{
	static const char *const bad_ip[] = {"1.2.3.4.5", "1.2.3.", "1..3.4", "1.2.3.1000",
		" 1.2.3.4", "1.2.3.4 ", "01.2.3.4", "1.2.3.256", "", "-1.2.3.4", "+1.2.3.4",
		"0x1.2.3.4", "1.2.3", "1.2.3.4/32"};
	static const struct {
		const char *text;
		int rc;
		uint32_t addr;
		unsigned prefix;
	} cidr[] = {
		{"198.18.0.0/24", 0, 0xc6120000u, 24},
		{"198.18.0.7", 0, 0xc6120007u, 32},
		{"198.18.0.7/32", 0, 0xc6120007u, 32},
		{"0.0.0.0/0", 0, 0, 0},
		{"198.18.0.1/24", -EDOM, 0xc6120000u, 24},
		{"255.255.255.255/1", -EDOM, 0x80000000u, 1},
		{"1.2.3.4/33", -ERANGE, 0, 0},
		{"1.2.3.4/", -ERANGE, 0, 0},
		{"1.2.3.4/+8", -ERANGE, 0, 0},
		{"1.2.3.4/-8", -ERANGE, 0, 0},
		{"1.2.3.4/ 8", -ERANGE, 0, 0},
		{"1.2.3.4/8x", -ERANGE, 0, 0},
		{"1.2.3/8", -EINVAL, 0, 0},
		{"1.2.3.4x/8", -EINVAL, 0, 0},
		{"/8", -EINVAL, 0, 0},
		{"", -EINVAL, 0, 0},
	};
	uint32_t a = 7;
	unsigned prefix;

	tap_ok(parse_ipv4("0.0.0.0", &a) == 0 && a == 0 && parse_ipv4("255.255.255.255", &a) == 0 &&
			a == 0xffffffffu,
		"IPv4: the extremes parse");
	tap_ok(parse_ipv4(guarded("198.18.0.2"), &a) == 0 && a == 0xc6120002u,
		"IPv4: in host byte order");
	for (size_t i = 0; i < sizeof(bad_ip) / sizeof(bad_ip[0]); i++) {
		a = 7;
		tap_ok(parse_ipv4(guarded(bad_ip[i]), &a) == -EINVAL && a == 7,
			"IPv4 \"%s\" is refused", bad_ip[i]);
	}
	for (size_t i = 0; i < sizeof(cidr) / sizeof(cidr[0]); i++) {
		int rc;

		a = 7;
		prefix = 99;
		rc = parse_cidr(guarded(cidr[i].text), &a, &prefix);
		tap_ok(rc == cidr[i].rc &&
				(rc == -EINVAL || rc == -ERANGE
						? a == 7 && prefix == 99
						: a == cidr[i].addr && prefix == cidr[i].prefix),
			"CIDR \"%s\": rc %d (want %d)", cidr[i].text, rc, cidr[i].rc);
	}
	tap_ok(parse_prefix_mask(0) == 0 && parse_prefix_mask(24) == 0xffffff00u &&
			parse_prefix_mask(32) == 0xffffffffu,
		"prefix masks of /0, /24 and /32");
}

/* IPv6 (RFC 4291 §2.2) from bounded text, and IPv6 networks. */
static void
test_ipv6(void)
{
	static const struct {
		const char *text;
		int rc;
		const char *hex; /* the 16 bytes */
	} v6[] = {
		{"::", 0, "00000000000000000000000000000000"},
		{"::1", 0, "00000000000000000000000000000001"},
		{"2001:db8::7", 0, "20010db8000000000000000000000007"},
		{"2001:DB8:0:0:1:2:3:4", 0, "20010db8000000000001000200030004"},
		{"1:2:3:4:5:6:7::", 0, "00010002000300040005000600070000"},
		{"::ffff:198.18.0.9", 0, "00000000000000000000ffffc6120009"},
		{"1:2:3:4:5:6:1.2.3.4", 0, "00010002000300040005000601020304"},
		{"fe80::1:2", 0, "fe800000000000000000000000010002"},
		{"1:2:3:4:5:6:7:8", 0, "00010002000300040005000600070008"},
		{"1:2:3:4:5:6:7:8:9", -EINVAL, NULL},
		{"1:2:3:4:5:6:7:8::", -EINVAL, NULL},
		{"1::2::3", -EINVAL, NULL},
		{":1::2", -EINVAL, NULL},
		{"1::2:", -EINVAL, NULL},
		{"1:::2", -EINVAL, NULL},
		{"12345::", -EINVAL, NULL},
		{"1:2:3:4:5:6:7", -EINVAL, NULL},
		{"::g", -EINVAL, NULL},
		{"[::1]", -EINVAL, NULL},
		{"fe80::1%eth0", -EINVAL, NULL},
		{"::1.2.3", -EINVAL, NULL},
		{"1:2:3:4:5:6:7:1.2.3.4", -EINVAL, NULL},
		{"::01.2.3.4", -EINVAL, NULL},
		{"1.2.3.4", -EINVAL, NULL},
		{":", -EINVAL, NULL},
		{"", -EINVAL, NULL},
	};

	for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		uint8_t a[16], want[16];
		size_t n;
		const char *t = guarded(v6[i].text);
		/* Without its NUL: the parser must stop at len. */
		int rc;
		struct guard_buf g = {0};
		const char *bare = guard_place(&g, t, strlen(t));

		memset(a, 0xee, sizeof(a));
		rc = parse_ipv6_n(bare, strlen(t), a);
		if (v6[i].hex != NULL)
			parse_hex(v6[i].hex, want, sizeof(want), &n);
		tap_ok(rc == v6[i].rc && (rc != 0 || memcmp(a, want, 16) == 0) &&
				(rc == 0 || a[0] == 0xee),
			"IPv6 \"%s\": rc %d (want %d)", v6[i].text, rc, v6[i].rc);
		guard_free(&g);
	}

	uint8_t a[16];
	unsigned prefix = 99;
	uint32_t v4 = 7;

	tap_ok(parse_cidr6(guarded("2001:db8::/32"), a, &prefix) == 0 && prefix == 32 &&
			a[0] == 0x20 && a[3] == 0xb8,
		"IPv6 network 2001:db8::/32");
	tap_ok(parse_cidr6(guarded("2001:db8::1"), a, &prefix) == 0 && prefix == 128,
		"an IPv6 address alone is a /128");
	tap_ok(parse_cidr6(guarded("2001:db8::1/64"), a, &prefix) == -EDOM && prefix == 64 &&
			a[15] == 0,
		"IPv6 host bits past the prefix: -EDOM with the network");
	tap_ok(parse_cidr6(guarded("2001:db8::/129"), a, &prefix) == -ERANGE,
		"IPv6 prefix 129 is out of range");
	tap_ok(parse_cidr6(guarded("2001:db8::/"), a, &prefix) == -ERANGE &&
			parse_cidr6(guarded("2001:zb8::/8"), a, &prefix) == -EINVAL,
		"IPv6 network: empty prefix, bad address");
	tap_ok(parse_ipv4_n("198.18.0.9,", 10, &v4) == 0 && v4 == 0xc6120009u &&
			parse_ipv4_n("1.2.3.45", 7, &v4) == 0 && v4 == 0x01020304u &&
			parse_ipv4_n("198.18.0.9", 9, &v4) == -EINVAL &&
			parse_ipv4_n("1.2.3.4", 0, &v4) == -EINVAL,
		"IPv4 from bounded text stops at len");
}

/* ---------------------------------------------------------------------------------------- */
/* Hex and text                                                                              */

static void
test_hex_text(void)
{
	static const struct {
		const char *text;
		size_t cap;
		int rc;
		size_t len; /* bytes; the offset of the bad character; or the digits */
	} hex[] = {
		{"00ff", 4, 0, 2},
		{"ABcd", 2, 0, 2},
		{"", 4, 0, 0},
		{"abc", 4, -ERANGE, 3},
		{"00112233", 3, -ERANGE, 8},
		{"zz", 4, -EINVAL, 0},
		{"0x10", 4, -EINVAL, 1},
		{"a b0", 4, -EINVAL, 1},
		{"+0", 4, -EINVAL, 0},
		{"-0", 4, -EINVAL, 0},
		{"abg", 4, -EINVAL, 2},
	};
	static const struct {
		const char *text;
		long at;
		bool ctl;
	} text[] = {
		{"Big sale", -1, false},
		{"\xe8\x80\xb3\xe6\x9c\xba", -1, false},
		{"\xf0\x9f\x8e\xa7 headphones", -1, false},
		{"", -1, false},
		{"a\x01", 1, true},
		{"a\x7f", 1, true},
		{"ab\tc", 2, true},
		{"\xc2\x80", 0, true},
		{"\xc0\xaf", 0, false},
		{"\xe0\x80\xaf", 0, false},
		{"\xed\xa0\x80", 0, false},
		{"\xf4\x90\x80\x80", 0, false},
		{"ok\xe2\x82", 2, false},
		{"\x80", 0, false},
		{"\xff", 0, false},
	};
	uint8_t out[4];
	size_t len;

	for (size_t i = 0; i < sizeof(hex) / sizeof(hex[0]); i++) {
		int rc;

		memset(out, 0xee, sizeof(out));
		len = 99;
		rc = parse_hex(guarded(hex[i].text), out, hex[i].cap, &len);
		tap_ok(rc == hex[i].rc && len == hex[i].len && (rc == 0 || out[0] == 0xee),
			"hex \"%s\" into %zu bytes: rc %d (want %d), %zu (want %zu)", hex[i].text,
			hex[i].cap, rc, hex[i].rc, len, hex[i].len);
	}
	parse_hex("00ffA5", out, sizeof(out), &len);
	tap_ok(len == 3 && out[0] == 0 && out[1] == 0xff && out[2] == 0xa5, "hex: the bytes");
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		bool ctl = !text[i].ctl;
		long at = parse_text_check(guarded(text[i].text), strlen(text[i].text), &ctl);

		tap_ok(at == text[i].at && (at < 0 || ctl == text[i].ctl),
			"text %zu: bad at %ld (want %ld)%s", i, at, text[i].at,
			at >= 0 ? (ctl ? ", a control character" : ", invalid UTF-8") : "");
	}
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_u64();
	test_times();
	test_addresses();
	test_ipv6();
	test_hex_text();
	return tap_done();
}
