/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_ADMIN_EXEC_H
#define FG_CP_ADMIN_EXEC_H
/*
 * What every admin command's handler shares (controlplane/admin_server.c dispatches a parsed
 * request to its handler from a table): the handler's shape, the second run after a lost
 * connection, and the few steps every answer takes (a formatted refusal, the end of an answer,
 * the state read again and published after a change). The handlers themselves are in
 * admin_events.c (event ...), admin_cmds.c (stats, keys, rules, limits, session-token, order),
 * admin_reconcile.c and admin_verify_draw.c.
 *
 * Most handlers run on the slow-job thread (controlplane/cp_slow.h) with a context of their
 * own: c->pg and c->rs are theirs; c->st, c->links and the rest are the loop's, touched only
 * on the loop: through the functions below, or cp_slow_on_loop() for the rest.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admin/admin_proto.h"
#include "admin/admin_request.h"
#include "common/json_writer.h"
#include "controlplane/cp_ctx.h"

/*
 * A command runs again, once, when a connection to PostgreSQL or Redis was lost under it
 * (admin_server_execute()); the second run knows it is one, and what the first saw before.
 */
struct admin_exec_try {
	bool again;	     /* this is the second run */
	bool kid_known;	     /* keys rotate: kid_before was read before the first run rotated */
	uint32_t kid_before; /* keys rotate: the current sale key before */
};

/*
 * A command's handler: runs the parsed request req (t says whether this is the second run)
 * and writes its answer, with its '\n', into out (cap bytes). Returns the answer's length.
 * A refused request is answered {"ok":false,...} and changes nothing.
 */
typedef int (*admin_exec_fn)(struct cp_ctx *c, const struct admin_req *req,
	struct admin_exec_try *t, char *out, size_t cap);

/* Said in an answer that a second run found already done. */
#define ADMIN_EXEC_NOTE_IN_PLACE                                                                \
	"the connection was lost during the command and made again; on the new one the change " \
	"was found in place (the lost try made it, or someone else did at the same time)"

/* {"ok":false,"error":"<formatted message>"}\n into out. Returns its length, or -ENOSPC. */
int admin_exec_error(char *out, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Ends the answer j writes into out (admin_json_end()). Returns its length; when it did not
 * fit, out holds a short refusal that says so instead, and its length is returned.
 */
int admin_exec_end(struct json_writer *j, char *out, size_t cap);

/*
 * A reload in two parts: admin_exec_reload_prepare() on the thread that runs the command reads
 * the state (cp_state_read()) when that is the slow-job thread (its own connections: the loop
 * does not wait on PostgreSQL), and leaves it to the loop's own context otherwise;
 * admin_exec_reload_apply(), on the loop (loop: its context, in a cp_slow_on_loop() call),
 * makes the loop's state hold it (or reads it there and then). Apply returns 0, or -errno with
 * x->err (the old state kept); every prepared x is applied once.
 */
struct admin_exec_reload {
	struct cp_state_read *rd;
	int rc;
	char err[512];
};
void admin_exec_reload_prepare(struct cp_ctx *c, struct admin_exec_reload *x);
int admin_exec_reload_apply(struct cp_ctx *loop, struct admin_exec_reload *x);

/* On the loop: admin_exec_reload_apply() (a failure logged with `after`), then publish() as
 * admin_exec_reload_and_publish() says. */
void admin_exec_reload_publish(struct cp_ctx *loop, struct admin_exec_reload *x, const char *after,
	int (*publish)(const struct cp_state *, struct cp_links *));

/* Re-reads the state from PostgreSQL after a change (admin_exec_reload_prepare() and _apply():
 * read off the loop when c is the slow-job thread's). Returns 0, or -errno with err (the old
 * state kept). */
int admin_exec_reload(struct cp_ctx *c, char *err, size_t errlen);

/*
 * After a change in PostgreSQL: admin_exec_reload() (a failure is logged with what changed,
 * `after`, and the old state kept), then publish() the part of the state the change touched to
 * every data plane (a full snapshot of the events when one left the set). Cannot fail.
 */
void admin_exec_reload_and_publish(struct cp_ctx *c, const char *after,
	int (*publish)(const struct cp_state *, struct cp_links *));

/*
 * A copy in *out of event id as the loop holds it (its stock, sold out, draw progress,
 * difficulty). Returns whether the loop holds it (false: *out untouched).
 */
bool admin_exec_event(struct cp_ctx *c, uint32_t id, struct cp_state_event *out);

/* The state of event ev's draw at now_ms (Unix ms), as event show names it: "scheduled",
 * "queueing", "drawing" or "done" (PostgreSQL's record and the clock). */
const char *admin_exec_draw_state(const struct admin_event *ev, uint64_t now_ms);

#endif
