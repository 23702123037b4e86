/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/shared_state.h"

#include <stdlib.h>
#include <string.h>

#include "dataplane/rules.h"

static void
free_version(void *obj)
{
	struct dp_shared *d = obj;

	/* The keyrings are secret: nothing of them stays in freed memory. */
	tok_keyring_wipe(&d->auth);
	tok_keyring_wipe(&d->sale);
	free(d);
}

static void
free_events(void *obj)
{
	free(obj);
}

static void
free_rules(void *obj)
{
	rules_free(obj);
}

void
shared_init(struct shared_state *s, struct rte_rcu_qsbr *qsbr)
{
	memset(s, 0, sizeof(*s));
	s->qsbr = qsbr;
}

void
shared_reclaim(struct shared_state *s)
{
	while (s->q_len > 0) {
		struct shared_deferred *d = &s->q[s->q_head];

		if (s->qsbr != NULL && rte_rcu_qsbr_check(s->qsbr, d->token, false) != 1)
			break;
		d->free_fn(d->obj);
		s->q_head = (s->q_head + 1) % SHARED_DEFER_MAX;
		s->q_len--;
		s->freed++;
	}
}

static void
defer(struct shared_state *s, void *obj, void (*free_fn)(void *), uint64_t token)
{
	if (obj == NULL)
		return;
	if (s->q_len == SHARED_DEFER_MAX) {
		/* Hundreds of changes within one grace period: wait for the readers (microseconds
		 * while workers run) rather than grow without bound. */
		if (s->qsbr != NULL)
			rte_rcu_qsbr_synchronize(s->qsbr, RTE_QSBR_THRID_INVALID);
		s->waited++;
		shared_reclaim(s);
	}
	struct shared_deferred *d = &s->q[(s->q_head + s->q_len) % SHARED_DEFER_MAX];

	d->token = token;
	d->obj = obj;
	d->free_fn = free_fn;
	s->q_len++;
}

struct dp_shared *
shared_alloc(const struct shared_state *s)
{
	const struct dp_shared *cur = s->cur;
	struct dp_shared *d = malloc(sizeof(*d));

	if (d == NULL)
		return NULL;
	if (cur != NULL) {
		memcpy(d, cur, sizeof(*d));
	} else {
		memset(d, 0, sizeof(*d));
		tok_keyring_init(&d->auth);
		tok_keyring_init(&d->sale);
	}
	return d;
}

void
shared_discard(struct dp_shared *d)
{
	if (d != NULL)
		free_version(d);
}

void
shared_publish(struct shared_state *s, struct dp_shared *next)
{
	struct dp_shared *old = (struct dp_shared *)(uintptr_t)s->cur;

	next->version = old != NULL ? old->version + 1 : 1;
	__atomic_store_n(&s->cur, next, __ATOMIC_RELEASE);
	s->published++;
	if (old != NULL) {
		/* Readers that saw old may still use it until they report: one token for all. */
		uint64_t token = s->qsbr != NULL ? rte_rcu_qsbr_start(s->qsbr) : 0;

		if (old->events != next->events)
			defer(s, (void *)(uintptr_t)old->events, free_events, token);
		if (old->rules != next->rules)
			defer(s, (void *)(uintptr_t)old->rules, free_rules, token);
		defer(s, old, free_version, token);
	}
	shared_reclaim(s);
}

void
shared_fini(struct shared_state *s)
{
	struct dp_shared *cur = (struct dp_shared *)(uintptr_t)s->cur;

	if (s->qsbr != NULL && s->q_len > 0)
		rte_rcu_qsbr_synchronize(s->qsbr, RTE_QSBR_THRID_INVALID);
	while (s->q_len > 0) {
		struct shared_deferred *d = &s->q[s->q_head];

		d->free_fn(d->obj);
		s->q_head = (s->q_head + 1) % SHARED_DEFER_MAX;
		s->q_len--;
	}
	if (cur != NULL) {
		free((void *)(uintptr_t)cur->events);
		rules_free((struct rules *)(uintptr_t)cur->rules);
		free_version(cur);
	}
	s->cur = NULL;
}
