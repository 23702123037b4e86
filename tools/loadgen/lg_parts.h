/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TOOLS_LG_PARTS_H
#define FG_TOOLS_LG_PARTS_H
/*
 * The parts of the loadgen's client, each a file of its job, and what they call of each other.
 * They form layers, no circle:
 *   lg_client.c   the top (lg_client.h, what main.c calls): set-up and end, the challenge
 *                 solver, the run loop's calls passed down to the parts below
 *   lg_launch.c   beginning clients and floods at their rates
 *   lg_rx.c       the receive path: frames to connections, the stateless modes' answers, ARP
 *   lg_connect.c  connections: open, send, retransmit, close, end the client
 *   lg_judge.c    judging answers: what an answer means for its user, what comes next
 *   lg_request.c  the requests a client sends (healthz, sale steps, floods, PROXY v2)
 *   lg_state.c    the bottom (lg_state.h): the shared state, the TX buffer, counting
 * listed top to bottom, each calling only parts listed below it. Every part includes this
 * header; none below lg_client.c includes lg_client.h. Everything here runs on the loadgen's
 * one lcore, in its run loop: no locks.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "tools/loadgen/lg_state.h"

/* lg_request.c */

/* GET /healthz for host into buf[0..cap). Returns its length (>= cap: it did not fit), or -1. */
int lg_request_healthz(char *buf, size_t cap, const char *host);

/*
 * A reserve of user with a purchase token for the event of o that expires at exp (Unix s),
 * minted with the sale key as the data plane mints them, into buf[0..cap). Returns its length;
 * -ENOKEY if the token could not be minted, -ENOSPC if the request does not fit.
 */
int lg_request_reserve(char *buf, size_t cap, const struct lg_opts *o, uint64_t user, uint64_t exp);

/* Writes the request of c's step into c->req. Returns 0, or -1 if it does not fit. */
int lg_request_build(struct lg_client *cl, struct lg_conn *c);

/*
 * --proxy-v2: puts a PROXY protocol v2 header before c's request, in the same segment, giving
 * a client address of --proxy-src-net, one per user. Returns 0, or -1 when the request has no
 * room for it.
 */
int lg_request_proxy_v2(const struct lg_client *cl, struct lg_conn *c);

/* lg_connect.c */

/* Retransmits, times out and wakes idle sale users whose time has come (lg_client_timers()). */
void lg_connect_timers(struct lg_client *cl, uint64_t now);

/* Sends a segment of connection c with our sequence number seq and payload[0..len). */
void lg_connect_send(struct lg_client *cl, const struct lg_conn *c, uint8_t flags, uint32_t seq,
	const void *payload, uint16_t len, uint64_t now);

/* Connection c's SYN; its request (the handshake's third segment); its FIN. */
void lg_connect_syn(struct lg_client *cl, struct lg_conn *c, uint64_t now);
void lg_connect_req(struct lg_client *cl, struct lg_conn *c, uint64_t now);
void lg_connect_fin(struct lg_client *cl, struct lg_conn *c, uint64_t now);

/* Opens a new TCP connection for slot c (its step, user and address already set). */
void lg_connect_open(struct lg_client *cl, struct lg_conn *c, uint64_t now);

/* Ends client c (a healthz connection, a sale user or a flood connection) with outcome out. */
void lg_connect_end(struct lg_client *cl, struct lg_conn *c, enum lg_outcome out);

/* A connection failed (RST, timeout, malformed segment): its client ends with it. */
void lg_connect_fail(struct lg_client *cl, struct lg_conn *c);

/* Idle sale user c starts its next connection at due (at once when due is now). */
void lg_connect_idle_until(struct lg_client *cl, struct lg_conn *c, uint64_t due, uint64_t now);

/* Our FIN was acknowledged: the connection is complete; what its client does next. */
void lg_connect_closed(struct lg_client *cl, struct lg_conn *c, uint64_t now);

/*
 * A kept connection's whole answer is in: judged (lg_judge_kept()), then the client's next
 * request on the same connection, acknowledging the answer; after the last, our FIN.
 */
void lg_connect_kept_next(struct lg_client *cl, struct lg_conn *c, uint64_t now);

/* lg_judge.c */

/*
 * Connection c's whole answer and its FIN are in: checks it, counts it and decides what its
 * client does next (c->verdict: 1 go on, 2 + outcome when it has ended).
 */
void lg_judge_response(struct lg_client *cl, struct lg_conn *c, uint64_t now);

/* A kept connection's whole answer (without FIN) is in: checks it, counts it, judges it. */
void lg_judge_kept(struct lg_client *cl, struct lg_conn *c, uint64_t now);

/* lg_rx.c */

/* Handles n received frames and frees them; answers go to the TX buffer (lg_client_rx()). */
void lg_rx_frames(struct lg_client *cl, struct rte_mbuf **pkts, uint16_t n, uint64_t now);

/*
 * A blast's flush waiting on a full TX ring takes the data plane's answers meanwhile (counted
 * only; anything else is counted and dropped). Returns how many frames it took.
 */
uint16_t lg_rx_blast_take_answers(struct lg_client *cl);

/* lg_launch.c */

/*
 * Begins new clients as the rate and concurrency allow (at most one burst a call), and flood
 * segments while the honest clients go on; nothing before the peer's MAC is known
 * (lg_client_launch()).
 */
void lg_launch_due(struct lg_client *cl, uint64_t now);

#endif
