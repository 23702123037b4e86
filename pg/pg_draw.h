/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_DRAW_H
#define FG_PG_PG_DRAW_H
/*
 * The draw's writes and reads in PostgreSQL (sql/010_fair_start.sql: draw_entrants and the
 * events' draw columns), on connections of their own (struct pg_draw): the draw runner's, and
 * one per thread that writes or reads a whole draw off the control plane's loop
 * (pg_draw_write_all(), pg_draw_load_all()). Slow path only (controlplane/draw_runner.h).
 *
 * Writing the entrants is one transaction: the event's row is locked (SELECT ... FOR UPDATE),
 * so that of two control planes drawing at once one writes and the other finds the digest and
 * compares it; the draw's own partition of draw_entrants (draw_entrants_<event>, sql/016) is
 * created and filled with COPY, its keys built once it is full, and it is attached, with
 * events.draw_digest / draw_entrants set. A control plane that dies half way leaves nothing
 * (the transaction is rolled back, the partition with it).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pg/pg_conn.h"
#include "store/store_draw.h"

struct pg_draw;

/* One entrant of a draw as PostgreSQL holds it (draw_entrants), for event verify-draw. */
struct pg_draw_entrant {
	uint64_t user;
	uint64_t reservation_id;
	uint32_t rank;
	bool ordered; /* an order of the event exists for this user and reservation (any status) */
};

/*
 * The entrants of event id's draw by rank, read on s (the control plane's main connection), in
 * a malloc'd array (*v, free it) of *n, each with whether its reservation became an order. One
 * statement: one snapshot. Returns 0 or < 0 with err (errors as pg/pg_conn.h says).
 */
int pg_draw_entrants(struct pg_conn *s, uint32_t id, struct pg_draw_entrant **v, size_t *n,
	char *err, size_t errlen);

/*
 * A draw connection to conninfo, its sessions named app (pg_conn_new_named(); NULL: unnamed),
 * made when first used (and again after a loss). NULL: no memory. The functions below return
 * -EIO for any database error (the message in err).
 */
struct pg_draw *pg_draw_create(const char *conninfo, const char *app);

/* Closes the connection (rolling back what is open) and frees dp; NULL is allowed. */
void pg_draw_free(struct pg_draw *dp);

/*
 * Reads event's draw columns: *has_digest and digest (events.draw_digest), *entrants
 * (events.draw_entrants) and *done_at_ms (events.draw_done_at; 0: not done), *has_seed and
 * seed (events.draw_seed). Returns 0, -ENOENT (no such event) or -EIO with err.
 */
int pg_draw_get(struct pg_draw *dp, uint32_t event, bool *has_digest, uint8_t digest[32],
	uint64_t *entrants, uint64_t *done_at_ms, bool *has_seed, uint8_t seed[32], char *err,
	size_t errlen);

/*
 * Begins writing event's n entrants with digest: locks the event's row; when the event has a
 * digest already (another control plane, or this one before a restart, wrote the draw), ends
 * the transaction and returns -EEXIST with the digest and count it holds (compare them);
 * otherwise starts a COPY into draw_entrants and returns 0 (the rows, then pg_draw_write_end():
 * pg_draw_write_all() does it all). -EIO with err on a database error
 * (nothing written).
 */
int pg_draw_write_begin(struct pg_draw *dp, uint32_t event, uint8_t have_digest[32],
	uint64_t *have_n, char *err, size_t errlen);

/*
 * Ends the COPY, then (once PostgreSQL has taken every row: -EAGAIN until then, call again)
 * sets events.draw_digest and draw_entrants = n and commits. Returns 0, -EAGAIN, or -EIO with
 * err (rolled back: nothing written).
 */
int pg_draw_write_end(struct pg_draw *dp, uint32_t event, const uint8_t digest[32], uint64_t n,
	char *err, size_t errlen);

/* Rolls back whatever is open (a write or a load given up). */
void pg_draw_abort(struct pg_draw *dp);

/*
 * Begins reading event's draw_entrants in rank order (a cursor in a read-only transaction).
 * Returns 0 or -EIO with err.
 */
int pg_draw_load_begin(struct pg_draw *dp, uint32_t event, char *err, size_t errlen);

/*
 * Appends up to max more entrants in rank order to v[*n..] (cap at least *n + max) and
 * advances *n; *end set when there are no more (the transaction is then over). Returns 0 or
 * -EIO with err.
 */
int pg_draw_load_step(struct pg_draw *dp, struct store_entrant *v, size_t *n, unsigned max, bool *end,
	char *err, size_t errlen);

/*
 * The whole write, blocking (for a thread off the control plane's loop): pg_draw_write_begin()
 * (-EEXIST with have_digest and *have_n as it says), the n entrants v in rank order sent in
 * large pieces, pg_draw_write_end() waiting for PostgreSQL. One transaction: all or nothing.
 * Returns 0, -EEXIST, -ENOMEM or -EIO with err.
 */
int pg_draw_write_all(struct pg_draw *dp, uint32_t event, const struct store_entrant *v, size_t n,
	const uint8_t digest[32], uint8_t have_digest[32], uint64_t *have_n, char *err,
	size_t errlen);

/*
 * The whole read of event's draw_entrants in rank order, blocking (for a thread off the loop):
 * into a malloc'd *v (free it, also on failure) of *n (expect: the count to size it for; more
 * are read all the same). Returns 0, -ENOMEM or -EIO with err.
 */
int pg_draw_load_all(struct pg_draw *dp, uint32_t event, size_t expect, struct store_entrant **v,
	size_t *n, char *err, size_t errlen);

/* Sets events.draw_done_at (once: a second call keeps the first time). 0 or -EIO with err. */
int pg_draw_done(struct pg_draw *dp, uint32_t event, char *err, size_t errlen);

#endif
