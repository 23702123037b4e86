/* SPDX-License-Identifier: BSD-3-Clause */
#include "admin/admin_request.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"

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
		return admin_fail(
			err, errlen, NULL, "request is longer than %d bytes", ADMIN_LINE_MAX - 1);
	for (size_t k = 0; k < len; k++) {
		unsigned char c = (unsigned char)line[k];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return admin_fail(err, errlen, NULL,
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
			return admin_fail(err, errlen, NULL, "request has more than %d words",
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
				return admin_fail(err, errlen, NULL,
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
				admin_fail(err, errlen, NULL,
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
				admin_fail(err, errlen, NULL,
					"the request is longer than %zu bytes", len - 1);
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
/* Durations                                                                                 */

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
		return admin_fail(err, errlen, cmd,
			"%s is not a duration: '" ADMIN_SHOW
			"' (expected a number with a unit: ms, s, m, "
			"h or d, such as 15m)",
			opt, s);
	if (ms % 1000 != 0)
		return admin_fail(err, errlen, cmd, "%s must be whole seconds, got %s", opt, s);
	if (ms / 1000 < min_s || ms / 1000 > max_s)
		return admin_fail(err, errlen, cmd, "%s must be %s..%s, got %s", opt, lo, hi, s);
	*out = ms / 1000;
	return 0;
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
		return admin_fail(c->err, c->errlen, c->cmd, "unexpected argument '" ADMIN_SHOW "'",
			c->ws->w[c->i]);
	return 0;
}

static int
event_id_arg(struct ctx *c, uint32_t *out)
{
	const char *w = next_word(c);
	uint64_t v;

	if (w == NULL)
		return admin_fail(
			c->err, c->errlen, c->cmd, "missing event id (a number 1..4294967295)");
	if (parse_u64(w, 1, ADMIN_EVENT_ID_MAX, &v) != 0)
		return admin_fail(c->err, c->errlen, c->cmd,
			"event id must be 1..4294967295, got " ADMIN_SHOW, w);
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
		"--pay-window", "--per-user-limit", "--queue-opens-at", "--draw-window",
		"--pow-bits", "--pow-auto-max"};
	enum {
		O_NAME,
		O_STOCK,
		O_STARTS,
		O_ENDS,
		O_PAY,
		O_LIMIT,
		O_QUEUE,
		O_DRAW,
		O_POW,
		O_POW_MAX,
		O_N
	};
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
				return admin_fail(c->err, c->errlen, c->cmd,
					"unexpected argument '" ADMIN_SHOW
					"' (quote a name with spaces: "
					"--name \"Big sale\")",
					w);
			return admin_fail(c->err, c->errlen, c->cmd,
				"unexpected argument '" ADMIN_SHOW "'", w);
		}
		for (o = 0; o < O_N; o++) {
			if (strcmp(name, opts[o]) == 0)
				break;
		}
		if (o == O_N)
			return admin_fail(c->err, c->errlen, c->cmd,
				"unknown option '" ADMIN_SHOW
				"' (expected --name, --stock, --starts-at, "
				"--ends-at, --pay-window, --per-user-limit, --queue-opens-at, "
				"--draw-window, --pow-bits or --pow-auto-max)",
				name);
		if (given[o])
			return admin_fail(c->err, c->errlen, c->cmd, "%s given twice", opts[o]);
		if (val == NULL)
			return admin_fail(c->err, c->errlen, c->cmd, "%s needs a value", opts[o]);
		given[o] = true;
		last = opts[o];
		switch (o) {
		case O_NAME:
			rc = admin_name_check(c->cmd, val, c->err, c->errlen);
			if (rc != 0)
				return rc;
			memcpy(ev->name, val, strlen(val) + 1);
			break;
		case O_STOCK:
			if (parse_u64(val, 0, ADMIN_STOCK_MAX, &v) != 0)
				return admin_fail(c->err, c->errlen, c->cmd,
					"--stock must be 0..%u, got " ADMIN_SHOW, ADMIN_STOCK_MAX,
					val);
			ev->stock = (uint32_t)v;
			break;
		case O_STARTS:
		case O_ENDS:
		case O_QUEUE:
			if (parse_time(val, o == O_STARTS ? &ev->starts_at_ms
					    : o == O_ENDS ? &ev->ends_at_ms
							  : &ev->queue_opens_at_ms) != 0)
				return admin_fail(c->err, c->errlen, c->cmd,
					"%s is not a time: '" ADMIN_SHOW
					"' (expected RFC 3339 such as "
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
				return admin_fail(c->err, c->errlen, c->cmd,
					"--per-user-limit must be 1 (one item per user for now), "
					"got " ADMIN_SHOW,
					val);
			ev->per_user_limit = 1;
			break;
		case O_DRAW:
			rc = parse_seconds(c->cmd, "--draw-window", val, 0, ADMIN_DRAW_WINDOW_MAX_S,
				&v, c->err, c->errlen);
			if (rc != 0)
				return rc;
			ev->draw_window_s = (uint32_t)v;
			break;
		case O_POW:
		case O_POW_MAX:
			if (parse_u64(val, 0, ADMIN_POW_BITS_MAX, &v) != 0)
				return admin_fail(c->err, c->errlen, c->cmd,
					"%s must be 0..%u (leading zero bits of the challenge), "
					"got " ADMIN_SHOW,
					opts[o], ADMIN_POW_BITS_MAX, val);
			if (o == O_POW)
				ev->pow_bits = (uint8_t)v;
			else
				ev->pow_auto_max = (uint8_t)v;
			break;
		}
	}
	if (given[O_QUEUE] && ev->queue_opens_at_ms == 0)
		return admin_fail(c->err, c->errlen, c->cmd,
			"--queue-opens-at must be after 1970-01-01T00:00:00Z, got " ADMIN_SHOW,
			"0");
	/* A draw without a pre-queue takes its entrants from the start. */
	if (ev->draw_window_s != 0 && !given[O_QUEUE])
		ev->queue_opens_at_ms = ev->starts_at_ms;
	for (int o = 0; o < O_LIMIT; o++) {
		if (!given[o])
			return admin_fail(c->err, c->errlen, c->cmd,
				"missing %s (required: --name, --stock, --starts-at, --ends-at, "
				"--pay-window)",
				opts[o]);
	}
	rc = admin_event_check(ev, c->err, c->errlen);
	if (rc != 0) {
		char why[ADMIN_ERR_MAX];

		snprintf(why, sizeof(why), "%s", c->err);
		return admin_fail(c->err, c->errlen, c->cmd, "%s", why);
	}
	return 0;
}

/* event pow ID BITS [--auto-max M] */
static int
parse_event_pow(struct ctx *c)
{
	struct admin_req *req = c->req;
	const char *w;
	uint64_t v;
	int rc = event_id_arg(c, &req->event_id);

	if (rc != 0)
		return rc;
	w = next_word(c);
	if (w == NULL)
		return admin_fail(c->err, c->errlen, c->cmd,
			"missing the difficulty: event pow ID BITS (0..%u leading zero bits; 0: no "
			"challenge)",
			ADMIN_POW_BITS_MAX);
	if (parse_u64(w, 0, ADMIN_POW_BITS_MAX, &v) != 0)
		return admin_fail(c->err, c->errlen, c->cmd,
			"BITS must be 0..%u (leading zero bits of the challenge), got " ADMIN_SHOW,
			ADMIN_POW_BITS_MAX, w);
	req->pow_bits = (uint8_t)v;
	while (c->i < c->ws->n) {
		const char *val;
		char name[32];

		w = next_word(c);
		if (!option(c, w, name, sizeof(name), &val))
			return admin_fail(c->err, c->errlen, c->cmd,
				"unexpected argument '" ADMIN_SHOW "'", w);
		if (strcmp(name, "--auto-max") != 0)
			return admin_fail(c->err, c->errlen, c->cmd,
				"unknown option '" ADMIN_SHOW "' (expected --auto-max)", name);
		if (req->pow_auto_given)
			return admin_fail(c->err, c->errlen, c->cmd, "--auto-max given twice");
		if (val == NULL)
			return admin_fail(c->err, c->errlen, c->cmd,
				"--auto-max needs a value: the most bits the control plane may "
				"raise it to by itself (0: never)");
		if (parse_u64(val, 0, ADMIN_POW_BITS_MAX, &v) != 0)
			return admin_fail(c->err, c->errlen, c->cmd,
				"--auto-max must be 0..%u, got " ADMIN_SHOW, ADMIN_POW_BITS_MAX,
				val);
		req->pow_auto_given = true;
		req->pow_auto_max = (uint8_t)v;
	}
	if (req->pow_auto_given && req->pow_auto_max != 0 && req->pow_auto_max < req->pow_bits)
		return admin_fail(c->err, c->errlen, c->cmd,
			"--auto-max (%u) must be at least BITS (%u), or 0 for no automatic raise",
			req->pow_auto_max, req->pow_bits);
	return 0;
}

/* event verify-draw ID [--commitment HEX] */
static int
parse_event_verify(struct ctx *c)
{
	struct admin_req *req = c->req;
	int rc = event_id_arg(c, &req->event_id);

	if (rc != 0)
		return rc;
	while (c->i < c->ws->n) {
		const char *w = next_word(c), *val;
		char name[32];
		size_t n;

		if (!option(c, w, name, sizeof(name), &val))
			return admin_fail(c->err, c->errlen, c->cmd,
				"unexpected argument '" ADMIN_SHOW "'", w);
		if (strcmp(name, "--commitment") != 0)
			return admin_fail(c->err, c->errlen, c->cmd,
				"unknown option '" ADMIN_SHOW "' (expected --commitment)", name);
		if (req->has_commitment)
			return admin_fail(c->err, c->errlen, c->cmd, "--commitment given twice");
		if (val == NULL ||
			parse_hex(val, req->commitment, sizeof(req->commitment), &n) != 0 ||
			n != sizeof(req->commitment))
			return admin_fail(c->err, c->errlen, c->cmd,
				"--commitment must be the 64 hex digits of the seed's SHA-256 (the "
				"seed_sha256 published before the pre-queue opened), "
				"got " ADMIN_SHOW,
				val != NULL ? val : "nothing");
		req->has_commitment = true;
	}
	return 0;
}

/* event list [--state STATE] [--limit N] [--after ID] */
static int
parse_event_list(struct ctx *c)
{
	struct admin_req *req = c->req;
	bool limit_given = false, after_given = false;
	uint64_t v;

	req->list_limit = ADMIN_LIST_LIMIT_DEFAULT;
	while (c->i < c->ws->n) {
		const char *w = next_word(c), *val;
		char opt[32];

		if (!option(c, w, opt, sizeof(opt), &val))
			return admin_fail(c->err, c->errlen, c->cmd,
				"unexpected argument '" ADMIN_SHOW "'", w);
		if (strcmp(opt, "--state") != 0 && strcmp(opt, "--limit") != 0 &&
			strcmp(opt, "--after") != 0)
			return admin_fail(c->err, c->errlen, c->cmd,
				"unknown option '" ADMIN_SHOW
				"' (expected --state, --limit or --after)",
				opt);
		if (val == NULL)
			return admin_fail(c->err, c->errlen, c->cmd, "%s needs a value", opt);
		if (opt[2] == 's') {
			if (req->list_state_given)
				return admin_fail(c->err, c->errlen, c->cmd, "--state given twice");
			if (admin_event_state_parse(val, &req->list_state) != 0)
				return admin_fail(c->err, c->errlen, c->cmd,
					"--state must be draft, preheated, open, closed or "
					"archived, got " ADMIN_SHOW,
					val);
			req->list_state_given = true;
		} else if (opt[2] == 'l') {
			if (limit_given)
				return admin_fail(c->err, c->errlen, c->cmd, "--limit given twice");
			if (parse_u64(val, 1, ADMIN_LIST_LIMIT_MAX, &v) != 0)
				return admin_fail(c->err, c->errlen, c->cmd,
					"--limit must be 1..%u events, got " ADMIN_SHOW,
					ADMIN_LIST_LIMIT_MAX, val);
			req->list_limit = (uint32_t)v;
			limit_given = true;
		} else {
			if (after_given)
				return admin_fail(c->err, c->errlen, c->cmd, "--after given twice");
			if (parse_u64(val, 0, ADMIN_EVENT_ID_MAX, &v) != 0)
				return admin_fail(c->err, c->errlen, c->cmd,
					"--after must be an event id, 0..4294967295 (the list's "
					"\"next_after\"), got " ADMIN_SHOW,
					val);
			req->list_after = (uint32_t)v;
			after_given = true;
		}
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
		{"archive", ADMIN_EVENT_ARCHIVE},
		{"pow", ADMIN_EVENT_POW},
		{"verify-draw", ADMIN_EVENT_VERIFY_DRAW},
	};
	const char *w = next_word(c);
	int rc;

	if (w == NULL)
		return admin_fail(c->err, c->errlen, "event",
			"expected a subcommand: create, preheat, open, close, show, list, "
			"archive, pow or verify-draw");
	for (size_t k = 0; k < sizeof(subs) / sizeof(subs[0]); k++) {
		if (strcmp(w, subs[k].word) != 0)
			continue;
		c->req->cmd = subs[k].cmd;
		c->cmd = admin_cmd_name(subs[k].cmd);
		switch (subs[k].cmd) {
		case ADMIN_EVENT_CREATE:
			return parse_event_create(c);
		case ADMIN_EVENT_LIST:
			return parse_event_list(c);
		case ADMIN_EVENT_POW:
			return parse_event_pow(c);
		case ADMIN_EVENT_VERIFY_DRAW:
			return parse_event_verify(c);
		default:
			rc = event_id_arg(c, &c->req->event_id);
			return rc != 0 ? rc : expect_end(c);
		}
	}
	return admin_fail(c->err, c->errlen, "event",
		"unknown subcommand '" ADMIN_SHOW
		"' (expected create, preheat, open, close, show, list, archive, pow or "
		"verify-draw)",
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
		return admin_fail(c->err, c->errlen, "keys",
			"expected a subcommand: rotate, list or auth-set");
	if (strcmp(w, "rotate") == 0 || strcmp(w, "list") == 0) {
		c->req->cmd = w[0] == 'r' ? ADMIN_KEYS_ROTATE : ADMIN_KEYS_LIST;
		c->cmd = admin_cmd_name(c->req->cmd);
		return expect_end(c);
	}
	if (strcmp(w, "auth-set") != 0)
		return admin_fail(c->err, c->errlen, "keys",
			"unknown subcommand '" ADMIN_SHOW "' (expected rotate, list or auth-set)",
			w);
	c->req->cmd = ADMIN_KEYS_AUTH_SET;
	c->cmd = admin_cmd_name(c->req->cmd);
	kid = next_word(c);
	hex = next_word(c);
	if (kid == NULL)
		return admin_fail(c->err, c->errlen, c->cmd,
			"missing key id and secret: keys auth-set KID HEX");
	if (parse_u64(kid, 0, UINT32_MAX, &v) != 0)
		return admin_fail(c->err, c->errlen, c->cmd,
			"key id must be 0..4294967295, got " ADMIN_SHOW, kid);
	c->req->kid = (uint32_t)v;
	if (hex == NULL)
		return admin_fail(c->err, c->errlen, c->cmd,
			"missing secret: %u..%u hex digits (%u..%u bytes) after the key id",
			2 * ADMIN_SECRET_MIN, 2 * ADMIN_SECRET_MAX, ADMIN_SECRET_MIN,
			ADMIN_SECRET_MAX);
	len = strlen(hex);
	/* The secret is never quoted back: messages end up in logs and terminals. */
	rc = parse_hex(hex, c->req->secret, ADMIN_SECRET_MAX, &n);
	if (rc == -EINVAL)
		return admin_fail(c->err, c->errlen, c->cmd,
			"the secret must be hex digits, got another character at offset %zu", n);
	if (rc != 0 || n < ADMIN_SECRET_MIN)
		return admin_fail(c->err, c->errlen, c->cmd,
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
		return admin_fail(
			c->err, c->errlen, "rules", "expected a subcommand: add, del or list");
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
		return admin_fail(c->err, c->errlen, "rules",
			"unknown subcommand '" ADMIN_SHOW "' (expected add, del or list)", w);
	c->cmd = admin_cmd_name(c->req->cmd);
	kind = next_word(c);
	value = next_word(c);
	if (kind == NULL)
		return admin_fail(c->err, c->errlen, c->cmd,
			"missing rule: ip A.B.C.D[/LEN], user ID or device ID");
	if (value == NULL && (strcmp(kind, "ip") == 0 || strcmp(kind, "user") == 0 ||
				     strcmp(kind, "device") == 0))
		return admin_fail(c->err, c->errlen, c->cmd, "missing the %s to %s after '%s'",
			strcmp(kind, "ip") == 0 ? "address or network"
			: kind[0] == 'u'	? "user id"
						: "device id",
			c->req->cmd == ADMIN_RULES_ADD ? "block" : "unblock", kind);
	if (admin_rule_parse(kind, value != NULL ? value : "", &c->req->rule, why, sizeof(why)) !=
		0)
		return admin_fail(c->err, c->errlen, c->cmd, "%s", why);
	return expect_end(c);
}

static int
rate_burst(struct ctx *c, const char *name, const char *val, uint32_t *rate, uint32_t *burst)
{
	const char *slash = strchr(val, '/');
	char r[24];
	uint64_t v;

	if (slash == NULL || (size_t)(slash - val) >= sizeof(r))
		return admin_fail(c->err, c->errlen, c->cmd,
			"%s: expected RATE/BURST such as 20/40, got " ADMIN_SHOW, name, val);
	memcpy(r, val, (size_t)(slash - val));
	r[slash - val] = '\0';
	if (parse_u64(r, 0, ADMIN_RATE_MAX, &v) != 0)
		return admin_fail(c->err, c->errlen, c->cmd,
			"%s rate must be 0..%u per second (0: no limit), got " ADMIN_SHOW, name,
			ADMIN_RATE_MAX, r[0] != '\0' ? r : "nothing before the '/'");
	*rate = (uint32_t)v;
	if (parse_u64(slash + 1, 0, ADMIN_BURST_MAX, &v) != 0)
		return admin_fail(c->err, c->errlen, c->cmd,
			"%s burst must be 0..%u (0: one second's worth), got " ADMIN_SHOW, name,
			ADMIN_BURST_MAX, slash[1] != '\0' ? slash + 1 : "nothing after the '/'");
	*burst = (uint32_t)v;
	return 0;
}

/* "forward RATE[/BURST]": the per-event forward budget of all data planes together. */
static int
forward_budget(struct ctx *c, const char *val, struct wire_limits *l)
{
	const char *slash = strchr(val, '/');
	size_t n = slash != NULL ? (size_t)(slash - val) : strlen(val);
	char rate[24];
	uint64_t r = 0, b = 0;

	if (n < sizeof(rate)) {
		memcpy(rate, val, n);
		rate[n] = '\0';
	}
	if (n >= sizeof(rate) || parse_u64(rate, 0, ADMIN_FORWARD_MAX, &r) != 0 ||
		(slash != NULL && parse_u64(slash + 1, 0, ADMIN_FORWARD_MAX, &b) != 0))
		return admin_fail(c->err, c->errlen, c->cmd,
			"forward must be RATE or RATE/BURST, each 0..%u reservations per event "
			"(rate per second, 0: no limit; burst 0: one second's worth), "
			"got " ADMIN_SHOW,
			ADMIN_FORWARD_MAX, val);
	if (r == 0 && b != 0)
		return admin_fail(c->err, c->errlen, c->cmd,
			"forward " ADMIN_SHOW ": a burst needs a rate (rate 0 means no limit)",
			val);
	l->event_forward_per_s = (uint32_t)r;
	l->event_forward_burst = (uint32_t)b;
	return 0;
}

static int
parse_limits(struct ctx *c)
{
	const char *w = next_word(c);
	struct admin_req *req = c->req;

	if (w == NULL)
		return admin_fail(
			c->err, c->errlen, "limits", "expected a subcommand: set or show");
	if (strcmp(w, "show") == 0) {
		req->cmd = ADMIN_LIMITS_SHOW;
		c->cmd = admin_cmd_name(req->cmd);
		return expect_end(c);
	}
	if (strcmp(w, "set") != 0)
		return admin_fail(c->err, c->errlen, "limits",
			"unknown subcommand '" ADMIN_SHOW "' (expected set or show)", w);
	req->cmd = ADMIN_LIMITS_SET;
	c->cmd = admin_cmd_name(req->cmd);
	if (c->i == c->ws->n)
		return admin_fail(c->err, c->errlen, c->cmd,
			"expected one or more of: ip RATE/BURST, user RATE/BURST, device "
			"RATE/BURST, forward RATE[/BURST]");
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
			return admin_fail(c->err, c->errlen, c->cmd,
				"unknown limit '" ADMIN_SHOW
				"' (expected ip, user, device or forward)",
				name);
		if (req->limits_given & bit)
			return admin_fail(c->err, c->errlen, c->cmd, "%s given twice", name);
		if (val == NULL)
			return admin_fail(c->err, c->errlen, c->cmd, "%s needs a value: %s", name,
				bit == ADMIN_LIMIT_FORWARD
					? "RATE[/BURST], reservations per second per event, "
					  "such as 20000/5000"
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
		default:
			rc = forward_budget(c, val, &req->limits);
			break;
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
		return admin_fail(
			c->err, c->errlen, c->cmd, "missing user id (1..9223372036854775807)");
	if (parse_u64(w, 1, ADMIN_USER_MAX, &c->req->user) != 0)
		return admin_fail(c->err, c->errlen, c->cmd,
			"user id must be 1..9223372036854775807, got " ADMIN_SHOW, w);
	while (c->i < c->ws->n) {
		const char *val;
		char name[32];
		int rc;

		w = next_word(c);
		if (!option(c, w, name, sizeof(name), &val))
			return admin_fail(c->err, c->errlen, c->cmd,
				"unexpected argument '" ADMIN_SHOW "'", w);
		if (strcmp(name, "--ttl") != 0)
			return admin_fail(c->err, c->errlen, c->cmd,
				"unknown option '" ADMIN_SHOW "' (expected --ttl)", name);
		if (ttl_given)
			return admin_fail(c->err, c->errlen, c->cmd, "--ttl given twice");
		if (val == NULL)
			return admin_fail(c->err, c->errlen, c->cmd,
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
		return admin_fail(c->err, c->errlen, "order", "expected a subcommand: pay, cancel");
	if (strcmp(w, "pay") == 0)
		c->req->cmd = ADMIN_ORDER_PAY;
	else if (strcmp(w, "cancel") == 0)
		c->req->cmd = ADMIN_ORDER_CANCEL;
	else
		return admin_fail(c->err, c->errlen, "order",
			"unknown subcommand '" ADMIN_SHOW "' (expected pay or cancel)", w);
	c->cmd = admin_cmd_name(c->req->cmd);
	w = next_word(c);
	if (w == NULL)
		return admin_fail(c->err, c->errlen, c->cmd, "missing order id");
	if (parse_u64(w, 1, ADMIN_ORDER_MAX, &c->req->order_id) != 0)
		return admin_fail(c->err, c->errlen, c->cmd,
			"order id must be 1..9223372036854775807, got " ADMIN_SHOW, w);
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
				return admin_fail(c->err, c->errlen, c->cmd, "--force given twice");
			c->req->force = true;
			continue;
		}
		if (strcmp(w, "--repair") != 0)
			return admin_fail(c->err, c->errlen, c->cmd,
				strncmp(w, "--", 2) == 0 ? "unknown option '" ADMIN_SHOW
							   "' (expected --repair or --force)"
							 : "unexpected argument '" ADMIN_SHOW "'",
				w);
		if (c->req->repair)
			return admin_fail(c->err, c->errlen, c->cmd, "--repair given twice");
		c->req->repair = true;
	}
	if (c->req->force && !c->req->repair)
		return admin_fail(c->err, c->errlen, c->cmd, "--force only goes with --repair");
	return 0;
}

/* audit [EVENT_ID] [--limit N]: event_id 0 for every event's. */
static int
parse_audit(struct ctx *c)
{
	bool limit_given = false;
	uint64_t v;

	c->req->cmd = ADMIN_AUDIT;
	c->cmd = admin_cmd_name(c->req->cmd);
	c->req->list_limit = ADMIN_AUDIT_LIMIT_DEFAULT;
	if (c->i < c->ws->n && strncmp(c->ws->w[c->i], "--", 2) != 0) {
		int rc = event_id_arg(c, &c->req->event_id);

		if (rc != 0)
			return rc;
	}
	while (c->i < c->ws->n) {
		const char *w = next_word(c), *val;
		char opt[32];

		if (!option(c, w, opt, sizeof(opt), &val) || strcmp(opt, "--limit") != 0)
			return admin_fail(c->err, c->errlen, c->cmd,
				"unexpected argument '" ADMIN_SHOW "' (expected --limit N)", w);
		if (limit_given)
			return admin_fail(c->err, c->errlen, c->cmd, "--limit given twice");
		if (val == NULL || parse_u64(val, 1, ADMIN_AUDIT_LIMIT_MAX, &v) != 0)
			return admin_fail(c->err, c->errlen, c->cmd,
				"--limit must be 1..%u commands, got " ADMIN_SHOW,
				ADMIN_AUDIT_LIMIT_MAX, val != NULL ? val : "nothing");
		c->req->list_limit = (uint32_t)v;
		limit_given = true;
	}
	return 0;
}

static int
parse_words(struct ctx *c)
{
	const char *w = next_word(c);

	if (w == NULL)
		return admin_fail(
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
	if (strcmp(w, "audit") == 0)
		return parse_audit(c);
	if (strcmp(w, "stats") == 0 || strcmp(w, "help") == 0) {
		c->req->cmd = w[0] == 's' ? ADMIN_STATS : ADMIN_HELP;
		c->cmd = admin_cmd_name(c->req->cmd);
		return expect_end(c);
	}
	return admin_fail(c->err, c->errlen, NULL,
		"unknown command '" ADMIN_SHOW "' (expected event, stats, keys, rules, limits, "
		"session-token, order, reconcile, audit or help)",
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
