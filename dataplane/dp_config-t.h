/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_CONFIG_T_H
#define FG_DP_CONFIG_T_H
/* The data plane's settings, as read from flashgate.conf and the command line. */
#include <stdint.h>

#define DP_MAX_LISTEN_PORTS 8
#define DP_MAX_EVENTS       64
#define DP_EVENT_NAME_MAX   64

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
	uint16_t burst;            /* RX/TX burst size, 1..64 */
	uint16_t rx_desc;          /* RX descriptors per queue */
	uint16_t tx_desc;          /* TX descriptors per queue */
	uint32_t mbufs;            /* mbufs in each worker's pool */
	uint16_t mbuf_cache;       /* per-lcore mempool cache */
	uint8_t syncookie_secret[16]; /* master key of the SYN cookies */
	int syncookie_secret_set;  /* 0: a random secret is drawn at start */
	uint32_t syncookie_slot_s; /* seconds per cookie time slot */
	uint8_t ip_ttl;            /* TTL of the packets we send */
	uint32_t stats_interval_s; /* 0: no periodic counter line in the log */
	int log_level;             /* enum log_level */
	/* [event.ID] sections */
	struct dp_event_cfg events[DP_MAX_EVENTS];
	unsigned n_events;
};

#endif
