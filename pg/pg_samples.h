/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_SAMPLES_H
#define FG_PG_PG_SAMPLES_H
/*
 * The samples of live sales (sql/013 sale_samples): what the control plane writes once a second
 * for each open event. Errors as pg/pg_conn.h says.
 */
#include <stddef.h>
#include <stdint.h>

#include "pg/pg_conn.h"

/* The control plane's side of a sample: running totals, the same for every open event. */
struct pg_sample {
	uint32_t cp_id;
	const char *decisions; /* a JSON object {"reserved": N, ...} */
	const char *answers;   /* a JSON object {"202": N, ...} */
	uint64_t admitted, budget_refused;
	unsigned data_planes;
};

/*
 * Writes one row per open event: smp with the event's own figures from PostgreSQL (items left,
 * orders, paid, expired, cancelled, its pow_bits). *rows: how many (may be NULL). Returns 0 or
 * < 0 with err.
 */
int pg_samples_write(
	struct pg_conn *s, const struct pg_sample *smp, uint64_t *rows, char *err, size_t errlen);

#endif
