/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/admin_exec.h"

#include <stdarg.h>
#include <stdio.h>

#include "admin/admin_answer.h"
#include "common/log.h"

int
admin_exec_error(char *out, size_t cap, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return admin_answer_error(out, cap, msg);
}

int
admin_exec_end(struct json_writer *j, char *out, size_t cap)
{
	int n = admin_json_end(j);

	return n >= 0 ? n : admin_answer_error(out, cap, "the answer does not fit: use --json");
}

int
admin_exec_reload(struct cp_ctx *c, char *err, size_t errlen)
{
	return cp_state_load(c->st, c->pg, c->rs, err, errlen);
}

void
admin_exec_reload_and_publish(struct cp_ctx *c, const char *after,
	int (*publish)(const struct cp_state *, struct cp_links *))
{
	char err[512];

	if (admin_exec_reload(c, err, sizeof(err)) != 0)
		LOG_WARN("state reload after %s: %s", after, err);
	/* An event left the data planes' set (archived, or its slot went to another): they
	 * replace theirs with a snapshot, which carries what publish() would send too. */
	if (c->st->events_dropped)
		cp_state_publish_event_set(c->st, c->links);
	else
		publish(c->st, c->links);
}

const char *
admin_exec_draw_state(const struct admin_event *ev, uint64_t now_ms)
{
	if (ev->draw_done_at_ms != 0)
		return "done";
	if (ev->has_digest || now_ms >= admin_event_draw_at_ms(ev))
		return "drawing";
	return now_ms >= ev->queue_opens_at_ms ? "queueing" : "scheduled";
}
