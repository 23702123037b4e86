/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_TELEMETRY_H
#define FG_DP_TELEMETRY_H
/*
 * The data plane's counters through DPDK telemetry, so `dpdk-telemetry.py`
 * (and any client of the telemetry socket) shows them:
 *   /flashgate/stats            totals over all workers
 *   /flashgate/stats,<lcore>    one worker's counters
 *   /flashgate/workers          the worker lcores
 *   /flashgate/bridge           the ZeroMQ bridge to the control plane
 */
#include "dataplane/bridge/bridge.h"
#include "dataplane/worker.h"

/*
 * Registers the commands over workers[0..n) and bridge (NULL: none). They
 * must outlive every telemetry request (they do: they live until
 * rte_eal_cleanup()). Returns 0 or a negative errno.
 */
int telemetry_register(struct worker *const *workers, unsigned n, const struct bridge *bridge);

#endif
