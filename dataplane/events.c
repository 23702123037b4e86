/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/events.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
cmp_entry(const void *a, const void *b)
{
	const struct event_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Writes s as a quoted JSON string into out (size >= 2 * strlen + 8); returns its length. */
static size_t
json_quote(char *out, const char *s)
{
	size_t n = 0;

	out[n++] = '"';
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			out[n++] = '\\';
			out[n++] = (char)ch;
		} else if (ch < 0x20) {
			/* \u00XX takes six bytes; the buffer is sized for two per input byte, so
			 * control characters (never in a sane name) are replaced by a space. */
			out[n++] = ' ';
		} else {
			out[n++] = (char)ch;
		}
	}
	out[n++] = '"';
	out[n] = '\0';
	return n;
}

int
event_table_build(struct event_table *t, const struct dp_event_cfg *cfg, unsigned n)
{
	if (n > DP_MAX_EVENTS)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < n; i++) {
		struct event_entry *e = &t->e[i];

		e->id = cfg[i].id;
		e->stock = cfg[i].stock;
		e->starts_at_ms = cfg[i].starts_at_ms;
		e->ends_at_ms = cfg[i].ends_at_ms;
		e->name_json_len = (uint8_t)json_quote(e->name_json, cfg[i].name);
	}
	t->n = n;
	t->selling = n;
	qsort(t->e, n, sizeof(t->e[0]), cmp_entry);
	for (unsigned i = 1; i < n; i++)
		if (t->e[i].id == t->e[i - 1].id)
			return -EINVAL;
	return 0;
}

void
event_entry_set_fair(struct event_entry *e, const struct wire_fair *f)
{
	e->has_fair = 1;
	e->draw_state = f->draw_state;
	e->pow_bits = f->pow_bits;
	e->queue_opens_at_ms = f->queue_opens_at_ms;
	e->draw_at_ms = f->draw_at_ms;
	e->entrants = f->entrants;
	e->decided = f->decided;
	e->rate = f->rate;
	e->served = f->served;
	e->final = (f->flags & WIRE_FAIR_F_FINAL) != 0;
	memcpy(e->seed_sha256, f->seed_sha256, sizeof(e->seed_sha256));
	memcpy(e->entrants_digest, f->entrants_digest, sizeof(e->entrants_digest));
	memcpy(e->seed, f->seed, sizeof(e->seed));
}

const char *
event_state_name(enum event_state s)
{
	switch (s) {
	case EVENT_UPCOMING:
		return "upcoming";
	case EVENT_OPEN:
		return "open";
	case EVENT_SOLD_OUT:
		return "sold_out";
	case EVENT_CLOSED:
		return "closed";
	case EVENT_QUEUEING:
		return "queueing";
	case EVENT_DRAWING:
		return "drawing";
	}
	return "unknown";
}
