/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_BRIDGE_H
#define FG_DP_BRIDGE_H
/*
 * The bridge: one plain thread (not a worker lcore) that owns every ZeroMQ
 * socket of the data plane.
 *
 * Out: each worker hands admitted reservations to its own single-producer,
 * single-consumer ring (bridge_submit(), a burst's at once with bridge_flush();
 * -ENOBUFS when full -> the worker answers 503). The bridge drains the rings into batches of up to
 * batch_max records and PUSHes them to the control plane without blocking. A batch that cannot be
 * sent (peer gone, high-water mark) is kept and retried, and the rings are not drained meanwhile:
 * nothing accepted is dropped; the rings fill and the workers shed. Result queries travel apart:
 * each worker has a second ring for them (bridge_query()), drained into RESULT_QUERY messages
 * that alternate with the reservation batches, so that a storm of polls never fills the ring a
 * reservation needs. A query is asked at most once per (event, user) per query_cooldown_ms from
 * a worker (a per-worker table); a poll within the cooldown is answered from what the data
 * plane has, and counted.
 *
 * In: the bridge SUBscribes to everything the control planes publish (see
 * docs/wire.md). RESULTs go to the result table; EVENT, SOLD_OUT, RESTOCK,
 * KEYS, RULES and LIMITS to a new version of the shared state (shared_state.h).
 * It asks for a snapshot at start, on a gap in a sender's sequence numbers, on
 * a sender's restart, and after resync_ms without any message; until the first
 * snapshot is complete, shared_get() is NULL and bridge_port_ready() false.
 *
 * Counters: every stats_ms the bridge PUSHes one DP_STATS message (docs/wire.md) with what
 * stats_fn gives (the workers' summed counters, see bridge_stats_from_counters()) followed by
 * its own ("bridge_*"), so that the control plane shows and exports every data plane's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "common/wire.h"
#include "common/zlink.h"
#include "dataplane/clock.h"
#include "dataplane/result_table.h"
#include "dataplane/shared_state.h"

#define BRIDGE_ENDPOINT_MAX 128
#define BRIDGE_BATCH_MAX    4096
/* Control planes one data plane may list (docs/ha.md, "Several control planes"). */
#define BRIDGE_CP_MAX 4
/* Per worker: (event, user) pairs whose last result query is remembered for the cooldown. */
#define BRIDGE_COOL_ENTRIES 4096

struct bridge_config {
	uint32_t dp_id; /* 1..WIRE_DP_ID_MAX: sender id and in reservation ids */
	/*
	 * The control plane's PULL and PUB, e.g. tcp://127.0.0.1:5601 and :5602; or lists of up
	 * to BRIDGE_CP_MAX, separated by commas, the i-th of each one control plane (all on one
	 * Redis and PostgreSQL): the bridge talks to the first, and moves to the next when the one
	 * it talks to was silent (not even a heartbeat) for resync_ms, counted as cp_switches.
	 */
	char push_endpoint[BRIDGE_ENDPOINT_MAX];
	char sub_endpoint[BRIDGE_ENDPOINT_MAX];
	unsigned n_workers;			 /* 1..WIRE_WORKERS_MAX: one ring each */
	unsigned ring_size;	  /* per worker, a power of two >= 2 (one slot is never used); the
				     result query ring of each worker has the same size */
	unsigned batch_max;	  /* records per RESERVE message, 1..BRIDGE_BATCH_MAX */
	unsigned batch_wait_us;	  /* the longest a record waits for its batch to fill */
	uint32_t result_capacity; /* (event, user) results kept for polls */
	uint32_t query_cooldown_ms; /* one result query per (event, user) and worker this long */
	unsigned resync_ms; /* no message from the control plane this long -> ask for a snapshot */
	unsigned snapshot_retry_ms; /* an unanswered snapshot request is repeated this often */
	int push_hwm;		    /* ZMQ_SNDHWM of the PUSH socket, in messages */
	int push_sndbuf;	    /* its kernel send buffer in bytes; 0: the system's default */
	int socket_id;		    /* NUMA socket of the rings and the result table */
	unsigned stats_ms; /* a DP_STATS message this often (the first at start); 0: none */
	/* How long the purchase tokens it mints stay valid, reported in DP_STATS as the gauge
	 * purchase_token_ttl_s: the control plane keeps a retired sale key at least this long. */
	uint32_t purchase_token_ttl_s;
	/*
	 * Fills out[0..cap) with the data plane's counters and sets *n to how many it wrote.
	 * Called on the bridge thread once per stats_ms, so it reads the workers' counters
	 * without locks (aligned u64s: never torn). NULL: only the bridge's own are sent.
	 */
	void (*stats_fn)(void *arg, struct wire_stat *out, unsigned cap, unsigned *n);
	void *stats_arg;
	/* CURVE client keys (keys.curve false: plaintext); wiped by bridge_destroy(). */
	struct zlink_keys keys;
	/* The workers' clock: its skew against the control plane's (HEARTBEAT now_ms) is shown in
	 * DP_STATS. NULL: the wall clock. */
	const struct clock_sync *clock;
	/* A skew beyond this (either way) is logged once per excursion; 0: never. */
	uint32_t clock_skew_max_ms;
};

/* How long a data plane stays refused after the last DP_REFUSED for it (docs/wire.md). */
#define BRIDGE_REFUSED_HOLD_MS 3000

/* Fills c with the defaults (endpoints on 127.0.0.1:5601/5602, dp id 1, one worker). */
void bridge_config_defaults(struct bridge_config *c);

/*
 * Checks c; returns 0, or -EINVAL with one line saying what is wrong and what to set in err.
 */
int bridge_config_check(const struct bridge_config *c, char *err, size_t errlen);

/*
 * Records a worker stages before one enqueue: at most a burst's worth (WORKER_BURST_MAX), so a
 * burst's reservations reach the ring with one update of its producer index.
 */
#define BRIDGE_STAGE_MAX 64

/*
 * One worker's end of the bridge. The worker is the only writer of everything here but
 * refused, which the bridge thread sets while the control plane refuses this data plane (its
 * dp id is another's); the bridge thread reads the counters.
 *
 * A worker's records go to the ring a burst at a time: bridge_submit() and bridge_query()
 * stage them here and bridge_flush() (at the end of each burst, before its answers are sent)
 * enqueues them together. Each ring operation moves cache lines between the worker's core
 * and the bridge's (the producer index, the consumer index, the slots), which costs more
 * than the rest of an admission's bookkeeping when paid per record. A record is accepted
 * only with a free slot known for it: room counts the slots seen free at the last look at
 * the consumer index, less those staged. Only this worker adds to the ring, so the free
 * slots can only grow meanwhile, and the flush always fits: nothing accepted waits
 * anywhere but here, or is lost.
 */
/* A result query a worker sent: (event, user) and until when a second one waits. */
struct bridge_cool {
	uint64_t user;
	uint32_t event;
	uint32_t until_ms; /* low 32 bits of the worker's clock in ms */
};

struct bridge_port {
	struct rte_ring *ring;		   /* struct wire_reserve elements, SP/SC */
	struct rte_ring *qring;		   /* struct wire_result_query elements, SP/SC */
	struct bridge_cool *cool;	   /* BRIDGE_COOL_ENTRIES, direct-mapped */
	uint32_t cooldown_ms;
	const struct shared_state *shared; /* shared_get(port->shared) */
	const struct result_table *results;
	uint64_t submitted;	  /* reservations accepted */
	uint64_t ring_full;	  /* reservations refused: the worker answered 503 */
	uint64_t queries;	  /* result queries accepted */
	uint64_t queries_refused; /* result queries refused: their ring full (the poll is answered) */
	uint64_t queries_cooled;  /* polls within the cooldown: answered without a second query */
	const bool *stopping;	  /* the bridge's: set once the data plane stops */
	uint32_t room;		  /* ring slots known free, less n_staged */
	uint32_t n_staged;
	bool refused; /* the control plane refuses this data plane: answer 503 (bridge writes) */
	struct wire_reserve staged[BRIDGE_STAGE_MAX];
} __rte_cache_aligned;

/*
 * Enqueues the staged records (in the order they were staged) to the bridge's ring. Worker
 * only; every burst that may have staged one ends with it. The room reserved for them makes
 * it complete; were it ever short, the rest stays staged for the next call (never dropped).
 */
static inline void
bridge_flush(struct bridge_port *p)
{
	if (p->n_staged == 0)
		return;
	unsigned n = rte_ring_sp_enqueue_burst_elem(
		p->ring, p->staged, sizeof(p->staged[0]), p->n_staged, NULL);

	if (unlikely(n < p->n_staged))
		memmove(p->staged, p->staged + n, sizeof(p->staged[0]) * (p->n_staged - n));
	p->n_staged -= n;
}

/* Stages r when a ring slot is known free for it. Returns 0, or -ENOBUFS: the ring is full. */
static inline int
bridge_stage(struct bridge_port *p, const struct wire_reserve *r)
{
	if (unlikely(p->room == 0)) {
		/* The consumer index is read only when the room known is used up. */
		unsigned free = rte_ring_free_count(p->ring);

		p->room = free > p->n_staged ? free - p->n_staged : 0;
		if (p->room == 0)
			return -ENOBUFS;
	}
	if (unlikely(p->n_staged == BRIDGE_STAGE_MAX)) {
		bridge_flush(p);
		if (p->n_staged == BRIDGE_STAGE_MAX)
			return -ENOBUFS;
	}
	p->staged[p->n_staged++] = *r;
	p->room--;
	return 0;
}

/*
 * Hands one admitted reservation to the bridge; it reaches the ring at the next
 * bridge_flush(). Worker only (one producer per port). Returns 0, or -ENOBUFS when the ring
 * is full (the bridge is backed up: answer 503). r->reservation_id must not be 0.
 */
static inline int
bridge_submit(struct bridge_port *p, const struct wire_reserve *r)
{
	if (unlikely(bridge_stage(p, r) != 0)) {
		p->ring_full++;
		return -ENOBUFS;
	}
	p->submitted++;
	return 0;
}

/*
 * Asks the control plane to publish the result of (event, user) again, for a poll that found
 * nothing in the result table, at most once per cooldown for the pair: returns 0 (enqueued to the
 * worker's query ring), -EALREADY (asked, or refused, within the cooldown: counted in
 * queries_cooled) or -ENOBUFS (the query ring is full: counted in queries_refused). Either way
 * the poll is answered from what the data plane has. Worker only. A pair that shares its table
 * entry with another may be asked again early; never later than the cooldown.
 */
static inline int
bridge_query(struct bridge_port *p, uint32_t event, uint64_t user, uint64_t now_ms)
{
	uint64_t h = (user ^ ((uint64_t)event << 40) ^ (uint64_t)event) * 0x9e3779b97f4a7c15ull;
	struct bridge_cool *c = &p->cool[h >> (64 - 12)];
	uint32_t now = (uint32_t)now_ms;

	_Static_assert(BRIDGE_COOL_ENTRIES == 1 << 12, "the index takes the hash's top 12 bits");
	if (c->user == user && c->event == event && (int32_t)(c->until_ms - now) > 0) {
		p->queries_cooled++;
		return -EALREADY;
	}
	struct wire_result_query q = {.user = user, .event = event};

	/* A refused query waits the cooldown too: a full ring is not asked again at once. */
	*c = (struct bridge_cool){.user = user, .event = event, .until_ms = now + p->cooldown_ms};
	if (unlikely(rte_ring_sp_enqueue_elem(p->qring, &q, sizeof(q)) != 0)) {
		p->queries_refused++;
		return -ENOBUFS;
	}
	p->queries++;
	return 0;
}

/*
 * Whether the data plane is stopping (bridge_drain_begin()): from then on the worker takes no
 * new reservation and answers 503 with Retry-After, so that what it accepted can be handed
 * over before it exits. One load of a line that is written once.
 */
static inline bool
bridge_port_stopping(const struct bridge_port *p)
{
	return __atomic_load_n(p->stopping, __ATOMIC_ACQUIRE);
}

/*
 * Whether the first snapshot arrived and the control plane does not refuse this data plane:
 * otherwise the worker answers 503 to reserve.
 */
static inline bool
bridge_port_ready(const struct bridge_port *p)
{
	return shared_get(p->shared) != NULL && !__atomic_load_n(&p->refused, __ATOMIC_RELAXED);
}

/* What the bridge did. Written by the bridge thread only; read with bridge_counters_read(). */
struct bridge_counters {
	uint64_t msgs_in[WIRE_T_MAX]; /* valid messages received, by type */
	uint64_t records_in[WIRE_T_MAX];
	uint64_t msgs_out[WIRE_T_MAX]; /* messages sent, by type */
	uint64_t records_out[WIRE_T_MAX];
	uint64_t decode_errors[WIRE_ERR_MAX]; /* messages (bad_field: records) refused, by reason */
	uint64_t wrong_direction;	      /* a data-plane-to-control-plane type on SUB */
	uint64_t multipart;		      /* messages of more than one frame (refused) */
	uint64_t seq_gaps;		      /* lost messages detected */
	uint64_t sender_restarts;	      /* a control plane with a new epoch */
	uint64_t snapshot_requests;
	uint64_t snapshots_applied;
	uint64_t snapshots_incomplete;	  /* END missing, wrong id or counts: asked again */
	uint64_t ignored_before_snapshot; /* state updates before the first snapshot */
	uint64_t events_rejected;	  /* events past DP_MAX_EVENTS */
	uint64_t stock_unknown_event;	  /* SOLD_OUT/RESTOCK for an event we do not have */
	uint64_t fair_unknown_event;	  /* FAIR for an event we do not have (refused) */
	uint64_t fair_in_place;		  /* FAIR records applied in place (progress, pow bits) */
	uint64_t keys_rejected;		  /* keys past the keyring's size */
	uint64_t rules_rejected;	  /* rule sets that rules_build() refused (old set kept) */
	uint64_t batches_sent;		  /* RESERVE messages */
	uint64_t send_retries;		  /* sends that would have blocked, retried later */
	uint64_t send_errors;		  /* sends that failed otherwise (retried too) */
	uint64_t unsent_at_stop;	  /* accepted, never sent: the stop gave up (cp gone) */
	uint64_t unconfirmed_at_stop;	  /* sent, but no result proved the cp received them */
	uint64_t stop_resends;		  /* the last one sent again: its result was late */
	uint64_t refusals;		  /* DP_REFUSED for this data plane (its dp id is in use) */
	uint64_t clock_skew_over;	  /* times the skew went beyond clock_skew_max_ms */
	uint64_t cp_switches;		  /* moves to the next control plane of the list */
	/* Summed from the ports by bridge_counters_read(). */
	uint64_t submitted, ring_full, queries, queries_refused, queries_cooled;
	/* The result table's and the shared state's own counters. */
	struct result_table_counters results;
	uint64_t shared_versions;
};

struct bridge;

/*
 * Creates the bridge for c: rings, the RCU variable the workers report to (max threads =
 * n_workers), the result table, the shared state. No thread and no socket yet. Needs EAL.
 * Returns NULL with a message in err when c is invalid or memory is short.
 */
struct bridge *bridge_create(const struct bridge_config *c, char *err, size_t errlen);

/*
 * Connects the sockets and starts the thread. Returns 0, or -1 with a message in err (an
 * endpoint ZeroMQ refuses, no thread).
 */
int bridge_start(struct bridge *b, char *err, size_t errlen);

/*
 * The first step of a stop: from now on bridge_port_stopping() is true, so workers refuse new
 * reservations (503). The caller then waits for every worker to pass a quiescent point
 * (rte_rcu_qsbr_synchronize() on bridge_qsbr()), after which no reservation is accepted any
 * more, and calls bridge_drain_wait().
 */
void bridge_drain_begin(struct bridge *b);

enum bridge_drain_result {
	BRIDGE_DRAIN_DONE = 1, /* every accepted reservation was handed over */
	BRIDGE_DRAIN_CP_GONE,  /* nothing heard from the control plane for resync_ms */
	BRIDGE_DRAIN_TIMEOUT,  /* still not all handed over after max_ms */
	BRIDGE_DRAIN_ABORTED,  /* *abort became true (a second signal) */
};

/*
 * Waits until every reservation the workers accepted is handed over to the control plane:
 * sent, and a RESULT for the last one sent arrived (the PUSH link is one ordered stream, so
 * the control plane then holds every earlier one too). Gives up when the control plane is
 * known gone (no message, not even a heartbeat, for resync_ms), after max_ms, or when *abort
 * (may be NULL) becomes true. Call after bridge_drain_begin() and the workers' grace period;
 * then stop the workers and call bridge_stop(). Returns what ended the wait.
 */
enum bridge_drain_result bridge_drain_wait(
	struct bridge *b, unsigned max_ms, const volatile bool *abort);

/*
 * Stops the thread: it sends what the rings and its batch hold for at most flush_ms
 * (stop the workers first), then closes the sockets and terminates the ZeroMQ context.
 * Reservations still unsent are counted in unsent_at_stop, those sent whose receipt by the
 * control plane no result proved in unconfirmed_at_stop. Idempotent.
 */
void bridge_stop(struct bridge *b, unsigned flush_ms);

/* Frees b (after bridge_stop(); no worker may use it any more). NULL is a no-op. */
void bridge_destroy(struct bridge *b);

/* Worker i's port, 0 <= i < n_workers. */
struct bridge_port *bridge_port(struct bridge *b, unsigned worker);

/* The RCU variable every worker registers with (thread id = worker index) and reports to. */
struct rte_rcu_qsbr *bridge_qsbr(struct bridge *b);

const struct shared_state *bridge_shared(const struct bridge *b);

const struct result_table *bridge_results(const struct bridge *b);

/* Whether the first snapshot arrived and the control plane does not refuse this data plane. */
bool bridge_ready(const struct bridge *b);

/* Whether the control plane refuses this data plane now (another holds its dp id). */
bool bridge_refused(const struct bridge *b);

/*
 * This data plane's clock minus the control plane's at its latest HEARTBEAT, in ms, into
 * *skew_ms (positive: ahead). Returns false when no heartbeat came yet.
 */
bool bridge_clock_skew(const struct bridge *b, int64_t *skew_ms);

/* Copies the counters into out (a moment's view; each value is read atomically). */
void bridge_counters_read(const struct bridge *b, struct bridge_counters *out);

struct dp_counters;

/*
 * Writes c as DP_STATS records into out (up to cap): every value of counters_table[]
 * (dataplane/counters.h) in its order, a single counter as its name, a family's member as
 * "name.label=member", with the table's kind. For a stats_fn that sums the workers' counters
 * and calls this. Returns how many it wrote: all of them (about 150) unless cap is smaller.
 */
unsigned bridge_stats_from_counters(const struct dp_counters *c, struct wire_stat *out,
	unsigned cap);

#endif
