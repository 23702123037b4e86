/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_ROW_H
#define FG_PG_PG_ROW_H
/*
 * Reading a row of a result: one way to read each kind of cell, and the one SQL expression
 * that turns a timestamptz into Unix milliseconds (and back), so that every query of every
 * program reads a time the same way.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <libpq-fe.h>

/*
 * timestamptz -> Unix ms, exact and rounded down (floor: 12:00:00.9996 is ...000999, never the
 * next millisecond), as a bigint; the column (any timestamptz expression) is SQL text. NULL
 * stays NULL (coalesce it when a row may have none).
 */
#define PG_ROW_MS(col) "floor(extract(epoch FROM " col ") * 1000)::bigint"

/* Unix ms (a bigint parameter or expression) -> timestamptz, exact. */
#define PG_ROW_TS(param) "(timestamptz 'epoch' + " param "::bigint * interval '1 millisecond')"

/* A text cell as an unsigned integer ("" and NULL: 0). */
static inline uint64_t
pg_row_u64(const PGresult *res, int row, int col)
{
	return strtoull(PQgetvalue(res, row, col), NULL, 10);
}

/* A text cell as a uint32_t (the caller's column holds no more). */
static inline uint32_t
pg_row_u32(const PGresult *res, int row, int col)
{
	return (uint32_t)pg_row_u64(res, row, col);
}

/* A text cell of a signed bigint (a reservation id stored in its 64 bits), as those bits. */
static inline uint64_t
pg_row_i64(const PGresult *res, int row, int col)
{
	return (uint64_t)strtoll(PQgetvalue(res, row, col), NULL, 10);
}

/* A text boolean cell (NULL: false). */
static inline bool
pg_row_bool(const PGresult *res, int row, int col)
{
	return PQgetvalue(res, row, col)[0] == 't';
}

/* A text cell as a string ("" for NULL), valid until the result is cleared. */
static inline const char *
pg_row_text(const PGresult *res, int row, int col)
{
	return PQgetvalue(res, row, col);
}

/*
 * A cell of a binary result (resultFormat 1) of type int2, int4, int8 or bool, as its bits
 * (PostgreSQL's binary format is big-endian).
 */
static inline uint64_t
pg_row_bin(const PGresult *res, int row, int col)
{
	const uint8_t *p = (const uint8_t *)PQgetvalue(res, row, col);
	uint64_t v = 0;

	for (int i = 0; i < PQgetlength(res, row, col); i++)
		v = v << 8 | p[i];
	return v;
}

#endif
