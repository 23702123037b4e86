/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TOOLS_LG_CLI_H
#define FG_TOOLS_LG_CLI_H
/* The command line of flashgate-loadgen (docs/loadgen.md), read from one option table. */
#include <stddef.h>
#include <stdio.h>

#include "tools/loadgen/lg_state.h"

/*
 * Fills o from argv[1..argc) (what follows the EAL options' "--"). Returns 0; 1 after -h or
 * --help (nothing after it read; print lg_cli_usage() to stdout); -1 when the command line is
 * wrong: err (errlen bytes) then says what was wrong and what to give instead, one line, or is
 * empty when getopt_long() has said it on stderr (an unknown option, a missing value: print
 * lg_cli_usage() to stderr). Keys given are in o's keyrings: tok_keyring_wipe() them after use.
 */
int lg_cli_parse(int argc, char **argv, struct lg_opts *o, char *err, size_t errlen);

/* Writes the usage text to f. */
void lg_cli_usage(FILE *f);

/* The name of mode m, as --mode takes it. */
const char *lg_cli_mode_name(enum lg_mode m);

#endif
