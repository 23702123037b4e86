/* SPDX-License-Identifier: BSD-3-Clause */
#include "pg/pg_limits.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "pg/pg_row.h"

#define LIMIT_COLUMNS                                                           \
	"ip_rate, ip_burst, user_rate, user_burst, device_rate, device_burst, " \
	"forward_per_s, forward_burst"

/*
 * Runs sql, whose answer is the one row of LIMIT_COLUMNS, into *l (may be NULL: not read).
 * -ENOENT when it answered no row.
 */
static int
limits_query(struct pg_conn *s, const char *sql, int n, const char *const *vals,
	struct wire_limits *l, char *err, size_t errlen)
{
	int rc;
	PGresult *res = pg_conn_query(s, sql, n, vals, &rc, err, errlen);

	if (res == NULL)
		return rc;
	if (PQntuples(res) != 1) {
		snprintf(err, errlen, "the limits table has no row: is the schema migrated?");
		rc = -ENOENT;
	} else if (l != NULL) {
		memset(l, 0, sizeof(*l));
		l->ip_rate = pg_row_u32(res, 0, 0);
		l->ip_burst = pg_row_u32(res, 0, 1);
		l->user_rate = pg_row_u32(res, 0, 2);
		l->user_burst = pg_row_u32(res, 0, 3);
		l->device_rate = pg_row_u32(res, 0, 4);
		l->device_burst = pg_row_u32(res, 0, 5);
		l->event_forward_per_s = pg_row_u32(res, 0, 6);
		l->event_forward_burst = pg_row_u32(res, 0, 7);
	}
	PQclear(res);
	return rc;
}

int
pg_limits_get(struct pg_conn *s, struct wire_limits *out, char *err, size_t errlen)
{
	return limits_query(s, "SELECT " LIMIT_COLUMNS " FROM limits", 0, NULL, out, err, errlen);
}

int
pg_limits_set(struct pg_conn *s, const struct wire_limits *l, unsigned given,
	struct wire_limits *out, char *err, size_t errlen)
{
	static const char *const names[3] = {"ip", "user", "device"};
	const uint32_t v[8] = {l->ip_rate, l->ip_burst, l->user_rate, l->user_burst, l->device_rate,
		l->device_burst, l->event_forward_per_s, l->event_forward_burst};
	char text[8][16];
	const char *vals[8];

	for (int i = 0; i < 3; i++) {
		if (!(given & (1u << i)))
			continue;
		if (v[2 * i] > ADMIN_RATE_MAX || v[2 * i + 1] > ADMIN_BURST_MAX) {
			snprintf(err, errlen, "%s: rate must be 0..%u and burst 0..%u, got %u/%u",
				names[i], ADMIN_RATE_MAX, ADMIN_BURST_MAX, v[2 * i], v[2 * i + 1]);
			return -EINVAL;
		}
	}
	if ((given & ADMIN_LIMIT_FORWARD) &&
		(l->event_forward_per_s > ADMIN_FORWARD_MAX ||
			l->event_forward_burst > ADMIN_FORWARD_MAX ||
			(l->event_forward_per_s == 0 && l->event_forward_burst != 0))) {
		snprintf(err, errlen,
			"forward must be RATE/BURST with both 0..%u and a burst only with a rate, "
			"got %u/%u",
			ADMIN_FORWARD_MAX, l->event_forward_per_s, l->event_forward_burst);
		return -EINVAL;
	}
	for (int i = 0; i < 8; i++) {
		/* Bit i/2 gives rate and burst i = 0..5; bit 3 the forward budget (6, 7). */
		bool set = i < 6 ? (given >> (i / 2)) & 1 : (given & ADMIN_LIMIT_FORWARD) != 0;

		snprintf(text[i], sizeof(text[i]), "%" PRIu32, v[i]);
		vals[i] = set ? text[i] : NULL;
	}
	return limits_query(s,
		"UPDATE limits SET ip_rate = coalesce($1::int, ip_rate), "
		"ip_burst = coalesce($2::int, ip_burst), user_rate = coalesce($3::int, user_rate), "
		"user_burst = coalesce($4::int, user_burst), "
		"device_rate = coalesce($5::int, device_rate), "
		"device_burst = coalesce($6::int, device_burst), "
		"forward_per_s = coalesce($7::int, forward_per_s), "
		"forward_burst = coalesce($8::int, forward_burst), updated_at = now() "
		"RETURNING " LIMIT_COLUMNS,
		8, vals, out, err, errlen);
}
