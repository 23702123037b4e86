/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_COUNTERS_H
#define FG_DP_COUNTERS_H
/*
 * Per-worker counters. Each worker owns one struct dp_counters and is its only
 * writer; readers (telemetry, the final report) sum them without locks and may
 * see a value that is a burst old, never a torn one (aligned 64-bit words).
 */
#include <stdint.h>
#include <stdio.h>

/* Why a received packet produced no answer. Every drop is counted by reason. */
#define DP_DROP_REASONS(X)                                                                         \
	X(ETH_RUNT, "eth_runt")                     /* shorter than an Ethernet header */          \
	X(ETH_NOT_FOR_US, "eth_not_for_us")         /* unicast to another MAC, or multicast */     \
	X(ETH_UNSUPPORTED, "eth_unsupported")       /* not IPv4 or ARP (IPv6, VLAN, ...) */        \
	X(MULTI_SEGMENT, "multi_segment")           /* chained mbuf; frames are one segment */     \
	X(ARP_MALFORMED, "arp_malformed")                                                          \
	X(ARP_IGNORED, "arp_ignored")               /* replies, or requests for other addresses */ \
	X(IP_RUNT, "ip_runt")                                                                      \
	X(IP_VERSION, "ip_version")                                                                \
	X(IP_HDR_LEN, "ip_header_length")                                                          \
	X(IP_OPTIONS, "ip_options")                 /* IHL > 5: options are not handled */         \
	X(IP_TOTAL_LEN, "ip_total_length")          /* total length disagrees with the frame */    \
	X(IP_CKSUM, "ip_checksum")                                                                 \
	X(IP_TTL, "ip_ttl_zero")                                                                   \
	X(IP_FRAGMENT, "ip_fragment")                                                              \
	X(IP_NOT_FOR_US, "ip_not_for_us")                                                          \
	X(IP_BAD_SOURCE, "ip_bad_source")           /* broadcast, multicast, 0/8, 127/8 source */ \
	X(IP_PROTO, "ip_unsupported_protocol")                                                     \
	X(ICMP_MALFORMED, "icmp_malformed")                                                        \
	X(ICMP_CKSUM, "icmp_checksum")                                                             \
	X(ICMP_UNSUPPORTED, "icmp_unsupported")     /* anything but echo request */                \
	X(TCP_HDR_LEN, "tcp_header_length")                                                        \
	X(TCP_CKSUM, "tcp_checksum")                                                               \
	X(TCP_BAD_FLAGS, "tcp_bad_flags")           /* SYN+FIN, SYN+RST, no ACK on data, ... */    \
	X(TCP_RST_IN, "tcp_rst_received")           /* RSTs are never answered */                  \
	X(TCP_PURE_ACK, "tcp_pure_ack")             /* nothing to answer: stateless */             \
	X(TCP_MSS_FLOOR, "tcp_mss_below_floor")     /* a SYN's MSS below dataplane.mss_floor */    \
	X(TX_FULL, "tx_full")                       /* the TX queue refused the answer */          \
	X(ANSWER_NO_MBUF, "answer_no_mbuf")         /* no mbufs for a multi-segment answer */      \
	X(KEPT_EARLY, "kept_request_before_ack")    /* kept: the last answer not yet ACKed */

#define DP_X_ENUM(name, str) DP_DROP_##name,
enum dp_drop_reason { DP_DROP_REASONS(DP_X_ENUM) DP_DROP_MAX };
#undef DP_X_ENUM

/* Answers by kind, besides HTTP statuses. */
#define DP_ANSWER_KINDS(X)                                                                         \
	X(ARP_REPLY, "arp_reply")                                                                  \
	X(ICMP_ECHO_REPLY, "icmp_echo_reply")                                                      \
	X(SYN_ACK, "syn_ack")                                                                      \
	X(RST, "rst")                       /* to a closed port or an unexpected segment */        \
	X(RST_BAD_COOKIE, "rst_bad_cookie") /* data whose ACK proves no cookie of ours */          \
	X(FIN_ACK, "fin_ack")               /* the client's FIN, acknowledged from the packet */   \
	X(HTTP, "http_response")                                                                   \
	X(HTTP_MORE_SEGMENTS, "http_more_segments") /* an answer's segments after its first */   \
	X(KEPT_ACK, "kept_ack")             /* kept: an ACK, FIN or RST without data */            \
	X(KEPT_RESENT, "kept_resent")       /* kept: an answer's segment sent again */

#define DP_X_ENUM(name, str) DP_ANS_##name,
enum dp_answer_kind { DP_ANSWER_KINDS(DP_X_ENUM) DP_ANS_MAX };
#undef DP_X_ENUM

/* Why an admission request (token, reserve, result) was refused. */
#define DP_REJECT_REASONS(X)                                                                       \
	X(BLOCKED_IP, "blocked_ip")               /* a risk rule: 403 */                           \
	X(BLOCKED_USER, "blocked_user")                                                            \
	X(BLOCKED_DEVICE, "blocked_device")                                                        \
	X(LIMIT_IP, "limit_ip")                   /* a token bucket: 429 */                        \
	X(LIMIT_USER, "limit_user")                                                                \
	X(LIMIT_DEVICE, "limit_device")                                                            \
	X(FORWARD_BUDGET, "forward_budget")       /* the event's budget to the control plane */    \
	X(NO_EVENT, "no_event")                   /* 404 */                                        \
	X(TOO_EARLY, "too_early")                 /* 425: the sale has not started */              \
	X(CLOSED, "closed")                       /* 410 */                                        \
	X(SOLD_OUT, "sold_out")                   /* 410, answered here without the control plane */ \
	X(NO_SESSION, "no_session")               /* 401: no Authorization: Bearer */              \
	X(SESSION_INVALID, "session_invalid")     /* 401: malformed, unknown key, bad MAC */       \
	X(SESSION_EXPIRED, "session_expired")     /* 401 */                                        \
	X(BAD_PATH, "bad_reserve_path")           /* 403: not this event's hidden path */          \
	X(NO_TOKEN, "no_token")                   /* 403: no X-Flash-Token */                      \
	X(TOKEN_INVALID, "token_invalid")         /* 403: malformed, unknown key, bad MAC */       \
	X(TOKEN_OTHER_EVENT, "token_other_event") /* 403 */                                        \
	X(TOKEN_EXPIRED, "token_expired")         /* 403 */                                        \
	X(TOKEN_OTHER_USER, "token_other_user")   /* 403: the session is another user's */         \
	X(NOT_READY, "not_ready")                 /* 503: no snapshot or no keys yet */            \
	X(OTHER_HOST, "other_host")               /* 400: an absolute-form URI of another host */  \
	X(BRIDGE_FULL, "bridge_full")             /* 503: the ring to the bridge is full */        \
	X(LIMIT_POLL, "limit_poll")               /* 429: the user's result polls (poll_rate) */   \
	X(STOPPING, "stopping")                   /* 503: stopping, handing over what it took */ \
	X(POW_MISSING, "pow_missing")             /* 403: a p2 token without X-Flash-Solution */ \
	X(POW_WRONG, "pow_wrong")                 /* 403: a solution that does not solve it */   \
	X(DRAWING, "drawing")                     /* 425: the draw is in progress */

#define DP_X_ENUM(name, str) DP_REJ_##name,
enum dp_reject_reason { DP_REJECT_REASONS(DP_X_ENUM) DP_REJ_MAX };
#undef DP_X_ENUM

/* What admission did when it said yes. */
#define DP_ADMIT_KINDS(X)                                                                          \
	X(TOKEN_ISSUED, "token_issued")                                                            \
	X(RESERVE_ADMITTED, "reserve_admitted")   /* handed to the bridge, 202 */                  \
	X(RESULT_FOUND, "result_found")           /* a poll answered from the result table */      \
	X(RESULT_QUEUED, "result_queued")         /* a poll answered "queued" */                   \
	X(RESULT_QUERY, "result_query")           /* a poll that asked the control plane again */  \
	X(RESULT_LOST, "result_lost")             /* an old receipt without result: "retry" */     \
	X(RESULT_COOLED, "result_cooled")         /* no result, queried within the cooldown */     \
	X(RESERVE_KNOWN, "reserve_known")         /* a known buyer's reserve: 200, not forwarded */\
	X(CORS_PREFLIGHT, "cors_preflight")                                                        \
	X(TOKEN_CHALLENGE, "token_challenge")     /* a token issued with a challenge (p2) */       \
	X(RESULT_POSITION, "result_position")     /* a poll answered an entrant's place in line */

#define DP_X_ENUM(name, str) DP_ADM_##name,
enum dp_admit_kind { DP_ADMIT_KINDS(DP_X_ENUM) DP_ADM_MAX };
#undef DP_X_ENUM

/*
 * Kept connections from trusted edges (docs/edge.md). capacity and in_use are gauges (the
 * table's entries and those in use); the rest count events.
 */
#define DP_KEPT_COUNTERS(X)                                                                        \
	X(CAPACITY, "capacity")               /* entries of the table (dataplane.kept_connections) */ \
	X(IN_USE, "in_use")                   /* entries in use now */                             \
	X(OPENED, "opened")                   /* an entry made after a valid cookie */             \
	X(TABLE_FULL, "table_full")           /* none free: answered with Connection: close */     \
	X(REQUESTS, "requests")               /* requests answered on kept connections */          \
	X(CLOSED, "closed")                   /* ended by FINs, both acknowledged */               \
	X(RESET, "reset")                     /* ended by the peer's RST at RCV.NXT */             \
	X(IDLE_CLOSED, "idle_closed")         /* idle past dataplane.kept_idle_timeout: our FIN */ \
	X(CLOSE_ASKED, "close_answered")      /* Connection: close, HTTP/1.0, an error, too long */ \
	X(PIPELINED, "pipelined_closed")      /* bytes after the request: answered, then closed */ \
	X(ANSWER_RESENT, "answer_resent")     /* a retransmitted request: the kept answer again */ \
	X(TIMER_RESENT, "timer_resent")       /* unacknowledged for kept_rto: sent again */        \
	X(GAVE_UP, "gave_up")                 /* unacknowledged after every retry: reset */        \
	X(CHALLENGE_ACK, "challenge_ack")     /* RFC 5961: an in-window RST, a SYN, a bad ACK */   \
	X(OUT_OF_WINDOW, "out_of_window")     /* outside the window: ACKed (RST: dropped) */      \
	X(OUT_OF_ORDER, "out_of_order")       /* ahead of RCV.NXT: ACKed, the peer sends again */  \
	X(DATA_AFTER_CLOSE, "data_after_close") /* data after our FIN: reset */               \
	X(PROXY_HEADERS, "proxy_alone")       /* a PROXY header alone in its segment: ACKed */ \
	X(WINDOW_PROBES, "window_probes")     /* zero-window probes sent (RFC 9293 §3.8.6.1) */   \
	X(WINDOW_RESET, "zero_window_reset")  /* the window shut for kept_idle_timeout: reset */ \
	X(CLIENT_LIMIT, "client_limit")       /* a PROXY client over kept_per_client: reset */     \
	X(NO_REQUEST, "no_request_closed")    /* no request by kept_first_request_timeout: FIN */

#define DP_X_ENUM(name, str) DP_KEPT_##name,
enum dp_kept_counter { DP_KEPT_COUNTERS(DP_X_ENUM) DP_KEPT_MAX };
#undef DP_X_ENUM

/* HTTP statuses we send, each with its own counter slot. */
#define DP_HTTP_STATUSES(X)                                                                        \
	X(200) X(202) X(204) X(400) X(401) X(403) X(404) X(405) X(410) X(414) X(425) X(429) X(431) \
	X(500) X(501) X(503) X(505)

#define DP_X_ENUM(code) DP_HTTP_##code,
enum dp_http_slot { DP_HTTP_STATUSES(DP_X_ENUM) DP_HTTP_MAX };
#undef DP_X_ENUM

/* The rate-limit tables (dataplane/ratelimit.h) and what their inserts did (docs/limits.md). */
#define DP_LIMIT_TABLES(X) X(IP, "ip") X(USER, "user") X(DEVICE, "device")
#define DP_X_ENUM(name, str) DP_LIM_##name,
enum dp_limit_table { DP_LIMIT_TABLES(DP_X_ENUM) DP_LIM_MAX };
#undef DP_X_ENUM
#define DP_LIMIT_EVENTS(X)                                                                         \
	X(INSERTS, "inserts") X(RECYCLED, "recycled") X(MOVED, "moved") X(EVICTIONS, "evictions")
#define DP_X_ENUM(name, str) DP_LIM_EV_##name,
enum dp_limit_event { DP_LIMIT_EVENTS(DP_X_ENUM) DP_LIM_EV_MAX };
#undef DP_X_ENUM

/*
 * Where each routed request's client address came from (docs/edge.md), and what was ignored or
 * refused on the way. The first five add up to the requests that reached routing.
 */
#define DP_CLIENT_SOURCES(X)                                                                       \
	X(PACKET, "packet")                 /* not from a trusted edge: the packet's source */     \
	X(EDGE, "edge")                     /* a trusted edge naming no client (health checks) */  \
	X(XFF, "x_forwarded_for")           /* a trusted edge's X-Forwarded-For */                 \
	X(FORWARDED, "forwarded")           /* a trusted edge's Forwarded: for= */                 \
	X(PROXY, "proxy")                   /* a trusted edge's PROXY protocol header */           \
	X(IGNORED, "ignored")               /* X-Forwarded-For/Forwarded from others: ignored */   \
	X(REFUSED, "refused")               /* a trusted edge's malformed header: 400 */           \
	X(PROXY_UNTRUSTED, "proxy_untrusted") /* a PROXY header from others: reset */             \
	X(PROXY_MALFORMED, "proxy_malformed") /* a malformed PROXY header: reset */               \
	X(PROXY_ALONE, "proxy_alone")       /* a PROXY header without the request: reset */

#define DP_X_ENUM(name, str) DP_CLIENT_##name,
enum dp_client_source { DP_CLIENT_SOURCES(DP_X_ENUM) DP_CLIENT_MAX };
#undef DP_X_ENUM

struct dp_counters {
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t tx_packets;
	uint64_t tx_bytes;
	uint64_t requests;                 /* HTTP requests parsed or rejected */
	/* TSC cycles the worker spent on bursts that brought packets (receive, pipeline, send),
	 * so that cycles per request can be told apart from the load that was offered. */
	uint64_t busy_cycles;
	/* The worker threads' own time, beside the TSC: cpu_ns is their CPU clock
	 * (CLOCK_THREAD_CPUTIME_ID: time they ran, polling included), wall_ns the time since
	 * their loops started, both brought up to date about once a millisecond and at stop. A
	 * worker polls without sleeping, so cpu_ns / wall_ns is the share of wall time it ran:
	 * under 1 on a shared host, where busy_cycles also counts others' time slices. */
	uint64_t cpu_ns;
	uint64_t wall_ns;
	/* Bursts that brought packets: rx_packets / rx_bursts is the mean burst, near the burst
	 * size when the worker is saturated, small when it waits for packets. */
	uint64_t rx_bursts;
	/* Frames the TX queue refused at first: held, and sent before the worker received
	 * anything more on that queue (nothing dropped; drop tx_full counts what was still held
	 * at stop). Growing: the link back, or the peer, takes less than is answered. */
	uint64_t tx_held;
	uint64_t drops[DP_DROP_MAX];
	uint64_t answers[DP_ANS_MAX];
	uint64_t http[DP_HTTP_MAX];
	uint64_t reject[DP_REJ_MAX];
	uint64_t admit[DP_ADM_MAX];
	/* The worker's rate-limit tables' counters (struct rl_table): not counted here but
	 * copied in when the counters are read (worker_counters_read()); 0 for a table that is
	 * off. */
	uint64_t limit[DP_LIM_MAX][DP_LIM_EV_MAX];
	uint64_t kept[DP_KEPT_MAX];
	uint64_t client[DP_CLIENT_MAX]; /* by client address source */
};

/* Maps an HTTP status to its counter slot; unknown statuses share the 500 slot. */
static inline enum dp_http_slot
counters_http_slot(unsigned status)
{
	switch (status) {
#define DP_X_CASE(code)                                                                            \
	case code:                                                                                 \
		return DP_HTTP_##code;
		DP_HTTP_STATUSES(DP_X_CASE)
#undef DP_X_CASE
	default:
		return DP_HTTP_500;
	}
}

/* How a counter reads: a running total since the start, or a value now. */
enum counters_kind { COUNTERS_COUNTER, COUNTERS_GAUGE };

/* The names of an X(ENUM, "name") list, indexed by its enum, as a static array. */
#define COUNTERS_X_NAME(e, str) str,
#define COUNTERS_NAMES(list)	((const char *const[]){list(COUNTERS_X_NAME)})
#define COUNTERS_X_CODE(code)	#code,
#define COUNTERS_HTTP_NAMES	((const char *const[]){DP_HTTP_STATUSES(COUNTERS_X_CODE)})

/*
 * Every counter of struct dp_counters, with its one name: every reporter walks this table, in
 * this order (counters_table[]): the text at exit (counters_print()), the JSON file
 * (counters_json()), DPDK telemetry (/flashgate/stats), the DP_STATS records to the control
 * plane (bridge_stats_from_counters()) and so the Prometheus metrics (flashgate_dp_<name>_total
 * or flashgate_dp_<name> for a gauge) and `flashgatectl stats`. Each entry:
 *   X(name, kind, label, first, n, stride, members, help)
 * A single counter (label NULL, n 1, members NULL) is shown as name. A family (label the key
 * that tells its members apart) holds n values from first, stride uint64_t apart, named by
 * members: shown as "name.label=member" to the control plane, name_member in telemetry, an
 * object "name": {"member": ...} in JSON and "name member" in the text. A member appended to a
 * family's list (DP_KEPT_COUNTERS, ...) is reported everywhere without a change here.
 */
#define COUNTERS_TABLE(X)                                                                          \
	X("rx_packets", COUNTER, NULL, rx_packets, 1, 1, NULL, "Packets received")                 \
	X("rx_bytes", COUNTER, NULL, rx_bytes, 1, 1, NULL, "Bytes received")                       \
	X("tx_packets", COUNTER, NULL, tx_packets, 1, 1, NULL, "Packets sent")                     \
	X("tx_bytes", COUNTER, NULL, tx_bytes, 1, 1, NULL, "Bytes sent")                           \
	X("http_requests", COUNTER, NULL, requests, 1, 1, NULL,                                    \
		"HTTP requests parsed or rejected")                                                \
	X("busy_cycles", COUNTER, NULL, busy_cycles, 1, 1, NULL,                                   \
		"TSC cycles spent on bursts that brought packets")                                 \
	X("cpu_ns", COUNTER, NULL, cpu_ns, 1, 1, NULL,                                             \
		"Nanoseconds the workers ran on a CPU (their threads' CPU clock)")                 \
	X("wall_ns", COUNTER, NULL, wall_ns, 1, 1, NULL,                                           \
		"Nanoseconds since the workers' loops started")                                    \
	X("rx_bursts", COUNTER, NULL, rx_bursts, 1, 1, NULL,                                       \
		"Receive bursts that brought packets")                                             \
	X("tx_held", COUNTER, NULL, tx_held, 1, 1, NULL,                                           \
		"Frames the TX queue refused at first, held and sent later")                       \
	X("answers", COUNTER, "kind", answers, DP_ANS_MAX, 1, COUNTERS_NAMES(DP_ANSWER_KINDS),     \
		"Answers sent, by kind")                                                           \
	X("http_responses", COUNTER, "status", http, DP_HTTP_MAX, 1, COUNTERS_HTTP_NAMES,          \
		"HTTP responses sent, by status")                                                  \
	X("admits", COUNTER, "kind", admit, DP_ADM_MAX, 1, COUNTERS_NAMES(DP_ADMIT_KINDS),         \
		"Admission requests said yes to, by what was done")                                \
	X("rejects", COUNTER, "reason", reject, DP_REJ_MAX, 1, COUNTERS_NAMES(DP_REJECT_REASONS),  \
		"Admission requests refused, by reason")                                           \
	X("client_addresses", COUNTER, "source", client, DP_CLIENT_MAX, 1,                         \
		COUNTERS_NAMES(DP_CLIENT_SOURCES),                                                 \
		"Routed requests by where their client address came from")                         \
	X("drops", COUNTER, "reason", drops, DP_DROP_MAX, 1, COUNTERS_NAMES(DP_DROP_REASONS),      \
		"Received packets not answered, by reason")                                        \
	X("ratelimit_inserts", COUNTER, "table", limit[0][DP_LIM_EV_INSERTS], DP_LIM_MAX,          \
		DP_LIM_EV_MAX, COUNTERS_NAMES(DP_LIMIT_TABLES),                                    \
		"Rate-limit table inserts, by table")                                              \
	X("ratelimit_recycled", COUNTER, "table", limit[0][DP_LIM_EV_RECYCLED], DP_LIM_MAX,        \
		DP_LIM_EV_MAX, COUNTERS_NAMES(DP_LIMIT_TABLES),                                    \
		"Idle rate-limit entries reused for a new key, by table")                          \
	X("ratelimit_moved", COUNTER, "table", limit[0][DP_LIM_EV_MOVED], DP_LIM_MAX,              \
		DP_LIM_EV_MAX, COUNTERS_NAMES(DP_LIMIT_TABLES),                                    \
		"Rate-limit entries moved to their other set, by table")                           \
	X("ratelimit_evictions", COUNTER, "table", limit[0][DP_LIM_EV_EVICTIONS], DP_LIM_MAX,      \
		DP_LIM_EV_MAX, COUNTERS_NAMES(DP_LIMIT_TABLES),                                    \
		"Hot rate-limit entries replaced for want of room, by table")                      \
	X("kept_connections_capacity", GAUGE, NULL, kept[DP_KEPT_CAPACITY], 1, 1, NULL,            \
		"Entries of the kept connections' table")                                          \
	X("kept_connections_in_use", GAUGE, NULL, kept[DP_KEPT_IN_USE], 1, 1, NULL,                \
		"Kept connections' entries in use")                                                \
	X("kept_connections", COUNTER, "event", kept[DP_KEPT_OPENED],                              \
		DP_KEPT_MAX - DP_KEPT_OPENED, 1,                                                   \
		COUNTERS_NAMES(DP_KEPT_COUNTERS) + DP_KEPT_OPENED, "Kept connections' events")

/* One entry of COUNTERS_TABLE. */
struct counters_desc {
	const char *name;
	enum counters_kind kind;
	const char *label; /* the key of a family's members; NULL for a single counter */
	size_t offset;	   /* of the first value in struct dp_counters */
	unsigned n, stride;
	const char *const *members; /* n names; NULL for a single counter */
	const char *help;
};

#define COUNTERS_X_ONE(...) +1
enum { COUNTERS_TABLE_LEN = 0 COUNTERS_TABLE(COUNTERS_X_ONE) };
#undef COUNTERS_X_ONE

/* COUNTERS_TABLE, COUNTERS_TABLE_LEN entries. */
extern const struct counters_desc counters_table[COUNTERS_TABLE_LEN];

/* Value i (0 <= i < d->n) of entry d of counters_table in c. */
static inline uint64_t
counters_value(const struct dp_counters *c, const struct counters_desc *d, unsigned i)
{
	return ((const uint64_t *)((const char *)c + d->offset))[(size_t)i * d->stride];
}

/*
 * Writes value i's name into buf (cap bytes): d->name for a single counter, else d->name, sep
 * and the member's name ("drops_ip_checksum" with '_'). Returns its length, or -ENOSPC (buf
 * holds a cut name) when it does not fit.
 */
int counters_flat_name(const struct counters_desc *d, unsigned i, char sep, char *buf, size_t cap);

/* Name of a drop reason (as in counters_table[]'s "drops"), or "unknown". */
const char *counters_drop_name(enum dp_drop_reason r);

/* Adds every counter of src to dst (for totals over workers). */
void counters_add(struct dp_counters *dst, const struct dp_counters *src);

/*
 * Writes c to f as text, one counter a line: every single counter ("  rx_packets 5"), and the
 * members of a family that are not 0 ("  drops ip_checksum 3").
 */
void counters_print(FILE *f, const struct dp_counters *c);

#endif
