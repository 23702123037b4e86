/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_ADMIN_RECONCILE_H
#define FG_CP_ADMIN_RECONCILE_H
/* reconcile EVENT [--repair [--force]] (docs/operations.md "Repairing Redis"). */
#include "controlplane/admin_exec.h"

/*
 * Compares Redis with PostgreSQL for one event and, with --repair, makes Redis agree.
 * PostgreSQL is the truth: initial = available + pending + paid there. In Redis, buyers (the
 * fields of the result hash, one per user who reserved) - released are the reservations still
 * held; of those, pending + paid have orders, the expired ones whose release has not reached
 * Redis yet are still counted, and the rest (the backlog) wait in the outbox for the order
 * writer. So Redis's stock must be available - backlog - unapplied releases, and every user
 * with an active order must be a buyer.
 *
 * Each side is true at the moment it is read, and during a live sale the two moments differ
 * (an expiry recorded in PostgreSQL, then its release applied in Redis, in between). So the
 * figures are read again until two readings in a row agree (at most ADMIN_RECONCILE_READINGS):
 * then nothing moved from the first's read to the second's, and the second is one moment of
 * both ("settled": true, and "consistent" judges it). When no two agree, the answer says so
 * ("settled": false, no "consistent", one line in "differences") and --repair changes
 * nothing. A repair of an open event needs --force. An admin_exec_fn
 * (controlplane/admin_exec.h).
 */
#define ADMIN_RECONCILE_READINGS 8

int admin_reconcile(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap);

#endif
