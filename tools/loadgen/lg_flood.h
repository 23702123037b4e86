/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_LG_FLOOD_H
#define FG_LG_FLOOD_H
/*
 * The floods that --flood KIND:RATE mixes into a run (docs/loadgen.md), and what each must get
 * back from a flashgate data plane:
 *   syn       SYNs from random flood addresses and ports     -> a SYN-ACK acking the SYN
 *   bad-ack   an ACK carrying a request, with no SYN before   -> RST <SEQ=SEG.ACK>
 *             (dataplane/pipeline/tcp.h: the ACK proves no cookie, RFC 9293 §3.10.7.1)
 *   unsigned  full handshake, then a token request with a forged or no session (-> 401), or a
 *             reserve with a forged or no purchase token (-> 403)
 *   one-ip    token requests with valid sessions, all from one address -> 200, then 429 once
 *             the data plane's per-address bucket is empty
 * The stateless kinds (syn, bad-ack) keep no state: their sequence numbers are a keyed hash of
 * address and port, so an answer is checked from the packet alone.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_tcp.h>

#include "tools/loadgen/lg_conn.h"
#include "tools/loadgen/lg_http.h"
#include "tools/loadgen/lg_pkt.h"

enum lg_flood_kind {
	LG_FLOOD_SYN,
	LG_FLOOD_BAD_ACK,
	LG_FLOOD_UNSIGNED,
	LG_FLOOD_ONE_IP,
	LG_FLOOD_N
};

#define LG_FLOOD_RATE_MIN 1.0
#define LG_FLOOD_RATE_MAX 1e7
#define LG_FLOOD_CONC_MAX 16384
/* Users of the one-ip flood's sessions and of the forged tokens: far above any shop's ids. */
#define LG_FLOOD_USER_BASE UINT64_C(1000000000000000)

/* The kind's name on the command line ("syn", "bad-ack", "unsigned", "one-ip"). */
const char *lg_flood_name(enum lg_flood_kind k);

/* The kind's report key ("flood_syn", "flood_bad_ack", "flood_unsigned", "flood_one_ip"). */
const char *lg_flood_report_key(enum lg_flood_kind k);

/*
 * Parses "KIND:RATE" (RATE per second, LG_FLOOD_RATE_MIN..LG_FLOOD_RATE_MAX). Returns 0 with
 * *kind and *rate set, or -EINVAL when the kind is unknown or the rate out of range.
 */
int lg_flood_parse(const char *s, enum lg_flood_kind *kind, double *rate);

/* The flood kind of a connection's step, or LG_FLOOD_N for an honest client's step. */
static inline enum lg_flood_kind
lg_flood_of_step(unsigned step)
{
	if (step < LG_STEP_FLOOD_FIRST)
		return LG_FLOOD_N;
	return step == LG_STEP_FLOOD_ONE_IP ? LG_FLOOD_ONE_IP : LG_FLOOD_UNSIGNED;
}

/* What a flood request is built from (tools/loadgen/lg_request.c, lg_client.c). */
struct lg_flood_req {
	uint32_t event;
	const char *host;
	const char *session;	     /* one-ip: a valid session token */
	const char *forged_session;  /* a session token of the right form under a random key */
	const char *forged_purchase; /* a purchase token likewise */
	const char *reserve_path;    /* the event's reserve path, or one of the right form */
};

/*
 * Writes the request of flood step step (LG_STEP_FLOOD_*) into buf (cap bytes, NUL-terminated).
 * Returns its length, or -1 when step is not a flood step or the request does not fit.
 */
int lg_flood_request(char *buf, size_t cap, unsigned step, const struct lg_flood_req *x);

/*
 * Whether the well-formed answer r is one that the data plane may give to a request of flood
 * step step (docs/api.md, the checks in order): the refusal the flood aims at (401 for the
 * token requests, 403 for the reserves, 200 with "token" and "reserve_path" for one-ip), or one
 * of the checks that come before it: 410 sold out or closed, 425 too early, 503 not ready, and
 * 429 "too many requests from this address" (the flood's own address bucket; no other 429 can
 * come, since no flood request proves a user that another request used).
 */
bool lg_flood_answer_ok(unsigned step, const struct lg_http_resp *r);

/* splitmix64: the keyed hash behind the stateless floods' sequence numbers. */
static inline uint64_t
lg_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The ISN of a SYN from cip:sport (host order). */
static inline uint32_t
lg_flood_syn_isn(uint64_t salt, uint32_t cip, uint16_t sport)
{
	return (uint32_t)lg_mix64(salt ^ ((uint64_t)cip << 16 | sport));
}

/* The sequence and acknowledgement numbers of a bad-cookie ACK from cip:sport. */
static inline void
lg_flood_bad_ack_nums(uint64_t salt, uint32_t cip, uint16_t sport, uint32_t *seq, uint32_t *ack)
{
	uint64_t h = lg_mix64(salt ^ ((uint64_t)cip << 16 | sport));

	*seq = (uint32_t)h;
	*ack = (uint32_t)(h >> 32);
}

/* What a segment to a stateless flood's address and port answers. */
enum lg_flood_rx {
	LG_FRX_SYN_ACK,	      /* SYN+ACK acking our SYN, no payload: right */
	LG_FRX_SYN_RST,	      /* RST+ACK acking our SYN: the port refused it */
	LG_FRX_BAD_ACK_RST,   /* RST at our bad ACK's acknowledgement number: right */
	LG_FRX_BAD_ACK_TAKEN, /* an answer acking our bad ACK's request: the cookie was taken */
	LG_FRX_UNKNOWN,	      /* none of ours */
};

/*
 * Classifies s, a segment to a stateless flood address and port, against the SYNs (syn_salt)
 * and bad ACKs (ack_salt, requests of req_len bytes) that address and port would have sent.
 * RFC 9293 §3.10.7.1: a segment with an ACK to no connection gets <SEQ=SEG.ACK><CTL=RST>.
 */
static inline enum lg_flood_rx
lg_flood_classify(uint64_t syn_salt, uint64_t ack_salt, uint16_t req_len, const struct lg_rx_seg *s)
{
	const uint8_t mask =
		RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG | RTE_TCP_FIN_FLAG;
	uint8_t f = s->flags & mask;
	uint32_t isn = lg_flood_syn_isn(syn_salt, s->dst_ip, s->dport), seq, ack;

	if (f == (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG))
		return s->ack == isn + 1 && s->payload_len == 0 ? LG_FRX_SYN_ACK : LG_FRX_UNKNOWN;
	if (f == (RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG) && s->ack == isn + 1)
		return LG_FRX_SYN_RST;
	lg_flood_bad_ack_nums(ack_salt, s->dst_ip, s->dport, &seq, &ack);
	if (f == RTE_TCP_RST_FLAG && s->seq == ack && s->payload_len == 0)
		return LG_FRX_BAD_ACK_RST;
	if ((f & RTE_TCP_ACK_FLAG) && !(f & RTE_TCP_RST_FLAG) && s->ack == seq + req_len)
		return LG_FRX_BAD_ACK_TAKEN;
	return LG_FRX_UNKNOWN;
}

#endif
