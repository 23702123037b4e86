/* SPDX-License-Identifier: BSD-3-Clause */
#include "order-writer/ow_metrics.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"
#include "common/now.h"
#include "pg/pg_health.h"

/* What a scrape shows: the loop's counters at its last publish. */
struct ow_metrics_snap {
	struct ow_writer_stats w;
	struct expiry_stats ex;
	struct ow_results_stats results;
	struct ow_link_stats link;
	struct ow_link_peer_stats peers[OW_LINK_PEERS_MAX];
	unsigned n_peers;
	uint64_t published_ms; /* monotonic; 0: never */
};

struct ow_metrics {
	struct metrics *http;
	struct pg_health *pg; /* NULL when metrics are off */
	pthread_mutex_t lock;
	struct ow_metrics_snap snap;
};

static void
render(void *arg, struct metrics_text *t)
{
	struct ow_metrics *m = arg;
	struct ow_metrics_snap s;

	pthread_mutex_lock(&m->lock);
	s = m->snap;
	pthread_mutex_unlock(&m->lock);

	/* One table: each counter with its help (docs/metrics.md lists them). */
	const struct {
		const char *name, *help;
		uint64_t v;
	} ctr[] = {
		{"flashgate_ow_orders_total", "Orders inserted into PostgreSQL.", s.w.orders},
		{"flashgate_ow_batches_total", "Batches committed.", s.w.batches},
		{"flashgate_ow_redelivered_total",
			"Reservations whose order existed (redelivered).", s.w.redelivered},
		{"flashgate_ow_conflicts_total", "Batches refused by the stock check.",
			s.w.conflicts},
		{"flashgate_ow_released_total", "Reservations released after a conflict.",
			s.w.released},
		{"flashgate_ow_skipped_total",
			"Reservations without an order (released before, malformed).", s.w.skipped},
		{"flashgate_ow_batch_errors_total", "Batches left pending after an error.",
			s.w.errors},
		{"flashgate_ow_reservation_ids_shared_total",
			"Reservation ids another buyer's order has too (two data planes, one dp "
			"id).",
			s.w.rid_shared},
		{"flashgate_ow_expired_total", "Orders expired by this writer's sweeper.",
			s.ex.expired},
		{"flashgate_ow_releases_applied_total",
			"Stock releases (expired, cancelled) applied to Redis.", s.ex.applied},
		{"flashgate_ow_releases_repeated_total", "Releases Redis had already.",
			s.ex.repeated},
		{"flashgate_ow_sweep_errors_total", "Expiry sweeps that stopped on an error.",
			s.ex.errors},
		{"flashgate_ow_paid_results_total", "Paid results stored in Redis and sent.",
			s.results.paid},
		{"flashgate_ow_results_errors_total", "Result rounds that stopped on an error.",
			s.results.errors},
		{"flashgate_ow_link_records_total", "Records sent to the control plane.",
			s.link.records},
		{"flashgate_ow_link_dropped_total",
			"Records not sent to the control plane (queue full or an error).",
			s.link.dropped},
	};
	for (size_t i = 0; i < sizeof(ctr) / sizeof(ctr[0]); i++)
		metrics_counter(t, ctr[i].name, ctr[i].help, NULL, ctr[i].v);
	/* Each control plane of [order_writer] push_endpoint, labelled with its endpoint. */
	char labels[OW_LINK_PEERS_MAX][OW_LINK_EP_MAX + 32];

	for (unsigned i = 0; i < s.n_peers; i++) {
		labels[i][0] = '\0';
		metrics_label(labels[i], sizeof(labels[i]), "endpoint", s.peers[i].endpoint);
	}
	for (unsigned i = 0; i < s.n_peers; i++)
		metrics_counter(t, "flashgate_ow_link_peer_records_total",
			"Records sent to this control plane.", labels[i], s.peers[i].records);
	for (unsigned i = 0; i < s.n_peers; i++)
		metrics_counter(t, "flashgate_ow_link_peer_dropped_total",
			"Records not sent to this control plane: its queue was full (gone or "
			"busy).",
			labels[i], s.peers[i].dropped);
	for (unsigned i = 0; i < s.n_peers; i++)
		metrics_gauge_int(t, "flashgate_ow_link_peer_queued",
			"Messages waiting for this control plane (at most "
			"order_writer.push_queue).",
			labels[i], s.peers[i].queued);
	uint64_t now = now_mono_ms();

	metrics_gauge(t, "flashgate_ow_loop_age_seconds",
		"Seconds since the order writer's loop last published its counters (about 1 while "
		"it runs; growing: the loop is stuck).",
		NULL,
		s.published_ms == 0 || now < s.published_ms
			? 0.0
			: (double)(now - s.published_ms) / 1000);
	if (m->pg != NULL) {
		struct pg_health_state ph;

		pg_health_read(m->pg, now, &ph);
		metrics_gauge_int(t, "flashgate_ow_postgres_up",
			"1 while PostgreSQL answers the order writer's probe (SELECT 1 a second, "
			"5 s at most).",
			NULL, ph.up);
		metrics_gauge(t, "flashgate_ow_postgres_query_seconds",
			"The last probe's time, or the one still waiting when longer.", NULL,
			ph.query_s);
		metrics_gauge(t, "flashgate_ow_postgres_since_success_seconds",
			"Seconds since PostgreSQL last answered the probe (since the start when it "
			"never did).",
			NULL, ph.since_success_s);
	}
}

struct ow_metrics *
ow_metrics_start(const char *address, uint16_t port, const char *allow, const char *pg_conninfo,
	char *err, size_t errlen)
{
	struct ow_metrics *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		snprintf(err, errlen, "metrics: out of memory");
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	/* Before the server: its thread reads m->pg. */
	if (port != 0 && pg_conninfo != NULL &&
		(m->pg = pg_health_start(
			 pg_conninfo, "flashgate-ow health", 1000, 5000, err, errlen)) == NULL)
		goto fail;
	m->http = metrics_start_allow(address, port, allow, render, m, err, errlen);
	if (m->http == NULL)
		goto fail;
	return m;
fail:
	pg_health_stop(m->pg);
	pthread_mutex_destroy(&m->lock);
	free(m);
	return NULL;
}

void
ow_metrics_publish(struct ow_metrics *m, const struct ow_ctx *c)
{
	struct ow_link_stats link = {0};
	struct ow_link_peer_stats peers[OW_LINK_PEERS_MAX];
	unsigned n_peers = 0;

	if (m == NULL)
		return;
	if (c->link != NULL) {
		ow_link_get_stats(c->link, &link);
		n_peers = ow_link_peers(c->link);
		for (unsigned i = 0; i < n_peers; i++)
			ow_link_get_peer_stats(c->link, i, &peers[i]);
	}
	pthread_mutex_lock(&m->lock);
	m->snap.n_peers = n_peers;
	memcpy(m->snap.peers, peers, n_peers * sizeof(peers[0]));
	m->snap.w = c->w.st;
	m->snap.ex = c->ex;
	m->snap.results = c->results;
	m->snap.link = link;
	m->snap.published_ms = now_mono_ms();
	pthread_mutex_unlock(&m->lock);
}

uint16_t
ow_metrics_port(const struct ow_metrics *m)
{
	return m != NULL ? metrics_port(m->http) : 0;
}

void
ow_metrics_stop(struct ow_metrics *m)
{
	if (m == NULL)
		return;
	metrics_stop(m->http); /* waits for a scrape in progress */
	pg_health_stop(m->pg);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
