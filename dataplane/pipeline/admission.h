/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_PIPELINE_ADMISSION_H
#define FG_DP_PIPELINE_ADMISSION_H
/*
 * The admission checks of the routes token, reserve and result (routes.h). Every check
 * that needs no stock is decided in the data plane, cheapest first, so that a flood costs
 * the least it can: risk rules and the per-IP bucket before any HMAC, the sale's state
 * before the tokens, then what the token claims (the claimed user's rules and bucket, the
 * device's rules and bucket, only looked at) before its HMAC; the user's and device's
 * tokens are taken after the HMAC proved who the user is, the event's forward budget last. The
 * checks (adm_check_*(), adm_peek_user(), adm_shed_claims()) return 0 to go on, or the length of
 * the refusal they wrote (answer.h).
 *
 * Private to the pipeline: only dataplane/pipeline.c includes it, directly or through
 * another header of dataplane/pipeline/ (tests and benchmarks aside).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/token.h"
#include "dataplane/events.h"
#include "dataplane/pipeline/answer.h"
#include "dataplane/ratelimit.h"
#include "dataplane/rules.h"
#include "dataplane/worker.h"

/*
 * Refuses (429) a request whose claimed user is over the limit, before any MAC
 * is checked: the bucket is only looked at, so a forged claim cannot drain
 * anyone's bucket; the token is taken once the MAC proved the user (rl_take_at() with *at,
 * the entry the peek read, or NULL).
 */
static inline uint16_t
adm_peek_user(struct worker *w, const struct req_view *q, char *out, uint16_t cap, uint64_t user,
	const struct rl_entry **at)
{
	uint32_t retry;

	*at = NULL;
	if (w->rl_user != NULL && user != 0 &&
		unlikely(!rl_peek_at(w->rl_user, user, &w->sh->limits.user, w->now_ms, &retry, at)))
		return ans_refuse(w, q, out, cap, 429, DP_REJ_LIMIT_USER,
			"too many requests for this user", retry);
	return 0;
}

/*
 * What a reserve sheds before the purchase token's HMAC, from what the request claims: the
 * claimed user blocked by a risk rule, the device (X-Device-Id, key dev: rl_key_bytes()) blocked,
 * the device's bucket empty (only looked at, as adm_peek_user(): a forged request cannot drain
 * it). A forged claim gains nothing: its request would be refused anyway, after the HMAC.
 * *dev_at: the device's entry the peek read, or NULL (for rl_take_at()).
 * Returns 0 to go on, or the length of the refusal written.
 */
static inline uint16_t
adm_shed_claims(struct worker *w, const struct req_view *q, char *out, uint16_t cap,
	uint64_t user, uint64_t dev, const struct rl_entry **dev_at)
{
	const struct http_request *r = q->r;
	uint32_t retry;

	*dev_at = NULL;
	if (unlikely(rules_block_user(w->sh->rules, user)))
		return ans_refuse(w, q, out, cap, 403, DP_REJ_BLOCKED_USER, "blocked", 0);
	if (r->device_id.len == 0)
		return 0;
	if (unlikely(rules_block_device(w->sh->rules, r->device_id.p, r->device_id.len)))
		return ans_refuse(w, q, out, cap, 403, DP_REJ_BLOCKED_DEVICE, "blocked", 0);
	if (w->rl_device != NULL &&
		unlikely(!rl_peek_at(w->rl_device, dev, &w->sh->limits.device, w->now_ms, &retry,
			dev_at)))
		return ans_refuse(w, q, out, cap, 429, DP_REJ_LIMIT_DEVICE,
			"too many requests from this device", retry);
	return 0;
}

/* Seconds from now_ms until t_ms, rounded up, at least 1. */
static inline uint64_t
adm_seconds_until(uint64_t now_ms, uint64_t t_ms)
{
	return t_ms > now_ms ? (t_ms - now_ms + 999) / 1000 : 1;
}

/*
 * Checks shared by the three routes: the client's address against the risk
 * rules and its bucket. Returns 0 to go on, or the length of the refusal written.
 */
static inline uint16_t
adm_check_ip(struct worker *w, const struct req_view *q, char *out, uint16_t cap)
{
	const struct edge_client *c = q->client;
	uint32_t retry;

	/* A trusted edge's own request (family 0) is no client's: nothing to block or limit.
	 * An IPv6 client (behind an edge) meets the IPv6 rules. */
	if (unlikely(c->family != 4)) {
		if (c->family == 0)
			return 0;
		if (w->sh != NULL && rules_block_ip6(w->sh->rules, c->ip6))
			return ans_refuse(w, q, out, cap, 403, DP_REJ_BLOCKED_IP, "blocked", 0);
	} else if (w->sh != NULL && unlikely(rules_block_ip(w->sh->rules, c->ip4))) {
		return ans_refuse(w, q, out, cap, 403, DP_REJ_BLOCKED_IP, "blocked", 0);
	}
	if (w->sh != NULL && w->rl_ip != NULL &&
		unlikely(!rl_take(w->rl_ip, req_client_key(w, c), &w->sh->limits.ip, w->now_ms,
			&retry)))
		return ans_refuse(w, q, out, cap, 429, DP_REJ_LIMIT_IP,
			"too many requests from this address", retry);
	return 0;
}

/*
 * An event this data plane does not know: 404 once the control plane's events
 * are here; before that (a data plane just started) it may well exist, so the
 * client is asked to come back (503) rather than told it does not.
 */
static inline uint16_t
adm_no_event(struct worker *w, const struct req_view *q, char *out, uint16_t cap)
{
	if (w->sh == NULL && w->bridge != NULL)
		return ans_refuse(w, q, out, cap, 503, DP_REJ_NOT_READY,
			"not ready: no state from the control plane yet", 1);
	return ans_refuse(w, q, out, cap, 404, DP_REJ_NO_EVENT, "no such event", 0);
}

/*
 * The sale's state for admission: 0 when open (or queueing or drawing, for a draw), else the
 * refusal written (404 unknown, 425 not yet, 410 sold out or closed). *slot gets the event's
 * index in the table (for its forward budget).
 */
static inline uint16_t
adm_check_event(struct worker *w, const struct req_view *q, char *out, uint16_t cap, uint32_t id,
	const struct event_entry **ev, unsigned *slot)
{
	const struct event_table *t = worker_events(w);
	const struct event_entry *e = event_lookup(t, id);

	if (e == NULL)
		return adm_no_event(w, q, out, cap);
	switch (event_state_at(e, w->now_ms)) {
	case EVENT_UPCOMING:
		return ans_refuse(w, q, out, cap, 425, DP_REJ_TOO_EARLY, "the sale has not started",
			adm_seconds_until(w->now_ms, event_opens_at(e)));
	case EVENT_SOLD_OUT:
		return ans_refuse(w, q, out, cap, 410, DP_REJ_SOLD_OUT, "sold out", 0);
	case EVENT_CLOSED:
		return ans_refuse(w, q, out, cap, 410, DP_REJ_CLOSED, "the sale is closed", 0);
	case EVENT_OPEN:
	case EVENT_QUEUEING: /* a draw's entrants: admitted as when open (docs/api.md) */
	case EVENT_DRAWING:  /* the routes decide (route_reserve(): 425 but to entrants) */
		break;
	}
	*ev = e;
	*slot = (unsigned)(e - t->e);
	return 0;
}

/*
 * The hidden reserve path segment of event id under the current sale key,
 * made once per event and shared-state version (an HMAC) and then only
 * compared. NULL when there is no current sale key.
 */
static inline const struct worker_path *
adm_path(struct worker *w, unsigned slot, uint32_t id)
{
	struct worker_path *p = &w->path_cache[slot];

	if (unlikely(p->event != id || p->version != w->sh->version)) {
		int n = tok_path_mint(&w->sh->sale, id, p->seg, sizeof(p->seg));

		p->event = id;
		p->version = w->sh->version;
		p->len = n > 0 ? (uint8_t)n : 0;
	}
	return p->len ? p : NULL;
}

/*
 * Compares n bytes without an early exit: the time says nothing about where they differ.
 * Eight bytes a step, then the rest one at a time.
 */
static inline bool
adm_equal_ct(const char *a, const char *b, size_t n)
{
	uint64_t d = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		d |= x ^ y;
	}
	for (; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/*
 * Whether seg is the reserve path of event id: the cached segment of the
 * current key; a segment of another key id (a rotation's overlap) is checked
 * with its own key, which costs an HMAC, only when that key id is not the
 * current one.
 */
static inline bool
adm_path_ok(struct worker *w, unsigned slot, uint32_t id, const char *seg, unsigned seg_len)
{
	const struct worker_path *p = adm_path(w, slot, id);

	if (likely(p != NULL)) {
		if (seg_len == p->len && adm_equal_ct(seg, p->seg, p->len))
			return true;
		/* Same key id as the current path: a wrong key, no need for an HMAC. */
		const char *dash = memchr(p->seg, '-', p->len);
		size_t kid_len = dash ? (size_t)(dash - p->seg) + 1 : 0;

		if (kid_len != 0 && seg_len > kid_len && memcmp(seg, p->seg, kid_len) == 0)
			return false;
	}
	return tok_path_verify(&w->sh->sale, seg, seg_len, id, NULL) == TOK_OK;
}

/*
 * This worker's share of the per-event forward budget (limits.event_forward split over the
 * workers, rl_params_split()), split again only when the limit changes: two divisions and a
 * call fewer per admitted reserve. Needs w->sh.
 */
static inline const struct rl_params *
adm_forward_share(struct worker *w)
{
	const struct rl_params *total = &w->sh->limits.event_forward;

	if (unlikely(total->rate != w->fwd_total.rate || total->burst != w->fwd_total.burst)) {
		w->fwd_total = *total;
		w->fwd_share = rl_params_split(total, w->n_workers, w->index);
	}
	return &w->fwd_share;
}

/* The per-event forward budget of this worker; a slot whose event changed starts full. */
static inline struct rl_bucket *
adm_budget(struct worker *w, unsigned slot, uint32_t event)
{
	struct worker_budget *wb = &w->budget[slot];

	if (unlikely(wb->event != event)) {
		wb->event = event;
		rl_bucket_init(&wb->bucket);
	}
	return &wb->bucket;
}

#endif
