/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/counters_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "common/json_writer.h"
#include "common/log.h"
#include "dataplane/bridge.h"
#include "dataplane/worker.h"

/* The members of one counters object, in the order dp_counters_print() shows them. */
static void
counters_members(struct json_writer *j, const struct dp_counters *c)
{
	char code[8];

	jw_u64(j, "rx_packets", c->rx_packets);
	jw_u64(j, "rx_bytes", c->rx_bytes);
	jw_u64(j, "tx_packets", c->tx_packets);
	jw_u64(j, "tx_bytes", c->tx_bytes);
	jw_u64(j, "http_requests", c->requests);
	jw_u64(j, "busy_cycles", c->busy_cycles);
	jw_u64(j, "rx_bursts", c->rx_bursts);
	jw_u64(j, "tx_held", c->tx_held);
	jw_open(j, "answer", '{');
	for (unsigned i = 0; i < DP_ANS_MAX; i++)
		jw_u64(j, dp_answer_name(i), c->answers[i]);
	jw_close(j, '}');
	jw_open(j, "http", '{');
	for (unsigned i = 0; i < DP_HTTP_MAX; i++) {
		snprintf(code, sizeof(code), "%u", dp_http_status_of(i));
		jw_u64(j, code, c->http[i]);
	}
	jw_close(j, '}');
	jw_open(j, "admit", '{');
	for (unsigned i = 0; i < DP_ADM_MAX; i++)
		jw_u64(j, dp_admit_name(i), c->admit[i]);
	jw_close(j, '}');
	jw_open(j, "reject", '{');
	for (unsigned i = 0; i < DP_REJ_MAX; i++)
		jw_u64(j, dp_reject_name(i), c->reject[i]);
	jw_close(j, '}');
	jw_open(j, "client_address", '{');
	for (unsigned i = 0; i < DP_CLIENT_MAX; i++)
		jw_u64(j, dp_client_name(i), c->client[i]);
	jw_close(j, '}');
	jw_open(j, "drop", '{');
	for (unsigned i = 0; i < DP_DROP_MAX; i++)
		jw_u64(j, dp_drop_name(i), c->drops[i]);
	jw_close(j, '}');
	/* "ip_evictions", as the text's "ratelimit ip_evictions N". */
	jw_open(j, "ratelimit", '{');
	for (unsigned t = 0; t < DP_LIM_MAX; t++)
		for (unsigned e = 0; e < DP_LIM_EV_MAX; e++) {
			char name[32];

			snprintf(name, sizeof(name), "%s_%s", dp_limit_table_name(t),
				dp_limit_event_name(e));
			jw_u64(j, name, c->limit[t][e]);
		}
	jw_close(j, '}');
	jw_open(j, "kept", '{');
	for (unsigned i = 0; i < DP_KEPT_MAX; i++)
		jw_u64(j, dp_kept_name(i), c->kept[i]);
	jw_close(j, '}');
}

int
dp_counters_json(char *buf, size_t cap, uint64_t tsc_hz, const struct dp_counters_of *w, unsigned n,
	const struct bridge_counters *bc)
{
	struct dp_counters sum;
	struct json_writer j;

	memset(&sum, 0, sizeof(sum));
	for (unsigned i = 0; i < n; i++)
		dp_counters_add(&sum, w[i].ctr);
	jw_init(&j, buf, cap);
	jw_open(&j, NULL, '{');
	jw_u64(&j, "workers", n);
	jw_u64(&j, "tsc_hz", tsc_hz);
	jw_open(&j, "total", '{');
	counters_members(&j, &sum);
	jw_close(&j, '}');
	if (bc != NULL) {
		/* The text's "bridge:" line. */
		jw_open(&j, "bridge", '{');
		jw_u64(&j, "submitted", bc->submitted);
		jw_u64(&j, "ring_full", bc->ring_full);
		jw_u64(&j, "batches_sent", bc->batches_sent);
		jw_u64(&j, "unsent_at_stop", bc->unsent_at_stop);
		jw_u64(&j, "unconfirmed_at_stop", bc->unconfirmed_at_stop);
		jw_u64(&j, "snapshots_applied", bc->snapshots_applied);
		jw_u64(&j, "results_stored", bc->results.inserted + bc->results.replaced);
		jw_close(&j, '}');
	}
	jw_open(&j, "per_worker", '[');
	for (unsigned i = 0; i < n; i++) {
		jw_open(&j, NULL, '{');
		jw_u64(&j, "lcore", w[i].lcore);
		counters_members(&j, w[i].ctr);
		jw_close(&j, '}');
	}
	jw_close(&j, ']');
	jw_close(&j, '}');
	return jw_end(&j);
}

int
dp_counters_json_write(
	const char *path, struct worker *const *workers, unsigned n, const struct bridge *b)
{
	struct dp_counters_of *w = calloc(n ? n : 1, sizeof(*w));
	struct dp_counters *copy = calloc(n ? n : 1, sizeof(*copy));
	struct bridge_counters bc;
	/* About 2.5 KB per counters object. */
	size_t cap = 4096 + (size_t)(n + 1) * 4096;
	char *buf = malloc(cap);
	int len = -ENOMEM, rc;

	if (w != NULL && copy != NULL && buf != NULL) {
		for (unsigned i = 0; i < n; i++) {
			worker_counters_read(workers[i], &copy[i]);
			w[i] = (struct dp_counters_of){workers[i]->lcore_id, &copy[i]};
		}
		if (b != NULL)
			bridge_counters_read(b, &bc);
		len = dp_counters_json(buf, cap, rte_get_tsc_hz(), w, n, b != NULL ? &bc : NULL);
	}
	rc = len < 0 ? len : jw_write_file(path, buf, (size_t)len);
	if (rc != 0)
		LOG_ERR("cannot write the final counters to %s: %s", path, strerror(-rc));
	free(buf);
	free(copy);
	free(w);
	return rc;
}
