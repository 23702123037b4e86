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

/* What store_results() found for one user. */
struct store_result {
	uint8_t verdict;	  /* 0 when the user has no entry, else a WIRE_V_* */
	uint64_t reservation_id;  /* 0 when verdict is 0 */
	uint64_t order_id;	  /* ORDERED, PAID, EXPIRED, CANCELLED (when stored), else 0 */
	uint64_t pay_deadline_ms; /* the same, when stored (PAID of older builds: 0), else 0 */
};

/*
 * Looks up the results of n (event, user) pairs (pipelined HGETs on each event's result hash)
 * into out[0..n). A value this build cannot parse is reported as verdict 0 and logged; "H"
 * (restored by an older build's reconciliation, the order is in PostgreSQL) is verdict 0
 * without a log.
 * Returns 0, -ENOTCONN, -EIO or -ETIMEDOUT (with [redis] wait_replicas, the replicas did not
 * confirm they hold what was read: docs/ha.md), and then out is unspecified.
 */
int store_results(struct store *rs, const struct wire_result_query *q, unsigned n,
	struct store_result *out);

/* Room for any value store_result_format() writes, with its NUL: "T:" and three numbers. */
#define STORE_RESULT_VALUE_MAX (2 + 3 * 20 + 2 + 1)

/*
 * Formats an order's result as the result hash holds it (store/store_keys.h):
 * "<T>:<rid>:<order id>:<deadline ms>" with T "O" for r->verdict WIRE_V_ORDERED, "P" PAID, "X"
 * EXPIRED and "C" CANCELLED, into buf (NUL-terminated; cap STORE_RESULT_VALUE_MAX is enough).
 * The one writer of these forms: the order writer's, release.lua's caller's and reconciliation's.
 * Returns the length, or 0 (buf empty when cap > 0) for another verdict or a cap too small.
 */
size_t store_result_format(char *buf, size_t cap, const struct store_result *r);

/* A buyer and its order's result: WIRE_V_ORDERED (a pending order), PAID, EXPIRED or
 * CANCELLED, with the order's reservation id, order id and pay deadline. */
struct store_buyer {
	uint64_t user;
	struct store_result result;
};

/* A paid order, for store_results_paid(). */
struct store_paid {
	uint64_t user;
	uint64_t reservation_id;
	uint64_t order_id;
	uint64_t pay_deadline_ms;
};

/*
 * Stores "P:<rid>:<order id>:<deadline>" as the result of each of the n users of event (one
 * script), except for a user who is not a buyer of the event or whose result is expired,
 * cancelled or sold out (a final result of another kind stays). *stored is set to how many were
 * written. Returns 0, -EINVAL (event 0 or n > RS_BATCH_MAX), -ENOMEM, -ENOTCONN or -EIO.
 */
int store_results_paid(struct store *rs, uint32_t event, const struct store_paid *p, unsigned n,
	unsigned *stored);

#endif
