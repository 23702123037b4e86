/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>

#include "tools/loadgen/lg_conn.h"

struct lg_table *
lg_table_create(uint32_t n, uint16_t port_base)
{
	struct lg_table *t;

	if (n == 0 || port_base == 0 || n > 65536u - port_base)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->c = calloc(n, sizeof(*t->c));
	t->free_list = calloc(n, sizeof(*t->free_list));
	t->wake_cap = n * LG_WAKE_PER_SLOT;
	t->wake = calloc(t->wake_cap, sizeof(*t->wake));
	t->timer_cap = n * LG_WAKE_PER_SLOT;
	t->timer = calloc(t->timer_cap, sizeof(*t->timer));
	if (t->c == NULL || t->free_list == NULL || t->wake == NULL || t->timer == NULL)
		goto fail;
	t->n = n;
	t->port_base = port_base;
	/* Highest index at the bottom, so slot 0 is taken first: ports in order in a capture. */
	for (uint32_t i = 0; i < n; i++)
		t->free_list[i] = n - 1 - i;
	t->n_free = n;
	return t;
fail:
	lg_table_free(t);
	return NULL;
}

void
lg_table_free(struct lg_table *t)
{
	if (t == NULL)
		return;
	free(t->c);
	free(t->free_list);
	free(t->wake);
	free(t->timer);
	free(t);
}

bool
lg_table_timer_at(struct lg_table *t, const struct lg_conn *c)
{
	struct lg_wake *h = t->timer;
	uint32_t i = t->timer_n;

	if (i == t->timer_cap)
		return false;
	t->timer_n++;
	/* Sift up: the new entry rises above every parent due later. */
	while (i > 0 && h[(i - 1) / 2].due > c->t_due) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = (struct lg_wake){ .slot = (uint32_t)(c - t->c), .due = c->t_due };
	return true;
}

/* Removes the heap's top entry. */
static void
timer_pop(struct lg_table *t)
{
	struct lg_wake *h = t->timer;
	struct lg_wake last = h[--t->timer_n];
	uint32_t i = 0, n = t->timer_n;

	/* Sift the last entry down from the top. */
	for (;;) {
		uint32_t k = 2 * i + 1;

		if (k >= n)
			break;
		if (k + 1 < n && h[k + 1].due < h[k].due)
			k++;
		if (h[k].due >= last.due)
			break;
		h[i] = h[k];
		i = k;
	}
	if (n > 0)
		h[i] = last;
}

struct lg_conn *
lg_table_timer_next(struct lg_table *t, uint64_t now)
{
	while (t->timer_n != 0 && t->timer[0].due <= now) {
		struct lg_wake k = t->timer[0];
		struct lg_conn *c = &t->c[k.slot];

		timer_pop(t);
		if (c->state == LG_CS_IDLE && c->t_due == k.due)
			return c;
	}
	return NULL;
}
