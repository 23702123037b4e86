/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_ADMIN_AUDIT_H
#define FG_CP_ADMIN_AUDIT_H
/*
 * The audit log (docs/operations.md "The audit log"): every admin command that changes
 * something is written, once its answer is known, to PostgreSQL (admin_audit, pg/pg_audit.h)
 * and to the log: who (the admin socket peer's user and pid, SO_PEERCRED), what (the request
 * line, never a secret), when, the sale it touched and the answer. `audit [EVENT]` reads it
 * back. One thread: the control plane's loop (or whichever runs the command).
 */
#include <stddef.h>

#include "admin/admin_request.h"
#include "controlplane/admin_exec.h"

/*
 * Records the change req (parsed from line) answered out[0..n) for the current admin peer
 * (admin_conns_current_peer()). Cannot fail: a row PostgreSQL does not take is logged as a
 * warning with what it held (the command already ran).
 */
void admin_audit_record(
	struct cp_ctx *c, const struct admin_req *req, const char *line, const char *out, int n);

/* audit [EVENT_ID] [--limit N]: the newest entries, newest first. */
int admin_audit_list(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

#endif
