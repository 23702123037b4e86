/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_PG_STREAM_H
#define FG_PG_STREAM_H
/*
 * Stateless request streams for a packet replayer (pktgen-dpdk -s, tcpreplay, DPDK's net_pcap
 * vdev): every frame is complete and can be sent as it is, in any order, with no answer read.
 * Frame i of a stream depends only on the stream's settings, its seed and i, so a stream can be
 * rebuilt and any one frame checked on its own. The frames are built by the load generator's own
 * builders (tools/loadgen/lg_pkt.h), checksums in software.
 *
 *   syn      SYN with the MSS option; the data plane answers SYN-ACK <ACK=ISN+1>
 *   bad-ack  ACK+PSH with "GET /healthz" and an ACK no SYN cookie of the data plane made; the
 *            data plane answers RST <SEQ=SEG.ACK> and counts rst_bad_cookie
 *   arp      broadcast ARP request "who has --dst"; the data plane answers with its MAC
 *
 * Source address of frame i: host (h0 + i) mod n of --src-net; source port 1024 +
 * (p0 + i div n) mod 64512, where h0 and p0 come from the seed. So no two frames of a stream
 * share an address and port while count <= n * 64512 (pg_stream_init() refuses more).
 */
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "tools/loadgen/lg_pkt.h"

#define PG_SPORT_MIN   1024u
#define PG_SPORT_COUNT (65536u - PG_SPORT_MIN)
#define PG_FRAME_ROOM  2048u

enum pg_stream_kind {
	PG_STREAM_SYN,
	PG_STREAM_BAD_ACK,
	PG_STREAM_ARP,
};

/* What to write; addresses and ports in host order. */
struct pg_stream_cfg {
	enum pg_stream_kind kind;
	uint64_t count;	   /* frames */
	uint32_t src_base; /* first client address of --src-net */
	uint32_t n_src;	   /* client addresses from src_base on */
	uint32_t dst_ip;   /* the data plane */
	uint16_t dport;
	struct rte_ether_addr src_mac, dst_mac;
	uint64_t seed;
};

/* The flow of one frame, for checks and reports. */
struct pg_flow {
	uint32_t src_ip;
	uint16_t sport;
	uint32_t seq, ack; /* TCP only */
};

/* A stream being written: its settings and one frame buffer (an mbuf laid over plain memory,
 * never from a pool: the builders only need its data room, so no EAL is involved). */
struct pg_stream {
	struct pg_stream_cfg cfg;
	struct lg_link link;
	uint32_t h0, p0;
	struct rte_mbuf m;
	uint8_t room[PG_FRAME_ROOM];
};

/* The request of a bad-ack frame. */
#define PG_BAD_ACK_REQUEST \
	"GET /healthz HTTP/1.1\r\nHost: flashgate\r\nUser-Agent: flashgate-pcapgen\r\n\r\n"

/*
 * Parses a stream name ("syn", "bad-ack", "arp") into *kind. Returns 0, or -EINVAL for any other
 * name.
 */
int pg_stream_kind_parse(const char *name, enum pg_stream_kind *kind);

/* The name of a stream kind, as pg_stream_kind_parse() takes it. */
const char *pg_stream_kind_name(enum pg_stream_kind kind);

/*
 * Sets s up for cfg. Returns 0; -EINVAL when count is 0, n_src is 0, or count exceeds the
 * n_src * 64512 distinct address/port pairs; -EDOM when the port is 0 for a TCP stream.
 */
int pg_stream_init(struct pg_stream *s, const struct pg_stream_cfg *cfg);

/*
 * Builds frame i (i < cfg.count) into s's buffer and returns it, its length in *len and, when
 * flow is not NULL, its flow. The frame stays valid until the next call on s. Never fails for
 * an i below count; returns NULL for any other i.
 */
const uint8_t *pg_stream_frame(
	struct pg_stream *s, uint64_t i, uint16_t *len, struct pg_flow *flow);

/*
 * Writes the whole stream to path as a classic pcap file (Ethernet, microsecond timestamps
 * 1 us apart from the time of writing). Returns 0, or a negative errno of the failed open or
 * write (the file may then be incomplete).
 */
int pg_stream_write_pcap(struct pg_stream *s, const char *path);

#endif
