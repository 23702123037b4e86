/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_RESULT_INT_H
#define FG_STORE_STORE_RESULT_INT_H
/* Writing buyers' results, shared by the store's modules (only its own .c files include this). */
#include "store/store_conn_int.h"
#include "store/store_result.h"

/*
 * Runs script (EVAL) on event's keys of the nkeys (1..2) kinds, its ARGV the pairs (user, the
 * result's value, store_result_format()) of the n buyers b (1..RS_BATCH_MAX). Returns the reply
 * (the caller frees it), or NULL with *err: -ENOMEM, -EINVAL (a result without a value form:
 * nothing sent), or store_command_ok()'s error.
 */
redisReply *store_eval_buyers(struct store *rs, uint32_t event, const char *script,
	const enum store_key_kind *kinds, unsigned nkeys, const struct store_buyer *b, unsigned n,
	int *err);

#endif
