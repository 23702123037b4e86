/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes the seeds of the token, pow and wire targets that only code can make: tokens minted with
 * the keys of tests/fuzz/fuzz_keys.h, and messages made by the wire encoder. Run it again when
 * the token or wire format changes (docs/testing.md):
 *
 *   build-fuzz/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus
 *
 * writes corpus/token/, corpus/pow/ and corpus/wire/ (files of the same name are replaced).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/token.h"
#include "common/wire.h"
#include "tests/fuzz/fuzz_keys.h"

static const char *dir;

static void
put(const char *sub, const char *name, const void *data, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static void
must(int rc, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, "fuzz_make_seeds: %s failed (%d)\n", what, rc);
		exit(1);
	}
}

static void
ring_of(struct tok_keyring *ring, const struct fuzz_key *keys, unsigned current)
{
	tok_keyring_init(ring);
	for (unsigned i = 0; i < FUZZ_N_KEYS; i++)
		must(tok_keyring_set(
			     ring, keys[i].kid, keys[i].secret, FUZZ_SECRET_LEN, i == current),
			"tok_keyring_set");
}

static void
tokens(void)
{
	struct tok_keyring auth, sale;
	char t[TOK_BUF_SIZE];
	int n;

	ring_of(&auth, fuzz_auth_keys, 0);
	ring_of(&sale, fuzz_sale_keys, 0);
	n = tok_session_mint(&auth, 42, FUZZ_NOW_S + 3600, t, sizeof(t));
	must(n, "session");
	put("token", "session", t, (size_t)n);
	n = tok_session_mint(&auth, 42, FUZZ_NOW_S, t, sizeof(t));
	must(n, "session, expired");
	put("token", "session_expired", t, (size_t)n);
	n = tok_purchase_mint(&sale, FUZZ_EVENT, 42, FUZZ_NOW_S + 120, t, sizeof(t));
	must(n, "purchase");
	put("token", "purchase", t, (size_t)n);
	n = tok_purchase_mint(&sale, FUZZ_EVENT + 1, 42, FUZZ_NOW_S + 120, t, sizeof(t));
	must(n, "purchase, other event");
	put("token", "purchase_other_event", t, (size_t)n);
	n = tok_receipt_mint(
		&sale, FUZZ_EVENT, 42, FUZZ_NOW_S * UINT64_C(1000) + 123, t, sizeof(t));
	must(n, "receipt");
	put("token", "receipt", t, (size_t)n);
	n = tok_path_mint(&sale, FUZZ_EVENT, t, sizeof(t));
	must(n, "path");
	put("token", "path", t, (size_t)n);

	/* The other key of each ring, with every number at its largest. */
	ring_of(&auth, fuzz_auth_keys, 1);
	ring_of(&sale, fuzz_sale_keys, 1);
	n = tok_session_mint(&auth, TOK_USER_MAX, UINT64_MAX, t, sizeof(t));
	must(n, "session, largest");
	put("token", "session_largest", t, (size_t)n);
	n = tok_purchase_mint(&sale, FUZZ_EVENT, TOK_USER_MAX, UINT64_MAX, t, sizeof(t));
	must(n, "purchase, largest");
	put("token", "purchase_largest", t, (size_t)n);
	n = tok_receipt_mint(&sale, FUZZ_EVENT, 1, 0, t, sizeof(t));
	must(n, "receipt, smallest");
	put("token", "receipt_smallest", t, (size_t)n);
	n = tok_path_mint(&sale, FUZZ_EVENT, t, sizeof(t));
	must(n, "path, other key");
	put("token", "path_other_key", t, (size_t)n);
}

/* A check's input for the pow target: bits, the prefix's length, the prefix, the solution. */
static void
pow_check_seed(const char *name, unsigned bits, const char *prefix, const char *sol)
{
	char in[2 + 64];
	size_t plen = strlen(prefix), slen = strlen(sol);

	in[0] = (char)bits;
	in[1] = (char)plen;
	memcpy(in + 2, prefix, plen);
	memcpy(in + 2 + plen, sol, slen);
	put("pow", name, in, 2 + plen + slen);
}

/* Purchase tokens with a challenge (both targets read them) and checks (pow target). */
static void
pow_seeds(void)
{
	struct tok_keyring sale;
	char t[TOK_BUF_SIZE];
	int n;

	ring_of(&sale, fuzz_sale_keys, 0);
	n = tok_purchase_mint_pow(&sale, FUZZ_EVENT, 42, FUZZ_NOW_S + 120, 12, t, sizeof(t));
	must(n, "purchase with a challenge");
	put("token", "purchase_pow", t, (size_t)n);
	put("pow", "purchase_pow", t, (size_t)n);
	n = tok_purchase_mint(&sale, FUZZ_EVENT, 42, FUZZ_NOW_S + 120, t, sizeof(t));
	must(n, "purchase");
	put("pow", "purchase", t, (size_t)n);
	ring_of(&sale, fuzz_sale_keys, 1);
	n = tok_purchase_mint_pow(
		&sale, FUZZ_EVENT, TOK_USER_MAX, UINT64_MAX, TOK_POW_BITS_MAX, t, sizeof(t));
	must(n, "purchase with a challenge, largest");
	put("pow", "purchase_pow_largest", t, (size_t)n);
	/* docs/tokens.md's worked example: 951 solves it at 12 bits (and 16). */
	pow_check_seed("check_doc", 12, "UmD8QGH-7k2f9-iFBP92cQ", "951");
	pow_check_seed(
		"check_longest", 30, "0123456789abcdefghijklmnopqrstuv", "18446744073709551615");
	pow_check_seed("check_short", 4, "abc", "7");
}

static void
message(const char *name, enum wire_type type, const void *recs, unsigned count)
{
	static uint8_t buf[65536];
	struct wire_sender s = {.id = 3, .epoch = 1796112000u, .seq = 41};
	int n = wire_encode(&s, type, recs, count, buf, sizeof(buf));

	must(n, name);
	put("wire", name, buf, (size_t)n);
}

static void
messages(void)
{
	const struct wire_reserve reserve[2] = {
		{wire_reservation_id(3, 1, 1000), 42, 1796112000123u, 7, 0x0a000001},
		{wire_reservation_id(3, 2, 1001), 43, 1796112000124u, 7, 0xc0a80102},
	};
	const struct wire_result_query query[1] = {{42, 7, 0}};
	const struct wire_result result[3] = {
		{wire_reservation_id(3, 1, 1000), 42, 0, 0, 7, 999, WIRE_V_RESERVED, {0}},
		{wire_reservation_id(3, 2, 1001), 43, 0, 0, 7, 999, WIRE_V_DUPLICATE, {0}},
		{wire_reservation_id(3, 1, 1000), 42, 1234, 1796112900000u, 7, 999, WIRE_V_ORDERED,
			{0}},
	};
	const struct wire_event event[2] = {
		{7, 1000, 1796112000000u, 1796115600000u, WIRE_EVENT_F_HELD, {0},
			"1000 headphones"},
		{8, 0, 1796112000000u, 1796115600000u, WIRE_EVENT_F_SOLD_OUT | WIRE_EVENT_F_CLOSED,
			{0}, "Caf\xc3\xa9 mugs"},
	};
	const struct wire_stock stock[1] = {{7, 0}};
	struct wire_key keys[2] = {
		{1, WIRE_KEY_AUTH, WIRE_KEY_F_CURRENT, FUZZ_SECRET_LEN, 0, {0}},
		{42, WIRE_KEY_SALE, WIRE_KEY_F_CURRENT, FUZZ_SECRET_LEN, 0, {0}},
	};
	const struct wire_rule rules[3] = {
		{0, 0x0a000000, WIRE_RULE_BLOCK_IP_CIDR, 8, {0}, ""},
		{666, 0, WIRE_RULE_BLOCK_USER, 0, {0}, ""},
		{0, 0, WIRE_RULE_BLOCK_DEVICE, 0, {0}, "device-13"},
	};
	const struct wire_limits limits[1] = {{20, 40, 5, 10, 5, 10, 1000, 0}};
	const struct wire_snapshot begin[1] = {{17, 0, 0, 0, 0}}, end[1] = {{17, 2, 2, 3, 0}};
	const struct wire_heartbeat beat[1] = {{1796112000500u}};
	struct wire_stat stats[3];

	memcpy(keys[0].secret, fuzz_auth_keys[0].secret, FUZZ_SECRET_LEN);
	memcpy(keys[1].secret, fuzz_sale_keys[1].secret, FUZZ_SECRET_LEN);
	must(wire_stat_set(&stats[0], "rx_packets", 123456, WIRE_STAT_COUNTER), "stat");
	must(wire_stat_set(&stats[1], "drops.reason=ip_checksum", 3, WIRE_STAT_COUNTER), "stat");
	must(wire_stat_set(&stats[2], "ring_used", 17, WIRE_STAT_GAUGE), "stat");

	message("reserve", WIRE_T_RESERVE, reserve, 2);
	message("snapshot_request", WIRE_T_SNAPSHOT_REQUEST, NULL, 0);
	message("result_query", WIRE_T_RESULT_QUERY, query, 1);
	message("dp_stats", WIRE_T_DP_STATS, stats, 3);
	message("result", WIRE_T_RESULT, result, 3);
	message("event", WIRE_T_EVENT, event, 2);
	message("sold_out", WIRE_T_SOLD_OUT, stock, 1);
	message("restock", WIRE_T_RESTOCK, stock, 1);
	message("keys", WIRE_T_KEYS, keys, 2);
	message("keys_none", WIRE_T_KEYS, NULL, 0);
	message("rules", WIRE_T_RULES, rules, 3);
	message("limits", WIRE_T_LIMITS, limits, 1);
	message("snapshot_begin", WIRE_T_SNAPSHOT_BEGIN, begin, 1);
	message("snapshot_end", WIRE_T_SNAPSHOT_END, end, 1);
	message("heartbeat", WIRE_T_HEARTBEAT, beat, 1);

	/* At the edges of the texts: the longest that fit, and one byte more (no NUL: refused). */
	struct wire_event long_name[2] = {event[0], event[0]};
	struct wire_rule long_device[2] = {rules[2], rules[2]};
	struct wire_stat long_stat[2] = {stats[0], stats[0]};

	memset(long_name[0].name, 'n', WIRE_NAME_MAX - 1);
	memset(long_name[1].name, 'n', WIRE_NAME_MAX);
	memset(long_device[0].device, 'd', WIRE_DEVICE_MAX - 1);
	memset(long_device[1].device, 'd', WIRE_DEVICE_MAX);
	memset(long_stat[0].name, 's', WIRE_STAT_NAME_MAX - 1);
	memset(long_stat[1].name, 's', WIRE_STAT_NAME_MAX);
	message("event_name_edges", WIRE_T_EVENT, long_name, 2);
	message("rules_device_edges", WIRE_T_RULES, long_device, 2);
	message("dp_stats_name_edges", WIRE_T_DP_STATS, long_stat, 2);
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	tokens();
	pow_seeds();
	messages();
	return 0;
}
