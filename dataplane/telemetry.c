/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/telemetry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

/* Telemetry callbacks take no user argument in DPDK 22.11, so the worker list is kept here. */
static struct worker *const *tel_workers;
static unsigned tel_n;

static void
add_counters(struct rte_tel_data *d, const struct dp_counters *c)
{
	rte_tel_data_add_dict_u64(d, "rx_packets", c->rx_packets);
	rte_tel_data_add_dict_u64(d, "rx_bytes", c->rx_bytes);
	rte_tel_data_add_dict_u64(d, "tx_packets", c->tx_packets);
	rte_tel_data_add_dict_u64(d, "tx_bytes", c->tx_bytes);
	rte_tel_data_add_dict_u64(d, "http_requests", c->requests);
	for (unsigned i = 0; i < DP_ANS_MAX; i++)
		rte_tel_data_add_dict_u64(d, dp_answer_name(i), c->answers[i]);
	for (unsigned i = 0; i < DP_HTTP_MAX; i++) {
		char name[16];

		snprintf(name, sizeof(name), "http_%u", dp_http_status_of(i));
		rte_tel_data_add_dict_u64(d, name, c->http[i]);
	}
	for (unsigned i = 0; i < DP_DROP_MAX; i++) {
		char name[48];

		snprintf(name, sizeof(name), "drop_%s", dp_drop_name(i));
		rte_tel_data_add_dict_u64(d, name, c->drops[i]);
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
				rte_tel_data_start_dict(d);
				add_counters(d, &tel_workers[i]->ctr);
				return 0;
			}
		}
		return -EINVAL;
	}
	for (unsigned i = 0; i < tel_n; i++)
		dp_counters_add(&sum, &tel_workers[i]->ctr);
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

int
telemetry_register(struct worker *const *workers, unsigned n)
{
	int rc;

	tel_workers = workers;
	tel_n = n;
	rc = rte_telemetry_register_cmd("/flashgate/stats", tel_stats,
		"flashgate data plane counters: totals, or one worker's with its lcore id as "
		"parameter");
	if (rc != 0)
		return rc;
	return rte_telemetry_register_cmd("/flashgate/workers", tel_workers_list,
		"lcore ids of the flashgate worker lcores");
}
