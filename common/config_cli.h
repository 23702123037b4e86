/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_CONFIG_CLI_H
#define FG_COMMON_CONFIG_CLI_H
/*
 * The command line every flashgate daemon shares: -c FILE, -s SECTION.KEY=VALUE (repeatable),
 * --check-config, --help-config, -h/--help, plus options of the program's own, and then the
 * settings loaded with cfg_load_cli(). Each program describes itself in a struct cfg_cli.
 */
#include <stdbool.h>
#include <stdio.h>

#include "common/config.h"

#define CFG_CLI_MAX_SETS  64 /* -s options at most */
#define CFG_CLI_MAX_EXTRA 8  /* options of a program's own at most */

/* A long option of a program's own ("--name" or "--name ARG"). */
struct cfg_cli_extra {
	const char *name;
	bool has_arg;
	/* Called when the option is given, with its argument (NULL without one) and the ctx of
	 * struct cfg_cli. Returns 0 to go on; anything else ends parsing with an error, whose
	 * message the function has printed. */
	int (*fn)(const char *arg, void *ctx);
};

struct cfg_cli {
	const char *prog;		 /* the program's name, for messages */
	const struct cfg_schema *schema; /* its settings */
	void *target;			 /* where they are loaded */
	void (*usage)(FILE *out);	 /* -h, --help; and, to stderr, after an unknown option */
	/* --help-config; NULL: cfg_print_doc() of the schema. */
	void (*print_doc)(FILE *out);
	/* --check-config, once the settings loaded; NULL: a header line and cfg_write(). */
	void (*print_checked)(FILE *out, const void *target);
	/* Said after an unexpected argument, e.g. "EAL options go before \"--\""; NULL: none. */
	const char *stray_hint;
	const struct cfg_cli_extra *extra; /* n_extra options of the program's own */
	unsigned n_extra;
	void *ctx; /* handed to the extra options' functions */
};

/*
 * Parses argv[1..argc) (for a DPDK program: what follows "--", argv[0] being any name) as
 * described above and loads the settings into cli->target. Returns 0 when the program
 * should run; 1 when it should exit successfully (-h, --help-config, or --check-config with
 * settings that loaded, printed to stdout); -1 on an error, after one message to stderr (an
 * unknown option, a stray argument, too many -s, an extra option's refusal, or the settings'
 * own error, which names the file and line or the -s that was wrong). Uses getopt_long()
 * from the start of argv, so it may be called more than once.
 */
int cfg_cli_parse(const struct cfg_cli *cli, int argc, char **argv);

#endif
