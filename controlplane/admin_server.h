/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_ADMIN_SERVER_H
#define FG_CP_ADMIN_SERVER_H
/*
 * The admin Unix socket: flashgatectl's requests, one line each, executed against PostgreSQL,
 * Redis and the data planes. The protocol is admin/ (admin_request.h parses a line,
 * admin_answer.h writes the answers); controlplane/admin_conns.h serves the connections; this
 * dispatches a parsed request to its command's handler from a table (admin_server.c), and runs
 * it once more when a connection to PostgreSQL or Redis was lost under it. A refused request
 * changes nothing.
 */
#include <stdbool.h>
#include <stddef.h>

#include "admin/admin_proto.h"
#include "controlplane/cp_ctx.h"

/*
 * Creates and listens on the Unix socket path (non-blocking, for controlplane/admin_conns.h,
 * which serves its connections) with mode 0600 (a stale socket left by a dead control plane is
 * replaced; one a live process answers on is not). Returns the listening fd, or -1 with err.
 */
int admin_server_listen(const char *path, char *err, size_t errlen);

/*
 * Executes one request line and writes the JSON answer (with its '\n') to out. Returns the
 * answer's length. The socket-free core of the admin socket, for tests too.
 */
int admin_server_execute(struct cp_ctx *ctx, const char *line, char *out, size_t cap);

/*
 * Whether the request line's command waits on PostgreSQL, and so runs on the slow-job thread
 * (controlplane/cp_slow.h) rather than on the loop: every command but help, stats and
 * session-token. A line that does not parse: false (its refusal is written on the loop).
 */
bool admin_server_off_loop(const char *line);

/* Whether this server has a handler for the protocol's command cmd (every one has). */
bool admin_server_handles(enum admin_cmd cmd);

#endif
