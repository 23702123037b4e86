/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TOOLS_OPT_TABLE_H
#define FG_TOOLS_OPT_TABLE_H
/*
 * A tool's command line from one table: each option's long name, short letter, kind of value,
 * where the value goes, its range, what a bad value is told, and its --help lines. The table
 * drives getopt_long() and prints the help, so that an option cannot be parsed without being
 * documented (flashgate-loadgen, flashgate-pcapgen). The daemons have common/config_cli.h.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OPT_TABLE_MAX 64 /* entries of a table at most */

enum opt_table_kind {
	OPT_TABLE_TEXT, /* no option: a line of the help as it is (a heading) */
	OPT_TABLE_HELP, /* no value: opt_table_parse() returns 1 (-h, --help) */
	OPT_TABLE_FLAG, /* no value: sets the bool at off */
	OPT_TABLE_UINT, /* an integer in min..max into the unsigned integer of size bytes at off */
	OPT_TABLE_DOUBLE,      /* a number in dmin..dmax into the double at off */
	OPT_TABLE_IPV4,	       /* A.B.C.D into the uint32_t at off, host order */
	OPT_TABLE_STRING,      /* the value itself into the const char * at off */
	OPT_TABLE_HEX,	       /* hex digits into the byte array of size bytes at off, min bytes at
				* least; their number of bytes into the size_t at len_off */
	OPT_TABLE_SECRET_FILE, /* the same from a file of mode 0600, or - for standard input
				* (common/secret_input.h, which says what was wrong) */
	OPT_TABLE_FN,	       /* the value handed to fn */
};

struct opt_table_entry;

/*
 * An OPT_TABLE_FN option's setter: takes value (the option's argument) into dst, the struct the
 * table fills. Returns 0, or a negative errno when the value is refused: then the message is
 * err (errlen bytes) when the setter wrote one there, else the entry's bad text.
 */
typedef int (*opt_table_fn)(
	const struct opt_table_entry *e, const char *value, void *dst, char *err, size_t errlen);

struct opt_table_entry {
	const char *name; /* long name without "--"; NULL: none (OPT_TABLE_TEXT) */
	char short_name;  /* a one-letter name as well ('h'), 0: none */
	enum opt_table_kind kind;
	size_t off, size;  /* where the value goes in the struct filled, and its size */
	size_t len_off;	   /* OPT_TABLE_HEX, OPT_TABLE_SECRET_FILE: where its length goes */
	uint64_t min, max; /* OPT_TABLE_UINT's range */
	double dmin, dmax; /* OPT_TABLE_DOUBLE's range */
	opt_table_fn fn;   /* OPT_TABLE_FN's setter */
	const char *bad;   /* a bad value's message; "%s" in it, once at most, is the value */
	const char *arg;   /* the value's name in the help ("N"); NULL: no value */
	const char *help;  /* the help, lines apart by '\n'; OPT_TABLE_TEXT's line */
};

struct opt_table {
	const struct opt_table_entry *opts;
	unsigned n;
	unsigned help_col; /* the help's column; an option's name reaching it is followed by two
			    * spaces instead */
	/* Put before every bad value's message ("bad value '%s' for ", "%s" the value); NULL:
	 * the entry's bad text alone. */
	const char *bad_prefix;
	/* true: an unknown option or a missing value is told by getopt_long() on stderr and
	 * opt_table_parse() leaves err empty; false: it writes "unknown option '--x'" or
	 * "--x needs a value" into err and getopt_long() says nothing. */
	bool getopt_says;
	/* Said after an argument that is no option: "unexpected argument 'X' (HINT)"; NULL: no
	 * hint. */
	const char *stray_hint;
};

/* An entry filling the field F of struct S: a number in MIN..MAX. */
#define OPT_TABLE_UINT_OF(S, F, MIN, MAX)                                                         \
	.kind = OPT_TABLE_UINT, .off = offsetof(S, F), .size = sizeof(((S *)0)->F), .min = (MIN), \
	.max = (MAX)
#define OPT_TABLE_DOUBLE_OF(S, F, MIN, MAX)                                                     \
	.kind = OPT_TABLE_DOUBLE, .off = offsetof(S, F), .size = sizeof(double), .dmin = (MIN), \
	.dmax = (MAX)
/* An entry filling the byte array F of struct S, of MIN bytes at least, its length into L. */
#define OPT_TABLE_HEX_OF(KIND, S, F, L, MIN)                                \
	.kind = (KIND), .off = offsetof(S, F), .size = sizeof(((S *)0)->F), \
	.len_off = offsetof(S, L), .min = (MIN)
/* An entry filling the field F of struct S (a flag, an address, a string). */
#define OPT_TABLE_FIELD_OF(KIND, S, F) \
	.kind = (KIND), .off = offsetof(S, F), .size = sizeof(((S *)0)->F)

/*
 * Parses argv[1..argc) by t into dst from the start of argv (it may be called again), the
 * options in the order given, the first wrong one ending it. Returns 0; 1 at an OPT_TABLE_HELP
 * option (nothing after it is read); -1 when an option is unknown, misses its value, or its
 * value is refused (the message in err, errlen bytes; empty when getopt_long() told it), or
 * an argument that is no option is left (err: "unexpected argument 'X'" and the hint). -1 also when
 * t has more than OPT_TABLE_MAX entries (a program bug, said in err).
 */
int opt_table_parse(
	const struct opt_table *t, int argc, char **argv, void *dst, char *err, size_t errlen);

/*
 * Writes a message (printf's fmt and what follows) to err, errlen bytes, for a check of the
 * command line beyond one option's value. Returns -EINVAL, to be returned in turn.
 */
int opt_table_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes t's options with their help to f, one line each and the help's own lines below. */
void opt_table_usage(const struct opt_table *t, FILE *f);

#endif
