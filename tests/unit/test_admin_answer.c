/* SPDX-License-Identifier: BSD-3-Clause */
/* The admin socket's answers (admin/admin_answer): the exact JSON written, and overflow. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_answer.h"
#include "tests/lib/vis.h"
#include "tests/tap.h"

/* ---------------------------------------------------------------------------------------- */
/* Answers                                                                                   */

static void
test_answers(void)
{
	char buf[1024];
	struct json_writer j;
	struct admin_event ev = {.id = 7,
		.stock = 1000,
		.available = 998,
		.starts_at_ms = 1796119200000ull,
		.ends_at_ms = 1796122800500ull,
		.pay_window_s = 900,
		.per_user_limit = 1,
		.state = ADMIN_EV_OPEN,
		.name = "Big \"sale\" \\ 耳机"};
	struct admin_key key = {.kid = 3,
		.kind = WIRE_KEY_SALE,
		.current = true,
		.len = 32,
		.secret = {0xde, 0xad},
		.created_at_ms = 1000};
	struct admin_rule rule = {.kind = ADMIN_RULE_IP, .ip = 0xc6120000, .prefix = 24};
	struct wire_limits lim = {20, 40, 2, 5, 2, 5, 20000, 0};
	int n;

	n = admin_answer_ok(buf, sizeof(buf));
	tap_ok(n == 12 && strcmp(buf, "{\"ok\":true}\n") == 0, "admin_answer_ok: %s", vis(buf));
	n = admin_answer_error(buf, sizeof(buf), "no event 8 \"x\"\n\x01");
	tap_ok(n > 0 && strcmp(buf, "{\"ok\":false,\"error\":\"no event 8 "
				    "\\\"x\\\"\\u000a\\u0001\"}\n") == 0,
		"admin_answer_error escapes quotes and control characters: %s", vis(buf));
	tap_eq_int(admin_answer_error(buf, 20, "a long message that does not fit"), -ENOSPC,
		"an answer that does not fit is -ENOSPC");

	admin_json_ok(&j, buf, sizeof(buf));
	admin_json_event(&j, "event", &ev);
	n = admin_json_end(&j);
	tap_ok(n > 0 && strcmp(buf,
				"{\"ok\":true,\"event\":{\"id\":7,\"name\":\"Big \\\"sale\\\" \\\\ "
				"耳机\",\"state\":\"open\",\"stock\":1000,\"available\":998,"
				"\"starts_at\":\"2026-12-01T10:00:00Z\",\"ends_at\":"
				"\"2026-12-01T11:00:00.500Z\",\"pay_window_s\":900,"
				"\"per_user_limit\":1,\"draw_window_s\":0,\"pow_bits\":0,"
				"\"pow_auto_max\":0}}\n") == 0,
		"an event answer, exactly: %s", vis(buf));
	tap_eq_int(n, (long long)strlen(buf), "admin_json_end returns the length with the newline");

	/* A draw: the commitment (SHA-256 of the seed 00 01 .. 1f, tests/unit/test_draw.c), the
	 * pre-queue and the draw's moment; never the seed itself, even once drawn. */
	ev.has_seed = true;
	for (unsigned i = 0; i < ADMIN_SEED_LEN; i++)
		ev.draw_seed[i] = (uint8_t)i;
	ev.draw_window_s = 30;
	ev.queue_opens_at_ms = 1796118600000ull;
	ev.pow_bits = 12;
	ev.pow_auto_max = 20;
	ev.draw_done_at_ms = 1796119300000ull;
	admin_json_ok(&j, buf, sizeof(buf));
	admin_json_event_fair(&j, &ev);
	n = admin_json_end(&j);
	tap_ok(n > 0 && strcmp(buf,
				"{\"ok\":true,\"seed_sha256\":\"630dcd2966c4336691125448bbb25b4f"
				"f412a49c732db2c8abc1b8581bd710dd\",\"draw_window_s\":30,"
				"\"queue_opens_at\":\"2026-12-01T09:50:00Z\",\"draw_at\":"
				"\"2026-12-01T10:00:30Z\",\"pow_bits\":12,\"pow_auto_max\":20}"
				"\n") == 0,
		"an event's fair start, exactly: %s", vis(buf));
	tap_ok(strstr(buf, "000102030405") == NULL, "and not the seed");

	admin_json_ok(&j, buf, sizeof(buf));
	jw_open(&j, "keys", '[');
	admin_json_key(&j, NULL, &key);
	jw_close(&j, ']');
	jw_open(&j, "rules", '[');
	admin_json_rule(&j, NULL, &rule, 0);
	admin_json_rule(&j, NULL, &rule, 2000);
	jw_close(&j, ']');
	admin_json_limits(&j, "limits", &lim);
	jw_i64(&j, "delta", -3);
	jw_bool(&j, "repaired", false);
	jw_str(&j, "message", "done");
	n = admin_json_end(&j);
	tap_ok(n > 0 && strcmp(buf,
				"{\"ok\":true,\"keys\":[{\"kid\":3,\"kind\":\"sale\",\"current\":"
				"true,\"state\":\"current\","
				"\"created_at\":\"1970-01-01T00:00:01Z\"}],\"rules\":[{\"kind\":"
				"\"ip\",\"value\":\"198.18.0.0/24\"},{\"kind\":\"ip\",\"value\":"
				"\"198.18.0.0/24\",\"created_at\":\"1970-01-01T00:00:02Z\"}],"
				"\"limits\":{\"ip\":{\"rate\":20,\"burst\":40},\"user\":{\"rate\":"
				"2,"
				"\"burst\":5},\"device\":{\"rate\":2,\"burst\":5},"
				"\"forward_per_s\":20000,\"forward_burst\":0},\"delta\":-3,\"repaired\":false,"
				"\"message\":\"done\"}\n") == 0,
		"lists, nested objects and scalars, exactly: %s", vis(buf));
	tap_ok(strstr(buf, "dead") == NULL && strstr(buf, "secret") == NULL,
		"a key answer has no secret");

	admin_json_ok(&j, buf, 40);
	admin_json_event(&j, "event", &ev);
	tap_eq_int(admin_json_end(&j), -ENOSPC, "an answer that overflows is -ENOSPC");
	tap_ok(strlen(buf) < 40, "and stayed inside its buffer");
}

/* keys list: each key's state, and when a retiring one retires. */
static void
test_key_states(void)
{
	static const struct {
		struct admin_key k;
		const char *want;
	} cases[] = {
		{{.kid = 2,
			 .kind = WIRE_KEY_SALE,
			 .created_at_ms = 1000,
			 .retired_at_ms = 2000,
			 .retire_at_ms = 302000},
			"{\"kid\":2,\"kind\":\"sale\",\"current\":false,\"state\":\"retiring\","
			"\"created_at\":\"1970-01-01T00:00:01Z\",\"retired_at\":\"1970-01-01T00:00:"
			"02Z\",\"retires_at\":\"1970-01-01T00:05:02Z\"}"},
		{{.kid = 1,
			 .kind = WIRE_KEY_SALE,
			 .created_at_ms = 1000,
			 .retired_at_ms = 2000,
			 .retire_at_ms = 3000,
			 .retired = true},
			"{\"kid\":1,\"kind\":\"sale\",\"current\":false,\"state\":\"retired\","
			"\"created_at\":\"1970-01-01T00:00:01Z\",\"retired_at\":\"1970-01-01T00:00:"
			"02Z\",\"retires_at\":\"1970-01-01T00:00:03Z\"}"},
		{{.kid = 7, .kind = WIRE_KEY_AUTH, .created_at_ms = 1000, .retired_at_ms = 2000},
			"{\"kid\":7,\"kind\":\"auth\",\"current\":false,\"state\":\"previous\","
			"\"created_at\":\"1970-01-01T00:00:01Z\",\"retired_at\":\"1970-01-01T00:00:"
			"02Z\"}"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512];
		struct json_writer j;

		jw_init(&j, buf, sizeof(buf));
		admin_json_key(&j, NULL, &cases[i].k);
		tap_ok(jw_end(&j) > 0 && strncmp(buf, cases[i].want, strlen(cases[i].want)) == 0 &&
				strcmp(buf + strlen(cases[i].want), "\n") == 0,
			"key state: %s", vis(buf));
	}
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_answers();
	test_key_states();
	return tap_done();
}
