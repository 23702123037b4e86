/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_READYZ_H
#define FG_DP_PIPELINE_READYZ_H
/*
 * GET|HEAD /readyz: whether this data plane can sell now, for the edge's health checks
 * (docs/edge.md, docs/install.md). /healthz says the process answers; /readyz that a buyer sent
 * here would not be answered 503: the control plane link is set up and this data plane is not
 * stopping, the control plane's state (its event table) arrived, the control plane was heard
 * within bridge.resync (5 s by default: five of its heartbeats, one a second; any message
 * counts) and it does not refuse this data plane, the shop's auth key and a current sale key
 * are there. 200 {"status":"ready", "events":N} or 503 {"status":"not ready","reason":"..."}.
 * Counted by HTTP status only, never as a refusal: an edge asks every second or so.
 *
 * Private to the pipeline (routes.h dispatches to it).
 */
#include <inttypes.h>
#include <stdio.h>

#include "common/now.h"
#include "dataplane/bridge/bridge.h"
#include "dataplane/pipeline/answer.h"
#include "dataplane/worker.h"

/* Why this worker cannot sell now, or NULL when it can; buf[0..cap) may hold the words. */
static inline const char *
readyz_reason(const struct worker *w, char *buf, size_t cap)
{
	uint64_t silent_ms;

	if (w->bridge == NULL)
		return "no control plane link";
	if (bridge_port_stopping(w->bridge))
		return "stopping";
	if (w->sh == NULL)
		return "no state from the control plane yet";
	/* A clock read per check, not per packet: the edge asks about once a second. */
	silent_ms = w->bridge->shared != NULL
			    ? shared_silent_ms(w->bridge->shared, now_mono_us() / 1000)
			    : 0;
	if (silent_ms != 0) {
		snprintf(buf, cap,
			"the control plane has not been heard for %" PRIu64
			" ms (longer than bridge.resync)",
			silent_ms);
		return buf;
	}
	if (__atomic_load_n(&w->bridge->refused, __ATOMIC_RELAXED))
		return "the control plane refuses this data plane: another one holds its dp_id";
	if (w->sh->auth.used == 0)
		return "no auth key (flashgatectl keys auth-set)";
	if (w->sh->sale.current < 0)
		return "no sale key (flashgatectl keys rotate)";
	return NULL;
}

/* The answer to GET or HEAD /readyz (q->head: headers only) into out[0..cap); its length. */
static inline uint16_t
route_readyz(struct worker *w, const struct req_view *q, char *out, uint16_t cap)
{
	char words[96];
	const char *why = readyz_reason(w, words, sizeof(words));
	char body[192];
	int n;

	if (why == NULL)
		n = snprintf(body, sizeof(body), "{\"status\":\"ready\",\"events\":%u}",
			w->sh->events->n);
	else
		n = snprintf(body, sizeof(body), "{\"status\":\"not ready\",\"reason\":\"%s\"}", why);
	return ans_json(w, q, out, cap, why == NULL ? 200 : 503, body, (size_t)n);
}

#endif
