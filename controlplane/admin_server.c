/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/admin_server.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/draw.h"
#include "common/log.h"
#include "common/now.h"
#include "common/token.h"
#include "controlplane/admin_answer.h"
#include "controlplane/admin_request.h"
#include "store/store_event.h"
#include "store/store_reconcile.h"

int
admin_listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "admin socket path %s is too long (at most %zu bytes)", path,
			sizeof(sa.sun_path) - 1);
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	/* A socket file that nobody answers on is a dead control plane's: replace it. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		snprintf(err, errlen,
			"another control plane answers on %s: stop it first, or set "
			"controlplane.admin_socket",
			path);
		return -1;
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* 0600 from the start: no moment where another user could connect. */
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));

	umask(old);
	if (rc != 0 || listen(fd, 16) != 0) {
		snprintf(err, errlen, "cannot listen on %s: %s (does its directory exist?)", path,
			strerror(errno));
		close(fd);
		return -1;
	}
	chmod(path, 0600);
	return fd;
}

/*
 * A command runs again, once, when a connection to PostgreSQL or Redis was lost under it
 * (admin_execute()); the second run knows it is one, and what the first saw before.
 */
struct admin_try {
	bool again;	     /* this is the second run */
	bool kid_known;	     /* keys rotate: kid_before was read before the first run rotated */
	uint32_t kid_before; /* keys rotate: the current sale key before */
};

/* Said in an answer that a second run found already done. */
#define NOTE_IN_PLACE                                                                           \
	"the connection was lost during the command and made again; on the new one the change " \
	"was found in place (the lost try made it, or someone else did at the same time)"

/* Re-reads the state from PostgreSQL after a change; logs and keeps the old one on failure. */
static int
reload(struct cp_ctx *c, char *err, size_t errlen)
{
	return cp_state_load(c->st, c->pg, c->rs, err, errlen);
}

/*
 * After a change in PostgreSQL: reload() (a failure is logged with what changed, `after`, and
 * the old state kept), then publish() the part of the state the change touched to every data
 * plane.
 */
static void
reload_and_publish(
	struct cp_ctx *c, const char *after, int (*publish)(const struct cp_state *, struct cp_links *))
{
	char err[512];

	if (reload(c, err, sizeof(err)) != 0)
		LOG_WARN("state reload after %s: %s", after, err);
	/* An event left the data planes' set (archived, or its slot went to another): they
	 * replace theirs with a snapshot, which carries what publish() would send too. */
	if (c->st->events_dropped)
		cp_state_publish_event_set(c->st, c->links);
	else
		publish(c->st, c->links);
}

/* "forward_share": what each live data plane takes of the forward budget l (docs/limits.md). */
static void
json_forward_share(struct json_writer *j, const struct cp_ctx *c, const struct wire_limits *l)
{
	struct wire_limits share;
	unsigned n = c->st->forward_shares != 0 ? c->st->forward_shares : 1;

	cp_state_limits_share(l, n, &share);
	jw_open(j, "forward_share", '{');
	jw_u64(j, "data_planes", n);
	jw_u64(j, "rate", share.event_forward_per_s);
	jw_u64(j, "burst", share.event_forward_burst);
	jw_close(j, '}');
}

static int
answer_error(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
answer_error(char *out, size_t cap, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return admin_answer_error(out, cap, msg);
}

static int
end(struct json_writer *j, char *out, size_t cap)
{
	int n = admin_json_end(j);

	return n >= 0 ? n : admin_answer_error(out, cap, "the answer does not fit: use --json");
}

/* The state of event ev's draw at now_ms, as event show names it (PostgreSQL and the clock). */
static const char *
draw_state_name(const struct admin_event *ev, uint64_t now_ms)
{
	if (ev->draw_done_at_ms != 0)
		return "done";
	if (ev->has_digest || now_ms >= admin_event_draw_at_ms(ev))
		return "drawing";
	return now_ms >= ev->queue_opens_at_ms ? "queueing" : "scheduled";
}

/*
 * "draw" of an event with one (docs/fairness.md): its state (scheduled, queueing, drawing,
 * done), the entrants (so far, then fixed) and their digest once fixed, decided and the rate
 * (what this control plane's draw runner knows, ce; NULL: PostgreSQL's), and once done when
 * and the seed.
 */
static void
json_draw(struct json_writer *j, const struct admin_event *ev, const struct cp_event *ce,
	uint64_t now_ms)
{
	char hex[2 * DRAW_DIGEST_LEN + 1];
	bool done = ev->draw_done_at_ms != 0;
	const struct cp_draw *d = ce != NULL ? &ce->draw : NULL;

	if (ev->draw_window_s == 0)
		return;
	jw_open(j, "draw", '{');
	jw_str(j, "state", draw_state_name(ev, now_ms));
	if (ev->has_digest)
		jw_u64(j, "entrants", ev->draw_entrants);
	else if (d != NULL && d->state != WIRE_DRAW_NONE)
		jw_u64(j, "entrants", d->entrants);
	if (ev->has_digest || (d != NULL && d->has_digest)) {
		draw_hex(ev->has_digest ? ev->draw_digest : d->digest, hex);
		jw_str(j, "entrants_digest", hex);
	}
	if (done) {
		jw_u64(j, "decided", ev->draw_entrants);
		jw_time(j, "done_at", ev->draw_done_at_ms);
	} else if (d != NULL && d->state >= WIRE_DRAW_DRAWING) {
		jw_u64(j, "decided", d->decided);
		jw_u64(j, "rate", d->rate);
	}
	/* The seed only once every entrant is decided: before, it would tell who wins. */
	if (done && ev->has_seed) {
		draw_hex(ev->draw_seed, hex);
		jw_str(j, "seed", hex);
	}
	jw_close(j, '}');
}

/*
 * An event as event show, preheat, open and close answer it (docs/operations.md): "event" is
 * the event object, the same as event create and event list write; its sold_out, Redis and
 * order figures are members of the answer beside it, not inside it.
 */
static void
json_event_full(struct cp_ctx *c, struct json_writer *j, const struct admin_event *ev)
{
	struct rs_event_state rst;
	struct pg_event_counts pc;
	char err[256];
	const struct cp_event *ce = cp_state_event(c->st, ev->id);

	admin_json_event(j, "event", ev);
	if (ce != NULL)
		jw_bool(j, "sold_out", ce->sold_out);
	jw_u64(j, "pow_bits_now", ce != NULL ? ce->pow_bits_now : ev->pow_bits);
	json_draw(j, ev, ce, now_wall_ms());
	if (rs_event_state(c->rs, ev->id, &rst) == 0) {
		jw_open(j, "redis", '{');
		jw_bool(j, "preheated", rst.preheated);
		jw_i64(j, "stock", rst.stock);
		jw_u64(j, "buyers", rst.buyers);
		jw_u64(j, "outbox", rst.outbox_len);
		jw_u64(j, "released", rst.released);
		jw_close(j, '}');
	} else {
		jw_str(j, "redis", "unreachable");
	}
	if (pg_event_counts(c->pg, ev->id, &pc, err, sizeof(err)) == 0) {
		jw_open(j, "orders", '{');
		jw_u64(j, "pending", pc.pending);
		jw_u64(j, "paid", pc.paid);
		jw_u64(j, "expired", pc.expired);
		jw_u64(j, "cancelled", pc.cancelled);
		jw_u64(j, "releases_pending", pc.releases_pending);
		jw_close(j, '}');
	}
}

/*
 * The answer of a transition run again after a lost connection that finds event ev already in
 * the state asked for: the lost try may have committed, and the data planes may not have heard
 * of it yet.
 */
static int
answer_in_place(struct cp_ctx *c, const struct admin_event *ev, char *out, size_t cap)
{
	struct json_writer j;

	reload_and_publish(c, "a transition found done", cp_state_publish_events);
	LOG_NOTICE("event %u is %s (found so after a lost connection)", ev->id,
		admin_event_state_name(ev->state));
	admin_json_ok(&j, out, cap);
	json_event_full(c, &j, ev);
	jw_str(&j, "note", NOTE_IN_PLACE);
	return end(&j, out, cap);
}

/* Changes an event's state in PostgreSQL and tells the data planes. */
static int
do_transition(struct cp_ctx *c, const struct admin_req *req, enum admin_event_state to,
	const struct admin_try *t, char *out, size_t cap)
{
	struct admin_event ev;
	struct json_writer j;
	char err[512];
	int rc;

	if ((rc = pg_event_get(c->pg, req->event_id, &ev, err, sizeof(err))) != 0)
		return admin_answer_error(out, cap, err);
	if (t->again && ev.state == to && to != ADMIN_EV_PREHEATED)
		return answer_in_place(c, &ev, out, cap);
	if (to == ADMIN_EV_PREHEATED) {
		/* Check the transition before touching Redis, then load the stock, then record
		 * it: a preheat that Redis refuses changes nothing in PostgreSQL. */
		if (admin_event_transition(ev.id, ev.state, to, err, sizeof(err)) != 0)
			return admin_answer_error(out, cap, err);
		rc = rs_preheat(c->rs, ev.id, ev.available);
		if (rc == -EBUSY)
			return answer_error(out, cap,
				"event preheat: event %u already has buyers in Redis: a sale ran, "
				"its stock is not overwritten (reconcile repairs it)",
				ev.id);
		if (rc != 0)
			return answer_error(out, cap,
				"event preheat: Redis is not reachable (%s): nothing changed",
				strerror(-rc));
	}
	if ((rc = pg_event_set_state(c->pg, ev.id, to, &ev, err, sizeof(err))) != 0) {
		/* A second run refused as "already so": the lost try (or someone else) made it
		 * while this one waited for the row. */
		if (rc == -EPERM && t->again && to != ADMIN_EV_PREHEATED &&
			pg_event_get(c->pg, req->event_id, &ev, err, sizeof(err)) == 0 &&
			ev.state == to)
			return answer_in_place(c, &ev, out, cap);
		return admin_answer_error(out, cap, err);
	}
	char what[48];

	snprintf(what, sizeof(what), "event %u changed", ev.id);
	reload_and_publish(c, what, cp_state_publish_events);
	/* The sale stops (or starts) in Redis itself before the answer: a reservation racing a
	 * close is decided before this SET or refused by reserve.lua after it. */
	bool window_set = cp_state_sync_windows(c->st, c->rs) == 0;

	LOG_NOTICE("event %u is now %s", ev.id, admin_event_state_name(ev.state));
	admin_json_ok(&j, out, cap);
	json_event_full(c, &j, &ev);
	if (!window_set)
		jw_str(&j, "note",
			"Redis is not reachable: the control plane refuses outside the sale, and "
			"writes the event's window key in Redis when it is back");
	return end(&j, out, cap);
}

/* event create: a "warning" when the new event is on no data plane (64 better claims). */
static void
warn_no_slot(struct cp_ctx *c, struct json_writer *j, uint32_t id)
{
	char w[320];

	if (cp_state_event(c->st, id) != NULL)
		return;
	snprintf(w, sizeof(w),
		"event %u is on no data plane yet: they hold %d events, open and preheated ones "
		"first, then the earliest starts_at; it gets a slot when one of those ends or is "
		"closed (docs/operations.md \"More than 64 events\")",
		id, CP_MAX_EVENTS);
	jw_str(j, "warning", w);
	LOG_WARN("%s", w);
}

/*
 * event archive: an event that is over leaves the data planes and Redis (its keys are deleted,
 * its PostgreSQL rows kept). Archiving an archived event deletes its Redis keys again (a purge
 * that failed before), with a note.
 */
static int
do_archive(struct cp_ctx *c, const struct admin_req *req, char *out, size_t cap)
{
	struct admin_event ev;
	struct rs_event_state rst;
	struct json_writer j;
	char err[512];
	int rc;

	/* Every buyer Redis holds must be an order first: the order writer reads the outbox. */
	if ((rc = rs_event_state(c->rs, req->event_id, &rst)) != 0)
		return answer_error(out, cap,
			"event archive: Redis is not reachable (%s): nothing changed",
			strerror(-rc));
	rc = pg_event_archive(c->pg, req->event_id, rst.buyers, &ev, err, sizeof(err));
	bool again = rc == -EALREADY;

	if (rc != 0 && !again)
		return admin_answer_error(out, cap, err);
	if ((rc = rs_purge_event(c->rs, ev.id)) != 0)
		return answer_error(out, cap,
			"event archive: event %u is archived, but Redis did not delete its keys "
			"(%s): run event archive %u again",
			ev.id, strerror(-rc), ev.id);
	reload_and_publish(c, "event archive", cp_state_publish_events);
	if (!again)
		LOG_NOTICE("event %u archived: its Redis keys are deleted, its rows kept", ev.id);
	admin_json_ok(&j, out, cap);
	admin_json_event(&j, "event", &ev);
	if (again)
		jw_str(&j, "note", "it was archived already; its Redis keys are deleted");
	return end(&j, out, cap);
}

struct rules_ctx {
	struct json_writer *j;
};

static int
list_rule(const struct admin_rule *r, uint64_t created_at_ms, void *arg)
{
	struct rules_ctx *rc = arg;

	admin_json_rule(rc->j, NULL, r, created_at_ms);
	return 0;
}

static int
do_stats(struct cp_ctx *c, char *out, size_t cap)
{
	struct decider_counters dc;
	struct cp_links_counters lc;
	struct rs_stats rs;
	struct json_writer j;

	decider_counters(c->dec, &dc);
	cp_links_counters(c->links, &lc);
	rs_get_stats(c->rs, &rs);
	uint64_t now_ms = now_wall_ms();

	admin_json_ok(&j, out, cap);
	jw_u64(&j, "uptime_s", (now_ms - c->started_ms) / 1000);
	jw_open(&j, "decisions", '{');
	jw_u64(&j, "received", dc.received);
	jw_u64(&j, "decided", dc.decided);
	for (unsigned v = 1; v < WIRE_V_MAX; v++)
		if (dc.verdicts[v] || v <= WIRE_V_RETRY)
			jw_u64(&j, wire_verdict_name(v), dc.verdicts[v]);
	jw_u64(&j, "rounds", dc.rounds);
	jw_u64(&j, "batches", dc.batches);
	jw_u64(&j, "sold_out_published", dc.sold_out_published);
	jw_u64(&j, "result_queries", dc.queries);
	jw_u64(&j, "result_queries_found", dc.queries_found);
	jw_u64(&j, "result_queries_shed", dc.queries_shed);
	jw_u64(&j, "duplicates_republished", dc.held_published);
	jw_u64(&j, "bad_records", dc.bad_records);
	jw_u64(&j, "outside_sale", dc.outside_sale);
	jw_u64(&j, "enter_batches", dc.enter_batches);
	jw_u64(&j, "entrants_new", dc.entrants_new);
	jw_u64(&j, "draw_waiting", dc.draw_waiting);
	jw_close(&j, '}');
	jw_open(&j, "redis", '{');
	jw_bool(&j, "connected", rs_connected(c->rs));
	jw_u64(&j, "outages", rs.outages);
	jw_u64(&j, "connects", rs.connects);
	jw_u64(&j, "errors", rs.errors);
	jw_u64(&j, "retry", rs.retry);
	jw_u64(&j, "outside_window", rs.outside_window);
	jw_u64(&j, "draw_refused", rs.draw_refused);
	jw_close(&j, '}');
	jw_open(&j, "links", '{');
	jw_u64(&j, "reservations_in", lc.records_in[WIRE_T_RESERVE]);
	jw_u64(&j, "snapshot_requests", lc.msgs_in[WIRE_T_SNAPSHOT_REQUEST]);
	jw_u64(&j, "result_queries_in", lc.records_in[WIRE_T_RESULT_QUERY]);
	jw_u64(&j, "results_out", lc.records_out[WIRE_T_RESULT]);
	jw_u64(&j, "snapshots_out", lc.msgs_out[WIRE_T_SNAPSHOT_END]);
	jw_u64(&j, "send_errors", lc.send_errors);
	jw_u64(&j, "wrong_direction", lc.wrong_direction);
	jw_u64(&j, "wrong_role", lc.wrong_role);
	jw_u64(&j, "clients_allowed", lc.zap.allowed);
	jw_u64(&j, "clients_refused", lc.zap.refused_unknown + lc.zap.refused_role);
	jw_u64(&j, "handshakes_failed", lc.zap.handshake_failed);
	jw_u64(&j, "disconnected", lc.zap.disconnected);
	jw_u64(&j, "clients_file_reloads", lc.zap.reloads);
	jw_u64(&j, "clients_file_errors", lc.zap.reload_errors);
	for (unsigned i = 0; i < WIRE_ERR_MAX; i++)
		if (lc.decode_errors[i]) {
			char name[64];

			snprintf(name, sizeof(name), "decode_error_%s", wire_err_name(-(int)i - 1));
			jw_u64(&j, name, lc.decode_errors[i]);
		}
	jw_close(&j, '}');
	if (c->admin != NULL) {
		struct admin_conns_counters ac;

		admin_conns_get_counters(c->admin, &ac);
		jw_open(&j, "admin", '{');
		jw_u64(&j, "requests", ac.requests);
		jw_u64(&j, "refused", ac.refused);
		jw_u64(&j, "open", ac.open);
		jw_u64(&j, "timed_out", ac.timed_out);
		jw_u64(&j, "too_long", ac.too_long);
		jw_u64(&j, "busy", ac.busy);
		jw_u64(&j, "client_gone", ac.client_gone);
		jw_close(&j, '}');
	}
	if (c->draws != NULL)
		draw_runner_json(c->draws, &j);
	if (c->ids != NULL)
		dp_ids_json(c->ids, &j, now_ms);
	if (c->dps != NULL)
		dp_stats_json(c->dps, &j, now_ms, true);
	return end(&j, out, cap);
}

static int
do_session_token(struct cp_ctx *c, const struct admin_req *req, char *out, size_t cap)
{
	struct tok_keyring ring;
	char tok[TOK_BUF_SIZE];
	struct json_writer j;

	if (c->st->auth_len == 0)
		return admin_answer_error(out, cap,
			"session-token: no auth key yet: set the shop's with keys auth-set KID (the "
			"key on standard input)");
	tok_keyring_init(&ring);
	tok_keyring_set(&ring, c->st->auth_kid, c->st->auth_secret, c->st->auth_len, true);
	uint64_t expires_s = now_wall_ms() / 1000 + req->ttl_s;
	int n = tok_session_mint(&ring, req->user, expires_s, tok, sizeof(tok));

	tok_keyring_wipe(&ring);
	if (n < 0)
		return answer_error(out, cap, "session-token: cannot mint: %s", strerror(-n));
	admin_json_ok(&j, out, cap);
	jw_str(&j, "token", tok);
	jw_u64(&j, "user", req->user);
	jw_time(&j, "expires_at", expires_s * 1000);
	return end(&j, out, cap);
}

/*
 * Compares Redis with PostgreSQL for one event and, with --repair, makes Redis
 * agree. PostgreSQL is the truth: initial = available + pending + paid there.
 * In Redis, buyers (the fields of the result hash, one per user who reserved)
 * - released are the reservations still held; of those,
 * pending + paid have orders, the expired ones whose release has not reached
 * Redis yet are still counted, and the rest (the backlog) wait in the outbox
 * for the order writer. So Redis's stock must be available - backlog -
 * unapplied releases, and every user with an active order must be a buyer.
 */
static int
do_reconcile(struct cp_ctx *c, const struct admin_req *req, char *out, size_t cap)
{
	struct admin_event ev;
	struct pg_event_counts pc;
	struct rs_event_state rst;
	uint64_t *users = NULL, *missing = NULL;
	size_t n_users = 0, n_missing = 0;
	struct json_writer j;
	char err[512];
	int rc;

	if ((rc = pg_event_get(c->pg, req->event_id, &ev, err, sizeof(err))) != 0 ||
		(rc = pg_event_counts(c->pg, ev.id, &pc, err, sizeof(err))) != 0 ||
		(rc = pg_event_active_users(c->pg, ev.id, &users, &n_users, err, sizeof(err))) != 0)
		return admin_answer_error(out, cap, err);
	if ((rc = rs_event_state(c->rs, ev.id, &rst)) != 0) {
		free(users);
		return answer_error(out, cap, "reconcile: Redis is not reachable (%s)",
			strerror(-rc));
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
			return answer_error(out, cap, "reconcile: Redis: %s", strerror(-rc));
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
			return answer_error(out, cap,
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
			return answer_error(out, cap, "reconcile: repair failed in Redis: %s",
				strerror(-rc));
		}
		repaired = true;
		LOG_NOTICE("event %u reconciled: Redis stock %" PRId64 " -> %" PRId64
			   ", %zu buyer(s) restored",
			ev.id, rst.stock, expected, n_missing);
		if (reload(c, err, sizeof(err)) == 0)
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
	return end(&j, out, cap);
}

/* The current sale key's id in *kid (0: none), read from PostgreSQL. */
static int
current_sale_kid(struct cp_ctx *c, uint32_t *kid, char *err, size_t errlen)
{
	struct admin_key keys[CP_MAX_KEYS];
	unsigned n;
	int rc = pg_keys_list(c->pg, c->st->key_life_ms, keys, CP_MAX_KEYS, &n, err, errlen);

	*kid = 0;
	for (unsigned i = 0; rc == 0 && i < n && i < CP_MAX_KEYS; i++)
		if (keys[i].kind == WIRE_KEY_SALE && keys[i].current)
			*kid = keys[i].kid;
	explicit_bzero(keys, sizeof(keys));
	return rc;
}

/* event pow: the operator's difficulty, for the next tokens (the automatic one starts from it). */
static int
do_pow(struct cp_ctx *c, const struct admin_req *req, char *out, size_t cap)
{
	struct admin_event ev;
	struct json_writer j;
	struct cp_event *ce;
	char err[512];
	int rc;

	rc = pg_event_set_pow(c->pg, req->event_id, req->pow_bits, req->pow_auto_given,
		req->pow_auto_max, &ev, err, sizeof(err));
	if (rc != 0)
		return admin_answer_error(out, cap, err);
	if (reload(c, err, sizeof(err)) != 0)
		LOG_WARN("state reload after event pow: %s", err);
	ce = cp_state_event(c->st, ev.id);
	if (ce != NULL) {
		ce->pow_bits_now = ev.pow_bits;
		ce->pow_moved_ms = now_wall_ms();
		cp_pow_publish(ce, c->links);
		if (c->pow != NULL)
			cp_pow_show(c->pow, c->st);
	}
	LOG_NOTICE("event %u: challenge set to %u bits (automatic up to %u)", ev.id, ev.pow_bits,
		ev.pow_auto_max);
	admin_json_ok(&j, out, cap);
	admin_json_event(&j, "event", &ev);
	jw_u64(&j, "pow_bits_now", ev.pow_bits);
	if (ce == NULL)
		jw_str(&j, "note",
			"the event is on no data plane now: they get its difficulty with its slot");
	return end(&j, out, cap);
}

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
	return answer_error(out, cap,
		"event verify-draw: event %u: the draw does NOT check out (%zu entrants, stock "
		"%u): %s",
		ev->id, n, ev->stock, what);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * event verify-draw: recomputes event req->event_id's draw from what PostgreSQL holds (the
 * seed against its commitment, the entrants' digest, every rank, which entrants hold orders)
 * with common/draw, as docs/fairness.md says anyone can. The first mismatch is a refusal.
 */
static int
do_verify_draw(struct cp_ctx *c, const struct admin_req *req, char *out, size_t cap)
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

	if ((rc = pg_event_get(c->pg, req->event_id, &ev, err, sizeof(err))) != 0)
		return admin_answer_error(out, cap, err);
	if (ev.draw_window_s == 0)
		return answer_error(out, cap,
			"event verify-draw: event %u has no draw (draw window 0: first come, first "
			"served): there is nothing to verify",
			ev.id);
	if (ev.draw_done_at_ms == 0)
		return answer_error(out, cap,
			"event verify-draw: event %u's draw is not done yet (%s): its seed is "
			"revealed, and the draw can be checked, once every entrant is decided",
			ev.id, draw_state_name(&ev, now_wall_ms()));
	if (!ev.has_seed || !ev.has_digest)
		return verify_failed(out, cap, &ev, 0,
			"PostgreSQL has no %s for a draw that is done",
			!ev.has_seed ? "seed (events.draw_seed)" : "digest (events.draw_digest)");
	if ((rc = pg_draw_entrants(c->pg, ev.id, &v, &n, err, sizeof(err))) != 0)
		return admin_answer_error(out, cap, err);
	if (n > 0 && ((users = malloc(n * sizeof(*users))) == NULL ||
			     (ranked = malloc(n * sizeof(*ranked))) == NULL)) {
		rc = answer_error(out, cap, "event verify-draw: out of memory for %zu entrants", n);
		goto out;
	}
	draw_commitment(ev.draw_seed, commitment);
	draw_hex(commitment, hex);
	if (req->has_commitment && memcmp(commitment, req->commitment, sizeof(commitment)) != 0) {
		draw_hex(req->commitment, hex2);
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
	if (n > 0)
		qsort(users, n, sizeof(*users), cmp_u64);
	if (draw_entrants_digest(ev.id, users, n, digest) != 0 ||
		memcmp(digest, ev.draw_digest, sizeof(digest)) != 0) {
		draw_hex(digest, hex);
		draw_hex(ev.draw_digest, hex2);
		rc = verify_failed(out, cap, &ev, n,
			"the digest of the entrants' users is %s, events.draw_digest is %s (the "
			"entrants changed after they were fixed)",
			hex, hex2);
		goto out;
	}
	if (draw_order(ev.draw_seed, ev.id, ev.draw_digest, users, n) != 0) {
		rc = answer_error(out, cap, "event verify-draw: out of memory for %zu entrants", n);
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
	for (size_t i = 0; i < n; i++) {
		ordered += v[i].ordered;
		if (v[i].ordered && i >= winners) {
			rc = verify_failed(out, cap, &ev, n,
				"user %" PRIu64 " (rank %zu) has an order of reservation %" PRIu64
				", but only the first %zu by rank could win",
				v[i].user, i + 1, v[i].reservation_id, winners);
			goto out;
		}
		if (!v[i].ordered && i < winners) {
			rc = verify_failed(out, cap, &ev, n,
				"user %" PRIu64 " (rank %zu, one of the first %zu) has no order of "
				"reservation %" PRIu64 " (if the sale just ended, the order writer "
				"may not have written it yet: stats shows its backlog)",
				v[i].user, i + 1, winners, v[i].reservation_id);
			goto out;
		}
	}
	char msg[320];

	snprintf(msg, sizeof(msg),
		"event %u: the draw checks out: %zu entrants, every rank recomputed from the seed "
		"and the entrants' digest; the first %zu by rank (stock %u) hold the orders, no "
		"other entrant does%s",
		ev.id, n, winners, ev.stock,
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
	jw_u64(&j, "ranks_checked", n);
	draw_hex(commitment, hex);
	jw_str(&j, "seed_sha256", hex);
	jw_bool(&j, "commitment_checked", req->has_commitment);
	draw_hex(ev.draw_digest, hex);
	jw_str(&j, "entrants_digest", hex);
	draw_hex(ev.draw_seed, hex);
	jw_str(&j, "seed", hex);
	rc = end(&j, out, cap);
out:
	free(v);
	free(users);
	free(ranked);
	return rc;
}

/* Whether two events are the same as event create writes them. */
static bool
same_event(const struct admin_event *a, const struct admin_event *b)
{
	return a->id == b->id && a->stock == b->stock && a->starts_at_ms == b->starts_at_ms &&
	       a->ends_at_ms == b->ends_at_ms && a->pay_window_s == b->pay_window_s &&
	       a->per_user_limit == b->per_user_limit && strcmp(a->name, b->name) == 0 &&
	       a->queue_opens_at_ms == b->queue_opens_at_ms &&
	       a->draw_window_s == b->draw_window_s && a->pow_bits == b->pow_bits &&
	       a->pow_auto_max == b->pow_auto_max;
}

/* One run of a parsed request (admin_execute() makes a second when a connection broke). */
static int
execute(struct cp_ctx *c, const struct admin_req *r, struct admin_try *t, char *out, size_t cap)
{
	struct admin_req req = *r; /* a copy: auth-set wipes its secret */
	struct json_writer j;
	char err[512];
	int rc;

	switch (req.cmd) {
	case ADMIN_HELP:
		admin_json_ok(&j, out, cap);
		jw_str(&j, "message", admin_help_text());
		return end(&j, out, cap);
	case ADMIN_EVENT_CREATE: {
		struct admin_event ev;

		rc = pg_event_create(c->pg, &req.event, &ev, err, sizeof(err));
		if (rc == -EEXIST && t->again &&
			pg_event_get(c->pg, req.event.id, &ev, err, sizeof(err)) == 0 &&
			same_event(&ev, &req.event)) {
			reload_and_publish(c, "event create", cp_state_publish_events);
			admin_json_ok(&j, out, cap);
			admin_json_event(&j, "event", &ev);
			jw_str(&j, "note", NOTE_IN_PLACE);
			return end(&j, out, cap);
		}
		if (rc != 0)
			return admin_answer_error(out, cap, err);
		reload_and_publish(c, "event create", cp_state_publish_events);
		LOG_NOTICE("event %u created: %u items", ev.id, ev.stock);
		admin_json_ok(&j, out, cap);
		admin_json_event(&j, "event", &ev);
		warn_no_slot(c, &j, ev.id);
		return end(&j, out, cap);
	}
	case ADMIN_EVENT_PREHEAT: {
		unsigned ready;

		/* Open and preheated sales hold the data planes' slots before any draft: one
		 * more than they hold would leave a sale about to open on none of them. */
		if ((rc = pg_event_count_ready(c->pg, req.event_id, &ready, err, sizeof(err))) != 0)
			return admin_answer_error(out, cap, err);
		if (ready >= CP_MAX_EVENTS)
			return answer_error(out, cap,
				"event preheat: %u events are preheated or open already, as many "
				"as a data plane holds: event %u would reach none (close the ones "
				"that are over, or wait for one to end; event list --state open)",
				ready, req.event_id);
		return do_transition(c, &req, ADMIN_EV_PREHEATED, t, out, cap);
	}
	case ADMIN_EVENT_ARCHIVE:
		return do_archive(c, &req, out, cap);
	case ADMIN_EVENT_POW:
		return do_pow(c, &req, out, cap);
	case ADMIN_EVENT_VERIFY_DRAW:
		return do_verify_draw(c, &req, out, cap);
	case ADMIN_EVENT_OPEN:
		return do_transition(c, &req, ADMIN_EV_OPEN, t, out, cap);
	case ADMIN_EVENT_CLOSE:
		return do_transition(c, &req, ADMIN_EV_CLOSED, t, out, cap);
	case ADMIN_EVENT_SHOW: {
		struct admin_event ev;

		if ((rc = pg_event_get(c->pg, req.event_id, &ev, err, sizeof(err))) != 0)
			return admin_answer_error(out, cap, err);
		admin_json_ok(&j, out, cap);
		json_event_full(c, &j, &ev);
		return end(&j, out, cap);
	}
	case ADMIN_EVENT_LIST: {
		struct admin_event *evs = calloc(req.list_limit, sizeof(*evs));
		unsigned n;
		bool more;

		if (evs == NULL)
			return answer_error(out, cap, "event list: out of memory");
		rc = pg_event_page(c->pg, req.list_state_given, req.list_state, req.list_after,
			req.list_limit, evs, &n, &more, err, sizeof(err));
		if (rc != 0) {
			free(evs);
			return admin_answer_error(out, cap, err);
		}
		admin_json_ok(&j, out, cap);
		jw_open(&j, "events", '[');
		for (unsigned i = 0; i < n; i++)
			admin_json_event(&j, NULL, &evs[i]);
		jw_close(&j, ']');
		/* More after these: the next page is --after this id. */
		if (more)
			jw_u64(&j, "next_after", evs[n - 1].id);
		free(evs);
		return end(&j, out, cap);
	}
	case ADMIN_STATS:
		return do_stats(c, out, cap);
	case ADMIN_KEYS_ROTATE: {
		uint32_t kid;
		const char *note = NULL;

		/* Not repeatable: a second run rotates only if the first did not. */
		if (t->again && t->kid_known) {
			if ((rc = current_sale_kid(c, &kid, err, sizeof(err))) != 0)
				return admin_answer_error(out, cap, err);
			if (kid != t->kid_before)
				note = NOTE_IN_PLACE;
		} else if (!t->again) {
			if ((rc = current_sale_kid(c, &t->kid_before, err, sizeof(err))) != 0)
				return admin_answer_error(out, cap, err);
			t->kid_known = true;
		}
		if (note == NULL && (rc = pg_keys_rotate(c->pg, c->st->key_life_ms, &kid, err, sizeof(err))) != 0)
			return admin_answer_error(out, cap, err);
		reload_and_publish(c, "keys rotate", cp_state_publish_keys);
		LOG_NOTICE("sale key %u is now current", kid);
		admin_json_ok(&j, out, cap);
		jw_u64(&j, "kid", kid);
		jw_str(&j, "message",
			"new sale key published; the previous one verifies until its last token or "
			"receipt can no longer be valid (keys list shows when)");
		if (note != NULL)
			jw_str(&j, "note", note);
		return end(&j, out, cap);
	}
	case ADMIN_KEYS_LIST: {
		struct admin_key keys[CP_MAX_KEYS];
		unsigned n;

		if ((rc = pg_keys_list(c->pg, c->st->key_life_ms, keys, CP_MAX_KEYS, &n, err,
			     sizeof(err))) != 0)
			return admin_answer_error(out, cap, err);
		admin_json_ok(&j, out, cap);
		jw_open(&j, "keys", '[');
		for (unsigned i = 0; i < n && i < CP_MAX_KEYS; i++)
			admin_json_key(&j, NULL, &keys[i]);
		jw_close(&j, ']');
		explicit_bzero(keys, sizeof(keys));
		return end(&j, out, cap);
	}
	case ADMIN_KEYS_AUTH_SET:
		rc = pg_keys_auth_set(c->pg, req.kid, req.secret, req.secret_len, err, sizeof(err));
		explicit_bzero(req.secret, sizeof(req.secret));
		if (rc != 0)
			return admin_answer_error(out, cap, err);
		reload_and_publish(c, "keys auth-set", cp_state_publish_keys);
		LOG_NOTICE("auth key %u is now current", req.kid);
		admin_json_ok(&j, out, cap);
		jw_u64(&j, "kid", req.kid);
		return end(&j, out, cap);
	case ADMIN_RULES_ADD:
	case ADMIN_RULES_DEL:
		rc = req.cmd == ADMIN_RULES_ADD ? pg_rule_add(c->pg, &req.rule, err, sizeof(err))
						: pg_rule_del(c->pg, &req.rule, err, sizeof(err));
		/* A second run that finds the rule there (gone) finds the change in place. */
		bool in_place = t->again && rc == (req.cmd == ADMIN_RULES_ADD ? -EEXIST : -ENOENT);

		if (rc != 0 && !in_place)
			return admin_answer_error(out, cap, err);
		if (reload(c, err, sizeof(err)) != 0)
			LOG_WARN("state reload after a rule change: %s", err);
		/* A rule set can span several messages: only a snapshot replaces it whole. */
		cp_state_publish_snapshot(c->st, c->links);
		c->snapshots_sent++;
		if (!in_place)
			return admin_answer_ok(out, cap);
		admin_json_ok(&j, out, cap);
		jw_str(&j, "note", NOTE_IN_PLACE);
		return end(&j, out, cap);
	case ADMIN_RULES_LIST: {
		struct rules_ctx rcx = { &j };

		admin_json_ok(&j, out, cap);
		jw_open(&j, "rules", '[');
		if ((rc = pg_rule_foreach(c->pg, list_rule, &rcx, err, sizeof(err))) != 0)
			return admin_answer_error(out, cap, err);
		jw_close(&j, ']');
		return end(&j, out, cap);
	}
	case ADMIN_LIMITS_SET: {
		struct wire_limits l;

		if ((rc = pg_limits_set(c->pg, &req.limits, req.limits_given, &l, err, sizeof(err))) !=
			0)
			return admin_answer_error(out, cap, err);
		reload_and_publish(c, "limits set", cp_state_publish_limits);
		admin_json_ok(&j, out, cap);
		admin_json_limits(&j, "limits", &l);
		json_forward_share(&j, c, &l);
		return end(&j, out, cap);
	}
	case ADMIN_LIMITS_SHOW: {
		struct wire_limits l;

		if ((rc = pg_limits_get(c->pg, &l, err, sizeof(err))) != 0)
			return admin_answer_error(out, cap, err);
		admin_json_ok(&j, out, cap);
		admin_json_limits(&j, "limits", &l);
		json_forward_share(&j, c, &l);
		return end(&j, out, cap);
	}
	case ADMIN_SESSION_TOKEN:
		return do_session_token(c, &req, out, cap);
	case ADMIN_ORDER_PAY:
	case ADMIN_ORDER_CANCEL: {
		char result[64];
		bool pay = req.cmd == ADMIN_ORDER_PAY;

		if ((rc = pg_orders_call(c->pg, pay ? "flashgate_pay" : "flashgate_cancel",
			     req.order_id, result, sizeof(result), err, sizeof(err))) != 0)
			return admin_answer_error(out, cap, err);
		admin_json_ok(&j, out, cap);
		jw_u64(&j, "order_id", req.order_id);
		jw_str(&j, "result", result);
		if (t->again && strcmp(result, pay ? "already_paid" : "already_cancelled") == 0)
			jw_str(&j, "note",
				pay ? "the connection was lost during the command and made "
				      "again; the order is paid (the lost try may have paid it)"
				    : "the connection was lost during the command and made "
				      "again; the order is cancelled (the lost try may have "
				      "cancelled it)");
		return end(&j, out, cap);
	}
	case ADMIN_RECONCILE:
		return do_reconcile(c, &req, out, cap);
	}
	return admin_answer_error(out, cap, "unknown command");
}

/* Connections lost under calls so far, PostgreSQL's and Redis's. */
static uint64_t
losses(struct cp_ctx *c)
{
	struct rs_stats rs;

	rs_get_stats(c->rs, &rs);
	return pg_conn_losses(c->pg) + rs.outages;
}

/* Whether a command only reads (running it again changes nothing). */
static bool
cmd_reads(enum admin_cmd cmd)
{
	switch (cmd) {
	case ADMIN_EVENT_SHOW:
	case ADMIN_EVENT_LIST:
	case ADMIN_EVENT_VERIFY_DRAW:
	case ADMIN_STATS:
	case ADMIN_KEYS_LIST:
	case ADMIN_RULES_LIST:
	case ADMIN_LIMITS_SHOW:
	case ADMIN_HELP:
	case ADMIN_SESSION_TOKEN:
		return true;
	default:
		return false;
	}
}

static bool
refused(const char *out, int n)
{
	return n > 0 && strncmp(out, "{\"ok\":false", 11) == 0;
}

/*
 * Rewrites the refusal in out (n bytes) of a change that may or may not have taken effect as
 * one that says so, keeping its message (already escaped: copied as it is).
 */
static int
say_unknown(const struct admin_req *req, char *out, size_t cap, int n)
{
	static const char head[] = "{\"ok\":false,\"error\":\"";
	char prefix[256];
	const char *msg = out + sizeof(head) - 1;
	size_t mlen;

	if (n < (int)sizeof(head) + 2 || strncmp(out, head, sizeof(head) - 1) != 0)
		return n;
	mlen = (size_t)n - (sizeof(head) - 1) - 3; /* without "}\n */
	int p = snprintf(prefix, sizeof(prefix),
		"%s: the connection was lost during the command, and again when it was made "
		"once more: whether it took effect is not known; check (event show, keys list, "
		"rules list) once PostgreSQL and Redis answer. ",
		admin_cmd_name(req->cmd));

	if (p < 0 || (size_t)p + mlen + sizeof(head) + 3 > cap)
		return n;
	memmove(out + sizeof(head) - 1 + (size_t)p, msg, mlen);
	memcpy(out + sizeof(head) - 1, prefix, (size_t)p);
	n = (int)(sizeof(head) - 1 + (size_t)p + mlen);
	memcpy(out + n, "\"}\n", 3);
	return n + 3;
}

int
admin_execute(struct cp_ctx *c, const char *line, char *out, size_t cap)
{
	struct admin_req req;
	struct admin_try t = {0};
	char err[512];

	if (admin_parse(line, &req, err, sizeof(err)) != 0)
		return admin_answer_error(out, cap, err);
	/* Right after Redis came back, an admin command must not find the store backing off;
	 * a connection Redis closed since the last call is replaced here, before the count of
	 * losses under the command starts. */
	rs_reconnect_now(c->rs);

	uint64_t lost = losses(c);
	int n = execute(c, &req, &t, out, cap);

	/*
	 * A connection lost under the command (PostgreSQL or Redis restarted while it ran) is
	 * made again by the store: a read runs once more on the new one; a change that was
	 * refused runs once more knowing it is a second run, which finds a change already made
	 * and says so rather than make it twice (event create, open, close, keys rotate, rules);
	 * the rest are idempotent (preheat, keys auth-set, limits set, order pay, order cancel,
	 * reconcile).
	 */
	if (losses(c) != lost && (cmd_reads(req.cmd) || refused(out, n))) {
		LOG_NOTICE("admin: %s: a connection was lost during the command; running it once "
			   "more on the new one",
			admin_cmd_name(req.cmd));
		t.again = true;
		rs_reconnect_now(c->rs);
		lost = losses(c);
		n = execute(c, &req, &t, out, cap);
		if (losses(c) != lost && !cmd_reads(req.cmd) && refused(out, n))
			n = say_unknown(&req, out, cap, n);
	}
	explicit_bzero(&req, sizeof(req));
	return n;
}
