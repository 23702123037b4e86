/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/telemetry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

/* Telemetry callbacks take no user argument in DPDK 22.11, so the worker list is kept here. */
static struct worker *const *tel_workers;
static unsigned tel_n;
static const struct bridge *tel_bridge;

/* Every value of counters_table[], a family's members as "name_member" ("drops_ip_checksum"). */
static void
add_counters(struct rte_tel_data *d, const struct dp_counters *c)
{
	char name[RTE_TEL_MAX_STRING_LEN];

	for (unsigned k = 0; k < COUNTERS_TABLE_LEN; k++) {
		const struct counters_desc *t = &counters_table[k];

		for (unsigned i = 0; i < t->n; i++)
			if (counters_flat_name(t, i, '_', name, sizeof(name)) > 0)
				rte_tel_data_add_dict_u64(d, name, counters_value(c, t, i));
	}
}

static int
tel_stats(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct dp_counters sum;

	memset(&sum, 0, sizeof(sum));
	if (params != NULL && *params != '\0') {
		char *end;
		unsigned long lcore = strtoul(params, &end, 10);

		if (*end != '\0')
			return -EINVAL;
		for (unsigned i = 0; i < tel_n; i++) {
			if (tel_workers[i]->lcore_id == lcore) {
				worker_counters_read(tel_workers[i], &sum);
				rte_tel_data_start_dict(d);
				add_counters(d, &sum);
				return 0;
			}
		}
		return -EINVAL;
	}
	worker_counters_sum(tel_workers, tel_n, &sum);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "workers", tel_n);
	add_counters(d, &sum);
	return 0;
}

static int
tel_workers_list(const char *cmd __rte_unused, const char *params __rte_unused,
	struct rte_tel_data *d)
{
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (unsigned i = 0; i < tel_n; i++)
		rte_tel_data_add_array_int(d, (int)tel_workers[i]->lcore_id);
	return 0;
}

static int
tel_bridge_stats(const char *cmd __rte_unused, const char *params __rte_unused,
	struct rte_tel_data *d)
{
	struct bridge_counters c;
	char name[64];

	if (tel_bridge == NULL)
		return -ENOENT;
	bridge_counters_read(tel_bridge, &c);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "ready", bridge_ready(tel_bridge));
	rte_tel_data_add_dict_u64(d, "refused", bridge_refused(tel_bridge));
	rte_tel_data_add_dict_u64(d, "refusals", c.refusals);
	int64_t skew;

	if (bridge_clock_skew(tel_bridge, &skew))
		rte_tel_data_add_dict_int(d, "clock_skew_ms", (int)(skew > INT32_MAX   ? INT32_MAX
								   : skew < INT32_MIN ? INT32_MIN
										      : skew));
	rte_tel_data_add_dict_u64(d, "clock_skew_over", c.clock_skew_over);
	rte_tel_data_add_dict_u64(d, "submitted", c.submitted);
	rte_tel_data_add_dict_u64(d, "ring_full", c.ring_full);
	rte_tel_data_add_dict_u64(d, "queries", c.queries);
	rte_tel_data_add_dict_u64(d, "queries_refused", c.queries_refused);
	rte_tel_data_add_dict_u64(d, "queries_cooled", c.queries_cooled);
	rte_tel_data_add_dict_u64(d, "batches_sent", c.batches_sent);
	rte_tel_data_add_dict_u64(d, "send_retries", c.send_retries);
	rte_tel_data_add_dict_u64(d, "send_errors", c.send_errors);
	rte_tel_data_add_dict_u64(d, "seq_gaps", c.seq_gaps);
	rte_tel_data_add_dict_u64(d, "sender_restarts", c.sender_restarts);
	rte_tel_data_add_dict_u64(d, "snapshot_requests", c.snapshot_requests);
	rte_tel_data_add_dict_u64(d, "snapshots_applied", c.snapshots_applied);
	rte_tel_data_add_dict_u64(d, "snapshots_incomplete", c.snapshots_incomplete);
	rte_tel_data_add_dict_u64(d, "rules_rejected", c.rules_rejected);
	rte_tel_data_add_dict_u64(d, "events_rejected", c.events_rejected);
	rte_tel_data_add_dict_u64(d, "fair_unknown_event", c.fair_unknown_event);
	rte_tel_data_add_dict_u64(d, "fair_in_place", c.fair_in_place);
	rte_tel_data_add_dict_u64(d, "unsent_at_stop", c.unsent_at_stop);
	rte_tel_data_add_dict_u64(d, "unconfirmed_at_stop", c.unconfirmed_at_stop);
	rte_tel_data_add_dict_u64(d, "results_inserted", c.results.inserted);
	rte_tel_data_add_dict_u64(d, "results_evicted", c.results.evicted);
	rte_tel_data_add_dict_u64(d, "shared_versions", c.shared_versions);
	for (unsigned i = 0; i < WIRE_T_MAX; i++) {
		if (c.msgs_in[i] == 0 && c.msgs_out[i] == 0)
			continue;
		snprintf(name, sizeof(name), "in_%s", wire_type_name(i));
		rte_tel_data_add_dict_u64(d, name, c.msgs_in[i]);
		snprintf(name, sizeof(name), "out_%s", wire_type_name(i));
		rte_tel_data_add_dict_u64(d, name, c.msgs_out[i]);
	}
	for (unsigned i = 0; i < WIRE_ERR_MAX; i++) {
		snprintf(name, sizeof(name), "decode_error_%s", wire_err_name(-(int)i - 1));
		rte_tel_data_add_dict_u64(d, name, c.decode_errors[i]);
	}
	return 0;
}

int
telemetry_register(struct worker *const *workers, unsigned n, const struct bridge *bridge)
{
	int rc;

	tel_workers = workers;
	tel_n = n;
	tel_bridge = bridge;
	rc = rte_telemetry_register_cmd("/flashgate/bridge", tel_bridge_stats,
		"the data plane's ZeroMQ bridge to the control plane: messages, snapshots, rings");
	if (rc != 0)
		return rc;
	rc = rte_telemetry_register_cmd("/flashgate/stats", tel_stats,
		"flashgate data plane counters: totals, or one worker's with its lcore id as "
		"parameter");
	if (rc != 0)
		return rc;
	return rte_telemetry_register_cmd("/flashgate/workers", tel_workers_list,
		"lcore ids of the flashgate worker lcores");
}
