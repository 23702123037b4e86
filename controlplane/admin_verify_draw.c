/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/admin_verify_draw.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_answer.h"
#include "common/draw.h"
#include "common/hex.h"
#include "common/log.h"
#include "common/now.h"
#include "common/sort_u64.h"

/* A failed check of event verify-draw: the first mismatch, with what was checked. */
static int verify_failed(char *out, size_t cap, const struct admin_event *ev, size_t n,
	const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
verify_failed(char *out, size_t cap, const struct admin_event *ev, size_t n, const char *fmt, ...)
{
	char what[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	LOG_WARN("event verify-draw %u: the draw does NOT check out: %s", ev->id, what);
	return admin_exec_error(out, cap,
		"event verify-draw: event %u: the draw does NOT check out (%zu entrants, stock "
		"%u): %s",
		ev->id, n, ev->stock, what);
}

int
admin_verify_draw(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	struct admin_event ev;
	struct pg_draw_entrant *v = NULL;
	uint64_t *users = NULL, *ranked = NULL;
	uint8_t commitment[DRAW_DIGEST_LEN], digest[DRAW_DIGEST_LEN];
	char hex[2 * DRAW_DIGEST_LEN + 1], hex2[2 * DRAW_DIGEST_LEN + 1];
	struct json_writer j;
	size_t n = 0, winners, ordered = 0;
	char err[512];
	int rc;

	(void)t; /* only reads */
	if ((rc = pg_event_get(c->pg, req->event_id, &ev, err, sizeof(err))) != 0)
		return admin_answer_error(out, cap, err);
	if (ev.draw_window_s == 0)
		return admin_exec_error(out, cap,
			"event verify-draw: event %u has no draw (draw window 0: first come, first "
			"served): there is nothing to verify",
			ev.id);
	if (ev.draw_done_at_ms == 0)
		return admin_exec_error(out, cap,
			"event verify-draw: event %u's draw is not done yet (%s): its seed is "
			"revealed, and the draw can be checked, once every entrant is decided",
			ev.id, admin_exec_draw_state(&ev, now_wall_ms()));
	if (!ev.has_seed || !ev.has_digest)
		return verify_failed(out, cap, &ev, 0,
			"PostgreSQL has no %s for a draw that is done",
			!ev.has_seed ? "seed (events.draw_seed)" : "digest (events.draw_digest)");
	if ((rc = pg_draw_entrants(c->pg, ev.id, &v, &n, err, sizeof(err))) != 0)
		return admin_answer_error(out, cap, err);
	if (n > 0 && ((users = malloc(n * sizeof(*users))) == NULL ||
			     (ranked = malloc(n * sizeof(*ranked))) == NULL)) {
		rc = admin_exec_error(
			out, cap, "event verify-draw: out of memory for %zu entrants", n);
		goto out;
	}
	draw_commitment(ev.draw_seed, commitment);
	hex_str(commitment, DRAW_DIGEST_LEN, hex);
	if (req->has_commitment && memcmp(commitment, req->commitment, sizeof(commitment)) != 0) {
		hex_str(req->commitment, DRAW_DIGEST_LEN, hex2);
		rc = verify_failed(out, cap, &ev, n,
			"SHA-256 of the seed is %s, not the commitment given (%s)", hex, hex2);
		goto out;
	}
	if (n != ev.draw_entrants) {
		rc = verify_failed(out, cap, &ev, n,
			"draw_entrants holds %zu entrants, events.draw_entrants says %u", n,
			ev.draw_entrants);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].rank != i + 1) {
			rc = verify_failed(out, cap, &ev, n,
				"the ranks are not 1..%zu: rank %zu is missing (user %" PRIu64
				" has rank %" PRIu32 ")",
				n, i + 1, v[i].user, v[i].rank);
			goto out;
		}
		users[i] = ranked[i] = v[i].user;
	}
	if (sort_u64(users, n, sizeof(*users), 0) != 0) {
		rc = admin_exec_error(
			out, cap, "event verify-draw: out of memory for %zu entrants", n);
		goto out;
	}
	if (draw_entrants_digest(ev.id, users, n, digest) != 0 ||
		memcmp(digest, ev.draw_digest, sizeof(digest)) != 0) {
		hex_str(digest, DRAW_DIGEST_LEN, hex);
		hex_str(ev.draw_digest, DRAW_DIGEST_LEN, hex2);
		rc = verify_failed(out, cap, &ev, n,
			"the digest of the entrants' users is %s, events.draw_digest is %s (the "
			"entrants changed after they were fixed)",
			hex, hex2);
		goto out;
	}
	if (draw_order(ev.draw_seed, ev.id, ev.draw_digest, users, n) != 0) {
		rc = admin_exec_error(
			out, cap, "event verify-draw: out of memory for %zu entrants", n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (users[i] != ranked[i]) {
			rc = verify_failed(out, cap, &ev, n,
				"rank %zu is user %" PRIu64 " in draw_entrants, the draw gives "
				"user %" PRIu64,
				i + 1, ranked[i], users[i]);
			goto out;
		}
	}
	winners = ev.stock < n ? ev.stock : n;
	/* Beyond the first winners, the items returned went to the waiting list by rank: the
	 * entrants holding orders are ranks 1..winners + returned, no gap (docs/fairness.md). */
	size_t gap = 0; /* the first rank past the winners without an order (0: none yet) */

	for (size_t i = 0; i < n; i++) {
		ordered += v[i].ordered;
		if (v[i].ordered && i >= winners && gap != 0) {
			rc = verify_failed(out, cap, &ev, n,
				"user %" PRIu64 " (rank %zu) has an order of reservation %" PRIu64
				", but rank %zu (user %" PRIu64 ") before it has none: the items "
				"returned did not go to the waiting list in rank order (if the sale "
				"just ended, the order writer may not have written it yet)",
				v[i].user, i + 1, v[i].reservation_id, gap, v[gap - 1].user);
			goto out;
		}
		if (!v[i].ordered && i >= winners && gap == 0)
			gap = i + 1;
		if (!v[i].ordered && i < winners) {
			rc = verify_failed(out, cap, &ev, n,
				"user %" PRIu64 " (rank %zu, one of the first %zu) has no order of "
				"reservation %" PRIu64 " (if the sale just ended, the order writer "
				"may not have written it yet: stats shows its backlog)",
				v[i].user, i + 1, winners, v[i].reservation_id);
			goto out;
		}
	}
	size_t returned = ordered - winners;
	char msg[400];

	snprintf(msg, sizeof(msg),
		"event %u: the draw checks out: %zu entrants, every rank recomputed from the seed "
		"and the entrants' digest; the first %zu by rank (stock %u) hold the orders, and "
		"the next %zu by rank the items returned to the waiting list; no other entrant "
		"does%s",
		ev.id, n, winners, ev.stock, returned,
		req->has_commitment ? "; the seed matches the commitment given"
				    : "; compare seed_sha256 with the one published before the "
				      "pre-queue opened (or give --commitment)");
	admin_json_ok(&j, out, cap);
	jw_str(&j, "message", msg);
	jw_str(&j, "verdict", "ok");
	jw_u64(&j, "event_id", ev.id);
	jw_u64(&j, "entrants", n);
	jw_u64(&j, "stock", ev.stock);
	jw_u64(&j, "winners", winners);
	jw_u64(&j, "ordered", ordered);
	jw_u64(&j, "returned_to_list", returned);
	jw_u64(&j, "ranks_checked", n);
	hex_str(commitment, DRAW_DIGEST_LEN, hex);
	jw_str(&j, "seed_sha256", hex);
	jw_bool(&j, "commitment_checked", req->has_commitment);
	hex_str(ev.draw_digest, DRAW_DIGEST_LEN, hex);
	jw_str(&j, "entrants_digest", hex);
	hex_str(ev.draw_seed, DRAW_DIGEST_LEN, hex);
	jw_str(&j, "seed", hex);
	rc = admin_exec_end(&j, out, cap);
out:
	free(v);
	free(users);
	free(ranked);
	return rc;
}
