/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/admin_reconcile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_answer.h"
#include "common/log.h"
#include "store/store_event.h"
#include "store/store_reconcile.h"

int
admin_reconcile(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t, char *out,
	size_t cap)
{
	struct admin_event ev;
	struct pg_event_counts pc;
	struct rs_event_state rst;
	uint64_t *users = NULL, *missing = NULL;
	size_t n_users = 0, n_missing = 0;
	struct json_writer j;
	char err[512];
	int rc;

	(void)t; /* repeatable: a second run compares again */
	if ((rc = pg_event_get(c->pg, req->event_id, &ev, err, sizeof(err))) != 0 ||
		(rc = pg_event_counts(c->pg, ev.id, &pc, err, sizeof(err))) != 0 ||
		(rc = pg_event_active_users(c->pg, ev.id, &users, &n_users, err, sizeof(err))) != 0)
		return admin_answer_error(out, cap, err);
	if ((rc = rs_event_state(c->rs, ev.id, &rst)) != 0) {
		free(users);
		return admin_exec_error(
			out, cap, "reconcile: Redis is not reachable (%s)", strerror(-rc));
	}
	missing = calloc(n_users ? n_users : 1, sizeof(*missing));
	if (missing == NULL) {
		free(users);
		return admin_answer_error(out, cap, "reconcile: out of memory");
	}
	for (size_t i = 0; i < n_users; i += RS_BATCH_MAX) {
		unsigned k = (unsigned)(n_users - i < RS_BATCH_MAX ? n_users - i : RS_BATCH_MAX);
		uint8_t miss[RS_BATCH_MAX];

		if ((rc = rs_buyers_missing(c->rs, ev.id, users + i, k, miss)) != 0) {
			free(users);
			free(missing);
			return admin_exec_error(out, cap, "reconcile: Redis: %s", strerror(-rc));
		}
		for (unsigned m = 0; m < k; m++)
			if (miss[m])
				missing[n_missing++] = users[i + m];
	}
	int64_t active_pg = (int64_t)(pc.pending + pc.paid);
	int64_t unapplied = (int64_t)pc.releases_pending;
	int64_t held = (int64_t)rst.buyers + (int64_t)n_missing - (int64_t)rst.released;
	int64_t backlog = held - active_pg - unapplied;
	int64_t expected = (int64_t)pc.available - (backlog > 0 ? backlog : 0) - unapplied;
	bool stock_ok = rst.preheated && rst.stock == expected;
	bool ok = stock_ok && n_missing == 0 && backlog >= 0;
	bool repaired = false;

	if (expected < 0)
		expected = 0;
	if (req->repair && !ok) {
		if (ev.state == ADMIN_EV_OPEN && !req->force) {
			free(users);
			free(missing);
			return admin_exec_error(out, cap,
				"reconcile: event %u is open: repairing a running sale could "
				"resell stock; close it first, or add --force",
				ev.id);
		}
		for (size_t i = 0; i < n_missing; i += RS_BATCH_MAX) {
			unsigned k = (unsigned)(n_missing - i < RS_BATCH_MAX ? n_missing - i
									     : RS_BATCH_MAX);

			rc = rs_repair(c->rs, ev.id, expected, missing + i, k);
			if (rc != 0)
				break;
		}
		if (n_missing == 0)
			rc = rs_repair(c->rs, ev.id, expected, NULL, 0);
		if (rc != 0) {
			free(users);
			free(missing);
			return admin_exec_error(
				out, cap, "reconcile: repair failed in Redis: %s", strerror(-rc));
		}
		repaired = true;
		LOG_NOTICE("event %u reconciled: Redis stock %" PRId64 " -> %" PRId64
			   ", %zu buyer(s) restored",
			ev.id, rst.stock, expected, n_missing);
		if (admin_exec_reload(c, err, sizeof(err)) == 0)
			cp_state_publish_events(c->st, c->links);
	}
	admin_json_ok(&j, out, cap);
	jw_u64(&j, "event_id", ev.id);
	jw_bool(&j, "consistent", ok);
	jw_bool(&j, "repaired", repaired);
	jw_open(&j, "postgres", '{');
	jw_u64(&j, "initial", pc.initial);
	jw_u64(&j, "available", pc.available);
	jw_u64(&j, "pending", pc.pending);
	jw_u64(&j, "paid", pc.paid);
	jw_u64(&j, "expired", pc.expired);
	jw_u64(&j, "cancelled", pc.cancelled);
	jw_u64(&j, "releases_unapplied", pc.releases_pending);
	jw_close(&j, '}');
	jw_open(&j, "redis", '{');
	jw_bool(&j, "preheated", rst.preheated);
	jw_i64(&j, "stock", rst.stock);
	jw_u64(&j, "buyers", rst.buyers);
	jw_u64(&j, "released", rst.released);
	jw_u64(&j, "outbox", rst.outbox_len);
	jw_close(&j, '}');
	jw_i64(&j, "backlog", backlog);
	jw_i64(&j, "expected_stock", expected);
	jw_open(&j, "differences", '[');
	if (!rst.preheated)
		jw_str(&j, NULL, "Redis has no stock for this event (not preheated, or lost)");
	else if (!stock_ok) {
		char d[200];

		snprintf(d, sizeof(d),
			"Redis stock is %" PRId64 ", PostgreSQL says %" PRId64
			" (available %u - backlog %" PRId64 " - unapplied releases %" PRId64 ")",
			rst.stock, expected, pc.available, backlog > 0 ? backlog : 0, unapplied);
		jw_str(&j, NULL, d);
	}
	for (size_t i = 0; i < n_missing && i < 20; i++) {
		char d[120];

		snprintf(d, sizeof(d),
			"user %" PRIu64
			" has an order but is not a buyer in Redis (no result field)",
			missing[i]);
		jw_str(&j, NULL, d);
	}
	if (n_missing > 20) {
		char d[80];

		snprintf(d, sizeof(d), "... %zu users in all", n_missing);
		jw_str(&j, NULL, d);
	}
	if (backlog < 0) {
		char d[160];

		snprintf(d, sizeof(d),
			"Redis holds %" PRId64 " reservation(s) fewer than PostgreSQL has orders",
			-backlog);
		jw_str(&j, NULL, d);
	}
	jw_close(&j, ']');
	free(users);
	free(missing);
	return admin_exec_end(&j, out, cap);
}
