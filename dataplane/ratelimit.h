/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_RATELIMIT_H
#define FG_DP_RATELIMIT_H
/*
 * Token buckets for the data plane's limits (DESIGN.md "Limits"): per source IP, per user and
 * per device id in fixed-size per-worker tables (struct rl_table), and single buckets
 * (struct rl_bucket) for budgets such as the per-event forward budget.
 *
 * Arithmetic is exact and in integers: tokens are counted in milli-tokens and time in
 * milliseconds, so a rate of R tokens per second adds exactly R milli-tokens per millisecond and
 * no fraction is ever rounded away. A request takes one token (1000 milli-tokens).
 *
 * Table layout: 2^k entries of 16 bytes (the u64 key; then 42 bits of "last refill" in ms since
 * the table's epoch + 1, and 22 bits of milli-tokens), grouped in sets of 4 that fill one cache
 * line. A key may live in either of two sets chosen by a keyed hash of the key ("two choices":
 * a new key goes to the set with more room), so that one look-up reads at most two cache lines
 * and sets fill evenly. Bursts above RL_BURST_MAX (4194) do not fit 22 bits and are cut to it;
 * rl_params_check() tells the config loader. Nothing is allocated after rl_table_create(); one
 * worker owns a table, so there are no locks.
 *
 * Replacement: a new key takes, in order, an empty slot or an idle slot (a bucket that would be
 * back to its burst by now: forgetting it changes nothing, since a key that is not in the table
 * starts with a full bucket), in the candidate set with more such room. When both sets are full
 * of hot (still refilling) entries, one of them moves to its other set if that has room (one
 * cuckoo step). Only when that fails too is the least recently refilled of the 8 replaced and
 * counted in rl_table.evictions. With random keys the first eviction comes at about 75% of the
 * entries hot (45% without the move, 5-10% with one 4-way set per key). An eviction is safe
 * enough: the evicted key merely starts again with a full bucket, so an attacker who cycles
 * through keys can at most let other keys refill early, once per eviction, and can never make
 * anyone wait longer; the keyed hash keeps him from aiming at particular keys. See
 * docs/limits.md for sizing a table so that evictions do not happen at the expected number of
 * active clients.
 *
 * Parameters are passed with every call, so a new limits version applies at once to every key.
 * A bucket holding more than a lowered burst is cut down to it on its next use.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_memory.h>
#include <rte_prefetch.h>

#include "common/mix64.h"
#include "common/siphash.h"

/* A token bucket's parameters. */
struct rl_params {
	uint32_t rate;	/* tokens per second; 0 = unlimited */
	uint32_t burst; /* bucket size in tokens; 0 = one second's worth, max(1, rate) */
};

#define RL_TOKEN_BITS 22
#define RL_TOKEN_MASK ((UINT64_C(1) << RL_TOKEN_BITS) - 1)
#define RL_STAMP_MAX  ((UINT64_C(1) << (64 - RL_TOKEN_BITS)) - 2) /* ~139 years of ms */
#define RL_MILLI      1000u					  /* milli-tokens per token */
/* The largest burst a table entry holds (RL_TOKEN_MASK / 1000); larger bursts are cut to it. */
#define RL_BURST_MAX	   4194u
#define RL_WAYS		   4
#define RL_LOG2_MIN	   3  /* two sets */
#define RL_LOG2_MAX	   28 /* 4 GiB */
#define RL_EPOCH_UNSET	   UINT64_MAX
#define RL_EPOCH_MARGIN_MS (UINT64_C(1) << 32) /* ~50 days before the first call */
#define RL_RETRY_MAX_S	   UINT32_MAX

struct rl_entry {
	uint64_t key;
	uint64_t state; /* 0 = empty; else (stamp + 1) << RL_TOKEN_BITS | milli-tokens */
};

struct rl_set {
	struct rl_entry way[RL_WAYS];
} __rte_cache_aligned;

struct rl_table {
	uint64_t set_mask;	 /* number of sets - 1 */
	uint64_t seed;		 /* keys the set choice, so that sets cannot be aimed at */
	uint64_t epoch_ms;	 /* Unix ms of stamp 0: RL_EPOCH_MARGIN_MS before the first call */
	struct sipkey bytes_key; /* for rl_key_bytes() */
	unsigned log2_entries;

	/* Counters; only the owning worker writes them. */
	uint64_t inserts;   /* keys that were not in the table (they started with a full bucket) */
	uint64_t recycled;  /* inserts that replaced an idle entry: lossless */
	uint64_t moved;	    /* hot entries moved to their other set to make room: lossless */
	uint64_t evictions; /* inserts that replaced a hot entry: it will restart full */

	struct rl_set sets[] __rte_cache_aligned;
};

/*
 * A single token bucket, e.g. one event's forward budget on one worker. Start it with
 * rl_bucket_init() (full); it is plain memory, owned by one writer.
 */
struct rl_bucket {
	uint64_t milli;	   /* milli-tokens; more than the burst means "full" */
	uint64_t stamp_ms; /* Unix ms of the last refill */
};

/*
 * Allocates an empty table of 2^log2_entries buckets (16 bytes each) on NUMA socket `socket`
 * (or SOCKET_ID_ANY), with a random hash seed. Needs EAL. Returns NULL when log2_entries is
 * outside RL_LOG2_MIN..RL_LOG2_MAX or memory is short.
 */
struct rl_table *rl_table_create(unsigned log2_entries, int socket);

/* Frees a table from rl_table_create(); NULL is a no-op. */
void rl_table_free(struct rl_table *t);

/* Empties t (every key starts again with a full bucket) and zeroes its counters. */
void rl_table_reset(struct rl_table *t);

/* Bytes used by a table of 2^log2_entries buckets. */
size_t rl_table_mem_size(unsigned log2_entries);

/*
 * Checks limits meant for a table: returns 0, or -EINVAL with a message in err when the burst
 * is above RL_BURST_MAX (a table would silently cut it). For the config loader.
 */
int rl_params_check(const struct rl_params *p, char *err, size_t errlen);

/*
 * One worker's share of a budget of `total` spread over n_workers workers: rate and burst are
 * divided with the remainders going to the lowest indexes, so that the shares add up to the
 * total exactly. A limited total never yields an unlimited share: a share that would round
 * to 0 tokens gets 1 (the sum then exceeds a total smaller than n_workers). n_workers 0
 * counts as 1.
 */
struct rl_params rl_params_split(const struct rl_params *total, unsigned n_workers, unsigned index);

/* Bucket size in milli-tokens for p in a table entry: burst rule above, at most RL_BURST_MAX. */
static inline uint64_t
rl_cap_milli(const struct rl_params *p)
{
	uint32_t b = p->burst != 0 ? p->burst : (p->rate != 0 ? p->rate : 1);

	return (uint64_t)RTE_MIN(b, RL_BURST_MAX) * RL_MILLI;
}

/* Mixes a key with the table's seed (the finaliser of MurmurHash3: every bit moves every bit). */
static inline uint64_t
rl_hash(const struct rl_table *t, uint64_t key)
{
	return fg_mix64(key ^ t->seed);
}

/* The two candidate sets of key; always different. */
static inline void
rl_sets_of(const struct rl_table *t, uint64_t key, uint64_t *s1, uint64_t *s2)
{
	uint64_t h = rl_hash(t, key);

	*s1 = h & t->set_mask;
	*s2 = (h >> 32) & t->set_mask;
	if (unlikely(*s2 == *s1))
		*s2 = *s1 ^ 1;
}

/* A 64-bit key for a byte string such as a device id, keyed per table: no aimed collisions. */
static inline uint64_t
rl_key_bytes(const struct rl_table *t, const void *p, size_t len)
{
	return siphash24(&t->bytes_key, p, len);
}

/* Prefetches the cache lines rl_take() will read for key, e.g. for every packet of a burst. */
static inline void
rl_prefetch(const struct rl_table *t, uint64_t key)
{
	uint64_t s1, s2;

	rl_sets_of(t, key, &s1, &s2);
	rte_prefetch0(&t->sets[s1]);
	rte_prefetch0(&t->sets[s2]);
}

/*
 * Empties t and makes now_ms its epoch: for a clock more than RL_STAMP_MAX ms (139 years) past
 * the epoch, which a stamp cannot hold. Every key starts again with a full bucket.
 */
void rl_table_rebase_slow(struct rl_table *t, uint64_t now_ms);

/*
 * now_ms as a stamp: ms since the table's epoch (RL_EPOCH_MARGIN_MS before the first call); a
 * time before the epoch counts as the epoch.
 */
static inline uint64_t
rl_stamp_now(struct rl_table *t, uint64_t now_ms)
{
	if (unlikely(now_ms < t->epoch_ms)) {
		if (t->epoch_ms != RL_EPOCH_UNSET)
			return 0;
		/* The first call: leave room for a clock that later steps back a little. */
		t->epoch_ms = now_ms > RL_EPOCH_MARGIN_MS ? now_ms - RL_EPOCH_MARGIN_MS : 0;
	}
	if (unlikely(now_ms - t->epoch_ms > RL_STAMP_MAX)) {
		rl_table_rebase_slow(t, now_ms);
		return 0;
	}
	return now_ms - t->epoch_ms;
}

/*
 * Milli-tokens after refilling `tok` from stamp `then` to `now` at `rate` up to `cap`. Never
 * overflows: an idle time of cap ms or more fills any bucket (rate >= 1 milli-token per ms),
 * and below that dt * rate < 2^22 * 2^32.
 */
static inline uint64_t
rl_refill(uint64_t tok, uint64_t then, uint64_t now, uint32_t rate, uint64_t cap)
{
	if (tok >= cap)
		return cap;
	if (now <= then) /* same ms, or the clock went back: no refill */
		return tok;
	uint64_t dt = now - then;
	uint64_t need = cap - tok;

	if (dt >= need)
		return cap;
	return RTE_MIN(cap, tok + dt * rate);
}

/* Seconds until `tok` milli-tokens grow to one token at `rate`, rounded up, at least 1. */
static inline uint32_t
rl_retry_s(uint64_t tok, uint64_t wait_ms, uint32_t rate)
{
	uint64_t ms = wait_ms + (RL_MILLI - tok + rate - 1) / rate;
	uint64_t s = (ms + 999) / 1000;

	return s == 0 ? 1 : (uint32_t)RTE_MIN(s, (uint64_t)RL_RETRY_MAX_S);
}

/* Whether the entry `state` would hold a full bucket at stamp `now`. */
static inline bool
rl_state_idle(uint64_t state, uint64_t now, uint32_t rate, uint64_t cap)
{
	uint64_t then = (state >> RL_TOKEN_BITS) - 1;

	return rl_refill(state & RL_TOKEN_MASK, then, now, rate, cap) == cap;
}

/* Refills the entry e and tries to take one token from it; see rl_take(). */
static inline bool
rl_entry_take(
	struct rl_entry *e, uint64_t now, uint32_t rate, uint64_t cap, uint32_t *retry_after_s)
{
	uint64_t then = (e->state >> RL_TOKEN_BITS) - 1;
	uint64_t tok = rl_refill(e->state & RL_TOKEN_MASK, then, now, rate, cap);

	/* The stamp never moves back, so time that went backwards is not refilled twice. */
	if (now > then)
		then = now;
	if (likely(tok >= RL_MILLI)) {
		e->state = (then + 1) << RL_TOKEN_BITS | (tok - RL_MILLI);
		return true;
	}
	e->state = (then + 1) << RL_TOKEN_BITS | tok;
	if (retry_after_s != NULL)
		*retry_after_s = rl_retry_s(tok, then - now, rate);
	return false;
}

/*
 * The best free slot of set s at stamp now, or NULL: an empty slot, else the idle entry (full
 * bucket) refilled longest ago. *n_room is the number of empty and idle slots.
 */
static inline struct rl_entry *
rl_set_room(struct rl_set *s, uint64_t now, uint32_t rate, uint64_t cap, unsigned *n_room)
{
	struct rl_entry *best = NULL;
	unsigned n = 0;

	for (unsigned i = 0; i < RL_WAYS; i++) {
		struct rl_entry *e = &s->way[i];

		if (e->state == 0) {
			n++;
			/* An empty slot beats an idle one: the idle key may come back. */
			if (best == NULL || best->state != 0)
				best = e;
		} else if (rl_state_idle(e->state, now, rate, cap)) {
			n++;
			if (best == NULL || (best->state != 0 && e->state < best->state))
				best = e;
		}
	}
	*n_room = n;
	return best;
}

/*
 * Both candidate sets s1, s2 are full of hot entries: moves one of them to its other set if
 * that has room, else picks the least recently refilled of the 8 for eviction (counted).
 * Returns the slot to use. Rare at the table sizes of docs/limits.md, hence out of line.
 */
struct rl_entry *rl_make_room_slow(
	struct rl_table *t, uint64_t s1, uint64_t s2, uint64_t now, uint32_t rate, uint64_t cap);

/*
 * The miss path of rl_take(): key is in neither candidate set. Places it with a full bucket
 * less one token (the replacement order is in the comment at the top) and returns true.
 */
static inline bool
rl_insert(struct rl_table *t, uint64_t key, uint64_t s1, uint64_t s2, uint64_t now, uint32_t rate,
	uint64_t cap)
{
	unsigned n1, n2;
	struct rl_entry *r1 = rl_set_room(&t->sets[s1], now, rate, cap, &n1);
	struct rl_entry *r2 = rl_set_room(&t->sets[s2], now, rate, cap, &n2);
	struct rl_entry *e;

	t->inserts++;
	/* The set with more room: "two choices" keeps the sets evenly filled. */
	if (likely(n1 + n2 != 0)) {
		e = n2 > n1 ? r2 : r1;
		if (e->state != 0)
			t->recycled++;
	} else {
		e = rl_make_room_slow(t, s1, s2, now, rate, cap);
	}
	e->key = key;
	e->state = (now + 1) << RL_TOKEN_BITS | (cap - RL_MILLI);
	return true;
}

/*
 * Takes one token from key's bucket in t under p at Unix time now_ms. Returns true if a token
 * was taken (the request may go on). Returns false when the bucket holds less than one token;
 * then, unless retry_after_s is NULL, *retry_after_s is the number of seconds after which one
 * token will be there, rounded up, at least 1 (for a Retry-After header). A key that is not
 * in the table starts with a full bucket; p->rate == 0 means unlimited (always true, t is not
 * touched). A clock that goes backwards refills nothing until it passes its latest value again.
 */
static inline bool
rl_take(struct rl_table *t, uint64_t key, const struct rl_params *p, uint64_t now_ms,
	uint32_t *retry_after_s)
{
	uint64_t s1, s2;

	if (unlikely(p->rate == 0))
		return true;

	uint64_t cap = rl_cap_milli(p);
	uint64_t now = rl_stamp_now(t, now_ms);
	struct rl_set *a, *b;

	rl_sets_of(t, key, &s1, &s2);
	a = &t->sets[s1];
	for (unsigned i = 0; i < RL_WAYS; i++)
		if (a->way[i].key == key && a->way[i].state != 0)
			return rl_entry_take(&a->way[i], now, p->rate, cap, retry_after_s);
	b = &t->sets[s2];
	for (unsigned i = 0; i < RL_WAYS; i++)
		if (b->way[i].key == key && b->way[i].state != 0)
			return rl_entry_take(&b->way[i], now, p->rate, cap, retry_after_s);
	return rl_insert(t, key, s1, s2, now, p->rate, cap);
}

/*
 * Whether key's bucket in t holds a token under p at now_ms, without taking it or changing t
 * (a key not in the table has a full bucket); on false, *retry_after_s as rl_take() gives it.
 * For refusing early on a claim that is verified only later (the user id in a token, before
 * its MAC is checked): a forged claim must not drain the claimed key's bucket, so the token
 * is taken with rl_take() (or rl_take_at() with *at) once the claim is proven. *at, unless at
 * is NULL, is set to key's entry when the peek read one, else NULL.
 */
static inline bool
rl_peek_at(const struct rl_table *t, uint64_t key, const struct rl_params *p, uint64_t now_ms,
	uint32_t *retry_after_s, const struct rl_entry **at)
{
	uint64_t s1, s2;

	if (at != NULL)
		*at = NULL;
	if (p->rate == 0 || t->epoch_ms == RL_EPOCH_UNSET || now_ms < t->epoch_ms ||
		now_ms - t->epoch_ms > RL_STAMP_MAX)
		return true;

	uint64_t cap = rl_cap_milli(p);
	uint64_t now = now_ms - t->epoch_ms;
	const struct rl_set *sets[2];

	rl_sets_of(t, key, &s1, &s2);
	sets[0] = &t->sets[s1];
	sets[1] = &t->sets[s2];
	for (unsigned k = 0; k < 2; k++) {
		for (unsigned i = 0; i < RL_WAYS; i++) {
			const struct rl_entry *e = &sets[k]->way[i];

			if (e->key != key || e->state == 0)
				continue;
			if (at != NULL)
				*at = e;
			uint64_t then = (e->state >> RL_TOKEN_BITS) - 1;
			uint64_t tok = rl_refill(e->state & RL_TOKEN_MASK, then, now, p->rate, cap);

			if (tok >= RL_MILLI)
				return true;
			if (retry_after_s != NULL)
				*retry_after_s = rl_retry_s(tok, then > now ? then - now : 0, p->rate);
			return false;
		}
	}
	return true;
}

/* rl_peek_at() without the entry. */
static inline bool
rl_peek(const struct rl_table *t, uint64_t key, const struct rl_params *p, uint64_t now_ms,
	uint32_t *retry_after_s)
{
	return rl_peek_at(t, key, p, now_ms, retry_after_s, NULL);
}

/*
 * rl_take() of key in t, given the entry at that rl_peek_at() of t found for some key (NULL:
 * none): when at still holds key, the token is taken there without looking key up again;
 * otherwise (another key was peeked, the table was emptied since, nothing was found)
 * rl_take() looks it up. The same result as rl_take() in every case: a key is in one entry
 * at most.
 */
static inline bool
rl_take_at(struct rl_table *t, uint64_t key, const struct rl_entry *at, const struct rl_params *p,
	uint64_t now_ms, uint32_t *retry_after_s)
{
	if (unlikely(p->rate == 0))
		return true;
	if (likely(at != NULL) && at->key == key) {
		uint64_t now = rl_stamp_now(t, now_ms); /* may empty t: at is tested after */
		struct rl_entry *e = (struct rl_entry *)(uintptr_t)at; /* an entry of t */

		if (likely(e->key == key && e->state != 0))
			return rl_entry_take(e, now, p->rate, rl_cap_milli(p), retry_after_s);
	}
	return rl_take(t, key, p, now_ms, retry_after_s);
}

/* Makes b a full bucket (whatever its parameters turn out to be). Cannot fail. */
static inline void
rl_bucket_init(struct rl_bucket *b)
{
	b->milli = UINT64_MAX;
	b->stamp_ms = 0;
}

/*
 * rl_take() for a single bucket: takes one token from b under p at Unix time now_ms. Same
 * results and retry_after_s; the burst is not limited to RL_BURST_MAX (0 still means
 * max(1, rate)). Exact for any u32 rate and burst and any idle time.
 */
static inline bool
rl_bucket_take(
	struct rl_bucket *b, const struct rl_params *p, uint64_t now_ms, uint32_t *retry_after_s)
{
	if (unlikely(p->rate == 0))
		return true;

	uint32_t burst = p->burst != 0 ? p->burst : p->rate;
	uint64_t cap = (uint64_t)burst * RL_MILLI;
	uint64_t tok = RTE_MIN(b->milli, cap);

	if (now_ms > b->stamp_ms) {
		uint64_t dt = now_ms - b->stamp_ms;

		/* Here dt < cap - tok < 2^42 and rate < 2^32: the product needs 128 bits. */
		if (tok < cap)
			tok = dt >= cap - tok ? cap
					      : (uint64_t)RTE_MIN((unsigned __int128)cap,
							tok + (unsigned __int128)dt * p->rate);
		b->stamp_ms = now_ms;
	}
	if (likely(tok >= RL_MILLI)) {
		b->milli = tok - RL_MILLI;
		return true;
	}
	b->milli = tok;
	if (retry_after_s != NULL)
		*retry_after_s = rl_retry_s(tok, b->stamp_ms - now_ms, p->rate);
	return false;
}

#endif
