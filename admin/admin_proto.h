/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_ADMIN_ADMIN_PROTO_H
#define FG_ADMIN_ADMIN_PROTO_H
/*
 * The admin socket's vocabulary, shared by flashgate-controlplane (the server) and flashgatectl
 * (the client), so that both name and check things the same way (docs/operations.md is the
 * reference of every command): the limits of every value, the commands, the states of an event
 * and its transitions, the risk rules and the keys, with their names and checks. The types below
 * are also what pg/pg.h stores.
 *
 * On top of it: admin/admin_request.h turns a request line into a struct admin_req (both
 * sides), admin/admin_answer.h writes the JSON answers (the server, and flashgatectl's
 * offline tokens); flashgatectl/render.h prints an answer for people (flashgatectl only). The
 * three modules of admin/ are one library, fg_admin, that both programs link. Nothing here
 * touches PostgreSQL, Redis or the network, and nothing here includes a program's folder.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
#define ADMIN_ERR_MAX	       256 /* a message buffer that holds every message of the protocol */
#define ADMIN_DRAW_WINDOW_MAX_S 86400u		  /* event create --draw-window: at most 1d */
#define ADMIN_POW_BITS_MAX	WIRE_POW_BITS_MAX /* --pow-bits, --pow-auto-max: 0..30 */
#define ADMIN_SEED_LEN		32		  /* a draw's seed (common/draw.h's) */

/* A word of a request quoted in a message: at most this many bytes of it. */
#define ADMIN_SHOW "%.48s"

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
	ADMIN_ORDER_CANCEL,
	ADMIN_RECONCILE,
	ADMIN_EVENT_ARCHIVE,
	ADMIN_EVENT_POW,
	ADMIN_EVENT_VERIFY_DRAW,
	ADMIN_AUDIT,
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
 *
 * archive (event archive) puts away an event that is over, closed or past its ends_at, once its
 * orders are settled: it leaves the data planes' slots and its Redis keys are deleted, its
 * PostgreSQL rows stay (docs/operations.md "Archiving events"). Nothing leaves archived.
 */
enum admin_event_state {
	ADMIN_EV_DRAFT = 0,
	ADMIN_EV_PREHEATED,
	ADMIN_EV_OPEN,
	ADMIN_EV_CLOSED,
	ADMIN_EV_ARCHIVED,
};
#define ADMIN_EV_STATES 5

/* event list: at most this many events an answer (--limit), and when none is asked. */
#define ADMIN_LIST_LIMIT_MAX	 500u
#define ADMIN_LIST_LIMIT_DEFAULT 100u
#define ADMIN_AUDIT_LIMIT_MAX	 1000u /* audit --limit */
#define ADMIN_AUDIT_LIMIT_DEFAULT 50u

/* An event: what the operator defines (event create) and, as stored, its state and stock. */
struct admin_event {
	uint32_t id;		       /* 1..2^32-1 */
	uint32_t stock;		       /* items on sale, 0..ADMIN_STOCK_MAX */
	uint64_t starts_at_ms;	       /* Unix ms; the sale is [starts_at, ends_at) */
	uint64_t ends_at_ms;	       /* after starts_at */
	uint32_t pay_window_s;	       /* ADMIN_PAY_WINDOW_MIN_S..ADMIN_PAY_WINDOW_MAX_S */
	uint32_t per_user_limit;       /* 1 */
	char name[ADMIN_NAME_MAX + 1]; /* 1..63 bytes of UTF-8 without control characters */
	/*
	 * The fair start (docs/fairness.md). draw_window_s 0: first come, first served, and
	 * queue_opens_at_ms 0. Otherwise entrants are taken from queue_opens_at_ms (<= starts_at)
	 * and drawn at starts_at + draw_window_s (before ends_at). pow_bits: the proof-of-work
	 * difficulty of new purchase tokens (0: none); pow_auto_max above it lets the control
	 * plane raise it by itself up to that (0: never).
	 */
	uint64_t queue_opens_at_ms;
	uint32_t draw_window_s; /* 0..ADMIN_DRAW_WINDOW_MAX_S */
	uint8_t pow_bits;	/* 0..ADMIN_POW_BITS_MAX */
	uint8_t pow_auto_max;	/* 0, or pow_bits..ADMIN_POW_BITS_MAX */
	/* Filled by the store; ignored by event create. */
	enum admin_event_state state;
	uint32_t available; /* stock left in PostgreSQL */
	uint64_t created_at_ms;
	/* The draw as PostgreSQL holds it: the seed drawn (getrandom) at create, never shown
	 * before draw_done_at_ms; the entrants' digest and count once they are fixed (has_digest);
	 * when every entrant was decided (0: not yet). */
	bool has_seed; /* events created before the fair start have none */
	uint8_t draw_seed[ADMIN_SEED_LEN];
	bool has_digest;
	uint8_t draw_digest[ADMIN_SEED_LEN];
	uint32_t draw_entrants;
	uint64_t draw_done_at_ms;
};

/* The moment of event ev's draw (starts_at + draw window, Unix ms); 0 when it has none. */
static inline uint64_t
admin_event_draw_at_ms(const struct admin_event *ev)
{
	return ev->draw_window_s == 0 ? 0 : ev->starts_at_ms + (uint64_t)ev->draw_window_s * 1000;
}

/* The same values as enum wire_rule_kind. */
enum admin_rule_kind {
	ADMIN_RULE_IP = WIRE_RULE_BLOCK_IP_CIDR,
	ADMIN_RULE_USER = WIRE_RULE_BLOCK_USER,
	ADMIN_RULE_DEVICE = WIRE_RULE_BLOCK_DEVICE,
	ADMIN_RULE_IP6 = WIRE_RULE_BLOCK_IP6_CIDR, /* named "ip" too: the value tells the family */
};

/* A risk rule: a blocked IPv4 or IPv6 network, user or device id. */
struct admin_rule {
	enum admin_rule_kind kind;
	uint32_t ip;	/* ADMIN_RULE_IP: network address, host byte order, no host bits set */
	uint8_t prefix; /* ADMIN_RULE_IP: 0..32; ADMIN_RULE_IP6: 0..128 */
	uint8_t ip6[16]; /* ADMIN_RULE_IP6: network address, network byte order, no host bits */
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
	uint64_t retired_at_ms; /* when it stopped being current; 0 while it is */
	uint64_t retire_at_ms;	/* sale keys not current: when it stops verifying (then deleted) */
	bool retired;		/* retire_at_ms has passed: deleted at the next cron */
};

/* Which limits a "limits set" gives (the others keep their value). */
#define ADMIN_LIMIT_IP	    (1u << 0)
#define ADMIN_LIMIT_USER    (1u << 1)
#define ADMIN_LIMIT_DEVICE  (1u << 2)
#define ADMIN_LIMIT_FORWARD (1u << 3)

/* The command's words, "event create"; "?" for a value that is not a command. */
const char *admin_cmd_name(enum admin_cmd cmd);

/*
 * Checks an event as event create does (id, name, stock, times, pay window, per-user limit,
 * the pre-queue and draw window, the challenge's difficulty). Returns 0, or -EINVAL with a
 * message naming the option ("--stock must be ...").
 */
int admin_event_check(const struct admin_event *ev, char *err, size_t errlen);

/*
 * The fair start's part of admin_event_check(): the pre-queue (only with a draw, at or before
 * the start), the draw window (its end inside the sale) and the difficulty (pow_bits 0..30,
 * pow_auto_max 0 or pow_bits..30). Returns 0, or -EINVAL with a message naming the option.
 */
int admin_event_fair_check(const struct admin_event *ev, char *err, size_t errlen);

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
 * "198.18.0.7", "2001:db8::/32", "2001:db8::7", "42", "abc-123"); an "ip" value with a colon is
 * IPv6 (ADMIN_RULE_IP6). Returns 0, or -EINVAL with a message (an unknown kind, a bad address or
 * prefix, host bits set, an IPv4-mapped IPv6 network, a user id out of range, a device id that
 * is empty, too long or not visible ASCII).
 */
int admin_rule_parse(
	const char *kind, const char *value, struct admin_rule *out, char *err, size_t errlen);

/* "ip" (IPv4 and IPv6), "user", "device"; "?" for a value that is not a kind. */
const char *admin_rule_kind_name(enum admin_rule_kind kind);

/*
 * Writes the canonical value of a valid rule ("198.18.0.7" for a /32, "198.18.0.0/24", IPv6 in
 * RFC 5952's form: "2001:db8::7" for a /128, "2001:db8::/32"; "42", the device id) to buf,
 * NUL-terminated: the same rule always gives the same text. Returns its length, or -ENOSPC
 * (ADMIN_RULE_TEXT_MAX always fits).
 */
int admin_rule_value(const struct admin_rule *r, char *buf, size_t len);

/* "sale", "auth"; "?" otherwise. */
const char *admin_key_kind_name(uint8_t kind);

/* The text that "help" shows: every command with its arguments, one per line. */
const char *admin_help_text(void);

/*
 * Writes "<cmd>: " (when cmd is not NULL) and the formatted message into err (errlen bytes,
 * NUL-terminated, cut to fit). Returns -EINVAL, so that a check can end with
 * "return admin_fail(...)". For the protocol's modules (admin_proto.c, admin_request.c).
 */
int admin_fail(char *err, size_t errlen, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Checks an event's name as event create's --name: 1..ADMIN_NAME_MAX bytes of UTF-8 without
 * control characters. Returns 0, or -EINVAL with a message naming --name (after "<cmd>: ").
 */
int admin_name_check(const char *cmd, const char *name, char *err, size_t errlen);

#endif
