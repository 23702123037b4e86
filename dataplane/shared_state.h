/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_SHARED_STATE_H
#define FG_DP_SHARED_STATE_H
/*
 * What the control plane decides and every worker reads: the event table, the
 * keyrings, the risk rules and the limits. One immutable struct dp_shared per
 * version, published through one pointer; the bridge builds a new version on
 * each change and swaps the pointer, and frees the old version (and whatever
 * parts of it the new one does not share) after an RCU grace period.
 *
 * How a worker reads it (rte_rcu_qsbr, thread id = worker index):
 *   at start:   rte_rcu_qsbr_thread_register(qsbr, idx); rte_rcu_qsbr_thread_online(qsbr, idx);
 *   per loop:   const struct dp_shared *sh = shared_get(state);  ... use sh for the burst ...
 *               rte_rcu_qsbr_quiescent(qsbr, idx);   (after the burst: drop every pointer)
 *   at exit:    rte_rcu_qsbr_thread_offline(qsbr, idx); rte_rcu_qsbr_thread_unregister(qsbr, idx);
 * A worker must not keep any pointer from sh (events, rules, keyrings) across
 * rte_rcu_qsbr_quiescent().
 */
#include <stdint.h>

#include <rte_rcu_qsbr.h>

#include "common/token.h"
#include "dataplane/events.h"
#include "dataplane/ratelimit.h"

struct rules;

/* Token-bucket parameters for the whole data plane (workers take their share with
 * rl_params_split()). */
struct dp_limits {
	struct rl_params ip;
	struct rl_params user;
	struct rl_params device;
	struct rl_params
		event_forward; /* per event: reservations per second to the control plane */
};

struct dp_shared {
	uint64_t version;		  /* 1 for the first snapshot, +1 per change */
	uint64_t snapshot_id;		  /* the last snapshot applied */
	const struct event_table *events; /* never NULL */
	const struct rules *rules;	  /* NULL: no rules */
	struct dp_limits limits;
	struct tok_keyring auth; /* verifies session tokens */
	struct tok_keyring sale; /* mints and verifies purchase tokens, receipts, paths */
};

#define SHARED_DEFER_MAX 256

struct shared_deferred {
	uint64_t token;
	void *obj;
	void (*free_fn)(void *obj);
};

/* The published pointer and the writer's queue of objects waiting for their grace period. */
struct shared_state {
	const struct dp_shared *cur; /* read with shared_get() */
	struct rte_rcu_qsbr *qsbr;
	struct shared_deferred q[SHARED_DEFER_MAX]; /* FIFO: tokens only grow */
	unsigned q_head, q_len;
	uint64_t published; /* versions published */
	uint64_t freed;	    /* objects freed after their grace period */
	uint64_t waited;    /* times the queue was full and the writer waited for the readers */
	/* When the control plane was last heard (any message, its heartbeats included), monotonic
	 * ms (now_mono_us() / 1000); 0: not yet. The bridge writes it, any thread reads it. */
	uint64_t heard_ms;
	/* Heard longer ago than this, the control plane counts as gone (/readyz); 0: never. */
	uint32_t silence_ms;
};

/* The current version, or NULL before the first snapshot. Lock-free; see the header comment. */
static inline const struct dp_shared *
shared_get(const struct shared_state *s)
{
	return __atomic_load_n(&s->cur, __ATOMIC_ACQUIRE);
}

/* Records that the control plane was heard at now_ms (monotonic). Writer only. */
static inline void
shared_heard(struct shared_state *s, uint64_t now_ms)
{
	__atomic_store_n(&s->heard_ms, now_ms, __ATOMIC_RELAXED);
}

/*
 * How long the control plane has been silent at now_ms (monotonic) when that is longer than
 * s->silence_ms, else 0 (heard recently, never heard yet, or no bound). Any thread.
 */
static inline uint64_t
shared_silent_ms(const struct shared_state *s, uint64_t now_ms)
{
	uint64_t heard = __atomic_load_n(&s->heard_ms, __ATOMIC_RELAXED);

	if (heard == 0 || s->silence_ms == 0 || now_ms <= heard + s->silence_ms)
		return 0;
	return now_ms - heard;
}

/* Prepares s with nothing published. qsbr may be NULL only when no other thread reads (tests). */
void shared_init(struct shared_state *s, struct rte_rcu_qsbr *qsbr);

/*
 * Publishes next (allocated with shared_alloc(); s takes it over) as the current version,
 * numbered one more than the previous. The previous version and every part of it that next
 * does not share (events, rules) are freed after a grace period. Writer only. Cannot fail:
 * when the queue of objects waiting for a grace period is full, it waits for the readers.
 */
void shared_publish(struct shared_state *s, struct dp_shared *next);

/*
 * A new version to fill: a copy of the current one (sharing its events and rules), or a
 * zeroed one with empty keyrings before the first. Returns NULL when out of memory.
 */
struct dp_shared *shared_alloc(const struct shared_state *s);

/* Frees a version from shared_alloc() that was never published, and nothing it shares. */
void shared_discard(struct dp_shared *d);

/* Frees what waited long enough. Writer only; shared_publish() calls it too. */
void shared_reclaim(struct shared_state *s);

/* Frees everything, the current version included. No reader may be left. */
void shared_fini(struct shared_state *s);

#endif
