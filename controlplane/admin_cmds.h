/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_ADMIN_CMDS_H
#define FG_CP_ADMIN_CMDS_H
/*
 * The admin commands that are not about one event (docs/operations.md): help, stats, keys,
 * rules, limits, session-token and order pay/cancel, each an admin_exec_fn
 * (controlplane/admin_exec.h). A change is made in PostgreSQL, then the state is read again and
 * published to the data planes.
 */
#include "controlplane/admin_exec.h"

/* help: every command with its arguments (admin_help_text()). */
int admin_cmds_help(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/* stats: the decisions, Redis, the links, the admin socket, the draws, the data planes. */
int admin_cmds_stats(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/* keys rotate: a new current sale key. A second run rotates only if the first did not. */
int admin_cmds_keys_rotate(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/* keys list: every key with its state and times, never a secret. */
int admin_cmds_keys_list(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/* keys auth-set: the shop's auth key (req->secret; the caller wipes it). */
int admin_cmds_keys_auth_set(struct cp_ctx *c, const struct admin_req *req,
	struct admin_exec_try *t, char *out, size_t cap);

/* rules add, rules del (req->cmd says which): the change, then a full snapshot. */
int admin_cmds_rules_change(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/* rules list: every rule with when it was made. */
int admin_cmds_rules_list(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/* limits set, limits show: the limits and each data plane's share of the forward budget. */
int admin_cmds_limits_set(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);
int admin_cmds_limits_show(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/* session-token: a session token minted with the current auth key. */
int admin_cmds_session_token(struct cp_ctx *c, const struct admin_req *req,
	struct admin_exec_try *t, char *out, size_t cap);

/* order pay, order cancel (req->cmd says which): PostgreSQL's flashgate_pay/flashgate_cancel. */
int admin_cmds_order(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

#endif
