/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_CONN_H
#define FG_STORE_STORE_CONN_H
/*
 * The store's connection to Redis (hiredis, one blocking connection) and the scripts it loads
 * on every connection: lua/reserve.lua, lua/release.lua and the preheat check. The store's jobs
 * are in their own modules, each taking the struct store this one opens:
 *   store/store_keys.h       every key of an event (read this first)
 *   store/store_event.h      preheat, an event's counters, purge
 *   store/store_reserve.h    deciding batches of reservations (the control plane)
 *   store/store_result.h     looking up users' results (the control plane)
 *   store/store_outbox.h     reading, acknowledging and trimming the outbox (the order writer)
 *   store/store_release.h    returning stock of expired and cancelled reservations
 *   store/store_reconcile.h  repairing an event from PostgreSQL's view
 *   store/store_config.h     the [redis] and [postgres] settings
 *
 * A store is one connection: use it from one thread at a time.
 *
 * Connection loss. Every call that finds the connection broken frees it and returns
 * -ENOTCONN; later calls reconnect, at most once per backoff period (50 ms doubling to 2 s by
 * default), load the scripts again and go on. An outage is logged once when it starts
 * (warn) and once when it ends (notice). A store never exits the process; it sets SIGPIPE to
 * "ignore" when it is at its default, as a write to a closed socket must not kill a daemon.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The most items one command of the store carries: the reservations of one batch (one EVALSHA
 * of reserve.lua, which unpacks them), the entries of one outbox read, the ids of one check.
 */
#define RS_BATCH_MAX 2048

struct store_conn_config {
	const char *unix_path;	     /* a Unix socket; when set, host and port are not used */
	const char *host;	     /* NULL: 127.0.0.1 */
	unsigned port;		     /* 0: 6379 */
	unsigned connect_timeout_ms; /* 0: 1000 */
	unsigned command_timeout_ms; /* 0: 2000; a reply that takes longer is a lost connection */
	unsigned backoff_min_ms;     /* 0: 50; the first wait after an outage starts */
	unsigned backoff_max_ms;     /* 0: 2000; the wait doubles up to this */
	/* store_open() succeeds even when Redis cannot be reached yet (the store then connects
	 * like after an outage); otherwise store_open() fails and says why. */
	bool start_offline;
	/* Refuse a Redis that could lose an acknowledged reservation or evict a key: every
	 * connection checks (CONFIG GET) appendonly yes, appendfsync always and
	 * maxmemory-policy noeviction, and fails with the setting named when one differs or
	 * cannot be read (CONFIG disabled or renamed). */
	bool check_settings;
	/* AUTH on every connection: user (NULL: Redis's default user) and the password read by
	 * store_open() from password_file (NULL: no AUTH), a file only its owner may read. */
	const char *user;
	const char *password_file;
	/* Redis with replicas (docs/ha.md, store/store_sentinel.h): the Sentinels to ask for the
	 * primary ("host:port,..."; NULL or empty: host/port or unix_path is the one Redis), the
	 * name they monitor it by, and how many replicas a batch of reservations must reach
	 * (WAIT) within wait_timeout_ms (0: 500) before its verdicts are answered. */
	const char *sentinels;
	const char *master_name;
	unsigned wait_replicas;
	unsigned wait_timeout_ms;
};

/* Counters since store_open(), for stats and metrics. */
struct store_stats {
	uint64_t batches;  /* decided */
	uint64_t reserved; /* verdicts, by kind */
	uint64_t duplicate;
	uint64_t sold_out;
	/* Refused by reserve.lua: closed or not started (the window key). */
	uint64_t outside_window;
	uint64_t retry;	       /* reservations answered RETRY (connection lost or error reply) */
	/* Reservations reserve.lua refused whole because of a draw (store/store_keys.h): a
	 * first-come batch during the draw, or a draw batch whose turn it was not. */
	uint64_t draw_refused;
	uint64_t errors;       /* error replies */
	uint64_t outages;      /* connections lost */
	uint64_t connects;     /* successful (re)connections, the first included */
	uint64_t script_loads; /* SCRIPT LOAD rounds: one per connection, plus after NOSCRIPT */
	uint64_t wait_timeouts; /* WAITs that fell short of wait_replicas: batches answered retry */
	uint64_t failovers;	/* a +switch-master or READONLY made the store find the primary */
};

struct store;

/*
 * Connects to Redis as c says and loads the scripts (SCRIPT LOAD, checking that Redis
 * computed the SHA1 embedded at build time). Returns the store, or NULL with a message that
 * says what was wrong in err (a bad config, or Redis not reachable unless c->start_offline).
 */
struct store *store_open(const struct store_conn_config *c, char *err, size_t err_len);

/* Closes the connection and frees rs; NULL is allowed. */
void store_close(struct store *rs);

/*
 * Reconnects when the connection is down and the backoff period has passed. Returns 0 when
 * connected, else -ENOTCONN. The other calls do this themselves; a daemon may call it from
 * its cron so that the "back" notice does not wait for traffic.
 */
int store_ensure_connected(struct store *rs);

/*
 * store_ensure_connected() without waiting for the backoff: one attempt now when the connection
 * is down. For a rare caller a person waits on (an admin command right after Redis came back
 * must not find the store still backing off). Returns 0 when connected, else -ENOTCONN.
 */
int store_reconnect_now(struct store *rs);

/* True while the store holds a working connection (as far as it knows). */
bool store_connected(const struct store *rs);

/* Copies the counters. */
void store_get_stats(const struct store *rs, struct store_stats *out);

#endif
