/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_OW_CTX_H
#define FG_OW_CTX_H
/* Everything the order writer's loop, its feed and its cron work on (main.c sets it up). */
#include <signal.h>
#include <stdint.h>

#include "order-writer/expiry.h"
#include "pg/pg_orders.h"
#include "order-writer/outbox_reader.h"
#include "order-writer/ow_config.h"
#include "order-writer/ow_link.h"
#include "order-writer/ow_results.h"
#include "order-writer/ow_writer.h"
#include "store/store_conn.h"
#include "store/store_outbox.h"

struct ow_ctx {
	struct ow_config cfg;
	struct store *rs;
	struct store *publish_rs; /* the publisher thread's (ow_writer.h) */
	struct pg_orders *os;
	/* connections - 1 more for batches */
	struct pg_orders *more[OW_CONFIG_CONNECTIONS_MAX - 1];
	struct ow_link *link;
	struct outbox_reader *reader;
	struct ow_writer w;
	struct expiry_stats ex;
	struct ow_results_stats results; /* paid results published (ow_results.h) */
	struct store_outbox_buf buf; /* the reservations of the entries of one read or claim */
	uint64_t next_commit_ns;  /* the rate cap: no batch starts before this */
	/* Set by SIGINT or SIGTERM: long work (pacing, claiming) stops early. */
	const volatile sig_atomic_t *stop;
	/* ow_cron()'s deadlines, monotonic ms: when each timed job is due next. */
	uint64_t next_events_ms;
	uint64_t next_claim_ms;
	uint64_t next_sweep_ms;
	uint64_t next_trim_ms;
	uint64_t next_results_ms;
	uint64_t next_stats_ms;
};

#endif
