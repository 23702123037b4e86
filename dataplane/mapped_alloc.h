/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_MAPPED_ALLOC_H
#define FG_DP_MAPPED_ALLOC_H
/*
 * The data plane's large tables (rate limits, kept connections, results) taken from DPDK's
 * memory with every page mapped before they are used. On hugepages DPDK maps each page as it
 * takes it, and this is one more pass over the memory at start. On 4 KB pages (--no-huge) the
 * kernel maps a page at its first write, so without it a table's pages would be mapped by the
 * worker during the sale, one page fault each on the first requests of a flood; and a prefetch
 * of a page never written (a table whose limit is off: its buckets are never taken) cannot map
 * it, so every such prefetch walks the page tables in vain (bench_pipeline: 300 cycles a
 * reserve).
 */
#include <stddef.h>

/*
 * rte_zmalloc_socket(name, size, align, socket), its memory zeroed and every page of it
 * mapped (each 4 KB page read and written back once). Returns NULL when rte_zmalloc_socket()
 * does (rte_errno set). Free with rte_free().
 */
void *dp_zmalloc_mapped(const char *name, size_t size, unsigned align, int socket);

/* Maps every page of p[0..len) (p may be NULL when len is 0): each 4 KB page read and written
 * back once, its content unchanged. Only the owner may call it: nobody else may write p meanwhile. */
void dp_mem_map_pages(void *p, size_t len);

#endif
