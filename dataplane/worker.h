/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_WORKER_H
#define FG_DP_WORKER_H
/*
 * The per-lcore state of a worker: one cache-aligned struct worker per lcore, which holds
 * everything the worker writes, set up by worker_init() and looked up once when the lcore
 * loop (lcore_loop.h) starts. The pipeline (pipeline.h) reads and counts into it.
 */
#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_mempool.h>

#include "dataplane/bridge/bridge.h"
#include "dataplane/clock.h"
#include "dataplane/conn_table.h"
#include "dataplane/counters.h"
#include "dataplane/dp_config-t.h"
#include "dataplane/edge.h"
#include "dataplane/http_parser.h"
#include "dataplane/events.h"
#include "dataplane/http_response.h"
#include "dataplane/ratelimit.h"
#include "dataplane/shared_state.h"
#include "net/tcp_syncookie.h"

#define WORKER_MAX_RXQ   16
#define WORKER_MAX_PORTS 16
#define WORKER_BURST_MAX 64
_Static_assert(
	WORKER_BURST_MAX <= BRIDGE_STAGE_MAX, "a burst's reservations go to the bridge at once");

struct worker_rxq {
	uint16_t port;
	uint16_t queue;
};

/* Per-port facts the pipeline needs. */
struct worker_port {
	struct rte_ether_addr mac;
	bool tx_cksum_offload; /* the port fills IPv4 and TCP checksums on TX */
};

/*
 * The names an absolute-form request-target may give for a worker's data plane
 * (http_authority_is()): its address, dotted, and dataplane.host when set, pointing into text.
 */
struct worker_names {
	struct http_str name[2];
	unsigned n;
	char text[16 + DP_HOST_MAX + 1];
};

struct worker {
	/* Read-mostly settings, copied in at start. */
	uint32_t ipv4_addr;               /* network byte order */
	uint16_t mss;                     /* the MSS we advertise, the largest segment we send */
	uint16_t mss_floor;               /* a SYN with a smaller MSS is dropped */
	uint8_t ip_ttl;
	uint16_t burst;
	unsigned lcore_id;
	unsigned index;                   /* 0..n_workers-1 */
	uint64_t listen[65536 / 64];      /* bitmap of listening TCP ports (host order) */
	struct worker_port ports[WORKER_MAX_PORTS];
	struct worker_rxq rxq[WORKER_MAX_RXQ];
	unsigned n_rxq;
	struct rte_mempool *pool;
	const struct event_table *events; /* from the config; the control plane's replace them */
	const struct edge_trust *edge;    /* [edge] trusted (edge_trusted4()); NULL: none */

	/* Admission. */
	struct bridge_port *bridge;       /* NULL: no control plane (reserve answers 503) */
	struct rte_rcu_qsbr *qsbr;        /* the shared state's RCU; NULL without a bridge */
	const struct dp_shared *sh;       /* this burst's view; NULL before the first snapshot */
	struct rl_table *rl_ip, *rl_user, *rl_device; /* NULL: that limit is off */
	struct rl_table *rl_poll;         /* result polls per user; NULL: no limit */
	struct rl_params poll_limit;      /* admission.poll_rate / poll_burst */
	struct worker_budget {
		uint32_t event;           /* the event this slot's bucket belongs to */
		struct rl_bucket bucket;
	} budget[DP_MAX_EVENTS];          /* per-event forward budget, slot = index in table */
	struct worker_path {
		uint32_t event;
		uint64_t version;         /* of the shared state it was made from */
		uint8_t len;              /* 0: none (no current sale key) */
		char seg[TOK_PATH_MAX_LEN + 1]; /* "<kid>-<pathkey>" of the current sale key */
	} path_cache[DP_MAX_EVENTS];      /* the hidden path per event, slot = index in table */
	unsigned n_workers;               /* the budget is shared among this many */
	struct rl_params fwd_total;       /* the limit fwd_share was split from (zero at start) */
	struct rl_params fwd_share;       /* this worker's share of it (adm_forward_share()) */
	uint64_t rid_seq;                 /* the next reservation's sequence number */
	uint32_t dp_id;
	uint32_t purchase_ttl_s;
	uint32_t receipt_young_ms;
	uint32_t receipt_retry_ms;
	uint8_t cors_len;                 /* 0: no CORS headers */
	bool cors_any;                    /* "*" */
	char cors_origin[128];

	/* Kept connections from trusted edges (pipeline/kept.h); NULL: none (no trusted edge, or
	 * dataplane.kept_connections = 0), and every connection is stateless. */
	struct conn_table *conns;
	uint32_t kept_idle_ms;            /* dataplane.kept_idle_timeout */
	uint32_t kept_first_ms;           /* dataplane.kept_first_request_timeout; 0: none */
	uint32_t kept_per_client;         /* dataplane.kept_per_client; 0: no bound */

	/* Time, refreshed once per burst. */
	struct clock clock;
	uint64_t now_ms;

	struct syncookie_ctx cookies;
	struct http_resp_ctx resp;

	const volatile bool *stop;        /* set by the main lcore to end lcore_loop_run() */

	/* Rarely read (an absolute-form request), so apart: in the padding before ctr, the
	 * struct's layout and size as without it. Set up by worker_init(). */
	const struct worker_names *names;

	struct dp_counters ctr __rte_cache_aligned;
} __rte_cache_aligned;

static inline void
worker_listen_add(struct worker *w, uint16_t port)
{
	w->listen[port >> 6] |= 1ull << (port & 63);
}

/* Counts a dropped packet under reason r; returns 0 (the pipeline's "drop it"). */
static inline int
worker_drop(struct worker *w, enum dp_drop_reason r)
{
	w->ctr.drops[r]++;
	return 0;
}

static inline bool
worker_listens(const struct worker *w, uint16_t port)
{
	return (w->listen[port >> 6] >> (port & 63)) & 1;
}

/*
 * Refreshes the worker's clock-driven state (time, cookie keys, Date line)
 * for TSC value tsc. Called once per burst; does real work once a second.
 */
static inline void
worker_clock_update(struct worker *w, uint64_t tsc)
{
	w->now_ms = clock_ms(&w->clock, tsc);
	http_resp_tick(&w->resp, w->now_ms);
	syncookie_tick(&w->cookies, w->now_ms / 1000);
}

/* The events answered for now: the control plane's once its snapshot arrived, else the config's. */
static inline const struct event_table *
worker_events(const struct worker *w)
{
	return w->sh != NULL ? w->sh->events : w->events;
}

/*
 * Copies w's counters into *out, with its rate-limit tables' counters (out->limit). Read by
 * another thread while w runs: each value may be one update old, never torn (64-bit loads).
 */
void worker_counters_read(const struct worker *w, struct dp_counters *out);

/* *sum = the counters of workers[0..n) added up, as worker_counters_read() reads each. */
void worker_counters_sum(struct worker *const *workers, unsigned n, struct dp_counters *sum);

/*
 * Prepares w for use: clock (its own calibration unless w->clock was attached to a shared one
 * first, clock_attach()), cookie keys, response lines, and the names it answers an
 * absolute-form request to (its ipv4_addr, dotted, and host unless NULL or empty; at most
 * DP_HOST_MAX bytes; w->names, allocated here). secret is the SYN cookie master key. A mss_floor
 * left 0 becomes 536. Returns 0 or a negative errno (-EINVAL: host too long; -ENOMEM).
 */
int worker_init(struct worker *w, const uint8_t secret[16], uint32_t cookie_slot_s,
	const char *host);

#endif
