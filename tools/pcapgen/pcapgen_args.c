/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/pcapgen/pcapgen_args.h"

#include "common/parse.h"
#include "tools/common/opt_table.h"
#include "tools/loadgen/lg_args.h"

#define PROG "flashgate-pcapgen"

/* An address the data plane drops as a source (dataplane/pipeline.c ipv4_bad_source()). */
static int
bad_source(uint32_t a)
{
	return a >= 0xe0000000u || (a >> 24) == 0 || (a >> 24) == 127;
}

/* The command line being read: the settings and what is checked once it is all read. */
struct pcapgen_cli {
	struct pcapgen_args a;
	uint8_t sale_key[TOK_SECRET_MAX];
	size_t sale_len, cookie_len;
	uint64_t sale_kid;
	bool have_stream, have_dst_mac;
};

/* --src-net A.B.C.D/P with P in 8..32 and no host bits: its hosts (all but network and
 * broadcast below /31). */
static int
set_src_net(const struct opt_table_entry *e __rte_unused, const char *s, void *dst, char *err,
	size_t errlen)
{
	struct pcapgen_stream_cfg *c = &((struct pcapgen_cli *)dst)->a.cfg;
	uint32_t net, base, n;
	unsigned plen;
	int rc = lg_parse_net(s, &base, &n, &net, &plen);

	if (rc == -EDOM)
		return opt_table_fail(err, errlen,
			"--src-net '%s' has host bits set; give the network, e.g. "
			"%u.%u.%u.%u/%u",
			s, net >> 24, net >> 16 & 255, net >> 8 & 255, net & 255, plen);
	if (rc != 0)
		return opt_table_fail(
			err, errlen, "--src-net '%s' is not A.B.C.D/P with P in 8..32", s);
	uint32_t size = plen == 32 ? 1 : 1u << (32 - plen);

	if (bad_source(net) || bad_source(net + (size - 1)))
		return opt_table_fail(err, errlen,
			"--src-net '%s' reaches into 0/8, 127/8 or 224/3, which the "
			"data plane drops as sources",
			s);
	c->src_base = base;
	c->n_src = n;
	return 0;
}

static int
parse_mac(const char *s, struct rte_ether_addr *mac)
{
	/* Only the colon form, as the data plane prints it. */
	if (strlen(s) != 17)
		return -EINVAL;
	return rte_ether_unformat_addr(s, mac) == 0 ? 0 : -EINVAL;
}

/* A Host header value the data plane takes: a DNS name or an address, with a port. */
static bool
host_ok(const char *h)
{
	size_t n = strlen(h);

	if (n == 0 || n >= PCAPGEN_HOST_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)h[i]) && !strchr(".-:", h[i]))
			return false;
	return true;
}

static int
set_stream(const struct opt_table_entry *e __rte_unused, const char *v, void *dst,
	char *err __rte_unused, size_t errlen __rte_unused)
{
	struct pcapgen_cli *cli = dst;

	cli->have_stream = true;
	return pcapgen_stream_kind_parse(v, &cli->a.cfg.kind);
}

static int
set_out(const struct opt_table_entry *e __rte_unused, const char *v, void *dst,
	char *err __rte_unused, size_t errlen __rte_unused)
{
	((struct pcapgen_cli *)dst)->a.out = v;
	return *v == '\0' ? -EINVAL : 0;
}

static int
set_dst(const struct opt_table_entry *e __rte_unused, const char *v, void *dst,
	char *err __rte_unused, size_t errlen __rte_unused)
{
	uint32_t *ip = &((struct pcapgen_cli *)dst)->a.cfg.dst_ip;

	return parse_ipv4(v, ip) || bad_source(*ip) ? -EINVAL : 0;
}

static int
set_dst_mac(const struct opt_table_entry *e __rte_unused, const char *v, void *dst,
	char *err __rte_unused, size_t errlen __rte_unused)
{
	struct pcapgen_cli *cli = dst;

	cli->have_dst_mac = true;
	return parse_mac(v, &cli->a.cfg.dst_mac);
}

static int
set_src_mac(const struct opt_table_entry *e __rte_unused, const char *v, void *dst,
	char *err __rte_unused, size_t errlen __rte_unused)
{
	struct rte_ether_addr *mac = &((struct pcapgen_cli *)dst)->a.cfg.src_mac;

	if (parse_mac(v, mac) || !rte_is_unicast_ether_addr(mac) || rte_is_zero_ether_addr(mac))
		return -EINVAL;
	return 0;
}

static int
set_host(const struct opt_table_entry *e __rte_unused, const char *v, void *dst, char *err,
	size_t errlen)
{
	if (!host_ok(v))
		return opt_table_fail(err, errlen,
			"--host '%s' is not a host name (letters, digits, '.', '-', ':'; under %u "
			"characters)",
			v, PCAPGEN_HOST_MAX);
	strcpy(((struct pcapgen_cli *)dst)->a.cfg.reserve.host, v);
	return 0;
}

/* The messages below give the key sizes as numbers. */
_Static_assert(TOK_SECRET_MIN == 16 && TOK_SECRET_MAX == 64, "the key sizes of --sale-key-hex");

#define CLI	   struct pcapgen_cli
#define RESERVE(F) a.cfg.reserve.F

static const struct opt_table_entry pcapgen_opts[] = {
	{.name = "stream",
		.kind = OPT_TABLE_FN,
		.fn = set_stream,
		.arg = "S",
		.bad = "unknown --stream '%s'; give syn, bad-ack, arp or reserve",
		.help = "syn: SYNs (answered SYN-ACK); bad-ack: ACK + GET /healthz with\n"
			"an ACK no cookie made (answered RST); arp: ARP requests for --dst\n"
			"reserve: whole connections (SYN, a reserve with a purchase\n"
			"token, FIN) answered 202; needs the keys below"},
	{.name = "out",
		.kind = OPT_TABLE_FN,
		.fn = set_out,
		.arg = "FILE",
		.bad = "--out needs a file name",
		.help = "the pcap file to write (replaced)"},
	{.name = "count",
		OPT_TABLE_UINT_OF(CLI, a.cfg.count, 1, PCAPGEN_COUNT_MAX),
		.arg = "N",
		.bad = "--count '%s' is not a number in 1..100000000",
		.help = "frames, 1..100000000 (default 1000); reserve: connections, 3\n"
			"frames each, 1..33333333"},
	{.name = "src-net",
		.kind = OPT_TABLE_FN,
		.fn = set_src_net,
		.arg = "A.B.C.D/P",
		.help = "client addresses, P 8..32 (default 198.18.2.0/24); frame i comes\n"
			"from host i of it and a port from 1024 up, no pair twice"},
	{.name = "dst",
		.kind = OPT_TABLE_FN,
		.fn = set_dst,
		.arg = "A.B.C.D",
		.bad = "--dst '%s' is not a unicast IPv4 address (A.B.C.D)",
		.help = "the data plane's address (default 198.18.0.2)"},
	{.name = "port",
		OPT_TABLE_UINT_OF(CLI, a.cfg.dport, 1, 65535),
		.arg = "N",
		.bad = "--port '%s' is not a port in 1..65535",
		.help = "its TCP port (default 80)"},
	{.name = "dst-mac",
		.kind = OPT_TABLE_FN,
		.fn = set_dst_mac,
		.arg = "MAC",
		.bad = "--dst-mac '%s' is not a MAC address like 02:00:00:00:00:02",
		.help = "the data plane port's MAC (its log line 'port N (...): mac MAC');\n"
			"needed by syn and bad-ack; arp: default broadcast"},
	{.name = "src-mac",
		.kind = OPT_TABLE_FN,
		.fn = set_src_mac,
		.arg = "MAC",
		.bad = "--src-mac '%s' is not a unicast MAC address like 02:00:00:00:00:01",
		.help = "the sender's MAC (default 02:00:00:00:00:01)"},
	{.name = "seed",
		OPT_TABLE_UINT_OF(CLI, a.cfg.seed, 0, UINT64_MAX),
		.arg = "N",
		.bad = "--seed '%s' is not a number",
		.help = "seed of the address order, ISNs and ACKs (default 1)"},
	{.kind = OPT_TABLE_TEXT, .help = "reserve:"},
	{.name = "cookie-secret-hex",
		OPT_TABLE_HEX_OF(OPT_TABLE_HEX, CLI, RESERVE(cookie_secret), cookie_len, 16),
		.arg = "HEX",
		.bad = "--cookie-secret-hex needs 32 hex digits (the data plane's "
		       "syncookie_secret)",
		.help = "the data plane's syncookie_secret (32 hex digits); its\n"
			"cookies hold for two syncookie_slot periods: replay soon"},
	{.name = "cookie-secret-file",
		OPT_TABLE_HEX_OF(
			OPT_TABLE_SECRET_FILE, CLI, RESERVE(cookie_secret), cookie_len, 16),
		.arg = "PATH",
		.help = "the same from a file of mode 0600 (- for standard input)"},
	{.name = "cookie-slot-s",
		OPT_TABLE_UINT_OF(CLI, RESERVE(cookie_slot_s), 1, 600),
		.arg = "S",
		.bad = "--cookie-slot-s '%s' is not 1..600 (the data plane's syncookie_slot)",
		.help = "the data plane's syncookie_slot, 1..600 (default 64)"},
	{.name = "sale-key-hex",
		OPT_TABLE_HEX_OF(OPT_TABLE_HEX, CLI, sale_key, sale_len, TOK_SECRET_MIN),
		.arg = "HEX",
		.bad = "--sale-key-hex needs 32 to 128 hex digits (16 to 64 bytes)",
		.help = "the current sale key (32 to 128 hex digits) and"},
	{.name = "sale-key-file",
		OPT_TABLE_HEX_OF(OPT_TABLE_SECRET_FILE, CLI, sale_key, sale_len, TOK_SECRET_MIN),
		.arg = "PATH",
		.help = "the same from a file of mode 0600 (- for standard input)"},
	{.name = "sale-kid",
		OPT_TABLE_UINT_OF(CLI, sale_kid, 0, UINT32_MAX),
		.arg = "N",
		.bad = "--sale-kid '%s' is not 0..4294967295",
		.help = "its key id (default 1): tokens and the reserve path"},
	{.name = "event",
		OPT_TABLE_UINT_OF(CLI, RESERVE(event), 1, UINT32_MAX),
		.arg = "N",
		.bad = "--event '%s' is not 1..4294967295",
		.help = "the sale, 1..4294967295 (default 1)"},
	{.name = "user-base",
		OPT_TABLE_UINT_OF(CLI, RESERVE(user_base), 1, UINT64_MAX / 2),
		.arg = "N",
		.bad = "--user-base '%s' is not a user id from 1",
		.help = "connection i is user N + i (default 1)"},
	{.name = "host",
		.kind = OPT_TABLE_FN,
		.fn = set_host,
		.arg = "NAME",
		.help = "the Host header (default flashgate)"},
	{.name = "help", .short_name = 'h', .kind = OPT_TABLE_HELP, .help = "this text"},
};

static const struct opt_table pcapgen_table = {
	.opts = pcapgen_opts,
	.n = RTE_DIM(pcapgen_opts),
	.help_col = 22,
};

void
pcapgen_args_usage(FILE *f)
{
	fputs("usage: " PROG " --stream syn|bad-ack|arp|reserve --out FILE [options]\n"
	      "\n"
	      "Writes a stateless request stream for a flashgate data plane as a classic pcap "
	      "file\n"
	      "(Ethernet) for pktgen-dpdk -s P:FILE, DPDK's net_pcap rx_pcap= or tcpreplay. Every\n"
	      "frame can be sent as it is; checksums are filled in.\n"
	      "\n",
		f);
	opt_table_usage(&pcapgen_table, f);
	fputs("\n"
	      "Exit status: 0 when the file was written; 1 when it could not be written; 2 on bad\n"
	      "options.\n",
		f);
}

/* The reserve stream's checks and keys, once the command line is read. */
static int
check_reserve(struct pcapgen_cli *cli, char *err, size_t errlen)
{
	struct pcapgen_stream_cfg *c = &cli->a.cfg;
	struct pcapgen_reserve_cfg *rc = &c->reserve;

	if (cli->cookie_len == 0)
		return opt_table_fail(err, errlen,
			"--stream reserve needs --cookie-secret-hex, the data plane's "
			"syncookie_secret: its ACKs carry the cookies it will answer with");
	if (cli->sale_len == 0)
		return opt_table_fail(err, errlen,
			"--stream reserve needs --sale-key-hex (and --sale-kid), the data "
			"plane's current sale key, for the purchase tokens and the path");
	if (c->count > PCAPGEN_COUNT_MAX / 3)
		return opt_table_fail(err, errlen,
			"--count %" PRIu64 " connections is more than %llu (3 frames each)",
			c->count, PCAPGEN_COUNT_MAX / 3);
	tok_keyring_set(&rc->sale, (uint32_t)cli->sale_kid, cli->sale_key, cli->sale_len, true);
	rc->now_s = (uint64_t)time(NULL);
	rc->expires_s = rc->now_s + 3600;
	return 0;
}

/* What is checked once the command line is read: what is missing, what does not fit. */
static int
check(struct pcapgen_cli *cli, char *err, size_t errlen)
{
	struct pcapgen_stream_cfg *c = &cli->a.cfg;

	if (!cli->have_stream)
		return opt_table_fail(
			err, errlen, "--stream is missing; give syn, bad-ack, arp or reserve");
	if (c->kind == PCAPGEN_STREAM_RESERVE && check_reserve(cli, err, errlen) != 0)
		return -EINVAL;
	if (cli->a.out == NULL)
		return opt_table_fail(err, errlen, "--out FILE is missing");
	if (c->kind != PCAPGEN_STREAM_ARP) {
		if (!cli->have_dst_mac)
			return opt_table_fail(err, errlen,
				"--stream %s needs --dst-mac: the data plane answers only frames "
				"to "
				"its port's MAC, which it logs as 'port N (...): mac MAC' at start",
				pcapgen_stream_kind_name(c->kind));
		if (!rte_is_unicast_ether_addr(&c->dst_mac))
			return opt_table_fail(err, errlen,
				"--dst-mac must be the data plane's unicast MAC for --stream %s",
				pcapgen_stream_kind_name(c->kind));
	}
	if (c->dst_ip - c->src_base < c->n_src)
		return opt_table_fail(err, errlen, "--dst must not be inside --src-net");
	if (c->count > (uint64_t)c->n_src * PCAPGEN_SPORT_COUNT)
		return opt_table_fail(err, errlen,
			"--count %" PRIu64 " is more than the %" PRIu64
			" distinct address/port pairs of --src-net; give a larger network",
			c->count, (uint64_t)c->n_src * PCAPGEN_SPORT_COUNT);
	return 0;
}

int
pcapgen_args_parse(int argc, char **argv, struct pcapgen_args *a, char *err, size_t errlen)
{
	struct pcapgen_cli cli = {.sale_kid = 1};
	struct pcapgen_stream_cfg *c = &cli.a.cfg;
	int rc;

	c->count = 1000;
	c->src_base = RTE_IPV4(198, 18, 2, 1);
	c->n_src = 254;
	c->dst_ip = RTE_IPV4(198, 18, 0, 2);
	c->dport = 80;
	c->seed = 1;
	c->src_mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0x01}};
	memset(&c->dst_mac, 0xff, sizeof(c->dst_mac));
	c->reserve.cookie_slot_s = 64;
	c->reserve.event = 1;
	c->reserve.user_base = 1;
	strcpy(c->reserve.host, "flashgate");
	tok_keyring_init(&c->reserve.sale);
	rc = opt_table_parse(&pcapgen_table, argc, argv, &cli, err, errlen);
	if (rc == 0)
		rc = check(&cli, err, errlen) == 0 ? 0 : -1;
	memset(cli.sale_key, 0, sizeof(cli.sale_key));
	*a = cli.a;
	tok_keyring_wipe(&cli.a.cfg.reserve.sale);
	return rc;
}
