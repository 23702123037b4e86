/* SPDX-License-Identifier: BSD-3-Clause */
#include "admin/admin_answer.h"

#include "common/draw.h"
#include "common/hex.h"

void
admin_json_ok(struct json_writer *j, char *buf, size_t cap)
{
	jw_init(j, buf, cap);
	jw_open(j, NULL, '{');
	jw_bool(j, "ok", true);
}

void
admin_json_event(struct json_writer *j, const char *key, const struct admin_event *ev)
{
	jw_open(j, key, '{');
	jw_u64(j, "id", ev->id);
	jw_str(j, "name", ev->name);
	jw_str(j, "state", admin_event_state_name(ev->state));
	jw_u64(j, "stock", ev->stock);
	jw_u64(j, "available", ev->available);
	jw_time(j, "starts_at", ev->starts_at_ms);
	jw_time(j, "ends_at", ev->ends_at_ms);
	jw_u64(j, "pay_window_s", ev->pay_window_s);
	jw_u64(j, "per_user_limit", ev->per_user_limit);
	admin_json_event_fair(j, ev);
	if (ev->created_at_ms != 0)
		jw_time(j, "created_at", ev->created_at_ms);
	jw_close(j, '}');
}

void
admin_json_event_fair(struct json_writer *j, const struct admin_event *ev)
{
	if (ev->has_seed) {
		uint8_t commitment[DRAW_DIGEST_LEN];
		char hex[2 * DRAW_DIGEST_LEN + 1];

		draw_commitment(ev->draw_seed, commitment);
		hex_str(commitment, DRAW_DIGEST_LEN, hex);
		jw_str(j, "seed_sha256", hex);
	}
	jw_u64(j, "draw_window_s", ev->draw_window_s);
	if (ev->draw_window_s != 0) {
		jw_time(j, "queue_opens_at", ev->queue_opens_at_ms);
		jw_time(j, "draw_at", admin_event_draw_at_ms(ev));
	}
	jw_u64(j, "pow_bits", ev->pow_bits);
	jw_u64(j, "pow_auto_max", ev->pow_auto_max);
}

void
admin_json_key(struct json_writer *j, const char *key, const struct admin_key *k)
{
	jw_open(j, key, '{');
	jw_u64(j, "kid", k->kid);
	jw_str(j, "kind", admin_key_kind_name(k->kind));
	jw_bool(j, "current", k->current);
	/* current; retiring (verifies until retires_at); retired (removed at once); an auth key
	 * that is not current is the previous one, until the next auth-set. */
	jw_str(j, "state",
		k->current	       ? "current"
		: k->retired	       ? "retired"
		: k->retire_at_ms != 0 ? "retiring"
				       : "previous");
	jw_time(j, "created_at", k->created_at_ms);
	if (k->retired_at_ms != 0)
		jw_time(j, "retired_at", k->retired_at_ms);
	if (k->retire_at_ms != 0)
		jw_time(j, "retires_at", k->retire_at_ms);
	jw_close(j, '}');
}

void
admin_json_rule(
	struct json_writer *j, const char *key, const struct admin_rule *r, uint64_t created_at_ms)
{
	char v[ADMIN_RULE_TEXT_MAX];

	if (admin_rule_value(r, v, sizeof(v)) < 0)
		v[0] = '\0';
	jw_open(j, key, '{');
	jw_str(j, "kind", admin_rule_kind_name(r->kind));
	jw_str(j, "value", v);
	if (created_at_ms != 0)
		jw_time(j, "created_at", created_at_ms);
	jw_close(j, '}');
}

static void
json_bucket(struct json_writer *j, const char *key, uint32_t rate, uint32_t burst)
{
	jw_open(j, key, '{');
	jw_u64(j, "rate", rate);
	jw_u64(j, "burst", burst);
	jw_close(j, '}');
}

void
admin_json_limits(struct json_writer *j, const char *key, const struct wire_limits *l)
{
	jw_open(j, key, '{');
	json_bucket(j, "ip", l->ip_rate, l->ip_burst);
	json_bucket(j, "user", l->user_rate, l->user_burst);
	json_bucket(j, "device", l->device_rate, l->device_burst);
	jw_u64(j, "forward_per_s", l->event_forward_per_s);
	jw_u64(j, "forward_burst", l->event_forward_burst);
	jw_close(j, '}');
}

int
admin_json_end(struct json_writer *j)
{
	jw_close(j, '}');
	return jw_end(j);
}

int
admin_answer_ok(char *buf, size_t cap)
{
	struct json_writer j;

	admin_json_ok(&j, buf, cap);
	return admin_json_end(&j);
}

int
admin_answer_error(char *buf, size_t cap, const char *msg)
{
	struct json_writer j;

	jw_init(&j, buf, cap);
	jw_open(&j, NULL, '{');
	jw_bool(&j, "ok", false);
	jw_str(&j, "error", msg);
	return admin_json_end(&j);
}
