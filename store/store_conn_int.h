/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_STORE_STORE_CONN_INT_H
#define FG_STORE_STORE_CONN_INT_H
/*
 * The connection's internals, shared by the store's modules: only the store's own .c files include
 * this header. It holds the store's struct, the scripts it loaded and the command helpers every
 * module runs its Redis commands with (store/store_conn.c).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/un.h>

#include <hiredis/hiredis.h>

#include "common/wire.h"
#include "store/store_conn.h"
#include "store/store_keys.h"
#include "store/store_sentinel.h"

#define RS_U64_DIGITS 20

/* reserve.lua's keys: stock, result, outbox, window, draw, wait, wrank. */
#define RS_RESERVE_KEYS 7
/* EVALSHA sha numkeys, the keys, then users, ids, now_ms and the draw's cursor. */
#define RS_RESERVE_ARGC(n) (3 + RS_RESERVE_KEYS + 2 * (n) + 2)
/* Its RESP: "*N\r\n", then per argument "$L\r\n" (at most 6 bytes here), data, "\r\n". */
#define RS_RESERVE_CMD_MAX (16 + RS_RESERVE_ARGC(RS_BATCH_MAX) * (6 + 2 + 64))

/* Ticket groups of the waiter (store/store_wait.c): at most an answered one, one in flight and
 * one deferred, and a lost one; more room than that. */
#define RS_WAIT_GROUPS 8
enum { RS_WAIT_DEFERRED, RS_WAIT_IN_FLIGHT, RS_WAIT_ANSWERED };

/* The scripts loaded on every connection, run with EVALSHA. */
enum store_script_id {
	RS_SCRIPT_RESERVE,
	RS_SCRIPT_RELEASE,
	RS_SCRIPT_PREHEAT,
	RS_SCRIPT_ENTER,
	RS_SCRIPT_FREEZE,
	RS_SCRIPT_MAX
};

struct store_script {
	const char *name;
	const char *text;
	size_t len;
	const char *want_sha1; /* the SHA1 computed at build time, or NULL */
	char sha1[41];	       /* what SCRIPT LOAD answered */
};

struct store {
	struct store_conn_config cfg;
	char host[256];
	char unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char where[300]; /* "127.0.0.1:6379" or "unix:/path", for messages */
	redisContext *c;
	struct store_sentinel *sn; /* NULL: one Redis, no Sentinel */
	/* A reply said READONLY: the node became a replica (a failover); the next call finds the
	 * primary again. */
	bool failover_seen;

	/* Outage bookkeeping: one warning when it starts, one notice when it ends. */
	bool in_outage;
	/* The last connection reached Redis but its settings were refused (check_settings);
	 * settings_why is the message, logged as an error once until it changes. */
	bool settings_refused;
	char user[64];
	char password[256]; /* empty: no AUTH; wiped by store_close() */
	char settings_why[512];
	uint64_t outage_since_ms;
	uint64_t next_attempt_ms;
	unsigned backoff_ms;
	unsigned attempts;

	struct store_script scripts[RS_SCRIPT_MAX];
	struct store_stats st;

	/* Counts the connections made (c): tells which server a pipelined batch ran on. */
	uint64_t conn_id;
	/* The waiter (store/store_wait.h): a second connection to the server of connection
	 * number wc_conn_id, on which WAITs for pipelined batches block while c decides the next
	 * ones. The tickets of store_wait_send() not yet taken (wc_owed in all), oldest first, in
	 * wc_len groups from wc_head: one WAIT answers for a group. wc_pub is the state of the
	 * PUBLISH reply of the one WAIT in flight (0 not read, 1 read and right, -1 refused). */
	redisContext *wc;
	uint64_t wc_conn_id;
	struct {
		unsigned n; /* tickets */
		int state;  /* RS_WAIT_DEFERRED, RS_WAIT_IN_FLIGHT or RS_WAIT_ANSWERED */
		int rc;	    /* answered: what store_wait_next() returns for each */
	} wc_grp[RS_WAIT_GROUPS];
	unsigned wc_head, wc_len, wc_owed;
	int wc_pub;

	/* One EVALSHA of reserve.lua in RESP: hiredis copies it when it is appended, so one
	 * buffer serves every batch of a pipeline. */
	char *cmd;
};

/* Writes v in decimal to p (no NUL); returns the length. */
static inline size_t
store_u64_to_dec(char *p, uint64_t v)
{
	char tmp[RS_U64_DIGITS];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* Parses a whole string of 1..20 decimal digits that fits in uint64; returns 0 or -1. */
static inline int
store_parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > RS_U64_DIGITS)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* True for the error reply of an EVALSHA whose script Redis does not know. */
static inline bool
store_is_noscript(const redisReply *r)
{
	return r->type == REDIS_REPLY_ERROR && r->str != NULL &&
	       strncmp(r->str, "NOSCRIPT", 8) == 0;
}

/* Fills len[0..argc) with the lengths of the strings argv[0..argc). */
static inline void
store_argv_strs(const char **argv, size_t *len, int argc)
{
	for (int i = 0; i < argc; i++)
		len[i] = strlen(argv[i]);
}

/* Forgets a broken connection. The first loss of an outage is logged. */
void store_lost(struct store *rs, const char *why);

/* Reads one reply; on a connection error forgets the connection. Returns the reply or NULL. */
redisReply *store_read_reply(struct store *rs);

/*
 * Loads every script on the current connection (pipelined SCRIPT LOADs) and checks that Redis
 * computed the SHA1s embedded at build time. Returns 0, or -1 with why filled; the connection
 * may have been forgotten.
 */
int store_load_scripts(struct store *rs, char *why, size_t why_len);

/*
 * Runs one command and reads its reply. Returns the reply (free it with freeReplyObject), or
 * NULL with *err = -ENOTCONN or -ENOMEM. Error replies are returned as replies.
 */
redisReply *store_command(
	struct store *rs, int argc, const char **argv, const size_t *len, int *err);

/*
 * As store_command(), but an error reply is logged (naming argv[0] and event), counted, freed and
 * becomes NULL with *err = -EIO, or -ENOENT for NOGROUP (a stream's consumer group is gone).
 */
redisReply *store_command_ok(struct store *rs, int argc, const char **argv, const size_t *len,
	int *err, uint32_t event);

/*
 * EVALSHA of one small script with up to RS_EVAL_KEYS keys and RS_EVAL_ARGS arguments; on
 * NOSCRIPT loads the scripts and tries once more. Returns the integer it answered in *out and
 * 0, or -EINVAL (more keys or arguments), -ENOTCONN, -ENOMEM, or -EIO (an error reply or a
 * reply that is not an integer).
 */
#define RS_EVAL_KEYS 8
#define RS_EVAL_ARGS 4
int store_eval_int(struct store *rs, enum store_script_id id, uint32_t event,
	const enum store_key_kind *kinds, unsigned nkeys, const char *const *args, unsigned nargs,
	long long *out);

/*
 * Runs "cmd[0] .. cmd[ncmd-1] <event's key of kind> vals[0] ... vals[n-1]" (ncmd 1..3, n
 * 1..RS_BATCH_MAX numbers) and returns its reply (free it), or NULL with *err = -EINVAL,
 * -ENOMEM, -ENOTCONN or -EIO.
 */
redisReply *store_key_numbers(struct store *rs, const char *const *cmd, unsigned ncmd,
	uint32_t event, enum store_key_kind kind, const uint64_t *vals, unsigned n, int *err);

/*
 * Appends (does not send) one "HGET <event's key of kind> <user>" per pair of q, so that the
 * caller reads n replies. Returns 0, -ENOTCONN (not connected) or -ENOMEM (the connection is
 * then dropped, so that no half-appended pipeline misaligns the next call's replies).
 */
int store_append_hgets(struct store *rs, const struct wire_result_query *q, unsigned n,
	enum store_key_kind kind);

/*
 * SMISMEMBER (on a set) or HMGET (on a hash) of n numbers (1..RS_BATCH_MAX) on one of an
 * event's keys: member[i] = 1 when vals[i] is a member or has a field. Returns 0, -EINVAL,
 * -ENOMEM, -ENOTCONN or -EIO.
 */
int store_members(struct store *rs, uint32_t event, enum store_key_kind kind, const uint64_t *vals,
	unsigned n, uint8_t *member);

#endif
