/* SPDX-License-Identifier: BSD-3-Clause */
#include "store/store_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#define ST_FIELD(f)                                                                                \
	.offset = offsetof(struct store_config, f),                                                \
	.size = sizeof(((struct store_config *)0)->f)

const struct cfg_key store_config_redis_keys[STORE_CONFIG_REDIS_N_KEYS] = {
	{
		.name = "socket",
		.type = CFG_STRING,
		ST_FIELD(redis_socket),
		.min = 0,
		.max = 107,
		.def = "",
		.doc = "Redis's Unix socket; when set, host and port are not used.",
	},
	{
		.name = "host",
		.type = CFG_IPV4,
		ST_FIELD(redis_host),
		.def = "127.0.0.1",
		.doc = "Redis's address.",
	},
	{
		.name = "port",
		.type = CFG_UINT,
		ST_FIELD(redis_port),
		.min = 1,
		.max = 65535,
		.def = "6379",
		.doc = "Redis's TCP port.",
	},
	{
		.name = "timeout",
		.type = CFG_DURATION,
		ST_FIELD(redis_timeout_ms),
		.min = 10,
		.max = 60000,
		.def = "2s",
		.doc = "A Redis reply that takes longer counts as a lost connection (the control "
		       "plane answers its batch retry); the connection is made again with backoff.",
	},
	{
		.name = "unsafe_settings",
		.type = CFG_BOOL,
		ST_FIELD(redis_unsafe_settings),
		.def = "no",
		.doc = "yes: connect to a Redis without appendonly yes, appendfsync always and "
		       "maxmemory-policy noeviction, or whose CONFIG command is disabled (then "
		       "check those settings yourself); no: refuse it with an error.",
	},
	{
		.name = "user",
		.type = CFG_STRING,
		ST_FIELD(redis_user),
		.min = 0,
		.max = 63,
		.def = "",
		.doc = "The Redis ACL user of AUTH; empty: the default user (requirepass).",
	},
	{
		.name = "password_file",
		.type = CFG_STRING,
		ST_FIELD(redis_password_file),
		.min = 0,
		.max = 255,
		.def = "",
		.doc = "A file (mode 0600) holding the Redis password, sent with AUTH on every "
		       "connection; empty: no AUTH.",
	},
	{
		.name = "sentinels",
		.type = CFG_STRING,
		ST_FIELD(redis_sentinels),
		.min = 0,
		.max = 255,
		.def = "",
		.doc = "Redis with replicas (docs/ha.md): the Sentinels that name the primary, "
		       "\"host:port,host:port,host:port\"; socket, host and port are then not "
		       "used. Empty: one Redis at socket or host and port.",
	},
	{
		.name = "master_name",
		.type = CFG_STRING,
		ST_FIELD(redis_master_name),
		.min = 1,
		.max = 63,
		.def = "flashgate",
		.doc = "The name the Sentinels monitor the primary by (sentinel monitor NAME ...).",
	},
	{
		.name = "wait_replicas",
		.type = CFG_UINT,
		ST_FIELD(redis_wait_replicas),
		.min = 0,
		.max = 16,
		.def = "0",
		.doc = "How many replicas must hold a batch of reservations (WAIT) before its "
		       "verdicts are answered; a batch that does not reach them within "
		       "wait_timeout is answered retry. Above 0, the primary must run with "
		       "min-replicas-to-write at least this (checked unless unsafe_settings). 0: "
		       "no waiting.",
	},
	{
		.name = "wait_timeout",
		.type = CFG_DURATION,
		ST_FIELD(redis_wait_timeout_ms),
		.min = 1,
		.max = 59000,
		.def = "500ms",
		.doc = "How long a batch waits for wait_replicas replicas; shorter than timeout.",
	},
	{
		.name = "tls",
		.type = CFG_BOOL,
		ST_FIELD(redis_tls),
		.def = "no",
		.doc = "Must stay no: this build's hiredis has no TLS. For Redis on another host, "
		       "carry the connection through stunnel or spiped, or a private network "
		       "(docs/install.md).",
	},
};

int
store_config_redis_check(const void *obj, const char **key, char *msg, size_t msglen)
{
	const struct store_config *s = obj;

	if (s->redis_tls) {
		*key = "tls";
		snprintf(msg, msglen,
			"this build's hiredis (Debian 12's 0.14) has no TLS: use Redis's socket "
			"on its host, or stunnel or spiped with host and port at the local end "
			"(docs/install.md)");
		return -EINVAL;
	}
	return 0;
}

const struct cfg_key store_config_pg_keys[STORE_CONFIG_PG_N_KEYS] = {
	{
		.name = "conninfo",
		.type = CFG_STRING,
		ST_FIELD(pg_conninfo),
		.min = 1,
		.max = 255,
		.def = "dbname=flashgate",
		.doc = "libpq connection string of the database that holds events, stock and "
		       "orders (e.g. \"host=/run/postgresql dbname=flashgate\").",
	},
};

struct store_conn_config
store_config_conn(const struct store_config *s, char host[INET_ADDRSTRLEN])
{
	inet_ntop(AF_INET, &s->redis_host, host, INET_ADDRSTRLEN);
	return (struct store_conn_config){
		.unix_path = s->redis_socket[0] != '\0' ? s->redis_socket : NULL,
		.host = host,
		.port = s->redis_port,
		.command_timeout_ms = s->redis_timeout_ms,
		.start_offline = true,
		.check_settings = !s->redis_unsafe_settings,
		.user = s->redis_user,
		.password_file = s->redis_password_file,
		.sentinels = s->redis_sentinels,
		.master_name = s->redis_master_name,
		.wait_replicas = s->redis_wait_replicas,
		.wait_timeout_ms = s->redis_wait_timeout_ms,
	};
}
