/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CONTROLPLANE_PG_STORE_H
#define FG_CONTROLPLANE_PG_STORE_H
/*
 * The control plane's PostgreSQL code (libpq; the slow path: admin commands, start-up,
 * reconciliation). PostgreSQL is the source of truth for events and stock; the schema is in
 * sql/ as numbered migrations, embedded in the program at build time (scripts/embed-sql), so
 * that pg_migrate() needs no files at run time.
 *
 * Every function returns 0 or a negative errno and, on error, writes one line to err that says
 * what was wrong (ADMIN_ERR_MAX bytes hold any): -EINVAL a bad value (nothing written), -ENOENT
 * no such row, -EEXIST a duplicate, -EPERM a refused state change, -ENOTCONN PostgreSQL cannot
 * be reached (after one reconnection attempt), -EIO any other database error. Values travel as
 * parameters (PQexecParams), never inside SQL text. One struct pg_store is one connection: use
 * it from one thread at a time.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "common/wire.h"
#include "admin/admin_proto.h"

/* One embedded migration (sql/NNN_words.sql). */
struct pg_migration {
	int version;
	const char *name;
	const char *sql;
};

/* Generated from sql/ by scripts/embed-sql, in ascending version order. */
extern const struct pg_migration pg_migrations[];
extern const unsigned pg_n_migrations;

struct pg_store;

/* Orders of an event by status, and its stock, for stats and reconciliation. */
struct pg_event_counts {
	uint32_t initial;
	uint32_t available;
	uint64_t pending;
	uint64_t paid;
	uint64_t expired;
	uint64_t cancelled;
	uint64_t releases_pending; /* stock_releases rows not yet applied to Redis */
};

/*
 * Connects with a libpq conninfo string ("host=/run/flashgate port=5432 dbname=flashgate" or a
 * postgresql:// URI). Returns the store, or NULL with the reason in err.
 */
struct pg_store *pg_open(const char *conninfo, char *err, size_t errlen);

/* Closes the connection and frees s; NULL is a no-op. */
void pg_close(struct pg_store *s);

/*
 * How many times a call found the connection lost after it had sent something (its error was
 * -ENOTCONN "connection lost"; it may or may not have taken effect). A caller compares the
 * count before and after a command to know whether to check or repeat it. A connection that
 * the server closed between calls is replaced before the next call sends anything, and does
 * not count.
 */
uint64_t pg_losses(const struct pg_store *s);

/* The libpq connection, for callers that run their own queries (tests, the order writer). */
PGconn *pg_conn(struct pg_store *s);

/*
 * Applies every migration not applied yet, in version order, each in its own transaction that
 * also records it in schema_migrations(version, applied_at). Takes a transaction-scoped
 * advisory lock, so that control planes starting together apply each migration once.
 * dir NULL: the embedded migrations; otherwise the NNN_words.sql files of that directory.
 * Running it again applies nothing. *applied (may be NULL) receives how many were applied.
 * A migration that fails is rolled back whole and stops the run (the message names it).
 */
int pg_migrate(struct pg_store *s, const char *dir, unsigned *applied, char *err, size_t errlen);

/* The highest applied migration version in *version (0: none). */
int pg_schema_version(struct pg_store *s, int *version, char *err, size_t errlen);

/*
 * Creates event ev (checked as admin_event_check() does; its end must not be in the past) in
 * state draft with its stock, in one transaction. *out (may be NULL) receives it as stored.
 * -EINVAL: a bad field (nothing written); -EEXIST: the id is taken.
 */
int pg_event_create(struct pg_store *s, const struct admin_event *ev, struct admin_event *out,
	char *err, size_t errlen);

/* Reads event id with its state and available stock. -ENOENT when there is none. */
int pg_event_get(
	struct pg_store *s, uint32_t id, struct admin_event *out, char *err, size_t errlen);

/*
 * Reads events by id into out[0..cap) and their total number into *n (which may exceed cap:
 * then only the first cap are filled).
 */
int pg_event_list(struct pg_store *s, struct admin_event *out, unsigned cap, unsigned *n, char *err,
	size_t errlen);

/*
 * The events the data planes hold (up to cap, their CP_STATE_EVENTS_MAX slots), best claim first:
 * the live ones (draft, preheated or open, and before their ends_at) by state, open first,
 * then preheated, then draft, each by starts_at; then those that are over (closed, or past
 * their ends_at), the most recently ended (or closed) first, so that buyers of a sale just
 * ended still reach it; never an archived one. *n receives how many were filled, *n_live how
 * many live events there are in all (more than cap: some upcoming sale is on no data plane
 * yet), and
 * *next_end_ms the earliest ends_at of a live event (Unix ms; 0: none), when this order
 * changes by itself.
 */
int pg_event_list_slots(struct pg_store *s, struct admin_event *out, unsigned cap, unsigned *n,
	unsigned *n_live, uint64_t *next_end_ms, char *err, size_t errlen);

/*
 * event list: the events with an id above after (and in state `state` when has_state), by id,
 * at most limit of them into out (which holds limit); *more is true when there are others
 * after them (ask again with after = the last id).
 */
int pg_event_page(struct pg_store *s, bool has_state, enum admin_event_state state, uint32_t after,
	unsigned limit, struct admin_event *out, unsigned *n, bool *more, char *err, size_t errlen);

/*
 * The events preheated or open and not past their ends_at, other than event except, into *n:
 * the ones that take a data plane slot before any draft.
 */
int pg_event_count_ready(
	struct pg_store *s, uint32_t except, unsigned *n, char *err, size_t errlen);

/*
 * event archive: marks event id archived when it is over (closed, or past its ends_at in any
 * state) and settled: no order still pending, and at least redis_buyers orders (every buyer
 * Redis holds is an order: the order writer has caught up). Returns 0 with the event in *out
 * (may be NULL); -ENOENT; -EALREADY when it was archived before (*out filled); -EPERM with a
 * message saying what to wait for or do; or a database error. Nothing changes unless 0.
 */
int pg_event_archive(struct pg_store *s, uint32_t id, uint64_t redis_buyers,
	struct admin_event *out, char *err, size_t errlen);

/*
 * Moves event id to state to, atomically, if admin_event_transition() allows it from the state
 * it has now; -EPERM with that function's message otherwise. A preheat also needs an event
 * whose end is still ahead. *out (may be NULL) receives the event after the change: for a
 * preheat, out->available is the stock to load into Redis.
 */
int pg_event_set_state(struct pg_store *s, uint32_t id, enum admin_event_state to,
	struct admin_event *out, char *err, size_t errlen);

/*
 * event pow: sets event id's challenge difficulty to bits and, when auto_given, its automatic
 * maximum to auto_max (otherwise it keeps its own, which must then be 0 or at least bits).
 * Refused (-EPERM) for a closed or archived event; -EINVAL for values out of range. *out (may
 * be NULL) receives the event after the change.
 */
int pg_event_set_pow(struct pg_store *s, uint32_t id, uint8_t bits, bool auto_given,
	uint8_t auto_max, struct admin_event *out, char *err, size_t errlen);

/* One entrant of a draw as PostgreSQL holds it (draw_entrants), for event verify-draw. */
struct pg_entrant {
	uint64_t user;
	uint64_t reservation_id;
	uint32_t rank;
	bool ordered; /* an order of the event exists for this user and reservation (any status) */
};

/*
 * The entrants of event id's draw by rank, in a malloc'd array (*v, free it) of *n, each with
 * whether its reservation became an order. One statement: one snapshot.
 */
int pg_draw_entrants(struct pg_store *s, uint32_t id, struct pg_entrant **v, size_t *n, char *err,
	size_t errlen);

/* Stock and orders of event id by status. -ENOENT when there is no such event. */
int pg_event_counts(
	struct pg_store *s, uint32_t id, struct pg_event_counts *out, char *err, size_t errlen);

/*
 * The users holding an order (pending or paid) of event id, ascending, in a malloc'd array
 * (*users, free it) of *n. For reconciliation.
 */
int pg_event_active_users(struct pg_store *s, uint32_t id, uint64_t **users, size_t *n, char *err,
	size_t errlen);

/*
 * Generates a new sale key (32 bytes from getrandom) with the next key id and makes it current;
 * the key that was current retires: it stays, not current, and verifies until the last purchase
 * token or receipt it signed can no longer be valid (token_life_ms after it stopped being
 * current, and until the sales it could have signed receipts for have ended and their pay
 * window passed), however many rotations follow. Keys past that are deleted first. A data
 * plane holds TOK_KEYS_MAX sale keys: when that many still verify, the rotation is refused with
 * -ENOSPC and a message naming the oldest key and when it retires (nothing changes). All in one
 * transaction. *kid receives the new key id.
 */
int pg_key_rotate(
	struct pg_store *s, uint64_t token_life_ms, uint32_t *kid, char *err, size_t errlen);

/*
 * Deletes the sale keys whose retirement (as pg_key_rotate() says) has passed; *removed
 * receives how many. For the control plane's cron.
 */
int pg_keys_expire(
	struct pg_store *s, uint64_t token_life_ms, unsigned *removed, char *err, size_t errlen);

/*
 * Stores the shop's auth key kid (len bytes of secret, ADMIN_SECRET_MIN..ADMIN_SECRET_MAX) as
 * the current auth key, replacing the secret if kid exists; the previous current auth key stays
 * (not current), older ones are deleted.
 */
int pg_auth_key_set(struct pg_store *s, uint32_t kid, const uint8_t *secret, size_t len, char *err,
	size_t errlen);

/*
 * Reads the keys of both kinds, with their secrets (the control plane publishes them), ordered
 * by kind and id, into out[0..cap); *n receives how many there are. Each retiring sale key
 * comes with when it retires (retire_at_ms, from token_life_ms as pg_key_rotate() says) and
 * whether that has passed (retired: pg_keys_expire() deletes it).
 */
int pg_keys_list(struct pg_store *s, uint64_t token_life_ms, struct admin_key *out, unsigned cap,
	unsigned *n, char *err, size_t errlen);

/* Adds rule r (checked again here). -EEXIST when the same rule exists. */
int pg_rule_add(struct pg_store *s, const struct admin_rule *r, char *err, size_t errlen);

/* Deletes rule r. -ENOENT when there is no such rule. */
int pg_rule_del(struct pg_store *s, const struct admin_rule *r, char *err, size_t errlen);

/*
 * Calls fn for every rule, ordered by kind and value, with the time it was added. Stops and
 * returns fn's value when it is not 0. The rules are read in one snapshot.
 */
int pg_rule_foreach(struct pg_store *s,
	int (*fn)(const struct admin_rule *r, uint64_t created_at_ms, void *arg), void *arg,
	char *err, size_t errlen);

/* The number of rules in *n. */
int pg_rule_count(struct pg_store *s, uint64_t *n, char *err, size_t errlen);

/* The data planes' limits. */
int pg_limits_get(struct pg_store *s, struct wire_limits *out, char *err, size_t errlen);

/*
 * Sets the limits named by given (ADMIN_LIMIT_*) to the values in l; the others keep theirs.
 * *out (may be NULL) receives all of them afterwards. -EINVAL for a value out of range.
 */
int pg_limits_set(struct pg_store *s, const struct wire_limits *l, unsigned given,
	struct wire_limits *out, char *err, size_t errlen);

/*
 * Calls fn, "flashgate_pay" or "flashgate_cancel", on order order_id: *result (len bytes)
 * receives its answer: "paid", "already_paid", "expired_refund_needed" or "no_such_order"
 * (pay); "cancelled", "already_cancelled", "paid", "expired" or "no_such_order" (cancel).
 * Returns 0, or < 0 with err set (-EINVAL: another fn, or an order id out of range).
 */
int pg_order_call(struct pg_store *s, const char *fn, uint64_t order_id, char *result,
	size_t len, char *err, size_t errlen);

#endif
