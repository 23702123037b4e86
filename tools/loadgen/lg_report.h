/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_LG_REPORT_H
#define FG_LG_REPORT_H
/*
 * The load generator's report of one run (docs/loadgen.md), written two ways from the same
 * figures: one "key: values" text line each, for people and the scripts that read lines, and
 * one JSON object (--report-json) whose members carry the same names, for scripts/bench, the
 * demo and the end-to-end tests. Nothing here touches a port or the EAL.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/loadgen/lg_state.h"
#include "tools/loadgen/lg_flood.h"
#include "tools/loadgen/lg_stats.h"

/* The figures of a run that are not counters of struct lg_stats. */
struct lg_report {
	const char *mode;	       /* --mode's name */
	enum lg_mode mode_id;	       /* which lines there are */
	double elapsed_s;	       /* the run's wall time, above 0 */
	bool timed_out;		       /* --duration-s ended it before the clients were done */
	uint64_t conns_asked;	       /* healthz, reserve, result: --connections; else 0 */
	uint64_t users_asked;	       /* sale: --users */
	uint64_t unfinished;	       /* honest connections or users still open at the end */
	double flood_rate[LG_FLOOD_N]; /* --flood KIND:RATE; 0: not asked, no line */
	uint64_t flood_unfinished[LG_FLOOD_N]; /* unsigned, one-ip: connections still open */
	bool pcap;			       /* a capture was asked (--pcap) */
	const char *pcap_path;
	uint64_t pcap_frames;
	unsigned pow_bits_min, pow_bits_max; /* sale: the challenges' difficulties (0: none) */
	bool populations;		     /* sale with --bots: a line per population */
	bool arrivals;			     /* sale with --arrive-before: the arrivals' line */
	double arr_first_pre, arr_last_pre, arr_first_burst; /* s from the start */
	uint64_t hz; /* TSC cycles per second: the latencies are kept in cycles */
	const struct lg_stats *st;
};

/*
 * Fills r with the figures of client cl run with options o: mode is --mode's name, elapsed the
 * run's TSC cycles, timed_out whether the duration ended it. r points into cl and o (the
 * counters, the pcap path), which must outlive it. Never fails.
 */
void lg_report_fill(struct lg_report *r, const struct lg_opts *o, const struct lg_client *cl,
	const char *mode, uint64_t elapsed, bool timed_out);

/* Writes the text report of r to f, one "key: values" line each. */
void lg_report_text(FILE *f, const struct lg_report *r);

/*
 * Writes the JSON report of r into buf (cap bytes), one object and a '\n'. Returns its length,
 * or -ENOSPC when it does not fit (then buf holds nothing usable).
 */
int lg_report_json(const struct lg_report *r, char *buf, size_t cap);

/*
 * Writes the JSON report of r to the file path (created or truncated). Returns 0, or a negative
 * errno after a message to stderr that names the file.
 */
int lg_report_json_write(const struct lg_report *r, const char *path);

#endif
