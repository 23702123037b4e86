/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_STORE_CONFIG_H
#define FG_CP_STORE_CONFIG_H
/*
 * The [redis] and [postgres] sections, which the control plane and the order
 * writer both read from the one flashgate.conf: one struct and one key table,
 * placed in each program's settings with struct cfg_section.offset.
 */
#include <netinet/in.h>
#include <stdint.h>

#include "common/config.h"
#include "store/store_conn.h"

struct store_config {
	/* [redis] */
	char redis_socket[108]; /* a Unix socket; empty: host and port */
	uint32_t redis_host;	/* network order */
	uint16_t redis_port;
	uint32_t redis_timeout_ms;
	int redis_unsafe_settings;     /* yes: do not refuse a Redis that may lose or evict data */
	char redis_user[64];	       /* empty: the default user */
	char redis_password_file[256]; /* empty: no AUTH */
	int redis_tls;		       /* yes: refused by store_config_redis_check() */
	char redis_sentinels[256];     /* "host:port,..."; empty: no Sentinel (docs/ha.md) */
	char redis_master_name[64];
	uint32_t redis_wait_replicas;
	uint32_t redis_wait_timeout_ms;
	/* [postgres] */
	char pg_conninfo[256];
};

#define STORE_CONFIG_REDIS_N_KEYS 12
#define STORE_CONFIG_PG_N_KEYS	  1
extern const struct cfg_key store_config_redis_keys[STORE_CONFIG_REDIS_N_KEYS];
extern const struct cfg_key store_config_pg_keys[STORE_CONFIG_PG_N_KEYS];

/*
 * The [redis] section's cross-key check (struct cfg_section.check, obj a struct store_config):
 * tls = yes is refused, since the hiredis flashgate is built with (Debian 12's 0.14) has no
 * TLS, with a message that says what to do instead. Returns 0, or -EINVAL with msg and *key.
 */
int store_config_redis_check(const void *obj, const char **key, char *msg, size_t msglen);

/*
 * The Redis connection settings of s for store_open(): host receives the address as text and
 * must outlive the returned settings' use. Redis may come up after the program
 * (start_offline): callers decide reservations as retry until it does.
 */
struct store_conn_config store_config_conn(const struct store_config *s, char host[INET_ADDRSTRLEN]);

#endif
