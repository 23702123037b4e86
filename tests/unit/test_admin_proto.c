/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin protocol's vocabulary (admin/admin_proto): the states of an event and the
 * transitions between them, names, risk rules as parsed and written back, and the checks of an
 * event.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_proto.h"
#include "tests/tap.h"

static char err[ADMIN_ERR_MAX];

/* ---------------------------------------------------------------------------------------- */
/* Events, rules                                                                             */
static void
test_event_rules(void)
{
	static const enum admin_event_state S[] = {ADMIN_EV_DRAFT, ADMIN_EV_PREHEATED,
		ADMIN_EV_OPEN, ADMIN_EV_CLOSED, ADMIN_EV_ARCHIVED};
	/* allowed[from][to]: archive from a closed event (pg_event_archive() lets one past its
	 * ends_at through too); nothing leaves archived. */
	static const bool allowed[5][5] = {
		{false, true, false, true, false},
		{false, true, true, true, false},
		{false, false, false, true, false},
		{false, false, false, false, true},
		{false, false, false, false, false},
	};

	for (int f = 0; f < 5; f++) {
		for (int t = 0; t < 5; t++) {
			int rc = admin_event_transition(5, S[f], S[t], err, sizeof(err));

			tap_ok(allowed[f][t] ? rc == 0
					     : (rc == -EPERM && strstr(err, "event 5") != NULL),
				"%s -> %s %s%s%s", admin_event_state_name(S[f]),
				admin_event_state_name(S[t]), allowed[f][t] ? "allowed" : "refused",
				allowed[f][t] ? "" : ": ", allowed[f][t] ? "" : err);
		}
	}
	for (int i = 0; i < 5; i++) {
		enum admin_event_state st;

		tap_ok(admin_event_state_parse(admin_event_state_name(S[i]), &st) == 0 &&
				st == S[i],
			"state name %s reads back", admin_event_state_name(S[i]));
	}
	{
		enum admin_event_state st;

		tap_eq_int(
			admin_event_state_parse("paused", &st), -EINVAL, "an unknown state name");
	}

	static const struct {
		const char *kind, *value, *canon;
	} rules[] = {
		{"ip", "198.18.0.0/24", "198.18.0.0/24"},
		{"ip", "198.18.0.7/32", "198.18.0.7"},
		{"ip", "0.0.0.0/0", "0.0.0.0/0"},
		{"ip", "255.255.255.255", "255.255.255.255"},
		{"ip", "2001:db8::/32", "2001:db8::/32"},
		{"ip", "2001:DB8:0:0:0::/48", "2001:db8::/48"},
		{"ip", "2001:0db8::0007/128", "2001:db8::7"},
		{"ip", "::/0", "::/0"},
		{"ip", "FE80:0:0:0:1::/80", "fe80::1:0:0:0/80"},
		{"ip", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
			"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"user", "1", "1"},
		{"device", "~!x", "~!x"},
	};
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct admin_rule r;
		char v[ADMIN_RULE_TEXT_MAX];

		tap_ok(admin_rule_parse(rules[i].kind, rules[i].value, &r, err, sizeof(err)) == 0 &&
				admin_rule_value(&r, v, sizeof(v)) > 0 &&
				strcmp(v, rules[i].canon) == 0 &&
				strcmp(admin_rule_kind_name(r.kind), rules[i].kind) == 0,
			"rule %s %s is %s %s", rules[i].kind, rules[i].value, rules[i].kind,
			rules[i].canon);
	}
	{
		struct admin_rule r;
		char v[4];

		admin_rule_parse("ip", "198.18.0.0/24", &r, err, sizeof(err));
		tap_eq_int(admin_rule_value(&r, v, sizeof(v)), -ENOSPC,
			"a rule value that does not fit is -ENOSPC");
	}
	{
		/* The longest IPv6 value fits ADMIN_RULE_TEXT_MAX and the rules table (63 bytes).
		 */
		struct admin_rule r;
		char v[ADMIN_RULE_TEXT_MAX];
		int n;

		admin_rule_parse(
			"ip", "1111:2222:3333:4444:5555:6666:7777:8880/124", &r, err, sizeof(err));
		n = admin_rule_value(&r, v, sizeof(v));
		tap_ok(r.kind == ADMIN_RULE_IP6 && n == 43 && n <= 63,
			"the longest IPv6 rule value is %d bytes: %s", n, v);
		tap_ok(r.ip6[0] == 0x11 && r.ip6[15] == 0x80 && r.prefix == 124,
			"  its 16 bytes in network order and its prefix");
	}
	static const struct {
		const char *value, *want;
	} bad6[] = {
		{"2001:db8::/129",
			"ip 2001:db8::/129: the prefix length must be 0..128, got '129'"},
		{"2001:db8::/", "the prefix length must be 0..128, got ''"},
		{"2001:db8::1/32", "ip 2001:db8::1/32 has host bits set: the network is "
				   "2001:db8::/32 (use /128 "
				   "for one address)"},
		{"[2001:db8::1]", "ip '[2001:db8::1]' is not an IPv6 address or network"},
		{"2001:db8::1%eth0", "is not an IPv6 address or network"},
		{"2001:db8:::1", "is not an IPv6 address or network"},
		{"1:2:3:4:5:6:7:8:9", "is not an IPv6 address or network"},
		{"::ffff:198.18.0.0/112", "ip ::ffff:198.18.0.0/112 is an IPv4-mapped network: "
					  "block ip 198.18.0.0/16 "
					  "instead"},
	};
	for (size_t i = 0; i < sizeof(bad6) / sizeof(bad6[0]); i++) {
		struct admin_rule r;

		err[0] = '\0';
		tap_ok(admin_rule_parse("ip", bad6[i].value, &r, err, sizeof(err)) == -EINVAL &&
				strstr(err, bad6[i].want) != NULL && r.kind == 0 && r.prefix == 0,
			"rule ip %s is refused: %s", bad6[i].value, err);
	}
	{
		struct admin_event ev = {.id = 1,
			.stock = 1,
			.starts_at_ms = 1,
			.ends_at_ms = 2,
			.pay_window_s = 60,
			.per_user_limit = 1,
			.name = "ok"};

		tap_eq_int(admin_event_check(&ev, err, sizeof(err)), 0, "a valid event passes");
		ev.stock = ADMIN_STOCK_MAX + 1;
		tap_ok(admin_event_check(&ev, err, sizeof(err)) == -EINVAL &&
				strcmp(err, "--stock must be 0..100000000, got 100000001") == 0,
			"admin_event_check says what is wrong: %s", err);
	}
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_event_rules();
	return tap_done();
}
