/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_LG_CLIENT_H
#define FG_LG_CLIENT_H
/*
 * The simulated clients of one worker lcore: opens connections at the configured rate and
 * concurrency, plays each one's TCP handshake, request, answer and close, checks every answer
 * and counts it. One struct lg_client per lcore, touched only by that lcore.
 */
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "common/token.h"
#include "net/tcp_syncookie.h"
#include "tools/loadgen/lg_conn.h"
#include "tools/loadgen/lg_flood.h"
#include "tools/loadgen/lg_pcap.h"
#include "tools/loadgen/lg_pkt.h"
#include "tools/loadgen/lg_pow.h"
#include "tools/loadgen/lg_stats.h"

#define LG_BURST     32
#define LG_PORT_BASE 1024

enum lg_mode {
	LG_MODE_HEALTHZ,       /* GET /healthz, one request per connection */
	LG_MODE_SYN_FLOOD,     /* SYNs from random addresses and ports, never completed */
	LG_MODE_SALE,	       /* per user: token, reserve, result polls (docs/api.md) */
	LG_MODE_RESERVE,       /* a reserve with a valid purchase token per connection: 202 */
	LG_MODE_RESULT,	       /* a result poll with a valid receipt per connection: 200 */
	LG_MODE_HEALTHZ_BLAST, /* GET /healthz connections sent whole without waiting, the
				* cookie computed from the data plane's syncookie_secret */
	LG_MODE_RESERVE_BLAST, /* the same with a reserve and a valid purchase token: 202 */
	LG_MODE_KEPT_HEALTHZ,  /* GET /healthz, --per-conn requests per kept connection */
	LG_MODE_KEPT_RESERVE,  /* reserves (one user each), --per-conn per kept connection */
};

/* Modes that send many requests on one connection, one after another, as an edge does. */
static inline bool
lg_mode_kept(enum lg_mode m)
{
	return m == LG_MODE_KEPT_HEALTHZ || m == LG_MODE_KEPT_RESERVE;
}

/* Modes whose every request is of one kind, one answer each (healthz, reserve, result, kept). */
static inline bool
lg_mode_single(enum lg_mode m)
{
	return m == LG_MODE_HEALTHZ || m == LG_MODE_RESERVE || m == LG_MODE_RESULT ||
	       lg_mode_kept(m);
}

/* Modes whose requests are reserves with a valid purchase token (202, or 503 when busy). */
static inline bool
lg_mode_reserve(enum lg_mode m)
{
	return m == LG_MODE_RESERVE || m == LG_MODE_KEPT_RESERVE;
}

/* Modes that send whole connections without waiting (healthz-blast, reserve-blast). */
static inline bool
lg_mode_blast(enum lg_mode m)
{
	return m == LG_MODE_HEALTHZ_BLAST || m == LG_MODE_RESERVE_BLAST;
}

/* What the operator asked for (tools/loadgen/lg_cli.c parses it; docs/loadgen.md). */
struct lg_opts {
	enum lg_mode mode;
	uint64_t count;	      /* connections (healthz, reserve, result), SYNs or users (sale) */
	uint32_t concurrency; /* clients at once */
	double duration_s;    /* bound on the whole run */
	double rate;	      /* new connections, SYNs or users per second; 0: no limit */
	double start_at;      /* Unix seconds to begin at; 0: at once */
	uint32_t src_base;    /* first client address (host order) */
	uint32_t n_src;	      /* client addresses */
	uint32_t dst_ip;      /* the data plane (host order) */
	uint16_t dport;
	unsigned retries;	 /* retransmissions of a segment; retries after 425/429/503 */
	unsigned rto_ms;	 /* first retransmission timeout, doubled after each */
	unsigned poll_ms;	 /* sale: between result polls */
	unsigned max_polls;	 /* sale: result polls per user */
	uint32_t event;		 /* sale: event id */
	uint64_t user_base;	 /* sale: first user id */
	unsigned double_click;	 /* sale: percent of users who click "buy" twice */
	struct tok_keyring auth; /* sale, one-ip flood: the shop's auth key, to mint sessions */
	uint32_t kid;		 /* its key id */
	struct tok_keyring sale; /* reserve, result: the sale key, to mint purchase tokens and
				  * receipts as the data plane itself does */
	char reserve_path[128];	 /* reserve: the event's path under the sale key */
	char host[64];		 /* Host header */
	const char *pcap_path;	 /* NULL: no capture */
	const char *report_json; /* --report-json: also the report as JSON there; NULL: not */
	uint64_t pcap_max;
	double linger_s; /* after the run: wait, not polling, for the peer's link to go down */
	double flood_rate[LG_FLOOD_N]; /* --flood KIND:RATE, per second; 0: not asked */
	uint32_t flood_base;	       /* first flood address (host order): the one-ip flood's */
	uint32_t n_flood;	       /* flood addresses, at least 2 */
	uint32_t flood_concurrency;    /* unsigned and one-ip connections at once */
	uint8_t cookie_secret[16];     /* the blasts: the data plane's syncookie_secret */
	uint32_t cookie_slot_s;	       /* and its syncookie_slot */
	uint32_t per_conn;	       /* kept modes: requests per connection */
	bool proxy_v2;		       /* a PROXY v2 header at the start of each connection */
	uint32_t proxy_src_base;       /* the client addresses it gives (host order) */
	uint32_t n_proxy_src;
	/* Sale: bots, people and a pre-queue (tools/loadgen/lg_sched.h), challenges. */
	uint64_t bots;		    /* --bots: users that are bots, spread over the users */
	bool populations;	    /* --bots was given: the report has a line per population */
	double think_ms;	    /* people's mean think time before a request of their own */
	double bot_speed;	    /* bots think and retry this many times faster (>= 1) */
	uint64_t seed;		    /* the think times' draw */
	double arrive_before;	    /* pre-queue: seconds before --start-at the arrivals begin */
	unsigned burst_pct;	    /* pre-queue: percent of users arriving at the start */
	unsigned poll_max_ms;	    /* a queued user's longest wait between polls */
	uint64_t pow_tries_per_loop; /* challenge nonces tried per run loop iteration */
	uint64_t pow_max_tries;	    /* a challenge not solved in this many tries: the user gives up */
};

/* Whether o asks for any flood, and for a flood of kind k. */
static inline bool
lg_opts_flood(const struct lg_opts *o, enum lg_flood_kind k)
{
	return o->flood_rate[k] > 0;
}

struct lg_client {
	const struct lg_opts *o;
	uint16_t port_id, queue_id;
	struct rte_mempool *pool;
	struct lg_link link;
	bool have_peer_mac;
	struct lg_table *tab;
	struct lg_pcap pcap;
	bool capturing;
	uint64_t hz, rto, poll;
	uint64_t launched; /* connections, SYNs or users begun */
	double credit;	   /* rate limiter: launches allowed now */
	uint64_t t_credit;
	uint64_t t_next_scan; /* next timer scan of the table */
	uint64_t flood_salt;  /* syn-flood mode and the syn flood: ISNs */
	uint64_t ack_salt;    /* the bad-ack flood: sequence and acknowledgement numbers */
	/* Floods (--flood): their own connection table (source ports LG_PORT_BASE..), and the
	 * stateless kinds' source ports from stateless_port_lo up, so the two never meet. */
	struct lg_table *ftab;
	uint16_t stateless_port_lo;
	bool any_flood;
	double flood_credit[LG_FLOOD_N];
	uint64_t t_flood_credit;
	uint64_t one_ip_user; /* the next one-ip session's user */
	char bad_ack_req[256];
	uint16_t bad_ack_len;
	char forged_session[TOK_BUF_SIZE];
	char forged_purchase[TOK_BUF_SIZE];
	char reserve_path[LG_PATH_MAX]; /* a forged one until a token answer gives the event's */
	bool have_reserve_path;
	uint16_t n_tx;
	struct rte_mbuf *tx[LG_BURST];
	struct lg_stats st;
	/* The blasts: the data plane's cookies, as its workers make them, and the request of the
	 * connection being sent. Every request of a run has the same length (a reserve-blast's
	 * users have as many digits each, their tokens one expiry), so that an answer's
	 * acknowledgement number tells which segment it answers. */
	struct syncookie_ctx cookies;
	char blast_req[512];
	uint16_t blast_req_len;
	uint64_t blast_exp; /* reserve-blast: the purchase tokens' expiry, Unix s */
	/* Sale: the start (--start-at, else the run's first loop) in TSC cycles, which the
	 * pre-queue's arrivals are placed around, and the first users that arrive before it. */
	uint64_t t_start;
	uint64_t n_pre;
	double arr_first_pre, arr_last_pre, arr_first_burst; /* arrivals, s from the start */
	/* Challenges (lg_pow.h): users waiting for their solution, in the order they got their
	 * challenge (slot and user: an entry of a user who has ended is skipped), and the one
	 * being solved, a slice of --pow-tries-per-loop tries per run loop iteration. */
	struct lg_solve_wait {
		uint32_t slot;
		uint64_t user;
	} *solve_q;
	uint32_t solve_cap, solve_head, solve_n;
	bool solving;
	struct lg_solve_wait solving_for;
	struct lg_pow_solver solver;
	uint64_t solving_cycles; /* TSC cycles spent on the current challenge so far */
	unsigned pow_bits_min, pow_bits_max;
};

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
