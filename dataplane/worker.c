/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/worker.h"

#include <errno.h>

#include <rte_cycles.h>

int
worker_init(struct worker *w, const uint8_t secret[16], uint32_t cookie_slot_s)
{
	uint64_t tsc;
	int rc;

	dp_clock_init(&w->clock);
	tsc = rte_rdtsc();
	w->now_ms = dp_clock_ms(&w->clock, tsc);
	rc = syncookie_init(&w->cookies, secret, cookie_slot_s, w->now_ms / 1000);
	if (rc != 0)
		return rc;
	http_resp_tick_slow(&w->resp, w->now_ms);
	w->rid_seq = wire_reservation_seq_start(w->now_ms);
	return 0;
}
