/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_COUNTERS_JSON_H
#define FG_DP_COUNTERS_JSON_H
/*
 * The data plane's final counters as JSON (--counters-json FILE, docs/dataplane.md): the same
 * figures as the "final counters" text it prints at exit (counters_print() and the bridge
 * line), for scripts. Written once at exit, after the workers stopped; nothing here runs on the
 * packet path.
 */
#include <stddef.h>
#include <stdint.h>

#include "dataplane/counters.h"

struct bridge;
struct bridge_counters;
struct worker;

/* One worker's counters and the lcore it ran on. */
struct counters_of {
	unsigned lcore;
	const struct dp_counters *ctr;
};

/*
 * Writes into buf (cap bytes) one JSON object and a '\n': "workers" (n), "tsc_hz", "total" (the
 * sum of w[0..n)), "bridge" when bc is not NULL, and "per_worker" (each worker's, with its
 * "lcore"). Every counter is there, zero or not, as counters_table[] (dataplane/counters.h)
 * names it: a single counter as a number, a family as an object by member. Returns the
 * length, or -ENOSPC when it does not fit.
 */
int counters_json(char *buf, size_t cap, uint64_t tsc_hz, const struct counters_of *w,
	unsigned n, const struct bridge_counters *bc);

/*
 * Writes the final counters of workers[0..n) and of bridge b (NULL: none) to the file path
 * (created or truncated). Returns 0, or a negative errno after a message that names the file.
 */
int counters_json_write(
	const char *path, struct worker *const *workers, unsigned n, const struct bridge *b);

#endif
