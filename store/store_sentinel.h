/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_SENTINEL_H
#define FG_STORE_STORE_SENTINEL_H
/*
 * Redis with replicas (docs/ha.md): finding the primary through Redis Sentinel, noticing a
 * failover, refusing a replica or a primary that would take writes without its replicas, and
 * waiting until a batch reached the replicas (WAIT). Only the store's own .c files include
 * this header; store_open() uses it when struct store_conn_config .sentinels is set, and the
 * reservation pipeline (store_reserve.c, store_draw.c) when .wait_replicas > 0.
 *
 * The store's connection follows a failover in three ways: a +switch-master message on a
 * subscription to one of the Sentinels, a READONLY answer (the node it talks to became a
 * replica), or a lost connection; each makes the next call ask the Sentinels for the primary
 * again, connect to it, check that it is a primary (ROLE) and load the scripts.
 */
#include <stdbool.h>
#include <stddef.h>

#include <hiredis/hiredis.h>

#define RS_SENTINELS_MAX 8

struct store;
struct store_sentinel;

/*
 * Parses list ("host:port,host:port,...", 1..RS_SENTINELS_MAX Sentinels, IPv4 addresses or
 * names) and keeps master (the name the Sentinels monitor the primary by). timeout_ms bounds
 * each question to a Sentinel. Returns the state, or NULL with err saying what was wrong.
 */
struct store_sentinel *store_sentinel_new(
	const char *list, const char *master, unsigned timeout_ms, char *err, size_t err_len);

/* Closes the subscription and frees sn; NULL is allowed. */
void store_sentinel_free(struct store_sentinel *sn);

/*
 * Asks the Sentinels in turn (the last one that answered first) for the primary's address
 * (SENTINEL get-master-addr-by-name). Returns 0 with host (host_len bytes) and *port filled,
 * or -1 with why naming each Sentinel's failure.
 */
int store_sentinel_primary(struct store_sentinel *sn, char *host, size_t host_len, unsigned *port,
	char *why, size_t why_len);

/*
 * True when a +switch-master of our master arrived on the subscription since the last call
 * (never blocks). Keeps the subscription: (re)subscribes to the next Sentinel at most once a
 * second while it has none.
 */
bool store_sentinel_switched(struct store_sentinel *sn);

/* The master name and the Sentinel list, for messages. */
const char *store_sentinel_describe(const struct store_sentinel *sn);

/*
 * Checks that c is connected to a primary (ROLE answers "master"). Returns 0, -1 with why (a
 * replica, or an answer this build cannot read), or -2 with why when the connection failed.
 */
int store_check_primary(redisContext *c, char *why, size_t why_len);

/*
 * Checks that the primary refuses writes without its replicas: min-replicas-to-write is at
 * least want and min-replicas-max-lag is set. Returns 0, -1 with why naming the setting, or -2
 * with why when the connection failed.
 */
int store_check_min_replicas(redisContext *c, unsigned want, char *why, size_t why_len);

/*
 * With Sentinel: asks it for the primary and points rs's address (host, port, where) at it.
 * Returns 0 (also without Sentinel: nothing to do), or -1 with why.
 */
int store_locate_primary(struct store *rs, char *why, size_t why_len);

/*
 * The checks of a new connection c of rs, after store_conn.c's own settings check: with
 * wait_replicas > 0 and the settings checked, that the primary refuses writes without its
 * replicas (else -1 with why: a configuration error, as that check's); with Sentinel, that c
 * reaches a primary (else -3 with why, to be tried again: the Sentinels' answer was older than
 * a failover). Returns 0, -1 or -3, or -2 with why when the connection failed.
 */
int store_check_replication(struct store *rs, redisContext *c, char *why, size_t why_len);

/*
 * True when the connection of rs should be given up for a failover: with Sentinel, a READONLY
 * answer was read, or Sentinel announced a +switch-master to another address (counted in
 * failovers). Without Sentinel always false. Never blocks.
 */
bool store_failover_noticed(struct store *rs);

#endif
