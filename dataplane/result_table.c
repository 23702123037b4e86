/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/result_table.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "common/wire.h"
#include "dataplane/mapped_alloc.h"

/* An evicted key's slot waiting for its grace period: then it is free. */
struct rt_deferred {
	uint64_t token; /* the grace period's (rte_rcu_qsbr_start()); 0: not started yet */
	uint32_t slot;
};

struct result_table_writer {
	struct rte_rcu_qsbr *qsbr;
	uint32_t capacity; /* keys at most */
	uint32_t n_slots;  /* capacity + room for evicted slots in their grace period */
	uint32_t *free;	   /* stack of free slot indexes */
	uint32_t n_free;
	uint32_t *fifo; /* live slots, oldest first: the eviction order */
	uint32_t fifo_head, fifo_len;
	struct rt_deferred *deferred; /* FIFO: tokens only grow, so the head is the oldest */
	uint32_t n_deferred_max, def_head, def_len;
	uint32_t unsealed;     /* the newest deferred ones without a token yet */
	uint64_t token_passed; /* a token every reader has reported; 0: none yet */
};

/* Keys at most: slot indexes + 1 and the buckets' count stay far inside 32 bits. */
#define RT_CAPACITY_MAX (UINT32_C(1) << 28)

struct result_table *
result_table_create(const char *name, uint32_t capacity, int socket_id, struct rte_rcu_qsbr *qsbr)
{
	struct result_table *t = NULL;
	struct result_table_writer *w = NULL;

	if (capacity == 0 || capacity > RT_CAPACITY_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* Evictions wait a grace period (microseconds while workers run) before their slot
	 * is reused: an eighth of the capacity on top covers a burst of evictions. */
	uint32_t headroom = capacity / 8 < 64 ? 64 : capacity / 8;

	t = rte_zmalloc_socket(name, sizeof(*t), RTE_CACHE_LINE_SIZE, socket_id);
	w = calloc(1, sizeof(*w));
	if (t == NULL || w == NULL)
		goto fail;
	t->w = w;
	w->qsbr = qsbr;
	w->capacity = capacity;
	w->n_slots = capacity + headroom;
	w->n_deferred_max = headroom;
	w->free = malloc(sizeof(*w->free) * w->n_slots);
	w->fifo = malloc(sizeof(*w->fifo) * capacity);
	w->deferred = malloc(sizeof(*w->deferred) * headroom);
	t->slots = dp_zmalloc_mapped(
		"result_slots", sizeof(*t->slots) * w->n_slots, RTE_CACHE_LINE_SIZE, socket_id);
	if (w->free == NULL || w->fifo == NULL || w->deferred == NULL || t->slots == NULL)
		goto fail;
	for (uint32_t i = 0; i < w->n_slots; i++)
		w->free[i] = w->n_slots - 1 - i; /* low indexes first: nicer to read in a dump */
	w->n_free = w->n_slots;

	/* At most half the entries in use (the deferred slots' keys are out of the index already):
	 * a key is in its home bucket but for a few in a thousand. */
	uint32_t nb = 2;

	while ((uint64_t)nb * RT_WAYS < 2 * (uint64_t)capacity)
		nb <<= 1;
	t->buckets = dp_zmalloc_mapped(
		"result_buckets", sizeof(*t->buckets) * nb, RTE_CACHE_LINE_SIZE, socket_id);
	t->summary = dp_zmalloc_mapped(
		"result_summary", sizeof(*t->summary) * nb, RTE_CACHE_LINE_SIZE, socket_id);
	if (t->buckets == NULL || t->summary == NULL)
		goto fail;
	t->bucket_mask = nb - 1;
	t->seed = rte_rand();
	return t;
fail:
	if (t != NULL) {
		rte_free(t->slots);
		rte_free(t->buckets);
		rte_free(t->summary);
		rte_free(t);
	}
	if (w != NULL) {
		free(w->free);
		free(w->fifo);
		free(w->deferred);
		free(w);
	}
	if (rte_errno == 0)
		rte_errno = ENOMEM;
	return NULL;
}

void
result_table_free(struct result_table *t)
{
	if (t == NULL)
		return;
	rte_free(t->buckets);
	rte_free(t->summary);
	rte_free(t->slots);
	free(t->w->free);
	free(t->w->fifo);
	free(t->w->deferred);
	free(t->w);
	rte_free(t);
}

uint32_t
result_table_count(const struct result_table *t)
{
	return t->w->fifo_len;
}

void
result_table_seal(struct result_table *t)
{
	struct result_table_writer *w = t->w;

	if (w->unsealed == 0)
		return;
	/* Any token will do without readers; rte_rcu_qsbr_start() never returns 0. */
	uint64_t token = w->qsbr != NULL ? rte_rcu_qsbr_start(w->qsbr) : 1;

	for (uint32_t i = w->def_len - w->unsealed; i < w->def_len; i++)
		w->deferred[(w->def_head + i) % w->n_deferred_max].token = token;
	w->unsealed = 0;
}

void
result_table_reclaim(struct result_table *t)
{
	struct result_table_writer *w = t->w;

	while (w->def_len > w->unsealed) {
		struct rt_deferred *d = &w->deferred[w->def_head];

		/* A batch shares its token: the readers' reports are read once for it. */
		if (d->token != w->token_passed) {
			if (w->qsbr != NULL && rte_rcu_qsbr_check(w->qsbr, d->token, false) != 1)
				break;
			w->token_passed = d->token;
		}
		w->free[w->n_free++] = d->slot;
		w->def_head = (w->def_head + 1) % w->n_deferred_max;
		w->def_len--;
		t->ctr.reclaimed++;
	}
}

/*
 * The entry of slot in the index (hash h): its bucket and way in *b, *way. Writer only.
 * Returns false when it is not there (cannot happen for a slot in the FIFO).
 */
static bool
rt_find_slot(const struct result_table *t, uint64_t h, uint32_t slot, uint32_t *b, unsigned *way)
{
	uint32_t sig = rt_sig(h), i = (uint32_t)h & t->bucket_mask;

	for (uint32_t probe = 0; probe <= t->bucket_mask; probe++) {
		for (unsigned k = 0; k < RT_WAYS; k++)
			if (t->buckets[i].sig[k] == sig && t->buckets[i].slot[k] == slot) {
				*b = i;
				*way = k;
				return true;
			}
		if (t->buckets[i].overflow == 0)
			return false;
		i = (i + 1) & t->bucket_mask;
	}
	return false;
}

/*
 * Publishes slot for hash h in the first bucket from its home with a free way; the buckets
 * passed full count one more overflow first. Writer only. Returns false when every bucket is
 * full (cannot happen: at most half the ways are used).
 */
static bool
rt_index_add(struct result_table *t, uint64_t h, uint32_t slot)
{
	uint32_t home = (uint32_t)h & t->bucket_mask, i = home;

	for (uint32_t probe = 0; probe <= t->bucket_mask; probe++) {
		struct rt_bucket *bk = &t->buckets[i];

		for (unsigned k = 0; k < RT_WAYS; k++)
			if (bk->sig[k] == 0) {
				for (uint32_t j = home; j != i; j = (j + 1) & t->bucket_mask)
					__atomic_store_n(&t->buckets[j].overflow,
						t->buckets[j].overflow + 1, __ATOMIC_RELAXED);
				__atomic_store_n(&bk->slot[k], slot, __ATOMIC_RELAXED);
				__atomic_store_n(&t->summary[home],
					t->summary[home] | rt_summary_bits(h), __ATOMIC_RELAXED);
				/* Release: slot, index, counts and summary are seen first. */
				__atomic_store_n(&bk->sig[k], rt_sig(h), __ATOMIC_RELEASE);
				return true;
			}
		i = (i + 1) & t->bucket_mask;
	}
	return false;
}

void
result_table_prefetch_evictions(struct result_table *t, unsigned n)
{
	const struct result_table_writer *w = t->w;

	if (w->fifo_len + n <= w->capacity)
		return;
	if (n > w->fifo_len)
		n = w->fifo_len;
	for (unsigned k = 0; k < n; k++)
		rte_prefetch0(&t->slots[w->fifo[(w->fifo_head + k) % w->capacity]]);
	for (unsigned k = 0; k < n; k++) {
		const struct rt_slot *s = &t->slots[w->fifo[(w->fifo_head + k) % w->capacity]];
		uint64_t h = result_table_hash(t, s->event, s->user);

		result_table_prefetch(t, h);
		result_table_prefetch_summary(t, h); /* its bits leave with it */
	}
}

/*
 * After a key of hash h left the index: those of its bits in its home's summary that no other key
 * homed there has are cleared. Only keys whose signature shares one of those bits matter, and only
 * they have their slot read for their home. Writer only.
 */
static void
rt_summary_drop(struct result_table *t, uint64_t h)
{
	uint32_t home = (uint32_t)h & t->bucket_mask, i = home;
	rt_summary_t gone = rt_summary_bits(h), kept = 0;

	for (uint32_t probe = 0; probe <= t->bucket_mask && kept != gone; probe++) {
		const struct rt_bucket *bk = &t->buckets[i];

		for (unsigned k = 0; k < RT_WAYS; k++) {
			rt_summary_t shared =
				bk->sig[k] == 0 ? 0 : rt_summary_bits_sig(bk->sig[k]) & gone;

			if ((shared & ~kept) == 0)
				continue;
			const struct rt_slot *s = &t->slots[bk->slot[k]];

			if ((result_table_hash(t, s->event, s->user) & t->bucket_mask) == home)
				kept |= shared;
		}
		if (bk->overflow == 0)
			break;
		i = (i + 1) & t->bucket_mask;
	}
	__atomic_store_n(&t->summary[home], (rt_summary_t)(t->summary[home] & ~(gone & ~kept)),
		__ATOMIC_RELAXED);
}

/* Removes the oldest key; its slot comes back after a grace period. */
static bool
evict_oldest(struct result_table *t)
{
	struct result_table_writer *w = t->w;

	if (w->fifo_len == 0 || w->def_len == w->n_deferred_max)
		return false;
	uint32_t slot = w->fifo[w->fifo_head];
	const struct rt_slot *s = &t->slots[slot];
	uint64_t h = result_table_hash(t, s->event, s->user);
	uint32_t b;
	unsigned way;
	bool found = rt_find_slot(t, h, slot, &b, &way);

	w->fifo_head = (w->fifo_head + 1) % w->capacity;
	w->fifo_len--;
	t->ctr.evicted++;
	if (!found) /* cannot happen: every slot in the FIFO has its entry */
		return true;
	__atomic_store_n(&t->buckets[b].sig[way], 0, __ATOMIC_RELEASE);
	/* The counts the key added on its way to bucket b, after it left (readers that still
	 * see them only look one bucket further). */
	for (uint32_t j = (uint32_t)h & t->bucket_mask; j != b; j = (j + 1) & t->bucket_mask)
		__atomic_store_n(
			&t->buckets[j].overflow, t->buckets[j].overflow - 1, __ATOMIC_RELAXED);
	rt_summary_drop(t, h);

	struct rt_deferred *d = &w->deferred[(w->def_head + w->def_len) % w->n_deferred_max];

	/* The grace period starts at the next seal, after this removal as it must. */
	d->token = 0;
	d->slot = slot;
	w->def_len++;
	w->unsealed++;
	return true;
}

/* Writes a result into slot s under its sequence counter. */
static void
slot_write(struct rt_slot *s, uint32_t event, uint64_t user, const struct rt_result *r)
{
	uint32_t seq = s->seq;

	__atomic_store_n(&s->seq, seq + 1, __ATOMIC_RELAXED);
	/* The odd count must be visible before any field changes. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->event, event, __ATOMIC_RELAXED);
	__atomic_store_n(&s->user, user, __ATOMIC_RELAXED);
	__atomic_store_n(&s->reservation_id, r->reservation_id, __ATOMIC_RELAXED);
	__atomic_store_n(&s->order_id, r->order_id, __ATOMIC_RELAXED);
	__atomic_store_n(&s->pay_deadline_ms, r->pay_deadline_ms, __ATOMIC_RELAXED);
	__atomic_store_n(
		&s->verdict_rank, (uint64_t)r->verdict | (uint64_t)r->rank << 32, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
}

/* 0 for a new attempt's verdict; 1..3 for the stages of an order's life. */
static unsigned
life_rank(unsigned verdict)
{
	switch (verdict) {
	case WIRE_V_RESERVED:
		return 1;
	case WIRE_V_ORDERED:
		return 2;
	case WIRE_V_PAID:
	case WIRE_V_EXPIRED:
	case WIRE_V_CANCELLED:
		return 3;
	default:
		return 0;
	}
}

/* Whether verdict v decided the user's attempt (not retry, closed, not started, queued). */
static bool
decided(unsigned v)
{
	return v == WIRE_V_RESERVED || v == WIRE_V_DUPLICATE || v == WIRE_V_SOLD_OUT ||
	       life_rank(v) > 0;
}

/* Whether new may replace old (see result_table_put()). */
static bool
may_replace(const struct rt_slot *old, const struct rt_result *new)
{
	unsigned vo = (uint8_t)old->verdict_rank;
	unsigned ro = life_rank(vo), rn = life_rank(new->verdict);

	/* A draw's entrant: its place never hides a decision, and a decision (the draw's, or
	 * one that came first) always shows; a place once ranked is not unranked. A retry is
	 * about another attempt: the entry stands. */
	if (new->verdict == WIRE_V_QUEUED)
		return !decided(vo) &&
		       !(vo == WIRE_V_QUEUED && (old->verdict_rank >> 32) != 0 && new->rank == 0);
	if (vo == WIRE_V_QUEUED)
		return new->verdict != WIRE_V_RETRY;

	/* A reservation that never became an order (PostgreSQL had no stock left for it) is
	 * released as sold out: about the same reservation, not a new attempt. */
	if (vo == WIRE_V_RESERVED && new->verdict == WIRE_V_SOLD_OUT &&
		old->reservation_id == new->reservation_id)
		return true;
	if (ro > 0 && rn == 0)
		return false;
	if (ro > 0 && old->reservation_id == new->reservation_id && rn < ro)
		return false;
	return true;
}

/* The slot of (event, user), whose hash is h, or -1. Writer only. */
static int64_t
rt_find_key(const struct result_table *t, uint64_t h, uint32_t event, uint64_t user)
{
	uint32_t sig = rt_sig(h), i = (uint32_t)h & t->bucket_mask;

	for (uint32_t probe = 0; probe <= t->bucket_mask; probe++) {
		const struct rt_bucket *bk = &t->buckets[i];

		for (unsigned k = 0; k < RT_WAYS; k++) {
			if (bk->sig[k] == sig) {
				const struct rt_slot *s = &t->slots[bk->slot[k]];

				if (s->event == event && s->user == user)
					return bk->slot[k];
			}
		}
		if (bk->overflow == 0)
			return -1;
		i = (i + 1) & t->bucket_mask;
	}
	return -1;
}

int
result_table_put(struct result_table *t, uint32_t event, uint64_t user, const struct rt_result *r)
{
	struct result_table_writer *w = t->w;
	uint64_t h = result_table_hash(t, event, user);
	int64_t found = rt_find_key(t, h, event, user);

	if (found >= 0) {
		struct rt_slot *s = &t->slots[found];

		if (!may_replace(s, r)) {
			t->ctr.kept++;
			return RT_PUT_KEPT;
		}
		slot_write(s, event, user, r);
		t->ctr.replaced++;
		return RT_PUT_REPLACED;
	}
	if (w->n_free == 0 || w->def_len == w->n_deferred_max) {
		/* Out of slots, or of room to defer an eviction: end the batch early. */
		result_table_seal(t);
		result_table_reclaim(t);
	}
	if (w->fifo_len == w->capacity)
		evict_oldest(t);
	if (w->n_free == 0 || w->fifo_len == w->capacity) {
		t->ctr.dropped++;
		return -ENOSPC;
	}
	uint32_t slot = w->free[--w->n_free];

	slot_write(&t->slots[slot], event, user, r);
	/* The entry is published with release semantics: readers see a complete slot. */
	if (!rt_index_add(t, h, slot)) {
		w->free[w->n_free++] = slot;
		t->ctr.dropped++;
		return -ENOSPC;
	}
	w->fifo[(w->fifo_head + w->fifo_len) % w->capacity] = slot;
	w->fifo_len++;
	t->ctr.inserted++;
	return RT_PUT_NEW;
}
