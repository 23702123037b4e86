/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/cp_config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "common/log.h"

#define CP_FIELD(f) .offset = offsetof(struct cp_config, f), .size = sizeof(((struct cp_config *)0)->f)

static const struct cfg_key cp_keys[] = {
	{
		.name = "id",
		.type = CFG_UINT,
		CP_FIELD(id),
		.min = 1,
		.max = UINT32_MAX,
		.def = "100",
		.doc = "This control plane's sender id on the wire; data planes tell senders apart "
		       "by it, so two control planes need two ids.",
	},
	{
		.name = "pull_endpoint",
		.type = CFG_STRING,
		CP_FIELD(pull_endpoint),
		.min = 1,
		.max = 127,
		.def = "tcp://127.0.0.1:5601",
		.doc = "Where data planes push admitted reservations (bound here).",
	},
	{
		.name = "pub_endpoint",
		.type = CFG_STRING,
		CP_FIELD(pub_endpoint),
		.min = 1,
		.max = 127,
		.def = "tcp://127.0.0.1:5602",
		.doc = "Where data planes subscribe to results, events, keys, rules and limits "
		       "(bound here).",
	},
	{
		.name = "admin_socket",
		.type = CFG_STRING,
		CP_FIELD(admin_socket),
		.min = 1,
		.max = 107,
		.def = "/run/flashgate/admin.sock",
		.doc = "The Unix socket flashgatectl talks to; created with mode 0600.",
	},
	{
		.name = "admin_timeout",
		.type = CFG_DURATION,
		CP_FIELD(admin_timeout_ms),
		.min = 100,
		.max = 600000,
		.def = "5s",
		.doc = "The longest one admin connection may take to send its request and read its "
		       "answer; a slower client is cut off (the decisions never wait for it).",
	},
	{
		.name = "metrics_address",
		.type = CFG_IPV4,
		CP_FIELD(metrics_address),
		.def = "127.0.0.1",
		.doc = "Address of the Prometheus metrics endpoint: a loopback address, or any "
		       "with metrics_allow.",
	},
	{
		.name = "metrics_allow",
		.type = CFG_STRING,
		CP_FIELD(metrics_allow),
		.min = 0,
		.max = 511,
		.def = "",
		.doc = "IPv4 networks that may scrape the metrics (A.B.C.D/LEN, comma-separated, "
		       "at "
		       "most 16; the loopback always may); needed for a metrics_address that is "
		       "not loopback. Empty: loopback address only.",
	},
	{
		.name = "metrics_port",
		.type = CFG_UINT,
		CP_FIELD(metrics_port),
		.min = 0,
		.max = 65535,
		.def = "9601",
		.doc = "TCP port of GET /metrics; 0: no metrics endpoint.",
	},
	{
		.name = "batch_max",
		.type = CFG_UINT,
		CP_FIELD(batch_max),
		.min = 1,
		.max = 2048,
		.def = "512",
		.doc = "Reservations of one event decided by one run of reserve.lua.",
	},
	{
		.name = "batch_wait",
		.type = CFG_DURATION,
		CP_FIELD(batch_wait_ms),
		.min = 0,
		.max = 1000,
		.def = "1ms",
		.doc = "The longest a reservation waits for its batch to fill (at most 1s).",
	},
	{
		.name = "draw_batch",
		.type = CFG_UINT,
		CP_FIELD(draw_batch),
		.min = 1,
		.max = 2048,
		.def = "1024",
		.doc = "Entrants of a draw decided by one run of reserve.lua, in rank order (it bounds "
		       "how long one run holds Redis).",
	},
	{
		.name = "heartbeat",
		.type = CFG_DURATION,
		CP_FIELD(heartbeat_ms),
		.min = 100,
		.max = 10000,
		.def = "1s",
		.doc = "How often a heartbeat is published; data planes resync after a few missed.",
	},
	{
		.name = "dp_timeout",
		.type = CFG_DURATION,
		CP_FIELD(dp_timeout_ms),
		.min = 2000,
		.max = 600000,
		.def = "3s",
		.doc = "A data plane silent this long (they report every second) no longer holds "
		       "its dp id: until then a second live data plane with that id is refused.",
	},
	{
		.name = "purchase_token_ttl",
		.type = CFG_DURATION,
		CP_FIELD(purchase_token_ttl_ms),
		.min = 1000,
		.max = 86400u * 1000,
		.def = "5m",
		.doc = "The longest [admission] purchase_token_ttl of the data planes: a sale key "
		       "that stops being current keeps verifying this long (plus 30s for a data "
		       "plane that learns of the rotation late; longer when a data plane reports "
		       "a longer one), and until the sales it signed receipts for have ended and "
		       "their pay window passed; then it is removed.",
	},
	ZLINK_CFG_SECRET_KEY(struct cp_config, links),
	{
		.name = "curve_clients_file",
		.type = CFG_STRING,
		CP_FIELD(clients_file),
		.min = 0,
		.max = ZLINK_PATH_MAX - 1,
		.def = "",
		.doc = "With curve_secret_key_file: the clients let in, one \"ROLE NAME "
		       "PUBLIC_KEY\" "
		       "a line (ROLE dataplane or order-writer); read again when it changes. Only "
		       "order-writer keys may send RESULT and RESTOCK, only dataplane keys the "
		       "rest "
		       "and subscribe (docs/operations.md, \"Link keys\").",
	},
	ZLINK_CFG_KEY_DIR(struct cp_config, links),
	ZLINK_CFG_INSECURE(struct cp_config, links),
	{
		.name = "log_level",
		.type = CFG_LOGLEVEL,
		CP_FIELD(log_level),
		.def = "info",
		.doc = "The most verbose messages logged: err, warn, notice, info or debug.",
	},
};

static const struct cfg_section cp_sections[] = {
	{
		.name = "controlplane",
		.doc = "The control plane: its ZeroMQ endpoints, admin socket, metrics and batching.",
		.keys = cp_keys,
		.n_keys = sizeof(cp_keys) / sizeof(cp_keys[0]),
	},
	{
		.name = "redis",
		.doc = "The Redis that decides reservations (lua/reserve.lua).",
		.keys = store_config_redis_keys,
		.n_keys = STORE_CONFIG_REDIS_N_KEYS,
		.check = store_config_redis_check,
		.offset = offsetof(struct cp_config, store),
	},
	{
		.name = "postgres",
		.doc = "The PostgreSQL that is the source of truth for events and stock.",
		.keys = store_config_pg_keys,
		.n_keys = STORE_CONFIG_PG_N_KEYS,
		.offset = offsetof(struct cp_config, store),
	},
};

/* One flashgate.conf serves every program: the others' sections are theirs to check. */
static const char *const cp_foreign[] = { "dataplane", "admission", "bridge", "event", "edge",
	"order_writer", NULL };

const struct cfg_schema cp_config_schema = {
	.foreign = cp_foreign,
	.sections = cp_sections,
	.n_sections = sizeof(cp_sections) / sizeof(cp_sections[0]),
	.target_size = sizeof(struct cp_config),
	.help = "flashgate-controlplane --help-config lists every key",
};

void
cp_config_defaults(struct cp_config *cfg)
{
	char err[256];

	if (cfg_defaults(&cp_config_schema, cfg, err, sizeof(err)) != 0) {
		LOG_ERR("%s", err);
		abort();
	}
}

int
cp_config_load(struct cp_config *cfg, const char *path, char *err, size_t errlen)
{
	return cfg_load(&cp_config_schema, cfg, path, err, errlen);
}

int
cp_config_set(struct cp_config *cfg, const char *key, const char *value, char *err, size_t errlen)
{
	return cfg_set(&cp_config_schema, cfg, key, value, err, errlen);
}

void
cp_config_print_doc(FILE *out)
{
	fprintf(out, "flashgate-controlplane settings (INI file given with -c; override one with "
		     "-s SECTION.KEY=VALUE)\n\n");
	cfg_print_doc(out, &cp_config_schema);
}
