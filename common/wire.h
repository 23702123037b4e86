/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_COMMON_WIRE_H
#define FG_COMMON_WIRE_H
/*
 * The one definition of every message between data planes and control planes
 * (docs/wire.md is the byte-by-byte reference). A message is one ZeroMQ frame:
 * a 24-byte header, then `count` records of one fixed size, all integers
 * little-endian.
 *
 * The structs below are both the host representation and the wire layout:
 * every field sits at its natural alignment with explicit padding, so the C
 * layout has no hidden holes (checked by the _Static_asserts) and records in a
 * frame stay 8-byte aligned after the 24-byte header. The encoders convert to
 * little-endian and zero the padding; wire_decode() validates the header and
 * the wire_get_*() accessors copy one record out, converting and checking its
 * fields. Nothing here allocates or reads past the buffer it is given.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_MAGIC0   'F'
#define WIRE_MAGIC1   'G'
#define WIRE_VERSION  1
#define WIRE_HDR_SIZE 24
/* The largest user id: users are 1..2^63-1 so that every language can hold one in a signed int. */
#define WIRE_USER_MAX	 INT64_MAX
#define WIRE_NAME_MAX	 64 /* event names: up to 63 bytes, NUL-padded */
#define WIRE_SECRET_MAX	 64
#define WIRE_SECRET_MIN	 16 /* an HMAC key shorter than this is refused */
#define WIRE_DEVICE_MAX	 64 /* device ids: up to 63 bytes, NUL-padded */
#define WIRE_MAX_RECORDS UINT16_MAX

/* Message types. 1..15 travel data plane -> control plane (PUSH/PULL), 16.. the other way
 * (PUB/SUB). */
enum wire_type {
	WIRE_T_RESERVE = 1,	     /* wire_reserve x n: admitted reservations */
	WIRE_T_SNAPSHOT_REQUEST = 2, /* no records: "publish a full snapshot" */
	WIRE_T_RESULT_QUERY = 3, /* wire_result_query x n: "publish these users' results again" */
	WIRE_T_DP_STATS = 4,	 /* wire_stat x n: the data plane's counters, once a second */
	WIRE_T_HELLO = 5,	 /* wire_hello x 1: "this instance holds my dp id", once a second */
	WIRE_T_RESULT = 16,	 /* wire_result x n */
	WIRE_T_EVENT = 17,	 /* wire_event x n: upsert (in a snapshot: the whole set) */
	WIRE_T_SOLD_OUT = 18,	 /* wire_stock x n */
	WIRE_T_RESTOCK = 19,	 /* wire_stock x n */
	WIRE_T_KEYS = 20,	 /* wire_key x n: the complete keyring (auth and sale), replaces */
	WIRE_T_RULES = 21,	 /* wire_rule x n: the complete rule set, replaces (n may be 0) */
	WIRE_T_LIMITS = 22,	 /* wire_limits x 1 */
	WIRE_T_SNAPSHOT_BEGIN = 23, /* wire_snapshot x 1 */
	WIRE_T_SNAPSHOT_END = 24,   /* wire_snapshot x 1, with the counts of what was sent */
	WIRE_T_HEARTBEAT = 25,	    /* wire_heartbeat x 1: "alive", once a second */
	WIRE_T_DP_REFUSED = 26,	    /* wire_dp_refused x n: "your dp id is in use: stop" */
	WIRE_T_FAIR = 27,	    /* wire_fair x n: events' draw and challenge (upsert) */
};
#define WIRE_T_MAX 28 /* one past the largest type: sizes arrays of per-type counters */

/* Why wire_decode() or a wire_get_*() refused a message; each is a distinct negative result. */
#define WIRE_ERRORS(X)                                                                      \
	X(SHORT, "short")	  /* shorter than the header */                             \
	X(MAGIC, "bad_magic")	  /* not "FG": not ours, or garbage */                      \
	X(VERSION, "bad_version") /* a version this build does not speak */                 \
	X(TYPE, "unknown_type")                                                             \
	X(RECSIZE, "bad_record_size") /* record size does not match the type */             \
	X(LENGTH, "bad_length")	      /* count * record size != payload length */           \
	X(COUNT, "bad_count")	      /* a count the type does not allow (e.g. 2 LIMITS) */ \
	X(FIELD, "bad_field")	      /* a record field out of range (user 0, verdict 99) */

#define WIRE_X_ENUM(name, str) WIRE_ERRI_##name,
enum wire_err_index { WIRE_ERRORS(WIRE_X_ENUM) WIRE_ERR_MAX };
#undef WIRE_X_ENUM
/* The negative results: WIRE_ERR_SHORT == -1 ... WIRE_ERR_FIELD == -8. */
#define WIRE_X_ENUM(name, str) WIRE_ERR_##name = -1 - WIRE_ERRI_##name,
enum wire_err { WIRE_ERRORS(WIRE_X_ENUM) };
#undef WIRE_X_ENUM

/* The header as it is on the wire (and, converted, on the host). */
struct wire_hdr {
	uint8_t magic[2];  /* "FG" */
	uint8_t version;   /* WIRE_VERSION */
	uint8_t type;	   /* enum wire_type */
	uint16_t rec_size; /* bytes per record: fixed by the type, checked */
	uint16_t count;	   /* records that follow */
	uint32_t sender;   /* the data plane's or control plane's configured id */
	uint32_t epoch;	   /* sender's start, Unix s: seq restarts when it changes */
	uint64_t seq;	   /* per sender and epoch, +1 per message: a gap is a lost message */
};
_Static_assert(sizeof(struct wire_hdr) == WIRE_HDR_SIZE, "wire_hdr is 24 bytes");
_Static_assert(offsetof(struct wire_hdr, seq) == 16, "wire_hdr.seq at 16");

/*
 * A reservation id is unique per data plane and over its restarts:
 * dp id (10 bits, 1..1023) | worker (6 bits) | sequence (48 bits). Each worker starts its
 * sequence at its start time in Unix milliseconds * 64, so ids of a restarted data plane
 * never meet the old ones unless a worker admitted more than 64 reservations per
 * millisecond on average since it started (the forward budget keeps it far below).
 * 0 is never a reservation id.
 */
#define WIRE_RID_DP_BITS     10
#define WIRE_RID_WORKER_BITS 6
#define WIRE_RID_SEQ_BITS    48
#define WIRE_DP_ID_MAX	     ((1u << WIRE_RID_DP_BITS) - 1)
#define WIRE_WORKERS_MAX     (1u << WIRE_RID_WORKER_BITS)

static inline uint64_t
wire_reservation_id(uint32_t dp_id, unsigned worker, uint64_t seq)
{
	return ((uint64_t)dp_id << (WIRE_RID_WORKER_BITS + WIRE_RID_SEQ_BITS)) |
	       ((uint64_t)worker << WIRE_RID_SEQ_BITS) |
	       (seq & ((UINT64_C(1) << WIRE_RID_SEQ_BITS) - 1));
}

/* The first sequence number of a worker started at Unix time start_ms. */
static inline uint64_t
wire_reservation_seq_start(uint64_t start_ms)
{
	return start_ms << WIRE_RID_WORKER_BITS;
}

/* RESERVE: one admitted reservation. */
struct wire_reserve {
	uint64_t reservation_id; /* wire_reservation_id(); never 0 */
	uint64_t user;		 /* 1..WIRE_USER_MAX */
	uint64_t admitted_ms;	 /* when the data plane admitted it */
	uint32_t event;		 /* 1..UINT32_MAX */
	uint32_t client_ipv4;	 /* the client's address as a number: 10.0.0.1 is 0x0a000001 */
};
_Static_assert(sizeof(struct wire_reserve) == 32, "wire_reserve is 32 bytes");

/* RESULT_QUERY: "publish the result of (event, user) again". */
struct wire_result_query {
	uint64_t user;
	uint32_t event;
	uint32_t pad;
};
_Static_assert(sizeof(struct wire_result_query) == 16, "wire_result_query is 16 bytes");

/*
 * DP_STATS: one named counter or gauge of a data plane, so that a new counter needs no wire
 * change. A name is a family, optionally with one label: "rx_packets" or
 * "drops.reason=ip_checksum" (family [a-z_][a-z0-9_]*, label the same, value [A-Za-z0-9_.-]+),
 * at most WIRE_STAT_NAME_MAX - 1 bytes, NUL-padded: the control plane shows the families by
 * label and turns them into Prometheus metrics without knowing them in advance. Counters only
 * grow while the sender's epoch stays the same.
 */
#define WIRE_STAT_NAME_MAX 48
#define WIRE_STATS_MAX	   256 /* records per DP_STATS message */

enum wire_stat_kind {
	WIRE_STAT_COUNTER = 1, /* a running total since the sender started */
	WIRE_STAT_GAUGE = 2,   /* a value now (a queue's length, a flag) */
};

struct wire_stat {
	uint64_t value;
	uint8_t kind; /* enum wire_stat_kind */
	uint8_t pad[7];
	char name[WIRE_STAT_NAME_MAX]; /* NUL-padded, at least one NUL */
};
_Static_assert(sizeof(struct wire_stat) == 64, "wire_stat is 64 bytes");
_Static_assert(offsetof(struct wire_stat, name) == 16, "wire_stat.name at 16");

/* What the control plane decided, or what became of the order since. */
enum wire_verdict {
	WIRE_V_RESERVED = 1,  /* stock held for the user; an order follows */
	WIRE_V_DUPLICATE = 2, /* the user already holds one for this event */
	WIRE_V_SOLD_OUT = 3,
	WIRE_V_RETRY = 4,   /* the cp could not decide: a poll answers "retry", the client reserves
			     * again (docs/wire.md says why not 503) */
	WIRE_V_ORDERED = 5, /* the order is written: order_id and pay_deadline_ms are set */
	WIRE_V_PAID = 6,
	WIRE_V_EXPIRED = 7, /* not paid in time; the stock went back */
	WIRE_V_CANCELLED = 8,
	WIRE_V_CLOSED = 9, /* not decided: the sale is closed or ended (control plane's clock) */
	WIRE_V_NOT_STARTED = 10, /* not decided: the sale is held or has not started yet */
	WIRE_V_QUEUED = 11, /* an entrant of the event's draw, not decided yet; rank once drawn */
	WIRE_V_WAITING = 12, /* a draw's entrant beyond the stock, on the waiting list (rank set):
			      * a returned item goes to it in rank order (docs/fairness.md) */
};
#define WIRE_V_MAX 13

struct wire_result {
	uint64_t reservation_id;
	uint64_t user;
	uint64_t order_id;	  /* 0 until ORDERED */
	uint64_t pay_deadline_ms; /* 0 until ORDERED */
	uint32_t event;
	uint32_t stock_left; /* the event's stock after this decision (WIRE_RESULT_F_STOCK) */
	uint8_t verdict;     /* enum wire_verdict */
	uint8_t flags;	     /* WIRE_RESULT_F_* */
	uint8_t pad[2];
	uint32_t rank; /* QUEUED, WAITING: the entrant's place in the draw, 1-based; 0: not drawn
			* yet */
};
/* stock_left is the event's stock in Redis right after this decision: set by the control
 * plane's reserve rounds that Redis answered, never by a result read back or relayed. */
#define WIRE_RESULT_F_STOCK 0x01
_Static_assert(sizeof(struct wire_result) == 48, "wire_result is 48 bytes");
_Static_assert(offsetof(struct wire_result, rank) == 44, "wire_result.rank at 44");

#define WIRE_EVENT_F_SOLD_OUT 0x01
#define WIRE_EVENT_F_CLOSED   0x02 /* ended early by the operator */
#define WIRE_EVENT_F_HELD     0x04 /* not opened by the operator yet: upcoming, whatever the time */

struct wire_event {
	uint32_t id;
	uint32_t stock;	       /* stock left */
	uint64_t starts_at_ms; /* the sale is [starts_at, ends_at) */
	uint64_t ends_at_ms;
	uint8_t flags; /* WIRE_EVENT_F_* */
	uint8_t pad[7];
	char name[WIRE_NAME_MAX]; /* UTF-8, NUL-padded, at least one NUL */
};
_Static_assert(sizeof(struct wire_event) == 96, "wire_event is 96 bytes");
_Static_assert(offsetof(struct wire_event, name) == 32, "wire_event.name at 32");

/*
 * FAIR: an event's fair start (docs/fairness.md), published after its EVENT in every snapshot
 * and again whenever it changes (the draw's progress at most every 200 ms while it runs).
 * Events without a FAIR record have neither a draw nor a challenge.
 */
enum wire_draw_state {
	WIRE_DRAW_NONE = 0,	/* no draw: first come, first served */
	WIRE_DRAW_QUEUEING = 1, /* entrants are taken (until draw_at_ms) */
	WIRE_DRAW_DRAWING = 2,	/* the entrants are fixed (entrants_digest); being decided */
	WIRE_DRAW_DONE = 3,	/* every entrant decided; seed revealed; first come from now */
};
#define WIRE_DRAW_STATES 4
#define WIRE_POW_BITS_MAX 30 /* the hardest challenge: 2^30 hashes expected */
#define WIRE_DIGEST_LEN	  32 /* SHA-256 */
/* FAIR flags: no item can come back to the waiting list any more (the stock is 0 and every
 * item held is paid): its entrants' "waiting" is a final "sold_out". */
#define WIRE_FAIR_F_FINAL 0x01

struct wire_fair {
	uint32_t event;
	uint8_t draw_state; /* enum wire_draw_state */
	uint8_t pow_bits;   /* difficulty of the challenge in new purchase tokens; 0: none */
	uint8_t flags;	    /* WIRE_FAIR_F_*; 0 from older builds */
	uint8_t pad;
	uint64_t queue_opens_at_ms; /* entrants from then (draws only; 0 otherwise) */
	uint64_t draw_at_ms;	    /* starts_at + draw window: the draw's moment; 0: no draw */
	uint32_t entrants;	    /* entrants so far (QUEUEING), fixed from DRAWING on */
	uint32_t decided;	    /* entrants the draw has decided, in rank order */
	uint32_t rate;		    /* entrants decided per second lately (estimated waits) */
	uint32_t served; /* the highest rank holding an item (the draw's or the waiting list's);
			  * an entrant of rank r waiting has r - 1 - served ahead; 0 from older
			  * builds */
	uint8_t seed_sha256[WIRE_DIGEST_LEN];	  /* the commitment: SHA-256 of the seed */
	uint8_t entrants_digest[WIRE_DIGEST_LEN]; /* zero until DRAWING */
	uint8_t seed[WIRE_DIGEST_LEN];		  /* zero until DONE */
};
_Static_assert(sizeof(struct wire_fair) == 136, "wire_fair is 136 bytes");
_Static_assert(offsetof(struct wire_fair, seed_sha256) == 40, "wire_fair.seed_sha256 at 40");

/* SOLD_OUT and RESTOCK. */
struct wire_stock {
	uint32_t event;
	uint32_t stock_left;
};
_Static_assert(sizeof(struct wire_stock) == 8, "wire_stock is 8 bytes");

enum wire_key_kind {
	WIRE_KEY_AUTH = 1, /* verifies session tokens (the shop's login service signs them) */
	WIRE_KEY_SALE = 2, /* signs and verifies purchase tokens, receipts and reserve paths */
};
#define WIRE_KEY_F_CURRENT 0x01 /* the key new tokens are signed with (one per kind) */

struct wire_key {
	uint32_t kid;
	uint8_t kind;  /* enum wire_key_kind */
	uint8_t flags; /* WIRE_KEY_F_* */
	uint8_t len;   /* WIRE_SECRET_MIN..WIRE_SECRET_MAX bytes of secret are used */
	uint8_t pad;
	uint8_t secret[WIRE_SECRET_MAX];
};
_Static_assert(sizeof(struct wire_key) == 72, "wire_key is 72 bytes");

enum wire_rule_kind {
	WIRE_RULE_BLOCK_IP_CIDR = 1,  /* ipv4 / prefix */
	WIRE_RULE_BLOCK_USER = 2,     /* user */
	WIRE_RULE_BLOCK_DEVICE = 3,   /* device */
	WIRE_RULE_BLOCK_IP6_CIDR = 4, /* ipv6 / prefix */
};

struct wire_rule {
	uint64_t user;
	uint32_t ipv4;	/* as a number, like wire_reserve.client_ipv4 */
	uint8_t kind;	/* enum wire_rule_kind */
	uint8_t prefix; /* 0..32; BLOCK_IP6_CIDR: 0..128 */
	uint8_t pad[2];
	union {
		char device[WIRE_DEVICE_MAX]; /* NUL-padded, at least one NUL */
		/* BLOCK_IP6_CIDR: the network's 16 bytes in network order, then 48 zero bytes */
		uint8_t ipv6[WIRE_DEVICE_MAX];
	};
};
_Static_assert(sizeof(struct wire_rule) == 80, "wire_rule is 80 bytes");

/* Token-bucket parameters: tokens per second and bucket size. A rate of 0 means "no limit". */
struct wire_limits {
	uint32_t ip_rate;
	uint32_t ip_burst;
	uint32_t user_rate;
	uint32_t user_burst;
	uint32_t device_rate;
	uint32_t device_burst;
	uint32_t event_forward_per_s; /* reservations per event per second sent to the control plane
				       */
	uint32_t event_forward_burst; /* its bucket size; 0: one second's worth (the rate) */
};
_Static_assert(sizeof(struct wire_limits) == 32, "wire_limits is 32 bytes");

/* SNAPSHOT_BEGIN and SNAPSHOT_END: the same id; END carries how many records were sent. */
struct wire_snapshot {
	uint64_t snapshot_id; /* never 0 */
	uint32_t n_events;
	uint32_t n_keys;
	uint32_t n_rules;
	uint32_t pad;
};
_Static_assert(sizeof(struct wire_snapshot) == 24, "wire_snapshot is 24 bytes");

struct wire_heartbeat {
	uint64_t now_ms; /* the sender's clock */
};
_Static_assert(sizeof(struct wire_heartbeat) == 8, "wire_heartbeat is 8 bytes");

/*
 * HELLO: a data plane's instance, so that the control plane can tell two data planes
 * configured with the same dp id apart (docs/wire.md "dp ids").
 */
struct wire_hello {
	uint64_t instance; /* random, never 0, drawn at start */
	uint64_t now_ms;   /* the data plane's clock */
};
_Static_assert(sizeof(struct wire_hello) == 16, "wire_hello is 16 bytes");

/* DP_REFUSED: the data plane (dp_id, epoch[, instance]) is refused: another holds its dp id. */
struct wire_dp_refused {
	uint64_t instance; /* the refused instance; 0: every instance of (dp_id, epoch) */
	uint32_t dp_id;
	uint32_t epoch; /* the refused data plane's epoch (its header's) */
};
_Static_assert(sizeof(struct wire_dp_refused) == 16, "wire_dp_refused is 16 bytes");

/*
 * The largest message of each direction the format allows: the header and WIRE_MAX_RECORDS
 * (the 16-bit count) records of the direction's largest record. Towards a control plane that
 * is a RESULT of an order writer (48 bytes a record: more than RESERVE's 32, RESULT_QUERY's 16,
 * RESTOCK's 8 and DP_STATS' 256 x 64); from it a FAIR (136 bytes: more than EVENT's 96, KEYS'
 * 72 and RULES' 80). Every socket's ZMQ_MAXMSGSIZE is one of these (plus CURVE's overhead,
 * common/zlink.h): ZeroMQ drops anything longer before it is read, and the peer with it.
 */
#define WIRE_MSG_MAX_TO_CP   (WIRE_HDR_SIZE + (size_t)WIRE_MAX_RECORDS * sizeof(struct wire_result))
#define WIRE_MSG_MAX_FROM_CP (WIRE_HDR_SIZE + (size_t)WIRE_MAX_RECORDS * sizeof(struct wire_fair))
_Static_assert(sizeof(struct wire_result) >= sizeof(struct wire_reserve) &&
		       sizeof(struct wire_result) >= sizeof(struct wire_result_query) &&
		       sizeof(struct wire_result) >= sizeof(struct wire_stock) &&
		       sizeof(struct wire_result) >= sizeof(struct wire_hello) &&
		       (size_t)WIRE_MAX_RECORDS * sizeof(struct wire_result) >=
			       (size_t)WIRE_STATS_MAX * sizeof(struct wire_stat),
	"RESULT is the largest message towards a control plane");
_Static_assert(sizeof(struct wire_fair) >= sizeof(struct wire_event) &&
		       sizeof(struct wire_event) >= sizeof(struct wire_key) &&
		       sizeof(struct wire_event) >= sizeof(struct wire_rule) &&
		       sizeof(struct wire_event) >= sizeof(struct wire_result) &&
		       sizeof(struct wire_event) >= sizeof(struct wire_limits) &&
		       sizeof(struct wire_event) >= sizeof(struct wire_dp_refused),
	"FAIR is the largest message from a control plane");

/* Who sends: its id and epoch, and the next sequence number (the encoders increment it). */
struct wire_sender {
	uint32_t id;
	uint32_t epoch;
	uint64_t seq;
};

/* A decoded message: the header in host order and a view of the records inside the buffer. */
struct wire_msg {
	uint8_t type;
	uint16_t rec_size;
	uint16_t count;
	uint32_t sender;
	uint32_t epoch;
	uint64_t seq;
	const uint8_t *recs; /* count * rec_size bytes, inside the decoded buffer */
};

/* Bytes a message of count records of type takes, or 0 for an unknown type. */
size_t wire_msg_size(enum wire_type type, unsigned count);

/* The record size of type, or -1 for an unknown type. */
int wire_rec_size(enum wire_type type);

/* The bytes the converter of type covers; equals wire_rec_size() (checked by the unit test). */
size_t wire_layout_size(enum wire_type type);

/* "reserve", "result", ... or "unknown". */
const char *wire_type_name(unsigned type);

/* "short", "bad_magic", ... for a WIRE_ERR_* value; "unknown" for anything else. */
const char *wire_err_name(int err);

/* The counter slot (0..WIRE_ERR_MAX-1) of a WIRE_ERR_* value; WIRE_ERR_MAX for anything else. */
static inline unsigned
wire_err_index(int err)
{
	return err < 0 && err >= -(int)WIRE_ERR_MAX ? (unsigned)(-err - 1) : WIRE_ERR_MAX;
}

/*
 * Encodes a message of type with count records taken from recs (an array of the type's
 * struct, host order; NULL when count is 0) into buf. Uses s->seq and increments it.
 * Returns the message length, -EINVAL for an unknown type or a count the type does not
 * allow, or -ENOSPC when cap is too small (then s->seq is unchanged). Fields are not
 * range-checked: the receiver does that.
 */
int wire_encode(struct wire_sender *s, enum wire_type type, const void *recs, unsigned count,
	void *buf, size_t cap);

/* Typed shorthands for wire_encode(). */
int wire_encode_reservations(
	struct wire_sender *s, const struct wire_reserve *r, unsigned n, void *buf, size_t cap);
int wire_encode_results(
	struct wire_sender *s, const struct wire_result *r, unsigned n, void *buf, size_t cap);

/*
 * Validates the header of the message in buf[0..len): magic, version, type, record size,
 * count and length, in that order. Returns 0 and fills *m, or the first WIRE_ERR_* that
 * applies. Reads nothing outside buf[0..len).
 */
int wire_decode(const void *buf, size_t len, struct wire_msg *m);

/*
 * Copy record i of m (of the matching type) to *out in host order and check its fields.
 * Return 0, WIRE_ERR_FIELD when a field is out of range (*out is filled anyway), or
 * -EINVAL when m is of another type or i >= m->count.
 */
int wire_get_reserve(const struct wire_msg *m, unsigned i, struct wire_reserve *out);
int wire_get_result_query(const struct wire_msg *m, unsigned i, struct wire_result_query *out);
int wire_get_result(const struct wire_msg *m, unsigned i, struct wire_result *out);
int wire_get_event(const struct wire_msg *m, unsigned i, struct wire_event *out);
/* For SOLD_OUT and RESTOCK. */
int wire_get_stock(const struct wire_msg *m, unsigned i, struct wire_stock *out);
int wire_get_key(const struct wire_msg *m, unsigned i, struct wire_key *out);
int wire_get_rule(const struct wire_msg *m, unsigned i, struct wire_rule *out);
int wire_get_limits(const struct wire_msg *m, unsigned i, struct wire_limits *out);
/* For SNAPSHOT_BEGIN and SNAPSHOT_END. */
int wire_get_snapshot(const struct wire_msg *m, unsigned i, struct wire_snapshot *out);
int wire_get_heartbeat(const struct wire_msg *m, unsigned i, struct wire_heartbeat *out);
/* HELLO: WIRE_ERR_FIELD for instance 0. DP_REFUSED: WIRE_ERR_FIELD for dp id 0. */
int wire_get_hello(const struct wire_msg *m, unsigned i, struct wire_hello *out);
int wire_get_dp_refused(const struct wire_msg *m, unsigned i, struct wire_dp_refused *out);
/* FAIR: WIRE_ERR_FIELD for event 0, an unknown draw state, pow_bits over WIRE_POW_BITS_MAX,
 * a draw without draw_at_ms or queue_opens_at_ms after it, or decided over entrants. */
int wire_get_fair(const struct wire_msg *m, unsigned i, struct wire_fair *out);
/* For DP_STATS: WIRE_ERR_FIELD for an unknown kind or a name wire_stat_name_ok() refuses. */
int wire_get_stat(const struct wire_msg *m, unsigned i, struct wire_stat *out);

/*
 * Whether name follows the grammar of a wire_stat name ("family" or "family.label=value", see
 * struct wire_stat) and fits WIRE_STAT_NAME_MAX with its NUL. NULL is refused.
 */
bool wire_stat_name_ok(const char *name);

/*
 * Fills *s with name, value and kind (padding zeroed). Returns 0, or -EINVAL when the name
 * is refused by wire_stat_name_ok() or kind is unknown (then *s is left alone).
 */
int wire_stat_set(struct wire_stat *s, const char *name, uint64_t value, enum wire_stat_kind kind);

/* "reserved", "duplicate", ... or "unknown". */
const char *wire_verdict_name(unsigned verdict);

#endif
