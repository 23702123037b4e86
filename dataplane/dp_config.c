/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/dp_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "dataplane/edge.h"

#define DP_FIELD(f) \
	.offset = offsetof(struct dp_config, f), .size = sizeof(((struct dp_config *)0)->f)
#define EV_FIELD(f) \
	.offset = offsetof(struct dp_event_cfg, f), .size = sizeof(((struct dp_event_cfg *)0)->f)

#define DP_MS_PER_S 1000u

static const struct cfg_key dp_keys[] = {
	{
		.name = "address",
		.type = CFG_IPV4,
		DP_FIELD(ipv4_addr),
		.def = "198.18.0.2",
		.doc = "The IPv4 address of this data plane: it answers ARP, ping and TCP for it.",
	},
	{
		.name = "listen_ports",
		.type = CFG_PORT_LIST,
		DP_FIELD(listen_ports),
		.min = 1,
		.max = DP_MAX_LISTEN_PORTS,
		.count_offset = offsetof(struct dp_config, n_listen_ports),
		.def = "80",
		.doc = "The TCP ports that serve HTTP; a SYN to any other port gets a RST.",
	},
	{
		.name = "mss",
		.type = CFG_UINT,
		DP_FIELD(mss),
		.min = 536,
		.max = 1460,
		.def = "1460",
		.doc = "The TCP MSS advertised in SYN-ACKs and the largest segment sent: "
		       "1460 for a 1500-byte MTU, less behind tunnels.",
	},
	{
		.name = "mss_floor",
		.type = CFG_UINT,
		DP_FIELD(mss_floor),
		.min = 536,
		.max = 1460,
		.def = "536",
		.doc = "A SYN whose MSS option is below this is dropped (counted as "
		       "drop_tcp_mss_below_floor; an explicit MSS of 0 too); a SYN without the "
		       "option counts as 536 (RFC 9293). "
		       "Never below 536: the SYN cookie cannot encode a smaller MSS, so a smaller "
		       "client could not be answered in segments it accepts.",
	},
	{
		.name = "host",
		.type = CFG_STRING,
		DP_FIELD(host),
		.min = 0,
		.max = DP_HOST_MAX,
		.def = "",
		.doc = "The DNS name clients use for this data plane (e.g. sale.shop.example): a "
		       "request in absolute form (GET http://NAME/path, RFC 9112 3.2.2) is "
		       "answered when NAME is this or the address, else refused with 400. "
		       "Empty: the address only.",
	},
	{
		.name = "burst",
		.type = CFG_UINT,
		DP_FIELD(burst),
		.min = 1,
		.max = 64,
		.def = "32",
		.doc = "Packets received and sent per burst by each worker.",
	},
	{
		.name = "rx_desc",
		.type = CFG_UINT,
		DP_FIELD(rx_desc),
		.min = 64,
		.max = 4096,
		.flags = CFG_F_POW2,
		.def = "1024",
		.doc = "RX descriptors per queue: more absorbs longer bursts, at the cost of "
		       "mbufs.",
	},
	{
		.name = "tx_desc",
		.type = CFG_UINT,
		DP_FIELD(tx_desc),
		.min = 64,
		.max = 4096,
		.flags = CFG_F_POW2,
		.def = "1024",
		.doc = "TX descriptors per queue.",
	},
	{
		.name = "mbufs",
		.type = CFG_UINT,
		DP_FIELD(mbufs),
		.min = 1023,
		.max = 1048575,
		.def = "8191",
		.doc = "Packet buffers in each worker's pool; a power of two minus one uses "
		       "memory best. It should exceed (rx_desc + tx_desc) * ports + mbuf_cache.",
	},
	{
		.name = "mbuf_cache",
		.type = CFG_UINT,
		DP_FIELD(mbuf_cache),
		.min = 0,
		.max = 512,
		.def = "256",
		.doc = "Per-lcore cache of the mbuf pool (0: none).",
	},
	{
		.name = "syncookie_secret",
		.type = CFG_HEX,
		DP_FIELD(syncookie_secret),
		.flags = CFG_F_SECRET | CFG_F_MARK_SET,
		.set_offset = offsetof(struct dp_config, syncookie_secret_set),
		.doc = "Master key of the SYN cookies, 32 hex digits. Without it a random key is "
		       "drawn at start; set the same key on data planes that share an address.",
	},
	{
		.name = "syncookie_slot",
		.type = CFG_DURATION,
		DP_FIELD(syncookie_slot_s),
		.min = 1 * DP_MS_PER_S,
		.max = 600 * DP_MS_PER_S,
		.unit_ms = DP_MS_PER_S,
		.def = "64s",
		.doc = "Length of a SYN cookie time slot, whole seconds: a cookie expires after "
		       "a slot or two, so a client must answer its SYN-ACK within that time.",
	},
	{
		.name = "ip_ttl",
		.type = CFG_UINT,
		DP_FIELD(ip_ttl),
		.min = 1,
		.max = 255,
		.def = "64",
		.doc = "TTL of the IPv4 packets sent.",
	},
	{
		.name = "kept_connections",
		.type = CFG_UINT,
		DP_FIELD(kept_connections),
		.min = 0,
		.max = 1048576,
		.def = "4096",
		.doc = "Kept (HTTP/1.1 persistent) connections each worker holds for the trusted "
		       "edges of [edge] trusted, in memory fixed at start (about 1.3 kB each); "
		       "when all are taken a new one is answered with Connection: close. 0: every "
		       "connection is answered and closed (docs/edge.md).",
	},
	{
		.name = "kept_idle_timeout",
		.type = CFG_DURATION,
		DP_FIELD(kept_idle_ms),
		.min = 1 * DP_MS_PER_S,
		.max = 3600u * DP_MS_PER_S,
		.def = "60s",
		.doc = "A kept connection without a segment from its edge for this long is closed "
		       "with a FIN; set it above the edge's own idle timeout to its origin. Also "
		       "how long the edge's zero window may hold an answer back (probed) before "
		       "the connection is reset.",
	},
	{
		.name = "kept_first_request_timeout",
		.type = CFG_DURATION,
		DP_FIELD(kept_first_ms),
		.min = 100,
		.max = 3600u * DP_MS_PER_S,
		.def = "5s",
		.doc = "A kept connection that has carried no request this long after its first "
		       "segment (an L4 edge's PROXY header alone) is closed with a FIN, whatever "
		       "else came on it: a client of an L4 edge cannot hold an entry of the table "
		       "for kept_idle_timeout without asking anything.",
	},
	{
		.name = "kept_per_client",
		.type = CFG_UINT,
		DP_FIELD(kept_per_client),
		.min = 1,
		.max = 65535,
		.def = "64",
		.doc = "Kept connections each worker holds for one client address named by a PROXY "
		       "header (an L4 edge's); a connection beyond it is reset. Raise it for "
		       "shoppers behind one NAT address (browsers open about six connections "
		       "each). Connections of an HTTP edge (no PROXY header) are not counted.",
	},
	{
		.name = "stats_interval",
		.type = CFG_DURATION,
		DP_FIELD(stats_interval_s),
		.min = 0,
		.max = 86400u * DP_MS_PER_S,
		.unit_ms = DP_MS_PER_S,
		.def = "0",
		.doc = "How often a line of counters is logged, whole seconds; 0: never.",
	},
	{
		.name = "log_level",
		.type = CFG_LOGLEVEL,
		DP_FIELD(log_level),
		.def = "info",
		.doc = "The most verbose messages logged: err, warn, notice, info or debug.",
	},
};

static const struct cfg_key dp_admission_keys[] = {
	{
		.name = "cors_origin",
		.type = CFG_STRING,
		DP_FIELD(cors_origin),
		.min = 0,
		.max = 127,
		.def = "",
		.doc = "The origin of the shop's sale page (e.g. https://shop.example): answers to "
		       "requests from it carry CORS headers and OPTIONS preflights are answered. "
		       "Empty: no CORS; \"*\": any origin (for tests only).",
	},
	{
		.name = "purchase_token_ttl",
		.type = CFG_DURATION,
		DP_FIELD(purchase_token_ttl_s),
		.min = 1 * DP_MS_PER_S,
		.max = 86400u * DP_MS_PER_S,
		.unit_ms = DP_MS_PER_S,
		.def = "5m",
		.doc = "How long a purchase token (the answer to POST .../token) stays valid, "
		       "whole seconds.",
	},
	{
		.name = "receipt_young",
		.type = CFG_DURATION,
		DP_FIELD(receipt_young_ms),
		.min = 100,
		.max = 3600u * DP_MS_PER_S,
		.def = "10s",
		.doc = "A result poll with a receipt younger than this and no result yet is answered "
		       "\"queued\" from the receipt alone; an older one also asks the control plane "
		       "for the result again, and so does one that finds \"reserved\" or "
		       "\"duplicate\" (the order's ORDERED may have been missed).",
	},
	{
		.name = "receipt_retry",
		.type = CFG_DURATION,
		DP_FIELD(receipt_retry_ms),
		.min = 1000,
		.max = 86400u * DP_MS_PER_S,
		.def = "30s",
		.doc = "A receipt this old whose result never arrived (the control plane lost the "
		       "reservation before Redis decided it) is answered \"retry\": the client "
		       "reserves again, and if the first one was decided after all it gets that result. "
		       "Must be longer than receipt_young.",
	},
	{
		.name = "limit_table_log2",
		.type = CFG_UINT,
		DP_FIELD(limit_table_log2),
		.min = 3,
		.max = 28,
		.def = "18",
		.doc = "Each worker keeps four rate-limit tables (per IP, user, device, and user "
		       "polls) of "
		       "2^limit_table_log2 buckets of 16 bytes; size them at twice the clients a "
		       "worker sees at once (docs/limits.md).",
	},
	{
		.name = "poll_rate",
		.type = CFG_UINT,
		DP_FIELD(poll_rate),
		.min = 0,
		.max = 1000000,
		.def = "2",
		.doc = "Result polls a user may make per second, 0..1000000 (0: no limit); beyond "
		       "poll_burst at once the poll is answered 429 with Retry-After. A worker "
		       "counts its own, in a table like the other limits' (limit_table_log2).",
	},
	{
		.name = "poll_burst",
		.type = CFG_UINT,
		DP_FIELD(poll_burst),
		.min = 0,
		.max = 4194,
		.def = "10",
		.doc = "The polls a user may make at once, 0..4194 (0: one second's worth).",
	},
	{
		.name = "result_query_cooldown",
		.type = CFG_DURATION,
		DP_FIELD(query_cooldown_ms),
		.min = 100,
		.max = 60u * DP_MS_PER_S,
		.def = "1s",
		.doc = "A poll that finds no result asks the control plane for it again at most "
		       "once per (event, user) this often (100ms..1m); a poll within it is answered "
		       "from what the data plane has.",
	},
};

/* A receipt must be queued for a while before it can turn into a retry. */
static int
dp_check_admission(const void *obj, const char **key, char *msg, size_t msglen)
{
	const struct dp_config *cfg = obj;

	if (cfg->receipt_retry_ms <= cfg->receipt_young_ms) {
		*key = "receipt_retry";
		snprintf(msg, msglen,
			"%u ms is not longer than receipt_young (%u ms): a receipt must stay "
			"\"queued\" before it turns into \"retry\"",
			cfg->receipt_retry_ms, cfg->receipt_young_ms);
		return -EINVAL;
	}
	return 0;
}

static const struct cfg_key dp_bridge_keys[] = {
	{
		.name = "dp_id",
		.type = CFG_UINT,
		DP_FIELD(dp_id),
		.min = 1,
		.max = 1023,
		.def = "1",
		.doc = "This data plane's id, unique among the data planes of one control plane: it "
		       "is part of every reservation id.",
	},
	{
		.name = "push_endpoint",
		.type = CFG_STRING,
		DP_FIELD(push_endpoint),
		.min = 1,
		.max = 127,
		.def = "tcp://127.0.0.1:5601",
		.doc = "The control plane's PULL socket that admitted reservations are pushed to; "
		       "or up to 4 control planes' separated by commas, the i-th of this list and "
		       "of sub_endpoint one control plane: the data plane moves to the next when "
		       "the one it talks to was silent for resync (docs/ha.md).",
	},
	{
		.name = "sub_endpoint",
		.type = CFG_STRING,
		DP_FIELD(sub_endpoint),
		.min = 1,
		.max = 127,
		.def = "tcp://127.0.0.1:5602",
		.doc = "The control plane's PUB socket: events, keys, rules, limits, results; or a "
		       "list of as many as push_endpoint lists, in the same order.",
	},
	{
		.name = "ring_size",
		.type = CFG_UINT,
		DP_FIELD(ring_size),
		.min = 64,
		.max = 1u << 20,
		.flags = CFG_F_POW2,
		.def = "8192",
		.doc = "Admitted reservations each worker can hand to the bridge before it answers "
		       "503 (the control plane is behind).",
	},
	{
		.name = "batch_max",
		.type = CFG_UINT,
		DP_FIELD(batch_max),
		.min = 1,
		.max = 4096,
		.def = "256",
		.doc = "Reservations per message to the control plane.",
	},
	{
		.name = "batch_wait",
		.type = CFG_DURATION,
		DP_FIELD(batch_wait_ms),
		.min = 0,
		.max = 1000,
		.def = "1ms",
		.doc = "The longest a reservation waits for its batch to fill (at most 1s).",
	},
	{
		.name = "result_capacity",
		.type = CFG_UINT,
		DP_FIELD(result_capacity),
		.min = 1024,
		.max = 1u << 26,
		.def = "1048576",
		.doc = "Results of (event, user) kept for polls; when full the oldest go, and a poll "
		       "for one asks the control plane again.",
	},
	{
		.name = "resync",
		.type = CFG_DURATION,
		DP_FIELD(resync_ms),
		.min = 100,
		.max = 3600u * DP_MS_PER_S,
		.def = "5s",
		.doc = "Silence from the control plane (it sends a heartbeat every second) after "
		       "which the data plane asks for a full snapshot.",
	},
	{
		.name = "clock_skew_max",
		.type = CFG_DURATION,
		DP_FIELD(clock_skew_max_ms),
		.min = 1,
		.max = 3600u * DP_MS_PER_S,
		.def = "500ms",
		.doc = "A skew of this data plane's clock against the control plane's (each "
		       "heartbeat) beyond this is logged once, until it is back within; the skew is "
		       "always in the counters (clock_ahead_ms, clock_behind_ms).",
	},
	{
		.name = "snapshot_retry",
		.type = CFG_DURATION,
		DP_FIELD(snapshot_retry_ms),
		.min = 100,
		.max = 600u * DP_MS_PER_S,
		.def = "1s",
		.doc = "How often an unanswered snapshot request is repeated.",
	},
	{
		.name = "push_hwm",
		.type = CFG_UINT,
		DP_FIELD(push_hwm),
		.min = 1,
		.max = 1000000,
		.def = "1000",
		.doc = "Messages ZeroMQ queues towards the control plane before the bridge holds "
		       "back (and the rings, then the workers, shed with 503).",
	},
	ZLINK_CFG_SECRET_KEY(struct dp_config, links),
	ZLINK_CFG_SERVER_KEY(struct dp_config, links),
	ZLINK_CFG_KEY_DIR(struct dp_config, links),
	ZLINK_CFG_INSECURE(struct dp_config, links),
	{
		.name = "stop_timeout",
		.type = CFG_DURATION,
		DP_FIELD(stop_timeout_ms),
		.min = 1 * DP_MS_PER_S,
		.max = 3600u * DP_MS_PER_S,
		.def = "60s",
		.doc = "On SIGTERM the data plane answers 503 to new reservations and hands over the "
		       "ones it accepted until the control plane has them all, the control plane is "
		       "gone (silent for resync), or this long has passed.",
	},
};

static const struct cfg_key dp_event_keys[] = {
	{
		.name = "name",
		.type = CFG_STRING,
		EV_FIELD(name),
		.min = 1,
		.max = DP_EVENT_NAME_MAX - 1,
		.flags = CFG_F_REQUIRED,
		.doc = "The sale's name as shown to buyers (UTF-8; quotes around it are optional).",
	},
	{
		.name = "starts_at",
		.type = CFG_TIME,
		EV_FIELD(starts_at_ms),
		.flags = CFG_F_REQUIRED,
		.doc = "When the sale opens: tokens are refused before it (425 with Retry-After).",
	},
	{
		.name = "ends_at",
		.type = CFG_TIME,
		EV_FIELD(ends_at_ms),
		.flags = CFG_F_REQUIRED,
		.doc = "When the sale closes, after starts_at; the sale is open in "
		       "[starts_at, ends_at).",
	},
	{
		.name = "stock",
		.type = CFG_UINT,
		EV_FIELD(stock),
		.min = 0,
		.max = 100000000,
		.flags = CFG_F_REQUIRED,
		.doc = "Items on sale. The control plane's stock in Redis and PostgreSQL decides; "
		       "this is what the data plane starts from.",
	},
};

static const struct cfg_key dp_edge_keys[] = {
	{
		.name = "trusted",
		.type = CFG_STRING,
		DP_FIELD(edge_trusted),
		.min = 0,
		.max = EDGE_TRUSTED_TEXT_MAX,
		.def = "",
		.doc = "The TLS edges in front of the data plane (CDN, HAProxy, nginx, a load "
		       "balancer): IPv4 and IPv6 addresses and networks separated by commas or "
		       "spaces (e.g. 198.18.0.7, 198.18.1.0/24, 2001:db8::/32), at most 4,095 "
		       "bytes; more go in trusted_file. Only they may tell the client's address "
		       "(PROXY protocol, X-Forwarded-For, Forwarded), which rules and per-IP "
		       "limits then use (docs/edge.md). Empty: no edge, every client is its "
		       "packets' source.",
	},
	{
		.name = "trusted_file",
		.type = CFG_STRING,
		DP_FIELD(edge_trusted_file),
		.min = 0,
		.max = EDGE_TRUSTED_PATH_MAX - 1,
		.def = "",
		.doc = "A file of more trusted edges, beside trusted (a CDN's published list): one "
		       "IPv4 or IPv6 address or network a line, blank lines and '#' comments "
		       "ignored, read at start; with trusted at most 65,536 networks of each "
		       "family. Empty: none.",
	},
};

_Static_assert(sizeof(((struct dp_config *)0)->edge_trusted) == EDGE_TRUSTED_TEXT_MAX + 1,
	"[edge] trusted holds the longest list edge.h takes");
_Static_assert(sizeof(((struct dp_config *)0)->edge_trusted_file) == EDGE_TRUSTED_PATH_MAX,
	"[edge] trusted_file holds the longest path edge.h takes");

/* The list and the file must parse: addresses and networks, no host bits, not too many. */
static int
dp_check_edge(const void *obj, const char **key, char *msg, size_t msglen)
{
	const struct dp_config *cfg = obj;

	if (edge_trust_parse(cfg->edge_trusted, NULL, msg, msglen) != 0) {
		*key = "trusted";
		return -EINVAL;
	}
	/* The file with the list: too many networks of a family counts both. */
	const char *file = cfg->edge_trusted_file;

	if (file[0] != '\0' && edge_trust_load(cfg->edge_trusted, file, NULL, msg, msglen) != 0) {
		*key = "trusted_file";
		return -EINVAL;
	}
	return 0;
}

/* The data plane must own a unicast address: it answers ARP for it. */
static int
dp_check_dataplane(const void *obj, const char **key, char *msg, size_t msglen)
{
	const struct dp_config *cfg = obj;
	const uint8_t *b = (const uint8_t *)&cfg->ipv4_addr;

	if (b[0] == 0 || b[0] == 127 || b[0] >= 224) {
		*key = "address";
		snprintf(msg, msglen,
			"%u.%u.%u.%u cannot be the data plane's address (expected a "
			"unicast address, not 0.x.x.x, 127.x.x.x, multicast or broadcast)",
			b[0], b[1], b[2], b[3]);
		return -EINVAL;
	}
	/* RFC 1123 §2.1 host names: letters, digits, '-' and '.'. */
	for (const char *h = cfg->host; *h != '\0'; h++) {
		if (!((*h >= 'a' && *h <= 'z') || (*h >= 'A' && *h <= 'Z') ||
			    (*h >= '0' && *h <= '9') || *h == '-' || *h == '.')) {
			*key = "host";
			snprintf(msg, msglen,
				"\"%s\" is not a DNS name (expected letters, digits, '-' and '.', "
				"e.g. sale.shop.example)",
				cfg->host);
			return -EINVAL;
		}
	}
	return 0;
}

static int
dp_check_event(const void *obj, const char **key, char *msg, size_t msglen)
{
	const struct dp_event_cfg *ev = obj;
	char s[40], e[40];

	if (ev->ends_at_ms <= ev->starts_at_ms) {
		cfg_format_time(ev->starts_at_ms, s, sizeof(s));
		cfg_format_time(ev->ends_at_ms, e, sizeof(e));
		*key = "ends_at";
		snprintf(msg, msglen,
			"%s is not after starts_at %s (the sale is open from "
			"starts_at until ends_at)",
			e, s);
		return -EINVAL;
	}
	return 0;
}

static const struct cfg_section dp_sections[] = {
	{
		.name = "dataplane",
		.doc = "The data plane: its address, TCP ports, packet buffers and SYN cookies.",
		.keys = dp_keys,
		.n_keys = sizeof(dp_keys) / sizeof(dp_keys[0]),
		.check = dp_check_dataplane,
	},
	{
		.name = "admission",
		.doc = "Who may buy: tokens, CORS and the rate-limit tables. The limits themselves and "
		       "the keys come from the control plane.",
		.keys = dp_admission_keys,
		.n_keys = sizeof(dp_admission_keys) / sizeof(dp_admission_keys[0]),
		.check = dp_check_admission,
	},
	{
		.name = "bridge",
		.doc = "The ZeroMQ link to the control plane.",
		.keys = dp_bridge_keys,
		.n_keys = sizeof(dp_bridge_keys) / sizeof(dp_bridge_keys[0]),
	},
	{
		.name = "edge",
		.doc = "The trusted edges: who may tell the client's address (docs/edge.md).",
		.keys = dp_edge_keys,
		.n_keys = sizeof(dp_edge_keys) / sizeof(dp_edge_keys[0]),
		.check = dp_check_edge,
	},
	{
		.name = "event",
		.doc = "One flash sale; ID is the event id of the HTTP API (/api/v1/events/ID).",
		.keys = dp_event_keys,
		.n_keys = sizeof(dp_event_keys) / sizeof(dp_event_keys[0]),
		.check = dp_check_event,
		.is_array = 1,
		.array_offset = offsetof(struct dp_config, events),
		.elem_size = sizeof(struct dp_event_cfg),
		.max_count = DP_MAX_EVENTS,
		.count_offset = offsetof(struct dp_config, n_events),
		.id_offset = offsetof(struct dp_event_cfg, id),
	},
};

/* One flashgate.conf serves every program: the others' sections are theirs to check. */
static const char *const dp_foreign[] = { "controlplane", "redis", "postgres", "order_writer",
	NULL };

const struct cfg_schema dp_config_schema = {
	.foreign = dp_foreign,
	.sections = dp_sections,
	.n_sections = sizeof(dp_sections) / sizeof(dp_sections[0]),
	.target_size = sizeof(struct dp_config),
	.help = "flashgate-dataplane --help-config lists every key",
};

void
dp_config_defaults(struct dp_config *cfg)
{
	char err[256];

	/* Only a wrong key table fails here, and the unit test loads it: stop loudly. */
	if (cfg_defaults(&dp_config_schema, cfg, err, sizeof(err)) != 0) {
		LOG_ERR("%s", err);
		abort();
	}
}

int
dp_config_load(struct dp_config *cfg, const char *path, char *err, size_t errlen)
{
	return cfg_load(&dp_config_schema, cfg, path, err, errlen);
}

int
dp_config_set(struct dp_config *cfg, const char *key, const char *value, char *err, size_t errlen)
{
	return cfg_set(&dp_config_schema, cfg, key, value, err, errlen);
}

void
dp_config_write(FILE *out, const struct dp_config *cfg)
{
	cfg_write(out, &dp_config_schema, cfg);
}

void
dp_config_print_doc(FILE *out)
{
	fprintf(out, "flashgate-dataplane settings (INI file given with -c; override one with "
		     "-s SECTION.KEY=VALUE)\n\n");
	cfg_print_doc(out, &dp_config_schema);
}
