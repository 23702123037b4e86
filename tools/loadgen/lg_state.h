/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_LG_STATE_H
#define FG_LG_STATE_H
/*
 * The loadgen's shared state, the bottom of its client's parts (lg_parts.h): what the
 * operator asked for (struct lg_opts), the state of one worker lcore's clients (struct
 * lg_client), and what every part does to it: the TX buffer, counting, a user's think time,
 * the solver's line. It calls none of the parts above it (lg_client.c, lg_launch.c,
 * lg_connect.c, lg_rx.c, lg_judge.c, lg_request.c).
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
	uint64_t flood_max; /* --flood-max: flood segments and connections begun in all; 0: no bound */
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
	uint64_t pow_max_tries;	    /* a challenge unsolved in this many tries: the user gives up */
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
	uint64_t flood_begun; /* flood segments and connections begun, all kinds (--flood-max) */
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
	/* While a blast's flush waits on a full TX ring, it takes the data plane's answers with
	 * this (lg_state_flush()); the set-up (lg_client.c) sets it to lg_rx_blast_take_answers().
	 * Returns how many frames it took. A hook, so that this bottom module calls no part above
	 * it. */
	uint16_t (*take_answers)(struct lg_client *cl);
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

/* The flood counters of connection c, or NULL when c is an honest client's. */
static inline struct lg_flood_stats *
lg_state_flood_stats(struct lg_client *cl, const struct lg_conn *c)
{
	enum lg_flood_kind k = lg_flood_of_step(c->step);

	return likely(k == LG_FLOOD_N) ? NULL : &cl->st.flood[k];
}

/*
 * Counts connection c's segment or answer as malformed (http: by the HTTP checks, else by the
 * TCP ones), in its flood's counters when c is a flood connection. Cannot fail.
 */
void lg_state_count_malformed(struct lg_client *cl, const struct lg_conn *c, bool http);

/*
 * Puts frame m (ours from now on) in the TX buffer, captured and counted, and flushes the
 * buffer (lg_state_flush()) when it is full. Cannot fail.
 */
void lg_state_emit(struct lg_client *cl, struct rte_mbuf *m, uint64_t now);

/*
 * Sends what the TX buffer holds; what the port does not take after a bounded number of tries
 * (a blast: until neither it nor the answers moved for 100 ms) is freed and counted as dropped.
 * The buffer is empty afterwards.
 */
void lg_state_flush(struct lg_client *cl);

/*
 * Builds segment s into a new mbuf and emits it (lg_state_emit()); without an mbuf, or when s
 * does not fit one, counts it as dropped.
 */
void lg_state_send_seg(struct lg_client *cl, const struct lg_seg *s, uint64_t now);

/* Returns the TSC cycles of c's user's think time (lg_sched_think_ms()): 0 without --think-ms. */
uint64_t lg_state_think_cycles(const struct lg_client *cl, const struct lg_conn *c);

/*
 * Puts c's user last in line for the challenge solver (lg_client.c). Returns true, or
 * false (nothing done) when the line is full.
 */
bool lg_state_solve_enqueue(struct lg_client *cl, struct lg_conn *c);

/* Returns true once every honest client was begun and has ended (floods not counted). */
bool lg_state_honest_done(const struct lg_client *cl);

#endif
