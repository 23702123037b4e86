/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/mapped_alloc.h"

#include <stdint.h>

#include <rte_malloc.h>

/* The smallest page there is: touching every 4 KB also touches every larger page. */
#define SMALL_PAGE 4096u

void
dp_mem_map_pages(void *p, size_t len)
{
	uintptr_t end = (uintptr_t)p + len;

	/* A byte of each 4 KB page that p[0..len) touches: p's own, then each page's first. */
	for (uintptr_t q = (uintptr_t)p; q < end; q = (q & ~(uintptr_t)(SMALL_PAGE - 1)) + SMALL_PAGE) {
		volatile char *b = (volatile char *)q;

		*b = *b;
	}
}

void *
dp_zmalloc_mapped(const char *name, size_t size, unsigned align, int socket)
{
	void *p = rte_zmalloc_socket(name, size, align, socket);

	if (p != NULL)
		dp_mem_map_pages(p, size);
	return p;
}
