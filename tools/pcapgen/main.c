/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flashgate-pcapgen: writes a stateless request stream (SYNs, bad-cookie ACKs, ARP requests,
 * whole reserve connections) for a flashgate data plane as a pcap file that a packet replayer
 * sends as it is (docs/pktgen.md). Usage:
 *   flashgate-pcapgen --stream syn|bad-ack|arp|reserve --out FILE [options]
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/pcapgen/pcapgen_args.h"
#include "tools/pcapgen/pcapgen_stream.h"

#define PROG "flashgate-pcapgen"

int
main(int argc, char **argv)
{
	static struct pcapgen_stream s; /* a frame buffer: not on the stack */
	struct pcapgen_args a;
	char err[256], mac[RTE_ETHER_ADDR_FMT_SIZE];
	int rc = pcapgen_args_parse(argc, argv, &a, err, sizeof(err));

	if (rc == 1) {
		pcapgen_args_usage(stdout);
		return 0;
	}
	if (rc != 0) {
		fprintf(stderr, PROG ": %s (see --help)\n", err);
		return 2;
	}
	rc = pcapgen_stream_init(&s, &a.cfg);
	if (rc != 0) {
		/* pcapgen_args_parse() checked everything pcapgen_stream_init() refuses. */
		fprintf(stderr, PROG ": bad stream settings: %s\n", strerror(-rc));
		return 2;
	}
	rc = pcapgen_stream_write_pcap(&s, a.out);
	if (rc != 0) {
		fprintf(stderr, PROG ": cannot write '%s': %s\n", a.out, strerror(-rc));
		return 1;
	}
	rte_ether_format_addr(mac, sizeof(mac), &a.cfg.dst_mac);
	printf("wrote %" PRIu64 " %s frames to %s (dst %u.%u.%u.%u port %u mac %s, %u source "
	       "addresses, seed %" PRIu64 ")\n",
		pcapgen_stream_frames(&s), pcapgen_stream_kind_name(a.cfg.kind), a.out,
		a.cfg.dst_ip >> 24, a.cfg.dst_ip >> 16 & 255, a.cfg.dst_ip >> 8 & 255,
		a.cfg.dst_ip & 255, a.cfg.dport, mac, a.cfg.n_src, a.cfg.seed);
	if (a.cfg.kind == PCAPGEN_STREAM_RESERVE)
		printf("%" PRIu64 " connections of users %" PRIu64 "..%" PRIu64
		       " for event %" PRIu32
		       "; their cookies hold for one to two syncookie_slot periods of %" PRIu32
		       " s from now: replay them soon\n",
			a.cfg.count, a.cfg.reserve.user_base,
			a.cfg.reserve.user_base + a.cfg.count - 1, a.cfg.reserve.event,
			a.cfg.reserve.cookie_slot_s);
	tok_keyring_wipe(&a.cfg.reserve.sale);
	tok_keyring_wipe(&s.cfg.reserve.sale);
	return 0;
}
