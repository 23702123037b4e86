/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/wire.h"

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

/*
 * What each type carries. The layout string lists the record's fields in order so that one
 * loop converts any record: Q, L, H are 8, 4, 2-byte little-endian integers; B<n> is n bytes
 * copied as they are; x<n> is n bytes of padding, zeroed. A digit-less letter means one.
 * tests/unit/test_wire.c checks that every layout adds up to its record size.
 */
struct wire_type_info {
	const char *name;
	uint16_t rec_size;
	uint16_t min_count;
	uint16_t max_count;
	const char *layout;
};

static const struct wire_type_info type_info[WIRE_T_MAX] = {
	[WIRE_T_RESERVE] = {"reserve", sizeof(struct wire_reserve), 1, WIRE_MAX_RECORDS, "QQQLL"},
	[WIRE_T_SNAPSHOT_REQUEST] = {"snapshot_request", 0, 0, 0, ""},
	[WIRE_T_RESULT_QUERY] = {"result_query", sizeof(struct wire_result_query), 1,
		WIRE_MAX_RECORDS, "QLx4"},
	[WIRE_T_DP_STATS] = {"dp_stats", sizeof(struct wire_stat), 1, WIRE_STATS_MAX, "QBx7B48"},
	[WIRE_T_RESULT] = {"result", sizeof(struct wire_result), 1, WIRE_MAX_RECORDS, "QQQQLLBBx2L"},
	[WIRE_T_EVENT] = {"event", sizeof(struct wire_event), 1, WIRE_MAX_RECORDS, "LLQQBx7B64"},
	[WIRE_T_SOLD_OUT] = {"sold_out", sizeof(struct wire_stock), 1, WIRE_MAX_RECORDS, "LL"},
	[WIRE_T_RESTOCK] = {"restock", sizeof(struct wire_stock), 1, WIRE_MAX_RECORDS, "LL"},
	/* An empty keyring or rule set is a real message: "there are none now". */
	[WIRE_T_KEYS] = {"keys", sizeof(struct wire_key), 0, WIRE_MAX_RECORDS, "LBBBxB64"},
	[WIRE_T_RULES] = {"rules", sizeof(struct wire_rule), 0, WIRE_MAX_RECORDS, "QLBBx2B64"},
	[WIRE_T_LIMITS] = {"limits", sizeof(struct wire_limits), 1, 1, "LLLLLLLL"},
	[WIRE_T_SNAPSHOT_BEGIN] = {"snapshot_begin", sizeof(struct wire_snapshot), 1, 1, "QLLLx4"},
	[WIRE_T_SNAPSHOT_END] = {"snapshot_end", sizeof(struct wire_snapshot), 1, 1, "QLLLx4"},
	[WIRE_T_HEARTBEAT] = {"heartbeat", sizeof(struct wire_heartbeat), 1, 1, "Q"},
	[WIRE_T_HELLO] = {"hello", sizeof(struct wire_hello), 1, 1, "QQ"},
	[WIRE_T_DP_REFUSED] = {"dp_refused", sizeof(struct wire_dp_refused), 1, WIRE_MAX_RECORDS,
		"QLL"},
	[WIRE_T_FAIR] = {"fair", sizeof(struct wire_fair), 1, WIRE_MAX_RECORDS,
		"LBBBxQQLLLLB32B32B32"},
};

static const struct wire_type_info *
info_of(unsigned type)
{
	if (type >= WIRE_T_MAX || type_info[type].name == NULL)
		return NULL;
	return &type_info[type];
}

int
wire_rec_size(enum wire_type type)
{
	const struct wire_type_info *ti = info_of(type);

	return ti == NULL ? -1 : ti->rec_size;
}

size_t
wire_msg_size(enum wire_type type, unsigned count)
{
	const struct wire_type_info *ti = info_of(type);

	return ti == NULL ? 0 : WIRE_HDR_SIZE + (size_t)ti->rec_size * count;
}

const char *
wire_type_name(unsigned type)
{
	const struct wire_type_info *ti = info_of(type);

	return ti == NULL ? "unknown" : ti->name;
}

const char *
wire_err_name(int err)
{
	static const char *const names[] = {
#define WIRE_X_NAME(name, str) str,
		WIRE_ERRORS(WIRE_X_NAME)
#undef WIRE_X_NAME
	};
	unsigned i = wire_err_index(err);

	return i < WIRE_ERR_MAX ? names[i] : "unknown";
}

const char *
wire_verdict_name(unsigned verdict)
{
	static const char *const names[WIRE_V_MAX] = {
		[WIRE_V_RESERVED] = "reserved",
		[WIRE_V_DUPLICATE] = "duplicate",
		[WIRE_V_SOLD_OUT] = "sold_out",
		[WIRE_V_RETRY] = "retry",
		[WIRE_V_ORDERED] = "ordered",
		[WIRE_V_PAID] = "paid",
		[WIRE_V_EXPIRED] = "expired",
		[WIRE_V_CANCELLED] = "cancelled",
		[WIRE_V_CLOSED] = "closed",
		[WIRE_V_NOT_STARTED] = "not_started",
		[WIRE_V_QUEUED] = "queued",
		[WIRE_V_WAITING] = "waiting",
	};

	return verdict < WIRE_V_MAX && names[verdict] != NULL ? names[verdict] : "unknown";
}

/*
 * Converts one record between host order and little-endian following layout; the
 * conversion is its own inverse, so encoding and decoding share it. Returns the bytes the
 * layout covers (the unit test compares it with the record size).
 */
static size_t
convert(uint8_t *dst, const uint8_t *src, const char *layout)
{
	size_t off = 0;

	for (const char *p = layout; *p != '\0';) {
		char kind = *p++;
		unsigned n = 0;

		while (*p >= '0' && *p <= '9')
			n = n * 10 + (unsigned)(*p++ - '0');
		if (n == 0)
			n = 1;
		for (unsigned k = 0; k < n; k++) {
			switch (kind) {
			case 'Q': {
				uint64_t v;

				memcpy(&v, src + off, 8);
				v = htole64(v);
				memcpy(dst + off, &v, 8);
				off += 8;
				break;
			}
			case 'L': {
				uint32_t v;

				memcpy(&v, src + off, 4);
				v = htole32(v);
				memcpy(dst + off, &v, 4);
				off += 4;
				break;
			}
			case 'H': {
				uint16_t v;

				memcpy(&v, src + off, 2);
				v = htole16(v);
				memcpy(dst + off, &v, 2);
				off += 2;
				break;
			}
			case 'x':
				dst[off++] = 0;
				break;
			default: /* 'B' */
				dst[off] = src[off];
				off++;
				break;
			}
		}
	}
	return off;
}

size_t
wire_layout_size(enum wire_type type)
{
	const struct wire_type_info *ti = info_of(type);
	uint8_t scratch[256] = {0};

	return ti == NULL ? 0 : convert(scratch, scratch, ti->layout);
}

int
wire_encode(struct wire_sender *s, enum wire_type type, const void *recs, unsigned count, void *buf,
	size_t cap)
{
	const struct wire_type_info *ti = info_of(type);
	uint8_t *out = buf;

	if (ti == NULL || count < ti->min_count || count > ti->max_count ||
		(count > 0 && recs == NULL))
		return -EINVAL;
	size_t len = WIRE_HDR_SIZE + (size_t)ti->rec_size * count;

	if (len > cap)
		return -ENOSPC;
	struct wire_hdr h = {
		.magic = {WIRE_MAGIC0, WIRE_MAGIC1},
		.version = WIRE_VERSION,
		.type = (uint8_t)type,
		.rec_size = htole16(ti->rec_size),
		.count = htole16((uint16_t)count),
		.sender = htole32(s->id),
		.epoch = htole32(s->epoch),
		.seq = htole64(s->seq),
	};

	memcpy(out, &h, sizeof(h));
	for (unsigned i = 0; i < count; i++)
		convert(out + WIRE_HDR_SIZE + (size_t)i * ti->rec_size,
			(const uint8_t *)recs + (size_t)i * ti->rec_size, ti->layout);
	s->seq++;
	return (int)len;
}

int
wire_encode_reservations(
	struct wire_sender *s, const struct wire_reserve *r, unsigned n, void *buf, size_t cap)
{
	return wire_encode(s, WIRE_T_RESERVE, r, n, buf, cap);
}

int
wire_encode_results(
	struct wire_sender *s, const struct wire_result *r, unsigned n, void *buf, size_t cap)
{
	return wire_encode(s, WIRE_T_RESULT, r, n, buf, cap);
}

int
wire_decode(const void *buf, size_t len, struct wire_msg *m)
{
	const uint8_t *p = buf;
	struct wire_hdr h;

	if (len < WIRE_HDR_SIZE)
		return WIRE_ERR_SHORT;
	memcpy(&h, p, sizeof(h));
	if (h.magic[0] != WIRE_MAGIC0 || h.magic[1] != WIRE_MAGIC1)
		return WIRE_ERR_MAGIC;
	if (h.version != WIRE_VERSION)
		return WIRE_ERR_VERSION;
	const struct wire_type_info *ti = info_of(h.type);

	if (ti == NULL)
		return WIRE_ERR_TYPE;
	uint16_t rec_size = le16toh(h.rec_size), count = le16toh(h.count);

	if (rec_size != ti->rec_size)
		return WIRE_ERR_RECSIZE;
	if ((size_t)rec_size * count != len - WIRE_HDR_SIZE)
		return WIRE_ERR_LENGTH;
	if (count < ti->min_count || count > ti->max_count)
		return WIRE_ERR_COUNT;
	m->type = h.type;
	m->rec_size = rec_size;
	m->count = count;
	m->sender = le32toh(h.sender);
	m->epoch = le32toh(h.epoch);
	m->seq = le64toh(h.seq);
	m->recs = p + WIRE_HDR_SIZE;
	return 0;
}

/* Copies record i of m into out if m is of type t (or t2); -EINVAL otherwise. */
static int
get_rec(const struct wire_msg *m, unsigned i, unsigned t, unsigned t2, void *out)
{
	if ((m->type != t && m->type != t2) || i >= m->count)
		return -EINVAL;
	const struct wire_type_info *ti = info_of(m->type);

	convert(out, m->recs + (size_t)i * ti->rec_size, ti->layout);
	return 0;
}

static bool
user_ok(uint64_t user)
{
	return user >= 1 && user <= (uint64_t)WIRE_USER_MAX;
}

/* A NUL-padded text field: at least one NUL, so it is a C string within its array. */
static bool
padded_ok(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

int
wire_get_reserve(const struct wire_msg *m, unsigned i, struct wire_reserve *out)
{
	int rc = get_rec(m, i, WIRE_T_RESERVE, WIRE_T_RESERVE, out);

	if (rc != 0)
		return rc;
	return out->reservation_id != 0 && user_ok(out->user) && out->event != 0 ? 0
										 : WIRE_ERR_FIELD;
}

int
wire_get_result_query(const struct wire_msg *m, unsigned i, struct wire_result_query *out)
{
	int rc = get_rec(m, i, WIRE_T_RESULT_QUERY, WIRE_T_RESULT_QUERY, out);

	if (rc != 0)
		return rc;
	return user_ok(out->user) && out->event != 0 ? 0 : WIRE_ERR_FIELD;
}

int
wire_get_result(const struct wire_msg *m, unsigned i, struct wire_result *out)
{
	int rc = get_rec(m, i, WIRE_T_RESULT, WIRE_T_RESULT, out);

	if (rc != 0)
		return rc;
	return user_ok(out->user) && out->event != 0 && out->verdict >= 1 &&
			       out->verdict < WIRE_V_MAX
		       ? 0
		       : WIRE_ERR_FIELD;
}

int
wire_get_event(const struct wire_msg *m, unsigned i, struct wire_event *out)
{
	int rc = get_rec(m, i, WIRE_T_EVENT, WIRE_T_EVENT, out);

	if (rc != 0)
		return rc;
	return out->id != 0 && out->starts_at_ms < out->ends_at_ms &&
			       (out->flags & ~(WIRE_EVENT_F_SOLD_OUT | WIRE_EVENT_F_CLOSED | WIRE_EVENT_F_HELD)) == 0 &&
			       padded_ok(out->name, sizeof(out->name))
		       ? 0
		       : WIRE_ERR_FIELD;
}

int
wire_get_stock(const struct wire_msg *m, unsigned i, struct wire_stock *out)
{
	int rc = get_rec(m, i, WIRE_T_SOLD_OUT, WIRE_T_RESTOCK, out);

	if (rc != 0)
		return rc;
	return out->event != 0 ? 0 : WIRE_ERR_FIELD;
}

int
wire_get_key(const struct wire_msg *m, unsigned i, struct wire_key *out)
{
	int rc = get_rec(m, i, WIRE_T_KEYS, WIRE_T_KEYS, out);

	if (rc != 0)
		return rc;
	return (out->kind == WIRE_KEY_AUTH || out->kind == WIRE_KEY_SALE) &&
			       (out->flags & ~WIRE_KEY_F_CURRENT) == 0 &&
			       out->len >= WIRE_SECRET_MIN && out->len <= WIRE_SECRET_MAX
		       ? 0
		       : WIRE_ERR_FIELD;
}

int
wire_get_rule(const struct wire_msg *m, unsigned i, struct wire_rule *out)
{
	int rc = get_rec(m, i, WIRE_T_RULES, WIRE_T_RULES, out);

	if (rc != 0)
		return rc;
	switch (out->kind) {
	case WIRE_RULE_BLOCK_IP_CIDR:
		return out->prefix <= 32 ? 0 : WIRE_ERR_FIELD;
	case WIRE_RULE_BLOCK_IP6_CIDR:
		/* The 48 bytes after the address are zero: room kept for what may follow. */
		for (unsigned b = 16; b < sizeof(out->ipv6); b++)
			if (out->ipv6[b] != 0)
				return WIRE_ERR_FIELD;
		return out->prefix <= 128 ? 0 : WIRE_ERR_FIELD;
	case WIRE_RULE_BLOCK_USER:
		return user_ok(out->user) ? 0 : WIRE_ERR_FIELD;
	case WIRE_RULE_BLOCK_DEVICE:
		return out->device[0] != '\0' && padded_ok(out->device, sizeof(out->device))
			       ? 0
			       : WIRE_ERR_FIELD;
	default:
		return WIRE_ERR_FIELD;
	}
}

int
wire_get_limits(const struct wire_msg *m, unsigned i, struct wire_limits *out)
{
	return get_rec(m, i, WIRE_T_LIMITS, WIRE_T_LIMITS, out);
}

int
wire_get_snapshot(const struct wire_msg *m, unsigned i, struct wire_snapshot *out)
{
	int rc = get_rec(m, i, WIRE_T_SNAPSHOT_BEGIN, WIRE_T_SNAPSHOT_END, out);

	if (rc != 0)
		return rc;
	return out->snapshot_id != 0 ? 0 : WIRE_ERR_FIELD;
}

int
wire_get_heartbeat(const struct wire_msg *m, unsigned i, struct wire_heartbeat *out)
{
	return get_rec(m, i, WIRE_T_HEARTBEAT, WIRE_T_HEARTBEAT, out);
}

int
wire_get_hello(const struct wire_msg *m, unsigned i, struct wire_hello *out)
{
	int rc = get_rec(m, i, WIRE_T_HELLO, WIRE_T_HELLO, out);

	if (rc != 0)
		return rc;
	return out->instance != 0 ? 0 : WIRE_ERR_FIELD;
}

int
wire_get_dp_refused(const struct wire_msg *m, unsigned i, struct wire_dp_refused *out)
{
	int rc = get_rec(m, i, WIRE_T_DP_REFUSED, WIRE_T_DP_REFUSED, out);

	if (rc != 0)
		return rc;
	return out->dp_id != 0 ? 0 : WIRE_ERR_FIELD;
}

int
wire_get_fair(const struct wire_msg *m, unsigned i, struct wire_fair *out)
{
	int rc = get_rec(m, i, WIRE_T_FAIR, WIRE_T_FAIR, out);

	if (rc != 0)
		return rc;
	if (out->event == 0 || out->draw_state >= WIRE_DRAW_STATES ||
		out->pow_bits > WIRE_POW_BITS_MAX || out->decided > out->entrants)
		return WIRE_ERR_FIELD;
	if (out->draw_state != WIRE_DRAW_NONE &&
		(out->draw_at_ms == 0 || out->queue_opens_at_ms > out->draw_at_ms))
		return WIRE_ERR_FIELD;
	return 0;
}

/* [a-z_][a-z0-9_]*: a family or a label name, which become Prometheus names. */
static const char *
stat_ident(const char *p)
{
	if (!((*p >= 'a' && *p <= 'z') || *p == '_'))
		return NULL;
	while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')
		p++;
	return p;
}

bool
wire_stat_name_ok(const char *name)
{
	const char *p;

	if (name == NULL || strnlen(name, WIRE_STAT_NAME_MAX) == WIRE_STAT_NAME_MAX)
		return false;
	p = stat_ident(name);
	if (p == NULL)
		return false;
	if (*p == '\0')
		return true;
	if (*p++ != '.' || (p = stat_ident(p)) == NULL || *p++ != '=' || *p == '\0')
		return false;
	/* A label value is shown and exported as it is: keep it to characters that need no
	 * escaping anywhere. */
	for (; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '-'))
			return false;
	return true;
}

int
wire_stat_set(struct wire_stat *s, const char *name, uint64_t value, enum wire_stat_kind kind)
{
	if (!wire_stat_name_ok(name) || (kind != WIRE_STAT_COUNTER && kind != WIRE_STAT_GAUGE))
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->value = value;
	s->kind = (uint8_t)kind;
	memcpy(s->name, name, strlen(name));
	return 0;
}

int
wire_get_stat(const struct wire_msg *m, unsigned i, struct wire_stat *out)
{
	int rc = get_rec(m, i, WIRE_T_DP_STATS, WIRE_T_DP_STATS, out);

	if (rc != 0)
		return rc;
	return (out->kind == WIRE_STAT_COUNTER || out->kind == WIRE_STAT_GAUGE) &&
			       wire_stat_name_ok(out->name)
		       ? 0
		       : WIRE_ERR_FIELD;
}
