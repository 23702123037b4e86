/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_DRAW_PG_H
#define FG_CP_DRAW_PG_H
/*
 * The draw's writes and reads in PostgreSQL (sql/010_fair_start.sql: draw_entrants and the
 * events' draw columns), on a connection of its own, so that a long COPY of a large draw can
 * be sent in steps while the control plane's main connection serves admin commands. Slow
 * path only (controlplane/draw_runner.h).
 *
 * Writing the entrants is one transaction: the event's row is locked (SELECT ... FOR UPDATE),
 * so that of two control planes drawing at once one writes and the other finds the digest and
 * compares it; draw_entrants is filled with COPY, and events.draw_digest / draw_entrants set
 * with it. A control plane that dies half way leaves nothing (the transaction is rolled back).
 */
#include <stddef.h>
#include <stdint.h>

#include "store/store_draw.h"

struct draw_pg;

/* A store that connects to conninfo when first used (and again after a loss). NULL: no memory. */
struct draw_pg *draw_pg_create(const char *conninfo);

/* Closes the connection (rolling back what is open) and frees dp; NULL is allowed. */
void draw_pg_free(struct draw_pg *dp);

/*
 * Reads event's draw columns: *has_digest and digest (events.draw_digest), *entrants
 * (events.draw_entrants) and *done_at_ms (events.draw_done_at; 0: not done), *has_seed and
 * seed (events.draw_seed). Returns 0, -ENOENT (no such event) or -EIO with err.
 */
int draw_pg_get(struct draw_pg *dp, uint32_t event, bool *has_digest, uint8_t digest[32],
	uint64_t *entrants, uint64_t *done_at_ms, bool *has_seed, uint8_t seed[32], char *err,
	size_t errlen);

/*
 * Begins writing event's n entrants with digest: locks the event's row; when the event has a
 * digest already (another control plane, or this one before a restart, wrote the draw), ends
 * the transaction and returns -EEXIST with the digest and count it holds (compare them);
 * otherwise starts a COPY into draw_entrants and returns 0 (send the rows with
 * draw_pg_write_rows(), then draw_pg_write_end()). -EIO with err on a database error
 * (nothing written).
 */
int draw_pg_write_begin(struct draw_pg *dp, uint32_t event, uint8_t have_digest[32],
	uint64_t *have_n, char *err, size_t errlen);

/* Sends the entrants v[from..to) (rank = index + 1) of the COPY. Returns 0 or -EIO with err. */
int draw_pg_write_rows(struct draw_pg *dp, uint32_t event, const struct rs_entrant *v,
	size_t from, size_t to, char *err, size_t errlen);

/*
 * Ends the COPY, sets events.draw_digest and draw_entrants = n and commits. Returns 0 or -EIO
 * with err (rolled back: nothing written).
 */
int draw_pg_write_end(struct draw_pg *dp, uint32_t event, const uint8_t digest[32], uint64_t n,
	char *err, size_t errlen);

/* Rolls back whatever is open (a write or a load given up). */
void draw_pg_abort(struct draw_pg *dp);

/*
 * Begins reading event's draw_entrants in rank order (a cursor in a read-only transaction).
 * Returns 0 or -EIO with err.
 */
int draw_pg_load_begin(struct draw_pg *dp, uint32_t event, char *err, size_t errlen);

/*
 * Appends up to max more entrants in rank order to v[*n..] (cap at least *n + max) and
 * advances *n; *end set when there are no more (the transaction is then over). Returns 0 or
 * -EIO with err.
 */
int draw_pg_load_step(struct draw_pg *dp, struct rs_entrant *v, size_t *n, unsigned max,
	bool *end, char *err, size_t errlen);

/* Sets events.draw_done_at (once: a second call keeps the first time). 0 or -EIO with err. */
int draw_pg_done(struct draw_pg *dp, uint32_t event, char *err, size_t errlen);

#endif
