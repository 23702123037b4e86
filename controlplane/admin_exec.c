/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/admin_exec.h"

#include <stdarg.h>
#include <stdio.h>

#include "admin/admin_answer.h"
#include "common/log.h"
#include "controlplane/cp_slow.h"

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

void
admin_exec_reload_prepare(struct cp_ctx *c, struct admin_exec_reload *x)
{
	x->rd = NULL;
	x->rc = 0;
	x->err[0] = '\0';
	/* On the slow-job thread: its own connections; the loop only takes the result. */
	if (c->loop != NULL)
		x->rd = cp_state_read(c->st, c->pg, c->rs, &x->rc, x->err, sizeof(x->err));
}

int
admin_exec_reload_apply(struct cp_ctx *loop, struct admin_exec_reload *x)
{
	if (x->rd != NULL) {
		cp_state_apply(loop->st, x->rd);
		x->rd = NULL;
		return 0;
	}
	if (x->rc != 0)
		return x->rc;
	return cp_state_load(loop->st, loop->pg, loop->rs, x->err, sizeof(x->err));
}

void
admin_exec_reload_publish(struct cp_ctx *loop, struct admin_exec_reload *x, const char *after,
	int (*publish)(const struct cp_state *, struct cp_links *))
{
	if (admin_exec_reload_apply(loop, x) != 0)
		LOG_WARN("state reload after %s: %s", after, x->err);
	/* An event left the data planes' set (archived, or its slot went to another): they
	 * replace theirs with a snapshot, which carries what publish() would send too. */
	if (loop->st->events_dropped)
		cp_state_publish_event_set(loop->st, loop->links);
	else if (publish != NULL)
		publish(loop->st, loop->links);
}

struct reload_call {
	const char *after; /* NULL: reload only */
	int (*publish)(const struct cp_state *, struct cp_links *);
	struct admin_exec_reload x;
	int rc;
};

/* On the loop: the state read off it (or now, on the loop's own context) taken, then
 * published. */
static void
reload_on_loop(struct cp_ctx *c, void *arg)
{
	struct reload_call *r = arg;

	if (r->after == NULL)
		r->rc = admin_exec_reload_apply(c, &r->x);
	else
		admin_exec_reload_publish(c, &r->x, r->after, r->publish);
}

int
admin_exec_reload(struct cp_ctx *c, char *err, size_t errlen)
{
	struct reload_call r = {0};

	admin_exec_reload_prepare(c, &r.x);
	cp_slow_on_loop(c, reload_on_loop, &r);
	if (r.rc != 0)
		snprintf(err, errlen, "%s", r.x.err);
	return r.rc;
}

void
admin_exec_reload_and_publish(struct cp_ctx *c, const char *after,
	int (*publish)(const struct cp_state *, struct cp_links *))
{
	struct reload_call r = {.after = after, .publish = publish};

	admin_exec_reload_prepare(c, &r.x);
	cp_slow_on_loop(c, reload_on_loop, &r);
}

struct event_call {
	uint32_t id;
	struct cp_state_event *out;
	bool found;
};

static void
event_on_loop(struct cp_ctx *c, void *arg)
{
	struct event_call *e = arg;
	const struct cp_state_event *ce = cp_state_event(c->st, e->id);

	e->found = ce != NULL;
	if (ce != NULL)
		*e->out = *ce;
}

bool
admin_exec_event(struct cp_ctx *c, uint32_t id, struct cp_state_event *out)
{
	struct event_call e = {.id = id, .out = out};

	cp_slow_on_loop(c, event_on_loop, &e);
	return e.found;
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
