/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the wire decoder of common/wire.c: wire_decode() and the wire_get_*()
 * accessors, which read every message a control plane or data plane receives (docs/testing.md).
 *
 * Beyond "no crash, no over-read" (the input is an exact-size heap copy), it checks that a
 * message decodes to a header that matches its length; that exactly the accessors of its type
 * read its records; that a record accepted with a text field has its NUL inside the field; and
 * that a decoded message re-encodes to the same bytes, padding excepted (re-encoded as zeros),
 * and decodes again to the same records.
 */
#include <errno.h>
#include <stdbool.h>

#include "common/wire.h"
#include "tests/fuzz/fuzz.h"

union rec {
	struct wire_reserve reserve;
	struct wire_result_query result_query;
	struct wire_result result;
	struct wire_event event;
	struct wire_stock stock;
	struct wire_key key;
	struct wire_rule rule;
	struct wire_limits limits;
	struct wire_snapshot snapshot;
	struct wire_heartbeat heartbeat;
	struct wire_stat stat;
	struct wire_hello hello;
	struct wire_dp_refused dp_refused;
	struct wire_fair fair;
};

/* Every accessor, with the types it reads. */
enum {
	G_RESERVE,
	G_RESULT_QUERY,
	G_RESULT,
	G_EVENT,
	G_STOCK,
	G_KEY,
	G_RULE,
	G_LIMITS,
	G_SNAPSHOT,
	G_HEARTBEAT,
	G_STAT,
	G_HELLO,
	G_DP_REFUSED,
	G_FAIR,
	G_N
};
static const uint8_t getter_types[G_N][2] = {
	[G_RESERVE] = {WIRE_T_RESERVE, WIRE_T_RESERVE},
	[G_RESULT_QUERY] = {WIRE_T_RESULT_QUERY, WIRE_T_RESULT_QUERY},
	[G_RESULT] = {WIRE_T_RESULT, WIRE_T_RESULT},
	[G_EVENT] = {WIRE_T_EVENT, WIRE_T_EVENT},
	[G_STOCK] = {WIRE_T_SOLD_OUT, WIRE_T_RESTOCK},
	[G_KEY] = {WIRE_T_KEYS, WIRE_T_KEYS},
	[G_RULE] = {WIRE_T_RULES, WIRE_T_RULES},
	[G_LIMITS] = {WIRE_T_LIMITS, WIRE_T_LIMITS},
	[G_SNAPSHOT] = {WIRE_T_SNAPSHOT_BEGIN, WIRE_T_SNAPSHOT_END},
	[G_HEARTBEAT] = {WIRE_T_HEARTBEAT, WIRE_T_HEARTBEAT},
	[G_STAT] = {WIRE_T_DP_STATS, WIRE_T_DP_STATS},
	[G_HELLO] = {WIRE_T_HELLO, WIRE_T_HELLO},
	[G_DP_REFUSED] = {WIRE_T_DP_REFUSED, WIRE_T_DP_REFUSED},
	[G_FAIR] = {WIRE_T_FAIR, WIRE_T_FAIR},
};

static int
get(unsigned g, const struct wire_msg *m, unsigned i, union rec *u)
{
	switch (g) {
	case G_RESERVE:
		return wire_get_reserve(m, i, &u->reserve);
	case G_RESULT_QUERY:
		return wire_get_result_query(m, i, &u->result_query);
	case G_RESULT:
		return wire_get_result(m, i, &u->result);
	case G_EVENT:
		return wire_get_event(m, i, &u->event);
	case G_STOCK:
		return wire_get_stock(m, i, &u->stock);
	case G_KEY:
		return wire_get_key(m, i, &u->key);
	case G_RULE:
		return wire_get_rule(m, i, &u->rule);
	case G_LIMITS:
		return wire_get_limits(m, i, &u->limits);
	case G_SNAPSHOT:
		return wire_get_snapshot(m, i, &u->snapshot);
	case G_HEARTBEAT:
		return wire_get_heartbeat(m, i, &u->heartbeat);
	case G_HELLO:
		return wire_get_hello(m, i, &u->hello);
	case G_DP_REFUSED:
		return wire_get_dp_refused(m, i, &u->dp_refused);
	case G_FAIR:
		return wire_get_fair(m, i, &u->fair);
	default:
		return wire_get_stat(m, i, &u->stat);
	}
}

static bool
reads(unsigned g, unsigned type)
{
	return getter_types[g][0] == type || getter_types[g][1] == type;
}

/* What a receiver relies on in a record an accessor accepted: its texts end inside it. */
static void
check_accepted(unsigned g, const union rec *u)
{
	switch (g) {
	case G_EVENT:
		FUZZ_CHECK(memchr(u->event.name, '\0', sizeof(u->event.name)) != NULL);
		break;
	case G_RULE:
		if (u->rule.kind == WIRE_RULE_BLOCK_DEVICE)
			FUZZ_CHECK(memchr(u->rule.device, '\0', sizeof(u->rule.device)) != NULL &&
				   u->rule.device[0] != '\0');
		else if (u->rule.kind == WIRE_RULE_BLOCK_IP6_CIDR)
			FUZZ_CHECK(u->rule.prefix <= 128);
		else
			FUZZ_CHECK((u->rule.kind == WIRE_RULE_BLOCK_IP_CIDR && u->rule.prefix <= 32) ||
				   u->rule.kind == WIRE_RULE_BLOCK_USER);
		break;
	case G_STAT:
		FUZZ_CHECK(memchr(u->stat.name, '\0', sizeof(u->stat.name)) != NULL &&
			   wire_stat_name_ok(u->stat.name));
		break;
	case G_RESERVE:
		FUZZ_CHECK(u->reserve.reservation_id != 0 && u->reserve.user >= 1 &&
			   u->reserve.user <= WIRE_USER_MAX && u->reserve.event != 0);
		break;
	case G_RESULT:
		FUZZ_CHECK(u->result.verdict >= 1 && u->result.verdict < WIRE_V_MAX &&
			   strcmp(wire_verdict_name(u->result.verdict), "unknown") != 0);
		break;
	case G_KEY:
		FUZZ_CHECK(u->key.len >= WIRE_SECRET_MIN && u->key.len <= WIRE_SECRET_MAX);
		break;
	case G_HELLO:
		FUZZ_CHECK(u->hello.instance != 0);
		break;
	case G_DP_REFUSED:
		FUZZ_CHECK(u->dp_refused.dp_id != 0);
		break;
	case G_FAIR:
		FUZZ_CHECK(u->fair.event != 0 && u->fair.draw_state < WIRE_DRAW_STATES &&
			   u->fair.pow_bits <= WIRE_POW_BITS_MAX &&
			   u->fair.decided <= u->fair.entrants);
		break;
	default:
		break;
	}
}

/* Reads every record of m into recs (count * rec_size bytes, host order). */
static void
read_records(const struct wire_msg *m, uint8_t *recs)
{
	union rec u;
	unsigned g_type = G_N;

	for (unsigned g = 0; g < G_N; g++) {
		/* Only the accessors of its type read a message, and only its records. */
		int rc = get(g, m, m->count, &u);

		FUZZ_CHECK(rc == -EINVAL);
		if (!reads(g, m->type)) {
			FUZZ_CHECK(get(g, m, 0, &u) == -EINVAL);
			continue;
		}
		g_type = g;
	}
	FUZZ_CHECK(g_type < G_N || m->count == 0);
	for (unsigned i = 0; i < m->count; i++) {
		int rc;

		memset(&u, 0xa5, sizeof(u));
		rc = get(g_type, m, i, &u);
		FUZZ_CHECK(rc == 0 || rc == WIRE_ERR_FIELD);
		if (rc == 0)
			check_accepted(g_type, &u);
		memcpy(recs + (size_t)i * m->rec_size, &u, m->rec_size);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = (uint8_t *)fuzz_copy(data, size);
	struct wire_msg m, m2;
	int rc = wire_decode(buf, size, &m);

	if (rc != 0) {
		FUZZ_CHECK(rc >= WIRE_ERR_COUNT && rc <= WIRE_ERR_SHORT);
		FUZZ_CHECK(strcmp(wire_err_name(rc), "unknown") != 0);
		FUZZ_CHECK((rc == WIRE_ERR_SHORT) == (size < WIRE_HDR_SIZE));
		free(buf);
		return 0;
	}
	FUZZ_CHECK(m.recs == buf + WIRE_HDR_SIZE);
	FUZZ_CHECK(wire_rec_size(m.type) == m.rec_size && wire_msg_size(m.type, m.count) == size);
	FUZZ_CHECK(strcmp(wire_type_name(m.type), "unknown") != 0);

	size_t body = (size_t)m.count * m.rec_size;
	uint8_t *recs = malloc(body ? body : 1), *recs2 = malloc(body ? body : 1);
	uint8_t *out = malloc(size), *out2 = malloc(size);

	FUZZ_CHECK(recs != NULL && recs2 != NULL && out != NULL && out2 != NULL);
	read_records(&m, recs);

	/* Re-encoded: the same bytes but the padding, which goes out as zeros. */
	struct wire_sender s = {.id = m.sender, .epoch = m.epoch, .seq = m.seq};

	FUZZ_CHECK(
		wire_encode(&s, m.type, recs, m.count, out, size - 1) == -ENOSPC && s.seq == m.seq);
	FUZZ_CHECK(wire_encode(&s, m.type, m.count ? recs : NULL, m.count, out, size) == (int)size);
	FUZZ_CHECK(s.seq == m.seq + 1);
	for (size_t i = 0; i < size; i++)
		FUZZ_CHECK(out[i] == buf[i] || out[i] == 0);

	/* ... which decodes to the same header and records, and encodes to itself. */
	FUZZ_CHECK(wire_decode(out, size, &m2) == 0);
	FUZZ_CHECK(m2.type == m.type && m2.count == m.count && m2.sender == m.sender &&
		   m2.epoch == m.epoch && m2.seq == m.seq);
	read_records(&m2, recs2);
	FUZZ_CHECK(memcmp(recs, recs2, body) == 0);
	s.seq = m.seq;
	FUZZ_CHECK(
		wire_encode(&s, m.type, m.count ? recs2 : NULL, m.count, out2, size) == (int)size);
	FUZZ_CHECK(memcmp(out, out2, size) == 0);

	free(out2);
	free(out);
	free(recs2);
	free(recs);
	free(buf);
	return 0;
}
