/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_OW_LINK_H
#define FG_OW_LINK_H
/*
 * The order writer's ZeroMQ PUSH to the control planes' PULL sockets: RESULT records (ORDERED,
 * EXPIRED) and RESTOCK records, which each control plane relays to its data planes. With
 * several control planes ([order_writer] push_endpoint a list), every message goes to each of
 * them, one PUSH socket per control plane: a data plane talks to one of them, whichever it
 * moved to. Sending never blocks: what a control plane cannot take (not connected yet, gone,
 * busy) waits in ZeroMQ's queue for it (its high-water mark [order_writer] push_queue
 * messages), then in the writer's own queue of as many; beyond that its records are dropped
 * and counted for that control plane alone, the others still get them.
 * The result hash in Redis holds the same state, where a data plane's result query finds a
 * result it has none of (docs/ha.md says what that does not cover).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"
#include "common/zlink.h"

/* Control planes one order writer pushes to, and the longest endpoint. */
#define OW_LINK_PEERS_MAX 4
#define OW_LINK_EP_MAX	  128

struct ow_link;

/* Counters since ow_link_open(), all control planes together. */
struct ow_link_stats {
	uint64_t messages; /* sent, counted once per control plane */
	uint64_t records;  /* handed to the link (once, whatever the number of control planes) */
	uint64_t dropped;  /* records not sent, summed over the control planes */
};

/* One control plane's counters. */
struct ow_link_peer_stats {
	char endpoint[OW_LINK_EP_MAX];
	uint64_t messages; /* sent to it */
	uint64_t records;  /* sent to it */
	uint64_t dropped;  /* records not sent to it: its queue was full, or an error */
	uint32_t queued;   /* messages waiting for it in the writer's queue now (ZeroMQ's not
			      counted) */
};

/*
 * Splits list (endpoints separated by commas, blanks around each ignored) into
 * out[0..OW_LINK_PEERS_MAX). Each must be tcp://HOST:PORT, ipc://PATH or inproc://NAME.
 * Returns how many (1..OW_LINK_PEERS_MAX), or -EINVAL with the reason in err (an empty item,
 * more than OW_LINK_PEERS_MAX, one too long or not an endpoint).
 */
int ow_link_split(const char *list, char out[][OW_LINK_EP_MAX], char *err, size_t errlen);

/*
 * Connects a PUSH socket to each endpoint of the list (ow_link_split()'s rules; ZeroMQ
 * connects in the background, so no control plane need be up yet), as a CURVE client with
 * keys->curve; sender_id goes into every header; queue_max (>= 1): the high-water mark of
 * each socket and the length of the writer's own queue for each control plane. Returns the
 * link, or NULL with the reason in err.
 */
struct ow_link *ow_link_open(const char *endpoints, uint32_t sender_id, unsigned queue_max,
	const struct zlink_keys *keys, char *err, size_t errlen);

/* Closes the sockets (waiting at most 1 s for queued messages) and frees l; NULL is allowed. */
void ow_link_close(struct ow_link *l);

/*
 * Sends what waits because a control plane could not take it (not connected yet, gone,
 * busy). Called from the loop; the send functions call it first too. Returns messages sent.
 */
unsigned ow_link_flush(struct ow_link *l);

/* Sends n RESULT records to every control plane. Returns n (what a control plane could not
 * take is counted as dropped for it). */
unsigned ow_link_results(struct ow_link *l, const struct wire_result *r, unsigned n);

/* Sends n RESTOCK records to every control plane. Returns n. */
unsigned ow_link_restock(struct ow_link *l, const struct wire_stock *s, unsigned n);

/* Copies the counters. */
void ow_link_get_stats(const struct ow_link *l, struct ow_link_stats *out);

/* How many control planes l pushes to, and peer i's counters into *out (i < that). */
unsigned ow_link_peers(const struct ow_link *l);
void ow_link_get_peer_stats(const struct ow_link *l, unsigned i, struct ow_link_peer_stats *out);

#endif
