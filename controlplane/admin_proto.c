/* SPDX-License-Identifier: BSD-3-Clause */
#include "controlplane/admin_proto.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"

/* Words of a request are quoted in messages up to this many bytes. */
#define SHOW "%.48s"

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
	[ADMIN_RECONCILE] = "reconcile",
};

const char *
admin_cmd_name(enum admin_cmd cmd)
{
	if ((unsigned)cmd >= sizeof(cmd_names) / sizeof(cmd_names[0]) || cmd_names[cmd] == NULL)
		return "?";
	return cmd_names[cmd];
}

static const char *const state_names[ADMIN_EV_STATES] = {"draft", "preheated", "open", "closed"};

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
	       "--pay-window DURATION [--per-user-limit 1]\n"
	       "event preheat ID        load the stock into Redis (not while open)\n"
	       "event open ID           start selling a preheated event\n"
	       "event close ID          end the sale (final)\n"
	       "event show ID\n"
	       "event list\n"
	       "stats\n"
	       "keys rotate             new current sale key; the previous one keeps verifying\n"
	       "keys list\n"
	       "keys auth-set KID HEX   the shop's session-token key (32..128 hex digits)\n"
	       "rules add ip A.B.C.D[/LEN] | user ID | device ID\n"
	       "rules del ip A.B.C.D[/LEN] | user ID | device ID\n"
	       "rules list\n"
	       "limits set [ip RATE/BURST] [user RATE/BURST] [device RATE/BURST] [forward N]\n"
	       "limits show\n"
	       "session-token USER [--ttl DURATION]\n"
	       "order pay ORDER_ID\n"
	       "reconcile EVENT_ID [--repair [--force]]\n"
	       "help\n"
	       "TIME: RFC 3339 (2026-12-01T10:00:00Z, 2026-12-01T18:00:00+08:00) or Unix seconds. "
	       "DURATION: 500ms, 30s, 15m, 2h, 1d, 1h30m.\n";
}

/* ---------------------------------------------------------------------------------------- */
/* Messages and numbers                                                                      */

static int __attribute__((format(printf, 4, 5)))
fail(char *err, size_t errlen, const char *cmd, const char *fmt, ...)
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

/*
 * A duration in whole seconds within [min_s, max_s]: the value of option opt of cmd.
 * Says which of the three ways it is wrong.
 */
static int
parse_seconds(const char *cmd, const char *opt, const char *s, uint64_t min_s, uint64_t max_s,
	uint64_t *out, char *err, size_t errlen)
{
	char lo[24], hi[24];
	uint64_t ms;

	parse_duration_format(min_s * 1000, lo, sizeof(lo));
	parse_duration_format(max_s * 1000, hi, sizeof(hi));
	if (parse_duration(s, &ms) != 0)
		return fail(err, errlen, cmd,
			"%s is not a duration: '" SHOW
			"' (expected a number with a unit: ms, s, m, "
			"h or d, such as 15m)",
			opt, s);
	if (ms % 1000 != 0)
		return fail(err, errlen, cmd, "%s must be whole seconds, got %s", opt, s);
	if (ms / 1000 < min_s || ms / 1000 > max_s)
		return fail(err, errlen, cmd, "%s must be %s..%s, got %s", opt, lo, hi, s);
	*out = ms / 1000;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Values                                                                                    */

static int
check_name(const char *cmd, const char *name, char *err, size_t errlen)
{
	size_t len = strnlen(name, ADMIN_NAME_MAX + 1);
	bool ctl = false;
	long at;

	if (len == 0)
		return fail(
			err, errlen, cmd, "--name is empty: give the sale's name as buyers see it");
	if (len > ADMIN_NAME_MAX)
		return fail(err, errlen, cmd, "--name is %zu bytes long, at most %u", strlen(name),
			ADMIN_NAME_MAX);
	at = parse_text_check(name, len, &ctl);
	if (at >= 0 && ctl)
		return fail(err, errlen, cmd, "--name has a control character at byte %ld", at);
	if (at >= 0)
		return fail(err, errlen, cmd, "--name is not valid UTF-8 (at byte %ld)", at);
	return 0;
}

int
admin_event_check(const struct admin_event *ev, char *err, size_t errlen)
{
	char a[40], b[40];
	int rc;

	if (ev->id == 0)
		return fail(err, errlen, NULL, "event id must be 1..4294967295, got 0");
	rc = check_name(NULL, ev->name, err, errlen);
	if (rc != 0)
		return rc;
	if (ev->stock > ADMIN_STOCK_MAX)
		return fail(err, errlen, NULL, "--stock must be 0..%u, got %" PRIu32,
			ADMIN_STOCK_MAX, ev->stock);
	if (ev->starts_at_ms >= ev->ends_at_ms) {
		parse_time_format(ev->starts_at_ms, a, sizeof(a));
		parse_time_format(ev->ends_at_ms, b, sizeof(b));
		return fail(
			err, errlen, NULL, "--ends-at (%s) must be after --starts-at (%s)", b, a);
	}
	if (ev->pay_window_s < ADMIN_PAY_WINDOW_MIN_S || ev->pay_window_s > ADMIN_PAY_WINDOW_MAX_S)
		return fail(err, errlen, NULL, "--pay-window must be 10s..1d, got %" PRIu32 "s",
			ev->pay_window_s);
	if (ev->per_user_limit != 1)
		return fail(err, errlen, NULL,
			"--per-user-limit must be 1 (one item per user for now), got %" PRIu32,
			ev->per_user_limit);
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

int
admin_rule_parse(
	const char *kind, const char *value, struct admin_rule *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (strcmp(kind, "ip") == 0) {
		unsigned prefix;
		char net[16];
		int rc = parse_cidr(value, &out->ip, &prefix);

		if (rc == -EINVAL)
			return fail(err, errlen, NULL,
				"ip '" SHOW
				"' is not an IPv4 address or network (expected a.b.c.d or "
				"a.b.c.d/len)",
				value);
		if (rc == -ERANGE)
			return fail(err, errlen, NULL,
				"ip " SHOW ": the prefix length must be 0..32, got '" SHOW "'",
				value, strchr(value, '/') + 1);
		if (rc == -EDOM) {
			ip_text(out->ip, net, sizeof(net));
			memset(out, 0, sizeof(*out));
			return fail(err, errlen, NULL,
				"ip " SHOW " has host bits set: the network is %s/%u (use /32 for "
				"one address)",
				value, net, prefix);
		}
		out->kind = ADMIN_RULE_IP;
		out->prefix = (uint8_t)prefix;
		return 0;
	}
	if (strcmp(kind, "user") == 0) {
		if (parse_u64(value, 1, ADMIN_USER_MAX, &out->user) != 0)
			return fail(err, errlen, NULL,
				"user id must be 1..9223372036854775807, got " SHOW, value);
		out->kind = ADMIN_RULE_USER;
		return 0;
	}
	if (strcmp(kind, "device") == 0) {
		size_t len = strlen(value);

		if (len == 0)
			return fail(err, errlen, NULL, "device id is empty");
		if (len > ADMIN_DEVICE_MAX)
			return fail(err, errlen, NULL, "device id is %zu bytes long, at most %u",
				len, ADMIN_DEVICE_MAX);
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)value[i];

			if (c <= 0x20 || c >= 0x7f)
				return fail(err, errlen, NULL,
					"device id has byte 0x%02x at offset %zu: only visible "
					"ASCII (no spaces) can be a device id",
					c, i);
		}
		memcpy(out->device, value, len + 1);
		out->kind = ADMIN_RULE_DEVICE;
		return 0;
	}
	return fail(err, errlen, NULL, "unknown rule kind '" SHOW "' (expected ip, user or device)",
		kind);
}

int
admin_rule_value(const struct admin_rule *r, char *buf, size_t len)
{
	char ip[16];
	int n;

	switch (r->kind) {
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

/* ---------------------------------------------------------------------------------------- */
/* Splitting a line into words                                                               */

struct words {
	char store[ADMIN_LINE_MAX];
	char *w[ADMIN_WORDS_MAX];
	int n;
};

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int
split(const char *line, struct words *ws, char *err, size_t errlen)
{
	size_t len = strlen(line), o = 0, i = 0;

	if (len > 0 && line[len - 1] == '\n')
		len--;
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len >= ADMIN_LINE_MAX)
		return fail(
			err, errlen, NULL, "request is longer than %d bytes", ADMIN_LINE_MAX - 1);
	for (size_t k = 0; k < len; k++) {
		unsigned char c = (unsigned char)line[k];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(err, errlen, NULL,
				"request has a control character (byte 0x%02x at column %zu)", c,
				k + 1);
	}
	ws->n = 0;
	for (;;) {
		while (i < len && is_blank(line[i]))
			i++;
		if (i == len)
			break;
		if (ws->n == ADMIN_WORDS_MAX)
			return fail(err, errlen, NULL, "request has more than %d words",
				ADMIN_WORDS_MAX);
		ws->w[ws->n++] = ws->store + o;
		while (i < len && !is_blank(line[i])) {
			char q = line[i];
			size_t start = i;

			if (q != '"' && q != '\'') {
				ws->store[o++] = line[i++];
				continue;
			}
			for (i++; i < len && line[i] != q; i++) {
				/* Inside "...", \" and \\ escape; any other backslash is itself. */
				if (q == '"' && line[i] == '\\' && i + 1 < len &&
					(line[i + 1] == '"' || line[i + 1] == '\\'))
					i++;
				ws->store[o++] = line[i];
			}
			if (i == len)
				return fail(err, errlen, NULL,
					"unterminated %s quote starting at column %zu",
					q == '"' ? "double" : "single", start + 1);
			i++;
		}
		ws->store[o++] = '\0';
	}
	return 0;
}

int
admin_join(int argc, char *const argv[], char *buf, size_t len, char *err, size_t errlen)
{
	size_t o = 0;

	if (len > ADMIN_LINE_MAX)
		len = ADMIN_LINE_MAX;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool quote = *a == '\0';

		for (const char *p = a; *p != '\0'; p++) {
			unsigned char c = (unsigned char)*p;

			if ((c < 0x20 && c != '\t') || c == 0x7f) {
				fail(err, errlen, NULL,
					"argument %d has a control character (byte 0x%02x)", i + 1,
					c);
				return -EINVAL;
			}
			if (c == ' ' || c == '\t' || c == '"' || c == '\'' || c == '\\')
				quote = true;
		}
		if (o + (i > 0) + (quote ? 2 : 0) + 2 * strlen(a) + 1 > len) {
			/* Exact only when it fits; when the worst case does not, count precisely.
			 */
			size_t need = o + (i > 0) + (quote ? 2 : 0) + 1;

			for (const char *p = a; *p != '\0'; p++)
				need += (quote && (*p == '"' || *p == '\\')) ? 2 : 1;
			if (need > len) {
				fail(err, errlen, NULL, "the request is longer than %zu bytes",
					len - 1);
				return -ENOSPC;
			}
		}
		if (i > 0)
			buf[o++] = ' ';
		if (quote)
			buf[o++] = '"';
		for (const char *p = a; *p != '\0'; p++) {
			if (quote && (*p == '"' || *p == '\\'))
				buf[o++] = '\\';
			buf[o++] = *p;
		}
		if (quote)
			buf[o++] = '"';
	}
	buf[o] = '\0';
	return (int)o;
}

/* ---------------------------------------------------------------------------------------- */
/* Commands                                                                                  */

struct ctx {
	struct words *ws;
	int i; /* the next word */
	const char *cmd;
	struct admin_req *req;
	char *err;
	size_t errlen;
};

static const char *
next_word(struct ctx *c)
{
	return c->i < c->ws->n ? c->ws->w[c->i++] : NULL;
}

static int
expect_end(struct ctx *c)
{
	if (c->i < c->ws->n)
		return fail(c->err, c->errlen, c->cmd, "unexpected argument '" SHOW "'",
			c->ws->w[c->i]);
	return 0;
}

static int
event_id_arg(struct ctx *c, uint32_t *out)
{
	const char *w = next_word(c);
	uint64_t v;

	if (w == NULL)
		return fail(c->err, c->errlen, c->cmd, "missing event id (a number 1..4294967295)");
	if (parse_u64(w, 1, ADMIN_EVENT_ID_MAX, &v) != 0)
		return fail(
			c->err, c->errlen, c->cmd, "event id must be 1..4294967295, got " SHOW, w);
	*out = (uint32_t)v;
	return 0;
}

/*
 * Options of the form --name VALUE or --name=VALUE: *name receives the option without its
 * value ("--name"), *val the value. Returns 1 for an option, 0 for a word that is not one.
 */
static int
option(struct ctx *c, const char *w, char *name, size_t namelen, const char **val)
{
	const char *eq;

	if (strncmp(w, "--", 2) != 0 || w[2] == '\0')
		return 0;
	eq = strchr(w, '=');
	if (eq != NULL) {
		snprintf(name, namelen, "%.*s", (int)(eq - w), w);
		*val = eq + 1;
		return 1;
	}
	snprintf(name, namelen, "%s", w);
	if (c->i < c->ws->n && strncmp(c->ws->w[c->i], "--", 2) != 0)
		*val = c->ws->w[c->i++];
	else
		*val = NULL;
	return 1;
}

static int
parse_event_create(struct ctx *c)
{
	static const char *const opts[] = {"--name", "--stock", "--starts-at", "--ends-at",
		"--pay-window", "--per-user-limit"};
	enum { O_NAME, O_STOCK, O_STARTS, O_ENDS, O_PAY, O_LIMIT, O_N };
	struct admin_event *ev = &c->req->event;
	bool given[O_N] = {false};
	const char *last = NULL;
	int rc;

	rc = event_id_arg(c, &ev->id);
	if (rc != 0)
		return rc;
	ev->per_user_limit = 1;
	while (c->i < c->ws->n) {
		const char *w = next_word(c), *val;
		char name[32];
		uint64_t v;
		int o;

		if (!option(c, w, name, sizeof(name), &val)) {
			if (last != NULL && strcmp(last, "--name") == 0)
				return fail(c->err, c->errlen, c->cmd,
					"unexpected argument '" SHOW "' (quote a name with spaces: "
					"--name \"Big sale\")",
					w);
			return fail(c->err, c->errlen, c->cmd, "unexpected argument '" SHOW "'", w);
		}
		for (o = 0; o < O_N; o++) {
			if (strcmp(name, opts[o]) == 0)
				break;
		}
		if (o == O_N)
			return fail(c->err, c->errlen, c->cmd,
				"unknown option '" SHOW "' (expected --name, --stock, --starts-at, "
				"--ends-at, --pay-window or --per-user-limit)",
				name);
		if (given[o])
			return fail(c->err, c->errlen, c->cmd, "%s given twice", opts[o]);
		if (val == NULL)
			return fail(c->err, c->errlen, c->cmd, "%s needs a value", opts[o]);
		given[o] = true;
		last = opts[o];
		switch (o) {
		case O_NAME:
			rc = check_name(c->cmd, val, c->err, c->errlen);
			if (rc != 0)
				return rc;
			memcpy(ev->name, val, strlen(val) + 1);
			break;
		case O_STOCK:
			if (parse_u64(val, 0, ADMIN_STOCK_MAX, &v) != 0)
				return fail(c->err, c->errlen, c->cmd,
					"--stock must be 0..%u, got " SHOW, ADMIN_STOCK_MAX, val);
			ev->stock = (uint32_t)v;
			break;
		case O_STARTS:
		case O_ENDS:
			if (parse_time(val, o == O_STARTS ? &ev->starts_at_ms : &ev->ends_at_ms) !=
				0)
				return fail(c->err, c->errlen, c->cmd,
					"%s is not a time: '" SHOW "' (expected RFC 3339 such as "
					"2026-12-01T10:00:00Z or 2026-12-01T18:00:00+08:00, or "
					"Unix "
					"seconds)",
					opts[o], val);
			break;
		case O_PAY:
			rc = parse_seconds(c->cmd, "--pay-window", val, ADMIN_PAY_WINDOW_MIN_S,
				ADMIN_PAY_WINDOW_MAX_S, &v, c->err, c->errlen);
			if (rc != 0)
				return rc;
			ev->pay_window_s = (uint32_t)v;
			break;
		case O_LIMIT:
			if (parse_u64(val, 1, 1, &v) != 0)
				return fail(c->err, c->errlen, c->cmd,
					"--per-user-limit must be 1 (one item per user for now), "
					"got " SHOW,
					val);
			ev->per_user_limit = 1;
			break;
		}
	}
	for (int o = 0; o < O_LIMIT; o++) {
		if (!given[o])
			return fail(c->err, c->errlen, c->cmd,
				"missing %s (required: --name, --stock, --starts-at, --ends-at, "
				"--pay-window)",
				opts[o]);
	}
	rc = admin_event_check(ev, c->err, c->errlen);
	if (rc != 0) {
		char why[ADMIN_ERR_MAX];

		snprintf(why, sizeof(why), "%s", c->err);
		return fail(c->err, c->errlen, c->cmd, "%s", why);
	}
	return 0;
}

static int
parse_event(struct ctx *c)
{
	static const struct {
		const char *word;
		enum admin_cmd cmd;
	} subs[] = {
		{"create", ADMIN_EVENT_CREATE},
		{"preheat", ADMIN_EVENT_PREHEAT},
		{"open", ADMIN_EVENT_OPEN},
		{"close", ADMIN_EVENT_CLOSE},
		{"show", ADMIN_EVENT_SHOW},
		{"list", ADMIN_EVENT_LIST},
	};
	const char *w = next_word(c);
	int rc;

	if (w == NULL)
		return fail(c->err, c->errlen, "event",
			"expected a subcommand: create, preheat, open, close, show or list");
	for (size_t k = 0; k < sizeof(subs) / sizeof(subs[0]); k++) {
		if (strcmp(w, subs[k].word) != 0)
			continue;
		c->req->cmd = subs[k].cmd;
		c->cmd = admin_cmd_name(subs[k].cmd);
		switch (subs[k].cmd) {
		case ADMIN_EVENT_CREATE:
			return parse_event_create(c);
		case ADMIN_EVENT_LIST:
			return expect_end(c);
		default:
			rc = event_id_arg(c, &c->req->event_id);
			return rc != 0 ? rc : expect_end(c);
		}
	}
	return fail(c->err, c->errlen, "event",
		"unknown subcommand '" SHOW
		"' (expected create, preheat, open, close, show or list)",
		w);
}

static int
parse_keys(struct ctx *c)
{
	const char *w = next_word(c), *kid, *hex;
	size_t len, n;
	uint64_t v;
	int rc;

	if (w == NULL)
		return fail(c->err, c->errlen, "keys",
			"expected a subcommand: rotate, list or auth-set");
	if (strcmp(w, "rotate") == 0 || strcmp(w, "list") == 0) {
		c->req->cmd = w[0] == 'r' ? ADMIN_KEYS_ROTATE : ADMIN_KEYS_LIST;
		c->cmd = admin_cmd_name(c->req->cmd);
		return expect_end(c);
	}
	if (strcmp(w, "auth-set") != 0)
		return fail(c->err, c->errlen, "keys",
			"unknown subcommand '" SHOW "' (expected rotate, list or auth-set)", w);
	c->req->cmd = ADMIN_KEYS_AUTH_SET;
	c->cmd = admin_cmd_name(c->req->cmd);
	kid = next_word(c);
	hex = next_word(c);
	if (kid == NULL)
		return fail(c->err, c->errlen, c->cmd,
			"missing key id and secret: keys auth-set KID HEX");
	if (parse_u64(kid, 0, UINT32_MAX, &v) != 0)
		return fail(
			c->err, c->errlen, c->cmd, "key id must be 0..4294967295, got " SHOW, kid);
	c->req->kid = (uint32_t)v;
	if (hex == NULL)
		return fail(c->err, c->errlen, c->cmd,
			"missing secret: %u..%u hex digits (%u..%u bytes) after the key id",
			2 * ADMIN_SECRET_MIN, 2 * ADMIN_SECRET_MAX, ADMIN_SECRET_MIN,
			ADMIN_SECRET_MAX);
	len = strlen(hex);
	/* The secret is never quoted back: messages end up in logs and terminals. */
	rc = parse_hex(hex, c->req->secret, ADMIN_SECRET_MAX, &n);
	if (rc == -EINVAL)
		return fail(c->err, c->errlen, c->cmd,
			"the secret must be hex digits, got another character at offset %zu", n);
	if (rc != 0 || n < ADMIN_SECRET_MIN)
		return fail(c->err, c->errlen, c->cmd,
			"the secret must be %u..%u bytes, an even number of %u..%u hex digits; got "
			"%zu digits",
			ADMIN_SECRET_MIN, ADMIN_SECRET_MAX, 2 * ADMIN_SECRET_MIN,
			2 * ADMIN_SECRET_MAX, len);
	c->req->secret_len = (uint8_t)n;
	return expect_end(c);
}

static int
parse_rules(struct ctx *c)
{
	const char *w = next_word(c), *kind, *value;
	char why[ADMIN_ERR_MAX];

	if (w == NULL)
		return fail(c->err, c->errlen, "rules", "expected a subcommand: add, del or list");
	if (strcmp(w, "list") == 0) {
		c->req->cmd = ADMIN_RULES_LIST;
		c->cmd = admin_cmd_name(c->req->cmd);
		return expect_end(c);
	}
	if (strcmp(w, "add") == 0)
		c->req->cmd = ADMIN_RULES_ADD;
	else if (strcmp(w, "del") == 0)
		c->req->cmd = ADMIN_RULES_DEL;
	else
		return fail(c->err, c->errlen, "rules",
			"unknown subcommand '" SHOW "' (expected add, del or list)", w);
	c->cmd = admin_cmd_name(c->req->cmd);
	kind = next_word(c);
	value = next_word(c);
	if (kind == NULL)
		return fail(c->err, c->errlen, c->cmd,
			"missing rule: ip A.B.C.D[/LEN], user ID or device ID");
	if (value == NULL && (strcmp(kind, "ip") == 0 || strcmp(kind, "user") == 0 ||
				     strcmp(kind, "device") == 0))
		return fail(c->err, c->errlen, c->cmd, "missing the %s to %s after '%s'",
			strcmp(kind, "ip") == 0 ? "address or network"
			: kind[0] == 'u'	? "user id"
						: "device id",
			c->req->cmd == ADMIN_RULES_ADD ? "block" : "unblock", kind);
	if (admin_rule_parse(kind, value != NULL ? value : "", &c->req->rule, why, sizeof(why)) !=
		0)
		return fail(c->err, c->errlen, c->cmd, "%s", why);
	return expect_end(c);
}

static int
rate_burst(struct ctx *c, const char *name, const char *val, uint32_t *rate, uint32_t *burst)
{
	const char *slash = strchr(val, '/');
	char r[24];
	uint64_t v;

	if (slash == NULL || (size_t)(slash - val) >= sizeof(r))
		return fail(c->err, c->errlen, c->cmd,
			"%s: expected RATE/BURST such as 20/40, got " SHOW, name, val);
	memcpy(r, val, (size_t)(slash - val));
	r[slash - val] = '\0';
	if (parse_u64(r, 0, ADMIN_RATE_MAX, &v) != 0)
		return fail(c->err, c->errlen, c->cmd,
			"%s rate must be 0..%u per second (0: no limit), got " SHOW, name,
			ADMIN_RATE_MAX, r);
	*rate = (uint32_t)v;
	if (parse_u64(slash + 1, 0, ADMIN_BURST_MAX, &v) != 0)
		return fail(c->err, c->errlen, c->cmd,
			"%s burst must be 0..%u (0: one second's worth), got " SHOW, name,
			ADMIN_BURST_MAX, slash + 1);
	*burst = (uint32_t)v;
	return 0;
}

static int
parse_limits(struct ctx *c)
{
	const char *w = next_word(c);
	struct admin_req *req = c->req;

	if (w == NULL)
		return fail(c->err, c->errlen, "limits", "expected a subcommand: set or show");
	if (strcmp(w, "show") == 0) {
		req->cmd = ADMIN_LIMITS_SHOW;
		c->cmd = admin_cmd_name(req->cmd);
		return expect_end(c);
	}
	if (strcmp(w, "set") != 0)
		return fail(c->err, c->errlen, "limits",
			"unknown subcommand '" SHOW "' (expected set or show)", w);
	req->cmd = ADMIN_LIMITS_SET;
	c->cmd = admin_cmd_name(req->cmd);
	if (c->i == c->ws->n)
		return fail(c->err, c->errlen, c->cmd,
			"expected one or more of: ip RATE/BURST, user RATE/BURST, device "
			"RATE/BURST, forward N");
	while (c->i < c->ws->n) {
		const char *name = next_word(c), *val = next_word(c);
		unsigned bit;
		int rc;

		if (strcmp(name, "ip") == 0)
			bit = ADMIN_LIMIT_IP;
		else if (strcmp(name, "user") == 0)
			bit = ADMIN_LIMIT_USER;
		else if (strcmp(name, "device") == 0)
			bit = ADMIN_LIMIT_DEVICE;
		else if (strcmp(name, "forward") == 0)
			bit = ADMIN_LIMIT_FORWARD;
		else
			return fail(c->err, c->errlen, c->cmd,
				"unknown limit '" SHOW "' (expected ip, user, device or forward)",
				name);
		if (req->limits_given & bit)
			return fail(c->err, c->errlen, c->cmd, "%s given twice", name);
		if (val == NULL)
			return fail(c->err, c->errlen, c->cmd, "%s needs a value: %s", name,
				bit == ADMIN_LIMIT_FORWARD ? "reservations per second per event"
							   : "RATE/BURST such as 20/40");
		req->limits_given |= bit;
		switch (bit) {
		case ADMIN_LIMIT_IP:
			rc = rate_burst(c, name, val, &req->limits.ip_rate, &req->limits.ip_burst);
			break;
		case ADMIN_LIMIT_USER:
			rc = rate_burst(
				c, name, val, &req->limits.user_rate, &req->limits.user_burst);
			break;
		case ADMIN_LIMIT_DEVICE:
			rc = rate_burst(
				c, name, val, &req->limits.device_rate, &req->limits.device_burst);
			break;
		default: {
			uint64_t v;

			rc = 0;
			if (parse_u64(val, 0, ADMIN_FORWARD_MAX, &v) != 0)
				rc = fail(c->err, c->errlen, c->cmd,
					"forward must be 0..%u reservations per second per event "
					"(0: "
					"no limit), got " SHOW,
					ADMIN_FORWARD_MAX, val);
			req->limits.event_forward_per_s = (uint32_t)v;
			break;
		}
		}
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
parse_session_token(struct ctx *c)
{
	const char *w = next_word(c);
	bool ttl_given = false;

	c->req->cmd = ADMIN_SESSION_TOKEN;
	c->cmd = admin_cmd_name(c->req->cmd);
	c->req->ttl_s = ADMIN_TTL_DEFAULT_S;
	if (w == NULL)
		return fail(c->err, c->errlen, c->cmd, "missing user id (1..9223372036854775807)");
	if (parse_u64(w, 1, ADMIN_USER_MAX, &c->req->user) != 0)
		return fail(c->err, c->errlen, c->cmd,
			"user id must be 1..9223372036854775807, got " SHOW, w);
	while (c->i < c->ws->n) {
		const char *val;
		char name[32];
		int rc;

		w = next_word(c);
		if (!option(c, w, name, sizeof(name), &val))
			return fail(c->err, c->errlen, c->cmd, "unexpected argument '" SHOW "'", w);
		if (strcmp(name, "--ttl") != 0)
			return fail(c->err, c->errlen, c->cmd,
				"unknown option '" SHOW "' (expected --ttl)", name);
		if (ttl_given)
			return fail(c->err, c->errlen, c->cmd, "--ttl given twice");
		if (val == NULL)
			return fail(c->err, c->errlen, c->cmd,
				"--ttl needs a value: how long the token is valid, such as 1h");
		ttl_given = true;
		rc = parse_seconds(c->cmd, "--ttl", val, 1, ADMIN_TTL_MAX_S, &c->req->ttl_s, c->err,
			c->errlen);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
parse_order(struct ctx *c)
{
	const char *w = next_word(c);

	if (w == NULL)
		return fail(c->err, c->errlen, "order", "expected a subcommand: pay");
	if (strcmp(w, "pay") != 0)
		return fail(c->err, c->errlen, "order",
			"unknown subcommand '" SHOW "' (expected pay)", w);
	c->req->cmd = ADMIN_ORDER_PAY;
	c->cmd = admin_cmd_name(c->req->cmd);
	w = next_word(c);
	if (w == NULL)
		return fail(c->err, c->errlen, c->cmd, "missing order id");
	if (parse_u64(w, 1, ADMIN_ORDER_MAX, &c->req->order_id) != 0)
		return fail(c->err, c->errlen, c->cmd,
			"order id must be 1..9223372036854775807, got " SHOW, w);
	return expect_end(c);
}

static int
parse_reconcile(struct ctx *c)
{
	int rc;

	c->req->cmd = ADMIN_RECONCILE;
	c->cmd = admin_cmd_name(c->req->cmd);
	rc = event_id_arg(c, &c->req->event_id);
	if (rc != 0)
		return rc;
	while (c->i < c->ws->n) {
		const char *w = next_word(c);

		if (strcmp(w, "--force") == 0) {
			if (c->req->force)
				return fail(c->err, c->errlen, c->cmd, "--force given twice");
			c->req->force = true;
			continue;
		}
		if (strcmp(w, "--repair") != 0)
			return fail(c->err, c->errlen, c->cmd,
				strncmp(w, "--", 2) == 0 ? "unknown option '" SHOW
							   "' (expected --repair or --force)"
							 : "unexpected argument '" SHOW "'",
				w);
		if (c->req->repair)
			return fail(c->err, c->errlen, c->cmd, "--repair given twice");
		c->req->repair = true;
	}
	if (c->req->force && !c->req->repair)
		return fail(c->err, c->errlen, c->cmd, "--force only goes with --repair");
	return 0;
}

static int
parse_words(struct ctx *c)
{
	const char *w = next_word(c);

	if (w == NULL)
		return fail(
			c->err, c->errlen, NULL, "empty request: expected a command (try help)");
	if (strcmp(w, "event") == 0)
		return parse_event(c);
	if (strcmp(w, "keys") == 0)
		return parse_keys(c);
	if (strcmp(w, "rules") == 0)
		return parse_rules(c);
	if (strcmp(w, "limits") == 0)
		return parse_limits(c);
	if (strcmp(w, "session-token") == 0)
		return parse_session_token(c);
	if (strcmp(w, "order") == 0)
		return parse_order(c);
	if (strcmp(w, "reconcile") == 0)
		return parse_reconcile(c);
	if (strcmp(w, "stats") == 0 || strcmp(w, "help") == 0) {
		c->req->cmd = w[0] == 's' ? ADMIN_STATS : ADMIN_HELP;
		c->cmd = admin_cmd_name(c->req->cmd);
		return expect_end(c);
	}
	return fail(c->err, c->errlen, NULL,
		"unknown command '" SHOW "' (expected event, stats, keys, rules, limits, "
		"session-token, order, reconcile or help)",
		w);
}

int
admin_parse(const char *line, struct admin_req *req, char *err, size_t errlen)
{
	struct words *ws = malloc(sizeof(*ws));
	struct ctx c = {.ws = ws, .req = req, .err = err, .errlen = errlen};
	int rc;

	memset(req, 0, sizeof(*req));
	if (ws == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = split(line, ws, err, errlen);
	if (rc == 0)
		rc = parse_words(&c);
	if (rc != 0)
		memset(req, 0, sizeof(*req));
	/* The store held a secret if this was keys auth-set. */
	explicit_bzero(ws, sizeof(*ws));
	free(ws);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Writing JSON                                                                              */

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
	if (ev->created_at_ms != 0)
		jw_time(j, "created_at", ev->created_at_ms);
	jw_close(j, '}');
}

void
admin_json_key(struct json_writer *j, const char *key, const struct admin_key *k)
{
	jw_open(j, key, '{');
	jw_u64(j, "kid", k->kid);
	jw_str(j, "kind", admin_key_kind_name(k->kind));
	jw_bool(j, "current", k->current);
	jw_time(j, "created_at", k->created_at_ms);
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

/* ---------------------------------------------------------------------------------------- */
/* Reading JSON (for admin_render)                                                           */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jnode {
	enum jtype t;
	bool b;
	char *key;  /* member name inside an object */
	char *text; /* J_STR: the decoded string; J_NUM: the number as written */
	struct jnode *first, *last, *next;
	size_t n; /* children */
};

struct jreader {
	const char *p, *end;
	int depth;
};

#define JSON_DEPTH_MAX 16

static void
jfree(struct jnode *n)
{
	while (n != NULL) {
		struct jnode *next = n->next;

		jfree(n->first);
		free(n->key);
		free(n->text);
		free(n);
		n = next;
	}
}

static void
jskip(struct jreader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static void
utf8_put(char *out, size_t *o, unsigned cp)
{
	if (cp < 0x80) {
		out[(*o)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*o)++] = (char)(0xc0 | cp >> 6);
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		out[(*o)++] = (char)(0xe0 | cp >> 12);
		out[(*o)++] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		out[(*o)++] = (char)(0xf0 | cp >> 18);
		out[(*o)++] = (char)(0x80 | (cp >> 12 & 0x3f));
		out[(*o)++] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	}
}

static int
hex4(const char *p, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		int d = parse_hex_digit(p[i]);

		if (d < 0)
			return -1;
		v = v << 4 | (unsigned)d;
	}
	*out = v;
	return 0;
}

/* A string at r->p (on its opening quote), decoded into a new allocation. */
static char *
jstring(struct jreader *r)
{
	const char *p = r->p + 1;
	size_t o = 0;
	char *out;

	/* The decoded text is never longer than the escaped one. */
	out = malloc((size_t)(r->end - r->p) + 1);
	if (out == NULL)
		return NULL;
	while (p < r->end && *p != '"') {
		unsigned cp;

		if ((unsigned char)*p < 0x20)
			goto bad;
		if (*p != '\\') {
			out[o++] = *p++;
			continue;
		}
		if (++p == r->end)
			goto bad;
		switch (*p) {
		case '"':
		case '\\':
		case '/':
			out[o++] = *p;
			break;
		case 'b':
			out[o++] = '\b';
			break;
		case 'f':
			out[o++] = '\f';
			break;
		case 'n':
			out[o++] = '\n';
			break;
		case 'r':
			out[o++] = '\r';
			break;
		case 't':
			out[o++] = '\t';
			break;
		case 'u':
			if (r->end - p < 5 || hex4(p + 1, &cp) != 0)
				goto bad;
			p += 4;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				unsigned lo;

				if (r->end - p < 7 || p[1] != '\\' || p[2] != 'u' ||
					hex4(p + 3, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
					goto bad;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				goto bad;
			}
			/* Six escaped bytes always hold the (at most four) UTF-8 bytes. */
			utf8_put(out, &o, cp);
			break;
		default:
			goto bad;
		}
		p++;
	}
	if (p == r->end)
		goto bad;
	out[o] = '\0';
	r->p = p + 1;
	return out;
bad:
	free(out);
	return NULL;
}

static struct jnode *jvalue(struct jreader *r);

static void
jappend(struct jnode *parent, struct jnode *kid)
{
	if (parent->last != NULL)
		parent->last->next = kid;
	else
		parent->first = kid;
	parent->last = kid;
	parent->n++;
}

static struct jnode *
jcontainer(struct jreader *r, struct jnode *n)
{
	char close = *r->p == '{' ? '}' : ']';

	n->t = close == '}' ? J_OBJ : J_ARR;
	if (++r->depth > JSON_DEPTH_MAX)
		goto bad;
	r->p++;
	jskip(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		r->depth--;
		return n;
	}
	for (;;) {
		char *key = NULL;
		struct jnode *kid;

		jskip(r);
		if (n->t == J_OBJ) {
			if (r->p == r->end || *r->p != '"' || (key = jstring(r)) == NULL)
				goto bad;
			jskip(r);
			if (r->p == r->end || *r->p != ':') {
				free(key);
				goto bad;
			}
			r->p++;
		}
		kid = jvalue(r);
		if (kid == NULL) {
			free(key);
			goto bad;
		}
		kid->key = key;
		jappend(n, kid);
		jskip(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == close) {
			r->p++;
			r->depth--;
			return n;
		}
		goto bad;
	}
bad:
	jfree(n);
	return NULL;
}

static struct jnode *
jvalue(struct jreader *r)
{
	struct jnode *n;

	jskip(r);
	if (r->p == r->end)
		return NULL;
	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return NULL;
	switch (*r->p) {
	case '{':
	case '[':
		return jcontainer(r, n);
	case '"':
		n->t = J_STR;
		n->text = jstring(r);
		if (n->text == NULL)
			break;
		return n;
	case 't':
	case 'f':
	case 'n': {
		static const char *const lits[] = {"true", "false", "null"};

		for (int k = 0; k < 3; k++) {
			size_t l = strlen(lits[k]);

			if ((size_t)(r->end - r->p) >= l && memcmp(r->p, lits[k], l) == 0) {
				n->t = k == 2 ? J_NULL : J_BOOL;
				n->b = k == 0;
				r->p += l;
				return n;
			}
		}
		break;
	}
	default: {
		/* RFC 8259 section 6: -? int frac? exp? */
		const char *s = r->p, *q = s;

		if (q < r->end && *q == '-')
			q++;
		if (q == r->end || !isdigit((unsigned char)*q))
			break;
		if (*q == '0')
			q++;
		else
			while (q < r->end && isdigit((unsigned char)*q))
				q++;
		if (q < r->end && *q == '.') {
			if (++q == r->end || !isdigit((unsigned char)*q))
				break;
			while (q < r->end && isdigit((unsigned char)*q))
				q++;
		}
		if (q < r->end && (*q == 'e' || *q == 'E')) {
			q++;
			if (q < r->end && (*q == '+' || *q == '-'))
				q++;
			if (q == r->end || !isdigit((unsigned char)*q))
				break;
			while (q < r->end && isdigit((unsigned char)*q))
				q++;
		}
		n->t = J_NUM;
		n->text = strndup(s, (size_t)(q - s));
		if (n->text == NULL)
			break;
		r->p = q;
		return n;
	}
	}
	jfree(n);
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Rendering for people                                                                      */

/* Prints s with control characters as '?', so no answer can drive the terminal. */
static void
print_clean(FILE *out, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		fputc(c < 0x20 || c == 0x7f ? '?' : c, out);
	}
}

static size_t
clean_width(const char *s)
{
	size_t w = 0;

	/* Columns, not bytes: UTF-8 continuation bytes take no column. */
	for (; *s != '\0'; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* A scalar's text; for containers a short summary. */
static const char *
scalar_text(const struct jnode *n, char *tmp, size_t len)
{
	switch (n->t) {
	case J_NULL:
		return "-";
	case J_BOOL:
		return n->b ? "yes" : "no";
	case J_NUM:
	case J_STR:
		return n->text;
	case J_ARR:
		snprintf(tmp, len, "[%zu]", n->n);
		return tmp;
	case J_OBJ:
		snprintf(tmp, len, "{%zu}", n->n);
		return tmp;
	}
	return "";
}

static void
print_indent(FILE *out, int indent)
{
	for (int i = 0; i < indent; i++)
		fputc(' ', out);
}

static void render_object(FILE *out, const struct jnode *obj, int indent);

/* An array of objects as a table: a column per member of the first element. */
static void
render_table(FILE *out, const struct jnode *arr, int indent)
{
	const struct jnode *head = arr->first;
	size_t ncol = head->n, *width;
	char tmp[32];
	size_t c;

	width = calloc(ncol ? ncol : 1, sizeof(*width));
	if (width == NULL)
		return;
	c = 0;
	for (const struct jnode *k = head->first; k != NULL; k = k->next, c++)
		width[c] = clean_width(k->key);
	for (const struct jnode *row = arr->first; row != NULL; row = row->next) {
		c = 0;
		for (const struct jnode *k = head->first; k != NULL; k = k->next, c++) {
			const struct jnode *cell = NULL;

			for (const struct jnode *m = row->t == J_OBJ ? row->first : NULL; m != NULL;
				m = m->next) {
				if (strcmp(m->key, k->key) == 0) {
					cell = m;
					break;
				}
			}
			if (cell != NULL) {
				size_t w = clean_width(scalar_text(cell, tmp, sizeof(tmp)));

				width[c] = w > width[c] ? w : width[c];
			}
		}
	}
	print_indent(out, indent);
	c = 0;
	for (const struct jnode *k = head->first; k != NULL; k = k->next, c++) {
		for (const char *p = k->key; *p != '\0'; p++) {
			unsigned char ch = (unsigned char)*p;

			fputc(ch < 0x20 || ch == 0x7f ? '?' : toupper(ch), out);
		}
		if (k->next != NULL)
			fprintf(out, "%*s", (int)(width[c] - clean_width(k->key) + 2), "");
	}
	fputc('\n', out);
	for (const struct jnode *row = arr->first; row != NULL; row = row->next) {
		print_indent(out, indent);
		c = 0;
		for (const struct jnode *k = head->first; k != NULL; k = k->next, c++) {
			const char *text = "-";

			for (const struct jnode *m = row->t == J_OBJ ? row->first : NULL; m != NULL;
				m = m->next) {
				if (strcmp(m->key, k->key) == 0) {
					text = scalar_text(m, tmp, sizeof(tmp));
					break;
				}
			}
			print_clean(out, text);
			if (k->next != NULL)
				fprintf(out, "%*s", (int)(width[c] - clean_width(text) + 2), "");
		}
		fputc('\n', out);
	}
	free(width);
}

static void
render_member(FILE *out, const struct jnode *m, int indent, size_t keyw)
{
	char tmp[32];

	print_indent(out, indent);
	print_clean(out, m->key);
	fputc(':', out);
	if (m->t == J_OBJ) {
		fputc('\n', out);
		render_object(out, m, indent + 2);
		return;
	}
	if (m->t == J_ARR && m->n == 0) {
		fputs(" (none)\n", out);
		return;
	}
	if (m->t == J_ARR && m->first->t == J_OBJ) {
		fputc('\n', out);
		render_table(out, m, indent + 2);
		return;
	}
	fprintf(out, "%*s", (int)(keyw - clean_width(m->key) + 1), "");
	if (m->t == J_ARR) {
		for (const struct jnode *e = m->first; e != NULL; e = e->next) {
			print_clean(out, scalar_text(e, tmp, sizeof(tmp)));
			if (e->next != NULL)
				fputs(", ", out);
		}
	} else {
		print_clean(out, scalar_text(m, tmp, sizeof(tmp)));
	}
	fputc('\n', out);
}

static void
render_object(FILE *out, const struct jnode *obj, int indent)
{
	size_t keyw = 0;

	for (const struct jnode *m = obj->first; m != NULL; m = m->next) {
		size_t w = clean_width(m->key);

		if (indent == 0 && (strcmp(m->key, "ok") == 0 || strcmp(m->key, "message") == 0))
			continue;
		keyw = w > keyw ? w : keyw;
	}
	for (const struct jnode *m = obj->first; m != NULL; m = m->next) {
		if (indent == 0 && strcmp(m->key, "ok") == 0)
			continue;
		if (indent == 0 && strcmp(m->key, "message") == 0 && m->t == J_STR) {
			print_clean(out, m->text);
			fputc('\n', out);
			continue;
		}
		render_member(out, m, indent, keyw);
	}
}

int
admin_render(const char *answer, size_t len, FILE *out, FILE *err_out)
{
	struct jreader r = {.p = answer, .end = answer + len};
	const struct jnode *ok = NULL, *error = NULL;
	struct jnode *root = jvalue(&r);
	int rc = -EINVAL;

	jskip(&r);
	if (root == NULL || root->t != J_OBJ || r.p != r.end)
		goto done;
	for (const struct jnode *m = root->first; m != NULL; m = m->next) {
		if (strcmp(m->key, "ok") == 0)
			ok = m;
		else if (strcmp(m->key, "error") == 0)
			error = m;
	}
	if (ok == NULL || ok->t != J_BOOL)
		goto done;
	if (!ok->b) {
		if (err_out != NULL) {
			fputs("error: ", err_out);
			print_clean(err_out, error != NULL && error->t == J_STR
						     ? error->text
						     : "refused (no reason given)");
			fputc('\n', err_out);
		}
		rc = 1;
		goto done;
	}
	if (out != NULL)
		render_object(out, root, 0);
	rc = 0;
done:
	jfree(root);
	return rc;
}
