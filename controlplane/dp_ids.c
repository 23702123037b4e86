/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/dp_ids.h"

#include <inttypes.h>
#include <stdlib.h>

#include "common/log.h"

/* A refused data plane is told at most this often. */
#define DP_IDS_TELL_MS 1000

struct dp_slot {
	bool used;
	uint32_t epoch;		  /* the holder's */
	uint64_t heard_ms;	  /* the holder's latest message */
	uint64_t inst, inst_ms;	  /* the holder's instance (0: no HELLO yet) and its latest HELLO */
	uint64_t inst2, inst2_ms; /* a second instance of the same epoch (0: none) */
	uint64_t twin_told_ms;
	uint32_t r_epoch; /* the latest data plane refused (another epoch); 0: none */
	uint64_t r_heard_ms, r_msgs, r_told_ms;
};

struct dp_ids {
	uint32_t timeout_ms;
	uint64_t refusing_until_ms; /* no refused data plane is live after this: nothing to tell */
	struct dp_ids_counters ctr;
	struct dp_slot slot[WIRE_DP_ID_MAX + 1];
};

struct dp_ids *
dp_ids_create(uint32_t timeout_ms)
{
	struct dp_ids *d = calloc(1, sizeof(*d));

	if (d != NULL)
		d->timeout_ms = timeout_ms ? timeout_ms : 1;
	return d;
}

void
dp_ids_destroy(struct dp_ids *d)
{
	free(d);
}

static bool
live(const struct dp_ids *d, uint64_t then_ms, uint64_t now_ms)
{
	/* then_ms later than now_ms (a caller's clock that went back): live, not 2^64 ms old. */
	return then_ms != 0 && (now_ms <= then_ms || now_ms - then_ms <= d->timeout_ms);
}

/* A HELLO of the holder's epoch: follows its instance, and notes a second one. */
static void
hello_of_holder(struct dp_ids *d, struct dp_slot *s, uint32_t dp_id, uint64_t x, uint64_t now_ms)
{
	if (s->inst == 0 || x == s->inst || !live(d, s->inst_ms, now_ms)) {
		if (x == s->inst2)
			s->inst2 = 0; /* the first one went quiet: the second holds alone */
		s->inst = x;
		s->inst_ms = now_ms;
		return;
	}
	if (x != s->inst2 || !live(d, s->inst2_ms, now_ms)) {
		d->ctr.conflicts++;
		LOG_ERR("data planes: two live data planes with dp_id %u started in the same "
			"second "
			"(epoch %u): their reservation ids may meet, so both are refused and told "
			"until one is gone; give each data plane its own [bridge] dp_id",
			dp_id, s->epoch);
	}
	s->inst2 = x;
	s->inst2_ms = now_ms;
}

bool
dp_ids_accept(struct dp_ids *d, uint32_t dp_id, uint32_t epoch, const struct wire_hello *hello,
	uint64_t now_ms)
{
	if (dp_id == 0 || dp_id > WIRE_DP_ID_MAX) {
		d->ctr.refused_msgs++;
		return false;
	}
	struct dp_slot *s = &d->slot[dp_id];

	if (!s->used || !live(d, s->heard_ms, now_ms)) {
		if (s->used && s->epoch != epoch) {
			d->ctr.takeovers++;
			LOG_NOTICE(
				"data planes: dp_id %u is now held by the data plane of epoch %u "
				"(the previous one, epoch %u, has been silent over %u ms)",
				dp_id, epoch, s->epoch, d->timeout_ms);
		}
		if (!s->used || s->epoch != epoch)
			*s = (struct dp_slot){.used = true, .epoch = epoch};
	}
	if (s->epoch != epoch) {
		if (s->r_epoch != epoch || !live(d, s->r_heard_ms, now_ms)) {
			d->ctr.conflicts++;
			LOG_ERR("data planes: dp_id %u is in use by a live data plane (epoch %u): "
				"a second one (epoch %u) is refused and told, and none of its "
				"reservations is decided; give each data plane its own [bridge] "
				"dp_id",
				dp_id, s->epoch, epoch);
			s->r_epoch = epoch;
			s->r_msgs = 0;
			s->r_told_ms = 0;
		}
		s->r_heard_ms = now_ms;
		s->r_msgs++;
		d->ctr.refused_msgs++;
		if (now_ms + d->timeout_ms > d->refusing_until_ms)
			d->refusing_until_ms = now_ms + d->timeout_ms;
		return false;
	}
	s->heard_ms = now_ms;
	if (hello != NULL)
		hello_of_holder(d, s, dp_id, hello->instance, now_ms);
	if (s->inst2 != 0 && !live(d, s->inst2_ms, now_ms))
		s->inst2 = 0;
	if (s->inst2 != 0) {
		d->ctr.refused_msgs++;
		if (now_ms + d->timeout_ms > d->refusing_until_ms)
			d->refusing_until_ms = now_ms + d->timeout_ms;
		return false;
	}
	return true;
}

unsigned
dp_ids_refusals_due(struct dp_ids *d, uint64_t now_ms, struct wire_dp_refused *out, unsigned cap)
{
	unsigned n = 0;

	if (now_ms > d->refusing_until_ms)
		return 0;
	for (uint32_t id = 1; id <= WIRE_DP_ID_MAX && n < cap; id++) {
		struct dp_slot *s = &d->slot[id];

		if (!s->used)
			continue;
		if (s->r_epoch != 0 && live(d, s->r_heard_ms, now_ms) &&
			now_ms - s->r_told_ms >= DP_IDS_TELL_MS) {
			out[n++] = (struct wire_dp_refused){.dp_id = id, .epoch = s->r_epoch};
			s->r_told_ms = now_ms;
		}
		if (n < cap && s->inst2 != 0 && live(d, s->inst2_ms, now_ms) &&
			now_ms - s->twin_told_ms >= DP_IDS_TELL_MS) {
			out[n++] = (struct wire_dp_refused){.dp_id = id, .epoch = s->epoch};
			s->twin_told_ms = now_ms;
		}
	}
	return n;
}

void
dp_ids_count_refused_reservations(struct dp_ids *d, unsigned n)
{
	d->ctr.refused_reservations += n;
}

void
dp_ids_counters(const struct dp_ids *d, struct dp_ids_counters *out)
{
	*out = d->ctr;
}

void
dp_ids_json(const struct dp_ids *d, struct json_writer *j, uint64_t now_ms)
{
	jw_open(j, "dp_ids", '{');
	jw_u64(j, "refused_messages", d->ctr.refused_msgs);
	jw_u64(j, "refused_reservations", d->ctr.refused_reservations);
	jw_u64(j, "conflicts", d->ctr.conflicts);
	jw_u64(j, "takeovers", d->ctr.takeovers);
	jw_open(j, "refused", '[');
	for (uint32_t id = 1; id <= WIRE_DP_ID_MAX; id++) {
		const struct dp_slot *s = &d->slot[id];
		bool other = s->used && s->r_epoch != 0 && live(d, s->r_heard_ms, now_ms);
		bool twin = s->used && s->inst2 != 0 && live(d, s->inst2_ms, now_ms);

		if (!other && !twin)
			continue;
		jw_open(j, NULL, '{');
		jw_u64(j, "dp_id", id);
		jw_u64(j, "epoch", other ? s->r_epoch : s->epoch);
		jw_u64(j, "holder_epoch", s->epoch);
		jw_bool(j, "same_second", !other);
		jw_u64(j, "age_ms", now_ms - (other ? s->r_heard_ms : s->inst2_ms));
		jw_u64(j, "messages", other ? s->r_msgs : 0);
		jw_close(j, '}');
	}
	jw_close(j, ']');
	jw_close(j, '}');
}
