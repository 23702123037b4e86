/* SPDX-License-Identifier: BSD-3-Clause */
#include "flashgatectl/top.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/parse.h"
#include "flashgatectl/ctl_fail.h"
#include "flashgatectl/json_reader.h"

/* The command's name in its messages, and its synopsis. */
#define CMD	      "top"
#define TOP_SYNOPSIS  "top [EVENT_ID] [--count N]"
#define TOP_COUNT_MAX 1000000u

const char top_usage[] = TOP_SYNOPSIS
	"   the live view, refreshed every second (plain lines when not a terminal; N frames, then "
	"exit)\n";

#define TOP_STATUSES_MAX 24

static volatile sig_atomic_t top_stop;

static void
on_stop(int sig)
{
	(void)sig;
	top_stop = 1;
}

/* The member key of object o (NULL when absent or o is not an object). */
static const struct jr_node *
member(const struct jr_node *o, const char *key)
{
	if (o == NULL || o->t != JR_OBJ)
		return NULL;
	for (const struct jr_node *m = o->first; m != NULL; m = m->next)
		if (m->key != NULL && strcmp(m->key, key) == 0)
			return m;
	return NULL;
}

/* The number at the dotted path in o ("event.available"), or dflt. */
static double
num(const struct jr_node *o, const char *path, double dflt)
{
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k != NULL && o != NULL;
		k = strtok_r(NULL, ".", &save))
		o = member(o, k);
	if (o == NULL)
		return dflt;
	if (o->t == JR_BOOL)
		return o->b;
	return o->t == JR_NUM ? strtod(o->text, NULL) : dflt;
}

static const char *
str(const struct jr_node *o, const char *key, const char *dflt)
{
	const struct jr_node *m = member(o, key);

	return m != NULL && m->t == JR_STR ? m->text : dflt;
}

/* One frame's answers: stats, and event show when an event is watched. */
struct top_frame {
	char *stats_text, *event_text;
	struct jr_node *stats, *event;
	struct timespec at;
};

static void
frame_free(struct top_frame *f)
{
	jr_free(f->stats);
	jr_free(f->event);
	free(f->stats_text);
	free(f->event_text);
	memset(f, 0, sizeof(*f));
}

static struct jr_node *
ask_json(top_ask_fn ask, void *arg, const char *line, char **text)
{
	size_t len = 0;

	*text = ask(arg, line, &len);
	if (*text == NULL)
		return NULL;
	return jr_parse(*text, len);
}

/* The per-second rate of the number at path between two answers dt seconds apart. */
static double
rate(const struct jr_node *now, const struct jr_node *before, const char *path, double dt)
{
	if (before == NULL || dt <= 0)
		return 0;
	double d = num(now, path, 0) - num(before, path, 0);

	return d > 0 ? d / dt : 0;
}

/* Prints a line of "name N" pairs: every member of the object at path, as a rate. */
static void
rates_line(FILE *out, const char *head, const struct jr_node *now, const struct jr_node *before,
	const char *path, double dt, const char *const *only)
{
	const struct jr_node *o = now;
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k != NULL && o != NULL;
		k = strtok_r(NULL, ".", &save))
		o = member(o, k);
	fprintf(out, "%-13s", head);
	if (o == NULL || o->t != JR_OBJ) {
		fprintf(out, " -\n");
		return;
	}
	for (const struct jr_node *m = o->first; m != NULL; m = m->next) {
		char p[256];
		bool shown = only == NULL;

		for (unsigned i = 0; only != NULL && only[i] != NULL; i++)
			shown |= strcmp(only[i], m->key) == 0;
		if (!shown || m->t != JR_NUM)
			continue;
		snprintf(p, sizeof(p), "%s.%s", path, m->key);
		fprintf(out, " %s %.0f", m->key, rate(now, before, p, dt));
	}
	fputc('\n', out);
}

static void
render(FILE *out, const struct top_frame *f, const struct top_frame *prev, uint32_t ev)
{
	static const char *const verdicts[] = {"reserved", "sold_out", "duplicate", "retry",
		"closed", "not_started", "queued", NULL};
	double dt = prev->stats != NULL ? (double)(f->at.tv_sec - prev->at.tv_sec) +
						  (double)(f->at.tv_nsec - prev->at.tv_nsec) / 1e9
					: 0;
	char when[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	const struct jr_node *e = member(f->event, "event");

	if (ev != 0 && e != NULL)
		fprintf(out, "flashgate top  %s  event %u \"%s\" %s\n", when, ev,
			str(e, "name", "?"), str(e, "state", "?"));
	else
		fprintf(out, "flashgate top  %s  %s\n", when,
			ev != 0 ? "event not found" : "no open event");
	rates_line(out, "decisions/s", f->stats, prev->stats, "decisions", dt, verdicts);
	if (e != NULL) {
		double stock = num(e, "stock", 0), left = num(e, "available", 0);

		fprintf(out, "%-13s left %.0f of %.0f  redis %.0f  buyers %.0f  backlog %.0f\n",
			"items", left, stock, num(f->event, "redis.stock", -1),
			num(f->event, "redis.buyers", 0), num(f->event, "redis.outbox", 0));
		double n = num(f->event, "orders.pending", 0) + num(f->event, "orders.paid", 0) +
			   num(f->event, "orders.expired", 0) +
			   num(f->event, "orders.cancelled", 0);
		double n0 = num(prev->event, "orders.pending", 0) +
			    num(prev->event, "orders.paid", 0) +
			    num(prev->event, "orders.expired", 0) +
			    num(prev->event, "orders.cancelled", 0);

		fprintf(out,
			"%-13s %.0f  orders/s %.0f  pending %.0f  paid %.0f  expired %.0f  "
			"cancelled %.0f\n",
			"orders", n, dt > 0 && prev->event != NULL && n > n0 ? (n - n0) / dt : 0.0,
			num(f->event, "orders.pending", 0), num(f->event, "orders.paid", 0),
			num(f->event, "orders.expired", 0), num(f->event, "orders.cancelled", 0));
		const struct jr_node *d = member(f->event, "draw");

		fprintf(out, "%-13s pow %.0f bits", "line", num(f->event, "pow_bits_now", 0));
		if (d != NULL && d->t == JR_OBJ)
			fprintf(out, "  draw %s  entrants %.0f  decided %.0f", str(d, "state", "?"),
				num(d, "entrants", 0), num(d, "decided", 0));
		fputc('\n', out);
	}
	const struct jr_node *dps = member(f->stats, "data_planes");
	const struct jr_node *ctr = member(f->stats, "dp_counters");

	for (const struct jr_node *dp = dps != NULL ? dps->first : NULL; dp != NULL;
		dp = dp->next) {
		char id[24], path[64];

		snprintf(id, sizeof(id), "%.0f", num(dp, "id", 0));
		snprintf(path, sizeof(path), "%s.http_responses", id);
		fprintf(out, "data plane %-3s %s  age %.0f ms  ", id, str(dp, "state", "?"),
			num(dp, "age_ms", 0));
		rates_line(
			out, "answers/s", ctr, member(prev->stats, "dp_counters"), path, dt, NULL);
	}
	if (dps == NULL || dps->n == 0)
		fprintf(out, "data planes   none reporting\n");
	/* PostgreSQL as the control plane's probe sees it (absent from an older one). */
	char pg[64] = "";

	if (member(f->stats, "postgres") != NULL) {
		if (num(f->stats, "postgres.up", 0))
			snprintf(pg, sizeof(pg), "  postgres up %.0f ms",
				num(f->stats, "postgres.query_ms", 0));
		else
			snprintf(pg, sizeof(pg), "  postgres DOWN %.0f s",
				num(f->stats, "postgres.since_success_s", 0));
	}
	fprintf(out, "%-13s redis %s%s  refused %.0f  handshakes failed %.0f  disconnected %.0f\n",
		"links", num(f->stats, "redis.connected", 0) ? "up" : "DOWN", pg,
		num(f->stats, "links.clients_refused", 0),
		num(f->stats, "links.handshakes_failed", 0),
		num(f->stats, "links.disconnected", 0));
}

/* The first open event's id, 0 when none. */
static uint32_t
first_open(top_ask_fn ask, void *arg)
{
	char *text;
	struct jr_node *a = ask_json(ask, arg, "event list --state open --limit 1", &text);
	const struct jr_node *evs = member(a, "events");
	uint32_t id = evs != NULL && evs->first != NULL ? (uint32_t)num(evs->first, "id", 0) : 0;

	jr_free(a);
	free(text);
	return id;
}

int
top_command(int argc, char **argv, top_ask_fn ask, void *arg, bool *handled)
{
	const char *ev_text = NULL, *count_text = NULL;
	uint64_t ev = 0, count = 0;
	bool tty = isatty(STDOUT_FILENO);
	struct top_frame prev = {0}, cur = {0};

	*handled = argc > 0 && strcmp(argv[0], "top") == 0;
	if (!*handled)
		return 0;
	for (int i = 1; i < argc; i++) {
		int rc = ctl_option(CMD, argc, argv, &i, "--count", &count_text);

		if (rc == 2)
			return rc;
		if (rc == 1 && parse_u64(count_text, 1, TOP_COUNT_MAX, &count) != 0)
			return ctl_fail(CMD, "--count must be 1..%u frames, got \"%s\"",
				TOP_COUNT_MAX, count_text);
		if (rc == 1)
			continue;
		if (argv[i][0] == '-')
			return ctl_fail(CMD, "unknown option \"%s\" (%s)", argv[i], TOP_SYNOPSIS);
		if (ev_text != NULL)
			return ctl_fail(CMD, "unexpected \"%s\" after EVENT_ID %s (%s)", argv[i],
				ev_text, TOP_SYNOPSIS);
		ev_text = argv[i];
		if (parse_u64(ev_text, 1, UINT32_MAX, &ev) != 0)
			return ctl_fail(CMD, "EVENT_ID must be 1..4294967295, got \"%s\"", ev_text);
	}
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	for (uint64_t n = 0; !top_stop && (count == 0 || n < count); n++) {
		uint32_t id = ev != 0 ? (uint32_t)ev : first_open(ask, arg);
		char line[64];

		clock_gettime(CLOCK_MONOTONIC, &cur.at);
		cur.stats = ask_json(ask, arg, "stats", &cur.stats_text);
		if (cur.stats == NULL) {
			fprintf(stderr, "flashgatectl: top: no answer from the control plane\n");
			frame_free(&cur);
			frame_free(&prev);
			return 2;
		}
		if (id != 0) {
			snprintf(line, sizeof(line), "event show %u", id);
			cur.event = ask_json(ask, arg, line, &cur.event_text);
		}
		if (tty)
			fputs("\033[H\033[2J", stdout); /* home, clear: redrawn in place */
		render(stdout, &cur, &prev, id);
		if (!tty)
			fputc('\n', stdout);
		fflush(stdout);
		frame_free(&prev);
		prev = cur;
		memset(&cur, 0, sizeof(cur));
		if (count != 0 && n + 1 >= count)
			break;
		/* A second between frames; a signal ends the sleep and the loop. */
		struct timespec s = {1, 0};

		while (!top_stop && nanosleep(&s, &s) != 0 && errno == EINTR)
			;
	}
	frame_free(&prev);
	return 0;
}
