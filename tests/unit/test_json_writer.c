/* SPDX-License-Identifier: BSD-3-Clause */
/* common/json_writer: the exact text written, escapes, nesting, numbers and overflow. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "common/json_writer.h"
#include "tests/tap.h"

static void
check_text(const char *got, int len, const char *want, const char *name)
{
	size_t shown = strcspn(got, "\n");

	tap_ok(len == (int)strlen(want) && strcmp(got, want) == 0, "%s: %.*s", name, (int)shown,
		got);
}

static void
test_nesting(void)
{
	char buf[256];
	struct json_writer j;

	jw_init(&j, buf, sizeof(buf));
	jw_open(&j, NULL, '{');
	jw_str(&j, "name", "sale");
	jw_open(&j, "list", '[');
	jw_u64(&j, NULL, 1);
	jw_i64(&j, NULL, -2);
	jw_open(&j, NULL, '{');
	jw_bool(&j, "x", true);
	jw_bool(&j, "y", false);
	jw_close(&j, '}');
	jw_close(&j, ']');
	jw_open(&j, "empty", '{');
	jw_close(&j, '}');
	jw_close(&j, '}');
	check_text(buf, jw_end(&j),
		"{\"name\":\"sale\",\"list\":[1,-2,{\"x\":true,\"y\":false}],\"empty\":{}}\n",
		"objects and arrays nest with commas only between values");
}

static void
test_escapes(void)
{
	char buf[128];
	struct json_writer j;

	jw_init(&j, buf, sizeof(buf));
	jw_open(&j, NULL, '[');
	jw_str(&j, NULL, "a\"b\\c\n\x01\x7f\xe7\xa7\x92");
	jw_close(&j, ']');
	check_text(buf, jw_end(&j), "[\"a\\\"b\\\\c\\u000a\\u0001\\u007f\xe7\xa7\x92\"]\n",
		"quotes, backslashes and control characters escaped; UTF-8 kept");
}

/* A string that is not UTF-8 (an operator's word quoted back, cut at 48 bytes) still makes a
 * UTF-8 text: each byte outside a valid sequence becomes \ufffd, valid sequences stay. */
static void
test_not_utf8(void)
{
	static const struct {
		const char *in, *want, *what;
	} t[] = {
		{"\xff", "\\ufffd", "a byte that starts nothing"},
		{"a\xc3", "a\\ufffd", "a sequence cut at the end"},
		{"\xe4\xb8x", "\\ufffd\\ufffdx", "a sequence cut before an ASCII byte"},
		{"\xc0\xaf", "\\ufffd\\ufffd", "an overlong form"},
		{"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd", "a surrogate"},
		{"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd", "past U+10FFFF"},
		{"\xf0\x9f\x98\x80\xe4\xb8\xad\xc3\xa9", "\xf0\x9f\x98\x80\xe4\xb8\xad\xc3\xa9",
			"4-, 3- and 2-byte sequences kept"},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char buf[64], want[64];
		struct json_writer j;

		jw_init(&j, buf, sizeof(buf));
		jw_str(&j, NULL, t[i].in);
		snprintf(want, sizeof(want), "\"%s\"\n", t[i].want);
		check_text(buf, jw_end(&j), want, t[i].what);
	}
}

static void
test_numbers(void)
{
	char buf[128];
	struct json_writer j;

	jw_init(&j, buf, sizeof(buf));
	jw_open(&j, NULL, '{');
	jw_u64(&j, "max", UINT64_MAX);
	jw_i64(&j, "min", INT64_MIN);
	jw_double(&j, "r", 1.23456, 2);
	jw_double(&j, "nan", NAN, 2);
	jw_time(&j, "t", 1796119200000ULL);
	jw_close(&j, '}');
	check_text(buf, jw_end(&j),
		"{\"max\":18446744073709551615,\"min\":-9223372036854775808,\"r\":1.23,"
		"\"nan\":null,\"t\":\"2026-12-01T10:00:00Z\"}\n",
		"64-bit limits, fractions, NaN as null, times in RFC 3339");
}

static void
test_overflow(void)
{
	char buf[16];
	struct json_writer j;

	jw_init(&j, buf, sizeof(buf));
	jw_open(&j, NULL, '{');
	jw_str(&j, "key", "a value too long for the buffer");
	jw_close(&j, '}');
	tap_eq_int(jw_end(&j), -ENOSPC, "a text that does not fit ends in -ENOSPC");
	tap_ok(strlen(buf) < sizeof(buf), "nothing is written past the buffer");

	/* Exactly full: 13 bytes of text, the newline and the NUL in 15. */
	jw_init(&j, buf, 15);
	jw_open(&j, NULL, '{');
	jw_str(&j, "ab", "cdef");
	jw_close(&j, '}');
	check_text(buf, jw_end(&j), "{\"ab\":\"cdef\"}\n", "a text that just fits is whole");

	/* A buffer too small for even the newline: nothing written past it. */
	buf[1] = 'x';
	jw_init(&j, buf, 1);
	tap_eq_int(jw_end(&j), -ENOSPC, "an empty text in a 1-byte buffer is -ENOSPC");
	tap_ok(buf[0] == '\0' && buf[1] == 'x', "and nothing is written past its byte");
}

int
main(void)
{
	test_nesting();
	test_escapes();
	test_not_utf8();
	test_numbers();
	test_overflow();
	return tap_done();
}
