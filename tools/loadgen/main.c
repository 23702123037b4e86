/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flashgate-loadgen: many HTTP clients at packet level on one DPDK port, to load and check a
 * flashgate data plane (docs/loadgen.md). Usage:
 *   flashgate-loadgen [EAL options] -- --mode healthz|syn-flood|sale|reserve|result|kept-healthz|
 *                                            kept-reserve|healthz-blast|reserve-blast [options]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "common/parse.h"
#include "common/secret_input.h"
#include "tools/loadgen/lg_args.h"
#include "tools/loadgen/lg_client.h"
#include "tools/loadgen/lg_http.h"
#include "tools/loadgen/lg_report.h"

#define PROG	    "flashgate-loadgen"
#define NB_MBUFS    16383
#define NB_DESC	    1024
#define LINK_WAIT_S 10

static volatile bool stop_requested;

static void
on_signal(int sig __rte_unused)
{
	stop_requested = true;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [EAL options] -- [options]\n"
		"\n"
		"Plays many clients of a flashgate data plane over the first DPDK port (e.g.\n"
		"--vdev net_memif0,role=client,socket=/tmp/fg-memif.sock) and checks every "
		"answer.\n"
		"\n"
		"  --mode MODE          healthz (GET /healthz), syn-flood, sale (token, "
		"reserve,\n"
		"                       result polls per user), reserve (one reserve with a "
		"valid\n"
		"                       purchase token per connection), result (one poll "
		"with a\n"
		"                       valid receipt per connection), healthz-blast or\n"
		"                       reserve-blast (healthz or reserve connections sent\n"
		"                       whole, cookies computed with --cookie-secret-hex),\n"
		"                       kept-healthz or kept-reserve (--per-conn requests on\n"
		"                       each kept connection: the data plane must trust --src-net\n"
		"                       as an edge, [edge] trusted);\n"
		"                       default healthz\n"
		"  --connections N      healthz, reserve, result, the blasts and the kept modes:\n"
		"                       connections; syn-flood: SYNs (default 1000)\n"
		"  --per-conn N         kept-healthz, kept-reserve: requests per connection, one\n"
		"                       after another as an edge sends them (default 100)\n"
		"  --proxy-v2           a PROXY protocol v2 header before each connection's first\n"
		"                       request, in its segment (as a trusted edge's L4 balancer)\n"
		"  --proxy-src-net NET  the client addresses those headers give, one per user\n"
		"                       (default 198.18.128.0/17)\n"
		"  --cookie-secret-hex HEX  the blasts: the data plane's syncookie_secret (32 "
		"hex\n"
		"                       digits)\n"
		"  --cookie-secret-file PATH  the same from a file of mode 0600, or - for "
		"standard input\n"
		"  --cookie-slot-s S    the blasts: its syncookie_slot (default 64)\n"
		"  --users N            sale: users (default 100)\n"
		"  --concurrency C      clients at once, 1..64000 (default 64)\n"
		"  --duration-s S       bound on the whole run, seconds (default 10)\n"
		"  --rate R             new connections, SYNs or users per second (default 0: "
		"no limit)\n"
		"  --start-at T         begin at Unix time T (seconds, may have a fraction)\n"
		"  --src-net A.B.C.D/P  client addresses; the loadgen answers ARP for them\n"
		"                       (default 198.18.2.0/24)\n"
		"  --dst A.B.C.D        the data plane's address (default 198.18.0.2)\n"
		"  --port N             its TCP port (default 80)\n"
		"  --host NAME          Host header (default the --dst address)\n"
		"  --retries N          retransmissions of a segment, and retries of a sale "
		"request\n"
		"                       after 425/429/503 (default 3)\n"
		"  --rto-ms MS          first retransmission timeout (default 200; doubles each "
		"time)\n"
		"  --poll-ms MS         sale: between result polls (default 1000)\n"
		"  --max-polls N        sale: result polls per user (default 30)\n"
		"  --event ID           sale: event id (default 1)\n"
		"  --user-base U        sale: first user id (default 1)\n"
		"  --auth-key-hex HEX   sale, one-ip flood: the shop's auth key (16..64 bytes)\n"
		"                       to mint session tokens\n"
		"  --auth-key-file PATH the same from a file of mode 0600, or - for standard "
		"input\n"
		"                       (keys on the command line show in ps)\n"
		"  --kid N              its key id (default 1)\n"
		"  --double-click P     sale: P percent of the users reserve twice (default 0)\n"
		"  --bots N|P%%          sale: N users (or P percent of them) are bots, spread over\n"
		"                       the users; the report counts bots and people apart\n"
		"  --think-ms MS        sale: people's mean think time before the token and the\n"
		"                       reserve, drawn per user in [MS/2, 3MS/2] (default 1000\n"
		"                       with --bots, else 0)\n"
		"  --bot-speed X        sale: bots think and retry X times faster and retry X\n"
		"                       times as often (1..10000, default 100)\n"
		"  --seed N             sale: the think times' and arrivals' draw (default 1)\n"
		"  --arrive-before S    sale: a pre-queue: users arrive over the S seconds before\n"
		"                       --start-at (needed), the --burst share at it\n"
		"  --burst P            sale with --arrive-before: percent of the users arriving\n"
		"                       in a burst at the start (0..100, default 50)\n"
		"  --poll-max-ms MS     sale: a queued user's longest wait between polls when the\n"
		"                       answer's wait_ms is longer (default 5000)\n"
		"  --pow-tries-per-loop N  sale: challenge nonces tried per loop iteration, so\n"
		"                       solving never stalls the other clients (default 256);\n"
		"                       0: each challenge solved whole by pow_solve() at once\n"
		"  --pow-max-tries N    sale: a challenge not solved in N tries makes its user\n"
		"                       give up (default 4294967296)\n"
		"  --sale-key-hex HEX   reserve, result: the data plane's current sale key, to "
		"mint\n"
		"                       purchase tokens and receipts (one user per connection "
		"from\n"
		"                       --user-base)\n"
		"  --sale-key-file PATH the same from a file of mode 0600, or - for standard "
		"input\n"
		"  --sale-kid N         its key id (default 1)\n"
		"  --pcap FILE          write every frame sent and received to FILE\n"
		"  --pcap-max N         at most N frames (default 100000)\n"
		"  --report-json FILE   also write the report to FILE as JSON (docs/loadgen.md)\n"
		"  --flood KIND:RATE    also a flood at RATE per second (1..1e7) beside the\n"
		"                       healthz or sale clients; repeatable, each KIND once:\n"
		"                       syn, bad-ack, unsigned, one-ip (needs --auth-key-hex)\n"
		"  --flood-src-net NET  flood addresses A.B.C.D/P, apart from --src-net; the\n"
		"                       first is one-ip's (default 198.19.0.0/16)\n"
		"  --flood-concurrency C  unsigned and one-ip connections at once, 1..16384\n"
		"                       (default 64)\n"
		"  --linger-s S         after the report, stop polling and keep the port open "
		"until\n"
		"                       the peer's link goes down, a signal, or S seconds "
		"(default 0);\n"
		"                       for memif: stop the data plane first (docs/loadgen.md)\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit status: 0 when every answer was well-formed and expected and every client "
		"ended\n"
		"within the duration; 1 otherwise; 2 on bad options or set-up failure.\n");
}

/* Whether the address ranges [a, a + na) and [b, b + nb) share an address. */
static bool
ranges_meet(uint32_t a, uint32_t na, uint32_t b, uint32_t nb)
{
	return a - b < nb || b - a < na;
}

enum {
	OPT_MODE = 256,
	OPT_CONNECTIONS,
	OPT_USERS,
	OPT_CONCURRENCY,
	OPT_DURATION,
	OPT_RATE,
	OPT_START_AT,
	OPT_SRC_NET,
	OPT_DST,
	OPT_PORT,
	OPT_HOST,
	OPT_RETRIES,
	OPT_RTO,
	OPT_POLL,
	OPT_MAX_POLLS,
	OPT_EVENT,
	OPT_USER_BASE,
	OPT_AUTH_KEY,
	OPT_AUTH_KEY_FILE,
	OPT_SALE_KEY_FILE,
	OPT_COOKIE_SECRET_FILE,
	OPT_KID,
	OPT_DOUBLE_CLICK,
	OPT_SALE_KEY,
	OPT_SALE_KID,
	OPT_PCAP,
	OPT_PCAP_MAX,
	OPT_LINGER,
	OPT_FLOOD,
	OPT_FLOOD_SRC_NET,
	OPT_FLOOD_CONCURRENCY,
	OPT_COOKIE_SECRET,
	OPT_COOKIE_SLOT,
	OPT_PER_CONN,
	OPT_PROXY_V2,
	OPT_PROXY_SRC_NET,
	OPT_REPORT_JSON,
	OPT_BOTS,
	OPT_THINK_MS,
	OPT_BOT_SPEED,
	OPT_SEED,
	OPT_ARRIVE_BEFORE,
	OPT_BURST,
	OPT_POLL_MAX,
	OPT_POW_TRIES,
	OPT_POW_MAX_TRIES,
};

/* The name of mode m, as --mode takes it. */
static const char *
mode_name(enum lg_mode m)
{
	switch (m) {
	case LG_MODE_SALE:
		return "sale";
	case LG_MODE_SYN_FLOOD:
		return "syn-flood";
	case LG_MODE_RESERVE:
		return "reserve";
	case LG_MODE_RESULT:
		return "result";
	case LG_MODE_HEALTHZ_BLAST:
		return "healthz-blast";
	case LG_MODE_RESERVE_BLAST:
		return "reserve-blast";
	case LG_MODE_KEPT_HEALTHZ:
		return "kept-healthz";
	case LG_MODE_KEPT_RESERVE:
		return "kept-reserve";
	default:
		return "healthz";
	}
}

/* The smallest power of ten from which n user ids all have as many digits. */
static uint64_t
blast_user_base(uint64_t n)
{
	uint64_t p = 1;

	while (p * 9 < n)
		p *= 10;
	return p;
}

/* Fills o from argv. Returns 0, 1 after --help, or -1 after printing what was wrong. */
static int
parse_args(int argc, char **argv, struct lg_opts *o)
{
	static const struct option longopts[] = {
		{"mode", required_argument, NULL, OPT_MODE},
		{"connections", required_argument, NULL, OPT_CONNECTIONS},
		{"users", required_argument, NULL, OPT_USERS},
		{"concurrency", required_argument, NULL, OPT_CONCURRENCY},
		{"duration-s", required_argument, NULL, OPT_DURATION},
		{"rate", required_argument, NULL, OPT_RATE},
		{"start-at", required_argument, NULL, OPT_START_AT},
		{"src-net", required_argument, NULL, OPT_SRC_NET},
		{"dst", required_argument, NULL, OPT_DST},
		{"port", required_argument, NULL, OPT_PORT},
		{"host", required_argument, NULL, OPT_HOST},
		{"retries", required_argument, NULL, OPT_RETRIES},
		{"rto-ms", required_argument, NULL, OPT_RTO},
		{"poll-ms", required_argument, NULL, OPT_POLL},
		{"max-polls", required_argument, NULL, OPT_MAX_POLLS},
		{"event", required_argument, NULL, OPT_EVENT},
		{"user-base", required_argument, NULL, OPT_USER_BASE},
		{"auth-key-hex", required_argument, NULL, OPT_AUTH_KEY},
		{"auth-key-file", required_argument, NULL, OPT_AUTH_KEY_FILE},
		{"sale-key-file", required_argument, NULL, OPT_SALE_KEY_FILE},
		{"cookie-secret-file", required_argument, NULL, OPT_COOKIE_SECRET_FILE},
		{"kid", required_argument, NULL, OPT_KID},
		{"double-click", required_argument, NULL, OPT_DOUBLE_CLICK},
		{"sale-key-hex", required_argument, NULL, OPT_SALE_KEY},
		{"sale-kid", required_argument, NULL, OPT_SALE_KID},
		{"pcap", required_argument, NULL, OPT_PCAP},
		{"pcap-max", required_argument, NULL, OPT_PCAP_MAX},
		{"linger-s", required_argument, NULL, OPT_LINGER},
		{"flood", required_argument, NULL, OPT_FLOOD},
		{"flood-src-net", required_argument, NULL, OPT_FLOOD_SRC_NET},
		{"flood-concurrency", required_argument, NULL, OPT_FLOOD_CONCURRENCY},
		{"cookie-secret-hex", required_argument, NULL, OPT_COOKIE_SECRET},
		{"cookie-slot-s", required_argument, NULL, OPT_COOKIE_SLOT},
		{"per-conn", required_argument, NULL, OPT_PER_CONN},
		{"proxy-v2", no_argument, NULL, OPT_PROXY_V2},
		{"proxy-src-net", required_argument, NULL, OPT_PROXY_SRC_NET},
		{"report-json", required_argument, NULL, OPT_REPORT_JSON},
		{"bots", required_argument, NULL, OPT_BOTS},
		{"think-ms", required_argument, NULL, OPT_THINK_MS},
		{"bot-speed", required_argument, NULL, OPT_BOT_SPEED},
		{"seed", required_argument, NULL, OPT_SEED},
		{"arrive-before", required_argument, NULL, OPT_ARRIVE_BEFORE},
		{"burst", required_argument, NULL, OPT_BURST},
		{"poll-max-ms", required_argument, NULL, OPT_POLL_MAX},
		{"pow-tries-per-loop", required_argument, NULL, OPT_POW_TRIES},
		{"pow-max-tries", required_argument, NULL, OPT_POW_MAX_TRIES},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t connections = 1000, users = 100, v = 0, kid = 1, sale_kid = 1;
	uint8_t key[TOK_SECRET_MAX];
	size_t key_len = 0;
	uint8_t sale_key[TOK_SECRET_MAX];
	size_t sale_len = 0;
	const char *host = NULL, *what = NULL;
	bool have_cookie_secret = false, think_set = false, bots_pct = false;
	uint64_t bots = 0;
	unsigned poll_max = 5000;
	int opt;

	memset(o, 0, sizeof(*o));
	o->mode = LG_MODE_HEALTHZ;
	o->concurrency = 64;
	o->duration_s = 10;
	o->src_base = RTE_IPV4(198, 18, 2, 1);
	o->n_src = 254;
	o->dst_ip = RTE_IPV4(198, 18, 0, 2);
	o->dport = 80;
	o->retries = 3;
	o->rto_ms = 200;
	o->poll_ms = 1000;
	o->max_polls = 30;
	o->event = 1;
	o->user_base = 1;
	o->pcap_max = 100000;
	o->per_conn = 100;
	o->proxy_src_base = RTE_IPV4(198, 18, 128, 0);
	o->n_proxy_src = 32768;
	o->flood_base = RTE_IPV4(198, 19, 0, 1);
	o->n_flood = 65534;
	o->flood_concurrency = 64;
	o->cookie_slot_s = 64;
	o->bot_speed = 100;
	o->seed = 1;
	o->burst_pct = 50;
	o->pow_tries_per_loop = 256;
	o->pow_max_tries = 1ull << 32;
	tok_keyring_init(&o->auth);
	tok_keyring_init(&o->sale);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		int rc = 0;

		switch (opt) {
		case 'h':
			usage(stdout);
			return 1;
		case OPT_MODE:
			if (strcmp(optarg, "healthz") == 0)
				o->mode = LG_MODE_HEALTHZ;
			else if (strcmp(optarg, "syn-flood") == 0)
				o->mode = LG_MODE_SYN_FLOOD;
			else if (strcmp(optarg, "sale") == 0)
				o->mode = LG_MODE_SALE;
			else if (strcmp(optarg, "reserve") == 0)
				o->mode = LG_MODE_RESERVE;
			else if (strcmp(optarg, "result") == 0)
				o->mode = LG_MODE_RESULT;
			else if (strcmp(optarg, "kept-healthz") == 0)
				o->mode = LG_MODE_KEPT_HEALTHZ;
			else if (strcmp(optarg, "kept-reserve") == 0)
				o->mode = LG_MODE_KEPT_RESERVE;
			else if (strcmp(optarg, "healthz-blast") == 0)
				o->mode = LG_MODE_HEALTHZ_BLAST;
			else if (strcmp(optarg, "reserve-blast") == 0)
				o->mode = LG_MODE_RESERVE_BLAST;
			else
				rc = -EINVAL;
			what = "--mode: healthz, syn-flood, sale, reserve, result, healthz-blast or "
			       "reserve-blast";
			break;
		case OPT_CONNECTIONS:
			rc = parse_u64(optarg, 1, UINT64_MAX / 2, &connections);
			what = "--connections: a positive number";
			break;
		case OPT_USERS:
			rc = parse_u64(optarg, 1, UINT64_MAX / 2, &users);
			what = "--users: a positive number";
			break;
		case OPT_CONCURRENCY:
			rc = parse_u64(optarg, 1, 64000, &v);
			o->concurrency = (uint32_t)v;
			what = "--concurrency: 1..64000";
			break;
		case OPT_DURATION:
			rc = parse_double(optarg, 0.001, 86400, &o->duration_s);
			what = "--duration-s: seconds, more than 0 and at most 86400";
			break;
		case OPT_RATE:
			rc = parse_double(optarg, 0, 1e9, &o->rate);
			what = "--rate: per second, 0 (no limit) to 1e9";
			break;
		case OPT_START_AT:
			rc = parse_double(optarg, 0, 1e11, &o->start_at);
			what = "--start-at: Unix time in seconds";
			break;
		case OPT_PER_CONN:
			rc = parse_u64(optarg, 1, 1000000, &v);
			o->per_conn = (uint32_t)v;
			what = "--per-conn: requests per kept connection, 1..1000000";
			break;
		case OPT_PROXY_V2:
			o->proxy_v2 = true;
			break;
		case OPT_PROXY_SRC_NET:
			rc = lg_parse_net(optarg, &o->proxy_src_base, &o->n_proxy_src, NULL, NULL);
			what = "--proxy-src-net: A.B.C.D/P with P 8..32 and no host bits set";
			break;
		case OPT_SRC_NET:
			rc = lg_parse_net(optarg, &o->src_base, &o->n_src, NULL, NULL);
			what = "--src-net: A.B.C.D/P with P 8..32 and no host bits set";
			break;
		case OPT_DST:
			rc = parse_ipv4(optarg, &o->dst_ip);
			what = "--dst: an IPv4 address";
			break;
		case OPT_PORT:
			rc = parse_u64(optarg, 1, 65535, &v);
			o->dport = (uint16_t)v;
			what = "--port: 1..65535";
			break;
		case OPT_HOST:
			host = optarg;
			rc = strlen(optarg) < sizeof(o->host) && strpbrk(optarg, " \r\n\t") == NULL
				     ? 0
				     : -EINVAL;
			what = "--host: a host name of at most 63 characters, no spaces";
			break;
		case OPT_RETRIES:
			rc = parse_u64(optarg, 0, 10, &v);
			o->retries = (unsigned)v;
			what = "--retries: 0..10";
			break;
		case OPT_RTO:
			rc = parse_u64(optarg, 1, 60000, &v);
			o->rto_ms = (unsigned)v;
			what = "--rto-ms: 1..60000";
			break;
		case OPT_POLL:
			rc = parse_u64(optarg, 1, 600000, &v);
			o->poll_ms = (unsigned)v;
			what = "--poll-ms: 1..600000";
			break;
		case OPT_MAX_POLLS:
			rc = parse_u64(optarg, 1, 100000, &v);
			o->max_polls = (unsigned)v;
			what = "--max-polls: 1..100000";
			break;
		case OPT_EVENT:
			rc = parse_u64(optarg, 1, UINT32_MAX, &v);
			o->event = (uint32_t)v;
			what = "--event: 1..4294967295";
			break;
		case OPT_USER_BASE:
			rc = parse_u64(optarg, 1, TOK_USER_MAX, &o->user_base);
			what = "--user-base: 1..2^63-1";
			break;
		case OPT_AUTH_KEY:
			rc = parse_hex(optarg, key, sizeof(key), &key_len);
			if (rc == 0 && key_len < TOK_SECRET_MIN)
				rc = -EINVAL;
			what = "--auth-key-hex: 32 to 128 hex digits (16 to 64 bytes)";
			break;
		case OPT_AUTH_KEY_FILE:
		case OPT_SALE_KEY_FILE:
		case OPT_COOKIE_SECRET_FILE: {
			/* The same keys from a file of mode 0600 or standard input (-): a key on
			 * the command line shows in ps and the shell history. */
			char err[256];
			size_t n = 0;

			if (opt == OPT_AUTH_KEY_FILE)
				rc = secret_read_hex(optarg, "--auth-key-file", key, TOK_SECRET_MIN,
					sizeof(key), &key_len, err, sizeof(err));
			else if (opt == OPT_SALE_KEY_FILE)
				rc = secret_read_hex(optarg, "--sale-key-file", sale_key,
					TOK_SECRET_MIN, sizeof(sale_key), &sale_len, err,
					sizeof(err));
			else
				rc = secret_read_hex(optarg, "--cookie-secret-file",
					o->cookie_secret, sizeof(o->cookie_secret),
					sizeof(o->cookie_secret), &n, err, sizeof(err));
			if (rc != 0) {
				fprintf(stderr, PROG ": %s\n", err);
				return -1;
			}
			if (opt == OPT_COOKIE_SECRET_FILE)
				have_cookie_secret = true;
			break;
		}
		case OPT_KID:
			rc = parse_u64(optarg, 0, UINT32_MAX, &kid);
			what = "--kid: 0..4294967295";
			break;
		case OPT_DOUBLE_CLICK:
			rc = parse_u64(optarg, 0, 100, &v);
			o->double_click = (unsigned)v;
			what = "--double-click: a percent, 0..100";
			break;
		case OPT_SALE_KEY:
			rc = parse_hex(optarg, sale_key, sizeof(sale_key), &sale_len);
			if (rc == 0 && sale_len < TOK_SECRET_MIN)
				rc = -EINVAL;
			what = "--sale-key-hex: 32 to 128 hex digits (16 to 64 bytes)";
			break;
		case OPT_SALE_KID:
			rc = parse_u64(optarg, 0, UINT32_MAX, &sale_kid);
			what = "--sale-kid: 0..4294967295";
			break;
		case OPT_PCAP:
			o->pcap_path = optarg;
			break;
		case OPT_REPORT_JSON:
			o->report_json = optarg;
			break;
		case OPT_PCAP_MAX:
			rc = parse_u64(optarg, 1, UINT64_MAX, &o->pcap_max);
			what = "--pcap-max: a positive number";
			break;
		case OPT_LINGER:
			rc = parse_double(optarg, 0, 86400, &o->linger_s);
			what = "--linger-s: seconds, 0 to 86400";
			break;
		case OPT_FLOOD: {
			enum lg_flood_kind k;
			double r;

			rc = lg_flood_parse(optarg, &k, &r);
			what = "--flood: KIND:RATE, KIND syn, bad-ack, unsigned or one-ip, RATE "
			       "per second 1..1e7";
			if (rc == 0 && o->flood_rate[k] > 0) {
				fprintf(stderr,
					PROG ": --flood %s given twice; give each kind once\n",
					lg_flood_name(k));
				return -1;
			}
			if (rc == 0)
				o->flood_rate[k] = r;
			break;
		}
		case OPT_FLOOD_SRC_NET:
			rc = lg_parse_net(optarg, &o->flood_base, &o->n_flood, NULL, NULL);
			if (rc == 0 && o->n_flood < 2)
				rc = -EINVAL;
			what = "--flood-src-net: A.B.C.D/P with P 8..31 and no host bits set";
			break;
		case OPT_FLOOD_CONCURRENCY:
			rc = parse_u64(optarg, 1, LG_FLOOD_CONC_MAX, &v);
			o->flood_concurrency = (uint32_t)v;
			what = "--flood-concurrency: 1..16384";
			break;
		case OPT_COOKIE_SECRET: {
			size_t n = 0;

			rc = parse_hex(optarg, o->cookie_secret, sizeof(o->cookie_secret), &n);
			if (rc == 0 && n != sizeof(o->cookie_secret))
				rc = -EINVAL;
			have_cookie_secret = rc == 0;
			what = "--cookie-secret-hex: 32 hex digits (the data plane's "
			       "syncookie_secret)";
			break;
		}
		case OPT_BOTS: {
			size_t n = strlen(optarg);
			char num[32];

			bots_pct = n > 1 && optarg[n - 1] == '%';
			rc = n - bots_pct < sizeof(num) ? 0 : -EINVAL;
			if (rc == 0) {
				memcpy(num, optarg, n - bots_pct);
				num[n - bots_pct] = '\0';
				rc = parse_u64(num, 0, bots_pct ? 100 : UINT64_MAX / 2, &bots);
			}
			o->populations = true;
			what = "--bots: a number of users, or a percent of them (0%..100%)";
			break;
		}
		case OPT_THINK_MS:
			rc = parse_double(optarg, 0, 600000, &o->think_ms);
			think_set = true;
			what = "--think-ms: milliseconds, 0..600000";
			break;
		case OPT_BOT_SPEED:
			rc = parse_double(optarg, 1, 10000, &o->bot_speed);
			what = "--bot-speed: 1..10000 (times faster than people)";
			break;
		case OPT_SEED:
			rc = parse_u64(optarg, 0, UINT64_MAX, &o->seed);
			what = "--seed: a number";
			break;
		case OPT_ARRIVE_BEFORE:
			rc = parse_double(optarg, 0, 86400, &o->arrive_before);
			what = "--arrive-before: seconds, 0..86400";
			break;
		case OPT_BURST:
			rc = parse_u64(optarg, 0, 100, &v);
			o->burst_pct = (unsigned)v;
			what = "--burst: a percent, 0..100";
			break;
		case OPT_POLL_MAX:
			rc = parse_u64(optarg, 1, 600000, &v);
			poll_max = (unsigned)v;
			what = "--poll-max-ms: 1..600000";
			break;
		case OPT_POW_TRIES:
			rc = parse_u64(optarg, 0, 1000000000, &o->pow_tries_per_loop);
			what = "--pow-tries-per-loop: 0..1000000000";
			break;
		case OPT_POW_MAX_TRIES:
			rc = parse_u64(optarg, 1, UINT64_MAX / 2, &o->pow_max_tries);
			what = "--pow-max-tries: a positive number";
			break;
		case OPT_COOKIE_SLOT:
			rc = parse_u64(optarg, 1, 600, &v);
			o->cookie_slot_s = (uint32_t)v;
			what = "--cookie-slot-s: 1..600 (the data plane's syncookie_slot)";
			break;
		default:
			usage(stderr);
			return -1;
		}
		if (rc != 0) {
			fprintf(stderr, PROG ": bad value '%s' for %s\n", optarg, what);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s' (options go after --)\n",
			argv[optind]);
		return -1;
	}
	if (o->dst_ip - o->src_base < o->n_src) {
		fprintf(stderr, PROG ": --dst must not be inside --src-net\n");
		return -1;
	}
	o->count = o->mode == LG_MODE_SALE ? users : connections;
	if ((o->populations || o->arrive_before > 0 || think_set) && o->mode != LG_MODE_SALE) {
		fprintf(stderr, PROG ": --bots, --think-ms and --arrive-before go with --mode sale\n");
		return -1;
	}
	o->bots = bots_pct ? (uint64_t)((unsigned __int128)users * bots / 100) : bots;
	if (o->bots > users) {
		fprintf(stderr, PROG ": --bots %" PRIu64 " is more than the %" PRIu64 " --users\n",
			o->bots, users);
		return -1;
	}
	if (!think_set)
		o->think_ms = o->populations ? 1000 : 0;
	if (o->arrive_before > 0 && o->start_at <= 0) {
		fprintf(stderr, PROG ": --arrive-before places the arrivals before the sale's start: "
				     "give --start-at\n");
		return -1;
	}
	o->poll_max_ms = poll_max < o->poll_ms ? o->poll_ms : poll_max;
	if (lg_mode_blast(o->mode) && !have_cookie_secret) {
		fprintf(stderr,
			PROG ": --mode %s computes the data plane's SYN cookies: "
			     "give --cookie-secret-hex with its syncookie_secret\n",
			mode_name(o->mode));
		return -1;
	}
	if (lg_mode_reserve(o->mode) || o->mode == LG_MODE_RESULT ||
		o->mode == LG_MODE_RESERVE_BLAST) {
		if (sale_len == 0) {
			fprintf(stderr,
				PROG ": --mode %s needs --sale-key-hex (and --sale-kid), the sale "
				     "key the data plane signs purchase tokens and receipts with\n",
				mode_name(o->mode));
			return -1;
		}
		if (o->user_base > TOK_USER_MAX - (connections * (lg_mode_kept(o->mode) ? o->per_conn
										: 1) - 1)) {
			fprintf(stderr, PROG
				": --user-base + --connections goes past the largest user id\n");
			return -1;
		}
		/* A blast's answers are told apart by their acknowledgement numbers alone, so
		 * every request has the same length: user ids of as many digits. */
		if (o->mode == LG_MODE_RESERVE_BLAST &&
			parse_dec_digits(o->user_base) !=
				parse_dec_digits(o->user_base + connections - 1)) {
			fprintf(stderr,
				PROG ": --mode reserve-blast needs user ids of one length: "
				     "--user-base %" PRIu64 " to %" PRIu64
				     " changes digits (try --user-base %" PRIu64 ")\n",
				o->user_base, o->user_base + connections - 1,
				blast_user_base(connections));
			return -1;
		}
		tok_keyring_set(&o->sale, (uint32_t)sale_kid, sale_key, sale_len, true);
		memset(sale_key, 0, sizeof(sale_key));
		int n = snprintf(o->reserve_path, sizeof(o->reserve_path),
			"/api/v1/events/%" PRIu32 "/reserve/", o->event);
		if (tok_path_mint(&o->sale, o->event, o->reserve_path + n,
			    sizeof(o->reserve_path) - (size_t)n) < 0) {
			fprintf(stderr,
				PROG ": cannot make the reserve path of event %" PRIu32 "\n",
				o->event);
			return -1;
		}
	}
	bool any_flood = false;

	for (unsigned k = 0; k < LG_FLOOD_N; k++)
		any_flood |= lg_opts_flood(o, (enum lg_flood_kind)k);
	if (any_flood && (o->mode == LG_MODE_SYN_FLOOD || lg_mode_blast(o->mode))) {
		fprintf(stderr,
			PROG ": --flood goes with --mode healthz or sale; for SYNs alone use "
			     "--mode syn-flood, or --flood syn beside healthz clients\n");
		return -1;
	}
	if (any_flood && (ranges_meet(o->flood_base, o->n_flood, o->src_base, o->n_src) ||
				 o->dst_ip - o->flood_base < o->n_flood)) {
		fprintf(stderr,
			PROG ": --flood-src-net must not overlap --src-net nor hold --dst\n");
		return -1;
	}
	if (lg_opts_flood(o, LG_FLOOD_ONE_IP) && key_len == 0) {
		fprintf(stderr, PROG ": --flood one-ip sends token requests with valid sessions; "
				     "give --auth-key-hex (and --kid)\n");
		return -1;
	}
	o->kid = (uint32_t)kid;
	if (key_len != 0) {
		tok_keyring_set(&o->auth, (uint32_t)kid, key, key_len, true);
		memset(key, 0, sizeof(key));
	}
	if (o->mode == LG_MODE_SALE) {
		if (key_len == 0) {
			fprintf(stderr,
				PROG ": --mode sale needs --auth-key-hex (and --kid), the "
				     "auth key the data plane verifies session tokens with\n");
			return -1;
		}
		if (o->user_base > TOK_USER_MAX - (users - 1)) {
			fprintf(stderr,
				PROG ": --user-base + --users goes past the largest user id\n");
			return -1;
		}
	}
	if (host != NULL) {
		snprintf(o->host, sizeof(o->host), "%s", host);
	} else {
		struct in_addr a = {.s_addr = htonl(o->dst_ip)};

		inet_ntop(AF_INET, &a, o->host, sizeof(o->host));
	}
	return 0;
}

#define START_TRIES   30  /* a port's start, tried this many times ... */
#define START_WAIT_MS 100 /* ... this far apart */

static int
port_setup(uint16_t port, struct rte_mempool *pool, struct rte_ether_addr *mac)
{
	struct rte_eth_conf conf = {0};
	uint16_t rxd = NB_DESC, txd = NB_DESC;
	int rc;

	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(
			port, 0, rxd, (unsigned)rte_eth_dev_socket_id(port) & 0xff, NULL, pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(
			port, 0, txd, (unsigned)rte_eth_dev_socket_id(port) & 0xff, NULL);
	/* A memif client's start connects to the server's socket, which a data plane that is
	 * still starting (or a loaded machine) may not accept yet: try again for up to 3 s. */
	for (unsigned tries = 0; rc == 0; tries++) {
		int start = rte_eth_dev_start(port);

		if (start == 0 || tries == START_TRIES - 1) {
			rc = start;
			break;
		}
		if (tries == 0)
			fprintf(stderr, PROG ": port %u did not start (%s); trying again for %u ms\n",
				port, rte_strerror(-start), START_TRIES * START_WAIT_MS);
		rte_delay_us_sleep(START_WAIT_MS * 1000u);
	}
	if (rc == 0)
		rc = rte_eth_macaddr_get(port, mac);
	if (rc != 0)
		fprintf(stderr, PROG ": port %u set-up failed: %s\n", port, rte_strerror(-rc));
	return rc;
}

/* Whether the run is a success for the exit status (see usage()). */
static bool
run_ok(const struct lg_opts *o, const struct lg_client *cl, bool timed_out)
{
	const struct lg_stats *s = &cl->st;

	if (s->malformed_tcp || s->malformed_http || s->unexpected_status)
		return false;
	for (unsigned k = 0; k < LG_FLOOD_N; k++)
		if (s->flood[k].malformed || s->flood[k].unexpected)
			return false;
	if (o->mode == LG_MODE_SYN_FLOOD)
		return s->syn_sent == o->count;
	/* A blast loses what a full ring drops (counted, not an error); a reset is one. */
	if (lg_mode_blast(o->mode))
		return s->blast_sent == o->count && s->conns_rst == 0;
	if (timed_out || !lg_client_honest_done(cl) || s->conns_rst || s->conns_timeout)
		return false;
	/* A kept client whose connection was answered with Connection: close goes on with a
	 * new one: it completes more connections than were asked, but as many answers. */
	if (lg_mode_kept(o->mode))
		return s->responses == o->count * o->per_conn;
	if (lg_mode_single(o->mode))
		return s->conns_completed == o->count;
	return s->users_done == o->count && s->outcome[LG_OUT_CONN_FAILED] == 0;
}

/*
 * With --linger-s: keeps the port open, without polling it, until the peer's link goes down, a
 * signal, or the bound. DPDK 22.11's memif PMD unmaps the shared regions on a disconnect with no
 * barrier against a peer inside rx_burst, so the side that disconnects first can crash a side
 * still polling; a script stops the data plane (which stops polling before it closes its port)
 * while the loadgen lingers here, polling nothing.
 */
static void
linger(const struct lg_opts *o, uint16_t port)
{
	struct rte_eth_link link;
	uint64_t hz = rte_get_tsc_hz();
	uint64_t end = rte_get_tsc_cycles() + (uint64_t)(o->linger_s * (double)hz);

	if (o->linger_s <= 0)
		return;
	printf("lingering: until the peer's link goes down (at most %.0f s)\n", o->linger_s);
	fflush(stdout);
	while (!stop_requested && rte_get_tsc_cycles() < end) {
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
			link.link_status == RTE_ETH_LINK_DOWN)
			break;
		rte_delay_us_sleep(20000);
	}
}

int
main(int argc, char **argv)
{
	struct lg_opts o;
	struct lg_client cl;
	struct rte_mempool *pool;
	struct rte_ether_addr mac;
	struct rte_mbuf *rx[LG_BURST];
	uint16_t port = 0;
	int rc, ret;

	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		fprintf(stderr,
			PROG ": EAL initialisation failed: %s (check the EAL options "
			     "before --)\n",
			rte_strerror(rte_errno));
		return 2;
	}
	argc -= rc;
	argv += rc;
	argv[0] = (char *)PROG;
	rc = parse_args(argc, argv, &o);
	if (rc != 0) {
		rte_eal_cleanup();
		return rc > 0 ? 0 : 2;
	}
	if (rte_eth_dev_count_avail() == 0) {
		fprintf(stderr, PROG ": no DPDK port; give one with -a PCI or --vdev "
				     "net_memif0,role=client,socket=PATH\n");
		rte_eal_cleanup();
		return 2;
	}
	RTE_ETH_FOREACH_DEV(port)
	break;
	pool = rte_pktmbuf_pool_create(
		"lg_pool", NB_MBUFS, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (pool == NULL) {
		fprintf(stderr, PROG ": no memory for %u mbufs: %s (give EAL more with -m)\n",
			NB_MBUFS, rte_strerror(rte_errno));
		rte_eal_cleanup();
		return 2;
	}
	if (port_setup(port, pool, &mac) != 0 || lg_client_init(&cl, &o, port, pool, &mac) != 0) {
		rte_eal_cleanup();
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	uint64_t hz = rte_get_tsc_hz(), now = rte_get_tsc_cycles();
	uint64_t deadline = now + (uint64_t)(o.duration_s * (double)hz);
	uint64_t next_probe = now, link_deadline = now + LINK_WAIT_S * hz;
	struct rte_eth_link link;

	/* The link (a memif peer may connect a little later) and the data plane's MAC. */
	while (!stop_requested && !cl.have_peer_mac && now < deadline && now < link_deadline) {
		if (now >= next_probe && rte_eth_link_get_nowait(port, &link) == 0 &&
			link.link_status == RTE_ETH_LINK_UP) {
			lg_client_arp_probe(&cl, now);
			next_probe = now + hz / 5;
		}
		uint16_t n = rte_eth_rx_burst(port, 0, rx, LG_BURST);

		lg_client_rx(&cl, rx, n, now);
		lg_client_flush(&cl);
		if (n == 0)
			rte_delay_us_sleep(1000);
		now = rte_get_tsc_cycles();
	}
	if (!cl.have_peer_mac) {
		fprintf(stderr,
			PROG ": no ARP answer for the --dst address from port %u (link %s); "
			     "is the data plane running with that address on this link?\n",
			port,
			rte_eth_link_get_nowait(port, &link) == 0 && link.link_status ? "up"
										      : "down");
		lg_client_fini(&cl);
		linger(&o, port);
		rte_eth_dev_stop(port);
		rte_eal_cleanup();
		return stop_requested ? 1 : 2;
	}
	double lead = 0; /* seconds from the run's first loop to --start-at */

	if (o.start_at > 0) {
		struct timespec ts;

		/* A pre-queue's first users arrive --arrive-before seconds ahead of the start. */
		clock_gettime(CLOCK_REALTIME, &ts);
		double wait = o.start_at - o.arrive_before -
			      ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);

		if (wait > 0) {
			uint64_t start = now + (uint64_t)(wait * (double)hz);

			/* Answer ARP while waiting; the duration bounds the wait too. */
			while (!stop_requested && now < start && now < deadline) {
				uint16_t n = rte_eth_rx_burst(port, 0, rx, LG_BURST);

				lg_client_rx(&cl, rx, n, now);
				lg_client_flush(&cl);
				rte_delay_us_sleep(500);
				now = rte_get_tsc_cycles();
			}
		}
	}

	if (o.start_at > 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		lead = o.start_at - ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	}
	uint64_t t_run = now;

	lg_client_set_start(&cl, lead >= 0 ? now + (uint64_t)(lead * (double)hz)
					   : now - (uint64_t)(-lead * (double)hz < (double)now
								   ? -lead * (double)hz
								   : (double)now));
	cl.t_credit = now;
	cl.t_flood_credit = now;
	while (!stop_requested && now < deadline && !lg_client_done(&cl)) {
		uint16_t n = rte_eth_rx_burst(port, 0, rx, LG_BURST);

		lg_client_rx(&cl, rx, n, now);
		lg_client_launch(&cl, now);
		lg_client_timers(&cl, now);
		lg_client_solve(&cl, now);
		lg_client_flush(&cl);
		now = rte_get_tsc_cycles();
	}
	bool timed_out = !lg_client_honest_done(&cl) && !stop_requested;
	uint64_t t_end = now;

	/* A syn-flood (or a syn or bad-ack flood) ends when its segments are out; the last
	 * answers are still on the way. */
	if (o.mode == LG_MODE_SYN_FLOOD || lg_mode_blast(o.mode) ||
		lg_opts_flood(&o, LG_FLOOD_SYN) || lg_opts_flood(&o, LG_FLOOD_BAD_ACK)) {
		uint64_t drain = now + hz / 10;

		while (!stop_requested && now < drain) {
			uint16_t n = rte_eth_rx_burst(port, 0, rx, LG_BURST);

			lg_client_rx(&cl, rx, n, now);
			lg_client_flush(&cl);
			now = rte_get_tsc_cycles();
		}
	}
	struct lg_report rep;

	/* --mode syn-flood's rate counts the SYN-ACKs' drain in, as it always did. */
	lg_report_fill(&rep, &o, &cl, mode_name(o.mode),
		(o.mode == LG_MODE_SYN_FLOOD || lg_mode_blast(o.mode) ? now : t_end) - t_run,
		timed_out);
	lg_report_text(stdout, &rep);
	ret = run_ok(&o, &cl, timed_out) ? 0 : 1;
	if (o.report_json != NULL && lg_report_json_write(&rep, o.report_json) != 0)
		ret = 1;
	if (lg_client_fini(&cl) != 0) {
		fprintf(stderr, PROG ": writing %s failed\n", o.pcap_path);
		ret = 1;
	}
	tok_keyring_wipe(&o.auth);
	tok_keyring_wipe(&o.sale);
	fflush(stdout);
	linger(&o, port);
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
	rte_eal_cleanup();
	return ret;
}
