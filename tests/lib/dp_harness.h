/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_DP_HARNESS_H
#define FG_TESTS_DP_HARNESS_H
/*
 * A worker without a port, for calling pipeline_burst() directly: EAL in
 * memory without hugepages or PCI, a mempool, and a worker set up the way
 * main() sets one up, with three events (open, upcoming, closed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "dataplane/events.h"
#include "dataplane/pipeline.h"
#include "dataplane/worker.h"
#include "tests/lib/pktbuild.h"

#define DPH_EVENT_OPEN     1
#define DPH_EVENT_UPCOMING 2
#define DPH_EVENT_CLOSED   3

struct dp_harness {
	struct rte_mempool *pool;
	struct worker *w;
	struct event_table events;
	bool stop;
};

static const uint8_t dph_secret[16] = { 0x66, 0x6c, 0x61, 0x73, 0x68, 0x67, 0x61, 0x74, 0x65,
	0x2d, 0x74, 0x65, 0x73, 0x74, 0x21, 0x21 };

/* Starts EAL and builds the worker; exits the process on failure (tests only). */
static inline void
dph_init(struct dp_harness *h, const char *prog)
{
	char *eal_argv[] = { (char *)prog, "--no-huge", "-m", "256", "--no-pci", "--no-shconf",
		"--no-telemetry", "--log-level", "lib.*:error", "-l", "0", NULL };

	if (rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		exit(2);
	}
	h->pool = rte_pktmbuf_pool_create("dph_pool", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
		SOCKET_ID_ANY);
	h->w = rte_zmalloc("worker", sizeof(*h->w), RTE_CACHE_LINE_SIZE);
	if (h->pool == NULL || h->w == NULL) {
		fprintf(stderr, "pool/worker allocation failed\n");
		exit(2);
	}
	struct worker *w = h->w;
	static const uint8_t mac[6] = PB_DP_MAC;

	w->ipv4_addr = rte_cpu_to_be_32(PB_DP_IP);
	w->mss = 1460;
	w->ip_ttl = 64;
	w->burst = 32;
	w->pool = h->pool;
	w->stop = &h->stop;
	worker_listen_add(w, 80);
	worker_listen_add(w, 8080);
	memcpy(&w->ports[0].mac, mac, 6);
	if (worker_init(w, dph_secret, 64) != 0) {
		fprintf(stderr, "worker_init failed\n");
		exit(2);
	}
	uint64_t now = w->now_ms;
	struct dp_event_cfg ev[3] = {
		{ .id = DPH_EVENT_OPEN, .name = "Open \"sale\"", .starts_at_ms = now - 3600000,
			.ends_at_ms = now + 3600000, .stock = 1000 },
		{ .id = DPH_EVENT_UPCOMING, .name = "Later", .starts_at_ms = now + 3600000,
			.ends_at_ms = now + 7200000, .stock = 10 },
		{ .id = DPH_EVENT_CLOSED, .name = "Past", .starts_at_ms = now - 7200000,
			.ends_at_ms = now - 3600000, .stock = 5 },
	};

	if (event_table_build(&h->events, ev, 3) != 0)
		exit(2);
	w->events = &h->events;
}

/* Runs one frame through the pipeline: returns the answer, or NULL when it was dropped. */
static inline struct rte_mbuf *
dph_one(struct dp_harness *h, struct rte_mbuf *m)
{
	struct rte_mbuf *tx[1];

	return pipeline_burst(h->w, 0, &m, 1, tx) == 1 ? tx[0] : NULL;
}

#endif
