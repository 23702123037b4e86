/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/ow_config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "order-writer/ow_link.h"

#define OW_CONFIG_FIELD(f) \
	.offset = offsetof(struct ow_config, f), .size = sizeof(((struct ow_config *)0)->f)

static const struct cfg_key ow_config_keys[] = {
	{
		.name = "id",
		.type = CFG_UINT,
		OW_CONFIG_FIELD(id),
		.min = 1,
		.max = UINT32_MAX,
		.def = "300",
		.doc = "This order writer's sender id on the wire (RESULT and RESTOCK messages to "
		       "the control plane); unique among the programs that talk to it.",
	},
	{
		.name = "push_endpoint",
		.type = CFG_STRING,
		OW_CONFIG_FIELD(push_endpoint),
		.min = 1,
		.max = 511,
		.def = "tcp://127.0.0.1:5601",
		.doc = "The control plane's PULL socket ([controlplane] pull_endpoint): order ids, "
		       "expiries and restocks are pushed there and relayed to its data planes; or "
		       "up to 4 control planes' separated by commas (all with the same CURVE "
		       "server key), each sent every message: a data plane talks to one of them "
		       "(docs/ha.md).",
	},
	{
		.name = "push_queue",
		.type = CFG_UINT,
		OW_CONFIG_FIELD(push_queue),
		.min = 1,
		.max = 65536,
		.def = "4096",
		.doc = "Messages kept for each control plane that takes none (not connected yet, "
		       "gone, busy): this many in ZeroMQ's queue (its high-water mark), then as "
		       "many in the writer's, 1..65536; beyond, its records are dropped and "
		       "counted for it (flashgate_ow_link_peer_dropped_total) while the others "
		       "still get them. Never waits.",
	},
	{
		.name = "group",
		.type = CFG_STRING,
		OW_CONFIG_FIELD(group),
		.min = 1,
		.max = 63,
		.def = "order-writer",
		.doc = "The Redis consumer group every order writer reads the outboxes with; all "
		       "writers of one sale must use the same.",
	},
	{
		.name = "batch_size",
		.type = CFG_UINT,
		OW_CONFIG_FIELD(batch_size),
		.min = 1,
		.max = 2048,
		.def = "500",
		.doc = "Orders written by one PostgreSQL transaction, 1..2048.",
	},
	{
		.name = "connections",
		.type = CFG_UINT,
		OW_CONFIG_FIELD(connections),
		.min = 1,
		.max = OW_CONFIG_CONNECTIONS_MAX,
		.def = "2",
		.doc = "PostgreSQL connections writing batches, 1..4: with more than one, one "
		       "batch "
		       "inserts while another's COMMIT waits for the disk.",
	},
	{
		.name = "max_rate",
		.type = CFG_UINT,
		OW_CONFIG_FIELD(max_rate),
		.min = 0,
		.max = 10000000,
		.def = "10000",
		.doc = "The most orders committed per second, all events together; the backlog "
		       "waits in the outboxes. 0: no cap.",
	},
	{
		.name = "poll_interval",
		.type = CFG_DURATION,
		OW_CONFIG_FIELD(poll_ms),
		.min = 1,
		.max = 1000,
		.def = "5ms",
		.doc = "How long the writer waits when no outbox had new entries, 1ms..1s.",
	},
	{
		.name = "claim_idle",
		.type = CFG_DURATION,
		OW_CONFIG_FIELD(claim_idle_ms),
		.min = 0,
		.max = 3600000,
		.def = "30s",
		.doc = "An outbox entry delivered this long ago and not acknowledged belongs to a "
		       "writer taken for dead: it is claimed and written (exactly once: the "
		       "order's "
		       "reservation id is unique). Longer than a slow transaction.",
	},
	{
		.name = "claim_interval",
		.type = CFG_DURATION,
		OW_CONFIG_FIELD(claim_interval_ms),
		.min = 10,
		.max = 3600000,
		.def = "5s",
		.doc = "How often pending entries are looked for (also once at start).",
	},
	{
		.name = "events_refresh",
		.type = CFG_DURATION,
		OW_CONFIG_FIELD(events_refresh_ms),
		.min = 10,
		.max = 600000,
		.def = "2s",
		.doc = "How often the events to read (open, or closed with a backlog) are read "
		       "from PostgreSQL.",
	},
	{
		.name = "sweep_interval",
		.type = CFG_DURATION,
		OW_CONFIG_FIELD(sweep_interval_ms),
		.min = 1,
		.max = 3600000,
		.def = "1s",
		.doc = "How often unpaid orders past their deadline are expired and their stock "
		       "returned (PostgreSQL, then Redis).",
	},
	{
		.name = "results_interval",
		.type = CFG_DURATION,
		OW_CONFIG_FIELD(results_interval_ms),
		.min = 10,
		.max = 60000,
		.def = "200ms",
		.doc = "How often paid and cancelled orders are looked for (PostgreSQL) and their "
		       "results stored in Redis and sent to the control plane, which publishes "
		       "them to every data plane: a buyer's poll shows paid or cancelled this "
		       "long after it happened, 10ms..1m.",
	},
	{
		.name = "metrics_address",
		.type = CFG_IPV4,
		OW_CONFIG_FIELD(metrics_address),
		.def = "127.0.0.1",
		.doc = "Address of the order writer's Prometheus metrics endpoint: a loopback "
		       "address, or any with metrics_allow.",
	},
	{
		.name = "metrics_port",
		.type = CFG_UINT,
		OW_CONFIG_FIELD(metrics_port),
		.min = 0,
		.max = 65535,
		.def = "0",
		.doc = "TCP port of its GET /metrics (docs/metrics.md); 0: none (9602 is the "
		       "usual choice).",
	},
	{
		.name = "metrics_allow",
		.type = CFG_STRING,
		OW_CONFIG_FIELD(metrics_allow),
		.min = 0,
		.max = 511,
		.def = "",
		.doc = "IPv4 networks that may scrape its metrics (A.B.C.D/LEN, comma-separated, "
		       "at most 16; the loopback always may); needed for a metrics_address that "
		       "is not loopback. Empty: loopback address only.",
	},
	{
		.name = "sweep_batch",
		.type = CFG_UINT,
		OW_CONFIG_FIELD(sweep_batch),
		.min = 1,
		.max = 10000,
		.def = "500",
		.doc = "Orders expired by one transaction of the sweeper, 1..10000.",
	},
	{
		.name = "trim_interval",
		.type = CFG_DURATION,
		OW_CONFIG_FIELD(trim_interval_ms),
		.min = 0,
		.max = 86400000,
		.def = "0",
		.doc = "How often acknowledged outbox entries are deleted (never one still pending "
		       "or not delivered); 0: never, the outbox keeps one entry per reservation.",
	},
	ZLINK_CFG_SECRET_KEY(struct ow_config, links),
	ZLINK_CFG_SERVER_KEY(struct ow_config, links),
	ZLINK_CFG_KEY_DIR(struct ow_config, links),
	ZLINK_CFG_INSECURE(struct ow_config, links),
	{
		.name = "log_level",
		.type = CFG_LOGLEVEL,
		OW_CONFIG_FIELD(log_level),
		.def = "info",
		.doc = "The most verbose messages logged: err, warn, notice, info or debug.",
	},
};

/* [order_writer]: push_endpoint a list of 1..OW_LINK_PEERS_MAX endpoints. */
static int
ow_config_check(const void *obj, const char **key, char *msg, size_t msglen)
{
	const struct ow_config *c = obj;
	char eps[OW_LINK_PEERS_MAX][OW_LINK_EP_MAX];

	if (ow_link_split(c->push_endpoint, eps, msg, msglen) < 0) {
		*key = "push_endpoint";
		return -EINVAL;
	}
	return 0;
}

/* The same keys as the control plane's [redis] and [postgres]: one file serves both. */
static const struct cfg_section ow_config_sections[] = {
	{
		.name = "order_writer",
		.doc = "The order writer: outbox reading, batching, rate cap, expiry sweeper.",
		.keys = ow_config_keys,
		.n_keys = sizeof(ow_config_keys) / sizeof(ow_config_keys[0]),
		.check = ow_config_check,
	},
	{
		.name = "redis",
		.doc = "The Redis whose outboxes hold the reservations to write.",
		.keys = store_config_redis_keys,
		.n_keys = STORE_CONFIG_REDIS_N_KEYS,
		.check = store_config_redis_check,
		.offset = offsetof(struct ow_config, store),
	},
	{
		.name = "postgres",
		.doc = "The PostgreSQL that orders are written to.",
		.keys = store_config_pg_keys,
		.n_keys = STORE_CONFIG_PG_N_KEYS,
		.offset = offsetof(struct ow_config, store),
	},
};

/* One flashgate.conf serves every program: the others' sections are theirs to check. */
static const char *const ow_config_foreign[] = {
	"dataplane", "admission", "bridge", "event", "controlplane", "edge", NULL};

const struct cfg_schema ow_config_schema = {
	.foreign = ow_config_foreign,
	.sections = ow_config_sections,
	.n_sections = sizeof(ow_config_sections) / sizeof(ow_config_sections[0]),
	.target_size = sizeof(struct ow_config),
	.help = "flashgate-order-writer --help-config lists every key",
};
