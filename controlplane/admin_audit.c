/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/admin_audit.h"

#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_answer.h"
#include "common/log.h"
#include "controlplane/admin_conns.h"
#include "pg/pg_audit.h"

/* The event req touched, as far as the request says (order pay/cancel: looked up in SQL). */
static uint32_t
event_of(const struct admin_req *req)
{
	switch (req->cmd) {
	case ADMIN_EVENT_CREATE:
		return req->event.id;
	case ADMIN_EVENT_PREHEAT:
	case ADMIN_EVENT_OPEN:
	case ADMIN_EVENT_CLOSE:
	case ADMIN_EVENT_ARCHIVE:
	case ADMIN_EVENT_POW:
	case ADMIN_RECONCILE:
		return req->event_id;
	default:
		return 0;
	}
}

/* The request as it may be kept: the line, but never a secret (keys auth-set: its key id). */
static void
request_text(const struct admin_req *req, const char *line, char *dst, size_t cap)
{
	size_t n;

	if (req->cmd == ADMIN_KEYS_AUTH_SET) {
		snprintf(dst, cap, "keys auth-set %" PRIu32, req->kid);
		return;
	}
	snprintf(dst, cap, "%s", line);
	n = strlen(dst);
	while (n > 0 && (dst[n - 1] == '\n' || dst[n - 1] == '\r'))
		dst[--n] = '\0';
}

void
admin_audit_record(
	struct cp_ctx *c, const struct admin_req *req, const char *line, const char *out, int n)
{
	struct admin_conns_peer peer;
	struct pg_audit_entry *e = calloc(1, sizeof(*e));
	char err[512];

	admin_conns_current_peer(&peer);
	if (e == NULL) {
		LOG_WARN("audit: out of memory: %s by uid %" PRId64 " not recorded",
			admin_cmd_name(req->cmd), peer.uid);
		return;
	}
	e->uid = peer.uid;
	e->pid = (int)peer.pid;
	if (peer.uid >= 0) {
		struct passwd pw, *found = NULL;
		char buf[1024];

		if (getpwuid_r((uid_t)peer.uid, &pw, buf, sizeof(buf), &found) == 0 && found)
			snprintf(e->user, sizeof(e->user), "%s", found->pw_name);
	}
	snprintf(e->command, sizeof(e->command), "%s", admin_cmd_name(req->cmd));
	request_text(req, line, e->request, sizeof(e->request));
	e->event_id = event_of(req);
	if (req->cmd == ADMIN_ORDER_PAY || req->cmd == ADMIN_ORDER_CANCEL)
		e->order_id = req->order_id;
	e->ok = n > 0 && strncmp(out, "{\"ok\":true", 10) == 0;
	if (n > 0)
		snprintf(e->answer, sizeof(e->answer), "%.*s", n, out);
	while (strlen(e->answer) > 0 && e->answer[strlen(e->answer) - 1] == '\n')
		e->answer[strlen(e->answer) - 1] = '\0';
	LOG_NOTICE("audit: uid %" PRId64 " (%s) pid %d: %s: %s: %.200s", e->uid,
		e->user[0] != '\0' ? e->user : "?", e->pid, e->request, e->ok ? "done" : "refused",
		e->answer);
	if (pg_audit_add(c->pg, e, err, sizeof(err)) != 0)
		LOG_WARN("audit: %s by uid %" PRId64 " pid %d not written to PostgreSQL: %s",
			e->request, e->uid, e->pid, err);
	free(e);
}

static int
list_one(const struct pg_audit_entry *e, void *arg)
{
	struct json_writer *j = arg;

	jw_open(j, NULL, '{');
	jw_u64(j, "id", e->id);
	jw_time(j, "at", e->at_ms);
	if (e->uid >= 0)
		jw_i64(j, "uid", e->uid);
	if (e->user[0] != '\0')
		jw_str(j, "user", e->user);
	if (e->pid > 0)
		jw_i64(j, "pid", e->pid);
	if (e->event_id != 0)
		jw_u64(j, "event", e->event_id);
	jw_str(j, "request", e->request);
	jw_bool(j, "ok", e->ok);
	jw_str(j, "answer", e->answer);
	jw_close(j, '}');
	return 0;
}

int
admin_audit_list(struct cp_ctx *c, const struct admin_req *req, struct admin_exec_try *t, char *out,
	size_t cap)
{
	struct json_writer j;
	char err[512];

	(void)t;
	admin_json_ok(&j, out, cap);
	jw_open(&j, "audit", '[');
	if (pg_audit_foreach(
		    c->pg, req->event_id, req->list_limit, list_one, &j, err, sizeof(err)) != 0)
		return admin_answer_error(out, cap, err);
	jw_close(&j, ']');
	return admin_exec_end(&j, out, cap);
}
