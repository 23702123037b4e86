/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/counters.h"

#include <inttypes.h>
#include <string.h>

#include <rte_cycles.h>

#define DP_X_NAME(name, str) [DP_DROP_##name] = str,
static const char *const drop_names[DP_DROP_MAX] = { DP_DROP_REASONS(DP_X_NAME) };
#undef DP_X_NAME
#define DP_X_NAME(name, str) [DP_ANS_##name] = str,
static const char *const answer_names[DP_ANS_MAX] = { DP_ANSWER_KINDS(DP_X_NAME) };
#undef DP_X_NAME
#define DP_X_NAME(name, str) [DP_REJ_##name] = str,
static const char *const reject_names[DP_REJ_MAX] = { DP_REJECT_REASONS(DP_X_NAME) };
#undef DP_X_NAME
#define DP_X_NAME(name, str) [DP_ADM_##name] = str,
static const char *const admit_names[DP_ADM_MAX] = { DP_ADMIT_KINDS(DP_X_NAME) };
#undef DP_X_NAME
#define DP_X_NAME(name, str) [DP_LIM_##name] = str,
static const char *const limit_table_names[DP_LIM_MAX] = { DP_LIMIT_TABLES(DP_X_NAME) };
#undef DP_X_NAME
#define DP_X_NAME(name, str) [DP_LIM_EV_##name] = str,
static const char *const limit_event_names[DP_LIM_EV_MAX] = { DP_LIMIT_EVENTS(DP_X_NAME) };
#undef DP_X_NAME
#define DP_X_NAME(name, str) [DP_KEPT_##name] = str,
static const char *const kept_names[DP_KEPT_MAX] = { DP_KEPT_COUNTERS(DP_X_NAME) };
#undef DP_X_NAME
#define DP_X_NAME(name, str) [DP_CLIENT_##name] = str,
static const char *const client_names[DP_CLIENT_MAX] = { DP_CLIENT_SOURCES(DP_X_NAME) };
#undef DP_X_NAME
#define DP_X_CODE(code) [DP_HTTP_##code] = code,
static const unsigned http_codes[DP_HTTP_MAX] = { DP_HTTP_STATUSES(DP_X_CODE) };
#undef DP_X_CODE

const char *
dp_drop_name(enum dp_drop_reason r)
{
	return r < DP_DROP_MAX ? drop_names[r] : "unknown";
}

const char *
dp_answer_name(enum dp_answer_kind k)
{
	return k < DP_ANS_MAX ? answer_names[k] : "unknown";
}

const char *
dp_reject_name(enum dp_reject_reason r)
{
	return r < DP_REJ_MAX ? reject_names[r] : "unknown";
}

const char *
dp_admit_name(enum dp_admit_kind k)
{
	return k < DP_ADM_MAX ? admit_names[k] : "unknown";
}

const char *
dp_kept_name(enum dp_kept_counter k)
{
	return k < DP_KEPT_MAX ? kept_names[k] : "unknown";
}

const char *
dp_client_name(enum dp_client_source s)
{
	return s < DP_CLIENT_MAX ? client_names[s] : "unknown";
}

unsigned
dp_http_status_of(enum dp_http_slot s)
{
	return s < DP_HTTP_MAX ? http_codes[s] : 0;
}

const char *
dp_limit_table_name(enum dp_limit_table t)
{
	return t < DP_LIM_MAX ? limit_table_names[t] : "unknown";
}

const char *
dp_limit_event_name(enum dp_limit_event e)
{
	return e < DP_LIM_EV_MAX ? limit_event_names[e] : "unknown";
}

void
dp_counters_add(struct dp_counters *dst, const struct dp_counters *src)
{
	dst->rx_packets += src->rx_packets;
	dst->rx_bytes += src->rx_bytes;
	dst->tx_packets += src->tx_packets;
	dst->tx_bytes += src->tx_bytes;
	dst->requests += src->requests;
	dst->busy_cycles += src->busy_cycles;
	dst->rx_bursts += src->rx_bursts;
	dst->tx_held += src->tx_held;
	for (unsigned i = 0; i < DP_DROP_MAX; i++)
		dst->drops[i] += src->drops[i];
	for (unsigned i = 0; i < DP_ANS_MAX; i++)
		dst->answers[i] += src->answers[i];
	for (unsigned i = 0; i < DP_HTTP_MAX; i++)
		dst->http[i] += src->http[i];
	for (unsigned i = 0; i < DP_REJ_MAX; i++)
		dst->reject[i] += src->reject[i];
	for (unsigned i = 0; i < DP_ADM_MAX; i++)
		dst->admit[i] += src->admit[i];
	for (unsigned t = 0; t < DP_LIM_MAX; t++)
		for (unsigned e = 0; e < DP_LIM_EV_MAX; e++)
			dst->limit[t][e] += src->limit[t][e];
	for (unsigned i = 0; i < DP_KEPT_MAX; i++)
		dst->kept[i] += src->kept[i];
	for (unsigned i = 0; i < DP_CLIENT_MAX; i++)
		dst->client[i] += src->client[i];
}

void
dp_counters_print(FILE *f, const struct dp_counters *c)
{
	fprintf(f, "  rx %" PRIu64 " packets %" PRIu64 " bytes, tx %" PRIu64 " packets %" PRIu64
		   " bytes, %" PRIu64 " HTTP requests\n",
		c->rx_packets, c->rx_bytes, c->tx_packets, c->tx_bytes, c->requests);
	fprintf(f, "  busy %" PRIu64 " cycles (TSC %" PRIu64 " Hz) in %" PRIu64 " bursts\n",
		c->busy_cycles, rte_get_tsc_hz(), c->rx_bursts);
	if (c->tx_held)
		fprintf(f, "  tx held %" PRIu64 " frames (TX queue full; sent later)\n",
			c->tx_held);
	for (unsigned i = 0; i < DP_ANS_MAX; i++)
		if (c->answers[i])
			fprintf(f, "  answer %-22s %" PRIu64 "\n", answer_names[i], c->answers[i]);
	for (unsigned i = 0; i < DP_HTTP_MAX; i++)
		if (c->http[i])
			fprintf(f, "  http %-24u %" PRIu64 "\n", http_codes[i], c->http[i]);
	for (unsigned i = 0; i < DP_ADM_MAX; i++)
		if (c->admit[i])
			fprintf(f, "  admit %-23s %" PRIu64 "\n", admit_names[i], c->admit[i]);
	for (unsigned i = 0; i < DP_REJ_MAX; i++)
		if (c->reject[i])
			fprintf(f, "  reject %-22s %" PRIu64 "\n", reject_names[i], c->reject[i]);
	for (unsigned i = 0; i < DP_CLIENT_MAX; i++)
		if (c->client[i])
			fprintf(f, "  client_address %-15s %" PRIu64 "\n", client_names[i],
				c->client[i]);
	for (unsigned i = 0; i < DP_DROP_MAX; i++)
		if (c->drops[i])
			fprintf(f, "  drop %-24s %" PRIu64 "\n", drop_names[i], c->drops[i]);
	for (unsigned t = 0; t < DP_LIM_MAX; t++)
		for (unsigned e = 0; e < DP_LIM_EV_MAX; e++)
			if (c->limit[t][e])
				fprintf(f, "  ratelimit %s_%-*s %" PRIu64 "\n",
					limit_table_names[t],
					(int)(18 - strlen(limit_table_names[t])),
					limit_event_names[e], c->limit[t][e]);
	for (unsigned i = 0; i < DP_KEPT_MAX; i++)
		if (c->kept[i])
			fprintf(f, "  kept %-24s %" PRIu64 "\n", kept_names[i], c->kept[i]);
}
