/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_BRIDGE_INT_H
#define FG_DP_BRIDGE_INT_H
/*
 * The bridge's insides: the one header its four parts include, and nothing else does.
 *   bridge.c        set-up, the thread's loop, start and stop, the workers' view; the only
 *                   part that calls the others' functions (declared below), in its loop;
 *   bridge_in.c     the SUB side: the control plane's messages into the model, and new
 *                   versions of the shared state (events, keys, rules, limits) and results;
 *   bridge_out.c    the PUSH side: the workers' rings drained into batches, one message at a
 *                   time sent without blocking;
 *   bridge_stats.c  the data plane's and the bridge's counters as DP_STATS records, and
 *                   bridge_counters_read().
 * bridge_in.c, bridge_out.c and bridge_stats.c share struct bridge and the inline readers
 * below, and call no function of another part: the loop hands them what they need (the
 * DP_STATS records bridge_out.c sends are collected by the loop into stats/n_stats).
 * Everything here runs on the bridge thread, except the readers, which any thread may call.
 */
#include <stdbool.h>
#include <stdint.h>

#include "common/ctr.h"
#include "dataplane/bridge/bridge.h"

#define SENDERS_MAX    8   /* control planes whose sequence numbers we follow */
#define RECV_PER_ROUND 256 /* messages handled before the bridge looks at its rings again */
#define DRAIN_BURST    64
/* A stop's handover: the last reservation is sent again when its result is this late. */
#define BRIDGE_RESEND_MS 1000
#define KEYS_MAX       (2 * TOK_KEYS_MAX)

/* The control plane's view as the bridge last applied it: versions are built from this. */
struct model {
	struct wire_event ev[DP_MAX_EVENTS];
	unsigned n_ev;
	/* fair[i] is ev[i]'s FAIR record when has_fair[i]; an event without one has no draw. */
	struct wire_fair fair[DP_MAX_EVENTS];
	bool has_fair[DP_MAX_EVENTS];
	struct wire_key keys[KEYS_MAX];
	unsigned n_keys;
	struct wire_rule *rules;
	unsigned n_rules, cap_rules;
	struct wire_limits limits;
	bool have_limits;
};

/* A snapshot being received: BEGIN seen, END not yet. */
struct staging {
	bool active;
	uint32_t sender;
	uint64_t id;
	uint64_t started_ms;
	unsigned seen_ev, seen_keys, seen_rules; /* records received, kept or not */
	struct model m;
};

struct sender_track {
	bool used;
	uint32_t id;
	uint32_t epoch;
	uint64_t next_seq;
};

enum { CH_EVENTS = 1, CH_KEYS = 2, CH_RULES = 4, CH_LIMITS = 8, CH_ALL = 15 };

struct bridge {
	struct bridge_config cfg;
	struct bridge_port *ports;
	struct rte_rcu_qsbr *qsbr;
	struct result_table *results;
	struct shared_state shared;
	struct bridge_counters ctr;

	pthread_t thread;
	bool started, stopped;
	volatile bool stop;
	uint64_t flush_deadline_ms;
	/* The stop's drain (bridge_drain_begin(), bridge_drain_wait()): stopping is what the
	 * workers read; sealed says no worker accepts any more; the thread sets drain_result. */
	bool stopping;
	volatile bool sealed;
	volatile int drain_result;
	uint64_t drain_deadline_ms;
	/* The handover proof: the last reservation sent (mark, id mark_rid), how many were sent
	 * up to and including it (mark_count; sent counts each reservation once) and, once its
	 * RESULT came back, confirmed = mark_count: the control plane received every one of
	 * them (one ordered stream). During a stop the mark is sent again when its result is
	 * late (a result published before a reconnected SUB joined is not seen): the control
	 * plane answers a second copy too (DUPLICATE, or its decision if the first was lost). */
	struct wire_reserve pending_last, mark;
	bool pending_resend;
	uint64_t mark_rid, mark_count, confirmed, sent, mark_sent_ms;

	void *zctx, *push, *sub;
	void *mon[2];	      /* with CURVE: monitors of push and sub (handshakes refused) */
	uint64_t last_mon_ms; /* when they were last read */
	struct wire_sender tx;

	/* Out: records drained from the rings, and at most one encoded message in flight. */
	struct wire_reserve *staged;
	unsigned n_staged;
	uint64_t staged_since_us;
	struct wire_result_query *qstaged;
	unsigned n_qstaged;
	uint8_t *msg;
	size_t msg_cap, msg_len;
	bool pending;
	uint8_t pending_type;
	unsigned pending_records;
	unsigned rr; /* the ring drained first, rotating for fairness */
	bool last_was_reserve; /* the last message sent of the two kinds: they take turns */
	struct wire_stat *stats; /* WIRE_STATS_MAX records of the next DP_STATS */
	unsigned n_stats;	 /* how many of them, collected when stats_due was set */
	bool stats_due;
	bool hello_due;	   /* a HELLO goes with each DP_STATS */
	uint64_t instance; /* random, never 0: tells this data plane from another with its dp id */
	uint64_t last_stats_ms;

	/* In. */
	struct sender_track senders[SENDERS_MAX];
	struct model cur;
	struct staging snap;
	bool want_snapshot, request_due;
	uint64_t last_request_ms, last_rx_ms;
	/* The control planes of the endpoint lists, and the one talked to (bridge_cp_failover). */
	char cp_push[BRIDGE_CP_MAX][BRIDGE_ENDPOINT_MAX];
	char cp_sub[BRIDGE_CP_MAX][BRIDGE_ENDPOINT_MAX];
	unsigned n_cp, cp_cur;
	/* Refused by the control plane until this (monotonic ms; 0: not refused). */
	uint64_t refused_until_ms;
	/* The clock skew against the control plane's latest HEARTBEAT (read by other threads). */
	int64_t skew_ms;
	bool skew_known, skew_over;
};

/* Whether the control plane refused this data plane (bridge_refused()). Any thread. */
static inline bool
bridge_is_refused(const struct bridge *b)
{
	return b->cfg.n_workers > 0 && __atomic_load_n(&b->ports[0].refused, __ATOMIC_RELAXED);
}

/* Whether a snapshot was applied and the control plane does not refuse us (bridge_ready()).
 * Any thread. */
static inline bool
bridge_is_ready(const struct bridge *b)
{
	return shared_get(&b->shared) != NULL && !bridge_is_refused(b);
}

/* The clock skew against the control plane into *skew_ms, when known (bridge_clock_skew()).
 * Any thread. */
static inline bool
bridge_skew_read(const struct bridge *b, int64_t *skew_ms)
{
	if (!__atomic_load_n(&b->skew_known, __ATOMIC_ACQUIRE))
		return false;
	*skew_ms = __atomic_load_n(&b->skew_ms, __ATOMIC_RELAXED);
	return true;
}

/*
 * How long the control plane has been silent at now_ms (the bridge thread's clock, read at the
 * top of its round). A message received later in the same round stamps last_rx_ms after now_ms:
 * silent for 0 then, not for 2^64 - 1 ms (which moved the bridge off a control plane that had
 * just answered it, on a loaded host where the millisecond turned between the two reads).
 */
static inline uint64_t
bridge_silent_ms(const struct bridge *b, uint64_t now_ms)
{
	return now_ms > b->last_rx_ms ? now_ms - b->last_rx_ms : 0;
}

/* now_ms - then_ms, or 0 when then_ms was stamped after now_ms was read (the same wrap as
 * above: a snapshot's start, a drain mark's send). */
static inline uint64_t
bridge_ms_since(uint64_t now_ms, uint64_t then_ms)
{
	return now_ms > then_ms ? now_ms - then_ms : 0;
}

/* bridge_in.c: handles what the SUB socket holds, at most RECV_PER_ROUND messages. Returns how
 * many. */
unsigned bridge_in_receive(struct bridge *b);

/* bridge_in.c: lifts a refusal whose hold ran out (b->refused_until_ms). */
void bridge_in_check_refusal(struct bridge *b, uint64_t now_ms);

/* bridge_in.c: decides whether to ask for a snapshot now (sets b->request_due). */
void bridge_in_schedule_snapshot(struct bridge *b, uint64_t now_ms);

/* bridge_out.c: moves records from the rings into the batches (reservations, result queries)
 * while each has room. Returns how many records it took. */
unsigned bridge_out_drain(struct bridge *b, uint64_t now_us);

/* bridge_out.c: encodes the next message to send into b->msg if none is pending (a snapshot
 * request, a HELLO, the counters in b->stats when stats_due, then a reservation batch that is
 * full, old enough or flushing and result queries, taking turns when both wait). */
void bridge_out_prepare(struct bridge *b, uint64_t now_us, bool flushing);

/* bridge_out.c: tries to send the pending message without blocking. Returns true when it went
 * out. */
bool bridge_out_send(struct bridge *b);

/* bridge_out.c: whether every worker's ring is empty. */
bool bridge_out_rings_empty(const struct bridge *b);

/* bridge_stats.c: fills b->stats for the next DP_STATS: the data plane's counters, then the
 * bridge's. Returns how many records. */
unsigned bridge_stats_collect(struct bridge *b);

#endif
