/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_OW_CONFIG_H
#define FG_OW_CONFIG_H
/*
 * flashgate-order-writer's settings: its own [order_writer] section, and the [redis] and
 * [postgres] sections it shares with the control plane (the same keys, so one flashgate.conf
 * serves both).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/config.h"
#include "common/zlink.h"
#include "store/store_config.h"

/* PostgreSQL connections writing batches at most (order_writer.connections). */
#define OW_CONFIG_CONNECTIONS_MAX 4

struct ow_config {
	/* [order_writer] */
	uint32_t id;		 /* sender id on the wire */
	char push_endpoint[512]; /* the control planes' PULLs (1..OW_LINK_PEERS_MAX, commas):
				    RESULT and RESTOCK records */
	uint32_t push_queue;	 /* messages kept for one control plane that takes none */
	char group[64];		 /* the consumer group on every outbox */
	uint32_t batch_size;	 /* orders per transaction */
	uint32_t connections;	 /* PostgreSQL connections writing
				    batches: 1..OW_CONFIG_CONNECTIONS_MAX */
	uint32_t max_rate;	 /* orders committed per second; 0: no cap */
	uint32_t poll_ms;	 /* idle wait when no outbox had entries */
	uint32_t claim_idle_ms;	 /* pending this long: the writer it went to is taken for dead */
	uint32_t claim_interval_ms;
	uint32_t events_refresh_ms;
	uint32_t sweep_interval_ms;
	uint32_t sweep_batch;
	uint32_t results_interval_ms; /* paid and cancelled orders' results published this often */
	uint32_t trim_interval_ms; /* 0: never trim the outboxes */
	uint32_t metrics_address;  /* network order; loopback unless metrics_allow */
	uint16_t metrics_port;	   /* 0: no metrics */
	char metrics_allow[512];   /* networks that may scrape; "": loopback address only */
	int log_level;
	struct zlink_settings links; /* CURVE keys, insecure_plaintext_links */
	struct store_config store; /* [redis] and [postgres], as the control plane reads them */
};

extern const struct cfg_schema ow_config_schema;

#endif
