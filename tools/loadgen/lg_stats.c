/* SPDX-License-Identifier: BSD-3-Clause */
#include <math.h>
#include <stddef.h>

#include "tools/loadgen/lg_stats.h"

uint64_t
lg_hist_bucket_high(unsigned i)
{
	if (i < LG_HIST_SUB)
		return i;
	unsigned e = i / LG_HIST_SUB + LG_HIST_SUB_BITS - 1;
	uint64_t sub = i % LG_HIST_SUB;
	uint64_t step = 1ull << (e - LG_HIST_SUB_BITS);

	/* The bucket starts at (16 + sub) << (e - 4); the last bucket ends at 2^64 - 1. */
	return ((LG_HIST_SUB + sub) << (e - LG_HIST_SUB_BITS)) + (step - 1);
}

uint64_t
lg_hist_quantile(const struct lg_hist *h, double q)
{
	if (h->count == 0 || !(q > 0))
		return 0;
	if (q > 1)
		q = 1;
	uint64_t rank = (uint64_t)ceil(q * (double)h->count);
	uint64_t seen = 0;

	if (rank == 0)
		rank = 1;
	for (unsigned i = 0; i < LG_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t hi = lg_hist_bucket_high(i);

			return hi < h->max ? hi : h->max;
		}
	}
	return h->max;
}

static void
hist_add(struct lg_hist *dst, const struct lg_hist *src)
{
	dst->count += src->count;
	if (src->max > dst->max)
		dst->max = src->max;
	for (unsigned i = 0; i < LG_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
}

void
lg_stats_add(struct lg_stats *dst, const struct lg_stats *src)
{
	/* Every field before the histograms is a uint64_t counter. */
	const uint64_t *s = (const uint64_t *)src;
	uint64_t *d = (uint64_t *)dst;
	size_t n = offsetof(struct lg_stats, req_lat) / sizeof(uint64_t);

	for (size_t i = 0; i < n; i++)
		d[i] += s[i];
	hist_add(&dst->req_lat, &src->req_lat);
	hist_add(&dst->conn_lat, &src->conn_lat);
	hist_add(&dst->pow_cpu, &src->pow_cpu);
	hist_add(&dst->pow_wait, &src->pow_wait);
}

const char *
lg_outcome_name(enum lg_outcome o)
{
	static const char *const names[LG_OUT_N] = {
		[LG_OUT_RESERVED] = "reserved",
		[LG_OUT_ORDERED] = "ordered",
		[LG_OUT_PAID] = "paid",
		[LG_OUT_SOLD_OUT] = "sold_out",
		[LG_OUT_DUPLICATE] = "duplicate",
		[LG_OUT_EXPIRED] = "expired",
		[LG_OUT_OTHER_RESULT] = "other_result",
		[LG_OUT_STILL_QUEUED] = "still_queued",
		[LG_OUT_REFUSED] = "refused",
		[LG_OUT_GAVE_UP] = "gave_up",
		[LG_OUT_CONN_FAILED] = "conn_failed",
	};

	return (unsigned)o < LG_OUT_N ? names[o] : "?";
}
