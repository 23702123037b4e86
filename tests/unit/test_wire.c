/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wire format: every type round-trips, the bytes are the documented little-endian
 * layout, every malformation gets its own error, and random or mutated input never makes
 * the decoder read past its buffer (inputs sit just before a PROT_NONE page).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "tests/guard.h"
#include "tests/tap.h"

/* Decodes len bytes placed just before a guard page. */
static int
decode_guarded(const void *buf, size_t len, struct wire_msg *m)
{
	struct guard_buf g = {0};
	const char *p = guard_place(&g, buf, len);
	int rc;

	if (p == NULL)
		return -ENOMEM;
	rc = wire_decode(p, len, m);
	if (rc == 0) {
		/* Copy out every record while the guard is still in place. */
		union {
			struct wire_reserve a;
			struct wire_result b;
			struct wire_event c;
			struct wire_key d;
			struct wire_rule e;
			struct wire_limits f;
			struct wire_snapshot g;
			struct wire_heartbeat h;
			struct wire_result_query i;
			struct wire_stock j;
			struct wire_stat k;
			struct wire_hello l;
			struct wire_dp_refused n;
			struct wire_fair o;
		} u;

		for (unsigned i = 0; i < m->count; i++) {
			(void)wire_get_reserve(m, i, &u.a);
			(void)wire_get_result(m, i, &u.b);
			(void)wire_get_event(m, i, &u.c);
			(void)wire_get_key(m, i, &u.d);
			(void)wire_get_rule(m, i, &u.e);
			(void)wire_get_limits(m, i, &u.f);
			(void)wire_get_snapshot(m, i, &u.g);
			(void)wire_get_heartbeat(m, i, &u.h);
			(void)wire_get_result_query(m, i, &u.i);
			(void)wire_get_stock(m, i, &u.j);
			(void)wire_get_stat(m, i, &u.k);
			(void)wire_get_hello(m, i, &u.l);
			(void)wire_get_dp_refused(m, i, &u.n);
			(void)wire_get_fair(m, i, &u.o);
		}
		m->recs = NULL; /* the guarded copy goes away */
	}
	guard_free(&g);
	return rc;
}

static const unsigned all_types[] = {WIRE_T_RESERVE, WIRE_T_SNAPSHOT_REQUEST, WIRE_T_RESULT_QUERY,
	WIRE_T_RESULT, WIRE_T_EVENT, WIRE_T_SOLD_OUT, WIRE_T_RESTOCK, WIRE_T_KEYS, WIRE_T_RULES,
	WIRE_T_LIMITS, WIRE_T_SNAPSHOT_BEGIN, WIRE_T_SNAPSHOT_END, WIRE_T_HEARTBEAT,
	WIRE_T_DP_STATS, WIRE_T_HELLO, WIRE_T_DP_REFUSED, WIRE_T_FAIR};
#define N_TYPES (sizeof(all_types) / sizeof(all_types[0]))

static void
test_layouts(void)
{
	for (size_t i = 0; i < sizeof(all_types) / sizeof(all_types[0]); i++) {
		unsigned t = all_types[i];

		tap_eq_int(wire_layout_size(t), wire_rec_size(t), wire_type_name(t));
	}
	tap_eq_int(wire_rec_size(0), -1, "type 0 is unknown");
	tap_eq_int(wire_rec_size(15), -1, "type 15 is unknown");
	tap_eq_int(wire_msg_size(WIRE_T_RESERVE, 256), 24 + 256 * 32,
		"256 reservations take 8216 bytes");
}

/* The documented bytes of one RESERVE message: what any other language must produce. */
static void
test_golden_bytes(void)
{
	static const uint8_t want[] = {
		'F', 'G', 1, 1, 32, 0, 1, 0,	       /* magic, version, type, size, count */
		0x07, 0, 0, 0, 0x44, 0x33, 0x22, 0x11, /* sender 7, epoch 0x11223344 */
		0x05, 0, 0, 0, 0, 0, 0, 0,	       /* seq 5 */
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* reservation id */
		0x2a, 0, 0, 0, 0, 0, 0, 0,			/* user 42 */
		0xe8, 0x03, 0, 0, 0, 0, 0, 0,			/* admitted_ms 1000 */
		0x09, 0, 0, 0,					/* event 9 */
		0x01, 0x00, 0x00, 0x0a,				/* client 10.0.0.1 */
	};
	struct wire_sender s = {.id = 7, .epoch = 0x11223344, .seq = 5};
	struct wire_reserve r = {.reservation_id = UINT64_C(0x0102030405060708),
		.user = 42,
		.admitted_ms = 1000,
		.event = 9,
		.client_ipv4 = 0x0a000001};
	uint8_t buf[128];
	int len = wire_encode_reservations(&s, &r, 1, buf, sizeof(buf));

	tap_eq_int(len, sizeof(want), "RESERVE x1 is 56 bytes");
	tap_ok(len == (int)sizeof(want) && memcmp(buf, want, sizeof(want)) == 0,
		"RESERVE bytes are the documented little-endian layout");
	tap_eq_int(s.seq, 6, "encoding advances the sender's sequence");
	tap_eq_int(
		wire_encode_reservations(&s, &r, 1, buf, 55), -ENOSPC, "55-byte buffer: -ENOSPC");
	tap_eq_int(s.seq, 6, "a refused encoding leaves the sequence alone");
	tap_eq_int(wire_encode(&s, WIRE_T_LIMITS, &r, 2, buf, sizeof(buf)), -EINVAL,
		"two LIMITS records: -EINVAL");
	tap_eq_int(
		wire_encode(&s, 99, NULL, 0, buf, sizeof(buf)), -EINVAL, "unknown type: -EINVAL");
}

/* Encodes n records of type t from recs, decodes, reads back and compares byte for byte. */
static void
round_trip(unsigned t, const void *recs, unsigned n, size_t rec_size)
{
	static uint8_t buf[WIRE_HDR_SIZE + 4 * 136];
	struct wire_sender s = {.id = 3, .epoch = 77, .seq = UINT64_C(0xfedcba9876543210)};
	struct wire_msg m;
	int len = wire_encode(&s, t, recs, n, buf, sizeof(buf));
	int rc = len > 0 ? wire_decode(buf, (size_t)len, &m) : len;
	bool same = rc == 0 && m.type == t && m.count == n && m.sender == 3 && m.epoch == 77 &&
		    m.seq == UINT64_C(0xfedcba9876543210);

	for (unsigned i = 0; same && i < n; i++) {
		uint8_t out[136];
		int g;

		memset(out, 0xee, sizeof(out));
		switch (t) {
		case WIRE_T_RESERVE:
			g = wire_get_reserve(&m, i, (void *)out);
			break;
		case WIRE_T_RESULT_QUERY:
			g = wire_get_result_query(&m, i, (void *)out);
			break;
		case WIRE_T_RESULT:
			g = wire_get_result(&m, i, (void *)out);
			break;
		case WIRE_T_EVENT:
			g = wire_get_event(&m, i, (void *)out);
			break;
		case WIRE_T_SOLD_OUT:
		case WIRE_T_RESTOCK:
			g = wire_get_stock(&m, i, (void *)out);
			break;
		case WIRE_T_KEYS:
			g = wire_get_key(&m, i, (void *)out);
			break;
		case WIRE_T_RULES:
			g = wire_get_rule(&m, i, (void *)out);
			break;
		case WIRE_T_LIMITS:
			g = wire_get_limits(&m, i, (void *)out);
			break;
		case WIRE_T_SNAPSHOT_BEGIN:
		case WIRE_T_SNAPSHOT_END:
			g = wire_get_snapshot(&m, i, (void *)out);
			break;
		case WIRE_T_DP_STATS:
			g = wire_get_stat(&m, i, (void *)out);
			break;
		case WIRE_T_HELLO:
			g = wire_get_hello(&m, i, (void *)out);
			break;
		case WIRE_T_DP_REFUSED:
			g = wire_get_dp_refused(&m, i, (void *)out);
			break;
		case WIRE_T_FAIR:
			g = wire_get_fair(&m, i, (void *)out);
			break;
		default:
			g = wire_get_heartbeat(&m, i, (void *)out);
			break;
		}
		same = g == 0 && memcmp(out, (const uint8_t *)recs + i * rec_size, rec_size) == 0;
	}
	tap_ok(same, "round trip: %s x%u (encode %d, decode %d)", wire_type_name(t), n, len, rc);
}

static void
test_round_trips(void)
{
	struct wire_reserve res[2] = {
		{1, 1, 1700000000000, 1, 0},
		{UINT64_MAX, (uint64_t)INT64_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX},
	};
	struct wire_result_query q[1] = {{.user = 99, .event = 4}};
	struct wire_result r[4] = {
		{.reservation_id = 11,
			.user = 12,
			.event = 13,
			.stock_left = 14,
			.verdict = WIRE_V_RESERVED,
			.flags = WIRE_RESULT_F_STOCK},
		{.reservation_id = 21,
			.user = 22,
			.order_id = 23,
			.pay_deadline_ms = 24,
			.event = 25,
			.verdict = WIRE_V_ORDERED},
		{.reservation_id = 31, .user = 32, .event = 33, .verdict = WIRE_V_CANCELLED},
		{.reservation_id = 41, .user = 42, .event = 43, .verdict = WIRE_V_QUEUED,
			.rank = UINT32_MAX},
	};
	struct wire_event ev[2] = {
		{.id = 1, .stock = 1000, .starts_at_ms = 10, .ends_at_ms = 20, .name = "Sale"},
		{.id = 2,
			.stock = 0,
			.starts_at_ms = 1,
			.ends_at_ms = 2,
			.flags = WIRE_EVENT_F_SOLD_OUT | WIRE_EVENT_F_CLOSED,
			.name = "Ünïcode \"name\" of sixty-three bytes, exactly, padded!!!!"},
	};
	struct wire_stock st[2] = {{5, 0}, {6, 17}};
	struct wire_key k[2] = {
		{.kid = 1,
			.kind = WIRE_KEY_AUTH,
			.flags = WIRE_KEY_F_CURRENT,
			.len = 32,
			.secret = {1, 2, 3}},
		{.kid = 0xffffffff, .kind = WIRE_KEY_SALE, .len = 64, .secret = {[63] = 0xff}},
	};
	struct wire_rule ru[4] = {
		{.kind = WIRE_RULE_BLOCK_IP_CIDR, .ipv4 = 0xc0a80000, .prefix = 16},
		{.kind = WIRE_RULE_BLOCK_USER, .user = 123456789},
		{.kind = WIRE_RULE_BLOCK_DEVICE, .device = "device-abc"},
		{.kind = WIRE_RULE_BLOCK_IP6_CIDR, .ipv6 = {0x20, 0x01, 0x0d, 0xb8}, .prefix = 32},
	};
	struct wire_limits li = {1, 2, 3, 4, 5, 6, 7, 8}; /* 8: the forward burst, a pad before */
	struct wire_snapshot sn = {.snapshot_id = 9, .n_events = 2, .n_keys = 2, .n_rules = 3};
	struct wire_heartbeat hb = {.now_ms = 1700000000123};

	round_trip(WIRE_T_RESERVE, res, 2, sizeof(res[0]));
	round_trip(WIRE_T_RESULT_QUERY, q, 1, sizeof(q[0]));
	round_trip(WIRE_T_RESULT, r, 4, sizeof(r[0]));
	round_trip(WIRE_T_EVENT, ev, 2, sizeof(ev[0]));
	round_trip(WIRE_T_SOLD_OUT, st, 2, sizeof(st[0]));
	round_trip(WIRE_T_RESTOCK, st, 1, sizeof(st[0]));
	round_trip(WIRE_T_KEYS, k, 2, sizeof(k[0]));
	round_trip(WIRE_T_KEYS, k, 0, sizeof(k[0]));
	round_trip(WIRE_T_RULES, ru, 4, sizeof(ru[0]));
	{
		/* An IPv6 rule's bytes (docs/wire.md): kind 4 @12, prefix @13, the address @16. */
		static uint8_t b[WIRE_HDR_SIZE + sizeof(struct wire_rule)];
		struct wire_sender snd = {1, 1, 1};
		int n = wire_encode(&snd, WIRE_T_RULES, &ru[3], 1, b, sizeof(b));
		const uint8_t *rec = b + WIRE_HDR_SIZE;
		static const uint8_t zero[48];

		tap_ok(n == (int)sizeof(b) && rec[12] == 4 && rec[13] == 32 && rec[16] == 0x20 &&
				rec[17] == 0x01 && rec[18] == 0x0d && rec[19] == 0xb8 &&
				memcmp(rec + 20, zero, 12) == 0 && memcmp(rec + 32, zero, 48) == 0,
			"RULES: an IPv6 rule is kind 4 @12, prefix @13, its 16 bytes @16 in "
			"network "
			"order, zeros after");
	}
	round_trip(WIRE_T_RULES, ru, 0, sizeof(ru[0]));
	round_trip(WIRE_T_LIMITS, &li, 1, sizeof(li));
	round_trip(WIRE_T_SNAPSHOT_BEGIN, &sn, 1, sizeof(sn));
	round_trip(WIRE_T_SNAPSHOT_END, &sn, 1, sizeof(sn));
	round_trip(WIRE_T_HEARTBEAT, &hb, 1, sizeof(hb));
	struct wire_hello he = {.instance = 0x0123456789abcdefull, .now_ms = 1700000000456};
	struct wire_dp_refused dr[2] = {
		{.instance = 7, .dp_id = 3, .epoch = 1700000000},
		{.instance = 0, .dp_id = WIRE_DP_ID_MAX, .epoch = 1},
	};

	round_trip(WIRE_T_HELLO, &he, 1, sizeof(he));
	round_trip(WIRE_T_DP_REFUSED, dr, 2, sizeof(dr[0]));
	struct wire_fair fa[2] = {
		{.event = 1, .pow_bits = WIRE_POW_BITS_MAX, .seed_sha256 = {1, [31] = 2}},
		{.event = UINT32_MAX,
			.draw_state = WIRE_DRAW_DONE,
			.queue_opens_at_ms = 1700000000000,
			.draw_at_ms = 1700000600000,
			.entrants = 1000000,
			.decided = 1000000,
			.rate = 250000,
			.seed_sha256 = {[0] = 0xff},
			.entrants_digest = {[15] = 0x5a},
			.seed = {[31] = 0xa5}},
	};

	round_trip(WIRE_T_FAIR, fa, 2, sizeof(fa[0]));
	round_trip(WIRE_T_SNAPSHOT_REQUEST, NULL, 0, 0);
	struct wire_stat ds[3] = {
		{.value = 1, .kind = WIRE_STAT_COUNTER, .name = "rx_packets"},
		{.value = UINT64_MAX,
			.kind = WIRE_STAT_COUNTER,
			.name = "drops.reason=ip_checksum"},
		{.value = 0, .kind = WIRE_STAT_GAUGE, .name = "bridge_ready"},
	};

	round_trip(WIRE_T_DP_STATS, ds, 3, sizeof(ds[0]));

	/* Padding is zeroed on the wire whatever the caller left in it. */
	struct wire_result dirty = r[0];
	uint8_t buf[128];
	struct wire_sender s = {1, 1, 1};

	memset(dirty.pad, 0xab, sizeof(dirty.pad));
	int len = wire_encode_results(&s, &dirty, 1, buf, sizeof(buf));
	static const uint8_t zeros[6];

	tap_ok(len == 72 && buf[WIRE_HDR_SIZE + 41] == WIRE_RESULT_F_STOCK &&
		       memcmp(buf + WIRE_HDR_SIZE + 42, zeros, 2) == 0,
		"padding is sent as zeros");
	dirty.rank = 0x01020304;
	len = wire_encode_results(&s, &dirty, 1, buf, sizeof(buf));
	tap_ok(len == 72 && buf[WIRE_HDR_SIZE + 44] == 4 && buf[WIRE_HDR_SIZE + 47] == 1 &&
		       memcmp(buf + WIRE_HDR_SIZE + 42, zeros, 2) == 0,
		"RESULT: the rank is little-endian at 44");
}

/* A message as bytes: header fields set one by one, for malformations. */
static size_t
make_raw(uint8_t *buf, const char *magic, uint8_t version, uint8_t type, uint16_t rec_size,
	uint16_t count, size_t payload)
{
	buf[0] = (uint8_t)magic[0];
	buf[1] = (uint8_t)magic[1];
	buf[2] = version;
	buf[3] = type;
	buf[4] = (uint8_t)rec_size;
	buf[5] = (uint8_t)(rec_size >> 8);
	buf[6] = (uint8_t)count;
	buf[7] = (uint8_t)(count >> 8);
	memset(buf + 8, 0, 16);
	memset(buf + 24, 0, payload);
	return 24 + payload;
}

static void
test_malformed(void)
{
	static const struct {
		const char *name;
		const char *magic;
		uint8_t version, type;
		uint16_t rec_size, count;
		size_t payload;
		int want;
	} cases[] = {
		{"well-formed RESULT x1", "FG", 1, WIRE_T_RESULT, 48, 1, 48, 0},
		{"bad magic", "GF", 1, WIRE_T_RESULT, 48, 1, 48, WIRE_ERR_MAGIC},
		{"magic in lower case", "fg", 1, WIRE_T_RESULT, 48, 1, 48, WIRE_ERR_MAGIC},
		{"version 0", "FG", 0, WIRE_T_RESULT, 48, 1, 48, WIRE_ERR_VERSION},
		{"version 2", "FG", 2, WIRE_T_RESULT, 48, 1, 48, WIRE_ERR_VERSION},
		{"type 0", "FG", 1, 0, 48, 1, 48, WIRE_ERR_TYPE},
		{"type 6 (a gap)", "FG", 1, 6, 48, 1, 48, WIRE_ERR_TYPE},
		{"type 255", "FG", 1, 255, 48, 1, 48, WIRE_ERR_TYPE},
		{"RESULT with 32-byte records", "FG", 1, WIRE_T_RESULT, 32, 1, 32,
			WIRE_ERR_RECSIZE},
		{"RESERVE with 48-byte records", "FG", 1, WIRE_T_RESERVE, 48, 1, 48,
			WIRE_ERR_RECSIZE},
		{"count 2, one record", "FG", 1, WIRE_T_RESULT, 48, 2, 48, WIRE_ERR_LENGTH},
		{"one byte too many", "FG", 1, WIRE_T_RESULT, 48, 1, 49, WIRE_ERR_LENGTH},
		{"one byte short", "FG", 1, WIRE_T_RESULT, 48, 1, 47, WIRE_ERR_LENGTH},
		{"count 65535, no payload", "FG", 1, WIRE_T_RESULT, 48, 65535, 0, WIRE_ERR_LENGTH},
		{"RESULT x0", "FG", 1, WIRE_T_RESULT, 48, 0, 0, WIRE_ERR_COUNT},
		{"LIMITS x2", "FG", 1, WIRE_T_LIMITS, 32, 2, 64, WIRE_ERR_COUNT},
		{"SNAPSHOT_END x0", "FG", 1, WIRE_T_SNAPSHOT_END, 24, 0, 0, WIRE_ERR_COUNT},
		{"SNAPSHOT_REQUEST x3 of size 0", "FG", 1, WIRE_T_SNAPSHOT_REQUEST, 0, 3, 0,
			WIRE_ERR_COUNT},
		{"SNAPSHOT_REQUEST with a payload", "FG", 1, WIRE_T_SNAPSHOT_REQUEST, 0, 0, 8,
			WIRE_ERR_LENGTH},
		{"RULES x0 (an empty set)", "FG", 1, WIRE_T_RULES, 80, 0, 0, 0},
	};
	static uint8_t buf[24 + 65536];
	struct wire_msg m;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = make_raw(buf, cases[i].magic, cases[i].version, cases[i].type,
			cases[i].rec_size, cases[i].count, cases[i].payload);
		int rc = decode_guarded(buf, len, &m);

		tap_ok(rc == cases[i].want, "%s: %s (got %s)", cases[i].name,
			cases[i].want ? wire_err_name(cases[i].want) : "accepted",
			rc ? wire_err_name(rc) : "accepted");
	}
	unsigned not_short = 0;
	int first = -1;

	for (size_t len = 0; len < WIRE_HDR_SIZE; len++) {
		make_raw(buf, "FG", 1, WIRE_T_SNAPSHOT_REQUEST, 0, 0, 0);
		if (decode_guarded(buf, len, &m) != WIRE_ERR_SHORT) {
			not_short++;
			first = first < 0 ? (int)len : first;
		}
	}
	tap_ok(not_short == 0, "every length 0..23 is short (%u are not, the first %d)", not_short,
		first);
	make_raw(buf, "FG", 1, WIRE_T_SNAPSHOT_REQUEST, 0, 0, 0);
	tap_eq_int(decode_guarded(buf, 24, &m), 0, "a bare 24-byte SNAPSHOT_REQUEST is accepted");

	/* Every error has its own name and counter slot. */
	const char *seen[WIRE_ERR_MAX];
	bool distinct = true;

	for (int e = -1; e >= -(int)WIRE_ERR_MAX; e--) {
		seen[wire_err_index(e)] = wire_err_name(e);
		for (int k = -1; k > e; k--)
			distinct =
				distinct && strcmp(seen[wire_err_index(k)], wire_err_name(e)) != 0;
	}
	tap_ok(distinct, "the %d error names are distinct", WIRE_ERR_MAX);
	tap_ok(strcmp(wire_err_name(WIRE_ERR_LENGTH), "bad_length") == 0 &&
			strcmp(wire_err_name(0), "unknown") == 0 &&
			wire_err_index(0) == WIRE_ERR_MAX && wire_err_index(-9) == WIRE_ERR_MAX,
		"error names and slots for known and unknown values");
}

/* Records with one field out of range: decode accepts the frame, the accessor refuses the record.
 */
static void
test_bad_fields(void)
{
	struct wire_reserve res[] = {
		{.reservation_id = 0, .user = 1, .event = 1},
		{.reservation_id = 1, .user = 0, .event = 1},
		{.reservation_id = 1, .user = (uint64_t)INT64_MAX + 1, .event = 1},
		{.reservation_id = 1, .user = 1, .event = 0},
	};
	struct wire_result r[] = {
		{.user = 1, .event = 1, .verdict = 0},
		{.user = 1, .event = 1, .verdict = WIRE_V_MAX},
		{.user = 0, .event = 1, .verdict = WIRE_V_PAID},
	};
	struct wire_event ev[3] = {
		{.id = 0, .starts_at_ms = 1, .ends_at_ms = 2},
		{.id = 1, .starts_at_ms = 2, .ends_at_ms = 2},
		{.id = 1, .starts_at_ms = 1, .ends_at_ms = 2, .flags = 8},
	};
	struct wire_event noterm = {.id = 1, .starts_at_ms = 1, .ends_at_ms = 2};
	struct wire_key k[] = {
		{.kind = 0, .len = 32},
		{.kind = WIRE_KEY_SALE, .len = WIRE_SECRET_MIN - 1},
		{.kind = WIRE_KEY_SALE, .len = WIRE_SECRET_MAX + 1},
		{.kind = WIRE_KEY_AUTH, .len = 32, .flags = 2},
	};
	struct wire_rule ru[] = {
		{.kind = 0},
		{.kind = WIRE_RULE_BLOCK_IP_CIDR, .prefix = 33},
		{.kind = WIRE_RULE_BLOCK_USER, .user = 0},
		{.kind = WIRE_RULE_BLOCK_DEVICE, .device = ""},
		{.kind = WIRE_RULE_BLOCK_IP6_CIDR, .prefix = 129},
		{.kind = WIRE_RULE_BLOCK_IP6_CIDR, .prefix = 128, .ipv6 = {[16] = 1}},
		{.kind = 5},
	};
	struct wire_rule devfull = {.kind = WIRE_RULE_BLOCK_DEVICE};
	struct wire_snapshot sn = {.snapshot_id = 0};
	struct wire_result_query q = {.user = 5, .event = 0};
	struct wire_stock st = {.event = 0};
	static uint8_t buf[1024];
	struct wire_sender s = {1, 1, 1};
	struct wire_msg m;
	int bad;

#define CHECK_ALL(T, arr, getter, what)                                                          \
	do {                                                                                     \
		int len_ =                                                                       \
			wire_encode(&s, T, arr, sizeof(arr) / sizeof(arr[0]), buf, sizeof(buf)); \
		bad = 0;                                                                         \
		if (len_ > 0 && wire_decode(buf, (size_t)len_, &m) == 0) {                       \
			for (unsigned i_ = 0; i_ < m.count; i_++) {                              \
				__typeof__(arr[0]) o_;                                           \
				bad += getter(&m, i_, &o_) == WIRE_ERR_FIELD;                    \
			}                                                                        \
		}                                                                                \
		tap_eq_int(bad, sizeof(arr) / sizeof(arr[0]), what);                             \
	} while (0)

	CHECK_ALL(WIRE_T_RESERVE, res, wire_get_reserve,
		"RESERVE: rid 0, user 0, user 2^63, event 0");
	CHECK_ALL(WIRE_T_RESULT, r, wire_get_result, "RESULT: verdicts 0 and 9, user 0");
	CHECK_ALL(WIRE_T_EVENT, ev, wire_get_event, "EVENT: id 0, empty window, unknown flag");
	CHECK_ALL(WIRE_T_KEYS, k, wire_get_key, "KEYS: kind 0, 15 and 65 bytes, unknown flag");
	CHECK_ALL(WIRE_T_RULES, ru, wire_get_rule,
		"RULES: kind 0, /33, user 0, empty device, IPv6 /129, IPv6 with a byte past its "
		"address, kind 5");
#undef CHECK_ALL
	memset(noterm.name, 'a', sizeof(noterm.name));
	memset(devfull.device, 'd', sizeof(devfull.device));
	int len = wire_encode(&s, WIRE_T_EVENT, &noterm, 1, buf, sizeof(buf));
	struct wire_event eo;

	tap_ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 &&
			wire_get_event(&m, 0, &eo) == WIRE_ERR_FIELD,
		"EVENT: a name without NUL is refused");
	len = wire_encode(&s, WIRE_T_RULES, &devfull, 1, buf, sizeof(buf));
	struct wire_rule ro;

	tap_ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 &&
			wire_get_rule(&m, 0, &ro) == WIRE_ERR_FIELD,
		"RULES: a device id without NUL is refused");
	len = wire_encode(&s, WIRE_T_SNAPSHOT_END, &sn, 1, buf, sizeof(buf));
	struct wire_snapshot so;

	tap_ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 &&
			wire_get_snapshot(&m, 0, &so) == WIRE_ERR_FIELD,
		"SNAPSHOT_END: id 0 is refused");
	len = wire_encode(&s, WIRE_T_RESULT_QUERY, &q, 1, buf, sizeof(buf));
	struct wire_result_query qo;

	tap_ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 &&
			wire_get_result_query(&m, 0, &qo) == WIRE_ERR_FIELD,
		"RESULT_QUERY: event 0 is refused");
	len = wire_encode(&s, WIRE_T_SOLD_OUT, &st, 1, buf, sizeof(buf));
	struct wire_stock sto;

	tap_ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 &&
			wire_get_stock(&m, 0, &sto) == WIRE_ERR_FIELD,
		"SOLD_OUT: event 0 is refused");
	struct wire_fair fb[] = {
		{.event = 0},
		{.event = 1, .draw_state = WIRE_DRAW_STATES},
		{.event = 1, .pow_bits = WIRE_POW_BITS_MAX + 1},
		{.event = 1, .entrants = 1, .decided = 2},
		{.event = 1, .draw_state = WIRE_DRAW_QUEUEING, .draw_at_ms = 0},
		{.event = 1, .draw_state = WIRE_DRAW_QUEUEING, .queue_opens_at_ms = 3,
			.draw_at_ms = 2},
	};

	for (unsigned i = 0; i < sizeof(fb) / sizeof(fb[0]); i++) {
		struct wire_fair fo;

		len = wire_encode(&s, WIRE_T_FAIR, &fb[i], 1, buf, sizeof(buf));
		tap_ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 &&
				wire_get_fair(&m, 0, &fo) == WIRE_ERR_FIELD,
			"FAIR: bad record %u is refused", i);
	}
	/* Accessors refuse the wrong type and an index past the end. */
	struct wire_reserve ok = {.reservation_id = 1, .user = 1, .event = 1}, out;

	len = wire_encode_reservations(&s, &ok, 1, buf, sizeof(buf));
	tap_ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 &&
			wire_get_reserve(&m, 0, &out) == 0 &&
			wire_get_reserve(&m, 1, &out) == -EINVAL &&
			wire_get_result(&m, 0, (struct wire_result *)buf) == -EINVAL,
		"accessors: index 1 of 1 and the wrong type are -EINVAL");
}

/* DP_STATS: the documented bytes, the name grammar, the count bound, refused records. */
static void
test_stats(void)
{
	static const uint8_t want_rec[64] = {
		0x2a, 0, 0, 0, 0, 0, 0, 0, /* value 42 */
		1, 0, 0, 0, 0, 0, 0, 0,	   /* kind 1 (counter), pad */
		'h', 't', 't', 'p', '.', 's', 't', 'a', 't', 'u', 's', '=', '5', '0', '3',
		/* then NULs up to 48 bytes of name */
	};
	static uint8_t buf[WIRE_HDR_SIZE + (WIRE_STATS_MAX + 1) * 64];
	struct wire_sender s = {.id = 5, .epoch = 9, .seq = 0};
	struct wire_stat st, many[WIRE_STATS_MAX + 1];
	struct wire_msg m;

	tap_eq_int(wire_stat_set(&st, "http.status=503", 42, WIRE_STAT_COUNTER), 0,
		"wire_stat_set: http.status=503");
	int len = wire_encode(&s, WIRE_T_DP_STATS, &st, 1, buf, sizeof(buf));

	tap_ok(len == WIRE_HDR_SIZE + 64 && buf[3] == 4 && buf[4] == 64 && buf[5] == 0 &&
			memcmp(buf + WIRE_HDR_SIZE, want_rec, sizeof(want_rec)) == 0,
		"DP_STATS is type 4 with 64-byte records: value, kind, pad, NUL-padded name");

	static const struct {
		const char *name;
		bool ok;
	} names[] = {
		{"rx_packets", true},
		{"_x", true},
		{"drops.reason=ip_checksum", true},
		{"http_responses.status=503", true},
		{"x.y=A-b.c_9", true},
		{"a23456789012345678901234567890123456789012345.b=c", false}, /* 49 bytes */
		{"a234567890123456789012345678901234567890123456.b", false},  /* 48 bytes */
		{"a2345678901234567890123456789012345678901234567", true},    /* 47 bytes */
		{"", false},
		{"Rx", false},
		{"9x", false},
		{"rx packets", false},
		{"drops.", false},
		{"drops.reason", false},
		{"drops.reason=", false},
		{"drops.=x", false},
		{"drops.reason=a b", false},
		{"drops.reason=a\"b", false},
		{"drops.reason=a=b", false},
		{"drops:reason=a", false},
		{"drops.reason=a\n", false},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char shown[64];
		size_t k = 0;

		/* A TAP line must stay one line. */
		for (const char *c = names[i].name; *c != '\0' && k < sizeof(shown) - 1; c++)
			shown[k++] = *c == '\n' ? '~' : *c;
		shown[k] = '\0';
		tap_ok(wire_stat_name_ok(names[i].name) == names[i].ok, "name \"%s\" is %s", shown,
			names[i].ok ? "accepted" : "refused");
	}
	tap_ok(!wire_stat_name_ok(NULL), "a NULL name is refused");
	memset(&st, 0x5a, sizeof(st));
	tap_ok(wire_stat_set(&st, "bad name", 1, WIRE_STAT_COUNTER) == -EINVAL &&
			wire_stat_set(&st, "ok", 1, 3) == -EINVAL &&
			st.value == 0x5a5a5a5a5a5a5a5aull,
		"wire_stat_set refuses a bad name or kind and leaves the record alone");

	/* Up to WIRE_STATS_MAX records per message. */
	for (unsigned i = 0; i <= WIRE_STATS_MAX; i++) {
		char name[32];

		snprintf(name, sizeof(name), "c%u", i);
		wire_stat_set(&many[i], name, i, WIRE_STAT_COUNTER);
	}
	len = wire_encode(&s, WIRE_T_DP_STATS, many, WIRE_STATS_MAX, buf, sizeof(buf));
	struct wire_stat last;

	tap_ok(len == (int)wire_msg_size(WIRE_T_DP_STATS, WIRE_STATS_MAX) &&
			wire_decode(buf, (size_t)len, &m) == 0 &&
			wire_get_stat(&m, WIRE_STATS_MAX - 1, &last) == 0 &&
			strcmp(last.name, "c255") == 0 && last.value == 255,
		"%d records in one message round-trip", WIRE_STATS_MAX);
	tap_eq_int(wire_encode(&s, WIRE_T_DP_STATS, many, WIRE_STATS_MAX + 1, buf, sizeof(buf)),
		-EINVAL, "257 records: -EINVAL");
	tap_eq_int(wire_encode(&s, WIRE_T_DP_STATS, many, 0, buf, sizeof(buf)), -EINVAL,
		"0 records: -EINVAL");
	len = (int)make_raw(buf, "FG", 1, WIRE_T_DP_STATS, 64, WIRE_STATS_MAX + 1,
		(size_t)(WIRE_STATS_MAX + 1) * 64);
	tap_eq_int(wire_decode(buf, (size_t)len, &m), WIRE_ERR_COUNT,
		"a 257-record frame: bad_count");

	/* Records out of range: refused one by one, the rest of the frame is used. */
	struct wire_stat bad[5] = {
		{.value = 1, .kind = 0, .name = "rx"},
		{.value = 1, .kind = 3, .name = "rx"},
		{.value = 1, .kind = WIRE_STAT_COUNTER, .name = "Rx"},
		{.value = 1, .kind = WIRE_STAT_GAUGE, .name = ""},
		{.value = 1, .kind = WIRE_STAT_GAUGE},
	};
	unsigned refused = 0;

	memset(bad[4].name, 'a', sizeof(bad[4].name)); /* no NUL */
	len = wire_encode(&s, WIRE_T_DP_STATS, bad, 5, buf, sizeof(buf));
	if (len > 0 && wire_decode(buf, (size_t)len, &m) == 0)
		for (unsigned i = 0; i < m.count; i++)
			refused += wire_get_stat(&m, i, &st) == WIRE_ERR_FIELD;
	tap_eq_int(refused, 5, "DP_STATS: kinds 0 and 3, an upper-case, empty and unended name");
	tap_ok(wire_get_stat(&m, 5, &st) == -EINVAL &&
			wire_get_reserve(&m, 0, (struct wire_reserve *)&st) == -EINVAL,
		"wire_get_stat: index past the end and another type's getter are -EINVAL");
	tap_ok(strcmp(wire_type_name(WIRE_T_DP_STATS), "dp_stats") == 0,
		"the type is named dp_stats");
}

static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

static uint64_t
rng(void)
{
	/* xorshift64*: seeded, so a failure reproduces. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

static void
test_fuzz(void)
{
	static uint8_t buf[24 + 4 * 136 + 64];
	unsigned accepted = 0, consistent = 1, iterations = 20000, answered = 0;
	unsigned by_err[WIRE_ERR_MAX + 1] = {0};
	struct wire_msg m;

	for (unsigned it = 0; it < iterations; it++) {
		size_t len;

		if (it % 2 == 0) {
			/* Random bytes, often with a valid magic and version so deeper checks run.
			 */
			len = rng() % sizeof(buf);
			for (size_t i = 0; i < len; i++)
				buf[i] = (uint8_t)rng();
			if (len >= 4 && rng() % 2) {
				buf[0] = 'F';
				buf[1] = 'G';
				buf[2] = 1;
				buf[3] = (uint8_t)all_types[rng() % N_TYPES];
			}
		} else {
			/* A valid message of a random type, then a few flipped bytes and a cut. */
			unsigned t = all_types[rng() % N_TYPES];
			unsigned count =
				t == WIRE_T_SNAPSHOT_REQUEST ? 0 : 1 + (unsigned)(rng() % 4);
			uint8_t recs[4 * 136];
			struct wire_sender s = {1, 1, it};

			if (t == WIRE_T_LIMITS || t == WIRE_T_SNAPSHOT_BEGIN ||
				t == WIRE_T_SNAPSHOT_END || t == WIRE_T_HEARTBEAT || t == WIRE_T_HELLO)
				count = 1;
			for (size_t i = 0; i < sizeof(recs); i++)
				recs[i] = (uint8_t)rng();
			int n = wire_encode(&s, t, recs, count, buf, sizeof(buf));

			len = n > 0 ? (size_t)n : 0;
			for (unsigned f = rng() % 4; f > 0 && len > 0; f--)
				buf[rng() % len] ^= (uint8_t)(1u << (rng() % 8));
			if (rng() % 4 == 0 && len > 0)
				len = rng() % len;
		}
		int rc = decode_guarded(buf, len, &m);

		if (rc == 0) {
			accepted++;
			consistent = consistent &&
				     (size_t)WIRE_HDR_SIZE + (size_t)m.count * m.rec_size == len &&
				     (int)m.rec_size == wire_rec_size(m.type);
		}
		/* Accepted, or one of the wire's errors: nothing else (and no crash or over-read:
		 * the guard page behind each input would end the test). */
		answered += rc == 0 || wire_err_index(rc) < WIRE_ERR_MAX;
		by_err[rc == 0 ? WIRE_ERR_MAX : wire_err_index(rc)]++;
	}
	tap_eq_int(answered, iterations,
		"every random and mutated input was accepted or refused with a wire error");
	tap_ok(consistent, "every accepted input's length is header + count * record size");
	tap_ok(accepted > 0 && by_err[WIRE_ERRI_MAGIC] > 0 && by_err[WIRE_ERRI_LENGTH] > 0,
		"the fuzz reached acceptance and deep checks (accepted %u, bad_length %u)",
		accepted, by_err[WIRE_ERRI_LENGTH]);
}

static void
test_reservation_id(void)
{
	uint64_t seq = wire_reservation_seq_start(UINT64_C(1700000000000));
	uint64_t id = wire_reservation_id(1023, 63, seq + 5);

	tap_eq_int(id >> 54, 1023, "reservation id: dp id in the top 10 bits");
	tap_eq_int((id >> 48) & 63, 63, "reservation id: worker in the next 6 bits");
	tap_ok((id & ((UINT64_C(1) << 48) - 1)) == seq + 5, "reservation id: sequence in 48 bits");
	tap_ok(wire_reservation_id(1, 0, 0) != 0, "dp id >= 1 never yields id 0");
	tap_ok(wire_reservation_seq_start(UINT64_C(4000000000000)) < (UINT64_C(1) << 48),
		"start times until 2096 fit the 48-bit sequence");
}

int
main(void)
{
	test_layouts();
	test_golden_bytes();
	test_round_trips();
	test_malformed();
	test_bad_fields();
	test_stats();
	test_fuzz();
	test_reservation_id();
	return tap_done();
}
