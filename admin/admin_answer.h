/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_ADMIN_ADMIN_ANSWER_H
#define FG_ADMIN_ADMIN_ANSWER_H
/*
 * The admin socket's answers: one JSON object on one line, {"ok":true,...} or
 * {"ok":false,"error":"..."}, written into a caller's buffer with common/json_writer.h.
 * flashgatectl reads them back with its own reader (flashgatectl/render.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/json_writer.h"
#include "common/wire.h"
#include "admin/admin_proto.h"

/*
 * Admin answers are written with common/json_writer.h: admin_json_ok() starts one, the
 * admin_json_*() helpers below write the protocol's objects, admin_json_end() finishes it.
 */

/* Starts an answer in buf (cap bytes): writes {"ok":true and leaves the object open. */
void admin_json_ok(struct json_writer *j, char *buf, size_t cap);

/* An event as an object: id, name, state, stock, available, starts_at, ends_at, ... */
void admin_json_event(struct json_writer *j, const char *key, const struct admin_event *ev);

/*
 * The fair start's members of an event object (docs/fairness.md): seed_sha256 (the commitment
 * to the draw's seed, when the event has a seed), draw_window_s, and for a draw queue_opens_at
 * and draw_at; pow_bits and pow_auto_max. Never the seed: event show adds it to its "draw"
 * once the draw is done.
 */
void admin_json_event_fair(struct json_writer *j, const struct admin_event *ev);

/*
 * A key as an object: kid, kind, current, state (current, retiring, retired or previous),
 * created_at, retired_at and retires_at when known; never the secret.
 */
void admin_json_key(struct json_writer *j, const char *key, const struct admin_key *k);

/* A rule as an object: kind, value, and created_at when created_at_ms is not 0. */
void admin_json_rule(
	struct json_writer *j, const char *key, const struct admin_rule *r, uint64_t created_at_ms);

/* Limits as an object: ip, user, device ({"rate":R,"burst":B}), forward_per_s and
 * forward_burst. */
void admin_json_limits(struct json_writer *j, const char *key, const struct wire_limits *l);

/*
 * Closes the answer's object and adds '\n'. Returns the answer's length (with the '\n'), or
 * -ENOSPC when it did not fit: then send admin_answer_error() of a short message instead.
 */
int admin_json_end(struct json_writer *j);

/* {"ok":true}\n into buf. Returns the length, or -ENOSPC. */
int admin_answer_ok(char *buf, size_t cap);

/* {"ok":false,"error":"<msg>"}\n into buf. Returns the length, or -ENOSPC. */
int admin_answer_error(char *buf, size_t cap, const char *msg);

#endif
