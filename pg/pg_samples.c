/* SPDX-License-Identifier: BSD-3-Clause */
#include "pg/pg_samples.h"

#include <inttypes.h>
#include <stdio.h>

int
pg_samples_write(
	struct pg_conn *s, const struct pg_sample *smp, uint64_t *rows, char *err, size_t errlen)
{
	char id[16], adm[24], bud[24], dps[16];
	const char *vals[6] = {id, smp->decisions, smp->answers, adm, bud, dps};

	snprintf(id, sizeof(id), "%" PRIu32, smp->cp_id);
	snprintf(adm, sizeof(adm), "%" PRIu64, smp->admitted);
	snprintf(bud, sizeof(bud), "%" PRIu64, smp->budget_refused);
	snprintf(dps, sizeof(dps), "%u", smp->data_planes);
	/* The counts read the event's orders by the (event_id, user_id) index: a slow-path
	 * statement on the sampler's own connection, never the decisions' loop. */
	return pg_conn_exec_rows(s,
		"INSERT INTO sale_samples (event_id, cp_id, decisions, answers, admitted, "
		"budget_refused, data_planes, pow_bits, items_left, orders, paid, expired, "
		"cancelled) "
		"SELECT e.id, $1::bigint, $2::jsonb, $3::jsonb, $4::bigint, $5::bigint, $6::int, "
		"e.pow_bits, st.available, o.n, o.paid, o.expired, o.cancelled "
		"FROM events e LEFT JOIN stock st ON st.event_id = e.id "
		"CROSS JOIN LATERAL (SELECT count(*) AS n, "
		"count(*) FILTER (WHERE status = 'paid') AS paid, "
		"count(*) FILTER (WHERE status = 'expired') AS expired, "
		"count(*) FILTER (WHERE status = 'cancelled') AS cancelled "
		"FROM orders WHERE event_id = e.id) o "
		"WHERE e.state = 'open' "
		"ON CONFLICT (event_id, at) DO NOTHING",
		6, vals, rows, err, errlen);
}
