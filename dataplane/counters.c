/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/counters.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define COUNTERS_X_DESC(name_, kind_, label_, first_, n_, stride_, members_, help_)                \
	{.name = name_,                                                                            \
		.kind = COUNTERS_##kind_,                                                          \
		.label = label_,                                                                   \
		.offset = offsetof(struct dp_counters, first_),                                    \
		.n = n_,                                                                           \
		.stride = stride_,                                                                 \
		.members = members_,                                                               \
		.help = help_},
const struct counters_desc counters_table[COUNTERS_TABLE_LEN] = {COUNTERS_TABLE(COUNTERS_X_DESC)};
#undef COUNTERS_X_DESC

/* Every value of the table lies inside struct dp_counters. */
#define COUNTERS_X_FITS(name_, kind_, label_, first_, n_, stride_, members_, help_)                \
	_Static_assert(offsetof(struct dp_counters, first_) +                                      \
				       (((size_t)(n_) - 1) * (stride_) + 1) * sizeof(uint64_t) <=  \
			       sizeof(struct dp_counters),                                         \
		name_ " lies inside struct dp_counters");
COUNTERS_TABLE(COUNTERS_X_FITS)
#undef COUNTERS_X_FITS

int
counters_flat_name(const struct counters_desc *d, unsigned i, char sep, char *buf, size_t cap)
{
	int len = d->members == NULL ? snprintf(buf, cap, "%s", d->name)
				     : snprintf(buf, cap, "%s%c%s", d->name, sep, d->members[i]);

	return len < 0 || (size_t)len >= cap ? -ENOSPC : len;
}

const char *
counters_drop_name(enum dp_drop_reason r)
{
	static const char *const names[DP_DROP_MAX] = {DP_DROP_REASONS(COUNTERS_X_NAME)};

	return r < DP_DROP_MAX ? names[r] : "unknown";
}

/* struct dp_counters is 64-bit counters and nothing else: added word by word. */
_Static_assert(sizeof(struct dp_counters) % sizeof(uint64_t) == 0, "dp_counters is u64s");

void
counters_add(struct dp_counters *dst, const struct dp_counters *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;

	for (size_t i = 0; i < sizeof(*dst) / sizeof(uint64_t); i++)
		d[i] += s[i];
}

void
counters_print(FILE *f, const struct dp_counters *c)
{
	enum { WIDTH = 44 }; /* where the values start, for the longest names */

	for (unsigned k = 0; k < COUNTERS_TABLE_LEN; k++) {
		const struct counters_desc *d = &counters_table[k];
		int pad = WIDTH - 1 - (int)strlen(d->name);

		for (unsigned i = 0; i < d->n; i++) {
			uint64_t v = counters_value(c, d, i);

			if (d->members == NULL)
				fprintf(f, "  %-*s %" PRIu64 "\n", WIDTH, d->name, v);
			else if (v != 0)
				fprintf(f, "  %s %-*s %" PRIu64 "\n", d->name, pad, d->members[i],
					v);
		}
	}
}
