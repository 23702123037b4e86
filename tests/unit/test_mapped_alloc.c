/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data plane's large tables come with every page mapped (dataplane/mapped_alloc.h): on 4 KB
 * pages (--no-huge, as here) mincore(2) says every page of a dp_zmalloc_mapped() block, of a
 * rate-limit table, of a result table's index, summary and slots and of a kept-connection
 * table's entries and index is resident once created, where a plain rte_zmalloc_socket() block of
 * the same size is not; dp_mem_map_pages() changes no byte, and maps a block that starts and ends
 * inside a page. Nothing is freed before the end: rte_free() zeroes what it frees, which maps
 * those pages for whatever is taken from them next, so each check needs memory never used.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_malloc.h>

#include "dataplane/conn_table.h"
#include "dataplane/mapped_alloc.h"
#include "dataplane/ratelimit.h"
#include "dataplane/result_table.h"
#include "tests/lib/eal_rundir.h"
#include "tests/tap.h"

/* The pages of p[0..len) that are resident, and how many pages it spans (*pages). */
static size_t
resident(const void *p, size_t len, size_t *pages)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
	size_t n = ((uintptr_t)p + len - a + pg - 1) / pg, in = 0;
	unsigned char *vec = malloc(n);

	*pages = n;
	if (vec == NULL || mincore((void *)a, n * pg, vec) != 0) {
		free(vec);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		in += vec[i] & 1;
	free(vec);
	return in;
}

/* Whether every page of p[0..len) is resident; says how many are when not. */
static bool
all_resident(const void *p, size_t len, const char *what)
{
	size_t pages, in = resident(p, len, &pages);

	if (in != pages)
		tap_diag("%s: %zu of %zu pages resident", what, in, pages);
	return p != NULL && in == pages;
}

static void
test_blocks(void)
{
	const size_t len = 8u << 20;
	void *plain = rte_zmalloc_socket("plain", len, 64, SOCKET_ID_ANY);
	size_t pages, in = resident(plain, len, &pages);

	tap_ok(plain != NULL && in < pages / 2,
		"a plain rte_zmalloc_socket() block of 8 MB is mostly unmapped (%zu of %zu pages): "
		"what this test tells apart",
		in, pages);

	void *m = dp_zmalloc_mapped("mapped", len, 64, SOCKET_ID_ANY);

	tap_ok(all_resident(m, len, "dp_zmalloc_mapped"), "dp_zmalloc_mapped(): every page mapped");

	/* A block from inside one page to inside another, with bytes that must not change. */
	char *buf = rte_malloc_socket("odd", 3 * 4096 + 200, 4096, SOCKET_ID_ANY);

	if (!tap_ok(buf != NULL, "a block of 3 pages and a bit"))
		return;
	char *p = buf + 100;
	size_t n = 3 * 4096 - 50;

	for (size_t i = 0; i < n; i++)
		p[i] = (char)(i * 7 + 3);
	dp_mem_map_pages(p, n);
	bool same = true;

	for (size_t i = 0; i < n; i++)
		same &= p[i] == (char)(i * 7 + 3);
	tap_ok(same, "dp_mem_map_pages() leaves every byte as it was");
	/* plain, m and buf stay taken until the end (EAL's cleanup): see above. */
}

static void
test_tables(void)
{
	struct rl_table *rl = rl_table_create(18, SOCKET_ID_ANY);

	tap_ok(all_resident(rl, rl_table_mem_size(18), "rl_table"),
		"a rate-limit table of 2^18 entries (4 MB): every page mapped");

	struct result_table *rt = result_table_create("mapped_rt", 1u << 20, SOCKET_ID_ANY, NULL);
	size_t nb = rt != NULL ? (size_t)rt->bucket_mask + 1 : 0;

	tap_ok(rt != NULL &&
			all_resident(rt->buckets, nb * sizeof(*rt->buckets), "result buckets") &&
			all_resident(rt->summary, nb * sizeof(*rt->summary), "result summary") &&
			all_resident(rt->slots, sizeof(*rt->slots) << 20, "result slots"),
		"a result table of 2^20 keys: its index, summary and slots mapped");

	struct conn_table *ct = conn_table_create(4096, SOCKET_ID_ANY);

	tap_ok(ct != NULL && all_resident(ct->e, 4096 * sizeof(*ct->e), "conn entries") &&
			all_resident(ct->slot, ((size_t)ct->mask + 1) * sizeof(*ct->slot),
				"conn index"),
		"a kept-connection table of 4096: its entries and index mapped");
	conn_table_free(ct);
	result_table_free(rt);
	rl_table_free(rl);
}

int
main(int argc, char **argv)
{
	char *eal_argv[] = {argc > 0 ? argv[0] : "test_mapped_alloc", "--no-huge", "-m", "512",
		"--no-pci", "--no-shconf", "--no-telemetry", "--log-level", "lib.*:error", "-l",
		"0", NULL};

	if (rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 2;
	}
	test_eal_rundir_cleanup_at_exit();
	/* The blocks' check of a plain block first, while the heap is fresh. */
	test_blocks();
	test_tables();
	rte_eal_cleanup();
	return tap_done();
}
