/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_ADMIN_ADMIN_REQUEST_H
#define FG_ADMIN_ADMIN_REQUEST_H
/*
 * The admin socket's requests: the daemon's request parser, which flashgatectl runs too before it
 * sends a command, so that both refuse a command the same way.
 *
 * A request is one line of words, "event create 7 --name \"Big sale\" --stock 1000 ...",
 * ended by '\n'; the answer is one JSON object on one line (admin/admin_answer.h). Words
 * are split at spaces and tabs; "double quotes" group words (inside them \" and \\ stand for "
 * and \), 'single quotes' group them literally, and quoted and unquoted parts next to each other
 * make one word, as in a shell. Options are "--name VALUE" or "--name=VALUE".
 *
 * admin_parse() turns a line into a struct admin_req with every value checked, or refuses it
 * with one message that names the command, what is wrong and what was given
 * ("event create: --stock must be 0..100000000, got -5").
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"
#include "admin/admin_proto.h"

/* A parsed request. Only the fields of its command are set; the rest are zero. */
struct admin_req {
	enum admin_cmd cmd;
	uint32_t event_id;	  /* event preheat/open/close/show/archive, reconcile */
	/* event list: only this state (when list_state_given), events after id list_after, at
	 * most list_limit (ADMIN_LIST_LIMIT_DEFAULT unless --limit). */
	bool list_state_given;
	enum admin_event_state list_state;
	uint32_t list_after;
	uint32_t list_limit;
	struct admin_event event; /* event create */
	uint32_t kid;		  /* keys auth-set */
	uint8_t secret_len;	  /* keys auth-set: a secret; never log a request line */
	uint8_t secret[ADMIN_SECRET_MAX];
	struct admin_rule rule;	   /* rules add, rules del */
	struct wire_limits limits; /* limits set: the values given */
	unsigned limits_given;	   /* limits set: ADMIN_LIMIT_* */
	uint64_t user;		   /* session-token */
	uint64_t ttl_s;		   /* session-token: ADMIN_TTL_DEFAULT_S unless --ttl */
	uint64_t order_id;	   /* order pay, order cancel */
	bool repair;		   /* reconcile --repair */
	bool force;		   /* reconcile --repair --force: even while the sale is open */
	/* event pow ID BITS [--auto-max M]: the operator's difficulty, and the automatic
	 * maximum when given (pow_auto_given; otherwise the event keeps its own). */
	uint8_t pow_bits;
	bool pow_auto_given;
	uint8_t pow_auto_max;
	/* event verify-draw ID [--commitment HEX]: the SHA-256 of the seed published before the
	 * pre-queue opened, to compare with the seed's. */
	bool has_commitment;
	uint8_t commitment[ADMIN_SEED_LEN];
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

#endif
