/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_FOLLOW_H
#define FG_CP_FOLLOW_H
/*
 * Following the admin changes other control planes make (docs/ha.md, "Several control planes").
 * Every committed change to events, keys, rules or limits sends NOTIFY flashgate_config and bumps
 * config_version.version (sql/017_config_notify.sql). A thread of its own LISTENs on a
 * PostgreSQL connection of its own and, on a notification, on each (re)connection of that
 * connection (a notification sent while it was down is lost) and when the version read every
 * CP_FOLLOW_CHECK_MS has moved, reads the state (cp_state_read(), with a Redis connection of its
 * own) and hands it to the loop: cp_follow_serve() applies it and publishes it to the data
 * planes, as after the control plane's own admin change. The loop never waits on it.
 */
#include <stdint.h>

#include "controlplane/cp_ctx.h"
#include "store/store_conn.h"

/* The channel every admin change notifies (sql/017_config_notify.sql). */
#define CP_FOLLOW_CHANNEL "flashgate_config"
/* How often config_version is read: what a lost notification costs at most. */
#define CP_FOLLOW_CHECK_MS 2000

struct cp_follow;

/* Reloads handed to the loop, by cause, and the rest (stats, metrics). */
struct cp_follow_counters {
	uint64_t reloads_notify;  /* a NOTIFY came */
	uint64_t reloads_connect; /* the listening connection was made (again) */
	uint64_t reloads_check;	  /* config_version moved without a notification */
	uint64_t notifications;	  /* NOTIFYs received */
	uint64_t connects;	  /* listening connections made */
	uint64_t failures;	  /* reads of the state or the version that failed (tried again) */
	int backend_pid;	  /* the listening connection's server process (0: none yet) */
};

/*
 * Starts following for the loop's state st (read by the thread only as cp_state_read() allows),
 * with connections of its own to pg_conninfo and the Redis of rsc (both made by the thread, and
 * again after a loss). Returns it, or NULL with err (no memory, no thread).
 */
struct cp_follow *cp_follow_start(const struct cp_state *st, const char *pg_conninfo,
	const struct store_conn_config *rsc, char *err, size_t errlen);

/* The file descriptor the loop polls (readable when a state read waits for cp_follow_serve()). */
int cp_follow_fd(const struct cp_follow *f);

/*
 * On the loop (c its context): applies the state read last, if any (cp_state_apply()), and
 * publishes it to the data planes (the events as a snapshot when one left the set; else the
 * events, keys, rules, limits and FAIR records), logged with what it holds. Never blocks. NULL
 * f is a no-op.
 */
void cp_follow_serve(struct cp_follow *f, struct cp_ctx *c);

/* The counters (any thread). */
void cp_follow_counters(struct cp_follow *f, struct cp_follow_counters *out);

/* Stops the thread (at most a poll's wait, or a query under way) and frees f. NULL: no-op. */
void cp_follow_stop(struct cp_follow *f);

#endif
