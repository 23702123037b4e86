/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_CONFIG_T_H
#define FG_DP_CONFIG_T_H
/* The data plane's settings, as read from flashgate.conf and the command line. */
#include <stdint.h>

#include "common/zlink.h"

#define DP_MAX_LISTEN_PORTS 8
#define DP_MAX_EVENTS       64
#define DP_EVENT_NAME_MAX   64
#define DP_HOST_MAX         253 /* a DNS name (RFC 1035 §2.3.4) */

/* One sale as configured: id, name, [starts_at, ends_at) in Unix milliseconds, stock. */
struct dp_event_cfg {
	uint32_t id;
	char name[DP_EVENT_NAME_MAX];
	uint64_t starts_at_ms;
	uint64_t ends_at_ms;
	uint32_t stock;
};

struct dp_config {
	/* [dataplane] */
	uint32_t ipv4_addr;                        /* network byte order */
	uint16_t listen_ports[DP_MAX_LISTEN_PORTS]; /* host byte order */
	unsigned n_listen_ports;
	uint16_t mss;              /* MSS we advertise and the largest segment we send */
	uint16_t mss_floor;        /* a SYN with a smaller MSS is dropped */
	char host[DP_HOST_MAX + 1]; /* our DNS name for absolute-form requests; "": none */
	uint16_t burst;            /* RX/TX burst size, 1..64 */
	uint16_t rx_desc;          /* RX descriptors per queue */
	uint16_t tx_desc;          /* TX descriptors per queue */
	uint32_t mbufs;            /* mbufs in each worker's pool */
	uint16_t mbuf_cache;       /* per-lcore mempool cache */
	uint8_t syncookie_secret[16]; /* master key of the SYN cookies */
	int syncookie_secret_set;  /* 0: a random secret is drawn at start */
	uint32_t syncookie_slot_s; /* seconds per cookie time slot */
	uint8_t ip_ttl;            /* TTL of the packets we send */
	uint32_t kept_connections; /* kept connections per worker from trusted edges; 0: none */
	uint32_t kept_idle_ms;     /* a kept connection idle this long is closed */
	uint32_t kept_first_ms;    /* one without a request this long after opening is closed */
	uint32_t kept_per_client;  /* kept connections per worker of one PROXY header's client */
	uint32_t stats_interval_s; /* 0: no periodic counter line in the log */
	int log_level;             /* enum log_level */
	/* [admission] */
	char cors_origin[128];          /* "" : no CORS headers; "*" : any origin */
	uint32_t purchase_token_ttl_s;  /* how long a purchase token is valid */
	uint32_t receipt_young_ms;      /* a receipt this young with no result yet is "queued" */
	uint32_t receipt_retry_ms;      /* older than this with no result: "retry" */
	uint32_t limit_table_log2;      /* entries per rate-limit table (per worker), log2 */
	uint32_t poll_rate;             /* result polls per user and second (per worker); 0: no limit */
	uint32_t poll_burst;            /* ... and their bucket; 0: one second's worth */
	uint32_t query_cooldown_ms;     /* one result query per (event, user) this long */
	/* [bridge] */
	uint32_t dp_id;                 /* this data plane's id on the wire, 1..1023 */
	char push_endpoint[128];        /* the control plane's PULL */
	char sub_endpoint[128];         /* the control plane's PUB */
	uint32_t ring_size;             /* per-worker ring to the bridge */
	uint32_t batch_max;             /* reservations per message */
	uint32_t batch_wait_ms;         /* longest wait for a batch to fill */
	uint32_t result_capacity;       /* (event, user) results kept for polls */
	uint32_t resync_ms;             /* silence from the control plane before a resync */
	uint32_t snapshot_retry_ms;     /* an unanswered snapshot request is repeated */
	uint32_t clock_skew_max_ms;     /* a skew against the control plane beyond it is logged */
	uint32_t push_hwm;              /* ZeroMQ send high-water mark, messages */
	struct zlink_settings links;    /* CURVE key files, insecure_plaintext_links */
	/* [edge] */
	char edge_trusted[4096];        /* the trusted edges' text (edge.h parses it) */
	char edge_trusted_file[4096];   /* and a file of more of them; "": none */
	uint32_t stop_timeout_ms;       /* the longest a stop hands accepted reservations over */
	/* [event.ID] sections */
	struct dp_event_cfg events[DP_MAX_EVENTS];
	unsigned n_events;
};

#endif
