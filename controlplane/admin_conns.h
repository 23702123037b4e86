/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_ADMIN_CONNS_H
#define FG_CP_ADMIN_CONNS_H
/*
 * The admin socket's connections, served without ever blocking: the control plane's loop
 * decides reservations, and no admin client, however slow, may hold it up.
 *
 * The loop polls the listening socket and every open connection together with its ZeroMQ
 * sockets (admin_conns_pollitems(), then admin_conns_serve() with what zmq_poll() found). Each
 * connection keeps its own state: the bytes of its request line read so far, then its answer
 * and how much of it was written. Every read and write is non-blocking and takes what the
 * socket has room for. A request line is executed (the exec callback: admin_server_execute()) as soon
 * as its '\n' arrives; its answer is written as the client reads it. A connection whose
 * request and answer are not done within the deadline, whose request line is longer than
 * ADMIN_LINE_MAX, or that arrives while ADMIN_CONNS_MAX are open is closed (the last two with
 * an error answer when the socket takes it), counted, and logged once.
 *
 * One thread: every function runs on the loop's.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <zmq.h>

#define ADMIN_CONNS_MAX	 16	      /* connections open at once */
#define ADMIN_CONNS_ANSWER_MAX (256 * 1024) /* the longest answer */
#define ADMIN_CONNS_POLLITEMS	 (1 + ADMIN_CONNS_MAX)

/*
 * Executes one request line (without its '\n') and writes the answer with its '\n' into out
 * (cap bytes). Returns the answer's length, or a negative value when none could be written.
 */
typedef int (*admin_conns_exec_fn)(void *arg, const char *line, char *out, size_t cap);

/*
 * What an exec callback returns for a request it handed elsewhere (controlplane/cp_slow.h):
 * the connection waits, neither read nor timed out, until admin_conns_complete() gives its
 * answer with the ticket admin_conns_ticket() said during the call.
 */
#define ADMIN_CONNS_PENDING (-100000)

/* What the connections did since admin_conns_create(). */
struct admin_conns_counters {
	uint64_t accepted;    /* connections accepted */
	uint64_t requests;    /* request lines executed (or refused as incomplete / too long) */
	uint64_t refused;     /* answers {"ok":false,...} */
	uint64_t timed_out;   /* closed at the deadline: request or answer not done */
	uint64_t too_long;    /* request lines longer than ADMIN_LINE_MAX */
	uint64_t busy;	      /* refused: ADMIN_CONNS_MAX already open */
	uint64_t client_gone; /* closed by the client before its answer was written */
	unsigned open;	      /* connections open now */
};

struct admin_conns;

/*
 * Serves the listening socket listen_fd (non-blocking, from admin_server_listen()); exec runs each
 * request with arg; deadline_ms bounds each connection from its accept. Returns the table, or
 * NULL when memory is short. listen_fd stays the caller's.
 */
struct admin_conns *admin_conns_create(
	int listen_fd, unsigned deadline_ms, admin_conns_exec_fn exec, void *arg);

/* Closes every open connection and frees t. NULL is a no-op. */
void admin_conns_destroy(struct admin_conns *t);

/*
 * Fills items[0..) with the listening socket (ZMQ_POLLIN while a connection can be taken) and
 * each open connection (ZMQ_POLLIN while reading its request, ZMQ_POLLOUT while writing its
 * answer). cap must be at least ADMIN_CONNS_POLLITEMS. Returns how many were filled.
 */
unsigned admin_conns_pollitems(const struct admin_conns *t, zmq_pollitem_t *items, unsigned cap);

/*
 * After zmq_poll(): accepts, reads, executes and writes what items[0..n) (as filled by
 * admin_conns_pollitems() just before) say is ready, then closes the connections past their
 * deadline. now_ms is the monotonic clock (now_mono_ms()). Never blocks.
 */
void admin_conns_serve(
	struct admin_conns *t, const zmq_pollitem_t *items, unsigned n, uint64_t now_ms);

/* During an exec callback: the ticket of the connection whose request it runs. */
uint64_t admin_conns_ticket(const struct admin_conns *t);

/*
 * The answer out (n bytes, malloc'd: taken; n <= 0: none, the connection is closed) of the
 * request that went pending under ticket; its deadline starts again from now_ms (monotonic).
 * A ticket whose connection is gone is ignored (out freed).
 */
void admin_conns_complete(
	struct admin_conns *t, uint64_t ticket, char *out, int n, uint64_t now_ms);

/* The earliest deadline of an open connection (monotonic ms), or UINT64_MAX when none. */
uint64_t admin_conns_deadline(const struct admin_conns *t);

/* Who sent a request: the admin socket peer's user and process (SO_PEERCRED). */
struct admin_conns_peer {
	int64_t uid; /* -1: not known */
	pid_t pid;   /* 0: not known */
};

/*
 * The peer of the request that the exec callback is running on this thread; {-1, 0} outside
 * it. For the audit log (controlplane/admin_audit.h); whoever runs the callback elsewhere (another
 * thread) sets it there too.
 */
void admin_conns_current_peer(struct admin_conns_peer *out);

/* Sets this thread's current peer to *peer (NULL: none, {-1, 0}), for a thread that runs the
 * exec callback's work for a request received elsewhere (controlplane/cp_slow.h). */
void admin_conns_set_current_peer(const struct admin_conns_peer *peer);

/* A copy of the counters. */
void admin_conns_get_counters(const struct admin_conns *t, struct admin_conns_counters *out);

#endif
