/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tools' option tables (tools/common/opt_table.h): each kind of value into its field, the
 * messages of a bad value, an unknown option, a missing value and a stray argument, and the
 * help's layout.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/tap.h"
#include "tools/common/opt_table.h"

struct dst {
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	double d;
	uint32_t ip;
	bool flag;
	const char *s;
	uint8_t key[4];
	size_t key_len;
	int odd;
};

/* Takes odd numbers; an even one gets a message of its own. */
static int
set_odd(const struct opt_table_entry *e __attribute__((unused)), const char *v, void *dst,
	char *err, size_t errlen)
{
	int n = atoi(v);

	if (n % 2 == 0) {
		if (n == 2)
			snprintf(err, errlen, "--odd %d is even", n);
		return -22;
	}
	((struct dst *)dst)->odd = n;
	return 0;
}

#define D struct dst

static const struct opt_table_entry opts[] = {
	{.name = "u8",
		OPT_TABLE_UINT_OF(D, u8, 1, 200),
		.arg = "N",
		.bad = "--u8: 1..200",
		.help = "a byte"},
	{.name = "u16",
		OPT_TABLE_UINT_OF(D, u16, 0, 65535),
		.arg = "N",
		.bad = "--u16: a port",
		.help = "two bytes,\nsaid on two lines"},
	{.name = "u32",
		.short_name = 'n',
		OPT_TABLE_UINT_OF(D, u32, 0, UINT32_MAX),
		.arg = "N",
		.bad = "-n: 32 bits",
		.help = "four bytes"},
	{.name = "u64",
		OPT_TABLE_UINT_OF(D, u64, 0, UINT64_MAX),
		.arg = "N",
		.bad = "--u64: a number",
		.help = "eight bytes"},
	{.kind = OPT_TABLE_TEXT, .help = "more:"},
	{.name = "double",
		OPT_TABLE_DOUBLE_OF(D, d, 0.5, 2),
		.arg = "X",
		.bad = "--double: 0.5..2",
		.help = "a number"},
	{.name = "ip",
		OPT_TABLE_FIELD_OF(OPT_TABLE_IPV4, D, ip),
		.arg = "A.B.C.D",
		.bad = "--ip: an address",
		.help = "an address"},
	{.name = "flag", OPT_TABLE_FIELD_OF(OPT_TABLE_FLAG, D, flag), .help = "a flag"},
	{.name = "string",
		OPT_TABLE_FIELD_OF(OPT_TABLE_STRING, D, s),
		.arg = "S",
		.help = "a string"},
	{.name = "key-hex",
		OPT_TABLE_HEX_OF(OPT_TABLE_HEX, D, key, key_len, 2),
		.arg = "HEXHEXHEXHEX",
		.bad = "--key-hex: 2 to 4 bytes",
		.help = "a key"},
	{.name = "odd",
		.kind = OPT_TABLE_FN,
		.fn = set_odd,
		.arg = "N",
		.bad = "--odd '%s' is not odd",
		.help = "an odd number"},
	{.name = "exactly-16",
		OPT_TABLE_UINT_OF(D, u8, 0, 1),
		.arg = "N",
		.bad = "0 or 1",
		.help = "reaches the column"},
	{.name = "help", .short_name = 'h', .kind = OPT_TABLE_HELP, .help = "this text"},
};

static const struct opt_table quiet = {
	.opts = opts,
	.n = sizeof(opts) / sizeof(opts[0]),
	.help_col = 16,
};

static const struct opt_table prefixed = {
	.opts = opts,
	.n = sizeof(opts) / sizeof(opts[0]),
	.help_col = 16,
	.bad_prefix = "bad value '%s' for ",
	.stray_hint = "options go after --",
};

static const struct {
	const struct opt_table *t;
	const char *argv[8];
	int want;
	const char *msg;
} cases[] = {
	{&quiet, {"--u8", "200", "--u16", "65535", "-n", "4294967295", "--u64", "7"}, 0, ""},
	{&quiet, {"--u8", "201"}, -1, "--u8: 1..200"},
	{&prefixed, {"--u8", "0"}, -1, "bad value '0' for --u8: 1..200"},
	{&prefixed, {"--u16", "65536"}, -1, "bad value '65536' for --u16: a port"},
	{&prefixed, {"-n", "4294967296"}, -1, "bad value '4294967296' for -n: 32 bits"},
	{&quiet, {"-n42"}, 0, ""},
	{&quiet, {"--double", "2.5"}, -1, "--double: 0.5..2"},
	{&quiet, {"--ip", "1.2.3.256"}, -1, "--ip: an address"},
	{&quiet, {"--key-hex", "00"}, -1, "--key-hex: 2 to 4 bytes"},
	{&quiet, {"--key-hex", "0011223344"}, -1, "--key-hex: 2 to 4 bytes"},
	{&quiet, {"--odd", "4"}, -1, "--odd '4' is not odd"},
	{&prefixed, {"--odd", "4"}, -1, "bad value '4' for --odd '4' is not odd"},
	{&prefixed, {"--odd", "2"}, -1, "--odd 2 is even"},
	{&quiet, {"--bogus"}, -1, "unknown option '--bogus'"},
	{&quiet, {"-x"}, -1, "unknown option '-x'"},
	{&quiet, {"--u8"}, -1, "--u8 needs a value"},
	{&quiet, {"-n"}, -1, "-n needs a value"},
	{&quiet, {"--flag", "stray"}, -1, "unexpected argument 'stray'"},
	{&prefixed, {"stray"}, -1, "unexpected argument 'stray' (options go after --)"},
	{&quiet, {"--u8", "7", "-h", "--u8", "0"}, 1, ""},
	{&quiet, {"--u8", "0", "--help"}, -1, "--u8: 1..200"},
};

static void
test_parse(void)
{
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[10] = {"tool"};
		struct dst d = {0};
		char err[128];
		int argc = 1;

		for (unsigned k = 0; k < 8 && cases[i].argv[k] != NULL; k++)
			argv[argc++] = (char *)(uintptr_t)cases[i].argv[k];
		int rc = opt_table_parse(cases[i].t, argc, argv, &d, err, sizeof(err));

		tap_ok(rc == cases[i].want && strcmp(err, cases[i].msg) == 0,
			"parse %u (%s ...): result %d, message '%s'", i, argv[1], rc, err);
	}

	/* Every kind lands in its field, of its width, and nothing beside it moves (--u16 after
	 * the fields that follow it). */
	char *argv[] = {"tool", "--u8", "200", "-n", "4294967295", "--u64", "18446744073709551615",
		"--u16", "65535", "--double", "1.5", "--ip", "10.1.2.3", "--flag", "--string", "s",
		"--key-hex", "a1b2c3", "--odd", "7"};
	struct dst d = {0};
	char err[128];

	for (int round = 0; round < 2; round++) /* a second parse starts over */
		tap_ok(opt_table_parse(&quiet, (int)(sizeof(argv) / sizeof(argv[0])), argv, &d, err,
			       sizeof(err)) == 0 &&
				d.u8 == 200 && d.u16 == 65535 && d.u32 == UINT32_MAX &&
				d.u64 == UINT64_MAX && d.d == 1.5 && d.ip == 0x0a010203 && d.flag &&
				strcmp(d.s, "s") == 0 && d.key_len == 3 && d.key[0] == 0xa1 &&
				d.key[2] == 0xc3 && d.odd == 7,
			"parse %d: each kind into its field (%s)", round, err);
}

static void
test_usage(void)
{
	static const char want[] = "  --u8 N        a byte\n"
				   "  --u16 N       two bytes,\n"
				   "                said on two lines\n"
				   "  -n, --u32 N   four bytes\n"
				   "  --u64 N       eight bytes\n"
				   "more:\n"
				   "  --double X    a number\n"
				   "  --ip A.B.C.D  an address\n"
				   "  --flag        a flag\n"
				   "  --string S    a string\n"
				   "  --key-hex HEXHEXHEXHEX  a key\n"
				   "  --odd N       an odd number\n"
				   "  --exactly-16 N  reaches the column\n"
				   "  -h, --help    this text\n";
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	opt_table_usage(&quiet, f);
	fclose(f);
	tap_ok(strcmp(text, want) == 0, "usage: one line per option, help at column 16:\n%s", text);
	free(text);
}

int
main(void)
{
	test_parse();
	test_usage();
	return tap_done();
}
