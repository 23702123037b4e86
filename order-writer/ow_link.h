/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_OW_LINK_H
#define FG_OW_LINK_H
/*
 * The order writer's ZeroMQ PUSH to the control plane's PULL socket: RESULT records (ORDERED,
 * EXPIRED) and RESTOCK records, which the control plane relays to every data plane. Sending
 * never blocks: when the control plane is away and ZeroMQ's queue is full, records are dropped
 * and counted. Nothing is lost for a buyer: the result hash in Redis holds the same state, and
 * a data plane asks for a result it did not get (result query).
 */
#include <stdint.h>

#include "common/wire.h"
#include "common/zlink.h"

struct ow_link;

/* Counters since ow_link_open(). */
struct ow_link_stats {
	uint64_t messages; /* sent */
	uint64_t records;
	uint64_t dropped; /* records not sent: queue full or an error */
};

/*
 * Connects a PUSH socket to endpoint (ZeroMQ connects in the background, so the control plane
 * need not be up yet), as a CURVE client with keys->curve; sender_id goes into every header.
 * Returns the link, or NULL with the reason in err.
 */
struct ow_link *ow_link_open(const char *endpoint, uint32_t sender_id,
	const struct zlink_keys *keys, char *err, size_t errlen);

/* Closes the socket (waiting at most 1 s for queued messages) and frees l; NULL is allowed. */
void ow_link_close(struct ow_link *l);

/*
 * Sends what waits because the control plane could not take it (not connected yet, gone,
 * busy). Called from the loop; the send functions call it first too. Returns messages sent.
 */
unsigned ow_link_flush(struct ow_link *l);

/* Sends n RESULT records (as many messages as needed). Returns how many records went. */
unsigned ow_link_results(struct ow_link *l, const struct wire_result *r, unsigned n);

/* Sends n RESTOCK records. Returns how many records went. */
unsigned ow_link_restock(struct ow_link *l, const struct wire_stock *s, unsigned n);

/* Copies the counters. */
void ow_link_get_stats(const struct ow_link *l, struct ow_link_stats *out);

#endif
