/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/worker.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

/* Our names for http_authority_is(): the dotted address, then host when given. */
static int
worker_set_names(struct worker *w, const char *host)
{
	const uint8_t *a = (const uint8_t *)&w->ipv4_addr;
	size_t host_len = host != NULL ? strlen(host) : 0;
	struct worker_names *nm;
	int n;

	if (host_len > DP_HOST_MAX)
		return -EINVAL;
	nm = rte_zmalloc("worker_names", sizeof(*nm), 0);
	if (nm == NULL)
		return -ENOMEM;
	n = snprintf(nm->text, sizeof(nm->text), "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
	nm->name[0] = (struct http_str){nm->text, (uint16_t)n};
	nm->n = 1;
	if (host_len != 0) {
		memcpy(nm->text + n + 1, host, host_len + 1);
		nm->name[1] = (struct http_str){nm->text + n + 1, (uint16_t)host_len};
		nm->n = 2;
	}
	w->names = nm;
	return 0;
}

int
worker_init(struct worker *w, const uint8_t secret[16], uint32_t cookie_slot_s, const char *host)
{
	uint64_t tsc;
	int rc;

	if (w->mss_floor == 0)
		w->mss_floor = 536;
	rc = worker_set_names(w, host);
	if (rc != 0)
		return rc;

	if (w->clock.tsc_hz == 0) /* not attached to a shared clock_sync */
		clock_init(&w->clock);
	tsc = rte_rdtsc();
	w->now_ms = clock_ms(&w->clock, tsc);
	rc = syncookie_init(&w->cookies, secret, cookie_slot_s, w->now_ms / 1000);
	if (rc != 0)
		return rc;
	http_resp_tick_slow(&w->resp, w->now_ms);
	w->rid_seq = wire_reservation_seq_start(w->now_ms);
	return 0;
}

void
worker_counters_read(const struct worker *w, struct dp_counters *out)
{
	const struct rl_table *t[DP_LIM_MAX] = {
		[DP_LIM_IP] = w->rl_ip, [DP_LIM_USER] = w->rl_user, [DP_LIM_DEVICE] = w->rl_device
	};

	*out = w->ctr;
	for (unsigned i = 0; i < DP_LIM_MAX; i++) {
		uint64_t *c = out->limit[i];

		if (t[i] == NULL) {
			memset(c, 0, sizeof(out->limit[i]));
			continue;
		}
		c[DP_LIM_EV_INSERTS] = t[i]->inserts;
		c[DP_LIM_EV_RECYCLED] = t[i]->recycled;
		c[DP_LIM_EV_MOVED] = t[i]->moved;
		c[DP_LIM_EV_EVICTIONS] = t[i]->evictions;
	}
}

void
worker_counters_sum(struct worker *const *workers, unsigned n, struct dp_counters *sum)
{
	struct dp_counters one;

	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i < n; i++) {
		worker_counters_read(workers[i], &one);
		counters_add(sum, &one);
	}
}
