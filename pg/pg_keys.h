/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_PG_KEYS_H
#define FG_PG_PG_KEYS_H
/*
 * The sale keys (purchase tokens, receipts) and the shop's auth keys, with their secrets: rotation,
 * retirement, listing. Errors as pg/pg_conn.h says, and -ENOSPC as pg_keys_rotate() says.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"
#include "admin/admin_proto.h"
#include "pg/pg_conn.h"

/*
 * Generates a new sale key (32 bytes from getrandom) with the next key id and makes it current;
 * the key that was current retires: it stays, not current, and verifies until the last purchase
 * token or receipt it signed can no longer be valid (token_life_ms after it stopped being
 * current, and until the sales it could have signed receipts for have ended and their pay
 * window passed), however many rotations follow. Keys past that are deleted first. A data
 * plane holds TOK_KEYS_MAX sale keys: when that many still verify, the rotation is refused with
 * -ENOSPC and a message naming the oldest key and when it retires (nothing changes). All in one
 * transaction. *kid receives the new key id.
 */
int pg_keys_rotate(
	struct pg_conn *s, uint64_t token_life_ms, uint32_t *kid, char *err, size_t errlen);

/*
 * Deletes the sale keys whose retirement (as pg_keys_rotate() says) has passed; *removed
 * receives how many. For the control plane's cron.
 */
int pg_keys_expire(
	struct pg_conn *s, uint64_t token_life_ms, unsigned *removed, char *err, size_t errlen);

/*
 * Stores the shop's auth key kid (len bytes of secret, ADMIN_SECRET_MIN..ADMIN_SECRET_MAX) as
 * the current auth key, replacing the secret if kid exists; the previous current auth key stays
 * (not current), older ones are deleted.
 */
int pg_keys_auth_set(struct pg_conn *s, uint32_t kid, const uint8_t *secret, size_t len, char *err,
	size_t errlen);

/*
 * Reads the keys of both kinds, with their secrets (the control plane publishes them), ordered
 * by kind and id, into out[0..cap); *n receives how many there are. Each retiring sale key
 * comes with when it retires (retire_at_ms, from token_life_ms as pg_keys_rotate() says) and
 * whether that has passed (retired: pg_keys_expire() deletes it).
 */
int pg_keys_list(struct pg_conn *s, uint64_t token_life_ms, struct admin_key *out, unsigned cap,
	unsigned *n, char *err, size_t errlen);

#endif
