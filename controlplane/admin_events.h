/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_ADMIN_EVENTS_H
#define FG_CP_ADMIN_EVENTS_H
/*
 * The admin commands on events (docs/operations.md "Events"), each an admin_exec_fn
 * (controlplane/admin_exec.h): they change PostgreSQL first, then Redis where the command says
 * so, then read the state again and publish it to the data planes. event verify-draw is in
 * controlplane/admin_verify_draw.h.
 */
#include "controlplane/admin_exec.h"

/* event create: a new draft event; a "warning" when it is on no data plane yet. A second run
 * that finds the same event created says so. */
int admin_events_create(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/* event preheat: loads the stock into Redis, then records the state (refused when as many
 * events as a data plane holds are preheated or open already). */
int admin_events_preheat(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/* event open, event close: the transition, then the event's window key in Redis. A second run
 * that finds the event in that state already says so. */
int admin_events_open(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);
int admin_events_close(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/* event show: the event, its draw, its Redis figures and its orders. Only reads. */
int admin_events_show(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/* event list: one page of events (--state, --after, --limit), with next_after when more
 * follow. Only reads. */
int admin_events_list(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/*
 * event archive: an event that is over leaves the data planes and Redis (its keys are deleted,
 * its PostgreSQL rows kept). Archiving an archived event deletes its Redis keys again (a purge
 * that failed before), with a note.
 */
int admin_events_archive(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

/* event pow: the operator's difficulty for the next tokens (the automatic one starts from
 * it), published at once to the data planes that hold the event. */
int admin_events_pow(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

#endif
