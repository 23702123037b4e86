/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/cp_cron.h"

#include "common/wire.h"

uint64_t
cp_cron(struct cp_ctx *c, uint64_t now_ms)
{
	uint64_t wake;

	decider_flush(c->dec, now_ms, false);
	if (now_ms >= c->next_heartbeat_ms) {
		struct wire_heartbeat hb = {now_ms};

		cp_links_publish(c->links, WIRE_T_HEARTBEAT, &hb, 1);
		rs_ensure_connected(c->rs);
		c->next_heartbeat_ms = now_ms + c->cfg->heartbeat_ms;
	}
	wake = decider_deadline(c->dec);
	return wake < c->next_heartbeat_ms ? wake : c->next_heartbeat_ms;
}
