/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_LG_STATS_H
#define FG_LG_STATS_H
/*
 * The load generator's counters and latency histograms. One struct per worker lcore, written
 * only by it; the report adds them up after the run. A histogram bucket is a power of two cut
 * into 16 linear steps, so a percentile read from it is at most 1/16 (6.25 %) above the true
 * value and the histogram is a fixed 8 KB whatever the range (1 cycle to 2^64).
 */
#include <stdint.h>
#include <stdio.h>

#include "tools/loadgen/lg_flood.h"

#define LG_HIST_SUB_BITS 4
#define LG_HIST_SUB	 (1u << LG_HIST_SUB_BITS)
#define LG_HIST_BUCKETS	 (64u * LG_HIST_SUB)
#define LG_STATUS_MAX	 600

struct lg_hist {
	uint64_t count;
	uint64_t max;
	uint64_t b[LG_HIST_BUCKETS];
};

/* How a sale user's sequence ended (docs/api.md: the result statuses, plus our failures). */
enum lg_outcome {
	LG_OUT_RESERVED,
	LG_OUT_ORDERED,
	LG_OUT_PAID,
	LG_OUT_SOLD_OUT,
	LG_OUT_DUPLICATE,
	LG_OUT_EXPIRED,
	LG_OUT_OTHER_RESULT, /* a final result status this loadgen does not know */
	LG_OUT_STILL_QUEUED, /* --max-polls reached while still "queued" */
	LG_OUT_REFUSED,	     /* an answer an honest user should not get (counted unexpected) */
	LG_OUT_GAVE_UP,	     /* --retries exhausted on 425/429/503 */
	LG_OUT_CONN_FAILED,  /* RST, timeout or a malformed answer on one of its connections */
	LG_OUT_N
};

/* One flood kind's counters (--flood), apart from the honest clients'. Only uint64_t fields. */
struct lg_flood_stats {
	uint64_t sent;	      /* SYNs, bad ACKs, or requests (first transmissions) */
	uint64_t conns;	      /* unsigned, one-ip: connections begun */
	uint64_t answered;    /* syn: SYN-ACKs; bad-ack: RSTs; unsigned, one-ip: HTTP answers */
	uint64_t rsts;	      /* RSTs where none belongs (syn, unsigned, one-ip): unexpected too */
	uint64_t timeouts;    /* unsigned, one-ip: connections given up after the retries */
	uint64_t retransmits; /* unsigned, one-ip */
	uint64_t malformed;   /* answers that failed the TCP or HTTP checks */
	uint64_t unexpected;  /* well-formed answers the data plane must not give (lg_flood.h) */
	uint64_t status[LG_STATUS_MAX];
};

struct lg_stats {
	uint64_t tx_pkts, rx_pkts, tx_dropped;
	uint64_t tx_bytes, rx_bytes;
	uint64_t conns_started, conns_completed, conns_rst, conns_timeout, conns_malformed;
	uint64_t retransmits;
	uint64_t requests, responses;
	uint64_t kept_answers; /* kept modes: answers on a kept connection (no FIN after them) */
	uint64_t kept_closed;  /* kept modes: answers with Connection: close (its table full) */
	uint64_t status[LG_STATUS_MAX];
	uint64_t malformed_tcp, malformed_http, unexpected_status;
	uint64_t stray; /* well-formed segments of no current connection (late duplicates) */
	uint64_t arp_requests_answered, arp_replies, other_rx;
	uint64_t syn_sent, syn_acks; /* syn-flood mode */
	/* The blasts: connections sent (SYN, request, FIN each) and the three answers; the
	 * request's answer is ok (healthz 200, reserve 202) or, for a reserve, busy (503) */
	uint64_t blast_sent, blast_syn_acks, blast_ok, blast_busy, blast_fin_acks;
	uint64_t users_started, users_done;
	uint64_t double_clicks; /* sale: users who sent their reserve twice (--double-click) */
	uint64_t outcome[LG_OUT_N];
	struct lg_flood_stats flood[LG_FLOOD_N];
	/* Sale, challenges: token answers with one, solved, given up (--pow-max-tries), nonces
	 * tried and TSC cycles spent trying them */
	uint64_t pow_challenges, pow_solved, pow_unsolved, pow_tries, pow_cycles;
	/* Sale, queued: result answers "queued", those with a position, with a wait_ms, and the
	 * polls whose position was above the user's last one (the design forbids it) */
	uint64_t queued_polls, queued_position, queued_wait, position_rises;
	/* Sale, per population (LG_POP_PEOPLE, LG_POP_BOTS): users, entrants (a first reserve
	 * answered 202), items (a result reserved, ordered or paid) */
	uint64_t pop_users[2], pop_entrants[2], pop_items[2];
	uint64_t arrived_pre, arrived_burst; /* sale with --arrive-before: arrivals */
	struct lg_hist req_lat;	 /* request sent → whole response received, in TSC cycles */
	struct lg_hist conn_lat; /* SYN sent → our FIN acknowledged, in TSC cycles */
	struct lg_hist pow_cpu;	 /* TSC cycles the solver spent on one solution */
	struct lg_hist pow_wait; /* challenge received → solution found (time in line too) */
};

enum { LG_POP_PEOPLE, LG_POP_BOTS };

/* The bucket that holds value v: exact below 16, then 16 steps per power of two. */
static inline unsigned
lg_hist_index(uint64_t v)
{
	if (v < LG_HIST_SUB)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);

	return (e - LG_HIST_SUB_BITS + 1) * LG_HIST_SUB +
	       (unsigned)((v >> (e - LG_HIST_SUB_BITS)) & (LG_HIST_SUB - 1));
}

/* Records one value in h. Never fails. */
static inline void
lg_hist_add(struct lg_hist *h, uint64_t v)
{
	h->b[lg_hist_index(v)]++;
	h->count++;
	if (v > h->max)
		h->max = v;
}

/* The largest value that falls into bucket i (so a percentile never reads low). */
uint64_t lg_hist_bucket_high(unsigned i);

/*
 * The value at quantile q (0 < q <= 1) of h: the upper edge of the bucket holding the
 * ceil(q * count)-th smallest value, capped at the largest value seen. 0 if h is empty.
 */
uint64_t lg_hist_quantile(const struct lg_hist *h, double q);

/* Adds every counter and histogram of src to dst. */
void lg_stats_add(struct lg_stats *dst, const struct lg_stats *src);

/* The name of an outcome as the report prints it ("reserved", "conn_failed", ...). */
const char *lg_outcome_name(enum lg_outcome o);

#endif
