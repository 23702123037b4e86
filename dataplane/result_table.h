/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_RESULT_TABLE_H
#define FG_DP_RESULT_TABLE_H
/*
 * The results the control plane published, keyed by (event, user), for polls.
 * One writer (the bridge thread), any number of lock-free readers (workers).
 *
 * An index of our own maps a key to the index of a slot in a preallocated array: buckets of
 * one cache line, RT_WAYS ways each (a 32-bit signature of the key's hash, compared for all
 * ways at once, and the slot's index), probed linearly from the key's home bucket; a bucket's
 * overflow count says how many keys went past it full, so a lookup stops at the first bucket whose
 * count is 0 (at most half the entries are used: almost always the home bucket). Unlike rte_hash's,
 * the home bucket is the user's whatever the event (result_table_user_hash()), so it can be
 * prefetched a frame before the lookup, when the request's token has been read but not its path, as
 * the users' rate-limit buckets are; a user's keys of several events share it. How readers stay
 * safe:
 * - A result that changes (reserved -> ordered -> paid) is rewritten in place
 *   under a per-slot sequence counter: the writer makes it odd, writes, makes it
 *   even; a reader retries when it saw an odd or changed count, so it never
 *   returns a torn result.
 * - A way is published by its signature (a store with release) after its slot and the slot's
 *   index are written, and a bucket's overflow count is raised before the key that passed it is
 *   published, lowered after the key is removed: a reader sees a key whole or not at all (an
 *   index it reads with a signature that changed meanwhile names a slot that holds another key,
 *   which the slot's check answers "not found").
 * - A key that leaves the table (evicted when full) gives its slot back only after an RCU grace
 *   period (rte_rcu_qsbr that the workers report to), so a reader that found the index before
 *   the eviction still reads that user's slot, never another user's. Belt and braces: the slot
 *   holds its key, and a reader that finds another key answers "not found".
 * When the table is full the oldest entry is evicted and counted; a poll for it
 * then finds nothing and the worker falls back to a result query.
 *
 * A summary in front of the index answers most lookups of absent keys (every new buyer's
 * reserve asks whether it is a known one) without reading the index: per home bucket, 16 bits,
 * two of them (hash bits 60-63 and 56-59 name them; the second moved to its neighbour when both
 * name one) set for each key homed there (wherever its probe stored it). At the default capacity
 * that is 1 MB against the index's 32 MB, within the TLB's reach where the index is not; with 2
 * keys homed per bucket at full capacity about one absent key in eighteen finds both its bits set
 * and reads the index (test_result_table; one in eight with one bit a key). The writer sets a key's bits before it publishes the key, and
 * after a key leaves clears those of its bits that no key still homed there has: a reader that
 * finds a bit clear is right that the key is not there (or not yet, or no longer).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_pause.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "common/mix64.h"

/* A user's result as a poll reads it. verdict is an enum wire_verdict. */
struct rt_result {
	uint64_t reservation_id;
	uint64_t order_id;	  /* 0 until ordered */
	uint64_t pay_deadline_ms; /* 0 until ordered */
	uint32_t rank;		  /* QUEUED: the entrant's place in the draw, 1-based; 0: not yet */
	uint8_t verdict;
};

struct rt_slot {
	uint32_t seq; /* odd while the writer changes the slot */
	uint32_t event;
	uint64_t user;
	uint64_t reservation_id;
	uint64_t order_id;
	uint64_t pay_deadline_ms;
	uint64_t verdict_rank; /* verdict | rank << 32: one word, read and written as one */
};

/* Written by the bridge thread only; readers may see a value one update old. */
struct result_table_counters {
	uint64_t inserted;  /* new (event, user) keys */
	uint64_t replaced;  /* results rewritten in place */
	uint64_t kept;	    /* not replaced: a new attempt's verdict never hides an order */
	uint64_t evicted;   /* oldest keys dropped because the table was full */
	uint64_t dropped;   /* results not stored: no slot free even after eviction */
	uint64_t reclaimed; /* evicted slots given back after a grace period */
};

struct result_table_writer;

/* Entries per bucket: with the overflow count, one cache line. */
#define RT_WAYS 7

struct rt_bucket {
	uint32_t sig[RT_WAYS];	/* the keys' signatures (rt_sig(), never 0); 0: a free way */
	uint32_t overflow;	/* keys whose probe went past this bucket full: look further */
	uint32_t slot[RT_WAYS]; /* way i's slot, written before sig[i] */
	uint32_t pad;
} __rte_cache_aligned;
_Static_assert(sizeof(struct rt_bucket) == 64, "a bucket is one cache line");

/* A home bucket's summary (see above): the bits of the keys homed there, two a key. */
typedef uint16_t rt_summary_t;

struct result_table {
	struct rt_bucket *buckets;
	rt_summary_t *summary; /* per bucket: the bits of the keys homed there */
	struct rt_slot *slots;
	uint64_t seed;		       /* random: the layout is not predictable from outside */
	uint32_t bucket_mask;	       /* buckets - 1, a power of two */
	struct result_table_writer *w; /* the writer's bookkeeping; readers never touch it */
	struct result_table_counters ctr;
};

/* What result_table_put() did. */
enum rt_put {
	RT_PUT_NEW = 0,
	RT_PUT_REPLACED = 1,
	RT_PUT_KEPT = 2,
};

/*
 * Creates a table for up to capacity (event, user) keys (1..2^24 and beyond, memory
 * permitting) on NUMA socket socket_id. qsbr is the RCU variable the readers report to;
 * NULL only when no other thread ever reads (tests). name names its memory (rte_malloc).
 * Returns NULL on failure (rte_errno set).
 */
struct result_table *result_table_create(
	const char *name, uint32_t capacity, int socket_id, struct rte_rcu_qsbr *qsbr);

/* Frees t. No reader may use it any more (call after the workers stopped). NULL is a no-op. */
void result_table_free(struct result_table *t);

/*
 * Stores r as the result of (event, user). Writer only. An existing result is replaced
 * unless that would hide an order's life: a new attempt's verdict (duplicate, sold out,
 * retry) never replaces reserved/ordered/paid/expired/cancelled, and the result of one
 * reservation never goes back (ordered -> reserved); sold out about the same reservation does
 * replace reserved (it was released before it became an order). A draw's QUEUED never replaces
 * a decision (reserved, duplicate, sold out, or an order's life) nor a ranked QUEUED with an
 * unranked one, and every verdict but retry replaces QUEUED. When the table is full the oldest
 * key is evicted. Returns an enum rt_put, or -ENOSPC when no slot could be found (counted
 * as dropped).
 */
int result_table_put(
	struct result_table *t, uint32_t event, uint64_t user, const struct rt_result *r);

/*
 * Starts one grace period for every key evicted since the last call. Writer only: after a
 * batch of puts (a RESULT message). Until then those slots wait; put() seals and reclaims
 * by itself when it runs out of free slots. One grace period per batch rather than per
 * eviction: each start changes the token that every worker reads once a loop, and a
 * changed token makes each of them write its report, a cache line the writer then reads.
 */
void result_table_seal(struct result_table *t);

/*
 * A hint for the writer before a batch of puts: prefetches what the next n puts of new keys
 * read first when the table is full, the n oldest keys' slots and then their home buckets and
 * summaries (each such put evicts the oldest key, found in its bucket, its bits cleared). Does
 * nothing while the table has room for n more keys. Writer only; changes nothing stored.
 */
void result_table_prefetch_evictions(struct result_table *t, unsigned n);

/*
 * Gives back the evicted slots whose grace period has passed (sealed ones only). Writer only;
 * put() calls it when it needs a slot.
 */
void result_table_reclaim(struct result_table *t);

/* The number of keys in the table. Writer only. */
uint32_t result_table_count(const struct result_table *t);

/*
 * The hash of a user in t: its home bucket for every event (h & bucket_mask). Pure; any
 * thread. A caller that knows the user early computes it once, prefetches the bucket
 * (result_table_prefetch()) and looks up later with result_table_lookup_h() and
 * result_table_hash_of(). Keyed by the table's random seed: no aimed collisions.
 */
static inline uint64_t
result_table_user_hash(const struct result_table *t, uint64_t user)
{
	return fg_mix64(user ^ t->seed);
}

/*
 * The hash of (event, user) from the user's (result_table_user_hash()): the same home bucket,
 * a signature (the high half) that differs for each event of one user.
 */
static inline uint64_t
result_table_hash_of(uint64_t user_hash, uint32_t event)
{
	return user_hash ^ (uint64_t)(uint32_t)(event * UINT32_C(0x9e3779b9)) << 32;
}

/* The hash of (event, user) in t. */
static inline uint64_t
result_table_hash(const struct result_table *t, uint32_t event, uint64_t user)
{
	return result_table_hash_of(result_table_user_hash(t, user), event);
}

/* Prefetches the home bucket of hash h (a user's or a key's): what a lookup of a key that is
 * there reads. */
static inline void
result_table_prefetch(const struct result_table *t, uint64_t h)
{
	rte_prefetch0(&t->buckets[h & t->bucket_mask]);
}

/* Prefetches the summary of hash h's home bucket (a user's or a key's): what any lookup reads
 * first, and all that most lookups of an absent key read. */
static inline void
result_table_prefetch_summary(const struct result_table *t, uint64_t h)
{
	rte_prefetch0(&t->summary[h & t->bucket_mask]);
}

/* The two summary bits of a key's signature sig (rt_sig()). */
static inline rt_summary_t
rt_summary_bits_sig(uint32_t sig)
{
	unsigned a = sig >> 28, b = sig >> 24 & 15;

	/* Always two: a second bit that would be the first is its neighbour. */
	return (rt_summary_t)(1u << a | 1u << (b ^ (unsigned)(a == b)));
}

/* The summary bits of a key's hash h (result_table_hash()): its signature's. */
static inline rt_summary_t
rt_summary_bits(uint64_t h)
{
	return rt_summary_bits_sig((uint32_t)(h >> 32));
}

/*
 * Whether the key of hash h may be in t: false when its home's summary says it is not (no
 * index read needed); true when it may be (a lookup reads the index). Any thread.
 */
static inline bool
result_table_may_hold(const struct result_table *t, uint64_t h)
{
	rt_summary_t want = rt_summary_bits(h);

	return (__atomic_load_n(&t->summary[h & t->bucket_mask], __ATOMIC_RELAXED) & want) == want;
}

/* An entry's signature for hash h: never 0, so a free entry never matches. */
static inline uint32_t
rt_sig(uint64_t h)
{
	return (uint32_t)(h >> 32) | 1;
}

/* The ways of bk whose signature is sig, as a bit mask (bit i: way i). */
static inline unsigned
rt_match(const struct rt_bucket *bk, uint32_t sig)
{
#ifdef __SSE2__
	/* Both halves of sig[] and overflow at once; the overflow's lane is masked off. Each lane
	 * is read whole (aligned 4-byte words). */
	__m128i want = _mm_set1_epi32((int)sig);
	__m128i lo = _mm_load_si128((const __m128i *)(const void *)&bk->sig[0]);
	__m128i hi = _mm_load_si128((const __m128i *)(const void *)&bk->sig[4]);
	unsigned m = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(lo, want))) |
		     (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(hi, want))) << 4;

	return m & ((1u << RT_WAYS) - 1);
#else
	unsigned m = 0;

	for (unsigned i = 0; i < RT_WAYS; i++)
		m |= (unsigned)(__atomic_load_n(&bk->sig[i], __ATOMIC_RELAXED) == sig) << i;
	return m;
#endif
}

/* Reads slot i into *out if it holds (event, user): 0, -ENOENT (another key), -EBUSY. */
static inline int
rt_slot_read(const struct result_table *t, uint32_t i, uint32_t event, uint64_t user,
	struct rt_result *out)
{
	const struct rt_slot *s = &t->slots[i];

	for (unsigned tries = 0; tries < 64; tries++) {
		uint32_t s1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

		if (unlikely(s1 & 1)) {
			rte_pause();
			continue;
		}
		uint32_t ev = __atomic_load_n(&s->event, __ATOMIC_RELAXED);
		uint64_t us = __atomic_load_n(&s->user, __ATOMIC_RELAXED);
		uint64_t rid = __atomic_load_n(&s->reservation_id, __ATOMIC_RELAXED);
		uint64_t oid = __atomic_load_n(&s->order_id, __ATOMIC_RELAXED);
		uint64_t dl = __atomic_load_n(&s->pay_deadline_ms, __ATOMIC_RELAXED);
		uint64_t v = __atomic_load_n(&s->verdict_rank, __ATOMIC_RELAXED);

		/* Orders the loads above before the second read of the count. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (unlikely(__atomic_load_n(&s->seq, __ATOMIC_RELAXED) != s1))
			continue;
		if (unlikely(ev != event || us != user))
			return -ENOENT;
		out->reservation_id = rid;
		out->order_id = oid;
		out->pay_deadline_ms = dl;
		out->verdict = (uint8_t)v;
		out->rank = (uint32_t)(v >> 32);
		return 0;
	}
	return -EBUSY;
}

/*
 * Reads the result of (event, user), whose hash is h (result_table_hash(t, event, user)), into
 * *out: the home's summary first (result_table_may_hold()), the index only when it may be there.
 * Lock-free, for any thread that reports to the table's qsbr. Returns 0, -ENOENT when
 * there is none, or -EBUSY in the (practically impossible) case that the writer rewrote the
 * slot on every one of 64 attempts.
 */
static inline int
result_table_lookup_h(const struct result_table *t, uint64_t h, uint32_t event, uint64_t user,
	struct rt_result *out)
{
	uint32_t b = (uint32_t)h & t->bucket_mask;
	uint32_t sig = rt_sig(h);

	if (!result_table_may_hold(t, h))
		return -ENOENT;
	for (uint32_t probe = 0; probe <= t->bucket_mask; probe++) {
		const struct rt_bucket *bk = &t->buckets[b];
		unsigned m = rt_match(bk, sig);

		/* The signatures before the indexes they publish. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		while (m != 0) {
			unsigned i = (unsigned)__builtin_ctz(m);
			int rc = rt_slot_read(t, __atomic_load_n(&bk->slot[i], __ATOMIC_RELAXED),
				event, user, out);

			if (rc != -ENOENT)
				return rc;
			m &= m - 1;
		}
		if (likely(__atomic_load_n(&bk->overflow, __ATOMIC_RELAXED) == 0))
			return -ENOENT;
		b = (b + 1) & t->bucket_mask;
	}
	return -ENOENT;
}

/* result_table_lookup_h() with the hash computed here. */
static inline int
result_table_lookup(
	const struct result_table *t, uint32_t event, uint64_t user, struct rt_result *out)
{
	return result_table_lookup_h(t, result_table_hash(t, event, user), event, user, out);
}

#endif
