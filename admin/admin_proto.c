/* SPDX-License-Identifier: BSD-3-Clause */
#include "admin/admin_proto.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/parse.h"

/* ---------------------------------------------------------------------------------------- */
/* Names                                                                                     */

static const char *const cmd_names[] = {
	[ADMIN_HELP] = "help",
	[ADMIN_EVENT_CREATE] = "event create",
	[ADMIN_EVENT_PREHEAT] = "event preheat",
	[ADMIN_EVENT_OPEN] = "event open",
	[ADMIN_EVENT_CLOSE] = "event close",
	[ADMIN_EVENT_SHOW] = "event show",
	[ADMIN_EVENT_LIST] = "event list",
	[ADMIN_STATS] = "stats",
	[ADMIN_KEYS_ROTATE] = "keys rotate",
	[ADMIN_KEYS_LIST] = "keys list",
	[ADMIN_KEYS_AUTH_SET] = "keys auth-set",
	[ADMIN_RULES_ADD] = "rules add",
	[ADMIN_RULES_DEL] = "rules del",
	[ADMIN_RULES_LIST] = "rules list",
	[ADMIN_LIMITS_SET] = "limits set",
	[ADMIN_LIMITS_SHOW] = "limits show",
	[ADMIN_SESSION_TOKEN] = "session-token",
	[ADMIN_ORDER_PAY] = "order pay",
	[ADMIN_ORDER_CANCEL] = "order cancel",
	[ADMIN_RECONCILE] = "reconcile",
	[ADMIN_EVENT_ARCHIVE] = "event archive",
	[ADMIN_EVENT_POW] = "event pow",
	[ADMIN_EVENT_VERIFY_DRAW] = "event verify-draw",
	[ADMIN_AUDIT] = "audit",
};

const char *
admin_cmd_name(enum admin_cmd cmd)
{
	if ((unsigned)cmd >= sizeof(cmd_names) / sizeof(cmd_names[0]) || cmd_names[cmd] == NULL)
		return "?";
	return cmd_names[cmd];
}

static const char *const state_names[ADMIN_EV_STATES] = {
	"draft", "preheated", "open", "closed", "archived"};

const char *
admin_event_state_name(enum admin_event_state st)
{
	return (unsigned)st < ADMIN_EV_STATES ? state_names[st] : "?";
}

int
admin_event_state_parse(const char *s, enum admin_event_state *out)
{
	for (unsigned i = 0; i < ADMIN_EV_STATES; i++) {
		if (strcmp(s, state_names[i]) == 0) {
			*out = (enum admin_event_state)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *
admin_rule_kind_name(enum admin_rule_kind kind)
{
	switch (kind) {
	case ADMIN_RULE_IP:
	case ADMIN_RULE_IP6:
		return "ip";
	case ADMIN_RULE_USER:
		return "user";
	case ADMIN_RULE_DEVICE:
		return "device";
	}
	return "?";
}

const char *
admin_key_kind_name(uint8_t kind)
{
	switch (kind) {
	case WIRE_KEY_SALE:
		return "sale";
	case WIRE_KEY_AUTH:
		return "auth";
	}
	return "?";
}

const char *
admin_help_text(void)
{
	return "event create ID --name NAME --stock N --starts-at TIME --ends-at TIME "
	       "--pay-window DURATION [--per-user-limit 1] [--queue-opens-at TIME] "
	       "[--draw-window DURATION] [--pow-bits N] [--pow-auto-max M]\n"
	       "event preheat ID        load the stock into Redis (not while open)\n"
	       "event open ID           start selling a preheated event\n"
	       "event close ID          end the sale (final)\n"
	       "event show ID\n"
	       "event list [--state STATE] [--limit N] [--after ID]   by id, N (1..500, 100) "
	       "at a time\n"
	       "event archive ID        put away an event that is over: Redis keys freed, "
	       "rows kept\n"
	       "event pow ID BITS [--auto-max M]   the challenge's difficulty for the next "
	       "tokens (0..30 bits; M: the control plane may raise it up to M, 0: never)\n"
	       "event verify-draw ID [--commitment HEX]   recompute the draw from PostgreSQL "
	       "and check the orders\n"
	       "stats\n"
	       "keys rotate             new current sale key; the previous one keeps verifying\n"
	       "keys list\n"
	       "keys auth-set KID [- | --key-file PATH]   the shop's session-token key, 32..128 "
	       "hex "
	       "digits read from standard input or a file of mode 0600 (never the command line)\n"
	       "rules add ip A.B.C.D[/LEN] | ip IPV6[/LEN] | user ID | device ID\n"
	       "rules del ip A.B.C.D[/LEN] | ip IPV6[/LEN] | user ID | device ID\n"
	       "rules list\n"
	       "limits set [ip RATE/BURST] [user RATE/BURST] [device RATE/BURST] [forward "
	       "RATE[/BURST]]\n"
	       "limits show\n"
	       "session-token USER [--ttl DURATION]\n"
	       "order pay ORDER_ID\n"
	       "order cancel ORDER_ID\n"
	       "reconcile EVENT_ID [--repair [--force]]\n"
	       "audit [EVENT_ID] [--limit N]   the admin commands that changed something, "
	       "newest first (N: 1..1000, 50)\n"
	       "help\n"
	       "TIME: RFC 3339 (2026-12-01T10:00:00Z, 2026-12-01T18:00:00+08:00) or Unix seconds. "
	       "DURATION: 500ms, 30s, 15m, 2h, 1d, 1h30m.\n";
}

/* ---------------------------------------------------------------------------------------- */
/* Messages                                                                                  */

int
admin_fail(char *err, size_t errlen, const char *cmd, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (err == NULL || errlen == 0)
		return -EINVAL;
	if (cmd != NULL)
		n = snprintf(err, errlen, "%s: ", cmd);
	if (n < 0 || (size_t)n >= errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ---------------------------------------------------------------------------------------- */
/* Values                                                                                    */

int
admin_name_check(const char *cmd, const char *name, char *err, size_t errlen)
{
	size_t len = strnlen(name, ADMIN_NAME_MAX + 1);
	bool ctl = false;
	long at;

	if (len == 0)
		return admin_fail(
			err, errlen, cmd, "--name is empty: give the sale's name as buyers see it");
	/* Spaces alone show buyers no name either. */
	if (strspn(name, " ") == len)
		return admin_fail(err, errlen, cmd,
			"--name is only spaces: give the sale's name as buyers see it");
	if (len > ADMIN_NAME_MAX)
		return admin_fail(err, errlen, cmd, "--name is %zu bytes long, at most %u",
			strlen(name), ADMIN_NAME_MAX);
	at = parse_text_check(name, len, &ctl);
	if (at >= 0 && ctl)
		return admin_fail(
			err, errlen, cmd, "--name has a control character at byte %ld", at);
	if (at >= 0)
		return admin_fail(err, errlen, cmd, "--name is not valid UTF-8 (at byte %ld)", at);
	return 0;
}

int
admin_event_check(const struct admin_event *ev, char *err, size_t errlen)
{
	char a[40], b[40];
	int rc;

	if (ev->id == 0)
		return admin_fail(err, errlen, NULL, "event id must be 1..4294967295, got 0");
	rc = admin_name_check(NULL, ev->name, err, errlen);
	if (rc != 0)
		return rc;
	if (ev->stock > ADMIN_STOCK_MAX)
		return admin_fail(err, errlen, NULL, "--stock must be 0..%u, got %" PRIu32,
			ADMIN_STOCK_MAX, ev->stock);
	if (ev->starts_at_ms >= ev->ends_at_ms) {
		parse_time_format(ev->starts_at_ms, a, sizeof(a));
		parse_time_format(ev->ends_at_ms, b, sizeof(b));
		return admin_fail(
			err, errlen, NULL, "--ends-at (%s) must be after --starts-at (%s)", b, a);
	}
	if (ev->pay_window_s < ADMIN_PAY_WINDOW_MIN_S || ev->pay_window_s > ADMIN_PAY_WINDOW_MAX_S)
		return admin_fail(err, errlen, NULL,
			"--pay-window must be 10s..1d, got %" PRIu32 "s", ev->pay_window_s);
	if (ev->per_user_limit != 1)
		return admin_fail(err, errlen, NULL,
			"--per-user-limit must be 1 (one item per user for now), got %" PRIu32,
			ev->per_user_limit);
	return admin_event_fair_check(ev, err, errlen);
}

int
admin_event_fair_check(const struct admin_event *ev, char *err, size_t errlen)
{
	char a[40], b[40], c[40];

	if (ev->draw_window_s > ADMIN_DRAW_WINDOW_MAX_S)
		return admin_fail(err, errlen, NULL,
			"--draw-window must be 0..1d, got %" PRIu32 "s", ev->draw_window_s);
	if (ev->draw_window_s == 0 && ev->queue_opens_at_ms != 0)
		return admin_fail(err, errlen, NULL,
			"--queue-opens-at needs a draw: the pre-queue's entrants are decided by "
			"the draw at the end of --draw-window (give one, such as --draw-window "
			"30s)");
	if (ev->draw_window_s != 0 && ev->queue_opens_at_ms > ev->starts_at_ms) {
		parse_time_format(ev->queue_opens_at_ms, a, sizeof(a));
		parse_time_format(ev->starts_at_ms, b, sizeof(b));
		return admin_fail(err, errlen, NULL,
			"--queue-opens-at (%s) must be at or before --starts-at (%s): the "
			"pre-queue opens before the sale",
			a, b);
	}
	if (ev->draw_window_s != 0 && admin_event_draw_at_ms(ev) >= ev->ends_at_ms) {
		parse_time_format(admin_event_draw_at_ms(ev), a, sizeof(a));
		parse_time_format(ev->ends_at_ms, b, sizeof(b));
		parse_duration_format((uint64_t)ev->draw_window_s * 1000, c, sizeof(c));
		return admin_fail(err, errlen, NULL,
			"--draw-window %s puts the draw at %s, not before --ends-at (%s): the draw "
			"must happen inside the sale",
			c, a, b);
	}
	if (ev->pow_bits > ADMIN_POW_BITS_MAX)
		return admin_fail(err, errlen, NULL,
			"--pow-bits must be 0..%u (leading zero bits of the challenge), got %u",
			ADMIN_POW_BITS_MAX, ev->pow_bits);
	if (ev->pow_auto_max > ADMIN_POW_BITS_MAX)
		return admin_fail(err, errlen, NULL, "--pow-auto-max must be 0..%u, got %u",
			ADMIN_POW_BITS_MAX, ev->pow_auto_max);
	if (ev->pow_auto_max != 0 && ev->pow_auto_max < ev->pow_bits)
		return admin_fail(err, errlen, NULL,
			"--pow-auto-max (%u) must be at least --pow-bits (%u), or 0 for no "
			"automatic raise",
			ev->pow_auto_max, ev->pow_bits);
	return 0;
}

int
admin_event_transition(uint32_t id, enum admin_event_state from, enum admin_event_state to,
	char *err, size_t errlen)
{
	if ((unsigned)from >= ADMIN_EV_STATES) {
		snprintf(err, errlen, "event %" PRIu32 " has an unknown state", id);
		return -EPERM;
	}
	if (from == ADMIN_EV_ARCHIVED) {
		snprintf(err, errlen,
			"event %" PRIu32 " is archived: it is over and its Redis keys are gone "
			"(create a new event)",
			id);
		return -EPERM;
	}
	switch (to) {
	case ADMIN_EV_PREHEATED:
		if (from == ADMIN_EV_DRAFT || from == ADMIN_EV_PREHEATED)
			return 0;
		if (from == ADMIN_EV_OPEN)
			snprintf(err, errlen,
				"event %" PRIu32 " is open: preheating would reset the stock of a "
				"running sale (close it first)",
				id);
		else
			snprintf(err, errlen,
				"event %" PRIu32 " is closed: a closed event cannot be preheated "
				"(create a new event)",
				id);
		return -EPERM;
	case ADMIN_EV_OPEN:
		if (from == ADMIN_EV_PREHEATED)
			return 0;
		if (from == ADMIN_EV_DRAFT)
			snprintf(err, errlen,
				"event %" PRIu32
				" is a draft: preheat it first (event preheat %" PRIu32 ")",
				id, id);
		else if (from == ADMIN_EV_OPEN)
			snprintf(err, errlen, "event %" PRIu32 " is already open", id);
		else
			snprintf(err, errlen,
				"event %" PRIu32 " is closed, which is final (create a new event)",
				id);
		return -EPERM;
	case ADMIN_EV_CLOSED:
		if (from != ADMIN_EV_CLOSED)
			return 0;
		snprintf(err, errlen, "event %" PRIu32 " is already closed", id);
		return -EPERM;
	case ADMIN_EV_ARCHIVED:
		/* An event past its ends_at is over in any state: pg_event_archive() lets it
		 * through before asking here. */
		if (from == ADMIN_EV_CLOSED)
			return 0;
		snprintf(err, errlen,
			"event %" PRIu32 " is %s and its sale has not ended: only an event that is "
			"over is archived (event close %" PRIu32 " first, or wait for its ends_at)",
			id, admin_event_state_name(from), id);
		return -EPERM;
	case ADMIN_EV_DRAFT:
		break;
	}
	snprintf(err, errlen, "event %" PRIu32 ": no command takes an event to state %s", id,
		admin_event_state_name(to));
	return -EPERM;
}

static void
ip_text(uint32_t ip, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u", ip >> 24, ip >> 16 & 0xff, ip >> 8 & 0xff, ip & 0xff);
}

/* admin_rule_parse() of an "ip" value with a colon: an IPv6 address or network. */
static int
rule_ip6_parse(const char *value, struct admin_rule *out, char *err, size_t errlen)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	char net[INET6_ADDRSTRLEN];
	unsigned prefix;
	int rc = parse_cidr6(value, out->ip6, &prefix);

	if (rc == -EINVAL)
		return admin_fail(err, errlen, NULL,
			"ip '" ADMIN_SHOW "' is not an IPv6 address or network (expected e.g. "
			"2001:db8::7 or 2001:db8::/32: hex groups and '::', no brackets, no zone)",
			value);
	if (rc == -ERANGE)
		return admin_fail(err, errlen, NULL,
			"ip " ADMIN_SHOW ": the prefix length must be 0..128, got '" ADMIN_SHOW "'",
			value, strchr(value, '/') + 1);
	if (rc == -EDOM) {
		inet_ntop(AF_INET6, out->ip6, net, sizeof(net));
		memset(out, 0, sizeof(*out));
		return admin_fail(err, errlen, NULL,
			"ip " ADMIN_SHOW
			" has host bits set: the network is %s/%u (use /128 for one address)",
			value, net, prefix);
	}
	if (prefix >= 96 && memcmp(out->ip6, mapped, sizeof(mapped)) == 0) {
		const uint8_t *v4 = out->ip6 + 12;

		snprintf(net, sizeof(net), "%u.%u.%u.%u/%u", v4[0], v4[1], v4[2], v4[3],
			prefix - 96);
		memset(out, 0, sizeof(*out));
		return admin_fail(err, errlen, NULL,
			"ip " ADMIN_SHOW
			" is an IPv4-mapped network: block ip %s instead (a client at "
			"::ffff:a.b.c.d is the IPv4 client a.b.c.d)",
			value, net);
	}
	out->kind = ADMIN_RULE_IP6;
	out->prefix = (uint8_t)prefix;
	return 0;
}

int
admin_rule_parse(
	const char *kind, const char *value, struct admin_rule *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (strcmp(kind, "ip") == 0 && strchr(value, ':') != NULL)
		return rule_ip6_parse(value, out, err, errlen);
	if (strcmp(kind, "ip") == 0) {
		unsigned prefix;
		char net[16];
		int rc = parse_cidr(value, &out->ip, &prefix);

		if (rc == -EINVAL)
			return admin_fail(err, errlen, NULL,
				"ip '" ADMIN_SHOW
				"' is not an IPv4 address or network (expected a.b.c.d or "
				"a.b.c.d/len)",
				value);
		if (rc == -ERANGE)
			return admin_fail(err, errlen, NULL,
				"ip " ADMIN_SHOW
				": the prefix length must be 0..32, got '" ADMIN_SHOW "'",
				value, strchr(value, '/') + 1);
		if (rc == -EDOM) {
			ip_text(out->ip, net, sizeof(net));
			memset(out, 0, sizeof(*out));
			return admin_fail(err, errlen, NULL,
				"ip " ADMIN_SHOW
				" has host bits set: the network is %s/%u (use /32 for "
				"one address)",
				value, net, prefix);
		}
		out->kind = ADMIN_RULE_IP;
		out->prefix = (uint8_t)prefix;
		return 0;
	}
	if (strcmp(kind, "user") == 0) {
		if (parse_u64(value, 1, ADMIN_USER_MAX, &out->user) != 0)
			return admin_fail(err, errlen, NULL,
				"user id must be 1..9223372036854775807, got " ADMIN_SHOW, value);
		out->kind = ADMIN_RULE_USER;
		return 0;
	}
	if (strcmp(kind, "device") == 0) {
		size_t len = strlen(value);

		if (len == 0)
			return admin_fail(err, errlen, NULL, "device id is empty");
		if (len > ADMIN_DEVICE_MAX)
			return admin_fail(err, errlen, NULL,
				"device id is %zu bytes long, at most %u", len, ADMIN_DEVICE_MAX);
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)value[i];

			if (c <= 0x20 || c >= 0x7f)
				return admin_fail(err, errlen, NULL,
					"device id has byte 0x%02x at offset %zu: only visible "
					"ASCII (no spaces) can be a device id",
					c, i);
		}
		memcpy(out->device, value, len + 1);
		out->kind = ADMIN_RULE_DEVICE;
		return 0;
	}
	return admin_fail(err, errlen, NULL,
		"unknown rule kind '" ADMIN_SHOW "' (expected ip, user or device)", kind);
}

int
admin_rule_value(const struct admin_rule *r, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	int n;

	switch (r->kind) {
	case ADMIN_RULE_IP6:
		if (inet_ntop(AF_INET6, r->ip6, ip, sizeof(ip)) == NULL)
			return -EINVAL;
		n = r->prefix == 128 ? snprintf(buf, len, "%s", ip)
				     : snprintf(buf, len, "%s/%u", ip, r->prefix);
		break;
	case ADMIN_RULE_IP:
		ip_text(r->ip, ip, sizeof(ip));
		n = r->prefix == 32 ? snprintf(buf, len, "%s", ip)
				    : snprintf(buf, len, "%s/%u", ip, r->prefix);
		break;
	case ADMIN_RULE_USER:
		n = snprintf(buf, len, "%" PRIu64, r->user);
		break;
	case ADMIN_RULE_DEVICE:
		n = snprintf(buf, len, "%.*s", ADMIN_DEVICE_MAX, r->device);
		break;
	default:
		return -EINVAL;
	}
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return n;
}
