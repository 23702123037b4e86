/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_GUARD_H
#define FG_TESTS_GUARD_H
/*
 * Places test input so that its last byte sits just before a PROT_NONE page:
 * a parser that reads one byte too far crashes the test instead of passing.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct guard_buf {
	char *map;
	size_t map_len;
};

/* Copies len bytes of src to just before a guard page; returns the copy, or NULL. */
static inline char *
guard_place(struct guard_buf *g, const void *src, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t data_pages = (len + page - 1) / page;

	if (data_pages == 0)
		data_pages = 1;
	g->map_len = (data_pages + 1) * page;
	g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED)
		return NULL;
	if (mprotect(g->map + data_pages * page, page, PROT_NONE) != 0) {
		munmap(g->map, g->map_len);
		return NULL;
	}
	char *dst = g->map + data_pages * page - len;
	memcpy(dst, src, len);
	return dst;
}

static inline void guard_free(struct guard_buf *g);

/*
 * As guard_place(), but g's mapping is kept for the next input that fits in it: for a test of
 * hundreds of thousands of small inputs, one mapping instead of three system calls each (which
 * took test_claims past its timeout on a loaded host). guard_free() g once at the end.
 */
static inline char *
guard_place_again(struct guard_buf *g, const void *src, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (g->map != NULL && g->map != MAP_FAILED && len <= g->map_len - page) {
		char *dst = g->map + (g->map_len - page) - len;

		memcpy(dst, src, len);
		return dst;
	}
	guard_free(g);
	return guard_place(g, src, len);
}

static inline void
guard_free(struct guard_buf *g)
{
	if (g->map != NULL && g->map != MAP_FAILED)
		munmap(g->map, g->map_len);
	g->map = NULL;
}

#endif
