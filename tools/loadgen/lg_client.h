/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_LG_CLIENT_H
#define FG_LG_CLIENT_H
/*
 * The simulated clients of one worker lcore: opens connections at the configured rate and
 * concurrency, plays each one's TCP handshake, request, answer and close, checks every answer
 * and counts it. One struct lg_client (lg_state.h) per lcore, touched only by that lcore.
 * The top of the client's parts (lg_parts.h): what main.c calls, passed down to them.
 */
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "tools/loadgen/lg_state.h"

/*
 * Sets up cl for options o on queue 0 of port_id, with mbufs from pool and our MAC mac.
 * Opens the pcap file if asked. Returns 0, or a negative errno (the message printed).
 */
int lg_client_init(struct lg_client *cl, const struct lg_opts *o, uint16_t port_id,
	struct rte_mempool *pool, const struct rte_ether_addr *mac);

/* Frees what lg_client_init() took; closes the capture. Returns lg_pcap_close()'s result. */
int lg_client_fini(struct lg_client *cl);

/* Asks by ARP who has the data plane's address (until its reply sets have_peer_mac). */
void lg_client_arp_probe(struct lg_client *cl, uint64_t now);

/* Handles n received frames (and frees them); answers go to the TX buffer. */
void lg_client_rx(struct lg_client *cl, struct rte_mbuf **pkts, uint16_t n, uint64_t now);

/* Begins new clients as the rate and concurrency allow (at most one burst a call). */
void lg_client_launch(struct lg_client *cl, uint64_t now);

/* Retransmits, times out and wakes idle sale users whose time has come. */
void lg_client_timers(struct lg_client *cl, uint64_t now);

/*
 * Spends one slice (at most --pow-tries-per-loop tries) on the challenge of the user first in
 * line for a solution; a user whose solution is found goes on with its reserve (at once when
 * its think time is over). Does nothing when no user waits for one.
 */
void lg_client_solve(struct lg_client *cl, uint64_t now);

/*
 * Sets the sale's start: start is its TSC (--start-at, or the run's first loop) and the
 * pre-queue's arrivals are placed around it. Call before the run loop.
 */
void lg_client_set_start(struct lg_client *cl, uint64_t start);

/* Sends what the TX buffer holds; what the port does not take is dropped and counted. */
void lg_client_flush(struct lg_client *cl);

/* True once every honest client was begun and has ended (floods not counted). */
bool lg_client_honest_done(const struct lg_client *cl);

/* True once every honest client has ended and no flood connection is open. */
bool lg_client_done(const struct lg_client *cl);

#endif
