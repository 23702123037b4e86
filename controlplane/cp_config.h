/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_CONFIG_H
#define FG_CP_CONFIG_H
/* flashgate-controlplane's settings: the [controlplane], [redis] and [postgres] sections. */
#include <stdint.h>
#include <stdio.h>

#include "common/config.h"
#include "common/zlink.h"
#include "store/store_config.h"

struct cp_config {
	/* [controlplane] */
	uint32_t id;                  /* sender id on the wire, 1..2^32-1 */
	char pull_endpoint[128];      /* bound: data planes PUSH reservations here */
	char pub_endpoint[128];       /* bound: data planes SUBscribe here */
	char admin_socket[108];       /* Unix socket of flashgatectl, mode 0600 */
	uint32_t admin_timeout_ms;    /* one admin request, from accept to its answer's last byte */
	uint32_t metrics_address;     /* network order; loopback */
	uint16_t metrics_port;        /* 0: no metrics */
	char metrics_allow[512];      /* networks that may scrape; "": loopback address only */
	uint32_t batch_max;           /* reservations per event per EVALSHA */
	uint32_t batch_wait_ms;       /* longest a reservation waits for its batch */
	uint32_t draw_batch;          /* entrants per reserve.lua run of a draw (draw_runner.h) */
	uint32_t heartbeat_ms;
	uint32_t dp_timeout_ms; /* a data plane silent this long no longer holds its dp id */
	uint32_t purchase_token_ttl_ms; /* the data planes' longest: how long a retired key verifies */
	int log_level;
	struct zlink_settings links;  /* CURVE: its secret key, insecure_plaintext_links */
	char clients_file[ZLINK_PATH_MAX]; /* CURVE: the allow-list of client keys with roles */
	struct store_config store;    /* [redis] and [postgres], as the order writer reads them */
};

extern const struct cfg_schema cp_config_schema;

/* Fills cfg with every default. Cannot fail (a wrong key table aborts: the tests load it). */
void cp_config_defaults(struct cp_config *cfg);

/* Loads path over the defaults. Returns 0, or -errno with one line in err naming file, line, key. */
int cp_config_load(struct cp_config *cfg, const char *path, char *err, size_t errlen);

/* Applies "section.key" = value with the same checks. Returns 0 or -EINVAL with err. */
int cp_config_set(struct cp_config *cfg, const char *key, const char *value, char *err,
	size_t errlen);

/* Prints every key with its type, default and doc. */
void cp_config_print_doc(FILE *out);

#endif
