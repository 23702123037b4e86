/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_SLOW_H
#define FG_CP_SLOW_H
/*
 * The slow-job thread: admin commands that wait on PostgreSQL (a table an operator locked, a
 * verify-draw reading and sorting every entrant) run here, off the control plane's loop, so
 * that the loop goes on deciding reservations meanwhile.
 *
 * One worker thread runs one request line at a time, in the order they came, with a context of
 * its own (struct cp_ctx: its own PostgreSQL and Redis connections; the rest of the loop's
 * context is not its to touch). What a command must do to the loop's state (read the state
 * again, publish to the data planes, look at an event as the loop holds it) it hands to the
 * loop with cp_slow_on_loop(), which runs it there between two rounds and waits for it: the
 * loop's state has one writer, the loop.
 *
 * The loop polls cp_slow_fd() and calls cp_slow_serve() on each turn: it runs the worker's
 * calls and hands each finished answer to its done callback.
 */
#include <stddef.h>
#include <stdint.h>

#include "controlplane/cp_ctx.h"
#include "store/store_conn.h"

/* Requests waiting or running at once (one per admin connection at most). */
#define CP_SLOW_QUEUE ADMIN_CONNS_MAX

struct cp_slow;

/*
 * A finished request: the answer out (n bytes, malloc'd: the callee takes it; n <= 0: none)
 * of the request submitted with ticket.
 */
typedef void (*cp_slow_done_fn)(void *arg, uint64_t ticket, char *out, int n);

/*
 * A function run on the loop for the worker: loop is the loop's own context, arg the worker's.
 */
typedef void (*cp_slow_loop_fn)(struct cp_ctx *loop, void *arg);

/*
 * Starts the worker for the loop's context loop, with connections of its own to pg_conninfo
 * (made now) and the Redis of rsc (as the loop's store: again after a loss). exec runs one
 * request line on the worker's context and writes its answer (admin_server_execute()).
 * Returns the worker, or NULL with err (no memory, no thread).
 */
struct cp_slow *cp_slow_create(struct cp_ctx *loop, const char *pg_conninfo,
	const struct store_conn_config *rsc,
	int (*exec)(struct cp_ctx *c, const char *line, char *out, size_t cap), char *err,
	size_t errlen);

/* The file descriptor the loop polls (readable when cp_slow_serve() has something to do). */
int cp_slow_fd(const struct cp_slow *s);

/*
 * Queues the request line (copied, and wiped once run) under ticket, with the peer of the
 * request the calling thread runs now (admin_conns_current_peer(): the audit log's who).
 * Returns 0, or -EBUSY when CP_SLOW_QUEUE are waiting already.
 */
int cp_slow_submit(struct cp_slow *s, uint64_t ticket, const char *line);

/* Requests queued or running now. */
unsigned cp_slow_pending(const struct cp_slow *s);

/*
 * On the loop: runs the worker's waiting cp_slow_on_loop() call, if any, and hands every
 * finished answer to done(arg, ...). Never blocks.
 */
void cp_slow_serve(struct cp_slow *s, cp_slow_done_fn done, void *arg);

/*
 * On the loop, just after cp_slow_submit(): waits at most max_us for the worker to finish what
 * it runs, serving its calls on the loop meanwhile (a quick command is answered in the same
 * turn, without the loop and the worker waking each other up several times). Returns when one
 * is finished (cp_slow_serve() hands it over) or at max_us.
 */
void cp_slow_wait(struct cp_slow *s, unsigned max_us);

/*
 * Runs fn(loop context, arg) on the loop and returns when it has run. c is the context the
 * caller runs with: on the worker's, fn waits for the loop's next turn; on the loop's own (no
 * worker: tests, or a command the loop runs itself), fn runs at once.
 */
void cp_slow_on_loop(struct cp_ctx *c, cp_slow_loop_fn fn, void *arg);

/*
 * Stops the worker (the request it runs finishes first, serving its loop calls meanwhile, for
 * at most wait_ms) and frees s. Answers not handed over are dropped. NULL is a no-op.
 */
void cp_slow_destroy(struct cp_slow *s, unsigned wait_ms);

#endif
