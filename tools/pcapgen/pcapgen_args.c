/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/pcapgen/pcapgen_args.h"

#include "common/parse.h"
#include "common/secret_input.h"
#include "tools/loadgen/lg_args.h"

#define PROG "flashgate-pcapgen"

void
pcapgen_args_usage(FILE *f)
{
	static const char *const lines[] = {
		"usage: " PROG " --stream syn|bad-ack|arp|reserve --out FILE [options]",
		"",
		"Writes a stateless request stream for a flashgate data plane as a classic pcap "
		"file",
		"(Ethernet) for pktgen-dpdk -s P:FILE, DPDK's net_pcap rx_pcap= or tcpreplay. "
		"Every",
		"frame can be sent as it is; checksums are filled in.",
		"",
		"  --stream S          syn: SYNs (answered SYN-ACK); bad-ack: ACK + GET /healthz "
		"with",
		"                      an ACK no cookie made (answered RST); arp: ARP requests for "
		"--dst",
		"                      reserve: whole connections (SYN, a reserve with a "
		"purchase",
		"                      token, FIN) answered 202; needs the keys below",
		"  --out FILE          the pcap file to write (replaced)",
		"  --count N           frames, 1..100000000 (default 1000); reserve: connections, "
		"3",
		"                      frames each, 1..33333333",
		"  --src-net A.B.C.D/P client addresses, P 8..32 (default 198.18.2.0/24); frame i "
		"comes",
		"                      from host i of it and a port from 1024 up, no pair twice",
		"  --dst A.B.C.D       the data plane's address (default 198.18.0.2)",
		"  --port N            its TCP port (default 80)",
		"  --dst-mac MAC       the data plane port's MAC (its log line 'port N (...): mac "
		"MAC');",
		"                      needed by syn and bad-ack; arp: default broadcast",
		"  --src-mac MAC       the sender's MAC (default 02:00:00:00:00:01)",
		"  --seed N            seed of the address order, ISNs and ACKs (default 1)",
		"reserve:",
		"  --cookie-secret-hex HEX  the data plane's syncookie_secret (32 hex digits); its",
		"                      cookies hold for two syncookie_slot periods: replay soon",
		"  --cookie-secret-file PATH  the same from a file of mode 0600 (- for standard "
		"input)",
		"  --cookie-slot-s S   the data plane's syncookie_slot, 1..600 (default 64)",
		"  --sale-key-hex HEX  the current sale key (32 to 128 hex digits) and",
		"  --sale-key-file PATH  the same from a file of mode 0600 (- for standard input)",
		"  --sale-kid N        its key id (default 1): tokens and the reserve path",
		"  --event N           the sale, 1..4294967295 (default 1)",
		"  --user-base N       connection i is user N + i (default 1)",
		"  --host NAME         the Host header (default flashgate)",
		"  -h, --help          this text",
		"",
		"Exit status: 0 when the file was written; 1 when it could not be written; 2 on "
		"bad",
		"options.",
	};

	for (unsigned i = 0; i < RTE_DIM(lines); i++)
		fprintf(f, "%s\n", lines[i]);
}

static int __attribute__((format(printf, 3, 4)))
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* An address the data plane drops as a source (dataplane/pipeline.c ipv4_bad_source()). */
static int
bad_source(uint32_t a)
{
	return a >= 0xe0000000u || (a >> 24) == 0 || (a >> 24) == 127;
}

/* A.B.C.D/P with P in 8..32 and no host bits: its hosts (all but network and broadcast
 * below /31). */
static int
parse_src_net(const char *s, struct pcapgen_stream_cfg *c, char *err, size_t errlen)
{
	uint32_t net, base, n;
	unsigned plen;
	int rc = lg_parse_net(s, &base, &n, &net, &plen);

	if (rc == -EDOM)
		return fail(err, errlen,
			"--src-net '%s' has host bits set; give the network, e.g. "
			"%u.%u.%u.%u/%u",
			s, net >> 24, net >> 16 & 255, net >> 8 & 255, net & 255, plen);
	if (rc != 0)
		return fail(err, errlen, "--src-net '%s' is not A.B.C.D/P with P in 8..32", s);
	uint32_t size = plen == 32 ? 1 : 1u << (32 - plen);

	if (bad_source(net) || bad_source(net + (size - 1)))
		return fail(err, errlen,
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

enum {
	OPT_STREAM = 256,
	OPT_OUT,
	OPT_COUNT,
	OPT_SRC_NET,
	OPT_DST,
	OPT_PORT,
	OPT_DST_MAC,
	OPT_SRC_MAC,
	OPT_SEED,
	OPT_COOKIE_SECRET,
	OPT_COOKIE_SECRET_FILE,
	OPT_SALE_KEY_FILE,
	OPT_COOKIE_SLOT,
	OPT_SALE_KEY,
	OPT_SALE_KID,
	OPT_EVENT,
	OPT_USER_BASE,
	OPT_HOST,
};

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

int
pcapgen_args_parse(int argc, char **argv, struct pcapgen_args *a, char *err, size_t errlen)
{
	static const struct option longopts[] = {
		{"stream", required_argument, NULL, OPT_STREAM},
		{"out", required_argument, NULL, OPT_OUT},
		{"count", required_argument, NULL, OPT_COUNT},
		{"src-net", required_argument, NULL, OPT_SRC_NET},
		{"dst", required_argument, NULL, OPT_DST},
		{"port", required_argument, NULL, OPT_PORT},
		{"dst-mac", required_argument, NULL, OPT_DST_MAC},
		{"src-mac", required_argument, NULL, OPT_SRC_MAC},
		{"seed", required_argument, NULL, OPT_SEED},
		{"cookie-secret-hex", required_argument, NULL, OPT_COOKIE_SECRET},
		{"cookie-secret-file", required_argument, NULL, OPT_COOKIE_SECRET_FILE},
		{"sale-key-file", required_argument, NULL, OPT_SALE_KEY_FILE},
		{"cookie-slot-s", required_argument, NULL, OPT_COOKIE_SLOT},
		{"sale-key-hex", required_argument, NULL, OPT_SALE_KEY},
		{"sale-kid", required_argument, NULL, OPT_SALE_KID},
		{"event", required_argument, NULL, OPT_EVENT},
		{"user-base", required_argument, NULL, OPT_USER_BASE},
		{"host", required_argument, NULL, OPT_HOST},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct pcapgen_stream_cfg *c = &a->cfg;
	struct pcapgen_reserve_cfg *rc = &c->reserve;
	bool have_stream = false, have_dst_mac = false, have_cookie = false;
	uint8_t sale_key[TOK_SECRET_MAX];
	size_t sale_len = 0, n;
	uint64_t v, sale_kid = 1;
	int opt;

	memset(a, 0, sizeof(*a));
	c->count = 1000;
	c->src_base = RTE_IPV4(198, 18, 2, 1);
	c->n_src = 254;
	c->dst_ip = RTE_IPV4(198, 18, 0, 2);
	c->dport = 80;
	c->seed = 1;
	c->src_mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0x01}};
	memset(&c->dst_mac, 0xff, sizeof(c->dst_mac));
	rc->cookie_slot_s = 64;
	rc->event = 1;
	rc->user_base = 1;
	strcpy(rc->host, "flashgate");
	tok_keyring_init(&rc->sale);
	err[0] = '\0';
	optind = 0; /* glibc: start over, so that a caller may parse more than once */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			return 1;
		case OPT_STREAM:
			if (pcapgen_stream_kind_parse(optarg, &c->kind) != 0)
				return fail(err, errlen,
					"unknown --stream '%s'; give syn, bad-ack, arp or reserve",
					optarg);
			have_stream = true;
			break;
		case OPT_OUT:
			if (*optarg == '\0')
				return fail(err, errlen, "--out needs a file name");
			a->out = optarg;
			break;
		case OPT_COUNT:
			if (parse_u64(optarg, 1, PCAPGEN_COUNT_MAX, &c->count))
				return fail(err, errlen, "--count '%s' is not a number in 1..%llu",
					optarg, PCAPGEN_COUNT_MAX);
			break;
		case OPT_SRC_NET:
			if (parse_src_net(optarg, c, err, errlen))
				return -1;
			break;
		case OPT_DST:
			if (parse_ipv4(optarg, &c->dst_ip) || bad_source(c->dst_ip))
				return fail(err, errlen,
					"--dst '%s' is not a unicast IPv4 address (A.B.C.D)",
					optarg);
			break;
		case OPT_PORT:
			if (parse_u64(optarg, 1, 65535, &v))
				return fail(err, errlen, "--port '%s' is not a port in 1..65535",
					optarg);
			c->dport = (uint16_t)v;
			break;
		case OPT_DST_MAC:
			if (parse_mac(optarg, &c->dst_mac))
				return fail(err, errlen,
					"--dst-mac '%s' is not a MAC address like "
					"02:00:00:00:00:02",
					optarg);
			have_dst_mac = true;
			break;
		case OPT_SRC_MAC:
			if (parse_mac(optarg, &c->src_mac) ||
				!rte_is_unicast_ether_addr(&c->src_mac) ||
				rte_is_zero_ether_addr(&c->src_mac))
				return fail(err, errlen,
					"--src-mac '%s' is not a unicast MAC address like "
					"02:00:00:00:00:01",
					optarg);
			break;
		case OPT_SEED:
			if (parse_u64(optarg, 0, UINT64_MAX, &c->seed))
				return fail(err, errlen, "--seed '%s' is not a number", optarg);
			break;
		case OPT_COOKIE_SECRET:
			if (parse_hex(optarg, rc->cookie_secret, sizeof(rc->cookie_secret), &n) ||
				n != sizeof(rc->cookie_secret))
				return fail(err, errlen,
					"--cookie-secret-hex needs 32 hex digits (the data plane's "
					"syncookie_secret)");
			have_cookie = true;
			break;
		/* The same secrets from a file of mode 0600 or standard input (-): a key on the
		 * command line shows in ps and the shell history. */
		case OPT_COOKIE_SECRET_FILE:
			if (secret_read_hex(optarg, "--cookie-secret-file", rc->cookie_secret,
				    sizeof(rc->cookie_secret), sizeof(rc->cookie_secret), &n, err,
				    errlen) != 0)
				return -1;
			have_cookie = true;
			break;
		case OPT_SALE_KEY_FILE:
			if (secret_read_hex(optarg, "--sale-key-file", sale_key, TOK_SECRET_MIN,
				    sizeof(sale_key), &sale_len, err, errlen) != 0)
				return -1;
			break;
		case OPT_COOKIE_SLOT:
			if (parse_u64(optarg, 1, 600, &v))
				return fail(err, errlen,
					"--cookie-slot-s '%s' is not 1..600 (the data plane's "
					"syncookie_slot)",
					optarg);
			rc->cookie_slot_s = (uint32_t)v;
			break;
		case OPT_SALE_KEY:
			if (parse_hex(optarg, sale_key, sizeof(sale_key), &sale_len) ||
				sale_len < TOK_SECRET_MIN)
				return fail(err, errlen,
					"--sale-key-hex needs 32 to %u hex digits (16 to %u bytes)",
					2 * TOK_SECRET_MAX, TOK_SECRET_MAX);
			break;
		case OPT_SALE_KID:
			if (parse_u64(optarg, 0, UINT32_MAX, &sale_kid))
				return fail(err, errlen, "--sale-kid '%s' is not 0..4294967295",
					optarg);
			break;
		case OPT_EVENT:
			if (parse_u64(optarg, 1, UINT32_MAX, &v))
				return fail(
					err, errlen, "--event '%s' is not 1..4294967295", optarg);
			rc->event = (uint32_t)v;
			break;
		case OPT_USER_BASE:
			if (parse_u64(optarg, 1, UINT64_MAX / 2, &rc->user_base))
				return fail(err, errlen, "--user-base '%s' is not a user id from 1",
					optarg);
			break;
		case OPT_HOST:
			if (!host_ok(optarg))
				return fail(err, errlen,
					"--host '%s' is not a host name (letters, digits, "
					"'.', '-', ':'; under %u characters)",
					optarg, PCAPGEN_HOST_MAX);
			strcpy(rc->host, optarg);
			break;
		case ':':
			return fail(err, errlen, "%s needs a value", argv[optind - 1]);
		default:
			return fail(err, errlen, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fail(err, errlen, "unexpected argument '%s'", argv[optind]);
	if (!have_stream)
		return fail(err, errlen, "--stream is missing; give syn, bad-ack, arp or reserve");
	if (c->kind == PCAPGEN_STREAM_RESERVE) {
		if (!have_cookie)
			return fail(err, errlen,
				"--stream reserve needs --cookie-secret-hex, the data plane's "
				"syncookie_secret: its ACKs carry the cookies it will answer with");
		if (sale_len == 0)
			return fail(err, errlen,
				"--stream reserve needs --sale-key-hex (and --sale-kid), the data "
				"plane's current sale key, for the purchase tokens and the path");
		if (c->count > PCAPGEN_COUNT_MAX / 3)
			return fail(err, errlen,
				"--count %" PRIu64 " connections is more than %llu (3 frames each)",
				c->count, PCAPGEN_COUNT_MAX / 3);
		tok_keyring_set(&rc->sale, (uint32_t)sale_kid, sale_key, sale_len, true);
		memset(sale_key, 0, sizeof(sale_key));
		rc->now_s = (uint64_t)time(NULL);
		rc->expires_s = rc->now_s + 3600;
	}
	if (a->out == NULL)
		return fail(err, errlen, "--out FILE is missing");
	if (c->kind != PCAPGEN_STREAM_ARP) {
		if (!have_dst_mac)
			return fail(err, errlen,
				"--stream %s needs --dst-mac: the data plane answers only frames "
				"to "
				"its port's MAC, which it logs as 'port N (...): mac MAC' at start",
				pcapgen_stream_kind_name(c->kind));
		if (!rte_is_unicast_ether_addr(&c->dst_mac))
			return fail(err, errlen,
				"--dst-mac must be the data plane's unicast MAC for --stream %s",
				pcapgen_stream_kind_name(c->kind));
	}
	if (c->dst_ip - c->src_base < c->n_src)
		return fail(err, errlen, "--dst must not be inside --src-net");
	if (c->count > (uint64_t)c->n_src * PCAPGEN_SPORT_COUNT)
		return fail(err, errlen,
			"--count %" PRIu64 " is more than the %" PRIu64
			" distinct address/port pairs of --src-net; give a larger network",
			c->count, (uint64_t)c->n_src * PCAPGEN_SPORT_COUNT);
	return 0;
}
