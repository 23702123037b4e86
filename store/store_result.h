/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_RESULT_H
#define FG_STORE_STORE_RESULT_H
/*
 * Looking up users' results in their events' result hashes (store/store_keys.h), for the
 * control plane's answers to result queries.
 */
#include <stdint.h>

#include "common/wire.h"
#include "store/store_conn.h"

/* What rs_results() found for one user. */
struct rs_result {
	uint8_t verdict;	  /* 0 when the user has no entry, else a WIRE_V_* */
	uint64_t reservation_id;  /* 0 when verdict is 0 */
	uint64_t order_id;	  /* ORDERED and PAID only, else 0 */
	uint64_t pay_deadline_ms; /* ORDERED only, else 0 */
};

/*
 * Looks up the results of n (event, user) pairs (pipelined HGETs on each event's result hash)
 * into out[0..n). A value this build cannot parse is reported as verdict 0 and logged; "H"
 * (restored by reconciliation, the order is in PostgreSQL) is verdict 0 without a log.
 * Returns 0, -ENOTCONN or -EIO (then out is unspecified).
 */
int rs_results(struct redis_store *rs, const struct wire_result_query *q, unsigned n,
	struct rs_result *out);

#endif
