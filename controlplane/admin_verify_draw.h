/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_ADMIN_VERIFY_DRAW_H
#define FG_CP_ADMIN_VERIFY_DRAW_H
/* event verify-draw EVENT [--commitment HEX] (docs/fairness.md "Verify it yourself"). */
#include "controlplane/admin_exec.h"

/*
 * event verify-draw: recomputes event req->event_id's draw from what PostgreSQL holds (the
 * seed against its commitment, the entrants' digest, every rank, which entrants hold orders)
 * with common/draw, as docs/fairness.md says anyone can. The first mismatch is a refusal.
 * Only reads. An admin_exec_fn (controlplane/admin_exec.h).
 */
int admin_verify_draw(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

#endif
