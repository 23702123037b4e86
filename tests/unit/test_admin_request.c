/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin socket's request parser (admin/admin_request): every command parses into the
 * values it means, every bad input is refused with its own message, and quoting splits (and
 * admin_join() quotes) as documented.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_request.h"
#include "tests/guard.h"
#include "tests/lib/vis.h"
#include "tests/tap.h"

static char err[ADMIN_ERR_MAX];

/* Parses line from just before a guard page, so an over-read crashes. */
static int
parse(const char *line, struct admin_req *req)
{
	struct guard_buf g = {0};
	const char *p = guard_place(&g, line, strlen(line) + 1);
	int rc;

	err[0] = '\0';
	rc = admin_parse(p, req, err, sizeof(err));
	guard_free(&g);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Commands that parse                                                                       */

static void
test_good(void)
{
	struct admin_req r;

	tap_ok(parse("event create 7 --name \"Big sale\" --stock 1000 --starts-at "
		     "2026-12-01T10:00:00Z --ends-at 2026-12-01T12:00:00+01:00 --pay-window 15m",
		       &r) == 0 &&
			r.cmd == ADMIN_EVENT_CREATE && r.event.id == 7 &&
			strcmp(r.event.name, "Big sale") == 0 && r.event.stock == 1000 &&
			r.event.starts_at_ms == 1796119200000ull &&
			r.event.ends_at_ms == 1796122800000ull && r.event.pay_window_s == 900 &&
			r.event.per_user_limit == 1,
		"event create with every option: %s", err);
	tap_ok(parse("event create 4294967295 --stock=0 --name=X --per-user-limit 1 "
		     "--pay-window=1d --ends-at=2000000001 --starts-at 2000000000\r\n",
		       &r) == 0 &&
			r.event.id == 4294967295u && r.event.stock == 0 &&
			strcmp(r.event.name, "X") == 0 && r.event.pay_window_s == 86400 &&
			r.event.starts_at_ms == 2000000000000ull &&
			r.event.ends_at_ms == 2000000001000ull,
		"event create with --opt=value, options in any order, Unix seconds, CRLF: %s", err);
	tap_ok(parse("event create 1 --name N --stock 100000000 --starts-at 1 --ends-at 2 "
		     "--pay-window 10s",
		       &r) == 0 &&
			r.event.stock == 100000000 && r.event.pay_window_s == 10,
		"event create at the bounds: stock 1e8, pay window 10s: %s", err);
	tap_ok(parse("event create 7 --name S --stock 10 --starts-at 2026-12-01T10:00:00Z "
		     "--ends-at 2026-12-01T11:00:00Z --pay-window 15m --queue-opens-at "
		     "2026-12-01T09:50:00Z --draw-window 30s --pow-bits 12 --pow-auto-max 20",
		       &r) == 0 &&
			r.event.queue_opens_at_ms == 1796118600000ull &&
			r.event.draw_window_s == 30 && r.event.pow_bits == 12 &&
			r.event.pow_auto_max == 20 &&
			admin_event_draw_at_ms(&r.event) == 1796119230000ull,
		"event create with a pre-queue, a draw window and a challenge: %s", err);
	tap_ok(parse("event create 7 --name S --stock 10 --starts-at 1000 --ends-at 2000 "
		     "--pay-window 15m --draw-window 1m",
		       &r) == 0 &&
			r.event.queue_opens_at_ms == 1000000 && r.event.draw_window_s == 60,
		"a draw without --queue-opens-at takes its entrants from the start: %s", err);
	tap_ok(parse("event create 7 --name S --stock 10 --starts-at 1000 --ends-at 2000 "
		     "--pay-window 15m --draw-window 0 --pow-bits 30 --pow-auto-max 0",
		       &r) == 0 &&
			r.event.queue_opens_at_ms == 0 && r.event.draw_window_s == 0 &&
			r.event.pow_bits == 30 && admin_event_draw_at_ms(&r.event) == 0,
		"--draw-window 0 is first come; --pow-bits 30 is the hardest: %s", err);
	tap_ok(parse("event pow 7 12", &r) == 0 && r.cmd == ADMIN_EVENT_POW && r.event_id == 7 &&
			r.pow_bits == 12 && !r.pow_auto_given,
		"event pow ID BITS: %s", err);
	tap_ok(parse("event pow 7 0 --auto-max=30", &r) == 0 && r.pow_bits == 0 &&
			r.pow_auto_given && r.pow_auto_max == 30,
		"event pow ID 0 --auto-max=30: %s", err);
	tap_ok(parse("event verify-draw 9 --commitment "
		     "630DCD2966C4336691125448BBB25B4FF412A49C732DB2C8ABC1B8581BD710DD",
		       &r) == 0 &&
			r.cmd == ADMIN_EVENT_VERIFY_DRAW && r.event_id == 9 && r.has_commitment &&
			r.commitment[0] == 0x63 && r.commitment[31] == 0xdd,
		"event verify-draw ID --commitment HEX (either case): %s", err);
	tap_ok(parse("event list", &r) == 0 && r.cmd == ADMIN_EVENT_LIST && !r.list_state_given &&
			r.list_after == 0 && r.list_limit == ADMIN_LIST_LIMIT_DEFAULT,
		"event list: every state, from the first id, 100 at a time: %s", err);
	tap_ok(parse("event list --after 64 --state archived --limit 500", &r) == 0 &&
			r.list_state_given && r.list_state == ADMIN_EV_ARCHIVED &&
			r.list_after == 64 && r.list_limit == 500,
		"event list --after --state --limit, any order, at the bounds: %s", err);
	tap_ok(parse("event list --state=open --limit=5 --after=7", &r) == 0 &&
			r.list_state_given && r.list_state == ADMIN_EV_OPEN && r.list_limit == 5 &&
			r.list_after == 7,
		"event list takes --name=VALUE as every command does: %s", err);
	tap_ok(parse("event archive 9", &r) == 0 && r.cmd == ADMIN_EVENT_ARCHIVE && r.event_id == 9,
		"event archive ID: %s", err);

	static const struct {
		const char *line;
		enum admin_cmd cmd;
		uint32_t event_id;
	} ids[] = {
		{"event preheat 7", ADMIN_EVENT_PREHEAT, 7},
		{"event open 8", ADMIN_EVENT_OPEN, 8},
		{"event close 9", ADMIN_EVENT_CLOSE, 9},
		{"event show 4294967295", ADMIN_EVENT_SHOW, 4294967295u},
		{"  event\tshow\t 1  \n", ADMIN_EVENT_SHOW, 1},
		{"event list", ADMIN_EVENT_LIST, 0},
		{"stats", ADMIN_STATS, 0},
		{"keys rotate", ADMIN_KEYS_ROTATE, 0},
		{"keys list", ADMIN_KEYS_LIST, 0},
		{"rules list", ADMIN_RULES_LIST, 0},
		{"limits show", ADMIN_LIMITS_SHOW, 0},
		{"help", ADMIN_HELP, 0},
		{"reconcile 12", ADMIN_RECONCILE, 12},
		{"audit", ADMIN_AUDIT, 0},
		{"audit 4294967295", ADMIN_AUDIT, 4294967295u},
	};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		tap_ok(parse(ids[i].line, &r) == 0 && r.cmd == ids[i].cmd &&
				r.event_id == ids[i].event_id,
			"'%s' parses as %s: %s", vis(ids[i].line), admin_cmd_name(ids[i].cmd), err);

	tap_ok(parse("audit", &r) == 0 && r.list_limit == ADMIN_AUDIT_LIMIT_DEFAULT,
		"audit: the default limit: %s", err);
	tap_ok(parse("audit 7 --limit 1000", &r) == 0 && r.event_id == 7 && r.list_limit == 1000,
		"audit ID --limit at its bound: %s", err);
	tap_ok(parse("audit --limit 3", &r) == 0 && r.event_id == 0 && r.list_limit == 3,
		"audit --limit without an event: %s", err);
	tap_ok(parse("audit 7 --limit=20", &r) == 0 && r.event_id == 7 && r.list_limit == 20,
		"audit --limit=N: %s", err);
	tap_ok(parse("reconcile 12 --repair", &r) == 0 && r.cmd == ADMIN_RECONCILE && r.repair,
		"reconcile --repair: %s", err);
	tap_ok(parse("reconcile 12", &r) == 0 && !r.repair, "reconcile without --repair");
	tap_ok(parse("reconcile 12 --repair --force", &r) == 0 && r.repair && r.force,
		"reconcile --repair --force: %s", err);
	tap_ok(parse("keys auth-set 3 000102030405060708090a0b0c0d0E0F", &r) == 0 &&
			r.cmd == ADMIN_KEYS_AUTH_SET && r.kid == 3 && r.secret_len == 16 &&
			r.secret[0] == 0 && r.secret[15] == 0x0f && r.secret[14] == 0x0e,
		"keys auth-set with a 16-byte secret, hex in either case: %s", err);
	{
		char line[200];

		snprintf(line, sizeof(line), "keys auth-set 4294967295 %0128d", 0);
		tap_ok(parse(line, &r) == 0 && r.kid == 4294967295u && r.secret_len == 64,
			"keys auth-set with a 64-byte secret and the largest key id: %s", err);
	}
	tap_ok(parse("rules add ip 198.18.0.0/24", &r) == 0 && r.cmd == ADMIN_RULES_ADD &&
			r.rule.kind == ADMIN_RULE_IP && r.rule.ip == 0xc6120000 &&
			r.rule.prefix == 24,
		"rules add ip network: %s", err);
	tap_ok(parse("rules del ip 198.18.0.7", &r) == 0 && r.cmd == ADMIN_RULES_DEL &&
			r.rule.ip == 0xc6120007 && r.rule.prefix == 32,
		"rules del ip address (= /32): %s", err);
	tap_ok(parse("rules add ip 0.0.0.0/0", &r) == 0 && r.rule.prefix == 0,
		"rules add ip 0.0.0.0/0 (everything): %s", err);
	tap_ok(parse("rules add ip 2001:db8::/32", &r) == 0 && r.cmd == ADMIN_RULES_ADD &&
			r.rule.kind == ADMIN_RULE_IP6 && r.rule.prefix == 32 &&
			r.rule.ip6[0] == 0x20 && r.rule.ip6[1] == 0x01 && r.rule.ip6[2] == 0x0d &&
			r.rule.ip6[3] == 0xb8 && r.rule.ip6[15] == 0,
		"rules add ip IPv6 network: %s", err);
	tap_ok(parse("rules del ip 2001:db8::7", &r) == 0 && r.cmd == ADMIN_RULES_DEL &&
			r.rule.kind == ADMIN_RULE_IP6 && r.rule.prefix == 128 &&
			r.rule.ip6[15] == 7,
		"rules del ip IPv6 address (= /128): %s", err);
	tap_ok(parse("rules add user 9223372036854775807", &r) == 0 &&
			r.rule.kind == ADMIN_RULE_USER && r.rule.user == 9223372036854775807ull,
		"rules add user (the largest id): %s", err);
	tap_ok(parse("rules add device abc-123_X.Y", &r) == 0 && r.rule.kind == ADMIN_RULE_DEVICE &&
			strcmp(r.rule.device, "abc-123_X.Y") == 0,
		"rules add device: %s", err);
	tap_ok(parse("limits set ip 20/40 user 2/5 device 2/5 forward 20000", &r) == 0 &&
			r.cmd == ADMIN_LIMITS_SET &&
			r.limits_given == (ADMIN_LIMIT_IP | ADMIN_LIMIT_USER | ADMIN_LIMIT_DEVICE |
						  ADMIN_LIMIT_FORWARD) &&
			r.limits.ip_rate == 20 && r.limits.ip_burst == 40 &&
			r.limits.user_rate == 2 && r.limits.user_burst == 5 &&
			r.limits.device_rate == 2 && r.limits.device_burst == 5 &&
			r.limits.event_forward_per_s == 20000,
		"limits set with every limit: %s", err);
	tap_ok(parse("limits set forward 0 ip 0/4194", &r) == 0 &&
			r.limits_given == (ADMIN_LIMIT_IP | ADMIN_LIMIT_FORWARD) &&
			r.limits.ip_rate == 0 && r.limits.ip_burst == 4194 &&
			r.limits.event_forward_per_s == 0,
		"limits set with some limits, any order, at the bounds: %s", err);
	tap_ok(parse("limits set forward 20000/5000", &r) == 0 &&
			r.limits_given == ADMIN_LIMIT_FORWARD &&
			r.limits.event_forward_per_s == 20000 && r.limits.event_forward_burst == 5000,
		"limits set forward RATE/BURST (docs/limits.md's recommendation): %s", err);
	tap_ok(parse("limits set forward 10000000/10000000", &r) == 0 &&
			r.limits.event_forward_per_s == 10000000 &&
			r.limits.event_forward_burst == 10000000,
		"limits set forward at the bounds: %s", err);
	tap_ok(parse("session-token 42", &r) == 0 && r.cmd == ADMIN_SESSION_TOKEN && r.user == 42 &&
			r.ttl_s == ADMIN_TTL_DEFAULT_S,
		"session-token with the default ttl: %s", err);
	tap_ok(parse("session-token 42 --ttl 1h30m", &r) == 0 && r.ttl_s == 5400,
		"session-token --ttl 1h30m: %s", err);
	tap_ok(parse("session-token 42 --ttl=30d", &r) == 0 && r.ttl_s == 30 * 86400,
		"session-token --ttl=30d (the most): %s", err);
	tap_ok(parse("order pay 9223372036854775807", &r) == 0 && r.cmd == ADMIN_ORDER_PAY &&
			r.order_id == 9223372036854775807ull,
		"order pay: %s", err);
	tap_ok(parse("order cancel 17", &r) == 0 && r.cmd == ADMIN_ORDER_CANCEL &&
			r.order_id == 17,
		"order cancel: %s", err);
}

/* ---------------------------------------------------------------------------------------- */
/* Refused inputs                                                                            */

static void
test_bad(void)
{
	static const struct {
		const char *what, *line,
			*want; /* want: the whole message, or a prefix ending "*" */
	} t[] = {
		{"an empty request", "", "empty request: expected a command (try help)"},
		{"only blanks", " \t ", "empty request: expected a command (try help)"},
		{"an unknown command", "frobnicate 7",
			"unknown command 'frobnicate' (expected event, stats, keys, rules, limits, "
			"session-token, order, reconcile, audit or help)"},
		{"a command in capitals", "EVENT list", "unknown command 'EVENT'*"},
		{"event without a subcommand", "event",
			"event: expected a subcommand: create, preheat, open, close, show, list, "
			"archive, pow or verify-draw"},
		{"an unknown event subcommand", "event start 7",
			"event: unknown subcommand 'start' (expected create, preheat, open, close, "
			"show, list, archive, pow or verify-draw)"},
		/* event pow, event verify-draw */
		{"event pow without bits", "event pow 7",
			"event pow: missing the difficulty: event pow ID BITS (0..30 leading zero "
			"bits; 0: no challenge)"},
		{"event pow over 30 bits", "event pow 7 31",
			"event pow: BITS must be 0..30 (leading zero bits of the challenge), "
			"got 31"},
		{"event pow with a maximum below", "event pow 7 12 --auto-max 8",
			"event pow: --auto-max (8) must be at least BITS (12), or 0 for no "
			"automatic raise"},
		{"event pow with an unknown option", "event pow 7 12 --max 8",
			"event pow: unknown option '--max' (expected --auto-max)"},
		{"event pow --auto-max twice", "event pow 7 12 --auto-max 13 --auto-max 14",
			"event pow: --auto-max given twice"},
		{"a short commitment", "event verify-draw 7 --commitment abcd",
			"event verify-draw: --commitment must be the 64 hex digits of the seed's "
			"SHA-256 (the seed_sha256 published before the pre-queue opened), "
			"got abcd"},
		{"verify-draw with an argument", "event verify-draw 7 now",
			"event verify-draw: unexpected argument 'now'"},
		{"a missing event id", "event open",
			"event open: missing event id (a number 1..4294967295)"},
		{"an extra argument", "event open 7 8", "event open: unexpected argument '8'"},
		{"event list with an argument", "event list 7",
			"event list: unexpected argument '7'"},
		{"event list with a misspelled option", "event list --limt=5",
			"event list: unknown option '--limt' (expected --state, --limit or "
			"--after)"},
		{"event list with a state that is none", "event list --state done",
			"event list: --state must be draft, preheated, open, closed or archived, "
			"got done"},
		{"event list --limit 0", "event list --limit 0",
			"event list: --limit must be 1..500 events, got 0"},
		{"event list --limit past the most", "event list --limit 501",
			"event list: --limit must be 1..500 events, got 501"},
		{"event list --after without a value", "event list --after",
			"event list: --after needs a value"},
		{"event list --state twice", "event list --state open --state closed",
			"event list: --state given twice"},
		{"event archive without an id", "event archive",
			"event archive: missing event id (a number 1..4294967295)"},
		{"event id 0", "event show 0", "event show: event id must be 1..4294967295, got 0"},
		{"event id 2^32", "event close 4294967296",
			"event close: event id must be 1..4294967295, got 4294967296"},
		{"a negative event id", "event preheat -1",
			"event preheat: event id must be 1..4294967295, got -1"},
		{"a non-numeric event id", "event show seven",
			"event show: event id must be 1..4294967295, got seven"},
		{"an event id with a sign", "event show +7",
			"event show: event id must be 1..4294967295, got +7"},
		{"an event id with a suffix", "event show 7x",
			"event show: event id must be 1..4294967295, got 7x"},
		{"a huge event id", "event show 99999999999999999999999",
			"event show: event id must be 1..4294967295, got 99999999999999999999999"},
		{"stats with an argument", "stats now", "stats: unexpected argument 'now'"},
		{"help with an argument", "help me", "help: unexpected argument 'me'"},
		/* event create */
		{"a negative stock",
			"event create 7 --name S --stock -5 --starts-at 1 --ends-at 2 --pay-window "
			"15m",
			"event create: --stock must be 0..100000000, got -5"},
		{"a stock above 1e8",
			"event create 7 --name S --stock 100000001 --starts-at 1 --ends-at 2 "
			"--pay-window 15m",
			"event create: --stock must be 0..100000000, got 100000001"},
		{"a stock in scientific notation",
			"event create 7 --name S --stock 1e3 --starts-at 1 --ends-at 2 "
			"--pay-window 1m",
			"event create: --stock must be 0..100000000, got 1e3"},
		{"a bad start time",
			"event create 7 --name S --stock 1 --starts-at tomorrow --ends-at 2 "
			"--pay-window 15m",
			"event create: --starts-at is not a time: 'tomorrow' (expected RFC 3339 "
			"such "
			"as 2026-12-01T10:00:00Z or 2026-12-01T18:00:00+08:00, or Unix seconds)"},
		{"a time without a zone",
			"event create 7 --name S --stock 1 --starts-at 1 --ends-at "
			"2026-12-01T10:00:00 "
			"--pay-window 15m",
			"event create: --ends-at is not a time: '2026-12-01T10:00:00'*"},
		{"an impossible date",
			"event create 7 --name S --stock 1 --starts-at 2026-02-30T10:00:00Z "
			"--ends-at 2 "
			"--pay-window 15m",
			"event create: --starts-at is not a time: '2026-02-30T10:00:00Z'*"},
		{"an end before the start",
			"event create 7 --name S --stock 1 --starts-at 2026-12-01T10:00:00Z "
			"--ends-at "
			"2026-12-01T09:00:00Z --pay-window 15m",
			"event create: --ends-at (2026-12-01T09:00:00Z) must be after --starts-at "
			"(2026-12-01T10:00:00Z)"},
		{"an end equal to the start",
			"event create 7 --name S --stock 1 --starts-at 5 --ends-at 5 --pay-window "
			"15m",
			"event create: --ends-at (1970-01-01T00:00:05Z) must be after --starts-at "
			"(1970-01-01T00:00:05Z)"},
		{"a pay window without a unit",
			"event create 7 --name S --stock 1 --starts-at 1 --ends-at 2 --pay-window "
			"15",
			"event create: --pay-window is not a duration: '15' (expected a number "
			"with a "
			"unit: ms, s, m, h or d, such as 15m)"},
		{"a pay window below 10 s",
			"event create 7 --name S --stock 1 --starts-at 1 --ends-at 2 --pay-window "
			"9s",
			"event create: --pay-window must be 10s..1d, got 9s"},
		{"a pay window above a day",
			"event create 7 --name S --stock 1 --starts-at 1 --ends-at 2 --pay-window "
			"25h",
			"event create: --pay-window must be 10s..1d, got 25h"},
		{"a pay window in fractions of a second",
			"event create 7 --name S --stock 1 --starts-at 1 --ends-at 2 --pay-window "
			"10s500ms",
			"event create: --pay-window must be whole seconds, got 10s500ms"},
		{"a per-user limit of 2",
			"event create 7 --name S --stock 1 --starts-at 1 --ends-at 2 --pay-window "
			"1m "
			"--per-user-limit 2",
			"event create: --per-user-limit must be 1 (one item per user for now), got "
			"2"},
		{"an unknown option",
			"event create 7 --name S --stock 1 --starts-at 1 --ends-at 2 --pay-window "
			"1m "
			"--colour red",
			"event create: unknown option '--colour' (expected --name, --stock, "
			"--starts-at, --ends-at, --pay-window, --per-user-limit, --queue-opens-at, "
			"--draw-window, --pow-bits or --pow-auto-max)"},
		{"a pre-queue without a draw",
			"event create 7 --name S --stock 1 --starts-at 1000 --ends-at 2000 "
			"--pay-window 1m --queue-opens-at 900",
			"event create: --queue-opens-at needs a draw: the pre-queue's entrants are "
			"decided by the draw at the end of --draw-window (give one, such as "
			"--draw-window 30s)"},
		{"a pre-queue after the start",
			"event create 7 --name S --stock 1 --starts-at 1000 --ends-at 2000 "
			"--pay-window 1m --draw-window 30s --queue-opens-at 1001",
			"event create: --queue-opens-at (1970-01-01T00:16:41Z) must be at or "
			"before --starts-at (1970-01-01T00:16:40Z): the pre-queue opens before the "
			"sale"},
		{"a pre-queue at 0",
			"event create 7 --name S --stock 1 --starts-at 1000 --ends-at 2000 "
			"--pay-window 1m --draw-window 30s --queue-opens-at 0",
			"event create: --queue-opens-at must be after 1970-01-01T00:00:00Z, got 0"},
		{"a draw at the end of the sale",
			"event create 7 --name S --stock 1 --starts-at 1000 --ends-at 1060 "
			"--pay-window 1m --draw-window 1m",
			"event create: --draw-window 1m puts the draw at 1970-01-01T00:17:40Z, not "
			"before --ends-at (1970-01-01T00:17:40Z): the draw must happen inside the "
			"sale"},
		{"a draw window over a day",
			"event create 7 --name S --stock 1 --starts-at 1000 --ends-at 900000 "
			"--pay-window 1m --draw-window 25h",
			"event create: --draw-window must be 0..1d, got 25h"},
		{"a draw window of a fraction",
			"event create 7 --name S --stock 1 --starts-at 1000 --ends-at 2000 "
			"--pay-window 1m --draw-window 1500ms",
			"event create: --draw-window must be whole seconds, got 1500ms"},
		{"a challenge over 30 bits",
			"event create 7 --name S --stock 1 --starts-at 1000 --ends-at 2000 "
			"--pay-window 1m --pow-bits 31",
			"event create: --pow-bits must be 0..30 (leading zero bits of the "
			"challenge), got 31"},
		{"an automatic maximum over 30 bits",
			"event create 7 --name S --stock 1 --starts-at 1000 --ends-at 2000 "
			"--pay-window 1m --pow-auto-max 99",
			"event create: --pow-auto-max must be 0..30 (leading zero bits of the "
			"challenge), got 99"},
		{"an automatic maximum below the difficulty",
			"event create 7 --name S --stock 1 --starts-at 1000 --ends-at 2000 "
			"--pay-window 1m --pow-bits 12 --pow-auto-max 8",
			"event create: --pow-auto-max (8) must be at least --pow-bits (12), or 0 "
			"for no automatic raise"},
		{"an option given twice",
			"event create 7 --stock 1 --name S --stock 2 --starts-at 1 --ends-at 2 "
			"--pay-window 1m",
			"event create: --stock given twice"},
		{"an option without its value", "event create 7 --name S --stock --starts-at 1",
			"event create: --stock needs a value"},
		{"an option without its value at the end", "event create 7 --name",
			"event create: --name needs a value"},
		{"a missing option",
			"event create 7 --name S --starts-at 1 --ends-at 2 --pay-window 1m",
			"event create: missing --stock (required: --name, --stock, --starts-at, "
			"--ends-at, --pay-window)"},
		{"no options", "event create 7",
			"event create: missing --name (required: --name, --stock, --starts-at, "
			"--ends-at, --pay-window)"},
		{"an unquoted name with spaces",
			"event create 7 --name Big sale --stock 1 --starts-at 1 --ends-at 2 "
			"--pay-window 1m",
			"event create: unexpected argument 'sale' (quote a name with spaces: "
			"--name "
			"\"Big sale\")"},
		{"a stray word", "event create 7 --stock 1 extra",
			"event create: unexpected argument 'extra'"},
		{"an empty name",
			"event create 7 --name \"\" --stock 1 --starts-at 1 --ends-at 2 "
			"--pay-window 1m",
			"event create: --name is empty: give the sale's name as buyers see it"},
		{"a name of spaces only",
			"event create 7 --name \"   \" --stock 1 --starts-at 1 --ends-at 2 "
			"--pay-window 1m",
			"event create: --name is only spaces: give the sale's name as buyers see it"},
		{"a 64-byte name",
			"event create 7 --name "
			"0123456789012345678901234567890123456789012345678901234567890123 --stock "
			"1",
			"event create: --name is 64 bytes long, at most 63"},
		{"a name that is not UTF-8", "event create 7 --name \"Sale \xc3(\" --stock 1",
			"event create: --name is not valid UTF-8 (at byte 5)"},
		{"a name with an overlong encoding", "event create 7 --name \"\xc0\xaf\" --stock 1",
			"event create: --name is not valid UTF-8 (at byte 0)"},
		{"a name with a surrogate", "event create 7 --name \"\xed\xa0\x80\" --stock 1",
			"event create: --name is not valid UTF-8 (at byte 0)"},
		{"a name with a C1 control", "event create 7 --name \"a\xc2\x85\" --stock 1",
			"event create: --name has a control character at byte 1"},
		{"a name cut inside a character", "event create 7 --name \"ab\xe8\x80\" --stock 1",
			"event create: --name is not valid UTF-8 (at byte 2)"},
		{"a missing create id", "event create --name S",
			"event create: event id must be 1..4294967295, got --name"},
		/* the line itself */
		{"an unterminated double quote", "event create 7 --name \"Big sale",
			"unterminated double quote starting at column 23"},
		{"an unterminated single quote", "rules add device 'abc",
			"unterminated single quote starting at column 18"},
		{"a control character", "event show 7\x01",
			"request has a control character (byte 0x01 at column 13)"},
		{"a newline inside", "event list\nstats",
			"request has a control character (byte 0x0a at column 11)"},
		{"DEL", "stats\x7f", "request has a control character (byte 0x7f at column 6)"},
		{"too many words",
			"a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7",
			"request has more than 32 words"},
		/* keys */
		{"keys without a subcommand", "keys",
			"keys: expected a subcommand: rotate, list or auth-set"},
		{"an unknown keys subcommand", "keys delete 3",
			"keys: unknown subcommand 'delete' (expected rotate, list or auth-set)"},
		{"keys rotate with an argument", "keys rotate now",
			"keys rotate: unexpected argument 'now'"},
		{"keys auth-set without arguments", "keys auth-set",
			"keys auth-set: missing key id and secret: keys auth-set KID HEX"},
		{"keys auth-set without a secret", "keys auth-set 3",
			"keys auth-set: missing secret: 32..128 hex digits (16..64 bytes) after "
			"the key "
			"id"},
		{"a key id above 2^32-1", "keys auth-set 4294967296 00",
			"keys auth-set: key id must be 0..4294967295, got 4294967296"},
		{"a secret that is not hex", "keys auth-set 3 000102030405060708090a0b0c0d0e0g",
			"keys auth-set: the secret must be hex digits, got another character at "
			"offset 31"},
		{"a secret of 15 bytes", "keys auth-set 3 000102030405060708090a0b0c0d0e",
			"keys auth-set: the secret must be 16..64 bytes, an even number of 32..128 "
			"hex "
			"digits; got 30 digits"},
		{"a secret of an odd number of digits",
			"keys auth-set 3 000102030405060708090a0b0c0d0e0f1",
			"keys auth-set: the secret must be 16..64 bytes, an even number of 32..128 "
			"hex "
			"digits; got 33 digits"},
		{"a secret of 65 bytes", NULL, NULL},
		{"keys auth-set with an extra word",
			"keys auth-set 3 000102030405060708090a0b0c0d0e0f x",
			"keys auth-set: unexpected argument 'x'"},
		/* rules */
		{"rules without a subcommand", "rules",
			"rules: expected a subcommand: add, del or list"},
		{"an unknown rules subcommand", "rules remove ip 1.2.3.4",
			"rules: unknown subcommand 'remove' (expected add, del or list)"},
		{"rules add without a rule", "rules add",
			"rules add: missing rule: ip A.B.C.D[/LEN], user ID or device ID"},
		{"rules add ip without an address", "rules add ip",
			"rules add: missing the address or network to block after 'ip'"},
		{"rules del user without an id", "rules del user",
			"rules del: missing the user id to unblock after 'user'"},
		{"an unknown rule kind", "rules add host example.com",
			"rules add: unknown rule kind 'host' (expected ip, user or device)"},
		{"a bad address", "rules add ip 300.1.1.1",
			"rules add: ip '300.1.1.1' is not an IPv4 address or network (expected "
			"a.b.c.d "
			"or a.b.c.d/len)"},
		{"an address with leading zeros", "rules add ip 198.018.0.1",
			"rules add: ip '198.018.0.1' is not an IPv4 address or network*"},
		{"a prefix above 32", "rules add ip 198.18.0.0/33",
			"rules add: ip 198.18.0.0/33: the prefix length must be 0..32, got '33'"},
		{"an empty prefix", "rules add ip 198.18.0.0/",
			"rules add: ip 198.18.0.0/: the prefix length must be 0..32, got ''"},
		{"host bits set", "rules add ip 198.18.0.1/24",
			"rules add: ip 198.18.0.1/24 has host bits set: the network is "
			"198.18.0.0/24 "
			"(use /32 for one address)"},
		{"a bad IPv6 address", "rules add ip 2001:db8:::1",
			"rules add: ip '2001:db8:::1' is not an IPv6 address or network (expected "
			"e.g. 2001:db8::7 or 2001:db8::/32: hex groups and '::', no brackets, no "
			"zone)"},
		{"an IPv6 prefix above 128", "rules del ip 2001:db8::/129",
			"rules del: ip 2001:db8::/129: the prefix length must be 0..128, got "
			"'129'"},
		{"IPv6 host bits set", "rules add ip 2001:db8::8000:0:0:0/64",
			"rules add: ip 2001:db8::8000:0:0:0/64 has host bits set: the network is "
			"2001:db8::/64 (use /128 for one address)"},
		{"an IPv4-mapped IPv6 network", "rules add ip ::ffff:198.18.0.0/120",
			"rules add: ip ::ffff:198.18.0.0/120 is an IPv4-mapped network: block ip "
			"198.18.0.0/24 instead (a client at ::ffff:a.b.c.d is the IPv4 client "
			"a.b.c.d)"},
		{"user 0", "rules add user 0",
			"rules add: user id must be 1..9223372036854775807, got 0"},
		{"user 2^63", "rules add user 9223372036854775808",
			"rules add: user id must be 1..9223372036854775807, got "
			"9223372036854775808"},
		{"a device id with a space", "rules add device \"a b\"",
			"rules add: device id has byte 0x20 at offset 1: only visible ASCII (no "
			"spaces) "
			"can be a device id"},
		{"a device id of 64 bytes",
			"rules add device "
			"0123456789012345678901234567890123456789012345678901234567890123",
			"rules add: device id is 64 bytes long, at most 63"},
		{"an empty device id", "rules add device ''", "rules add: device id is empty"},
		{"a rule with an extra word", "rules add user 5 6",
			"rules add: unexpected argument '6'"},
		{"rules list with an argument", "rules list ip",
			"rules list: unexpected argument 'ip'"},
		/* limits */
		{"limits without a subcommand", "limits",
			"limits: expected a subcommand: set or show"},
		{"an unknown limits subcommand", "limits get",
			"limits: unknown subcommand 'get' (expected set or show)"},
		{"limits set without limits", "limits set",
			"limits set: expected one or more of: ip RATE/BURST, user RATE/BURST, "
			"device "
			"RATE/BURST, forward RATE[/BURST]"},
		{"a limit without a burst", "limits set ip 20",
			"limits set: ip: expected RATE/BURST such as 20/40, got 20"},
		{"a limit without a value", "limits set user",
			"limits set: user needs a value: RATE/BURST such as 20/40"},
		{"forward without a value", "limits set ip 1/1 forward",
			"limits set: forward needs a value: RATE[/BURST], reservations per second "
			"per event, such as 20000/5000"},
		{"a rate that is not a number", "limits set device x/5",
			"limits set: device rate must be 0..1000000 per second (0: no limit), got "
			"x"},
		{"a rate above the most", "limits set ip 1000001/5",
			"limits set: ip rate must be 0..1000000 per second (0: no limit), got "
			"1000001"},
		{"a burst above what a table holds", "limits set ip 20/4195",
			"limits set: ip burst must be 0..4194 (0: one second's worth), got 4195"},
		{"a limit with nothing after its '/'", "limits set ip 20/",
			"limits set: ip burst must be 0..4194 (0: one second's worth), got nothing "
			"after the '/'"},
		{"a limit with nothing before its '/'", "limits set ip /40",
			"limits set: ip rate must be 0..1000000 per second (0: no limit), got "
			"nothing before the '/'"},
		{"a negative burst", "limits set user 2/-5",
			"limits set: user burst must be 0..4194 (0: one second's worth), got -5"},
		{"a forward burst above the most", "limits set forward 100/10000001",
			"limits set: forward must be RATE or RATE/BURST, each 0..10000000 "
			"reservations per event (rate per second, 0: no limit; burst 0: one "
			"second's worth), got 100/10000001"},
		{"a forward budget that is not a number", "limits set forward x/10",
			"limits set: forward must be RATE or RATE/BURST, each 0..10000000 "
			"reservations per event (rate per second, 0: no limit; burst 0: one "
			"second's worth), got x/10"},
		{"a forward burst without a rate", "limits set forward 0/10",
			"limits set: forward 0/10: a burst needs a rate (rate 0 means no limit)"},
		{"a limit given twice", "limits set ip 1/1 ip 2/2", "limits set: ip given twice"},
		{"an unknown limit", "limits set session 1/1",
			"limits set: unknown limit 'session' (expected ip, user, device or "
			"forward)"},
		{"limits show with an argument", "limits show ip",
			"limits show: unexpected argument 'ip'"},
		/* session-token */
		{"session-token without a user", "session-token",
			"session-token: missing user id (1..9223372036854775807)"},
		{"session-token user 0", "session-token 0",
			"session-token: user id must be 1..9223372036854775807, got 0"},
		{"a ttl of 0", "session-token 5 --ttl 0",
			"session-token: --ttl must be 1s..30d, got 0"},
		{"a ttl above 30 days", "session-token 5 --ttl 31d",
			"session-token: --ttl must be 1s..30d, got 31d"},
		{"a ttl that is not a duration", "session-token 5 --ttl soon",
			"session-token: --ttl is not a duration: 'soon'*"},
		{"a ttl without a value", "session-token 5 --ttl",
			"session-token: --ttl needs a value: how long the token is valid, such as "
			"1h"},
		{"a ttl given twice", "session-token 5 --ttl 1h --ttl 2h",
			"session-token: --ttl given twice"},
		{"an unknown session-token option", "session-token 5 --kid 3",
			"session-token: unknown option '--kid' (expected --ttl)"},
		{"session-token with an extra word", "session-token 5 6",
			"session-token: unexpected argument '6'"},
		/* order, reconcile */
		{"order without a subcommand", "order",
			"order: expected a subcommand: pay, cancel"},
		{"an unknown order subcommand", "order refund 5",
			"order: unknown subcommand 'refund' (expected pay or cancel)"},
		{"order pay without an id", "order pay", "order pay: missing order id"},
		{"order pay 0", "order pay 0",
			"order pay: order id must be 1..9223372036854775807, got 0"},
		{"order pay with an extra word", "order pay 5 now",
			"order pay: unexpected argument 'now'"},
		{"order cancel without an id", "order cancel", "order cancel: missing order id"},
		{"reconcile without an event", "reconcile",
			"reconcile: missing event id (a number 1..4294967295)"},
		{"an unknown reconcile option", "reconcile 7 --fix",
			"reconcile: unknown option '--fix' (expected --repair or --force)"},
		{"reconcile --repair twice", "reconcile 7 --repair --repair",
			"reconcile: --repair given twice"},
		{"reconcile with an extra word", "reconcile 7 8",
			"reconcile: unexpected argument '8'"},
		{"audit of event 0", "audit 0", "audit: event id must be 1..4294967295, got 0"},
		{"audit --limit 0", "audit --limit 0", "audit: --limit must be 1..1000 commands, got 0"},
		{"audit --limit 1001", "audit 3 --limit 1001",
			"audit: --limit must be 1..1000 commands, got 1001"},
		{"audit --limit without a value", "audit --limit",
			"audit: --limit must be 1..1000 commands, got nothing"},
		{"audit with an extra word", "audit 3 4",
			"audit: unexpected argument '4' (expected --limit N)"},
		{"audit --limit twice", "audit --limit 3 --limit=4", "audit: --limit given twice"},
	};
	struct admin_req r;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char line[300];
		size_t wl;
		bool match;
		int rc;

		if (t[i].line == NULL) {
			/* A 65-byte secret: 130 hex digits. */
			snprintf(line, sizeof(line), "keys auth-set 3 %0130d", 0);
			rc = parse(line, &r);
			tap_ok(rc == -EINVAL && strstr(err, "got 130 digits") != NULL,
				"refuses %s: %s", t[i].what, err);
			continue;
		}
		memset(&r, 0xa5, sizeof(r));
		rc = parse(t[i].line, &r);
		wl = strlen(t[i].want);
		match = t[i].want[wl - 1] == '*' ? strncmp(err, t[i].want, wl - 1) == 0
						 : strcmp(err, t[i].want) == 0;
		if (!tap_ok(rc == -EINVAL && match && r.cmd == 0 && r.event.id == 0,
			    "refuses %s: %s", t[i].what, err))
			tap_diag("want: %s", t[i].want);
	}
	{
		char line[ADMIN_LINE_MAX + 8];

		memset(line, 'a', sizeof(line) - 1);
		line[ADMIN_LINE_MAX] = '\0';
		tap_ok(parse(line, &r) == -EINVAL &&
				strcmp(err, "request is longer than 4095 bytes") == 0,
			"refuses a line of 4096 bytes: %s", err);
		line[ADMIN_LINE_MAX - 1] = '\0';
		tap_ok(parse(line, &r) == -EINVAL && strncmp(err, "unknown command", 15) == 0,
			"a line of 4095 bytes is read (and refused as a command)");
	}
	/* A secret is never echoed in a message. */
	parse("keys auth-set 3 deadbeefdeadbeefdeadbeefdeadbeefzz", &r);
	tap_ok(strstr(err, "deadbeef") == NULL, "a bad secret is not quoted: %s", err);
}

/* ---------------------------------------------------------------------------------------- */
/* Quoting                                                                                   */

/* The name that event create gets from a --name written as name_src. */
static const char *
name_of(const char *name_src)
{
	static struct admin_req r;
	char line[512];

	snprintf(line, sizeof(line),
		"event create 1 --name %s --stock 1 --starts-at 1 --ends-at 2 --pay-window 1m",
		name_src);
	if (parse(line, &r) != 0)
		return err;
	return r.event.name;
}

static void
test_quoting(void)
{
	static const struct {
		const char *src, *name;
	} t[] = {
		{"\"Big sale\"", "Big sale"},
		{"'Big sale'", "Big sale"},
		{"\"Say \\\"hi\\\"\"", "Say \"hi\""},
		{"\"back\\\\slash\"", "back\\slash"},
		{"\"a\\b\"", "a\\b"},	  /* other backslashes are themselves */
		{"'a\\\"b'", "a\\\"b"},	  /* nothing escapes inside single quotes */
		{"'It'\"'\"'s'", "It's"}, /* quoted parts next to each other make one word */
		{"Big\" \"sale", "Big sale"},
		{"\"  two  spaces \"", "  two  spaces "},
		{"\"耳机 1000\"", "耳机 1000"},
		{"a\\b", "a\\b"},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *got = name_of(t[i].src);

		tap_ok(strcmp(got, t[i].name) == 0, "--name %s gives [%s]", vis(t[i].src),
			vis(got));
	}
	{
		struct admin_req r;

		tap_ok(parse("event create 1 \"--name=A B\" --stock 1 --starts-at 1 --ends-at 2 "
			     "--pay-window 1m",
			       &r) == 0 &&
				strcmp(r.event.name, "A B") == 0,
			"a quoted --name=value is one word");
		tap_ok(parse("\"event\" 'list'", &r) == 0 && r.cmd == ADMIN_EVENT_LIST,
			"quoted command words");
	}

	/* admin_join writes words that admin_parse splits back into the same words. */
	static const char *const names[] = {"plain", "two words", "\"quoted\"", "it's",
		"back\\slash", "\\\"", "semi;colon|pipe&", "'\"mixed\"'", "$HOME *", "耳机"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *argv[] = {"event", "create", "1", "--stock", "1", "--starts-at", "1",
			"--ends-at", "2", "--pay-window", "1m", "--name", (char *)names[i]};
		char line[ADMIN_LINE_MAX];
		struct admin_req r;
		int n = admin_join(13, argv, line, sizeof(line), err, sizeof(err));

		tap_ok(n > 0 && parse(line, &r) == 0 && strcmp(r.event.name, names[i]) == 0,
			"join and parse give back [%s] (line: %s)", vis(names[i]), vis(line));
	}
	{
		char *argv[] = {"event", "create", "1", "--name", ""};
		char *bad[] = {"event", "create", "1", "--name", "a\nb"};
		struct admin_req r0;
		char line[64];

		tap_ok(admin_join(5, argv, line, sizeof(line), err, sizeof(err)) > 0 &&
				strcmp(line, "event create 1 --name \"\"") == 0,
			"an empty word is joined as \"\": %s", line);
		tap_eq_int(admin_join(5, bad, line, sizeof(line), err, sizeof(err)), -EINVAL,
			"a word with a newline cannot be joined");
		tap_ok(strcmp(err, "argument 5 has a control character (byte 0x0a)") == 0, "%s",
			err);
		tap_eq_int(admin_join(5, argv, line, 24, err, sizeof(err)), -ENOSPC,
			"a line one byte too long for its buffer is -ENOSPC");
		tap_eq_int(admin_join(5, argv, line, 25, err, sizeof(err)), 24,
			"a line that fits exactly (24 bytes and the NUL) is joined");
		tap_ok(parse("event create 1 --name=--name --stock 1 --starts-at 1 --ends-at 2 "
			     "--pay-window 1m",
			       &r0) == 0 &&
				strcmp(r0.event.name, "--name") == 0,
			"a value that starts with -- is given as --opt=value");
	}
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_good();
	test_bad();
	test_quoting();
	return tap_done();
}
