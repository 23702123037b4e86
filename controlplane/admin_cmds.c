/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/admin_cmds.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "admin/admin_answer.h"
#include "common/log.h"
#include "common/now.h"
#include "common/token.h"
#include "controlplane/cp_follow.h"
#include "controlplane/cp_slow.h"
#include "pg/pg_health.h"

int
admin_cmds_help(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t, char *out,
	size_t cap)
{
	struct json_writer j;

	(void)c;
	(void)req;
	(void)t;
	admin_json_ok(&j, out, cap);
	jw_str(&j, "message", admin_help_text());
	return admin_exec_end(&j, out, cap);
}

/* "forward_share": what each live data plane takes of the forward budget l (docs/limits.md). */
static void
shares_on_loop(struct cp_ctx *c, void *arg)
{
	*(unsigned *)arg = c->st->forward_shares;
}

static void
json_forward_share(struct json_writer *j, struct cp_ctx *c, const struct wire_limits *l)
{
	struct wire_limits share;
	unsigned n = 0;

	cp_slow_on_loop(c, shares_on_loop, &n);
	n = n != 0 ? n : 1;

	cp_state_limits_share(l, n, &share);
	jw_open(j, "forward_share", '{');
	jw_u64(j, "data_planes", n);
	jw_u64(j, "rate", share.event_forward_per_s);
	jw_u64(j, "burst", share.event_forward_burst);
	jw_close(j, '}');
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

int
admin_cmds_stats(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t, char *out,
	size_t cap)
{
	struct decider_counters dc;
	struct cp_links_counters lc;
	struct store_stats rs;
	struct json_writer j;

	decider_counters(c->dec, &dc);
	cp_links_counters(c->links, &lc);
	store_get_stats(c->rs, &rs);
	uint64_t mono_ms = now_mono_ms(); /* the data planes' ages */

	(void)req;
	(void)t;
	admin_json_ok(&j, out, cap);
	jw_u64(&j, "uptime_s", (mono_ms - c->started_mono_ms) / 1000);
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
	jw_u64(&j, "result_query_failures", dc.queries_failed);
	jw_u64(&j, "duplicates_republished", dc.held_published);
	jw_u64(&j, "bad_records", dc.bad_records);
	jw_u64(&j, "outside_sale", dc.outside_sale);
	jw_u64(&j, "enter_batches", dc.enter_batches);
	jw_u64(&j, "entrants_new", dc.entrants_new);
	jw_u64(&j, "draw_waiting", dc.draw_waiting);
	jw_u64(&j, "entrants_late", dc.entrants_late);
	jw_u64(&j, "entrants_late_max_ms", dc.entrants_late_max_ms);
	jw_close(&j, '}');
	/* How long the loop was away from its sockets at most: decisions wait that long. */
	jw_open(&j, "loop", '{');
	jw_u64(&j, "turns", c->turns.turns);
	jw_u64(&j, "longest_turn_us", c->turns.max_us);
	jw_u64(&j, "longest_turn_10s_us", cp_turns_recent_us(&c->turns, 10, now_mono_ms()));
	jw_u64(&j, "longest_turn_cpu_us", c->turns.cpu_max_us);
	jw_u64(&j, "longest_turn_cpu_10s_us", cp_turns_recent(&c->turns, 10, now_mono_ms(), true));
	jw_close(&j, '}');
	jw_open(&j, "redis", '{');
	jw_bool(&j, "connected", store_connected(c->rs));
	jw_u64(&j, "outages", rs.outages);
	jw_u64(&j, "connects", rs.connects);
	jw_u64(&j, "errors", rs.errors);
	jw_u64(&j, "retry", rs.retry);
	jw_u64(&j, "outside_window", rs.outside_window);
	jw_u64(&j, "draw_refused", rs.draw_refused);
	jw_u64(&j, "failovers", rs.failovers);
	jw_u64(&j, "wait_timeouts", rs.wait_timeouts);
	jw_close(&j, '}');
	struct cp_follow_counters fc;

	/* The loop's follower (the slow-job thread's context has its own copy of the pointer). */
	cp_follow_counters(c->loop != NULL ? c->loop->follow : c->follow, &fc);
	jw_open(&j, "follow", '{');
	jw_u64(&j, "reloads_notify", fc.reloads_notify);
	jw_u64(&j, "reloads_connect", fc.reloads_connect);
	jw_u64(&j, "reloads_check", fc.reloads_check);
	const struct cp_cron_counters *cc = &(c->loop != NULL ? c->loop : c)->cron;

	jw_u64(&j, "reloads_sale_end", cc->reloads_sale_end);
	jw_u64(&j, "reloads_key_retire", cc->reloads_key_retire);
	jw_u64(&j, "db_clock_waits", cc->db_clock_waits);
	jw_u64(&j, "db_clock_behind_ms", cc->db_clock_behind_ms);
	jw_u64(&j, "notifications", fc.notifications);
	jw_u64(&j, "connects", fc.connects);
	jw_u64(&j, "failures", fc.failures);
	jw_u64(&j, "backend_pid", (uint64_t)fc.backend_pid);
	jw_close(&j, '}');
	if (c->pg_health != NULL) {
		struct pg_health_state ph;

		pg_health_read(c->pg_health, now_mono_ms(), &ph);
		jw_open(&j, "postgres", '{');
		jw_bool(&j, "up", ph.up);
		jw_double(&j, "query_ms", ph.query_s * 1000, 1);
		jw_double(&j, "since_success_s", ph.since_success_s, 1);
		jw_u64(&j, "failures", ph.failures);
		jw_close(&j, '}');
	}
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
		dp_ids_json(c->ids, &j, mono_ms);
	if (c->dps != NULL)
		dp_stats_json(c->dps, &j, mono_ms, true);
	return admin_exec_end(&j, out, cap);
}

int
admin_cmds_session_token(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	struct tok_keyring ring;
	char tok[TOK_BUF_SIZE];
	struct json_writer j;

	(void)t;
	if (c->st->auth_len == 0)
		return admin_answer_error(out, cap,
			"session-token: no auth key yet: set the shop's with keys auth-set KID "
			"(the "
			"key on standard input)");
	tok_keyring_init(&ring);
	tok_keyring_set(&ring, c->st->auth_kid, c->st->auth_secret, c->st->auth_len, true);
	uint64_t expires_s = now_wall_ms() / 1000 + req->ttl_s;
	int n = tok_session_mint(&ring, req->user, expires_s, tok, sizeof(tok));

	tok_keyring_wipe(&ring);
	if (n < 0)
		return admin_exec_error(out, cap, "session-token: cannot mint: %s", strerror(-n));
	admin_json_ok(&j, out, cap);
	jw_str(&j, "token", tok);
	jw_u64(&j, "user", req->user);
	jw_time(&j, "expires_at", expires_s * 1000);
	return admin_exec_end(&j, out, cap);
}

/* On the loop: the state read again, and a snapshot: a rule set can span several messages,
 * only a snapshot replaces it whole. */
static void
rules_on_loop(struct cp_ctx *c, void *arg)
{
	struct admin_exec_reload *x = arg;

	if (admin_exec_reload_apply(c, x) != 0)
		LOG_WARN("state reload after a rule change: %s", x->err);
	cp_state_publish_snapshot(c->st, c->links);
	c->snapshots_sent++;
}

/*
 * The common end of a change in PostgreSQL (keys rotate, keys auth-set, limits set, rules add
 * and del): rc != 0 is a refusal with err, returned as its length; otherwise the state is read
 * again and published on the loop (publish's part, or a full snapshot when publish is NULL: a
 * rule set can span several messages) and 0 is returned: the handler writes its answer.
 */
static int
change_made(struct cp_ctx *c, int rc, const char *err, const char *after,
	int (*publish)(const struct cp_state *, struct cp_links *), char *out, size_t cap)
{
	if (rc != 0)
		return admin_answer_error(out, cap, err);
	if (publish != NULL)
		admin_exec_reload_and_publish(c, after, publish);
	else {
		struct admin_exec_reload x;

		admin_exec_reload_prepare(c, &x);
		cp_slow_on_loop(c, rules_on_loop, &x);
	}
	return 0;
}

/* The current sale key's id in *kid (0: none), read from PostgreSQL. */
static int
current_sale_kid(struct cp_ctx *c, uint32_t *kid, char *err, size_t errlen)
{
	struct admin_key keys[CP_STATE_KEYS_MAX];
	unsigned n;
	int rc = pg_keys_list(c->pg, c->st->key_life_ms, keys, CP_STATE_KEYS_MAX, &n, err, errlen);

	*kid = 0;
	for (unsigned i = 0; rc == 0 && i < n && i < CP_STATE_KEYS_MAX; i++)
		if (keys[i].kind == WIRE_KEY_SALE && keys[i].current)
			*kid = keys[i].kid;
	explicit_bzero(keys, sizeof(keys));
	return rc;
}

int
admin_cmds_keys_rotate(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	const char *note = NULL;
	struct json_writer j;
	char err[512];
	uint32_t kid;

	(void)req;
	/* Not repeatable: a second run rotates only if the first did not. */
	if (t->again && t->kid_known) {
		if (current_sale_kid(c, &kid, err, sizeof(err)) != 0)
			return admin_answer_error(out, cap, err);
		if (kid != t->kid_before)
			note = ADMIN_EXEC_NOTE_IN_PLACE;
	} else if (!t->again) {
		if (current_sale_kid(c, &t->kid_before, err, sizeof(err)) != 0)
			return admin_answer_error(out, cap, err);
		t->kid_known = true;
	}
	int n = change_made(c,
		note == NULL ? pg_keys_rotate(c->pg, c->st->key_life_ms, &kid, err, sizeof(err)) : 0,
		err, "keys rotate", cp_state_publish_keys, out, cap);

	if (n != 0)
		return n;
	LOG_NOTICE("sale key %u is now current", kid);
	admin_json_ok(&j, out, cap);
	jw_u64(&j, "kid", kid);
	jw_str(&j, "message",
		"new sale key published; the previous one verifies until its last token or "
		"receipt can no longer be valid (keys list shows when)");
	if (note != NULL)
		jw_str(&j, "note", note);
	return admin_exec_end(&j, out, cap);
}

int
admin_cmds_keys_list(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	struct admin_key keys[CP_STATE_KEYS_MAX];
	struct json_writer j;
	char err[512];
	unsigned n;

	(void)req;
	(void)t;
	if (pg_keys_list(
		    c->pg, c->st->key_life_ms, keys, CP_STATE_KEYS_MAX, &n, err, sizeof(err)) != 0)
		return admin_answer_error(out, cap, err);
	admin_json_ok(&j, out, cap);
	jw_open(&j, "keys", '[');
	for (unsigned i = 0; i < n && i < CP_STATE_KEYS_MAX; i++)
		admin_json_key(&j, NULL, &keys[i]);
	jw_close(&j, ']');
	explicit_bzero(keys, sizeof(keys));
	return admin_exec_end(&j, out, cap);
}

int
admin_cmds_keys_auth_set(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	struct json_writer j;
	char err[512];

	(void)t;
	/* The secret stays in req for a second run; admin_server_execute() wipes it after. */
	int n = change_made(c,
		pg_keys_auth_set(c->pg, req->kid, req->secret, req->secret_len, err, sizeof(err)),
		err, "keys auth-set", cp_state_publish_keys, out, cap);

	if (n != 0)
		return n;
	LOG_NOTICE("auth key %u is now current", req->kid);
	admin_json_ok(&j, out, cap);
	jw_u64(&j, "kid", req->kid);
	return admin_exec_end(&j, out, cap);
}

int
admin_cmds_rules_change(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	bool add = req->cmd == ADMIN_RULES_ADD;
	struct json_writer j;
	char err[512];
	int rc;

	rc = add ? pg_rule_add(c->pg, &req->rule, err, sizeof(err))
		 : pg_rule_del(c->pg, &req->rule, err, sizeof(err));
	/* A second run that finds the rule there (gone) finds the change in place. */
	bool in_place = t->again && rc == (add ? -EEXIST : -ENOENT);

	int n = change_made(c, in_place ? 0 : rc, err, "a rule change", NULL, out, cap);

	if (n != 0)
		return n;
	if (!in_place)
		return admin_answer_ok(out, cap);
	admin_json_ok(&j, out, cap);
	jw_str(&j, "note", ADMIN_EXEC_NOTE_IN_PLACE);
	return admin_exec_end(&j, out, cap);
}

int
admin_cmds_rules_list(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	struct json_writer j;
	struct rules_ctx rcx = {&j};
	char err[512];

	(void)req;
	(void)t;
	admin_json_ok(&j, out, cap);
	jw_open(&j, "rules", '[');
	if (pg_rule_foreach(c->pg, list_rule, &rcx, err, sizeof(err)) != 0)
		return admin_answer_error(out, cap, err);
	jw_close(&j, ']');
	return admin_exec_end(&j, out, cap);
}

/* The answer of limits set and limits show: the limits l and each data plane's share. */
static int
answer_limits(struct cp_ctx *c, const struct wire_limits *l, char *out, size_t cap)
{
	struct json_writer j;

	admin_json_ok(&j, out, cap);
	admin_json_limits(&j, "limits", l);
	json_forward_share(&j, c, l);
	return admin_exec_end(&j, out, cap);
}

int
admin_cmds_limits_set(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	struct wire_limits l;
	char err[512];

	(void)t;
	int n = change_made(c,
		pg_limits_set(c->pg, &req->limits, req->limits_given, &l, err, sizeof(err)), err,
		"limits set", cp_state_publish_limits, out, cap);

	return n != 0 ? n : answer_limits(c, &l, out, cap);
}

int
admin_cmds_limits_show(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t,
	char *out, size_t cap)
{
	struct wire_limits l;
	char err[512];

	(void)req;
	(void)t;
	if (pg_limits_get(c->pg, &l, err, sizeof(err)) != 0)
		return admin_answer_error(out, cap, err);
	return answer_limits(c, &l, out, cap);
}

int
admin_cmds_order(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t, char *out,
	size_t cap)
{
	bool pay = req->cmd == ADMIN_ORDER_PAY;
	struct json_writer j;
	char result[64], err[512];

	if (pg_orders_call(c->pg, pay ? "flashgate_pay" : "flashgate_cancel", req->order_id, result,
		    sizeof(result), err, sizeof(err)) != 0)
		return admin_answer_error(out, cap, err);
	admin_json_ok(&j, out, cap);
	jw_u64(&j, "order_id", req->order_id);
	jw_str(&j, "result", result);
	if (t->again && strcmp(result, pay ? "already_paid" : "already_cancelled") == 0)
		jw_str(&j, "note",
			pay ? "the connection was lost during the command and made again; the "
			      "order "
			      "is paid (the lost try may have paid it)"
			    : "the connection was lost during the command and made again; the "
			      "order "
			      "is cancelled (the lost try may have cancelled it)");
	return admin_exec_end(&j, out, cap);
}
