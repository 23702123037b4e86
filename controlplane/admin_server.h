/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_ADMIN_SERVER_H
#define FG_CP_ADMIN_SERVER_H
/*
 * The admin Unix socket: flashgatectl's requests, one line each, executed
 * against PostgreSQL, Redis and the data planes (the protocol:
 * controlplane/admin_request.h parses them, admin_answer.h writes the answers).
 * A refused request changes nothing.
 */
#include <stddef.h>

#include "controlplane/cp_ctx.h"

/*
 * Creates and listens on the Unix socket path (non-blocking, for controlplane/admin_conn.h,
 * which serves its connections) with mode 0600 (a stale socket
 * left by a dead control plane is replaced; one a live process answers on is
 * not). Returns the listening fd, or -1 with err.
 */
int admin_listen(const char *path, char *err, size_t errlen);

/*
 * Executes one request line and writes the JSON answer (with its '\n') to
 * out. Returns the answer's length. The socket-free core of the above, for tests.
 */
int admin_execute(struct cp_ctx *ctx, const char *line, char *out, size_t cap);

#endif
