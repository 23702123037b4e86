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
	if (t->c == NULL || t->free_list == NULL || t->wake == NULL)
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
	free(t);
}
