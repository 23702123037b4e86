/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_OW_OW_METRICS_H
#define FG_OW_OW_METRICS_H
/*
 * The order writer's Prometheus endpoint (docs/metrics.md "The order writer"): its counters,
 * copied by the loop once a second (ow_metrics_publish()) and served from libmicrohttpd's thread
 * (common/metrics.h: a loopback address, or any with an allow-list).
 */
#include <stddef.h>
#include <stdint.h>

#include "order-writer/ow_ctx.h"

struct ow_metrics;

/*
 * Serves GET /metrics on address:port with the allow-list allow (common/metrics.h's
 * metrics_start_allow(); port 0: off, a handle all the same), and, when served and pg_conninfo
 * is not NULL, PostgreSQL's health probed on a connection of its own (pg/pg_health.h). Returns
 * it, or NULL with one line in err.
 */
struct ow_metrics *ow_metrics_start(const char *address, uint16_t port, const char *allow,
	const char *pg_conninfo, char *err, size_t errlen);

/* Copies c's counters for the next scrape. Cheap (a mutex and a copy); m NULL: nothing. */
void ow_metrics_publish(struct ow_metrics *m, const struct ow_ctx *c);

/* The port served (0: off). */
uint16_t ow_metrics_port(const struct ow_metrics *m);

/* Stops serving and frees m; NULL: nothing. */
void ow_metrics_stop(struct ow_metrics *m);

#endif
