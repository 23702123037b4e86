/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CONTROLPLANE_ADMIN_PROTO_H
#define FG_CONTROLPLANE_ADMIN_PROTO_H
/*
 * The admin socket's protocol, shared by flashgate-controlplane (the server) and flashgatectl
 * (the client), so that both validate a command the same way (docs/operations.md is the
 * reference of every command).
 *
 * A request is one line of words, "event create 7 --name \"Big sale\" --stock 1000 ...",
 * ended by '\n'; the answer is one JSON object on one line, {"ok":true,...} or
 * {"ok":false,"error":"..."}. Words are split at spaces and tabs; "double quotes" group words
 * (inside them \" and \\ stand for " and \), 'single quotes' group them literally, and quoted
 * and unquoted parts next to each other make one word, as in a shell. Options are
 * "--name VALUE" or "--name=VALUE".
 *
 * admin_parse() turns a line into a struct admin_req with every value checked, or refuses it
 * with one message that names the command, what is wrong and what was given
 * ("event create: --stock must be 0..100000000, got -5"). Nothing here touches PostgreSQL,
 * Redis or the network; the types below are also what controlplane/pg_store.h stores.
 *
 * The JSON writer (admin_json_*) builds answers into a caller buffer; admin_render() prints an
 * answer for people (tables for lists), for flashgatectl.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/json_writer.h"
#include "common/wire.h"

#define ADMIN_LINE_MAX	       4096 /* bytes of a request line, with its '\n' */
#define ADMIN_WORDS_MAX	       32   /* words in a request */
#define ADMIN_NAME_MAX	       63   /* bytes of an event name (WIRE_NAME_MAX - 1) */
#define ADMIN_EVENT_ID_MAX     UINT32_MAX
#define ADMIN_STOCK_MAX	       100000000u
#define ADMIN_PAY_WINDOW_MIN_S 10u
#define ADMIN_PAY_WINDOW_MAX_S 86400u
#define ADMIN_USER_MAX	       ((uint64_t)INT64_MAX)
#define ADMIN_ORDER_MAX	       ((uint64_t)INT64_MAX)
#define ADMIN_TTL_DEFAULT_S    3600u
#define ADMIN_TTL_MAX_S	       (30u * 86400u)
#define ADMIN_SECRET_MIN       WIRE_SECRET_MIN /* bytes of an HMAC key */
#define ADMIN_SECRET_MAX       WIRE_SECRET_MAX
#define ADMIN_RATE_MAX	       1000000u	 /* tokens per second of a per-client limit */
#define ADMIN_BURST_MAX	       4194u	 /* what a data plane's table entry holds (RL_BURST_MAX) */
#define ADMIN_FORWARD_MAX      10000000u /* reservations per second per event */
#define ADMIN_DEVICE_MAX       (WIRE_DEVICE_MAX - 1)
#define ADMIN_RULE_TEXT_MAX    64  /* room for admin_rule_value() of any rule, with its NUL */
#define ADMIN_ERR_MAX	       256 /* a message buffer that holds every message of this module */

enum admin_cmd {
	ADMIN_HELP = 1,
	ADMIN_EVENT_CREATE,
	ADMIN_EVENT_PREHEAT,
	ADMIN_EVENT_OPEN,
	ADMIN_EVENT_CLOSE,
	ADMIN_EVENT_SHOW,
	ADMIN_EVENT_LIST,
	ADMIN_STATS,
	ADMIN_KEYS_ROTATE,
	ADMIN_KEYS_LIST,
	ADMIN_KEYS_AUTH_SET,
	ADMIN_RULES_ADD,
	ADMIN_RULES_DEL,
	ADMIN_RULES_LIST,
	ADMIN_LIMITS_SET,
	ADMIN_LIMITS_SHOW,
	ADMIN_SESSION_TOKEN,
	ADMIN_ORDER_PAY,
	ADMIN_RECONCILE,
};

/*
 * The life of an event (PostgreSQL's events.state):
 *
 *   draft --preheat--> preheated --open--> open --close--> closed
 *     |                 |    ^ preheat again (reloads Redis)  ^
 *     +-----------------+----+------------- close ------------+
 *
 * preheat loads the stock from PostgreSQL into Redis: allowed from draft and again from
 * preheated (e.g. after Redis lost it), refused while the sale is open and once closed.
 * open needs a preheated event. close ends the sale from any state but closed. closed is final.
 */
enum admin_event_state {
	ADMIN_EV_DRAFT = 0,
	ADMIN_EV_PREHEATED,
	ADMIN_EV_OPEN,
	ADMIN_EV_CLOSED,
};
#define ADMIN_EV_STATES 4

/* An event: what the operator defines (event create) and, as stored, its state and stock. */
struct admin_event {
	uint32_t id;		       /* 1..2^32-1 */
	uint32_t stock;		       /* items on sale, 0..ADMIN_STOCK_MAX */
	uint64_t starts_at_ms;	       /* Unix ms; the sale is [starts_at, ends_at) */
	uint64_t ends_at_ms;	       /* after starts_at */
	uint32_t pay_window_s;	       /* ADMIN_PAY_WINDOW_MIN_S..ADMIN_PAY_WINDOW_MAX_S */
	uint32_t per_user_limit;       /* 1 */
	char name[ADMIN_NAME_MAX + 1]; /* 1..63 bytes of UTF-8 without control characters */
	/* Filled by the store; ignored by event create. */
	enum admin_event_state state;
	uint32_t available; /* stock left in PostgreSQL */
	uint64_t created_at_ms;
};

/* The same values as enum wire_rule_kind. */
enum admin_rule_kind {
	ADMIN_RULE_IP = WIRE_RULE_BLOCK_IP_CIDR,
	ADMIN_RULE_USER = WIRE_RULE_BLOCK_USER,
	ADMIN_RULE_DEVICE = WIRE_RULE_BLOCK_DEVICE,
};

/* A risk rule: a blocked IPv4 network, user or device id. */
struct admin_rule {
	enum admin_rule_kind kind;
	uint32_t ip;	/* ADMIN_RULE_IP: network address, host byte order, no host bits set */
	uint8_t prefix; /* ADMIN_RULE_IP: 0..32 */
	uint64_t user;	/* ADMIN_RULE_USER: 1..2^63-1 */
	char device[ADMIN_DEVICE_MAX + 1]; /* ADMIN_RULE_DEVICE: 1..63 visible ASCII bytes */
};

/* An HMAC key as stored. The secret is never part of an answer or a message. */
struct admin_key {
	uint32_t kid;
	uint8_t kind; /* enum wire_key_kind */
	bool current; /* the key that mints (one per kind) */
	uint8_t len;  /* ADMIN_SECRET_MIN..ADMIN_SECRET_MAX */
	uint8_t secret[ADMIN_SECRET_MAX];
	uint64_t created_at_ms;
};

/* Which limits a "limits set" gives (the others keep their value). */
#define ADMIN_LIMIT_IP	    (1u << 0)
#define ADMIN_LIMIT_USER    (1u << 1)
#define ADMIN_LIMIT_DEVICE  (1u << 2)
#define ADMIN_LIMIT_FORWARD (1u << 3)

/* A parsed request. Only the fields of its command are set; the rest are zero. */
struct admin_req {
	enum admin_cmd cmd;
	uint32_t event_id;	  /* event preheat/open/close/show, reconcile */
	struct admin_event event; /* event create */
	uint32_t kid;		  /* keys auth-set */
	uint8_t secret_len;	  /* keys auth-set: a secret; never log a request line */
	uint8_t secret[ADMIN_SECRET_MAX];
	struct admin_rule rule;	   /* rules add, rules del */
	struct wire_limits limits; /* limits set: the values given */
	unsigned limits_given;	   /* limits set: ADMIN_LIMIT_* */
	uint64_t user;		   /* session-token */
	uint64_t ttl_s;		   /* session-token: ADMIN_TTL_DEFAULT_S unless --ttl */
	uint64_t order_id;	   /* order pay */
	bool repair;		   /* reconcile --repair */
	bool force;		   /* reconcile --repair --force: even while the sale is open */
};

/*
 * Parses one request line (a trailing "\n" or "\r\n" is allowed) into *req with every value
 * checked. Returns 0; or -EINVAL with one message in err (ADMIN_ERR_MAX bytes hold any) and
 * *req zeroed. Secrets are never quoted in a message.
 */
int admin_parse(const char *line, struct admin_req *req, char *err, size_t errlen);

/*
 * Writes the words argv[0..argc) as one request line that admin_parse() splits back into the
 * same words, quoting where needed, NUL-terminated and without '\n'. For a client whose words
 * come already split (from its command line). Returns the length; -ENOSPC when it does not fit
 * in len bytes or ADMIN_LINE_MAX; -EINVAL when a word has a control character (err says which).
 */
int admin_join(int argc, char *const argv[], char *buf, size_t len, char *err, size_t errlen);

/* The command's words, "event create"; "?" for a value that is not a command. */
const char *admin_cmd_name(enum admin_cmd cmd);

/*
 * Checks an event as event create does (id, name, stock, times, pay window, per-user limit).
 * Returns 0, or -EINVAL with a message naming the option ("--stock must be ...").
 */
int admin_event_check(const struct admin_event *ev, char *err, size_t errlen);

/* "draft", "preheated", "open", "closed"; "?" for a value that is not a state. */
const char *admin_event_state_name(enum admin_event_state st);

/* The state named s (as admin_event_state_name() writes it). Returns 0, or -EINVAL. */
int admin_event_state_parse(const char *s, enum admin_event_state *out);

/*
 * Whether event id may go from state from to state to (the machine above). to is reached by
 * its command: ADMIN_EV_PREHEATED by preheat, ADMIN_EV_OPEN by open, ADMIN_EV_CLOSED by close.
 * Returns 0, or -EPERM with a message that says why and what to do instead.
 */
int admin_event_transition(uint32_t id, enum admin_event_state from, enum admin_event_state to,
	char *err, size_t errlen);

/*
 * Parses a rule from its kind word ("ip", "user", "device") and value ("198.18.0.0/24",
 * "198.18.0.7", "42", "abc-123"). Returns 0, or -EINVAL with a message (an unknown kind, a bad
 * address or prefix, host bits set, a user id out of range, a device id that is empty, too long
 * or not visible ASCII).
 */
int admin_rule_parse(
	const char *kind, const char *value, struct admin_rule *out, char *err, size_t errlen);

/* "ip", "user", "device"; "?" for a value that is not a kind. */
const char *admin_rule_kind_name(enum admin_rule_kind kind);

/*
 * Writes the canonical value of a valid rule ("198.18.0.7" for a /32, "198.18.0.0/24", "42",
 * the device id) to buf, NUL-terminated: the same rule always gives the same text. Returns its
 * length, or -ENOSPC (ADMIN_RULE_TEXT_MAX always fits).
 */
int admin_rule_value(const struct admin_rule *r, char *buf, size_t len);

/* "sale", "auth"; "?" otherwise. */
const char *admin_key_kind_name(uint8_t kind);

/* The text that "help" shows: every command with its arguments, one per line. */
const char *admin_help_text(void);

/*
 * Admin answers are written with common/json_writer.h: admin_json_ok() starts one, the
 * admin_json_*() helpers below write the protocol's objects, admin_json_end() finishes it.
 */

/* Starts an answer in buf (cap bytes): writes {"ok":true and leaves the object open. */
void admin_json_ok(struct json_writer *j, char *buf, size_t cap);

/* An event as an object: id, name, state, stock, available, starts_at, ends_at, ... */
void admin_json_event(struct json_writer *j, const char *key, const struct admin_event *ev);

/* A key as an object: kid, kind, current, created_at (never the secret). */
void admin_json_key(struct json_writer *j, const char *key, const struct admin_key *k);

/* A rule as an object: kind, value, and created_at when created_at_ms is not 0. */
void admin_json_rule(
	struct json_writer *j, const char *key, const struct admin_rule *r, uint64_t created_at_ms);

/* Limits as an object: ip, user, device ({"rate":R,"burst":B}) and forward_per_s. */
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

/*
 * Prints an answer line (len bytes, need not be NUL-terminated) for people: an error as
 * "error: <message>" on err_out; members as "name: value" lines, a "message" member as a plain
 * line, arrays of objects as tables (columns from the keys of the first element), to out.
 * Control characters in strings are shown as '?'. out or err_out NULL: print nothing there.
 * Returns 0 for an ok answer, 1 for a refused one, -EINVAL when the answer is not a JSON object
 * with a boolean "ok" (nothing printed).
 */
int admin_render(const char *answer, size_t len, FILE *out, FILE *err_out);

#endif
