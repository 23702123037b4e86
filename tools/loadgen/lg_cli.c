/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/loadgen/lg_cli.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <arpa/inet.h>

#include "common/parse.h"
#include "tools/common/opt_table.h"
#include "tools/loadgen/lg_args.h"

/* The command line being read: the settings and what is checked once it is all read. */
struct lg_cli {
	struct lg_opts o;
	uint64_t connections, users, kid, sale_kid;
	uint8_t key[TOK_SECRET_MAX]; /* --auth-key-hex */
	size_t key_len;
	uint8_t sale_key[TOK_SECRET_MAX];
	size_t sale_len, cookie_len;
	const char *host;
	uint64_t bots; /* a number of users, or a percent of them when bots_pct */
	bool bots_pct;
	unsigned poll_max;
};

/* --mode's names, and each mode's name in reports. */
static const struct {
	const char *name;
	enum lg_mode mode;
} modes[] = {
	{"healthz", LG_MODE_HEALTHZ},
	{"syn-flood", LG_MODE_SYN_FLOOD},
	{"sale", LG_MODE_SALE},
	{"reserve", LG_MODE_RESERVE},
	{"result", LG_MODE_RESULT},
	{"kept-healthz", LG_MODE_KEPT_HEALTHZ},
	{"kept-reserve", LG_MODE_KEPT_RESERVE},
	{"healthz-blast", LG_MODE_HEALTHZ_BLAST},
	{"reserve-blast", LG_MODE_RESERVE_BLAST},
};

const char *
lg_cli_mode_name(enum lg_mode m)
{
	for (unsigned i = 0; i < RTE_DIM(modes); i++)
		if (modes[i].mode == m)
			return modes[i].name;
	return "healthz";
}

static int
set_mode(const struct opt_table_entry *e __rte_unused, const char *v, void *dst,
	char *err __rte_unused, size_t errlen __rte_unused)
{
	for (unsigned i = 0; i < RTE_DIM(modes); i++)
		if (strcmp(v, modes[i].name) == 0) {
			((struct lg_cli *)dst)->o.mode = modes[i].mode;
			return 0;
		}
	return -EINVAL;
}

/*
 * An address range A.B.C.D/P (lg_parse_net()): its first usable address into the uint32_t at
 * e->off, their number into the uint32_t at e->len_off; fewer than e->min addresses is a bad
 * value. --src-net, --proxy-src-net and --flood-src-net (LG_CLI_NET_OF()).
 */
static int
set_net(const struct opt_table_entry *e, const char *v, void *dst, char *err __rte_unused,
	size_t errlen __rte_unused)
{
	uint32_t *base = (uint32_t *)((char *)dst + e->off);
	uint32_t *n = (uint32_t *)((char *)dst + e->len_off);
	uint32_t b, k;
	int rc = lg_parse_net(v, &b, &k, NULL, NULL);

	if (rc != 0)
		return rc;
	if (k < e->min)
		return -EINVAL;
	*base = b;
	*n = k;
	return 0;
}

/* An entry of set_net(): the range's first address into BASE of struct lg_cli, its size into
 * N, MIN addresses at least. */
#define LG_CLI_NET_OF(BASE, N, MIN)                                                \
	.kind = OPT_TABLE_FN, .fn = set_net, .off = offsetof(struct lg_cli, BASE), \
	.size = sizeof(uint32_t), .len_off = offsetof(struct lg_cli, N), .min = (MIN)
_Static_assert(sizeof(((struct lg_cli *)0)->o.src_base) == sizeof(uint32_t) &&
		       sizeof(((struct lg_cli *)0)->o.n_src) == sizeof(uint32_t) &&
		       sizeof(((struct lg_cli *)0)->o.proxy_src_base) == sizeof(uint32_t) &&
		       sizeof(((struct lg_cli *)0)->o.n_proxy_src) == sizeof(uint32_t) &&
		       sizeof(((struct lg_cli *)0)->o.flood_base) == sizeof(uint32_t) &&
		       sizeof(((struct lg_cli *)0)->o.n_flood) == sizeof(uint32_t),
	"set_net() writes uint32_t");

static int
set_host(const struct opt_table_entry *e __rte_unused, const char *v, void *dst,
	char *err __rte_unused, size_t errlen __rte_unused)
{
	struct lg_cli *cli = dst;

	cli->host = v;
	return strlen(v) < sizeof(cli->o.host) && strpbrk(v, " \r\n\t") == NULL ? 0 : -EINVAL;
}

/* --bots N or P%. */
static int
set_bots(const struct opt_table_entry *e __rte_unused, const char *v, void *dst,
	char *err __rte_unused, size_t errlen __rte_unused)
{
	struct lg_cli *cli = dst;
	size_t n = strlen(v);
	char num[32];

	cli->o.populations = true;
	cli->bots_pct = n > 1 && v[n - 1] == '%';
	if (n - cli->bots_pct >= sizeof(num))
		return -EINVAL;
	memcpy(num, v, n - cli->bots_pct);
	num[n - cli->bots_pct] = '\0';
	return parse_u64(num, 0, cli->bots_pct ? 100 : UINT64_MAX / 2, &cli->bots);
}

/* --flood KIND:RATE, each kind once. */
static int
set_flood(const struct opt_table_entry *e __rte_unused, const char *v, void *dst, char *err,
	size_t errlen)
{
	struct lg_opts *o = &((struct lg_cli *)dst)->o;
	enum lg_flood_kind k;
	double r;
	int rc = lg_flood_parse(v, &k, &r);

	if (rc != 0)
		return rc;
	if (o->flood_rate[k] > 0) {
		snprintf(err, errlen, "--flood %s given twice; give each kind once",
			lg_flood_name(k));
		return -EINVAL;
	}
	o->flood_rate[k] = r;
	return 0;
}

/* The messages below give the key sizes as numbers. */
_Static_assert(TOK_SECRET_MIN == 16 && TOK_SECRET_MAX == 64, "the key sizes of --*-key-hex");

#define LG_CLI_PROG "flashgate-loadgen"
#define CLI	    struct lg_cli

static const struct opt_table_entry lg_cli_opts[] = {
	{.name = "mode",
		.kind = OPT_TABLE_FN,
		.fn = set_mode,
		.arg = "MODE",
		.bad = "--mode: healthz, syn-flood, sale, reserve, result, healthz-blast or "
		       "reserve-blast",
		.help = "healthz (GET /healthz), syn-flood, sale (token, reserve,\n"
			"result polls per user), reserve (one reserve with a valid\n"
			"purchase token per connection), result (one poll with a\n"
			"valid receipt per connection), healthz-blast or\n"
			"reserve-blast (healthz or reserve connections sent\n"
			"whole, cookies computed with --cookie-secret-hex),\n"
			"kept-healthz or kept-reserve (--per-conn requests on\n"
			"each kept connection: the data plane must trust --src-net\n"
			"as an edge, [edge] trusted);\n"
			"default healthz"},
	{.name = "connections",
		OPT_TABLE_UINT_OF(CLI, connections, 1, UINT64_MAX / 2),
		.arg = "N",
		.bad = "--connections: a positive number",
		.help = "healthz, reserve, result, the blasts and the kept modes:\n"
			"connections; syn-flood: SYNs (default 1000)"},
	{.name = "per-conn",
		OPT_TABLE_UINT_OF(CLI, o.per_conn, 1, 1000000),
		.arg = "N",
		.bad = "--per-conn: requests per kept connection, 1..1000000",
		.help = "kept-healthz, kept-reserve: requests per connection, one\n"
			"after another as an edge sends them (default 100)"},
	{.name = "proxy-v2",
		OPT_TABLE_FIELD_OF(OPT_TABLE_FLAG, CLI, o.proxy_v2),
		.help = "a PROXY protocol v2 header before each connection's first\n"
			"request, in its segment (as a trusted edge's L4 balancer)"},
	{.name = "proxy-src-net",
		LG_CLI_NET_OF(o.proxy_src_base, o.n_proxy_src, 1),
		.arg = "NET",
		.bad = "--proxy-src-net: A.B.C.D/P with P 8..32 and no host bits set",
		.help = "the client addresses those headers give, one per user\n"
			"(default 198.18.128.0/17)"},
	{.name = "cookie-secret-hex",
		OPT_TABLE_HEX_OF(OPT_TABLE_HEX, CLI, o.cookie_secret, cookie_len, 16),
		.arg = "HEX",
		.bad = "--cookie-secret-hex: 32 hex digits (the data plane's syncookie_secret)",
		.help = "the blasts: the data plane's syncookie_secret (32 hex\n"
			"digits)"},
	{.name = "cookie-secret-file",
		OPT_TABLE_HEX_OF(OPT_TABLE_SECRET_FILE, CLI, o.cookie_secret, cookie_len, 16),
		.arg = "PATH",
		.help = "the same from a file of mode 0600, or - for standard input"},
	{.name = "cookie-slot-s",
		OPT_TABLE_UINT_OF(CLI, o.cookie_slot_s, 1, 600),
		.arg = "S",
		.bad = "--cookie-slot-s: 1..600 (the data plane's syncookie_slot)",
		.help = "the blasts: its syncookie_slot (default 64)"},
	{.name = "users",
		OPT_TABLE_UINT_OF(CLI, users, 1, UINT64_MAX / 2),
		.arg = "N",
		.bad = "--users: a positive number",
		.help = "sale: users (default 100)"},
	{.name = "concurrency",
		OPT_TABLE_UINT_OF(CLI, o.concurrency, 1, 64000),
		.arg = "C",
		.bad = "--concurrency: 1..64000",
		.help = "clients at once, 1..64000 (default 64)"},
	{.name = "duration-s",
		OPT_TABLE_DOUBLE_OF(CLI, o.duration_s, 0.001, 86400),
		.arg = "S",
		.bad = "--duration-s: seconds, more than 0 and at most 86400",
		.help = "bound on the whole run, seconds (default 10)"},
	{.name = "rate",
		OPT_TABLE_DOUBLE_OF(CLI, o.rate, 0, 1e9),
		.arg = "R",
		.bad = "--rate: per second, 0 (no limit) to 1e9",
		.help = "new connections, SYNs or users per second (default 0: no limit)"},
	{.name = "start-at",
		OPT_TABLE_DOUBLE_OF(CLI, o.start_at, 0, 1e11),
		.arg = "T",
		.bad = "--start-at: Unix time in seconds",
		.help = "begin at Unix time T (seconds, may have a fraction)"},
	{.name = "src-net",
		LG_CLI_NET_OF(o.src_base, o.n_src, 1),
		.arg = "A.B.C.D/P",
		.bad = "--src-net: A.B.C.D/P with P 8..32 and no host bits set",
		.help = "client addresses; the loadgen answers ARP for them\n"
			"(default 198.18.2.0/24)"},
	{.name = "dst",
		OPT_TABLE_FIELD_OF(OPT_TABLE_IPV4, CLI, o.dst_ip),
		.arg = "A.B.C.D",
		.bad = "--dst: an IPv4 address",
		.help = "the data plane's address (default 198.18.0.2)"},
	{.name = "port",
		OPT_TABLE_UINT_OF(CLI, o.dport, 1, 65535),
		.arg = "N",
		.bad = "--port: 1..65535",
		.help = "its TCP port (default 80)"},
	{.name = "host",
		.kind = OPT_TABLE_FN,
		.fn = set_host,
		.arg = "NAME",
		.bad = "--host: a host name of at most 63 characters, no spaces",
		.help = "Host header (default the --dst address)"},
	{.name = "retries",
		OPT_TABLE_UINT_OF(CLI, o.retries, 0, 10),
		.arg = "N",
		.bad = "--retries: 0..10",
		.help = "retransmissions of a segment, and retries of a sale request\n"
			"after 425/429/503 (default 3)"},
	{.name = "rto-ms",
		OPT_TABLE_UINT_OF(CLI, o.rto_ms, 1, 60000),
		.arg = "MS",
		.bad = "--rto-ms: 1..60000",
		.help = "first retransmission timeout (default 200; doubles each time)"},
	{.name = "poll-ms",
		OPT_TABLE_UINT_OF(CLI, o.poll_ms, 1, 600000),
		.arg = "MS",
		.bad = "--poll-ms: 1..600000",
		.help = "sale: between result polls (default 1000)"},
	{.name = "max-polls",
		OPT_TABLE_UINT_OF(CLI, o.max_polls, 1, 100000),
		.arg = "N",
		.bad = "--max-polls: 1..100000",
		.help = "sale: result polls per user (default 30)"},
	{.name = "event",
		OPT_TABLE_UINT_OF(CLI, o.event, 1, UINT32_MAX),
		.arg = "ID",
		.bad = "--event: 1..4294967295",
		.help = "sale: event id (default 1)"},
	{.name = "user-base",
		OPT_TABLE_UINT_OF(CLI, o.user_base, 1, TOK_USER_MAX),
		.arg = "U",
		.bad = "--user-base: 1..2^63-1",
		.help = "sale: first user id (default 1)"},
	{.name = "auth-key-hex",
		OPT_TABLE_HEX_OF(OPT_TABLE_HEX, CLI, key, key_len, TOK_SECRET_MIN),
		.arg = "HEX",
		.bad = "--auth-key-hex: 32 to 128 hex digits (16 to 64 bytes)",
		.help = "sale, one-ip flood: the shop's auth key (16..64 bytes)\n"
			"to mint session tokens"},
	{.name = "auth-key-file",
		OPT_TABLE_HEX_OF(OPT_TABLE_SECRET_FILE, CLI, key, key_len, TOK_SECRET_MIN),
		.arg = "PATH",
		.help = "the same from a file of mode 0600, or - for standard input\n"
			"(keys on the command line show in ps)"},
	{.name = "kid",
		OPT_TABLE_UINT_OF(CLI, kid, 0, UINT32_MAX),
		.arg = "N",
		.bad = "--kid: 0..4294967295",
		.help = "its key id (default 1)"},
	{.name = "double-click",
		OPT_TABLE_UINT_OF(CLI, o.double_click, 0, 100),
		.arg = "P",
		.bad = "--double-click: a percent, 0..100",
		.help = "sale: P percent of the users reserve twice (default 0)"},
	{.name = "bots",
		.kind = OPT_TABLE_FN,
		.fn = set_bots,
		.arg = "N|P%",
		.bad = "--bots: a number of users, or a percent of them (0%..100%)",
		.help = "sale: N users (or P percent of them) are bots, spread over\n"
			"the users; the report counts bots and people apart"},
	{.name = "think-ms",
		OPT_TABLE_DOUBLE_OF(CLI, o.think_ms, 0, 600000),
		.arg = "MS",
		.bad = "--think-ms: milliseconds, 0..600000",
		.help = "sale: people's mean think time before the token and the\n"
			"reserve, drawn per user in [MS/2, 3MS/2] (default 1000\n"
			"with --bots, else 0)"},
	{.name = "bot-speed",
		OPT_TABLE_DOUBLE_OF(CLI, o.bot_speed, 1, 10000),
		.arg = "X",
		.bad = "--bot-speed: 1..10000 (times faster than people)",
		.help = "sale: bots think and retry X times faster and retry X\n"
			"times as often (1..10000, default 100)"},
	{.name = "seed",
		OPT_TABLE_UINT_OF(CLI, o.seed, 0, UINT64_MAX),
		.arg = "N",
		.bad = "--seed: a number",
		.help = "sale: the think times' and arrivals' draw (default 1)"},
	{.name = "arrive-before",
		OPT_TABLE_DOUBLE_OF(CLI, o.arrive_before, 0, 86400),
		.arg = "S",
		.bad = "--arrive-before: seconds, 0..86400",
		.help = "sale: a pre-queue: users arrive over the S seconds before\n"
			"--start-at (needed), the --burst share at it"},
	{.name = "burst",
		OPT_TABLE_UINT_OF(CLI, o.burst_pct, 0, 100),
		.arg = "P",
		.bad = "--burst: a percent, 0..100",
		.help = "sale with --arrive-before: percent of the users arriving\n"
			"in a burst at the start (0..100, default 50)"},
	{.name = "poll-max-ms",
		OPT_TABLE_UINT_OF(CLI, poll_max, 1, 600000),
		.arg = "MS",
		.bad = "--poll-max-ms: 1..600000",
		.help = "sale: a queued user's longest wait between polls when the\n"
			"answer's wait_ms is longer (default 5000)"},
	{.name = "pow-tries-per-loop",
		OPT_TABLE_UINT_OF(CLI, o.pow_tries_per_loop, 0, 1000000000),
		.arg = "N",
		.bad = "--pow-tries-per-loop: 0..1000000000",
		.help = "sale: challenge nonces tried per loop iteration, so\n"
			"solving never stalls the other clients (default 256);\n"
			"0: each challenge solved whole by pow_solve() at once"},
	{.name = "pow-max-tries",
		OPT_TABLE_UINT_OF(CLI, o.pow_max_tries, 1, UINT64_MAX / 2),
		.arg = "N",
		.bad = "--pow-max-tries: a positive number",
		.help = "sale: a challenge not solved in N tries makes its user\n"
			"give up (default 4294967296)"},
	{.name = "sale-key-hex",
		OPT_TABLE_HEX_OF(OPT_TABLE_HEX, CLI, sale_key, sale_len, TOK_SECRET_MIN),
		.arg = "HEX",
		.bad = "--sale-key-hex: 32 to 128 hex digits (16 to 64 bytes)",
		.help = "reserve, result: the data plane's current sale key, to mint\n"
			"purchase tokens and receipts (one user per connection from\n"
			"--user-base)"},
	{.name = "sale-key-file",
		OPT_TABLE_HEX_OF(OPT_TABLE_SECRET_FILE, CLI, sale_key, sale_len, TOK_SECRET_MIN),
		.arg = "PATH",
		.help = "the same from a file of mode 0600, or - for standard input"},
	{.name = "sale-kid",
		OPT_TABLE_UINT_OF(CLI, sale_kid, 0, UINT32_MAX),
		.arg = "N",
		.bad = "--sale-kid: 0..4294967295",
		.help = "its key id (default 1)"},
	{.name = "pcap",
		OPT_TABLE_FIELD_OF(OPT_TABLE_STRING, CLI, o.pcap_path),
		.arg = "FILE",
		.help = "write every frame sent and received to FILE"},
	{.name = "pcap-max",
		OPT_TABLE_UINT_OF(CLI, o.pcap_max, 1, UINT64_MAX),
		.arg = "N",
		.bad = "--pcap-max: a positive number",
		.help = "at most N frames (default 100000)"},
	{.name = "report-json",
		OPT_TABLE_FIELD_OF(OPT_TABLE_STRING, CLI, o.report_json),
		.arg = "FILE",
		.help = "also write the report to FILE as JSON (docs/loadgen.md)"},
	{.name = "flood",
		.kind = OPT_TABLE_FN,
		.fn = set_flood,
		.arg = "KIND:RATE",
		.bad = "--flood: KIND:RATE, KIND syn, bad-ack, unsigned or one-ip, RATE per second "
		       "1..1e7",
		.help = "also a flood at RATE per second (1..1e7) beside the\n"
			"healthz or sale clients; repeatable, each KIND once:\n"
			"syn, bad-ack, unsigned, one-ip (needs --auth-key-hex)"},
	{.name = "flood-src-net",
		/* Two addresses at least: the one-ip flood's and one more. */
		LG_CLI_NET_OF(o.flood_base, o.n_flood, 2),
		.arg = "NET",
		.bad = "--flood-src-net: A.B.C.D/P with P 8..31 and no host bits set",
		.help = "flood addresses A.B.C.D/P, apart from --src-net; the\n"
			"first is one-ip's (default 198.19.0.0/16)"},
	{.name = "flood-concurrency",
		OPT_TABLE_UINT_OF(CLI, o.flood_concurrency, 1, LG_FLOOD_CONC_MAX),
		.arg = "C",
		.bad = "--flood-concurrency: 1..16384",
		.help = "unsigned and one-ip connections at once, 1..16384\n"
			"(default 64)"},
	{.name = "flood-max",
		OPT_TABLE_UINT_OF(CLI, o.flood_max, 1, UINT64_MAX / 2),
		.arg = "N",
		.bad = "--flood-max: 1 or more flood segments and connections",
		.help = "the floods stop after N segments and connections begun in all\n"
			"kinds (each SYN, bad ACK or connection one; default: no bound)"},
	{.name = "linger-s",
		OPT_TABLE_DOUBLE_OF(CLI, o.linger_s, 0, 86400),
		.arg = "S",
		.bad = "--linger-s: seconds, 0 to 86400",
		.help = "after the report, stop polling and keep the port open until\n"
			"the peer's link goes down, a signal, or S seconds (default 0);\n"
			"for memif: stop the data plane first (docs/loadgen.md)"},
	{.name = "help", .short_name = 'h', .kind = OPT_TABLE_HELP, .help = "this text"},
};

static const struct opt_table lg_cli_table = {
	.opts = lg_cli_opts,
	.n = RTE_DIM(lg_cli_opts),
	.help_col = 23,
	.bad_prefix = "bad value '%s' for ",
	.getopt_says = true,
	.stray_hint = "options go after --",
};

void
lg_cli_usage(FILE *f)
{
	fputs("usage: " LG_CLI_PROG " [EAL options] -- [options]\n"
	      "\n"
	      "Plays many clients of a flashgate data plane over the first DPDK port (e.g.\n"
	      "--vdev net_memif0,role=client,socket=/tmp/fg-memif.sock) and checks every answer.\n"
	      "\n",
		f);
	opt_table_usage(&lg_cli_table, f);
	fputs("\n"
	      "Exit status: 0 when every answer was well-formed and expected and every client "
	      "ended\n"
	      "within the duration; 1 otherwise; 2 on bad options or set-up failure.\n",
		f);
}

/* Whether the address ranges [a, a + na) and [b, b + nb) share an address. */
static bool
ranges_meet(uint32_t a, uint32_t na, uint32_t b, uint32_t nb)
{
	return a - b < nb || b - a < na;
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

/* The defaults, before the command line. */
static void
defaults(struct lg_cli *cli)
{
	struct lg_opts *o = &cli->o;

	memset(cli, 0, sizeof(*cli));
	cli->connections = 1000;
	cli->users = 100;
	cli->kid = 1;
	cli->sale_kid = 1;
	cli->poll_max = 5000;
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
	o->think_ms = -1; /* not given: 1000 with --bots, else 0 */
	o->bot_speed = 100;
	o->seed = 1;
	o->burst_pct = 50;
	o->pow_tries_per_loop = 256;
	o->pow_max_tries = 1ull << 32;
	tok_keyring_init(&o->auth);
	tok_keyring_init(&o->sale);
}

/* Sale: bots, think times, a pre-queue, polls. */
static int
check_sale(struct lg_cli *cli, char *err, size_t errlen)
{
	struct lg_opts *o = &cli->o;
	bool think_set = o->think_ms >= 0;

	if ((o->populations || o->arrive_before > 0 || think_set) && o->mode != LG_MODE_SALE)
		return opt_table_fail(
			err, errlen, "--bots, --think-ms and --arrive-before go with --mode sale");
	o->bots = cli->bots_pct ? (uint64_t)((unsigned __int128)cli->users * cli->bots / 100)
				: cli->bots;
	if (o->bots > cli->users)
		return opt_table_fail(err, errlen,
			"--bots %" PRIu64 " is more than the %" PRIu64 " --users", o->bots,
			cli->users);
	if (!think_set)
		o->think_ms = o->populations ? 1000 : 0;
	if (o->arrive_before > 0 && o->start_at <= 0)
		return opt_table_fail(err, errlen,
			"--arrive-before places the arrivals before the sale's start: give "
			"--start-at");
	o->poll_max_ms = cli->poll_max < o->poll_ms ? o->poll_ms : cli->poll_max;
	return 0;
}

/* The modes that mint purchase tokens or receipts: the sale key, the user ids, the path. */
static int
check_sale_key(struct lg_cli *cli, char *err, size_t errlen)
{
	struct lg_opts *o = &cli->o;
	uint64_t conns = cli->connections;

	if (cli->sale_len == 0)
		return opt_table_fail(err, errlen,
			"--mode %s needs --sale-key-hex (and --sale-kid), the sale key the data "
			"plane signs purchase tokens and receipts with",
			lg_cli_mode_name(o->mode));
	if (o->user_base > TOK_USER_MAX - (conns * (lg_mode_kept(o->mode) ? o->per_conn : 1) - 1))
		return opt_table_fail(
			err, errlen, "--user-base + --connections goes past the largest user id");
	/* A blast's answers are told apart by their acknowledgement numbers alone, so every
	 * request has the same length: user ids of as many digits. */
	if (o->mode == LG_MODE_RESERVE_BLAST &&
		parse_dec_digits(o->user_base) != parse_dec_digits(o->user_base + conns - 1))
		return opt_table_fail(err, errlen,
			"--mode reserve-blast needs user ids of one length: --user-base %" PRIu64
			" to %" PRIu64 " changes digits (try --user-base %" PRIu64 ")",
			o->user_base, o->user_base + conns - 1, blast_user_base(conns));
	tok_keyring_set(&o->sale, (uint32_t)cli->sale_kid, cli->sale_key, cli->sale_len, true);
	int n = snprintf(o->reserve_path, sizeof(o->reserve_path),
		"/api/v1/events/%" PRIu32 "/reserve/", o->event);

	if (tok_path_mint(&o->sale, o->event, o->reserve_path + n,
		    sizeof(o->reserve_path) - (size_t)n) < 0)
		return opt_table_fail(
			err, errlen, "cannot make the reserve path of event %" PRIu32, o->event);
	return 0;
}

/* The floods beside the clients. */
static int
check_floods(struct lg_cli *cli, char *err, size_t errlen)
{
	struct lg_opts *o = &cli->o;
	bool any_flood = false;

	for (unsigned k = 0; k < LG_FLOOD_N; k++)
		any_flood |= lg_opts_flood(o, (enum lg_flood_kind)k);
	if (any_flood && (o->mode == LG_MODE_SYN_FLOOD || lg_mode_blast(o->mode)))
		return opt_table_fail(err, errlen,
			"--flood goes with --mode healthz or sale; for SYNs alone use --mode "
			"syn-flood, or --flood syn beside healthz clients");
	if (!any_flood && o->flood_max > 0)
		return opt_table_fail(err, errlen, "--flood-max goes with --flood");
	if (any_flood && (ranges_meet(o->flood_base, o->n_flood, o->src_base, o->n_src) ||
				 o->dst_ip - o->flood_base < o->n_flood))
		return opt_table_fail(
			err, errlen, "--flood-src-net must not overlap --src-net nor hold --dst");
	if (lg_opts_flood(o, LG_FLOOD_ONE_IP) && cli->key_len == 0)
		return opt_table_fail(err, errlen,
			"--flood one-ip sends token requests with valid sessions; give "
			"--auth-key-hex (and --kid)");
	return 0;
}

/* What is checked once the command line is read, in the order it always was. */
static int
check(struct lg_cli *cli, char *err, size_t errlen)
{
	struct lg_opts *o = &cli->o;

	if (o->dst_ip - o->src_base < o->n_src)
		return opt_table_fail(err, errlen, "--dst must not be inside --src-net");
	o->count = o->mode == LG_MODE_SALE ? cli->users : cli->connections;
	if (check_sale(cli, err, errlen) != 0)
		return -EINVAL;
	if (lg_mode_blast(o->mode) && cli->cookie_len == 0)
		return opt_table_fail(err, errlen,
			"--mode %s computes the data plane's SYN cookies: give --cookie-secret-hex "
			"with its syncookie_secret",
			lg_cli_mode_name(o->mode));
	if ((lg_mode_reserve(o->mode) || o->mode == LG_MODE_RESULT ||
		    o->mode == LG_MODE_RESERVE_BLAST) &&
		check_sale_key(cli, err, errlen) != 0)
		return -EINVAL;
	if (check_floods(cli, err, errlen) != 0)
		return -EINVAL;
	o->kid = (uint32_t)cli->kid;
	if (cli->key_len != 0)
		tok_keyring_set(&o->auth, (uint32_t)cli->kid, cli->key, cli->key_len, true);
	if (o->mode == LG_MODE_SALE && cli->key_len == 0)
		return opt_table_fail(err, errlen,
			"--mode sale needs --auth-key-hex (and --kid), the auth key the data plane "
			"verifies session tokens with");
	if (o->mode == LG_MODE_SALE && o->user_base > TOK_USER_MAX - (cli->users - 1))
		return opt_table_fail(
			err, errlen, "--user-base + --users goes past the largest user id");
	if (cli->host != NULL) {
		snprintf(o->host, sizeof(o->host), "%s", cli->host);
	} else {
		struct in_addr a = {.s_addr = htonl(o->dst_ip)};

		inet_ntop(AF_INET, &a, o->host, sizeof(o->host));
	}
	return 0;
}

int
lg_cli_parse(int argc, char **argv, struct lg_opts *o, char *err, size_t errlen)
{
	static struct lg_cli cli; /* two keyrings: not on the stack */
	int rc;

	defaults(&cli);
	rc = opt_table_parse(&lg_cli_table, argc, argv, &cli, err, errlen);
	if (rc == 0)
		rc = check(&cli, err, errlen) == 0 ? 0 : -1;
	memset(cli.key, 0, sizeof(cli.key));
	memset(cli.sale_key, 0, sizeof(cli.sale_key));
	*o = cli.o;
	tok_keyring_wipe(&cli.o.auth);
	tok_keyring_wipe(&cli.o.sale);
	return rc;
}
