/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/counters_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "common/json_writer.h"
#include "common/log.h"
#include "dataplane/bridge/bridge.h"
#include "dataplane/worker.h"

/* The members of one counters object: counters_table[] in its order, every value, zero or not. */
static void
counters_members(struct json_writer *j, const struct dp_counters *c)
{
	for (unsigned k = 0; k < COUNTERS_TABLE_LEN; k++) {
		const struct counters_desc *d = &counters_table[k];

		if (d->members == NULL) {
			jw_u64(j, d->name, counters_value(c, d, 0));
			continue;
		}
		jw_open(j, d->name, '{');
		for (unsigned i = 0; i < d->n; i++)
			jw_u64(j, d->members[i], counters_value(c, d, i));
		jw_close(j, '}');
	}
}

int
counters_json(char *buf, size_t cap, uint64_t tsc_hz, const struct counters_of *w, unsigned n,
	const struct bridge_counters *bc)
{
	struct dp_counters sum;
	struct json_writer j;

	memset(&sum, 0, sizeof(sum));
	for (unsigned i = 0; i < n; i++)
		counters_add(&sum, w[i].ctr);
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
counters_json_write(
	const char *path, struct worker *const *workers, unsigned n, const struct bridge *b)
{
	struct counters_of *w = calloc(n ? n : 1, sizeof(*w));
	struct dp_counters *copy = calloc(n ? n : 1, sizeof(*copy));
	struct bridge_counters bc;
	/* About 2.5 KB per counters object. */
	size_t cap = 4096 + (size_t)(n + 1) * 4096;
	char *buf = malloc(cap);
	int len = -ENOMEM, rc;

	if (w != NULL && copy != NULL && buf != NULL) {
		for (unsigned i = 0; i < n; i++) {
			worker_counters_read(workers[i], &copy[i]);
			w[i] = (struct counters_of){workers[i]->lcore_id, &copy[i]};
		}
		if (b != NULL)
			bridge_counters_read(b, &bc);
		len = counters_json(buf, cap, rte_get_tsc_hz(), w, n, b != NULL ? &bc : NULL);
	}
	rc = len < 0 ? len : jw_write_file(path, buf, (size_t)len);
	if (rc != 0)
		LOG_ERR("cannot write the final counters to %s: %s", path, strerror(-rc));
	free(buf);
	free(copy);
	free(w);
	return rc;
}
