/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TOOLS_PCAPGEN_ARGS_H
#define FG_TOOLS_PCAPGEN_ARGS_H
/* The command line of flashgate-pcapgen (docs/pktgen.md), parsed and checked. */
#include <stddef.h>
#include <stdio.h>

#include "tools/pcapgen/pcapgen_stream.h"

#define PCAPGEN_COUNT_MAX 100000000ull

struct pcapgen_args {
	struct pcapgen_stream_cfg cfg;
	const char *out; /* the pcap file to write */
};

/*
 * Fills a from argv (argv[0] is the program). Returns 0; 1 after --help (nothing else is
 * checked); -1 when an option is unknown, missing or wrong, with a one-line message of what was
 * wrong and what to give instead in err (errlen bytes, NUL-terminated).
 */
int pcapgen_args_parse(int argc, char **argv, struct pcapgen_args *a, char *err, size_t errlen);

/* Writes the usage text to f. */
void pcapgen_args_usage(FILE *f);

#endif
